/* ptxtruth.h - the NVIDIA ptx form's ground truth: ptxas's SASS registers carried back to the
 * PTX values by ptx/match.c, checked against the PTX Problem (corpus/assemble.c stores it). */
#ifndef RS_PTXTRUTH_H
#define RS_PTXTRUTH_H
#include "analysis/problem.h"
#include "ptx/match.h"

typedef struct {
  rs_match m;
  uint32_t nvalues;     /* values of the Problem */
  uint32_t labelled;    /* of them with a label from ptxas */
  uint32_t completed;   /* folded, dead or fused values given the lowest free register (no SASS one) */
  uint32_t missing[RS_LBL_NSTATUS]; /* values left without a register, by reason */
  uint32_t conflicts, nonmember;    /* of the complete map, against the PTX Problem */
  char *truth;          /* the complete map (JSON, as corpus/truth.c writes it), or NULL */
  char *map;            /* the complete map even when it breaks constraints (NULL if incomplete) */
  char reason[128];     /* why there is no truth (empty when there is one) */
  double match_s;       /* time of the matching itself */
} rs_ptxtruth;

/* Match the PTX function (Problem p) with the SASS listing of the same ptxas compile (parsed
 * without lifting) and build the truth. A truth exists when every value is labelled, or
 * folded/dead/fused (completed), and the map breaks no constraint of the PTX Problem. */
int rs_ptxtruth_build(const rs_func *ptx, const rs_problem *p, const rs_func *sass, rs_ptxtruth *t, rs_err *e);
void rs_ptxtruth_free(rs_ptxtruth *t);
/* Load FILE.sass without lifting (physical registers, as ptx/match.c reads them). */
rs_module *rs_ptxtruth_load_sass(const char *path, const char *target, rs_err *e);
/* The same from text in memory (a corpus row's raw text); takes ownership of text. */
rs_module *rs_ptxtruth_parse_sass(const char *name, char *text, size_t len, const char *target, rs_err *e);
/* Match with the function of the same name in a SASS module; a module without it is a reason
 * (t->reason), not an error. */
int rs_ptxtruth_with(const rs_func *ptx, const rs_problem *p, const rs_module *sass, rs_ptxtruth *t, rs_err *e);

/* The corpus build's form ptx (corpus/assemble.c): the truth of the variant directory's
 * TARGET.ptx against its TARGET.sass listing, or NULL with the reason; *broken is 1 when a
 * complete map broke the PTX Problem's constraints (counted as a truth violation). */
char *rs_ptxtruth_for_dir(const char *dir, const char *target, const rs_func *ptx, const rs_problem *p, char *reason,
                          size_t n, int *broken);

#endif
