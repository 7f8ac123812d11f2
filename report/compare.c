/* compare.c - paired comparisons of variants on the same instances: bootstrap intervals of the
 * differences, McNemar's test on greedy pass. */
#include "report/compare.h"
#include "report/passk.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *rs_compare_metric(uint32_t m, char *buf, size_t n) {
  if (m == 0) snprintf(buf, n, "greedy");
  else if (m <= RS_NK) snprintf(buf, n, "pass@%u", rs_table_ks[m - 1]);
  else snprintf(buf, n, "solved");
  return buf;
}

/* One instance's metric values for an outcome (NaN where undefined), as the tables define them. */
static void values(const rs_results *r, const rs_outcome *x, uint32_t samples, double *v) {
  v[0] = x->greedy >= 0 ? x->greedy : NAN;
  bool until = rs_results_until(r, x->model);
  for (int k = 0; k < RS_NK; k++) {
    uint32_t kk = rs_table_ks[k];
    if (kk > samples) v[1 + k] = NAN;
    else if (until) v[1 + k] = x->first_pass >= 0 && (uint32_t)x->first_pass < kk;
    else {
      double p = rs_passk(x->n, x->c, kk);
      v[1 + k] = p >= 0 ? p : NAN;
    }
  }
  v[RS_CMP_NM - 1] = x->first_pass >= 0;
}

static void compare_pair(const rs_results *r, const rs_outcome *o, uint32_t n, uint16_t a, uint16_t b,
                         uint64_t seed, rs_comparison *c) {
  memset(c, 0, sizeof *c);
  c->key = o;
  c->a = a;
  c->b = b;
  uint32_t sa = rs_results_samples(r, a), sb = rs_results_samples(r, b), s = sa < sb ? sa : sb;
  /* columns: A metrics, B metrics, B - A */
  enum { W = 3 * RS_CMP_NM };
  double *m = rs_xmalloc(sizeof *m * W * (n ? n : 1));
  /* o is sorted by instance then variant: each instance's outcomes are contiguous */
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i;
    const rs_outcome *xa = NULL, *xb = NULL;
    for (; j < n && o[j].id_hash == o[i].id_hash; j++) {
      if (o[j].model == a) xa = &o[j];
      if (o[j].model == b) xb = &o[j];
    }
    i = j;
    if (!xa || !xb || (xa->has_ref && xa->infeasible)) continue;
    double *row = m + (size_t)W * c->pairs++;
    values(r, xa, s, row);
    values(r, xb, s, row + RS_CMP_NM);
    for (int q = 0; q < RS_CMP_NM; q++) row[2 * RS_CMP_NM + q] = row[RS_CMP_NM + q] - row[q]; /* NaN stays NaN */
    if (xa->greedy >= 0 && xb->greedy >= 0) {
      c->only_a += xa->greedy && !xb->greedy;
      c->only_b += !xa->greedy && xb->greedy;
    }
  }
  rs_ci ci[W];
  rs_boot_means(m, c->pairs, W, RS_BOOT_RESAMPLES, seed, ci);
  memcpy(c->va, ci, sizeof c->va);
  memcpy(c->vb, ci + RS_CMP_NM, sizeof c->vb);
  memcpy(c->diff, ci + 2 * RS_CMP_NM, sizeof c->diff);
  c->p_mcnemar = rs_mcnemar_p(c->only_a, c->only_b);
  free(m);
}

uint32_t rs_compare(rs_results *r, unsigned by, uint64_t seed, rs_comparison **out) {
  unsigned gby = by & ~(unsigned)RS_BY_MODEL;
  rs_results_sort(r, gby);
  rs_comparison *c = NULL;
  uint32_t nc = 0, cap = 0;
  for (uint32_t i = 0; i < r->n;) {
    uint32_t j = i + 1;
    while (j < r->n && !rs_group_cmp(&r->o[i], &r->o[j], gby)) j++;
    /* variants present in the group, in index order; the lowest is the baseline */
    uint16_t lo = UINT16_MAX, hi = 0;
    for (uint32_t q = i; q < j; q++) {
      if (r->o[q].model < lo) lo = r->o[q].model;
      if (r->o[q].model > hi) hi = r->o[q].model;
    }
    for (uint32_t v = (uint32_t)lo + 1; v <= hi; v++) {
      bool present = false;
      for (uint32_t q = i; q < j && !present; q++) present = r->o[q].model == v;
      if (!present) continue;
      rs_comparison x;
      compare_pair(r, r->o + i, j - i, lo, (uint16_t)v, seed + 0x1000193ull * nc, &x);
      RS_PUSH(c, nc, cap, x);
    }
    i = j;
  }
  *out = c;
  return nc;
}

static void ci_md(FILE *out, const rs_ci *c, bool signed_) {
  if (!c->n) fprintf(out, "-");
  else if (signed_) fprintf(out, "%+.1f pp [%+.1f, %+.1f]", 100 * c->est, 100 * c->lo, 100 * c->hi);
  else fprintf(out, "%.1f%%", 100 * c->est);
}

cJSON *rs_compare_json(const rs_results *r, const rs_comparison *c, uint32_t n, unsigned by) {
  char lab[512], mn[32];
  cJSON *arr = cJSON_CreateArray();
  for (uint32_t i = 0; i < n; i++) {
    const rs_comparison *x = &c[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "group", rs_group_label(x->key, by & ~(unsigned)RS_BY_MODEL, r, lab, sizeof lab));
    cJSON_AddStringToObject(o, "a", rs_results_model(r, x->a));
    cJSON_AddStringToObject(o, "b", rs_results_model(r, x->b));
    cJSON_AddNumberToObject(o, "pairs", x->pairs);
    cJSON *ms = cJSON_AddObjectToObject(o, "metrics");
    for (uint32_t m = 0; m < RS_CMP_NM; m++) {
      if (!x->diff[m].n) continue;
      cJSON *e = cJSON_AddObjectToObject(ms, rs_compare_metric(m, mn, sizeof mn));
      cJSON_AddNumberToObject(e, "a", x->va[m].est);
      cJSON_AddNumberToObject(e, "b", x->vb[m].est);
      cJSON_AddNumberToObject(e, "diff", x->diff[m].est);
      cJSON_AddNumberToObject(e, "lo", x->diff[m].lo);
      cJSON_AddNumberToObject(e, "hi", x->diff[m].hi);
      cJSON_AddNumberToObject(e, "n", x->diff[m].n);
    }
    cJSON *mc = cJSON_AddObjectToObject(o, "mcnemar_greedy");
    cJSON_AddNumberToObject(mc, "a_only", x->only_a);
    cJSON_AddNumberToObject(mc, "b_only", x->only_b);
    cJSON_AddNumberToObject(mc, "p", x->p_mcnemar);
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

void rs_compare_print(const rs_results *r, const rs_comparison *c, uint32_t n, unsigned by, int fmt, FILE *out) {
  char lab[512], mn[32];
  unsigned gby = by & ~(unsigned)RS_BY_MODEL;
  if (fmt == RS_FMT_JSON) {
    cJSON *a = rs_compare_json(r, c, n, by);
    char *s = cJSON_Print(a);
    fprintf(out, "%s\n", s);
    cJSON_free(s);
    cJSON_Delete(a);
    return;
  }
  if (fmt == RS_FMT_CSV) {
    fprintf(out, "group,a,b,pairs,metric,a_value,b_value,diff,diff_lo,diff_hi,n,a_only,b_only,p_mcnemar\n");
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t m = 0; m < RS_CMP_NM; m++) {
        const rs_comparison *x = &c[i];
        if (!x->diff[m].n) continue;
        /* model specs hold no commas or quotes in practice; group labels never do */
        fprintf(out, "%s,\"%s\",\"%s\",%u,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%u,%u,%u,%.6g\n",
                rs_group_label(x->key, gby, r, lab, sizeof lab), rs_results_model(r, x->a),
                rs_results_model(r, x->b), x->pairs, rs_compare_metric(m, mn, sizeof mn), x->va[m].est,
                x->vb[m].est, x->diff[m].est, x->diff[m].lo, x->diff[m].hi, x->diff[m].n, x->only_a, x->only_b,
                x->p_mcnemar);
      }
    return;
  }
  fprintf(out, "| group | A | B | pairs | metric | A | B | B - A [95%% CI] |\n|---|---|---|---:|---|---:|---:|---:|\n");
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t m = 0; m < RS_CMP_NM; m++) {
      const rs_comparison *x = &c[i];
      if (!x->diff[m].n) continue;
      fprintf(out, "| %s | %s | %s | %u | %s | ", rs_group_label(x->key, gby, r, lab, sizeof lab),
              rs_results_model(r, x->a), rs_results_model(r, x->b), x->pairs, rs_compare_metric(m, mn, sizeof mn));
      ci_md(out, &x->va[m], false);
      fprintf(out, " | ");
      ci_md(out, &x->vb[m], false);
      fprintf(out, " | ");
      ci_md(out, &x->diff[m], true);
      fprintf(out, " |\n");
    }
  fprintf(out, "\nMcNemar's test on greedy (attempt 0) pass, paired by instance:\n\n"
               "| group | A | B | pairs | A only | B only | p |\n|---|---|---|---:|---:|---:|---:|\n");
  for (uint32_t i = 0; i < n; i++) {
    const rs_comparison *x = &c[i];
    fprintf(out, "| %s | %s | %s | %u | %u | %u | %.4g |\n", rs_group_label(x->key, gby, r, lab, sizeof lab),
            rs_results_model(r, x->a), rs_results_model(r, x->b), x->pairs, x->only_a, x->only_b, x->p_mcnemar);
  }
}
