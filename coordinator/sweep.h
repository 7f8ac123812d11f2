/* sweep.h - `regsweep sweep` as a library call: the parsed options (cli/cmd_sweep.c fills them)
 * and the whole run on every MPI rank (coordinator/sweep.c). */
#ifndef RS_SWEEP_H
#define RS_SWEEP_H
#include "worker/failpoint.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct {
  const char *corpus, *out, *split, *filter, *verifier, *bind, *keep;
  const char *holdout; /* archs: --holdout-arch */
  const char *models[16];
  uint32_t nmodels, samples, block, max_infra, emit_check;
  unsigned long seed;
  bool until_pass, resume, feedback, one_instance;
  double every;
  unsigned z3_ms, verify_threads, inflight;
} rs_sweep_opts;

/* MPI_Init .. MPI_Finalize: rank 0 checks and locks the run directory (config.json must match on
 * --resume), every rank selects and plans the same shards, rank 0 hands them out (or runs them,
 * alone), checks and redoes bad ones, merges RUN_DIR/run.h5, writes RUN_DIR/summary.md, prints
 * the summary and runs --emit-check; the other ranks open the models and work. fault: RS_FAULT
 * (tests only). Returns the exit status: 0, 1 (a shard, the merge or emit-check failed), 2 (the
 * run directory, corpus, selection or a model). */
int rs_sweep_run(const rs_sweep_opts *o, rs_failpoint fault);

#endif
