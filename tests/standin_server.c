/* standin_server.c - A TEST DOUBLE: a standalone stand-in for an OpenAI-compatible inference server,
 * run as its own process so tests/test_faults.sh can kill it, restart it and slow it down in the
 * middle of a real sweep. IT IS NOT A MODEL: it never allocates registers. Its answer is a
 * deterministic scramble of the prompt: every virtual register name after "Function:" mapped to a
 * physical register of the same kind picked by a hash of (request seed, name), aligned for tuples,
 * and for some seeds a broken or prose-wrapped JSON text. The same request always gets the same
 * answer, so a sweep through it is reproducible, and the verdicts vary (syntax, dataflow, hardware,
 * now and then a pass on tiny kernels) so a lost or duplicated attempt changes the attempt table.
 *
 *   standin_server --port-file FILE [--port N] [--delay-file FILE] [--count-file FILE]
 *                  [--schema openai|llamacpp|vllm|all|none] [--refuse-file FILE]
 *                  [--prompt-dir DIR] [--ctx N [--slots S] [--says-nothing 1]] [--requests-file FILE]
 *
 * Listens on 127.0.0.1:N (N = 0: an ephemeral port), writes the port to FILE once it listens
 * (written aside and renamed, so a reader never sees half of it), answers POST /v1/chat/completions
 * and /v1/completions, one process per request. If the delay file exists, each answer waits the
 * milliseconds it contains first (slow the server down without restarting it). With --count-file
 * it appends one line per answered request (seed, prompt tokens). While the refuse file exists
 * ("MIN_TOKENS MESSAGE"), every attempt (not the probe) whose prompt has MIN_TOKENS or more is
 * refused with HTTP 400 and MESSAGE, as llama.cpp refuses a prompt beyond its context. With
 * --prompt-dir each attempt's prompt is written to DIR/SEED.txt (what the feedback said). Like a real server it reads structured-output
 * schemas only in the dialects --schema names (default openai: response_format) and silently
 * ignores the others; it "applies" one only where it admits a single answer (the client's probe).
 * An n > 1 request gets n choices, choice i scrambled with seed + i (vLLM's child seeds).
 * usage.prompt_tokens is the prompt's size / 4. Exits on SIGTERM or after 10 minutes.
 * --ctx N makes it llama.cpp-like with N tokens of context per slot: GET /props
 * (default_generation_settings.n_ctx, total_slots S, default 4), GET /slots, POST /apply-template
 * (the messages joined, 4 template bytes each, so its count matches usage) and POST /tokenize
 * (about 4 bytes a token), and a prompt of N tokens or more is refused with llama.cpp's own
 * message, HTTP 400 "request (P tokens) exceeds the available context size (N tokens), try
 * increasing it"; --says-nothing 1 keeps the refusal but answers 404 to /props, /slots, /tokenize
 * and /apply-template (a server that states neither its context nor its tokenizer).
 * --requests-file appends "STATUS PROMPT_TOKENS" per completion request (refused ones too).
 *
 *   standin_server --batch IN.jsonl --batch-out OUT.jsonl [--ctx N]
 *
 * is A STAND-IN BATCH RUNNER (what `vllm run-batch -i IN -o OUT` does, not a model): every request
 * line of an OpenAI Batch file {"custom_id", "method", "url", "body"} gets the answer the server
 * would give the same body (the same seeded scramble, n choices, --ctx's refusal), written as a
 * result line {"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error": null}. */
#include "tests/standin_http.c"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <sys/time.h>
#include <unistd.h>

/* FNV-1a over the name, mixed with the seed (splitmix64 finaliser). */
static uint64_t ss_hash(uint64_t seed, const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

/* The answer for one prompt and seed (malloc'd). */
static char *ss_scramble(const char *prompt, uint64_t seed) {
  const char *p = strstr(prompt, "Function:");
  p = p ? p : prompt;
  cJSON *ans = cJSON_CreateObject();
  while (*p) {
    /* a virtual register: [svadrp]DIGITS at a word start, optionally ":TYPEWIDTH" */
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
    snprintf(name, sizeof name, "%.*s", (int)(q - p), p);
    unsigned width = 1;
    if (*q == ':' && q[1] && q[2] >= '1' && q[2] <= '9') width = (unsigned)atoi(q + 2);
    if (width > 16) width = 16;
    p = q;
    if (cJSON_GetObjectItemCaseSensitive(ans, name)) continue;
    uint64_t h = ss_hash(seed, name, strlen(name));
    char kind = name[0], reg[48];
    unsigned range = kind == 's' ? 32 : kind == 'v' ? 48 : kind == 'a' ? 32 : kind == 'p' ? 7 : 64;
    unsigned base = (unsigned)(h % range);
    if (kind == 'd') width = 2;
    if (width > 1) base &= ~1u; /* even-aligned tuples */
    const char *file = kind == 'r' || kind == 'd' ? "R" : kind == 'p' ? "P" : kind == 's' ? "s" : kind == 'a' ? "a" : "v";
    if (width == 1) snprintf(reg, sizeof reg, "%s%u", file, base);
    else snprintf(reg, sizeof reg, "%s[%u:%u]", file, base, base + width - 1);
    cJSON_AddStringToObject(ans, name, reg);
  }
  char *json = cJSON_PrintUnformatted(ans);
  cJSON_Delete(ans);
  size_t n = strlen(json);
  char *out = malloc(n + 64);
  switch (seed % 8) {
  case 0: /* cut off mid-answer */
    snprintf(out, n + 64, "%.*s", (int)(n / 2), json);
    break;
  case 1: /* wrapped in prose */
    snprintf(out, n + 64, "Here is the allocation:\n%s\nDone.", json);
    break;
  default:
    snprintf(out, n + 64, "%s", json);
  }
  cJSON_free(json);
  return out;
}

/* The prompt text of a chat or completions request body (concatenated messages). */
static char *ss_prompt(const cJSON *body, bool chat) {
  if (!chat) {
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(body, "prompt");
    return strdup(cJSON_IsString(pr) ? pr->valuestring : "");
  }
  size_t cap = 1, len = 0;
  char *s = calloc(1, 1);
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(body, "messages")) {
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
    if (!cJSON_IsString(c)) continue;
    size_t n = strlen(c->valuestring);
    s = realloc(s, cap += n + 1);
    memcpy(s + len, c->valuestring, n);
    len += n;
    s[len++] = '\n';
    s[len] = 0;
  }
  return s;
}

static long ss_delay_ms(const char *file) {
  FILE *f = file ? fopen(file, "r") : NULL;
  long ms = 0;
  if (f) {
    if (fscanf(f, "%ld", &ms) != 1) ms = 0;
    fclose(f);
  }
  return ms;
}

typedef struct {
  unsigned ctx, slots;
  bool says_nothing;
  const char *requests_file;
} ss_llama;

static void ss_log_request(const ss_llama *ll, int status, unsigned ptok) {
  FILE *f = ll->requests_file ? fopen(ll->requests_file, "a") : NULL;
  if (f) {
    fprintf(f, "%d %u\n", status, ptok);
    fclose(f);
  }
}

static void ss_json(int fd, cJSON *r) {
  char *s = cJSON_PrintUnformatted(r);
  cJSON_Delete(r);
  sd_respond(fd, 200, s, strlen(s), strlen(s));
  free(s);
}

/* llama.cpp's introspection endpoints (--ctx); false: not one of them. */
static bool ss_llama_endpoint(int fd, const char *req, size_t hlen, size_t len, const ss_llama *ll) {
  const char *eol = strstr(req, "\r\n");
  static const char *const paths[] = {" /props ", " /slots ", " /tokenize ", " /apply-template "};
  int which = -1;
  for (int i = 0; i < 4; i++) {
    const char *p = strstr(req, paths[i]);
    if (p && p < eol) which = i;
  }
  if (which < 0 || !ll->ctx) return false;
  if (ll->says_nothing) {
    sd_error(fd, 404, "File Not Found");
    return true;
  }
  cJSON *body = which >= 2 ? cJSON_ParseWithLength(req + hlen, len - hlen) : NULL;
  cJSON *r = which == 1 ? cJSON_CreateArray() : cJSON_CreateObject();
  if (which == 0) {
    cJSON *dg = cJSON_AddObjectToObject(r, "default_generation_settings");
    cJSON_AddNumberToObject(dg, "n_ctx", ll->ctx);
    cJSON_AddNumberToObject(r, "total_slots", ll->slots);
  } else if (which == 1) {
    for (unsigned i = 0; i < ll->slots; i++) {
      cJSON *sl = cJSON_CreateObject();
      cJSON_AddNumberToObject(sl, "id", i);
      cJSON_AddFalseToObject(sl, "is_processing");
      cJSON_AddItemToArray(r, sl);
    }
  } else if (which == 2) { /* about 4 bytes a token, as sd_prompt_tokens counts */
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(body, "content");
    size_t n = cJSON_IsString(c) ? strlen(c->valuestring) / 4 + 1 : 0;
    cJSON *t = cJSON_AddArrayToObject(r, "tokens");
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(t, cJSON_CreateNumber((double)(i % 256)));
  } else { /* the "template": each message's content and 4 bytes */
    size_t cap = 1, k = 0;
    char *t = calloc(1, 1);
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(body, "messages")) {
      const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
      if (!cJSON_IsString(c)) continue;
      size_t n = strlen(c->valuestring);
      t = realloc(t, cap += n + 4);
      memcpy(t + k, c->valuestring, n);
      memcpy(t + k + n, "<|>\n", 4);
      k += n + 4;
      t[k] = 0;
    }
    cJSON_AddStringToObject(r, "prompt", t);
    free(t);
  }
  cJSON_Delete(body);
  ss_json(fd, r);
  return true;
}

static void ss_answer(int fd, const char *req, size_t hlen, size_t len, const char *delay_file, const char *count_file,
                      const char *honour, const char *refuse_file, const char *prompt_dir, const ss_llama *ll) {
  if (ss_llama_endpoint(fd, req, hlen, len, ll)) return;
  const char *eol = strstr(req, "\r\n");
  const char *c1 = strstr(req, " /v1/chat/completions "), *c2 = strstr(req, " /v1/completions ");
  bool chat = c1 && c1 < eol, compl = c2 && c2 < eol;
  if (!chat && !compl) {
    sd_error(fd, 404, "no such endpoint");
    return;
  }
  cJSON *body = cJSON_ParseWithLength(req + hlen, len - hlen);
  if (!body) {
    sd_error(fd, 400, "request body is not JSON");
    return;
  }
  const cJSON *sj = cJSON_GetObjectItemCaseSensitive(body, "seed"), *nj = cJSON_GetObjectItemCaseSensitive(body, "n");
  uint64_t seed = cJSON_IsNumber(sj) ? (uint64_t)sj->valuedouble : 0;
  unsigned nch = cJSON_IsNumber(nj) && nj->valuedouble >= 1 && nj->valuedouble <= 64 ? (unsigned)nj->valuedouble : 1;
  char *prompt = ss_prompt(body, chat);
  unsigned ptok = sd_prompt_tokens(body);
  /* a schema in a dialect it reads is applied where it admits one answer (the client's probe) */
  const cJSON *sc = sd_schema_in(body, honour);
  char *lit = sc ? sd_literal_answer(sc) : NULL;
  cJSON_Delete(body);
  if (ll->ctx && !lit && ptok >= ll->ctx) { /* llama.cpp's own refusal of a prompt beyond a slot's context */
    char msg[200];
    snprintf(msg, sizeof msg, "request (%u tokens) exceeds the available context size (%u tokens), try increasing it",
             ptok, ll->ctx);
    ss_log_request(ll, 400, ptok);
    sd_error(fd, 400, msg);
    free(prompt);
    free(lit);
    return;
  }
  if (!lit) ss_log_request(ll, 200, ptok);
  FILE *rf = !lit && refuse_file ? fopen(refuse_file, "r") : NULL;
  if (rf) {
    char line[300] = "0 refused";
    if (fgets(line, sizeof line, rf)) line[strcspn(line, "\n")] = 0;
    fclose(rf);
    char *msg = strchr(line, ' ');
    if ((unsigned)atol(line) <= ptok) {
      sd_error(fd, 400, msg ? msg + 1 : "refused");
      free(prompt);
      return;
    }
  }
  if (prompt_dir && !lit) {
    char pp[1200];
    snprintf(pp, sizeof pp, "%s/%llu.txt", prompt_dir, (unsigned long long)seed);
    FILE *pf = fopen(pp, "w");
    if (pf) {
      fputs(prompt, pf);
      fclose(pf);
    }
  }
  long ms = ss_delay_ms(delay_file);
  if (ms > 0) sd_sleep_ms(ms);
  /* choice i is sampled with seed + i, as vLLM seeds the children of an n > 1 request */
  char *contents[64];
  for (unsigned i = 0; i < nch; i++) contents[i] = lit ? strdup(lit) : ss_scramble(prompt, seed + i);
  char *ok = sd_ok_body_n(chat, (const char *const *)contents, nch, "stop", 0, ptok);
  for (unsigned i = 0; i < nch; i++) free(contents[i]);
  free(lit);
  sd_respond(fd, 200, ok, strlen(ok), strlen(ok));
  if (count_file) {
    FILE *f = fopen(count_file, "a");
    if (f) {
      fprintf(f, "%llu %u\n", (unsigned long long)seed, ptok);
      fclose(f);
    }
  }
  cJSON_free(ok);
  free(prompt);
}

/* The batch runner: the answer of every request line of `in`, appended to `out`. */
static int ss_batch(const char *in, const char *out, const ss_llama *ll) {
  FILE *f = fopen(in, "r"), *o = fopen(out, "a");
  if (!f || !o) {
    fprintf(stderr, "standin_server: cannot open %s or %s\n", in, out);
    if (f) fclose(f);
    if (o) fclose(o);
    return 1;
  }
  char *line = NULL;
  size_t cap = 0;
  unsigned k = 0;
  while (getline(&line, &cap, f) > 0) {
    cJSON *r = cJSON_Parse(line);
    const cJSON *cid = cJSON_GetObjectItemCaseSensitive(r, "custom_id"), *url = cJSON_GetObjectItemCaseSensitive(r, "url");
    const cJSON *body = cJSON_GetObjectItemCaseSensitive(r, "body");
    if (!cJSON_IsString(cid) || !cJSON_IsString(url) || !cJSON_IsObject(body)) {
      cJSON_Delete(r);
      continue;
    }
    bool chat = strstr(url->valuestring, "chat") != NULL;
    const cJSON *sj = cJSON_GetObjectItemCaseSensitive(body, "seed"), *nj = cJSON_GetObjectItemCaseSensitive(body, "n");
    uint64_t seed = cJSON_IsNumber(sj) ? (uint64_t)sj->valuedouble : 0;
    unsigned nch = cJSON_IsNumber(nj) && nj->valuedouble >= 1 && nj->valuedouble <= 64 ? (unsigned)nj->valuedouble : 1;
    char *prompt = ss_prompt(body, chat);
    unsigned ptok = sd_prompt_tokens(body);
    cJSON *res = cJSON_CreateObject(), *resp;
    char rid[64];
    snprintf(rid, sizeof rid, "batch-standin-%u", k++);
    cJSON_AddStringToObject(res, "id", rid);
    cJSON_AddStringToObject(res, "custom_id", cid->valuestring);
    resp = cJSON_AddObjectToObject(res, "response");
    cJSON_AddStringToObject(resp, "request_id", rid);
    if (ll->ctx && ptok >= ll->ctx) {
      char msg[200];
      snprintf(msg, sizeof msg, "request (%u tokens) exceeds the available context size (%u tokens), try increasing it",
               ptok, ll->ctx);
      cJSON_AddNumberToObject(resp, "status_code", 400);
      cJSON *eb = cJSON_AddObjectToObject(cJSON_AddObjectToObject(resp, "body"), "error");
      cJSON_AddStringToObject(eb, "message", msg);
    } else {
      char *contents[64];
      for (unsigned i = 0; i < nch; i++) contents[i] = ss_scramble(prompt, seed + i);
      char *ok = sd_ok_body_n(chat, (const char *const *)contents, nch, "stop", 0, ptok);
      for (unsigned i = 0; i < nch; i++) free(contents[i]);
      cJSON_AddNumberToObject(resp, "status_code", 200);
      cJSON_AddItemToObject(resp, "body", cJSON_Parse(ok));
      cJSON_free(ok);
    }
    cJSON_AddNullToObject(res, "error");
    char *t = cJSON_PrintUnformatted(res);
    fprintf(o, "%s\n", t);
    cJSON_free(t);
    cJSON_Delete(res);
    free(prompt);
    cJSON_Delete(r);
  }
  free(line);
  fclose(f);
  return fclose(o) ? 1 : 0;
}

int main(int argc, char **argv) {
  const char *port_file = NULL, *delay_file = NULL, *count_file = NULL, *honour = "openai", *refuse_file = NULL,
             *prompt_dir = NULL, *batch_in = NULL, *batch_out = NULL;
  int port = 0;
  ss_llama ll = {0, 4, false, NULL};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--port-file")) port_file = argv[i + 1];
    else if (!strcmp(argv[i], "--port")) port = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--delay-file")) delay_file = argv[i + 1];
    else if (!strcmp(argv[i], "--count-file")) count_file = argv[i + 1];
    else if (!strcmp(argv[i], "--schema")) honour = argv[i + 1];
    else if (!strcmp(argv[i], "--refuse-file")) refuse_file = argv[i + 1];
    else if (!strcmp(argv[i], "--prompt-dir")) prompt_dir = argv[i + 1];
    else if (!strcmp(argv[i], "--ctx")) ll.ctx = (unsigned)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--slots")) ll.slots = (unsigned)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--says-nothing")) ll.says_nothing = atoi(argv[i + 1]) != 0;
    else if (!strcmp(argv[i], "--requests-file")) ll.requests_file = argv[i + 1];
    else if (!strcmp(argv[i], "--batch")) batch_in = argv[i + 1];
    else if (!strcmp(argv[i], "--batch-out")) batch_out = argv[i + 1];
    else {
      fprintf(stderr, "standin_server: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (batch_in && batch_out) return ss_batch(batch_in, batch_out, &ll);
  if (!port_file) {
    fprintf(stderr, "usage: standin_server --port-file FILE [--port N] [--delay-file FILE] [--count-file FILE] "
                    "[--schema openai|llamacpp|vllm|all|none] [--refuse-file FILE] [--prompt-dir DIR]\n");
    return 2;
  }
  int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); /* restart on the same port */
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons((uint16_t)port);
  socklen_t al = sizeof a;
  if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 128) ||
      getsockname(ls, (struct sockaddr *)&a, &al)) {
    fprintf(stderr, "standin_server: cannot listen on 127.0.0.1:%d: %s\n", port, strerror(errno));
    return 1;
  }
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
  FILE *f = fopen(tmp, "w");
  if (!f || fprintf(f, "%d\n", ntohs(a.sin_port)) < 0 || fclose(f) || rename(tmp, port_file)) {
    fprintf(stderr, "standin_server: cannot write %s\n", port_file);
    return 1;
  }
  signal(SIGCHLD, SIG_IGN); /* answering processes reap themselves */
  signal(SIGPIPE, SIG_IGN);
  alarm(600);               /* never outlive a broken test for long */
  for (;;) {
    int c = accept(ls, NULL, NULL);
    if (c < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
      close(ls);
      alarm(60);
      char *req = NULL;
      size_t hlen;
      ssize_t len = sd_read_request(c, &req, &hlen);
      if (len >= 0) ss_answer(c, req, hlen, (size_t)len, delay_file, count_file, honour, refuse_file, prompt_dir, &ll);
      free(req);
      shutdown(c, SHUT_WR);
      close(c);
      _exit(0);
    }
    close(c);
  }
}
