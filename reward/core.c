/* core.c - the reward service's state: every instance of a corpus loaded once (the same loading
 * as `regsweep verify --corpus`), looked up by id or by the hash of a prompt text regsweep
 * generates for it, and one item judged into a reward. docs/reward.md. */
#include "reward/reward.h"
#include "corpus/instance.h"
#include "model/model.h"
#include "model/openai_int.h" /* the sweep's own prompt rendering (rs_oa_build_request), so the
                               * prompts we hash are byte for byte the ones a sweep sends */
#include "verify/verifier.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char id[160];
  rs_loaded l;
  bool ok;
  char error[700]; /* why it cannot be judged (failed to load) */
} inst;

typedef struct {
  uint64_t hash;
  uint64_t len;
  uint32_t inst;
  uint32_t form; /* 0 normalized IR (corpus export), 1 chat user message, 2 completions prompt */
} phash;

struct rs_reward {
  char *corpus, *corpus_hash, *verifier, *filter;
  int kind;
  unsigned z3_timeout_ms;
  rs_shaping shaping;
  inst *in;
  uint32_t n;
  struct byid {
    const char *id;
    uint32_t i;
  } *by_id; /* sorted by id */
  phash *ph;
  uint32_t nph;
};

static const char *const form_names[] = {"normalized IR (corpus export)", "chat user message (sweep, api=chat)",
                                         "completions prompt (sweep, api=completions)"};

/* Leading and trailing whitespace does not count: templates and trainers add newlines. */
static void trim(const char **s, size_t *n) {
  while (*n && (**s == ' ' || **s == '\n' || **s == '\r' || **s == '\t')) (*s)++, (*n)--;
  while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\n' || (*s)[*n - 1] == '\r' || (*s)[*n - 1] == '\t')) (*n)--;
}

static void add_prompt(rs_reward *r, uint32_t *cap, const char *text, uint32_t i, uint32_t form) {
  if (!text) return;
  size_t n = strlen(text);
  trim(&text, &n);
  if (!n) return;
  phash h = {rs_hash_bytes(text, n, 0x5eed), n, i, form};
  RS_PUSH(r->ph, r->nph, *cap, h);
}

static int cmp_ph(const void *a, const void *b) {
  const phash *x = a, *y = b;
  if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
  if (x->len != y->len) return x->len < y->len ? -1 : 1;
  return x->inst < y->inst ? -1 : x->inst > y->inst;
}

static int cmp_id(const void *a, const void *b) {
  return strcmp(((const struct byid *)a)->id, ((const struct byid *)b)->id);
}

/* The prompts a sweep sends for this instance with the default template (the system message, the
 * user message, and both joined for api=completions). */
static void hash_sweep_prompts(rs_reward *r, uint32_t *cap, const rs_oa_body *b, uint32_t i) {
  rs_loaded *l = &r->in[i].l;
  const char **vn = rs_value_names(l->p, &l->names);
  rs_gen_input gi = {l->row.id, l->row.target, l->p, l->row.norm, &l->names, vn, NULL, NULL, NULL, NULL, NULL};
  cJSON *req = rs_oa_build_request(b, &gi);
  const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(req, "messages"), *m;
  const char *sys = NULL, *user = NULL;
  cJSON_ArrayForEach(m, msgs) {
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role"), *c = cJSON_GetObjectItemCaseSensitive(m, "content");
    if (!cJSON_IsString(role) || !cJSON_IsString(c)) continue;
    if (!strcmp(role->valuestring, "system")) sys = c->valuestring;
    else if (!strcmp(role->valuestring, "user")) user = c->valuestring;
  }
  add_prompt(r, cap, user, i, 1);
  if (user) {
    rs_sbuf t = {0};
    if (sys && sys[0]) {
      rs_sbuf_puts(&t, sys);
      rs_sbuf_puts(&t, "\n");
    }
    rs_sbuf_puts(&t, user);
    add_prompt(r, cap, t.s, i, 2);
    free(t.s);
  }
  cJSON_Delete(req);
  free(vn);
}

rs_reward *rs_reward_open(const char *corpus, const char *filter, const char *verifier, unsigned z3_timeout_ms,
                          const rs_shaping *s, rs_err *e) {
  if (!rs_filter_valid(filter)) {
    rs_errf(e, NULL, 0, "--filter %s: takes family=, target=, form=, kind= (values joined by '|'), sample=K", filter);
    return NULL;
  }
  int kind = rs_verifier_kind(verifier ? verifier : "native");
  if (kind < 0) {
    rs_errf(e, NULL, 0, "--verifier %s: expected native, z3 or both", verifier);
    return NULL;
  }
  rs_corpus *c = rs_corpus_open(corpus, e);
  if (!c) return NULL;
  rs_reward *r = rs_xcalloc(1, sizeof *r);
  r->corpus = rs_xstrndup(corpus, strlen(corpus));
  r->corpus_hash = rs_file_hash(corpus);
  if (filter && filter[0]) r->filter = rs_xstrndup(filter, strlen(filter));
  r->verifier = rs_xstrndup(verifier ? verifier : "native", strlen(verifier ? verifier : "native"));
  r->kind = kind;
  r->z3_timeout_ms = z3_timeout_ms;
  if (s) r->shaping = *s;
  else rs_shaping_default(&r->shaping);
  r->n = (uint32_t)rs_corpus_count(c);
  r->in = rs_xcalloc(r->n ? r->n : 1, sizeof *r->in);
  /* the sweep's request shaping with the default template and no schema: only the prompt matters */
  rs_model m;
  memset(&m, 0, sizeof m);
  m.query = (char *)"model=regsweep-reward&schema=0&probe=0";
  rs_oa_body body;
  memset(&body, 0, sizeof body);
  if (rs_oa_body_configure(&m, &body, e)) {
    rs_oa_body_free(&body);
    rs_corpus_close(c, NULL);
    rs_reward_close(r);
    return NULL;
  }
  uint32_t cap = 0;
  for (uint32_t i = 0; i < r->n; i++) {
    inst *x = &r->in[i];
    rs_err le = {{0}};
    rs_instance row;
    if (rs_corpus_get(c, i, &row, 0, &le)) {
      rs_errf(e, corpus, 0, "row %u: %s", i, le.msg);
      rs_oa_body_free(&body);
      rs_corpus_close(c, NULL);
      rs_reward_close(r);
      return NULL;
    }
    snprintf(x->id, sizeof x->id, "%s", row.id);
    bool taken = rs_filter_match(filter, &row);
    rs_instance_clear(&row);
    if (!taken) {
      snprintf(x->error, sizeof x->error, "instance %.160s is outside this service's --filter %.300s", x->id, filter);
      continue;
    }
    if (rs_instance_load(c, i, &x->l, &le)) {
      snprintf(x->error, sizeof x->error, "instance %.160s cannot be judged: %.500s", x->id, le.msg);
      continue;
    }
    x->ok = true;
    add_prompt(r, &cap, x->l.row.norm, i, 0);
    hash_sweep_prompts(r, &cap, &body, i);
  }
  rs_oa_body_free(&body);
  rs_corpus_close(c, NULL);
  r->by_id = rs_xmalloc((r->n ? r->n : 1) * sizeof *r->by_id);
  for (uint32_t i = 0; i < r->n; i++) r->by_id[i] = (struct byid){r->in[i].id, i};
  qsort(r->by_id, r->n, sizeof *r->by_id, cmp_id);
  if (r->nph) qsort(r->ph, r->nph, sizeof *r->ph, cmp_ph);
  return r;
}

void rs_reward_close(rs_reward *r) {
  if (!r) return;
  for (uint32_t i = 0; i < r->n; i++)
    if (r->in[i].ok) rs_loaded_free(&r->in[i].l);
  free(r->in);
  free(r->by_id);
  free(r->ph);
  free(r->corpus);
  free(r->corpus_hash);
  free(r->verifier);
  free(r->filter);
  free(r);
}

uint32_t rs_reward_ninstances(const rs_reward *r) { return r->n; }
uint32_t rs_reward_nprompts(const rs_reward *r) { return r->nph; }

cJSON *rs_reward_meta(const rs_reward *r) {
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "service", "regsweep-reward");
  cJSON_AddItemToObject(m, "shaping", rs_shaping_json(&r->shaping));
  cJSON_AddStringToObject(m, "verifier", r->verifier);
  cJSON_AddStringToObject(m, "corpus", r->corpus);
  cJSON_AddStringToObject(m, "corpus_hash", r->corpus_hash ? r->corpus_hash : "");
  cJSON_AddNumberToObject(m, "instances", r->n);
  if (r->filter) cJSON_AddStringToObject(m, "filter", r->filter);
  return m;
}

static int64_t find_id(const rs_reward *r, const char *id) {
  uint32_t lo = 0, hi = r->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    int c = strcmp(r->by_id[mid].id, id);
    if (!c) return r->by_id[mid].i;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

/* The instance whose generated prompt this is; -1 none, -2 several instances share it. */
static int64_t find_prompt(const rs_reward *r, const char *text, uint32_t *form) {
  size_t n = strlen(text);
  trim(&text, &n);
  uint64_t h = rs_hash_bytes(text, n, 0x5eed);
  uint32_t lo = 0, hi = r->nph;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (r->ph[mid].hash < h || (r->ph[mid].hash == h && r->ph[mid].len < n)) lo = mid + 1;
    else hi = mid;
  }
  if (lo == r->nph || r->ph[lo].hash != h || r->ph[lo].len != n) return -1;
  uint32_t i = r->ph[lo].inst;
  *form = r->ph[lo].form;
  for (uint32_t k = lo + 1; k < r->nph && r->ph[k].hash == h && r->ph[k].len == n; k++)
    if (r->ph[k].inst != i) {
      /* identical text on two instances (same IR on one target): the id is the one it names
       * first in corpus order, which is what the corpus's dedup keeps */
      if (r->ph[k].inst < i) i = r->ph[k].inst;
    }
  return i;
}

static cJSON *error_item(const rs_reward *r, const char *msg, double *reward) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "reward", r->shaping.error);
  cJSON_AddNullToObject(o, "verdict");
  cJSON_AddStringToObject(o, "error", msg);
  *reward = r->shaping.error;
  return o;
}

cJSON *rs_reward_eval(const rs_reward *r, const rs_reward_item *it, double *reward) {
  char msg[512];
  if (it->error) return error_item(r, it->error, reward);
  int64_t i = -1;
  uint32_t form = 0;
  if (it->instance) {
    i = find_id(r, it->instance);
    if (i < 0) {
      snprintf(msg, sizeof msg, "unknown instance '%.300s' (not in %s)", it->instance, r->corpus);
      return error_item(r, msg, reward);
    }
  } else if (it->prompt) {
    i = find_prompt(r, it->prompt, &form);
    if (i < 0) {
      snprintf(msg, sizeof msg,
               "unknown prompt (%zu bytes): not a prompt regsweep generates for %s (normalized IR, or the sweep's default "
               "template); send the instance id",
               strlen(it->prompt), r->corpus);
      return error_item(r, msg, reward);
    }
  } else {
    return error_item(r, "item names neither an instance nor a prompt", reward);
  }
  const inst *x = &r->in[i];
  if (!x->ok) return error_item(r, x->error, reward);
  if (!it->completion) return error_item(r, "item has no completion", reward);
  const rs_problem *p = x->l.p;
  rs_verifier vf;
  rs_err e = {{0}};
  if (rs_verifier_open(&vf, r->kind, p, r->z3_timeout_ms, &e)) {
    snprintf(msg, sizeof msg, "instance %.160s: %.300s", x->id, e.msg);
    return error_item(r, msg, reward);
  }
  rs_candidate cand;
  rs_check_result res, z3;
  bool agree = rs_verify_text(&vf, &x->l.names, it->completion, it->completion_len, &cand, &res, &z3);
  bool wrapped = cand.wrapped;
  rs_verifier_close(&vf);
  rs_candidate_free(&cand);

  const rs_shaping *s = &r->shaping;
  const rs_target *t = p->tgt;
  double rew = 0, share = 0, bonus = 0;
  uint32_t bad = 0;
  for (int k = 0; k < RS_VK__N; k++)
    if (rs_vkind_verdict((rs_vkind)k) != RS_V_SYNTAX) bad += res.counts[k];
  share = p->nvars ? 1.0 - (double)(bad < p->nvars ? bad : p->nvars) / p->nvars : 0;
  int nq = 0;
  for (uint32_t f = 0; f < t->nfiles && f < RS_CORPUS_NFILES; f++)
    if (t->files[f].pressure && x->l.row.ref_regs[f]) {
      double q = ((double)x->l.row.ref_regs[f] - res.used[f]) / x->l.row.ref_regs[f];
      bonus += q < -1 ? -1 : q > 1 ? 1 : q;
      nq++;
    }
  if (nq) bonus /= nq;
  switch (res.verdict) {
  case RS_V_PASS: rew = s->pass + s->quality * bonus; break;
  case RS_V_SYNTAX: rew = s->syntax; break;
  case RS_V_DATAFLOW: rew = s->dataflow + s->partial * share; break;
  case RS_V_HARDWARE: rew = s->hardware + s->partial * share; break;
  default: rew = s->timeout; break;
  }
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "instance", x->id);
  if (!it->instance) cJSON_AddStringToObject(o, "prompt_form", form_names[form]);
  cJSON_AddNumberToObject(o, "reward", rew);
  cJSON_AddStringToObject(o, "verdict", rs_verdict_str(res.verdict));
  cJSON *counts = cJSON_AddObjectToObject(o, "counts");
  for (int k = 0; k < RS_VK__N; k++)
    if (res.counts[k]) cJSON_AddNumberToObject(counts, rs_vkind_str((rs_vkind)k), res.counts[k]);
  cJSON *d = cJSON_AddArrayToObject(o, "diagnostics");
  for (uint32_t k = 0; k < res.ndiag; k++) cJSON_AddItemToArray(d, cJSON_CreateString(res.diag[k]));
  cJSON_AddBoolToObject(o, "wrapped", wrapped);
  if (res.verdict != RS_V_SYNTAX) {
    cJSON *regs = cJSON_AddObjectToObject(o, "registers");
    for (uint32_t f = 0; f < t->nfiles && f < RS_CORPUS_NFILES; f++)
      if (t->files[f].pressure) {
        cJSON *rf = cJSON_AddObjectToObject(regs, t->files[f].name);
        cJSON_AddNumberToObject(rf, "used", res.used[f]);
        cJSON_AddNumberToObject(rf, "compiler", x->l.row.ref_regs[f]);
      }
    cJSON_AddNumberToObject(o, "occupancy", res.occupancy);
  }
  if (s->partial) cJSON_AddNumberToObject(o, "share_met", share);
  if (s->quality && res.verdict == RS_V_PASS) cJSON_AddNumberToObject(o, "quality", bonus);
  if (!agree) {
    snprintf(msg, sizeof msg, "BUG: native says %s, z3 says %s", rs_verdict_str(res.verdict), rs_verdict_str(z3.verdict));
    cJSON_AddStringToObject(o, "disagreement", msg);
  }
  cJSON_AddNumberToObject(o, "verify_ms", res.seconds * 1e3);
  *reward = rew;
  return o;
}
