/* z3.c - the Z3 checker: VeriLocc's SMT formulation (arXiv 2506.17506) over the Problem.
 *
 * One context per instance, built once, with two solvers. The constraints come in groups, each
 * guarded by a Boolean group literal (per prototype on hs, see below) so that a check names the
 * rules a candidate breaks:
 *   hardware (solver hs, integer arithmetic): per prototype an integer x_k (base unit in the
 *             target's numbering) and y_k (its lane mask); class (lanes of the class; an allowed file or an
 *             allowed special register), range (inside the file), align, reserved (target and
 *             function), budget (the file's, or the function's from its launch bounds);
 *   dataflow (solver ds, uninterpreted functions): conflict (lane-aware interference), fixed
 *             (fixed physical registers).
 * The hardware groups mirror rs_target_member rule by rule and in its order (each rule holds only
 * where the earlier ones do), so a value breaks exactly the rule the native checker names. Being
 * aligned is never a premise: a rule "aligned and P -> Q" is stated as "P and not Q -> misaligned"
 * (or, for a constant set, by filtering it with the alignment of its members), and "x is aligned"
 * / "x is misaligned" are existential (x = r + a*k, x = a*k + m with m != r) with fresh integer
 * witnesses, which only ever occur positively. A `mod` term instead made every check search for
 * the quotient of each tuple (branch and bound: most of the hardware check time).
 *
 * The dataflow groups are over a sort Reg of registers: one constant r_u per unit, an
 * uninterpreted successor with succ(r_u) = r_{u+1}, and per value a constant p_v (its base
 * register). Interfering values a, b (conflicts merged per pair: the union of the offsets at which
 * their live lanes overlap) must avoid each offset d: p_b != succ^d(p_a) (d >= 0) or
 * p_a != succ^-d(p_b); a fixed register excludes p_v != r_u per base u that overlaps it. A second
 * sort Pair (q_k = units 2k and 2k+1, pair(r_u) = q_{u/2}, its own successor) states two offsets
 * as one disequality where one value of a pair is even-aligned. (ds only sees candidates that
 * keep every hardware rule, and relies on that: see dataflow().) Nothing forces
 * the constants apart, and nothing needs to: a candidate maps every p_v to an r_u, so a clash is a
 * chain of equalities ending in a violated disequality, and the model u -> u, k -> k satisfies
 * everything else. A check is congruence closure, linear in the atoms, where the earlier
 * difference-logic encoding (x_b - x_a outside [lo, hi]) cost O(values^2) time and memory per
 * check under Z3's dense solver (Floyd-Warshall) and searched under the sparse one.
 *
 * The hardware rules of a value name only its own variables and depend only on its class and
 * lanes (and the function's budget and reserved registers), so hs holds them once per kind of value
 * (a prototype: class and full lanes), not per value: a few dozen sets of rules where a MAGMA
 * kernel has 2,900 values, whose every check cost 0.1-0.5 s in Z3's per-check work over the whole
 * context. What hs decides is then a property of (prototype, register), kept once decided: a
 * candidate checks only the pairs not seen before, one per prototype per check.
 *
 * A check passes the candidate as assumptions (Boolean literals, see cand_lit) plus group
 * literals. Deciding the category (the native checker reports hardware over dataflow): hs is
 * checked first, every hardware group on for the prototypes checked (guards of the others off);
 * unsat: each pair of that check is checked alone, then each hardware group alone (the literal
 * fixes every variable, so "a group alone is unsat" <=> "the register breaks it"); verdict hardware
 * with every broken hardware kind counted, and the dataflow groups are not consulted. Sat: ds is
 * checked with both dataflow groups and one literal per value; unsat: the core's dataflow group
 * when it names one, else each is re-checked alone. Counts are 1 per broken kind: Z3 proves that a
 * kind is broken, not how often. */
#include "verify/verify.h"
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <z3.h>

enum { G_CLASS, G_RANGE, G_ALIGN, G_RESERVED, G_BUDGET, G_CONFLICT, G_FIXED, G__N, G__HW = G_CONFLICT };
static const rs_vkind group_kind[G__N] = {RS_VK_CLASS, RS_VK_BUDGET, RS_VK_ALIGN, RS_VK_RESERVED,
                                          RS_VK_BUDGET, RS_VK_CONFLICT, RS_VK_FIXED};
static const char *const group_what[G__N] = {
    "not in the value's class (width or register file)", "runs past the end of the register file",
    "misaligned tuple", "reserved register", "beyond the register budget",
    "interferes with a value live at the same time", "overlaps a fixed register live in its range"};

/* Offsets between two values' base registers are within [-MAX_OFF, MAX_OFF] (64 lanes). */
#define MAX_OFF 32

/* The candidate enters a check as one assumed Boolean per value and solver, "v takes (unit,
 * lanes)", asserted once (the first time a candidate uses that register for v) to imply the
 * bounds x <= unit, x >= unit, y <= lanes, y >= lanes (hs) or p_v = r_unit (ds). Bounds go
 * straight to the arithmetic solver, where equalities would add equality atoms and adapter
 * clauses; and Boolean constants are the only assumptions Z3 takes as they are: any other term
 * gets a fresh proxy, an implication asserted and internalized on every check and popped after
 * it (about 40 us per assumption, 0.2 s per check on 1000 values). */
typedef struct {
  uint32_t v, unit; /* v == UINT32_MAX: empty; v is a value (ds) or a prototype (hs) */
  rs_lanes lanes;
  Z3_ast lit;       /* the literal (referenced) */
  uint8_t hw;       /* hs: HW_UNKNOWN, HW_OK, or HW_BROKEN with the broken groups in `broken` */
  uint8_t broken;
} cand_lit;
enum { HW_UNKNOWN, HW_OK, HW_BROKEN };

/* Open-addressing table of literals keyed by (value or prototype, register). */
typedef struct {
  cand_lit *e;
  uint32_t n, cap;
} lit_table;

/* A sort whose constants c_0, c_1, ... are ordered by an uninterpreted successor
 * (succ(c_i) = c_{i+1}), and per value a term t_v of the sort with its chain succ^k(t_v). */
typedef struct {
  Z3_sort sort;
  Z3_func_decl succ;
  Z3_ast *c;     /* c_0 .. c_{n-1} (referenced) */
  uint32_t n, cap;
  Z3_ast *chain; /* chain[v * (MAX_OFF + 1) + k] = succ^k(t_v), made on use (referenced) */
  const char *name;
} ladder;

/* Formulas waiting to be asserted as one conjunction (referenced). */
typedef struct {
  Z3_ast *a;
  uint32_t n, cap;
} conj;

struct rs_z3 {
  const rs_problem *p;
  Z3_context ctx;
  Z3_solver ds;      /* the dataflow groups (uninterpreted functions) */
  Z3_solver hs;      /* the hardware groups (integer arithmetic) */
  Z3_sort int_sort;
  uint32_t nproto;   /* hs: kinds of value (class, full lanes) */
  uint32_t *proto;   /* per value: its prototype */
  uint32_t *rep;     /* per prototype: its first value (the facts its rules read) */
  Z3_ast *x, *y;     /* hs, per prototype: base unit, lanes (referenced) */
  Z3_ast *bf, *bi;   /* hs, per prototype: file and first register of a name past its file's end
                      * (made with the prototype's first such candidate; referenced) */
  Z3_ast *gv, *gvoff; /* hs, per prototype: guard of group g at [k * G__HW + g], its negation
                      * (assumed for the prototypes a check leaves out; referenced) */
  ladder unit, pair; /* ds: registers (r_u, p_v) and even-aligned register pairs (q_k, pair(p_v)) */
  Z3_func_decl pair_of; /* Reg -> Pair, pair(r_u) = q_{u/2} */
  Z3_ast g[G__N];    /* group literals of ds (referenced) */
  conj rules[G__N];  /* the dataflow groups, asserted as "g -> and(rules)" by the end of rs_z3_new */
  Z3_ast *tmp;       /* scratch references released by flush() */
  uint32_t ntmp, captmp;
  bool failed;       /* a Z3 call returned no term (error) */
  Z3_ast *hassume;   /* per check on hs: guards of every prototype, then the pairs' literals */
  uint32_t *hval;    /* per value: its hl entry in the check */
  uint32_t *pending; /* per check: hl entries not decided yet (each once) */
  uint32_t *round;   /* per prototype: the check round that took one of its pairs */
  Z3_ast *dassume;   /* per check on ds: groups + one literal per value */
  lit_table hl, dl;  /* literals made so far: hs (prototype, register), ds (value, register) */
  conj newlits[2];   /* per solver, definitions of new candidate literals (and, on ds, the axioms
                      * of new registers), asserted at the start of the next check */
};

/* Errors are read back with Z3_get_error_code; the default handler would exit the process. */
static void z3_quiet(Z3_context c, Z3_error_code e) {
  (void)c;
  (void)e;
}

/* Reference-counted context: every new term is referenced at once (the next API call may free
 * an unreferenced one) and parked in tmp until flush(). */
static Z3_ast T(rs_z3 *z, Z3_ast a) {
  if (!a) {
    z->failed = true;
    return Z3_mk_true(z->ctx); /* keeps later calls well-formed; the instance is refused */
  }
  Z3_inc_ref(z->ctx, a);
  rs_grow((void **)&z->tmp, sizeof *z->tmp, &z->captmp, (size_t)z->ntmp + 1);
  z->tmp[z->ntmp++] = a;
  return a;
}
static void flush(rs_z3 *z) {
  for (uint32_t i = 0; i < z->ntmp; i++) Z3_dec_ref(z->ctx, z->tmp[i]);
  z->ntmp = 0;
}
/* A term kept beyond flush(): referenced once more, released by the owner. */
static Z3_ast keep(rs_z3 *z, Z3_ast a) {
  a = T(z, a);
  Z3_inc_ref(z->ctx, a);
  return a;
}
static void conj_add(rs_z3 *z, conj *c, Z3_ast a) {
  RS_PUSH(c->a, c->n, c->cap, keep(z, a));
}
/* Assert "g -> and(c)" (g NULL: and(c)) on s and empty c. One assertion for a whole group: Z3
 * preprocesses each top-level assertion on its own, superlinearly in their number (10^5
 * separate clauses took 3.4 s to internalize, one conjunction of them 0.8 s). */
static void conj_assert(rs_z3 *z, Z3_solver s, Z3_ast g, conj *c) {
  if (c->n) {
    Z3_ast body = c->n == 1 ? c->a[0] : T(z, Z3_mk_and(z->ctx, c->n, c->a));
    Z3_solver_assert(z->ctx, s, g ? T(z, Z3_mk_implies(z->ctx, g, body)) : body);
  }
  for (uint32_t i = 0; i < c->n; i++) Z3_dec_ref(z->ctx, c->a[i]);
  c->n = 0;
}
static void conj_free(rs_z3 *z, conj *c) {
  for (uint32_t i = 0; i < c->n; i++) Z3_dec_ref(z->ctx, c->a[i]);
  free(c->a);
  memset(c, 0, sizeof *c);
}

static Z3_ast num(rs_z3 *z, int64_t v) { return T(z, Z3_mk_int64(z->ctx, v, z->int_sort)); }
static Z3_ast unum(rs_z3 *z, uint64_t v) { return T(z, Z3_mk_unsigned_int64(z->ctx, v, z->int_sort)); }
static Z3_ast le(rs_z3 *z, Z3_ast a, int64_t k) { return T(z, Z3_mk_le(z->ctx, a, num(z, k))); }
static Z3_ast ge(rs_z3 *z, Z3_ast a, int64_t k) { return T(z, Z3_mk_ge(z->ctx, a, num(z, k))); }
static Z3_ast eqn(rs_z3 *z, Z3_ast a, int64_t k) { return T(z, Z3_mk_eq(z->ctx, a, num(z, k))); }
static Z3_ast not_(rs_z3 *z, Z3_ast a) { return T(z, Z3_mk_not(z->ctx, a)); }
static Z3_ast and_(rs_z3 *z, unsigned n, const Z3_ast *a) {
  return n == 0 ? T(z, Z3_mk_true(z->ctx)) : n == 1 ? a[0] : T(z, Z3_mk_and(z->ctx, n, a));
}
static Z3_ast or_(rs_z3 *z, unsigned n, const Z3_ast *a) {
  return n == 0 ? T(z, Z3_mk_false(z->ctx)) : n == 1 ? a[0] : T(z, Z3_mk_or(z->ctx, n, a));
}
static Z3_ast and2(rs_z3 *z, Z3_ast a, Z3_ast b) { Z3_ast v[2] = {a, b}; return and_(z, 2, v); }
static Z3_ast or2(rs_z3 *z, Z3_ast a, Z3_ast b) { Z3_ast v[2] = {a, b}; return or_(z, 2, v); }
static Z3_ast implies(rs_z3 *z, Z3_ast a, Z3_ast b) { return T(z, Z3_mk_implies(z->ctx, a, b)); }
/* Rule c of group g (of prototype k, for a hardware group) where pre (NULL: always) holds.
 * Hardware rules are asserted one by one: as one conjunction per group, hs spent 4x longer
 * internalizing them. */
static void rule(rs_z3 *z, int g, uint32_t k, Z3_ast pre, Z3_ast c) {
  Z3_ast body = pre ? implies(z, pre, c) : c;
  if (g < G__HW)
    Z3_solver_assert(z->ctx, z->hs, implies(z, z->gv[(size_t)k * G__HW + g], body));
  else
    conj_add(z, &z->rules[g], body);
}

/* A fresh integer, a witness that occurs only positively (existentially quantified). */
static Z3_ast witness(rs_z3 *z, const char *what) { return T(z, Z3_mk_fresh_const(z->ctx, what, z->int_sort)); }
/* x = r + a*k for some k: x is aligned to a, with remainder r. */
static Z3_ast aligned(rs_z3 *z, Z3_ast x, int64_t a, int64_t r) {
  Z3_ast ak[2] = {num(z, a), witness(z, "k")};
  Z3_ast sum[2] = {num(z, r), T(z, Z3_mk_mul(z->ctx, 2, ak))};
  return T(z, Z3_mk_eq(z->ctx, x, T(z, Z3_mk_add(z->ctx, 2, sum))));
}
/* x = a*k + m, 0 <= m < a, m != r for some k, m: x is misaligned. */
static Z3_ast misaligned(rs_z3 *z, Z3_ast x, int64_t a, int64_t r) {
  Z3_ast m = witness(z, "m");
  Z3_ast ak[2] = {num(z, a), witness(z, "q")};
  Z3_ast sum[2] = {m, T(z, Z3_mk_mul(z->ctx, 2, ak))};
  Z3_ast c[4] = {T(z, Z3_mk_eq(z->ctx, x, T(z, Z3_mk_add(z->ctx, 2, sum)))), ge(z, m, 0), le(z, m, a - 1),
                 or2(z, le(z, m, r - 1), ge(z, m, r + 1))};
  return and_(z, 4, c);
}

/* t inside the sorted offset set d[0..n), as "lo <= t <= hi" per maximal run [lo, hi]. */
static Z3_ast in_runs(rs_z3 *z, Z3_ast t, const int *d, unsigned n) {
  Z3_ast parts[2 * MAX_OFF + 1];
  unsigned np = 0;
  for (unsigned i = 0; i < n;) {
    unsigned j = i;
    while (j + 1 < n && d[j + 1] == d[j] + 1) j++;
    parts[np++] = and2(z, ge(z, t, d[i]), le(z, t, d[j]));
    i = j + 1;
  }
  return or_(z, np, parts);
}

/* Lane mask every member of a class has (rs_target_member's width rule). */
static rs_lanes class_lanes(const rs_regclass *c) {
  return c->half == 1 ? 1 : c->half == 2 ? 2 : rs_lanes_full(c->width);
}

/* Can a member of class c start at unit b (inside an allowed file, or an allowed special)? Only
 * prunes rules that no member can trigger. */
static bool member_base(const rs_target *t, const rs_regclass *c, int64_t b) {
  for (uint32_t f = 0; f < t->nfiles && f < 32; f++)
    if ((c->files >> f & 1) && b >= t->files[f].first && b + c->width <= (int64_t)t->files[f].first + t->files[f].count)
      return true;
  for (uint32_t s = 0; s < t->nspecials && s < 32; s++)
    if ((c->specials >> s & 1) && t->specials[s].reg.lanes == class_lanes(c) && b == t->specials[s].reg.unit) return true;
  return false;
}

/* The hardware groups for prototype k (the class and lanes of value v = rep[k]), in
 * rs_target_member's order; each rule holds only where the earlier ones do, so a register breaks
 * exactly one rule, as in the native checker. */
static void hardware(rs_z3 *z, uint32_t k) {
  const rs_problem *p = z->p;
  const rs_target *t = p->tgt;
  uint32_t v = z->rep[k];
  const rs_regclass *c = &t->classes[p->vars[v].cls];
  rs_lanes L = class_lanes(c);
  Z3_ast x = z->x[k], lanes_ok = T(z, Z3_mk_eq(z->ctx, z->y[k], unum(z, L)));
  Z3_ast spec[32], infile[32];
  unsigned ns = 0, nf = 0;
  for (uint32_t s = 0; s < t->nspecials && ns < 32; s++)
    if ((c->specials >> s & 1) && t->specials[s].reg.lanes == L) spec[ns++] = eqn(z, x, t->specials[s].reg.unit);
  Z3_ast is_spec = or_(z, ns, spec), not_spec = not_(z, is_spec);
  Z3_ast not_member[33]; /* per allowed file: some rule fails there */
  for (uint32_t f = 0; f < t->nfiles && f < 32; f++) {
    if (!(c->files >> f & 1)) continue;
    const rs_regfile *rf = &t->files[f];
    int64_t first = rf->first, end = (int64_t)rf->first + rf->count, w = c->width, a = c->align;
    Z3_ast in[2] = {ge(z, x, first), le(z, x, end - 1)};
    infile[nf] = and_(z, 2, in);
    /* where lanes match, x is no allowed special and x lies in this file */
    Z3_ast pre_v[3] = {lanes_ok, not_spec, infile[nf]};
    Z3_ast pre = and_(z, 3, pre_v);
    Z3_ast in_range = le(z, x, end - w);
    rule(z, G_RANGE, k, pre, in_range);
    pre = and2(z, pre, in_range);
    Z3_ast fails[4]; /* how v fails to be a member in this file (for the function's reserved) */
    unsigned nfail = 0;
    fails[nfail++] = not_(z, pre);
    Z3_ast mis = NULL; /* x is misaligned (NULL: alignment 1) */
    if (a > 1) {
      rule(z, G_ALIGN, k, pre, aligned(z, x, a, first % a));
      mis = misaligned(z, x, a, first % a);
      fails[nfail++] = mis;
    }
    /* target-reserved units: the aligned bases whose w units touch one (an unaligned base
     * already breaks the alignment rule) */
    Z3_ast ne[64];
    unsigned nne = 0;
    Z3_ast not_res = NULL;
    for (int64_t b = first; b + w <= end; b++) {
      bool res = false;
      for (int64_t u = b; u < b + w; u++) res |= (t->unit_flags[u] & RS_UNIT_RESERVED) != 0;
      if (!res) continue;
      Z3_ast b_ok = not_(z, eqn(z, x, b));
      if (a > 1) { /* Z3's simplifier folds the constant's alignment */
        Z3_ast bm = T(z, Z3_mk_mod(z->ctx, num(z, b), num(z, a)));
        b_ok = T(z, Z3_simplify(z->ctx, implies(z, eqn(z, bm, first % a), b_ok)));
      }
      ne[nne++] = b_ok;
      if (nne == 64) { /* fold long lists to keep the arrays bounded */
        Z3_ast all = and_(z, nne, ne);
        nne = 0;
        ne[nne++] = all;
      }
    }
    if (nne) {
      not_res = and_(z, nne, ne);
      rule(z, G_RESERVED, k, pre, not_res);
      fails[nfail++] = not_(z, not_res);
      pre = and2(z, pre, not_res);
    }
    /* the file's budget, or the function's where its launch bounds lower it (rs_problem_member) */
    uint32_t bud = f < RS_MAX_FILES && p->budget[f] < rf->budget ? p->budget[f] : rf->budget;
    if (bud < rf->count) {
      int64_t top = first + bud - w;
      if (mis) /* aligned -> x <= top, as: above top -> misaligned */
        rule(z, G_BUDGET, k, and2(z, pre, ge(z, x, top + 1)), mis);
      else
        rule(z, G_BUDGET, k, pre, le(z, x, top));
      fails[nfail++] = ge(z, x, top + 1);
    }
    not_member[nf++] = or_(z, nfail, fails);
  }
  Z3_ast where[2] = {is_spec, or_(z, nf, infile)};
  rule(z, G_CLASS, k, NULL, and2(z, lanes_ok, or_(z, 2, where)));
  /* registers the function reserves (lane-aware, with the class's full lanes), checked by the
   * native checker only for registers that are members of the class: "member -> x avoids them",
   * stated as "x on one -> no member". Only bases where a member may start are listed (the rule
   * holds elsewhere anyway): a VGPR value cannot reach the reserved SGPRs, and these tautologies
   * were half of an attention kernel's hardware constraints. */
  if (p->nreserved) {
    not_member[nf] = not_(z, and2(z, lanes_ok, is_spec));
    Z3_ast no_member = and_(z, nf + 1, not_member);
    for (uint32_t q = 0; q < p->nreserved; q++) {
      rs_preg r = p->reserved[q];
      int d[2 * MAX_OFF + 1];
      unsigned n = 0;
      for (int64_t b = (int64_t)r.unit - MAX_OFF; b <= (int64_t)r.unit + MAX_OFF; b++)
        if (b >= 0 && rs_lanes_overlap((uint32_t)b, p->vars[v].full, r.unit, r.lanes) && member_base(t, c, b))
          d[n++] = (int)b;
      if (n) rule(z, G_RESERVED, k, in_runs(z, x, d, n), no_member);
    }
  }
  flush(z);
}

/* Offsets d = base(b) - base(a) at which lanes la of a and lb of b overlap, as a set: bit d + 32
 * of w[0] (d < 32) or of w[1] (d == 32). */
typedef struct {
  uint32_t a, b;
  uint64_t w[2];
} pair_offsets;

static void overlap_offsets(rs_lanes la, rs_lanes lb, uint64_t *w) {
  for (int k = -MAX_OFF; k <= MAX_OFF; k++)
    if (rs_lanes_overlap(64, la, (uint32_t)(64 + k), lb)) w[(k + 32) >> 6] |= 1ull << ((k + 32) & 63);
}

static int by_pair(const void *x, const void *y) {
  const pair_offsets *a = x, *b = y;
  if (a->a != b->a) return a->a < b->a ? -1 : 1;
  return a->b < b->b ? -1 : a->b > b->b;
}

static int by_int64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return a < b ? -1 : a > b;
}

static void ladder_init(rs_z3 *z, ladder *l, const char *sort, const char *name) {
  l->sort = Z3_mk_uninterpreted_sort(z->ctx, Z3_mk_string_symbol(z->ctx, sort));
  Z3_inc_ref(z->ctx, Z3_sort_to_ast(z->ctx, l->sort));
  char nm[32];
  snprintf(nm, sizeof nm, "%s_succ", sort);
  l->succ = Z3_mk_func_decl(z->ctx, Z3_mk_string_symbol(z->ctx, nm), 1, &l->sort, l->sort);
  Z3_inc_ref(z->ctx, Z3_func_decl_to_ast(z->ctx, l->succ));
  l->chain = rs_xcalloc((size_t)(z->p->nvars + 1) * (MAX_OFF + 1), sizeof *l->chain);
  l->name = name;
}
static void ladder_free(rs_z3 *z, ladder *l) {
  if (!l->sort) return;
  for (size_t i = 0; i < (size_t)z->p->nvars * (MAX_OFF + 1); i++)
    if (l->chain[i]) Z3_dec_ref(z->ctx, l->chain[i]);
  for (uint32_t i = 0; i < l->n; i++) Z3_dec_ref(z->ctx, l->c[i]);
  Z3_dec_ref(z->ctx, Z3_func_decl_to_ast(z->ctx, l->succ));
  Z3_dec_ref(z->ctx, Z3_sort_to_ast(z->ctx, l->sort));
  free(l->chain);
  free(l->c);
}
/* Constant c_i, made on first use with its axiom succ(c_{i-1}) = c_i (it waits in newlits[1],
 * asserted on ds with the next check's literals or by rs_z3_new). */
static Z3_ast rung(rs_z3 *z, ladder *l, uint32_t i) {
  while (l->n <= i) {
    uint32_t k = l->n;
    rs_grow((void **)&l->c, sizeof *l->c, &l->cap, (size_t)k + 1);
    char nm[32];
    snprintf(nm, sizeof nm, "%s%u", l->name, k);
    l->c[k] = keep(z, Z3_mk_const(z->ctx, Z3_mk_string_symbol(z->ctx, nm), l->sort));
    l->n++;
    if (k) {
      Z3_ast below = T(z, Z3_mk_app(z->ctx, l->succ, 1, &l->c[k - 1]));
      conj_add(z, &z->newlits[1], T(z, Z3_mk_eq(z->ctx, below, l->c[k])));
    }
  }
  return l->c[i];
}
/* Register r_u, with pair(r_u) = q_{u/2} (waiting in newlits[1] like the successor axioms). */
static Z3_ast reg(rs_z3 *z, uint32_t u) {
  while (z->unit.n <= u) {
    Z3_ast r = rung(z, &z->unit, z->unit.n);
    Z3_ast pr = T(z, Z3_mk_app(z->ctx, z->pair_of, 1, &r));
    conj_add(z, &z->newlits[1], T(z, Z3_mk_eq(z->ctx, pr, rung(z, &z->pair, (z->unit.n - 1) / 2))));
  }
  return z->unit.c[u];
}
/* succ^k(t_v), k <= MAX_OFF; t_v itself must exist. */
static Z3_ast step(rs_z3 *z, ladder *l, uint32_t v, int k) {
  Z3_ast *at = &l->chain[(size_t)v * (MAX_OFF + 1)];
  for (int i = 1; i <= k; i++)
    if (!at[i]) at[i] = keep(z, Z3_mk_app(z->ctx, l->succ, 1, &at[i - 1]));
  return at[k];
}
/* The clause "t_b != succ^d(t_a)" (d >= 0) or "t_a != succ^-d(t_b)" of group g on ladder l. */
static void apart(rs_z3 *z, ladder *l, int g, uint32_t a, uint32_t b, int d) {
  Z3_ast eq = d >= 0 ? Z3_mk_eq(z->ctx, step(z, l, b, 0), step(z, l, a, d)) : Z3_mk_eq(z->ctx, step(z, l, a, 0), step(z, l, b, -d));
  rule(z, g, 0, NULL, not_(z, T(z, eq)));
  flush(z);
}

/* The base of every member of class c modulo *mod (its alignment; members start at a multiple of
 * it from the start of an allowed file, or on an allowed special): *mod = 1 where they differ. */
static int64_t member_residue(const rs_target *t, const rs_regclass *c, int64_t *mod) {
  int64_t a = c->align > 1 ? c->align : 1, r = -1;
  for (uint32_t f = 0; f < t->nfiles && f < 32; f++) {
    if (!(c->files >> f & 1)) continue;
    if (r >= 0 && t->files[f].first % a != r) a = 1;
    r = t->files[f].first % a;
  }
  for (uint32_t s = 0; s < t->nspecials && s < 32; s++) {
    if (!(c->specials >> s & 1) || t->specials[s].reg.lanes != class_lanes(c)) continue;
    if (r >= 0 && t->specials[s].reg.unit % a != r) a = 1;
    r = t->specials[s].reg.unit % a;
  }
  *mod = a;
  return r < 0 ? 0 : r % a;
}

static int64_t gcd64(int64_t a, int64_t b) { return b ? gcd64(b, a % b) : a; }

/* The dataflow groups on ds. Conflicts: one disequality per value pair and offset in the union
 * of the offsets of its conflicts (one pair often has several lane-mask variants). Fixed: per
 * value, the union of the bases that touch a fixed register live in its range.
 * ds is consulted only for candidates that keep every hardware rule, where each value is a
 * member of its class, which the encoding uses twice: offsets and bases no member can take are
 * left out (two values aligned to 2 are never an odd number of units apart), and where one value
 * a of a pair starts on an even unit, offsets 2j and 2j+1 of the other value b are the one
 * disequality pair(p_b) != succ^j(pair(p_a)) over the register pairs q_k = {2k, 2k+1}. Together
 * they leave 55-75% of the atoms of GEMM and attention kernels (64-bit and wider tuples are
 * even-aligned, 32-bit values not). */
static void dataflow(rs_z3 *z) {
  const rs_problem *p = z->p;
  const rs_target *t = p->tgt;
  Z3_context ctx = z->ctx;
  int64_t *mod = rs_xcalloc(p->nvars + 1, sizeof *mod), *res = rs_xcalloc(p->nvars + 1, sizeof *res);
  bool *even = rs_xcalloc(p->nvars + 1, sizeof *even);
  for (uint32_t v = 0; v < p->nvars; v++) {
    res[v] = member_residue(t, &t->classes[p->vars[v].cls], &mod[v]);
    even[v] = mod[v] % 2 == 0 && res[v] % 2 == 0;
  }
  pair_offsets *po = rs_xcalloc(p->nconf + 1, sizeof *po);
  for (uint32_t i = 0; i < p->nconf; i++) {
    po[i].a = p->conf[i].a;
    po[i].b = p->conf[i].b;
    overlap_offsets(p->conf[i].la, p->conf[i].lb, po[i].w);
  }
  qsort(po, p->nconf, sizeof *po, by_pair);
  for (uint32_t i = 0; i < p->nconf;) {
    uint32_t j = i + 1;
    uint64_t w0 = po[i].w[0], w1 = po[i].w[1];
    for (; j < p->nconf && po[j].a == po[i].a && po[j].b == po[i].b; j++) w0 |= po[j].w[0], w1 |= po[j].w[1];
    uint32_t a = po[i].a, b = po[i].b;
    int64_t g = gcd64(mod[a], mod[b]), want = res[b] - res[a];
    bool off[2 * MAX_OFF + 1]; /* off[d + MAX_OFF]: base(b) - base(a) = d overlaps */
    for (int k = 0; k <= 2 * MAX_OFF; k++) {
      int d = k - MAX_OFF;
      off[k] = ((k < 64 ? w0 >> k : w1) & 1) && ((d - want) % g + g) % g == 0;
    }
    /* pairs of offsets that one register pair covers: relative to the even-based value */
    bool ea = even[a], eb = even[b];
    if (ea != eb) {
      int sgn = ea ? 1 : -1; /* offset of the other value from the even one: sgn * d */
      for (int o = -MAX_OFF; o + 1 <= MAX_OFF; o += 2) {
        int k0 = sgn * o + MAX_OFF, k1 = sgn * (o + 1) + MAX_OFF;
        if (!off[k0] || !off[k1]) continue;
        off[k0] = off[k1] = false;
        uint32_t ab[2] = {a, b};
        for (int q = 0; q < 2; q++) { /* pair(p_a), pair(p_b), made on first use */
          Z3_ast *pv = &z->pair.chain[(size_t)ab[q] * (MAX_OFF + 1)];
          if (!*pv) *pv = keep(z, Z3_mk_app(ctx, z->pair_of, 1, &z->unit.chain[(size_t)ab[q] * (MAX_OFF + 1)]));
        }
        apart(z, &z->pair, G_CONFLICT, a, b, sgn * o / 2);
      }
    }
    for (int k = 0; k <= 2 * MAX_OFF; k++)
      if (off[k]) apart(z, &z->unit, G_CONFLICT, a, b, k - MAX_OFF);
    i = j;
  }
  free(po);
  /* (value << 32 | base) per forbidden base, sorted and unique */
  int64_t *fb = NULL;
  uint32_t nfb = 0, capfb = 0;
  for (uint32_t i = 0; i < p->nfixed; i++) {
    const rs_fixed *fx = &p->fixed[i];
    const rs_regclass *c = &t->classes[p->vars[fx->v].cls];
    for (int64_t b = (int64_t)fx->p.unit - MAX_OFF; b <= (int64_t)fx->p.unit + MAX_OFF; b++)
      if (b >= 0 && rs_lanes_overlap((uint32_t)b, fx->lv, fx->p.unit, fx->p.lanes) && member_base(t, c, b) &&
          (b - res[fx->v]) % mod[fx->v] == 0) {
        rs_grow((void **)&fb, sizeof *fb, &capfb, (size_t)nfb + 1);
        fb[nfb++] = (int64_t)fx->v << 32 | b;
      }
  }
  if (nfb) qsort(fb, nfb, sizeof *fb, by_int64);
  for (uint32_t i = 0; i < nfb; i++) {
    if (i && fb[i] == fb[i - 1]) continue;
    uint32_t v = (uint32_t)(fb[i] >> 32), b = (uint32_t)(fb[i] & 0xffffffff);
    rule(z, G_FIXED, 0, NULL, not_(z, T(z, Z3_mk_eq(ctx, step(z, &z->unit, v, 0), reg(z, b)))));
    flush(z);
  }
  free(fb);
  free(mod);
  free(res);
  free(even);
}

rs_z3 *rs_z3_new(const rs_problem *p, unsigned timeout_ms, rs_err *e) {
  rs_z3 *z = rs_xcalloc(1, sizeof *z);
  z->p = p;
  Z3_config cfg = Z3_mk_config();
  Z3_set_param_value(cfg, "model", "false"); /* only sat/unsat and cores are read */
  z->ctx = Z3_mk_context_rc(cfg);
  Z3_del_config(cfg);
  if (!z->ctx) {
    free(z);
    rs_errf(e, NULL, 0, "z3: cannot create a context");
    return NULL;
  }
  Z3_set_error_handler(z->ctx, z3_quiet);
  Z3_context ctx = z->ctx;
  z->int_sort = Z3_mk_int_sort(ctx);
  Z3_inc_ref(ctx, Z3_sort_to_ast(ctx, z->int_sort));
  ladder_init(z, &z->unit, "Reg", "r");
  ladder_init(z, &z->pair, "Pair", "q");
  z->pair_of = Z3_mk_func_decl(ctx, Z3_mk_string_symbol(ctx, "pair"), 1, &z->unit.sort, z->pair.sort);
  Z3_inc_ref(ctx, Z3_func_decl_to_ast(ctx, z->pair_of));
  /* the SMT core directly (no tactic preprocessing on every incremental check). hs: the old
   * simplex (the default, lra, took a quarter longer per check). ds: no relevancy tracking (every
   * dataflow atom is relevant once its group is assumed; tracking cost a third of a check). */
  z->ds = Z3_mk_simple_solver(ctx);
  Z3_solver_inc_ref(ctx, z->ds);
  z->hs = Z3_mk_simple_solver(ctx);
  Z3_solver_inc_ref(ctx, z->hs);
  Z3_params prm = Z3_mk_params(ctx);
  Z3_params_inc_ref(ctx, prm);
  if (timeout_ms) Z3_params_set_uint(ctx, prm, Z3_mk_string_symbol(ctx, "timeout"), timeout_ms);
  Z3_params_set_uint(ctx, prm, Z3_mk_string_symbol(ctx, "arith.solver"), 2);
  Z3_solver_set_params(ctx, z->hs, prm);
  Z3_params_set_uint(ctx, prm, Z3_mk_string_symbol(ctx, "relevancy"), 0);
  Z3_solver_set_params(ctx, z->ds, prm);
  Z3_params_dec_ref(ctx, prm);

  static const char *const gname[G__N] = {"hw_class", "hw_range", "hw_align", "hw_reserved",
                                          "hw_budget", "df_conflict", "df_fixed"};
  Z3_sort bs = Z3_mk_bool_sort(ctx);
  for (int g = 0; g < G__N; g++) {
    z->g[g] = Z3_mk_const(ctx, Z3_mk_string_symbol(ctx, gname[g]), bs);
    Z3_inc_ref(ctx, z->g[g]);
  }
  /* prototypes: values of one class and full lanes share their hardware rules */
  z->proto = rs_xcalloc(p->nvars + 1, sizeof *z->proto);
  z->rep = rs_xcalloc(p->nvars + 1, sizeof *z->rep);
  for (uint32_t v = 0; v < p->nvars; v++) {
    uint32_t k = 0;
    while (k < z->nproto && (p->vars[z->rep[k]].cls != p->vars[v].cls || p->vars[z->rep[k]].full != p->vars[v].full)) k++;
    if (k == z->nproto) z->rep[z->nproto++] = v;
    z->proto[v] = k;
  }
  z->x = rs_xcalloc(z->nproto + 1, sizeof *z->x);
  z->y = rs_xcalloc(z->nproto + 1, sizeof *z->y);
  z->bf = rs_xcalloc(z->nproto + 1, sizeof *z->bf);
  z->bi = rs_xcalloc(z->nproto + 1, sizeof *z->bi);
  z->gv = rs_xcalloc((size_t)G__HW * z->nproto + 1, sizeof *z->gv);
  z->gvoff = rs_xcalloc((size_t)G__HW * z->nproto + 1, sizeof *z->gvoff);
  z->hassume = rs_xcalloc((size_t)(G__HW + 1) * z->nproto + 1, sizeof *z->hassume);
  z->round = rs_xcalloc(z->nproto + 1, sizeof *z->round);
  z->hval = rs_xcalloc(p->nvars + 1, sizeof *z->hval);
  z->pending = rs_xcalloc(p->nvars + 1, sizeof *z->pending);
  z->dassume = rs_xcalloc(G__N + (size_t)p->nvars, sizeof *z->dassume);
  for (uint32_t k = 0; k < z->nproto; k++) {
    char nm[48];
    snprintf(nm, sizeof nm, "x%u", k);
    z->x[k] = keep(z, Z3_mk_const(ctx, Z3_mk_string_symbol(ctx, nm), z->int_sort));
    snprintf(nm, sizeof nm, "y%u", k);
    z->y[k] = keep(z, Z3_mk_const(ctx, Z3_mk_string_symbol(ctx, nm), z->int_sort));
    for (int g = 0; g < G__HW; g++) {
      snprintf(nm, sizeof nm, "%s_%u", gname[g], k);
      z->gv[(size_t)k * G__HW + g] = keep(z, Z3_mk_const(ctx, Z3_mk_string_symbol(ctx, nm), bs));
      z->gvoff[(size_t)k * G__HW + g] = keep(z, Z3_mk_not(ctx, z->gv[(size_t)k * G__HW + g]));
    }
    flush(z);
  }
  for (uint32_t v = 0; v < p->nvars; v++) {
    char nm[32];
    snprintf(nm, sizeof nm, "p%u", v);
    z->unit.chain[(size_t)v * (MAX_OFF + 1)] = keep(z, Z3_mk_const(ctx, Z3_mk_string_symbol(ctx, nm), z->unit.sort));
    flush(z);
  }
  reg(z, p->tgt->nunits + MAX_OFF); /* every unit a candidate or a fixed exclusion names */
  conj_assert(z, z->ds, NULL, &z->newlits[1]);
  for (uint32_t k = 0; k < z->nproto; k++) hardware(z, k);
  dataflow(z);
  for (int g = G__HW; g < G__N; g++) conj_assert(z, z->ds, z->g[g], &z->rules[g]);
  /* internalize every constraint now, so candidates see only the incremental cost: ds with its
   * groups on (no candidate: the disequalities hold at once), hs with its groups off (no search) */
  Z3_solver_check_assumptions(ctx, z->ds, 2, &z->g[G__HW]);
  Z3_solver_check_assumptions(ctx, z->hs, G__HW * z->nproto, z->gvoff);
  flush(z);
  if (z->failed || Z3_get_error_code(ctx) != Z3_OK) {
    rs_errf(e, NULL, 0, "z3: cannot build the constraints of %s", p->func ? p->func : "?");
    rs_z3_free(z);
    return NULL;
  }
  return z;
}

void rs_z3_free(rs_z3 *z) {
  if (!z) return;
  Z3_context ctx = z->ctx;
  flush(z);
  for (int g = 0; g < G__N; g++) conj_free(z, &z->rules[g]);
  for (int s = 0; s < 2; s++) conj_free(z, &z->newlits[s]);
  for (uint32_t k = 0; k < z->nproto; k++) {
    if (z->x[k]) Z3_dec_ref(ctx, z->x[k]);
    if (z->y[k]) Z3_dec_ref(ctx, z->y[k]);
    if (z->bf[k]) Z3_dec_ref(ctx, z->bf[k]), Z3_dec_ref(ctx, z->bi[k]);
    for (int g = 0; g < G__HW; g++)
      if (z->gv[(size_t)k * G__HW + g])
        Z3_dec_ref(ctx, z->gv[(size_t)k * G__HW + g]), Z3_dec_ref(ctx, z->gvoff[(size_t)k * G__HW + g]);
  }
  ladder_free(z, &z->unit);
  ladder_free(z, &z->pair);
  if (z->pair_of) Z3_dec_ref(ctx, Z3_func_decl_to_ast(ctx, z->pair_of));
  for (int g = 0; g < G__N; g++)
    if (z->g[g]) Z3_dec_ref(ctx, z->g[g]);
  Z3_solver_dec_ref(ctx, z->ds);
  Z3_solver_dec_ref(ctx, z->hs);
  Z3_dec_ref(ctx, Z3_sort_to_ast(ctx, z->int_sort));
  lit_table *tb[2] = {&z->hl, &z->dl};
  for (int q = 0; q < 2; q++) {
    for (uint32_t i = 0; i < tb[q]->cap; i++)
      if (tb[q]->e[i].v != UINT32_MAX && tb[q]->e[i].lit) Z3_dec_ref(ctx, tb[q]->e[i].lit);
    free(tb[q]->e);
  }
  Z3_del_context(ctx);
  free(z->proto);
  free(z->rep);
  free(z->gv);
  free(z->gvoff);
  free(z->hval);
  free(z->pending);
  free(z->round);
  free(z->x);
  free(z->y);
  free(z->bf);
  free(z->bi);
  free(z->tmp);
  free(z->hassume);
  free(z->dassume);
  free(z);
}

/* Check the candidate's literals on ds (dassume[G__N..], one per value) under the dataflow groups
 * in mask. When unsat: ci->groups = the groups in the core, vals (at most 2) the values whose
 * literals it holds. */
typedef struct {
  unsigned groups;
  uint32_t vals[2];
  unsigned nvals;
} core_info;

static Z3_lbool check_groups(rs_z3 *z, unsigned mask, core_info *ci) {
  uint32_t nl = z->p->nvars;
  Z3_ast *assume = z->dassume, *as = assume + G__N - __builtin_popcount(mask);
  unsigned k = 0;
  for (int g = 0; g < G__N; g++)
    if (mask >> g & 1) as[k++] = z->g[g];
  Z3_lbool r = Z3_solver_check_assumptions(z->ctx, z->ds, k + nl, as);
  memset(ci, 0, sizeof *ci);
  if (r != Z3_L_FALSE) return r;
  Z3_ast_vector core = Z3_solver_get_unsat_core(z->ctx, z->ds);
  Z3_ast_vector_inc_ref(z->ctx, core);
  unsigned nc = Z3_ast_vector_size(z->ctx, core);
  for (unsigned i = 0; i < nc; i++) {
    Z3_ast a = Z3_ast_vector_get(z->ctx, core, i);
    bool found = false;
    for (int g = 0; g < G__N && !found; g++)
      if (Z3_is_eq_ast(z->ctx, a, z->g[g])) ci->groups |= 1u << g, found = true;
    for (uint32_t j = 0; j < nl && !found && ci->nvals < 2; j++)
      if (Z3_is_eq_ast(z->ctx, a, assume[G__N + j])) {
        uint32_t v = j;
        if (ci->nvals == 0 || ci->vals[0] != v) ci->vals[ci->nvals++] = v;
        found = true;
      }
  }
  Z3_ast_vector_dec_ref(z->ctx, core);
  return r;
}

/* hs: the n (prototype, register) pairs z->hl.e[pairs[..]] (distinct prototypes) under the
 * hardware groups in mask; the guards of every other prototype and group are assumed off. */
static Z3_lbool check_hw(rs_z3 *z, const uint32_t *pairs, uint32_t n, unsigned mask) {
  size_t ng = (size_t)G__HW * z->nproto;
  Z3_ast *as = z->hassume;
  memcpy(as, z->gvoff, ng * sizeof *as);
  for (uint32_t i = 0; i < n; i++) {
    const cand_lit *e = &z->hl.e[pairs[i]];
    for (int g = 0; g < G__HW; g++)
      if (mask >> g & 1) as[(size_t)e->v * G__HW + g] = z->gv[(size_t)e->v * G__HW + g];
    as[ng + i] = e->lit;
  }
  return Z3_solver_check_assumptions(z->ctx, z->hs, (unsigned)(ng + n), as);
}

static void timeout(rs_check_result *res, const char *why) {
  if (res->verdict == RS_V_PASS) res->verdict = RS_V_TIMEOUT;
  if (res->ndiag < RS_MAX_DIAG) snprintf(res->diag[res->ndiag++], sizeof res->diag[0], "z3: %s", why);
}

static void finding(rs_z3 *z, const rs_candidate *c, int g, const core_info *ci, rs_check_result *res) {
  const rs_problem *p = z->p;
  const rs_target *t = p->tgt;
  char a[48], b[48];
  if (ci->nvals == 0)
    rs_result_add(res, group_kind[g], "z3: %s", group_what[g]);
  else if (ci->nvals == 1)
    rs_result_add(res, group_kind[g], "z3: %s in %s: %s", p->vars[ci->vals[0]].name,
                  rs_candidate_reg_str(t, c, ci->vals[0], a, sizeof a), group_what[g]);
  else
    rs_result_add(res, group_kind[g], "z3: %s; unsat core: %s (%s), %s (%s)", group_what[g], p->vars[ci->vals[0]].name,
                  rs_candidate_reg_str(t, c, ci->vals[0], a, sizeof a), p->vars[ci->vals[1]].name,
                  rs_candidate_reg_str(t, c, ci->vals[1], b, sizeof b));
}

/* A register named past its file's end (rs_candidate.beyond) has no unit: its literal states the
 * file and register it names (bf_k, bi_k of the value's prototype k), and, made with the
 * prototype's first such literal, the rules on them take rs_target_member's order: class (a file
 * the class may not use) and range (where the lanes match, the named tuple must end inside an
 * allowed file). The literal leaves x_k free, so the other rules hold; so no other group fails, as
 * in the native checker. ds never sees such a candidate: its hardware check is always unsat. */
static void beyond_rules(rs_z3 *z, uint32_t k) {
  if (z->bf[k]) return;
  const rs_target *t = z->p->tgt;
  const rs_regclass *c = &t->classes[z->p->vars[z->rep[k]].cls];
  char nm[32];
  snprintf(nm, sizeof nm, "bf%u", k);
  z->bf[k] = keep(z, Z3_mk_const(z->ctx, Z3_mk_string_symbol(z->ctx, nm), z->int_sort));
  snprintf(nm, sizeof nm, "bi%u", k);
  z->bi[k] = keep(z, Z3_mk_const(z->ctx, Z3_mk_string_symbol(z->ctx, nm), z->int_sort));
  Z3_ast lanes_ok = T(z, Z3_mk_eq(z->ctx, z->y[k], unum(z, class_lanes(c))));
  for (uint32_t f = 0; f < t->nfiles && f < 32; f++) {
    Z3_ast in_f = eqn(z, z->bf[k], f);
    if (!(c->files >> f & 1)) rule(z, G_CLASS, k, NULL, not_(z, in_f));
    else rule(z, G_RANGE, k, and2(z, lanes_ok, in_f), le(z, z->bi[k], (int64_t)t->files[f].count - c->width));
  }
  flush(z);
}

static uint64_t cand_hash(uint32_t v, rs_preg r) {
  uint64_t h = ((uint64_t)v << 32 | r.unit) * 0x9E3779B97F4A7C15ull;
  return (h ^ (h >> 29) ^ r.lanes * 0xC2B2AE3D27D4EB4Full) * 0x165667B19E3779F9ull;
}

/* Room for `more` new entries at most half full, so that indices stay put while a check adds them. */
static void lit_reserve(lit_table *tb, uint32_t more) {
  if (2 * ((uint64_t)tb->n + more) <= tb->cap) return;
  uint32_t oc = tb->cap, nc = oc ? oc : 1024;
  while (2 * ((uint64_t)tb->n + more) > nc) nc *= 2;
  cand_lit *old = tb->e;
  tb->e = rs_xcalloc(nc, sizeof *tb->e);
  for (uint32_t i = 0; i < nc; i++) tb->e[i].v = UINT32_MAX;
  tb->cap = nc;
  for (uint32_t i = 0; i < oc; i++) {
    if (old[i].v == UINT32_MAX) continue;
    uint32_t k = (uint32_t)(cand_hash(old[i].v, (rs_preg){old[i].unit, old[i].lanes}) >> 32) & (nc - 1);
    while (tb->e[k].v != UINT32_MAX) k = (k + 1) & (nc - 1);
    tb->e[k] = old[i];
  }
  free(old);
}

/* The entry of (key, r), made empty (no literal yet) when new. b: r names a register past its
 * file's end (r.unit is then a key: RS_UNIT_BEYOND is not unique). */
static uint32_t lit_get(lit_table *tb, uint32_t key, rs_preg r, const rs_beyond *b) {
  if (b) r.unit = 0x80000000u | b->file << 20 | b->index; /* index < RS_BEYOND_MAX < 2^20 */
  uint32_t k = (uint32_t)(cand_hash(key, r) >> 32) & (tb->cap - 1);
  for (; tb->e[k].v != UINT32_MAX; k = (k + 1) & (tb->cap - 1))
    if (tb->e[k].v == key && tb->e[k].unit == r.unit && tb->e[k].lanes == r.lanes) return k;
  tb->e[k] = (cand_lit){key, r.unit, r.lanes, NULL, HW_UNKNOWN, 0};
  tb->n++;
  return k;
}

/* hs: the literal "prototype k takes r" (made on first use, its definition waiting in newlits[0]),
 * as its index in z->hl. */
static uint32_t hw_lit(rs_z3 *z, uint32_t k, rs_preg r, const rs_beyond *b) {
  uint32_t i = lit_get(&z->hl, k, r, b);
  if (z->hl.e[i].lit) return i;
  Z3_context ctx = z->ctx;
  char nm[64];
  snprintf(nm, sizeof nm, "h%u@%u:%llx", k, z->hl.e[i].unit, (unsigned long long)r.lanes);
  if (b) beyond_rules(z, k);
  Z3_ast u = b ? num(z, b->file) : num(z, r.unit), l = unum(z, r.lanes), bx = b ? z->bf[k] : z->x[k];
  Z3_ast hb[6] = {T(z, Z3_mk_le(ctx, bx, u)), T(z, Z3_mk_ge(ctx, bx, u)), T(z, Z3_mk_le(ctx, z->y[k], l)),
                  T(z, Z3_mk_ge(ctx, z->y[k], l)), NULL, NULL};
  if (b) hb[4] = le(z, z->bi[k], b->index), hb[5] = ge(z, z->bi[k], b->index);
  Z3_ast h = Z3_mk_const(ctx, Z3_mk_string_symbol(ctx, nm), Z3_mk_bool_sort(ctx));
  Z3_inc_ref(ctx, h);
  z->hl.e[i].lit = h;
  conj_add(z, &z->newlits[0], implies(z, h, and_(z, b ? 6 : 4, hb)));
  return i;
}

/* ds: the literal "v takes r" (made on first use, its definition waiting in newlits[1]; for a
 * register past its file's end it stays free: ds never sees such a candidate). */
static Z3_ast df_lit(rs_z3 *z, uint32_t v, rs_preg r, const rs_beyond *b) {
  uint32_t i = lit_get(&z->dl, v, r, b);
  if (z->dl.e[i].lit) return z->dl.e[i].lit;
  char nm[64];
  snprintf(nm, sizeof nm, "d%u@%u:%llx", v, z->dl.e[i].unit, (unsigned long long)r.lanes);
  Z3_ast d = Z3_mk_const(z->ctx, Z3_mk_string_symbol(z->ctx, nm), Z3_mk_bool_sort(z->ctx));
  Z3_inc_ref(z->ctx, d);
  z->dl.e[i].lit = d;
  if (!b) conj_add(z, &z->newlits[1], implies(z, d, T(z, Z3_mk_eq(z->ctx, step(z, &z->unit, v, 0), reg(z, r.unit)))));
  return d;
}

enum { HW_PENDING = HW_BROKEN + 1 }; /* an entry this check decides (listed once) */

/* Decide the hs entries pending[0..n): in rounds of one pair per prototype; a round that is
 * unsat is decided pair by pair, and a broken pair group by group. false: Z3 gave no answer
 * (the reason in res); the undecided entries are unknown again. */
static bool decide_hw(rs_z3 *z, uint32_t *pending, uint32_t n, rs_check_result *res) {
  const unsigned hw = (1u << G__HW) - 1;
  uint32_t done = 0, r = 0;
  memset(z->round, 0, sizeof *z->round * z->nproto);
  bool ok = true;
  while (done < n && ok) {
    uint32_t nh = 0;
    r++;
    for (uint32_t i = done; i < n; i++) { /* take one pending pair per prototype to the front */
      uint32_t k = z->hl.e[pending[i]].v;
      if (z->round[k] == r) continue;
      z->round[k] = r;
      uint32_t t = pending[done + nh];
      pending[done + nh++] = pending[i], pending[i] = t;
    }
    Z3_lbool all = check_hw(z, pending + done, nh, hw);
    for (uint32_t j = 0; j < nh && ok; j++) {
      cand_lit *e = &z->hl.e[pending[done + j]];
      Z3_lbool one = all == Z3_L_TRUE ? Z3_L_TRUE : all == Z3_L_UNDEF ? all : check_hw(z, pending + done + j, 1, hw);
      if (one == Z3_L_TRUE) {
        e->hw = HW_OK;
        continue;
      }
      unsigned broken = 0;
      for (int g = 0; g < G__HW && one == Z3_L_FALSE; g++) {
        Z3_lbool rg = check_hw(z, pending + done + j, 1, 1u << g);
        if (rg == Z3_L_FALSE) broken |= 1u << g;
        if (rg == Z3_L_UNDEF) one = rg;
      }
      if (one == Z3_L_UNDEF) {
        timeout(res, Z3_solver_get_reason_unknown(z->ctx, z->hs));
        ok = false;
      } else if (!broken) { /* unsat, yet no group alone: impossible with every variable fixed */
        timeout(res, "unsat without a failing group");
        ok = false;
      } else {
        e->hw = HW_BROKEN, e->broken = (uint8_t)broken;
      }
    }
    done += nh;
  }
  for (uint32_t i = 0; i < n; i++)
    if (z->hl.e[pending[i]].hw == HW_PENDING) z->hl.e[pending[i]].hw = HW_UNKNOWN;
  return ok;
}

void rs_z3_check(rs_z3 *z, const rs_candidate *c, rs_check_result *res) {
  double t0 = rs_now();
  const rs_problem *p = z->p;
  assert(c->n == p->nvars); /* parsing failures never reach a checker */
  lit_reserve(&z->hl, p->nvars);
  lit_reserve(&z->dl, p->nvars);
  uint32_t npend = 0;
  for (uint32_t v = 0; v < p->nvars; v++) {
    assert(c->reg[v].lanes != 0);
    const rs_beyond *b = c->reg[v].unit == RS_UNIT_BEYOND ? &c->beyond[v] : NULL;
    uint32_t h = hw_lit(z, z->proto[v], c->reg[v], b);
    z->hval[v] = h;
    if (z->hl.e[h].hw == HW_UNKNOWN) z->hl.e[h].hw = HW_PENDING, z->pending[npend++] = h;
    z->dassume[G__N + v] = df_lit(z, v, c->reg[v], b);
    flush(z);
  }
  conj_assert(z, z->hs, NULL, &z->newlits[0]);
  conj_assert(z, z->ds, NULL, &z->newlits[1]);
  const unsigned df = ((1u << G__N) - 1) & ~((1u << G__HW) - 1);
  /* hardware first: it decides the verdict whenever it is broken */
  if (decide_hw(z, z->pending, npend, res)) {
    unsigned broken = 0;
    core_info ci[G__HW];
    for (uint32_t v = 0; v < p->nvars; v++) {
      const cand_lit *e = &z->hl.e[z->hval[v]];
      if (e->hw != HW_BROKEN) continue;
      for (int g = 0; g < G__HW; g++)
        if ((e->broken >> g & 1) && !(broken >> g & 1)) broken |= 1u << g, ci[g] = (core_info){1u << g, {v, 0}, 1};
    }
    for (int g = 0; g < G__HW; g++)
      if (broken >> g & 1) finding(z, c, g, &ci[g], res);
    if (!broken) {
      core_info full, one;
      Z3_lbool r = check_groups(z, df, &full);
      if (r == Z3_L_UNDEF) {
        timeout(res, Z3_solver_get_reason_unknown(z->ctx, z->ds));
      } else if (r == Z3_L_FALSE) {
        unsigned d = full.groups & df;
        if (__builtin_popcount(d) == 1) {
          finding(z, c, __builtin_ctz(d), &full, res);
        } else {
          for (int g = G__HW; g < G__N; g++) {
            Z3_lbool rg = check_groups(z, 1u << g, &one);
            if (rg == Z3_L_UNDEF) {
              timeout(res, Z3_solver_get_reason_unknown(z->ctx, z->ds));
              break;
            }
            if (rg == Z3_L_FALSE) finding(z, c, g, &one, res);
          }
        }
        if (res->verdict == RS_V_PASS) timeout(res, "unsat without a failing group");
      }
    }
  }
  if (z->failed) timeout(res, "z3 API error");
  z->failed = false;
  flush(z);
  res->seconds += rs_now() - t0;
}
