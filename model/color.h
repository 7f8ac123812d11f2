/* color.h - the graph-colouring engine shared by builtin:chaitin and builtin:sampled. */
#ifndef RS_COLOR_H
#define RS_COLOR_H
#include "analysis/problem.h"

typedef struct rs_color rs_color;

/* Interference adjacency, legal placements per class and hints, built once per Problem. */
rs_color *rs_color_new(const rs_problem *p);
void rs_color_free(rs_color *c);

enum rs_color_order { RS_ORDER_BRIGGS, RS_ORDER_WIDE_FIRST, RS_ORDER_PROGRAM };

/* Colour the values: simplify/select with optimistic colouring; out[v] = register (lanes 0 if it
 * could not be coloured: it would need to spill). `rng` (may be NULL) randomizes the order of
 * equal choices and picks among the first `spread` legal registers (1 = always the lowest).
 * Returns the number of uncoloured values. */
uint32_t rs_color_run(rs_color *c, enum rs_color_order order, bool hints, uint64_t *rng, uint32_t spread,
                      rs_preg *out);
/* Lower a complete, valid assignment in place: each value, highest registers first, moves to the
 * lowest legal register of its file below its own that fits, until none moves (it stays valid;
 * from ptxas's own colouring this can only lower the count). Returns the number of moves. */
uint32_t rs_color_descend(rs_color *c, rs_preg *a);
/* Registers used per file by an assignment: highest unit + 1 (values and fixed registers). */
void rs_color_used(const rs_problem *p, const rs_preg *a, unsigned *used);
/* One number to minimize: registers of the file that limits occupancy most (vector files on
 * AMD, R on NVIDIA), then the others. */
uint64_t rs_color_cost(const rs_problem *p, const rs_preg *a);
uint64_t rs_rng_next(uint64_t *s);

#endif
