// scan.cl -- inclusive prefix sum for AMD gfx90a (OpenCL C 2.0, no device libs): each work-item
// scans ITEMS consecutive values in registers, the work-group scans the per-item totals in LDS
// (Hillis-Steele), and each item adds its exclusive prefix; sums[wg] = the work-group's total
// (for a second pass over work-groups).
// Macros (defaults): THREADS (128), ITEMS (8).
#ifndef THREADS
#define THREADS 128
#endif
#ifndef ITEMS
#define ITEMS 8
#endif

static inline void rs_barrier(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void scan_incl(__global const float *restrict in, __global float *restrict out,
               __global float *restrict sums) {
  __local float tot[THREADS];
  const int tid = (int)__builtin_amdgcn_workitem_id_x();
  const int wg = (int)__builtin_amdgcn_workgroup_id_x();
  const size_t base = ((size_t)wg * THREADS + tid) * ITEMS;
  float v[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; k++) v[k] = in[base + k];
#pragma unroll
  for (int k = 1; k < ITEMS; k++) v[k] += v[k - 1];
  tot[tid] = v[ITEMS - 1];
  rs_barrier();
#pragma unroll
  for (int off = 1; off < THREADS; off <<= 1) {
    const float t = tid >= off ? tot[tid - off] : 0.0f;
    rs_barrier();
    tot[tid] += t;
    rs_barrier();
  }
  const float pre = tid ? tot[tid - 1] : 0.0f;
#pragma unroll
  for (int k = 0; k < ITEMS; k++) out[base + k] = v[k] + pre;
  if (tid == THREADS - 1) sums[wg] = tot[tid];
}
