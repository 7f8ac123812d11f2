/* standin_openai.c - A TEST DOUBLE: a stand-in for an OpenAI-compatible inference server (vLLM,
 * SGLang, llama.cpp server). IT IS NOT A MODEL. It never looks at the prompt: every successful
 * answer is the fixed JSON text handed to standin_start(), so tests of the openai: back end can
 * exercise HTTP, retries, concurrency and parsing on loopback without a GPU.
 *
 * Included by tests/test_openai.c (no CMake target of its own). standin_start() forks a child
 * that listens on 127.0.0.1 (an ephemeral port, read back before the fork). The child reads each
 * request (HTTP/1.1, Content-Length bodies, one request per connection, `Connection: close`),
 * writes it verbatim to DIR/NNNNNN.req (a GET to NNNNNN.get) so the test can assert what the client sent (schema, seed,
 * temperature, Authorization header), then forks once more to answer, so slow answers overlap.
 *
 * Like a real server it applies a structured-output schema only in the dialects it is started
 * with (standin_start_cfg `honour`: openai = response_format, llamacpp = top-level json_schema,
 * vllm = structured_outputs.json) and silently ignores the others; "applying" means answering a
 * schema that admits a single answer (the client's probe) with that answer. It answers n
 * choices, reports usage.prompt_tokens from the prompt's size (~4 bytes a token), and can serve
 * llama.cpp's GET /props or vLLM's GET /v1/models with a context size it then enforces by cutting
 * the prompt and answering 200 (llama.cpp's context shift).
 *
 * The request's "model" field selects the behaviour:
 *   ok            200 with the answer (chat: choices[0].message.content; completions: .text)
 *   n1only        the same, one choice whatever n asks for (with /props, as llama.cpp, n > 1
 *                 choices report usage.completion_tokens of the first choice only)
 *   cutN          the same, reporting N prompt tokens (a silently truncated prompt)
 *   shrinkxK      the same; from the (K+1)-th request of a seed on, 4/5 of the prompt tokens
 *   delayN        the same after N milliseconds
 *   slow          the same after 3 s (longer than the tests' client timeout)
 *   eCODE         HTTP CODE with an OpenAI-style error body, every time (e500, e429, e400)
 *   eCODExK       HTTP CODE for the first K requests carrying the same seed, then ok
 *   ectx          500 "the request exceeds the available context size" (deterministic)
 *   e401leak      401 whose message echoes the Authorization header (the client must scrub it)
 *   trunc         Content-Length larger than the body sent, then close
 *   nonjson       200 with an HTML body
 *   nochoices     200 with a JSON body without choices
 *   nullcontent   200 with "content": null
 *   drop          close the connection without a response
 *   length        200 with half the answer and finish_reason "length"
 *   big           200 with a valid body padded to 64 KiB
 *   ctx400        400 "request (5994 tokens) exceeds the available context size (4096 tokens)" (llama.cpp)
 * With standin_start_ex's `ws` it answers like a byte-level model under a JSON grammar: the single
 * admissible answer with whitespace in it, one token per byte, cut at max_tokens with
 * finish_reason "length". With `slots` it runs that many requests at once and queues the rest
 * (a request waits for a slot, as llama.cpp's and vLLM's do), counting running, waiting and the
 * peaks in memory the test reads, and counting answers whose client hung up while they waited or
 * ran (`aborted`: the server noticed, as a server that cancels abandoned work does).
 * The child exits on SIGTERM (standin_stop) or after 300 s at the latest. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  pid_t pid;
  int port;
  char dir[256];    /* request records */
  char honour[64];  /* schema dialects applied (sd_schema_in); others silently ignored */
  int props;        /* 0: no facts endpoint; 1: llama.cpp GET /props; 2: vLLM GET /v1/models */
  unsigned n_ctx;   /* context reported there and enforced (0: unlimited) */
  /* standin_start_ex: */
  unsigned ws;      /* byte-level answers: the single-answer JSON with ws blanks in it, cut at max_tokens bytes */
  unsigned slots;   /* > 0: that many requests run at once, the rest wait in a queue (llama.cpp's slots,
                     * vLLM's max_num_seqs); /props says total_slots, /slots lists them, /metrics
                     * (vLLM's gauges) says running and waiting */
  struct sd_shared {          /* shared with every answering process and with the test */
    int running, waiting, peak_running, peak_waiting, aborted;
  } *sh;
} rs_standin;

#include "tests/standin_http.c"

typedef struct {
  char model[32];
  uint64_t seed;
  unsigned count;
} sd_count;

/* Has the client closed its end (a cancelled or timed-out request)? */
static bool sd_hungup(int fd) {
  char c;
  ssize_t r = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/* Sleep ms, watching the client: false if it hung up meanwhile (counted as aborted). */
static bool sd_sleep_watch(int fd, const rs_standin *cfg, long ms) {
  for (long t = 0; t < ms; t += 5) {
    if (sd_hungup(fd)) {
      __atomic_add_fetch(&cfg->sh->aborted, 1, __ATOMIC_SEQ_CST);
      return false;
    }
    sd_sleep_ms(ms - t < 5 ? ms - t : 5);
  }
  return true;
}

static void sd_peak(int *peak, int v) {
  int p = __atomic_load_n(peak, __ATOMIC_SEQ_CST);
  while (v > p && !__atomic_compare_exchange_n(peak, &p, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
}

/* Wait for one of cfg->slots (the server's queue); false if the client hung up while waiting. */
static bool sd_take_slot(int fd, const rs_standin *cfg) {
  struct sd_shared *h = cfg->sh;
  /* a free slot is taken at once; a compare-exchange lost to another request arriving or leaving at
   * the same moment is retried, not counted as waiting (it was: a burst of 3 on 3 slots counted
   * 1 waiting in 3 of 15 runs) */
  int r0 = __atomic_load_n(&h->running, __ATOMIC_SEQ_CST);
  while (r0 < (int)cfg->slots)
    if (__atomic_compare_exchange_n(&h->running, &r0, r0 + 1, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
      sd_peak(&h->peak_running, r0 + 1);
      return true;
    }
  sd_peak(&h->peak_waiting, __atomic_add_fetch(&h->waiting, 1, __ATOMIC_SEQ_CST));
  for (;;) {
    int r = __atomic_load_n(&h->running, __ATOMIC_SEQ_CST);
    if (r < (int)cfg->slots &&
        __atomic_compare_exchange_n(&h->running, &r, r + 1, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
      break;
    if (sd_hungup(fd)) {
      __atomic_sub_fetch(&h->waiting, 1, __ATOMIC_SEQ_CST);
      __atomic_add_fetch(&h->aborted, 1, __ATOMIC_SEQ_CST);
      return false;
    }
    sd_sleep_ms(2);
  }
  __atomic_sub_fetch(&h->waiting, 1, __ATOMIC_SEQ_CST);
  sd_peak(&h->peak_running, __atomic_load_n(&h->running, __ATOMIC_SEQ_CST));
  return true;
}

/* Answer one request on fd (runs in its own process). True if it gave its slot back before the
 * answer went out (as a server frees a slot before the client reads the answer). */
static bool sd_answer(int fd, const rs_standin *cfg, const char *answer, const char *req, size_t hlen, size_t len,
                      unsigned seen) {
  if (!strncmp(req, "GET /props ", 11) && cfg->props == 1) {
    char b[400];
    snprintf(b, sizeof b, "{\"default_generation_settings\":{\"n_ctx\":%u,\"params\":{\"top_k\":40,\"top_p\":0.95,"
             "\"min_p\":0.05,\"temperature\":0.8}}%s%u}", cfg->n_ctx, cfg->slots ? ",\"total_slots\":" : ",\"x\":",
             cfg->slots);
    sd_respond(fd, 200, b, strlen(b), strlen(b));
    return false;
  }
  if (!strncmp(req, "GET /slots ", 11) && cfg->props == 1 && cfg->slots) {
    char b[4096];
    size_t k = (size_t)snprintf(b, sizeof b, "[");
    int run = __atomic_load_n(&cfg->sh->running, __ATOMIC_SEQ_CST);
    for (unsigned i = 0; i < cfg->slots && k + 80 < sizeof b; i++)
      k += (size_t)snprintf(b + k, sizeof b - k, "%s{\"id\":%u,\"is_processing\":%s}", i ? "," : "", i,
                            (int)i < run ? "true" : "false");
    snprintf(b + k, sizeof b - k, "]");
    sd_respond(fd, 200, b, strlen(b), strlen(b));
    return false;
  }
  if (!strncmp(req, "GET /metrics ", 13) && cfg->props == 2 && cfg->slots) {
    char b[600];
    snprintf(b, sizeof b, "# HELP vllm:num_requests_running Number of requests currently running on GPU.\n"
             "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"ok\"} %d.0\n"
             "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"ok\"} %d.0\n",
             __atomic_load_n(&cfg->sh->running, __ATOMIC_SEQ_CST), __atomic_load_n(&cfg->sh->waiting, __ATOMIC_SEQ_CST));
    sd_respond(fd, 200, b, strlen(b), strlen(b));
    return false;
  }
  if (!strncmp(req, "GET /v1/models ", 15) && cfg->props == 2) {
    char b[400];
    snprintf(b, sizeof b, "{\"object\":\"list\",\"data\":[{\"id\":\"other\",\"max_model_len\":1},"
             "{\"id\":\"ok\",\"object\":\"model\",\"max_model_len\":%u}]}", cfg->n_ctx);
    sd_respond(fd, 200, b, strlen(b), strlen(b));
    return false;
  }
  bool chat = strstr(req, " /v1/chat/completions ") != NULL && strstr(req, " /v1/chat/completions ") < strstr(req, "\r\n");
  bool compl = !chat && strstr(req, " /v1/completions ") && strstr(req, " /v1/completions ") < strstr(req, "\r\n");
  if (!chat && !compl) {
    sd_error(fd, 404, "no such endpoint");
    return false;
  }
  cJSON *body = cJSON_ParseWithLength(req + hlen, len - hlen);
  cJSON *mj = cJSON_GetObjectItemCaseSensitive(body, "model");
  char model[32] = "";
  if (cJSON_IsString(mj)) snprintf(model, sizeof model, "%s", mj->valuestring);
  if (!body) {
    sd_error(fd, 400, "request body is not JSON");
    return false;
  }
  /* what a well-behaved server answers: the schema applied where it reads the dialect (only a
   * single-answer schema is "applied": the client's probe), n choices, usage from the prompt */
  const cJSON *nj = cJSON_GetObjectItemCaseSensitive(body, "n");
  unsigned nch = cJSON_IsNumber(nj) && nj->valuedouble >= 1 && nj->valuedouble <= 64 ? (unsigned)nj->valuedouble : 1;
  const cJSON *sc = sd_schema_in(body, cfg->honour);
  char *lit = sc ? sd_literal_answer(sc) : NULL;
  unsigned ptok = sd_prompt_tokens(body);
  const cJSON *mt = cJSON_GetObjectItemCaseSensitive(body, "max_tokens");
  unsigned maxt = cJSON_IsNumber(mt) ? (unsigned)mt->valuedouble : 4096;
  cJSON_Delete(body);
  char *spaced = NULL;
  if (lit && cfg->ws) { /* {<ws blanks>"key": "value"} as a weak byte-level model writes it */
    spaced = malloc(strlen(lit) + cfg->ws + 8);
    size_t q = 0;
    for (const char *c = lit; *c; c++) {
      spaced[q++] = *c;
      if (*c == '{')
        for (unsigned w = 0; w < cfg->ws; w++) spaced[q++] = w % 7 == 6 ? '\n' : ' ';
      if (*c == ':') spaced[q++] = ' ';
    }
    spaced[q] = 0;
    free(lit);
    lit = spaced;
  }
  bool cut = cfg->ws && lit && strlen(lit) > maxt;
  if (cut) lit[maxt] = 0; /* one token per byte */
  const char *ans = lit ? lit : answer;
  unsigned ctok = (unsigned)strlen(ans) / 4 + 1;
  if (cfg->n_ctx && ptok + (ctok < maxt ? ctok : maxt) > cfg->n_ctx) /* llama.cpp's context shift: cut, answer 200 */
    ptok = cfg->n_ctx > ctok ? cfg->n_ctx - ctok : 1;
  char *ok = NULL;
  const char *none = NULL;
  int code;
  unsigned k;
  if (!strcmp(model, "ok") || !strncmp(model, "delay", 5) || !strcmp(model, "slow") || !strcmp(model, "n1only") ||
      !strncmp(model, "cut", 3) || !strncmp(model, "shrinkx", 7)) {
    if (!strncmp(model, "delay", 5) && !cfg->slots) sd_sleep_ms(atol(model + 5));
    if (!strncmp(model, "delay", 5) && cfg->slots && !sd_sleep_watch(fd, cfg, atol(model + 5))) {
      free(lit);
      return false;
    }
    if (!strcmp(model, "slow")) sd_sleep_ms(3000);
    if (!strcmp(model, "n1only")) nch = 1; /* a server that ignores n */
    if (!strncmp(model, "cut", 3)) ptok = (unsigned)atoi(model + 3);
    if (!strncmp(model, "shrinkx", 7) && seen >= (unsigned)atoi(model + 7)) ptok = ptok * 4 / 5;
    const char *cs[64];
    for (unsigned i = 0; i < nch; i++) cs[i] = ans;
    ok = sd_ok_body_n(chat, cs, nch, cut ? "length" : "stop", 0, ptok);
    if (cfg->props == 1 && nch > 1) { /* llama.cpp: usage counts the first choice only */
      cJSON *j = cJSON_Parse(ok);
      cJSON *u = cJSON_GetObjectItem(j, "usage");
      cJSON_ReplaceItemInObject(u, "completion_tokens", cJSON_CreateNumber((double)(strlen(ans) / 4 + 1)));
      cJSON_free(ok);
      ok = cJSON_PrintUnformatted(j);
      cJSON_Delete(j);
    }
  } else if (!strcmp(model, "e401leak")) {
    char auth[300] = "no authorization header";
    const char *a = NULL;
    for (const char *h = strstr(req, "\r\n"); h && h < req + hlen; h = strstr(h + 2, "\r\n"))
      if (!strncasecmp(h, "\r\nauthorization:", 16)) {
        a = h;
        break;
      }
    if (a) {
      const char *e = strstr(a + 2, "\r\n");
      snprintf(auth, sizeof auth, "invalid credentials: %.*s", (int)(e - a - 2), a + 2);
    }
    sd_error(fd, 401, auth);
  } else if (!strcmp(model, "ctx400")) { /* llama.cpp's refusal of a prompt beyond its context */
    sd_error(fd, 400, "request (5994 tokens) exceeds the available context size (4096 tokens), try increasing it");
  } else if (!strcmp(model, "ectx")) { /* llama.cpp's answer to a prompt beyond its context */
    sd_error(fd, 500, "the request exceeds the available context size, try increasing it");
  } else if (sscanf(model, "e%d", &code) == 1) {
    const char *x = strchr(model, 'x');
    if (x && sscanf(x, "x%u", &k) == 1 && seen >= k) {
      ok = sd_ok_body_n(chat, &ans, 1, "stop", 0, ptok);
    } else {
      char msg[96];
      snprintf(msg, sizeof msg, "standin fault %d (request %u for this seed)", code, seen + 1);
      sd_error(fd, code, msg);
    }
  } else if (!strcmp(model, "trunc")) {
    char *s = sd_ok_body_n(chat, &ans, 1, "stop", 0, ptok);
    sd_respond(fd, 200, s, strlen(s) / 2, strlen(s));
    free(s);
  } else if (!strcmp(model, "nonjson")) {
    const char *h = "<html><body>502 upstream glitch</body></html>";
    sd_respond(fd, 200, h, strlen(h), strlen(h));
  } else if (!strcmp(model, "nochoices")) {
    const char *h = "{\"object\":\"error\",\"message\":\"engine dead\"}";
    sd_respond(fd, 200, h, strlen(h), strlen(h));
  } else if (!strcmp(model, "nullcontent")) {
    ok = sd_ok_body_n(chat, &none, 1, "stop", 0, ptok);
  } else if (!strcmp(model, "drop")) {
    /* nothing: the connection closes without a response */
  } else if (!strcmp(model, "length")) {
    char *half = strdup(answer);
    half[strlen(half) / 2] = 0;
    ok = sd_ok_body_n(chat, (const char *const *)&half, 1, "length", 0, ptok);
    free(half);
  } else if (!strcmp(model, "big")) {
    ok = sd_ok_body_n(chat, &ans, 1, "stop", 65536, ptok);
  } else {
    sd_error(fd, 404, "the model does not exist");
  }
  bool released = false;
  if (ok) {
    if (cfg->slots && !strncmp(req, "POST ", 5)) {
      __atomic_sub_fetch(&cfg->sh->running, 1, __ATOMIC_SEQ_CST);
      released = true;
    }
    sd_respond(fd, 200, ok, strlen(ok), strlen(ok));
    cJSON_free(ok);
  }
  free(lit);
  return released;
}

static void sd_serve(int ls, const rs_standin *cfg, const char *answer, const char *dir) {
  signal(SIGCHLD, SIG_IGN); /* answering processes reap themselves */
  signal(SIGPIPE, SIG_IGN);
  alarm(300);               /* never outlive a broken test for long (an ASan build on a busy machine takes minutes) */
  /* let go of the test's stdout/stderr so CTest does not wait for a slow answer to finish */
  int dn = open("/dev/null", O_WRONLY);
  if (dn >= 0) {
    dup2(dn, 1);
    dup2(dn, 2);
    close(dn);
  }
  sd_count counts[256];
  unsigned ncounts = 0;
  for (unsigned seq = 0;; seq++) {
    int c = accept(ls, NULL, NULL);
    if (c < 0) {
      if (errno == EINTR) continue;
      _exit(1);
    }
    char *req = NULL;
    size_t hlen;
    ssize_t len = sd_read_request(c, &req, &hlen);
    if (len < 0) {
      close(c);
      continue;
    }
    char path[300];
    /* GETs (the client's /props and /models look-ups) and other POSTs (its /tokenize) apart, so
     * tests count completions */
    const char *eol = strstr(req, "\r\n"), *c1 = strstr(req, " /v1/chat/completions "), *c2 = strstr(req, " /v1/completions ");
    bool completion = !strncmp(req, "POST ", 5) && ((c1 && c1 < eol) || (c2 && c2 < eol));
    snprintf(path, sizeof path, "%s/%06u.%s", dir, seq, completion ? "req" : "get");
    FILE *f = fopen(path, "wb");
    if (f) {
      fwrite(req, 1, (size_t)len, f);
      fclose(f);
    }
    /* per (model, seed) request count, for the "fail K times then succeed" faults */
    cJSON *b = cJSON_ParseWithLength(req + hlen, (size_t)len - hlen);
    cJSON *mj = cJSON_GetObjectItemCaseSensitive(b, "model"), *sj = cJSON_GetObjectItemCaseSensitive(b, "seed");
    char model[32] = "";
    if (cJSON_IsString(mj)) snprintf(model, sizeof model, "%s", mj->valuestring);
    uint64_t seed = cJSON_IsNumber(sj) ? (uint64_t)sj->valuedouble : 0;
    cJSON_Delete(b);
    unsigned seen = 0, i;
    for (i = 0; i < ncounts; i++)
      if (counts[i].seed == seed && !strcmp(counts[i].model, model)) break;
    if (i == ncounts && ncounts < 256) {
      memset(&counts[i], 0, sizeof counts[i]);
      snprintf(counts[i].model, sizeof counts[i].model, "%s", model);
      counts[i].seed = seed;
      ncounts++;
    }
    if (i < ncounts) seen = counts[i].count++;
    pid_t pid = fork();
    if (pid == 0) {
      close(ls);
      alarm(10);
      bool slot = cfg->slots && completion; /* a slot per completion, as llama.cpp */
      if ((!slot || sd_take_slot(c, cfg)) && !sd_answer(c, cfg, answer, req, hlen, (size_t)len, seen) && slot)
        __atomic_sub_fetch(&cfg->sh->running, 1, __ATOMIC_SEQ_CST);
      shutdown(c, SHUT_WR);
      close(c);
      _exit(0);
    }
    free(req);
    close(c);
  }
}

/* Start the stand-in answering `answer`, recording requests under `dir`, applying schemas in
 * the dialects `honour` names, with a facts endpoint (props: 0 none, 1 /props, 2 /v1/models)
 * reporting and enforcing n_ctx. 0 on success. */
static int standin_start_ex(rs_standin *sd, const char *answer, const char *dir, const char *honour, int props,
                            unsigned n_ctx, unsigned ws, unsigned slots) {
  memset(sd, 0, sizeof *sd);
  sd->ws = ws;
  sd->slots = slots;
  /* counters shared with the answering processes and the test: a mapped file (POSIX, no
   * MAP_ANONYMOUS under _POSIX_C_SOURCE), removed at once; the mapping stays */
  char shp[300];
  snprintf(shp, sizeof shp, "%s/shared.%d", dir, (int)getpid());
  int shfd = open(shp, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (shfd < 0 || ftruncate(shfd, sizeof *sd->sh)) return -1;
  sd->sh = mmap(NULL, sizeof *sd->sh, PROT_READ | PROT_WRITE, MAP_SHARED, shfd, 0);
  close(shfd);
  unlink(shp);
  if (sd->sh == MAP_FAILED) return -1;
  memset(sd->sh, 0, sizeof *sd->sh);
  snprintf(sd->dir, sizeof sd->dir, "%s", dir);
  snprintf(sd->honour, sizeof sd->honour, "%s", honour);
  sd->props = props;
  sd->n_ctx = n_ctx;
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  if (ls < 0) return -1;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t al = sizeof a;
  if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 64) || getsockname(ls, (struct sockaddr *)&a, &al)) {
    close(ls);
    return -1;
  }
  sd->port = ntohs(a.sin_port);
  fflush(NULL);
  sd->pid = fork();
  if (sd->pid < 0) {
    close(ls);
    return -1;
  }
  if (sd->pid == 0) {
    sd_serve(ls, sd, answer, dir);
    _exit(0);
  }
  close(ls);
  return 0;
}

static inline int standin_start_cfg(rs_standin *sd, const char *answer, const char *dir, const char *honour, int props,
                             unsigned n_ctx) {
  return standin_start_ex(sd, answer, dir, honour, props, n_ctx, 0, 0);
}

/* The default: a server that reads OpenAI's response_format (vLLM, SGLang), no facts endpoint. */
static inline int standin_start(rs_standin *sd, const char *answer, const char *dir) {
  return standin_start_cfg(sd, answer, dir, "openai", 0, 0);
}

static void standin_stop(rs_standin *sd) {
  if (sd->pid > 0) {
    kill(sd->pid, SIGTERM);
    waitpid(sd->pid, NULL, 0);
    sd->pid = 0;
  }
  if (sd->sh && sd->sh != MAP_FAILED) munmap(sd->sh, sizeof *sd->sh);
  sd->sh = NULL;
}
