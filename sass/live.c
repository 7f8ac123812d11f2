/* live.c - per-instruction live registers in nvdisasm's -plr terms (an emulation of NVIDIA's view).
 *
 * Why this is not analysis/liveness.c: that one is the Problem's liveness over values (slots of
 * the lifted webs, lanes, copy rules) on the real CFG; -plr is a display of *physical* registers
 * over a CFG of its own (calls that return to their next instruction, RETs that return nowhere),
 * with an ABI it assumes and cut by its own reaching-definition rule. Reusing the value dataflow
 * would mean mapping -plr's physical-register facts (the callee-saved set, RET's live-out) back
 * onto webs that do not exist at those points, so the emulation works on units directly, and
 * interference never sees it.
 *
 * The rules, each measured against -plr on the fixtures (tests/test_sass_live.c, all 20 equal):
 *  - plain backward liveness; a predicated def neither kills nor reads;
 *  - a register is shown live only where some def reaches it (forward, over -plr's CFG); a
 *    function entry (the kernel, and every `$__internal` subroutine symbol) defines every R
 *    register, none of the predicates and uniform registers;
 *  - a register an instruction writes is shown at it even when dead;
 *  - -plr works on label-to-label regions (region_rule): a register live where a region ends is
 *    shown from its first def in the region (or the region's start, when live into it) to the end.
 * With plr_calls, CALL.REL.NOINC is what nvdisasm 11.8 takes it for (its quirk, named in the test):
 * an ABI call, whatever its target (a `$__internal` subroutine or a `.L` label ptxas jumps to):
 *  - it returns to its next instruction, and nothing flows along its edge to the target (a `.L`
 *    target reached only by calls is reached by no def, so nothing is shown live there);
 *  - it reads R0 and R1 (the stack pointer) and writes every register but the callee-saved ones
 *    (plr_saved: R1, R2, R16-R31 and every R32+ whose bit 2 is set: R36-39, R44-47, ...), all
 *    uniform registers and predicates included; the writes kill unless it is predicated;
 *  - RET returns nowhere: the callee-saved registers up to the function's highest R are live
 *    after it.
 * This is -plr's view, not the truth: really a subroutine reads its arguments (R10 in the
 * rcp slowpath), returns to its callers, clobbers only what it writes, and a CALL.REL.NOINC to a
 * `.L` label is a jump. analysis/liveness.c (interference, the Problem) keeps the real CFG that
 * sass_parse.c builds (calls to their targets, RET to every return point), and keeps every
 * register dead where no def reaches. Without plr_calls this emulation uses that real CFG too. */
#include "sass/sass.h"
#include <stdlib.h>
#include <string.h>

/* Two index spaces: units (physical registers, what -plr shows) and slots (what it tracks: one
 * per 32-bit register of every web, plus one per unit for a value that is no web: the stack
 * pointer, the ABI's registers). A write to a unit kills every slot on it. */
typedef struct {
  const rs_func *f;
  uint32_t W, NB;               /* words per unit set; blocks */
  uint32_t NS, SW;              /* slots; words per slot set */
  bool calls;                   /* plr_calls */
  uint32_t *vbase;              /* per web: its first slot (its units' slots follow) */
  uint32_t *slot_unit;          /* per slot: its unit */
  rs_word *def, *cdef, *call_w; /* per instruction, units: written, written under a predicate, by a call */
  rs_word *suse, *skill, *sdef; /* per instruction, slots: read, killed, written */
  rs_word *entry, *clob, *ret_out; /* units: defined at a function's entry; written by a call; live after a RET (slots) */
  rs_word *in, *rin;            /* per block: live in (slots), reached in (units) */
} plr;

static rs_word *set_at(rs_word *base, uint32_t W, uint32_t i) { return base + (size_t)W * i; }

static int file_named(const rs_target *t, const char *name) {
  for (uint32_t fi = 0; fi < t->nfiles; fi++)
    if (!strcmp(t->files[fi].name, name)) return (int)fi;
  return -1;
}

/* Units and slots an operand touches: the first of each, or UINT32_MAX; its units follow. */
static uint32_t op_base(const plr *p, const rs_operand *op, uint32_t *slot) {
  const rs_func *f = p->f;
  if (op->kind == RS_OP_VREG && f->truth && f->truth[op->reg].lanes) {
    *slot = p->vbase[op->reg];
    return f->truth[op->reg].unit;
  }
  if (op->kind != RS_OP_PREG) return UINT32_MAX;
  *slot = f->nvregs ? p->vbase[f->nvregs] + op->reg : op->reg;
  return op->reg;
}
static bool op_unit(const plr *p, const rs_operand *op, unsigned k, uint32_t base) {
  return (op->lanes >> (2 * k) & 3) && base + k < p->f->tgt->nunits &&
         (p->f->tgt->unit_flags[base + k] & RS_UNIT_TRACKED);
}

static bool op_is(const rs_func *f, const rs_inst *in, const char *prefix) {
  return !strncmp(rs_func_opcode(f, in), prefix, strlen(prefix));
}
static const rs_inst *last_inst(const rs_func *f, uint32_t b) {
  const rs_block *blk = &f->blocks[b];
  return blk->ninsts ? &f->insts[blk->first_inst + blk->ninsts - 1] : NULL;
}
static bool is_call(const plr *p, const rs_inst *in) { return p->calls && in && op_is(p->f, in, "CALL."); }

/* -plr's registers preserved across a call: R1, R2, R16-R31, and R32 up in blocks of four, every
 * second one (R36-R39, R44-R47, ...). Measured: the registers a CALL.REL.NOINC leaves live-through
 * and a RET has live after it, on all six fixtures that call (sm_75 to sm_89). */
static bool plr_saved(unsigned r) { return r == 1 || r == 2 || (r >= 16 && r < 32) || (r >= 32 && (r >> 2 & 1)); }

/* -plr's registers defined at a function's entry (where nothing else reaches, a register is
 * shown live only if one of these is): the callee-saved ones and R4-R15; not R0, R3, nor the
 * R32+ that a call clobbers. Measured: R10 is shown live from the kernel's entry in wmma sm_75,
 * R97 of fa_hd64 sm_75 only from the loop head a def of it reaches, R3 in the subroutine of
 * fa_hd64 sm_80 not before its def. */
static bool plr_at_entry(unsigned r) { return plr_saved(r) || (r >= 4 && r < 16); }

/* Successors of block b in the CFG -plr sees (the block's own, or its next block, or none). */
static uint32_t succs(const plr *p, uint32_t b, const uint32_t **list, uint32_t *one) {
  const rs_func *f = p->f;
  const rs_inst *last = last_inst(f, b);
  if (p->calls && last && (is_call(p, last) || (op_is(f, last, "RET.") && (last->flags & RS_I_PREDICATED)))) {
    *one = b + 1;
    *list = one;
    return b + 1 < p->NB;
  }
  if (p->calls && last && op_is(f, last, "RET.")) return 0;
  *list = f->blocks[b].succs;
  return f->blocks[b].nsuccs;
}

/* Live out of block b (slots). */
static void block_out(const plr *p, uint32_t b, rs_word *cur) {
  const uint32_t *sl;
  uint32_t one, n = succs(p, b, &sl, &one);
  memset(cur, 0, p->SW * sizeof *cur);
  for (uint32_t k = 0; k < n; k++)
    for (uint32_t w = 0; w < p->SW; w++) cur[w] |= p->in[(size_t)p->SW * sl[k] + w];
  const rs_inst *last = last_inst(p->f, b);
  if (p->calls && last && op_is(p->f, last, "RET."))
    for (uint32_t w = 0; w < p->SW; w++) cur[w] |= p->ret_out[w];
}

/* One instruction backward (slots): writes kill, reads add. */
static void step(const plr *p, uint32_t ii, rs_word *live) {
  for (uint32_t w = 0; w < p->SW; w++)
    live[w] = (live[w] & ~p->skill[(size_t)p->SW * ii + w]) | p->suse[(size_t)p->SW * ii + w];
}

/* Units written by instruction ii, the call convention's included. */
static void writes(const plr *p, uint32_t ii, rs_word *set) {
  for (uint32_t w = 0; w < p->W; w++)
    set[w] = p->def[(size_t)p->W * ii + w] | p->cdef[(size_t)p->W * ii + w] | p->call_w[(size_t)p->W * ii + w];
}

/* Entry of a function: the kernel, or a subroutine symbol ($__internal_...) when calls are -plr's. */
static bool is_entry(const plr *p, uint32_t b) { return b == 0 || (p->calls && p->f->blocks[b].name[0] == '$'); }

/* Reached in, per block (units): forward over -plr's CFG; a write reaches, predicated or not. */
static void reach(plr *p) {
  uint32_t W = p->W;
  rs_word *cur = rs_xcalloc(W + 1, sizeof *cur), *wr = rs_xcalloc(W + 1, sizeof *wr);
  for (uint32_t b = 0; b < p->NB; b++)
    if (is_entry(p, b)) memcpy(set_at(p->rin, W, b), p->entry, W * sizeof *cur);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t b = 0; b < p->NB; b++) {
      const rs_block *blk = &p->f->blocks[b];
      memcpy(cur, set_at(p->rin, W, b), W * sizeof *cur);
      for (uint32_t k = 0; k < blk->ninsts; k++) {
        writes(p, blk->first_inst + k, wr);
        for (uint32_t w = 0; w < W; w++) cur[w] |= wr[w];
      }
      const uint32_t *sl;
      uint32_t one, n = succs(p, b, &sl, &one);
      for (uint32_t k = 0; k < n; k++) {
        rs_word *ri = set_at(p->rin, W, sl[k]);
        for (uint32_t w = 0; w < W; w++)
          if (cur[w] & ~ri[w]) ri[w] |= cur[w], changed = true;
      }
    }
  }
  free(cur);
  free(wr);
}

/* Units of the slots in `s` that are in the unit set `keep` (all if NULL), into `row`. */
static void slots_to_units(const plr *p, const rs_word *s, const rs_word *keep, rs_word *row) {
  for (uint32_t w = 0; w < p->SW; w++)
    for (rs_word x = s[w]; x; x &= x - 1) {
      uint32_t u = p->slot_unit[w * 64 + (uint32_t)__builtin_ctzll(x)];
      if (!keep || rs_bs_get(keep, u)) rs_bs_set(row, u);
    }
}

static bool labelled(const rs_func *f, uint32_t b) {
  return b == 0 || f->blocks[b].name[0] == '.' || f->blocks[b].name[0] == '$';
}

/* -plr's regions: code from one label to the next (side exits of predicated branches do not end
 * one). A value (web: -plr's unit here is the value, not the register) live where the region
 * falls through or jumps at its end is shown live from its first write in the region (or the
 * region's start, when it is live and reached there) to that end, also across a redefinition or
 * a stretch where it is dead in fact. A call's convention writes do not count as writes here. */
/* Show the values of `out` (slots) over instructions [i0, i1) the way region_rule says. */
static void region_span(const plr *p, uint32_t b0, uint32_t i0, uint32_t i1, const rs_word *out, rs_word *cur,
                        rs_word *rows) {
  uint32_t SW = p->SW;
  const rs_word *in0 = set_at(p->in, SW, b0), *r0 = set_at(p->rin, p->W, b0);
  memset(cur, 0, SW * sizeof *cur);
  for (uint32_t w = 0; w < SW; w++)
    for (rs_word x = in0[w] & out[w]; x; x &= x - 1) {
      uint32_t s = w * 64 + (uint32_t)__builtin_ctzll(x);
      if (rs_bs_get(r0, p->slot_unit[s])) rs_bs_set(cur, s);
    }
  for (uint32_t ii = i0; ii < i1; ii++) {
    for (uint32_t w = 0; w < SW; w++) cur[w] |= p->sdef[(size_t)SW * ii + w] & out[w];
    slots_to_units(p, cur, NULL, set_at(rows, p->W, ii));
  }
}

/* -plr's regions: code from one label to the next. A value (web: -plr's unit here is the value,
 * not the register) live where the region falls through or jumps at its end is shown live from
 * its first write in the region (or the region's start, when it is live and reached there) to
 * that end, also across a redefinition or a stretch where it is dead in fact. A side exit of a
 * predicated branch does not end a region, except one back to the region's own start (a loop):
 * the values live there are shown so from the start to that branch. A call's convention writes
 * do not count as writes here. */
static void region_rule(const plr *p, rs_word *rows) {
  const rs_func *f = p->f;
  uint32_t SW = p->SW;
  rs_word *out = rs_xcalloc(SW + 1, sizeof *out), *cur = rs_xcalloc(SW + 1, sizeof *cur);
  for (uint32_t b0 = 0; b0 < p->NB;) {
    uint32_t b1 = b0 + 1;
    while (b1 < p->NB && !labelled(f, b1)) b1++;
    uint32_t i0 = f->blocks[b0].first_inst;
    block_out(p, b1 - 1, out);
    region_span(p, b0, i0, f->blocks[b1 - 1].first_inst + f->blocks[b1 - 1].ninsts, out, cur, rows);
    for (uint32_t b = b0; b + 1 < b1; b++) {
      const uint32_t *sl;
      uint32_t one, n = succs(p, b, &sl, &one);
      for (uint32_t k = 0; k < n; k++)
        if (sl[k] == b0) region_span(p, b0, i0, f->blocks[b].first_inst + f->blocks[b].ninsts, set_at(p->in, SW, b0), cur, rows);
    }
    b0 = b1;
  }
  free(out);
  free(cur);
}

int rs_sass_live_rows(const rs_func *f, rs_word **rows, uint32_t *words, bool plr_calls, rs_err *e) {
  (void)e;
  const rs_target *t = f->tgt;
  plr p = {0};
  p.f = f;
  p.NB = f->nblocks;
  p.calls = plr_calls;
  uint32_t NU = t->nunits, NI = f->ninsts;
  p.W = (uint32_t)RS_WORDS(NU);
  p.vbase = rs_xmalloc(sizeof *p.vbase * (f->nvregs + 1));
  uint32_t ns = 0;
  for (uint32_t v = 0; v < f->nvregs; v++) {
    p.vbase[v] = ns;
    if (f->truth && f->truth[v].lanes) ns += rs_lanes_units(f->truth[v].lanes);
  }
  p.vbase[f->nvregs] = ns;
  p.NS = ns + NU;
  p.SW = (uint32_t)RS_WORDS(p.NS);
  p.slot_unit = rs_xmalloc(sizeof *p.slot_unit * (p.NS + 1));
  for (uint32_t v = 0; v < f->nvregs; v++)
    for (uint32_t s = p.vbase[v]; s < p.vbase[v + 1]; s++) p.slot_unit[s] = f->truth[v].unit + (s - p.vbase[v]);
  for (uint32_t u = 0; u < NU; u++) p.slot_unit[ns + u] = u;
  /* slots on each unit, for kills: a CSR list */
  uint32_t *ufirst = rs_xcalloc(NU + 2, sizeof *ufirst), *ulist = rs_xmalloc(sizeof *ulist * (p.NS + 1));
  for (uint32_t s = 0; s < p.NS; s++)
    if (p.slot_unit[s] < NU) ufirst[p.slot_unit[s] + 1]++;
  for (uint32_t u = 0; u < NU; u++) ufirst[u + 1] += ufirst[u];
  uint32_t *fill = rs_xmalloc(sizeof *fill * (NU + 1));
  memcpy(fill, ufirst, sizeof *fill * NU);
  for (uint32_t s = 0; s < p.NS; s++)
    if (p.slot_unit[s] < NU) ulist[fill[p.slot_unit[s]]++] = s;
  free(fill);
  uint32_t W = p.W, SW = p.SW;
  p.def = rs_xcalloc((size_t)W * (NI + 1), sizeof *p.def);
  p.cdef = rs_xcalloc((size_t)W * (NI + 1), sizeof *p.cdef);
  p.call_w = rs_xcalloc((size_t)W * (NI + 1), sizeof *p.call_w);
  p.suse = rs_xcalloc((size_t)SW * (NI + 1), sizeof *p.suse);
  p.skill = rs_xcalloc((size_t)SW * (NI + 1), sizeof *p.skill);
  p.sdef = rs_xcalloc((size_t)SW * (NI + 1), sizeof *p.sdef);
  p.entry = rs_xcalloc(W + 1, sizeof *p.entry);
  p.clob = rs_xcalloc(W + 1, sizeof *p.clob);
  p.ret_out = rs_xcalloc(SW + 1, sizeof *p.ret_out);
  p.in = rs_xcalloc((size_t)SW * (p.NB + 1), sizeof *p.in);
  p.rin = rs_xcalloc((size_t)W * (p.NB + 1), sizeof *p.rin);
  uint32_t top = 0; /* highest R the function touches */
  int rf = file_named(t, "r");
  for (uint32_t ii = 0; ii < NI; ii++) {
    const rs_inst *in = &f->insts[ii];
    for (uint32_t o = 0; o < in->nops; o++) {
      const rs_operand *op = &f->ops[in->first_op + o];
      uint32_t s0, u0 = op_base(&p, op, &s0);
      if (u0 == UINT32_MAX) continue;
      bool def = (op->flags & RS_F_DEF) != 0, cond = (op->flags & RS_F_COND) != 0;
      for (unsigned k = 0; k < 32 && (op->lanes >> (2 * k)); k++) {
        if (!op_unit(&p, op, k, u0)) continue;
        uint32_t u = u0 + k;
        if (rf >= 0 && u >= t->files[rf].first && u - t->files[rf].first < t->files[rf].count &&
            u - t->files[rf].first > top)
          top = u - t->files[rf].first;
        if (!def) {
          rs_bs_set(set_at(p.suse, SW, ii), s0 + k);
          continue;
        }
        rs_bs_set(set_at(cond ? p.cdef : p.def, W, ii), u);
        rs_bs_set(set_at(p.sdef, SW, ii), s0 + k);
        if (!cond)
          for (uint32_t j = ufirst[u]; j < ufirst[u + 1]; j++) rs_bs_set(set_at(p.skill, SW, ii), ulist[j]);
      }
    }
  }
  /* the call convention: R0, R1 read; all but the callee-saved written; after a RET the callee-saved
   * registers of the function's allocation are live (SHI_REGISTERS of them: the 2 reserved too) */
  uint32_t nregs = f->declared_regs ? f->declared_regs : top + 3;
  for (uint32_t fi = 0; fi < t->nfiles; fi++) {
    const char *n = t->files[fi].name;
    bool r = (int)fi == rf;
    if (!r && strcmp(n, "ur") && strcmp(n, "p") && strcmp(n, "up")) continue;
    for (uint32_t k = 0; k < t->files[fi].count; k++) {
      uint32_t u = t->files[fi].first + k;
      if (!(t->unit_flags[u] & RS_UNIT_TRACKED)) continue;
      if (r && plr_at_entry(k)) rs_bs_set(p.entry, u);
      if (!r || !plr_saved(k)) rs_bs_set(p.clob, u);
      else if (k < nregs) rs_bs_set(p.ret_out, ns + u);
    }
  }
  for (uint32_t ii = 0; ii < NI && rf >= 0; ii++) {
    const rs_inst *in = &f->insts[ii];
    if (!is_call(&p, in)) continue;
    rs_bs_set(set_at(p.suse, SW, ii), ns + t->files[rf].first);
    rs_bs_set(set_at(p.suse, SW, ii), ns + t->files[rf].first + 1);
    memcpy(set_at(p.call_w, W, ii), p.clob, W * sizeof *p.clob);
    if (in->flags & RS_I_PREDICATED) continue; /* a predicated call kills nothing */
    for (uint32_t u = 0; u < NU; u++)
      if (rs_bs_get(p.clob, u))
        for (uint32_t j = ufirst[u]; j < ufirst[u + 1]; j++) rs_bs_set(set_at(p.skill, SW, ii), ulist[j]);
  }
  free(ufirst);
  free(ulist);
  /* backward liveness over -plr's CFG (slots) */
  rs_word *cur = rs_xcalloc(SW + 1, sizeof *cur);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t b = p.NB; b-- > 0;) {
      const rs_block *blk = &f->blocks[b];
      block_out(&p, b, cur);
      for (uint32_t k = blk->ninsts; k-- > 0;) step(&p, blk->first_inst + k, cur);
      if (memcmp(cur, set_at(p.in, SW, b), SW * sizeof *cur)) {
        memcpy(set_at(p.in, SW, b), cur, SW * sizeof *cur);
        changed = true;
      }
    }
  }
  reach(&p);
  /* rows: what is written, and what is live before and reached */
  rs_word *out = rs_xcalloc((size_t)W * (NI + 1), sizeof *out);
  rs_word *rb = rs_xcalloc((size_t)W * (NI + 1), sizeof *rb), *wr = rs_xcalloc(W + 1, sizeof *wr);
  rs_word *after = rs_xcalloc(W + 1, sizeof *after);
  for (uint32_t b = 0; b < p.NB; b++) {
    const rs_block *blk = &f->blocks[b];
    memcpy(wr, set_at(p.rin, W, b), W * sizeof *wr);
    for (uint32_t k = 0; k < blk->ninsts; k++) {
      uint32_t ii = blk->first_inst + k;
      memcpy(set_at(rb, W, ii), wr, W * sizeof *wr);
      for (uint32_t w = 0; w < W; w++)
        wr[w] |= p.def[(size_t)W * ii + w] | p.cdef[(size_t)W * ii + w] | p.call_w[(size_t)W * ii + w];
    }
  }
  for (uint32_t b = 0; b < p.NB; b++) {
    const rs_block *blk = &f->blocks[b];
    block_out(&p, b, cur);
    for (uint32_t k = blk->ninsts; k-- > 0;) {
      uint32_t ii = blk->first_inst + k;
      rs_word *row = set_at(out, W, ii);
      memset(after, 0, W * sizeof *after);
      slots_to_units(&p, cur, NULL, after);
      if (ii + 1 < NI)
        for (uint32_t w = 0; w < W; w++) after[w] |= p.def[(size_t)W * (ii + 1) + w] | p.cdef[(size_t)W * (ii + 1) + w];
      for (uint32_t w = 0; w < W; w++) /* written here: shown even when dead; a call's where live after it or written next */
        row[w] |= p.def[(size_t)W * ii + w] | p.cdef[(size_t)W * ii + w] | (p.call_w[(size_t)W * ii + w] & after[w]);
      step(&p, ii, cur);
      slots_to_units(&p, cur, set_at(rb, W, ii), row);
    }
  }
  region_rule(&p, out);
  free(rb);
  free(wr);
  free(after);
  free(cur);
  free(p.vbase);
  free(p.slot_unit);
  free(p.def);
  free(p.cdef);
  free(p.call_w);
  free(p.suse);
  free(p.skill);
  free(p.sdef);
  free(p.entry);
  free(p.clob);
  free(p.ret_out);
  free(p.in);
  free(p.rin);
  *rows = out;
  *words = W;
  return 0;
}
