/* z3.c - the Z3 checker: VeriLocc's SMT formulation (arXiv 2506.17506) over the Problem.
 *
 * One context per instance, built once, with two solvers. Per value v: an integer x_v (base unit
 * in the target's numbering) and an integer y_v (its lane mask). The constraints come in groups,
 * each guarded by one Boolean group literal g so that an unsat core names the rules a candidate
 * breaks:
 *   hardware (solver hs): class (lanes of the class; an allowed file or an allowed special
 *             register), range (inside the file), align, reserved (target and function), budget;
 *   dataflow (solver ds): conflict (lane-aware interference), fixed (fixed physical registers).
 * The hardware groups mirror rs_target_member rule by rule and in its order (each rule is guarded
 * by the earlier ones holding), so a value breaks exactly the rule the native checker names.
 * The dataflow groups are pure difference constraints over the x_v: per pair of interfering
 * values (conflicts deduplicated per pair, the union of their forbidden offsets), x_b - x_a
 * avoids each maximal run [lo, hi] of offsets where the lanes overlap ("x_b - x_a <= lo - 1 or
 * x_b - x_a >= hi + 1"); a fixed register bounds one x_v the same way. ds is a QF_IDL solver
 * (Z3's difference-logic theory), which internalizes 10^5 such clauses in well under a second
 * where the general arithmetic solver spent tens of seconds on its first check.
 * A check passes the candidate as assumptions (bounds x_v <= unit, x_v >= unit, and on hs also
 * y_v <= lanes, y_v >= lanes) plus the group literals.
 *
 * Deciding the category (the native checker reports hardware over dataflow): hs is checked first
 * with every hardware group; unsat: each hardware group is checked alone (the candidate fixes
 * every variable, so "a group alone is unsat" <=> "the candidate breaks it"), verdict hardware
 * with every broken hardware kind counted, and the dataflow groups are not consulted. Sat: ds is
 * checked with both dataflow groups; unsat: the core's dataflow group when it names one, else each
 * is re-checked alone. Counts are 1 per broken kind: Z3 proves that a kind is broken, not how
 * often. */
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

/* The candidate enters a check as one assumed Boolean per value and solver, "v takes (unit,
 * lanes)", asserted once (the first time a candidate uses that register for v) to imply the
 * bounds x <= unit, x >= unit, y <= lanes, y >= lanes (hs) or x <= unit, x >= unit (ds). Bounds
 * go straight to the arithmetic solver, where equalities would add equality atoms and adapter
 * clauses; and Boolean constants are the only assumptions Z3 takes as they are: any other term
 * gets a fresh proxy, an implication asserted and internalized on every check and popped after
 * it (about 40 us per assumption, 0.2 s per check on 1000 values). */
typedef struct {
  uint32_t v, unit; /* v == UINT32_MAX: empty */
  rs_lanes lanes;
  Z3_ast h, d;      /* the literals on hs and ds (referenced) */
} cand_lit;

struct rs_z3 {
  const rs_problem *p;
  Z3_context ctx;
  Z3_solver ds;     /* the dataflow groups (difference logic) */
  Z3_solver hs;     /* the hardware groups */
  Z3_sort int_sort;
  Z3_ast *x, *y;   /* per value: base unit, lanes (referenced) */
  Z3_ast g[G__N];  /* group literals (referenced) */
  Z3_ast *tmp;     /* scratch references released by flush() */
  uint32_t ntmp, captmp;
  bool failed;     /* a Z3 call returned no term (error) */
  Z3_ast *hassume; /* per check on hs: groups + one literal per value */
  Z3_ast *dassume; /* per check on ds: groups + one literal per value */
  cand_lit *lits;  /* open-addressing table of the candidate literals made so far */
  uint32_t nlits, caplits;
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
/* Assert g -> (pre -> c), i.e. the rule c of group g where pre (NULL: always) holds. */
static void rule(rs_z3 *z, int g, Z3_ast pre, Z3_ast c) {
  Z3_ast body = pre ? T(z, Z3_mk_implies(z->ctx, pre, c)) : c;
  Z3_ast a = T(z, Z3_mk_implies(z->ctx, z->g[g], body));
  Z3_solver_assert(z->ctx, g < G__HW ? z->hs : z->ds, a);
}

/* Forbid t in the sorted offset set d[0..n) as "t < lo or t > hi" per maximal run [lo, hi]:
 * contiguous lane masks give one run (the interval form), others a few. */
static Z3_ast avoid_runs(rs_z3 *z, Z3_ast t, const int *d, unsigned n) {
  Z3_ast parts[64];
  unsigned np = 0;
  for (unsigned i = 0; i < n;) {
    unsigned j = i;
    while (j + 1 < n && d[j + 1] == d[j] + 1) j++;
    Z3_ast alt[2] = {le(z, t, d[i] - 1), ge(z, t, d[j] + 1)};
    parts[np++] = or_(z, 2, alt);
    i = j + 1;
  }
  return and_(z, np, parts);
}

/* Lane mask every member of a class has (rs_target_member's width rule). */
static rs_lanes class_lanes(const rs_regclass *c) {
  return c->half == 1 ? 1 : c->half == 2 ? 2 : rs_lanes_full(c->width);
}

/* The hardware groups for value v, in rs_target_member's order; each rule holds only where the
 * earlier ones do, so a register breaks exactly one rule, as in the native checker. */
static void hardware(rs_z3 *z, uint32_t v) {
  const rs_problem *p = z->p;
  const rs_target *t = p->tgt;
  const rs_regclass *c = &t->classes[p->vars[v].cls];
  rs_lanes L = class_lanes(c);
  Z3_ast x = z->x[v], lanes_ok = T(z, Z3_mk_eq(z->ctx, z->y[v], unum(z, L)));
  Z3_ast spec[32], infile[32];
  unsigned ns = 0, nf = 0;
  for (uint32_t s = 0; s < t->nspecials && ns < 32; s++)
    if ((c->specials >> s & 1) && t->specials[s].reg.lanes == L) spec[ns++] = eqn(z, x, t->specials[s].reg.unit);
  Z3_ast is_spec = or_(z, ns, spec), not_spec = not_(z, is_spec);
  Z3_ast member_ok[32]; /* per allowed file: every rule holds there */
  for (uint32_t f = 0; f < t->nfiles && f < 32; f++) {
    if (!(c->files >> f & 1)) continue;
    const rs_regfile *rf = &t->files[f];
    int64_t first = rf->first, end = (int64_t)rf->first + rf->count, w = c->width;
    Z3_ast in[2] = {ge(z, x, first), le(z, x, end - 1)};
    infile[nf] = and_(z, 2, in);
    /* where lanes match, x is no allowed special and x lies in this file */
    Z3_ast pre_v[3] = {lanes_ok, not_spec, infile[nf]};
    Z3_ast pre = and_(z, 3, pre_v);
    Z3_ast in_range = le(z, x, end - w);
    rule(z, G_RANGE, pre, in_range);
    pre = and2(z, pre, in_range);
    if (c->align > 1) {
      Z3_ast m = T(z, Z3_mk_mod(z->ctx, x, num(z, c->align)));
      Z3_ast aligned = eqn(z, m, first % c->align);
      rule(z, G_ALIGN, pre, aligned);
      pre = and2(z, pre, aligned);
    }
    /* target-reserved units: bases whose w units touch one */
    Z3_ast ne[64];
    unsigned nne = 0;
    Z3_ast not_res = NULL;
    for (int64_t b = first; b + w <= end; b++) {
      bool res = false;
      for (int64_t u = b; u < b + w; u++) res |= (t->unit_flags[u] & RS_UNIT_RESERVED) != 0;
      if (!res) continue;
      ne[nne++] = not_(z, eqn(z, x, b));
      if (nne == 64) { /* fold long lists to keep the arrays bounded */
        Z3_ast a = and_(z, nne, ne);
        nne = 0;
        ne[nne++] = a;
      }
    }
    if (nne) {
      not_res = and_(z, nne, ne);
      rule(z, G_RESERVED, pre, not_res);
      pre = and2(z, pre, not_res);
    }
    if (rf->budget < rf->count) {
      Z3_ast in_budget = le(z, x, first + rf->budget - w);
      rule(z, G_BUDGET, pre, in_budget);
      pre = and2(z, pre, in_budget);
    }
    member_ok[nf++] = pre;
  }
  Z3_ast where[2] = {is_spec, or_(z, nf, infile)};
  rule(z, G_CLASS, NULL, and2(z, lanes_ok, or_(z, 2, where)));
  /* registers the function reserves (lane-aware, with the class's full lanes), checked by the
   * native checker only for registers that are members of the class */
  if (p->nreserved) {
    Z3_ast ok_any[34];
    memcpy(ok_any, member_ok, nf * sizeof *ok_any);
    ok_any[nf] = and2(z, lanes_ok, is_spec);
    Z3_ast member = or_(z, nf + 1, ok_any);
    for (uint32_t k = 0; k < p->nreserved; k++) {
      rs_preg r = p->reserved[k];
      int d[65];
      unsigned n = 0;
      for (int64_t b = (int64_t)r.unit - 32; b <= (int64_t)r.unit + 32; b++)
        if (b >= 0 && rs_lanes_overlap((uint32_t)b, p->vars[v].full, r.unit, r.lanes)) d[n++] = (int)b;
      if (n) rule(z, G_RESERVED, member, avoid_runs(z, x, d, n));
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
  for (int k = -32; k <= 32; k++)
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

/* The dataflow groups on ds. Conflicts: one clause set per value pair, forbidding the union of
 * the offsets of its conflicts (one pair often has several lane-mask variants). Fixed: per value,
 * the union of the bases that touch a fixed register live in its range. */
static void dataflow(rs_z3 *z) {
  const rs_problem *p = z->p;
  Z3_context ctx = z->ctx;
  int d[66];
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
    unsigned n = 0;
    for (int k = 0; k < 65; k++)
      if ((k < 64 ? w0 >> k : w1) & 1) d[n++] = k - 32;
    if (n) {
      Z3_ast diff[2] = {z->x[po[i].b], z->x[po[i].a]};
      rule(z, G_CONFLICT, NULL, avoid_runs(z, T(z, Z3_mk_sub(ctx, 2, diff)), d, n));
      flush(z);
    }
    i = j;
  }
  free(po);
  /* (value << 32 | base) per forbidden base, sorted and unique */
  int64_t *fb = NULL;
  uint32_t nfb = 0, capfb = 0;
  for (uint32_t i = 0; i < p->nfixed; i++) {
    const rs_fixed *fx = &p->fixed[i];
    for (int64_t b = (int64_t)fx->p.unit - 32; b <= (int64_t)fx->p.unit + 32; b++)
      if (b >= 0 && rs_lanes_overlap((uint32_t)b, fx->lv, fx->p.unit, fx->p.lanes)) {
        rs_grow((void **)&fb, sizeof *fb, &capfb, (size_t)nfb + 1);
        fb[nfb++] = (int64_t)fx->v << 32 | b;
      }
  }
  if (nfb) qsort(fb, nfb, sizeof *fb, by_int64);
  for (uint32_t i = 0; i < nfb;) {
    uint32_t v = (uint32_t)(fb[i] >> 32), j = i;
    /* one value's bases, in chunks avoid_runs can hold (each chunk is a conjunction of runs) */
    int dd[64];
    unsigned n = 0;
    for (; j < nfb && (uint32_t)(fb[j] >> 32) == v; j++) {
      if (j > i && fb[j] == fb[j - 1]) continue;
      if (n == 64) {
        rule(z, G_FIXED, NULL, avoid_runs(z, z->x[v], dd, n));
        flush(z);
        n = 0;
      }
      dd[n++] = (int)(fb[j] & 0xffffffff);
    }
    if (n) rule(z, G_FIXED, NULL, avoid_runs(z, z->x[v], dd, n));
    flush(z);
    i = j;
  }
  free(fb);
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
  /* the SMT core directly (no tactic preprocessing on every incremental check). ds: the dense
   * difference-logic theory (arith.solver=3: it propagates the clause atoms from the candidate's
   * bounds; the sparse one (1) and utvpi (4) search for seconds on sat candidates, the general
   * solver (2, 6) spends 20 s internalizing). hs: the old simplex (mod terms and case splits on
   * 10^3 values: 20-40 ms where the default spends 40-80 ms). */
  z->ds = Z3_mk_simple_solver(ctx);
  Z3_solver_inc_ref(ctx, z->ds);
  z->hs = Z3_mk_simple_solver(ctx);
  Z3_solver_inc_ref(ctx, z->hs);
  Z3_params prm = Z3_mk_params(ctx);
  Z3_params_inc_ref(ctx, prm);
  if (timeout_ms) Z3_params_set_uint(ctx, prm, Z3_mk_string_symbol(ctx, "timeout"), timeout_ms);
  Z3_params_set_uint(ctx, prm, Z3_mk_string_symbol(ctx, "arith.solver"), 3);
  Z3_solver_set_params(ctx, z->ds, prm);
  Z3_params_set_uint(ctx, prm, Z3_mk_string_symbol(ctx, "arith.solver"), 2);
  Z3_solver_set_params(ctx, z->hs, prm);
  Z3_params_dec_ref(ctx, prm);

  static const char *const gname[G__N] = {"hw_class", "hw_range", "hw_align", "hw_reserved",
                                          "hw_budget", "df_conflict", "df_fixed"};
  Z3_sort bs = Z3_mk_bool_sort(ctx);
  for (int g = 0; g < G__N; g++) {
    z->g[g] = Z3_mk_const(ctx, Z3_mk_string_symbol(ctx, gname[g]), bs);
    Z3_inc_ref(ctx, z->g[g]);
  }
  z->x = rs_xcalloc(p->nvars + 1, sizeof *z->x);
  z->y = rs_xcalloc(p->nvars + 1, sizeof *z->y);
  z->hassume = rs_xcalloc(G__N + (size_t)p->nvars, sizeof *z->hassume);
  z->dassume = rs_xcalloc(G__N + (size_t)p->nvars, sizeof *z->dassume);
  for (uint32_t v = 0; v < p->nvars; v++) {
    char nm[32];
    snprintf(nm, sizeof nm, "x%u", v);
    z->x[v] = Z3_mk_const(ctx, Z3_mk_string_symbol(ctx, nm), z->int_sort);
    Z3_inc_ref(ctx, z->x[v]);
    snprintf(nm, sizeof nm, "y%u", v);
    z->y[v] = Z3_mk_const(ctx, Z3_mk_string_symbol(ctx, nm), z->int_sort);
    Z3_inc_ref(ctx, z->y[v]);
  }
  for (uint32_t v = 0; v < p->nvars; v++) hardware(z, v);
  dataflow(z);
  /* internalize every constraint now, so candidates see only the incremental cost; with the
   * dataflow groups assumed off the first check of ds needs no search */
  {
    Z3_ast off[2] = {not_(z, z->g[G_CONFLICT]), not_(z, z->g[G_FIXED])};
    Z3_solver_check_assumptions(ctx, z->ds, 2, off);
    Z3_solver_check(ctx, z->hs);
    flush(z);
  }
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
  for (uint32_t v = 0; v < z->p->nvars; v++) {
    if (z->x[v]) Z3_dec_ref(ctx, z->x[v]);
    if (z->y[v]) Z3_dec_ref(ctx, z->y[v]);
  }
  for (int g = 0; g < G__N; g++)
    if (z->g[g]) Z3_dec_ref(ctx, z->g[g]);
  Z3_solver_dec_ref(ctx, z->ds);
  Z3_solver_dec_ref(ctx, z->hs);
  Z3_dec_ref(ctx, Z3_sort_to_ast(ctx, z->int_sort));
  for (uint32_t i = 0; i < z->caplits; i++)
    if (z->lits[i].v != UINT32_MAX) Z3_dec_ref(ctx, z->lits[i].h), Z3_dec_ref(ctx, z->lits[i].d);
  Z3_del_context(ctx);
  free(z->lits);
  free(z->x);
  free(z->y);
  free(z->tmp);
  free(z->hassume);
  free(z->dassume);
  free(z);
}

/* Check the candidate's literals (assume[G__N..], per literals per value) on solver sv under the
 * groups in mask. When unsat: ci->groups = the groups in the core, vals (at most 2) the values
 * whose literals it holds. */
typedef struct {
  unsigned groups;
  uint32_t vals[2];
  unsigned nvals;
} core_info;

static Z3_lbool check_groups(rs_z3 *z, Z3_solver sv, Z3_ast *assume, unsigned mask, core_info *ci) {
  uint32_t nl = z->p->nvars;
  Z3_ast *as = assume + G__N - __builtin_popcount(mask);
  unsigned k = 0;
  for (int g = 0; g < G__N; g++)
    if (mask >> g & 1) as[k++] = z->g[g];
  Z3_lbool r = Z3_solver_check_assumptions(z->ctx, sv, k + nl, as);
  memset(ci, 0, sizeof *ci);
  if (r != Z3_L_FALSE) return r;
  Z3_ast_vector core = Z3_solver_get_unsat_core(z->ctx, sv);
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
                  t->format_preg(t, c->reg[ci->vals[0]], a, sizeof a), group_what[g]);
  else
    rs_result_add(res, group_kind[g], "z3: %s; unsat core: %s (%s), %s (%s)", group_what[g], p->vars[ci->vals[0]].name,
                  t->format_preg(t, c->reg[ci->vals[0]], a, sizeof a), p->vars[ci->vals[1]].name,
                  t->format_preg(t, c->reg[ci->vals[1]], b, sizeof b));
}

static uint64_t cand_hash(uint32_t v, rs_preg r) {
  uint64_t h = ((uint64_t)v << 32 | r.unit) * 0x9E3779B97F4A7C15ull;
  return (h ^ (h >> 29) ^ r.lanes * 0xC2B2AE3D27D4EB4Full) * 0x165667B19E3779F9ull;
}

/* The literals "v takes r" (made and asserted on first use). */
static const cand_lit *cand(rs_z3 *z, uint32_t v, rs_preg r) {
  if (2 * (z->nlits + 1) > z->caplits) { /* rehash at half load */
    uint32_t oc = z->caplits, nc = oc ? 2 * oc : 1024;
    cand_lit *old = z->lits;
    z->lits = rs_xcalloc(nc, sizeof *z->lits);
    for (uint32_t i = 0; i < nc; i++) z->lits[i].v = UINT32_MAX;
    z->caplits = nc;
    for (uint32_t i = 0; i < oc; i++) {
      if (old[i].v == UINT32_MAX) continue;
      uint32_t k = (uint32_t)(cand_hash(old[i].v, (rs_preg){old[i].unit, old[i].lanes}) >> 32) & (nc - 1);
      while (z->lits[k].v != UINT32_MAX) k = (k + 1) & (nc - 1);
      z->lits[k] = old[i];
    }
    free(old);
  }
  uint32_t k = (uint32_t)(cand_hash(v, r) >> 32) & (z->caplits - 1);
  for (; z->lits[k].v != UINT32_MAX; k = (k + 1) & (z->caplits - 1))
    if (z->lits[k].v == v && z->lits[k].unit == r.unit && z->lits[k].lanes == r.lanes) return &z->lits[k];
  Z3_context ctx = z->ctx;
  Z3_sort bs = Z3_mk_bool_sort(ctx);
  char nm[64];
  snprintf(nm, sizeof nm, "v%u@%u:%llx", v, r.unit, (unsigned long long)r.lanes);
  Z3_ast u = num(z, r.unit), l = unum(z, r.lanes);
  Z3_ast xb[2] = {T(z, Z3_mk_le(ctx, z->x[v], u)), T(z, Z3_mk_ge(ctx, z->x[v], u))};
  Z3_ast hb[4] = {xb[0], xb[1], T(z, Z3_mk_le(ctx, z->y[v], l)), T(z, Z3_mk_ge(ctx, z->y[v], l))};
  cand_lit *e = &z->lits[k];
  nm[0] = 'h';
  e->h = Z3_mk_const(ctx, Z3_mk_string_symbol(ctx, nm), bs);
  Z3_inc_ref(ctx, e->h);
  nm[0] = 'd';
  e->d = Z3_mk_const(ctx, Z3_mk_string_symbol(ctx, nm), bs);
  Z3_inc_ref(ctx, e->d);
  e->v = v, e->unit = r.unit, e->lanes = r.lanes;
  z->nlits++;
  Z3_solver_assert(ctx, z->hs, T(z, Z3_mk_implies(ctx, e->h, and_(z, 4, hb))));
  Z3_solver_assert(ctx, z->ds, T(z, Z3_mk_implies(ctx, e->d, and_(z, 2, xb))));
  return e;
}

void rs_z3_check(rs_z3 *z, const rs_candidate *c, rs_check_result *res) {
  double t0 = rs_now();
  const rs_problem *p = z->p;
  assert(c->n == p->nvars); /* parsing failures never reach a checker */
  for (uint32_t v = 0; v < p->nvars; v++) {
    assert(c->reg[v].lanes != 0);
    const cand_lit *l = cand(z, v, c->reg[v]);
    z->hassume[G__N + v] = l->h;
    z->dassume[G__N + v] = l->d;
  }
  const unsigned hw = (1u << G__HW) - 1, df = ((1u << G__N) - 1) & ~hw;
  core_info full, ci;
  /* hardware first: it decides the verdict whenever it is broken */
  Z3_lbool r = check_groups(z, z->hs, z->hassume, hw, &full);
  if (r == Z3_L_UNDEF) {
    timeout(res, Z3_solver_get_reason_unknown(z->ctx, z->hs));
  } else if (r == Z3_L_FALSE) {
    bool hard = false;
    for (int g = 0; g < G__HW; g++) {
      Z3_lbool rg = check_groups(z, z->hs, z->hassume, 1u << g, &ci);
      if (rg == Z3_L_UNDEF) {
        timeout(res, Z3_solver_get_reason_unknown(z->ctx, z->hs));
        break;
      }
      if (rg == Z3_L_FALSE) finding(z, c, g, &ci, res), hard = true;
    }
    /* unsat overall, yet nothing alone: impossible with every variable fixed */
    if (!hard && res->verdict == RS_V_PASS) timeout(res, "unsat without a failing group");
  } else {
    r = check_groups(z, z->ds, z->dassume, df, &full);
    if (r == Z3_L_UNDEF) {
      timeout(res, Z3_solver_get_reason_unknown(z->ctx, z->ds));
    } else if (r == Z3_L_FALSE) {
      unsigned d = full.groups & df;
      if (__builtin_popcount(d) == 1) {
        finding(z, c, __builtin_ctz(d), &full, res);
      } else {
        for (int g = G__HW; g < G__N; g++) {
          Z3_lbool rg = check_groups(z, z->ds, z->dassume, 1u << g, &ci);
          if (rg == Z3_L_UNDEF) {
            timeout(res, Z3_solver_get_reason_unknown(z->ctx, z->ds));
            break;
          }
          if (rg == Z3_L_FALSE) finding(z, c, g, &ci, res);
        }
      }
      if (res->verdict == RS_V_PASS) timeout(res, "unsat without a failing group");
    }
  }
  if (z->failed) timeout(res, "z3 API error");
  z->failed = false;
  flush(z);
  res->seconds += rs_now() - t0;
}
