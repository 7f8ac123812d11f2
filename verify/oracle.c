/* oracle.c - truths and mutants through both verifiers. Mutants are built so that their
 * expected category holds by construction (a moved value stays inside its class, etc.). */
#include "verify/oracle.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rs_mutation_str(rs_mutation m) {
  static const char *const s[] = {"conflict", "fixed", "align", "file", "budget", "reserved", "drop", "unknown", "badreg", "lane", "launch"};
  return m < RS_MUT__N ? s[m] : "?";
}

rs_verdict rs_mutation_expected(rs_mutation m) {
  switch (m) {
  case RS_MUT_CONFLICT: case RS_MUT_FIXED: case RS_MUT_LANE: return RS_V_DATAFLOW;
  case RS_MUT_DROP: case RS_MUT_UNKNOWN: case RS_MUT_BADREG: return RS_V_SYNTAX;
  default: return RS_V_HARDWARE;
  }
}

static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* A placement that is legal for the value's class and not reserved by the function. */
static bool legal(const rs_problem *p, uint32_t v, uint32_t unit) {
  rs_preg r = {unit, p->vars[v].full};
  if (rs_problem_member(p, p->vars[v].cls, r) != RS_MEMBER_OK) return false;
  for (uint32_t k = 0; k < p->nreserved; k++)
    if (rs_lanes_overlap(unit, r.lanes, p->reserved[k].unit, p->reserved[k].lanes)) return false;
  return true;
}

static char *to_json(const rs_problem *p, const rs_preg *reg, int drop, bool unknown, int badreg) {
  cJSON *o = cJSON_CreateObject();
  char buf[48];
  for (uint32_t v = 0; v < p->nvars; v++) {
    if ((int)v == drop) continue;
    if ((int)v == badreg) {
      /* text naming no register (a well-formed name past the file, "v999", is hardware) */
      cJSON_AddStringToObject(o, p->vars[v].name, p->tgt->not_a_reg);
      continue;
    }
    cJSON_AddStringToObject(o, p->vars[v].name, p->tgt->format_preg(p->tgt, reg[v], buf, sizeof buf));
  }
  if (unknown) cJSON_AddStringToObject(o, "%999999", p->tgt->any_reg);
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  char *r = rs_xstrndup(s, strlen(s));
  cJSON_free(s);
  return r;
}

/* Build mutant `m` from the truth; false if this instance offers no such mutant. */
static bool mutate(const rs_problem *p, const rs_preg *truth, rs_mutation m, uint64_t *rng, rs_preg *out, int *drop,
                   bool *unknown, int *badreg) {
  const rs_target *t = p->tgt;
  memcpy(out, truth, sizeof *out * p->nvars);
  *drop = *badreg = -1;
  *unknown = false;
  if (!p->nvars) return false;
  uint32_t start = (uint32_t)(next(rng) % p->nvars);
  switch (m) {
  case RS_MUT_CONFLICT:
    for (uint32_t k = 0; k < p->nconf && k < 4096; k++) {
      const rs_conflict *c = &p->conf[(start + k * 7919u) % p->nconf];
      int d = __builtin_ctzll(c->lb) / 2 - __builtin_ctzll(c->la) / 2;
      int64_t u = (int64_t)truth[c->b].unit + d;
      if (u >= 0 && legal(p, c->a, (uint32_t)u)) {
        out[c->a].unit = (uint32_t)u;
        return true;
      }
    }
    return false;
  case RS_MUT_FIXED:
    for (uint32_t k = 0; k < p->nfixed && k < 4096; k++) {
      const rs_fixed *x = &p->fixed[(start + k * 7919u) % p->nfixed];
      int d = __builtin_ctzll(x->p.lanes) / 2 - __builtin_ctzll(x->lv) / 2;
      int64_t u = (int64_t)x->p.unit + d;
      if (u >= 0 && legal(p, x->v, (uint32_t)u)) {
        out[x->v].unit = (uint32_t)u;
        return true;
      }
    }
    return false;
  case RS_MUT_ALIGN:
    for (uint32_t k = 0; k < p->nvars; k++) {
      uint32_t v = (start + k) % p->nvars;
      rs_preg r = {truth[v].unit + 1, p->vars[v].full};
      if (t->classes[p->vars[v].cls].align > 1 && rs_target_member(t, p->vars[v].cls, r) == RS_MEMBER_ALIGN) {
        out[v] = r;
        return true;
      }
    }
    return false;
  case RS_MUT_FILE:
    for (uint32_t k = 0; k < p->nvars; k++) {
      uint32_t v = (start + k) % p->nvars;
      for (uint32_t f = 0; f < t->nfiles; f++) {
        if (!t->files[f].asm_prefix || (p->vars[v].files >> f & 1)) continue;
        rs_preg r = {t->files[f].first, p->vars[v].full};
        if (rs_target_member(t, p->vars[v].cls, r) == RS_MEMBER_FILE) {
          out[v] = r;
          return true;
        }
      }
    }
    return false;
  case RS_MUT_BUDGET:
    for (uint32_t k = 0; k < p->nvars; k++) {
      uint32_t v = (start + k) % p->nvars;
      int f = rs_target_file_of(t, truth[v].unit);
      if (f < 0) continue;
      const rs_regfile *rf = &t->files[f];
      uint32_t a = t->classes[p->vars[v].cls].align ? t->classes[p->vars[v].cls].align : 1;
      uint32_t idx = (rf->budget + a - 1) / a * a; /* first aligned index past the budget */
      /* the register must still exist (be nameable), or the answer is a syntax error instead */
      if (idx + p->vars[v].width > rf->count) continue;
      rs_preg r = {rf->first + idx, p->vars[v].full};
      enum rs_member mb = rs_target_member(t, p->vars[v].cls, r);
      if (mb == RS_MEMBER_BUDGET || mb == RS_MEMBER_RANGE) {
        out[v] = r;
        return true;
      }
    }
    return false;
  case RS_MUT_LAUNCH: /* only where the launch bounds lower a file's budget */
    for (uint32_t k = 0; k < p->nvars; k++) {
      uint32_t v = (start + k) % p->nvars;
      int f = rs_target_file_of(t, truth[v].unit);
      if (f < 0 || f >= RS_MAX_FILES || p->budget[f] >= t->files[f].budget) continue;
      uint32_t a = t->classes[p->vars[v].cls].align ? t->classes[p->vars[v].cls].align : 1;
      uint32_t idx = (p->budget[f] + a - 1) / a * a; /* first aligned index past the function's budget */
      rs_preg r = {t->files[f].first + idx, p->vars[v].full};
      if (idx + p->vars[v].width <= t->files[f].budget && rs_problem_member(p, p->vars[v].cls, r) == RS_MEMBER_FNBUDGET) {
        out[v] = r;
        return true;
      }
    }
    return false;
  case RS_MUT_RESERVED:
    for (uint32_t k = 0; k < p->nvars; k++) {
      uint32_t v = (start + k) % p->nvars;
      int f = rs_target_file_of(t, truth[v].unit);
      if (f < 0) continue;
      /* a reserved unit of the value's own file (NVIDIA RZ), or one the function reserves */
      for (uint32_t u = t->files[f].first; u < t->files[f].first + t->files[f].count; u++) {
        rs_preg r = {u, p->vars[v].full};
        if ((t->unit_flags[u] & RS_UNIT_RESERVED) && rs_target_member(t, p->vars[v].cls, r) == RS_MEMBER_RESERVED) {
          out[v] = r;
          return true;
        }
      }
      for (uint32_t q = 0; q < p->nreserved; q++) {
        rs_preg r = {p->reserved[q].unit, p->vars[v].full};
        if (rs_target_member(t, p->vars[v].cls, r) == RS_MEMBER_OK) {
          out[v] = r;
          return true;
        }
      }
    }
    return false;
  case RS_MUT_LANE:
    /* A conflict that holds only for some lanes of a tuple (a sub-register live, or read by a
     * packed op's op_sel/op_sel_hi) while other lanes are free: put the other value exactly on
     * those lanes. Lane-aware liveness must still see the clash (mir/vop3p.c reads fewer lanes
     * only where the hardware does). */
    for (uint32_t k = 0; k < p->nconf && k < 4096; k++) {
      const rs_conflict *c = &p->conf[(start + k * 7919u) % p->nconf];
      if (c->lb == p->vars[c->b].full && c->la == p->vars[c->a].full) continue;
      bool a_on_b = c->lb != p->vars[c->b].full; /* move the value whose lanes are all involved */
      uint32_t mv = a_on_b ? c->a : c->b, st = a_on_b ? c->b : c->a;
      rs_lanes lm = a_on_b ? c->la : c->lb, ls = a_on_b ? c->lb : c->la;
      int d = __builtin_ctzll(ls) / 2 - __builtin_ctzll(lm) / 2;
      int64_t u = (int64_t)truth[st].unit + d;
      if (u >= 0 && legal(p, mv, (uint32_t)u)) {
        out[mv].unit = (uint32_t)u;
        return true;
      }
    }
    return false;
  case RS_MUT_DROP:
    *drop = (int)start;
    return true;
  case RS_MUT_UNKNOWN:
    *unknown = true;
    return true;
  case RS_MUT_BADREG:
    *badreg = (int)start;
    return true;
  default:
    return false;
  }
}

static uint32_t check_one(rs_verifier *vf, const rs_problem *p, const char *id, const char *json, rs_verdict want,
                          const char *what, rs_oracle_stats *st, void (*report)(void *, const char *), void *ctx) {
  rs_candidate c;
  rs_check_result nat, z3;
  bool agree = rs_verify_text(vf, NULL, json, strlen(json), &c, &nat, &z3);
  rs_candidate_free(&c);
  st->native_s += nat.seconds;
  st->z3_s += z3.seconds;
  uint32_t miss = 0;
  char line[1024];
  if (!agree) {
    st->disagreements++;
    snprintf(line, sizeof line, "DISAGREEMENT %s %s: native %s, z3 %s%s%s", id, what, rs_verdict_str(nat.verdict),
             rs_verdict_str(z3.verdict), nat.ndiag ? ": " : "", nat.ndiag ? nat.diag[0] : "");
    report(ctx, line);
    miss++;
  }
  if (nat.verdict != want) {
    snprintf(line, sizeof line, "MISS %s %s: expected %s, native says %s%s%s", id, what, rs_verdict_str(want),
             rs_verdict_str(nat.verdict), nat.ndiag ? ": " : "", nat.ndiag ? nat.diag[0] : "");
    report(ctx, line);
    miss++;
  }
  (void)p;
  return miss;
}

uint32_t rs_oracle_instance(const rs_problem *p, const char *id, const char *truth_json, uint32_t min_mutants,
                            uint64_t seed, unsigned timeout_ms, rs_oracle_stats *st,
                            void (*report)(void *, const char *), void *ctx) {
  rs_verifier vf;
  rs_err e;
  char line[1024];
  st->instances++;
  double t0 = rs_now();
  int orc = rs_verifier_open(&vf, RS_VERIFIER_BOTH, p, timeout_ms, &e);
  st->setup_s += rs_now() - t0;
  if (orc) {
    snprintf(line, sizeof line, "MISS %s: cannot build the Z3 context: %s", id, e.msg);
    report(ctx, line);
    return 1;
  }
  uint32_t misses = 0;
  st->truths++;
  uint32_t m0 = check_one(&vf, p, id, truth_json, RS_V_PASS, "ground truth", st, report, ctx);
  misses += m0;
  if (!m0) st->truths_accepted++;
  /* the truth as registers, to mutate */
  rs_candidate tc;
  rs_check_result tr;
  rs_result_init(&tr);
  if (rs_candidate_parse(p, NULL, truth_json, strlen(truth_json), &tc, &tr) == 0) {
    rs_preg *mut = rs_xcalloc(p->nvars + 1, sizeof *mut);
    uint64_t rng = seed ^ rs_hash_bytes(id, strlen(id), 0);
    uint32_t made = 0;
    for (uint32_t round = 0; made < min_mutants && round < 4; round++)
      for (int m = 0; m < RS_MUT__N; m++) {
        int drop, badreg;
        bool unknown;
        if (!mutate(p, tc.reg, (rs_mutation)m, &rng, mut, &drop, &unknown, &badreg)) continue;
        char *json = to_json(p, mut, drop, unknown, badreg);
        char what[64];
        snprintf(what, sizeof what, "mutant %s #%u", rs_mutation_str((rs_mutation)m), made);
        uint32_t miss = check_one(&vf, p, id, json, rs_mutation_expected((rs_mutation)m), what, st, report, ctx);
        free(json);
        st->mutants++;
        st->per_kind[m]++;
        made++;
        if (!miss) {
          st->mutants_rejected++;
          st->per_kind_ok[m]++;
        }
        misses += miss;
      }
    free(mut);
  } else {
    snprintf(line, sizeof line, "MISS %s: ground truth does not parse: %s", id, tr.ndiag ? tr.diag[0] : "");
    report(ctx, line);
    misses++;
  }
  rs_candidate_free(&tc);
  rs_verifier_close(&vf);
  return misses;
}
