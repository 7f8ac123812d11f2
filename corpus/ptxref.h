/* ptxref.h - a reference allocation for a ptx instance (issue 39): ptxas's registers where the
 * PTX Problem allows them, our first-fit colouring elsewhere, checked by both verifiers. It is a
 * label of kind `reference`, never a truth (docs/ptxtruth.md). */
#ifndef RS_PTXREF_H
#define RS_PTXREF_H
#include "corpus/ptxtruth.h"

typedef struct {
  char *map;          /* JSON map (original names -> registers), verified; NULL on failure */
  uint32_t nvalues;   /* values of the Problem */
  uint32_t labelled;  /* of them labelled by matching (ptxas's register known) */
  uint32_t kept;      /* labelled values that keep ptxas's register in the reference */
  uint32_t dropped;   /* labelled values dropped to resolve PTX-level conflicts */
  uint32_t biased;    /* dropped or unlabelled values still given ptxas's register (free again) */
  uint32_t regs;      /* R registers the reference uses (highest + 1) */
  uint32_t fallback;  /* 1: first-fit ran out of registers; the map is plain chaitin colouring */
  double seconds;     /* reference time (after the match) including both verifiers */
  char reason[128];   /* why there is no map */
} rs_ptxref;

/* Build the reference of t's match (t from rs_ptxtruth_build on the same ptx function / Problem).
 * The map passes both verifiers (native and Z3) or is not returned: returns 0 with map NULL and
 * the reason; -1 with e only for an infrastructure error (Z3 could not start). */
int rs_ptxref_build(const rs_func *ptx, const rs_problem *p, const rs_ptxtruth *t, rs_ptxref *r, rs_err *e);
void rs_ptxref_free(rs_ptxref *r);

#endif

/* Add the references to every ptx instance of a corpus (rewritten in place through PATH.tmp, both
 * texts are in the file: no recompiling). A ptx row with a truth keeps it and gets no reference;
 * a row whose reference is refused by a verifier is counted and stored without one. */
typedef struct {
  uint32_t ptx, nosass, truths, refs, refused;
  uint64_t values, labelled, kept, regs, ptxas_regs;
  double seconds;
} rs_ptxref_stats;
int rs_ptxref_store(const char *path, rs_ptxref_stats *st, rs_err *e);
