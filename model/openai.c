/* openai.c - the openai: back end: a libcurl + cJSON client for OpenAI-compatible inference
 * servers (vLLM, SGLang, llama.cpp server), on NVIDIA or AMD GPUs alike.
 *
 *   openai:http://host:8000/v1?model=M&api=chat|completions&temperature=0.7&top_p=0.95
 *          &top_k=-1&min_p=0&sampling=explicit|server&n=1&max_tokens=4096&stop=S
 *          &schema=openai|llamacpp|vllm|0&probe=1&timeout=120&retries=4&inflight=64
 *          &key_env=OPENAI_API_KEY&template=FILE&feedback=1&backoff=0.5&backoff_cap=8&max_body=N
 *
 * One HTTP request per attempt (n=1, the attempt's seed; attempt 0 is greedy; n=K: one request
 * per K attempts, rs_oa_group), up to a window of them at once through curl multi so the server
 * batches them: the asynchronous interface (submit/poll, model.h) lets a worker keep the window
 * full across instances; the window starts at `inflight` (or the sweep's --inflight) but no
 * higher than the server's capacity where it says it (its slots: requests beyond them would wait
 * in its queue while their timeout runs; openai_probe.c), comes down to what runs when the server
 * shows a queue, halves on 429/503, shrinks when the time per token rises, and grows back (AIMD). Connection errors, 429
 * and 5xx are retried with capped exponential backoff and a jitter derived from the attempt seed
 * (deterministic); a timeout is not (the server would start the generation over); a request that
 * finally fails is an `infra` candidate, never a model failure. The response body is untrusted and parsed defensively. The API key is read from the
 * environment for each call and is neither kept in the model nor written into any text.
 * What a request says is model/openai_body.c, what an answer means model/openai_reply.c.
 * docs/models.md describes the parameters. */
#include "model/openai_int.h"
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OA_MAX_BODY_DEFAULT ((size_t)16 << 20)

typedef struct {
  rs_oa_body b;   /* what the requests say (openai_body.c) */
  char *endpoint; /* base URL + /chat/completions or /completions */
  char key_env[128];
  double timeout_s, backoff_s, backoff_cap_s;
  uint32_t retries, inflight;
  size_t max_body;
  CURLM *multi;   /* one per model: keeps the connections to the server open across calls */
  struct oa_job *jobs, *jobs_tail; /* submitted and not yet returned, in submit order */
  uint32_t njobs, running, pending_attempts;
  /* the adaptive window (AIMD): cut on 429/503 or rising latency, grown by one per window of
   * answers, never above inflight */
  double win, last_cut, lat_base, lat_ewma;
  uint32_t win_min, cuts, nlat;
  /* the server's capacity (said at open, or learnt from its queue while running): the window
   * fills it, not its queue */
  uint32_t inflight_cfg, cap, srv_running, srv_waiting;
  double next_watch, svc_ewma;
  uint32_t nsvc;
  char learned[96];
} oa_state;

/* transport parameters; the request-shaping ones are rs_oa_body_knows' */
static const char *const known_params[] = {"timeout", "retries", "inflight", "key_env", "backoff", "backoff_cap",
                                           "max_body"};

static void jobs_free(oa_state *s);

static void state_free(oa_state *s) {
  if (!s) return;
  jobs_free(s);
  if (s->multi) curl_multi_cleanup(s->multi);
  free(s->endpoint);
  rs_oa_body_free(&s->b);
  free(s);
}

static int oa_configure(rs_model *m, oa_state *s, rs_err *e) {
  /* unknown keys are typos that would otherwise silently fall back to a default */
  for (const char *c = m->query; c && *c;) {
    const char *amp = strchr(c, '&');
    size_t l = amp ? (size_t)(amp - c) : strlen(c);
    const char *eq = memchr(c, '=', l);
    size_t kl = eq ? (size_t)(eq - c) : l;
    bool ok = rs_oa_body_knows(c, kl);
    for (size_t i = 0; i < sizeof known_params / sizeof *known_params; i++)
      if (strlen(known_params[i]) == kl && !strncmp(c, known_params[i], kl)) ok = true;
    if (!ok && l)
      return rs_errf(e, NULL, 0, "openai: unknown parameter '%.*s' (model, api, temperature, top_p, top_k, min_p, "
                     "repetition_penalty, presence_penalty, frequency_penalty, sampling, n, max_tokens, stop, schema, schema_strict, "
                     "probe, timeout, retries, inflight, key_env, template, feedback, backoff, backoff_cap, max_body)",
                     (int)(kl < 64 ? kl : 64), c);
    c = amp ? amp + 1 : NULL;
  }
  const char *url = m->arg;
  if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
    return rs_errf(e, NULL, 0, "openai: '%s' is not an http:// or https:// URL (openai:http://host:8000/v1?model=M)", url);
  if (rs_oa_body_configure(m, &s->b, e)) return -1;
  size_t ul = strlen(url);
  while (ul && url[ul - 1] == '/') ul--;
  const char *path = s->b.chat ? "/chat/completions" : "/completions";
  s->endpoint = rs_xmalloc(ul + strlen(path) + 1);
  memcpy(s->endpoint, url, ul);
  strcpy(s->endpoint + ul, path);

  double d;
  s->timeout_s = 120;
  if (rs_oa_param_num(m, "timeout", 0.001, 86400, &s->timeout_s, e)) return -1;
  d = 4;
  if (rs_oa_param_num(m, "retries", 0, 100, &d, e)) return -1;
  s->retries = (uint32_t)d;
  d = 64; /* a GPU server batches 64-256 sequences at once */
  if (rs_oa_param_num(m, "inflight", 1, 1024, &d, e)) return -1;
  s->inflight = s->inflight_cfg = (uint32_t)d;
  s->backoff_s = 0.5;
  if (rs_oa_param_num(m, "backoff", 0, 3600, &s->backoff_s, e)) return -1;
  s->backoff_cap_s = 8;
  if (rs_oa_param_num(m, "backoff_cap", 0, 3600, &s->backoff_cap_s, e)) return -1;
  d = (double)OA_MAX_BODY_DEFAULT;
  if (rs_oa_param_num(m, "max_body", 256, 1e10, &d, e)) return -1;
  s->max_body = (size_t)d;
  if (!rs_model_param(m, "key_env", s->key_env, sizeof s->key_env) || !s->key_env[0])
    snprintf(s->key_env, sizeof s->key_env, "OPENAI_API_KEY");
  return 0;
}

/* The window's cap: inflight=, but no more than the server runs at once (n choices a request
 * take n of its sequences), so requests do not wait in its queue while their timeout runs. */
static void apply_capacity(oa_state *s) {
  uint32_t cap = s->inflight_cfg;
  if (!s->cap && s->b.slots) {
    s->cap = s->b.slots;
    snprintf(s->learned, sizeof s->learned, "%u at once (%s)", (unsigned)s->cap, s->b.slots_src);
  }
  if (s->cap) {
    uint32_t per = s->cap / (s->b.n > 1 ? s->b.n : 1);
    if (per < 1) per = 1;
    if (per < cap) cap = per;
  }
  s->inflight = cap;
  if (s->win > cap) s->win = cap;
  if (s->win_min > cap) s->win_min = cap;
  if (s->multi) curl_multi_setopt(s->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)cap);
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
  /* does the server honour the schema dialect? (openai_probe.c) */
  rs_oa_link link = {m->arg, s->endpoint, s->key_env, s->timeout_s};
  if (rs_oa_probe(&s->b, &link, e)) {
    state_free(s);
    curl_global_cleanup();
    return -1;
  }
  apply_capacity(s);
  m->state = s;
  return 0;
}

void rs_oa_model_describe(const rs_model *m, char *out, size_t n) {
  rs_oa_describe(&((const oa_state *)m->state)->b, out, n);
}

static void oa_close(rs_model *m) {
  state_free(m->state);
  m->state = NULL;
  curl_global_cleanup();
}

/* ---- transfers ---------------------------------------------------------------------------- */

enum { J_PENDING, J_RUNNING, J_WAIT, J_DONE };

typedef struct oa_job {
  void *tag;
  const rs_gen_input *in; /* valid until the job is handed over (the submit contract) */
  uint32_t attempt, cnt;  /* attempts attempt .. attempt+cnt-1: one request, cnt choices (n=K) */
  uint64_t seed;
  int state;
  uint32_t tries;
  double start, next_at;
  double timeout_s;  /* this try's: timeout= plus the wait the server's queue was expected to cost */
  bool queued;       /* started while the server was full (its service time includes a wait) */
  char *body;      /* request body, printed once for all tries */
  CURL *h;
  struct curl_slist *hdr; /* this transfer's headers (the key lives here only while it runs) */
  char *resp;
  size_t len, cap, max;
  bool too_big;
  char errbuf[CURL_ERROR_SIZE];
  rs_gen *g;       /* cnt candidates */
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

struct curl_slist *rs_oa_headers(const char *key_env) {
  struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
  hdr = curl_slist_append(hdr, "Expect:"); /* no 100-continue round trip for large prompts */
  const char *key = getenv(key_env);
  if (key && key[0]) {
    size_t hl = strlen(key) + 32;
    char *h = rs_xmalloc(hl);
    snprintf(h, hl, "Authorization: Bearer %s", key);
    hdr = curl_slist_append(hdr, h);
    memset(h, 0, hl); /* the key is kept nowhere */
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
  j->hdr = rs_oa_headers(s->key_env);
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
  /* timeout= counts from when the server starts the request: with the window at its capacity
   * that is now; a request that must queue (capacity unknown or learnt late, other clients) gets
   * the wait its place in the queue implies at the observed service time on top */
  uint32_t cap = s->cap ? s->cap : (uint32_t)s->win;
  uint32_t ahead = s->srv_waiting;
  if (s->running + 1 > cap && s->running + 1 - cap > ahead) ahead = s->running + 1 - cap;
  double extra = cap && ahead && s->nsvc ? s->svc_ewma * ((double)ahead / cap + 1) : 0;
  if (extra > 10 * s->timeout_s) extra = 10 * s->timeout_s;
  j->queued = ahead > 0;
  j->timeout_s = s->timeout_s + extra;
  long to = (long)(j->timeout_s * 1000);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, to > 0 ? to : 1L);
  long cto = (long)(s->timeout_s * 1000);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, cto < 10000 ? (cto > 0 ? cto : 1L) : 10000L);
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

/* The same failure for every candidate of a request. */
static void job_error(oa_job *j, const oa_state *s, const char *what, bool transient) {
  for (uint32_t i = 0; i < j->cnt; i++) set_error(&j->g[i], s, what, j->tries, transient);
  j->state = J_DONE;
}

/* AIMD on the window: halve on 429/503 (once a second at most), cut by a quarter (not below
 * inflight/8) when the time per completion token rises over 3x the best seen (the server queues
 * us), else grow by one per window of answers. */
static void window_cut(oa_state *s, double now, double factor, uint32_t floor) {
  if (now - s->last_cut < 1.0 || s->win <= floor) return;
  s->win *= factor;
  if (s->win < floor) s->win = floor;
  s->last_cut = now;
  s->cuts++;
  if ((uint32_t)s->win < s->win_min) s->win_min = (uint32_t)s->win;
}

static void window_answer(oa_state *s, const oa_job *j, double now) {
  if (!j->queued) { /* the service time of a request that did not wait: the queue's unit */
    s->svc_ewma = s->nsvc ? 0.8 * s->svc_ewma + 0.2 * j->g[0].infer_s : j->g[0].infer_s;
    s->nsvc++;
  }
  uint32_t tok = 0;
  for (uint32_t i = 0; i < j->cnt; i++) tok += j->g[i].completion_tokens;
  double per = j->g[0].infer_s / (tok ? tok : 1);
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
  curl_easy_getinfo(j->h, CURLINFO_RESPONSE_CODE, &code);
  drop_handle(s, j);
  s->running--;
  for (uint32_t i = 0; i < j->cnt; i++) j->g[i].infer_s = now - j->start; /* backoff waits are not inference */
  char why[220], msg[160];
  bool retry = false, transient = false, refused = false;
  if (j->too_big) {
    snprintf(why, sizeof why, "response too large (over %zu bytes)", s->max_body);
  } else if (res == CURLE_OPERATION_TIMEDOUT) {
    /* not retried: the server would start the generation over (raise timeout=; --resume redoes it) */
    if (j->timeout_s > s->timeout_s + 0.5)
      snprintf(why, sizeof why, "%.120s (timeout %.0f s: %.0f s plus %.0f s expected in the server's queue; not retried)",
               j->errbuf[0] ? j->errbuf : curl_easy_strerror(res), j->timeout_s, s->timeout_s, j->timeout_s - s->timeout_s);
    else
      snprintf(why, sizeof why, "%.150s (not retried)", j->errbuf[0] ? j->errbuf : curl_easy_strerror(res));
    transient = true;
  } else if (res != CURLE_OK) {
    snprintf(why, sizeof why, "%.190s", j->errbuf[0] ? j->errbuf : curl_easy_strerror(res));
    retry = transient = true; /* connection refused or reset, short body: the server may recover */
  } else if (code == 429 || code >= 500 || code / 100 != 2) {
    rs_oa_server_message(j->resp, j->len, msg, sizeof msg);
    snprintf(why, sizeof why, "HTTP %ld%s%s", code, msg[0] ? ": " : "", msg);
    /* the prompt does not fit the server's context: a fact of this instance (not retried, not
     * redone on --resume, its later attempts not sent), never of the server */
    if (rs_oa_deterministic_error(msg)) {
      char cwhy[256], full[200];
      uint32_t ptok = 0;
      snprintf(full, sizeof full, "HTTP %ld: %s", code, msg);
      rs_oa_context_refused(&s->b, j->in, full, &ptok, cwhy, sizeof cwhy);
      job_error(j, s, cwhy, false);
      for (uint32_t i = 0; i < j->cnt; i++) j->g[i].context = true, j->g[i].prompt_tokens = ptok;
      return;
    }
    retry = transient = code == 429 || code >= 500;
    /* every request meets these again: bad request, credentials, no such model, no room */
    refused = code == 400 || code == 401 || code == 403 || code == 404 || code == 413 || code == 422;
    if (code == 429 || code == 503) window_cut(s, now, 0.5, 1);
  } else if (!rs_oa_parse_reply(&s->b, j->in, j->resp, j->len, j->g, j->cnt, why, sizeof why)) {
    j->state = J_DONE;
    window_answer(s, j, now);
    return;
  }
  if (retry && j->tries <= s->retries) {
    j->state = J_WAIT;
    j->next_at = now + backoff(s, j);
    return;
  }
  job_error(j, s, why, transient);
  for (uint32_t i = 0; i < j->cnt; i++) j->g[i].refused = refused;
}

static void job_free(oa_state *s, oa_job *j) {
  if (j->state == J_RUNNING) s->running--;
  drop_handle(s, j);
  for (uint32_t i = 0; i < j->cnt; i++) rs_gen_clear(&j->g[i]);
  free(j->g);
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
  s->njobs = s->running = s->pending_attempts = 0;
}

static int oa_submit(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds, void *tag,
                     rs_err *e) {
  oa_state *s = m->state;
  if (!n) return 0;
  if (!in || !in->p) return rs_errf(e, NULL, 0, "openai: no problem to prompt with");
  rs_oa_link link = {m->arg, s->endpoint, s->key_env, s->timeout_s};
  if (s->b.probe_state == RS_OA_PROBE_PENDING) {
    if (rs_oa_probe(&s->b, &link, e)) return -1;
    apply_capacity(s); /* the server's facts may have come with the answer */
  }
  cJSON *req = rs_oa_build_request(&s->b, in);
  /* an instance known not to fit the server's context is recorded, not sent (openai_context.c) */
  char cwhy[256];
  uint32_t ptok = 0;
  bool fits = rs_oa_context_fits(&s->b, &link, in, req, &ptok, cwhy, sizeof cwhy);
  /* one request per group of attempts (rs_oa_group: n=K, attempt 0 alone) */
  for (uint32_t k = 0; k < n;) {
    oa_job *j = rs_xcalloc(1, sizeof *j);
    j->tag = tag;
    j->in = in;
    j->attempt = first + k;
    j->cnt = rs_oa_group(&s->b, first + k, n - k);
    j->seed = seeds ? seeds[k] : first + k;
    j->g = rs_xcalloc(j->cnt, sizeof *j->g);
    if (!fits) {
      job_error(j, s, cwhy, false);
      for (uint32_t i = 0; i < j->cnt; i++) j->g[i].context = true, j->g[i].prompt_tokens = ptok;
    } else if (!(j->body = rs_oa_attempt_body(req, &s->b, first + k, j->seed, j->cnt))) {
      job_error(j, s, "could not print the request", false);
    }
    if (s->jobs_tail) s->jobs_tail->next = j;
    else s->jobs = j;
    s->jobs_tail = j;
    s->njobs++;
    s->pending_attempts += j->cnt;
    k += j->cnt;
  }
  cJSON_Delete(req);
  return 0;
}

/* Start what the window allows, in submit order (retries when their backoff is over). */
static void start_jobs(oa_state *s, double now) {
  uint32_t w = (uint32_t)s->win;
  for (oa_job *j = s->jobs; j && s->running < (w ? w : 1); j = j->next)
    if (j->state == J_PENDING || (j->state == J_WAIT && j->next_at <= now))
      if (start_job(s, j, now)) job_error(j, s, "could not start a transfer", true);
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

/* Hand finished jobs over (key scrubbed), in submit order among the finished ones; a job whose
 * candidates do not all fit in out waits for the next poll. */
static int hand_over(oa_state *s, rs_done *out, uint32_t max) {
  const char *key = getenv(s->key_env);
  uint32_t n = 0;
  oa_job *prev = NULL;
  for (oa_job *j = s->jobs, *nx; j; j = nx) {
    nx = j->next;
    if (j->state != J_DONE || n + j->cnt > max) {
      prev = j;
      continue;
    }
    for (uint32_t i = 0; i < j->cnt; i++) {
      scrub(j->g[i].text, key);
      scrub(j->g[i].error, key);
      out[n++] = (rs_done){j->tag, j->attempt + i, j->g[i]};
      memset(&j->g[i], 0, sizeof j->g[i]);
    }
    if (prev) prev->next = nx;
    else s->jobs = nx;
    if (s->jobs_tail == j) s->jobs_tail = prev;
    s->njobs--;
    s->pending_attempts -= j->cnt;
    job_free(s, j);
  }
  return (int)n;
}

static bool any_done(const oa_state *s) {
  for (const oa_job *j = s->jobs; j; j = j->next)
    if (j->state == J_DONE) return true;
  return false;
}

/* Every 2 s while requests run, where the server tells (rs_oa_watch): what runs and waits there.
 * A queue while we have requests beyond what runs means the server is full: its capacity is what
 * runs (the most seen while others waited), and the window comes down to it (and grows no
 * further). A capacity the server said at open (its slots) is not second-guessed. */
static void watch(rs_model *m, oa_state *s, double now) {
  if (!s->b.watch || !s->running || now < s->next_watch) return;
  s->next_watch = now + 2;
  uint32_t ru, wa;
  rs_oa_link link = {m->arg, s->endpoint, s->key_env, s->timeout_s};
  if (rs_oa_watch(&s->b, &link, &ru, &wa)) return;
  if (s->b.watch == RS_OA_WATCH_SLOTS && s->running > ru) wa = s->running - ru; /* ours beyond its slots */
  s->srv_running = ru;
  s->srv_waiting = wa;
  /* the most that ran while others waited: a sample taken while a slot changed hands shows one
   * fewer, so the capacity only rises with later samples */
  if (wa && ru && !s->b.slots && ru > s->cap) {
    s->cap = ru;
    snprintf(s->learned, sizeof s->learned, "%u at once (learnt: %u running, %u waiting)", (unsigned)ru,
             (unsigned)ru, (unsigned)wa);
    apply_capacity(s);
    s->cuts++;
  }
}

static int oa_poll(rs_model *m, double timeout_s, rs_done *out, uint32_t max, rs_err *e) {
  oa_state *s = m->state;
  if (!s->njobs) return 0;
  double now = rs_now();
  watch(m, s, now);
  start_jobs(s, now);
  if (s->running && collect(s, e)) return -1;
  if (!any_done(s) && timeout_s > 0) {
    double wait = timeout_s;
    for (const oa_job *j = s->jobs; j; j = j->next)
      if (j->state == J_WAIT && j->next_at - now < wait) wait = j->next_at - now;
    if (wait < 0) wait = 0;
    /* returns early on traffic, or when a verification thread calls curl_multi_wakeup */
    curl_multi_poll(s->multi, NULL, 0, (int)(wait * 1000) + 1, NULL);
    start_jobs(s, rs_now());
    if (s->running && collect(s, e)) return -1;
  }
  return hand_over(s, out, max);
}

static uint32_t oa_pending(const rs_model *m) { return ((const oa_state *)m->state)->pending_attempts; }

/* Requests (not attempts: with n=K one request carries K) the window would start now. */
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
  w->capacity = s->cap;
  w->srv_running = s->srv_running;
  w->srv_waiting = s->srv_waiting;
  double now = rs_now();
  for (const oa_job *j = s->jobs; j; j = j->next)
    if (j->state == J_RUNNING && now - j->start > w->oldest_s) w->oldest_s = now - j->start;
  snprintf(w->learned, sizeof w->learned, "%s", s->learned);
}

static void oa_limit(rs_model *m, uint32_t max) {
  oa_state *s = m->state;
  s->inflight_cfg = max;
  s->win = s->win_min = max;
  apply_capacity(s);
}

/* The synchronous interface over the asynchronous one (a call's own candidates: callers do not
 * mix the two). Candidates are handed to in->ready as they complete. */
static int oa_generate(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                       rs_gen *out, rs_err *e) {
  if (!n) return 0;
  if (oa_submit(m, in, first, n, seeds, out, e)) return -1;
  enum { NB = 64 };
  rs_done *buf = rs_xcalloc(NB + n, sizeof *buf);
  uint32_t done = 0;
  int rc = 0;
  while (done < n) {
    int k = oa_poll(m, 1.0, buf, NB + n, e);
    if (k < 0) {
      oa_cancel(m);
      for (uint32_t i = 0; i < n; i++)
        if (!out[i].infra && !out[i].text) {
          set_error(&out[i], m->state, "aborted: curl multi failed", 0, true);
          if (in->ready) in->ready(in->ready_ctx, i, &out[i]);
        }
      rc = -1;
      break;
    }
    for (int i = 0; i < k; i++) {
      uint32_t idx = buf[i].attempt - first;
      out[idx] = buf[i].g;
      if (in->ready) in->ready(in->ready_ctx, idx, &out[idx]);
      done++;
    }
  }
  free(buf);
  return rc;
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
