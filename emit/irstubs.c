/* irstubs.c - declare the IR functions that have no machine function in the MIR.
 *
 * An imported module keeps its whole LLVM IR but only its kernel's machine function
 * (corpus/import_split.c cuts one MIR document per kernel): the OpenCL prelude's get_local_id,
 * get_global_id, fmin, ... and a library's helper functions stay defined in the IR, inlined
 * everywhere. llc -start-after then makes an empty machine function for each and crashes on it
 * (MachineDominatorTree: "SmallVector unable to grow", a stack dump): every builtin:chaitin answer
 * on CLBlast's 1,420 AMD instances was "rejected by llc". As declarations they are what the kernel
 * needs of them (nothing: nothing calls them after inlining; calls are refused by the MIR reader)
 * and llc compiles the kernel alone, as the compiler did. */
#include "emit/emit.h"
#include "util/util.h"
#include <stdbool.h>
#include <string.h>

static size_t line_end(const char *s, size_t o, size_t len) {
  const char *nl = memchr(s + o, '\n', len - o);
  return nl ? (size_t)(nl - s) : len;
}

/* Is `name` (n bytes) the name of a machine function ("name: NAME" at column 0)? */
static bool has_machine_function(const char *mir, size_t len, size_t from, const char *name, size_t n) {
  for (size_t o = from; o < len;) {
    size_t e = line_end(mir, o, len);
    if (e - o > 5 && !strncmp(mir + o, "name:", 5)) {
      size_t a = o + 5;
      while (a < e && (mir[a] == ' ' || mir[a] == '\t')) a++;
      size_t z = e;
      while (z > a && (mir[z - 1] == ' ' || mir[z - 1] == '\r')) z--;
      if (z > a + 1 && (mir[a] == '\'' || mir[a] == '"') && mir[z - 1] == mir[a]) a++, z--;
      if (z - a == n && !memcmp(mir + a, name, n)) return true;
    }
    o = e + 1;
  }
  return false;
}

/* Linkage keywords a declaration may not carry (LLParser: "invalid linkage for function
 * declaration"). */
static bool decl_forbidden(const char *w, size_t n) {
  static const char *const kw[] = {"private", "internal", "linkonce", "linkonce_odr", "weak", "weak_odr",
                                   "available_externally", "common", "appending"};
  for (size_t i = 0; i < sizeof kw / sizeof *kw; i++)
    if (strlen(kw[i]) == n && !memcmp(w, kw[i], n)) return true;
  return false;
}

char *rs_emit_declare_unlowered(const char *mir, uint32_t *declared) {
  size_t len = strlen(mir);
  rs_sbuf b = {0};
  uint32_t nd = 0;
  /* the IR document: "--- |" then lines indented by two spaces, up to the first "---" or "..." */
  size_t ir = 0, ir_end = 0;
  for (size_t o = 0; o < len;) {
    size_t e = line_end(mir, o, len);
    if (!ir && e - o >= 5 && !strncmp(mir + o, "--- |", 5)) ir = e + 1;
    else if (ir && (!strncmp(mir + o, "---", 3) || !strncmp(mir + o, "...", 3))) {
      ir_end = o;
      break;
    }
    o = e + 1;
  }
  if (!ir || !ir_end) {
    if (declared) *declared = 0;
    return rs_xstrndup(mir, len);
  }
  rs_sbuf_put(&b, mir, ir);
  for (size_t o = ir; o < ir_end;) {
    size_t e = line_end(mir, o, len), next = e < len ? e + 1 : e;
    const char *l = mir + o;
    size_t n = e - o;
    const char *at = n > 9 && !strncmp(l, "  define ", 9) ? memchr(l, '@', n) : NULL;
    const char *paren = at ? memchr(at, '(', n - (size_t)(at - l)) : NULL;
    size_t nm = paren ? (size_t)(paren - at - 1) : 0;
    if (nm && at[1] == '"' && nm >= 2) at++, nm -= 2; /* @"quoted name" */
    if (!paren || l[n - 1] != '{' || has_machine_function(mir, len, ir_end, at + 1, nm)) {
      rs_sbuf_put(&b, l, next - o);
      o = next;
      continue;
    }
    /* "define [linkage] ... @NAME(params) attrs {" -> "declare ... @NAME(params)" */
    int depth = 0;
    const char *close = paren;
    for (; close < l + n; close++) {
      if (*close == '(') depth++;
      else if (*close == ')' && --depth == 0) break;
    }
    if (close == l + n) { /* not a one-line header: leave it as it is */
      rs_sbuf_put(&b, l, next - o);
      o = next;
      continue;
    }
    rs_sbuf_put(&b, "  declare", 9);
    for (const char *w = l + 8; w < paren;) { /* the words before the parameter list, linkage dropped */
      while (w < paren && *w == ' ') w++;
      const char *we = w;
      while (we < paren && *we != ' ') we++;
      if (we > w && !decl_forbidden(w, (size_t)(we - w))) {
        rs_sbuf_put(&b, " ", 1);
        rs_sbuf_put(&b, w, (size_t)(we - w));
      }
      w = we;
    }
    rs_sbuf_put(&b, paren, (size_t)(close - paren) + 1);
    rs_sbuf_put(&b, "\n", 1);
    nd++;
    /* skip the body, up to its closing "  }" */
    for (o = next; o < ir_end;) {
      size_t e2 = line_end(mir, o, len);
      bool last = e2 - o >= 3 && !strncmp(mir + o, "  }", 3);
      o = e2 < len ? e2 + 1 : e2;
      if (last) break;
    }
  }
  rs_sbuf_put(&b, mir + ir_end, len - ir_end);
  if (declared) *declared = nd;
  return b.s;
}
