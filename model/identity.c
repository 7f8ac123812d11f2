/* identity.c - a model's identity: what its answers may depend on, and so what attempt seeds and
 * --resume's config check are made of. For builtin:/replay: models it is the spec itself; for
 * openai: it is the model name and the request-shaping parameters (rs_oa_identity), never the
 * URL (host, port), timeouts, retries, the in-flight window or the key's variable (nor, for batch:,
 * the directory: batch: is openai: through files), so a run is
 * reproducible and resumable whichever server (GPU, node) answered an attempt. docs/models.md. */
#include "model/model.h"
#include "model/openai_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *rs_model_identity(const char *spec) {
  /* batch: sends openai:'s requests through files: the same identity, the same seeds */
  if (!strncmp(spec, "openai:", 7) || !strncmp(spec, "openai?", 7) || !strncmp(spec, "batch:", 6)) {
    const char *q = strchr(spec, '?');
    rs_sbuf b = {0};
    rs_oa_identity(q ? q + 1 : "", &b);
    return b.s;
  }
  return rs_xstrndup(spec, strlen(spec));
}

uint64_t rs_attempt_seed(uint64_t sweep_seed, const char *instance, const char *model, uint32_t attempt) {
  char *id = rs_model_identity(model);
  uint64_t h = rs_hash_bytes(instance, strlen(instance), sweep_seed);
  h = rs_hash_bytes(id, strlen(id), h);
  free(id);
  return rs_hash_bytes(&attempt, sizeof attempt, h);
}

void rs_model_describe(const rs_model *m, char *out, size_t n) {
  if (!n) return;
  out[0] = 0;
  if (m && m->state && m->ops == &rs_model_openai) rs_oa_model_describe(m, out, n);
  if (m && m->state && m->ops == &rs_model_batch) rs_batch_describe(m, out, n);
}
