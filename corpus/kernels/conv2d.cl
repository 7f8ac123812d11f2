// conv2d.cl -- direct 2-D convolution (C input channels, one output channel, KW x KW taps, zero
// padding KW/2) for AMD gfx90a (OpenCL C 2.0, no device libs). Each work-item computes OPT
// consecutive outputs of one row; the KW+OPT-1 column-bounds tests are computed once and stay
// live (as lane masks in SGPR pairs) across the channel and tap-row loops.
// Macros (defaults): KW (5, odd), OPT (2), THREADS (128).
#ifndef KW
#define KW 5
#endif
#ifndef OPT
#define OPT 2
#endif
#ifndef THREADS
#define THREADS 128
#endif
#if (KW % 2) != 1
#error "KW must be odd"
#endif
#define NCOL (KW + OPT - 1)

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void conv2d(__global const float *restrict in, __global const float *restrict w,
            __global float *restrict out, int H, int W, int C) {
  const int x0 = ((int)__builtin_amdgcn_workgroup_id_x() * THREADS + (int)__builtin_amdgcn_workitem_id_x()) * OPT;
  const int y = (int)__builtin_amdgcn_workgroup_id_y();
  bool ok[NCOL];
#pragma unroll
  for (int t = 0; t < NCOL; t++) {
    const int xx = x0 + t - KW / 2;
    ok[t] = xx >= 0 && xx < W;
  }
  float acc[OPT];
#pragma unroll
  for (int o = 0; o < OPT; o++) acc[o] = 0.0f;
  for (int c = 0; c < C; c++) {
    for (int ky = 0; ky < KW; ky++) {
      const int yy = y + ky - KW / 2;
      if (yy < 0 || yy >= H) continue;
      __global const float *row = in + ((size_t)c * H + yy) * W + x0 - KW / 2;
      __global const float *wr = w + ((size_t)c * KW + ky) * KW;
      float v[NCOL];
#pragma unroll
      for (int t = 0; t < NCOL; t++) v[t] = ok[t] ? row[t] : 0.0f;
#pragma unroll
      for (int kx = 0; kx < KW; kx++)
#pragma unroll
        for (int o = 0; o < OPT; o++) acc[o] += v[o + kx] * wr[kx];
    }
  }
#pragma unroll
  for (int o = 0; o < OPT; o++)
    if (x0 + o < W) out[(size_t)y * W + x0 + o] = acc[o];
}
