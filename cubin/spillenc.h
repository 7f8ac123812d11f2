/* spillenc.h - words and control bits of an STL/LDL rewritten as MOV/NOP (cubin/spillenc.c;
 * the rewrite: sass/spills.h). */
#ifndef RS_SPILLENC_H
#define RS_SPILLENC_H
#include "ir/ir.h"

/* What a rewritten access became: nothing, a 32-bit MOV, a 64-bit copy (IMAD.WIDE.U32 Rd, RZ, RZ, Rs). */
enum rs_spill_kind { RS_SPILL_NOP = 0, RS_SPILL_MOV = 1, RS_SPILL_WIDE = 2 };
/* The stall count a fixed-latency copy of that kind needs before any later instruction may read
 * its result (measured from ptxas's code: docs/lower.md). */
unsigned rs_spill_latency(unsigned sm, enum rs_spill_kind k);
/* Word 1 of a rewritten instruction from the original's: its wait mask and yield kept, no read or
 * write barrier armed, reuse flags cleared, stall at least the copy's latency (a NOP: its stall kept). */
uint64_t rs_spill_ctl(unsigned sm, uint64_t w1, enum rs_spill_kind k);
/* Each rewritten instruction (rewritten[i]) of f waits for the read barriers of the accesses in
 * flight at it (ctl: f's words, rewritten ones with rs_spill_ctl's bits): ORed into its wait mask. */
void rs_spill_waits(const rs_func *f, uint64_t (*ctl)[2], const uint8_t *rewritten);
/* The words of `MOV Rd, Rs`, `IMAD.WIDE.U32 Rd, RZ, RZ, Rs` (rd even) or NOP on sm (rs 255: RZ),
 * control bits from ctl_w1 (rs_spill_ctl's). -1 with why when no trusted encoding is known for
 * that architecture (lowering refuses). */
int rs_spill_encode(unsigned sm, enum rs_spill_kind k, unsigned rd, unsigned rs, uint64_t ctl_w1, uint64_t w[2],
                    char *why, size_t n);

#endif
