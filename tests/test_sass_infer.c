/* test_sass_infer.c - sass/infer.c on real nvdisasm 11.8 -plr rows (tests/fixtures/sass-forms/
 * *.formplr: the rows of issue 42's forms in our kernels' sm_80/sm_90 listings, with headers):
 * every form there is inferred, instances agreeing, and the roles equal the table row's variant
 * (sass/optable.c, measured by hand against the same rows), but the control instructions
 * WARPSYNC.EXCLUSIVE, ACQBULK and PREEXIT (kept unknown by name: their control-flow role is not
 * in -plr), and B2R.RESULT RZ, P0, whose RZ (no register) infers as a read. No nvdisasm is run.
 * Part 2: the whole -plr listings of the same kernels (*.plr.sass.gz, `corpus disasm --plr`)
 * with 19 of the table's rows masked (RS_TEST_MASK_ROWS's forms, the test facility): every form
 * they hide is inferred, and its roles equal the hidden row's (IMAD.WIDE's d2 s1 s1 s2 among
 * them: IMAD.WIDE.U32 R2, R7, 0x4, R2 fits several assignments; infer.c's order picks it). */
#include "check.h"
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  char **list;
  int nl = rs_check_list("tests/fixtures/sass-forms", ".formplr", &list);
  CHECKF(nl == 6, "%d .formplr files", nl);
  rs_sass_infer x = {0};
  for (int i = 0; i < nl; i++) {
    rs_err e = {{0}};
    char *t = rs_read_file(list[i], NULL, &e);
    CHECKF(t != NULL, "%s", e.msg);
    if (t) rs_sass_infer_listing(t, true, &x);
    free(t);
  }
  uint32_t agree = 0, refused = 0;
  for (uint32_t i = 0; i < x.n; i++) {
    const rs_sass_inferred *r = &x.v[i];
    if (!strncmp(r->form, "WARPSYNC.EXCLUSIVE", 18) || !strcmp(r->form, "ACQBULK") || !strcmp(r->form, "PREEXIT")) {
      /* control instructions: their control-flow role is the table's, never -plr's */
      CHECKF(r->why && strstr(r->why, "a control instruction"), "%s: %s", r->form, r->why ? r->why : r->ops);
      refused++;
      continue;
    }
    const char *variant = NULL;
    char why[300];
    const rs_sass_op *row = rs_sass_lookup(r->form, strlen(r->form), r->nops, &variant, why, sizeof why);
    CHECKF(row != NULL, "%s/%u: %s", r->form, r->nops, why);
    CHECKF(!r->why, "%s/%u: %s", r->form, r->nops, r->why ? r->why : "");
    if (!row || r->why) continue;
    size_t vl = strcspn(variant, "|");
    bool same = strlen(r->ops) == vl && !strncmp(r->ops, variant, vl);
    if (!strcmp(r->form, "B2R.RESULT") && r->nops == 2) same = !strcmp(r->ops, "s1 d1") && !strncmp(variant, "d1 d1", 5);
    if (!strcmp(r->form, "UIMAD.WIDE.U32") && r->nops == 4) same = !strcmp(r->ops, "d2 s1 s1 s2") && !strncmp(variant, "d2 s1 s1 s2", 11);
    CHECKF(same, "%s/%u: -plr gives '%s', the table '%.*s'", r->form, r->nops, r->ops, (int)vl, variant);
    agree += same;
  }
  printf("infer: %u forms, %u equal to the table's rows, %u kept unknown by name\n", x.n, agree, refused);
  CHECKF(agree >= 10 && refused == 3, "%u agree, %u refused", agree, refused);
  rs_sass_infer_free(&x);
  rs_check_free_list(list, nl);

  /* part 2: whole listings, rows masked */
  static const char mask[] = "HSET2,HMUL2,B2R.RESULT,MOVM.16.MT88,F2FP.UNPACK_B,UIMAD.X,UIMAD.WIDE,IADD3,ISETP,LOP3.LUT,"
                             "FFMA,SHF,IMAD.WIDE,SYNCS.CCTL.IV,S2R,MOV,LDG.E,STG.E,IMAD";
  nl = rs_check_list("tests/fixtures/sass-forms", ".plr.sass.gz", &list);
  int nforms42 = 0;
  rs_sass_infer y = {0};
  y.mask = mask;
  for (int i = 0; i < nl; i++) {
    if (!strstr(list[i], "/forms42")) continue; /* dmax.*: a form the table lacks (test_sass_inferred.sh) */
    nforms42++;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "gzip -dc '%s'", list[i]);
    FILE *fp = popen(cmd, "r");
    CHECKF(fp != NULL, "%s", cmd);
    if (!fp) continue;
    size_t cap = 1 << 20, n = 0, k;
    char *t = malloc(cap);
    while ((k = fread(t + n, 1, cap - n - 1, fp)) > 0)
      if ((n += k) + 1 >= cap) t = realloc(t, cap *= 2);
    t[n] = 0;
    CHECKF(pclose(fp) == 0 && n > 10000, "%s: %zu bytes", list[i], n);
    rs_sass_infer_listing(t, false, &y);
    free(t);
  }
  CHECKF(nforms42 == 6, "%d forms42 .plr.sass.gz files", nforms42);
  uint32_t same = 0, rows = 0;
  for (uint32_t i = 0; i < y.n; i++) {
    const rs_sass_inferred *r = &y.v[i];
    const char *variant = NULL;
    char why[300];
    const rs_sass_op *row = rs_sass_lookup(r->form, strlen(r->form), r->nops, &variant, why, sizeof why);
    CHECKF(row && rs_sass_masked(mask, row->form), "%s/%u: inferred but not a masked row", r->form, r->nops);
    CHECKF(!r->why, "%s/%u (%u instances): not inferred: %s", r->form, r->nops, r->instances, r->why ? r->why : "");
    if (!row || r->why) continue;
    rows++;
    /* the table's row among its variants with as many operands (B2R.RESULT RZ, P0: RZ read) */
    size_t vl = strcspn(variant, "|");
    /* equal role by role, except where no instance names a register (ISETP P0, PT, ...: the
     * second result is always PT here; read as s1, nothing to allocate) */
    bool eq = true;
    const char *a = r->ops, *b = variant;
    for (uint32_t o = 0; o < r->nops && eq; o++) {
      size_t al = strcspn(a, " "), bl = strcspn(b, " |");
      eq = (r->zero_only >> o & 1) || (al == bl && !strncmp(a, b, al));
      a += al + (a[al] == ' '), b += bl + (b[bl] == ' ');
    }
    CHECKF(eq, "%s/%u: -plr gives '%s', the masked row '%.*s'", r->form, r->nops, r->ops, (int)vl, variant);
    same += eq;
  }
  printf("infer (rows masked): %u forms inferred from whole listings, %u equal to the masked rows\n", rows, same);
  CHECKF(rows >= 35 && same == rows, "%u of %u", same, rows);
  rs_sass_infer_free(&y);
  rs_check_free_list(list, nl);
  return rs_check_done("test_sass_infer");
}
