/* encode.c - an instruction's register operands as tokens, and writing them into its 128-bit
 * encoding through the learned fields (fields.c). Only register numbers are written: every
 * other bit (opcode, modifiers, immediates, scheduling and reuse) stays as ptxas wrote it. */
#include "cubin/lower.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char rs_tk_letter[RS_TK__N + 1] = "RUPQBGH"; /* a string: learn.c looks letters up with strchr */
const uint8_t rs_tk_width[RS_TK__N] = {8, 6, 3, 3, 4, 3, 3};

static bool ident(int c) { return isalnum(c) || c == '_'; }

/* "R12" -> R 12; "RZ" -> R 255; "URZ"; "PT"; "UPT"; "B3". -1 when not a register. */
static int classify(const char *s, size_t n, int guard, unsigned *val) {
  struct {
    const char *pre;
    int kind;
    unsigned zero, max;
  } k[] = {{"UR", RS_TK_UR, 63, 63}, {"UP", RS_TK_UP, 7, 7}, {"R", RS_TK_R, 255, 255},
           {"P", RS_TK_P, 7, 7},     {"B", RS_TK_B, ~0u, 15}};
  for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
    size_t pl = strlen(k[i].pre);
    if (n <= pl || memcmp(s, k[i].pre, pl)) continue;
    const char *d = s + pl;
    size_t dn = n - pl;
    unsigned v = 0;
    if (dn == 1 && (*d == 'Z' || *d == 'T')) {
      bool z = *d == 'Z' && (k[i].kind == RS_TK_R || k[i].kind == RS_TK_UR);
      bool t = *d == 'T' && (k[i].kind == RS_TK_P || k[i].kind == RS_TK_UP);
      if (!z && !t) return -1;
      v = k[i].zero;
    } else {
      for (size_t j = 0; j < dn; j++) {
        if (!isdigit((unsigned char)d[j]) || j > 3) return -1;
        v = v * 10 + (unsigned)(d[j] - '0');
      }
      if (v > k[i].max) return -1;
    }
    *val = v;
    if (guard) return k[i].kind == RS_TK_P ? RS_TK_GP : k[i].kind == RS_TK_UP ? RS_TK_GUP : -1;
    return k[i].kind;
  }
  return -1;
}

int rs_sass_tokens_of(const char *s, size_t n, rs_sass_tokens *t, char *skel, size_t skeln) {
  memset(t, 0, sizeof *t);
  size_t sk = 0, i = 0;
  bool have_op = false, guard = false;
#define SK(c)                                                                                                      \
  do {                                                                                                             \
    if (skel && sk + 1 < skeln) skel[sk++] = (c);                                                                  \
  } while (0)
  while (i < n) {
    char c = s[i];
    if (c == '@') {
      guard = true;
      SK(c);
      i++;
      continue;
    }
    if (c == '.') { /* a modifier or a label: .reuse, .64, .L_x_3 */
      SK(c);
      i++;
      while (i < n && ident((unsigned char)s[i])) {
        SK(s[i]);
        i++;
      }
      continue;
    }
    if (isdigit((unsigned char)c)) { /* a number: 0x1f, 16816 */
      while (i < n && ident((unsigned char)s[i])) {
        SK(s[i]);
        i++;
      }
      continue;
    }
    if (!ident((unsigned char)c) || c == '_') {
      if (c != '!') guard = false; /* `@!P0`: the guard's predicate follows '@' and maybe '!' */
      SK(c);
      i++;
      continue;
    }
    size_t b = i;
    while (i < n && ident((unsigned char)s[i])) i++;
    unsigned v;
    int k = -1;
    if (!guard && !have_op) { /* the mnemonic */
      have_op = true;
      snprintf(t->op, sizeof t->op, "%.*s", (int)(i - b), s + b);
    } else {
      k = classify(s + b, i - b, guard, &v);
    }
    guard = false;
    if (k < 0) {
      for (size_t j = b; j < i; j++) SK(s[j]);
      continue;
    }
    if (t->n >= RS_MAX_TOKENS) return -1;
    t->kind[t->n] = (uint8_t)k;
    t->val[t->n] = (uint8_t)v;
    t->shape[t->n] = rs_tk_letter[k];
    t->n++;
    SK(rs_tk_letter[k]);
  }
#undef SK
  if (skel && skeln) skel[sk < skeln ? sk : skeln - 1] = 0;
  return have_op ? 0 : -1;
}

/* ---- instruction lines of a listing ---- */

static bool addr_of(const char *s, size_t n, uint32_t *a, size_t *rest) {
  size_t i = 0;
  while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
  if (i + 3 >= n || s[i] != '/' || s[i + 1] != '*' || !isxdigit((unsigned char)s[i + 2])) return false;
  uint32_t v = 0;
  size_t j = i + 2;
  for (; j < n && isxdigit((unsigned char)s[j]) && j - i < 12; j++) {
    int c = tolower((unsigned char)s[j]);
    v = v * 16 + (uint32_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
  }
  if (j + 1 >= n || s[j] != '*' || s[j + 1] != '/') return false;
  *a = v;
  *rest = j + 2;
  return true;
}

int rs_sass_ilines_of(const char *listing, const char *name, rs_sass_ilines *out, rs_err *e) {
  memset(out, 0, sizeof *out);
  uint32_t cap = 0;
  size_t ncap = 256, nn = 0;
  out->names = rs_xmalloc(ncap);
  size_t cur = SIZE_MAX; /* offset of the current function's name in names */
  /* names move when they grow: keep offsets, fix pointers at the end */
  uint32_t lineno = 0;
  for (const char *p = listing; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    lineno++;
    size_t i = 0;
    while (i < len && (p[i] == ' ' || p[i] == '\t')) i++;
    uint32_t a;
    size_t rest;
    if (len - i > 9 && !strncmp(p + i, ".section", 8) && isspace((unsigned char)p[i + 8])) {
      i += 8;
      while (i < len && isspace((unsigned char)p[i])) i++;
      cur = SIZE_MAX;
      if (len - i > 6 && !strncmp(p + i, ".text.", 6)) {
        size_t b = i + 6, k = b;
        while (k < len && p[k] != ',' && !isspace((unsigned char)p[k])) k++;
        while (nn + (k - b) + 1 > ncap) out->names = rs_xrealloc(out->names, ncap *= 2);
        memcpy(out->names + nn, p + b, k - b);
        cur = nn;
        nn += k - b;
        out->names[nn++] = 0;
      }
    } else if (addr_of(p, len, &a, &rest)) {
      if (cur == SIZE_MAX) {
        rs_sass_ilines_free(out);
        return rs_errf(e, name, lineno, "instruction /*%04x*/ outside a .text section", a);
      }
      const char *t = p + rest, *end = p + len;
      while (t < end && isspace((unsigned char)*t)) t++;
      const char *semi = memchr(t, ';', (size_t)(end - t));
      if (!semi) {
        rs_sass_ilines_free(out);
        return rs_errf(e, name, lineno, "instruction /*%04x*/ without ';'", a);
      }
      while (semi > t && isspace((unsigned char)semi[-1])) semi--;
      rs_sass_iline il = {(const char *)(uintptr_t)cur, a, t, (uint32_t)(semi - t), lineno};
      RS_PUSH(out->v, out->n, cap, il);
    }
    p += len + (nl != NULL);
  }
  for (uint32_t k = 0; k < out->n; k++) out->v[k].func = out->names + (uintptr_t)out->v[k].func;
  return 0;
}

void rs_sass_ilines_free(rs_sass_ilines *l) {
  free(l->v);
  free(l->names);
  memset(l, 0, sizeof *l);
}

/* ---- the table ---- */

static int form_cmp(unsigned sm, unsigned opc, const char *shape, const rs_sass_form *f) {
  if (sm != f->sm) return sm < f->sm ? -1 : 1;
  if (opc != f->opc) return opc < f->opc ? -1 : 1;
  return strcmp(shape, f->shape);
}

const rs_sass_form *rs_sass_form_find(unsigned sm, unsigned opc, const char *shape) {
  size_t lo = 0, hi = rs_sass_nforms;
  while (lo < hi) { /* fields.c is sorted by (sm, opc, shape) */
    size_t mid = (lo + hi) / 2;
    int c = form_cmp(sm, opc, shape, &rs_sass_forms[mid]);
    if (!c) return &rs_sass_forms[mid];
    if (c < 0) hi = mid;
    else lo = mid + 1;
  }
  return NULL;
}

static void put_bits(uint64_t w[2], unsigned off, unsigned width, unsigned v) {
  for (unsigned b = 0; b < width; b++) {
    unsigned at = off + b;
    uint64_t m = 1ull << (at & 63);
    if (v >> b & 1) w[at >> 6] |= m;
    else w[at >> 6] &= ~m;
  }
}

int rs_sass_encode(unsigned sm, uint64_t w[2], const rs_sass_tokens *t, uint32_t which, char *why, size_t whyn) {
  unsigned opc = (unsigned)(w[0] & 0xfff);
  const rs_sass_form *f = rs_sass_form_find(sm, opc, t->shape);
  if (!f) {
    snprintf(why, whyn, "form %s 0x%03x '%s' (sm_%u) is not in the learned field table", t->op, opc, t->shape, sm);
    return -1;
  }
  return rs_sass_encode_row(f, w, t, which, why, whyn);
}

int rs_sass_encode_row(const rs_sass_form *f, uint64_t w[2], const rs_sass_tokens *t, uint32_t which, char *why,
                       size_t whyn) {
  unsigned opc = f->opc, sm = f->sm;
  for (unsigned k = 0; k < t->n; k++) {
    if (!(which >> k & 1)) continue;
    if (f->off[k] < 0) {
      snprintf(why, whyn, "no trusted field for operand %u (%c) of %s 0x%03x '%s' (sm_%u, learned from %u)", k,
               t->shape[k], t->op, opc, t->shape, sm, f->samples);
      return -1;
    }
    if (f->tie && f->tie[k] >= 0)
      for (unsigned j = 0; j < t->n; j++)
        if (f->tie[j] == f->tie[k] && t->val[j] != t->val[k]) {
          snprintf(why, whyn, "operands %u and %u of %s 0x%03x '%s' (sm_%u) always held one register in the %u "
                   "samples, so their fields are known only as a pair: registers %u and %u cannot be encoded",
                   j < k ? j : k, j < k ? k : j, t->op, opc, t->shape, sm, f->samples, t->val[k], t->val[j]);
          return -1;
        }
    for (unsigned j = 0; j < t->n; j++) /* one field printed twice (BAR.SYNC R13, R13): one register */
      if (j != k && f->off[j] == f->off[k] && t->val[j] != t->val[k]) {
        snprintf(why, whyn, "operands %u and %u of %s 0x%03x '%s' (sm_%u) are one field (bit %d): registers %u and %u "
                 "cannot be encoded", j < k ? j : k, j < k ? k : j, t->op, opc, t->shape, sm, f->off[k], t->val[k], t->val[j]);
        return -1;
      }
    put_bits(w, (unsigned)f->off[k], rs_tk_width[t->kind[k]], t->val[k]);
  }
  for (unsigned k = 0; k < t->n; k++) /* a tied token written: its partners get the same register */
    if ((which >> k & 1) && f->tie && f->tie[k] >= 0)
      for (unsigned j = 0; j < t->n; j++)
        if (!(which >> j & 1) && f->tie[j] == f->tie[k]) put_bits(w, (unsigned)f->off[j], rs_tk_width[t->kind[j]], t->val[j]);
  return 0;
}
