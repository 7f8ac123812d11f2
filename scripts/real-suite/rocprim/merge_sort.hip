// rocPRIM device merge sort (keys, pairs) and merge,
// instantiated as its test/benchmark of the same name does; device-only compiles keep the kernels
// these host calls launch (scripts/real-suite.sh).
#include <rocprim/rocprim.hpp>
#define S hipStream_t(0)

template <class K, class V> hipError_t run(void *tmp, size_t &bytes, K *ki, K *ko, V *vi, V *vo, unsigned n) {
  hipError_t e = rocprim::merge_sort(tmp, bytes, ki, ko, n, rocprim::less<K>(), S);
  if (!e) e = rocprim::merge_sort(tmp, bytes, ki, ko, vi, vo, n, rocprim::less<K>(), S);
  return e ? e : rocprim::merge(tmp, bytes, ki, vi, ko, n, n, rocprim::less<K>(), S);
}
template hipError_t run(void *, size_t &, int *, int *, int *, int *, unsigned);
template hipError_t run(void *, size_t &, float *, float *, float *, float *, unsigned);
template hipError_t run(void *, size_t &, double *, double *, double *, double *, unsigned);
