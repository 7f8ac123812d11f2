/* spillenc.h - words and control bits of an STL/LDL rewritten as MOV/NOP (cubin/spillenc.c;
 * the rewrite: sass/spills.h). */
#ifndef RS_SPILLENC_H
#define RS_SPILLENC_H
#include "ir/ir.h"

/* The stall count a fixed-latency MOV needs before any later instruction may read its result
 * (measured from ptxas's code: docs/lower.md). */
unsigned rs_spill_mov_latency(unsigned sm);
/* Word 1 of a rewritten instruction from the original's: its wait mask and yield kept, no read or
 * write barrier armed, reuse flags cleared, stall at least the MOV latency (a NOP: its stall kept). */
uint64_t rs_spill_ctl(unsigned sm, uint64_t w1, bool nop);
/* Each rewritten instruction (rewritten[i]) of f waits for the read barriers of the accesses in
 * flight at it (ctl: f's words, rewritten ones with rs_spill_ctl's bits): ORed into its wait mask. */
void rs_spill_waits(const rs_func *f, uint64_t (*ctl)[2], const uint8_t *rewritten);
/* The words of `MOV Rd, Rs` (rs 255: RZ) or NOP on sm, control bits from ctl_w1 (rs_spill_ctl's).
 * -1 with why when no trusted encoding is known for that architecture (lowering refuses). */
int rs_spill_encode(unsigned sm, bool nop, unsigned rd, unsigned rs, uint64_t ctl_w1, uint64_t w[2], char *why,
                    size_t n);

#endif
