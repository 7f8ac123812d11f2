/* oracle.h - the pinned oracle: every ground truth must verify, every mutant must be rejected
 * with the expected category, by both verifiers. */
#ifndef RS_ORACLE_H
#define RS_ORACLE_H
#include "verify/verifier.h"

typedef enum {
  RS_MUT_CONFLICT, /* move a value onto a register of a value live at the same time */
  RS_MUT_FIXED,    /* move a value onto a fixed register live or written in its range */
  RS_MUT_ALIGN,    /* misalign a tuple */
  RS_MUT_FILE,     /* wrong register file / class */
  RS_MUT_BUDGET,   /* beyond the register budget */
  RS_MUT_RESERVED, /* a reserved register */
  RS_MUT_DROP,     /* drop a key */
  RS_MUT_UNKNOWN,  /* add a key that is not a virtual register */
  RS_MUT_BADREG,   /* a register name the target does not have */
  RS_MUT_LANE,     /* move a value onto the one register of a tuple that is read (or live) there,
                    * e.g. the high half a VOP3P op_sel/op_sel_hi bit reads */
  RS_MUT_LAUNCH,   /* inside the file's budget but beyond the function's (its launch bounds) */
  RS_MUT__N
} rs_mutation;
const char *rs_mutation_str(rs_mutation m);
/* The category a mutant of kind m must be rejected with (syntax, dataflow or hardware). */
rs_verdict rs_mutation_expected(rs_mutation m);

typedef struct {
  uint32_t instances, truths, truths_accepted;
  uint32_t mutants, mutants_rejected, wrong_category;
  uint32_t per_kind[RS_MUT__N], per_kind_ok[RS_MUT__N];
  uint32_t disagreements;
  uint32_t failures_shown;
  double native_s, z3_s; /* checking candidates */
  double setup_s;         /* building each instance's verifiers (Z3's context: most of a truths-only run) */
} rs_oracle_stats;

/* Check one instance's truth (JSON, original names) and at least `min_mutants` mutants.
 * Failures are described through report(ctx, line). Returns the number of misses. */
uint32_t rs_oracle_instance(const rs_problem *p, const char *id, const char *truth_json, uint32_t min_mutants,
                            uint64_t seed, unsigned timeout_ms, rs_oracle_stats *st,
                            void (*report)(void *ctx, const char *line), void *ctx);

#endif
