// hgemm_wmma.cl -- fp16 GEMM (fp32 accumulate) with RDNA3 (gfx11) WMMA builtins (OpenCL C 2.0, no device libs).
// C (float, MxN) = A (half, MxK, row-major) * B (half, KxN, row-major); sizes multiples of the
// work-group tile (no bounds checks). One wave = 32 lanes (wave32, the gfx11 default). A
// work-group has WAVES_M x WAVES_N waves; each wave computes REP_M x REP_N 16x16 tiles with
// v_wmma_f32_16x16x16_f16; operands are staged in LDS (As[BM][BK], Bs[BK][BN]),
// BM = WAVES_M*REP_M*16, BN = WAVES_N*REP_N*16.
// Operand layout (RDNA3 ISA, wave32): lane l holds row l%16 of the A tile and column l%16 of the
// B tile, all 16 k values (lanes 16..31 repeat lanes 0..15); accumulator element j of lane l is
// row 2*j + l/16, column l%16. RDNA4 (gfx12, __GFX12__): the _gfx12 builtin; lane l holds k values
// 8*(l/16)..+7 of its row / column, and accumulator element j is row j + 8*(l/16).
// Macros (defaults): WAVES_M (2), WAVES_N (2), REP_M (1), REP_N (1), BK (16; multiple of 16),
//                    KUNROLL (BK / 16).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

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
#if BK % 16
#error "BK must be a multiple of 16"
#endif
#ifndef KUNROLL
#define KUNROLL (BK / 16)
#endif

typedef half half16 __attribute__((ext_vector_type(16)));
typedef half half8 __attribute__((ext_vector_type(8)));
typedef float float8_t __attribute__((ext_vector_type(8)));

#define RS_STR(x) #x
#define RS_PRAGMA(x) _Pragma(RS_STR(x))
#define RS_UNROLL(n) RS_PRAGMA(unroll n)

#define WAVE 32
#define T 16
#define NTHREADS (WAVES_M * WAVES_N * WAVE)
#define BM (WAVES_M * REP_M * T)
#define BN (WAVES_N * REP_N * T)

static inline void rs_barrier(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1)))
void hgemm_wmma(__global const half *restrict A, __global const half *restrict B,
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

  float8_t acc[REP_M][REP_N];
  for (int i = 0; i < REP_M; ++i)
    for (int j = 0; j < REP_N; ++j)
      acc[i][j] = (float8_t)0.0f;

  __global const half *Ablk = A + (size_t)(by * BM) * K;
  __global const half *Bblk = B + bx * BN;
  const int lrc = lane % T; /* row of A / column of B this lane feeds */

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
    for (int kk = 0; kk < BK; kk += T) {
#ifdef __GFX12__
      /* RDNA4 (gfx12): a lane holds 8 of the 16 K values, lanes 16-31 the upper half */
      const int k8 = 8 * (lane / T);
      half8 a[REP_M], b[REP_N];
      for (int i = 0; i < REP_M; ++i) {
        const int r = (wm * REP_M + i) * T + lrc;
        for (int k = 0; k < 8; ++k) a[i][k] = As[r][kk + k8 + k];
      }
      for (int j = 0; j < REP_N; ++j) {
        const int c = (wn * REP_N + j) * T + lrc;
        for (int k = 0; k < 8; ++k) b[j][k] = Bs[kk + k8 + k][c];
      }
      for (int i = 0; i < REP_M; ++i)
        for (int j = 0; j < REP_N; ++j)
          acc[i][j] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a[i], b[j], acc[i][j]);
#else
      /* RDNA3 (gfx11): every lane holds all 16 K values of its row / column */
      half16 a[REP_M], b[REP_N];
      for (int i = 0; i < REP_M; ++i) {
        const int r = (wm * REP_M + i) * T + lrc;
        for (int k = 0; k < T; ++k) a[i][k] = As[r][kk + k];
      }
      for (int j = 0; j < REP_N; ++j) {
        const int c = (wn * REP_N + j) * T + lrc;
        for (int k = 0; k < T; ++k) b[j][k] = Bs[kk + k][c];
      }
      for (int i = 0; i < REP_M; ++i)
        for (int j = 0; j < REP_N; ++j)
          acc[i][j] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a[i], b[j], acc[i][j]);
#endif
    }
    rs_barrier();
  }

  for (int i = 0; i < REP_M; ++i)
    for (int j = 0; j < REP_N; ++j) {
      const int col = bx * BN + (wn * REP_N + j) * T + lane % T;
      for (int e = 0; e < 8; ++e) {
#ifdef __GFX12__
        const int row = by * BM + (wm * REP_M + i) * T + e + 8 * (lane / T); /* gfx12: rows 8 apart */
#else
        const int row = by * BM + (wm * REP_M + i) * T + 2 * e + lane / T;
#endif
        __global float *cp = C + (size_t)row * N + col;
        *cp = alpha * acc[i][j][e] + beta * *cp;
      }
    }
}
