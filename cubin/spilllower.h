/* spilllower.h - lowering a listing whose spill accesses free mode rewrote as MOV/NOP
 * (cubin/spilllower.c; the rewrite: sass/spills.h). */
#ifndef RS_SPILLLOWER_H
#define RS_SPILLLOWER_H
#include "cubin/lower.h"

typedef struct {
  uint32_t rewritten, movs, nops; /* instructions written from scratch */
  uint32_t hazards;               /* scoreboard hazards with the new control bits (refused if any) */
  char first_hazard[400];
  rs_lower_stats low;             /* the rest, through rs_sass_lower */
} rs_spill_lower_stats;

/* How many instructions of `next` rewrite an STL/LDL of `orig` (same place) as MOV or NOP. */
int rs_spills_count_rewritten(const char *orig, const char *next, const char *name, uint32_t *count, rs_err *e);
/* rs_sass_lower for such a listing: every other instruction re-encoded as there, each rewritten
 * one written as MOV/NOP with its new control bits (refused by name where no trusted encoding is
 * known), then the hazard walk on the result (any hazard refuses). c is changed only on success
 * of the re-encoding; a refusal after that leaves c partly written: the caller discards it. */
int rs_spills_lower(rs_cubin *c, const char *orig, const char *next, const uint32_t *regcount, const char *name,
                    rs_spill_lower_stats *st, rs_err *e);

#endif
