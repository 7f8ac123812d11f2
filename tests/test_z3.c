/* test_z3.c - the Z3 checker agrees with the native semantics.
 *
 * 1. Hand-written Problems (MIR text, gfx90a): sub-register lanes (a value may share a dead lane
 *    of a tuple, not a live one), a fixed physical register, alignment, class and budget rules.
 * 2. Every AMD fixture: LLVM's own allocation (recovered by rs_align) must pass; then mutants
 *    (a value moved onto a register it conflicts with, a tuple misaligned by one, a VGPR value in
 *    an SGPR, past the budget or the file, onto a reserved register, wrong lanes, VCC, random
 *    moves and swaps) must get the verdict and the set of violation kinds that the native
 *    semantics give (rs_target_member + function-reserved registers + rs_problem_violations,
 *    recomputed here) and that rs_check_native gives.
 * Prints the context build time and per-check latencies (median / p95 / max). */
#include "front/front.h"
#include "check.h"
#include "mir/align.h"
#include "analysis/problem.h"
#include "verify/verify.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <z3.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct {
  double *v;
  uint32_t n, cap;
} samples;
static void add_sample(samples *s, double x) { RS_PUSH(s->v, s->n, s->cap, x); }
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static void report(const char *what, samples *s) {
  if (!s->n) return;
  qsort(s->v, s->n, sizeof *s->v, cmpd);
  printf("  %-22s n=%-4u median %8.2f ms  p95 %8.2f ms  max %8.2f ms\n", what, s->n, 1e3 * s->v[s->n / 2],
         1e3 * s->v[(s->n * 95) / 100 < s->n ? (s->n * 95) / 100 : s->n - 1], 1e3 * s->v[s->n - 1]);
}

static rs_vkind member_kind(enum rs_member m) {
  switch (m) {
  case RS_MEMBER_ALIGN: return RS_VK_ALIGN;
  case RS_MEMBER_RESERVED: return RS_VK_RESERVED;
  case RS_MEMBER_RANGE: case RS_MEMBER_BUDGET: case RS_MEMBER_FNBUDGET: return RS_VK_BUDGET;
  default: return RS_VK_CLASS;
  }
}

/* The native semantics, as a set of violated kinds (bit k = rs_vkind k). */
static unsigned native_kinds(const rs_problem *p, const rs_candidate *c) {
  unsigned kinds = 0;
  bool past = false;
  for (uint32_t v = 0; v < p->nvars; v++) {
    if (c->reg[v].unit == RS_UNIT_BEYOND) { /* a name past its file's end: width, file, then range */
      const rs_regclass *cl = &p->tgt->classes[p->vars[v].cls];
      rs_lanes want = cl->half ? cl->half : rs_lanes_full(cl->width);
      bool cls_ok = c->reg[v].lanes == want && (cl->files >> c->beyond[v].file & 1);
      kinds |= 1u << (cls_ok ? RS_VK_BUDGET : RS_VK_CLASS);
      past = true;
      continue;
    }
    enum rs_member m = rs_problem_member(p, p->vars[v].cls, c->reg[v]); /* with the launch bounds */
    if (m != RS_MEMBER_OK) {
      kinds |= 1u << member_kind(m);
      continue;
    }
    for (uint32_t k = 0; k < p->nreserved; k++)
      if (rs_lanes_overlap(c->reg[v].unit, p->vars[v].full, p->reserved[k].unit, p->reserved[k].lanes))
        kinds |= 1u << RS_VK_RESERVED;
  }
  if (past) return kinds; /* hardware: dataflow is not consulted, and such a value has no unit */
  for (uint32_t i = 0; i < p->nconf; i++)
    if (rs_lanes_overlap(c->reg[p->conf[i].a].unit, p->conf[i].la, c->reg[p->conf[i].b].unit, p->conf[i].lb))
      kinds |= 1u << RS_VK_CONFLICT;
  for (uint32_t i = 0; i < p->nfixed; i++)
    if (rs_lanes_overlap(c->reg[p->fixed[i].v].unit, p->fixed[i].lv, p->fixed[i].p.unit, p->fixed[i].p.lanes))
      kinds |= 1u << RS_VK_FIXED;
  /* cross-check the helper above with rs_problem_violations */
  uint32_t *base = malloc(sizeof *base * (p->nvars + 1));
  for (uint32_t v = 0; v < p->nvars; v++) base[v] = c->reg[v].unit;
  CHECK((rs_problem_violations(p, base) > 0) == !!(kinds & (1u << RS_VK_CONFLICT | 1u << RS_VK_FIXED)));
  free(base);
  return kinds;
}

static rs_verdict kinds_verdict(unsigned kinds) {
  if (kinds & (1u << RS_VK_CLASS | 1u << RS_VK_ALIGN | 1u << RS_VK_RESERVED | 1u << RS_VK_BUDGET))
    return RS_V_HARDWARE;
  return kinds ? RS_V_DATAFLOW : RS_V_PASS;
}

static unsigned result_kinds(const rs_check_result *r) {
  unsigned k = 0;
  for (int i = 0; i < RS_VK__N; i++)
    if (r->counts[i]) k |= 1u << i;
  return k;
}

static unsigned disagreements;

/* Z3 vs the native semantics (and vs rs_check_native) on one candidate; returns Z3's verdict. */
static rs_verdict compare(const rs_problem *p, rs_z3 *z, const rs_candidate *c, const char *what, samples *lat) {
  rs_check_result zr, nr;
  rs_result_init(&zr);
  rs_result_init(&nr);
  double t0 = now();
  rs_z3_check(z, c, &zr);
  if (lat) add_sample(lat, now() - t0);
  rs_check_native(p, c, &nr);
  unsigned want = native_kinds(p, c), got = result_kinds(&zr);
  /* Z3 counts every broken hardware kind; dataflow kinds only when the verdict is dataflow, and
   * at least the ones its unsat core proves (verify/z3.c) */
  unsigned hwk = 1u << RS_VK_CLASS | 1u << RS_VK_ALIGN | 1u << RS_VK_RESERVED | 1u << RS_VK_BUDGET;
  unsigned dfk = 1u << RS_VK_CONFLICT | 1u << RS_VK_FIXED;
  bool kinds_ok = (got & hwk) == (want & hwk) && (got & dfk & ~want) == 0 &&
                  (zr.verdict == RS_V_DATAFLOW ? (got & dfk) != 0 : (got & dfk) == 0);
  bool ok = zr.verdict == kinds_verdict(want) && kinds_ok && nr.verdict == zr.verdict && result_kinds(&nr) == want;
  if (!ok && disagreements++ < 10) {
    fprintf(stderr, "%s: %s: z3 %s kinds %#x, expected %s kinds %#x, native %s kinds %#x\n", p->path ? p->path : "?",
            what, rs_verdict_str(zr.verdict), got, rs_verdict_str(kinds_verdict(want)), want,
            rs_verdict_str(nr.verdict), result_kinds(&nr));
    for (uint32_t i = 0; i < zr.ndiag; i++) fprintf(stderr, "    z3: %s\n", zr.diag[i]);
    for (uint32_t i = 0; i < nr.ndiag; i++) fprintf(stderr, "    native: %s\n", nr.diag[i]);
  }
  CHECKF(ok, "%s", what);
  if (zr.verdict != RS_V_PASS) CHECK(zr.ndiag > 0 && !strncmp(zr.diag[0], "z3: ", 4));
  return zr.verdict;
}

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

typedef struct {
  samples build, truth, mutant;
  unsigned mutants, rejected;
  unsigned by_verdict[RS_V__N];
  unsigned past, past_hw; /* mutants naming a register past its file's end; judged hardware */
} stats;

static int file_named(const rs_target *t, const char *name) {
  for (uint32_t f = 0; f < t->nfiles; f++)
    if (!strcmp(t->files[f].name, name)) return (int)f;
  return -1;
}

/* A value whose register lies in file f and satisfies pred (or -1); tries random picks, then scans. */
static int pick(const rs_problem *p, const rs_candidate *c, uint64_t *rng, int f, unsigned min_align, unsigned min_w) {
  for (int tries = 0; tries < 2 * (int)p->nvars + 64; tries++) {
    uint32_t v = tries < 64 ? (uint32_t)(rng_next(rng) % p->nvars) : (uint32_t)(tries - 64) % p->nvars;
    const rs_regclass *cl = &p->tgt->classes[p->vars[v].cls];
    if ((f < 0 || rs_target_file_of(p->tgt, c->reg[v].unit) == f) && cl->align >= min_align && cl->width >= min_w)
      return (int)v;
  }
  return -1;
}

static void mutants(const rs_problem *p, rs_z3 *z, rs_candidate *c, stats *st, uint64_t seed) {
  const rs_target *t = p->tgt;
  int fs = file_named(t, "sgpr"), fv = file_named(t, "vgpr");
  uint64_t rng = seed | 1;
  for (int m = 0; m < 16; m++) {
    int kind = m % 11;
    rs_preg save[2];
    int vs[2] = {-1, -1};
    char what[96];
    switch (kind) {
    case 0: case 9: { /* move a onto the register of a conflicting b (same relative lanes) */
      if (!p->nconf) continue;
      const rs_conflict *cf = &p->conf[rng_next(&rng) % p->nconf];
      int d = __builtin_ctzll(cf->lb) / 2 - __builtin_ctzll(cf->la) / 2;
      if ((int)c->reg[cf->b].unit + d < 0) continue;
      vs[0] = (int)cf->a;
      save[0] = c->reg[cf->a];
      c->reg[cf->a].unit = (uint32_t)((int)c->reg[cf->b].unit + d);
      snprintf(what, sizeof what, "conflict move %s", p->vars[cf->a].name);
      break;
    }
    case 1: { /* misalign a tuple by one */
      int v = pick(p, c, &rng, -1, 2, 2);
      if (v < 0) continue;
      vs[0] = v, save[0] = c->reg[v];
      c->reg[v].unit++;
      snprintf(what, sizeof what, "misalign %s", p->vars[v].name);
      break;
    }
    case 2: { /* a VGPR value into an SGPR */
      int v = pick(p, c, &rng, fv, 0, 0);
      if (v < 0 || fs < 0) continue;
      vs[0] = v, save[0] = c->reg[v];
      c->reg[v].unit = t->files[fs].first + 4 * (uint32_t)(rng_next(&rng) % 16);
      snprintf(what, sizeof what, "vgpr->sgpr %s", p->vars[v].name);
      break;
    }
    case 3: { /* past the budget (SGPR: s102..; VGPR: past v255) */
      int v = pick(p, c, &rng, m & 1 ? fv : fs, 0, 0);
      if (v < 0) continue;
      int f = rs_target_file_of(t, c->reg[v].unit);
      const rs_regclass *cl = &t->classes[p->vars[v].cls];
      vs[0] = v, save[0] = c->reg[v];
      uint32_t idx = t->files[f].budget < t->files[f].count ? t->files[f].budget : t->files[f].count - 1;
      idx -= idx % (cl->align ? cl->align : 1);
      c->reg[v].unit = t->files[f].first + idx;
      snprintf(what, sizeof what, "budget %s", p->vars[v].name);
      break;
    }
    case 4: { /* onto a register reserved by the function (else exec, reserved by the target) */
      int v = pick(p, c, &rng, fs, 0, 0);
      if (v < 0) continue;
      const rs_regclass *cl = &t->classes[p->vars[v].cls];
      vs[0] = v, save[0] = c->reg[v];
      if (p->nreserved) {
        uint32_t u = p->reserved[rng_next(&rng) % p->nreserved].unit;
        u -= (u - t->files[fs].first) % (cl->align ? cl->align : 1);
        c->reg[v].unit = u;
      } else {
        rs_preg ex;
        CHECK(t->parse_preg(t, "exec", 4, &ex) == 0);
        c->reg[v].unit = ex.unit;
      }
      snprintf(what, sizeof what, "reserved %s", p->vars[v].name);
      break;
    }
    case 5: { /* wrong lanes: a 16-bit half, or one unit more */
      int v = (int)(rng_next(&rng) % p->nvars);
      vs[0] = v, save[0] = c->reg[v];
      c->reg[v].lanes = c->reg[v].lanes == 1 ? 3 : c->reg[v].lanes << 2 | 3;
      snprintf(what, sizeof what, "lanes %s", p->vars[v].name);
      break;
    }
    case 6: { /* a 64-bit SGPR value onto VCC (a member of sreg_64: legal if VCC is free) */
      int v = pick(p, c, &rng, fs, 2, 2);
      rs_preg vcc;
      if (v < 0 || t->parse_preg(t, "vcc", 3, &vcc)) continue;
      vs[0] = v, save[0] = c->reg[v];
      c->reg[v].unit = vcc.unit;
      snprintf(what, sizeof what, "vcc %s (%s)", p->vars[v].name, t->classes[p->vars[v].cls].name);
      break;
    }
    case 7: { /* anywhere in the value's file */
      int v = (int)(rng_next(&rng) % p->nvars);
      int f = rs_target_file_of(t, c->reg[v].unit);
      if (f < 0) continue;
      vs[0] = v, save[0] = c->reg[v];
      c->reg[v].unit = t->files[f].first + (uint32_t)(rng_next(&rng) % t->files[f].count);
      snprintf(what, sizeof what, "random %s", p->vars[v].name);
      break;
    }
    case 10: { /* named past the end of a file ("v300"): its own file (budget) or another (class) */
      int v = (int)(rng_next(&rng) % p->nvars);
      int f = rs_target_file_of(t, c->reg[v].unit);
      if (f < 0 || !t->files[f].asm_prefix) continue;
      if (m & 1) { /* another file with a prefix */
        int g = m & 2 ? fv : fs;
        if (g < 0 || g == f) g = file_named(t, "agpr");
        if (g < 0 || g == f) continue;
        f = g;
      }
      vs[0] = v, save[0] = c->reg[v];
      c->beyond[v] = (rs_beyond){(uint32_t)f, t->files[f].count + (uint32_t)(rng_next(&rng) % 64)};
      c->reg[v].unit = RS_UNIT_BEYOND;
      snprintf(what, sizeof what, "past the end of %s: %s", t->files[f].name, p->vars[v].name);
      break;
    }
    default: { /* swap two values of the same class */
      int a = (int)(rng_next(&rng) % p->nvars), b = -1;
      for (uint32_t i = 0; i < p->nvars && b < 0; i++) {
        uint32_t w = (uint32_t)(a + 1 + i) % p->nvars;
        if ((int)w != a && p->vars[w].cls == p->vars[a].cls) b = (int)w;
      }
      if (b < 0) continue;
      vs[0] = a, vs[1] = b, save[0] = c->reg[a], save[1] = c->reg[b];
      c->reg[a] = save[1];
      c->reg[b] = save[0];
      snprintf(what, sizeof what, "swap %s %s", p->vars[a].name, p->vars[b].name);
      break;
    }
    }
    rs_verdict v = compare(p, z, c, what, &st->mutant);
    st->mutants++;
    st->rejected += v != RS_V_PASS;
    st->by_verdict[v]++;
    if (kind == 10) st->past++, st->past_hw += v == RS_V_HARDWARE;
    for (int i = 1; i >= 0; i--)
      if (vs[i] >= 0) c->reg[vs[i]] = save[i];
  }
}

static void fixture(const char *final_path, stats *st, unsigned idx) {
  char ps[1024];
  snprintf(ps, sizeof ps, "%.*s.postsplit.mir", (int)(strlen(final_path) - strlen(".final.mir")), final_path);
  rs_err e = {{0}};
  rs_module *pm = rs_module_load(ps, NULL, &e), *fm = pm ? rs_module_load(final_path, NULL, &e) : NULL;
  CHECKF(pm && fm, "%s", e.msg);
  rs_alignment a;
  int rc = pm && fm ? rs_align(pm->funcs[0], fm->funcs[0], &a, &e) : -1;
  CHECKF(rc == 0, "%s: %s", ps, e.msg);
  rs_problem *p = rc == 0 ? rs_problem_build(pm->funcs[0], &e) : NULL;
  CHECKF(rc != 0 || p, "%s", e.msg);
  if (p) {
    rs_candidate c = {rs_xcalloc(p->nvars + 1, sizeof *c.reg), p->nvars, false, rs_xcalloc(p->nvars + 1, sizeof(rs_beyond))};
    bool complete = true;
    for (uint32_t v = 0; v < p->nvars; v++) {
      c.reg[v] = a.assign[p->vars[v].fvreg];
      complete &= c.reg[v].lanes != 0;
    }
    CHECKF(complete, "%s: LLVM's allocation misses values", ps);
    double t0 = now();
    rs_z3 *z = complete ? rs_z3_new(p, 60000, &e) : NULL;
    double tb = now() - t0;
    CHECKF(!complete || z, "%s", e.msg);
    if (z) {
      add_sample(&st->build, tb);
      double t1 = now();
      rs_verdict v = compare(p, z, &c, "LLVM's allocation", &st->truth);
      CHECKF(v == RS_V_PASS, "%s: LLVM's allocation is %s under Z3", ps, rs_verdict_str(v));
      compare(p, z, &c, "LLVM's allocation again", &st->truth); /* incremental: still sat */
      double tt = now() - t1;
      unsigned before = st->mutants;
      mutants(p, z, &c, st, 0x9E3779B97F4A7C15ull * (idx + 1));
      CHECKF(st->mutants - before >= 10, "%s: only %u mutants", ps, st->mutants - before);
      v = compare(p, z, &c, "LLVM's allocation after mutants", &st->truth); /* no state leaks */
      CHECK(v == RS_V_PASS);
      printf("  %-34s values %5u conflicts %7u fixed %5u  build %7.1f ms  truth %6.1f ms\n",
             strrchr(ps, '/') ? strrchr(ps, '/') + 1 : ps, p->nvars, p->nconf, p->nfixed, 1e3 * tb, 1e3 * tt / 2);
      rs_z3_free(z);
    }
    rs_candidate_free(&c);
  }
  rs_problem_free(p);
  if (rc == 0) rs_alignment_free(&a);
  rs_module_free(pm);
  rs_module_free(fm);
}

/* --- hand-written Problems ------------------------------------------------------------------- */

static const char *subreg_mir =
    "---\n"
    "name: lanes\n"
    "tracksRegLiveness: true\n"
    "registers:\n"
    "  - { id: 0, class: vreg_64_align2, preferred-register: '' }\n"
    "  - { id: 1, class: vgpr_32, preferred-register: '' }\n"
    "  - { id: 2, class: vgpr_32, preferred-register: '' }\n"
    "  - { id: 3, class: vgpr_32, preferred-register: '' }\n"
    "body: |\n"
    "  bb.0:\n"
    "    undef %0.sub0:vreg_64_align2 = V_MOV_B32_e32 1, implicit $exec\n"
    "    %1:vgpr_32 = V_MOV_B32_e32 2, implicit $exec\n"
    "    %2:vgpr_32 = V_ADD_U32_e32 killed %1, %0.sub0, implicit $exec\n"
    "    %0.sub1:vreg_64_align2 = V_MOV_B32_e32 3, implicit $exec\n"
    "    %3:vgpr_32 = V_ADD_U32_e32 %0.sub1, %0.sub0, implicit $exec\n"
    "    S_ENDPGM 0, implicit %2, implicit %3\n"
    "...\n";

/* $vgpr0 is live until the add: %0 may not take v0; %1 (defined by the add) may. The SGPR pair
 * %2 is even-aligned sreg_64 (VCC allowed); %3 an SGPR that must stay under the budget. */
static const char *fixed_mir =
    "---\n"
    "name: fixed\n"
    "tracksRegLiveness: true\n"
    "registers:\n"
    "  - { id: 0, class: vgpr_32, preferred-register: '' }\n"
    "  - { id: 1, class: vgpr_32, preferred-register: '' }\n"
    "  - { id: 2, class: sreg_64, preferred-register: '' }\n"
    "  - { id: 3, class: sgpr_32, preferred-register: '' }\n"
    "body: |\n"
    "  bb.0:\n"
    "    liveins: $vgpr0\n"
    "    %0:vgpr_32 = V_MOV_B32_e32 1, implicit $exec\n"
    "    %1:vgpr_32 = V_ADD_U32_e32 %0, $vgpr0, implicit $exec\n"
    "    %2:sreg_64 = S_MOV_B64 0\n"
    "    %3:sgpr_32 = S_MOV_B32 0\n"
    "    S_ENDPGM 0, implicit %1, implicit %2, implicit %3\n"
    "...\n";

static rs_problem *parse_problem(const char *name, const char *text, rs_module **m) {
  rs_err e = {{0}};
  *m = rs_module_parse(name, strdup(text), strlen(text), RS_SRC_MIR, "gfx90a", &e);
  CHECKF(*m != NULL, "%s", e.msg);
  if (!*m) return NULL;
  rs_problem *p = rs_problem_build((*m)->funcs[0], &e);
  CHECKF(p != NULL, "%s", e.msg);
  return p;
}

static rs_preg reg(const rs_problem *p, const char *s) {
  rs_preg r = {0, 0};
  CHECKF(p->tgt->parse_preg(p->tgt, s, strlen(s), &r) == 0, "register %s", s);
  return r;
}

/* Set value `name` to register `s`, check, and expect verdict want (and native agreement). */
static void expect(const rs_problem *p, rs_z3 *z, rs_candidate *c, const char *name, const char *s,
                   rs_verdict want, rs_vkind kind) {
  int v = rs_problem_find(p, name, strlen(name));
  CHECK(v >= 0);
  if (v < 0) return;
  c->reg[v] = reg(p, s);
  char what[64];
  snprintf(what, sizeof what, "%s -> %s", name, s);
  rs_check_result r;
  rs_result_init(&r);
  rs_z3_check(z, c, &r);
  CHECKF(r.verdict == want, "%s: %s, want %s (%s)", what, rs_verdict_str(r.verdict), rs_verdict_str(want),
         r.ndiag ? r.diag[0] : "");
  if (want != RS_V_PASS && kind != RS_VK__N) CHECKF(r.counts[kind] > 0, "%s: no %s finding", what, rs_vkind_str(kind));
  compare(p, z, c, what, NULL);
}

/* A complete starting candidate (the checkers are only called on complete ones). */
static void place(const rs_problem *p, rs_candidate *c, const char *const (*regs)[2], unsigned n) {
  CHECK(n == p->nvars);
  for (unsigned i = 0; i < n; i++) {
    int v = rs_problem_find(p, regs[i][0], strlen(regs[i][0]));
    CHECK(v >= 0);
    if (v >= 0) c->reg[v] = reg(p, regs[i][1]);
  }
}

static void hand_cases(void) {
  rs_module *m;
  rs_err e = {{0}};
  rs_problem *p = parse_problem("subreg.mir", subreg_mir, &m);
  if (p) {
    rs_z3 *z = rs_z3_new(p, 10000, &e);
    CHECKF(z != NULL, "%s", e.msg);
    rs_candidate c = {rs_xcalloc(p->nvars, sizeof *c.reg), p->nvars, false, NULL};
    const char *start[][2] = {{"%0", "v[0:1]"}, {"%1", "v1"}, {"%2", "v2"}, {"%3", "v3"}};
    place(p, &c, start, 4);
    expect(p, z, &c, "%1", "v1", RS_V_PASS, 0);          /* the dead lane sub1 of %0 */
    expect(p, z, &c, "%1", "v0", RS_V_DATAFLOW, RS_VK_CONFLICT); /* sub0 is live */
    expect(p, z, &c, "%1", "v4", RS_V_PASS, 0);
    expect(p, z, &c, "%2", "v1", RS_V_DATAFLOW, RS_VK_CONFLICT); /* lives across the def of sub1 */
    expect(p, z, &c, "%2", "v2", RS_V_PASS, 0);
    expect(p, z, &c, "%3", "v0", RS_V_PASS, 0);          /* defined by the last reader of %0 */
    expect(p, z, &c, "%0", "v[1:2]", RS_V_HARDWARE, RS_VK_ALIGN);
    expect(p, z, &c, "%0", "s[0:1]", RS_V_HARDWARE, RS_VK_CLASS);
    expect(p, z, &c, "%0", "v[2:3]", RS_V_DATAFLOW, RS_VK_CONFLICT); /* on %2 */
    expect(p, z, &c, "%0", "v[6:7]", RS_V_PASS, 0);
    expect(p, z, &c, "%1", "v6", RS_V_DATAFLOW, RS_VK_CONFLICT);
    expect(p, z, &c, "%1", "v7", RS_V_PASS, 0);          /* sub1 of v[6:7] is still dead */
    expect(p, z, &c, "%3", "vgpr1_lo16", RS_V_HARDWARE, RS_VK_CLASS);
    rs_z3_free(z);
    free(c.reg);
  }
  rs_problem_free(p);
  rs_module_free(m);

  p = parse_problem("fixed.mir", fixed_mir, &m);
  if (p) {
    rs_z3 *z = rs_z3_new(p, 10000, &e);
    CHECKF(z != NULL, "%s", e.msg);
    rs_candidate c = {rs_xcalloc(p->nvars, sizeof *c.reg), p->nvars, false, NULL};
    const char *start[][2] = {{"%0", "v1"}, {"%1", "v0"}, {"%2", "s[4:5]"}, {"%3", "s7"}};
    place(p, &c, start, 4);
    expect(p, z, &c, "%3", "s7", RS_V_PASS, 0);
    expect(p, z, &c, "%0", "v0", RS_V_DATAFLOW, RS_VK_FIXED);
    expect(p, z, &c, "%0", "v1", RS_V_PASS, 0);
    expect(p, z, &c, "%2", "vcc", RS_V_PASS, 0);
    expect(p, z, &c, "%2", "exec", RS_V_HARDWARE, RS_VK_CLASS);
    expect(p, z, &c, "%2", "s[5:6]", RS_V_HARDWARE, RS_VK_ALIGN);
    expect(p, z, &c, "%2", "s[102:103]", RS_V_HARDWARE, RS_VK_BUDGET);
    expect(p, z, &c, "%2", "s[4:5]", RS_V_PASS, 0);
    expect(p, z, &c, "%3", "s101", RS_V_PASS, 0);
    expect(p, z, &c, "%3", "s102", RS_V_HARDWARE, RS_VK_BUDGET);
    expect(p, z, &c, "%3", "vcc_lo", RS_V_HARDWARE, RS_VK_CLASS); /* sgpr_32 allows no special */
    expect(p, z, &c, "%3", "s4", RS_V_DATAFLOW, RS_VK_CONFLICT);
    /* both dataflow kinds broken: the core proves at least one (compare() checks which) */
    expect(p, z, &c, "%0", "v0", RS_V_DATAFLOW, RS_VK__N);
    expect(p, z, &c, "%3", "v5", RS_V_HARDWARE, RS_VK_CLASS);   /* hardware wins over dataflow */
    rs_z3_free(z);
    free(c.reg);
  }
  rs_problem_free(p);
  rs_module_free(m);
}

static long fsize(const char *path) {
  struct stat sb;
  return stat(path, &sb) ? 0 : (long)sb.st_size;
}
static int by_size(const void *a, const void *b) {
  long x = fsize(*(char *const *)a), y = fsize(*(char *const *)b);
  return x < y ? -1 : x > y ? 1 : strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  hand_cases();
  char **files;
  int n = rs_check_list("tests/fixtures/amd", ".final.mir", &files);
  qsort(files, (size_t)n, sizeof *files, by_size);
  CHECK(n >= 10);
  int limit = n;
#if defined(__SANITIZE_ADDRESS__)
  limit = n < 4 ? n : 4; /* ASan: the small fixtures only keep the test quick */
#endif
  if (getenv("RS_Z3_FIXTURES")) limit = atoi(getenv("RS_Z3_FIXTURES"));
  stats st = {0};
  printf("Z3 checker on %d AMD fixtures:\n", limit < n ? limit : n);
  /* smallest fixtures first so a limit keeps the cheap ones */
  for (int i = 0; i < n && i < limit; i++)
    if (!getenv("RS_Z3_ONLY") || strstr(files[i], getenv("RS_Z3_ONLY"))) fixture(files[i], &st, (unsigned)i);
  printf("mutants: %u, rejected %u (dataflow %u, hardware %u, pass %u); disagreements with native: %u\n", st.mutants,
         st.rejected, st.by_verdict[RS_V_DATAFLOW], st.by_verdict[RS_V_HARDWARE], st.by_verdict[RS_V_PASS],
         disagreements);
  report("context build", &st.build);
  report("check, truths", &st.truth);
  report("check, mutants", &st.mutant);
  CHECK(st.by_verdict[RS_V_DATAFLOW] > 0 && st.by_verdict[RS_V_HARDWARE] > 0);
  printf("registers named past their file's end: %u mutants, %u hardware\n", st.past, st.past_hw);
  CHECK(st.past > 0 && st.past_hw == st.past);
  free(st.build.v);
  free(st.truth.v);
  free(st.mutant.v);
  rs_check_free_list(files, n);
  Z3_finalize_memory(); /* Z3's process-wide tables, so valgrind reports only real leaks */
  return rs_check_done("test_z3");
}
