/* replay.c - replay:FILE.jsonl: answers produced elsewhere (offline inference), one JSON object
 * per line: {"id": instance id, "attempt": k, "answer": "...", optional "infer_s",
 * "prompt_tokens", "completion_tokens", "finish_reason"}. A missing (id, attempt) is an infra
 * attempt naming the file, so incomplete replay files are visible, not failures of the model. */
#include "model/model.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *id;
  uint32_t attempt;
  char *answer;
  double infer_s;
  uint32_t pt, ct;
  int finish;
} entry;

typedef struct {
  entry *e;
  uint32_t n, cap;
  uint32_t *tab; /* hash of (id, attempt) -> index + 1 */
  uint32_t tabcap;
} replay;

static uint64_t key(const char *id, uint32_t attempt) {
  return rs_hash_bytes(&attempt, sizeof attempt, rs_hash_bytes(id, strlen(id), 11));
}

static int open_(rs_model *m, rs_err *e) {
  size_t len;
  char *text = rs_read_file(m->arg, &len, e);
  if (!text) return -1;
  replay *r = rs_xcalloc(1, sizeof *r);
  m->state = r;
  unsigned line = 0;
  for (char *c = text, *nl; c && *c; c = nl ? nl + 1 : NULL) {
    nl = strchr(c, '\n');
    if (nl) *nl = 0;
    line++;
    if (!*c) continue;
    cJSON *o = cJSON_Parse(c);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id"), *at = cJSON_GetObjectItemCaseSensitive(o, "attempt"),
                *ans = cJSON_GetObjectItemCaseSensitive(o, "answer");
    if (!cJSON_IsString(id) || !cJSON_IsNumber(at) || at->valuedouble < 0 || !cJSON_IsString(ans)) {
      cJSON_Delete(o);
      free(text);
      return rs_errf(e, m->arg, line, "expected {\"id\": string, \"attempt\": number, \"answer\": string}");
    }
    entry en = {rs_xstrndup(id->valuestring, strlen(id->valuestring)), (uint32_t)at->valuedouble,
                rs_xstrndup(ans->valuestring, strlen(ans->valuestring)), 0, 0, 0, RS_FINISH_STOP};
    const cJSON *x;
    if (cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(o, "infer_s"))) en.infer_s = x->valuedouble;
    if (cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(o, "prompt_tokens"))) en.pt = (uint32_t)x->valuedouble;
    if (cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(o, "completion_tokens"))) en.ct = (uint32_t)x->valuedouble;
    if (cJSON_IsString(x = cJSON_GetObjectItemCaseSensitive(o, "finish_reason")) && !strcmp(x->valuestring, "length"))
      en.finish = RS_FINISH_LENGTH;
    RS_PUSH(r->e, r->n, r->cap, en);
    cJSON_Delete(o);
  }
  free(text);
  r->tabcap = 16;
  while (r->tabcap < 2 * r->n + 2) r->tabcap *= 2;
  r->tab = rs_xcalloc(r->tabcap, sizeof *r->tab);
  for (uint32_t i = 0; i < r->n; i++) {
    uint32_t j = (uint32_t)key(r->e[i].id, r->e[i].attempt) & (r->tabcap - 1);
    while (r->tab[j]) {
      const entry *o = &r->e[r->tab[j] - 1];
      if (o->attempt == r->e[i].attempt && !strcmp(o->id, r->e[i].id))
        return rs_errf(e, m->arg, 0, "duplicate answer for %s attempt %u", o->id, o->attempt);
      j = (j + 1) & (r->tabcap - 1);
    }
    r->tab[j] = i + 1;
  }
  return 0;
}

static int generate(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                    rs_gen *out, rs_err *e) {
  (void)seeds, (void)e;
  replay *r = m->state;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t at = first + k, j = (uint32_t)key(in->id, at) & (r->tabcap - 1);
    const entry *hit = NULL;
    while (r->tab[j]) {
      const entry *o = &r->e[r->tab[j] - 1];
      if (o->attempt == at && !strcmp(o->id, in->id)) {
        hit = o;
        break;
      }
      j = (j + 1) & (r->tabcap - 1);
    }
    if (!hit) {
      out[k].infra = true;
      snprintf(out[k].error, sizeof out[k].error, "%s: no answer for %s attempt %u", m->arg, in->id, at);
      continue;
    }
    out[k].text = rs_xstrndup(hit->answer, strlen(hit->answer));
    out[k].infer_s = hit->infer_s;
    out[k].prompt_tokens = hit->pt;
    out[k].completion_tokens = hit->ct;
    out[k].finish = hit->finish;
  }
  return 0;
}

static void close_(rs_model *m) {
  replay *r = m->state;
  for (uint32_t i = 0; i < r->n; i++) {
    free(r->e[i].id);
    free(r->e[i].answer);
  }
  free(r->e);
  free(r->tab);
  free(r);
}

const rs_model_ops rs_model_replay = {"replay", open_, generate, close_, false};
