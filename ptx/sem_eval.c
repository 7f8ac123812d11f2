/* sem_eval.c - the correspondence table's templates (ptx/match.h's small language) evaluated
 * for one instruction: operands as arguments, rules (`@cmp`, `@lop3`, carry halves `@lo`/`@hi`,
 * 64-bit halves `@lo64`/`@hi64`), nodes for the values and sites pointed at them. */
#include "ptx/sem_int.h"
#include <stdio.h>
#include <stdlib.h>

/* ---- template evaluation ---- */
typedef struct {
  const char *s;
  size_t i;
  bool bad;
} T;

static rs_sarg expr(B *b, T *t, const rs_inst *in, unsigned width);

/* Operand k of the instruction (printed order), or element e of a group (-1: whole). */
const pop *rs_sem_opnd(const B *b, uint32_t ii, unsigned k) {
  return k < b->inpop[ii] ? &b->pops[b->ipop[ii] + k] : NULL;
}

/* The resolved sources of use u's unit k. */
static const uint32_t *res(const B *b, uint32_t u, unsigned k, uint32_t *n) {
  const rs_suse *x = &b->g->uses[u];
  if (k >= x->w) {
    *n = 0;
    return NULL;
  }
  *n = x->res[k + 1] - x->res[k];
  return b->g->ress + x->res[k];
}

/* A use read as its constant when every resolved source is the same numeric constant. */
static rs_sarg use_arg(B *b, int32_t u) {
  rs_sarg a = {RS_SA_USE, false, 0, 0, (uint32_t)u};
  if (u < 0) return rs_sem_leaf_other(hs("?"));
  uint32_t n;
  const uint32_t *r = res(b, (uint32_t)u, 0, &n);
  if (!n || b->g->uses[u].w != 1) return a;
  uint64_t v = 0;
  for (uint32_t i = 0; i < n; i++) {
    const rs_ssite *s = &b->g->sites[r[i]];
    if (s->node == UINT32_MAX) return a;
    const rs_snode *x = &b->g->nodes[s->node];
    if (x->leaf != 1 || (s->part != 0 && x->val != 0)) return a; /* any unit of a zero is zero */
    if (i && x->val != v) return a;
    v = x->val;
  }
  return rs_sem_leaf_const(v);
}

/* ---- addresses: terms and one constant ----
 * ptxas folds constant adds into a load's immediate (`add.s32 %r210, %r208, 8192` then
 * `[%r210+8]` is `[R4+0x2008]`) and merges neighbouring loads into one wide load whose unit k
 * lies at +4k. So an address is flattened into its terms and one constant: a register whose one
 * reaching def is an add is looked through (at most a few levels), and the terms commute. */
typedef struct {
  rs_sarg t[4];
  unsigned n;
  uint64_t c;
  bool over;
} addr_t;

static void addr_term(B *b, addr_t *a, rs_sarg x, int depth);

/* The add node a use reads, when its one reaching def is that whole node; else UINT32_MAX. */
static uint32_t add_through(const B *b, rs_sarg x) {
  if (x.kind != RS_SA_USE) return UINT32_MAX;
  const rs_suse *u = &b->g->uses[x.idx];
  if (u->res[1] - u->res[0] != 1) return UINT32_MAX;
  for (unsigned k = 1; k < u->w; k++)
    if (u->res[k + 1] - u->res[k] != 1) return UINT32_MAX;
  const rs_ssite *st = &b->g->sites[b->g->ress[u->res[0]]];
  if (st->node == UINT32_MAX || st->part != 0) return UINT32_MAX;
  const rs_snode *n = &b->g->nodes[st->node];
  if (n->leaf || n->op != hs("add") || n->acomm || n->width != (b->g->sass ? u->w : st->len)) return UINT32_MAX;
  for (unsigned k = 1; k < u->w; k++) { /* every unit of the use is the same node */
    const rs_ssite *sk = &b->g->sites[b->g->ress[u->res[k]]];
    if (sk->node != st->node || sk->part != k) return UINT32_MAX;
  }
  return st->node;
}

static void addr_term(B *b, addr_t *a, rs_sarg x, int depth) {
  if (num(x)) {
    a->c += x.val;
    return;
  }
  uint32_t n = depth < 4 ? (x.kind == RS_SA_NODE ? x.idx : add_through(b, x)) : UINT32_MAX;
  if (n != UINT32_MAX && !b->g->nodes[n].leaf && b->g->nodes[n].op == hs("add") && !b->g->nodes[n].acomm) {
    rs_snode y = b->g->nodes[n];
    addr_t sub = {{{0}}, 0, 0, false};
    for (unsigned k = 0; k < y.na; k++) addr_term(b, &sub, y.a[k], depth + 1);
    /* a register is looked through only when a constant lies behind it (what ptxas folds into
     * the immediate); a register holding a sum of registers stays a term, so its reads stay
     * evidence for it */
    if (x.kind == RS_SA_NODE || (sub.c && !sub.over)) {
      for (unsigned k = 0; k < sub.n; k++) {
        if (a->n == 4) a->over = true;
        else a->t[a->n++] = sub.t[k];
      }
      a->c += sub.c;
      a->over |= sub.over;
      return;
    }
  }
  if (a->n == 4) a->over = true;
  else a->t[a->n++] = x;
}

/* The flattened sum as one node: add(terms..., constant), its terms commuting; offsets wrap in 32
 * bits (shared) and stay small (global). */
static rs_sarg sum_node(B *b, addr_t *a) {
  a->c &= 0xffffffffu;
  if (!a->n) return rs_sem_leaf_const(a->c);
  if (a->n == 1 && !a->c) return a->t[0];
  if (a->c && a->n < 4) a->t[a->n++] = rs_sem_leaf_const(a->c);
  rs_sarg r = rs_sem_node(b, NULL, hs("add"), a->t, a->n, 2);
  b->g->nodes[r.idx].acomm = true;
  return r;
}

/* Memory operand p's address plus extra bytes: add(terms..., constant), the terms commuting. */
static rs_sarg mem_addr_more(B *b, const pop *p, uint64_t extra, const rs_sarg *more);
static rs_sarg mem_addr(B *b, const pop *p, uint64_t extra) { return mem_addr_more(b, p, extra, NULL); }

/* The same with one more term (a wmma C fragment's row offset, sem_frag.c). */
static rs_sarg mem_addr_more(B *b, const pop *p, uint64_t extra, const rs_sarg *more) {
  rs_sarg t[3];
  unsigned n = 0;
  if (p->use >= 0) {
    t[n] = use_arg(b, p->use);
    if (p->scale > 1) {
      rs_sarg m[2] = {t[n], rs_sem_leaf_const(p->scale)};
      t[n] = rs_sem_mk(b, "mul", m, 2, 1);
    }
    n++;
  }
  if (p->use2 >= 0) t[n++] = use_arg(b, p->use2);
  int64_t po = p->sym && !b->g->sass ? rs_sem_param_off(b, b->src + p->sym, p->symlen) : -1;
  if (po >= 0) return rs_sem_leaf_other(hmix(hs("param"), (uint64_t)(po + p->imm + (int64_t)extra)));
  int64_t so = p->sym && !b->g->sass ? rs_sem_shared_off(b, b->src + p->sym, p->symlen) : -1;
  if (so >= 0) t[n++] = rs_sem_leaf_const((uint32_t)so);
  else if (p->sym && !b->g->sass) t[n++] = rs_sem_leaf_other(hmix(hs("sym"), rs_hash_bytes(b->src + p->sym, p->symlen, 0)));
  addr_t a = {{{0}}, 0, (uint64_t)p->imm + extra, false};
  for (unsigned k = 0; k < n; k++) addr_term(b, &a, t[k], 0);
  if (more) addr_term(b, &a, *more, 0);
  if (more && (a.over || (a.n == 4 && (a.c & 0xffffffffu)))) return rs_sem_leaf_other(hs("addr?"));
  if (a.over || (a.n == 4 && (a.c & 0xffffffffu))) { /* too many terms to flatten: the operand as printed */
    a.n = 0;
    a.c = (uint64_t)p->imm + extra;
    for (unsigned k = 0; k < n && a.n < 3; k++) {
      if (num(t[k])) a.c += t[k].val;
      else a.t[a.n++] = t[k];
    }
  }
  return sum_node(b, &a);
}

/* A fragment load's address (LDSM, an LDG of a wmma C fragment) without its lane terms: ptxas
 * adds each lane's offset inside the fragment (computed from SR_LANEID, the stride and constants)
 * to the fragment's base, which is all PTX names. A term is dropped only when it depends on the
 * lane and otherwise on constants and parameters alone (rs_sem_lane_kind); an add holding the
 * lane is looked through. A lane term mixed with anything else cannot be separated: `over`. */
static void lane_term(B *b, addr_t *a, rs_sarg x, int depth) {
  if (num(x)) {
    a->c += x.val;
    return;
  }
  int k = rs_sem_lane_kind(b, x);
  if (k) { /* an add is looked through (a parameter added to a lane term is the base) */
    uint32_t n = depth < 6 ? (x.kind == RS_SA_NODE ? x.idx : add_through(b, x)) : UINT32_MAX;
    if (n != UINT32_MAX && !b->g->nodes[n].leaf && b->g->nodes[n].op == hs("add")) {
      rs_snode y = b->g->nodes[n];
      for (unsigned i = 0; i < y.na; i++) lane_term(b, a, y.a[i], depth + 1);
      return;
    }
    if (k == 2) a->over = true;
    return;
  }
  addr_term(b, a, x, 0);
}

rs_sarg rs_sem_lane_addr(B *b, const pop *p, uint64_t extra, bool *ok) {
  addr_t a = {{{0}}, 0, (uint64_t)p->imm + extra, false};
  *ok = false;
  if (p->kind != PK_MEM || p->use2 >= 0 || p->use < 0) return rs_sem_leaf_other(hs("lane?"));
  rs_sarg x = use_arg(b, p->use);
  if (p->scale > 1) { /* [R20.X8] */
    rs_sarg m[2] = {x, rs_sem_leaf_const(p->scale)};
    x = rs_sem_mk(b, "mul", m, 2, 1);
  }
  lane_term(b, &a, x, 0);
  if (a.over || (a.n == 4 && (a.c & 0xffffffffu))) return rs_sem_leaf_other(hs("lane?"));
  *ok = true;
  return sum_node(b, &a);
}

rs_sarg rs_sem_mem_addr(B *b, const pop *p, uint64_t extra, const rs_sarg *more) { return mem_addr_more(b, p, extra, more); }

/* The constant part of memory operand p's address (nothing built): where a 16-bit load lies in
 * its 32-bit unit. */
static uint64_t mem_const(B *b, const pop *p) {
  addr_t a = {{{0}}, 0, (uint64_t)p->imm, false};
  if (p->use >= 0 && p->scale <= 1) addr_term(b, &a, use_arg(b, p->use), 0);
  if (p->use2 >= 0) addr_term(b, &a, use_arg(b, p->use2), 0);
  int64_t so = p->sym && !b->g->sass ? rs_sem_shared_off(b, b->src + p->sym, p->symlen) : -1;
  if (so >= 0) a.c += (uint64_t)so;
  return a.over ? (uint64_t)p->imm + (so > 0 ? (uint64_t)so : 0) : a.c;
}

static rs_sarg pop_arg(B *b, const pop *p, unsigned width) {
  switch (p->kind) {
  case PK_REG: {
    rs_sarg a = use_arg(b, p->use);
    if (p->flags & PF_H1) a = rs_sem_mk(b, "hi16", &a, 1, 1);
    if (p->flags & PF_ABS) a = rs_sem_mk(b, b->type == 'i' ? "iabs" : "fabs", &a, 1, width);
    if (p->flags & PF_NEG) a = rs_sem_mk(b, b->type == 'i' ? "ineg" : "fneg", &a, 1, width);
    if (p->flags & PF_NOT) a = rs_sem_mk(b, "not", &a, 1, 1);
    return a;
  }
  case PK_CONST:
    return rs_sem_leaf_const((uint64_t)p->imm);
  case PK_IMM: {
    uint64_t v;
    if (!rs_sem_imm_bits(b->src + p->off, p->len, b->type, &v)) return rs_sem_leaf_other(hs("badimm"));
    rs_sarg a = rs_sem_leaf_const(v);
    if (p->flags & PF_NEG) a = rs_sem_mk(b, b->type == 'i' ? "ineg" : "fneg", &a, 1, width);
    return a;
  }
  case PK_CB: {
    rs_sarg a = rs_sem_leaf_other(p->imm < 0 ? hs("cbank?") : rs_sem_cb_colour(b, p->bank, (uint32_t)p->imm));
    if (p->flags & PF_NEG) a = rs_sem_mk(b, b->type == 'i' ? "ineg" : "fneg", &a, 1, width);
    return a;
  }
  case PK_SREG:
    return rs_sem_leaf_other(rs_sem_sreg_colour(b->src + p->off, p->len));
  case PK_SYM: { /* PTX symbol address: a .shared variable's offset */
    int64_t so = rs_sem_shared_off(b, b->src + p->off, p->len);
    if (so >= 0) return rs_sem_leaf_const((uint32_t)so);
    return rs_sem_leaf_other(hmix(hs("sym"), rs_hash_bytes(b->src + p->off, p->len, 0)));
  }
  case PK_MEM:
    return mem_addr(b, p, 0);
  default:
    return rs_sem_leaf_other(hmix(hs("other"), rs_hash_bytes(b->src + p->off, p->len, 0)));
  }
}

static void skip_sp(T *t) {
  while (t->s[t->i] == ' ') t->i++;
}

static unsigned read_num(T *t) {
  unsigned v = 0;
  while (t->s[t->i] >= '0' && t->s[t->i] <= '9') v = v * 10 + (unsigned)(t->s[t->i++] - '0');
  return v;
}


/* The carry producer of the carry-in predicate read by instruction ii: its node, or -1. */
static int64_t carry_node(B *b, uint32_t ii) {
  for (unsigned k = b->inpop[ii]; k-- > 0;) {
    const pop *p = rs_sem_opnd(b, ii, k);
    if (p->kind != PK_REG || p->use < 0) continue;
    int fi = rs_target_file_of(b->f->tgt, b->g->uses[p->use].loc);
    if (fi < 0 || (strcmp(b->f->tgt->files[fi].name, "p") && strcmp(b->f->tgt->files[fi].name, "up"))) continue;
    uint32_t n;
    const uint32_t *r = res(b, (uint32_t)p->use, 0, &n);
    if (n != 1 || b->g->sites[r[0]].part != 0xff) return -1;
    return b->g->sites[r[0]].node;
  }
  return -1;
}

/* A 64-bit value read by its low unit (the low half of a 64-bit add or LEA). */
static rs_sarg wide(B *b, rs_sarg a) {
  if (a.kind != RS_SA_USE) return a;
  rs_sarg r = rs_sem_node(b, NULL, hs("@w"), &a, 1, 2);
  return r;
}

/* IMAD.HI's addend Rc:Rc+1 (read as one unit or as the pair) is (0, x): Rc holds 0 wherever it
 * comes from, and Rc+1 is x's register with x's reaching defs (x * M + (x << 32): the signed
 * division's mul.hi + add). */
static bool pair_addend(B *b, uint32_t c, uint32_t x) {
  uint32_t n, nx;
  const uint32_t *r = res(b, c, 0, &n);
  if (!n) return false;
  for (uint32_t i = 0; i < n; i++) {
    const rs_ssite *s = &b->g->sites[r[i]];
    if (s->node == UINT32_MAX || b->g->nodes[s->node].leaf != 1 || b->g->nodes[s->node].val != 0) return false;
  }
  if (b->g->uses[c].w < 2) return true; /* read as one unit: Rc+1 is x's register itself */
  r = res(b, c, 1, &n);
  const uint32_t *rx = res(b, x, 0, &nx);
  return n == nx && n && !memcmp(r, rx, n * sizeof *r);
}

static uint32_t as_node(B *b, rs_sarg v, unsigned width);

/* LEA ii's carry read by `LEA.HI.X.SX32 Rhi, Ra, RZ, 0x1, P` with Ra the LEA's addend: the high
 * half is Ra's sign (hi32(sext(Ra) << 1)), so the pair is zext32(x << k) + sext(Ra), a 32-bit
 * shift-add of two PTX values extended to 64 bits (`cvt.s64.s32` + `cvt.u64.u32` + `add.s64`). */
static bool lea_sx(B *b, uint32_t ii) {
  const pop *cp = rs_sem_opnd(b, ii, 1), *ad = rs_sem_opnd(b, ii, 3);
  if (!cp || cp->site < 0 || !ad || ad->kind != PK_REG || ad->use < 0 || ad->flags) return false;
  const rs_suse *au = &b->g->uses[ad->use];
  for (uint32_t u = 0; u < b->g->nuses; u++) {
    const rs_suse *us = &b->g->uses[u];
    if (us->raw[1] - us->raw[0] != 1 || b->g->srcs[us->raw[0]] != (uint32_t)cp->site) continue;
    uint32_t hj = us->inst;
    if (strcmp(rs_func_opcode(b->f, &b->f->insts[hj]), "LEA.HI.X.SX32")) continue;
    const pop *ra = rs_sem_opnd(b, hj, 1), *rb = rs_sem_opnd(b, hj, 2), *sh = rs_sem_opnd(b, hj, 3);
    uint64_t k;
    if (!ra || ra->kind != PK_REG || ra->use < 0 || ra->flags || !rb || rb->kind != PK_CONST || rb->imm != 0 || !sh ||
        sh->kind != PK_IMM || !rs_sem_imm_bits(b->src + sh->off, sh->len, 'i', &k) || k != 1)
      return false;
    const rs_suse *ru = &b->g->uses[ra->use];
    uint32_t n = ru->raw[1] - ru->raw[0];
    return ru->loc == au->loc && n == au->raw[1] - au->raw[0] &&
           !memcmp(b->g->srcs + ru->raw[0], b->g->srcs + au->raw[0], n * sizeof *b->g->srcs);
  }
  return false;
}

static rs_sarg call(B *b, T *t, const rs_inst *in, const char *name, size_t nl, unsigned width) {
  rs_sarg a[4];
  unsigned na = 0;
  char op[32];
  snprintf(op, sizeof op, "%.*s", (int)(nl < 31 ? nl : 31), name);
  if (t->s[t->i] == '(') {
    t->i++;
    skip_sp(t);
    while (t->s[t->i] && t->s[t->i] != ')') {
      if (na == 4) {
        t->bad = true;
        break;
      }
      /* the halves of mulw and the operands of a compare are 32-bit; @w reads 64 */
      unsigned w = (!strcmp(op, "mulw") || !strcmp(op, "@pair") || !strcmp(op, "@cmp") || !strcmp(op, "@lop3") || !strcmp(op, "ext") ||
                    !strcmp(op, "@x")) ? 1 : width;
      a[na++] = expr(b, t, in, w);
      skip_sp(t);
      if (t->s[t->i] == ',') t->i++;
      skip_sp(t);
    }
    if (t->s[t->i] == ')') t->i++;
  }
  uint32_t ii = (uint32_t)(in - b->f->insts);
  if (!strcmp(op, "copy") && na == 1) return a[0];
  if (!strcmp(op, "@cmp") && na == 2) return rs_sem_cmp(b, in, a[0], a[1]);
  if (!strcmp(op, "@cmpz") && na == 1) {
    rs_sarg x[2] = {a[0], rs_sem_leaf_const(0)};
    rs_sarg r = rs_sem_node(b, NULL, hmix(hmix(hs("@cmp"), hs("@cmp.eq")), (uint64_t)'i'), x, 2, 1);
    b->g->nodes[r.idx].comm = true;
    b->g->nodes[r.idx].val = CMP_MARK;
    return r;
  }
  if (!strcmp(op, "@lop3") && na == 4) return rs_sem_lop3(b, a, a[3]);
  if (!strcmp(op, "@sub32") && na == 1 && num(a[0]) && a[0].val <= 32) return rs_sem_leaf_const(32 - a[0].val);
  if (!strcmp(op, "@pow2") && na == 1 && num(a[0]) && a[0].val < 32) return rs_sem_leaf_const(1ull << a[0].val);
  if (!strcmp(op, "@imadhi") && na == 3) { /* an addend other than RZ names a pair: no guess */
    const pop *c = rs_sem_opnd(b, ii, 3);
    if (c && c->kind == PK_CONST && c->imm == 0) return rs_sem_mk(b, "mulhi", a, 2, width);
    const pop *x = rs_sem_opnd(b, ii, 1);
    if (c && c->kind == PK_REG && c->use >= 0 && x && x->kind == PK_REG && x->use >= 0 && !x->flags &&
        b->g->uses[c->use].loc + 1 == b->g->uses[x->use].loc && pair_addend(b, (uint32_t)c->use, (uint32_t)x->use)) {
      rs_sarg m = rs_sem_mk(b, "mulhi", a, 2, width);
      rs_sarg s2[2] = {m, a[0]};
      return rs_sem_mk(b, "add", s2, 2, width);
    }
    return rs_sem_node(b, NULL, hmix(hs("opaque"), hmix(hs("imadhi"), ii)), NULL, 0, width);
  }
  if (!strcmp(op, "@leasx") && na == 4) { /* a[0]: the LEA as a 64-bit shift-add; a[1..3]: x, Ra, k */
    if (!num(a[3]) || a[3].val >= 32 || !lea_sx(b, ii)) return a[0];
    rs_sarg m[2] = {a[1], rs_sem_leaf_const((uint32_t)(1ull << a[3].val))};
    rs_sarg x = rs_sem_mk(b, "mul", m, 2, 1);
    rs_sarg s2[2] = {rs_sem_node(b, NULL, hs("ext"), &x, 1, 2), rs_sem_node(b, NULL, hs("ext"), &a[2], 1, 2)};
    return rs_sem_mk(b, "add", s2, 2, 2);
  }
  if (!strcmp(op, "@w") && na == 1) return wide(b, a[0]);
  if ((!strcmp(op, "@xhi") || !strcmp(op, "@yhi")) && na == 0) { /* a pattern factor's high half */
    uint32_t h = b->pat_hi[2 * ii + (op[1] == 'y')];
    const pop *p = h == UINT32_MAX ? NULL : rs_sem_opnd(b, h >> 8, h & 0xff);
    return p ? pop_arg(b, p, 1) : rs_sem_leaf_const(0);
  }
  if (!strcmp(op, "@pair") && na == 2) {
    if (num(a[0]) && is_const(a[1], 0)) return a[0]; /* a small constant reads the same at 64 bits */
    rs_sarg r = rs_sem_node(b, NULL, hs("@pair"), a, 2, 2);
    b->g->nodes[r.idx].pair = true;
    return r;
  }
  if (!strcmp(op, "@spilled") && na == 0) { /* what the one STL of this slot stored */
    uint32_t st = b->pat_of[ii];
    const pop *v = st == UINT32_MAX ? NULL : rs_sem_opnd(b, st, 1);
    if (v && v->kind == PK_REG && !v->flags) return pop_arg(b, v, width);
    return rs_sem_node(b, NULL, hmix(hs("opaque"), hmix(hs("fill"), ii)), NULL, 0, width);
  }
  if (!strcmp(op, "@pin") && na == 1) { /* the pattern's value, held by a later instruction (@pat) */
    b->pat_node[ii] = as_node(b, a[0], width);
    return rs_sem_node(b, NULL, hmix(hs("opaque"), hmix(hs("pin"), ii)), NULL, 0, width);
  }
  if (!strcmp(op, "@pat") && na == 0) {
    uint32_t w = b->pat_of[ii];
    if (w != UINT32_MAX && b->pat_node[w] != UINT32_MAX) return (rs_sarg){RS_SA_NODE, false, 0, 0, b->pat_node[w]};
    return rs_sem_node(b, NULL, hmix(hs("opaque"), hmix(hs("pat"), ii)), NULL, 0, width);
  }
  if (!strcmp(op, "@x") && na == 1) { /* a LEA index: 64-bit when its register is the low half of one */
    if (a[0].kind == RS_SA_USE) { /* any def reaching it (a loop's pointer: several) 64-bit? */
      const rs_suse *u = &b->g->uses[a[0].idx];
      for (uint32_t k = u->res[0]; k < u->res[1]; k++) {
        const rs_ssite *st = &b->g->sites[b->g->ress[k]];
        if (st->node != UINT32_MAX && st->part == 0 &&
            (b->g->nodes[st->node].width == 2 || b->g->nodes[st->node].unext != UINT32_MAX ||
             b->g->nodes[st->node].cbo))
          return wide(b, a[0]);
      }
      return rs_sem_node(b, NULL, hs("ext"), a, 1, 2);
    }
    return a[0]; /* a constant or a 64-bit parameter as it is */
  }
  if (!strcmp(op, "ext") && na == 1) {
    if (num(a[0])) return a[0]; /* a small constant reads the same at 64 bits */
    return rs_sem_node(b, NULL, hs("ext"), a, 1, 2);
  }
  if (!strncmp(op, "@minmax.", 8) && na == 3 && num(a[2])) {
    char nm[16];
    snprintf(nm, sizeof nm, "%c%s", op[8] == 's' ? 'i' : op[8], a[2].val ? "min" : "max");
    return rs_sem_mk(b, nm, a, 2, width);
  }
  /* -0 + x, or x + -0 (sm_75 prints HADD2.F32 R158, R120.H0_H0, -RZ.H0_H0) */
  if (!strcmp(op, "@h2f") && na == 2 && num(a[0]) && (a[0].val & 0x7fffffff) == 0) return rs_sem_mk(b, "h2f", &a[1], 1, 1);
  if (!strcmp(op, "@h2f") && na == 2 && num(a[1]) && (a[1].val & 0x7fffffff) == 0) return rs_sem_mk(b, "h2f", &a[0], 1, 1);
  if (!strcmp(op, "@hconst") && na == 4 && num(a[0]) && (a[0].val & 0x7fff) == 0 && is_const(a[1], 0) && num(a[2]) && num(a[3]))
    return rs_sem_leaf_const(((a[2].val & 0xffff) << 16) | (a[3].val & 0xffff));
  if (!strcmp(op, "@param") && na == 1) return a[0];
  if (!strcmp(op, "@lo") || !strcmp(op, "@hi")) return rs_sem_leaf_other(hs("@lohi")); /* handled by the statement */
  if (op[0] == '@') return rs_sem_node(b, NULL, hmix(hs("opaque"), hs(rs_func_opcode(b->f, in))), NULL, 0, width);
  return rs_sem_mk(b, op, a, na, width);
}

static rs_sarg expr(B *b, T *t, const rs_inst *in, unsigned width) {
  skip_sp(t);
  const char *s = t->s + t->i;
  uint32_t ii = (uint32_t)(in - b->f->insts);
  if (s[0] == '$') {
    t->i++;
    unsigned k = read_num(t);
    const pop *p = rs_sem_opnd(b, ii, k);
    if (!p) {
      t->bad = true;
      return rs_sem_leaf_other(hs("?"));
    }
    return pop_arg(b, p, width);
  }
  if (s[0] == '#') {
    t->i++;
    return rs_sem_leaf_const(read_num(t));
  }
  size_t n = 0;
  while (s[n] && s[n] != '(' && s[n] != ',' && s[n] != ')' && s[n] != ';') n++;
  t->i += n;
  return call(b, t, in, s, n, width);
}

/* The value of a destination: a rs_sem_node (marked not internal), or a leaf/use as a node of its own. */
static uint32_t as_node(B *b, rs_sarg v, unsigned width) {
  if (v.kind == RS_SA_NODE) {
    b->g->nodes[v.idx].internal = false;
    return v.idx;
  }
  rs_sarg r = rs_sem_node(b, NULL, v.kind == RS_SA_LEAF ? v.leaf : hs("copy"), &v, v.kind == RS_SA_USE, width);
  rs_snode *x = &b->g->nodes[r.idx];
  x->internal = false;
  if (v.kind == RS_SA_LEAF) x->leaf = v.num ? 1 : 2, x->val = v.val, x->na = 0;
  else x->copy = true;
  return r.idx;
}

/* A register that holds constant bank 0 word k, whatever moved it there (MOV, IMAD.MOV.U32 RZ, RZ,
 * c[0x0][k], LDC): marked like a ULDC.64 unit, so the pair of two such moves of k and k+4 reads as
 * the 64-bit word (a 64-bit parameter ptxas copies into a loop's pointer registers). */
static void cb_word(B *b, uint32_t ii, uint32_t n, uint64_t leaf) {
  for (unsigned k = 1; k < b->inpop[ii]; k++) {
    const pop *p = rs_sem_opnd(b, ii, k);
    if (p->kind == PK_CB && p->bank == 0 && p->imm >= 0 && !p->flags && rs_sem_cb_colour(b, 0, (uint32_t)p->imm) == leaf) {
      b->g->nodes[n].cbo = (uint32_t)p->imm + 1;
      return;
    }
  }
}

/* Give every site of pop p (element e, or all) node n from unit part on. */
static void assign(B *b, const pop *p, uint32_t n, unsigned part) {
  if (p->site < 0) return;
  for (unsigned k = 0; k < p->nsites; k++) {
    rs_ssite *s = &b->g->sites[p->site + (int32_t)k];
    s->node = n;
    s->part = (uint8_t)(b->g->sass ? part + k : part);
    s->len = (uint8_t)(b->g->sass ? 1 : p->w);
  }
}

static void opaque_dests(B *b, uint32_t ii, const char *why) {
  for (unsigned k = 0; k < b->inpop[ii]; k++) {
    const pop *p = rs_sem_opnd(b, ii, k);
    const pop *el = p->kind == PK_GROUP ? &b->pops[p->elt] : p;
    unsigned ne = p->kind == PK_GROUP ? p->nelt : 1, part = 0;
    for (unsigned e = 0; e < ne; e++) {
      if (el[e].site < 0) continue;
      rs_sarg r = rs_sem_node(b, NULL, hmix(hmix(hs("opaque"), hs(why)), ((uint64_t)ii << 8) | (k << 4) | e), NULL, 0, el[e].w);
      assign(b, &el[e], r.idx, part);
      b->g->nodes[r.idx].internal = false;
      part += el[e].w;
    }
  }
}

void rs_sem_note_unknown(rs_sgraph *g, const char *op) {
  for (uint32_t i = 0; i < g->nunknown; i++)
    if (!strcmp(g->unknown[i], op)) {
      g->nunknown_of[i]++;
      return;
    }
  RS_PUSH(g->unknown, g->nunknown, g->capunknown, rs_xstrndup(op, strlen(op)));
  g->nunknown_of = rs_xrealloc(g->nunknown_of, sizeof *g->nunknown_of * g->capunknown);
  g->nunknown_of[g->nunknown - 1] = 1;
}

/* Point the 32-bit destination d at unit 0 of the 64-bit value operand sp reads, when every def
 * reaching it is that one computed value (cvt.u32.u64: SASS reads the low register itself). */
static bool take_low(B *b, const pop *d, const pop *sp) {
  if (!sp || sp->kind != PK_REG || sp->use < 0 || d->kind != PK_REG || d->w != 1) return false;
  uint32_t n, node = UINT32_MAX;
  const uint32_t *r = res(b, (uint32_t)sp->use, 0, &n);
  for (uint32_t i = 0; i < n; i++) {
    const rs_ssite *st = &b->g->sites[r[i]];
    if (st->node == UINT32_MAX || st->part != 0 || b->g->nodes[st->node].width != 2 || b->g->nodes[st->node].leaf ||
        (node != UINT32_MAX && st->node != node))
      return false;
    node = st->node;
  }
  if (node == UINT32_MAX) return false;
  const rs_snode *x = &b->g->nodes[node];
  if (x->op == hs("ext") && x->na == 1) { /* the low unit of an extension is what was extended */
    rs_sarg a = x->a[0];
    assign(b, d, as_node(b, a, 1), 0);
    return true;
  }
  assign(b, d, node, 0);
  return true;
}

/* A load of 32-bit units (`$0=@units(ld.s,$1)`): unit k of the destination is its own load of
 * address + 4k, whatever the load's width, so two PTX ld.shared.f64 at a and a+8 meet the
 * LDS.128 ptxas merged them into; a PTX register of two units is the tuple of its two loads. */
static void units_load(B *b, uint32_t ii, const pop *d, const char *name, const pop *mp) {
  unsigned total = 0;
  const pop *el = d->kind == PK_GROUP ? &b->pops[d->elt] : d;
  unsigned ne = d->kind == PK_GROUP ? d->nelt : 1;
  for (unsigned e = 0; e < ne; e++) total += b->g->sass ? el[e].nsites : el[e].w;
  if (!mp || mp->kind != PK_MEM || !total || total > 8) {
    opaque_dests(b, ii, "units?");
    return;
  }
  uint32_t node[8];
  /* a global or shared load at a lane's own address in a function with HMMA: a wmma C fragment's
   * part (sem_frag.c), read at the fragment's base with the lane's offset dropped */
  bool lane = b->g->sass && (!strcmp(name, "ld.g") || !strcmp(name, "ld.s")) && mp->use >= 0 && rs_sem_has_mma(b) &&
              rs_sem_lane_kind(b, use_arg(b, mp->use)) != 0;
  for (unsigned k = 0; k < total; k++) {
    bool ok = true;
    rs_sarg ad = lane ? rs_sem_lane_addr(b, mp, 4u * k, &ok) : mem_addr(b, mp, 4u * k);
    if (!ok) {
      opaque_dests(b, ii, "lane?");
      return;
    }
    rs_sarg r = rs_sem_mk(b, !lane ? name : name[3] == 'g' ? "ld.g.lane" : "ld.s.lane", &ad, 1, 1);
    node[k] = as_node(b, r, 1);
  }
  for (unsigned k = 0; k + 1 < total; k++) b->g->nodes[node[k]].unext = node[k + 1];
  unsigned at = 0;
  for (unsigned e = 0; e < ne; e++) {
    const pop *x = &el[e];
    if (x->site < 0) {
      at += b->g->sass ? x->nsites : x->w;
      continue;
    }
    if (b->g->sass) {
      for (unsigned k = 0; k < x->nsites; k++) {
        rs_ssite *st = &b->g->sites[x->site + (int32_t)k];
        st->node = node[at + k], st->part = 0, st->len = 1;
      }
      at += x->nsites;
    } else if (x->w == 1) {
      assign(b, x, node[at++], 0);
    } else if (x->w == 2) {
      rs_sarg a[2] = {{RS_SA_NODE, false, 0, 0, node[at]}, {RS_SA_NODE, false, 0, 0, node[at + 1]}};
      rs_sarg t = rs_sem_node(b, NULL, hs("tuple"), a, 2, 2);
      b->g->nodes[t.idx].tuple = true;
      b->g->nodes[t.idx].internal = false;
      assign(b, x, t.idx, 0);
      at += 2;
    } else {
      rs_sarg r = rs_sem_node(b, NULL, hmix(hmix(hs("opaque"), hs("units")), ((uint64_t)ii << 8) | e), NULL, 0, x->w);
      b->g->nodes[r.idx].internal = false;
      assign(b, x, r.idx, 0);
      at += x->w;
    }
  }
}

/* A 16-bit load (`$0=@half16(ld.s,$1)`): the low or high half of the 32-bit unit it lies in, so a
 * PTX ld.shared.u16 at a+2 meets HADD2.F32 R, -RZ, R8.H1_H1 of the LDS.128 ptxas merged it into
 * (a 16-bit load ptxas kept reads the same way). The unit's other half is not looked at. */
static void half_load(B *b, uint32_t ii, const pop *d, const char *name, const pop *mp) {
  if (!mp || mp->kind != PK_MEM || d->kind != PK_REG || d->site < 0) {
    opaque_dests(b, ii, "half?");
    return;
  }
  uint64_t c = mem_const(b, mp);
  rs_sarg ad = mem_addr(b, mp, (c & 2) ? (uint64_t)-2 : 0);
  rs_sarg r = rs_sem_mk(b, name, &ad, 1, 1);
  if (c & 2) r = rs_sem_mk(b, "hi16", &r, 1, 1);
  assign(b, d, as_node(b, r, 1), 0);
}

rs_sarg rs_sem_use_arg(B *b, int32_t u) { return use_arg(b, u); }
uint32_t rs_sem_as_node(B *b, rs_sarg v, unsigned width) { return as_node(b, v, width); }
void rs_sem_assign(B *b, const pop *p, uint32_t n, unsigned part) { assign(b, p, n, part); }
void rs_sem_opaque_dests(B *b, uint32_t ii, const char *why) { opaque_dests(b, ii, why); }

/* Evaluate instruction ii's row: nodes for its values, sites pointed at them. */
void rs_sem_eval_inst(B *b, uint32_t ii, bool count_unknown) {
  const rs_inst *in = &b->f->insts[ii];
  const rs_p2s_row *row = b->row[ii];
  b->cur_inst = ii;
  if (!row) {
    if (count_unknown) rs_sem_note_unknown(b->g, rs_func_opcode(b->f, in));
    opaque_dests(b, ii, rs_func_opcode(b->f, in));
    return;
  }
  b->type = row->type;
  if (!strcmp(row->sem, "-")) {
    opaque_dests(b, ii, "nosem");
    return;
  }
  T t = {row->sem, 0, false};
  while (t.s[t.i]) {
    skip_sp(&t);
    if (t.s[t.i] == '_' && t.s[t.i + 1] == '=') { /* a value nobody holds (a store): a node for the matching */
      t.i += 2;
      rs_sarg v = expr(b, &t, in, 1);
      if (v.kind == RS_SA_NODE) b->g->nodes[v.idx].internal = false;
      skip_sp(&t);
      if (t.s[t.i] == ';') t.i++;
      continue;
    }
    if (t.s[t.i] != '$') break;
    t.i++;
    unsigned k = read_num(&t), e = UINT32_MAX;
    if (t.s[t.i] == '.') t.i++, e = read_num(&t);
    if (t.s[t.i] == '=') t.i++;
    const pop *p = rs_sem_opnd(b, ii, k);
    if (!p) break;
    const pop *d = p;
    unsigned part = 0;
    if (p->kind == PK_GROUP && e != UINT32_MAX && e < p->nelt) d = &b->pops[p->elt + e];
    unsigned width = p->w;
    if (p->kind == PK_GROUP && e == UINT32_MAX)
      for (unsigned x = 0; x < p->nelt; x++) width += b->pops[p->elt + x].w;
    if (!width) width = 1;
    size_t at = t.i;
    bool lo = !strncmp(t.s + at, "@lo(", 4), hi = !strncmp(t.s + at, "@hi(", 4);
    bool half = !strncmp(t.s + at, "@lo64(", 6) || !strncmp(t.s + at, "@hi64(", 6);
    if (lo) t.i += 4;
    if (half) { /* one 32-bit half of a 64-bit value the template computes whole */
      t.i += 6;
      rs_sarg w = expr(b, &t, in, 2);
      skip_sp(&t);
      if (t.s[t.i] == ')') t.i++;
      uint32_t wn = as_node(b, w, 2);
      assign(b, d, wn, t.s[at + 1] == 'h');
      if (b->pat_of[ii] == ii && d->site >= 0) { /* a pattern's wide product: its high unit is a partial sum */
        b->pat_node[ii] = wn;
        for (unsigned k = 1; k < d->nsites; k++) {
          rs_sarg r = rs_sem_node(b, NULL, hmix(hs("opaque"), hmix(hs("partial"), ((uint64_t)ii << 4) | k)), NULL, 0, 1);
          b->g->nodes[r.idx].internal = false;
          rs_ssite *st = &b->g->sites[d->site + (int32_t)k];
          st->node = r.idx, st->part = 0, st->len = 1;
        }
      }
      if (t.bad) break;
      skip_sp(&t);
      if (t.s[t.i] == ';') t.i++;
      continue;
    }
    if (!strncmp(t.s + at, "@units(", 7) || !strncmp(t.s + at, "@half16(", 8)) { /* @units(NAME,$k) */
      bool h16 = t.s[at + 1] == 'h';
      t.i += h16 ? 8 : 7;
      size_t nb = t.i;
      while (t.s[t.i] && t.s[t.i] != ',') t.i++;
      char nm[16];
      snprintf(nm, sizeof nm, "%.*s", (int)(t.i - nb < 15 ? t.i - nb : 15), t.s + nb);
      if (t.s[t.i] == ',') t.i++;
      skip_sp(&t);
      if (t.s[t.i] == '$') t.i++;
      const pop *mp = rs_sem_opnd(b, ii, read_num(&t));
      while (t.s[t.i] && t.s[t.i] != ';') t.i++;
      if (t.s[t.i] == ';') t.i++;
      if (h16) half_load(b, ii, p, nm, mp);
      else units_load(b, ii, p, nm, mp);
      continue;
    }
    if (!strncmp(t.s + at, "@frag(", 6)) { /* wmma fragments per lane (sem_frag.c) */
      t.i += 6;
      size_t nb = t.i;
      while (t.s[t.i] && t.s[t.i] != ')') t.i++;
      char nm[16];
      snprintf(nm, sizeof nm, "%.*s", (int)(t.i - nb < 15 ? t.i - nb : 15), t.s + nb);
      while (t.s[t.i] && t.s[t.i] != ';') t.i++;
      if (t.s[t.i] == ';') t.i++;
      if (!rs_sem_frag(b, ii, nm)) opaque_dests(b, ii, "frag?");
      continue;
    }
    if (!strncmp(t.s + at, "@cbunits($", 10)) { /* constant bank words, one per register */
      t.i += 10;
      const pop *cp = rs_sem_opnd(b, ii, read_num(&t));
      while (t.s[t.i] && t.s[t.i] != ';') t.i++;
      if (t.s[t.i] == ';') t.i++;
      if (!cp || cp->kind != PK_CB || cp->imm < 0 || p->kind != PK_REG || p->site < 0) {
        opaque_dests(b, ii, "cbunits?");
        continue;
      }
      for (unsigned k = 0; k < p->nsites; k++) {
        uint32_t off = (uint32_t)cp->imm + 4 * k;
        uint32_t n = as_node(b, rs_sem_leaf_other(rs_sem_cb_colour(b, cp->bank, off)), 1);
        if (cp->bank == 0) b->g->nodes[n].cbo = off + 1;
        rs_ssite *st = &b->g->sites[p->site + (int32_t)k];
        st->node = n, st->part = 0, st->len = 1;
      }
      continue;
    }
    if (!strncmp(t.s + at, "@low($", 6)) { /* the low unit of a 64-bit value, no instruction */
      t.i += 6;
      const pop *sp = rs_sem_opnd(b, ii, read_num(&t));
      while (t.s[t.i] && t.s[t.i] != ';') t.i++;
      if (t.s[t.i] == ';') t.i++;
      if (!take_low(b, d, sp)) opaque_dests(b, ii, "low?");
      continue;
    }
    rs_sarg v = hi ? rs_sem_leaf_other(0) : expr(b, &t, in, lo ? 2 : width);
    if (hi) {
      while (t.s[t.i] && t.s[t.i] != ';') t.i++;
      int64_t cn = carry_node(b, ii);
      if (cn >= 0) assign(b, d, (uint32_t)cn, 1);
      else opaque_dests(b, ii, "carry?");
    } else if (lo) {
      skip_sp(&t);
      if (t.s[t.i] == ',') t.i++;
      rs_sarg c = expr(b, &t, in, 1);
      (void)c;
      if (t.s[t.i] == ')') t.i++;
      uint32_t n = as_node(b, v, 2);
      assign(b, d, n, 0);
      /* the carry-out predicate: operand of the @lo's second argument */
      const char *q = strrchr(row->sem, '$');
      const pop *cp = q ? rs_sem_opnd(b, ii, (unsigned)strtoul(q + 1, NULL, 10)) : NULL;
      if (cp && cp->site >= 0)
        for (unsigned u = 0; u < cp->nsites; u++) b->g->sites[cp->site + (int32_t)u].node = n,
                                                  b->g->sites[cp->site + (int32_t)u].part = 0xff;
    } else if (p->kind == PK_GROUP && e == UINT32_MAX) { /* a vector: elements are slices */
      uint32_t n = as_node(b, v, width);
      for (unsigned x = 0; x < p->nelt; x++) {
        assign(b, &b->pops[p->elt + x], n, part);
        part += b->pops[p->elt + x].w;
      }
    } else {
      uint32_t n = as_node(b, v, width);
      assign(b, d, n, 0);
      if (b->g->sass && width == 1 && v.kind == RS_SA_LEAF && !v.num) cb_word(b, ii, n, v.leaf);
    }
    if (t.bad) break;
    skip_sp(&t);
    if (t.s[t.i] == ';') t.i++;
  }
  /* PTX ld.param of a vector or with an offset: every element its own parameter slot */
  if (!b->g->sass && !strncmp(row->sem, "$0=@param", 9)) {
    const pop *d = rs_sem_opnd(b, ii, 0), *m = rs_sem_opnd(b, ii, 1);
    if (d && m && m->kind == PK_MEM && m->sym) {
      int64_t base = rs_sem_param_off(b, b->src + m->sym, m->symlen);
      const pop *el = d->kind == PK_GROUP ? &b->pops[d->elt] : d;
      unsigned ne = d->kind == PK_GROUP ? d->nelt : 1;
      int64_t at = base + m->imm;
      for (unsigned e = 0; e < ne; e++) {
        rs_sarg v = base < 0 ? rs_sem_leaf_other(hs("param?")) : rs_sem_leaf_other(hmix(hs("param"), (uint64_t)at));
        assign(b, &el[e], as_node(b, v, el[e].w), 0);
        at += 4 * el[e].w;
      }
    }
  }
}

