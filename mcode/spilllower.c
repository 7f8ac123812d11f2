/* spilllower.c - lowering a free-mode listing in which spill accesses became MOVs or NOPs
 * (sass/spills.h): every other instruction goes through rs_sass_lower (registers re-encoded,
 * counts set), then each rewritten instruction's words are written from scratch (spillenc.c:
 * MOV/NOP with its new control bits), and only then is the hazard walk run, on the new control
 * bits. The judge stays nvdisasm (rs_sass_crosscheck, by the caller). */
#include "sass/spills.h"
#include "mcode/mcode.h"
#include "cubin/spillenc.h"
#include "front/front.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool starts_op(const char *t, uint32_t n, const char *op) {
  size_t k = strlen(op);
  return n >= k && !memcmp(t, op, k) && (n == k || t[k] == ' ' || t[k] == '.');
}

/* Is instruction line y (of the new listing) a rewrite of x (the original's)? */
static bool rewrite_of(const rs_sass_iline *x, const rs_sass_iline *y) {
  return (starts_op(x->text, x->len, "STL") || starts_op(x->text, x->len, "LDL")) &&
         (starts_op(y->text, y->len, "MOV") || starts_op(y->text, y->len, "NOP") ||
          starts_op(y->text, y->len, "IMAD.WIDE.U32"));
}

int rs_spills_count_rewritten(const char *orig, const char *next, const char *name, uint32_t *count, rs_err *e) {
  *count = 0;
  rs_sass_ilines a, b;
  if (rs_sass_ilines_of(orig, name, &a, e)) return -1;
  if (rs_sass_ilines_of(next, name, &b, e)) {
    rs_sass_ilines_free(&a);
    return -1;
  }
  for (uint32_t i = 0; i < a.n && i < b.n; i++) *count += rewrite_of(&a.v[i], &b.v[i]);
  rs_sass_ilines_free(&a);
  rs_sass_ilines_free(&b);
  return 0;
}

static int reg_num(const char *s, size_t n, unsigned *r) {
  if (n == 2 && !memcmp(s, "RZ", 2)) return *r = 255, 0;
  if (n < 2 || s[0] != 'R') return -1;
  unsigned v = 0;
  for (size_t i = 1; i < n; i++) {
    if (!isdigit((unsigned char)s[i])) return -1;
    v = v * 10 + (unsigned)(s[i] - '0');
  }
  return v > 254 ? -1 : (*r = v, 0);
}

int rs_spills_lower(rs_cubin *c, const char *orig, const char *next, const uint32_t *regcount, const char *name,
                    rs_spill_lower_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  rs_sass_ilines a, b;
  if (rs_sass_ilines_of(orig, name, &a, e)) return -1;
  if (rs_sass_ilines_of(next, name, &b, e)) {
    rs_sass_ilines_free(&a);
    return -1;
  }
  int rc = 0;
  if (a.n != b.n) rc = rs_errf(e, name, 0, "the listings have %u and %u instructions", a.n, b.n);
  /* the new listing with the rewritten lines as they were: what rs_sass_lower re-encodes */
  size_t nl = strlen(next), cap = nl + 1024, n = 0, pos = 0;
  char *regs = rs_xmalloc(cap);
  uint8_t *rw = rs_xcalloc(a.n + 1, 1);
  for (uint32_t i = 0; !rc && i < a.n; i++) {
    const rs_sass_iline *x = &a.v[i], *y = &b.v[i];
    if (!rewrite_of(x, y)) continue;
    rw[i] = 1;
    size_t at = (size_t)(y->text - next);
    while (n + (at - pos) + x->len + 1 > cap) regs = rs_xrealloc(regs, cap *= 2);
    memcpy(regs + n, next + pos, at - pos);
    n += at - pos;
    memcpy(regs + n, x->text, x->len);
    n += x->len;
    pos = at + y->len;
  }
  while (n + (nl - pos) + 1 > cap) regs = rs_xrealloc(regs, cap *= 2);
  memcpy(regs + n, next + pos, nl - pos);
  n += nl - pos;
  regs[n] = 0;
  if (!rc) rc = rs_sass_lower(c, orig, regs, regcount, name, &st->low, e);
  /* the rewritten instructions, from scratch */
  for (uint32_t i = 0; !rc && i < a.n; i++) {
    if (!rw[i]) continue;
    const rs_sass_iline *y = &b.v[i];
    const rs_cubin_func *f = rs_cubin_find(c, y->func);
    if (!f || y->addr % 16 || y->addr >= f->size) {
      rc = rs_errf(e, name, y->line, "%s /*%04x*/: not in the cubin", y->func, y->addr);
      break;
    }
    uint64_t w[2];
    rs_cubin_words(f, y->addr, w);
    bool nop = starts_op(y->text, y->len, "NOP"), wide = starts_op(y->text, y->len, "IMAD.WIDE.U32");
    enum rs_spill_kind kind = nop ? RS_SPILL_NOP : wide ? RS_SPILL_WIDE : RS_SPILL_MOV;
    unsigned rd = 0, rs = 0;
    if (!nop) { /* "MOV Rd, Rs" or "IMAD.WIDE.U32 Rd, RZ, RZ, Rs" */
      const char *p = y->text + (wide ? 13 : 3), *end = y->text + y->len;
      while (p < end && *p == ' ') p++;
      const char *comma = memchr(p, ',', (size_t)(end - p));
      const char *q = comma ? comma + 1 : end;
      if (wide && comma) { /* skip ", RZ, RZ," */
        while (q < end && *q == ' ') q++;
        if (end - q >= 8 && !memcmp(q, "RZ, RZ,", 7)) q += 7;
        else comma = NULL;
      }
      while (q < end && *q == ' ') q++;
      size_t ql = (size_t)(end - q);
      while (ql && q[ql - 1] == ' ') ql--;
      if (!comma || reg_num(p, (size_t)(comma - p), &rd) || reg_num(q, ql, &rs)) {
        rc = rs_errf(e, name, y->line, "%s /*%04x*/: '%.*s' is not %s", y->func, y->addr, (int)y->len, y->text,
                     wide ? "IMAD.WIDE.U32 Rd, RZ, RZ, Rs" : "MOV Rd, Rs");
        break;
      }
    }
    char why[160];
    uint64_t nw[2];
    if (rs_spill_encode(c->sm, kind, rd, rs, rs_spill_ctl(c->sm, w[1], kind), nw, why, sizeof why)) {
      rc = rs_errf(e, name, y->line, "%s /*%04x*/: %s: the kernel is refused", y->func, y->addr, why);
      break;
    }
    uint8_t *p = (uint8_t *)f->code + y->addr; /* into c->bytes, which c owns */
    for (int k = 0; k < 16; k++) p[k] = (uint8_t)(nw[k / 8] >> 8 * (k % 8));
    st->rewritten++;
    if (nop) st->nops++;
    else st->movs++;
  }
  /* the waits of the rewritten instructions, from the same walk the Problem was built with */
  if (!rc) {
    char tg[16];
    snprintf(tg, sizeof tg, "sm_%u", c->sm);
    rs_module *m = rs_module_parse(name, rs_xstrndup(next, strlen(next)), strlen(next), RS_SRC_SASS, tg, e);
    if (!m) rc = -1;
    for (uint32_t k = 0; !rc && k < m->nfuncs; k++) {
      const rs_func *f = m->funcs[k];
      uint64_t (*ctl)[2] = NULL;
      if ((rc = rs_sass_ctl_of(c, f, name, &ctl, e))) break;
      uint8_t *mark = rs_xcalloc(f->ninsts + 1, 1);
      uint32_t any = 0;
      for (uint32_t i = 0, j = 0; i < f->ninsts; i++) /* rewritten lines come in order */
        for (; j < a.n; j++) {
          if (strcmp(b.v[j].func, f->name)) continue;
          if (b.v[j].addr > f->insts[i].addr) break;
          if (b.v[j].addr == f->insts[i].addr) {
            mark[i] = rw[j];
            any += rw[j];
            j++;
            break;
          }
        }
      if (any) {
        rs_spill_waits(f, ctl, mark);
        const rs_cubin_func *cf = rs_cubin_find(c, f->name);
        for (uint32_t i = 0; cf && i < f->ninsts; i++) {
          if (!mark[i]) continue;
          uint8_t *p = (uint8_t *)cf->code + f->insts[i].addr;
          for (int q = 8; q < 16; q++) p[q] = (uint8_t)(ctl[i][1] >> 8 * (q - 8));
        }
      }
      free(mark);
      free(ctl);
    }
    rs_module_free(m);
  }
  if (!rc) rc = rs_sass_hazards_listing(c, next, name, &st->hazards, st->first_hazard, sizeof st->first_hazard, e);
  if (!rc && st->hazards)
    rc = rs_errf(e, name, 0, "%u scoreboard hazard%s with the new control bits, first: %s: the kernel is refused",
                 st->hazards, st->hazards == 1 ? "" : "s", st->first_hazard);
  free(regs);
  free(rw);
  rs_sass_ilines_free(&a);
  rs_sass_ilines_free(&b);
  return rc;
}
