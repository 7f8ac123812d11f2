/* live.c - per-instruction live registers as nvdisasm -plr shows them (an emulation of its view).
 *
 * Why this stays beside analysis/liveness.c: that one is the Problem's liveness over values
 * (slots of the lifted webs, lanes, copy and dead-lane rules) on the real CFG, and interference
 * must keep it. -plr is a display of *physical* registers over a CFG of its own (calls return to
 * their next instruction, RETs return nowhere), under an ABI it assumes (callee-saved registers,
 * registers defined at a function's entry) and with a region rule keyed by definition sites.
 * Those facts are about registers where no web exists (R16-R31 live through a subroutine that
 * never touches them), so they do not fit as a mode of the value dataflow; this file works on
 * units and def sites directly, and nothing but `inspect --live` and the -plr test reads it.
 *
 * The rules, each measured against -plr (tests/test_sass_live.c: every row of the front
 * fixtures, tests/fixtures/sass/plr and the mini corpus equal; test_sass_real.c: sass-real):
 *  - plain backward liveness; a predicated def neither kills nor reads;
 *  - a register is shown live only where some def reaches it (forward, over -plr's CFG, a
 *    predicated def reaching too); a function's entry (the kernel, each `$__internal` symbol)
 *    defines the registers of plr_at_entry, no predicate and no uniform register;
 *  - a register an instruction writes is shown at it, even when dead;
 *  - the region rule (region_rule) over label-to-label regions (per exit of the last block) and
 *    over the span up to each side exit of one; its values (webs) are def sites joined at reads, whatever the widths
 *    the sites wrote: operand reads, a call's R0/R1 reads, a RET's reads of the callee-saved
 *    registers live after it, and (RS_PLR_R2P) P2R/R2P's reads of all of P0-P6; a call's
 *    clobber writes are def sites too; a predicated write joins the sites it may leave in place
 *    (not under RS_PLR_UPGUARD, where it kills).
 * With RS_PLR_R2P, R2P reads and writes all of P0-P6 whatever its mask (-plr shows `x` for every
 * predicate at it), and P2R reads all of them (UP2UR all of UP0-UP6); really R2P writes and P2R reads the mask's
 * predicates only (the lift's view).
 * With RS_PLR_CALLS, CALL.REL.NOINC is what nvdisasm 11.8 takes it for (the quirk the test names),
 * whatever its target (a `$__internal` subroutine or a `.L` label ptxas jumps to):
 *  - an ABI call that returns to its next instruction; nothing flows along its edge to the
 *    target (a `.L` target reached only by calls is reached by no def: nothing is shown there);
 *  - it reads R0 and R1 (the stack pointer) and writes every register but the callee-saved ones
 *    (plr_saved), uniform registers and predicates included; the writes kill unless predicated
 *    (UR36-UR62 are written but never killed: -plr keeps them live through a call),
 *    and show at the call where live after it or written, before any read, by the code after it
 *    up to the next label;
 *  - RET returns nowhere: the callee-saved registers below SHI_REGISTERS are live after it.
 * With RS_PLR_UPGUARD, a def under a uniform predicate (@UPn) kills as if unconditional.
 * With RS_PLR_COLLECTIVE, WARPSYNC.COLLECTIVE falls through only: -plr's CFG has no edge to its
 * label (the scan sm_90 rows of the mini corpus: R4 not live across the inlined shuffle
 * fallback). The real CFG keeps that edge (sass/optable.c: a local call, taken or not): an
 * extra path can only keep a value live longer (the value of a register the body writes, past
 * the body), so interference stays safe; whether hardware ever takes it is not measured here.
 * With RS_PLR_CHAIN (and RS_PLR_CALLS), an unpredicated call whose straight-line code reaches
 * another unpredicated call before any label or branch without fall-through (the shflsync chains of a BRA.DIV
 * fallback) shows its whole clobber set written at it: R3-R15 and the R32+ not callee-saved
 * below SHI_REGISTERS, P0-P6, and UR4-UR35, UP0-UP6 where the function names a uniform register;
 * any other call shows its writes where live after it or written later in its region before a read.
 * This is -plr's view, not the truth: really a subroutine reads its arguments (R10 in the rcp
 * slowpath), returns to its callers, clobbers only what it writes, and a CALL.REL.NOINC to a
 * `.L` label is a jump. analysis/liveness.c (interference, the Problem) keeps the real CFG that
 * sass_parse.c builds (calls to their targets, RET to every return point) and keeps a register
 * dead where no def reaches. Without RS_PLR_CALLS this emulation takes the real CFG too. */
#include "sass/sass.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
  const rs_func *f;
  uint32_t W, NB, NI, NU;       /* words per unit set; blocks; instructions; units */
  bool calls, r2p, chain, upguard, collective; /* the quirks taken: RS_PLR_CALLS, _R2P, _CHAIN, _UPGUARD,
                                                 * _COLLECTIVE */
  rs_word *use, *def, *cdef, *call_w; /* per instruction (units): read, written, written under a
                                       * predicate, written by the call convention */
  rs_word *kill;                /* per instruction (units): writes that kill */
  rs_word *entry, *clob, *call_use, *ret_out, *ret_ur; /* the ABI -plr assumes (units) */
  rs_word *call_full;           /* a call followed by another one: what -plr shows written at it */
  bool *sub_ur;                 /* per block: its function (kernel or subroutine) names a UR */
  rs_word *in, *rin;            /* per block: live in, reached in (units, -plr's CFG) */
  /* def sites for the region rule: one per written unit of an instruction, then one per unit
   * for its value at the kernel's entry (site_unit[nsites0 + u] = u) */
  uint32_t nsites, nsites0, SW; /* sites; explicit sites; words per site set */
  uint32_t *site_unit, *site_w, *inst_site; /* per site: unit, width of its operand (0: the entry's);
                                             * per instruction: its first site */
  uint32_t *par;                /* union-find over sites: -plr's values (webs) */
  uint32_t *usite, *usite_first; /* sites of each unit (CSR) */
  rs_word *rd_in;               /* per block: def sites reaching its start (-plr's CFG) */
} plr;

static rs_word *set_at(rs_word *base, uint32_t W, uint32_t i) { return base + (size_t)W * i; }
static const rs_word *cset_at(const rs_word *base, uint32_t W, uint32_t i) { return base + (size_t)W * i; }

static int file_named(const rs_target *t, const char *name) {
  for (uint32_t fi = 0; fi < t->nfiles; fi++)
    if (!strcmp(t->files[fi].name, name)) return (int)fi;
  return -1;
}

/* First unit of an operand's register(s) (a value's truth), or UINT32_MAX; its units follow. */
static uint32_t op_base(const rs_func *f, const rs_operand *op) {
  if (op->kind == RS_OP_VREG) return f->truth && f->truth[op->reg].lanes ? f->truth[op->reg].unit : UINT32_MAX;
  return op->kind == RS_OP_PREG ? op->reg : UINT32_MAX;
}
static bool op_unit(const rs_func *f, const rs_operand *op, unsigned k, uint32_t base) {
  return (op->lanes >> (2 * k) & 3) && base + k < f->tgt->nunits && (f->tgt->unit_flags[base + k] & RS_UNIT_TRACKED);
}

/* Registers an operand names (a pair 2, a quad 4). */
static uint32_t op_width(const rs_operand *op) {
  uint32_t n = 0;
  for (unsigned k = 0; k < 32 && (op->lanes >> (2 * k)); k++) n += (op->lanes >> (2 * k) & 3) != 0;
  return n;
}

static bool op_is(const rs_func *f, const rs_inst *in, const char *prefix) {
  return !strncmp(rs_func_opcode(f, in), prefix, strlen(prefix));
}
static const rs_inst *last_inst(const rs_func *f, uint32_t b) {
  const rs_block *blk = &f->blocks[b];
  return blk->ninsts ? &f->insts[blk->first_inst + blk->ninsts - 1] : NULL;
}
static bool is_call(const plr *p, const rs_inst *in) { return p->calls && in && op_is(p->f, in, "CALL."); }
static bool is_ret(const plr *p, const rs_inst *in) { return p->calls && in && op_is(p->f, in, "RET."); }

/* -plr's registers preserved across a call: R1, R2, R16-R31, and from R32 on every second block
 * of four (R36-R39, R44-R47, ...). Measured: what a CALL.REL.NOINC leaves live through, and a
 * RET has live after it, on all six fixtures that call (sm_75 to sm_89). */
static bool plr_saved(unsigned r) { return r == 1 || r == 2 || (r >= 16 && r < 32) || (r >= 32 && (r >> 2 & 1)); }

/* -plr's registers defined at a function's entry: R0 (the return address of the MOV R0, RET ;
 * CALL idiom), the callee-saved ones and R4-R15 (not R3, nor an R32+ a call clobbers).
 * Measured: R10 of wmma_w2x2_r2x2 sm_75 is shown live from the kernel's entry (no def reaches
 * it), R97 of fa_hd64 sm_75 only from the loop head its def reaches around the back edge, R3 in
 * fa_hd64 sm_80's subroutine not before its first def; R0 live from the entry of the subroutines
 * that return through it (reduce_f64, layernorm, the 64-bit division of tests/fixtures/sass-real). */
static bool plr_at_entry(unsigned r) { return r == 0 || plr_saved(r) || (r >= 4 && r < 16); }

/* Successors of block b in the CFG -plr sees: the block's own, or (a call, a predicated RET,
 * a WARPSYNC.COLLECTIVE) its next block, or (a RET) none. */
static uint32_t succs(const plr *p, uint32_t b, const uint32_t **list, uint32_t *one) {
  const rs_inst *last = last_inst(p->f, b);
  if (is_call(p, last) || (is_ret(p, last) && (last->flags & RS_I_PREDICATED)) ||
      (p->collective && last && op_is(p->f, last, "WARPSYNC.COLLECTIVE"))) {
    *one = b + 1;
    *list = one;
    return b + 1 < p->NB;
  }
  if (is_ret(p, last)) return 0;
  *list = p->f->blocks[b].succs;
  return p->f->blocks[b].nsuccs;
}

/* Live out of block b. */
static void block_out(const plr *p, uint32_t b, rs_word *cur) {
  const uint32_t *sl;
  uint32_t one, n = succs(p, b, &sl, &one);
  memset(cur, 0, p->W * sizeof *cur);
  for (uint32_t k = 0; k < n; k++)
    for (uint32_t w = 0; w < p->W; w++) cur[w] |= p->in[(size_t)p->W * sl[k] + w];
  if (is_ret(p, last_inst(p->f, b)))
    for (uint32_t w = 0; w < p->W; w++) cur[w] |= p->ret_out[w] | (p->sub_ur[b] ? p->ret_ur[w] : 0);
}

/* One instruction backward: killing writes go, reads come. */
static void step(const plr *p, uint32_t ii, rs_word *live) {
  for (uint32_t w = 0; w < p->W; w++)
    live[w] = (live[w] & ~p->kill[(size_t)p->W * ii + w]) | p->use[(size_t)p->W * ii + w];
}

/* Units instruction ii writes, the call convention's included. */
static void writes(const plr *p, uint32_t ii, rs_word *set) {
  for (uint32_t w = 0; w < p->W; w++)
    set[w] = p->def[(size_t)p->W * ii + w] | p->cdef[(size_t)p->W * ii + w] | p->call_w[(size_t)p->W * ii + w];
}

/* Entry of a function: the kernel, or a subroutine symbol ($__internal_...) when calls are -plr's. */
static bool is_entry(const plr *p, uint32_t b) { return b == 0 || (p->calls && p->f->blocks[b].name[0] == '$'); }

/* Reached in, per block: forward over -plr's CFG; a write reaches, predicated or not. */
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

/* ---- def sites (reaching definitions over -plr's CFG, for the region rule; over the real CFG a
 * RET returning to every call site joined values of different calls) ---- */


static bool up_guard(const rs_func *f, const rs_inst *in);

/* Whether instruction ii writes unit u as a def site: its operands, or a call's clobber set
 * (-plr's call writes its whole clobber set, and those values join at reads like any other:
 * montecarlo_option's RNG state R8 is one value before its sqrt slowpath's call and after it). */
static bool site_at(const plr *p, uint32_t ii, uint32_t u) {
  return rs_bs_get(cset_at(p->def, p->W, ii), u) || rs_bs_get(cset_at(p->cdef, p->W, ii), u) ||
         rs_bs_get(cset_at(p->call_w, p->W, ii), u);
}

/* A read of unit u where the sites in cur reach: they are one value (joined with `first`, the
 * own site of a predicated write, unless UINT32_MAX); with narrow, sites that wrote more than one
 * register are left out (a call's R0/R1 reads). */
static void join_reaching(plr *p, const rs_word *cur, uint32_t u, uint32_t first, bool narrow) {
  for (uint32_t j = p->usite_first[u]; j < p->usite_first[u + 1]; j++) {
    uint32_t s = p->usite[j];
    if (!rs_bs_get(cur, s) || (narrow && p->site_w[s] > 1)) continue;
    if (first == UINT32_MAX) first = s;
    else rs_uf_union(p->par, first, s);
  }
}

static void sites_build(plr *p) {
  const rs_func *f = p->f;
  uint32_t n = 0;
  p->inst_site = rs_xmalloc(sizeof *p->inst_site * (p->NI + 1));
  for (uint32_t ii = 0; ii < p->NI; ii++) {
    p->inst_site[ii] = n;
    for (uint32_t u = 0; u < p->NU; u++)
      if (site_at(p, ii, u)) n++;
  }
  p->inst_site[p->NI] = n;
  p->nsites0 = n;
  p->nsites = n + p->NU;
  p->SW = (uint32_t)RS_WORDS(p->nsites);
  p->site_unit = rs_xmalloc(sizeof *p->site_unit * (p->nsites + 1));
  p->site_w = rs_xmalloc(sizeof *p->site_w * (p->nsites + 1));
  uint32_t *wid = rs_xcalloc(p->NU + 1, sizeof *wid);
  n = 0;
  for (uint32_t ii = 0; ii < p->NI; ii++) {
    const rs_inst *in = &f->insts[ii];
    for (uint32_t o = 0; o < in->nops; o++) {
      const rs_operand *op = &f->ops[in->first_op + o];
      uint32_t u0 = op_base(f, op);
      if ((op->flags & RS_F_DEF) && u0 != UINT32_MAX)
        for (unsigned k = 0; k < 32 && (op->lanes >> (2 * k)); k++)
          if (op_unit(f, op, k, u0)) wid[u0 + k] = op_width(op);
    }
    for (uint32_t u = 0; u < p->NU; u++) /* a call's clobber write: one register */
      if (site_at(p, ii, u))
        p->site_unit[n] = u, p->site_w[n++] = is_call(p, in) ? 1 : wid[u];
  }
  free(wid);
  for (uint32_t u = 0; u < p->NU; u++) p->site_unit[n + u] = u, p->site_w[n + u] = 0;
  p->usite_first = rs_xcalloc(p->NU + 2, sizeof *p->usite_first);
  p->usite = rs_xmalloc(sizeof *p->usite * (p->nsites + 1));
  for (uint32_t s = 0; s < p->nsites; s++) p->usite_first[p->site_unit[s] + 1]++;
  for (uint32_t u = 0; u < p->NU; u++) p->usite_first[u + 1] += p->usite_first[u];
  uint32_t *fill = rs_xmalloc(sizeof *fill * (p->NU + 1));
  memcpy(fill, p->usite_first, sizeof *fill * p->NU);
  for (uint32_t s = 0; s < p->nsites; s++) p->usite[fill[p->site_unit[s]]++] = s;
  free(fill);
  /* forward to a fixed point: a killing write replaces its unit's sites, a predicated one adds */
  uint32_t SW = p->SW;
  p->rd_in = rs_xcalloc((size_t)SW * (p->NB + 1), sizeof *p->rd_in);
  for (uint32_t b = 0; b < p->NB; b++)
    if (is_entry(p, b))
      for (uint32_t u = 0; u < p->NU; u++) rs_bs_set(set_at(p->rd_in, p->SW, b), p->nsites0 + u);
  rs_word *cur = rs_xcalloc(SW + 1, sizeof *cur);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t b = 0; b < p->NB; b++) {
      const rs_block *blk = &f->blocks[b];
      memcpy(cur, set_at(p->rd_in, SW, b), SW * sizeof *cur);
      for (uint32_t k = 0; k < blk->ninsts; k++) {
        uint32_t ii = blk->first_inst + k;
        for (uint32_t s = p->inst_site[ii]; s < p->inst_site[ii + 1]; s++) {
          uint32_t u = p->site_unit[s];
          if (rs_bs_get(set_at(p->kill, p->W, ii), u))
            for (uint32_t j = p->usite_first[u]; j < p->usite_first[u + 1]; j++) rs_bs_clr(cur, p->usite[j]);
        }
        for (uint32_t s = p->inst_site[ii]; s < p->inst_site[ii + 1]; s++) rs_bs_set(cur, s);
      }
      /* over -plr's CFG: a call returns to its next instruction (its clobber writes are sites) */
      const uint32_t *sl;
      uint32_t one, nsl = succs(p, b, &sl, &one);
      for (uint32_t k = 0; k < nsl; k++) {
        rs_word *ri = set_at(p->rd_in, SW, sl[k]);
        for (uint32_t w = 0; w < SW; w++)
          if (cur[w] & ~ri[w]) ri[w] |= cur[w], changed = true;
      }
    }
  }
  /* -plr's values: a read joins every site reaching it, whatever widths the sites wrote (a
   * CS2R R94:R95 before a branch and the loop's FFMA R94 meeting at FADD R94 join: gemv_batched
   * of the mini corpus; CS2R pairs meeting at a quad read: tex_layered); a predicated write joins
   * the sites it may leave in place */
  p->par = rs_xmalloc(sizeof *p->par * (p->nsites + 1));
  for (uint32_t i = 0; i < p->nsites; i++) p->par[i] = i;
  for (uint32_t b = 0; b < p->NB; b++) {
    const rs_block *blk = &f->blocks[b];
    memcpy(cur, set_at(p->rd_in, SW, b), SW * sizeof *cur);
    for (uint32_t ii = blk->first_inst; ii < blk->first_inst + blk->ninsts; ii++) {
      const rs_inst *in = &f->insts[ii];
      for (uint32_t o = 0; o < in->nops; o++) {
        const rs_operand *op = &f->ops[in->first_op + o];
        uint32_t u0 = op_base(f, op);
        bool def = (op->flags & RS_F_DEF) != 0;
        /* a def under a uniform predicate kills in -plr (RS_PLR_UPGUARD): it joins nothing */
        if (u0 == UINT32_MAX || (def && (!(op->flags & RS_F_COND) || (p->upguard && up_guard(f, in))))) continue;
        for (unsigned k = 0; k < 32 && (op->lanes >> (2 * k)); k++) {
          if (!op_unit(f, op, k, u0)) continue;
          uint32_t u = u0 + k, first = UINT32_MAX;
          if (def) /* the predicated write's own site */
            for (uint32_t s = p->inst_site[ii]; s < p->inst_site[ii + 1]; s++)
              if (p->site_unit[s] == u) first = s;
          join_reaching(p, cur, u, first, false);
        }
      }
      /* -plr's P2R/R2P read all of P0-P6 (RS_PLR_R2P, in use[] beside the operands): those reads
       * join too (P0 and P1 of MAGMA's gesvj_update_vectors sm_75, read by a P2R after the loop) */
      if (p->r2p && (op_is(f, in, "P2R") || op_is(f, in, "R2P") || op_is(f, in, "UP2UR"))) {
        int pf = file_named(f->tgt, op_is(f, in, "UP2UR") ? "up" : "p");
        for (uint32_t k = 0; pf >= 0 && k < 7 && k < f->tgt->files[pf].count; k++)
          join_reaching(p, cur, f->tgt->files[pf].first + k, UINT32_MAX, false);
      }
      /* a call's reads of the convention (R0, R1) join too (cg_grid_atomics: R0 of two paths) */
      for (uint32_t u = 0; is_call(p, in) && u < p->NU; u++)
        if (rs_bs_get(p->call_use, u)) join_reaching(p, cur, u, UINT32_MAX, true);
      /* and a RET's of the callee-saved registers live after it (R109 of layernorm_wide's
       * division slowpath: its value on entry and its later def in the slowpath are one) */
      for (uint32_t u = 0; is_ret(p, in) && u < p->NU; u++)
        if (rs_bs_get(p->ret_out, u) || (p->sub_ur[b] && rs_bs_get(p->ret_ur, u))) join_reaching(p, cur, u, UINT32_MAX, false);
      for (uint32_t s = p->inst_site[ii]; s < p->inst_site[ii + 1]; s++) {
        uint32_t u = p->site_unit[s];
        if (rs_bs_get(cset_at(p->kill, p->W, ii), u))
          for (uint32_t j = p->usite_first[u]; j < p->usite_first[u + 1]; j++) rs_bs_clr(cur, p->usite[j]);
      }
      for (uint32_t s = p->inst_site[ii]; s < p->inst_site[ii + 1]; s++) rs_bs_set(cur, s);
    }
  }
  free(cur);
}

/* Sites reaching the end of block b (-plr's CFG). */
static void rd_out(const plr *p, uint32_t b, rs_word *cur) {
  const rs_block *blk = &p->f->blocks[b];
  memcpy(cur, cset_at(p->rd_in, p->SW, b), p->SW * sizeof *cur);
  for (uint32_t ii = blk->first_inst; ii < blk->first_inst + blk->ninsts; ii++) {
    for (uint32_t s = p->inst_site[ii]; s < p->inst_site[ii + 1]; s++) {
      uint32_t u = p->site_unit[s];
      if (rs_bs_get(cset_at(p->kill, p->W, ii), u))
        for (uint32_t j = p->usite_first[u]; j < p->usite_first[u + 1]; j++) rs_bs_clr(cur, p->usite[j]);
    }
    for (uint32_t s = p->inst_site[ii]; s < p->inst_site[ii + 1]; s++) rs_bs_set(cur, s);
  }
}

static bool labelled(const rs_func *f, uint32_t b) {
  return b == 0 || f->blocks[b].name[0] == '.' || f->blocks[b].name[0] == '$';
}

static uint32_t root(const uint32_t *par, uint32_t x) {
  while (par[x] != x) x = par[x];
  return x;
}

/* The region rule over the span from block b0's start to the end of block be, after which the
 * registers `out` are live and the def sites `rd` reach: a register of `out` is shown from the
 * first def in the span of a value (web) reaching there, or from the span's start when it is live
 * and reached there and a value reaching the start reaches there too (nothing in between replaced
 * it, or it came around a loop) - also across a stretch where it is dead in fact. */
static void region_span(const plr *p, uint32_t b0, uint32_t be, const rs_word *out, const rs_word *rd, rs_word *webs,
                        uint32_t *from, rs_word *rows) {
  const rs_func *f = p->f;
  uint32_t i0 = f->blocks[b0].first_inst, i1 = f->blocks[be].first_inst + f->blocks[be].ninsts, NONE = UINT32_MAX;
  const rs_word *rs = cset_at(p->rd_in, p->SW, b0), *in0 = cset_at(p->in, p->W, b0), *r0 = cset_at(p->rin, p->W, b0);
  memset(webs, 0, p->SW * sizeof *webs);
  for (uint32_t w = 0; w < p->SW; w++)
    for (rs_word x = rd[w]; x; x &= x - 1) rs_bs_set(webs, root(p->par, w * 64 + (uint32_t)__builtin_ctzll(x)));
  for (uint32_t u = 0; u < p->NU; u++) from[u] = NONE;
  for (uint32_t w = 0; w < p->SW; w++)
    for (rs_word x = rs[w]; x; x &= x - 1) {
      uint32_t s = w * 64 + (uint32_t)__builtin_ctzll(x), u = p->site_unit[s];
      if (from[u] == NONE && rs_bs_get(webs, root(p->par, s)) && rs_bs_get(out, u) && rs_bs_get(in0, u) && rs_bs_get(r0, u))
        from[u] = i0;
    }
  for (uint32_t ii = i0; ii < i1; ii++)
    for (uint32_t s = p->inst_site[ii]; s < p->inst_site[ii + 1]; s++) {
      uint32_t u = p->site_unit[s];
      if (from[u] == NONE && rs_bs_get(out, u) && rs_bs_get(webs, root(p->par, s))) from[u] = ii;
    }
  for (uint32_t u = 0; u < p->NU; u++)
    for (uint32_t ii = from[u]; ii != NONE && ii < i1; ii++) rs_bs_set(set_at(rows, p->W, ii), u);
}

/* -plr's regions: code from one label to the next. A side exit of a predicated branch does not
 * end one, but the rule is applied to the span up to it too, with what is live and reaching at
 * its target (a branch back to the region's start, a loop, is one such exit): a value live at the
 * exit is shown from the span's start when it reached there, even across a stretch of the
 * fall-through where it is dead before a new def of its web (MAGMA's hemm_vbatched: R7 and R8
 * after `@!P0 BRA` out of the region entered by the loop's `@P0 CALL.REL.NOINC` exit). */
static void region_rule(const plr *p, rs_word *rows) {
  const rs_func *f = p->f;
  rs_word *out = rs_xcalloc(p->W + 1, sizeof *out), *webs = rs_xcalloc(p->SW + 1, sizeof *webs);
  rs_word *rd = rs_xcalloc(p->SW + 1, sizeof *rd);
  uint32_t *from = rs_xmalloc(sizeof *from * (p->NU + 1));
  for (uint32_t b0 = 0; b0 < p->NB;) {
    uint32_t b1 = b0 + 1;
    while (b1 < p->NB && !labelled(f, b1)) b1++;
    /* per exit of its last block, what is live and the sites reaching there, each apart (-plr's
     * CFG): a value reaching one exit where it is dead is not shown for another where the register
     * is live by another value (R4 of `@P0 BRA .L_x_9` ... `LDS R4; @!P0 BRA .L_x_10` in CUDA
     * samples' bitonic merge: dead at .L_x_9, live at .L_x_10 from the second LDS only) */
    const uint32_t *bsl;
    uint32_t bone, bn = succs(p, b1 - 1, &bsl, &bone);
    for (uint32_t k = 0; k < bn; k++)
      region_span(p, b0, b1 - 1, cset_at(p->in, p->W, bsl[k]), cset_at(p->rd_in, p->SW, bsl[k]), webs, from, rows);
    if (!bn) { /* a RET: what it keeps live, and the sites reaching its end */
      block_out(p, b1 - 1, out);
      rd_out(p, b1 - 1, rd);
      region_span(p, b0, b1 - 1, out, rd, webs, from, rows);
    }
    for (uint32_t b = b0; b + 1 < b1; b++) {
      const uint32_t *sl;
      uint32_t one, n = succs(p, b, &sl, &one);
      for (uint32_t k = 0; k < n; k++)
        if (sl[k] != b + 1) region_span(p, b0, b, cset_at(p->in, p->W, sl[k]), cset_at(p->rd_in, p->SW, sl[k]), webs, from, rows);
    }
    b0 = b1;
  }
  free(out);
  free(webs);
  free(rd);
  free(from);
}

/* Whether instruction in is guarded by a uniform predicate (@UPn / @!UPn): its guard is the
 * operand written before every other. -plr takes such a def as unconditional (it kills): UR4 of
 * `@!UP0 UMOV UR4, URZ` in MAGMA's hemm_vbatched kernels is dead before it in -plr (2,574 rows
 * of them agree with it so, none without). */
static bool up_guard(const rs_func *f, const rs_inst *in) {
  const rs_operand *g = NULL;
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if (op->text_len && (!g || op->text_off < g->text_off)) g = op;
  }
  if (!g || (g->flags & RS_F_DEF)) return false;
  const char *t = f->src + g->text_off;
  if (*t == '@') t++;
  if (*t == '!') t++;
  return t[0] == 'U' && t[1] == 'P' && t[2] != 'T';
}

/* Per instruction: reads, writes (killing or predicated), the call convention; the ABI sets. */
static void tables(plr *p) {
  const rs_func *f = p->f;
  const rs_target *t = f->tgt;
  uint32_t W = p->W;
  int rf = file_named(t, "r");
  for (uint32_t ii = 0; ii < p->NI; ii++) {
    const rs_inst *in = &f->insts[ii];
    for (uint32_t o = 0; o < in->nops; o++) {
      const rs_operand *op = &f->ops[in->first_op + o];
      uint32_t u0 = op_base(f, op);
      if (u0 == UINT32_MAX) continue;
      rs_word *s = !(op->flags & RS_F_DEF) ? p->use : (op->flags & RS_F_COND) && !(p->upguard && up_guard(f, in)) ? p->cdef : p->def;
      for (unsigned k = 0; k < 32 && (op->lanes >> (2 * k)); k++)
        if (op_unit(f, op, k, u0)) rs_bs_set(set_at(s, W, ii), u0 + k);
    }
  }
  /* -plr's R2P: PR read and written whole (P0-P6) whatever the mask, where really only the
   * predicates of the mask are written and the others left alone (what the lift takes); -plr's
   * P2R reads all of P0-P6 too, where really it reads the mask's (conv2d of the mini corpus) */
  int pf = file_named(t, "p"), upf = file_named(t, "up");
  for (uint32_t ii = 0; ii < p->NI && pf >= 0 && p->r2p; ii++) {
    if (op_is(f, &f->insts[ii], "P2R")) /* and P2R reads all of them, whatever its mask */
      for (uint32_t k = 0; k < 7 && k < t->files[pf].count; k++) rs_bs_set(set_at(p->use, W, ii), t->files[pf].first + k);
    /* UP2UR all of UP0-UP6 (ggml softmax sm_80: `UP2UR UR41, UPR, URZ, 0x2`, -plr `vvvvvvv`) */
    if (upf >= 0 && op_is(f, &f->insts[ii], "UP2UR"))
      for (uint32_t k = 0; k < 7 && k < t->files[upf].count; k++) rs_bs_set(set_at(p->use, W, ii), t->files[upf].first + k);
    if (op_is(f, &f->insts[ii], "R2P"))
      for (uint32_t k = 0; k < 7 && k < t->files[pf].count; k++) {
        uint32_t u = t->files[pf].first + k;
        rs_bs_set(set_at(p->use, W, ii), u);
        rs_bs_set(set_at(f->insts[ii].flags & RS_I_PREDICATED ? p->cdef : p->def, W, ii), u);
      }
  }
  /* per function (the kernel, each subroutine: blocks from its entry to the next): whether it
   * names a UR; -plr takes UR36-UR62 as callee-saved, live after the RETs of such a function only
   * (measured: the UR-using subroutines of async_copy and intrinsics in tests/fixtures/sass-real) */
  int uf = file_named(t, "ur");
  for (uint32_t b0 = 0; b0 < p->NB && uf >= 0;) {
    uint32_t b1 = b0 + 1;
    while (b1 < p->NB && !is_entry(p, b1)) b1++;
    bool any = false;
    const rs_regfile *U = &t->files[uf];
    for (uint32_t ii = f->blocks[b0].first_inst; ii < f->blocks[b1 - 1].first_inst + f->blocks[b1 - 1].ninsts; ii++)
      for (uint32_t w = 0; w < W && !any; w++) {
        rs_word x = set_at(p->use, W, ii)[w] | set_at(p->def, W, ii)[w] | set_at(p->cdef, W, ii)[w];
        for (; x && !any; x &= x - 1) {
          uint32_t u = w * 64 + (uint32_t)__builtin_ctzll(x);
          any = u >= U->first && u < U->first + U->count;
        }
      }
    for (uint32_t b = b0; b < b1; b++) p->sub_ur[b] = any;
    b0 = b1;
  }
  /* the call convention: R0, R1 read; all but the callee-saved written; after a RET the
   * callee-saved registers of the function's allocation (SHI_REGISTERS, the 2 reserved too) */
  uint32_t nregs = f->declared_regs;
  if (!nregs && rf >= 0) { /* sm_90 cubins carry no SHI_REGISTERS: ptxas's count, highest R + 3 */
    const rs_regfile *R = &t->files[rf];
    for (uint32_t i = 0; i < f->nops; i++) {
      const rs_operand *op = &f->ops[i];
      rs_preg r = op->kind == RS_OP_VREG ? f->truth[op->reg] : op->kind == RS_OP_PREG ? (rs_preg){op->reg, op->lanes} : (rs_preg){0, 0};
      if (!r.lanes || r.unit < R->first || r.unit >= R->first + R->count - 1) continue; /* RZ is not counted */
      uint32_t top = r.unit - R->first + rs_lanes_units(r.lanes) + 2;
      if (top > nregs) nregs = top;
    }
  }
  bool *named = rs_xcalloc(t->nfiles + 1, sizeof *named); /* per file: the function names one */
  for (uint32_t ii = 0; ii < p->NI; ii++)
    for (uint32_t w = 0; w < W; w++)
      for (rs_word x = set_at(p->use, W, ii)[w] | set_at(p->def, W, ii)[w] | set_at(p->cdef, W, ii)[w]; x; x &= x - 1)
        if (rs_target_file_of(t, w * 64 + (uint32_t)__builtin_ctzll(x)) >= 0)
          named[rs_target_file_of(t, w * 64 + (uint32_t)__builtin_ctzll(x))] = true;
  bool uniform = false;
  for (uint32_t fi = 0; fi < t->nfiles; fi++)
    uniform |= named[fi] && (!strcmp(t->files[fi].name, "ur") || !strcmp(t->files[fi].name, "up"));
  for (uint32_t fi = 0; fi < t->nfiles; fi++) {
    const char *n = t->files[fi].name;
    bool r = (int)fi == rf;
    if (!r && strcmp(n, "ur") && strcmp(n, "p") && strcmp(n, "up")) continue;
    for (uint32_t k = 0; k < t->files[fi].count; k++) {
      uint32_t u = t->files[fi].first + k;
      if (!(t->unit_flags[u] & RS_UNIT_TRACKED)) continue;
      if (r && plr_at_entry(k)) rs_bs_set(p->entry, u);
      if (r && k <= 1) rs_bs_set(p->call_use, u);
      if (!r || !plr_saved(k)) rs_bs_set(p->clob, u);
      else if (k < nregs || !nregs) rs_bs_set(p->ret_out, u);
      /* shown at a chained call: R3-R15 and R32+ (not callee-saved) below the allocation, P0-P6,
       * UR4-UR35, UP0-UP6; the uniform ones only where the function names a UR or UP (-plr has
       * no uniform columns otherwise: scan_t256_i8 sm_75) */
      if ((r && !plr_saved(k) && k < nregs) || !strcmp(n, "p") ||
          (uniform && (!strcmp(n, "up") || (!strcmp(n, "ur") && k >= 4 && k < 36))))
        rs_bs_set(p->call_full, u);
      if (!strcmp(n, "ur") && k >= 36 && k < 63) rs_bs_set(p->ret_ur, u), rs_bs_set(p->entry, u);
    }
  }
  free(named);
  for (uint32_t ii = 0; ii < p->NI; ii++) {
    const rs_inst *in = &f->insts[ii];
    rs_word *use = set_at(p->use, W, ii), *kill = set_at(p->kill, W, ii);
    memcpy(kill, set_at(p->def, W, ii), W * sizeof *kill);
    if (!is_call(p, in)) continue;
    memcpy(set_at(p->call_w, W, ii), p->clob, W * sizeof *p->clob);
    for (uint32_t w = 0; w < W; w++) {
      use[w] |= p->call_use[w];
      if (!(in->flags & RS_I_PREDICATED)) kill[w] |= p->clob[w] & ~p->ret_ur[w];
    }
  }
}

int rs_sass_live_rows(const rs_func *f, rs_word **rows, uint32_t *words, unsigned quirks, rs_err *e) {
  (void)e;
  plr p = {0};
  p.f = f;
  p.NB = f->nblocks;
  p.NI = f->ninsts;
  p.NU = f->tgt->nunits;
  p.W = (uint32_t)RS_WORDS(p.NU);
  p.calls = (quirks & RS_PLR_CALLS) != 0;
  p.r2p = (quirks & RS_PLR_R2P) != 0;
  p.chain = (quirks & RS_PLR_CHAIN) != 0;
  p.upguard = (quirks & RS_PLR_UPGUARD) != 0;
  p.collective = (quirks & RS_PLR_COLLECTIVE) != 0;
  uint32_t W = p.W, NI = p.NI;
  rs_word **per_inst[] = {&p.use, &p.def, &p.cdef, &p.call_w, &p.kill};
  for (size_t k = 0; k < sizeof per_inst / sizeof *per_inst; k++) *per_inst[k] = rs_xcalloc((size_t)W * (NI + 1), sizeof(rs_word));
  rs_word **sets[] = {&p.entry, &p.clob, &p.call_use, &p.ret_out, &p.ret_ur, &p.call_full};
  for (size_t k = 0; k < sizeof sets / sizeof *sets; k++) *sets[k] = rs_xcalloc(W + 1, sizeof(rs_word));
  p.in = rs_xcalloc((size_t)W * (p.NB + 1), sizeof *p.in);
  p.rin = rs_xcalloc((size_t)W * (p.NB + 1), sizeof *p.rin);
  p.sub_ur = rs_xcalloc(p.NB + 1, sizeof *p.sub_ur);
  tables(&p);
  /* backward liveness over -plr's CFG */
  rs_word *cur = rs_xcalloc(W + 1, sizeof *cur);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t b = p.NB; b-- > 0;) {
      const rs_block *blk = &f->blocks[b];
      block_out(&p, b, cur);
      for (uint32_t k = blk->ninsts; k-- > 0;) step(&p, blk->first_inst + k, cur);
      if (memcmp(cur, set_at(p.in, W, b), W * sizeof *cur)) {
        memcpy(set_at(p.in, W, b), cur, W * sizeof *cur);
        changed = true;
      }
    }
  }
  reach(&p);
  sites_build(&p);
  /* rows: what is written, and what is live before and reached */
  rs_word *out = rs_xcalloc((size_t)W * (NI + 1), sizeof *out);
  rs_word *rb = rs_xcalloc((size_t)W * (NI + 1), sizeof *rb), *wr = rs_xcalloc(W + 1, sizeof *wr);
  for (uint32_t b = 0; b < p.NB; b++) {
    const rs_block *blk = &f->blocks[b];
    memcpy(wr, set_at(p.rin, W, b), W * sizeof *wr);
    for (uint32_t ii = blk->first_inst; ii < blk->first_inst + blk->ninsts; ii++) {
      memcpy(set_at(rb, W, ii), wr, W * sizeof *wr);
      rs_word *x = set_at(rb, W, NI); /* scratch */
      writes(&p, ii, x);
      for (uint32_t w = 0; w < W; w++) wr[w] |= x[w];
    }
  }
  /* a call whose straight-line code reaches another call before any label or branch: -plr
   * shows its whole clobber set written at it (call_full) */
  bool *chained = rs_xcalloc(NI + 1, sizeof *chained);
  rs_word *later = rs_xcalloc(W + 1, sizeof *later), *seen = rs_xcalloc(W + 1, sizeof *seen);
  for (uint32_t b = p.NB, next_call = 0; b-- > 0;) {
    const rs_block *blk = &f->blocks[b];
    for (uint32_t k = blk->ninsts; k-- > 0;) {
      const rs_inst *in = &f->insts[blk->first_inst + k];
      if (is_call(&p, in)) {
        bool plain = !(in->flags & RS_I_PREDICATED);
        chained[blk->first_inst + k] = p.chain && plain && next_call;
        next_call = plain;
      } else if (in->flags & RS_I_BARRIER) { /* a branch that falls through does not end the chain
                                               * (`@P1 BRA`, `BRA.CONV` between the div_u16 and
                                               * reduxsync calls of CUDA samples' reduce7) */
        next_call = 0;
      }
    }
    if (labelled(f, b)) next_call = 0;
  }
  for (uint32_t b = 0; b < p.NB; b++) {
    const rs_block *blk = &f->blocks[b];
    block_out(&p, b, cur);
    for (uint32_t k = blk->ninsts; k-- > 0;) {
      uint32_t ii = blk->first_inst + k;
      rs_word *row = set_at(out, W, ii);
      if (chained[ii])
        for (uint32_t w = 0; w < W; w++) row[w] |= p.call_full[w];
      /* "written later": a unit the straight-line code after the call writes before any read,
       * up to the region's end (a label): not past it (zhetrs' dblrcp slowpath call right before
       * .L_x_29, whose first instruction writes R12-R15: -plr shows none at it); not only the
       * next instruction (R3 of `CALL $__cuda_sm20_rem_u64; MOV R2, R4; MOV R3, R5; BRA`,
       * tests/fixtures/sass-forms/calls42: -plr shows R3 written at the call) */
      if (is_call(&p, &f->insts[ii])) {
        memset(later, 0, W * sizeof *later);
        memset(seen, 0, W * sizeof *seen);
        for (uint32_t bb = b, jj = ii + 1; bb < p.NB && jj < NI; jj++) {
          while (bb < p.NB && jj >= f->blocks[bb].first_inst + f->blocks[bb].ninsts) bb++;
          if (bb >= p.NB || (bb != b && labelled(f, bb) && jj == f->blocks[bb].first_inst)) break;
          for (uint32_t w = 0; w < W; w++) {
            rs_word d = (p.def[(size_t)W * jj + w] | p.cdef[(size_t)W * jj + w]) & ~seen[w] & ~p.use[(size_t)W * jj + w];
            later[w] |= d;
            seen[w] |= p.use[(size_t)W * jj + w] | p.def[(size_t)W * jj + w] | p.cdef[(size_t)W * jj + w];
          }
        }
      }
      for (uint32_t w = 0; w < W; w++) { /* written here: shown even when dead; a call's where live after or written later */
        rs_word after = cur[w] | (is_call(&p, &f->insts[ii]) ? later[w] : 0);
        row[w] |= p.def[(size_t)W * ii + w] | p.cdef[(size_t)W * ii + w] | (p.call_w[(size_t)W * ii + w] & after);
      }
      step(&p, ii, cur);
      const rs_word *r = set_at(rb, W, ii);
      for (uint32_t w = 0; w < W; w++) row[w] |= cur[w] & r[w];
    }
  }
  region_rule(&p, out);
  free(chained);
  free(later);
  free(seen);
  free(rb);
  free(wr);
  free(cur);
  for (size_t k = 0; k < sizeof per_inst / sizeof *per_inst; k++) free(*per_inst[k]);
  for (size_t k = 0; k < sizeof sets / sizeof *sets; k++) free(*sets[k]);
  free(p.in);
  free(p.rin);
  free(p.inst_site);
  free(p.site_unit);
  free(p.site_w);
  free(p.par);
  free(p.usite);
  free(p.usite_first);
  free(p.rd_in);
  free(p.sub_ur);
  *rows = out;
  *words = W;
  return 0;
}
