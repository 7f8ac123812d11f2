/* cmd_regalloc.c - `regsweep regalloc FILE.sass --pinned`: register allocation on machine code.
 *
 * Pinned (the oracle of seed 004): rebuild liveness and interference from the listing, colour
 * every register web with the listing's own register, check that this is a valid colouring of
 * our Problem (class membership, no conflict, no fixed-register clash), write the listing back
 * and compare it with the input register for register. Any error in the parser's widths, the
 * lift's webs, liveness or interference shows up as a failure naming function, address and
 * registers. Free recolouring (--free) is a later mode: it plugs in as another `assign` source
 * (see colour_pinned) followed by the same write-back and an independent re-lift check. */
#include "cli/cli.h"
#include "analysis/problem.h"
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_usage_regalloc(void) {
  puts("usage: regsweep regalloc FILE.sass --pinned [-q] [--function NAME] [--target T]\n"
       "\n"
       "--pinned: rebuild liveness and interference, colour with the listing's own registers (they\n"
       "must be a valid colouring of the Problem), write the listing back and compare it with the\n"
       "input register for register. Prints per function 'identical' (or, with -q, nothing); a\n"
       "failure names the function, the instruction address and the expected and actual register.\n"
       "Exit status: 0 identical, 1 a failure, 2 bad input (file:line: message).");
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

int rs_cmd_regalloc(int argc, char **argv) {
  const char *file = NULL, *function = NULL, *target = NULL;
  bool pin = false, quiet = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--pinned")) pin = true;
    else if (!strcmp(a, "-q")) quiet = true;
    else if (!strcmp(a, "--function") && i + 1 < argc) function = argv[++i];
    else if (!strcmp(a, "--target") && i + 1 < argc) target = argv[++i];
    else if (a[0] != '-' && !file) file = a;
    else {
      fprintf(stderr, "regsweep regalloc: unexpected argument '%s'\n", a);
      return 2;
    }
  }
  if (!file || !pin) {
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
