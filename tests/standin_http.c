/* standin_http.c - HTTP and OpenAI-body helpers of the TEST DOUBLES tests/standin_openai.c
 * (forked inside test_openai) and tests/standin_server.c (a standalone stand-in process for the
 * fault-matrix test). Neither is a model. #included by both; no CMake target of its own. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

#define SD_MAX_REQ ((size_t)64 << 20)

static void sd_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) && errno == EINTR) {}
}

static void sd_write(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) {
      if (w < 0 && errno == EINTR) continue;
      return;
    }
    p += w;
    n -= (size_t)w;
  }
}

/* Read one request; returns its length (headers + body) with *hlen the header length, or -1. */
static ssize_t sd_read_request(int fd, char **out, size_t *hlen) {
  struct timeval tv = {5, 0}; /* a client that stops sending must not hold an answerer forever */
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  size_t cap = 65536, len = 0, need = 0;
  char *b = malloc(cap);
  *hlen = 0;
  for (;;) {
    if (len + 1 >= cap) {
      if (cap >= SD_MAX_REQ) break;
      cap *= 2;
      b = realloc(b, cap);
    }
    ssize_t r = recv(fd, b + len, cap - len - 1, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
    b[len] = 0;
    if (!*hlen) {
      char *e = strstr(b, "\r\n\r\n");
      if (!e) continue;
      *hlen = (size_t)(e - b) + 4;
      size_t cl = 0;
      for (char *h = b; h && h < e; h = strstr(h, "\r\n")) {
        if (*h == '\r') h += 2;
        if (!strncasecmp(h, "content-length:", 15)) cl = strtoul(h + 15, NULL, 10);
      }
      need = *hlen + cl;
    }
    if (*hlen && len >= need) {
      *out = b;
      return (ssize_t)len;
    }
  }
  free(b);
  return -1;
}

static void sd_respond(int fd, int code, const char *body, size_t blen, size_t claimed) {
  char head[256];
  const char *reason = code == 200 ? "OK" : code == 429 ? "Too Many Requests" : code >= 500 ? "Server Error" : "Error";
  int hl = snprintf(head, sizeof head,
                    "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                    "Connection: close\r\n\r\n",
                    code, reason, claimed);
  sd_write(fd, head, (size_t)hl);
  sd_write(fd, body, blen);
}

/* The 200 body in the API's shape: n choices (index i: contents[i]) and usage with the given
 * prompt tokens. */
static char *sd_ok_body_n(bool chat, const char *const *contents, unsigned n, const char *finish, size_t pad,
                          unsigned prompt_tokens) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "id", "cmpl-standin");
  cJSON_AddStringToObject(r, "object", chat ? "chat.completion" : "text_completion");
  cJSON_AddStringToObject(r, "model", "standin");
  cJSON *ch = cJSON_AddArrayToObject(r, "choices");
  size_t ct = 0;
  for (unsigned i = 0; i < n; i++) {
    const char *content = contents[i];
    cJSON *c0 = cJSON_CreateObject();
    cJSON_AddNumberToObject(c0, "index", i);
    if (chat) {
      cJSON *m = cJSON_AddObjectToObject(c0, "message");
      cJSON_AddStringToObject(m, "role", "assistant");
      if (content) cJSON_AddStringToObject(m, "content", content);
      else cJSON_AddNullToObject(m, "content");
    } else {
      cJSON_AddStringToObject(c0, "text", content ? content : "");
    }
    cJSON_AddStringToObject(c0, "finish_reason", finish);
    cJSON_AddItemToArray(ch, c0);
    ct += content ? strlen(content) / 4 + 1 : 0;
  }
  cJSON *u = cJSON_AddObjectToObject(r, "usage");
  cJSON_AddNumberToObject(u, "prompt_tokens", prompt_tokens);
  cJSON_AddNumberToObject(u, "completion_tokens", (double)ct);
  cJSON_AddNumberToObject(u, "total_tokens", prompt_tokens + (double)ct);
  if (pad) {
    char *p = malloc(pad + 1);
    memset(p, 'x', pad);
    p[pad] = 0;
    cJSON_AddStringToObject(r, "padding", p);
    free(p);
  }
  char *s = cJSON_PrintUnformatted(r);
  cJSON_Delete(r);
  return s;
}

/* Prompt tokens as a tokenizer would count them: about 4 bytes a token over every message (so
 * the client's truncation check sees a plausible count). */
static unsigned sd_prompt_tokens(const cJSON *body) {
  size_t bytes = 0;
  const cJSON *pr = cJSON_GetObjectItemCaseSensitive(body, "prompt"), *m;
  if (cJSON_IsString(pr)) bytes += strlen(pr->valuestring);
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(body, "messages")) {
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
    if (cJSON_IsString(c)) bytes += strlen(c->valuestring) + 4;
  }
  return (unsigned)(bytes / 4 + 1);
}

/* The schema a request carries in one of the dialects the stand-in honours (`honour`: a comma
 * list of openai, llamacpp, vllm; "all"; "none"), or NULL: a form it does not read is silently
 * ignored, as llama.cpp and vLLM do. */
static const cJSON *sd_schema_in(const cJSON *body, const char *honour) {
  bool all = !strcmp(honour, "all");
  if (all || strstr(honour, "openai")) {
    const cJSON *rf = cJSON_GetObjectItemCaseSensitive(body, "response_format");
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(rf, "json_schema");
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(js, "schema");
    if (cJSON_IsObject(sc)) return sc;
  }
  if (all || strstr(honour, "llamacpp")) {
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(body, "json_schema");
    if (cJSON_IsObject(sc)) return sc;
  }
  if (all || strstr(honour, "vllm")) {
    const cJSON *so = cJSON_GetObjectItemCaseSensitive(body, "structured_outputs");
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(so, "json");
    if (cJSON_IsObject(sc)) return sc;
  }
  return NULL;
}

/* A stand-in "applies" a schema only where it admits a single answer: every required property
 * pattern-bound to one literal ("^zq7$", the client's probe). That answer, or NULL. */
static char *sd_literal_answer(const cJSON *schema) {
  const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties"), *p;
  if (!cJSON_IsObject(props) || !props->child) return NULL;
  cJSON *ans = cJSON_CreateObject();
  cJSON_ArrayForEach(p, props) {
    const cJSON *pat = cJSON_GetObjectItemCaseSensitive(p, "pattern");
    const char *v = cJSON_IsString(pat) ? pat->valuestring : "";
    size_t l = strlen(v);
    bool lit = l > 2 && v[0] == '^' && v[l - 1] == '$';
    for (size_t i = 1; lit && i + 1 < l; i++)
      lit = (v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') || v[i] == '_';
    if (!lit) {
      cJSON_Delete(ans);
      return NULL;
    }
    char val[64];
    snprintf(val, sizeof val, "%.*s", (int)(l - 2 < 60 ? l - 2 : 60), v + 1);
    cJSON_AddStringToObject(ans, p->string, val);
  }
  char *s = cJSON_PrintUnformatted(ans);
  cJSON_Delete(ans);
  return s;
}

static void sd_error(int fd, int code, const char *msg) {
  cJSON *r = cJSON_CreateObject();
  cJSON *e = cJSON_AddObjectToObject(r, "error");
  cJSON_AddStringToObject(e, "message", msg);
  cJSON_AddStringToObject(e, "type", "standin_error");
  char *s = cJSON_PrintUnformatted(r);
  cJSON_Delete(r);
  sd_respond(fd, code, s, strlen(s), strlen(s));
  free(s);
}

