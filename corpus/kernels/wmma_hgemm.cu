// wmma_hgemm.cu -- fp16 GEMM with fp32 accumulate using nvcuda::wmma 16x16x16 (CUDA; sm_89/sm_90).
// C (float, MxN) = alpha * A (half, MxK, row-major) * B (half, KxN, row-major) + beta * C;
// sizes multiples of the block tile (no bounds checks).  A block has WARPS_M x WARPS_N warps;
// each warp computes REP_M x REP_N 16x16 fragments; A/B tiles are staged in shared memory
// (As[BM][BK+SKEW], Bs[BK][BN+SKEW]), BM = WARPS_M*REP_M*16, BN = WARPS_N*REP_N*16.
// Macros (defaults): WARPS_M (2), WARPS_N (2), REP_M (2), REP_N (2), BK (32; multiple of 16),
//                    SKEW (8; shared-memory padding in halfs).
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef REP_M
#define REP_M 2
#endif
#ifndef REP_N
#define REP_N 2
#endif
#ifndef BK
#define BK 32
#endif
#ifndef SKEW
#define SKEW 8
#endif

#define WM 16
#define NTHREADS (WARPS_M * WARPS_N * 32)
#if defined(BM) || defined(BN)
#error "BM/BN are derived from WAVES/WARPS, REP and the MMA size; do not pass them"
#endif
#define BM (WARPS_M * REP_M * WM)
#define BN (WARPS_N * REP_N * WM)

extern "C" __global__ void __launch_bounds__(NTHREADS)
wmma_hgemm(const half *__restrict__ A, const half *__restrict__ B, float *__restrict__ C,
           int M, int N, int K, float alpha, float beta) {
  __shared__ __align__(32) half As[BM][BK + SKEW];
  __shared__ __align__(32) half Bs[BK][BN + SKEW];

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const half *Ablk = A + (size_t)(blockIdx.y * BM) * K;
  const half *Bblk = B + blockIdx.x * BN;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[REP_M][REP_N];
#pragma unroll
  for (int i = 0; i < REP_M; ++i)
#pragma unroll
    for (int j = 0; j < REP_N; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += NTHREADS) {
      const int r = i / BK, c = i % BK;
      As[r][c] = Ablk[(size_t)r * K + k0 + c];
    }
    for (int i = tid; i < BK * BN; i += NTHREADS) {
      const int r = i / BN, c = i % BN;
      Bs[r][c] = Bblk[(size_t)(k0 + r) * N + c];
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a[REP_M];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b[REP_N];
#pragma unroll
      for (int i = 0; i < REP_M; ++i)
        wmma::load_matrix_sync(a[i], &As[(wm * REP_M + i) * WM][kk], BK + SKEW);
#pragma unroll
      for (int j = 0; j < REP_N; ++j)
        wmma::load_matrix_sync(b[j], &Bs[kk][(wn * REP_N + j) * WM], BN + SKEW);
#pragma unroll
      for (int i = 0; i < REP_M; ++i)
#pragma unroll
        for (int j = 0; j < REP_N; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < REP_M; ++i)
#pragma unroll
    for (int j = 0; j < REP_N; ++j) {
      float *cp = C + (size_t)(blockIdx.y * BM + (wm * REP_M + i) * WM) * N + blockIdx.x * BN +
                  (wn * REP_N + j) * WM;
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
      wmma::load_matrix_sync(c, cp, N, wmma::mem_row_major);
#pragma unroll
      for (int e = 0; e < c.num_elements; ++e) c.x[e] = alpha * acc[i][j].x[e] + beta * c.x[e];
      wmma::store_matrix_sync(cp, c, N, wmma::mem_row_major);
    }
}
