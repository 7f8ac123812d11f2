/* test_corpus_mini.c - the shipped mini corpus (data/corpus-mini.h5), built from real compiler
 * output by `regsweep corpus build --limit 240 --seed 1`:
 *  - every family x target x form is present;
 *  - every ground truth (postsplit and prera) has zero interference conflicts and every register
 *    in its class under [core]'s liveness, the Problem rebuilt from the stored raw text;
 *  - every postsplit instance has a truth (exact by construction);
 *  - normalization of the stored raw text reproduces the stored normalized text and name map
 *    byte for byte, and the name map is an exact bijection (normalized <-> original);
 *  - no two instances of one target and form share an IR hash (dedup).
 * RS_MINI=PATH checks another build of it (e.g. before replacing data/corpus-mini.h5). */
#include "front/front.h"
#include "check.h"
#include "corpus/truth.h"
#include "corpus/normalize.h"
#include "storage/corpus.h"
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char *const combos[] = {
    "sgemm/gfx90a/prera", "sgemm/gfx90a/postsplit", "hgemm_mfma/gfx90a/prera", "hgemm_mfma/gfx90a/postsplit",
    "fa/gfx90a/prera",    "fa/gfx90a/postsplit",    "sgemm/sm_89/ptx",         "sgemm/sm_90/ptx",
    "wmma/sm_89/ptx",     "wmma/sm_90/ptx",         "fa/sm_89/ptx",            "fa/sm_90/ptx",
    /* archs: every AMD architecture, each family it compiles, both forms */
    "sgemm/gfx908/prera", "sgemm/gfx908/postsplit", "sgemm/gfx940/prera", "sgemm/gfx940/postsplit",
    "sgemm/gfx1030/prera", "sgemm/gfx1030/postsplit", "sgemm/gfx1100/prera", "sgemm/gfx1100/postsplit",
    "hgemm_mfma/gfx908/prera", "hgemm_mfma/gfx908/postsplit", "hgemm_mfma/gfx940/prera",
    "hgemm_mfma/gfx940/postsplit", "fa/gfx908/prera", "fa/gfx908/postsplit", "fa/gfx940/prera",
    "fa/gfx940/postsplit", "fa/gfx1030/prera", "fa/gfx1030/postsplit", "fa/gfx1100/prera",
    "fa/gfx1100/postsplit", "wmma/gfx1100/prera", "wmma/gfx1100/postsplit",
    "reduce/gfx908/postsplit", "reduce/gfx940/postsplit", "reduce/gfx1030/postsplit", "reduce/gfx1100/postsplit",
    "scan/gfx908/postsplit", "scan/gfx940/postsplit", "scan/gfx1030/postsplit", "scan/gfx1100/postsplit",
    "conv2d/gfx908/postsplit", "conv2d/gfx940/postsplit", "conv2d/gfx1030/postsplit", "conv2d/gfx1100/postsplit",
    "gemv_pk/gfx940/postsplit",
    /* llvm22: the llc-22 architectures, every family each compiles, both forms */
    "sgemm/gfx942/prera", "sgemm/gfx942/postsplit", "sgemm/gfx950/prera", "sgemm/gfx950/postsplit",
    "sgemm/gfx1200/prera", "sgemm/gfx1200/postsplit", "sgemm/gfx1201/prera", "sgemm/gfx1201/postsplit",
    "hgemm_mfma/gfx942/prera", "hgemm_mfma/gfx942/postsplit", "hgemm_mfma/gfx950/prera", "hgemm_mfma/gfx950/postsplit",
    "fa/gfx942/prera", "fa/gfx942/postsplit", "fa/gfx950/prera", "fa/gfx950/postsplit",
    "fa/gfx1200/prera", "fa/gfx1200/postsplit", "fa/gfx1201/prera", "fa/gfx1201/postsplit",
    "wmma/gfx1200/prera", "wmma/gfx1200/postsplit", "wmma/gfx1201/prera", "wmma/gfx1201/postsplit",
    "reduce/gfx942/postsplit", "reduce/gfx950/postsplit", "reduce/gfx1200/postsplit", "reduce/gfx1201/postsplit",
    "scan/gfx942/postsplit", "scan/gfx950/postsplit", "scan/gfx1200/postsplit", "scan/gfx1201/postsplit",
    "conv2d/gfx942/postsplit", "conv2d/gfx950/postsplit", "conv2d/gfx1200/postsplit", "conv2d/gfx1201/postsplit",
    "gemv_pk/gfx942/postsplit", "gemv_pk/gfx950/postsplit",
    /* sass-tools: form sass (completed nvdisasm listing, exact truth) for every NVIDIA arch */
    "sgemm/sm_75/sass", "sgemm/sm_80/sass", "sgemm/sm_86/sass", "sgemm/sm_89/sass", "sgemm/sm_90/sass",
    "wmma/sm_75/sass", "wmma/sm_80/sass", "wmma/sm_86/sass", "wmma/sm_89/sass", "wmma/sm_90/sass",
    "fa/sm_75/sass", "fa/sm_80/sass", "fa/sm_86/sass", "fa/sm_89/sass", "fa/sm_90/sass",
    "reduce/sm_75/sass", "reduce/sm_80/sass", "reduce/sm_86/sass", "reduce/sm_89/sass", "reduce/sm_90/sass"};
#define NCOMBO (sizeof combos / sizeof *combos)

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(getenv("RS_MINI") ? getenv("RS_MINI") : "data/corpus-mini.h5", &e);
  CHECKF(c != NULL, "%s", e.msg);
  if (!c) return rs_check_done("test_corpus_mini");
  uint64_t n = rs_corpus_count(c);
  CHECKF(n >= 200, "mini corpus has %llu instances", (unsigned long long)n);
  unsigned count[NCOMBO] = {0}, truths = 0, truth_bad = 0, ps = 0, ps_truth = 0, norm_bad = 0, map_bad = 0;
  uint64_t *hashes = calloc(n + 1, sizeof *hashes);
  char (*keys)[48] = calloc(n + 1, sizeof *keys);
  for (uint64_t i = 0; i < n; i++) {
    rs_instance in;
    if (rs_corpus_get(c, i, &in, 1, &e)) {
      CHECKF(0, "%s", e.msg);
      break;
    }
    char combo[96];
    snprintf(combo, sizeof combo, "%s/%s/%s", in.family, in.target, in.form);
    for (size_t k = 0; k < NCOMBO; k++)
      if (!strcmp(combo, combos[k])) count[k]++;
    hashes[i] = in.ir_hash;
    snprintf(keys[i], sizeof keys[i], "%s/%s", in.target, in.form);
    rs_module *m = rs_module_parse(in.id, rs_xstrndup(in.raw, strlen(in.raw)), strlen(in.raw),
                                   !strcmp(in.form, "ptx")    ? RS_SRC_PTX
                                   : !strcmp(in.form, "sass") ? RS_SRC_SASS
                                                              : RS_SRC_MIR,
                                   in.target, &e);
    CHECKF(m != NULL, "%s: %s", in.id, e.msg);
    if (!m) {
      rs_instance_clear(&in);
      continue;
    }
    const rs_func *f = m->funcs[0];
    rs_norm *nm = rs_normalize(f, &e);
    CHECKF(nm != NULL, "%s: %s", in.id, e.msg);
    if (nm) {
      if (!in.norm || strcmp(nm->text, in.norm)) norm_bad++;
      char *mj = rs_norm_map_json(nm);
      if (!in.name_map || strcmp(mj, in.name_map)) norm_bad++;
      free(mj);
      for (uint32_t k = 0; k < nm->nnames; k++) {
        const char *o = rs_norm_original(nm, nm->norm[k]);
        if (!o || strcmp(o, nm->orig[k]) || strcmp(rs_norm_normalized(nm, o), nm->norm[k])) map_bad++;
      }
      rs_norm_free(nm);
    }
    if (!strcmp(in.form, "postsplit")) {
      ps++;
      ps_truth += in.truth != NULL;
    }
    if (in.truth) {
      truths++;
      rs_problem *p = rs_problem_build(f, &e);
      rs_preg *as = calloc(f->nvregs + 1, sizeof *as);
      uint32_t nonmember = 0, bad = 1;
      if (p && rs_truth_assign(p, f, in.truth, as, &e) == 0) bad = rs_truth_check(p, as, &nonmember);
      else CHECKF(0, "%s: %s", in.id, e.msg);
      if (bad || nonmember) {
        truth_bad++;
        fprintf(stderr, "%s: truth violates %u constraints, %u registers outside their class\n", in.id, bad, nonmember);
      }
      free(as);
      rs_problem_free(p);
    }
    rs_module_free(m);
    rs_instance_clear(&in);
  }
  for (size_t k = 0; k < NCOMBO; k++) CHECKF(count[k] > 0, "no instance of %s", combos[k]);
  CHECKF(truth_bad == 0, "%u of %u ground truths violate the Problem", truth_bad, truths);
  CHECKF(ps_truth == ps, "%u of %u postsplit instances have a truth", ps_truth, ps);
  CHECKF(norm_bad == 0, "%u normalized texts/maps differ from a fresh normalization", norm_bad);
  CHECKF(map_bad == 0, "%u names do not round-trip", map_bad);
  unsigned dup = 0;
  for (uint64_t i = 0; i < n; i++)
    for (uint64_t j = i + 1; j < n; j++)
      if (hashes[i] == hashes[j] && !strcmp(keys[i], keys[j])) dup++;
  CHECKF(dup == 0, "%u duplicate IR hashes", dup);
  uint64_t nf = rs_corpus_failure_count(c);
  for (uint64_t i = 0; i < nf; i++) {
    rs_build_failure bf;
    CHECK(rs_corpus_get_failure(c, i, &bf, &e) == 0 && bf.variant[0] && bf.message[0]);
  }
  printf("mini corpus: %llu instances, %u truths checked (0 conflicts), %u/%u postsplit truths, %llu build failures\n",
         (unsigned long long)n, truths, ps_truth, ps, (unsigned long long)nf);
  free(hashes);
  free(keys);
  CHECK(rs_corpus_close(c, &e) == 0);
  return rs_check_done("test_corpus_mini");
}
