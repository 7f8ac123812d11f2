/* write.c - print a lifted function's listing back under an assignment of its values.
 *
 * Every printed register operand of a value is replaced by the register the assignment gives
 * the value, offset by the operand's position in it (R5 of a pair at R4 stays the second
 * register); everything else is copied from the input byte for byte. Comparing with the input
 * register for register is the pinned oracle's last step (cli/cmd_regalloc.c). */
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_text(const void *a, const void *b) {
  const rs_operand *x = *(const rs_operand *const *)a, *y = *(const rs_operand *const *)b;
  return x->text_off < y->text_off ? -1 : x->text_off > y->text_off;
}

uint32_t rs_sass_write(const rs_func *f, const rs_preg *assign, char **text, rs_sass_diff *diff, uint32_t maxdiff) {
  const rs_target *t = f->tgt;
  size_t cap = 4096, n = 0;
  char *out = rs_xmalloc(cap);
  uint32_t ndiff = 0, line = 1, capops = 0;
  const char *p = f->src;
  const rs_operand **ops = NULL;
  for (uint32_t ii = 0; ii < f->ninsts; ii++) {
    const rs_inst *in = &f->insts[ii];
    while (line < in->line && *p) /* instructions come in line order */
      if (*p++ == '\n') line++;
    const char *le = strchr(p, '\n');
    if (!le) le = p + strlen(p);
    size_t pos = (size_t)(p - f->src), end = (size_t)(le - f->src);
    /* the printed operands of values, in text order (the guard comes first; x roles twice) */
    uint32_t k = 0;
    rs_grow((void **)&ops, sizeof *ops, &capops, in->nops + 1);
    for (uint32_t o = 0; o < in->nops; o++) {
      const rs_operand *op = &f->ops[in->first_op + o];
      if (op->kind == RS_OP_VREG && op->text_len && op->text_off >= pos && op->text_off + op->text_len <= end)
        ops[k++] = op;
    }
    qsort(ops, k, sizeof *ops, by_text);
    for (uint32_t o = 0; o <= k; o++) {
      const rs_operand *op = o < k ? ops[o] : NULL;
      if (op && o && ops[o - 1]->text_off == op->text_off) continue;
      size_t upto = op ? op->text_off : end, len = upto - pos;
      char reg[24] = "";
      if (op) {
        rs_preg a = assign[op->reg];
        unsigned lo = op->lanes ? (unsigned)__builtin_ctzll(op->lanes) / 2 : 0;
        t->format_preg(t, (rs_preg){a.unit + lo, 3}, reg, sizeof reg);
      }
      size_t rl = strlen(reg);
      while (n + len + rl + 2 > cap) out = rs_xrealloc(out, cap *= 2);
      memcpy(out + n, f->src + pos, len);
      n += len;
      if (!op) break;
      memcpy(out + n, reg, rl);
      n += rl;
      if (op->text_len != rl || memcmp(f->src + op->text_off, reg, rl)) {
        if (ndiff < maxdiff) {
          rs_sass_diff *d = &diff[ndiff];
          d->inst = ii;
          snprintf(d->expected, sizeof d->expected, "%.*s", (int)(op->text_len < 20 ? op->text_len : 20),
                   f->src + op->text_off);
          snprintf(d->actual, sizeof d->actual, "%s", reg);
        }
        ndiff++;
      }
      pos = op->text_off + op->text_len;
    }
    out[n++] = '\n';
  }
  out[n] = 0;
  free(ops);
  *text = out;
  return ndiff;
}

/* The whole module's text with every function's printed value operands replaced. */
char *rs_sass_write_module(const rs_module *m, rs_preg *const *assign) {
  size_t cap = m->len + 64, n = 0, pos = 0;
  char *out = rs_xmalloc(cap);
  const rs_operand **ops = NULL;
  uint32_t nops = 0, capops = 0;
  const rs_func **fof = NULL;
  uint32_t capf = 0, nf = 0;
  for (uint32_t k = 0; k < m->nfuncs; k++) {
    const rs_func *f = m->funcs[k];
    for (uint32_t i = 0; i < f->nops; i++) {
      const rs_operand *op = &f->ops[i];
      if (op->kind != RS_OP_VREG || !op->text_len) continue;
      RS_PUSH(ops, nops, capops, op);
      RS_PUSH(fof, nf, capf, f);
    }
  }
  /* sort operands (and their functions) by text offset: insertion into index order */
  uint32_t *idx = rs_xmalloc(sizeof *idx * (nops + 1));
  for (uint32_t i = 0; i < nops; i++) idx[i] = i;
  for (uint32_t i = 1; i < nops; i++) { /* nearly sorted already: functions come in text order */
    uint32_t x = idx[i], j = i;
    while (j > 0 && ops[idx[j - 1]]->text_off > ops[x]->text_off) idx[j] = idx[j - 1], j--;
    idx[j] = x;
  }
  for (uint32_t i = 0; i < nops; i++) {
    const rs_operand *op = ops[idx[i]];
    const rs_func *f = fof[idx[i]];
    if (op->text_off < pos) continue; /* an x role prints one operand twice */
    char reg[24];
    uint32_t k = 0;
    while (m->funcs[k] != f) k++;
    rs_preg r = assign[k][op->reg];
    unsigned lo = op->lanes ? (unsigned)__builtin_ctzll(op->lanes) / 2 : 0;
    f->tgt->format_preg(f->tgt, (rs_preg){r.unit + lo, 3}, reg, sizeof reg);
    size_t len = op->text_off - pos, rl = strlen(reg);
    while (n + len + rl + 1 > cap) out = rs_xrealloc(out, cap *= 2);
    memcpy(out + n, m->text + pos, len);
    n += len;
    memcpy(out + n, reg, rl);
    n += rl;
    pos = op->text_off + op->text_len;
  }
  while (n + (m->len - pos) + 1 > cap) out = rs_xrealloc(out, cap *= 2);
  memcpy(out + n, m->text + pos, m->len - pos);
  n += m->len - pos;
  out[n] = 0;
  free(idx);
  free(ops);
  free(fof);
  return out;
}
