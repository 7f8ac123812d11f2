// rocPRIM device reduce, instantiated as its benchmark_device_reduce does (types x plus/maximum):
// device-only compiles keep the kernels these host calls launch (scripts/real-suite.sh).
#include <rocprim/rocprim.hpp>

template <class T, class Op> hipError_t run(void *tmp, size_t &bytes, const T *in, T *out, size_t n, Op op) {
  return rocprim::reduce(tmp, bytes, in, out, T(0), n, op, hipStream_t(0));
}
template hipError_t run(void *, size_t &, const int *, int *, size_t, rocprim::plus<int>);
template hipError_t run(void *, size_t &, const float *, float *, size_t, rocprim::plus<float>);
template hipError_t run(void *, size_t &, const double *, double *, size_t, rocprim::plus<double>);
template hipError_t run(void *, size_t &, const long long *, long long *, size_t, rocprim::maximum<long long>);
template hipError_t run(void *, size_t &, const rocprim::half *, rocprim::half *, size_t, rocprim::plus<rocprim::half>);
