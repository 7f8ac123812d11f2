// flash_attn_fwd.cl -- flash-attention forward (online softmax) for AMD gfx90a (OpenCL C 2.0,
// no device libs; exp2 via __builtin_exp2f -> v_exp_f32, no calls).
// Q, K, V, O: [batch*heads][seq][HD] in DTYPE, row-major; seq must be a multiple of BR and BC.
// One work-group handles BR = THREADS*RPT query rows of one (batch, head) (group id y); each
// work-item owns RPT query rows: running max m, running sum l and the output accumulator
// o[RPT][HD] (float) stay in registers; Q rows and K/V blocks of BC rows are staged in LDS,
// the scores S/P of a block go through LDS (Ps[BC][BR], float).
// Per KV block: s = q.k * scale*log2(e); m' = max(m, max s); p = exp2(s - m');
// l = l*exp2(m - m') + sum p; o = o*exp2(m - m') + p V.  Finally O = o / l.
// Macros (defaults): HD (64; head dim 32/64/96/128), BC (32; KV rows per block), THREADS (64),
//                    RPT (1; query rows per work-item), DTYPE (half; half|float), CAUSAL (0),
//                    UNROLL_C (2; unroll of the loops over the BC keys), UNROLL_D (8; unroll of
//                    the q.k dot product over HD).  Loops over HD that touch o[] are fully unrolled.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#ifndef HD
#define HD 64
#endif
#ifndef BC
#define BC 32
#endif
#ifndef THREADS
#define THREADS 64
#endif
#ifndef RPT
#define RPT 1
#endif
#ifndef DTYPE
#define DTYPE half
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif

#ifndef UNROLL_C
#define UNROLL_C 2
#endif
#ifndef UNROLL_D
#define UNROLL_D 8
#endif

#define RS_STR(x) #x
#define RS_PRAGMA(x) _Pragma(RS_STR(x))
#define RS_UNROLL(n) RS_PRAGMA(unroll n)

#define BR (THREADS * RPT)
#define LOG2E 1.4426950408889634f

static inline void rs_barrier(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void flash_attn_fwd(__global const DTYPE *restrict Q, __global const DTYPE *restrict K,
                    __global const DTYPE *restrict V, __global DTYPE *restrict O, int seq,
                    float sm_scale) {
  __local DTYPE Qs[BR][HD];
  __local DTYPE Ks[BC][HD];
  __local DTYPE Vs[BC][HD];
  __local float Ps[BC][BR];

  const int tid = (int)__builtin_amdgcn_workitem_id_x();
  const int qblk = (int)__builtin_amdgcn_workgroup_id_x();
  const int bh = (int)__builtin_amdgcn_workgroup_id_y();
  const size_t base = (size_t)bh * seq * HD;
  const int q0 = qblk * BR;
  const float scale = sm_scale * LOG2E;

  for (int i = tid; i < BR * HD; i += THREADS)
    Qs[i / HD][i % HD] = Q[base + (size_t)(q0 + i / HD) * HD + i % HD];

  float m[RPT], l[RPT], o[RPT][HD];
#pragma unroll
  for (int r = 0; r < RPT; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
#pragma unroll
    for (int d = 0; d < HD; ++d) o[r][d] = 0.0f;
  }

#if CAUSAL
  const int kv_end = q0 + BR;
#else
  const int kv_end = seq;
#endif
  for (int kv0 = 0; kv0 < kv_end; kv0 += BC) {
    rs_barrier();
    for (int i = tid; i < BC * HD; i += THREADS) {
      const size_t g = base + (size_t)(kv0 + i / HD) * HD + i % HD;
      Ks[i / HD][i % HD] = K[g];
      Vs[i / HD][i % HD] = V[g];
    }
    rs_barrier();

#pragma unroll
    for (int r = 0; r < RPT; ++r) {
      const int qr = tid * RPT + r;
      /* S = Q K^T for this row; running max */
      float mx = m[r];
      RS_UNROLL(UNROLL_C)
      for (int c = 0; c < BC; ++c) {
        float acc = 0.0f;
        RS_UNROLL(UNROLL_D)
        for (int d = 0; d < HD; ++d)
          acc = __builtin_fmaf((float)Qs[qr][d], (float)Ks[c][d], acc);
        acc *= scale;
#if CAUSAL
        if (kv0 + c > q0 + qr) acc = -INFINITY;
#endif
        Ps[c][qr] = acc;
        mx = __builtin_fmaxf(mx, acc);
      }
      /* rescale the running state */
      const float alpha = __builtin_exp2f(m[r] - mx);
      m[r] = mx;
#pragma unroll
      for (int d = 0; d < HD; ++d) o[r][d] *= alpha;
      /* P = exp2(S - m'); o += P V */
      float psum = 0.0f;
      RS_UNROLL(UNROLL_C)
      for (int c = 0; c < BC; ++c) {
        const float p = __builtin_exp2f(Ps[c][qr] - mx);
        psum += p;
#pragma unroll
        for (int d = 0; d < HD; ++d)
          o[r][d] = __builtin_fmaf(p, (float)Vs[c][d], o[r][d]);
      }
      l[r] = l[r] * alpha + psum;
    }
  }

#pragma unroll
  for (int r = 0; r < RPT; ++r) {
    const float inv = 1.0f / l[r];
    const size_t row = base + (size_t)(q0 + tid * RPT + r) * HD;
#pragma unroll
    for (int d = 0; d < HD; ++d)
      O[row + d] = (DTYPE)(o[r][d] * inv);
  }
}
