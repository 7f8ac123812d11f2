/* fuzz_candidate.c - libFuzzer target: the candidate parser (rs_candidate_parse) on untrusted
 * answers for one fixed Problem (tests/fixtures/amd/hgemm_mfma16_w2x2_r1x1.postsplit.mir, its
 * first function, with the normalized name map), then the native checker on what parses.
 *
 * Seeds: with RS_FUZZ_WRITE_SEEDS=DIR, LLVMFuzzerInitialize writes a few valid and invalid JSON
 * maps for that Problem into DIR (scripts/fuzz.sh does this before fuzzing). */
#include "front/front.h"
#include "ir/ir.h"
#include "corpus/normalize.h"
#include "analysis/problem.h"
#include "model/model.h"
#include "model/openai_schema.h"
#include "verify/verify.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RS_FUZZ_FIXTURE
#define RS_FUZZ_FIXTURE "tests/fixtures/amd/hgemm_mfma16_w2x2_r1x1.postsplit.mir"
#endif

/* The project keeps no global mutable state, but libFuzzer's C API passes no context pointer to
 * LLVMFuzzerTestOneInput: the Problem built once in LLVMFuzzerInitialize lives here, read-only
 * while fuzzing, and is freed by atexit. */
static struct {
  rs_module *mod;
  rs_problem *p;
  rs_norm *nm;
  rs_namemap names;
} fz;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_free(void) {
  rs_norm_free(fz.nm);
  rs_problem_free(fz.p);
  rs_module_free(fz.mod);
  memset(&fz, 0, sizeof fz);
}

/* A complete assignment: every value in its class's first file, spread out (conflicts likely,
 * which is fine: the parser must accept it; the checker judges it). As tests/test_openai.c. */
static rs_preg *some_assignment(const rs_problem *p) {
  const rs_target *t = p->tgt;
  rs_preg *reg = rs_xcalloc(p->nvars + 1, sizeof *reg);
  for (uint32_t v = 0; v < p->nvars; v++) {
    const rs_regclass *c = &t->classes[p->vars[v].cls];
    for (uint32_t f = 0; f < t->nfiles; f++) {
      if (!(c->files >> f & 1) || !t->files[f].asm_prefix) continue;
      uint32_t span = t->files[f].count - c->width - 8, al = c->align ? c->align : 1;
      uint32_t off = (v * 3u) % span / al * al;
      reg[v].unit = t->files[f].first + off;
      reg[v].lanes = p->vars[v].full;
      break;
    }
    if (!reg[v].lanes && c->specials) {
      for (uint32_t s = 0; s < t->nspecials; s++)
        if (c->specials >> s & 1) {
          reg[v] = t->specials[s].reg;
          break;
        }
    }
  }
  return reg;
}

static void put_seed(const char *dir, const char *name, const char *text, size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fwrite(text, 1, len, f);
  fclose(f);
}

static void write_seeds(const char *dir) {
  const rs_problem *p = fz.p;
  const char **vn = rs_value_names(p, &fz.names);
  rs_preg *reg = some_assignment(p);
  char *norm = rs_assignment_json(p, vn, reg);             /* valid, normalized names */
  char *orig = rs_assignment_json(p, NULL, reg);           /* valid, original names */
  put_seed(dir, "valid_norm.json", norm, strlen(norm));
  put_seed(dir, "valid_orig.json", orig, strlen(orig));
  put_seed(dir, "truncated.json", norm, strlen(norm) / 2);
  rs_sbuf b = {0};
  rs_sbuf_printf(&b, "Here is the allocation:\n```json\n%s\n```\nDone.", norm); /* wrapped */
  put_seed(dir, "fenced.txt", b.s, b.n);
  free(b.s);
  b = (rs_sbuf){0};
  if (p->nvars) { /* duplicate: value 0 through both spellings */
    rs_sbuf_printf(&b, "{\"%s\":\"v0\",%s", p->vars[0].name, norm + 1);
    put_seed(dir, "duplicate.json", b.s, b.n);
    free(b.s);
    b = (rs_sbuf){0};
  }
  rs_preg keep = p->nvars ? reg[0] : (rs_preg){0};
  if (p->nvars) { /* missing: value 0 left out */
    reg[0].lanes = 0;
    char *miss = rs_assignment_json(p, vn, reg);
    put_seed(dir, "missing.json", miss, strlen(miss));
    free(miss);
    reg[0] = keep;
  }
  for (uint32_t v = 1; v < p->nvars; v++) /* conflicts: everything where value 0 is */
    if (p->vars[v].cls == p->vars[0].cls) reg[v] = reg[0];
  char *conf = rs_assignment_json(p, vn, reg);
  put_seed(dir, "conflict.json", conf, strlen(conf));
  free(conf);
  if (p->nvars) { /* unknown key, bad register, register tuples and odd spellings */
    rs_sbuf_printf(&b, "{\"%s\":\"q99\",\"nosuch\":\"v1\",\"%s\":\"v[4:5]\",\"%s\":\"$vgpr4_vgpr5\","
                     "\"%s\":\"s[8:11]\",\"%s\":\"a[0:15]\"}",
                 vn[0], vn[p->nvars > 1 ? 1 : 0], vn[p->nvars > 2 ? 2 : 0], vn[p->nvars > 3 ? 3 : 0],
                 vn[p->nvars > 4 ? 4 : 0]);
    put_seed(dir, "badreg.json", b.s, b.n);
    free(b.s);
  }
  static const char *const junk[] = {"[1,2,3]", "{}", "{\"v0\":1}", "{\"v0\":\"v0\"} trailing",
                                     "[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]", "\"v0\"", ""};
  for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
    char name[32];
    snprintf(name, sizeof name, "junk%zu.json", i);
    put_seed(dir, name, junk[i], strlen(junk[i]));
  }
  free(norm);
  free(orig);
  free(reg);
  free(vn);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  rs_err e = {{0}};
  const char *path = getenv("RS_FUZZ_FIXTURE") ? getenv("RS_FUZZ_FIXTURE") : RS_FUZZ_FIXTURE;
  fz.mod = rs_module_load(path, NULL, &e);
  if (!fz.mod || !fz.mod->nfuncs || !(fz.p = rs_problem_build(fz.mod->funcs[0], &e)) ||
      !(fz.nm = rs_normalize(fz.mod->funcs[0], &e))) {
    fprintf(stderr, "fuzz_candidate: cannot build the Problem from %s: %s\n", path, e.msg);
    exit(2);
  }
  fz.names = (rs_namemap){(const char *const *)fz.nm->norm, (const char *const *)fz.nm->orig, fz.nm->nnames};
  atexit(fz_free);
  const char *seeds = getenv("RS_FUZZ_WRITE_SEEDS");
  if (seeds && *seeds) write_seeds(seeds);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* no NUL terminator on purpose: the parser must honour len */
  char *text = malloc(size ? size : 1);
  if (!text) return 0;
  if (size) memcpy(text, data, size);
  for (int names = 0; names < 2; names++) { /* with and without the normalized name map */
    rs_candidate c = {0};
    rs_check_result res;
    rs_result_init(&res);
    if (rs_candidate_parse(fz.p, names ? &fz.names : NULL, text, size, &c, &res) == 0) {
      rs_check_result nat;
      rs_result_init(&nat);
      rs_check_native(fz.p, &c, &nat);
    }
    rs_candidate_free(&c);
  }
  free(text);
  return 0;
}
