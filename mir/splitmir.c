/* splitmir.c - the split instance of a pre-RA function: its MIR with the copies greedy inserted to
 * split the values LLVM split, so that each piece is a value of its own (docs/real-suite.md). */
#include "mir/splitmir.h"
#include "mir/mirtext.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "  - { id: N, " lines of the registers table: id -> line */
static uint32_t *reg_lines(const rs_lines *l, uint32_t nids) {
  uint32_t *at = rs_xcalloc(nids + 1, sizeof *at);
  bool in = false;
  for (uint32_t L = 1; L <= l->nlines; L++) {
    const char *s = l->s + l->start[L];
    if (!strncmp(s, "registers:", 10)) in = true;
    else if (in && s[0] != ' ' && s[0] != '\n') break;
    else if (in && !strncmp(s, "  - { id: ", 10)) {
      unsigned long id = strtoul(s + 10, NULL, 10);
      if (id < nids) at[id] = L;
    }
  }
  return at;
}

static bool uses_any(const rs_func *f, const rs_inst *in, const uint8_t *set, uint32_t nset) {
  for (uint32_t k = 0; k < in->nops; k++) {
    const rs_operand *o = &f->ops[in->first_op + k];
    if (o->kind == RS_OP_VREG && o->reg < nset && set[o->reg]) return true;
  }
  return false;
}

/* The vector round's spill pseudos (SI_SPILL_V32_SAVE, SI_SPILL_AV64_RESTORE, ...; the SGPR round's
 * are not the vector round's: mir/sgspill.c). */
static bool vector_spill(const char *op) {
  size_t n = strlen(op);
  return !strncmp(op, "SI_SPILL_", 9) && strncmp(op, "SI_SPILL_S", 10) &&
         ((n > 5 && !strcmp(op + n - 5, "_SAVE")) || (n > 8 && !strcmp(op + n - 8, "_RESTORE")));
}

/* The lines of a top-level MIR key ("stack:" and its indented entries), or 0 lines. */
static void key_lines(const rs_lines *l, const char *key, uint32_t *from, uint32_t *to) {
  *from = *to = 0;
  size_t k = strlen(key);
  for (uint32_t L = 1; L <= l->nlines; L++)
    if (!strncmp(l->s + l->start[L], key, k)) {
      uint32_t E = L + 1;
      while (E <= l->nlines && l->s[l->start[E]] == ' ') E++;
      *from = L, *to = E;
      return;
    }
}

char *rs_mir_split_instance(const rs_func *pre, const rs_func *ps, const rs_loose *lo, const uint8_t *split,
                            uint8_t **seg_out, size_t *len, char *w, size_t nw) {
  *seg_out = NULL;
  uint32_t nps = ps->nvregs, npre = pre->nvregs;
  uint8_t *seg = rs_xcalloc(nps + 1, 1), *other = rs_xcalloc(nps + 1, 1), *used = rs_xcalloc(npre + 1, 1);
  char *out = NULL;
  int rc = 0;
  for (uint32_t i = 0; i < pre->nops; i++)
    if (pre->ops[i].kind == RS_OP_VREG && pre->ops[i].reg < npre) used[pre->ops[i].reg] = 1;
  /* the pieces of the split values: the postsplit registers their operands went to. A value whose
   * operands all went to one register may still have been moved by greedy's copies (to an AGPR and
   * back): it is expanded as well, until every inserted copy is between pieces */
  uint8_t *sv = rs_xmalloc(npre + 1);
  memcpy(sv, split, npre);
  for (int round = 0, grew = 1; grew && !rc; round++) {
    grew = 0;
    memset(seg, 0, nps + 1);
    memset(other, 0, nps + 1);
    for (uint32_t i = 0; i < lo->nlinks && !rc; i++) {
      const rs_loose_link *ln = &lo->links[i];
      bool s = sv[ln->from_vreg];
      if (ln->to_vreg < 0) {
        if (s) rc = rs_mir_why(w, nw, "%s split in the SGPR round", pre->vregs[ln->from_vreg].name);
        continue;
      }
      if ((uint32_t)ln->to_vreg >= nps) continue;
      if (s) seg[ln->to_vreg] = 1;
      else other[ln->to_vreg] = 1;
    }
    uint8_t *grow = rs_xcalloc(nps + 1, 1); /* postsplit registers whose values must be expanded */
    for (uint32_t v = 0; v < nps; v++) grow[v] = seg[v] && other[v]; /* shared with a split value */
    for (uint32_t j = 0; j < ps->ninsts && !rc; j++) {
      if (lo->pair[j] >= 0) continue;
      const rs_inst *in = &ps->insts[j];
      for (uint32_t k = 0; k < in->nops; k++) {
        const rs_operand *o = &ps->ops[in->first_op + k];
        if (o->kind == RS_OP_VREG && o->reg < nps && other[o->reg]) grow[o->reg] = 1; /* moved by a copy */
      }
    }
    for (uint32_t i = 0; i < lo->nlinks && !rc; i++) /* the values that went to them */
      if (lo->links[i].to_vreg >= 0 && (uint32_t)lo->links[i].to_vreg < nps && grow[lo->links[i].to_vreg] &&
          !sv[lo->links[i].from_vreg])
        sv[lo->links[i].from_vreg] = 1, grew = 1;
    free(grow);
    if (round > 64) rc = rs_mir_why(w, nw, "pieces do not close");
  }
  for (uint32_t v = 0; v < nps && !rc; v++)
    if (seg[v] && other[v]) rc = rs_mir_why(w, nw, "%s holds two values", ps->vregs[v].name);
  /* what greedy inserted must be copies between pieces (a new register or one of the pieces), or
   * its spill code: a piece stored to a spill slot and reloaded into a piece (the slot is memory,
   * the frame's; the stack pointer and EXEC are the pseudo's fixed operands) */
  uint32_t nspill = 0;
  for (uint32_t j = 0; j < ps->ninsts && !rc; j++) {
    if (lo->pair[j] >= 0) continue;
    const rs_inst *in = &ps->insts[j];
    bool sp = vector_spill(rs_func_opcode(ps, in));
    if (strcmp(rs_func_opcode(ps, in), "COPY") && !sp) {
      rc = rs_mir_why(w, nw, "greedy inserted %s", rs_func_opcode(ps, in));
      break;
    }
    nspill += sp;
    for (uint32_t k = 0; k < in->nops && !rc; k++) {
      const rs_operand *o = &ps->ops[in->first_op + k];
      if (sp && o->kind != RS_OP_VREG) continue;
      if (o->kind != RS_OP_VREG || o->reg >= nps) rc = rs_mir_why(w, nw, "greedy inserted a COPY of a physical register");
      else if (other[o->reg] || (!seg[o->reg] && o->reg < npre && used[o->reg]))
        rc = rs_mir_why(w, nw, "greedy %s %s, not a split value", sp ? "spilled" : "copied", ps->vregs[o->reg].name);
    }
    for (uint32_t k = 0; k < in->nops && !rc; k++)
      if (ps->ops[in->first_op + k].kind == RS_OP_VREG) seg[ps->ops[in->first_op + k].reg] = 1;
  }
  split = sv;
  /* what greedy dropped (identity copies) must not name a split value */
  uint8_t *kept = rs_xcalloc(pre->ninsts + 1, 1);
  for (uint32_t j = 0; j < ps->ninsts; j++)
    if (lo->pair[j] >= 0) kept[lo->pair[j]] = 1;
  for (uint32_t i = 0; i < pre->ninsts && !rc; i++)
    if (!kept[i] && uses_any(pre, &pre->insts[i], split, npre))
      rc = rs_mir_why(w, nw, "greedy dropped an instruction of a split value");
  for (uint32_t i = 0; i < pre->ninsts && !rc; i++)
    if (pre->insts[i].flags & RS_I_BUNDLED) rc = rs_mir_why(w, nw, "bundles");
  if (rc) goto out;

  rs_lines lp, lq;
  rs_lines_of(pre->src, &lp);
  rs_lines_of(ps->src, &lq);
  /* inserted lines: before the pre line of the next matched instruction, else after the block */
  uint32_t nins = 0, *ins_line = rs_xmalloc((ps->ninsts + 1) * sizeof *ins_line), *ins_at = rs_xmalloc((ps->ninsts + 1) * sizeof *ins_at);
  for (uint32_t b = 0; b < ps->nblocks && !rc; b++) {
    const rs_block *qb = &ps->blocks[b], *pb = &pre->blocks[b];
    uint32_t pend = nins;
    for (uint32_t j = qb->first_inst; j < qb->first_inst + qb->ninsts; j++) {
      if (lo->pair[j] < 0) {
        ins_line[nins] = ps->insts[j].line, ins_at[nins++] = 0;
        continue;
      }
      for (; pend < nins; pend++) ins_at[pend] = pre->insts[lo->pair[j]].line; /* before it */
    }
    if (pend < nins) {
      if (!pb->ninsts) rc = rs_mir_why(w, nw, "copies at the end of an empty block");
      else
        for (; pend < nins; pend++) ins_at[pend] = pre->insts[pb->first_inst + pb->ninsts - 1].line + 1; /* after */
    }
  }
  uint32_t *subst_of = rs_xcalloc(lp.nlines + 2, sizeof *subst_of); /* pre line -> pre inst + 1 */
  for (uint32_t j = 0; j < ps->ninsts; j++)
    if (lo->pair[j] >= 0 && uses_any(pre, &pre->insts[lo->pair[j]], split, npre))
      subst_of[pre->insts[lo->pair[j]].line] = (uint32_t)lo->pair[j] + 1;
  int32_t *ps_of = rs_xmalloc((pre->ninsts + 1) * sizeof *ps_of);
  for (uint32_t i = 0; i < pre->ninsts; i++) ps_of[i] = -1;
  for (uint32_t j = 0; j < ps->ninsts; j++)
    if (lo->pair[j] >= 0) ps_of[lo->pair[j]] = (int32_t)j;
  uint32_t *preg = reg_lines(&lp, npre), *psreg = reg_lines(&lq, nps);
  uint32_t last_reg = 0;
  for (uint32_t v = 0; v < npre; v++)
    if (preg[v] > last_reg) last_reg = preg[v];
  rs_sbuf b = {0};
  uint32_t k = 0;
  /* with spill code, the frame is postsplit's (its spill slots after the function's own objects) */
  uint32_t qs0 = 0, qs1 = 0, ps0 = 0, ps1 = 0;
  if (nspill) key_lines(&lq, "stack:", &qs0, &qs1), key_lines(&lp, "stack:", &ps0, &ps1);
  const char *hsv = nspill ? strstr(ps->src, "\n  hasSpilledVGPRs: ") : NULL;
  for (uint32_t L = 1; L <= lp.nlines && !rc; L++) {
    for (uint32_t q = 0; q < nins; q++) /* few: the copies of the split values */
      if (ins_at[q] == L) rs_sbuf_put(&b, lq.s + lq.start[ins_line[q]], rs_line_end(&lq, ins_line[q]) - lq.start[ins_line[q]]);
    const char *s = lp.s + lp.start[L];
    size_t n = rs_line_end(&lp, L) - lp.start[L];
    if (qs0 && ps0 && L == ps0) {
      rs_sbuf_put(&b, lq.s + lq.start[qs0], lq.start[qs1] - lq.start[qs0]);
      L = ps1 - 1;
      continue;
    }
    if (hsv && !strncmp(s, "  hasSpilledVGPRs: ", 19)) {
      hsv++;
      rs_sbuf_put(&b, hsv, (size_t)(strchr(hsv, '\n') + 1 - hsv));
      continue;
    }
    if (!strncmp(s, "  - { id: ", 10)) {
      unsigned long id = strtoul(s + 10, NULL, 10);
      if ((id < npre && split[id] && used[id]) || (id < nps && seg[id])) n = 0; /* the pieces replace it */
    }
    if (subst_of[L]) { /* the split values' operands: the pieces' (postsplit's text, flags included) */
      uint32_t i = subst_of[L] - 1;
      const rs_inst *x = &pre->insts[i], *y = &ps->insts[ps_of[i]];
      uint32_t at = lp.start[L];
      for (uint32_t o = 0; o < x->nops; o++) {
        const rs_operand *po = &pre->ops[x->first_op + o], *qo = &ps->ops[y->first_op + o];
        if (po->kind != RS_OP_VREG || !split[po->reg]) continue;
        uint32_t ps0 = rs_mir_op_start(pre->src, po), qs0 = rs_mir_op_start(ps->src, qo);
        rs_sbuf_put(&b, pre->src + at, ps0 - at);
        rs_sbuf_put(&b, ps->src + qs0, qo->text_off + qo->text_len - qs0);
        at = po->text_off + po->text_len;
      }
      rs_sbuf_put(&b, pre->src + at, rs_line_end(&lp, L) - at);
    } else rs_sbuf_put(&b, s, n);
    if (L == last_reg) /* the pieces' rows of the registers table, from postsplit's */
      for (uint32_t v = 0; v < nps; v++)
        if (seg[v] && psreg[v]) rs_sbuf_put(&b, lq.s + lq.start[psreg[v]], rs_line_end(&lq, psreg[v]) - lq.start[psreg[v]]), k++;
  }
  for (uint32_t q = 0; q < nins; q++)
    if (ins_at[q] > lp.nlines) rs_sbuf_put(&b, lq.s + lq.start[ins_line[q]], rs_line_end(&lq, ins_line[q]) - lq.start[ins_line[q]]);
  free(ins_line);
  free(ins_at);
  free(subst_of);
  free(ps_of);
  free(preg);
  free(psreg);
  rs_lines_free(&lp);
  rs_lines_free(&lq);
  (void)k;
  if (rc) free(b.s);
  else {
    out = b.s;
    *len = b.n;
    *seg_out = seg;
    seg = NULL;
  }
out:
  free(sv);
  free(kept);
  free(seg);
  free(other);
  free(used);
  return out;
}
