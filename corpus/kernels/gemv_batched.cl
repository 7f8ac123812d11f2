// gemv_batched.cl -- batched GEMV y[b] = A[b] * x[b] for AMD gfx90a (OpenCL C 2.0, no device libs),
// written with float2 arithmetic so that llc-14 selects gfx90a's packed FP32 instructions
// (V_PK_FMA_F32, V_PK_MUL_F32, V_PK_ADD_F32) and broadcasts one 32-bit element of a loaded
// float4 through the op_sel/op_sel_hi source modifiers ((float2)(a.z) reads only the low
// register of a.zw: LLVM may give the high one to another value; see mir/vop3p.c).
// Row-major A[b] (ROWS x 4*cols4, as float4; cols4 is a kernel argument, so every row of the
// register tile needs an address of its own); one work-item computes RPT consecutive rows of one
// batch entry; work-groups of 64. Each row keeps a float2 accumulator (columns 4c+0/4c+1 and
// 4c+2 broadcast) and a scalar one (column 4c+3), summed at the end.
// Macros (defaults): ROWS (64), RPT (8), WAVES (0 = no attribute; otherwise
// amdgpu_waves_per_eu(WAVES), which bounds the VGPR budget to 512/WAVES and puts the register
// tile under pressure), ALPHA (1: scale the result by a kernel argument, a packed multiply).
#ifndef ROWS
#define ROWS 64
#endif
#ifndef RPT
#define RPT 8
#endif
#ifndef WAVES
#define WAVES 0
#endif
#ifndef ALPHA
#define ALPHA 1
#endif

#if WAVES > 0
#define RS_WAVES __attribute__((amdgpu_waves_per_eu(WAVES)))
#else
#define RS_WAVES
#endif

#if (ROWS % RPT) != 0
#error "ROWS must be a multiple of RPT"
#endif

__kernel __attribute__((reqd_work_group_size(64, 1, 1))) RS_WAVES
void gemv_batched(__global const float4 *restrict A, __global const float4 *restrict X,
                  __global float2 *restrict Y, int batches, int cols4, float alpha) {
  const int gid = (int)(__builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x());
  const int b = gid / (ROWS / RPT);
  const int r0 = (gid % (ROWS / RPT)) * RPT;
  if (b >= batches) return;
  __global const float4 *x = X + (size_t)b * cols4;
  float2 acc[RPT];
  float s[RPT];
#pragma unroll
  for (int r = 0; r < RPT; r++) {
    acc[r] = (float2)(0.0f, 0.0f);
    s[r] = 0.0f;
  }
  for (int c = 0; c < cols4; c++) {
    const float4 xv = x[c];
    float4 av[RPT];
#pragma unroll
    for (int r = 0; r < RPT; r++) {
      av[r] = A[(gid * RPT + r) * cols4 + c]; // row b*ROWS + r0 + r
      acc[r] = av[r].xy * xv.xy + acc[r];
      s[r] = av[r].w * xv.w + s[r];
    }
    // the broadcast of a.z comes after a.w's last use: the register of a.w is free here
#pragma unroll
    for (int r = 0; r < RPT; r++) acc[r] = (float2)(av[r].z) * xv.zz + acc[r];
  }
#pragma unroll
  for (int r = 0; r < RPT; r++) {
    float2 o = acc[r] + (float2)(s[r], 0.0f);
#if ALPHA
    o = alpha * o;
#endif
    Y[((size_t)b * ROWS + r0 + r)] = o;
  }
}
