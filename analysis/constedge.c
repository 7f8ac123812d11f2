/* constedge.c - branches whose outcome a predecessor's constants decide (the structurizer's
 * loop exits and flow blocks): the edges P -> B after which B goes to one successor only.
 *
 * The structurizer turns a divergent region into uniform flow blocks whose branch reads a mask
 * its phis give per incoming edge, and LLVM lowers those phis to constants in the predecessors:
 *     P:  %m = S_MOV_B32 -1; S_BRANCH B               (this edge: "leave the loop")
 *     B:  $vcc_lo = S_ANDN2_B32 $exec_lo, %m; S_CBRANCH_VCCNZ %header; S_BRANCH %exit
 * Entered from P, B's $vcc is $exec & ~(-1) = 0 for every lane whatever $exec holds, so the
 * wave always leaves to %exit: the path P -> B -> %header is never run. LLVM's liveness agrees
 * (the phi's other incoming is `undef` there, which the coalescer drops), and it may reuse, on
 * that path, the register of a value only the header's side reads (clSPARSE EM_mergepath_global
 * on gfx1200: `%5.sub3`, the loop counter, and `%103`, defined in the loop before P).
 *
 * A mask's value on the edge is known only as the whole wave's: all zero or all ones, through the
 * lane-mask operations of mir/exec.c's table (RS_I_MASKOP) on constants (S_MOV 0 / -1), found
 * in B before the branch or else in P; $exec and any other def are unknown (EXEC may be 0, so an
 * AND with it is never "all ones"). Only then does the edge get a node of its own (liveness.c):
 * B as entered from P, where the values every other predecessor of B writes (B's Flow phis,
 * `undef` from P in LLVM's IR) follow the decided successor only, the rest both successors as
 * LLVM's liveness keeps them. Blocks of a split if/else's IF or
 * FLOW (simt.c, their own per-lane edges) are left alone. */
#include "analysis/liveness.h"
#include <stdlib.h>

enum { K_UNKNOWN, K_ZERO, K_ONES };

static uint32_t maskop(const rs_inst *in) { return (in->flags & RS_I_MASKOP) >> RS_I_MASKOP_SHIFT; }

/* Whether def operand d writes at least the lanes of register operand q (same register). */
static bool covers(const rs_operand *d, const rs_operand *q) {
  if (d->kind != q->kind || d->reg != q->reg) return false;
  return (d->lanes & q->lanes) == q->lanes;
}

static bool touches(const rs_operand *d, const rs_operand *q) {
  if (d->kind != q->kind) return false;
  if (d->kind == RS_OP_VREG) return d->reg == q->reg && (d->lanes & q->lanes);
  return rs_lanes_overlap(d->reg, d->lanes, q->reg, q->lanes);
}

static int value_in(const rs_func *f, uint32_t b, uint32_t end, const rs_operand *q, int32_t pred, int depth);

/* The wave-wide value of register q just before instruction `end` of block b; where b does not
 * write it, its value at the end of `pred` (-1: unknown). */
static int value_in(const rs_func *f, uint32_t b, uint32_t end, const rs_operand *q, int32_t pred, int depth) {
  if (depth > 8 || (q->kind != RS_OP_VREG && q->kind != RS_OP_PREG) || (q->flags & RS_F_EXEC)) return K_UNKNOWN;
  const rs_block *blk = &f->blocks[b];
  for (uint32_t k = end; k-- > 0;) {
    const rs_inst *in = &f->insts[blk->first_inst + k];
    const rs_operand *ops = &f->ops[in->first_op];
    bool hit = false;
    for (uint32_t o = 0; o < in->nops && !hit; o++) hit = (ops[o].flags & RS_F_DEF) && touches(&ops[o], q);
    if (!hit) continue;
    if ((in->flags & RS_I_REGMASK) || !in->nops || !(ops[0].flags & RS_F_DEF) || !covers(&ops[0], q) ||
        (ops[0].flags & RS_F_COND))
      return K_UNKNOWN;
    for (uint32_t o = 1; o < in->nops; o++) /* a second def of q (an implicit one): unknown */
      if ((ops[o].flags & RS_F_DEF) && touches(&ops[o], q)) return K_UNKNOWN;
    uint32_t mo = maskop(in);
    const rs_operand *s[2] = {NULL, NULL};
    uint32_t ns = 0;
    for (uint32_t o = 1; o < in->nops && ns < 2; o++)
      if (!(ops[o].flags & (RS_F_DEF | RS_F_IMPLICIT))) s[ns++] = &ops[o];
    int a = ns > 0 ? value_in(f, b, k, s[0], pred, depth + 1) : K_UNKNOWN;
    int c = ns > 1 ? value_in(f, b, k, s[1], pred, depth + 1) : K_UNKNOWN;
    switch (mo) {
    case RS_M_ZERO: return K_ZERO;
    case RS_M_ONES: return K_ONES;
    case RS_M_MOV: return a;
    case RS_M_NOT: return a == K_ZERO ? K_ONES : a == K_ONES ? K_ZERO : K_UNKNOWN;
    case RS_M_AND: return a == K_ZERO || c == K_ZERO ? K_ZERO : a == K_ONES && c == K_ONES ? K_ONES : K_UNKNOWN;
    case RS_M_ANDN2: return a == K_ZERO || c == K_ONES ? K_ZERO : a == K_ONES && c == K_ZERO ? K_ONES : K_UNKNOWN;
    case RS_M_OR: return a == K_ONES || c == K_ONES ? K_ONES : a == K_ZERO && c == K_ZERO ? K_ZERO : K_UNKNOWN;
    case RS_M_ORN2: return a == K_ONES || c == K_ZERO ? K_ONES : a == K_ZERO && c == K_ONES ? K_ZERO : K_UNKNOWN;
    default: return K_UNKNOWN;
    }
  }
  if (pred < 0) return K_UNKNOWN;
  return value_in(f, (uint32_t)pred, f->blocks[pred].ninsts, q, -1, depth + 1);
}

static bool split_edge_end(const rs_live *l, uint32_t b) {
  for (uint32_t k = 0; k < l->nsplits; k++)
    if (l->splits[k].ifb == b || l->splits[k].flow == b) return true;
  return false;
}

uint32_t rs_constedge_find(rs_live *l) {
  const rs_func *f = l->f;
  for (uint32_t b = 0; b < f->nblocks; b++) {
    const rs_block *blk = &f->blocks[b];
    if (blk->nsuccs != 2 || split_edge_end(l, b)) continue;
    /* the block's one branch on a mask (S_CBRANCH_VCCNZ / VCCZ) and the register it tests */
    uint32_t at = blk->ninsts, nb = 0;
    for (uint32_t k = 0; k < blk->ninsts; k++) {
      const rs_inst *in = &f->insts[blk->first_inst + k];
      if (in->flags & (RS_I_BR_MASKNZ | RS_I_BR_MASKZ)) at = k, nb++;
    }
    if (nb != 1) continue;
    const rs_inst *br = &f->insts[blk->first_inst + at];
    const rs_operand *q = NULL;
    int32_t target = -1;
    uint32_t nq = 0, ndef = 0;
    for (uint32_t o = 0; o < br->nops; o++) {
      const rs_operand *op = &f->ops[br->first_op + o];
      if (op->kind == RS_OP_BLOCK) target = (int32_t)op->reg;
      else if (op->flags & RS_F_DEF) ndef++;
      else if (op->kind == RS_OP_PREG || op->kind == RS_OP_VREG) q = op, nq++;
    }
    if (nq != 1 || ndef || target < 0) continue; /* one tested register, nothing written */
    uint32_t other = blk->succs[0] == (uint32_t)target ? blk->succs[1] : blk->succs[0];
    if (other == (uint32_t)target || (blk->succs[0] != (uint32_t)target && blk->succs[1] != (uint32_t)target)) continue;
    bool nz = (br->flags & RS_I_BR_MASKNZ) != 0;
    for (uint32_t p = 0; p < blk->npreds; p++) {
      uint32_t pb = blk->preds[p];
      if (split_edge_end(l, pb)) continue;
      int v = value_in(f, b, at, q, (int32_t)pb, 0);
      if (v == K_UNKNOWN) continue;
      bool taken = nz ? v == K_ONES : v == K_ZERO;
      rs_constedge c = {pb, b, taken ? (uint32_t)target : other, NULL};
      RS_PUSH(l->cedges, l->ncedges, l->capcedges, c);
    }
  }
  return l->ncedges;
}
