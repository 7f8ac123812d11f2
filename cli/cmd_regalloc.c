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
 * minimising R, on the Problem plus the conflicts that keep values apart on a re-lift
 * (sass/joins.c: one colouring, never a second round), each value then lowered to the lowest
 * register that fits; where that needs more than ptxas's own colouring lowered the same way, the
 * latter is the result and the line says so. The listing is written and checked
 * independently of the colouring:
 * re-lifted, every operand must belong to the same value as before (same def-use partition:
 * every use reads the same original definitions, its contributor set) and the assignment must
 * pass the verifier's checks against the original Problem; the line printed says both
 * ("contributor sets equivalent (N uses), verifier: pass"). */
#include "front/front.h"
#include "cli/cli.h"
#include "analysis/problem.h"
#include "cubin/lower.h"
#include "sass/sass.h"
#include "sass/spills.h"
#include "corpus/truth.h"
#include "storage/corpus.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* model/chaitin.c: free mode from ptxas's colouring (never worse than it) */
uint32_t rs_chaitin_allocate_from(const rs_problem *p, const rs_preg *start, rs_preg *mine, rs_preg *out,
                                  bool *from_start);

void rs_usage_regalloc(void) {
  puts("usage: regsweep regalloc FILE.sass --pinned [-q] [--function NAME] [--target T]\n"
       "       regsweep regalloc FILE.sass --free [-o OUT.sass] [-q] [--target T] [--scoreboards C.cubin] [--no-spills]\n"
       "       regsweep regalloc CORPUS.h5 --pinned|--free [-q]   (every form-sass instance)\n"
       "       regsweep regalloc FILE.cubin [--listing L.sass] --pinned|--free [-o OUT.cubin] [--nvdisasm P]\n"
       "       regsweep regalloc FILE.sass --cubin C.cubin --pinned|--free [-o OUT.cubin] [--no-scoreboards]\n"
       "\n"
       "--pinned: rebuild liveness and interference, colour with the listing's own registers (they\n"
       "must be a valid colouring of the Problem), write the listing back and compare it with the\n"
       "input register for register. Prints per function 'identical' (or, with -q, nothing); a\n"
       "failure names the function, the instruction address and the expected and actual register.\n"
       "--free: recolour every function with Chaitin-Briggs over R, UR, P, UP and B together,\n"
       "minimising R, each value then moved to the lowest register that fits; print 'R: N -> M\n"
       "registers, occupancy A -> B warps/SM' (N, M as ptxas counts: highest R + 3). Never worse\n"
       "than ptxas: where ptxas's own colouring, lowered the same way, is cheaper, it is the result\n"
       "and the line says \"ptxas's own colouring kept|lowered (ours needed K R)\" (or \"ours left K\n"
       "values without a register\"). Write the recoloured listing to OUT;\n"
       "check it by re-lifting it (same values, every use reading the same definitions: 'contributor\n"
       "sets equivalent (N uses)') and against the verifier's checks ('verifier: pass'). One colouring\n"
       "('1 round'): the Problem keeps apart what a re-lift would join; a join is a failure.\n"
       "A cubin: its completed nvdisasm listing (or L.sass) is allocated as above; with -o the result is\n"
       "lowered into a copy of the cubin (regsweep lower: changed instructions re-encoded, register count\n"
       "set; pinned must be byte-identical) and crosschecked by nvdisasm; a mismatch removes OUT.\n"
       "--scoreboards C.cubin lends a listing its cubin's control bits (a cubin input, or a corpus row\n"
       "that keeps one, passes its own). Lowering keeps them, so ptxas's scoreboards join the Problem:\n"
       "a value an in-flight load, store or MUFU still reads or writes conflicts with every value\n"
       "written (or touched) before the wait on it (sass/scoreboard.c, cubin/hazard.c's walk; 'S\n"
       "scoreboard conflicts' on the line; pinned checks ptxas's colouring against them too).\n"
       "--no-scoreboards leaves them out (to measure what they cost: lowering then refuses a kernel\n"
       "with a race).\n"
       "Spill slots ([R1+k] words of STL/LDL, sass/spills.h) are values of free mode: where a register\n"
       "below the kernel's register count is free for one, its STL and loads become MOV (or NOP) in place;\n"
       "'spills: S stores, L loads -> s, l (frame F -> f bytes)' per function. --no-spills keeps them.\n"
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

/* ptxas's control bits of f from cubin c (NULL: none, or --no-scoreboards); -1 on bad input. */
static int ctl_for(const rs_cubin *c, const char *cpath, const rs_func *f, uint64_t (**ctl)[2], rs_err *e) {
  *ctl = NULL;
  return c ? rs_sass_ctl_of(c, f, cpath, ctl, e) : 0;
}

/* Pinned run of one function; returns the number of failures, or UINT32_MAX on bad input. With
 * control bits, the listing's colouring must also satisfy the free Problem's added conflicts
 * (joins and scoreboards): ptxas's colouring is the floor free mode starts from. */
static uint32_t pinned(const rs_func *f, const uint64_t (*ctl)[2], bool quiet, rs_err *e) {
  rs_problem *p = rs_problem_build(f, e);
  if (!p) return UINT32_MAX;
  if (ctl) rs_sass_join_conflicts(f, p), rs_sass_scoreboard_conflicts(f, ctl, p);
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

static unsigned occupancy_of(const rs_target *t, unsigned ptxas_regs) {
  unsigned used[RS_MAX_FILES] = {0};
  used[0] = ptxas_regs; /* file 0 is R on NVIDIA targets */
  return t->occupancy(t, used);
}

/* Same values before and after: operand by operand, a bijection between old and new values
 * with the same lanes, so every use reads the same original definitions (its contributor set).
 * Returns the number of mismatching operands; *uses counts the uses compared. */
static uint32_t same_partition(const rs_func *a, const rs_func *b, uint32_t *shown, uint32_t *uses) {
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
      *uses += x->kind == RS_OP_VREG && !(x->flags & RS_F_DEF);
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

/* Does the function call an external function (CALL.ABS.NOINC Rx, e.g. vprintf)? */
static bool calls_extern(const rs_func *f) {
  for (uint32_t i = 0; i < f->ninsts; i++)
    if (!strncmp(rs_func_opcode(f, &f->insts[i]), "CALL.ABS.", 9)) return true;
  return false;
}

/* Values of `a` that the re-lifted `b` puts in one value (a def of one reaching a read of the
 * other): named, as a failure, since rs_sass_join_conflicts should have kept them apart. */
static uint32_t joined(const rs_func *a, const rs_func *b, uint32_t *shown) {
  if (a->ninsts != b->ninsts || a->nops != b->nops) return 0;
  uint32_t *first = rs_xmalloc(sizeof *first * (b->nvregs + 1)), bad = 0;
  for (uint32_t v = 0; v < b->nvregs; v++) first[v] = UINT32_MAX;
  for (uint32_t i = 0; i < a->nops; i++) {
    const rs_operand *x = &a->ops[i], *y = &b->ops[i];
    if (x->kind != RS_OP_VREG || y->kind != RS_OP_VREG) continue;
    if (first[y->reg] == UINT32_MAX) first[y->reg] = x->reg;
    if (first[y->reg] == x->reg) continue;
    if (bad++ < 1 && (*shown)++ < MAX_SHOWN)
      fprintf(stderr, "FAIL %s: the write-back joins values %s and %s (a conflict the Problem lacks)\n", a->name,
              a->vregs[first[y->reg]].name, a->vregs[x->reg].name);
  }
  free(first);
  return bad;
}

/* Free run of a module; returns failures, UINT32_MAX on bad input. One colouring per function:
 * the Problem carries the conflicts that keep values apart on the re-lift (sass/joins.c), so
 * the written listing is checked, never re-coloured. Ours and ptxas's own colouring are each
 * lowered value by value; where ours is the dearer, ptxas's (lowered) is the result (the floor),
 * said on the function's line. */
static uint32_t free_mode(rs_module *m, const rs_cubin *cub, const char *cpath, const char *out_path, bool quiet,
                          bool spills, rs_err *e) {
  uint32_t nf = m->nfuncs, fails = 0, shown = 0;
  rs_preg **as = rs_xcalloc(nf + 1, sizeof *as);
  rs_problem **ps = rs_xcalloc(nf + 1, sizeof *ps);
  double *secs = rs_xcalloc(nf + 1, sizeof *secs);
  uint32_t *uses = rs_xcalloc(nf + 1, sizeof *uses), *differ = rs_xcalloc(nf + 1, sizeof *differ);
  unsigned *ours = rs_xcalloc(nf + 1, sizeof *ours); /* R of our colouring, before the floor */
  uint32_t *uncoloured = rs_xcalloc(nf + 1, sizeof *uncoloured);
  bool *floored = rs_xcalloc(nf + 1, sizeof *floored); /* the result is ptxas's colouring, lowered */
  bool *extern_call = rs_xcalloc(nf + 1, sizeof *extern_call);
  uint32_t *nsb = rs_xcalloc(nf + 1, sizeof *nsb); /* scoreboard conflicts added */
  bool checked = false; /* the write-back was re-lifted and compared */
  /* spill slots as values (sass/spills.h): per function, what was found and what was promoted;
   * sr[k].mod holds the original function once function k is rewritten */
  rs_spills *sp = rs_xcalloc(nf + 1, sizeof *sp);
  rs_spill_result *sr = rs_xcalloc(nf + 1, sizeof *sr);
  uint32_t *spill_nops = rs_xcalloc(nf + 1, sizeof *spill_nops);
  unsigned sm = m->tgt && !strncmp(m->tgt->name, "sm_", 3) ? (unsigned)atoi(m->tgt->name + 3) : 0;
  for (uint32_t k = 0; k < nf && fails != UINT32_MAX; k++) {
    const rs_func *f = m->funcs[k];
    if (!(ps[k] = rs_problem_build(f, e))) {
      fails = UINT32_MAX;
      break;
    }
    as[k] = rs_xcalloc(f->nvregs + 1, sizeof *as[k]);
    rs_problem *p = ps[k];
    double t0 = rs_now();
    uint64_t (*ctl)[2] = NULL;
    if (ctl_for(cub, cpath, f, &ctl, e)) {
      fails = UINT32_MAX;
      break;
    }
    rs_sass_join_conflicts(f, p);
    if (ctl) nsb[k] = rs_sass_scoreboard_conflicts(f, (const uint64_t(*)[2])ctl, p); /* ptxas's control bits stay */
    /* ptxas's colouring is a valid one of this Problem (tests/test_sass_real.c): the floor */
    rs_preg *start = rs_xcalloc(p->nvars + 1, sizeof *start), *mine = rs_xcalloc(p->nvars + 1, sizeof *mine),
            *best = rs_xcalloc(p->nvars + 1, sizeof *best);
    for (uint32_t v = 0; v < p->nvars; v++) start[v] = f->truth[p->vars[v].fvreg];
    uncoloured[k] = rs_chaitin_allocate_from(p, start, mine, best, &floored[k]);
    extern_call[k] = calls_extern(f);
    if (extern_call[k]) { /* the callee's ABI (arguments, clobbers) is not in the Problem: ptxas's */
      memcpy(best, start, sizeof *best * p->nvars);
      floored[k] = true;
    }
    for (uint32_t v = 0; v < f->nvregs; v++) as[k][v] = f->truth[v]; /* values the Problem lacks keep theirs */
    for (uint32_t v = 0; v < p->nvars; v++) as[k][p->vars[v].fvreg] = mine[v];
    ours[k] = r_used(f, as[k]) + 2;
    for (uint32_t v = 0; v < p->nvars; v++) as[k][p->vars[v].fvreg] = best[v];
    /* the other colouring within the count leaves other registers free for the spill slots:
     * ours when ptxas's was kept (and ours fits), else ptxas's own */
    rs_preg *alt = NULL;
    if (spills && !extern_call[k] && (!floored[k] || !uncoloured[k])) {
      alt = rs_xcalloc(f->nvregs + 1, sizeof *alt);
      for (uint32_t v = 0; v < f->nvregs; v++) alt[v] = f->truth[v];
      if (floored[k])
        for (uint32_t v = 0; v < p->nvars; v++) alt[p->vars[v].fvreg] = mine[v];
      if (r_used(f, alt) > r_used(f, f->truth)) {
        free(alt);
        alt = NULL;
      }
    }
    free(start);
    free(mine);
    free(best);
    /* spill slots: promoted where a register below the kernel's count is free for them */
    if (spills && rs_spills_find(f, &sp[k], e)) {
      free(ctl);
      free(alt);
      fails = UINT32_MAX;
      break;
    }
    bool any = false;
    for (uint32_t w = 0; spills && w < sp[k].nwebs; w++) any |= sp[k].webs[w].ok;
    if (any) {
      unsigned limit = r_used(f, f->truth) + 2;
      rs_spill_result other;
      memset(&other, 0, sizeof other);
      if (rs_spills_promote(m, k, &sp[k], (const uint64_t(*)[2])ctl, as[k], limit, sm, &sr[k], e) ||
          (alt && rs_spills_promote(m, k, &sp[k], (const uint64_t(*)[2])ctl, alt, limit, sm, &other, e))) {
        free(ctl);
        free(alt);
        rs_spill_result_free(&other);
        fails = UINT32_MAX;
        break;
      }
      /* the better of the two: fewer spill accesses left, then fewer R */
      uint32_t left0 = sr[k].stores_left + sr[k].loads_left, left1 = other.stores_left + other.loads_left;
      if (alt && other.promoted_webs &&
          (left1 < left0 || (left1 == left0 && sr[k].promoted_webs &&
                             r_used(other.f, other.assign) < r_used(sr[k].f, sr[k].assign)))) {
        rs_spill_result t = sr[k];
        sr[k] = other;
        other = t;
      }
      rs_spill_result_free(&other);
      if (sr[k].promoted_webs) { /* the rewritten function takes the original's place */
        rs_func *g = sr[k].f;
        sr[k].mod->funcs[k] = m->funcs[k];
        m->funcs[k] = g;
        free(as[k]);
        as[k] = sr[k].assign;
        sr[k].assign = NULL;
        rs_problem_free(ps[k]);
        ps[k] = sr[k].p;
        sr[k].p = NULL;
        nsb[k] = sr[k].nsb;
      }
    }
    secs[k] = rs_now() - t0;
    free(ctl);
    free(alt);
  }
  char *text = NULL;
  if (fails != UINT32_MAX && !fails) {
    text = rs_sass_write_module(m, as);
    for (uint32_t k = 0; k < nf; k++) /* the rewritten spill accesses: MOV or NOP */
      if (sr[k].promoted_webs) {
        char *t2 = rs_spills_write(text, m->funcs[k], as[k], &spill_nops[k]);
        free(text);
        text = t2;
      }
    rs_module *n = rs_xcalloc(1, sizeof *n);
    n->path = rs_xstrndup("(recoloured)", 12);
    n->text = rs_xstrndup(text, strlen(text));
    n->len = strlen(text);
    n->kind = RS_SRC_SASS;
    n->tgt = m->tgt;
    rs_err ne = {{0}};
    if (rs_sass_parse(n, &ne) || n->nfuncs != nf) {
      fprintf(stderr, "FAIL: the recoloured listing does not parse: %s\n", ne.msg);
      fails++;
    } else { /* the independent check of the write-back */
      checked = true;
      for (uint32_t k = 0; k < nf; k++) {
        if (sr[k].promoted_webs) { /* against the original, through the copies and frame words */
          char why[300];
          fails += differ[k] = rs_spills_check(sr[k].mod->funcs[k], n->funcs[k], sr[k].rewritten, &uses[k], why, sizeof why);
          if (differ[k] && shown++ < MAX_SHOWN) fprintf(stderr, "FAIL %s: %s\n", m->funcs[k]->name, why);
          continue;
        }
        fails += joined(m->funcs[k], n->funcs[k], &shown);
        fails += differ[k] = same_partition(m->funcs[k], n->funcs[k], &shown, &uses[k]);
      }
    }
    rs_module_free(n);
  }
  for (uint32_t k = 0; k < nf && fails != UINT32_MAX; k++) {
    const rs_func *f = m->funcs[k];
    /* the verifier's checks against the original Problem (the conflicts joins.c added only add) */
    uint32_t nonmember = 0, viol = rs_truth_check(ps[k], as[k], &nonmember);
    bool vpass = !viol && !nonmember;
    if (!vpass) {
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
    char contrib[96], floor[128] = "", sb[48] = "";
    if (cub) snprintf(sb, sizeof sb, " %u scoreboard conflicts,", nsb[k]);
    if (!checked) snprintf(contrib, sizeof contrib, "contributor sets not checked (no written listing)");
    else if (differ[k]) snprintf(contrib, sizeof contrib, "contributor sets DIFFER (%u of %u uses)", differ[k], uses[k]);
    else snprintf(contrib, sizeof contrib, "contributor sets equivalent (%u uses)", uses[k]);
    if (extern_call[k])
      snprintf(floor, sizeof floor, "; ptxas's own colouring kept (an external call, CALL.ABS.NOINC: its ABI is not modelled)");
    else if (floored[k] && uncoloured[k])
      snprintf(floor, sizeof floor, "; ptxas's own colouring %s (ours left %u values without a register)",
               after < before ? "lowered" : "kept", uncoloured[k]);
    else if (floored[k])
      snprintf(floor, sizeof floor, "; ptxas's own colouring %s (ours needed %u R)", after < before ? "lowered" : "kept",
               ours[k]);
    char spl[400] = "";
    if (spills && (sp[k].stores || sp[k].loads)) {
      const rs_spill_result *r = &sr[k];
      uint32_t s2 = r->promoted_webs ? r->stores_left : sp[k].stores, l2 = r->promoted_webs ? r->loads_left : sp[k].loads;
      uint32_t ok = 0, kept = 0; /* promotable slot values; accesses of words that are not */
      for (uint32_t w = 0; w < sp[k].nwebs; w++)
        if (sp[k].webs[w].ok) ok++;
        else kept += sp[k].webs[w].nstores + sp[k].webs[w].nloads;
      int o = snprintf(spl, sizeof spl, "; spills: %u stores, %u loads -> %u, %u (frame %u -> %u bytes)", sp[k].stores,
                       sp[k].loads, s2, l2, sp[k].frame, sp[k].frame);
      if (sp[k].refused[0]) snprintf(spl + o, sizeof spl - (size_t)o, ", kept: %s", sp[k].refused);
      else snprintf(spl + o, sizeof spl - (size_t)o,
                    ", %u of %u promotable slot values in registers, %u NOPs; %u accesses not promotable (64/128-bit, "
                    "sub-word, predicated, or read before a store)",
                    r->promoted_webs, ok, spill_nops[k], kept);
    }
    if (!quiet)
      printf("regalloc(free): %s: R: %u -> %u registers, occupancy %u -> %u warps/SM (%u values, 1 round,%s %.1f ms); "
             "%s, verifier: %s%s%s\n",
             f->name, before, after, occupancy_of(f->tgt, before), occupancy_of(f->tgt, after), ps[k]->nvars, sb,
             secs[k] * 1e3, contrib, vpass ? "pass" : "FAIL", floor, spl);
  }
  if (out_path && !fails && text) {
    FILE *fp = fopen(out_path, "w");
    if (!fp || fputs(text, fp) < 0 || fclose(fp)) {
      rs_errf(e, out_path, 0, "cannot write the recoloured listing");
      fails = UINT32_MAX;
    }
  }
  free(text);
  for (uint32_t k = 0; k < nf; k++) {
    free(as[k]);
    if (ps[k]) rs_problem_free(ps[k]);
  }
  free(as);
  free(ps);
  free(secs);
  free(uses);
  free(differ);
  free(ours);
  free(uncoloured);
  free(floored);
  free(extern_call);
  free(nsb);
  for (uint32_t k = 0; k < nf; k++) {
    rs_spills_free(&sp[k]);
    rs_spill_result_free(&sr[k]);
  }
  free(sp);
  free(sr);
  free(spill_nops);
  return fails;
}

/* Every form-sass instance of a corpus: pinned or free on each listing, one line per instance
 * ("instance ID: identical|valid|FAILED, T ms": wall clock of parse + lift + the run), then the
 * totals. Returns 0, 1 (a failure) or 2 (bad input). */
static int corpus_mode(const char *path, bool pin, bool quiet) {
  /* line by line: a failed instance's lines go to stderr, and a reader of both streams
   * (2>&1) must get whole lines in order, each instance's function lines before its own */
  setvbuf(stdout, NULL, _IOLBF, 0);
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(path, &e);
  if (!c) {
    fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
    return 2;
  }
  uint64_t n = rs_corpus_count(c);
  uint32_t done = 0, failed = 0, bad = 0;
  for (uint64_t i = 0; i < n; i++) {
    rs_instance in;
    if (rs_corpus_get(c, i, &in, 1, &e)) {
      fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
      bad++;
      break;
    }
    if (strcmp(in.form, "sass") || !in.raw) {
      rs_instance_clear(&in);
      continue;
    }
    double t0 = rs_now();
    rs_err pe = {{0}};
    rs_module *m = rs_module_parse(in.id, rs_xstrndup(in.raw, strlen(in.raw)), strlen(in.raw), RS_SRC_SASS, in.target, &pe);
    uint32_t fails = m ? 0 : UINT32_MAX;
    rs_cubin cub, *cb = NULL; /* the row's cubin: ptxas's control bits, its scoreboards in the Problem */
    memset(&cub, 0, sizeof cub);
    if (m && in.cubin && in.cubin_len) {
      uint8_t *bytes = rs_xmalloc(in.cubin_len);
      memcpy(bytes, in.cubin, in.cubin_len);
      if (rs_cubin_parse(bytes, in.cubin_len, in.id, &cub, &pe)) fails = UINT32_MAX;
      else cb = &cub;
    }
    for (uint32_t k = 0; m && pin && k < m->nfuncs && fails != UINT32_MAX; k++) {
      uint64_t (*ctl)[2] = NULL;
      uint32_t b = ctl_for(cb, in.id, m->funcs[k], &ctl, &pe) ? UINT32_MAX
                                                               : pinned(m->funcs[k], (const uint64_t(*)[2])ctl, quiet, &pe);
      free(ctl);
      fails = b == UINT32_MAX ? b : fails + b;
    }
    if (m && !pin && fails != UINT32_MAX) fails = free_mode(m, cb, in.id, NULL, quiet, true, &pe);
    rs_cubin_free(&cub);
    double ms = (rs_now() - t0) * 1e3;
    done++;
    if (fails == UINT32_MAX) fprintf(stderr, "instance %s: bad input: %s\n", in.id, pe.msg), bad++;
    else if (fails) fprintf(stderr, "instance %s: FAILED (%u), %.1f ms\n", in.id, fails, ms), failed++;
    else if (!quiet) printf("instance %s: %s, %.1f ms\n", in.id, pin ? "identical" : "valid", ms);
    rs_module_free(m);
    rs_instance_clear(&in);
  }
  rs_corpus_close(c, &e);
  if (!quiet || failed || bad)
    printf("regalloc(%s): %s: %u sass instances, %u failures, %u refused\n", pin ? "pinned" : "free", path, done,
           failed, bad);
  return bad ? 2 : failed ? 1 : 0;
}

int rs_cmd_regalloc(int argc, char **argv) {
  for (int i = 1; i < argc; i++) { /* a cubin in or out: cli/cmd_lower.c lowers around this command */
    if (!strcmp(argv[i], "--scoreboards")) { /* its own, below */
      i++;
      continue;
    }
    size_t n = strlen(argv[i]);
    if ((n > 6 && !strcmp(argv[i] + n - 6, ".cubin")) || !strcmp(argv[i], "--cubin")) return rs_regalloc_cubin(argc, argv);
  }
  const char *file = NULL, *function = NULL, *target = NULL, *out = NULL, *cpath = NULL;
  bool pin = false, quiet = false, recolour = false, spills = true;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--pinned")) pin = true;
    else if (!strcmp(a, "--free")) recolour = true;
    else if (!strcmp(a, "-o") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(a, "-q")) quiet = true;
    else if (!strcmp(a, "--no-spills")) spills = false;
    else if (!strcmp(a, "--function") && i + 1 < argc) function = argv[++i];
    else if (!strcmp(a, "--target") && i + 1 < argc) target = argv[++i];
    else if (!strcmp(a, "--scoreboards") && i + 1 < argc) cpath = argv[++i]; /* from rs_regalloc_cubin */
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
  size_t fl = strlen(file);
  if (fl > 3 && !strcmp(file + fl - 3, ".h5")) {
    if (out || function || target) {
      fprintf(stderr, "regsweep regalloc: a corpus takes no -o, --function or --target\n");
      return 2;
    }
    return corpus_mode(file, pin, quiet);
  }
  rs_err e = {{0}};
  rs_module *m = rs_sass_load(file, target, NULL, &e);
  if (!m) {
    fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
    return 2;
  }
  uint32_t fails = 0, done = 0;
  int status = 0;
  rs_cubin cub, *cb = NULL; /* ptxas's control bits, where the listing's cubin is known */
  memset(&cub, 0, sizeof cub);
  if (cpath && rs_cubin_load(cpath, &cub, &e)) {
    fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
    rs_cubin_free(&cub);
    rs_module_free(m);
    return 2;
  }
  if (cpath) cb = &cub;
  if (recolour) {
    fails = free_mode(m, cb, cpath, out, quiet, spills, &e);
    if (fails == UINT32_MAX) fprintf(stderr, "regsweep regalloc: %s\n", e.msg);
    rs_cubin_free(&cub);
    rs_module_free(m);
    return fails == UINT32_MAX ? 2 : fails ? 1 : 0;
  }
  for (uint32_t k = 0; k < m->nfuncs; k++) {
    const rs_func *f = m->funcs[k];
    if (function && strcmp(f->name, function)) continue;
    done++;
    uint64_t (*ctl)[2] = NULL;
    uint32_t b = ctl_for(cb, cpath, f, &ctl, &e) ? UINT32_MAX : pinned(f, (const uint64_t(*)[2])ctl, quiet, &e);
    free(ctl);
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
  rs_cubin_free(&cub);
  rs_module_free(m);
  return status ? status : fails ? 1 : 0;
}
