/* shard_run.c - generate, verify, record. */
#include "worker/shard_run.h"
#include "corpus/instance.h"
#include "verify/verifier.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void rs_shard_path(const char *run_dir, const rs_shard *s, char *buf, size_t n) {
  snprintf(buf, n, "%s/shards/%s.h5", run_dir, s->name);
}

int rs_shard_check(const char *path, uint32_t *transient, rs_err *e) {
  *transient = 0;
  if (access(path, F_OK) != 0) return RS_SHARD_MISSING;
  if (access(path, R_OK) != 0) {
    rs_errf(e, path, 0, "shard file is not readable: %s", strerror(errno));
    return RS_SHARD_UNREADABLE;
  }
  rs_runfile *f = rs_runfile_open(path, e);
  if (!f) return RS_SHARD_BAD;
  char *complete = rs_runfile_get_attr(f, "complete"), *rows = rs_runfile_get_attr(f, "rows");
  char *tr = rs_runfile_get_attr(f, "transient");
  int st = RS_SHARD_OK;
  if (!complete || strcmp(complete, "1")) st = RS_SHARD_BAD, rs_errf(e, path, 0, "shard was not finished");
  else if (!rows || strtoull(rows, NULL, 10) != rs_runfile_count(f))
    st = RS_SHARD_BAD, rs_errf(e, path, 0, "shard has %llu rows, says %s", (unsigned long long)rs_runfile_count(f),
                              rows ? rows : "none");
  /* reading every row proves the compressed chunks are intact (a flipped byte fails its checksum) */
  for (uint64_t i = 0; st == RS_SHARD_OK && i < rs_runfile_count(f); i++) {
    rs_attempt a;
    if (rs_runfile_get(f, i, &a, 1, e)) st = RS_SHARD_BAD;
    else rs_attempt_clear(&a);
  }
  if (st == RS_SHARD_OK && tr && (*transient = (uint32_t)strtoul(tr, NULL, 10))) st = RS_SHARD_RETRY;
  free(complete);
  free(rows);
  free(tr);
  rs_err ce;
  rs_runfile_close(f, &ce);
  return st;
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

/* Verification as candidates arrive (inference of the others continues meanwhile). */
typedef struct {
  rs_verifier *vf;
  const rs_loaded *l;
  rs_check_result *res; /* per attempt of the block */
  uint32_t base;        /* index of the generate call's first candidate in res */
  rs_shard_stats *st;
} vctx;

static void verify_ready(void *ctx, uint32_t k, rs_gen *g) {
  vctx *v = ctx;
  rs_check_result *r = &v->res[v->base + k], z;
  rs_result_init(r);
  if (g->infra) return;
  rs_candidate c;
  const char *txt = g->text ? g->text : "";
  double tv = rs_now();
  if (!rs_verify_text(v->vf, &v->l->names, txt, strlen(txt), &c, r, &z)) v->st->disagreements++;
  r->seconds = rs_now() - tv;
  v->st->verify_s += r->seconds;
  rs_candidate_free(&c);
}

int rs_shard_run(rs_worker_ctx *w, const rs_plan *pl, const rs_shard *s, rs_shard_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  double t0 = rs_now();
  char path[1200], tmp[1300];
  rs_shard_path(w->run_dir, s, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
  rs_runfile *out = rs_runfile_create(tmp, e);
  if (!out) {
    unlink(tmp); /* a create that failed halfway (disk full) may leave a stub */
    return -1;
  }
  rs_model *m = w->models[s->model];
  const char *spec = w->specs[s->model];
  uint32_t natt = s->att_end - s->att_first, rows = 0;
  rs_gen *g = rs_xcalloc(natt + 1, sizeof *g);
  rs_check_result *res = rs_xcalloc(natt + 1, sizeof *res);
  uint64_t *seeds = rs_xcalloc(natt + 1, sizeof *seeds);
  int rc = 0;
  for (uint32_t i = s->first; i < s->first + s->count && !rc; i++) {
    rs_loaded l;
    if ((rc = rs_instance_load(w->corpus, pl->inst[i], &l, e))) break;
    rs_verifier vf;
    if ((rc = rs_verifier_open(&vf, w->verifier, l.p, w->z3_timeout_ms, e))) {
      rs_loaded_free(&l);
      break;
    }
    const char **vn = rs_value_names(l.p, &l.names);
    vctx vc = {&vf, &l, res, 0, st};
    rs_gen_input in = {l.row.id, l.row.target, l.p, l.row.norm, &l.names, vn, l.row.truth, NULL, verify_ready, &vc};
    char feedback[1200] = "";
    for (uint32_t k = 0; k < natt; k++) seeds[k] = rs_attempt_seed(w->seed, l.row.id, spec, s->att_first + k);
    /* whole block at once (requests in flight together), or one at a time until a pass */
    uint32_t step = w->until_pass ? 1 : natt;
    bool passed = false;
    for (uint32_t k = 0; k < natt && !passed && !rc; k += step) {
      uint32_t cnt = k + step <= natt ? step : natt - k;
      in.feedback = w->feedback && feedback[0] ? feedback : NULL;
      vc.base = k;
      rs_failpoint_hit(&w->fault, w->rank, RS_FP_GENERATE);
      double tg = rs_now(), v0 = st->verify_s;
      if (rs_model_generate(m, &in, s->att_first + k, cnt, seeds + k, g + k, e)) {
        rc = -1;
        break;
      }
      /* verification ran inside the call, overlapped with inference: count it once */
      st->gen_s += rs_now() - tg - (st->verify_s - v0);
      for (uint32_t q = k; q < k + cnt && !rc; q++) {
        rs_check_result r = res[q];
        rs_attempt a;
        fill_row(&a, &l, pl->inst[i], (uint16_t)s->model, s->att_first + q, seeds[q], &g[q], &r, w->rank, w->keep);
        rc = rs_runfile_append(out, &a, e);
        rs_attempt_clear(&a);
        rows++;
        rs_failpoint_hit(&w->fault, w->rank, RS_FP_APPEND);
        st->attempts++;
        st->infra += g[q].infra;
        st->transient += g[q].transient;
        w->transient_run = g[q].transient ? w->transient_run + 1 : 0;
        /* a server that is down would turn the rest of the sweep into infra rows: stop instead */
        if (!rc && w->max_transient && w->transient_run >= w->max_transient)
          rc = rs_errf(e, NULL, 0,
                       "model %s: %u attempts in a row got no answer (last: instance %s, attempt %u: %s); "
                       "stopping: bring the server back, then --resume",
                       spec, w->transient_run, l.row.id, s->att_first + q, g[q].error);
        if (!g[q].infra && r.verdict == RS_V_PASS) {
          st->passes++;
          if (w->until_pass) passed = true;
        } else if (!g[q].infra && r.ndiag) {
          snprintf(feedback, sizeof feedback, "%s", r.diag[0]);
        }
        if (s->att_first + q == 0) {
          st->attempt0++;
          st->attempt0_pass += !g[q].infra && r.verdict == RS_V_PASS;
        }
        rs_gen_clear(&g[q]);
      }
    }
    for (uint32_t q = 0; q < natt; q++) rs_gen_clear(&g[q]);
    free(vn);
    rs_verifier_close(&vf);
    rs_loaded_free(&l);
  }
  free(g);
  free(res);
  free(seeds);
  char val[32];
  snprintf(val, sizeof val, "%u", rows);
  if (!rc) rc = rs_runfile_set_attr(out, "rows", val, e);
  if (!rc) rc = rs_runfile_set_attr(out, "shard", s->name, e);
  if (!rc) rc = rs_runfile_set_attr(out, "model", spec, e);
  snprintf(val, sizeof val, "%u", st->transient);
  if (!rc) rc = rs_runfile_set_attr(out, "transient", val, e);
  if (!rc) rc = rs_runfile_set_attr(out, "complete", "1", e);
  rs_err ce;
  int crc = rs_runfile_close(out, rc ? &ce : e);
  if (!rc && crc) rc = -1;
  if (!rc && rename(tmp, path)) rc = rs_errf(e, path, 0, "cannot rename the finished shard into place");
  if (rc) unlink(tmp);
  if (!rc) rs_failpoint_hit(&w->fault, w->rank, RS_FP_RENAMED);
  st->wall_s = rs_now() - t0;
  st->other_s = st->wall_s - st->gen_s - st->verify_s;
  return rc;
}
