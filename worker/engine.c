/* engine.c - the worker's window (shard_run.h): one request window per model across instances
 * and shards. Until-pass loops of many instances are interleaved (an instance's next attempt, with
 * its feedback, goes out as soon as its previous verdict is known); in samples mode the blocks of
 * several instances go out together. Candidates are verified on a pool of threads (vpool.h), per
 * instance in attempt order, and rows reach each shard file in plan order (instance, attempt), so
 * a shard's rows do not depend on the window, on timing or on -np. */
#include "corpus/instance.h"
#include "verify/verifier.h"
#include "worker/shard_run.h"
#include "worker/term.h"
#include "worker/vpool.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { A_NONE, A_SENT, A_GEN, A_QUEUED };
#define RS_FEEDBACK_MAX 3200 /* every diagnostic the verifier kept (RS_MAX_DIAG lines of 256 at most) */
#define PREPARE UINT32_MAX /* the pool job that parses an instance and builds its Problem */

typedef struct eshard eshard;

typedef struct einst {
  const rs_worker_ctx *w;
  eshard *sh;
  uint32_t pi;            /* position in the plan's instance list */
  rs_loaded l;
  const char **vn;
  rs_gen_input in;
  /* pool side (one thread at a time per instance) */
  rs_verifier vf;
  bool vf_open;
  char vf_err[300];       /* the verifier could not be opened, or the instance not prepared */
  uint32_t disagreements;
  /* main thread */
  uint32_t natt, reserve; /* reserve: requests it will send once prepared */
  uint64_t *seeds;
  rs_gen *g;
  rs_check_result *res;
  uint8_t *st;            /* per attempt: A_* */
  uint32_t sent, queued, verified;
  bool passed, finished;
  char feedback[RS_FEEDBACK_MAX];
  rs_attempt *rows;
  uint32_t nrows;
} einst;

struct eshard {
  int32_t idx;
  const rs_shard *s;
  uint32_t started, written; /* instances started / written to the file (relative to s->first) */
  einst **in;
  rs_runfile *out;
  char path[1200], tmp[1300];
  int term_slot;
  uint32_t rows;
  rs_shard_stats st;
  double t0;
};

typedef struct {
  einst **q;
  uint32_t head, len, cap;
} iqueue;

typedef struct {
  rs_worker_ctx *w;
  const rs_plan *pl;
  const rs_engine_io *io;
  rs_vpool *pool;
  eshard **sh;
  uint32_t nsh, capsh;
  bool exhausted;
  uint32_t unverified, live_inst, max_unverified;
  uint32_t reserved[16];  /* per model: requests of instances being prepared on the pool */
  iqueue ready[16];       /* per model: until-pass instances whose next attempt may go out */
  rs_live lv;
  double t0, sync_cpu_s;
  rs_err *e;
  int rc;
} engine;

#define MAX_SHARDS 256

static double thread_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double process_cpu(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

static void iq_push(iqueue *q, einst *x) {
  if (q->len == q->cap) {
    uint32_t cap = q->cap ? 2 * q->cap : 16;
    einst **n = rs_xcalloc(cap, sizeof *n);
    for (uint32_t i = 0; i < q->len; i++) n[i] = q->q[(q->head + i) % q->cap];
    free(q->q);
    q->q = n;
    q->cap = cap;
    q->head = 0;
  }
  q->q[(q->head + q->len++) % q->cap] = x;
}

static einst *iq_pop(iqueue *q) {
  if (!q->len) return NULL;
  einst *x = q->q[q->head];
  q->head = (q->head + 1) % q->cap;
  q->len--;
  return x;
}

static void fill_row(rs_attempt *a, const rs_loaded *l, uint32_t inst, uint16_t model, uint32_t attempt, uint64_t seed,
                     const rs_gen *g, const rs_check_result *r, int rank, int keep) {
  memset(a, 0, sizeof *a);
  snprintf(a->instance, sizeof a->instance, "%s", l->row.id);
  a->inst_index = inst;
  a->model = model;
  a->attempt = attempt;
  a->seed = seed;
  a->verdict = (uint8_t)(g->infra ? RS_V_INFRA : r->verdict);
  a->finish = (uint8_t)g->finish;
  a->infer_s = g->infer_s;
  a->prompt_tokens = g->prompt_tokens;
  a->completion_tokens = g->completion_tokens;
  a->rank = (uint32_t)rank;
  if (!g->infra) {
    for (int k = 0; k < RS_VK__N && k < RS_RUN_NKINDS; k++) a->counts[k] = r->counts[k];
    for (int f = 0; f < RS_RUN_NFILES && f < RS_MAX_FILES; f++) a->used[f] = r->used[f];
    a->occupancy = r->occupancy;
    a->verify_s = r->seconds;
  }
  bool keep_text = keep == RS_KEEP_ALL || (keep == RS_KEEP_FAILED && a->verdict != RS_V_PASS);
  if (keep_text && g->text) a->candidate = rs_xstrndup(g->text, strlen(g->text));
  const char *d = g->infra ? g->error : (r->ndiag ? r->diag[0] : NULL);
  if (d && d[0]) a->diag = rs_xstrndup(d, strlen(d));
}

/* ---- verification (pool threads) ----------------------------------------------------------- */

static void verify_job(void *key, uint32_t k) {
  einst *x = key;
  if (k == PREPARE) { /* parsing and the Problem: CPU work that must not stall the network either */
    rs_err pe = {{0}};
    if (rs_instance_prepare(&x->l, &pe)) snprintf(x->vf_err, sizeof x->vf_err, "%.290s", pe.msg);
    else x->vn = rs_value_names(x->l.p, &x->l.names);
    return;
  }
  rs_check_result *r = &x->res[k], z;
  rs_result_init(r);
  if (x->g[k].infra || x->vf_err[0]) return;
  if (!x->vf_open) { /* opened here: a Z3 context's set-up does not stall the network either */
    rs_err ve = {{0}};
    if (rs_verifier_open(&x->vf, x->w->verifier, x->l.p, x->w->z3_timeout_ms, &ve)) {
      snprintf(x->vf_err, sizeof x->vf_err, "%.290s", ve.msg[0] ? ve.msg : "cannot open the verifier");
      return;
    }
    x->vf_open = true;
  }
  rs_candidate c;
  const char *txt = x->g[k].text ? x->g[k].text : "";
  double tv = rs_now();
  if (!rs_verify_text(&x->vf, &x->l.names, txt, strlen(txt), &c, r, &z)) x->disagreements++;
  r->seconds = rs_now() - tv;
  rs_candidate_free(&c);
}

static void wake_models(void *ctx) {
  rs_worker_ctx *w = ctx;
  for (uint32_t m = 0; m < w->nmodels; m++)
    if (w->models[m]) rs_model_wake(w->models[m]);
}

/* ---- instances ----------------------------------------------------------------------------- */

static void inst_free(einst *x) {
  if (!x) return;
  if (x->vf_open) rs_verifier_close(&x->vf);
  for (uint32_t k = 0; x->g && k < x->natt; k++) rs_gen_clear(&x->g[k]);
  for (uint32_t k = 0; k < x->nrows; k++) rs_attempt_clear(&x->rows[k]);
  free(x->g);
  free(x->res);
  free(x->st);
  free(x->seeds);
  free(x->rows);
  free(x->vn);
  rs_loaded_free(&x->l);
  free(x);
}

static int submit_next(engine *E, einst *x) {
  const rs_shard *s = x->sh->s;
  rs_worker_ctx *w = E->w;
  uint32_t k = x->sent;
  x->in.feedback = w->feedback && x->feedback[0] ? x->feedback : NULL;
  rs_failpoint_hit(&w->fault, w->rank, RS_FP_GENERATE);
  if (rs_model_submit(w->models[s->model], &x->in, s->att_first + k, 1, &x->seeds[k], x, E->e)) return E->rc = -1;
  x->st[k] = A_SENT;
  x->sent++;
  return 0;
}

/* An instance starts: its row is read here (HDF5 stays on this thread), the pool parses it. */
static int start_instance(engine *E, eshard *sh) {
  rs_worker_ctx *w = E->w;
  const rs_shard *s = sh->s;
  uint32_t i = sh->started++;
  einst *x = rs_xcalloc(1, sizeof *x);
  sh->in[i] = x;
  x->w = w;
  x->sh = sh;
  x->pi = s->first + i;
  x->natt = s->att_end - s->att_first;
  x->seeds = rs_xcalloc(x->natt + 1, sizeof *x->seeds);
  x->g = rs_xcalloc(x->natt + 1, sizeof *x->g);
  x->res = rs_xcalloc(x->natt + 1, sizeof *x->res);
  x->st = rs_xcalloc(x->natt + 1, 1);
  x->rows = rs_xcalloc(x->natt + 1, sizeof *x->rows);
  E->live_inst++;
  if (rs_corpus_get(w->corpus, E->pl->inst[x->pi], &x->l.row, 1, E->e)) return E->rc = -1;
  x->reserve = w->until_pass ? 1 : x->natt;
  E->reserved[s->model] += x->reserve;
  rs_vpool_push(E->pool, x, PREPARE);
  return 0;
}

/* Prepared: its first attempt (until-pass) or its whole block goes out. */
static int instance_ready(engine *E, einst *x) {
  rs_worker_ctx *w = E->w;
  const rs_shard *s = x->sh->s;
  E->reserved[s->model] -= x->reserve;
  if (x->vf_err[0]) {
    rs_errf(E->e, NULL, 0, "instance %u of the corpus: %s", E->pl->inst[x->pi], x->vf_err);
    return E->rc = -1;
  }
  const char *spec = w->specs[s->model];
  for (uint32_t k = 0; k < x->natt; k++) x->seeds[k] = rs_attempt_seed(w->seed, x->l.row.id, spec, s->att_first + k);
  x->in = (rs_gen_input){x->l.row.id, x->l.row.target, x->l.p, x->l.row.norm, &x->l.names, x->vn, x->l.row.truth,
                         NULL, NULL, NULL, s->name};
  if (w->until_pass) return submit_next(E, x);
  /* the whole block at once: the server batches it, a builtin model generates it in one call */
  rs_failpoint_hit(&w->fault, w->rank, RS_FP_GENERATE);
  if (rs_model_submit(w->models[s->model], &x->in, s->att_first, x->natt, x->seeds, x, E->e)) return E->rc = -1;
  memset(x->st, A_SENT, x->natt);
  x->sent = x->natt;
  return 0;
}

/* ---- shards -------------------------------------------------------------------------------- */

static void shard_drop(engine *E, uint32_t j) {
  eshard *sh = E->sh[j];
  for (uint32_t i = 0; i < sh->s->count; i++) inst_free(sh->in[i]);
  if (sh->out) {
    rs_err ce;
    rs_runfile_close(sh->out, &ce);
    unlink(sh->tmp);
  }
  rs_term_forget(sh->term_slot);
  free(sh->in);
  free(sh);
  memmove(&E->sh[j], &E->sh[j + 1], sizeof *E->sh * (E->nsh - j - 1));
  E->nsh--;
}

static void activate(engine *E, int32_t idx) {
  if (E->nsh == E->capsh) {
    E->capsh = E->capsh ? 2 * E->capsh : 16;
    E->sh = rs_xrealloc(E->sh, sizeof *E->sh * E->capsh);
  }
  eshard *sh = rs_xcalloc(1, sizeof *sh);
  sh->idx = idx;
  sh->s = &E->pl->shards[idx];
  sh->in = rs_xcalloc(sh->s->count + 1, sizeof *sh->in);
  sh->term_slot = -1;
  sh->t0 = rs_now();
  rs_shard_path(E->w->run_dir, sh->s, sh->path, sizeof sh->path);
  snprintf(sh->tmp, sizeof sh->tmp, "%s.tmp.%d", sh->path, (int)getpid());
  E->sh[E->nsh++] = sh;
}

/* A shard's failure names the shard, as the coordinator's message did before the window. */
static int shard_fail(engine *E, const eshard *sh) {
  char m[512];
  snprintf(m, sizeof m, "%s", E->e->msg);
  snprintf(E->e->msg, sizeof E->e->msg, "shard %.60s: %.440s", sh->s->name, m);
  return E->rc = -1;
}

static int commit(engine *E, eshard *sh) {
  rs_worker_ctx *w = E->w;
  rs_err *e = E->e;
  char val[32];
  int rc = 0;
  snprintf(val, sizeof val, "%u", sh->rows);
  rc = rs_runfile_set_attr(sh->out, "rows", val, e);
  if (!rc) rc = rs_runfile_set_attr(sh->out, "shard", sh->s->name, e);
  if (!rc) rc = rs_runfile_set_attr(sh->out, "model", w->specs[sh->s->model], e);
  snprintf(val, sizeof val, "%u", sh->st.transient);
  if (!rc) rc = rs_runfile_set_attr(sh->out, "transient", val, e);
  if (!rc) rc = rs_runfile_set_attr(sh->out, "complete", "1", e);
  rs_err ce;
  int crc = rs_runfile_close(sh->out, rc ? &ce : e);
  sh->out = NULL;
  if (!rc && crc) rc = -1;
  if (!rc && rename(sh->tmp, sh->path)) rc = rs_errf(e, sh->path, 0, "cannot rename the finished shard into place");
  if (rc) {
    unlink(sh->tmp);
    return shard_fail(E, sh);
  }
  rs_term_forget(sh->term_slot);
  sh->term_slot = -1;
  rs_failpoint_hit(&w->fault, w->rank, RS_FP_RENAMED);
  sh->st.wall_s = rs_now() - sh->t0;
  E->io->done(E->io->ctx, sh->idx, &sh->st);
  for (uint32_t j = 0; j < E->nsh; j++)
    if (E->sh[j] == sh) {
      shard_drop(E, j);
      break;
    }
  return 0;
}

/* Rows of the finished instances at the head of the shard go to its file, in plan order. */
static int write_ready(engine *E, eshard *sh) {
  rs_worker_ctx *w = E->w;
  while (sh->written < sh->s->count && sh->in[sh->written] && sh->in[sh->written]->finished) {
    einst *x = sh->in[sh->written];
    if (!sh->out) {
      if (!(sh->out = rs_runfile_create(sh->tmp, E->e))) {
        unlink(sh->tmp); /* a create that failed halfway (disk full) may leave a stub */
        return shard_fail(E, sh);
      }
      sh->term_slot = rs_term_track(sh->tmp);
    }
    for (uint32_t k = 0; k < x->nrows; k++) {
      if (rs_runfile_append(sh->out, &x->rows[k], E->e)) return shard_fail(E, sh);
      sh->rows++;
      rs_failpoint_hit(&w->fault, w->rank, RS_FP_APPEND);
    }
    inst_free(x);
    sh->in[sh->written++] = NULL;
  }
  if (sh->written == sh->s->count) return commit(E, sh);
  return 0;
}

static int finish_instance(engine *E, einst *x) {
  x->finished = true;
  E->live_inst--;
  x->sh->st.disagreements += x->disagreements;
  /* the heavy parts go now; the rows wait for the instances before this one */
  if (x->vf_open) rs_verifier_close(&x->vf);
  x->vf_open = false;
  free(x->vn);
  x->vn = NULL;
  rs_loaded_free(&x->l);
  memset(&x->l, 0, sizeof x->l);
  return write_ready(E, x->sh);
}

/* A candidate came back from the model. */
static int arrived(engine *E, rs_done *d) {
  einst *x = d->tag;
  rs_worker_ctx *w = E->w;
  const rs_shard *s = x->sh->s;
  uint32_t k = d->attempt - s->att_first;
  x->g[k] = d->g; /* the instance owns it now */
  memset(&d->g, 0, sizeof d->g);
  x->st[k] = A_GEN;
  E->unverified++;
  if (E->rc) return -1;
  const rs_gen *g = &x->g[k];
  /* a deferred attempt (batch:) waits for its answer in a file, it is not a failing server */
  if (!g->deferred) w->transient_run = g->transient ? w->transient_run + 1 : 0;
  /* a server that is down would turn the rest of the sweep into infra rows: stop instead */
  if (w->max_transient && w->transient_run >= w->max_transient) {
    rs_errf(E->e, NULL, 0,
            "model %s: %u attempts in a row got no answer (last: instance %s, attempt %u: %s); "
            "stopping: bring the server back, then --resume",
            w->specs[s->model], w->transient_run, x->l.row.id, d->attempt, g->error);
    return E->rc = -1;
  }
  /* a server that refuses every request (no such model, credentials, bad request) would turn the
   * sweep into infra rows as well: stop at once with its reason and what to change. Two instances
   * at least. A prompt beyond the server's context is the instance's own fact (rs_gen.context), not
   * a refusal: it neither counts here nor breaks a run of refusals of other instances */
  if (g->infra && g->refused) {
    if (w->refused_last != x) w->refused_insts++;
    w->refused_last = x;
    w->refused_run++;
  } else if (!g->context) {
    w->refused_run = w->refused_insts = 0;
    w->refused_last = NULL;
  }
  if (w->refused_run >= RS_REFUSED_STOP && w->refused_insts >= 2) {
    rs_errf(E->e, NULL, 0,
            "model %s: the server refused %u attempts in a row, of %u instances (last: instance %s, attempt %u: %s); "
            "stopping: %s; then --resume",
            w->specs[s->model], w->refused_run, w->refused_insts, x->l.row.id, d->attempt, g->error,
            rs_refusal_advice(g->error));
    return E->rc = -1;
  }
  while (x->queued < x->sent && x->st[x->queued] == A_GEN) {
    x->st[x->queued] = A_QUEUED;
    rs_vpool_push(E->pool, x, x->queued++);
  }
  return 0;
}

/* The next prompt's feedback: every diagnostic the verifier kept, one per line, and how many
 * violations there were in all when it kept fewer (a model told of one wrong value of seven
 * fixes one). Bounded by the buffer. */
static void feedback_of(const rs_check_result *r, char *out, size_t n) {
  uint32_t total = 0;
  for (int k = 0; k < RS_VK__N; k++) total += r->counts[k];
  size_t u = 0;
  out[0] = 0;
  for (uint32_t i = 0; i < r->ndiag && u + 1 < n; i++) {
    int k = snprintf(out + u, n - u, "%s%s", i ? "\n" : "", r->diag[i]);
    if (k < 0) break;
    u += (size_t)k < n - u ? (size_t)k : n - u - 1;
  }
  if (total > r->ndiag && u + 1 < n)
    snprintf(out + u, n - u, "\n(%u violations in all; the first %u are listed)", total, r->ndiag);
}

/* A candidate's verdict is known (per instance in attempt order). */
static int verified(engine *E, einst *x, uint32_t k) {
  rs_worker_ctx *w = E->w;
  eshard *sh = x->sh;
  const rs_shard *s = sh->s;
  x->verified++;
  E->unverified--;
  if (x->vf_err[0]) {
    rs_errf(E->e, NULL, 0, "instance %s: %s", x->l.row.id, x->vf_err);
    return E->rc = -1;
  }
  rs_gen *g = &x->g[k];
  rs_check_result *r = &x->res[k];
  rs_shard_stats *st = &sh->st;
  fill_row(&x->rows[x->nrows++], &x->l, E->pl->inst[x->pi], (uint16_t)s->model, s->att_first + k, x->seeds[k], g, r,
           w->rank, w->keep);
  st->attempts++;
  st->infra += g->infra;
  st->transient += g->transient;
  st->gen_s += g->infer_s;
  st->verify_s += r->seconds;
  E->lv.attempts++;
  E->lv.completion_tokens += g->completion_tokens;
  E->lv.prompt_tokens += g->prompt_tokens;
  E->lv.gen_s += g->infer_s;
  E->lv.verify_s += r->seconds;
  bool pass = !g->infra && r->verdict == RS_V_PASS;
  if (pass) {
    st->passes++;
    E->lv.passes++;
    if (w->until_pass) x->passed = true;
  } else if (!g->infra && r->ndiag) {
    feedback_of(r, x->feedback, sizeof x->feedback);
  }
  if (s->att_first + k == 0) {
    st->attempt0++;
    st->attempt0_pass += pass;
  }
  bool deferred = g->deferred; /* its answer comes with a later --ingest: the loop stops here */
  rs_gen_clear(g);
  if (w->until_pass && !x->passed && !deferred && x->verified < x->natt) {
    iq_push(&E->ready[s->model], x); /* its next attempt, with this feedback */
    return 0;
  }
  if (x->verified == x->natt || x->passed || (w->until_pass && deferred)) return finish_instance(E, x);
  return 0;
}

/* ---- the loop ------------------------------------------------------------------------------ */

static eshard *shard_with_unstarted(engine *E, uint32_t model) {
  for (uint32_t j = 0; j < E->nsh; j++)
    if (E->sh[j]->s->model == model && E->sh[j]->started < E->sh[j]->s->count) return E->sh[j];
  return NULL;
}

/* May another instance start on model m? A network model: while its window has room beyond the
 * requests of the instances being prepared. A builtin model (generating is this thread's work):
 * one instance prepared on the pool while the block before it is generated. */
static bool may_start(engine *E, uint32_t m, uint32_t natt) {
  rs_model *md = E->w->models[m];
  if (rs_model_is_async(md)) return rs_model_room(md) > E->reserved[m];
  return E->reserved[m] == 0 && rs_model_pending(md) <= natt;
}

static void fill(engine *E) {
  rs_worker_ctx *w = E->w;
  for (uint32_t m = 0; m < w->nmodels && !E->rc; m++) {
    rs_model *md = w->models[m];
    if (!md) continue;
    uint32_t res = rs_model_is_async(md) ? E->reserved[m] : 0;
    while (!E->rc && E->unverified < E->max_unverified) {
      einst *x = rs_model_room(md) > res ? iq_pop(&E->ready[m]) : NULL;
      if (x) {
        submit_next(E, x);
        continue;
      }
      if (w->one_instance && E->live_inst) break;
      eshard *sh = shard_with_unstarted(E, m);
      if (!sh || !may_start(E, m, sh->s->att_end - sh->s->att_first)) break;
      start_instance(E, sh);
      res = rs_model_is_async(md) ? E->reserved[m] : 0;
    }
  }
}

static uint32_t window_sum(engine *E) {
  uint32_t t = 0;
  for (uint32_t m = 0; m < E->w->nmodels; m++)
    if (E->w->models[m]) {
      rs_window wi;
      rs_model_window(E->w->models[m], &wi);
      t += wi.max;
    }
  return t ? t : 1;
}

/* Ask for shards while fewer attempts wait unstarted than two windows' worth (prefetch). */
static void prefetch(engine *E) {
  if (E->exhausted || E->rc) return;
  uint32_t want = 0;
  if (E->w->one_instance) {
    want = E->nsh ? 0 : 1;
  } else if (E->nsh < MAX_SHARDS) {
    uint64_t supply = 0;
    for (uint32_t j = 0; j < E->nsh; j++) {
      const rs_shard *s = E->sh[j]->s;
      supply += (uint64_t)(s->count - E->sh[j]->started) * (E->w->until_pass ? 1 : s->att_end - s->att_first);
    }
    if (supply < 2ull * window_sum(E)) want = MAX_SHARDS - E->nsh < 16 ? MAX_SHARDS - E->nsh : 16;
  }
  if (!want) return;
  int32_t got[32];
  uint32_t ng = 0;
  if (E->io->next(E->io->ctx, want, got, &ng) == RS_NEXT_NONE) E->exhausted = true;
  for (uint32_t i = 0; i < ng; i++) activate(E, got[i]);
}

static void live(engine *E, bool force, double *last) {
  double now = rs_now();
  if (!force && now - *last < 1.0) return;
  *last = now;
  rs_live *lv = &E->lv;
  lv->inflight = lv->window = lv->window_max = lv->cuts = lv->capacity = lv->srv_waiting = 0;
  lv->oldest_s = 0;
  lv->learned[0] = 0;
  lv->window_min = UINT32_MAX;
  for (uint32_t m = 0; m < E->w->nmodels; m++)
    if (E->w->models[m]) {
      rs_window wi;
      rs_model_window(E->w->models[m], &wi);
      lv->inflight += wi.inflight;
      lv->window += wi.now;
      lv->window_max += wi.max;
      lv->cuts += wi.cuts;
      lv->capacity += wi.capacity;
      lv->srv_waiting += wi.srv_waiting;
      if (wi.oldest_s > lv->oldest_s) lv->oldest_s = wi.oldest_s;
      if (!lv->learned[0]) snprintf(lv->learned, sizeof lv->learned, "%s", wi.learned);
      if (wi.min_seen < lv->window_min) lv->window_min = wi.min_seen;
    }
  if (lv->window_min == UINT32_MAX) lv->window_min = 0;
  lv->instances = E->live_inst;
  lv->shards = E->nsh;
  lv->cpu_s = process_cpu();
  lv->main_cpu_s = thread_cpu() - E->sync_cpu_s;
  lv->wall_s = now - E->t0;
  if (E->io->live) E->io->live(E->io->ctx, lv);
}

static uint32_t handle(engine *E, rs_done *buf, int n) {
  for (int i = 0; i < n; i++) arrived(E, &buf[i]);
  return n > 0 ? (uint32_t)n : 0;
}

int rs_engine_run(rs_worker_ctx *w, const rs_plan *pl, const rs_engine_io *io, rs_shard_stats *lost, rs_live *lvout,
                  rs_err *e) {
  engine E;
  memset(&E, 0, sizeof E);
  E.w = w;
  E.pl = pl;
  E.io = io;
  E.e = e;
  E.t0 = rs_now();
  E.pool = rs_vpool_new(w->verify_threads, verify_job, wake_models, w);
  E.max_unverified = 4 * window_sum(&E) + 64; /* bounds memory when verification lags */
  if (lost) memset(lost, 0, sizeof *lost);
  enum { NBUF = 256 };
  rs_done *buf = rs_xcalloc(NBUF, sizeof *buf);
  void *keys[NBUF];
  uint32_t args[NBUF];
  double last_live = E.t0, cpu0 = thread_cpu();
  E.sync_cpu_s = cpu0; /* main-thread CPU from here on, less synchronous generation */
  while (!E.rc) {
    prefetch(&E);
    fill(&E);
    if (E.rc) break;
    uint32_t got = 0;
    rs_model *wait_on = NULL;
    for (uint32_t m = 0; m < w->nmodels && !E.rc; m++) {
      rs_model *md = w->models[m];
      if (!md || !rs_model_pending(md)) continue;
      if (rs_model_is_async(md) && !wait_on) wait_on = md;
      double c0 = rs_model_is_async(md) ? 0 : thread_cpu();
      int n = rs_model_poll(md, 0, buf, NBUF, e);
      if (!rs_model_is_async(md)) E.sync_cpu_s += thread_cpu() - c0;
      if (n < 0) E.rc = -1;
      else got += handle(&E, buf, n);
    }
    uint32_t nv;
    while (!E.rc && (nv = rs_vpool_take(E.pool, keys, args, NBUF)))
      for (uint32_t i = 0; i < nv && !E.rc; i++, got++) {
        if (args[i] == PREPARE) instance_ready(&E, keys[i]);
        else verified(&E, keys[i], args[i]);
      }
    if (E.rc) break;
    if (E.exhausted && !E.nsh) break;
    if (!got) { /* nothing happened: wait for the network, the verifiers or the coordinator */
      if (wait_on) {
        int n = rs_model_poll(wait_on, 0.02, buf, NBUF, e);
        if (n < 0) E.rc = -1;
        else handle(&E, buf, n);
      } else if (rs_vpool_busy(E.pool)) {
        rs_vpool_wait(E.pool, 0.02);
      } else {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
      }
    }
    live(&E, false, &last_live);
  }
  live(&E, true, &last_live);
  if (lvout) *lvout = E.lv;
  if (E.rc) { /* abandon everything in flight: the shards are redone by --resume */
    for (uint32_t m = 0; m < w->nmodels; m++)
      if (w->models[m]) rs_model_cancel(w->models[m]);
  }
  rs_vpool_free(E.pool); /* joins the threads before the instances go */
  while (E.nsh) {
    eshard *sh = E.sh[E.nsh - 1];
    if (lost) {
      lost->attempts += sh->st.attempts;
      lost->transient += sh->st.transient;
      for (uint32_t i = 0; i < sh->s->count; i++) {
        einst *x = sh->in[i];
        for (uint32_t k = x ? x->verified : 0; x && k < x->natt; k++) lost->transient += x->st[k] >= A_GEN && x->g[k].transient;
      }
    }
    shard_drop(&E, E.nsh - 1);
  }
  for (uint32_t m = 0; m < 16; m++) free(E.ready[m].q);
  free(E.sh);
  free(buf);
  return E.rc;
}

/* ---- one shard (rank 0 redoing a corrupt shard) ------------------------------------------- */

typedef struct {
  int32_t idx;
  bool given;
  rs_shard_stats *st;
} one_io;

static int one_next(void *ctx, uint32_t want, int32_t *out, uint32_t *n) {
  one_io *o = ctx;
  (void)want;
  *n = 0;
  if (o->given) return RS_NEXT_NONE;
  o->given = true;
  out[0] = o->idx;
  *n = 1;
  return RS_NEXT_OK;
}

static void one_done(void *ctx, int32_t shard, const rs_shard_stats *st) {
  (void)shard;
  *((one_io *)ctx)->st = *st;
}

int rs_shard_run(rs_worker_ctx *w, const rs_plan *pl, const rs_shard *s, rs_shard_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  one_io o = {(int32_t)(s - pl->shards), false, st};
  rs_engine_io io = {&o, one_next, one_done, NULL};
  return rs_engine_run(w, pl, &io, NULL, NULL, e);
}
