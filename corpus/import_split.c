/* import_split.c - cut one kernel out of a whole module's compiler output (MIR, PTX, nvdisasm
 * listing, ptxas -v), so that every corpus row holds one kernel as its first function. */
#include "corpus/import.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void mir_kernels(const char *text, rs_sbuf *b) {
  for (const char *d = !strncmp(text, "---", 3) ? text : next_doc(text); d; d = next_doc(d)) {
    const char *end = next_doc(d);
    if (!end) end = d + strlen(d);
    char name[512], entry[16];
    if (!strncmp(d, "--- |", 5)) continue;
    if (field(d, end, "name:", name, sizeof name) && field(d, end, "isEntryFunction:", entry, sizeof entry) &&
        !strcmp(entry, "true")) {
      rs_sbuf_put(b, name, strlen(name));
      rs_sbuf_put(b, "\n", 1);
    }
  }
}

/* A MIR module indexed once (a library module holds hundreds of kernels and tens of MB per stage:
 * cutting each kernel by rescanning the text was quadratic): its function documents, and in its
 * IR document the function definitions. */
typedef struct {
  const char *start, *end;
  char *name;
} mdoc;

struct rs_mir_index {
  const char *ir, *ir_end; /* the IR document, NULL if none */
  mdoc *docs, *defs;       /* function documents; function definitions inside the IR */
  uint32_t ndocs, ndefs;
};

/* The function an IR line "  define ... @NAME(" defines (quotes dropped), or false. */
static bool ir_define(const char *l, char *name, size_t n) {
  if (strncmp(l, "  define ", 9)) return false;
  const char *at = strchr(l, '@'), *nl = strchr(l, '\n');
  if (!at || (nl && at > nl)) return false;
  at++;
  size_t k = *at == '"' ? strcspn(++at, "\"") : strcspn(at, "(");
  snprintf(name, n, "%.*s", (int)k, at);
  return true;
}

rs_mir_index *rs_mir_index_build(const char *text) {
  rs_mir_index *x = rs_xcalloc(1, sizeof *x);
  uint32_t cap = 0;
  for (const char *d = !strncmp(text, "---", 3) ? text : next_doc(text); d; d = next_doc(d)) {
    const char *end = next_doc(d);
    if (!end) end = d + strlen(d);
    char name[512];
    if (!strncmp(d, "--- |", 5)) {
      x->ir = d;
      x->ir_end = end;
      continue;
    }
    if (!field(d, end, "name:", name, sizeof name)) continue;
    if (x->ndocs == cap) {
      cap = cap ? cap * 2 : 16;
      x->docs = rs_xrealloc(x->docs, cap * sizeof *x->docs);
    }
    x->docs[x->ndocs++] = (mdoc){d, end, rs_xstrndup(name, strlen(name))};
  }
  cap = 0;
  for (const char *l = x->ir; l && l < x->ir_end; l = line_end(l)) {
    char name[512];
    if (!ir_define(l, name, sizeof name)) continue;
    const char *e = l;
    while (e < x->ir_end && strncmp(e, "  }\n", 4)) e = line_end(e);
    if (e >= x->ir_end) break; /* no closing brace: keep the rest as it is */
    if (x->ndefs == cap) {
      cap = cap ? cap * 2 : 16;
      x->defs = rs_xrealloc(x->defs, cap * sizeof *x->defs);
    }
    x->defs[x->ndefs++] = (mdoc){l, line_end(e), rs_xstrndup(name, strlen(name))};
    l = e;
  }
  return x;
}

void rs_mir_index_free(rs_mir_index *x) {
  if (!x) return;
  for (uint32_t i = 0; i < x->ndocs; i++) free(x->docs[i].name);
  for (uint32_t i = 0; i < x->ndefs; i++) free(x->defs[i].name);
  free(x->docs);
  free(x->defs);
  free(x);
}

char *rs_mir_index_cut(const rs_mir_index *x, const char *kernel) {
  const mdoc *k = NULL;
  for (uint32_t i = 0; i < x->ndocs && !k; i++)
    if (!strcmp(x->docs[i].name, kernel)) k = &x->docs[i];
  if (!k) return NULL;
  rs_sbuf b = {0};
  rs_sbuf_put(&b, "", 0);
  if (x->ir) {
    /* the other functions' IR definitions go: each row keeps its own function, the globals,
     * declarations and attributes. Without this every row of a library module carried the whole
     * module's IR (MBs per row), and llc restarted on a row's MIR (emit) compiles an IR function
     * that has no machine function from nothing and crashes in prologue/epilogue insertion
     * (llc-22 on CLBlast's copy_pad). A kernel that calls one is refused by the MIR reader. */
    const char *at = x->ir;
    for (uint32_t i = 0; i < x->ndefs; i++) {
      if (!strcmp(x->defs[i].name, kernel)) continue;
      rs_sbuf_put(&b, at, (size_t)(x->defs[i].start - at));
      at = x->defs[i].end;
      if (*at == '\n') at++; /* the blank line after the body */
    }
    rs_sbuf_put(&b, at, (size_t)(x->ir_end - at));
  }
  rs_sbuf_put(&b, k->start, (size_t)(k->end - k->start));
  if (b.n && b.s[b.n - 1] != '\n') rs_sbuf_put(&b, "\n", 1);
  if (b.n < 4 || strcmp(b.s + b.n - 4, "...\n")) rs_sbuf_put(&b, "...\n", 4);
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
  rs_sbuf b = {0};
  const char *at = text;
  for (int i = 0; i < n; i++) {
    if (i == self) continue;
    rs_sbuf_put(&b, at, (size_t)(r[i].start - at));
    at = r[i].end;
  }
  rs_sbuf_put(&b, at, strlen(at));
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
      rs_sbuf b = {0};
      rs_sbuf_put(&b, text, (size_t)(first - text));
      rs_sbuf_put(&b, s, (size_t)(end - s));
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
  rs_sbuf b = {0};
  rs_sbuf_put(&b, "", 0);
  if (kind == 'm') mir_kernels(text, &b);
  else if (kind == 'p') {
    region *r;
    int n = ptx_entries(text, &r);
    for (int i = 0; i < n; i++) {
      rs_sbuf_put(&b, r[i].name, strlen(r[i].name));
      rs_sbuf_put(&b, "\n", 1);
    }
    free(r);
  } else {
    /* listing: kernels are the .text sections marked .global (a non-inlined .func is local) */
    for (const char *s = next_section(text); s; s = next_section(s)) {
      char name[512];
      if (!text_section(s, name, sizeof name)) continue;
      rs_sbuf_put(&b, name, strlen(name));
      rs_sbuf_put(&b, "\n", 1);
    }
  }
  return b.s;
}
