/* live.c - per-instruction live registers in nvdisasm's -plr terms.
 *
 * -plr marks at each instruction the registers live into it, used by it or written by it. Its
 * liveness is plain backward liveness over the CFG with predicated defs that neither kill nor
 * read (the old value survives where the predicate is false, so nothing dies there, but a
 * predicated def does not make an undefined register live either). Values are mapped to the
 * registers of the listing (their truth), so the rows can be compared with -plr's.
 *
 * Measured against -plr on the fixtures (tests/test_sass_live.c): R registers are shown live
 * also where no def reaches (from the kernel entry), predicates and uniform registers only where
 * one does; there is no extra loop rule. With plr_calls, CALL.REL.NOINC is taken the way
 * nvdisasm 11.8 takes it (its quirk): an opaque call whose target's registers it defines, so
 * nothing flows back along the call edge, and RET returns nowhere. Without it (the Problem's
 * view too) a local CALL.REL.NOINC is the branch it is and a subroutine returns to its callers.
 *
 * This is -plr's view, not the Problem's: analysis/liveness.c (what interference uses) keeps
 * every register dead where no def reaches and treats a dead copy's source as unread; both only
 * remove constraints no allocation needs. */
#include "sass/sass.h"
#include "analysis/liveness.h"
#include <stdlib.h>
#include <string.h>

/* Set the units of the slots set in `set` into the unit bitset `row`. */
static void to_units(const rs_live *l, const rs_word *set, rs_word *row) {
  const rs_func *f = l->f;
  for (uint32_t w = 0; w < l->words; w++)
    for (rs_word x = set[w]; x; x &= x - 1) {
      uint32_t slot = w * 64 + (uint32_t)__builtin_ctzll(x);
      if (slot >= l->nslots || slot >= l->sbase) continue;
      uint32_t o = l->owner[slot], unit;
      if (o < f->nvregs) {
        if (!f->truth || !f->truth[o].lanes) continue;
        unit = f->truth[o].unit + (slot - l->vslot[o]) / 2;
      } else {
        unit = o - f->nvregs;
      }
      if (unit < f->tgt->nunits) rs_bs_set(row, unit);
    }
}

/* Slots of R registers (values of an R class, physical R units): -plr shows them live even
 * where no def reaches (it keeps the reaching-def cut for predicates and uniform registers). */
static rs_word *r_slots(const rs_live *l) {
  const rs_func *f = l->f;
  const rs_target *t = f->tgt;
  rs_word *m = rs_xcalloc(l->words + 1, sizeof *m);
  uint32_t rfile = 0;
  for (uint32_t fi = 0; fi < t->nfiles; fi++)
    if (!strcmp(t->files[fi].name, "r")) rfile = fi;
  for (uint32_t s = 0; s < l->nslots && s < l->sbase; s++) {
    uint32_t o = l->owner[s];
    bool r = o < f->nvregs ? (t->classes[f->vregs[o].cls].files >> rfile & 1) != 0
                           : rs_target_file_of(t, o - f->nvregs) == (int)rfile;
    if (r) rs_bs_set(m, s);
  }
  return m;
}

static bool is_ret(const rs_func *f, const rs_inst *in) { return !strncmp(rs_func_opcode(f, in), "RET.", 4); }

/* Successor s of block b in the CFG -plr sees: with plr_calls, a subroutine call goes on to
 * its return point only and a RET goes nowhere. */
static bool plr_edge(const rs_func *f, uint32_t b, uint32_t s, bool plr_calls) {
  const rs_block *blk = &f->blocks[b];
  if (!plr_calls || !blk->ninsts) return true;
  const rs_inst *last = &f->insts[blk->first_inst + blk->ninsts - 1];
  if (is_ret(f, last)) return s == b + 1 && (last->flags & RS_I_PREDICATED);
  if (!strncmp(rs_func_opcode(f, last), "CALL.", 5)) return s == b + 1;
  return true;
}

/* One instruction backward: kill unconditional defs (everything, at a quirk call), add uses. */
static void step(const rs_live *l, const rs_inst *in, rs_word *live) {
  const rs_func *f = l->f;
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    uint32_t s = rs_live_op_slot(l, op);
    if (s != UINT32_MAX && (op->flags & RS_F_DEF) && !(op->flags & RS_F_COND))
      rs_bs_andnot_bits(live, s, rs_live_op_lanes(l, op));
  }
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    uint32_t s = rs_live_op_slot(l, op);
    if (s != UINT32_MAX && !(op->flags & RS_F_DEF)) rs_bs_or_bits(live, s, rs_live_op_lanes(l, op));
  }
}

int rs_sass_live_rows(const rs_func *f, rs_word **rows, uint32_t *words, bool plr_calls, rs_err *e) {
  rs_live *l = rs_live_compute(f, e); /* for its slot layout */
  if (!l) return -1;
  uint32_t W = l->words, UW = (uint32_t)RS_WORDS(f->tgt->nunits), NB = f->nblocks;
  rs_word *in = rs_xcalloc((size_t)W * (NB + 1), sizeof *in), *cur = rs_xcalloc(W + 1, sizeof *cur);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t b = NB; b-- > 0;) {
      const rs_block *blk = &f->blocks[b];
      memset(cur, 0, W * sizeof *cur);
      for (uint32_t s = 0; s < blk->nsuccs; s++)
        if (plr_edge(f, b, blk->succs[s], plr_calls))
          for (uint32_t w = 0; w < W; w++) cur[w] |= in[(size_t)W * blk->succs[s] + w];
      for (uint32_t k = blk->ninsts; k-- > 0;) step(l, &f->insts[blk->first_inst + k], cur);
      if (memcmp(cur, in + (size_t)W * b, W * sizeof *cur)) {
        memcpy(in + (size_t)W * b, cur, W * sizeof *cur);
        changed = true;
      }
    }
  }
  rs_word *out = rs_xcalloc((size_t)UW * (f->ninsts + 1), sizeof *out);
  rs_word *defd = rs_xcalloc(W + 1, sizeof *defd);
  rs_word *srows = rs_xcalloc((size_t)W * (f->ninsts + 1), sizeof *srows), *rmask = r_slots(l);
  for (uint32_t b = 0; b < NB; b++) {
    const rs_block *blk = &f->blocks[b];
    memcpy(defd, l->defout + (size_t)W * b, W * sizeof *defd);
    memset(cur, 0, W * sizeof *cur);
    for (uint32_t s = 0; s < blk->nsuccs; s++)
      if (plr_edge(f, b, blk->succs[s], plr_calls))
        for (uint32_t w = 0; w < W; w++) cur[w] |= in[(size_t)W * blk->succs[s] + w];
    for (uint32_t k = blk->ninsts; k-- > 0;) {
      uint32_t ii = blk->first_inst + k;
      const rs_inst *ins = &f->insts[ii];
      rs_word *srow = srows + (size_t)W * ii;
      /* written here: shown even when dead */
      for (uint32_t o = 0; o < ins->nops; o++) {
        const rs_operand *op = &f->ops[ins->first_op + o];
        uint32_t sl = rs_live_op_slot(l, op);
        if ((op->flags & RS_F_DEF) && sl != UINT32_MAX) rs_bs_or_bits(srow, sl, rs_live_op_lanes(l, op));
      }
      for (uint32_t o = 0; o < ins->nops; o++) { /* defined before it */
        uint32_t oi = ins->first_op + o;
        uint32_t sl = rs_live_op_slot(l, &f->ops[oi]);
        if (sl == UINT32_MAX || !(f->ops[oi].flags & RS_F_DEF)) continue;
        if (l->dnew[oi]) rs_bs_andnot_bits(defd, sl, l->dnew[oi]);
        if (l->dkill[oi]) rs_bs_or_bits(defd, sl, l->dkill[oi]);
      }
      step(l, ins, cur);
      for (uint32_t w = 0; w < W; w++) srow[w] |= cur[w] & (defd[w] | rmask[w]);
    }
  }
  for (uint32_t ii = 0; ii < f->ninsts; ii++) to_units(l, srows + (size_t)W * ii, out + (size_t)UW * ii);
  free(srows);
  free(rmask);
  free(in);
  free(cur);
  free(defd);
  rs_live_free(l);
  *rows = out;
  *words = UW;
  return 0;
}
