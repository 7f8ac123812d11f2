/* joins.c - the conflicts that make any colouring of a SASS Problem write a listing that re-lifts
 * to the same values (regalloc --free converges on its first colouring, by construction).
 *
 * lift.c joins into one value every def that may reach a read of a register, or a predicated
 * def of it (which may leave the old value in place), and every read that no def reaches on
 * one register (the entry value). The Problem's own interference (analysis/problem.c) is
 * LLVM's: a value is live only where one of its defs reaches. A recolouring may then put value
 * A on the register of value B where B is not "live" by that rule but a path still leads from
 * A's def to a read of B without a def of B on it (B undefined on that path, or B's def
 * predicated); on the re-lift A's def reaches B's read and the two become one. Adding, at every
 * def of A, a conflict with every value live after it in the plain sense (backward liveness;
 * reads and predicated defs are uses, only unpredicated defs kill) forbids exactly that: a def
 * of A could reach B's read only along such a path. And values with a read no def of theirs
 * reaches at all (the lift gives it the register's entry value) must not share a register. The listing's
 * own colouring satisfies every added conflict (else its lift would have joined A and B), so
 * the Problem stays colourable with ptxas's registers.
 *
 * Owners: the units of every value (a pair is two), then every physical unit the lift could
 * have made a value but left physical (a predicate read through a PR mask): a conflict with a
 * value, a fixed-register exclusion with such a unit, as the Problem keeps them. */
#include "sass/sass.h"
#include "analysis/problem.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
  const rs_func *f;
  rs_problem *p;
  uint32_t *off;    /* per vreg: its first owner index */
  uint32_t nv;      /* owner indices of values: [0, nv); physical unit u: nv + u */
  uint32_t *owner;  /* per owner index: vreg (< nvregs) or nvregs + unit */
  uint32_t *var_of; /* vreg -> problem var, UINT32_MAX when the Problem lacks it */
  uint32_t words;
  /* hash set of conflicts and exclusions, existing and added (no duplicates) */
  uint64_t *keys;
  uint32_t cap, n, added;
} J;

/* The owner indices an operand touches: first index and unit mask (bit k: index first+k). */
static bool op_owner(const J *j, const rs_operand *op, uint32_t *first, uint32_t *units) {
  *units = 0;
  if (op->kind == RS_OP_VREG) {
    *first = j->off[op->reg];
    for (unsigned k = 0; k < 16; k++)
      if (op->lanes >> (2 * k) & 3) *units |= 1u << k;
    return *units != 0;
  }
  if (op->kind != RS_OP_PREG || !op->lanes || !rs_sass_allocatable(j->f->tgt, op->reg)) return false;
  *first = j->nv + op->reg;
  for (unsigned k = 0; k < 16; k++)
    if (op->lanes >> (2 * k) & 3) *units |= 1u << k;
  return *units != 0;
}

static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

/* Insert a key; true when it was new. Key 0 is never used (keys carry a tag bit). */
static bool put(J *j, uint64_t key) {
  if (2 * (j->n + 1) > j->cap) {
    uint32_t oc = j->cap, nc = oc ? oc * 2 : 4096;
    uint64_t *ok = j->keys;
    j->keys = rs_xcalloc(nc, sizeof *j->keys);
    j->cap = nc;
    j->n = 0;
    for (uint32_t i = 0; i < oc; i++)
      if (ok[i]) put(j, ok[i]);
    free(ok);
  }
  for (uint32_t h = (uint32_t)mix(key) & (j->cap - 1);; h = (h + 1) & (j->cap - 1)) {
    if (j->keys[h] == key) return false;
    if (!j->keys[h]) {
      j->keys[h] = key;
      j->n++;
      return true;
    }
  }
}

/* Lanes are at most 4 units here (r128, 8 bits); bit 63 tells conflicts from exclusions. */
static uint64_t conf_key(uint32_t a, rs_lanes la, uint32_t b, rs_lanes lb) {
  return 1ull << 63 | (uint64_t)(a & 0x7fffff) << 40 | (uint64_t)(b & 0xffffff) << 16 | (uint64_t)(la & 0xff) << 8 |
         (uint64_t)(lb & 0xff);
}
static uint64_t fix_key(uint32_t v, rs_lanes lv, uint32_t unit) {
  return 1ull << 61 | (uint64_t)(v & 0xffffff) << 32 | (uint64_t)(unit & 0xffff) << 8 | (uint64_t)(lv & 0xff);
}

static rs_lanes lanes_of(uint32_t units) {
  rs_lanes l = 0;
  for (unsigned k = 0; k < 16; k++)
    if (units >> k & 1) l |= (rs_lanes)3 << (2 * k);
  return l;
}

/* Owner x (units ux) and owner y (units uy) must not share a register. */
static void forbid(J *j, uint32_t x, uint32_t ux, uint32_t y, uint32_t uy, uint32_t inst) {
  uint32_t nvr = j->f->nvregs;
  if (x == y) return;
  if (x >= nvr && y >= nvr) return; /* two physical units: nothing to colour */
  if (x >= nvr || (y < nvr && j->var_of[y] == UINT32_MAX)) { /* the value side first */
    uint32_t t = x; x = y; y = t;
    t = ux; ux = uy; uy = t;
  }
  uint32_t vx = j->var_of[x];
  if (vx == UINT32_MAX) return; /* neither is coloured */
  rs_lanes lx = lanes_of(ux);
  if (y < nvr && j->var_of[y] != UINT32_MAX) {
    uint32_t vy = j->var_of[y];
    rs_lanes ly = lanes_of(uy);
    rs_conflict c = vx < vy ? (rs_conflict){vx, vy, lx, ly, inst} : (rs_conflict){vy, vx, ly, lx, inst};
    if (put(j, conf_key(c.a, c.la, c.b, c.lb))) {
      RS_PUSH(j->p->conf, j->p->nconf, j->p->capconf, c);
      j->added++;
    }
    return;
  }
  /* a physical register: the value kept in place (not in the Problem) or a unit left physical */
  rs_preg at = y < nvr ? j->f->truth[y] : (rs_preg){y - nvr, 3};
  for (unsigned k = 0; k < 16; k++) {
    if (!(uy >> k & 1)) continue;
    rs_preg u = {at.unit + k, 3};
    if (put(j, fix_key(vx, lx, u.unit))) {
      rs_fixed fx = {vx, lx, u, inst};
      RS_PUSH(j->p->fixed, j->p->nfixed, j->p->capfixed, fx);
      j->added++;
    }
  }
}

/* Every owner set in `live` (grouped per value), against owner x with units ux. */
static void against_live(J *j, const rs_word *live, uint32_t x, uint32_t ux, uint32_t inst) {
  uint32_t cur = UINT32_MAX, cu = 0, base = 0;
  for (uint32_t w = 0; w < j->words; w++)
    for (rs_word bits = live[w]; bits; bits &= bits - 1) {
      uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(bits), o = j->owner[i];
      if (o != cur) {
        if (cur != UINT32_MAX) forbid(j, x, ux, cur, cu, inst);
        cur = o;
        cu = 0;
        base = o < j->f->nvregs ? j->off[o] : i;
      }
      cu |= 1u << (i - base);
    }
  if (cur != UINT32_MAX) forbid(j, x, ux, cur, cu, inst);
}

/* Backward over one instruction: kill unpredicated defs, then reads and predicated defs live. */
static void step_back(const J *j, const rs_inst *in, rs_word *live) {
  const rs_func *f = j->f;
  uint32_t first, units;
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if ((op->flags & RS_F_DEF) && !(op->flags & RS_F_COND) && op_owner(j, op, &first, &units))
      for (unsigned k = 0; k < 16; k++)
        if (units >> k & 1) rs_bs_clr(live, first + k);
  }
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if ((!(op->flags & RS_F_DEF) || (op->flags & RS_F_COND)) && op_owner(j, op, &first, &units))
      for (unsigned k = 0; k < 16; k++)
        if (units >> k & 1) rs_bs_set(live, first + k);
  }
}

/* Owners of f's values and units, and the Problem's conflicts and exclusions already there. */
static void j_init(J *j, const rs_func *f, rs_problem *p) {
  const rs_target *t = f->tgt;
  memset(j, 0, sizeof *j);
  j->f = f;
  j->p = p;
  j->off = rs_xmalloc(sizeof *j->off * (f->nvregs + 1));
  for (uint32_t v = 0; v < f->nvregs; v++) j->off[v] = j->nv, j->nv += f->vregs[v].width ? f->vregs[v].width : 1;
  j->owner = rs_xmalloc(sizeof *j->owner * (j->nv + t->nunits + 1));
  for (uint32_t v = 0; v < f->nvregs; v++)
    for (uint32_t k = j->off[v]; k < (v + 1 < f->nvregs ? j->off[v + 1] : j->nv); k++) j->owner[k] = v;
  for (uint32_t u = 0; u < t->nunits; u++) j->owner[j->nv + u] = f->nvregs + u;
  j->var_of = rs_xmalloc(sizeof *j->var_of * (f->nvregs + 1));
  for (uint32_t v = 0; v < f->nvregs; v++) j->var_of[v] = UINT32_MAX;
  for (uint32_t v = 0; v < p->nvars; v++) j->var_of[p->vars[v].fvreg] = v;
  for (uint32_t i = 0; i < p->nconf; i++) put(j, conf_key(p->conf[i].a, p->conf[i].la, p->conf[i].b, p->conf[i].lb));
  for (uint32_t i = 0; i < p->nfixed; i++)
    if (p->fixed[i].p.lanes == 3) put(j, fix_key(p->fixed[i].v, p->fixed[i].lv, p->fixed[i].p.unit));
  j->words = (uint32_t)RS_WORDS(j->nv + t->nunits) + 1;
}

/* Frees j; returns how many conflicts and exclusions it added. */
static uint32_t j_free(J *j) {
  free(j->off);
  free(j->owner);
  free(j->var_of);
  free(j->keys);
  return j->added;
}

/* Reads no def of their value reaches (forward, as lift.c walks): the lift gives each of them
 * its register's entry value, so two such values on one register would become one. They must
 * not share a register; `scratch` (W * (nblocks + 1) words) is reused. */
static void entry_reads(J *j, rs_word *scratch) {
  const rs_func *f = j->f;
  uint32_t W = j->words, nb = f->nblocks, nowners = j->nv + f->tgt->nunits;
  rs_word *out = scratch, *cur = rs_xcalloc(W, sizeof *cur), *entry = rs_xcalloc(W, sizeof *entry);
  memset(out, 0, (size_t)W * (nb + 1) * sizeof *out);
  /* may-defined, to a fixed point; then one walk that collects the reads */
  for (int collect = 0; collect < 2; collect++)
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t bi = 0; bi < nb; bi++) {
        const rs_block *b = &f->blocks[bi];
        memset(cur, 0, W * sizeof *cur);
        for (uint32_t q = 0; q < b->npreds; q++)
          for (uint32_t w = 0; w < W; w++) cur[w] |= out[(size_t)W * b->preds[q] + w];
        for (uint32_t k = 0; k < b->ninsts; k++) {
          const rs_inst *in = &f->insts[b->first_inst + k];
          uint32_t first, units;
          for (uint32_t o = 0; collect && o < in->nops; o++) { /* reads, and predicated defs, first */
            const rs_operand *op = &f->ops[in->first_op + o];
            if ((!(op->flags & RS_F_DEF) || (op->flags & RS_F_COND)) && op_owner(j, op, &first, &units))
              for (unsigned u = 0; u < 16; u++)
                if (units >> u & 1 && !rs_bs_get(cur, first + u)) rs_bs_set(entry, first + u);
          }
          for (uint32_t o = 0; o < in->nops; o++) {
            const rs_operand *op = &f->ops[in->first_op + o];
            if ((op->flags & RS_F_DEF) && op_owner(j, op, &first, &units))
              for (unsigned u = 0; u < 16; u++)
                if (units >> u & 1) rs_bs_set(cur, first + u);
          }
        }
        if (!collect && memcmp(cur, out + (size_t)W * bi, W * sizeof *cur)) {
          memcpy(out + (size_t)W * bi, cur, W * sizeof *cur);
          changed = true;
        }
      }
    }
  for (uint32_t i = 0; i < nowners; i++) {
    if (!rs_bs_get(entry, i)) continue;
    uint32_t o = j->owner[i], bo = o < f->nvregs ? j->off[o] : i;
    memcpy(cur, entry, W * sizeof *cur);
    for (uint32_t q = bo; q < nowners && j->owner[q] == o; q++) rs_bs_clr(cur, q);
    against_live(j, cur, o, 1u << (i - bo), f->blocks[0].first_inst);
  }
  free(cur);
  free(entry);
}

uint32_t rs_sass_join_conflicts(const rs_func *f, rs_problem *p) {
  J j;
  j_init(&j, f, p);
  uint32_t W = j.words, nb = f->nblocks;
  rs_word *in = rs_xcalloc((size_t)W * (nb + 1), sizeof *in), *live = rs_xcalloc(W, sizeof *live);
  /* plain backward liveness to a fixed point */
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t bi = nb; bi-- > 0;) {
      const rs_block *b = &f->blocks[bi];
      memset(live, 0, W * sizeof *live);
      for (uint32_t s = 0; s < b->nsuccs; s++)
        for (uint32_t w = 0; w < W; w++) live[w] |= in[(size_t)W * b->succs[s] + w];
      for (uint32_t k = b->ninsts; k-- > 0;) step_back(&j, &f->insts[b->first_inst + k], live);
      if (memcmp(live, in + (size_t)W * bi, W * sizeof *live)) {
        memcpy(in + (size_t)W * bi, live, W * sizeof *live);
        changed = true;
      }
    }
  }
  for (uint32_t bi = 0; bi < nb; bi++) {
    const rs_block *b = &f->blocks[bi];
    memset(live, 0, W * sizeof *live);
    for (uint32_t s = 0; s < b->nsuccs; s++)
      for (uint32_t w = 0; w < W; w++) live[w] |= in[(size_t)W * b->succs[s] + w];
    for (uint32_t k = b->ninsts; k-- > 0;) {
      uint32_t ii = b->first_inst + k;
      const rs_inst *ins = &f->insts[ii];
      for (uint32_t o = 0; o < ins->nops; o++) {
        const rs_operand *op = &f->ops[ins->first_op + o];
        uint32_t first, units;
        if (!(op->flags & RS_F_DEF) || !op_owner(&j, op, &first, &units)) continue;
        if (first < j.nv) against_live(&j, live, j.owner[first], units, ii);
        else /* physical units: one owner each */
          for (unsigned u = 0; u < 16; u++)
            if (units >> u & 1) against_live(&j, live, j.owner[first + u], 1, ii);
      }
      step_back(&j, ins, live);
    }
  }
  entry_reads(&j, in);
  free(in);
  free(live);
  return j_free(&j);
}

/* ---- scoreboards: what a recolouring must keep for ptxas's control bits to stay right ---- */

/* A pair of operands cubin/scoreboard.c says must not share a register. */
static void scoreboard_pair(void *ctx, const rs_operand *a, const rs_operand *b, uint32_t inst) {
  J *j = ctx;
  uint32_t fa, ua, fb, ub;
  if (op_owner(j, a, &fa, &ua) && op_owner(j, b, &fb, &ub)) forbid(j, j->owner[fa], ua, j->owner[fb], ub, inst);
}

uint32_t rs_sass_pair_conflicts(const rs_func *f, rs_problem *p, rs_sass_pairs_fn pairs, void *src) {
  J j;
  j_init(&j, f, p);
  pairs(src, scoreboard_pair, &j); /* cubin/hazard.c's walk (through mcode/problem.c), one pair at a time */
  return j_free(&j);
}
