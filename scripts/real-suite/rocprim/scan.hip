// rocPRIM device inclusive/exclusive scan and scan_by_key,
// instantiated as its test/benchmark of the same name does; device-only compiles keep the kernels
// these host calls launch (scripts/real-suite.sh).
#include <rocprim/rocprim.hpp>
#define S hipStream_t(0)

template <class T, class Op> hipError_t run(void *tmp, size_t &bytes, const T *in, T *out, size_t n, Op op) {
  hipError_t e = rocprim::inclusive_scan(tmp, bytes, in, out, n, op, S);
  return e ? e : rocprim::exclusive_scan(tmp, bytes, in, out, T(0), n, op, S);
}
template <class K, class T> hipError_t by_key(void *tmp, size_t &bytes, const K *k, const T *in, T *out, size_t n) {
  hipError_t e = rocprim::inclusive_scan_by_key(tmp, bytes, k, in, out, n, rocprim::plus<T>(), rocprim::equal_to<K>(), S);
  return e ? e : rocprim::exclusive_scan_by_key(tmp, bytes, k, in, out, T(0), n, rocprim::plus<T>(), rocprim::equal_to<K>(), S);
}
template hipError_t run(void *, size_t &, const int *, int *, size_t, rocprim::plus<int>);
template hipError_t run(void *, size_t &, const float *, float *, size_t, rocprim::plus<float>);
template hipError_t run(void *, size_t &, const double *, double *, size_t, rocprim::plus<double>);
template hipError_t run(void *, size_t &, const unsigned long long *, unsigned long long *, size_t, rocprim::maximum<unsigned long long>);
template hipError_t by_key(void *, size_t &, const int *, const float *, float *, size_t);
template hipError_t by_key(void *, size_t &, const int *, const double *, double *, size_t);
