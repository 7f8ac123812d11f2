/* openai_body.c - what a request of the openai: back end says: the request-shaping parameters of
 * the spec (model, api, sampling, stop, schema, template, feedback), the rendered prompt and the
 * JSON body. No HTTP here (model/openai.c sends it). */
#include "model/openai_int.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The built-in prompt template: a copy of prompts/default.txt (tests/test_openai.c checks that
 * both render the same request), so a run does not depend on the working directory. */
static const char default_template[] =
    "You are a register allocator for {{target}} GPU kernels. You read one function in a normalized machine IR: one line per block and per instruction, virtual registers named by kind and number (AMD s0, v0, a0; NVIDIA r0, d0, p0). You assign every virtual register a physical register so that\n"
    "- two values that are live at the same time never share a register (for tuples: any register of the tuple),\n"
    "- each register fits its value's class: register file, width and alignment,\n"
    "- physical registers the function already uses while a value is live are avoided.\n"
    "Answer with one JSON object and nothing else: {\"<virtual register>\": \"<physical register>\", ...}, with every virtual register of the function as a key.\n"
    "{{user}}\n"
    "Target: {{target}}\n"
    "\n"
    "Register files and classes of this function:\n"
    "{{registers}}\n"
    "Function:\n"
    "{{ir}}\n"
    "{{feedback}}\n"
    "Answer with the JSON object only.\n";

int rs_oa_param_num(const rs_model *m, const char *key, double lo, double hi, double *out, rs_err *e) {
  char buf[64];
  if (!rs_model_param(m, key, buf, sizeof buf)) return 0;
  char *end;
  double d = strtod(buf, &end);
  if (end == buf || *end || !(d >= lo && d <= hi))
    return rs_errf(e, NULL, 0, "openai: %s=%s: expected a number in [%g, %g]", key, buf, lo, hi);
  *out = d;
  return 0;
}

int rs_oa_param_bool(const rs_model *m, const char *key, bool *out, rs_err *e) {
  char buf[16];
  if (!rs_model_param(m, key, buf, sizeof buf)) return 0;
  if (strcmp(buf, "0") && strcmp(buf, "1")) return rs_errf(e, NULL, 0, "openai: %s=%s: expected 0 or 1", key, buf);
  *out = buf[0] == '1';
  return 0;
}

/* The request-shaping parameters. `ident` ones make the model's identity (rs_oa_identity): the
 * attempt seeds and --resume's config check depend on them, and on nothing else of the spec
 * (not the URL, timeouts, retries, the window, the key's variable, the probe). */
enum { P_STR, P_NUM, P_SCHEMA };
static const struct {
  const char *name, *dflt; /* dflt: the value meant when absent (normalized) */
  int kind;
  bool ident;
} body_params[] = {
    {"model", "", P_STR, true},         {"api", "chat", P_STR, true},
    {"temperature", "0.7", P_NUM, true}, {"top_p", "1", P_NUM, true},
    {"top_k", "-1", P_NUM, true},       {"min_p", "0", P_NUM, true},
    {"repetition_penalty", "1", P_NUM, true}, {"presence_penalty", "0", P_NUM, true},
    {"frequency_penalty", "0", P_NUM, true},  {"max_tokens", "4096", P_NUM, true},
    {"stop", "", P_STR, true},          {"schema", "1", P_SCHEMA, true},
    {"template", "", P_STR, true},      {"feedback", "1", P_STR, true},
    {"sampling", "explicit", P_STR, true}, {"n", "1", P_NUM, true},
    {"schema_strict", "0", P_STR, true},
    {"probe", "1", P_STR, false},
};

bool rs_oa_body_knows(const char *key, size_t kl) {
  for (size_t i = 0; i < sizeof body_params / sizeof *body_params; i++)
    if (strlen(body_params[i].name) == kl && !strncmp(key, body_params[i].name, kl)) return true;
  return false;
}

static int hexv(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

void rs_oa_identity(const char *query, rs_sbuf *out) {
  rs_sbuf_puts(out, "openai");
  unsigned nout = 0;
  for (size_t i = 0; i < sizeof body_params / sizeof *body_params; i++) {
    if (!body_params[i].ident) continue;
    size_t kl = strlen(body_params[i].name);
    const char *v = NULL;
    size_t vl = 0;
    for (const char *c = query; c && *c;) { /* the last occurrence wins, as in rs_model_param */
      const char *amp = strchr(c, '&');
      size_t l = amp ? (size_t)(amp - c) : strlen(c);
      if (l > kl && !strncmp(c, body_params[i].name, kl) && c[kl] == '=') {
        v = c + kl + 1;
        vl = l - kl - 1;
      }
      c = amp ? amp + 1 : NULL;
    }
    if (!v) continue;
    rs_sbuf val = {0};
    for (size_t k = 0; k < vl; k++) { /* URL-decoded, so %2F and / are one identity */
      if (v[k] == '%' && k + 2 < vl && hexv(v[k + 1]) >= 0 && hexv(v[k + 2]) >= 0) {
        char ch = (char)(hexv(v[k + 1]) * 16 + hexv(v[k + 2]));
        rs_sbuf_put(&val, &ch, 1);
        k += 2;
      } else {
        rs_sbuf_put(&val, v[k] == '+' ? " " : &v[k], 1);
      }
    }
    if (!val.s) rs_sbuf_put(&val, "", 0);
    char num[64];
    const char *norm = val.s;
    if (body_params[i].kind == P_NUM) {
      char *end;
      double d = strtod(val.s, &end);
      if (end != val.s && !*end) {
        snprintf(num, sizeof num, "%.15g", d);
        norm = num;
      }
    } else if (body_params[i].kind == P_SCHEMA) {
      /* the dialect says how the server is asked, not what is asked: schema=vllm is schema=1 */
      norm = strcmp(val.s, "0") ? "1" : "0";
    }
    if (strcmp(norm, body_params[i].dflt)) {
      rs_sbuf_puts(out, nout++ ? "&" : "?");
      rs_sbuf_printf(out, "%s=", body_params[i].name);
      rs_sbuf_puts(out, norm);
    }
    free(val.s);
  }
}

const char *const rs_oa_dialect_name[RS_OA_NDIALECTS] = {"0", "openai", "llamacpp", "vllm"};

static const struct {
  const char *name;
  double lo, hi, neutral;
} samp_params[RS_OA_NSAMP] = {
    {"top_p", 0, 1, 1},         {"top_k", -1, 1e6, -1},   {"min_p", 0, 1, 0},
    {"repetition_penalty", 0.01, 10, 1}, {"presence_penalty", -2, 2, 0}, {"frequency_penalty", -2, 2, 0},
};

int rs_oa_body_configure(const rs_model *m, rs_oa_body *s, rs_err *e) {
  char buf[4096];
  if (!rs_model_param(m, "model", buf, sizeof buf) || !buf[0])
    return rs_errf(e, NULL, 0, "openai: model=NAME is required (the server's model name)");
  s->model = rs_xstrndup(buf, strlen(buf));
  s->chat = true;
  if (rs_model_param(m, "api", buf, sizeof buf)) {
    if (!strcmp(buf, "completions")) s->chat = false;
    else if (strcmp(buf, "chat")) return rs_errf(e, NULL, 0, "openai: api=%s: expected chat or completions", buf);
  }
  double d;
  s->temperature = 0.7;
  if (rs_oa_param_num(m, "temperature", 0, 10, &s->temperature, e)) return -1;
  for (int k = 0; k < RS_OA_NSAMP; k++) {
    d = NAN;
    if (rs_oa_param_num(m, samp_params[k].name, samp_params[k].lo, samp_params[k].hi, &d, e)) return -1;
    s->samp_set[k] = !isnan(d);
    s->samp[k] = s->samp_set[k] ? d : samp_params[k].neutral;
  }
  s->explicit_sampling = true;
  if (rs_model_param(m, "sampling", buf, sizeof buf)) {
    if (!strcmp(buf, "server")) s->explicit_sampling = false;
    else if (strcmp(buf, "explicit")) return rs_errf(e, NULL, 0, "openai: sampling=%s: expected explicit or server", buf);
  }
  d = 4096;
  if (rs_oa_param_num(m, "max_tokens", 1, 1e7, &d, e)) return -1;
  s->max_tokens = (uint32_t)d;
  d = 1;
  if (rs_oa_param_num(m, "n", 1, 128, &d, e)) return -1;
  s->n = (uint32_t)d;
  if (d != (double)s->n) return rs_errf(e, NULL, 0, "openai: n=%g: expected a whole number of choices", d);
  s->dialect = RS_OA_SCHEMA_OPENAI; /* schema=1: the OpenAI form most servers read */
  if (rs_model_param(m, "schema", buf, sizeof buf)) {
    int k = !strcmp(buf, "1") ? RS_OA_SCHEMA_OPENAI : -1;
    for (int i = 0; i < RS_OA_NDIALECTS; i++)
      if (!strcmp(buf, rs_oa_dialect_name[i])) k = i;
    if (k < 0) return rs_errf(e, NULL, 0, "openai: schema=%s: expected openai (=1), llamacpp, vllm or 0", buf);
    s->dialect = k;
  }
  s->feedback = true;
  s->probe = true;
  if (rs_oa_param_bool(m, "feedback", &s->feedback, e) || rs_oa_param_bool(m, "probe", &s->probe, e) ||
      rs_oa_param_bool(m, "schema_strict", &s->strict, e))
    return -1;
  if (rs_model_param(m, "stop", buf, sizeof buf) && buf[0]) s->stop = rs_xstrndup(buf, strlen(buf));
  if (rs_model_param(m, "template", buf, sizeof buf)) {
    size_t len;
    rs_err fe;
    s->tmpl = rs_read_file(buf, &len, &fe);
    if (!s->tmpl) return rs_errf(e, NULL, 0, "openai: template: %s", fe.msg);
  } else {
    s->tmpl = rs_xstrndup(default_template, sizeof default_template - 1);
  }
  return 0;
}

void rs_oa_body_free(rs_oa_body *s) {
  free(s->seen);
  free(s->marks);
  free(s->model);
  free(s->stop);
  free(s->tmpl);
  memset(s, 0, sizeof *s);
}

/* ---- prompt and request ------------------------------------------------------------------ */

static void render_prompt(const rs_oa_body *s, const rs_gen_input *in, char **sys, char **user) {
  rs_sbuf regs = {0}, fb = {0};
  rs_oa_describe_registers(&regs, in->p);
  if (s->feedback && in->feedback && in->feedback[0]) {
    rs_sbuf_puts(&fb, "Your previous answer was rejected by the verifier:\n");
    rs_sbuf_puts(&fb, in->feedback);
    rs_sbuf_puts(&fb, "\nCorrect these problems in your new answer.\n");
  }
  const char *target = in->target ? in->target : in->p->tgt->name;
  const char *keys[] = {"target", "ir", "registers", "feedback", "instance"};
  const char *vals[] = {target, in->prompt ? in->prompt : "", regs.s ? regs.s : "", fb.s ? fb.s : "",
                        in->id ? in->id : ""};
  rs_oa_vars vars = {keys, vals, 5};
  /* {{user}} splits the template: the system message before it, the user message after it */
  const char *split = strstr(s->tmpl, "{{user}}");
  rs_sbuf a = {0}, b = {0};
  if (split) {
    size_t sl = (size_t)(split - s->tmpl);
    while (sl && (s->tmpl[sl - 1] == '\n' || s->tmpl[sl - 1] == ' ')) sl--;
    const char *u = split + 8;
    if (*u == '\n') u++;
    rs_oa_render(&a, s->tmpl, sl, &vars);
    rs_oa_render(&b, u, strlen(u), &vars);
  } else {
    rs_oa_render(&b, s->tmpl, strlen(s->tmpl), &vars);
  }
  free(regs.s);
  free(fb.s);
  *sys = a.s;
  *user = b.s;
}

void rs_oa_add_schema(cJSON *r, int dialect, cJSON *schema) {
  if (dialect == RS_OA_SCHEMA_OPENAI) { /* OpenAI's form: SGLang, vLLM, most llama.cpp versions */
    cJSON *rf = cJSON_AddObjectToObject(r, "response_format");
    cJSON_AddStringToObject(rf, "type", "json_schema");
    cJSON *js = cJSON_AddObjectToObject(rf, "json_schema");
    cJSON_AddStringToObject(js, "name", "allocation");
    cJSON_AddItemToObject(js, "schema", schema);
    cJSON_AddTrueToObject(js, "strict");
  } else if (dialect == RS_OA_SCHEMA_LLAMACPP) { /* llama.cpp server's top-level field */
    cJSON_AddItemToObject(r, "json_schema", schema);
  } else if (dialect == RS_OA_SCHEMA_VLLM) { /* vLLM >= 0.12 (guided_json was removed) */
    cJSON *so = cJSON_AddObjectToObject(r, "structured_outputs");
    cJSON_AddItemToObject(so, "json", schema);
  } else {
    cJSON_Delete(schema);
  }
}

cJSON *rs_oa_build_request(const rs_oa_body *s, const rs_gen_input *in) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "model", s->model);
  char *sys, *user;
  render_prompt(s, in, &sys, &user);
  if (s->chat) {
    cJSON *msgs = cJSON_AddArrayToObject(r, "messages");
    if (sys && sys[0]) {
      cJSON *mm = cJSON_CreateObject();
      cJSON_AddStringToObject(mm, "role", "system");
      cJSON_AddStringToObject(mm, "content", sys);
      cJSON_AddItemToArray(msgs, mm);
    }
    cJSON *mm = cJSON_CreateObject();
    cJSON_AddStringToObject(mm, "role", "user");
    cJSON_AddStringToObject(mm, "content", user);
    cJSON_AddItemToArray(msgs, mm);
  } else {
    rs_sbuf t = {0};
    if (sys && sys[0]) {
      rs_sbuf_puts(&t, sys);
      rs_sbuf_puts(&t, "\n");
    }
    rs_sbuf_puts(&t, user);
    cJSON_AddStringToObject(r, "prompt", t.s);
    free(t.s);
  }
  free(sys);
  free(user);
  cJSON_AddNumberToObject(r, "n", 1);
  cJSON_AddNumberToObject(r, "max_tokens", s->max_tokens);
  /* every sampling parameter the run means, neutral where it means "off": servers' defaults
   * differ (llama.cpp top_k 40, min_p 0.05, top_p 0.95; vLLM none), so "not sent" would make the
   * same spec sample differently per server. sampling=server sends only what the spec gives. */
  for (int k = 0; k < RS_OA_NSAMP; k++)
    if (s->explicit_sampling || s->samp_set[k]) cJSON_AddNumberToObject(r, samp_params[k].name, s->samp[k]);
  /* llama.cpp's own name; sent only when asked for (vLLM logs every field it does not know) */
  if (s->samp_set[RS_OA_REP_PEN]) cJSON_AddNumberToObject(r, "repeat_penalty", s->samp[RS_OA_REP_PEN]);
  if (s->stop) {
    cJSON *st = cJSON_AddArrayToObject(r, "stop");
    cJSON_AddItemToArray(st, cJSON_CreateString(s->stop));
  }
  if (s->dialect != RS_OA_SCHEMA_NONE) rs_oa_add_schema(r, s->dialect, rs_oa_schema_ex(in->p, in->vnames, s->strict));
  /* per-attempt fields, replaced for each attempt */
  cJSON_AddNumberToObject(r, "temperature", 0);
  cJSON_AddNumberToObject(r, "seed", 0);
  return r;
}

char *rs_oa_attempt_body(cJSON *req, const rs_oa_body *s, uint32_t attempt, uint64_t seed, uint32_t n) {
  /* attempt 0 is greedy (pass@1 of the model's best guess); the others sample */
  cJSON_ReplaceItemInObjectCaseSensitive(req, "temperature", cJSON_CreateNumber(attempt == 0 ? 0.0 : s->temperature));
  /* 31 bits: exact in JSON doubles and accepted by every server's seed type */
  cJSON_ReplaceItemInObjectCaseSensitive(req, "seed", cJSON_CreateNumber((double)(seed & 0x7fffffff)));
  cJSON_ReplaceItemInObjectCaseSensitive(req, "n", cJSON_CreateNumber(n ? n : 1));
  char *b = cJSON_PrintUnformatted(req);
  char *r = b ? rs_xstrndup(b, strlen(b)) : NULL;
  cJSON_free(b);
  return r;
}

void rs_oa_describe(const rs_oa_body *s, char *out, size_t n) {
  rs_sbuf b = {0};
  rs_sbuf_printf(&b, "schema=%s", rs_oa_dialect_name[s->dialect]);
  if (s->dialect != RS_OA_SCHEMA_NONE)
    rs_sbuf_printf(&b, " (probe: %s)", s->probe_note[0] ? s->probe_note : "not run");
  rs_sbuf_puts(&b, s->explicit_sampling ? "; sampling sent:" : "; sampling sent (else the server's defaults):");
  rs_sbuf_printf(&b, " temperature=%g", s->temperature);
  for (int k = 0; k < RS_OA_NSAMP; k++)
    if (s->explicit_sampling || s->samp_set[k]) rs_sbuf_printf(&b, " %s=%g", samp_params[k].name, s->samp[k]);
  if (s->n > 1) rs_sbuf_printf(&b, "; n=%u per request", (unsigned)s->n);
  if (s->server_note[0]) rs_sbuf_printf(&b, "; server: %s", s->server_note);
  if (s->n_ctx)
    rs_sbuf_printf(&b, "; context %u tokens (%s), prompts %s", (unsigned)s->n_ctx, s->ctx_src[0] ? s->ctx_src : "said",
                   s->tokenizer == RS_OA_TOK_LLAMACPP ? "counted by llama.cpp /tokenize before sending"
                   : s->tokenizer == RS_OA_TOK_VLLM ? "counted by vLLM /tokenize before sending"
                                                     : "not counted (no tokenizer endpoint)");
  snprintf(out, n, "%s", b.s ? b.s : "");
  free(b.s);
}

uint32_t rs_oa_group(const rs_oa_body *b, uint32_t attempt, uint32_t left) {
  if (b->n <= 1 || attempt == 0 || !left) return left ? 1 : 0;
  uint32_t end = (attempt / b->n + 1) * b->n; /* the group's end, exclusive */
  uint32_t cnt = end - attempt;
  return cnt < left ? cnt : left;
}
