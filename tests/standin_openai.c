/* standin_openai.c - A TEST DOUBLE: a stand-in for an OpenAI-compatible inference server (vLLM,
 * SGLang, llama.cpp server). IT IS NOT A MODEL. It never looks at the prompt: every successful
 * answer is the fixed JSON text handed to standin_start(), so tests of the openai: back end can
 * exercise HTTP, retries, concurrency and parsing on loopback without a GPU.
 *
 * Included by tests/test_openai.c (no CMake target of its own). standin_start() forks a child
 * that listens on 127.0.0.1 (an ephemeral port, read back before the fork). The child reads each
 * request (HTTP/1.1, Content-Length bodies, one request per connection, `Connection: close`),
 * writes it verbatim to DIR/NNNNNN.req so the test can assert what the client sent (schema, seed,
 * temperature, Authorization header), then forks once more to answer, so slow answers overlap.
 *
 * The request's "model" field selects the behaviour:
 *   ok            200 with the answer (chat: choices[0].message.content; completions: .text)
 *   delayN        the same after N milliseconds
 *   slow          the same after 3 s (longer than the tests' client timeout)
 *   eCODE         HTTP CODE with an OpenAI-style error body, every time (e500, e429, e400)
 *   eCODExK       HTTP CODE for the first K requests carrying the same seed, then ok
 *   e401leak      401 whose message echoes the Authorization header (the client must scrub it)
 *   trunc         Content-Length larger than the body sent, then close
 *   nonjson       200 with an HTML body
 *   nochoices     200 with a JSON body without choices
 *   nullcontent   200 with "content": null
 *   drop          close the connection without a response
 *   length        200 with half the answer and finish_reason "length"
 *   big           200 with a valid body padded to 64 KiB
 * The child exits on SIGTERM (standin_stop) or after 60 s at the latest. */
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
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  pid_t pid;
  int port;
  char dir[256]; /* request records */
} rs_standin;

#include "tests/standin_http.c"

typedef struct {
  char model[32];
  uint64_t seed;
  unsigned count;
} sd_count;

/* Answer one request on fd (runs in its own process). */
static void sd_answer(int fd, const char *answer, const char *req, size_t hlen, size_t len, unsigned seen) {
  bool chat = strstr(req, " /v1/chat/completions ") != NULL && strstr(req, " /v1/chat/completions ") < strstr(req, "\r\n");
  bool compl = !chat && strstr(req, " /v1/completions ") && strstr(req, " /v1/completions ") < strstr(req, "\r\n");
  if (!chat && !compl) {
    sd_error(fd, 404, "no such endpoint");
    return;
  }
  cJSON *body = cJSON_ParseWithLength(req + hlen, len - hlen);
  cJSON *mj = cJSON_GetObjectItemCaseSensitive(body, "model");
  char model[32] = "";
  if (cJSON_IsString(mj)) snprintf(model, sizeof model, "%s", mj->valuestring);
  bool parsed = body != NULL;
  cJSON_Delete(body);
  if (!parsed) {
    sd_error(fd, 400, "request body is not JSON");
    return;
  }
  char *ok = NULL;
  int code;
  unsigned k;
  if (!strcmp(model, "ok") || !strncmp(model, "delay", 5) || !strcmp(model, "slow")) {
    if (!strncmp(model, "delay", 5)) sd_sleep_ms(atol(model + 5));
    if (!strcmp(model, "slow")) sd_sleep_ms(3000);
    ok = sd_ok_body(chat, answer, "stop", 0);
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
  } else if (sscanf(model, "e%d", &code) == 1) {
    const char *x = strchr(model, 'x');
    if (x && sscanf(x, "x%u", &k) == 1 && seen >= k) {
      ok = sd_ok_body(chat, answer, "stop", 0);
    } else {
      char msg[96];
      snprintf(msg, sizeof msg, "standin fault %d (request %u for this seed)", code, seen + 1);
      sd_error(fd, code, msg);
    }
  } else if (!strcmp(model, "trunc")) {
    char *s = sd_ok_body(chat, answer, "stop", 0);
    sd_respond(fd, 200, s, strlen(s) / 2, strlen(s));
    free(s);
  } else if (!strcmp(model, "nonjson")) {
    const char *h = "<html><body>502 upstream glitch</body></html>";
    sd_respond(fd, 200, h, strlen(h), strlen(h));
  } else if (!strcmp(model, "nochoices")) {
    const char *h = "{\"object\":\"error\",\"message\":\"engine dead\"}";
    sd_respond(fd, 200, h, strlen(h), strlen(h));
  } else if (!strcmp(model, "nullcontent")) {
    ok = sd_ok_body(chat, NULL, "stop", 0);
  } else if (!strcmp(model, "drop")) {
    /* nothing: the connection closes without a response */
  } else if (!strcmp(model, "length")) {
    char *half = strdup(answer);
    half[strlen(half) / 2] = 0;
    ok = sd_ok_body(chat, half, "length", 0);
    free(half);
  } else if (!strcmp(model, "big")) {
    ok = sd_ok_body(chat, answer, "stop", 65536);
  } else {
    sd_error(fd, 404, "the model does not exist");
  }
  if (ok) {
    sd_respond(fd, 200, ok, strlen(ok), strlen(ok));
    cJSON_free(ok);
  }
}

static void sd_serve(int ls, const char *answer, const char *dir) {
  signal(SIGCHLD, SIG_IGN); /* answering processes reap themselves */
  signal(SIGPIPE, SIG_IGN);
  alarm(60);                /* never outlive a broken test for long */
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
    snprintf(path, sizeof path, "%s/%06u.req", dir, seq);
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
      sd_answer(c, answer, req, hlen, (size_t)len, seen);
      shutdown(c, SHUT_WR);
      close(c);
      _exit(0);
    }
    free(req);
    close(c);
  }
}

/* Start the stand-in answering `answer`, recording requests under `dir`. 0 on success. */
static int standin_start(rs_standin *sd, const char *answer, const char *dir) {
  memset(sd, 0, sizeof *sd);
  snprintf(sd->dir, sizeof sd->dir, "%s", dir);
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
    sd_serve(ls, answer, dir);
    _exit(0);
  }
  close(ls);
  return 0;
}

static void standin_stop(rs_standin *sd) {
  if (sd->pid > 0) {
    kill(sd->pid, SIGTERM);
    waitpid(sd->pid, NULL, 0);
    sd->pid = 0;
  }
}
