/* verify.h - candidate answers and the verifiers that judge them.
 *
 * A candidate is a JSON object from virtual register names (normalized "v12" or original "%4711")
 * to physical registers in the target's spelling (AMD v7, v[4:5], s[8:11], a[0:15] or MIR
 * $vgpr4_vgpr5; NVIDIA R12, R[4:5], P3). Parsing resolves it against a Problem; the checkers
 * (native, Z3) then give one verdict with counts per violation kind and the first diagnostics. */
#ifndef RS_VERIFY_H
#define RS_VERIFY_H
#include "analysis/problem.h"

typedef enum {
  RS_V_PASS,
  RS_V_SYNTAX,   /* not parseable, unknown / missing / duplicate name, text naming no register */
  RS_V_DATAFLOW, /* interfering values (or a fixed register) share a register unit */
  RS_V_HARDWARE, /* wrong class / width / file, misaligned, reserved, out of budget */
  RS_V_TIMEOUT,  /* verifier budget exhausted */
  RS_V_INFRA,    /* the model could not be reached: never a model failure */
  RS_V__N
} rs_verdict;
const char *rs_verdict_str(rs_verdict v);

typedef enum {
  RS_VK_JSON,      /* malformed JSON, trailing junk, not an object, too large or deep */
  RS_VK_UNKNOWN,   /* key is not a virtual register of the instance */
  RS_VK_MISSING,   /* a virtual register has no entry */
  RS_VK_DUPLICATE, /* a key appears twice (directly or through both spellings) */
  RS_VK_BADREG,    /* value names no register of the target ("q7", "v", "vx3") */
  RS_VK_CONFLICT,  /* two live-at-once values share a unit */
  RS_VK_FIXED,     /* a value takes a unit of a fixed register live/clobbered in its range */
  RS_VK_CLASS,     /* register not in the value's class: width or register file */
  RS_VK_ALIGN,     /* misaligned tuple */
  RS_VK_RESERVED,  /* reserved register */
  RS_VK_BUDGET,    /* beyond the register budget / past the end of the file ("v300" on gfx90a) */
  RS_VK__N
} rs_vkind;
const char *rs_vkind_str(rs_vkind k);
/* The verdict category of a violation kind. */
rs_verdict rs_vkind_verdict(rs_vkind k);

#define RS_MAX_DIAG 12 /* enough for the feedback of an answer with a dozen wrong values (worker/engine.c) */
typedef struct {
  rs_verdict verdict;
  uint32_t counts[RS_VK__N];
  char diag[RS_MAX_DIAG][256]; /* the first diagnostics, in order found */
  uint32_t ndiag;
  unsigned used[RS_MAX_FILES]; /* registers used per file (highest + 1), when it parses */
  unsigned occupancy;          /* waves/SIMD (AMD) or warps/SM (NVIDIA) those registers allow */
  double seconds;              /* time spent in the checker */
} rs_check_result;

/* Names a candidate may use besides the original ones (normalized -> original); may be NULL. */
typedef struct {
  const char *const *norm;
  const char *const *orig;
  uint32_t n;
} rs_namemap;

/* A register named past the end of its file ("v300" or v[299:300] on gfx90a, "s120", "R300",
 * MIR "$vgpr300"): well-formed, so it is no syntax error; the checkers judge it (hardware,
 * budget: how a model that runs out of registers answers). No unit of the target holds it: its
 * reg entry is {RS_UNIT_BEYOND, lanes} and `beyond` says which file and register it names. */
#define RS_UNIT_BEYOND UINT32_MAX
#define RS_BEYOND_MAX 100000u /* register numbers from here on are not names (overflow guard) */
typedef struct {
  uint32_t file, index; /* file of the target, first register within it (>= its count, or a
                         * tuple that runs past the end) */
} rs_beyond;

typedef struct {
  rs_preg *reg;       /* per Problem value; lanes 0 = no entry; unit RS_UNIT_BEYOND: see beyond */
  uint32_t n;
  bool wrapped;       /* the JSON was wrapped in prose or a ```json fence (accepted, counted) */
  rs_beyond *beyond;  /* per value, allocated when some value names a register past its file */
} rs_candidate;

/* Bounds on an answer: larger or deeper answers are `syntax`, never a crash. */
#define RS_CAND_MAX_BYTES (4u << 20)
#define RS_CAND_MAX_DEPTH 16

/* Parse text into c (c->reg allocated, free with rs_candidate_free); fills res with `syntax`
 * findings. Returns 0 when the candidate can be checked (every value has a register). */
int rs_candidate_parse(const rs_problem *p, const rs_namemap *names, const char *text, size_t len,
                       rs_candidate *c, rs_check_result *res);
void rs_candidate_free(rs_candidate *c);
/* Spelling of value v's register in c (also for a register past its file); returns buf. */
const char *rs_candidate_reg_str(const rs_target *t, const rs_candidate *c, uint32_t v, char *buf, size_t n);
void rs_result_init(rs_check_result *r);
/* Record a finding: counts it, keeps the first diagnostics, and raises the verdict
 * (syntax over hardware over dataflow: the first category a user must fix). */
void rs_result_add(rs_check_result *r, rs_vkind k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Native checker: hardware rules, then interference (lane-aware) and fixed registers. */
void rs_check_native(const rs_problem *p, const rs_candidate *c, rs_check_result *res);

/* Z3 checker (the paper's SMT formulation), one solver context per instance. */
typedef struct rs_z3 rs_z3;
rs_z3 *rs_z3_new(const rs_problem *p, unsigned timeout_ms, rs_err *e);
void rs_z3_check(rs_z3 *z, const rs_candidate *c, rs_check_result *res);
void rs_z3_free(rs_z3 *z);

#endif
