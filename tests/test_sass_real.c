/* test_sass_real.c - SASS of CUDA code written for these tests, not for the parser
 * (tests/fixtures/sass-real/ NAME.cu by scripts/gen-sass-real.sh, ptxas 13, sm_75-sm_90): cp.async,
 * cuda::barrier, cooperative groups, warp votes/reductions/matches, atomics on shared, global
 * and generic memory, fp64, |x| operands with .reuse, and 7 kernel families.
 *   - every listing parses and `regalloc --pinned` reproduces it register for register;
 *   - `corpus forms` finds every form of them in the table (0 unknown) and the forms the issue
 *     named among them; an unknown form is named by `corpus forms` (exit 1) and refused by the
 *     parser with file:line and its name (exit 2), never guessed;
 *   - the listing `corpus disasm` writes is one its parser reads whatever the length of its first
 *     `// regsweep:` line (every fixture; at least one over 1,023 characters);
 *   - widths the table gives the new rows, read from the parsed operands (pairs of the 64-bit
 *     atomics, mbarrier tokens and descriptors);
 *   - sass/joins.c: on a small listing, a value whose def is predicated (no def before it) and a
 *     value dead before it do not interfere by the Problem's rule, but putting them on one
 *     register joins them on the re-lift; joins.c adds exactly that conflict; on every listing
 *     of the fixtures the listing's own colouring satisfies all it adds (pinned stays valid);
 *   - --scoreboards: a recolouring of sgemm_t4x4 sm_90 has scoreboard hazards with ptxas's control
 *     bits (lower's check, cubin/hazard.c) unless free mode is given the cubin; with it, none;
 *   - `inspect --live` against nvdisasm 11.8's `-lrm count` (NAME.lrm) row by row: 99.5% of rows
 *     equal; each differing row is counted by cause (LIVE_CAUSE: 11.8's dropped sm_90
 *     instructions, -plr's call convention) and pinned per listing (LIVE_GAP), so a change either
 *     way shows;
 *   - textures and surfaces (textures.cu, surfaces.cu): every TEX/TLD/TLD4/TXD/TXQ/SULD/SUST/SURED
 *     writes and reads exactly the GPR and UGPR registers nvdisasm -plr marks (NAME.T.texplr); a
 *     shape never measured is refused with file:line; --free is valid on all of them; sm_90
 *     VIMNMX3 fills match compares.cu's arithmetic. */
#include "front/front.h"
#include "check.h"
#include "analysis/problem.h"
#include "corpus/truth.h"
#include "cubin/lower.h"
#include "mcode/mcode.h"
#include "sass/sass.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const DIRS[] = {"tests/fixtures/sass-real", "tests/fixtures/sass", "tests/fixtures/sass/front"};

static void test_pinned(void) {
  char **list;
  int n = rs_check_list(DIRS[0], ".sass", &list), funcs = 0;
  CHECKF(n == 55, "%d listings (11 sources x 5 archs)", n);
  for (int i = 0; i < n; i += rs_check_stride()) {
    char cmd[1200], out[4096];
    snprintf(cmd, sizeof cmd, "%s regalloc %s --pinned", rs_check_cli, list[i]);
    int rc = rs_check_run(cmd, out, sizeof out);
    CHECKF(rc == 0 && strstr(out, ": identical ("), "%s: rc %d: %.400s", list[i], rc, out);
    for (const char *p = out; (p = strstr(p, ": identical (")); p++) funcs++;
  }
  printf("pinned: %d listings, %d functions identical\n", n, funcs);
  /* an external call (printf -> vprintf): its ABI is not in the Problem, so --free keeps ptxas's */
  char cmd[1200], out[8192];
  snprintf(cmd, sizeof cmd, "%s regalloc %s/intrinsics.sm_89.sass --free", rs_check_cli, DIRS[0]);
  int rc = rs_check_run(cmd, out, sizeof out);
  const char *im = strstr(out, "intrinsics_mix: R: ");
  unsigned b = 0, a = 1;
  if (im) sscanf(im, "intrinsics_mix: R: %u -> %u", &b, &a);
  CHECKF(rc == 0 && im && a == b && strstr(im, "ptxas's own colouring kept (an external call"), "rc %d: %.600s", rc, out);
  CHECKF(funcs >= 5 * 16 / rs_check_stride(), "%d functions", funcs); /* 16 kernels per arch at least */
  rs_check_free_list(list, n);
}

static void test_forms(const char *tmp) {
  char cmd[1200], *out = malloc(1 << 20);
  snprintf(cmd, sizeof cmd, "%s corpus forms %s/*.sass", rs_check_cli, DIRS[0]);
  int rc = rs_check_run(cmd, out, 1 << 20);
  CHECKF(rc == 0 && strstr(out, " 0 unknown (0 instructions)"), "rc %d: %.300s", rc, out);
  /* what ptxas 13 emits for these sources that the table lacked before (issue 23) */
  static const char *const want[] = {"LDGSTS.E.BYPASS.128 ", "LDGDEPBAR ", "DEPBAR.LE ", "ATOMS.POPC.INC.32 ",
                                     "I2FP.F32.U32.RZ ", "REDUX.SUM.S32 ", "MATCH.ANY ", "MATCH.ANY.U64 ",
                                     "CGAERRBAR ", "ATOM.E.ADD.STRONG.GPU ", "ATOM.E.ADD.64.STRONG.CTA ",
                                     "ATOMG.E.CAS.STRONG.GPU ", "REDG.E.ADD.F64.RN.STRONG.GPU ", "VOTEU.ANY ",
                                     "SYNCS.ARRIVE.TRANS64.A1T0 ", "ATOMS.ARRIVE.64 ", "ATOMS.CAST.SPIN.64 ",
                                     "I2F.F64.S64 ", "QSPC.E.S ", "NANOSLEEP.WARP ", "CALL.ABS.NOINC ", "LEPC ",
                                     "IDP.4A.S8.S8 ", "VABSDIFF4.U8 ", "ATOMG.E.CAS.STRONG.SM ",
                                     "ATOM.E.ADD.F16x2.RN.STRONG.GPU ", "IMAD.WIDE.U32 ", "DMMA.884 ",
                                     "DMMA.8x8x4 ", "HMMA.1684.F32.TF32 ", "IMMA.16816.S8.S8 ", "UCGABAR_ARV ",
                                     /* textures, surfaces, sm_90 VIMNMX3, FSET.BF (textures.cu ...) */
                                     "TEX.LL ", "TEX.SCR.LL ", "TEX.SCR.F16.RN.LL ", "TEX.LL.AOFFI ", "TEX.LZ ",
                                     "TLD.LZ ", "TLD.SCR.LL.CL ", "TLD4.G ", "TLD4.SCR.R.AOFFI ", "TXD ", "TXQ ",
                                     "SULD.D.BA.3D.128.STRONG.SM.TRAP ", "SUST.D.BA.2D_ARRAY.STRONG.CTA.TRAP ",
                                     "SUST.P.2D.STRONG.SM.RG.TRAP ", "SURED.D.BA.2D.ADD.U64.STRONG.SYS.TRAP ",
                                     "SURED.D.2D.OR.STRONG.SYS.TRAP ", "VIMNMX3 ", "VIMNMX3.U32 ", "FSET.BF.NEU.AND ",
                                     /* MAGMA 2.6.2's (magma_forms.cu) */
                                     "F2F.F32.F64 ", "ULEA.HI.SX32 ", "ATOM.E.CAS.64.STRONG.GPU ",
                                     "ATOM.E.CAS.STRONG.GPU "};
  for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
    char line[80];
    snprintf(line, sizeof line, "\n%s", want[k]);
    CHECKF(strstr(out, line) != NULL, "form %s not seen", want[k]);
  }
  const char *tot = strstr(out, "forms: ");
  unsigned listings = 0, seen = 0;
  if (tot) sscanf(tot, "forms: %u listings (%*u refused before the table: disassembly or operands), %*u instructions; %u forms seen", &listings, &seen);
  CHECKF(listings == 55 && seen >= 400, "%u listings, %u forms", listings, seen);

  /* an opcode nobody knows: named by the coverage tool and by the parser, file:line */
  char *t = rs_read_file("tests/fixtures/sass-real/warp_ops.sm_80.sass", NULL, &(rs_err){{0}});
  char *at = t ? strstr(t, "REDUX.SUM.S32") : NULL;
  CHECK(at != NULL);
  if (at) {
    memcpy(at, "REDUX.SUM.Q77", 13);
    char path[700];
    snprintf(path, sizeof path, "%s/unknown.sass", tmp);
    FILE *fp = fopen(path, "w");
    CHECK(fp && fputs(t, fp) >= 0 && !fclose(fp));
    snprintf(cmd, sizeof cmd, "%s corpus forms %s", rs_check_cli, path);
    rc = rs_check_run(cmd, out, 1 << 20);
    CHECKF(rc == 1 && strstr(out, "REDUX.SUM.Q77") && strstr(out, "unknown form 'REDUX.SUM.Q77' of opcode REDUX") &&
               strstr(out, " 1 unknown (1 instructions)"),
           "rc %d: %.2000s", rc, out);
    snprintf(cmd, sizeof cmd, "%s regalloc %s --pinned", rs_check_cli, path);
    rc = rs_check_run(cmd, out, 1 << 20);
    char want_at[760];
    snprintf(want_at, sizeof want_at, "%s:%u: unknown form 'REDUX.SUM.Q77'", path, rs_line_of(t, (size_t)(at - t)));
    /* issue 42: the form refuses its function alone (named: function, address, form, operand
     * shape, file:line); every other function of the listing is still pinned identical */
    uint32_t nf = 0, ident = 0;
    for (const char *q = t; (q = strstr(q, ".section\t.text.")); q++) nf++;
    for (const char *q = out; (q = strstr(q, ": identical (")); q++) ident++;
    char want_sum[96];
    snprintf(want_sum, sizeof want_sum, "1 of %u functions refused, by form: REDUX.SUM.Q77 1", nf);
    CHECKF(rc == 1 && strstr(out, want_at) && strstr(out, "refused warp_vote_reduce /*0120*/: form REDUX.SUM.Q77 (UR,R):") &&
               strstr(out, want_sum) && nf > 1 && ident == nf - 1,
           "rc %d, %u of %u identical: %.600s (want %s)", rc, ident, nf, out, want_at);
    snprintf(cmd, sizeof cmd, "%s regalloc %s --free", rs_check_cli, path);
    rc = rs_check_run(cmd, out, 1 << 20);
    uint32_t valid = 0;
    for (const char *q = out; (q = strstr(q, "verifier: pass")); q++) valid++;
    CHECKF(rc == 1 && valid == nf - 1 && strstr(out, want_sum), "free: rc %d, %u valid: %.600s", rc, valid, out);
    unlink(path);
  }
  free(t);
  free(out);
}

/* The first line `corpus disasm` writes is whole (ends in a newline before `.headerflags`) and the
 * listing parses, on every fixture; one of them has a first line over 1,023 characters. */
static void test_long_notes(void) {
  unsigned longest = 0, files = 0;
  for (size_t d = 0; d < sizeof DIRS / sizeof *DIRS; d++) {
    char **list;
    int n = rs_check_list(DIRS[d], ".sass", &list);
    for (int i = 0; i < n; i++) {
      rs_err e = {{0}};
      char *t = rs_read_file(list[i], NULL, &e);
      if (!t) continue;
      char *nl = strchr(t, '\n');
      if (!strncmp(t, "\t// regsweep: listing completed", 31)) {
        CHECKF(nl && !strstr(nl + 1, "\t// regsweep:") && strstr(nl + 1, ".headerflags") &&
                   strchr(t, '.') != NULL && (!strstr(t, ".headerflags") || strstr(t, ".headerflags") > nl),
               "%s: first line not whole", list[i]);
        if (nl && (unsigned)(nl - t) > longest) longest = (unsigned)(nl - t);
      }
      free(t);
      rs_sass_opts o = {.no_lift = true, .whole = true};
      rs_module *m = rs_sass_load(list[i], NULL, &o, &e);
      CHECKF(m != NULL, "%s: %s", list[i], e.msg);
      rs_module_free(m);
      files++;
    }
    rs_check_free_list(list, n);
  }
  printf("%u listings parse; longest first line %u characters\n", files, longest);
  CHECKF(longest > 1023, "longest first line %u", longest);
}

/* Widths of the new rows, from the parsed operands of one instruction. */
static void width_of(const rs_module *m, const char *mnem, const char *lanes_want) {
  for (uint32_t k = 0; k < m->nfuncs; k++) {
    const rs_func *f = m->funcs[k];
    for (uint32_t i = 0; i < f->ninsts; i++) {
      const rs_inst *in = &f->insts[i];
      if (strcmp(f->names.strs[in->opcode], mnem)) continue;
      char got[32] = "";
      size_t g = 0;
      for (uint32_t o = 0; o < in->nops && g + 3 < sizeof got; o++) {
        const rs_operand *op = &f->ops[in->first_op + o];
        if (op->kind != RS_OP_PREG && op->kind != RS_OP_VREG) continue;
        got[g++] = (char)('0' + rs_lanes_units(op->lanes));
        got[g++] = op->flags & RS_F_DEF ? 'd' : 's';
      }
      got[g] = 0;
      CHECKF(!strcmp(got, lanes_want), "%s: %s operands %s, want %s", m->path, mnem, got, lanes_want);
      return;
    }
  }
  CHECKF(0, "%s: no %s", m->path, mnem);
}

/* sm_90 VIADDMNMX with a negated added register, which 11.8 drops: filled from the encoding
 * (b slot: word 0 bit 63; c slot: word 1 bit 11) and checked against the source's arithmetic:
 * max(x - z, y) and, in the loop, max(y - x, j) with j in a UR (clamps.cu). */
static void test_fill_negated(void) {
  rs_err e = {{0}};
  char *t = rs_read_file("tests/fixtures/sass-real/clamps.sm_90.sass", NULL, &e);
  CHECKF(t != NULL, "%s", e.msg);
  unsigned neg_b = 0, neg_c = 0;
  for (const char *l = t; t && (l = strstr(l, "VIADDMNMX")); l++) {
    const char *end = strchr(l, ';');
    unsigned d, a, b, c;
    char tail[16];
    if (sscanf(l, "VIADDMNMX R%u, R%u, -R%u, R%u, %15[!PT]", &d, &a, &b, &c, tail) == 5 ||
        sscanf(l, "VIADDMNMX.U32 R%u, R%u, -R%u, R%u, %15[!PT]", &d, &a, &b, &c, tail) == 5)
      neg_b++;
    else if (sscanf(l, "VIADDMNMX R%u, R%u, -R%u, UR%u, %15[!PT]", &d, &a, &b, &c, tail) == 5)
      neg_c++;
    if (!end) break;
  }
  bool filled = t && strstr(t, "holes filled: clamp_sums");
  printf("fill: clamps sm_90: %u VIADDMNMX with -R in the b slot, %u with -R in the c slot\n", neg_b, neg_c);
  CHECK(filled && neg_b >= 1 && neg_c >= 2);
  free(t);
}

static void test_widths(void) {
  rs_err e = {{0}};
  rs_sass_opts o = {.no_lift = true, .whole = true};
  rs_module *a75 = rs_sass_load("tests/fixtures/sass-real/async_copy.sm_75.sass", NULL, &o, &e);
  rs_module *a80 = rs_sass_load("tests/fixtures/sass-real/async_copy.sm_80.sass", NULL, &o, &e);
  rs_module *a90 = rs_sass_load("tests/fixtures/sass-real/async_copy.sm_90.sass", NULL, &o, &e);
  rs_module *f90 = rs_sass_load("tests/fixtures/sass-real/families.sm_90.sass", NULL, &o, &e);
  CHECK(a75 && a80 && a90 && f90);
  if (a75 && a80 && a90 && f90) {
    /* P0, R6:R7 written; R4:R5 generic address (sm_75 .E: 64-bit); R12:R13 added */
    width_of(a75, "ATOM.E.ADD.64.STRONG.CTA", "1d2d2s2s");
    width_of(a75, "ATOMS.CAST.SPIN.64", "2d1s2s2s"); /* R10:R11 <- [R3], R8:R9, R10:R11 */
    width_of(a75, "QSPC.E.S", "1d1d2s");
    width_of(a80, "ATOMS.ARRIVE.64", "2d1s"); /* token R4:R5 <- [URZ+0x400] */
    /* PT, R10 <- [R10:R11], R12, R13: no descriptor (-plr) */
    width_of(a80, "ATOMG.E.CAS.STRONG.GPU", "1d1d2s1s1s");
    /* [R3] shared, desc[UR4] pair, [R6.64] global */
    width_of(a80, "LDGSTS.E", "1s2s2s");
    width_of(a90, "SYNCS.ARRIVE.TRANS64.A1T0", "2d1s1s");
    width_of(f90, "REDG.E.ADD.F64.RN.STRONG.GPU", "2s2s2s"); /* desc pair, [R2.64], R6:R7 */
    rs_module *i89 = rs_sass_load("tests/fixtures/sass-real/intrinsics.sm_89.sass", NULL, &o, &e);
    CHECKF(i89 != NULL, "%s", e.msg);
    if (i89) {
      width_of(i89, "LEPC", "2d");           /* LEPC R2: the PC, a pair */
      width_of(i89, "CALL.ABS.NOINC", "2s1s"); /* R8:R9 the callee's address; R1 */
      /* IMAD.HI's addend is a pair (Rc+1:Rc, -plr marks Rc+1 read): every register addend of
       * the 64-bit division's IMAD.HI.U32 (with a carry-out or not) is read as two units */
      unsigned pairs = 0, singles = 0;
      for (uint32_t k = 0; k < i89->nfuncs; k++) {
        const rs_func *f = i89->funcs[k];
        for (uint32_t i = 0; i < f->ninsts; i++) {
          const rs_inst *in = &f->insts[i];
          if (strncmp(f->names.strs[in->opcode], "IMAD.HI", 7)) continue;
          const rs_operand *last = NULL; /* the last operand written in the text: the addend */
          for (uint32_t o = 0; o < in->nops; o++) {
            const rs_operand *op = &f->ops[in->first_op + o];
            if (op->text_len && (!last || op->text_off > last->text_off)) last = op;
          }
          if (last && (last->kind == RS_OP_VREG || last->kind == RS_OP_PREG) && !(last->flags & RS_F_DEF) &&
              !(last->text_len == 2 && !memcmp(f->src + last->text_off, "RZ", 2)))
            rs_lanes_units(last->lanes) == 2 ? pairs++ : singles++;
        }
      }
      printf("IMAD.HI with a register addend: %u read as a pair, %u as one register\n", pairs, singles);
      CHECKF(pairs >= 4 && singles == 0, "IMAD.HI addends: %u pairs, %u single", pairs, singles);
      rs_module_free(i89);
    }
    rs_module *t80 = rs_sass_load("tests/fixtures/sass-real/tensor_cluster.sm_80.sass", NULL, &o, &e);
    CHECKF(t80 != NULL, "%s", e.msg);
    if (t80) { /* as -plr marks them */
      width_of(t80, "DMMA.884", "4d2s2s1s");           /* D quad, A and B one double, C RZ */
      width_of(t80, "HMMA.1684.F32.TF32", "4d2s1s4s"); /* D 4, A 2, B 1, C 4 */
      rs_module_free(t80);
    }
  }
  rs_module_free(a75);
  rs_module_free(a80);
  rs_module_free(a90);
  rs_module_free(f90);
}

/* Rows of `inspect --live` that differ from -lrm count, per listing (measured 2026-12-02 against
 * nvdisasm 11.8, after IMAD.HI's pair addend, -plr's def sites over its own CFG, UR36-UR62
 * callee-saved, P2R reading all of PR, R0 defined at a function's entry, chained calls, a
 * call's R0/R1 reads joining values, reads joining def sites of every width (the 97 rows of
 * textures.cu and async_copy sm_90 that differed), a RET's reads of the callee-saved registers
 * joining values (the 47 rows of layernorm and layernorm_wide), a call's
 * clobber writes as def sites (montecarlo_option's 20 rows): every row is equal. Each differing
 * row is counted by cause in test_live (LIVE_CAUSE): none lies outside a function that calls. */
static const struct {
  const char *name;
  unsigned differ;
} LIVE_GAP[] = {
    {"clamps.sm_75", 0},      {"clamps.sm_80", 0},      {"clamps.sm_86", 0},      {"clamps.sm_89", 0},
    {"clamps.sm_90", 0},      {"intrinsics.sm_75", 0}, {"intrinsics.sm_80", 0}, {"intrinsics.sm_86", 0},
    {"intrinsics.sm_89", 0}, {"intrinsics.sm_90", 0}, {"tensor_cluster.sm_75", 0}, {"tensor_cluster.sm_80", 0},
    {"tensor_cluster.sm_86", 0}, {"tensor_cluster.sm_89", 0}, {"tensor_cluster.sm_90", 0}, {"async_copy.sm_75", 0}, {"async_copy.sm_80", 0}, {"async_copy.sm_86", 0}, {"async_copy.sm_89", 0},
    {"async_copy.sm_90", 0},  {"big.sm_75", 0},       {"big.sm_80", 0},       {"big.sm_86", 0},
    {"big.sm_89", 0},       {"big.sm_90", 0},       {"families.sm_75", 0},  {"families.sm_80", 0},
    {"families.sm_86", 0},  {"families.sm_89", 0},  {"families.sm_90", 0},  {"warp_ops.sm_75", 0},
    {"warp_ops.sm_80", 0},    {"warp_ops.sm_86", 0},    {"warp_ops.sm_89", 0},    {"warp_ops.sm_90", 0},
    {"compares.sm_75", 0},    {"compares.sm_80", 0},    {"compares.sm_86", 0},    {"compares.sm_89", 0},    {"compares.sm_90", 0},    {"surfaces.sm_75", 0},    {"surfaces.sm_80", 0},    {"surfaces.sm_86", 0},    {"surfaces.sm_89", 0},    {"surfaces.sm_90", 0},    {"textures.sm_75", 0},    {"textures.sm_80", 0},    {"textures.sm_86", 0},    {"textures.sm_89", 0},    {"textures.sm_90", 0},
};

/* One listing: rows of NAME.lrm (function, address, GPR PRED UGPR UPRED) against `inspect --live`. */
/* The first address of function fn that 11.8 dropped (the listing's first line names the holes
 * `corpus disasm` filled: "... holes filled: fn 0x00f0 VIADD, 0x03b0 VIADD; fn2 ..."), or ~0. */
static unsigned first_hole(const char *listing, const char *fn) {
  const char *nl = strchr(listing, '\n'), *p = strstr(listing, "holes filled: ");
  if (!p || (nl && p > nl)) return ~0u;
  for (p += 14; p && (!nl || p < nl);) {
    size_t n = strlen(fn);
    unsigned a;
    if (!strncmp(p, fn, n) && p[n] == ' ' && sscanf(p + n, " 0x%x", &a) == 1) return a;
    p = strstr(p, "; ");
    if (p) p += 2;
  }
  return ~0u;
}

/* The instruction at address a of function fn in a listing ("" if absent), and whether fn calls. */
static void inst_at(const char *listing, const char *fn, unsigned a, char *out, size_t cap, bool *calls) {
  char sec[300], at[32];
  snprintf(sec, sizeof sec, "\t.section\t.text.%s,", fn);
  snprintf(at, sizeof at, "/*%04x*/", a);
  const char *p = listing ? strstr(listing, sec) : NULL, *end = p ? strstr(p + 1, "\t.section\t") : NULL;
  const char *hit = p ? strstr(p, at) : NULL, *c = p ? strstr(p, "CALL.") : NULL;
  *calls = c && (!end || c < end);
  out[0] = 0;
  if (hit && (!end || hit < end)) snprintf(out, cap, "%.*s", (int)strcspn(hit, ";\n"), hit);
}

/* Causes of a differing row, each counted: */
enum { C_HOLE, C_CALL_ROW, C_CALL_FN, C_OTHER, NCAUSE };
static const char *const CAUSE[NCAUSE] = {"sm_90 after a dropped instruction", "at a CALL.REL.NOINC",
                                          "elsewhere in a function that calls", "elsewhere"};

static void live_one(const char *sass, unsigned *rows, unsigned *differ, unsigned *cause) {
  char lrm[700], cmd[1200];
  snprintf(lrm, sizeof lrm, "%.*s.lrm", (int)(strlen(sass) - 5), sass);
  snprintf(cmd, sizeof cmd, "%s inspect %s --live", rs_check_cli, sass);
  char *ours = malloc(1 << 22);
  int rc = rs_check_run(cmd, ours, 1 << 22);
  CHECKF(rc == 0, "%s: inspect --live rc %d", sass, rc);
  rs_err e = {{0}};
  char *t = rs_read_file(lrm, NULL, &e), *listing = rs_read_file(sass, NULL, &e);
  CHECKF(t != NULL && listing != NULL, "%s: %s", lrm, e.msg);
  unsigned hole = ~0u;
  char fn[200] = "", cols[8][8];
  unsigned ncol = 0;
  *rows = *differ = 0;
  for (char *l = t; t && l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    char *end = strchr(l, '\n'), *bar = strstr(l, "// |");
    size_t n = end ? (size_t)(end - l) : strlen(l);
    const char *sec = strstr(l, ".section\t.text.");
    if (sec && sec < l + n) {
      sscanf(sec + 15, "%199[^,]", fn);
      hole = listing ? first_hole(listing, fn) : ~0u;
      continue;
    }
    if (!bar || bar > l + n) continue;
    unsigned a, c[4] = {0, 0, 0, 0};
    bool row = sscanf(l, " /*%x*/", &a) == 1;
    char *q = bar + 4;
    if (!row) { /* the header naming the columns */
      if (!strstr(l, "GPR") || strstr(l, "GPR") > l + n) continue;
      ncol = 0;
      for (char *x = q; x < l + n && ncol < 8; ncol++) {
        char *y = memchr(x, '|', (size_t)(l + n - x));
        if (!y) break;
        size_t k = 0;
        for (char *z = x; z < y; z++)
          if (*z != ' ' && k < 7) cols[ncol][k++] = *z;
        cols[ncol][k] = 0;
        x = y + 1;
      }
      continue;
    }
    for (unsigned i = 0; i < ncol; i++) {
      char *y = memchr(q, '|', (size_t)(l + n - q));
      if (!y) break;
      unsigned v = 0;
      sscanf(q, " %u", &v);
      int f = !strcmp(cols[i], "GPR") ? 0 : !strcmp(cols[i], "PRED") ? 1 : !strcmp(cols[i], "UGPR") ? 2 : !strcmp(cols[i], "UPRED") ? 3 : -1;
      if (f >= 0) c[f] = v;
      q = y + 1;
    }
    char want[300], head[240];
    snprintf(head, sizeof head, "# %s: address", fn);
    snprintf(want, sizeof want, "\n%04x %u %u %u %u\n", a, c[0], c[1], c[2], c[3]);
    const char *sec_ours = strstr(ours, head), *next = sec_ours ? strstr(sec_ours + 1, "\n# ") : NULL;
    const char *hit = sec_ours ? strstr(sec_ours, want) : NULL;
    (*rows)++;
    if (!hit || (next && hit > next)) {
      (*differ)++;
      char ins[200];
      bool calls;
      inst_at(listing, fn, a, ins, sizeof ins, &calls);
      cause[a > hole ? C_HOLE : strstr(ins, "CALL.REL.NOINC") ? C_CALL_ROW : calls ? C_CALL_FN : C_OTHER]++;
    }
  }
  free(listing);
  free(t);
  free(ours);
}

/* The causes' totals over the 55 listings, pinned (a change either way fails):
 *  - sm_90 after a dropped instruction: nvdisasm 11.8 drops VIADD/VIMNMX/VIADDMNMX, so its own
 *    liveness misses them (nvdisasm is wrong there; rows after the function's first hole): none
 *    differs in these listings any more (the 16 that did were live.c's, and went with the rules);
 *  - at a CALL.REL.NOINC: none since live.c shows a chained call's whole clobber set
 *    (RS_PLR_CHAIN, the shflsync chains of barrier_copy's BRA.DIV fallback);
 *  - elsewhere in a function that calls: none since a call's clobber writes are -plr's def sites
 *    (montecarlo_option: its RNG state R8 one value across its sqrt slowpath's call);
 *  - elsewhere: nothing (every other row of these listings is equal). */
static const unsigned LIVE_CAUSE[NCAUSE] = {0, 0, 0, 0};

static void test_live(void) {
  unsigned rows = 0, differ = 0, cause[NCAUSE] = {0};
  for (size_t k = 0; k < sizeof LIVE_GAP / sizeof *LIVE_GAP; k += (size_t)rs_check_stride()) {
    char sass[300];
    snprintf(sass, sizeof sass, "%s/%s.sass", DIRS[0], LIVE_GAP[k].name);
    unsigned r = 0, d = 0;
    live_one(sass, &r, &d, cause);
    CHECKF(r > 10 && d == LIVE_GAP[k].differ, "%s: %u of %u -lrm rows differ (pinned: %u)", sass, d, r,
           LIVE_GAP[k].differ);
    rows += r;
    differ += d;
  }
  printf("inspect --live vs -lrm count: %u of %u rows equal (%.2f%%); differing rows by cause:", rows - differ, rows,
         rows ? 100.0 * (rows - differ) / rows : 0.0);
  for (int c = 0; c < NCAUSE; c++) printf("%s %s %u", c ? ";" : "", CAUSE[c], cause[c]);
  printf("\n");
  for (int c = 0; c < NCAUSE; c++)
    CHECKF(cause[c] == LIVE_CAUSE[c], "%s: %u rows (pinned: %u)", CAUSE[c], cause[c], LIVE_CAUSE[c]);
}

/* RS_PLR_UPGUARD on real code: MAGMA's hemm_vbatched_ll sm_80 (tests/fixtures/sass/front/ops,
 * with nvdisasm 11.8's -lrm count table) guards `UMOV UR4, URZ` with @!UP0; -plr takes that def
 * as killing UR4. With the quirk every row equals -lrm count; without it 1,272 rows differ. */
static void test_upguard(void) {
  const char *sass = "tests/fixtures/sass/front/ops/magma_hemm_upguard.sm_80.sass";
  unsigned r = 0, d = 0, cause[NCAUSE] = {0};
  live_one(sass, &r, &d, cause);
  rs_err e = {{0}};
  rs_module *m = rs_module_load(sass, NULL, &e);
  CHECKF(m != NULL, "%s: %s", sass, e.msg);
  unsigned decided = 0, guarded = 0;
  if (m) {
    const rs_func *f = m->funcs[0];
    rs_word *with = NULL, *without = NULL;
    uint32_t W = 0, W2 = 0;
    CHECK(rs_sass_live_rows(f, &with, &W, RS_PLR_ALL, &e) == 0);
    CHECK(rs_sass_live_rows(f, &without, &W2, RS_PLR_ALL & ~RS_PLR_UPGUARD, &e) == 0 && W2 == W);
    for (uint32_t i = 0; with && without && i < f->ninsts; i++) {
      decided += memcmp(with + (size_t)W * i, without + (size_t)W * i, W * sizeof *with) != 0;
      guarded += (f->insts[i].flags & RS_I_PREDICATED) && strstr(rs_func_opcode(f, &f->insts[i]), "UMOV") != NULL;
    }
    free(with);
    free(without);
    rs_module_free(m);
  }
  printf("@UP-guarded defs (RS_PLR_UPGUARD): %s: %u of %u -lrm rows differ; the quirk decides %u rows (%u guarded UMOV)\n",
         sass, d, r, decided, guarded);
  CHECKF(r == 2902 && d == 0 && decided == 1272 && guarded > 0, "upguard: %u rows, %u differ, %u decided", r, d, decided);
}

static const char JOIN_LISTING[] =
    "\t.headerflags\t@\"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM89 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM89)\"\n"
    "\t.section\t.text.k,\"ax\",@progbits\n"
    "k:\n"
    ".text.k:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   ISETP.GE.AND P0, PT, R0, 0x10, PT ;\n"
    "        /*0020*/                   IADD3 R2, R0, 0x1, RZ ;\n"
    "        /*0030*/                   STS [R0], R2 ;\n"
    "        /*0040*/               @P0 MOV R3, 0x5 ;\n"
    "        /*0050*/                   STS [R0+0x4], R3 ;\n"
    "        /*0060*/                   EXIT ;\n"
    ".L_x_0:\n"
    "        /*0070*/                   BRA `(.L_x_0);\n";

/* Is there a conflict between the values first defined at these addresses? */
static bool conflicts(const rs_func *f, const rs_problem *p, const char *a, const char *b) {
  for (uint32_t i = 0; i < p->nconf; i++) {
    const char *x = f->vregs[p->vars[p->conf[i].a].fvreg].name, *y = f->vregs[p->vars[p->conf[i].b].fvreg].name;
    if ((!strcmp(x, a) && !strcmp(y, b)) || (!strcmp(x, b) && !strcmp(y, a))) return true;
  }
  return false;
}

static void test_joins(void) {
  rs_err e = {{0}};
  rs_module *m = rs_xcalloc(1, sizeof *m);
  m->path = rs_xstrndup("join.sass", 9);
  m->text = rs_xstrndup(JOIN_LISTING, strlen(JOIN_LISTING));
  m->len = strlen(JOIN_LISTING);
  m->kind = RS_SRC_SASS;
  int rc = rs_sass_parse(m, &e);
  CHECKF(rc == 0 && m->nfuncs == 1, "%s", e.msg);
  rs_problem *p = rc ? NULL : rs_problem_build(m->funcs[0], &e);
  CHECKF(p != NULL, "%s", e.msg);
  if (p) {
    const rs_func *f = m->funcs[0];
    /* R2@0020 is dead from 0x0030; R3@0040 (predicated, entry value before it) by the Problem's
     * rule starts at 0x0040: no conflict, one register would do ... */
    CHECK(!conflicts(f, p, "R2@0020", "R3@0040"));
    /* ... but on R2 the re-lift joins them: the def at 0x0020 reaches the predicated def */
    uint32_t a = UINT32_MAX, b = UINT32_MAX;
    for (uint32_t v = 0; v < f->nvregs; v++) {
      if (!strcmp(f->vregs[v].name, "R2@0020")) a = v;
      if (!strcmp(f->vregs[v].name, "R3@0040")) b = v;
    }
    CHECK(a != UINT32_MAX && b != UINT32_MAX);
    if (a != UINT32_MAX && b != UINT32_MAX) {
      rs_preg *as[1] = {rs_xcalloc(f->nvregs + 1, sizeof **as)};
      for (uint32_t v = 0; v < f->nvregs; v++) as[0][v] = f->truth[v];
      as[0][b] = f->truth[a];
      char *text = rs_sass_write_module(m, as);
      rs_module *n = rs_xcalloc(1, sizeof *n);
      n->path = rs_xstrndup("written", 7);
      n->text = text;
      n->len = strlen(text);
      n->kind = RS_SRC_SASS;
      CHECK(rs_sass_parse(n, &e) == 0 && n->nfuncs == 1 && n->funcs[0]->nvregs == f->nvregs - 1);
      rs_module_free(n);
      free(as[0]);
    }
    uint32_t added = rs_sass_join_conflicts(f, p);
    CHECKF(added >= 1 && conflicts(f, p, "R2@0020", "R3@0040"), "%u added", added);
    uint32_t nonmember = 0;
    CHECK(rs_truth_check(p, f->truth, &nonmember) == 0 && !nonmember);
    rs_problem_free(p);
  }
  rs_module_free(m);

  /* ptxas's colouring satisfies every added conflict, on every fixture listing */
  uint32_t funcs = 0, added = 0;
  for (size_t d = 0; d < sizeof DIRS / sizeof *DIRS; d++) {
    char **list;
    int n = rs_check_list(DIRS[d], ".sass", &list);
    for (int i = 0; i < n; i += rs_check_stride()) {
      rs_module *mm = rs_sass_load(list[i], NULL, NULL, &e);
      for (uint32_t k = 0; mm && k < mm->nfuncs; k++) {
        rs_problem *pp = rs_problem_build(mm->funcs[k], &e);
        if (!pp) continue;
        added += rs_sass_join_conflicts(mm->funcs[k], pp);
        uint32_t nonmember = 0, viol = rs_truth_check(pp, mm->funcs[k]->truth, &nonmember);
        CHECKF(!viol && !nonmember, "%s %s: ptxas's colouring violates %u added conflicts", list[i], mm->funcs[k]->name,
               viol);
        for (uint32_t c = 0; viol && c < pp->nconf; c++) {
          const rs_conflict *x = &pp->conf[c];
          const rs_func *ff = mm->funcs[k];
          rs_preg ra = ff->truth[pp->vars[x->a].fvreg], rb = ff->truth[pp->vars[x->b].fvreg];
          if (rs_lanes_overlap(ra.unit, x->la, rb.unit, x->lb))
            printf("  %s and %s at /*%04x*/\n", ff->vregs[pp->vars[x->a].fvreg].name, ff->vregs[pp->vars[x->b].fvreg].name,
                   (unsigned)ff->insts[x->inst].addr);
        }
        funcs++;
        rs_problem_free(pp);
      }
      rs_module_free(mm);
    }
    rs_check_free_list(list, n);
  }
  printf("joins: %u functions, %u conflicts added, ptxas's colouring satisfies them all\n", funcs, added);
  CHECK(funcs >= 140 / (uint32_t)rs_check_stride() && added > 0);
}

static void test_scoreboards(const char *tmp) {
  static const char *const names[] = {"sgemm_t4x4.sm_90", "sgemm_t4x4.sm_89"};
  for (size_t k = 0; k < 2; k++) {
    uint32_t count[2] = {0, 0};
    for (int with = 0; with < 2; with++) {
      char cmd[1600], out[4096], res[700], cub[300], first[400] = "";
      snprintf(res, sizeof res, "%s/sb.sass", tmp);
      snprintf(cub, sizeof cub, "tests/fixtures/sass/%s.cubin", names[k]);
      snprintf(cmd, sizeof cmd, "%s regalloc tests/fixtures/sass/%s.sass --free -q -o %s%s%s", rs_check_cli, names[k], res,
               with ? " --scoreboards " : "", with ? cub : "");
      int rc = rs_check_run(cmd, out, sizeof out);
      CHECKF(rc == 0, "%s: rc %d: %.300s", cmd, rc, out);
      rs_err e = {{0}};
      rs_cubin c;
      char *text = rs_read_file(res, NULL, &e);
      CHECK(rs_cubin_load(cub, &c, &e) == 0 && text);
      if (text) CHECKF(rs_sass_hazards_listing(&c, text, res, &count[with], first, sizeof first, &e) == 0, "%s", e.msg);
      if (with) CHECKF(count[with] == 0, "%s with --scoreboards: %u hazards, first %s", names[k], count[with], first);
      rs_cubin_free(&c);
      free(text);
      unlink(res);
    }
    printf("scoreboards: %s recoloured: %u hazards without the control bits, %u with\n", names[k], count[0], count[1]);
    if (k == 0) CHECK(count[0] > 0); /* the conflicts are needed: without them the same colouring has some */
  }
}

/* ---- textures, surfaces, VIMNMX3 (issue 23) ---- */

/* One -plr row's marks for one register file: w[] registers written (^ x), r[] read (v x). */
typedef struct {
  uint64_t w[4], r[4];
} regsets;

static void set_bit(uint64_t *b, unsigned i) {
  if (i < 256) b[i / 64] |= 1ull << (i % 64);
}

/* Marks of the row (text after "// |") in the columns of field `name` under the header. */
static bool plr_marks(const char *names, char digits[4][1024], unsigned ndig, const char *row, const char *name,
                      regsets *out) {
  memset(out, 0, sizeof *out);
  unsigned field = 0, want = ~0u;
  for (const char *q = names; *q && *q != '\n'; q++) { /* which field is `name` */
    if (*q == '|') field++;
    else if (!strncmp(q, name, strlen(name)) && (q[strlen(name)] == ' ' || q[strlen(name)] == '|') &&
             (q[-1] == ' ' || q[-1] == '|'))
      want = field;
  }
  if (want == ~0u) return false;
  field = 0;
  for (size_t c = 0; row[c] && row[c] != '\n'; c++) {
    if (row[c] == '|') {
      field++;
      continue;
    }
    if (field != want) continue;
    unsigned reg = 0, nd = 0;
    for (unsigned d = 0; d < ndig; d++)
      if (c < strlen(digits[d]) && digits[d][c] >= '0' && digits[d][c] <= '9') reg = reg * 10 + (unsigned)(digits[d][c] - '0'), nd++;
    if (!nd) continue;
    if (row[c] == '^' || row[c] == 'x') set_bit(out->w, reg);
    if (row[c] == 'v' || row[c] == 'x') set_bit(out->r, reg);
  }
  return true;
}

/* What the parsed instruction (physical operands) writes and reads in file `fname`. */
static void parsed_sets(const rs_func *f, const rs_inst *in, const char *fname, regsets *out) {
  memset(out, 0, sizeof *out);
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if (op->kind != RS_OP_PREG || (f->tgt->unit_flags[op->reg] & RS_UNIT_RESERVED)) continue;
    int fi = rs_target_file_of(f->tgt, op->reg);
    if (fi < 0 || strcmp(f->tgt->files[fi].name, fname)) continue;
    for (unsigned k = 0; k < rs_lanes_units(op->lanes); k++)
      set_bit(op->flags & RS_F_DEF ? out->w : out->r, op->reg - f->tgt->files[fi].first + k);
  }
}

/* Every texture and surface instruction of the fixtures writes and reads exactly the registers
 * nvdisasm 11.8 -plr marks (NAME.T.texplr: ^ written, v read, x both), GPR and UGPR: the tuple
 * widths of texshape.c and the surface rows, measured. */
static int plr_rows(const char *ext, unsigned *rows_out, unsigned *differ_out) {
  char **list;
  int n = rs_check_list(DIRS[0], ext, &list);
  unsigned rows = 0, differ = 0;
  for (int i = 0; i < n; i++) {
    char sass[700];
    snprintf(sass, sizeof sass, "%.*s.sass", (int)(strlen(list[i]) - strlen(ext)), list[i]);
    rs_err e = {{0}};
    rs_sass_opts o = {.no_lift = true, .whole = true};
    rs_module *m = rs_sass_load(sass, NULL, &o, &e);
    char *t = rs_read_file(list[i], NULL, &e);
    CHECKF(m && t, "%s: %s", list[i], e.msg);
    const rs_func *f = NULL;
    char names[1024] = "", digits[4][1024];
    unsigned ndig = 0, hdr = 0;
    for (char *l = t; m && t && l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
      char *sec = strstr(l, ".section\t.text."), *nl = strchr(l, '\n'), *bar = strstr(l, "// ");
      if (sec && (!nl || sec < nl)) {
        size_t k = strcspn(sec + 15, ",\n");
        f = NULL;
        for (uint32_t j = 0; j < m->nfuncs; j++)
          if (strlen(m->funcs[j]->name) == k && !strncmp(m->funcs[j]->name, sec + 15, k)) f = m->funcs[j];
        CHECKF(f != NULL, "%s: function %.*s not in %s", list[i], (int)k, sec + 15, sass);
        hdr = ndig = 0;
        continue;
      }
      if (!bar || (nl && bar > nl)) continue;
      unsigned addr;
      const char *cols = bar + 3;
      size_t len = nl ? (size_t)(nl - cols) : strlen(cols);
      if (sscanf(l, " /*%x*/", &addr) != 1) { /* header: +--- lines, the names, the digit rows */
        if (cols[0] == '+') continue;
        if (hdr++ == 0) snprintf(names, sizeof names, "%.*s", (int)len, cols);
        else if (ndig < 4) snprintf(digits[ndig++], sizeof digits[0], "%.*s", (int)len, cols);
        continue;
      }
      for (uint32_t j = 0; f && j < f->ninsts; j++) {
        const rs_inst *in = &f->insts[j];
        if (in->addr != addr) continue;
        rows++;
        bool ok = true;
        static const char *const files[][2] = {{"GPR", "r"}, {"UGPR", "ur"}};
        for (size_t q = 0; q < 2; q++) {
          regsets a, b;
          bool has = plr_marks(names, digits, ndig, cols, files[q][0], &a);
          parsed_sets(f, in, files[q][1], &b);
          if (!has) memset(&a, 0, sizeof a); /* no UGPR column: none used */
          ok &= !memcmp(&a, &b, sizeof a);
        }
        differ += !ok;
        CHECKF(ok, "%s: %s /*%04x*/ %s: registers differ from -plr", list[i], f->name, addr, f->names.strs[in->opcode]);
      }
    }
    free(t);
    rs_module_free(m);
  }
  rs_check_free_list(list, n);
  *rows_out = rows, *differ_out = differ;
  return n;
}

static void test_tex_plr(void) {
  unsigned rows, differ;
  int n = plr_rows(".texplr", &rows, &differ);
  printf("texture/surface rows against -plr: %u of %u equal (%d listings)\n", rows - differ, rows, n);
  CHECKF(n == 10 && rows >= 250 && differ == 0, "%d listings, %u rows, %u differ", n, rows, differ);
}

/* The forms MAGMA 2.6.2 showed the table lacked (magma_forms.cu, NAME.T.formplr): F2F.F32.F64
 * (one register from a pair), ULEA.HI.SX32 with 4 operands, generic ATOM.E.CAS(.64) (P, value
 * or pair, [address pair], compare, swap; no descriptor) and its sm_80+ LD.E.64/ST.E.64 [R8]
 * fallback (pair, no descriptor; fill.c no_descs) write and read exactly what -plr marks, GPR
 * and UGPR, on sm_75..sm_90; pinned is identical and --free valid (test_pinned, test_free). */
static void test_magma_forms(void) {
  unsigned rows, differ;
  int n = plr_rows(".formplr", &rows, &differ);
  printf("MAGMA forms rows against -plr: %u of %u equal (%d listings)\n", rows - differ, rows, n);
  CHECKF(n == 5 && rows >= 40 && differ == 0, "%d listings, %u rows, %u differ", n, rows, differ);
  static const char *const want[][2] = {
      {"magma_forms.sm_75.sass", "F2F.F32.F64"}, {"magma_forms.sm_75.sass", "ULEA.HI.SX32"},
      {"magma_forms.sm_75.sass", "ATOM.E.CAS.64.STRONG.GPU"}, {"magma_forms.sm_80.sass", "ATOM.E.CAS.STRONG.GPU"},
      {"magma_forms.sm_90.sass", "ST.E.64"}};
  static const char *const lanes[] = {"1d2s", "1d1s", "1d2d2s2s2s", "1d1d2s1s1s", "2s2s"};
  for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", DIRS[0], want[k][0]);
    rs_err e = {{0}};
    rs_sass_opts o = {.no_lift = true, .whole = true};
    rs_module *m = rs_sass_load(path, NULL, &o, &e);
    CHECKF(m != NULL, "%s: %s", path, e.msg);
    if (m) width_of(m, want[k][1], lanes[k]);
    rs_module_free(m);
  }
  static const char *const archs[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90"};
  for (size_t k = 0; k < 5; k++) {
    char cmd[800], out[8192];
    snprintf(cmd, sizeof cmd, "%s regalloc %s/magma_forms.%s.sass --free -q 2>&1", rs_check_cli, DIRS[0], archs[k]);
    CHECKF(rs_check_run(cmd, out, sizeof out) == 0, "magma_forms.%s --free: %.400s", archs[k], out);
  }
}

/* sm_90 VIMNMX3 (opcode 0x?0f) and VIADDMNMX.RELU, which 11.8 drops, filled from the encoding and
 * read against the source (compares.cu minmax3, minmax3_more). minmax3: x = a[t] R0,
 * y = a[t+32] R7, z = a[t+64] R9, p = UR6, q = UR7; each result stored to out[t + 32k] (offset
 * 0x80 k). Signedness (word 1 bit 8), min/max (bit 26), .RELU (bit 12) and the b slot as UR, R
 * and immediate: each line is one the source's arithmetic fixes. */
static void test_fill_vimnmx3(void) {
  char *t = rs_read_file("tests/fixtures/sass-real/compares.sm_90.sass", NULL, &(rs_err){{0}});
  static const char *const want[] = {
      "VIMNMX3 R11, R0, UR7, R9, PT ;",                  /* min(min(x, q), z) ... */
      "STG.E desc[UR4][R4.64+0x80], R11 ;",              /* ... is out[t + 32] */
      "VIMNMX3.U32 R15, R0.reuse, UR7, R9.reuse, !PT ;", /* unsigned max(x, q, z) */
      "STG.E desc[UR4][R4.64+0x180], R15 ;",             /* out[t + 96] */
      "VIMNMX3 R13, R0.reuse, R7, R9, !PT ;",            /* max(x, y, z) */
      "STG.E desc[UR4][R4.64+0x100], R13 ;",             /* out[t + 64] */
      "VIMNMX3 R9, R0.reuse, UR6, R7.reuse, !PT ;",      /* max(max(x, p), y) */
      "STG.E desc[UR4][R4.64], R9 ;",                    /* out[t] */
      "VIMNMX3 R7, R0, 0x7, R7, !PT ;",                  /* max(max(x, 7), y) */
      "STG.E desc[UR4][R4.64+0x200], R7 ;",              /* out[t + 128] */
  };
  /* minmax3_more: x = R7, y = R0, z = R6, p:q = R12:R13 (LDC.64 c[0x220]), r = R8 */
  static const char *const more[] = {
      "VIMNMX3 R13, R12, R13, R7, !PT ;",                /* max(max(p, q), x) ... */
      "STG.E desc[UR4][R4.64+0x180], R13 ;",             /* ... out[t + 96] */
      "VIMNMX3 R3, R7, R0.reuse, R12, PT ;",             /* min(min(x, y), p) */
      "STG.E desc[UR4][R4.64+0x80], R3 ;",               /* out[t + 32] */
      "VIMNMX3 R9, R7.reuse, -0x5, R12, PT ;",           /* min(min(x, -5), p): a signed immediate */
      "STG.E desc[UR4][R4.64+0x100], R9 ;",              /* out[t + 64] */
      "VIMNMX3.U32 R7, R7, 0x64, R8, PT ;",              /* unsigned min(min(x, r), 100) */
      "STG.E desc[UR4][R4.64+0x200], R7 ;",              /* out[t + 128] */
      "VIADDMNMX.RELU R15, R7.reuse, -R0, R6, !PT ;",    /* max(max(x - y, z), 0) */
      "STG.E desc[UR4][R4.64+0x280], R15 ;",             /* out[t + 160] */
  };
  CHECK(t && strstr(t, "13 holes filled: minmax3_more 0x00c0 VIMNMX3, 0x00d0 VIMNMX, 0x00f0 VIMNMX3, 0x0100 VIMNMX, "
                      "0x0110 VIMNMX, 0x0130 VIADDMNMX, 0x0140 VIMNMX3, 0x0160 VIMNMX3; minmax3 0x00b0 VIMNMX3, "
                      "0x00c0 VIMNMX3, 0x00d0 VIMNMX3, 0x00f0 VIMNMX3, 0x0100 VIMNMX3,"));
  for (size_t k = 0; t && k < sizeof want / sizeof *want; k++) CHECKF(strstr(t, want[k]) != NULL, "no '%s'", want[k]);
  const char *mm = t ? strstr(t, ".text.minmax3_more:") : NULL;
  CHECK(mm != NULL);
  for (size_t k = 0; mm && k < sizeof more / sizeof *more; k++) CHECKF(strstr(mm, more[k]) != NULL, "no '%s'", more[k]);
  free(t);
}

/* A texture shape never measured is an error naming it (file:line), never a guess: a TXD of a 3D
 * texture, and a register printed where the mask says nothing is written. */
static void test_tex_refusals(const char *tmp) {
  static const struct {
    const char *from, *to, *want;
  } cases[] = {
      {"TXD R22, R20, R28, R20, UR6, 0x0, 2D ;", "TXD R22, R20, R28, R20, UR6, 0x0, 3D ;",
       "TXD with geometry '3D': its coordinate registers were never measured"},
      {"TLD.LZ RZ, R10, R10, UR8, 0x0, 1D, 0x3 ;", "TLD.LZ R12, R10, R10, UR8, 0x0, 1D, 0x3 ;",
       "TLD.LZ with mask 0x3 writes no register there, found 'R12' (RZ expected)"},
  };
  char *t0 = rs_read_file("tests/fixtures/sass-real/textures.sm_90.sass", NULL, &(rs_err){{0}});
  CHECK(t0 != NULL);
  for (size_t k = 0; t0 && k < sizeof cases / sizeof *cases; k++) {
    char *at = strstr(t0, cases[k].from);
    CHECKF(at != NULL, "no '%s' in textures.sm_90.sass", cases[k].from);
    if (!at) continue;
    char *t = rs_xstrndup(t0, strlen(t0));
    memcpy(t + (at - t0), cases[k].to, strlen(cases[k].to));
    char path[700], cmd[1600], out[4096], want[900];
    snprintf(path, sizeof path, "%s/tex.sass", tmp);
    FILE *fp = fopen(path, "w");
    CHECK(fp && fputs(t, fp) >= 0 && !fclose(fp));
    snprintf(cmd, sizeof cmd, "%s regalloc %s --pinned", rs_check_cli, path);
    int rc = rs_check_run(cmd, out, sizeof out);
    snprintf(want, sizeof want, "%s:%u: %s", path, rs_line_of(t, (size_t)(at - t0)), cases[k].want);
    CHECKF(rc == 2 && strstr(out, want), "rc %d: %.400s (want %s)", rc, out, want);
    unlink(path);
    free(t);
  }
  free(t0);
}

/* The new listings under --free: one round, the re-lift equivalent and the verifier passing on
 * every function (test_sass_free validates every listing of the directory further). */
static void test_tex_free(const char *tmp) {
  static const char *const src[] = {"textures", "surfaces", "compares"};
  static const char *const arch[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90"};
  unsigned funcs = 0, fewer = 0;
  for (size_t a = 0; a < 3; a++)
    for (size_t b = 0; b < 5; b++) {
      char cmd[1600], out[16384];
      snprintf(cmd, sizeof cmd, "%s regalloc %s/%s.%s.sass --free -o %s/free.sass", rs_check_cli, DIRS[0], src[a],
               arch[b], tmp);
      int rc = rs_check_run(cmd, out, sizeof out);
      CHECKF(rc == 0, "%s.%s: rc %d: %.300s", src[a], arch[b], rc, out);
      for (const char *q = out; (q = strstr(q, "regalloc(free): ")); q++) {
        unsigned before = 0, after = 0;
        const char *r = strstr(q, ": R: ");
        if (r) sscanf(r, ": R: %u -> %u", &before, &after);
        const char *nl = strchr(q, '\n');
        size_t n = nl ? (size_t)(nl - q) : strlen(q);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(n < 1023 ? n : 1023), q);
        CHECKF(strstr(line, " 1 round,") && strstr(line, "contributor sets equivalent") && strstr(line, "verifier: pass") &&
                   after <= before,
               "%s.%s: %s", src[a], arch[b], line);
        funcs++;
        fewer += after < before;
      }
    }
  char path[700];
  snprintf(path, sizeof path, "%s/free.sass", tmp);
  unlink(path);
  printf("textures, surfaces, compares --free: %u functions valid, %u with fewer R than ptxas\n", funcs, fewer);
  CHECKF(funcs == 5 * 13, "%u functions", funcs);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  char tmp[] = "/tmp/rs_test_sass_real.XXXXXX";
  CHECK(mkdtemp(tmp) != NULL);
  test_pinned();
  test_forms(tmp);
  test_long_notes();
  test_widths();
  test_upguard();
  test_fill_negated();
  test_joins();
  test_live();
  test_scoreboards(tmp);
  test_tex_plr();
  test_magma_forms();
  test_fill_vimnmx3();
  test_tex_refusals(tmp);
  test_tex_free(tmp);
  rmdir(tmp);
  return rs_check_done("test_sass_real");
}
