/* ptxtruth.h - the NVIDIA ptx form's ground truth: ptxas's SASS registers carried back to the
 * PTX values by ptx/match.c, checked against the PTX Problem (corpus/assemble.c stores it). */
#ifndef RS_PTXTRUTH_H
#define RS_PTXTRUTH_H
#include "analysis/problem.h"
#include "ptx/match.h"

/* Why a PTX-level conflict of a complete map is not one in ptxas's code: at the PTX point where
 * value d is defined while value o is live (o read later in PTX order), ptxas gave both one
 * register because ... */
enum rs_break_cause {
  RS_BRK_SAMEVAL,    /* d is a copy of o (`mov.b32 %r19, %f26`), each defined once: one value under
                      * two names, which ptxas keeps in one register; the PTX Problem exempts a
                      * copy's destination from its source only at the copy, not while both live */
  RS_BRK_COPY_MULTI, /* d is a copy of o, but one of them is defined more than once (a loop's
                      * value): equal at the copy, not shown equal wherever both are live */
  RS_BRK_READ_ABOVE, /* every later PTX read of o is matched with a SASS read above d's SASS def:
                      * ptxas scheduled o's reads before d's def */
  RS_BRK_DEF_BELOW,  /* every SASS def of o lies below d's last SASS read: ptxas sank o's def (a
                      * constant, a load) past d's live range */
  RS_BRK_NOTREAD,    /* a later PTX read of o has no SASS read of o's register: ptxas reads that
                      * operand elsewhere (rematerialised, folded into a fused instruction, a copy) */
  RS_BRK_NODEF,      /* d's SASS def was not located (labelled from its reads only) */
  RS_BRK_OTHER,      /* none of these: the live ranges overlap in SASS too, or no def at the point */
  RS_BRK_N
};
extern const char *const rs_break_cause_name[RS_BRK_N];

typedef struct {
  uint32_t conf;        /* index into the Problem's conflicts */
  uint32_t d, o;        /* the Problem values: defined at the point, live across it */
  uint8_t cause;
} rs_break;

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
  rs_break *brk;        /* the complete map's broken conflicts with their causes */
  uint32_t nbrk, capbrk;
  uint32_t ncause[RS_BRK_N];
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
