/* problem.c - the Problem of a SASS function as it is written back: LLVM-style interference
 * (analysis/problem.c) plus the conflicts that make every valid colouring re-lift to the same
 * values (sass/joins.c) and, when the function's cubin is at hand, keep ptxas's control bits sound
 * (cubin/scoreboard.c's operand pairs, made conflicts by joins.c). Every consumer of a form-sass
 * instance (sweep, oracle, emit, regalloc) verifies against this one Problem, so an answer that
 * verifies is one that lowers: without the joins an answer could pass and then, written back,
 * have an operand read another value's def (8 MAGMA answers did). ptxas's own colouring
 * satisfies every added conflict (tests/test_sass_real.c), so truths stay truths. */
#include "mcode/mcode.h"
#include "sass/sass.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
  const rs_func *f;
  const uint64_t (*ctl)[2];
} sb_src;

/* cubin/scoreboard.c's pairs, handed to joins.c one at a time (the front end never calls the
 * cubin back end: this module joins the two) */
static void sb_pairs(void *src, rs_sass_pair_fn pair, void *ctx) {
  const sb_src *s = src;
  rs_sass_scoreboard_pairs(s->f, s->ctl, pair, ctx);
}

uint32_t rs_sass_scoreboard_conflicts(const rs_func *f, const uint64_t (*ctl)[2], rs_problem *p) {
  sb_src s = {f, ctl};
  return rs_sass_pair_conflicts(f, p, sb_pairs, &s);
}

rs_problem *rs_mc_problem(const rs_func *f, const uint64_t (*ctl)[2], uint32_t *nsb, rs_err *e) {
  if (nsb) *nsb = 0;
  rs_problem *p = rs_problem_build(f, e);
  if (!p) return NULL;
  rs_sass_join_conflicts(f, p);
  uint32_t n = ctl ? rs_sass_scoreboard_conflicts(f, ctl, p) : 0;
  if (nsb) *nsb = n;
  return p;
}

rs_problem *rs_sass_problem(const rs_func *f, const uint8_t *cubin, size_t cubin_len, const char *name,
                            uint32_t *nsb, rs_err *e) {
  if (nsb) *nsb = 0;
  if (!cubin || !cubin_len) return rs_mc_problem(f, NULL, nsb, e);
  rs_cubin c;
  uint8_t *bytes = rs_xmalloc(cubin_len);
  memcpy(bytes, cubin, cubin_len);
  uint64_t (*ctl)[2] = NULL;
  int rc = rs_cubin_parse(bytes, cubin_len, name, &c, e);
  if (!rc) rc = rs_sass_ctl_of(&c, f, name, &ctl, e);
  rs_cubin_free(&c);
  rs_problem *p = rc ? NULL : rs_mc_problem(f, (const uint64_t(*)[2])ctl, nsb, e);
  free(ctl);
  return p;
}
