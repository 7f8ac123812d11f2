// rocPRIM device select (flagged, predicate, unique), partition, run-length encode,
// instantiated as its test/benchmark of the same name does; device-only compiles keep the kernels
// these host calls launch (scripts/real-suite.sh).
#include <rocprim/rocprim.hpp>
#define S hipStream_t(0)

template <class T> struct pos { __device__ bool operator()(const T &x) const { return x > T(0); } };
template <class T> hipError_t run(void *tmp, size_t &bytes, const T *in, const unsigned char *fl, T *out, unsigned *cnt, unsigned n) {
  hipError_t e = rocprim::select(tmp, bytes, in, fl, out, cnt, n, S);
  if (!e) e = rocprim::select(tmp, bytes, in, out, cnt, n, pos<T>(), S);
  if (!e) e = rocprim::unique(tmp, bytes, in, out, cnt, n, rocprim::equal_to<T>(), S);
  if (!e) e = rocprim::partition(tmp, bytes, in, out, cnt, n, pos<T>(), S);
  return e ? e : rocprim::run_length_encode(tmp, bytes, in, n, out, cnt, cnt + 1, S);
}
template hipError_t run(void *, size_t &, const int *, const unsigned char *, int *, unsigned *, unsigned);
template hipError_t run(void *, size_t &, const float *, const unsigned char *, float *, unsigned *, unsigned);
template hipError_t run(void *, size_t &, const double *, const unsigned char *, double *, unsigned *, unsigned);
