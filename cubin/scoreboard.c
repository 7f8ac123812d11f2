/* scoreboard.c - ptxas's control bits as pairs of operands that must not share a register: the
 * cubin side of the free Problem's scoreboard conflicts (and each instruction's words, rs_sass_ctl_of).
 *
 * Lowering keeps every control bit (stall, yield, barriers, wait masks). An instruction i that
 * arms a read barrier still reads its R sources after later instructions issue, until one waits
 * on the barrier; one that arms a write barrier still writes its destinations. hazard.c refuses
 * a listing where such a later instruction k, not waiting, writes a register i still reads, or
 * touches one i still writes. The same (i, k) pairs, from the same walk (rs_sass_sb_walk: the
 * CFG, the wait masks, DEPBAR, the in-order pipe rule), give here pairs of operands that must
 * not share a register: i's late-read R operands against k's defs (read barrier), i's defs
 * against every register operand of k (write barrier). sass/joins.c turns each pair into a
 * conflict between two values, or an exclusion of a register a value may not take (a register
 * the lift left physical, a value the Problem keeps in place); mcode/problem.c hands the pairs
 * over, so neither room calls the other. ptxas's listing has no hazard (test_sass_lower), so its
 * colouring satisfies every pair: the Problem stays colourable with ptxas's registers and pinned
 * mode is unchanged. A pair within one value is no constraint: a value has one register in every
 * colouring, so it races in ptxas's listing too or never. */
#include "cubin/lower.h"
#include <stdlib.h>
#include <string.h>

int rs_sass_ctl_of(const rs_cubin *c, const rs_func *f, const char *name, uint64_t (**ctl)[2], rs_err *e) {
  *ctl = NULL;
  const rs_cubin_func *cf = rs_cubin_find(c, f->name);
  if (!cf) return rs_errf(e, name, 0, "function %s is not in the cubin", f->name);
  uint64_t (*w)[2] = rs_xmalloc(sizeof *w * (f->ninsts + 1));
  for (uint32_t i = 0; i < f->ninsts; i++) {
    if (f->insts[i].addr % 16 || f->insts[i].addr >= cf->size) {
      free(w);
      return rs_errf(e, name, f->insts[i].line, "%s /*%04x*/ outside its .text section", f->name, f->insts[i].addr);
    }
    rs_cubin_words(cf, f->insts[i].addr, w[i]);
  }
  *ctl = w;
  return 0;
}

typedef struct {
  const rs_func *f;
  rs_sb_pair_fn pair;
  void *ctx;
} S;

/* Is op a register of the R file (read late by a variable-latency instruction)? Guard
 * predicates and uniform operands are read at issue (hazard.c). */
static bool is_r(const rs_func *f, const rs_operand *op) {
  uint32_t unit;
  if (op->kind == RS_OP_VREG && f->truth) unit = f->truth[op->reg].unit;
  else if (op->kind == RS_OP_PREG) unit = op->reg;
  else return false;
  int fi = rs_target_file_of(f->tgt, unit);
  return fi >= 0 && !strcmp(f->tgt->files[fi].name, "r");
}

static bool is_reg(const rs_operand *op) { return op->kind == RS_OP_VREG || op->kind == RS_OP_PREG; }

static bool pairs_at(void *ctx, uint32_t i, uint32_t k, int kind, unsigned sb) {
  (void)sb;
  const S *s = ctx;
  const rs_func *f = s->f;
  const rs_inst *a = &f->insts[i], *b = &f->insts[k];
  for (uint32_t x = 0; x < a->nops; x++) {
    const rs_operand *ox = &f->ops[a->first_op + x];
    bool def = ox->flags & RS_F_DEF;
    if (!is_reg(ox) || (kind == RS_SB_READ ? def || !is_r(f, ox) : !def)) continue;
    for (uint32_t y = 0; y < b->nops; y++) {
      const rs_operand *oy = &f->ops[b->first_op + y];
      bool kdef = (oy->flags & RS_F_DEF) != 0; /* write: all of k; write behind i: k's reads; read: k's defs */
      if (is_reg(oy) && !rs_sass_sb_ignored(f, k, oy) && (kind == RS_SB_WRITE || (kind == RS_SB_READ ? kdef : !kdef))) s->pair(s->ctx, ox, oy, k);
    }
  }
  return false; /* every k up to the wait */
}

void rs_sass_scoreboard_pairs(const rs_func *f, const uint64_t (*ctl)[2], rs_sb_pair_fn pair, void *ctx) {
  S s = {f, pair, ctx};
  rs_sass_sb_walk(f, ctl, pairs_at, &s);
}
