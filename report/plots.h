/* plots.h - report figures with gnuplot, PNG and SVG: pass@k curves per model and family,
 * latency CDFs, failure breakdown bars, registers used against the compiler's. */
#ifndef RS_PLOTS_H
#define RS_PLOTS_H
#include "report/table.h"

/* Write DIR/<name>.dat + DIR/<name>.gp and render DIR/<name>.png/.svg for each figure (DIR is
 * created). Sorts r->o. Returns the number of figures, or -1 with e set (gnuplot missing/failed). */
int rs_plots_write(rs_results *r, const char *dir, rs_err *e);

#endif
