/* export.c - a sweep's attempts as training data (report/export.h): per instance of the split,
 * the distinct passing answers best register count first, the distinct failing ones near misses
 * first (dataflow, hardware, then syntax), each verified again with the native verifier (a
 * verdict that differs from the run's drops the answer), then SFT lines, preference pairs or
 * feedback triples by the rule of docs/reward.md, with provenance. */
#include "report/export.h"
#include "corpus/instance.h"
#include "storage/run.h"
#include "verify/verifier.h"
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

int rs_export_kind(const char *name) {
  return !strcmp(name, "sft") ? RS_EXPORT_SFT : !strcmp(name, "dpo") ? RS_EXPORT_DPO : !strcmp(name, "feedback") ? RS_EXPORT_FEEDBACK : -1;
}

typedef struct {
  rs_attempt a;
  uint64_t row;
} arow;

static int cmp_arow(const void *x, const void *y) {
  const arow *a = x, *b = y;
  if (a->a.inst_index != b->a.inst_index) return a->a.inst_index < b->a.inst_index ? -1 : 1;
  if (a->a.model != b->a.model) return a->a.model < b->a.model ? -1 : 1;
  return a->a.attempt < b->a.attempt ? -1 : a->a.attempt > b->a.attempt;
}

/* One answer of an instance, verified again. */
typedef struct {
  const arow *r;
  rs_check_result res;
  uint32_t regs; /* registers used over the pressure files */
  int order;     /* failing: dataflow 0, hardware 1, syntax 2 */
} ans;

static int cmp_pass(const void *x, const void *y) {
  const ans *a = x, *b = y;
  if (a->regs != b->regs) return a->regs < b->regs ? -1 : 1;
  return cmp_arow(a->r, b->r);
}
static int cmp_fail(const void *x, const void *y) {
  const ans *a = x, *b = y;
  if (a->order != b->order) return a->order < b->order ? -1 : 1;
  return cmp_arow(a->r, b->r);
}

/* Every diagnostic kept, one per line, and the total when fewer were kept: the text a sweep's
 * --feedback puts into the next prompt (worker/engine.c). */
static char *diag_text(const rs_check_result *r) {
  rs_sbuf b = {0};
  uint32_t total = 0;
  for (int k = 0; k < RS_VK__N; k++) total += r->counts[k];
  for (uint32_t i = 0; i < r->ndiag; i++) rs_sbuf_printf(&b, "%s%s", i ? "\n" : "", r->diag[i]);
  if (total > r->ndiag) rs_sbuf_printf(&b, "\n(%u violations in all; the first %u are listed)", total, r->ndiag);
  if (!b.s) rs_sbuf_puts(&b, "");
  return b.s;
}

typedef struct {
  const rs_export_opts *o;
  rs_export_stats *st;
  const char *corpus, *corpus_hash, *holdout;
  cJSON *models; /* the run's model list, or NULL */
} ctx;

static cJSON *prov(const ctx *c, const rs_loaded *l, const ans *x) {
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "run", c->o->run);
  cJSON_AddStringToObject(p, "corpus", c->corpus);
  if (c->corpus_hash) cJSON_AddStringToObject(p, "corpus_hash", c->corpus_hash);
  cJSON_AddStringToObject(p, "instance", l->row.id);
  cJSON_AddStringToObject(p, "split", c->o->split == RS_SPLIT_TEST ? "test" : "train");
  if (c->holdout) cJSON_AddStringToObject(p, "holdout_arch", c->holdout);
  const cJSON *m = c->models ? cJSON_GetArrayItem(c->models, x->r->a.model) : NULL;
  if (cJSON_IsString(m)) cJSON_AddStringToObject(p, "model", m->valuestring);
  else cJSON_AddNumberToObject(p, "model", x->r->a.model);
  cJSON_AddNumberToObject(p, "attempt", x->r->a.attempt);
  char seed[20];
  snprintf(seed, sizeof seed, "%016llx", (unsigned long long)x->r->a.seed);
  cJSON_AddStringToObject(p, "seed", seed);
  cJSON_AddNumberToObject(p, "row", (double)x->r->row);
  return p;
}

static cJSON *regs_json(const rs_loaded *l, const rs_check_result *r) {
  cJSON *o = cJSON_CreateObject();
  const rs_target *t = l->p->tgt;
  for (uint32_t f = 0; f < t->nfiles && f < RS_CORPUS_NFILES; f++)
    if (t->files[f].pressure) {
      cJSON *rf = cJSON_AddObjectToObject(o, t->files[f].name);
      cJSON_AddNumberToObject(rf, "used", r->used[f]);
      cJSON_AddNumberToObject(rf, "compiler", l->row.ref_regs[f]);
    }
  return o;
}

static void emit(const ctx *c, cJSON *line) {
  char *s = cJSON_PrintUnformatted(line);
  fprintf(c->o->out, "%s\n", s);
  c->st->bytes += strlen(s) + 1;
  c->st->lines++;
  cJSON_free(s);
  cJSON_Delete(line);
}

static cJSON *base(const rs_loaded *l) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "prompt", l->row.norm ? l->row.norm : "");
  cJSON_AddStringToObject(o, "instance", l->row.id);
  cJSON_AddStringToObject(o, "target", l->row.target);
  return o;
}

/* The attempts rows [a, b) of one instance. */
static void one_instance(const ctx *c, const rs_loaded *l, const arow *rows, uint32_t n) {
  const rs_export_opts *o = c->o;
  rs_export_stats *st = c->st;
  ans *pass = rs_xcalloc(n, sizeof *pass), *fail = rs_xcalloc(n, sizeof *fail);
  uint32_t np = 0, nf = 0;
  uint64_t *seen = rs_xcalloc(n, sizeof *seen);
  uint32_t nseen = 0;
  rs_verifier vf;
  rs_err e = {{0}};
  if (rs_verifier_open(&vf, RS_VERIFIER_NATIVE, l->p, 0, &e)) goto done;
  for (uint32_t i = 0; i < n; i++) {
    const rs_attempt *a = &rows[i].a;
    if (a->verdict > RS_V_HARDWARE) continue; /* timeout, infra: no model answer to learn from */
    if (!a->candidate) {
      st->no_text++;
      continue;
    }
    uint64_t h = rs_hash_bytes(a->candidate, strlen(a->candidate), a->verdict);
    bool dup = false;
    for (uint32_t k = 0; k < nseen && !dup; k++) dup = seen[k] == h;
    if (dup) continue; /* the same answer twice teaches nothing new */
    seen[nseen++] = h;
    ans x = {&rows[i], {0}, 0, 0};
    rs_candidate cand;
    rs_verify_text(&vf, &l->names, a->candidate, strlen(a->candidate), &cand, &x.res, NULL);
    rs_candidate_free(&cand);
    if ((int)x.res.verdict != a->verdict) {
      st->mismatch++;
      continue;
    }
    const rs_target *t = l->p->tgt;
    for (uint32_t f = 0; f < t->nfiles && f < RS_MAX_FILES; f++)
      if (t->files[f].pressure) x.regs += x.res.used[f];
    x.order = a->verdict == RS_V_DATAFLOW ? 0 : a->verdict == RS_V_HARDWARE ? 1 : 2;
    if (a->verdict == RS_V_PASS) pass[np++] = x;
    else fail[nf++] = x;
  }
  rs_verifier_close(&vf);
  qsort(pass, np, sizeof *pass, cmp_pass);
  qsort(fail, nf, sizeof *fail, cmp_fail);
  if (!np) {
    st->no_pass++;
    goto done;
  }
  if (o->kind == RS_EXPORT_SFT) {
    for (uint32_t k = 0; k < np && k < o->per_prompt; k++) {
      cJSON *line = base(l);
      cJSON_AddStringToObject(line, "completion", pass[k].r->a.candidate);
      cJSON_AddNumberToObject(line, "rank", k);
      cJSON_AddItemToObject(line, "registers", regs_json(l, &pass[k].res));
      cJSON_AddItemToObject(line, "provenance", prov(c, l, &pass[k]));
      emit(c, line);
    }
  } else {
    /* pair j: the j-th failing answer (near misses first) with the j-th best passing answer,
     * the passing ones taken again from the best when there are fewer of them */
    for (uint32_t j = 0; j < nf && j < o->per_prompt; j++) {
      const ans *ok = &pass[j % np], *bad = &fail[j];
      cJSON *line = base(l);
      char *dt = diag_text(&bad->res);
      if (o->kind == RS_EXPORT_DPO) {
        cJSON_AddStringToObject(line, "chosen", ok->r->a.candidate);
        cJSON_AddStringToObject(line, "rejected", bad->r->a.candidate);
        cJSON_AddStringToObject(line, "rejected_category", rs_verdict_str(bad->res.verdict));
        cJSON_AddStringToObject(line, "rejected_diagnostics", dt);
      } else {
        cJSON_AddStringToObject(line, "failed", bad->r->a.candidate);
        cJSON_AddStringToObject(line, "category", rs_verdict_str(bad->res.verdict));
        cJSON_AddStringToObject(line, "diagnostics", dt);
        cJSON_AddStringToObject(line, "passing", ok->r->a.candidate);
      }
      free(dt);
      cJSON_AddItemToObject(line, o->kind == RS_EXPORT_DPO ? "chosen_registers" : "passing_registers", regs_json(l, &ok->res));
      cJSON *pv = cJSON_AddObjectToObject(line, "provenance");
      cJSON_AddItemToObject(pv, o->kind == RS_EXPORT_DPO ? "chosen" : "passing", prov(c, l, ok));
      cJSON_AddItemToObject(pv, o->kind == RS_EXPORT_DPO ? "rejected" : "failed", prov(c, l, bad));
      emit(c, line);
    }
  }
done:
  free(pass);
  free(fail);
  free(seen);
}

int rs_export_attempts(const rs_export_opts *o, rs_export_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  rs_runfile *f = rs_runfile_open(o->run, e);
  if (!f) return -1;
  char *corpus_attr = rs_runfile_get_attr(f, "corpus"), *cfg = rs_runfile_get_attr(f, "config"),
       *models = rs_runfile_get_attr(f, "models");
  cJSON *cj = cfg ? cJSON_Parse(cfg) : NULL;
  const cJSON *ho = cj ? cJSON_GetObjectItemCaseSensitive(cj, "holdout_arch") : NULL;
  ctx c = {o, st, o->corpus ? o->corpus : corpus_attr, NULL,
           o->holdout ? o->holdout : cJSON_IsString(ho) && ho->valuestring[0] ? ho->valuestring : NULL,
           models ? cJSON_Parse(models) : NULL};
  int rc = 0;
  uint64_t n = rs_runfile_count(f);
  arow *rows = rs_xcalloc(n ? n : 1, sizeof *rows);
  uint64_t got = 0;
  rs_corpus *cp = NULL;
  if (!c.corpus || !c.corpus[0]) {
    rc = rs_errf(e, o->run, 0, "the run names no corpus: give --corpus");
    goto out;
  }
  for (; got < n; got++) {
    if (rs_runfile_get(f, got, &rows[got].a, 1, e)) {
      rc = -1;
      goto out;
    }
    rows[got].row = got;
  }
  st->attempts = (uint32_t)n;
  qsort(rows, n, sizeof *rows, cmp_arow);
  cp = rs_corpus_open(c.corpus, e);
  if (!cp) {
    rc = -1;
    goto out;
  }
  c.corpus_hash = rs_file_hash(c.corpus);
  for (uint64_t i = 0; i < n;) {
    uint64_t j = i;
    while (j < n && rows[j].a.inst_index == rows[i].a.inst_index) j++;
    uint32_t idx = rows[i].a.inst_index;
    rs_instance row;
    if (idx >= rs_corpus_count(cp) || rs_corpus_get(cp, idx, &row, 0, e)) {
      rc = rs_errf(e, o->run, 0, "attempt row %llu: instance %s (corpus row %u) is not in %s",
                   (unsigned long long)rows[i].row, rows[i].a.instance, idx, c.corpus);
      goto out;
    }
    bool same = !strcmp(row.id, rows[i].a.instance);
    bool take = (int)rs_instance_split(&row, c.holdout) == o->split;
    if (!same)
      rc = rs_errf(e, o->run, 0, "corpus row %u of %s is %s, the run says %s: not the run's corpus (give --corpus)", idx,
                   c.corpus, row.id, rows[i].a.instance);
    rs_instance_clear(&row);
    if (rc) goto out;
    st->instances++;
    if (!take) {
      st->other_split++; /* never a test instance in a training file (nor the reverse) */
    } else {
      rs_loaded l;
      if (rs_instance_load(cp, idx, &l, e)) {
        rc = -1;
        goto out;
      }
      one_instance(&c, &l, rows + i, (uint32_t)(j - i));
      rs_loaded_free(&l);
    }
    i = j;
  }
out:
  for (uint64_t i = 0; i < got; i++) rs_attempt_clear(&rows[i].a);
  free(rows);
  if (cp) rs_corpus_close(cp, NULL);
  rs_runfile_close(f, NULL);
  cJSON_Delete(cj);
  cJSON_Delete(c.models);
  free((char *)c.corpus_hash);
  free(corpus_attr);
  free(cfg);
  free(models);
  return rc;
}
