/* mcode.h - machine-code reallocation (NVIDIA SASS): the one pipeline from a listing (and its
 * cubin) to a checked recolouring and a checked cubin. docs/lower.md, docs/ARCHITECTURE.md.
 *
 *   rs_mc_listing / rs_mc_cubin / rs_mc_instance   the input, loaded once (load.c)
 *   rs_mc_problem                                   the Problem as written back (problem.c)
 *   rs_mc_pinned / rs_mc_free                       colouring: the listing's own, Chaitin-Briggs (colour.c)
 *   rs_mc_write_check                               write-back, re-lift, same values, verifier (check.c)
 *   rs_mc_lower                                     hazards, lower into a copy, crosscheck (lower.c)
 *
 * Every step takes the same rs_mc: the listing is lifted once and the cubin read once. Errors are
 * returned (rs_err, or lines in the result structs), never printed: the commands print. */
#ifndef RS_MCODE_H
#define RS_MCODE_H
#include "analysis/problem.h"
#include "cubin/lower.h"
#include "ir/ir.h"
#include "storage/corpus.h"

/* ---- the input (load.c) ---- */

typedef struct {
  rs_module *m;       /* the listing, lifted (m->text: its text, the `orig` of lowering) */
  rs_cubin cub;       /* parsed once; cub.bytes NULL when there is none */
  bool scoreboards;   /* ptxas's control bits (cub's) join the Problem */
  char *name;         /* for messages: the cubin's path, else the listing's, or the instance id */
  char *cubin_path;   /* the cubin on disk (nvdisasm reads it); NULL for one held in memory */
  bool borrowed;      /* m is the caller's */
  bool no_spills;     /* --no-spills: free mode leaves spill slots in memory */
  bool codeless;      /* a cubin without code (no function): read, nothing to allocate; m is NULL */
  struct rs_sass_infer *inferred; /* forms the table lacks, read with rows from nvdisasm -plr (NULL: none) */
  rs_nvdisasm nd;     /* nvdisasm, found once (have_nd) */
  bool have_nd;
  char *orig_full;    /* the cubin's `nvdisasm -lrm narrow` output, where it was run (NULL: not run): the
                       * listing, the -plr columns and the crosscheck's original side, from one run */
} rs_mc;

/* A listing file (target as `--target`, NULL from the listing); with cubin_path, its cubin,
 * whose control bits join the Problem (`--scoreboards C.cubin`). */
int rs_mc_listing(rs_mc *mc, const char *path, const char *target, const char *cubin_path, rs_err *e);
/* A cubin, with its completed nvdisasm listing (nvd: nvdisasm's path or NULL) or the listing
 * file `listing`; scoreboards: its control bits join the Problem (not with --no-scoreboards).
 * A form the table lacks is read with the row its instances in the cubin's `nvdisasm -plr`
 * listing give (sass/infer.c; mc->inferred), and a function read with one is kept only if its
 * pinned run reproduces ptxas (else refused, named, with that reason). A cubin without code
 * (no listing given) is read too: mc->codeless, no nvdisasm run, m NULL. */
int rs_mc_cubin(rs_mc *mc, const char *cubin_path, const char *listing, const char *target, const char *nvd,
                bool scoreboards, rs_err *e);
/* A corpus row of form sass: its listing and, where the row keeps one, its cubin (scoreboards). */
int rs_mc_instance(rs_mc *mc, const rs_instance *in, rs_err *e);
/* The -plr listing of mc's functions (`nvdisasm -c -plr -lrm narrow`, completed; *out malloc'd):
 * the cubin's, from the run already made where there was one, or the listing itself when it
 * carries -plr columns (`corpus disasm --plr`); else -1 with why. */
int rs_mc_plr_text(rs_mc *mc, char **out, rs_err *e);
/* A module lifted elsewhere (borrowed, not freed) and its cubin's bytes (copied): emit's input. */
int rs_mc_borrow(rs_mc *mc, rs_module *m, const uint8_t *cubin, size_t cubin_len, const char *name, rs_err *e);
/* Replace mc's module by the completed nvdisasm listing of its whole cubin (a corpus row's listing
 * holds one kernel of an imported unit): the cubin written to a temporary file for nvdisasm. */
int rs_mc_disasm_whole(rs_mc *mc, const char *nvd, const char *target, rs_err *e);
void rs_mc_free_input(rs_mc *mc);
static inline bool rs_mc_has_cubin(const rs_mc *mc) { return mc->cub.bytes != NULL; }
/* ptxas's control bits of f (NULL when mc has none or leaves them out); -1 on bad input. */
int rs_mc_ctl(const rs_mc *mc, const rs_func *f, uint64_t (**ctl)[2], rs_err *e);

/* ---- the Problem (problem.c) ---- */

/* The Problem of f as written back: analysis/problem.c's, plus sass/joins.c's conflicts and, with
 * ctl, ptxas's scoreboards (cubin/scoreboard.c's pairs as conflicts). *nsb (may be NULL): how
 * many scoreboard conflicts were added. */
rs_problem *rs_mc_problem(const rs_func *f, const uint64_t (*ctl)[2], uint32_t *nsb, rs_err *e);
/* The scoreboard conflicts alone, added to p (tests/test_sass_scoreboard.c). */
uint32_t rs_sass_scoreboard_conflicts(const rs_func *f, const uint64_t (*ctl)[2], rs_problem *p);
/* The same with the function's cubin as bytes (copied, not kept): every form-sass consumer
 * (corpus rows, sweep, oracle, emit) verifies against it. Errors name `name`. */
rs_problem *rs_sass_problem(const rs_func *f, const uint8_t *cubin, size_t cubin_len, const char *name,
                            uint32_t *nsb, rs_err *e);

/* ---- messages: failures, each a line naming function, address and registers ---- */

enum { RS_MC_SHOWN = 20 }; /* failures shown per run; the rest counted */
typedef struct {
  char **v;
  uint32_t n, cap;
} rs_mc_msgs;
void rs_mc_msgs_free(rs_mc_msgs *l);
void rs_mc_say(rs_mc_msgs *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- colouring (colour.c) ---- */

typedef struct {
  const char *name;
  uint32_t nvars, ninsts, nconf;
  uint32_t fails;  /* UINT32_MAX: bad input (e) */
  rs_mc_msgs msgs; /* the failures, in order */
} rs_mc_pin;

/* Pinned run of function k: the listing's own registers must colour its Problem (with ptxas's
 * scoreboards and joins where the cubin is known, else the plain one), and the write-back must
 * reproduce the listing register for register. */
uint32_t rs_mc_pinned(const rs_mc *mc, uint32_t k, rs_mc_pin *r, rs_err *e);
void rs_mc_pin_free(rs_mc_pin *r);

typedef struct {
  const char *name;
  unsigned before, after, ours;  /* R as ptxas counts (highest + 3): ptxas's, the result, our colouring */
  unsigned occ_before, occ_after;/* warps/SM */
  uint32_t nvars, nsb, uses, differ, uncoloured;
  double secs;                   /* the colouring */
  bool vpass, floored, extern_call;
  bool kept;                     /* free mode could not colour it validly: ptxas's colouring kept */
  char kept_why[400];            /* the first check it failed */
  rs_mc_msgs msgs;               /* its failures (verifier, hidden descriptor) */
} rs_mc_fn;

typedef struct {
  uint32_t nfuncs;
  rs_mc_fn *fn;
  bool checked;     /* the write-back was re-lifted and compared */
  bool scoreboards; /* the Problem had ptxas's control bits */
  uint32_t fails;   /* UINT32_MAX: bad input (e) */
  rs_mc_msgs msgs;  /* failures of the write-back check, shown before the functions' lines */
  rs_preg **as;     /* per function, per vreg: the result */
  char *text;       /* the recoloured listing (written only when fails is 0) */
  rs_module *relift;/* its re-lift (NULL when it failed) */
  struct rs_mc_spills *spills; /* spill slots found and promoted (NULL: none looked for) */
} rs_mc_recolour;

/* Free run: one colouring per function (Chaitin-Briggs, never worse than ptxas's own lowered the
 * same way), then rs_mc_write_check. Returns r->fails. */
uint32_t rs_mc_free(const rs_mc *mc, rs_mc_recolour *r, rs_err *e);
void rs_mc_recolour_free(rs_mc_recolour *r);
/* R registers as ptxas counts them (highest + 3) under an assignment, and the occupancy then. */
unsigned rs_mc_r_count(const rs_func *f, const rs_preg *a);
unsigned rs_mc_occupancy(const rs_target *t, unsigned ptxas_regs);

/* ---- write-back and its independent check (check.c) ---- */

/* Same values in both functions (b: a re-lift of a's listing under other registers), operand by
 * operand: a bijection between their values with the same lanes, so every use reads the same
 * definitions. Returns the operands that differ (1 when the shapes differ: *shape set); *uses
 * (may be NULL) counts the uses compared; bad(ctx, inst, op) for each mismatch (may be NULL);
 * map (may be NULL, a->nvregs entries) receives each value of a's value in b, -1 where unused. */
typedef void (*rs_mc_bad_fn)(void *ctx, uint32_t inst, uint32_t op);
uint32_t rs_mc_same_values(const rs_func *a, const rs_func *b, int32_t *map, uint32_t *uses, bool *shape,
                           rs_mc_bad_fn bad, void *ctx);
/* The same, the first difference in why (as `lower` and `emit` say it). */
uint32_t rs_sass_same_values(const rs_func *a, const rs_func *b, int32_t *map, char *why, size_t n);
/* mc's listing written under as[k] (per function, per vreg) and re-lifted (named relift_name). */
int rs_mc_write(const rs_mc *mc, rs_preg *const *as, const char *relift_name, char **text, rs_module **relift,
                rs_err *e);
/* Write mc's listing under r->as, re-lift it and check it: same values (no join), the verifier's
 * checks against the original Problems ps[k], no moved value with an unprinted operand. Fills
 * r->text, r->relift, r->checked, per function uses/differ/vpass and the failure lines; adds the
 * failures to r->fails. */
void rs_mc_write_check(const rs_mc *mc, rs_problem *const *ps, rs_mc_recolour *r);
/* A value with an operand the listing does not print (a decoded descriptor) must keep its
 * register: the first that moved under a, or -1. */
int64_t rs_mc_hidden_moved(const rs_func *f, const rs_preg *a);
/* `lower ORIG NEW`: NEW (b) must be a recolouring of mc's listing: same values in every function
 * and its registers a valid colouring of the original Problem. 0 (*values: values checked), 1
 * (not a recolouring: e says why), 2 (bad input). */
int rs_mc_is_recolouring(const rs_mc *mc, const rs_module *b, uint32_t *values, rs_err *e);

/* ---- lowering (lower.c) ---- */

/* The register count each function of cubin c needs under the lifted listing n (per c->funcs,
 * malloc'd). Errors name `name`: a function of the cubin the listing lacks. */
int rs_mc_regcounts(const rs_cubin *c, const rs_module *n, const char *name, uint32_t **out, rs_err *e);
/* Scoreboard hazards of a listing against cubin c's control bits (cubin/hazard.c), per function. */
int rs_sass_hazards_listing(const rs_cubin *c, const char *listing, const char *name, uint32_t *count, char *first,
                            size_t n, rs_err *e);

typedef struct {
  uint32_t hazards;          /* scoreboard hazards of the new listing (a refusal, but for encoder_check) */
  char hazard[400];          /* the first */
  bool lowered;              /* written to out (st, ms) */
  rs_lower_stats st;
  double ms;
  bool identical;            /* must_be_identical held */
  bool crosschecked;         /* x holds nvdisasm's verdict */
  bool xcheck_error;         /* nvdisasm could not run (e says why) */
  rs_crosscheck_stats x;
  double xcheck_s;
  uint32_t *regcount;        /* per cubin function, as written (malloc'd) */
  uint32_t spill_rewritten, spill_movs, spill_nops; /* spill accesses written as MOV/NOP (spilllower.c) */
  char out[1024];            /* the file written (a temporary one for the encoder check) */
  rs_lower_kept *kept;       /* keep_refused: the functions that kept ptxas's code, with why (malloc'd) */
  uint32_t nkept;
} rs_mc_lowered;

typedef struct {
  const char *out;       /* OUT.cubin; NULL: encoder check (a temporary file, removed) */
  const char *nvd;       /* nvdisasm, NULL: found */
  bool crosscheck;
  bool must_be_identical;/* pinned: the cubin must come out byte-identical */
  bool hazards_refuse;   /* a hazard refuses the kernel (status 1) before lowering */
  bool keep_refused;     /* a function that races ptxas's scoreboards or has an instruction no field
                          * can write keeps ptxas's code and register count (named in r->kept); the
                          * rest is written and crosschecked; status 1 when any was kept */
  bool probe_only;       /* every changed field from nvdisasm's probe, none from the table
                          * (RS_LOWER_PROBE_ONLY=1: a measurement of the probe) */
} rs_mc_lower_opts;

/* Lower `next` (a recolouring of mc's listing; relift: its re-lift, or NULL to lift it here) into
 * a copy of mc's cubin, write it to o->out and have nvdisasm read it back. Returns 0, 1 (refused:
 * hazards, a form without a trusted field, not identical, nvdisasm disagrees: out removed) or 2
 * (bad input / a tool failure), the reason in e. */
int rs_mc_lower(const rs_mc *mc, const char *next, const rs_module *relift, const rs_mc_lower_opts *o,
                rs_mc_lowered *r, rs_err *e);
void rs_mc_lowered_free(rs_mc_lowered *r);
/* nvdisasm's crosscheck of `written` against mc's cubin (written to a temporary file when it is
 * held in memory): `lower crosscheck` and rs_mc_lower. */
int rs_mc_crosscheck(const rs_mc *mc, const char *nvd, const char *written, const char *intended,
                     const uint32_t *regcount, rs_crosscheck_stats *x, rs_err *e);

/* ---- spill slots as values (spills.c, spillalloc.c, spilllower.c; sass/spills.h) ---- */
#include "sass/spills.h"

/* ---- which slots get a register (mcode/spillalloc.c; the rules: sass/spills.h) ---- */

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
  uint8_t *noroom;         /* per web: promotable, but no in-place colouring has a register for it (spillroom.c) */
  uint32_t noroom_webs;
} rs_spill_result;
void rs_spill_result_free(rs_spill_result *r);

/* Function k of module m (its lifted original, spills s found in it), coloured by free mode as
 * base (per vreg), ctl its words (NULL: no cubin): promote every slot that finds a register below
 * `limit` (a register count as ptxas counts, highest R + 3) against the rewritten function's own
 * Problem. out holds the rewritten function and its assignment (promoted_webs may be 0). */
int rs_spills_promote(const rs_module *m, uint32_t k, const rs_spills *s, const uint64_t (*ctl)[2],
                      const rs_preg *base, unsigned limit, unsigned sm, rs_spill_result *out, rs_err *e);

/* Marks noroom[w] for each slot value w of g (rs_spills_apply's, every promotable web applied)
 * that no in-place colouring under `limit` can hold: at a point of its range the other values
 * fill every allocatable R unit below the count (mcode/spillroom.c). Returns how many. */
uint32_t rs_spills_noroom(const rs_func *g, const rs_spills *s, const int32_t *slot_vreg, unsigned limit, uint8_t *noroom,
                          rs_err *e);

/* Per function of a free run (rs_mc_recolour.spills): slots found, promoted, NOPs written. */
struct rs_mc_spills;
void rs_mc_spills_free(struct rs_mc_spills *s);
/* Function k of mc, coloured by free mode into r->as[k] (alt: another colouring within ptxas's
 * count, or NULL): promote its slots; where any is, the rewritten function takes the listing's
 * place in mc->m (the original is kept for the check), r->as[k] and *pk become its own. */
int rs_mc_spills_promote(const rs_mc *mc, uint32_t k, const rs_preg *alt, rs_problem **pk, rs_mc_recolour *r,
                         rs_err *e);
bool rs_mc_spills_rewritten(const rs_mc_recolour *r, uint32_t k);
/* The listing written under r->as with the rewritten accesses as MOV/NOP, re-lifted (r->text, r->relift). */
int rs_mc_spills_write(const rs_mc *mc, rs_mc_recolour *r, rs_err *e);
/* rs_spills_check of function k's written re-lift against its original. */
uint32_t rs_mc_spills_check(const rs_mc_recolour *r, uint32_t k, const rs_func *written, uint32_t *uses, char *why,
                            size_t n);
/* "; spills: S stores, L loads -> s, l (frame F -> f bytes), ..." for function k ("" when it has none). */
void rs_mc_spills_line(const rs_mc_recolour *r, uint32_t k, char *buf, size_t n);
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
