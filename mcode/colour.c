/* colour.c - the colourings of machine code: pinned (the oracle of seed 004: the listing's own
 * registers must colour our Problem and write back register for register) and free
 * (Chaitin-Briggs over R, UR, P, UP and B at once, minimising R, never worse than ptxas's own
 * colouring lowered the same way), the latter handed to check.c's independent check.
 *
 * Pinned: any error in the parser's widths, the lift's webs, liveness or interference shows up
 * as a failure naming function, address and registers. With the cubin's control bits the
 * listing's colouring must also satisfy the free Problem's added conflicts (joins and
 * scoreboards): ptxas's colouring is the floor free mode starts from.
 *
 * Free: one colouring per function: the Problem carries the conflicts that keep values apart on
 * the re-lift (sass/joins.c), so the written listing is checked, never re-coloured. Ours and
 * ptxas's own colouring are each lowered value by value; where ours is the dearer, ptxas's
 * (lowered) is the result (the floor), and the function's line says so. */
#include "mcode/mcode.h"
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* model/chaitin.c: free mode from ptxas's colouring (never worse than it) */
uint32_t rs_chaitin_allocate_from(const rs_problem *p, const rs_preg *start, rs_preg *mine, rs_preg *out,
                                  bool *from_start);

/* Is the assignment a valid colouring of the Problem? Names each failure (up to RS_MC_SHOWN). */
static uint32_t check_colouring(const rs_func *f, const rs_problem *p, const rs_preg *a, uint32_t *shown,
                                rs_mc_msgs *out) {
  const rs_target *t = f->tgt;
  uint32_t bad = 0;
  char r1[32], r2[32];
  for (uint32_t v = 0; v < p->nvars; v++) {
    rs_preg r = a[p->vars[v].fvreg];
    enum rs_member m = r.lanes ? rs_target_member(t, p->vars[v].cls, r) : RS_MEMBER_WIDTH;
    if (m == RS_MEMBER_OK) continue;
    bad++;
    if ((*shown)++ < RS_MC_SHOWN)
      rs_mc_say(out, "FAIL %s: value %s: %s is not a %s register (%s)", f->name, p->vars[v].name,
                t->format_preg(t, r, r1, sizeof r1), t->classes[p->vars[v].cls].name, rs_member_str(m));
  }
  for (uint32_t i = 0; i < p->nconf; i++) {
    const rs_conflict *c = &p->conf[i];
    rs_preg ra = a[p->vars[c->a].fvreg], rb = a[p->vars[c->b].fvreg];
    if (!rs_lanes_overlap(ra.unit, c->la, rb.unit, c->lb)) continue;
    bad++;
    if ((*shown)++ < RS_MC_SHOWN)
      rs_mc_say(out, "FAIL %s /*%04x*/: %s (%s) and %s (%s) are live together on one register", f->name,
                (unsigned)f->insts[c->inst].addr, p->vars[c->a].name, t->format_preg(t, ra, r1, sizeof r1),
                p->vars[c->b].name, t->format_preg(t, rb, r2, sizeof r2));
  }
  for (uint32_t i = 0; i < p->nfixed; i++) {
    const rs_fixed *x = &p->fixed[i];
    rs_preg r = a[p->vars[x->v].fvreg];
    if (!rs_lanes_overlap(r.unit, x->lv, x->p.unit, x->p.lanes)) continue;
    bad++;
    if ((*shown)++ < RS_MC_SHOWN)
      rs_mc_say(out, "FAIL %s /*%04x*/: %s (%s) overlaps fixed %s live there", f->name,
                (unsigned)f->insts[x->inst].addr, p->vars[x->v].name, t->format_preg(t, r, r1, sizeof r1),
                t->format_preg(t, x->p, r2, sizeof r2));
  }
  return bad;
}

uint32_t rs_mc_pinned(const rs_mc *mc, uint32_t k, rs_mc_pin *r, rs_err *e) {
  const rs_func *f = mc->m->funcs[k];
  memset(r, 0, sizeof *r);
  r->name = f->name;
  uint64_t (*ctl)[2] = NULL;
  if (rs_mc_ctl(mc, f, &ctl, e)) return r->fails = UINT32_MAX;
  /* without control bits, the plain Problem (its interference edges counted on the line) */
  rs_problem *p = ctl ? rs_mc_problem(f, (const uint64_t(*)[2])ctl, NULL, e) : rs_problem_build(f, e);
  free(ctl);
  if (!p) return r->fails = UINT32_MAX;
  rs_preg *a = rs_xcalloc(f->nvregs + 1, sizeof *a); /* the listing's own registers */
  for (uint32_t v = 0; v < f->nvregs && f->truth; v++) a[v] = f->truth[v];
  uint32_t shown = 0, bad = check_colouring(f, p, a, &shown, &r->msgs);
  char *text = NULL;
  rs_sass_diff diff[RS_MC_SHOWN];
  uint32_t nd = rs_sass_write(f, a, &text, diff, RS_MC_SHOWN);
  for (uint32_t i = 0; i < nd && i < RS_MC_SHOWN; i++)
    rs_mc_say(&r->msgs, "FAIL %s /*%04x*/: expected %s, written %s", f->name, (unsigned)f->insts[diff[i].inst].addr,
              diff[i].expected, diff[i].actual);
  r->fails = bad + nd;
  r->nvars = p->nvars, r->ninsts = f->ninsts, r->nconf = p->nconf;
  free(text);
  free(a);
  rs_problem_free(p);
  return r->fails;
}

void rs_mc_pin_free(rs_mc_pin *r) { rs_mc_msgs_free(&r->msgs); }

/* R registers used (highest + 1) by an assignment over the function's values, and fixed R1: the
 * registers operands touch (a TEX coordinate triple R4:R6 is a quad whose R7 no operand uses). */
static unsigned r_used(const rs_func *f, const rs_preg *a) {
  const rs_target *t = f->tgt;
  unsigned top = 2; /* R1, the stack pointer, is always there */
  for (uint32_t o = 0; o < f->nops; o++) {
    const rs_operand *op = &f->ops[o];
    if (op->kind != RS_OP_VREG || !op->lanes || !a[op->reg].lanes) continue;
    int fi = rs_target_file_of(t, a[op->reg].unit);
    if (fi < 0 || strcmp(t->files[fi].name, "r")) continue;
    unsigned hi = a[op->reg].unit - t->files[fi].first + (unsigned)(63 - __builtin_clzll(op->lanes)) / 2 + 1;
    if (hi > top) top = hi;
  }
  return top;
}

unsigned rs_mc_r_count(const rs_func *f, const rs_preg *a) { return r_used(f, a) + 2; }

unsigned rs_mc_occupancy(const rs_target *t, unsigned ptxas_regs) {
  unsigned used[RS_MAX_FILES] = {0};
  used[0] = ptxas_regs; /* file 0 is R on NVIDIA targets */
  return t->occupancy(t, used);
}

/* Does the function call an external function (CALL.ABS.NOINC Rx, e.g. vprintf)? */
static bool calls_extern(const rs_func *f) {
  for (uint32_t i = 0; i < f->ninsts; i++)
    if (!strncmp(rs_func_opcode(f, &f->insts[i]), "CALL.ABS.", 9)) return true;
  return false;
}

uint32_t rs_mc_free(const rs_mc *mc, rs_mc_recolour *r, rs_err *e) {
  const rs_module *m = mc->m;
  uint32_t nf = m->nfuncs;
  memset(r, 0, sizeof *r);
  r->nfuncs = nf;
  r->fn = rs_xcalloc(nf + 1, sizeof *r->fn);
  r->as = rs_xcalloc(nf + 1, sizeof *r->as);
  r->scoreboards = rs_mc_has_cubin(mc) && mc->scoreboards;
  rs_problem **ps = rs_xcalloc(nf + 1, sizeof *ps);
  for (uint32_t k = 0; k < nf && r->fails != UINT32_MAX; k++) {
    const rs_func *f = m->funcs[k];
    rs_mc_fn *fn = &r->fn[k];
    fn->name = f->name;
    /* the plain Problem first: a function it refuses is named before its control bits are read */
    if (!(ps[k] = rs_problem_build(f, e))) {
      r->fails = UINT32_MAX;
      break;
    }
    r->as[k] = rs_xcalloc(f->nvregs + 1, sizeof *r->as[k]);
    rs_problem *p = ps[k];
    double t0 = rs_now();
    uint64_t (*ctl)[2] = NULL;
    if (rs_mc_ctl(mc, f, &ctl, e)) {
      r->fails = UINT32_MAX;
      break;
    }
    rs_sass_join_conflicts(f, p);
    if (ctl) fn->nsb = rs_sass_scoreboard_conflicts(f, (const uint64_t(*)[2])ctl, p); /* ptxas's control bits stay */
    free(ctl);
    /* ptxas's colouring is a valid one of this Problem (tests/test_sass_real.c): the floor */
    rs_preg *start = rs_xcalloc(p->nvars + 1, sizeof *start), *mine = rs_xcalloc(p->nvars + 1, sizeof *mine),
            *best = rs_xcalloc(p->nvars + 1, sizeof *best);
    for (uint32_t v = 0; v < p->nvars; v++) start[v] = f->truth[p->vars[v].fvreg];
    fn->uncoloured = rs_chaitin_allocate_from(p, start, mine, best, &fn->floored);
    fn->extern_call = calls_extern(f);
    if (fn->extern_call) { /* the callee's ABI (arguments, clobbers) is not in the Problem: ptxas's */
      memcpy(best, start, sizeof *best * p->nvars);
      fn->floored = true;
    }
    fn->secs = rs_now() - t0;
    const char *brk = getenv("RS_TEST_FREE_BREAK");
    if (brk && !strcmp(brk, f->name)) /* test facility: a colouring the check must refuse */
      for (uint32_t i = 0; i < p->nconf; i++) {
        const rs_conflict *c = &p->conf[i];
        if (p->vars[c->a].cls != p->vars[c->b].cls || c->la != c->lb) continue;
        best[c->b] = best[c->a];
        break;
      }
    rs_preg *a = r->as[k];
    for (uint32_t v = 0; v < f->nvregs; v++) a[v] = f->truth[v]; /* values the Problem lacks keep theirs */
    for (uint32_t v = 0; v < p->nvars; v++) a[p->vars[v].fvreg] = mine[v];
    fn->ours = rs_mc_r_count(f, a);
    for (uint32_t v = 0; v < p->nvars; v++) a[p->vars[v].fvreg] = best[v];
    fn->nvars = p->nvars;
    fn->before = rs_mc_r_count(f, f->truth);
    fn->after = rs_mc_r_count(f, a);
    fn->occ_before = rs_mc_occupancy(f->tgt, fn->before);
    fn->occ_after = rs_mc_occupancy(f->tgt, fn->after);
    /* spill slots (spills.c): the other colouring within ptxas's count leaves other registers free
     * for them: ours when ptxas's was kept (and ours fits), else ptxas's own */
    rs_preg *alt = NULL;
    if (!mc->no_spills && !fn->extern_call && (!fn->floored || !fn->uncoloured)) {
      alt = rs_xcalloc(f->nvregs + 1, sizeof *alt);
      for (uint32_t v = 0; v < f->nvregs; v++) alt[v] = f->truth[v];
      if (fn->floored)
        for (uint32_t v = 0; v < p->nvars; v++) alt[p->vars[v].fvreg] = mine[v];
      if (rs_mc_r_count(f, alt) > fn->before) {
        free(alt);
        alt = NULL;
      }
    }
    free(start);
    free(mine);
    free(best);
    if (!mc->no_spills && rs_mc_spills_promote(mc, k, alt, &ps[k], r, e)) r->fails = UINT32_MAX;
    if (!mc->no_spills) fn->secs = rs_now() - t0;
    free(alt);
  }
  if (r->fails != UINT32_MAX) rs_mc_write_check(mc, ps, r);
  for (uint32_t k = 0; k < nf; k++)
    if (ps[k]) rs_problem_free(ps[k]);
  free(ps);
  return r->fails;
}

void rs_mc_recolour_free(rs_mc_recolour *r) {
  for (uint32_t k = 0; k < r->nfuncs; k++) {
    free(r->as ? r->as[k] : NULL);
    if (r->fn) rs_mc_msgs_free(&r->fn[k].msgs);
  }
  free(r->as);
  free(r->fn);
  rs_mc_msgs_free(&r->msgs);
  free(r->text);
  rs_module_free(r->relift);
  rs_mc_spills_free(r->spills);
  memset(r, 0, sizeof *r);
}
