/* sass.h - NVIDIA SASS (nvdisasm listings) into the one IR, lifted to register webs.
 *
 * Pipeline: sass_parse.c reads a listing (nvdisasm 11.8 style, or CUDA 12+ with desc[URx]) into
 * rs_func's with physical register operands, using the opcode table (optable.c) for what each
 * operand reads and writes and how wide it is; lift.c then turns every register's def-use webs
 * into the virtual registers to allocate, recording the listing's register of each web as its
 * exact truth (rs_func.truth). RZ/URZ/PT/UPT, SR_*, constants and the stack pointer R1 stay
 * physical. write.c prints a listing back under any assignment (the pinned oracle compares it
 * with the input, register for register).
 *
 * One rs_func per `.text.NAME` section: the kernel plus the `$__internal_*` subroutines ptxas
 * put in its section (CALL.REL.NOINC to them, RET back to every call's next instruction).
 *
 * The hidden descriptor (contract with cubin/disasm.c). Every `.E` global or generic access on
 * sm_80+ (LDG, STG, LD, ST, RED, ATOM, ATOMG, REDG) reads a 64-bit descriptor UR pair that
 * nvdisasm 11.8 does not print. The parser takes it, in this order, from
 *   1. the listing itself, CUDA 12+ spelling: `LDG.E R4, desc[UR8][R2.64] ;`
 *   2. a decoded table passed in rs_sass_opts.desc: (function, address, UR index) rows, e.g.
 *      from the encoding (word 0 bits 32-37 for LDG/LD, word 1 bits 0-5 for STG/RED),
 * and otherwise refuses the instruction with file:line (never a guess). A table row for an
 * instruction that needs no descriptor is an error too, so a decoder bug cannot hide. */
#ifndef RS_SASS_H
#define RS_SASS_H
#include "front/front.h"
#include "ir/ir.h"

/* One decoded descriptor: instruction `addr` of function `func` reads UR[ur]:UR[ur+1]. */
typedef struct {
  const char *func;
  uint32_t addr;
  uint8_t ur;
} rs_sass_desc;

/* Coverage (`regsweep corpus forms`): every opcode form an instruction of a listing has, as
 * printed (mnemonic with all its modifiers, operand count), with the table row it matched or
 * why none did. */
typedef struct {
  char *form;          /* "LDG.E.U16.CONSTANT" */
  uint32_t nops;
  uint64_t count;      /* instructions */
  const char *row;     /* the optable row's form, NULL when unknown */
  char *why;           /* the lookup's error when unknown */
  uint32_t funcs;      /* functions it stands in (each refused when unknown) */
  uint32_t last_func;  /* the scan's serial of the last one counted */
} rs_sass_form_seen;
typedef struct {
  rs_sass_form_seen *v;
  uint32_t n, cap;
  uint32_t funcs;         /* functions scanned (the serial of the last one) */
  uint32_t funcs_unknown; /* of them, with at least one unknown form: refused when read */
  uint32_t marked;        /* serial of the last function counted in funcs_unknown */
} rs_sass_seen;
void rs_sass_seen_free(rs_sass_seen *fs);

typedef struct {
  const rs_sass_desc *desc;
  size_t ndesc;
  bool no_lift; /* keep physical operands (tests of the parser alone) */
  /* when set, every instruction's form is counted here and an unknown one is left out instead
   * of ending the parse (no lift follows): the coverage scan, never an allocation */
  rs_sass_seen *forms;
  /* an instruction the table cannot read (unknown form, operands of no variant) or a function
   * the lift refuses ends the parse (tests of the parser's messages); by default it refuses its
   * function alone (rs_module.refused) and the rest of the listing goes on */
  bool whole;
  /* rows read off nvdisasm -plr (infer.c) for forms the table lacks: an instruction whose form
   * the table does not know is read with the inferred row of its form when there is one (every
   * instance agreed); the parser records in it which functions used each row (marked inferred
   * by every command that prints them). NULL: unknown forms refuse their function. */
  struct rs_sass_infer *inferred;
  /* test facility (RS_TEST_MASK_ROWS): table rows, by form ("HSET2,B2R.RESULT"), taken as
   * unknown, so that an inferred row can be compared with a measured one on real output */
  const char *mask;
} rs_sass_opts;

/* Parse with options (rs_sass_parse = this with no options). */
int rs_sass_parse_opts(rs_module *m, const rs_sass_opts *o, rs_err *e);
/* Load a file as SASS whatever its name. */
rs_module *rs_sass_load(const char *path, const char *target_override, const rs_sass_opts *o, rs_err *e);
/* The same for text in memory (taken: malloc'd, NUL-terminated), named `path` in messages. */
rs_module *rs_sass_from_text(const char *path, char *text, size_t len, const char *target_override,
                             const rs_sass_opts *o, rs_err *e);

/* ---- the opcode table (optable.c) ---- */

enum {
  RS_SOP_BRANCH = 1 << 0, /* BRA: its label is a successor; no fall-through unless predicated */
  RS_SOP_EXIT = 1 << 1,   /* EXIT */
  RS_SOP_RET = 1 << 2,    /* RET: back to the instruction after every subroutine call */
  RS_SOP_CALL = 1 << 3,   /* CALL: to a subroutine, or to a local label (taken or falls through) */
  RS_SOP_DESC = 1 << 4,   /* .E global/generic access: hidden descriptor UR pair on sm_80+ */
  RS_SOP_SP = 1 << 5,     /* reads the stack pointer R1 implicitly (EXIT, RET, CALL) */
  RS_SOP_COPY = 1 << 6,   /* a register copy when its source is a register (copy hint) */
  RS_SOP_INDIRECT = 1 << 7, /* BRX/JMX: any labelled block may follow */
  RS_SOP_INFERRED = 1 << 8, /* a row inferred from nvdisasm -plr (infer.c), not the table's */
};

/* One opcode form: the mnemonic with the modifiers that decide operand widths, the other
 * modifiers it may carry, and its operands as roles, one variant per operand count.
 * Roles: dN written (N 32-bit registers), sN read, xN read and written, m memory address,
 * M memory address whose base is 64-bit even without `.64` (sm_75 `.E`), mN a surface address
 * [Ra] whose Ra is a tuple of N coordinates, l label, p the predicate file PR read (P2R) and q PR
 * written (R2P), the predicates named by the mask, P a predicate written (TEX's residency).
 * Texture rows (texshape.c gives the widths): t and u the two result tuples, a coordinates, b
 * extras, g the geometry operand (2D, ARRAY_CUBE ...), c the component mask, k a keyword
 * operand (TXQ's TEX_HEADER_DIMENSION). */
typedef struct {
  const char *form;     /* "IMAD.WIDE" */
  const char *optional; /* "U32 X" */
  const char *ops;      /* "d2 s1 s1 s2" or several variants separated by '|' */
  uint32_t flags;       /* RS_SOP_* */
} rs_sass_op;

extern const rs_sass_op rs_sass_optable[];
extern const size_t rs_sass_noptable;

/* Find the row for a mnemonic ("LDG.E.U16.CONSTANT.SYS") with nops operands; on failure NULL
 * with why (unknown opcode, unknown form, no variant with that many operands) in e. */
const rs_sass_op *rs_sass_lookup(const char *mn, size_t n, uint32_t nops, const char **variant, char *why,
                                 size_t whylen);

/* ---- forms inferred from nvdisasm -plr (infer.c) ---- */

/* One unknown form (mnemonic, operand count) with the roles its instances' -plr rows give
 * ("d1 s1 s1 s1", sass.h's role letters), or why none: instances disagree, or a register -plr
 * marks neither read nor written. */
typedef struct {
  char *form;
  uint32_t nops;
  char *ops;
  uint32_t instances;
  char *why; /* NULL: inferred */
  rs_sass_op *row;  /* the row the parser reads it with (flags RS_SOP_INFERRED), made on first use */
  char **funcs;     /* functions read with it (the parser records them) */
  uint32_t nfuncs, capfuncs;
  /* infer.c's state: the role assignments (nops codes each) that fit every instance so far;
   * dead: an instance no assignment fits, or that cannot be read (why) */
  uint8_t *cand;
  uint32_t ncand;
  bool dead;
  /* operands (bit o) no instance names a register of (RZ, PT, an immediate, a constant): read
   * as s1, their role unknown and irrelevant (nothing there to allocate) */
  uint32_t zero_only;
} rs_sass_inferred;
typedef struct rs_sass_infer {
  rs_sass_inferred *v;
  uint32_t n, cap;
  const char *mask; /* rs_sass_opts.mask: table rows taken as unknown (test facility) */
} rs_sass_infer;
/* Scan a completed `nvdisasm -c -plr -lrm narrow` listing; adds every unknown form's instances
 * (all: every form's, to compare the table's rows with -plr). A form is not inferred (why set)
 * when its instances disagree, when -plr marks a register of it that no operand names or one it
 * names neither read nor written, when an operand is of a file -plr does not show (B), or when
 * it is a control instruction (its control-flow role is the table's, never -plr's). */
int rs_sass_infer_listing(const char *text, bool all, rs_sass_infer *x);
void rs_sass_infer_free(rs_sass_infer *x);
/* The inferred row of (form, nops), NULL when none (or not inferred). */
rs_sass_inferred *rs_sass_infer_find(rs_sass_infer *x, const char *form, size_t n, uint32_t nops);
/* Is the table row `form` masked by the test facility (mask: comma-separated forms)? */
bool rs_sass_masked(const char *mask, const char *form);
/* The inferred rows function `func` was read with, as "FORM/N FORM/N" into buf ("" when none);
 * returns how many. */
uint32_t rs_sass_inferred_in(const rs_sass_infer *x, const char *func, char *buf, size_t cap);
/* A corpus row's inferred rows, kept in its params as ` inferred_forms="FORM/N=ROLES;..."` (the
 * rows function func was read with, as `corpus forms --inferred` prints them): written into buf
 * (cap bytes; "" when none); returns how many, or -1 when they do not fit. */
#define RS_SASS_INFERRED_KEY "inferred_forms"
int rs_sass_inferred_param(const rs_sass_infer *x, const char *func, char *buf, size_t cap);
/* The rows of params' inferred_forms added to x (marked inferred, read by the parser as rows
 * infer.c made); returns how many (0: none), -1 when malformed (why). */
int rs_sass_infer_from_params(const char *params, rs_sass_infer *x, char *why, size_t whylen);
/* A function against the -plr listing it came from (text: `nvdisasm -c -plr -lrm narrow`,
 * completed): its liveness (live.c, RS_PLR_ALL) equal to the -plr columns on every row (the
 * check of a function read with inferred rows; `inspect --live --check-plr`). 0 equal, 1 differing
 * (why: the first row and register), -1 no rows (why); *nrows (if not NULL): -plr rows compared. */
struct rs_func;
int rs_sass_plr_check(const struct rs_func *f, const char *text, uint32_t *nrows, char *why, size_t whylen);
/* RS_TEST_MASK_ROWS from the environment (the test facility), NULL when unset. */
const char *rs_sass_test_mask(void);

/* ---- texture instructions (texshape.c) ---- */

/* Tuple widths of a texture instruction's registers (0: not there; a result of width 0 is
 * printed RZ): first and second printed results, coordinates Ra, extras Rb. */
typedef struct {
  uint8_t dst_hi, dst_lo, coords, extra;
} rs_sass_texshape;
/* From the mnemonic ("TEX.SCR.LL"), the geometry operand ("ARRAY_2D"; none for TXQ) and the
 * component mask (0xf when none is printed); -1 with why for anything never measured. */
int rs_sass_tex_shape(const char *mn, size_t mnl, const char *geom, size_t geoml, uint32_t mask, rs_sass_texshape *out,
                      char *why, size_t whylen);
/* Is s[0..n) a geometry operand (1D 2D 3D CUBE ARRAY_1D ARRAY_2D ARRAY_CUBE)? */
bool rs_sass_is_geometry(const char *s, size_t n);

/* ---- lifting (lift.c) ---- */

/* Replace physical operands of allocatable registers by register webs (virtual registers with
 * truth). Called by the parser; exposed for tests. */
int rs_sass_lift(rs_func *f, rs_err *e);
/* Is unit u one the lift turns into values (R0..R254 but R1, P0..P6, UR0..UR62, UP0..UP6, B)? */
bool rs_sass_allocatable(const rs_target *t, uint32_t u);

/* ---- free recolouring (joins.c) ---- */

struct rs_problem;
/* Add to the function's Problem the conflicts that keep a recoloured listing's values apart on
 * its re-lift (a def may reach a read of another value, a predicated def, the entry value of a
 * register): any valid colouring then re-lifts to the same values. Returns how many it added. */
uint32_t rs_sass_join_conflicts(const rs_func *f, struct rs_problem *p);
/* Pairs of operands that must not share a register (a of an instruction in flight, b of a later
 * one not waiting for it; inst is b's) as conflicts of p: a value, or an exclusion of a register
 * the lift left physical. pairs(src, pair, ctx) calls pair(ctx, ...) once per pair: with ptxas's
 * control bits kept, mcode/problem.c hands in cubin/scoreboard.c's (cubin/hazard.c's rule, so a
 * lowered recolouring has no scoreboard hazard). Returns how many conflicts it added. */
typedef void (*rs_sass_pair_fn)(void *ctx, const rs_operand *a, const rs_operand *b, uint32_t inst);
typedef void (*rs_sass_pairs_fn)(void *src, rs_sass_pair_fn pair, void *ctx);
uint32_t rs_sass_pair_conflicts(const rs_func *f, struct rs_problem *p, rs_sass_pairs_fn pairs, void *src);

/* ---- liveness as nvdisasm -plr shows it (live.c) ---- */

/* nvdisasm 11.8's quirks rs_sass_live_rows can take (live.c says what each is). */
enum {
  RS_PLR_CALLS = 1, /* CALL.REL.NOINC as an ABI call (callee-saved set, RET returning nowhere) */
  RS_PLR_R2P = 2,   /* R2P reads and writes, P2R reads, all of P0-P6 whatever the mask */
  RS_PLR_CHAIN = 4, /* a call followed by another before any label or branch: its whole clobber set shown */
  RS_PLR_UPGUARD = 8, /* a def under a uniform predicate (@UPn) kills as if unconditional */
  RS_PLR_COLLECTIVE = 16, /* WARPSYNC.COLLECTIVE falls through only (no edge to its label) */
  RS_PLR_ALL = 31,  /* as -plr shows it */
};
/* Per instruction, the physical registers live at it as -plr marks them: those live before it
 * plus those it writes. rows[i * words ...] is a bitset over the target's units (values mapped
 * through their truth). quirks: RS_PLR_* taken (RS_PLR_ALL: equal to -plr on every fixture);
 * without RS_PLR_CALLS, the real CFG. -plr's view, for `inspect --live` and the -plr test;
 * interference uses analysis/liveness.c. Returns 0, or -1 with e set. */
int rs_sass_live_rows(const rs_func *f, rs_word **rows, uint32_t *words, unsigned quirks, rs_err *e);

/* ---- writing back (write.c) ---- */

/* A mismatch between a written listing and the input. */
typedef struct {
  uint32_t inst;        /* instruction index */
  char expected[24];    /* register in the input */
  char actual[24];      /* register written */
} rs_sass_diff;

/* The function's listing text (its source lines) with every register operand of a value
 * printed from assign[vreg] (base register of the value); writes the text (malloc'd) and
 * collects operands whose register differs from the input (at most maxdiff, total returned). */
uint32_t rs_sass_write(const rs_func *f, const rs_preg *assign, char **text, rs_sass_diff *diff, uint32_t maxdiff);
/* The whole listing (directives, labels and all) with each function k's values printed from
 * assign[k][vreg]; malloc'd. What regalloc --free writes. */
char *rs_sass_write_module(const rs_module *m, rs_preg *const *assign);

#endif
