/* crosscheck.c - is the written cubin what we meant? Asked of nvdisasm, not of our encoder.
 *
 * One `nvdisasm -lrm narrow` run (full output: code, -plr liveness, .nv.info) per cubin, the
 * original and the written one (headers rewritten for nvdisasm < 12.8 into temporary files):
 *   - its .text part, completed as `corpus disasm` does (sm_90 holes filled, desc[] written),
 *     must list every instruction exactly as the intended listing says;
 *   - per row, the number of GPR and of PRED registers live before the instruction (read or
 *     live through in -plr's table) must equal the original's: a recolouring keeps it;
 *   - every other line (ELF header flags, .nv.info attributes, constant sections) must equal
 *     the original's, except EIATTR_REGCOUNT and SHI_REGISTERS, which must be the intended
 *     count (SHI_REGISTERS only where the original has one).
 * The original's run is the one the load takes (rs_xcheck_code derives `-c`'s listing and the
 * -plr listing from it), so each cubin is disassembled once; a written cubin byte-identical to
 * the original is not disassembled again. */
#include "cubin/lower.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  const char *s;
  size_t len;
} span;

/* Lines of a text (pointers into it). */
static span *lines_of(const char *t, uint32_t *n) {
  span *v = NULL;
  uint32_t cap = 0;
  *n = 0;
  for (const char *p = t; *p;) {
    const char *nl = strchr(p, '\n');
    span s = {p, nl ? (size_t)(nl - p) : strlen(p)};
    RS_PUSH(v, *n, cap, s);
    p += s.len + (nl != NULL);
  }
  return v;
}

/* Per register file of an `-lrm narrow` row ("// |  3 v: ^   | 1 :  |  5  ::: |"): the registers
 * live before the instruction, the columns marked v (read), x (read and redefined) or : (live
 * through). Unlike the printed count (live before plus written), this does not depend on which
 * register a definition reuses, so a valid recolouring keeps it row for row. */
static unsigned columns(span c, uint32_t *v, int *gpr_top) {
  unsigned n = 0;
  const char *p = c.s + 3, *end = c.s + c.len; /* past "// " */
  while (p < end && n < 8) {
    if (*p != '|') {
      p++;
      continue;
    }
    const char *q = p + 1;
    while (q < end && *q != '|') q++;
    if (q >= end) break;
    const char *x = p + 1;
    while (x < q && *x == ' ') x++;
    while (x < q && *x >= '0' && *x <= '9') x++; /* the printed count */
    uint32_t live = 0;
    for (const char *c0 = x + 1; x < q; x++) {
      live += *x == 'v' || *x == 'x' || *x == ':';
      if (!n && gpr_top && (*x == 'v' || *x == 'x' || *x == ':' || *x == '^') && x - c0 > *gpr_top)
        *gpr_top = (int)(x - c0); /* the column of R(x - c0): the count is followed by one blank */
    }
    v[n++] = live;
    p = q;
  }
  return n;
}

/* The header "// |GPR |PRED |UGPR |UPRED |": file k of each column (0 GPR, 1 PRED, 2 UGPR, 3 UPRED). */
static void files_of(span l, uint8_t *f) {
  unsigned n = 0;
  for (size_t i = 0; i + 1 < l.len && n < 8; i++) {
    if (l.s[i] != '|') continue;
    const char *p = l.s + i + 1;
    size_t left = l.len - i - 1;
    if (left >= 5 && !memcmp(p, "UPRED", 5)) f[n++] = 3;
    else if (left >= 4 && !memcmp(p, "UGPR", 4)) f[n++] = 2;
    else if (left >= 4 && !memcmp(p, "PRED", 4)) f[n++] = 1;
    else if (left >= 3 && !memcmp(p, "GPR", 3)) f[n++] = 0;
  }
}

static bool has(span l, const char *pat);

/* The lines to compare: all but comment-only ones (the -plr table's header, boxes and legend, and
 * section banners, whose widths and number follow the register columns; the `nvinfo : ATTR`
 * headers stay), each with the table's file order from the last header seen. */
static span *kept_lines(const char *t, uint32_t *n, uint8_t (**files)[8]) {
  uint32_t all;
  span *l = lines_of(t, &all);
  uint8_t cur[8] = {0, 1, 2, 3, 0, 0, 0, 0};
  *files = rs_xmalloc(sizeof **files * (all + 1));
  *n = 0;
  for (uint32_t i = 0; i < all; i++) {
    size_t w = 0;
    while (w < l[i].len && isspace((unsigned char)l[i].s[w])) w++;
    if (w + 1 < l[i].len && l[i].s[w] == '/' && l[i].s[w + 1] == '/' && !has(l[i], "nvinfo : ")) {
      if (has(l[i], "|GPR")) files_of(l[i], cur);
      continue;
    }
    memcpy((*files)[*n], cur, 8);
    l[(*n)++] = l[i];
  }
  return l;
}

static bool has(span l, const char *pat) {
  size_t m = strlen(pat);
  for (size_t i = 0; i + m <= l.len; i++)
    if (!memcmp(l.s + i, pat, m)) return true;
  return false;
}

/* A `.section NAME,...` directive (not .sectioninfo/.sectionflags). */
static bool is_section(span l) {
  size_t i = 0;
  while (i < l.len && isspace((unsigned char)l.s[i])) i++;
  return l.len - i > 9 && !memcmp(l.s + i, ".section", 8) && isspace((unsigned char)l.s[i + 8]);
}

/* An instruction line: address comment then something other than a directive. */
static bool is_inst(span l) {
  size_t i = 0;
  while (i < l.len && isspace((unsigned char)l.s[i])) i++;
  if (i + 2 >= l.len || l.s[i] != '/' || l.s[i + 1] != '*' || !isxdigit((unsigned char)l.s[i + 2])) return false;
  const char *e = memchr(l.s + i, '/', l.len - i - 1);
  e = e ? memchr(e + 1, '/', (size_t)(l.s + l.len - e - 1)) : NULL; /* the closing "*" "/" */
  if (!e) return false;
  e++;
  while (e < l.s + l.len && isspace((unsigned char)*e)) e++;
  return e < l.s + l.len && *e != '.';
}

/* The -lrm count columns of an instruction line ("// |  3 |  1 |  5  |"), or an empty span. */
static span counts_of(span l) {
  for (size_t i = 0; i + 3 < l.len; i++)
    if (!memcmp(l.s + i, "// |", 4) || !memcmp(l.s + i, "// +", 4)) return (span){l.s + i, l.len - i};
  return (span){l.s, 0};
}

/* Run nvdisasm -lrm narrow on cubin c, read from path (NULL: held in memory only): through a
 * temporary file when nvdisasm cannot read it there (its header rewritten for nvdisasm < 12.8). */
static int disasm_cubin(const rs_nvdisasm *nd, const char *path, const rs_cubin *c, const char *name, char **out,
                        rs_err *e) {
  *out = NULL;
  char tmp[] = "/tmp/regsweep-xcheck-XXXXXX";
  bool made = false;
  const char *feed = rs_nvdisasm_feed(nd, c, path, tmp, &made, e);
  if (!feed) return -1;
  static const char *const args[] = {"-lrm", "narrow", NULL};
  int rc = rs_nvdisasm_run(nd, feed, name, args, out, e);
  if (made) unlink(tmp);
  return rc;
}

/* The .text part of a full listing (lines before the first section and inside .text.*
 * sections) without the -lrm columns and their box lines: what `nvdisasm -c` prints, for
 * rs_sass_complete. */
static char *text_part(const char *full) {
  uint32_t n;
  span *l = lines_of(full, &n);
  size_t cap = strlen(full) + 1, k = 0;
  char *o = rs_xmalloc(cap);
  bool in = true;
  for (uint32_t i = 0; i < n; i++) {
    if (is_section(l[i])) in = has(l[i], ".text.");
    if (!in) continue;
    size_t len = l[i].len;
    for (size_t j = 0; j + 3 < len; j++)
      if (l[i].s[j] == '/' && l[i].s[j + 1] == '/' && l[i].s[j + 2] == ' ' && (l[i].s[j + 3] == '|' || l[i].s[j + 3] == '+')) {
        size_t cut = j;
        while (cut && (l[i].s[cut - 1] == ' ' || l[i].s[cut - 1] == '\t')) cut--;
        if (!cut) len = SIZE_MAX; /* a box line of the table */
        else len = cut;
        break;
      }
    if (len == SIZE_MAX) continue;
    memcpy(o + k, l[i].s, len);
    k += len;
    o[k++] = '\n';
  }
  o[k] = 0;
  free(l);
  return o;
}

/* Collapse runs of blanks, for comparing instruction texts printed with other spacing. */
static void squash(const char *s, size_t n, char *o, size_t on) {
  size_t k = 0;
  bool sp = false;
  for (size_t i = 0; i < n && k + 1 < on; i++) {
    if (isspace((unsigned char)s[i])) {
      sp = k > 0;
      continue;
    }
    if (sp && k + 2 < on) o[k++] = ' ';
    sp = false;
    o[k++] = s[i];
  }
  o[k] = 0;
}

static void first(rs_crosscheck_stats *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void first(rs_crosscheck_stats *st, const char *fmt, ...) {
  if (st->first[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->first, sizeof st->first, fmt, ap);
  va_end(ap);
}

/* Index of function `fn` in c, or -1. */
static int func_index(const rs_cubin *c, const char *fn, size_t n) {
  for (uint32_t k = 0; k < c->nfuncs; k++)
    if (strlen(c->funcs[k].name) == n && !memcmp(c->funcs[k].name, fn, n)) return (int)k;
  return -1;
}

/* A section banner ("//----- .text.NAME -----"): 1 for what -c prints (.text sections, the
 * SYMBOLS table), 0 another, -1 not a banner. */
static int banner(span l) {
  if (l.len < 8 || memcmp(l.s, "//------", 8)) return -1;
  return has(l, " .text.") || has(l, " SYMBOLS ");
}

/* The NOP ptxas pads a function's section with past its symbol's end (sm_75-90). */
static bool pad_nop(const uint64_t w[2]) { return w[0] == 0x7918 && w[1] == 0x000fc00000000000ull; }

char *rs_xcheck_code(const rs_cubin *c, const char *full, bool columns) {
  uint32_t n;
  span *l = lines_of(full, &n);
  rs_sbuf o = {0};
  bool in = true, legend = false;
  const rs_cubin_func *f = NULL; /* the function of the current .text section */
  size_t after_last = 0;         /* where its last instruction line ends in o */
  uint64_t last = 0;
  bool any = false, ok = true;
  for (uint32_t i = 0; i <= n && ok; i++) {
    int b = i < n ? banner(l[i]) : 0;
    if (!columns && f && any && (i == n || b >= 0)) { /* the section ends: its padding, as -c prints it */
      rs_sbuf pad = {0};
      for (uint64_t a = last + 16; a + 16 <= f->size && ok; a += 16) {
        uint64_t w[2];
        rs_cubin_words(f, a, w);
        ok = pad_nop(w);
        rs_sbuf_printf(&pad, "        /*%04llx*/                   NOP;\n", (unsigned long long)a);
      }
      if (pad.n) { /* spliced in after the last instruction line */
        size_t tail = o.n - after_last;
        char *t = rs_xmalloc(tail + 1);
        memcpy(t, o.s + after_last, tail);
        o.n = after_last;
        rs_sbuf_put(&o, pad.s, pad.n);
        rs_sbuf_put(&o, t, tail);
        free(t);
      }
      free(pad.s);
      f = NULL, any = false;
    }
    if (i == n) break;
    if (b >= 0) in = b == 1, f = NULL, any = false, legend = false;
    if (!in) continue;
    span x = l[i];
    if (is_section(x)) { /* .section .text.NAME,"ax",@progbits */
      const char *t = strstr(x.s, ".text.");
      const char *e = t ? t + 6 : NULL;
      while (e && e < x.s + x.len && *e != ',' && !isspace((unsigned char)*e)) e++;
      int k = t && t < x.s + x.len ? func_index(c, t + 6, (size_t)(e - t - 6)) : -1;
      f = k >= 0 ? &c->funcs[k] : NULL;
      if (!f) ok = columns; /* -c's padding needs the function's words */
    }
    size_t len = x.len;
    if (!columns) {
      size_t w = 0;
      while (w < len && isspace((unsigned char)x.s[w])) w++;
      if (w + 10 <= len && !memcmp(x.s + w, "// Legend:", 10)) legend = true;
      else if (legend && !(w + 2 <= len && !memcmp(x.s + w, "//", 2))) {
        legend = false;
        if (w == len) continue; /* -lrm follows it with one blank line more than -c */
      }
      if (legend) continue;
      for (size_t j = 0; j + 3 < len; j++)
        if (x.s[j] == '/' && x.s[j + 1] == '/' && x.s[j + 2] == ' ' && (x.s[j + 3] == '|' || x.s[j + 3] == '+')) {
          size_t cut = j;
          while (cut && (x.s[cut - 1] == ' ' || x.s[cut - 1] == '\t')) cut--;
          len = cut ? cut : SIZE_MAX; /* nothing left: a box line of the table */
          break;
        }
      if (len == SIZE_MAX) continue;
    }
    rs_sbuf_put(&o, x.s, len);
    rs_sbuf_put(&o, "\n", 1);
    if (f && is_inst(x)) {
      size_t w = strspn(x.s, " \t");
      last = strtoull(x.s + w + 2, NULL, 16), any = true, after_last = o.n;
    }
  }
  free(l);
  if (!ok) {
    free(o.s);
    return NULL;
  }
  if (!o.s) rs_sbuf_put(&o, "", 0);
  return o.s;
}

static uint32_t hexword(span l) {
  for (size_t i = 0; i + 2 < l.len; i++)
    if (l.s[i] == '0' && l.s[i + 1] == 'x') return (uint32_t)strtoul(l.s + i, NULL, 16);
  return UINT32_MAX;
}

int rs_sass_crosscheck(const rs_nvdisasm *nd, const char *written, const char *orig_cubin, const char *intended,
                       const uint32_t *regcount, rs_crosscheck_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  rs_cubin co;
  if (rs_cubin_load(orig_cubin, &co, e)) return -1;
  int rc = rs_sass_crosscheck_loaded(nd, written, &co, orig_cubin, orig_cubin, intended, regcount, st, e);
  rs_cubin_free(&co);
  return rc;
}

int rs_sass_crosscheck_loaded(const rs_nvdisasm *nd, const char *written, const rs_cubin *co, const char *orig_path,
                              const char *orig_name, const char *intended, const uint32_t *regcount,
                              rs_crosscheck_stats *st, rs_err *e) {
  return rs_sass_crosscheck_full(nd, written, co, orig_path, orig_name, NULL, intended, regcount, st, e);
}

int rs_xcheck_disasm(const rs_nvdisasm *nd, const rs_cubin *c, const char *path, const char *name, char **full,
                     rs_err *e) {
  return disasm_cubin(nd, path, c, name, full, e);
}

int rs_sass_crosscheck_full(const rs_nvdisasm *nd, const char *written, const rs_cubin *co, const char *orig_path,
                            const char *orig_name, const char *orig_full, const char *intended,
                            const uint32_t *regcount, rs_crosscheck_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  rs_cubin cw;
  char *fw = NULL, *fo = NULL, *done = NULL, *tp = NULL;
  int rc = rs_cubin_load(written, &cw, e);
  bool same = !rc && co->len == cw.len && !memcmp(co->bytes, cw.bytes, co->len);
  if (!rc && same && orig_full) /* byte-identical (pinned): nvdisasm would print the same again */
    fw = rs_xstrndup(orig_full, strlen(orig_full));
  else if (!rc)
    rc = disasm_cubin(nd, written, &cw, written, &fw, e);
  if (!rc && (same || orig_full)) fo = rs_xstrndup(same ? fw : orig_full, strlen(same ? fw : orig_full));
  else if (!rc)
    rc = disasm_cubin(nd, orig_path, co, orig_name, &fo, e);
  rs_sass_stats ss;
  if (!rc) {
    tp = text_part(fw);
    rc = rs_sass_complete(&cw, tp, written, &done, &ss, e);
  }
  rs_sass_ilines got = {0}, want = {0};
  if (!rc) rc = rs_sass_ilines_of(done, written, &got, e);
  if (!rc) rc = rs_sass_ilines_of(intended, "intended listing", &want, e);
  if (rc) goto out;
  st->funcs = cw.nfuncs;
  /* 1. every instruction as intended; with -lrm nvdisasm stops at the function symbol's end, so
   * trailing NOP padding the intended (-c) listing shows is compared only as NOPs */
  uint32_t i = 0, j = 0;
  while (i < got.n || j < want.n) {
    const rs_sass_iline *g = i < got.n ? &got.v[i] : NULL, *w = j < want.n ? &want.v[j] : NULL;
    if (w && (!g || strcmp(g->func, w->func) || g->addr != w->addr)) {
      bool pad = w->len == 3 && !memcmp(w->text, "NOP", 3) && (!g || strcmp(g->func, w->func) || g->addr > w->addr);
      if (!pad) {
        st->mismatches++;
        first(st, "%s /*%04x*/: nvdisasm lists no instruction there, we meant '%.*s'", w->func, w->addr, (int)w->len,
              w->text);
      }
      j++;
      continue;
    }
    if (!w) {
      st->mismatches++;
      first(st, "%s /*%04x*/: nvdisasm lists '%.*s', the intended listing has nothing there", g->func, g->addr,
            (int)g->len, g->text);
      i++;
      continue;
    }
    char a[512], b[512];
    squash(g->text, g->len, a, sizeof a);
    squash(w->text, w->len, b, sizeof b);
    st->insts++;
    if (strcmp(a, b)) {
      st->mismatches++;
      first(st, "%s /*%04x*/: nvdisasm prints '%s', we meant '%s'", g->func, g->addr, a, b);
    }
    i++, j++;
  }
  /* 2. live counts and 3. every other line, against the original's output */
  uint32_t nw, no;
  uint8_t (*fa)[8] = NULL, (*fb)[8] = NULL; /* per kept line: the -plr table's files in column order */
  span *lw = kept_lines(fw, &nw, &fa), *lo = kept_lines(fo, &no, &fb);
  if (nw != no) {
    st->attr_mismatches++;
    first(st, "nvdisasm prints %u lines for the written cubin, %u for the original", nw, no);
  }
  int cur = -1;           /* function of the current .text section */
  int reg_for = -1;       /* inside an EIATTR_REGCOUNT record: its function once named */
  bool in_reg = false;
  bool *seen_reg = rs_xcalloc(cw.nfuncs + 1, sizeof *seen_reg);
  int *plr_top = rs_xmalloc(sizeof *plr_top * (cw.nfuncs + 1));
  for (uint32_t k = 0; k < cw.nfuncs; k++) plr_top[k] = -1;
  for (i = 0; i < nw && i < no; i++) {
    span a = lw[i], b = lo[i];
    if (is_section(a)) {
      cur = -1;
      const char *t = NULL;
      for (size_t q = 0; q + 6 <= a.len && !t; q++)
        if (!memcmp(a.s + q, ".text.", 6)) t = a.s + q;
      if (t) {
        const char *s = t + 6, *end = s;
        while (end < a.s + a.len && *end != ',' && !isspace((unsigned char)*end)) end++;
        cur = func_index(&cw, s, (size_t)(end - s));
      }
    }
    if (has(a, "nvinfo : ")) in_reg = has(a, "EIATTR_REGCOUNT"), reg_for = -1;
    span ca = counts_of(a), cb = counts_of(b);
    if (ca.len && cb.len && ca.s == a.s + strspn(a.s, " \t") && cb.s == b.s + strspn(b.s, " \t"))
      continue; /* a box line of the -lrm table: its width follows the columns */
    size_t ia = strspn(a.s, " \t"), ib = strspn(b.s, " \t");
    if (ia < a.len && ib < b.len && a.s[ia] == '/' && a.s[ia + 1] == '/' && a.len - ia == b.len - ib &&
        !memcmp(a.s + ia, b.s + ib, a.len - ia)) {
      st->attrs++; /* a comment line indented to the table's width (its legend) */
      continue;
    }
    if (cur >= 0) { /* inside .text: the -lrm table's columns apart, lines as the original's */
      if (is_inst(a) && (ca.len || cb.len)) {
        uint32_t va[8], vb[8], ga[4] = {0}, gb[4] = {0};
        int top = -1;
        unsigned na = columns(ca, va, &top), nb = columns(cb, vb, NULL);
        if (top > plr_top[cur]) plr_top[cur] = top;
        /* by file name: a file none of whose registers is used has no columns at all */
        for (unsigned k = 0; k < na && k < 8; k++) ga[fa[i][k] & 3] = va[k];
        for (unsigned k = 0; k < nb && k < 8; k++) gb[fb[i][k] & 3] = vb[k];
        st->live_rows++;
        if (ga[0] != gb[0] || ga[1] != gb[1]) {
          if (ga[0] + ga[1] < gb[0] + gb[1]) st->live_fewer++;
          else st->live_more++;
        } else if (ga[2] != gb[2] || ga[3] != gb[3]) {
          st->uniform_rows++;
        }
        continue;
      }
      span pa = {a.s, ca.len ? (size_t)(ca.s - a.s) : a.len}, pb = {b.s, cb.len ? (size_t)(cb.s - b.s) : b.len};
      while (pa.len && isspace((unsigned char)pa.s[pa.len - 1])) pa.len--;
      while (pb.len && isspace((unsigned char)pb.s[pb.len - 1])) pb.len--;
      if (!has(a, "SHI_REGISTERS=")) {
        st->attrs++;
        if (pa.len != pb.len || memcmp(pa.s, pb.s, pa.len)) {
          st->attr_mismatches++;
          first(st, "line %u differs: '%.*s' (written) vs '%.*s' (original)", i + 1, (int)pa.len, pa.s, (int)pb.len,
                pb.s);
        }
        continue;
      }
    }
    uint32_t want_n = UINT32_MAX, have_n = UINT32_MAX;
    int fk = -1;
    if (has(a, "SHI_REGISTERS=") && cur >= 0) {
      fk = cur;
      const char *p = strstr(a.s, "SHI_REGISTERS=");
      have_n = (uint32_t)strtoul(p + 14, NULL, 10);
    } else if (in_reg && has(a, ".word") && has(a, "index@(")) {
      const char *p = strstr(a.s, "index@(") + 7, *q = p;
      while (q < a.s + a.len && *q != ')') q++;
      reg_for = func_index(&cw, p, (size_t)(q - p));
    } else if (in_reg && reg_for >= 0 && has(a, ".word")) {
      fk = reg_for;
      have_n = hexword(a);
      seen_reg[fk] = true;
      reg_for = -1;
    }
    st->attrs++;
    if (fk >= 0) {
      uint32_t orig_n = has(b, "SHI_REGISTERS=") ? (uint32_t)strtoul(strstr(b.s, "SHI_REGISTERS=") + 14, NULL, 10)
                                                  : hexword(b);
      want_n = regcount ? regcount[fk] : orig_n;
      if (have_n == want_n) st->regcount_ok += !has(a, "SHI_REGISTERS=");
      else {
        st->attr_mismatches++;
        first(st, "%s: nvdisasm reads %u registers (%s), we meant %u", cw.funcs[fk].name, have_n,
              has(a, "SHI_REGISTERS=") ? "SHI_REGISTERS" : "EIATTR_REGCOUNT", want_n);
      }
      continue;
    }
    if (a.len != b.len || memcmp(a.s, b.s, a.len)) {
      st->attr_mismatches++;
      first(st, "line %u differs: '%.*s' (written) vs '%.*s' (original)", i + 1, (int)a.len, a.s, (int)b.len, b.s);
    }
  }
  for (uint32_t k = 0; k < cw.nfuncs; k++)
    if (!seen_reg[k]) {
      st->attr_mismatches++;
      first(st, "%s: nvdisasm shows no EIATTR_REGCOUNT", cw.funcs[k].name);
    }
  /* -plr's register count: no register at or past what the cubin now allocates (R63 is never
   * shown; ptxas's count is highest R + 3 but -plr may show a register of the 2 it reserves) */
  for (uint32_t k = 0; k < cw.nfuncs && regcount; k++) {
    if (plr_top[k] >= 0 && (uint32_t)plr_top[k] + 1 > regcount[k]) {
      st->plr_over++;
      first(st, "%s: nvdisasm -plr shows R%d in use, beyond the %u registers the cubin now allocates", cw.funcs[k].name,
            plr_top[k], regcount[k]);
    } else {
      st->plr_ok++;
    }
  }
  free(plr_top);
  free(seen_reg);
  free(fa);
  free(fb);
  free(lw);
  free(lo);
out:
  rs_sass_ilines_free(&got);
  rs_sass_ilines_free(&want);
  free(fw);
  free(fo);
  free(tp);
  free(done);
  rs_cubin_free(&cw);
  return rc;
}
