/* ir.h - the one machine IR every front end produces (AMDGPU MIR, PTX, NVIDIA SASS).
 *
 * A module holds functions; a function holds virtual registers, blocks, instructions and
 * operands in flat arrays (indices, not pointers, so the parsers can grow them freely).
 * Register operands carry lane masks (see target.h), so liveness is lane-accurate for AMDGPU
 * sub-registers and needs nothing vendor-specific. Only the parsers see raw text. */
#ifndef RS_IR_H
#define RS_IR_H
#include "target/target.h"
#include "util/util.h"

enum rs_opkind {
  RS_OP_VREG,  /* virtual register: reg = vreg index, lanes = lanes accessed */
  RS_OP_PREG,  /* physical register: reg = first unit, lanes relative to it */
  RS_OP_IMM,   /* integer or floating immediate */
  RS_OP_BLOCK, /* block reference: reg = block index */
  RS_OP_OTHER, /* symbols, stack slots, regmasks, predicates ...: kept as text only */
};

enum rs_opflag {
  RS_F_DEF = 1 << 0,
  RS_F_IMPLICIT = 1 << 1,
  RS_F_UNDEF = 1 << 2,   /* use: reads nothing; subregister def: other lanes become undefined */
  RS_F_DEAD = 1 << 3,
  RS_F_KILL = 1 << 4,
  RS_F_EARLY = 1 << 5,   /* early-clobber def: overlaps the instruction's uses */
  RS_F_TIED = 1 << 6,
  RS_F_RENAMABLE = 1 << 7,
  RS_F_COND = 1 << 8,    /* def under a predicate (PTX @%p): does not kill the old value */
  RS_F_SUBREG = 1 << 9,  /* operand names a sub-register (%5.sub1) */
  RS_F_CARRY = 1 << 10,  /* 64-bit source whose high half feeds only the def's high half
                          * (carry-up arithmetic; mir/carry.c, analysis/liveness.c) */
  RS_F_EXEC = 1 << 11,   /* names the active-lane mask ($exec, $exec_lo; mir/exec.c) */
};

typedef struct {
  uint8_t kind;
  uint16_t flags;
  uint16_t subreg;   /* MIR: interned subregister index name + 1, 0 = none */
  uint32_t reg;
  rs_lanes lanes;
  rs_lanes unread;   /* lanes of `lanes` the instruction does not read (VOP3P op_sel; mir/vop3p.c) */
  uint32_t text_off; /* operand text in the function's source */
  uint32_t text_len;
} rs_operand;

enum rs_instflag {
  RS_I_COPY = 1 << 0,       /* COPY / mov: a copy hint */
  RS_I_BRANCH = 1 << 1,
  RS_I_BARRIER = 1 << 2,    /* no fall-through after it (unconditional branch, return, endpgm) */
  RS_I_PREDICATED = 1 << 3, /* PTX @%p / @!%p */
  RS_I_REGMASK = 1 << 4,    /* clobbers through a register mask */
  RS_I_BUNDLED = 1 << 5,
  /* The active-lane (SIMT) role of an instruction, from the front end's table (mir/exec.c); the
   * analysis (analysis/simt.c) reads only these. */
  RS_I_EXEC_NARROW = 1 << 6,  /* disables lanes only: a divergent branch's first side, a loop exit */
  RS_I_EXEC_FLIP = 1 << 7,    /* the second side of an if/else: the lanes the first side did not run */
  RS_I_EXEC_RESTORE = 1 << 8, /* re-enables lanes saved at an enclosing branch (a join, the flip's save) */
  RS_I_EXEC_OTHER = 1 << 9,   /* changes the active lanes any other way (whole-wave mode, ...) */
  RS_I_EXEC_SKIP = 1 << 10,   /* branches when no lane is active */
  RS_I_CROSSLANE = 1 << 11,   /* reads registers of other lanes (readlane, DPP, permutes) */
  RS_I_LANEWRITE = 1 << 12,   /* writes lanes whatever EXEC says (V_WRITELANE, DS_PERMUTE) */
  /* bits 13-17: what a lane-mask instruction does to each lane's bit (enum rs_maskop,
   * mir/exec.c; analysis/lanemask.c) */
  RS_I_MASKOP_SHIFT = 13,
  RS_I_MASKOP = 0x1F << 13,
  /* a branch taken when its one register operand (a lane mask) has some bit set / none
   * (S_CBRANCH_VCCNZ / VCCZ; mir/exec.c; analysis/constedge.c) */
  RS_I_BR_MASKNZ = 1 << 18,
  RS_I_BR_MASKZ = 1 << 19,
};

/* Per lane bit: d = f(s0[, s1]) over the instruction's first explicit def and its explicit sources
 * in order; the SAVEEXEC forms write the old EXEC to d and f(EXEC, s0) to EXEC. */
enum rs_maskop {
  RS_M_NONE, RS_M_MOV, RS_M_NOT, RS_M_ZERO, RS_M_ONES, RS_M_AND, RS_M_OR, RS_M_XOR, RS_M_ANDN2,
  RS_M_ORN2, RS_M_NAND, RS_M_NOR, RS_M_XNOR, RS_M_AND_SAVEEXEC, RS_M_OR_SAVEEXEC,
  RS_M_EXECNZ, /* branches when some lane is active (S_CBRANCH_EXECNZ) */
  RS_M_VCMP,   /* a vector compare into a mask: the lane's result if active, else 0 */
};

typedef struct {
  uint32_t opcode;  /* interned in rs_func.names */
  uint32_t first_op;
  uint32_t nops;
  uint32_t line;    /* 1-based line in the source file */
  uint32_t flags;
  uint32_t addr;    /* SASS: byte address in its section (the listing's 0010); 0 elsewhere */
} rs_inst;

typedef struct {
  rs_preg reg;
  int32_t vreg; /* function live-ins: the virtual register it is copied to, -1 if none */
} rs_livein;

typedef struct {
  uint32_t number;     /* bb.N, or ordinal for PTX */
  char *name;          /* "bb.3.Flow", "$L__BB0_2", "entry" */
  uint32_t first_inst, ninsts;
  uint32_t *succs;
  uint32_t nsuccs, capsuccs;
  uint32_t *preds;
  uint32_t npreds, cappreds;
  rs_livein *liveins;  /* as printed by llc (MIR only) */
  uint32_t nliveins, capliveins;
  bool has_liveins;
  bool has_succs;      /* successors were printed (MIR); otherwise inferred */
  uint32_t line;
} rs_block;

typedef struct {
  char *name;       /* "%12", "%r5" */
  int cls;          /* target class, -1 for an id the function does not use */
  uint16_t width;   /* 32-bit units */
  rs_lanes full;    /* all lanes of the class */
  uint32_t line;
  int32_t hint_preg_unit; /* MIR preferred-register of a physical register, -1 if none */
} rs_vreg;

enum rs_srckind { RS_SRC_MIR, RS_SRC_PTX, RS_SRC_SASS };

typedef struct rs_func {
  char *name;
  const rs_target *tgt;
  enum rs_srckind kind;
  const char *src;    /* the module's text (not owned) */
  const char *path;   /* the module's path (not owned) */
  rs_vreg *vregs;
  uint32_t nvregs, capvregs;
  rs_block *blocks;
  uint32_t nblocks, capblocks;
  rs_inst *insts;
  uint32_t ninsts, capinsts;
  rs_operand *ops;
  uint32_t nops, capops;
  rs_livein *liveins; /* function live-ins */
  uint32_t nliveins, capliveins;
  rs_preg *reserved;  /* registers this function reserves (MIR scratchRSrcReg, stackPtrOffsetReg,
                       * sgprForEXECCopy, wwmReservedRegs) */
  uint32_t nreserved, capreserved;
  rs_preg *wwm;       /* llc-22 wwmReservedRegs: whole-wave registers (SGPR spill lanes) that LLVM
                       * moves to the lowest free VGPRs after allocation (rs_wwm_count) */
  uint32_t nwwm, capwwm;
  rs_intern names;    /* opcodes and subregister index names */
  uint32_t line;
  bool allocated;     /* no virtual register is used (post virtregrewriter) */
  uint32_t declared_regs; /* SASS: .sectioninfo SHI_REGISTERS (ptxas -v count), 0 if absent */
  rs_preg *truth;     /* SASS: per vreg, the register the listing gives the web (exact); else NULL */
  rs_launch launch;   /* MIR: launch bounds from the embedded IR module's attributes */
  bool has_launch;    /* the IR module defines the function (else no function budget applies) */
} rs_func;

/* A function a front end refused alone (an instruction form it does not know, an operand it
 * cannot place): the module's other functions go on without it; commands name it and exit 1. */
typedef struct {
  char *func;  /* the function */
  uint32_t line, addr;
  char *form;  /* the instruction's mnemonic as printed ("HSET2.LE.AND"), or the step ("lift") */
  char *shape; /* its operands' kinds ("R,R,R,PT"), "" when not an instruction's */
  char *why;   /* the front end's message, FILE:LINE: included */
} rs_refusal;

typedef struct {
  char *path;
  char *text;
  size_t len;
  enum rs_srckind kind;
  const rs_target *tgt;
  rs_func **funcs;
  uint32_t nfuncs, capfuncs;
  rs_refusal *refused; /* functions left out, in text order */
  uint32_t nrefused, caprefused;
} rs_module;

/* Loading a file picks a front end: front/front.h (rs_module_load), above mir/, ptx/, sass/. */
void rs_module_free(rs_module *m);

/* Helpers the parsers share. */
/* Record function `func` as refused (copies every string). */
void rs_module_refuse(rs_module *m, const char *func, uint32_t line, uint32_t addr, const char *form,
                      const char *shape, const char *why);
/* Remove funcs[k] from the module and free it (a function refused after it was built). */
void rs_module_drop_func(rs_module *m, uint32_t k);
rs_func *rs_func_new(rs_module *m, const char *name, size_t n, uint32_t line);
void rs_func_free(rs_func *f);
uint32_t rs_func_add_block(rs_func *f, const char *name, size_t n, uint32_t number, uint32_t line);
void rs_block_add_succ(rs_block *b, uint32_t s);
/* Fill preds from succs, and, where a block printed no successors, infer them. */
void rs_func_finish_cfg(rs_func *f);
const char *rs_func_opcode(const rs_func *f, const rs_inst *i);
/* Registers an allocated function uses per file (highest + 1), into used[RS_MAX_FILES]. */
void rs_func_regs_used(const rs_func *f, unsigned *used);
/* Registers used with the whole-wave registers where LLVM puts them after allocation
 * (SIFrameLowering's shiftWwmVGPRsToLowestRange, llc-17+): each takes the lowest register of its
 * file that nothing else uses. used[]: the tops of everything else (WWM registers left out);
 * taken: per file, a bitmap of the units everything else uses (RS_WWM_BITS bits each). */
#define RS_WWM_BITS 512
bool rs_wwm_has(const rs_preg *wwm, uint32_t n, uint32_t unit);
void rs_wwm_count(const rs_target *t, const rs_preg *wwm, uint32_t n, uint64_t taken[][RS_WWM_BITS / 64],
                  unsigned *used);
/* Line number of a byte offset in the source. */
uint32_t rs_line_of(const char *src, size_t off);

#endif
