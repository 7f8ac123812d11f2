/* jsonl.c - the reward service offline: a JSONL file of items in, one answer line per item out,
 * judged in parallel on a pool of threads (`regsweep reward --corpus C IN.jsonl`). */
#include "reward/reward.h"
#include <stdlib.h>
#include <string.h>

int rs_reward_jsonl(const rs_reward *r, unsigned threads, const char *in, FILE *out, rs_reward_jsonl_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  size_t len;
  char *text = rs_read_file(in, &len, e);
  if (!text) return -1;
  uint32_t n = 0, cap = 0, nd = 0, dcap = 0, ne = 0, ecap = 0, nl = 0, lcap = 0;
  rs_reward_item *items = NULL;
  cJSON **docs = NULL; /* the items point into these */
  char **errs = NULL;
  unsigned *lines = NULL, line = 0;
  for (char *p = text; p && *p;) {
    char *nlp = strchr(p, '\n');
    if (nlp) *nlp = 0;
    line++;
    char *s = p;
    p = nlp ? nlp + 1 : NULL;
    while (*s == ' ' || *s == '\t' || *s == '\r') s++;
    if (!*s) continue;
    /* a line is one item: read as a one-item batch of the native shape */
    size_t sl = strlen(s);
    char *wrapped = rs_xmalloc(sl + 3);
    wrapped[0] = '[';
    memcpy(wrapped + 1, s, sl);
    wrapped[sl + 1] = ']';
    wrapped[sl + 2] = 0;
    cJSON *doc = NULL;
    rs_reward_item *one = NULL, it = {0};
    rs_err le = {{0}};
    int k = rs_reward_parse_request(wrapped, sl + 2, RS_SHAPE_NATIVE, &doc, &one, &le);
    free(wrapped);
    if (k == 1) {
      it = one[0];
      RS_PUSH(docs, nd, dcap, doc);
    } else {
      if (k >= 0) cJSON_Delete(doc);
      char m[700];
      snprintf(m, sizeof m, "%s:%u: %s", in, line, k < 0 ? "malformed JSON" : "not one item object");
      char *em = rs_xstrndup(m, strlen(m));
      RS_PUSH(errs, ne, ecap, em);
      it.error = em;
    }
    free(one);
    RS_PUSH(items, n, cap, it);
    RS_PUSH(lines, nl, lcap, line);
  }
  rs_rpool *pool = rs_rpool_new(threads);
  cJSON *res = rs_reward_batch(r, pool, items, n, NULL);
  rs_rpool_free(pool);
  cJSON *meta = rs_reward_meta(r), *o;
  uint32_t i = 0;
  cJSON_ArrayForEach(o, res) {
    cJSON_AddNumberToObject(o, "line", lines[i++]);
    cJSON_AddItemToObject(o, "meta", cJSON_Duplicate(meta, true));
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "verdict");
    if (cJSON_IsString(v) && !strcmp(v->valuestring, "pass")) st->pass++;
    if (cJSON_GetObjectItemCaseSensitive(o, "error")) st->errors++;
    char *t = cJSON_PrintUnformatted(o);
    fprintf(out, "%s\n", t);
    cJSON_free(t);
  }
  st->items = n;
  cJSON_Delete(meta);
  cJSON_Delete(res);
  for (uint32_t k = 0; k < nd; k++) cJSON_Delete(docs[k]);
  for (uint32_t k = 0; k < ne; k++) free(errs[k]);
  free(docs);
  free(errs);
  free(items);
  free(lines);
  free(text);
  return 0;
}
