/* model.c - spec parsing, back-end lookup, and helpers every back end shares. */
#include "model/model.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rs_model_ops *const backends[] = {&rs_model_chaitin, &rs_model_sampled, &rs_model_truth,
                                               &rs_model_replay, &rs_model_openai};

rs_model *rs_model_open(const char *spec, rs_err *e) {
  const rs_model_ops *ops = NULL;
  size_t sl = 0;
  for (size_t i = 0; i < sizeof backends / sizeof *backends; i++) {
    size_t l = strlen(backends[i]->scheme);
    if (!strncmp(spec, backends[i]->scheme, l) && (spec[l] == 0 || spec[l] == '?' || spec[l] == ':')) {
      ops = backends[i];
      sl = l;
    }
  }
  if (!ops) {
    rs_errf(e, NULL, 0, "unknown model '%s' (builtin:chaitin, builtin:sampled?temp=T, builtin:truth, "
                        "replay:FILE.jsonl, openai:URL?model=M)", spec);
    return NULL;
  }
  rs_model *m = rs_xcalloc(1, sizeof *m);
  m->ops = ops;
  m->spec = rs_xstrndup(spec, strlen(spec));
  const char *rest = spec + sl;
  if (*rest == ':') rest++;
  /* openai URLs contain no '?' before the query; replay paths likewise */
  const char *q = strchr(rest, '?');
  m->arg = rs_xstrndup(rest, q ? (size_t)(q - rest) : strlen(rest));
  m->query = rs_xstrndup(q ? q + 1 : "", q ? strlen(q + 1) : 0);
  if (ops->open(m, e)) {
    rs_model_close(m);
    return NULL;
  }
  return m;
}

int rs_model_generate(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                      rs_gen *out, rs_err *e) {
  memset(out, 0, sizeof *out * n);
  int rc = m->ops->generate(m, in, first, n, seeds, out, e);
  /* back ends that produce everything at once hand the candidates over afterwards */
  if (!rc && in->ready && !m->ops->streams)
    for (uint32_t k = 0; k < n; k++) in->ready(in->ready_ctx, k, &out[k]);
  return rc;
}

void rs_model_close(rs_model *m) {
  if (!m) return;
  if (m->ops && m->ops->close && m->state) m->ops->close(m);
  free(m->spec);
  free(m->arg);
  free(m->query);
  free(m);
}

void rs_gen_clear(rs_gen *g) {
  free(g->text);
  memset(g, 0, sizeof *g);
}

static int hexv(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

const char *rs_model_param(const rs_model *m, const char *key, char *buf, size_t n) {
  size_t kl = strlen(key);
  for (const char *c = m->query; c && *c;) {
    const char *amp = strchr(c, '&');
    size_t l = amp ? (size_t)(amp - c) : strlen(c);
    if (l > kl && !strncmp(c, key, kl) && c[kl] == '=') {
      size_t k = 0;
      for (const char *v = c + kl + 1; v < c + l && k + 1 < n; v++) {
        if (*v == '%' && v + 2 < c + l && hexv(v[1]) >= 0 && hexv(v[2]) >= 0) {
          buf[k++] = (char)(hexv(v[1]) * 16 + hexv(v[2]));
          v += 2;
        } else {
          buf[k++] = *v == '+' ? ' ' : *v;
        }
      }
      buf[k] = 0;
      return buf;
    }
    c = amp ? amp + 1 : NULL;
  }
  return NULL;
}

const char **rs_value_names(const rs_problem *p, const rs_namemap *names) {
  const char **nn = rs_xcalloc(p->nvars + 1, sizeof *nn);
  for (uint32_t v = 0; v < p->nvars; v++) nn[v] = p->vars[v].name;
  if (!names || !names->n) return nn;
  /* original name -> value through a small hash, so large instances stay linear */
  uint32_t cap = 16;
  while (cap < 2 * p->nvars + 2) cap *= 2;
  int32_t *tab = rs_xmalloc(sizeof *tab * cap);
  for (uint32_t i = 0; i < cap; i++) tab[i] = -1;
  for (uint32_t v = 0; v < p->nvars; v++) {
    uint32_t j = (uint32_t)rs_hash_bytes(p->vars[v].name, strlen(p->vars[v].name), 3) & (cap - 1);
    while (tab[j] >= 0) j = (j + 1) & (cap - 1);
    tab[j] = (int32_t)v;
  }
  for (uint32_t i = 0; i < names->n; i++) {
    const char *o = names->orig[i];
    uint32_t j = (uint32_t)rs_hash_bytes(o, strlen(o), 3) & (cap - 1);
    while (tab[j] >= 0 && strcmp(p->vars[tab[j]].name, o)) j = (j + 1) & (cap - 1);
    if (tab[j] >= 0) nn[tab[j]] = names->norm[i];
  }
  free(tab);
  return nn;
}

char *rs_assignment_json(const rs_problem *p, const char *const *vnames, const rs_preg *reg) {
  cJSON *o = cJSON_CreateObject();
  char buf[48];
  for (uint32_t v = 0; v < p->nvars; v++)
    if (reg[v].lanes)
      cJSON_AddStringToObject(o, vnames ? vnames[v] : p->vars[v].name, p->tgt->format_preg(p->tgt, reg[v], buf, sizeof buf));
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  char *r = rs_xstrndup(s, strlen(s));
  cJSON_free(s);
  return r;
}
