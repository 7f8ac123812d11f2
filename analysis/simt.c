/* simt.c - the lanes of a wave that run each side of a divergent if/else (the per-lane rule).
 *
 * A VGPR holds one 32-bit value per lane (work-item), and a vector instruction writes only the
 * lanes EXEC enables. After structurization a divergent if/else runs as
 *     IF -> THEN... -> FLOW -> ELSE... -> ENDIF   (and IF -> FLOW, FLOW -> ENDIF when a side is empty)
 * where IF disables the lanes that do not take THEN (RS_I_EXEC_NARROW, skipping to FLOW when none
 * is left), FLOW gives the wave back the lanes saved at IF (RS_I_EXEC_RESTORE) and keeps only the
 * others (RS_I_EXEC_FLIP, skipping to ENDIF when none is left). The front end names these roles
 * (mir/exec.c); nothing here knows an opcode. So each lane runs one of two paths, never the
 * wave's path THEN -> FLOW -> ELSE:
 *     THEN lanes  IF -> THEN... -> FLOW -> ENDIF
 *     ELSE lanes  IF -> FLOW -> ELSE... -> ENDIF
 * Per lane, a vector value read in ELSE is not needed in THEN (another value may hold its
 * register there: THEN's writes do not reach the ELSE lanes), and a value written in THEN is not
 * defined in ELSE (ELSE may reuse its register while the THEN lanes keep it). Liveness and
 * reaching definitions of per-lane slots therefore run on the lanes' CFG: the edges IF -> FLOW
 * and FLOW -> ELSE carry no per-lane slot, and a copy of FLOW (node nblocks + k, the ELSE lanes'
 * FLOW) carries them from IF to ELSE (liveness.c, solve). Scalar registers (one per wave) and
 * everything else keep the wave's CFG. The interference at FLOW itself is that of both copies
 * together (problem.c reads the union), as LLVM's FLOW phis make it.
 *
 * LLVM relies on this: SIOptimizeVGPRLiveRange ends an ELSE-only value at its last THEN read, and
 * the structurizer's FLOW/ENDIF phis take `undef` from the side that does not write a value,
 * which the coalescer turns into a sub-register lane written on both sides and read after ENDIF
 * (ggml q4_k GEMV on gfx942: %169.sub0 read in ELSE, its register reused in THEN; flash-attention
 * on gfx940: %5913.sub1 written in THEN and in ELSE, its register reused before IF).
 *
 * A diamond is split only when every condition of the argument holds, else it keeps the wave's
 * CFG (stricter, never wrong): IF ends in NARROW + SKIP to FLOW and has the two successors THEN
 * and FLOW; FLOW has RESTORE then FLIP + SKIP to ENDIF, the two successors ELSE and ENDIF, and no
 * per-lane def before its RESTORE or after its FLIP (those run for one side's lanes only); IF has
 * no per-lane def after its NARROW; THEN leaves only to FLOW and ELSE only to ENDIF; and no
 * instruction of THEN, FLOW or ELSE changes the lanes another way (RS_I_EXEC_OTHER: whole-wave
 * mode). Registers a cross-lane instruction touches (RS_I_CROSSLANE: a readlane in ELSE may read
 * a THEN lane's copy) keep the wave's CFG everywhere; a write that ignores EXEC (RS_I_LANEWRITE:
 * V_WRITELANE, also into the SGPR spill VGPR) inside a diamond meets every per-lane value live at
 * the diamond's boundaries, which the other side's lanes may hold (problem.c). Lanes outside IF's
 * mask run neither side, and no instruction touches their registers in between. */
#include "analysis/liveness.h"
#include <stdlib.h>
#include <string.h>

/* Target of the block operand of the block's first instruction with flag `fl`, -1 if none. */
static int32_t branch_target(const rs_func *f, const rs_block *b, uint32_t fl) {
  for (uint32_t k = 0; k < b->ninsts; k++) {
    const rs_inst *in = &f->insts[b->first_inst + k];
    if (!(in->flags & fl)) continue;
    for (uint32_t o = 0; o < in->nops; o++)
      if (f->ops[in->first_op + o].kind == RS_OP_BLOCK) return (int32_t)f->ops[in->first_op + o].reg;
    return -1;
  }
  return -1;
}

/* Index in block b of its last instruction with flag fl (b->ninsts if none). */
static uint32_t last_with(const rs_func *f, const rs_block *b, uint32_t fl) {
  uint32_t at = b->ninsts;
  for (uint32_t k = 0; k < b->ninsts; k++)
    if (f->insts[b->first_inst + k].flags & fl) at = k;
  return at;
}

static bool lanewise_def(const rs_live *l, const rs_inst *in) {
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &l->f->ops[in->first_op + o];
    uint32_t s = rs_live_op_slot(l, op);
    if ((op->flags & RS_F_DEF) && s != UINT32_MAX && rs_bs_get(l->lanewise, s)) return true;
  }
  return false;
}

/* Any per-lane def among instructions [from, to) of block b. */
static bool defs_in(const rs_live *l, const rs_block *b, uint32_t from, uint32_t to) {
  for (uint32_t k = from; k < to && k < b->ninsts; k++)
    if (lanewise_def(l, &l->f->insts[b->first_inst + k])) return true;
  return false;
}

/* Blocks reachable from `start` without entering `stop` into mark[] (1); false if the region
 * leaves through any block other than `stop` or contains one of the `forbid` blocks. */
static bool region(const rs_func *f, uint32_t start, uint32_t stop, const uint32_t *forbid, unsigned nforbid,
                   uint8_t *mark, uint32_t *stack) {
  uint32_t sp = 0;
  memset(mark, 0, f->nblocks);
  mark[start] = 1;
  stack[sp++] = start;
  while (sp) {
    uint32_t b = stack[--sp];
    for (unsigned k = 0; k < nforbid; k++)
      if (b == forbid[k]) return false;
    if (f->blocks[b].nsuccs == 0) return false; /* a return inside a side */
    for (uint32_t s = 0; s < f->blocks[b].nsuccs; s++) {
      uint32_t c = f->blocks[b].succs[s];
      if (c != stop && !mark[c]) mark[c] = 1, stack[sp++] = c;
    }
  }
  return true;
}

static bool region_plain(const rs_func *f, const uint8_t *mark) {
  for (uint32_t b = 0; b < f->nblocks; b++) {
    if (!mark[b]) continue;
    const rs_block *blk = &f->blocks[b];
    for (uint32_t k = 0; k < blk->ninsts; k++)
      if (f->insts[blk->first_inst + k].flags & RS_I_EXEC_OTHER) return false;
  }
  return true;
}

static bool has_succ(const rs_block *b, uint32_t s) {
  for (uint32_t k = 0; k < b->nsuccs; k++)
    if (b->succs[k] == s) return true;
  return false;
}

/* The slots of the per-lane register files (the target's vector files, vgpr and agpr): their
 * units and the values whose class may use only those files. */
static void lanewise_slots(rs_live *l) {
  const rs_func *f = l->f;
  const rs_target *t = f->tgt;
  uint32_t vec = 0;
  for (uint32_t i = 0; i < t->nfiles; i++)
    if (!strcmp(t->files[i].name, "vgpr") || !strcmp(t->files[i].name, "agpr")) vec |= 1u << i;
  l->lanewise = rs_xcalloc(l->words + 1, sizeof *l->lanewise);
  for (uint32_t g = 0; g < l->ngroups; g++)
    if (l->groups[g].files && (l->groups[g].files & ~vec) == 0)
      for (uint32_t s = l->groups[g].first; s < l->groups[g].end; s++) rs_bs_set(l->lanewise, s);
  for (uint32_t i = 0; i < t->nfiles; i++)
    if (vec >> i & 1)
      for (uint32_t u = t->files[i].first; u < t->files[i].first + t->files[i].count; u++)
        if (t->unit_flags[u] & RS_UNIT_TRACKED) rs_bs_set(l->lanewise, l->pbase + 2 * u), rs_bs_set(l->lanewise, l->pbase + 2 * u + 1);
  l->vecslots = rs_xmalloc((l->words + 1) * sizeof *l->vecslots);
  memcpy(l->vecslots, l->lanewise, (l->words + 1) * sizeof *l->vecslots);
  /* registers a cross-lane instruction reads or writes keep the wave's CFG: a lane may read
   * another lane's copy (a readlane in ELSE of a THEN lane), so no lane's copy is free early */
  for (uint32_t i = 0; i < f->ninsts; i++) {
    const rs_inst *in = &f->insts[i];
    if (!(in->flags & RS_I_CROSSLANE)) continue;
    for (uint32_t o = 0; o < in->nops; o++) {
      const rs_operand *op = &f->ops[in->first_op + o];
      uint32_t s = rs_live_op_slot(l, op);
      if (s == UINT32_MAX) continue;
      rs_lanes m = op->kind == RS_OP_VREG ? f->vregs[op->reg].full : rs_live_op_lanes(l, op);
      rs_bs_andnot_bits(l->lanewise, s, m);
    }
  }
}

void rs_simt_lanewrite_meets(const rs_live *l, uint32_t b, rs_word *set) {
  size_t W = l->words;
  for (uint32_t k = 0; k < l->nsplits; k++) {
    const rs_simt_split *s = &l->splits[k];
    if (!rs_bs_get(s->inside, b)) continue;
    const rs_word *o = l->out + (size_t)s->ifb * W, *fi = l->in + (size_t)s->flow * W, *ei = l->in + (size_t)s->endif * W;
    for (size_t w = 0; w < W; w++) set[w] |= (o[w] | fi[w] | ei[w]) & l->lanewise[w];
  }
}

uint32_t rs_simt_find(rs_live *l) {
  const rs_func *f = l->f;
  uint32_t n = f->nblocks;
  lanewise_slots(l);
  uint8_t *then = rs_xmalloc(n + 1), *els = rs_xmalloc(n + 1);
  uint32_t *stack = rs_xmalloc(sizeof *stack * (n + 1));
  for (uint32_t flow = 0; flow < n; flow++) {
    const rs_block *fb = &f->blocks[flow];
    int32_t endif = branch_target(f, fb, RS_I_EXEC_SKIP);
    uint32_t restore = last_with(f, fb, RS_I_EXEC_RESTORE), flip = last_with(f, fb, RS_I_EXEC_FLIP),
             skip = last_with(f, fb, RS_I_EXEC_SKIP);
    if (endif < 0 || (uint32_t)endif == flow || restore >= flip || flip >= skip || skip == fb->ninsts) continue;
    if (fb->nsuccs != 2 || !has_succ(fb, (uint32_t)endif)) continue;
    uint32_t e = fb->succs[0] == (uint32_t)endif ? fb->succs[1] : fb->succs[0];
    if (e == flow || e == (uint32_t)endif || defs_in(l, fb, 0, restore) || defs_in(l, fb, flip + 1, fb->ninsts)) continue;
    /* IF: the one predecessor whose NARROW + SKIP go to FLOW */
    int32_t ifb = -1;
    uint32_t nif = 0;
    for (uint32_t p = 0; p < fb->npreds; p++) {
      const rs_block *pb = &f->blocks[fb->preds[p]];
      uint32_t nar = last_with(f, pb, RS_I_EXEC_NARROW);
      if (nar < pb->ninsts && branch_target(f, pb, RS_I_EXEC_SKIP) == (int32_t)flow &&
          last_with(f, pb, RS_I_EXEC_SKIP) > nar && !defs_in(l, pb, nar + 1, pb->ninsts))
        ifb = (int32_t)fb->preds[p], nif++;
    }
    if (nif != 1) continue;
    const rs_block *ib = &f->blocks[ifb];
    if (ib->nsuccs != 2 || !has_succ(ib, flow)) continue;
    uint32_t t = ib->succs[0] == flow ? ib->succs[1] : ib->succs[0];
    uint32_t forbid_t[3] = {(uint32_t)ifb, (uint32_t)endif, e}, forbid_e[3] = {(uint32_t)ifb, flow, t};
    if (t == flow || t == (uint32_t)endif || !region(f, t, flow, forbid_t, 3, then, stack) ||
        !region(f, e, (uint32_t)endif, forbid_e, 3, els, stack))
      continue;
    bool apart = true; /* the sides share no block; FLOW's other predecessors are THEN's */
    for (uint32_t b = 0; b < n && apart; b++) apart = !(then[b] && els[b]);
    for (uint32_t p = 0; p < fb->npreds && apart; p++) apart = fb->preds[p] == (uint32_t)ifb || then[fb->preds[p]];
    if (!apart || !region_plain(f, then) || !region_plain(f, els)) continue;
    for (uint32_t k = 0; k < fb->ninsts && apart; k++) apart = !(f->insts[fb->first_inst + k].flags & RS_I_EXEC_OTHER);
    if (!apart) continue;
    rs_simt_split s = {(uint32_t)ifb, flow, e, (uint32_t)endif, rs_xcalloc(RS_WORDS(n) + 1, sizeof(rs_word))};
    rs_bs_set(s.inside, flow);
    for (uint32_t b = 0; b < n; b++)
      if (then[b] || els[b]) rs_bs_set(s.inside, b);
    RS_PUSH(l->splits, l->nsplits, l->capsplits, s);
  }
  free(then);
  free(els);
  free(stack);
  return l->nsplits;
}
