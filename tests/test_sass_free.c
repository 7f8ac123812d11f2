/* test_sass_free.c - `regsweep regalloc FILE.sass --free -o OUT` checked from outside, on every
 * SASS fixture (tests/fixtures/sass/front, tests/fixtures/sass, tests/fixtures/sass-real), by a checker that
 * shares nothing with the colouring or its write-back check (which re-lifts with sass/lift.c):
 *   - the written listing has the same instructions, operand kinds, widths and files; registers
 *     that are not allocatable (R1, RZ, PT, URZ, ...) are unchanged; lines differ only in
 *     register names;
 *   - contributor-set equivalence, by its own reaching-definitions pass over physical registers
 *     (the listings parsed with no lift): for every register read and every predicated write
 *     (which keeps the old value), the set of definition sites that can reach it is the input's;
 *   - every web of the input is printed on one register (one base per value, every operand);
 *   - the native verifier (verify/native.c) on the input's Problem with the registers read back
 *     from the written text passes;
 *   - the R count read back (highest R + 3, as ptxas -v counts) is the one printed and at most
 *     ptxas's (the fixture's `ptxas -v`).
 * A listing the parser refuses is refused by --free with exit 2 and file:line. Mutated outputs
 * (one register of one instruction; a whole web moved onto a register of a value it interferes
 * with; a pair moved to an odd register) are caught with function, address and register. */
#include "front/front.h"
#include "check.h"
#include "analysis/problem.h"
#include "sass/sass.h"
#include "verify/verify.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *slurp(const char *path) {
  rs_err e;
  size_t n;
  return rs_read_file(path, &n, &e);
}

/* ---- the checker ---- */

typedef struct {
  bool parsed;           /* the written text parses */
  uint32_t shape, reach, web, verify;
  char first[600];       /* first failure: FUNC, address, register, what */
  uint32_t first_addr;
  char first_reg[24];
  unsigned r_count;      /* of the written listing's first function */
} verdict;

static void note(verdict *v, uint32_t *counter, const rs_func *f, uint32_t addr, const char *reg, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void note(verdict *v, uint32_t *counter, const rs_func *f, uint32_t addr, const char *reg, const char *fmt, ...) {
  if (!v->shape && !v->reach && !v->web && !v->verify) {
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(v->first, sizeof v->first, "%s /*%04x*/: %s: %s", f->name, (unsigned)addr, reg ? reg : "-", what);
    v->first_addr = addr;
    snprintf(v->first_reg, sizeof v->first_reg, "%s", reg ? reg : "-");
  }
  (*counter)++;
}

static bool alloc_op(const rs_func *f, const rs_operand *op) {
  return op->kind == RS_OP_PREG && op->lanes && rs_sass_allocatable(f->tgt, op->reg);
}

static char *reg_str(const rs_func *f, uint32_t unit, char *b, size_t n) {
  return f->tgt->format_preg(f->tgt, (rs_preg){unit, rs_lanes_full(1)}, b, n);
}

static rs_module *parse_phys(const char *name, const char *text, const rs_target *tgt, rs_err *e) {
  rs_module *m = rs_xcalloc(1, sizeof *m);
  m->path = rs_xstrndup(name, strlen(name));
  m->len = strlen(text);
  m->text = rs_xstrndup(text, m->len);
  m->kind = RS_SRC_SASS;
  m->tgt = tgt;
  rs_sass_opts o = {.no_lift = true, .whole = true};
  if (rs_sass_parse_opts(m, &o, e)) {
    rs_module_free(m);
    return NULL;
  }
  return m;
}

/* Reaching definitions over physical registers: one site per written register unit, numbered
 * by operand position (so equal in two listings with the same instructions). */
typedef struct {
  const rs_func *f;
  uint32_t nsites, W;
  uint32_t *op_site, *site_unit, *unit_first, *site_next;
  rs_word *in;
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
  for (uint32_t s = r->nsites; s-- > 0;) {
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

/* Sites reaching unit ua in a equal those reaching ub in b? Otherwise the first extra one. */
static bool same_reach(const rd *a, const rs_word *ca, uint32_t ua, const rd *b, const rs_word *cb, uint32_t ub,
                       uint32_t *extra) {
  uint32_t sa = a->unit_first[ua], sb = b->unit_first[ub];
  for (;;) {
    while (sa != UINT32_MAX && !rs_bs_get(ca, sa)) sa = a->site_next[sa];
    while (sb != UINT32_MAX && !rs_bs_get(cb, sb)) sb = b->site_next[sb];
    if (sa == UINT32_MAX && sb == UINT32_MAX) return true;
    if (sa != sb) {
      *extra = sa < sb ? sa : sb;
      return false;
    }
    sa = a->site_next[sa];
    sb = b->site_next[sb];
  }
}

static uint32_t site_addr(const rs_func *f, const rd *r, uint32_t s) {
  for (uint32_t i = 0; i < f->ninsts; i++) {
    const rs_inst *in = &f->insts[i];
    for (uint32_t o = 0; o < in->nops; o++) {
      uint32_t oi = in->first_op + o;
      if (r->op_site[oi] != UINT32_MAX && s >= r->op_site[oi] && s < r->op_site[oi] + rs_lanes_units(f->ops[oi].lanes))
        return in->addr;
    }
  }
  return 0;
}

static bool shape(const rs_func *a, const rs_func *b, verdict *v) {
  char x[24], y[24];
  if (a->ninsts != b->ninsts || a->nops != b->nops || a->nblocks != b->nblocks) {
    note(v, &v->shape, a, 0, NULL, "written: %u instructions, %u operands, %u blocks (input %u, %u, %u)", b->ninsts,
         b->nops, b->nblocks, a->ninsts, a->nops, a->nblocks);
    return false;
  }
  uint32_t before = v->shape;
  for (uint32_t i = 0; i < a->ninsts; i++) {
    const rs_inst *ia = &a->insts[i], *ib = &b->insts[i];
    if (ia->addr != ib->addr || ia->nops != ib->nops || ia->first_op != ib->first_op ||
        strcmp(rs_func_opcode(a, ia), rs_func_opcode(b, ib))) {
      note(v, &v->shape, a, ia->addr, NULL, "instruction differs: %s", rs_func_opcode(b, ib));
      continue;
    }
    for (uint32_t o = 0; o < ia->nops; o++) {
      const rs_operand *oa = &a->ops[ia->first_op + o], *ob = &b->ops[ib->first_op + o];
      bool la = alloc_op(a, oa), lb = alloc_op(b, ob);
      if (oa->kind != ob->kind || oa->flags != ob->flags || oa->lanes != ob->lanes || la != lb ||
          (!la && oa->kind == RS_OP_PREG && oa->reg != ob->reg) ||
          (la && rs_target_file_of(a->tgt, oa->reg) != rs_target_file_of(b->tgt, ob->reg)))
        note(v, &v->shape, a, ia->addr, ob->kind == RS_OP_PREG ? reg_str(b, ob->reg, y, sizeof y) : NULL,
             "operand %u changed kind, width, file or fixed register (input %s)", o,
             oa->kind == RS_OP_PREG ? reg_str(a, oa->reg, x, sizeof x) : "-");
    }
  }
  return v->shape == before;
}

static void reach(const rs_func *a, const rs_func *b, verdict *v) {
  rd ra, rb;
  rd_build(&ra, a);
  rd_build(&rb, b);
  size_t W = ra.W;
  rs_word *ca = rs_xcalloc(W, sizeof *ca), *cb = rs_xcalloc(W, sizeof *cb);
  char x[24], y[24];
  for (uint32_t bi = 0; bi < a->nblocks && ra.nsites == rb.nsites; bi++) {
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
          uint32_t extra;
          if (same_reach(&ra, ca, oa->reg + u, &rb, cb, ob->reg + u, &extra)) continue;
          note(v, &v->reach, a, in->addr, reg_str(b, ob->reg + u, y, sizeof y),
               "contributor set differs from %s's in the input (definition at %04x)", reg_str(a, oa->reg + u, x, sizeof x),
               (unsigned)site_addr(a, &ra, extra));
        }
      }
      rd_defs(&ra, in, ca);
      rd_defs(&rb, &b->insts[ii], cb);
    }
  }
  if (ra.nsites != rb.nsites) note(v, &v->reach, a, 0, NULL, "%u definition sites, input %u", rb.nsites, ra.nsites);
  free(ca);
  free(cb);
  rd_free(&ra);
  rd_free(&rb);
}

/* One register per input web in the written text, then the verifier with those registers. */
static void webs_verify(const rs_func *lf, const rs_func *b, verdict *v) {
  char x[24];
  int64_t *base = rs_xmalloc(sizeof *base * (lf->nvregs + 1));
  for (uint32_t i = 0; i < lf->nvregs; i++) base[i] = -1;
  for (uint32_t i = 0; i < lf->ninsts; i++) {
    const rs_inst *in = &lf->insts[i];
    for (uint32_t o = 0; o < in->nops; o++) {
      uint32_t oi = in->first_op + o;
      const rs_operand *op = &lf->ops[oi], *ob = &b->ops[oi];
      if (op->kind != RS_OP_VREG || ob->kind != RS_OP_PREG) continue;
      int64_t bs = (int64_t)ob->reg - (op->lanes ? __builtin_ctzll(op->lanes) / 2 : 0);
      if (base[op->reg] >= 0 && base[op->reg] != bs)
        note(v, &v->web, lf, in->addr, reg_str(b, ob->reg, x, sizeof x), "web %s is printed on two registers",
             lf->vregs[op->reg].name);
      else base[op->reg] = bs;
    }
  }
  rs_err e = {{0}};
  rs_problem *p = rs_problem_build(lf, &e);
  if (!p) {
    note(v, &v->verify, lf, 0, NULL, "no Problem: %s", e.msg);
  } else {
    rs_candidate c = {0};
    c.n = p->nvars;
    c.reg = rs_xcalloc(p->nvars + 1, sizeof *c.reg);
    for (uint32_t i = 0; i < p->nvars; i++) {
      int64_t bb = base[p->vars[i].fvreg];
      c.reg[i] = bb < 0 ? (rs_preg){0, 0} : (rs_preg){(uint32_t)bb, p->vars[i].full};
    }
    rs_check_result res;
    rs_result_init(&res);
    rs_check_native(p, &c, &res);
    if (res.verdict != RS_V_PASS) {
      uint32_t addr = 0;
      for (uint32_t i = 0; i < p->nconf; i++)
        if (rs_lanes_overlap(c.reg[p->conf[i].a].unit, p->conf[i].la, c.reg[p->conf[i].b].unit, p->conf[i].lb)) {
          addr = lf->insts[p->conf[i].inst].addr;
          break;
        }
      note(v, &v->verify, lf, addr, NULL, "verifier: %s: %s", rs_verdict_str(res.verdict), res.ndiag ? res.diag[0] : "");
    }
    free(c.reg);
    rs_problem_free(p);
  }
  free(base);
}

static unsigned r_count(const rs_func *f) {
  const rs_target *t = f->tgt;
  int64_t top = -1;
  for (uint32_t o = 0; o < f->nops; o++) {
    const rs_operand *op = &f->ops[o];
    if (op->kind != RS_OP_PREG || !op->lanes || rs_target_file_of(t, op->reg) != 0) continue; /* file 0: R */
    for (uint32_t k = 0; k < rs_lanes_units(op->lanes); k++)
      if (!(t->unit_flags[op->reg + k] & RS_UNIT_RESERVED) && (int64_t)(op->reg + k) > top) top = op->reg + k;
  }
  return top < 0 ? 0 : (unsigned)top + 3;
}

/* Validate `text` as a recolouring of the listing `in` (loaded, lifted). */
static void validate(const rs_module *in, const char *text, verdict *v, char *err, size_t errn) {
  memset(v, 0, sizeof *v);
  rs_err e = {{0}};
  rs_module *a = parse_phys(in->path, in->text, in->tgt, &e), *b = a ? parse_phys("written.sass", text, in->tgt, &e) : NULL;
  snprintf(err, errn, "%s", b ? "" : e.msg);
  v->parsed = b != NULL;
  if (b && (b->nfuncs != in->nfuncs || a->nfuncs != in->nfuncs)) {
    note(v, &v->shape, in->funcs[0], 0, NULL, "written: %u functions, input %u", b->nfuncs, in->nfuncs);
  } else if (b) {
    v->r_count = r_count(b->funcs[0]);
    for (uint32_t k = 0; k < in->nfuncs; k++) {
      if (!shape(a->funcs[k], b->funcs[k], v)) continue;
      reach(a->funcs[k], b->funcs[k], v);
      webs_verify(in->funcs[k], b->funcs[k], v);
    }
  }
  rs_module_free(a);
  rs_module_free(b);
}

/* ---- fixtures through the CLI ---- */

static unsigned ptxas_count(const char *sass) {
  char path[700];
  const char *suffixes[] = {".ptxas-v.txt", ".ptxas.txt"};
  unsigned n = 0;
  for (int i = 0; i < 2 && !n; i++) {
    snprintf(path, sizeof path, "%.*s%s", (int)(strlen(sass) - 5), sass, suffixes[i]);
    char *t = slurp(path);
    const char *u = t ? strstr(t, "Used ") : NULL;
    if (u) sscanf(u, "Used %u registers", &n);
    free(t);
  }
  return n;
}

/* Lines equal once register names are masked? Counts lines that differ at all. */
static void mask(const char *s, size_t n, char *out, size_t cap) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 2 < cap;) {
    bool start = i == 0 || !(s[i - 1] == '_' || (s[i - 1] >= 'A' && s[i - 1] <= 'Z') || (s[i - 1] >= '0' && s[i - 1] <= '9'));
    size_t j = i + (start && s[i] == 'U');
    if (start && (s[j] == 'R' || s[j] == 'P' || (s[j] == 'B' && j == i)) && j + 1 < n && s[j + 1] >= '0' && s[j + 1] <= '9') {
      for (j++; j < n && s[j] >= '0' && s[j] <= '9';) j++;
      out[k++] = '#';
      i = j;
      continue;
    }
    out[k++] = s[i++];
  }
  out[k] = 0;
}

static bool registers_only(const char *a, const char *b, uint32_t *changed) {
  char ma[1024], mb[1024];
  *changed = 0;
  while (*a && *b) {
    const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
    size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
    if (la != lb || memcmp(a, b, la)) {
      (*changed)++;
      mask(a, la, ma, sizeof ma);
      mask(b, lb, mb, sizeof mb);
      if (strcmp(ma, mb)) return fprintf(stderr, "differs outside registers:\n  %s\n  %s\n", ma, mb), false;
    }
    a += la + (ea != NULL);
    b += lb + (eb != NULL);
  }
  return !*a && !*b;
}

static int ok_total, fewer_total, refused_total;

static void check_dir(const char *dir, const char *tmp, int min) {
  char **list;
  int n = rs_check_list(dir, ".sass", &list);
  CHECKF(n >= min, "%s: %d listings", dir, n);
  for (int i = 0; i < n; i += rs_check_stride()) {
    char out[700], cmd[1600], msg[8192], err[512];
    snprintf(out, sizeof out, "%s/out.sass", tmp);
    unlink(out);
    snprintf(cmd, sizeof cmd, "%s regalloc %s --free -o %s 2>&1", rs_check_cli, list[i], out);
    int rc = rs_check_run(cmd, msg, sizeof msg);
    rs_err e = {{0}};
    rs_module *in = rs_module_load(list[i], NULL, &e);
    if (!in) { /* the parser refuses it: --free must refuse it the same way */
      char want[700];
      snprintf(want, sizeof want, "%s:", list[i]);
      CHECKF(rc == 2 && strstr(msg, want), "%s: rc %d: %s", list[i], rc, msg);
      printf("refused by the parser: %s\n", e.msg);
      refused_total++;
      continue;
    }
    unsigned ptx = ptxas_count(list[i]), before = 0, after = 0, ob = 0, oa = 0;
    const char *line = strstr(msg, ": R: ");
    CHECKF(rc == 0 && line, "%s: rc %d: %.600s", list[i], rc, msg);
    if (line) sscanf(line, ": R: %u -> %u registers, occupancy %u -> %u", &before, &after, &ob, &oa);
    /* one colouring per function: the Problem keeps apart what the re-lift would join */
    for (const char *q = msg; (q = strstr(q, " values, ")); q++)
      CHECKF(!strncmp(q, " values, 1 round,", 17), "%s: %.40s", list[i], q);
    char *ti = slurp(list[i]), *to = rc == 0 ? slurp(out) : NULL;
    verdict v;
    if (to) {
      validate(in, to, &v, err, sizeof err);
      uint32_t changed = 0;
      CHECKF(registers_only(ti, to, &changed) && (after == before || changed > 0), "%s: %u lines changed", list[i], changed);
      CHECKF(v.parsed, "%s: the written listing does not parse: %s", list[i], err);
      CHECKF(v.parsed && !v.shape && !v.reach && !v.web && !v.verify,
             "%s: shape %u, contributor sets %u, webs %u, verifier %u: %s", list[i], v.shape, v.reach, v.web, v.verify,
             v.first);
      CHECKF(v.r_count == after && after <= before && before == ptx && oa >= ob,
             "%s: ptxas %u, printed %u -> %u, written %u, occupancy %u -> %u", list[i], ptx, before, after, v.r_count, ob, oa);
      ok_total += v.parsed && !v.shape && !v.reach && !v.web && !v.verify && after <= ptx;
      fewer_total += after < ptx;
    } else {
      CHECKF(to != NULL, "%s: no written listing", list[i]);
    }
    free(ti);
    free(to);
    rs_module_free(in);
  }
  rs_check_free_list(list, n);
}

/* ---- mutated outputs ---- */

/* text with the byte range [off, off+len) replaced by s */
static char *splice(const char *text, size_t off, size_t len, const char *s) {
  size_t n = strlen(text), sl = strlen(s);
  char *o = rs_xmalloc(n - len + sl + 1);
  memcpy(o, text, off);
  memcpy(o + off, s, sl);
  strcpy(o + off + sl, text + off + len);
  return o;
}

static void test_mutations(const char *tmp) {
  const char *path = "tests/fixtures/sass/sgemm_t4x4.sm_89.sass";
  char out[700], cmd[1600], msg[8192], err[512];
  snprintf(out, sizeof out, "%s/mut.sass", tmp);
  snprintf(cmd, sizeof cmd, "%s regalloc %s --free -q -o %s 2>&1", rs_check_cli, path, out);
  CHECKF(rs_check_run(cmd, msg, sizeof msg) == 0 && !msg[0], "-q: %s", msg);
  rs_err e = {{0}};
  rs_module *in = rs_module_load(path, NULL, &e);
  char *text = slurp(out);
  CHECK(in && text);
  if (!in || !text) {
    rs_module_free(in);
    free(text);
    return;
  }
  verdict v;
  validate(in, text, &v, err, sizeof err);
  CHECKF(v.parsed && !v.shape && !v.reach && !v.web && !v.verify, "unmutated: %s %s", v.first, err);
  rs_module *w = parse_phys("written.sass", text, in->tgt, &e);
  const rs_func *g = w ? w->funcs[0] : NULL, *f = in->funcs[0];
  /* 1. one register: the first source of an FFMA in the loop becomes its second source's */
  uint32_t hits = 0;
  for (uint32_t i = g ? g->ninsts / 2 : 0; g && i < g->ninsts && !hits; i++) {
    const rs_inst *ins = &g->insts[i];
    if (strcmp(rs_func_opcode(g, ins), "FFMA") || ins->nops < 4) continue;
    const rs_operand *s1 = &g->ops[ins->first_op + 1], *s2 = &g->ops[ins->first_op + 2];
    if (s1->kind != RS_OP_PREG || s2->kind != RS_OP_PREG || s1->reg == s2->reg || !alloc_op(g, s2)) continue;
    char reg[24];
    reg_str(g, s2->reg, reg, sizeof reg);
    char *mut = splice(text, s1->text_off, s1->text_len, reg);
    validate(in, mut, &v, err, sizeof err);
    CHECKF(v.reach > 0 && v.first_addr == ins->addr && !strcmp(v.first_reg, reg) && strstr(v.first, "sgemm_tiled") &&
               strstr(v.first, "contributor set differs"),
           "one register at %04x -> %s: %s", (unsigned)ins->addr, reg, v.first);
    printf("mutation caught: %s\n", v.first);
    free(mut);
    hits++;
  }
  CHECK(hits == 1);
  /* 2. a whole web moved onto the register of a value it interferes with: the contributor sets
   * change and, independently, the verifier rejects it (dataflow) */
  rs_problem *p = rs_problem_build(f, &e);
  const rs_conflict *c = NULL;
  for (uint32_t i = 0; p && i < p->nconf && !c; i++)
    if (p->vars[p->conf[i].a].width == 1 && p->vars[p->conf[i].b].width == 1 &&
        !strcmp(f->tgt->classes[p->vars[p->conf[i].a].cls].name, "r32") &&
        !strcmp(f->tgt->classes[p->vars[p->conf[i].b].cls].name, "r32"))
      c = &p->conf[i];
  CHECK(c != NULL);
  if (c && g) {
    uint32_t va = p->vars[c->a].fvreg, vb = p->vars[c->b].fvreg, rb = UINT32_MAX;
    for (uint32_t o = 0; o < f->nops && rb == UINT32_MAX; o++)
      if (f->ops[o].kind == RS_OP_VREG && f->ops[o].reg == vb) rb = g->ops[o].reg;
    char reg[24], *mut = rs_xstrndup(text, strlen(text));
    reg_str(g, rb, reg, sizeof reg);
    for (uint32_t o = f->nops; o-- > 0;) /* back to front: offsets stay valid */
      if (f->ops[o].kind == RS_OP_VREG && f->ops[o].reg == va && g->ops[o].text_len) {
        char *m2 = splice(mut, g->ops[o].text_off, g->ops[o].text_len, reg);
        free(mut);
        mut = m2;
      }
    validate(in, mut, &v, err, sizeof err);
    CHECKF(v.parsed && v.reach > 0 && v.verify > 0 && !v.web, "web %s moved onto %s: reach %u verify %u web %u: %s",
           f->vregs[va].name, reg, v.reach, v.verify, v.web, v.first);
    free(mut);
  }
  /* 3. a pair moved to an odd register: the written listing no longer parses (file:line) */
  int32_t pair = -1;
  for (uint32_t i = 0; p && i < p->nvars && pair < 0; i++)
    if (p->vars[i].width == 2 && !strcmp(f->tgt->classes[p->vars[i].cls].name, "r64")) pair = (int32_t)p->vars[i].fvreg;
  CHECK(pair >= 0);
  if (pair >= 0 && g) {
    unsigned top = r_count(g) - 3 + 1; /* first register above the highest used */
    char *mut = rs_xstrndup(text, strlen(text));
    for (uint32_t o = f->nops; o-- > 0;)
      if (f->ops[o].kind == RS_OP_VREG && f->ops[o].reg == (uint32_t)pair && g->ops[o].text_len) {
        char reg[24];
        reg_str(g, (top | 1) + (uint32_t)__builtin_ctzll(f->ops[o].lanes) / 2, reg, sizeof reg);
        char *m2 = splice(mut, g->ops[o].text_off, g->ops[o].text_len, reg);
        free(mut);
        mut = m2;
      }
    validate(in, mut, &v, err, sizeof err);
    char want[64];
    snprintf(want, sizeof want, "R%u is not an aligned pair", top | 1);
    CHECKF(!v.parsed && strstr(err, "written.sass:") && strstr(err, want), "odd pair: %s", err);
    free(mut);
  }
  rs_problem_free(p);
  rs_module_free(w);
  rs_module_free(in);
  free(text);
  unlink(out);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  char tmp[] = "/tmp/rs_test_sass_free.XXXXXX";
  CHECK(mkdtemp(tmp) != NULL);
  test_mutations(tmp);
  check_dir("tests/fixtures/sass/front", tmp, 20);
  check_dir("tests/fixtures/sass", tmp, 20);
  check_dir("tests/fixtures/sass-real", tmp, 15);
  printf("regalloc --free checked from outside: %d listings valid and <= ptxas (%d with fewer R), %d refused by the "
         "parser\n",
         ok_total, fewer_total, refused_total);
  CHECK(ok_total >= 55 / rs_check_stride());
  char out[700];
  snprintf(out, sizeof out, "%s/out.sass", tmp);
  unlink(out);
  rmdir(tmp);
  return rs_check_done("test_sass_free");
}
