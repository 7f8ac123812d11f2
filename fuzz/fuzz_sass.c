/* fuzz_sass.c - libFuzzer target fuzz_sass: the SASS parser and lift (rs_module_parse with
 * RS_SRC_SASS) on untrusted text, then on every function it yields what the pinned oracle runs:
 * rs_problem_build, the -plr live rows (both call conventions) and the write-back under the
 * listing's own registers. Any input may be rejected with an error; none may crash, leak, read
 * out of bounds or hit undefined behaviour. Build and run: scripts/fuzz.sh 60 sass. */
#include "front/front.h"
#include "ir/ir.h"
#include "analysis/problem.h"
#include "sass/sass.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1); /* rs_module_parse takes ownership: malloc'd, NUL-terminated */
  if (!text) return 0;
  if (size) memcpy(text, data, size);
  text[size] = 0;
  rs_err e = {{0}};
  rs_module *m = rs_module_parse("fuzz.sass", text, size, RS_SRC_SASS, NULL, &e);
  if (!m) return 0;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    const rs_func *f = m->funcs[i];
    rs_err pe = {{0}};
    rs_problem *p = rs_problem_build(f, &pe);
    rs_problem_free(p);
    for (int calls = 0; calls < 2; calls++) {
      rs_word *rows = NULL;
      uint32_t w;
      if (rs_sass_live_rows(f, &rows, &w, calls, &pe) == 0) free(rows);
    }
    char *out = NULL;
    rs_sass_diff d[2];
    uint32_t nd = rs_sass_write(f, f->truth, &out, d, 2);
    if (nd) abort(); /* the listing's own registers must write back identical */
    free(out);
  }
  rs_module_free(m);
  return 0;
}
