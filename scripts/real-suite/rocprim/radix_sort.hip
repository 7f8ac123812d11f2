// rocPRIM device radix sort (keys, pairs, descending),
// instantiated as its test/benchmark of the same name does; device-only compiles keep the kernels
// these host calls launch (scripts/real-suite.sh).
#include <rocprim/rocprim.hpp>
#define S hipStream_t(0)

template <class K, class V> hipError_t run(void *tmp, size_t &bytes, K *ki, K *ko, V *vi, V *vo, unsigned n) {
  hipError_t e = rocprim::radix_sort_keys(tmp, bytes, ki, ko, n, 0, 8 * sizeof(K), S);
  if (!e) e = rocprim::radix_sort_keys_desc(tmp, bytes, ki, ko, n, 0, 8 * sizeof(K), S);
  return e ? e : rocprim::radix_sort_pairs(tmp, bytes, ki, ko, vi, vo, n, 0, 8 * sizeof(K), S);
}
template hipError_t run(void *, size_t &, int *, int *, int *, int *, unsigned);
template hipError_t run(void *, size_t &, float *, float *, int *, int *, unsigned);
template hipError_t run(void *, size_t &, unsigned long long *, unsigned long long *, double *, double *, unsigned);
template hipError_t run(void *, size_t &, unsigned char *, unsigned char *, short *, short *, unsigned);
