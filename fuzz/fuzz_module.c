/* fuzz_module.c - libFuzzer targets fuzz_mir and fuzz_ptx (built twice, RS_FUZZ_SRC = RS_SRC_MIR
 * or RS_SRC_PTX): a parser (rs_module_parse) on untrusted text, then rs_problem_build (liveness,
 * conflicts) on every function it yields. Any input may be
 * rejected with an error; none may crash, leak, read out of bounds or hit undefined behaviour.
 * Build and run: scripts/fuzz.sh (fuzz/README.md). */
#include "front/front.h"
#include "ir/ir.h"
#include "analysis/problem.h"
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
  rs_module *m = rs_module_parse("fuzz.input", text, size, RS_FUZZ_SRC, NULL, &e);
  if (!m) return 0;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    rs_err pe = {{0}};
    rs_problem *p = rs_problem_build(m->funcs[i], &pe);
    rs_problem_free(p);
  }
  rs_module_free(m);
  return 0;
}
