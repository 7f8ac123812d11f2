/* test_models.c - the built-in back ends on the shipped mini corpus (real compiler output):
 *  - builtin:chaitin gives a valid allocation (native verifier) for every feasible instance (but
 *    a few prera forms at the function's budget where LLVM too split live ranges to fit);
 *  - builtin:sampled is deterministic for a seed, different across seeds, and its mistakes cover
 *    every failure category; its greedy attempt 0 errs too, less often than its sampled ones,
 *    and more often on an attention kernel than on a small GEMM;
 *  - builtin:truth replays the ground truth (it verifies), replay:FILE.jsonl replays answers and
 *    reports a missing attempt as infra naming the file. */
#include "check.h"
#include "corpus/instance.h"
#include "model/model.h"
#include "verify/verifier.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define STRIDE 6 /* sanitizers are ~10x slower: check every 6th instance there */
#else
#define STRIDE 1
#endif

static rs_verdict verdict_of(const rs_loaded *l, const char *text) {
  rs_verifier vf;
  rs_err e;
  rs_verifier_open(&vf, RS_VERIFIER_NATIVE, l->p, 0, &e);
  rs_candidate c;
  rs_check_result r;
  rs_verify_text(&vf, &l->names, text ? text : "", text ? strlen(text) : 0, &c, &r, NULL);
  rs_candidate_free(&c);
  rs_verifier_close(&vf);
  return r.verdict;
}

static void gen(rs_model *m, const rs_loaded *l, const char **vn, uint32_t first, uint32_t n, uint64_t seed0, rs_gen *g) {
  rs_gen_input in = {l->row.id, l->row.target, l->p, l->row.norm, &l->names, vn, l->row.truth, NULL, NULL, NULL, NULL};
  uint64_t seeds[64];
  for (uint32_t k = 0; k < n; k++) seeds[k] = rs_attempt_seed(seed0, l->row.id, m->spec, first + k);
  rs_err e;
  CHECK(rs_model_generate(m, &in, first, n, seeds, g, &e) == 0);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open("data/corpus-mini.h5", &e);
  CHECKF(c != NULL, "%s", e.msg);
  if (!c) return rs_check_done("test_models");
  rs_model *ch = rs_model_open("builtin:chaitin", &e), *sm = rs_model_open("builtin:sampled?temp=1.0", &e),
           *tr = rs_model_open("builtin:truth", &e);
  CHECK(ch && sm && tr);
  unsigned at_limit = 0, feasible = 0, chaitin_ok = 0, truth_ok = 0, truths = 0, cat[RS_V__N] = {0}, det_bad = 0, greedy_bad = 0;
  unsigned vs_ref_better = 0, vs_ref_worse = 0, vs_ref = 0, greedy_n = 0, hot_bad = 0, hot_n = 0;
  /* the largest feasible fa (up to 1200 values) and the smallest sgemm gfx90a instance seen */
  uint64_t fa_i = UINT64_MAX, sg_i = UINT64_MAX;
  uint32_t fa_n = 0, sg_n = UINT32_MAX;
  char replay_id[160] = "";
  for (uint64_t i = 0; i < rs_corpus_count(c); i += STRIDE) {
    rs_loaded l;
    if (rs_instance_load(c, i, &l, &e)) {
      CHECKF(0, "%s", e.msg);
      continue;
    }
    const char **vn = rs_value_names(l.p, &l.names);
    rs_gen g[8];
    if (!l.row.infeasible) {
      feasible++;
      gen(ch, &l, vn, 0, 1, 1, g);
      rs_verdict v = verdict_of(&l, g[0].text);
      if (v == RS_V_PASS) chaitin_ok++;
      else if ((!l.row.truth && !strcmp(l.row.form, "prera") && strstr(l.row.truth_reason, "split")) ||
               (!strcmp(l.row.form, "postsplit") && l.row.raw && strstr(l.row.raw, "SI_SPILL_V")))
        /* at the function's budget (launch bounds) LLVM too had to split live ranges to fit, or
         * (postsplit) to spill: an llc-22 gfx1200 attention kernel leaves chaitin 2 values short */
        at_limit++, fprintf(stderr, "chaitin (%s): %s: %s (%s)\n", l.row.truth_reason, l.row.id, rs_verdict_str(v),
                            g[0].error);
      else fprintf(stderr, "chaitin: %s: %s (%s)\n", l.row.id, rs_verdict_str(v), g[0].error);
      if (v == RS_V_PASS && l.row.ref_regs[0] + l.row.ref_regs[2] > 0 && !strcmp(l.row.form, "prera")) {
        /* registers used vs LLVM's final allocation (vector files) */
        rs_verifier vf;
        rs_verifier_open(&vf, RS_VERIFIER_NATIVE, l.p, 0, &e);
        rs_candidate cc;
        rs_check_result r;
        rs_verify_text(&vf, &l.names, g[0].text, strlen(g[0].text), &cc, &r, NULL);
        unsigned ours = r.used[2] + r.used[3], ref = l.row.ref_regs[2] + l.row.ref_regs[3];
        vs_ref++;
        vs_ref_better += ours < ref;
        vs_ref_worse += ours > ref;
        rs_candidate_free(&cc);
        rs_verifier_close(&vf);
      }
      rs_gen_clear(&g[0]);
    }
    if (i % (5 * STRIDE) == 0) {
      /* sampled: deterministic per seed; greedy attempt 0 errs less often than the others */
      rs_gen a[6], b[6];
      gen(sm, &l, vn, 0, 6, 7, a);
      gen(sm, &l, vn, 0, 6, 7, b);
      bool differ = false;
      for (int k = 0; k < 6; k++) {
        if (strcmp(a[k].text, b[k].text)) det_bad++;
        if (k && strcmp(a[k].text, a[0].text)) differ = true;
        rs_verdict v = verdict_of(&l, a[k].text);
        cat[v]++;
        if (k && !l.row.infeasible) hot_n++, hot_bad += v != RS_V_PASS;
      }
      if (!l.row.infeasible) greedy_n++, greedy_bad += verdict_of(&l, a[0].text) != RS_V_PASS;
      CHECKF(differ || l.p->nvars < 4, "%s: sampled attempts are all identical", l.row.id);
      for (int k = 0; k < 6; k++) rs_gen_clear(&a[k]), rs_gen_clear(&b[k]);
    }
    if (!l.row.infeasible && !strcmp(l.row.target, "gfx90a")) {
      if (!strcmp(l.row.family, "fa") && l.p->nvars > fa_n && l.p->nvars <= 1200) fa_n = l.p->nvars, fa_i = i;
      if (!strcmp(l.row.family, "sgemm") && l.p->nvars < sg_n) sg_n = l.p->nvars, sg_i = i;
    }
    if (l.row.truth) {
      truths++;
      gen(tr, &l, vn, 0, 1, 1, g);
      truth_ok += verdict_of(&l, g[0].text) == RS_V_PASS;
      rs_gen_clear(&g[0]);
      if (!replay_id[0]) snprintf(replay_id, sizeof replay_id, "%s", l.row.id);
    }
    free(vn);
    rs_loaded_free(&l);
  }
  printf("chaitin: %u/%u feasible instances allocated validly; vs LLVM (prera, vector registers): %u fewer, %u more, "
         "%u equal of %u\n", chaitin_ok, feasible, vs_ref_better, vs_ref_worse, vs_ref - vs_ref_better - vs_ref_worse, vs_ref);
  printf("sampled (temp 1.0): pass %u, syntax %u, dataflow %u, hardware %u\n", cat[RS_V_PASS], cat[RS_V_SYNTAX],
         cat[RS_V_DATAFLOW], cat[RS_V_HARDWARE]);
  printf("chaitin: %u feasible prera instances not coloured where LLVM split live ranges to fit\n", at_limit);
  CHECK(feasible > 0 && chaitin_ok + at_limit == feasible && at_limit * 50 < feasible);
  CHECK(truths > 0 && truth_ok == truths);
  printf("sampled (temp 1.0): greedy attempts failed %u/%u, sampled attempts %u/%u\n", greedy_bad, greedy_n, hot_bad,
         hot_n);
  CHECK(det_bad == 0);
  CHECK(greedy_n > 0 && hot_n > 0 && (double)greedy_bad / greedy_n < (double)hot_bad / hot_n);
  /* attempt 0 over many sweep seeds: an attention kernel's greedy answer is sometimes wrong, more
   * often than a small GEMM's; sampled attempts (1) err more often still */
  CHECK(fa_i != UINT64_MAX && sg_i != UINT64_MAX);
  enum { NSEED = 40 };
  unsigned g0[2] = {0, 0}, g1[2] = {0, 0};
  uint64_t which[2] = {fa_i, sg_i};
  for (int w = 0; w < 2 && fa_i != UINT64_MAX && sg_i != UINT64_MAX; w++) {
    rs_loaded l;
    if (rs_instance_load(c, which[w], &l, &e)) {
      CHECKF(0, "%s", e.msg);
      continue;
    }
    const char **vn = rs_value_names(l.p, &l.names);
    for (uint64_t sd = 0; sd < NSEED; sd++) {
      rs_gen a[2];
      gen(sm, &l, vn, 0, 2, 100 + sd, a);
      g0[w] += verdict_of(&l, a[0].text) != RS_V_PASS;
      g1[w] += verdict_of(&l, a[1].text) != RS_V_PASS;
      rs_gen_clear(&a[0]), rs_gen_clear(&a[1]);
    }
    printf("sampled (temp 1.0) on %s (%u values), %d seeds: attempt 0 failed %u, attempt 1 failed %u\n", l.row.id,
           l.p->nvars, NSEED, g0[w], g1[w]);
    free(vn);
    rs_loaded_free(&l);
  }
  CHECK(g0[0] > 0 && g0[0] < NSEED && g0[0] > g0[1] && g1[0] > g0[0]);
  CHECK(cat[RS_V_PASS] > 0 && cat[RS_V_SYNTAX] > 0 && cat[RS_V_DATAFLOW] > 0 && cat[RS_V_HARDWARE] > 0);
  /* replay: one answer for attempt 0; attempt 1 is missing -> infra naming the file */
  char path[] = "/tmp/rs_replay_XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "{\"id\": \"%s\", \"attempt\": 0, \"answer\": \"{}\", \"infer_s\": 0.5, \"completion_tokens\": 7}\n", replay_id);
  fclose(f);
  char spec[64];
  snprintf(spec, sizeof spec, "replay:%s", path);
  rs_model *rp = rs_model_open(spec, &e);
  CHECKF(rp != NULL, "%s", e.msg);
  if (rp) {
    rs_problem dummy;
    memset(&dummy, 0, sizeof dummy);
    rs_gen_input in = {replay_id, "gfx90a", &dummy, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    uint64_t seeds[2] = {1, 2};
    rs_gen g[2];
    CHECK(rs_model_generate(rp, &in, 0, 2, seeds, g, &e) == 0);
    CHECK(!g[0].infra && !strcmp(g[0].text, "{}") && g[0].completion_tokens == 7 && g[0].infer_s == 0.5);
    CHECK(g[1].infra && strstr(g[1].error, path) && strstr(g[1].error, "attempt 1"));
    rs_gen_clear(&g[0]);
    rs_gen_clear(&g[1]);
    rs_model_close(rp);
  }
  f = fopen(path, "w");
  fprintf(f, "{\"id\": 5}\n");
  fclose(f);
  CHECK(rs_model_open(spec, &e) == NULL && strstr(e.msg, path) && strstr(e.msg, ":1:"));
  unlink(path);
  CHECK(rs_model_open("builtin:nope", &e) == NULL);
  CHECK(rs_model_open("builtin:sampled?temp=9", &e) == NULL);
  rs_model_close(ch);
  rs_model_close(sm);
  rs_model_close(tr);
  rs_corpus_close(c, &e);
  return rs_check_done("test_models");
}
