/* mirtext.h - lines and operand spans of a MIR text, for the passes that write a new MIR from the
 * parsed one and its source (mir/splitmir.c, mir/sgspill.c). */
#ifndef RS_MIRTEXT_H
#define RS_MIRTEXT_H
#include "ir/ir.h"

typedef struct {
  const char *s;
  uint32_t *start; /* start[L] = offset of line L (1-based); start[nlines + 1] = end */
  uint32_t nlines;
} rs_lines;

void rs_lines_of(const char *s, rs_lines *l);
void rs_lines_free(rs_lines *l);
/* Offset just past line L's newline. */
static inline uint32_t rs_line_end(const rs_lines *l, uint32_t L) { return l->start[L + 1]; }
/* The reason a pass cannot write its MIR, into w (n bytes); returns -1. */
int rs_mir_why(char *w, size_t n, const char *fmt, ...);
/* Where an operand's text starts with its flag words ("killed %5", "undef %7.sub0:vreg_64"). */
uint32_t rs_mir_op_start(const char *src, const rs_operand *o);

#endif
