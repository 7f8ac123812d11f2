/* test_corpus_sass.c - corpus form `sass` from real ptxas 13 output, without running a compiler
 * or nvdisasm: a work directory is made of the committed fixtures (completed listings, ptxas -v,
 * PTX) for the grid points of tests/data/grid-sass.tsv, as `corpus build`'s compile jobs leave
 * it, then assembled:
 *  - every family x NVIDIA arch (sm_75 sm_80 sm_86 sm_89 sm_90) has a sass instance with a truth,
 *    and a ptx instance whose truth, where the PTX->SASS match gives one, passes the PTX Problem
 *    (corpus/ptxtruth.c; on these three big kernels it gives none: tests/test_ptxtruth.c);
 *  - each truth is exact: re-parsed from the stored raw listing, it colours the rebuilt Problem
 *    with 0 conflicts and every register in its class, and equals the listing's own registers;
 *  - ref_regs = ptxas -v, highest R + 3 (the listing's .sectioninfo SHI_REGISTERS agrees);
 *  - normalization: stored text = a fresh normalization, name map exact both ways, SASS opcodes
 *    on the shared vocabulary (FFMA -> FMA, HMMA -> MMA, LDG -> LD.global ...), size reduction;
 *  - a refused listing (T.sass.FAILED) and a failed target (T.FAILED) are build failures;
 *  - `corpus export --subset same-nv` writes the SASS truths (the Same-NV training set).
 * The nvdisasm path given to the assembler is never run (every variant is in the work dir). */
#include "front/front.h"
#include "check.h"
#include "corpus/assemble.h"
#include "corpus/normalize.h"
#include "corpus/truth.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const archs[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90"};
static const char *const fixture[] = {"sgemm_t4x4", "wmma_w2x2_r2x2", "fa_hd64_bc32_half"}; /* grid order */

static int sh(const char *fmt, const char *a, const char *b) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, fmt, a, b);
  return system(cmd);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  rs_err e = {{0}};
  char tmp[] = "/tmp/rs-csass-XXXXXX";
  if (!mkdtemp(tmp)) return 1;
  char work[256], out[300], cmd[8192];
  snprintf(work, sizeof work, "%s/work", tmp);
  rs_variant *v = NULL;
  uint32_t n = 0;
  CHECKF(rs_grid_load("tests/data/grid-sass.tsv", &v, &n, &e) == 0 && n == 3, "%s", e.msg);
  rs_compile_opts o = {"corpus/kernels", work, NULL, "/usr/local/cuda/bin/nvcc", 1, 0, "unused", "unused"};
  for (uint32_t i = 0; i < n && i < 3; i++) {
    char dir[1024];
    rs_variant_dir(&o, &v[i], dir, sizeof dir);
    CHECK(sh("mkdir -p '%s'%s", dir, "") == 0);
    for (int a = 0; a < 5; a++) {
      char src[256], dst[1100];
      snprintf(src, sizeof src, "tests/fixtures/sass/%s.%s", fixture[i], archs[a]);
      snprintf(dst, sizeof dst, "%s/%s", dir, archs[a]);
      snprintf(cmd, sizeof cmd, "cp %s.sass %s.sass && cp %s.ptxas-v.txt %s.ptxas.txt", src, dst, src, dst);
      CHECK(system(cmd) == 0);
      /* form ptx on every arch (sm_75-sm_86 PTX: tests/fixtures/ptxtruth/nv, same recipes) */
      snprintf(cmd, sizeof cmd, "cp tests/fixtures/%s/%s.%s.ptx %s.ptx", a >= 3 ? "nv" : "ptxtruth/nv", fixture[i],
               archs[a], dst);
      CHECK(system(cmd) == 0);
    }
  }
  /* a fourth point: one target refused by our completion, one failed in ptxas */
  rs_variant bad = v[0];
  snprintf(bad.name, sizeof bad.name, "%.80s_broken", v[0].name);
  v = realloc(v, sizeof *v * 4);
  v[n++] = bad;
  {
    char dir[1024], d0[1024];
    rs_variant_dir(&o, &v[0], d0, sizeof d0);
    rs_variant_dir(&o, &bad, dir, sizeof dir);
    CHECK(sh("cp -r '%s' '%s'", d0, dir) == 0);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && rm sm_90.sass && echo 'regsweep corpus disasm: sm_90.cubin:12: function f address 0x0100: "
             "nvdisasm printed nothing and encoding ... is not one we decode' > sm_90.sass.FAILED && "
             "rm sm_75.sass && echo 'ptxas' > sm_75.FAILED",
             dir);
    CHECK(system(cmd) == 0);
  }
  snprintf(out, sizeof out, "%s/c.h5", tmp);
  rs_corpus *c = rs_corpus_create(out, &e);
  rs_assemble_stats st;
  CHECKF(c && rs_assemble(v, n, &o, 1, c, &st, &e) == 0, "%s", e.msg);
  CHECK(rs_corpus_close(c, &e) == 0);
  /* the broken point's duplicates: sass on sm_80/86/89, ptx on sm_80/86/89/90 */
  CHECKF(st.failures == 2 && st.duplicates == 3 + 4, "%u failures, %u duplicates", st.failures, st.duplicates);
  c = rs_corpus_open(out, &e);
  CHECKF(c != NULL, "%s", e.msg);
  if (!c) return rs_check_done("test_corpus_sass");
  unsigned have[3][5] = {{0}}, ptx = 0, ptx_truth = 0, sass = 0, ok = 0, vocab = 0;
  double raw_tok = 0, norm_tok = 0;
  for (uint64_t i = 0; i < rs_corpus_count(c); i++) {
    rs_instance in;
    if (rs_corpus_get(c, i, &in, 1, &e)) {
      CHECKF(0, "%s", e.msg);
      break;
    }
    if (!strcmp(in.form, "ptx")) {
      ptx++;
      ptx_truth += in.truth != NULL;
      if (in.truth) { /* a PTX truth must colour its own Problem */
        rs_module *pm = rs_module_parse(in.id, rs_xstrndup(in.raw, strlen(in.raw)), strlen(in.raw), RS_SRC_PTX, in.target, &e);
        rs_problem *pp = pm ? rs_problem_build(pm->funcs[0], &e) : NULL;
        rs_preg *pa = pm ? rs_xcalloc(pm->funcs[0]->nvregs + 1, sizeof *pa) : NULL;
        uint32_t nm = 0;
        CHECKF(pp && rs_truth_assign(pp, pm->funcs[0], in.truth, pa, &e) == 0 && rs_truth_check(pp, pa, &nm) == 0 && nm == 0,
               "%s: ptx truth does not pass", in.id);
        free(pa);
        rs_problem_free(pp);
        rs_module_free(pm);
      }
      rs_instance_clear(&in);
      continue;
    }
    CHECKF(!strcmp(in.form, "sass"), "%s", in.id);
    sass++;
    int fi = !strcmp(in.family, "sgemm") ? 0 : !strcmp(in.family, "wmma") ? 1 : 2, ai = -1;
    for (int a = 0; a < 5; a++)
      if (!strcmp(in.target, archs[a])) ai = a;
    if (ai >= 0) have[fi][ai]++;
    CHECKF(in.truth && in.same_nv && !in.same_amd, "%s: truth %p", in.id, (void *)in.truth);
    rs_module *m = rs_module_parse(in.id, rs_xstrndup(in.raw, strlen(in.raw)), strlen(in.raw), RS_SRC_SASS, in.target, &e);
    CHECKF(m != NULL, "%s: %s", in.id, e.msg);
    if (!m || !in.truth) {
      rs_module_free(m);
      rs_instance_clear(&in);
      continue;
    }
    const rs_func *f = m->funcs[0];
    rs_problem *p = rs_problem_build(f, &e);
    rs_preg *as = calloc(f->nvregs + 1, sizeof *as);
    uint32_t nonmember = 0, conflicts = 1, same = 0;
    if (p && rs_truth_assign(p, f, in.truth, as, &e) == 0) conflicts = rs_truth_check(p, as, &nonmember);
    else CHECKF(0, "%s: %s", in.id, e.msg);
    for (uint32_t k = 0; p && k < p->nvars; k++) {
      uint32_t vr = p->vars[k].fvreg;
      same += as[vr].unit == f->truth[vr].unit && as[vr].lanes == f->truth[vr].lanes;
    }
    CHECKF(conflicts == 0 && nonmember == 0 && p && same == p->nvars, "%s: %u conflicts, %u outside class, %u/%u equal",
           in.id, conflicts, nonmember, same, p ? p->nvars : 0);
    /* ptxas -v = highest R + 3 = what the listing declares */
    CHECKF(in.ref_regs[0] > 0 && (f->declared_regs == 0 || f->declared_regs == in.ref_regs[0]),
           "%s: ptxas -v %u, listing declares %u", in.id, in.ref_regs[0], f->declared_regs);
    rs_norm *nm = rs_normalize(f, &e);
    CHECKF(nm && in.norm && !strcmp(nm->text, in.norm), "%s: stored normalization differs", in.id);
    if (nm) {
      unsigned bad_map = 0;
      for (uint32_t k = 0; k < nm->nnames; k++) {
        const char *orig = rs_norm_original(nm, nm->norm[k]);
        bad_map += !orig || strcmp(orig, nm->orig[k]) || strcmp(rs_norm_normalized(nm, orig), nm->norm[k]);
      }
      CHECKF(bad_map == 0 && nm->nnames == p->nvars, "%s: %u names do not round-trip (%u names, %u values)", in.id,
             bad_map, nm->nnames, p->nvars);
      /* the shared vocabulary: no SASS spelling of FFMA/HMMA/LDG/STG survives */
      bool fma = strstr(nm->text, "= FMA.f32") || strstr(nm->text, "= MMA."), ld = strstr(nm->text, "LD.global") != NULL;
      bool raw_ops = strstr(nm->text, "FFMA") || strstr(nm->text, "HMMA") || strstr(nm->text, "LDG") || strstr(nm->text, "STG");
      vocab += fma && ld && !raw_ops;
      raw_tok += in.raw_tokens;
      norm_tok += in.norm_tokens;
      rs_norm_free(nm);
    }
    ok++;
    free(as);
    rs_problem_free(p);
    rs_module_free(m);
    rs_instance_clear(&in);
  }
  for (int f = 0; f < 3; f++)
    for (int a = 0; a < 5; a++) CHECKF(have[f][a] >= 1, "no sass instance of %s on %s", fixture[f], archs[a]);
  /* the broken point repeats the first one: its surviving targets are duplicates (dropped) */
  CHECKF(sass == 15 && ok == sass, "%u sass instances, %u checked", sass, ok);
  CHECKF(ptx == 15 && ptx_truth == 0, "%u ptx instances, %u with truth", ptx, ptx_truth);
  CHECKF(vocab == sass, "%u of %u normalized listings on the shared vocabulary", vocab, sass);
  CHECKF(norm_tok < 0.6 * raw_tok, "normalization keeps %.0f of %.0f tokens", norm_tok, raw_tok);
  unsigned sass_fail = 0, target_fail = 0;
  for (uint64_t i = 0; i < rs_corpus_failure_count(c); i++) {
    rs_build_failure bf;
    CHECK(rs_corpus_get_failure(c, i, &bf, &e) == 0);
    sass_fail += !strcmp(bf.target, "sm_90") && !strncmp(bf.message, "sass: ", 6) && strstr(bf.message, "0x0100");
    target_fail += !strcmp(bf.target, "sm_75") && strstr(bf.message, "ptxas") != NULL;
  }
  CHECKF(sass_fail == 1 && target_fail == 1, "failures: sass %u, target %u", sass_fail, target_fail);
  CHECK(rs_corpus_close(c, &e) == 0);
  /* the fine-tuning export and the Same-NV subset carry the SASS truths */
  unsigned pairs = 0;
  for (int sp = 0; sp < 2; sp++) {
    snprintf(cmd, sizeof cmd, "%s corpus export %s --split %s --subset same-nv --out %s/x.jsonl && grep -c '/sass\",' %s/x.jsonl",
             rs_check_cli, out, sp ? "test" : "train", tmp, tmp);
    char buf[256] = "";
    rs_check_run(cmd, buf, sizeof buf);
    pairs += (unsigned)atoi(strrchr(buf, '\n') && strrchr(buf, '\n')[1] ? strrchr(buf, '\n') + 1 : buf);
  }
  CHECKF(pairs == sass, "export: %u sass pairs of %u", pairs, sass);
  printf("corpus sass: %u instances with exact truths over 3 families x 5 archs, tokens %.0f -> %.0f (-%.1f%%)\n", ok,
         raw_tok, norm_tok, 100 * (1 - norm_tok / raw_tok));
  free(v);
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  CHECK(system(cmd) == 0);
  return rs_check_done("test_corpus_sass");
}
