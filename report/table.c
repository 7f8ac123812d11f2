/* table.c - pass@k tables from attempt rows. */
#include "report/table.h"
#include "report/passk.h"
#include <stdlib.h>
#include <string.h>

static void split_id(const char *id, rs_outcome *o) {
  /* family/variant/target/form */
  char buf[160];
  snprintf(buf, sizeof buf, "%s", id);
  char *parts[4] = {0};
  int n = 0;
  for (char *t = strtok(buf, "/"); t && n < 4; t = strtok(NULL, "/")) parts[n++] = t;
  snprintf(o->family, sizeof o->family, "%s", n > 0 ? parts[0] : "?");
  snprintf(o->target, sizeof o->target, "%s", n > 2 ? parts[2] : "?");
  snprintf(o->form, sizeof o->form, "%s", n > 3 ? parts[3] : "?");
}

int rs_results_load(rs_results *r, rs_runfile *f, rs_err *e) {
  /* (instance row, model) -> outcome index, through a hash */
  uint32_t cap = 1024;
  uint64_t rows = rs_runfile_count(f);
  while (cap < 2 * rows / 4 + 64) cap *= 2;
  uint64_t *keys = rs_xcalloc(cap, sizeof *keys);
  uint32_t *vals = rs_xcalloc(cap, sizeof *vals);
  for (uint64_t i = 0; i < rows; i++) {
    rs_attempt a;
    if (rs_runfile_get(f, i, &a, 0, e)) {
      free(keys);
      free(vals);
      return -1;
    }
    uint64_t k = ((uint64_t)a.inst_index << 16 | a.model) + 1;
    uint32_t j = (uint32_t)(k * 0x9e3779b97f4a7c15ull >> 40) & (cap - 1);
    while (keys[j] && keys[j] != k) j = (j + 1) & (cap - 1);
    if (!keys[j]) {
      if (r->n * 2 >= cap) { /* grow: rehash */
        uint32_t nc = cap * 2;
        uint64_t *nk = rs_xcalloc(nc, sizeof *nk);
        uint32_t *nv = rs_xcalloc(nc, sizeof *nv);
        for (uint32_t q = 0; q < cap; q++)
          if (keys[q]) {
            uint32_t t = (uint32_t)(keys[q] * 0x9e3779b97f4a7c15ull >> 40) & (nc - 1);
            while (nk[t]) t = (t + 1) & (nc - 1);
            nk[t] = keys[q];
            nv[t] = vals[q];
          }
        free(keys);
        free(vals);
        keys = nk;
        vals = nv;
        cap = nc;
        j = (uint32_t)(k * 0x9e3779b97f4a7c15ull >> 40) & (cap - 1);
        while (keys[j]) j = (j + 1) & (cap - 1);
      }
      rs_outcome o;
      memset(&o, 0, sizeof o);
      split_id(a.instance, &o);
      o.model = a.model;
      o.first_pass = -1;
      o.greedy = -1;
      RS_PUSH(r->o, r->n, r->cap, o);
      keys[j] = k;
      vals[j] = r->n - 1;
    }
    rs_outcome *o = &r->o[vals[j]];
    if (a.verdict == 5 /* RS_V_INFRA */) {
      o->infra++;
    } else {
      o->n++;
      if (a.verdict == 0) {
        o->c++;
        if (o->first_pass < 0 || (int32_t)a.attempt < o->first_pass) o->first_pass = (int32_t)a.attempt;
      } else if (a.verdict < 6) {
        o->fails[a.verdict]++;
      }
      if (a.attempt == 0) o->greedy = a.verdict == 0;
    }
    rs_attempt_clear(&a);
  }
  free(keys);
  free(vals);
  return 0;
}

void rs_results_free(rs_results *r) {
  free(r->o);
  memset(r, 0, sizeof *r);
}

static const uint32_t ks[] = {1, 5, 10, 20, 50, 100};

void rs_results_print(const rs_results *r, FILE *out) {
  fprintf(out, "| family | target | form | model | instances | greedy pass |");
  for (size_t k = 0; k < sizeof ks / sizeof *ks; k++)
    if (ks[k] <= r->samples) fprintf(out, " pass@%u |", ks[k]);
  fprintf(out, " avg attempts | max attempts | syntax | dataflow | hardware | timeout | infra |\n|---|---|---|---|---:|---:|");
  for (size_t k = 0; k < sizeof ks / sizeof *ks; k++)
    if (ks[k] <= r->samples) fprintf(out, "---:|");
  fprintf(out, "---:|---:|---:|---:|---:|---:|---:|\n");
  /* groups in first-seen order */
  bool *done = rs_xcalloc(r->n + 1, sizeof *done);
  for (uint32_t i = 0; i < r->n; i++) {
    if (done[i]) continue;
    const rs_outcome *g = &r->o[i];
    uint32_t inst = 0, greedy_n = 0, greedy_p = 0, maxatt = 0, solved = 0, infra = 0, fails[6] = {0}, nfail = 0;
    double pk[6] = {0}, sumatt = 0;
    uint32_t pkn[6] = {0};
    for (uint32_t j = i; j < r->n; j++) {
      const rs_outcome *o = &r->o[j];
      if (done[j] || o->model != g->model || strcmp(o->family, g->family) || strcmp(o->target, g->target) ||
          strcmp(o->form, g->form))
        continue;
      done[j] = true;
      inst++;
      infra += o->infra;
      if (o->greedy >= 0) greedy_n++, greedy_p += (uint32_t)o->greedy;
      for (size_t k = 0; k < sizeof ks / sizeof *ks; k++) {
        double v = rs_passk(o->n, o->c, ks[k]);
        if (v >= 0 && !r->until_pass) pk[k] += v, pkn[k]++;
      }
      if (r->until_pass) { /* sequential attempts: pass within k attempts */
        for (size_t k = 0; k < sizeof ks / sizeof *ks; k++)
          if (ks[k] <= r->samples) pk[k] += o->first_pass >= 0 && (uint32_t)o->first_pass < ks[k], pkn[k]++;
      }
      if (o->first_pass >= 0) {
        solved++;
        sumatt += o->first_pass + 1;
        if ((uint32_t)o->first_pass + 1 > maxatt) maxatt = (uint32_t)o->first_pass + 1;
      }
      for (int v = 1; v < 5; v++) fails[v] += o->fails[v], nfail += o->fails[v];
    }
    fprintf(out, "| %s | %s | %s | %s | %u | ", g->family, g->target, g->form,
            g->model < r->nmodels ? r->models[g->model] : "?", inst);
    if (greedy_n) fprintf(out, "%.1f%% |", 100.0 * greedy_p / greedy_n);
    else fprintf(out, "- |");
    for (size_t k = 0; k < sizeof ks / sizeof *ks; k++)
      if (ks[k] <= r->samples) fprintf(out, " %.1f%% |", pkn[k] ? 100.0 * pk[k] / pkn[k] : 0.0);
    fprintf(out, " %.2f | %u |", solved ? sumatt / solved : 0.0, maxatt);
    for (int v = 1; v < 5; v++) fprintf(out, " %.1f%% |", nfail ? 100.0 * fails[v] / nfail : 0.0);
    fprintf(out, " %u |\n", infra);
  }
  free(done);
}
