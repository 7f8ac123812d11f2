/* sampled.c - builtin:sampled?temp=T: a synthetic baseline, not a model. A seeded stochastic
 * allocator whose mistakes at T > 0 look like a model's, so the pass@k machinery gets
 * realistic, reproducible input without a GPU:
 *   attempt 0 (greedy)  the Chaitin-Briggs allocation, as a model decoding at temperature 0;
 *   later attempts      randomized colouring (choice among the first 1+4T legal registers), then
 *                       per value with probability 0.004T: moved onto a register of a value live
 *                       at the same time (dataflow); per value with probability 0.0012T: a
 *                       misaligned tuple, a wrong register file or a register past the budget
 *                       (hardware); per answer with probability 0.03T each: truncated JSON, a
 *                       dropped key, an unknown register name (syntax); with probability 0.2T the
 *                       answer is wrapped in prose and a ```json fence (accepted, counted).
 * Larger kernels therefore fail more often, as the paper's attention kernels do. */
#include "model/color.h"
#include "model/model.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  double temp;
} sampled;

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

/* The mistakes of one sampled attempt, applied to a valid-or-not assignment. */
static void mistakes(const rs_problem *p, const rs_color *c, double T, uint64_t *rng, rs_preg *a) {
  (void)c;
  const rs_target *t = p->tgt;
  for (uint32_t i = 0; i < p->nconf && T > 0; i++) {
    /* visiting conflicts rather than values keeps the move realistic: onto a neighbour */
    const rs_conflict *cf = &p->conf[i];
    double per_pair = 0.004 * T * p->nvars / (p->nconf ? p->nconf : 1);
    if (uniform(rng) >= per_pair) continue;
    int d = __builtin_ctzll(cf->lb) / 2 - __builtin_ctzll(cf->la) / 2;
    int64_t u = (int64_t)a[cf->b].unit + d;
    if (u >= 0 && rs_target_member(t, p->vars[cf->a].cls, (rs_preg){(uint32_t)u, p->vars[cf->a].full}) == RS_MEMBER_OK)
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
    } else if (f >= 0) {
      a[v].unit = t->files[f].first + t->files[f].budget; /* past the budget / file end */
    }
  }
}

static int generate(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                    rs_gen *out, rs_err *e) {
  (void)e;
  sampled *s = m->state;
  const rs_problem *p = in->p;
  rs_color *c = NULL;
  rs_preg *a = rs_xcalloc(p->nvars + 1, sizeof *a);
  for (uint32_t k = 0; k < n; k++) {
    double t0 = rs_now();
    uint64_t rng = seeds[k];
    uint32_t attempt = first + k;
    if (attempt == 0 || s->temp == 0) {
      rs_chaitin_allocate(p, false, a);
    } else {
      if (!c) c = rs_color_new(p);
      uint32_t spread = 1 + (uint32_t)(4 * s->temp);
      rs_color_run(c, RS_ORDER_BRIGGS, uniform(&rng) < 0.7, &rng, spread, a);
      mistakes(p, c, s->temp, &rng, a);
    }
    double T = attempt == 0 ? 0 : s->temp;
    if (T > 0 && uniform(&rng) < 0.03 * T && p->nvars) a[rs_rng_next(&rng) % p->nvars].lanes = 0; /* dropped key */
    char *json = rs_assignment_json(p, in->vnames, a);
    size_t len = strlen(json);
    if (T > 0 && uniform(&rng) < 0.03 * T) { /* an unknown register name: "v12" -> "q12" */
      char *val = strstr(json, ":\"");
      if (val) val[2] = 'q';
    }
    if (T > 0 && uniform(&rng) < 0.03 * T && len > 4) { /* truncated output */
      len = 1 + (size_t)(uniform(&rng) * (double)(len - 2));
      json[len] = 0;
    }
    if (T > 0 && uniform(&rng) < 0.2 * T) {
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
  return 0;
}

static void close_(rs_model *m) { free(m->state); }

const rs_model_ops rs_model_sampled = {"builtin:sampled", open_, generate, close_, false};
