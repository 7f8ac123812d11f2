/* align.h - line up one function at two llc stages (e.g. after greedy,1 and after
 * virtregrewriter,1): which instruction and operand became which, and so which physical register
 * each virtual register received. This is how ground truth is recovered mechanically. */
#ifndef RS_ALIGN_H
#define RS_ALIGN_H
#include "ir/ir.h"

typedef struct {
  int32_t *op_map;   /* per operand of `to`: the operand of `from` it came from, or -1 */
  rs_preg *assign;   /* per virtual register of `from`: its register (lanes 0 = not assigned) */
  uint32_t nassign;
  uint32_t matched;  /* instructions matched */
  uint32_t dropped;  /* `from` instructions with no counterpart (identity copies, KILLs) */
} rs_alignment;

int rs_align(const rs_func *from, const rs_func *to, rs_alignment *out, rs_err *e);
void rs_alignment_free(rs_alignment *a);

/* Loose alignment across greedy: `from` before register allocation, `to` after greedy,1.
 * Greedy inserts split copies, spill code and rematerialized defs, and drops identity copies,
 * so each block is matched by the longest common subsequence of identical instructions (same
 * opcode and same non-register operands). Each virtual register of `from` collects where its
 * operands went: a virtual register of `to` (with a unit offset) or a physical register. */
typedef struct {
  uint32_t from_vreg;
  int32_t to_vreg;   /* -1: physical */
  uint32_t unit;     /* physical base unit when to_vreg < 0 */
  int32_t delta;     /* base(from) = base(to_vreg) + delta, or unit + delta */
} rs_loose_link;

typedef struct {
  rs_loose_link *links; /* distinct links, sorted by from_vreg */
  uint8_t *lost;        /* per vreg of `from`: named by an instruction other than a COPY or KILL
                         * with no counterpart in `to` (greedy folded a spill into it, or deleted it
                         * after rematerializing): its links do not show every register it had */
  uint32_t *gone_copies; /* `from` instructions: COPYs with no counterpart (identity copies, or
                          * copies greedy turned into spill code: the caller tells them apart) */
  uint32_t ngone, capgone;
  rs_preg *restored;     /* physical registers that `to`'s own spill restores define (an SGPR spilled
                          * in llc-22's first round comes back from a VGPR lane, often into the
                          * register it had, while another value used it in between) */
  uint32_t nrestored, caprestored;
  uint8_t *reloaded;     /* per virtual register of `to`: defined by a spill restore greedy inserted */
  int32_t *pair;         /* per instruction of `to`: the instruction of `from` it matched, -1 where
                          * greedy inserted it (mir/splitmir.c rebuilds the split instance from it) */
  uint32_t nlinks, caplinks;
  uint32_t matched, from_only, to_only; /* instructions matched / dropped / inserted */
} rs_loose;

int rs_align_loose(const rs_func *from, const rs_func *to, rs_loose *out, rs_err *e);
void rs_loose_free(rs_loose *l);

#endif
