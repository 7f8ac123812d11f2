/* infer.c - table rows for instruction forms sass/optable.c lacks, read off nvdisasm's own life
 * ranges (`nvdisasm -c -plr -lrm narrow`, completed by cubin/disasm.c): for every instance of an
 * unknown form, each register operand's column in its row says whether the instruction defines
 * it (^), reads it (v) or both (x), and the columns after it with the same kind of mark, not
 * named by another operand, give its width (1, 2 or 4, aligned as tuples are). A form is
 * inferred only when every instance gives the same roles; one whose instances disagree, or with
 * a register -plr marks neither read nor written, stays unknown, with the reason. Never used to
 * read a listing: the rows are printed (`corpus forms --inferred`) for review, marked inferred. */
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NG = 4, MAXOPS = 16 };
static const char *const gname[NG] = {"GPR", "PRED", "UGPR", "UPRED"};

typedef struct {
  int order[NG];    /* group of each segment, -1 none */
  int col0[NG];     /* per group: column of register 0, relative to the "//" */
  int size[NG];     /* registers shown */
  bool have;
} layout;

/* Does s[0..n) contain w? */
static bool has(const char *s, size_t n, const char *w) {
  size_t k = strlen(w);
  for (size_t i = 0; i + k <= n; i++)
    if (!memcmp(s + i, w, k)) return true;
  return false;
}

/* Position of "//" in a line, or -1. */
static int cmt(const char *s, size_t n) {
  for (size_t i = 0; i + 1 < n; i++)
    if (s[i] == '/' && s[i + 1] == '/') return (int)i;
  return -1;
}

/* The header lines: "// |  GPR  | PRED |" names the segments, "// |  # 0123 | # 0 |" places them. */
static void header(layout *L, const char *s, size_t n) {
  int c = cmt(s, n);
  if (c < 0) return;
  const char *t = s + c;
  size_t tn = n - (size_t)c;
  if (has(t, tn, "GPR") && !has(t, tn, "#")) {
    int seg = -1;
    for (int g = 0; g < NG; g++) L->order[g] = -1;
    for (size_t i = 0; i < tn; i++) {
      if (t[i] == '|') seg++;
      for (int g = 0; g < NG && seg >= 0 && seg < NG; g++)
        if (!strncmp(t + i, gname[g], strlen(gname[g])) && (i == 0 || t[i - 1] == ' ' || t[i - 1] == '|') &&
            (t[i + strlen(gname[g])] == ' ' || t[i + strlen(gname[g])] == '|') && L->order[seg] < 0)
          L->order[seg] = g;
    }
    return;
  }
  if (!has(t, tn, "# 0") && !has(t, tn, "#  0")) return;
  int seg = -1;
  for (int g = 0; g < NG; g++) L->col0[g] = -1, L->size[g] = 0;
  for (size_t i = 0; i < tn; i++) {
    if (t[i] == '|') seg++;
    if (t[i] != '#' || seg < 0 || seg >= NG || L->order[seg] < 0) continue;
    size_t j = i + 1;
    while (j < tn && t[j] == ' ') j++;
    int g = L->order[seg];
    L->col0[g] = (int)j;
    while (j < tn && t[j] >= '0' && t[j] <= '9') j++, L->size[g]++;
  }
  L->have = true;
}

/* A register token: group and index, or -1 (RZ, PT ... and everything else). */
static int reg_of(const char *s, size_t n, int *idx) {
  int g = -1;
  size_t p = 0;
  if (n >= 3 && s[0] == 'U' && s[1] == 'R' && s[2] >= '0' && s[2] <= '9') g = 2, p = 2;
  else if (n >= 3 && s[0] == 'U' && s[1] == 'P' && s[2] >= '0' && s[2] <= '9') g = 3, p = 2;
  else if (n >= 2 && s[0] == 'R' && s[1] >= '0' && s[1] <= '9') g = 0, p = 1;
  else if (n >= 2 && s[0] == 'P' && s[1] >= '0' && s[1] <= '9') g = 1, p = 1;
  if (g < 0) return -1;
  int v = 0;
  while (p < n && s[p] >= '0' && s[p] <= '9') v = v * 10 + (s[p++] - '0');
  *idx = v;
  return g;
}

static char mark(const char *row, size_t rn, int c, const layout *L, int g, int idx) {
  if (L->col0[g] < 0 || idx >= L->size[g]) return '?';
  size_t at = (size_t)(c + L->col0[g] + idx);
  return at < rn ? row[at] : ' ';
}

/* Merge roles b into a (same operand count): equal token by token, where "*" (a zero register,
 * RZ/URZ/PT/UPT: its width unknown) takes the other's; false when they disagree. */
static bool merge(char **a, const char *b) {
  char out[200];
  size_t k = 0;
  const char *p = *a, *q = b;
  while (*p || *q) {
    size_t pl = strcspn(p, " "), ql = strcspn(q, " ");
    bool pw = pl == 1 && *p == '*', qw = ql == 1 && *q == '*';
    if (!pw && !qw && (pl != ql || memcmp(p, q, pl))) return false;
    const char *t = pw ? q : p;
    size_t tl = pw ? ql : pl;
    k += (size_t)snprintf(out + k, sizeof out - k, "%s%.*s", k ? " " : "", (int)tl, t);
    p += pl + (p[pl] == ' ');
    q += ql + (q[ql] == ' ');
  }
  free(*a);
  *a = rs_xstrndup(out, k);
  return true;
}

static void note(rs_sass_infer *x, const char *form, uint32_t nops, const char *ops, const char *why) {
  for (uint32_t i = 0; i < x->n; i++) {
    rs_sass_inferred *r = &x->v[i];
    if (r->nops != nops || strcmp(r->form, form)) continue;
    r->instances++;
    if (r->why) return;
    if (why || !merge(&r->ops, ops)) {
      char b[300];
      snprintf(b, sizeof b, why ? "%s" : "instances disagree: '%s' and '%s'", why ? why : r->ops, ops);
      r->why = rs_xstrndup(b, strlen(b));
    }
    return;
  }
  rs_sass_inferred r = {rs_xstrndup(form, strlen(form)), nops, rs_xstrndup(ops, strlen(ops)), 1,
                        why ? rs_xstrndup(why, strlen(why)) : NULL};
  RS_PUSH(x->v, x->n, x->cap, r);
}

/* One instruction line with its -plr row: roles of an unknown form's operands. */
static void instruction(rs_sass_infer *x, const layout *L, const char *s, size_t n, bool all) {
  int c = cmt(s, n);
  const char *semi = memchr(s, ';', n);
  if (c < 0 || !semi || !L->have) return;
  size_t i = 0;
  while (i < n && s[i] != '/') i++;
  i += 2;
  while (i < n && s[i] != '/') i++; /* end of the address comment */
  i++;
  while (i < n && s[i] == ' ') i++;
  if (i < n && s[i] == '@') {
    while (i < n && s[i] != ' ') i++;
    while (i < n && s[i] == ' ') i++;
  }
  size_t mo = i;
  while (i < (size_t)(semi - s) && s[i] != ' ') i++;
  size_t mnl = i - mo, end = (size_t)(semi - s);
  char form[96];
  snprintf(form, sizeof form, "%.*s", (int)(mnl < 95 ? mnl : 95), s + mo);
  size_t so[MAXOPS], sl[MAXOPS];
  uint32_t nops = 0;
  int depth = 0;
  size_t st = i;
  for (size_t k = i; k <= end && nops < MAXOPS; k++) {
    char ch = k < end ? s[k] : ',';
    if (ch == ' ' && depth <= 0 && k + 1 < end && s[k + 1] == '`') ch = ','; /* RET.REL.NODEC R20 `(k) */
    if (ch == '[' || ch == '{' || ch == '(') depth++;
    if (ch == ']' || ch == '}' || ch == ')') depth--;
    if (ch == ',' && depth <= 0) {
      size_t a = st, z = k;
      while (a < z && s[a] == ' ') a++;
      while (z > a && s[z - 1] == ' ') z--;
      if (z > a) so[nops] = a, sl[nops++] = z - a;
      st = k + 1;
    }
  }
  const char *variant;
  char why[300];
  if (!all && rs_sass_lookup(form, strlen(form), nops, &variant, why, sizeof why)) return; /* known */
  char ops[160] = "", w[200] = "";
  size_t k = 0;
  int gi[MAXOPS], ri[MAXOPS];
  for (uint32_t o = 0; o < nops; o++) {
    const char *t = s + so[o];
    size_t tl = sl[o];
    while (tl && (*t == '-' || *t == '!' || *t == '|' || *t == '~')) t++, tl--;
    gi[o] = reg_of(t, tl, &ri[o]);
  }
  for (uint32_t o = 0; o < nops && !*w; o++) {
    const char *t = s + so[o];
    char role[16] = "s1";
    if (t[0] == '[' || !strncmp(t, "desc[", 5)) snprintf(role, sizeof role, "m");
    else if (t[0] == '`') snprintf(role, sizeof role, "l");
    else if (!strncmp(t, "RZ", 2) || !strncmp(t, "URZ", 3) || !strncmp(t, "PT", 2) || !strncmp(t, "UPT", 3))
      snprintf(role, sizeof role, "*");
    else if (gi[o] >= 0) {
      char m = mark(s, n, c, L, gi[o], ri[o]);
      char r = m == '^' ? 'd' : m == 'v' ? 's' : m == 'x' ? 'x' : 0;
      /* one register both written and read by two operands (HSET2 R11, R0, R11): -plr's x is
       * the destination's def (the first operand naming it) and the other's read */
      for (uint32_t q = 0; q < nops && r == 'x'; q++)
        if (q != o && gi[q] == gi[o] && ri[q] == ri[o]) r = q > o ? 'd' : 's';
      if (!r) {
        snprintf(w, sizeof w, "operand %u (%.*s): -plr marks it '%c', neither read nor written", o, (int)sl[o], s + so[o], m);
        break;
      }
      int width = 1;
      while (width < 4 && mark(s, n, c, L, gi[o], ri[o] + width) == m) {
        bool named = false;
        for (uint32_t q = 0; q < nops; q++) named |= q != o && gi[q] == gi[o] && ri[q] == ri[o] + width;
        if (named) break;
        width++;
      }
      if (width == 3) width = 2;
      while (width > 1 && ri[o] % width) width /= 2; /* tuples are aligned */
      snprintf(role, sizeof role, "%c%d", r, width);
    }
    k += (size_t)snprintf(ops + k, sizeof ops - k, "%s%s", o ? " " : "", role);
  }
  note(x, form, nops, ops, *w ? w : NULL);
}

int rs_sass_infer_listing(const char *text, bool all, rs_sass_infer *x) {
  layout L;
  memset(&L, 0, sizeof L);
  for (int g = 0; g < NG; g++) L.order[g] = -1, L.col0[g] = -1;
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    size_t a = 0;
    while (a < n && (p[a] == ' ' || p[a] == '\t')) a++;
    if (a + 2 < n && p[a] == '/' && p[a + 1] == '*' && p[a + 2] >= '0' && p[a + 2] <= 'f') instruction(x, &L, p, n, all);
    else if (a + 1 < n && p[a] == '/' && p[a + 1] == '/') header(&L, p, n);
    p += n + (e ? 1 : 0);
  }
  for (uint32_t i = 0; i < x->n; i++) /* a zero register only ever: read as one register */
    for (char *c = x->v[i].ops; *c; c++)
      if (*c == '*') {
        size_t l = strlen(x->v[i].ops);
        char *o = rs_xmalloc(l + 2);
        size_t at = (size_t)(c - x->v[i].ops);
        memcpy(o, x->v[i].ops, at);
        memcpy(o + at, "s1", 2);
        memcpy(o + at + 2, c + 1, l - at);
        free(x->v[i].ops);
        x->v[i].ops = o;
        c = o + at + 1;
      }
  return 0;
}

void rs_sass_infer_free(rs_sass_infer *x) {
  for (uint32_t i = 0; i < x->n; i++) free(x->v[i].form), free(x->v[i].ops), free(x->v[i].why);
  free(x->v);
  memset(x, 0, sizeof *x);
}
