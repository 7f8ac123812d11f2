/* import_split.c - cut one kernel out of a whole module's compiler output (MIR, PTX, nvdisasm
 * listing, ptxas -v), so that every corpus row holds one kernel as its first function. */
#include "corpus/import.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *s;
  size_t n, cap;
} sbuf;

static void put(sbuf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->s = rs_xrealloc(b->s, b->cap);
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}

static const char *line_end(const char *s) {
  const char *nl = strchr(s, '\n');
  return nl ? nl + 1 : s + strlen(s);
}

/* MIR documents start at a line "---" (the IR one at "--- |"). */
static const char *next_doc(const char *s) {
  for (const char *l = s; *l; l = line_end(l))
    if (l != s && !strncmp(l, "---", 3) && (l[3] == '\n' || l[3] == ' ')) return l;
  return NULL;
}

/* The value of "key:" at the start of a line within [s, end). */
static bool field(const char *s, const char *end, const char *key, char *out, size_t n) {
  size_t kl = strlen(key);
  for (const char *l = s; l < end && *l; l = line_end(l)) {
    const char *c = l + strspn(l, " ");
    if (!strncmp(c, key, kl)) {
      c += kl;
      c += strspn(c, " \t'\"");
      size_t k = strcspn(c, "'\"\n");
      snprintf(out, n, "%.*s", (int)k, c);
      return true;
    }
  }
  return false;
}

static void mir_kernels(const char *text, sbuf *b) {
  for (const char *d = !strncmp(text, "---", 3) ? text : next_doc(text); d; d = next_doc(d)) {
    const char *end = next_doc(d);
    if (!end) end = d + strlen(d);
    char name[512], entry[16];
    if (!strncmp(d, "--- |", 5)) continue;
    if (field(d, end, "name:", name, sizeof name) && field(d, end, "isEntryFunction:", entry, sizeof entry) &&
        !strcmp(entry, "true")) {
      put(b, name, strlen(name));
      put(b, "\n", 1);
    }
  }
}

/* The IR document without the other functions' definitions: llc, restarted on a row's MIR (emit:
 * -start-after=virtregrewriter,N), compiles an IR function that has no machine function from
 * nothing and crashes in prologue/epilogue insertion (llc-22 on CLBlast's copy_pad, two kernels
 * per module). A kernel that calls one of them is refused by the MIR reader anyway. */
static void ir_doc(sbuf *b, const char *d, const char *end, const char *kernel) {
  size_t kl = strlen(kernel);
  bool skip = false;
  for (const char *l = d; l < end; l = line_end(l)) {
    const char *le = line_end(l);
    if (!skip && !strncmp(l, "  define ", 9)) {
      const char *at = strchr(l, '@');
      if (at && at < le) {
        const char *nm = at + 1 + (at[1] == '"');
        skip = !(!strncmp(nm, kernel, kl) && (nm[kl] == '(' || nm[kl] == '"'));
      }
    }
    if (!skip) put(b, l, (size_t)(le - l));
    else if (!strncmp(l, "  }", 3) && (l[3] == '\n' || l[3] == '\r')) skip = false;
  }
}

char *rs_split_mir(const char *text, const char *kernel) {
  sbuf b = {0};
  const char *first = !strncmp(text, "---", 3) ? text : next_doc(text);
  char *found = NULL;
  for (const char *d = first; d; d = next_doc(d)) {
    const char *end = next_doc(d);
    if (!end) end = d + strlen(d);
    char name[512];
    if (!strncmp(d, "--- |", 5)) ir_doc(&b, d, end, kernel);
    else if (!found && field(d, end, "name:", name, sizeof name) && !strcmp(name, kernel)) {
      put(&b, d, (size_t)(end - d));
      found = b.s;
    }
  }
  if (!found) {
    free(b.s);
    return NULL;
  }
  if (b.n && b.s[b.n - 1] != '\n') put(&b, "\n", 1);
  if (b.n < 4 || strcmp(b.s + b.n - 4, "...\n")) put(&b, "...\n", 4);
  return b.s;
}

/* PTX: a top-level ".entry NAME" region, from its line start to the brace closing its body. */
typedef struct {
  const char *start, *end;
  char name[512];
} region;

static int ptx_entries(const char *t, region **out) {
  int n = 0, cap = 0, depth = 0;
  *out = NULL;
  for (const char *c = t; *c; c++) {
    if (c[0] == '/' && c[1] == '/') {
      c = line_end(c) - 1;
      continue;
    }
    if (c[0] == '/' && c[1] == '*') {
      const char *e = strstr(c + 2, "*/");
      c = e ? e + 1 : c + strlen(c) - 1;
      continue;
    }
    if (*c == '{') depth++;
    else if (*c == '}') depth--;
    else if (!depth && !strncmp(c, ".entry", 6) && (c[6] == ' ' || c[6] == '\t' || c[6] == '\n')) {
      region r;
      const char *ls = c;
      while (ls > t && ls[-1] != '\n') ls--;
      /* nvcc writes "// .globl NAME" on the line before: it goes with the kernel */
      if (ls > t) {
        const char *pl = ls - 1;
        while (pl > t && pl[-1] != '\n') pl--;
        if (!strncmp(pl + strspn(pl, " \t"), "// .globl", 9)) ls = pl;
      }
      r.start = ls;
      const char *nm = c + 6;
      nm += strspn(nm, " \t\n");
      size_t k = strcspn(nm, " \t\n(");
      snprintf(r.name, sizeof r.name, "%.*s", (int)k, nm);
      const char *body = strchr(nm, '{'), *semi = strchr(nm, ';');
      if (!body || (semi && semi < body)) continue; /* a declaration */
      int d = 0;
      const char *e = body;
      for (; *e; e++) {
        if (*e == '{') d++;
        else if (*e == '}' && --d == 0) break;
      }
      r.end = *e ? line_end(e) : e;
      if (n == cap) {
        cap = cap ? cap * 2 : 8;
        *out = rs_xrealloc(*out, (size_t)cap * sizeof **out);
      }
      (*out)[n++] = r;
      c = r.end - 1;
    }
  }
  return n;
}

char *rs_split_ptx(const char *text, const char *kernel) {
  region *r;
  int n = ptx_entries(text, &r), self = -1;
  for (int i = 0; i < n && self < 0; i++)
    if (!strcmp(r[i].name, kernel)) self = i;
  if (self < 0) {
    free(r);
    return NULL;
  }
  sbuf b = {0};
  const char *at = text;
  for (int i = 0; i < n; i++) {
    if (i == self) continue;
    put(&b, at, (size_t)(r[i].start - at));
    at = r[i].end;
  }
  put(&b, at, strlen(at));
  free(r);
  return b.s;
}

/* Listing sections start at "//--------------------- .SECTION ---..." lines. */
static const char *next_section(const char *s) {
  for (const char *l = s; *l; l = line_end(l))
    if (l != s && !strncmp(l, "//---------------------", 23)) return l;
  return NULL;
}

static bool text_section(const char *l, char *name, size_t n) {
  const char *c = l + 23;
  c += strspn(c, " ");
  if (strncmp(c, ".text.", 6)) return false;
  c += 6;
  snprintf(name, n, "%.*s", (int)strcspn(c, " \n"), c);
  return true;
}

char *rs_split_sass(const char *text, const char *kernel) {
  const char *first = !strncmp(text, "//---------------------", 23) ? text : next_section(text);
  if (!first) return NULL;
  for (const char *s = first; s; s = next_section(s)) {
    char name[512];
    if (text_section(s, name, sizeof name) && !strcmp(name, kernel)) {
      const char *end = next_section(s);
      if (!end) end = s + strlen(s);
      sbuf b = {0};
      put(&b, text, (size_t)(first - text));
      put(&b, s, (size_t)(end - s));
      return b.s;
    }
  }
  return NULL;
}

char *rs_split_ptxas(const char *text, const char *kernel) {
  char key[600];
  snprintf(key, sizeof key, "Compiling entry function '%s'", kernel);
  const char *s = strstr(text, key);
  if (!s) return NULL;
  while (s > text && s[-1] != '\n') s--;
  const char *e = strstr(line_end(s), "Compiling entry function '");
  if (e)
    while (e > s && e[-1] != '\n') e--;
  return rs_xstrndup(s, e ? (size_t)(e - s) : strlen(s));
}

char *rs_split_kernels(const char *text, char kind) {
  sbuf b = {0};
  put(&b, "", 0);
  if (kind == 'm') mir_kernels(text, &b);
  else if (kind == 'p') {
    region *r;
    int n = ptx_entries(text, &r);
    for (int i = 0; i < n; i++) {
      put(&b, r[i].name, strlen(r[i].name));
      put(&b, "\n", 1);
    }
    free(r);
  } else {
    /* listing: kernels are the .text sections marked .global (a non-inlined .func is local) */
    for (const char *s = next_section(text); s; s = next_section(s)) {
      char name[512];
      if (!text_section(s, name, sizeof name)) continue;
      put(&b, name, strlen(name));
      put(&b, "\n", 1);
    }
  }
  return b.s;
}
