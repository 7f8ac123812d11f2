/* sem_int.h - what the files of the semantic graph builder share (ptx/sem*.c; not a public
 * header): an instruction's printed operands as read from its source line (pop), the builder's
 * state (B), and the functions one file offers the others. */
#ifndef RS_SEM_INT_H
#define RS_SEM_INT_H
#include "ptx/match.h"
#include <string.h>

enum { PK_REG, PK_IMM, PK_CB, PK_SREG, PK_MEM, PK_GROUP, PK_SYM, PK_CONST, PK_OTHER };
enum { PF_NEG = 1, PF_NOT = 2, PF_ABS = 4, PF_H1 = 8 };
#define CMP_MARK 0xc0117a5eull /* rs_snode.val of a compare node (not a leaf) */

typedef struct {
  uint8_t kind, flags;
  uint32_t off, len;    /* text (decorations stripped) */
  int32_t use;          /* PK_REG read, PK_MEM base register */
  int32_t use2;         /* PK_MEM second register */
  int32_t site;         /* PK_REG written: first site */
  uint8_t nsites, w;    /* sites written; units */
  uint32_t scale;       /* PK_MEM: .X4 ... */
  int64_t imm;          /* PK_MEM offset; PK_CB offset; PK_CONST value */
  uint32_t bank;
  uint32_t elt, nelt;   /* PK_GROUP: elements pops[elt .. elt+nelt] */
  uint32_t sym;         /* PK_MEM: a symbol's text offset (0: none) */
  uint32_t symlen;
} pop;

typedef struct {
  rs_sgraph *g;
  const rs_func *f;
  rs_err *e;
  const char *src;
  pop *pops;
  uint32_t npops, cappops;
  uint32_t *ipop, *inpop; /* per instruction: first top-level pop, count */
  const rs_p2s_row **row;
  uint32_t *lstart;       /* line start offsets */
  uint32_t nlines;
  uint32_t param_base;
  /* PTX parameters: name offset/len -> byte offset */
  uint32_t *pname_off, *pname_len, *pbyte;
  uint32_t nparams, capparams;
  uint32_t *sname_off, *sname_len, *sbyte; /* .shared variables -> byte offset */
  uint32_t nshared, capshared;
  uint32_t *gloc;         /* per instruction: guard location (UINT32_MAX: none), and negated */
  uint8_t *gneg;
  /* multi-instruction patterns (sem_pattern.c), per instruction: the instruction whose pattern
   * value this one holds a half of (UINT32_MAX: none), the operands standing for the high halves
   * of its two factors (instruction << 8 | operand; UINT32_MAX: zero), the pattern's node */
  uint32_t *pat_of, *pat_hi, *pat_node;
  uint32_t cur_inst;
  uint8_t mma;            /* the function holds an HMMA: 0 not looked, 1 no, 2 yes (sem_frag.c) */
  char type;
  bool changed;
} B;

static inline uint64_t hs(const char *s) { return rs_hash_bytes(s, strlen(s), 0x5e3a); }
static inline uint64_t hmix(uint64_t a, uint64_t b) { return rs_hash_bytes(&b, sizeof b, a * 0x9e3779b97f4a7c15ull + 1); }
static inline bool is_const(rs_sarg a, uint64_t v) { return a.kind == RS_SA_LEAF && a.num && a.val == v; }
static inline bool num(rs_sarg a) { return a.kind == RS_SA_LEAF && a.num; }

/* sem_operand.c: reading operands from the source text */
uint64_t rs_sem_cb_colour(B *b, uint32_t bank, uint32_t off);
void rs_sem_classify(B *b, const rs_inst *in, uint32_t off, uint32_t len, pop *p);
bool rs_sem_imm_bits(const char *s, size_t n, char type, uint64_t *out);
void rs_sem_lines(B *b);
void rs_sem_operand_span(B *b, const rs_inst *in, uint32_t *off, uint32_t *end);
int64_t rs_sem_param_off(const B *b, const char *s, size_t n);
void rs_sem_ptx_params(B *b);
int64_t rs_sem_shared_off(const B *b, const char *s, size_t n);
uint64_t rs_sem_sreg_colour(const char *s, size_t n);

/* sem_rules.c: nodes with the canonicalising rules */
rs_sarg rs_sem_cmp(B *b, const rs_inst *in, rs_sarg x, rs_sarg y);
rs_sarg rs_sem_leaf_const(uint64_t v);
rs_sarg rs_sem_leaf_other(uint64_t colour);
rs_sarg rs_sem_lop3(B *b, rs_sarg *in3, rs_sarg lut);
rs_sarg rs_sem_mk(B *b, const char *op, rs_sarg *a, unsigned na, unsigned width);
rs_sarg rs_sem_node(B *b, const char *op, uint64_t opc, const rs_sarg *a, unsigned na, unsigned width);

/* sem_pattern.c: multi-instruction patterns (mul.lo.s64 as four SASS instructions) */
void rs_sem_patterns(B *b);
void rs_sem_patterns_free(B *b);

/* sem_eval.c: the table templates evaluated into nodes */
void rs_sem_eval_inst(B *b, uint32_t ii, bool count_unknown);
void rs_sem_note_unknown(rs_sgraph *g, const char *op);
const pop *rs_sem_opnd(const B *b, uint32_t ii, unsigned k);

/* sem_eval.c, offered to sem_frag.c */
rs_sarg rs_sem_use_arg(B *b, int32_t u);
rs_sarg rs_sem_mem_addr(B *b, const pop *p, uint64_t extra, const rs_sarg *more);
rs_sarg rs_sem_lane_addr(B *b, const pop *p, uint64_t extra, bool *ok);
uint32_t rs_sem_as_node(B *b, rs_sarg v, unsigned width);
void rs_sem_assign(B *b, const pop *p, uint32_t n, unsigned part);
void rs_sem_opaque_dests(B *b, uint32_t ii, const char *why);

/* sem_frag.c: wmma fragments per lane (wmma.load.a/b, wmma.mma <-> LDSM, HMMA) */
bool rs_sem_frag(B *b, uint32_t ii, const char *what);
bool rs_sem_has_mma(B *b);
int rs_sem_lane_kind(B *b, rs_sarg x);

#endif
