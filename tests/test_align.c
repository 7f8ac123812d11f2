/* test_align - the loose alignment across greedy (mir/align.c) on MIR of our own writing, in the
 * shapes of rocRAND mrg32k3a poisson's SGPR-round instance on gfx940 (docs/real-suite.md, session
 * 14): two adjacent SGPR copies whose crosswise pairing matches as many instructions as the right
 * one, and LLVM's lane writes, which carry implicit operands of the whole spilled tuple that the
 * instance does not. At f504aa2 the first pairs crosswise (the copy of %1's high half links to
 * $sgpr5, so %1 "has two registers") and the lane writes pair with nothing. */
#include "check.h"
#include "front/front.h"
#include "mir/align.h"
#include <stdlib.h>
#include <string.h>

static const char *from_mir =
    "---\n"
    "name: f\n"
    "tracksRegLiveness: true\n"
    "registers:\n"
    "  - { id: 1, class: sgpr_64, preferred-register: '' }\n"
    "  - { id: 2, class: sgpr_64, preferred-register: '' }\n"
    "  - { id: 3, class: sreg_64, preferred-register: '' }\n"
    "  - { id: 4, class: sreg_64, preferred-register: '' }\n"
    "body: |\n"
    "  bb.0:\n"
    "    %1:sgpr_64 = S_MOV_B64 5\n"
    "    %2:sgpr_64 = S_MOV_B64 7\n"
    "    undef %3.sub1:sreg_64 = COPY %2.sub1\n"
    "    %3.sub0:sreg_64 = COPY %1.sub1\n"
    "    undef %4.sub1:sreg_64 = COPY %3.sub1\n"
    "    $vgpr1 = V_WRITELANE_B32 %4.sub1, 1, $vgpr1\n"
    "    S_ENDPGM 0, implicit %3, implicit %4, implicit $vgpr1\n"
    "...\n";

/* LLVM: %1 in s[12:13], %2 and %3 in s[4:5] (the high half's copy an identity, deleted), %4 in
 * s[2:3]; the lane write names s3 and the whole pair */
static const char *to_mir =
    "---\n"
    "name: f\n"
    "tracksRegLiveness: true\n"
    "body: |\n"
    "  bb.0:\n"
    "    $sgpr12_sgpr13 = S_MOV_B64 5\n"
    "    $sgpr4_sgpr5 = S_MOV_B64 7\n"
    "    $sgpr4 = COPY $sgpr13\n"
    "    $sgpr3 = COPY $sgpr5\n"
    "    $vgpr1 = V_WRITELANE_B32 $sgpr3, 1, $vgpr1, implicit-def $sgpr2_sgpr3, implicit $sgpr2_sgpr3\n"
    "    S_ENDPGM 0, implicit $sgpr4_sgpr5, implicit $sgpr2_sgpr3, implicit $vgpr1\n"
    "...\n";

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  rs_err e = {{0}};
  rs_module *a = rs_module_parse("from.mir", strdup(from_mir), strlen(from_mir), RS_SRC_MIR, "gfx940", &e);
  CHECKF(a != NULL, "%s", e.msg);
  rs_module *b = a ? rs_module_parse("to.mir", strdup(to_mir), strlen(to_mir), RS_SRC_MIR, "gfx940", &e) : NULL;
  CHECKF(b != NULL, "%s", e.msg);
  if (!a || !b) {
    rs_module_free(a);
    rs_module_free(b);
    return rs_check_done("test_align");
  }
  const rs_func *f = a->funcs[0], *g = b->funcs[0];
  rs_loose lo;
  CHECKF(rs_align_loose(f, g, &lo, &e) == 0, "%s", e.msg);
  /* instructions: from 0 S_MOV, 1 S_MOV, 2 COPY(sub1), 3 COPY(sub0), 4 COPY(sub1), 5 WRITELANE, 6 END;
   * to 0 S_MOV, 1 S_MOV, 2 COPY s4, 3 COPY s3, 4 WRITELANE, 5 END */
  CHECKF(g->ninsts == 6 && f->ninsts == 7, "%u and %u instructions", f->ninsts, g->ninsts);
  if (g->ninsts == 6) {
    CHECKF(lo.pair[2] == 3, "`$sgpr4 = COPY $sgpr13` pairs with `%%3.sub0 = COPY %%1.sub1` (got %d): an odd SGPR "
                            "cannot be the high half of an aligned pair's copy",
           lo.pair[2]);
    CHECKF(lo.pair[3] == 4, "`$sgpr3 = COPY $sgpr5` pairs with `undef %%4.sub1 = COPY %%3.sub1` (got %d)", lo.pair[3]);
    CHECKF(lo.pair[4] == 5, "the lane write pairs though LLVM's has the pair's implicit operands (got %d)", lo.pair[4]);
  }
  /* every link of %1 gives one register (s12; its high half copied from s13) */
  bool one = true;
  uint32_t n1 = 0;
  int64_t b1 = -1;
  for (uint32_t i = 0; i < lo.nlinks; i++)
    if (lo.links[i].from_vreg == 1 && lo.links[i].to_vreg < 0) {
      int64_t base = (int64_t)lo.links[i].unit + lo.links[i].delta;
      if (b1 < 0) b1 = base;
      one &= base == b1;
      n1++;
    }
  CHECKF(n1 >= 2 && one, "%%1's %u links agree on one register", n1);
  rs_loose_free(&lo);
  rs_module_free(a);
  rs_module_free(b);
  return rs_check_done("test_align");
}
