/* sweep.c - `regsweep sweep` once its options are parsed: MPI set-up, the run directory (config,
 * lock, resume checks), the same selection and plan on every rank, dispatch (rank 0 coordinates,
 * the others work), validation and redo of bad shards, the merge into run.h5 with its provenance,
 * the summary and --emit-check. Moved whole from cli/cmd_sweep.c. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "coordinator/sweep.h"
#include "coordinator/coord.h"
#include "corpus/instance.h"
#include "emit/emit.h"
#include "report/infra.h"
#include "report/table.h"
#include "storage/run_lock.h"
#include "verify/verifier.h"
#include "worker/bind.h"
#include "worker/term.h"
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef RS_VERSION
#define RS_VERSION "unknown"
#endif

/* The config a resume must match (everything but the number of samples). */
static char *config_json(const rs_sweep_opts *o, const char *corpus_abs, const char *hash) {
  cJSON *c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "corpus", corpus_abs);
  cJSON_AddStringToObject(c, "corpus_hash", hash ? hash : "");
  /* a model's identity, not its spec: a resume may name another server, timeout or window */
  cJSON *m = cJSON_AddArrayToObject(c, "models"), *ms = cJSON_AddArrayToObject(c, "model_specs");
  for (uint32_t i = 0; i < o->nmodels; i++) {
    char *id = rs_model_identity(o->models[i]);
    cJSON_AddItemToArray(m, cJSON_CreateString(id));
    cJSON_AddItemToArray(ms, cJSON_CreateString(o->models[i]));
    free(id);
  }
  cJSON_AddNumberToObject(c, "samples", o->samples);
  cJSON_AddBoolToObject(c, "until_pass", o->until_pass);
  cJSON_AddStringToObject(c, "split", o->split);
  cJSON_AddStringToObject(c, "filter", o->filter ? o->filter : "");
  if (o->holdout) cJSON_AddStringToObject(c, "holdout_arch", o->holdout);
  cJSON_AddNumberToObject(c, "seed", (double)o->seed);
  cJSON_AddStringToObject(c, "verifier", o->verifier);
  cJSON_AddNumberToObject(c, "block", o->block);
  cJSON_AddStringToObject(c, "keep", o->keep);
  cJSON_AddBoolToObject(c, "feedback", o->feedback);
  char *s = cJSON_Print(c);
  cJSON_Delete(c);
  char *r = rs_xstrndup(s, strlen(s));
  cJSON_free(s);
  return r;
}

/* A resume may change the number of samples and the models' transport (model_specs); everything
 * else must be the same. */
static bool compatible(const char *old, const char *cur, char *why, size_t n) {
  cJSON *a = cJSON_Parse(old), *b = cJSON_Parse(cur);
  bool ok = a && b;
  if (!ok) snprintf(why, n, "config.json is not valid JSON");
  const cJSON *it;
  if (ok)
    cJSON_ArrayForEach(it, b) {
      if (!strcmp(it->string, "samples") || !strcmp(it->string, "model_specs")) continue;
      cJSON *o = cJSON_GetObjectItemCaseSensitive(a, it->string);
      if (!o || !cJSON_Compare(o, it, 1)) {
        snprintf(why, n, "'%s' differs from the run being resumed", it->string);
        ok = false;
        break;
      }
    }
  cJSON_Delete(a);
  cJSON_Delete(b);
  return ok;
}

static int write_file(const char *path, const char *text) {
  char tmp[1300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return -1;
  int bad = fputs(text, f) < 0;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path)) return -1;
  return 0;
}

/* Shard files a killed writer left half-written (NAME.h5.tmp.PID): never results. Returns how
 * many were removed. Only on resume, when no writer of this run can be alive. */
static unsigned remove_unfinished(const char *out) {
  char dir[1200], p[1600];
  snprintf(dir, sizeof dir, "%s/shards", out);
  DIR *d = opendir(dir);
  unsigned n = 0;
  if (!d) return 0;
  for (struct dirent *de; (de = readdir(d));) {
    if (!strstr(de->d_name, ".h5.tmp.")) continue;
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    n += unlink(p) == 0;
  }
  closedir(d);
  return n;
}

/* RUN_DIR/started holds the run's first start (a resume keeps it for the provenance). */
static void note_start(const char *out, time_t t) {
  char p[1200], s[64];
  snprintf(p, sizeof p, "%s/started", out);
  if (access(p, F_OK) == 0) return;
  strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%SZ\n", gmtime(&t));
  write_file(p, s);
}

static void read_start(const char *out, char *buf, size_t n, const char *fallback) {
  char p[1200];
  snprintf(p, sizeof p, "%s/started", out);
  rs_err e;
  char *s = rs_read_file(p, NULL, &e);
  snprintf(buf, n, "%s", s ? s : fallback);
  buf[strcspn(buf, "\n")] = 0;
  free(s);
}

/* Rank 0's checks of the run directory, and its lock (*lk, held until the sweep ends); returns
 * 0 or an exit status. */
static int prepare_dir(const rs_sweep_opts *o, const char *cfg, rs_runlock **lk) {
  char p[1200];
  struct stat sb;
  snprintf(p, sizeof p, "%s/config.json", o->out);
  bool exists = stat(o->out, &sb) == 0;
  if (exists && !o->resume) {
    fprintf(stderr, "regsweep sweep: %s exists; add --resume to continue it, or choose another --out\n", o->out);
    return 2;
  }
  if (!exists && mkdir(o->out, 0755)) {
    fprintf(stderr, "regsweep sweep: cannot create %s: %s\n", o->out, strerror(errno));
    return 2;
  }
  rs_err le;
  char stale[400];
  if (!(*lk = rs_run_lock(o->out, stale, sizeof stale, &le))) {
    fprintf(stderr, "regsweep sweep: %s\n", le.msg);
    return 2;
  }
  if (stale[0]) fprintf(stderr, "regsweep sweep: %s: took over the lock of a sweep that is gone (%s)\n", o->out, stale);
  if (exists) {
    rs_err e;
    char *old = rs_read_file(p, NULL, &e), why[256];
    if (!old) {
      fprintf(stderr, "regsweep sweep: cannot resume %s: %s\n", o->out, e.msg);
      return 2;
    }
    bool ok = compatible(old, cfg, why, sizeof why);
    free(old);
    if (!ok) {
      fprintf(stderr, "regsweep sweep: cannot resume %s: %s\n", o->out, why);
      return 2;
    }
  }
  snprintf(p, sizeof p, "%s/shards", o->out);
  if (mkdir(p, 0755) && errno != EEXIST) {
    fprintf(stderr, "regsweep sweep: cannot create %s: %s\n", p, strerror(errno));
    return 2;
  }
  snprintf(p, sizeof p, "%s/config.json", o->out);
  if (write_file(p, cfg)) {
    fprintf(stderr, "regsweep sweep: cannot write %s: %s\n", p, strerror(errno));
    return 2;
  }
  return 0;
}

/* The instances --split, --filter and --holdout-arch select, and their plan: the same on every
 * rank. Returns 0 or 2 (rank 0 says why). */
static int plan_sweep(const rs_sweep_opts *op, rs_corpus *corpus, int rank, rs_plan *pl, rs_err *e) {
  rs_sweep_opts o = *op; /* a copy: the moved code reads o.x */
  int status = 0;
  uint64_t n = rs_corpus_count(corpus);
  uint32_t *inst = rs_xmalloc(sizeof *inst * (n + 1)), ni = 0;
  uint64_t *cost = rs_xmalloc(sizeof *cost * (n + 1)), total = 0;
  for (uint64_t i = 0; i < n && !status; i++) {
    rs_instance in;
    if (rs_corpus_get(corpus, i, &in, 0, e)) {
      if (rank == 0) fprintf(stderr, "regsweep sweep: %s\n", e->msg);
      status = 2;
      break;
    }
    bool take = rs_filter_match(o.filter, &in) &&
                (!strcmp(o.split, "all") || (rs_instance_split(&in, o.holdout) == RS_SPLIT_TEST) == !strcmp(o.split, "test"));
    if (take) {
      inst[ni] = (uint32_t)i;
      cost[ni] = 64 + in.nvregs + in.nconf / 32; /* generate + verify grow with values and conflicts */
      total += cost[ni++];
    }
    rs_instance_clear(&in);
  }
  if (!status && !ni) {
    if (rank == 0) fprintf(stderr, "regsweep sweep: no instance of %s matches --split/--filter\n", o.corpus);
    status = 2;
  }
  /* ~64 groups: enough shards for many workers, none long (independent of -np) */
  if (!status) rs_plan_make(pl, inst, cost, ni, o.nmodels, o.samples, o.block, total / 64 + 1);
  free(inst);
  free(cost);
  return status;
}

/* Rank 0: the plan's shards still to run (plan indices, *nt of them). On resume, finished shards
 * are skipped (*reused); a corrupt or partial one, or one with attempts the model server did not
 * answer, is redone; an unreadable one stops the run untouched (*status 2, nothing to do). */
static uint32_t *shards_todo(const rs_sweep_opts *o, const rs_plan *pl, uint32_t *nt_out, uint32_t *reused,
                             int *status) {
  uint32_t *todo = rs_xmalloc(sizeof *todo * (pl->nshards + 1)), nt = 0, unreadable = 0;
  *reused = 0;
  char sp[1200];
  unsigned stale = o->resume ? remove_unfinished(o->out) : 0;
  if (stale) fprintf(stderr, "sweep: removed %u unfinished shard file(s) of %s/shards\n", stale, o->out);
  for (uint32_t i = 0; i < pl->nshards; i++) {
    rs_shard_path(o->out, &pl->shards[i], sp, sizeof sp);
    if (o->resume) {
      uint32_t tr = 0;
      rs_err se = {{0}};
      int st = rs_shard_check(sp, &tr, &se);
      if (st == RS_SHARD_OK) {
        (*reused)++;
        continue;
      }
      if (st == RS_SHARD_UNREADABLE) {
        fprintf(stderr, "regsweep sweep: %s\n", se.msg);
        unreadable++;
        continue;
      }
      if (st == RS_SHARD_BAD) fprintf(stderr, "sweep: %s: corrupt or incomplete: redoing it\n", se.msg);
      if (st == RS_SHARD_RETRY)
        fprintf(stderr, "sweep: %s: %u attempts got no answer from the model server: redoing the shard\n", sp, tr);
      if (st != RS_SHARD_MISSING) unlink(sp);
    }
    todo[nt++] = i;
  }
  if (unreadable) {
    fprintf(stderr, "regsweep sweep: %u shard file(s) of %s cannot be read and may hold finished attempts; "
                    "make them readable (chmod u+rw) and --resume, or delete them to redo those shards\n",
            unreadable, o->out);
    *status = 2;
    nt = 0;
  }
  *nt_out = nt;
  return todo;
}

/* Rank 0, after dispatch: every shard is checked before the merge; a missing or corrupt one is
 * redone here (up to three passes), opening the models where this rank has none. Returns 0 or 1. */
static int redo_bad_shards(const rs_sweep_opts *o, const rs_plan *pl, rs_model **models, rs_worker_ctx *w,
                           rs_err *e) {
  int status = 0;
  char sp[1200];
  /* validate every shard before merging; redo corrupt ones here */
  for (uint32_t pass = 0; pass < 3 && !status; pass++) {
    uint32_t bad = 0;
    for (uint32_t i = 0; i < pl->nshards && !status; i++) {
      rs_shard_path(o->out, &pl->shards[i], sp, sizeof sp);
      uint32_t tr = 0;
      rs_err se = {{0}};
      int cs = rs_shard_check(sp, &tr, &se);
      if (cs == RS_SHARD_OK || cs == RS_SHARD_RETRY) continue;
      if (cs == RS_SHARD_UNREADABLE) {
        fprintf(stderr, "regsweep sweep: %s; make it readable and --resume\n", se.msg);
        status = 1;
        break;
      }
      if (cs == RS_SHARD_MISSING) fprintf(stderr, "sweep: %s is missing: redoing it\n", sp);
      else fprintf(stderr, "sweep: %s: redoing it\n", se.msg);
      unlink(sp);
      bad++;
      for (uint32_t m = 0; m < o->nmodels && !status; m++)
        if (!models[m] && !(models[m] = rs_model_open(o->models[m], e))) status = 1;
        else if (models[m]) rs_model_limit(models[m], o->inflight);
      rs_shard_stats st;
      if (!status && rs_shard_run(w, pl, &pl->shards[i], &st, e)) status = 1;
      if (status) fprintf(stderr, "regsweep sweep: shard %s: %s\n", pl->shards[i].name, e->msg);
    }
    if (!bad) break;
  }
  return status;
}

/* What rank 0 gathered about every rank, for the run's provenance. */
typedef struct {
  const char *cfg, *corpus_abs, *hash;
  const char *all;   /* size records of host_n bytes: host, binding, GPU */
  size_t host_n;
  const char *mall;  /* size records of mdesc_n bytes: what each rank's models learnt at open */
  size_t mdesc_n;
  int size;
  time_t start_time;
} provenance;

/* Rank 0: merge the shards into RUN_DIR/run.h5 (path) with the provenance attributes. 0 or 1. */
static int merge_sweep(const rs_sweep_opts *op, const rs_plan *pl, const rs_progress *pg, const provenance *pv,
                       const char *path, rs_err *e) {
  rs_sweep_opts o = *op; /* a copy: the moved code reads o.x */
  int size = pv->size, status = 0;
  char start_s[64], this_s[64], end_s[64], ranks[16];
  time_t end_time = time(NULL);
  strftime(this_s, sizeof this_s, "%Y-%m-%dT%H:%M:%SZ", gmtime(&pv->start_time));
  strftime(end_s, sizeof end_s, "%Y-%m-%dT%H:%M:%SZ", gmtime(&end_time));
  read_start(o.out, start_s, sizeof start_s, this_s);
  /* the request window each worker ended with, and how far it was backed off */
  size_t wl = (size_t)size * 100 + 1;
  char *win = rs_xcalloc(wl, 1);
  for (int r = 0; r < size; r++) {
    const rs_live *lv = &pg->live[r];
    if (!lv->window_max) continue;
    size_t u = strlen(win);
    snprintf(win + u, wl - u, "rank %d: window %u of %u (lowest %u, %u backoffs)\n", r, lv->window,
             lv->window_max, lv->window_min, lv->cuts);
  }
  snprintf(ranks, sizeof ranks, "%d", size);
  size_t hl2 = (size_t)size * pv->host_n + 1;
  char *hosts = rs_xcalloc(hl2, 1);
  for (int r = 0; r < size; r++) {
    strncat(hosts, pv->all + (size_t)r * pv->host_n, hl2 - strlen(hosts) - 2);
    strcat(hosts, "\n");
  }
  cJSON *ms = cJSON_CreateArray();
  for (uint32_t m = 0; m < o.nmodels; m++) cJSON_AddItemToArray(ms, cJSON_CreateString(o.models[m]));
  char *mjson = cJSON_PrintUnformatted(ms);
  cJSON_Delete(ms);
  size_t ml2 = (size_t)size * pv->mdesc_n + 1;
  char *mservers = rs_xcalloc(ml2, 1);
  for (int r = 0; r < size; r++) strncat(mservers, pv->mall + (size_t)r * pv->mdesc_n, ml2 - strlen(mservers) - 1);
  const char *keys[] = {"config", "corpus", "corpus_hash", "models", "code_version", "ranks", "bindings", "start",
                        "end", "this_start", "window", "model_servers"};
  const char *vals[] = {pv->cfg, pv->corpus_abs, pv->hash, mjson, RS_VERSION, ranks, hosts, start_s, end_s, this_s,
                        win, mservers};
  if (rs_merge(pl, o.out, path, keys, vals, 12, e)) {
    fprintf(stderr, "regsweep sweep: merge: %s\n", e->msg);
    status = 1;
  }
  cJSON_free(mjson);
  free(hosts);
  free(win);
  free(mservers);
  return status;
}

/* Rank 0: the results tables and infra attempts by reason, to RUN_DIR/summary.md and stdout. */
static void summarize(const rs_sweep_opts *op, const char *path, double t_start, rs_err *e) {
  rs_sweep_opts o = *op; /* a copy: the moved code reads o.x */
  rs_runfile *rf = rs_runfile_open(path, e);
  if (rf) {
    rs_results res;
    memset(&res, 0, sizeof res);
    res.models = o.models;
    res.nmodels = o.nmodels;
    res.samples = o.samples;
    res.until_pass = o.until_pass;
    rs_infra inf = {0}; /* infra attempts by reason, after the tables */
    if (rs_results_load(&res, rf, e) == 0 && rs_infra_load(&inf, rf, 0, e) == 0) {
      char sp2[1200];
      snprintf(sp2, sizeof sp2, "%s/summary.md", o.out);
      FILE *sf = fopen(sp2, "w");
      if (sf) {
        rs_results_print(&res, sf);
        if (inf.total) fprintf(sf, "\n");
        rs_infra_print(&inf, o.models, o.nmodels, 20, sf);
        fclose(sf);
      }
      printf("\n");
      rs_results_print(&res, stdout);
      if (inf.total) printf("\n");
      rs_infra_print(&inf, o.models, o.nmodels, 20, stdout);
      printf("\n%llu attempts in %.1f s; results: %s (summary: %s)\n",
             (unsigned long long)rs_runfile_count(rf), rs_now() - t_start, path, sp2);
    }
    rs_results_free(&res);
    rs_infra_free(&inf);
    rs_runfile_close(rf, e);
  }
}

/* Rank 0: hand out the shards still to run, redo bad ones, merge, summarize and --emit-check.
 * Returns the exit status. */
static int coordinate_sweep(const rs_sweep_opts *op, rs_plan *pl, rs_model **models, rs_worker_ctx *w,
                            const provenance *pv, double t_start, rs_err *e) {
  rs_sweep_opts o = *op; /* a copy: the moved code reads o.x */
  int status = 0, size = pv->size;
  uint32_t nt = 0, reused = 0;
  uint32_t *todo = shards_todo(&o, pl, &nt, &reused, &status);
  fprintf(stderr, "sweep: %u instances x %u models x %u samples: %u shards (%u reused), %d ranks\n", pl->ninst,
          o.nmodels, o.samples, pl->nshards, reused, size);
  rs_progress pg;
  memset(&pg, 0, sizeof pg);
  pg.start = rs_now();
  pg.every_s = o.every;
  pg.tty = isatty(2);
  pg.shards_total = nt;
  pg.nlive = size;
  pg.live = rs_xcalloc((size_t)size, sizeof *pg.live);
  for (uint32_t i = 0; i < nt; i++) pg.cost_total += pl->shards[todo[i]].cost;
  /* with nothing to do (or an unreadable shard) this only tells the workers to stop */
  if (rs_coordinate(MPI_COMM_WORLD, pl, todo, nt, w, &pg, e)) {
    fprintf(stderr, "regsweep sweep: %s\n", e->msg);
    status = 1;
  }
  if (nt || pg.lost_transient) rs_progress_update(&pg, pl, NULL, true);
  if (!status) status = redo_bad_shards(&o, pl, models, w, e);
  free(todo);
  if (!status) {
    char path[1200];
    snprintf(path, sizeof path, "%s/run.h5", o.out);
    status = merge_sweep(&o, pl, &pg, pv, path, e);
    if (!status) summarize(&o, path, t_start, e);
    int ec = status || !o.emit_check ? 0 : rs_emit_check_sweep(path, o.corpus, o.models, o.nmodels, o.emit_check, o.out, stdout, e);
    if (ec) status = 1, fprintf(stderr, "regsweep sweep: emit-check: %s\n", ec < 0 ? e->msg : "LLVM rejected passing answers");
  }
  free(pg.live);
  return status;
}

int rs_sweep_run(const rs_sweep_opts *op, rs_failpoint fault) {
  rs_sweep_opts o = *op; /* a copy: the moved code reads o.x */
  MPI_Init(NULL, NULL);
  int rank, size, status = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  int lrank, lsize;
  MPI_Comm_rank(local, &lrank);
  MPI_Comm_size(local, &lsize);
  double t_start = rs_now();
  time_t start_time = time(NULL);
  char corpus_abs[PATH_MAX];
  if (!realpath(o.corpus, corpus_abs)) snprintf(corpus_abs, sizeof corpus_abs, "%s", o.corpus);
  char *hash = NULL, *cfg = NULL;
  rs_runlock *lock = NULL; /* rank 0's, while the sweep runs */
  if (rank == 0) {
    hash = rs_file_hash(o.corpus);
    cfg = config_json(&o, corpus_abs, hash);
    status = hash ? prepare_dir(&o, cfg, &lock) : (fprintf(stderr, "regsweep sweep: cannot read %s\n", o.corpus), 2);
    if (!status) note_start(o.out, start_time);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  rs_err e = {{0}};
  rs_corpus *corpus = NULL;
  rs_plan pl;
  memset(&pl, 0, sizeof pl);
  rs_model *models[16] = {0};
  rs_binding bind;
  memset(&bind, 0, sizeof bind);
  if (!status) {
    corpus = rs_corpus_open(o.corpus, &e);
    if (!corpus) {
      if (rank == 0) fprintf(stderr, "regsweep sweep: %s\n", e.msg);
      status = 2;
    }
  }
  if (!status) status = plan_sweep(&o, corpus, rank, &pl, &e); /* the same selection and plan on every rank */
  rs_bind_mode bm = RS_BIND_CORE;
  rs_bind_mode_parse(o.bind, &bm);
  if (!status && rs_bind_apply(bm, lrank, lsize, &bind, &e)) {
    fprintf(stderr, "regsweep sweep: rank %d: %s\n", rank, e.msg);
    snprintf(bind.note, sizeof bind.note, "binding failed: %.200s", e.msg);
  }
  /* every rank's host, binding and GPU, for the record */
  char mine[512], host[MPI_MAX_PROCESSOR_NAME] = "";
  int hl = 0;
  MPI_Get_processor_name(host, &hl);
  snprintf(mine, sizeof mine, "rank %d on %s, %s bind, cpus %s%s%s", rank, host, rs_bind_mode_name(bind.applied),
           bind.cpuset, bind.gpu[0] ? ", gpu " : "", bind.gpu);
  char *all = rank == 0 ? rs_xcalloc((size_t)size, sizeof mine) : NULL;
  MPI_Gather(mine, sizeof mine, MPI_CHAR, all, sizeof mine, MPI_CHAR, 0, MPI_COMM_WORLD);
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  /* workers (or the single process) open the models */
  int kind = rs_verifier_kind(o.verifier);
  int mstatus = 0;
  if (!status && (rank > 0 || size == 1)) {
    for (uint32_t m = 0; m < o.nmodels && !mstatus; m++) {
      if (!(models[m] = rs_model_open(o.models[m], &e))) {
        fprintf(stderr, "regsweep sweep: rank %d: %s\n", rank, e.msg);
        mstatus = 2;
      } else {
        rs_model_limit(models[m], o.inflight);
      }
    }
  }
  int any = 0;
  MPI_Allreduce(&mstatus, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any > status) status = any;
  /* what each rank's models learnt at open (schema dialect, probe, server facts), for the record */
  char mdesc[2048] = "";
  for (uint32_t m = 0; m < o.nmodels; m++)
    if (models[m]) {
      char d[600];
      rs_model_describe(models[m], d, sizeof d);
      if (d[0]) snprintf(mdesc + strlen(mdesc), sizeof mdesc - strlen(mdesc), "rank %d, model %u: %s\n", rank, m, d);
    }
  char *mall = rank == 0 ? rs_xcalloc((size_t)size, sizeof mdesc) : NULL;
  MPI_Gather(mdesc, sizeof mdesc, MPI_CHAR, mall, sizeof mdesc, MPI_CHAR, 0, MPI_COMM_WORLD);
  rs_worker_ctx w = {corpus, models, o.models, o.nmodels, kind, o.z3_ms, o.seed, o.until_pass, o.feedback,
                     !strcmp(o.keep, "all") ? RS_KEEP_ALL : !strcmp(o.keep, "none") ? RS_KEEP_NONE : RS_KEEP_FAILED,
                     o.out, rank, o.max_infra, 0, fault, o.one_instance, o.verify_threads, 0, 0, NULL};
  rs_term_install(rank);
  rs_term_lock(rs_run_lock_path(lock)); /* SIGTERM removes it as well */
  if (!status) {
    if (rank == 0) {
      provenance pv = {cfg, corpus_abs, hash, all, sizeof mine, mall, sizeof mdesc, size, start_time};
      status = coordinate_sweep(&o, &pl, models, &w, &pv, t_start, &e);
    } else {
      if (rs_work(MPI_COMM_WORLD, &pl, &w, &e)) status = 1;
    }
  }
  for (uint32_t m = 0; m < o.nmodels; m++) rs_model_close(models[m]);
  rs_plan_free(&pl);
  if (corpus) rs_corpus_close(corpus, &e);
  free(all);
  free(mall);
  free(hash);
  free(cfg);
  rs_term_lock(NULL);
  rs_run_unlock(lock);
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Comm_free(&local);
  MPI_Finalize();
  return status;
}
