/* shaping.c - the reward shaping configuration: defaults, a JSON overlay, and its JSON form
 * (printed in every answer, so a reward is never a hidden number). docs/reward.md. */
#include "reward/reward.h"
#include <string.h>

void rs_shaping_default(rs_shaping *s) {
  memset(s, 0, sizeof *s);
  s->version = RS_SHAPING_VERSION;
  s->pass = 1; /* pass = 1, every failure 0, no partial credit, no bonus: the plain verifier */
}

static const struct {
  const char *key;
  size_t off;
} fields[] = {
    {"pass", offsetof(rs_shaping, pass)},         {"syntax", offsetof(rs_shaping, syntax)},
    {"dataflow", offsetof(rs_shaping, dataflow)}, {"hardware", offsetof(rs_shaping, hardware)},
    {"timeout", offsetof(rs_shaping, timeout)},   {"error", offsetof(rs_shaping, error)},
    {"partial", offsetof(rs_shaping, partial)},   {"quality", offsetof(rs_shaping, quality)},
};

int rs_shaping_parse(rs_shaping *s, const char *json, rs_err *e) {
  cJSON *j = cJSON_Parse(json);
  if (!cJSON_IsObject(j)) {
    cJSON_Delete(j);
    return rs_errf(e, NULL, 0, "shaping: not a JSON object");
  }
  int rc = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, j) {
    if (!strcmp(it->string, "version")) {
      if (!cJSON_IsNumber(it) || it->valuedouble != RS_SHAPING_VERSION) {
        rc = rs_errf(e, NULL, 0, "shaping: version must be %d (this regsweep's)", RS_SHAPING_VERSION);
        break;
      }
      continue;
    }
    size_t k = 0;
    while (k < sizeof fields / sizeof *fields && strcmp(fields[k].key, it->string)) k++;
    if (k == sizeof fields / sizeof *fields) {
      rc = rs_errf(e, NULL, 0, "shaping: unknown key '%s' (pass, syntax, dataflow, hardware, timeout, error, partial, quality, version)",
                   it->string);
      break;
    }
    if (!cJSON_IsNumber(it) || it->valuedouble < -1e6 || it->valuedouble > 1e6) {
      rc = rs_errf(e, NULL, 0, "shaping: '%s' must be a number", it->string);
      break;
    }
    *(double *)((char *)s + fields[k].off) = it->valuedouble;
  }
  cJSON_Delete(j);
  return rc;
}

cJSON *rs_shaping_json(const rs_shaping *s) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "version", s->version);
  for (size_t k = 0; k < sizeof fields / sizeof *fields; k++)
    cJSON_AddNumberToObject(j, fields[k].key, *(const double *)((const char *)s + fields[k].off));
  return j;
}
