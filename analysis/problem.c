/* problem.c - interference, fixed-register exclusions, copy hints and pressure from liveness.
 *
 * Two values interfere when their live ranges overlap (LLVM's rule): a range starts at a def or
 * at the entry of a block, so it suffices to look (1) at every def, against everything live
 * after the instruction and the instruction's other defs (and its uses, for early-clobber), and
 * (2) at the entry of every block with several predecessors (or none), where values defined on
 * different paths meet. Single-predecessor blocks inherit their entry overlaps from the
 * predecessor's end, which (1) or (2) already saw. */
#include "analysis/problem.h"
#include "analysis/liveness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t *keys; /* hash of (a,b,la,lb) -> conf index + 1 */
  uint32_t *vals;
  uint32_t cap, n;
} cset;

static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

typedef struct {
  const rs_func *f;
  const rs_live *l;
  rs_problem *p;
  uint32_t *var_of; /* function vreg -> problem var, UINT32_MAX if unused */
  cset conf, fix;
  /* scratch: owners live at a point, with their lanes */
  struct own { uint32_t o; rs_lanes m; } *own;
  uint32_t nown, capown;
} B;

static bool eq_conf(const rs_conflict *c, uint32_t a, uint32_t b, rs_lanes la, rs_lanes lb) {
  return c->a == a && c->b == b && c->la == la && c->lb == lb;
}

static void cset_grow(cset *s) {
  uint32_t nc = s->cap ? s->cap * 2 : 1024;
  uint64_t *nk = rs_xcalloc(nc, sizeof *nk);
  uint32_t *nv = rs_xcalloc(nc, sizeof *nv);
  for (uint32_t i = 0; i < s->cap; i++) {
    if (!s->vals[i]) continue;
    uint32_t j = (uint32_t)s->keys[i] & (nc - 1);
    while (nv[j]) j = (j + 1) & (nc - 1);
    nk[j] = s->keys[i];
    nv[j] = s->vals[i];
  }
  free(s->keys);
  free(s->vals);
  s->keys = nk;
  s->vals = nv;
  s->cap = nc;
}

static void add_conflict(B *b, uint32_t a, rs_lanes la, uint32_t c, rs_lanes lc, uint32_t inst) {
  if (a == c || !la || !lc) return;
  if (a > c) {
    uint32_t t = a; a = c; c = t;
    rs_lanes tl = la; la = lc; lc = tl;
  }
  rs_problem *p = b->p;
  if (!(p->vars[a].files & p->vars[c].files)) return; /* different files never collide */
  uint64_t h = mix(((uint64_t)a << 32 | c) ^ mix(la) ^ mix(lc * 31));
  if (b->conf.n * 2 >= b->conf.cap) cset_grow(&b->conf);
  uint32_t j = (uint32_t)h & (b->conf.cap - 1);
  while (b->conf.vals[j]) {
    if (b->conf.keys[j] == h && eq_conf(&p->conf[b->conf.vals[j] - 1], a, c, la, lc)) return;
    j = (j + 1) & (b->conf.cap - 1);
  }
  rs_conflict cf = {a, c, la, lc, inst};
  RS_PUSH(p->conf, p->nconf, p->capconf, cf);
  b->conf.keys[j] = h;
  b->conf.vals[j] = p->nconf;
  b->conf.n++;
}

static void add_fixed(B *b, uint32_t v, rs_lanes lv, uint32_t unit, rs_lanes lp, uint32_t inst) {
  if (!lv || !lp) return;
  rs_problem *p = b->p;
  const rs_target *t = p->tgt;
  int f = rs_target_file_of(t, unit);
  bool special_ok = false;
  if (f >= 0 && !t->files[f].asm_prefix) { /* special registers: only classes that may take them */
    const rs_regclass *rc = &t->classes[p->vars[v].cls];
    for (uint32_t s = 0; s < t->nspecials; s++)
      if ((rc->specials >> s & 1) && t->specials[s].reg.unit <= unit &&
          unit < t->specials[s].reg.unit + rs_lanes_units(t->specials[s].reg.lanes))
        special_ok = true;
    if (!special_ok) return;
  } else if (f < 0 || !(p->vars[v].files >> f & 1)) {
    return;
  }
  uint64_t h = mix(((uint64_t)v << 32 | unit) ^ mix(lv) ^ mix(lp * 31));
  if (b->fix.n * 2 >= b->fix.cap) cset_grow(&b->fix);
  uint32_t j = (uint32_t)h & (b->fix.cap - 1);
  while (b->fix.vals[j]) {
    const rs_fixed *x = &p->fixed[b->fix.vals[j] - 1];
    if (b->fix.keys[j] == h && x->v == v && x->lv == lv && x->p.unit == unit && x->p.lanes == lp) return;
    j = (j + 1) & (b->fix.cap - 1);
  }
  rs_fixed fx = {v, lv, {unit, lp}, inst};
  RS_PUSH(p->fixed, p->nfixed, p->capfixed, fx);
  b->fix.keys[j] = h;
  b->fix.vals[j] = p->nfixed;
  b->fix.n++;
}

/* Collect (owner, lanes) of the set bits of `set`. Owners are contiguous runs of slots; a
 * physical owner covers 2 slots (one unit). */
static void push_owner(B *b, uint32_t o, rs_lanes m) {
  struct own x = {o, m};
  RS_PUSH(b->own, b->nown, b->capown, x);
}

/* Append the owners of the set bits of `set` in slots [from, to). Owners are contiguous runs of
 * slots; a physical owner covers 2 slots (one unit). */
static void gather_range(B *b, const rs_word *set, uint32_t from, uint32_t to) {
  const rs_live *l = b->l;
  uint32_t cur = UINT32_MAX, base = 0;
  rs_lanes m = 0;
  for (uint32_t w = from >> 6; w * 64 < to; w++) {
    rs_word x = set[w];
    if (w == from >> 6 && (from & 63)) x &= ~(rs_word)0 << (from & 63);
    if ((w + 1) * 64 > to) x &= ((rs_word)1 << (to - w * 64)) - 1;
    while (x) {
      uint32_t slot = w * 64 + (uint32_t)__builtin_ctzll(x);
      x &= x - 1;
      uint32_t o = l->owner[slot];
      if (o != cur) {
        if (cur != UINT32_MAX) push_owner(b, cur, m);
        cur = o;
        m = 0;
        base = o < b->f->nvregs ? l->vslot[o] : l->pbase + 2 * (o - b->f->nvregs);
      }
      m |= (rs_lanes)1 << (slot - base);
    }
  }
  if (cur != UINT32_MAX) push_owner(b, cur, m);
}

/* Owners that could collide with a value whose class may use `files` (all when ~0); physical
 * owners only if `phys` (two physical registers never make a constraint). */
static void gather(B *b, const rs_word *set, uint32_t files, bool phys) {
  const rs_live *l = b->l;
  const rs_target *t = b->f->tgt;
  b->nown = 0;
  for (uint32_t g = 0; g < l->ngroups; g++)
    if (l->groups[g].files & files) gather_range(b, set, l->groups[g].first, l->groups[g].end);
  if (!phys) return;
  for (uint32_t f = 0; f < t->nfiles; f++)
    if (files >> f & 1)
      gather_range(b, set, l->pbase + 2 * t->files[f].first, l->pbase + 2 * (t->files[f].first + t->files[f].count));
}

/* Files a def can collide in: its class's files (plus the special registers' file when the class
 * may take one), or for a physical unit its own file (everything for special registers). */
static uint32_t def_files(const B *b, const rs_operand *op) {
  const rs_target *t = b->f->tgt;
  if (op->kind == RS_OP_VREG) {
    const rs_regclass *rc = &t->classes[b->f->vregs[op->reg].cls];
    uint32_t m = rc->files;
    if (rc->specials)
      for (uint32_t s = 0; s < t->nspecials; s++)
        if (rc->specials >> s & 1) {
          int f = rs_target_file_of(t, t->specials[s].reg.unit);
          if (f >= 0) m |= 1u << f;
        }
    return m;
  }
  int f = rs_target_file_of(t, op->reg);
  if (f < 0 || !t->files[f].asm_prefix) return ~0u;
  return 1u << f;
}

/* Record the overlap of owner x (lanes lx) with owner y (lanes ly). */
static void overlap(B *b, uint32_t x, rs_lanes lx, uint32_t y, rs_lanes ly, uint32_t inst) {
  uint32_t nv = b->f->nvregs;
  if (x < nv && y < nv) {
    add_conflict(b, b->var_of[x], lx, b->var_of[y], ly, inst);
  } else if (x < nv) {
    add_fixed(b, b->var_of[x], lx, y - nv, ly, inst);
  } else if (y < nv) {
    add_fixed(b, b->var_of[y], ly, x - nv, lx, inst);
  }
}

static void pressure(B *b, const rs_word *set) {
  const rs_live *l = b->l;
  const rs_target *t = b->f->tgt;
  uint32_t cnt[RS_MAX_FILES] = {0}, flex = 0, flexmask = 0;
  for (uint32_t g = 0; g < l->ngroups; g++) {
    const rs_slotgroup *gr = &l->groups[g];
    uint32_t n = (uint32_t)rs_bs_count_pairs(set, gr->first, gr->end);
    if (gr->files & (gr->files - 1)) { /* several files: counted only in the union */
      flex += n;
      flexmask |= gr->files;
    } else if (gr->pfile >= 0 && gr->pfile < RS_MAX_FILES) {
      cnt[gr->pfile] += n;
    }
  }
  for (uint32_t f = 0; f < t->nfiles && f < RS_MAX_FILES; f++) {
    if (!t->files[f].pressure) continue;
    cnt[f] += (uint32_t)rs_bs_count_pairs(set, l->pbase + 2 * t->files[f].first,
                                          l->pbase + 2 * (t->files[f].first + t->files[f].count));
    if (cnt[f] > b->p->maxp[f]) b->p->maxp[f] = cnt[f];
  }
  b->p->flex_files |= flexmask;
  if (b->p->flex_files) {
    uint32_t u = flex;
    for (uint32_t f = 0; f < t->nfiles && f < RS_MAX_FILES; f++)
      if (b->p->flex_files >> f & 1) u += cnt[f];
    if (u > b->p->maxp_flex) b->p->maxp_flex = u;
  }
}

static void add_hint(B *b, const rs_inst *in) {
  const rs_func *f = b->f;
  if (in->nops != 2) return;
  const rs_operand *d = &f->ops[in->first_op], *s = &f->ops[in->first_op + 1];
  if (!(d->flags & RS_F_DEF) || (s->flags & RS_F_DEF)) return;
  if (d->kind != RS_OP_VREG && s->kind != RS_OP_VREG) return;
  int32_t dd = d->lanes ? __builtin_ctzll(d->lanes) / 2 : 0;
  int32_t ds = s->lanes ? __builtin_ctzll(s->lanes) / 2 : 0;
  rs_hint h;
  if (d->kind == RS_OP_VREG && s->kind == RS_OP_VREG) {
    h = (rs_hint){b->var_of[d->reg], (int32_t)b->var_of[s->reg], 0, ds - dd};
  } else if (d->kind == RS_OP_VREG && s->kind == RS_OP_PREG) {
    h = (rs_hint){b->var_of[d->reg], -1, s->reg, ds - dd};
  } else if (s->kind == RS_OP_VREG && d->kind == RS_OP_PREG) {
    h = (rs_hint){b->var_of[s->reg], -1, d->reg, dd - ds};
  } else {
    return;
  }
  RS_PUSH(b->p->hints, b->p->nhints, b->p->caphints, h);
}

static bool implicit_def(const rs_func *f, const rs_inst *in) {
  const char *op = rs_func_opcode(f, in);
  return op && !strcmp(op, "IMPLICIT_DEF");
}

/* The lanes a def occupies at its instruction. IMPLICIT_DEF writes nothing: only the lanes live
 * after it hold a (undefined) value, its dead lanes overlap nothing. LLVM allocates so (rocPRIM
 * 5.3 scans and sorts on gfx940: `%2176:vreg_128_align2 = IMPLICIT_DEF`, lanes sub0_sub1 dead,
 * in the registers of a live `%1810.sub0_sub1`: 14 rows had a truth our rule refused). */
static rs_lanes def_lanes(const rs_live *l, const rs_operand *op, const rs_word *live, bool idef) {
  rs_lanes d = rs_live_op_lanes(l, op);
  if (!idef || op->kind != RS_OP_VREG || !d) return d;
  return d & (rs_lanes)rs_bs_get_bits(live, rs_live_op_slot(l, op), 64u - (unsigned)__builtin_clzll((unsigned long long)d));
}

/* The interference of instruction ii with what is live (and defined) after it: its defs meet
 * eff = (live after ∩ defined after) ∪ its defs. `lane_defs` false: the lane of a segment does
 * not run it, and its per-lane defs write nothing there (lanemask.c). */
static void walk_inst(B *b, uint32_t bi, uint32_t ii, const rs_word *live, const rs_word *defd, rs_word *eff, bool lane_defs) {
  const rs_func *f = b->f;
  const rs_live *l = b->l;
  uint32_t W = l->words;
  const rs_inst *in = &f->insts[ii];
  /* a lane that does not run it: its vector defs write nothing there, cross-lane values too
   * (they write the active lanes only; a write that ignores EXEC writes any lane) */
  const rs_word *skip = lane_defs ? NULL : (in->flags & RS_I_LANEWRITE) ? l->lanewise : l->vecslots;
  bool any_def = false, early = false, idef = implicit_def(f, in);
  for (uint32_t w = 0; w < W; w++) eff[w] = live[w] & defd[w];
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if (!(op->flags & RS_F_DEF)) continue;
    uint32_t s = rs_live_op_slot(l, op);
    if (s == UINT32_MAX || (skip && rs_bs_get(skip, s))) continue;
    any_def = true;
    early |= (op->flags & RS_F_EARLY) != 0;
    rs_bs_or_bits(eff, s, def_lanes(l, op, live, idef));
  }
  /* early-clobber defs overlap the uses, but only the lanes some definition reaches: an
   * undefined lane of a read tuple (`undef %x.sub0 = ...` then a read of %x) holds nothing, and
   * LLVM may put the def there (llc-16 gfx1100 sgemm: V_MAD_U64_U32 over %x.sub1) */
  if (early)
    for (uint32_t o = 0; o < in->nops; o++) {
      uint32_t oi = in->first_op + o;
      uint32_t s = rs_live_op_slot(l, &f->ops[oi]);
      rs_lanes u = l->use[oi] & ~l->uundef[oi];
      if (u && s != UINT32_MAX && (!skip || !rs_bs_get(skip, s))) rs_bs_or_bits(eff, s, u);
    }
  if (!any_def) return;
  pressure(b, eff);
  /* a write that ignores EXEC inside a split if/else reaches the other side's lanes (simt.c);
   * on the lanes' paths each lane's state there is a segment of its own, walked apart */
  if ((in->flags & RS_I_LANEWRITE) && l->nsplits && !l->nsegs) rs_simt_lanewrite_meets(l, bi, eff);
  uint32_t gathered = 0; /* files of the current gather + 1 bit for "with physical" */
  bool gathered_phys = false;
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    uint32_t s = rs_live_op_slot(l, op);
    if (!(op->flags & RS_F_DEF) || s == UINT32_MAX || (skip && rs_bs_get(skip, s))) continue;
    uint32_t files = def_files(b, op);
    bool phys = op->kind == RS_OP_VREG;
    if (!gathered || files != gathered || phys != gathered_phys) {
      gather(b, eff, files, phys);
      gathered = files;
      gathered_phys = phys;
    }
    uint32_t x = op->kind == RS_OP_VREG ? op->reg : f->nvregs + op->reg;
    /* a physical tuple def is one owner per unit */
    unsigned units = op->kind == RS_OP_PREG ? rs_lanes_units(op->lanes) : 1;
    for (unsigned u = 0; u < units; u++) {
      uint32_t xo = x + u;
      rs_lanes lx = def_lanes(l, op, live, idef);
      if (op->kind == RS_OP_PREG) lx = (lx >> (2 * u)) & 3;
      if (!lx) continue;
      for (uint32_t k2 = 0; k2 < b->nown; k2++)
        if (b->own[k2].o != xo) overlap(b, xo, lx, b->own[k2].o, b->own[k2].m, ii);
    }
  }
}


/* Block entry: merges (and the function entry) start ranges without a def. */
static void walk_entry(B *b, uint32_t bi, rs_word *eff) {
  const rs_block *blk = &b->f->blocks[bi];
  pressure(b, eff);
  if (blk->npreds != 1) {
    gather(b, eff, ~0u, true);
    for (uint32_t i = 0; i < b->nown; i++)
      for (uint32_t j = i + 1; j < b->nown; j++)
        overlap(b, b->own[i].o, b->own[i].m, b->own[j].o, b->own[j].m, blk->first_inst);
  }
}

static void walk_block(B *b, uint32_t bi, rs_word *live, rs_word *defd, rs_word *eff, bool hints) {
  const rs_func *f = b->f;
  const rs_live *l = b->l;
  const rs_block *blk = &f->blocks[bi];
  uint32_t W = l->words;
  memcpy(live, l->out + (size_t)bi * W, W * sizeof *live);
  memcpy(defd, l->defout + (size_t)bi * W, W * sizeof *defd);
  for (uint32_t k = blk->ninsts; k-- > 0;) {
    uint32_t ii = blk->first_inst + k;
    const rs_inst *in = &f->insts[ii];
    if ((in->flags & RS_I_COPY) && hints) add_hint(b, in);
    walk_inst(b, bi, ii, live, defd, eff, true);
    rs_live_defs_back(l, in, defd);
    rs_live_step_back(l, in, live);
  }
  rs_live_block_in(l, bi, eff);
  walk_entry(b, bi, eff);
}

/* Segment g of the lanes' paths (lanemask.c): the wave's liveness for the wave's slots, the
 * segment's own for the per-lane ones, per-lane defs only where its lane runs them. Scratch:
 * t[0..5], words each. */
static void walk_seg(B *b, const rs_lseg *g, rs_word *eff, rs_word *const t[6]) {
  const rs_func *f = b->f;
  const rs_live *l = b->l;
  uint32_t bi = g->block, W = l->words;
  const rs_block *blk = &f->blocks[bi];
  const rs_word *lw = l->lanewise;
  size_t gi = (size_t)(g - l->segs);
  rs_word *wave = t[0], *wdef = t[1], *lane = t[2], *ldef = t[3], *live = t[4], *defd = t[5];
  memcpy(wave, l->out + (size_t)bi * W, W * sizeof *wave);
  memcpy(wdef, l->defout + (size_t)bi * W, W * sizeof *wdef);
  for (uint32_t k = blk->ninsts; k-- > g->end;) {
    const rs_inst *in = &f->insts[blk->first_inst + k];
    rs_live_defs_back(l, in, wdef);
    rs_live_step_back(l, in, wave);
  }
  memcpy(lane, l->sout + gi * W, W * sizeof *lane);
  memcpy(ldef, l->sdout + gi * W, W * sizeof *ldef);
  for (uint32_t k = g->end; k-- > g->first;) {
    uint32_t ii = blk->first_inst + k;
    const rs_inst *in = &f->insts[ii];
    bool act = rs_live_seg_active(l, g, k);
    for (uint32_t w = 0; w < W; w++) {
      live[w] = (wave[w] & ~lw[w]) | lane[w];
      defd[w] = (wdef[w] & ~lw[w]) | ldef[w];
    }
    walk_inst(b, bi, ii, live, defd, eff, act);
    rs_live_defs_back(l, in, wdef);
    if (act) {
      rs_live_defs_back(l, in, defd);
      for (uint32_t w = 0; w < W; w++) ldef[w] = defd[w] & lw[w];
    }
    rs_live_seg_step_back(l, g, k, wave, lane, live);
  }
  if (g->first) return;
  const rs_word *in = l->in + (size_t)bi * W, *din = l->defin + (size_t)bi * W;
  const rs_word *sin = l->sin + gi * W, *sdin = l->sdin + gi * W;
  for (uint32_t w = 0; w < W; w++) eff[w] = (in[w] & din[w] & ~lw[w]) | (sin[w] & sdin[w]);
  walk_entry(b, bi, eff);
}

/* First def of every value in reverse post-order of the blocks: on SSA-like code this is a
 * perfect elimination order, the best order for greedy colouring. */
static void def_order(const rs_func *f, rs_problem *p, const uint32_t *var_of) {
  uint32_t *post = rs_xmalloc(sizeof *post * (f->nblocks + 1)), np = rs_cfg_postorder(f, post);
  for (uint32_t v = 0; v < p->nvars; v++) p->vars[v].order = UINT32_MAX;
  uint32_t pos = 0;
  for (uint32_t i = np; i-- > 0;) {
    const rs_block *blk = &f->blocks[post[i]];
    for (uint32_t k = 0; k < blk->ninsts; k++, pos++) {
      const rs_inst *in = &f->insts[blk->first_inst + k];
      for (uint32_t o = 0; o < in->nops; o++) {
        const rs_operand *op = &f->ops[in->first_op + o];
        if (op->kind == RS_OP_VREG && (op->flags & RS_F_DEF) && var_of[op->reg] != UINT32_MAX &&
            p->vars[var_of[op->reg]].order == UINT32_MAX)
          p->vars[var_of[op->reg]].order = pos;
      }
    }
  }
  free(post);
}

rs_problem *rs_problem_build(const rs_func *f, rs_err *e) {
  rs_live *l = rs_live_compute(f, e);
  if (!l) return NULL;
  rs_problem *p = rs_xcalloc(1, sizeof *p);
  p->tgt = f->tgt;
  p->func = rs_xstrndup(f->name, strlen(f->name));
  p->path = rs_xstrndup(f->path, strlen(f->path));
  p->nblocks = f->nblocks;
  p->ninsts = f->ninsts;
  p->inst_line = rs_xmalloc(sizeof *p->inst_line * (f->ninsts + 1));
  for (uint32_t i = 0; i < f->ninsts; i++) p->inst_line[i] = f->insts[i].line;
  for (uint32_t k = 0; k < f->tgt->nfiles && k < RS_MAX_FILES; k++) p->budget[k] = f->tgt->files[k].budget;
  if (f->has_launch && f->tgt->fn_budget) {
    p->launch = f->launch;
    f->tgt->fn_budget(f->tgt, &f->launch, p->budget, &p->launch_waves);
  }
  if (f->nreserved) {
    p->nreserved = f->nreserved;
    p->reserved = rs_xmalloc(sizeof *p->reserved * f->nreserved);
    memcpy(p->reserved, f->reserved, sizeof *p->reserved * f->nreserved);
  }
  if (f->nwwm) {
    p->nwwm = f->nwwm;
    p->wwm = rs_xmalloc(sizeof *p->wwm * f->nwwm);
    memcpy(p->wwm, f->wwm, sizeof *p->wwm * f->nwwm);
  }
  B b = {0};
  b.f = f;
  b.l = l;
  b.p = p;
  b.var_of = rs_xmalloc(sizeof *b.var_of * (f->nvregs + 1));
  /* values in function order (stable, readable), not slot order */
  for (uint32_t v = 0; v < f->nvregs; v++) {
    b.var_of[v] = UINT32_MAX;
    if (l->vslot[v] == UINT32_MAX) continue;
    const rs_vreg *r = &f->vregs[v];
    rs_pvar pv = {rs_xstrndup(r->name, strlen(r->name)), r->cls, r->width, r->full,
                  f->tgt->classes[r->cls].files, v, UINT32_MAX};
    b.var_of[v] = p->nvars;
    RS_PUSH(p->vars, p->nvars, p->capvars, pv);
  }
  /* Size the conflict table and array for the common case up front: regrowing them dominated
   * the build of large kernels (bench/bench_parse.c). */
  {
    uint32_t cap = 1024;
    while (cap < 128u * f->ninsts && cap < (1u << 24)) cap *= 2;
    b.conf.cap = cap;
    b.conf.keys = rs_xcalloc(cap, sizeof *b.conf.keys);
    b.conf.vals = rs_xcalloc(cap, sizeof *b.conf.vals);
    rs_grow((void **)&p->conf, sizeof *p->conf, &p->capconf, cap / 4);
    b.fix.cap = 1024;
    b.fix.keys = rs_xcalloc(b.fix.cap, sizeof *b.fix.keys);
    b.fix.vals = rs_xcalloc(b.fix.cap, sizeof *b.fix.vals);
  }
  def_order(f, p, b.var_of);
  uint32_t W = l->words;
  rs_word *live = rs_xcalloc(W + 2, sizeof *live), *defd = rs_xcalloc(W + 2, sizeof *defd),
          *eff = rs_xcalloc(W + 2, sizeof *eff);
  if (l->nsegs) { /* the lanes' paths (lanemask.c); a block no lane reaches as the wave does */
    rs_word *t[6];
    for (int k = 0; k < 6; k++) t[k] = rs_xcalloc(W + 2, sizeof(rs_word));
    uint8_t *seen = rs_xcalloc(f->nblocks + 1, 1);
    for (uint32_t bi = 0; bi < f->nblocks; bi++) /* copy hints in the order of the block walk */
      for (uint32_t k = f->blocks[bi].ninsts; k-- > 0;)
        if (f->insts[f->blocks[bi].first_inst + k].flags & RS_I_COPY) add_hint(&b, &f->insts[f->blocks[bi].first_inst + k]);
    for (uint32_t g = 0; g < l->nsegs; g++) walk_seg(&b, &l->segs[g], eff, t), seen[l->segs[g].block] = 1;
    for (uint32_t bi = 0; bi < f->nblocks; bi++)
      if (!seen[bi]) walk_block(&b, bi, live, defd, eff, false);
    for (int k = 0; k < 6; k++) free(t[k]);
    free(seen);
  } else {
    for (uint32_t bi = 0; bi < f->nblocks; bi++) walk_block(&b, bi, live, defd, eff, true);
  }
  free(live);
  free(defd);
  free(eff);
  free(b.var_of);
  free(b.own);
  free(b.conf.keys);
  free(b.conf.vals);
  free(b.fix.keys);
  free(b.fix.vals);
  rs_live_free(l);
  return p;
}

void rs_problem_free(rs_problem *p) {
  if (!p) return;
  for (uint32_t i = 0; i < p->nvars; i++) free(p->vars[i].name);
  free(p->vars);
  free(p->conf);
  free(p->fixed);
  free(p->hints);
  free(p->reserved);
  free(p->wwm);
  free(p->inst_line);
  free(p->func);
  free(p->path);
  free(p);
}

uint32_t rs_problem_violations(const rs_problem *p, const uint32_t *base) {
  uint32_t bad = 0;
  for (uint32_t i = 0; i < p->nconf; i++) {
    const rs_conflict *c = &p->conf[i];
    bad += rs_lanes_overlap(base[c->a], c->la, base[c->b], c->lb);
  }
  for (uint32_t i = 0; i < p->nfixed; i++) {
    const rs_fixed *x = &p->fixed[i];
    bad += rs_lanes_overlap(base[x->v], x->lv, x->p.unit, x->p.lanes);
  }
  return bad;
}

uint32_t rs_truth_check(const rs_problem *p, const rs_preg *assign, uint32_t *nonmember) {
  uint32_t *base = rs_xcalloc(p->nvars + 1, sizeof *base);
  *nonmember = 0;
  for (uint32_t v = 0; v < p->nvars; v++) {
    rs_preg r = assign[p->vars[v].fvreg];
    if (!r.lanes) {
      free(base);
      return UINT32_MAX;
    }
    base[v] = r.unit;
    if (rs_target_member(p->tgt, p->vars[v].cls, r) != RS_MEMBER_OK) (*nonmember)++;
  }
  uint32_t bad = rs_problem_violations(p, base);
  free(base);
  return bad;
}

bool rs_problem_infeasible(const rs_problem *p) {
  const rs_target *t = p->tgt;
  uint32_t cap = 0;
  for (uint32_t k = 0; k < t->nfiles && k < RS_MAX_FILES; k++) {
    if (t->files[k].pressure && p->maxp[k] > p->budget[k]) return true;
    if (p->flex_files >> k & 1) cap += p->budget[k];
  }
  return p->flex_files && p->maxp_flex > cap;
}

enum rs_member rs_problem_member(const rs_problem *p, int cls, rs_preg r) {
  enum rs_member m = rs_target_member(p->tgt, cls, r);
  if (m != RS_MEMBER_OK) return m;
  int f = rs_target_file_of(p->tgt, r.unit);
  if (f < 0 || f >= RS_MAX_FILES || !p->tgt->files[f].asm_prefix) return m; /* specials */
  uint32_t top = r.unit - p->tgt->files[f].first + p->tgt->classes[cls].width;
  return top > p->budget[f] ? RS_MEMBER_FNBUDGET : m;
}

const char *rs_problem_budget_why(const rs_problem *p, char *buf, size_t n) {
  if (p->launch.wg_max)
    snprintf(buf, n, "launch bounds: %u work-items, at least %u waves per SIMD", p->launch.wg_max, p->launch_waves);
  else
    snprintf(buf, n, "launch bounds: at least %u waves per SIMD", p->launch_waves);
  return buf;
}

int rs_problem_find(const rs_problem *p, const char *name, size_t n) {
  for (uint32_t i = 0; i < p->nvars; i++)
    if (strlen(p->vars[i].name) == n && !memcmp(p->vars[i].name, name, n)) return (int)i;
  return -1;
}
