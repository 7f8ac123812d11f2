/* test_reward.c - `regsweep reward serve` driven by a STAND-IN TRAINER CLIENT (a test double,
 * not a trainer: it posts batches the way a GRPO loop's reward step would, over libcurl) with
 * truths, mutants and garbage from data/corpus-mini.h5: every verdict must equal `regsweep
 * verify`'s (in-process through the same calls as cmd_verify.c for every item, and the binary
 * itself for a share of them), the OpenRLHF shape must give the same rewards, bad input (malformed
 * JSON, unknown instance or prompt, oversized body, a slow client, chunked, wrong path) must be an
 * error for that request or item only, and the server must still answer afterwards. Then the
 * offline command with partial credit and the quality bonus. */
#include "check.h"
#include "corpus/instance.h"
#include "reward/reward.h"
#include "verify/verifier.h"
#include <arpa/inet.h>
#include <curl/curl.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *corpus = "data/corpus-mini.h5";

typedef struct {
  char id[160];
  char *completion;
  bool by_prompt;
  const char *norm; /* the instance's normalized IR (owned by the list below) */
  char expect[16];  /* verify's verdict, in-process */
} item;

static size_t sink(char *p, size_t sz, size_t n, void *ctx) {
  rs_sbuf_put(ctx, p, sz * n);
  return sz * n;
}

static long post(unsigned port, const char *path, const char *body, char **resp) {
  CURL *c = curl_easy_init();
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, path);
  rs_sbuf b = {0};
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  if (body) curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
  long code = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  if (!b.s) rs_sbuf_puts(&b, "");
  *resp = b.s;
  return code;
}

/* A raw connection: send `req`, wait `pause_ms`, then read what comes back (for the requests
 * libcurl will not make: a slow client, a body it never sends). */
static char *raw(unsigned port, const char *req, unsigned pause_ms) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  rs_sbuf b = {0};
  if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
    if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
      close(fd);
      return rs_xstrndup("", 0);
    }
    if (pause_ms) nanosleep(&(struct timespec){pause_ms / 1000, (long)(pause_ms % 1000) * 1000000L}, NULL);
    char buf[4096];
    ssize_t r;
    struct timeval tv = {20, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while ((r = recv(fd, buf, sizeof buf, 0)) > 0) rs_sbuf_put(&b, buf, (size_t)r);
  }
  close(fd);
  if (!b.s) rs_sbuf_puts(&b, "");
  return b.s;
}

/* What `regsweep verify --corpus C --instance ID` says of each of items[0..n) (cmd_verify.c's calls). */
static bool verify_inproc(item *items, uint32_t n) {
  rs_err e = {{0}};
  rs_loaded l;
  if (rs_load_named(corpus, items[0].id, NULL, NULL, &l, &e)) return false;
  for (uint32_t i = 0; i < n; i++) {
    const char *text = items[i].completion;
    char *verdict = items[i].expect;
    rs_verifier vf;
  rs_verifier_open(&vf, RS_VERIFIER_NATIVE, l.p, 10000, &e);
  rs_candidate c;
  rs_check_result r, z;
  rs_verify_text(&vf, &l.names, text, strlen(text), &c, &r, &z);
    strcpy(verdict, rs_verdict_str(r.verdict));
    rs_candidate_free(&c);
    rs_verifier_close(&vf);
  }
  rs_loaded_free(&l);
  return true;
}

/* Mutants of a truth (original names): a value moved onto another's register, a dropped key, a
 * register past the file, a name of no register, the answer wrapped in prose. Which category each
 * gets is verify's business: the test only asks that the service says the same. */
static char *mutant(const char *truth, int kind, unsigned k) {
  cJSON *t = cJSON_Parse(truth);
  int n = cJSON_GetArraySize(t);
  char *s = NULL;
  if (n >= 2) {
    cJSON *a = cJSON_GetArrayItem(t, (int)(k % (unsigned)n)), *b = cJSON_GetArrayItem(t, (int)((k + 1) % (unsigned)n));
    if (kind == 0) cJSON_SetValuestring(a, b->valuestring);
    else if (kind == 1) cJSON_DeleteItemFromObject(t, a->string);
    else if (kind == 2) cJSON_SetValuestring(a, a->valuestring[0] == 'R' || a->valuestring[0] == 'P' ? "R9000" : "v9000");
    else if (kind == 3) cJSON_SetValuestring(a, "q7");
  }
  char *j = cJSON_PrintUnformatted(t);
  if (kind == 4) {
    size_t l = strlen(j) + 64;
    s = rs_xmalloc(l);
    snprintf(s, l, "Here is the allocation:\n```json\n%s\n```\n", j);
  } else {
    s = rs_xstrndup(j, strlen(j));
  }
  cJSON_free(j);
  cJSON_Delete(t);
  return s;
}

static const char *const garbage[] = {"", "hello", "{", "[1,2,3]", "{\"v0\": 7}", "{\"v0\": \"v0\", \"v0\": \"v1\"}",
                                      "null", "{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{"};

static pid_t start_server(const char *filter, unsigned *port) {
  int p[2];
  if (pipe(p)) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    close(p[0]);
    execl(rs_check_cli, rs_check_cli, "reward", "serve", "--corpus", corpus, "--filter", filter, "--port", "0",
          "--threads", "2", "--conns", "4", "--allow-shutdown", "--max-body", "8000000", "--read-timeout-ms", "1500",
          (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  FILE *f = fdopen(p[0], "r");
  char line[512] = "";
  *port = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "reward: serving http://127.0.0.1:%u", port) == 1) break;
  fclose(f);
  return pid;
}

typedef struct {
  unsigned port;
  const char *body;
  char *resp;
  long code;
} par;

static void *par_post(void *arg) {
  par *x = arg;
  x->code = post(x->port, "/reward", x->body, &x->resp);
  return NULL;
}

static const char *item_verdict(const cJSON *o) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "verdict");
  return cJSON_IsString(v) ? v->valuestring : "(none)";
}

/* Two answers say the same, the checker's time aside. */
static bool same_answers(const char *a, const char *b) {
  cJSON *x = cJSON_Parse(a), *y = cJSON_Parse(b);
  cJSON *rx = cJSON_GetObjectItemCaseSensitive(x, "results"), *ry = cJSON_GetObjectItemCaseSensitive(y, "results"), *o;
  cJSON_ArrayForEach(o, rx) cJSON_DeleteItemFromObject(o, "verify_ms");
  cJSON_ArrayForEach(o, ry) cJSON_DeleteItemFromObject(o, "verify_ms");
  bool same = x && y && cJSON_Compare(x, y, true);
  cJSON_Delete(x);
  cJSON_Delete(y);
  return same;
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  bool quick = getenv("RS_TEST_QUICK") && !strcmp(getenv("RS_TEST_QUICK"), "1");
  const char *filter = quick ? "sample=16" : "sample=6";
  unsigned want_inst = quick ? 8 : 24;

  /* the batch: instances the service loads (the same filter) that have a truth */
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(corpus, &e);
  CHECK(c != NULL);
  if (!c) return rs_check_done("test_reward");
  item *it = NULL;
  uint32_t n = 0, cap = 0, ninst = 0;
  char **norms = NULL;
  uint32_t nn = 0, ncap = 0;
  for (uint64_t i = 0; i < rs_corpus_count(c) && ninst < want_inst; i++) {
    rs_instance row;
    if (rs_corpus_get(c, i, &row, 1, &e)) break;
    if (rs_filter_match(filter, &row) && row.truth && row.norm) {
      char *norm = rs_xstrndup(row.norm, strlen(row.norm));
      RS_PUSH(norms, nn, ncap, norm);
      for (int k = 0; k < 7; k++) {
        item x = {{0}, NULL, false, norm, ""};
        snprintf(x.id, sizeof x.id, "%s", row.id);
        if (k == 0) x.completion = rs_xstrndup(row.truth, strlen(row.truth));
        else if (k == 1) x.completion = rs_xstrndup(row.truth, strlen(row.truth)), x.by_prompt = true;
        else if (k < 6) x.completion = mutant(row.truth, (int)(k - 2 + ninst) % 5, ninst * 7 + (unsigned)k);
        else x.completion = rs_xstrndup(garbage[ninst % 8], strlen(garbage[ninst % 8]));
        RS_PUSH(it, n, cap, x);
      }
      CHECK(verify_inproc(it + n - 7, 7));
      ninst++;
    }
    rs_instance_clear(&row);
  }
  rs_corpus_close(c, NULL);
  CHECKF(ninst == want_inst, "%u instances with a truth under %s", ninst, filter);

  unsigned port;
  pid_t pid = start_server(filter, &port);
  CHECKF(pid > 0 && port > 0, "server started (port %u)", port);
  if (!port) {
    if (pid > 0) kill(pid, SIGKILL), waitpid(pid, NULL, 0);
    return rs_check_done("test_reward");
  }

  /* 1. the batch, as a trainer's reward step posts it */
  cJSON *req = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(req, "items");
  for (uint32_t i = 0; i < n; i++) {
    cJSON *o = cJSON_CreateObject();
    if (it[i].by_prompt) cJSON_AddStringToObject(o, "prompt", it[i].norm);
    else cJSON_AddStringToObject(o, "instance", it[i].id);
    cJSON_AddStringToObject(o, "completion", it[i].completion);
    cJSON_AddItemToArray(arr, o);
  }
  char *body = cJSON_PrintUnformatted(req);
  char *resp;
  long code = post(port, "/reward", body, &resp);
  CHECKF(code == 200, "POST /reward: %ld %.200s", code, resp);
  cJSON *ans = cJSON_Parse(resp);
  const cJSON *res = cJSON_GetObjectItemCaseSensitive(ans, "results");
  CHECK(cJSON_GetArraySize(res) == (int)n);
  uint32_t same = 0, pass = 0, cats[4] = {0};
  for (uint32_t i = 0; i < n && i < (uint32_t)cJSON_GetArraySize(res); i++) {
    const cJSON *o = cJSON_GetArrayItem(res, (int)i);
    const char *v = item_verdict(o);
    const cJSON *inst = cJSON_GetObjectItemCaseSensitive(o, "instance");
    CHECKF(!strcmp(v, it[i].expect), "item %u (%s%s): service says %s, verify says %s", i, it[i].id,
           it[i].by_prompt ? ", by prompt" : "", v, it[i].expect);
    CHECKF(cJSON_IsString(inst) && !strcmp(inst->valuestring, it[i].id), "item %u resolved to %s", i,
           cJSON_IsString(inst) ? inst->valuestring : "?");
    same += !strcmp(v, it[i].expect);
    pass += !strcmp(v, "pass");
    for (int k = 0; k < 4; k++) cats[k] += !strcmp(v, (const char *[]){"pass", "syntax", "dataflow", "hardware"}[k]);
    double rw = cJSON_GetObjectItemCaseSensitive(o, "reward")->valuedouble;
    CHECK(rw == (!strcmp(v, "pass") ? 1.0 : 0.0)); /* default shaping: pass 1, else 0 */
    if (!strcmp(v, "pass")) CHECK(cJSON_GetObjectItemCaseSensitive(o, "registers") != NULL);
    if (strcmp(v, "pass")) CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "diagnostics")) > 0);
  }
  CHECKF(cats[0] && cats[1] && cats[2] && cats[3], "every category seen: pass %u syntax %u dataflow %u hardware %u",
         cats[0], cats[1], cats[2], cats[3]);
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ans, "meta"), "shaping");
  CHECK(cJSON_GetObjectItemCaseSensitive(sh, "version") && cJSON_GetObjectItemCaseSensitive(sh, "version")->valueint == 1);
  fprintf(stderr, "test_reward: %u items over %u instances, %u verdicts equal to verify's (%u pass)\n", n, ninst, same, pass);

  /* the binary itself on every 13th item: `regsweep verify` prints "native: VERDICT" */
  uint32_t bin_checked = 0;
  for (uint32_t i = 0; i < n; i += 13) {
    char path[] = "/tmp/rs_reward_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) continue;
    if (write(fd, it[i].completion, strlen(it[i].completion)) < 0) CHECK(0);
    close(fd);
    char cmd[1024], out[8192], want[64];
    snprintf(cmd, sizeof cmd, "'%s' verify --corpus %s --instance '%s' %s", rs_check_cli, corpus, it[i].id, path);
    int st = rs_check_run(cmd, out, sizeof out);
    unlink(path);
    snprintf(want, sizeof want, "native: %s", it[i].expect);
    CHECKF(strstr(out, want) && (st == 0) == !strcmp(it[i].expect, "pass"), "verify binary on item %u: %.300s", i, out);
    bin_checked++;
  }
  CHECK(bin_checked >= 5);

  /* 2. OpenRLHF's shape: query = prompt + response, labels = ids (half of them empty: the prompt is looked up) */
  cJSON *oq = cJSON_CreateObject(), *q = cJSON_AddArrayToObject(oq, "query"), *pr = cJSON_AddArrayToObject(oq, "prompts"),
        *lb = cJSON_AddArrayToObject(oq, "labels");
  for (uint32_t i = 0; i < n; i++) {
    rs_sbuf s = {0};
    rs_sbuf_puts(&s, it[i].norm);
    rs_sbuf_puts(&s, it[i].completion);
    cJSON_AddItemToArray(q, cJSON_CreateString(s.s));
    cJSON_AddItemToArray(pr, cJSON_CreateString(it[i].norm));
    cJSON_AddItemToArray(lb, cJSON_CreateString(i % 2 ? it[i].id : ""));
    free(s.s);
  }
  char *ob = cJSON_PrintUnformatted(oq), *oresp;
  code = post(port, "/get_reward", ob, &oresp);
  CHECKF(code == 200, "POST /get_reward: %ld", code);
  cJSON *oa = cJSON_Parse(oresp);
  const cJSON *rw = cJSON_GetObjectItemCaseSensitive(oa, "rewards"), *sc = cJSON_GetObjectItemCaseSensitive(oa, "scores");
  CHECK(cJSON_GetArraySize(rw) == (int)n && cJSON_GetArraySize(sc) == (int)n);
  for (uint32_t i = 0; i < n && i < (uint32_t)cJSON_GetArraySize(rw); i++)
    CHECKF(cJSON_GetArrayItem(rw, (int)i)->valuedouble == (!strcmp(it[i].expect, "pass") ? 1.0 : 0.0),
           "OpenRLHF item %u: reward %g, verify says %s", i, cJSON_GetArrayItem(rw, (int)i)->valuedouble, it[i].expect);
  cJSON_Delete(oa);
  free(oresp);
  cJSON_free(ob);
  cJSON_Delete(oq);

  /* 3. four trainers at once get the same answers */
  par ps[4];
  pthread_t th[4];
  for (int k = 0; k < 4; k++) ps[k] = (par){port, body, NULL, 0}, pthread_create(&th[k], NULL, par_post, &ps[k]);
  for (int k = 0; k < 4; k++) {
    pthread_join(th[k], NULL);
    CHECK(ps[k].code == 200);
    cJSON *a = cJSON_Parse(ps[k].resp);
    const cJSON *r2 = cJSON_GetObjectItemCaseSensitive(a, "results");
    for (uint32_t i = 0; i < n && i < (uint32_t)cJSON_GetArraySize(r2); i++)
      CHECK(!strcmp(item_verdict(cJSON_GetArrayItem(r2, (int)i)), it[i].expect));
    cJSON_Delete(a);
    free(ps[k].resp);
  }

  /* 4. bad input: per item ... */
  char *r4;
  code = post(port, "/reward",
              "{\"items\":[{\"instance\":\"no/such/instance\",\"completion\":\"{}\"},{\"prompt\":\"fn nothing\\nbb0:\","
              "\"completion\":\"{}\"},{\"instance\":\"x\"},7,{\"completion\":\"{}\"}]}",
              &r4);
  CHECK(code == 200);
  cJSON *a4 = cJSON_Parse(r4);
  const cJSON *res4 = cJSON_GetObjectItemCaseSensitive(a4, "results");
  CHECK(cJSON_GetArraySize(res4) == 5);
  for (int i = 0; i < cJSON_GetArraySize(res4); i++) {
    const cJSON *er = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(res4, i), "error");
    CHECKF(cJSON_IsString(er), "bad item %d has an error", i);
  }
  CHECK(strstr(r4, "unknown instance 'no/such/instance'") && strstr(r4, "unknown prompt"));
  cJSON_Delete(a4);
  free(r4);
  /* ... and per request */
  code = post(port, "/reward", "{\"items\": [ {\"instance\": ", &r4);
  CHECKF(code == 400 && strstr(r4, "malformed JSON"), "malformed JSON: %ld %s", code, r4);
  free(r4);
  code = post(port, "/reward", "{\"nothing\": 1}", &r4);
  CHECK(code == 400);
  free(r4);
  code = post(port, "/nowhere", "{}", &r4);
  CHECK(code == 404);
  free(r4);
  char *rr = raw(port, "POST /reward HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n{", 0);
  CHECKF(strstr(rr, "HTTP/1.1 413") != NULL, "oversized body: %.200s", rr);
  free(rr);
  rr = raw(port, "POST /reward HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n", 0);
  CHECKF(strstr(rr, "HTTP/1.1 411") != NULL, "chunked: %.200s", rr);
  free(rr);
  /* a slow client (half a body, then nothing past --read-timeout-ms 1500) while others are served */
  pid_t sp = fork();
  if (sp == 0) { /* the slow client in a child: its answer must be 408 */
    char *x = raw(port, "POST /reward HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"items\"", 2500);
    _exit(strstr(x, "HTTP/1.1 408") ? 0 : 1);
  }
  nanosleep(&(struct timespec){0, 300000000L}, NULL);
  code = post(port, "/health", NULL, &r4);
  CHECKF(code == 200 && strstr(r4, "\"ok\":true"), "health while a slow client waits: %ld", code);
  free(r4);
  int sst = 0;
  waitpid(sp, &sst, 0);
  CHECKF(WIFEXITED(sst) && WEXITSTATUS(sst) == 0, "slow client got 408");

  /* still up, same answers */
  code = post(port, "/reward", body, &r4);
  CHECK(code == 200 && same_answers(r4, resp));
  free(r4);
  code = post(port, "/health", NULL, &r4);
  CHECK(code == 200);
  free(r4);

  /* 5. offline, with partial credit and the quality bonus: same verdicts, rewards by the rule */
  char in_path[] = "/tmp/rs_reward_in_XXXXXX";
  int fd = mkstemp(in_path);
  FILE *f = fdopen(fd, "w");
  for (uint32_t i = 0; i < n; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "instance", it[i].id);
    cJSON_AddStringToObject(o, "completion", it[i].completion);
    char *s = cJSON_PrintUnformatted(o);
    fprintf(f, "%s\n", s);
    cJSON_free(s);
    cJSON_Delete(o);
  }
  fprintf(f, "this line is not JSON\n");
  fclose(f);
  char out_path[64], cmd[1024], log[4096];
  snprintf(out_path, sizeof out_path, "%s.out", in_path);
  snprintf(cmd, sizeof cmd, "'%s' reward --corpus %s --filter %s --partial 0.5 --quality 0.25 %s -o %s", rs_check_cli, corpus,
           filter, in_path, out_path);
  CHECKF(rs_check_run(cmd, log, sizeof log) == 0, "offline: %s", log);
  size_t len;
  char *outt = rs_read_file(out_path, &len, &e);
  CHECK(outt != NULL);
  uint32_t line = 0, partial_seen = 0;
  for (char *p = outt, *nl; p && *p; p = nl ? nl + 1 : NULL, line++) {
    nl = strchr(p, '\n');
    if (nl) *nl = 0;
    cJSON *o = cJSON_Parse(p);
    if (line < n) {
      const char *v = item_verdict(o);
      CHECKF(!strcmp(v, it[line].expect), "offline line %u: %s vs verify %s", line + 1, v, it[line].expect);
      double r = cJSON_GetObjectItemCaseSensitive(o, "reward")->valuedouble;
      const cJSON *share = cJSON_GetObjectItemCaseSensitive(o, "share_met"),
                  *qual = cJSON_GetObjectItemCaseSensitive(o, "quality");
      if (!strcmp(v, "pass")) CHECK(qual && fabs(r - (1 + 0.25 * qual->valuedouble)) < 1e-9); /* cJSON prints 15 digits */
      else if (!strcmp(v, "dataflow") || !strcmp(v, "hardware")) {
        CHECKF(share && fabs(r - 0.5 * share->valuedouble) < 1e-9 && r >= 0 && r <= 0.5, "line %u: reward %.17g, share %.17g", line + 1, r, share ? share->valuedouble : -1);
        partial_seen += r > 0;
      } else CHECK(r == 0);
      const cJSON *m = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "meta"), "shaping");
      CHECK(cJSON_GetObjectItemCaseSensitive(m, "partial")->valuedouble == 0.5);
    } else {
      CHECK(cJSON_GetObjectItemCaseSensitive(o, "error") != NULL); /* the line that is not JSON */
    }
    cJSON_Delete(o);
  }
  CHECK(line == n + 1 && partial_seen > 0);
  free(outt);
  /* Z3 beside the native verifier (--verifier both) on the first instance's seven items: the same
   * verdicts, no disagreement */
  char z3_in[96];
  snprintf(z3_in, sizeof z3_in, "%s.z3", in_path);
  snprintf(cmd, sizeof cmd, "head -n 7 %s > %s && '%s' reward --corpus %s --filter %s --verifier both %s -o %s", in_path,
           z3_in, rs_check_cli, corpus, filter, z3_in, out_path);
  CHECKF(rs_check_run(cmd, log, sizeof log) == 0, "offline z3: %s", log);
  outt = rs_read_file(out_path, &len, &e);
  line = 0;
  for (char *p = outt, *nl; p && *p; p = nl ? nl + 1 : NULL, line++) {
    nl = strchr(p, '\n');
    if (nl) *nl = 0;
    cJSON *o = cJSON_Parse(p);
    CHECKF(line < n && !strcmp(item_verdict(o), it[line].expect), "z3 line %u: %s", line + 1, item_verdict(o));
    CHECK(!cJSON_GetObjectItemCaseSensitive(o, "disagreement"));
    cJSON_Delete(o);
  }
  CHECK(line == 7);
  free(outt);
  unlink(z3_in);
  unlink(in_path);
  unlink(out_path);

  /* 6. stop it */
  code = post(port, "/shutdown", "{}", &r4);
  CHECK(code == 200);
  free(r4);
  int st = 0;
  waitpid(pid, &st, 0);
  CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "server exit status %d", st);

  free(resp);
  cJSON_Delete(ans);
  cJSON_free(body);
  cJSON_Delete(req);
  for (uint32_t i = 0; i < n; i++) free(it[i].completion);
  for (uint32_t i = 0; i < nn; i++) free(norms[i]);
  free(norms);
  free(it);
  curl_global_cleanup();
  return rs_check_done("test_reward");
}
