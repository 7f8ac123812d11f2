/* align.h - line up one function at two llc stages (e.g. after greedy,1 and after
 * virtregrewriter,1): which instruction and operand became which, and so which physical register
 * each virtual register received. This is how ground truth is recovered mechanically. */
#ifndef RS_ALIGN_H
#define RS_ALIGN_H
#include "mir/ir.h"

typedef struct {
  int32_t *op_map;   /* per operand of `to`: the operand of `from` it came from, or -1 */
  rs_preg *assign;   /* per virtual register of `from`: its register (lanes 0 = not assigned) */
  uint32_t nassign;
  uint32_t matched;  /* instructions matched */
  uint32_t dropped;  /* `from` instructions with no counterpart (identity copies, KILLs) */
} rs_alignment;

int rs_align(const rs_func *from, const rs_func *to, rs_alignment *out, rs_err *e);
void rs_alignment_free(rs_alignment *a);

#endif
