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

long rs_oa_http(const rs_oa_link *l, const char *url, const char *body, double timeout_s, char **out, char *why,
                size_t wn) {
  buf_t r = {0};
  long code = http(l, url, body, timeout_s, &r, why, wn);
  *out = r.s;
  return code;
}

void rs_oa_root_url(const rs_oa_link *l, const char *path, char *url, size_t n) {
  size_t ul = strlen(l->url);
  while (ul && l->url[ul - 1] == '/') ul--;
  size_t rl = ul >= 3 && !strncmp(l->url + ul - 3, "/v1", 3) ? ul - 3 : ul;
  snprintf(url, n, "%.*s%s", (int)(rl < 2000 ? rl : 2000), l->url, path);
}

/* GET a JSON document of the server's root; NULL when absent or not JSON. */
static cJSON *get_json(const rs_oa_link *l, const char *path, double to) {
  char url[2200], why[200];
  rs_oa_root_url(l, path, url, sizeof url);
  buf_t r = {0};
  cJSON *j = http(l, url, NULL, to, &r, why, sizeof why) == 200 && r.s ? cJSON_Parse(r.s) : NULL;
  free(r.s);
  return j;
}

/* A Prometheus gauge's value (the first sample of `name`, any labels), -1 if absent. */
static double gauge(const char *text, const char *name) {
  size_t nl = strlen(name);
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    if (strncmp(p, name, nl) || (p[nl] != '{' && p[nl] != ' ')) continue;
    const char *v = p + nl;
    if (*v == '{') v = strchr(v, '}');
    if (!v) return -1;
    return strtod(v + 1, NULL);
  }
  return -1;
}

/* Capacity where the server says it: llama.cpp's /props total_slots (read by the caller) or the
 * length of /slots; SGLang's /get_server_info (or /server_info) max_running_requests; vLLM says
 * none (max_num_seqs is not in /metrics), but its gauges show the queue while a sweep runs. */
static void read_capacity(rs_oa_body *b, const rs_oa_link *l, const cJSON *props, double to) {
  double ts = num(props, "total_slots");
  cJSON *j = NULL;
  if (props && ts < 1 && (j = get_json(l, "/slots", to)) && cJSON_IsArray(j) && cJSON_GetArraySize(j) > 0) {
    ts = cJSON_GetArraySize(j);
    snprintf(b->slots_src, sizeof b->slots_src, "llama.cpp /slots");
  } else if (props && ts >= 1) {
    snprintf(b->slots_src, sizeof b->slots_src, "llama.cpp /props total_slots");
  }
  cJSON_Delete(j);
  if (props) {
    if (ts >= 1 && ts < 1e6) b->slots = (uint32_t)ts;
    b->watch = RS_OA_WATCH_SLOTS;
    return;
  }
  const char *info[] = {"/get_server_info", "/server_info"};
  for (int i = 0; i < 2 && !b->slots; i++) {
    j = get_json(l, info[i], to);
    double mr = num(j, "max_running_requests");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "internal_states");
    if (mr < 1 && cJSON_IsArray(st)) mr = num(cJSON_GetArrayItem(st, 0), "max_running_requests");
    if (mr >= 1 && mr < 1e6) {
      b->slots = (uint32_t)mr;
      snprintf(b->slots_src, sizeof b->slots_src, "SGLang %s max_running_requests", info[i]);
    }
    double cl = num(j, "context_length"); /* SGLang's --context-length (null: the model's own) */
    if (!b->n_ctx && cl > 0 && cl < 4e9) {
      b->n_ctx = (uint32_t)cl;
      snprintf(b->ctx_src, sizeof b->ctx_src, "SGLang %s context_length", info[i]);
    }
    cJSON_Delete(j);
  }
  char url[2200], why[200];
  rs_oa_root_url(l, "/metrics", url, sizeof url);
  buf_t r = {0};
  if (http(l, url, NULL, to, &r, why, sizeof why) == 200 && r.s) {
    if (gauge(r.s, "vllm:num_requests_running") >= 0) b->watch = RS_OA_WATCH_VLLM;
    else if (gauge(r.s, "sglang:num_running_reqs") >= 0) b->watch = RS_OA_WATCH_SGLANG;
  }
  free(r.s);
}

int rs_oa_watch(const rs_oa_body *b, const rs_oa_link *l, uint32_t *running, uint32_t *waiting) {
  if (b->watch == RS_OA_WATCH_NONE) return -1;
  double to = l->timeout_s < 2 ? l->timeout_s : 2;
  if (b->watch == RS_OA_WATCH_SLOTS) { /* llama.cpp says what runs; what waits is ours beyond it */
    cJSON *j = get_json(l, "/slots", to), *sl;
    if (!cJSON_IsArray(j)) {
      cJSON_Delete(j);
      return -1;
    }
    uint32_t r = 0;
    cJSON_ArrayForEach(sl, j) r += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sl, "is_processing"));
    cJSON_Delete(j);
    *running = r;
    *waiting = 0;
    return 0;
  }
  char url[2200], why[200];
  rs_oa_root_url(l, "/metrics", url, sizeof url);
  buf_t r = {0};
  int rc = -1;
  if (http(l, url, NULL, to, &r, why, sizeof why) == 200 && r.s) {
    bool v = b->watch == RS_OA_WATCH_VLLM;
    double ru = gauge(r.s, v ? "vllm:num_requests_running" : "sglang:num_running_reqs");
    double wa = gauge(r.s, v ? "vllm:num_requests_waiting" : "sglang:num_queue_reqs");
    if (ru >= 0 && wa >= 0 && ru < 1e7 && wa < 1e7) {
      *running = (uint32_t)ru;
      *waiting = (uint32_t)wa;
      rc = 0;
    }
  }
  free(r.s);
  return rc;
}

/* llama.cpp: GET <root>/props; vLLM (and SGLang): GET <url>/models. */
static void read_facts(rs_oa_body *b, const rs_oa_link *l) {
  if (b->server_note[0]) return; /* once */
  size_t ul = strlen(l->url);
  while (ul && l->url[ul - 1] == '/') ul--;
  char url[2200], why[200];
  double to = l->timeout_s < 10 ? l->timeout_s : 10;
  buf_t r = {0};
  rs_oa_root_url(l, "/props", url, sizeof url);
  cJSON *j = http(l, url, NULL, to, &r, why, sizeof why) == 200 && r.s ? cJSON_Parse(r.s) : NULL;
  free(r.s);
  const cJSON *dg = j ? cJSON_GetObjectItemCaseSensitive(j, "default_generation_settings") : NULL;
  if (cJSON_IsObject(dg) || (j && num(j, "n_ctx") > 0)) {
    double nc = num(dg, "n_ctx") > 0 ? num(dg, "n_ctx") : num(j, "n_ctx");
    if (nc > 0 && nc < 4e9) {
      b->n_ctx = (uint32_t)nc;
      snprintf(b->ctx_src, sizeof b->ctx_src, "llama.cpp /props n_ctx");
    }
    b->tokenizer = RS_OA_TOK_LLAMACPP; /* llama.cpp's /tokenize (and /apply-template for chat) */
    const cJSON *pa = cJSON_GetObjectItemCaseSensitive(dg, "params");
    if (!cJSON_IsObject(pa)) pa = dg;
    rs_sbuf s = {0};
    rs_sbuf_printf(&s, "/props n_ctx %u; its defaults:", (unsigned)b->n_ctx);
    const char *keys[] = {"temperature", "top_k", "top_p", "min_p", "repeat_penalty", "presence_penalty"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
      if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(pa, keys[i]))) rs_sbuf_printf(&s, " %s=%g", keys[i], num(pa, keys[i]));
    read_capacity(b, l, j, to);
    if (b->slots) rs_sbuf_printf(&s, "; %u slots", (unsigned)b->slots);
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
      snprintf(b->ctx_src, sizeof b->ctx_src, "/v1/models max_model_len");
      b->tokenizer = RS_OA_TOK_VLLM; /* vLLM's /tokenize takes the messages (checked at first use) */
    }
  }
  cJSON_Delete(j);
  if (!b->server_note[0]) snprintf(b->server_note, sizeof b->server_note, "no /props or /models context size");
  read_capacity(b, l, NULL, to);
  size_t k = strlen(b->server_note);
  if (b->slots)
    snprintf(b->server_note + k, sizeof b->server_note - k, "; %u at once (%s)", (unsigned)b->slots, b->slots_src);
  else if (b->watch)
    snprintf(b->server_note + k, sizeof b->server_note - k, "; capacity not said, its queue read from /metrics");
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

/* What one probe request found out. */
enum { P_NOANSWER = -1, P_IGNORED = 0, P_APPLIED = 1, P_CUT = 2 };

/* Is the answer, whitespace outside strings aside, a non-empty proper prefix of the only
 * admissible answer {"regsweep_probe":"zq7"}? A grammar-constrained answer cut by max_tokens is
 * (a byte-level model spends tokens on the whitespace the JSON grammar admits); an ignored schema
 * gives prose, which is not. */
static bool cut_prefix(const char *text) {
  static const char want[] = "{\"" PROBE_KEY "\":\"" PROBE_VALUE "\"}";
  size_t k = 0;
  bool in_str = false;
  for (const char *t = text ? text : ""; *t; t++) {
    if (!in_str && (*t == ' ' || *t == '\n' || *t == '\t' || *t == '\r')) continue;
    if (k >= sizeof want - 1 || *t != want[k]) return false;
    if (*t == '"') in_str = !in_str;
    k++;
  }
  return k > 0 && k < sizeof want - 1;
}

/* One probe request in `dialect` with max_tokens `maxt`; what the server answered goes to
 * `said` (an excerpt, or the HTTP status and message, or curl's error). */
static int probe_one(const rs_oa_body *b, const rs_oa_link *l, int dialect, unsigned maxt, char *said, size_t sn) {
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
  cJSON_AddNumberToObject(r, "max_tokens", maxt);
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
    out = P_NOANSWER;
  } else if (code / 100 != 2) { /* the server refused the form outright */
    char msg[160];
    rs_oa_server_message(resp.s, resp.n, msg, sizeof msg);
    snprintf(said, sn, "HTTP %ld: %s", code, msg);
    out = P_IGNORED;
  } else {
    rs_gen g;
    memset(&g, 0, sizeof g);
    if (rs_openai_parse_response(resp.s, resp.n, b->chat, &g, why, sizeof why)) {
      snprintf(said, sn, "%s", why);
      out = P_NOANSWER;
    } else {
      out = conforms(g.text) ? P_APPLIED : g.finish == RS_FINISH_LENGTH && cut_prefix(g.text) ? P_CUT : P_IGNORED;
      size_t k = 0;
      if (!g.text || !g.text[0]) k = (size_t)snprintf(said, sn, "%s", "an empty answer");
      else said[k++] = '\'';
      for (const char *t = g.text; t && *t && k + 2 < sn && k < 60; t++) said[k++] = *t >= 32 && *t < 127 ? *t : ' ';
      if (g.text && g.text[0]) said[k++] = '\'';
      said[k < sn ? k : sn - 1] = 0;
      if (g.finish == RS_FINISH_LENGTH && k + 30 < sn)
        snprintf(said + k, sn - k, " (cut at max_tokens %u)", maxt);
    }
    rs_gen_clear(&g);
  }
  free(resp.s);
  return out;
}

/* max_tokens of the probe: the answer is 24 bytes, but the JSON grammar lets a weak model put
 * whitespace around every token (up to 20 blanks per gap in llama.cpp's), and a byte-level
 * vocabulary spends a token per byte. A cut answer that is a prefix of the admissible one is
 * asked again once with PROBE_TOKENS_RETRY. */
#define PROBE_TOKENS 96
#define PROBE_TOKENS_RETRY 1024

/* A dialect's verdict: applied, cut twice while still a prefix (applied: an ignored schema does
 * not write a prefix of {"regsweep_probe":...}), ignored or no answer. */
static int probe_dialect(const rs_oa_body *b, const rs_oa_link *l, int dialect, char *said, size_t sn) {
  int r = probe_one(b, l, dialect, PROBE_TOKENS, said, sn);
  if (r == P_CUT) r = probe_one(b, l, dialect, PROBE_TOKENS_RETRY, said, sn);
  return r;
}

int rs_oa_probe(rs_oa_body *b, const rs_oa_link *l, rs_err *e) {
  if (b->dialect == RS_OA_SCHEMA_NONE || !b->probe) {
    read_facts(b, l);
    b->probe_state = RS_OA_PROBE_OFF;
    snprintf(b->probe_note, sizeof b->probe_note, "%s", b->dialect == RS_OA_SCHEMA_NONE ? "no schema" : "not run (probe=0)");
    return 0;
  }
  char said[RS_OA_NDIALECTS][200];
  int r = probe_dialect(b, l, b->dialect, said[b->dialect], sizeof said[0]);
  if (r == P_NOANSWER) { /* the server is down or busy: the sweep's own requests will say so;
                          * probe (and read its facts) again before the next call */
    b->probe_state = RS_OA_PROBE_PENDING;
    snprintf(b->probe_note, sizeof b->probe_note, "no answer yet (%.150s)", said[b->dialect]);
    return 0;
  }
  read_facts(b, l);
  if (r != P_IGNORED) {
    b->probe_state = RS_OA_PROBE_OK;
    if (r == P_APPLIED) snprintf(b->probe_note, sizeof b->probe_note, "the server applied it");
    else snprintf(b->probe_note, sizeof b->probe_note, "the server applied it (its answer, cut at %u tokens, was a "
                  "prefix of the only admissible one)", PROBE_TOKENS_RETRY);
    return 0;
  }
  /* ignored or refused: which dialect does this server read? Each is named with its answer. */
  int found = -1;
  bool tried[RS_OA_NDIALECTS] = {false};
  tried[b->dialect] = true;
  for (int d = RS_OA_SCHEMA_OPENAI; d < RS_OA_NDIALECTS && found < 0; d++) {
    if (d == b->dialect) continue;
    tried[d] = true;
    if (probe_dialect(b, l, d, said[d], sizeof said[d]) > 0) found = d;
  }
  snprintf(b->probe_note, sizeof b->probe_note, "ignored (answered %.80s)", said[b->dialect]);
  rs_sbuf m = {0};
  rs_sbuf_printf(&m, "openai %s: schema=%s: the server does not apply the structured-output request (the probe's schema "
               "admits only {\"" PROBE_KEY "\":\"" PROBE_VALUE "\"}; it answered %.70s)", l->endpoint,
               rs_oa_dialect_name[b->dialect], said[b->dialect]);
  if (found > 0) {
    for (int d = RS_OA_SCHEMA_OPENAI; d < found; d++) /* the others tried before the one that works */
      if (tried[d] && d != b->dialect)
        rs_sbuf_printf(&m, "; nor does schema=%s (answered %.70s)", rs_oa_dialect_name[d], said[d]);
    rs_sbuf_printf(&m, "; schema=%s does: use it (schema=0 sweeps unconstrained on purpose, probe=0 skips this check)",
                 rs_oa_dialect_name[found]);
  } else {
    rs_sbuf_puts(&m, "; nor does");
    for (int d = RS_OA_SCHEMA_OPENAI; d < RS_OA_NDIALECTS; d++)
      if (tried[d] && d != b->dialect) rs_sbuf_printf(&m, " schema=%s (answered %.70s);", rs_oa_dialect_name[d], said[d]);
    rs_sbuf_puts(&m, " use schema=0 to sweep unconstrained on purpose");
  }
  rs_errf(e, NULL, 0, "%s", m.s);
  free(m.s);
  return -1;
}
