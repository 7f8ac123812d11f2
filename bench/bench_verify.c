/* bench_verify.c - per-candidate verification latency, native vs Z3, on the same candidates:
 * every ground truth of the mini corpus and one conflict mutant of each (a value moved onto a
 * register of a value live at the same time). Per family: median, p95, max of each and the ratio
 * of medians; plus Z3's one-off context build per instance.
 *   build-release/bench/bench_verify [--quick] [corpus.h5] [max instances per family]   (--quick: 2) */
#include "bench/bench.h"
#include "corpus/instance.h"
#include "report/passk.h"
#include "verify/verifier.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  char family[32];
  double *nat, *z3, *build;
  uint32_t n, nb, cap;
} fam;

int main(int argc, char **argv) {
  bool quick = rs_bench_take_flag(&argc, argv, "--quick");
  const char *path = argc > 1 ? argv[1] : "data/corpus-mini.h5";
  uint32_t per = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : quick ? 2 : 1000;
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(path, &e);
  if (!c) {
    fprintf(stderr, "%s\n", e.msg);
    return 2;
  }
  fam *fams = NULL; /* one per family: as many as the corpus has */
  uint32_t nf = 0, fcap = 0, disagree = 0;
  for (uint64_t i = 0; i < rs_corpus_count(c); i++) {
    rs_loaded l;
    if (rs_instance_load(c, i, &l, &e)) return fprintf(stderr, "%s\n", e.msg), 2;
    if (!l.row.truth) {
      rs_loaded_free(&l);
      continue;
    }
    uint32_t k;
    for (k = 0; k < nf && strcmp(fams[k].family, l.row.family); k++) {}
    if (k == nf) {
      if (nf == fcap) fams = rs_xrealloc(fams, sizeof *fams * (fcap = fcap ? fcap * 2 : 16));
      memset(&fams[nf], 0, sizeof *fams);
      snprintf(fams[nf++].family, sizeof fams[0].family, "%s", l.row.family);
    }
    fam *F = &fams[k];
    if (F->nb >= per) {
      rs_loaded_free(&l);
      continue;
    }
    double t0 = rs_now();
    rs_z3 *z = rs_z3_new(l.p, 60000, &e);
    if (!z) return fprintf(stderr, "%s: %s\n", l.row.id, e.msg), 2;
    double tb = rs_now() - t0;
    if (F->nb % 64 == 0) F->build = realloc(F->build, sizeof *F->build * (F->nb + 64));
    F->build[F->nb++] = tb;
    rs_candidate cand;
    rs_check_result r;
    rs_result_init(&r);
    rs_candidate_parse(l.p, NULL, l.row.truth, strlen(l.row.truth), &cand, &r);
    for (int m = 0; m < 2; m++) {
      if (m == 1 && l.p->nconf) { /* conflict mutant */
        const rs_conflict *cf = &l.p->conf[l.p->nconf / 2];
        cand.reg[cf->a].unit = cand.reg[cf->b].unit + __builtin_ctzll(cf->lb) / 2 - __builtin_ctzll(cf->la) / 2;
      }
      rs_check_result rn, rz;
      rs_result_init(&rn);
      rs_result_init(&rz);
      double a = rs_now();
      rs_check_native(l.p, &cand, &rn);
      double b = rs_now();
      rs_z3_check(z, &cand, &rz);
      double d = rs_now();
      if (F->n + 1 >= F->cap) {
        F->cap = F->cap ? F->cap * 2 : 256;
        F->nat = realloc(F->nat, sizeof *F->nat * F->cap);
        F->z3 = realloc(F->z3, sizeof *F->z3 * F->cap);
      }
      F->nat[F->n] = b - a;
      F->z3[F->n++] = d - b;
      if (rn.verdict != rz.verdict) fprintf(stderr, "DISAGREEMENT %s\n", l.row.id), disagree++;
    }
    rs_candidate_free(&cand);
    rs_z3_free(z);
    rs_loaded_free(&l);
  }
  rs_corpus_close(c, &e);
  if (disagree) printf("%u disagreements between native and Z3 (listed on stderr)\n", disagree);
  printf("verification latency per candidate (ms), truths and conflict mutants of %s\n", path);
  printf("| family | candidates | native median | native p95 | native max | z3 median | z3 p95 | z3 max | z3/native (median) | z3 context build median / max |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (uint32_t k = 0; k < nf; k++) {
    fam *F = &fams[k];
    double nm = rs_percentile(F->nat, F->n, 50) * 1e3, zm = rs_percentile(F->z3, F->n, 50) * 1e3;
    printf("| %s | %u | %.3f | %.3f | %.3f | %.1f | %.1f | %.1f | %.0fx | %.0f / %.0f |\n", F->family, F->n, nm,
           rs_percentile(F->nat, F->n, 95) * 1e3, rs_percentile(F->nat, F->n, 100) * 1e3, zm,
           rs_percentile(F->z3, F->n, 95) * 1e3, rs_percentile(F->z3, F->n, 100) * 1e3, nm > 0 ? zm / nm : 0,
           rs_percentile(F->build, F->nb, 50) * 1e3, rs_percentile(F->build, F->nb, 100) * 1e3);
    free(F->nat);
    free(F->z3);
    free(F->build);
  }
  free(fams);
  return disagree ? 1 : 0;
}
