// conv2d.cu -- direct 2-D convolution (C input channels, one output channel, KW x KW taps, zero
// padding KW/2) for NVIDIA (CUDA). Each thread computes OPT consecutive outputs of one row; the
// KW+OPT-1 column-bounds tests are computed once and stay live (as predicates) across the channel
// and tap-row loops: with KW >= 7 more than 7 predicates are live at once, more than the P
// registers, and ptxas keeps some in R registers (P2R/R2P).
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

extern "C" __global__ void __launch_bounds__(THREADS)
conv2d(const float *__restrict__ in, const float *__restrict__ w, float *__restrict__ out, int H, int W, int C) {
  const int x0 = (blockIdx.x * THREADS + threadIdx.x) * OPT;
  const int y = blockIdx.y;
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
      const float *row = in + ((size_t)c * H + yy) * W + x0 - KW / 2;
      const float *wr = w + ((size_t)c * KW + ky) * KW;
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
