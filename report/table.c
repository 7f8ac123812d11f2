/* table.c - per-group tables from attempt rows: load (aggregate per (instance, model) first, so
 * memory grows with pairs, not rows, except 12 bytes a row for latency quantiles), group,
 * compute, print. The sweep's end summary and `regsweep report` both come through here. */
#include "report/table.h"
#include "report/passk.h"
#include "storage/corpus.h"
#include "target/target.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const uint32_t rs_table_ks[RS_NK] = {1, 5, 10, 20, 50, 100};

static void split_id(const char *id, rs_outcome *o) {
  /* family/variant/target/form */
  char buf[160];
  snprintf(buf, sizeof buf, "%s", id);
  char *parts[4] = {0}, *save = NULL;
  int n = 0;
  for (char *t = strtok_r(buf, "/", &save); t && n < 4; t = strtok_r(NULL, "/", &save)) parts[n++] = t;
  snprintf(o->family, sizeof o->family, "%s", n > 0 ? parts[0] : "?");
  snprintf(o->target, sizeof o->target, "%s", n > 2 ? parts[2] : "?");
  snprintf(o->form, sizeof o->form, "%s", n > 3 ? parts[3] : "?");
}

const char *rs_results_model(const rs_results *r, uint32_t m) {
  if (r->nvar) return m < r->nvar ? r->var[m].name : "?";
  return m < r->nmodels && r->models ? r->models[m] : "?";
}
uint32_t rs_results_samples(const rs_results *r, uint32_t m) {
  return r->nvar && m < r->nvar ? r->var[m].samples : r->samples;
}
bool rs_results_until(const rs_results *r, uint32_t m) {
  return r->nvar && m < r->nvar ? r->var[m].until_pass : r->until_pass;
}

/* Per-instance corpus facts, indexed by corpus row (read once, without texts). */
typedef struct {
  uint32_t ref[RS_RUN_NFILES], maxp[RS_RUN_NFILES], occ;
  uint8_t infeasible, split, inferred;
} corpus_fact;

static corpus_fact *read_corpus(rs_runfile *f, uint64_t *nrows) {
  *nrows = 0;
  char *path = rs_runfile_get_attr(f, "corpus");
  if (!path || !*path) {
    free(path);
    return NULL;
  }
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(path, &e);
  free(path);
  if (!c) return NULL; /* the report still works, without register quality */
  uint64_t n = rs_corpus_count(c);
  corpus_fact *cf = rs_xcalloc(n ? n : 1, sizeof *cf);
  for (uint64_t i = 0; i < n; i++) {
    rs_instance in;
    if (rs_corpus_get(c, i, &in, 0, &e)) {
      free(cf);
      cf = NULL;
      n = 0;
      break;
    }
    for (int k = 0; k < RS_RUN_NFILES; k++) cf[i].ref[k] = in.ref_regs[k], cf[i].maxp[k] = in.maxp[k];
    cf[i].infeasible = in.infeasible;
    cf[i].split = in.split;
    cf[i].inferred = strstr(in.params, "inferred_forms=") != NULL;
    const rs_target *t = rs_target_by_name(in.target);
    unsigned used[RS_CORPUS_NFILES];
    for (int k = 0; k < RS_CORPUS_NFILES; k++) used[k] = in.ref_regs[k];
    cf[i].occ = t && t->occupancy ? t->occupancy(t, used) : 0;
    rs_instance_clear(&in);
  }
  rs_corpus_close(c, &e);
  *nrows = n;
  return cf;
}

static uint32_t slot(uint64_t k, uint32_t cap) { return (uint32_t)(k * 0x9e3779b97f4a7c15ull >> 40) & (cap - 1); }

/* Registers of the files that bound occupancy (VGPR + AGPR on AMD, R on NVIDIA): the quality
 * figure; a target's first file (SGPRs on AMD) would say little. */
uint32_t rs_occ_regs(const char *target, const uint32_t *v) {
  const rs_target *t = rs_target_by_name(target);
  if (!t) return v[0];
  uint32_t n = 0;
  for (uint32_t f = 0; f < t->nfiles && f < RS_RUN_NFILES; f++)
    if (t->files[f].count >= 255) n += v[f];
  return n;
}

int rs_results_load(rs_results *r, rs_runfile *f, rs_err *e) {
  uint64_t ncf = 0;
  corpus_fact *cf = r->no_corpus ? NULL : read_corpus(f, &ncf);
  /* (instance row, model) -> outcome index, through a hash local to this run */
  uint32_t cap = 1024, used = 0;
  uint64_t rows = rs_runfile_count(f);
  while (cap < rows / 2 + 64) cap *= 2;
  uint64_t *keys = rs_xcalloc(cap, sizeof *keys);
  uint32_t *vals = rs_xcalloc(cap, sizeof *vals);
  int rc = 0;
  for (uint64_t i = 0; i < rows; i++) {
    rs_attempt a;
    if (rs_runfile_get(f, i, &a, 0, e)) {
      rc = -1;
      break;
    }
    uint64_t k = ((uint64_t)a.inst_index << 16 | a.model) + 1;
    uint32_t j = slot(k, cap);
    while (keys[j] && keys[j] != k) j = (j + 1) & (cap - 1);
    if (!keys[j]) {
      if (used * 2 >= cap) { /* grow: rehash */
        uint32_t nc = cap * 2;
        uint64_t *nk = rs_xcalloc(nc, sizeof *nk);
        uint32_t *nv = rs_xcalloc(nc, sizeof *nv);
        for (uint32_t q = 0; q < cap; q++)
          if (keys[q]) {
            uint32_t t = slot(keys[q], nc);
            while (nk[t]) t = (t + 1) & (nc - 1);
            nk[t] = keys[q];
            nv[t] = vals[q];
          }
        free(keys);
        free(vals);
        keys = nk;
        vals = nv;
        cap = nc;
        j = slot(k, cap);
        while (keys[j]) j = (j + 1) & (cap - 1);
      }
      rs_outcome o;
      memset(&o, 0, sizeof o);
      split_id(a.instance, &o);
      o.id_hash = rs_hash_bytes(a.instance, strnlen(a.instance, sizeof a.instance), 0);
      o.inst_index = a.inst_index;
      o.model = (uint16_t)(a.model + r->model_base);
      o.first_pass = -1;
      o.first_infra = -1;
      o.greedy = -1;
      o.split = 255;
      for (int q = 0; q < RS_RUN_NFILES; q++) o.best_used[q] = UINT32_MAX;
      if (cf && a.inst_index < ncf) {
        const corpus_fact *c = &cf[a.inst_index];
        o.has_ref = 1;
        o.infeasible = c->infeasible;
        o.split = c->split;
        o.inferred = c->inferred;
        o.ref_occ = c->occ;
        memcpy(o.ref_regs, c->ref, sizeof o.ref_regs);
        memcpy(o.maxp, c->maxp, sizeof o.maxp);
      }
      RS_PUSH(r->o, r->n, r->cap, o);
      keys[j] = k;
      vals[j] = r->n - 1;
      used++;
    }
    rs_outcome *o = &r->o[vals[j]];
    if (a.verdict == 5 /* RS_V_INFRA */) {
      o->infra++;
      if (o->first_infra < 0 || (int32_t)a.attempt < o->first_infra) o->first_infra = (int32_t)a.attempt;
    } else {
      o->n++;
      if (a.verdict == 0) {
        o->c++;
        if (o->first_pass < 0 || (int32_t)a.attempt < o->first_pass) o->first_pass = (int32_t)a.attempt;
        /* best = fewest registers in the occupancy-bounding files, then best occupancy */
        uint32_t mine = rs_occ_regs(o->target, a.used), best = o->best_used[0] == UINT32_MAX ? UINT32_MAX : rs_occ_regs(o->target, o->best_used);
        if (mine < best || (mine == best && a.occupancy > o->best_occ)) {
          memcpy(o->best_used, a.used, sizeof o->best_used);
          o->best_occ = a.occupancy;
        }
      } else if (a.verdict < 6) {
        o->fails[a.verdict]++;
      }
      if (a.attempt == 0) o->greedy = a.verdict == 0;
      if (r->nlat == r->latcap) {
        r->latcap = r->latcap ? r->latcap * 2 : 4096;
        r->lat = rs_xrealloc(r->lat, sizeof *r->lat * 2 * r->latcap);
        r->lat_o = rs_xrealloc(r->lat_o, sizeof *r->lat_o * r->latcap);
      }
      r->lat[2 * r->nlat] = (float)a.infer_s;
      r->lat[2 * r->nlat + 1] = (float)a.verify_s;
      r->lat_o[r->nlat++] = vals[j];
    }
    rs_attempt_clear(&a);
  }
  free(keys);
  free(vals);
  free(cf);
  return rc;
}

int rs_results_load_run(rs_results *r, rs_runfile *f, const char *label, rs_err *e) {
  char *cfg = rs_runfile_get_attr(f, "config");
  cJSON *c = cfg ? cJSON_Parse(cfg) : NULL;
  free(cfg);
  if (!c) return rs_errf(e, NULL, 0, "run file has no readable config attribute");
  const cJSON *models = cJSON_GetObjectItemCaseSensitive(c, "models");
  const cJSON *samples = cJSON_GetObjectItemCaseSensitive(c, "samples");
  bool until = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "until_pass"));
  if (!cJSON_IsArray(models) || !cJSON_IsNumber(samples)) {
    cJSON_Delete(c);
    return rs_errf(e, NULL, 0, "run config lacks models or samples");
  }
  r->model_base = (uint16_t)r->nvar;
  const cJSON *m;
  cJSON_ArrayForEach(m, models) {
    const char *s = cJSON_IsString(m) ? m->valuestring : "?";
    size_t len = strlen(s) + (label ? strlen(label) + 1 : 0) + 1;
    rs_variant v = {rs_xmalloc(len), (uint32_t)samples->valuedouble, until};
    if (label) snprintf(v.name, len, "%s:%s", label, s);
    else snprintf(v.name, len, "%s", s);
    RS_PUSH(r->var, r->nvar, r->varcap, v);
  }
  cJSON_Delete(c);
  int rc = rs_results_load(r, f, e);
  r->model_base = 0;
  return rc;
}

void rs_results_free(rs_results *r) {
  for (uint32_t i = 0; i < r->nvar; i++) free(r->var[i].name);
  free(r->var);
  free(r->o);
  free(r->lat);
  free(r->lat_o);
  memset(r, 0, sizeof *r);
}

/* ---- grouping ---- */

static const char *const by_names[] = {"family", "target", "form", "model", "split"};

int rs_by_parse(const char *s) {
  int mask = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int hit = -1;
    for (int i = 0; i < 5; i++)
      if (!strcmp(t, by_names[i])) hit = i;
    if (hit < 0) return -1;
    mask |= 1 << hit;
  }
  return mask;
}

static const char *split_str(uint8_t s) { return s == 0 ? "train" : s == 1 ? "test" : "?"; }

const char *rs_group_label(const rs_outcome *o, unsigned by, const rs_results *r, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = 0;
  const char *v[5] = {o->family, o->target, o->form, rs_results_model(r, o->model), split_str(o->split)};
  for (int i = 0; i < 5; i++)
    if (by & (1u << i)) len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s", len ? "/" : "", v[i]);
  if (!len) snprintf(buf, n, "all");
  return buf;
}

int rs_group_cmp(const rs_outcome *a, const rs_outcome *b, unsigned by) {
  int d;
  if ((by & RS_BY_FAMILY) && (d = strcmp(a->family, b->family))) return d;
  if ((by & RS_BY_TARGET) && (d = strcmp(a->target, b->target))) return d;
  if ((by & RS_BY_FORM) && (d = strcmp(a->form, b->form))) return d;
  if ((by & RS_BY_SPLIT) && a->split != b->split) return a->split < b->split ? -1 : 1;
  if ((by & RS_BY_MODEL) && a->model != b->model) return a->model < b->model ? -1 : 1;
  return 0;
}

/* qsort has no context argument: sort (key mask, outcome) pairs through a wrapper array. */
typedef struct {
  const rs_outcome *o;
  unsigned by;
} sort_item;
static int sort_cmp(const void *x, const void *y) {
  const sort_item *a = x, *b = y;
  int d = rs_group_cmp(a->o, b->o, a->by);
  if (d) return d;
  if (a->o->id_hash != b->o->id_hash) return a->o->id_hash < b->o->id_hash ? -1 : 1;
  return a->o->model < b->o->model ? -1 : a->o->model > b->o->model;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static rs_latstat latstat(double *v, uint64_t n) {
  rs_latstat s = {0, 0, 0, 0, 0, n};
  if (!n) return s;
  qsort(v, n, sizeof *v, cmpd);
  double sum = 0;
  for (uint64_t i = 0; i < n; i++) sum += v[i];
  s.mean = sum / n;
  s.p50 = rs_quantile_sorted(v, (uint32_t)n, 50);
  s.p95 = rs_quantile_sorted(v, (uint32_t)n, 95);
  s.p99 = rs_quantile_sorted(v, (uint32_t)n, 99);
  s.max = v[n - 1];
  return s;
}

/* The numbers of one group: outcomes o[0..n). */
static void group_stats(const rs_results *r, const rs_outcome *o, uint32_t n, uint64_t seed, rs_group *g) {
  memset(g, 0, sizeof *g);
  g->key = o;
  g->samples = UINT32_MAX;
  g->inst = n;
  /* columns per feasible instance: greedy, pk[0..5], solved, anyk[0..5] */
  enum { NC = 2 * RS_NK + 2, ANY = RS_NK + 2 };
  double *m = rs_xmalloc(sizeof *m * NC * (n ? n : 1));
  double sumatt = 0, dref = 0, dlb = 0, docc = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t s = rs_results_samples(r, o[i].model);
    if (s < g->samples) g->samples = s;
    if (rs_results_until(r, o[i].model)) g->until_pass = true;
  }
  for (uint32_t i = 0; i < n; i++) {
    const rs_outcome *x = &o[i];
    g->infra += x->infra;
    g->nattempts += x->n;
    for (int v = 1; v < 5; v++) g->fails[v] += x->fails[v], g->nfail += x->fails[v];
    if (x->has_ref && x->infeasible) continue; /* no allocation exists: not in the rates */
    double *row = m + (size_t)NC * g->feasible++;
    row[0] = x->greedy >= 0 ? x->greedy : NAN;
    bool until = rs_results_until(r, x->model);
    for (int k = 0; k < RS_NK; k++) {
      uint32_t kk = rs_table_ks[k];
      if (kk > g->samples) row[1 + k] = NAN;
      else if (until) row[1 + k] = x->first_pass >= 0 && (uint32_t)x->first_pass < kk;
      else {
        double v = rs_passk(x->n, x->c, kk);
        row[1 + k] = v >= 0 ? v : NAN; /* fewer verified attempts than k (infra): undefined */
      }
    }
    row[RS_NK + 1] = x->first_pass >= 0;
    for (int k = 0; k < RS_NK; k++) { /* observed; unknown where no pass and some of the k unanswered */
      uint32_t kk = rs_table_ks[k];
      bool hit = x->first_pass >= 0 && (uint32_t)x->first_pass < kk;
      bool gap = x->first_infra >= 0 && (uint32_t)x->first_infra < kk;
      row[ANY + k] = kk > g->samples || (!hit && gap) ? NAN : hit;
    }
    if (x->first_pass >= 0) {
      g->nsolved++;
      sumatt += x->first_pass + 1;
      if ((uint32_t)x->first_pass + 1 > g->maxatt) g->maxatt = (uint32_t)x->first_pass + 1;
      if (x->has_ref && x->best_used[0] != UINT32_MAX) {
        g->qn++;
        uint32_t ours = rs_occ_regs(x->target, x->best_used), ref = rs_occ_regs(x->target, x->ref_regs);
        dref += (double)ours - ref;
        dlb += (double)ours - rs_occ_regs(x->target, x->maxp);
        docc += (double)x->best_occ - x->ref_occ;
        g->q_le_ref += ours <= ref;
        g->q_occ_gain += x->best_occ > x->ref_occ;
        g->q_occ_loss += x->best_occ < x->ref_occ;
      }
    }
  }
  if (g->samples == UINT32_MAX) g->samples = 0;
  rs_ci ci[NC];
  rs_boot_means(m, g->feasible, NC, RS_BOOT_RESAMPLES, seed, ci);
  g->greedy = ci[0];
  for (int k = 0; k < RS_NK; k++) g->pk[k] = ci[1 + k];
  g->solved = ci[RS_NK + 1];
  for (int k = 0; k < RS_NK; k++) g->anyk[k] = ci[ANY + k];
  g->avgatt = g->nsolved ? sumatt / g->nsolved : 0;
  if (g->qn) g->q_dref = dref / g->qn, g->q_dlb = dlb / g->qn, g->q_docc = docc / g->qn;
  free(m);
}

void rs_results_sort(rs_results *r, unsigned by) {
  /* sort outcomes by group key, remembering where each went for the latency rows */
  sort_item *it = rs_xmalloc(sizeof *it * (r->n ? r->n : 1));
  for (uint32_t i = 0; i < r->n; i++) it[i] = (sort_item){&r->o[i], by};
  qsort(it, r->n, sizeof *it, sort_cmp);
  uint32_t *newpos = rs_xmalloc(sizeof *newpos * (r->n ? r->n : 1));
  rs_outcome *sorted = rs_xmalloc(sizeof *sorted * (r->n ? r->n : 1));
  for (uint32_t i = 0; i < r->n; i++) {
    newpos[it[i].o - r->o] = i;
    sorted[i] = *it[i].o;
  }
  free(it);
  memcpy(r->o, sorted, sizeof *sorted * r->n);
  free(sorted);
  for (uint64_t i = 0; i < r->nlat; i++) r->lat_o[i] = newpos[r->lat_o[i]];
  free(newpos);
}

uint32_t rs_results_group(rs_results *r, unsigned by, uint64_t seed, rs_group **out) {
  rs_results_sort(r, by);
  uint32_t *newpos = rs_xmalloc(sizeof *newpos * (r->n ? r->n : 1));
  /* group boundaries; gid per outcome */
  rs_group *g = NULL;
  uint32_t ng = 0, gcap = 0;
  for (uint32_t i = 0; i < r->n;) {
    uint32_t j = i + 1;
    while (j < r->n && !rs_group_cmp(&r->o[i], &r->o[j], by)) j++;
    rs_group x;
    /* seed per group from its position so groups do not share resamples */
    group_stats(r, r->o + i, j - i, seed + 0x1000193ull * ng, &x);
    for (uint32_t q = i; q < j; q++) newpos[q] = ng;
    RS_PUSH(g, ng, gcap, x);
    i = j;
  }
  /* latency quantiles: counting sort of the rows by group, one file of values at a time */
  uint64_t *off = rs_xcalloc((size_t)ng + 1, sizeof *off);
  for (uint64_t i = 0; i < r->nlat; i++) off[newpos[r->lat_o[i]] + 1]++;
  for (uint32_t q = 0; q < ng; q++) off[q + 1] += off[q];
  double *vals = rs_xmalloc(sizeof *vals * (r->nlat ? r->nlat : 1));
  uint64_t *fill = rs_xmalloc(sizeof *fill * (ng ? ng : 1));
  for (int which = 0; which < 2; which++) {
    memcpy(fill, off, sizeof *fill * ng);
    for (uint64_t i = 0; i < r->nlat; i++) vals[fill[newpos[r->lat_o[i]]]++] = r->lat[2 * i + which];
    for (uint32_t q = 0; q < ng; q++) g[q].lat[which] = latstat(vals + off[q], off[q + 1] - off[q]);
  }
  free(fill);
  free(vals);
  free(off);
  free(newpos);
  *out = g;
  return ng;
}

/* ---- printing ---- */

static const char *const fail_names[] = {"pass", "syntax", "dataflow", "hardware", "timeout", "infra"};

/* Largest k in the table that every variant of the group reached. */
static int top_k(const rs_group *g) {
  int t = -1;
  for (int k = 0; k < RS_NK; k++)
    if (rs_table_ks[k] <= g->samples) t = k;
  return t;
}

static void pct(FILE *out, double v) {
  if (isnan(v)) fprintf(out, "-");
  else fprintf(out, "%.1f%%", 100 * v);
}
static void pct_ci(FILE *out, const rs_ci *c) {
  if (!c->n) {
    fprintf(out, "-");
    return;
  }
  fprintf(out, "%.1f%% [%.1f, %.1f]", 100 * c->est, 100 * c->lo, 100 * c->hi);
}

static void print_md(const rs_results *r, const rs_group *g, uint32_t n, unsigned by, FILE *out) {
  char lab[512];
  /* the paper's Table 2 layout: one row per family x setting */
  uint32_t kmax = 0;
  for (uint32_t i = 0; i < n; i++)
    if (top_k(&g[i]) >= 0 && rs_table_ks[top_k(&g[i])] > kmax) kmax = rs_table_ks[top_k(&g[i])];
  fprintf(out, "| family | setting | instances | pass rate (greedy) | Pass@%u (any of %u) | avg attempts | max attempts |\n"
               "|---|---|---:|---:|---:|---:|---:|\n", kmax, kmax);
  for (uint32_t i = 0; i < n; i++) {
    const rs_group *x = &g[i];
    int tk = top_k(x);
    fprintf(out, "| %s | %s | %u | ", by & RS_BY_FAMILY ? x->key->family : "all",
            rs_group_label(x->key, by & ~(unsigned)RS_BY_FAMILY, r, lab, sizeof lab), x->feasible);
    pct(out, x->greedy.n ? x->greedy.est : NAN);
    fprintf(out, " | ");
    pct(out, tk >= 0 && rs_table_ks[tk] == kmax && x->anyk[tk].n ? x->anyk[tk].est : NAN);
    fprintf(out, " | %.2f | %u |\n", x->avgatt, x->maxatt);
  }
  fprintf(out, "\nTable 2 as the paper defines it, over feasible instances. pass rate: the greedy attempt (attempt 0, "
               "temperature 0) passed (instances whose attempt 0 went unanswered are left out). Pass@%u: at least one "
               "of the first %u attempts passed, as observed (not the estimator; the paper's Pass@100 when samples >= "
               "100); an instance without a pass whose first %u attempts include unanswered ones has no value. "
               "avg / max attempts: attempts until the first pass, as the regeneration loop counts them (until-pass "
               "runs: the loop itself; sampled runs: the first passing attempt's index + 1, what the loop takes with "
               "the same attempt seeds and no --feedback), over solved instances. The unbiased pass@k estimator is "
               "in the next table.\n\n", kmax, kmax, kmax);
  /* detail: rates with intervals and the failure breakdown */
  fprintf(out, "| group | instances | feasible | greedy pass |");
  for (int k = 0; k < RS_NK; k++)
    if (rs_table_ks[k] <= kmax) fprintf(out, " pass@%u |", rs_table_ks[k]);
  fprintf(out, " solved | avg attempts | max attempts | syntax | dataflow | hardware | timeout | infra |\n|---|---:|---:|---:|");
  for (int k = 0; k < RS_NK; k++)
    if (rs_table_ks[k] <= kmax) fprintf(out, "---:|");
  fprintf(out, "---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (uint32_t i = 0; i < n; i++) {
    const rs_group *x = &g[i];
    fprintf(out, "| %s | %u | %u | ", rs_group_label(x->key, by, r, lab, sizeof lab), x->inst, x->feasible);
    pct_ci(out, &x->greedy);
    for (int k = 0; k < RS_NK; k++)
      if (rs_table_ks[k] <= kmax) {
        fprintf(out, " | ");
        pct_ci(out, &x->pk[k]);
      }
    fprintf(out, " | ");
    pct_ci(out, &x->solved);
    fprintf(out, " | %.2f | %u |", x->avgatt, x->maxatt);
    for (int v = 1; v < 5; v++) {
      fprintf(out, " ");
      pct(out, x->nfail ? (double)x->fails[v] / x->nfail : NAN);
      fprintf(out, " |");
    }
    fprintf(out, " %llu |\n", (unsigned long long)x->infra);
  }
  fprintf(out, "\ngreedy pass: attempt 0. pass@k: the unbiased estimator 1 - C(n-c,k)/C(n,k) per instance (n "
               "verified attempts, c passes; until-pass runs: passed within k attempts), mean over instances. solved: "
               "some attempt passed. Failure shares are over failed verified attempts; infra attempts are counted "
               "apart and never as model failures.\n\n| group | infer mean | p50 | p95 | p99 | max | verify mean | p50 | "
               "p95 | p99 | max |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (uint32_t i = 0; i < n; i++) {
    const rs_group *x = &g[i];
    fprintf(out, "| %s |", rs_group_label(x->key, by, r, lab, sizeof lab));
    for (int w = 0; w < 2; w++) {
      const rs_latstat *l = &x->lat[w];
      fprintf(out, " %.4f | %.4f | %.4f | %.4f | %.4f |", l->mean, l->p50, l->p95, l->p99, l->max);
    }
    fprintf(out, "\n");
  }
  fprintf(out, "\nLatency in seconds, over verified attempts.\n\n| group | solved w/ ref | used - compiler | "
               "<= compiler | used - lower bound | occupancy delta | occ. gained | occ. lost |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (uint32_t i = 0; i < n; i++) {
    const rs_group *x = &g[i];
    fprintf(out, "| %s | %u |", rs_group_label(x->key, by, r, lab, sizeof lab), x->qn);
    if (x->qn)
      fprintf(out, " %+.2f | %.1f%% | %+.2f | %+.2f | %u | %u |\n", x->q_dref, 100.0 * x->q_le_ref / x->qn,
              x->q_dlb, x->q_docc, x->q_occ_gain, x->q_occ_loss);
    else fprintf(out, " - | - | - | - | - | - |\n");
  }
  fprintf(out, "\nQuality: the best passing attempt per instance (fewest registers in the files that bound "
               "occupancy: VGPR+AGPR on AMD, R on NVIDIA), against the compiler's count (LLVM / ptxas) and the "
               "pressure lower bound.\n");
  /* rows read with table rows inferred from nvdisasm -plr (sass/infer.c): said, never blended in */
  uint32_t inf = 0, all = 0, top = 0;
  for (uint32_t i = 0; i < r->n; i++)
    if (r->o[i].inst_index >= top) top = r->o[i].inst_index + 1;
  uint8_t *seen = rs_xcalloc(top ? top : 1, 1); /* one count per instance, over its models */
  for (uint32_t i = 0; i < r->n; i++)
    if (!seen[r->o[i].inst_index]) {
      seen[r->o[i].inst_index] = 1;
      all++;
      inf += r->o[i].inferred;
    }
  free(seen);
  if (inf)
    fprintf(out, "\nInferred forms: %u of %u instances were read with instruction forms inferred from nvdisasm -plr "
                 "(corpus params inferred_forms), not from the table.\n", inf, all);
}

/* CSV/JSON numbers: NaN prints as empty / null. */
static void csv_num(FILE *out, double v) {
  if (isnan(v)) fputc(',', out);
  else fprintf(out, ",%.6g", v);
}

static void csv_field(FILE *out, const char *s) { /* RFC 4180 quoting when needed */
  if (!strpbrk(s, ",\"\n")) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

static void print_csv(const rs_results *r, const rs_group *g, uint32_t n, unsigned by, FILE *out) {
  char lab[512];
  fprintf(out, "group,family,target,form,split,model,instances,feasible,until_pass,samples,greedy,greedy_lo,greedy_hi");
  for (int k = 0; k < RS_NK; k++) fprintf(out, ",pass@%u,pass@%u_lo,pass@%u_hi", rs_table_ks[k], rs_table_ks[k], rs_table_ks[k]);
  fprintf(out, ",solved,solved_lo,solved_hi,avg_attempts,max_attempts,attempts,failed");
  for (int v = 1; v < 5; v++) fprintf(out, ",%s", fail_names[v]);
  fprintf(out, ",infra");
  for (int w = 0; w < 2; w++)
    fprintf(out, ",%s_mean,%s_p50,%s_p95,%s_p99,%s_max", w ? "verify" : "infer", w ? "verify" : "infer",
            w ? "verify" : "infer", w ? "verify" : "infer", w ? "verify" : "infer");
  fprintf(out, ",quality_n,used_minus_ref,le_ref,used_minus_lb,occ_delta,occ_gained,occ_lost");
  for (int k = 0; k < RS_NK; k++) fprintf(out, ",any@%u,any@%u_lo,any@%u_hi", rs_table_ks[k], rs_table_ks[k], rs_table_ks[k]);
  fprintf(out, "\n");
  for (uint32_t i = 0; i < n; i++) {
    const rs_group *x = &g[i];
    const rs_outcome *k = x->key;
    csv_field(out, rs_group_label(k, by, r, lab, sizeof lab));
    const char *f[5] = {k->family, k->target, k->form, split_str(k->split), rs_results_model(r, k->model)};
    const unsigned bit[5] = {RS_BY_FAMILY, RS_BY_TARGET, RS_BY_FORM, RS_BY_SPLIT, RS_BY_MODEL};
    for (int q = 0; q < 5; q++) {
      fputc(',', out);
      if (by & bit[q]) csv_field(out, f[q]);
    }
    fprintf(out, ",%u,%u,%d,%u", x->inst, x->feasible, x->until_pass, x->samples);
    const rs_ci *cs[RS_NK + 2];
    cs[0] = &x->greedy;
    for (int q = 0; q < RS_NK; q++) cs[1 + q] = &x->pk[q];
    cs[RS_NK + 1] = &x->solved;
    for (int q = 0; q < RS_NK + 2; q++) {
      double nan = NAN;
      csv_num(out, cs[q]->n ? cs[q]->est : nan);
      csv_num(out, cs[q]->n ? cs[q]->lo : nan);
      csv_num(out, cs[q]->n ? cs[q]->hi : nan);
    }
    fprintf(out, ",%.6g,%u,%llu,%llu", x->avgatt, x->maxatt, (unsigned long long)x->nattempts,
            (unsigned long long)x->nfail);
    for (int v = 1; v < 5; v++) fprintf(out, ",%llu", (unsigned long long)x->fails[v]);
    fprintf(out, ",%llu", (unsigned long long)x->infra);
    for (int w = 0; w < 2; w++) {
      const rs_latstat *l = &x->lat[w];
      fprintf(out, ",%.6g,%.6g,%.6g,%.6g,%.6g", l->mean, l->p50, l->p95, l->p99, l->max);
    }
    fprintf(out, ",%u", x->qn);
    if (x->qn)
      fprintf(out, ",%.6g,%u,%.6g,%.6g,%u,%u", x->q_dref, x->q_le_ref, x->q_dlb, x->q_docc, x->q_occ_gain,
              x->q_occ_loss);
    else fprintf(out, ",,,,,,");
    for (int q = 0; q < RS_NK; q++) {
      const rs_ci *c = &x->anyk[q];
      csv_num(out, c->n ? c->est : NAN);
      csv_num(out, c->n ? c->lo : NAN);
      csv_num(out, c->n ? c->hi : NAN);
    }
    fprintf(out, "\n");
  }
}

static cJSON *ci_json(const rs_ci *c) {
  if (!c->n) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "est", c->est);
  cJSON_AddNumberToObject(o, "lo", c->lo);
  cJSON_AddNumberToObject(o, "hi", c->hi);
  cJSON_AddNumberToObject(o, "n", c->n);
  return o;
}

cJSON *rs_groups_json(const rs_results *r, const rs_group *g, uint32_t n, unsigned by) {
  char lab[512];
  cJSON *arr = cJSON_CreateArray();
  for (uint32_t i = 0; i < n; i++) {
    const rs_group *x = &g[i];
    const rs_outcome *k = x->key;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "group", rs_group_label(k, by, r, lab, sizeof lab));
    if (by & RS_BY_FAMILY) cJSON_AddStringToObject(o, "family", k->family);
    if (by & RS_BY_TARGET) cJSON_AddStringToObject(o, "target", k->target);
    if (by & RS_BY_FORM) cJSON_AddStringToObject(o, "form", k->form);
    if (by & RS_BY_SPLIT) cJSON_AddStringToObject(o, "split", split_str(k->split));
    if (by & RS_BY_MODEL) cJSON_AddStringToObject(o, "model", rs_results_model(r, k->model));
    cJSON_AddNumberToObject(o, "instances", x->inst);
    cJSON_AddNumberToObject(o, "feasible", x->feasible);
    cJSON_AddBoolToObject(o, "until_pass", x->until_pass);
    cJSON_AddNumberToObject(o, "samples", x->samples);
    cJSON_AddItemToObject(o, "greedy", ci_json(&x->greedy));
    cJSON *pk = cJSON_AddObjectToObject(o, "pass_at_k");
    for (int q = 0; q < RS_NK; q++)
      if (x->pk[q].n) {
        char kk[16];
        snprintf(kk, sizeof kk, "%u", rs_table_ks[q]);
        cJSON_AddItemToObject(pk, kk, ci_json(&x->pk[q]));
      }
    cJSON *ak = cJSON_AddObjectToObject(o, "pass_any_k"); /* observed: a pass within the first k attempts */
    for (int q = 0; q < RS_NK; q++)
      if (x->anyk[q].n) {
        char kk[16];
        snprintf(kk, sizeof kk, "%u", rs_table_ks[q]);
        cJSON_AddItemToObject(ak, kk, ci_json(&x->anyk[q]));
      }
    cJSON_AddItemToObject(o, "solved", ci_json(&x->solved));
    cJSON_AddNumberToObject(o, "avg_attempts", x->avgatt);
    cJSON_AddNumberToObject(o, "max_attempts", x->maxatt);
    cJSON *fl = cJSON_AddObjectToObject(o, "failures");
    for (int v = 1; v < 5; v++) cJSON_AddNumberToObject(fl, fail_names[v], (double)x->fails[v]);
    cJSON_AddNumberToObject(o, "infra", (double)x->infra);
    cJSON_AddNumberToObject(o, "attempts", (double)x->nattempts);
    for (int w = 0; w < 2; w++) {
      cJSON *l = cJSON_AddObjectToObject(o, w ? "verify_s" : "infer_s");
      cJSON_AddNumberToObject(l, "mean", x->lat[w].mean);
      cJSON_AddNumberToObject(l, "p50", x->lat[w].p50);
      cJSON_AddNumberToObject(l, "p95", x->lat[w].p95);
      cJSON_AddNumberToObject(l, "p99", x->lat[w].p99);
      cJSON_AddNumberToObject(l, "max", x->lat[w].max);
    }
    if (x->qn) {
      cJSON *q = cJSON_AddObjectToObject(o, "quality");
      cJSON_AddNumberToObject(q, "n", x->qn);
      cJSON_AddNumberToObject(q, "used_minus_ref", x->q_dref);
      cJSON_AddNumberToObject(q, "le_ref", x->q_le_ref);
      cJSON_AddNumberToObject(q, "used_minus_lb", x->q_dlb);
      cJSON_AddNumberToObject(q, "occ_delta", x->q_docc);
      cJSON_AddNumberToObject(q, "occ_gained", x->q_occ_gain);
      cJSON_AddNumberToObject(q, "occ_lost", x->q_occ_loss);
    }
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

static void print_json(const rs_results *r, const rs_group *g, uint32_t n, unsigned by, FILE *out) {
  cJSON *arr = rs_groups_json(r, g, n, by);
  char *s = cJSON_Print(arr);
  fprintf(out, "%s\n", s);
  cJSON_free(s);
  cJSON_Delete(arr);
}

void rs_groups_print(const rs_results *r, const rs_group *g, uint32_t n, unsigned by, int fmt, FILE *out) {
  if (fmt == RS_FMT_CSV) print_csv(r, g, n, by, out);
  else if (fmt == RS_FMT_JSON) print_json(r, g, n, by, out);
  else print_md(r, g, n, by, out);
}

void rs_results_print(rs_results *r, FILE *out) {
  rs_group *g = NULL;
  uint32_t n = rs_results_group(r, RS_BY_DEFAULT, RS_BOOT_SEED, &g);
  rs_groups_print(r, g, n, RS_BY_DEFAULT, RS_FMT_MD, out);
  free(g);
}
