/* test_vop3p.c - the 32-bit registers a packed FP32 source really reads (mir/vop3p.c), on real
 * llc-14 output.
 *
 * Fixture gemv_pk_r20_w4 (corpus/kernels/gemv_batched.cl, RPT=20 under amdgpu_waves_per_eu(4)):
 * a loaded float4 %A is read last as "V_PK_FMA_F32 0, %A.sub2_sub3" (op_sel and op_sel_hi
 * clear: both result halves take the low register), and LLVM gives the register of %A.sub3 to
 * other values before that read; llc-14 -verify-machineinstrs -verify-regalloc accepts it.
 *  1. the table: per source-modifier value, the lanes left unread, on every packed F32 operand;
 *  2. LLVM's own allocation verifies (native and Z3 agree: pass);
 *  3. mutants of the MIR text: set op_sel_hi (8), op_sel (4) or both (12) on those sources, so
 *     the hardware reads the high register: the same allocation must now fail with dataflow,
 *     one operand at a time too (a real read of a clobbered lane is still caught). */
#include "front/front.h"
#include "check.h"
#include "corpus/truth.h"
#include "verify/verifier.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIX "tests/fixtures/amd/gemv_pk_r20_w4"

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  *len = fread(s, 1, (size_t)n, f);
  s[*len] = 0;
  fclose(f);
  return s;
}

/* Source-modifier value in front of operand oi (the immediate before it). */
static long mods_of(const rs_func *f, uint32_t oi) {
  const rs_operand *m = &f->ops[oi - 1];
  if (m->kind != RS_OP_IMM) return -1;
  return strtol(f->src + m->text_off, NULL, 10);
}

static bool is_pk_f32(const rs_func *f, const rs_inst *in) {
  const char *o = rs_func_opcode(f, in);
  return !strcmp(o, "V_PK_FMA_F32") || !strcmp(o, "V_PK_MUL_F32") || !strcmp(o, "V_PK_ADD_F32");
}

/* Verdict of LLVM's allocation (al) on the MIR text `text` (with `both`, native and Z3 must
 * agree). */
static rs_verdict verdict_of(const char *text, size_t len, const rs_alignment *al, bool both, uint32_t *conflicts) {
  rs_err e = {{0}};
  char *copy = malloc(len + 1);
  memcpy(copy, text, len + 1);
  rs_module *m = rs_module_parse(FIX ".postsplit.mir", copy, len, RS_SRC_MIR, NULL, &e);
  CHECKF(m != NULL, "%s", e.msg);
  if (!m) return RS_V_SYNTAX;
  rs_problem *p = rs_problem_build(m->funcs[0], &e);
  char *json = rs_truth_json(p, al->assign);
  rs_verifier vf;
  rs_verdict v = RS_V_SYNTAX;
  if (rs_verifier_open(&vf, both ? RS_VERIFIER_BOTH : RS_VERIFIER_NATIVE, p, 20000, &e) == 0) {
    rs_candidate c;
    rs_check_result r, z;
    bool agree = rs_verify_text(&vf, NULL, json, strlen(json), &c, &r, &z);
    CHECKF(agree, "native %s, z3 %s", rs_verdict_str(r.verdict), rs_verdict_str(z.verdict));
    v = r.verdict;
    if (conflicts) *conflicts = r.counts[RS_VK_CONFLICT];
    rs_candidate_free(&c);
    rs_verifier_close(&vf);
  } else {
    CHECKF(0, "verifier: %s", e.msg);
  }
  free(json);
  rs_problem_free(p);
  rs_module_free(m);
  return v;
}

/* text with the modifier immediate of every listed operand replaced by `mods` */
static char *with_mods(const rs_func *f, const char *text, size_t len, const uint32_t *ops, uint32_t n, int mods,
                       size_t *outlen) {
  char *s = malloc(len + 4 * n + 1), rep[8];
  size_t k = 0, at = 0;
  int rl = snprintf(rep, sizeof rep, "%d", mods);
  for (uint32_t i = 0; i < n; i++) { /* ops are in text order */
    const rs_operand *m = &f->ops[ops[i] - 1];
    memcpy(s + k, text + at, m->text_off - at);
    k += m->text_off - at;
    memcpy(s + k, rep, (size_t)rl);
    k += (size_t)rl;
    at = m->text_off + m->text_len;
  }
  memcpy(s + k, text + at, len - at);
  k += len - at;
  s[k] = 0;
  *outlen = k;
  return s;
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  rs_err e = {{0}};
  size_t len = 0;
  char *text = slurp(FIX ".postsplit.mir", &len);
  CHECKF(text != NULL, "cannot read %s", FIX ".postsplit.mir");
  if (!text) return rs_check_done("test_vop3p");
  char *copy = malloc(len + 1);
  memcpy(copy, text, len + 1);
  rs_module *ps = rs_module_parse(FIX ".postsplit.mir", copy, len, RS_SRC_MIR, NULL, &e);
  rs_module *fin = ps ? rs_module_load(FIX ".final.mir", NULL, &e) : NULL;
  CHECKF(ps && fin, "%s", e.msg);
  if (!ps || !fin) return rs_check_done("test_vop3p");
  const rs_func *f = ps->funcs[0];

  /* 1. the table on every packed F32 source, in both stages */
  uint32_t by_mods[16] = {0}, bad = 0, npk = 0;
  uint32_t *unread_ops = calloc(f->nops + 1, sizeof *unread_ops), nunread = 0;
  for (int stage = 0; stage < 2; stage++) {
    const rs_func *g = stage ? fin->funcs[0] : f;
    for (uint32_t i = 0; i < g->ninsts; i++) {
      const rs_inst *in = &g->insts[i];
      if (!is_pk_f32(g, in)) continue;
      npk++;
      uint32_t nsrc = strcmp(rs_func_opcode(g, in), "V_PK_FMA_F32") ? 2 : 3;
      for (uint32_t s = 0; s < nsrc; s++) {
        uint32_t oi = in->first_op + 2 + 2 * s;
        const rs_operand *op = &g->ops[oi];
        long mods = mods_of(g, oi);
        if ((op->kind != RS_OP_VREG && op->kind != RS_OP_PREG) || mods < 0 || mods > 15) continue;
        unsigned lo = op->lanes ? (unsigned)__builtin_ctzll(op->lanes) & ~1u : 0;
        if (op->lanes >> lo != 0xF) continue;
        rs_lanes hi = (rs_lanes)0xC << lo, low = (rs_lanes)3 << lo;
        /* op_sel (4) picks the source half of result.lo, op_sel_hi (8) that of result.hi */
        rs_lanes want = (mods & 12) == 0 ? hi : (mods & 12) == 12 ? low : 0;
        by_mods[mods]++;
        if (op->unread != want) bad++;
        if (stage == 0 && op->unread == hi && op->kind == RS_OP_VREG) unread_ops[nunread++] = oi;
      }
    }
  }
  printf("packed F32 instructions %u; sources by modifier: 0:%u 8:%u 12:%u 4:%u; unread-high vreg sources %u\n",
         npk, by_mods[0], by_mods[8], by_mods[12], by_mods[4], nunread);
  CHECKF(bad == 0, "%u packed sources with the wrong unread lanes", bad);
  CHECK(npk > 50 && by_mods[0] > 10 && by_mods[8] > 10 && nunread > 10);

  /* 2. LLVM's own allocation verifies */
  rs_alignment al;
  CHECKF(rs_truth_postsplit(f, fin->funcs[0], &al, &e) == 0, "align: %s", e.msg);
  rs_verdict v = verdict_of(text, len, &al, true, NULL);
  CHECKF(v == RS_V_PASS, "LLVM's allocation of gemv_pk_r20_w4: %s", rs_verdict_str(v));

  /* 3. the same allocation where those sources really read the high register */
  const int mods_set[] = {8, 4, 12};
  for (size_t k = 0; k < sizeof mods_set / sizeof *mods_set; k++) {
    size_t ml;
    char *mt = with_mods(f, text, len, unread_ops, nunread, mods_set[k], &ml);
    uint32_t nc = 0;
    v = verdict_of(mt, ml, &al, true, &nc);
    CHECKF(v == RS_V_DATAFLOW && nc > 0, "all %u sources with modifiers %d: %s (%u conflicts)", nunread, mods_set[k],
           rs_verdict_str(v), nc);
    free(mt);
  }
  /* one operand at a time: the reads LLVM's reuse really clobbers */
  uint32_t caught = 0;
  for (uint32_t i = 0; i < nunread; i++) {
    size_t ml;
    char *mt = with_mods(f, text, len, &unread_ops[i], 1, 8, &ml);
    if (verdict_of(mt, ml, &al, false, NULL) == RS_V_DATAFLOW) caught++; /* native: fast */
    free(mt);
  }
  printf("single-operand op_sel_hi mutants: %u of %u rejected as dataflow\n", caught, nunread);
  CHECK(caught > 0);

  rs_alignment_free(&al);
  free(unread_ops);
  rs_module_free(fin);
  rs_module_free(ps);
  free(text);
  return rs_check_done("test_vop3p");
}
