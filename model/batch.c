/* batch.c - the batch: back end: offline batch inference through files in the OpenAI Batch format
 * (what `vllm run-batch` reads and writes), for clusters where a sweep cannot hold a server open.
 *
 *   batch:DIR?model=M&<the request-shaping parameters of openai:> (api, temperature, top_p, n, ...)
 *
 * Each attempt's request is the body an openai: model would send (model/openai_body.c: the same
 * prompt, sampling, schema and seed, so the same answers), keyed by a custom_id made of the
 * instance, the attempts it carries and a hash of the body. An attempt whose answer is in a result
 * file under DIR (any round-N/\*.results.jsonl, partial ones too: a line cut short is skipped) is
 * parsed as an openai: answer and verified like one; one without an answer is appended to
 * DIR/round-R/SHARD.requests.jsonl (a line {"custom_id", "method", "url", "body"}) and recorded as
 * a deferred infra attempt: its instance stops there, and `sweep --ingest DIR` (a resume) redoes
 * the shard once the results are there. R is one more than the newest round with results, so each
 * ingest asks the next round for what is still missing (--until-pass: the next attempt, with the
 * previous one's feedback). No network: its identity is openai:'s (identity.c), so an online and an
 * offline run of the same spec get the same seeds. docs/models.md, docs/slurm.md. */
#include "model/openai_int.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
  char *id;   /* custom_id */
  long status; /* the HTTP status the runner got; 0: an error object instead of a response */
  char *body; /* the response body (printed JSON) or the error's message */
} answer_t;

typedef struct {
  rs_oa_body b;
  char *dir;
  unsigned round;       /* where new requests go */
  answer_t *ans;        /* open addressing by custom_id, cap a power of 2 */
  uint32_t nans, cap;
  uint32_t files, lines_skipped;
  char **started;       /* shards whose request file this process has truncated */
  uint32_t nstarted;
} batch_state;

static uint64_t id_hash(const char *s) { return rs_hash_bytes(s, strlen(s), 0xba7c); }

static answer_t *slot(batch_state *s, const char *id) {
  uint32_t mask = s->cap - 1, j = (uint32_t)id_hash(id) & mask;
  while (s->ans[j].id && strcmp(s->ans[j].id, id)) j = (j + 1) & mask;
  return &s->ans[j];
}

static void put(batch_state *s, const char *id, long status, const char *body) {
  if (2 * (s->nans + 1) > s->cap) {
    answer_t *old = s->ans;
    uint32_t oc = s->cap;
    s->cap = oc ? 2 * oc : 1024;
    s->ans = rs_xcalloc(s->cap, sizeof *s->ans);
    for (uint32_t i = 0; i < oc; i++)
      if (old[i].id) *slot(s, old[i].id) = old[i];
    free(old);
  }
  answer_t *a = slot(s, id);
  if (a->id) { /* answered again (a rerun round): a success wins over an error, else the later */
    if (a->status == 200 && status != 200) return;
    free(a->body);
  } else {
    a->id = rs_xstrndup(id, strlen(id));
    s->nans++;
  }
  a->status = status;
  a->body = rs_xstrndup(body, strlen(body));
}

/* One result line: {"custom_id", "response": {"status_code", "body"}, "error"}. */
static int take_line(batch_state *s, const char *line) {
  cJSON *j = cJSON_Parse(line);
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "custom_id");
  const cJSON *resp = cJSON_GetObjectItemCaseSensitive(j, "response");
  const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
  int rc = -1;
  if (cJSON_IsString(id)) {
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(resp, "status_code");
    const cJSON *body = cJSON_GetObjectItemCaseSensitive(resp, "body");
    if (cJSON_IsNumber(code) && body) {
      char *p = cJSON_PrintUnformatted(body);
      if (p && code->valuedouble != 200) { /* an error response: its message */
        char msg[240];
        rs_oa_server_message(p, strlen(p), msg, sizeof msg);
        char full[260];
        snprintf(full, sizeof full, "HTTP %.0f: %s", code->valuedouble, msg);
        put(s, id->valuestring, (long)code->valuedouble, full);
      } else if (p) {
        put(s, id->valuestring, 200, p);
      }
      cJSON_free(p);
      rc = p ? 0 : -1;
    } else if (cJSON_IsObject(err)) {
      const cJSON *m = cJSON_GetObjectItemCaseSensitive(err, "message");
      put(s, id->valuestring, 0, cJSON_IsString(m) ? m->valuestring : "an error without a message");
      rc = 0;
    }
  }
  cJSON_Delete(j);
  return rc;
}

static void load_file(batch_state *s, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return;
  s->files++;
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, f)) > 0) {
    if (line[n - 1] != '\n') { /* the runner was stopped while writing it: not an answer */
      s->lines_skipped++;
      break;
    }
    if (n > 1 && take_line(s, line)) s->lines_skipped++;
  }
  free(line);
  fclose(f);
}

static bool ends_with(const char *s, const char *t) {
  size_t a = strlen(s), b = strlen(t);
  return a >= b && !strcmp(s + a - b, t);
}

/* Every round-N/ *.results.jsonl; the round for new requests: one past the newest with results. */
static void load_results(batch_state *s) {
  DIR *d = opendir(s->dir);
  struct dirent *de;
  unsigned newest = 0;
  while (d && (de = readdir(d))) {
    unsigned r;
    char tail;
    if (sscanf(de->d_name, "round-%u%c", &r, &tail) != 1) continue;
    char rd[1200];
    snprintf(rd, sizeof rd, "%s/%s", s->dir, de->d_name);
    DIR *d2 = opendir(rd);
    struct dirent *f;
    uint32_t before = s->nans;
    while (d2 && (f = readdir(d2))) {
      if (!ends_with(f->d_name, ".results.jsonl")) continue;
      char p[2400];
      snprintf(p, sizeof p, "%s/%s", rd, f->d_name);
      load_file(s, p);
    }
    if (d2) closedir(d2);
    if (s->nans > before && r > newest) newest = r;
  }
  if (d) closedir(d);
  s->round = newest + 1;
}

static void state_free(batch_state *s) {
  if (!s) return;
  for (uint32_t i = 0; i < s->cap; i++) {
    free(s->ans[i].id);
    free(s->ans[i].body);
  }
  free(s->ans);
  for (uint32_t i = 0; i < s->nstarted; i++) free(s->started[i]);
  free(s->started);
  free(s->dir);
  rs_oa_body_free(&s->b);
  free(s);
}

static int batch_open(rs_model *m, rs_err *e) {
  for (const char *c = m->query; c && *c;) { /* only what shapes a request: there is no transport */
    const char *amp = strchr(c, '&');
    size_t l = amp ? (size_t)(amp - c) : strlen(c);
    const char *eq = memchr(c, '=', l);
    size_t kl = eq ? (size_t)(eq - c) : l;
    if (l && !rs_oa_body_knows(c, kl))
      return rs_errf(e, NULL, 0, "batch: unknown parameter '%.*s' (the request-shaping parameters of openai: only: "
                     "model, api, temperature, top_p, top_k, min_p, the penalties, sampling, n, max_tokens, stop, "
                     "schema, schema_strict, template, feedback)", (int)(kl < 64 ? kl : 64), c);
    c = amp ? amp + 1 : NULL;
  }
  if (!m->arg[0]) return rs_errf(e, NULL, 0, "batch: a directory is required (batch:DIR?model=M)");
  batch_state *s = rs_xcalloc(1, sizeof *s);
  if (rs_oa_body_configure(m, &s->b, e)) {
    state_free(s);
    return -1;
  }
  s->b.probe_state = RS_OA_PROBE_OFF;
  snprintf(s->b.probe_note, sizeof s->b.probe_note, "not run (offline batch)");
  s->dir = rs_xstrndup(m->arg, strlen(m->arg));
  if (mkdir(s->dir, 0755) && errno != EEXIST) {
    rs_errf(e, NULL, 0, "batch: cannot create %s: %s", s->dir, strerror(errno));
    state_free(s);
    return -1;
  }
  load_results(s);
  m->state = s;
  return 0;
}

static void batch_close(rs_model *m) {
  state_free(m->state);
  m->state = NULL;
}

/* Append one request line to the shard's file of this round (truncated at this process's first
 * write to it: a shard redone after a crash writes its file again, never twice). */
static int write_request(batch_state *s, const char *shard, const char *id, const char *body, char *path, size_t pn) {
  char rd[1200];
  snprintf(rd, sizeof rd, "%s/round-%u", s->dir, s->round);
  if (mkdir(rd, 0755) && errno != EEXIST) return -1;
  const char *name = shard && shard[0] ? shard : "requests";
  snprintf(path, pn, "%s/%s.requests.jsonl", rd, name);
  bool first = true;
  for (uint32_t i = 0; i < s->nstarted && first; i++) first = strcmp(s->started[i], name) != 0;
  FILE *f = fopen(path, first ? "w" : "a");
  if (!f) return -1;
  if (first) {
    s->started = rs_xrealloc(s->started, (s->nstarted + 1) * sizeof *s->started);
    s->started[s->nstarted++] = rs_xstrndup(name, strlen(name));
  }
  cJSON *cid = cJSON_CreateString(id);
  char *ids = cJSON_PrintUnformatted(cid);
  cJSON_Delete(cid);
  int bad = fprintf(f, "{\"custom_id\":%s,\"method\":\"POST\",\"url\":\"%s\",\"body\":%s}\n", ids,
                    s->b.chat ? "/v1/chat/completions" : "/v1/completions", body) < 0;
  cJSON_free(ids);
  bad |= fclose(f) != 0;
  return bad ? -1 : 0;
}

static void deferred(rs_gen *g, const char *why) {
  g->infra = g->transient = g->deferred = true;
  g->finish = RS_FINISH_ERROR;
  snprintf(g->error, sizeof g->error, "%.250s", why);
}

static int batch_generate(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                          rs_gen *out, rs_err *e) {
  batch_state *s = m->state;
  if (!in || !in->p) return rs_errf(e, NULL, 0, "batch: no problem to prompt with");
  cJSON *req = rs_oa_build_request(&s->b, in);
  int rc = 0;
  for (uint32_t k = 0; k < n && !rc;) {
    uint32_t cnt = rs_oa_group(&s->b, first + k, n - k);
    rs_gen *g = &out[k];
    char *body = rs_oa_attempt_body(req, &s->b, first + k, seeds ? seeds[k] : first + k, cnt);
    if (!body) {
      rc = rs_errf(e, NULL, 0, "batch: could not print the request of instance %s", in->id);
      break;
    }
    char id[400];
    snprintf(id, sizeof id, "%.300s#%u+%u#%016llx", in->id ? in->id : "", first + k, cnt,
             (unsigned long long)rs_hash_bytes(body, strlen(body), 0));
    const answer_t *a = s->cap ? slot(s, id) : NULL;
    char why[600], path[2600];
    if (a && a->id && a->status == 200) {
      if (rs_oa_parse_reply(&s->b, in, a->body, strlen(a->body), g, cnt, why, sizeof why))
        for (uint32_t i = 0; i < cnt; i++) { /* a malformed answer is the runner's: infra, as online */
          g[i].infra = true;
          g[i].finish = RS_FINISH_ERROR;
          snprintf(g[i].error, sizeof g[i].error, "batch: %.240s", why);
        }
    } else if (a && a->id && rs_oa_deterministic_error(a->body)) { /* the instance's size, as online */
      uint32_t ptok = 0;
      rs_oa_context_refused(&s->b, in, a->body, &ptok, why, sizeof why);
      for (uint32_t i = 0; i < cnt; i++) {
        g[i].infra = g[i].context = true;
        g[i].finish = RS_FINISH_ERROR;
        g[i].prompt_tokens = ptok;
        snprintf(g[i].error, sizeof g[i].error, "%.250s", why);
      }
    } else if (write_request(s, in->shard, id, body, path, sizeof path)) {
      rc = rs_errf(e, NULL, 0, "batch: cannot write %s: %s", path, strerror(errno));
    } else {
      char prev[120] = "";
      if (a && a->id) snprintf(prev, sizeof prev, " (round before: %.80s)", a->body); /* a failed request, asked again */
      snprintf(why, sizeof why, "batch: pending in round %u: %.200s%s", s->round, path, prev);
      for (uint32_t i = 0; i < cnt; i++) deferred(&g[i], why);
    }
    free(body);
    k += cnt;
  }
  cJSON_Delete(req);
  return rc;
}

void rs_batch_describe(const rs_model *m, char *out, size_t n) {
  const batch_state *s = m->state;
  snprintf(out, n, "offline batch in %s: %u answers read from %u result files (%u lines cut short or unreadable); "
           "new requests go to round-%u", s->dir, s->nans, s->files, s->lines_skipped, s->round);
}

const rs_model_ops rs_model_batch = {
    .scheme = "batch",
    .open = batch_open,
    .generate = batch_generate,
    .close = batch_close,
};
