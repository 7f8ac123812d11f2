/* serve_sim.c - A TEST DOUBLE, NOT A MODEL: a stand-in OpenAI-compatible server that
 * simulates the scheduling of a continuous-batching GPU server (vLLM, SGLang), for
 * bench/bench_serve.sh and tests/test_window.sh. It never allocates registers: its answer is the
 * same deterministic scramble of the prompt's register names as tests/standin_server.c (a full
 * assignment, so as many tokens as the instance's real answer), at ~4 characters per token.
 *
 * Simulation: at most C sequences decode at once; each decode step takes a + b*batch ms and gives
 * every running sequence one token; a sequence admitted in a step adds its prompt's prefill
 * (p ms per 1000 prompt tokens) to that step; requests beyond C wait in a FIFO queue. An answer
 * is sent when its last token is decoded. One thread, poll(2), any number of connections.
 *
 *   serve_sim --port-file F [--capacity C] [--step-ms a] [--step-seq-ms b]
 *        [--prefill-ms-per-ktok p] [--tokens-per-step K] [--log FILE]
 *        [--stats FILE --warmup S (--measure S | --measure-answers N)]
 *
 * --max-queue N: a request that finds C running and N queued gets HTTP 429 (a server that sheds
 * load: the client's window must back off). --tokens-per-step K (default 1) coarsens the simulation for tests: K tokens per step.
 * --log appends "seed<TAB>hash of the prompt" per answered request (a test compares what every
 * attempt was asked, feedback included). --stats: after the first request, wait --warmup
 * seconds, then measure for --measure seconds and write: completion tokens/s, the simulated
 * capacity C/(a+b*C) tokens/s (decode at full batch), their ratio, requests at the server (running
 * + queued) per step: max and median, and requests answered; FILE.start appears when measuring
 * starts. --measure-answers N measures until N requests were answered instead of for a fixed time
 * (a count of work, not a wall-clock window: on a busy machine a 2 s window could close before
 * a single step, so a quick run would fail for the machine's load, not for serving). Exits on
 * SIGTERM/SIGINT (writing what it measured so far, if measuring), or 20 minutes after start. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  int fd;
  char *buf;
  size_t len, cap, hlen, need; /* need: header + body length once the header is read */
  int state;                   /* 0 reading, 1 queued, 2 running, 3 writing */
  char *out;
  size_t olen, opos;
  char *answer;
  uint32_t left, ptok, ctok;
  bool chat;
  double arrived;
} conn;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t fnv(uint64_t h, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  return h;
}

/* The stand-in's answer (tests/standin_server.c, same rule). */
static char *scramble(const char *prompt, uint64_t seed) {
  const char *p = strstr(prompt, "Function:");
  p = p ? p : prompt;
  cJSON *ans = cJSON_CreateObject();
  while (*p) {
    bool start = p == prompt || !(p[-1] == '_' || p[-1] == '$' || p[-1] == '%' || p[-1] == '.' ||
                                  (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                                  (p[-1] >= '0' && p[-1] <= '9'));
    if (!start || !strchr("svadrp", *p) || !*p || p[1] < '0' || p[1] > '9') {
      p++;
      continue;
    }
    const char *q = p + 1;
    while (*q >= '0' && *q <= '9') q++;
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(q - p < 30 ? q - p : 30), p);
    unsigned width = 1;
    if (*q == ':' && q[1] && q[2] >= '1' && q[2] <= '9') width = (unsigned)atoi(q + 2);
    if (width > 16) width = 16;
    p = q;
    if (cJSON_GetObjectItemCaseSensitive(ans, name)) continue;
    uint64_t h = fnv(1469598103934665603ull ^ seed, name, strlen(name));
    char kind = name[0], reg[48];
    unsigned range = kind == 's' ? 32 : kind == 'v' ? 48 : kind == 'a' ? 32 : kind == 'p' ? 7 : 64;
    unsigned base = (unsigned)(h % range);
    if (kind == 'd') width = 2;
    if (width > 1) base &= ~1u;
    const char *file = kind == 'r' || kind == 'd' ? "R" : kind == 'p' ? "P" : kind == 's' ? "s" : kind == 'a' ? "a" : "v";
    if (width == 1) snprintf(reg, sizeof reg, "%s%u", file, base);
    else snprintf(reg, sizeof reg, "%s[%u:%u]", file, base, base + width - 1);
    cJSON_AddStringToObject(ans, name, reg);
  }
  char *json = cJSON_PrintUnformatted(ans);
  cJSON_Delete(ans);
  char *out = strdup(json);
  cJSON_free(json);
  return out;
}

static char *prompt_of(const cJSON *body, bool chat) {
  if (!chat) {
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(body, "prompt");
    return strdup(cJSON_IsString(pr) ? pr->valuestring : "");
  }
  size_t len = 0;
  char *s = calloc(1, 1);
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(body, "messages")) {
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
    if (!cJSON_IsString(c)) continue;
    size_t n = strlen(c->valuestring);
    s = realloc(s, len + n + 2);
    memcpy(s + len, c->valuestring, n);
    len += n;
    s[len++] = '\n';
    s[len] = 0;
  }
  return s;
}

static void respond(conn *c, int code, const char *body) {
  size_t bl = strlen(body);
  c->out = malloc(bl + 200);
  c->olen = (size_t)snprintf(c->out, bl + 200,
                             "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                             "Connection: close\r\n\r\n%s",
                             code, code == 200 ? "OK" : code == 429 ? "Too Many Requests" : "Bad Request", bl, body);
  c->opos = 0;
  c->state = 3;
}

static void answer(conn *c) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "object", c->chat ? "chat.completion" : "text_completion");
  cJSON *ch = cJSON_AddArrayToObject(r, "choices");
  cJSON *c0 = cJSON_CreateObject();
  if (c->chat) {
    cJSON *m = cJSON_AddObjectToObject(c0, "message");
    cJSON_AddStringToObject(m, "role", "assistant");
    cJSON_AddStringToObject(m, "content", c->answer);
  } else {
    cJSON_AddStringToObject(c0, "text", c->answer);
  }
  cJSON_AddStringToObject(c0, "finish_reason", "stop");
  cJSON_AddItemToArray(ch, c0);
  cJSON *u = cJSON_AddObjectToObject(r, "usage");
  cJSON_AddNumberToObject(u, "prompt_tokens", c->ptok);
  cJSON_AddNumberToObject(u, "completion_tokens", c->ctok);
  char *s = cJSON_PrintUnformatted(r);
  cJSON_Delete(r);
  respond(c, 200, s);
  cJSON_free(s);
}

/* A complete request: parse it and queue the sequence. */
static void request(conn *c, FILE *log, double t) {
  const char *eol = strstr(c->buf, "\r\n");
  const char *c1 = strstr(c->buf, " /v1/chat/completions "), *c2 = strstr(c->buf, " /v1/completions ");
  c->chat = c1 && c1 < eol;
  if (!c->chat && !(c2 && c2 < eol)) {
    respond(c, 404, "{\"error\":{\"message\":\"no such endpoint\"}}");
    return;
  }
  cJSON *body = cJSON_ParseWithLength(c->buf + c->hlen, c->need - c->hlen);
  if (!body) {
    respond(c, 400, "{\"error\":{\"message\":\"request body is not JSON\"}}");
    return;
  }
  const cJSON *sj = cJSON_GetObjectItemCaseSensitive(body, "seed");
  uint64_t seed = cJSON_IsNumber(sj) ? (uint64_t)sj->valuedouble : 0;
  char *prompt = prompt_of(body, c->chat);
  cJSON_Delete(body);
  c->answer = scramble(prompt, seed);
  c->ptok = (uint32_t)(strlen(prompt) / 4 + 1);
  c->ctok = (uint32_t)(strlen(c->answer) / 4 + 1);
  c->left = c->ctok;
  if (log) {
    fprintf(log, "%llu\t%016llx\n", (unsigned long long)seed,
            (unsigned long long)fnv(1469598103934665603ull, prompt, strlen(prompt)));
    fflush(log);
  }
  free(prompt);
  c->arrived = t;
  c->state = 1;
}

static void conn_free(conn *c) {
  close(c->fd);
  free(c->buf);
  free(c->out);
  free(c->answer);
  free(c);
}

/* The next step from `from`: admit queued sequences (FIFO) up to C, their prefill lengthens it;
 * 0 when nothing runs. */
static double next_step(conn **cs, size_t nc, uint32_t *running, uint32_t cap, double a_ms, double b_ms, double p_ms,
                        double from) {
  double prefill = 0;
  for (size_t i = 0; i < nc && *running < cap; i++)
    if (cs[i]->state == 1) {
      cs[i]->state = 2;
      (*running)++;
      prefill += p_ms * cs[i]->ptok / 1000.0;
    }
  return *running ? from + (a_ms + b_ms * *running + prefill) / 1000.0 : 0;
}

static volatile sig_atomic_t stop_flag; /* set by SIGTERM/SIGINT: the server's only global */
static void on_sig(int s) {
  (void)s;
  stop_flag = 1;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* What was measured (written aside and renamed). No step may have fallen in the window: then
 * samples is NULL and there is nothing to sort (qsort's pointer must not be null). */
static void write_stats(const char *file, uint32_t *samples, size_t ns, double capacity, uint64_t tokens,
                        uint64_t answers, uint64_t refused, double secs) {
  if (ns) qsort(samples, ns, sizeof *samples, cmp_u32);
  double rate = secs > 0 ? (double)tokens / secs : 0;
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s.tmp", file);
  FILE *f = fopen(tmp, "w");
  if (!f) return;
  fprintf(f, "tokens_per_s %.1f\ncapacity %.1f\nratio %.4f\ninflight_max %u\ninflight_median %u\nanswers %llu\nseconds %.3f\n"
             "refused_429 %llu\nsteps %zu\n",
          rate, capacity, rate / capacity, ns ? samples[ns - 1] : 0, ns ? samples[ns / 2] : 0,
          (unsigned long long)answers, secs, (unsigned long long)refused, ns);
  fclose(f);
  rename(tmp, file);
}

int main(int argc, char **argv) {
  const char *port_file = NULL, *log_file = NULL, *stats_file = NULL;
  uint32_t cap = 64, per_step = 1;
  int max_queue = -1; /* >= 0: a request finding this many queued is refused with 429 */
  double a_ms = 1.0, b_ms = 0.01, p_ms = 0.5, warmup = 3, measure = 10;
  uint64_t measure_answers = 0; /* > 0: measure until this many answers, not for `measure` seconds */
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (!strcmp(k, "--port-file")) port_file = v;
    else if (!strcmp(k, "--capacity")) cap = (uint32_t)atoi(v);
    else if (!strcmp(k, "--step-ms")) a_ms = atof(v);
    else if (!strcmp(k, "--step-seq-ms")) b_ms = atof(v);
    else if (!strcmp(k, "--prefill-ms-per-ktok")) p_ms = atof(v);
    else if (!strcmp(k, "--log")) log_file = v;
    else if (!strcmp(k, "--tokens-per-step")) per_step = (uint32_t)atoi(v);
    else if (!strcmp(k, "--max-queue")) max_queue = atoi(v);
    else if (!strcmp(k, "--stats")) stats_file = v;
    else if (!strcmp(k, "--warmup")) warmup = atof(v);
    else if (!strcmp(k, "--measure")) measure = atof(v);
    else if (!strcmp(k, "--measure-answers")) measure_answers = (uint64_t)atoll(v);
    else {
      fprintf(stderr, "serve_sim: unknown option %s\n", k);
      return 2;
    }
  }
  if (!port_file || !cap || !per_step) {
    fprintf(stderr, "usage: serve_sim --port-file F [--capacity C] [--step-ms a] [--step-seq-ms b] ...\n");
    return 2;
  }
  FILE *log = log_file ? fopen(log_file, "a") : NULL;
  int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof sa;
  if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof sa) || listen(ls, 1024) ||
      getsockname(ls, (struct sockaddr *)&sa, &al)) {
    fprintf(stderr, "serve_sim: cannot listen: %s\n", strerror(errno));
    return 1;
  }
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
  FILE *pf = fopen(tmp, "w");
  if (!pf || fprintf(pf, "%d\n", ntohs(sa.sin_port)) < 0 || fclose(pf) || rename(tmp, port_file)) return 1;
  signal(SIGPIPE, SIG_IGN);
  signal(SIGTERM, on_sig);
  signal(SIGINT, on_sig);
  alarm(1200);

  conn **cs = NULL;
  size_t nc = 0, ccap = 0;
  uint32_t running = 0;
  double step_end = 0, t_first = 0, m_start = 0, m_end = 0;
  bool measuring = false, measured = false;
  uint64_t m_tokens = 0, m_answers = 0, refused = 0;
  uint32_t *samples = NULL;
  size_t ns = 0, scap = 0;
  struct pollfd *pfd = NULL;
  while (!stop_flag) {
    double t = now_s();
    /* decode steps that have ended (on the simulated GPU's own clock: a late wake-up of this
     * process delays answers, never the GPU) give every running sequence a token */
    while (running && step_end && t >= step_end) {
      uint32_t at_server = 0;
      for (size_t i = 0; i < nc; i++) {
        conn *c = cs[i];
        at_server += c->state == 1 || c->state == 2;
        if (c->state != 2) continue;
        uint32_t k = c->left < per_step ? c->left : per_step;
        if (measuring) m_tokens += k;
        c->left -= k;
        if (c->left == 0) {
          running--;
          if (measuring) m_answers++;
          answer(c);
        }
      }
      if (measuring) {
        if (ns == scap) samples = realloc(samples, sizeof *samples * (scap = scap ? 2 * scap : 1024));
        samples[ns++] = at_server;
      }
      step_end = next_step(cs, nc, &running, cap, a_ms, b_ms, p_ms, step_end);
    }
    if (t_first > 0 && !measuring && !measured && t >= t_first + warmup && stats_file) {
      measuring = true;
      m_start = t;
      snprintf(tmp, sizeof tmp, "%s.start", stats_file);
      FILE *f = fopen(tmp, "w");
      if (f) fclose(f);
    }
    double capacity = (double)cap * per_step / ((a_ms + b_ms * cap) / 1000.0);
    if (measuring && (measure_answers ? m_answers >= measure_answers : t >= m_start + measure)) {
      measuring = false;
      measured = true;
      m_end = t;
      write_stats(stats_file, samples, ns, capacity, m_tokens, m_answers, refused, m_end - m_start);
    }
    if (!step_end) step_end = next_step(cs, nc, &running, cap, a_ms, b_ms, p_ms, t); /* the GPU was idle */
    pfd = realloc(pfd, sizeof *pfd * (nc + 1));
    pfd[0] = (struct pollfd){ls, POLLIN, 0};
    for (size_t i = 0; i < nc; i++)
      pfd[i + 1] = (struct pollfd){cs[i]->fd, (short)(cs[i]->state == 0 ? POLLIN : cs[i]->state == 3 ? POLLOUT : 0), 0};
    int wait_ms = step_end ? (int)((step_end - now_s()) * 1000) : 100;
    if (wait_ms < 0) wait_ms = 0;
    /* sub-millisecond steps: poll without sleeping, then spin to the step's end */
    int pr = poll(pfd, nc + 1, step_end && step_end - now_s() < 0.001 ? 0 : wait_ms);
    if (pr < 0 && errno != EINTR) break;
    t = now_s();
    size_t polled = nc;
    if (pfd[0].revents & POLLIN) {
      int fd;
      while ((fd = accept(ls, NULL, NULL)) >= 0) {
        if (nc == ccap) cs = realloc(cs, sizeof *cs * (ccap = ccap ? 2 * ccap : 64));
        conn *c = calloc(1, sizeof *c);
        c->fd = fd;
        cs[nc++] = c;
        struct pollfd one_fd = {ls, POLLIN, 0};
        if (poll(&one_fd, 1, 0) <= 0) break;
      }
    }
    for (size_t i = 0; i < nc; i++) {
      conn *c = cs[i];
      short re = i < polled ? pfd[i + 1].revents : 0;
      if (c->state == 0 && (re & (POLLIN | POLLHUP | POLLERR))) {
        if (c->len + 65536 > c->cap) c->buf = realloc(c->buf, c->cap = (c->len + 65536) * 2);
        ssize_t r = read(c->fd, c->buf + c->len, c->cap - c->len - 1);
        if (r <= 0) {
          c->state = 4;
          continue;
        }
        c->len += (size_t)r;
        c->buf[c->len] = 0;
        if (!c->hlen) {
          char *he = strstr(c->buf, "\r\n\r\n");
          if (he) {
            c->hlen = (size_t)(he + 4 - c->buf);
            size_t cl = 0;
            for (char *l = c->buf; l && l < he; l = strstr(l, "\r\n") ? strstr(l, "\r\n") + 2 : NULL)
              if (!strncasecmp(l, "Content-Length:", 15)) cl = (size_t)strtoull(l + 15, NULL, 10);
            c->need = c->hlen + cl;
          }
        }
        if (c->hlen && c->len >= c->need) {
          if (!t_first) t_first = t;
          int queued = 0;
          for (size_t j = 0; j < nc; j++) queued += cs[j]->state == 1;
          if (max_queue >= 0 && running >= cap && queued >= max_queue) {
            respond(c, 429, "{\"error\":{\"message\":\"too many requests: the queue is full\"}}");
            refused++;
          } else {
            request(c, log, t);
          }
        }
      } else if (c->state == 3 && (re & (POLLOUT | POLLHUP | POLLERR))) {
        ssize_t w = write(c->fd, c->out + c->opos, c->olen - c->opos);
        if (w <= 0) c->state = 4;
        else if ((c->opos += (size_t)w) == c->olen) c->state = 4;
      }
    }
    /* closed or answered connections go */
    size_t k = 0;
    for (size_t i = 0; i < nc; i++) {
      if (cs[i]->state == 4) {
        conn_free(cs[i]);
      } else {
        cs[k++] = cs[i];
      }
    }
    nc = k;
    running = 0;
    for (size_t i = 0; i < nc; i++) running += cs[i]->state == 2;
    if (!running) step_end = 0; /* idle: the next request starts a step at once */
  }
  if (measuring) /* stopped while measuring: what was seen, so the caller can say what failed */
    write_stats(stats_file, samples, ns, (double)cap * per_step / ((a_ms + b_ms * cap) / 1000.0), m_tokens, m_answers,
                refused, now_s() - m_start);
  for (size_t i = 0; i < nc; i++) conn_free(cs[i]);
  free(cs);
  free(pfd);
  free(samples);
  if (log) fclose(log);
  close(ls);
  return 0;
}
