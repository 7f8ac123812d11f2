/* match.c - colour both semantic graphs together, then label each PTX value.
 *
 * Colours: a node's colour is a hash of its operation, width and its arguments' colours; a use's
 * colour is the colour of the value its reaching definitions give (a set of them: a phi). Both
 * graphs are refined in lockstep until the number of colours over both stops growing (the
 * coarsest stable partition, as Weisfeiler-Lehman): equal colours are equal computations from
 * equal inputs however ptxas reordered, if-converted or fused them.
 *
 * Labels (the paper's "consolidate the function mapping"): a PTX value's evidence is
 *   - each of its defining sites whose colour SASS sites share: their registers;
 *   - each use of it in a PTX node whose colour SASS nodes share: the register the matching
 *     SASS argument reads.
 * One register named by all evidence is a label; anything else has a status saying why not. */
#include "ptx/match.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const rs_label_status_name[RS_LBL_NSTATUS] = {
    "labelled", "folded", "dead", "optimised away", "fused", "split", "rematerialised", "ambiguous", "uniform"};

static uint64_t hs(const char *s) { return rs_hash_bytes(s, strlen(s), 0x5e3a); }
static uint64_t hmix(uint64_t a, uint64_t b) { return rs_hash_bytes(&b, sizeof b, a * 0x9e3779b97f4a7c15ull + 1); }

typedef struct {
  rs_sgraph g;
  uint64_t *col, *ncol;
  uint64_t hw;   /* op of the 64-bit view node "@w" */
  uint64_t hext; /* op of the 32->64-bit extension "ext" (cvt.s64.s32; a register pair x, x>>31) */
  uint64_t hunit; /* "@unit": one unit of a wider register read (sem_frag.c) */
  uint64_t htup;  /* "@tup": PTX registers read together as one fragment operand (sem_frag.c) */
} G;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The colour of site s's value: whole, a slice of a wider node, or a carry-out. */
static uint64_t arg_colour(const G *x, const uint64_t *col, rs_sarg a, bool lo64);
static uint64_t use_colour(const G *x, const uint64_t *col, uint32_t u, bool lo64);

/* A tuple's colour: what a SASS read of the units' registers together has (use_colour's "tuple"),
 * from the units' own colours, with no delay. */
static uint64_t tuple_colour(const uint64_t *col, const rs_snode *n) {
  uint64_t h = hs("tuple");
  for (unsigned k = 0; k < n->na; k++) h = hmix(h, col[n->a[k].idx]);
  return h;
}

/* A unit load read with the next register as one 64-bit value (an address, a 64-bit operand). */
static uint64_t unit_pair(const G *x, const uint64_t *col, const rs_ssite *t) {
  const rs_snode *n = &x->g.nodes[t->node];
  if (t->part != 0 || n->unext == UINT32_MAX) return 0;
  return hmix(hmix(hs("tuple"), col[t->node]), col[n->unext]);
}

static uint64_t pair_colour(const G *x, const uint64_t *col, const rs_snode *n);

static uint64_t site_colour(const G *x, const uint64_t *col, uint32_t s, unsigned len) {
  const rs_ssite *t = &x->g.sites[s];
  const rs_snode *n = &x->g.nodes[t->node];
  uint64_t c = col[t->node];
  if (n->tuple && t->part == 0 && len == n->width) return tuple_colour(col, n);
  if (n->cbo && t->part == 0 && len == 2) return c; /* a ULDC.64's first word read with the next */
  if (n->op == x->hext && n->na == 1 && t->part == 0 && len == 2) /* no delay: like a register pair */
    return arg_colour(x, col, (rs_sarg){RS_SA_NODE, false, 0, 0, t->node}, false);
  if (t->part == 0xff) return hmix(hs("carry"), c);
  if ((t->part == 0 && len == n->width) || (n->leaf == 1 && n->val == 0)) return c; /* any slice of 0 is 0 */
  return hmix(hmix(hmix(hs("slice"), t->part), len), c);
}

/* A set of colours as one: itself when all agree, else a phi of the sorted distinct ones. */
static uint64_t phi(uint64_t *c, uint32_t n) {
  if (!n) return hs("undef");
  qsort(c, n, sizeof *c, cmp_u64);
  uint32_t k = 1;
  for (uint32_t i = 1; i < n; i++)
    if (c[i] != c[k - 1]) c[k++] = c[i];
  if (k == 1) return c[0];
  uint64_t h = hs("phi");
  for (uint32_t i = 0; i < k; i++) h = hmix(h, c[i]);
  return h;
}

/* A register pair (x, x >> 31) or (x, 0) is x extended to 64 bits (cvt.s64.s32 / .u64.u32 in
 * PTX; ptxas writes only the high half, SHF.R.S32.HI Rh, RZ, 0x1f, Rx). 0 when it is not. */
static uint64_t ext_pair(const G *x, const uint64_t *col, const rs_suse *us) {
  if (us->res[2] - us->res[1] != 1 || us->res[1] - us->res[0] == 0) return 0;
  const rs_ssite *hi = &x->g.sites[x->g.ress[us->res[1]]];
  const rs_snode *hn = &x->g.nodes[hi->node];
  uint64_t lo[64];
  uint32_t n0 = us->res[1] - us->res[0];
  if (n0 > 64) return 0;
  for (uint32_t i = 0; i < n0; i++) lo[i] = site_colour(x, col, x->g.ress[us->res[0] + i], 1);
  uint64_t c0 = phi(lo, n0);
  bool zero = hn->leaf == 1 && hn->val == 0;
  bool sign = hn->op == hs("shrs") && hn->na == 2 && hn->a[1].kind == RS_SA_LEAF && hn->a[1].num && hn->a[1].val == 31 &&
              hn->a[0].kind == RS_SA_USE && use_colour(x, col, hn->a[0].idx, false) == c0;
  return zero || sign ? hmix(x->hext, c0) : 0;
}

/* Two constant bank words read as one 64-bit value (a ULDC.64's registers): the 64-bit word, which
 * colours as its first word does (a parameter), 0 when they are not. */
static uint64_t cb_pair(const G *x, const uint64_t *col, const rs_ssite *lo, const rs_ssite *hi) {
  if (!lo || !hi || lo->part || hi->part) return 0;
  const rs_snode *a = &x->g.nodes[lo->node], *b = &x->g.nodes[hi->node];
  return a->cbo && b->cbo == a->cbo + 4 ? col[lo->node] : 0;
}

static uint64_t use_colour(const G *x, const uint64_t *col, uint32_t u, bool lo64) {
  const rs_suse *us = &x->g.uses[u];
  uint32_t n0 = us->res[1] - us->res[0];
  const uint32_t *r0 = x->g.ress + us->res[0];
  uint64_t buf[64], *c = n0 <= 64 ? buf : rs_xmalloc(sizeof *c * n0);
  uint64_t out;
  if (!x->g.sass || (us->w == 1 && !lo64)) {
    for (uint32_t i = 0; i < n0; i++) c[i] = site_colour(x, col, r0[i], x->g.sass ? 1 : x->g.sites[r0[i]].len);
    out = phi(c, n0);
  } else if (lo64) { /* a 64-bit value named by its low register */
    for (uint32_t i = 0; i < n0; i++) {
      const rs_ssite *t = &x->g.sites[r0[i]];
      uint64_t up = unit_pair(x, col, t);
      c[i] = up                                                 ? up
             : t->part == 0 && x->g.nodes[t->node].cbo        ? col[t->node] /* a ULDC.64's first word */
             : t->part == 0 && x->g.nodes[t->node].width == 2 ? col[t->node]
                                                               : hmix(hs("lo"), site_colour(x, col, r0[i], 1));
    }
    out = phi(c, n0);
  } else { /* w units: whole slices of the same nodes in every unit, else a tuple */
    bool whole = true;
    for (unsigned k = 1; k < us->w && whole; k++) {
      uint32_t nk = us->res[k + 1] - us->res[k];
      const uint32_t *rk = x->g.ress + us->res[k];
      for (uint32_t i = 0; i < nk && whole; i++) {
        const rs_ssite *t = &x->g.sites[rk[i]];
        bool found = false;
        for (uint32_t j = 0; j < n0 && !found; j++) {
          const rs_ssite *t0 = &x->g.sites[r0[j]];
          found = (col[t0->node] == col[t->node] && t0->part != 0xff && t->part == t0->part + k) ||
                  (k == 1 && us->w == 2 && t0->part == 0 && t->part == 0 && x->g.nodes[t0->node].cbo &&
                   x->g.nodes[t->node].cbo == x->g.nodes[t0->node].cbo + 4);
        }
        whole = found;
      }
    }
    if (whole) {
      for (uint32_t i = 0; i < n0; i++) c[i] = site_colour(x, col, r0[i], us->w);
      out = phi(c, n0);
    } else if (us->w == 2 && (out = ext_pair(x, col, us)) != 0) {
    } else if (us->w == 2 && (out = cb_pair(x, col, us->res[1] - us->res[0] == 1 ? &x->g.sites[r0[0]] : NULL,
                                            us->res[2] - us->res[1] == 1 ? &x->g.sites[x->g.ress[us->res[1]]] : NULL)) != 0) {
    } else {
      out = hs("tuple");
      for (unsigned k = 0; k < us->w; k++) {
        uint32_t nk = us->res[k + 1] - us->res[k];
        uint64_t b2[64], *ck = nk <= 64 ? b2 : rs_xmalloc(sizeof *ck * nk);
        for (uint32_t i = 0; i < nk; i++) ck[i] = site_colour(x, col, x->g.ress[us->res[k] + i], 1);
        out = hmix(out, phi(ck, nk));
        if (ck != b2) free(ck);
      }
    }
  }
  if (c != buf) free(c);
  return out;
}

/* "@unit": unit val of a register read of several units (an HMMA's accumulator C), as a PTX read
 * of that one element colours it. */
static uint64_t unit_colour(const G *x, const uint64_t *col, const rs_snode *n) {
  const rs_suse *us = &x->g.uses[n->a[0].idx];
  if (n->val >= us->w) return hs("unit?");
  uint32_t k = (uint32_t)n->val, nk = us->res[k + 1] - us->res[k];
  uint64_t buf[64], *c = nk <= 64 ? buf : rs_xmalloc(sizeof *c * nk);
  for (uint32_t i = 0; i < nk; i++) c[i] = site_colour(x, col, x->g.ress[us->res[k] + i], 1);
  uint64_t out = phi(c, nk);
  if (c != buf) free(c);
  return out;
}

/* An argument's colour from the previous round's colours. Every edge (a use, or an internal
 * node of a fused instruction) costs one round on both sides alike, so a value computed by two
 * PTX instructions and by one fused SASS instruction get equal colours; transparent nodes
 * (copies, 64-bit views) cost none. */
static uint64_t arg_colour(const G *x, const uint64_t *col, rs_sarg a, bool lo64) {
  if (a.kind == RS_SA_LEAF) return a.leaf;
  if (a.kind == RS_SA_USE) return use_colour(x, col, a.idx, lo64);
  const rs_snode *n = &x->g.nodes[a.idx];
  if (n->copy && n->na == 1) return arg_colour(x, col, n->a[0], false);
  if (n->pair && n->na == 2) return pair_colour(x, col, n);
  if (n->op == x->hunit && n->na == 1 && n->a[0].kind == RS_SA_USE) return unit_colour(x, col, n);
  if (n->op == x->htup) { /* a fragment's registers read together, as a SASS read of w units is */
    uint64_t out = hs("tuple");
    for (unsigned k = 0; k < n->na; k++) out = hmix(out, arg_colour(x, col, n->a[k], false));
    return out;
  }
  if (n->op == x->hw && n->na == 1) return arg_colour(x, col, n->a[0], true);
  if (n->op == x->hext && n->na == 1) return hmix(x->hext, arg_colour(x, col, n->a[0], false));
  return col[a.idx];
}

/* The one site a use reads (every unit of it), or NULL. */
static const rs_ssite *one_site(const G *x, rs_sarg a) {
  if (a.kind != RS_SA_USE) return NULL;
  const rs_suse *u = &x->g.uses[a.idx];
  return u->w == 1 && u->res[1] - u->res[0] == 1 ? &x->g.sites[x->g.ress[u->res[0]]] : NULL;
}

/* @pair(lo, hi) as a read of a register pair would colour it: the whole value when both halves
 * are its units, an extension when hi is 0 or lo >> 31 (ext_pair), the two loads of a wide load,
 * else a tuple of the halves. */
static uint64_t pair_colour(const G *x, const uint64_t *col, const rs_snode *n) {
  rs_sarg lo = n->a[0], hi = n->a[1];
  uint64_t c0 = arg_colour(x, col, lo, false);
  if (hi.kind == RS_SA_LEAF && hi.num && hi.val == 0) return hmix(x->hext, c0);
  const rs_ssite *sh = one_site(x, hi), *sl = one_site(x, lo);
  if (sh) {
    const rs_snode *hn = &x->g.nodes[sh->node];
    if (hn->op == hs("shrs") && hn->na == 2 && hn->a[1].kind == RS_SA_LEAF && hn->a[1].num && hn->a[1].val == 31 &&
        arg_colour(x, col, hn->a[0], false) == c0)
      return hmix(x->hext, c0);
    if (sl && sl->node == sh->node && sl->part == 0 && sh->part == 1 && x->g.nodes[sl->node].width == 2) {
      uint32_t s = (uint32_t)(sl - x->g.sites);
      return site_colour(x, col, s, 2);
    }
    if (sl && sl->part == 0 && x->g.nodes[sl->node].unext == sh->node && sh->part == 0) return unit_pair(x, col, sl);
    uint64_t cp = cb_pair(x, col, sl, sh);
    if (cp) return cp;
  }
  return hmix(hmix(hs("tuple"), c0), arg_colour(x, col, hi, false));
}

/* One round: new colours from the previous ones (internal arguments from this round). */
static void round_(G *x) {
  for (uint32_t i = 0; i < x->g.nnodes; i++) {
    const rs_snode *n = &x->g.nodes[i];
    if (n->leaf) {
      x->ncol[i] = n->op;
      continue;
    }
    if (n->copy || n->pair || ((n->op == x->hw || n->op == x->hext) && n->na == 1) || n->op == x->hunit || n->op == x->htup) {
      x->ncol[i] = arg_colour(x, x->col, (rs_sarg){RS_SA_NODE, false, 0, 0, i}, false);
      continue;
    }
    uint64_t a[4];
    for (unsigned k = 0; k < n->na; k++) a[k] = arg_colour(x, x->col, n->a[k], false);
    if (n->phi) { /* the colour of "either value", as a use of a predicated register has */
      x->ncol[i] = phi(a + 1, 2);
      continue;
    }
    if (n->acomm)
      qsort(a, n->na, sizeof *a, cmp_u64);
    else if (n->comm && n->na >= 2 && a[0] > a[1]) {
      uint64_t t = a[0];
      a[0] = a[1];
      a[1] = t;
    }
    uint64_t h = hmix(hmix(hmix(hs("node"), x->col[i]), n->op), n->width);
    for (unsigned k = 0; k < n->na; k++) h = hmix(h, a[k]);
    x->ncol[i] = h;
  }
}

static uint32_t distinct(const G *p, const G *s, uint64_t *tmp) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < p->g.nnodes; i++) tmp[n++] = p->ncol[i];
  for (uint32_t i = 0; i < s->g.nnodes; i++) tmp[n++] = s->ncol[i];
  if (!n) return 0;
  qsort(tmp, n, sizeof *tmp, cmp_u64);
  uint32_t k = 1;
  for (uint32_t i = 1; i < n; i++) k += tmp[i] != tmp[i - 1];
  return k;
}

/* Sorted (key, index) pairs for lookups by colour. */
typedef struct {
  uint64_t key;
  uint32_t idx;
} kv;
static int cmp_kv(const void *a, const void *b) {
  const kv *x = a, *y = b;
  return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->idx > y->idx) - (x->idx < y->idx);
}
static uint32_t lower(const kv *t, uint32_t n, uint64_t key) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t m = (lo + hi) / 2;
    if (t[m].key < key) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/* The first unit's colour of a site (what a SASS per-unit site of the same value has). */
static uint64_t site_key(const G *x, uint32_t s) {
  const rs_ssite *t = &x->g.sites[s];
  const rs_snode *n = &x->g.nodes[t->node];
  uint64_t c = x->col[t->node];
  if (n->tuple && t->part < n->na) return x->col[n->a[t->part].idx];
  if (t->part == 0xff) return hmix(hs("carry"), c);
  if ((t->part == 0 && n->width == 1) || (n->leaf == 1 && n->val == 0)) return c;
  return hmix(hmix(hmix(hs("slice"), t->part), 1), c);
}

typedef struct {
  uint32_t *units;
  uint32_t n, cap;
  bool remat, ambiguous, fused, away;
  uint16_t ev;
} evid;

static void add_unit(evid *v, uint32_t u) {
  for (uint32_t i = 0; i < v->n; i++)
    if (v->units[i] == u) {
      v->ev++;
      return;
    }
  RS_PUSH(v->units, v->n, v->cap, u);
  v->ev++;
}

static bool uniform(const rs_target *t, uint32_t unit) {
  int fi = rs_target_file_of(t, unit);
  return fi >= 0 && (!strcmp(t->files[fi].name, "ur") || !strcmp(t->files[fi].name, "up"));
}

int rs_match_run(const rs_func *ptx, const rs_func *sass, rs_match *m, rs_err *e) {
  memset(m, 0, sizeof *m);
  G P = {{0}, NULL, NULL, hs("@w"), hs("ext"), hs("@unit"), hs("@tup")}, S = {{0}, NULL, NULL, hs("@w"), hs("ext"), hs("@unit"), hs("@tup")};
  if (rs_sgraph_build(&P.g, ptx, e) || rs_sgraph_build(&S.g, sass, e)) {
    rs_sgraph_free(&P.g);
    rs_sgraph_free(&S.g);
    return -1;
  }
  G *gs[2] = {&P, &S};
  for (int k = 0; k < 2; k++) {
    gs[k]->col = rs_xcalloc(gs[k]->g.nnodes + 1, sizeof *gs[k]->col);
    gs[k]->ncol = rs_xcalloc(gs[k]->g.nnodes + 1, sizeof *gs[k]->ncol);
    /* leaves have their final colour from the start: a register holding a parameter then reads
     * like the parameter itself in every round (colours carry their history) */
    for (uint32_t i = 0; i < gs[k]->g.nnodes; i++)
      if (gs[k]->g.nodes[i].leaf) gs[k]->col[i] = gs[k]->g.nodes[i].op;
  }
  uint64_t *tmp = rs_xmalloc(sizeof *tmp * (P.g.nnodes + S.g.nnodes + 1));
  uint32_t prev = 0;
  for (m->rounds = 1; m->rounds <= 200; m->rounds++) {
    round_(&P);
    round_(&S);
    uint32_t d = distinct(&P, &S, tmp);
    for (int k = 0; k < 2; k++) {
      uint64_t *t = gs[k]->col;
      gs[k]->col = gs[k]->ncol;
      gs[k]->ncol = t;
    }
    if (d == prev) break;
    prev = d;
  }
  free(tmp);
  /* SASS lookups: nodes by colour, register sites by first-unit colour */
  kv *sn = rs_xmalloc(sizeof *sn * (S.g.nnodes + 1)), *ss = rs_xmalloc(sizeof *ss * (S.g.nsites + 1));
  kv *pn = rs_xmalloc(sizeof *pn * (P.g.nnodes + 1)), *ps = rs_xmalloc(sizeof *ps * (P.g.nsites + 1));
  for (uint32_t i = 0; i < S.g.nnodes; i++) sn[i] = (kv){S.col[i], i};
  for (uint32_t i = 0; i < S.g.nsites; i++) ss[i] = (kv){site_key(&S, i), i};
  for (uint32_t i = 0; i < P.g.nnodes; i++) pn[i] = (kv){P.col[i], i};
  for (uint32_t i = 0; i < P.g.nsites; i++) ps[i] = (kv){site_key(&P, i), i};
  qsort(sn, S.g.nnodes, sizeof *sn, cmp_kv);
  qsort(ss, S.g.nsites, sizeof *ss, cmp_kv);
  qsort(pn, P.g.nnodes, sizeof *pn, cmp_kv);
  qsort(ps, P.g.nsites, sizeof *ps, cmp_kv);
  m->ptx_nodes = P.g.nnodes;
  m->sass_nodes = S.g.nnodes;
  for (uint32_t i = 0; i < P.g.nnodes; i++) {
    uint32_t j = lower(sn, S.g.nnodes, P.col[i]);
    m->matched_nodes += j < S.g.nnodes && sn[j].key == P.col[i];
  }
  m->nvregs = ptx->nvregs;
  m->lbl = rs_xcalloc(ptx->nvregs + 1, sizeof *m->lbl);
  evid *ev = rs_xcalloc(ptx->nvregs + 1, sizeof *ev);
  bool *leafdef = rs_xcalloc(ptx->nvregs + 1, 1), *computed = rs_xcalloc(ptx->nvregs + 1, 1);
  bool *used = rs_xcalloc(ptx->nvregs + 1, 1), *read = rs_xcalloc(ptx->nvregs + 1, 1);
  for (uint32_t o = 0; o < ptx->nops; o++)
    if (ptx->ops[o].kind == RS_OP_VREG) {
      used[ptx->ops[o].reg] = true;
      if (!(ptx->ops[o].flags & RS_F_DEF)) read[ptx->ops[o].reg] = true;
    }
  /* def evidence; a copy's evidence is that of the sites it copies (ptxas coalesces or not:
   * the uses then tell) */
  for (uint32_t s0 = 0; s0 < P.g.nsites; s0++) {
    const rs_ssite *t0 = &P.g.sites[s0];
    const rs_snode *n0 = &P.g.nodes[t0->node];
    uint32_t from = s0, to = s0 + 1;
    const uint32_t *list = NULL;
    if (n0->copy && n0->a[0].kind == RS_SA_USE) {
      const rs_suse *cu = &P.g.uses[n0->a[0].idx];
      list = P.g.ress + cu->res[0];
      from = 0;
      to = cu->res[1] - cu->res[0];
    } else if (n0->copy) continue;
    for (uint32_t si = from; si < to; si++) {
    uint32_t s = list ? list[si] : si;
    const rs_ssite *t = &P.g.sites[s];
    const rs_snode *n = &P.g.nodes[t->node];
    evid *v = &ev[t0->loc];
    if (n->copy) continue;
    if (n->leaf == 1) {
      leafdef[t0->loc] = true;
      continue;
    }
    if (n->leaf == 2) leafdef[t0->loc] = true;
    else computed[t0->loc] = true;
    uint64_t key = site_key(&P, s);
    uint32_t j = lower(ss, S.g.nsites, key), j2 = j;
    uint32_t first = UINT32_MAX, first_inst = 0;
    bool multi = false;
    while (j2 < S.g.nsites && ss[j2].key == key) {
      uint32_t u = S.g.sites[ss[j2].idx].loc;
      if (n->leaf == 2 && uniform(sass->tgt, u)) { /* ULDC of a parameter: still read in place */
        j2++;
        continue;
      }
      if (first == UINT32_MAX) first = u, first_inst = S.g.sites[ss[j2].idx].inst;
      else if (u != first) multi = true;
      j2++;
    }
    if (first == UINT32_MAX) {
      if (n->leaf) continue;
      uint32_t k = lower(sn, S.g.nnodes, P.col[t->node]);
      if (k < S.g.nnodes && sn[k].key == P.col[t->node]) v->fused = true;
      else v->away = true;
      continue;
    }
    if (!multi) {
      add_unit(v, first);
      rs_lsite ls = {t0->loc, t0->inst, first_inst, true};
      RS_PUSH(m->ev, m->nev, m->capev, ls);
      /* a 64-bit value: its high half must be the next register (ptxas may keep the halves of
       * an IADD3 / IADD3.X or LEA / LEA.HI.X pair in unrelated registers: then it is split) */
      if (t->len == 2 && t->part != 0xff) {
        const rs_snode *pn0 = &P.g.nodes[t->node];
        uint64_t c = P.col[t->node], k1 = hmix(hmix(hmix(hs("slice"), t->part + 1u), 1), c);
        if (pn0->tuple && t->part == 0 && pn0->na == 2) k1 = P.col[pn0->a[1].idx];
        for (uint32_t q = lower(ss, S.g.nsites, k1); q < S.g.nsites && ss[q].key == k1; q++)
          if (S.g.sites[ss[q].idx].loc != first + 1) add_unit(v, S.g.sites[ss[q].idx].loc - 1);
      }
      continue;
    }
    uint32_t k = lower(ps, P.g.nsites, key), np = 0;
    while (k < P.g.nsites && ps[k].key == key) np++, k++;
    if (np <= 1) v->remat = true;
    else v->ambiguous = true;
    }
  }
  /* use evidence */
  for (uint32_t r = 0; r < P.g.nrefs; r++) {
    uint32_t x = P.g.ref_node[r], pos = P.g.ref_arg[r], u = P.g.ref_use[r];
    uint32_t vreg = P.g.uses[u].loc;
    uint64_t cx = P.col[x];
    uint32_t j = lower(sn, S.g.nnodes, cx);
    if (j >= S.g.nnodes || sn[j].key != cx) continue;
    uint32_t k = lower(pn, P.g.nnodes, cx), np = 0, ns = 0;
    while (k < P.g.nnodes && pn[k].key == cx) np++, k++;
    for (uint32_t q = j; q < S.g.nnodes && sn[q].key == cx; q++) ns++;
    const rs_snode *px = &P.g.nodes[x];
    bool lo64 = false;
    uint64_t ca = arg_colour(&P, P.col, px->a[pos], false);
    if (np > 1 && ns > 1) { /* which SASS node is which is unknown: evidence only when all read one register */
      uint32_t loc = UINT32_MAX;
      bool one = true, none = true;
      for (uint32_t q = j; q < j + ns && one; q++) {
        const rs_snode *y = &S.g.nodes[sn[q].idx];
        bool found = false;
        for (unsigned i = 0; i < y->na && !found; i++) {
          rs_sarg a = y->a[i];
          if (a.kind != RS_SA_USE || arg_colour(&S, S.col, a, y->op == hs("@w")) != ca) continue;
          found = true, none = false;
          if (loc == UINT32_MAX) loc = S.g.uses[a.idx].loc;
          else one = S.g.uses[a.idx].loc == loc;
        }
        one = one && found;
      }
      if (none) continue; /* read in place (a constant bank operand) wherever it is */
      if (!one || loc == UINT32_MAX) {
        ev[vreg].ambiguous = true;
        continue;
      }
    }
    for (uint32_t q = j; q < j + ns; q++) {
      const rs_snode *y = &S.g.nodes[sn[q].idx];
      lo64 = y->op == hs("@w");
      for (unsigned i = 0; i < y->na; i++) {
        rs_sarg a = y->a[i];
        if (a.kind != RS_SA_USE) continue;
        if (arg_colour(&S, S.col, a, lo64) != ca) continue;
        /* a parameter or special register ptxas keeps in uniform registers (ULDC, S2UR) is
         * read in place as far as the PTX classes go */
        if (!(leafdef[vreg] && !computed[vreg] && uniform(sass->tgt, S.g.uses[a.idx].loc))) {
          add_unit(&ev[vreg], S.g.uses[a.idx].loc);
          rs_lsite ls = {vreg, P.g.uses[u].inst, S.g.uses[a.idx].inst, false};
          RS_PUSH(m->ev, m->nev, m->capev, ls);
        }
        break;
      }
    }
  }
  const rs_target *t = sass->tgt;
  for (uint32_t v = 0; v < ptx->nvregs; v++) {
    rs_label *l = &m->lbl[v];
    evid *x = &ev[v];
    l->evidence = x->ev;
    if (x->n == 1 && !x->remat) {
      if (uniform(t, x->units[0])) l->status = RS_LBL_UNIFORM;
      else {
        l->status = RS_LBL_LABELLED;
        l->reg = (rs_preg){x->units[0], ptx->vregs[v].full};
      }
    } else if (x->remat) l->status = RS_LBL_REMAT;
    else if (x->n > 1) l->status = RS_LBL_SPLIT;
    else if (x->ambiguous) l->status = RS_LBL_AMBIGUOUS;
    else if (!computed[v] && leafdef[v]) l->status = RS_LBL_FOLDED;
    else if (!read[v]) l->status = RS_LBL_DEAD;
    else if (x->fused) l->status = RS_LBL_FUSED;
    else l->status = RS_LBL_AWAY;
    if (used[v] && ptx->vregs[v].cls >= 0) m->count[l->status]++;
    free(x->units);
  }
  /* opcodes without a row, both sides */
  size_t k = 0;
  for (int g = 0; g < 2; g++)
    for (uint32_t i = 0; i < gs[g]->g.nunknown && k + 40 < sizeof m->unknown; i++)
      k += (size_t)snprintf(m->unknown + k, sizeof m->unknown - k, "%s%s x%u", k ? ", " : "", gs[g]->g.unknown[i],
                            gs[g]->g.nunknown_of[i]);
  free(ev);
  free(leafdef);
  free(computed);
  free(used);
  free(read);
  free(sn);
  free(ss);
  free(pn);
  free(ps);
  for (int g = 0; g < 2; g++) {
    free(gs[g]->col);
    free(gs[g]->ncol);
    rs_sgraph_free(&gs[g]->g);
  }
  return 0;
}

void rs_match_free(rs_match *m) {
  free(m->lbl);
  free(m->ev);
  memset(m, 0, sizeof *m);
}
