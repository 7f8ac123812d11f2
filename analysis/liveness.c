/* liveness.c - slot layout, per-operand lane effects, and the two dataflow problems
 * (backward liveness, forward reaching definitions) iterated to a fixed point. */
#include "analysis/liveness.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int first_file(uint32_t mask) {
  for (int f = 0; f < 32; f++)
    if (mask >> f & 1) return f;
  return -1;
}

uint32_t rs_live_op_slot(const rs_live *l, const rs_operand *op) {
  if (op->kind == RS_OP_VREG) return l->vslot[op->reg];
  if (op->kind == RS_OP_PREG) {
    if (!(l->f->tgt->unit_flags[op->reg] & RS_UNIT_TRACKED)) return UINT32_MAX;
    return l->pbase + 2 * op->reg;
  }
  return UINT32_MAX;
}

void rs_live_defs_back(const rs_live *l, const rs_inst *in, rs_word *defd) {
  const rs_func *f = l->f;
  for (uint32_t o = 0; o < in->nops; o++) {
    uint32_t oi = in->first_op + o;
    uint32_t s = rs_live_op_slot(l, &f->ops[oi]);
    if (s == UINT32_MAX || !(f->ops[oi].flags & RS_F_DEF)) continue;
    if (l->dnew[oi]) rs_bs_andnot_bits(defd, s, l->dnew[oi]);
    if (l->dkill[oi]) rs_bs_or_bits(defd, s, l->dkill[oi]);
  }
}

/* Lanes of an operand that are tracked (a tuple may include untracked units). */
rs_lanes rs_live_op_lanes(const rs_live *l, const rs_operand *op) {
  if (op->kind == RS_OP_VREG) return op->lanes;
  rs_lanes m = 0;
  for (unsigned k = 0; k < 32 && (op->lanes >> (2 * k)); k++)
    if (op->reg + k < l->f->tgt->nunits && (l->f->tgt->unit_flags[op->reg + k] & RS_UNIT_TRACKED))
      m |= op->lanes & ((rs_lanes)3 << (2 * k));
  return m;
}

/* Spill slots. Greedy's spill code moves values through stack slots with SI_SPILL_*_SAVE and
 * SI_SPILL_*_RESTORE; a slot nothing else touches is a register in memory, a save is a copy into
 * it and a restore a copy out of it, so a save needs only the source lanes that some restore
 * later reads into live lanes (the dead-copy-lanes rule). LLVM relies on this: a spill hoisted
 * by greedy may store a whole tuple whose dead lanes already hold other values (test_problem.c,
 * fixture fa_hd128_bc16_threads64_rpt1_half_causal0_unroll_c4_unroll_d4.postsplit-trimmed.mir).
 * A slot any other instruction references stays opaque: its saves read every lane. */

/* N of an operand "%stack.N" or "%stack.N.name", -1 otherwise. */
static int32_t stack_index(const rs_func *f, const rs_operand *op) {
  if (op->kind != RS_OP_OTHER || op->text_len < 8 || memcmp(f->src + op->text_off, "%stack.", 7)) return -1;
  const char *c = f->src + op->text_off + 7, *e = f->src + op->text_off + op->text_len;
  int32_t n = 0;
  if (!isdigit((unsigned char)*c)) return -1;
  while (c < e && isdigit((unsigned char)*c) && n < (1 << 20)) n = n * 10 + (*c++ - '0');
  return n < (1 << 20) && (c == e || *c == '.') ? n : -1;
}

/* First lane of the register a save or restore names, which sits at the slot's lane 0: a
 * sub-register's first lane; a physical operand already starts at its first unit. */
static unsigned reg_lo(const rs_operand *op) {
  if (op->kind != RS_OP_VREG || !(op->flags & RS_F_SUBREG) || !op->lanes) return 0;
  return (unsigned)__builtin_ctzll(op->lanes) & ~1u;
}

/* 1 for a save "SI_SPILL_* reg, %stack.N, ..., 0", 2 for a restore "reg = SI_SPILL_* %stack.N,
 * ..., 0", 0 otherwise (also for a non-zero offset into the slot). */
static int spill_kind(const rs_func *f, const rs_inst *in) {
  const char *name = rs_func_opcode(f, in);
  size_t n = strlen(name);
  if (in->nops < 2 || strncmp(name, "SI_SPILL_", 9)) return 0;
  bool save = n > 14 && !strcmp(name + n - 5, "_SAVE"), restore = n > 17 && !strcmp(name + n - 8, "_RESTORE");
  const rs_operand *r = &f->ops[in->first_op];
  if (!(save || restore) || (r->kind != RS_OP_VREG && r->kind != RS_OP_PREG) || !r->lanes ||
      restore != ((r->flags & RS_F_DEF) != 0) || stack_index(f, &f->ops[in->first_op + 1]) < 0)
    return 0;
  for (uint32_t o = 2; o < in->nops; o++) {
    const rs_operand *x = &f->ops[in->first_op + o];
    if ((x->flags & RS_F_DEF) || (x->kind == RS_OP_IMM && !(x->text_len == 1 && f->src[x->text_off] == '0')))
      return 0;
  }
  return save ? 1 : 2;
}

/* Give every slot only saves and restores touch 2 slots per dword from `slot` on; fills
 * l->spill. Returns the next free slot. */
static uint32_t spill_layout(rs_live *l, uint32_t slot) {
  const rs_func *f = l->f;
  l->spill = rs_xmalloc(sizeof *l->spill * (f->ninsts + 1));
  for (uint32_t i = 0; i < f->ninsts; i++) l->spill[i] = UINT32_MAX;
  rs_lanes *span = NULL; /* per stack index: lanes moved through it; 0 = opaque or unused */
  uint8_t *opaque = NULL;
  uint32_t n = 0;
  for (uint32_t i = 0; i < f->ninsts; i++) {
    const rs_inst *in = &f->insts[i];
    int kind = spill_kind(f, in);
    for (uint32_t o = 0; o < in->nops; o++) {
      int32_t k = stack_index(f, &f->ops[in->first_op + o]);
      if (k < 0) continue;
      if ((uint32_t)k >= n) {
        uint32_t nn = (uint32_t)k + 16;
        span = rs_xrealloc(span, sizeof *span * nn);
        opaque = rs_xrealloc(opaque, nn);
        memset(span + n, 0, sizeof *span * (nn - n));
        memset(opaque + n, 0, nn - n);
        n = nn;
      }
      if (kind && o == 1) {
        span[k] |= f->ops[in->first_op].lanes >> reg_lo(&f->ops[in->first_op]);
      } else {
        opaque[k] = 1;
      }
    }
  }
  uint32_t *first = rs_xmalloc(sizeof *first * (n + 1));
  for (uint32_t k = 0; k < n; k++) {
    first[k] = UINT32_MAX;
    if (opaque[k] || !span[k]) continue;
    first[k] = slot;
    slot += 2 * rs_lanes_units(span[k]);
  }
  for (uint32_t i = 0; i < f->ninsts; i++) {
    const rs_inst *in = &f->insts[i];
    if (spill_kind(f, in)) l->spill[i] = first[stack_index(f, &f->ops[in->first_op + 1])];
  }
  free(first);
  free(span);
  free(opaque);
  return slot;
}

static void layout(rs_live *l) {
  const rs_func *f = l->f;
  const rs_target *t = f->tgt;
  bool *used = rs_xcalloc(f->nvregs ? f->nvregs : 1, 1);
  for (uint32_t i = 0; i < f->nops; i++)
    if (f->ops[i].kind == RS_OP_VREG) used[f->ops[i].reg] = true;
  l->vslot = rs_xmalloc(sizeof *l->vslot * (f->nvregs ? f->nvregs : 1));
  for (uint32_t v = 0; v < f->nvregs; v++) l->vslot[v] = UINT32_MAX;
  /* group by class file mask: collect distinct masks in first-seen order */
  uint32_t masks[64], nmasks = 0;
  for (uint32_t v = 0; v < f->nvregs; v++) {
    if (!used[v] || f->vregs[v].cls < 0) continue;
    uint32_t m = t->classes[f->vregs[v].cls].files, k;
    for (k = 0; k < nmasks && masks[k] != m; k++) {}
    if (k == nmasks && nmasks < 64) masks[nmasks++] = m;
  }
  l->groups = rs_xcalloc(nmasks + 1, sizeof *l->groups);
  uint32_t slot = 0;
  for (uint32_t k = 0; k < nmasks; k++) {
    rs_slotgroup *g = &l->groups[l->ngroups++];
    g->files = masks[k];
    g->first = slot;
    g->pfile = first_file(masks[k]);
    for (uint32_t v = 0; v < f->nvregs; v++) {
      if (!used[v] || f->vregs[v].cls < 0 || t->classes[f->vregs[v].cls].files != masks[k]) continue;
      l->vslot[v] = slot;
      slot += 2 * f->vregs[v].width;
    }
    g->end = slot;
  }
  l->pbase = slot;
  l->sbase = slot + 2 * t->nunits;
  l->nslots = spill_layout(l, l->sbase);
  l->words = (uint32_t)RS_WORDS(l->nslots);
  l->owner = rs_xmalloc(sizeof *l->owner * (l->nslots ? l->nslots : 1));
  for (uint32_t v = 0; v < f->nvregs; v++)
    if (l->vslot[v] != UINT32_MAX)
      for (uint32_t k = 0; k < 2u * f->vregs[v].width; k++) l->owner[l->vslot[v] + k] = v;
  for (uint32_t u = 0; u < t->nunits; u++)
    l->owner[l->pbase + 2 * u] = l->owner[l->pbase + 2 * u + 1] = f->nvregs + u;
  for (uint32_t k = l->sbase; k < l->nslots; k++) l->owner[k] = UINT32_MAX; /* no value's */
  free(used);
}

static void or_lanes(rs_word *b, uint32_t slot, rs_lanes m) {
  if (slot != UINT32_MAX && m) rs_bs_or_bits(b, slot, m);
}
static void clr_lanes(rs_word *b, uint32_t slot, rs_lanes m) {
  if (slot != UINT32_MAX && m) rs_bs_andnot_bits(b, slot, m);
}
/* Up to 64 lanes from `slot`, never reading past the last slot (spill slots end the set). */
static rs_lanes get_lanes(const rs_live *l, const rs_word *b, uint32_t slot) {
  uint32_t n = l->nslots - slot;
  return rs_bs_get_bits(b, slot, n < 64 ? n : 64);
}

/* Lanes a def makes undefined besides the ones it writes: all other lanes on `undef` sub-defs. */
static rs_lanes undef_others(const rs_func *f, const rs_operand *op) {
  if (op->kind == RS_OP_VREG && (op->flags & RS_F_UNDEF) && (op->flags & RS_F_SUBREG))
    return f->vregs[op->reg].full & ~op->lanes;
  return 0;
}

/* Forward pass over a block: the block's out set from in, and (if record) the per-op
 * defined-lane deltas. */
static void block_defs(rs_live *l, uint32_t bi, rs_word *cur, bool record) {
  const rs_func *f = l->f;
  const rs_block *b = &f->blocks[bi];
  for (uint32_t k = 0; k < b->ninsts; k++) {
    const rs_inst *in = &f->insts[b->first_inst + k];
    for (uint32_t o = 0; o < in->nops && record; o++) {
      uint32_t oi = in->first_op + o;
      uint32_t s = rs_live_op_slot(l, &f->ops[oi]);
      l->uundef[oi] = 0;
      if (l->use[oi] && s != UINT32_MAX)
        l->uundef[oi] = l->use[oi] & ~get_lanes(l, cur, s);
    }
    for (uint32_t o = 0; o < in->nops; o++) {
      uint32_t oi = in->first_op + o;
      const rs_operand *op = &f->ops[oi];
      if (record) l->dnew[oi] = l->dkill[oi] = 0;
      if (!(op->flags & RS_F_DEF)) continue;
      uint32_t s = rs_live_op_slot(l, op);
      if (s == UINT32_MAX) continue;
      rs_lanes w = rs_live_op_lanes(l, op), gone = undef_others(f, op);
      unsigned n = op->kind == RS_OP_VREG ? 2u * f->vregs[op->reg].width : 64;
      if (n > 64) n = 64;
      if (op->kind == RS_OP_PREG) n = 2 * rs_lanes_units(op->lanes);
      rs_lanes before = rs_bs_get_bits(cur, s, n);
      if (record) {
        l->dkill[oi] = gone & before;
        l->dnew[oi] = w & ~(before & ~gone);
      }
      clr_lanes(cur, s, gone);
      or_lanes(cur, s, w);
    }
  }
}

/* Lanes a COPY's source must provide: those matching destination lanes live after it. A copy
 * into lanes nobody reads keeps nothing alive (LLVM relies on this: it will reuse the register
 * of a source lane whose copy is dead). Copy chains converge because the dataflow starts empty. */
static rs_lanes copy_needed(const rs_live *l, const rs_inst *in, const rs_word *live_after) {
  const rs_func *f = l->f;
  const rs_operand *d = &f->ops[in->first_op], *s = &f->ops[in->first_op + 1];
  uint32_t ds = rs_live_op_slot(l, d);
  rs_lanes dl = rs_live_op_lanes(l, d);
  if (ds == UINT32_MAX || !dl) return l->use[in->first_op + 1];
  unsigned dlo = (unsigned)__builtin_ctzll(dl), slo = s->lanes ? (unsigned)__builtin_ctzll(s->lanes) : 0;
  rs_lanes live = (get_lanes(l, live_after, ds) & dl) >> dlo;
  return (live << slo) & l->use[in->first_op + 1];
}

/* A COPY of one register into another; with lane_copy also a vector COPY that reads the active
 * lanes (`implicit $exec`, as PHI elimination writes them), which copies per lane like the rest. */
static bool is_copy(const rs_live *l, const rs_inst *in, bool lane_copy) {
  if (!(in->flags & RS_I_COPY) || in->nops < 2) return false;
  for (uint32_t o = 2; o < in->nops; o++) {
    const rs_operand *x = &l->f->ops[in->first_op + o];
    if (!lane_copy || (x->flags & RS_F_DEF) || !(x->flags & RS_F_IMPLICIT) || !(x->flags & RS_F_EXEC)) return false;
  }
  const rs_operand *d = &l->f->ops[in->first_op], *s = &l->f->ops[in->first_op + 1];
  return (d->flags & RS_F_DEF) && !(d->flags & RS_F_COND) && !(s->flags & RS_F_DEF) &&
         (d->kind == RS_OP_VREG || d->kind == RS_OP_PREG) &&
         (s->kind == RS_OP_VREG || s->kind == RS_OP_PREG);
}

/* The lanes of an operand above its first 32-bit register. */
static rs_lanes high_lanes(rs_lanes m) { return m ? m & ~((rs_lanes)3 << (__builtin_ctzll(m) & ~1)) : 0; }

/* Whether the high half of instruction `in`'s first def and all its other defs are dead after it
 * (live_after): then its carry-up sources (RS_F_CARRY, mir/carry.c) do not read their high half. */
static bool carry_high_dead(const rs_live *l, const rs_inst *in, const rs_word *live_after) {
  const rs_func *f = l->f;
  bool any = false;
  for (uint32_t o = 0; o < in->nops; o++) any |= (f->ops[in->first_op + o].flags & RS_F_CARRY) != 0;
  if (!any) return false;
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if (!(op->flags & RS_F_DEF)) continue;
    uint32_t s = rs_live_op_slot(l, op);
    rs_lanes m = rs_live_op_lanes(l, op);
    if (o == 0) {
      if (s == UINT32_MAX || m != op->lanes) return false; /* untracked: assume read */
      m = high_lanes(m);
    }
    if (s != UINT32_MAX && (get_lanes(l, live_after, s) & m)) return false;
  }
  return true;
}

/* rs_live_step_back; else_flow: in a split's FLOW as its ELSE lanes run it (node nb + k), where
 * a vector COPY writes only those lanes: one whose destination is dead in every ELSE lane reads
 * nothing there (the structurizer's FLOW phi takes `undef` from IF, the ELSE lanes' edge, and the
 * coalescer drops it: LLVM may reuse the source's register on that edge). */
static void step_back(const rs_live *l, const rs_inst *in, rs_word *live, bool else_flow) {
  const rs_func *f = l->f;
  bool carry = carry_high_dead(l, in, live);
  rs_lanes copied = 0, from_slot = 0;
  uint32_t copied_op = UINT32_MAX; /* the operand whose reads `copied` replaces */
  uint32_t ss = l->spill[in - f->insts];
  uint32_t ds = in->nops ? rs_live_op_slot(l, &f->ops[in->first_op]) : UINT32_MAX;
  bool lane_copy = else_flow && ds != UINT32_MAX && rs_bs_get(l->lanewise, ds);
  if (is_copy(l, in, lane_copy)) {
    copied = copy_needed(l, in, live);
    copied_op = 1;
  } else if (ss != UINT32_MAX) {
    const rs_operand *r = &f->ops[in->first_op];
    unsigned lo = reg_lo(r);
    if (r->flags & RS_F_DEF) { /* restore: the slot lanes that land in live lanes */
      uint32_t ds = rs_live_op_slot(l, r);
      from_slot = (ds == UINT32_MAX ? r->lanes : get_lanes(l, live, ds) & rs_live_op_lanes(l, r)) >> lo;
    } else { /* save: the source lanes whose slot lanes are live after; it overwrites them */
      copied = ((get_lanes(l, live, ss) & (r->lanes >> lo)) << lo) & l->use[in->first_op];
      copied_op = 0;
      clr_lanes(live, ss, r->lanes >> lo);
    }
  }
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if (!(op->flags & RS_F_DEF) || (op->flags & RS_F_COND)) continue;
    uint32_t s = rs_live_op_slot(l, op);
    clr_lanes(live, s, rs_live_op_lanes(l, op) | undef_others(f, op));
  }
  for (uint32_t o = 0; o < in->nops; o++) {
    uint32_t oi = in->first_op + o;
    rs_lanes u = o == copied_op ? copied : l->use[oi];
    if (carry && (f->ops[oi].flags & RS_F_CARRY)) u &= ~high_lanes(f->ops[oi].lanes);
    if (u) or_lanes(live, rs_live_op_slot(l, &f->ops[oi]), u);
  }
  or_lanes(live, ss, from_slot);
}

void rs_live_step_back(const rs_live *l, const rs_inst *in, rs_word *live) { step_back(l, in, live, false); }

static void compute_uses(rs_live *l) {
  const rs_func *f = l->f;
  for (uint32_t i = 0; i < f->nops; i++) {
    const rs_operand *op = &f->ops[i];
    l->use[i] = 0;
    if (op->kind != RS_OP_VREG && op->kind != RS_OP_PREG) continue;
    if (op->flags & RS_F_UNDEF) continue; /* reads nothing */
    if (!(op->flags & RS_F_DEF)) l->use[i] = rs_live_op_lanes(l, op) & ~op->unread;
  }
  /* A conditional (predicated) def keeps the old value where it does not write: model it as a
   * read of the lanes it writes, so the old value stays live across it. */
  for (uint32_t i = 0; i < f->nops; i++)
    if ((f->ops[i].flags & RS_F_DEF) && (f->ops[i].flags & RS_F_COND))
      l->use[i] = rs_live_op_lanes(l, &f->ops[i]);
}

/* Whether edge from->to is one a lane never takes with its per-lane slots (simt.c): IF -> FLOW
 * and FLOW -> ELSE of a split diamond carry only the other slots. */
static bool lanes_cut(const rs_live *l, uint32_t from, uint32_t to) {
  for (uint32_t i = 0; i < l->nsplits; i++) {
    const rs_simt_split *s = &l->splits[i];
    if ((from == s->ifb && to == s->flow) || (from == s->flow && to == s->els)) return true;
  }
  return false;
}

/* Whether edge from->to is a split's IF -> FLOW. The wave takes it only when no lane is left for
 * THEN (IF's SKIP), so FLOW then runs for the ELSE lanes alone: exactly node nb + k, which
 * carries every slot across that edge (a vector instruction of FLOW writes only ELSE lanes there,
 * so a COPY of a scalar into a vector value dead in every ELSE lane reads nothing on it). */
static bool wave_via_else(const rs_live *l, uint32_t from, uint32_t to) {
  for (uint32_t i = 0; i < l->nsplits; i++)
    if (from == l->splits[i].ifb && to == l->splits[i].flow) return true;
  return false;
}

/* Index in l->cedges of edge from->to (constedge.c: `to` then leaves by one successor only), or
 * UINT32_MAX. */
static uint32_t const_edge(const rs_live *l, uint32_t from, uint32_t to) {
  for (uint32_t i = 0; i < l->ncedges; i++)
    if (l->cedges[i].pred == from && l->cedges[i].block == to) return i;
  return UINT32_MAX;
}

/* dst |= src, without the per-lane slots when cut, or only them when only_lanes. */
static void flow_in(const rs_live *l, rs_word *dst, const rs_word *src, bool cut, bool only_lanes) {
  size_t W = l->words;
  if (only_lanes)
    for (size_t w = 0; w < W; w++) dst[w] |= src[w] & l->lanewise[w];
  else if (cut)
    for (size_t w = 0; w < W; w++) dst[w] |= src[w] & ~l->lanewise[w];
  else
    for (size_t w = 0; w < W; w++) dst[w] |= src[w];
}

/* Per decided edge P -> B (constedge.c): the slots every other predecessor of B writes. Those are
 * the values B's Flow phis merge; the structurizer gives them `undef` from P (the edge its
 * constants close), so LLVM's liveness has none of them on P -> B but what B's decided successor
 * reads. Every other value keeps both of B's successors on that edge, as LLVM's liveness does. */
static void phi_slots(rs_live *l) {
  const rs_func *f = l->f;
  size_t W = l->words;
  rs_word *w1 = rs_xcalloc(W + 1, sizeof *w1);
  for (uint32_t i = 0; i < l->ncedges; i++) {
    rs_constedge *c = &l->cedges[i];
    const rs_block *b = &f->blocks[c->block];
    c->phi = rs_xcalloc(W + 1, sizeof *c->phi);
    bool first = true;
    for (uint32_t p = 0; p < b->npreds; p++) {
      if (b->preds[p] == c->pred) continue;
      const rs_block *q = &f->blocks[b->preds[p]];
      memset(w1, 0, W * sizeof *w1);
      for (uint32_t k = 0; k < q->ninsts; k++) {
        const rs_inst *in = &f->insts[q->first_inst + k];
        for (uint32_t o = 0; o < in->nops; o++) {
          const rs_operand *op = &f->ops[in->first_op + o];
          if ((op->flags & RS_F_DEF) && !(op->flags & RS_F_COND)) or_lanes(w1, rs_live_op_slot(l, op), rs_live_op_lanes(l, op));
        }
      }
      for (size_t w = 0; w < W; w++) c->phi[w] = first ? w1[w] : c->phi[w] & w1[w];
      first = false;
    }
  }
  free(w1);
}

/* Both dataflow problems from scratch, on the wave's CFG plus, for the per-lane slots of the
 * split diamonds, the lanes' CFG (simt.c): node nb + k runs split k's FLOW for its ELSE lanes,
 * entered from IF and leaving to ELSE with the per-lane slots only. */
static void solve(rs_live *l) {
  const rs_func *f = l->f;
  size_t W = l->words, NB = f->nblocks, NS = NB + l->nsplits, NN = NS + l->ncedges;
  memset(l->in, 0, (NN * W + 1) * sizeof(rs_word));
  memset(l->out, 0, (NN * W + 1) * sizeof(rs_word));
  memset(l->defin, 0, (NN * W + 1) * sizeof(rs_word));
  memset(l->defout, 0, (NN * W + 1) * sizeof(rs_word));
  rs_word *tmp = rs_xcalloc(W + 1, sizeof(rs_word));
  /* Reaching definitions, forward. Function live-ins (and the entry's printed live-ins) are
   * defined on entry. */
  if (NB) {
    rs_word *e0 = l->defin;
    for (uint32_t i = 0; i < f->nliveins; i++) {
      rs_operand op = {.kind = RS_OP_PREG, .reg = f->liveins[i].reg.unit, .lanes = f->liveins[i].reg.lanes};
      or_lanes(e0, rs_live_op_slot(l, &op), rs_live_op_lanes(l, &op));
    }
    for (uint32_t i = 0; i < f->blocks[0].nliveins; i++) {
      rs_operand op = {.kind = RS_OP_PREG, .reg = f->blocks[0].liveins[i].reg.unit,
                       .lanes = f->blocks[0].liveins[i].reg.lanes};
      or_lanes(e0, rs_live_op_slot(l, &op), rs_live_op_lanes(l, &op));
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t ni = 0; ni < NS; ni++) {
      rs_word *din = l->defin + ni * W, *dout = l->defout + ni * W;
      uint32_t bi = ni;
      if (ni >= NB) { /* the ELSE lanes' FLOW: from IF, per-lane slots only */
        const rs_simt_split *s = &l->splits[ni - NB];
        bi = s->flow;
        flow_in(l, din, l->defout + (size_t)s->ifb * W, false, false);
      } else {
        for (uint32_t p = 0; p < f->blocks[bi].npreds; p++) {
          uint32_t pb = f->blocks[bi].preds[p];
          flow_in(l, din, l->defout + (size_t)pb * W, lanes_cut(l, pb, bi), false);
        }
        for (uint32_t k = 0; k < l->nsplits; k++)
          if (l->splits[k].els == bi) flow_in(l, din, l->defout + (NB + k) * W, false, true);
      }
      memcpy(tmp, din, W * sizeof *tmp);
      block_defs(l, bi, tmp, ni < NB);
      if (memcmp(tmp, dout, W * sizeof *tmp)) {
        memcpy(dout, tmp, W * sizeof *tmp);
        changed = true;
      }
    }
  }
  /* Liveness, backward, nodes in reverse order until stable. */
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t ni = (uint32_t)NN; ni-- > 0;) {
      rs_word *out = l->out + ni * W, *in = l->in + ni * W;
      uint32_t bi = ni;
      if (ni >= NS) { /* a block entered from a predecessor that decides its branch */
        const rs_constedge *c = &l->cedges[ni - NS];
        bi = c->block;
        flow_in(l, out, l->in + (size_t)c->succ * W, false, false);
        const rs_block *b = &f->blocks[bi];
        for (uint32_t s = 0; s < b->nsuccs; s++) /* all but the Flow phis' values: both ways */
          for (size_t w = 0; w < W; w++) out[w] |= l->in[(size_t)b->succs[s] * W + w] & ~c->phi[w];
      } else if (ni >= NB) { /* the ELSE lanes' FLOW: to ELSE; the wave's slots to ENDIF too */
        const rs_simt_split *s = &l->splits[ni - NB];
        bi = s->flow;
        flow_in(l, out, l->in + (size_t)s->els * W, false, false);
        flow_in(l, out, l->in + (size_t)s->endif * W, true, false);
      } else {
        const rs_block *b = &f->blocks[bi];
        for (uint32_t s = 0; s < b->nsuccs; s++) {
          uint32_t c = const_edge(l, bi, b->succs[s]);
          if (c != UINT32_MAX) flow_in(l, out, l->in + (NS + c) * W, false, false);
          else if (!wave_via_else(l, bi, b->succs[s]))
            flow_in(l, out, l->in + (size_t)b->succs[s] * W, lanes_cut(l, bi, b->succs[s]), false);
        }
        for (uint32_t k = 0; k < l->nsplits; k++)
          if (l->splits[k].ifb == bi) flow_in(l, out, l->in + (NB + k) * W, false, false);
      }
      const rs_block *b = &f->blocks[bi];
      memcpy(tmp, out, W * sizeof *tmp);
      for (uint32_t k = b->ninsts; k-- > 0;) step_back(l, &f->insts[b->first_inst + k], tmp, ni >= NB && ni < NS);
      if (memcmp(tmp, in, W * sizeof *tmp)) {
        memcpy(in, tmp, W * sizeof *tmp);
        changed = true;
      }
    }
  }
  /* FLOW as the whole wave runs it: both lanes' copies together (its interference, problem.c),
   * and its per-operand deltas from that union */
  for (uint32_t k = 0; k < l->nsplits; k++) {
    size_t fl = l->splits[k].flow, v = NB + k;
    for (size_t w = 0; w < W; w++) {
      l->in[fl * W + w] |= l->in[v * W + w];
      l->out[fl * W + w] |= l->out[v * W + w];
      l->defin[fl * W + w] |= l->defin[v * W + w];
    }
    memcpy(tmp, l->defin + fl * W, W * sizeof *tmp);
    block_defs(l, (uint32_t)fl, tmp, true);
    memcpy(l->defout + fl * W, tmp, W * sizeof *tmp);
  }
  free(tmp);
}

/* One instruction's defs, forward (reaching definitions without the per-op record). */
static void defs_step(const rs_live *l, const rs_inst *in, rs_word *cur) {
  const rs_func *f = l->f;
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if (!(op->flags & RS_F_DEF)) continue;
    uint32_t s = rs_live_op_slot(l, op);
    if (s == UINT32_MAX) continue;
    clr_lanes(cur, s, undef_others(f, op));
    or_lanes(cur, s, rs_live_op_lanes(l, op));
  }
}

bool rs_live_seg_active(const rs_live *l, const rs_lseg *g, uint32_t k) { return rs_bs_get(l->segact, g->act + (k - g->first)); }

void rs_live_seg_step_back(const rs_live *l, const rs_lseg *g, uint32_t k, rs_word *wave, rs_word *lane, rs_word *tmp) {
  const rs_func *f = l->f;
  const rs_inst *in = &f->insts[f->blocks[g->block].first_inst + k];
  size_t W = l->words;
  if (rs_live_seg_active(l, g, k)) {
    for (size_t w = 0; w < W; w++) tmp[w] = (wave[w] & ~l->lanewise[w]) | lane[w];
    rs_live_step_back(l, in, tmp);
    for (size_t w = 0; w < W; w++) lane[w] = tmp[w] & l->lanewise[w];
  }
  rs_live_step_back(l, in, wave);
}

/* Per-lane slots on the lanes' paths (lanemask.c): reaching definitions forward and liveness
 * backward over the segments, a segment's instructions counting only where the lane is active;
 * the other slots at each point are the wave's (a copy into a wave value reads the per-lane
 * source wherever the wave needs the copy). The blocks' own sets stay those of the wave's CFG
 * with the if/else rule (simt.c): what other readers compare with LLVM's block live-ins. */
static void seg_solve(rs_live *l) {
  const rs_func *f = l->f;
  size_t W = l->words, NG = l->nsegs;
  const rs_word *lw = l->lanewise;
  l->sin = rs_xcalloc(NG * W + 1, sizeof(rs_word));
  l->sout = rs_xcalloc(NG * W + 1, sizeof(rs_word));
  l->sdin = rs_xcalloc(NG * W + 1, sizeof(rs_word));
  l->sdout = rs_xcalloc(NG * W + 1, sizeof(rs_word));
  rs_word *tmp = rs_xcalloc(W + 1, sizeof(rs_word)), *wave = rs_xcalloc(W + 1, sizeof(rs_word)),
          *lane = rs_xcalloc(W + 1, sizeof(rs_word)), *t2 = rs_xcalloc(W + 1, sizeof(rs_word));
  rs_word *wend = rs_xcalloc(NG * W + 1, sizeof(rs_word)); /* the wave's liveness at each segment's end */
  uint8_t *any = rs_xcalloc(NG + 1, 1);                      /* the segment's lane runs something */
  for (size_t g = 0; g < NG; g++) {
    const rs_lseg *sg = &l->segs[g];
    const rs_block *b = &f->blocks[sg->block];
    for (uint32_t k = sg->first; k < sg->end && !any[g]; k++) any[g] = rs_live_seg_active(l, sg, k);
    if (any[g]) {
      memcpy(wend + g * W, l->out + (size_t)sg->block * W, W * sizeof(rs_word));
      for (uint32_t k = b->ninsts; k-- > sg->end;) rs_live_step_back(l, &f->insts[b->first_inst + k], wend + g * W);
    }
    if (sg->block == 0 && sg->first == 0)
      for (size_t w = 0; w < W; w++) l->sdin[g * W + w] = l->defin[w] & lw[w];
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t g = 0; g < NG; g++) {
      const rs_lseg *sg = &l->segs[g];
      const rs_block *b = &f->blocks[sg->block];
      memcpy(tmp, l->sdin + g * W, W * sizeof *tmp);
      for (uint32_t k = sg->first; k < sg->end && any[g]; k++)
        if (rs_live_seg_active(l, sg, k)) defs_step(l, &f->insts[b->first_inst + k], tmp);
      for (size_t w = 0; w < W; w++) tmp[w] &= lw[w];
      if (memcmp(tmp, l->sdout + g * W, W * sizeof *tmp)) memcpy(l->sdout + g * W, tmp, W * sizeof *tmp), changed = true;
      for (uint32_t x = 0; x < sg->nsucc; x++) {
        rs_word *d = l->sdin + (size_t)l->segsucc[sg->succ + x] * W;
        for (size_t w = 0; w < W; w++)
          if (tmp[w] & ~d[w]) d[w] |= tmp[w], changed = true;
      }
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t g = NG; g-- > 0;) {
      const rs_lseg *sg = &l->segs[g];
      rs_word *out = l->sout + g * W;
      for (uint32_t x = 0; x < sg->nsucc; x++) {
        const rs_word *si = l->sin + (size_t)l->segsucc[sg->succ + x] * W;
        for (size_t w = 0; w < W; w++) out[w] |= si[w];
      }
      memcpy(lane, out, W * sizeof *lane);
      if (any[g]) { /* a lane that runs nothing here passes its values through */
        memcpy(wave, wend + g * W, W * sizeof *wave);
        for (uint32_t k = sg->end; k-- > sg->first;) rs_live_seg_step_back(l, sg, k, wave, lane, t2);
      }
      if (memcmp(lane, l->sin + g * W, W * sizeof *lane)) memcpy(l->sin + g * W, lane, W * sizeof *lane), changed = true;
    }
  }
  free(wend);
  free(any);
  free(tmp);
  free(wave);
  free(lane);
  free(t2);
}

rs_live *rs_live_compute(const rs_func *f, rs_err *e) {
  (void)e;
  rs_live *l = rs_xcalloc(1, sizeof *l);
  l->f = f;
  layout(l);
  /* AMDGPU (target.h simt_exclusions): divergent if/else diamonds whose per-lane slots follow
   * the lanes' CFG (simt.c) */
  if (f->tgt->simt_exclusions) {
    rs_simt_find(l);
    /* edges after which the structurizer's constants decide a block's branch (constedge.c) */
    rs_constedge_find(l);
    phi_slots(l);
    /* each lane's own paths under its EXEC and mask bits (lanemask.c): problem.c's per-lane
     * interference where built (the if/else rule where the lanes' states are too many) */
    /* at most 8 states a block on average (ggml's flash-attention kernels need 2-7; rocPRIM's
     * scans reach 50 and cost 12x the Problem's time, where the if/else rule alone gives the
     * same truths) and 32 MiB per per-segment set */
    size_t cap = ((size_t)1 << 22) / (l->words + 1), cb = 8 * (size_t)f->nblocks + 512;
    rs_lanemask_build(l, (uint32_t)(cap < cb ? cap : cb));
  }
  size_t W = l->words, NN = f->nblocks + l->nsplits + l->ncedges;
  l->in = rs_xcalloc(NN * W + 1, sizeof(rs_word));
  l->out = rs_xcalloc(NN * W + 1, sizeof(rs_word));
  l->defin = rs_xcalloc(NN * W + 1, sizeof(rs_word));
  l->defout = rs_xcalloc(NN * W + 1, sizeof(rs_word));
  l->dnew = rs_xcalloc(f->nops + 1, sizeof *l->dnew);
  l->dkill = rs_xcalloc(f->nops + 1, sizeof *l->dkill);
  l->use = rs_xcalloc(f->nops + 1, sizeof *l->use);
  l->uundef = rs_xcalloc(f->nops + 1, sizeof *l->uundef);
  compute_uses(l);
  solve(l);
  if (l->nsegs) seg_solve(l);
  return l;
}

void rs_live_block_in(const rs_live *l, uint32_t b, rs_word *out) {
  const rs_word *in = l->in + (size_t)b * l->words, *d = l->defin + (size_t)b * l->words;
  for (uint32_t w = 0; w < l->words; w++) out[w] = in[w] & d[w];
}

void rs_live_free(rs_live *l) {
  if (!l) return;
  free(l->vslot);
  free(l->owner);
  free(l->groups);
  free(l->in);
  free(l->out);
  free(l->defin);
  free(l->defout);
  free(l->dnew);
  free(l->dkill);
  free(l->use);
  free(l->uundef);
  free(l->spill);
  for (uint32_t i = 0; i < l->nsplits; i++) free(l->splits[i].inside);
  free(l->splits);
  for (uint32_t i = 0; i < l->ncedges; i++) free(l->cedges[i].phi);
  free(l->cedges);
  free(l->lanewise);
  free(l->vecslots);
  free(l->segs);
  free(l->segsucc);
  free(l->segact);
  free(l->sin);
  free(l->sout);
  free(l->sdin);
  free(l->sdout);
  free(l);
}
