/* openai_probe.c - what the openai: back end learns about its server at open:
 *  - the server's facts: llama.cpp's GET /props (n_ctx, its default sampling) or vLLM's
 *    GET /v1/models (max_model_len), for provenance and the truncation check;
 *  - the schema probe: servers silently ignore structured-output forms they do not read (a
 *    llama.cpp version dropped response_format's nested schema; vLLM ignores unknown fields), and
 *    a sweep would then run unconstrained with no error anywhere. One tiny request whose schema
 *    admits a single answer, {"regsweep_probe":"zq7"}, while its prompt asks for something else:
 *    only a server that applies the schema answers it. If it does not, the other dialects are
 *    tried so the error can name the one this server reads.
 * Plain blocking curl easy requests: this runs once per model open, before any sweep traffic. */
#include "model/openai_int.h"
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_KEY "regsweep_probe"
#define PROBE_VALUE "zq7"

typedef struct {
  char *s;
  size_t n, max;
} buf_t;

static size_t on_data(char *p, size_t size, size_t nmemb, void *ud) {
  buf_t *b = ud;
  size_t n = size * nmemb;
  if (b->n + n > b->max) return 0; /* a probe answer is tiny; anything huge is broken */
  b->s = rs_xrealloc(b->s, b->n + n + 1);
  memcpy(b->s + b->n, p, n);
  b->n += n;
  b->s[b->n] = 0;
  return n;
}

/* One request (GET when body is NULL). Returns the HTTP status, or -1 with curl's error in why. */
static long http(const rs_oa_link *l, const char *url, const char *body, double timeout_s, buf_t *out, char *why,
                 size_t wn) {
  CURL *h = curl_easy_init();
  if (!h) {
    snprintf(why, wn, "curl_easy_init failed");
    return -1;
  }
  char err[CURL_ERROR_SIZE] = "";
  struct curl_slist *hdr = rs_oa_headers(l->key_env);
  out->max = (size_t)1 << 20;
  curl_easy_setopt(h, CURLOPT_URL, url);
  if (body) {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  long to = (long)(timeout_s * 1000);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, to > 0 ? to : 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, to < 10000 ? (to > 0 ? to : 1L) : 10000L);
  CURLcode rc = curl_easy_perform(h);
  long code = -1;
  if (rc == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
  else snprintf(why, wn, "%.150s", err[0] ? err : curl_easy_strerror(rc));
  curl_slist_free_all(hdr);
  curl_easy_cleanup(h);
  /* a server may echo the key: never keep it */
  const char *key = getenv(l->key_env);
  if (key && strlen(key) >= 4 && out->s)
    for (char *p = strstr(out->s, key); p; p = strstr(p + strlen(key), key)) memset(p, '*', strlen(key));
  return code;
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* llama.cpp: GET <root>/props; vLLM (and SGLang): GET <url>/models. */
static void read_facts(rs_oa_body *b, const rs_oa_link *l) {
  if (b->server_note[0]) return; /* once */
  size_t ul = strlen(l->url);
  while (ul && l->url[ul - 1] == '/') ul--;
  size_t rl = ul >= 3 && !strncmp(l->url + ul - 3, "/v1", 3) ? ul - 3 : ul;
  char url[2200], why[200];
  double to = l->timeout_s < 10 ? l->timeout_s : 10;
  buf_t r = {0};
  snprintf(url, sizeof url, "%.*s/props", (int)(rl < 2000 ? rl : 2000), l->url);
  cJSON *j = http(l, url, NULL, to, &r, why, sizeof why) == 200 && r.s ? cJSON_Parse(r.s) : NULL;
  free(r.s);
  const cJSON *dg = j ? cJSON_GetObjectItemCaseSensitive(j, "default_generation_settings") : NULL;
  if (cJSON_IsObject(dg) || (j && num(j, "n_ctx") > 0)) {
    double nc = num(dg, "n_ctx") > 0 ? num(dg, "n_ctx") : num(j, "n_ctx");
    if (nc > 0 && nc < 4e9) b->n_ctx = (uint32_t)nc;
    const cJSON *pa = cJSON_GetObjectItemCaseSensitive(dg, "params");
    if (!cJSON_IsObject(pa)) pa = dg;
    rs_sb s = {0};
    rs_sb_printf(&s, "/props n_ctx %u; its defaults:", (unsigned)b->n_ctx);
    const char *keys[] = {"temperature", "top_k", "top_p", "min_p", "repeat_penalty", "presence_penalty"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
      if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(pa, keys[i]))) rs_sb_printf(&s, " %s=%g", keys[i], num(pa, keys[i]));
    snprintf(b->server_note, sizeof b->server_note, "%s", s.s);
    free(s.s);
    cJSON_Delete(j);
    return;
  }
  cJSON_Delete(j);
  r = (buf_t){0};
  snprintf(url, sizeof url, "%.*s/models", (int)(ul < 2000 ? ul : 2000), l->url);
  j = http(l, url, NULL, to, &r, why, sizeof why) == 200 && r.s ? cJSON_Parse(r.s) : NULL;
  free(r.s);
  const cJSON *m, *data = j ? cJSON_GetObjectItemCaseSensitive(j, "data") : NULL;
  cJSON_ArrayForEach(m, data) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
    if (!cJSON_IsString(id) || strcmp(id->valuestring, b->model)) continue;
    double ml = num(m, "max_model_len");
    if (ml > 0 && ml < 4e9) {
      b->n_ctx = (uint32_t)ml;
      snprintf(b->server_note, sizeof b->server_note, "/models max_model_len %u", (unsigned)b->n_ctx);
    }
  }
  cJSON_Delete(j);
  if (!b->server_note[0]) snprintf(b->server_note, sizeof b->server_note, "no /props or /models context size");
}

static cJSON *probe_schema(void) {
  cJSON *s = cJSON_CreateObject();
  cJSON_AddStringToObject(s, "type", "object");
  cJSON *pr = cJSON_AddObjectToObject(cJSON_AddObjectToObject(s, "properties"), PROBE_KEY);
  cJSON_AddStringToObject(pr, "type", "string");
  cJSON_AddStringToObject(pr, "pattern", "^" PROBE_VALUE "$");
  cJSON_AddItemToArray(cJSON_AddArrayToObject(s, "required"), cJSON_CreateString(PROBE_KEY));
  cJSON_AddFalseToObject(s, "additionalProperties");
  return s;
}

/* Is the answer exactly {"regsweep_probe":"zq7"} (whitespace aside)? */
static bool conforms(const char *text) {
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  const cJSON *v = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, PROBE_KEY) : NULL;
  bool ok = cJSON_IsString(v) && !strcmp(v->valuestring, PROBE_VALUE) && cJSON_GetArraySize(j) == 1;
  cJSON_Delete(j);
  return ok;
}

/* 1: conformed; 0: answered otherwise (what in `said`); -1: no answer (why in `said`). */
static int probe_one(const rs_oa_body *b, const rs_oa_link *l, int dialect, char *said, size_t sn) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "model", b->model);
  const char *ask = "Say hello in one word.";
  if (b->chat) {
    cJSON *mm = cJSON_CreateObject();
    cJSON_AddStringToObject(mm, "role", "user");
    cJSON_AddStringToObject(mm, "content", ask);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "messages"), mm);
  } else {
    cJSON_AddStringToObject(r, "prompt", ask);
  }
  cJSON_AddNumberToObject(r, "max_tokens", 24);
  cJSON_AddNumberToObject(r, "temperature", 0);
  cJSON_AddNumberToObject(r, "seed", 0);
  cJSON_AddNumberToObject(r, "n", 1);
  rs_oa_add_schema(r, dialect, probe_schema());
  char *body = cJSON_PrintUnformatted(r);
  cJSON_Delete(r);
  buf_t resp = {0};
  char why[200] = "";
  long code = http(l, l->endpoint, body, l->timeout_s, &resp, why, sizeof why);
  cJSON_free(body);
  int out;
  if (code < 0 || code == 429 || code >= 500) {
    if (code >= 0) snprintf(why, sizeof why, "HTTP %ld", code);
    snprintf(said, sn, "%s", why);
    out = -1;
  } else if (code / 100 != 2) { /* the server refused the form outright */
    char msg[160];
    rs_oa_server_message(resp.s, resp.n, msg, sizeof msg);
    snprintf(said, sn, "HTTP %ld: %s", code, msg);
    out = 0;
  } else {
    rs_gen g;
    memset(&g, 0, sizeof g);
    if (rs_openai_parse_response(resp.s, resp.n, b->chat, &g, why, sizeof why)) {
      snprintf(said, sn, "%s", why);
      out = -1;
    } else {
      out = conforms(g.text);
      size_t k = 0;
      for (const char *t = g.text; t && *t && k + 1 < sn && k < 60; t++) said[k++] = *t >= 32 && *t < 127 ? *t : ' ';
      said[k] = 0;
    }
    rs_gen_clear(&g);
  }
  free(resp.s);
  return out;
}

int rs_oa_probe(rs_oa_body *b, const rs_oa_link *l, rs_err *e) {
  if (b->dialect == RS_OA_SCHEMA_NONE || !b->probe) {
    read_facts(b, l);
    b->probe_state = RS_OA_PROBE_OFF;
    snprintf(b->probe_note, sizeof b->probe_note, "%s", b->dialect == RS_OA_SCHEMA_NONE ? "no schema" : "not run (probe=0)");
    return 0;
  }
  char said[200];
  int r = probe_one(b, l, b->dialect, said, sizeof said);
  if (r < 0) { /* the server is down or busy: the sweep's own requests will say so; probe (and
               * read its facts) again before the next call, one request's timeout at most */
    b->probe_state = RS_OA_PROBE_PENDING;
    snprintf(b->probe_note, sizeof b->probe_note, "no answer yet (%.150s)", said);
    return 0;
  }
  read_facts(b, l);
  if (r > 0) {
    b->probe_state = RS_OA_PROBE_OK;
    snprintf(b->probe_note, sizeof b->probe_note, "the server applied it");
    return 0;
  }
  /* ignored or refused: which dialect does this server read? */
  int found = -1;
  char other[200];
  for (int d = RS_OA_SCHEMA_OPENAI; d < RS_OA_NDIALECTS && found < 0; d++)
    if (d != b->dialect && probe_one(b, l, d, other, sizeof other) > 0) found = d;
  snprintf(b->probe_note, sizeof b->probe_note, "ignored (answered '%.80s')", said);
  if (found > 0)
    return rs_errf(e, NULL, 0, "openai %s: schema=%s: the server does not apply the structured-output request (the "
                   "probe's schema admits only {\"" PROBE_KEY "\":\"" PROBE_VALUE "\"}; it answered '%.80s'); "
                   "schema=%s does: use it (schema=0 sweeps unconstrained on purpose, probe=0 skips this check)",
                   l->endpoint, rs_oa_dialect_name[b->dialect], said, rs_oa_dialect_name[found]);
  return rs_errf(e, NULL, 0, "openai %s: schema=%s: the server does not apply the structured-output request (the "
                 "probe's schema admits only {\"" PROBE_KEY "\":\"" PROBE_VALUE "\"}; it answered '%.80s'), and "
                 "neither do schema=openai, llamacpp or vllm: use schema=0 to sweep unconstrained on purpose",
                 l->endpoint, rs_oa_dialect_name[b->dialect], said);
}
