// reduce.cl -- sum reduction for AMD gfx90a (OpenCL C 2.0, no device libs): each work-item keeps
// VPT loads in flight per step of a grid-stride loop, then the work-group reduces its partial
// sums through LDS; out[wg] = the work-group's sum (a second launch or the host adds those).
// Macros (defaults): THREADS (256), VPT (8), KAHAN (0; 1 = compensated summation, which keeps a
// correction term per work-item and doubles the live values of the loop).
#ifndef THREADS
#define THREADS 256
#endif
#ifndef VPT
#define VPT 8
#endif
#ifndef KAHAN
#define KAHAN 0
#endif

static inline void rs_barrier(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void reduce_sum(__global const float *restrict in, __global float *restrict out, int n, int groups) {
  __local float part[THREADS];
  const int tid = (int)__builtin_amdgcn_workitem_id_x();
  const int wg = (int)__builtin_amdgcn_workgroup_id_x();
  float s = 0.0f, comp = 0.0f;
  for (int base = wg * THREADS * VPT; base < n; base += groups * THREADS * VPT) {
    float v[VPT];
#pragma unroll
    for (int k = 0; k < VPT; k++) {
      const int i = base + k * THREADS + tid;
      v[k] = i < n ? in[i] : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < VPT; k++) {
#if KAHAN
      const float y = v[k] - comp;
      const float t = s + y;
      comp = (t - s) - y;
      s = t;
#else
      s += v[k];
#endif
    }
  }
  part[tid] = s - comp;
  rs_barrier();
#pragma unroll
  for (int off = THREADS / 2; off > 0; off >>= 1) {
    if (tid < off) part[tid] += part[tid + off];
    rs_barrier();
  }
  if (tid == 0) out[wg] = part[0];
}
