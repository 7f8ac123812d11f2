/* corpus.h - the corpus file (corpus.h5): one row per instance, texts compressed.
 * Schema: docs/corpus-schema.md. Readable with h5dump, h5py and pandas. */
#ifndef RS_CORPUS_H
#define RS_CORPUS_H
#include "util/util.h"
#include <stdint.h>

#define RS_CORPUS_SCHEMA 1
#define RS_CORPUS_NFILES 4 /* pressure/register columns: per target file in target order */

enum rs_form { RS_FORM_PRERA = 0, RS_FORM_POSTSPLIT = 1, RS_FORM_PTX = 2 };
enum rs_split { RS_SPLIT_TRAIN = 0, RS_SPLIT_TEST = 1 };

typedef struct {
  char id[160];          /* "<family>/<variant>/<target>/<form>", unique */
  char family[32];       /* sgemm | hgemm_mfma | fa (AMD); sgemm | wmma | fa (NVIDIA) */
  char kind[16];         /* gemm | attention */
  char target[16];       /* gfx90a | sm_89 | sm_90 */
  char form[16];         /* prera | postsplit | ptx */
  char variant[96];      /* variant name (grid point) */
  char params[256];      /* the -D macros of the grid point */
  char function[96];     /* kernel function name */
  uint64_t ir_hash;      /* dedup key: IR with registers renumbered, block names stripped */
  /* texts (owned, NUL-terminated; NULL = empty) */
  char *raw;             /* the IR file as the compiler printed it (MIR with its IR module; PTX) */
  char *norm;            /* normalized text (VeriLocc 3.2.2) */
  char *name_map;        /* JSON object: normalized name -> original name */
  char *truth;           /* JSON object: original vreg name -> register (asm spelling); NULL none */
  char truth_reason[128];/* why there is no truth ("" when there is one) */
  uint32_t nvregs, ninsts, nblocks, nconf;
  uint32_t maxp[RS_CORPUS_NFILES];     /* max pressure per register file */
  uint32_t ref_regs[RS_CORPUS_NFILES]; /* compiler's registers used (LLVM final / ptxas -v) */
  uint32_t spill_bytes;  /* ptxas spill stores, or LLVM scratch for AMD */
  uint8_t infeasible;    /* max pressure exceeds a file's budget */
  uint8_t split;         /* rs_split */
  uint8_t same_nv, same_amd; /* member of the per-target subsets of the paper */
  uint32_t raw_lines, norm_lines, raw_tokens, norm_tokens;
  /* form sass: the cubin the listing was made from (owned; NULL = none, or a corpus built before
   * the optional /text/cubin column existed). Not part of the /instances row type. */
  uint8_t *cubin;
  uint64_t cubin_len;
  /* form ptx: the reference allocation (corpus/ptxref.c; docs/ptxtruth.md), a label of kind
   * `reference`, never a truth: ptxas's register kept where the PTX Problem allows it, verified by
   * both verifiers. Owned; NULL = none, or a corpus before the optional /text/reference column.
   * reference_* are read with or without texts. Not part of the /instances row type. */
  char *reference;
  uint32_t reference_kept;     /* values that keep ptxas's register */
  uint32_t reference_labelled; /* values ptxas's register is known for (matched) */
  uint32_t reference_regs;     /* R registers the reference uses (compare ref_regs[0], ptxas's) */
} rs_instance;

/* The label an instance carries: its truth, else its reference, else none. */
enum rs_label_kind { RS_LABEL_NONE = 0, RS_LABEL_TRUTH = 1, RS_LABEL_REFERENCE = 2 };
/* Needs the row's texts only to tell truth from none (truth_reason "" = a truth). */
static inline enum rs_label_kind rs_instance_label_kind(const rs_instance *in) {
  return !in->truth_reason[0] ? RS_LABEL_TRUTH : in->reference_regs ? RS_LABEL_REFERENCE : RS_LABEL_NONE;
}

typedef struct {
  char variant[96];
  char family[32];
  char target[16];
  char params[256];
  char message[512];     /* compiler's first error line, or why it was rejected */
} rs_build_failure;

typedef struct rs_corpus rs_corpus;

/* Writing: create (truncate), append rows, close. Rows are written in order. */
rs_corpus *rs_corpus_create(const char *path, rs_err *e);
int rs_corpus_append(rs_corpus *c, const rs_instance *in, rs_err *e);
int rs_corpus_add_failure(rs_corpus *c, const rs_build_failure *f, rs_err *e);
/* File-level attributes (string key/values: seed, tool versions, created ...). */
int rs_corpus_set_attr(rs_corpus *c, const char *key, const char *value, rs_err *e);

/* Reading. */
rs_corpus *rs_corpus_open(const char *path, rs_err *e);
uint64_t rs_corpus_count(const rs_corpus *c);
uint64_t rs_corpus_failure_count(const rs_corpus *c);
/* Fill *out with row i (texts malloc'd; free with rs_instance_clear). want_texts = 0 skips them. */
int rs_corpus_get(rs_corpus *c, uint64_t i, rs_instance *out, int want_texts, rs_err *e);
int rs_corpus_get_failure(rs_corpus *c, uint64_t i, rs_build_failure *out, rs_err *e);
/* Row index by id, or -1 when absent; -2 (e set) when the id column cannot be read. */
int64_t rs_corpus_find(rs_corpus *c, const char *id, rs_err *e);
/* Attribute value (malloc'd) or NULL. */
char *rs_corpus_get_attr(rs_corpus *c, const char *key);
/* Every string attribute's name (malloc'd array of malloc'd names, *n of them). */
char **rs_corpus_attr_names(rs_corpus *c, uint32_t *n);
/* Copy every string attribute of from onto to (a key already on to is overwritten). */
int rs_corpus_copy_attrs(rs_corpus *from, rs_corpus *to, rs_err *e);

int rs_corpus_close(rs_corpus *c, rs_err *e); /* flushes; reports write errors */

/* archs: the split an instance belongs to. holdout NULL or "": the seeded 80/20 column `split`;
 * holdout = a target name: the unseen-architecture split, test = every instance of that target,
 * train = every instance of every other target (computed from the `target` column, so every
 * corpus has one such split per target it holds and the schema does not change). */
enum rs_split rs_instance_split(const rs_instance *in, const char *holdout);
void rs_instance_clear(rs_instance *in);

#endif
