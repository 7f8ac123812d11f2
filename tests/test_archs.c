/* test_archs.c - the AMD architectures beyond gfx90a on real llc-14 (gfx908, gfx1030), llc-16
 * (gfx940, gfx1100) and llc-22 (gfx942, gfx950, gfx1200, gfx1201: three allocation rounds)
 * output: tests/fixtures/ARCH/ (scripts/gen-arch-fixtures.sh).
 * Per fixture:
 *  - the target comes from the file (target-cpu, +wavefrontsize64) and is the expected one;
 *  - parser accounting: instructions and operands equal an independent line-level count;
 *  - LLVM's allocation (postsplit aligned with final, mir/align.c) is exact truth: it satisfies
 *    every constraint of our Problem, and so does the pre-RA truth where LLVM split nothing;
 *  - the pinned oracle: the truth verifies and every mutant is rejected with its category, by
 *    both verifiers (native, Z3), 0 false rejects;
 *  - register facts against what llc printed in NAME.s: our registers-used count of the final MIR
 *    equals NumVgprs/NumAgprs; .vgpr_count is alignTo(V,4)+A with accum_offset = alignTo(V,4) on
 *    the unified-file CDNA2/3 targets and max(V,A) on gfx908 (separate files); the wave size is
 *    the target's; .sgpr_count is llc's NumSgprs (TotalNumSgprs in llc-22) and at least the SGPRs
 *    the final MIR names; the target's occupancy from llc's register counts, bounded by the
 *    non-register limit llc records in the MIR (machineFunctionInfo occupancy: LDS and work-group
 *    size), equals llc's "; Occupancy", and so does the target's own LDS bound (lds_occupancy
 *    hook) in its place; register-bound cases are counted and required.
 *  - llc-22 architectures: the truth of both forms emitted through llc-22 (-start-after the last
 *    round's rewriter, from its pipeline) passes LLVM's MachineVerifier with LLVM's counts equal
 *    to the verifier's (whole-wave registers counted where LLVM moves them);
 *  - the allocation rounds read from the real llc-14/16/22 pipelines (2, 2, 3), and a pipeline of
 *    an unknown shape (a round without its rewriter, a fourth round) refused with its passes.
 * Bad input of the new kinds: a MIR of an unknown architecture (gfx1250, which llc-22 compiles
 * and we have no data for) and a class of another architecture exit 2 naming it. Liveness against llc's liveins is in test_liveins.c. */
#include "front/front.h"
#include "check.h"
#include "analysis/problem.h"
#include "corpus/truth.h"
#include "corpus/instance.h"
#include "emit/emit.h"
#include "mir/rounds.h"
#include "verify/oracle.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
  const char *dir, *target, *target_w64;
  bool agprs, unified, emit; /* emit: the truths through llc (llc-22 architectures) */
} archs[] = {
    {"tests/fixtures/gfx908", "gfx908", NULL, true, false, false},
    {"tests/fixtures/gfx940", "gfx940", NULL, true, true, false},
    {"tests/fixtures/gfx1030", "gfx1030", "gfx1030w64", false, false, false},
    {"tests/fixtures/gfx1100", "gfx1100", "gfx1100w64", false, false, false},
    {"tests/fixtures/gfx942", "gfx942", NULL, true, true, true},
    {"tests/fixtures/gfx950", "gfx950", NULL, true, true, true},
    {"tests/fixtures/gfx1200", "gfx1200", "gfx1200w64", false, false, true},
    {"tests/fixtures/gfx1201", "gfx1201", "gfx1201w64", false, false, true},
};

/* ---- independent accounting (the rules of test_mir_parse.c) ---- */
static int count_items(const char *s, const char *e) {
  int depth = 0, n = 0;
  bool any = false;
  for (const char *c = s; c < e; c++) {
    if (*c == '(' || *c == '[' || *c == '{' || *c == '<') depth++;
    else if (*c == ')' || *c == ']' || *c == '}' || *c == '>') depth--;
    else if (*c == ',' && depth == 0) n++;
    if (*c != ' ') any = true;
  }
  return any ? n + 1 : 0;
}

static void independent_count(const char *text, long *insts, long *ops) {
  *insts = *ops = 0;
  bool body = false;
  static char line[65536];
  for (const char *c = text; c && *c;) {
    const char *nl = strchr(c, '\n');
    const char *end = nl ? nl : c + strlen(c);
    if (!strncmp(c, "body:", 5)) body = true;
    else if (body && c[0] != ' ' && end > c) body = false;
    else if (body && end - c > 4 && !strncmp(c, "    ", 4)) {
      const char *s = c + 4;
      if (strncmp(s, "successors:", 11) && strncmp(s, "liveins:", 8) && *s != ';') {
        size_t n = (size_t)(end - s) < sizeof line - 1 ? (size_t)(end - s) : sizeof line - 1;
        memcpy(line, s, n);
        line[n] = 0;
        char *cut = strstr(line, " :: ");
        if (cut) *cut = 0;
        if ((cut = strstr(line, ", debug-location"))) *cut = 0;
        (*insts)++;
        char *eq = strstr(line, " = ");
        const char *rhs = line;
        if (eq) {
          *ops += count_items(line, eq);
          rhs = eq + 3;
        }
        static const char *const flags[] = {"nofpexcept ", "nsw ", "nuw ", "exact ", "contract ", "afn ",
                                            "reassoc ", "nnan ", "ninf ", "nsz ", "arcp ", "frame-setup ",
                                            "frame-destroy ", "nomerge ", "unpredictable ", "noconvergent ",
                                            "nneg ", "disjoint ", "nusw ", "samesign ", "inbounds "};
        for (bool again = true; again;) {
          again = false;
          for (size_t k = 0; k < sizeof flags / sizeof *flags; k++)
            if (!strncmp(rhs, flags[k], strlen(flags[k]))) rhs += strlen(flags[k]), again = true;
        }
        const char *sp = strchr(rhs, ' ');
        if (sp) *ops += count_items(sp + 1, rhs + strlen(rhs));
      }
    }
    c = nl ? nl + 1 : NULL;
  }
}

/* "; NumVgprs: 81" (llc comment) or "    .vgpr_count:     81" / ".amdhsa_accum_offset 76"; -1 if absent. */
static long asm_num(const char *s, const char *key) {
  const char *c = strstr(s, key);
  return c ? strtol(c + strlen(key), NULL, 10) : -1;
}

static char *slurp(const char *path) {
  rs_err e = {{0}};
  char *t = rs_read_file(path, NULL, &e);
  CHECKF(t != NULL, "%s", e.msg);
  return t;
}

static void report(void *ctx, const char *line) {
  (void)ctx;
  fprintf(stderr, "  oracle: %s\n", line);
}

typedef struct {
  unsigned files, insts, ops, truths, prera_truths, reg_bound, occ_checked, emitted, emit_equal;
  rs_oracle_stats os;
} tally;

/* One llc stage of a fixture (0 prera, 1 postsplit, 2 final), its path in path[]. */
static rs_module *load_stage(const char *stem, int s, char *path, size_t n) {
  static const char *const stage[3] = {"prera", "postsplit", "final"};
  snprintf(path, n, "%s.%s.mir", stem, stage[s]);
  rs_err e = {{0}};
  rs_module *m = rs_module_load(path, NULL, &e);
  CHECKF(m != NULL, "%s", e.msg);
  return m;
}

/* Emit a truth of one form through llc (the architecture's: llc-22 here) with the MachineVerifier. */
static void emit_truth(const char *path, const char *json, tally *t) {
  rs_loaded l;
  rs_err e = {{0}};
  if (rs_file_load(path, NULL, &l, &e)) {
    CHECKF(0, "%s: %s", path, e.msg);
    return;
  }
  char out[600];
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(out, sizeof out, "%s/test_archs.%d.s", dir, (int)getpid());
  rs_emit_opts o;
  memset(&o, 0, sizeof o);
  rs_llc_opts_default(&o.llc);
  rs_emit_result r;
  int rc = rs_emit_answer(&l, json, strlen(json), out, RS_EMIT_ASM, &o, &r, &e);
  CHECKF(rc == 0 && !r.llc_rejected, "%s: emit %d: %s %.600s", path, rc, e.msg, r.llc_diag ? r.llc_diag : "");
  if (rc == 0) {
    t->emitted++;
    CHECKF(r.counts_checked && !r.counts_diff[0], "%s: LLVM's counts differ from the verifier's: %s", path, r.counts_diff);
    t->emit_equal += r.counts_checked && !r.counts_diff[0];
  }
  unlink(out);
  rs_emit_result_free(&r);
  rs_loaded_free(&l);
}

static void check_variant(const char *stem, const char *want_target, bool agprs, bool unified, bool emit, tally *t) {
  char path[1100];
  rs_module *m[3] = {NULL, NULL, NULL};
  for (int s = 0; s < 3; s++) {
    m[s] = load_stage(stem, s, path, sizeof path);
    if (!m[s]) goto out;
    CHECKF(!strcmp(m[s]->tgt->name, want_target), "%s: target %s, expected %s", path, m[s]->tgt->name, want_target);
    long ci, co, pi = 0, po = 0;
    independent_count(m[s]->text, &ci, &co);
    for (uint32_t k = 0; k < m[s]->nfuncs; k++) pi += m[s]->funcs[k]->ninsts, po += m[s]->funcs[k]->nops;
    CHECKF(pi == ci && po == co, "%s: parser %ld/%ld instructions/operands, line count %ld/%ld", path, pi, po, ci, co);
    CHECKF(m[s]->funcs[0]->allocated == (s == 2), "%s: allocated=%d", path, m[s]->funcs[0]->allocated);
    t->files++;
    t->insts += (unsigned)pi;
    t->ops += (unsigned)po;
  }
  const rs_func *pre = m[0]->funcs[0], *ps = m[1]->funcs[0], *fin = m[2]->funcs[0];
  rs_err e = {{0}};
  /* truth: exact through the stage alignment */
  rs_problem *pq = rs_problem_build(ps, &e), *pp = rs_problem_build(pre, &e);
  CHECKF(pq && pp, "%s: %s", stem, e.msg);
  rs_alignment al;
  if (pq && pp && rs_truth_postsplit(ps, fin, &al, &e) == 0) {
    uint32_t nm, bad = rs_truth_check(pq, al.assign, &nm);
    CHECKF(bad == 0 && nm == 0, "%s: LLVM's allocation violates %u constraints (%u class) of the postsplit Problem", stem,
           bad, nm);
    if (bad == 0 && nm == 0) {
      t->truths++;
      char *json = rs_truth_json(pq, al.assign);
      uint32_t miss = rs_oracle_instance(pq, stem, json, 10, 7, 20000, &t->os, report, NULL);
      CHECKF(miss == 0, "%s: pinned oracle: %u misses", stem, miss);
      if (emit) {
        snprintf(path, sizeof path, "%s.postsplit.mir", stem);
        emit_truth(path, json, t);
      }
      free(json);
    }
    rs_preg *as = calloc(pre->nvregs + 1, sizeof *as);
    if (rs_truth_prera(pre, ps, &al, as) == 0) {
      bad = rs_truth_check(pp, as, &nm);
      CHECKF(bad == 0 && nm == 0, "%s: pre-RA truth violates %u constraints (%u class)", stem, bad, nm);
      t->prera_truths += bad == 0 && nm == 0;
      if (emit && bad == 0 && nm == 0) {
        char *json = rs_truth_json(pp, as);
        snprintf(path, sizeof path, "%s.prera.mir", stem);
        emit_truth(path, json, t);
        free(json);
      }
    }
    free(as);
    rs_alignment_free(&al);
  } else {
    CHECKF(0, "%s: stages do not align: %s", stem, e.msg);
  }
  rs_problem_free(pq);
  rs_problem_free(pp);
  /* register facts and occupancy against the .s */
  snprintf(path, sizeof path, "%s.s", stem);
  char *s = slurp(path);
  if (s) {
    long V = asm_num(s, "; NumVgprs: "), A = asm_num(s, "; NumAgprs: "), S = asm_num(s, "; NumSgprs: ");
    if (S < 0) S = asm_num(s, "; TotalNumSgprs: "); /* llc-22's name */
    long sc = asm_num(s, ".sgpr_count:");
    long occ = asm_num(s, "; Occupancy: "), vc = asm_num(s, ".vgpr_count:"), acc = asm_num(s, ".amdhsa_accum_offset ");
    long wave = asm_num(s, ".wavefront_size:"), mfi = asm_num(m[2]->text, "\n  occupancy:");
    const rs_target *tg = fin->tgt;
    CHECKF(V > 0 && S > 0 && occ > 0 && vc > 0 && mfi > 0 && sc > 0, "%s: missing register facts", path);
    CHECKF(sc == S, "%s: .sgpr_count %ld, NumSgprs %ld", path, sc, S);
    CHECKF(agprs == (A >= 0), "%s: NumAgprs line %s, the target says %s AGPRs", path, A >= 0 ? "present" : "absent",
           agprs ? "has" : "no");
    bool has_afile = false;
    for (uint32_t f = 0; f < tg->nfiles; f++) has_afile |= !strcmp(tg->files[f].name, "agpr");
    CHECKF(agprs == has_afile, "%s: target %s AGPR file", path, tg->name);
    if (A < 0) A = 0;
    CHECKF(wave == (strstr(tg->name, "w64") || agprs ? 64 : 32), "%s: wavefront %ld for target %s", path, wave, tg->name);
    if (unified) {
      CHECKF(acc == (V + 3) / 4 * 4, "%s: accum_offset %ld, alignTo(%ld, 4) expected", path, acc, V);
      CHECKF(vc == (A ? (V + 3) / 4 * 4 + A : V), "%s: .vgpr_count %ld for %ld VGPRs + %ld AGPRs (unified)", path, vc, V, A);
    } else {
      CHECKF(acc < 0, "%s: accum_offset on a target with separate or no AGPRs", path);
      CHECKF(vc == (V > A ? V : A), "%s: .vgpr_count %ld for %ld VGPRs, %ld AGPRs (separate files)", path, vc, V, A);
    }
    unsigned used[RS_MAX_FILES];
    rs_func_regs_used(fin, used);
    for (uint32_t f = 0; f < tg->nfiles; f++) {
      if (!strcmp(tg->files[f].name, "vgpr")) CHECKF(used[f] == (unsigned)V, "%s: %u VGPRs used, llc says %ld", path, used[f], V);
      if (!strcmp(tg->files[f].name, "agpr")) CHECKF(used[f] == (unsigned)A, "%s: %u AGPRs used, llc says %ld", path, used[f], A);
    }
    /* occupancy from llc's counts; files by name so the check does not assume an order */
    unsigned cnt[RS_MAX_FILES] = {0};
    for (uint32_t f = 0; f < tg->nfiles; f++) {
      if (!strcmp(tg->files[f].name, "vgpr")) cnt[f] = (unsigned)V;
      if (!strcmp(tg->files[f].name, "agpr")) cnt[f] = (unsigned)A;
      if (!strcmp(tg->files[f].name, "sgpr")) cnt[f] = (unsigned)S;
    }
    unsigned reg = tg->occupancy(tg, cnt), want = reg < (unsigned)mfi ? reg : (unsigned)mfi;
    CHECKF(want == (unsigned)occ, "%s: occupancy: ours %u from %ld V / %ld A / %ld S (bounded by %ld), llc printed %ld",
           path, reg, V, A, S, mfi, occ);
    long lds = asm_num(m[2]->text, "\n  ldsSize:");
    const char *wg = strstr(m[2]->text, "\"amdgpu-flat-work-group-size\"=\"");
    long wgs = wg && strchr(wg + 31, ',') ? strtol(strchr(wg + 31, ',') + 1, NULL, 10) : 256;
    unsigned lo = tg->lds_occupancy ? tg->lds_occupancy(tg, (unsigned)lds, (unsigned)wgs) : 0;
    CHECKF(lds >= 0 && (reg < lo ? reg : lo) == (unsigned)occ, "%s: occupancy: ours %u from registers, %u from %ld bytes of LDS "
           "and %ld work-items, llc printed %ld", path, reg, lo, lds, wgs, occ);
    t->occ_checked++;
    unsigned zero[RS_MAX_FILES] = {0};
    t->reg_bound += reg == (unsigned)occ && reg < tg->occupancy(tg, zero); /* registers, not the cap, decide */
    free(s);
  }
out:
  for (int k = 0; k < 3; k++) rs_module_free(m[k]);
}

static void bad_input(void) {
  char out[4096], cmd[2048];
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  /* a class of another architecture: gfx940's vreg_64_align2 in a gfx908 file */
  snprintf(cmd, sizeof cmd,
           "d=$(mktemp -d %s/archs.XXXXXX) && sed 's/class: vreg_64,/class: vreg_64_align2,/' "
           "tests/fixtures/gfx908/sgemm_f64_t8x4.prera.mir > $d/x.mir && %s inspect $d/x.mir 2>&1; rc=$?; rm -rf $d; exit $rc",
           dir, rs_check_cli);
  int rc = rs_check_run(cmd, out, sizeof out);
  CHECKF(rc == 2 && strstr(out, "vreg_64_align2") && strstr(out, "not a gfx908 class") && strstr(out, "gfx90a"),
         "foreign class: rc %d: %s", rc, out);
  CHECKF(strstr(out, "x.mir:") != NULL, "foreign class error without file:line: %s", out);
  /* AGPRs do not exist on RDNA */
  snprintf(cmd, sizeof cmd,
           "d=$(mktemp -d %s/archs.XXXXXX) && sed 's/class: vgpr_32,/class: agpr_32,/' "
           "tests/fixtures/gfx1030/sgemm_f64_t8x4.prera.mir > $d/x.mir && %s inspect $d/x.mir 2>&1; rc=$?; rm -rf $d; exit $rc",
           dir, rs_check_cli);
  rc = rs_check_run(cmd, out, sizeof out);
  CHECKF(rc == 2 && strstr(out, "agpr_32") && strstr(out, "not a gfx1030 class"), "agpr on gfx1030: rc %d: %s", rc, out);
  snprintf(cmd, sizeof cmd,
           "d=$(mktemp -d %s/archs.XXXXXX) && sed 's/\\$vgpr0/$agpr0/' tests/fixtures/gfx1100/sgemm_f64_t8x4.final.mir"
           " > $d/x.mir && %s inspect $d/x.mir 2>&1; rc=$?; rm -rf $d; exit $rc",
           dir, rs_check_cli);
  rc = rs_check_run(cmd, out, sizeof out);
  CHECKF(rc == 2 && strstr(out, "agpr0"), "$agpr0 on gfx1100: rc %d: %s", rc, out);
  /* an architecture we have no data for: gfx1250, which llc-22 compiles (1024 VGPRs, wave32) */
  snprintf(cmd, sizeof cmd,
           "d=$(mktemp -d %s/archs.XXXXXX) && sed 's/\"target-cpu\"=\"gfx1200\"/\"target-cpu\"=\"gfx1250\"/' "
           "tests/fixtures/gfx1200/sgemm_f64_t8x4.prera.mir > $d/x.mir && %s inspect $d/x.mir 2>&1; rc=$?; rm -rf $d; exit $rc",
           dir, rs_check_cli);
  rc = rs_check_run(cmd, out, sizeof out);
  CHECKF(rc == 2 && strstr(out, "unsupported target-cpu 'gfx1250'") && strstr(out, "x.mir:") && strstr(out, "gfx1201"),
         "unknown arch: rc %d: %s", rc, out);
}

/* llc-16 spilled %2 of this kernel around a loop: greedy replaced the COPY that read it by a
 * reload, so %2's other operands all kept v0 and nothing links it to the reload's register. The
 * prera truth must count it as spilled (it did not, and its map then broke the pre-RA liveness:
 * "%2 (v0) and %2474 (v0) are live at once"), and the postsplit truth stays exact. */
static void spill_through_copy(void) {
  const char *stem = "tests/fixtures/gfx1100/fa_hd96_bc16_f32_c2_d4";
  char path[256];
  rs_module *m[3];
  for (int s = 0; s < 3; s++) m[s] = load_stage(stem, s, path, sizeof path);
  rs_err e = {{0}};
  rs_alignment al;
  if (m[0] && m[1] && m[2] && rs_truth_postsplit(m[1]->funcs[0], m[2]->funcs[0], &al, &e) == 0) {
    const rs_func *pre = m[0]->funcs[0];
    rs_preg *as = calloc(pre->nvregs + 1, sizeof *as);
    uint32_t n = rs_truth_prera(pre, m[1]->funcs[0], &al, as), v2 = UINT32_MAX;
    for (uint32_t v = 0; v < pre->nvregs; v++)
      if (!strcmp(pre->vregs[v].name, "%2")) v2 = v;
    CHECKF(n == 2 && v2 != UINT32_MAX && !as[v2].lanes, "%s: prera: %u values split or spilled, %%2 %s", stem, n,
           v2 == UINT32_MAX ? "missing" : as[v2].lanes ? "kept one register" : "counted");
    free(as);
    rs_alignment_free(&al);
  } else {
    CHECKF(0, "%s: stages do not align: %s", stem, e.msg);
  }
  for (int s = 0; s < 3; s++) rs_module_free(m[s]);
}

/* Membership of one register (assembly spelling) in a class of a target. */
static enum rs_member member(const char *target, const char *cls, const char *reg) {
  const rs_target *t = rs_target_by_name(target);
  rs_preg r;
  int c = t ? rs_target_class(t, cls, strlen(cls)) : -1;
  if (c < 0 || t->parse_preg(t, reg, strlen(reg), &r)) return (enum rs_member)-1;
  return rs_target_member(t, c, r);
}

/* The per-architecture rules the fixtures cannot all show (LLVM's SIRegisterInfo / AMDGPUBaseInfo):
 * alignment, SGPR budgets, the wave32 VCC, and which classes exist where. */
static void rules(void) {
  CHECK(member("gfx908", "vreg_64", "v[1:2]") == RS_MEMBER_OK);          /* no align2 on gfx908 */
  CHECK(member("gfx940", "vreg_64_align2", "v[1:2]") == RS_MEMBER_ALIGN); /* gfx90a/gfx940 do */
  CHECK(member("gfx90a", "areg_128_align2", "a[2:5]") == RS_MEMBER_OK);
  CHECK(member("gfx1100", "vreg_64", "v[255:256]") == (enum rs_member)-1); /* past v255 */
  CHECK(member("gfx1030", "sgpr_96", "s[2:4]") == RS_MEMBER_ALIGN);       /* SGPR tuples: 4 */
  CHECK(member("gfx1030", "sreg_64", "s[104:105]") == RS_MEMBER_OK);      /* GFX10: s0..s105 */
  CHECK(member("gfx908", "sreg_64", "s[102:103]") == RS_MEMBER_BUDGET);   /* GFX9: s0..s101 */
  CHECK(member("gfx908", "sreg_32", "vcc_hi") == RS_MEMBER_OK);           /* wave64 VCC halves */
  CHECK(member("gfx1100", "sreg_32", "vcc_lo") == RS_MEMBER_OK);          /* wave32 lane mask */
  CHECK(member("gfx1100", "sreg_32", "vcc_hi") != RS_MEMBER_OK);          /* reserved in wave32 */
  CHECK(member("gfx1100w64", "sreg_64", "vcc") == RS_MEMBER_OK);
  CHECK(member("gfx1030", "sreg_64", "exec") != RS_MEMBER_OK);
  CHECK(member("gfx1030", "agpr_32", "a0") == (enum rs_member)-1);        /* no AGPRs on RDNA */
  CHECK(member("gfx908", "vreg_64_align2", "v[0:1]") == (enum rs_member)-1);
  /* occupancy at the cap and at the bottom of each file (used[] by file order) */
  const rs_target *g = rs_target_by_name("gfx908"), *c = rs_target_by_name("gfx90a"), *r = rs_target_by_name("gfx1100");
  unsigned z[RS_MAX_FILES] = {0}, big[RS_MAX_FILES] = {0};
  CHECK(g->occupancy(g, z) == 10 && c->occupancy(c, z) == 8 && r->occupancy(r, z) == 16);
  big[2] = 256, big[3] = 256;
  CHECK(g->occupancy(g, big) == 1 && c->occupancy(c, big) == 1 && r->occupancy(r, big) == 5); /* 264 of 1536 */
  big[2] = 9, big[3] = 32; /* REGFILES.md: 9 VGPRs + 32 AGPRs on gfx90a -> 44 -> 48 -> 10 -> 8 */
  CHECK(c->occupancy(c, big) == 8 && g->occupancy(g, big) == 8);
}

/* The allocation rounds of the real llc-14/16/22 pipelines, and pipelines of a shape we do not know. */
static void rounds(void) {
  static const struct { const char *llc, *cpu; unsigned n; } want[] = {
      {"llc-14", "gfx90a", 2}, {"llc-16", "gfx940", 2}, {"llc-22", "gfx942", 3}, {"llc-22", "gfx1201", 3}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    rs_llc_opts o;
    rs_llc_opts_default(&o);
    o.llc = want[i].llc, o.mcpu = want[i].cpu;
    rs_rounds r;
    rs_err e = {{0}};
    int rc = rs_llc_rounds(&o, &r, &e);
    CHECKF(rc == 0 && r.n == want[i].n && r.kind[r.n - 1] == RS_ROUND_VECTOR && r.kind[0] == RS_ROUND_SGPR,
           "%s %s: rc %d, %u rounds: %s", want[i].llc, want[i].cpu, rc, r.n, e.msg);
    /* emit's stop for the spill slots' block frequencies: the Stack Slot Coloring after the last
     * rewriter (llc-22 runs another after round 0, before emit's restart point) */
    const char *ssc = want[i].n == 3 ? "stack-slot-coloring,1" : "stack-slot-coloring,0";
    CHECKF(!strcmp(r.slots_last, ssc), "%s %s: stop for the spill slots '%s', want '%s'", want[i].llc, want[i].cpu,
           r.slots_last, ssc);
    if (want[i].n == 3) {
      CHECKF(r.kind[1] == RS_ROUND_WWM && !strcmp(r.greedy_last, "greedy,2") && !strcmp(r.rewriter_last, "virtregrewriter,2"),
             "%s: %s %s", want[i].llc, r.greedy_last, r.rewriter_last);
    }
  }
  /* llc-22's own listing, doctored */
  char *argv[] = {"llc-22", "-march=amdgcn", "-mcpu=gfx942", "-O2", "-debug-pass=Structure", "-o", "/dev/null", "/dev/null", NULL};
  char *text = NULL;
  rs_err e = {{0}};
  CHECK(rs_emit_run(argv, 60, &text, &e) == 0 && text);
  if (!text) return;
  char *v = strstr(text, "Virtual Register Rewriter"); /* the first round loses its rewriter */
  CHECK(v != NULL);
  if (v) {
    char *bad = rs_xstrndup(text, strlen(text));
    memcpy(bad + (v - text), "Virtual Register Rewritten", 26);
    rs_rounds r;
    int rc = rs_rounds_parse(bad, "llc-22", &r, &e);
    CHECKF(rc != 0 && strstr(e.msg, "llc-22") && strstr(e.msg, "3 greedy rounds") &&
               strstr(e.msg, "Greedy Register Allocator -> SI lower SGPR spill instructions"),
           "a round without its rewriter: %s", e.msg);
    free(bad);
  }
  size_t n = strlen(text); /* a fourth round at the end */
  char *more = rs_xmalloc(n + 128);
  snprintf(more, n + 128, "%s      Greedy Register Allocator\n      Virtual Register Rewriter\n", text);
  rs_rounds r;
  CHECKF(rs_rounds_parse(more, "llc-22", &r, &e) != 0 && strstr(e.msg, "4 greedy rounds"), "four rounds: %s", e.msg);
  CHECKF(rs_rounds_parse("", "llc-x", &r, &e) != 0 && strstr(e.msg, "no register allocator"), "empty: %s", e.msg);
  free(more);
  free(text);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  rules();
  rounds();
  for (size_t a = 0; a < sizeof archs / sizeof *archs; a++) {
    char **files;
    int n = rs_check_list(archs[a].dir, ".final.mir", &files);
    CHECKF(n >= 3, "%s: expected >= 3 fixtures, found %d", archs[a].dir, n);
    tally t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < n; i++) {
      char stem[900];
      snprintf(stem, sizeof stem, "%.*s", (int)(strlen(files[i]) - strlen(".final.mir")), files[i]);
      bool w64 = strstr(stem, "_w64") != NULL;
      CHECKF(!w64 || archs[a].target_w64, "%s: wave64 fixture for a wave64-only target", stem);
      check_variant(stem, w64 && archs[a].target_w64 ? archs[a].target_w64 : archs[a].target, archs[a].agprs,
                    archs[a].unified, archs[a].emit, &t);
    }
    printf("%-8s %d variants, %u MIR files, %u instructions, %u operands; truths %u/%d postsplit, %u prera; "
           "oracle %u/%u truths, %u/%u mutants rejected with their category, %u disagreements; "
           "occupancy = llc's on %u/%u (%u register-bound)\n",
           archs[a].target, n, t.files, t.insts, t.ops, t.truths, n, t.prera_truths, t.os.truths_accepted,
           t.os.truths, t.os.mutants_rejected, t.os.mutants, t.os.disagreements, t.occ_checked, (unsigned)n,
           t.reg_bound);
    if (archs[a].emit) {
      printf("         emitted through llc-22: %u truths, MachineVerifier ok and counts equal on %u\n", t.emitted, t.emit_equal);
      CHECKF(t.emitted == t.truths + t.prera_truths && t.emit_equal == t.emitted, "%s: emits", archs[a].target);
    }
    printf("         mutants per kind:");
    for (int k = 0; k < RS_MUT__N; k++)
      if (t.os.per_kind[k]) printf(" %s %u/%u", rs_mutation_str((rs_mutation)k), t.os.per_kind_ok[k], t.os.per_kind[k]);
    printf("\n");
    CHECKF(t.truths == (unsigned)n && t.os.truths_accepted == t.os.truths, "%s: truths", archs[a].target);
    CHECKF(t.os.mutants >= 10u * (unsigned)n && t.os.mutants_rejected == t.os.mutants, "%s: mutants", archs[a].target);
    CHECKF(t.reg_bound >= 1, "%s: no fixture where registers bound occupancy", archs[a].target);
    rs_check_free_list(files, n);
  }
  spill_through_copy();
  bad_input();
  return rs_check_done("test_archs");
}
