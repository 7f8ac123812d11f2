/* openai_context.c - the server's context as a fact of each instance, not of the server: an
 * instance whose prompt plus max_tokens does not fit is recorded as infra "context: ..." with its
 * numbers and the sweep goes on. Where the server states its context (openai_probe.c: llama.cpp
 * /props n_ctx, vLLM /v1/models max_model_len, SGLang's server info context_length) and counts
 * tokens with its own tokenizer (llama.cpp POST /tokenize, after POST /apply-template for chat;
 * vLLM POST /tokenize with the messages), an instance that does not fit is never sent. Where it
 * does not, the first refusal of an instance for its size marks the instance (its later attempts
 * are not sent) and only that instance. */
#include "model/openai_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static uint64_t inst_key(const rs_gen_input *in) {
  return in && in->id ? rs_hash_bytes(in->id, strlen(in->id), 0xc07e) | 1 : 0;
}

static struct rs_oa_ctxmark *find_mark(const rs_oa_body *b, uint64_t key) {
  if (!key || !b->marks_cap) return NULL;
  uint32_t mask = b->marks_cap - 1;
  for (uint32_t j = (uint32_t)key & mask;; j = (j + 1) & mask) {
    if (b->marks[j].key == key) return &b->marks[j];
    if (!b->marks[j].key) return NULL;
  }
}

static void mark(rs_oa_body *b, uint64_t key, uint32_t prompt, uint32_t ctx, bool fits) {
  if (!key) return;
  struct rs_oa_ctxmark *m = find_mark(b, key);
  if (!m) {
    if (2 * (b->nmarks + 1) > b->marks_cap) { /* grow: half full at most */
      struct rs_oa_ctxmark *old = b->marks;
      uint32_t oc = b->marks_cap;
      b->marks_cap = oc ? 2 * oc : 256;
      b->marks = rs_xcalloc(b->marks_cap, sizeof *b->marks);
      for (uint32_t i = 0; i < oc; i++)
        if (old[i].key) {
          uint32_t j = (uint32_t)old[i].key & (b->marks_cap - 1);
          while (b->marks[j].key) j = (j + 1) & (b->marks_cap - 1);
          b->marks[j] = old[i];
        }
      free(old);
    }
    uint32_t j = (uint32_t)key & (b->marks_cap - 1);
    while (b->marks[j].key) j = (j + 1) & (b->marks_cap - 1);
    m = &b->marks[j];
    b->nmarks++;
  }
  *m = (struct rs_oa_ctxmark){key, prompt, ctx, fits};
}

/* "context: prompt P tokens + max_tokens M = N > the server's context C tokens (how)": the
 * report reads N and C back (report/infra.c), the prefix groups them as one reason. */
static void describe(const rs_oa_body *b, uint32_t prompt, uint32_t ctx, const char *how, char *why, size_t wn) {
  if (prompt && ctx)
    snprintf(why, wn, "context: prompt %u tokens + max_tokens %u = %u > the server's context %u tokens (%.120s)", prompt,
             b->max_tokens, prompt + b->max_tokens, ctx, how);
  else if (prompt)
    snprintf(why, wn, "context: prompt %u tokens + max_tokens %u = %u does not fit the server's context (%.120s)", prompt,
             b->max_tokens, prompt + b->max_tokens, how);
  else
    snprintf(why, wn, "context: the prompt does not fit the server's context (%.150s)", how);
}

/* The first number after pattern p in msg (case-insensitive), 0 if none. */
static uint32_t number_after(const char *msg, const char *p) {
  size_t pl = strlen(p);
  for (const char *h = msg; *h; h++) {
    if (strncasecmp(h, p, pl)) continue;
    const char *q = h + pl;
    while (*q == ' ' || *q == '(') q++;
    if (*q < '0' || *q > '9') continue;
    unsigned long v = strtoul(q, NULL, 10);
    return v < 4000000000ul ? (uint32_t)v : 0;
  }
  return 0;
}

void rs_oa_context_numbers(const char *msg, uint32_t *prompt, uint32_t *ctx) {
  *prompt = *ctx = 0;
  if (!msg) return;
  /* llama.cpp: "request (N tokens) exceeds the available context size (C tokens), try increasing it"
   * vLLM: "This model's maximum context length is C tokens. However, you requested T tokens (P in
   *   the messages, M in the completion)", newer: "... and your request has P input tokens"
   * SGLang: "The input (P tokens) is longer than the model's context length (C tokens)." */
  static const char *const pp[] = {"request (", "input (", "your request has ", "However, your messages resulted in "};
  for (size_t i = 0; i < sizeof pp / sizeof *pp && !*prompt; i++) *prompt = number_after(msg, pp[i]);
  if (!*prompt) { /* vLLM: "(P in the messages" */
    const char *m = strstr(msg, " in the messages");
    const char *s = m;
    while (s && s > msg && s[-1] >= '0' && s[-1] <= '9') s--;
    if (s && s < m) *prompt = (uint32_t)strtoul(s, NULL, 10);
  }
  static const char *const cp[] = {"available context size", "maximum context length is", "context length"};
  for (size_t i = 0; i < sizeof cp / sizeof *cp && !*ctx; i++) *ctx = number_after(msg, cp[i]);
}

/* POST body (JSON) to the server's root + path: the status, *out the parsed answer of a 200. */
static long post_json(const rs_oa_link *l, const char *path, cJSON *body, cJSON **out) {
  char url[2200], why[200], *resp = NULL;
  rs_oa_root_url(l, path, url, sizeof url);
  char *s = cJSON_PrintUnformatted(body);
  double to = l->timeout_s < 30 ? l->timeout_s : 30;
  long code = s ? rs_oa_http(l, url, s, to, &resp, why, sizeof why) : -1;
  cJSON_free(s);
  *out = code == 200 && resp ? cJSON_Parse(resp) : NULL;
  free(resp);
  return code;
}

/* Prompt tokens as the server's tokenizer counts them: 0 with *n, -1 when it did not say (a
 * server without the endpoint stops being asked). */
static int count_tokens(rs_oa_body *b, const rs_oa_link *l, const cJSON *req, uint32_t *n) {
  const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(req, "messages");
  const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(req, "prompt");
  cJSON *q = cJSON_CreateObject(), *r = NULL;
  long code = -1;
  if (b->tokenizer == RS_OA_TOK_VLLM) {
    cJSON_AddStringToObject(q, "model", b->model);
    if (cJSON_IsArray(msgs)) {
      cJSON_AddItemToObject(q, "messages", cJSON_Duplicate(msgs, 1));
      cJSON_AddTrueToObject(q, "add_generation_prompt");
    } else {
      cJSON_AddStringToObject(q, "prompt", cJSON_IsString(prompt) ? prompt->valuestring : "");
    }
    code = post_json(l, "/tokenize", q, &r);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(r, "count");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "tokens");
    double v = cJSON_IsNumber(c) ? c->valuedouble : cJSON_IsArray(t) ? cJSON_GetArraySize(t) : -1;
    cJSON_Delete(q);
    cJSON_Delete(r);
    if (v >= 0 && v < 4e9) return *n = (uint32_t)v, 0;
  } else { /* llama.cpp: the chat template applied by the server, then its tokenizer */
    char *text = NULL;
    if (cJSON_IsArray(msgs)) {
      cJSON_AddItemToObject(q, "messages", cJSON_Duplicate(msgs, 1));
      code = post_json(l, "/apply-template", q, &r);
      const cJSON *p = cJSON_GetObjectItemCaseSensitive(r, "prompt");
      if (cJSON_IsString(p)) text = rs_xstrndup(p->valuestring, strlen(p->valuestring));
      cJSON_Delete(r);
      r = NULL;
      if (!text) { /* an older server without /apply-template: the messages alone (a lower bound) */
        rs_sbuf s = {0};
        const cJSON *m;
        cJSON_ArrayForEach(m, msgs) {
          const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
          if (cJSON_IsString(c)) rs_sbuf_printf(&s, "%s\n", c->valuestring);
        }
        text = s.s ? s.s : rs_xstrndup("", 0);
      }
    } else {
      const char *p = cJSON_IsString(prompt) ? prompt->valuestring : "";
      text = rs_xstrndup(p, strlen(p));
    }
    cJSON_Delete(q);
    q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "content", text);
    cJSON_AddTrueToObject(q, "add_special");
    free(text);
    code = post_json(l, "/tokenize", q, &r);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "tokens");
    int sz = cJSON_IsArray(t) ? cJSON_GetArraySize(t) : -1;
    cJSON_Delete(q);
    cJSON_Delete(r);
    if (sz >= 0) return *n = (uint32_t)sz, 0;
  }
  if (code == 404 || code == 405 || code == 200) b->tokenizer = RS_OA_TOK_NONE; /* no such endpoint: ask no more */
  return -1;
}

bool rs_oa_context_fits(rs_oa_body *b, const rs_oa_link *l, const rs_gen_input *in, const cJSON *req, uint32_t *ptok,
                        char *why, size_t wn) {
  const struct rs_oa_ctxmark *m = find_mark(b, inst_key(in));
  /* an instance counted once and fitting is not counted again, unless its feedback could make
   * it not fit (a token is a byte at least; 64 for the template's tokens around it) */
  size_t fb = in && in->feedback ? strlen(in->feedback) : 0;
  if (m && m->fits && (uint64_t)m->prompt + b->max_tokens + fb + 64 <= b->n_ctx) return true;
  if (m && !m->fits) {
    *ptok = m->prompt;
    describe(b, m->prompt, m->ctx, "the server refused an earlier attempt of this instance; not sent", why, wn);
    return false;
  }
  if (!b->n_ctx || b->tokenizer == RS_OA_TOK_NONE) return true; /* the server's refusal will say */
  uint32_t n;
  if (count_tokens(b, l, req, &n)) return true;
  if ((uint64_t)n + b->max_tokens <= b->n_ctx) {
    if (!fb) mark(b, inst_key(in), n, b->n_ctx, true);
    return true;
  }
  *ptok = n;
  char how[120];
  snprintf(how, sizeof how, "%s; counted by its /tokenize; not sent", b->ctx_src[0] ? b->ctx_src : "n_ctx");
  describe(b, n, b->n_ctx, how, why, wn);
  mark(b, inst_key(in), n, b->n_ctx, false); /* its later attempts are not counted again */
  return false;
}

void rs_oa_context_refused(rs_oa_body *b, const rs_gen_input *in, const char *msg, uint32_t *ptok, char *why, size_t wn) {
  uint32_t prompt, ctx;
  rs_oa_context_numbers(msg, &prompt, &ctx);
  if (!ctx) ctx = b->n_ctx;
  *ptok = prompt;
  char how[160];
  snprintf(how, sizeof how, "the server refused it: %.120s", msg ? msg : "");
  describe(b, prompt, ctx, how, why, wn);
  mark(b, inst_key(in), prompt, ctx, false);
}
