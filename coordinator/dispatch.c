/* dispatch.c - the shard queue over MPI (workers ask for as many shards as fill their window)
 * and the progress line. Rank 0 waits with MPI_Iprobe and short sleeps: Open MPI's blocking
 * receive spins, and a coordinator spinning on a core a co-located inference server needs is
 * worse than 2 ms of latency on a message. */
#include "coordinator/coord.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

void rs_fmt_rate(char *buf, size_t n, double per_s) {
  if (per_s <= 0) snprintf(buf, n, "0/s");
  else if (per_s >= 1) snprintf(buf, n, per_s >= 1000 ? "%.3gk/s" : "%.3g/s", per_s >= 1000 ? per_s / 1000 : per_s);
  else if (per_s * 60 >= 1) snprintf(buf, n, "%.3g/min", per_s * 60);
  else snprintf(buf, n, "%.3g/h", per_s * 3600);
}

static void fmt_time(char *buf, size_t n, double s) {
  if (s < 120) snprintf(buf, n, "%.0f s", s);
  else if (s < 7200) snprintf(buf, n, "%.1f min", s / 60);
  else snprintf(buf, n, "%.1f h", s / 3600);
}

static void print_line(rs_progress *pg, bool final) {
  double t = rs_now();
  pg->last_print = t;
  double el = t - pg->start;
  uint64_t att = 0, tok = 0, passes = 0;
  uint32_t infl = 0, win = 0, wmax = 0, cap = 0, waiting = 0;
  double oldest = 0;
  const char *learned = "";
  for (int r = 0; r < pg->nlive; r++) {
    cap += pg->live[r].capacity;
    waiting += pg->live[r].srv_waiting;
    if (pg->live[r].oldest_s > oldest) oldest = pg->live[r].oldest_s;
    if (!learned[0]) learned = pg->live[r].learned;
    att += pg->live[r].attempts;
    tok += pg->live[r].completion_tokens;
    passes += pg->live[r].passes;
    infl += pg->live[r].inflight;
    win += pg->live[r].window;
    wmax += pg->live[r].window_max;
  }
  if (att < pg->attempts) att = pg->attempts; /* live counters lag the committed shards */
  double frac = pg->cost_total ? (double)pg->cost_done / (double)pg->cost_total : 1;
  double eta = frac > 0 && frac < 1 ? el * (1 - frac) / frac : 0;
  char ar[32], tr[32], es[32], ets[32], line[600], srv[160] = "", old[32];
  rs_fmt_rate(ar, sizeof ar, el > 0 ? (double)att / el : 0);
  rs_fmt_rate(tr, sizeof tr, el > 0 ? (double)tok / el : 0);
  fmt_time(es, sizeof es, el);
  fmt_time(ets, sizeof ets, eta);
  /* what the servers said of themselves, and while no answer has come, how long they have had
   * the oldest request: minutes of "0 attempts" are then not a hang */
  if (cap) snprintf(srv, sizeof srv, "; server: %s%.100s", pg->nlive > 2 ? "per rank, " : "", learned);
  if (waiting) snprintf(srv + strlen(srv), sizeof srv - strlen(srv), ", %u queued there", waiting);
  fmt_time(old, sizeof old, oldest);
  char eta_s[96];
  if (frac > 0) snprintf(eta_s, sizeof eta_s, "%s", ets);
  else if (infl) snprintf(eta_s, sizeof eta_s, "unknown (first answers pending: oldest request %s at the server)", old);
  else snprintf(eta_s, sizeof eta_s, "unknown");
  snprintf(line, sizeof line,
           "sweep: %u/%u shards, %llu attempts (%s), %s completion tokens, %u in flight (window %u of %u%s), "
           "%llu passes, pass@1 so far %.1f%%, elapsed %s, ETA %s",
           pg->shards_done, pg->shards_total, (unsigned long long)att, ar, tr, infl, win, wmax, srv,
           (unsigned long long)passes, pg->attempt0 ? 100.0 * pg->attempt0_pass / pg->attempt0 : 0.0, es, eta_s);
  /* one refreshing line on a terminal, plain log lines otherwise (Slurm logs) */
  if (pg->tty) fprintf(stderr, "\r%-150s%s", line, final ? "\n" : "");
  else fprintf(stderr, "%s\n", line);
  if (final) {
    double gen = 0, ver = 0, mcpu = 0, cpu = 0;
    for (int r = 0; r < pg->nlive; r++) {
      gen += pg->live[r].gen_s;
      ver += pg->live[r].verify_s;
      mcpu += pg->live[r].main_cpu_s;
      cpu += pg->live[r].cpu_s;
    }
    fprintf(stderr, "sweep: worker time: generate %.2f s (summed over candidates), verify %.2f s, other %.2f s "
                    "(main thread CPU outside generate); worker CPU %.3g ms per attempt\n",
            gen, ver, mcpu, att ? 1000 * cpu / (double)att : 0.0);
    if (pg->transient || pg->lost_transient)
      fprintf(stderr, "sweep: %u attempts got no answer from the model server (recorded as infra, not model "
                      "failures%s); --resume retries them\n", pg->transient + pg->lost_transient,
              pg->lost_transient ? ", some in shards left unfinished" : "");
  }
  fflush(stderr);
}

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
  print_line(pg, final);
}

static void set_live(rs_progress *pg, int rank, const rs_live *lv) {
  if (rank >= 0 && rank < pg->nlive) pg->live[rank] = *lv;
}

/* ---- one process: the engine pulls shards straight from the list ------------------------- */

typedef struct {
  const rs_plan *pl;
  const uint32_t *todo;
  uint32_t ntodo, next;
  rs_progress *pg;
} local_io;

static int local_next(void *ctx, uint32_t want, int32_t *out, uint32_t *n) {
  local_io *l = ctx;
  *n = 0;
  if (l->next >= l->ntodo) return RS_NEXT_NONE;
  while (*n < want && *n < RS_MSG_SHARDS && l->next < l->ntodo) out[(*n)++] = (int32_t)l->todo[l->next++];
  return RS_NEXT_OK;
}

static void local_done(void *ctx, int32_t shard, const rs_shard_stats *st) {
  local_io *l = ctx;
  rs_msg m;
  memset(&m, 0, sizeof m);
  m.shard = shard;
  m.st = *st;
  rs_progress_update(l->pg, l->pl, &m, false);
}

static void local_live(void *ctx, const rs_live *lv) {
  local_io *l = ctx;
  set_live(l->pg, 0, lv);
  rs_progress_update(l->pg, l->pl, NULL, false);
}

int rs_coordinate(MPI_Comm comm, const rs_plan *pl, const uint32_t *todo, uint32_t ntodo, rs_worker_ctx *w,
                  rs_progress *pg, rs_err *e) {
  int size;
  MPI_Comm_size(comm, &size);
  if (size == 1) { /* one process does both roles */
    local_io l = {pl, todo, ntodo, 0, pg};
    rs_engine_io io = {&l, local_next, local_done, local_live};
    rs_shard_stats lost;
    rs_live lv;
    int rc = rs_engine_run(w, pl, &io, &lost, &lv, e);
    set_live(pg, 0, &lv);
    pg->lost_attempts += lost.attempts;
    pg->lost_transient += lost.transient;
    return rc;
  }
  uint32_t next = 0;
  int active = size - 1, rc = 0;
  long nap_ns = 20000;
  while (active > 0) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st);
    if (!flag) { /* sleep, 20 us doubling to 2 ms while nothing comes */
      struct timespec nap = {0, nap_ns};
      nanosleep(&nap, NULL);
      if (nap_ns < 2000000) nap_ns *= 2;
      continue;
    }
    nap_ns = 20000;
    rs_msg m;
    MPI_Recv(&m, sizeof m, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm, MPI_STATUS_IGNORE);
    int src = st.MPI_SOURCE;
    switch (st.MPI_TAG) {
    case RS_TAG_REQ: {
      rs_msg reply;
      memset(&reply, 0, sizeof reply);
      while (reply.nshards < m.want && reply.nshards < RS_MSG_SHARDS && next < ntodo)
        reply.shards[reply.nshards++] = (int32_t)todo[next++];
      reply.more = next < ntodo;
      MPI_Send(&reply, sizeof reply, MPI_BYTE, src, RS_TAG_WORK, comm);
      break;
    }
    case RS_TAG_DONE:
      set_live(pg, src, &m.lv);
      rs_progress_update(pg, pl, &m, false);
      break;
    case RS_TAG_LIVE:
      set_live(pg, src, &m.lv);
      rs_progress_update(pg, pl, NULL, false);
      break;
    case RS_TAG_FAIL:
      set_live(pg, src, &m.lv);
      pg->lost_attempts += m.st.attempts;
      pg->lost_transient += m.st.transient;
      if (!rc) rc = rs_errf(e, NULL, 0, "rank %d: %s", src, m.error);
      next = ntodo; /* stop handing out work; the others finish the shards they hold */
      active--;
      break;
    case RS_TAG_BYE:
      set_live(pg, src, &m.lv);
      active--;
      break;
    default:
      break;
    }
  }
  return rc;
}

/* ---- worker side ------------------------------------------------------------------------- */

typedef struct {
  MPI_Comm comm;
  bool asked, none;
  rs_live lv;
} mpi_io;

static int mpi_next(void *ctx, uint32_t want, int32_t *out, uint32_t *n) {
  mpi_io *io = ctx;
  *n = 0;
  if (io->none) return RS_NEXT_NONE;
  if (!io->asked) {
    rs_msg m;
    memset(&m, 0, sizeof m);
    m.want = want;
    m.lv = io->lv;
    MPI_Send(&m, sizeof m, MPI_BYTE, 0, RS_TAG_REQ, io->comm);
    io->asked = true;
    return RS_NEXT_OK;
  }
  int flag = 0;
  MPI_Iprobe(0, RS_TAG_WORK, io->comm, &flag, MPI_STATUS_IGNORE);
  if (!flag) return RS_NEXT_OK;
  rs_msg m;
  MPI_Recv(&m, sizeof m, MPI_BYTE, 0, RS_TAG_WORK, io->comm, MPI_STATUS_IGNORE);
  io->asked = false;
  for (uint32_t i = 0; i < m.nshards && i < RS_MSG_SHARDS; i++) out[(*n)++] = m.shards[i];
  if (!m.more) io->none = true;
  return RS_NEXT_OK;
}

static void mpi_done(void *ctx, int32_t shard, const rs_shard_stats *st) {
  mpi_io *io = ctx;
  rs_msg m;
  memset(&m, 0, sizeof m);
  m.shard = shard;
  m.st = *st;
  m.lv = io->lv;
  MPI_Send(&m, sizeof m, MPI_BYTE, 0, RS_TAG_DONE, io->comm);
}

static void mpi_live(void *ctx, const rs_live *lv) {
  mpi_io *io = ctx;
  io->lv = *lv;
  rs_msg m;
  memset(&m, 0, sizeof m);
  m.lv = *lv;
  MPI_Send(&m, sizeof m, MPI_BYTE, 0, RS_TAG_LIVE, io->comm);
}

int rs_work(MPI_Comm comm, const rs_plan *pl, rs_worker_ctx *w, rs_err *e) {
  mpi_io mio;
  memset(&mio, 0, sizeof mio);
  mio.comm = comm;
  rs_engine_io io = {&mio, mpi_next, mpi_done, mpi_live};
  rs_msg m;
  memset(&m, 0, sizeof m);
  rs_err se = {{0}};
  int rc = rs_engine_run(w, pl, &io, &m.st, &m.lv, &se);
  if (rc) snprintf(m.error, sizeof m.error, "%s", se.msg);
  MPI_Send(&m, sizeof m, MPI_BYTE, 0, rc ? RS_TAG_FAIL : RS_TAG_BYE, comm);
  (void)e;
  return 0; /* the coordinator reports the failure */
}
