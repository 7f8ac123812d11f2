// rocPRIM block- and warp-level primitives in kernels shaped like its test_block_* and
// test_warp_* kernels (load a tile, run the primitive, store): scripts/real-suite.sh.
#include <rocprim/rocprim.hpp>

template <class T, unsigned B, unsigned I>
__global__ __launch_bounds__(B) void block_reduce_scan(const T *in, T *out, T *sums) {
  using load = rocprim::block_load<T, B, I, rocprim::block_load_method::block_load_transpose>;
  using store = rocprim::block_store<T, B, I, rocprim::block_store_method::block_store_transpose>;
  using reduce = rocprim::block_reduce<T, B>;
  using scan = rocprim::block_scan<T, B>;
  __shared__ union { typename load::storage_type l; typename store::storage_type s;
                     typename reduce::storage_type r; typename scan::storage_type c; } sh;
  const unsigned base = blockIdx.x * B * I;
  T v[I];
  load().load(in + base, v, sh.l);
  rocprim::syncthreads();
  T sum;
  reduce().reduce(v, sum, sh.r);
  if (threadIdx.x == 0) sums[blockIdx.x] = sum;
  rocprim::syncthreads();
  scan().inclusive_scan(v, v, sh.c);
  rocprim::syncthreads();
  store().store(out + base, v, sh.s);
}

template <class K, class V, unsigned B, unsigned I>
__global__ __launch_bounds__(B) void block_radix_sort(K *keys, V *vals) {
  using sort = rocprim::block_radix_sort<K, B, I, V>;
  __shared__ typename sort::storage_type sh;
  const unsigned base = blockIdx.x * B * I;
  K k[I];
  V v[I];
  rocprim::block_load_direct_blocked(threadIdx.x, keys + base, k);
  rocprim::block_load_direct_blocked(threadIdx.x, vals + base, v);
  sort().sort(k, v, sh);
  rocprim::block_store_direct_blocked(threadIdx.x, keys + base, k);
  rocprim::block_store_direct_blocked(threadIdx.x, vals + base, v);
}

template <class K, unsigned B>
__global__ __launch_bounds__(B) void block_sort(K *keys) {
  using sort = rocprim::block_sort<K, B>;
  __shared__ typename sort::storage_type sh;
  K k = keys[blockIdx.x * B + threadIdx.x];
  sort().sort(k, sh);
  keys[blockIdx.x * B + threadIdx.x] = k;
}

template <class T, unsigned B, unsigned Bins>
__global__ __launch_bounds__(B) void block_histogram(const T *in, unsigned *hist) {
  using histo = rocprim::block_histogram<T, B, 4, Bins>;
  __shared__ unsigned bins[Bins];
  __shared__ typename histo::storage_type sh;
  T v[4];
  rocprim::block_load_direct_striped<B>(threadIdx.x, in + blockIdx.x * B * 4, v);
  histo().histogram(v, bins, sh);
  rocprim::syncthreads();
  for (unsigned i = threadIdx.x; i < Bins; i += B) atomicAdd(hist + i, bins[i]);
}

template <class T, unsigned W, unsigned B>
__global__ __launch_bounds__(B) void warp_reduce_scan_sort(const T *in, T *out) {
  using wr = rocprim::warp_reduce<T, W>;
  using ws = rocprim::warp_scan<T, W>;
  using wt = rocprim::warp_sort<T, W>;
  __shared__ typename wr::storage_type r[B / W];
  __shared__ typename ws::storage_type s[B / W];
  const unsigned w = threadIdx.x / W, i = blockIdx.x * B + threadIdx.x;
  T v = in[i], sum, pre;
  wr().reduce(v, sum, r[w]);
  ws().exclusive_scan(v, pre, T(0), s[w]);
  wt().sort(pre);
  out[i] = pre + sum;
}

template <class T, unsigned B>
__global__ __launch_bounds__(B) void block_discontinuity_exchange(const T *in, int *flags, T *out) {
  using disc = rocprim::block_discontinuity<T, B>;
  using exch = rocprim::block_exchange<T, B, 4>;
  __shared__ union { typename disc::storage_type d; typename exch::storage_type e; } sh;
  T v[4];
  int f[4];
  rocprim::block_load_direct_blocked(threadIdx.x, in + blockIdx.x * B * 4, v);
  disc().flag_heads(f, v, rocprim::not_equal_to<T>(), sh.d);
  rocprim::syncthreads();
  exch().blocked_to_striped(v, v, sh.e);
  rocprim::block_store_direct_striped<B>(threadIdx.x, out + blockIdx.x * B * 4, v);
  rocprim::block_store_direct_blocked(threadIdx.x, flags + blockIdx.x * B * 4, f);
}

template __global__ void block_reduce_scan<int, 256, 4>(const int *, int *, int *);
template __global__ void block_reduce_scan<float, 256, 8>(const float *, float *, float *);
template __global__ void block_reduce_scan<double, 128, 4>(const double *, double *, double *);
template __global__ void block_reduce_scan<float, 64, 1>(const float *, float *, float *);
template __global__ void block_radix_sort<int, int, 256, 4>(int *, int *);
template __global__ void block_radix_sort<float, unsigned, 128, 8>(float *, unsigned *);
template __global__ void block_radix_sort<unsigned long long, double, 64, 2>(unsigned long long *, double *);
template __global__ void block_sort<int, 256>(int *);
template __global__ void block_sort<float, 128>(float *);
template __global__ void block_histogram<unsigned char, 256, 256>(const unsigned char *, unsigned *);
template __global__ void block_histogram<unsigned short, 128, 512>(const unsigned short *, unsigned *);
template __global__ void warp_reduce_scan_sort<int, 64, 256>(const int *, int *);
template __global__ void warp_reduce_scan_sort<float, 32, 256>(const float *, float *);
template __global__ void warp_reduce_scan_sort<double, 16, 128>(const double *, double *);
template __global__ void block_discontinuity_exchange<int, 256>(const int *, int *, int *);
template __global__ void block_discontinuity_exchange<float, 128>(const float *, int *, float *);
