/* normalize.c - normalized text + exact name map from the parsed IR (docs/normalization.md).
 * Everything is derived from rs_func: operands in IR order, so every def/use survives and a
 * line's register sequence maps back to the instruction's vreg operands one-to-one. */
#include "corpus/normalize.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sb_lower(rs_sbuf *b, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char c = (char)tolower((unsigned char)s[i]);
    rs_sbuf_put(b, &c, 1);
  }
}

/* ---- counting ---- */
void rs_norm_count(const char *s, size_t len, uint32_t *lines, uint32_t *tokens) {
  uint32_t nl = 0, nt = 0;
  bool blank = true, word = false;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\n') {
      if (!blank) nl++;
      blank = true;
      word = false;
      continue;
    }
    if (isspace(c)) {
      word = false;
      continue;
    }
    blank = false;
    if (isalnum(c) || c == '_') {
      if (!word) nt++;
      word = true;
    } else {
      nt++;
      word = false;
    }
  }
  if (!blank) nl++;
  *lines = nl;
  *tokens = nt;
}

/* ---- context ---- */
typedef struct {
  const rs_func *f;
  bool amd;
  int32_t *name_of;    /* vreg -> name index, -1 unused */
  char *kind;          /* per vreg: s v a r d p */
  uint32_t *num;       /* per vreg: number within its kind */
  char *type;          /* per vreg: 'i' 'f' 'b', 0 unknown */
  bool *annotated;
  int32_t *def_inst;   /* first defining instruction */
  rs_preg karg;        /* AMD kernarg segment pointer live-in (lanes 0: none) */
  int32_t karg_vreg;   /* prera: the vreg it is copied to */
  uint32_t *arg_off;   /* AMD kernel argument byte offsets (from the IR module's define) */
  uint32_t narg, caparg;
  bool args_ok;
} ctx;

static char sass_type(const char *o);
static const char *opname(const ctx *c, uint32_t i) { return rs_func_opcode(c->f, &c->f->insts[i]); }
static bool starts(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }
static bool has(const char *s, const char *p) { return strstr(s, p) != NULL; }

/* Register kind of a vreg: AMD by register file, NVIDIA by class. */
static char vreg_kind(const ctx *c, uint32_t v) {
  const rs_func *f = c->f;
  const rs_regclass *rc = &f->tgt->classes[f->vregs[v].cls];
  if (f->kind == RS_SRC_SASS) { /* by register file: r R, u UR, p P, q UP, b B (width annotated) */
    for (uint32_t i = 0; i < f->tgt->nfiles; i++)
      if (rc->files & (1u << i)) {
        const char *fn = f->tgt->files[i].name;
        return !strcmp(fn, "ur") ? 'u' : !strcmp(fn, "p") ? 'p' : !strcmp(fn, "up") ? 'q' : !strcmp(fn, "b") ? 'b' : 'r';
      }
    return 'r';
  }
  if (!c->amd) {
    if (!strcmp(rc->name, "pred")) return 'p';
    return rc->width >= 2 ? 'd' : 'r';
  }
  bool vg = false, ag = false;
  for (uint32_t i = 0; i < f->tgt->nfiles; i++) {
    if (!(rc->files & (1u << i))) continue;
    const char *fn = f->tgt->files[i].name;
    if (!strcmp(fn, "vgpr")) vg = true;
    if (!strcmp(fn, "agpr")) ag = true;
  }
  return vg ? 'v' : ag ? 'a' : 's';
}

/* ---- AMD kernel arguments: byte offsets from the IR module's "define ... @name(args)" ---- */
static uint32_t llvm_type_size(const char *s, size_t n, uint32_t *align) {
  size_t k = 0;
  while (k < n && s[k] != ' ') k++;
  for (size_t i = 0; i < n && s[i] != '%'; i++)
    if (s[i] == '*') { *align = 8; return 8; }
  struct { const char *t; uint32_t sz; } tab[] = {{"i8", 1}, {"i16", 2}, {"half", 2}, {"i32", 4},
                                                   {"float", 4}, {"i64", 8}, {"double", 8}};
  for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
    if (strlen(tab[i].t) == k && !strncmp(s, tab[i].t, k)) { *align = tab[i].sz; return tab[i].sz; }
  return 0;
}

static void find_args(ctx *c) {
  const rs_func *f = c->f;
  if (!f->src || f->src[0] != '-') return;
  char pat[300];
  snprintf(pat, sizeof pat, "@%s(", f->name);
  const char *d = strstr(f->src, pat);
  if (!d) return;
  const char *ls = d;
  while (ls > f->src && ls[-1] != '\n') ls--;
  if (!strstr(ls, "define ") || strstr(ls, "define ") > d) return;
  const char *p = d + strlen(pat);
  uint32_t off = 0;
  while (*p && *p != '\n') {
    while (*p == ' ') p++;
    const char *a = p;
    int depth = 0;
    while (*p && *p != '\n' && (depth > 0 || (*p != ',' && *p != ')'))) {
      if (*p == '(' || *p == '<' || *p == '[' || *p == '{') depth++;
      if (*p == ')' || *p == '>' || *p == ']' || *p == '}') depth--;
      p++;
    }
    if (p == a) break;
    uint32_t al = 0, sz = llvm_type_size(a, (size_t)(p - a), &al);
    const char *br = strstr(a, "byref(");
    if (!sz || (br && br < p)) { c->narg = 0; return; } /* unknown layout: print offsets */
    off = (off + al - 1) / al * al;
    RS_PUSH(c->arg_off, c->narg, c->caparg, off);
    off += sz;
    if (*p == ')') break;
    p++;
  }
  c->args_ok = c->narg > 0;
}

static bool preg_eq(rs_preg a, const rs_operand *o) { return o->kind == RS_OP_PREG && o->reg == a.unit && o->lanes == a.lanes; }

static const rs_operand *first_use(const rs_func *f, const rs_inst *in) {
  for (uint32_t k = 0; k < in->nops; k++) {
    const rs_operand *o = &f->ops[in->first_op + k];
    if (!(o->flags & RS_F_DEF)) return o;
  }
  return NULL;
}

/* The kernarg pointer: the live-in an S_LOAD reads its base from (directly, or via a COPY). */
static void find_karg(ctx *c) {
  const rs_func *f = c->f;
  c->karg_vreg = -1;
  for (uint32_t i = 0; i < f->ninsts && !c->karg.lanes; i++) {
    if (!starts(opname(c, i), "S_LOAD_")) continue;
    const rs_operand *b = first_use(f, &f->insts[i]);
    if (!b) continue;
    rs_preg cand = {0, 0};
    int32_t vr = -1;
    if (b->kind == RS_OP_PREG) {
      cand = (rs_preg){b->reg, b->lanes};
    } else if (b->kind == RS_OP_VREG && c->def_inst[b->reg] >= 0) {
      const rs_inst *d = &f->insts[c->def_inst[b->reg]];
      const rs_operand *s = first_use(f, d);
      if ((d->flags & RS_I_COPY) && s && s->kind == RS_OP_PREG) {
        cand = (rs_preg){s->reg, s->lanes};
        vr = (int32_t)b->reg;
      }
    }
    for (uint32_t l = 0; l < f->nliveins && cand.lanes; l++)
      if (f->liveins[l].reg.unit == cand.unit && f->liveins[l].reg.lanes == cand.lanes) {
        c->karg = cand;
        c->karg_vreg = vr;
      }
  }
}

static bool is_karg_load(const ctx *c, uint32_t i) {
  if (!c->karg.lanes || !starts(opname(c, i), "S_LOAD_")) return false;
  const rs_operand *b = first_use(c->f, &c->f->insts[i]);
  return b && (preg_eq(c->karg, b) || (b->kind == RS_OP_VREG && (int32_t)b->reg == c->karg_vreg));
}

/* ---- value types ---- */
/* 'f' float, 'i' int, 'b' bool, 'c' copy-like (inherit from a source), from the opcode. */
static char op_type(const ctx *c, uint32_t i) {
  const char *o = opname(c, i);
  if (c->amd) {
    if (starts(o, "V_CMP") || has(o, "SAVEEXEC") || starts(o, "SI_IF") || starts(o, "SI_ELSE"))
      return 'b';
    if (!strcmp(o, "COPY") || has(o, "MOV") || !strcmp(o, "REG_SEQUENCE") || !strcmp(o, "PHI") ||
        starts(o, "V_CNDMASK") || starts(o, "S_CSELECT") || starts(o, "V_ACCVGPR") ||
        ((starts(o, "S_AND") || starts(o, "S_OR") || starts(o, "S_XOR")) && has(o, "_B64")))
      return 'c';
    if (starts(o, "V_CVT_")) return o[6] == 'F' || starts(o, "V_CVT_PK") ? 'f' : 'i';
    if (has(o, "_F32") || has(o, "_F16") || has(o, "_F64") || has(o, "BF16") || has(o, "MFMA") ||
        has(o, "FMA") || has(o, "_PK_F"))
      return 'f';
    return 'i';
  }
  if (c->f->kind == RS_SRC_SASS) return sass_type(o);
  if (starts(o, "mov") || starts(o, "selp") || starts(o, "mov.b")) {
    if (has(o, ".f")) return 'f';
    return 'c';
  }
  /* first type suffix is the destination's (cvt.rn.f32.s32, mma...f32.f16.f16.f32) */
  for (const char *p = strchr(o, '.'); p; p = strchr(p + 1, '.')) {
    if (p[1] == 'f' && isdigit((unsigned char)p[2])) return 'f';
    if (starts(p, ".bf16")) return 'f';
    if ((p[1] == 's' || p[1] == 'u' || p[1] == 'b') && isdigit((unsigned char)p[2])) return 'i';
  }
  return 'i';
}

static void compute_types(ctx *c) {
  const rs_func *f = c->f;
  char *ot = rs_xcalloc(f->ninsts ? f->ninsts : 1, 1);
  for (uint32_t i = 0; i < f->ninsts; i++) ot[i] = op_type(c, i);
  for (uint32_t v = 0; v < f->nvregs; v++)
    if (c->kind[v] == 'p') c->type[v] = 'b';
  /* copies inherit from their first typed vreg source (or exec for lane masks); a few rounds
   * settle chains of copies */
  for (int round = 0; round < 8; round++) {
    bool changed = false;
    for (uint32_t v = 0; v < f->nvregs; v++) {
      if (c->type[v] || c->def_inst[v] < 0 || c->name_of[v] < 0) continue;
      uint32_t i = (uint32_t)c->def_inst[v];
      char t = ot[i];
      if (t == 'c') {
        t = 0;
        const rs_inst *in = &f->insts[i];
        for (uint32_t k = 0; k < in->nops && !t; k++) {
          const rs_operand *o = &f->ops[in->first_op + k];
          if (o->flags & RS_F_DEF) continue;
          if (o->kind == RS_OP_VREG && c->type[o->reg]) t = c->type[o->reg];
          if (o->kind == RS_OP_PREG && f->tgt->unit_flags[o->reg] & RS_UNIT_RESERVED &&
              c->amd && has(opname(c, i), "_B64"))
            t = 'b'; /* exec */
        }
        if (!t && round < 7) continue;
        if (!t) t = 'i';
      }
      c->type[v] = t;
      changed = true;
    }
    if (!changed && round > 0) break;
  }
  for (uint32_t v = 0; v < f->nvregs; v++)
    if (!c->type[v]) c->type[v] = 'i';
  free(ot);
}

/* ---- opcode vocabulary ---- */
/* AMD width suffix from DWORDXn / Bnn / SHORT / UBYTE ... ("" for one dword). */
static void amd_width(rs_sbuf *b, const char *o) {
  const char *p;
  if ((p = strstr(o, "DWORDX"))) rs_sbuf_printf(b, ".x%c", p[6]);
  else if ((p = strstr(o, "_B128"))) rs_sbuf_puts(b, ".x4");
  else if ((p = strstr(o, "_B96"))) rs_sbuf_puts(b, ".x3");
  else if ((p = strstr(o, "_B64"))) rs_sbuf_puts(b, ".x2");
  else if (has(o, "SHORT_D16_HI")) rs_sbuf_puts(b, ".h16hi");
  else if (has(o, "SHORT") || has(o, "_U16") || has(o, "_B16") || has(o, "_I16")) rs_sbuf_puts(b, ".16");
  else if (has(o, "BYTE") || has(o, "_U8") || has(o, "_B8") || has(o, "_I8")) rs_sbuf_puts(b, ".8");
  if (has(o, "READ2") || has(o, "WRITE2")) rs_sbuf_puts(b, ".2addr");
}

/* Type suffixes: floats keep their width; integers are ".i64"/".i16"; 32-bit integers (the
 * default, and what the value annotation already says) print nothing. Signedness is dropped:
 * allocation does not depend on it (arithmetic shifts are SRA, conversions keep their types). */
static void put_type(rs_sbuf *b, char kind, int bits) {
  if (kind == 'f') rs_sbuf_printf(b, ".f%d", bits);
  else if (bits != 32) rs_sbuf_printf(b, ".i%d", bits);
}

/* Type suffix from the first AMD type field (_F32, _U32, _B64 ...): .f32 .i32 .b64. */
static void amd_type(rs_sbuf *b, const char *o) {
  for (const char *p = strchr(o, '_'); p; p = strchr(p + 1, '_')) {
    char t = p[1];
    if ((t == 'F' || t == 'I' || t == 'U' || t == 'B') && isdigit((unsigned char)p[2])) {
      if (t == 'B' && p[2] == 'F') continue;
      put_type(b, t == 'F' ? 'f' : 'i', atoi(p + 2));
      return;
    }
  }
}

static void amd_opcode(const ctx *c, uint32_t i, rs_sbuf *b) {
  const char *o = opname(c, i);
  struct { const char *pre, *to; } alu[] = {
      {"V_ADDC", "ADDC"}, {"V_SUBB", "SUBC"}, {"V_ADD_", "ADD"}, {"S_ADD_", "ADD"},
      {"S_ADDC", "ADDC"}, {"V_SUB_", "SUB"}, {"V_SUBREV_", "SUB"}, {"S_SUB_", "SUB"},
      {"S_SUBB", "SUBC"}, {"V_MUL_HI", "MULHI"}, {"S_MUL_HI", "MULHI"}, {"V_MUL_", "MUL"},
      {"S_MUL_", "MUL"}, {"V_MAD_", "MAD"}, {"V_LSHLREV", "SHL"}, {"V_LSHL_B", "SHL"},
      {"S_LSHL_B", "SHL"}, {"V_LSHRREV", "SHR"}, {"S_LSHR_B", "SHR"}, {"V_ASHRREV", "SRA"},
      {"S_ASHR_I", "SRA"}, {"V_AND_B", "AND"}, {"S_AND_B", "AND"}, {"V_OR_B", "OR"},
      {"S_OR_B", "OR"}, {"V_XOR_B", "XOR"}, {"S_XOR_B", "XOR"}, {"V_NOT_", "NOT"},
      {"S_NOT_", "NOT"}, {"S_ANDN2_", "ANDN"}, {"S_ORN2_", "ORN"}, {"V_CNDMASK", "SEL"},
      {"S_CSELECT", "SEL"}, {"V_MIN", "MIN"}, {"S_MIN", "MIN"}, {"V_MAX", "MAX"},
      {"S_MAX", "MAX"}, {"V_EXP_", "EXP"}, {"V_LOG_", "LOG"}, {"V_RCP_", "RCP"},
      {"V_RSQ_", "RSQ"}, {"V_SQRT_", "SQRT"}, {"V_MOV_", "MOV"}, {"S_MOV_", "MOV"},
      {"V_ACCVGPR_", "MOV"}, {"V_LDEXP", "LDEXP"}, {"V_FRACT", "FRACT"}, {"V_BFE_", "BFE"},
      {"S_BFE_", "BFE"}, {"V_BFI_", "BFI"}, {"V_PERM_", "PERM"}, {"V_ALIGNBIT", "ALIGNBIT"},
      {"V_READFIRSTLANE", "RDLANE0"}, {"V_READLANE", "RDLANE"}, {"V_WRITELANE", "WRLANE"},
      {"V_DIV_", "DIV"}, {"V_ABS", "ABS"}, {"S_ABS", "ABS"}};
  if (!strcmp(o, "COPY")) { rs_sbuf_puts(b, "MOV"); return; }
  if (!strcmp(o, "IMPLICIT_DEF")) { rs_sbuf_puts(b, "UNDEF"); return; }
  if (!strcmp(o, "REG_SEQUENCE")) { rs_sbuf_puts(b, "SEQ"); return; }
  if (!strcmp(o, "INSERT_SUBREG")) { rs_sbuf_puts(b, "INSSUB"); return; }
  if (starts(o, "V_MFMA")) { rs_sbuf_puts(b, "MMA"); amd_type(b, o + 6); return; }
  if (has(o, "FMA") || has(o, "FMAC") || starts(o, "V_MAC_") || starts(o, "V_PK_MAC")) {
    rs_sbuf_puts(b, "FMA");
    amd_type(b, o);
    if (starts(o, "V_PK_")) rs_sbuf_puts(b, "x2");
    return;
  }
  if (starts(o, "V_CMP") || starts(o, "S_CMP")) {
    const char *p = o + 5 + (o[5] == 'X');
    if (*p == '_') p++;
    rs_sbuf_puts(b, "CMP.");
    const char *q = p;
    while (*q && *q != '_') q++;
    sb_lower(b, p, (size_t)(q - p));
    amd_type(b, q);
    return;
  }
  if (starts(o, "V_CVT_")) {
    rs_sbuf_puts(b, "CVT");
    const char *p = o + 5;
    for (int k = 0; k < 2 && p && *p == '_'; k++) {
      const char *q = p + 1;
      while (*q && *q != '_') q++;
      rs_sbuf_put(b, ".", 1);
      sb_lower(b, p + 1, (size_t)(q - p - 1));
      p = q;
    }
    return;
  }
  bool ld = has(o, "_LOAD_") || starts(o, "DS_READ"), st = has(o, "_STORE_") || starts(o, "DS_WRITE");
  if ((ld || st) && !has(o, "ATOMIC")) {
    rs_sbuf_puts(b, ld ? "LD" : "ST");
    if (starts(o, "GLOBAL_") || starts(o, "BUFFER_")) rs_sbuf_puts(b, ".global");
    else if (starts(o, "DS_")) rs_sbuf_puts(b, ".shared");
    else if (starts(o, "SCRATCH_")) rs_sbuf_puts(b, ".local");
    else if (starts(o, "S_LOAD") || starts(o, "S_BUFFER")) rs_sbuf_puts(b, is_karg_load(c, i) ? ".param" : ".const");
    amd_width(b, o);
    return;
  }
  if (starts(o, "S_BRANCH")) { rs_sbuf_puts(b, "BR"); return; }
  if (starts(o, "S_CBRANCH_")) { rs_sbuf_puts(b, "BR."); sb_lower(b, o + 10, strlen(o + 10)); return; }
  if (starts(o, "S_ENDPGM")) { rs_sbuf_puts(b, "EXIT"); return; }
  if (starts(o, "S_BARRIER")) { rs_sbuf_puts(b, "BAR"); return; }
  for (size_t k = 0; k < sizeof alu / sizeof *alu; k++)
    if (starts(o, alu[k].pre)) {
      rs_sbuf_puts(b, alu[k].to);
      if (has(o, "_PK_")) rs_sbuf_puts(b, "x2");
      amd_type(b, o + strlen(alu[k].pre) - 1);
      return;
    }
  /* unknown: lower-cased, without the S_/V_ prefix and the encoding suffix */
  size_t n = strlen(o);
  const char *s = o;
  if ((s[0] == 'V' || s[0] == 'S') && s[1] == '_') s += 2, n -= 2;
  if (n > 4 && (!strcmp(s + n - 4, "_e32") || !strcmp(s + n - 4, "_e64"))) n -= 4;
  sb_lower(b, s, n);
}

/* PTX: modifiers that do not change what is read or written are dropped. */
static void ptx_opcode(const ctx *c, uint32_t i, rs_sbuf *b) {
  const char *o = opname(c, i);
  const char *dot = strchr(o, '.');
  size_t base = dot ? (size_t)(dot - o) : strlen(o);
  const char *type = NULL; /* last type suffix */
  int vec = 1;
  const char *space = NULL;
  for (const char *p = dot; p; p = strchr(p + 1, '.')) {
    const char *q = p + 1;
    while (*q && *q != '.') q++;
    size_t l = (size_t)(q - p - 1);
    const char *w = p + 1;
    if (l >= 2 && (w[0] == 'f' || w[0] == 's' || w[0] == 'u' || w[0] == 'b') && isdigit((unsigned char)w[1]))
      type = w;
    if (l == 2 && w[0] == 'v' && isdigit((unsigned char)w[1])) vec = w[1] - '0';
    if ((l == 6 && !strncmp(w, "global", 6)) || (l == 6 && !strncmp(w, "shared", 6)) ||
        (l == 5 && !strncmp(w, "local", 5)) || (l == 5 && !strncmp(w, "param", 5)) ||
        (l == 5 && !strncmp(w, "const", 5)))
      if (!space) space = w;
  }
#define BASE(s) (base == strlen(s) && !strncmp(o, s, base))
  bool wmma = starts(o, "wmma.") || starts(o, "mma.") || starts(o, "wgmma.");
  if (wmma && (has(o, ".load") || has(o, ".store"))) {
    rs_sbuf_puts(b, has(o, ".load") ? "LD" : "ST");
    if (space) { rs_sbuf_put(b, ".", 1); rs_sbuf_put(b, space, space[5] == 'l' || space[5] == 'd' ? 6 : 5); }
    rs_sbuf_puts(b, ".frag");
    return;
  }
  if (wmma) { rs_sbuf_puts(b, "MMA"); if (type) put_type(b, type[0] == 'f' ? 'f' : 'i', atoi(type + 1)); return; }
  if (BASE("ld") || BASE("st") || BASE("ldu")) {
    rs_sbuf_puts(b, o[0] == 'l' ? "LD" : "ST");
    if (space) { rs_sbuf_put(b, ".", 1); rs_sbuf_put(b, space, space[0] == 'l' || space[0] == 'p' || space[0] == 'c' ? 5 : 6); }
    unsigned bits = type ? (unsigned)atoi(type + 1) : 32;
    unsigned words = (unsigned)vec * bits / 32;
    if (words >= 2) rs_sbuf_printf(b, ".x%u", words);
    else if (bits < 32) rs_sbuf_printf(b, ".%u", bits);
    return;
  }
  struct { const char *from, *to; } tab[] = {
      {"add", "ADD"}, {"sub", "SUB"}, {"mul", "MUL"}, {"mad", "MAD"}, {"fma", "FMA"},
      {"shl", "SHL"}, {"shr", "SHR"}, {"and", "AND"}, {"or", "OR"}, {"xor", "XOR"},
      {"not", "NOT"}, {"setp", "CMP"}, {"selp", "SEL"}, {"min", "MIN"}, {"max", "MAX"},
      {"ex2", "EXP"}, {"lg2", "LOG"}, {"rcp", "RCP"}, {"rsqrt", "RSQ"}, {"sqrt", "SQRT"},
      {"cvt", "CVT"}, {"mov", "MOV"}, {"bra", "BR"}, {"bar", "BAR"}, {"barrier", "BAR"},
      {"ret", "EXIT"}, {"exit", "EXIT"}, {"div", "DIV"}, {"abs", "ABS"}, {"neg", "NEG"}};
  for (size_t k = 0; k < sizeof tab / sizeof *tab; k++)
    if (BASE(tab[k].from)) {
      if (BASE("shr") && type && type[0] == 's') rs_sbuf_puts(b, "SRA");
      else rs_sbuf_puts(b, tab[k].to);
      if (BASE("setp")) { /* CMP.cond.type */
        const char *q = dot + 1, *e = strchr(q, '.');
        if (e) { rs_sbuf_put(b, ".", 1); rs_sbuf_put(b, q, (size_t)(e - q)); }
      }
      if ((BASE("mul") || BASE("mad")) && has(o, ".hi")) rs_sbuf_puts(b, "HI");
      if ((BASE("mul") || BASE("mad")) && has(o, ".wide")) rs_sbuf_puts(b, "W");
      if (BASE("cvt")) { /* CVT.dst.src: the two type fields */
        int nt = 0;
        for (const char *p = dot; p && nt < 2; p = strchr(p + 1, '.')) {
          const char *w = p + 1, *q = w;
          while (*q && *q != '.') q++;
          if ((w[0] == 'f' || w[0] == 's' || w[0] == 'u' || w[0] == 'b') && isdigit((unsigned char)w[1])) {
            rs_sbuf_put(b, ".", 1);
            rs_sbuf_put(b, w, (size_t)(q - w));
            nt++;
          }
        }
        return;
      }
      if (type && !BASE("bra") && !BASE("bar") && !BASE("barrier"))
        put_type(b, type[0] == 'f' ? 'f' : 'i', atoi(type + 1));
      return;
    }
#undef BASE
  rs_sbuf_puts(b, o); /* unknown: already lower case and compact */
}

/* ---- SASS (nvdisasm listings) onto the same vocabulary ----
 * Table rows: SASS base opcode (U-prefixed uniform forms share the row) -> word, and how the
 * modifiers refine it. Anything not in the table is the opcode lower-cased, modifiers kept. */
enum { SX_PLAIN, SX_MEM, SX_CMP, SX_CVT, SX_SHF, SX_MUFU, SX_IMAD };
static const struct {
  const char *sass, *word, *type; /* type: float width suffix, or NULL */
  int how;
} sass_ops[] = {
    {"FFMA", "FMA", ".f32", SX_PLAIN},   {"DFMA", "FMA", ".f64", SX_PLAIN},   {"HFMA2", "FMA", ".f16", SX_PLAIN},
    {"FADD", "ADD", ".f32", SX_PLAIN},   {"DADD", "ADD", ".f64", SX_PLAIN},   {"HADD2", "ADD", ".f16", SX_PLAIN},
    {"FMUL", "MUL", ".f32", SX_PLAIN},   {"DMUL", "MUL", ".f64", SX_PLAIN},   {"HMUL2", "MUL", ".f16", SX_PLAIN},
    {"HMMA", "MMA", ".f16", SX_PLAIN},   {"IMMA", "MMA", NULL, SX_PLAIN},     {"DMMA", "MMA", ".f64", SX_PLAIN},
    {"IADD3", "ADD", NULL, SX_PLAIN},    {"VIADD", "ADD", NULL, SX_PLAIN},    {"IADD", "ADD", NULL, SX_PLAIN},
    {"IMAD", "MAD", NULL, SX_IMAD},      {"IMUL", "MUL", NULL, SX_PLAIN},     {"LEA", "LEA", NULL, SX_PLAIN},
    {"IMNMX", "MNMX", NULL, SX_PLAIN},   {"VIMNMX", "MNMX", NULL, SX_PLAIN},  {"FMNMX", "MNMX", ".f32", SX_PLAIN},
    {"VIADDMNMX", "ADDMNMX", NULL, SX_PLAIN},
    {"SEL", "SEL", NULL, SX_PLAIN},      {"FSEL", "SEL", ".f32", SX_PLAIN},   {"MOV", "MOV", NULL, SX_PLAIN},
    {"S2R", "MOV", NULL, SX_PLAIN},      {"S2UR", "MOV", NULL, SX_PLAIN},     {"CS2R", "MOV", NULL, SX_PLAIN},
    {"LOP3", "LOP3", NULL, SX_PLAIN},    {"SHF", "SHF", NULL, SX_SHF},        {"SHL", "SHL", NULL, SX_PLAIN},
    {"SHR", "SHR", NULL, SX_PLAIN},      {"ISETP", "CMP", NULL, SX_CMP},      {"FSETP", "CMP", ".f32", SX_CMP},
    {"DSETP", "CMP", ".f64", SX_CMP},    {"HSETP2", "CMP", ".f16", SX_CMP},   {"MUFU", "", ".f32", SX_MUFU},
    {"F2F", "CVT", NULL, SX_CVT},        {"I2F", "CVT", NULL, SX_CVT},        {"F2I", "CVT", NULL, SX_CVT},
    {"I2I", "CVT", NULL, SX_CVT},        {"F2FP", "CVT", NULL, SX_CVT},
    {"LDG", "LD.global", NULL, SX_MEM},  {"STG", "ST.global", NULL, SX_MEM},  {"LDS", "LD.shared", NULL, SX_MEM},
    {"STS", "ST.shared", NULL, SX_MEM},  {"LDL", "LD.local", NULL, SX_MEM},   {"STL", "ST.local", NULL, SX_MEM},
    {"LDC", "LD.const", NULL, SX_MEM},   {"LD", "LD", NULL, SX_MEM},          {"ST", "ST", NULL, SX_MEM},
    {"LDSM", "LD.shared.frag", NULL, SX_MEM},
    {"BRA", "BR", NULL, SX_PLAIN},       {"EXIT", "EXIT", NULL, SX_PLAIN},    {"BAR", "BAR", NULL, SX_PLAIN},
};

static bool sass_mod(const char *o, const char *m) { /* does the opcode carry modifier .m? */
  size_t n = strlen(m);
  for (const char *p = strchr(o, '.'); p; p = strchr(p + 1, '.'))
    if (!strncmp(p + 1, m, n) && (p[1 + n] == 0 || p[1 + n] == '.')) return true;
  return false;
}

static const char *sass_row(const char *o, size_t *base, int *row) {
  const char *dot = strchr(o, '.');
  size_t n = dot ? (size_t)(dot - o) : strlen(o);
  for (int pass = 0; pass < 2; pass++) { /* exact, then without a uniform U prefix */
    const char *s = pass ? o + 1 : o;
    size_t l = pass ? n - 1 : n;
    if (pass && (o[0] != 'U' || n < 2)) break;
    for (size_t k = 0; k < sizeof sass_ops / sizeof *sass_ops; k++)
      if (strlen(sass_ops[k].sass) == l && !strncmp(s, sass_ops[k].sass, l)) {
        *base = n;
        *row = (int)k;
        return dot;
      }
  }
  *row = -1;
  *base = n;
  return dot;
}

static char sass_type(const char *o) {
  size_t base;
  int k;
  sass_row(o, &base, &k);
  if (k < 0) return 'i';
  if (sass_ops[k].how == SX_PLAIN && (!strcmp(sass_ops[k].word, "MOV") || !strcmp(sass_ops[k].word, "SEL")))
    return sass_ops[k].type ? 'f' : 'c';
  if (sass_ops[k].how == SX_IMAD && sass_mod(o, "MOV")) return 'c';
  if (sass_ops[k].how == SX_CVT) return o[0] == 'F' && o[1] == '2' && o[2] == 'I' ? 'i' : o[0] == 'I' && o[2] == 'I' ? 'i' : 'f';
  if (sass_ops[k].how == SX_MEM) return 'c';
  return sass_ops[k].type || sass_ops[k].how == SX_MUFU ? 'f' : 'i';
}

static void sass_opcode(const char *o, rs_sbuf *b) {
  size_t base;
  int k;
  const char *dot = sass_row(o, &base, &k);
  if (k < 0) { /* unknown: lower case, as written */
    sb_lower(b, o, strlen(o));
    return;
  }
  const char *ty = sass_ops[k].type;
  switch (sass_ops[k].how) {
  case SX_MEM: { /* LD/ST.space, width .xN (words), .16/.8 sub-word */
    rs_sbuf_puts(b, sass_ops[k].word);
    if (sass_mod(o, "128")) rs_sbuf_puts(b, ".x4");
    else if (sass_mod(o, "64")) rs_sbuf_puts(b, ".x2");
    else if (sass_mod(o, "U16") || sass_mod(o, "S16")) rs_sbuf_puts(b, ".16");
    else if (sass_mod(o, "U8") || sass_mod(o, "S8")) rs_sbuf_puts(b, ".8");
    if (!strcmp(sass_ops[k].sass, "LDSM")) { /* .x4: four 8x8 matrices */
      for (const char *p = dot; p; p = strchr(p + 1, '.'))
        if (p[1] == 'x' && isdigit((unsigned char)p[2])) rs_sbuf_printf(b, ".m%c", p[2]);
      if (sass_mod(o, "T")) rs_sbuf_puts(b, ".trans");
    }
    return;
  }
  case SX_CMP: { /* CMP.cond[.type]: the first modifier is the condition */
    rs_sbuf_puts(b, "CMP");
    if (dot) {
      const char *q = dot + 1, *e = strchr(q, '.');
      size_t l = e ? (size_t)(e - q) : strlen(q);
      rs_sbuf_put(b, ".", 1);
      sb_lower(b, q, l);
    }
    if (ty) rs_sbuf_puts(b, ty);
    if (sass_mod(o, "U32")) rs_sbuf_puts(b, ".u32");
    return;
  }
  case SX_SHF: /* funnel shift: SHF.L = SHL, SHF.R.U32 = SHR, SHF.R.S32 = SRA; .HI reads the pair */
    rs_sbuf_puts(b, sass_mod(o, "L") ? "SHL" : sass_mod(o, "S32") ? "SRA" : "SHR");
    if (sass_mod(o, "HI")) rs_sbuf_puts(b, ".hi");
    return;
  case SX_MUFU: { /* MUFU.EX2 = EXP ... */
    static const char *const m[][2] = {{"EX2", "EXP"}, {"LG2", "LOG"}, {"RCP", "RCP"},  {"RSQ", "RSQ"},
                                       {"SQRT", "SQRT"}, {"SIN", "SIN"}, {"COS", "COS"}, {"TANH", "TANH"}};
    for (size_t i = 0; i < sizeof m / sizeof *m; i++)
      if (sass_mod(o, m[i][0])) {
        rs_sbuf_puts(b, m[i][1]);
        rs_sbuf_puts(b, sass_mod(o, "F16") ? ".f16" : ".f32");
        return;
      }
    sb_lower(b, o, strlen(o));
    return;
  }
  case SX_CVT: { /* CVT.dst.src from the type modifiers (F2F.F16.F32, I2F.U32, F2FP.F16.F32.PACK_AB) */
    rs_sbuf_puts(b, "CVT");
    int nt = 0;
    for (const char *p = dot; p && nt < 2; p = strchr(p + 1, '.')) {
      const char *w = p + 1, *q = w;
      while (*q && *q != '.') q++;
      if ((w[0] == 'F' || w[0] == 'S' || w[0] == 'U' || (w[0] == 'B' && w[1] == 'F')) && isdigit((unsigned char)w[w[0] == 'B' ? 2 : 1])) {
        rs_sbuf_put(b, ".", 1);
        sb_lower(b, w, (size_t)(q - w));
        nt++;
      }
    }
    if (!strcmp(sass_ops[k].sass, "F2FP")) rs_sbuf_puts(b, ".pack");
    return;
  }
  case SX_IMAD: /* IMAD.MOV = MOV, .SHL = SHL, .IADD = ADD, .WIDE = MADW, .HI = MADHI, .X = MADC */
    if (sass_mod(o, "MOV")) rs_sbuf_puts(b, "MOV");
    else if (sass_mod(o, "SHL")) rs_sbuf_puts(b, "SHL");
    else if (sass_mod(o, "IADD")) rs_sbuf_puts(b, "ADD");
    else rs_sbuf_puts(b, sass_mod(o, "WIDE") ? "MADW" : sass_mod(o, "HI") ? "MADHI" : sass_mod(o, "X") ? "MADC" : "MAD");
    return;
  default:
    rs_sbuf_puts(b, sass_ops[k].word);
    if (!strcmp(sass_ops[k].word, "ADD") && sass_mod(o, "X")) rs_sbuf_puts(b, "C"); /* carry in */
    if (!strcmp(sass_ops[k].sass, "HMMA")) { /* HMMA.16816.F32: shape and accumulator type */
      for (const char *p = dot; p; p = strchr(p + 1, '.'))
        if (isdigit((unsigned char)p[1])) {
          const char *q = p + 1;
          while (isdigit((unsigned char)*q)) q++;
          rs_sbuf_put(b, ".", 1);
          rs_sbuf_put(b, p + 1, (size_t)(q - p - 1));
        }
      ty = sass_mod(o, "F32") ? ".f32" : ".f16";
    }
    if (!strcmp(sass_ops[k].word, "LOP3") && sass_mod(o, "LUT")) ty = NULL;
    if (ty) rs_sbuf_puts(b, ty);
    if (sass_mod(o, "U32") && (!strcmp(sass_ops[k].word, "MNMX") || !strcmp(sass_ops[k].word, "ADDMNMX")))
      rs_sbuf_puts(b, ".u32");
    return;
  }
}

/* Kernel parameters in constant bank 0 (sm_90: from 0x210, earlier archs: from 0x160):
 * c[0x0][0x218] -> param+8. Other constants keep their spelling. */
static bool sass_param(const rs_func *f, const char *s, size_t n, rs_sbuf *b) {
  if (n < 10 || strncmp(s, "c[0x0][0x", 9) || s[n - 1] != ']') return false;
  char *end;
  unsigned long off = strtoul(s + 7, &end, 16);
  if ((size_t)(end - s) != n - 1) return false;
  unsigned long base = strstr(f->tgt->name, "sm_9") ? 0x210 : 0x160;
  if (off < base) return false;
  rs_sbuf_printf(b, "param+%lu", off - base);
  return true;
}

/* ---- operands ---- */
static void put_subreg(const ctx *c, rs_sbuf *b, const rs_operand *o) {
  const char *s = c->f->names.strs[o->subreg - 1];
  rs_sbuf_put(b, ".", 1);
  bool first = true;
  while (*s) {
    const char *e = strchr(s, '_');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    if (!first) rs_sbuf_put(b, "_", 1);
    if (n > 3 && !strncmp(s, "sub", 3)) rs_sbuf_put(b, s + 3, n - 3);
    else rs_sbuf_put(b, s, n);
    first = false;
    s += n + (e != NULL);
  }
}

static void put_vreg(ctx *c, rs_sbuf *b, const rs_operand *o, bool def_after_eq) {
  uint32_t v = o->reg;
  if (o->flags & RS_F_UNDEF) rs_sbuf_puts(b, "undef ");
  if ((o->flags & RS_F_EARLY) && c->amd) rs_sbuf_puts(b, "early ");
  if (def_after_eq) rs_sbuf_put(b, "=", 1);
  rs_sbuf_printf(b, "%c%u", c->kind[v], c->num[v]);
  if (o->flags & RS_F_SUBREG) put_subreg(c, b, o);
  if (!c->annotated[v]) {
    const rs_vreg *vr = &c->f->vregs[v];
    const rs_regclass *rc = &c->f->tgt->classes[vr->cls];
    /* int, one full register is the default and is not written */
    if (c->type[v] != 'i' || rc->half || vr->width > 1) {
      rs_sbuf_printf(b, ":%c", c->type[v]);
      if (rc->half) rs_sbuf_puts(b, "h");
      else if (vr->width > 1) rs_sbuf_printf(b, "%u", vr->width);
    }
    c->annotated[v] = true;
  }
  if ((o->flags & RS_F_TIED) && !(o->flags & RS_F_DEF)) rs_sbuf_put(b, "^", 1);
}

/* Physical operands that say nothing about allocation: reserved units (exec, mode) and dead
 * clobbers of registers no class can hold (scc). */
static bool skip_preg(const ctx *c, const rs_operand *o) {
  const rs_target *t = c->f->tgt;
  if (c->f->kind == RS_SRC_SASS) return false; /* RZ, PT, URZ, SRZ, R1: real operands of a listing */
  if (t->unit_flags[o->reg] & RS_UNIT_RESERVED) return true;
  if ((o->flags & RS_F_DEF) && (o->flags & RS_F_DEAD) && (o->flags & RS_F_IMPLICIT)) {
    int fi = rs_target_file_of(t, o->reg);
    if (fi >= 0 && t->files[fi].pressure) return false;
    for (uint32_t s = 0; s < t->nspecials; s++)
      if (rs_lanes_overlap(o->reg, o->lanes, t->specials[s].reg.unit, t->specials[s].reg.lanes))
        return false;
    return true;
  }
  return false;
}

static void put_arg(const ctx *c, rs_sbuf *b, const rs_operand *o) {
  const char *s = c->f->src + o->text_off;
  long off = strtol(s, NULL, 0);
  if (c->args_ok && off >= 0) {
    for (uint32_t k = c->narg; k-- > 0;)
      if ((long)c->arg_off[k] <= off) {
        if ((long)c->arg_off[k] == off) rs_sbuf_printf(b, "arg%u", k);
        else rs_sbuf_printf(b, "arg%u+%ld", k, off - (long)c->arg_off[k]);
        return;
      }
  }
  rs_sbuf_printf(b, "kernarg+%ld", off);
}

static void put_other(const ctx *c, rs_sbuf *b, const rs_operand *o) {
  const char *s = c->f->src + o->text_off;
  size_t n = o->text_len;
  if (c->f->kind == RS_SRC_SASS && sass_param(c->f, s, n, b)) return;
  if (!c->amd) {
    /* NAME_param_K -> argK */
    size_t fl = strlen(c->f->name);
    if (n > fl + 7 && !strncmp(s, c->f->name, fl) && !strncmp(s + fl, "_param_", 7)) {
      rs_sbuf_puts(b, "arg");
      rs_sbuf_put(b, s + fl + 7, n - fl - 7);
      return;
    }
    if (n > 1 && s[0] == '%') s++, n--; /* %tid.x */
  } else if (n == 6 && !strncmp(s, "$noreg", 6)) {
    rs_sbuf_put(b, "_", 1);
    return;
  }
  for (size_t i = 0; i < n; i++) rs_sbuf_put(b, isspace((unsigned char)s[i]) ? "_" : s + i, 1);
}

static void put_imm(const ctx *c, rs_sbuf *b, const rs_operand *o) {
  const char *s = c->f->src + o->text_off;
  size_t n = o->text_len;
  const char *sp = memchr(s, ' ', n); /* MIR "float 1.0" -> "1.0" */
  if (sp) n -= (size_t)(sp + 1 - s), s = sp + 1;
  rs_sbuf_put(b, s, n);
}

static void put_inst(ctx *c, rs_sbuf *b, uint32_t i) {
  const rs_func *f = c->f;
  const rs_inst *in = &f->insts[i];
  uint32_t n = in->nops;
  uint32_t first = in->first_op;
  if (in->flags & RS_I_PREDICATED) { /* the guard is the last operand */
    const rs_operand *g = &f->ops[first + n - 1];
    rs_sbuf_put(b, "@", 1);
    if (g->text_off > 0 && f->src[g->text_off - 1] == '!') rs_sbuf_put(b, "!", 1);
    if (g->kind == RS_OP_VREG) put_vreg(c, b, g, false);
    else { /* a fixed guard (SASS: a predicate a P2R mask reads stays physical) */
      char buf[64];
      rs_sbuf_put(b, "$", 1);
      rs_sbuf_puts(b, f->tgt->format_preg(f->tgt, (rs_preg){g->reg, g->lanes}, buf, sizeof buf));
    }
    rs_sbuf_put(b, " ", 1);
    n--;
  }
  uint32_t ndef = 0;
  while (ndef < n && (f->ops[first + ndef].flags & RS_F_DEF) && !(f->ops[first + ndef].flags & RS_F_IMPLICIT))
    ndef++;
  bool sp = false;
  for (uint32_t k = 0; k < ndef; k++) {
    const rs_operand *o = &f->ops[first + k];
    if (o->kind == RS_OP_PREG && skip_preg(c, o)) continue;
    if (sp) rs_sbuf_put(b, " ", 1);
    sp = true;
    if (o->kind == RS_OP_VREG) put_vreg(c, b, o, false);
    else if (o->kind == RS_OP_PREG) {
      char buf[64];
      rs_sbuf_put(b, "$", 1);
      rs_sbuf_puts(b, f->tgt->format_preg(f->tgt, (rs_preg){o->reg, o->lanes}, buf, sizeof buf));
    } else put_other(c, b, o);
  }
  if (sp) rs_sbuf_puts(b, " = ");
  if (c->amd) amd_opcode(c, i, b);
  else if (f->kind == RS_SRC_SASS) sass_opcode(opname(c, i), b);
  else ptx_opcode(c, i, b);
  bool karg = c->amd && is_karg_load(c, i);
  bool off_done = false;
  /* AMD: zero immediates after the last explicit non-immediate operand are flags (offset 0,
   * cpol, clamp, omod, cbsz/abid/blgp): they carry no def/use fact */
  uint32_t last = ndef;
  const char *on = opname(c, i);
  bool flag_tail = starts(on, "GLOBAL_") || starts(on, "DS_") || starts(on, "BUFFER_") ||
                   starts(on, "FLAT_") || starts(on, "SCRATCH_") || starts(on, "S_LOAD_") ||
                   starts(on, "S_BUFFER_") || starts(on, "V_MFMA") || starts(on, "V_PK_") ||
                   (has(on, "_CO_") && has(on, "_e64")) || starts(on, "V_ADDC") ||
                   starts(on, "V_SUBB");
  if (!(c->amd && flag_tail)) last = n; /* strip nothing unless the trailing immediates are known flags */
  else
    for (uint32_t k = ndef; k < n; k++) {
      const rs_operand *o = &f->ops[first + k];
      if (!(o->flags & RS_F_IMPLICIT) && o->kind != RS_OP_IMM) last = k;
    }
  for (uint32_t k = ndef; k < n; k++) {
    const rs_operand *o = &f->ops[first + k];
    if (o->kind == RS_OP_PREG && skip_preg(c, o)) continue;
    if (c->amd && k > last && o->kind == RS_OP_IMM && !(karg && !off_done) && o->text_len == 1 &&
        f->src[o->text_off] == '0')
      continue;
    rs_sbuf_put(b, " ", 1);
    switch (o->kind) {
    case RS_OP_VREG: put_vreg(c, b, o, (o->flags & RS_F_DEF) != 0); break;
    case RS_OP_PREG: {
      char buf[64];
      if (o->flags & RS_F_DEF) rs_sbuf_put(b, "=", 1);
      if (c->karg.lanes && preg_eq(c->karg, o)) rs_sbuf_puts(b, "kernarg");
      else {
        rs_sbuf_put(b, "$", 1);
        rs_sbuf_puts(b, f->tgt->format_preg(f->tgt, (rs_preg){o->reg, o->lanes}, buf, sizeof buf));
      }
      break;
    }
    case RS_OP_IMM:
      if (karg && !off_done) { put_arg(c, b, o); off_done = true; }
      else put_imm(c, b, o);
      break;
    case RS_OP_BLOCK: rs_sbuf_printf(b, "bb%u", o->reg); break;
    default: put_other(c, b, o); break;
    }
  }
  rs_sbuf_put(b, "\n", 1);
}

/* ---- raw sizes ---- */
static const char *line_start(const char *src, uint32_t line) {
  const char *p = src;
  for (uint32_t l = 1; l < line && *p; p++)
    if (*p == '\n') l++;
  return p;
}

static void raw_sizes(const rs_func *f, rs_norm_stats *st) {
  if (!f->src) return;
  const char *src = f->src, *s = line_start(src, f->line ? f->line : 1), *e;
  if (f->kind == RS_SRC_MIR) {
    /* the function's YAML document: from its "---" to its "..." */
    while (s > src && !(s[0] == '-' && s[1] == '-' && s[2] == '-' && (s == src || s[-1] == '\n'))) s--;
    e = strstr(s + 3, "\n...");
    e = e ? e + 4 : s + strlen(s);
    rs_norm_count(s, (size_t)(e - s), &st->raw_lines, &st->raw_tokens);
    st->raw_ir_lines = st->raw_lines;
    st->raw_ir_tokens = st->raw_tokens;
    if (!strncmp(src, "--- |", 5)) {
      const char *ie = strstr(src, "\n...");
      if (ie && ie < s) {
        uint32_t l, t;
        rs_norm_count(src, (size_t)(ie + 4 - src), &l, &t);
        st->raw_ir_lines += l;
        st->raw_ir_tokens += t;
      }
    }
    return;
  }
  if (f->kind == RS_SRC_SASS) { /* the function's section of the listing, to the next one */
    e = strstr(s + 1, "\n//--------------------- .");
    e = e ? e + 1 : s + strlen(s);
    rs_norm_count(s, (size_t)(e - s), &st->raw_lines, &st->raw_tokens);
    st->raw_ir_lines = st->raw_lines;
    st->raw_ir_tokens = st->raw_tokens;
    return;
  }
  /* PTX: the .entry text to its matching closing brace */
  const char *p = strchr(s, '{');
  int depth = 0;
  e = s + strlen(s);
  for (; p && *p; p++) {
    if (*p == '{') depth++;
    else if (*p == '}' && --depth == 0) { e = p + 1; break; }
  }
  rs_norm_count(s, (size_t)(e - s), &st->raw_lines, &st->raw_tokens);
  st->raw_ir_lines = st->raw_lines;
  st->raw_ir_tokens = st->raw_tokens;
}

/* ---- maps ---- */
/* Merge sort of name indices by one name array (stable, no global comparator state). */
static void sort_idx(uint32_t *ix, uint32_t *tmp, uint32_t n, char **key) {
  if (n < 2) return;
  uint32_t h = n / 2;
  sort_idx(ix, tmp, h, key);
  sort_idx(ix + h, tmp, n - h, key);
  uint32_t a = 0, b = h, k = 0;
  while (a < h || b < n) {
    if (b >= n || (a < h && strcmp(key[ix[a]], key[ix[b]]) <= 0)) tmp[k++] = ix[a++];
    else tmp[k++] = ix[b++];
  }
  memcpy(ix, tmp, n * sizeof *ix);
}

static const char *lookup(uint32_t *ix, uint32_t n, char **key, char **val, const char *name) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t m = (lo + hi) / 2;
    int r = strcmp(key[ix[m]], name);
    if (!r) return val[ix[m]];
    if (r < 0) lo = m + 1;
    else hi = m;
  }
  return NULL;
}

rs_norm *rs_normalize(const rs_func *f, rs_err *e) {
  if (!f || !f->tgt) {
    rs_errf(e, f ? f->path : NULL, 0, "normalize: function without a target");
    return NULL;
  }
  ctx c = {0};
  c.f = f;
  c.amd = f->tgt->vendor == RS_AMD;
  size_t nv = f->nvregs ? f->nvregs : 1;
  c.name_of = rs_xmalloc(nv * sizeof *c.name_of);
  c.kind = rs_xcalloc(nv, 1);
  c.num = rs_xcalloc(nv, sizeof *c.num);
  c.type = rs_xcalloc(nv, 1);
  c.annotated = rs_xcalloc(nv, sizeof *c.annotated);
  c.def_inst = rs_xmalloc(nv * sizeof *c.def_inst);
  for (uint32_t v = 0; v < f->nvregs; v++) c.name_of[v] = -1, c.def_inst[v] = -1;

  rs_norm *n = rs_xcalloc(1, sizeof *n);
  /* dense names per kind, in order of first appearance */
  uint32_t cnt[128] = {0};
  uint32_t capn = 0;
  for (uint32_t i = 0; i < f->ninsts; i++) {
    const rs_inst *in = &f->insts[i];
    for (uint32_t k = 0; k < in->nops; k++) {
      const rs_operand *o = &f->ops[in->first_op + k];
      if (o->kind != RS_OP_VREG) continue;
      uint32_t v = o->reg;
      if ((o->flags & RS_F_DEF) && c.def_inst[v] < 0) c.def_inst[v] = (int32_t)i;
      if (c.name_of[v] >= 0) continue;
      if (f->vregs[v].cls < 0) {
        rs_errf(e, f->path, in->line, "normalize: %s has no register class", f->vregs[v].name);
        goto fail;
      }
      char kd = vreg_kind(&c, v);
      c.kind[v] = kd;
      c.num[v] = cnt[(unsigned char)kd]++;
      c.name_of[v] = (int32_t)n->nnames;
      char buf[32];
      snprintf(buf, sizeof buf, "%c%u", kd, c.num[v]);
      rs_grow((void **)&n->norm, sizeof *n->norm, &capn, n->nnames + 1);
      n->orig = rs_xrealloc(n->orig, capn * sizeof *n->orig);
      n->fvreg = rs_xrealloc(n->fvreg, capn * sizeof *n->fvreg);
      n->norm[n->nnames] = rs_xstrndup(buf, strlen(buf));
      n->orig[n->nnames] = rs_xstrndup(f->vregs[v].name, strlen(f->vregs[v].name));
      n->fvreg[n->nnames] = v;
      n->nnames++;
    }
  }
  compute_types(&c);
  if (c.amd) {
    find_karg(&c);
    find_args(&c);
  }

  rs_sbuf b = {0};
  rs_sbuf_printf(&b, "fn %s %s", f->name, f->tgt->name);
  if (c.karg.lanes) {
    char buf[64];
    rs_sbuf_printf(&b, " kernarg=$%s", f->tgt->format_preg(f->tgt, c.karg, buf, sizeof buf));
  }
  rs_sbuf_put(&b, "\n", 1);
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    const rs_block *bl = &f->blocks[bi];
    rs_sbuf_printf(&b, "bb%u:", bi);
    if (bl->nsuccs) {
      rs_sbuf_puts(&b, " ->");
      for (uint32_t s = 0; s < bl->nsuccs; s++) rs_sbuf_printf(&b, " bb%u", bl->succs[s]);
    }
    rs_sbuf_put(&b, "\n", 1);
    for (uint32_t i = bl->first_inst; i < bl->first_inst + bl->ninsts; i++) put_inst(&c, &b, i);
  }
  if (!b.s) rs_sbuf_put(&b, "", 0);
  n->text = b.s;
  n->len = b.n;

  n->by_norm = rs_xmalloc((n->nnames ? n->nnames : 1) * sizeof *n->by_norm);
  n->by_orig = rs_xmalloc((n->nnames ? n->nnames : 1) * sizeof *n->by_orig);
  uint32_t *tmp = rs_xmalloc((n->nnames ? n->nnames : 1) * sizeof *tmp);
  for (uint32_t k = 0; k < n->nnames; k++) n->by_norm[k] = n->by_orig[k] = k;
  sort_idx(n->by_norm, tmp, n->nnames, n->norm);
  sort_idx(n->by_orig, tmp, n->nnames, n->orig);
  free(tmp);

  raw_sizes(f, &n->st);
  rs_norm_count(n->text, n->len, &n->st.norm_lines, &n->st.norm_tokens);
  goto done;
fail:
  rs_norm_free(n);
  n = NULL;
done:
  free(c.name_of);
  free(c.kind);
  free(c.num);
  free(c.type);
  free(c.annotated);
  free(c.def_inst);
  free(c.arg_off);
  return n;
}

const char *rs_norm_text(const rs_norm *n) { return n ? n->text : NULL; }

const char *rs_norm_original(const rs_norm *n, const char *name) {
  return n && name ? lookup(n->by_norm, n->nnames, n->norm, n->orig, name) : NULL;
}

const char *rs_norm_normalized(const rs_norm *n, const char *name) {
  return n && name ? lookup(n->by_orig, n->nnames, n->orig, n->norm, name) : NULL;
}

static void json_str(rs_sbuf *b, const char *s) {
  rs_sbuf_put(b, "\"", 1);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') rs_sbuf_put(b, "\\", 1);
    if ((unsigned char)*s < 0x20) rs_sbuf_printf(b, "\\u%04x", (unsigned char)*s);
    else rs_sbuf_put(b, s, 1);
  }
  rs_sbuf_put(b, "\"", 1);
}

char *rs_norm_map_json(const rs_norm *n) {
  rs_sbuf b = {0};
  rs_sbuf_put(&b, "{", 1);
  for (uint32_t k = 0; n && k < n->nnames; k++) {
    if (k) rs_sbuf_put(&b, ",", 1);
    json_str(&b, n->norm[k]);
    rs_sbuf_put(&b, ":", 1);
    json_str(&b, n->orig[k]);
  }
  rs_sbuf_put(&b, "}", 1);
  return b.s;
}

void rs_norm_free(rs_norm *n) {
  if (!n) return;
  for (uint32_t k = 0; k < n->nnames; k++) {
    free(n->norm[k]);
    free(n->orig[k]);
  }
  free(n->norm);
  free(n->orig);
  free(n->fvreg);
  free(n->by_norm);
  free(n->by_orig);
  free(n->text);
  free(n);
}
