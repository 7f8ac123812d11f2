/* cmd_regalloc.c - `regsweep regalloc FILE.sass --pinned`: register allocation on machine code.
 *
 * Pinned (the oracle of seed 004): rebuild liveness and interference from the listing, colour
 * every register web with the listing's own register, check that this is a valid colouring of
 * our Problem (class membership, no conflict, no fixed-register clash), write the listing back
 * and compare it with the input register for register. Any error in the parser's widths, the
 * lift's webs, liveness or interference shows up as a failure naming function, address and
 * registers.
 *
 * Free: Chaitin-Briggs (model/chaitin.c, free mode) over every file at once (R, UR, P, UP, B),
 * minimising R; the recoloured listing is written and checked independently of the colouring:
 * re-lifted, every operand must belong to the same value as before (same def-use partition:
 * every use reads the same original definitions) and the assignment must pass the verifier's
 * checks against the original Problem. */
#include "cli/cli.h"
#include "analysis/problem.h"
#include "sass/sass.h"
#include "corpus/truth.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t rs_chaitin_allocate(const rs_problem *p, bool free_mode, rs_preg *out); /* model/chaitin.c */

void rs_usage_regalloc(void) {
  puts("usage: regsweep regalloc FILE.sass --pinned [-q] [--function NAME] [--target T]\n"
       "       regsweep regalloc FILE.sass --free [-o OUT.sass] [-q] [--target T]\n"
       "\n"
       "--pinned: rebuild liveness and interference, colour with the listing's own registers (they\n"
       "must be a valid colouring of the Problem), write the listing back and compare it with the\n"
       "input register for register. Prints per function 'identical' (or, with -q, nothing); a\n"
       "failure names the function, the instruction address and the expected and actual register.\n"
       "--free: recolour every function with Chaitin-Briggs over R, UR, P, UP and B together,\n"
       "minimising R; print 'R: N -> M registers, occupancy A -> B warps/SM' (N, M as ptxas counts:\n"
       "highest R + 3); write the recoloured listing to OUT; check it by re-lifting it (same values,\n"
       "every use reading the same definitions) and against the verifier's checks.\n"
       "Exit status: 0 identical / valid, 1 a failure, 2 bad input (file:line: message).");
}

enum { MAX_SHOWN = 20 };

/* The listing's own registers, per function vreg. */
static rs_preg *colour_pinned(const rs_func *f) {
  rs_preg *a = rs_xcalloc(f->nvregs + 1, sizeof *a);
  for (uint32_t v = 0; v < f->nvregs && f->truth; v++) a[v] = f->truth[v];
  return a;
}

/* Is the assignment a valid colouring of the Problem? Prints each failure (up to MAX_SHOWN). */
static uint32_t check_colouring(const rs_func *f, const rs_problem *p, const rs_preg *a, uint32_t *shown) {
  const rs_target *t = f->tgt;
  uint32_t bad = 0;
  char r1[32], r2[32];
  for (uint32_t v = 0; v < p->nvars; v++) {
    rs_preg r = a[p->vars[v].fvreg];
    enum rs_member m = r.lanes ? rs_target_member(t, p->vars[v].cls, r) : RS_MEMBER_WIDTH;
    if (m == RS_MEMBER_OK) continue;
    bad++;
    if ((*shown)++ < MAX_SHOWN)
      fprintf(stderr, "FAIL %s: value %s: %s is not a %s register (%s)\n", f->name, p->vars[v].name,
              t->format_preg(t, r, r1, sizeof r1), t->classes[p->vars[v].cls].name, rs_member_str(m));
  }
  for (uint32_t i = 0; i < p->nconf; i++) {
    const rs_conflict *c = &p->conf[i];
    rs_preg ra = a[p->vars[c->a].fvreg], rb = a[p->vars[c->b].fvreg];
    if (!rs_lanes_overlap(ra.unit, c->la, rb.unit, c->lb)) continue;
    bad++;
    if ((*shown)++ < MAX_SHOWN)
      fprintf(stderr, "FAIL %s /*%04x*/: %s (%s) and %s (%s) are live together on one register\n", f->name,
              (unsigned)f->insts[c->inst].addr, p->vars[c->a].name, t->format_preg(t, ra, r1, sizeof r1),
              p->vars[c->b].name, t->format_preg(t, rb, r2, sizeof r2));
  }
  for (uint32_t i = 0; i < p->nfixed; i++) {
    const rs_fixed *x = &p->fixed[i];
    rs_preg r = a[p->vars[x->v].fvreg];
    if (!rs_lanes_overlap(r.unit, x->lv, x->p.unit, x->p.lanes)) continue;
    bad++;
    if ((*shown)++ < MAX_SHOWN)
      fprintf(stderr, "FAIL %s /*%04x*/: %s (%s) overlaps fixed %s live there\n", f->name,
              (unsigned)f->insts[x->inst].addr, p->vars[x->v].name, t->format_preg(t, r, r1, sizeof r1),
              t->format_preg(t, x->p, r2, sizeof r2));
  }
  return bad;
}

/* Pinned run of one function; returns the number of failures, or UINT32_MAX on bad input. */
static uint32_t pinned(const rs_func *f, bool quiet, rs_err *e) {
  rs_problem *p = rs_problem_build(f, e);
  if (!p) return UINT32_MAX;
  rs_preg *a = colour_pinned(f);
  uint32_t shown = 0, bad = check_colouring(f, p, a, &shown);
  char *text = NULL;
  rs_sass_diff diff[MAX_SHOWN];
  uint32_t nd = rs_sass_write(f, a, &text, diff, MAX_SHOWN);
  for (uint32_t i = 0; i < nd && i < MAX_SHOWN; i++)
    fprintf(stderr, "FAIL %s /*%04x*/: expected %s, written %s\n", f->name, (unsigned)f->insts[diff[i].inst].addr,
            diff[i].expected, diff[i].actual);
  bad += nd;
  if (!bad && !quiet)
    printf("regalloc(pinned): %s: identical (%u values, %u instructions, %u interference edges)\n", f->name,
           p->nvars, f->ninsts, p->nconf);
  else if (bad)
    fprintf(stderr, "regalloc(pinned): %s: %u failure(s)\n", f->name, bad);
  free(text);
  free(a);
  rs_problem_free(p);
  return bad;
}

/* R registers used (highest + 1) by an assignment over the function's values, and fixed R1. */
static unsigned r_used(const rs_func *f, const rs_preg *a) {
  const rs_target *t = f->tgt;
  unsigned top = 2; /* R1, the stack pointer, is always there */
  for (uint32_t v = 0; v < f->nvregs; v++) {
    int fi = a[v].lanes ? rs_target_file_of(t, a[v].unit) : -1;
    if (fi < 0 || strcmp(t->files[fi].name, "r")) continue;
    unsigned hi = a[v].unit - t->files[fi].first + rs_lanes_units(a[v].lanes);
    if (hi > top) top = hi;
  }
  return top;
}

static unsigned occupancy_of(const rs_target *t, unsigned ptxas_regs) {
  unsigned used[RS_MAX_FILES] = {0};
  used[0] = ptxas_regs; /* file 0 is R on NVIDIA targets */
  return t->occupancy(t, used);
}

/* Same values before and after: operand by operand, a bijection between old and new values
 * with the same lanes. Returns the number of mismatching operands. */
static uint32_t same_partition(const rs_func *a, const rs_func *b, uint32_t *shown) {
  if (a->ninsts != b->ninsts || a->nops != b->nops) {
    fprintf(stderr, "FAIL %s: the written listing re-lifts to %u instructions/%u operands (was %u/%u)\n", a->name,
            b->ninsts, b->nops, a->ninsts, a->nops);
    return 1;
  }
  int32_t *fw = rs_xmalloc(sizeof *fw * (a->nvregs + 1)), *bw = rs_xmalloc(sizeof *bw * (b->nvregs + 1));
  for (uint32_t v = 0; v < a->nvregs; v++) fw[v] = -1;
  for (uint32_t v = 0; v < b->nvregs; v++) bw[v] = -1;
  uint32_t bad = 0;
  for (uint32_t i = 0; i < a->ninsts; i++) {
    const rs_inst *ia = &a->insts[i];
    for (uint32_t o = 0; o < ia->nops; o++) {
      const rs_operand *x = &a->ops[ia->first_op + o], *y = &b->ops[ia->first_op + o];
      bool ok = x->kind == y->kind && (x->kind != RS_OP_VREG || x->lanes == y->lanes);
      if (ok && x->kind == RS_OP_VREG) {
        if (fw[x->reg] < 0 && bw[y->reg] < 0) fw[x->reg] = (int32_t)y->reg, bw[y->reg] = (int32_t)x->reg;
        ok = fw[x->reg] == (int32_t)y->reg && bw[y->reg] == (int32_t)x->reg;
      }
      if (!ok) {
        bad++;
        if ((*shown)++ < MAX_SHOWN)
          fprintf(stderr, "FAIL %s /*%04x*/: operand %u reads a different definition after recolouring\n", a->name,
                  (unsigned)ia->addr, o);
      }
    }
  }
  free(fw);
  free(bw);
  return bad;
}

/* Free run of a module; returns failures, UINT32_MAX on bad input. */
static uint32_t free_mode(const rs_module *m, const char *out_path, bool quiet, rs_err *e) {
  rs_preg **as = rs_xcalloc(m->nfuncs + 1, sizeof *as);
  uint32_t fails = 0, shown = 0;
  for (uint32_t k = 0; k < m->nfuncs && fails != UINT32_MAX; k++) {
    const rs_func *f = m->funcs[k];
    rs_problem *p = rs_problem_build(f, e);
    if (!p) {
      fails = UINT32_MAX;
      break;
    }
    rs_preg *pv = rs_xcalloc(p->nvars + 1, sizeof *pv);
    double t0 = rs_now();
    uint32_t spill = rs_chaitin_allocate(p, true, pv);
    double dt = rs_now() - t0;
    as[k] = rs_xcalloc(f->nvregs + 1, sizeof *as[k]);
    for (uint32_t v = 0; v < f->nvregs; v++) as[k][v] = f->truth[v]; /* values the Problem lacks keep theirs */
    for (uint32_t v = 0; v < p->nvars; v++) as[k][p->vars[v].fvreg] = pv[v];
    if (spill) {
      fprintf(stderr, "FAIL %s: %u values could not be coloured (would need to spill)\n", f->name, spill);
      fails++;
    }
    /* the verifier's checks against the original Problem */
    uint32_t nonmember = 0, viol = rs_truth_check(p, as[k], &nonmember);
    if (viol || nonmember) {
      fprintf(stderr, "FAIL %s: recolouring violates %u constraints, %u registers outside their class\n", f->name,
              viol == UINT32_MAX ? 0 : viol, nonmember);
      fails++;
    }
    /* a value with an operand the listing does not print (a decoded descriptor) must stay put */
    for (uint32_t i = 0; i < f->nops; i++) {
      const rs_operand *op = &f->ops[i];
      if (op->kind == RS_OP_VREG && !op->text_len && as[k][op->reg].unit != f->truth[op->reg].unit) {
        fprintf(stderr, "FAIL %s: value %s moved, but one of its operands is not printed (hidden descriptor)\n",
                f->name, f->vregs[op->reg].name);
        fails++;
        break;
      }
    }
    unsigned before = r_used(f, f->truth) + 2, after = r_used(f, as[k]) + 2;
    if (!quiet)
      printf("regalloc(free): %s: R: %u -> %u registers, occupancy %u -> %u warps/SM (%u values, %.1f ms)\n", f->name,
             before, after, occupancy_of(f->tgt, before), occupancy_of(f->tgt, after), p->nvars, dt * 1e3);
    free(pv);
    rs_problem_free(p);
  }
  if (fails != UINT32_MAX) {
    char *text = rs_sass_write_module(m, as);
    /* independent check: lift the written listing again */
    rs_module *n = rs_xcalloc(1, sizeof *n);
    n->path = rs_xstrndup(out_path ? out_path : "(recoloured)", strlen(out_path ? out_path : "(recoloured)"));
    n->text = rs_xstrndup(text, strlen(text));
    n->len = strlen(text);
    n->kind = RS_SRC_SASS;
    n->tgt = m->tgt;
    rs_err ne = {{0}};
    if (rs_sass_parse(n, &ne) || n->nfuncs != m->nfuncs) {
      fprintf(stderr, "FAIL: the recoloured listing does not parse: %s\n", ne.msg);
      fails++;
    } else {
      for (uint32_t k = 0; k < m->nfuncs; k++) fails += same_partition(m->funcs[k], n->funcs[k], &shown);
    }
    rs_module_free(n);
    if (out_path && !fails) {
      FILE *fp = fopen(out_path, "w");
      if (!fp || fputs(text, fp) < 0 || fclose(fp)) {
        rs_errf(e, out_path, 0, "cannot write the recoloured listing");
        fails = UINT32_MAX;
      }
    }
    free(text);
  }
  for (uint32_t k = 0; k < m->nfuncs; k++) free(as[k]);
  free(as);
  return fails;
}

int rs_cmd_regalloc(int argc, char **argv) {
  const char *file = NULL, *function = NULL, *target = NULL, *out = NULL;
  bool pin = false, quiet = false, recolour = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--pinned")) pin = true;
    else if (!strcmp(a, "--free")) recolour = true;
    else if (!strcmp(a, "-o") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(a, "-q")) quiet = true;
    else if (!strcmp(a, "--function") && i + 1 < argc) function = argv[++i];
    else if (!strcmp(a, "--target") && i + 1 < argc) target = argv[++i];
    else if (a[0] != '-' && !file) file = a;
    else {
      fprintf(stderr, "regsweep regalloc: unexpected argument '%s'\n", a);
      return 2;
    }
  }
  if (!file || pin == recolour || (out && !recolour)) {
    rs_usage_regalloc();
    return 2;
  }
  rs_err e = {{0}};
  rs_module *m = rs_sass_load(file, target, NULL, &e);
  if (!m) {
    fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
    return 2;
  }
  uint32_t fails = 0, done = 0;
  int status = 0;
  if (recolour) {
    fails = free_mode(m, out, quiet, &e);
    if (fails == UINT32_MAX) fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
    rs_module_free(m);
    return fails == UINT32_MAX ? 2 : fails ? 1 : 0;
  }
  for (uint32_t k = 0; k < m->nfuncs; k++) {
    const rs_func *f = m->funcs[k];
    if (function && strcmp(f->name, function)) continue;
    done++;
    uint32_t b = pinned(f, quiet, &e);
    if (b == UINT32_MAX) {
      fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
      status = 2;
    } else {
      fails += b;
    }
  }
  if (function && !done) {
    fprintf(stderr, "regsweep regalloc: %s: no function '%s'\n", file, function);
    status = 2;
  }
  rs_module_free(m);
  return status ? status : fails ? 1 : 0;
}
