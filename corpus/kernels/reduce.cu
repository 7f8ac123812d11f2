// reduce.cu -- sum reduction for NVIDIA (CUDA): each thread keeps VPT loads in flight per step of
// a grid-stride loop, warps reduce with shuffles, then warp 0 reduces the per-warp sums from
// shared memory; out[block] = the block's sum.
// Macros (defaults): THREADS (256), VPT (8), KAHAN (0; 1 = compensated summation).
#ifndef THREADS
#define THREADS 256
#endif
#ifndef VPT
#define VPT 8
#endif
#ifndef KAHAN
#define KAHAN 0
#endif

extern "C" __global__ void __launch_bounds__(THREADS)
reduce_sum(const float *__restrict__ in, float *__restrict__ out, int n) {
  __shared__ float warp_sum[THREADS / 32];
  const int tid = threadIdx.x;
  float s = 0.0f, comp = 0.0f;
  for (int base = blockIdx.x * THREADS * VPT; base < n; base += gridDim.x * THREADS * VPT) {
    float v[VPT];
#pragma unroll
    for (int k = 0; k < VPT; k++) {
      const int i = base + k * THREADS + tid;
      v[k] = i < n ? in[i] : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < VPT; k++) {
#if KAHAN
      const float y = v[k] - comp;
      const float t = s + y;
      comp = (t - s) - y;
      s = t;
#else
      s += v[k];
#endif
    }
  }
  s -= comp;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
  if ((tid & 31) == 0) warp_sum[tid >> 5] = s;
  __syncthreads();
  if (tid < 32) {
    s = tid < THREADS / 32 ? warp_sum[tid] : 0.0f;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if (tid == 0) out[blockIdx.x] = s;
  }
}
