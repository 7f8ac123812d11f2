/* ingest.c - `sweep --ingest DIR --out RUN` is a resume of RUN whose batch: model reads the
 * result files under DIR (model/batch.c): the shards holding attempts still pending are redone,
 * every answer found is verified and recorded as an online sweep records it, and what is still
 * missing goes into the next round's request files. The run's own options come from its
 * config.json, so the user names only the two directories. */
#include "coordinator/ingest.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char **v;
  int n, cap;
} argv_t;

static void push(argv_t *a, const char *s) {
  if (a->n == a->cap) {
    a->cap = a->cap ? 2 * a->cap : 32;
    a->v = rs_xrealloc(a->v, (size_t)a->cap * sizeof *a->v);
  }
  a->v[a->n++] = rs_xstrndup(s, strlen(s));
}

static void push_opt(argv_t *a, const char *k, const char *v) {
  push(a, k);
  push(a, v);
}

void rs_ingest_argv_free(char **v, int n) {
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
}

char **rs_ingest_argv(const char *run_dir, const char *batch_dir, int argc, char **argv, int *nout, rs_err *e) {
  char p[1200];
  snprintf(p, sizeof p, "%s/config.json", run_dir);
  char *text = rs_read_file(p, NULL, e);
  if (!text) return NULL;
  cJSON *c = cJSON_Parse(text);
  free(text);
  if (!cJSON_IsObject(c)) {
    cJSON_Delete(c);
    rs_errf(e, NULL, 0, "%s is not valid JSON", p);
    return NULL;
  }
  argv_t a = {0};
  push(&a, argc > 0 ? argv[0] : "sweep");
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(c, "corpus");
  if (cJSON_IsString(it)) push_opt(&a, "--corpus", it->valuestring);
  uint32_t batches = 0;
  const cJSON *ms;
  cJSON_ArrayForEach(ms, cJSON_GetObjectItemCaseSensitive(c, "model_specs")) {
    if (!cJSON_IsString(ms)) continue;
    const char *spec = ms->valuestring;
    if (!strncmp(spec, "batch:", 6)) { /* the directory is transport: the one given now */
      const char *q = strchr(spec, '?');
      rs_sbuf s = {0};
      rs_sbuf_printf(&s, "batch:%s%s", batch_dir, q ? q : "");
      push_opt(&a, "--model", s.s);
      free(s.s);
      batches++;
    } else {
      push_opt(&a, "--model", spec);
    }
  }
  if (!batches) {
    const cJSON *m0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "model_specs"), 0);
    rs_errf(e, NULL, 0, "%s has no batch: model to ingest answers for (it was swept with --model %s)", run_dir,
            cJSON_IsString(m0) ? m0->valuestring : "?");
    rs_ingest_argv_free(a.v, a.n);
    cJSON_Delete(c);
    return NULL;
  }
  char num[32];
  static const char *const nums[] = {"samples", "seed", "block"};
  for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
    it = cJSON_GetObjectItemCaseSensitive(c, nums[i]);
    if (!cJSON_IsNumber(it)) continue;
    if (!strcmp(nums[i], "block") && !it->valuedouble) continue; /* --until-pass: no block */
    snprintf(num, sizeof num, "%.0f", it->valuedouble);
    char k[32];
    snprintf(k, sizeof k, "--%s", nums[i]);
    push_opt(&a, k, num);
  }
  static const char *const strs[][2] = {{"split", "--split"}, {"filter", "--filter"}, {"holdout_arch", "--holdout-arch"},
                                        {"verifier", "--verifier"}, {"keep", "--keep"}};
  for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
    it = cJSON_GetObjectItemCaseSensitive(c, strs[i][0]);
    if (cJSON_IsString(it) && it->valuestring[0]) push_opt(&a, strs[i][1], it->valuestring);
  }
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "until_pass"))) push(&a, "--until-pass");
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "feedback"))) push(&a, "--feedback");
  cJSON_Delete(c);
  push(&a, "--resume");
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--ingest")) {
      i++;
      continue;
    }
    push(&a, argv[i]);
  }
  *nout = a.n;
  return a.v;
}
