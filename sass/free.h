/* free.h - free register allocation on SASS (seed 004, "free" mode): recolour every register
 * web of a listing with Chaitin-Briggs over all files at once (R, UR, P, UP, B), minimising the
 * R count that bounds occupancy, write the listing back with only register fields changed, and
 * validate the written listing independently of the colouring.
 *
 *   colour.   sass/free.c rs_sass_free_colour: the smallest R budget for which model/color.c
 *             colours the whole Problem (binary search); the listing's own allocation when no
 *             budget below it succeeds (never worse than ptxas).
 *   write.    rs_sass_free_write: the whole module text, every instruction line re-printed by
 *             sass/write.c under the new assignment, every other line byte for byte.
 *   check.    rs_sass_free_check (sass/free_check.c): re-parse the written text twice, once
 *             with physical registers and once lifted. (1) Contributor-set equivalence: for
 *             every register read (and every predicated write, which keeps the old value), the
 *             set of definition sites that can reach it, computed here by its own reaching-
 *             definitions pass over physical registers, is the one of the input. (2) The same
 *             partition of operands into webs. (3) The verifier (verify/native.c) on the input's
 *             Problem with the registers read back from the written listing.
 * Analysis only: there is no SASS assembler here, so the listing cannot be re-encoded and run
 * (docs/regalloc.md). */
#ifndef RS_SASS_FREE_H
#define RS_SASS_FREE_H
#include "analysis/problem.h"
#include "sass/sass.h"

/* ptxas -v style R count of a listing's register numbers: highest R + 1 + 2 reserved. */
#define RS_SASS_R_EXTRA 3

typedef struct {
  unsigned r_before, r_after;     /* ptxas -v style counts (highest R + 3) */
  unsigned occ_before, occ_after; /* warps/SM by target->occupancy for those counts */
  unsigned r_bound;               /* the Problem's R pressure bound, same units */
  unsigned tries;                 /* budgets tried */
  bool kept;                      /* no smaller budget coloured: the listing's own registers */
  const char *why_kept;           /* when kept for a reason other than "no smaller budget" */
} rs_sass_free_stats;

/* Colour f (its Problem p) minimising R; assign[vreg] gets the base register of every value.
 * quick: one colouring order per budget and no extra effort below the search's answer (tests).
 * Fills st. Returns 0 (always finds an allocation: the listing's own one at worst). */
int rs_sass_free_colour(const rs_func *f, const rs_problem *p, bool quick, rs_preg *assign, rs_sass_free_stats *st);

/* The module text with every function's registers printed from assign[k] (function k). */
char *rs_sass_free_write(const rs_module *m, rs_preg *const *assign);

/* ptxas -v style R count of a function as written (highest R in any operand + 3; physical
 * operands and values' truths). */
unsigned rs_sass_r_count(const rs_func *f);

/* One validation failure. */
typedef struct {
  char func[96];
  uint32_t addr;
  char reg[24];  /* register as written (or "-") */
  char what[256];
} rs_sass_free_fail;

/* Validate `text` (the written listing) against the input module m (lifted; its text is the
 * input). Per function of m, r_after[k] gets the R count of the written function. Returns the
 * number of failures (the first maxfail in fails), or UINT32_MAX with e set when the written
 * text does not parse at all (itself a failure of the write-back). */
uint32_t rs_sass_free_check(const rs_module *m, const char *text, rs_sass_free_fail *fails, uint32_t maxfail,
                            unsigned *r_after, rs_err *e);

/* cli/cmd_regalloc_free.c: `regsweep regalloc FILE --free` on a loaded module. */
int rs_regalloc_free(rs_module *m, const char *function, const char *out, bool quiet, bool quick);

#endif
