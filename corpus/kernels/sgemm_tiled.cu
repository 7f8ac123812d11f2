// sgemm_tiled.cu -- tiled SGEMM C = alpha*A*B + beta*C for NVIDIA (CUDA; nvcc -ptx, sm_89/sm_90).
// Row-major A (MxK), B (KxN), C (MxN); M, N, K multiples of BM, BN, BK (no bounds checks).
// A block computes a BM x BN tile of C through shared tiles As[BK][BM], Bs[BK][BN]; each thread
// holds a TM x TN register tile.  Block size = (BM/TM)*(BN/TN) threads (1-D).
// Macros (defaults): DTYPE (float; float|double), BM (64), BN (64), BK (8), TM (4), TN (4),
//                    KUNROLL (BK; unroll factor of the inner k loop).
#ifndef DTYPE
#define DTYPE float
#endif
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 4
#endif
#ifndef TN
#define TN 4
#endif
#ifndef KUNROLL
#define KUNROLL BK
#endif

#define RS_STR(x) #x
#define RS_PRAGMA(x) _Pragma(RS_STR(x))
#define RS_UNROLL(n) RS_PRAGMA(unroll n)

#define NTX (BN / TN)
#define NTY (BM / TM)
#define NTHREADS (NTX * NTY)

extern "C" __global__ void __launch_bounds__(NTHREADS)
sgemm_tiled(const DTYPE *__restrict__ A, const DTYPE *__restrict__ B, DTYPE *__restrict__ C,
            int M, int N, int K, DTYPE alpha, DTYPE beta) {
  __shared__ DTYPE As[BK][BM];
  __shared__ DTYPE Bs[BK][BN];

  const int tid = threadIdx.x;
  const int tx = tid % NTX, ty = tid / NTX;
  const DTYPE *Ablk = A + (size_t)(blockIdx.y * BM) * K;
  const DTYPE *Bblk = B + blockIdx.x * BN;

  DTYPE acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = (DTYPE)0;

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += NTHREADS) {
      const int r = i / BK, c = i % BK;
      As[c][r] = Ablk[(size_t)r * K + k0 + c];
    }
    for (int i = tid; i < BK * BN; i += NTHREADS) {
      const int r = i / BN, c = i % BN;
      Bs[r][c] = Bblk[(size_t)(k0 + r) * N + c];
    }
    __syncthreads();
    RS_UNROLL(KUNROLL)
    for (int kk = 0; kk < BK; ++kk) {
      DTYPE a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[kk][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = blockIdx.y * BM + ty * TM + i;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      DTYPE *cp = C + (size_t)row * N + blockIdx.x * BN + tx * TN + j;
      *cp = alpha * acc[i][j] + beta * *cp;
    }
  }
}
