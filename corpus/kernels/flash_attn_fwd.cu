// flash_attn_fwd.cu -- flash-attention forward (online softmax) for NVIDIA (CUDA; sm_89/sm_90).
// Same algorithm as flash_attn_fwd.cl: Q, K, V, O: [batch*heads][seq][HD] in DTYPE, row-major;
// seq a multiple of BR and BC.  A block handles BR = THREADS*RPT query rows of one (batch, head)
// (blockIdx.y); each thread owns RPT rows: running max m, sum l and o[RPT][HD] (float) in
// registers; Q rows and K/V blocks of BC rows in shared memory, scores via Ps[BC][BR] (float).
// Per KV block: s = q.k*scale*log2(e); m' = max(m, max s); p = exp2(s - m');
// l = l*exp2(m - m') + sum p; o = o*exp2(m - m') + p V.  Finally O = o / l.
// Macros (defaults): HD (64; 32/64/96/128), BC (32), THREADS (64), RPT (1), DTYPE (half;
//                    half|float), CAUSAL (0), UNROLL_C (2), UNROLL_D (8), STAT (float: the type
//                    of m and l; double makes the 64-bit spills of tests/fixtures/sass-spills).
#include <cuda_fp16.h>

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
#ifndef STAT
#define STAT float
#endif

#define RS_STR(x) #x
#define RS_PRAGMA(x) _Pragma(RS_STR(x))
#define RS_UNROLL(n) RS_PRAGMA(unroll n)

#define BR (THREADS * RPT)
#define LOG2E 1.4426950408889634f

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(half x) { return __half2float(x); }
template <typename T> __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ float from_f<float>(float x) { return x; }
template <> __device__ __forceinline__ half from_f<half>(float x) { return __float2half_rn(x); }

extern "C" __global__ void __launch_bounds__(THREADS)
flash_attn_fwd(const DTYPE *__restrict__ Q, const DTYPE *__restrict__ K,
               const DTYPE *__restrict__ V, DTYPE *__restrict__ O, int seq, float sm_scale) {
  __shared__ DTYPE Qs[BR][HD];
  __shared__ DTYPE Ks[BC][HD];
  __shared__ DTYPE Vs[BC][HD];
  __shared__ float Ps[BC][BR];

  const int tid = threadIdx.x;
  const size_t base = (size_t)blockIdx.y * seq * HD;
  const int q0 = blockIdx.x * BR;
  const float scale = sm_scale * LOG2E;

  for (int i = tid; i < BR * HD; i += THREADS)
    Qs[i / HD][i % HD] = Q[base + (size_t)(q0 + i / HD) * HD + i % HD];

  STAT m[RPT], l[RPT];
  float o[RPT][HD];
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
    __syncthreads();
    for (int i = tid; i < BC * HD; i += THREADS) {
      const size_t g = base + (size_t)(kv0 + i / HD) * HD + i % HD;
      Ks[i / HD][i % HD] = K[g];
      Vs[i / HD][i % HD] = V[g];
    }
    __syncthreads();

#pragma unroll
    for (int r = 0; r < RPT; ++r) {
      const int qr = tid * RPT + r;
      float mx = m[r];
      RS_UNROLL(UNROLL_C)
      for (int c = 0; c < BC; ++c) {
        float acc = 0.0f;
        RS_UNROLL(UNROLL_D)
        for (int d = 0; d < HD; ++d) acc = fmaf(to_f(Qs[qr][d]), to_f(Ks[c][d]), acc);
        acc *= scale;
#if CAUSAL
        if (kv0 + c > q0 + qr) acc = -INFINITY;
#endif
        Ps[c][qr] = acc;
        mx = fmaxf(mx, acc);
      }
      const float alpha = exp2f(m[r] - mx);
      m[r] = mx;
#pragma unroll
      for (int d = 0; d < HD; ++d) o[r][d] *= alpha;
      float psum = 0.0f;
      RS_UNROLL(UNROLL_C)
      for (int c = 0; c < BC; ++c) {
        const float p = exp2f(Ps[c][qr] - mx);
        psum += p;
#pragma unroll
        for (int d = 0; d < HD; ++d) o[r][d] = fmaf(p, to_f(Vs[c][d]), o[r][d]);
      }
      l[r] = l[r] * alpha + psum;
    }
  }

#pragma unroll
  for (int r = 0; r < RPT; ++r) {
    const float inv = 1.0f / l[r];
    const size_t row = base + (size_t)(q0 + tid * RPT + r) * HD;
#pragma unroll
    for (int d = 0; d < HD; ++d) O[row + d] = from_f<DTYPE>(o[r][d] * inv);
  }
}
