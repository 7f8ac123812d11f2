// sgemm_tiled.cl -- tiled GEMM C = alpha*A*B + beta*C for AMD gfx90a (OpenCL C 2.0, no device libs).
// Row-major A (MxK), B (KxN), C (MxN); M, N, K must be multiples of BM, BN, BK (no bounds checks).
// Each work-group computes a BM x BN tile of C through LDS tiles As[BK][BM], Bs[BK][BN];
// each work-item holds a TM x TN register tile.  Work-group size = (BM/TM)*(BN/TN).
// Macros (defaults): DTYPE (float; float|half|double), BM (64), BN (64), BK (8),
//                    TM (4), TN (4), KUNROLL (BK; unroll factor of the inner k loop).
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

#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define RS_STR(x) #x
#define RS_PRAGMA(x) _Pragma(RS_STR(x))
#define RS_UNROLL(n) RS_PRAGMA(unroll n)

#define NTX (BN / TN)
#define NTY (BM / TM)
#define NTHREADS (NTX * NTY)

static inline DTYPE rs_mad(DTYPE a, DTYPE b, DTYPE c) { return a * b + c; }

static inline void rs_barrier(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1)))
void sgemm_tiled(__global const DTYPE *restrict A, __global const DTYPE *restrict B,
                 __global DTYPE *restrict C, int M, int N, int K, DTYPE alpha, DTYPE beta) {
  __local DTYPE As[BK][BM];
  __local DTYPE Bs[BK][BN];

  const int tid = (int)__builtin_amdgcn_workitem_id_x();
  const int bx = (int)__builtin_amdgcn_workgroup_id_x();
  const int by = (int)__builtin_amdgcn_workgroup_id_y();
  const int tx = tid % NTX;
  const int ty = tid / NTX;

  DTYPE acc[TM][TN];
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j)
      acc[i][j] = (DTYPE)0;

  __global const DTYPE *Ablk = A + (size_t)(by * BM) * K;
  __global const DTYPE *Bblk = B + bx * BN;

  for (int k0 = 0; k0 < K; k0 += BK) {
    // cooperative loads (A tile stored transposed so the inner loop reads contiguous rows)
    for (int i = tid; i < BM * BK; i += NTHREADS) {
      const int r = i / BK, c = i % BK;
      As[c][r] = Ablk[(size_t)r * K + k0 + c];
    }
    for (int i = tid; i < BK * BN; i += NTHREADS) {
      const int r = i / BN, c = i % BN;
      Bs[r][c] = Bblk[(size_t)(k0 + r) * N + c];
    }
    rs_barrier();

    RS_UNROLL(KUNROLL)
    for (int kk = 0; kk < BK; ++kk) {
      DTYPE a[TM], b[TN];
      for (int i = 0; i < TM; ++i) a[i] = As[kk][ty * TM + i];
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tx * TN + j];
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j)
          acc[i][j] = rs_mad(a[i], b[j], acc[i][j]);
    }
    rs_barrier();
  }

  for (int i = 0; i < TM; ++i) {
    const int row = by * BM + ty * TM + i;
    for (int j = 0; j < TN; ++j) {
      const int col = bx * BN + tx * TN + j;
      __global DTYPE *cp = C + (size_t)row * N + col;
      *cp = alpha * acc[i][j] + beta * *cp;
    }
  }
}
