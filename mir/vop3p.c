/* vop3p.c - the lanes a packed (VOP3P) source really reads, as a table of the opcodes llc-14
 * emits for gfx90a.
 *
 * Hardware (CDNA2 ISA, VOP3P): each result half picks one 32-bit half of each 64-bit source.
 * For the packed FP32 ops, result.lo reads src[OP_SEL ? hi : lo] and result.hi reads
 * src[OP_SEL_HI ? hi : lo]; V_PK_MOV_B32 writes result.lo from src0 and result.hi from src1, each
 * picking its half with its own OP_SEL bit. In MIR these bits sit in the source-modifier
 * immediate in front of each source (SISrcMods: OP_SEL_0 = 4, OP_SEL_1 = 8); the trailing
 * op_sel/op_sel_hi immediates are 0 in code generation (the asm parser folds them into the
 * source modifiers), so a non-zero one makes us assume every lane is read.
 *
 * LLVM: AMDGPUDAGToDAGISel::SelectVOP3PMods selects a broadcast scalar ("Really a scalar input")
 * as REG_SEQUENCE (x, sub0, IMPLICIT_DEF, sub1) with both bits clear; after coalescing the
 * operand may name %A.sub2_sub3 of a wider tuple whose sub3 lane has no value there in LLVM's
 * sub-range liveness, and the machine verifier only requires some lane of a use to be live.
 * LLVM therefore gives the unread register to other values (fixture gemv_pk_r20_w4 in
 * tests/fixtures/amd; test_vop3p.c). Packed 16-bit ops select 16-bit halves of one 32-bit
 * register: no register goes unread, so they are not in the table. */
#include "mir/vop3p.h"
#include <stdlib.h>
#include <string.h>

enum { SEL_BOTH = 1, /* the source feeds both result halves (op_sel and op_sel_hi) */
       SEL_ONE = 2   /* the source feeds one result half, chosen by its op_sel bit */ };
enum { OP_SEL_0 = 4, OP_SEL_1 = 8 };

static const struct {
  const char *opcode;
  uint8_t nsrc;
  uint8_t rule[3];
} table[] = {
    {"V_PK_FMA_F32", 3, {SEL_BOTH, SEL_BOTH, SEL_BOTH}},
    {"V_PK_MUL_F32", 2, {SEL_BOTH, SEL_BOTH}},
    {"V_PK_ADD_F32", 2, {SEL_BOTH, SEL_BOTH}},
    {"V_PK_MOV_B32", 2, {SEL_ONE, SEL_ONE}},
};

/* Value of a plain decimal immediate operand, -1 if it is not one. */
static long imm_value(const rs_func *f, const rs_operand *op) {
  if (op->kind != RS_OP_IMM || op->text_len == 0 || op->text_len > 9) return -1;
  long v = 0;
  for (uint32_t i = 0; i < op->text_len; i++) {
    char c = f->src[op->text_off + i];
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

void rs_vop3p_read_lanes(rs_func *f, const rs_inst *in, const char *opcode) {
  size_t t = 0, nt = sizeof table / sizeof *table;
  while (t < nt && strcmp(table[t].opcode, opcode)) t++;
  if (t == nt) return;
  /* vdst = OPC mods0, src0, ..., clamp, op_sel, op_sel_hi, neg_lo, neg_hi [, implicit ...] */
  uint32_t nsrc = table[t].nsrc, first = in->first_op;
  if (in->nops < 1 + 2 * nsrc + 5 || !(f->ops[first].flags & RS_F_DEF)) return;
  for (uint32_t k = 1; k < 1 + 2 * nsrc + 5; k++)
    if ((f->ops[first + k].flags & (RS_F_DEF | RS_F_IMPLICIT))) return;
  if (imm_value(f, &f->ops[first + 2 * nsrc + 2]) != 0 || imm_value(f, &f->ops[first + 2 * nsrc + 3]) != 0)
    return;
  for (uint32_t s = 0; s < nsrc; s++) {
    long mods = imm_value(f, &f->ops[first + 1 + 2 * s]);
    rs_operand *op = &f->ops[first + 2 + 2 * s];
    if (mods < 0 || (op->kind != RS_OP_VREG && op->kind != RS_OP_PREG) || !op->lanes) continue;
    unsigned lo = (unsigned)__builtin_ctzll(op->lanes) & ~1u;
    if (op->lanes >> lo != 0xF) continue; /* not one 64-bit register pair */
    rs_lanes half[2] = {(rs_lanes)3 << lo, (rs_lanes)0xC << lo}, read;
    if (table[t].rule[s] == SEL_BOTH)
      read = half[(mods & OP_SEL_0) != 0] | half[(mods & OP_SEL_1) != 0];
    else
      read = half[(mods & OP_SEL_0) != 0];
    op->unread = op->lanes & ~read;
  }
}
