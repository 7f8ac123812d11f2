// rocPRIM device transform, binary search, adjacent difference,
// instantiated as its test/benchmark of the same name does; device-only compiles keep the kernels
// these host calls launch (scripts/real-suite.sh).
#include <rocprim/rocprim.hpp>
#define S hipStream_t(0)

template <class T> struct sq { __device__ T operator()(const T &x) const { return x * x + T(1); } };
template <class T> hipError_t run(void *tmp, size_t &bytes, const T *in, T *out, const T *hay, unsigned *idx, unsigned n) {
  hipError_t e = rocprim::transform(in, out, n, sq<T>(), S);
  if (!e) e = rocprim::transform(in, hay, out, n, rocprim::plus<T>(), S);
  if (!e) e = rocprim::lower_bound(tmp, bytes, hay, in, idx, n, n, rocprim::less<T>(), S);
  if (!e) e = rocprim::upper_bound(tmp, bytes, hay, in, idx, n, n, rocprim::less<T>(), S);
  if (!e) e = rocprim::adjacent_difference(tmp, bytes, in, out, n, rocprim::minus<T>(), S);
  return e ? e : rocprim::adjacent_difference_right(tmp, bytes, in, out, n, rocprim::minus<T>(), S);
}
template hipError_t run(void *, size_t &, const int *, int *, const int *, unsigned *, unsigned);
template hipError_t run(void *, size_t &, const float *, float *, const float *, unsigned *, unsigned);
template hipError_t run(void *, size_t &, const double *, double *, const double *, unsigned *, unsigned);
