/* test_mcode.c - the machine-code pipeline (mcode/) through its library entry, on real ptxas
 * output (tests/fixtures/sass: sgemm_t4x4 sm_90 and sm_89, calib sm_90, with their listings),
 * no nvdisasm needed (the listing is given, the crosscheck left to test_sass_emit):
 *   1. one rs_mc per input: free recolouring passes its own check (same values, verifier), the
 *      re-lift is kept, ptxas's scoreboards are in the Problem; lowering it writes a cubin with
 *      the counts the re-lift needs and no hazard, and leaves the rs_mc's cubin as read;
 *   2. pinned: ptxas's registers, and a pinned lowering is byte-identical to the input;
 *   3. the one same-values check: the identity write-back is the listing and the same values;
 *      one use's register replaced by another value's is caught and named, and `lower` would
 *      refuse it as no recolouring;
 *   4. the rooms: no file of sass/ includes cubin/, mcode/ or front/'s loader; no file of cubin/
 *      includes sass/, mcode/ or front/ (the arrows go down: cli -> mcode -> {sass, cubin}). */
#include "check.h"
#include "mcode/mcode.h"
#include "sass/sass.h"
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIXDIR "tests/fixtures/sass/"

static void free_and_lower(const char *k) {
  char cp[256], lp[256], out[] = "/tmp/rs-test-mcode-XXXXXX";
  snprintf(cp, sizeof cp, FIXDIR "%s.cubin", k);
  snprintf(lp, sizeof lp, FIXDIR "%s.sass", k);
  rs_err e = {{0}};
  rs_mc mc;
  if (rs_mc_cubin(&mc, cp, lp, NULL, NULL, true, &e)) {
    CHECKF(0, "%s: %s", k, e.msg);
    return;
  }
  CHECK(rs_mc_has_cubin(&mc) && mc.scoreboards && mc.m->nfuncs == mc.cub.nfuncs);
  uint8_t *before = rs_xmalloc(mc.cub.len);
  memcpy(before, mc.cub.bytes, mc.cub.len);
  rs_mc_recolour r;
  uint32_t fails = rs_mc_free(&mc, &r, &e);
  CHECKF(fails == 0 && r.checked && r.text && r.relift, "%s: %u failures (%s)", k, fails,
         r.msgs.n ? r.msgs.v[0] : e.msg);
  /* the re-lift is for the cubin's architecture: lowering takes it as it is (no second lift) */
  char sm[16];
  snprintf(sm, sizeof sm, "sm_%u", mc.cub.sm);
  CHECKF(r.relift && !strcmp(r.relift->tgt->name, sm), "%s: re-lifted as %s", k, r.relift ? r.relift->tgt->name : "-");
  uint32_t sb = 0;
  for (uint32_t q = 0; q < r.nfuncs; q++) {
    CHECKF(r.fn[q].vpass && !r.fn[q].differ && r.fn[q].uses > 0, "%s: %s", k, r.fn[q].name);
    CHECKF(r.fn[q].after <= r.fn[q].before, "%s: %s: %u -> %u R", k, r.fn[q].name, r.fn[q].before, r.fn[q].after);
    sb += r.fn[q].nsb;
  }
  CHECKF(!strcmp(k, "calib.sm_90") || sb > 0, "%s: no scoreboard conflicts", k); /* calib has no in-flight pair */
  int fd = mkstemp(out);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  rs_mc_lower_opts o = {.out = out, .hazards_refuse = true};
  rs_mc_lowered lr;
  int st = fails ? -1 : rs_mc_lower(&mc, r.text, r.relift, &o, &lr, &e);
  CHECKF(st == 0 && lr.lowered && !lr.hazards, "%s: lowering: %d: %s", k, st, e.msg);
  if (st == 0) {
    for (uint32_t q = 0; q < mc.cub.nfuncs; q++) {
      uint32_t j = 0;
      while (j < r.relift->nfuncs && strcmp(r.relift->funcs[j]->name, mc.cub.funcs[q].name)) j++;
      CHECKF(j < r.relift->nfuncs && lr.regcount[q] == rs_sass_regcount_of(r.relift->funcs[j]), "%s: count %u", k, q);
    }
    rs_cubin w;
    CHECKF(!rs_cubin_load(out, &w, &e), "%s", e.msg);
    CHECKF(w.len == mc.cub.len && (lr.st.changed == 0) == !memcmp(w.bytes, before, w.len), "%s: %u re-encoded", k,
           lr.st.changed);
    uint32_t h = 0;
    char first[400];
    CHECKF(!rs_sass_hazards_listing(&w, r.text, out, &h, first, sizeof first, &e) && !h, "%s: %u hazards %s", k, h,
           first);
    rs_cubin_free(&w);
    rs_mc_lowered_free(&lr);
  }
  CHECKF(!memcmp(mc.cub.bytes, before, mc.cub.len), "%s: lowering changed the input held in rs_mc", k);
  /* 2. pinned: ptxas's own registers, lowered byte-identically */
  for (uint32_t q = 0; q < mc.m->nfuncs; q++) {
    rs_mc_pin pr;
    CHECKF(rs_mc_pinned(&mc, q, &pr, &e) == 0 && pr.nconf > 0, "%s: pinned %u: %s", k, q,
           pr.msgs.n ? pr.msgs.v[0] : e.msg);
    rs_mc_pin_free(&pr);
  }
  rs_mc_lower_opts op = {.out = out, .must_be_identical = true, .hazards_refuse = true};
  st = rs_mc_lower(&mc, mc.m->text, mc.m, &op, &lr, &e);
  CHECKF(st == 0 && lr.identical && lr.st.changed == 0, "%s: pinned lowering: %d: %s", k, st, e.msg);
  rs_mc_lowered_free(&lr);
  unlink(out);
  free(before);
  rs_mc_recolour_free(&r);
  rs_mc_free_input(&mc);
}

/* 3. one use's register replaced by another value's (same spelling width): that operand reads
 * another definition; a whole-value exchange (the writer's) keeps the partition */
static void swap_caught(void) {
  rs_err e = {{0}};
  rs_mc mc;
  if (rs_mc_listing(&mc, FIXDIR "sgemm_t4x4.sm_90.sass", NULL, NULL, &e)) {
    CHECKF(0, "%s", e.msg);
    return;
  }
  const rs_func *f = mc.m->funcs[0];
  const char *src = mc.m->text;
  /* a use of value x printed as "Rn", and another value's register of the same width of text */
  const rs_operand *u = NULL, *o = NULL;
  for (uint32_t i = 0; i < f->nops && !o; i++) {
    const rs_operand *a = &f->ops[i];
    if (a->kind != RS_OP_VREG || (a->flags & RS_F_DEF) || a->text_len < 2 || src[a->text_off] != 'R') continue;
    if (!u) {
      u = a;
      continue;
    }
    if (a->reg != u->reg && a->text_len == u->text_len && memcmp(src + a->text_off, src + u->text_off, u->text_len))
      o = a;
  }
  CHECK(u && o);
  /* the writer's whole-value exchange of u's and o's values: the same partition */
  rs_preg **as = rs_xcalloc(2, sizeof *as);
  as[0] = rs_xcalloc(f->nvregs + 1, sizeof *as[0]);
  for (uint32_t v = 0; v < f->nvregs; v++) as[0][v] = f->truth[v];
  char *text = NULL;
  rs_module *n = NULL;
  CHECKF(!rs_mc_write(&mc, as, "(identity)", &text, &n, &e), "%s", e.msg);
  CHECK(text && !strcmp(text, src)); /* pinned write-back: the listing itself */
  char why[300] = "";
  CHECK(n && rs_sass_same_values(f, n->funcs[0], NULL, why, sizeof why) == 0);
  rs_module_free(n);
  free(text);
  if (u && o) {
    char *t = rs_xstrndup(src, strlen(src));
    memcpy(t + u->text_off, src + o->text_off, u->text_len);
    rs_module *b = rs_sass_from_text("(one operand)", t, strlen(t), NULL, NULL, &e);
    CHECKF(b != NULL, "%s", e.msg);
    if (b) {
      CHECKF(rs_sass_same_values(f, b->funcs[0], NULL, why, sizeof why) > 0 && strstr(why, "reads another definition"),
             "%s", why);
      uint32_t values = 0;
      CHECKF(rs_mc_is_recolouring(&mc, b, &values, &e) == 1 && strstr(e.msg, "not a recolouring"), "%s", e.msg);
    }
    rs_module_free(b);
  }
  free(as[0]);
  free(as);
  rs_mc_free_input(&mc);
}

/* 4. includes of every .c/.h of dir that name one of the folders in `banned` */
static void rooms(const char *dir, const char *const *banned) {
  DIR *d = opendir(dir);
  CHECKF(d != NULL, "%s", dir);
  struct dirent *de;
  while (d && (de = readdir(d))) {
    size_t n = strlen(de->d_name);
    if (n < 3 || (strcmp(de->d_name + n - 2, ".c") && strcmp(de->d_name + n - 2, ".h"))) continue;
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    rs_err e = {{0}};
    size_t len;
    char *s = rs_read_file(p, &len, &e);
    for (char *q = s; q && (q = strstr(q, "#include \"")); q++)
      for (int b = 0; banned[b]; b++)
        CHECKF(strncmp(q + 10, banned[b], strlen(banned[b])), "%s includes %.40s: a room calling one it must not", p,
               q + 10);
    free(s);
  }
  if (d) closedir(d);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  free_and_lower("sgemm_t4x4.sm_90");
  free_and_lower("sgemm_t4x4.sm_89");
  free_and_lower("calib.sm_90");
  swap_caught();
  static const char *const not_from_sass[] = {"cubin/", "mcode/", "front/load", "corpus/", NULL};
  static const char *const not_from_cubin[] = {"sass/", "mcode/", "front/", "corpus/", NULL};
  rooms("sass", not_from_sass);
  rooms("cubin", not_from_cubin);
  return rs_check_done("test_mcode");
}
