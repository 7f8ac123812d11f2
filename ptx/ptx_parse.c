/* ptx_parse.c - PTX as nvcc -ptx emits it (ISA 9.0) into the shared IR.
 *
 * One rs_func per .entry/.func with a body.  Every .reg declaration makes virtual registers
 * (%r<N> makes %r0..%r(N-1)); nested { } scopes may declare and shadow names, so a shadowing
 * declaration gets a unique name ("low.1").  Blocks start at the function entry, at each label
 * and after each branch/ret/exit/trap (a mid-block conditional branch would otherwise hide a
 * value that is live only on the taken path).  Anything not understood is an error with
 * file:line; the scanner is bounded by the text length, so no input can crash it. */
#include "front/front.h"
#include "ir/ir.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  MAX_DEPTH = 32,          /* nested { } scopes and operand groups */
  MAX_VREGS = 1u << 20,    /* per function: keeps hostile %r<N> declarations bounded */
  MAX_OPS = 1u << 16,      /* operands of one instruction */
};

/* Name table: symbols live in a stable array, the hash table holds their index + 1. */
typedef struct {
  const char *key;
  uint32_t len;
  int32_t val;    /* registers: current scope entry (-1 out of scope); labels: block */
  uint32_t count; /* registers: declarations so far */
} sym;
typedef struct {
  sym *syms;
  uint32_t n, cap;
  uint32_t *tab;
  uint32_t tabcap;
} symtab;

typedef struct {
  uint32_t sym, vreg;
  int32_t prev; /* entry the declaration shadows */
  uint32_t depth;
} scope_ent;

typedef struct {
  uint32_t op, off, len, line;
} fixup;

typedef struct {
  rs_module *m;
  rs_err *e;
  const char *s;
  size_t n, pos;
  uint32_t line;
  rs_func *f;
  symtab regs, labels;
  scope_ent *ents;
  uint32_t nents, capents;
  fixup *fix;
  uint32_t nfix, capfix;
  uint32_t depth;
  int pred_cls;
} P;

/* Operand context: how the registers of one operand are used. */
typedef struct {
  uint16_t flags; /* RS_F_DEF (| RS_F_COND) for destinations */
  bool rw;        /* destination is also read (wgmma accumulators) */
  bool bra;       /* bare identifiers are branch targets */
} octx;

static int perr(P *p, uint32_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(P *p, uint32_t line, const char *fmt, ...) {
  char buf[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return rs_errf(p->e, p->m->path, line ? line : 1, "%s", buf);
}

/* ---- symbol tables ---- */

static uint32_t sym_hash(const char *s, size_t n) { return (uint32_t)rs_hash_bytes(s, n, 0x9e37); }

static int32_t sym_find(const symtab *t, const char *s, size_t n) {
  if (!t->tabcap) return -1;
  for (uint32_t i = sym_hash(s, n) & (t->tabcap - 1);; i = (i + 1) & (t->tabcap - 1)) {
    uint32_t v = t->tab[i];
    if (!v) return -1;
    const sym *y = &t->syms[v - 1];
    if (y->len == n && memcmp(y->key, s, n) == 0) return (int32_t)(v - 1);
  }
}

static void tab_insert(symtab *t, uint32_t idx) {
  const sym *y = &t->syms[idx];
  uint32_t i = sym_hash(y->key, y->len) & (t->tabcap - 1);
  while (t->tab[i]) i = (i + 1) & (t->tabcap - 1);
  t->tab[i] = idx + 1;
}

/* Add a symbol known to be absent; key must outlive the table. */
static uint32_t sym_add(symtab *t, const char *key, size_t n) {
  sym y = {key, (uint32_t)n, -1, 0};
  RS_PUSH(t->syms, t->n, t->cap, y);
  if (t->n * 2 > t->tabcap) {
    free(t->tab);
    t->tabcap = t->tabcap ? t->tabcap * 2 : 256;
    t->tab = rs_xcalloc(t->tabcap, sizeof *t->tab);
    for (uint32_t i = 0; i < t->n; i++) tab_insert(t, i);
  } else {
    tab_insert(t, t->n - 1);
  }
  return t->n - 1;
}

static void sym_free(symtab *t) {
  free(t->syms);
  free(t->tab);
  memset(t, 0, sizeof *t);
}

/* ---- lexing ---- */

static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_id_start(int c) { return is_alpha(c) || c == '_' || c == '$' || c == '%'; }
static bool is_id_char(int c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '$'; }

static int peek(const P *p, size_t k) {
  return p->pos + k < p->n ? (unsigned char)p->s[p->pos + k] : -1;
}
static int cur(const P *p) { return peek(p, 0); }

/* A printable description of the current character for messages. */
static const char *cur_desc(const P *p, char *buf, size_t n) {
  int c = cur(p);
  if (c < 0)
    snprintf(buf, n, "end of file");
  else if (c > 0x20 && c < 0x7f)
    snprintf(buf, n, "'%c'", c);
  else
    snprintf(buf, n, "byte 0x%02x", (unsigned)c);
  return buf;
}

/* Skip white space and comments (newlines included). */
static int skip_ws(P *p) {
  for (;;) {
    int c = cur(p);
    if (c == '\n') {
      p->line++;
      p->pos++;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      p->pos++;
    } else if (c == '/' && peek(p, 1) == '/') {
      while (p->pos < p->n && p->s[p->pos] != '\n') p->pos++;
    } else if (c == '/' && peek(p, 1) == '*') {
      uint32_t line = p->line;
      p->pos += 2;
      for (;;) {
        if (p->pos >= p->n) return perr(p, line, "unterminated /* comment");
        if (p->s[p->pos] == '*' && peek(p, 1) == '/') break;
        if (p->s[p->pos] == '\n') p->line++;
        p->pos++;
      }
      p->pos += 2;
    } else {
      return 0;
    }
  }
}

/* Skip to the end of the line (directives without ';': .version, .target, .loc, .file). */
static void skip_line(P *p) {
  while (p->pos < p->n && p->s[p->pos] != '\n') p->pos++;
}

static int skip_string(P *p) {
  uint32_t line = p->line;
  p->pos++;
  while (p->pos < p->n && p->s[p->pos] != '"') {
    if (p->s[p->pos] == '\n') return perr(p, line, "unterminated string");
    if (p->s[p->pos] == '\\' && p->pos + 1 < p->n) p->pos++;
    p->pos++;
  }
  if (p->pos >= p->n) return perr(p, line, "unterminated string");
  p->pos++;
  return 0;
}

/* Skip a balanced { } group (initializers, debug sections). */
static int skip_braces(P *p) {
  uint32_t line = p->line, depth = 0;
  for (;;) {
    if (skip_ws(p)) return -1;
    int c = cur(p);
    if (c < 0) return perr(p, line, "unbalanced '{'");
    if (c == '"') {
      if (skip_string(p)) return -1;
      continue;
    }
    if (c != '\t' && (c < 0x20 || c > 0x7e)) {
      char d[24];
      return perr(p, p->line, "unexpected %s", cur_desc(p, d, sizeof d));
    }
    p->pos++;
    if (c == '{') depth++;
    if (c == '}' && --depth == 0) return 0;
  }
}

/* Skip a declaration statement up to and including ';' (initializer braces allowed). */
static int skip_stmt(P *p) {
  uint32_t line = p->line;
  for (;;) {
    if (skip_ws(p)) return -1;
    int c = cur(p);
    if (c < 0 || c == '}') return perr(p, line, "missing ';' after directive");
    if (c == '"') {
      if (skip_string(p)) return -1;
    } else if (c == '{') {
      if (skip_braces(p)) return -1;
    } else if (c < 0x20 || c > 0x7e) {
      char d[24];
      return perr(p, p->line, "unexpected %s", cur_desc(p, d, sizeof d));
    } else {
      p->pos++;
      if (c == ';') return 0;
    }
  }
}

/* Identifier at the cursor (PTX: [a-zA-Z_$%][a-zA-Z0-9_$]*); returns its length, 0 if none. */
static size_t ident_len(const P *p) {
  if (!is_id_start(cur(p))) return 0;
  size_t k = 1;
  while (is_id_char(peek(p, k))) k++;
  if (k == 1 && cur(p) == '%') return 0;
  return k;
}

/* Directive word at the cursor (".reg"), including the dot. */
static size_t dir_len(const P *p) {
  size_t k = 1;
  while (is_id_char(peek(p, k))) k++;
  return k;
}

static bool tok_is(const char *s, size_t n, const char *w) { return strlen(w) == n && !memcmp(s, w, n); }

/* ---- registers ---- */

static const char *reg_class_of(const char *t, size_t n) {
  static const struct { const char *type, *cls; } map[] = {
      {".pred", "pred"}, {".b8", "b16"},   {".u8", "b16"},     {".s8", "b16"},
      {".b16", "b16"},   {".u16", "b16"},  {".s16", "b16"},    {".f16", "b16"},
      {".bf16", "b16"},  {".b32", "b32"},  {".u32", "b32"},    {".s32", "b32"},
      {".f32", "b32"},   {".f16x2", "b32"}, {".bf16x2", "b32"}, {".tf32", "b32"},
      {".b64", "b64"},   {".u64", "b64"},  {".s64", "b64"},    {".f64", "b64"},
      {".b128", "b128"},
  };
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (tok_is(t, n, map[i].type)) return map[i].cls;
  return NULL;
}

/* Declare one register name (a copy is made when the name is synthesized). */
static int declare(P *p, const char *name, size_t n, int cls, uint32_t line) {
  rs_func *f = p->f;
  if (f->nvregs >= MAX_VREGS) return perr(p, line, "more than %u registers in one function", MAX_VREGS);
  int32_t si = sym_find(&p->regs, name, n);
  if (si >= 0) {
    int32_t ent = p->regs.syms[si].val;
    if (ent >= 0 && p->ents[ent].depth == p->depth)
      return perr(p, line, "register '%.*s' declared twice", (int)(n > 64 ? 64 : n), name);
  }
  rs_vreg v = {0};
  if (si >= 0) {
    /* shadowing (or re-declared in a later scope): keep vreg names unique */
    v.name = rs_xmalloc(n + 16);
    snprintf(v.name, n + 16, "%.*s.%u", (int)n, name, p->regs.syms[si].count);
  } else {
    v.name = rs_xstrndup(name, n);
  }
  const rs_regclass *c = &f->tgt->classes[cls];
  v.cls = cls;
  v.width = c->width;
  v.full = rs_lanes_full(c->width);
  v.line = line;
  v.hint_preg_unit = -1;
  RS_PUSH(f->vregs, f->nvregs, f->capvregs, v);
  if (si < 0) si = (int32_t)sym_add(&p->regs, f->vregs[f->nvregs - 1].name, n);
  sym *y = &p->regs.syms[si];
  scope_ent en = {(uint32_t)si, f->nvregs - 1, y->val, p->depth};
  RS_PUSH(p->ents, p->nents, p->capents, en);
  y->val = (int32_t)(p->nents - 1);
  y->count++;
  return 0;
}

/* Current vreg of a name, -1 if not declared in scope. */
static int32_t lookup_reg(const P *p, const char *s, size_t n) {
  int32_t si = sym_find(&p->regs, s, n);
  if (si < 0 || p->regs.syms[si].val < 0) return -1;
  return (int32_t)p->ents[p->regs.syms[si].val].vreg;
}

static void close_scope(P *p) {
  while (p->nents && p->ents[p->nents - 1].depth == p->depth) {
    scope_ent *en = &p->ents[--p->nents];
    p->regs.syms[en->sym].val = en->prev;
  }
}

/* .reg .TYPE name[<N>] {, name[<N>]} ;   (the cursor is just past ".reg") */
static int parse_reg_decl(P *p, uint32_t line) {
  const char *cname = NULL;
  for (;;) {
    if (skip_ws(p)) return -1;
    if (cur(p) != '.') break;
    size_t k = dir_len(p);
    const char *w = p->s + p->pos;
    if (tok_is(w, k, ".v2") || tok_is(w, k, ".v4") || tok_is(w, k, ".v8"))
      return perr(p, line, "vector registers (.reg %.*s) are not supported", (int)k, w);
    const char *c = reg_class_of(w, k);
    if (!c) return perr(p, line, "unknown register type '%.*s'", (int)(k > 32 ? 32 : k), w);
    if (cname) return perr(p, line, "two types in one .reg declaration");
    cname = c;
    p->pos += k;
  }
  if (!cname) return perr(p, line, ".reg without a type");
  int cls = rs_target_class(p->f->tgt, cname, strlen(cname));
  if (cls < 0) return perr(p, line, "target %s has no register class %s", p->f->tgt->name, cname);
  for (;;) {
    size_t k = ident_len(p);
    if (!k) return perr(p, p->line, "expected a register name in .reg declaration");
    const char *name = p->s + p->pos;
    p->pos += k;
    if (skip_ws(p)) return -1;
    if (cur(p) == '<') {
      p->pos++;
      if (skip_ws(p)) return -1;
      uint32_t cnt = 0;
      size_t d = 0;
      while (is_digit(cur(p))) {
        cnt = cnt * 10 + (uint32_t)(cur(p) - '0');
        if (cnt > MAX_VREGS) return perr(p, line, "register count too large");
        p->pos++, d++;
      }
      if (!d) return perr(p, line, "expected a count after '<'");
      if (skip_ws(p)) return -1;
      if (cur(p) != '>') return perr(p, line, "expected '>' in .reg declaration");
      p->pos++;
      char *buf = rs_xmalloc(k + 12);
      for (uint32_t i = 0; i < cnt; i++) {
        int bl = snprintf(buf, k + 12, "%.*s%u", (int)k, name, i);
        if (declare(p, buf, (size_t)bl, cls, line)) {
          free(buf);
          return -1;
        }
      }
      free(buf);
    } else if (declare(p, name, k, cls, line)) {
      return -1;
    }
    if (skip_ws(p)) return -1;
    if (cur(p) == ';') {
      p->pos++;
      return 0;
    }
    if (cur(p) != ',') return perr(p, line, "expected ',' or ';' in .reg declaration");
    p->pos++;
    if (skip_ws(p)) return -1;
  }
}

/* PTX special registers (read-only, not allocatable): name without '%'. */
static bool is_special(const char *s, size_t n) {
  static const char *const exact[] = {
      "tid", "ntid", "laneid", "warpid", "nwarpid", "ctaid", "nctaid", "smid", "nsmid", "gridid",
      "clock", "clock_hi", "clock64", "globaltimer", "globaltimer_lo", "globaltimer_hi",
      "total_smem_size", "aggr_smem_size", "dynamic_smem_size", "is_explicit_cluster",
      "clusterid", "nclusterid", "current_graph_exec"};
  static const char *const prefix[] = {"lanemask_", "pm", "envreg", "reserved_smem_", "cluster_"};
  for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
    if (tok_is(s, n, exact[i])) return true;
  for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++) {
    size_t l = strlen(prefix[i]);
    if (n > l && !memcmp(s, prefix[i], l)) return true;
  }
  return false;
}

/* ---- operands ---- */

static void push_op(P *p, uint8_t kind, uint16_t flags, uint32_t reg, rs_lanes lanes, size_t off,
                    size_t len) {
  rs_operand o = {0};
  o.kind = kind;
  o.flags = flags;
  o.reg = reg;
  o.lanes = lanes;
  o.text_off = (uint32_t)off;
  o.text_len = (uint32_t)len;
  RS_PUSH(p->f->ops, p->f->nops, p->f->capops, o);
}

static int parse_operand(P *p, octx c, uint32_t depth, uint32_t line);

/* A number: decimal, 0x hex, 0f/0d float bits, decimal float with exponent; optional '-'. */
static void scan_number(P *p) {
  size_t k = cur(p) == '-' ? 1 : 0;
  bool radix = peek(p, k) == '0' && is_alpha(peek(p, k + 1));
  while (is_id_char(peek(p, k)) || peek(p, k) == '.') {
    int ch = peek(p, k);
    k++;
    if (!radix && (ch == 'e' || ch == 'E') && (peek(p, k) == '+' || peek(p, k) == '-')) k++;
  }
  p->pos += k;
}

static int parse_atom(P *p, octx c, uint32_t line) {
  rs_func *f = p->f;
  size_t off = p->pos;
  int ch = cur(p);
  if (is_digit(ch) || (ch == '-' && is_digit(peek(p, 1)))) {
    scan_number(p);
    push_op(p, RS_OP_IMM, 0, 0, 0, off, p->pos - off);
    return 0;
  }
  size_t k = ident_len(p);
  if (!k) {
    char d[24];
    return perr(p, line, "unexpected %s in operands", cur_desc(p, d, sizeof d));
  }
  const char *s = p->s + p->pos;
  p->pos += k;
  int32_t v = lookup_reg(p, s, k);
  if (v >= 0) {
    if (cur(p) == '.') return perr(p, line, "register components (%.*s.) are not supported", (int)k, s);
    const rs_vreg *vr = &f->vregs[v];
    if ((c.flags & RS_F_DEF) && c.rw) push_op(p, RS_OP_VREG, 0, (uint32_t)v, vr->full, off, k);
    push_op(p, RS_OP_VREG, c.flags, (uint32_t)v, vr->full, off, k);
    return 0;
  }
  if (s[0] == '%') {
    if (!is_special(s + 1, k - 1))
      return perr(p, line, "undeclared register '%.*s'", (int)(k > 64 ? 64 : k), s);
    /* %tid.x, %ctaid.y ... */
    if (cur(p) == '.' && is_alpha(peek(p, 1))) {
      p->pos++;
      while (is_id_char(cur(p))) p->pos++;
    }
    push_op(p, RS_OP_OTHER, 0, 0, 0, off, p->pos - off);
    return 0;
  }
  if (c.bra) {
    fixup fx = {f->nops, (uint32_t)off, (uint32_t)k, line};
    RS_PUSH(p->fix, p->nfix, p->capfix, fx);
    push_op(p, RS_OP_BLOCK, 0, 0, 0, off, k);
    return 0;
  }
  /* symbols, parameters, the '_' sink */
  push_op(p, RS_OP_OTHER, 0, 0, 0, off, k);
  return 0;
}

/* elements {',' elements} up to the closing character; '(' lists may be empty */
static int parse_list(P *p, octx c, uint32_t depth, int close, uint32_t line) {
  if (skip_ws(p)) return -1;
  if (close == ')' && cur(p) == ')') {
    p->pos++;
    return 0;
  }
  for (;;) {
    if (parse_operand(p, c, depth, line)) return -1;
    if (skip_ws(p)) return -1;
    int ch = cur(p);
    if (ch == close) {
      p->pos++;
      return 0;
    }
    if (ch != ',') {
      char d[24];
      return perr(p, line, "expected ',' or '%c', found %s", close, cur_desc(p, d, sizeof d));
    }
    p->pos++;
    if (skip_ws(p)) return -1;
  }
}

static int parse_term(P *p, octx c, uint32_t depth, uint32_t line) {
  if (depth >= MAX_DEPTH) return perr(p, line, "operands nested too deeply");
  int ch = cur(p);
  if (ch == '{' || ch == '(') {
    p->pos++;
    return parse_list(p, c, depth + 1, ch == '{' ? '}' : ')', line);
  }
  if (ch == '[') {
    /* an address: every register in it is read */
    octx a = {0, false, false};
    p->pos++;
    return parse_list(p, a, depth + 1, ']', line);
  }
  return parse_atom(p, c, line);
}

/* ['!'] term {('+'|'-') term} ['|' operand] */
static int parse_operand(P *p, octx c, uint32_t depth, uint32_t line) {
  if (cur(p) == '!') {
    p->pos++;
    if (skip_ws(p)) return -1;
  }
  for (;;) {
    if (parse_term(p, c, depth, line)) return -1;
    if (skip_ws(p)) return -1;
    int ch = cur(p);
    if (ch == '+' || (ch == '-' && !is_digit(peek(p, 1)))) {
      p->pos++;
      if (skip_ws(p)) return -1;
      continue;
    }
    if (ch == '-') continue; /* "x-4": the sign belongs to the number */
    if (ch == '|') {
      p->pos++;
      if (skip_ws(p)) return -1;
      return parse_operand(p, c, depth + 1, line);
    }
    return 0;
  }
}

/* ---- instructions ---- */

/* Opcodes whose first operand is not written (stores, barriers, control flow ...). */
static bool no_dest(const char *op, size_t n, size_t base) {
  static const char *const bases[] = {
      "st", "red", "bar", "barrier", "bra", "ret", "exit", "trap", "brkpt", "membar", "fence",
      "prefetch", "prefetchu", "nanosleep", "cp", "pmevent", "griddepcontrol", "setmaxnreg",
      "stmatrix", "applypriority", "discard"};
  for (size_t i = 0; i < sizeof bases / sizeof *bases; i++)
    if (tok_is(op, base, bases[i])) return true;
  return n >= 10 && !memcmp(op, "wmma.store", 10);
}

/* [@[!]%p] opcode operands ;   Block splitting is the caller's business. */
static int parse_inst(P *p, bool *ends_block) {
  rs_func *f = p->f;
  uint32_t line = p->line, first_op = f->nops;
  int32_t guard = -1;
  size_t goff = 0, glen = 0;
  if (cur(p) == '@') {
    p->pos++;
    if (cur(p) == '!') p->pos++;
    goff = p->pos;
    glen = ident_len(p);
    if (!glen) return perr(p, line, "expected a predicate register after '@'");
    guard = lookup_reg(p, p->s + goff, glen);
    if (guard < 0)
      return perr(p, line, "undeclared register '%.*s'", (int)(glen > 64 ? 64 : glen), p->s + goff);
    if (f->vregs[guard].cls != p->pred_cls)
      return perr(p, line, "guard '%.*s' is not a predicate", (int)glen, p->s + goff);
    p->pos += glen;
    if (skip_ws(p)) return -1;
  }
  if (!is_alpha(cur(p))) {
    char d[24];
    return perr(p, line, "expected an opcode, found %s", cur_desc(p, d, sizeof d));
  }
  const char *op = p->s + p->pos;
  size_t n = 0, base = 0;
  while (is_id_char(peek(p, n)) || peek(p, n) == '.' || peek(p, n) == ':') n++;
  while (base < n && op[base] != '.') base++;
  p->pos += n;
  if (tok_is(op, base, "brx")) return perr(p, line, "brx.idx (jump tables) is not supported");
  bool is_bra = tok_is(op, base, "bra"), is_call = tok_is(op, base, "call");
  bool barrier = is_bra || tok_is(op, base, "ret") || tok_is(op, base, "exit") ||
                 tok_is(op, base, "trap");
  uint16_t dflags = RS_F_DEF | (guard >= 0 ? RS_F_COND : 0);
  bool rw = n >= 15 && !memcmp(op, "wgmma.mma_async", 15);
  if (skip_ws(p)) return -1;
  uint32_t ntop = 0;
  if (cur(p) != ';') {
    for (;;) {
      int ch = cur(p);
      bool dest = ntop == 0 && ch != '[' && (is_call ? ch == '(' : !no_dest(op, n, base));
      octx c = {dest ? dflags : 0, rw, is_bra};
      if (parse_operand(p, c, 0, line)) return -1;
      ntop++;
      if (f->nops - first_op > MAX_OPS) return perr(p, line, "too many operands");
      if (skip_ws(p)) return -1;
      if (cur(p) == ';') break;
      if (cur(p) != ',') {
        char d[24];
        return perr(p, line, "expected ',' or ';' after an operand of %.*s, found %s",
                    (int)(n > 64 ? 64 : n), op, cur_desc(p, d, sizeof d));
      }
      p->pos++;
      if (skip_ws(p)) return -1;
    }
  }
  p->pos++; /* ';' */
  if (guard >= 0) push_op(p, RS_OP_VREG, 0, (uint32_t)guard, f->vregs[guard].full, goff, glen);
  rs_inst in = {0};
  in.opcode = rs_intern_get(&f->names, op, n);
  in.first_op = first_op;
  in.nops = f->nops - first_op;
  in.line = line;
  if (is_bra) in.flags |= RS_I_BRANCH;
  if (guard >= 0) in.flags |= RS_I_PREDICATED;
  else if (barrier) in.flags |= RS_I_BARRIER;
  /* a plain register-to-register mov of one class: a copy hint (never when predicated: the
   * destination keeps its old value, so it must interfere with the source) */
  if (tok_is(op, base, "mov") && guard < 0 && ntop == 2 && in.nops == 2) {
    const rs_operand *d = &f->ops[first_op], *s = d + 1;
    if (d->kind == RS_OP_VREG && s->kind == RS_OP_VREG && (d->flags & RS_F_DEF) &&
        !(s->flags & RS_F_DEF) && f->vregs[d->reg].cls == f->vregs[s->reg].cls)
      in.flags |= RS_I_COPY;
  }
  RS_PUSH(f->insts, f->ninsts, f->capinsts, in);
  *ends_block = barrier;
  return 0;
}

/* ---- function bodies ---- */

/* A directive inside a body (the cursor is on the '.'). */
static int body_directive(P *p) {
  uint32_t line = p->line;
  size_t k = dir_len(p);
  const char *w = p->s + p->pos;
  if (tok_is(w, k, ".reg")) {
    p->pos += k;
    return parse_reg_decl(p, line);
  }
  if (tok_is(w, k, ".loc") || tok_is(w, k, ".file")) {
    skip_line(p);
    return 0;
  }
  return skip_stmt(p); /* .local .shared .param .pragma .callprototype ... */
}

/* Successors: branch targets, plus the next block unless the block ends in a barrier. */
static void build_cfg(rs_func *f) {
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    uint32_t end = bi + 1 < f->nblocks ? f->blocks[bi + 1].first_inst : f->ninsts;
    f->blocks[bi].ninsts = end - f->blocks[bi].first_inst;
  }
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    rs_block *b = &f->blocks[bi];
    bool fall = true;
    if (b->ninsts) {
      const rs_inst *in = &f->insts[b->first_inst + b->ninsts - 1];
      for (uint32_t o = 0; (in->flags & RS_I_BRANCH) && o < in->nops; o++)
        if (f->ops[in->first_op + o].kind == RS_OP_BLOCK)
          rs_block_add_succ(b, f->ops[in->first_op + o].reg);
      fall = !(in->flags & RS_I_BARRIER);
    }
    if (fall && bi + 1 < f->nblocks) rs_block_add_succ(b, bi + 1);
    b->has_succs = true;
  }
  rs_func_finish_cfg(f);
}

static int finish_func(P *p) {
  rs_func *f = p->f;
  for (uint32_t i = 0; i < p->nfix; i++) {
    const fixup *x = &p->fix[i];
    int32_t li = sym_find(&p->labels, p->s + x->off, x->len);
    if (li < 0)
      return perr(p, x->line, "undefined label '%.*s'", (int)(x->len > 64 ? 64 : x->len),
                  p->s + x->off);
    f->ops[x->op].reg = (uint32_t)p->labels.syms[li].val;
  }
  /* declared but never referenced: no class, like an unused MIR id */
  bool *used = rs_xcalloc(f->nvregs, sizeof *used);
  for (uint32_t i = 0; i < f->nops; i++)
    if (f->ops[i].kind == RS_OP_VREG) used[f->ops[i].reg] = true;
  for (uint32_t v = 0; v < f->nvregs; v++)
    if (!used[v]) f->vregs[v].cls = -1;
  free(used);
  build_cfg(f);
  return 0;
}

static void reset_func_state(P *p) {
  sym_free(&p->regs);
  sym_free(&p->labels);
  p->nents = p->nfix = 0;
  p->depth = 0;
}

/* Label at the cursor? ("name:" but not "a::b") */
static size_t label_len(const P *p) {
  size_t k = ident_len(p);
  if (!k || cur(p) == '%' || peek(p, k) != ':' || peek(p, k + 1) == ':') return 0;
  return k;
}

static int add_label(P *p, size_t k, char *blk_name, size_t *blk_len) {
  rs_func *f = p->f;
  const char *name = p->s + p->pos;
  uint32_t line = p->line;
  p->pos += k + 1;
  if (skip_ws(p)) return -1;
  /* "proto: .callprototype ...;" declares a call prototype, not a block */
  if (cur(p) == '.') {
    size_t d = dir_len(p);
    if (tok_is(p->s + p->pos, d, ".callprototype") || tok_is(p->s + p->pos, d, ".branchtargets"))
      return skip_stmt(p);
  }
  if (sym_find(&p->labels, name, k) >= 0)
    return perr(p, line, "label '%.*s' defined twice", (int)(k > 64 ? 64 : k), name);
  uint32_t bi = rs_func_add_block(f, name, k, f->nblocks, line);
  uint32_t li = sym_add(&p->labels, name, k); /* may move syms: index after the call */
  p->labels.syms[li].val = (int32_t)bi;
  *blk_len = k < 200 ? k : 200;
  memcpy(blk_name, name, *blk_len);
  return 0;
}

/* The body of function f; the cursor is just past its '{'. */
static int parse_body(P *p, uint32_t open_line) {
  rs_func *f = p->f;
  char blk[256] = "entry";
  size_t blen = 5;
  uint32_t nsplit = 0;
  bool split = false;
  rs_func_add_block(f, "entry", 5, 0, open_line);
  p->depth = 1;
  for (;;) {
    if (skip_ws(p)) return -1;
    int c = cur(p);
    if (c < 0)
      return perr(p, p->line, "unterminated body of '%s' (opened at line %u)", f->name, open_line);
    if (c == '}') {
      close_scope(p);
      p->pos++;
      if (--p->depth == 0) break;
    } else if (c == '{') {
      if (p->depth >= MAX_DEPTH) return perr(p, p->line, "scopes nested too deeply");
      p->pos++;
      p->depth++;
    } else if (c == '.') {
      if (body_directive(p)) return -1;
    } else if (c == '@' || is_alpha(c) || c == '_' || c == '$') {
      size_t k = label_len(p);
      if (k) {
        nsplit = 0;
        split = false;
        if (add_label(p, k, blk, &blen)) return -1;
        continue;
      }
      if (split) {
        /* code after a branch without a label: a block of its own */
        char nm[300];
        int nl = snprintf(nm, sizeof nm, "%.*s.%u", (int)blen, blk, ++nsplit);
        rs_func_add_block(f, nm, (size_t)nl, f->nblocks, p->line);
      }
      if (parse_inst(p, &split)) return -1;
    } else {
      char d[24];
      return perr(p, p->line, "unexpected %s in the body of '%s'", cur_desc(p, d, sizeof d), f->name);
    }
  }
  return finish_func(p);
}

/* ---- top level ---- */

static int target_directive(P *p, uint32_t line) {
  while (cur(p) == ' ' || cur(p) == '\t') p->pos++;
  size_t k = 0;
  while (is_id_char(peek(p, k))) k++;
  const char *w = p->s + p->pos;
  skip_line(p);
  if (p->m->tgt) return 0; /* --target overrides the file */
  char name[40];
  snprintf(name, sizeof name, "%.*s", (int)(k < 32 ? k : 32), w);
  const rs_target *t = rs_target_by_name(name);
  if (!t || !(t->reads & RS_READS_PTX))
    return perr(p, line, "unknown PTX target '%s' (supported: sm_75, sm_80, sm_86, sm_89, sm_90)", name);
  p->m->tgt = t;
  return 0;
}

/* A function header "... .entry NAME (...) ... {" or "... .func (ret) NAME (...) ... {":
 * read the name after the directive (the cursor is just past .entry/.func). */
static int func_name(P *p, bool is_func, const char **name, size_t *len) {
  if (skip_ws(p)) return -1;
  if (is_func && cur(p) == '(') {
    uint32_t line = p->line, depth = 0;
    do {
      if (skip_ws(p)) return -1;
      int c = cur(p);
      if (c < 0) return perr(p, line, "unbalanced '('");
      if (c == '(') depth++;
      if (c == ')') depth--;
      p->pos++;
    } while (depth);
    if (skip_ws(p)) return -1;
  }
  size_t k = ident_len(p);
  if (!k || cur(p) == '%') return perr(p, p->line, "expected a function name");
  *name = p->s + p->pos;
  *len = k;
  p->pos += k;
  return 0;
}

/* One top-level directive statement; a function body when it has one. */
static int top_statement(P *p) {
  uint32_t line = p->line;
  size_t k = dir_len(p);
  const char *w = p->s + p->pos;
  if (tok_is(w, k, ".version") || tok_is(w, k, ".address_size") || tok_is(w, k, ".file") ||
      tok_is(w, k, ".loc")) {
    skip_line(p);
    return 0;
  }
  if (tok_is(w, k, ".target")) {
    p->pos += k;
    return target_directive(p, line);
  }
  const char *name = NULL;
  size_t nlen = 0;
  bool init = false;
  int paren = 0;
  for (;;) {
    if (skip_ws(p)) return -1;
    int c = cur(p);
    if (c < 0) return perr(p, line, "missing ';' or '{' after directive");
    if (c == '.') {
      size_t d = dir_len(p);
      bool ent = tok_is(p->s + p->pos, d, ".entry"), fn = tok_is(p->s + p->pos, d, ".func");
      p->pos += d;
      if ((ent || fn) && func_name(p, fn, &name, &nlen)) return -1;
    } else if (c == '"') {
      if (skip_string(p)) return -1;
    } else if (c == '(' || c == '[') {
      paren++;
      p->pos++;
    } else if (c == ')' || c == ']') {
      if (--paren < 0) return perr(p, p->line, "unbalanced '%c'", c);
      p->pos++;
    } else if (c == '=') {
      init = true;
      p->pos++;
    } else if (c == '{' && name && !init && !paren) {
      uint32_t open = p->line;
      p->pos++;
      if (!p->m->tgt) return perr(p, open, "no .target directive before function '%.*s'", (int)nlen, name);
      if (!(p->m->tgt->reads & RS_READS_PTX))
        return perr(p, open, "PTX needs an NVIDIA target, not %s", p->m->tgt->name);
      rs_func_new(p->m, name, nlen, line);
      p->f = p->m->funcs[p->m->nfuncs - 1];
      p->f->kind = RS_SRC_PTX;
      p->f->tgt = p->m->tgt;
      p->pred_cls = rs_target_class(p->f->tgt, "pred", 4);
      reset_func_state(p);
      return parse_body(p, open);
    } else if (c == '{') {
      if (skip_braces(p)) return -1;
      if (!init) return 0; /* .section NAME { ... } */
    } else if (c == ';' && !paren) {
      p->pos++;
      return 0; /* a declaration (.global, .extern .func prototype ...) */
    } else if (c >= 0x20 && c <= 0x7e) {
      p->pos++;
    } else {
      char d[24];
      return perr(p, p->line, "unexpected %s", cur_desc(p, d, sizeof d));
    }
  }
}

int rs_ptx_parse(rs_module *m, rs_err *e) {
  if (m->len > UINT32_MAX) return rs_errf(e, m->path, 0, "file too large");
  P p = {0};
  p.m = m;
  p.e = e;
  p.s = m->text;
  p.n = m->len;
  p.line = 1;
  int rc = 0;
  for (;;) {
    if ((rc = skip_ws(&p))) break;
    int c = cur(&p);
    if (c < 0) break;
    if (c != '.') {
      char d[24];
      rc = perr(&p, p.line, "expected a directive, found %s", cur_desc(&p, d, sizeof d));
      break;
    }
    if ((rc = top_statement(&p))) break;
  }
  reset_func_state(&p);
  free(p.ents);
  free(p.fix);
  return rc;
}
