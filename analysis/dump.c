/* dump.c - stable text and JSON dumps of a Problem (for people, diffs and tools). */
#include "analysis/problem.h"
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


char *rs_problem_text(const rs_problem *p) {
  const rs_target *t = p->tgt;
  rs_sbuf b = {0};
  rs_sbuf_printf(&b, "problem %s target %s values %u conflicts %u fixed %u hints %u\n", p->func,
            t->name, p->nvars, p->nconf, p->nfixed, p->nhints);
  rs_sbuf_printf(&b, "maxpressure");
  for (uint32_t f = 0; f < t->nfiles && f < RS_MAX_FILES; f++)
    if (t->files[f].pressure) rs_sbuf_printf(&b, " %s=%u", t->files[f].name, p->maxp[f]);
  if (p->flex_files) rs_sbuf_printf(&b, " union=%u", p->maxp_flex);
  rs_sbuf_printf(&b, "\n");
  char buf[64];
  for (uint32_t i = 0; i < p->nreserved; i++)
    rs_sbuf_printf(&b, "reserved %s\n", t->format_preg(t, p->reserved[i], buf, sizeof buf));
  for (uint32_t i = 0; i < p->nvars; i++)
    rs_sbuf_printf(&b, "value %s %s\n", p->vars[i].name, t->classes[p->vars[i].cls].name);
  for (uint32_t i = 0; i < p->nconf; i++) {
    const rs_conflict *c = &p->conf[i];
    rs_sbuf_printf(&b, "conflict %s:%llx %s:%llx\n", p->vars[c->a].name, (unsigned long long)c->la,
              p->vars[c->b].name, (unsigned long long)c->lb);
  }
  for (uint32_t i = 0; i < p->nfixed; i++) {
    const rs_fixed *x = &p->fixed[i];
    rs_sbuf_printf(&b, "fixed %s:%llx %s\n", p->vars[x->v].name, (unsigned long long)x->lv,
              t->format_preg(t, x->p, buf, sizeof buf));
  }
  for (uint32_t i = 0; i < p->nhints; i++) {
    const rs_hint *h = &p->hints[i];
    if (h->b >= 0)
      rs_sbuf_printf(&b, "hint %s %s %+d\n", p->vars[h->a].name, p->vars[h->b].name, h->off);
    else
      rs_sbuf_printf(&b, "hint %s %s %+d\n", p->vars[h->a].name,
                t->format_preg(t, (rs_preg){h->unit, 3}, buf, sizeof buf), h->off);
  }
  if (!b.s) b.s = rs_xstrndup("", 0);
  return b.s;
}

static cJSON *lanes_json(rs_lanes l) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)l);
  return cJSON_CreateString(buf);
}

char *rs_problem_json(const rs_problem *p) {
  const rs_target *t = p->tgt;
  char buf[64];
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "function", p->func);
  cJSON_AddStringToObject(o, "target", t->name);
  cJSON *mp = cJSON_AddObjectToObject(o, "max_pressure");
  for (uint32_t f = 0; f < t->nfiles && f < RS_MAX_FILES; f++)
    if (t->files[f].pressure) cJSON_AddNumberToObject(mp, t->files[f].name, p->maxp[f]);
  cJSON *rv = cJSON_AddArrayToObject(o, "reserved");
  for (uint32_t i = 0; i < p->nreserved; i++)
    cJSON_AddItemToArray(rv, cJSON_CreateString(t->format_preg(t, p->reserved[i], buf, sizeof buf)));
  cJSON *vs = cJSON_AddArrayToObject(o, "values");
  for (uint32_t i = 0; i < p->nvars; i++) {
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "name", p->vars[i].name);
    cJSON_AddStringToObject(v, "class", t->classes[p->vars[i].cls].name);
    cJSON_AddNumberToObject(v, "width", p->vars[i].width);
    cJSON_AddItemToArray(vs, v);
  }
  cJSON *cs = cJSON_AddArrayToObject(o, "conflicts");
  for (uint32_t i = 0; i < p->nconf; i++) {
    cJSON *c = cJSON_CreateArray();
    cJSON_AddItemToArray(c, cJSON_CreateString(p->vars[p->conf[i].a].name));
    cJSON_AddItemToArray(c, lanes_json(p->conf[i].la));
    cJSON_AddItemToArray(c, cJSON_CreateString(p->vars[p->conf[i].b].name));
    cJSON_AddItemToArray(c, lanes_json(p->conf[i].lb));
    cJSON_AddItemToArray(cs, c);
  }
  cJSON *fs = cJSON_AddArrayToObject(o, "fixed");
  for (uint32_t i = 0; i < p->nfixed; i++) {
    cJSON *c = cJSON_CreateArray();
    cJSON_AddItemToArray(c, cJSON_CreateString(p->vars[p->fixed[i].v].name));
    cJSON_AddItemToArray(c, lanes_json(p->fixed[i].lv));
    cJSON_AddItemToArray(c, cJSON_CreateString(t->format_preg(t, p->fixed[i].p, buf, sizeof buf)));
    cJSON_AddItemToArray(fs, c);
  }
  cJSON *hs = cJSON_AddArrayToObject(o, "hints");
  for (uint32_t i = 0; i < p->nhints; i++) {
    const rs_hint *h = &p->hints[i];
    cJSON *c = cJSON_CreateArray();
    cJSON_AddItemToArray(c, cJSON_CreateString(p->vars[h->a].name));
    cJSON_AddItemToArray(c, cJSON_CreateString(
        h->b >= 0 ? p->vars[h->b].name : t->format_preg(t, (rs_preg){h->unit, 3}, buf, sizeof buf)));
    cJSON_AddItemToArray(c, cJSON_CreateNumber(h->off));
    cJSON_AddItemToArray(hs, c);
  }
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  char *r = rs_xstrndup(s, strlen(s));
  cJSON_free(s);
  return r;
}
