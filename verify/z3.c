/* z3.c - the Z3 checker: VeriLocc's SMT formulation (arXiv 2506.17506) over the Problem.
 *
 * One context and solver per instance, built once. Per value v: an integer x_v (base unit in the
 * target's numbering) and an integer y_v (its lane mask). The constraints come in groups, each
 * guarded by one Boolean group literal g so that an unsat core names the rules a candidate breaks:
 *   hardware: class (lanes of the class; an allowed file or an allowed special register),
 *             range (inside the file), align, reserved (target and function), budget;
 *   dataflow: conflict (lane-aware interference), fixed (fixed physical registers).
 * The hardware groups mirror rs_target_member rule by rule and in its order (each rule is guarded
 * by the earlier ones holding), so a value breaks exactly the rule the native checker names.
 * A check passes the candidate as assumptions x_v == unit, y_v == lanes plus the group literals.
 *
 * Deciding the category: a core need not be minimal, and a core that names only dataflow does not
 * prove the hardware rules hold, while the native checker reports hardware over dataflow. So an
 * unsat answer is followed by checks of the hardware groups alone, on a second small solver that
 * holds only those groups (the candidate fixes every variable, so "a group alone is unsat" <=>
 * "the candidate breaks it"; the small solver answers in about a millisecond where the full one
 * spends 100+ ms per check on 10^5 conflicts). Any hardware group unsat: verdict hardware, with
 * every broken hardware kind counted. Else dataflow, with the dataflow groups of the full core
 * (exact when the core names one; otherwise each is re-checked alone). Counts are 1 per broken
 * kind: Z3 proves that a kind is broken, not how often; dataflow kinds are not counted when the
 * verdict is hardware. */
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

/* The candidate as bounds x <= u, x >= u, y <= l, y >= l: bounds go straight to the arithmetic
 * solver, where equalities would add equality atoms and adapter clauses on every check. */
enum { LITS = 4 };

struct rs_z3 {
  const rs_problem *p;
  Z3_context ctx;
  Z3_solver s;      /* every group */
  Z3_solver hs;     /* the hardware groups only */
  Z3_sort int_sort;
  Z3_ast *x, *y;   /* per value: base unit, lanes (referenced) */
  Z3_ast g[G__N];  /* group literals (referenced) */
  Z3_ast *tmp;     /* scratch references released by flush() */
  uint32_t ntmp, captmp;
  bool failed;     /* a Z3 call returned no term (error) */
  Z3_ast *assume;  /* per check: groups + LITS bound literals per value */
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

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
  Z3_solver_assert(z->ctx, z->s, a);
  if (g < G__HW) Z3_solver_assert(z->ctx, z->hs, a);
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

/* Offsets d = base(b) - base(a) at which lanes la of a and lb of b overlap, sorted. */
static unsigned overlap_offsets(rs_lanes la, rs_lanes lb, int *d) {
  unsigned n = 0;
  for (int k = -32; k <= 32; k++)
    if (rs_lanes_overlap(64, la, (uint32_t)(64 + k), lb)) d[n++] = k;
  return n;
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
  /* the SMT core directly: no tactic preprocessing on every incremental check */
  z->s = Z3_mk_simple_solver(ctx);
  Z3_solver_inc_ref(ctx, z->s);
  z->hs = Z3_mk_simple_solver(ctx);
  Z3_solver_inc_ref(ctx, z->hs);
  Z3_params prm = Z3_mk_params(ctx);
  Z3_params_inc_ref(ctx, prm);
  if (timeout_ms) Z3_params_set_uint(ctx, prm, Z3_mk_string_symbol(ctx, "timeout"), timeout_ms);
  Z3_solver_set_params(ctx, z->s, prm);
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
  z->assume = rs_xcalloc(G__N + LITS * (size_t)p->nvars, sizeof *z->assume);
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

  /* dataflow: for each conflict, x_b - x_a must avoid the offsets where the lanes overlap */
  int d[65];
  for (uint32_t i = 0; i < p->nconf; i++) {
    const rs_conflict *cf = &p->conf[i];
    unsigned n = overlap_offsets(cf->la, cf->lb, d);
    if (!n) continue;
    Z3_ast diff[2] = {z->x[cf->b], z->x[cf->a]};
    rule(z, G_CONFLICT, NULL, avoid_runs(z, T(z, Z3_mk_sub(ctx, 2, diff)), d, n));
    flush(z);
  }
  for (uint32_t i = 0; i < p->nfixed; i++) {
    const rs_fixed *fx = &p->fixed[i];
    unsigned n = 0;
    for (int64_t b = (int64_t)fx->p.unit - 32; b <= (int64_t)fx->p.unit + 32; b++)
      if (b >= 0 && rs_lanes_overlap((uint32_t)b, fx->lv, fx->p.unit, fx->p.lanes)) d[n++] = (int)b;
    if (n) rule(z, G_FIXED, NULL, avoid_runs(z, z->x[fx->v], d, n));
    flush(z);
  }
  /* the first check internalizes every constraint (seconds on the largest instances): pay it here
   * so candidates see only the incremental cost */
  Z3_solver_check(ctx, z->s);
  Z3_solver_check(ctx, z->hs);
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
  Z3_solver_dec_ref(ctx, z->s);
  Z3_solver_dec_ref(ctx, z->hs);
  Z3_dec_ref(ctx, Z3_sort_to_ast(ctx, z->int_sort));
  Z3_del_context(ctx);
  free(z->x);
  free(z->y);
  free(z->tmp);
  free(z->assume);
  free(z);
}

/* Check the candidate's literals (assume[G__N..]) on solver sv under the groups in mask. When
 * unsat: *core = the groups in the core, vals (at most 2) the values whose literals it holds. */
typedef struct {
  unsigned groups;
  uint32_t vals[2];
  unsigned nvals;
} core_info;

static Z3_lbool check_groups(rs_z3 *z, Z3_solver sv, unsigned mask, core_info *ci) {
  uint32_t nl = LITS * z->p->nvars;
  Z3_ast *as = z->assume + G__N - __builtin_popcount(mask);
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
      if (Z3_is_eq_ast(z->ctx, a, z->assume[G__N + j])) {
        uint32_t v = j / LITS;
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

void rs_z3_check(rs_z3 *z, const rs_candidate *c, rs_check_result *res) {
  double t0 = now();
  const rs_problem *p = z->p;
  assert(c->n == p->nvars); /* parsing failures never reach a checker */
  Z3_ast *lit = z->assume + G__N;
  for (uint32_t v = 0; v < p->nvars; v++) {
    assert(c->reg[v].lanes != 0);
    Z3_ast u = num(z, c->reg[v].unit), l = unum(z, c->reg[v].lanes);
    lit[LITS * v] = T(z, Z3_mk_le(z->ctx, z->x[v], u));
    lit[LITS * v + 1] = T(z, Z3_mk_ge(z->ctx, z->x[v], u));
    lit[LITS * v + 2] = T(z, Z3_mk_le(z->ctx, z->y[v], l));
    lit[LITS * v + 3] = T(z, Z3_mk_ge(z->ctx, z->y[v], l));
  }
  const unsigned hw = (1u << G__HW) - 1, df = ((1u << G__N) - 1) & ~hw;
  core_info full, ci;
  Z3_lbool r = check_groups(z, z->s, hw | df, &full);
  if (r == Z3_L_UNDEF) {
    timeout(res, Z3_solver_get_reason_unknown(z->ctx, z->s));
  } else if (r == Z3_L_FALSE) {
    bool hard = false, undef = false;
    for (int g = 0; g < G__HW && !undef; g++) {
      Z3_lbool rg = check_groups(z, z->hs, 1u << g, &ci);
      undef = rg == Z3_L_UNDEF;
      if (rg == Z3_L_FALSE) finding(z, c, g, &ci, res), hard = true;
    }
    if (undef) {
      timeout(res, Z3_solver_get_reason_unknown(z->ctx, z->hs));
    } else if (!hard) {
      /* the hardware groups hold, so the core's dataflow groups carry the contradiction */
      unsigned d = full.groups & df;
      if (__builtin_popcount(d) == 1) {
        finding(z, c, __builtin_ctz(d), &full, res);
      } else {
        for (int g = G__HW; g < G__N; g++) {
          Z3_lbool rg = check_groups(z, z->s, 1u << g, &ci);
          if (rg == Z3_L_UNDEF) {
            timeout(res, Z3_solver_get_reason_unknown(z->ctx, z->s));
            break;
          }
          if (rg == Z3_L_FALSE) finding(z, c, g, &ci, res);
        }
      }
      /* unsat overall, yet nothing alone: impossible with every variable fixed */
      if (res->verdict == RS_V_PASS) timeout(res, "unsat without a failing group");
    }
  }
  if (z->failed) timeout(res, "z3 API error");
  z->failed = false;
  flush(z);
  res->seconds += now() - t0;
}
