/* shard_run.h - a worker's loop over one shard: per instance build the Problem once, then
 * generate -> verify -> record every attempt; the shard file is written aside and renamed. */
#ifndef RS_SHARD_RUN_H
#define RS_SHARD_RUN_H
#include "model/model.h"
#include "shard/plan.h"
#include "storage/corpus.h"
#include "storage/run.h"
#include "worker/failpoint.h"

enum rs_keep { RS_KEEP_ALL, RS_KEEP_FAILED, RS_KEEP_NONE };

typedef struct {
  rs_corpus *corpus;
  rs_model **models;
  const char *const *specs;
  uint32_t nmodels;
  int verifier;          /* RS_VERIFIER_* */
  unsigned z3_timeout_ms;
  uint64_t seed;
  bool until_pass;
  bool feedback;         /* pass the previous rejection's diagnostics to the next attempt */
  int keep;              /* rs_keep: which candidate texts to store */
  const char *run_dir;
  int rank;
  uint32_t max_transient; /* give up after this many transient infra attempts in a row (0: never) */
  uint32_t transient_run; /* the current run of them, across shards */
  rs_failpoint fault;     /* RS_FAULT (tests only) */
} rs_worker_ctx;

typedef struct {
  uint32_t attempts, passes, attempt0, attempt0_pass, infra, transient, disagreements;
  double gen_s, verify_s, other_s, wall_s;
} rs_shard_stats;

/* Path of a shard's file. */
void rs_shard_path(const char *run_dir, const rs_shard *s, char *buf, size_t n);
int rs_shard_run(rs_worker_ctx *w, const rs_plan *pl, const rs_shard *s, rs_shard_stats *st, rs_err *e);
/* What a resume finds at a shard's path. */
enum rs_shard_state {
  RS_SHARD_OK,         /* complete and intact: reuse */
  RS_SHARD_MISSING,    /* not there: run it */
  RS_SHARD_BAD,        /* corrupt, truncated or unfinished: redo (e says why) */
  RS_SHARD_RETRY,      /* intact, but *transient attempts got no answer from the model server */
  RS_SHARD_UNREADABLE, /* exists but cannot be read (permissions): may hold results, never redone */
};
int rs_shard_check(const char *path, uint32_t *transient, rs_err *e);

#endif
