/* truth.h - LLVM's final allocation as a map for an earlier stage (the corpus ground truth). */
#ifndef RS_TRUTH_H
#define RS_TRUTH_H
#include "mir/align.h"
#include "analysis/problem.h"

/* Registers of the postsplit function's virtual registers: exact by construction. */
int rs_truth_postsplit(const rs_func *ps, const rs_func *fin, rs_alignment *a, rs_err *e);
/* Registers of the pre-RA function's virtual registers through the postsplit stage; assign[v]
 * has lanes 0 where no single register exists. Returns the number of values LLVM split across
 * registers (0 = complete truth). */
uint32_t rs_truth_prera(const rs_func *pre, const rs_func *ps, const rs_alignment *ps_fin, rs_preg *assign);
/* As rs_truth_prera, but a value keeps the register its linked operands agree on even where spill
 * code of greedy's names it or a spill restore redefines that register (mir/sgspill.c checks the
 * lanes against it; the instance built from them is checked as any other). */
uint32_t rs_truth_prera_linked(const rs_func *pre, const rs_func *ps, const rs_alignment *ps_fin, rs_preg *assign);
/* For the values rs_truth_prera left without a register (assign[v].lanes 0): each one of the
 * registers LLVM gave it across its segments, chosen value by value to break the fewest
 * constraints of the pre-RA Problem p. Returns the constraints (and registers outside the class)
 * still broken, UINT32_MAX when a value has no register of LLVM's; 0: assign is a complete map
 * that keeps every constraint (the split label, docs/real-suite.md). */
uint32_t rs_truth_prera_split(const rs_func *pre, const rs_func *ps, const rs_alignment *ps_fin, const rs_problem *p,
                              rs_preg *assign);
/* The split instance (mir/splitmir.c: the pre-RA MIR with greedy's split copies, each piece of a
 * split value a value of its own) and its truth: LLVM's register for every value and piece. Returns
 * the instance (its Problem in *prob, its truth map in *json) when that truth keeps every
 * constraint; else NULL with the reason in why. `assign` as rs_truth_prera left it. */
rs_module *rs_truth_split_instance(const rs_func *pre, const rs_func *ps, const rs_alignment *ps_fin,
                                   const rs_preg *assign, const char *path, const char *target, rs_problem **prob,
                                   char **json, char *why, size_t nwhy);
/* The instance of a prera row with values split in llc's SGPR round (corpus/sground.c): the MIR
 * of that round's greedy, re-run from DIR/prera.mir and kept as DIR/sground.mir, its spill pseudos
 * replaced by LLVM's lane writes and reads; with its Problem and truth as rs_truth_split_instance,
 * else NULL with the reason in why. */
rs_module *rs_truth_sground_instance(const char *arch, int opt, const char *dir, const rs_func *ps,
                                     const rs_alignment *ps_fin, rs_problem **prob, char **json, char *why, size_t nwhy);
/* rs_truth_check (an assignment against a Problem): analysis/problem.h. */
/* JSON object {"%12": "v[4:5]", ...} of the used values, in Problem order. */
char *rs_truth_json(const rs_problem *p, const rs_preg *assign);

/* Parse a truth map (JSON: original name -> register in asm spelling) into assign[] per
 * function vreg of the Problem's values; 0 on success. Strict: every value once, known names. */
int rs_truth_assign(const rs_problem *p, const rs_func *f, const char *json, rs_preg *assign, rs_err *e);

#endif
