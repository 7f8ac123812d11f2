/* dispatch.c - the shard queue over MPI (workers ask when idle) and the progress line. */
#include "coordinator/coord.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

void rs_progress_update(rs_progress *pg, const rs_plan *pl, const rs_msg *m, bool final) {
  if (m) {
    pg->shards_done++;
    pg->cost_done += pl->shards[m->shard].cost;
    pg->attempts += m->st.attempts;
    pg->attempt0 += m->st.attempt0;
    pg->attempt0_pass += m->st.attempt0_pass;
    pg->transient += m->st.transient;
    pg->gen_s += m->st.gen_s;
    pg->verify_s += m->st.verify_s;
    pg->other_s += m->st.other_s;
  }
  double t = rs_now();
  if (!final && t - pg->last_print < (pg->tty ? 0.5 : pg->every_s)) return;
  pg->last_print = t;
  double el = t - pg->start, rate = el > 0 ? pg->attempts / el : 0;
  double frac = pg->cost_total ? (double)pg->cost_done / (double)pg->cost_total : 1;
  double eta = frac > 0 && frac < 1 ? el * (1 - frac) / frac : 0;
  char line[256];
  snprintf(line, sizeof line, "sweep: %u/%u shards, %u attempts, %.1f attempts/s, pass@1 so far %.1f%%, elapsed %.0f s, ETA %.0f s",
           pg->shards_done, pg->shards_total, pg->attempts, rate,
           pg->attempt0 ? 100.0 * pg->attempt0_pass / pg->attempt0 : 0.0, el, eta);
  /* one refreshing line on a terminal, plain log lines otherwise (Slurm logs) */
  if (pg->tty) fprintf(stderr, "\r%-120s%s", line, final ? "\n" : "");
  else fprintf(stderr, "%s\n", line);
  if (final) {
    double w = pg->gen_s + pg->verify_s + pg->other_s;
    fprintf(stderr, "sweep: worker time: generate %.2f s, verify %.2f s, other %.2f s (%.1f%% outside generate + verify)\n",
            pg->gen_s, pg->verify_s, pg->other_s, w > 0 ? 100.0 * pg->other_s / w : 0.0);
    if (pg->transient)
      fprintf(stderr, "sweep: %u attempts got no answer from the model server (recorded as infra, not model "
                      "failures); --resume retries them\n", pg->transient);
  }
  fflush(stderr);
}

int rs_coordinate(MPI_Comm comm, const rs_plan *pl, const uint32_t *todo, uint32_t ntodo, rs_worker_ctx *w,
                  rs_progress *pg, rs_err *e) {
  int size;
  MPI_Comm_size(comm, &size);
  if (size == 1) { /* one process does both roles */
    for (uint32_t i = 0; i < ntodo; i++) {
      rs_msg m;
      memset(&m, 0, sizeof m);
      m.shard = (int32_t)todo[i];
      if (rs_shard_run(w, pl, &pl->shards[todo[i]], &m.st, e)) return -1;
      rs_progress_update(pg, pl, &m, false);
    }
    return 0;
  }
  uint32_t next = 0;
  int active = size - 1, rc = 0;
  while (active > 0) {
    rs_msg m;
    MPI_Status st;
    MPI_Recv(&m, sizeof m, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
    if (st.MPI_TAG == RS_TAG_DONE) rs_progress_update(pg, pl, &m, false);
    if (st.MPI_TAG == RS_TAG_FAIL && !rc) {
      rc = rs_errf(e, NULL, 0, "rank %d, shard %s: %s", st.MPI_SOURCE, pl->shards[m.shard].name, m.error);
      next = ntodo; /* stop handing out work; let the others finish their shard */
    }
    rs_msg reply;
    memset(&reply, 0, sizeof reply);
    if (next < ntodo) {
      reply.shard = (int32_t)todo[next++];
      MPI_Send(&reply, sizeof reply, MPI_BYTE, st.MPI_SOURCE, RS_TAG_WORK, comm);
    } else {
      MPI_Send(&reply, sizeof reply, MPI_BYTE, st.MPI_SOURCE, RS_TAG_STOP, comm);
      active--;
    }
  }
  return rc;
}

int rs_work(MPI_Comm comm, const rs_plan *pl, rs_worker_ctx *w, rs_err *e) {
  rs_msg m;
  memset(&m, 0, sizeof m);
  m.shard = -1;
  int tag = RS_TAG_READY;
  for (;;) {
    MPI_Send(&m, sizeof m, MPI_BYTE, 0, tag, comm);
    MPI_Status st;
    MPI_Recv(&m, sizeof m, MPI_BYTE, 0, MPI_ANY_TAG, comm, &st);
    if (st.MPI_TAG == RS_TAG_STOP) return 0;
    rs_err se = {{0}};
    if (rs_shard_run(w, pl, &pl->shards[m.shard], &m.st, &se)) {
      snprintf(m.error, sizeof m.error, "%s", se.msg);
      tag = RS_TAG_FAIL;
      (void)e;
    } else {
      tag = RS_TAG_DONE;
    }
  }
}
