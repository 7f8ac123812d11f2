/* openai_reply.c - what an answer of an OpenAI-compatible server means: the 200 body parsed into a
 * candidate (text, finish reason, token counts) and the server's error message. Every body is
 * untrusted and parsed defensively (fuzz/fuzz_openai.c). */
#include "model/openai_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A short printable excerpt of the server's error: error.message, message, detail, or the body. */
void rs_oa_server_message(const char *body, size_t len, char *out, size_t n) {
  out[0] = 0;
  if (!body || !len) return;
  cJSON *j = cJSON_ParseWithLength(body, len);
  const char *msg = NULL;
  if (j) {
    cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
    cJSON *mm = cJSON_IsObject(err) ? cJSON_GetObjectItemCaseSensitive(err, "message") : err;
    if (!cJSON_IsString(mm)) mm = cJSON_GetObjectItemCaseSensitive(j, "message");
    if (!cJSON_IsString(mm)) mm = cJSON_GetObjectItemCaseSensitive(j, "detail");
    if (cJSON_IsString(mm)) msg = mm->valuestring;
  }
  const char *src = msg ? msg : body;
  size_t sl = msg ? strlen(msg) : len, k = 0;
  for (size_t i = 0; i < sl && k + 1 < n; i++) out[k++] = (src[i] >= 32 && src[i] < 127) ? src[i] : ' ';
  out[k] = 0;
  cJSON_Delete(j);
}

/* Fill g from a 200 response; returns 0, or -1 with why in `why`. */
int rs_openai_parse_response(const char *body, size_t len, bool chat, rs_gen *g, char *why, size_t wn) {
  cJSON *r = body ? cJSON_ParseWithLength(body, len) : NULL;
  if (!r) {
    snprintf(why, wn, "malformed response: not JSON (%zu bytes)", len);
    return -1;
  }
  cJSON *choices = cJSON_GetObjectItemCaseSensitive(r, "choices");
  cJSON *c0 = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
  if (!cJSON_IsObject(c0)) {
    char msg[160];
    rs_oa_server_message(body, len, msg, sizeof msg);
    snprintf(why, wn, "malformed response: no choices%s%s", msg[0] ? ": " : "", msg);
    cJSON_Delete(r);
    return -1;
  }
  const cJSON *txt;
  if (chat) {
    cJSON *msg = cJSON_GetObjectItemCaseSensitive(c0, "message");
    txt = cJSON_IsObject(msg) ? cJSON_GetObjectItemCaseSensitive(msg, "content") : NULL;
  } else {
    txt = cJSON_GetObjectItemCaseSensitive(c0, "text");
  }
  /* a null or missing content is the model's empty answer (verdict syntax), not infra */
  const char *t = cJSON_IsString(txt) ? txt->valuestring : "";
  g->text = rs_xstrndup(t, strlen(t));
  cJSON *fr = cJSON_GetObjectItemCaseSensitive(c0, "finish_reason");
  g->finish = cJSON_IsString(fr) && !strcmp(fr->valuestring, "length") ? RS_FINISH_LENGTH : RS_FINISH_STOP;
  cJSON *u = cJSON_GetObjectItemCaseSensitive(r, "usage");
  if (cJSON_IsObject(u)) {
    cJSON *pt = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens");
    cJSON *ct = cJSON_GetObjectItemCaseSensitive(u, "completion_tokens");
    if (cJSON_IsNumber(pt) && pt->valuedouble >= 0 && pt->valuedouble < 4e9) g->prompt_tokens = (uint32_t)pt->valuedouble;
    if (cJSON_IsNumber(ct) && ct->valuedouble >= 0 && ct->valuedouble < 4e9)
      g->completion_tokens = (uint32_t)ct->valuedouble;
  }
  cJSON_Delete(r);
  return 0;
}

int rs_oa_parse_reply(const rs_oa_body *b, const char *body, size_t len, rs_gen *g, char *why, size_t wn) {
  return rs_openai_parse_response(body, len, b->chat, g, why, wn);
}
