/* regsused.c - registers an allocated function uses, per file, counted like the assembler's
 * .sgpr_count/.vgpr_count: highest register touched + 1 (allocation is by count, not by set). */
#include "ir/ir.h"
#include "analysis/problem.h"
#include <string.h>

void rs_func_regs_used(const rs_func *f, unsigned *used) {
  const rs_target *t = f->tgt;
  memset(used, 0, sizeof *used * RS_MAX_FILES);
  for (uint32_t i = 0; i < f->nops; i++) {
    const rs_operand *op = &f->ops[i];
    if (op->kind != RS_OP_PREG) continue;
    int fi = rs_target_file_of(t, op->reg);
    if (fi < 0 || fi >= RS_MAX_FILES || !t->files[fi].pressure) continue;
    unsigned top = op->reg - t->files[fi].first + rs_lanes_units(op->lanes);
    if (top > used[fi]) used[fi] = top;
  }
}
