/* recipe.h - what `corpus import` compiles: units read from a recipe file (one line per kernel
 * set: source, language, flags, targets) or named on the command line (language from the
 * file's extension). Checks languages and targets; compiles nothing. */
#ifndef RS_RECIPE_H
#define RS_RECIPE_H
#include "util/util.h"

typedef enum {
  RS_IMP_OPENCL, /* OpenCL C: clang -x cl for amdgcn, as the grid compiles (AMD) */
  RS_IMP_HIP,    /* HIP, device only: clang-16 with rocm-device-libs (AMD) */
  RS_IMP_LLVM,   /* LLVM IR, .ll or .bc: llc for each architecture (AMD) */
  RS_IMP_MIR,    /* the three llc stages X.prera.mir, X.postsplit.mir, X.final.mir (AMD) */
  RS_IMP_CUDA,   /* CUDA: nvcc -ptx, then as PTX (NVIDIA) */
  RS_IMP_PTX,    /* PTX: ptxas -> cubin -> listing (NVIDIA) */
  RS_IMP_CUBIN,  /* a cubin, or an ELF object holding uncompressed cubins: form sass only (NVIDIA) */
  RS_IMP_NLANG
} rs_imp_lang;

typedef struct {
  char source[512];  /* the file (MIR: X.prera.mir, the other two beside it) */
  rs_imp_lang lang;
  char flags[2048];  /* compiler flags and -D macros, passed to clang/nvcc as written (a longer field is refused) */
  char targets[160]; /* comma list of this vendor's targets */
  char name[48];     /* the unit's work-directory name: file stem, made unique */
  int line;          /* recipe line, 0 for a command-line file */
  int opt;           /* AMD: -O level found in flags (3 if none) */
} rs_imp_unit;

/* The AMD architectures import compiles for, and those HIP compiles for (for messages). */
extern const char rs_amd_archs[], rs_hip_archs[];

const char *rs_imp_lang_name(rs_imp_lang l);
bool rs_imp_lang_amd(rs_imp_lang l);
/* Read a recipe: `source<TAB>language<TAB>flags<TAB>targets`, '#' comments, flags and targets
 * may be "-" (none / default); a relative source is relative to the recipe's folder. The first
 * bad line is an error naming its line and what is wrong (unknown language or target, a target
 * of the other vendor, a missing source). */
int rs_recipe_load(const char *path, const char *targets_default, rs_imp_unit **out, uint32_t *n, rs_err *e);
/* One unit per file: the language from the extension (.cl .hip .ll .bc .prera.mir .cu .ptx
 * .cubin .o); an unknown extension is an error naming the file. */
int rs_imp_unit_file(const char *path, const char *targets, rs_imp_unit *u, rs_err *e);
/* Give every kernel set a distinct name (stem, then stem-2 ...): units of the same language,
 * source and flags (one recipe line split by LLVM generation, or listed again for other
 * targets) share it; their work directories differ by their job's hash. */
void rs_imp_name_units(rs_imp_unit *u, uint32_t n);
/* Units of one kernel set must not share a target (its rows would be made twice): the error
 * names the file and both lines. */
int rs_imp_check_overlap(const rs_imp_unit *u, uint32_t n, rs_err *e);

#endif
