/* test_sass_free.c - `regsweep regalloc FILE.sass --free` on real ptxas 13 listings
 * (tests/fixtures/sass): on every fixture the recoloured listing re-lifts, changes register
 * fields only, holds the pinned oracle itself, passes the independent validation (contributor
 * sets, webs, verifier) and uses at most ptxas's R count (`ptxas -v`); a listing the parser
 * refuses is refused by free mode the same way (exit 2, file:line). A deliberately broken
 * recolouring (one register of the written text mutated; a pair moved to an odd register) is
 * caught with function, address and register (or, for the pair, the written text's line). */
#include "check.h"
#include "analysis/problem.h"
#include "sass/free.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const DIR = "tests/fixtures/sass";

static char *slurp(const char *path) {
  rs_err e;
  size_t n;
  return rs_read_file(path, &n, &e);
}

/* `ptxas -v` "Used N registers" of a fixture, 0 if none. */
static unsigned ptxas_count(const char *sass) {
  char path[600];
  snprintf(path, sizeof path, "%.*s.ptxas-v.txt", (int)(strlen(sass) - 5), sass);
  char *t = slurp(path);
  unsigned n = 0;
  const char *u = t ? strstr(t, "Used ") : NULL;
  if (u) sscanf(u, "Used %u registers", &n);
  free(t);
  return n;
}

/* Line with register names masked, so two listings can be compared outside register fields. */
static void mask(const char *s, size_t n, char *out, size_t cap) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 2 < cap;) {
    bool start = i == 0 || !(s[i - 1] == '_' || (s[i - 1] >= 'A' && s[i - 1] <= 'Z') || (s[i - 1] >= '0' && s[i - 1] <= '9'));
    size_t j = i;
    if (start && (s[j] == 'U')) j++;
    if (start && (s[j] == 'R' || s[j] == 'P' || (s[j] == 'B' && j == i)) && j + 1 < n && s[j + 1] >= '0' && s[j + 1] <= '9') {
      j++;
      while (j < n && s[j] >= '0' && s[j] <= '9') j++;
      out[k++] = '#';
      i = j;
      continue;
    }
    out[k++] = s[i++];
  }
  out[k] = 0;
}

static bool same_but_registers(const char *a, const char *b, uint32_t *changed) {
  *changed = 0;
  char ma[1024], mb[1024];
  while (*a && *b) {
    const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
    size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
    if (la != lb || memcmp(a, b, la)) {
      (*changed)++;
      mask(a, la, ma, sizeof ma);
      mask(b, lb, mb, sizeof mb);
      if (strcmp(ma, mb)) {
        fprintf(stderr, "differs outside registers:\n  %s\n  %s\n", ma, mb);
        return false;
      }
    }
    a += la + (ea != NULL);
    b += lb + (eb != NULL);
  }
  return !*a && !*b;
}

static void test_fixtures(void) {
  char **list;
  int n = rs_check_list(DIR, ".sass", &list);
  CHECKF(n >= 30, "%d listings", n);
  char tmp[] = "/tmp/rs_test_sass_free.XXXXXX";
  CHECK(mkdtemp(tmp) != NULL);
  int ok = 0, refused = 0, fewer = 0;
  for (int i = 0; i < n; i++) {
    char out[700], cmd[1600], msg[8192];
    snprintf(out, sizeof out, "%s/out.sass", tmp);
    snprintf(cmd, sizeof cmd, "%s regalloc %s --free --quick -o %s 2>&1", rs_check_cli, list[i], out);
    int rc = rs_check_run(cmd, msg, sizeof msg);
    rs_err e = {{0}};
    rs_module *in = rs_module_load(list[i], NULL, &e);
    if (!in) { /* the parser refuses it: free mode must refuse it the same way */
      char want[700];
      snprintf(want, sizeof want, "%s:", list[i]);
      CHECKF(rc == 2 && strstr(msg, want), "%s: rc %d: %s", list[i], rc, msg);
      printf("refused by the parser (as by --pinned): %s\n", e.msg);
      refused++;
      continue;
    }
    unsigned ptx = ptxas_count(list[i]), before = 0, after = 0, ob = 0, oa = 0;
    const char *line = strstr(msg, ": R: ");
    CHECKF(rc == 0 && line && strstr(msg, "contributor sets equivalent"), "%s: rc %d: %s", list[i], rc, msg);
    if (line) sscanf(line, ": R: %u -> %u registers, occupancy %u -> %u", &before, &after, &ob, &oa);
    CHECKF(ptx > 0 && before == ptx && after <= before && after > 0 && oa >= ob, "%s: ptxas %u, R %u -> %u, occ %u -> %u",
           list[i], ptx, before, after, ob, oa);
    /* the written listing: re-lifts, its count is the one printed, registers changed only */
    rs_module *w = rs_module_load(out, NULL, &e);
    CHECKF(w && w->nfuncs == in->nfuncs, "%s: written listing: %s", list[i], e.msg);
    if (w) CHECKF(rs_sass_r_count(w->funcs[0]) == after, "%s: written %u", list[i], rs_sass_r_count(w->funcs[0]));
    char *ti = slurp(list[i]), *to = slurp(out);
    uint32_t changed = 0;
    CHECKF(ti && to && same_but_registers(ti, to, &changed) && (after == before || changed > 0), "%s: %u lines changed",
           list[i], changed);
    /* validated again in process, and the pinned oracle holds on the written listing */
    rs_sass_free_fail f[4];
    uint32_t nf = to ? rs_sass_free_check(in, to, f, 4, NULL, &e) : 1;
    CHECKF(nf == 0, "%s: %u failures: %s", list[i], nf, nf && nf != UINT32_MAX ? f[0].what : e.msg);
    snprintf(cmd, sizeof cmd, "%s regalloc %s --pinned -q 2>&1", rs_check_cli, out);
    CHECKF(rs_check_run(cmd, msg, sizeof msg) == 0, "%s: pinned on the written listing: %s", list[i], msg);
    ok += rc == 0 && nf == 0;
    fewer += after < ptx;
    free(ti);
    free(to);
    rs_module_free(w);
    rs_module_free(in);
    unlink(out);
  }
  printf("free mode: %d listings recoloured and validated, %d with fewer R than ptxas, %d refused by the parser\n", ok,
         fewer, refused);
  CHECK(ok >= 25);
  rs_check_free_list(list, n);
  rmdir(tmp);
}

/* Full effort on one kernel, quiet mode prints nothing. */
static void test_cli(void) {
  char cmd[800], msg[4096];
  snprintf(cmd, sizeof cmd, "%s regalloc %s/wmma_w2x2_r2x2.sm_89.sass --free 2>&1", rs_check_cli, DIR);
  CHECK(rs_check_run(cmd, msg, sizeof msg) == 0);
  CHECKF(strstr(msg, "regalloc(free): wmma_hgemm: R: 72 -> ") && strstr(msg, "warps/SM, contributor sets equivalent"), "%s",
         msg);
  snprintf(cmd, sizeof cmd, "%s regalloc %s/wmma_w2x2_r2x2.sm_89.sass --free -q 2>&1", rs_check_cli, DIR);
  CHECKF(rs_check_run(cmd, msg, sizeof msg) == 0 && !msg[0], "%s", msg);
  snprintf(cmd, sizeof cmd, "%s regalloc %s/wmma_w2x2_r2x2.sm_89.sass --free --pinned 2>&1", rs_check_cli, DIR);
  CHECK(rs_check_run(cmd, msg, sizeof msg) == 2);
  /* bad input: file:line, exit 2; an output that cannot be written: exit 2 */
  char bad[] = "/tmp/rs_test_sass_free_bad.XXXXXX";
  int fd = mkstemp(bad);
  CHECK(fd >= 0);
  if (fd >= 0) {
    const char *t = "\t.section\t.text.k,\"ax\",@progbits\n\t.headerflags\t@\"EF_CUDA_SM89\"\nk:\n        /*0000*/ FROB R1, R2 ;\n";
    CHECK(write(fd, t, strlen(t)) == (ssize_t)strlen(t));
    close(fd);
    snprintf(cmd, sizeof cmd, "%s regalloc %s --free 2>&1", rs_check_cli, bad);
    char want[100];
    snprintf(want, sizeof want, "%s:", bad);
    int rc = rs_check_run(cmd, msg, sizeof msg);
    CHECKF(rc == 2 && strstr(msg, want), "rc %d: %s", rc, msg);
    unlink(bad);
  }
  snprintf(cmd, sizeof cmd, "%s regalloc %s/wmma_w2x2_r2x2.sm_89.sass --free --quick -o /nonexistent/dir/out.sass 2>&1",
           rs_check_cli, DIR);
  CHECKF(rs_check_run(cmd, msg, sizeof msg) == 2 && strstr(msg, "cannot write"), "%s", msg);
}

/* Recolour sgemm_t4x4 in process; returns the module and the written text. */
static rs_module *recolour(char **text, rs_preg ***assign_out) {
  char path[300];
  snprintf(path, sizeof path, "%s/sgemm_t4x4.sm_89.sass", DIR);
  rs_err e = {{0}};
  rs_module *m = rs_module_load(path, NULL, &e);
  CHECKF(m, "%s", e.msg);
  if (!m) return NULL;
  rs_preg **a = rs_xcalloc(m->nfuncs + 1, sizeof *a);
  for (uint32_t k = 0; k < m->nfuncs; k++) {
    const rs_func *f = m->funcs[k];
    a[k] = rs_xcalloc(f->nvregs + 1, sizeof **a);
    rs_problem *p = rs_problem_build(f, &e);
    CHECK(p != NULL);
    rs_sass_free_stats st;
    if (p) rs_sass_free_colour(f, p, true, a[k], &st);
    CHECKF(p && !st.kept && st.r_after < st.r_before, "%u -> %u", st.r_before, st.r_after);
    rs_problem_free(p);
  }
  *text = rs_sass_free_write(m, a);
  *assign_out = a;
  return m;
}

static void free_assign(rs_module *m, rs_preg **a) {
  for (uint32_t k = 0; m && k < m->nfuncs; k++) free(a[k]);
  free(a);
}

/* Mutate one register operand of the written text: caught at that instruction, that register. */
static void test_mutation(void) {
  char *text = NULL;
  rs_preg **a = NULL;
  rs_module *m = recolour(&text, &a);
  if (!m) return;
  rs_err e = {{0}};
  rs_sass_free_fail f[8];
  CHECK(rs_sass_free_check(m, text, f, 8, NULL, &e) == 0);
  /* the written listing, parsed: find an FFMA in the main loop and change its first source to
   * the register of its second source (a different value, live there) */
  rs_module *w = rs_module_parse("written.sass", rs_xstrndup(text, strlen(text)), strlen(text), RS_SRC_SASS, NULL, &e);
  CHECKF(w, "%s", e.msg);
  const rs_func *g = w ? w->funcs[0] : NULL;
  uint32_t hits = 0;
  for (uint32_t i = g ? g->ninsts / 2 : 0; g && i < g->ninsts && !hits; i++) {
    const rs_inst *in = &g->insts[i];
    if (strcmp(rs_func_opcode(g, in), "FFMA") || in->nops < 4) continue;
    const rs_operand *s1 = &g->ops[in->first_op + 1], *s2 = &g->ops[in->first_op + 2];
    if (s1->kind != RS_OP_VREG || s2->kind != RS_OP_VREG || s1->reg == s2->reg) continue;
    char reg[24];
    g->tgt->format_preg(g->tgt, (rs_preg){g->truth[s2->reg].unit, 3}, reg, sizeof reg);
    size_t n = strlen(text), rl = strlen(reg);
    char *mut = rs_xmalloc(n + rl + 1);
    memcpy(mut, text, s1->text_off);
    memcpy(mut + s1->text_off, reg, rl);
    strcpy(mut + s1->text_off + rl, text + s1->text_off + s1->text_len);
    uint32_t nf = rs_sass_free_check(m, mut, f, 8, NULL, &e);
    CHECKF(nf > 0 && nf != UINT32_MAX, "mutated FFMA at %04x not caught (%u)", (unsigned)in->addr, nf);
    if (nf > 0 && nf != UINT32_MAX) {
      bool found = false;
      for (uint32_t k = 0; k < nf && k < 8; k++)
        found |= f[k].addr == in->addr && !strcmp(f[k].reg, reg) && strstr(f[k].what, "contributor set differs") &&
                 !strcmp(f[k].func, "sgemm_tiled");
      CHECKF(found, "first failure: %s /*%04x*/ %s: %s (mutated %04x to %s)", f[0].func, (unsigned)f[0].addr, f[0].reg,
             f[0].what, (unsigned)in->addr, reg);
    }
    free(mut);
    hits++;
  }
  CHECK(hits == 1);
  rs_module_free(w);
  free(text);
  /* move one pair value, consistently in all its operands, onto an odd register no value uses:
   * the same definitions reach every read, so only the hardware rules can object; the re-parse
   * of the written listing refuses the misaligned pair (file:line of the written text) */
  const rs_func *f0 = m->funcs[0];
  rs_problem *p = rs_problem_build(f0, &e);
  unsigned top = 0;
  for (uint32_t v = 0; v < f0->nvregs; v++)
    if (a[0][v].unit < 255 && a[0][v].unit + rs_lanes_units(a[0][v].lanes) > top) top = a[0][v].unit + rs_lanes_units(a[0][v].lanes);
  int32_t pair = -1;
  for (uint32_t v = 0; p && v < p->nvars && pair < 0; v++)
    if (p->vars[v].width == 2 && a[0][p->vars[v].fvreg].unit < 255) pair = (int32_t)p->vars[v].fvreg;
  CHECK(pair >= 0);
  if (pair >= 0) {
    a[0][pair].unit = top | 1;
    text = rs_sass_free_write(m, a);
    uint32_t nf = rs_sass_free_check(m, text, f, 8, NULL, &e);
    char want[64];
    snprintf(want, sizeof want, "R%u is not an aligned pair", top | 1);
    CHECKF(nf == UINT32_MAX && strstr(e.msg, "sgemm_t4x4.sm_89.sass (as written):") && strstr(e.msg, want), "odd pair: %u: %s",
           nf, e.msg);
    free(text);
  }
  rs_problem_free(p);
  free_assign(m, a);
  rs_module_free(m);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  test_cli();
  test_mutation();
  test_fixtures();
  return rs_check_done("test_sass_free");
}
