/* test_liveins.c - liveness against LLVM's own facts.
 *
 * On fully allocated MIR (after virtregrewriter,1) every register is physical and llc-14 prints
 * each block's live-ins with lane masks. Our liveness, run on the same file, must produce
 * exactly those sets (registers and lanes) for every block of every AMD fixture.
 * Documented exceptions:
 *  - reserved registers (exec, m0, mode, ...) are neither tracked by us nor printed by LLVM, so
 *    they are left out of both sides;
 *  - post-RA MIR no longer says which lanes of a tuple read are undefined (an instruction reading
 *    $vgpr20_vgpr21 where the virtual register only ever had sub0 written). LLVM knew it from the
 *    virtual register's sub-ranges. We recover the same fact mechanically: align the final MIR
 *    with the same function after greedy,1 (mir/align.c), run our liveness there, and drop from
 *    each aligned read the lanes no definition reaches. The test counts these lanes. */
#include "front/front.h"
#include "check.h"
#include "mir/align.h"
#include "analysis/liveness.h"
#include <stdlib.h>
#include <string.h>

static int compare_func(const rs_func *f, const char *path) {
  rs_err e = {{0}};
  rs_live *l = rs_live_compute(f, &e);
  CHECKF(l != NULL, "%s: %s", path, e.msg);
  if (!l) return 0;
  int bad = 0;
  rs_word *got = calloc(l->words + 1, sizeof *got), *want = calloc(l->words + 1, sizeof *want);
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    const rs_block *b = &f->blocks[bi];
    rs_live_block_in(l, bi, got);
    memset(want, 0, sizeof *want * l->words);
    for (uint32_t i = 0; i < b->nliveins; i++) {
      rs_operand op = {.kind = RS_OP_PREG, .reg = b->liveins[i].reg.unit, .lanes = b->liveins[i].reg.lanes};
      uint32_t s = rs_live_op_slot(l, &op);
      if (s != UINT32_MAX) rs_bs_or_bits(want, s, rs_live_op_lanes(l, &op));
    }
    for (uint32_t u = 0; u < f->tgt->nunits; u++) {
      uint64_t g = rs_bs_get_bits(got, l->pbase + 2 * u, 2), w = rs_bs_get_bits(want, l->pbase + 2 * u, 2);
      if (g != w) {
        char name[32];
        f->tgt->format_preg(f->tgt, (rs_preg){u, 3}, name, sizeof name);
        if (bad < 5)
          fprintf(stderr, "%s:%u: %s: %s lanes: computed 0x%llx, llc printed 0x%llx\n", path,
                  b->line, b->name, name, (unsigned long long)g, (unsigned long long)w);
        bad++;
      }
    }
  }
  free(got);
  free(want);
  rs_live_free(l);
  return bad;
}

/* Remove from the final form's reads the lanes that are undefined in the postsplit form. */
static unsigned apply_undef_lanes(rs_func *fin, const char *final_path) {
  char path[1024];
  size_t n = strlen(final_path) - strlen(".final.mir");
  snprintf(path, sizeof path, "%.*s.postsplit.mir", (int)n, final_path);
  rs_err e = {{0}};
  rs_module *pm = rs_module_load(path, NULL, &e);
  CHECKF(pm != NULL, "%s", e.msg);
  if (!pm) return 0;
  const rs_func *ps = pm->funcs[0];
  rs_alignment a;
  int rc = rs_align(ps, fin, &a, &e);
  CHECKF(rc == 0, "align %s: %s", path, e.msg);
  unsigned cleared = 0;
  if (rc == 0) {
    rs_live *l = rs_live_compute(ps, &e);
    for (uint32_t i = 0; i < fin->nops; i++) {
      int32_t po = a.op_map[i];
      if (po < 0 || ps->ops[po].kind != RS_OP_VREG || !l->uundef[po]) continue;
      rs_operand *fo = &fin->ops[i];
      int d = __builtin_ctzll(ps->ops[po].lanes) / 2 - __builtin_ctzll(fo->lanes) / 2;
      rs_lanes u = d >= 0 ? l->uundef[po] >> (2 * d) : l->uundef[po] << (-2 * d);
      cleared += (unsigned)__builtin_popcountll(fo->lanes & u);
      fo->lanes &= ~u;
    }
    rs_live_free(l);
    rs_alignment_free(&a);
  }
  rs_module_free(pm);
  return cleared;
}

/* archs: every AMD architecture's fixtures (llc-14: amd = gfx90a, gfx908, gfx1030; llc-16: gfx940,
 * gfx1100), each counted on its own line. */
static const struct { const char *dir; int min; } dirs[] = {
    {"tests/fixtures/amd", 10}, {"tests/fixtures/gfx908", 3}, {"tests/fixtures/gfx940", 3},
    {"tests/fixtures/gfx1030", 3}, {"tests/fixtures/gfx1100", 3}};

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
    char **files;
    int n = rs_check_list(dirs[d].dir, ".final.mir", &files);
    CHECKF(n >= dirs[d].min, "expected the fixtures of %s, found %d", dirs[d].dir, n);
    uint32_t blocks = 0, regs = 0, undef_lanes = 0;
    for (int i = 0; i < n; i++) {
      rs_err e = {{0}};
      rs_module *m = rs_module_load(files[i], NULL, &e);
      CHECKF(m != NULL, "%s", e.msg);
      if (!m) continue;
      for (uint32_t k = 0; k < m->nfuncs; k++) {
        rs_func *f = m->funcs[k];
        undef_lanes += apply_undef_lanes(f, files[i]);
        CHECKF(f->allocated, "%s: %s still has virtual registers", files[i], f->name);
        for (uint32_t bi = 0; bi < f->nblocks; bi++) {
          /* every block but the entry prints its live-ins after RA when it has any */
          blocks++;
          regs += f->blocks[bi].nliveins;
        }
        int bad = compare_func(f, files[i]);
        CHECKF(bad == 0, "%s: %s: %d live-in lane mismatches", files[i], f->name, bad);
      }
      rs_module_free(m);
    }
    printf("live-ins compared (%s): %d files, %u blocks, %u printed live-in registers; "
           "%u undefined tuple lanes taken from the greedy,1 stage\n", dirs[d].dir, n, blocks, regs, undef_lanes);
    CHECK(regs > 30u * (unsigned)dirs[d].min);
    rs_check_free_list(files, n);
  }
  return rs_check_done("test_liveins");
}
