/* bench_chaitin.c - builtin:chaitin per family: time per instance, validity, and registers used
 * against the compiler's count (LLVM's final allocation on AMD, ptxas -v on NVIDIA) and the
 * max-pressure lower bound, over a corpus (default: the mini corpus).
 *   build-release/bench/bench_chaitin [--quick] [corpus.h5]     (--quick: the first 24 instances) */
#include "bench/bench.h"
#include "corpus/instance.h"
#include "model/model.h"
#include "report/passk.h"
#include "verify/verifier.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  char key[96];
  double *t;
  uint32_t n, cap, valid, feasible, fewer, equal, more, at_bound;
  double ours, ref, bound;
} row;

int main(int argc, char **argv) {
  uint64_t limit = rs_bench_take_flag(&argc, argv, "--quick") ? 24 : UINT64_MAX;
  const char *path = argc > 1 ? argv[1] : "data/corpus-mini.h5";
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(path, &e);
  if (!c) return fprintf(stderr, "%s\n", e.msg), 2;
  rs_model *m = rs_model_open("builtin:chaitin", &e);
  if (!m) return fprintf(stderr, "%s\n", e.msg), 2;
  row *rows = NULL; /* one per family x target x form: as many as the corpus has */
  uint32_t nr = 0, cap = 0;
  for (uint64_t i = 0; i < rs_corpus_count(c) && i < limit; i++) {
    rs_loaded l;
    if (rs_instance_load(c, i, &l, &e)) return fprintf(stderr, "%s\n", e.msg), 2;
    char key[96];
    snprintf(key, sizeof key, "%s/%s/%s", l.row.family, l.row.target, l.row.form);
    uint32_t k;
    for (k = 0; k < nr && strcmp(rows[k].key, key); k++) {}
    if (k == nr) {
      if (nr == cap) rows = rs_xrealloc(rows, sizeof *rows * (cap = cap ? cap * 2 : 32));
      memset(&rows[nr], 0, sizeof *rows);
      snprintf(rows[nr++].key, sizeof rows[0].key, "%s", key);
    }
    row *R = &rows[k];
    const char **vn = rs_value_names(l.p, &l.names);
    rs_gen_input in = {l.row.id, l.row.target, l.p, l.row.norm, &l.names, vn, NULL, NULL, NULL, NULL, NULL};
    uint64_t seed = 1;
    rs_gen g;
    double t0 = rs_now();
    rs_model_generate(m, &in, 0, 1, &seed, &g, &e);
    double dt = rs_now() - t0;
    if (R->n == R->cap) R->t = realloc(R->t, sizeof *R->t * (R->cap = R->cap ? R->cap * 2 : 64));
    R->t[R->n++] = dt;
    if (!l.row.infeasible) {
      R->feasible++;
      rs_verifier vf;
      rs_verifier_open(&vf, RS_VERIFIER_NATIVE, l.p, 0, &e);
      rs_candidate cand;
      rs_check_result r;
      rs_verify_text(&vf, &l.names, g.text, strlen(g.text), &cand, &r, NULL);
      if (r.verdict == RS_V_PASS) {
        R->valid++;
        /* the file that bounds occupancy: VGPR+AGPR on AMD, R on NVIDIA */
        unsigned ours = 0, ref = 0, bound = 0;
        for (uint32_t f = 0; f < l.p->tgt->nfiles && f < 4; f++)
          if (l.p->tgt->files[f].count >= 255) {
            ours += r.used[f];
            ref += l.row.ref_regs[f];
            bound += l.p->maxp[f];
          }
        if (l.p->maxp_flex > bound) bound = l.p->maxp_flex;
        R->ours += ours, R->ref += ref, R->bound += bound;
        R->fewer += ours < ref, R->equal += ours == ref, R->more += ours > ref;
        R->at_bound += ours <= bound;
      }
      rs_candidate_free(&cand);
      rs_verifier_close(&vf);
    }
    rs_gen_clear(&g);
    free(vn);
    rs_loaded_free(&l);
  }
  printf("builtin:chaitin on %s (vector registers on AMD = VGPR+AGPR highest+1, R on NVIDIA)\n", path);
  printf("| family/target/form | instances | median ms | p95 ms | max ms | valid/feasible | mean ours | mean compiler | mean bound | fewer/equal/more than compiler | at bound |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (uint32_t k = 0; k < nr; k++) {
    row *R = &rows[k];
    double v = R->valid ? R->valid : 1;
    printf("| %s | %u | %.1f | %.1f | %.1f | %u/%u | %.1f | %.1f | %.1f | %u/%u/%u | %u |\n", R->key, R->n,
           rs_percentile(R->t, R->n, 50) * 1e3, rs_percentile(R->t, R->n, 95) * 1e3, rs_percentile(R->t, R->n, 100) * 1e3,
           R->valid, R->feasible, R->ours / v, R->ref / v, R->bound / v, R->fewer, R->equal, R->more, R->at_bound);
    free(R->t);
  }
  free(rows);
  rs_model_close(m);
  rs_corpus_close(c, &e);
  return 0;
}
