/* check.c - the independent check of a recolouring: the listing written back under it is
 * re-lifted, and every operand must belong to the same value as before (the same def-use
 * partition: every use reads the same original definitions, its contributor set); the
 * assignment must pass the verifier's checks against the original Problem; a value whose
 * operand the listing does not print must not move. The one same-values check of the program:
 * regalloc, lower and emit all call rs_mc_same_values. */
#include "mcode/mcode.h"
#include "sass/sass.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failure line, kept for the command to print (the library prints nothing). */
void rs_mc_say(rs_mc_msgs *l, const char *fmt, ...) {
  char b[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  RS_PUSH(l->v, l->n, l->cap, rs_xstrndup(b, strlen(b)));
}

void rs_mc_msgs_free(rs_mc_msgs *l) {
  for (uint32_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

uint32_t rs_mc_same_values(const rs_func *a, const rs_func *b, int32_t *map, uint32_t *uses, bool *shape,
                           rs_mc_bad_fn bad, void *ctx) {
  *shape = a->ninsts != b->ninsts || a->nops != b->nops;
  if (*shape) return 1;
  int32_t *fw = rs_xmalloc(sizeof *fw * (a->nvregs + 1)), *bw = rs_xmalloc(sizeof *bw * (b->nvregs + 1));
  for (uint32_t v = 0; v < a->nvregs; v++) fw[v] = -1;
  for (uint32_t v = 0; v < b->nvregs; v++) bw[v] = -1;
  uint32_t nbad = 0;
  for (uint32_t i = 0; i < a->ninsts; i++) {
    const rs_inst *ia = &a->insts[i];
    for (uint32_t o = 0; o < ia->nops; o++) {
      const rs_operand *x = &a->ops[ia->first_op + o], *y = &b->ops[ia->first_op + o];
      bool ok = x->kind == y->kind && (x->kind != RS_OP_VREG || x->lanes == y->lanes);
      if (uses) *uses += x->kind == RS_OP_VREG && !(x->flags & RS_F_DEF);
      if (ok && x->kind == RS_OP_VREG) {
        if (fw[x->reg] < 0 && bw[y->reg] < 0) fw[x->reg] = (int32_t)y->reg, bw[y->reg] = (int32_t)x->reg;
        ok = fw[x->reg] == (int32_t)y->reg && bw[y->reg] == (int32_t)x->reg;
      }
      if (!ok) {
        nbad++;
        if (bad) bad(ctx, i, o);
      }
    }
  }
  if (map)
    for (uint32_t v = 0; v < a->nvregs; v++) map[v] = fw[v];
  free(fw);
  free(bw);
  return nbad;
}

typedef struct {
  const rs_func *a;
  char *why;
  size_t n;
  bool said;
} why_ctx;

static void first_why(void *ctx, uint32_t inst, uint32_t op) {
  why_ctx *w = ctx;
  if (!w->said)
    snprintf(w->why, w->n, "/*%04x*/ operand %u reads another definition under the new registers",
             (unsigned)w->a->insts[inst].addr, op);
  w->said = true;
}

uint32_t rs_sass_same_values(const rs_func *a, const rs_func *b, int32_t *map, char *why, size_t n) {
  why_ctx w = {a, why, n, false};
  bool shape;
  uint32_t bad = rs_mc_same_values(a, b, map, NULL, &shape, first_why, &w);
  if (shape)
    snprintf(why, n, "the new listing re-lifts to %u instructions/%u operands (was %u/%u)", b->ninsts, b->nops,
             a->ninsts, a->nops);
  return bad;
}

typedef struct {
  const rs_func *a;
  rs_mc_msgs *msgs;
  uint32_t *shown;
} fail_ctx;

static void fail_line(void *ctx, uint32_t inst, uint32_t op) {
  fail_ctx *c = ctx;
  if ((*c->shown)++ < RS_MC_SHOWN)
    rs_mc_say(c->msgs, "FAIL %s /*%04x*/: operand %u reads a different definition after recolouring", c->a->name,
              (unsigned)c->a->insts[inst].addr, op);
}

/* Values of `a` that the re-lifted `b` puts in one value (a def of one reaching a read of the
 * other): named, as a failure, since sass/joins.c should have kept them apart. */
static uint32_t joined(const rs_func *a, const rs_func *b, uint32_t *shown, rs_mc_msgs *msgs) {
  if (a->ninsts != b->ninsts || a->nops != b->nops) return 0;
  uint32_t *first = rs_xmalloc(sizeof *first * (b->nvregs + 1)), bad = 0;
  for (uint32_t v = 0; v < b->nvregs; v++) first[v] = UINT32_MAX;
  for (uint32_t i = 0; i < a->nops; i++) {
    const rs_operand *x = &a->ops[i], *y = &b->ops[i];
    if (x->kind != RS_OP_VREG || y->kind != RS_OP_VREG) continue;
    if (first[y->reg] == UINT32_MAX) first[y->reg] = x->reg;
    if (first[y->reg] == x->reg) continue;
    if (bad++ < 1 && (*shown)++ < RS_MC_SHOWN)
      rs_mc_say(msgs, "FAIL %s: the write-back joins values %s and %s (a conflict the Problem lacks)", a->name,
                a->vregs[first[y->reg]].name, a->vregs[x->reg].name);
  }
  free(first);
  return bad;
}

int rs_mc_write(const rs_mc *mc, rs_preg *const *as, const char *relift_name, char **text, rs_module **relift,
                rs_err *e) {
  const rs_module *m = mc->m;
  *text = rs_sass_write_module(m, as);
  *relift = NULL;
  rs_module *n = rs_xcalloc(1, sizeof *n);
  n->path = rs_xstrndup(relift_name, strlen(relift_name));
  n->text = rs_xstrndup(*text, strlen(*text));
  n->len = strlen(*text);
  n->kind = RS_SRC_SASS;
  n->tgt = m->tgt;
  int rc = rs_sass_parse(n, e);
  if (!rc && n->nfuncs != m->nfuncs) rc = rs_errf(e, relift_name, 0, "the written listing has other functions");
  if (rc) rs_module_free(n);
  else *relift = n;
  return rc;
}

int64_t rs_mc_hidden_moved(const rs_func *f, const rs_preg *a) {
  for (uint32_t i = 0; i < f->nops; i++) {
    const rs_operand *op = &f->ops[i];
    if (op->kind == RS_OP_VREG && !op->text_len && f->truth && a[op->reg].unit != f->truth[op->reg].unit)
      return op->reg;
  }
  return -1;
}

void rs_mc_write_check(const rs_mc *mc, rs_problem *const *ps, rs_mc_recolour *r) {
  const rs_module *m = mc->m;
  uint32_t nf = m->nfuncs, shown = 0;
  if (!r->fails) {
    rs_err ne = {{0}};
    bool rewritten = false; /* spill accesses written as MOV/NOP (spills.c) */
    for (uint32_t k = 0; k < nf; k++) rewritten |= rs_mc_spills_rewritten(r, k);
    if (rewritten ? rs_mc_spills_write(mc, r, &ne) : rs_mc_write(mc, r->as, "(recoloured)", &r->text, &r->relift, &ne)) {
      rs_mc_say(&r->msgs, "FAIL: the recoloured listing does not parse: %s", ne.msg);
      r->fails++;
    } else { /* the independent check of the write-back */
      r->checked = true;
      for (uint32_t k = 0; k < nf; k++) {
        const rs_func *a = m->funcs[k], *b = r->relift->funcs[k];
        if (rs_mc_spills_rewritten(r, k)) { /* against the original, through the copies and frame words */
          char why[300];
          r->fails += r->fn[k].differ = rs_mc_spills_check(r, k, b, &r->fn[k].uses, why, sizeof why);
          if (r->fn[k].differ && shown++ < RS_MC_SHOWN) rs_mc_say(&r->msgs, "FAIL %s: %s", a->name, why);
          continue;
        }
        r->fails += joined(a, b, &shown, &r->msgs);
        fail_ctx c = {a, &r->msgs, &shown};
        bool shape;
        uint32_t d = rs_mc_same_values(a, b, NULL, &r->fn[k].uses, &shape, fail_line, &c);
        if (shape)
          rs_mc_say(&r->msgs, "FAIL %s: the written listing re-lifts to %u instructions/%u operands (was %u/%u)",
                    a->name, b->ninsts, b->nops, a->ninsts, a->nops);
        r->fails += r->fn[k].differ = d;
      }
    }
  }
  for (uint32_t k = 0; k < nf; k++) {
    const rs_func *f = m->funcs[k];
    rs_mc_fn *fn = &r->fn[k];
    /* the verifier's checks against the original Problem (the conflicts joins.c added only add) */
    uint32_t nonmember = 0, viol = rs_truth_check(ps[k], r->as[k], &nonmember);
    fn->vpass = !viol && !nonmember;
    if (!fn->vpass) {
      rs_mc_say(&fn->msgs, "FAIL %s: recolouring violates %u constraints, %u registers outside their class", f->name,
                viol == UINT32_MAX ? 0 : viol, nonmember);
      r->fails++;
    }
    /* a value with an operand the listing does not print (a decoded descriptor) must stay put */
    int64_t v = rs_mc_hidden_moved(f, r->as[k]);
    if (v >= 0) {
      rs_mc_say(&fn->msgs, "FAIL %s: value %s moved, but one of its operands is not printed (hidden descriptor)",
                f->name, f->vregs[v].name);
      r->fails++;
    }
  }
}

int rs_mc_is_recolouring(const rs_mc *mc, const rs_module *b, uint32_t *values, rs_err *e) {
  const rs_module *a = mc->m;
  *values = 0;
  if (a->nfuncs != b->nfuncs) {
    rs_errf(e, NULL, 0, "%s has %u functions, %s %u", b->path, b->nfuncs, a->path, a->nfuncs);
    return 1;
  }
  int status = 0;
  for (uint32_t k = 0; !status && k < a->nfuncs; k++) {
    const rs_func *f = a->funcs[k], *g = b->funcs[k];
    int32_t *map = rs_xmalloc(sizeof *map * (f->nvregs + 1));
    char why[300];
    rs_problem *p = NULL;
    /* spill accesses rewritten as MOV/NOP (sass/spills.h): the same definitions through the copies
     * and the frame words, instead of the same partition */
    uint8_t *rw = rs_xcalloc(f->ninsts + 1, 1);
    uint32_t nrw = 0;
    for (uint32_t i = 0; i < f->ninsts && i < g->ninsts && !strcmp(f->name, g->name); i++) {
      const char *x = rs_func_opcode(f, &f->insts[i]), *y = rs_func_opcode(g, &g->insts[i]);
      rw[i] = rs_spills_is_rewrite(x, y);
      nrw += rw[i];
    }
    if (nrw) {
      uint32_t uses = 0, bad = rs_spills_check(f, g, rw, &uses, why, sizeof why);
      if (bad) {
        rs_errf(e, NULL, 0, "%s: %s: not a rewrite of %s: %u reads differ, first: %s", b->path, g->name, a->path, bad, why);
        status = 1;
      }
      *values += uses;
      free(rw);
      free(map);
      continue;
    }
    free(rw);
    if (strcmp(f->name, g->name) || rs_sass_same_values(f, g, map, why, sizeof why)) {
      rs_errf(e, NULL, 0, "%s: %s: not a recolouring of %s: %s", b->path, g->name, a->path,
              strcmp(f->name, g->name) ? "another function" : why);
      status = 1;
    } else if (!(p = rs_problem_build(f, e))) {
      status = 2;
    } else {
      rs_preg *as = rs_xcalloc(f->nvregs + 1, sizeof *as);
      for (uint32_t v = 0; v < f->nvregs; v++)
        if (map[v] >= 0 && g->truth) as[v] = g->truth[map[v]];
      uint32_t nonmember = 0, viol = rs_truth_check(p, as, &nonmember);
      if (viol || nonmember) {
        rs_errf(e, NULL, 0, "%s: %s: the new registers violate %u constraints of %s's Problem (%u outside their class)",
                b->path, g->name, viol == UINT32_MAX ? 0 : viol, a->path, nonmember);
        status = 1;
      }
      *values += p->nvars;
      free(as);
    }
    rs_problem_free(p);
    free(map);
  }
  return status;
}
