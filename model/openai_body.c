/* openai_body.c - what a request of the openai: back end says: the request-shaping parameters of
 * the spec (model, api, sampling, stop, schema, template, feedback), the rendered prompt and the
 * JSON body. No HTTP here (model/openai.c sends it). */
#include "model/openai_int.h"
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

void rs_oa_identity(const char *query, rs_sb *out) {
  rs_sb_puts(out, "openai");
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
    rs_sb val = {0};
    for (size_t k = 0; k < vl; k++) { /* URL-decoded, so %2F and / are one identity */
      if (v[k] == '%' && k + 2 < vl && hexv(v[k + 1]) >= 0 && hexv(v[k + 2]) >= 0) {
        char ch = (char)(hexv(v[k + 1]) * 16 + hexv(v[k + 2]));
        rs_sb_add(&val, &ch, 1);
        k += 2;
      } else {
        rs_sb_add(&val, v[k] == '+' ? " " : &v[k], 1);
      }
    }
    if (!val.s) rs_sb_add(&val, "", 0);
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
      rs_sb_puts(out, nout++ ? "&" : "?");
      rs_sb_printf(out, "%s=", body_params[i].name);
      rs_sb_puts(out, norm);
    }
    free(val.s);
  }
}

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
  d = -1;
  if (rs_oa_param_num(m, "top_p", 0, 1, &d, e)) return -1;
  s->has_top_p = d >= 0;
  s->top_p = d;
  d = 4096;
  if (rs_oa_param_num(m, "max_tokens", 1, 1e7, &d, e)) return -1;
  s->max_tokens = (uint32_t)d;
  s->schema = true;
  s->feedback = true;
  if (rs_oa_param_bool(m, "schema", &s->schema, e) || rs_oa_param_bool(m, "feedback", &s->feedback, e)) return -1;
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
  free(s->model);
  free(s->stop);
  free(s->tmpl);
  memset(s, 0, sizeof *s);
}

/* ---- prompt and request ------------------------------------------------------------------ */

static void render_prompt(const rs_oa_body *s, const rs_gen_input *in, char **sys, char **user) {
  rs_sb regs = {0}, fb = {0};
  rs_oa_describe_registers(&regs, in->p);
  if (s->feedback && in->feedback && in->feedback[0]) {
    rs_sb_puts(&fb, "Your previous answer was rejected by the verifier:\n");
    rs_sb_puts(&fb, in->feedback);
    rs_sb_puts(&fb, "\nCorrect these problems in your new answer.\n");
  }
  const char *target = in->target ? in->target : in->p->tgt->name;
  const char *keys[] = {"target", "ir", "registers", "feedback", "instance"};
  const char *vals[] = {target, in->prompt ? in->prompt : "", regs.s ? regs.s : "", fb.s ? fb.s : "",
                        in->id ? in->id : ""};
  rs_oa_vars vars = {keys, vals, 5};
  /* {{user}} splits the template: the system message before it, the user message after it */
  const char *split = strstr(s->tmpl, "{{user}}");
  rs_sb a = {0}, b = {0};
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
    rs_sb t = {0};
    if (sys && sys[0]) {
      rs_sb_puts(&t, sys);
      rs_sb_puts(&t, "\n");
    }
    rs_sb_puts(&t, user);
    cJSON_AddStringToObject(r, "prompt", t.s);
    free(t.s);
  }
  free(sys);
  free(user);
  cJSON_AddNumberToObject(r, "n", 1);
  cJSON_AddNumberToObject(r, "max_tokens", s->max_tokens);
  if (s->has_top_p) cJSON_AddNumberToObject(r, "top_p", s->top_p);
  if (s->stop) {
    cJSON *st = cJSON_AddArrayToObject(r, "stop");
    cJSON_AddItemToArray(st, cJSON_CreateString(s->stop));
  }
  if (s->schema) {
    /* response_format json_schema: vLLM >= 0.12 dropped guided_json and ignores unknown keys,
     * SGLang and llama.cpp server accept this form too */
    cJSON *rf = cJSON_AddObjectToObject(r, "response_format");
    cJSON_AddStringToObject(rf, "type", "json_schema");
    cJSON *js = cJSON_AddObjectToObject(rf, "json_schema");
    cJSON_AddStringToObject(js, "name", "allocation");
    cJSON_AddItemToObject(js, "schema", rs_oa_schema(in->p, in->vnames));
    cJSON_AddTrueToObject(js, "strict");
  }
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
