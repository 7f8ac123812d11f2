/* chaitin.c - builtin:chaitin[?free=1]: Chaitin-Briggs colouring, deterministic. Every attempt
 * gives the same answer. free=1 minimizes registers used: it tries several colouring orders (with
 * and without copy coalescing) and keeps the cheapest valid one. */
#include "model/color.h"
#include "model/model.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  bool free_mode;
} chaitin;

static int open_(rs_model *m, rs_err *e) {
  (void)e;
  chaitin *c = rs_xcalloc(1, sizeof *c);
  char buf[16];
  const char *f = rs_model_param(m, "free", buf, sizeof buf);
  c->free_mode = f && strcmp(f, "0");
  m->state = c;
  return 0;
}

/* Best colouring of the Problem: out gets it, returns the uncoloured count. */
uint32_t rs_chaitin_allocate(const rs_problem *p, bool free_mode, rs_preg *out);
uint32_t rs_chaitin_allocate(const rs_problem *p, bool free_mode, rs_preg *out) {
  rs_color *c = rs_color_new(p);
  uint32_t bad = rs_color_run(c, RS_ORDER_BRIGGS, true, NULL, 1, out);
  /* no order helps when the pressure alone exceeds a file's budget (the function's, from its
   * launch bounds): it needs spilling */
  bool hopeless = false;
  for (uint32_t f = 0; f < p->tgt->nfiles && f < RS_MAX_FILES; f++)
    if (p->tgt->files[f].pressure && p->maxp[f] > p->budget[f]) hopeless = true;
  if ((free_mode || bad) && !hopeless) {
    rs_preg *tmp = rs_xcalloc(p->nvars + 1, sizeof *tmp);
    uint64_t best = bad ? UINT64_MAX : rs_color_cost(p, out);
    static const enum rs_color_order orders[] = {RS_ORDER_BRIGGS, RS_ORDER_WIDE_FIRST, RS_ORDER_PROGRAM};
    for (int o = 0; o < 3; o++)
      for (int h = 0; h < 2; h++) {
        uint32_t b = rs_color_run(c, orders[o], h == 0, NULL, 1, tmp);
        if (b > bad) continue;
        uint64_t cost = rs_color_cost(p, tmp);
        if (b < bad || cost < best) {
          bad = b;
          best = cost;
          memcpy(out, tmp, sizeof *out * p->nvars);
        }
      }
    /* still blocked: near the register limit the order decides; retry with fixed-seed
     * tie-breaking (deterministic, so builtin:chaitin stays reproducible) */
    for (uint64_t k = 1; k <= 64 && bad; k++) {
      uint64_t rng = k * 0x9e3779b97f4a7c15ull;
      uint32_t b = rs_color_run(c, orders[k % 3], k % 2 == 0, &rng, 1, tmp);
      if (b < bad) {
        bad = b;
        memcpy(out, tmp, sizeof *out * p->nvars);
      }
    }
    free(tmp);
  }
  rs_color_free(c);
  return bad;
}

/* Free mode from a valid colouring `start` (SASS: ptxas's own). `mine` gets our colouring,
 * lowered value by value (rs_color_descend); `out` the cheaper of it and `start` lowered the
 * same way, so never worse than `start`. Returns the values `mine` leaves uncoloured; *from_start
 * says which one `out` is. */
uint32_t rs_chaitin_allocate_from(const rs_problem *p, const rs_preg *start, rs_preg *mine, rs_preg *out,
                                  bool *from_start);
uint32_t rs_chaitin_allocate_from(const rs_problem *p, const rs_preg *start, rs_preg *mine, rs_preg *out,
                                  bool *from_start) {
  uint32_t bad = rs_chaitin_allocate(p, true, mine);
  rs_color *c = rs_color_new(p);
  if (!bad) rs_color_descend(c, mine);
  memcpy(out, start, sizeof *out * p->nvars);
  rs_color_descend(c, out);
  *from_start = bad || rs_color_cost(p, out) < rs_color_cost(p, mine);
  if (!*from_start) memcpy(out, mine, sizeof *out * p->nvars);
  rs_color_free(c);
  return bad;
}

static int generate(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                    rs_gen *out, rs_err *e) {
  (void)first, (void)seeds, (void)e;
  chaitin *c = m->state;
  double t0 = rs_now();
  rs_preg *a = rs_xcalloc(in->p->nvars + 1, sizeof *a);
  uint32_t bad = rs_chaitin_allocate(in->p, c->free_mode, a);
  char *json = rs_assignment_json(in->p, in->vnames, a);
  double dt = rs_now() - t0;
  for (uint32_t k = 0; k < n; k++) {
    out[k].text = rs_xstrndup(json, strlen(json));
    out[k].infer_s = k == 0 ? dt : 0; /* computed once; later attempts are copies */
    out[k].finish = RS_FINISH_STOP;
    if (bad) snprintf(out[k].error, sizeof out[k].error, "would need to spill: %u values not coloured", bad);
  }
  free(json);
  free(a);
  return 0;
}

static void close_(rs_model *m) { free(m->state); }

const rs_model_ops rs_model_chaitin = {"builtin:chaitin", open_, generate, close_, false};
