/* sgspill.h - the SGPR round's spill code as LLVM lowered it (mir/sgspill.c, docs/real-suite.md). */
#ifndef RS_SGSPILL_H
#define RS_SGSPILL_H
#include "mir/align.h"

/* The MIR text of `g` (the MIR llc's SGPR round printed, spill pseudos SI_SPILL_S*_SAVE/_RESTORE in
 * it) with each spill pseudo replaced by the lane writes or reads `ps` (LLVM's postsplit MIR, aligned
 * by `lo`) holds in its place: their SGPR operand renamed to the spilled value's 32-bit
 * sub-register and their implicit operands of the whole spilled register to the value, the lane
 * VGPR physical as LLVM chose it (live into the blocks it is in ps, and llc-22's whole-wave
 * registers, wwmReservedRegs, in the function's info); the SGPR spill slots leave the frame, and
 * greedy's bundles of copies are written one copy after the other where that reads the same.
 * `as` holds LLVM's register per value of g (rs_truth_prera_linked): a lane instruction counts
 * only where it names the spilled value's own registers. Returns the text (malloc'd, *len bytes)
 * or NULL with the reason in w. */
char *rs_mir_sgpr_spill_lanes(const rs_func *g, const rs_func *ps, const rs_loose *lo, const rs_preg *as,
                              size_t *len, char *w, size_t nw);

#endif
