/* carry.c - the 64-bit sources of AMDGPU integer arithmetic whose high 32-bit register feeds only
 * the high 32 bits of the result, as a table.
 *
 * Hardware: in an addition (and a left shift) carries only move up, so the low 32 bits of
 *   V_MAD_U64_U32 / V_MAD_I64_I32   vdst = src0 * src1 + src2   (src2: 64 bits)
 *   V_LSHL_ADD_U64                  vdst = (src0 << src1) + src2 (src0, src2: 64 bits; gfx940+)
 *   V_LSHLREV_B64                   vdst = src1 << src0          (src1: 64 bits)
 * are a function of the low 32 bits of the 64-bit sources. When the result's high register is
 * dead after the instruction, the sources' high registers are not read (analysis/liveness.c
 * drops them from the use).
 *
 * LLVM allocates so: ggml's OpenCL kernels (q4_k GEMV/GEMM, 4-wide LDS tile GEMM) compute a 64-bit
 * index `%r = V_MAD_U64_U32 a, b, %c` and overwrite `%r.sub1` (a sign extension of %r.sub0) before
 * reading it; greedy then gives %c's high register to another value live across the MAD
 * (gfx940: `$vgpr12_vgpr13 = V_LSHL_ADD_U64 ...`, `$vgpr13 = V_MBCNT_HI_U32_B32 ...`, then
 * `V_MAD_U64_U32 $vgpr10, $sgpr24, $vgpr12_vgpr13`; llc's own live-ins list only vgpr12 of the
 * pair there). Fixture tests/fixtures/real/ggml_*, test_problem. */
#include "mir/carry.h"
#include <string.h>

/* operand positions (0 = vdst) of the 64-bit sources that carry up */
static const struct {
  const char *opcode;
  uint8_t ndefs;    /* defs before the sources (vdst, and the carry-out sdst of the MADs) */
  uint8_t nops_min; /* operands before any implicit one */
  uint8_t src[2];   /* operand indices of the carrying 64-bit sources; 0 = none */
} table[] = {
    {"V_MAD_U64_U32_e64", 2, 6, {4, 0}},       {"V_MAD_I64_I32_e64", 2, 6, {4, 0}},
    {"V_MAD_U64_U32_gfx11_e64", 2, 6, {4, 0}}, {"V_MAD_I64_I32_gfx11_e64", 2, 6, {4, 0}},
    {"V_LSHL_ADD_U64_e64", 1, 4, {1, 3}},      {"V_LSHLREV_B64_e64", 1, 3, {2, 0}},
};

void rs_carry_mark(rs_func *f, const rs_inst *in, const char *opcode) {
  size_t t = 0, nt = sizeof table / sizeof *table;
  while (t < nt && strcmp(table[t].opcode, opcode)) t++;
  if (t == nt || in->nops < table[t].nops_min) return;
  const rs_operand *ops = &f->ops[in->first_op];
  for (uint32_t k = 0; k < in->nops; k++) { /* the shape: the defs, then sources, no other def */
    bool def = (ops[k].flags & RS_F_DEF) != 0;
    if (k < table[t].ndefs ? !def : def && !(ops[k].flags & RS_F_IMPLICIT)) return;
  }
  const rs_operand *d = &ops[0];
  if ((d->kind != RS_OP_VREG && d->kind != RS_OP_PREG) || !d->lanes ||
      d->lanes >> (__builtin_ctzll(d->lanes) & ~1) != 0xF) /* one 64-bit pair */
    return;
  for (unsigned s = 0; s < 2 && table[t].src[s]; s++) {
    rs_operand *op = &f->ops[in->first_op + table[t].src[s]];
    if ((op->kind != RS_OP_VREG && op->kind != RS_OP_PREG) || !op->lanes) continue;
    if (op->lanes >> (__builtin_ctzll(op->lanes) & ~1) != 0xF) continue;
    op->flags |= RS_F_CARRY;
  }
}
