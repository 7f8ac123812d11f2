/* openai_schema.c - what the openai: back end derives from the Problem: the JSON schema of the
 * answer (structured output), the register description of the prompt, and template rendering.
 * Kept apart from the HTTP client so each can be read (and tested) on its own. */
#include "model/openai_schema.h"
#include "analysis/problem.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decimal digits of the largest register number of a file: the bound of a pattern's numbers. A
 * bound at all keeps a weak model from running on with "v64212942637..." until max_tokens; the
 * file's digits (not its budget) still admit out-of-budget names like v300, which the verifier
 * judges (a hardware failure, not a syntax one). */
static unsigned file_digits(const rs_regfile *rf) {
  unsigned d = 1;
  for (uint32_t n = rf->count > 1 ? rf->count - 1 : 1; n >= 10; n /= 10) d++;
  return d;
}

/* One spelling alternative of a class in one file, as regex (re=true) or as prose. */
static void spelling(rs_sbuf *b, const rs_regfile *rf, const rs_regclass *c, bool re) {
  const char *pre = rf->asm_prefix;
  unsigned d = file_digits(rf);
  if (c->width <= 1) {
    rs_sbuf_puts(b, pre);
    if (re) rs_sbuf_printf(b, "[0-9]{1,%u}", d);
    else rs_sbuf_puts(b, "N");
    if (c->half) rs_sbuf_puts(b, c->half == 1 ? (re ? "\\.l" : ".l") : (re ? "\\.h" : ".h"));
  } else if (re) {
    rs_sbuf_printf(b, "%s\\[[0-9]{1,%u}:[0-9]{1,%u}\\]", pre, d, d);
  } else {
    rs_sbuf_printf(b, "%s[N:N+%u]", pre, (unsigned)c->width - 1);
  }
}

char *rs_oa_class_pattern(const rs_target *t, int cls) {
  if (cls < 0 || (uint32_t)cls >= t->nclasses) return NULL;
  const rs_regclass *c = &t->classes[cls];
  rs_sbuf alt = {0};
  unsigned nalt = 0;
  for (uint32_t f = 0; f < t->nfiles && f < 32; f++) {
    if (!(c->files >> f & 1) || !t->files[f].asm_prefix) continue;
    if (nalt++) rs_sbuf_puts(&alt, "|");
    spelling(&alt, &t->files[f], c, true);
  }
  /* allocatable specials (vcc for sreg_64) are legal answers too; their names are plain words */
  for (uint32_t s = 0; s < t->nspecials && s < 32; s++) {
    if (!(c->specials >> s & 1)) continue;
    if (nalt++) rs_sbuf_puts(&alt, "|");
    rs_sbuf_puts(&alt, t->specials[s].name);
  }
  if (!nalt) return NULL;
  rs_sbuf b = {0};
  rs_sbuf_puts(&b, nalt > 1 ? "^(" : "^");
  rs_sbuf_puts(&b, alt.s);
  rs_sbuf_puts(&b, nalt > 1 ? ")$" : "$");
  free(alt.s);
  return b.s;
}

cJSON *rs_oa_class_enum(const rs_problem *p, int cls) {
  const rs_target *t = p->tgt;
  if (cls < 0 || (uint32_t)cls >= t->nclasses || !t->format_preg) return NULL;
  const rs_regclass *c = &t->classes[cls];
  rs_lanes lanes = 0; /* the lanes a value of the class takes (a 16-bit half: one lane) */
  for (uint32_t v = 0; v < p->nvars && !lanes; v++)
    if (p->vars[v].cls == cls) lanes = p->vars[v].full;
  if (!lanes) lanes = c->half ? (c->half == 1 ? 1 : 2) : rs_lanes_full(c->width);
  cJSON *en = cJSON_CreateArray();
  char buf[48];
  for (uint32_t f = 0; f < t->nfiles && f < 32; f++) {
    if (!(c->files >> f & 1) || !t->files[f].asm_prefix) continue;
    for (uint32_t u = 0; u < t->files[f].count; u++) {
      rs_preg r = {t->files[f].first + u, lanes};
      /* the class's width and alignment, inside the file, off reserved units, within the
       * function's budget: exactly what the verifier accepts for this value alone */
      if (rs_problem_member(p, cls, r) != RS_MEMBER_OK) continue;
      cJSON_AddItemToArray(en, cJSON_CreateString(t->format_preg(t, r, buf, sizeof buf)));
    }
  }
  for (uint32_t sp = 0; sp < t->nspecials && sp < 32; sp++)
    if (c->specials >> sp & 1 && rs_problem_member(p, cls, t->specials[sp].reg) == RS_MEMBER_OK)
      cJSON_AddItemToArray(en, cJSON_CreateString(t->specials[sp].name));
  if (!cJSON_GetArraySize(en)) {
    cJSON_Delete(en);
    return NULL;
  }
  return en;
}

/* schema_strict: one "$defs" entry per class used, an enumeration of its registers, referenced
 * by every value of the class (1,500 values cost 1,500 short references, not 1,500 lists). A
 * regex cannot say "v[N:N+3] with N a multiple of 2"; an enumeration says it exactly. */
static cJSON *strict_schema(const rs_problem *p, const char *const *vnames) {
  const rs_target *t = p->tgt;
  cJSON *schema = cJSON_CreateObject();
  cJSON_AddStringToObject(schema, "type", "object");
  cJSON *defs = cJSON_AddObjectToObject(schema, "$defs");
  cJSON *props = cJSON_AddObjectToObject(schema, "properties");
  cJSON *req = cJSON_AddArrayToObject(schema, "required");
  signed char *have = rs_xcalloc(t->nclasses + 1, 1); /* 1: in $defs, -1: no register at all */
  for (uint32_t v = 0; v < p->nvars; v++) {
    const char *name = vnames ? vnames[v] : p->vars[v].name;
    int cls = p->vars[v].cls;
    cJSON *prop = cJSON_CreateObject();
    char ref[80];
    if (cls >= 0 && (uint32_t)cls < t->nclasses && !have[cls]) {
      cJSON *en = rs_oa_class_enum(p, cls);
      have[cls] = en ? 1 : -1;
      if (en) {
        cJSON *d = cJSON_AddObjectToObject(defs, t->classes[cls].name);
        cJSON_AddStringToObject(d, "type", "string");
        cJSON_AddItemToObject(d, "enum", en);
      }
    }
    if (cls >= 0 && (uint32_t)cls < t->nclasses && have[cls] > 0) {
      snprintf(ref, sizeof ref, "#/$defs/%s", t->classes[cls].name);
      cJSON_AddStringToObject(prop, "$ref", ref);
    } else {
      cJSON_AddStringToObject(prop, "type", "string");
    }
    cJSON_AddItemToObject(props, name, prop);
    cJSON_AddItemToArray(req, cJSON_CreateString(name));
  }
  cJSON_AddFalseToObject(schema, "additionalProperties");
  free(have);
  return schema;
}

cJSON *rs_oa_schema_ex(const rs_problem *p, const char *const *vnames, bool strict) {
  return strict ? strict_schema(p, vnames) : rs_oa_schema(p, vnames);
}

cJSON *rs_oa_schema(const rs_problem *p, const char *const *vnames) {
  const rs_target *t = p->tgt;
  /* one pattern per class, shared by reference: 1,500 values need only a handful of strings */
  char **pat = rs_xcalloc(t->nclasses + 1, sizeof *pat);
  bool *done = rs_xcalloc(t->nclasses + 1, sizeof *done);
  cJSON *schema = cJSON_CreateObject();
  cJSON_AddStringToObject(schema, "type", "object");
  cJSON *props = cJSON_AddObjectToObject(schema, "properties");
  cJSON *req = cJSON_AddArrayToObject(schema, "required");
  for (uint32_t v = 0; v < p->nvars; v++) {
    const char *name = vnames ? vnames[v] : p->vars[v].name;
    int cls = p->vars[v].cls;
    cJSON *prop = cJSON_CreateObject();
    cJSON_AddStringToObject(prop, "type", "string");
    if (cls >= 0 && (uint32_t)cls < t->nclasses) {
      if (!done[cls]) {
        pat[cls] = rs_oa_class_pattern(t, cls);
        done[cls] = true;
      }
      if (pat[cls]) cJSON_AddStringToObject(prop, "pattern", pat[cls]);
    }
    cJSON_AddItemToObject(props, name, prop);
    cJSON_AddItemToArray(req, cJSON_CreateString(name));
  }
  cJSON_AddFalseToObject(schema, "additionalProperties");
  for (uint32_t c = 0; c < t->nclasses; c++) free(pat[c]);
  free(pat);
  free(done);
  return schema;
}

void rs_oa_describe_registers(rs_sbuf *b, const rs_problem *p) {
  const rs_target *t = p->tgt;
  uint32_t used_files = 0;
  uint32_t *ncls = rs_xcalloc(t->nclasses + 1, sizeof *ncls);
  for (uint32_t v = 0; v < p->nvars; v++) {
    used_files |= p->vars[v].files;
    if (p->vars[v].cls >= 0 && (uint32_t)p->vars[v].cls < t->nclasses) ncls[p->vars[v].cls]++;
  }
  for (uint32_t f = 0; f < t->nfiles && f < 32; f++) {
    const rs_regfile *rf = &t->files[f];
    if (!(used_files >> f & 1) || !rf->asm_prefix) continue;
    rs_sbuf_printf(b, "- %s: 32-bit registers %s0 to %s%u", rf->name, rf->asm_prefix, rf->asm_prefix, rf->count - 1);
    /* the function's budget (launch bounds may lower the file's) is what the verifier enforces */
    uint32_t budget = p->budget[f] ? p->budget[f] : rf->budget;
    if (budget && budget < rf->count)
      rs_sbuf_printf(b, "; use only %s0 to %s%u", rf->asm_prefix, rf->asm_prefix, budget - 1);
    rs_sbuf_puts(b, "\n");
  }
  for (uint32_t c = 0; c < t->nclasses; c++) {
    if (!ncls[c]) continue;
    const rs_regclass *rc = &t->classes[c];
    rs_sbuf_printf(b, "- class %s (%u value%s): ", rc->name, ncls[c], ncls[c] == 1 ? "" : "s");
    if (rc->half) rs_sbuf_puts(b, rc->half == 1 ? "low 16 bits of one register, " : "high 16 bits of one register, ");
    else if (rc->width == 1) rs_sbuf_puts(b, "one register, ");
    else rs_sbuf_printf(b, "%u consecutive registers, ", (unsigned)rc->width);
    rs_sbuf_puts(b, "spelled ");
    unsigned nalt = 0;
    for (uint32_t f = 0; f < t->nfiles && f < 32; f++) {
      if (!(rc->files >> f & 1) || !t->files[f].asm_prefix) continue;
      if (nalt++) rs_sbuf_puts(b, " or ");
      spelling(b, &t->files[f], rc, false);
    }
    for (uint32_t s = 0; s < t->nspecials && s < 32; s++) {
      if (!(rc->specials >> s & 1)) continue;
      if (nalt++) rs_sbuf_puts(b, " or ");
      rs_sbuf_puts(b, t->specials[s].name);
    }
    if (rc->align > 1) rs_sbuf_printf(b, ", N a multiple of %u", (unsigned)rc->align);
    rs_sbuf_puts(b, "\n");
  }
  free(ncls);
}

void rs_oa_render(rs_sbuf *b, const char *tmpl, size_t len, const rs_oa_vars *vars) {
  const char *s = tmpl, *end = tmpl + len;
  while (s < end) {
    const char *o = NULL;
    for (const char *c = s; c + 1 < end; c++)
      if (c[0] == '{' && c[1] == '{') {
        o = c;
        break;
      }
    if (!o) {
      rs_sbuf_put(b, s, (size_t)(end - s));
      break;
    }
    rs_sbuf_put(b, s, (size_t)(o - s));
    const char *cl = NULL;
    for (const char *c = o + 2; c + 1 < end && c - o < 40; c++)
      if (c[0] == '}' && c[1] == '}') {
        cl = c;
        break;
      }
    const char *val = NULL;
    if (cl) {
      size_t kl = (size_t)(cl - o - 2);
      for (uint32_t i = 0; i < vars->n; i++)
        if (strlen(vars->key[i]) == kl && !memcmp(vars->key[i], o + 2, kl)) val = vars->val[i] ? vars->val[i] : "";
    }
    if (val) {
      rs_sbuf_puts(b, val);
      s = cl + 2;
    } else { /* not a placeholder we know: keep the text as written */
      rs_sbuf_put(b, o, 2);
      s = o + 2;
    }
  }
  if (!b->s) rs_sbuf_put(b, "", 0);
}
