/* http.c - the reward service over HTTP/1.1 on plain sockets: one accept thread, a fixed set of
 * connection threads (one request per connection, read under a size and a time limit) and the
 * shared verification pool. Bad input is an HTTP error for that request only. docs/reward.md. */
#include "reward/reward.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HDR_MAX 16384

void rs_reward_serve_defaults(rs_reward_serve_opts *o) {
  memset(o, 0, sizeof *o);
  o->host = "127.0.0.1";
  o->port = 8008;
  o->threads = 2;
  o->conns = 8;
  o->max_body = 64u << 20; /* 1,024 answers of ~60 KB each */
  o->read_timeout_ms = 10000;
  o->max_items = 16384;
}

struct rs_reward_server {
  const rs_reward *r;
  rs_reward_serve_opts o;
  rs_rpool *pool;
  int lfd;
  unsigned port;
  pthread_t acceptor, *conn_th;
  pthread_mutex_t mu;
  pthread_cond_t cv, done_cv;
  int *q; /* accepted connections waiting for a connection thread */
  uint32_t qn, qcap;
  bool stop, stopped;
  uint64_t requests, items, errors;
};

static void send_all(int fd, const char *b, size_t n) {
  while (n) {
    ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
    if (w <= 0) {
      if (w < 0 && errno == EINTR) continue;
      return; /* the client went away: nothing to tell it */
    }
    b += w, n -= (size_t)w;
  }
}

static void reply(int fd, int code, const char *body) {
  const char *why = code == 200 ? "OK" : code == 400 ? "Bad Request" : code == 404 ? "Not Found" : code == 405 ? "Method Not Allowed"
                    : code == 408 ? "Request Timeout" : code == 411 ? "Length Required" : code == 413 ? "Payload Too Large"
                    : code == 431 ? "Request Header Fields Too Large" : code == 100 ? "Continue" : "Internal Server Error";
  char h[256];
  int hn = snprintf(h, sizeof h,
                    "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                    code, why, strlen(body));
  send_all(fd, h, (size_t)hn);
  send_all(fd, body, strlen(body));
}

static void reply_error(rs_reward_server *s, int fd, int code, const char *msg) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "error", msg);
  cJSON_AddNumberToObject(o, "status", code);
  char *t = cJSON_PrintUnformatted(o);
  reply(fd, code, t);
  cJSON_free(t);
  cJSON_Delete(o);
  pthread_mutex_lock(&s->mu);
  s->errors++;
  pthread_mutex_unlock(&s->mu);
}

/* Read up to n bytes before the deadline; returns bytes read, 0 on EOF, -1 on error, -2 on timeout. */
static ssize_t read_some(int fd, char *b, size_t n, double deadline) {
  for (;;) {
    double left = deadline - rs_now();
    if (left <= 0) return -2;
    struct pollfd pf = {fd, POLLIN, 0};
    int pr = poll(&pf, 1, (int)(left * 1000) + 1);
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) return -1;
    if (pr == 0) return -2;
    ssize_t r = recv(fd, b, n, 0);
    if (r < 0 && errno == EINTR) continue;
    return r;
  }
}

static const char *header(const char *hdrs, const char *name, char *val, size_t vn) {
  size_t nl = strlen(name);
  for (const char *l = strstr(hdrs, "\r\n"); l && l[2]; l = strstr(l + 2, "\r\n")) {
    const char *h = l + 2;
    if (!strncasecmp(h, name, nl) && h[nl] == ':') {
      const char *v = h + nl + 1, *end = strstr(v, "\r\n");
      while (*v == ' ' || *v == '\t') v++;
      size_t k = end ? (size_t)(end - v) : strlen(v);
      if (k >= vn) k = vn - 1;
      memcpy(val, v, k);
      val[k] = 0;
      return val;
    }
  }
  return NULL;
}

static void handle_post(rs_reward_server *s, int fd, int shape, const char *body, size_t len) {
  rs_err e = {{0}};
  cJSON *doc;
  rs_reward_item *items;
  int n = rs_reward_parse_request(body, len, shape, &doc, &items, &e);
  if (n < 0) {
    reply_error(s, fd, 400, e.msg);
    return;
  }
  if ((uint32_t)n > s->o.max_items) {
    char m[160];
    snprintf(m, sizeof m, "request: %d items, more than --max-items %u", n, s->o.max_items);
    reply_error(s, fd, 413, m);
  } else {
    double *rw = rs_xcalloc(n ? (size_t)n : 1, sizeof *rw);
    cJSON *res = rs_reward_batch(s->r, s->pool, items, (uint32_t)n, rw);
    char *a = rs_reward_answer(s->r, shape, res, rw, (uint32_t)n);
    reply(fd, 200, a);
    cJSON_free(a);
    free(rw);
    pthread_mutex_lock(&s->mu);
    s->items += (uint64_t)n;
    pthread_mutex_unlock(&s->mu);
  }
  free(items);
  cJSON_Delete(doc);
}

static void handle(rs_reward_server *s, int fd) {
  double deadline = rs_now() + s->o.read_timeout_ms / 1000.0;
  char *buf = rs_xmalloc(HDR_MAX + 1);
  size_t n = 0;
  char *eoh = NULL;
  while (!eoh) {
    if (n == HDR_MAX) {
      reply_error(s, fd, 431, "request: headers larger than 16 KiB");
      free(buf);
      return;
    }
    ssize_t r = read_some(fd, buf + n, HDR_MAX - n, deadline);
    if (r == -2) {
      reply_error(s, fd, 408, "request: not received within --read-timeout-ms");
      free(buf);
      return;
    }
    if (r <= 0) { /* closed or reset before a request: nothing to answer */
      free(buf);
      return;
    }
    n += (size_t)r;
    buf[n] = 0;
    eoh = strstr(buf, "\r\n\r\n");
  }
  pthread_mutex_lock(&s->mu);
  s->requests++;
  pthread_mutex_unlock(&s->mu);
  *eoh = 0;
  size_t have = n - (size_t)(eoh + 4 - buf);
  char method[8] = "", path[128] = "", val[64];
  if (sscanf(buf, "%7s %127s", method, path) != 2) {
    reply_error(s, fd, 400, "request: malformed request line");
    free(buf);
    return;
  }
  char *q = strchr(path, '?');
  if (q) *q = 0;
  if (!strcmp(method, "GET")) {
    if (!strcmp(path, "/health")) {
      char b[96];
      snprintf(b, sizeof b, "{\"ok\":true,\"instances\":%u}", rs_reward_ninstances(s->r));
      reply(fd, 200, b);
    } else if (!strcmp(path, "/config")) {
      cJSON *m = rs_reward_meta(s->r);
      char *t = cJSON_PrintUnformatted(m);
      reply(fd, 200, t);
      cJSON_free(t);
      cJSON_Delete(m);
    } else {
      reply_error(s, fd, 404, "unknown path (GET /health, /config; POST /reward, /openrlhf, /get_reward)");
    }
    free(buf);
    return;
  }
  int shape = !strcmp(path, "/reward") ? RS_SHAPE_NATIVE
              : (!strcmp(path, "/openrlhf") || !strcmp(path, "/get_reward")) ? RS_SHAPE_OPENRLHF
              : !strcmp(path, "/shutdown") ? 99 : -1;
  if (strcmp(method, "POST") || shape < 0) {
    reply_error(s, fd, strcmp(method, "POST") ? 405 : 404,
                "unknown request (GET /health, /config; POST /reward, /openrlhf, /get_reward)");
    free(buf);
    return;
  }
  if (shape == 99) {
    if (!s->o.allow_shutdown) {
      reply_error(s, fd, 404, "POST /shutdown: the server was not started with --allow-shutdown");
    } else {
      reply(fd, 200, "{\"ok\":true,\"stopping\":true}");
      rs_reward_serve_stop(s);
    }
    free(buf);
    return;
  }
  if (header(buf, "Transfer-Encoding", val, sizeof val)) {
    reply_error(s, fd, 411, "request: send a Content-Length (chunked bodies are not read)");
    free(buf);
    return;
  }
  if (!header(buf, "Content-Length", val, sizeof val)) {
    reply_error(s, fd, 411, "request: POST needs a Content-Length");
    free(buf);
    return;
  }
  char *endp;
  unsigned long long cl = strtoull(val, &endp, 10);
  if (endp == val || *endp) {
    reply_error(s, fd, 400, "request: bad Content-Length");
    free(buf);
    return;
  }
  if (cl > s->o.max_body) {
    char m[160];
    snprintf(m, sizeof m, "request: body of %llu bytes, more than --max-body %zu", cl, s->o.max_body);
    reply_error(s, fd, 413, m);
    free(buf);
    return;
  }
  if (header(buf, "Expect", val, sizeof val) && !strcasecmp(val, "100-continue") && have < cl)
    send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
  char *body = rs_xmalloc((size_t)cl + 1);
  size_t bn = have < cl ? have : (size_t)cl;
  memcpy(body, eoh + 4, bn);
  free(buf);
  while (bn < cl) {
    ssize_t r = read_some(fd, body + bn, (size_t)cl - bn, deadline);
    if (r == -2) {
      reply_error(s, fd, 408, "request: body not received within --read-timeout-ms");
      free(body);
      return;
    }
    if (r <= 0) {
      free(body);
      return;
    }
    bn += (size_t)r;
  }
  body[bn] = 0;
  handle_post(s, fd, shape, body, bn);
  free(body);
}

static void *conn_main(void *arg) {
  rs_reward_server *s = arg;
  for (;;) {
    pthread_mutex_lock(&s->mu);
    while (!s->qn && !s->stop) pthread_cond_wait(&s->cv, &s->mu);
    if (s->stop) {
      pthread_mutex_unlock(&s->mu);
      return NULL;
    }
    int fd = s->q[0];
    memmove(s->q, s->q + 1, --s->qn * sizeof *s->q);
    pthread_mutex_unlock(&s->mu);
    handle(s, fd);
    /* closing with unread input sends a reset that can destroy the answer in flight (a 413 for
     * a body never read): say we are done, then read what the client still sends, briefly */
    shutdown(fd, SHUT_WR);
    char junk[16384];
    double until = rs_now() + 0.5;
    for (size_t drained = 0; drained < (1u << 20);) {
      ssize_t r = read_some(fd, junk, sizeof junk, until);
      if (r <= 0) break;
      drained += (size_t)r;
    }
    close(fd);
  }
}

static void *accept_main(void *arg) {
  rs_reward_server *s = arg;
  for (;;) {
    int fd = accept(s->lfd, NULL, NULL);
    pthread_mutex_lock(&s->mu);
    bool stop = s->stop;
    if (fd >= 0 && !stop) {
      RS_PUSH(s->q, s->qn, s->qcap, fd);
      pthread_cond_signal(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    if (stop) {
      if (fd >= 0) close(fd);
      return NULL;
    }
    if (fd < 0 && errno != EINTR && errno != ECONNABORTED && errno != EMFILE && errno != ENFILE) return NULL;
    if (fd < 0 && (errno == EMFILE || errno == ENFILE)) nanosleep(&(struct timespec){0, 10000000}, NULL); /* out of descriptors: let some close */
  }
}

rs_reward_server *rs_reward_serve_start(const rs_reward *r, const rs_reward_serve_opts *o, rs_err *e) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)o->port);
  if (inet_pton(AF_INET, o->host, &a.sin_addr) != 1) {
    rs_errf(e, NULL, 0, "--host %s: not an IPv4 address", o->host);
    return NULL;
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  if (fd < 0) {
    rs_errf(e, NULL, 0, "socket: %s", strerror(errno));
    return NULL;
  }
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 128)) {
    rs_errf(e, NULL, 0, "%s:%u: %s", o->host, o->port, strerror(errno));
    close(fd);
    return NULL;
  }
  socklen_t al = sizeof a;
  getsockname(fd, (struct sockaddr *)&a, &al);
  rs_reward_server *s = rs_xcalloc(1, sizeof *s);
  s->r = r;
  s->o = *o;
  if (!s->o.conns) s->o.conns = 1;
  s->lfd = fd;
  s->port = ntohs(a.sin_port);
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  pthread_cond_init(&s->done_cv, NULL);
  s->pool = rs_rpool_new(o->threads);
  s->conn_th = rs_xcalloc(s->o.conns, sizeof *s->conn_th);
  for (unsigned i = 0; i < s->o.conns; i++) pthread_create(&s->conn_th[i], NULL, conn_main, s);
  pthread_create(&s->acceptor, NULL, accept_main, s);
  return s;
}

unsigned rs_reward_serve_port(const rs_reward_server *s) { return s->port; }

void rs_reward_serve_stop(rs_reward_server *s) {
  pthread_mutex_lock(&s->mu);
  s->stop = true;
  pthread_cond_broadcast(&s->cv);
  pthread_cond_broadcast(&s->done_cv);
  pthread_mutex_unlock(&s->mu);
  shutdown(s->lfd, SHUT_RDWR); /* wakes the accept thread */
}

void rs_reward_serve_wait(rs_reward_server *s) {
  pthread_mutex_lock(&s->mu);
  while (!s->stop) pthread_cond_wait(&s->done_cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
}

void rs_reward_serve_counts(rs_reward_server *s, uint64_t *requests, uint64_t *items, uint64_t *errors) {
  pthread_mutex_lock(&s->mu);
  *requests = s->requests, *items = s->items, *errors = s->errors;
  pthread_mutex_unlock(&s->mu);
}

void rs_reward_serve_free(rs_reward_server *s) {
  if (!s) return;
  rs_reward_serve_stop(s);
  pthread_join(s->acceptor, NULL);
  for (unsigned i = 0; i < s->o.conns; i++) pthread_join(s->conn_th[i], NULL);
  for (uint32_t i = 0; i < s->qn; i++) close(s->q[i]);
  close(s->lfd);
  rs_rpool_free(s->pool);
  free(s->q);
  free(s->conn_th);
  pthread_cond_destroy(&s->cv);
  pthread_cond_destroy(&s->done_cv);
  pthread_mutex_destroy(&s->mu);
  free(s);
}
