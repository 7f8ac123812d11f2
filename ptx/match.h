/* match.h - PTX values to the SASS registers ptxas gave them (VeriLocc §3.2.1's label
 * reconstruction): both functions become one semantic data-flow graph each (ptx/sem.c, through
 * the PTX<->SASS correspondence table ptx/ptx2sass.c), nodes are coloured jointly until the
 * partition is stable (ptx/match.c), and a PTX value gets a label only when every piece of
 * evidence (its defs, its uses in matched instructions) names one register.
 *
 * Why colours and not block-by-block walking: ptxas if-converts short branches, hoists and
 * interleaves, so blocks rarely correspond one to one; values computed from the same inputs by
 * the same operations do, and the control flow reaches the colours through the phis of the defs
 * that reach each read (docs/ptxtruth.md). */
#ifndef RS_MATCH_H
#define RS_MATCH_H
#include "ir/ir.h"

/* ---- the correspondence table (ptx2sass.c) ----
 * One row per PTX or SASS instruction form: `pattern` is space-separated alternatives, each a
 * base opcode and the modifiers it must carry (`ld.global` matches ld.global.nc.v4.f32),
 * optionally `/N` (N printed operands). `sem` is what the instruction computes, in the small
 * language of sem.c: statements `$k=EXPR` (operand k written; `$k.e` element e of a vector or
 * `|` group) or `_=EXPR` (nothing written: stores), EXPR = `op(args)`, `$k` (operand k read),
 * `#n` (a constant), `@name(...)` (a rule of sem.c: compares, LOP3 tables, carry halves);
 * `-` = defines no value. `note` names the ptxas substitution the row accounts for. */
typedef struct {
  const char *pattern;
  char type; /* how immediates read: 'i' integer, 'f' f32, 'd' f64, 'h' packed f16x2 */
  const char *sem;
  const char *note;
} rs_p2s_row;

extern const rs_p2s_row rs_p2s_ptx[], rs_p2s_sass[];
extern const size_t rs_p2s_nptx, rs_p2s_nsass;
/* SASS rows for one half of a 64-bit value, chosen when the other half's instruction is found
 * (`@lo64(E)`/`@hi64(E)`: the destination is unit 0/1 of the 64-bit value E). */
extern const rs_p2s_row rs_p2s_sass_pair[];
extern const size_t rs_p2s_nsass_pair;
/* SASS rows of a multi-instruction pattern (mul.lo.s64 as four instructions), chosen when
 * ptx/sem_pattern.c finds every instruction of it. */
extern const rs_p2s_row rs_p2s_sass_mul64[];
extern const size_t rs_p2s_nsass_mul64;
/* SASS rows of the instructions ptxas wraps around MUFU for ex2.approx.f32 and rcp.rn.f32. */
extern const rs_p2s_row rs_p2s_sass_mufu[];
extern const size_t rs_p2s_nsass_mufu;
/* SASS row of a fill (LDL) of a stack slot one STL writes: a copy of what the STL stored. */
extern const rs_p2s_row rs_p2s_sass_spill[];
extern const size_t rs_p2s_nsass_spill;
/* The first row of t that matches opcode op (printed operands nops), or NULL. */
const rs_p2s_row *rs_p2s_find(const rs_p2s_row *t, size_t n, const char *op, uint32_t nops);
/* Byte offset of the kernel parameters in constant bank 0 (0x160 sm_75-sm_89, 0x210 sm_90). */
uint32_t rs_p2s_param_base(const rs_target *t);

/* ---- semantic graphs (sem.c) ---- */
enum { RS_SA_LEAF, RS_SA_USE, RS_SA_NODE };
typedef struct {
  uint8_t kind;
  bool num;       /* RS_SA_LEAF: a numeric constant (val) rather than a parameter or symbol */
  uint64_t leaf;  /* RS_SA_LEAF: its colour */
  uint64_t val;
  uint32_t idx;   /* RS_SA_USE: use index; RS_SA_NODE: node index */
} rs_sarg;

typedef struct {
  uint64_t op;     /* hash of the operation (name + modifiers that matter) */
  rs_sarg a[4];
  uint8_t na;
  uint8_t width;   /* 32-bit units produced */
  bool comm;       /* the first two arguments commute */
  bool copy;       /* transparent: the value of a[0] */
  bool internal;   /* part of a fused SASS instruction: no register holds it */
  bool phi;        /* a select of two registers (selp, FSEL): its uses see either value, as
                    * they see either def of a register ptxas writes under a predicate */
  bool acomm;      /* every argument commutes (an address's terms, sem_eval.c) */
  bool pair;       /* a 64-bit value from two 32-bit arguments (low, high) that need not be one
                    * register pair: transparent, coloured as a read of the pair would be */
  bool tuple;      /* units gathered into one value: a[k] is unit k (a 64-bit PTX register loaded
                    * as two 32-bit units, as ptxas may merge it into a wider load) */
  uint32_t cbo;    /* a constant bank 0 word loaded into a register (ULDC.64 / LDC.64 unit): its
                    * byte offset + 1 (0: none), so two words read together are the 64-bit word */
  uint32_t unext;  /* a load of one 32-bit unit: the node of the next unit of the same load
                    * (UINT32_MAX: none), so a 64-bit read of the pair is seen whole */
  uint8_t leaf;    /* 0 computed; 1 a numeric constant (val); 2 a parameter, special register or
                    * symbol (op is then the leaf's colour) */
  uint64_t val;
  uint32_t inst;
} rs_snode;

typedef struct {
  uint32_t node;
  uint8_t part, len;  /* units [part, part+len) of the node's value; part 0xff: a carry-out */
  uint32_t loc;       /* PTX: vreg; SASS: physical unit */
  uint32_t inst;
} rs_ssite;

typedef struct {
  uint32_t inst;
  uint32_t loc;       /* PTX: vreg; SASS: first physical unit */
  uint8_t w;          /* units read (SASS, 1-4); 1 on PTX (a location is a whole value) */
  uint32_t raw[5];    /* unit k's reaching sites: srcs[raw[k] .. raw[k+1]] */
  uint32_t res[5];    /* the same with copies looked through: ress[res[k] .. res[k+1]] */
} rs_suse;

typedef struct {
  const rs_func *f;
  bool sass;
  rs_snode *nodes;
  uint32_t nnodes, capnodes;
  rs_ssite *sites;
  uint32_t nsites, capsites;
  rs_suse *uses;
  uint32_t nuses, capuses;
  uint32_t *srcs, *ress;
  uint32_t nsrcs, capsrcs, nress, capress;
  uint32_t *ref_node, *ref_arg; /* per node argument that is a use: node, position (nrefs) */
  uint32_t *ref_use;
  uint32_t nrefs, caprefs;
  uint32_t nlocs;
  /* opcodes the table has no row for, with counts (why values stay unmatched) */
  char **unknown;
  uint32_t *nunknown_of;
  uint32_t nunknown, capunknown;
} rs_sgraph;

/* Build the graph of a PTX function (vregs) or a SASS function parsed without lifting
 * (physical registers). The parsers have already refused bad input, so this does not fail: an
 * opcode the table lacks, or an operand it cannot read, gives values colours nothing else has
 * (never a guessed correspondence), and the opcodes without a row are listed (unknown). */
int rs_sgraph_build(rs_sgraph *g, const rs_func *f, rs_err *e);
void rs_sgraph_free(rs_sgraph *g);
/* reach.c: the sites reaching every use (raw), given each instruction's guard location
 * (UINT32_MAX: none) and negation; then those sources with copies and selects looked through
 * (res), redone whenever the nodes change. */
void rs_sgraph_reaching(rs_sgraph *g, const uint32_t *gloc, const uint8_t *gneg);
void rs_sgraph_resolve(rs_sgraph *g);

/* ---- matching (match.c) ---- */
enum rs_label_status {
  RS_LBL_LABELLED,      /* one register */
  RS_LBL_FOLDED,        /* a constant, parameter or special register ptxas reads in place */
  RS_LBL_DEAD,          /* defined, never read (ptxas deletes it) */
  RS_LBL_AWAY,          /* optimised away: no SASS value computes it */
  RS_LBL_FUSED,         /* computed inside a fused SASS instruction (IMAD.WIDE, LEA, .X4) */
  RS_LBL_SPLIT,         /* the evidence names several registers (copies, moves) */
  RS_LBL_REMAT,         /* ptxas computes it several times into different registers */
  RS_LBL_AMBIGUOUS,     /* several PTX and SASS values alike: which is which is unknown */
  RS_LBL_UNIFORM,       /* in a uniform register (UR/UP), which no PTX class offers */
  RS_LBL_NSTATUS
};
extern const char *const rs_label_status_name[RS_LBL_NSTATUS];

typedef struct {
  uint8_t status;
  rs_preg reg;       /* RS_LBL_LABELLED: the register (lanes = the value's full lanes) */
  uint16_t evidence; /* def and use sites that named it */
} rs_label;

/* One piece of evidence that named a value's register: the PTX instruction that defines or reads
 * the value and the SASS instruction matched with it (for the causes of broken maps). */
typedef struct {
  uint32_t vreg, ptx_inst, sass_inst;
  bool def;
} rs_lsite;

typedef struct {
  rs_label *lbl;     /* per PTX vreg */
  rs_lsite *ev;      /* the evidence, in no particular order */
  uint32_t nev, capev;
  uint32_t nvregs;
  uint32_t count[RS_LBL_NSTATUS]; /* over the PTX function's used vregs */
  uint32_t rounds;   /* colouring rounds to a stable partition */
  uint32_t ptx_nodes, sass_nodes, matched_nodes;
  char unknown[1024]; /* "OPCODE xN, ..." without a table row (both sides), empty if none */
} rs_match;

/* Match PTX function ptx against SASS function sass (parsed with no_lift). */
int rs_match_run(const rs_func *ptx, const rs_func *sass, rs_match *m, rs_err *e);
void rs_match_free(rs_match *m);

#endif
