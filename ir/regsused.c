/* regsused.c - registers an allocated function uses, per file, counted like the assembler's
 * .sgpr_count/.vgpr_count: highest register touched + 1 (allocation is by count, not by set). */
#include "ir/ir.h"
#include <string.h>

bool rs_wwm_has(const rs_preg *wwm, uint32_t n, uint32_t unit) {
  for (uint32_t k = 0; k < n; k++)
    if (unit >= wwm[k].unit && unit < wwm[k].unit + rs_lanes_units(wwm[k].lanes)) return true;
  return false;
}

void rs_wwm_count(const rs_target *t, const rs_preg *wwm, uint32_t n, uint64_t taken[][RS_WWM_BITS / 64],
                  unsigned *used) {
  for (uint32_t k = 0; k < n; k++)
    for (uint32_t u = wwm[k].unit; u < wwm[k].unit + rs_lanes_units(wwm[k].lanes); u++) {
      int fi = rs_target_file_of(t, u);
      if (fi < 0 || fi >= RS_MAX_FILES || !t->files[fi].pressure) continue;
      unsigned idx = 0;
      while (idx < t->files[fi].count && idx < RS_WWM_BITS && (taken[fi][idx / 64] >> (idx % 64) & 1)) idx++;
      if (idx >= RS_WWM_BITS) continue;
      taken[fi][idx / 64] |= 1ull << (idx % 64);
      if (idx + 1 > used[fi]) used[fi] = idx + 1;
    }
}

void rs_func_regs_used(const rs_func *f, unsigned *used) {
  const rs_target *t = f->tgt;
  uint64_t taken[RS_MAX_FILES][RS_WWM_BITS / 64];
  memset(used, 0, sizeof *used * RS_MAX_FILES);
  memset(taken, 0, sizeof taken);
  for (uint32_t i = 0; i < f->nops; i++) {
    const rs_operand *op = &f->ops[i];
    if (op->kind != RS_OP_PREG || rs_wwm_has(f->wwm, f->nwwm, op->reg)) continue;
    int fi = rs_target_file_of(t, op->reg);
    if (fi < 0 || fi >= RS_MAX_FILES || !t->files[fi].pressure) continue;
    unsigned lo = op->reg - t->files[fi].first, top = lo + rs_lanes_units(op->lanes);
    if (top > used[fi]) used[fi] = top;
    for (unsigned u = lo; u < top && u < RS_WWM_BITS; u++) taken[fi][u / 64] |= 1ull << (u % 64);
  }
  rs_wwm_count(t, f->wwm, f->nwwm, taken, used);
}
