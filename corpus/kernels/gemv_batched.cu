// gemv_batched.cu -- batched GEMV y[b] = A[b] * x[b] for NVIDIA (CUDA), the same register tile
// as gemv_batched.cl: one thread computes RPT consecutive rows of one batch entry, reading A and
// x as float4; each row keeps a float2 accumulator and a scalar one, summed at the end.
// Macros (defaults): ROWS (64, a multiple of RPT), RPT (8), ALPHA (1: scale by a kernel argument).
#ifndef ROWS
#define ROWS 64
#endif
#ifndef RPT
#define RPT 8
#endif
#ifndef ALPHA
#define ALPHA 1
#endif
#if (ROWS % RPT) != 0
#error "ROWS must be a multiple of RPT"
#endif

extern "C" __global__ void __launch_bounds__(64)
gemv_batched(const float4 *__restrict__ A, const float4 *__restrict__ X, float2 *__restrict__ Y,
             int batches, int cols4, float alpha) {
  const int gid = blockIdx.x * 64 + threadIdx.x;
  const int b = gid / (ROWS / RPT);
  const int r0 = (gid % (ROWS / RPT)) * RPT;
  if (b >= batches) return;
  const float4 *x = X + (size_t)b * cols4;
  float2 acc[RPT];
  float s[RPT];
#pragma unroll
  for (int r = 0; r < RPT; r++) {
    acc[r] = make_float2(0.0f, 0.0f);
    s[r] = 0.0f;
  }
  for (int c = 0; c < cols4; c++) {
    const float4 xv = x[c];
    float4 av[RPT];
#pragma unroll
    for (int r = 0; r < RPT; r++) {
      av[r] = A[(gid * RPT + r) * cols4 + c];
      acc[r].x = fmaf(av[r].x, xv.x, acc[r].x);
      acc[r].y = fmaf(av[r].y, xv.y, acc[r].y);
      s[r] = fmaf(av[r].w, xv.w, s[r]);
    }
#pragma unroll
    for (int r = 0; r < RPT; r++) {
      acc[r].x = fmaf(av[r].z, xv.z, acc[r].x);
      acc[r].y = fmaf(av[r].z, xv.z, acc[r].y);
    }
  }
#pragma unroll
  for (int r = 0; r < RPT; r++) {
    float2 o = make_float2(acc[r].x + s[r], acc[r].y);
#if ALPHA
    o.x *= alpha;
    o.y *= alpha;
#endif
    Y[(size_t)b * ROWS + r0 + r] = o;
  }
}
