/* bind.h - pin a worker rank next to its GPU (or to its own cores) with hwloc, and record what
 * was done so the run can say where every rank ran.
 *
 * gpu:  the worker's GPU is the local_rank-th entry (mod the list length) of the visible-devices
 *       list: CUDA_VISIBLE_DEVICES (NVIDIA), else ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES (AMD),
 *       else every GPU hwloc sees. Index entries are matched to hwloc PCI devices of that vendor in
 *       PCI bus order; the rank is bound to the cores local to the GPU (split among the local ranks
 *       that share it). UUID entries are recorded but have no PCI locality here. With no usable GPU
 *       the rank falls back to core mode and `note` says why.
 * core: distinct cores per local rank: core (local_rank mod ncores).
 * none: no binding; the current binding is recorded. */
#ifndef RS_WORKER_BIND_H
#define RS_WORKER_BIND_H
#include "util/util.h"

typedef enum { RS_BIND_NONE, RS_BIND_CORE, RS_BIND_GPU } rs_bind_mode;

/* "none" | "core" | "gpu"; returns 0, or -1 for anything else. */
int rs_bind_mode_parse(const char *s, rs_bind_mode *out);
const char *rs_bind_mode_name(rs_bind_mode m);

typedef struct {
  rs_bind_mode requested, applied; /* applied may fall back: gpu -> core when no GPU is visible */
  int local_rank, local_size;      /* from the caller (the MPI node-local communicator) */
  char cpuset[128];                /* hwloc_bitmap_list_asprintf of the binding read back, e.g. "2-3" */
  char gpu[64];                    /* "" or the GPU: "cuda:0 (pci 0000:3b:00.0)" / "rocm:1 (...)" */
  char note[256];                  /* human-readable: what was done and why */
} rs_binding;

/* Bind the calling process (all its threads) and fill *out. Returns 0, or -1 with e set when the
 * arguments are bad, hwloc cannot load the topology, or the OS refuses the binding. */
int rs_bind_apply(rs_bind_mode mode, int local_rank, int local_size, rs_binding *out, rs_err *e);

#endif
