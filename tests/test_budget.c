/* test_budget.c - the function's register budget from its launch bounds, on real llc-14 output:
 *  - tests/fixtures/amd-budget/hgemm_mfma16_w4x4_r1x1: a 1024-work-item MFMA kernel
 *    ("amdgpu-flat-work-group-size"="1024,1024", AGPRs used): the Problem carries 64 VGPRs and
 *    64 AGPRs (what SIRegisterInfo::getReservedRegs leaves it; SGPRs keep the file's 102);
 *  - LLVM's own allocation (the truth, postsplit -> final) passes both verifiers;
 *  - the truth with one VGPR value moved to v70 (inside the file's 256, past the function's 64)
 *    is hardware (budget) for both verifiers, naming the launch bounds; the same move to a free
 *    register below 64 is not a budget failure;
 *  - llc-14's MachineVerifier agrees: emitting the v70 answer with --force is refused
 *    ("reserved register");
 *  - builtin:chaitin allocates the prera form within the budget;
 *  - the rule (target fn_budget) against the reserved sets measured with llc-14/llc-16 on every
 *    AMD architecture (docs/emit.md, "The function's register budget"). */
#include "front/front.h"
#include "check.h"
#include "corpus/instance.h"
#include "emit/emit.h"
#include "corpus/truth.h"
#include "verify/verifier.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint32_t rs_chaitin_allocate(const rs_problem *p, bool free_mode, rs_preg *out);

#define FX "tests/fixtures/amd-budget/hgemm_mfma16_w4x4_r1x1"

static int file_index(const rs_target *t, const char *name) {
  for (uint32_t f = 0; f < t->nfiles; f++)
    if (!strcmp(t->files[f].name, name)) return (int)f;
  return -1;
}

/* Both verifiers on one answer; returns native's verdict, res gets native's result. */
static rs_verdict both(const rs_problem *p, const char *json, rs_check_result *res, rs_check_result *z3) {
  rs_verifier vf;
  rs_err e;
  if (rs_verifier_open(&vf, RS_VERIFIER_BOTH, p, 20000, &e)) {
    CHECKF(0, "%s", e.msg);
    return RS_V_INFRA;
  }
  rs_candidate c;
  bool agree = rs_verify_text(&vf, NULL, json, strlen(json), &c, res, z3);
  CHECKF(agree, "native %s, z3 %s", rs_verdict_str(res->verdict), rs_verdict_str(z3->verdict));
  rs_candidate_free(&c);
  rs_verifier_close(&vf);
  return res->verdict;
}

static void fixture(void) {
  rs_err e = {{0}};
  rs_loaded l;
  rs_module *mf = rs_module_load(FX ".final.mir", NULL, &e);
  if (!mf || rs_file_load(FX ".postsplit.mir", NULL, &l, &e)) {
    CHECKF(0, "%s", e.msg);
    rs_module_free(mf);
    return;
  }
  const rs_problem *p = l.p;
  const rs_target *t = p->tgt;
  int fv = file_index(t, "vgpr"), fa = file_index(t, "agpr"), fs = file_index(t, "sgpr");
  CHECK(!strcmp(t->name, "gfx90a") && fv >= 0 && fa >= 0 && fs >= 0);
  CHECKF(p->launch.wg_min == 1024 && p->launch.wg_max == 1024 && p->launch.uses_agpr && p->launch_waves == 4,
         "wg %u..%u agpr %d waves %u", p->launch.wg_min, p->launch.wg_max, p->launch.uses_agpr, p->launch_waves);
  CHECKF(p->budget[fv] == 64 && p->budget[fa] == 64 && p->budget[fs] == t->files[fs].budget, "budget v %u a %u s %u", p->budget[fv],
         p->budget[fa], p->budget[fs]);
  rs_alignment a;
  if (rs_align(l.f, mf->funcs[0], &a, &e)) {
    CHECKF(0, "%s", e.msg);
    rs_loaded_free(&l);
    rs_module_free(mf);
    return;
  }
  char *truth = rs_truth_json(p, a.assign);
  rs_check_result nr, zr;
  CHECKF(both(p, truth, &nr, &zr) == RS_V_PASS, "truth: %s", nr.ndiag ? nr.diag[0] : "");
  CHECK(zr.verdict == RS_V_PASS);

  /* one 32-bit VGPR value to v70, then to the lowest register below 64 where it is a member */
  uint32_t mv = UINT32_MAX;
  for (uint32_t v = 0; v < p->nvars && mv == UINT32_MAX; v++)
    if (p->vars[v].width == 1 && t->classes[p->vars[v].cls].files == 1u << fv) mv = v;
  CHECK(mv != UINT32_MAX);
  if (mv != UINT32_MAX) {
    rs_preg *as = rs_xcalloc(l.f->nvregs + 1, sizeof *as);
    memcpy(as, a.assign, sizeof *as * l.f->nvregs);
    as[p->vars[mv].fvreg] = (rs_preg){t->files[fv].first + 70, 0x3};
    char *bad = rs_truth_json(p, as);
    rs_verdict v = both(p, bad, &nr, &zr);
    CHECKF(v == RS_V_HARDWARE && nr.counts[RS_VK_BUDGET] == 1 && zr.verdict == RS_V_HARDWARE &&
               zr.counts[RS_VK_BUDGET] >= 1,
           "v70: native %s (budget %u), z3 %s", rs_verdict_str(v), nr.counts[RS_VK_BUDGET], rs_verdict_str(zr.verdict));
    CHECKF(nr.ndiag && strstr(nr.diag[0], "launch bounds: 1024 work-items") && strstr(nr.diag[0], "64 vgpr"), "%s",
           nr.ndiag ? nr.diag[0] : "");
    /* LLVM's MachineVerifier on the same answer: the register is reserved in this function */
    rs_emit_opts o;
    memset(&o, 0, sizeof o);
    rs_llc_opts_default(&o.llc);
    o.force = true;
    char tmpl[] = "/tmp/test_budget.XXXXXX", out[600];
    if (mkdtemp(tmpl)) {
      snprintf(out, sizeof out, "%s/v70.s", tmpl);
      rs_emit_result r;
      int rc = rs_emit_answer(&l, bad, strlen(bad), out, RS_EMIT_ASM, &o, &r, &e);
      CHECKF(rc == 1 && r.llc_rejected && r.llc_diag && strstr(r.llc_diag, "reserved register"), "rc %d: %.300s", rc,
             r.llc_diag ? r.llc_diag : e.msg);
      rs_emit_result_free(&r);
      unlink(out);
      rmdir(tmpl);
    }
    free(bad);
    /* below the budget the same value is no budget failure (dataflow at worst) */
    for (uint32_t u = 0; u < 64; u++) {
      as[p->vars[mv].fvreg] = (rs_preg){t->files[fv].first + u, 0x3};
      char *ok = rs_truth_json(p, as);
      rs_verdict w = both(p, ok, &nr, &zr);
      free(ok);
      if (w == RS_V_PASS) break;
      CHECKF(w == RS_V_DATAFLOW && nr.counts[RS_VK_BUDGET] == 0, "v%u: %s", u, nr.ndiag ? nr.diag[0] : "");
    }
    free(as);
  }
  free(truth);
  rs_alignment_free(&a);
  rs_loaded_free(&l);
  rs_module_free(mf);

  /* builtin:chaitin on the prera form stays inside the budget, and its answer passes */
  if (rs_file_load(FX ".prera.mir", NULL, &l, &e)) {
    CHECKF(0, "%s", e.msg);
    return;
  }
  rs_preg *out = rs_xcalloc(l.p->nvars + 1, sizeof *out);
  CHECK(rs_chaitin_allocate(l.p, false, out) == 0);
  unsigned top[RS_MAX_FILES] = {0};
  for (uint32_t v = 0; v < l.p->nvars; v++) {
    int f = rs_target_file_of(l.p->tgt, out[v].unit);
    if (f >= 0 && f < RS_MAX_FILES && out[v].lanes) {
      unsigned hi = out[v].unit - l.p->tgt->files[f].first + rs_lanes_units(out[v].lanes);
      if (hi > top[f]) top[f] = hi;
    }
  }
  CHECKF(top[fv] <= 64 && top[fa] <= 64 && top[fs] <= t->files[fs].budget, "chaitin used v %u a %u s %u", top[fv], top[fa], top[fs]);
  free(out);
  rs_loaded_free(&l);
}

/* The rule against llc's reserved sets, measured with the MachineVerifier ("isRenamable set on
 * reserved register" for the first register past the budget) on a small kernel per row. With
 * llc-14 the AGPR budget of a function without AGPRs cannot be observed (naming one makes the
 * function use AGPRs): those rows give the rule's N - 256. s 74 at 8 waves: LLVM reserves from
 * s74 or s76 (flat scratch or not; docs/emit.md). */
static void rule(void) {
  static const struct {
    const char *target;
    uint32_t wg, wpe;
    bool agpr;
    uint32_t v, a, s; /* measured budgets; s 0: not limited below the file's */
  } rows[] = {
      {"gfx90a", 256, 0, false, 256, 256, 0},   {"gfx90a", 512, 0, false, 256, 0, 0},
      {"gfx90a", 512, 0, true, 128, 128, 0},    {"gfx90a", 1024, 0, false, 128, 0, 0},
      {"gfx90a", 1024, 0, true, 64, 64, 0},     {"gfx90a", 2048, 0, false, 128, 0, 0},
      {"gfx90a", 64, 3, true, 84, 84, 0},       {"gfx90a", 64, 5, true, 48, 48, 0},
      {"gfx90a", 256, 8, false, 64, 0, 74},     {"gfx90a", 1024, 2, true, 64, 64, 0},
      {"gfx90a", 64, 9, false, 256, 256, 0},    {"gfx908", 512, 0, true, 128, 128, 0},
      {"gfx908", 1024, 0, true, 64, 64, 0},     {"gfx908", 64, 3, true, 84, 84, 0},
      {"gfx940", 1024, 0, false, 128, 0, 0},    {"gfx940", 512, 0, false, 256, 0, 0},
      {"gfx940", 256, 8, false, 64, 0, 74},     {"gfx1030", 1024, 0, false, 128, 0, 0},
      {"gfx1030", 256, 8, false, 128, 0, 0},    {"gfx1030w64", 1024, 0, false, 128, 0, 0},
      {"gfx1100", 1024, 0, false, 192, 0, 0},   {"gfx1100w64", 1024, 0, false, 192, 0, 0},
      {"gfx1100", 256, 8, false, 192, 0, 0},    {"gfx1030", 512, 0, false, 256, 0, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    const rs_target *t = rs_target_by_name(rows[i].target);
    CHECK(t && t->fn_budget);
    if (!t || !t->fn_budget) continue;
    uint32_t b[RS_MAX_FILES] = {0};
    for (uint32_t f = 0; f < t->nfiles; f++) b[f] = t->files[f].budget;
    rs_launch ln = {rows[i].wg, rows[i].wg, rows[i].wpe, 0, rows[i].agpr, false, 0, 0};
    unsigned w = 0;
    t->fn_budget(t, &ln, b, &w);
    int fv = file_index(t, "vgpr"), fa = file_index(t, "agpr"), fs = file_index(t, "sgpr");
    uint32_t want_s = rows[i].s ? rows[i].s : t->files[fs].budget;
    CHECKF(b[fv] == rows[i].v && (fa < 0 || b[fa] == rows[i].a) && b[fs] == want_s,
           "%s wg %u wpe %u agpr %d: v %u a %u s %u, llc: v %u a %u s %u", rows[i].target, rows[i].wg, rows[i].wpe,
           rows[i].agpr, b[fv], fa < 0 ? 0 : b[fa], b[fs], rows[i].v, rows[i].a, want_s);
  }
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  rule();
  fixture();
  return rs_check_done("test_budget");
}
