/* test_ptx.c - the PTX parser and the NVIDIA targets.
 * Fixtures: parser accounting against an independent line-level count, classes, resolved
 * branches.  A hand-written snippet: def/use/flags of each construct.  Bad input: clean errors
 * naming file:line. */
#include "front/front.h"
#include "check.h"
#include "ir/ir.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- NVIDIA targets ---- */

static void test_targets(void) {
  const rs_target *t89 = rs_target_by_name("sm_89"), *t90 = rs_target_by_name("sm_90");
  CHECK(t89 == &rs_target_sm89 && t90 == &rs_target_sm90);
  if (!t89 || !t90) return;
  rs_preg r;
  char buf[32];
  CHECK(t90->parse_preg(t90, "R12", 3, &r) == 0 && r.unit == 12 && r.lanes == 3);
  CHECK(!strcmp(t90->format_preg(t90, r, buf, sizeof buf), "R12"));
  CHECK(t90->parse_preg(t90, "R[4:5]", 6, &r) == 0 && r.unit == 4 && r.lanes == 0xF);
  CHECK(!strcmp(t90->format_preg(t90, r, buf, sizeof buf), "R[4:5]"));
  CHECK(t90->parse_preg(t90, "P3", 2, &r) == 0);
  CHECK(!strcmp(t90->format_preg(t90, r, buf, sizeof buf), "P3"));
  CHECK(t90->parse_preg(t90, "RZ", 2, &r) == 0 && (t90->unit_flags[r.unit] & RS_UNIT_RESERVED));
  CHECK(t90->parse_preg(t90, "PT", 2, &r) == 0 && (t90->unit_flags[r.unit] & RS_UNIT_RESERVED));
  CHECK(t90->parse_preg(t90, "R254", 4, &r) == 0 && (t90->unit_flags[r.unit] & RS_UNIT_TRACKED));
  static const char *const bad[] = {"R[5:4]", "R[4:5", "R256", "R99999999999", "P8", "Rx", "R",
                                    "R[4:5]x", "R[:5]", "R[4:]", "r4", "R-1", "", "P", "R[4;5]"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    CHECKF(t90->parse_preg(t90, bad[i], strlen(bad[i]), &r) == -1, "'%s' parsed", bad[i]);
  /* class facts the parser relies on */
  int b64 = rs_target_class(t90, "b64", 3), pred = rs_target_class(t90, "pred", 4);
  CHECK(b64 >= 0 && pred >= 0 && rs_target_class(t90, "b16", 3) >= 0 &&
        rs_target_class(t90, "b32", 3) >= 0);
  if (b64 >= 0) {
    CHECK(t90->parse_preg(t90, "R[4:5]", 6, &r) == 0 && rs_target_member(t90, b64, r) == RS_MEMBER_OK);
    CHECK(t90->parse_preg(t90, "R[5:6]", 6, &r) == 0 && rs_target_member(t90, b64, r) == RS_MEMBER_ALIGN);
  }
  if (pred >= 0) {
    CHECK(t90->parse_preg(t90, "P6", 2, &r) == 0 && rs_target_member(t90, pred, r) == RS_MEMBER_OK);
    CHECK(t90->parse_preg(t90, "PT", 2, &r) == 0 && rs_target_member(t90, pred, r) == RS_MEMBER_RESERVED);
  }
  /* warps per SM: 32 regs -> 64 (sm_90), 48 (sm_89 cap); 255 -> 8; 128 -> 16; 0 -> cap */
  static const struct { unsigned regs, w89, w90; } occ[] = {
      {0, 48, 64}, {32, 48, 64}, {40, 48, 48}, {64, 32, 32}, {128, 16, 16}, {255, 8, 8}};
  for (size_t i = 0; i < sizeof occ / sizeof *occ; i++) {
    unsigned used[2] = {occ[i].regs, 0};
    CHECKF(t89->occupancy(t89, used) == occ[i].w89, "sm_89 %u regs", occ[i].regs);
    CHECKF(t90->occupancy(t90, used) == occ[i].w90, "sm_90 %u regs", occ[i].regs);
  }
}

/* ---- independent accounting on nvcc's layout ---- */

typedef struct {
  char name[32];
  long n; /* %name<n>, or -1 for a single register named exactly name */
} decl;

/* Statements ending in ';' inside bodies ("{" / "}" alone at column 0), not directives; and the
 * %name<digits> tokens that are declared registers. */
static void count_ptx(const char *text, unsigned *insts, unsigned *regops) {
  decl d[64];
  int nd = 0;
  bool body = false;
  *insts = *regops = 0;
  for (const char *l = text; *l;) {
    const char *e = strchr(l, '\n');
    size_t len = e ? (size_t)(e - l) : strlen(l);
    char line[4096];
    if (len >= sizeof line) len = sizeof line - 1;
    memcpy(line, l, len);
    line[len] = 0;
    l += len + (e ? 1 : 0);
    char *c = strstr(line, "//");
    if (c) *c = 0;
    if (!strcmp(line, "{")) { body = true; nd = 0; continue; }
    if (!strcmp(line, "}")) { body = false; continue; }
    if (!body) continue;
    char *s = line;
    while (*s == ' ' || *s == '\t' || *s == '{') s++;
    if (!strncmp(s, ".reg", 4)) {
      char *pc = strchr(s, '%');
      if (pc && nd < 64) {
        int k = 0;
        pc++;
        while (k < 31 && ((*pc >= 'a' && *pc <= 'z') || (*pc >= 'A' && *pc <= 'Z'))) d[nd].name[k++] = *pc++;
        d[nd].name[k] = 0;
        d[nd].n = *pc == '<' ? strtol(pc + 1, NULL, 10) : -1;
        nd++;
      }
      continue;
    }
    if (*s == '.' || !*s) continue;
    for (char *q = s; *q; q++) *insts += *q == ';';
    for (char *q = strchr(s, '%'); q; q = strchr(q + 1, '%')) {
      char nm[32];
      int k = 0;
      const char *r = q + 1;
      while (k < 31 && *r >= 'a' && *r <= 'z') nm[k++] = *r++;
      nm[k] = 0;
      if (!k || *r < '0' || *r > '9') continue;
      long idx = strtol(r, NULL, 10);
      for (int i = 0; i < nd; i++)
        if (!strcmp(d[i].name, nm) && d[i].n >= 0 && idx < d[i].n) {
          (*regops)++;
          break;
        }
    }
  }
}

static bool ends_block_ok(const rs_func *f, const rs_block *b) {
  if (!b->ninsts) return false;
  const char *op = rs_func_opcode(f, &f->insts[b->first_inst + b->ninsts - 1]);
  return !strncmp(op, "ret", 3) || !strncmp(op, "exit", 4);
}

static void test_fixture(const char *path) {
  rs_err e = {{0}};
  rs_module *m = rs_module_load(path, NULL, &e);
  CHECKF(m != NULL, "%s: %s", path, e.msg);
  if (!m) return;
  unsigned want_insts, want_regops, insts = 0, regops = 0;
  count_ptx(m->text, &want_insts, &want_regops);
  CHECKF(m->nfuncs >= 1, "%s", path);
  for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
    const rs_func *f = m->funcs[fi];
    CHECK(f->kind == RS_SRC_PTX && f->tgt == m->tgt && f->tgt && f->tgt->vendor == RS_NV);
    insts += f->ninsts;
    /* (b) every used vreg has a class, every unused one none */
    bool *used = calloc(f->nvregs + 1, sizeof *used);
    unsigned bad_cls = 0, bad_lanes = 0;
    for (uint32_t o = 0; o < f->nops; o++) {
      const rs_operand *op = &f->ops[o];
      if (op->kind != RS_OP_VREG) continue;
      regops++;
      used[op->reg] = true;
      if (f->vregs[op->reg].cls < 0) bad_cls++;
      else if (op->lanes != f->vregs[op->reg].full) bad_lanes++;
    }
    for (uint32_t v = 0; v < f->nvregs; v++)
      if (!used[v] && f->vregs[v].cls >= 0) bad_cls++;
    free(used);
    CHECKF(bad_cls == 0, "%s: %u vregs with a wrong class", path, bad_cls);
    CHECKF(bad_lanes == 0, "%s: %u operands with partial lanes", path, bad_lanes);
    /* (c) branches resolved, every block but the last continues somewhere */
    uint32_t nsucc = 0, npred = 0, covered = 0;
    for (uint32_t bi = 0; bi < f->nblocks; bi++) {
      const rs_block *b = &f->blocks[bi];
      nsucc += b->nsuccs;
      npred += b->npreds;
      covered += b->ninsts;
      if (bi + 1 < f->nblocks && !ends_block_ok(f, b))
        CHECKF(b->nsuccs >= 1, "%s: block %s has no successor", path, b->name);
      for (uint32_t k = 0; k < b->ninsts; k++) {
        const rs_inst *in = &f->insts[b->first_inst + k];
        for (uint32_t o = 0; o < in->nops; o++) {
          const rs_operand *op = &f->ops[in->first_op + o];
          if (op->kind != RS_OP_BLOCK) continue;
          bool found = false;
          for (uint32_t s = 0; s < b->nsuccs; s++) found |= b->succs[s] == op->reg;
          CHECKF(op->reg < f->nblocks && found && !strncmp(f->blocks[op->reg].name,
                 m->text + op->text_off, op->text_len), "%s:%u: branch target", path, in->line);
        }
      }
    }
    CHECK(nsucc == npred && covered == f->ninsts && f->nblocks >= 1);
  }
  CHECKF(insts == want_insts, "%s: %u instructions parsed, %u counted", path, insts, want_insts);
  CHECKF(regops == want_regops, "%s: %u register operands parsed, %u counted", path, regops,
         want_regops);
  if (!getenv("RS_TEST_VERBOSE")) goto done; /* quiet on success */
  printf("  %s: %u functions, %u instructions, %u register operands", path, m->nfuncs, insts, regops);
  for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
    unsigned used = 0;
    for (uint32_t v = 0; v < m->funcs[fi]->nvregs; v++) used += m->funcs[fi]->vregs[v].cls >= 0;
    printf(", %s: %u vregs (%u used), %u blocks", m->funcs[fi]->name, m->funcs[fi]->nvregs, used,
           m->funcs[fi]->nblocks);
  }
  printf("\n");
done:
  rs_module_free(m);
}

/* ---- a snippet with one of each construct ---- */

static const char snippet[] =
    ".version 9.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".extern .func (.param .b32 func_retval0) ext_f(.param .b32 a);\n"
    ".global .align 4 .b8 tbl[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n"
    "\n"
    ".visible .func (.param .b32 retv) helper(.param .b32 a)\n"
    "{\n"
    "\t.reg .b32 %r<3>;\n"
    "\tld.param.b32 %r1, [a];\n"
    "\tst.param.b32 [retv], %r1;\n"
    "\tret;\n"
    "}\n"
    "\n"
    ".visible .entry k(.param .u64 k_param_0)\n"
    ".maxntid 128, 1, 1\n"
    "{\n"
    "\t.reg .pred %p<4>;\n"
    "\t.reg .b16 %rs<3>;\n"
    "\t.reg .f32 %f<6>;\n"
    "\t.reg .b32 %r<10>;\n"
    "\t.reg .b64 %rd<4>;\n"
    "\t.local .align 4 .b8 __local_depot0[16];\n"
    "\t/* a block comment\n"
    "\t   over two lines */\n"
    "\tld.param.u64 %rd1, [k_param_0];\n"
    "\tmov.u32 %r1, %tid.x;\n"
    "\tsetp.lt.s32 %p1|%p2, %r1, 32;\n"
    "\t@%p1 bra $L__BB0_2;\n"
    "\tmov.b64 {%r2, %r3}, %rd1;\n"
    "\tmov.b64 %rd2, {%r2, %r3};\n"
    "\tshfl.sync.bfly.b32 %r4|%p3, %r1, 1, 31, -1;\n"
    "\tld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+-16];\n"
    "\tst.shared.v2.f32 [%r3], {%f1, %f2};\n"
    "\t@!%p2 add.s32 %r5, %r1, 1;\n"
    "\tmov.u32 %r6, %r5;\n"
    "\tatom.global.add.u32 %r7, [%rd1], 1;\n"
    "\tred.global.add.u32 [%rd1+4], %r7;\n"
    "\t{\n"
    "\t.reg .b32 %r1;\n"
    "\t.param .b32 param0;\n"
    "\t.param .b32 retval0;\n"
    "\tmov.u32 %r1, 7;\n"
    "\tst.param.b32 [param0], %r1;\n"
    "\tcall.uni (retval0), helper, (param0);\n"
    "\tld.param.b32 %r8, [retval0];\n"
    "\t}\n"
    "\t{.reg .f16 low,high;\n"
    "  mov.b32 {low,high},%r6;\n"
    "  cvt.f32.f16 %f5, low;}\n"
    "\t{.reg .f16 low,high;\n"
    "  mov.b32 {low, high}, %r6;}\n"
    "\tadd.s32 %r9, %r1, %r8;\n"
    "$L__BB0_2:\n"
    "\tbar.sync 0;\n"
    "\tret;\n"
    "}\n";

static uint32_t line_of(const char *text, const char *needle) {
  const char *p = strstr(text, needle);
  return p ? rs_line_of(text, (size_t)(p - text)) : 0;
}

static const rs_inst *inst_at(const rs_func *f, uint32_t line) {
  for (uint32_t i = 0; i < f->ninsts; i++)
    if (f->insts[i].line == line) return &f->insts[i];
  return NULL;
}

/* "=%r1 %r2 ..." style signature of an instruction: '=' def, '?' conditional def, '#' imm,
 * '~' other, '>' block; registers by vreg name. */
static void sig(const rs_func *f, const rs_inst *in, char *out, size_t cap) {
  size_t n = 0;
  out[0] = 0;
  for (uint32_t o = 0; o < in->nops && n + 40 < cap; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    const char *pre = op->kind == RS_OP_IMM ? "#" : op->kind == RS_OP_OTHER ? "~"
                      : op->kind == RS_OP_BLOCK ? ">" : (op->flags & RS_F_COND) ? "?"
                      : (op->flags & RS_F_DEF) ? "=" : "";
    const char *nm = op->kind == RS_OP_VREG ? f->vregs[op->reg].name
                     : op->kind == RS_OP_BLOCK ? f->blocks[op->reg].name : "";
    n += (size_t)snprintf(out + n, cap - n, "%s%s%s", o ? " " : "", pre, nm);
  }
}

static void test_snippet(void) {
  rs_err e = {{0}};
  char *text = strdup(snippet);
  rs_module *m = rs_module_parse("snippet.ptx", text, strlen(text), RS_SRC_PTX, NULL, &e);
  CHECKF(m != NULL, "%s", e.msg);
  if (!m) return;
  CHECK(m->tgt == &rs_target_sm90 && m->nfuncs == 2);
  if (m->nfuncs != 2) goto out;
  CHECK(!strcmp(m->funcs[0]->name, "helper") && !strcmp(m->funcs[1]->name, "k"));
  const rs_func *f = m->funcs[1];
  static const struct { const char *at, *sig; uint32_t flags; } want[] = {
      {"ld.param.u64 %rd1", "=%rd1 ~", 0},
      {"mov.u32 %r1, %tid", "=%r1 ~", 0},
      {"setp.lt", "=%p1 =%p2 %r1 #", 0},
      {"@%p1 bra", ">$L__BB0_2 %p1", RS_I_BRANCH | RS_I_PREDICATED},
      {"mov.b64 {", "=%r2 =%r3 %rd1", 0},
      {"mov.b64 %rd2", "=%rd2 %r2 %r3", 0},
      {"shfl.sync", "=%r4 =%p3 %r1 # # #", 0},
      {"ld.global.v4", "=%f1 =%f2 =%f3 =%f4 %rd1 #", 0},
      {"st.shared", "%r3 %f1 %f2", 0},
      {"@!%p2 add", "?%r5 %r1 # %p2", RS_I_PREDICATED},
      {"mov.u32 %r6", "=%r6 %r5", RS_I_COPY},
      {"atom.global", "=%r7 %rd1 #", 0},
      {"red.global", "%rd1 # %r7", 0},
      {"mov.u32 %r1, 7", "=%r1.1 #", 0},
      {"st.param.b32 [param0]", "~ %r1.1", 0},
      {"call.uni", "~ ~ ~", 0},
      {"mov.b32 {low,high}", "=low =high %r6", 0},
      {"cvt.f32.f16 %f5", "=%f5 low", 0},
      {"mov.b32 {low, high}", "=low.1 =high.1 %r6", 0},
      {"add.s32 %r9", "=%r9 %r1 %r8", 0},
      {"bar.sync", "#", 0},
      {"ret;\n}\n", "", RS_I_BARRIER},
  };
  const char *k_body = strstr(m->text, ".entry k");
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const char *at = strstr(k_body, want[i].at);
    const rs_inst *in = at ? inst_at(f, rs_line_of(m->text, (size_t)(at - m->text))) : NULL;
    CHECKF(in != NULL, "no instruction at '%s'", want[i].at);
    if (!in) continue;
    char s[512];
    sig(f, in, s, sizeof s);
    CHECKF(!strcmp(s, want[i].sig), "'%s': got '%s', want '%s'", want[i].at, s, want[i].sig);
    CHECKF(in->flags == want[i].flags, "'%s': flags %x, want %x", want[i].at, in->flags, want[i].flags);
  }
  /* operand text points at the source */
  const rs_inst *ld = inst_at(f, line_of(m->text, "ld.global.v4"));
  if (ld) {
    const rs_operand *a = &f->ops[ld->first_op + 4];
    CHECK(a->text_len == 4 && !memcmp(m->text + a->text_off, "%rd1", 4));
    CHECK(!strcmp(rs_func_opcode(f, ld), "ld.global.v4.f32"));
  }
  /* classes and widths */
  for (uint32_t v = 0; v < f->nvregs; v++) {
    const rs_vreg *r = &f->vregs[v];
    if (!strcmp(r->name, "%rd1"))
      CHECK(r->cls == rs_target_class(f->tgt, "b64", 3) && r->width == 2 && r->full == 0xF);
    if (!strcmp(r->name, "%p3")) CHECK(r->cls == rs_target_class(f->tgt, "pred", 4) && r->width == 1);
    if (!strcmp(r->name, "%f4")) CHECK(r->cls == rs_target_class(f->tgt, "b32", 3));
    if (!strcmp(r->name, "%r0") || !strncmp(r->name, "%rs", 3)) CHECK(r->cls == -1);
  }
  /* CFG: entry -> {$L__BB0_2, entry.1}; entry.1 falls through; $L__BB0_2 ends in ret */
  CHECK(f->nblocks == 3 && !strcmp(f->blocks[0].name, "entry") &&
        !strcmp(f->blocks[2].name, "$L__BB0_2"));
  if (f->nblocks == 3) {
    CHECK(f->blocks[0].nsuccs == 2 && f->blocks[1].nsuccs == 1 && f->blocks[1].succs[0] == 2 &&
          f->blocks[2].nsuccs == 0 && f->blocks[2].npreds == 2);
    CHECK(f->blocks[2].line == line_of(m->text, "$L__BB0_2:"));
  }
out:
  rs_module_free(m);
}

/* ---- bad input ---- */

static void write_file(const char *path, const char *data, size_t n) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return;
  fwrite(data, 1, n, fp);
  fclose(fp);
}

/* Loading must fail with a message naming path (and line, when line > 0). */
static void expect_error(const char *dir, const char *name, const char *data, size_t n,
                         uint32_t line, const char *words) {
  char path[512], want[600];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  write_file(path, data, n);
  rs_err e = {{0}};
  rs_module *m = rs_module_load(path, NULL, &e);
  CHECKF(m == NULL, "%s loaded", name);
  rs_module_free(m);
  if (line)
    snprintf(want, sizeof want, "%s:%u:", path, line);
  else
    snprintf(want, sizeof want, "%s:", path);
  CHECKF(strstr(e.msg, want) != NULL, "%s: message '%s' lacks '%s'", name, e.msg, want);
  if (words) CHECKF(strstr(e.msg, words) != NULL, "%s: message '%s' lacks '%s'", name, e.msg, words);
  unlink(path);
}

static void test_bad(const char *fixture) {
  char dir[] = "/tmp/rs_test_ptx.XXXXXX";
  if (!mkdtemp(dir)) {
    CHECK(!"mkdtemp");
    return;
  }
  static const char head[] = ".version 9.0\n.target sm_90\n.address_size 64\n"
                             ".visible .entry k()\n{\n\t.reg .b32 %r<5>;\n";
  char buf[1024];
  int n;
  n = snprintf(buf, sizeof buf, "%s\tmov.u32 %%r1, %%r9;\n\tret;\n}\n", head);
  expect_error(dir, "undeclared.ptx", buf, (size_t)n, 7, "undeclared register '%r9'");
  n = snprintf(buf, sizeof buf, "%s\tmov.u32 %%r1, %%r2\n\tret;\n}\n", head);
  expect_error(dir, "nosemi.ptx", buf, (size_t)n, 7, "expected ',' or ';'");
  n = snprintf(buf, sizeof buf, "%s\tmov.u32 %%r1, \x01\x02\xff;\n\tret;\n}\n", head);
  expect_error(dir, "garbage.ptx", buf, (size_t)n, 7, "0x01");
  n = snprintf(buf, sizeof buf, "%s\tld.global.v2.u32 {%%r1, %%r2, [%%r3];\n}\n", head);
  expect_error(dir, "brace.ptx", buf, (size_t)n, 7, NULL);
  n = snprintf(buf, sizeof buf, "%s\tld.global.u32 %%r1, [%%r3;\n}\n", head);
  expect_error(dir, "bracket.ptx", buf, (size_t)n, 7, NULL);
  n = snprintf(buf, sizeof buf, "%s\tbra.uni $L__nowhere;\n}\n", head);
  expect_error(dir, "label.ptx", buf, (size_t)n, 7, "undefined label");
  n = snprintf(buf, sizeof buf, "%s\tmov.u32 %%r1, 1;\n", head);
  expect_error(dir, "unterminated.ptx", buf, (size_t)n, 8, "unterminated body of 'k'");
  n = snprintf(buf, sizeof buf, ".version 9.0\n.target sm_70\n.visible .entry k()\n{\n\tret;\n}\n");
  expect_error(dir, "target.ptx", buf, (size_t)n, 2, "sm_70");
  n = snprintf(buf, sizeof buf, "%s\tret;\n}\n\x7f\x45LF", head);
  expect_error(dir, "trailing.ptx", buf, (size_t)n, 9, NULL);
  n = snprintf(buf, sizeof buf, "%s\t/* never closed\n\tret;\n}\n", head);
  expect_error(dir, "comment.ptx", buf, (size_t)n, 7, "unterminated /*");
  expect_error(dir, "empty.ptx", "", 0, 0, NULL);
  /* a real fixture cut in the middle of its body */
  size_t len;
  rs_err e = {{0}};
  char *text = fixture ? rs_read_file(fixture, &len, &e) : NULL;
  if (text) {
    char *nl = strchr(text + len / 2, '\n'); /* cut at a line end: an unterminated body */
    size_t cut = nl ? (size_t)(nl - text) + 1 : len / 2;
    expect_error(dir, "truncated.ptx", text, cut, rs_line_of(text, cut), "unterminated body");
    free(text);
  }
  rmdir(dir);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  test_targets();
  char **files;
  int n = rs_check_list("tests/fixtures/nv", ".ptx", &files);
  CHECKF(n > 0, "no PTX fixtures in tests/fixtures/nv");
  for (int i = 0; i < n; i++) test_fixture(files[i]);
  test_snippet();
  test_bad(n ? files[n - 1] : NULL);
  rs_check_free_list(files, n);
  return rs_check_done("test_ptx");
}
