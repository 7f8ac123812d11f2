/* mir_parse.c - LLVM 14 and 16 AMDGPU MIR, exactly as llc-14/llc-16 print it, into the shared IR.
 *
 * The YAML around the body is read line by line for the few keys allocation needs (name,
 * registers, liveins, machineFunctionInfo's reserved registers); the body is parsed fully:
 * every operand of every instruction is classified or the file is rejected with file:line. */
#include "front/front.h"
#include "ir/ir.h"
#include "mir/vop3p.h"
#include "mir/exec.h"
#include "mir/carry.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Virtual register ids index an array: bound them so a hostile file cannot ask for gigabytes. */
#define RS_MAX_VREG_ID (1u << 20)
#define RS_MAX_BLOCK_NUM (1u << 20)

typedef struct {
  const char *s, *e; /* current text span */
} span;

typedef struct {
  rs_module *m;
  rs_func *f;
  rs_err *e;
  const char *text;
  uint32_t line;
  /* block number -> block index (+1; 0 = not seen) */
  uint32_t *bbmap;
  uint32_t nbbmap, capbbmap;
  /* (operand index, source line) pairs of block operands to resolve after the function is read */
  uint32_t *fix;
  uint32_t nfix, capfix;
  bool in_bundle;
  bool in_wwm; /* inside machineFunctionInfo's wwmReservedRegs list */
} P;

/* strstr limited to a span (spans are not NUL-terminated at the line end). */
static const char *sp_find(span a, const char *w) {
  size_t n = strlen(w);
  for (const char *c = a.s; c + n <= a.e; c++)
    if (*c == *w && !memcmp(c, w, n)) return c;
  return NULL;
}

static bool sp_eq(span a, const char *w) {
  size_t n = strlen(w);
  return (size_t)(a.e - a.s) == n && !memcmp(a.s, w, n);
}
static bool sp_starts(span a, const char *w) {
  size_t n = strlen(w);
  return (size_t)(a.e - a.s) >= n && !memcmp(a.s, w, n);
}
static span sp_trim(span a) {
  while (a.s < a.e && (*a.s == ' ' || *a.s == '\t' || *a.s == '\r')) a.s++;
  while (a.e > a.s && (a.e[-1] == ' ' || a.e[-1] == '\t' || a.e[-1] == '\r')) a.e--;
  return a;
}
static int perr(P *p, const char *fmt, span what) {
  int n = (int)(what.e - what.s);
  if (n > 80) n = 80;
  char buf[160];
  snprintf(buf, sizeof buf, "%.*s", n, what.s);
  return rs_errf(p->e, p->m->path, p->line, fmt, buf);
}

/* Split at top-level commas (outside (), [], {}, <>, quotes). Returns count, pieces in out. */
static int split_top(span a, span *out, int max, char sep) {
  int n = 0, depth = 0;
  bool q = false;
  const char *start = a.s;
  for (const char *c = a.s; c < a.e; c++) {
    if (*c == '"' || *c == '\'') q = !q;
    if (q) continue;
    if (*c == '(' || *c == '[' || *c == '{' || *c == '<') depth++;
    else if (*c == ')' || *c == ']' || *c == '}' || *c == '>') depth--;
    else if (*c == sep && depth == 0) {
      if (n >= max) return -1;
      out[n++] = sp_trim((span){start, c});
      start = c + 1;
    }
    if (depth < 0) return -2;
  }
  if (depth != 0 || q) return -2;
  if (n >= max) return -1;
  out[n++] = sp_trim((span){start, a.e});
  return n;
}

static int parse_u32(const char **c, const char *e, uint32_t *out) {
  uint64_t v = 0;
  const char *s = *c;
  if (s >= e || !isdigit((unsigned char)*s)) return -1;
  while (s < e && isdigit((unsigned char)*s)) {
    v = v * 10 + (uint64_t)(*s++ - '0');
    if (v > 0xFFFFFFF) return -1;
  }
  *c = s;
  *out = (uint32_t)v;
  return 0;
}

/* Subregister index name -> lane mask ("sub1", "sub0_sub1", "lo16", "sub2_hi16"? ...). */
static int subreg_lanes(span s, rs_lanes *out) {
  /* A sequence of components in increasing lane order: `subK` (lane K), `subK_lo16`/`subK_hi16`
   * (its 16-bit halves) and bare `lo16`/`hi16` (lane 0's halves). Named indices are runs of
   * whole lanes (`sub2_sub3`) or one half (`sub1_hi16`); LLVM 22 names the index of a tuple it
   * has no named one for by its 16-bit halves, lane after lane (gfx1200's vreg_288 COPY of
   * `%x.lo16_hi16_sub1_lo16_sub1_hi16_..._sub8_hi16`, lanes 0-8). The union must be contiguous:
   * anything else is not an index of this grammar, refused. */
  const char *c = s.s;
  rs_lanes m = 0;
  int top = -1; /* highest lane bit taken so far */
  int lane = -1; /* the subK just read, waiting for a half */
  while (c <= s.e) {
    span tok = {c, c};
    while (tok.e < s.e && *tok.e != '_') tok.e++;
    int lo = -1, hi = -1;
    if (tok.s == tok.e) return -1;
    if (sp_starts(tok, "sub")) {
      const char *d = tok.s + 3;
      uint32_t k;
      if (parse_u32(&d, tok.e, &k) || d != tok.e || k >= 32) return -1;
      if (lane >= 0) lo = 2 * lane, hi = 2 * lane + 1; /* the previous subK was a whole lane */
      lane = (int)k;
    } else if (sp_eq(tok, "lo16") || sp_eq(tok, "hi16")) {
      int l = lane >= 0 ? lane : 0;
      lo = hi = 2 * l + (tok.s[0] == 'h');
      lane = -1;
    } else {
      return -1;
    }
    if (lo >= 0) {
      if (lo <= top) return -1;
      for (int b = lo; b <= hi; b++) m |= (rs_lanes)1 << b;
      top = hi;
    }
    c = tok.e + 1;
  }
  if (lane >= 0) { /* a trailing whole lane */
    if (2 * lane <= top) return -1;
    m |= (rs_lanes)3 << (2 * lane);
  }
  if (!m) return -1;
  rs_lanes low = m & (~m + 1); /* contiguous: m + its lowest bit is a power of two */
  rs_lanes t = m + low;
  if (t & (t - 1)) return -1;
  *out = m;
  return 0;
}

static rs_vreg *vreg_slot(P *p, uint32_t id) {
  rs_func *f = p->f;
  if (id >= f->nvregs) {
    rs_grow((void **)&f->vregs, sizeof *f->vregs, &f->capvregs, id + 1);
    for (uint32_t i = f->nvregs; i <= id; i++) {
      char nm[16];
      snprintf(nm, sizeof nm, "%%%u", i);
      f->vregs[i] = (rs_vreg){rs_xstrndup(nm, strlen(nm)), -1, 0, 0, 0, -1};
    }
    f->nvregs = id + 1;
  }
  return &f->vregs[id];
}

static int set_class(P *p, uint32_t id, span cls) {
  int c = rs_target_class(p->f->tgt, cls.s, (size_t)(cls.e - cls.s));
  if (c < 0) { /* archs: name the architectures that do have it */
    char owners[160], fmt[256];
    if (!rs_target_class_owners(p->f->tgt, cls.s, (size_t)(cls.e - cls.s), owners, sizeof owners))
      return perr(p, "unknown register class '%s'", cls);
    snprintf(fmt, sizeof fmt, "register class '%%s' is not a %s class (it is one of %s)", p->f->tgt->name, owners);
    return perr(p, fmt, cls);
  }
  rs_vreg *v = vreg_slot(p, id);
  if (v->cls >= 0 && v->cls != c) return perr(p, "register class '%s' contradicts the registers table", cls);
  const rs_regclass *rc = &p->f->tgt->classes[c];
  v->cls = c;
  v->width = rc->width;
  v->full = rc->half == 1 ? 1 : rc->half == 2 ? 2 : rs_lanes_full(rc->width);
  if (!v->line) v->line = p->line;
  return 0;
}

static int parse_preg(P *p, span s, rs_preg *out) {
  if (p->f->tgt->parse_preg(p->f->tgt, s.s, (size_t)(s.e - s.s), out))
    return perr(p, "unknown physical register '%s'", s);
  return 0;
}

static const char *const op_flag_words[] = {"implicit", "implicit-def", "def", "dead", "killed",
                                            "undef", "internal", "early-clobber", "debug-use",
                                            "renamable"};
static const uint16_t op_flag_bits[] = {RS_F_IMPLICIT, RS_F_IMPLICIT | RS_F_DEF, RS_F_DEF,
                                        RS_F_DEAD, RS_F_KILL, RS_F_UNDEF, 0, RS_F_EARLY | RS_F_DEF,
                                        0, RS_F_RENAMABLE};

/* One operand (already split); is_def for the operands left of '='. */
static int parse_operand(P *p, span s, bool is_def) {
  rs_func *f = p->f;
  rs_operand op = {0};
  op.kind = RS_OP_OTHER;
  if (is_def) op.flags |= RS_F_DEF;
  /* flag words */
  for (;;) {
    span w = {s.s, s.s};
    while (w.e < s.e && *w.e != ' ') w.e++;
    if (w.e == s.e) break;
    bool hit = false;
    for (size_t i = 0; i < sizeof op_flag_words / sizeof *op_flag_words; i++)
      if (sp_eq(w, op_flag_words[i])) {
        op.flags |= op_flag_bits[i];
        hit = true;
      }
    if (!hit) break;
    s = sp_trim((span){w.e, s.e});
  }
  for (size_t i = 0; i < sizeof op_flag_words / sizeof *op_flag_words; i++)
    if (sp_eq(s, op_flag_words[i])) return perr(p, "operand flag '%s' without a register", s);
  op.text_off = (uint32_t)(s.s - p->text);
  op.text_len = (uint32_t)(s.e - s.s);
  if (s.s == s.e) return perr(p, "empty operand%s", s);
  bool flagged = (op.flags & ~RS_F_DEF) != 0;
  if (flagged && s.s[0] != '$' && s.s[0] != '%') return perr(p, "register flags on a non-register operand '%s'", s);
  const char *c = s.s;
  if (*c == '$') {
    span nm = {c + 1, c + 1};
    while (nm.e < s.e && (isalnum((unsigned char)*nm.e) || *nm.e == '_')) nm.e++;
    if (nm.e != s.e) {
      /* only a type suffix "(s32)" may follow a physical register */
      if (*nm.e != '(' || s.e[-1] != ')') return perr(p, "malformed physical register operand '%s'", s);
    }
    if (sp_eq(nm, "noreg")) {
      op.kind = RS_OP_OTHER;
    } else {
      rs_preg r;
      if (parse_preg(p, nm, &r)) return -1;
      op.kind = RS_OP_PREG;
      op.reg = r.unit;
      op.lanes = r.lanes;
    }
  } else if (*c == '%' && s.e - c > 1 && isdigit((unsigned char)c[1])) {
    c++;
    uint32_t id;
    if (parse_u32(&c, s.e, &id) || id >= RS_MAX_VREG_ID)
      return perr(p, "malformed virtual register '%s'", s);
    vreg_slot(p, id);
    span sub = {0, 0}, cls = {0, 0};
    if (c < s.e && *c == '.') {
      sub.s = ++c;
      while (c < s.e && (isalnum((unsigned char)*c) || *c == '_')) c++;
      sub.e = c;
    }
    if (c < s.e && *c == ':') {
      cls.s = ++c;
      while (c < s.e && (isalnum((unsigned char)*c) || *c == '_')) c++;
      cls.e = c;
      if (cls.s == cls.e) return perr(p, "missing register class in '%s'", s);
    }
    while (c < s.e && *c == '(') { /* (s32), (p4), (<2 x s32>), (tied-def 3) */
      const char *q = c;
      int depth = 0;
      for (; q < s.e; q++) {
        if (*q == '(') depth++;
        else if (*q == ')' && --depth == 0) break;
      }
      if (q >= s.e) return perr(p, "unbalanced parenthesis in '%s'", s);
      if (!strncmp(c, "(tied-def ", 10)) op.flags |= RS_F_TIED;
      c = q + 1;
    }
    if (c != s.e) return perr(p, "malformed virtual register operand '%s'", s);
    if (cls.s && set_class(p, id, cls)) return -1;
    rs_vreg *v = &f->vregs[id];
    if (v->cls < 0) return perr(p, "virtual register '%s' has no register class", s);
    op.kind = RS_OP_VREG;
    op.reg = id;
    op.lanes = v->full;
    if (sub.s) {
      rs_lanes l;
      if (sub.s == sub.e || subreg_lanes(sub, &l)) return perr(p, "unknown subregister index in '%s'", s);
      if ((l & v->full) != l) return perr(p, "subregister index out of range for the class in '%s'", s);
      op.lanes = l;
      op.flags |= RS_F_SUBREG;
      op.subreg = (uint16_t)(rs_intern_get(&f->names, sub.s, (size_t)(sub.e - sub.s)) + 1);
    }
  } else if (sp_starts(s, "%bb.")) {
    const char *d = s.s + 4;
    uint32_t num;
    if (parse_u32(&d, s.e, &num)) return perr(p, "malformed block reference '%s'", s);
    /* "%bb.3.name" and "%bb.3(0x80000000)" are not operands here; anything else is junk */
    if (d != s.e && *d != '.') return perr(p, "malformed block reference '%s'", s);
    op.kind = RS_OP_BLOCK;
    op.reg = num;
    RS_PUSH(p->fix, p->nfix, p->capfix, f->nops);
    RS_PUSH(p->fix, p->nfix, p->capfix, p->line);
  } else if (*c == '-' || isdigit((unsigned char)*c)) {
    const char *d = c + (*c == '-');
    if (d >= s.e || !isdigit((unsigned char)*d)) return perr(p, "malformed immediate '%s'", s);
    while (d < s.e && isalnum((unsigned char)*d)) d++; /* 0x1F and plain decimals */
    if (d != s.e) return perr(p, "malformed immediate '%s'", s);
    op.kind = RS_OP_IMM;
  } else if (sp_starts(s, "i1 ") || sp_starts(s, "i8 ") || sp_starts(s, "i16 ") ||
             sp_starts(s, "i32 ") || sp_starts(s, "i64 ") || sp_starts(s, "half ") ||
             sp_starts(s, "bfloat ") || sp_starts(s, "float ") || sp_starts(s, "double ")) {
    op.kind = RS_OP_IMM;
  } else if ((*c == '%' || *c == '@' || *c == '&' || *c == '!') && (s.e - c < 2 || !(isalnum((unsigned char)c[1]) || c[1] == '_' || c[1] == '.' || c[1] == '"' || c[1] == '-'))) {
    return perr(p, "malformed operand '%s'", s);
  } else if (*c == '%' || *c == '@' || *c == '&' || *c == '!' || *c == '<' || *c == '_' ||
             isalpha((unsigned char)*c)) {
    /* symbols, stack slots, metadata, regmasks, target-flags(...), intrinsic(...), ... */
    span w = {c, c};
    while (w.e < s.e && *w.e != '(' && *w.e != ' ') w.e++;
    if (sp_starts(w, "csr_") || sp_eq(w, "CustomRegMask")) {
      /* A call's register mask: clobbers are not modelled, so reject rather than guess. */
      return perr(p, "register-mask operand '%s' (calls are not supported)", s);
    }
    for (const char *q = c; q < s.e; q++)
      if ((unsigned char)*q < 0x20) return perr(p, "control character in operand '%s'", s);
    op.kind = RS_OP_OTHER;
  } else {
    return perr(p, "malformed operand '%s'", s);
  }
  RS_PUSH(f->ops, f->nops, f->capops, op);
  return 0;
}

/* MachineInstr flags as MIRPrinter writes them before the opcode; the last seven are new since
 * llc-16 (llc-22 prints `samesign V_CMP_GT_U32_e64`: read as the opcode, it hid the compare) */
static const char *const inst_flag_words[] = {"frame-setup", "frame-destroy", "nnan", "ninf",
                                              "nsz", "arcp", "contract", "afn", "reassoc", "nuw",
                                              "nsw", "exact", "nofpexcept", "nomerge", "unpredictable",
                                              "noconvergent", "nneg", "disjoint", "nusw", "samesign",
                                              "inbounds"};

static bool is_barrier_opcode(span op) {
  return sp_eq(op, "S_BRANCH") || sp_starts(op, "S_ENDPGM") || sp_starts(op, "S_SETPC_B64") ||
         sp_starts(op, "SI_RETURN") || sp_eq(op, "S_CODE_END");
}

static int parse_inst(P *p, span s) {
  rs_func *f = p->f;
  /* drop memory operands and trailing annotations; both begin at a top-level " :: " */
  {
    int depth = 0;
    bool q = false;
    for (const char *c = s.s; c + 1 < s.e; c++) {
      if (*c == '"') q = !q;
      if (q) continue;
      if (*c == '(' || *c == '[' || *c == '{' || *c == '<') depth++;
      else if (*c == ')' || *c == ']' || *c == '}' || *c == '>') depth--;
      else if (depth == 0 && c[0] == ':' && c[1] == ':' && c > s.s && c[-1] == ' ') {
        s.e = c;
        break;
      }
    }
    s = sp_trim(s);
  }
  rs_inst in = {0};
  in.first_op = f->nops;
  in.line = p->line;
  if (p->in_bundle) in.flags |= RS_I_BUNDLED;
  /* find a top-level " = " separating defs */
  span defs = {NULL, NULL}, rest = s;
  {
    int depth = 0;
    bool q = false;
    for (const char *c = s.s; c < s.e; c++) {
      if (*c == '"' || *c == '\'') q = !q;
      if (q) continue;
      if (*c == '(' || *c == '[' || *c == '{' || *c == '<') depth++;
      else if (*c == ')' || *c == ']' || *c == '}' || *c == '>') depth--;
      else if (depth == 0 && *c == '=' && c > s.s && c[-1] == ' ' && c + 1 < s.e && c[1] == ' ') {
        defs = sp_trim((span){s.s, c});
        rest = sp_trim((span){c + 1, s.e});
        break;
      }
    }
  }
  span pieces[1024];
  if (defs.s) {
    int n = split_top(defs, pieces, 1024, ',');
    if (n < 0) return perr(p, "malformed instruction '%s'", s);
    for (int i = 0; i < n; i++)
      if (parse_operand(p, pieces[i], true)) return -1;
  }
  /* instruction flags, then the opcode */
  span opc;
  for (;;) {
    opc = (span){rest.s, rest.s};
    while (opc.e < rest.e && *opc.e != ' ' && *opc.e != ',') opc.e++;
    bool flag = false;
    for (size_t i = 0; i < sizeof inst_flag_words / sizeof *inst_flag_words; i++)
      if (sp_eq(opc, inst_flag_words[i])) flag = true;
    if (!flag) break;
    rest = sp_trim((span){opc.e, rest.e});
  }
  if (opc.s == opc.e) return perr(p, "missing opcode in '%s'", s);
  for (const char *c = opc.s; c < opc.e; c++)
    if (!isalnum((unsigned char)*c) && *c != '_') return perr(p, "malformed opcode '%s'", opc);
  in.opcode = rs_intern_get(&f->names, opc.s, (size_t)(opc.e - opc.s));
  if (sp_eq(opc, "COPY")) in.flags |= RS_I_COPY;
  if (is_barrier_opcode(opc)) in.flags |= RS_I_BARRIER;
  span ops = sp_trim((span){opc.e, rest.e});
  if (ops.s < ops.e) {
    int n = split_top(ops, pieces, 1024, ',');
    if (n < 0) return perr(p, "malformed operand list in '%s'", s);
    /* a call: name its callee (a library function left unresolved, a device assert) */
    if (sp_starts(opc, "SI_CALL") || sp_starts(opc, "SI_TCRETURN"))
      for (int i = 0; i < n; i++)
        if (pieces[i].s < pieces[i].e && *pieces[i].s == '@')
          return perr(p, "call to %s (calls are not supported)", pieces[i]);
    for (int i = 0; i < n; i++) {
      span o = pieces[i];
      /* INLINEASM operand-kind immediates carry a MIRPrinter comment (1769482, then regdef:VGPR_32) */
      for (const char *c = o.s; c + 1 < o.e; c++)
        if (*c == '"') break;
        else if (c[0] == '/' && c[1] == '*') {
          o = sp_trim((span){o.s, c});
          break;
        }
      /* trailing annotations are not operands */
      if (sp_starts(o, "debug-location ") || sp_starts(o, "debug-instr-number ") ||
          sp_starts(o, "pre-instr-symbol ") || sp_starts(o, "post-instr-symbol ") ||
          sp_starts(o, "heap-alloc-marker ") || sp_starts(o, "pcsections "))
        continue;
      if (parse_operand(p, o, false)) return -1;
    }
  }
  in.nops = f->nops - in.first_op;
  for (uint32_t k = 0; k < in.nops; k++)
    if (f->ops[in.first_op + k].kind == RS_OP_BLOCK) in.flags |= RS_I_BRANCH;
  rs_vop3p_read_lanes(f, &in, rs_func_opcode(f, &in)); /* packed sources: lanes op_sel reads */
  rs_carry_mark(f, &in, rs_func_opcode(f, &in));       /* 64-bit sources whose high half carries up */
  rs_exec_mark(f, &in, rs_func_opcode(f, &in));        /* its active-lane role (analysis/simt.c) */
  RS_PUSH(f->insts, f->ninsts, f->capinsts, in);
  f->blocks[f->nblocks - 1].ninsts++;
  return 0;
}

/* "bb.3.Flow (%ir-block.19, align 4):" */
static int parse_block_header(P *p, span s) {
  const char *c = s.s + 3;
  uint32_t num;
  if (parse_u32(&c, s.e, &num) || num >= RS_MAX_BLOCK_NUM) return perr(p, "malformed block header '%s'", s);
  if (c < s.e && *c != ':' && *c != ' ' && *c != '.') return perr(p, "malformed block header '%s'", s);
  span name = {s.s, c};
  while (name.e < s.e && *name.e != ' ' && *name.e != ':') name.e++;
  for (const char *q = name.s; q < name.e; q++)
    if (!isalnum((unsigned char)*q) && *q != '.' && *q != '_' && *q != '-') return perr(p, "malformed block header '%s'", s);
  if (s.e[-1] != ':') return perr(p, "malformed block header '%s'", s);
  uint32_t bi = rs_func_add_block(p->f, name.s, (size_t)(name.e - name.s), num, p->line);
  if (num >= p->nbbmap) {
    rs_grow((void **)&p->bbmap, sizeof *p->bbmap, &p->capbbmap, num + 1);
    memset(p->bbmap + p->nbbmap, 0, sizeof *p->bbmap * (num + 1 - p->nbbmap));
    p->nbbmap = num + 1;
  }
  if (p->bbmap[num]) return perr(p, "duplicate block '%s'", s);
  p->bbmap[num] = bi + 1;
  return 0;
}

static int parse_successors(P *p, span s) {
  span pieces[256];
  rs_block *b = &p->f->blocks[p->f->nblocks - 1];
  b->has_succs = true;
  if (s.s == s.e) return 0;
  int n = split_top(s, pieces, 256, ',');
  if (n < 0) return perr(p, "malformed successors '%s'", s);
  for (int i = 0; i < n; i++) {
    const char *c = pieces[i].s;
    uint32_t num;
    if (!sp_starts(pieces[i], "%bb.")) return perr(p, "malformed successor '%s'", pieces[i]);
    c += 4;
    if (parse_u32(&c, pieces[i].e, &num)) return perr(p, "malformed successor '%s'", pieces[i]);
    /* store the number now; mapped to an index when the function ends */
    RS_PUSH(b->succs, b->nsuccs, b->capsuccs, num);
  }
  return 0;
}

static int parse_livein_list(P *p, span s, rs_livein **arr, uint32_t *n, uint32_t *cap) {
  span pieces[1024];
  if (s.s == s.e) return 0;
  int k = split_top(s, pieces, 1024, ',');
  if (k < 0) return perr(p, "malformed liveins '%s'", s);
  for (int i = 0; i < k; i++) {
    span r = pieces[i];
    if (!sp_starts(r, "$")) return perr(p, "malformed live-in '%s'", r);
    span nm = {r.s + 1, r.s + 1};
    while (nm.e < r.e && *nm.e != ':') nm.e++;
    rs_preg pr;
    if (parse_preg(p, nm, &pr)) return -1;
    if (nm.e < r.e) { /* lane mask */
      char *end;
      char buf[32];
      size_t l = (size_t)(r.e - nm.e - 1);
      if (l == 0 || l >= sizeof buf) return perr(p, "malformed lane mask in '%s'", r);
      memcpy(buf, nm.e + 1, l);
      buf[l] = 0;
      unsigned long long mask = strtoull(buf, &end, 16);
      if (*end || !mask || (mask & ~pr.lanes)) return perr(p, "malformed lane mask in '%s'", r);
      pr.lanes = (rs_lanes)mask;
    }
    rs_livein li = {pr, -1};
    RS_PUSH(*arr, *n, *cap, li);
  }
  return 0;
}

/* "key"="a,b" or "key"="a" inside [s, e) into lo (and hi, 0 when absent); false if absent. */
static bool attr_pair(const char *s, const char *e, const char *key, uint32_t *lo, uint32_t *hi) {
  const char *k = sp_find((span){s, e}, key);
  if (!k) return false;
  const char *c = k + strlen(key);
  *lo = *hi = 0;
  if (parse_u32(&c, e, lo)) return false;
  if (c < e && *c == ',') {
    c++;
    if (parse_u32(&c, e, hi)) *hi = 0;
  }
  return true;
}

/* Launch bounds of function f from the IR module LLVM embeds in the MIR ("--- |"): its define
 * line names an attribute group "#N", whose line holds "amdgpu-flat-work-group-size" and
 * "amdgpu-waves-per-eu" (what getReservedRegs derives the function's budget from). */
static void read_launch(P *p, rs_func *f) {
  const char *text = p->text, *ir_end = NULL;
  if (strncmp(text, "--- |", 5) || !(ir_end = strstr(text, "\n...\n"))) return;
  size_t n = strlen(f->name);
  for (const char *d = strstr(text, "define "); d && d < ir_end; d = strstr(d + 7, "define ")) {
    const char *eol = memchr(d, '\n', (size_t)(ir_end - d));
    if (!eol) eol = ir_end;
    const char *at = sp_find((span){d, eol}, "@");
    if (!at || (size_t)(eol - at) < n + 2 || memcmp(at + 1, f->name, n) || at[1 + n] != '(') continue;
    f->has_launch = true;
    const char *close = eol;
    while (close > at && *close != ')') close--; /* the group follows the parameter list */
    const char *g = sp_find((span){close, eol}, " #");
    if (!g) return;
    g += 2;
    uint32_t grp;
    if (parse_u32(&g, eol, &grp)) return;
    char key[32]; /* the module is a YAML block scalar: its lines are indented */
    snprintf(key, sizeof key, "attributes #%u = {", grp);
    const char *a = strstr(text, key);
    while (a && a < ir_end && a[-1] != ' ' && a[-1] != '\n') a = strstr(a + 1, key);
    if (!a || a > ir_end) return;
    const char *ae = memchr(a, '\n', (size_t)(ir_end - a));
    if (!ae) ae = ir_end;
    attr_pair(a, ae, "\"amdgpu-flat-work-group-size\"=\"", &f->launch.wg_min, &f->launch.wg_max);
    attr_pair(a, ae, "\"amdgpu-waves-per-eu\"=\"", &f->launch.wpe_min, &f->launch.wpe_max);
    f->launch.agpr_alloc = attr_pair(a, ae, "\"amdgpu-agpr-alloc\"=\"", &f->launch.agpr_min, &f->launch.agpr_max);
    return;
  }
}

static int finish_func(P *p) {
  rs_func *f = p->f;
  if (!f) return 0;
  if (f->nblocks == 0) return rs_errf(p->e, p->m->path, p->line, "function '%s' has no body", f->name);
  for (uint32_t i = 0; i + 1 < p->nfix; i += 2) { /* (operand, line) pairs */
    rs_operand *op = &f->ops[p->fix[i]];
    if (op->reg >= p->nbbmap || !p->bbmap[op->reg])
      return rs_errf(p->e, p->m->path, p->fix[i + 1], "function '%s': branch to undefined block bb.%u", f->name, op->reg);
    op->reg = p->bbmap[op->reg] - 1;
  }
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    rs_block *b = &f->blocks[bi];
    for (uint32_t s = 0; s < b->nsuccs; s++) {
      uint32_t num = b->succs[s];
      if (num >= p->nbbmap || !p->bbmap[num])
        return rs_errf(p->e, p->m->path, b->line, "successor bb.%u of %s is not defined", num, b->name);
      b->succs[s] = p->bbmap[num] - 1;
    }
  }
  rs_func_finish_cfg(f);
  f->allocated = true;
  for (uint32_t i = 0; i < f->nops; i++)
    if (f->ops[i].kind == RS_OP_VREG) f->allocated = false;
  read_launch(p, f);
  /* LLVM's usesAGPRs: a register of an AGPR-only class, or a physical AGPR */
  int afile = -1;
  for (uint32_t k = 0; k < f->tgt->nfiles; k++)
    if (!strcmp(f->tgt->files[k].name, "agpr")) afile = (int)k;
  for (uint32_t v = 0; v < f->nvregs && afile >= 0 && !f->launch.uses_agpr; v++)
    if (f->vregs[v].cls >= 0 && f->tgt->classes[f->vregs[v].cls].files == 1u << afile) f->launch.uses_agpr = true;
  for (uint32_t i = 0; i < f->nops && afile >= 0 && !f->launch.uses_agpr; i++)
    if (f->ops[i].kind == RS_OP_PREG && rs_target_file_of(f->tgt, f->ops[i].reg) == afile) f->launch.uses_agpr = true;
  p->nfix = 0;
  p->nbbmap = 0;
  p->f = NULL;
  return 0;
}

/* "- { id: 3, class: sreg_64, preferred-register: '$vcc' }" */
static int parse_register_entry(P *p, span s) {
  const char *c = sp_find(s, "id:");
  if (!c) return perr(p, "malformed registers entry '%s'", s);
  c += 3;
  while (*c == ' ') c++;
  uint32_t id;
  if (parse_u32(&c, s.e, &id) || id >= RS_MAX_VREG_ID) return perr(p, "malformed registers entry '%s'", s);
  const char *k = sp_find((span){c, s.e}, "class:");
  if (!k) return perr(p, "registers entry without class '%s'", s);
  k += 6;
  while (*k == ' ') k++;
  span cls = {k, k};
  while (cls.e < s.e && (isalnum((unsigned char)*cls.e) || *cls.e == '_')) cls.e++;
  if (sp_eq(cls, "_")) return perr(p, "virtual register without a register class '%s'", s);
  if (set_class(p, id, cls)) return -1;
  const char *pr = sp_find((span){k, s.e}, "preferred-register: '");
  if (pr) {
    pr += 21;
    if (*pr == '$') {
      span nm = {pr + 1, pr + 1};
      while (nm.e < s.e && *nm.e != '\'') nm.e++;
      rs_preg r;
      if (parse_preg(p, nm, &r)) return -1;
      p->f->vregs[id].hint_preg_unit = (int32_t)r.unit;
    }
  }
  return 0;
}

/* archs: the target from the IR's "target-cpu" (gfx90a when absent); GFX10+ are wave32 unless
 * the features say +wavefrontsize64. NULL (cpu[] holds the name) for an unknown architecture. */
static const char *guess_target(const char *text, char *cpu, size_t ncpu) {
  const char *c = strstr(text, "\"target-cpu\"=\"");
  if (!c) return "gfx90a";
  c += 14;
  size_t n = 0;
  while (c[n] && c[n] != '"' && c[n] != '\n' && n < 40) n++;
  snprintf(cpu, ncpu, "%.*s", (int)n, c);
  /* an AMD target of that name; its wave64 variant (NAMEw64) where the features ask for it */
  const rs_target *t = rs_target_by_name(cpu);
  if (!t || !(t->reads & RS_READS_MIR) || strstr(cpu, "w64") || strncmp(cpu, "gfx", 3)) return NULL;
  if (strstr(text, "+wavefrontsize64")) {
    char w64[64];
    snprintf(w64, sizeof w64, "%sw64", cpu);
    const rs_target *t64 = rs_target_by_name(w64);
    if (t64) return t64->name;
  }
  return t->name;
}

/* "gfx908, gfx90a, ..." : the AMD architectures MIR may name (wave64 variants left out). */
static void amd_names(char *buf, size_t n) {
  size_t nt, k = 0;
  const rs_target *const *all = rs_target_all(&nt);
  buf[0] = 0;
  for (size_t i = 0; i < nt; i++)
    if ((all[i]->reads & RS_READS_MIR) && !strstr(all[i]->name, "w64")) {
      int w = snprintf(buf + k, n > k ? n - k : 0, "%s%s", k ? ", " : "", all[i]->name);
      if (w > 0 && k + (size_t)w < n) k += (size_t)w;
    }
}

int rs_mir_parse(rs_module *m, rs_err *e) {
  P p = {0};
  p.m = m;
  p.e = e;
  p.text = m->text;
  if (!m->tgt) {
    char cpu[48] = "";
    const char *t = guess_target(m->text, cpu, sizeof cpu);
    if (!t) {
      char names[256];
      amd_names(names, sizeof names);
      return rs_errf(e, m->path, rs_line_of(m->text, (size_t)(strstr(m->text, "\"target-cpu\"") - m->text)),
                     "unsupported target-cpu '%s' (MIR of %s is supported)", cpu, names);
    }
    m->tgt = rs_target_by_name(t);
  }
  enum { TOP, SKIP_IR, REGS, LIVEINS, MFI, BODY } st = TOP;
  const char *c = m->text, *end = m->text + m->len;
  int rc = 0;
  bool saw_doc = false;
  while (c < end && rc == 0) {
    const char *nl = memchr(c, '\n', (size_t)(end - c));
    span ln = {c, nl ? nl : end};
    c = nl ? nl + 1 : end;
    p.line++;
    span t = sp_trim(ln);
    size_t indent = (size_t)(t.s - ln.s);
    if (st == SKIP_IR) {
      if (sp_eq(t, "...") && indent == 0) st = TOP;
      else if (sp_starts(ln, "---")) st = TOP; /* fall through to the document start below */
      else continue;
      if (sp_eq(t, "...")) continue;
    }
    if (indent == 0 && t.s < t.e && st != SKIP_IR) {
      /* a top-level line ends any nested section */
      if (sp_starts(t, "---")) {
        if ((rc = finish_func(&p))) break;
        saw_doc = true;
        span restl = sp_trim((span){t.s + 3, t.e});
        st = sp_eq(restl, "|") ? SKIP_IR : TOP;
        continue;
      }
      if (sp_eq(t, "...")) {
        if ((rc = finish_func(&p))) break;
        st = TOP;
        continue;
      }
      st = TOP;
      if (sp_starts(t, "name:")) {
        if ((rc = finish_func(&p))) break;
        span nm = sp_trim((span){t.s + 5, t.e});
        if (nm.s < nm.e && (*nm.s == '\'' || *nm.s == '"')) nm.s++, nm.e--;
        if (nm.s >= nm.e) { rc = perr(&p, "empty function name%s", t); break; }
        p.f = rs_func_new(m, nm.s, (size_t)(nm.e - nm.s), p.line);
      } else if (!p.f) {
        if (!saw_doc) { rc = rs_errf(e, m->path, p.line, "not LLVM MIR: expected '---'"); break; }
        continue; /* other keys before name: */
      } else if (sp_starts(t, "registers:")) {
        st = REGS;
      } else if (sp_starts(t, "liveins:")) {
        st = LIVEINS;
      } else if (sp_starts(t, "machineFunctionInfo:")) {
        st = MFI;
      } else if (sp_starts(t, "body:")) {
        st = BODY;
      }
      continue;
    }
    if (t.s == t.e) continue;
    if (!p.f) continue;
    switch (st) {
    case REGS:
      if (sp_starts(t, "- {")) rc = parse_register_entry(&p, t);
      break;
    case LIVEINS:
      if (sp_starts(t, "- {")) {
        const char *r = sp_find(t, "reg: '$");
        if (!r) { rc = perr(&p, "malformed liveins entry '%s'", t); break; }
        span nm = {r + 7, r + 7};
        while (nm.e < t.e && *nm.e != '\'') nm.e++;
        rs_preg pr;
        if ((rc = parse_preg(&p, nm, &pr))) break;
        rs_livein li = {pr, -1};
        const char *v = sp_find(t, "virtual-reg: '%");
        if (v) {
          const char *d = v + 15;
          uint32_t id;
          if (!parse_u32(&d, t.e, &id)) li.vreg = (int32_t)id;
        }
        RS_PUSH(p.f->liveins, p.f->nliveins, p.f->capliveins, li);
      }
      break;
    case MFI:
      /* wwmReservedRegs: a list, one "- '$vgprN'" per line (llc-22: the SGPR spill lanes of
       * the whole-wave round); reserved for the whole function, and counted where LLVM moves
       * them after allocation (rs_wwm_count) */
      if (p.in_wwm && sp_starts(t, "- '$")) {
        span nm = {t.s + 4, t.s + 4};
        while (nm.e < t.e && *nm.e != '\'') nm.e++;
        rs_preg pr;
        if ((rc = parse_preg(&p, nm, &pr))) break;
        RS_PUSH(p.f->reserved, p.f->nreserved, p.f->capreserved, pr);
        RS_PUSH(p.f->wwm, p.f->nwwm, p.f->capwwm, pr);
        break;
      }
      p.in_wwm = sp_starts(t, "wwmReservedRegs:");
      /* sgprForEXECCopy: llc-22 reserves it (measured: "isRenamable set on reserved register" on
       * $sgpr100 of a gfx942 kernel); llc-16 prints it but lets $sgpr105 of gfx1100 be used */
      if (sp_starts(t, "scratchRSrcReg:") || sp_starts(t, "stackPtrOffsetReg:") ||
          (sp_starts(t, "sgprForEXECCopy:") && m->tgt->llvm >= 22)) {
        const char *q = memchr(t.s, '$', (size_t)(t.e - t.s));
        if (!q) break;
        span nm = {q + 1, q + 1};
        while (nm.e < t.e && *nm.e != '\'') nm.e++;
        rs_preg pr;
        if ((rc = parse_preg(&p, nm, &pr))) break;
        if (rs_target_file_of(m->tgt, pr.unit) == 0) /* real SGPRs only; placeholders are specials */
          RS_PUSH(p.f->reserved, p.f->nreserved, p.f->capreserved, pr);
      }
      break;
    case BODY:
      if (*t.s == ';') break; /* comment line */
      if (sp_starts(t, "bb.") && indent <= 2) {
        rc = parse_block_header(&p, t);
      } else if (p.f->nblocks == 0) {
        rc = perr(&p, "instruction outside a block: '%s'", t);
      } else if (sp_starts(t, "successors:")) {
        rc = parse_successors(&p, sp_trim((span){t.s + 11, t.e}));
      } else if (sp_starts(t, "liveins:")) {
        rs_block *b = &p.f->blocks[p.f->nblocks - 1];
        b->has_liveins = true;
        rc = parse_livein_list(&p, sp_trim((span){t.s + 8, t.e}), &b->liveins, &b->nliveins,
                               &b->capliveins);
      } else if (sp_eq(t, "}")) {
        if (!p.in_bundle) rc = perr(&p, "unmatched '%s'", t);
        p.in_bundle = false;
      } else {
        /* strip a trailing comment: a ';' outside quotes (INLINEASM's asm string holds the ones
         * of the asm text: `INLINEASM &"; ockl ballot hoisting hack $0"`, rocPRIM scans) */
        const char *sc = NULL;
        for (const char *c = t.s, *q = NULL; c < t.e && !sc; c++)
          if (*c == '"' && (!q || c[-1] != '\\')) q = q ? NULL : c;
          else if (*c == ';' && !q) sc = c;
        if (sc) t = sp_trim((span){t.s, sc});
        bool opens = t.e > t.s && t.e[-1] == '{';
        if (opens) t = sp_trim((span){t.s, t.e - 1});
        rc = parse_inst(&p, t);
        if (opens && !rc) p.f->insts[p.f->ninsts - 1].flags |= RS_I_BUNDLED; /* its head too */
        if (opens) p.in_bundle = true;
      }
      break;
    default:
      break;
    }
  }
  if (rc == 0) {
    if (st == SKIP_IR) rc = rs_errf(e, m->path, p.line, "unterminated IR module section");
    else if (p.in_bundle) rc = rs_errf(e, m->path, p.line, "unterminated instruction bundle");
    else rc = finish_func(&p);
  }
  free(p.bbmap);
  free(p.fix);
  return rc;
}
