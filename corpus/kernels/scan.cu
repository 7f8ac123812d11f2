// scan.cu -- inclusive prefix sum for NVIDIA (CUDA): each thread scans ITEMS consecutive values
// in registers, warps scan the per-thread totals with shuffles, warp 0 scans the warp totals from
// shared memory, and each item adds its exclusive prefix; sums[block] = the block's total.
// Macros (defaults): THREADS (128), ITEMS (8).
#ifndef THREADS
#define THREADS 128
#endif
#ifndef ITEMS
#define ITEMS 8
#endif

extern "C" __global__ void __launch_bounds__(THREADS)
scan_incl(const float *__restrict__ in, float *__restrict__ out, float *__restrict__ sums) {
  __shared__ float warp_tot[THREADS / 32];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const size_t base = ((size_t)blockIdx.x * THREADS + tid) * ITEMS;
  float v[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; k++) v[k] = in[base + k];
#pragma unroll
  for (int k = 1; k < ITEMS; k++) v[k] += v[k - 1];
  float t = v[ITEMS - 1];
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const float u = __shfl_up_sync(0xffffffffu, t, off);
    if (lane >= off) t += u;
  }
  if (lane == 31) warp_tot[warp] = t;
  __syncthreads();
  if (warp == 0) {
    float w = lane < THREADS / 32 ? warp_tot[lane] : 0.0f;
#pragma unroll
    for (int off = 1; off < THREADS / 32; off <<= 1) {
      const float u = __shfl_up_sync(0xffffffffu, w, off);
      if (lane >= off) w += u;
    }
    if (lane < THREADS / 32) warp_tot[lane] = w;
  }
  __syncthreads();
  const float pre = (warp ? warp_tot[warp - 1] : 0.0f) + t - v[ITEMS - 1];
#pragma unroll
  for (int k = 0; k < ITEMS; k++) out[base + k] = v[k] + pre;
  if (tid == THREADS - 1) sums[blockIdx.x] = warp_tot[THREADS / 32 - 1];
}
