/* mirtext.c - lines and operand spans of a MIR text (mirtext.h). */
#include "mir/mirtext.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_lines_of(const char *s, rs_lines *l) {
  size_t n = strlen(s), cap = 1024;
  l->s = s;
  l->start = rs_xmalloc(cap * sizeof *l->start);
  l->nlines = 0;
  l->start[0] = 0;
  size_t i = 0;
  for (;;) {
    if (l->nlines + 2 >= cap) l->start = rs_xrealloc(l->start, (cap *= 2) * sizeof *l->start);
    l->start[++l->nlines] = (uint32_t)i;
    const char *nl = memchr(s + i, '\n', n - i);
    if (!nl) break;
    i = (size_t)(nl - s) + 1;
    if (i >= n) break;
  }
  l->start[l->nlines + 1] = (uint32_t)n;
}

int rs_mir_why(char *w, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w, n, fmt, ap);
  va_end(ap);
  return -1;
}

void rs_lines_free(rs_lines *l) {
  free(l->start);
  l->start = NULL;
}

static const char *const flag_words[] = {"implicit", "implicit-def", "def", "dead", "killed", "undef",
                                         "internal", "early-clobber", "debug-use", "renamable"};

uint32_t rs_mir_op_start(const char *src, const rs_operand *o) {
  uint32_t st = o->text_off;
  for (;;) {
    uint32_t k = st;
    while (k > 0 && src[k - 1] == ' ') k--;
    uint32_t w = k;
    while (w > 0 && (islower((unsigned char)src[w - 1]) || src[w - 1] == '-')) w--;
    bool flag = false;
    for (size_t i = 0; i < sizeof flag_words / sizeof *flag_words && w < k; i++)
      flag |= strlen(flag_words[i]) == k - w && !memcmp(src + w, flag_words[i], k - w);
    if (!flag) return st;
    st = w;
  }
}
