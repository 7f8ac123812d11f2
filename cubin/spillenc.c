/* spillenc.c - the words and control bits of an STL/LDL rewritten as a register MOV or a NOP
 * (sass/spills.h): the only instructions lowering writes from scratch rather than re-encoding.
 *
 * Encodings (measured on ptxas 13's own code, sm_75-sm_90, and read back by nvdisasm in every
 * crosscheck; a 64-bit copy is IMAD.WIDE.U32, below): `MOV Rd, Rs` = word 0 0x7202 (opcode 0x202, guard PT at bit 12) with Rd at bit 16
 * and Rs at bit 32 (the learned fields of MOV 'RR', trusted on each of these architectures: checked
 * against cubin/fields.c here), word 1 0xf00 (the lane mask) and the control bits; `NOP` = 0x7918,
 * word 1 only the control bits. Any other architecture is refused by name.
 *
 * Control bits (word 1 bits 41-44 stall, 45 yield, 46-48 write barrier, 49-51 read barrier, 52-57
 * wait mask, 58-61 reuse): a MOV is fixed-latency, so it arms no barrier (the STL it replaces
 * armed a read barrier, the LDL a write barrier: a later wait on that barrier now waits for less,
 * never for too little); its own wait mask is kept (what the old instruction waited for before
 * reading its sources is still what the MOV reads); reuse flags are cleared (always correct); its
 * stall is at least the MOV latency, so no later instruction can issue before its result is
 * written: ptxas leaves 4 cycles or more between a fixed-latency ALU result (MOV, IADD3, LOP3,
 * FFMA, SHF ...) and its first reader on sm_80 (docs/lower.md), and an STL reads its data no
 * earlier (5 or more after an FFMA/FMUL), so a MOV in its place reads what it read. */
#include "cubin/spillenc.h"
#include "cubin/lower.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ptxas's minimum distance to the first reader, plus one cycle of margin: MOV 4 (docs/lower.md);
 * IMAD.WIDE(.U32) 4 (the high register, 3 samples) and 5 (the low one, 23 samples; flash_attn_fwd
 * HD=128 at .maxnreg 64-168, sm_80). */
enum { MOV_LATENCY = 5, WIDE_LATENCY = 6 };

unsigned rs_spill_latency(unsigned sm, enum rs_spill_kind k) {
  (void)sm;
  return k == RS_SPILL_WIDE ? WIDE_LATENCY : MOV_LATENCY;
}

uint64_t rs_spill_ctl(unsigned sm, uint64_t w1, enum rs_spill_kind k) {
  uint64_t stall = (w1 >> 41) & 0xf;
  uint64_t keep = w1 & ((1ull << 45) | (0x3full << 52) | (3ull << 62)); /* yield, wait mask, bits 62-63 */
  if (k != RS_SPILL_NOP && stall < rs_spill_latency(sm, k)) stall = rs_spill_latency(sm, k);
  if (!stall) stall = 1;
  return keep | 7ull << 46 | 7ull << 49 | stall << 41;
}

static bool known_sm(unsigned sm) { return sm == 75 || sm == 80 || sm == 86 || sm == 89 || sm == 90; }

/* IMAD.WIDE.U32 Rd, Ra, Rb, Rc without carry-out: word 0 0x7225 | Rd << 16 | Ra << 24 | Rb << 32,
 * word 1 0x78e0000 | Rc (the carry predicate PT, the .U32 form): every such sample of ptxas 13 on
 * sm_75, sm_80, sm_86, sm_89 and sm_90 (a kernel of ours, tests/fixtures/sass-real/intrinsics.cu);
 * the register fields are the learned ones of 0x225 'RRRR' (16, 24, 32, 64), checked here. */
int rs_spill_encode(unsigned sm, enum rs_spill_kind k, unsigned rd, unsigned rs, uint64_t ctl_w1, uint64_t w[2],
                    char *why, size_t n) {
  static const char *const what[] = {"NOP", "MOV 0x202 'RR'", "IMAD.WIDE.U32 0x225 'RRRR'"};
  const rs_sass_form *fm = k == RS_SPILL_NOP ? rs_sass_form_find(sm, 0x918, "")
                           : k == RS_SPILL_MOV ? rs_sass_form_find(sm, 0x202, "RR")
                                               : rs_sass_form_find(sm, 0x225, "RRRR");
  bool fields = k == RS_SPILL_NOP || (fm && (k == RS_SPILL_MOV ? fm->off[0] == 16 && fm->off[1] == 32
                                                               : fm->off[0] == 16 && fm->off[1] == 24 &&
                                                                     fm->off[2] == 32 && fm->off[3] == 64));
  if (!known_sm(sm) || !fm || !fields) {
    snprintf(why, n, "no trusted encoding for %s on sm_%u (a rewritten spill access)", what[k], sm);
    return -1;
  }
  if (rd > 255 || rs > 255 || (k == RS_SPILL_WIDE && ((rd & 1) || (rs != 255 && (rs & 1)) || rd == 255))) {
    snprintf(why, n, "%s R%u, R%u: no such register%s", what[k], rd, rs, k == RS_SPILL_WIDE ? " pair" : "");
    return -1;
  }
  uint64_t ctl = ctl_w1 & ~((1ull << 41) - 1);
  if (k == RS_SPILL_NOP) {
    w[0] = 0x7918;
    w[1] = ctl;
  } else if (k == RS_SPILL_MOV) {
    w[0] = 0x7202 | (uint64_t)rd << 16 | (uint64_t)rs << 32;
    w[1] = 0xf00 | ctl;
  } else {
    w[0] = 0x7225 | (uint64_t)rd << 16 | 0xffull << 24 | 0xffull << 32;
    w[1] = 0x78e0000 | (uint64_t)rs | ctl;
  }
  return 0;
}

/* A rewritten MOV writes its register a few cycles after issue, where the STL/LDL it replaces
 * went down the in-order memory pipe behind the accesses in flight before it (a store still to
 * read its data, hazard.c's in-order rule): it waits for their read barriers, cheap ones (a read
 * barrier clears once the operands are read), so no register an in-flight access still reads
 * can be written early. One walk over the control bits as they are before these waits, so the
 * Problem (spillalloc.c) and the lowering (spilllower.c) compute the same masks. */
typedef struct {
  const uint8_t *rewritten;
  uint8_t *mask;
} waits_ctx;

static bool waits_at(void *ctx, uint32_t i, uint32_t k, int kind, unsigned sb) {
  (void)i;
  waits_ctx *w = ctx;
  if (kind == RS_SB_READ && w->rewritten[k] && sb < 6) w->mask[k] |= (uint8_t)(1u << sb);
  return false;
}

void rs_spill_waits(const rs_func *f, uint64_t (*ctl)[2], const uint8_t *rewritten) {
  uint8_t *mask = rs_xcalloc(f->ninsts + 1, 1);
  waits_ctx w = {rewritten, mask};
  rs_sass_sb_walk(f, (const uint64_t(*)[2])ctl, waits_at, &w);
  for (uint32_t k = 0; k < f->ninsts; k++)
    if (rewritten[k]) ctl[k][1] |= (uint64_t)mask[k] << 52;
  free(mask);
}
