/* live.c - per-instruction live registers in nvdisasm's -plr terms, from analysis/liveness.c.
 *
 * -plr marks at each instruction the registers live into it, used by it or written by it; with
 * the shared liveness (predicated defs do not kill, live only where a def reaches, loops to a
 * fixed point) that is (live before ∩ defined before) ∪ written. Values are mapped to the
 * registers of the listing (their truth), so the rows can be compared with -plr's. One more
 * rule is -plr's own: a value live around a loop back edge is shown live over the whole loop
 * (also where it is dead, between a last use and a redefinition on one path). The Problem does
 * not take that rule (it would only add constraints no allocation needs). */
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

/* Blocks of the natural loop of back edge latch -> head (walk predecessors from the latch). */
static uint32_t loop_blocks(const rs_func *f, uint32_t head, uint32_t latch, uint8_t *in, uint32_t *stack) {
  uint32_t n = 0, sp = 0;
  memset(in, 0, f->nblocks);
  in[head] = 1;
  n = 1;
  if (!in[latch]) in[latch] = 1, n++, stack[sp++] = latch;
  while (sp) {
    uint32_t b = stack[--sp];
    for (uint32_t p = 0; p < f->blocks[b].npreds; p++) {
      uint32_t q = f->blocks[b].preds[p];
      if (!in[q]) in[q] = 1, n++, stack[sp++] = q;
    }
  }
  return n;
}

/* -plr's loop rule on the slot rows: add what flows along every back edge to the whole loop. */
static void loop_rule(const rs_live *l, rs_word *slotrows) {
  const rs_func *f = l->f;
  uint32_t NB = f->nblocks, W = l->words;
  uint32_t *stack = rs_xmalloc(sizeof *stack * (NB + 1)), *next = rs_xcalloc(NB + 1, sizeof *next);
  uint8_t *state = rs_xcalloc(NB + 1, 1), *in = rs_xmalloc(NB + 1); /* 1 on stack, 2 done */
  uint32_t *work = rs_xmalloc(sizeof *work * (NB + 1)), sp = 0;
  rs_word *across = rs_xmalloc(sizeof *across * (W + 1));
  if (NB) stack[sp++] = 0, state[0] = 1;
  while (sp) {
    uint32_t b = stack[sp - 1];
    if (next[b] < f->blocks[b].nsuccs) {
      uint32_t s = f->blocks[b].succs[next[b]++];
      if (state[s] == 0) {
        state[s] = 1;
        stack[sp++] = s;
      } else if (state[s] == 1) { /* back edge b -> s */
        const rs_word *hin = l->in + (size_t)s * W, *hdef = l->defin + (size_t)s * W, *dout = l->defout + (size_t)b * W;
        for (uint32_t w = 0; w < W; w++) across[w] = hin[w] & hdef[w] & dout[w];
        loop_blocks(f, s, b, in, work);
        for (uint32_t bb = 0; bb < NB; bb++) {
          if (!in[bb]) continue;
          const rs_block *blk = &f->blocks[bb];
          for (uint32_t k = 0; k < blk->ninsts; k++)
            for (uint32_t w = 0; w < W; w++) slotrows[(size_t)W * (blk->first_inst + k) + w] |= across[w];
        }
      }
    } else {
      state[b] = 2;
      sp--;
    }
  }
  free(stack);
  free(next);
  free(state);
  free(in);
  free(work);
  free(across);
}

/* experiment: per value, reachable from a def and reaching a use, no kills */
static void nokill_rule(const rs_live *l, rs_word *srows, const rs_word *drows) {
  const rs_func *f = l->f;
  uint32_t NB = f->nblocks, W = l->words;
  rs_word *bin = rs_xcalloc((size_t)W * (NB + 1), sizeof *bin), *cur = rs_xcalloc(W + 1, sizeof *cur);
  for (bool ch = true; ch;) {
    ch = false;
    for (uint32_t b = NB; b-- > 0;) {
      const rs_block *blk = &f->blocks[b];
      memset(cur, 0, W * sizeof *cur);
      for (uint32_t s = 0; s < blk->nsuccs; s++)
        for (uint32_t w = 0; w < W; w++) cur[w] |= bin[(size_t)W * blk->succs[s] + w];
      for (uint32_t k = blk->ninsts; k-- > 0;) {
        const rs_inst *in = &f->insts[blk->first_inst + k];
        for (uint32_t o = 0; o < in->nops; o++) {
          uint32_t oi = in->first_op + o;
          uint32_t sl = rs_live_op_slot(l, &f->ops[oi]);
          if (l->use[oi] && sl != UINT32_MAX) rs_bs_or_bits(cur, sl, l->use[oi]);
        }
      }
      if (memcmp(cur, bin + (size_t)W * b, W * sizeof *cur)) memcpy(bin + (size_t)W * b, cur, W * sizeof *cur), ch = true;
    }
  }
  for (uint32_t b = 0; b < NB; b++) {
    const rs_block *blk = &f->blocks[b];
    memset(cur, 0, W * sizeof *cur);
    for (uint32_t s = 0; s < blk->nsuccs; s++)
      for (uint32_t w = 0; w < W; w++) cur[w] |= bin[(size_t)W * blk->succs[s] + w];
    for (uint32_t k = blk->ninsts; k-- > 0;) {
      uint32_t ii = blk->first_inst + k;
      const rs_inst *in = &f->insts[ii];
      for (uint32_t o = 0; o < in->nops; o++) {
        uint32_t oi = in->first_op + o;
        uint32_t sl = rs_live_op_slot(l, &f->ops[oi]);
        if (l->use[oi] && sl != UINT32_MAX) rs_bs_or_bits(cur, sl, l->use[oi]);
      }
      /* srows holds (live & defd) | defs; widen the live part to reachable uses: need defd: use
       * srows' defined part approximated by defin of the block or defs so far */
      for (uint32_t w = 0; w < W; w++) srows[(size_t)W * ii + w] |= cur[w] & drows[(size_t)W * ii + w];
    }
  }
  free(bin);
  free(cur);
}

int rs_sass_live_rows(const rs_func *f, rs_word **rows, uint32_t *words, rs_err *e) {
  rs_live *l = rs_live_compute(f, e);
  if (!l) return -1;
  uint32_t W = l->words, UW = (uint32_t)RS_WORDS(f->tgt->nunits);
  rs_word *out = rs_xcalloc((size_t)UW * (f->ninsts + 1), sizeof *out);
  rs_word *srows = rs_xcalloc((size_t)W * (f->ninsts + 1), sizeof *srows);
  rs_word *drows = rs_xcalloc((size_t)W * (f->ninsts + 1), sizeof *drows);
  rs_word *live = rs_xcalloc(W + 1, sizeof *live), *defd = rs_xcalloc(W + 1, sizeof *defd),
          *eff = rs_xcalloc(W + 1, sizeof *eff);
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    const rs_block *b = &f->blocks[bi];
    memcpy(live, l->out + (size_t)bi * W, W * sizeof *live);
    memcpy(defd, l->defout + (size_t)bi * W, W * sizeof *defd);
    for (uint32_t k = b->ninsts; k-- > 0;) {
      uint32_t ii = b->first_inst + k;
      const rs_inst *in = &f->insts[ii];
      memset(eff, 0, W * sizeof *eff);
      for (uint32_t o = 0; o < in->nops; o++) { /* written here */
        const rs_operand *op = &f->ops[in->first_op + o];
        uint32_t s = rs_live_op_slot(l, op);
        if ((op->flags & RS_F_DEF) && s != UINT32_MAX) rs_bs_or_bits(eff, s, rs_live_op_lanes(l, op));
      }
      for (uint32_t o = 0; o < in->nops; o++) { /* defined before it */
        uint32_t oi = in->first_op + o;
        uint32_t s = rs_live_op_slot(l, &f->ops[oi]);
        if (s == UINT32_MAX || !(f->ops[oi].flags & RS_F_DEF)) continue;
        if (l->dnew[oi]) rs_bs_andnot_bits(defd, s, l->dnew[oi]);
        if (l->dkill[oi]) rs_bs_or_bits(defd, s, l->dkill[oi]);
      }
      rs_live_step_back(l, in, live);
      const rs_word *bout = l->out + (size_t)bi * W;
      bool blk = getenv("RS_PLR_BLOCK") != NULL;
      for (uint32_t w = 0; w < W; w++) srows[(size_t)W * ii + w] = eff[w] | ((live[w] | (blk ? bout[w] : 0)) & defd[w]);
      memcpy(drows + (size_t)W * ii, defd, W * sizeof *defd);
    }
  }
  if (getenv("RS_PLR_NOKILL")) nokill_rule(l, srows, drows);
  else if (!getenv("RS_PLR_NOLOOP")) loop_rule(l, srows);
  for (uint32_t ii = 0; ii < f->ninsts; ii++) to_units(l, srows + (size_t)W * ii, out + (size_t)UW * ii);
  free(srows);
  free(drows);
  free(live);
  free(defd);
  free(eff);
  rs_live_free(l);
  *rows = out;
  *words = UW;
  return 0;
}
