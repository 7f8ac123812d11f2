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

/* A form the table cannot write, probed: (opc, shape) and the row the probe found. */
typedef struct {
  uint16_t opc;
  char shape[RS_MAX_TOKENS + 1];
  int8_t off[RS_MAX_TOKENS];
  int8_t tie[RS_MAX_TOKENS]; /* tokens the probe found at one field (BAR.SYNC R13, R13): a group */
  uint32_t rep; /* the instruction probed */
  rs_sass_form row;
} probed;

static probed *probed_find(probed *p, uint32_t n, unsigned opc, const char *shape) {
  for (uint32_t k = 0; k < n; k++)
    if (p[k].opc == opc && !strcmp(p[k].shape, shape)) return &p[k];
  return NULL;
}

/* Does every field of row f hold instruction w's listed register (tokens t)? The first that does
 * not in *bad. */
static bool row_reads(const rs_sass_form *f, const uint64_t w[2], const rs_sass_tokens *t, unsigned *bad) {
  for (unsigned k = 0; k < t->n; k++)
    if (f->off[k] >= 0 && bits_at(w, (unsigned)f->off[k], rs_tk_width[t->kind[k]]) != t->val[k]) {
      *bad = k;
      return false;
    }
  return true;
}

/* Tokens holding a constant register (RZ, URZ, PT, UPT). */
static unsigned fixed_regs(const rs_sass_tokens *t) {
  unsigned n = 0;
  for (unsigned k = 0; k < t->n; k++)
    n += t->val[k] == (1u << rs_tk_width[t->kind[k]]) - 1 && t->kind[k] != RS_TK_B;
  return n;
}

static const char *func_of(const rs_sass_ilines *l, uint32_t i) { return l->v[i].func; }

int rs_sass_lower_opts(rs_cubin *c, const char *orig, const char *next, const uint32_t *regcount, const char *name,
                       const rs_lower_opts *o, rs_lower_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  rs_lower_opts none = {0};
  if (!o) o = &none;
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
  /* per instruction: 0 done, 1 to probe (the table cannot write it), 2 its row contradicts it */
  uint8_t *later = rc ? NULL : rs_xcalloc(a.n + 1, 1);
  uint32_t nlater = 0;
  /* per instruction: register fields written; per function: kept as ptxas wrote it */
  uint32_t *wrote = rc ? NULL : rs_xcalloc(a.n + 1, sizeof *wrote);
  uint8_t *kept = rs_xcalloc(c->nfuncs + 1, 1);
  for (uint32_t k = 0; o->keep && k < c->nfuncs; k++) kept[k] = o->keep[k];
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
    const rs_sass_form *fm = o->probe_only ? NULL : rs_sass_form_find(c->sm, (unsigned)(w[0] & 0xfff), ta.shape);
    uint32_t which = 0;
    for (unsigned k = 0; k < ta.n; k++)
      if (ta.val[k] != tb.val[k]) which |= 1u << k;
    if (o->probe_only) {
      if (which) later[i] = 1, nlater++;
      continue;
    }
    unsigned bad;
    if (fm && !row_reads(fm, w, &ta, &bad)) { /* the table misreads it: ask nvdisasm (or refuse) */
      later[i] = 2, nlater++;
      continue;
    }
    if (!which) continue;
    char why[200];
    uint64_t keep[2] = {w[0], w[1]};
    if (rs_sass_encode(c->sm, w, &tb, which, why, sizeof why)) {
      w[0] = keep[0], w[1] = keep[1];
      later[i] = 1, nlater++;
      continue;
    }
    wrote[i] = (uint32_t)__builtin_popcount(which);
  }
  /* the forms the table cannot write or misreads: fields from nvdisasm, one instruction per form */
  probed *pf = NULL;
  uint32_t npf = 0;
  rs_nvdisasm own;
  const rs_nvdisasm *nd = o->nd;
  char nd_why[600] = "";
  if (!rc && nlater && !o->no_probe && !nd) {
    rs_err pe = {0};
    if (rs_nvdisasm_open(NULL, &own, &pe)) snprintf(nd_why, sizeof nd_why, " (no nvdisasm to probe: %.200s)", pe.msg);
    else nd = &own;
  }
  if (!rc && nlater && nd) {
    pf = rs_xcalloc(nlater + 1, sizeof *pf);
    for (uint32_t i = 0; i < a.n; i++) {
      rs_sass_tokens ta;
      if (!later[i] || rs_sass_tokens_of(a.v[i].text, a.v[i].len, &ta, NULL, 0)) continue;
      unsigned opc = (unsigned)(words[2 * i] & 0xfff);
      probed *q = probed_find(pf, npf, opc, ta.shape);
      if (q) { /* the instance with the fewest RZ/URZ/PT: flipping a bit of those often makes another
                * alias (IMAD.MOV.U32 R5, RZ, RZ, R7 is IMAD 'RRR' too), which says nothing */
        rs_sass_tokens tq;
        if (!rs_sass_tokens_of(a.v[q->rep].text, a.v[q->rep].len, &tq, NULL, 0) && fixed_regs(&ta) < fixed_regs(&tq))
          q->rep = i;
        continue;
      }
      pf[npf].opc = (uint16_t)opc;
      snprintf(pf[npf].shape, sizeof pf[npf].shape, "%s", ta.shape);
      pf[npf].rep = i;
      npf++;
    }
    uint64_t (*pw)[2] = rs_xmalloc(sizeof *pw * (npf + 1));
    const char **ps = rs_xmalloc(sizeof *ps * (npf + 1));
    uint32_t *pl = rs_xmalloc(sizeof *pl * (npf + 1));
    int8_t (*po)[RS_MAX_TOKENS] = rs_xmalloc(sizeof *po * (npf + 1));
    for (uint32_t k = 0; k < npf; k++) {
      uint32_t i = pf[k].rep;
      rs_cubin_words(fof[i], a.v[i].addr, pw[k]);
      ps[k] = a.v[i].text, pl[k] = a.v[i].len;
    }
    rs_err pe = {0};
    if (rs_sass_probe(nd, c->sm, npf, (const uint64_t(*)[2])pw, ps, pl, po, &st->probe, &pe))
      snprintf(nd_why, sizeof nd_why, " (the probe failed: %.200s)", pe.msg);
    else
      for (uint32_t k = 0; k < npf; k++) memcpy(pf[k].off, po[k], RS_MAX_TOKENS);
    /* where the probe leaves a token open, the table's field if it trusts one alone (not tied):
     * with --probe-only only for a desc[] token, which nvdisasm 11.8 does not print */
    for (uint32_t k = 0; k < npf; k++) {
      const rs_sass_form *fm = rs_sass_form_find(c->sm, pf[k].opc, pf[k].shape);
      uint32_t desc = rs_sass_desc_tokens(a.v[pf[k].rep].text, a.v[pf[k].rep].len);
      for (size_t t = 0; fm && t < strlen(pf[k].shape); t++)
        if (pf[k].off[t] < 0 && fm->off[t] >= 0 && !(fm->tie && fm->tie[t] >= 0) && (!o->probe_only || (desc >> t & 1)))
          pf[k].off[t] = fm->off[t];
      /* tokens at one field: one register printed twice, written only all equal (the encoder's tie) */
      bool tied = false;
      for (size_t t = 0; t < strlen(pf[k].shape); t++) {
        pf[k].tie[t] = -1;
        for (size_t u = 0; u < t && pf[k].tie[t] < 0; u++)
          if (pf[k].off[t] >= 0 && pf[k].off[u] == pf[k].off[t]) pf[k].tie[t] = pf[k].tie[u] >= 0 ? pf[k].tie[u] : (int8_t)u;
        if (pf[k].tie[t] >= 0) tied = true, pf[k].tie[pf[k].tie[t]] = pf[k].tie[t];
      }
      pf[k].row = (rs_sass_form){(uint8_t)c->sm, pf[k].opc, pf[k].shape, pf[k].off, tied ? pf[k].tie : NULL, 0};
    }
    st->probed_forms = npf;
    free(pw);
    free(ps);
    free(pl);
    free(po);
  }
  for (uint32_t i = 0; i < a.n && !rc && nlater; i++) {
    if (!later[i]) continue;
    const rs_sass_iline *x = &a.v[i], *y = &b.v[i];
    rs_sass_tokens ta, tb;
    rs_sass_tokens_of(x->text, x->len, &ta, NULL, 0);
    rs_sass_tokens_of(y->text, y->len, &tb, NULL, 0);
    uint64_t *w = words + 2 * i;
    unsigned opc = (unsigned)(w[0] & 0xfff);
    const rs_sass_form *fm = o->probe_only ? NULL : rs_sass_form_find(c->sm, opc, ta.shape);
    probed *p = probed_find(pf, npf, opc, ta.shape);
    unsigned bad = 0;
    if (!p || !row_reads(&p->row, w, &ta, &bad)) {
      if (later[i] == 2) { /* the table's row misreads it and nvdisasm does not read it either */
        row_reads(fm, w, &ta, &bad);
        rc = rs_errf(e, name, x->line, "%s /*%04x*/ %s: operand %u is %u in the cubin, %u in the listing: not the "
                     "listing of this cubin", x->func, x->addr, ta.op, bad,
                     bits_at(w, (unsigned)fm->off[bad], rs_tk_width[ta.kind[bad]]), ta.val[bad]);
        break;
      }
      p = NULL;
    }
    if (later[i] == 2) st->contradicted++;
    uint32_t which = 0;
    for (unsigned k = 0; k < ta.n; k++)
      if (ta.val[k] != tb.val[k]) which |= 1u << k;
    if (!which) continue;
    char why[300];
    if (p && !rs_sass_encode_row(&p->row, w, &tb, which, why, sizeof why)) {
      wrote[i] = (uint32_t)__builtin_popcount(which);
      st->probed++;
      continue;
    }
    char twhy[200] = "";
    if (o->probe_only) snprintf(twhy, sizeof twhy, "%s 0x%03x '%s' (sm_%u): no field for a changed operand", ta.op, opc,
                                ta.shape, c->sm);
    else if (p) { /* name the operand neither the table nor the probe has (the table's first gap may be one
                   * the probe filled: FlashAttention-2 sm_86 named LDGSTS's operand 0, found, not its desc[]) */
      unsigned k = 0;
      while (k < ta.n && !((which >> k & 1) && p->off[k] < 0)) k++;
      const rs_sass_form *tf = rs_sass_form_find(c->sm, opc, ta.shape);
      snprintf(twhy, sizeof twhy, "no field for operand %u (%c) of %s 0x%03x '%s' (sm_%u, %s%u samples)", k < ta.n ? k : 0,
               ta.shape[k < ta.n ? k : 0], ta.op, opc, ta.shape, c->sm, tf ? "the table learned it from " : "not in the table, ",
               tf ? tf->samples : 0);
    } else if (rs_sass_encode(c->sm, w, &tb, which, twhy, sizeof twhy) == 0) continue; /* not reached: pass 1 tried */
    const char *more = p ? ", nor does nvdisasm's probe pin it down" : nd ? ", and nvdisasm does not read its variants" : "";
    uint32_t fk = (uint32_t)(fof[i] - c->funcs);
    if (o->keep_refused) { /* this function keeps ptxas's code; the rest goes on */
      if (!kept[fk]) {
        kept[fk] = 2;
        st->kept = rs_xrealloc(st->kept, sizeof *st->kept * (st->nkept + 1));
        st->kept[st->nkept].func = fk;
        snprintf(st->kept[st->nkept].why, sizeof st->kept[st->nkept].why, "/*%04x*/: %.200s%s%.60s", x->addr, twhy,
                 more, nd_why);
        st->nkept++;
      }
      continue;
    }
    rc = rs_errf(e, name, y->line, "%s /*%04x*/: %s%s%s: the kernel is refused", x->func, x->addr, twhy, more, nd_why);
    (void)func_of;
    break;
  }
  free(pf);
  if (!rc) {
    uint8_t *changed = rs_xcalloc(c->nfuncs + 1, 1); /* per function: an instruction re-encoded */
    for (uint32_t i = 0; i < a.n; i++) {
      if (kept[fof[i] - c->funcs]) continue; /* ptxas's words stay */
      if (wrote[i] && !changed[fof[i] - c->funcs]) st->funcs_changed++, changed[fof[i] - c->funcs] = 1;
      st->changed += wrote[i] > 0;
      st->tokens += wrote[i];
      uint8_t *p = (uint8_t *)fof[i]->code + a.v[i].addr; /* into c->bytes, which c owns */
      for (int k = 0; k < 16; k++) p[k] = (uint8_t)(words[2 * i + k / 8] >> 8 * (k % 8));
    }
    free(changed);
    st->funcs = c->nfuncs;
    st->insts = a.n;
    for (uint32_t k = 0; k < c->nfuncs; k++) {
      if (k < 8) st->regs_before[k] = nf[k].regcount;
      uint32_t n = regcount && !kept[k] ? regcount[k] : nf[k].regcount; /* a kept function: ptxas's count */
      if (k < 8) st->regs_after[k] = n;
      if (n != nf[k].regcount) rs_nvinfo_set_regcount(c, &nf[k], n);
    }
  }
  free(words);
  free(fof);
  free(later);
  free(wrote);
  free(kept);
  free(nf);
  rs_sass_ilines_free(&a);
  rs_sass_ilines_free(&b);
  return rc;
}

int rs_sass_lower(rs_cubin *c, const char *orig, const char *next, const uint32_t *regcount, const char *name,
                  rs_lower_stats *st, rs_err *e) {
  return rs_sass_lower_opts(c, orig, next, regcount, name, NULL, st, e);
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

void rs_lower_stats_free(rs_lower_stats *st) {
  free(st->kept);
  st->kept = NULL;
  st->nkept = 0;
}

char *rs_sass_listing_keep(const rs_cubin *c, const char *orig, const char *next, const uint8_t *kept, rs_err *e) {
  rs_sass_ilines a, b;
  if (rs_sass_ilines_of(orig, "original listing", &a, e)) return NULL;
  if (rs_sass_ilines_of(next, "new listing", &b, e)) {
    rs_sass_ilines_free(&a);
    return NULL;
  }
  if (a.n != b.n) {
    rs_sass_ilines_free(&a);
    rs_sass_ilines_free(&b);
    rs_errf(e, "new listing", 0, "%u instructions, the original has %u", b.n, a.n);
    return NULL;
  }
  size_t cap = strlen(next) + strlen(orig) + 1, n = 0, at = 0;
  char *out = rs_xmalloc(cap);
  for (uint32_t i = 0; i < b.n; i++) {
    const rs_cubin_func *f = rs_cubin_find(c, b.v[i].func);
    if (!f || !kept[f - c->funcs]) continue;
    size_t off = (size_t)(b.v[i].text - next);
    memcpy(out + n, next + at, off - at), n += off - at;
    memcpy(out + n, a.v[i].text, a.v[i].len), n += a.v[i].len;
    at = off + b.v[i].len;
  }
  memcpy(out + n, next + at, strlen(next) - at + 1);
  rs_sass_ilines_free(&a);
  rs_sass_ilines_free(&b);
  return out;
}
