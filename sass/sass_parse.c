/* sass_parse.c - nvdisasm listings (`nvdisasm -c`, 11.8 or CUDA 12+ style) into the shared IR.
 *
 * Line oriented: directives (.headerflags gives the architecture, .section .text.NAME starts a
 * function, .sectioninfo SHI_REGISTERS its ptxas register count, .size its end label), labels,
 * and instructions (address in a comment, [@[!]Pn] OPCODE[.MODS] operands ;). What each operand reads or
 * writes and its width come from the opcode table (optable.c), never from guessing here; the
 * operands are physical registers until lift.c makes register webs of them. Blocks start at
 * labels and after control flow; see sass.h for calls, returns and the hidden descriptor.
 * Every malformed input is an error `file:line: message`; scanning is bounded by line ends. */
#include "front/front.h"
#include "sass/sass.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_OPS = 16, MAX_ROLES = 16 };

typedef struct {
  uint32_t op;   /* operand index */
  uint32_t lab;  /* interned label */
  uint32_t line;
} fixup;

typedef struct {
  rs_module *m;
  rs_err *e;
  const rs_sass_opts *o;
  uint8_t *desc_used;
  const char *s;
  size_t n;
  uint32_t line;
  int sm;             /* 75, 80, ... */
  /* current function */
  rs_func *f;
  rs_intern labels;   /* names of the function's labels and symbols */
  int32_t *lab_block; /* per label: block, -1 undefined */
  uint32_t caplab;
  uint8_t *lab_func;  /* per label: a function symbol (.type NAME,@function) */
  uint32_t *pending;  /* labels waiting for their first instruction */
  uint32_t npending, cappending;
  fixup *fix;
  uint32_t nfix, capfix;
  uint32_t *sflags;   /* per instruction: RS_SOP_* of its row */
  uint32_t capsflags;
  int32_t end_label;  /* .size end label, -1 none */
  uint32_t end_line;
  bool new_block;
  uint32_t last_addr;
  /* memo of rs_sass_lookup, a pure function of (mnemonic, operand count) that scans the whole
   * table: a listing repeats a few dozen forms over thousands of instructions */
  rs_intern forms;          /* key: operand count as one byte, then the mnemonic */
  const rs_sass_op **form_row;
  const char **form_variant;
  uint32_t capforms;
  /* per-function refusal: the instruction being read once its form is known (an error from
   * here on refuses its function only), and skipping the rest of a refused function */
  bool refusable, skip;
  bool left_out; /* a forms scan left an instruction of the function out (its addresses go on) */
  uint32_t ref_addr;
  char ref_form[64], ref_shape[96];
} P;

static int perr(P *p, uint32_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(P *p, uint32_t line, const char *fmt, ...) {
  char buf[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return rs_errf(p->e, p->m->path, line ? line : 1, "%s", buf);
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_hex(int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_word(int c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '$' || c == '.'; }
static bool starts(const char *s, size_t n, const char *w) {
  size_t k = strlen(w);
  return n >= k && !memcmp(s, w, k);
}

/* Printable excerpt of s[0..n) for messages. */
static const char *excerpt(const char *s, size_t n, char *buf, size_t cap) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 5 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c < 0x7f) buf[k++] = (char)c;
    else k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", c);
  }
  if (k + 1 >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4), k = cap - 1;
  buf[k < cap ? k : cap - 1] = 0;
  return buf;
}

/* ---- labels ---- */

static uint32_t label_id(P *p, const char *s, size_t n) {
  uint32_t id = rs_intern_get(&p->labels, s, n);
  if (id >= p->caplab) {
    uint32_t nc = p->caplab ? p->caplab * 2 : 64;
    while (nc <= id) nc *= 2;
    p->lab_block = rs_xrealloc(p->lab_block, sizeof *p->lab_block * nc);
    p->lab_func = rs_xrealloc(p->lab_func, nc);
    for (uint32_t i = p->caplab; i < nc; i++) p->lab_block[i] = -1, p->lab_func[i] = 0;
    p->caplab = nc;
  }
  return id;
}

/* ---- operands ---- */

static void push_op(P *p, uint8_t kind, uint16_t flags, uint32_t reg, rs_lanes lanes, size_t off, size_t len) {
  rs_operand o = {0};
  o.kind = kind;
  o.flags = flags;
  o.reg = reg;
  o.lanes = lanes;
  o.text_off = (uint32_t)off;
  o.text_len = (uint32_t)len;
  RS_PUSH(p->f->ops, p->f->nops, p->f->capops, o);
}

/* A register token at s[0..n): R12 RZ UR4 URZ P0 PT UP1 UPT B3; its length, 0 if none. */
static size_t reg_token(const char *s, size_t n) {
  size_t k = 0;
  if (k < n && s[k] == 'U') k++;
  if (k < n && (s[k] == 'R' || s[k] == 'P')) {
    char kind = s[k++];
    if (k < n && ((kind == 'R' && s[k] == 'Z') || (kind == 'P' && s[k] == 'T'))) {
      k++;
    } else {
      size_t d = k;
      while (k < n && is_digit(s[k])) k++;
      if (k == d) return 0;
    }
  } else if (k == 0 && n > 1 && s[0] == 'B' && is_digit(s[1])) {
    k = 1;
    while (k < n && is_digit(s[k])) k++;
  } else {
    return 0;
  }
  if (k < n && (is_alpha(s[k]) || is_digit(s[k]) || s[k] == '_')) return 0; /* SR_..., BAR, ... */
  return k;
}

static bool is_zero_reg(const rs_target *t, uint32_t unit) {
  return (t->unit_flags[unit] & RS_UNIT_RESERVED) != 0;
}

/* Only nvdisasm's own spelling of a register (no R07, no P01): the write-back prints registers
 * that way, so any other spelling would not write back identical. */
static int spelling(P *p, const char *s, size_t k, uint32_t unit) {
  char canon[24], b[40];
  p->f->tgt->format_preg(p->f->tgt, (rs_preg){unit, 3}, canon, sizeof canon);
  if (strlen(canon) != k || memcmp(canon, s, k))
    return perr(p, p->line, "register '%s' is not spelt as nvdisasm spells it ('%s')", excerpt(s, k, b, sizeof b),
                canon);
  return 0;
}

/* Register token -> unit with width checks; 0 ok. `width` 32-bit registers are accessed. */
static int reg_operand(P *p, const char *s, size_t k, unsigned width, const char *mn, size_t mnl, uint32_t *unit,
                       rs_lanes *lanes) {
  rs_preg r;
  char b[40];
  if (p->f->tgt->parse_preg(p->f->tgt, s, k, &r))
    return perr(p, p->line, "no such register '%s'", excerpt(s, k, b, sizeof b));
  if (spelling(p, s, k, r.unit)) return -1;
  *unit = r.unit;
  if (is_zero_reg(p->f->tgt, r.unit)) { /* RZ/URZ/PT/UPT: constant, one unit whatever the width */
    *lanes = rs_lanes_full(1);
    return 0;
  }
  if (width > 1) {
    int fi = rs_target_file_of(p->f->tgt, r.unit);
    const rs_regfile *rf = &p->f->tgt->files[fi];
    bool wide = !strcmp(rf->name, "r") || !strcmp(rf->name, "ur");
    uint32_t idx = r.unit - rf->first;
    if (!wide)
      return perr(p, p->line, "operand of the wrong width: %s where %.*s needs %u registers",
                  excerpt(s, k, b, sizeof b), (int)mnl, mn, width);
    unsigned align = width == 3 ? 4 : width; /* a triple (TEX CUBE coordinates) sits in an aligned quad */
    if (idx % align)
      return perr(p, p->line, "operand of the wrong width: %s is not an aligned %s of %u registers (%.*s)",
                  excerpt(s, k, b, sizeof b), width == 2 ? "pair" : "tuple", width, (int)mnl, mn);
    if (idx + width > rf->count - 1)
      return perr(p, p->line, "operand %s of %.*s runs past the last register", excerpt(s, k, b, sizeof b), (int)mnl,
                  mn);
  }
  *lanes = rs_lanes_full(width);
  return 0;
}

/* Skip a register's decorations: .reuse .H0_H0 .H1 .B2 .X4 .64 ...; returns the end. Sets
 * *wide64 when `.64` is among them. */
static size_t reg_suffix(const char *s, size_t i, size_t n, bool *wide64) {
  while (i < n && s[i] == '.') {
    size_t j = i + 1;
    while (j < n && (is_alpha(s[j]) || is_digit(s[j]) || s[j] == '_')) j++;
    if (j == i + 1) break;
    if (j - i == 3 && s[i + 1] == '6' && s[i + 2] == '4' && wide64) *wide64 = true;
    i = j;
  }
  return i;
}

/* A number, float or special value (+INF, -QNAN ...) spanning all of s[0..n)? */
static bool is_number(const char *s, size_t n) {
  size_t i = 0;
  if (i < n && (s[i] == '-' || s[i] == '+')) i++;
  if (i == n) return false;
  const char *w = s + i;
  size_t m = n - i;
  if ((m == 3 && !memcmp(w, "INF", 3)) || (m == 4 && !memcmp(w, "QNAN", 4)) || (m == 4 && !memcmp(w, "SNAN", 4)))
    return true;
  if (m > 2 && w[0] == '0' && w[1] == 'x') {
    for (size_t j = 2; j < m; j++)
      if (!is_hex(w[j])) return false;
    return true;
  }
  bool digit = false;
  for (size_t j = 0; j < m; j++) {
    char c = w[j];
    if (is_digit(c)) digit = true;
    else if (c == '.' || c == 'e' || c == 'E') continue;
    else if ((c == '+' || c == '-') && j > 0 && (w[j - 1] == 'e' || w[j - 1] == 'E')) continue;
    else return false;
  }
  return digit;
}

/* The registers inside a memory address [a+b+imm] (already stripped of brackets). tuple > 1: the
 * R term is a tuple of that many coordinates (a surface address). */
static int address(P *p, size_t off, size_t len, bool base64, unsigned tuple, const char *mn, size_t mnl) {
  const char *s = p->s;
  size_t i = off, end = off + len;
  char b[80];
  /* first pass: is any R term .64 (then a UR term is a 64-bit offset too) */
  bool any64 = base64;
  for (size_t j = off; j + 2 < end; j++)
    if (s[j] == '.' && s[j + 1] == '6' && s[j + 2] == '4') any64 = true;
  if (len == 0) return perr(p, p->line, "empty address []");
  while (i < end) {
    while (i < end && s[i] == ' ') i++;
    if (i < end && s[i] == '-') i++;
    size_t k = reg_token(s + i, end - i);
    if (k) {
      bool w64 = false;
      size_t j = reg_suffix(s, i + k, end, &w64);
      bool ur = s[i] == 'U';
      unsigned w = (w64 || (any64 && (ur || base64))) ? 2 : 1;
      if (tuple > 1 && !ur) w = tuple;
      /* [R5.U32+UR4] (sm_75 .E): a 32-bit unsigned offset to the 64-bit UR base (-plr) */
      if (!ur && j - (i + k) >= 4 && !memcmp(s + i + k, ".U32", 4)) w = 1;
      uint32_t unit;
      rs_lanes lanes;
      if (reg_operand(p, s + i, k, w, mn, mnl, &unit, &lanes)) return -1;
      push_op(p, RS_OP_PREG, 0, unit, lanes, i, k);
      i = j;
    } else {
      size_t j = i;
      while (j < end && s[j] != '+' && s[j] != ' ') j++;
      if (!is_number(s + i, j - i))
        return perr(p, p->line, "unexpected '%s' in address of %.*s", excerpt(s + i, j - i, b, sizeof b), (int)mnl, mn);
      push_op(p, RS_OP_IMM, 0, 0, 0, i, j - i);
      i = j;
    }
    while (i < end && s[i] == ' ') i++;
    if (i < end && s[i] != '+')
      return perr(p, p->line, "unexpected '%s' in address of %.*s", excerpt(s + i, end - i, b, sizeof b), (int)mnl, mn);
    if (i < end) i++;
    if (i == end && s[end - 1] == '+') return perr(p, p->line, "address ends with '+'");
  }
  return 0;
}

/* Index of the matching ']' for '[' at s[i], or SIZE_MAX. */
static size_t close_bracket(const char *s, size_t i, size_t end) {
  for (size_t j = i; j < end; j++)
    if (s[j] == ']') return j;
  return SIZE_MAX;
}

typedef struct {
  char role;      /* d s x m l */
  unsigned width;
} role;

/* One operand s[off..off+len) in its role. *desc gets the UR of a printed desc[URx] (-1 if none). */
/* A branch target named by label s[off..off+len): a block operand, resolved once the function's
 * labels are known (finish_func's fixups). */
static void push_target(P *p, size_t off, size_t len, uint16_t flags) {
  fixup fx = {p->f->nops, label_id(p, p->s + off, len), p->line};
  RS_PUSH(p->fix, p->nfix, p->capfix, fx);
  push_op(p, RS_OP_BLOCK, flags, 0, 0, off, len);
}

static int operand(P *p, size_t off, size_t len, role r, uint16_t dflags, const char *mn, size_t mnl, bool mem64,
                   int *desc, bool label_is_target) {
  const char *s = p->s;
  size_t i = off, end = off + len;
  char b[80];
  while (end > i && s[end - 1] == ' ') end--;
  if (r.role == 'l') {
    if (end - i < 4 || s[i] != '`' || s[i + 1] != '(' || s[end - 1] != ')')
      return perr(p, p->line, "expected a label `(...) in %.*s, found '%s'", (int)mnl, mn, excerpt(s + i, end - i, b, sizeof b));
    if (!label_is_target) {
      push_op(p, RS_OP_OTHER, 0, 0, 0, i, end - i);
      return 0;
    }
    push_target(p, i + 2, end - i - 3, 0);
    return 0;
  }
  if (r.role == 'P') r.role = 'd';      /* a predicate result (kinds_fit checked it is one) */
  else if (r.role == 'c') r.role = 's'; /* the component mask: an immediate */
  if (r.role == 'g' || r.role == 'k') { /* a geometry or keyword operand (kinds_fit checked it) */
    push_op(p, RS_OP_OTHER, 0, 0, 0, i, end - i);
    return 0;
  }
  if (r.role == 'p' || r.role == 'q') { /* the predicate file PR (or the uniform one, UPR: UP2UR, UR2UP): what it
                                         * reads or writes comes from the mask (pr_mask) */
    if (!(end - i == 2 && s[i] == 'P' && s[i + 1] == 'R') && !(end - i == 3 && starts(s + i, 3, "UPR")))
      return perr(p, p->line, "expected PR or UPR in %.*s, found '%s'", (int)mnl, mn, excerpt(s + i, end - i, b, sizeof b));
    push_op(p, RS_OP_OTHER, 0, 0, 0, i, end - i);
    return 0;
  }
  if (r.role == 'm' || r.role == 'M') {
    mem64 |= r.role == 'M';
    if (end - i > 5 && starts(s + i, end - i, "desc[")) {
      size_t c = close_bracket(s, i + 5, end);
      if (c == SIZE_MAX) return perr(p, p->line, "unterminated desc[ in %.*s", (int)mnl, mn);
      size_t k = reg_token(s + i + 5, c - i - 5);
      if (!k || s[i + 5] != 'U' || s[i + 6] != 'R' || k != c - i - 5)
        return perr(p, p->line, "desc[] must name a uniform register, found '%s'", excerpt(s + i, c - i + 1, b, sizeof b));
      uint32_t unit;
      rs_lanes lanes;
      if (reg_operand(p, s + i + 5, k, 2, mn, mnl, &unit, &lanes)) return -1;
      push_op(p, RS_OP_PREG, 0, unit, lanes, i + 5, k);
      *desc = (int)unit;
      i = c + 1;
    }
    if (i >= end || s[i] != '[' || s[end - 1] != ']')
      return perr(p, p->line, "expected a memory address [...] in %.*s, found '%s'", (int)mnl, mn,
                  excerpt(s + i, end - i, b, sizeof b));
    return address(p, i + 1, end - i - 2, mem64, r.role == 'm' ? r.width : 1, mn, mnl);
  }
  /* register, constant, immediate or special register, with decorations */
  bool abs_bar = false;
  while (i < end && (s[i] == '-' || s[i] == '!' || s[i] == '~' || s[i] == '|')) abs_bar |= s[i++] == '|';
  if (end > i && s[end - 1] == '|') end--;
  size_t k = reg_token(s + i, end - i);
  if (k) {
    size_t j = reg_suffix(s, i + k, end, NULL);
    if (abs_bar && j < end && s[j] == '|') j = reg_suffix(s, j + 1, end, NULL); /* |R12|.reuse */
    if (j != end)
      return perr(p, p->line, "unexpected '%s' after register in %.*s", excerpt(s + j, end - j, b, sizeof b), (int)mnl, mn);
    uint32_t unit;
    rs_lanes lanes;
    if (reg_operand(p, s + i, k, r.width, mn, mnl, &unit, &lanes)) return -1;
    if (r.role == 'x') push_op(p, RS_OP_PREG, 0, unit, lanes, i, k);
    push_op(p, RS_OP_PREG, r.role == 's' ? 0 : dflags, unit, lanes, i, k);
    return 0;
  }
  /* MACTIVE: the warp's active mask, no register; BMOV saves it into a B register and restores
   * it (ptxas's software tex.grad.cube on sm_75-89: BMOV.32 B15, MACTIVE ... BMOV.32 MACTIVE, B15) */
  if (end - i == 7 && starts(s + i, 7, "MACTIVE")) {
    push_op(p, RS_OP_OTHER, 0, 0, 0, i, end - i);
    return 0;
  }
  if (r.role != 's')
    return perr(p, p->line, "%.*s writes a register here, found '%s'", (int)mnl, mn, excerpt(s + i, end - i, b, sizeof b));
  if (end - i >= 2 && (starts(s + i, end - i, "c[") || starts(s + i, end - i, "cx["))) {
    /* c[bank][offset]: registers inside are read (cx[UR4][R0+0x10], c[0x3][R2]) */
    size_t j = i + (s[i + 1] == 'x' ? 3 : 2), parts = 0;
    push_op(p, RS_OP_OTHER, 0, 0, 0, i, end - i);
    for (;;) {
      size_t c = close_bracket(s, j, end);
      if (c == SIZE_MAX) return perr(p, p->line, "unterminated constant in %.*s", (int)mnl, mn);
      for (size_t t = j; t < c;) {
        size_t kk = reg_token(s + t, c - t);
        if (kk && (t == j || s[t - 1] == '+')) {
          uint32_t unit;
          rs_lanes lanes;
          if (reg_operand(p, s + t, kk, 1, mn, mnl, &unit, &lanes)) return -1;
          push_op(p, RS_OP_PREG, 0, unit, lanes, t, kk);
          t = reg_suffix(s, t + kk, c, NULL);
        } else if (is_word(s[t]) || s[t] == '+' || s[t] == '-') {
          t++;
        } else {
          return perr(p, p->line, "unexpected '%c' in constant of %.*s", s[t], (int)mnl, mn);
        }
      }
      parts++;
      j = c + 1;
      /* `c[0x2] [0x0].F32` (HADD2 on sm_75): a blank between the parts, a type suffix after */
      while (j < end && s[j] == ' ' && parts == 1) j++;
      if (parts == 2 && j < end && s[j] == '.') j = reg_suffix(s, j, end, NULL);
      if (j >= end) break;
      if (s[j] != '[' || parts == 2) return perr(p, p->line, "malformed constant '%s'", excerpt(s + i, end - i, b, sizeof b));
      j++;
    }
    if (parts != 2) return perr(p, p->line, "malformed constant '%s'", excerpt(s + i, end - i, b, sizeof b));
    return 0;
  }
  /* DEPBAR.LE SB0, 0x0, {1}: a scoreboard and a set of scoreboards, no register */
  if ((end - i == 3 && s[i] == 'S' && s[i + 1] == 'B' && is_digit(s[i + 2])) ||
      (end - i >= 2 && s[i] == '{' && s[end - 1] == '}')) {
    for (size_t j = i + 1; j + 1 < end && s[i] == '{'; j++)
      if (!is_digit(s[j]) && s[j] != ',')
        return perr(p, p->line, "malformed scoreboard set '%s'", excerpt(s + i, end - i, b, sizeof b));
    push_op(p, RS_OP_OTHER, 0, 0, 0, i, end - i);
    return 0;
  }
  if ((end - i >= 3 && starts(s + i, end - i, "SR_")) || (end - i == 3 && starts(s + i, 3, "SRZ"))) {
    for (size_t j = i; j < end; j++)
      if (!is_word(s[j])) return perr(p, p->line, "malformed special register '%s'", excerpt(s + i, end - i, b, sizeof b));
    push_op(p, RS_OP_OTHER, 0, 0, 0, i, end - i);
    return 0;
  }
  /* the sign stripped above belongs to a number */
  size_t ns = off;
  while (ns < i && s[ns] == ' ') ns++;
  if (is_number(s + ns, end - ns) || is_number(s + i, end - i)) {
    push_op(p, RS_OP_IMM, 0, 0, 0, i, end - i);
    return 0;
  }
  return perr(p, p->line, "unexpected operand '%s' of %.*s", excerpt(s + off, end - off, b, sizeof b), (int)mnl, mn);
}

/* Split the operand list s[off..end) at top-level commas (and before a label that follows a
 * register without a comma: RET.REL.NODEC R2 `(kernel)). */
static int split_operands(P *p, size_t off, size_t end, size_t *so, size_t *sl, uint32_t *n) {
  size_t i = off, start = off;
  int depth = 0;
  *n = 0;
  while (i <= end) {
    char c = i < end ? p->s[i] : ',';
    if (c == '[' || c == '{') depth++;
    if (c == ']' || c == '}') depth--;
    bool content = false;
    for (size_t t = start; t < i && c == '`' && !content; t++) content = p->s[t] != ' ';
    bool cut = (c == ',' && depth == 0) || (c == '`' && depth == 0 && content);
    if (cut) {
      size_t a = start, b = i;
      while (a < b && p->s[a] == ' ') a++;
      while (b > a && p->s[b - 1] == ' ') b--;
      if (a == b) {
        if (i == end && *n == 0 && start == off) return 0; /* no operands */
        return perr(p, p->line, "empty operand");
      }
      if (*n == MAX_OPS) return perr(p, p->line, "too many operands");
      so[*n] = a;
      sl[*n] = b - a;
      (*n)++;
      start = c == ',' ? i + 1 : i;
    }
    if (depth < 0) return perr(p, p->line, "unbalanced ']'");
    i++;
  }
  if (depth) return perr(p, p->line, "unbalanced '['");
  return 0;
}

static int parse_roles(const char *v, role *out, uint32_t *n) {
  *n = 0;
  for (const char *q = v; *q && *q != '|';) {
    while (*q == ' ') q++;
    if (!*q || *q == '|') break;
    role r = {*q, 1};
    q++;
    if (is_digit(*q)) r.width = (unsigned)(*q++ - '0');
    if (*n == MAX_ROLES) return -1;
    out[(*n)++] = r;
  }
  return 0;
}

/* P2R Rd, PR, Rb, mask / R2P PR, Ra, mask: PR stands for the predicates whose bits the immediate
 * mask (the last operand, s[off..off+len)) sets; each is read (P2R: flags 0) or written (R2P:
 * the def flags), implicitly, so its live range reaches or starts here. UP2UR URd, UPR, URb, mask /
 * UR2UP UPR, URa, mask: the same over the uniform predicates UP0-UP6 (uniform). */
static int pr_mask(P *p, size_t off, size_t len, uint16_t flags, bool uniform, const char *mn, size_t mnl) {
  const char *s = p->s;
  char b[80];
  unsigned long mask = 0;
  bool ok = len > 2 && len <= 10 && s[off] == '0' && s[off + 1] == 'x';
  for (size_t j = off + 2; ok && j < off + len; j++) {
    ok = is_hex(s[j]);
    if (ok) mask = mask * 16 + (unsigned long)(is_digit(s[j]) ? s[j] - '0' : (s[j] | 0x20) - 'a' + 10);
  }
  if (!ok) return perr(p, p->line, "%.*s needs an immediate predicate mask, found '%s'", (int)mnl, mn, excerpt(s + off, len, b, sizeof b));
  if (mask & ~0x7fUL)
    return perr(p, p->line, "%.*s mask 0x%lx names predicates beyond P6", (int)mnl, mn, mask);
  for (int k = 0; k < 7; k++) {
    if (!(mask >> k & 1)) continue;
    char nm[4] = {'U', 'P', (char)('0' + k), 0}; /* UPk for UPR, Pk for PR */
    rs_preg g;
    if (p->f->tgt->parse_preg(p->f->tgt, nm + !uniform, 3 - !uniform, &g)) return perr(p, p->line, "no such predicate %s", nm + !uniform);
    push_op(p, RS_OP_PREG, RS_F_IMPLICIT | flags, g.unit, g.lanes, 0, 0);
  }
  return 0;
}

/* Descriptor from the decoded table (sass.h): UR unit, or -1. */
static int table_desc(P *p, uint32_t addr) {
  if (!p->o) return -1;
  for (size_t i = 0; i < p->o->ndesc; i++) {
    const rs_sass_desc *d = &p->o->desc[i];
    if (d->addr == addr && d->func && !strcmp(d->func, p->f->name)) {
      p->desc_used[i] = 1;
      return d->ur;
    }
  }
  return -1;
}

/* rs_sass_lookup through the memo (the same row, variant and error as a direct call). */
static const rs_sass_op *lookup(P *p, const char *mn, size_t mnl, uint32_t nops, const char **variant, char *why,
                                size_t whylen) {
  char key[96];
  if (mnl + 1 > sizeof key) return rs_sass_lookup(mn, mnl, nops, variant, why, whylen);
  key[0] = (char)(nops + 1);
  memcpy(key + 1, mn, mnl);
  uint32_t id = rs_intern_get(&p->forms, key, mnl + 1);
  if (id >= p->capforms) {
    uint32_t nc = p->capforms ? p->capforms * 2 : 64;
    while (nc <= id) nc *= 2;
    p->form_row = rs_xrealloc(p->form_row, sizeof *p->form_row * nc);
    p->form_variant = rs_xrealloc(p->form_variant, sizeof *p->form_variant * nc);
    for (uint32_t i = p->capforms; i < nc; i++) p->form_row[i] = NULL, p->form_variant[i] = NULL;
    p->capforms = nc;
  }
  if (!p->form_row[id]) { /* first time (a failed lookup is asked again: its function was refused) */
    p->form_row[id] = rs_sass_lookup(mn, mnl, nops, &p->form_variant[id], why, whylen);
    if (p->form_row[id] && p->o && rs_sass_masked(p->o->mask, p->form_row[id]->form)) {
      snprintf(why, whylen, "form '%.*s': its table row %s is masked (RS_TEST_MASK_ROWS, a test facility)", (int)mnl, mn,
               p->form_row[id]->form);
      p->form_row[id] = NULL;
    }
    /* a form the table lacks, read with the row nvdisasm's own life ranges give (infer.c) */
    rs_sass_inferred *r = !p->form_row[id] && p->o ? rs_sass_infer_find(p->o->inferred, mn, mnl, nops) : NULL;
    if (r) {
      if (!r->row) {
        r->row = rs_xcalloc(1, sizeof *r->row);
        r->row->form = r->form, r->row->optional = "", r->row->ops = r->ops, r->row->flags = RS_SOP_INFERRED;
      }
      p->form_row[id] = r->row;
      p->form_variant[id] = r->ops;
    }
    if (!p->form_row[id]) return NULL;
  }
  *variant = p->form_variant[id];
  return p->form_row[id];
}

/* Count one instruction's form in the coverage table (rs_sass_seen). */
static void seen_form(rs_sass_seen *fs, const char *mn, size_t mnl, uint32_t nops, const rs_sass_op *row,
                      const char *why) {
  if (!row && fs->marked != fs->funcs) fs->marked = fs->funcs, fs->funcs_unknown++;
  for (uint32_t i = 0; i < fs->n; i++)
    if (fs->v[i].nops == nops && strlen(fs->v[i].form) == mnl && !memcmp(fs->v[i].form, mn, mnl)) {
      fs->v[i].count++;
      if (fs->v[i].last_func != fs->funcs) fs->v[i].last_func = fs->funcs, fs->v[i].funcs++;
      return;
    }
  rs_sass_form_seen f = {rs_xstrndup(mn, mnl), nops, 1, row ? row->form : NULL, row ? NULL : rs_xstrndup(why, strlen(why)),
                         1, fs->funcs};
  RS_PUSH(fs->v, fs->n, fs->cap, f);
}

void rs_sass_seen_free(rs_sass_seen *fs) {
  for (uint32_t i = 0; i < fs->n; i++) free(fs->v[i].form), free(fs->v[i].why);
  free(fs->v);
  memset(fs, 0, sizeof *fs);
}

/* ---- blocks and instructions ---- */

static void start_block(P *p, uint32_t addr) {
  rs_func *f = p->f;
  char nm[300];
  if (p->npending) {
    const char *ln = p->labels.strs[p->pending[0]];
    snprintf(nm, sizeof nm, "%s", ln);
  } else {
    snprintf(nm, sizeof nm, "%s+%04x", f->name, (unsigned)addr);
  }
  uint32_t bi = rs_func_add_block(f, nm, strlen(nm), f->nblocks, p->line);
  for (uint32_t i = 0; i < p->npending; i++) p->lab_block[p->pending[i]] = (int32_t)bi;
  p->npending = 0;
  p->new_block = false;
}

/* A keyword operand: an upper-case word that is no register, geometry or special register
 * (TXQ's TEX_HEADER_DIMENSION). */
static bool is_keyword(const char *s, size_t n) {
  if (!n || !(s[0] >= 'A' && s[0] <= 'Z') || reg_token(s, n) == n || rs_sass_is_geometry(s, n) ||
      starts(s, n, "SR_") || (n == 3 && starts(s, n, "SRZ")))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'A' && s[i] <= 'Z') || is_digit(s[i]) || s[i] == '_')) return false;
  return true;
}

/* Do the operands have the kinds the roles need? Labels `(...), geometries, keywords and the
 * registers of texture rows (a predicate P, R tuples t u a b) tell variants with as many
 * operands apart (CALL.ABS.NOINC R8; TEX with or without Rb, mask, residency predicate). */
static bool kinds_fit(const P *p, const role *r, uint32_t n, const size_t *so, const size_t *sl) {
  for (uint32_t k = 0; k < n; k++) {
    const char *s = p->s + so[k];
    size_t len = sl[k], rt = reg_token(s, len);
    if ((r[k].role == 'l') != (s[0] == '`')) return false;
    if ((r[k].role == 'g') != rs_sass_is_geometry(s, len)) return false;
    if (r[k].role == 'k' && !is_keyword(s, len)) return false;
    if (r[k].role == 'P' && !(rt && s[0] == 'P')) return false;
    if (strchr("tuab", r[k].role) && !(rt && s[0] == 'R')) return false;
  }
  return true;
}

/* Texture rows: the roles t u a b become results and sources of the widths texshape.c gives
 * for this mnemonic, geometry and mask; a result of width 0 must be RZ, an Rb the shape lacks
 * (or lacking one it needs) is an error. */
static int tex_roles(P *p, role *r, uint32_t n, const size_t *so, const size_t *sl, const char *mn, size_t mnl) {
  const char *geom = NULL;
  size_t geoml = 0;
  uint32_t mask = 0xf;
  bool tex = false, has_b = false;
  for (uint32_t k = 0; k < n; k++) {
    tex |= strchr("tuab", r[k].role) != NULL;
    has_b |= r[k].role == 'b';
    if (r[k].role == 'g') geom = p->s + so[k], geoml = sl[k];
    if (r[k].role == 'c') {
      const char *s = p->s + so[k];
      char b[40];
      unsigned long v = 0;
      bool ok = sl[k] > 2 && sl[k] <= 4 && s[0] == '0' && s[1] == 'x';
      for (size_t j = 2; ok && j < sl[k]; j++) {
        ok = is_hex(s[j]);
        if (ok) v = v * 16 + (unsigned long)(is_digit(s[j]) ? s[j] - '0' : (s[j] | 0x20) - 'a' + 10);
      }
      if (!ok) return perr(p, p->line, "%.*s needs a component mask, found '%s'", (int)mnl, mn, excerpt(s, sl[k], b, sizeof b));
      mask = (uint32_t)v;
    }
  }
  if (!tex) return 0;
  rs_sass_texshape sh;
  char why[200];
  if (rs_sass_tex_shape(mn, mnl, geom, geoml, mask, &sh, why, sizeof why)) return perr(p, p->line, "%s", why);
  if (has_b != (sh.extra > 0))
    return perr(p, p->line, "%.*s %s a register of extra operands, but its shape has %u", (int)mnl, mn,
                has_b ? "prints" : "lacks", sh.extra);
  for (uint32_t k = 0; k < n; k++) {
    unsigned w = r[k].role == 't' ? sh.dst_hi : r[k].role == 'u' ? sh.dst_lo : r[k].role == 'a' ? sh.coords
               : r[k].role == 'b' ? sh.extra : 1;
    if (!strchr("tuab", r[k].role)) continue;
    bool zero = sl[k] == 2 && !memcmp(p->s + so[k], "RZ", 2);
    if (w == 0 && !zero)
      return perr(p, p->line, "%.*s with mask 0x%x writes no register there, found '%.*s' (RZ expected)", (int)mnl, mn,
                  mask, (int)(sl[k] > 20 ? 20 : sl[k]), p->s + so[k]);
    r[k].role = r[k].role == 't' || r[k].role == 'u' ? 'd' : 's';
    r[k].width = w ? w : 1;
  }
  return 0;
}

/* Are the memory operands bare [Rn...] (none with desc[] or .64; LDGSTS's shared one is bare)? */
static bool plain_address(const P *p, const role *roles, uint32_t nops, const size_t *so, const size_t *sl) {
  bool any = false;
  for (uint32_t k = 0; k < nops; k++) {
    if (roles[k].role != 'm') continue;
    const char *a = p->s + so[k];
    if (!sl[k] || a[0] != '[') return false;
    for (size_t i = 0; i + 2 < sl[k]; i++)
      if (a[i] == '.' && a[i + 1] == '6' && a[i + 2] == '4') return false;
    any = true;
  }
  return any;
}

/* One instruction line s[off..end): address comment, guard, opcode, operands, ";". */
/* The kinds of an instruction's operands, for a refusal: "R,R,UR,imm,PT" (R UR P UP B by file,
 * RZ URZ PT UPT as printed, c[] a constant, [] an address, imm a number, label, else the word). */
static void op_shape(const char *s, const size_t *so, const size_t *sl, uint32_t n, char *out, size_t cap) {
  size_t k = 0;
  out[0] = 0;
  for (uint32_t i = 0; i < n && k + 16 < cap; i++) {
    const char *t = s + so[i];
    size_t l = sl[i];
    while (l && (*t == '-' || *t == '!' || *t == '|' || *t == '~')) t++, l--;
    char w[16];
    size_t wl = 0;
    while (wl < l && wl < sizeof w - 1 && (is_alpha(t[wl]) || is_digit(t[wl]) || t[wl] == '_')) w[wl] = t[wl], wl++;
    w[wl] = 0;
    const char *kind = w;
    if (l && (t[0] == '[' || !strncmp(t, "desc[", 5))) kind = "[]";
    else if (l > 1 && t[0] == 'c' && t[1] == '[') kind = "c[]";
    else if (l && (is_digit(t[0]) || t[0] == '+' || t[0] == '.' ) && !(l > 2 && t[0] == '.' && t[1] == 'L')) kind = "imm";
    else if (l > 2 && t[0] == '.' && t[1] == 'L') kind = "label";
    else if (!strcmp(w, "RZ") || !strcmp(w, "URZ") || !strcmp(w, "PT") || !strcmp(w, "UPT") || !strcmp(w, "SRZ")) kind = w;
    else if (wl >= 2 && w[0] == 'R' && is_digit(w[1])) kind = "R";
    else if (wl >= 3 && w[0] == 'U' && w[1] == 'R' && is_digit(w[2])) kind = "UR";
    else if (wl >= 2 && w[0] == 'P' && is_digit(w[1])) kind = "P";
    else if (wl >= 3 && w[0] == 'U' && w[1] == 'P' && is_digit(w[2])) kind = "UP";
    else if (wl >= 2 && w[0] == 'B' && is_digit(w[1])) kind = "B";
    else if (wl >= 3 && !strncmp(w, "SR_", 3)) kind = "SR";
    else if (!wl) kind = "?";
    k += (size_t)snprintf(out + k, cap - k, "%s%s", i ? "," : "", kind);
  }
}

static int parse_inst(P *p, size_t off, size_t end) {
  rs_func *f = p->f;
  const char *s = p->s;
  char b[80];
  size_t i = off + 2;
  uint32_t addr = 0;
  size_t d = i;
  while (i < end && is_hex(s[i]) && i - d < 8) {
    addr = addr * 16 + (uint32_t)(is_digit(s[i]) ? s[i] - '0' : (s[i] | 0x20) - 'a' + 10);
    i++;
  }
  if (i == d || i + 1 >= end || s[i] != '*' || s[i + 1] != '/') return perr(p, p->line, "malformed instruction address");
  i += 2;
  bool first = f->ninsts == 0 && !p->left_out;
  if (first ? addr != 0 : addr != p->last_addr + 16) {
    if (first) return perr(p, p->line, "function %s starts at /*%04x*/, not /*0000*/", f->name, addr);
    return perr(p, p->line,
                "address hole in %s: /*%04x*/ follows /*%04x*/ (nvdisasm left out %u instruction(s) it does not "
                "know; decode them or drop the kernel)",
                f->name, addr, p->last_addr, addr > p->last_addr ? (addr - p->last_addr) / 16 - 1 : 0);
  }
  p->last_addr = addr;
  while (i < end && s[i] == ' ') i++;
  /* the statement ends at ';' */
  size_t semi = i;
  while (semi < end && s[semi] != ';') semi++;
  if (semi >= end) return perr(p, p->line, "instruction without ';' (truncated listing?)");
  /* after ';': nothing, an encoding comment or a -plr table */
  for (size_t t = semi + 1; t < end; t++) {
    if (s[t] == ' ') continue;
    if (s[t] == '/' && t + 1 < end && (s[t + 1] == '*' || s[t + 1] == '/')) break;
    return perr(p, p->line, "unexpected '%s' after ';'", excerpt(s + t, end - t, b, sizeof b));
  }
  /* guard */
  uint32_t first_op = f->nops;
  bool guard = false, guard_always = false;
  size_t goff = 0, glen = 0;
  if (i < end && s[i] == '@') {
    i++;
    bool neg = i < end && s[i] == '!';
    if (neg) i++;
    glen = reg_token(s + i, semi - i);
    goff = i;
    if (!glen || !(s[i] == 'P' || (s[i] == 'U' && s[i + 1] == 'P')))
      return perr(p, p->line, "expected a predicate after '@'");
    guard = true;
    guard_always = !neg && glen == 2 && s[i] == 'P' && s[i + 1] == 'T'; /* @PT: always */
    i += glen;
    if (i >= semi || s[i] != ' ') return perr(p, p->line, "expected an opcode after the guard");
    while (i < semi && s[i] == ' ') i++;
  }
  size_t mo = i;
  while (i < semi && s[i] != ' ') i++;
  size_t mnl = i - mo;
  const char *mn = s + mo;
  if (!mnl || !is_alpha(mn[0])) return perr(p, p->line, "expected an opcode, found '%s'", excerpt(mn, semi - mo, b, sizeof b));
  for (size_t t = 0; t < mnl; t++)
    if (!is_word(mn[t]) || (mn[t] == '.' && (t + 1 == mnl || mn[t + 1] == '.')))
      return perr(p, p->line, "malformed opcode '%s'", excerpt(mn, mnl, b, sizeof b));
  /* BRX R4 -0x170 (*"BRANCH_TARGETS .L_x_22,.L_x_23,.L_x_3"*): nvdisasm names the targets of
   * ptxas's jump table (a switch); they end the operand list, and the register and its offset
   * have no comma between them */
  size_t opend = semi, tgt_off = 0, tgt_end = 0;
  static const char bt[] = "(*\"BRANCH_TARGETS ";
  for (size_t t = i; t + sizeof bt - 1 <= semi; t++)
    if (!memcmp(s + t, bt, sizeof bt - 1)) {
      opend = t;
      tgt_off = t + sizeof bt - 1;
      for (tgt_end = tgt_off; tgt_end < semi && s[tgt_end] != '"'; tgt_end++) {}
      if (tgt_end + 2 >= semi || s[tgt_end + 1] != '*' || s[tgt_end + 2] != ')' || tgt_end == tgt_off)
        return perr(p, p->line, "malformed BRANCH_TARGETS list");
      break;
    }
  size_t so[MAX_OPS], sl[MAX_OPS];
  uint32_t nops;
  if (split_operands(p, i, opend, so, sl, &nops)) return -1;
  if (tgt_off && nops == 1) { /* "R4 -0x170": two operands */
    size_t sp = so[0];
    while (sp < so[0] + sl[0] && s[sp] != ' ') sp++;
    size_t b2 = sp;
    while (b2 < so[0] + sl[0] && s[b2] == ' ') b2++;
    if (b2 < so[0] + sl[0]) {
      so[1] = b2, sl[1] = so[0] + sl[0] - b2, sl[0] = sp - so[0];
      nops = 2;
    }
  }
  p->ref_addr = addr; /* an instruction form the table lacks refuses its function, not the listing */
  snprintf(p->ref_form, sizeof p->ref_form, "%.*s", (int)(mnl < 63 ? mnl : 63), mn);
  op_shape(s, so, sl, nops, p->ref_shape, sizeof p->ref_shape);
  if (!nops) snprintf(p->ref_shape, sizeof p->ref_shape, "no operands");
  const char *variant = NULL;
  char why[300];
  const rs_sass_op *row = lookup(p, mn, mnl, nops, &variant, why, sizeof why);
  if (p->o && p->o->forms) {
    seen_form(p->o->forms, mn, mnl, nops, row, why);
    if (!row) { /* counted; the instruction is left out (no lift follows a forms scan) */
      p->last_addr = addr;
      p->left_out = true;
      return 0;
    }
  }
  if (!row) {
    p->refusable = true;
    return perr(p, p->line, "%s", why);
  }
  if (row->flags & RS_SOP_INFERRED) { /* recorded, and any error of its operands refuses the function */
    rs_sass_inferred *r = rs_sass_infer_find(p->o->inferred, mn, mnl, nops);
    if (!r->nfuncs || strcmp(r->funcs[r->nfuncs - 1], f->name)) {
      char *fn = rs_xstrndup(f->name, strlen(f->name));
      RS_PUSH(r->funcs, r->nfuncs, r->capfuncs, fn);
    }
    p->refusable = true;
  }
  role roles[MAX_ROLES];
  uint32_t nroles;
  if (parse_roles(variant, roles, &nroles) || nroles != nops) return perr(p, p->line, "bad table row for %s", row->form);
  /* variants with as many operands differ in kind: a label `(...) or not (CALL.ABS.NOINC R8) */
  for (const char *v = variant; !kinds_fit(p, roles, nops, so, sl);) {
    v = strchr(v, '|');
    if (!v) break;
    v++;
    role alt[MAX_ROLES];
    uint32_t na;
    if (!parse_roles(v, alt, &na) && na == nops) memcpy(roles, alt, sizeof *alt * na);
  }
  bool new_kinds = false; /* roles whose operands operand() takes on kinds_fit's word */
  for (uint32_t k = 0; k < nops; k++) new_kinds |= strchr("gkPtuabc", roles[k].role) != NULL;
  bool inferred = (row->flags & RS_SOP_INFERRED) != 0;
  p->refusable = new_kinds && !kinds_fit(p, roles, nops, so, sl);
  if (p->refusable)
    return perr(p, p->line, "%.*s: no variant of %s has operands of these kinds", (int)mnl, mn, row->form);
  p->refusable |= inferred;
  if (tex_roles(p, roles, nops, so, sl, mn, mnl)) return -1;
  bool pred = guard && !guard_always;
  uint16_t dflags = RS_F_DEF | (pred ? RS_F_COND : 0);
  bool mem64 = (row->flags & RS_SOP_DESC) && p->sm < 80; /* sm_75 .E: 64-bit address without .64 */
  /* sm_80+: an .E access printed [Ra] with neither desc[] nor .64 reads the pair Ra and no
   * descriptor (-plr: the local fallback LD.E.64/ST.E.64 [R8] of a generic CAS; fill.c no_descs) */
  bool plain64 = (row->flags & RS_SOP_DESC) && p->sm >= 80 && plain_address(p, roles, nops, so, sl);
  mem64 |= plain64;
  bool target_label = (row->flags & (RS_SOP_BRANCH | RS_SOP_CALL | RS_SOP_INDIRECT)) != 0;
  int desc = -1;
  /* an indirect call (CALL.REL.NOINC R14 `(kernel)): its label is the base, not the target */
  bool indirect_call = (row->flags & RS_SOP_CALL) && !strcmp(row->form, "CALL.REL.NOINC") && nops == 2 &&
                       roles[0].role == 's' && roles[1].role == 'l';
  for (uint32_t k = 0; k < nops; k++)
    if (operand(p, so[k], sl[k], roles[k], dflags, mn, mnl, mem64, &desc, target_label && !indirect_call)) return -1;
  for (uint32_t k = 0; k < nops; k++)
    if ((roles[k].role == 'p' || roles[k].role == 'q') &&
        pr_mask(p, so[nops - 1], sl[nops - 1], roles[k].role == 'q' ? dflags : 0, sl[k] == 3, mn, mnl))
      return -1;
  if ((row->flags & RS_SOP_DESC) && p->sm >= 80 && !plain64) {
    int td = table_desc(p, addr);
    if (desc < 0 && td < 0)
      return perr(p, p->line,
                  "%.*s reads a descriptor register pair nvdisasm 11.8 does not print: give it as desc[URx] or "
                  "decode it from the encoding (sass/sass.h)",
                  (int)mnl, mn);
    if (desc < 0) {
      uint32_t unit;
      rs_lanes lanes;
      char nm[8];
      int nl = snprintf(nm, sizeof nm, "UR%d", td);
      if (reg_operand(p, nm, (size_t)nl, 2, mn, mnl, &unit, &lanes)) return -1;
      push_op(p, RS_OP_PREG, RS_F_IMPLICIT, unit, lanes, 0, 0);
    }
  } else if (table_desc(p, addr) >= 0) {
    return perr(p, p->line, "a decoded descriptor is given for %.*s, which reads none", (int)mnl, mn);
  }
  if (tgt_off) { /* the jump table's targets: its successors (an implicit label operand each) */
    if (!(row->flags & RS_SOP_INDIRECT))
      return perr(p, p->line, "BRANCH_TARGETS on %.*s, which is not an indirect branch", (int)mnl, mn);
    for (size_t a = tgt_off; a < tgt_end;) {
      size_t z = a;
      while (z < tgt_end && s[z] != ',') z++;
      if (z == a) return perr(p, p->line, "empty name in a BRANCH_TARGETS list");
      push_target(p, a, z - a, RS_F_IMPLICIT);
      a = z + 1;
    }
  }
  if (row->flags & RS_SOP_SP) {
    rs_preg sp;
    f->tgt->parse_preg(f->tgt, "R1", 2, &sp);
    push_op(p, RS_OP_PREG, RS_F_IMPLICIT, sp.unit, sp.lanes, 0, 0);
  }
  if (guard) {
    rs_preg g;
    if (f->tgt->parse_preg(f->tgt, s + goff, glen, &g)) return perr(p, p->line, "no such predicate");
    if (spelling(p, s + goff, glen, g.unit)) return -1; /* @P01 (found by fuzz_sass) */
    push_op(p, RS_OP_PREG, 0, g.unit, g.lanes, goff, glen);
  }
  if (p->new_block || p->npending || f->nblocks == 0) start_block(p, addr);
  rs_inst in = {0};
  in.opcode = rs_intern_get(&f->names, mn, mnl);
  in.first_op = first_op;
  in.nops = f->nops - first_op;
  in.line = p->line;
  in.addr = addr;
  uint32_t ctl = row->flags & (RS_SOP_BRANCH | RS_SOP_EXIT | RS_SOP_RET | RS_SOP_CALL | RS_SOP_INDIRECT);
  if (row->flags & (RS_SOP_BRANCH | RS_SOP_INDIRECT | RS_SOP_CALL)) in.flags |= RS_I_BRANCH;
  if (pred) in.flags |= RS_I_PREDICATED;
  else if (ctl && !(row->flags & RS_SOP_CALL)) in.flags |= RS_I_BARRIER;
  if ((row->flags & RS_SOP_COPY) && !guard && in.nops == 2) {
    const rs_operand *dd = &f->ops[first_op], *ss = dd + 1;
    if (ss->kind == RS_OP_PREG && ss->lanes == dd->lanes && !is_zero_reg(f->tgt, ss->reg) &&
        !is_zero_reg(f->tgt, dd->reg) && rs_target_file_of(f->tgt, dd->reg) == rs_target_file_of(f->tgt, ss->reg))
      in.flags |= RS_I_COPY;
  }
  RS_PUSH(f->insts, f->ninsts, f->capinsts, in);
  rs_grow((void **)&p->sflags, sizeof *p->sflags, &p->capsflags, f->ninsts);
  p->sflags[f->ninsts - 1] = row->flags;
  f->blocks[f->nblocks - 1].ninsts++;
  if (ctl) p->new_block = true;
  return 0;
}

/* ---- functions ---- */

static void reset_func(P *p) {
  rs_intern_free(&p->labels);
  memset(&p->labels, 0, sizeof p->labels);
  free(p->lab_block);
  free(p->lab_func);
  p->lab_block = NULL;
  p->lab_func = NULL;
  p->caplab = 0;
  p->npending = p->nfix = 0;
  p->end_label = -1;
  p->new_block = false;
  p->last_addr = 0;
  p->f = NULL;
  p->skip = false;
  p->left_out = false;
}

static void add_succ_fall(rs_func *f, uint32_t bi) {
  if (bi + 1 < f->nblocks) rs_block_add_succ(&f->blocks[bi], bi + 1);
}

/* A RET returns to the instructions after the calls of its own subroutine, not to every return
 * point: with every RET going everywhere, a value the kernel reads before its second call looked
 * live inside the first callee (slarfg sm_80: the rcp slowpath, called after the last STG through
 * R[6:7], reached the STG again through the RET to the sqrt slowpath's call site, and its writes
 * of R6 conflicted with ptxas's own colouring). A subroutine's RETs are those its entry reaches
 * by branches and fall-through, a call inside it stepping over to its return point. A RET no
 * entry reaches keeps every return point. */
#define IND_CALL (UINT32_MAX - 1) /* callee[b] of an indirect call: every entry of cand[] */
static void ret_edges(P *p, const uint32_t *callee, const uint32_t *ret_to, uint32_t nret, const uint8_t *cand) {
  rs_func *f = p->f;
  uint32_t nb = f->nblocks;
  if (!nret) return;
  uint8_t *seen = rs_xmalloc(nb + 1), *owned = rs_xcalloc(nb + 1, 1);
  uint32_t *rets = NULL, nrets = 0, caprets = 0; /* (RET block, entry) pairs */
  uint32_t *stack = rs_xmalloc(sizeof *stack * (nb + 1));
  uint8_t *called = rs_xcalloc(nb + 1, 1);
  for (uint32_t c = 0; c < nb; c++)
    if (callee[c] < nb) called[callee[c]] = 1;
    else if (callee[c] == IND_CALL)
      for (uint32_t e = 0; e < nb; e++) called[e] |= cand[e];
  for (uint32_t e = 0; e < nb; e++) {
    if (!called[e]) continue;
    memset(seen, 0, nb + 1);
    uint32_t sp = 0;
    stack[sp++] = e;
    seen[e] = 1;
    while (sp) {
      uint32_t b = stack[--sp];
      const rs_block *bl = &f->blocks[b];
      uint32_t li = bl->first_inst + bl->ninsts - 1;
      if (p->sflags[li] & RS_SOP_RET) { /* returns to the calls of e (edges added below) */
        owned[b] = 1;
        RS_PUSH(rets, nrets, caprets, b);
        RS_PUSH(rets, nrets, caprets, e);
      }
      for (uint32_t s = 0; s < bl->nsuccs; s++) {
        uint32_t t = callee[b] != UINT32_MAX && (bl->succs[s] == callee[b] || callee[b] == IND_CALL) ? b + 1 : bl->succs[s];
        if (t < nb && !seen[t]) seen[t] = 1, stack[sp++] = t;
      }
    }
  }
  for (uint32_t k = 0; k < nrets; k += 2)
    for (uint32_t c = 0; c < nb; c++)
      if ((callee[c] == rets[k + 1] || (callee[c] == IND_CALL && cand[rets[k + 1]])) && c + 1 < nb)
        rs_block_add_succ(&f->blocks[rets[k]], c + 1);
  for (uint32_t b = 0; b < nb; b++) {
    const rs_block *bl = &f->blocks[b];
    if (!owned[b] && (p->sflags[bl->first_inst + bl->ninsts - 1] & RS_SOP_RET))
      for (uint32_t r = 0; r < nret; r++) rs_block_add_succ(&f->blocks[b], ret_to[r]);
  }
  free(stack);
  free(seen);
  free(owned);
  free(rets);
  free(called);
}

static int refuse(P *p);
/* A function-level error found when the function is complete (p->e holds the message): refuse
 * the function alone, unless the caller asked for the whole listing to fail. */
static int refuse_at(P *p, uint32_t line, const char *form, const char *shape) {
  if (p->o && p->o->whole) return -1;
  uint32_t keep = p->line;
  p->line = line;
  snprintf(p->ref_form, sizeof p->ref_form, "%s", form);
  snprintf(p->ref_shape, sizeof p->ref_shape, "%s", shape);
  int rc = refuse(p);
  p->skip = false; /* the function is complete: nothing of it left to skip */
  p->line = keep;
  return rc;
}

static int finish_func(P *p) {
  rs_func *f = p->f;
  if (!f) return 0;
  if (f->ninsts == 0) return perr(p, f->line, "function %s has no instructions (truncated listing?)", f->name);
  if (p->end_label >= 0 && p->lab_block[p->end_label] < 0) {
    /* the end label is the last line of the function; a listing cut short lacks it */
    bool seen = false;
    for (uint32_t i = 0; i < p->npending; i++) seen |= p->pending[i] == (uint32_t)p->end_label;
    if (!seen)
      return perr(p, p->end_line, "truncated listing: function %s ends before its end label %s", f->name,
                  p->labels.strs[p->end_label]);
  }
  /* resolve branch and call targets */
  uint8_t *is_sub_call = rs_xcalloc(f->ninsts + 1, 1);
  for (uint32_t k = 0; k < p->nfix; k++) {
    const fixup *x = &p->fix[k];
    int32_t bi = p->lab_block[x->lab];
    if (bi < 0) {
      free(is_sub_call);
      perr(p, x->line, "undefined label '%s'", p->labels.strs[x->lab]);
      /* a jump table's target: nvdisasm 11.8 drops a label with the instruction it drops, and
       * cubin/disasm.c restores those of BRA/CALL/BSSY only; the function's limit, not bad input */
      if (!(f->ops[x->op].flags & RS_F_IMPLICIT)) return -1;
      p->ref_addr = 0;
      for (uint32_t i = 0; i < f->ninsts; i++)
        if (x->op >= f->insts[i].first_op && x->op < f->insts[i].first_op + f->insts[i].nops) p->ref_addr = f->insts[i].addr;
      return refuse_at(p, x->line, "label", p->labels.strs[x->lab]);
    }
    f->ops[x->op].reg = (uint32_t)bi;
  }
  /* return points: the instruction after every call to a subroutine */
  uint32_t *ret_to = NULL, nret = 0, capret = 0;
  uint32_t *callee = rs_xmalloc(sizeof *callee * (f->nblocks + 1)); /* per block: the entry it calls */
  /* An indirect call's callees: the subroutines whose address could be taken, i.e. every function
   * symbol of the section but the kernel itself and ptxas's own $__internal helpers (whole-program
   * nvcc places each address-taken __device__ function there as $kernel$name). More callees than
   * the real ones only keep values live longer (interference stays safe). */
  uint8_t *cand = rs_xcalloc(f->nblocks + 1, 1);
  uint32_t ncand = 0;
  for (uint32_t t = 0; t < p->labels.n; t++)
    if (p->lab_func[t] && p->lab_block[t] > 0 && strncmp(p->labels.strs[t], "$__internal", 11) && !cand[p->lab_block[t]])
      cand[p->lab_block[t]] = 1, ncand++;
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    rs_block *bl = &f->blocks[bi];
    uint32_t li = bl->first_inst + bl->ninsts - 1;
    callee[bi] = UINT32_MAX;
    if (!(p->sflags[li] & RS_SOP_CALL)) continue;
    const rs_inst *in = &f->insts[li];
    bool has_target = false;
    for (uint32_t o = 0; o < in->nops; o++) has_target |= f->ops[in->first_op + o].kind == RS_OP_BLOCK;
    if (!has_target && !strcmp(rs_func_opcode(f, in), "CALL.REL.NOINC")) { /* through a function pointer */
      if (!ncand) {
        free(is_sub_call), free(ret_to), free(callee), free(cand);
        perr(p, in->line,
             "indirect call in %s, and no function of its listing whose address could be taken (the callee is "
             "outside it: not modelled)",
             f->name);
        p->ref_addr = in->addr;
        return refuse_at(p, in->line, rs_func_opcode(f, in), "R");
      }
      is_sub_call[li] = 1, callee[bi] = IND_CALL;
    }
    for (uint32_t o = 0; o < in->nops; o++) {
      const rs_operand *op = &f->ops[in->first_op + o];
      if (op->kind != RS_OP_BLOCK) continue;
      /* a call to a function symbol (a subroutine) returns; one to a .L label is a jump */
      const char *tn = f->src + op->text_off;
      bool sym = !(op->text_len > 3 && !memcmp(tn, ".L_", 3));
      for (uint32_t t = 0; t < p->labels.n && sym; t++)
        if (p->lab_block[t] == (int32_t)op->reg && p->lab_func[t]) is_sub_call[li] = 1, callee[bi] = op->reg;
      if (sym && !is_sub_call[li]) {
        free(is_sub_call), free(ret_to), free(callee), free(cand);
        perr(p, in->line, "call to %.*s, which is not a subroutine of %s (calls across kernels are not modelled)",
             (int)op->text_len, tn, f->name);
        p->ref_addr = in->addr;
        return refuse_at(p, in->line, rs_func_opcode(f, in), "label");
      }
    }
    if (is_sub_call[li] && bi + 1 < f->nblocks) RS_PUSH(ret_to, nret, capret, bi + 1);
  }
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    rs_block *bl = &f->blocks[bi];
    uint32_t li = bl->first_inst + bl->ninsts - 1;
    const rs_inst *in = &f->insts[li];
    uint32_t fl = p->sflags[li];
    bool pred = (in->flags & RS_I_PREDICATED) != 0;
    bool fall = true;
    if (fl & (RS_SOP_BRANCH | RS_SOP_CALL)) {
      for (uint32_t o = 0; o < in->nops; o++)
        if (f->ops[in->first_op + o].kind == RS_OP_BLOCK) rs_block_add_succ(bl, f->ops[in->first_op + o].reg);
      if (fl & RS_SOP_BRANCH) fall = pred;
      if (callee[bi] == IND_CALL)
        for (uint32_t e = 0; e < f->nblocks; e++)
          if (cand[e]) rs_block_add_succ(bl, e);
      if (is_sub_call[li]) fall = pred; /* the return comes back through RET */
    } else if (fl & RS_SOP_INDIRECT) {
      /* its BRANCH_TARGETS when nvdisasm names them, else any labelled block */
      bool named = false;
      for (uint32_t o = 0; o < in->nops; o++)
        if (f->ops[in->first_op + o].kind == RS_OP_BLOCK) rs_block_add_succ(bl, f->ops[in->first_op + o].reg), named = true;
      for (uint32_t t = 0; t < p->labels.n && !named; t++)
        if (p->lab_block[t] >= 0) rs_block_add_succ(bl, (uint32_t)p->lab_block[t]);
      fall = pred;
    } else if (fl & RS_SOP_EXIT) {
      fall = pred;
    } else if (fl & RS_SOP_RET) {
      fall = pred; /* where it returns to: below, once every other edge is known */
    }
    if (fall) add_succ_fall(f, bi);
    bl->has_succs = true;
  }
  ret_edges(p, callee, ret_to, nret, cand);
  free(cand);
  free(callee);
  free(ret_to);
  free(is_sub_call);
  rs_func_finish_cfg(f);
  f->allocated = true;
  return 0;
}

static int start_func(P *p, const char *name, size_t n) {
  if (finish_func(p)) return -1;
  reset_func(p);
  if (!p->m->tgt) return perr(p, p->line, "no architecture before the first function (.headerflags EF_CUDA_SMxx, or --target)");
  if (p->m->tgt->vendor != RS_NV) return perr(p, p->line, "SASS needs an NVIDIA target, not %s", p->m->tgt->name);
  p->f = rs_func_new(p->m, name, n, p->line);
  if (p->o && p->o->forms) p->o->forms->funcs++; /* a new serial: forms count functions once */
  p->f->kind = RS_SRC_SASS;
  p->f->tgt = p->m->tgt;
  uint32_t id = label_id(p, name, n);
  p->lab_func[id] = 1;
  return 0;
}

/* ---- directives ---- */

static int directive(P *p, const char *s, size_t n) {
  char b[80];
  if (starts(s, n, ".headerflags")) {
    for (size_t i = 0; i + 10 < n; i++)
      if (!memcmp(s + i, "EF_CUDA_SM", 10) && is_digit(s[i + 10])) {
        int sm = 0;
        for (size_t j = i + 10; j < n && is_digit(s[j]) && sm < 10000; j++) sm = sm * 10 + (s[j] - '0');
        p->sm = sm;
        if (!p->m->tgt) {
          char nm[16];
          snprintf(nm, sizeof nm, "sm_%d", sm);
          p->m->tgt = rs_target_by_name(nm);
          if (!p->m->tgt || p->m->tgt->vendor != RS_NV)
            return perr(p, p->line, "unsupported architecture %s (supported: sm_75, sm_80, sm_86, sm_87, sm_89, sm_90)", nm);
        }
        return 0;
      }
    return perr(p, p->line, ".headerflags without EF_CUDA_SMxx");
  }
  if (starts(s, n, ".sectioninfo")) {
    const char *k = NULL;
    for (size_t i = 0; i + 14 <= n; i++)
      if (!memcmp(s + i, "SHI_REGISTERS=", 14)) k = s + i + 14;
    if (k && p->f) {
      uint32_t v = 0;
      while (k < s + n && is_digit(*k) && v < 100000) v = v * 10 + (uint32_t)(*k++ - '0');
      p->f->declared_regs = v;
    }
    return 0;
  }
  if (starts(s, n, ".section")) {
    size_t i = 8;
    while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    size_t j = i;
    while (j < n && s[j] != ',' && s[j] != ' ' && s[j] != '\t') j++;
    if (j - i > 6 && !memcmp(s + i, ".text.", 6)) return start_func(p, s + i + 6, j - i - 6);
    if (finish_func(p)) return -1;
    reset_func(p);
    return 0;
  }
  if (starts(s, n, ".size") || starts(s, n, ".type")) {
    size_t i = 5;
    while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    size_t j = i;
    while (j < n && s[j] != ',') j++;
    if (j >= n) return perr(p, p->line, "malformed %.5s directive '%s'", s, excerpt(s, n, b, sizeof b));
    if (!p->f) return 0;
    if (s[1] == 't') {
      if (j + 10 <= n && !memcmp(s + j + 1, "@function", 9)) p->lab_func[label_id(p, s + i, j - i)] = 1;
      return 0;
    }
    /* .size NAME,(END - NAME): END must close the kernel's function */
    if (j - i == strlen(p->f->name) && !memcmp(s + i, p->f->name, j - i) && j + 2 < n && s[j + 1] == '(') {
      size_t a = j + 2, c = a;
      while (c < n && s[c] != ' ' && s[c] != ')') c++;
      p->end_label = (int32_t)label_id(p, s + a, c - a);
      p->end_line = p->line;
    }
    return 0;
  }
  return 0; /* .elftype .align .global .weak .other ... */
}

static int label(P *p, const char *s, size_t n) {
  if (!p->f) return perr(p, p->line, "label outside a .text section");
  if (n > 6 && !memcmp(s, ".text.", 6) && n - 6 == strlen(p->f->name) && !memcmp(s + 6, p->f->name, n - 6))
    return 0; /* the section's own label, the same place as the kernel's */
  uint32_t id = label_id(p, s, n);
  if (p->lab_block[id] >= 0) {
    char b[80];
    return perr(p, p->line, "label '%s' defined twice", excerpt(s, n, b, sizeof b));
  }
  for (uint32_t i = 0; i < p->npending; i++)
    if (p->pending[i] == id) return 0;
  RS_PUSH(p->pending, p->npending, p->cappending, id);
  /* mark defined now so a duplicate further on is caught; start_block sets the real block */
  return 0;
}

/* The instruction just read refuses its function: recorded in the module with the parser's
 * message, the function dropped, its remaining lines skipped up to the next section; the
 * decoded descriptors of its instructions count as used (they were for it). */
static int refuse(P *p) {
  rs_module *m = p->m;
  rs_func *f = p->f;
  rs_module_refuse(m, f->name, p->line, p->ref_addr, p->ref_form, p->ref_shape, p->e->msg);
  if (p->o)
    for (size_t i = 0; i < p->o->ndesc; i++)
      if (p->o->desc[i].func && !strcmp(p->o->desc[i].func, f->name)) p->desc_used[i] = 1;
  for (uint32_t k = m->nfuncs; k-- > 0;)
    if (m->funcs[k] == f) {
      rs_module_drop_func(m, k);
      break;
    }
  reset_func(p);
  p->skip = true;
  memset(p->e, 0, sizeof *p->e);
  return 0;
}

int rs_sass_parse_opts(rs_module *m, const rs_sass_opts *o, rs_err *e) {
  if (m->len > UINT32_MAX) return rs_errf(e, m->path, 0, "file too large");
  P p = {0};
  p.m = m;
  p.e = e;
  p.o = o;
  p.s = m->text;
  p.n = m->len;
  p.end_label = -1;
  if (m->tgt) {
    if (m->tgt->vendor != RS_NV) return rs_errf(e, m->path, 0, "SASS needs an NVIDIA target, not %s", m->tgt->name);
    p.sm = atoi(m->tgt->name + 3);
  }
  if (o && o->ndesc) p.desc_used = rs_xcalloc(o->ndesc, 1);
  int rc = 0;
  size_t pos = 0;
  p.line = 0;
  char b[80];
  while (pos < p.n && !rc) {
    size_t end = pos;
    while (end < p.n && p.s[end] != '\n') end++;
    p.line++;
    size_t a = pos, z = end;
    pos = end + 1;
    while (a < z && (p.s[a] == ' ' || p.s[a] == '\t')) a++;
    while (z > a && (p.s[z - 1] == ' ' || p.s[z - 1] == '\t' || p.s[z - 1] == '\r')) z--;
    if (a == z) continue;
    const char *s = p.s + a;
    size_t n = z - a;
    for (size_t i = 0; i < n; i++)
      if ((unsigned char)s[i] < 0x20 && s[i] != '\t') {
        rc = perr(&p, p.line, "unexpected byte 0x%02x", (unsigned char)s[i]);
        break;
      }
    if (rc) break;
    if (n >= 2 && s[0] == '/' && s[1] == '/') continue;
    if (n >= 2 && s[0] == '/' && s[1] == '*' && n > 2 && is_hex(s[2])) {
      if (p.skip) continue; /* the rest of a refused function */
      if (!p.f) {
        rc = perr(&p, p.line, "instruction outside a .text section");
        break;
      }
      p.refusable = false;
      rc = parse_inst(&p, a, z);
      if (rc && p.refusable && !(o && o->whole)) rc = refuse(&p);
      continue;
    }
    if (n >= 5 && !memcmp(s, "/* 0x", 5)) continue; /* second encoding word of -hex */
    /* label: one word ending in ':' (plr columns may follow after "//") */
    size_t w = 0;
    while (w < n && is_word(s[w])) w++;
    if (w > 0 && w < n && s[w] == ':') {
      size_t t = w + 1;
      while (t < n && (s[t] == ' ' || s[t] == '\t')) t++;
      if (t == n || (t + 1 < n && s[t] == '/' && s[t + 1] == '/')) {
        if (p.skip) continue;
        rc = label(&p, s, w);
        continue;
      }
    }
    if (s[0] == '.') {
      rc = directive(&p, s, n);
      continue;
    }
    rc = perr(&p, p.line, "unexpected line '%s' (not an nvdisasm listing?)", excerpt(s, n, b, sizeof b));
  }
  if (!rc) rc = finish_func(&p);
  if (!rc && o)
    for (size_t i = 0; i < o->ndesc; i++)
      if (!p.desc_used[i]) {
        rc = rs_errf(e, m->path, 0, "decoded descriptor for %s /*%04x*/ matches no instruction",
                     o->desc[i].func ? o->desc[i].func : "?", o->desc[i].addr);
        break;
      }
  reset_func(&p);
  free(p.pending);
  free(p.fix);
  free(p.sflags);
  free(p.desc_used);
  rs_intern_free(&p.forms);
  free(p.form_row);
  free(p.form_variant);
  if (!rc && !(o && (o->no_lift || o->forms)))
    for (uint32_t k = 0; k < m->nfuncs && !rc;) {
      rc = rs_sass_lift(m->funcs[k], e);
      if (rc && !(o && o->whole)) { /* the lift refuses its function, not the listing */
        rs_module_refuse(m, m->funcs[k]->name, m->funcs[k]->line, 0, "lift", "", e->msg);
        rs_module_drop_func(m, k);
        memset(e, 0, sizeof *e);
        rc = 0;
        continue;
      }
      k++;
    }
  return rc;
}

int rs_sass_parse(rs_module *m, rs_err *e) { return rs_sass_parse_opts(m, NULL, e); }

rs_module *rs_sass_load(const char *path, const char *target_override, const rs_sass_opts *o, rs_err *e) {
  size_t len;
  char *text = rs_read_file(path, &len, e);
  if (!text) return NULL;
  return rs_sass_from_text(path, text, len, target_override, o, e);
}

rs_module *rs_sass_from_text(const char *path, char *text, size_t len, const char *target_override,
                             const rs_sass_opts *o, rs_err *e) {
  rs_module *m = rs_xcalloc(1, sizeof *m);
  m->path = rs_xstrndup(path, strlen(path));
  m->text = text;
  m->len = len;
  m->kind = RS_SRC_SASS;
  int rc = 0;
  if (target_override && !(m->tgt = rs_target_by_name(target_override)))
    rc = rs_errf(e, path, 0, "unknown target '%s'", target_override);
  if (!rc && memchr(text, 0, len)) rc = rs_errf(e, path, rs_line_of(text, strlen(text)), "NUL byte in input");
  if (!rc) rc = rs_sass_parse_opts(m, o, e);
  if (!rc && m->nfuncs == 0 && m->nrefused == 0) rc = rs_errf(e, path, 0, "no function found");
  if (rc) {
    rs_module_free(m);
    return NULL;
  }
  return m;
}
