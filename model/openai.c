/* openai.c - the openai: back end: a libcurl + cJSON client for OpenAI-compatible inference
 * servers (vLLM, SGLang, llama.cpp server), on NVIDIA or AMD GPUs alike.
 *
 *   openai:http://host:8000/v1?model=M&api=chat|completions&temperature=0.7&top_p=0.95
 *          &top_k=-1&min_p=0&sampling=explicit|server&n=1&max_tokens=4096&stop=S
 *          &schema=openai|llamacpp|vllm|0&probe=1&timeout=120&retries=4&inflight=8
 *          &key_env=OPENAI_API_KEY&template=FILE&feedback=1&backoff=0.5&backoff_cap=8&max_body=N
 *
 * One HTTP request per attempt (n=1, the attempt's seed; attempt 0 is greedy; n=K: one request
 * per K attempts, rs_oa_group), up to `inflight`
 * of them at once through curl multi so the server batches them. Connection errors, timeouts,
 * 429 and 5xx are retried with capped exponential backoff and a jitter derived from the attempt
 * seed (deterministic); a request that finally fails is an `infra` candidate, never a model
 * failure. The response body is untrusted and parsed defensively. The API key is read from the
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
} oa_state;

/* transport parameters; the request-shaping ones are rs_oa_body_knows' */
static const char *const known_params[] = {"timeout", "retries", "inflight", "key_env", "backoff", "backoff_cap",
                                           "max_body"};

static void state_free(oa_state *s) {
  if (!s) return;
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
                     "repetition_penalty, presence_penalty, frequency_penalty, sampling, n, max_tokens, stop, schema, "
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
  d = 8;
  if (rs_oa_param_num(m, "inflight", 1, 1024, &d, e)) return -1;
  s->inflight = (uint32_t)d;
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
  /* does the server honour the schema dialect? (openai_probe.c) */
  rs_oa_link link = {m->arg, s->endpoint, s->key_env, s->timeout_s};
  if (rs_oa_probe(&s->b, &link, e)) {
    state_free(s);
    curl_global_cleanup();
    return -1;
  }
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

typedef struct {
  uint32_t k, cnt; /* out[k .. k+cnt-1]: one request, cnt choices (model option n) */
  uint64_t seed;
  int state;
  uint32_t tries;
  double start, next_at;
  char *body;      /* request body, printed once for all tries */
  CURL *h;
  char *resp;
  size_t len, cap, max;
  bool too_big;
  char errbuf[CURL_ERROR_SIZE];
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

static int start_job(oa_state *s, oa_job *j, struct curl_slist *hdr, double now) {
  CURL *h = curl_easy_init();
  if (!h) return -1;
  j->h = h;
  j->len = 0;
  j->too_big = false;
  j->errbuf[0] = 0;
  j->max = s->max_body;
  curl_easy_setopt(h, CURLOPT_URL, s->endpoint);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, j->body);
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(j->body));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
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
    curl_easy_cleanup(h);
    j->h = NULL;
    return -1;
  }
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
static void job_error(oa_job *j, rs_gen *out, const oa_state *s, const char *what, bool transient) {
  for (uint32_t i = 0; i < j->cnt; i++) set_error(&out[j->k + i], s, what, j->tries, transient);
}

/* One finished transfer: done, or scheduled for a retry. */
static void finish_job(oa_state *s, const rs_gen_input *in, oa_job *j, CURLcode res, rs_gen *out, double now) {
  rs_gen *g = out + j->k;
  long code = 0;
  curl_easy_getinfo(j->h, CURLINFO_RESPONSE_CODE, &code);
  curl_multi_remove_handle(s->multi, j->h);
  curl_easy_cleanup(j->h);
  j->h = NULL;
  for (uint32_t i = 0; i < j->cnt; i++) g[i].infer_s = now - j->start; /* backoff waits are not inference */
  char why[200], msg[160];
  bool retry = false;
  if (j->too_big) {
    snprintf(why, sizeof why, "response too large (over %zu bytes)", s->max_body);
  } else if (res != CURLE_OK) {
    snprintf(why, sizeof why, "%.190s", j->errbuf[0] ? j->errbuf : curl_easy_strerror(res));
    retry = true; /* connection refused or reset, timeout, short body: the server may recover */
  } else if (code == 429 || code >= 500 || code / 100 != 2) {
    rs_oa_server_message(j->resp, j->len, msg, sizeof msg);
    snprintf(why, sizeof why, "HTTP %ld%s%s", code, msg[0] ? ": " : "", msg);
    retry = (code == 429 || code >= 500) && !rs_oa_deterministic_error(msg); /* context too small: futile */
  } else if (!rs_oa_parse_reply(&s->b, in, j->resp, j->len, g, j->cnt, why, sizeof why)) {
    j->state = J_DONE;
    return;
  }
  if (retry && j->tries <= s->retries) {
    j->state = J_WAIT;
    j->next_at = now + backoff(s, j);
    return;
  }
  job_error(j, out, s, why, retry);
  j->state = J_DONE;
}

/* A candidate is final: scrub the key and hand it to the caller at once (it verifies while the
 * other requests are in flight). */
static void job_done(oa_job *j, const rs_gen_input *in, rs_gen *out, const char *key) {
  j->state = J_DONE;
  for (uint32_t i = j->k; i < j->k + j->cnt; i++) {
    scrub(out[i].text, key);
    scrub(out[i].error, key);
    if (in->ready) in->ready(in->ready_ctx, i, &out[i]);
  }
}

static int oa_generate(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                       rs_gen *out, rs_err *e) {
  oa_state *s = m->state;
  if (!n) return 0;
  if (!in || !in->p) return rs_errf(e, NULL, 0, "openai: no problem to prompt with");
  rs_oa_link link = {m->arg, s->endpoint, s->key_env, s->timeout_s};
  if (s->b.probe_state == RS_OA_PROBE_PENDING && rs_oa_probe(&s->b, &link, e)) return -1;
  cJSON *req = rs_oa_build_request(&s->b, in);
  /* one request per group of attempts (rs_oa_groups: n=K, attempt 0 alone) */
  oa_job *jobs = rs_xcalloc(n, sizeof *jobs);
  uint32_t nj = 0;
  for (uint32_t k = 0; k < n; nj++) {
    uint32_t cnt = rs_oa_group(&s->b, first + k, n - k);
    jobs[nj].k = k;
    jobs[nj].cnt = cnt;
    jobs[nj].seed = seeds ? seeds[k] : first + k;
    jobs[nj].body = rs_oa_attempt_body(req, &s->b, first + k, jobs[nj].seed, cnt);
    k += cnt;
  }
  cJSON_Delete(req);

  /* the key lives only in this call's header list, which curl copies and we free below */
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

  int rc = 0;
  uint32_t done = 0, running = 0;
  for (uint32_t k = 0; k < nj; k++)
    if (!jobs[k].body) {
      job_error(&jobs[k], out, s, "could not print the request", false);
      job_done(&jobs[k], in, out, key);
      done++;
    }
  while (done < nj) {
    double now = rs_now(), wait = 1.0;
    for (uint32_t k = 0; k < nj && running < s->inflight; k++) {
      oa_job *j = &jobs[k];
      if (j->state == J_PENDING || (j->state == J_WAIT && j->next_at <= now)) {
        if (start_job(s, j, hdr, now)) {
          job_error(j, out, s, "could not start a transfer", true);
          job_done(j, in, out, key);
          done++;
          continue;
        }
        running++;
      }
    }
    for (uint32_t k = 0; k < nj; k++)
      if (jobs[k].state == J_WAIT && jobs[k].next_at - now < wait) wait = jobs[k].next_at - now;
    if (wait < 0) wait = 0;
    int still = 0;
    if (running) {
      curl_multi_poll(s->multi, NULL, 0, (int)(wait * 1000) + 1, NULL);
      if (curl_multi_perform(s->multi, &still) != CURLM_OK) {
        rc = rs_errf(e, NULL, 0, "openai: curl multi failed");
        break;
      }
    } else if (done < nj) {
      struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
      nanosleep(&ts, NULL);
    }
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(s->multi, &left))) {
      if (msg->msg != CURLMSG_DONE) continue;
      oa_job *j = NULL;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&j);
      if (!j) continue;
      finish_job(s, in, j, msg->data.result, out, rs_now());
      running--;
      if (j->state == J_DONE) {
        job_done(j, in, out, key);
        done++;
      }
    }
  }
  for (uint32_t k = 0; k < nj; k++) {
    if (jobs[k].state != J_DONE) {
      job_error(&jobs[k], out, s, "aborted: curl multi failed", true);
      job_done(&jobs[k], in, out, key);
    }
    if (jobs[k].h) {
      curl_multi_remove_handle(s->multi, jobs[k].h);
      curl_easy_cleanup(jobs[k].h);
    }
    free(jobs[k].body);
    free(jobs[k].resp);
  }
  for (uint32_t k = 0; k < n; k++) {
    scrub(out[k].text, key);
    scrub(out[k].error, key);
  }
  curl_slist_free_all(hdr);
  free(jobs);
  return rc;
}

const rs_model_ops rs_model_openai = {
    .scheme = "openai",
    .open = oa_open,
    .generate = oa_generate,
    .close = oa_close,
    .streams = true,
};
