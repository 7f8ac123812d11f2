/* test_sass.c - the SASS front end on real nvdisasm listings (tests/fixtures/sass/front):
 * the opcode table, operand widths, the lift's webs and truths, the hidden-descriptor contract,
 * bad input (file:line, exit 2, never a crash), the pinned oracle (`regsweep regalloc
 * --pinned`: identical on every fixture, and a wrong register is caught), --free and
 * inspect --live. */
#include "front/front.h"
#include "check.h"
#include "analysis/problem.h"
#include "sass/sass.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const DIR = "tests/fixtures/sass/front";

static char *slurp(const char *path, size_t *n) {
  rs_err e;
  return rs_read_file(path, n, &e);
}

static rs_module *parse_text(const char *name, const char *text, const rs_sass_opts *o, rs_err *e) {
  rs_module *m = rs_xcalloc(1, sizeof *m);
  m->path = rs_xstrndup(name, strlen(name));
  m->text = rs_xstrndup(text, strlen(text));
  m->len = strlen(text);
  m->kind = RS_SRC_SASS;
  if (rs_sass_parse_opts(m, o, e) || !m->nfuncs) {
    rs_module_free(m);
    return NULL;
  }
  return m;
}

/* The first instruction with this opcode, or NULL. */
static const rs_inst *find_op(const rs_func *f, const char *opc) {
  for (uint32_t i = 0; i < f->ninsts; i++)
    if (!strcmp(rs_func_opcode(f, &f->insts[i]), opc)) return &f->insts[i];
  return NULL;
}

static void test_table(void) {
  const char *v;
  char why[300];
  const rs_sass_op *r = rs_sass_lookup("IMAD.WIDE.U32", 13, 4, &v, why, sizeof why);
  CHECK(r && !strcmp(r->form, "IMAD.WIDE") && !strncmp(v, "d2 s1 s1 s2", 11));
  r = rs_sass_lookup("LDG.E.128.CONSTANT", 18, 2, &v, why, sizeof why);
  CHECK(r && !strncmp(v, "d4 m", 4));
  r = rs_sass_lookup("IADD3", 5, 6, &v, why, sizeof why);
  CHECK(r && !strncmp(v, "d1 d1 d1 s1 s1 s1", 17));
  r = rs_sass_lookup("HMMA.16816.F32", 14, 4, &v, why, sizeof why);
  CHECK(r && !strncmp(v, "d4 s4 s2 s4", 11));
  CHECK(rs_sass_lookup("FROB.X", 6, 2, &v, why, sizeof why) == NULL && strstr(why, "unknown opcode 'FROB.X'"));
  /* a width-changing modifier the table does not list is an unknown form, not a guess */
  CHECK(rs_sass_lookup("LDS.256", 7, 2, &v, why, sizeof why) == NULL && strstr(why, "unknown form 'LDS.256'"));
  CHECK(rs_sass_lookup("IADD3", 5, 2, &v, why, sizeof why) == NULL && strstr(why, "2 operands"));
}

static void test_fixtures(void) {
  char **list;
  int n = rs_check_list(DIR, ".sass", &list);
  CHECKF(n >= 20, "%d listings", n);
  for (int i = 0; i < n; i += rs_check_stride()) {
    rs_err e = {{0}};
    rs_module *m = rs_module_load(list[i], NULL, &e);
    CHECKF(m && m->nfuncs == 1, "%s: %s", list[i], e.msg);
    if (!m) continue;
    const rs_func *f = m->funcs[0];
    size_t len;
    char *t = slurp(list[i], &len);
    uint32_t lines = 0;
    for (char *p = t; (p = strstr(p, "        /*")); p++) lines++;
    free(t);
    CHECKF(f->ninsts == lines, "%s: %u instructions, %u instruction lines", list[i], f->ninsts, lines);
    CHECK(f->kind == RS_SRC_SASS && !f->allocated && f->truth);
    /* every value has its truth, of its class; tuples aligned */
    uint32_t bad = 0, wide = 0;
    for (uint32_t v = 0; v < f->nvregs; v++) {
      if (rs_target_member(f->tgt, f->vregs[v].cls, f->truth[v]) != RS_MEMBER_OK) bad++;
      wide += f->vregs[v].width > 1;
    }
    CHECKF(bad == 0 && wide > 0, "%s: %u values outside their class, %u tuples", list[i], bad, wide);
    /* RZ, PT, R1 stay physical, and the predicates a PR mask reads or writes (P2R, R2P: the
     * write-back cannot reprint a mask); nothing else does */
    uint8_t masked[1024] = {0};
    for (uint32_t o = 0; o < f->nops; o++)
      if (f->ops[o].kind == RS_OP_PREG && (f->ops[o].flags & RS_F_IMPLICIT) && f->ops[o].reg < 1024) masked[f->ops[o].reg] = 1;
    for (uint32_t o = 0; o < f->nops; o++)
      if (f->ops[o].kind == RS_OP_PREG && rs_sass_allocatable(f->tgt, f->ops[o].reg) &&
          !(f->ops[o].reg < 1024 && masked[f->ops[o].reg]))
        bad++;
    CHECKF(bad == 0, "%s: %u allocatable registers left physical", list[i], bad);
    rs_module_free(m);
  }
  rs_check_free_list(list, n);
}

/* Widths as the table says, on real instructions. */
static void test_widths(void) {
  rs_err e = {{0}};
  char path[256];
  snprintf(path, sizeof path, "%s/wmma_w2x2_r2x2.sm_89.sass", DIR);
  rs_module *m = rs_module_load(path, NULL, &e);
  CHECKF(m, "%s", e.msg);
  if (!m) return;
  const rs_func *f = m->funcs[0];
  const rs_inst *h = find_op(f, "HMMA.16816.F32");
  CHECK(h != NULL);
  if (h) { /* D A B C: 4 4 2 4 registers */
    unsigned w[4];
    for (int k = 0; k < 4; k++) w[k] = rs_lanes_units(f->ops[h->first_op + k].lanes >> __builtin_ctzll(f->ops[h->first_op + k].lanes));
    CHECKF(w[0] == 4 && w[1] == 4 && w[2] == 2 && w[3] == 4, "HMMA widths %u %u %u %u", w[0], w[1], w[2], w[3]);
    CHECK(f->ops[h->first_op].flags & RS_F_DEF);
  }
  const rs_inst *c = find_op(f, "CS2R");
  CHECK(c && f->vregs[f->ops[c->first_op].reg].width >= 2);
  const rs_inst *g = find_op(f, "LDG.E.U16.CONSTANT");
  CHECK(g != NULL);
  if (g) { /* R dest, R pair address, UR pair descriptor */
    uint32_t pairs = 0;
    for (uint32_t o = 0; o < g->nops; o++) pairs += rs_lanes_units(f->ops[g->first_op + o].lanes >> __builtin_ctzll(f->ops[g->first_op + o].lanes | 1)) == 2;
    CHECKF(pairs == 2, "LDG: %u pair operands", pairs);
  }
  rs_module_free(m);
}

/* The hidden descriptor: an 11.8 listing (no desc[]) is refused unless a decoded table is given;
 * with the table it lifts exactly like the CUDA 12 spelling. */
static void test_desc(void) {
  char path[256];
  snprintf(path, sizeof path, "%s/sgemm_t4x4.sm_89.sass", DIR);
  size_t n;
  char *t = slurp(path, &n);
  CHECK(t != NULL);
  if (!t) return;
  char *plain = rs_xmalloc(n + 1), *q = plain;
  rs_sass_desc d[256];
  size_t nd = 0;
  uint32_t line = 1, first_line = 0;
  for (const char *p = t; *p;) {
    if (!strncmp(p, "desc[UR", 7)) {
      const char *a = p;
      while (a > t && strncmp(a, "/*", 2)) a--;
      unsigned addr = 0, ur = 0;
      sscanf(a, "/*%x*/", &addr);
      sscanf(p, "desc[UR%u]", &ur);
      if (nd < 256) d[nd++] = (rs_sass_desc){"sgemm_tiled", addr, (uint8_t)ur};
      if (!first_line) first_line = line;
      p = strchr(p, ']') + 1;
      continue;
    }
    if (*p == '\n') line++;
    *q++ = *p++;
  }
  *q = 0;
  CHECK(nd > 10);
  rs_err e = {{0}};
  rs_module *m = parse_text("plain.sass", plain, NULL, &e);
  char want[64];
  snprintf(want, sizeof want, "plain.sass:%u:", first_line);
  CHECKF(!m && strstr(e.msg, want) && strstr(e.msg, "descriptor"), "11.8 listing without table: %s", e.msg);
  rs_module_free(m);
  rs_sass_opts o = {.desc = d, .ndesc = nd, .whole = true};
  m = parse_text("plain.sass", plain, &o, &e);
  rs_module *ref = rs_module_load(path, NULL, &e);
  CHECK(m && ref);
  if (m && ref) {
    const rs_func *a = m->funcs[0], *b = ref->funcs[0];
    CHECK(a->nvregs == b->nvregs && a->nops == b->nops);
    bool same = a->nvregs == b->nvregs;
    for (uint32_t v = 0; same && v < a->nvregs; v++)
      same = a->truth[v].unit == b->truth[v].unit && a->truth[v].lanes == b->truth[v].lanes && !strcmp(a->vregs[v].name, b->vregs[v].name);
    CHECK(same);
  }
  rs_module_free(m);
  rs_module_free(ref);
  /* a decoded row that matches no instruction is an error, not ignored */
  d[nd] = (rs_sass_desc){"sgemm_tiled", 0x0, 8};
  o.ndesc = nd + 1;
  m = parse_text("plain.sass", plain, &o, &e);
  CHECKF(!m && strstr(e.msg, "reads none"), "%s", e.msg);
  rs_module_free(m);
  free(plain);
  free(t);
}

/* A function refused alone: exit 1, the refusal names function, address, form and operand shape,
 * then file:line and the reason; the summary counts it by form. */
static void refused(const char *dir, const char *name, const char *text, const char *head, const char *words, int line) {
  char path[600], cmd[1400], out[4096], want[700];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *fp = fopen(path, "w");
  fputs(text, fp);
  fclose(fp);
  snprintf(cmd, sizeof cmd, "%s regalloc %s --pinned 2>&1", rs_check_cli, path);
  int rc = rs_check_run(cmd, out, sizeof out);
  snprintf(want, sizeof want, "%s:%d:", path, line);
  CHECKF(rc == 1 && strstr(out, head) && strstr(out, want) && strstr(out, words) &&
             strstr(out, "1 of 1 functions refused, by form: FROBNICATE.X 1"),
         "%s: rc %d: %s", name, rc, out);
  unlink(path);
}

/* Bad input: the CLI exits 2 with file:line, under ASan without a crash. */
static void bad(const char *dir, const char *name, const char *text, const char *words, int line) {
  char path[600], cmd[1400], out[4096], want[700];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *fp = fopen(path, "w");
  fputs(text, fp);
  fclose(fp);
  snprintf(cmd, sizeof cmd, "%s regalloc %s --pinned 2>&1", rs_check_cli, path);
  int rc = rs_check_run(cmd, out, sizeof out);
  if (line > 0) snprintf(want, sizeof want, "%s:%d:", path, line);
  else snprintf(want, sizeof want, "%s:", path);
  CHECKF(rc == 2 && strstr(out, want) && strstr(out, words), "%s: rc %d: %s", name, rc, out);
  unlink(path);
}

/* text with line `ln` (1-based) replaced by `with` (NULL: deleted), or cut after `cut` bytes */
static char *edit(const char *t, int ln, const char *with) {
  size_t n = strlen(t);
  char *o = rs_xmalloc(n + (with ? strlen(with) : 0) + 2), *q = o;
  int l = 1;
  for (const char *p = t; *p; p++) {
    if (l == ln) {
      if (with) q += sprintf(q, "%s\n", with);
      while (*p && *p != '\n') p++;
      l++;
      if (!*p) break;
      continue;
    }
    *q++ = *p;
    if (*p == '\n') l++;
  }
  *q = 0;
  return o;
}

static void test_bad_input(void) {
  char dir[] = "/tmp/rs_test_sass.XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[256];
  snprintf(path, sizeof path, "%s/sgemm_t4x4.sm_89.sass", DIR);
  size_t n;
  char *t = slurp(path, &n);
  if (!t) return;
  /* line 15 is the first instruction (MOV R1, c[0x0][0x28]) */
  char *x = edit(t, 15, "        /*0000*/                   FROBNICATE.X R1, R2 ;");
  /* an unknown form refuses its function alone (issue 42): named, exit 1, not bad input */
  refused(dir, "unknown.sass", x, "sgemm_tiled /*0000*/: form FROBNICATE.X (R,R):", "unknown opcode 'FROBNICATE.X'", 15);
  free(x);
  x = edit(t, 15, "        /*0000*/                   IMAD.WIDE R3, R2, 0x4, R4 ;");
  bad(dir, "width.sass", x, "wrong width", 15);
  free(x);
  x = edit(t, 15, "        /*0000*/                   IMAD.WIDE R2, R0, 0x4, P0 ;");
  bad(dir, "kind.sass", x, "P0 where IMAD.WIDE needs 2 registers", 15);
  free(x);
  x = edit(t, 16, NULL); /* an instruction nvdisasm left out: an address hole */
  bad(dir, "hole.sass", x, "address hole", 16);
  free(x);
  x = edit(t, 15, "        /*0000*/                   MOV R1, c[0x0][0x28]");
  bad(dir, "nosemi.sass", x, "without ';'", 15);
  free(x);
  x = edit(t, 15, "        /*0000*/                   MOV R1, [[R2] ;");
  bad(dir, "bracket.sass", x, "", 15);
  free(x);
  x = edit(t, 15, "        /*0000*/                   MOV R1, R256 ;");
  bad(dir, "noreg.sass", x, "", 15);
  free(x);
  x = edit(t, 15, "        /*0000*/                   MOV R01, c[0x0][0x28] ;"); /* found by fuzz_sass */
  bad(dir, "spelling.sass", x, "not spelt as nvdisasm spells it", 15);
  free(x);
  x = edit(t, 15, "        /*0000*/                   BRA `(.L_x_99) ;");
  bad(dir, "label.sass", x, "undefined label '.L_x_99'", 15);
  free(x);
  /* truncated: cut in the middle of the listing (the end label never comes) */
  x = rs_xstrndup(t, n / 2);
  char *nl = strrchr(x, '\n');
  if (nl) nl[1] = 0;
  bad(dir, "truncated.sass", x, "truncated listing", 0);
  free(x);
  x = rs_xstrndup(t, n / 2); /* cut mid-line */
  bad(dir, "cutline.sass", x, "", 0);
  free(x);
  bad(dir, "garbage.sass", "\x7f" "ELF\x02\x01\x01 garbage\n", "", 1);
  bad(dir, "empty.sass", "", "no function", 0);
  bad(dir, "text.sass", "hello world\n", "not an nvdisasm listing", 1);
  bad(dir, "noarch.sass", "\t.section\t.text.k,\"ax\",@progbits\nk:\n        /*0000*/ EXIT ;\n", "architecture", 1);
  free(t);
  rmdir(dir);
}

/* The pinned oracle: identical on every fixture; a wrong register is caught by the checks. */
static void test_pinned(void) {
  char **list;
  int n = rs_check_list(DIR, ".sass", &list);
  int fails = 0;
  for (int i = 0; i < n; i += rs_check_stride()) {
    char cmd[800], out[8192];
    snprintf(cmd, sizeof cmd, "%s regalloc %s --pinned -q 2>&1", rs_check_cli, list[i]);
    int rc = rs_check_run(cmd, out, sizeof out);
    CHECKF(rc == 0 && out[0] == 0, "%s: rc %d: %s", list[i], rc, out);
    fails += rc != 0;
  }
  printf("pinned oracle: %d listings, %d failures\n", n, fails);
  if (n) {
    char cmd[800], out[8192];
    snprintf(cmd, sizeof cmd, "%s regalloc %s --pinned 2>&1", rs_check_cli, list[0]);
    CHECK(rs_check_run(cmd, out, sizeof out) == 0 && strstr(out, "identical"));
  }
  rs_check_free_list(list, n);
  /* in memory: move one value onto the register of a value it interferes with */
  char path[256];
  snprintf(path, sizeof path, "%s/sgemm_t4x4.sm_89.sass", DIR);
  rs_err e = {{0}};
  rs_module *m = rs_module_load(path, NULL, &e);
  if (!m) return;
  const rs_func *f = m->funcs[0];
  rs_problem *p = rs_problem_build(f, &e);
  CHECK(p && p->nconf > 1000);
  if (p) {
    uint32_t *base = rs_xcalloc(p->nvars + 1, sizeof *base);
    for (uint32_t v = 0; v < p->nvars; v++) base[v] = f->truth[p->vars[v].fvreg].unit;
    CHECK(rs_problem_violations(p, base) == 0);
    const rs_conflict *c = &p->conf[p->nconf / 2];
    base[c->a] = base[c->b] + (uint32_t)(__builtin_ctzll(c->lb) / 2) - (uint32_t)(__builtin_ctzll(c->la) / 2);
    CHECK(rs_problem_violations(p, base) > 0);
    /* the write-back names the instruction and both registers */
    rs_preg *as = rs_xcalloc(f->nvregs + 1, sizeof *as);
    for (uint32_t v = 0; v < f->nvregs; v++) as[v] = f->truth[v];
    as[p->vars[c->a].fvreg].unit = base[c->a];
    char *text;
    rs_sass_diff d[4];
    uint32_t nd = rs_sass_write(f, as, &text, d, 4);
    CHECK(nd > 0 && strcmp(d[0].expected, d[0].actual));
    free(text);
    free(as);
    free(base);
  }
  rs_problem_free(p);
  rs_module_free(m);
}

/* --free: fewer R registers than ptxas, the written listing re-lifts to the same values (checked
 * inside), and is itself a listing the pinned oracle accepts, using as many registers as printed. */
static void test_free(void) {
  static const char *const names[] = {"sgemm_t4x4.sm_89", "wmma_w2x2_r2x2.sm_75"};
  char dir[] = "/tmp/rs_test_sass_free.XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char cmd[1200], out[4096], res[600];
    snprintf(res, sizeof res, "%s/%s.sass", dir, names[i]);
    snprintf(cmd, sizeof cmd, "%s regalloc %s/%s.sass --free -o %s 2>&1", rs_check_cli, DIR, names[i], res);
    int rc = rs_check_run(cmd, out, sizeof out);
    unsigned before = 0, after = 0;
    const char *r = strstr(out, "R: ");
    if (r) sscanf(r, "R: %u -> %u", &before, &after);
    CHECKF(rc == 0 && before && after && after <= before, "%s: rc %d: %s", names[i], rc, out);
    /* the validation, in the issue's words, with the number of uses compared */
    unsigned nuses = 0;
    const char *cs = strstr(out, "contributor sets equivalent (");
    if (cs) sscanf(cs, "contributor sets equivalent (%u uses)", &nuses);
    CHECKF(nuses > 100 && (strstr(out, "), verifier: pass\n") || strstr(out, "), verifier: pass; ptxas's own colouring")),
           "%s: %s", names[i], out);
    printf("free: %s: R %u -> %u, contributor sets equivalent (%u uses), verifier: pass\n", names[i], before, after, nuses);
    snprintf(cmd, sizeof cmd, "%s regalloc %s --pinned -q 2>&1", rs_check_cli, res);
    CHECKF(rs_check_run(cmd, out, sizeof out) == 0, "%s: the recoloured listing fails pinned: %s", names[i], out);
    rs_err e = {{0}};
    rs_module *m = rs_module_load(res, NULL, &e), *o = NULL;
    snprintf(cmd, sizeof cmd, "%s/%s.sass", DIR, names[i]);
    o = rs_module_load(cmd, NULL, &e);
    CHECK(m && o);
    if (m && o) {
      const rs_func *f = m->funcs[0];
      unsigned top = 0;
      for (uint32_t v = 0; v < f->nvregs; v++)
        if (f->truth[v].unit < 255 && f->truth[v].unit + rs_lanes_units(f->truth[v].lanes) > top)
          top = f->truth[v].unit + rs_lanes_units(f->truth[v].lanes);
      CHECKF(top + 2 == after, "%s: written listing uses up to R%u, printed %u", names[i], top - 1, after);
      CHECK(f->nvregs == o->funcs[0]->nvregs && f->ninsts == o->funcs[0]->ninsts);
    }
    rs_module_free(m);
    rs_module_free(o);
    unlink(res);
  }
  rmdir(dir);
}

static void test_inspect_live(void) {
  char cmd[800], out[65536];
  snprintf(cmd, sizeof cmd, "%s inspect %s/sgemm_t4x4.sm_89.sass --live 2>&1", rs_check_cli, DIR);
  CHECK(rs_check_run(cmd, out, sizeof out) == 0);
  /* nvdisasm -lrm count of the first rows: MOV R1 (1 GPR), S2R R0 (2), S2UR UR4 (2 GPR, 1 UGPR) */
  CHECKF(strstr(out, "# sgemm_tiled: address GPR PRED UGPR UPRED\n0000 1 0 0 0\n0010 2 0 0 0\n0020 2 0 1 0\n"),
         "%.300s", out);
}

/* A switch's jump table (tests/fixtures/sass/plr/switch_jumptable, our CUDA; ptxas 13 for
 * sm_86 and sm_90): `BRX R4 -0x170 (*"BRANCH_TARGETS .L_x_22,.L_x_23,.L_x_3"*)` reads the pair
 * R4:R5 and goes to exactly its named targets (not to every label, the fallback when none are
 * named); pinned is identical and --free validates. */
static void test_brx(void) {
  static const char *const names[] = {"switch_jumptable.sm_86", "switch_jumptable.sm_90"};
  for (int i = 0; i < 2; i++) {
    char path[256], cmd[800], out[8192];
    snprintf(path, sizeof path, "tests/fixtures/sass/plr/%s.sass", names[i]);
    rs_err e = {{0}};
    rs_module *m = rs_module_load(path, NULL, &e);
    CHECKF(m && m->nfuncs == 1, "%s: %s", path, e.msg);
    if (!m) continue;
    const rs_func *f = m->funcs[0];
    unsigned nbrx = 0;
    for (uint32_t bi = 0; bi < f->nblocks; bi++) {
      const rs_block *b = &f->blocks[bi];
      const rs_inst *in = &f->insts[b->first_inst + b->ninsts - 1];
      if (strcmp(rs_func_opcode(f, in), "BRX")) continue;
      nbrx++;
      const rs_operand *r = &f->ops[in->first_op];
      CHECKF((r->kind == RS_OP_PREG || r->kind == RS_OP_VREG) && rs_lanes_units(r->lanes >> __builtin_ctzll(r->lanes | 1)) == 2 && !(r->flags & RS_F_DEF), "%s: BRX reads %u registers",
             names[i], rs_lanes_units(r->lanes >> __builtin_ctzll(r->lanes | 1)));
      CHECKF(b->nsuccs == 3, "%s: BRX at 0x%04x has %u successors (its BRANCH_TARGETS name 3)", names[i], in->addr,
             b->nsuccs);
    }
    CHECKF(nbrx == 3, "%s: %u BRX", names[i], nbrx);
    snprintf(cmd, sizeof cmd, "%s regalloc %s --pinned 2>&1", rs_check_cli, path);
    CHECKF(rs_check_run(cmd, out, sizeof out) == 0 && strstr(out, "identical"), "%s pinned: %s", names[i], out);
    snprintf(cmd, sizeof cmd, "%s regalloc %s --free -q 2>&1", rs_check_cli, path);
    CHECKF(rs_check_run(cmd, out, sizeof out) == 0, "%s free: %s", names[i], out);
    rs_module_free(m);
  }
}

/* Opcode forms of real corpus listings (tests/fixtures/sass/front/ops): each parses, the form's
 * operands mean what the table says, pinned is identical and --free validates. */
static void test_ops(void) {
  static const char *const names[] = {"conv2d_kw3_opt2.sm_75", "gemv_rows240_rpt8_alpha0.sm_75",
                                      "scan_threads256_items4.sm_90", "scan_threads64_items4.sm_80"};
  static const char *const opc[] = {"P2R", "LEA.HI.SX32", "WARPSYNC.COLLECTIVE", "BRA.CONV"};
  for (int i = 0; i < 4; i++) {
    char path[256], cmd[800], out[8192];
    snprintf(path, sizeof path, "%s/ops/%s.sass", DIR, names[i]);
    rs_err e = {{0}};
    rs_module *m = rs_module_load(path, NULL, &e);
    CHECKF(m && m->nfuncs == 1, "%s: %s", path, e.msg);
    if (!m) continue;
    const rs_func *f = m->funcs[0];
    const rs_inst *in = find_op(f, opc[i]);
    CHECKF(in != NULL, "%s: no %s", path, opc[i]);
    if (in && i == 0) { /* P2R R22, PR, RZ, 0x40: writes R22, reads P6 (mask bit 6), fixed there */
      uint32_t p6 = 0, defs = 0;
      for (uint32_t o = 0; o < in->nops; o++) {
        const rs_operand *op = &f->ops[in->first_op + o];
        char nm[24] = "";
        if (op->kind == RS_OP_PREG) f->tgt->format_preg(f->tgt, (rs_preg){op->reg, 3}, nm, sizeof nm);
        p6 += !strcmp(nm, "P6") && (op->flags & RS_F_IMPLICIT) && !(op->flags & RS_F_DEF);
        defs += (op->flags & RS_F_DEF) != 0;
      }
      CHECKF(p6 == 1 && defs == 1, "P2R: %u reads of P6, %u defs", p6, defs);
    }
    if (in && i == 1) CHECKF(in->nops == 4 && (f->ops[in->first_op].flags & RS_F_DEF), "LEA.HI.SX32: %u operands", in->nops);
    if (in && i >= 2) { /* taken to its label, or falls through (the collective SHFL; the slow-path CALL) */
      uint32_t bi = 0;
      while (bi + 1 < f->nblocks && f->blocks[bi + 1].first_inst <= (uint32_t)(in - f->insts)) bi++;
      const rs_block *b = &f->blocks[bi];
      CHECKF(b->first_inst + b->ninsts - 1 == (uint32_t)(in - f->insts) && b->nsuccs == 2, "%s: %u successors", opc[i],
             b->nsuccs);
    }
    snprintf(cmd, sizeof cmd, "%s regalloc %s --pinned 2>&1", rs_check_cli, path);
    CHECKF(rs_check_run(cmd, out, sizeof out) == 0 && strstr(out, "identical"), "%s pinned: %s", names[i], out);
    snprintf(cmd, sizeof cmd, "%s regalloc %s --free -q 2>&1", rs_check_cli, path);
    CHECKF(rs_check_run(cmd, out, sizeof out) == 0, "%s free: %s", names[i], out);
    rs_module_free(m);
  }
}

/* `@P0 EXIT !P2` (MAGMA's gesvj kernel, ptxas 13 sm_75): EXIT reads its predicate operand; the
 * listing was refused before ("EXIT with 1 operands"), pinned identical and --free valid now. */
static void test_exit_pred(void) {
  char path[256], cmd[800], out[8192];
  snprintf(path, sizeof path, "%s/ops/magma_gesvj_exit_pred.sm_75.sass", DIR);
  rs_err e = {{0}};
  rs_module *m = rs_module_load(path, NULL, &e);
  CHECKF(m && m->nfuncs == 1, "%s: %s", path, e.msg);
  if (!m) return;
  const rs_func *f = m->funcs[0];
  uint32_t exits = 0, with_pred = 0;
  for (uint32_t i = 0; i < f->ninsts; i++) {
    const rs_inst *in = &f->insts[i];
    if (strcmp(f->names.strs[in->opcode], "EXIT")) continue;
    exits++;
    /* the guard is an operand too: `@P0 EXIT !P2` reads two predicates, `@P2 EXIT` one, `EXIT` none */
    uint32_t reads = 0;
    for (uint32_t o = 0; o < in->nops; o++) reads += !(f->ops[in->first_op + o].flags & RS_F_DEF);
    with_pred += reads == 2;
  }
  CHECKF(exits == 3 && with_pred == 1, "EXIT: %u, reading two predicates: %u", exits, with_pred);
  snprintf(cmd, sizeof cmd, "%s regalloc %s --pinned 2>&1", rs_check_cli, path);
  CHECKF(rs_check_run(cmd, out, sizeof out) == 0 && strstr(out, "identical"), "pinned: %s", out);
  snprintf(cmd, sizeof cmd, "%s regalloc %s --free -q 2>&1", rs_check_cli, path);
  CHECKF(rs_check_run(cmd, out, sizeof out) == 0, "free: %s", out);
  rs_module_free(m);
}

/* R2P PR, Ra[.Bn], mask on real ptxas 13 output (front/r2p_mask.*, from src/r2p_mask.cu): it
 * reads Ra and writes exactly the predicates of its mask (R2P PR, R6, 0x7e: P1-P6, not P0), which
 * stay physical (write-back cannot reprint a mask); pinned and --free hold (test_pinned, test_free
 * cover front/). */
static void test_r2p(void) {
  static const char *const archs[] = {"sm_75", "sm_80", "sm_86", "sm_89"};
  for (int a = 0; a < 4; a++) {
    char path[256];
    snprintf(path, sizeof path, "%s/r2p_mask.%s.sass", DIR, archs[a]);
    rs_err e = {{0}};
    rs_module *m = rs_module_load(path, NULL, &e);
    CHECKF(m && m->nfuncs == 1, "%s: %s", path, e.msg);
    if (!m) continue;
    const rs_func *f = m->funcs[0];
    unsigned seen = 0;
    for (uint32_t i = 0; i < f->ninsts; i++) {
      const rs_inst *in = &f->insts[i];
      if (strcmp(rs_func_opcode(f, in), "R2P")) continue;
      uint32_t last = 0; /* the mask: the last printed operand (the implicit predicates follow) */
      for (uint32_t o = 0; o < in->nops; o++)
        if (f->ops[in->first_op + o].text_len) last = o;
      unsigned mask = (unsigned)strtoul(f->src + f->ops[in->first_op + last].text_off, NULL, 16);
      unsigned written = 0, reads = 0, other = 0;
      for (uint32_t o = 0; o < in->nops; o++) {
        const rs_operand *op = &f->ops[in->first_op + o];
        char nm[24] = "";
        if (op->kind == RS_OP_PREG) f->tgt->format_preg(f->tgt, (rs_preg){op->reg, 3}, nm, sizeof nm);
        if ((op->flags & RS_F_DEF) && (op->flags & RS_F_IMPLICIT) && nm[0] == 'P' && nm[1] >= '0' && nm[1] <= '6' && !nm[2])
          written |= 1u << (nm[1] - '0');
        else if ((op->flags & RS_F_DEF)) other++;
        else if (op->kind == RS_OP_VREG && f->truth[op->reg].unit < 255) reads++; /* Ra: an R value */
      }
      CHECKF(written == mask && other == 0 && reads == 1, "%s /*%04x*/: R2P mask 0x%x writes 0x%x (+%u), %u R reads",
             path, in->addr, mask, written, other, reads);
      seen++;
    }
    CHECKF(seen == 4, "%s: %u R2P (4 expected: bytes 0-3 of the mask)", path, seen);
    rs_module_free(m);
  }
  /* BMOV.32.CLEAR RZ, B0 reads and writes one printed B0: one value (else --free could split it) */
  char path[256];
  snprintf(path, sizeof path, "%s/fa_hd64_bc32_half.sm_75.sass", DIR);
  rs_err e = {{0}};
  rs_module *m = rs_module_load(path, NULL, &e);
  CHECKF(m != NULL, "%s: %s", path, e.msg);
  unsigned bmov = 0;
  for (uint32_t i = 0; m && i < m->funcs[0]->ninsts; i++) {
    const rs_func *f = m->funcs[0];
    const rs_inst *in = &f->insts[i];
    if (strcmp(rs_func_opcode(f, in), "BMOV.32.CLEAR")) continue;
    const rs_operand *r = &f->ops[in->first_op + 1], *w = &f->ops[in->first_op + 2];
    CHECKF(r->kind == RS_OP_VREG && w->kind == RS_OP_VREG && r->reg == w->reg && !(r->flags & RS_F_DEF) &&
               (w->flags & RS_F_DEF),
           "/*%04x*/: BMOV.32.CLEAR's read and write are values %u and %u", in->addr, r->reg, w->reg);
    bmov++;
  }
  CHECKF(bmov >= 2, "%u BMOV.32.CLEAR in %s", bmov, path);
  rs_module_free(m);
}

/* The pinned oracle over every form-sass instance of the shipped mini corpus: 0 failures. */
static void test_corpus_pinned(void) {
  /* one run (the corpus is the slowest input here): per-instance lines, then the summary */
  char cmd[800], *out = malloc(1 << 20);
  snprintf(cmd, sizeof cmd, "%s regalloc data/corpus-mini.h5 --pinned 2>&1", rs_check_cli);
  int rc = rs_check_run(cmd, out, 1 << 20);
  CHECKF(rc == 0 && !strstr(out, "FAIL"), "regalloc corpus --pinned: rc %d: %.2000s", rc, out);
  unsigned n = 0, failed = 1, refused = 1;
  const char *t = strstr(out, ".h5: "), *u;
  while (t && (u = strstr(t + 1, ".h5: "))) t = u; /* the last: the summary */
  if (t) sscanf(t, ".h5: %u sass instances, %u failures, %u refused", &n, &failed, &refused);
  CHECKF(n >= 100 && !failed && !refused, "regalloc corpus --pinned: %.300s", t ? t : out);
  printf("pinned oracle over the mini corpus: %u sass instances, 0 failures\n", n);
  free(out);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  test_table();
  test_fixtures();
  test_widths();
  test_desc();
  test_bad_input();
  test_pinned();
  test_ops();
  test_brx();
  test_exit_pred();
  test_r2p();
  test_corpus_pinned();
  test_free();
  test_inspect_live();
  return rs_check_done("test_sass");
}
