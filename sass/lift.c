/* lift.c - register webs of a parsed listing become the values to allocate.
 *
 * Per 32-bit register, reaching definitions connect every use with the defs that may have
 * produced it (a predicated def also "uses" the value it may leave in place); a union-find over
 * the def sites joins them, and a tuple operand (R4:R5 of IMAD.WIDE, a quad of HMMA) joins the
 * sites of its registers. Each class is one value: its registers in the listing are its truth
 * (rs_func.truth), exact by construction. A register read where no def reaches gets an entry
 * value of its own. The stack pointer R1 and the constant registers stay physical. */
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool rs_sass_allocatable(const rs_target *t, uint32_t u) {
  if (u >= t->nunits || (t->unit_flags[u] & RS_UNIT_RESERVED) || !(t->unit_flags[u] & RS_UNIT_TRACKED)) return false;
  int fi = rs_target_file_of(t, u);
  if (fi < 0 || !t->files[fi].asm_prefix) return false;
  if (!strcmp(t->files[fi].name, "r") && u == t->files[fi].first + 1) return false; /* R1: stack pointer */
  return true;
}


typedef struct {
  rs_func *f;
  uint32_t nsites;
  uint32_t *site_unit, *site_inst;
  uint32_t *op_site;    /* per operand: its first def site (defs) */
  uint32_t *unit_first; /* per unit: sites of the unit as a linked list */
  uint32_t *site_next;
  uint32_t words;
  uint32_t *par;        /* union-find over sites + one entry node per unit */
  uint32_t *op_node;    /* per register operand: a node of its value (its first unit's) */
} L;

static bool lifted(const L *l, const rs_operand *op) {
  return op->kind == RS_OP_PREG && op->lanes && rs_sass_allocatable(l->f->tgt, op->reg);
}

/* Apply the defs of one instruction to the reaching set. */
static void apply_defs(const L *l, const rs_inst *in, rs_word *cur) {
  const rs_func *f = l->f;
  for (uint32_t o = 0; o < in->nops; o++) {
    uint32_t oi = in->first_op + o;
    const rs_operand *op = &f->ops[oi];
    if (!(op->flags & RS_F_DEF) || !lifted(l, op)) continue;
    unsigned w = rs_lanes_units(op->lanes);
    for (unsigned k = 0; k < w; k++) {
      uint32_t site = l->op_site[oi] + k, u = op->reg + k;
      if (!(op->flags & RS_F_COND))
        for (uint32_t s = l->unit_first[u]; s != UINT32_MAX; s = l->site_next[s]) rs_bs_clr(cur, s);
      rs_bs_set(cur, site);
    }
  }
}

/* Join the reaching defs of unit u (or its entry node) with node x; returns a node of u. */
static uint32_t join_reaching(L *l, const rs_word *cur, uint32_t u, uint32_t x) {
  uint32_t first = UINT32_MAX;
  for (uint32_t s = l->unit_first[u]; s != UINT32_MAX; s = l->site_next[s])
    if (rs_bs_get(cur, s)) {
      if (first == UINT32_MAX) first = s;
      rs_uf_union(l->par, first, s);
    }
  if (first == UINT32_MAX) first = l->nsites + u; /* read with no def reaching: the entry value */
  if (x != UINT32_MAX) rs_uf_union(l->par, first, x);
  return first;
}

static void link_uses(L *l, const rs_inst *in, const rs_word *cur) {
  const rs_func *f = l->f;
  for (uint32_t o = 0; o < in->nops; o++) {
    uint32_t oi = in->first_op + o;
    const rs_operand *op = &f->ops[oi];
    if (!lifted(l, op)) continue;
    unsigned w = rs_lanes_units(op->lanes);
    if (op->flags & RS_F_DEF) {
      /* a tuple def is one value; a predicated def keeps the old value where it does not write */
      for (unsigned k = 0; k < w; k++) {
        uint32_t site = l->op_site[oi] + k;
        if (k) rs_uf_union(l->par, l->op_site[oi], site);
        if (op->flags & RS_F_COND) join_reaching(l, cur, op->reg + k, site);
      }
      l->op_node[oi] = l->op_site[oi];
    } else {
      uint32_t x = UINT32_MAX;
      for (unsigned k = 0; k < w; k++) {
        uint32_t n = join_reaching(l, cur, op->reg + k, x);
        if (k == 0) x = n;
      }
      l->op_node[oi] = x;
    }
  }
  /* one printed operand that is read and written (BMOV.32.CLEAR RZ, B0): one register, so the
   * value read and the value written are one value (write-back prints one name for both) */
  for (uint32_t o = 0; o < in->nops; o++)
    for (uint32_t q = o + 1; q < in->nops; q++) {
      const rs_operand *a = &f->ops[in->first_op + o], *b = &f->ops[in->first_op + q];
      if (a->text_len && a->text_off == b->text_off && a->text_len == b->text_len && lifted(l, a) && lifted(l, b) &&
          l->op_node[in->first_op + o] != UINT32_MAX && l->op_node[in->first_op + q] != UINT32_MAX)
        rs_uf_union(l->par, l->op_node[in->first_op + o], l->op_node[in->first_op + q]);
    }
}

static const char *class_name(const rs_target *t, uint32_t unit, unsigned width) {
  int fi = rs_target_file_of(t, unit);
  const char *fn = fi >= 0 ? t->files[fi].name : "";
  if (!strcmp(fn, "r")) return width == 1 ? "r32" : width == 2 ? "r64" : width == 3 ? "r96" : width == 4 ? "r128" : NULL;
  if (!strcmp(fn, "ur")) return width == 1 ? "ur32" : width == 2 ? "ur64" : width == 4 ? "ur128" : NULL;
  if (width != 1) return NULL;
  if (!strcmp(fn, "p")) return "p1";
  if (!strcmp(fn, "up")) return "up1";
  if (!strcmp(fn, "b")) return "b1";
  return NULL;
}

int rs_sass_lift(rs_func *f, rs_err *e) {
  const rs_target *t = f->tgt;
  L l = {0};
  l.f = f;
  l.op_site = rs_xmalloc(sizeof *l.op_site * (f->nops + 1));
  l.op_node = rs_xmalloc(sizeof *l.op_node * (f->nops + 1));
  for (uint32_t i = 0; i < f->nops; i++) l.op_site[i] = l.op_node[i] = UINT32_MAX;
  /* def sites: one per written register unit */
  uint32_t cap = 0;
  for (uint32_t ii = 0; ii < f->ninsts; ii++) {
    const rs_inst *in = &f->insts[ii];
    for (uint32_t o = 0; o < in->nops; o++) {
      uint32_t oi = in->first_op + o;
      const rs_operand *op = &f->ops[oi];
      if (!(op->flags & RS_F_DEF) || !lifted(&l, op)) continue;
      unsigned w = rs_lanes_units(op->lanes);
      l.op_site[oi] = l.nsites;
      for (unsigned k = 0; k < w; k++) {
        rs_grow((void **)&l.site_unit, sizeof *l.site_unit, &cap, l.nsites + 1);
        l.site_inst = rs_xrealloc(l.site_inst, sizeof *l.site_inst * cap);
        l.site_unit[l.nsites] = op->reg + k;
        l.site_inst[l.nsites] = ii;
        l.nsites++;
      }
    }
  }
  l.unit_first = rs_xmalloc(sizeof *l.unit_first * t->nunits);
  l.site_next = rs_xmalloc(sizeof *l.site_next * (l.nsites + 1));
  for (uint32_t u = 0; u < t->nunits; u++) l.unit_first[u] = UINT32_MAX;
  for (uint32_t s = l.nsites; s-- > 0;) {
    l.site_next[s] = l.unit_first[l.site_unit[s]];
    l.unit_first[l.site_unit[s]] = s;
  }
  uint32_t nnodes = l.nsites + t->nunits;
  l.par = rs_xmalloc(sizeof *l.par * nnodes);
  for (uint32_t i = 0; i < nnodes; i++) l.par[i] = i;
  /* reaching definitions over the blocks, to a fixed point */
  size_t W = RS_WORDS(l.nsites) + 1;
  rs_word *in = rs_xcalloc(W * (f->nblocks + 1), sizeof *in), *out = rs_xcalloc(W * (f->nblocks + 1), sizeof *out);
  rs_word *cur = rs_xcalloc(W, sizeof *cur);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t bi = 0; bi < f->nblocks; bi++) {
      const rs_block *b = &f->blocks[bi];
      rs_word *bin = in + W * bi;
      for (uint32_t p = 0; p < b->npreds; p++)
        for (size_t w = 0; w < W; w++) bin[w] |= out[W * b->preds[p] + w];
      memcpy(cur, bin, W * sizeof *cur);
      for (uint32_t k = 0; k < b->ninsts; k++) apply_defs(&l, &f->insts[b->first_inst + k], cur);
      if (memcmp(cur, out + W * bi, W * sizeof *cur)) {
        memcpy(out + W * bi, cur, W * sizeof *cur);
        changed = true;
      }
    }
  }
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    const rs_block *b = &f->blocks[bi];
    memcpy(cur, in + W * bi, W * sizeof *cur);
    for (uint32_t k = 0; k < b->ninsts; k++) {
      const rs_inst *ins = &f->insts[b->first_inst + k];
      link_uses(&l, ins, cur);
      apply_defs(&l, ins, cur);
    }
  }
  /* operands in unreachable code were never linked: their registers' nodes on their own */
  for (uint32_t oi = 0; oi < f->nops; oi++) {
    const rs_operand *op = &f->ops[oi];
    if (!lifted(&l, op) || l.op_node[oi] != UINT32_MAX) continue;
    unsigned w = rs_lanes_units(op->lanes);
    uint32_t x = (op->flags & RS_F_DEF) ? l.op_site[oi] : l.nsites + op->reg;
    for (unsigned k = 1; k < w; k++)
      rs_uf_union(l.par, x, (op->flags & RS_F_DEF) ? l.op_site[oi] + k : l.nsites + op->reg + k);
    l.op_node[oi] = x;
  }
  free(in);
  free(out);
  free(cur);
  /* extent of every class over the nodes operands touch */
  uint32_t *lo = rs_xmalloc(sizeof *lo * nnodes), *hi = rs_xmalloc(sizeof *hi * nnodes);
  uint32_t *first_addr = rs_xmalloc(sizeof *first_addr * nnodes), *vreg_of = rs_xmalloc(sizeof *vreg_of * nnodes);
  for (uint32_t i = 0; i < nnodes; i++) lo[i] = UINT32_MAX, hi[i] = 0, first_addr[i] = UINT32_MAX, vreg_of[i] = UINT32_MAX;
  for (uint32_t oi = 0; oi < f->nops; oi++) {
    const rs_operand *op = &f->ops[oi];
    if (l.op_node[oi] == UINT32_MAX) continue;
    uint32_t r = rs_uf_find(l.par, l.op_node[oi]);
    unsigned w = rs_lanes_units(op->lanes);
    if (op->reg < lo[r]) lo[r] = op->reg;
    if (op->reg + w - 1 > hi[r]) hi[r] = op->reg + w - 1;
  }
  for (uint32_t s = 0; s < l.nsites; s++) {
    uint32_t r = rs_uf_find(l.par, s), a = f->insts[l.site_inst[s]].addr;
    if (a < first_addr[r]) first_addr[r] = a;
  }
  /* a predicate web read or written through a PR mask (P2R, R2P) stays physical: write-back
   * cannot reprint the mask,
   * so its register is fixed (the Problem keeps it there) */
  uint8_t *keep = rs_xcalloc(nnodes + 1, 1);
  for (uint32_t oi = 0; oi < f->nops; oi++) {
    const rs_operand *op = &f->ops[oi];
    int fi = op->kind == RS_OP_PREG ? rs_target_file_of(t, op->reg) : -1;
    if (l.op_node[oi] != UINT32_MAX && (op->flags & RS_F_IMPLICIT) && fi >= 0 && !strcmp(t->files[fi].name, "p"))
      keep[rs_uf_find(l.par, l.op_node[oi])] = 1;
  }
  int rc = 0;
  for (uint32_t ii = 0; ii < f->ninsts && !rc; ii++) {
    const rs_inst *ins = &f->insts[ii];
    for (uint32_t o = 0; o < ins->nops && !rc; o++) {
      uint32_t oi = ins->first_op + o;
      rs_operand *op = &f->ops[oi];
      if (l.op_node[oi] == UINT32_MAX) continue;
      uint32_t r = rs_uf_find(l.par, l.op_node[oi]);
      if (keep[r]) continue;
      if (vreg_of[r] == UINT32_MAX) {
        unsigned w = hi[r] - lo[r] + 1;
        int fi = rs_target_file_of(t, lo[r]);
        /* three registers (TEX CUBE coordinates R4:R6) start at a multiple of 4 (r96: the
         * alignment the hardware needs) and cover exactly three: the next register is free for
         * another value (ptxas writes a pair into R6:R7 right after TXD reads R4:R6). A triple
         * anywhere else has no class (never seen). */
        bool misaligned = w == 3 && (fi < 0 || (lo[r] - t->files[fi].first) % 4 != 0);
        char a[24], b[24], nm[64];
        const char *cn = misaligned ? NULL : class_name(t, lo[r], w);
        if (!cn) {
          rc = rs_errf(e, f->path, ins->line, "%s: register web %s..%s spans %u registers (no register class)", f->name,
                       t->format_preg(t, (rs_preg){lo[r], 3}, a, sizeof a),
                       t->format_preg(t, (rs_preg){hi[r], 3}, b, sizeof b), w);
          break;
        }
        t->format_preg(t, (rs_preg){lo[r], 3}, a, sizeof a);
        if (first_addr[r] == UINT32_MAX) snprintf(nm, sizeof nm, "%s@in", a);
        else snprintf(nm, sizeof nm, "%s@%04x", a, (unsigned)first_addr[r]);
        rs_vreg v = {0};
        v.name = rs_xstrndup(nm, strlen(nm));
        v.cls = rs_target_class(t, cn, strlen(cn));
        v.width = (uint16_t)w;
        v.full = rs_lanes_full(w);
        v.line = ins->line;
        v.hint_preg_unit = -1;
        RS_PUSH(f->vregs, f->nvregs, f->capvregs, v);
        f->truth = rs_xrealloc(f->truth, sizeof *f->truth * f->capvregs);
        f->truth[f->nvregs - 1] = (rs_preg){lo[r], rs_lanes_full(w)};
        vreg_of[r] = f->nvregs - 1;
      }
      op->kind = RS_OP_VREG;
      op->lanes <<= 2 * (op->reg - lo[r]);
      op->reg = vreg_of[r];
    }
  }
  if (!rc) f->allocated = false;
  free(keep);
  free(lo);
  free(hi);
  free(first_addr);
  free(vreg_of);
  free(l.op_site);
  free(l.op_node);
  free(l.site_unit);
  free(l.site_inst);
  free(l.unit_first);
  free(l.site_next);
  free(l.par);
  return rc;
}
