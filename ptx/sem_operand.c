/* sem_operand.c - an instruction's printed operands read again from its source line (the IR
 * keeps their text spans): registers (written: sites; read: uses, with their widths), immediates
 * as bits of the row's type, constant-bank and special-register reads, addresses, PTX parameter
 * and .shared symbol offsets. */
#include "ptx/sem_int.h"
#include "sass/sass.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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
bool rs_sem_imm_bits(const char *s, size_t n, char type, uint64_t *out) {
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
uint64_t rs_sem_sreg_colour(const char *s, size_t n) {
  char buf[32];
  size_t k = 0;
  if (n > 3 && !memcmp(s, "SR_", 3)) s += 3, n -= 3;
  else if (n && s[0] == '%') s++, n--;
  for (size_t i = 0; i < n && k + 1 < sizeof buf; i++) buf[k++] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
  buf[k] = 0;
  return hmix(hs("sreg"), hs(buf));
}

uint64_t rs_sem_cb_colour(B *b, uint32_t bank, uint32_t off) {
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
int64_t rs_sem_param_off(const B *b, const char *s, size_t n) {
  for (uint32_t i = 0; i < b->nparams; i++)
    if (b->pname_len[i] == n && !memcmp(b->src + b->pname_off[i], s, n)) return b->pbyte[i];
  return -1;
}

/* One printed operand s[off, off+len). */
void rs_sem_classify(B *b, const rs_inst *in, uint32_t off, uint32_t len, pop *p) {
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
        rs_sem_classify(b, in, i, a - i, &e);
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
  size_t blen = len; /* RZ.H0_H0 (a half of zero, sm_75's HADD2.F32 x, -RZ.H0_H0) is zero too */
  if (len > 2 && t[0] == 'R' && t[1] == 'Z' && t[2] == '.') blen = 2;
  if (tok(t, blen, "RZ") || tok(t, len, "URZ") || tok(t, len, "SRZ")) {
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
  /* SASS names (PT, RZ, UR.., B0, labels) are no symbols; a PTX symbol may start with any letter */
  p->kind = b->g->sass && (t[0] == 'P' || t[0] == 'R' || t[0] == 'U' || t[0] == 'B' || t[0] == '`') ? PK_OTHER : PK_SYM;
}

/* Line starts of the source (instructions sit on one line each). */
void rs_sem_lines(B *b) {
  uint32_t cap = 0;
  size_t n = strlen(b->src);
  RS_PUSH(b->lstart, b->nlines, cap, 0);
  for (size_t i = 0; i < n; i++)
    if (b->src[i] == '\n') RS_PUSH(b->lstart, b->nlines, cap, (uint32_t)(i + 1));
}

/* The operand text of instruction ii: after the guard and the opcode, up to ';'. */
void rs_sem_operand_span(B *b, const rs_inst *in, uint32_t *off, uint32_t *end) {
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
void rs_sem_ptx_params(B *b) {
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
int64_t rs_sem_shared_off(const B *b, const char *s, size_t n) {
  for (uint32_t i = 0; i < b->nshared; i++)
    if (b->sname_len[i] == n && !memcmp(b->src + b->sname_off[i], s, n)) return b->sbyte[i];
  return -1;
}
