// rocPRIM device segmented reduce and scan, reduce_by_key,
// instantiated as its test/benchmark of the same name does; device-only compiles keep the kernels
// these host calls launch (scripts/real-suite.sh).
#include <rocprim/rocprim.hpp>
#define S hipStream_t(0)

template <class T> hipError_t run(void *tmp, size_t &bytes, const T *in, T *out, const int *k, int *ko, unsigned *cnt, unsigned n, const int *off) {
  hipError_t e = rocprim::segmented_reduce(tmp, bytes, in, out, n, off, off + 1, rocprim::plus<T>(), T(0), S);
  if (!e) e = rocprim::segmented_inclusive_scan(tmp, bytes, in, out, n, off, off + 1, rocprim::plus<T>(), S);
  return e ? e : rocprim::reduce_by_key(tmp, bytes, k, in, n, ko, out, cnt, rocprim::plus<T>(), rocprim::equal_to<int>(), S);
}
template hipError_t run(void *, size_t &, const int *, int *, const int *, int *, unsigned *, unsigned, const int *);
template hipError_t run(void *, size_t &, const float *, float *, const int *, int *, unsigned *, unsigned, const int *);
template hipError_t run(void *, size_t &, const double *, double *, const int *, int *, unsigned *, unsigned, const int *);
