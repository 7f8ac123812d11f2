/* coord.h - rank 0: hands shards to idle workers, tracks progress, validates and merges. */
#ifndef RS_COORD_H
#define RS_COORD_H
#include "shard/plan.h"
#include "worker/shard_run.h"
#include <mpi.h>

typedef struct {
  double start, last_print, every_s;
  bool tty;
  uint64_t cost_total, cost_done;
  uint32_t shards_total, shards_done, instances_total;
  uint32_t attempts, attempt0, attempt0_pass, transient;
  double gen_s, verify_s, other_s;
} rs_progress;

/* Messages between ranks (fixed size, sent as bytes). */
enum { RS_TAG_READY = 1, RS_TAG_WORK, RS_TAG_DONE, RS_TAG_FAIL, RS_TAG_STOP };
typedef struct {
  int32_t shard;
  rs_shard_stats st;
  char error[512];
} rs_msg;

/* Run the shards `todo` (plan indices): over MPI when the communicator has workers, else in
 * this process with w. Returns 0, or -1 with e set when a shard failed. */
int rs_coordinate(MPI_Comm comm, const rs_plan *pl, const uint32_t *todo, uint32_t ntodo, rs_worker_ctx *w,
                  rs_progress *pg, rs_err *e);
/* Worker side of the protocol: ask, run, report, until told to stop. */
int rs_work(MPI_Comm comm, const rs_plan *pl, rs_worker_ctx *w, rs_err *e);
void rs_progress_update(rs_progress *pg, const rs_plan *pl, const rs_msg *m, bool final);

/* Merge the plan's shard files into path (written aside, renamed), in plan-canonical order
 * (model, block, group: independent of ranks), with per (instance, model) summaries. */
int rs_merge(const rs_plan *pl, const char *run_dir, const char *path, const char *const *attr_keys,
             const char *const *attr_vals, uint32_t nattrs, rs_err *e);

#endif
