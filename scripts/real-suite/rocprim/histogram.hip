// rocPRIM device histogram (even, range, multi even),
// instantiated as its test/benchmark of the same name does; device-only compiles keep the kernels
// these host calls launch (scripts/real-suite.sh).
#include <rocprim/rocprim.hpp>
#define S hipStream_t(0)

template <class T> hipError_t run(void *tmp, size_t &bytes, const T *in, unsigned n, unsigned *hist, const T *levels) {
  hipError_t e = rocprim::histogram_even(tmp, bytes, in, n, hist, 257u, T(0), T(256), S);
  return e ? e : rocprim::histogram_range(tmp, bytes, in, n, hist, 257u, levels, S);
}
template hipError_t run(void *, size_t &, const int *, unsigned, unsigned *, const int *);
template hipError_t run(void *, size_t &, const float *, unsigned, unsigned *, const float *);
template hipError_t run(void *, size_t &, const unsigned char *, unsigned, unsigned *, const unsigned char *);
hipError_t rgba(void *tmp, size_t &bytes, const unsigned char *in, unsigned n, unsigned *h[3]) {
  unsigned lv[3] = {257, 257, 257};
  unsigned lo[3] = {0, 0, 0}, hi[3] = {256, 256, 256};
  return rocprim::multi_histogram_even<4, 3>(tmp, bytes, in, n, h, lv, lo, hi, S);
}
