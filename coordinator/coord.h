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
  uint32_t lost_attempts, lost_transient; /* in shards a failing worker abandoned (redone by --resume) */
  double gen_s, verify_s, other_s;
  rs_live *live;   /* per rank, the latest counters (index 0: the single process) */
  int nlive;
} rs_progress;

/* Messages between ranks (fixed size, sent as bytes). A worker asks for up to `want` shards (REQ)
 * while its window has room, reports each committed shard (DONE) and its live counters every
 * second (LIVE), and ends with BYE or FAIL. */
enum { RS_TAG_REQ = 1, RS_TAG_WORK, RS_TAG_DONE, RS_TAG_FAIL, RS_TAG_LIVE, RS_TAG_BYE };
#define RS_MSG_SHARDS 32
typedef struct {
  int32_t shard;                  /* DONE */
  uint32_t want, nshards;         /* REQ: how many; WORK: how many given */
  int32_t shards[RS_MSG_SHARDS];  /* WORK */
  int32_t more;                   /* WORK: 0 = nothing more will come */
  rs_shard_stats st;              /* DONE: the shard's; FAIL: the abandoned shards' */
  rs_live lv;
  char error[512];
} rs_msg;

/* Run the shards `todo` (plan indices): over MPI when the communicator has workers, else in
 * this process with w. Returns 0, or -1 with e set when a shard failed. */
int rs_coordinate(MPI_Comm comm, const rs_plan *pl, const uint32_t *todo, uint32_t ntodo, rs_worker_ctx *w,
                  rs_progress *pg, rs_err *e);
/* Worker side of the protocol: ask, run, report, until told to stop. */
int rs_work(MPI_Comm comm, const rs_plan *pl, rs_worker_ctx *w, rs_err *e);
void rs_progress_update(rs_progress *pg, const rs_plan *pl, const rs_msg *m, bool final);
/* "12.3/s", "4.56/min", "2.1/h": three significant digits in a unit that fits the rate. */
void rs_fmt_rate(char *buf, size_t n, double per_s);

/* Merge the plan's shard files into path (written aside, renamed), in plan-canonical order
 * (model, block, group: independent of ranks), with per (instance, model) summaries. */
int rs_merge(const rs_plan *pl, const char *run_dir, const char *path, const char *const *attr_keys,
             const char *const *attr_vals, uint32_t nattrs, rs_err *e);

#endif
