/* infra.c - a run's infra attempts grouped by reason (report/infra.h). The reason is the
 * error after the back end's "openai URL: " prefix, cut at 80 characters; errors that differ only
 * in their numbers (a prompt's token count, the try count) are one reason, shown by the first. */
#include "report/infra.h"
#include <stdlib.h>
#include <string.h>

void rs_infra_reason_of(const char *diag, char *text, size_t n, uint64_t *key) {
  const char *s = diag ? diag : "";
  /* "openai http://h:8000/v1/chat/completions: HTTP 400: ..." -> "HTTP 400: ..." */
  if (!strncmp(s, "openai http", 11)) {
    const char *c = strstr(s + 11, ": ");
    if (c) s = c + 2;
  }
  if (!*s) s = "(no reason recorded)";
  size_t k = 0;
  for (; s[k] && k < 80 && k + 1 < n; k++) text[k] = s[k] == '\n' || s[k] == '\t' ? ' ' : s[k];
  text[k] = 0;
  /* the key: digits blanked, except a 3-digit HTTP status after "HTTP " */
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < k; i++) {
    bool status = i >= 5 && !strncmp(text + i - 5, "HTTP ", 5);
    char c = text[i];
    if (c >= '0' && c <= '9' && !status) {
      while (i + 1 < k && text[i + 1] >= '0' && text[i + 1] <= '9') i++;
      c = '#';
    } else if (status) {
      while (i + 1 < k && text[i + 1] >= '0' && text[i + 1] <= '9') h = (h ^ (unsigned char)text[++i]) * 1099511628211ull;
    }
    h = (h ^ (unsigned char)c) * 1099511628211ull;
  }
  *key = h;
}

bool rs_infra_context_of(const char *diag, uint32_t *need, uint32_t *ctx) {
  *need = *ctx = 0;
  const char *s = diag ? diag : "";
  if (!strncmp(s, "openai http", 11)) { /* the back end's "openai URL: " prefix */
    const char *c = strstr(s + 11, ": ");
    if (c) s = c + 2;
  }
  if (strncmp(s, "context: ", 9)) return false;
  const char *eq = strstr(s, " = "), *cx = strstr(s, "the server's context ");
  if (eq) *need = (uint32_t)strtoul(eq + 3, NULL, 10);
  if (cx) *ctx = (uint32_t)strtoul(cx + 21, NULL, 10);
  return true;
}

/* One more row of an instance too large for model's context. */
static void count_context(rs_infra *in, uint16_t model, const char *instance, uint32_t need, uint32_t ctx) {
  uint32_t j = 0;
  while (j < in->nctx && in->ctx[j].model != model) j++;
  if (j == in->nctx) {
    in->ctx = rs_xrealloc(in->ctx, (in->nctx + 1) * sizeof *in->ctx);
    memset(&in->ctx[j], 0, sizeof in->ctx[j]);
    in->ctx[j].model = model;
    in->nctx++;
  }
  rs_infra_ctx *c = &in->ctx[j];
  if (need > c->need_max) c->need_max = need;
  if (ctx > c->ctx) c->ctx = ctx;
  uint64_t key = rs_hash_bytes(instance, strlen(instance), 0xc7) | 1;
  /* rows of an instance come together: the last one is checked first */
  for (uint32_t i = c->instances; i-- > 0;)
    if (c->keys[i] == key) return;
  if (!(c->instances & (c->instances - 1)) || !c->instances)
    c->keys = rs_xrealloc(c->keys, (c->instances ? 2 * c->instances : 1) * sizeof *c->keys);
  c->keys[c->instances++] = key;
  c->unsaid += !need;
}

static int by_count(const void *a, const void *b) {
  const rs_infra_reason *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  if (x->model != y->model) return x->model < y->model ? -1 : 1;
  return strcmp(x->text, y->text);
}

int rs_infra_load(rs_infra *in, rs_runfile *f, uint16_t model_base, rs_err *e) {
  uint64_t n = rs_runfile_count(f);
  for (uint64_t i = 0; i < n; i++) {
    rs_attempt a;
    if (rs_runfile_get(f, i, &a, 0, e)) return -1;
    bool infra = a.verdict == 5; /* RS_V_INFRA */
    rs_attempt_clear(&a);
    if (!infra) continue;
    if (rs_runfile_get(f, i, &a, 1, e)) return -1; /* texts only for the few infra rows */
    char text[84];
    uint64_t key;
    rs_infra_reason_of(a.diag, text, sizeof text, &key);
    uint16_t model = (uint16_t)(a.model + model_base);
    uint32_t need, ctx;
    if (rs_infra_context_of(a.diag, &need, &ctx)) count_context(in, model, a.instance, need, ctx);
    unsigned round;
    int at = 0;
    /* "batch: pending in round R: DIR/round-R/SHARD.requests.jsonl" (model/batch.c) */
    if (a.diag && sscanf(a.diag, "batch: pending in round %u: %n", &round, &at) == 1 && at > 0) {
      in->pending++;
      const char *dir = a.diag + at, *rd = strstr(dir, "/round-");
      if (round >= in->round && rd) {
        in->round = round;
        snprintf(in->batch_dir, sizeof in->batch_dir, "%.*s", (int)(rd - dir), dir);
      }
    }
    rs_attempt_clear(&a);
    uint32_t j = 0;
    while (j < in->n && !(in->r[j].key == key && in->r[j].model == model)) j++;
    if (j == in->n) {
      if (in->n == in->cap) {
        in->cap = in->cap ? 2 * in->cap : 8;
        in->r = rs_xrealloc(in->r, in->cap * sizeof *in->r);
      }
      memset(&in->r[j], 0, sizeof in->r[j]);
      memcpy(in->r[j].text, text, sizeof text);
      in->r[j].key = key;
      in->r[j].model = model;
      in->n++;
    }
    in->r[j].count++;
    in->total++;
  }
  if (in->n) qsort(in->r, in->n, sizeof *in->r, by_count);
  return 0;
}

void rs_infra_print(const rs_infra *in, const char *const *models, uint32_t nmodels, uint32_t max, FILE *out) {
  if (!in->total) return;
  fprintf(out, "## Infra attempts by reason\n\n%llu attempts got no answer from a model (not model failures):\n\n"
               "| model | attempts | reason (first 80 characters) |\n|---|---:|---|\n",
          (unsigned long long)in->total);
  uint64_t rest = 0;
  for (uint32_t i = 0; i < in->n; i++) {
    if (i >= max) {
      rest += in->r[i].count;
      continue;
    }
    char t[200];
    size_t k = 0;
    for (const char *s = in->r[i].text; *s && k + 2 < sizeof t; s++) { /* a | would split the cell */
      if (*s == '|') t[k++] = '\\';
      t[k++] = *s;
    }
    t[k] = 0;
    if (models && in->r[i].model < nmodels) fprintf(out, "| %s | %llu | %s |\n", models[in->r[i].model],
                                                    (unsigned long long)in->r[i].count, t);
    else fprintf(out, "| %u | %llu | %s |\n", in->r[i].model, (unsigned long long)in->r[i].count, t);
  }
  if (rest) fprintf(out, "| (others) | %llu | %u more reasons |\n", (unsigned long long)rest, in->n - max);
  fprintf(out, "\n");
  if (in->pending)
    fprintf(out, "Pending in batch request files: %llu attempts (round %u: %s/round-%u/*.requests.jsonl): run them "
                 "(vllm run-batch -i F.requests.jsonl -o F.results.jsonl beside it; docs/slurm.md), then "
                 "`regsweep sweep --ingest %s --out RUN_DIR`.\n\n",
            (unsigned long long)in->pending, in->round, in->batch_dir, in->round, in->batch_dir);
  for (uint32_t i = 0; i < in->nctx; i++) {
    const rs_infra_ctx *c = &in->ctx[i];
    char mn[32];
    snprintf(mn, sizeof mn, "model %u", c->model);
    fprintf(out, "Too large for the server's context: %u instances of %s", c->instances,
            models && c->model < nmodels ? models[c->model] : mn);
    if (c->ctx) fprintf(out, " (its context: %u tokens)", c->ctx);
    if (c->need_max)
      fprintf(out, "; prompt + max_tokens needs up to %u tokens: a context of %u tokens would fit them all "
                   "(llama.cpp: --ctx-size %u x --parallel, its slots share it; vLLM: --max-model-len %u; SGLang: "
                   "--context-length %u), or lower max_tokens=",
              c->need_max, c->need_max, c->need_max, c->need_max, c->need_max);
    if (c->unsaid) fprintf(out, "; %u of them refused without saying their size", c->unsaid);
    fprintf(out, ".\n\n");
  }
}

void rs_infra_free(rs_infra *in) {
  for (uint32_t i = 0; i < in->nctx; i++) free(in->ctx[i].keys);
  free(in->ctx);
  free(in->r);
  memset(in, 0, sizeof *in);
}
