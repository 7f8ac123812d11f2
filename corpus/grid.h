/* grid.h - kernel families and their parameter grids (corpus/recipes/grid.tsv). */
#ifndef RS_GRID_H
#define RS_GRID_H
#include "util/util.h"

typedef struct {
  char family[32];   /* sgemm, hgemm_mfma, fa, wmma */
  char vendor[8];    /* amd | nv */
  char source[64];   /* file under corpus/kernels/ */
  char kind[16];     /* gemm | attention */
  char name[96];     /* variant name: the grid point, e.g. hd128_bc32_threads64_..._half */
  char params[200];  /* -D macros, space separated */
  int opt;           /* AMD: clang/llc -O level */
  int fastmath;      /* NVIDIA: nvcc -use_fast_math */
  char arch[16];     /* AMD: the `arch` axis (gfx908 ...); "" = gfx90a (grids without the axis) */
  bool sass_only;    /* corpus import of a cubin: no PTX beside it, form sass only */
} rs_variant;
/* archs: the AMD architecture a variant compiles for (NULL for NVIDIA, which compiles for every
 * target of rs_grid_targets), and the LLVM major version that compiles it (14 or 16). */
const char *rs_variant_arch(const rs_variant *v);
int rs_arch_llvm(const char *arch);

/* Every grid point of every family, in file order (deterministic). */
int rs_grid_load(const char *path, rs_variant **out, uint32_t *n, rs_err *e);
/* Keep variants whose family is in `families` and vendor (AMD: arch) serves one of `targets`
 * (comma lists; NULL = all). */
void rs_grid_filter(rs_variant *v, uint32_t *n, const char *families, const char *targets);
/* Keep at most `limit` variants: a seeded sample spread evenly over (family, vendor) groups,
 * returned in grid order so that a larger limit keeps the smaller one's choices first. */
void rs_grid_sample(rs_variant *v, uint32_t *n, uint32_t limit, uint64_t seed);
/* Targets a vendor compiles for, filtered by a comma list (NULL = all): fills up to
 * RS_GRID_MAX_TARGETS names. NVIDIA: sm_75 sm_80 sm_86 sm_89 sm_90 (form sass on all of them,
 * form ptx on rs_grid_ptx_target ones). */
#define RS_GRID_MAX_TARGETS 8
int rs_grid_targets(const char *vendor, const char *targets, const char *out[RS_GRID_MAX_TARGETS]);
/* NVIDIA targets whose PTX is also an instance (form ptx): all of them (sm_75-sm_90). */
bool rs_grid_ptx_target(const char *target);
/* Does a comma-separated list contain word? (NULL list contains everything.) */
int rs_list_has(const char *list, const char *word);

#endif
