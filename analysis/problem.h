/* problem.h - the allocation Problem (DESIGN.md): everything after parsing works on this.
 *
 * Values are the virtual registers a function uses, renumbered densely. Interference is
 * lane-aware: a conflict says "lanes la of a and lanes lb of b are live at the same time", so an
 * assignment is wrong only if it puts one of those lanes of a on a physical lane of b. Fixed
 * registers give per-value exclusions the same way. */
#ifndef RS_PROBLEM_H
#define RS_PROBLEM_H
#include "ir/ir.h" /* target/target.h: RS_MAX_FILES */

typedef struct {
  char *name;      /* original name: "%12", "%r5" */
  int cls;
  uint16_t width;  /* 32-bit units */
  rs_lanes full;   /* lanes of the class */
  uint32_t files;  /* files the class may use */
  uint32_t fvreg;  /* index among the function's virtual registers */
  uint32_t order;  /* position of its first def in reverse post-order (colouring order) */
} rs_pvar;

typedef struct {
  uint32_t a, b;   /* a < b */
  rs_lanes la, lb;
  uint32_t inst;   /* an instruction where they overlap (for diagnostics) */
} rs_conflict;

typedef struct {
  uint32_t v;
  rs_lanes lv;     /* lanes of v ... */
  rs_preg p;       /* ... live while these physical lanes are live or written */
  uint32_t inst;
} rs_fixed;

typedef struct {
  uint32_t a;
  int32_t b;       /* value, or -1 for a physical register */
  uint32_t unit;   /* physical unit when b < 0 */
  int32_t off;     /* wanted: base(a) == base(b) + off (units) */
} rs_hint;

typedef struct rs_problem {
  const rs_target *tgt;
  char *func;
  char *path;
  rs_pvar *vars;
  uint32_t nvars, capvars;
  rs_conflict *conf;
  uint32_t nconf, capconf;
  rs_fixed *fixed;
  uint32_t nfixed, capfixed;
  rs_hint *hints;
  uint32_t nhints, caphints;
  rs_preg *reserved;     /* registers the function reserves besides the target's */
  uint32_t nreserved;
  rs_preg *wwm;          /* of those, the whole-wave registers LLVM moves after allocation (ir.h) */
  uint32_t nwwm;
  uint32_t maxp[RS_MAX_FILES]; /* max simultaneously live 32-bit registers per file, counting
                                  * values whose class allows only that file (and fixed ones) */
  uint32_t maxp_flex;          /* max live over the files that multi-file classes (av_*) span,
                                  * all values of those files together; 0 if there are none */
  uint32_t flex_files;         /* those files (bit mask) */
  uint32_t nblocks, ninsts;
  uint32_t *inst_line;   /* source line per instruction (for diagnostics) */
  /* The function's register budget per file: registers it may use from the start of the file.
   * The file's budget, lowered by the launch bounds where the target has a rule for them
   * (AMD: rs_target.fn_budget; LLVM reserves the rest, and such a kernel could not launch). */
  uint32_t budget[RS_MAX_FILES];
  rs_launch launch;      /* the launch bounds it comes from (wg_max 0: none given) */
  unsigned launch_waves; /* minimum waves per SIMD they imply; 0 when no rule applied */
} rs_problem;

/* Build from a parsed function (liveness is computed inside). */
rs_problem *rs_problem_build(const rs_func *f, rs_err *e);
void rs_problem_free(rs_problem *p);
/* Does the pressure alone exceed a budget (the function's, or the union of the files multi-file
 * classes span)? No allocation without spills exists then. */
bool rs_problem_infeasible(const rs_problem *p);
/* rs_target_member, then the function's budget (RS_MEMBER_FNBUDGET past p->budget). */
enum rs_member rs_problem_member(const rs_problem *p, int cls, rs_preg r);
/* "launch bounds: 1024 work-items, at least 4 waves per SIMD" (what lowered the budget). */
const char *rs_problem_budget_why(const rs_problem *p, char *buf, size_t n);
/* Value index by name, -1 if none. */
int rs_problem_find(const rs_problem *p, const char *name, size_t n);
/* Conflicts and fixed exclusions an assignment violates; base[v] = first unit of value v.
 * Class membership is not checked here (see rs_target_member). */
uint32_t rs_problem_violations(const rs_problem *p, const uint32_t *base);
/* Check an assignment (per function vreg) against a Problem; returns violations, or UINT32_MAX
 * when a used value has no register. *nonmember counts registers outside their class. (The
 * corpus's truths and every recolouring, mcode/check.c, are checked by it.) */
uint32_t rs_truth_check(const rs_problem *p, const rs_preg *assign, uint32_t *nonmember);
/* Stable dumps: text for people and diffs, JSON for tools. */
char *rs_problem_text(const rs_problem *p);
char *rs_problem_json(const rs_problem *p);

#endif
