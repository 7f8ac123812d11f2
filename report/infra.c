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
}

void rs_infra_free(rs_infra *in) {
  free(in->r);
  memset(in, 0, sizeof *in);
}
