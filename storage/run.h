/* run.h - sweep results: attempt rows and per (instance, model) summaries, in HDF5.
 * A shard file holds the attempts of one shard; run.h5 holds them all, merged, plus the
 * summary table and the run's provenance. Schema: docs/run-schema.md. */
#ifndef RS_RUN_H
#define RS_RUN_H
#include "util/util.h"
#include <stdint.h>

#define RS_RUN_SCHEMA 1
#define RS_RUN_NKINDS 11 /* = RS_VK__N (verify/verify.h) */
#define RS_RUN_NFILES 4

typedef struct {
  char instance[160];   /* corpus instance id */
  uint32_t inst_index;  /* row in the corpus */
  uint16_t model;       /* index into the run's model list */
  uint32_t attempt;
  uint64_t seed;
  uint8_t verdict;      /* rs_verdict */
  uint8_t finish;       /* rs_finish */
  uint8_t wrapped;      /* answer wrapped in prose / fence */
  uint32_t counts[RS_RUN_NKINDS];   /* violations per kind (rs_vkind) */
  uint32_t used[RS_RUN_NFILES];     /* registers used per file (passing or checkable answers) */
  uint32_t occupancy;
  double infer_s, verify_s;
  uint32_t prompt_tokens, completion_tokens;
  uint32_t rank;        /* worker that produced it */
  char *candidate;      /* answer text (owned; NULL if not kept) */
  char *diag;           /* first diagnostic or infra error (owned; NULL if none) */
} rs_attempt;

typedef struct {
  char instance[160];
  uint32_t inst_index;
  uint16_t model;
  uint32_t attempts, passes;
  int32_t first_pass;   /* attempt index of the first pass, -1 if none */
  uint32_t infra;       /* infra attempts (not model failures) */
  uint32_t best_used[RS_RUN_NFILES]; /* fewest registers among passing attempts (per file) */
  uint32_t best_occupancy;
} rs_summary;

typedef struct rs_runfile rs_runfile;

/* Write a file of attempt rows (a shard, or run.h5 at merge). Rows are appended in order. */
rs_runfile *rs_runfile_create(const char *path, rs_err *e);
int rs_runfile_append(rs_runfile *f, const rs_attempt *a, rs_err *e);
int rs_runfile_add_summary(rs_runfile *f, const rs_summary *s, rs_err *e);
int rs_runfile_set_attr(rs_runfile *f, const char *key, const char *value, rs_err *e);
int rs_runfile_close(rs_runfile *f, rs_err *e); /* flush + close; the file is complete after this */

/* Read. A shard or run file that is truncated or corrupt fails to open with a message. */
rs_runfile *rs_runfile_open(const char *path, rs_err *e);
uint64_t rs_runfile_count(const rs_runfile *f);
uint64_t rs_runfile_summary_count(const rs_runfile *f);
/* Row i (texts malloc'd if want_texts; free with rs_attempt_clear). */
int rs_runfile_get(rs_runfile *f, uint64_t i, rs_attempt *out, int want_texts, rs_err *e);
int rs_runfile_get_summary(rs_runfile *f, uint64_t i, rs_summary *out, rs_err *e);
char *rs_runfile_get_attr(rs_runfile *f, const char *key); /* malloc'd or NULL */
void rs_attempt_clear(rs_attempt *a);

#endif
