// hgemm_mfma.cl -- fp16 GEMM (fp32 accumulate) with gfx90a MFMA builtins (OpenCL C 2.0, no device libs).
// C (float, MxN) = A (half, MxK, row-major) * B (half, KxN, row-major); sizes multiples of the
// work-group tile (no bounds checks).  One wave = 64 lanes.  A work-group has WAVES_M x WAVES_N
// waves; each wave computes REP_M x REP_N MFMA tiles of MFMA x MFMA; operands are staged in LDS
// (As[BM][BK], Bs[BK][BN]) with BM = WAVES_M*REP_M*MFMA, BN = WAVES_N*REP_N*MFMA.
// Accumulators are float16 (32x32x8) / float4 (16x16x16) vectors, which LLVM 14 keeps in AGPRs.
// Macros (defaults): MFMA (32; 32 -> mfma_f32_32x32x8f16, 16 -> mfma_f32_16x16x16f16),
//                    WAVES_M (2), WAVES_N (2), REP_M (1), REP_N (1), BK (16; multiple of the
//                    MFMA k: 8 or 16), KUNROLL (BK / MFMA-k).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#ifndef MFMA
#define MFMA 32
#endif
#ifndef WAVES_M
#define WAVES_M 2
#endif
#ifndef WAVES_N
#define WAVES_N 2
#endif
#ifndef REP_M
#define REP_M 1
#endif
#ifndef REP_N
#define REP_N 1
#endif
#ifndef BK
#define BK 16
#endif

typedef half half4 __attribute__((ext_vector_type(4)));
typedef float float4_t __attribute__((ext_vector_type(4)));
typedef float float16_t __attribute__((ext_vector_type(16)));

#if MFMA == 32
#define MK 8                       /* k per MFMA instruction */
#define ACC_T float16_t
#define ACC_N 16
#define KGRP 2                     /* 64 lanes = 32 rows/cols x 2 k-groups */
#define MFMA_OP(a, b, c) __builtin_amdgcn_mfma_f32_32x32x8f16((a), (b), (c), 0, 0, 0)
/* row of accumulator element j in lane l (col = l % 32) */
#define ACC_ROW(l, j) (8 * ((j) / 4) + 4 * ((l) / 32) + ((j) % 4))
#elif MFMA == 16
#define MK 16
#define ACC_T float4_t
#define ACC_N 4
#define KGRP 4                     /* 64 lanes = 16 rows/cols x 4 k-groups */
#define MFMA_OP(a, b, c) __builtin_amdgcn_mfma_f32_16x16x16f16((a), (b), (c), 0, 0, 0)
#define ACC_ROW(l, j) (4 * ((l) / 16) + (j))
#else
#error "MFMA must be 32 or 16"
#endif

#ifndef KUNROLL
#define KUNROLL (BK / MK)
#endif

#define RS_STR(x) #x
#define RS_PRAGMA(x) _Pragma(RS_STR(x))
#define RS_UNROLL(n) RS_PRAGMA(unroll n)

#define WAVE 64
#define NTHREADS (WAVES_M * WAVES_N * WAVE)
#if defined(BM) || defined(BN)
#error "BM/BN are derived from WAVES/WARPS, REP and the MMA size; do not pass them"
#endif
#define BM (WAVES_M * REP_M * MFMA)
#define BN (WAVES_N * REP_N * MFMA)

static inline void rs_barrier(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1)))
void hgemm_mfma(__global const half *restrict A, __global const half *restrict B,
                __global float *restrict C, int M, int N, int K, float alpha, float beta) {
  __local half As[BM][BK];
  __local half Bs[BK][BN];

  const int tid = (int)__builtin_amdgcn_workitem_id_x();
  const int lane = tid % WAVE;
  const int wave = tid / WAVE;
  const int wm = wave / WAVES_N;
  const int wn = wave % WAVES_N;
  const int bx = (int)__builtin_amdgcn_workgroup_id_x();
  const int by = (int)__builtin_amdgcn_workgroup_id_y();

  ACC_T acc[REP_M][REP_N];
  for (int i = 0; i < REP_M; ++i)
    for (int j = 0; j < REP_N; ++j)
      acc[i][j] = (ACC_T)0.0f;

  __global const half *Ablk = A + (size_t)(by * BM) * K;
  __global const half *Bblk = B + bx * BN;

  const int lrc = lane % MFMA;         /* row of A / column of B this lane feeds */
  const int lk = (lane / MFMA) * 4;    /* first k of this lane's 4-element slice */

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += NTHREADS) {
      const int r = i / BK, c = i % BK;
      As[r][c] = Ablk[(size_t)r * K + k0 + c];
    }
    for (int i = tid; i < BK * BN; i += NTHREADS) {
      const int r = i / BN, c = i % BN;
      Bs[r][c] = Bblk[(size_t)(k0 + r) * N + c];
    }
    rs_barrier();

    RS_UNROLL(KUNROLL)
    for (int kk = 0; kk < BK; kk += MK) {
      half4 a[REP_M], b[REP_N];
      for (int i = 0; i < REP_M; ++i) {
        const int r = (wm * REP_M + i) * MFMA + lrc;
        a[i] = (half4)(As[r][kk + lk], As[r][kk + lk + 1], As[r][kk + lk + 2], As[r][kk + lk + 3]);
      }
      for (int j = 0; j < REP_N; ++j) {
        const int c = (wn * REP_N + j) * MFMA + lrc;
        b[j] = (half4)(Bs[kk + lk][c], Bs[kk + lk + 1][c], Bs[kk + lk + 2][c], Bs[kk + lk + 3][c]);
      }
      for (int i = 0; i < REP_M; ++i)
        for (int j = 0; j < REP_N; ++j)
          acc[i][j] = MFMA_OP(a[i], b[j], acc[i][j]);
    }
    rs_barrier();
  }

  for (int i = 0; i < REP_M; ++i)
    for (int j = 0; j < REP_N; ++j) {
      const int col = bx * BN + (wn * REP_N + j) * MFMA + lane % MFMA;
      for (int e = 0; e < ACC_N; ++e) {
        const int row = by * BM + (wm * REP_M + i) * MFMA + ACC_ROW(lane, e);
        __global float *cp = C + (size_t)row * N + col;
        *cp = alpha * acc[i][j][e] + beta * *cp;
      }
    }
}
