/* compare.h - variants (models, or the models of several runs) on the same instances: paired
 * differences with bootstrap intervals, and McNemar's test on attempt-0 (greedy) pass. */
#ifndef RS_COMPARE_H
#define RS_COMPARE_H
#include "report/table.h"

#define RS_CMP_NM (RS_NK + 2) /* metrics: greedy, pass@k..., solved */

typedef struct {
  const rs_outcome *key; /* names the group (keys of `by` without model) */
  uint16_t a, b;         /* baseline and challenger variants */
  uint32_t pairs;        /* feasible instances both ran */
  rs_ci va[RS_CMP_NM], vb[RS_CMP_NM], diff[RS_CMP_NM]; /* diff = B - A, paired bootstrap */
  uint32_t only_a, only_b; /* greedy discordant pairs: A passes and B fails, and the reverse */
  double p_mcnemar;
} rs_comparison;

/* Each variant against the group's first variant (lowest index), within the groups of `by`
 * without the model key. Sorts r->o. Returns the count; *out malloc'd. */
uint32_t rs_compare(rs_results *r, unsigned by, uint64_t seed, rs_comparison **out);
void rs_compare_print(const rs_results *r, const rs_comparison *c, uint32_t n, unsigned by, int fmt, FILE *out);
struct cJSON *rs_compare_json(const rs_results *r, const rs_comparison *c, uint32_t n, unsigned by);
/* Metric name of column m ("greedy", "pass@k", "solved"). */
const char *rs_compare_metric(uint32_t m, char *buf, size_t n);

#endif
