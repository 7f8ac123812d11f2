/* free_check.c - validate a recoloured listing without trusting the colouring that made it.
 *
 * The written text is parsed again from scratch. With physical registers (no lift), an own
 * reaching-definitions pass (not lift.c's) gives, for every register read and every predicated
 * write (which keeps the old value where the predicate is false), the set of definition sites
 * (instruction operand, register of a tuple) that can reach it; in the input and the output
 * these sets must be equal: every read sees exactly the definitions it saw before (contributor-
 * set equivalence). Definition sites are numbered by operand position, so sites of the input and
 * the output are the same numbers when the instructions are. The lifted parse must give the same
 * partition of operands into webs, and its registers, put on the input's Problem, must pass the
 * native verifier (class, alignment, reserved, interference, fixed registers). */
#include "sass/free.h"
#include "verify/verify.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  rs_sass_free_fail *fails;
  uint32_t max, n;
} sink;

static void fail(sink *s, const rs_func *f, uint32_t addr, const char *reg, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void fail(sink *s, const rs_func *f, uint32_t addr, const char *reg, const char *fmt, ...) {
  if (s->n < s->max) {
    rs_sass_free_fail *x = &s->fails[s->n];
    snprintf(x->func, sizeof x->func, "%s", f->name);
    x->addr = addr;
    snprintf(x->reg, sizeof x->reg, "%s", reg ? reg : "-");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->what, sizeof x->what, fmt, ap);
    va_end(ap);
  }
  s->n++;
}

static bool alloc_op(const rs_func *f, const rs_operand *op) {
  return op->kind == RS_OP_PREG && op->lanes && rs_sass_allocatable(f->tgt, op->reg);
}

static char *reg_str(const rs_func *f, uint32_t unit, char *b, size_t n) {
  return f->tgt->format_preg(f->tgt, (rs_preg){unit, rs_lanes_full(1)}, b, n);
}

/* Reaching definitions over physical registers: one site per written register unit. */
typedef struct {
  const rs_func *f;
  uint32_t nsites, W;
  uint32_t *op_site, *site_unit, *unit_first, *site_next;
  rs_word *in; /* per block */
} rd;

static void rd_defs(const rd *r, const rs_inst *in, rs_word *cur) {
  for (uint32_t o = 0; o < in->nops; o++) {
    uint32_t oi = in->first_op + o;
    const rs_operand *op = &r->f->ops[oi];
    if (!(op->flags & RS_F_DEF) || r->op_site[oi] == UINT32_MAX) continue;
    for (unsigned k = 0; k < rs_lanes_units(op->lanes); k++) {
      if (!(op->flags & RS_F_COND))
        for (uint32_t s = r->unit_first[op->reg + k]; s != UINT32_MAX; s = r->site_next[s]) rs_bs_clr(cur, s);
      rs_bs_set(cur, r->op_site[oi] + k);
    }
  }
}

static void rd_build(rd *r, const rs_func *f) {
  memset(r, 0, sizeof *r);
  r->f = f;
  r->op_site = rs_xmalloc(sizeof *r->op_site * (f->nops + 1));
  uint32_t cap = 0;
  for (uint32_t oi = 0; oi < f->nops; oi++) {
    const rs_operand *op = &f->ops[oi];
    r->op_site[oi] = UINT32_MAX;
    if (!(op->flags & RS_F_DEF) || !alloc_op(f, op)) continue;
    r->op_site[oi] = r->nsites;
    for (unsigned k = 0; k < rs_lanes_units(op->lanes); k++) {
      rs_grow((void **)&r->site_unit, sizeof *r->site_unit, &cap, r->nsites + 1);
      r->site_unit[r->nsites++] = op->reg + k;
    }
  }
  uint32_t nu = f->tgt->nunits;
  r->unit_first = rs_xmalloc(sizeof *r->unit_first * (nu + 1));
  r->site_next = rs_xmalloc(sizeof *r->site_next * (r->nsites + 1));
  for (uint32_t u = 0; u <= nu; u++) r->unit_first[u] = UINT32_MAX;
  for (uint32_t s = r->nsites; s-- > 0;) { /* lists in increasing site order */
    r->site_next[s] = r->unit_first[r->site_unit[s]];
    r->unit_first[r->site_unit[s]] = s;
  }
  r->W = (uint32_t)RS_WORDS(r->nsites) + 1;
  size_t W = r->W;
  r->in = rs_xcalloc(W * (f->nblocks + 1), sizeof *r->in);
  rs_word *out = rs_xcalloc(W * (f->nblocks + 1), sizeof *out), *cur = rs_xcalloc(W, sizeof *cur);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t b = 0; b < f->nblocks; b++) {
      const rs_block *blk = &f->blocks[b];
      rs_word *bin = r->in + W * b;
      for (uint32_t p = 0; p < blk->npreds; p++)
        for (size_t w = 0; w < W; w++) bin[w] |= out[W * blk->preds[p] + w];
      memcpy(cur, bin, W * sizeof *cur);
      for (uint32_t k = 0; k < blk->ninsts; k++) rd_defs(r, &f->insts[blk->first_inst + k], cur);
      if (memcmp(cur, out + W * b, W * sizeof *cur)) {
        memcpy(out + W * b, cur, W * sizeof *cur);
        changed = true;
      }
    }
  }
  free(out);
  free(cur);
}

static void rd_free(rd *r) {
  free(r->op_site);
  free(r->site_unit);
  free(r->unit_first);
  free(r->site_next);
  free(r->in);
}

/* Do the sites reaching unit ua in a (state ca) equal those reaching ub in b (state cb)? */
static bool same_reach(const rd *a, const rs_word *ca, uint32_t ua, const rd *b, const rs_word *cb, uint32_t ub,
                       uint32_t *extra_a, uint32_t *extra_b) {
  uint32_t sa = a->unit_first[ua], sb = b->unit_first[ub];
  for (;;) {
    while (sa != UINT32_MAX && !rs_bs_get(ca, sa)) sa = a->site_next[sa];
    while (sb != UINT32_MAX && !rs_bs_get(cb, sb)) sb = b->site_next[sb];
    if (sa == UINT32_MAX && sb == UINT32_MAX) return true;
    if (sa != sb) {
      *extra_a = sa < sb ? sa : UINT32_MAX;
      *extra_b = sb < sa ? sb : UINT32_MAX;
      return false;
    }
    sa = a->site_next[sa];
    sb = b->site_next[sb];
  }
}

/* Address of the instruction of definition site s (UINT32_MAX: none). */
static uint32_t site_addr(const rs_func *f, const rd *r, uint32_t s) {
  if (s == UINT32_MAX) return UINT32_MAX;
  for (uint32_t i = 0; i < f->ninsts; i++) {
    const rs_inst *in = &f->insts[i];
    for (uint32_t o = 0; o < in->nops; o++) {
      uint32_t oi = in->first_op + o, w = rs_lanes_units(f->ops[oi].lanes);
      if (r->op_site[oi] != UINT32_MAX && s >= r->op_site[oi] && s < r->op_site[oi] + w) return in->addr;
    }
  }
  return UINT32_MAX;
}

/* Same instructions, same operand structure; registers differ only where both are allocatable. */
static bool same_shape(const rs_func *a, const rs_func *b, sink *s) {
  char x[24], y[24];
  if (a->ninsts != b->ninsts || a->nops != b->nops || a->nblocks != b->nblocks) {
    fail(s, a, 0, NULL, "written listing has %u instructions, %u operands, %u blocks (input %u, %u, %u)", b->ninsts,
         b->nops, b->nblocks, a->ninsts, a->nops, a->nblocks);
    return false;
  }
  uint32_t before = s->n;
  for (uint32_t i = 0; i < a->ninsts; i++) {
    const rs_inst *ia = &a->insts[i], *ib = &b->insts[i];
    if (ia->addr != ib->addr || ia->nops != ib->nops || ia->first_op != ib->first_op ||
        strcmp(rs_func_opcode(a, ia), rs_func_opcode(b, ib))) {
      fail(s, a, ia->addr, NULL, "written instruction differs: %s at %04x", rs_func_opcode(b, ib), (unsigned)ib->addr);
      continue;
    }
    for (uint32_t o = 0; o < ia->nops; o++) {
      const rs_operand *oa = &a->ops[ia->first_op + o], *ob = &b->ops[ib->first_op + o];
      bool la = alloc_op(a, oa), lb = alloc_op(b, ob);
      if (oa->kind != ob->kind || oa->flags != ob->flags || oa->lanes != ob->lanes || la != lb ||
          (!la && oa->kind == RS_OP_PREG && oa->reg != ob->reg) ||
          (la && rs_target_file_of(a->tgt, oa->reg) != rs_target_file_of(b->tgt, ob->reg)))
        fail(s, a, ia->addr, ob->kind == RS_OP_PREG ? reg_str(b, ob->reg, y, sizeof y) : NULL,
             "operand %u changed kind, width or file (input %s)", o,
             oa->kind == RS_OP_PREG ? reg_str(a, oa->reg, x, sizeof x) : "-");
    }
  }
  return s->n == before;
}

/* Contributor-set equivalence between input a and output b (physical parses). */
static void reach_equiv(const rs_func *a, const rs_func *b, sink *s) {
  rd ra, rb;
  rd_build(&ra, a);
  rd_build(&rb, b);
  if (ra.nsites != rb.nsites) {
    fail(s, a, 0, NULL, "written listing has %u definition sites, input %u", rb.nsites, ra.nsites);
    rd_free(&ra);
    rd_free(&rb);
    return;
  }
  size_t W = ra.W;
  rs_word *ca = rs_xcalloc(W, sizeof *ca), *cb = rs_xcalloc(W, sizeof *cb);
  char x[24], y[24];
  for (uint32_t bi = 0; bi < a->nblocks; bi++) {
    const rs_block *blk = &a->blocks[bi];
    memcpy(ca, ra.in + W * bi, W * sizeof *ca);
    memcpy(cb, rb.in + W * bi, W * sizeof *cb);
    for (uint32_t k = 0; k < blk->ninsts; k++) {
      uint32_t ii = blk->first_inst + k;
      const rs_inst *in = &a->insts[ii];
      for (uint32_t o = 0; o < in->nops; o++) {
        uint32_t oi = in->first_op + o;
        const rs_operand *oa = &a->ops[oi], *ob = &b->ops[oi];
        bool reads = !(oa->flags & RS_F_DEF) || (oa->flags & RS_F_COND);
        if (!reads || !alloc_op(a, oa) || !alloc_op(b, ob)) continue;
        for (unsigned u = 0; u < rs_lanes_units(oa->lanes); u++) {
          uint32_t ea, eb;
          if (same_reach(&ra, ca, oa->reg + u, &rb, cb, ob->reg + u, &ea, &eb)) continue;
          char da[80] = "", db[80] = "";
          uint32_t aa = site_addr(a, &ra, ea), ab = site_addr(b, &rb, eb);
          if (aa != UINT32_MAX) snprintf(da, sizeof da, "; the input's definition at %04x no longer reaches", (unsigned)aa);
          if (ab != UINT32_MAX) snprintf(db, sizeof db, "; the definition at %04x now reaches", (unsigned)ab);
          fail(s, a, in->addr, reg_str(b, ob->reg + u, y, sizeof y),
               "contributor set differs: %s reads other definitions than %s did in the input%s%s",
               reg_str(b, ob->reg + u, y, sizeof y), reg_str(a, oa->reg + u, x, sizeof x), da, db);
        }
      }
      rd_defs(&ra, in, ca);
      rd_defs(&rb, &b->insts[ii], cb);
    }
  }
  free(ca);
  free(cb);
  rd_free(&ra);
  rd_free(&rb);
}

/* Same webs, and the verifier on the input's Problem with the registers read back. */
static void webs_and_verify(const rs_func *a, const rs_func *b, sink *s, rs_err *e) {
  const rs_target *t = a->tgt;
  char x[24];
  int64_t *base = rs_xmalloc(sizeof *base * (a->nvregs + 1));
  uint32_t *inv = rs_xmalloc(sizeof *inv * (b->nvregs + 1)), *fwd = rs_xmalloc(sizeof *fwd * (a->nvregs + 1));
  for (uint32_t v = 0; v < a->nvregs; v++) base[v] = -1, fwd[v] = UINT32_MAX;
  for (uint32_t v = 0; v < b->nvregs; v++) inv[v] = UINT32_MAX;
  uint32_t before = s->n;
  for (uint32_t i = 0; i < a->ninsts; i++) {
    const rs_inst *in = &a->insts[i];
    for (uint32_t o = 0; o < in->nops; o++) {
      uint32_t oi = in->first_op + o;
      const rs_operand *oa = &a->ops[oi], *ob = &b->ops[oi];
      if (oa->kind != RS_OP_VREG) continue;
      if (ob->kind != RS_OP_VREG) {
        fail(s, a, in->addr, NULL, "operand %u is no register web in the written listing", o);
        continue;
      }
      uint32_t va = oa->reg, vb = ob->reg;
      int64_t bs = (int64_t)b->truth[vb].unit + __builtin_ctzll(ob->lanes | 1) / 2 - __builtin_ctzll(oa->lanes | 1) / 2;
      if ((fwd[va] != UINT32_MAX && fwd[va] != vb) || (inv[vb] != UINT32_MAX && inv[vb] != va)) {
        fail(s, a, in->addr, reg_str(b, b->truth[vb].unit, x, sizeof x),
             "webs differ: %s is one web with %s in the written listing, not in the input (or split)",
             a->vregs[va].name, inv[vb] != UINT32_MAX ? a->vregs[inv[vb]].name : a->vregs[fwd[va]].name);
        continue;
      }
      fwd[va] = vb;
      inv[vb] = va;
      base[va] = bs;
    }
  }
  if (s->n == before) {
    rs_problem *p = rs_problem_build(a, e);
    if (!p) {
      fail(s, a, 0, NULL, "no Problem for the input: %s", e->msg);
    } else {
      rs_candidate c = {0};
      c.n = p->nvars;
      c.reg = rs_xcalloc(p->nvars + 1, sizeof *c.reg);
      for (uint32_t v = 0; v < p->nvars; v++) {
        int64_t bb = base[p->vars[v].fvreg];
        c.reg[v] = bb < 0 ? (rs_preg){0, 0} : (rs_preg){(uint32_t)bb, p->vars[v].full};
      }
      rs_check_result res;
      rs_result_init(&res);
      rs_check_native(p, &c, &res);
      if (res.verdict != RS_V_PASS) {
        /* the instruction of the first violated conflict, for the address */
        uint32_t addr = 0;
        for (uint32_t i = 0; i < p->nconf; i++)
          if (rs_lanes_overlap(c.reg[p->conf[i].a].unit, p->conf[i].la, c.reg[p->conf[i].b].unit, p->conf[i].lb)) {
            addr = a->insts[p->conf[i].inst].addr;
            break;
          }
        fail(s, a, addr, NULL, "verifier: %s: %s", rs_verdict_str(res.verdict), res.ndiag ? res.diag[0] : "");
      }
      free(c.reg);
      rs_problem_free(p);
    }
  }
  (void)t;
  free(base);
  free(inv);
  free(fwd);
}

static rs_module *reparse(const rs_module *m, const char *text, bool no_lift, bool written, rs_err *e) {
  rs_module *w = rs_xcalloc(1, sizeof *w);
  char name[1024];
  snprintf(name, sizeof name, "%s%s", m->path, written ? " (as written)" : "");
  w->path = rs_xstrndup(name, strlen(name));
  w->len = strlen(text);
  w->text = rs_xstrndup(text, w->len);
  w->kind = RS_SRC_SASS;
  w->tgt = m->tgt;
  rs_sass_opts o = {NULL, 0, no_lift};
  if (rs_sass_parse_opts(w, &o, e)) {
    rs_module_free(w);
    return NULL;
  }
  return w;
}

uint32_t rs_sass_free_check(const rs_module *m, const char *text, rs_sass_free_fail *fails, uint32_t maxfail,
                            unsigned *r_after, rs_err *e) {
  sink s = {fails, maxfail, 0};
  rs_module *in_phys = reparse(m, m->text, true, false, e);
  if (!in_phys) return UINT32_MAX;
  rs_module *out_phys = reparse(m, text, true, true, e), *out_lift = out_phys ? reparse(m, text, false, true, e) : NULL;
  if (!out_phys || !out_lift) {
    rs_module_free(in_phys);
    rs_module_free(out_phys);
    return UINT32_MAX;
  }
  if (out_phys->nfuncs != m->nfuncs || in_phys->nfuncs != m->nfuncs || out_lift->nfuncs != m->nfuncs) {
    rs_errf(e, m->path, 0, "written listing has %u functions, input %u", out_phys->nfuncs, m->nfuncs);
    s.n = UINT32_MAX;
  }
  for (uint32_t k = 0; k < m->nfuncs && s.n != UINT32_MAX; k++) {
    const rs_func *a = in_phys->funcs[k], *b = out_phys->funcs[k];
    if (r_after) r_after[k] = rs_sass_r_count(b);
    if (strcmp(a->name, b->name)) {
      fail(&s, a, 0, NULL, "written function is named %s", b->name);
      continue;
    }
    if (!same_shape(a, b, &s)) continue;
    uint32_t before = s.n;
    reach_equiv(a, b, &s);
    if (s.n == before) webs_and_verify(m->funcs[k], out_lift->funcs[k], &s, e);
  }
  rs_module_free(in_phys);
  rs_module_free(out_phys);
  rs_module_free(out_lift);
  return s.n;
}
