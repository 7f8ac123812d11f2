/* sem_frag.c - wmma fragments per lane: the elements of PTX wmma.load.a/b/c and wmma.mma as the
 * units of the LDSM, LDG.E.64 / LDS.64 and HMMA instructions ptxas makes of them, so each element
 * meets the SASS register that holds it.
 *
 * PTX names a fragment by its base address; each SASS lane loads its own part from base + an
 * offset computed from SR_LANEID (rs_sem_lane_addr drops it). The element -> unit layout below was
 * read from ptxas 13 itself (a kernel that stores every element of each fragment on its own,
 * sm_75/80/86/89/90; tests/fixtures/ptxtruth/wmma_frag.ptx): for m16n16k16 f16 fragments on sm_80
 * and later, a .row A is one LDSM.16.M88.4, a .row B one LDSM.16.MT88.4 and a .col B one
 * LDSM.16.M88.4, element e in unit e % 4 (elements e and e + 4 are the same data, one register);
 * wmma.mma (.row.row or .row.col) is two HMMA.16816.F32, accumulator elements 0-3 from B units 0-1
 * and 4-7 from B units 2-3. On sm_75 each fragment is two LDSM .2 (the second, elements 2-3, at +16
 * bytes; a .col B's at +16 * ldm bytes) and wmma.mma four HMMA.1688.F32, k in two steps (A units
 * 0-1 with B unit 2h, then A units 2-3 with B unit 2h + 1, h the accumulator half). Other shapes,
 * layouts (a .col A) and types, and A/B fragments from global memory, have no row: no guess. */
#include "ptx/sem_int.h"
#include <stdio.h>
#include <stdlib.h>

/* ---- lane terms ---- */
typedef struct {
  const B *b;
  const uint64_t *uni; /* colours of the leaves alike in every lane (sorted) */
  uint32_t nuni;
  uint64_t hl;       /* SR_LANEID's colour */
  unsigned budget;   /* nodes left to visit: past it, a term counts as mixed (no guess) */
  bool lane, other;
} lk;

static int cmp64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;
  return a < c ? -1 : a > c;
}

/* The leaves alike in every lane of a launch: kernel parameters, %ntid, %nctaid. */
enum { NUNI = 6 + 0x1000 / 4 };
static void uniform_leaves(uint64_t *t) {
  static const char *const nt[] = {"ntid.x", "ntid.y", "ntid.z", "nctaid.x", "nctaid.y", "nctaid.z"};
  for (unsigned i = 0; i < 6; i++) t[i] = hmix(hs("sreg"), hs(nt[i]));
  for (uint64_t off = 0; off < 0x1000; off += 4) t[6 + off / 4] = hmix(hs("param"), off);
  qsort(t, NUNI, sizeof *t, cmp64);
}

static void lk_leaf(lk *k, uint64_t c) {
  if (c == k->hl) k->lane = true;
  else if (!bsearch(&c, k->uni, k->nuni, sizeof c, cmp64)) k->other = true;
}

static void lk_arg(lk *k, rs_sarg x, int depth);
static void lk_node(lk *k, uint32_t n, int depth) {
  if (n == UINT32_MAX || depth > 48 || !k->budget || (k->lane && k->other)) {
    k->other = true;
    return;
  }
  k->budget--;
  const rs_snode *y = &k->b->g->nodes[n];
  if (y->leaf == 1) return;
  if (y->leaf == 2) {
    lk_leaf(k, y->op);
    return;
  }
  if (!y->na) { /* opaque: anything */
    k->other = true;
    return;
  }
  for (unsigned i = 0; i < y->na; i++) lk_arg(k, y->a[i], depth + 1);
}

static void lk_arg(lk *k, rs_sarg x, int depth) {
  if (x.kind == RS_SA_LEAF) {
    if (!x.num) lk_leaf(k, x.leaf);
    return;
  }
  if (x.kind == RS_SA_NODE) {
    lk_node(k, x.idx, depth);
    return;
  }
  const rs_suse *u = &k->b->g->uses[x.idx];
  if (u->res[u->w] == u->res[0]) { /* a value from the kernel's entry */
    k->other = true;
    return;
  }
  for (uint32_t r = u->res[0]; r < u->res[u->w]; r++) lk_node(k, k->b->g->sites[k->b->g->ress[r]].node, depth + 1);
}

/* 0: x does not depend on the lane; 1: it depends on the lane and otherwise only on constants
 * and parameters (a lane's offset inside a fragment); 2: on the lane and on anything else. */
int rs_sem_lane_kind(B *b, rs_sarg x) {
  uint64_t uni[NUNI];
  uniform_leaves(uni);
  lk k = {b, uni, NUNI, rs_sem_sreg_colour("SR_LANEID", 9), 4000, false, false};
  lk_arg(&k, x, 0);
  return !k.lane ? 0 : k.other ? 2 : 1;
}

/* ---- fragments ---- */
static bool has(const char *op, const char *s) { return strstr(op, s) != NULL; }

static bool ends(const char *op, const char *s) {
  size_t n = strlen(op), m = strlen(s);
  return n >= m && !strcmp(op + n - m, s);
}

/* A group of n registers, each read or written. */
static const pop *group(const B *b, uint32_t ii, unsigned k, unsigned n) {
  const pop *p = rs_sem_opnd(b, ii, k);
  if (!p || p->kind != PK_GROUP || p->nelt != n) return NULL;
  for (unsigned e = 0; e < n; e++)
    if (b->pops[p->elt + e].kind != PK_REG) return NULL;
  return p;
}

/* The fragment as one operand, as the SASS read of its registers colours it (match.c: "@tup"). */
static rs_sarg tup(B *b, const pop *g, const unsigned *el, unsigned n) {
  rs_sarg a[4];
  for (unsigned i = 0; i < n; i++) a[i] = rs_sem_use_arg(b, b->pops[g->elt + el[i]].use);
  if (n == 1) return a[0];
  return rs_sem_node(b, NULL, hs("@tup"), a, n, 1);
}

static void put(B *b, const pop *d, rs_sarg v) { rs_sem_assign(b, d, rs_sem_as_node(b, v, 1), 0); }

/* PTX wmma.load.a / wmma.load.b (m16n16k16, .row, f16, 8 registers): element e is unit u of the
 * LDSM at base + off. */
static bool ptx_load(B *b, uint32_t ii, const char *op, bool sm75) {
  bool isa = has(op, ".load.a."), isb = has(op, ".load.b."), col = has(op, ".col.");
  const pop *d = group(b, ii, 0, 8), *m = rs_sem_opnd(b, ii, 1), *ld = rs_sem_opnd(b, ii, 2);
  if ((!isa && !isb) || (isa && col) || (!col && !has(op, ".row.")) || !has(op, ".m16n16k16.") || !has(op, ".shared.") ||
      !ends(op, ".f16") || !d || !m || m->kind != PK_MEM)
    return false;
  /* a column-major B is the transpose of a row-major one: LDSM without .T; on sm_75 its second
   * half lies 8 columns of ldm halves on (16 * ldm bytes, an immediate ldm only) */
  uint64_t half2 = 16;
  if (sm75 && col) {
    if (!ld || (ld->kind != PK_IMM && ld->kind != PK_CONST)) return false;
    if (ld->kind == PK_CONST) half2 = (uint64_t)ld->imm;
    else if (!rs_sem_imm_bits(b->src + ld->off, ld->len, 'i', &half2)) return false;
    half2 *= 16;
  }
  char nm[32];
  snprintf(nm, sizeof nm, "LDSM.16.%s.%d", isa || col ? "M88" : "MT88", sm75 ? 2 : 4);
  for (unsigned e = 0; e < 8; e++) {
    unsigned u = e % 4;
    uint64_t off = 0;
    if (sm75) off = half2 * (u / 2), u %= 2;
    rs_sarg a[2] = {rs_sem_mem_addr(b, m, off, NULL), rs_sem_leaf_const(u)};
    put(b, &b->pops[d->elt + e], rs_sem_mk(b, nm, a, 2, 1));
  }
  return true;
}

/* SASS LDSM.16.M88/MT88.2/.4: unit u of the load at the lane-free address. */
static bool sass_ldsm(B *b, uint32_t ii, const char *op) {
  const pop *d = rs_sem_opnd(b, ii, 0), *m = rs_sem_opnd(b, ii, 1);
  if (!d || !m || d->kind != PK_REG || d->site < 0 || m->kind != PK_MEM) return false;
  bool ok;
  rs_sarg ad = rs_sem_lane_addr(b, m, 0, &ok);
  if (!ok) return false;
  for (unsigned u = 0; u < d->nsites; u++) {
    rs_sarg a[2] = {ad, rs_sem_leaf_const(u)};
    uint32_t n = rs_sem_as_node(b, rs_sem_mk(b, op, a, 2, 1), 1);
    rs_ssite *st = &b->g->sites[d->site + (int32_t)u];
    st->node = n, st->part = 0, st->len = 1;
  }
  return true;
}

/* PTX wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 {d}, {a}, {b}, {c}: accumulator element e
 * (half h = e / 4, unit j = e % 4) as the HMMA unit that computes it. */
static bool ptx_mma(B *b, uint32_t ii, const char *op, bool sm75) {
  const pop *d = group(b, ii, 0, 8), *a = group(b, ii, 1, 8), *bb = group(b, ii, 2, 8), *c = group(b, ii, 3, 8);
  if ((!has(op, ".row.row.") && !has(op, ".row.col.")) || !has(op, ".m16n16k16.") || !ends(op, ".f32.f32") || !d || !a || !bb ||
      !c)
    return false;
  for (unsigned e = 0; e < 8; e++) {
    unsigned h = e / 4, j = e % 4;
    rs_sarg cj = rs_sem_use_arg(b, b->pops[c->elt + e].use);
    rs_sarg v;
    if (!sm75) {
      static const unsigned a4[4] = {0, 1, 2, 3};
      unsigned b2[2] = {2 * h, 2 * h + 1};
      rs_sarg x[4] = {tup(b, a, a4, 4), tup(b, bb, b2, 2), cj, rs_sem_leaf_const(j)};
      v = rs_sem_mk(b, "HMMA.16816.F32", x, 4, 1);
    } else {
      static const unsigned k0[2] = {0, 1}, k1[2] = {2, 3};
      unsigned b0 = 2 * h, b1 = 2 * h + 1;
      rs_sarg x[4] = {tup(b, a, k0, 2), tup(b, bb, &b0, 1), cj, rs_sem_leaf_const(j)};
      rs_sarg in = rs_sem_mk(b, "HMMA.1688.F32", x, 4, 1);
      rs_sarg y[4] = {tup(b, a, k1, 2), tup(b, bb, &b1, 1), in, rs_sem_leaf_const(j)};
      v = rs_sem_mk(b, "HMMA.1688.F32", y, 4, 1);
    }
    put(b, &b->pops[d->elt + e], v);
  }
  return true;
}

/* SASS HMMA.16816.F32 / HMMA.1688.F32 D, A, B, C: unit j of D from A, B and unit j of C
 * (match.c: "@unit"). */
static bool sass_hmma(B *b, uint32_t ii, const char *op) {
  if (strcmp(op, "HMMA.16816.F32") && strcmp(op, "HMMA.1688.F32")) return false;
  const pop *d = rs_sem_opnd(b, ii, 0), *a = rs_sem_opnd(b, ii, 1), *bb = rs_sem_opnd(b, ii, 2), *c = rs_sem_opnd(b, ii, 3);
  if (!d || !a || !bb || !c || d->kind != PK_REG || d->site < 0 || d->nsites != 4 || a->kind != PK_REG || a->use < 0 ||
      bb->kind != PK_REG || bb->use < 0)
    return false;
  for (unsigned j = 0; j < 4; j++) {
    rs_sarg cj;
    if (c->kind == PK_REG && c->use >= 0) {
      rs_sarg u = {RS_SA_USE, false, 0, 0, (uint32_t)c->use};
      cj = rs_sem_node(b, NULL, hs("@unit"), &u, 1, 1);
      b->g->nodes[cj.idx].val = j;
    } else if (c->kind == PK_CONST) {
      cj = rs_sem_leaf_const((uint64_t)c->imm);
    } else {
      return false;
    }
    rs_sarg x[4] = {rs_sem_use_arg(b, a->use), rs_sem_use_arg(b, bb->use), cj, rs_sem_leaf_const(j)};
    uint32_t n = rs_sem_as_node(b, rs_sem_mk(b, op, x, 4, 1), 1);
    rs_ssite *st = &b->g->sites[d->site + (int32_t)j];
    st->node = n, st->part = 0, st->len = 1;
  }
  return true;
}

bool rs_sem_has_mma(B *b) {
  if (!b->mma) {
    b->mma = 1;
    for (uint32_t i = 0; i < b->f->ninsts && b->mma == 1; i++)
      if (!strncmp(rs_func_opcode(b->f, &b->f->insts[i]), "HMMA.", 5)) b->mma = 2;
  }
  return b->mma == 2;
}

/* PTX wmma.load.c (m16n16k16, .row, f32 from global or shared): element e lies at row
 * 8 * ((e / 2) % 2), column 8 * (e / 4) + e % 2 of the tile, each pair of columns one unit pair of an
 * LDG.E.64 / LDS.64 at the lane's own address (SASS: "ld.g.lane" / "ld.s.lane" at the base). The 8-row offset is 32 * ldm
 * bytes: a constant for an immediate ldm, else the term ptxas computes it as, (ldm >> 1) * 64
 * (IMAD.WIDE.U32 R8, R0(ldm >> 1), 0x40, R6). */
static bool ptx_load_c(B *b, uint32_t ii, const char *op) {
  const pop *d = group(b, ii, 0, 8), *m = rs_sem_opnd(b, ii, 1), *ld = rs_sem_opnd(b, ii, 2);
  bool sh = has(op, ".shared.");
  if (!has(op, ".load.c.") || !has(op, ".row.") || !has(op, ".m16n16k16.") || (!sh && !has(op, ".global.")) ||
      !ends(op, ".f32") || !d || !m || m->kind != PK_MEM || !ld)
    return false;
  rs_sarg row = {0};
  uint64_t rowc = 0;
  if (ld->kind == PK_CONST) {
    rowc = 32u * (uint64_t)ld->imm;
  } else if (ld->kind == PK_IMM) {
    if (!rs_sem_imm_bits(b->src + ld->off, ld->len, 'i', &rowc)) return false;
    rowc *= 32;
  } else if (ld->kind == PK_REG && ld->use >= 0) {
    rs_sarg s[2] = {rs_sem_use_arg(b, ld->use), rs_sem_leaf_const(1)};
    rs_sarg h = rs_sem_mk(b, "shru", s, 2, 1);
    rs_sarg x[2] = {rs_sem_node(b, NULL, hs("ext"), &h, 1, 2), rs_sem_leaf_const(64)};
    row = rs_sem_mk(b, "mul", x, 2, 2);
  } else {
    return false;
  }
  for (unsigned e = 0; e < 8; e++) {
    bool r8 = (e / 2) % 2;
    uint64_t off = 4u * (8u * (e / 4) + e % 2) + (r8 ? rowc : 0);
    rs_sarg ad = rs_sem_mem_addr(b, m, off, r8 && row.kind == RS_SA_NODE ? &row : NULL);
    put(b, &b->pops[d->elt + e], rs_sem_mk(b, sh ? "ld.s.lane" : "ld.g.lane", &ad, 1, 1));
  }
  return true;
}

bool rs_sem_frag(B *b, uint32_t ii, const char *what) {
  const char *op = rs_func_opcode(b->f, &b->f->insts[ii]);
  bool sm75 = !strcmp(b->f->tgt->name, "sm_75");
  if (!strcmp(what, "wld")) return ptx_load(b, ii, op, sm75);
  if (!strcmp(what, "wmma")) return ptx_mma(b, ii, op, sm75);
  if (!strcmp(what, "wldc")) return ptx_load_c(b, ii, op);
  if (!strcmp(what, "ldsm")) return sass_ldsm(b, ii, op);
  if (!strcmp(what, "hmma")) return sass_hmma(b, ii, op);
  return false;
}
