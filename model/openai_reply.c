/* openai_reply.c - what an answer of an OpenAI-compatible server means: the 200 body parsed into a
 * candidate (text, finish reason, token counts) and the server's error message. Every body is
 * untrusted and parsed defensively (fuzz/fuzz_openai.c). */
#include "model/openai_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* One choice into g: text (a null or missing content is the model's empty answer, verdict
 * syntax, not infra) and finish reason. */
static void take_choice(const cJSON *c, bool chat, rs_gen *g) {
  const cJSON *txt;
  if (chat) {
    cJSON *msg = cJSON_GetObjectItemCaseSensitive(c, "message");
    txt = cJSON_IsObject(msg) ? cJSON_GetObjectItemCaseSensitive(msg, "content") : NULL;
  } else {
    txt = cJSON_GetObjectItemCaseSensitive(c, "text");
  }
  const char *t = cJSON_IsString(txt) ? txt->valuestring : "";
  free(g->text);
  g->text = rs_xstrndup(t, strlen(t));
  cJSON *fr = cJSON_GetObjectItemCaseSensitive(c, "finish_reason");
  g->finish = cJSON_IsString(fr) && !strcmp(fr->valuestring, "length") ? RS_FINISH_LENGTH : RS_FINISH_STOP;
}

/* n choices into g[0..n-1] by their index (position if absent); usage: the prompt is shared, the
 * completion tokens (a total over the choices) are split in proportion to the texts. llama.cpp
 * (one_choice) counts the first choice only: its tokens per byte then give every choice its
 * count (an estimate, said in docs/models.md). */
static int parse_choices(const char *body, size_t len, bool chat, rs_gen *g, uint32_t n, bool one_choice, char *why,
                         size_t wn) {
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
  uint32_t pos = 0, got = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, choices) {
    uint32_t at = pos++;
    if (!cJSON_IsObject(c)) continue;
    cJSON *ix = cJSON_GetObjectItemCaseSensitive(c, "index");
    if (n > 1 && cJSON_IsNumber(ix)) {
      if (!(ix->valuedouble >= 0 && ix->valuedouble < n)) continue;
      at = (uint32_t)ix->valuedouble;
    }
    if (at >= n || g[at].text) continue; /* beyond n, or a duplicate index: ignored */
    take_choice(c, chat, &g[at]);
    got++;
  }
  cJSON *u = cJSON_GetObjectItemCaseSensitive(r, "usage");
  uint32_t pt = 0, ct = 0;
  if (cJSON_IsObject(u)) {
    cJSON *p = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens");
    cJSON *q = cJSON_GetObjectItemCaseSensitive(u, "completion_tokens");
    if (cJSON_IsNumber(p) && p->valuedouble >= 0 && p->valuedouble < 4e9) pt = (uint32_t)p->valuedouble;
    if (cJSON_IsNumber(q) && q->valuedouble >= 0 && q->valuedouble < 4e9) ct = (uint32_t)q->valuedouble;
  }
  size_t total = 0;
  for (uint32_t k = 0; k < n; k++) total += g[k].text ? strlen(g[k].text) + 1 : 0;
  if (one_choice && n > 1 && g[0].text && total) /* scale one choice's count to all of them */
    ct = (uint32_t)((double)ct * (double)total / (double)(strlen(g[0].text) + 1) + 0.5);
  uint32_t left = ct;
  for (uint32_t k = 0; k < n; k++) {
    if (!g[k].text) continue;
    g[k].prompt_tokens = pt;
    uint32_t share = n == 1 || !total ? ct : (uint32_t)((double)ct * (double)(strlen(g[k].text) + 1) / (double)total);
    g[k].completion_tokens = share <= left ? share : left;
    left -= g[k].completion_tokens;
  }
  cJSON_Delete(r);
  if (got < n) { /* a server that ignores n: the missing candidates are infra, not model failures */
    for (uint32_t k = 0; k < n; k++)
      if (!g[k].text) {
        g[k].infra = true;
        g[k].finish = RS_FINISH_ERROR;
        snprintf(g[k].error, sizeof g[k].error, "openai: the server returned %u of the %u choices asked for (n)", got, n);
      }
  }
  return 0;
}

int rs_openai_parse_response(const char *body, size_t len, bool chat, rs_gen *g, char *why, size_t wn) {
  return parse_choices(body, len, chat, g, 1, false, why, wn);
}

int rs_oa_parse_reply(rs_oa_body *b, const rs_gen_input *in, const char *body, size_t len, rs_gen *g, uint32_t n,
                      char *why, size_t wn) {
  for (uint32_t k = 0; k < n; k++) {
    free(g[k].text);
    g[k].text = NULL;
  }
  /* a llama.cpp server (it has /props) counts one choice in usage */
  if (parse_choices(body, len, b->chat, g, n ? n : 1, b->watch == RS_OA_WATCH_SLOTS, why, wn)) return -1;
  for (uint32_t k = 0; k < (n ? n : 1); k++) rs_oa_check_prompt(b, in, &g[k]);
  return 0;
}

/* ---- silent prompt truncation ------------------------------------------------------------ */

/* The most prompt tokens seen for an instance (0: none yet); open addressing, cleared when full
 * (a forgotten instance only loses the comparison with its earlier attempts). */
static struct rs_oa_seen *seen_slot(rs_oa_body *b, uint64_t key) {
  if (!b->seen) {
    b->nseen_cap = 4096;
    b->seen = rs_xcalloc(b->nseen_cap, sizeof *b->seen);
  }
  uint32_t mask = b->nseen_cap - 1, j = (uint32_t)key & mask;
  for (uint32_t probe = 0; probe < b->nseen_cap / 2; probe++, j = (j + 1) & mask)
    if (b->seen[j].key == key || !b->seen[j].tokens) return &b->seen[j];
  memset(b->seen, 0, sizeof *b->seen * b->nseen_cap);
  return &b->seen[(uint32_t)key & mask];
}

/* Real tokenizers average 2-5 bytes a token on IR text; over 7 means part of the prompt was
 * never read. */
#define OA_MAX_BYTES_PER_TOKEN 7
#define OA_MIN_BYTES_CHECKED 2000

void rs_oa_check_prompt(rs_oa_body *b, const rs_gen_input *in, rs_gen *g) {
  if (g->infra || !g->prompt_tokens || !in) return;
  char why[200] = "";
  size_t bytes = in->prompt ? strlen(in->prompt) : 0; /* a lower bound of the prompt's size */
  struct rs_oa_seen *sl = in->id ? seen_slot(b, rs_hash_bytes(in->id, strlen(in->id), 0x5eed) | 1) : NULL;
  uint32_t pt = g->prompt_tokens;
  if (b->n_ctx && (uint64_t)pt + g->completion_tokens >= b->n_ctx)
    snprintf(why, sizeof why, "prompt and answer filled the server's context (%u + %u tokens, n_ctx %u): the prompt may "
             "have been cut", pt, g->completion_tokens, b->n_ctx);
  else if (bytes >= OA_MIN_BYTES_CHECKED && bytes > (size_t)OA_MAX_BYTES_PER_TOKEN * pt)
    snprintf(why, sizeof why, "usage.prompt_tokens %u for a prompt of over %zu bytes: the server cut the prompt", pt, bytes);
  else if (sl && sl->key && (double)pt < 0.9 * sl->tokens)
    snprintf(why, sizeof why, "usage.prompt_tokens %u, far below the %u of an earlier attempt of this instance: the "
             "server cut the prompt", pt, sl->tokens);
  if (!why[0]) {
    if (sl && pt > sl->tokens) {
      sl->key = rs_hash_bytes(in->id, strlen(in->id), 0x5eed) | 1;
      sl->tokens = pt;
    }
    return;
  }
  /* infra, not transient: the same server cuts the same prompt again (no retry, no redo) */
  free(g->text);
  g->text = NULL;
  g->infra = true;
  g->transient = false;
  g->finish = RS_FINISH_ERROR;
  /* the reason may be cut to fit the error field; the prefix says what happened */
  int w = snprintf(g->error, sizeof g->error, "openai: silent prompt truncation: %.160s", why);
  if (w > 0 && (size_t)w < sizeof g->error)
    snprintf(g->error + w, sizeof g->error - (size_t)w, " (give the server a larger context)");
}

/* ---- error classes ------------------------------------------------------------------------ */

static bool strcasestr_(const char *h, const char *n) {
  size_t nl = strlen(n);
  for (; *h; h++)
    if (!strncasecmp(h, n, nl)) return true;
  return false;
}

bool rs_oa_deterministic_error(const char *msg) {
  /* the prompt does not fit the server's context: the same request fails the same way again
   * (llama.cpp: "the request exceeds the available context size", "context shift is disabled";
   * vLLM: "This model's maximum context length is N tokens"; SGLang: "... is longer than the
   * model's context length") */
  static const char *const pats[] = {"exceeds the available context", "context shift is disabled",
                                     "maximum context length", "model's context length", "context length exceeded",
                                     "prompt is too long"};
  if (!msg) return false;
  for (size_t i = 0; i < sizeof pats / sizeof *pats; i++)
    if (strcasestr_(msg, pats[i])) return true;
  return false;
}

const char *rs_refusal_advice(const char *err) {
  if (!err) err = "";
  if (rs_oa_deterministic_error(err))
    return "the prompts do not fit the server's context: start it with a larger one (llama.cpp: --ctx-size is shared "
           "by its --parallel slots; vLLM: --max-model-len; SGLang: --context-length), or lower max_tokens=";
  if (strstr(err, "HTTP 404"))
    return "the server does not serve this model or endpoint: model= must be a name GET URL/models lists, and the URL "
           "the API base (http://host:port/v1)";
  if (strstr(err, "HTTP 401") || strstr(err, "HTTP 403"))
    return "the server refuses the credentials: put its API key in the environment variable key_env= names";
  return "the server rejects the request itself: check api=, the schema= dialect, and sampling=server for endpoints "
         "that reject parameters they do not know";
}
