/* test_openai_serve.c - the openai: back end meeting a server as a new user does, against
 * tests/standin_openai.c (a TEST DOUBLE, not a model):
 *  - the schema probe cannot give a false negative: a byte-level model under a JSON grammar
 *    spends tokens on whitespace, its answer cut at max_tokens is a prefix of the only admissible
 *    one (applied, asked again with more tokens), never "ignored"; a server that applies no
 *    dialect gets a message naming each dialect tried and what it answered;
 *  - the window fits the server: its capacity read where it says it (llama.cpp /props
 *    total_slots, /slots) caps the window, so no request waits in its queue; a vLLM-like server
 *    that says only its queue (/metrics gauges) has its capacity learnt while running;
 *  - an abandoned request's connection is closed, so the server sees it (the stand-in counts
 *    the hang-ups it noticed);
 *  - a refusal that every request meets (HTTP 400, no such model) is `refused`; a prompt beyond the
 *    context is the instance's (`context`, with the server's numbers; its next attempt not sent);
 *  - schema_strict=1: each value's schema is an enumeration of exactly the registers of its class
 *    the function may use (checked on a real gfx90a instance: every entry parses back to a
 *    member of the class, tuples aligned, nothing past the budget, the count per class as the
 *    file, width and alignment say), sent only when asked for, part of the model's identity. */
#include "front/front.h"
#include "analysis/problem.h"
#include "ir/ir.h"
#include "model/model.h"
#include "report/infra.h"
#include "model/openai_schema.h"
#include "target/target.h"
#include "tests/check.h"
#include "tests/standin_openai.c"
#include <stdlib.h>
#include <string.h>

/* A Problem of n 32-bit VGPR values (the answer needs no verifying here). */
static rs_problem *tiny_problem(uint32_t n) {
  rs_problem *p = rs_xcalloc(1, sizeof *p);
  p->tgt = &rs_target_gfx90a;
  int cls = rs_target_class(p->tgt, "vgpr_32", 7);
  p->vars = rs_xcalloc(n, sizeof *p->vars);
  p->nvars = p->capvars = n;
  for (uint32_t f = 0; f < p->tgt->nfiles; f++) p->budget[f] = p->tgt->files[f].budget;
  for (uint32_t v = 0; v < n; v++) {
    char b[16];
    snprintf(b, sizeof b, "%%%u", v);
    p->vars[v].name = rs_xstrndup(b, strlen(b));
    p->vars[v].cls = cls;
    p->vars[v].width = 1;
    p->vars[v].full = 3;
    p->vars[v].files = p->tgt->classes[cls].files;
  }
  return p;
}

static void tiny_free(rs_problem *p) {
  for (uint32_t v = 0; v < p->nvars; v++) free(p->vars[v].name);
  free(p->vars);
  free(p);
}

static rs_model *open_q(const rs_standin *s, const char *model, const char *query, rs_err *e) {
  char spec[700];
  snprintf(spec, sizeof spec, "openai:http://127.0.0.1:%d/v1?model=%s&backoff=0.02&backoff_cap=0.1%s%s", s->port, model,
           query[0] ? "&" : "", query);
  return rs_model_open(spec, e);
}

/* max_tokens of each probe request recorded, in order; returns how many. */
static int probe_tokens(const char *dir, int *out, int max) {
  char **l;
  int n = rs_check_list(dir, ".req", &l), k = 0;
  for (int i = 0; i < n; i++) {
    size_t len;
    rs_err e;
    char *t = rs_read_file(l[i], &len, &e);
    const char *b = t ? strstr(t, "\r\n\r\n") : NULL;
    cJSON *j = b && strstr(b, "regsweep_probe") ? cJSON_Parse(b + 4) : NULL;
    if (j && k < max) out[k++] = (int)cJSON_GetObjectItem(j, "max_tokens")->valuedouble;
    cJSON_Delete(j);
    free(t);
    unlink(l[i]);
  }
  rs_check_free_list(l, n);
  return k;
}

static void clear_dir(const char *dir) {
  const char *ext[] = {".req", ".get"};
  for (int x = 0; x < 2; x++) {
    char **l;
    int n = rs_check_list(dir, ext[x], &l);
    for (int i = 0; i < n; i++) unlink(l[i]);
    rs_check_free_list(l, n);
  }
}

/* schema_strict on a real instance (the hgemm fixture: VGPR tuples, aligned classes, SGPRs). */
static void check_strict(void) {
  rs_err e = {{0}};
  rs_module *mod = rs_module_load("tests/fixtures/amd/hgemm_mfma16_w2x2_r1x1.postsplit.mir", NULL, &e);
  CHECKF(mod && mod->nfuncs, "%s", e.msg);
  if (!mod || !mod->nfuncs) return;
  rs_problem *p = rs_problem_build(mod->funcs[0], &e);
  CHECKF(p != NULL, "%s", e.msg);
  if (!p) {
    rs_module_free(mod);
    return;
  }
  const rs_target *t = p->tgt;
  cJSON *sc = rs_oa_schema_ex(p, NULL, true), *loose = rs_oa_schema_ex(p, NULL, false);
  cJSON *defs = cJSON_GetObjectItem(sc, "$defs"), *props = cJSON_GetObjectItem(sc, "properties");
  CHECK(cJSON_GetArraySize(props) == (int)p->nvars && !cJSON_GetObjectItem(loose, "$defs"));
  int vf = -1; /* the VGPR file, and its reserved units (none expected: then counts are exact) */
  for (uint32_t f = 0; f < t->nfiles; f++)
    if (t->files[f].asm_prefix && !strcmp(t->files[f].asm_prefix, "v")) vf = (int)f;
  CHECK(vf >= 0);
  int tuples = 0;
  for (uint32_t v = 0; v < p->nvars; v++) {
    int cls = p->vars[v].cls;
    const rs_regclass *c = &t->classes[cls];
    cJSON *pr = cJSON_GetObjectItem(props, p->vars[v].name), *ref = cJSON_GetObjectItem(pr, "$ref");
    char want[80];
    snprintf(want, sizeof want, "#/$defs/%s", c->name);
    CHECKF(cJSON_IsString(ref) && !strcmp(ref->valuestring, want), "%s: %s", p->vars[v].name, cJSON_PrintUnformatted(pr));
  }
  cJSON *d;
  cJSON_ArrayForEach(d, defs) {
    int cls = rs_target_class(t, d->string, strlen(d->string));
    CHECKF(cls >= 0, "$defs names a class: %s", d->string);
    if (cls < 0) continue;
    const rs_regclass *c = &t->classes[cls];
    cJSON *en = cJSON_GetObjectItem(d, "enum"), *x;
    int n = 0, bad = 0;
    uint32_t top = 0;
    cJSON_ArrayForEach(x, en) { /* each entry parses back, independently, to a member of the class */
      rs_preg r;
      const char *sv = x->valuestring;
      bool ok = t->parse_preg(t, sv, strlen(sv), &r) == 0 && rs_problem_member(p, cls, r) == RS_MEMBER_OK;
      bad += !ok;
      if (ok && sv[0] == 'v') top = r.unit - t->files[vf].first + c->width > top ? r.unit - t->files[vf].first + c->width : top;
      n++;
    }
    CHECKF(bad == 0 && n > 0, "%s: %d entries, %d not members", d->string, n, bad);
    if (c->files == 1u << vf && !c->half) { /* VGPR-only: the count the file, width and alignment imply */
      uint32_t budget = p->budget[vf] ? p->budget[vf] : t->files[vf].budget, expect = 0;
      for (uint32_t b = 0; b + c->width <= budget; b += c->align ? c->align : 1) expect++;
      CHECKF((uint32_t)n == expect && top <= budget, "%s: %d entries, expected %u (budget %u, width %u, align %u)",
             d->string, n, expect, budget, c->width, c->align);
      if (c->width >= 2 && c->align >= 2) { /* misaligned and reversed tuples are not admitted */
        char mis[32], rev[32];
        snprintf(mis, sizeof mis, "v[1:%u]", c->width);
        snprintf(rev, sizeof rev, "v[%u:0]", c->width - 1);
        bool found = false;
        cJSON_ArrayForEach(x, en) found |= !strcmp(x->valuestring, mis) || !strcmp(x->valuestring, rev);
        CHECKF(!found, "%s admits %s or %s", d->string, mis, rev);
        tuples++;
      }
    }
  }
  CHECKF(tuples > 0, "the fixture has aligned VGPR tuple classes");
  char *a = cJSON_PrintUnformatted(sc), *b = cJSON_PrintUnformatted(loose);
  printf("schema_strict: %u values, %d classes: %zu bytes (loose: %zu)\n", p->nvars, cJSON_GetArraySize(defs), strlen(a),
         strlen(b));
  cJSON_free(a);
  cJSON_free(b);
  cJSON_Delete(sc);
  cJSON_Delete(loose);
  rs_problem_free(p);
  rs_module_free(mod);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  setenv("no_proxy", "*", 1); /* loopback must not go through a proxy the environment may name */
  setenv("NO_PROXY", "*", 1);
  check_strict();
  { /* infra reasons: the URL prefix left out, numbers aside, the HTTP status kept */
    char t1[84], t2[84], t3[84];
    uint64_t k1, k2, k3;
    rs_infra_reason_of("openai http://n1:8000/v1/chat/completions: HTTP 400: request (5994 tokens) exceeds the available "
                       "context size (4096 tokens)", t1, sizeof t1, &k1);
    rs_infra_reason_of("openai http://n2:8001/v1/chat/completions: HTTP 400: request (6120 tokens) exceeds the available "
                       "context size (4096 tokens)", t2, sizeof t2, &k2);
    rs_infra_reason_of("openai http://n1:8000/v1/chat/completions: HTTP 404: request (5994 tokens) exceeds the available "
                       "context size (4096 tokens)", t3, sizeof t3, &k3);
    CHECKF(k1 == k2 && k1 != k3 && !strncmp(t1, "HTTP 400: request (5994 tokens) exceeds", 39) && strlen(t1) == 80,
           "'%s' / '%s' / '%s'", t1, t2, t3);
  }
  rs_problem *p = tiny_problem(4);
  const char *vn[] = {"%0", "%1", "%2", "%3"};
  const char *answer = "{\"%0\":\"v0\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"v3\"}";
  rs_gen_input in = {.id = "tiny", .target = "gfx90a", .p = p, .prompt = "v_add %0, %1, %2", .vnames = vn};
  char dir[] = "/tmp/rs_oaserve_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  rs_standin s;
  char desc[700];
  rs_err e = {{0}};

  /* 1. the probe against a byte-level model that writes whitespace inside the JSON and is cut
   *    at max_tokens: few blanks (fits the first request), 150 (cut, asked again with more: fits),
   *    3000 (cut twice, still a prefix: applied, said so) */
  const unsigned ws[] = {10, 150, 3000};
  const int nprobes[] = {1, 2, 2};
  for (int i = 0; i < 3; i++) {
    CHECK(standin_start_ex(&s, answer, dir, "llamacpp", 0, 0, ws[i], 0) == 0);
    rs_model *m = open_q(&s, "ok", "schema=llamacpp", &e);
    CHECKF(m != NULL, "ws %u: a server that applies the schema was refused: %s", ws[i], e.msg);
    int mt[8], k = probe_tokens(dir, mt, 8);
    CHECKF(k == nprobes[i], "ws %u: %d probe requests", ws[i], k);
    CHECKF(k < 1 || mt[0] >= 64, "the first probe's max_tokens %d leaves no room for whitespace", mt[0]);
    CHECKF(k < 2 || mt[1] > 2 * mt[0], "the retry asks for more tokens (%d after %d)", mt[k > 1], mt[0]);
    if (m) {
      rs_model_describe(m, desc, sizeof desc);
      CHECKF(strstr(desc, "(probe: the server applied it") != NULL, "%s", desc);
      CHECKF((strstr(desc, "prefix of the only admissible one") != NULL) == (i == 2), "%s", desc);
    }
    rs_model_close(m);
    standin_stop(&s);
  }

  /* 2. a server that applies no dialect (byte-level too): each dialect named with its answer */
  CHECK(standin_start_ex(&s, answer, dir, "none", 0, 0, 20, 0) == 0);
  rs_model *m = open_q(&s, "ok", "schema=openai", &e);
  CHECK(m == NULL);
  CHECKF(strstr(e.msg, "schema=openai: the server does not apply") && strstr(e.msg, "nor does schema=llamacpp (answered '{") &&
             strstr(e.msg, "schema=vllm (answered '{") && strstr(e.msg, "use schema=0"),
         "%s", e.msg);
  CHECKF(!strstr(e.msg, "neither do schema=openai"), "the tested dialect is not listed again: %s", e.msg);
  rs_model_close(m);
  standin_stop(&s);
  /* ... and one that reads only the last dialect tried: the one before it is named too */
  CHECK(standin_start_ex(&s, answer, dir, "vllm", 0, 0, 20, 0) == 0);
  m = open_q(&s, "ok", "schema=openai", &e);
  CHECKF(!m && strstr(e.msg, "nor does schema=llamacpp (answered '{") && strstr(e.msg, "schema=vllm does: use it"), "%s",
         e.msg);
  rs_model_close(m);
  standin_stop(&s);
  clear_dir(dir);

  /* 3. llama.cpp with 3 slots: /props total_slots caps a window of 12 at 3; nothing queues */
  enum { NA = 12 };
  uint64_t seeds[NA];
  rs_gen g[NA];
  for (int k = 0; k < NA; k++) seeds[k] = 1000 + (uint64_t)k;
  CHECK(standin_start_ex(&s, answer, dir, "openai", 1, 100000, 0, 3) == 0);
  m = open_q(&s, "delay150", "schema=0&inflight=12&timeout=5", &e);
  CHECKF(m != NULL, "%s", e.msg);
  if (m) {
    rs_model_describe(m, desc, sizeof desc);
    CHECKF(strstr(desc, "3 slots") != NULL, "%s", desc);
    memset(g, 0, sizeof g);
    CHECK(rs_model_generate(m, &in, 1, NA, seeds, g, &e) == 0);
    for (int k = 0; k < NA; k++) CHECKF(!g[k].infra, "%d: %s", k, g[k].error);
    rs_window w;
    rs_model_window(m, &w);
    CHECKF(w.max == 3 && w.capacity == 3 && strstr(w.learned, "/props total_slots"), "window %u of %u, %u: %s", w.now,
           w.max, w.capacity, w.learned);
    CHECKF(s.sh->peak_running == 3 && s.sh->peak_waiting == 0, "at the server: peak %d running, %d waiting",
           s.sh->peak_running, s.sh->peak_waiting);
    for (int k = 0; k < NA; k++) rs_gen_clear(&g[k]);
  }
  rs_model_close(m);
  standin_stop(&s);
  clear_dir(dir);

  /* 3b. llama.cpp with n=3: usage counts one choice; each candidate still gets its own count */
  CHECK(standin_start_ex(&s, answer, dir, "openai", 1, 100000, 0, 4) == 0);
  m = open_q(&s, "ok", "schema=0&n=3&timeout=5", &e);
  CHECKF(m != NULL, "%s", e.msg);
  if (m) {
    memset(g, 0, sizeof g);
    CHECK(rs_model_generate(m, &in, 1, 3, seeds, g, &e) == 0);
    unsigned one = (unsigned)strlen(answer) / 4 + 1, sum = 0;
    for (int k = 0; k < 3; k++) sum += g[k].completion_tokens;
    CHECKF(!g[0].infra && sum + 1 >= 3 * one && sum <= 3 * one + 1, "3 choices of %u tokens each: %u, %u, %u", one,
           g[0].completion_tokens, g[1].completion_tokens, g[2].completion_tokens);
    for (int k = 0; k < 3; k++) rs_gen_clear(&g[k]);
  }
  rs_model_close(m);
  standin_stop(&s);
  clear_dir(dir);

  /* 4. vLLM-like: no capacity said, only /metrics gauges; 2 run at once, the rest queue: the
   *    window of 12 comes down to what runs, and the queue empties */
  CHECK(standin_start_ex(&s, answer, dir, "openai", 2, 100000, 0, 2) == 0);
  m = open_q(&s, "delay600", "schema=0&inflight=12&timeout=20", &e);
  CHECKF(m != NULL, "%s", e.msg);
  if (m) {
    rs_model_describe(m, desc, sizeof desc);
    CHECKF(strstr(desc, "its queue read from /metrics") != NULL, "%s", desc);
    memset(g, 0, sizeof g);
    CHECK(rs_model_generate(m, &in, 1, NA, seeds, g, &e) == 0);
    for (int k = 0; k < NA; k++) CHECKF(!g[k].infra, "%d: %s", k, g[k].error);
    rs_window w;
    rs_model_window(m, &w);
    CHECKF(w.capacity == 2 && w.max == 2 && strstr(w.learned, "learnt"), "window %u of %u, capacity %u: %s", w.now, w.max,
           w.capacity, w.learned);
    for (int k = 0; k < NA; k++) rs_gen_clear(&g[k]);
  }
  rs_model_close(m);
  standin_stop(&s);
  clear_dir(dir);

  /* 5. abandoned requests: a timeout and a cancel close their connections, which the server sees
   *    (here while they wait for a slot and while they run) */
  CHECK(standin_start_ex(&s, answer, dir, "openai", 0, 0, 0, 1) == 0);
  m = open_q(&s, "delay3000", "schema=0&inflight=3&timeout=0.4&retries=0", &e);
  CHECKF(m != NULL, "%s", e.msg);
  if (m) {
    memset(g, 0, sizeof g);
    CHECK(rs_model_generate(m, &in, 1, 3, seeds, g, &e) == 0);
    for (int k = 0; k < 3; k++) CHECKF(g[k].infra && g[k].transient && strstr(g[k].error, "timed out"), "%d: %s", k, g[k].error);
    for (int k = 0; k < 3; k++) rs_gen_clear(&g[k]);
    for (int t = 0; t < 200 && __atomic_load_n(&s.sh->aborted, __ATOMIC_SEQ_CST) < 3; t++) sd_sleep_ms(10);
    CHECKF(s.sh->aborted == 3, "the server noticed %d of 3 abandoned requests", s.sh->aborted);
  }
  rs_model_close(m);
  standin_stop(&s);
  clear_dir(dir);

  /* 6b. schema_strict=1 is sent only when asked for, and is another model (identity) */
  {
    char *i0 = rs_model_identity("openai:http://h/v1?model=ok"), *i1 = rs_model_identity("openai:http://h/v1?model=ok&schema_strict=1");
    CHECKF(i0 && i1 && strcmp(i0, i1) && strstr(i1, "schema_strict=1"), "%s / %s", i0, i1);
    free(i0);
    free(i1);
    CHECK(standin_start_ex(&s, answer, dir, "openai", 0, 0, 0, 0) == 0);
    for (int strict = 0; strict < 2; strict++) {
      m = open_q(&s, "ok", strict ? "probe=0&schema_strict=1" : "probe=0", &e);
      CHECKF(m != NULL, "%s", e.msg);
      if (!m) continue;
      memset(g, 0, sizeof g);
      CHECK(rs_model_generate(m, &in, 1, 1, seeds, g, &e) == 0);
      rs_gen_clear(&g[0]);
      rs_model_close(m);
      char **l;
      int nl = rs_check_list(dir, ".req", &l), with = 0;
      for (int i = 0; i < nl; i++) {
        size_t len;
        char *t = rs_read_file(l[i], &len, &e);
        with += t && strstr(t, "\"$defs\":{\"vgpr_32\":{\"type\":\"string\",\"enum\":[\"v0\",\"v1\",");
        free(t);
      }
      rs_check_free_list(l, nl);
      CHECKF(nl == 1 && with == strict, "schema_strict=%d: %d of %d requests carry the enumeration", strict, with, nl);
      clear_dir(dir);
    }
    standin_stop(&s);
  }

  /* 6. a refusal every request meets is said so (refused: the sweep stops on it) */
  CHECK(standin_start_ex(&s, answer, dir, "openai", 0, 0, 0, 0) == 0);
  const char *models[] = {"ctx400", "e404", "e400", "e500"};
  const bool refused[] = {false, true, true, false}; /* ctx400: the instance's size, not the server */
  for (int i = 0; i < 4; i++) {
    m = open_q(&s, models[i], "schema=0&retries=0&timeout=5", &e);
    CHECKF(m != NULL, "%s", e.msg);
    if (!m) continue;
    memset(g, 0, sizeof g);
    CHECK(rs_model_generate(m, &in, 1, 1, seeds, g, &e) == 0);
    CHECKF(g[0].infra && g[0].refused == refused[i], "%s: refused %d: %s", models[i], g[0].refused, g[0].error);
    if (i == 0) { /* a context refusal marks the instance with the server's numbers; its next attempt is not sent */
      CHECKF(g[0].context && g[0].prompt_tokens == 5994 &&
             strstr(g[0].error, "context: prompt 5994 tokens + max_tokens 4096 = 10090 > the server's context 4096 tokens"),
             "%s", g[0].error);
      rs_gen_clear(&g[0]);
      memset(g, 0, sizeof g);
      CHECK(rs_model_generate(m, &in, 2, 1, seeds, g, &e) == 0);
      CHECKF(g[0].context && strstr(g[0].error, "refused an earlier attempt of this instance; not sent"), "%s", g[0].error);
    }
    rs_gen_clear(&g[0]);
    rs_model_close(m);
  }
  standin_stop(&s);
  clear_dir(dir);

  rmdir(dir);
  tiny_free(p);
  return rs_check_done("test_openai_serve");
}
