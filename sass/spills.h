/* spills.h - ptxas's spill slots as values of free mode: find them, turn the promotable ones
 * into register copies in place, write them back, check the result, and the control bits and
 * words of the rewritten instructions (issue 37, docs/lower.md "Spill slots").
 *
 * A slot is 1, 2 or 4 words of the frame, [R1+k], stored by STL(.64/.128) and loaded by
 * LDL(.64/.128)(.LU), every access of its words being of the whole slot (k aligned to its size).
 * Per slot, reaching stores link each load to the stores that may have written what it reads; a
 * web of stores and loads is one value (ptxas reuses a slot for several spilled values: several
 * webs), of class r32, r64 or r128. A web is promotable when every access is unpredicated, no load
 * can read the slot before any store, and the function's frame address never escapes (R1 read by nothing
 * but [R1+imm] addresses of STL/LDL, the prologue and the implicit stack-pointer reads of
 * EXIT/RET/CALL; R1 written only by the prologue; no external call; no local access through
 * another register). Promoted: each STL becomes `MOV S, src` (or NOP when S and src share a
 * register, or when no load reads the web: a dead store), each load `MOV dst, S` (or NOP); a
 * 64-bit copy is `IMAD.WIDE.U32 D, RZ, RZ, S` (0 * 0 + the pair S); a 128-bit slot has no copy
 * instruction and is promoted only where every access is a NOP. The same instruction count and addresses, no CFG change. The words and control bits of the rewritten
 * instructions are the back end's (cubin/spillenc.h); mcode/ joins the two. */
#ifndef RS_SASS_SPILLS_H
#define RS_SASS_SPILLS_H
#include "ir/ir.h"

struct rs_problem;

typedef struct {
  uint32_t inst;  /* instruction index */
  uint32_t off;   /* byte offset from R1 */
  uint8_t store;  /* STL (else a load) */
  uint8_t words;  /* 32-bit words accessed */
  int32_t web;    /* its web (slot value), -1 when the word is not promotable */
} rs_spill_access;

typedef struct {
  uint32_t off;          /* byte offset from R1 */
  uint32_t nstores, nloads;
  uint32_t words;        /* 1, 2 or 4: the slot's size */
  uint32_t first;        /* lowest instruction index of its accesses */
  bool ok;               /* promotable */
  char why[200];         /* why not */
} rs_spill_web;

typedef struct {
  rs_spill_access *acc;
  uint32_t nacc;
  rs_spill_web *webs;
  uint32_t nwebs;
  uint32_t stores, loads;  /* STL / LDL instructions of the function */
  uint32_t frame;          /* bytes the prologue reserves (IADD3 R1, R1, -F), 0 if none */
  char refused[160];       /* why no slot of the function can be promoted, "" when some can */
} rs_spills;

/* Find the slots of a lifted SASS function (R1 stays physical in the lift). 0, or -1 with e set
 * for an access this analysis cannot read (never for a refusal: that is s->refused). */
int rs_spills_find(const rs_func *f, rs_spills *s, rs_err *e);
void rs_spills_free(rs_spills *s);

/* Rewrite f in place: the accesses of every web w with promote[w] become MOVs through a new
 * value (slot_vreg[w], class r32/r64/r128 by the slot's size; dead-store webs: NOPs, slot_vreg -1). Returns the number of
 * rewritten instructions. Their control bits are the back end's (cubin/spillenc.h). */
uint32_t rs_spills_apply(rs_func *f, const rs_spills *s, const uint8_t *promote, int32_t *slot_vreg);

/* The written module text with each rewritten instruction's line (f from rs_spills_apply, in
 * module function k) printed as what it now is under assign: `MOV Rd, Rs` (a pair:
 * `IMAD.WIDE.U32 Rd, RZ, RZ, Rs`) or `NOP` when both name one register (or a dead store). Returns a new text (malloc'd); *nops counts NOPs. */
char *rs_spills_write(const char *text, const rs_func *f, const rs_preg *assign, uint32_t *nops);

/* Is an instruction with opcode y (modifiers included) in a written listing a rewrite of the
 * spill access x at the same place: STL/LDL* became MOV, IMAD.WIDE.U32 (a pair copy) or NOP. */
bool rs_spills_is_rewrite(const char *x, const char *y);

/* The independent check of a written function against its original (both freshly lifted from
 * text): per instruction that was not rewritten, every register it reads must read the same
 * original definitions, where a definition read through a rewritten MOV/NOP is followed back to
 * its source and, in the original, a value loaded from a promoted slot back to the stores whose
 * word reaches the load and their sources (a load must read the value its store wrote).
 * `rewritten[i]` marks the instructions rewritten. Returns the reads that differ (first in why);
 * *uses counts the reads compared. */
uint32_t rs_spills_check(const rs_func *orig, const rs_func *written, const uint8_t *rewritten, uint32_t *uses,
                         char *why, size_t n);

#endif
