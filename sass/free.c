/* free.c - free recolouring of a SASS function: the smallest R budget model/color.c can colour
 * the whole Problem in (every file at once), and the write-back of the whole listing.
 *
 * A budget k is imposed by reserving R[k..254] for the colouring (a shallow copy of the Problem
 * with a longer reserved list), so the colouring engine, its alignment rules (pairs even, quads
 * at multiples of 4), fixed-register exclusions and copy hints are the ones builtin:chaitin uses.
 * The search is a binary search between the Problem's R pressure bound and the listing's own
 * count; at each budget several colouring orders (and seeded tie-breaks) are tried, since near
 * the bound the order decides. Deterministic: same input, same output. */
#include "sass/free.h"
#include "model/color.h"
#include <stdlib.h>
#include <string.h>

/* seeded retries per budget after the three orders with and without hints */
#define RS_FREE_SEEDS 8
/* budgets tried thoroughly below the binary search's answer */
#define RS_FREE_DEEPER 1

static int r_file(const rs_target *t) {
  for (uint32_t fi = 0; fi < t->nfiles; fi++)
    if (!strcmp(t->files[fi].name, "r")) return (int)fi;
  return -1;
}

unsigned rs_sass_r_count(const rs_func *f) {
  const rs_target *t = f->tgt;
  int fr = r_file(t);
  if (fr < 0) return 0;
  uint32_t first = t->files[fr].first, count = t->files[fr].count;
  int64_t top = -1;
  for (uint32_t o = 0; o < f->nops; o++) {
    const rs_operand *op = &f->ops[o];
    uint32_t u, w;
    if (op->kind == RS_OP_PREG && op->lanes) u = op->reg, w = rs_lanes_units(op->lanes);
    else if (op->kind == RS_OP_VREG && f->truth && op->reg < f->nvregs && f->truth[op->reg].lanes)
      u = f->truth[op->reg].unit, w = rs_lanes_units(f->truth[op->reg].lanes);
    else continue;
    if (u < first || u >= first + count) continue;
    for (uint32_t k = 0; k < w; k++)
      if (!(t->unit_flags[u + k] & RS_UNIT_RESERVED) && (int64_t)(u + k - first) > top) top = u + k - first;
  }
  return top < 0 ? 0 : (unsigned)top + RS_SASS_R_EXTRA;
}

static unsigned occ(const rs_target *t, unsigned rcount) {
  unsigned used[RS_MAX_FILES] = {0};
  int fr = r_file(t);
  if (fr >= 0 && fr < RS_MAX_FILES) used[fr] = rcount;
  return t->occupancy ? t->occupancy(t, used) : 0;
}

/* Interference the lifted Problem leaves out because it cuts liveness where no definition
 * reaches (analysis/liveness.c): with plain backward liveness, a value is live from a use back
 * to every point it can be reached from, defined or not. Two values are kept apart wherever a
 * def of one lies in the plain live range of the other, so no recolouring can make a definition
 * reach a read it did not reach before (what free_check.c's contributor-set equivalence demands;
 * a read of an undefined register would otherwise start seeing another web's value). The
 * listing's own allocation always satisfies these: a def reaching another web's read would have
 * joined the two webs in the lift. Returns the extra conflicts appended to a copy of p->conf. */
static int by_conf(const void *x, const void *y) {
  const rs_conflict *a = x, *b = y;
  if (a->a != b->a) return a->a < b->a ? -1 : 1;
  if (a->b != b->b) return a->b < b->b ? -1 : 1;
  if (a->la != b->la) return a->la < b->la ? -1 : 1;
  return a->lb < b->lb ? -1 : a->lb > b->lb;
}

static void plain_conflicts(const rs_func *f, const rs_problem *p, rs_problem *q) {
  uint32_t nv = f->nvregs, *pv = rs_xmalloc(sizeof *pv * (nv + 1)), *vbase = rs_xmalloc(sizeof *vbase * (nv + 1));
  for (uint32_t v = 0; v < nv; v++) pv[v] = UINT32_MAX;
  for (uint32_t i = 0; i < p->nvars; i++) pv[p->vars[i].fvreg] = i;
  uint32_t ns = 0;
  for (uint32_t v = 0; v < nv; v++) vbase[v] = ns, ns += f->vregs[v].width ? f->vregs[v].width : 1;
  uint32_t *owner = rs_xmalloc(sizeof *owner * (ns + 1));
  for (uint32_t v = 0; v < nv; v++)
    for (uint32_t k = 0; k < (f->vregs[v].width ? f->vregs[v].width : 1u); k++) owner[vbase[v] + k] = v;
  size_t W = RS_WORDS(ns) + 1;
  rs_word *in = rs_xcalloc(W * (f->nblocks + 1), sizeof *in), *cur = rs_xcalloc(W, sizeof *cur);
  rs_conflict *conf = rs_xmalloc(sizeof *conf * (p->nconf + 1));
  memcpy(conf, p->conf, sizeof *conf * p->nconf);
  uint32_t nconf = p->nconf, capconf = p->nconf + 1;
  rs_lanes *acc = rs_xcalloc(nv + 1, sizeof *acc);
  uint32_t *touched = rs_xmalloc(sizeof *touched * (nv + 1));
  for (int pass = 0; pass < 2; pass++) { /* 0: liveness to a fixed point; 1: collect conflicts */
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t b = f->nblocks; b-- > 0;) {
        const rs_block *blk = &f->blocks[b];
        memset(cur, 0, W * sizeof *cur);
        for (uint32_t s = 0; s < blk->nsuccs; s++)
          for (size_t w = 0; w < W; w++) cur[w] |= in[W * blk->succs[s] + w];
        for (uint32_t k = blk->ninsts; k-- > 0;) {
          const rs_inst *ins = &f->insts[blk->first_inst + k];
          for (uint32_t o = 0; o < ins->nops && pass; o++) { /* defs against everything live after */
            const rs_operand *op = &f->ops[ins->first_op + o];
            if (op->kind != RS_OP_VREG || !(op->flags & RS_F_DEF) || pv[op->reg] == UINT32_MAX) continue;
            uint32_t nt = 0;
            for (size_t w = 0; w < W; w++)
              for (rs_word x = cur[w]; x; x &= x - 1) {
                uint32_t sl = (uint32_t)(w * 64 + (uint32_t)__builtin_ctzll(x)), X = owner[sl];
                if (X == op->reg || pv[X] == UINT32_MAX) continue;
                if (!acc[X]) touched[nt++] = X;
                acc[X] |= (rs_lanes)3 << 2 * (sl - vbase[X]);
              }
            for (uint32_t o2 = 0; o2 < ins->nops; o2++) { /* two results of one instruction */
              const rs_operand *d2 = &f->ops[ins->first_op + o2];
              if (o2 == o || d2->kind != RS_OP_VREG || !(d2->flags & RS_F_DEF) || d2->reg == op->reg || pv[d2->reg] == UINT32_MAX) continue;
              if (!acc[d2->reg]) touched[nt++] = d2->reg;
              acc[d2->reg] |= d2->lanes;
            }
            for (uint32_t t = 0; t < nt; t++) {
              uint32_t X = touched[t], a = pv[X], bb = pv[op->reg];
              rs_conflict c = a < bb ? (rs_conflict){a, bb, acc[X], op->lanes, blk->first_inst + k}
                                     : (rs_conflict){bb, a, op->lanes, acc[X], blk->first_inst + k};
              RS_PUSH(conf, nconf, capconf, c);
              acc[X] = 0;
            }
          }
          for (uint32_t o = 0; o < ins->nops; o++) { /* kill */
            const rs_operand *op = &f->ops[ins->first_op + o];
            if (op->kind != RS_OP_VREG || !(op->flags & RS_F_DEF) || (op->flags & RS_F_COND)) continue;
            for (uint32_t u = 0; u < 32; u++)
              if (op->lanes >> 2 * u & 3) rs_bs_clr(cur, vbase[op->reg] + u);
          }
          for (uint32_t o = 0; o < ins->nops; o++) { /* reads, and predicated defs keep the old value */
            const rs_operand *op = &f->ops[ins->first_op + o];
            if (op->kind != RS_OP_VREG || ((op->flags & RS_F_DEF) && !(op->flags & RS_F_COND))) continue;
            for (uint32_t u = 0; u < 32; u++)
              if (op->lanes >> 2 * u & 3) rs_bs_set(cur, vbase[op->reg] + u);
          }
        }
        if (!pass && memcmp(cur, in + W * b, W * sizeof *cur)) {
          memcpy(in + W * b, cur, W * sizeof *cur);
          changed = true;
        }
      }
      if (pass) break;
    }
  }
  qsort(conf, nconf, sizeof *conf, by_conf);
  uint32_t m = 0;
  for (uint32_t i = 0; i < nconf; i++)
    if (!m || by_conf(&conf[m - 1], &conf[i])) conf[m++] = conf[i];
  q->conf = conf;
  q->nconf = m;
  q->capconf = capconf;
  free(pv);
  free(vbase);
  free(owner);
  free(in);
  free(cur);
  free(acc);
  free(touched);
}

/* Colour p with R limited to units [0, k) of the R file; out per Problem value. True when every
 * value got a register. Effort 0: one order (program order with copy hints); 1: three orders
 * (a failed budget costs every try, so the binary search uses few); 2: six orders and seeded
 * tie-breaks (the budget just below the search's answer). */
static bool colour_within(const rs_problem *p, int fr, unsigned k, int effort, rs_preg *out) {
  bool thorough = effort > 1;
  const rs_target *t = p->tgt;
  uint32_t first = t->files[fr].first, count = t->files[fr].count;
  rs_problem q = *p;
  q.reserved = rs_xmalloc(sizeof *q.reserved * (p->nreserved + count + 1));
  memcpy(q.reserved, p->reserved, sizeof *q.reserved * p->nreserved);
  q.nreserved = p->nreserved;
  for (uint32_t u = first + k; u < first + count; u++) q.reserved[q.nreserved++] = (rs_preg){u, rs_lanes_full(1)};
  rs_color *c = rs_color_new(&q);
  /* program order with copy hints first: on the fixtures it is the one that reaches the
   * smallest budgets most often */
  static const enum rs_color_order orders[] = {RS_ORDER_PROGRAM, RS_ORDER_BRIGGS, RS_ORDER_WIDE_FIRST};
  bool ok = false;
  for (int o = 0; o < (thorough ? 3 : effort ? 2 : 1) && !ok; o++)
    for (int h = 0; h < (thorough || (effort && o == 0) ? 2 : 1) && !ok; h++) ok = rs_color_run(c, orders[o], h == 0, NULL, 1, out) == 0;
  for (uint64_t s = 1; s <= (thorough ? RS_FREE_SEEDS : 0) && !ok; s++) {
    uint64_t rng = s * 0x9e3779b97f4a7c15ull;
    ok = rs_color_run(c, orders[s % 3], s % 2 == 0, &rng, 1, out) == 0;
  }
  if (ok) { /* the engine only places values where they fit; confirm against the Problem */
    uint32_t *base = rs_xmalloc(sizeof *base * (p->nvars + 1));
    for (uint32_t v = 0; v < p->nvars; v++) base[v] = out[v].unit;
    ok = rs_problem_violations(p, base) == 0;
    free(base);
    unsigned used[RS_MAX_FILES];
    rs_color_used(&q, out, used);
    if (used[fr] > k) ok = false;
  }
  rs_color_free(c);
  free(q.reserved);
  return ok;
}
int rs_sass_free_colour(const rs_func *f, const rs_problem *p, bool quick, rs_preg *assign, rs_sass_free_stats *st) {
  const rs_target *t = f->tgt;
  memset(st, 0, sizeof *st);
  for (uint32_t v = 0; v < f->nvregs; v++) assign[v] = f->truth ? f->truth[v] : (rs_preg){0, 0};
  st->r_before = st->r_after = rs_sass_r_count(f);
  st->occ_before = st->occ_after = occ(t, st->r_before);
  st->kept = true;
  int fr = r_file(t);
  if (fr < 0 || fr >= RS_MAX_FILES || !f->truth) {
    st->why_kept = "no R file or no listing registers";
    return 0;
  }
  /* a value with an operand the listing does not print (a hidden descriptor taken from a decoded
   * table) cannot be written back under another register: keep the listing's allocation */
  for (uint32_t o = 0; o < f->nops; o++)
    if (f->ops[o].kind == RS_OP_VREG && !f->ops[o].text_len) {
      st->why_kept = "a register operand is not printed in the listing (hidden descriptor)";
      return 0;
    }
  unsigned fixed_top = 0; /* fixed R registers (R1) bound the budget from below too */
  for (uint32_t i = 0; i < p->nfixed; i++)
    if (rs_target_file_of(t, p->fixed[i].p.unit) == fr) {
      unsigned top = p->fixed[i].p.unit - t->files[fr].first + rs_lanes_units(p->fixed[i].p.lanes);
      if (top > fixed_top) fixed_top = top;
    }
  rs_problem strict = *p; /* the Problem with the plain-liveness conflicts */
  plain_conflicts(f, p, &strict);
  uint32_t *tb = rs_xmalloc(sizeof *tb * (p->nvars + 1));
  for (uint32_t v = 0; v < p->nvars; v++) tb[v] = f->truth[p->vars[v].fvreg].unit;
  uint32_t tv = rs_problem_violations(&strict, tb);
  free(tb);
  if (tv) { /* cannot happen for a lifted listing (see plain_conflicts); never recolour then */
    st->why_kept = "the listing's own registers break plain-liveness interference";
    free(strict.conf);
    return 0;
  }
  p = &strict;
  unsigned lo = p->maxp[fr] > fixed_top ? p->maxp[fr] : fixed_top;
  unsigned own = st->r_before >= RS_SASS_R_EXTRA ? st->r_before - RS_SASS_R_EXTRA + 1 : 0; /* units used */
  st->r_bound = lo + RS_SASS_R_EXTRA - 1;
  if (lo >= own) {
    free(strict.conf);
    return 0;
  }
  unsigned bound = lo;
  rs_preg *try = rs_xcalloc(p->nvars + 1, sizeof *try), *best = rs_xcalloc(p->nvars + 1, sizeof *best);
  unsigned hi = own; /* `own` always colours: the listing's registers */
  bool found = false;
  while (lo < hi) {
    unsigned mid = lo + (hi - lo) / 2;
    st->tries++;
    if (colour_within(p, fr, mid, quick ? 0 : 1, try)) {
      memcpy(best, try, sizeof *best * p->nvars);
      found = true;
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  /* below the answer, near the bound the order decides: try harder, one register at a time */
  for (unsigned k = hi; !quick && k-- > bound && k + RS_FREE_DEEPER >= hi;) {
    st->tries++;
    if (!colour_within(p, fr, k, 2, try)) break;
    memcpy(best, try, sizeof *best * p->nvars);
    found = true;
  }
  if (found) {
    for (uint32_t v = 0; v < p->nvars; v++) assign[p->vars[v].fvreg] = best[v];
    unsigned used[RS_MAX_FILES];
    rs_color_used(p, best, used);
    st->r_after = used[fr] + RS_SASS_R_EXTRA - 1;
    st->occ_after = occ(t, st->r_after);
    st->kept = false;
  }
  free(try);
  free(best);
  free(strict.conf);
  return 0;
}

char *rs_sass_free_write(const rs_module *m, rs_preg *const *assign) {
  /* per source line: the re-printed instruction line, when it is one */
  uint32_t nlines = 1;
  for (size_t i = 0; i < m->len; i++) nlines += m->text[i] == '\n';
  const char **repl = rs_xcalloc(nlines + 2, sizeof *repl);
  size_t *rlen = rs_xcalloc(nlines + 2, sizeof *rlen);
  char **texts = rs_xcalloc(m->nfuncs + 1, sizeof *texts);
  for (uint32_t k = 0; k < m->nfuncs; k++) {
    const rs_func *f = m->funcs[k];
    rs_sass_write(f, assign[k], &texts[k], NULL, 0);
    const char *s = texts[k];
    for (uint32_t i = 0; i < f->ninsts && *s; i++) {
      const char *nl = strchr(s, '\n');
      size_t len = nl ? (size_t)(nl - s) : strlen(s);
      if (f->insts[i].line <= nlines) repl[f->insts[i].line] = s, rlen[f->insts[i].line] = len;
      s += len + (nl != NULL);
    }
  }
  char *out = rs_xmalloc(m->len * 2 + 64);
  size_t cap = m->len * 2 + 64, n = 0;
  const char *p = m->text, *end = m->text + m->len;
  for (uint32_t line = 1; p < end; line++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    const char *src = repl[line] ? repl[line] : p;
    size_t sl = repl[line] ? rlen[line] : len;
    while (n + sl + 2 > cap) out = rs_xrealloc(out, cap *= 2);
    memcpy(out + n, src, sl);
    n += sl;
    if (nl) out[n++] = '\n';
    p += len + (nl != NULL);
  }
  out[n] = 0;
  for (uint32_t k = 0; k < m->nfuncs; k++) free(texts[k]);
  free(texts);
  free(repl);
  free(rlen);
  return out;
}
