/* fuzz_openai.c - libFuzzer target: the OpenAI-compatible response parser of the openai: back end
 * (rs_openai_parse_response, model/openai_reply.c) on untrusted response bodies, in both API modes
 * (chat: choices[0].message.content; completions: choices[0].text). */
#include "model/model.h"
#include "model/openai_schema.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* a curl body is NUL-terminated after len (on_data); keep that, but the parser must honour len */
  char *body = malloc(size + 1);
  if (!body) return 0;
  if (size) memcpy(body, data, size);
  body[size] = 0;
  for (int chat = 0; chat < 2; chat++) {
    rs_gen g;
    memset(&g, 0, sizeof g);
    char why[200];
    why[0] = 0;
    (void)rs_openai_parse_response(body, size, chat != 0, &g, why, sizeof why);
    rs_gen_clear(&g);
  }
  free(body);
  return 0;
}
