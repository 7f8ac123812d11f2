/* sampled.c - builtin:sampled?temp=T: a synthetic baseline, not a model. A seeded stochastic
 * allocator whose mistakes look like a model's, so the pass@k machinery gets realistic,
 * reproducible input without a GPU. Each attempt has an error level E:
 *   attempt 0 (greedy)  the Chaitin-Briggs allocation, as a model decoding at temperature 0, with
 *                       E = 0.15: greedy decoding slips too, less often than sampling;
 *   later attempts      randomized colouring (choice among the first 1+4T legal registers), with
 *                       E = 0.15 + T (temp=0: every attempt greedy, each with its own slips);
 * then the mistakes, each drawn from the attempt's seed: per value with probability 0.004E moved
 * onto a register of a value live at the same time (dataflow); per value with probability 0.0012E
 * a misaligned tuple, a wrong register file or a register named past the end of its file, as a
 * model that runs out of registers writes it ("v256", "s[106:107]": hardware); per answer with
 * probability 0.03E each: truncated JSON, a dropped key, an unknown register name (syntax); with
 * probability 0.2E the answer is wrapped in prose and a ```json fence (accepted, counted).
 * Mistakes per value make larger kernels (attention: 3-10x the values of a GEMM) fail more often,
 * at attempt 0 too, as the paper's attention kernels do. */
#include "model/color.h"
#include "model/model.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  double temp;
} sampled;

#define E_GREEDY 0.15 /* error level of a greedy (temperature 0) attempt */

uint32_t rs_chaitin_allocate(const rs_problem *p, bool free_mode, rs_preg *out);

static int open_(rs_model *m, rs_err *e) {
  sampled *s = rs_xcalloc(1, sizeof *s);
  m->state = s;
  char buf[32];
  const char *t = rs_model_param(m, "temp", buf, sizeof buf);
  s->temp = t ? strtod(t, NULL) : 0.5;
  if (s->temp < 0 || s->temp > 2) return rs_errf(e, NULL, 0, "%s: temp must be in [0, 2]", m->spec);
  return 0;
}

static double uniform(uint64_t *rng) { return (double)(rs_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0); }

/* The mistakes of one attempt at error level T, applied to a valid-or-not assignment. A value
 * named past the end of its file gets past[v] = registers beyond the end + 1 (0: none): the
 * assignment cannot hold such a register, the answer's text is rewritten (past_names). */
static void mistakes(const rs_problem *p, double T, uint64_t *rng, rs_preg *a, uint32_t *past) {
  const rs_target *t = p->tgt;
  for (uint32_t i = 0; i < p->nconf && T > 0; i++) {
    /* visiting conflicts rather than values keeps the move realistic: onto a neighbour */
    const rs_conflict *cf = &p->conf[i];
    double per_pair = 0.004 * T * p->nvars / (p->nconf ? p->nconf : 1);
    if (uniform(rng) >= per_pair) continue;
    int d = __builtin_ctzll(cf->lb) / 2 - __builtin_ctzll(cf->la) / 2;
    int64_t u = (int64_t)a[cf->b].unit + d;
    if (u >= 0 && rs_problem_member(p, p->vars[cf->a].cls, (rs_preg){(uint32_t)u, p->vars[cf->a].full}) == RS_MEMBER_OK)
      a[cf->a].unit = (uint32_t)u;
  }
  for (uint32_t v = 0; v < p->nvars; v++) {
    if (uniform(rng) >= 0.0012 * T) continue;
    int kind = (int)(rs_rng_next(rng) % 3);
    int f = rs_target_file_of(t, a[v].unit);
    if (kind == 0 && t->classes[p->vars[v].cls].align > 1) {
      a[v].unit += 1; /* misaligned tuple */
    } else if (kind == 1) {
      for (uint32_t g = 0; g < t->nfiles; g++) /* another register file */
        if (t->files[g].asm_prefix && (int)g != f && !(p->vars[v].files >> g & 1)) {
          a[v].unit = t->files[g].first + (a[v].unit - (f >= 0 ? t->files[f].first : 0)) % t->files[g].count;
          break;
        }
    } else if (f >= 0 && t->files[f].asm_prefix) {
      past[v] = 1 + (uint32_t)(rs_rng_next(rng) % 16); /* past the end of the file */
    }
  }
}

/* Rewrite the registers of the values named past their file's end: "v256", "s[106:107]". */
static char *past_names(const rs_problem *p, const char *const *vnames, const rs_preg *a, const uint32_t *past,
                        char *json) {
  cJSON *o = cJSON_Parse(json);
  if (!o) return json;
  const rs_target *t = p->tgt;
  for (uint32_t v = 0; v < p->nvars; v++) {
    if (!past[v] || !a[v].lanes) continue;
    int f = rs_target_file_of(t, a[v].unit);
    if (f < 0) continue;
    unsigned w = rs_lanes_units(a[v].lanes), al = t->classes[p->vars[v].cls].align;
    unsigned idx = t->files[f].count + past[v] - 1;
    if (al > 1) idx -= idx % al; /* keeps the model's alignment right: only the range is wrong */
    if (idx < t->files[f].count) idx += al;
    char buf[48];
    if (w <= 1) snprintf(buf, sizeof buf, "%s%u", t->files[f].asm_prefix, idx);
    else snprintf(buf, sizeof buf, "%s[%u:%u]", t->files[f].asm_prefix, idx, idx + w - 1);
    cJSON_ReplaceItemInObjectCaseSensitive(o, vnames ? vnames[v] : p->vars[v].name, cJSON_CreateString(buf));
  }
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  free(json);
  char *r = rs_xstrndup(s, strlen(s));
  cJSON_free(s);
  return r;
}

static int generate(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                    rs_gen *out, rs_err *e) {
  (void)e;
  sampled *s = m->state;
  const rs_problem *p = in->p;
  rs_color *c = NULL;
  rs_preg *a = rs_xcalloc(p->nvars + 1, sizeof *a);
  uint32_t *past = rs_xcalloc(p->nvars + 1, sizeof *past);
  for (uint32_t k = 0; k < n; k++) {
    double t0 = rs_now();
    uint64_t rng = seeds[k];
    uint32_t attempt = first + k;
    bool greedy = attempt == 0 || s->temp == 0;
    if (greedy) {
      rs_chaitin_allocate(p, false, a);
    } else {
      if (!c) c = rs_color_new(p);
      uint32_t spread = 1 + (uint32_t)(4 * s->temp);
      rs_color_run(c, RS_ORDER_BRIGGS, uniform(&rng) < 0.7, &rng, spread, a);
    }
    double T = greedy ? E_GREEDY : E_GREEDY + s->temp;
    memset(past, 0, sizeof *past * p->nvars);
    mistakes(p, T, &rng, a, past);
    if (uniform(&rng) < 0.03 * T && p->nvars) a[rs_rng_next(&rng) % p->nvars].lanes = 0; /* dropped key */
    char *json = rs_assignment_json(p, in->vnames, a);
    for (uint32_t v = 0; v < p->nvars; v++)
      if (past[v]) {
        json = past_names(p, in->vnames, a, past, json);
        break;
      }
    size_t len = strlen(json);
    if (uniform(&rng) < 0.03 * T) { /* an unknown register name: "v12" -> "q12" */
      char *val = strstr(json, ":\"");
      if (val) val[2] = 'q';
    }
    if (uniform(&rng) < 0.03 * T && len > 4) { /* truncated output */
      len = 1 + (size_t)(uniform(&rng) * (double)(len - 2));
      json[len] = 0;
    }
    if (uniform(&rng) < 0.2 * T) {
      size_t cap = len + 128;
      char *w = rs_xmalloc(cap);
      snprintf(w, cap, "Here is the register allocation:\n```json\n%s\n```\n", json);
      free(json);
      json = w;
      len = strlen(w);
    }
    out[k].text = json;
    out[k].finish = RS_FINISH_STOP;
    out[k].completion_tokens = (uint32_t)(len / 4); /* an estimate: about 4 characters a token */
    out[k].prompt_tokens = in->prompt ? (uint32_t)(strlen(in->prompt) / 4) : 0;
    out[k].infer_s = rs_now() - t0;
  }
  rs_color_free(c);
  free(a);
  free(past);
  return 0;
}

static void close_(rs_model *m) { free(m->state); }

const rs_model_ops rs_model_sampled = {"builtin:sampled", open_, generate, close_, false};
