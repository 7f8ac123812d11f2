/* rounds.h - the register-allocation rounds of an llc pipeline, read from its
 * `-debug-pass=Structure` listing. AMDGPU allocates in rounds (greedy + rewriter each): llc-14
 * and llc-16 run two (SGPRs, then vectors), llc-22 three (SGPRs, whole-wave-mode values, then
 * per-lane vectors). The corpus's stages and emit's restart point are pass instances
 * (`greedy,N-1`, `virtregrewriter,N-1`), so N is read from the compiler, never assumed; a
 * pipeline whose rounds we do not know is refused with the passes it showed. */
#ifndef RS_ROUNDS_H
#define RS_ROUNDS_H
#include "util/util.h"

enum { RS_ROUNDS_MAX = 4 };
typedef enum { RS_ROUND_SGPR, RS_ROUND_WWM, RS_ROUND_VECTOR } rs_round_kind;

typedef struct {
  unsigned n;                        /* greedy/rewriter rounds: 2 or 3 */
  rs_round_kind kind[RS_ROUNDS_MAX]; /* what each round allocates */
  char greedy_last[32];              /* "greedy,N-1": the vector round (the postsplit stage) */
  char rewriter_last[32];            /* "virtregrewriter,N-1": the final stage, emit's restart */
  char slots_last[40];               /* "stack-slot-coloring,K": the first instance after the last
                                      * rewriter (emit's stop for the spill slots' block
                                      * frequencies: K = 0 at LLVM 14/16, 1 at 22, which also runs
                                      * one after round 0); "" when the pipeline has none there */
} rs_rounds;

/* Parse llc's -debug-pass=Structure text (stderr). who names the llc for errors. Known shapes:
 *   2 rounds: Greedy, Rewriter, SI lower SGPR spill instructions, Greedy, Rewriter
 *   3 rounds: Greedy, Rewriter, SI lower SGPR spill instructions, Greedy, SI Lower WWM Copies,
 *             Rewriter, Greedy, Rewriter
 * Anything else (another allocator, a missing rewriter, a fourth round, a WWM round elsewhere)
 * is an error listing the allocation passes seen, in order. */
int rs_rounds_parse(const char *structure, const char *who, rs_rounds *out, rs_err *e);

/* Running llc for it: rs_llc_rounds (llvm/llc.c). */

#endif
