/* assemble.h - turn compiled variants into corpus rows: parse, Problem, ground truth,
 * normalization, dedup, split. */
#ifndef RS_ASSEMBLE_H
#define RS_ASSEMBLE_H
#include "corpus/compile.h"
#include "ir/ir.h"
#include "storage/corpus.h"

typedef struct {
  uint32_t instances, duplicates, failures, with_truth, truth_split, truth_violations, infeasible;
  uint32_t split_labels; /* prera truths of split values, each in one of LLVM's registers (truth.h) */
  uint32_t split_instances; /* prera rows written as split instances (greedy's split copies; truth.h) */
  double analyze_s; /* parse + Problem + normalization */
  double align_s;   /* ground truth: stage alignment and its check */
  double store_s;   /* HDF5 writes */
} rs_assemble_stats;

int rs_assemble(const rs_variant *v, uint32_t n, const rs_compile_opts *o, uint64_t seed, rs_corpus *c,
                rs_assemble_stats *st, rs_err *e);
/* The dedup key of a function: its IR with virtual registers renumbered by first appearance
 * and block names dropped (block numbers, opcodes, operands and lanes kept). */
uint64_t rs_ir_hash(const rs_func *f);

#endif
