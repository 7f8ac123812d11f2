/* archview.h - per-architecture pass rates side by side (`regsweep report --arch`). */
#ifndef RS_ARCHVIEW_H
#define RS_ARCHVIEW_H
#include "report/table.h"
#include <stdio.h>

/* Markdown: one row per (model, form), one column per target (the target table's order), each
 * cell the greedy pass rate, pass@K (the largest K the samples allow) and the feasible instances.
 * Regroups r (sorts r->o). */
void rs_arch_view_print(rs_results *r, uint64_t seed, FILE *out);

#endif
