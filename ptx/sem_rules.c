/* sem_rules.c - node construction with the canonicalising rules that make PTX and SASS meet:
 * x+0, x*1, x<<k = x*2^k, constants folded, sm_90's shared window base as address 0, compares up
 * to negation, LOP3 truth tables with constant inputs. */
#include "ptx/sem_int.h"
#include <stdio.h>
#include <stdlib.h>

/* ---- node construction with the canonicalising rules ---- */
rs_sarg rs_sem_leaf_const(uint64_t v) {
  rs_sarg a = {RS_SA_LEAF, true, hmix(hs("const"), v), v, 0};
  return a;
}
rs_sarg rs_sem_leaf_other(uint64_t colour) {
  rs_sarg a = {RS_SA_LEAF, false, colour, 0, 0};
  return a;
}

static bool commutes(const char *op) {
  static const char *const c[] = {"add", "mul", "mulw", "and", "or", "xor", "fadd", "fmul", "dadd", "dmul", "ffma",
                                  "dfma", "imax", "imin", "umax", "umin", "fmax", "fmin", "pand", "por", "pxor", "mulhi"};
  for (size_t i = 0; i < sizeof c / sizeof *c; i++)
    if (!strcmp(op, c[i])) return true;
  return false;
}

rs_sarg rs_sem_node(B *b, const char *op, uint64_t opc, const rs_sarg *a, unsigned na, unsigned width) {
  rs_snode n;
  memset(&n, 0, sizeof n);
  n.op = opc ? opc : hs(op);
  n.na = (uint8_t)na;
  n.width = (uint8_t)width;
  n.comm = op && commutes(op);
  n.inst = b->cur_inst;
  n.internal = true; /* the statement's top node clears it */
  n.unext = UINT32_MAX;
  for (unsigned i = 0; i < na; i++) n.a[i] = a[i];
  RS_PUSH(b->g->nodes, b->g->nnodes, b->g->capnodes, n);
  uint32_t id = b->g->nnodes - 1;
  for (unsigned i = 0; i < na; i++)
    if (a[i].kind == RS_SA_USE) {
      RS_PUSH(b->g->ref_node, b->g->nrefs, b->g->caprefs, id);
      b->g->ref_arg = rs_xrealloc(b->g->ref_arg, sizeof *b->g->ref_arg * b->g->caprefs);
      b->g->ref_use = rs_xrealloc(b->g->ref_use, sizeof *b->g->ref_use * b->g->caprefs);
      b->g->ref_arg[b->g->nrefs - 1] = i;
      b->g->ref_use[b->g->nrefs - 1] = a[i].idx;
    }
  rs_sarg r = {RS_SA_NODE, false, 0, 0, id};
  return r;
}

static const rs_snode *N(const B *b, rs_sarg a) { return a.kind == RS_SA_NODE ? &b->g->nodes[a.idx] : NULL; }

/* The colour of a leaf an argument is or reads (through a register), or 0. */
static uint64_t leaf_of(const B *b, rs_sarg a) {
  if (a.kind == RS_SA_LEAF) return a.leaf;
  if (a.kind != RS_SA_USE) return 0;
  const rs_suse *u = &b->g->uses[a.idx];
  if (u->res[1] - u->res[0] != 1) return 0;
  const rs_ssite *s = &b->g->sites[b->g->ress[u->res[0]]];
  if (s->node == UINT32_MAX || !b->g->nodes[s->node].leaf) return 0;
  return b->g->nodes[s->node].op;
}

/* sm_90 addresses shared memory from its cluster window, (SR_CgaCtaId << 24) + 0x400: that
 * base is PTX's shared address 0 (LEA R9, R10(SR_CgaCtaId), R9(0x400), 0x18), and the window plus
 * 0x400 + k is PTX's address k (a variable's offset folded in: VIADD R28, R28(0x400), 0x800). The
 * PTX address, or -1. */
static int64_t shared_base(const B *b, rs_sarg x, rs_sarg y) {
  for (int k = 0; k < 2; k++, (void)0) {
    rs_sarg m = k ? y : x, c = k ? x : y;
    const rs_snode *n = m.kind == RS_SA_NODE ? &b->g->nodes[m.idx] : NULL;
    if (!n || n->op != hs("mul") || n->na != 2 || !num(c) || c.val < 0x400 || c.val > 0xffffff) continue;
    for (int j = 0; j < 2; j++)
      if (is_const(n->a[1 - j], 1u << 24) && leaf_of(b, n->a[j]) == rs_sem_sreg_colour("SR_CGACTAID", 11))
        return (int64_t)(c.val - 0x400);
  }
  return -1;
}

/* Does use a read only compares (every def reaching it a compare node)? */
static bool reads_cmp(const B *b, rs_sarg a) {
  if (a.kind != RS_SA_USE) return false;
  const rs_suse *u = &b->g->uses[a.idx];
  if (u->w != 1 || u->res[1] == u->res[0]) return false;
  for (uint32_t k = u->res[0]; k < u->res[1]; k++) {
    const rs_ssite *st = &b->g->sites[b->g->ress[k]];
    if (st->node == UINT32_MAX || b->g->nodes[st->node].val != CMP_MARK) return false;
  }
  return true;
}

/* The 32-bit multiply-by-constant node a use reads, when its one reaching def is that whole node;
 * else NULL. */
static const rs_snode *op_through(const B *b, rs_sarg x, const char *op) {
  if (x.kind == RS_SA_NODE) {
    const rs_snode *n = &b->g->nodes[x.idx];
    return !n->leaf && n->op == hs(op) && n->width == 1 && !n->acomm && !n->phi ? n : NULL;
  }
  if (x.kind != RS_SA_USE) return NULL;
  const rs_suse *u = &b->g->uses[x.idx];
  if (u->w != 1 || u->res[1] - u->res[0] != 1) return NULL;
  const rs_ssite *st = &b->g->sites[b->g->ress[u->res[0]]];
  if (st->node == UINT32_MAX || st->part != 0) return NULL;
  const rs_snode *n = &b->g->nodes[st->node];
  if (n->leaf || n->op != hs(op) || n->width != 1 || n->acomm || n->phi) return NULL;
  return n;
}

static const rs_snode *mul_through(const B *b, rs_sarg x) {
  const rs_snode *n = op_through(b, x, "mul");
  return n && n->na == 2 ? n : NULL;
}

/* x * c as a node, x * c2 folded into x * (c*c2). */
static rs_sarg mul_const(B *b, rs_sarg x, uint64_t c) {
  if (num(x)) return rs_sem_leaf_const((uint32_t)(x.val * c));
  const rs_snode *in = mul_through(b, x);
  for (int j = 0; in && j < 2; j++)
    if (num(in->a[j]) && !num(in->a[1 - j])) {
      rs_sarg m[2] = {in->a[1 - j], rs_sem_leaf_const((uint32_t)(c * in->a[j].val))};
      return rs_sem_node(b, "mul", 0, m, 2, 1);
    }
  rs_sarg m[2] = {x, rs_sem_leaf_const((uint32_t)c)};
  return rs_sem_node(b, "mul", 0, m, 2, 1);
}

/* How many low bits of 32-bit x are known zero: a constant's, a product's (the sum of its
 * factors'), a sum's (the fewest of its terms'), through a register with one def. */
static unsigned low_zeros(const B *b, rs_sarg x, int depth) {
  if (num(x)) return (uint32_t)x.val ? (unsigned)__builtin_ctz((uint32_t)x.val) : 32;
  const rs_snode *n = depth < 4 ? op_through(b, x, "mul") : NULL;
  if (n && n->na == 2) {
    unsigned z = low_zeros(b, n->a[0], depth + 1) + low_zeros(b, n->a[1], depth + 1);
    return z > 32 ? 32 : z;
  }
  n = depth < 4 ? op_through(b, x, "add") : NULL;
  if (n && n->na >= 2) {
    unsigned z = 32;
    for (unsigned i = 0; i < n->na; i++) {
      unsigned t = low_zeros(b, n->a[i], depth + 1);
      z = t < z ? t : z;
    }
    return z;
  }
  return 0;
}

/* op(args) after the rules; width is the value's units. */
rs_sarg rs_sem_mk(B *b, const char *op, rs_sarg *a, unsigned na, unsigned width) {
  if (!strcmp(op, "shl") && na == 2 && num(a[1]) && a[1].val < 64) {
    rs_sarg m = rs_sem_leaf_const(1ull << a[1].val);
    if (width == 1) m = rs_sem_leaf_const((uint32_t)(1ull << a[1].val));
    a[1] = m;
    op = "mul";
  }
  /* x | c is x + c when c < 2^k and x's k low bits are zero (no bit in common): ptxas writes
   * IADD3 R7, R9, 0x10 for `shl.b32 %r296, %r3, 6 ; or.b32 %r297, %r296, 16` (a wmma tile's column) */
  for (int j = 0; j < 2 && !strcmp(op, "or") && na == 2 && width == 1; j++)
    if (num(a[1 - j]) && !num(a[j]) && a[1 - j].val < ((uint64_t)1 << low_zeros(b, a[j], 0))) {
      op = "add";
      break;
    }
  int64_t sb = b->g->sass && !strcmp(op, "add") && na == 2 ? shared_base(b, a[0], a[1]) : -1;
  if (sb >= 0) return rs_sem_leaf_const((uint64_t)sb);
  if (!strcmp(op, "add") || !strcmp(op, "or") || !strcmp(op, "xor")) { /* drop zeros */
    unsigned k = 0;
    for (unsigned i = 0; i < na; i++)
      if (!is_const(a[i], 0)) a[k++] = a[i];
    if (k == 0) return rs_sem_leaf_const(0);
    if (k == 1) return a[0];
    if (k == 2 && !strcmp(op, "add") && num(a[0]) && num(a[1])) return rs_sem_leaf_const((uint32_t)(a[0].val + a[1].val));
    na = k;
    /* (x + c) + y through a register is (x + y) + c, and (x + c) + c2 is x + (c + c2): the
     * constant outermost, as ptxas fuses max(tid,768) + 255 - tid into IADD3 R, -R, 0xff, R76 */
    for (int j = 0; j < 2 && na == 2 && width == 1 && !strcmp(op, "add"); j++) {
      const rs_snode *in = op_through(b, a[j], "add");
      if (!in || in->na != 2 || num(a[1 - j])) continue;
      for (int c = 0; c < 2; c++)
        if (num(in->a[c]) && !num(in->a[1 - c])) {
          rs_sarg xy[2] = {in->a[1 - c], a[1 - j]};
          rs_sarg s2[2] = {rs_sem_mk(b, "add", xy, 2, 1), in->a[c]};
          return rs_sem_node(b, op, 0, s2, 2, 1);
        }
    }
  }
  if (!strcmp(op, "mul") && na == 2) {
    if (is_const(a[0], 0) || is_const(a[1], 0)) return rs_sem_leaf_const(0);
    if (is_const(a[0], 1)) return a[1];
    if (is_const(a[1], 1)) return a[0];
    if (num(a[0]) && num(a[1])) return rs_sem_leaf_const((uint32_t)(a[0].val * a[1].val));
    /* (x + y) * c through a register is x*c + y*c: ptxas factors (%r44*48 + %r46*2) into
     * IMAD R101, R11, 0x18, R10 ; IMAD.SHL.U32 R101, R101, 0x2 (wmma's shared tile address) */
    for (int k = 0; k < 2 && width == 1; k++) {
      const rs_snode *ad = num(a[k]) ? op_through(b, a[1 - k], "add") : NULL;
      if (!ad || ad->na < 2 || ad->na > 3 || a[k].val < 2) continue;
      bool factored = false; /* only a factored sum (a term of it a multiple) is distributed */
      bool plain = true; /* every term a multiple, a register or a constant (no negation: a - b) */
      for (unsigned i = 0; i < ad->na; i++) {
        factored |= mul_through(b, ad->a[i]) != NULL;
        plain &= ad->a[i].kind != RS_SA_NODE || mul_through(b, ad->a[i]) != NULL;
      }
      if (!plain) continue;
      if (!factored) continue;
      rs_sarg t[3];
      for (unsigned i = 0; i < ad->na; i++) t[i] = mul_const(b, ad->a[i], a[k].val);
      return rs_sem_mk(b, "add", t, ad->na, 1);
    }
    /* (x * c2) * c through a register is x * (c * c2): ptxas folds `shl %r12, %r2, 1` then
     * `shl %r237, %r12, 7` into one shift by 8 (LEA R129, R159, UR7, 0x8) */
    for (int k = 0; k < 2 && width == 1; k++) {
      const rs_snode *in = mul_through(b, a[1 - k]);
      if (!num(a[k]) || !in) continue;
      for (int j = 0; j < 2; j++)
        if (num(in->a[j]) && !num(in->a[1 - j])) {
          rs_sarg m[2] = {in->a[1 - j], rs_sem_leaf_const((uint32_t)(a[k].val * in->a[j].val))};
          return rs_sem_mk(b, "mul", m, 2, 1);
        }
    }
  }
  if (!strcmp(op, "pand") && na == 2) {
    if (is_const(a[1], UINT64_MAX)) return a[0];
    if (is_const(a[0], UINT64_MAX)) return a[1];
  }
  if (!strcmp(op, "por") && na == 2) { /* p | false (!PT) is p; p | true is true */
    if (is_const(a[1], 0)) return a[0];
    if (is_const(a[0], 0)) return a[1];
    if (is_const(a[0], UINT64_MAX) || is_const(a[1], UINT64_MAX)) return rs_sem_leaf_const(UINT64_MAX);
  }
  if ((!strcmp(op, "ineg") || !strcmp(op, "fneg") || !strcmp(op, "not")) && na == 1) {
    const rs_snode *x = N(b, a[0]);
    if (x && x->op == hs(op) && x->na == 1) return x->a[0];
    if (num(a[0]) && !strcmp(op, "ineg")) return rs_sem_leaf_const((uint32_t)(-(int64_t)a[0].val));
    if (num(a[0]) && !strcmp(op, "fneg")) return rs_sem_leaf_const(a[0].val ^ (a[0].val > 0xffffffffull ? 1ull << 63 : 0x80000000ull));
    if (num(a[0]) && !strcmp(op, "not")) return rs_sem_leaf_const((uint32_t)~a[0].val);
    if (!strcmp(op, "not") && x && x->val == CMP_MARK) return a[0]; /* compares are kept up to negation */
    if (!strcmp(op, "not") && reads_cmp(b, a[0])) return a[0];     /* also through a register: !P2 */
  }
  if (!strcmp(op, "sel") && na == 3) { /* polarity-free like the compares: sel(p,a,b) ~ sel(!p,b,a) */
    const rs_snode *x = N(b, a[0]);
    if (x && x->op == hs("not")) a[0] = x->a[0];
    /* a constant first (selp.f32 %f952, -inf, %f951, %p14 is FSEL R130, R130, -INF, !P0) */
    if (a[1].kind > a[2].kind || (a[1].kind == a[2].kind && a[1].leaf > a[2].leaf)) {
      rs_sarg t = a[1];
      a[1] = a[2];
      a[2] = t;
    }
    if (a[1].kind == RS_SA_USE && a[2].kind == RS_SA_USE && width == 1) {
      rs_sarg r = rs_sem_node(b, op, 0, a, na, width);
      b->g->nodes[r.idx].phi = true;
      return r;
    }
  }
  return rs_sem_node(b, op, 0, a, na, width);
}

/* The compare of the instruction's opcode, up to negation: (ORD a b) or (EQ {a b}). */
rs_sarg rs_sem_cmp(B *b, const rs_inst *in, rs_sarg x, rs_sarg y) {
  const char *op = rs_func_opcode(b->f, in);
  int kind = -1; /* 0 lt, 1 le, 2 gt, 3 ge, 4 eq, 5 ne */
  char ty = b->g->sass ? (op[0] == 'I' ? 's' : 'f') : 'i';
  static const char *const names[][4] = {{"lt", "lo", "ltu", NULL}, {"le", "ls", "leu", NULL},
                                         {"gt", "hi", "gtu", NULL}, {"ge", "hs", "geu", NULL},
                                         {"eq", "equ", NULL, NULL},  {"ne", "neu", NULL, NULL}};
  for (const char *p = strchr(op, '.'); p; p = strchr(p + 1, '.')) {
    const char *w = p + 1;
    size_t n = strcspn(w, ".");
    char lw[8] = "";
    if (n < sizeof lw)
      for (size_t i = 0; i < n; i++) lw[i] = (char)(w[i] >= 'A' && w[i] <= 'Z' ? w[i] + 32 : w[i]), lw[n] = 0;
    for (int k = 0; k < 6; k++)
      for (int j = 0; j < 4 && names[k][j]; j++)
        if (!strcmp(lw, names[k][j])) {
          kind = k;
          if (j == 1 && k < 4) ty = 'u';
        }
    if (!strcmp(lw, "ex")) kind = -2;
    if (!b->g->sass && n >= 2 && (lw[0] == 's' || lw[0] == 'u' || lw[0] == 'b' || lw[0] == 'f') && lw[1] >= '0' && lw[1] <= '9')
      ty = lw[0] == 'b' ? 'u' : lw[0];
    if (b->g->sass && !strcmp(lw, "u32")) ty = 'u';
  }
  if (kind < 0) return rs_sem_node(b, NULL, hmix(hs("opaque"), hs(op)), NULL, 0, 1);
  if (kind >= 4 && ty != 'f') ty = 'i'; /* == and != do not care about signedness */
  rs_sarg a[2] = {x, y};
  const char *name = kind >= 4 ? "@cmp.eq" : "@cmp.ord";
  if (kind == 2 || kind == 1) a[0] = y, a[1] = x; /* gt(a,b) = lt(b,a); le(a,b) = !lt(b,a) */
  rs_sarg r = rs_sem_node(b, NULL, hmix(hmix(hs("@cmp"), hs(name)), (uint64_t)ty), a, 2, 1);
  b->g->nodes[r.idx].comm = kind >= 4;
  b->g->nodes[r.idx].val = CMP_MARK;
  return r;
}

/* A LOP3 truth table with its constant inputs (0 or all ones) folded in. */
rs_sarg rs_sem_lop3(B *b, rs_sarg *in3, rs_sarg lut) {
  if (!num(lut)) return rs_sem_leaf_other(hs("lop3?"));
  unsigned t = (unsigned)lut.val & 0xff;
  rs_sarg var[3];
  unsigned nv = 0, pos[3];
  int fixed[3];
  for (unsigned i = 0; i < 3; i++) {
    fixed[i] = is_const(in3[i], 0) ? 0 : is_const(in3[i], 0xffffffffull) ? 1 : -1;
    if (fixed[i] < 0) pos[nv] = i, var[nv++] = in3[i];
  }
  unsigned red = 0; /* reduced table over the variables: index bit j = var j (var 0 high) */
  for (unsigned idx = 0; idx < (1u << nv); idx++) {
    unsigned bits[3];
    for (unsigned i = 0; i < 3; i++) bits[i] = fixed[i] < 0 ? 0 : (unsigned)fixed[i];
    for (unsigned j = 0; j < nv; j++) bits[pos[j]] = (idx >> (nv - 1 - j)) & 1;
    unsigned li = bits[0] * 4 + bits[1] * 2 + bits[2];
    if ((t >> li) & 1) red |= 1u << idx;
  }
  if (nv == 0) return rs_sem_leaf_const(red & 1 ? 0xffffffffull : 0);
  if (nv == 1 && red == 2) return var[0];
  if (nv == 1 && red == 1) return rs_sem_mk(b, "not", var, 1, 1);
  if (nv == 2) {
    if (red == 8) return rs_sem_mk(b, "and", var, 2, 1);
    if (red == 14) return rs_sem_mk(b, "or", var, 2, 1);
    if (red == 6) return rs_sem_mk(b, "xor", var, 2, 1);
    if (red == 4 || red == 2) { /* x & ~y */
      rs_sarg n = rs_sem_mk(b, "not", &var[red == 4 ? 1 : 0], 1, 1);
      rs_sarg a[2] = {var[red == 4 ? 0 : 1], n};
      return rs_sem_mk(b, "and", a, 2, 1);
    }
  }
  rs_sarg a[4] = {var[0], nv > 1 ? var[1] : rs_sem_leaf_const(0), nv > 2 ? var[2] : rs_sem_leaf_const(0)};
  return rs_sem_node(b, NULL, hmix(hmix(hs("lop3"), red), nv), a, nv, 1);
}
