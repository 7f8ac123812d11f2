/* spills.h - ptxas's spill slots as values of free mode: find them, turn the promotable ones
 * into register copies in place, write them back, check the result, and the control bits and
 * words of the rewritten instructions (issue 37, docs/lower.md "Spill slots").
 *
 * A slot is a 32-bit word of the frame, [R1+k], stored by STL and loaded by LDL/LDL.LU. Per word,
 * reaching stores link each load to the stores that may have written what it reads; a web of
 * stores and loads is one value (ptxas reuses a word for several spilled values: several webs).
 * A web is promotable when every access is an unpredicated 32-bit STL/LDL(.LU), no load can read
 * the word before any store, and the function's frame address never escapes (R1 read by nothing
 * but [R1+imm] addresses of STL/LDL, the prologue and the implicit stack-pointer reads of
 * EXIT/RET/CALL; R1 written only by the prologue; no external call; no local access through
 * another register). Promoted: each STL becomes `MOV S, src` (or NOP when S and src share a
 * register, or when no load reads the web: a dead store), each load `MOV dst, S` (or NOP): the
 * same instruction count and addresses, no CFG change. */
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
 * value (slot_vreg[w], class r32; dead-store webs: NOPs, slot_vreg -1). ctl (may be NULL): the
 * instructions' words, whose control bits for the rewritten ones are set as a MOV's
 * (rs_spill_ctl on sm). Returns the number of rewritten instructions. */
uint32_t rs_spills_apply(rs_func *f, const rs_spills *s, const uint8_t *promote, int32_t *slot_vreg,
                         uint64_t (*ctl)[2], unsigned sm);

/* The written module text with each rewritten instruction's line (f from rs_spills_apply, in
 * module function k) printed as what it now is under assign: `MOV Rd, Rs` or `NOP` when both
 * name one register (or a dead store). Returns a new text (malloc'd); *nops counts NOPs. */
char *rs_spills_write(const char *text, const rs_func *f, const rs_preg *assign, uint32_t *nops);

/* The independent check of a written function against its original (both freshly lifted from
 * text): per instruction that was not rewritten, every register it reads must read the same
 * original definitions, where a definition read through a rewritten MOV/NOP is followed back to
 * its source and, in the original, a value loaded from a promoted slot back to the stores whose
 * word reaches the load and their sources (a load must read the value its store wrote).
 * `rewritten[i]` marks the instructions rewritten. Returns the reads that differ (first in why);
 * *uses counts the reads compared. */
uint32_t rs_spills_check(const rs_func *orig, const rs_func *written, const uint8_t *rewritten, uint32_t *uses,
                         char *why, size_t n);

/* ---- which slots get a register (spillalloc.c) ---- */

typedef struct {
  rs_module *mod;          /* a fresh parse of the listing holding the rewritten function (owned) */
  rs_func *f;              /* mod->funcs[k], rewritten */
  rs_preg *assign;         /* per f->nvregs: free mode's registers, and the slot values' */
  uint8_t *rewritten;      /* per instruction */
  uint64_t (*ctl)[2];      /* its words with the rewritten instructions' control bits (NULL without a cubin) */
  uint8_t *promote;        /* per web */
  struct rs_problem *p;    /* the rewritten function's Problem (joins, scoreboards with ctl) */
  uint32_t nsb;            /* scoreboard conflicts in it */
  uint32_t promoted_webs, stores_left, loads_left;
} rs_spill_result;
void rs_spill_result_free(rs_spill_result *r);

/* Function k of module m (its lifted original, spills s found in it), coloured by free mode as
 * base (per vreg), ctl its words (NULL: no cubin): promote every slot that finds a register below
 * `limit` (a register count as ptxas counts, highest R + 3) against the rewritten function's own
 * Problem. out holds the rewritten function and its assignment (promoted_webs may be 0). */
int rs_spills_promote(const rs_module *m, uint32_t k, const rs_spills *s, const uint64_t (*ctl)[2],
                      const rs_preg *base, unsigned limit, unsigned sm, rs_spill_result *out, rs_err *e);

/* ---- control bits and words of a rewritten instruction (cubin/spillenc.c) ---- */

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
