/* import.h - `corpus import`: a user's kernels through the grid's pipeline. Each unit (a recipe
 * line or a file) is compiled once per target into WORK/units/NAME-HASH/ (a shell job, written
 * aside and renamed: an interrupted import redoes only unfinished units; a failure is a result
 * and is not retried, except a SASS listing our own disassembler refused, which every run
 * redoes from the unit's cubin), then split into one grid-style variant directory per kernel
 * (WORK/v/<vendor>/[arch/]<family>/<unit>.<kernel>/) that corpus/assemble.c turns into rows:
 * stages, exact truth, normalization, dedup and split exactly as for `corpus build`. */
#ifndef RS_IMPORT_H
#define RS_IMPORT_H
#include "corpus/assemble.h"
#include "corpus/compile.h"
#include "corpus/recipe.h"

typedef struct {
  const char *work;     /* work directory */
  const char *family;   /* the imported rows' family (the library) */
  const char *nvcc;     /* nvcc (ptxas beside it); NULL: NVIDIA units fail naming it */
  const char *self;     /* this binary, for `corpus disasm` */
  const char *nvdisasm; /* NULL: no form sass (PTX rows only; cubin units fail) */
  const char *devlibs;  /* rocm-device-libs' amdgcn/bitcode folder; NULL: HIP units fail naming it */
  int jobs;
  int progress;
  uint64_t seed;        /* split seed */
} rs_import_opts;

typedef struct {
  uint32_t units, cached, compiled, kernels;
  uint32_t kept, replaced;          /* rows of an existing corpus kept / dropped (same family) */
  uint32_t instances, duplicates, failures, with_truth, truth_split, truth_violations, split_labels, split_instances;
  uint32_t disasm_redone;           /* listings refused when compiled, disassembled now */
  double compile_s, assemble_s;
} rs_import_stats;

/* Import the units into `out` (created, or rebuilt around its rows: rows of o->family are
 * replaced by this import's). */
int rs_import(const rs_imp_unit *u, uint32_t n, const rs_import_opts *o, const char *out, rs_import_stats *st,
              rs_err *e);

/* The unit's shell job (corpus/import_job.c): compiles it into DIR (written aside as DIR.tmp.PID,
 * renamed when complete); cubin_target: a cubin unit's architecture; rounds: the allocation
 * rounds of every (llc, architecture, -O) its AMD targets use (rs_import probes them). */
char *rs_import_job(const rs_import_opts *o, const rs_imp_unit *u, const char *dir, const char *cubin_target,
                    const rs_rounds_cache *rounds);
/* The LLVM (clang-N, llc-N) the job of an AMD unit runs for target t; *devlibs: it links
 * rocm-device-libs (HIP and, where it has the target's library, OpenCL). */
int rs_import_llvm(const rs_import_opts *o, const rs_imp_unit *u, const char *t, bool *devlibs);
/* The compile route of the unit for target t (NULL for NVIDIA units: one route for all), as its
 * rows' params name it: "via=clang-22+prelude+internalize", "via=clang-22+rocm-device-libs+
 * isa9402+cov5+wave64", "via=llc-22", "via=nvcc", ... */
void rs_import_route(const rs_import_opts *o, const rs_imp_unit *u, const char *t, char *buf, size_t n);
/* OpenCL -nogpulib compiles include it (written to WORK/prelude.cl). */
extern const char rs_import_prelude[];

/* Splitters (corpus/import_split.c): the part of a compiler output that belongs to one kernel.
 * Each returns a malloc'd text, or NULL when the kernel is not in it. */
/* Names of the kernels (entry functions) of a MIR module, a PTX module or an nvdisasm listing,
 * one per line (malloc'd; "" when none). */
char *rs_split_kernels(const char *text, char kind);
/* MIR: the module's IR document without the other functions' definitions (if any) and the
 * kernel's machine function document; the index cuts many kernels out of one module in one scan. */
typedef struct rs_mir_index rs_mir_index;
rs_mir_index *rs_mir_index_build(const char *text);
char *rs_mir_index_cut(const rs_mir_index *x, const char *kernel);
void rs_mir_index_free(rs_mir_index *x);
/* PTX: the module without the other kernels' .entry definitions. */
char *rs_split_ptx(const char *text, const char *kernel);
/* nvdisasm listing: the header and the kernel's .text section. */
char *rs_split_sass(const char *text, const char *kernel);
/* `ptxas -v` output: the kernel's lines. */
char *rs_split_ptxas(const char *text, const char *kernel);

#endif
