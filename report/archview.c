/* archview.c - per-architecture pass rates side by side (`regsweep report --arch`): one row per
 * (model, form), one column per target, so an architecture held out of training
 * (--holdout-arch) reads against the ones a model has seen. Cells come from the same groups as
 * the main table (rs_results_group by model, form and target). */
#include "report/archview.h"
#include "target/target.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Column order: AMD in the target table's order (by generation), then NVIDIA by name (sm_75 ..
 * sm_90), unknown targets last. */
static int target_cmp(const char *a, const char *b) {
  size_t n;
  const rs_target *const *all = rs_target_all(&n);
  const rs_target *ta = rs_target_by_name(a), *tb = rs_target_by_name(b);
  int va = ta ? (int)ta->vendor : 2, vb = tb ? (int)tb->vendor : 2; /* enum rs_vendor: AMD 0, NVIDIA 1 */
  if (va != vb) return va - vb;
  if (va != 0) return strcmp(a, b);
  size_t ia = 0, ib = 0;
  while (ia < n && all[ia] != ta) ia++;
  while (ib < n && all[ib] != tb) ib++;
  return ia < ib ? -1 : ia > ib;
}

static void cell(FILE *out, const rs_group *g) {
  if (!g || !g->greedy.n) {
    fprintf(out, " - |");
    return;
  }
  int k = -1;
  for (int i = 0; i < RS_NK; i++)
    if (g->pk[i].n) k = i;
  fprintf(out, " %.1f%%", 100 * g->greedy.est);
  if (k > 0) fprintf(out, " / %.1f%%", 100 * g->pk[k].est);
  fprintf(out, " (%u) |", g->feasible);
}

void rs_arch_view_print(rs_results *r, uint64_t seed, FILE *out) {
  unsigned by = RS_BY_MODEL | RS_BY_FORM | RS_BY_TARGET;
  rs_group *g = NULL;
  uint32_t ng = rs_results_group(r, by, seed, &g);
  /* the columns: distinct targets */
  const char *tg[64];
  int nt = 0;
  for (uint32_t i = 0; i < ng; i++) {
    int k;
    for (k = 0; k < nt && strcmp(tg[k], g[i].key->target); k++) {}
    if (k == nt && nt < 64) tg[nt++] = g[i].key->target;
  }
  for (int a = 1; a < nt; a++) /* insertion sort by column order */
    for (int b = a; b > 0 && target_cmp(tg[b], tg[b - 1]) < 0; b--) {
      const char *t = tg[b];
      tg[b] = tg[b - 1];
      tg[b - 1] = t;
    }
  uint32_t kmax = 0;
  for (uint32_t i = 0; i < ng; i++)
    for (int k = 0; k < RS_NK; k++)
      if (g[i].pk[k].n && rs_table_ks[k] > kmax) kmax = rs_table_ks[k];
  fprintf(out, "## Pass rates per architecture\n\n");
  fprintf(out, "Cells: greedy pass rate");
  if (kmax > 1) fprintf(out, " / pass@%u", kmax);
  fprintf(out, " (feasible instances); `-`: no instance of that target.\n\n| model | form |");
  for (int t = 0; t < nt; t++) fprintf(out, " %s |", tg[t]);
  fprintf(out, "\n|---|---|");
  for (int t = 0; t < nt; t++) fprintf(out, "---:|");
  fprintf(out, "\n");
  /* groups are sorted by (family..., target, form, model) keys: walk rows by (model, form) */
  bool *done = calloc(ng ? ng : 1, sizeof *done);
  for (uint32_t i = 0; i < ng; i++) {
    if (done[i]) continue;
    const rs_outcome *key = g[i].key;
    fprintf(out, "| %s | %s |", rs_results_model(r, key->model), key->form);
    for (int t = 0; t < nt; t++) {
      const rs_group *hit = NULL;
      for (uint32_t j = i; j < ng && !hit; j++)
        if (!done[j] && g[j].key->model == key->model && !strcmp(g[j].key->form, key->form) &&
            !strcmp(g[j].key->target, tg[t]))
          hit = &g[j], done[j] = true;
      cell(out, hit);
    }
    fprintf(out, "\n");
  }
  free(done);
  free(g);
}
