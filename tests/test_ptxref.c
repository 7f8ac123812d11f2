/* test_ptxref.c - the reference allocation of ptx instances (corpus/ptxref.c, issue 39) on the
 * mini corpus's real nvcc/ptxas 13 output (data/corpus-mini.h5: every ptx row and the sass row of
 * the same compile):
 *  1. every ptx instance gets a reference that passes both verifiers, checked here again apart
 *     from the module (parse + native + Z3); it keeps ptxas's register for no value the match did
 *     not label, for most labelled ones, and the share kept per family must not fall below the
 *     floor issue 39 reached (all 105 instances only). RS_TEST_QUICK: the small
 *     families on sm_89 only (sgemm, wmma and fa spend seconds each in Z3);
 *  2. stored: a two-row corpus (reduce sm_89: ptx + sass) gets its reference by
 *     rs_ptxref_store without recompiling; it reads back as label kind reference, never as a truth:
 *     truth stays NULL, `corpus info` counts it under "with reference" and not "with truth", the
 *     oracle checks no truth for it, `corpus export --subset verilocc-nv` writes it as a reference
 *     and --labels truth writes nothing; a corpus without the column reads without references. */
#include "front/front.h"
#include "check.h"
#include "ptx_floors.h"
#include "corpus/ptxref.h"
#include "storage/corpus.h"
#include "verify/verifier.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MINI "data/corpus-mini.h5"

static bool big_family(const char *f) {
  int k = rs_ptx_floor_of(f);
  return k >= 0 && rs_ptx_floors[k].big;
}

static void test_every_instance(void) {
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(MINI, &e);
  CHECKF(c, "%s", e.msg);
  if (!c) return;
  bool quick = getenv("RS_TEST_QUICK") != NULL;
  uint32_t ninst = 0, nref = 0;
  uint64_t values = 0, labelled = 0, kept = 0;
  /* the share of values keeping ptxas's register, per family over all targets: not below what issue
   * 39's matching reached (tests/ptx_floors.h; 25.8 % overall before) */
  enum { NF = RS_PTX_NFLOORS };
  uint64_t fkept[NF] = {0}, fvalues[NF] = {0};
  for (uint64_t i = 0; i < rs_corpus_count(c); i++) {
    rs_instance pi, sx;
    CHECK(rs_corpus_get(c, i, &pi, 0, &e) == 0);
    bool take = !strcmp(pi.form, "ptx") && !(quick && (big_family(pi.family) || strcmp(pi.target, "sm_89")));
    rs_instance_clear(&pi);
    if (!take) continue;
    CHECK(rs_corpus_get(c, i, &pi, 1, &e) == 0);
    char sid[200];
    snprintf(sid, sizeof sid, "%s/%s/%s/sass", pi.family, pi.variant, pi.target);
    int64_t si = rs_corpus_find(c, sid, &e);
    CHECKF(si >= 0, "%s: no sass row", pi.id);
    if (si < 0 || rs_corpus_get(c, (uint64_t)si, &sx, 1, &e)) {
      rs_instance_clear(&pi);
      continue;
    }
    ninst++;
    rs_module *pm = rs_module_parse(pi.id, strdup(pi.raw), strlen(pi.raw), RS_SRC_PTX, pi.target, &e);
    rs_module *sm = pm ? rs_ptxtruth_parse_sass(sx.id, strdup(sx.raw), strlen(sx.raw), sx.target, &e) : NULL;
    rs_problem *p = sm ? rs_problem_build(pm->funcs[0], &e) : NULL;
    rs_ptxtruth t;
    rs_ptxref r;
    memset(&r, 0, sizeof r);
    CHECKF(p && rs_ptxtruth_with(pm->funcs[0], p, sm, &t, &e) == 0, "%s: %s", pi.id, e.msg);
    if (p) {
      CHECKF(rs_ptxref_build(pm->funcs[0], p, &t, &r, &e) == 0 && r.map, "%s: %s %s", pi.id, e.msg, r.reason);
      CHECKF(!pi.truth && !t.truth, "%s: the mini corpus has no ptx truth", pi.id);
    }
    if (r.map) {
      nref++;
      /* independently of the module: parse, native and Z3 */
      rs_verifier vf;
      CHECK(rs_verifier_open(&vf, RS_VERIFIER_BOTH, p, 60000, &e) == 0);
      rs_candidate cd;
      rs_check_result res, z3;
      bool agree = rs_verify_text(&vf, NULL, r.map, strlen(r.map), &cd, &res, &z3);
      CHECKF(agree && res.verdict == RS_V_PASS && z3.verdict == RS_V_PASS, "%s: native %s, z3 %s: %s", pi.id,
             rs_verdict_str(res.verdict), rs_verdict_str(z3.verdict), res.ndiag ? res.diag[0] : "");
      /* kept = values whose reference register is ptxas's label; none without a label */
      uint32_t same = 0;
      for (uint32_t v = 0; v < p->nvars && cd.reg; v++) {
        const rs_label *l = &t.m.lbl[p->vars[v].fvreg];
        same += l->status == RS_LBL_LABELLED && cd.reg[v].unit == l->reg.unit && cd.reg[v].lanes == l->reg.lanes;
      }
      CHECKF(same >= r.kept && r.kept <= r.labelled && r.labelled == t.labelled, "%s: kept %u, same %u, labelled %u/%u",
             pi.id, r.kept, same, r.labelled, t.labelled);
      CHECKF(r.regs > 0 && r.regs == res.used[0], "%s: %u R registers, verifier says %u", pi.id, r.regs, res.used[0]);
      values += r.nvalues, labelled += r.labelled, kept += r.kept;
      int fk = rs_ptx_floor_of(pi.family);
      if (fk >= 0) fkept[fk] += r.kept, fvalues[fk] += r.nvalues;
      rs_candidate_free(&cd);
      rs_verifier_close(&vf);
      rs_ptxref_free(&r);
    }
    if (p) rs_ptxtruth_free(&t);
    rs_problem_free(p);
    rs_module_free(pm);
    rs_module_free(sm);
    rs_instance_clear(&pi);
    rs_instance_clear(&sx);
  }
  rs_corpus_close(c, &e);
  CHECKF(ninst == (quick ? 12u : 105u) && nref == ninst, "%u ptx instances, %u references", ninst, nref);
  /* most labels survive the PTX Problem (91.8% measured on the whole mini corpus; a wmma fragment's
   * elements k and k + 4 share one register, so only one of them can keep it) */
  CHECKF(kept * 10 >= labelled * 8, "kept %llu of %llu labelled", (unsigned long long)kept, (unsigned long long)labelled);
  for (int k = 0; k < NF && !quick; k++) {
    double pct = fvalues[k] ? 100.0 * (double)fkept[k] / (double)fvalues[k] : 0.0;
    printf("  %-7s %5.1f %% of %llu values keep ptxas's register (floor %.1f)\n", rs_ptx_floors[k].family, pct,
           (unsigned long long)fvalues[k], rs_ptx_floors[k].kept);
    CHECKF(pct >= rs_ptx_floors[k].kept, "%s: %.1f%% of values keep ptxas's register, below the floor %.1f",
           rs_ptx_floors[k].family, pct, rs_ptx_floors[k].kept);
  }
  /* issue 39's "done when": on average >= 60 % of values keep ptxas's register (63.7 % measured) */
  CHECKF(quick || kept * 100 >= values * 63, "kept %llu of %llu values (63.7%% measured)", (unsigned long long)kept,
         (unsigned long long)values);
  fprintf(stderr, "ptxref: %u references, all verified; %.1f%% of %llu values keep ptxas's register (%.1f%% of the labelled)\n",
          nref, values ? 100.0 * kept / values : 0.0, (unsigned long long)values, labelled ? 100.0 * kept / labelled : 0.0);
}

static void test_store(void) {
  const char *path = "/tmp/rs_test_ptxref.h5";
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(MINI, &e), *o = rs_corpus_create(path, &e);
  CHECKF(c && o, "%s", e.msg);
  if (!c || !o) return;
  const char *ids[2] = {NULL, NULL};
  char pid[200] = "", sid[200] = "";
  for (uint64_t i = 0; i < rs_corpus_count(c) && !pid[0]; i++) {
    rs_instance in;
    CHECK(rs_corpus_get(c, i, &in, 0, &e) == 0);
    if (!strcmp(in.family, "reduce") && !strcmp(in.target, "sm_89") && !strcmp(in.form, "ptx")) {
      snprintf(pid, sizeof pid, "%s", in.id);
      snprintf(sid, sizeof sid, "%s/%s/%s/sass", in.family, in.variant, in.target);
    }
    rs_instance_clear(&in);
  }
  ids[0] = pid, ids[1] = sid;
  for (int k = 0; k < 2; k++) {
    int64_t i = rs_corpus_find(c, ids[k], &e);
    rs_instance in;
    CHECKF(i >= 0 && rs_corpus_get(c, (uint64_t)i, &in, 1, &e) == 0, "%s", ids[k]);
    if (i < 0) continue;
    in.split = RS_SPLIT_TEST;
    free(in.reference); /* the shipped mini corpus has them: start without */
    in.reference = NULL;
    in.reference_kept = in.reference_labelled = in.reference_regs = 0;
    CHECK(rs_corpus_append(o, &in, &e) == 0);
    rs_instance_clear(&in);
  }
  rs_corpus_close(c, &e);
  CHECK(rs_corpus_close(o, &e) == 0);
  /* before: the column exists but holds nothing */
  c = rs_corpus_open(path, &e);
  rs_instance in;
  CHECK(c && rs_corpus_get(c, 0, &in, 1, &e) == 0 && !in.reference && rs_instance_label_kind(&in) == RS_LABEL_NONE);
  rs_instance_clear(&in);
  rs_corpus_close(c, &e);
  rs_ptxref_stats st;
  CHECKF(rs_ptxref_store(path, &st, &e) == 0, "%s", e.msg);
  CHECKF(st.ptx == 1 && st.refs == 1 && st.truths == 0 && st.refused == 0 && st.kept > 0, "ptx %u refs %u kept %llu", st.ptx,
         st.refs, (unsigned long long)st.kept);
  c = rs_corpus_open(path, &e);
  CHECK(c && rs_corpus_count(c) == 2);
  CHECK(c && rs_corpus_get(c, 0, &in, 0, &e) == 0 && in.reference_regs > 0 && !in.reference && !in.truth);
  CHECK(c && rs_corpus_get(c, 0, &in, 1, &e) == 0 && in.reference && !in.truth && in.truth_reason[0] &&
        rs_instance_label_kind(&in) == RS_LABEL_REFERENCE && in.reference_kept == st.kept);
  rs_instance_clear(&in);
  rs_corpus_close(c, &e);
  char cmd[600], out[8192];
  snprintf(cmd, sizeof cmd, "%s corpus info %s 2>&1 | grep '| ptx |'", rs_check_cli, path);
  CHECKF(rs_check_run(cmd, out, sizeof out) == 0 && strstr(out, "| reduce | sm_89 | ptx | 1 | 0 | 1 |"), "info: %s", out);
  snprintf(cmd, sizeof cmd, "%s corpus export %s --split test --subset verilocc-nv --out /tmp/rs_test_ptxref.jsonl 2>&1 && grep -c '\"label_kind\":\"reference\"' /tmp/rs_test_ptxref.jsonl",
           rs_check_cli, path);
  CHECKF(rs_check_run(cmd, out, sizeof out) == 0 && strstr(out, "1 pairs written") && strstr(out, "0 ground truths, 1 references") &&
             strstr(out, "\n1\n"),
         "export: %s", out);
  snprintf(cmd, sizeof cmd, "%s corpus export %s --split test --subset verilocc-nv --labels truth --out /tmp/rs_test_ptxref.jsonl 2>&1",
           rs_check_cli, path);
  CHECKF(rs_check_run(cmd, out, sizeof out) == 0 && strstr(out, "0 pairs written") && strstr(out, "1 instances of the selection have no ground truth"),
         "export --labels truth: %s", out);
  snprintf(cmd, sizeof cmd, "%s corpus export %s --split test --subset verilocc-nv --labels truths 2>&1", rs_check_cli, path);
  CHECKF(rs_check_run(cmd, out, sizeof out) == 2 && strstr(out, "--labels truth|reference|any"), "bad --labels: %s", out);
  snprintf(cmd, sizeof cmd, "%s oracle %s --mutants 1 2>&1 | grep -i truths", rs_check_cli, path);
  rs_check_run(cmd, out, sizeof out);
  CHECKF(strstr(out, "truths 1/1") && !strstr(out, "truths 2/"), "oracle counts the sass truth only: %s", out);
  unlink(path);
  unlink("/tmp/rs_test_ptxref.jsonl");
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  test_store();
  test_every_instance();
  return rs_check_done("test_ptxref");
}
