/* test_sass_infer.c - sass/infer.c on real nvdisasm 11.8 -plr rows (tests/fixtures/sass-forms/
 * *.formplr: the rows of issue 42's forms in our kernels' sm_80/sm_90 listings, with headers):
 * every form there is inferred, instances agreeing, and the roles equal the table row's variant
 * (sass/optable.c, measured by hand against the same rows), but WARPSYNC.EXCLUSIVE, whose R3
 * -plr leaves unmarked on one sm_80 instance (kept unknown by name, as infer.c must), and
 * B2R.RESULT RZ, P0, whose RZ (no register) infers as a read. No nvdisasm is run. */
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
    if (!strncmp(r->form, "WARPSYNC.EXCLUSIVE", 18)) {
      CHECKF(r->why && strstr(r->why, "neither read nor written"), "%s: %s", r->form, r->why ? r->why : r->ops);
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
  CHECKF(agree >= 10 && refused == 1, "%u agree, %u refused", agree, refused);
  rs_sass_infer_free(&x);
  rs_check_free_list(list, nl);
  return rs_check_done("test_sass_infer");
}
