/* instance.c - load an instance (corpus row or file) into IR, Problem and name map. */
#include "front/front.h"
#include "corpus/instance.h"
#include "corpus/normalize.h"
#include "corpus/truth.h"
#include "mcode/mcode.h"
#include "sass/sass.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void names_from_json(rs_loaded *l, const char *json) {
  cJSON *o = cJSON_Parse(json ? json : "{}");
  uint32_t n = (uint32_t)cJSON_GetArraySize(o), k = 0;
  l->nm_norm = rs_xcalloc(n + 1, sizeof *l->nm_norm);
  l->nm_orig = rs_xcalloc(n + 1, sizeof *l->nm_orig);
  const cJSON *it;
  cJSON_ArrayForEach(it, o) {
    if (!cJSON_IsString(it) || !it->string) continue;
    l->nm_norm[k] = rs_xstrndup(it->string, strlen(it->string));
    l->nm_orig[k] = rs_xstrndup(it->valuestring, strlen(it->valuestring));
    k++;
  }
  cJSON_Delete(o);
  l->names = (rs_namemap){(const char *const *)l->nm_norm, (const char *const *)l->nm_orig, k};
}

int rs_instance_load(rs_corpus *c, uint64_t i, rs_loaded *l, rs_err *e) {
  memset(l, 0, sizeof *l);
  if (rs_corpus_get(c, i, &l->row, 1, e)) return -1;
  return rs_instance_prepare(l, e);
}

int rs_instance_prepare(rs_loaded *l, rs_err *e) {
  if (!l->row.raw) return rs_errf(e, l->row.id, 0, "instance has no IR text");
  size_t n = strlen(l->row.raw);
  if (!strcmp(l->row.form, "sass")) { /* read with the rows its import inferred from nvdisasm -plr */
    char why[300];
    l->inferred = rs_xcalloc(1, sizeof *l->inferred);
    int k = rs_sass_infer_from_params(l->row.params, l->inferred, why, sizeof why);
    if (k < 0) {
      rs_errf(e, l->row.id, 0, "%s", why);
      rs_loaded_free(l);
      return -1;
    }
    rs_sass_opts o = {.inferred = k ? l->inferred : NULL, .mask = rs_sass_test_mask()};
    l->m = rs_sass_from_text(l->row.id, rs_xstrndup(l->row.raw, n), n, l->row.target, &o, e);
  } else {
    l->m = rs_module_parse(l->row.id, rs_xstrndup(l->row.raw, n), n, !strcmp(l->row.form, "ptx") ? RS_SRC_PTX : RS_SRC_MIR,
                           l->row.target, e);
  }
  if (l->m && !l->m->nfuncs) { /* its one function refused (a form neither the table nor its params read) */
    rs_errf(e, l->row.id, 0, "refused: %s", l->m->nrefused ? l->m->refused[0].why : "no function");
    rs_loaded_free(l);
    return -1;
  }
  if (!l->m) {
    rs_loaded_free(l);
    return -1;
  }
  l->f = l->m->funcs[0];
  /* SASS: the Problem as written back (joins, and scoreboards when the row keeps its cubin) */
  l->p = l->f->kind == RS_SRC_SASS ? rs_sass_problem(l->f, l->row.cubin, l->row.cubin_len, l->row.id, NULL, e)
                                   : rs_problem_build(l->f, e);
  if (!l->p) {
    rs_loaded_free(l);
    return -1;
  }
  names_from_json(l, l->row.name_map);
  /* a corpus built before the function budget (launch bounds) stored the file budgets' verdict */
  l->row.infeasible = rs_problem_infeasible(l->p);
  return 0;
}

int rs_file_load(const char *path, const char *function, rs_loaded *l, rs_err *e) {
  memset(l, 0, sizeof *l);
  l->m = rs_module_load(path, NULL, e);
  if (!l->m) return -1;
  for (uint32_t k = 0; k < l->m->nfuncs && !l->f; k++)
    if (!function || !strcmp(l->m->funcs[k]->name, function)) l->f = l->m->funcs[k];
  if (!l->f) {
    rs_errf(e, path, 0, "no function '%s'", function);
    rs_loaded_free(l);
    return -1;
  }
  l->p = l->f->kind == RS_SRC_SASS ? rs_sass_problem(l->f, NULL, 0, path, NULL, e) : rs_problem_build(l->f, e);
  rs_norm *nm = l->p ? rs_normalize(l->f, e) : NULL;
  if (!nm) {
    rs_loaded_free(l);
    return -1;
  }
  char *json = rs_norm_map_json(nm);
  names_from_json(l, json);
  free(json);
  snprintf(l->row.id, sizeof l->row.id, "%s", path);
  snprintf(l->row.target, sizeof l->row.target, "%s", l->f->tgt->name);
  l->row.norm = rs_xstrndup(nm->text, nm->len);
  rs_norm_free(nm);
  /* SASS: the listing's own registers are an exact truth (sass/lift.c) */
  if (l->f->kind == RS_SRC_SASS && l->f->truth) l->row.truth = rs_truth_json(l->p, l->f->truth);
  return 0;
}

int rs_load_named(const char *corpus, const char *instance, const char *file, const char *function, rs_loaded *l,
                  rs_err *e) {
  if (!corpus) return rs_file_load(file, function, l, e);
  memset(l, 0, sizeof *l);
  rs_corpus *c = rs_corpus_open(corpus, e);
  if (!c) return -1;
  int64_t idx = rs_corpus_find(c, instance, e);
  if (idx == -1) rs_errf(e, corpus, 0, "no instance '%s'", instance);
  int rc = idx >= 0 ? rs_instance_load(c, (uint64_t)idx, l, e) : -1;
  rs_err ce;
  rs_corpus_close(c, &ce);
  return rc;
}

void rs_loaded_free(rs_loaded *l) {
  for (uint32_t i = 0; i < l->names.n; i++) {
    free(l->nm_norm[i]);
    free(l->nm_orig[i]);
  }
  free(l->nm_norm);
  free(l->nm_orig);
  rs_problem_free(l->p);
  rs_module_free(l->m);
  if (l->inferred) rs_sass_infer_free(l->inferred), free(l->inferred);
  rs_instance_clear(&l->row);
  memset(l, 0, sizeof *l);
}

/* sample=K: about one kernel in K, by a hash of (family, variant), so that a kernel kept is kept
 * on every target and form (and in every command given the same K). */
static bool sampled(const char *k, const rs_instance *in) {
  unsigned long n = strtoul(k, NULL, 10);
  uint64_t h = rs_hash_bytes(in->variant, strlen(in->variant), rs_hash_bytes(in->family, strlen(in->family), 0));
  return n <= 1 || h % n == 0;
}

/* "family=fa|sgemm,target=gfx90a,sample=4": does the instance match? */
bool rs_filter_match(const char *filter, const rs_instance *in) {
  if (!filter || !*filter) return true;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", filter);
  char *save = NULL;
  for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq) return false;
    *eq = 0;
    if (!strcmp(kv, "sample")) {
      if (!sampled(eq + 1, in)) return false;
      continue;
    }
    const char *val = !strcmp(kv, "family") ? in->family : !strcmp(kv, "target") ? in->target
                    : !strcmp(kv, "form") ? in->form : !strcmp(kv, "kind") ? in->kind : NULL;
    if (!val) return false;
    bool any = false;
    char *s2 = NULL;
    for (char *alt = strtok_r(eq + 1, "|", &s2); alt; alt = strtok_r(NULL, "|", &s2)) any |= !strcmp(alt, val);
    if (!any) return false;
  }
  return true;
}

bool rs_filter_valid(const char *filter) {
  if (!filter) return true;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", filter);
  char *save = NULL;
  for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq) return false;
    *eq = 0;
    if (!strcmp(kv, "sample")) { /* a positive number */
      char *end;
      if (strtoul(eq + 1, &end, 10) < 1 || *end || eq[1] == '-') return false;
      continue;
    }
    if (strcmp(kv, "family") && strcmp(kv, "target") && strcmp(kv, "form") && strcmp(kv, "kind")) return false;
  }
  return true;
}
