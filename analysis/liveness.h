/* liveness.h - lane-accurate liveness over one function.
 *
 * Every virtual register lane and every tracked physical lane gets a "slot"; a bitset over slots
 * is a set of live lanes. A lane is live at a point when some path from the point reads it before
 * a redefinition AND some definition reaches the point (LLVM's live intervals work the same way:
 * undefined lanes of `undef %x.sub0 = ...` are never live). Virtual registers are laid out
 * grouped by the register files their class may use, so per-file work touches contiguous slots.
 * Spill slots that only SI_SPILL saves and restores touch get slots too (after the physical
 * ones): a save is a copy into the slot, a restore a copy out of it. */
#ifndef RS_LIVENESS_H
#define RS_LIVENESS_H
#include "ir/ir.h"

typedef struct {
  uint32_t files;       /* class file mask shared by the group */
  uint32_t first, end;  /* slots [first, end) */
  int pfile;            /* file its pressure is counted in */
} rs_slotgroup;

/* A divergent if/else whose sides run on complementary lanes (simt.c): a lane runs IF, THEN...,
 * FLOW, ENDIF or IF, FLOW, ELSE..., ENDIF. */
typedef struct {
  uint32_t ifb, flow, els, endif; /* the branch, the flip, ELSE's entry block, the join */
  rs_word *inside;                /* bit per block: THEN, FLOW and ELSE */
} rs_simt_split;

/* A segment of one lane's paths (lanemask.c): instructions [first, end) of a block, run in one
 * state of the lane's EXEC and mask bits; bit act + (k - first) of segact: the lane is active at
 * instruction k of the block. */
typedef struct {
  uint32_t block, first, end;
  uint32_t succ, nsucc; /* successors: segsucc[succ .. succ + nsucc) */
  uint32_t act;
} rs_lseg;

/* An edge after which a block's branch is decided by constants (constedge.c): `block` entered
 * from `pred` leaves to `succ` only. */
typedef struct {
  uint32_t pred, block, succ;
  rs_word *phi; /* slots every other predecessor of block writes (its Flow phis' values, which
                 * LLVM leaves undefined on this edge): only these follow succ alone */
} rs_constedge;

typedef struct rs_live {
  const rs_func *f;
  uint32_t nslots, words;
  uint32_t *vslot;     /* per function vreg: first slot, UINT32_MAX if unused */
  uint32_t pbase;      /* slot of physical unit 0 lane 0 */
  uint32_t *owner;     /* per slot: vreg index, or nvregs + unit */
  rs_slotgroup *groups;
  uint32_t ngroups;
  rs_word *in, *out;       /* backward liveness per block (nblocks * words) */
  rs_word *defin, *defout; /* reaching definitions per block */
  rs_lanes *dnew, *dkill;  /* per operand: lanes its def newly defines / makes undefined */
  rs_lanes *use;           /* per operand: lanes it reads */
  rs_lanes *uundef;        /* per operand: lanes it reads that no definition reaches */
  rs_simt_split *splits;   /* if/else diamonds whose per-lane slots follow the lanes' CFG; node
                            * nblocks + k of in/out/defin/defout is split k's FLOW as its ELSE lanes
                            * run it (after the solve FLOW's own sets hold both copies) */
  uint32_t nsplits, capsplits;
  rs_constedge *cedges;    /* node nblocks + nsplits + j of in/out: block cedges[j].block as
                            * entered from cedges[j].pred (liveness only; reaching definitions
                            * are not computed there) */
  uint32_t ncedges, capcedges;
  rs_word *lanewise;       /* slots of per-lane (vector) registers but those cross-lane
                            * instructions touch (simt.c) */
  rs_word *vecslots;       /* slots of the vector files, cross-lane ones too: a def there writes
                            * only the active lanes (but RS_I_LANEWRITE's) */
  rs_lseg *segs;           /* the lanes' paths (lanemask.c), when built: liveness and reaching
                            * definitions of the per-lane slots per segment (sin/sout/sdin/sdout,
                            * those slots only); problem.c's interference follows them */
  uint32_t nsegs, *segsucc;
  rs_word *segact;
  rs_word *sin, *sout, *sdin, *sdout;
  uint32_t sbase;          /* slot of the first spill-slot lane (after the physical ones) */
  uint32_t *spill;         /* per instruction: first slot of the stack slot a SI_SPILL save or
                            * restore moves lanes through, UINT32_MAX if none or not tracked */
} rs_live;

rs_live *rs_live_compute(const rs_func *f, rs_err *e);
void rs_live_free(rs_live *l);
/* AMDGPU divergent if/else: the diamonds whose per-lane slots follow the lanes' CFG (simt.c);
 * fills l->splits and l->lanewise, returns how many. */
uint32_t rs_simt_find(rs_live *l);
/* Edges after which a block's mask branch is decided by constants (constedge.c): fills
 * l->cedges (after rs_simt_find), returns how many. */
uint32_t rs_constedge_find(rs_live *l);
/* The per-lane exec-mask model (lanemask.c): the segments of every lane's paths into l->segs;
 * returns how many, 0 (nothing built) past `cap` segments. */
uint32_t rs_lanemask_build(rs_live *l, uint32_t cap);
/* Whether the lane of segment g runs instruction k (index in its block). */
bool rs_live_seg_active(const rs_live *l, const rs_lseg *g, uint32_t k);
/* Steps back over instruction k of segment g: wave (every slot, the wave's liveness) as
 * rs_live_step_back, lane (the segment's per-lane slots) only where the lane is active, the
 * other slots read from wave; tmp is scratch (words). */
void rs_live_seg_step_back(const rs_live *l, const rs_lseg *g, uint32_t k, rs_word *wave, rs_word *lane, rs_word *tmp);
/* Per-lane slots another lane may still hold where a cross-lane write (RS_I_LANEWRITE) in block
 * b runs: what is live at the boundaries of every split diamond containing b, ORed into set. */
void rs_simt_lanewrite_meets(const rs_live *l, uint32_t b, rs_word *set);
/* Blocks reachable from the entry in DFS post-order (successors in their printed order) into
 * post (room for nblocks); returns how many (analysis/cfg.c). */
uint32_t rs_cfg_postorder(const rs_func *f, uint32_t *post);
/* Step a live set backward over one instruction (kills its defs, adds what it reads). */
void rs_live_step_back(const rs_live *l, const rs_inst *in, rs_word *live);
/* Effective live-in of block b (live and defined), into out (words long). */
void rs_live_block_in(const rs_live *l, uint32_t b, rs_word *out);
/* Step the defined set backward over one instruction's defs (the recorded deltas: reaching
 * definitions, as the Problem's walk and spillroom.c see them). */
void rs_live_defs_back(const rs_live *l, const rs_inst *in, rs_word *defd);
/* Slot of an operand's lane 0, or UINT32_MAX if the operand is not tracked. */
uint32_t rs_live_op_slot(const rs_live *l, const rs_operand *op);
/* The operand's lanes that liveness tracks (a tuple may include untracked units). */
rs_lanes rs_live_op_lanes(const rs_live *l, const rs_operand *op);

#endif
