/* sem_pattern.c - SASS values that ptxas computes in several instructions none of which holds a
 * PTX value alone: found here by their shape, before evaluation, and given the rows of
 * ptx/ptx2sass.c's rs_p2s_sass_mul64 (the table says what each instruction is a part of).
 *
 * mul.lo.s64 x, y (and mul.lo.s64 + add.s64 z) ptxas writes as
 *     IMAD          t  = x.hi * y.lo (+ RZ)          cross products (one when y.hi is 0)
 *     IMAD          t' = x.lo * y.hi + t
 *     IMAD.WIDE.U32 w  = x.lo * y.lo (+ z)           64-bit: w.lo is the product's low half
 *     IADD3 / IMAD.IADD  h = w.hi + t'               the product's high half
 * so w.lo and h are one 64-bit value, and x, y are pairs of registers (x.lo, x.hi) that need not
 * be adjacent.
 *
 * ex2.approx.f32 (no .ftz) ptxas wraps in a denormal fix-up, FSETP.GEU P0, x, -126 ; @!P0 FMUL x,
 * x, 0.5 ; MUFU.EX2 y, x ; @!P0 FMUL y, y, y: the two predicated FMULs are copies as far as the
 * value goes (ex2(x/2)^2 = ex2(x)). rcp.rn.f32 is MUFU.RCP r, x ; FFMA e, r, x, -1 ; FADD.FTZ n,
 * -e, -RZ ; FFMA r', r, n, r (one Newton step), or the slow path's result (MOV r', R0 after CALL
 * ...rcp_rn_f32_slowpath): r' is rcp.rn(x) on both paths.
 *
 * A spill: STL [R1+k], Rx stores a value in the stack frame and LDL Ry, [R1+k] fills it back;
 * when the slot is stored once in the function, the fill is a copy of what the STL read. */
#include "ptx/sem_int.h"
#include <stdio.h>
#include <stdlib.h>

/* Operand k of instruction i and operand l of j: the same register with the same reaching defs,
 * or the same printed constant. */
static bool same_opnd(const B *b, uint32_t i, unsigned k, uint32_t j, unsigned l) {
  const pop *p = rs_sem_opnd(b, i, k), *q = rs_sem_opnd(b, j, l);
  if (!p || !q || p->kind != q->kind || (p->flags & ~PF_H1) || (q->flags & ~PF_H1)) return false;
  if (p->kind != PK_REG) return p->len == q->len && !memcmp(b->src + p->off, b->src + q->off, p->len);
  if (p->use < 0 || q->use < 0) return false;
  const rs_suse *u = &b->g->uses[p->use], *v = &b->g->uses[q->use];
  uint32_t nu = u->raw[1] - u->raw[0], nv = v->raw[1] - v->raw[0];
  return u->loc == v->loc && u->w == v->w && nu == nv &&
         !memcmp(b->g->srcs + u->raw[0], b->g->srcs + v->raw[0], nu * sizeof *b->g->srcs);
}

static bool is_rz(const B *b, uint32_t i, unsigned k) {
  const pop *p = rs_sem_opnd(b, i, k);
  return p && p->kind == PK_CONST && p->imm == 0;
}

/* The one site reaching operand k of instruction i (a 32-bit register read), or UINT32_MAX. */
static uint32_t one_def(const B *b, uint32_t i, unsigned k) {
  const pop *p = rs_sem_opnd(b, i, k);
  if (!p || p->kind != PK_REG || p->use < 0 || p->flags) return UINT32_MAX;
  const rs_suse *u = &b->g->uses[p->use];
  if (u->w != 1 || u->raw[1] - u->raw[0] != 1) return UINT32_MAX;
  return b->g->srcs[u->raw[0]];
}

static bool op_is(const B *b, uint32_t i, const char *const *names) {
  const char *op = rs_func_opcode(b->f, &b->f->insts[i]);
  for (; *names; names++)
    if (!strcmp(op, *names)) return true;
  return false;
}

static const char *const imad_names[] = {"IMAD", "UIMAD", NULL};
static const char *const wide_names[] = {"IMAD.WIDE.U32", "UIMAD.WIDE.U32", NULL};

/* A cross product: IMAD m, n, (RZ | another cross product); up to two are collected. */
typedef struct {
  uint32_t inst[2];
  unsigned n;
} cross_t;

static bool crosses(const B *b, uint32_t site, cross_t *c, int depth) {
  uint32_t i = b->g->sites[site].inst;
  if (depth > 1 || b->f->insts[i].flags & RS_I_PREDICATED || !op_is(b, i, imad_names) || b->inpop[i] != 4) return false;
  if (b->pat_of[i] != UINT32_MAX) return false;
  c->inst[c->n++] = i;
  if (is_rz(b, i, 3)) return true;
  uint32_t s = one_def(b, i, 3);
  return s != UINT32_MAX && crosses(b, s, c, depth + 1);
}

/* Which factor's high half cross product i supplies: operands (m, n) with m = x.lo gives y.hi = n;
 * m = y.lo gives x.hi = n (either order). Sets hi[0] (x.hi) or hi[1] (y.hi); false if neither. */
static bool place_cross(const B *b, uint32_t w, uint32_t i, uint32_t *hi) {
  for (unsigned m = 1; m <= 2; m++) {
    unsigned n = 3 - m;
    for (unsigned f = 0; f < 2; f++) /* f = 0: m is x.lo (W operand 1) -> n is y.hi */
      if (same_opnd(b, i, m, w, 1 + f) && hi[1 - f] == UINT32_MAX) {
        hi[1 - f] = (i << 8) | n;
        return true;
      }
  }
  return false;
}

/* Operand k's register unit (a def's first site or a read), or UINT32_MAX. */
static uint32_t loc_of(const B *b, uint32_t i, unsigned k) {
  const pop *p = rs_sem_opnd(b, i, k);
  if (!p || p->kind != PK_REG) return UINT32_MAX;
  if (p->site >= 0) return b->g->sites[p->site].loc;
  return p->use >= 0 ? b->g->uses[p->use].loc : UINT32_MAX;
}

static bool text_is(const B *b, uint32_t i, unsigned k, const char *s) {
  const pop *p = rs_sem_opnd(b, i, k);
  return p && p->len == strlen(s) && !memcmp(b->src + p->off, s, p->len);
}

static const rs_p2s_row *mufu_row(const char *sem) {
  for (uint32_t r = 0; r < rs_p2s_nsass_mufu; r++)
    if (!strcmp(rs_p2s_sass_mufu[r].sem, sem)) return &rs_p2s_sass_mufu[r];
  return NULL;
}

static bool opis(const B *b, uint32_t i, const char *op) { return !strcmp(rs_func_opcode(b->f, &b->f->insts[i]), op); }

/* MUFU.EX2 with its denormal fix-up: the predicated FMULs around it become copies. */
static void ex2_wrapper(B *b, uint32_t m) {
  const pop *x = rs_sem_opnd(b, m, 1);
  uint32_t d = loc_of(b, m, 0);
  if (!x || x->kind != PK_REG || x->use < 0 || x->flags || d == UINT32_MAX) return;
  const rs_suse *u = &b->g->uses[x->use];
  uint32_t f1 = UINT32_MAX, f2 = UINT32_MAX;
  for (uint32_t k = u->raw[0]; k < u->raw[1]; k++) {
    uint32_t i = b->g->sites[b->g->srcs[k]].inst;
    if (opis(b, i, "FMUL") && b->f->insts[i].flags & RS_I_PREDICATED && loc_of(b, i, 1) == u->loc && text_is(b, i, 2, "0.5"))
      f1 = i;
  }
  for (uint32_t i = m + 1; i < b->f->ninsts && i <= m + 4 && f2 == UINT32_MAX; i++)
    if (opis(b, i, "FMUL") && b->f->insts[i].flags & RS_I_PREDICATED && loc_of(b, i, 0) == d && loc_of(b, i, 1) == d &&
        loc_of(b, i, 2) == d)
      f2 = i;
  if (f1 == UINT32_MAX || f2 == UINT32_MAX) return;
  b->row[f1] = b->row[f2] = mufu_row("$0=copy($1)");
}

/* MUFU.RCP with one Newton step (and the slow path's result): the last FFMA is rcp.rn(x). */
static void rcp_newton(B *b, uint32_t m) {
  uint32_t r = loc_of(b, m, 0), x = loc_of(b, m, 1), i1 = UINT32_MAX, i2 = UINT32_MAX, i3 = UINT32_MAX;
  if (r == UINT32_MAX || x == UINT32_MAX) return;
  for (uint32_t i = m + 1; i < b->f->ninsts && i <= m + 6; i++) {
    if (i1 == UINT32_MAX && opis(b, i, "FFMA") && loc_of(b, i, 1) == r && loc_of(b, i, 2) == x && text_is(b, i, 3, "-1"))
      i1 = i;
    else if (i1 != UINT32_MAX && i2 == UINT32_MAX && !strncmp(rs_func_opcode(b->f, &b->f->insts[i]), "FADD", 4) &&
             loc_of(b, i, 1) == loc_of(b, i1, 0))
      i2 = i;
    else if (i2 != UINT32_MAX && i3 == UINT32_MAX && opis(b, i, "FFMA") && loc_of(b, i, 1) == r &&
             loc_of(b, i, 2) == loc_of(b, i2, 0) && loc_of(b, i, 3) == r)
      i3 = i;
  }
  if (i3 == UINT32_MAX) return;
  b->row[m] = mufu_row("$0=@pin(rcp.rn($1))");
  b->row[i1] = b->row[i2] = mufu_row("-");
  b->row[i3] = mufu_row("$0=@pat");
  b->pat_of[m] = b->pat_of[i3] = m;
  /* the slow path: MOV r', R0 right after the CALL, into the same register */
  for (uint32_t i = 1; i < b->f->ninsts; i++) {
    const char *op = rs_func_opcode(b->f, &b->f->insts[i - 1]);
    if (strncmp(op, "CALL", 4) || !opis(b, i, "MOV") || loc_of(b, i, 0) != loc_of(b, i3, 0)) continue;
    uint32_t line = b->f->insts[i - 1].line;
    if (line == 0 || line > b->nlines) continue;
    const char *ls = b->src + b->lstart[line - 1];
    const char *le = strchr(ls, '\n');
    size_t n = le ? (size_t)(le - ls) : strlen(ls);
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(n < 255 ? n : 255), ls);
    if (strstr(buf, "rcp_rn_f32_slowpath") && b->pat_of[i] == UINT32_MAX) {
      b->row[i] = mufu_row("$0=@pat");
      b->pat_of[i] = m;
    }
  }
}

/* A 32-bit stack slot operand [R1+k] (R1: the stack pointer ptxas sets from c[0x0][0x28]): k, or -1. */
static int64_t slot_of(const B *b, uint32_t i, unsigned k) {
  const pop *p = rs_sem_opnd(b, i, k);
  if (!p || p->kind != PK_MEM || p->use2 >= 0 || p->scale > 1 || p->sym) return -1;
  const char *t = b->src + p->off; /* the stack pointer may be no register read the graph tracks */
  if (p->len < 4 || memcmp(t, "[R1", 3) || (t[3] != ']' && t[3] != '+' && t[3] != '.')) return -1;
  return p->imm;
}

/* Fills of once-stored stack slots become copies of the stored value (rows `rs_p2s_sass_spill`). */
static void spills(B *b) {
  const rs_func *f = b->f;
  for (uint32_t l = 0; l < f->ninsts; l++) {
    const char *op = rs_func_opcode(f, &f->insts[l]);
    if ((strcmp(op, "LDL") && strcmp(op, "LDL.LU")) || b->inpop[l] != 2) continue;
    int64_t k = slot_of(b, l, 1);
    uint32_t st = UINT32_MAX, nst = 0;
    for (uint32_t i = 0; i < f->ninsts && k >= 0; i++) {
      const char *o = rs_func_opcode(f, &f->insts[i]);
      if (strncmp(o, "STL", 3) || b->inpop[i] != 2) continue;
      if (slot_of(b, i, 0) == k) {
        nst++;
        st = strcmp(o, "STL") || f->insts[i].flags & RS_I_PREDICATED ? UINT32_MAX : i;
      }
    }
    if (nst != 1 || st == UINT32_MAX || b->pat_of[l] != UINT32_MAX) continue;
    for (uint32_t r = 0; r < rs_p2s_nsass_spill; r++)
      if (rs_p2s_find(&rs_p2s_sass_spill[r], 1, op, b->inpop[l])) b->row[l] = &rs_p2s_sass_spill[r];
    b->pat_of[l] = st;
  }
}

void rs_sem_patterns(B *b) {
  const rs_func *f = b->f;
  b->pat_of = rs_xmalloc(sizeof *b->pat_of * (f->ninsts + 1));
  b->pat_hi = rs_xmalloc(sizeof *b->pat_hi * 2 * (f->ninsts + 1));
  b->pat_node = rs_xmalloc(sizeof *b->pat_node * (f->ninsts + 1));
  for (uint32_t i = 0; i <= f->ninsts; i++) b->pat_of[i] = b->pat_node[i] = UINT32_MAX, b->pat_hi[2 * i] = b->pat_hi[2 * i + 1] = UINT32_MAX;
  if (!b->g->sass) return;
  spills(b);
  for (uint32_t m = 0; m < f->ninsts; m++) {
    if (opis(b, m, "MUFU.EX2")) ex2_wrapper(b, m);
    if (opis(b, m, "MUFU.RCP") && b->pat_of[m] == UINT32_MAX) rcp_newton(b, m);
  }
  for (uint32_t h = 0; h < f->ninsts; h++) {
    const rs_p2s_row *hr = rs_p2s_find(rs_p2s_sass_mul64, rs_p2s_nsass_mul64, rs_func_opcode(f, &f->insts[h]), b->inpop[h]);
    if (!hr || strncmp(hr->sem, "$0=@hi64(", 9) || f->insts[h].flags & RS_I_PREDICATED) continue;
    /* the register operands of the high add: one is w.hi, the others cross products */
    uint32_t w = UINT32_MAX, xs[2];
    unsigned nx = 0;
    bool ok = true;
    for (unsigned k = 1; k < b->inpop[h] && ok; k++) {
      const pop *p = rs_sem_opnd(b, h, k);
      if (p->kind == PK_CONST && (p->imm == 0 || (p->imm == 1 && k == 2 && !strncmp(rs_func_opcode(f, &f->insts[h]), "IMAD", 4)))) continue;
      if (p->kind == PK_IMM && k == 2 && !strncmp(rs_func_opcode(f, &f->insts[h]), "IMAD", 4)) {
        uint64_t v;
        if (rs_sem_imm_bits(b->src + p->off, p->len, 'i', &v) && v == 1) continue;
      }
      uint32_t s = one_def(b, h, k);
      if (s == UINT32_MAX) {
        ok = false;
        break;
      }
      uint32_t di = b->g->sites[s].inst;
      const pop *d0 = rs_sem_opnd(b, di, 0);
      if (w == UINT32_MAX && op_is(b, di, wide_names) && d0 && d0->nsites == 2 && (int32_t)s == d0->site + 1 &&
          b->pat_of[di] == UINT32_MAX)
        w = di;
      else if (nx < 2) xs[nx++] = s;
      else ok = false;
    }
    if (!ok || w == UINT32_MAX || !nx) continue;
    cross_t c = {{0, 0}, 0};
    for (unsigned k = 0; k < nx && ok; k++) ok = crosses(b, xs[k], &c, nx == 2 ? 1 : 0);
    uint32_t hi[2] = {UINT32_MAX, UINT32_MAX};
    for (unsigned k = 0; k < c.n && ok; k++) ok = place_cross(b, w, c.inst[k], hi);
    if (!ok) continue;
    /* the pattern: w's low unit and h are the halves of one value; the crosses are parts of it */
    b->pat_of[w] = w;
    b->pat_of[h] = w;
    for (unsigned k = 0; k < c.n; k++) b->pat_of[c.inst[k]] = w;
    b->pat_hi[2 * w] = hi[0];
    b->pat_hi[2 * w + 1] = hi[1];
    const char *wop = rs_func_opcode(f, &f->insts[w]);
    for (uint32_t r = 0; r < rs_p2s_nsass_mul64; r++) {
      const rs_p2s_row *row = rs_p2s_find(&rs_p2s_sass_mul64[r], 1, wop, b->inpop[w]);
      if (row && !strncmp(row->sem, "$0=@lo64(", 9)) b->row[w] = row;
    }
    b->row[h] = hr;
    for (unsigned k = 0; k < c.n; k++) {
      const rs_p2s_row *row = NULL;
      for (uint32_t r = 0; r < rs_p2s_nsass_mul64 && !row; r++)
        if (!strcmp(rs_p2s_sass_mul64[r].sem, "-")) row = &rs_p2s_sass_mul64[r];
      b->row[c.inst[k]] = row;
    }
  }
}

void rs_sem_patterns_free(B *b) {
  free(b->pat_of);
  free(b->pat_hi);
  free(b->pat_node);
}
