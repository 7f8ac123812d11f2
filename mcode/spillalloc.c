/* spillalloc.c - which spill slots get a register: free mode's colouring of the function stays,
 * each promotable slot value is placed in a register no value it conflicts with holds, under the
 * function's register count (never more registers, so never lower occupancy); a slot with no
 * such register stays in memory. The Problem is the rewritten function's own (its MOVs arm no
 * barrier, so its scoreboard conflicts differ), built again until the placement is valid for it.
 *
 * Placement order: most accesses first; a slot first tries the
 * registers of the values it is copied from or to (one register: the MOV becomes a NOP). */
#include "mcode/mcode.h"
#include "sass/spills.h"
#include "cubin/spillenc.h"
#include "sass/sass.h"
#include "analysis/problem.h"
#include "front/front.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_spill_result_free(rs_spill_result *r) {
  if (r->p) rs_problem_free(r->p);
  rs_module_free(r->mod);
  free(r->assign);
  free(r->rewritten);
  free(r->ctl);
  free(r->promote);
  free(r->noroom);
  memset(r, 0, sizeof *r);
}

typedef struct {
  uint32_t web, var, weight;
} cand;

static int by_weight(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->weight != y->weight) return x->weight > y->weight ? -1 : 1;
  return x->web < y->web ? -1 : x->web > y->web;
}

/* Conflicts per value: idx[off[v] .. off[v + 1]) index p->conf. */
typedef struct {
  uint32_t *off, *idx;
} adjacency;

static void adj_build(const rs_problem *p, adjacency *g) {
  g->off = rs_xcalloc(p->nvars + 2, sizeof *g->off);
  g->idx = rs_xmalloc(sizeof *g->idx * (2 * (size_t)p->nconf + 1));
  for (uint32_t i = 0; i < p->nconf; i++) g->off[p->conf[i].a + 1]++, g->off[p->conf[i].b + 1]++;
  for (uint32_t v = 0; v < p->nvars; v++) g->off[v + 1] += g->off[v];
  uint32_t *at = rs_xmalloc(sizeof *at * (p->nvars + 1));
  memcpy(at, g->off, sizeof *at * p->nvars);
  for (uint32_t i = 0; i < p->nconf; i++) g->idx[at[p->conf[i].a]++] = i, g->idx[at[p->conf[i].b]++] = i;
  free(at);
}

/* May value v sit at unit u (lanes of its own conflicts and fixed registers), with `skip` not
 * counted and `also` (if not UINT32_MAX) taken to sit at unit also_u? */
static bool free_at(const rs_problem *p, const adjacency *g, const rs_preg *a, uint32_t v, uint32_t u, uint32_t skip,
                    uint32_t also, uint32_t also_u) {
  if (rs_problem_member(p, p->vars[v].cls, (rs_preg){u, p->vars[v].full}) != RS_MEMBER_OK) return false;
  for (uint32_t k = g->off[v]; k < g->off[v + 1]; k++) {
    const rs_conflict *x = &p->conf[g->idx[k]];
    uint32_t o = x->a == v ? x->b : x->a;
    rs_lanes lv = x->a == v ? x->la : x->lb, lo = x->a == v ? x->lb : x->la;
    if (o == skip) continue;
    uint32_t ou;
    if (o == also) ou = also_u;
    else if (!a[p->vars[o].fvreg].lanes) continue;
    else ou = a[p->vars[o].fvreg].unit;
    if (rs_lanes_overlap(u, lv, ou, lo)) return false;
  }
  for (uint32_t i = 0; i < p->nfixed; i++)
    if (p->fixed[i].v == v && rs_lanes_overlap(u, p->fixed[i].lv, p->fixed[i].p.unit, p->fixed[i].p.lanes)) return false;
  return true;
}

/* No register is free for slot value v over its range: a start where a few values (at most 6,
 * each in the register over part of the range) block it, each moved to a register free over its
 * own range (one step of a Kempe chain); all of them or none. */
static int64_t evict(const rs_problem *p, const adjacency *g, rs_preg *a, uint32_t v, uint32_t first, uint32_t top) {
  unsigned nwd = p->vars[v].width, tries = 0;
  enum { MAXB = 6 };
  for (uint32_t u = first; u + nwd <= top && tries < 32; u++) {
    if (rs_problem_member(p, p->vars[v].cls, (rs_preg){u, p->vars[v].full}) != RS_MEMBER_OK) continue;
    uint32_t bl[MAXB + 1], nb = 0;
    for (uint32_t k = g->off[v]; k < g->off[v + 1] && nb <= MAXB; k++) {
      const rs_conflict *x = &p->conf[g->idx[k]];
      uint32_t o = x->a == v ? x->b : x->a;
      rs_lanes lv = x->a == v ? x->la : x->lb, lo = x->a == v ? x->lb : x->la;
      rs_preg r = a[p->vars[o].fvreg];
      bool seen = false;
      for (uint32_t q = 0; q < nb; q++) seen |= bl[q] == o;
      if (r.lanes && !seen && rs_lanes_overlap(u, lv, r.unit, lo)) bl[nb++] = o;
    }
    bool fixed_ok = true;
    for (uint32_t i = 0; i < p->nfixed && fixed_ok; i++)
      if (p->fixed[i].v == v && rs_lanes_overlap(u, p->fixed[i].lv, p->fixed[i].p.unit, p->fixed[i].p.lanes)) fixed_ok = false;
    if (!nb || nb > MAXB || !fixed_ok) continue;
    tries++;
    uint32_t was[MAXB], moved = 0;
    for (; moved < nb; moved++) {
      rs_preg *r = &a[p->vars[bl[moved]].fvreg];
      rs_lanes lanes = r->lanes;
      was[moved] = r->unit;
      r->lanes = 0; /* not in its own way */
      int64_t to = -1;
      for (uint32_t u2 = first; u2 + p->vars[bl[moved]].width <= top && to < 0; u2++)
        if (u2 != was[moved] && free_at(p, g, a, bl[moved], u2, UINT32_MAX, v, u)) to = u2;
      r->lanes = lanes;
      if (to < 0) break;
      r->unit = (uint32_t)to;
    }
    if (moved == nb) return (int64_t)u;
    while (moved-- > 0) a[p->vars[bl[moved]].fvreg].unit = was[moved];
  }
  return -1;
}

/* One placement on the Problem p of the rewritten g: returns the webs that found no register
 * (promote cleared for them) or that a violation names; 0 = valid. */
static uint32_t place(const rs_func *g, const rs_problem *p, const rs_spills *s, uint8_t *promote,
                      const int32_t *slot_vreg, rs_preg *a, unsigned limit) {
  const rs_target *t = g->tgt;
  int32_t *var_of = rs_xmalloc(sizeof *var_of * (g->nvregs + 1));
  for (uint32_t v = 0; v < g->nvregs; v++) var_of[v] = -1;
  for (uint32_t v = 0; v < p->nvars; v++) var_of[p->vars[v].fvreg] = (int32_t)v;
  int32_t *web_of_var = rs_xmalloc(sizeof *web_of_var * (p->nvars + 1));
  for (uint32_t v = 0; v < p->nvars; v++) web_of_var[v] = -1;
  cand *c = rs_xmalloc(sizeof *c * (s->nwebs + 1));
  uint32_t nc = 0;
  for (uint32_t w = 0; w < s->nwebs; w++) {
    if (slot_vreg[w] < 0 || var_of[slot_vreg[w]] < 0) continue;
    web_of_var[var_of[slot_vreg[w]]] = (int32_t)w;
    c[nc++] = (cand){w, (uint32_t)var_of[slot_vreg[w]], s->webs[w].nstores + s->webs[w].nloads};
    a[slot_vreg[w]] = (rs_preg){0, 0}; /* unplaced */
  }
  qsort(c, nc, sizeof *c, by_weight);
  int rfile = -1;
  for (uint32_t fi = 0; fi < t->nfiles; fi++)
    if (!strcmp(t->files[fi].name, "r")) rfile = (int)fi;
  uint32_t first = t->files[rfile].first, top = first + (limit > 2 ? limit - 2 : 0); /* R0..R(limit-3) */
  size_t W = RS_WORDS(t->nunits) + 1;
  rs_word *bad = rs_xmalloc(W * sizeof *bad);
  uint32_t failed = 0;
  adjacency adj = {0};
  if (nc) adj_build(p, &adj);
  for (uint32_t k = 0; k < nc; k++) {
    uint32_t v = c[k].var, nwd = s->webs[c[k].web].words;
    rs_lanes full = rs_lanes_full(nwd);
    memset(bad, 0, W * sizeof *bad); /* bad[u]: the slot may not start at unit u */
    for (uint32_t i = 0; i < p->nconf; i++) {
      const rs_conflict *x = &p->conf[i];
      if (x->a != v && x->b != v) continue;
      uint32_t o = x->a == v ? x->b : x->a;
      rs_lanes lo = x->a == v ? x->lb : x->la, ls = x->a == v ? x->la : x->lb;
      rs_preg r = a[p->vars[o].fvreg];
      if (!r.lanes) continue; /* another slot not placed yet */
      for (unsigned u = 0; u < 32; u++)
        if (lo >> (2 * u) & 3)
          for (unsigned q = 0; q < nwd; q++)
            if ((ls >> (2 * q) & 3) && r.unit + u >= q) rs_bs_set(bad, r.unit + u - q);
    }
    for (uint32_t i = 0; i < p->nfixed; i++)
      if (p->fixed[i].v == v)
        for (unsigned u = 0; u < 32; u++)
          if (p->fixed[i].p.lanes >> (2 * u) & 3)
            for (unsigned q = 0; q < nwd; q++)
              if (p->fixed[i].p.unit + u >= q) rs_bs_set(bad, p->fixed[i].p.unit + u - q);
#define FITS(u) ((u) >= first && (u) + nwd <= top && !rs_bs_get(bad, (u)) && \
                 rs_problem_member(p, p->vars[v].cls, (rs_preg){(u), full}) == RS_MEMBER_OK)
    int64_t pick = -1;
    if (nwd == 4) { /* no 128-bit copy: only where every access is a NOP (one register on all sides) */
      int64_t req = -1;
      for (uint32_t q = 0; q < s->nacc && req != -2; q++) {
        if (s->acc[q].web != (int32_t)c[k].web) continue;
        const rs_inst *in = &g->insts[s->acc[q].inst];
        const rs_operand *op = &g->ops[in->first_op + (s->acc[q].store ? 1 : 0)];
        unsigned lo = op->lanes ? (unsigned)__builtin_ctzll(op->lanes) / 2 : 0;
        int64_t u = op->kind == RS_OP_VREG && a[op->reg].lanes ? (int64_t)(a[op->reg].unit + lo)
                    : op->kind == RS_OP_PREG && rs_sass_allocatable(t, op->reg) ? (int64_t)op->reg : -2;
        if (u >= 0 && (u -= (int64_t)(s->acc[q].off - s->webs[c[k].web].off) / 4) < 0) u = -2; /* the slot's first register */
        req = req == -1 || req == u ? u : -2;
      }
      if (req >= 0 && FITS((uint32_t)req)) pick = req;
    }
    for (uint32_t i = 0; i < p->nhints && pick < 0 && nwd < 4; i++) { /* the copy's other side: a NOP */
      const rs_hint *h = &p->hints[i];
      bool isa = h->a == v, isb = h->b >= 0 && (uint32_t)h->b == v;
      if (!isa && !isb) continue;
      rs_preg r = h->b < 0 ? (rs_preg){h->unit, 3} : a[p->vars[isa ? (uint32_t)h->b : h->a].fvreg];
      if (!r.lanes) continue;
      /* h: a's unit + off = b's (or h->unit): the slot at the partner's unit, shifted by off */
      int64_t u = isa ? (int64_t)r.unit + h->off : (int64_t)r.unit - h->off;
      if (u >= 0 && FITS((uint32_t)u)) pick = u;
    }
    /* otherwise a hole first: a start whose aligned buddy (the other half of the pair or quad
     * it would leave) cannot start a slot of its size here, so wider slots keep their room */
    for (int pass = 0; pass < 2 && pick < 0 && nwd < 4; pass++)
      for (uint32_t u = first; u < top && pick < 0; u += nwd) {
        uint32_t buddy = ((u - first) ^ nwd) + first;
        if (FITS(u) && (pass || !(buddy + nwd <= top && !rs_bs_get(bad, buddy)))) pick = u;
      }
#undef FITS
    if (pick < 0 && nwd < 4 && !getenv("RS_SPILLS_NO_EVICT")) {
      pick = evict(p, &adj, a, v, first, top);
      if (pick >= 0 && getenv("RS_SPILLS_DEBUG")) fprintf(stderr, "evict: %s at %lld\n", p->vars[v].name, (long long)pick);
    }
    if (getenv("RS_SPILLS_DEBUG")) {
      uint32_t nfree = 0;
      for (uint32_t u = first; u < top; u++) nfree += !rs_bs_get(bad, u);
      fprintf(stderr, "slot %s (%u words): %u of %u starts free, pick %lld\n", p->vars[v].name, nwd, nfree, top - first,
              (long long)pick);
    }
    if (pick < 0) {
      promote[c[k].web] = 0;
      failed++;
      continue;
    }
    a[p->vars[v].fvreg] = (rs_preg){(uint32_t)pick, full};
  }
  /* the whole assignment against this Problem: a violation drops the slots it names */
  for (uint32_t i = 0; i < p->nconf && !failed; i++) {
    const rs_conflict *x = &p->conf[i];
    rs_preg ra = a[p->vars[x->a].fvreg], rb = a[p->vars[x->b].fvreg];
    if (!ra.lanes || !rb.lanes || !rs_lanes_overlap(ra.unit, x->la, rb.unit, x->lb)) continue;
    int32_t w = web_of_var[x->a] >= 0 ? web_of_var[x->a] : web_of_var[x->b];
    /* two of free mode's values, apart only since a rewritten MOV writes at once where the load
     * wrote behind an in-flight access of the in-order memory pipe: that slot stays */
    for (uint32_t q = 0; w < 0 && q < s->nacc; q++)
      if (s->acc[q].inst == x->inst && s->acc[q].web >= 0 && promote[s->acc[q].web]) w = s->acc[q].web;
    if (w < 0 && getenv("RS_SPILLS_DEBUG"))
      fprintf(stderr, "violation: %s and %s at /*%04x*/\n", p->vars[x->a].name, p->vars[x->b].name, g->insts[x->inst].addr);
    if (w < 0) { /* between two values free mode placed: not ours to fix */
      for (uint32_t q = 0; q < s->nwebs; q++) promote[q] = 0;
      failed = UINT32_MAX;
      break;
    }
    promote[w] = 0;
    failed++;
  }
  free(var_of);
  free(web_of_var);
  free(c);
  free(bad);
  free(adj.off);
  free(adj.idx);
  return failed;
}

/* model/chaitin.c: Chaitin-Briggs over a Problem (free: the cheapest of several orders). */
uint32_t rs_chaitin_allocate(const rs_problem *p, bool free_mode, rs_preg *out);

/* out's function rebuilt with the webs out->promote names rewritten: a fresh parse, the
 * rewritten instructions' control bits and waits, its own Problem. */
static int build(const rs_module *m, uint32_t k, const rs_spills *s, const uint64_t (*ctl)[2], unsigned sm,
                 rs_spill_result *out, int32_t *slot_vreg, uint32_t *any, rs_err *e) {
  if (out->p) rs_problem_free(out->p);
  rs_module_free(out->mod);
  free(out->assign);
  free(out->rewritten);
  free(out->ctl);
  out->p = NULL, out->mod = NULL, out->assign = NULL, out->rewritten = NULL, out->ctl = NULL, out->f = NULL;
  out->mod = rs_module_parse(m->path, rs_xstrndup(m->text, m->len), m->len, RS_SRC_SASS, m->tgt->name, e);
  if (!out->mod) return -1;
  if (out->mod->nfuncs != m->nfuncs) return rs_errf(e, m->path, 0, "the listing parses to another module");
  rs_func *g = out->f = out->mod->funcs[k];
  if (ctl) {
    out->ctl = rs_xmalloc(sizeof *out->ctl * (g->ninsts + 1));
    memcpy(out->ctl, ctl, sizeof *out->ctl * g->ninsts);
  }
  *any = 0;
  for (uint32_t w = 0; w < s->nwebs; w++) *any += out->promote[w];
  rs_spills_apply(g, s, out->promote, slot_vreg);
  out->rewritten = rs_xcalloc(g->ninsts + 1, 1);
  for (uint32_t a = 0; a < s->nacc; a++)
    if (s->acc[a].web >= 0 && out->promote[s->acc[a].web] && s->webs[s->acc[a].web].ok) {
      uint32_t i = s->acc[a].inst;
      out->rewritten[i] = 1;
      if (out->ctl)
        out->ctl[i][1] = rs_spill_ctl(sm, out->ctl[i][1],
                                      slot_vreg[s->acc[a].web] < 0 ? RS_SPILL_NOP
                                      : s->acc[a].words == 2 ? RS_SPILL_WIDE : RS_SPILL_MOV);
    }
  if (out->ctl) rs_spill_waits(g, out->ctl, out->rewritten);
  if (!(out->p = rs_mc_problem(g, (const uint64_t(*)[2])out->ctl, &out->nsb, e))) return -1;
  return 0;
}

static void count_left(const rs_spills *s, rs_spill_result *out) {
  out->stores_left = s->stores;
  out->loads_left = s->loads;
  out->promoted_webs = 0;
  for (uint32_t a = 0; a < s->nacc; a++)
    if (s->acc[a].web >= 0 && out->promote[s->acc[a].web]) {
      if (s->acc[a].store) out->stores_left--;
      else out->loads_left--;
    }
  for (uint32_t w = 0; w < s->nwebs; w++) out->promoted_webs += out->promote[w];
}

/* The other way to place them: colour the rewritten function whole, slot values with the rest,
 * under the count (Chaitin-Briggs on its Problem with the R budget at the count); a slot value
 * left uncoloured is dropped, or, where only other values are, the slot of fewest accesses, and
 * the function is rebuilt (a few rounds). Slot values no colouring can hold start dropped. Valid
 * by construction against the rewritten function's own Problem; the re-lift check follows. */
static int joint(const rs_module *m, uint32_t k, const rs_spills *s, const uint64_t (*ctl)[2], const uint8_t *noroom,
                 unsigned limit, unsigned sm, rs_spill_result *out, rs_err *e) {
  const rs_func *f = m->funcs[k];
  const rs_target *t = f->tgt;
  int rfile = -1;
  for (uint32_t fi = 0; fi < t->nfiles; fi++)
    if (!strcmp(t->files[fi].name, "r")) rfile = (int)fi;
  out->promote = rs_xcalloc(s->nwebs + 1, 1);
  for (uint32_t w = 0; w < s->nwebs; w++) out->promote[w] = s->webs[w].ok && !(noroom && noroom[w]);
  int32_t *slot_vreg = rs_xmalloc(sizeof *slot_vreg * (s->nwebs + 1));
  int rc = 0;
  for (int round = 0; rfile >= 0 && limit > 2; round++) {
    uint32_t any;
    if ((rc = build(m, k, s, ctl, sm, out, slot_vreg, &any, e))) break;
    rs_problem *p = out->p;
    if (p->budget[rfile] > limit - 2) p->budget[rfile] = limit - 2;
    rs_preg *c = rs_xcalloc(p->nvars + 1, sizeof *c);
    uint32_t bad = any ? rs_chaitin_allocate(p, true, c) : 0;
    rs_func *g = out->f;
    out->assign = rs_xcalloc(g->nvregs + 1, sizeof *out->assign);
    for (uint32_t v = 0; v < f->nvregs; v++) out->assign[v] = f->truth[v]; /* values the Problem lacks keep theirs */
    for (uint32_t v = 0; v < p->nvars; v++) out->assign[p->vars[v].fvreg] = c[v];
    if (!bad && any && rs_mc_r_count(g, out->assign) > limit) bad = 1; /* never more registers */
    if (!bad || !any || round >= 6) {
      if (bad) memset(out->promote, 0, s->nwebs); /* gave up: the greedy placement's answer stands */
      free(c);
      break;
    }
    /* drop the uncoloured slot values; else, of those in conflict with an uncoloured value, the
     * lightest. Where Chaitin-Briggs leaves more than 8 other values uncoloured it is far from
     * the count here (HD=128 at 128: ours needs 132 R): given up */
    uint32_t dropped = 0, others = 0;
    int64_t light = -1;
    int32_t *web_of_var = rs_xmalloc(sizeof *web_of_var * (p->nvars + 1));
    for (uint32_t q = 0; q < p->nvars; q++) web_of_var[q] = -1;
    for (uint32_t w = 0; w < s->nwebs; w++)
      if (out->promote[w] && slot_vreg[w] >= 0)
        for (uint32_t q = 0; q < p->nvars; q++)
          if (p->vars[q].fvreg == (uint32_t)slot_vreg[w]) web_of_var[q] = (int32_t)w;
    for (uint32_t q = 0; q < p->nvars; q++)
      if (web_of_var[q] >= 0 && !c[q].lanes && out->promote[web_of_var[q]]) out->promote[web_of_var[q]] = 0, dropped++;
      else others += !c[q].lanes;
    for (uint32_t i = 0; i < p->nconf && !dropped; i++) {
      const rs_conflict *x = &p->conf[i];
      int32_t w = web_of_var[x->a] >= 0 && !c[x->b].lanes ? web_of_var[x->a]
                  : web_of_var[x->b] >= 0 && !c[x->a].lanes ? web_of_var[x->b] : -1;
      if (w >= 0 && out->promote[w] &&
          (light < 0 || s->webs[w].nstores + s->webs[w].nloads < s->webs[light].nstores + s->webs[light].nloads))
        light = w;
    }
    if (others > 8) light = -1, dropped = 0;
    free(web_of_var);
    if (!dropped && light >= 0) out->promote[light] = 0;
    if (!dropped && light < 0) memset(out->promote, 0, s->nwebs);
    free(c);
  }
  free(slot_vreg);
  if (!rc) count_left(s, out);
  return rc;
}

int rs_spills_promote(const rs_module *m, uint32_t k, const rs_spills *s, const uint64_t (*ctl)[2],
                      const rs_preg *base, unsigned limit, unsigned sm, rs_spill_result *out, rs_err *e) {
  memset(out, 0, sizeof *out);
  const rs_func *f = m->funcs[k];
  out->promote = rs_xcalloc(s->nwebs + 1, 1);
  for (uint32_t w = 0; w < s->nwebs && getenv("RS_SPILLS_DEBUG"); w++)
    if (!s->webs[w].ok) fprintf(stderr, "web [R1+0x%x] (%u stores, %u loads): %s\n", s->webs[w].off, s->webs[w].nstores,
                                s->webs[w].nloads, s->webs[w].why);
  for (uint32_t w = 0; w < s->nwebs; w++) out->promote[w] = s->webs[w].ok;
  int32_t *slot_vreg = rs_xmalloc(sizeof *slot_vreg * (s->nwebs + 1));
  for (int round = 0;; round++) {
    uint32_t any;
    if (build(m, k, s, ctl, sm, out, slot_vreg, &any, e)) {
      free(slot_vreg);
      return -1;
    }
    if (round == 0) { /* every promotable slot applied: which of them no colouring can hold */
      out->noroom = rs_xcalloc(s->nwebs + 1, 1);
      rs_err e2 = {0};
      out->noroom_webs = rs_spills_noroom(out->f, s, slot_vreg, limit, out->noroom, &e2);
    }
    out->assign = rs_xcalloc(out->f->nvregs + 1, sizeof *out->assign);
    memcpy(out->assign, base, sizeof *base * f->nvregs);
    uint32_t failed = any ? place(out->f, out->p, s, out->promote, slot_vreg, out->assign, limit) : 0;
    if (!failed) break;
    if (failed == UINT32_MAX || round >= 6) /* give up: the next round promotes nothing */
      for (uint32_t w = 0; w < s->nwebs; w++) out->promote[w] = 0;
  }
  free(slot_vreg);
  count_left(s, out);
  /* slot values kept that some colouring could hold: try the whole function coloured with them */
  uint32_t room = 0;
  for (uint32_t w = 0; w < s->nwebs; w++) room += s->webs[w].ok && !out->promote[w] && !out->noroom[w] && s->webs[w].nloads;
  if (room && !getenv("RS_SPILLS_NO_JOINT")) {
    rs_spill_result j;
    memset(&j, 0, sizeof j);
    if (joint(m, k, s, ctl, out->noroom, limit, sm, &j, e)) {
      rs_spill_result_free(&j);
      return -1;
    }
    if (getenv("RS_SPILLS_DEBUG"))
      fprintf(stderr, "joint colouring: %u webs, %u/%u left (greedy: %u webs, %u/%u left)\n", j.promoted_webs,
              j.stores_left, j.loads_left, out->promoted_webs, out->stores_left, out->loads_left);
    if (j.promoted_webs && j.stores_left + j.loads_left < out->stores_left + out->loads_left) {
      j.noroom = out->noroom, j.noroom_webs = out->noroom_webs;
      out->noroom = NULL;
      rs_spill_result_free(out);
      *out = j;
    } else {
      rs_spill_result_free(&j);
    }
  }
  return 0;
}
