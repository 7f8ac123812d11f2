/* sem.c - one function (PTX, or SASS with physical registers) as a semantic data-flow graph.
 *
 * Each instruction's printed operands are read again from its source line (the IR keeps their
 * text spans), its row of the correspondence table (ptx2sass.c) says what it computes, and the
 * template becomes nodes: `add(mul($1,$2),$3)` of IMAD is an internal mul node under an add.
 * Registers written are sites (PTX: one per value written; SASS: one per 32-bit unit), registers
 * read are uses, linked to the sites that reach them (reaching definitions over the CFG; a
 * predicated def keeps the old value). Copies are looked through, registers holding numeric
 * constants read as the constant, and a few algebraic rules (x+0, x*1, x<<k = x*2^k, LOP3 truth
 * tables with constant inputs) bring both sides to one form. Templates are evaluated again until
 * no more constants appear (a constant known only through a register needs the uses first). */
#include "ptx/match.h"
#include "sass/sass.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PK_REG, PK_IMM, PK_CB, PK_SREG, PK_MEM, PK_GROUP, PK_SYM, PK_CONST, PK_OTHER };
enum { PF_NEG = 1, PF_NOT = 2, PF_ABS = 4, PF_H1 = 8 };
#define CMP_MARK 0xc0117a5eull /* rs_snode.val of a compare node (not a leaf) */

typedef struct {
  uint8_t kind, flags;
  uint32_t off, len;    /* text (decorations stripped) */
  int32_t use;          /* PK_REG read, PK_MEM base register */
  int32_t use2;         /* PK_MEM second register */
  int32_t site;         /* PK_REG written: first site */
  uint8_t nsites, w;    /* sites written; units */
  uint32_t scale;       /* PK_MEM: .X4 ... */
  int64_t imm;          /* PK_MEM offset; PK_CB offset; PK_CONST value */
  uint32_t bank;
  uint32_t elt, nelt;   /* PK_GROUP: elements pops[elt .. elt+nelt] */
  uint32_t sym;         /* PK_MEM: a symbol's text offset (0: none) */
  uint32_t symlen;
} pop;

typedef struct {
  rs_sgraph *g;
  const rs_func *f;
  rs_err *e;
  const char *src;
  pop *pops;
  uint32_t npops, cappops;
  uint32_t *ipop, *inpop; /* per instruction: first top-level pop, count */
  const rs_p2s_row **row;
  uint32_t *lstart;       /* line start offsets */
  uint32_t nlines;
  uint32_t param_base;
  /* PTX parameters: name offset/len -> byte offset */
  uint32_t *pname_off, *pname_len, *pbyte;
  uint32_t nparams, capparams;
  uint32_t *sname_off, *sname_len, *sbyte; /* .shared variables -> byte offset */
  uint32_t nshared, capshared;
  uint32_t *gloc;         /* per instruction: guard location (UINT32_MAX: none), and negated */
  uint8_t *gneg;
  uint32_t cur_inst;
  char type;
  bool changed;
} B;

/* ---- hashing ---- */
static uint64_t hs(const char *s) { return rs_hash_bytes(s, strlen(s), 0x5e3a); }
static uint64_t hmix(uint64_t a, uint64_t b) { return rs_hash_bytes(&b, sizeof b, a * 0x9e3779b97f4a7c15ull + 1); }

/* ---- text ---- */
static bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
         c == '.' || c == '%';
}
static bool tok(const char *s, size_t n, const char *w) { return strlen(w) == n && !memcmp(s, w, n); }

static int64_t parse_int(const char *s, size_t n, bool *ok) {
  char buf[40];
  *ok = n > 0 && n < sizeof buf;
  if (!*ok) return 0;
  memcpy(buf, s, n);
  buf[n] = 0;
  char *end;
  int64_t v = (int64_t)strtoll(buf, &end, 0);
  if (*end) { /* 0x80000000 and above: unsigned */
    v = (int64_t)strtoull(buf, &end, 0);
    *ok = !*end;
  }
  return v;
}

static uint16_t f32_to_f16(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  uint32_t sign = (b >> 16) & 0x8000, exp = (b >> 23) & 0xff, man = b & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
  int e = (int)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00);
  if (e <= 0) { /* subnormal half */
    if (e < -10) return (uint16_t)sign;
    man |= 0x800000;
    uint32_t sh = (uint32_t)(14 - e);
    return (uint16_t)(sign | ((man + (1u << (sh - 1))) >> sh));
  }
  uint32_t r = sign | ((uint32_t)e << 10) | (man >> 13);
  if (man & 0x1000) r++;
  return (uint16_t)r;
}

/* An immediate as bits, read as the row's type says. */
static bool imm_bits(const char *s, size_t n, char type, uint64_t *out) {
  bool neg = n && s[0] == '-';
  const char *w = s + (neg || (n && s[0] == '+'));
  size_t m = n - (size_t)(w - s);
  if (m > 2 && w[0] == '0' && (w[1] == 'f' || w[1] == 'F' || w[1] == 'd' || w[1] == 'D')) { /* PTX float bits */
    char buf[24];
    if (m - 2 >= sizeof buf) return false;
    memcpy(buf, w + 2, m - 2);
    buf[m - 2] = 0;
    *out = strtoull(buf, NULL, 16);
    if (neg) *out ^= (w[1] == 'f' || w[1] == 'F') ? 0x80000000ull : 0x8000000000000000ull;
    return true;
  }
  if (type == 'f' || type == 'd' || type == 'h') {
    char buf[64];
    if (n >= sizeof buf) return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    double d;
    if (strstr(buf, "INF")) d = neg ? -INFINITY : INFINITY;
    else if (strstr(buf, "NAN")) d = NAN;
    else if (m > 2 && w[0] == '0' && w[1] == 'x') { /* SASS prints raw bits of float operands in hex */
      *out = strtoull(w, NULL, 16);
      return true;
    } else d = strtod(buf, NULL);
    if (type == 'd') memcpy(out, &d, 8);
    else if (type == 'h') *out = f32_to_f16((float)d);
    else {
      float f = (float)d;
      uint32_t b;
      memcpy(&b, &f, 4);
      *out = b;
    }
    return true;
  }
  bool ok;
  int64_t v = parse_int(s, n, &ok);
  *out = (uint32_t)v; /* integers compare as 32-bit patterns (-1 == 0xffffffff) */
  return ok;
}

/* ---- the special registers and constant bank 0 ---- */
static uint64_t sreg_colour(const char *s, size_t n) {
  char buf[32];
  size_t k = 0;
  if (n > 3 && !memcmp(s, "SR_", 3)) s += 3, n -= 3;
  else if (n && s[0] == '%') s++, n--;
  for (size_t i = 0; i < n && k + 1 < sizeof buf; i++) buf[k++] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
  buf[k] = 0;
  return hmix(hs("sreg"), hs(buf));
}

static uint64_t cb_colour(B *b, uint32_t bank, uint32_t off) {
  static const char *const nt[] = {"ntid.x", "ntid.y", "ntid.z", "nctaid.x", "nctaid.y", "nctaid.z"};
  if (bank == 0 && off < 0x18 && off % 4 == 0) return hmix(hs("sreg"), hs(nt[off / 4]));
  if (bank == 0 && off >= b->param_base) return hmix(hs("param"), off - b->param_base);
  return hmix(hmix(hs("cbank"), bank), off);
}

/* ---- graph building helpers ---- */
static uint32_t add_site(B *b, uint32_t loc, uint32_t inst) {
  rs_ssite s = {UINT32_MAX, 0, 1, loc, inst};
  RS_PUSH(b->g->sites, b->g->nsites, b->g->capsites, s);
  return b->g->nsites - 1;
}

static uint32_t add_use(B *b, uint32_t loc, uint8_t w, uint32_t inst) {
  rs_suse u;
  memset(&u, 0, sizeof u);
  u.inst = inst;
  u.loc = loc;
  u.w = w;
  RS_PUSH(b->g->uses, b->g->nuses, b->g->capuses, u);
  return b->g->nuses - 1;
}

static bool sass_reg(const B *b, const rs_operand *o) {
  return o->kind == RS_OP_PREG && o->lanes && rs_sass_allocatable(b->f->tgt, o->reg);
}

/* The registers of pop span [off, off+len): defs become sites, reads a use. */
static void span_regs(B *b, const rs_inst *in, pop *p, uint32_t off, uint32_t len, bool mem) {
  const rs_func *f = b->f;
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if (op->text_off < off || op->text_off >= off + len) continue;
    bool reg = b->g->sass ? sass_reg(b, op) : op->kind == RS_OP_VREG;
    if (!reg) continue;
    uint32_t loc = op->reg;
    unsigned w = b->g->sass ? rs_lanes_units(op->lanes) : 1;
    if (b->g->sass) loc += (uint32_t)rs_lanes_first(op->lanes);
    if (w > 4) w = 4;
    if (op->flags & RS_F_DEF) {
      if (mem) continue;
      p->site = (int32_t)b->g->nsites;
      p->nsites = (uint8_t)w;
      for (unsigned k = 0; k < w; k++) add_site(b, loc + k, (uint32_t)(in - f->insts));
      p->w = (uint8_t)(b->g->sass ? w : f->vregs[loc].width);
    } else {
      int32_t u = (int32_t)add_use(b, loc, (uint8_t)w, (uint32_t)(in - f->insts));
      if (p->use < 0) p->use = u;
      else p->use2 = u;
      if (!mem) p->w = (uint8_t)(b->g->sass ? w : f->vregs[loc].width);
    }
  }
}

/* A symbol's byte offset among the PTX parameters, or -1. */
static int64_t param_off(const B *b, const char *s, size_t n) {
  for (uint32_t i = 0; i < b->nparams; i++)
    if (b->pname_len[i] == n && !memcmp(b->src + b->pname_off[i], s, n)) return b->pbyte[i];
  return -1;
}

/* One printed operand s[off, off+len). */
static void classify(B *b, const rs_inst *in, uint32_t off, uint32_t len, pop *p) {
  const char *s = b->src;
  memset(p, 0, sizeof *p);
  p->use = p->use2 = p->site = -1;
  while (len && (s[off] == ' ' || s[off] == '\t')) off++, len--;
  while (len && (s[off + len - 1] == ' ' || s[off + len - 1] == '\t')) len--;
  for (;;) {
    if (len && s[off] == '-' && len > 1 && !(s[off + 1] >= '0' && s[off + 1] <= '9')) p->flags |= PF_NEG;
    else if (len && (s[off] == '!' || s[off] == '~')) p->flags |= PF_NOT;
    else if (len && s[off] == '|') p->flags |= PF_ABS;
    else break;
    off++, len--;
  }
  if (len && s[off + len - 1] == '|') len--;
  p->off = off;
  p->len = len;
  const char *t = s + off;
  if (!len) {
    p->kind = PK_OTHER;
    return;
  }
  if (t[0] == '{' || (!b->g->sass && memchr(t, '|', len))) { /* PTX vector or d|p pair */
    p->kind = PK_GROUP;
    uint32_t i = off + (t[0] == '{'), end = off + len - (t[len - 1] == '}');
    uint32_t first = b->npops;
    /* elements go after the top-level pops of this instruction: reserve by pushing now */
    for (uint32_t a = i; a <= end; a++)
      if (a == end || s[a] == ',' || s[a] == '|') {
        pop e;
        classify(b, in, i, a - i, &e);
        RS_PUSH(b->pops, b->npops, b->cappops, e);
        i = a + 1;
      }
    p->elt = first;
    p->nelt = b->npops - first;
    return;
  }
  if (t[0] == '[' || (len > 5 && !memcmp(t, "desc[", 5))) {
    p->kind = PK_MEM;
    uint32_t a = off;
    if (t[0] == 'd') { /* skip desc[URx] */
      while (a < off + len && s[a] != ']') a++;
      a++;
    }
    uint32_t end = off + len - 1; /* the closing ']' */
    a++;
    span_regs(b, in, p, a, end - a, true);
    /* terms: registers (with .X4 scale), numbers, symbols */
    for (uint32_t i = a; i < end;) {
      while (i < end && (s[i] == ' ' || s[i] == '+')) i++;
      uint32_t j = i + (s[i] == '-');
      while (j < end && s[j] != '+' && s[j] != ' ' && !(s[j] == '-' && j > i)) j++;
      const char *w = s + i;
      size_t n = j - i;
      bool ok;
      if (n && ((w[0] >= '0' && w[0] <= '9') || w[0] == '-')) {
        int64_t v = parse_int(w, n, &ok);
        if (ok) p->imm += v;
      } else if (n && b->g->sass) {
        const char *x = memchr(w, '.', n);
        if (x && x + 1 < w + n && x[1] == 'X') p->scale = (uint32_t)strtoul(x + 2, NULL, 10);
      } else if (n && w[0] == '%') { /* a PTX register: span_regs has it */
      } else if (n) {
        p->sym = i;
        p->symlen = (uint32_t)n;
      }
      i = j;
    }
    return;
  }
  if (len >= 2 && t[0] == 'c' && t[1] == '[') {
    p->kind = PK_CB;
    unsigned long bank = strtoul(t + 2, NULL, 16);
    const char *q = memchr(t, ']', len);
    bool plain = q && q + 1 < t + len && q[1] == '[' && q[2] == '0' && q[3] == 'x';
    bool rz = q && q + 3 < t + len && q[1] == '[' && q[2] == 'R' && q[3] == 'Z'; /* sm_90: c[0x0][RZ] */
    p->bank = (uint32_t)bank;
    p->imm = plain ? (int64_t)strtoul(q + 2, NULL, 16) : rz ? (q[4] == '+' ? (int64_t)strtoul(q + 5, NULL, 16) : 0) : -1;
    span_regs(b, in, p, off, len, true);
    if (p->use >= 0) p->kind = PK_OTHER; /* indexed constant: no correspondence */
    return;
  }
  if (len >= 3 && (!memcmp(t, "SR_", 3) || (t[0] == '%' && !b->g->sass))) {
    bool special = t[0] == 'S';
    if (!special) { /* a PTX register or a special register */
      span_regs(b, in, p, off, len, false);
      if (p->use >= 0 || p->site >= 0) {
        p->kind = PK_REG;
        return;
      }
    }
    p->kind = PK_SREG;
    return;
  }
  if (tok(t, len, "RZ") || tok(t, len, "URZ") || tok(t, len, "SRZ")) {
    p->kind = PK_CONST;
    return;
  }
  if (tok(t, len, "PT") || tok(t, len, "UPT")) {
    p->kind = PK_CONST;
    p->imm = (p->flags & PF_NOT) ? 0 : -1;
    p->flags &= (uint8_t)~PF_NOT;
    return;
  }
  if ((t[0] >= '0' && t[0] <= '9') || t[0] == '-' || t[0] == '+' || (len >= 3 && !memcmp(t, "INF", 3)) ||
      (len >= 3 && !memcmp(t, "NAN", 3)) || (len >= 4 && !memcmp(t, "QNAN", 4))) {
    p->kind = PK_IMM;
    return;
  }
  span_regs(b, in, p, off, len, false);
  if (p->use >= 0 || p->site >= 0) {
    p->kind = PK_REG;
    const char *x = memchr(t, '.', len);
    if (x && (size_t)(t + len - x) >= 6 && !memcmp(x, ".H1_H1", 6)) p->flags |= PF_H1;
    return;
  }
  p->kind = (t[0] == 'P' || t[0] == 'R' || t[0] == 'U' || t[0] == 'B' || t[0] == '`') ? PK_OTHER : PK_SYM;
}

/* Line starts of the source (instructions sit on one line each). */
static void lines(B *b) {
  uint32_t cap = 0;
  size_t n = strlen(b->src);
  RS_PUSH(b->lstart, b->nlines, cap, 0);
  for (size_t i = 0; i < n; i++)
    if (b->src[i] == '\n') RS_PUSH(b->lstart, b->nlines, cap, (uint32_t)(i + 1));
}

/* The operand text of instruction ii: after the guard and the opcode, up to ';'. */
static void operand_span(B *b, const rs_inst *in, uint32_t *off, uint32_t *end) {
  const char *s = b->src;
  uint32_t i = in->line >= 1 && in->line <= b->nlines ? b->lstart[in->line - 1] : 0;
  while (s[i] == ' ' || s[i] == '\t') i++;
  if (s[i] == '/' && s[i + 1] == '*') {
    const char *c = strstr(s + i, "*/");
    if (c) i = (uint32_t)(c - s) + 2;
  }
  while (s[i] == ' ' || s[i] == '\t') i++;
  if (s[i] == '@') {
    uint32_t at = i;
    while (s[i] && s[i] != ' ' && s[i] != '\t') i++;
    uint32_t ii = (uint32_t)(in - b->f->insts);
    for (uint32_t o = 0; o < in->nops && (in->flags & RS_I_PREDICATED); o++) {
      const rs_operand *op = &b->f->ops[in->first_op + o];
      if (op->text_off > at && op->text_off < i && (op->kind == RS_OP_VREG || op->kind == RS_OP_PREG)) {
        b->gloc[ii] = op->reg + (b->g->sass ? (uint32_t)rs_lanes_first(op->lanes) : 0);
        b->gneg[ii] = s[at + 1] == '!';
      }
    }
    while (s[i] == ' ' || s[i] == '\t') i++;
  }
  while (s[i] && s[i] != ' ' && s[i] != '\t' && s[i] != ';' && s[i] != '\n') i++; /* opcode */
  *off = i;
  while (s[i] && s[i] != ';' && s[i] != '\n') i++;
  *end = i;
}

/* The PTX entry's parameters, for ld.param [name+off]: name -> byte offset in the param space. */
static void ptx_params(B *b) {
  const char *s = b->src, *fn = b->f->name;
  const char *at = NULL;
  for (const char *q = strstr(s, fn); q; q = strstr(q + 1, fn)) {
    const char *r = q + strlen(fn);
    while (*r == ' ' || *r == '\t' || *r == '\n' || *r == '\r') r++;
    if (*r == '(' && q > s && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n')) {
      at = r + 1;
      break;
    }
  }
  if (!at) return;
  uint32_t off = 0;
  for (const char *q = at; *q && *q != ')' && *q != '{';) {
    const char *p = strstr(q, ".param");
    const char *close = strchr(q, ')');
    if (!p || (close && p > close)) break;
    q = p + 6;
    uint32_t align = 0, size = 0, count = 1;
    for (;;) {
      while (*q == ' ' || *q == '\t') q++;
      if (*q != '.') break;
      const char *w = ++q;
      while (is_word(*q) && *q != '.') q++;
      size_t n = (size_t)(q - w);
      if (tok(w, n, "align")) {
        while (*q == ' ') q++;
        align = (uint32_t)strtoul(q, (char **)&q, 10);
      } else if (n >= 2 && (w[0] == 'u' || w[0] == 's' || w[0] == 'b' || w[0] == 'f')) {
        size = (uint32_t)strtoul(w + 1, NULL, 10) / 8;
      } else if (tok(w, n, "ptr") || tok(w, n, "global") || tok(w, n, "const") || tok(w, n, "shared")) {
        continue;
      }
    }
    const char *name = q;
    while (is_word(*q) && *q != '.') q++;
    uint32_t nlen = (uint32_t)(q - name);
    if (*q == '[') count = (uint32_t)strtoul(q + 1, (char **)&q, 10);
    if (!size) size = 4;
    if (!align) align = size;
    off = (off + align - 1) / align * align;
    RS_PUSH(b->pname_off, b->nparams, b->capparams, (uint32_t)(name - s));
    b->pname_len = rs_xrealloc(b->pname_len, sizeof *b->pname_len * b->capparams);
    b->pbyte = rs_xrealloc(b->pbyte, sizeof *b->pbyte * b->capparams);
    b->pname_len[b->nparams - 1] = nlen;
    b->pbyte[b->nparams - 1] = off;
    off += size * (count ? count : 1);
    while (*q && *q != ',' && *q != ')') q++;
    if (*q == ',') q++;
  }
  /* .shared variables of the body: ptxas lays them out in declaration order, each aligned
   * (measured on the corpus kernels: As at 0, Bs at 0x800 for two 2 KiB arrays) */
  const char *body = strchr(at, '{');
  if (!body) return;
  int depth = 0;
  uint32_t soff = 0;
  for (const char *q = body; *q; q++) {
    if (*q == '{') depth++;
    if (*q == '}' && --depth == 0) break;
    if (strncmp(q, ".shared", 7) || !(q[-1] == '\t' || q[-1] == ' ' || q[-1] == '\n')) continue;
    const char *semi = strchr(q, ';');
    if (!semi) break;
    uint32_t align = 1, size = 1, count = 1;
    const char *name = NULL;
    uint32_t nlen = 0;
    for (const char *w = q + 7; w < semi;) {
      while (w < semi && (*w == ' ' || *w == '\t')) w++;
      const char *t0 = w;
      while (w < semi && *w != ' ' && *w != '\t' && *w != '[') w++;
      if (!strncmp(t0, ".align", 6)) {
        while (w < semi && (*w == ' ' || *w == '\t')) w++;
        align = (uint32_t)strtoul(w, (char **)&w, 10);
      } else if (t0[0] == '.' && (t0[1] == 'b' || t0[1] == 'u' || t0[1] == 's' || t0[1] == 'f')) {
        size = (uint32_t)strtoul(t0 + 2, NULL, 10) / 8;
      } else if (w > t0) {
        name = t0;
        nlen = (uint32_t)(w - t0);
        if (*w == '[') count = (uint32_t)strtoul(w + 1, (char **)&w, 10);
        break;
      }
    }
    if (!name) continue;
    if (!align) align = 1;
    soff = (soff + align - 1) / align * align;
    RS_PUSH(b->sname_off, b->nshared, b->capshared, (uint32_t)(name - s));
    b->sname_len = rs_xrealloc(b->sname_len, sizeof *b->sname_len * b->capshared);
    b->sbyte = rs_xrealloc(b->sbyte, sizeof *b->sbyte * b->capshared);
    b->sname_len[b->nshared - 1] = nlen;
    b->sbyte[b->nshared - 1] = soff;
    soff += (size ? size : 1) * (count ? count : 1);
    q = semi;
  }
}

/* A .shared symbol's offset, or -1. */
static int64_t shared_off(const B *b, const char *s, size_t n) {
  for (uint32_t i = 0; i < b->nshared; i++)
    if (b->sname_len[i] == n && !memcmp(b->src + b->sname_off[i], s, n)) return b->sbyte[i];
  return -1;
}

/* ---- node construction with the canonicalising rules ---- */
static rs_sarg leaf_const(uint64_t v) {
  rs_sarg a = {RS_SA_LEAF, true, hmix(hs("const"), v), v, 0};
  return a;
}
static rs_sarg leaf_other(uint64_t colour) {
  rs_sarg a = {RS_SA_LEAF, false, colour, 0, 0};
  return a;
}
static bool is_const(rs_sarg a, uint64_t v) { return a.kind == RS_SA_LEAF && a.num && a.val == v; }
static bool num(rs_sarg a) { return a.kind == RS_SA_LEAF && a.num; }

static bool commutes(const char *op) {
  static const char *const c[] = {"add", "mul", "mulw", "and", "or", "xor", "fadd", "fmul", "dadd", "dmul", "ffma",
                                  "dfma", "imax", "imin", "umax", "umin", "fmax", "fmin", "pand", "mulhi"};
  for (size_t i = 0; i < sizeof c / sizeof *c; i++)
    if (!strcmp(op, c[i])) return true;
  return false;
}

static rs_sarg node(B *b, const char *op, uint64_t opc, const rs_sarg *a, unsigned na, unsigned width) {
  rs_snode n;
  memset(&n, 0, sizeof n);
  n.op = opc ? opc : hs(op);
  n.na = (uint8_t)na;
  n.width = (uint8_t)width;
  n.comm = op && commutes(op);
  n.inst = b->cur_inst;
  n.internal = true; /* the statement's top node clears it */
  for (unsigned i = 0; i < na; i++) n.a[i] = a[i];
  RS_PUSH(b->g->nodes, b->g->nnodes, b->g->capnodes, n);
  uint32_t id = b->g->nnodes - 1;
  for (unsigned i = 0; i < na; i++)
    if (a[i].kind == RS_SA_USE) {
      RS_PUSH(b->g->ref_node, b->g->nrefs, b->g->caprefs, id);
      b->g->ref_arg = rs_xrealloc(b->g->ref_arg, sizeof *b->g->ref_arg * b->g->caprefs);
      b->g->ref_use = rs_xrealloc(b->g->ref_use, sizeof *b->g->ref_use * b->g->caprefs);
      b->g->ref_arg[b->g->nrefs - 1] = i;
      b->g->ref_use[b->g->nrefs - 1] = a[i].idx;
    }
  rs_sarg r = {RS_SA_NODE, false, 0, 0, id};
  return r;
}

static const rs_snode *N(const B *b, rs_sarg a) { return a.kind == RS_SA_NODE ? &b->g->nodes[a.idx] : NULL; }

/* The colour of a leaf an argument is or reads (through a register), or 0. */
static uint64_t leaf_of(const B *b, rs_sarg a) {
  if (a.kind == RS_SA_LEAF) return a.leaf;
  if (a.kind != RS_SA_USE) return 0;
  const rs_suse *u = &b->g->uses[a.idx];
  if (u->res[1] - u->res[0] != 1) return 0;
  const rs_ssite *s = &b->g->sites[b->g->ress[u->res[0]]];
  if (s->node == UINT32_MAX || !b->g->nodes[s->node].leaf) return 0;
  return b->g->nodes[s->node].op;
}

/* sm_90 addresses shared memory from its cluster window, (SR_CgaCtaId << 24) + 0x400: that
 * base is PTX's shared address 0 (LEA R9, R10(SR_CgaCtaId), R9(0x400), 0x18). */
static bool shared_base(const B *b, rs_sarg x, rs_sarg y) {
  for (int k = 0; k < 2; k++, (void)0) {
    rs_sarg m = k ? y : x, c = k ? x : y;
    const rs_snode *n = m.kind == RS_SA_NODE ? &b->g->nodes[m.idx] : NULL;
    if (!n || n->op != hs("mul") || n->na != 2 || !is_const(c, 0x400)) continue;
    for (int j = 0; j < 2; j++)
      if (is_const(n->a[1 - j], 1u << 24) && leaf_of(b, n->a[j]) == sreg_colour("SR_CGACTAID", 11)) return true;
  }
  return false;
}

/* op(args) after the rules; width is the value's units. */
static rs_sarg mk(B *b, const char *op, rs_sarg *a, unsigned na, unsigned width) {
  if (!strcmp(op, "shl") && na == 2 && num(a[1]) && a[1].val < 64) {
    rs_sarg m = leaf_const(1ull << a[1].val);
    if (width == 1) m = leaf_const((uint32_t)(1ull << a[1].val));
    a[1] = m;
    op = "mul";
  }
  if (b->g->sass && !strcmp(op, "add") && na == 2 && shared_base(b, a[0], a[1])) return leaf_const(0);
  if (!strcmp(op, "add") || !strcmp(op, "or") || !strcmp(op, "xor")) { /* drop zeros */
    unsigned k = 0;
    for (unsigned i = 0; i < na; i++)
      if (!is_const(a[i], 0)) a[k++] = a[i];
    if (k == 0) return leaf_const(0);
    if (k == 1) return a[0];
    if (k == 2 && !strcmp(op, "add") && num(a[0]) && num(a[1])) return leaf_const((uint32_t)(a[0].val + a[1].val));
    na = k;
  }
  if (!strcmp(op, "mul") && na == 2) {
    if (is_const(a[0], 0) || is_const(a[1], 0)) return leaf_const(0);
    if (is_const(a[0], 1)) return a[1];
    if (is_const(a[1], 1)) return a[0];
    if (num(a[0]) && num(a[1])) return leaf_const((uint32_t)(a[0].val * a[1].val));
  }
  if (!strcmp(op, "pand") && na == 2) {
    if (is_const(a[1], UINT64_MAX)) return a[0];
    if (is_const(a[0], UINT64_MAX)) return a[1];
  }
  if ((!strcmp(op, "ineg") || !strcmp(op, "fneg") || !strcmp(op, "not")) && na == 1) {
    const rs_snode *x = N(b, a[0]);
    if (x && x->op == hs(op) && x->na == 1) return x->a[0];
    if (num(a[0]) && !strcmp(op, "ineg")) return leaf_const((uint32_t)(-(int64_t)a[0].val));
    if (num(a[0]) && !strcmp(op, "fneg")) return leaf_const(a[0].val ^ (a[0].val > 0xffffffffull ? 1ull << 63 : 0x80000000ull));
    if (num(a[0]) && !strcmp(op, "not")) return leaf_const((uint32_t)~a[0].val);
    if (!strcmp(op, "not") && x && x->val == CMP_MARK) return a[0]; /* compares are kept up to negation */
  }
  if (!strcmp(op, "sel") && na == 3) { /* polarity-free like the compares: sel(p,a,b) ~ sel(!p,b,a) */
    const rs_snode *x = N(b, a[0]);
    if (x && x->op == hs("not")) a[0] = x->a[0];
    if (a[1].kind == a[2].kind && a[1].leaf > a[2].leaf) {
      rs_sarg t = a[1];
      a[1] = a[2];
      a[2] = t;
    }
    if (a[1].kind == RS_SA_USE && a[2].kind == RS_SA_USE && width == 1) {
      rs_sarg r = node(b, op, 0, a, na, width);
      b->g->nodes[r.idx].phi = true;
      return r;
    }
  }
  return node(b, op, 0, a, na, width);
}

/* ---- template evaluation ---- */
typedef struct {
  const char *s;
  size_t i;
  bool bad;
} T;

static rs_sarg expr(B *b, T *t, const rs_inst *in, unsigned width);

/* Operand k of the instruction (printed order), or element e of a group (-1: whole). */
static const pop *opnd(const B *b, uint32_t ii, unsigned k) {
  return k < b->inpop[ii] ? &b->pops[b->ipop[ii] + k] : NULL;
}

/* The resolved sources of use u's unit k. */
static const uint32_t *res(const B *b, uint32_t u, unsigned k, uint32_t *n) {
  const rs_suse *x = &b->g->uses[u];
  if (k >= x->w) {
    *n = 0;
    return NULL;
  }
  *n = x->res[k + 1] - x->res[k];
  return b->g->ress + x->res[k];
}

/* A use read as its constant when every resolved source is the same numeric constant. */
static rs_sarg use_arg(B *b, int32_t u) {
  rs_sarg a = {RS_SA_USE, false, 0, 0, (uint32_t)u};
  if (u < 0) return leaf_other(hs("?"));
  uint32_t n;
  const uint32_t *r = res(b, (uint32_t)u, 0, &n);
  if (!n || b->g->uses[u].w != 1) return a;
  uint64_t v = 0;
  for (uint32_t i = 0; i < n; i++) {
    const rs_ssite *s = &b->g->sites[r[i]];
    if (s->node == UINT32_MAX) return a;
    const rs_snode *x = &b->g->nodes[s->node];
    if (x->leaf != 1 || (s->part != 0 && x->val != 0)) return a; /* any unit of a zero is zero */
    if (i && x->val != v) return a;
    v = x->val;
  }
  return leaf_const(v);
}

static rs_sarg pop_arg(B *b, const pop *p, unsigned width) {
  switch (p->kind) {
  case PK_REG: {
    rs_sarg a = use_arg(b, p->use);
    if (p->flags & PF_H1) a = mk(b, "hi16", &a, 1, 1);
    if (p->flags & PF_ABS) a = mk(b, b->type == 'i' ? "iabs" : "fabs", &a, 1, width);
    if (p->flags & PF_NEG) a = mk(b, b->type == 'i' ? "ineg" : "fneg", &a, 1, width);
    if (p->flags & PF_NOT) a = mk(b, "not", &a, 1, 1);
    return a;
  }
  case PK_CONST:
    return leaf_const((uint64_t)p->imm);
  case PK_IMM: {
    uint64_t v;
    if (!imm_bits(b->src + p->off, p->len, b->type, &v)) return leaf_other(hs("badimm"));
    rs_sarg a = leaf_const(v);
    if (p->flags & PF_NEG) a = mk(b, b->type == 'i' ? "ineg" : "fneg", &a, 1, width);
    return a;
  }
  case PK_CB: {
    rs_sarg a = leaf_other(p->imm < 0 ? hs("cbank?") : cb_colour(b, p->bank, (uint32_t)p->imm));
    if (p->flags & PF_NEG) a = mk(b, b->type == 'i' ? "ineg" : "fneg", &a, 1, width);
    return a;
  }
  case PK_SREG:
    return leaf_other(sreg_colour(b->src + p->off, p->len));
  case PK_SYM: { /* PTX symbol address: a .shared variable's offset */
    int64_t so = shared_off(b, b->src + p->off, p->len);
    if (so >= 0) return leaf_const((uint32_t)so);
    return leaf_other(hmix(hs("sym"), rs_hash_bytes(b->src + p->off, p->len, 0)));
  }
  case PK_MEM: {
    rs_sarg t[3];
    unsigned n = 0;
    if (p->use >= 0) {
      t[n] = use_arg(b, p->use);
      if (p->scale > 1) {
        rs_sarg m[2] = {t[n], leaf_const(p->scale)};
        t[n] = mk(b, "mul", m, 2, 1);
      }
      n++;
    }
    if (p->use2 >= 0) t[n++] = use_arg(b, p->use2);
    int64_t po = p->sym && !b->g->sass ? param_off(b, b->src + p->sym, p->symlen) : -1;
    if (po >= 0) return leaf_other(hmix(hs("param"), (uint64_t)(po + p->imm)));
    int64_t so = p->sym && !b->g->sass ? shared_off(b, b->src + p->sym, p->symlen) : -1;
    if (so >= 0) t[n++] = leaf_const((uint32_t)so);
    else if (p->sym && !b->g->sass) t[n++] = leaf_other(hmix(hs("sym"), rs_hash_bytes(b->src + p->sym, p->symlen, 0)));
    t[n++] = leaf_const((uint32_t)p->imm);
    if (n == 3) {
      rs_sarg x = mk(b, "add", t, 2, 2);
      rs_sarg y[2] = {x, t[2]};
      return mk(b, "add", y, 2, 2);
    }
    return mk(b, "add", t, n, 2);
  }
  default:
    return leaf_other(hmix(hs("other"), rs_hash_bytes(b->src + p->off, p->len, 0)));
  }
}

static void skip_sp(T *t) {
  while (t->s[t->i] == ' ') t->i++;
}

static unsigned read_num(T *t) {
  unsigned v = 0;
  while (t->s[t->i] >= '0' && t->s[t->i] <= '9') v = v * 10 + (unsigned)(t->s[t->i++] - '0');
  return v;
}

/* The compare of the instruction's opcode, up to negation: (ORD a b) or (EQ {a b}). */
static rs_sarg cmp(B *b, const rs_inst *in, rs_sarg x, rs_sarg y) {
  const char *op = rs_func_opcode(b->f, in);
  int kind = -1; /* 0 lt, 1 le, 2 gt, 3 ge, 4 eq, 5 ne */
  char ty = b->g->sass ? (op[0] == 'I' ? 's' : 'f') : 'i';
  static const char *const names[][4] = {{"lt", "lo", "ltu", NULL}, {"le", "ls", "leu", NULL},
                                         {"gt", "hi", "gtu", NULL}, {"ge", "hs", "geu", NULL},
                                         {"eq", "equ", NULL, NULL},  {"ne", "neu", NULL, NULL}};
  for (const char *p = strchr(op, '.'); p; p = strchr(p + 1, '.')) {
    const char *w = p + 1;
    size_t n = strcspn(w, ".");
    char lw[8] = "";
    if (n < sizeof lw)
      for (size_t i = 0; i < n; i++) lw[i] = (char)(w[i] >= 'A' && w[i] <= 'Z' ? w[i] + 32 : w[i]), lw[n] = 0;
    for (int k = 0; k < 6; k++)
      for (int j = 0; j < 4 && names[k][j]; j++)
        if (!strcmp(lw, names[k][j])) {
          kind = k;
          if (j == 1 && k < 4) ty = 'u';
        }
    if (!strcmp(lw, "ex")) kind = -2;
    if (!b->g->sass && n >= 2 && (lw[0] == 's' || lw[0] == 'u' || lw[0] == 'b' || lw[0] == 'f') && lw[1] >= '0' && lw[1] <= '9')
      ty = lw[0] == 'b' ? 'u' : lw[0];
    if (b->g->sass && !strcmp(lw, "u32")) ty = 'u';
  }
  if (kind < 0) return node(b, NULL, hmix(hs("opaque"), hs(op)), NULL, 0, 1);
  if (kind >= 4 && ty != 'f') ty = 'i'; /* == and != do not care about signedness */
  rs_sarg a[2] = {x, y};
  const char *name = kind >= 4 ? "@cmp.eq" : "@cmp.ord";
  if (kind == 2 || kind == 1) a[0] = y, a[1] = x; /* gt(a,b) = lt(b,a); le(a,b) = !lt(b,a) */
  rs_sarg r = node(b, NULL, hmix(hmix(hs("@cmp"), hs(name)), (uint64_t)ty), a, 2, 1);
  b->g->nodes[r.idx].comm = kind >= 4;
  b->g->nodes[r.idx].val = CMP_MARK;
  return r;
}

/* A LOP3 truth table with its constant inputs (0 or all ones) folded in. */
static rs_sarg lop3(B *b, rs_sarg *in3, rs_sarg lut) {
  if (!num(lut)) return leaf_other(hs("lop3?"));
  unsigned t = (unsigned)lut.val & 0xff;
  rs_sarg var[3];
  unsigned nv = 0, pos[3];
  int fixed[3];
  for (unsigned i = 0; i < 3; i++) {
    fixed[i] = is_const(in3[i], 0) ? 0 : is_const(in3[i], 0xffffffffull) ? 1 : -1;
    if (fixed[i] < 0) pos[nv] = i, var[nv++] = in3[i];
  }
  unsigned red = 0; /* reduced table over the variables: index bit j = var j (var 0 high) */
  for (unsigned idx = 0; idx < (1u << nv); idx++) {
    unsigned bits[3];
    for (unsigned i = 0; i < 3; i++) bits[i] = fixed[i] < 0 ? 0 : (unsigned)fixed[i];
    for (unsigned j = 0; j < nv; j++) bits[pos[j]] = (idx >> (nv - 1 - j)) & 1;
    unsigned li = bits[0] * 4 + bits[1] * 2 + bits[2];
    if ((t >> li) & 1) red |= 1u << idx;
  }
  if (nv == 0) return leaf_const(red & 1 ? 0xffffffffull : 0);
  if (nv == 1 && red == 2) return var[0];
  if (nv == 1 && red == 1) return mk(b, "not", var, 1, 1);
  if (nv == 2) {
    if (red == 8) return mk(b, "and", var, 2, 1);
    if (red == 14) return mk(b, "or", var, 2, 1);
    if (red == 6) return mk(b, "xor", var, 2, 1);
    if (red == 4 || red == 2) { /* x & ~y */
      rs_sarg n = mk(b, "not", &var[red == 4 ? 1 : 0], 1, 1);
      rs_sarg a[2] = {var[red == 4 ? 0 : 1], n};
      return mk(b, "and", a, 2, 1);
    }
  }
  rs_sarg a[4] = {var[0], nv > 1 ? var[1] : leaf_const(0), nv > 2 ? var[2] : leaf_const(0)};
  return node(b, NULL, hmix(hmix(hs("lop3"), red), nv), a, nv, 1);
}

/* The carry producer of the carry-in predicate read by instruction ii: its node, or -1. */
static int64_t carry_node(B *b, uint32_t ii) {
  for (unsigned k = b->inpop[ii]; k-- > 0;) {
    const pop *p = opnd(b, ii, k);
    if (p->kind != PK_REG || p->use < 0) continue;
    int fi = rs_target_file_of(b->f->tgt, b->g->uses[p->use].loc);
    if (fi < 0 || (strcmp(b->f->tgt->files[fi].name, "p") && strcmp(b->f->tgt->files[fi].name, "up"))) continue;
    uint32_t n;
    const uint32_t *r = res(b, (uint32_t)p->use, 0, &n);
    if (n != 1 || b->g->sites[r[0]].part != 0xff) return -1;
    return b->g->sites[r[0]].node;
  }
  return -1;
}

/* A 64-bit value read by its low unit (the low half of a 64-bit add or LEA). */
static rs_sarg wide(B *b, rs_sarg a) {
  if (a.kind != RS_SA_USE) return a;
  rs_sarg r = node(b, NULL, hs("@w"), &a, 1, 2);
  return r;
}

static rs_sarg call(B *b, T *t, const rs_inst *in, const char *name, size_t nl, unsigned width) {
  rs_sarg a[4];
  unsigned na = 0;
  char op[32];
  snprintf(op, sizeof op, "%.*s", (int)(nl < 31 ? nl : 31), name);
  if (t->s[t->i] == '(') {
    t->i++;
    skip_sp(t);
    while (t->s[t->i] && t->s[t->i] != ')') {
      if (na == 4) {
        t->bad = true;
        break;
      }
      /* the halves of mulw and the operands of a compare are 32-bit; @w reads 64 */
      unsigned w = (!strcmp(op, "mulw") || !strcmp(op, "@cmp") || !strcmp(op, "@lop3") || !strcmp(op, "ext") ||
                    !strcmp(op, "@x")) ? 1 : width;
      a[na++] = expr(b, t, in, w);
      skip_sp(t);
      if (t->s[t->i] == ',') t->i++;
      skip_sp(t);
    }
    if (t->s[t->i] == ')') t->i++;
  }
  uint32_t ii = (uint32_t)(in - b->f->insts);
  if (!strcmp(op, "copy") && na == 1) return a[0];
  if (!strcmp(op, "@cmp") && na == 2) return cmp(b, in, a[0], a[1]);
  if (!strcmp(op, "@cmpz") && na == 1) {
    rs_sarg x[2] = {a[0], leaf_const(0)};
    rs_sarg r = node(b, NULL, hmix(hmix(hs("@cmp"), hs("@cmp.eq")), (uint64_t)'i'), x, 2, 1);
    b->g->nodes[r.idx].comm = true;
    b->g->nodes[r.idx].val = CMP_MARK;
    return r;
  }
  if (!strcmp(op, "@lop3") && na == 4) return lop3(b, a, a[3]);
  if (!strcmp(op, "@sub32") && na == 1 && num(a[0]) && a[0].val <= 32) return leaf_const(32 - a[0].val);
  if (!strcmp(op, "@pow2") && na == 1 && num(a[0]) && a[0].val < 32) return leaf_const(1ull << a[0].val);
  if (!strcmp(op, "@w") && na == 1) return wide(b, a[0]);
  if (!strcmp(op, "@x") && na == 1) { /* a LEA index: 64-bit when its register is the low half of one */
    if (a[0].kind == RS_SA_USE) { /* any def reaching it (a loop's pointer: several) 64-bit? */
      const rs_suse *u = &b->g->uses[a[0].idx];
      for (uint32_t k = u->res[0]; k < u->res[1]; k++) {
        const rs_ssite *st = &b->g->sites[b->g->ress[k]];
        if (st->node != UINT32_MAX && st->part == 0 && b->g->nodes[st->node].width == 2) return wide(b, a[0]);
      }
      return node(b, NULL, hs("ext"), a, 1, 2);
    }
    return a[0]; /* a constant or a 64-bit parameter as it is */
  }
  if (!strcmp(op, "ext") && na == 1) {
    if (num(a[0])) return a[0]; /* a small constant reads the same at 64 bits */
    return node(b, NULL, hs("ext"), a, 1, 2);
  }
  if (!strncmp(op, "@minmax.", 8) && na == 3 && num(a[2])) {
    char nm[16];
    snprintf(nm, sizeof nm, "%c%s", op[8] == 's' ? 'i' : op[8], a[2].val ? "min" : "max");
    return mk(b, nm, a, 2, width);
  }
  if (!strcmp(op, "@h2f") && na == 2 && num(a[0]) && (a[0].val & 0x7fffffff) == 0) return mk(b, "h2f", &a[1], 1, 1);
  if (!strcmp(op, "@hconst") && na == 4 && num(a[0]) && (a[0].val & 0x7fff) == 0 && is_const(a[1], 0) && num(a[2]) && num(a[3]))
    return leaf_const(((a[2].val & 0xffff) << 16) | (a[3].val & 0xffff));
  if (!strcmp(op, "@param") && na == 1) return a[0];
  if (!strcmp(op, "@lo") || !strcmp(op, "@hi")) return leaf_other(hs("@lohi")); /* handled by the statement */
  if (op[0] == '@') return node(b, NULL, hmix(hs("opaque"), hs(rs_func_opcode(b->f, in))), NULL, 0, width);
  (void)ii;
  return mk(b, op, a, na, width);
}

static rs_sarg expr(B *b, T *t, const rs_inst *in, unsigned width) {
  skip_sp(t);
  const char *s = t->s + t->i;
  uint32_t ii = (uint32_t)(in - b->f->insts);
  if (s[0] == '$') {
    t->i++;
    unsigned k = read_num(t);
    const pop *p = opnd(b, ii, k);
    if (!p) {
      t->bad = true;
      return leaf_other(hs("?"));
    }
    return pop_arg(b, p, width);
  }
  if (s[0] == '#') {
    t->i++;
    return leaf_const(read_num(t));
  }
  size_t n = 0;
  while (s[n] && s[n] != '(' && s[n] != ',' && s[n] != ')' && s[n] != ';') n++;
  t->i += n;
  return call(b, t, in, s, n, width);
}

/* The value of a destination: a node (marked not internal), or a leaf/use as a node of its own. */
static uint32_t as_node(B *b, rs_sarg v, unsigned width) {
  if (v.kind == RS_SA_NODE) {
    b->g->nodes[v.idx].internal = false;
    return v.idx;
  }
  rs_sarg r = node(b, NULL, v.kind == RS_SA_LEAF ? v.leaf : hs("copy"), &v, v.kind == RS_SA_USE, width);
  rs_snode *x = &b->g->nodes[r.idx];
  x->internal = false;
  if (v.kind == RS_SA_LEAF) x->leaf = v.num ? 1 : 2, x->val = v.val, x->na = 0;
  else x->copy = true;
  return r.idx;
}

/* Give every site of pop p (element e, or all) node n from unit part on. */
static void assign(B *b, const pop *p, uint32_t n, unsigned part) {
  if (p->site < 0) return;
  for (unsigned k = 0; k < p->nsites; k++) {
    rs_ssite *s = &b->g->sites[p->site + (int32_t)k];
    s->node = n;
    s->part = (uint8_t)(b->g->sass ? part + k : part);
    s->len = (uint8_t)(b->g->sass ? 1 : p->w);
  }
}

static void opaque_dests(B *b, uint32_t ii, const char *why) {
  for (unsigned k = 0; k < b->inpop[ii]; k++) {
    const pop *p = opnd(b, ii, k);
    const pop *el = p->kind == PK_GROUP ? &b->pops[p->elt] : p;
    unsigned ne = p->kind == PK_GROUP ? p->nelt : 1, part = 0;
    for (unsigned e = 0; e < ne; e++) {
      if (el[e].site < 0) continue;
      rs_sarg r = node(b, NULL, hmix(hmix(hs("opaque"), hs(why)), ((uint64_t)ii << 8) | (k << 4) | e), NULL, 0, el[e].w);
      assign(b, &el[e], r.idx, part);
      b->g->nodes[r.idx].internal = false;
      part += el[e].w;
    }
  }
}

static void note_unknown(rs_sgraph *g, const char *op) {
  for (uint32_t i = 0; i < g->nunknown; i++)
    if (!strcmp(g->unknown[i], op)) {
      g->nunknown_of[i]++;
      return;
    }
  RS_PUSH(g->unknown, g->nunknown, g->capunknown, rs_xstrndup(op, strlen(op)));
  g->nunknown_of = rs_xrealloc(g->nunknown_of, sizeof *g->nunknown_of * g->capunknown);
  g->nunknown_of[g->nunknown - 1] = 1;
}

/* Evaluate instruction ii's row: nodes for its values, sites pointed at them. */
static void eval_inst(B *b, uint32_t ii, bool count_unknown) {
  const rs_inst *in = &b->f->insts[ii];
  const rs_p2s_row *row = b->row[ii];
  b->cur_inst = ii;
  if (!row) {
    if (count_unknown) note_unknown(b->g, rs_func_opcode(b->f, in));
    opaque_dests(b, ii, rs_func_opcode(b->f, in));
    return;
  }
  b->type = row->type;
  if (!strcmp(row->sem, "-")) {
    opaque_dests(b, ii, "nosem");
    return;
  }
  T t = {row->sem, 0, false};
  while (t.s[t.i]) {
    skip_sp(&t);
    if (t.s[t.i] == '_' && t.s[t.i + 1] == '=') { /* a value nobody holds (a store): a node for the matching */
      t.i += 2;
      rs_sarg v = expr(b, &t, in, 1);
      if (v.kind == RS_SA_NODE) b->g->nodes[v.idx].internal = false;
      skip_sp(&t);
      if (t.s[t.i] == ';') t.i++;
      continue;
    }
    if (t.s[t.i] != '$') break;
    t.i++;
    unsigned k = read_num(&t), e = UINT32_MAX;
    if (t.s[t.i] == '.') t.i++, e = read_num(&t);
    if (t.s[t.i] == '=') t.i++;
    const pop *p = opnd(b, ii, k);
    if (!p) break;
    const pop *d = p;
    unsigned part = 0;
    if (p->kind == PK_GROUP && e != UINT32_MAX && e < p->nelt) d = &b->pops[p->elt + e];
    unsigned width = p->w;
    if (p->kind == PK_GROUP && e == UINT32_MAX)
      for (unsigned x = 0; x < p->nelt; x++) width += b->pops[p->elt + x].w;
    if (!width) width = 1;
    size_t at = t.i;
    bool lo = !strncmp(t.s + at, "@lo(", 4), hi = !strncmp(t.s + at, "@hi(", 4);
    bool half = !strncmp(t.s + at, "@lo64(", 6) || !strncmp(t.s + at, "@hi64(", 6);
    if (lo) t.i += 4;
    if (half) { /* one 32-bit half of a 64-bit value the template computes whole */
      t.i += 6;
      rs_sarg w = expr(b, &t, in, 2);
      skip_sp(&t);
      if (t.s[t.i] == ')') t.i++;
      assign(b, d, as_node(b, w, 2), t.s[at + 1] == 'h');
      if (t.bad) break;
      skip_sp(&t);
      if (t.s[t.i] == ';') t.i++;
      continue;
    }
    rs_sarg v = hi ? leaf_other(0) : expr(b, &t, in, lo ? 2 : width);
    if (hi) {
      while (t.s[t.i] && t.s[t.i] != ';') t.i++;
      int64_t cn = carry_node(b, ii);
      if (cn >= 0) assign(b, d, (uint32_t)cn, 1);
      else opaque_dests(b, ii, "carry?");
    } else if (lo) {
      skip_sp(&t);
      if (t.s[t.i] == ',') t.i++;
      rs_sarg c = expr(b, &t, in, 1);
      (void)c;
      if (t.s[t.i] == ')') t.i++;
      uint32_t n = as_node(b, v, 2);
      assign(b, d, n, 0);
      /* the carry-out predicate: operand of the @lo's second argument */
      const char *q = strrchr(row->sem, '$');
      const pop *cp = q ? opnd(b, ii, (unsigned)strtoul(q + 1, NULL, 10)) : NULL;
      if (cp && cp->site >= 0)
        for (unsigned u = 0; u < cp->nsites; u++) b->g->sites[cp->site + (int32_t)u].node = n,
                                                  b->g->sites[cp->site + (int32_t)u].part = 0xff;
    } else if (p->kind == PK_GROUP && e == UINT32_MAX) { /* a vector: elements are slices */
      uint32_t n = as_node(b, v, width);
      for (unsigned x = 0; x < p->nelt; x++) {
        assign(b, &b->pops[p->elt + x], n, part);
        part += b->pops[p->elt + x].w;
      }
    } else {
      assign(b, d, as_node(b, v, width), 0);
    }
    if (t.bad) break;
    skip_sp(&t);
    if (t.s[t.i] == ';') t.i++;
  }
  /* PTX ld.param of a vector or with an offset: every element its own parameter slot */
  if (!b->g->sass && !strncmp(row->sem, "$0=@param", 9)) {
    const pop *d = opnd(b, ii, 0), *m = opnd(b, ii, 1);
    if (d && m && m->kind == PK_MEM && m->sym) {
      int64_t base = param_off(b, b->src + m->sym, m->symlen);
      const pop *el = d->kind == PK_GROUP ? &b->pops[d->elt] : d;
      unsigned ne = d->kind == PK_GROUP ? d->nelt : 1;
      int64_t at = base + m->imm;
      for (unsigned e = 0; e < ne; e++) {
        rs_sarg v = base < 0 ? leaf_other(hs("param?")) : leaf_other(hmix(hs("param"), (uint64_t)at));
        assign(b, &el[e], as_node(b, v, el[e].w), 0);
        at += 4 * el[e].w;
      }
    }
  }
}

/* Shift amount of instruction ii under row r's template (`@pow2($2)`: operand 2 is k; else 2^k). */
static int shift_of(B *b, uint32_t ii, const rs_p2s_row *r) {
  const pop *p = opnd(b, ii, 2);
  uint64_t v;
  if (!p || p->kind != PK_IMM || !imm_bits(b->src + p->off, p->len, 'i', &v)) return -1;
  if (strstr(r->sem, "@pow2")) return v < 32 ? (int)v : -1;
  for (int k = 0; k < 32; k++)
    if (v == 1ull << k) return k;
  return -1;
}

/* Do operands 1 of instructions i and j read the same register with the same reaching defs? */
static bool same_source(B *b, uint32_t i, uint32_t j) {
  const pop *p = opnd(b, i, 1), *q = opnd(b, j, 1);
  if (!p || !q || p->kind != PK_REG || q->kind != PK_REG || p->use < 0 || q->use < 0) return false;
  const rs_suse *u = &b->g->uses[p->use], *v = &b->g->uses[q->use];
  uint32_t nu = u->raw[1] - u->raw[0], nv = v->raw[1] - v->raw[0];
  return u->loc == v->loc && nu == nv && !memcmp(b->g->srcs + u->raw[0], b->g->srcs + v->raw[0], nu * sizeof *b->g->srcs);
}

/* A 64-bit shift ptxas wrote as SHF.L.U64.HI (high) and a 32-bit shift (low): give the low one its
 * pair row, so both halves are one 64-bit value. Without a partner the low shift stays 32-bit. */
static void pair_halves(B *b) {
  const rs_func *f = b->f;
  for (uint32_t ii = 0; ii < f->ninsts; ii++) {
    const rs_p2s_row *r = b->row[ii];
    if (!r || strncmp(r->sem, "$0=@hi64(", 9)) continue;
    int k = shift_of(b, ii, r);
    for (uint32_t jj = 0; jj < f->ninsts && k >= 0; jj++) {
      const rs_p2s_row *pr = rs_p2s_find(rs_p2s_sass_pair, rs_p2s_nsass_pair, rs_func_opcode(f, &f->insts[jj]),
                                         b->inpop[jj]);
      if (pr && b->row[jj] != pr && shift_of(b, jj, pr) == k && same_source(b, ii, jj)) {
        b->row[jj] = pr;
        break;
      }
    }
  }
}

int rs_sgraph_build(rs_sgraph *g, const rs_func *f, rs_err *e) {
  memset(g, 0, sizeof *g);
  g->f = f;
  g->sass = f->kind == RS_SRC_SASS;
  g->nlocs = g->sass ? f->tgt->nunits : f->nvregs;
  B b;
  memset(&b, 0, sizeof b);
  b.g = g;
  b.f = f;
  b.e = e;
  b.src = f->src;
  b.param_base = rs_p2s_param_base(f->tgt);
  lines(&b);
  if (!g->sass) ptx_params(&b);
  b.ipop = rs_xcalloc(f->ninsts + 1, sizeof *b.ipop);
  b.inpop = rs_xcalloc(f->ninsts + 1, sizeof *b.inpop);
  b.row = rs_xcalloc(f->ninsts + 1, sizeof *b.row);
  b.gloc = rs_xmalloc(sizeof *b.gloc * (f->ninsts + 1));
  b.gneg = rs_xcalloc(f->ninsts + 1, 1);
  for (uint32_t ii = 0; ii <= f->ninsts; ii++) b.gloc[ii] = UINT32_MAX;
  /* operands: top-level pops of an instruction are contiguous; group elements follow them */
  for (uint32_t ii = 0; ii < f->ninsts; ii++) {
    const rs_inst *in = &f->insts[ii];
    uint32_t off, end;
    operand_span(&b, in, &off, &end);
    uint32_t cuts[64], nc = 0;
    int depth = 0;
    uint32_t start = off;
    for (uint32_t i = off; i <= end && nc < 63; i++) {
      char c = i < end ? b.src[i] : ',';
      if (c == '[' || c == '{' || c == '(') depth++;
      if (c == ']' || c == '}' || c == ')') depth--;
      if (c == ',' && depth == 0) {
        cuts[nc++] = start;
        cuts[nc++] = i;
        start = i + 1;
        if (nc >= 62) break;
      }
    }
    uint32_t ntop = nc / 2;
    if (ntop == 1) { /* no operands at all: the span is blank */
      bool blank = true;
      for (uint32_t i = cuts[0]; i < cuts[1]; i++) blank &= b.src[i] == ' ' || b.src[i] == '\t';
      if (blank) ntop = 0;
    }
    pop *tops = rs_xcalloc(ntop + 1, sizeof *tops);
    for (uint32_t k = 0; k < ntop; k++) {
      classify(&b, in, cuts[2 * k], cuts[2 * k + 1] - cuts[2 * k], &tops[k]);
    }
    /* group elements were pushed at mark..; move the tops after them */
    b.ipop[ii] = b.npops;
    b.inpop[ii] = ntop;
    for (uint32_t k = 0; k < ntop; k++) RS_PUSH(b.pops, b.npops, b.cappops, tops[k]);
    free(tops);
    b.row[ii] = g->sass ? rs_p2s_find(rs_p2s_sass, rs_p2s_nsass, rs_func_opcode(f, in), ntop)
                        : rs_p2s_find(rs_p2s_ptx, rs_p2s_nptx, rs_func_opcode(f, in), ntop);
  }
  rs_sgraph_reaching(g, b.gloc, b.gneg);
  if (g->sass) pair_halves(&b);
  /* evaluate until no new constant is found through a register (at most a few rounds) */
  uint64_t prev = 0;
  for (int pass = 0; pass < 6; pass++) {
    g->nnodes = 0;
    g->nrefs = 0;
    for (uint32_t s = 0; s < g->nsites; s++) g->sites[s].node = UINT32_MAX, g->sites[s].part = 0;
    for (uint32_t ii = 0; ii < f->ninsts; ii++) eval_inst(&b, ii, false);
    /* sites nothing assigned (operands of a template that ignores them): opaque */
    for (uint32_t s = 0; s < g->nsites; s++)
      if (g->sites[s].node == UINT32_MAX) {
        b.cur_inst = g->sites[s].inst;
        rs_sarg r = node(&b, NULL, hmix(hs("unassigned"), s), NULL, 0, 1);
        g->nodes[r.idx].internal = false;
        g->sites[s].node = r.idx;
        g->sites[s].part = 0;
        g->sites[s].len = 1;
      }
    rs_sgraph_resolve(g);
    uint64_t h = 0;
    for (uint32_t n = 0; n < g->nnodes; n++) h = hmix(h, g->nodes[n].op ^ g->nodes[n].leaf);
    h = hmix(h, g->nnodes);
    if (pass && h == prev) break;
    prev = h;
  }
  for (uint32_t ii = 0; ii < f->ninsts; ii++)
    if (!b.row[ii]) note_unknown(g, rs_func_opcode(f, &f->insts[ii]));
  free(b.pops);
  free(b.ipop);
  free(b.inpop);
  free(b.row);
  free(b.gloc);
  free(b.gneg);
  free(b.lstart);
  free(b.pname_off);
  free(b.pname_len);
  free(b.pbyte);
  free(b.sname_off);
  free(b.sname_len);
  free(b.sbyte);
  return 0;
}

void rs_sgraph_free(rs_sgraph *g) {
  free(g->nodes);
  free(g->sites);
  free(g->uses);
  free(g->srcs);
  free(g->ress);
  free(g->ref_node);
  free(g->ref_arg);
  free(g->ref_use);
  for (uint32_t i = 0; i < g->nunknown; i++) free(g->unknown[i]);
  free(g->unknown);
  free(g->nunknown_of);
  memset(g, 0, sizeof *g);
}
