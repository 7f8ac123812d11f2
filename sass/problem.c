/* problem.c - the Problem of a SASS function as it is written back: LLVM-style interference
 * (analysis/problem.c) plus the conflicts that make every valid colouring re-lift to the same
 * values (joins.c) and, when the function's cubin is at hand, keep ptxas's control bits sound
 * (scoreboard.c). Every consumer of a form-sass instance (sweep, oracle, emit, regalloc) verifies
 * against this one Problem, so an answer that verifies is one that lowers: without the joins an
 * answer could pass and then, written back, have an operand read another value's def (8 MAGMA
 * answers did). ptxas's own colouring satisfies every added conflict (tests/test_sass_real.c), so
 * truths stay truths. */
#include "cubin/lower.h"
#include "sass/sass.h"
#include "analysis/problem.h"
#include <stdlib.h>
#include <string.h>

rs_problem *rs_sass_problem(const rs_func *f, const uint8_t *cubin, size_t cubin_len, const char *name,
                            uint32_t *nsb, rs_err *e) {
  if (nsb) *nsb = 0;
  rs_problem *p = rs_problem_build(f, e);
  if (!p) return NULL;
  rs_sass_join_conflicts(f, p);
  if (!cubin || !cubin_len) return p;
  rs_cubin c;
  uint8_t *bytes = rs_xmalloc(cubin_len);
  memcpy(bytes, cubin, cubin_len);
  uint64_t (*ctl)[2] = NULL;
  int rc = rs_cubin_parse(bytes, cubin_len, name, &c, e);
  if (!rc) rc = rs_sass_ctl_of(&c, f, name, &ctl, e);
  rs_cubin_free(&c);
  if (rc) {
    rs_problem_free(p);
    return NULL;
  }
  uint32_t n = rs_sass_scoreboard_conflicts(f, (const uint64_t(*)[2])ctl, p);
  if (nsb) *nsb = n;
  free(ctl);
  return p;
}
