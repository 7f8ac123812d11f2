/* lower.c - a recoloured SASS listing into its cubin: the .text words of every instruction
 * whose registers changed and each function's register count; nothing else is touched.
 *
 * The two listings must be the same instructions at the same addresses, differing only in
 * register numbers (same skeleton: the text with each register token replaced by its kind).
 * Before writing, every instruction's current words must list as `orig` says: each of its
 * tokens with a trusted field must hold the listed register, so a listing that is not of this
 * cubin is refused rather than patched. */
#include "cubin/lower.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SKEL = 512 };

static unsigned bits_at(const uint64_t w[2], unsigned off, unsigned width) {
  unsigned v = 0;
  for (unsigned b = 0; b < width; b++) v |= (unsigned)(w[(off + b) >> 6] >> ((off + b) & 63) & 1) << b;
  return v;
}

int rs_sass_lower(rs_cubin *c, const char *orig, const char *next, const uint32_t *regcount, const char *name,
                  rs_lower_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  rs_sass_ilines a, b;
  if (rs_sass_ilines_of(orig, name, &a, e)) return -1;
  if (rs_sass_ilines_of(next, name, &b, e)) {
    rs_sass_ilines_free(&a);
    return -1;
  }
  rs_nvinfo_func *nf = NULL;
  int rc = rs_nvinfo_read(c, name, &nf, e);
  if (!rc && a.n != b.n)
    rc = rs_errf(e, name, 0, "the listings have %u and %u instructions: only registers may change", a.n, b.n);
  /* re-encode into a copy of the words first: a refusal leaves the cubin as it was */
  uint64_t *words = rc ? NULL : rs_xmalloc(sizeof *words * 2 * (a.n + 1));
  const rs_cubin_func **fof = rc ? NULL : rs_xmalloc(sizeof *fof * (a.n + 1));
  const rs_cubin_func *f = NULL;
  for (uint32_t i = 0; i < a.n && !rc; i++) {
    const rs_sass_iline *x = &a.v[i], *y = &b.v[i];
    if (strcmp(x->func, y->func) || x->addr != y->addr) {
      rc = rs_errf(e, name, y->line, "instruction %u is %s /*%04x*/, the original listing has %s /*%04x*/ there", i,
                   y->func, y->addr, x->func, x->addr);
      break;
    }
    if (!f || strcmp(f->name, x->func)) f = rs_cubin_find(c, x->func);
    if (!f || x->addr % 16 || x->addr >= f->size) {
      rc = rs_errf(e, name, x->line, "%s /*%04x*/: %s", x->func, x->addr,
                   f ? "outside its .text section" : "function not in the cubin");
      break;
    }
    fof[i] = f;
    rs_sass_tokens ta, tb;
    char sa[SKEL], sb[SKEL];
    if (rs_sass_tokens_of(x->text, x->len, &ta, sa, sizeof sa) || rs_sass_tokens_of(y->text, y->len, &tb, sb, sizeof sb)) {
      rc = rs_errf(e, name, y->line, "%s /*%04x*/: cannot read the instruction's operands", x->func, x->addr);
      break;
    }
    if (strcmp(sa, sb)) {
      rc = rs_errf(e, name, y->line, "%s /*%04x*/: '%.*s' differs from '%.*s' in more than registers", x->func, x->addr,
                   (int)y->len, y->text, (int)x->len, x->text);
      break;
    }
    uint64_t *w = words + 2 * i;
    rs_cubin_words(f, x->addr, w);
    const rs_sass_form *fm = rs_sass_form_find(c->sm, (unsigned)(w[0] & 0xfff), ta.shape);
    uint32_t which = 0;
    for (unsigned k = 0; k < ta.n; k++) {
      if (fm && fm->off[k] >= 0 && bits_at(w, (unsigned)fm->off[k], rs_tk_width[ta.kind[k]]) != ta.val[k]) {
        rc = rs_errf(e, name, x->line, "%s /*%04x*/ %s: operand %u is %u in the cubin, %u in the listing: not the "
                     "listing of this cubin", x->func, x->addr, ta.op, k,
                     bits_at(w, (unsigned)fm->off[k], rs_tk_width[ta.kind[k]]), ta.val[k]);
        break;
      }
      if (ta.val[k] != tb.val[k]) which |= 1u << k;
    }
    if (rc || !which) continue;
    char why[200];
    if (rs_sass_encode(c->sm, w, &tb, which, why, sizeof why)) {
      rc = rs_errf(e, name, y->line, "%s /*%04x*/: %s: the kernel is refused", x->func, x->addr, why);
      break;
    }
    st->changed++;
    st->tokens += (uint32_t)__builtin_popcount(which);
  }
  if (!rc) {
    for (uint32_t i = 0; i < a.n; i++) {
      uint8_t *p = (uint8_t *)fof[i]->code + a.v[i].addr; /* into c->bytes, which c owns */
      for (int k = 0; k < 16; k++) p[k] = (uint8_t)(words[2 * i + k / 8] >> 8 * (k % 8));
    }
    st->funcs = c->nfuncs;
    st->insts = a.n;
    for (uint32_t k = 0; k < c->nfuncs; k++) {
      if (k < 8) st->regs_before[k] = nf[k].regcount;
      uint32_t n = regcount ? regcount[k] : nf[k].regcount;
      if (k < 8) st->regs_after[k] = n;
      if (n != nf[k].regcount) rs_nvinfo_set_regcount(c, &nf[k], n);
    }
  }
  free(words);
  free(fof);
  free(nf);
  rs_sass_ilines_free(&a);
  rs_sass_ilines_free(&b);
  return rc;
}

uint32_t rs_sass_regcount_of(const rs_func *f) {
  const rs_target *t = f->tgt;
  unsigned top = 0; /* highest R + 1 over every operand (values through their truth, R1 ...) */
  for (uint32_t i = 0; i < f->nops; i++) {
    const rs_operand *op = &f->ops[i];
    rs_preg r;
    if (op->kind == RS_OP_VREG && f->truth) r = (rs_preg){f->truth[op->reg].unit, f->truth[op->reg].lanes};
    else if (op->kind == RS_OP_PREG) r = (rs_preg){op->reg, op->lanes};
    else continue;
    int fi = r.lanes ? rs_target_file_of(t, r.unit) : -1;
    if (fi < 0 || strcmp(t->files[fi].name, "r")) continue;
    unsigned idx = r.unit - t->files[fi].first;
    if (idx >= 255) continue; /* RZ */
    unsigned hi = idx + rs_lanes_units(r.lanes);
    if (hi > top) top = hi;
  }
  return top + 2; /* ptxas: highest R + 1, and 2 reserved (../shared/NVIDIA-SASS.md) */
}
