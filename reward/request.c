/* request.c - the request and answer shapes of the reward service: regsweep's own batch
 * ({"items": [{"instance"|"prompt", "completion"}]}) and OpenRLHF's remote reward model
 * ({"query": [...], "prompts": [...], "labels": [...]} -> {"rewards": [...]}). A broken item is an
 * item error; only a body that is no such request is a request error. docs/reward.md. */
#include "reward/reward.h"
#include <stdlib.h>
#include <string.h>

static const char *str_of(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int parse_native(cJSON *doc, rs_reward_item **out, rs_err *e) {
  const cJSON *arr = cJSON_IsArray(doc) ? doc : cJSON_GetObjectItemCaseSensitive(doc, "items");
  if (!cJSON_IsArray(arr)) return rs_errf(e, NULL, 0, "request: expected {\"items\": [...]} or a JSON array of items");
  int n = cJSON_GetArraySize(arr), k = 0;
  rs_reward_item *it = rs_xcalloc(n ? (size_t)n : 1, sizeof *it);
  const cJSON *o;
  cJSON_ArrayForEach(o, arr) {
    rs_reward_item *x = &it[k++];
    if (!cJSON_IsObject(o)) {
      x->error = "item is not a JSON object";
      continue;
    }
    x->instance = str_of(o, "instance");
    if (!x->instance) x->instance = str_of(o, "id");
    x->prompt = str_of(o, "prompt");
    x->completion = str_of(o, "completion");
    if (x->completion) x->completion_len = strlen(x->completion);
    if (!x->instance && !x->prompt) x->error = "item has neither \"instance\" nor \"prompt\" (a string)";
    else if (!x->completion) x->error = "item has no \"completion\" (a string)";
  }
  *out = it;
  return n;
}

/* OpenRLHF sends the prompt and response joined by its template as "query", and (newer
 * versions) the prompts and the dataset's labels beside it: the label is the instance id, the
 * response is what follows the prompt in the query. */
static int parse_openrlhf(cJSON *doc, rs_reward_item **out, rs_err *e) {
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(doc, "query");
  const cJSON *pr = cJSON_GetObjectItemCaseSensitive(doc, "prompts");
  const cJSON *lb = cJSON_GetObjectItemCaseSensitive(doc, "labels");
  if (!cJSON_IsArray(q)) return rs_errf(e, NULL, 0, "request: OpenRLHF shape needs \"query\": [...]");
  int n = cJSON_GetArraySize(q);
  if ((pr && !cJSON_IsArray(pr)) || (lb && !cJSON_IsArray(lb)) || (pr && cJSON_GetArraySize(pr) != n) ||
      (lb && cJSON_GetArraySize(lb) != n))
    return rs_errf(e, NULL, 0, "request: \"prompts\" and \"labels\" must be arrays as long as \"query\" (%d)", n);
  rs_reward_item *it = rs_xcalloc(n ? (size_t)n : 1, sizeof *it);
  for (int i = 0; i < n; i++) {
    rs_reward_item *x = &it[i];
    const cJSON *qi = cJSON_GetArrayItem(q, i), *pi = pr ? cJSON_GetArrayItem(pr, i) : NULL,
                *li = lb ? cJSON_GetArrayItem(lb, i) : NULL;
    if (!cJSON_IsString(qi)) {
      x->error = "query item is not a string";
      continue;
    }
    const char *query = qi->valuestring, *prompt = cJSON_IsString(pi) ? pi->valuestring : NULL;
    x->completion = query;
    if (prompt) {
      size_t pl = strlen(prompt);
      if (strncmp(query, prompt, pl)) {
        x->error = "query does not start with its prompt: cannot tell the response apart";
        continue;
      }
      x->completion = query + pl;
    }
    x->completion_len = strlen(x->completion);
    if (cJSON_IsString(li) && li->valuestring[0]) x->instance = li->valuestring;
    else if (prompt) x->prompt = prompt;
    else x->error = "no label (instance id) and no prompt: send \"labels\" or \"prompts\" with \"query\"";
  }
  *out = it;
  return n;
}

int rs_reward_parse_request(const char *body, size_t len, int shape, cJSON **doc, rs_reward_item **items, rs_err *e) {
  *items = NULL;
  const char *end = NULL;
  *doc = cJSON_ParseWithLengthOpts(body, len, &end, false);
  if (!*doc) {
    size_t at = end && end >= body ? (size_t)(end - body) : 0;
    return rs_errf(e, NULL, 0, "request: malformed JSON near byte %zu", at);
  }
  int n = shape == RS_SHAPE_OPENRLHF ? parse_openrlhf(*doc, items, e) : parse_native(*doc, items, e);
  if (n < 0) {
    cJSON_Delete(*doc);
    *doc = NULL;
  }
  return n;
}

char *rs_reward_answer(const rs_reward *r, int shape, cJSON *results, const double *rewards, uint32_t n) {
  cJSON *a = cJSON_CreateObject();
  cJSON *rw = cJSON_AddArrayToObject(a, "rewards");
  for (uint32_t i = 0; i < n; i++) cJSON_AddItemToArray(rw, cJSON_CreateNumber(rewards[i]));
  if (shape == RS_SHAPE_OPENRLHF) {
    /* newer OpenRLHF reads "scores" (for filtering) and logs "extra_logs" lists of numbers */
    cJSON_AddItemToObject(a, "scores", cJSON_Duplicate(rw, true));
    cJSON *xl = cJSON_AddObjectToObject(a, "extra_logs");
    cJSON *pass = cJSON_AddArrayToObject(xl, "verifier_pass");
    const cJSON *o;
    cJSON_ArrayForEach(o, results) {
      const char *v = str_of(o, "verdict");
      cJSON_AddItemToArray(pass, cJSON_CreateNumber(v && !strcmp(v, "pass")));
    }
  }
  cJSON_AddItemToObject(a, "results", results);
  cJSON_AddItemToObject(a, "meta", rs_reward_meta(r));
  char *s = cJSON_PrintUnformatted(a);
  cJSON_Delete(a);
  return s;
}
