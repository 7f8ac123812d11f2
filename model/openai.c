/* openai.c - the openai: back end: a libcurl + cJSON client for OpenAI-compatible inference
 * servers (vLLM, SGLang, llama.cpp server), on NVIDIA or AMD GPUs alike.
 *
 *   openai:http://host:8000/v1?model=M&api=chat|completions&temperature=0.7&top_p=0.95
 *          &max_tokens=4096&stop=S&schema=1&timeout=120&retries=4&inflight=64
 *          &key_env=OPENAI_API_KEY&template=FILE&feedback=1&backoff=0.5&backoff_cap=8&max_body=N
 *
 * One HTTP request per attempt (n=1, the attempt's seed; attempt 0 is greedy), up to `inflight`
 * of them at once through curl multi so the server batches them. Connection errors, timeouts,
 * 429 and 5xx are retried with capped exponential backoff and a jitter derived from the attempt
 * seed (deterministic); a request that finally fails is an `infra` candidate, never a model
 * failure. The response body is untrusted and parsed defensively. The API key is read from the
 * environment for each call and is neither kept in the model nor written into any text.
 * docs/models.md describes the parameters. */
#include "model/model.h"
#include "model/openai_schema.h"
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The built-in prompt template: a copy of prompts/default.txt (tests/test_openai.c checks that
 * both render the same request), so a run does not depend on the working directory. */
static const char default_template[] =
    "You are a register allocator for {{target}} GPU kernels. You read one function in a normalized machine IR: one line per block and per instruction, virtual registers named by kind and number (AMD s0, v0, a0; NVIDIA r0, d0, p0). You assign every virtual register a physical register so that\n"
    "- two values that are live at the same time never share a register (for tuples: any register of the tuple),\n"
    "- each register fits its value's class: register file, width and alignment,\n"
    "- physical registers the function already uses while a value is live are avoided.\n"
    "Answer with one JSON object and nothing else: {\"<virtual register>\": \"<physical register>\", ...}, with every virtual register of the function as a key.\n"
    "{{user}}\n"
    "Target: {{target}}\n"
    "\n"
    "Register files and classes of this function:\n"
    "{{registers}}\n"
    "Function:\n"
    "{{ir}}\n"
    "{{feedback}}\n"
    "Answer with the JSON object only.\n";

#define OA_MAX_BODY_DEFAULT ((size_t)16 << 20)

typedef struct {
  char *endpoint; /* base URL + /chat/completions or /completions */
  char *model;
  char *stop;     /* NULL: none */
  char *tmpl;     /* template text */
  char key_env[128];
  double temperature, top_p, timeout_s, backoff_s, backoff_cap_s;
  bool chat, schema, feedback, has_top_p;
  uint32_t max_tokens, retries, inflight;
  size_t max_body;
  CURLM *multi;   /* one per model: keeps the connections to the server open across calls */
  struct oa_job *jobs, *jobs_tail; /* submitted and not yet returned, in submit order */
  uint32_t njobs, running;
  /* the adaptive window (AIMD): cut on 429/503 or rising latency, grown by one per window of
   * answers, never above inflight */
  double win, last_cut, lat_base, lat_ewma;
  uint32_t win_min, cuts, nlat;
} oa_state;

static const char *const known_params[] = {"model", "api", "temperature", "top_p", "max_tokens", "stop",
                                           "schema", "timeout", "retries", "inflight", "key_env", "template",
                                           "feedback", "backoff", "backoff_cap", "max_body"};

static int param_num(const rs_model *m, const char *key, double lo, double hi, double *out, rs_err *e) {
  char buf[64];
  if (!rs_model_param(m, key, buf, sizeof buf)) return 0;
  char *end;
  double d = strtod(buf, &end);
  if (end == buf || *end || !(d >= lo && d <= hi))
    return rs_errf(e, NULL, 0, "openai: %s=%s: expected a number in [%g, %g]", key, buf, lo, hi);
  *out = d;
  return 0;
}

static int param_bool(const rs_model *m, const char *key, bool *out, rs_err *e) {
  char buf[16];
  if (!rs_model_param(m, key, buf, sizeof buf)) return 0;
  if (strcmp(buf, "0") && strcmp(buf, "1")) return rs_errf(e, NULL, 0, "openai: %s=%s: expected 0 or 1", key, buf);
  *out = buf[0] == '1';
  return 0;
}

static void jobs_free(oa_state *s);

static void state_free(oa_state *s) {
  if (!s) return;
  jobs_free(s);
  if (s->multi) curl_multi_cleanup(s->multi);
  free(s->endpoint);
  free(s->model);
  free(s->stop);
  free(s->tmpl);
  free(s);
}

static int oa_configure(rs_model *m, oa_state *s, rs_err *e) {
  /* unknown keys are typos that would otherwise silently fall back to a default */
  for (const char *c = m->query; c && *c;) {
    const char *amp = strchr(c, '&');
    size_t l = amp ? (size_t)(amp - c) : strlen(c);
    const char *eq = memchr(c, '=', l);
    size_t kl = eq ? (size_t)(eq - c) : l;
    bool ok = false;
    for (size_t i = 0; i < sizeof known_params / sizeof *known_params; i++)
      if (strlen(known_params[i]) == kl && !strncmp(c, known_params[i], kl)) ok = true;
    if (!ok && l)
      return rs_errf(e, NULL, 0, "openai: unknown parameter '%.*s' (model, api, temperature, top_p, max_tokens, stop, "
                     "schema, timeout, retries, inflight, key_env, template, feedback, backoff, backoff_cap, max_body)",
                     (int)(kl < 64 ? kl : 64), c);
    c = amp ? amp + 1 : NULL;
  }
  const char *url = m->arg;
  if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
    return rs_errf(e, NULL, 0, "openai: '%s' is not an http:// or https:// URL (openai:http://host:8000/v1?model=M)", url);
  char buf[4096];
  if (!rs_model_param(m, "model", buf, sizeof buf) || !buf[0])
    return rs_errf(e, NULL, 0, "openai: model=NAME is required (the server's model name)");
  s->model = rs_xstrndup(buf, strlen(buf));
  s->chat = true;
  if (rs_model_param(m, "api", buf, sizeof buf)) {
    if (!strcmp(buf, "completions")) s->chat = false;
    else if (strcmp(buf, "chat")) return rs_errf(e, NULL, 0, "openai: api=%s: expected chat or completions", buf);
  }
  size_t ul = strlen(url);
  while (ul && url[ul - 1] == '/') ul--;
  const char *path = s->chat ? "/chat/completions" : "/completions";
  s->endpoint = rs_xmalloc(ul + strlen(path) + 1);
  memcpy(s->endpoint, url, ul);
  strcpy(s->endpoint + ul, path);

  double d;
  s->temperature = 0.7;
  if (param_num(m, "temperature", 0, 10, &s->temperature, e)) return -1;
  d = -1;
  if (param_num(m, "top_p", 0, 1, &d, e)) return -1;
  s->has_top_p = d >= 0;
  s->top_p = d;
  d = 4096;
  if (param_num(m, "max_tokens", 1, 1e7, &d, e)) return -1;
  s->max_tokens = (uint32_t)d;
  s->timeout_s = 120;
  if (param_num(m, "timeout", 0.001, 86400, &s->timeout_s, e)) return -1;
  d = 4;
  if (param_num(m, "retries", 0, 100, &d, e)) return -1;
  s->retries = (uint32_t)d;
  d = 64; /* a GPU server batches 64-256 sequences at once */
  if (param_num(m, "inflight", 1, 1024, &d, e)) return -1;
  s->inflight = (uint32_t)d;
  s->backoff_s = 0.5;
  if (param_num(m, "backoff", 0, 3600, &s->backoff_s, e)) return -1;
  s->backoff_cap_s = 8;
  if (param_num(m, "backoff_cap", 0, 3600, &s->backoff_cap_s, e)) return -1;
  d = (double)OA_MAX_BODY_DEFAULT;
  if (param_num(m, "max_body", 256, 1e10, &d, e)) return -1;
  s->max_body = (size_t)d;
  s->schema = true;
  s->feedback = true;
  if (param_bool(m, "schema", &s->schema, e) || param_bool(m, "feedback", &s->feedback, e)) return -1;
  if (rs_model_param(m, "stop", buf, sizeof buf) && buf[0]) s->stop = rs_xstrndup(buf, strlen(buf));
  if (!rs_model_param(m, "key_env", s->key_env, sizeof s->key_env) || !s->key_env[0])
    snprintf(s->key_env, sizeof s->key_env, "OPENAI_API_KEY");
  if (rs_model_param(m, "template", buf, sizeof buf)) {
    size_t len;
    rs_err fe;
    s->tmpl = rs_read_file(buf, &len, &fe);
    if (!s->tmpl) return rs_errf(e, NULL, 0, "openai: template: %s", fe.msg);
  } else {
    s->tmpl = rs_xstrndup(default_template, sizeof default_template - 1);
  }
  return 0;
}

static int oa_open(rs_model *m, rs_err *e) {
  oa_state *s = rs_xcalloc(1, sizeof *s);
  if (oa_configure(m, s, e)) {
    state_free(s);
    return -1;
  }
  /* curl_global_init is process-wide but reference-counted (and thread-safe since curl 7.84):
   * each open is paired with the cleanup in oa_close, so the library keeps no global state. */
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    state_free(s);
    return rs_errf(e, NULL, 0, "openai: curl_global_init failed");
  }
  s->multi = curl_multi_init();
  if (!s->multi) {
    state_free(s);
    curl_global_cleanup();
    return rs_errf(e, NULL, 0, "openai: curl_multi_init failed");
  }
  curl_multi_setopt(s->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)s->inflight);
  s->win = s->inflight;
  s->win_min = s->inflight;
  m->state = s;
  return 0;
}

static void oa_close(rs_model *m) {
  state_free(m->state);
  m->state = NULL;
  curl_global_cleanup();
}

/* ---- prompt and request ------------------------------------------------------------------ */

static void render_prompt(const oa_state *s, const rs_gen_input *in, char **sys, char **user) {
  rs_sb regs = {0}, fb = {0};
  rs_oa_describe_registers(&regs, in->p);
  if (s->feedback && in->feedback && in->feedback[0]) {
    rs_sb_puts(&fb, "Your previous answer was rejected by the verifier:\n");
    rs_sb_puts(&fb, in->feedback);
    rs_sb_puts(&fb, "\nCorrect these problems in your new answer.\n");
  }
  const char *target = in->target ? in->target : in->p->tgt->name;
  const char *keys[] = {"target", "ir", "registers", "feedback", "instance"};
  const char *vals[] = {target, in->prompt ? in->prompt : "", regs.s ? regs.s : "", fb.s ? fb.s : "",
                        in->id ? in->id : ""};
  rs_oa_vars vars = {keys, vals, 5};
  /* {{user}} splits the template: the system message before it, the user message after it */
  const char *split = strstr(s->tmpl, "{{user}}");
  rs_sb a = {0}, b = {0};
  if (split) {
    size_t sl = (size_t)(split - s->tmpl);
    while (sl && (s->tmpl[sl - 1] == '\n' || s->tmpl[sl - 1] == ' ')) sl--;
    const char *u = split + 8;
    if (*u == '\n') u++;
    rs_oa_render(&a, s->tmpl, sl, &vars);
    rs_oa_render(&b, u, strlen(u), &vars);
  } else {
    rs_oa_render(&b, s->tmpl, strlen(s->tmpl), &vars);
  }
  free(regs.s);
  free(fb.s);
  *sys = a.s;
  *user = b.s;
}

static cJSON *build_request(const oa_state *s, const rs_gen_input *in) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "model", s->model);
  char *sys, *user;
  render_prompt(s, in, &sys, &user);
  if (s->chat) {
    cJSON *msgs = cJSON_AddArrayToObject(r, "messages");
    if (sys && sys[0]) {
      cJSON *mm = cJSON_CreateObject();
      cJSON_AddStringToObject(mm, "role", "system");
      cJSON_AddStringToObject(mm, "content", sys);
      cJSON_AddItemToArray(msgs, mm);
    }
    cJSON *mm = cJSON_CreateObject();
    cJSON_AddStringToObject(mm, "role", "user");
    cJSON_AddStringToObject(mm, "content", user);
    cJSON_AddItemToArray(msgs, mm);
  } else {
    rs_sb t = {0};
    if (sys && sys[0]) {
      rs_sb_puts(&t, sys);
      rs_sb_puts(&t, "\n");
    }
    rs_sb_puts(&t, user);
    cJSON_AddStringToObject(r, "prompt", t.s);
    free(t.s);
  }
  free(sys);
  free(user);
  cJSON_AddNumberToObject(r, "n", 1);
  cJSON_AddNumberToObject(r, "max_tokens", s->max_tokens);
  if (s->has_top_p) cJSON_AddNumberToObject(r, "top_p", s->top_p);
  if (s->stop) {
    cJSON *st = cJSON_AddArrayToObject(r, "stop");
    cJSON_AddItemToArray(st, cJSON_CreateString(s->stop));
  }
  if (s->schema) {
    /* response_format json_schema: vLLM >= 0.12 dropped guided_json and ignores unknown keys,
     * SGLang and llama.cpp server accept this form too */
    cJSON *rf = cJSON_AddObjectToObject(r, "response_format");
    cJSON_AddStringToObject(rf, "type", "json_schema");
    cJSON *js = cJSON_AddObjectToObject(rf, "json_schema");
    cJSON_AddStringToObject(js, "name", "allocation");
    cJSON_AddItemToObject(js, "schema", rs_oa_schema(in->p, in->vnames));
    cJSON_AddTrueToObject(js, "strict");
  }
  /* per-attempt fields, replaced for each attempt */
  cJSON_AddNumberToObject(r, "temperature", 0);
  cJSON_AddNumberToObject(r, "seed", 0);
  return r;
}

/* ---- transfers ---------------------------------------------------------------------------- */

enum { J_PENDING, J_RUNNING, J_WAIT, J_DONE };

typedef struct oa_job {
  void *tag;
  uint32_t attempt;
  uint64_t seed;
  int state;
  uint32_t tries;
  double start, next_at;
  char *body;      /* request body, printed once for all tries */
  CURL *h;
  struct curl_slist *hdr; /* this transfer's headers (the key lives here only while it runs) */
  char *resp;
  size_t len, cap, max;
  bool too_big;
  char errbuf[CURL_ERROR_SIZE];
  rs_gen g;
  struct oa_job *next;
} oa_job;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud) {
  oa_job *j = ud;
  size_t n = size * nmemb;
  if (j->len + n > j->max) { /* a hostile or broken server cannot make us buffer without bound */
    j->too_big = true;
    return 0;
  }
  if (j->len + n + 1 > j->cap) {
    size_t cap = j->cap ? j->cap : 4096;
    while (j->len + n + 1 > cap) cap *= 2;
    j->resp = rs_xrealloc(j->resp, cap);
    j->cap = cap;
  }
  memcpy(j->resp + j->len, ptr, n);
  j->len += n;
  j->resp[j->len] = 0;
  return n;
}

/* Hide the key wherever a server might have echoed it. */
static void scrub(char *s, const char *key) {
  size_t kl = key ? strlen(key) : 0;
  if (!s || kl < 4) return;
  for (char *p = strstr(s, key); p; p = strstr(p + kl, key)) memset(p, '*', kl);
}

/* A short printable excerpt of the server's error: error.message, message, detail, or the body. */
static void server_message(const char *body, size_t len, char *out, size_t n) {
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

static struct curl_slist *headers(const oa_state *s) {
  struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
  hdr = curl_slist_append(hdr, "Expect:"); /* no 100-continue round trip for large prompts */
  const char *key = getenv(s->key_env);
  if (key && key[0]) {
    size_t hl = strlen(key) + 32;
    char *h = rs_xmalloc(hl);
    snprintf(h, hl, "Authorization: Bearer %s", key);
    hdr = curl_slist_append(hdr, h);
    memset(h, 0, hl);
    free(h);
  }
  return hdr;
}

static void drop_handle(oa_state *s, oa_job *j) {
  if (j->h) {
    curl_multi_remove_handle(s->multi, j->h);
    curl_easy_cleanup(j->h);
    j->h = NULL;
  }
  curl_slist_free_all(j->hdr); /* the key is read from the environment again for the next try */
  j->hdr = NULL;
}

static int start_job(oa_state *s, oa_job *j, double now) {
  CURL *h = curl_easy_init();
  if (!h) return -1;
  j->h = h;
  j->hdr = headers(s);
  j->len = 0;
  j->too_big = false;
  j->errbuf[0] = 0;
  j->max = s->max_body;
  curl_easy_setopt(h, CURLOPT_URL, s->endpoint);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, j->body);
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(j->body));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, j->hdr);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, j);
  curl_easy_setopt(h, CURLOPT_PRIVATE, j);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, j->errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* timeouts without SIGALRM: safe in a worker */
  long to = (long)(s->timeout_s * 1000);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, to > 0 ? to : 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, to < 10000 ? (to > 0 ? to : 1L) : 10000L);
  j->tries++;
  j->start = now;
  j->state = J_RUNNING;
  if (curl_multi_add_handle(s->multi, h) != CURLM_OK) {
    drop_handle(s, j);
    return -1;
  }
  s->running++;
  return 0;
}

/* Capped exponential backoff; the jitter comes from the attempt seed, so reruns wait alike. */
static double backoff(const oa_state *s, const oa_job *j) {
  double d = s->backoff_s;
  for (uint32_t i = 1; i < j->tries && d < s->backoff_cap_s; i++) d *= 2;
  if (d > s->backoff_cap_s) d = s->backoff_cap_s;
  uint64_t h = rs_hash_bytes(&j->tries, sizeof j->tries, j->seed ^ 0x6a09e667f3bcc909ull);
  return d * (0.5 + 0.5 * (double)(h >> 11) / 9007199254740992.0);
}

static void set_error(rs_gen *g, const oa_state *s, const char *what, uint32_t tries, bool transient) {
  g->infra = true;
  g->transient = transient;
  g->finish = RS_FINISH_ERROR;
  free(g->text);
  g->text = NULL;
  if (tries > 1)
    snprintf(g->error, sizeof g->error, "openai %s: %s (after %u tries)", s->endpoint, what, tries);
  else
    snprintf(g->error, sizeof g->error, "openai %s: %s", s->endpoint, what);
}

/* Fill g from a 200 response; returns 0, or -1 with why in `why` (openai_schema.h). */
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
    server_message(body, len, msg, sizeof msg);
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

static int parse_ok(const oa_state *s, const char *body, size_t len, rs_gen *g, char *why, size_t wn) {
  return rs_openai_parse_response(body, len, s->chat, g, why, wn);
}

/* A server error that a retry or a --resume cannot cure: the prompt does not fit its context. */
static bool deterministic_error(const char *msg) {
  static const char *const pat[] = {"exceeds the available context", "context shift is disabled",
                                    "maximum context length", "context length exceeded", "prompt is too long"};
  for (size_t i = 0; i < sizeof pat / sizeof *pat; i++)
    if (strstr(msg, pat[i])) return true;
  return false;
}

/* AIMD on the window: halve on 429/503 (once per second at most), cut by a quarter when the time
 * per completion token rises over 3x the best seen (the server queues us), else grow by one
 * per window of answers. */
static void window_cut(oa_state *s, double now, double factor, uint32_t floor) {
  if (now - s->last_cut < 1.0 || s->win <= floor) return;
  s->win *= factor;
  if (s->win < floor) s->win = floor;
  s->last_cut = now;
  s->cuts++;
  if ((uint32_t)s->win < s->win_min) s->win_min = (uint32_t)s->win;
}

static void window_answer(oa_state *s, const oa_job *j, double now) {
  double per = j->g.infer_s / (j->g.completion_tokens ? j->g.completion_tokens : 1);
  s->lat_ewma = s->nlat ? 0.9 * s->lat_ewma + 0.1 * per : per;
  if (++s->nlat >= 16 && (s->lat_base == 0 || s->lat_ewma < s->lat_base)) s->lat_base = s->lat_ewma;
  uint32_t floor = s->inflight / 8 ? s->inflight / 8 : 1;
  if (s->lat_base > 0 && s->lat_ewma > 3 * s->lat_base && now - s->last_cut > 5) {
    window_cut(s, now, 0.75, floor);
    return;
  }
  s->win += 1.0 / (s->win > 1 ? s->win : 1);
  if (s->win > s->inflight) s->win = s->inflight;
}

/* One finished transfer: done, or scheduled for a retry. */
static void finish_job(oa_state *s, oa_job *j, CURLcode res, double now) {
  long code = 0;
  rs_gen *g = &j->g;
  curl_easy_getinfo(j->h, CURLINFO_RESPONSE_CODE, &code);
  drop_handle(s, j);
  s->running--;
  g->infer_s = now - j->start; /* this request's own time: backoff waits are not inference */
  char why[220], msg[160];
  bool retry = false, transient = false;
  if (j->too_big) {
    snprintf(why, sizeof why, "response too large (over %zu bytes)", s->max_body);
  } else if (res == CURLE_OPERATION_TIMEDOUT) {
    /* not retried: the server would start the generation over (raise timeout=; --resume redoes it) */
    snprintf(why, sizeof why, "%.150s (not retried)", j->errbuf[0] ? j->errbuf : curl_easy_strerror(res));
    transient = true;
  } else if (res != CURLE_OK) {
    snprintf(why, sizeof why, "%.190s", j->errbuf[0] ? j->errbuf : curl_easy_strerror(res));
    retry = transient = true; /* connection refused or reset, short body: the server may recover */
  } else if (code == 429 || code >= 500 || code / 100 != 2) {
    server_message(j->resp, j->len, msg, sizeof msg);
    snprintf(why, sizeof why, "HTTP %ld%s%s", code, msg[0] ? ": " : "", msg);
    retry = transient = (code == 429 || code >= 500) && !deterministic_error(msg);
    if (code == 429 || code == 503) window_cut(s, now, 0.5, 1);
  } else if (!parse_ok(s, j->resp, j->len, g, why, sizeof why)) {
    j->state = J_DONE;
    window_answer(s, j, now);
    return;
  }
  if (retry && j->tries <= s->retries) {
    j->state = J_WAIT;
    j->next_at = now + backoff(s, j);
    return;
  }
  set_error(g, s, why, j->tries, transient);
  j->state = J_DONE;
}

static void job_free(oa_state *s, oa_job *j) {
  drop_handle(s, j);
  if (j->state == J_RUNNING) s->running--;
  rs_gen_clear(&j->g);
  free(j->body);
  free(j->resp);
  free(j);
}

static void jobs_free(oa_state *s) {
  for (oa_job *j = s->jobs, *n; j; j = n) {
    n = j->next;
    job_free(s, j);
  }
  s->jobs = s->jobs_tail = NULL;
  s->njobs = s->running = 0;
}

static int oa_submit(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds, void *tag,
                     rs_err *e) {
  oa_state *s = m->state;
  if (!n) return 0;
  if (!in || !in->p) return rs_errf(e, NULL, 0, "openai: no problem to prompt with");
  cJSON *req = build_request(s, in);
  for (uint32_t k = 0; k < n; k++) {
    oa_job *j = rs_xcalloc(1, sizeof *j);
    j->tag = tag;
    j->attempt = first + k;
    j->seed = seeds ? seeds[k] : first + k;
    /* attempt 0 is greedy (pass@1 of the model's best guess); the others sample */
    cJSON_ReplaceItemInObjectCaseSensitive(req, "temperature", cJSON_CreateNumber(first + k == 0 ? 0.0 : s->temperature));
    /* 31 bits: exact in JSON doubles and accepted by every server's seed type */
    cJSON_ReplaceItemInObjectCaseSensitive(req, "seed", cJSON_CreateNumber((double)(j->seed & 0x7fffffff)));
    char *b = cJSON_PrintUnformatted(req);
    j->body = b ? rs_xstrndup(b, strlen(b)) : NULL;
    cJSON_free(b);
    if (!j->body) {
      set_error(&j->g, s, "could not print the request", 0, false);
      j->state = J_DONE;
    }
    if (s->jobs_tail) s->jobs_tail->next = j;
    else s->jobs = j;
    s->jobs_tail = j;
    s->njobs++;
  }
  cJSON_Delete(req);
  return 0;
}

/* Start what the window allows, in submit order (retries when their backoff is over). */
static void start_jobs(oa_state *s, double now) {
  uint32_t w = (uint32_t)s->win;
  for (oa_job *j = s->jobs; j && s->running < (w ? w : 1); j = j->next)
    if (j->state == J_PENDING || (j->state == J_WAIT && j->next_at <= now))
      if (start_job(s, j, now)) {
        set_error(&j->g, s, "could not start a transfer", j->tries, true);
        j->state = J_DONE;
      }
}

static int collect(oa_state *s, rs_err *e) {
  int still = 0;
  if (curl_multi_perform(s->multi, &still) != CURLM_OK) return rs_errf(e, NULL, 0, "openai: curl multi failed");
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(s->multi, &left))) {
    if (msg->msg != CURLMSG_DONE) continue;
    oa_job *j = NULL;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&j);
    if (j) finish_job(s, j, msg->data.result, rs_now());
  }
  return 0;
}

/* Hand finished jobs over (key scrubbed), in submit order among those finished. */
static int hand_over(oa_state *s, rs_done *out, uint32_t max) {
  const char *key = getenv(s->key_env);
  uint32_t n = 0;
  oa_job *prev = NULL;
  for (oa_job *j = s->jobs, *nx; j && n < max; j = nx) {
    nx = j->next;
    if (j->state != J_DONE) {
      prev = j;
      continue;
    }
    scrub(j->g.text, key);
    scrub(j->g.error, key);
    out[n++] = (rs_done){j->tag, j->attempt, j->g};
    memset(&j->g, 0, sizeof j->g);
    if (prev) prev->next = nx;
    else s->jobs = nx;
    if (s->jobs_tail == j) s->jobs_tail = prev;
    s->njobs--;
    job_free(s, j);
  }
  return (int)n;
}

static bool any_done(const oa_state *s) {
  for (const oa_job *j = s->jobs; j; j = j->next)
    if (j->state == J_DONE) return true;
  return false;
}

static int oa_poll(rs_model *m, double timeout_s, rs_done *out, uint32_t max, rs_err *e) {
  oa_state *s = m->state;
  if (!s->njobs) return 0;
  double now = rs_now();
  start_jobs(s, now);
  if (s->running && collect(s, e)) return -1;
  if (!any_done(s) && timeout_s > 0) {
    double wait = timeout_s;
    for (const oa_job *j = s->jobs; j; j = j->next)
      if (j->state == J_WAIT && j->next_at - now < wait) wait = j->next_at - now;
    if (wait < 0) wait = 0;
    /* returns early on traffic, or when the verification threads call curl_multi_wakeup */
    curl_multi_poll(s->multi, NULL, 0, (int)(wait * 1000) + 1, NULL);
    start_jobs(s, rs_now());
    if (s->running && collect(s, e)) return -1;
  }
  return hand_over(s, out, max);
}

static uint32_t oa_pending(const rs_model *m) { return ((const oa_state *)m->state)->njobs; }

static uint32_t oa_room(const rs_model *m) {
  const oa_state *s = m->state;
  uint32_t w = (uint32_t)s->win, waiting = 0;
  for (const oa_job *j = s->jobs; j; j = j->next) waiting += j->state != J_DONE;
  return waiting < w ? w - waiting : 0;
}

static void oa_wake(rs_model *m) { curl_multi_wakeup(((oa_state *)m->state)->multi); }

static void oa_cancel(rs_model *m) { jobs_free(m->state); }

static void oa_window(const rs_model *m, rs_window *w) {
  const oa_state *s = m->state;
  w->now = (uint32_t)s->win;
  w->max = s->inflight;
  w->min_seen = s->win_min;
  w->inflight = s->running;
  w->cuts = s->cuts;
}

static void oa_limit(rs_model *m, uint32_t max) {
  oa_state *s = m->state;
  s->inflight = max;
  s->win = s->win_min = max;
  curl_multi_setopt(s->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)max);
}

/* The synchronous interface over the asynchronous one (a call's own candidates only: callers do
 * not mix the two). Candidates are handed to in->ready as they complete. */
static int oa_generate(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                       rs_gen *out, rs_err *e) {
  if (!n) return 0;
  if (oa_submit(m, in, first, n, seeds, out, e)) return -1;
  rs_done buf[64];
  uint32_t done = 0;
  while (done < n) {
    int k = oa_poll(m, 1.0, buf, 64, e);
    if (k < 0) {
      oa_cancel(m);
      for (uint32_t i = 0; i < n; i++)
        if (!out[i].infra && !out[i].text) {
          set_error(&out[i], m->state, "aborted: curl multi failed", 0, true);
          if (in->ready) in->ready(in->ready_ctx, i, &out[i]);
        }
      return -1;
    }
    for (int i = 0; i < k; i++) {
      uint32_t idx = buf[i].attempt - first;
      out[idx] = buf[i].g;
      if (in->ready) in->ready(in->ready_ctx, idx, &out[idx]);
      done++;
    }
  }
  return 0;
}

const rs_model_ops rs_model_openai = {
    .scheme = "openai",
    .open = oa_open,
    .generate = oa_generate,
    .close = oa_close,
    .streams = true,
};

const rs_model_async rs_model_openai_async = {
    .submit = oa_submit,
    .poll = oa_poll,
    .room = oa_room,
    .pending = oa_pending,
    .wake = oa_wake,
    .cancel = oa_cancel,
    .window = oa_window,
    .limit = oa_limit,
};
