/* compile.h - compile grid variants with the real compilers, in parallel, resumably.
 * Each variant's outputs land in WORK/<vendor>/<family>/<variant>/ (written under a temporary
 * name and renamed when complete), so an interrupted build redoes only unfinished variants. */
#ifndef RS_COMPILE_H
#define RS_COMPILE_H
#include "corpus/grid.h"
#include "mir/rounds.h"

typedef struct {
  const char *kernels;  /* directory of the kernel sources (corpus/kernels) */
  const char *work;     /* work directory */
  const char *targets;  /* comma list, NULL = all */
  const char *nvcc;     /* path of nvcc (ptxas beside it) */
  int jobs;
  int progress;         /* print progress lines to stderr */
  const char *self;     /* the regsweep binary (`corpus disasm` per cubin); NULL = no form sass */
  const char *nvdisasm; /* its --nvdisasm */
} rs_compile_opts;

typedef struct {
  uint32_t total, cached, compiled, failed;
  double wall_s;
} rs_compile_stats;

/* The allocation rounds of each (llc-VER, architecture, -O), read from llc's pipeline once
 * (rs_llc_rounds): the stages are the last round's greedy and rewriter. */
typedef struct {
  struct { int ver, opt; char arch[16]; rs_rounds r; } p[32];
  uint32_t n;
} rs_rounds_cache;
/* The entry for (ver, arch, opt), probing llc-VER the first time; NULL with e set when llc's
 * pipeline is one regsweep does not know (named by its passes) or the cache is full. */
const rs_rounds *rs_rounds_probe(rs_rounds_cache *c, int ver, const char *arch, int opt, rs_err *e);
/* The entry if probed already, else NULL. */
const rs_rounds *rs_rounds_find(const rs_rounds_cache *c, int ver, const char *arch, int opt);

int rs_compile_all(const rs_variant *v, uint32_t n, const rs_compile_opts *o, rs_compile_stats *st, rs_err *e);
void rs_variant_dir(const rs_compile_opts *o, const rs_variant *v, char *buf, size_t n);
/* Locate nvcc: $NVCC, PATH, /usr/local/cuda/bin. Returns a static string or NULL. */
const char *rs_find_nvcc(void);

#endif
