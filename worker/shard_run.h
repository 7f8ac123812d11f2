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

#define RS_REFUSED_STOP 3

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
  /* the window (worker/engine.c) */
  bool one_instance;      /* --window-mode=instance: one instance at a time, no prefetch (the old way) */
  uint32_t verify_threads; /* 0: verify on the main thread */
  /* refusals every request meets (rs_gen.refused) in a row, and of how many instances: a run
   * over RS_REFUSED_STOP attempts of 2 instances or more stops the sweep with the reason */
  uint32_t refused_run, refused_insts;
  const void *refused_last;
} rs_worker_ctx;

typedef struct {
  uint32_t attempts, passes, attempt0, attempt0_pass, infra, transient, disagreements;
  double gen_s, verify_s, other_s, wall_s;
} rs_shard_stats;

/* A worker's live counters, cumulative since it started (sent to the coordinator every second). */
typedef struct {
  uint64_t attempts, passes, completion_tokens, prompt_tokens;
  uint32_t inflight, window, window_max, window_min, cuts, instances, shards;
  uint32_t capacity, srv_waiting; /* the servers' capacity (as said or learnt; 0 unknown), their queue */
  double gen_s, verify_s, main_cpu_s, cpu_s, wall_s;
  double oldest_s;                /* the oldest request in flight, seconds */
  char learned[96];               /* where the first model's capacity came from */
} rs_live;

/* Where a worker's shards come from and where its results go (MPI, or the one process). */
enum { RS_NEXT_OK, RS_NEXT_NONE };
typedef struct {
  void *ctx;
  /* Ask for up to `want` more shards without blocking: fills out/nout (0 while an answer is on
   * its way); RS_NEXT_NONE once no more will come. */
  int (*next)(void *ctx, uint32_t want, int32_t *out, uint32_t *nout);
  void (*done)(void *ctx, int32_t shard, const rs_shard_stats *st);
  void (*live)(void *ctx, const rs_live *lv);
} rs_engine_io;

/* The worker's window: keeps up to each model's window of requests in flight across instances
 * and shards, verifies on w->verify_threads threads, commits shard by shard (rows in plan order).
 * On failure returns -1 with e set; *lost gets the attempts of the shards it abandoned. */
int rs_engine_run(rs_worker_ctx *w, const rs_plan *pl, const rs_engine_io *io, rs_shard_stats *lost, rs_live *lv,
                  rs_err *e);

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
