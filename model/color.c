/* color.c - Chaitin-Briggs colouring over the Problem: class- and alignment-aware placements,
 * lane-aware interference, fixed-register exclusions, copy hints for coalescing. */
#include "model/color.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint32_t other;
  rs_lanes mine, theirs; /* my lanes vs their lanes that must not overlap */
} nbr;

struct rs_color {
  const rs_problem *p;
  uint32_t *nstart; /* adjacency in CSR form */
  nbr *adj;
  uint32_t *fstart; /* fixed exclusions per value (indices into p->fixed) */
  uint32_t *fidx;
  uint32_t **legal; /* per class: legal base units in preference order; count in nlegal */
  uint32_t *nlegal;
  uint32_t *deg;    /* weighted degree: sum of neighbour widths */
};

uint64_t rs_rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static bool reserved_by_fn(const rs_problem *p, uint32_t unit, rs_lanes l) {
  for (uint32_t k = 0; k < p->nreserved; k++)
    if (rs_lanes_overlap(unit, l, p->reserved[k].unit, p->reserved[k].lanes)) return true;
  return false;
}

rs_color *rs_color_new(const rs_problem *p) {
  rs_color *c = rs_xcalloc(1, sizeof *c);
  c->p = p;
  uint32_t n = p->nvars;
  c->nstart = rs_xcalloc(n + 2, sizeof *c->nstart);
  for (uint32_t i = 0; i < p->nconf; i++) {
    c->nstart[p->conf[i].a + 1]++;
    c->nstart[p->conf[i].b + 1]++;
  }
  for (uint32_t v = 0; v < n; v++) c->nstart[v + 1] += c->nstart[v];
  c->adj = rs_xmalloc(sizeof *c->adj * (2 * (size_t)p->nconf + 1));
  uint32_t *fill = rs_xmalloc(sizeof *fill * (n + 1));
  memcpy(fill, c->nstart, sizeof *fill * (n + 1));
  for (uint32_t i = 0; i < p->nconf; i++) {
    const rs_conflict *cf = &p->conf[i];
    c->adj[fill[cf->a]++] = (nbr){cf->b, cf->la, cf->lb};
    c->adj[fill[cf->b]++] = (nbr){cf->a, cf->lb, cf->la};
  }
  c->fstart = rs_xcalloc(n + 2, sizeof *c->fstart);
  for (uint32_t i = 0; i < p->nfixed; i++) c->fstart[p->fixed[i].v + 1]++;
  for (uint32_t v = 0; v < n; v++) c->fstart[v + 1] += c->fstart[v];
  c->fidx = rs_xmalloc(sizeof *c->fidx * (p->nfixed + 1));
  memcpy(fill, c->fstart, sizeof *fill * (n + 1));
  for (uint32_t i = 0; i < p->nfixed; i++) c->fidx[fill[p->fixed[i].v]++] = i;
  free(fill);
  const rs_target *t = p->tgt;
  c->legal = rs_xcalloc(t->nclasses, sizeof *c->legal);
  c->nlegal = rs_xcalloc(t->nclasses, sizeof *c->nlegal);
  for (uint32_t v = 0; v < n; v++) {
    int cls = p->vars[v].cls;
    if (c->legal[cls]) continue;
    c->legal[cls] = rs_xmalloc(sizeof **c->legal * (t->nunits + 1));
    for (uint32_t u = 0; u < t->nunits; u++)
      if (rs_problem_member(p, cls, (rs_preg){u, p->vars[v].full}) == RS_MEMBER_OK &&
          !reserved_by_fn(p, u, p->vars[v].full))
        c->legal[cls][c->nlegal[cls]++] = u;
  }
  /* A class that may use several files (AMDGPU av_*: VGPR or AGPR; NVIDIA predicates: P or R)
   * first tries the file the single-file values demand least, so they keep room where only they
   * fit; on a tie the smaller file (P before R: a predicate in R costs an R register). */
  double demand[RS_MAX_FILES] = {0};
  for (uint32_t v = 0; v < n; v++) {
    uint32_t fm = p->vars[v].files;
    if (fm && !(fm & (fm - 1))) demand[__builtin_ctz(fm) % RS_MAX_FILES] += p->vars[v].width;
  }
  for (uint32_t f = 0; f < t->nfiles && f < RS_MAX_FILES; f++) demand[f] /= p->budget[f] ? p->budget[f] : 1;
  for (uint32_t k = 0; k < t->nclasses; k++) {
    if (!c->legal[k] || !(t->classes[k].files & (t->classes[k].files - 1))) continue;
    uint32_t *l = c->legal[k], nl = c->nlegal[k], *tmp = rs_xmalloc(sizeof *tmp * (nl + 1)), m = 0;
    uint32_t order[RS_MAX_FILES], no = 0;
    for (uint32_t f = 0; f < t->nfiles && f < RS_MAX_FILES; f++)
      if (t->classes[k].files >> f & 1) order[no++] = f;
    for (uint32_t i = 1; i < no; i++)
      for (uint32_t j = i; j > 0 && (demand[order[j]] < demand[order[j - 1]] ||
                                     (demand[order[j]] == demand[order[j - 1]] &&
                                      t->files[order[j]].count < t->files[order[j - 1]].count));
           j--) {
        uint32_t x = order[j]; order[j] = order[j - 1]; order[j - 1] = x;
      }
    for (uint32_t i = 0; i < no; i++)
      for (uint32_t q = 0; q < nl; q++)
        if (rs_target_file_of(t, l[q]) == (int)order[i]) tmp[m++] = l[q];
    for (uint32_t q = 0; q < nl; q++) /* specials and anything else keep their place at the end */
      if (rs_target_file_of(t, l[q]) < 0 || !(t->classes[k].files >> rs_target_file_of(t, l[q]) & 1)) tmp[m++] = l[q];
    memcpy(l, tmp, sizeof *l * nl);
    free(tmp);
  }
  c->deg = rs_xcalloc(n + 1, sizeof *c->deg);
  for (uint32_t v = 0; v < n; v++)
    for (uint32_t k = c->nstart[v]; k < c->nstart[v + 1]; k++) c->deg[v] += p->vars[c->adj[k].other].width;
  return c;
}

void rs_color_free(rs_color *c) {
  if (!c) return;
  for (uint32_t k = 0; k < c->p->tgt->nclasses; k++) free(c->legal[k]);
  free(c->legal);
  free(c->nlegal);
  free(c->nstart);
  free(c->adj);
  free(c->fstart);
  free(c->fidx);
  free(c->deg);
  free(c);
}

static bool fits(const rs_color *c, uint32_t v, uint32_t u, const rs_preg *out) {
  for (uint32_t k = c->nstart[v]; k < c->nstart[v + 1]; k++) {
    const nbr *b = &c->adj[k];
    if (out[b->other].lanes && rs_lanes_overlap(u, b->mine, out[b->other].unit, b->theirs)) return false;
  }
  for (uint32_t k = c->fstart[v]; k < c->fstart[v + 1]; k++) {
    const rs_fixed *x = &c->p->fixed[c->fidx[k]];
    if (rs_lanes_overlap(u, x->lv, x->p.unit, x->p.lanes)) return false;
  }
  return true;
}

static bool is_legal(const rs_color *c, uint32_t v, int64_t u) {
  const rs_problem *p = c->p;
  return u >= 0 && rs_problem_member(p, p->vars[v].cls, (rs_preg){(uint32_t)u, p->vars[v].full}) == RS_MEMBER_OK &&
         !reserved_by_fn(p, (uint32_t)u, p->vars[v].full);
}

typedef struct {
  const rs_color *c;
  enum rs_color_order order;
  const uint32_t *tie;
} sortctx;

/* Order for the stack (values pushed first are coloured last). */
static uint32_t simplify_order(const rs_color *c, enum rs_color_order order, uint64_t *rng, uint32_t *stack) {
  const rs_problem *p = c->p;
  uint32_t n = p->nvars, top = 0;
  if (order != RS_ORDER_BRIGGS) {
    /* colour in a fixed priority: wide values first, or program order (linear-scan-like) */
    uint64_t *key = rs_xmalloc(sizeof *key * (n + 1));
    for (uint32_t v = 0; v < n; v++) {
      uint64_t r = rng ? rs_rng_next(rng) & 0xFFF : 0;
      key[v] = order == RS_ORDER_WIDE_FIRST ? ((uint64_t)(64 - p->vars[v].width) << 44) | ((uint64_t)(0xFFFFF - (c->deg[v] & 0xFFFFF)) << 12) | r
                                            : ((uint64_t)p->vars[v].order << 12) | r;
      stack[v] = v;
    }
    /* colour order ascending key = stack popped from the top: store descending */
    for (uint32_t i = 1; i < n; i++)
      for (uint32_t j = i; j > 0 && key[stack[j]] > key[stack[j - 1]]; j--) {
        uint32_t t = stack[j]; stack[j] = stack[j - 1]; stack[j - 1] = t;
      }
    free(key);
    return n;
  }
  /* Briggs: repeatedly remove the value with the smallest remaining weighted degree relative to
   * its register count; ties broken by the rng. Optimistic: blocked values are pushed too. */
  uint32_t *d = rs_xmalloc(sizeof *d * (n + 1));
  memcpy(d, c->deg, sizeof *d * (n + 1));
  uint8_t *gone = rs_xcalloc(n + 1, 1);
  uint32_t *noise = rs_xmalloc(sizeof *noise * (n + 1));
  for (uint32_t v = 0; v < n; v++) noise[v] = rng ? (uint32_t)(rs_rng_next(rng) & 0xFF) : 0;
  for (top = 0; top < n; top++) {
    int64_t best = -1;
    uint64_t bk = UINT64_MAX;
    for (uint32_t v = 0; v < n; v++) {
      if (gone[v]) continue;
      uint32_t k = c->nlegal[p->vars[v].cls] ? c->nlegal[p->vars[v].cls] : 1;
      uint64_t key = ((uint64_t)d[v] * 1024 / k) << 8 | noise[v];
      if (key < bk) bk = key, best = v;
    }
    gone[best] = 1;
    stack[top] = (uint32_t)best;
    for (uint32_t k = c->nstart[best]; k < c->nstart[best + 1]; k++) {
      uint32_t o = c->adj[k].other;
      uint32_t w = p->vars[best].width;
      d[o] = d[o] > w ? d[o] - w : 0;
    }
  }
  free(d);
  free(gone);
  free(noise);
  return n;
}

/* The one neighbour blocking placement u of v, or -1 if none or several block it. */
static int64_t sole_blocker(const rs_color *c, uint32_t v, uint32_t u, const rs_preg *out) {
  int64_t who = -1;
  for (uint32_t k = c->fstart[v]; k < c->fstart[v + 1]; k++) {
    const rs_fixed *x = &c->p->fixed[c->fidx[k]];
    if (rs_lanes_overlap(u, x->lv, x->p.unit, x->p.lanes)) return -1;
  }
  for (uint32_t k = c->nstart[v]; k < c->nstart[v + 1]; k++) {
    const nbr *b = &c->adj[k];
    if (!out[b->other].lanes || !rs_lanes_overlap(u, b->mine, out[b->other].unit, b->theirs)) continue;
    if (who >= 0 && who != b->other) return -1;
    who = b->other;
  }
  return who;
}

/* Repair a blocked value: take a placement blocked by exactly one neighbour and move that
 * neighbour to another legal register where it fits (a one-step Kempe-style recolouring). */
static bool repair(const rs_color *c, uint32_t v, rs_preg *out) {
  const rs_problem *p = c->p;
  int cls = p->vars[v].cls;
  for (uint32_t k = 0; k < c->nlegal[cls]; k++) {
    uint32_t u = c->legal[cls][k];
    int64_t w = sole_blocker(c, v, u, out);
    if (w < 0) continue;
    rs_preg saved = out[w];
    out[v] = (rs_preg){u, p->vars[v].full};
    out[w].lanes = 0;
    int wc = p->vars[w].cls;
    for (uint32_t q = 0; q < c->nlegal[wc]; q++) {
      uint32_t uw = c->legal[wc][q];
      if (uw != saved.unit && fits(c, (uint32_t)w, uw, out)) {
        out[w] = (rs_preg){uw, p->vars[w].full};
        return true;
      }
    }
    out[w] = saved;
    out[v].lanes = 0;
  }
  return false;
}

uint32_t rs_color_run(rs_color *c, enum rs_color_order order, bool hints, uint64_t *rng, uint32_t spread,
                      rs_preg *out) {
  const rs_problem *p = c->p;
  uint32_t n = p->nvars, uncolored = 0;
  memset(out, 0, sizeof *out * (n + 1));
  uint32_t *stack = rs_xmalloc(sizeof *stack * (n + 1));
  uint32_t top = simplify_order(c, order, rng, stack);
  if (spread < 1) spread = 1;
  uint32_t *cand = rs_xmalloc(sizeof *cand * (spread + 1));
  while (top > 0) {
    uint32_t v = stack[--top];
    int cls = p->vars[v].cls;
    bool done = false;
    if (hints) /* coalesce: take a copy partner's register when it is legal and free */
      for (uint32_t h = 0; h < p->nhints && !done; h++) {
        const rs_hint *hh = &p->hints[h];
        int64_t u = -1;
        if (hh->a == v && hh->b >= 0 && out[hh->b].lanes) u = (int64_t)out[hh->b].unit + hh->off;
        else if (hh->b == (int32_t)v && out[hh->a].lanes) u = (int64_t)out[hh->a].unit - hh->off;
        else if (hh->a == v && hh->b < 0) u = (int64_t)hh->unit + hh->off;
        if (u >= 0 && is_legal(c, v, u) && fits(c, v, (uint32_t)u, out)) {
          out[v] = (rs_preg){(uint32_t)u, p->vars[v].full};
          done = true;
        }
      }
    uint32_t nc = 0;
    for (uint32_t k = 0; k < c->nlegal[cls] && !done && nc < spread; k++) {
      uint32_t u = c->legal[cls][k];
      if (fits(c, v, u, out)) cand[nc++] = u;
    }
    if (!done && nc) {
      uint32_t pick = rng && nc > 1 ? (uint32_t)(rs_rng_next(rng) % nc) : 0;
      out[v] = (rs_preg){cand[pick], p->vars[v].full};
      done = true;
    }
    if (!done && repair(c, v, out)) done = true;
    if (!done) uncolored++;
  }
  free(cand);
  free(stack);
  return uncolored;
}

uint32_t rs_color_descend(rs_color *c, rs_preg *a) {
  const rs_problem *p = c->p;
  const rs_target *t = p->tgt;
  uint32_t n = p->nvars, moves = 0, *ord = rs_xmalloc(sizeof *ord * (n + 1));
  for (bool moved = true; moved;) {
    moved = false;
    uint32_t m = 0;
    for (uint32_t v = 0; v < n; v++)
      if (a[v].lanes) ord[m++] = v;
    /* highest registers first: they decide the count (insertion sort by unit, descending) */
    for (uint32_t i = 1; i < m; i++)
      for (uint32_t j = i; j > 0 && a[ord[j]].unit > a[ord[j - 1]].unit; j--) {
        uint32_t x = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = x;
      }
    for (uint32_t i = 0; i < m; i++) {
      uint32_t v = ord[i], u0 = a[v].unit;
      int cls = p->vars[v].cls, f0 = rs_target_file_of(t, u0);
      for (uint32_t k = 0; k < c->nlegal[cls]; k++) {
        uint32_t u = c->legal[cls][k];
        if (u >= u0 || rs_target_file_of(t, u) != f0) continue;
        a[v].lanes = 0; /* not its own neighbour */
        bool ok = fits(c, v, u, a);
        a[v] = (rs_preg){ok ? u : u0, p->vars[v].full};
        if (ok) {
          moves++;
          moved = true;
          break;
        }
      }
    }
  }
  free(ord);
  return moves;
}

void rs_color_used(const rs_problem *p, const rs_preg *a, unsigned *used) {
  const rs_target *t = p->tgt;
  memset(used, 0, sizeof *used * RS_MAX_FILES);
  for (uint32_t v = 0; v < p->nvars; v++) {
    if (!a[v].lanes) continue;
    int f = rs_target_file_of(t, a[v].unit);
    if (f < 0 || f >= RS_MAX_FILES || !t->files[f].pressure) continue;
    unsigned top = a[v].unit - t->files[f].first + rs_lanes_units(a[v].lanes);
    if (top > used[f]) used[f] = top;
  }
  for (uint32_t i = 0; i < p->nfixed; i++) {
    int f = rs_target_file_of(t, p->fixed[i].p.unit);
    if (f < 0 || f >= RS_MAX_FILES || !t->files[f].pressure) continue;
    unsigned top = p->fixed[i].p.unit - t->files[f].first + rs_lanes_units(p->fixed[i].p.lanes);
    if (top > used[f]) used[f] = top;
  }
}

uint64_t rs_color_cost(const rs_problem *p, const rs_preg *a) {
  unsigned used[RS_MAX_FILES];
  rs_color_used(p, a, used);
  const rs_target *t = p->tgt;
  uint64_t main = 0, rest = 0;
  for (uint32_t f = 0; f < t->nfiles && f < RS_MAX_FILES; f++) {
    if (!t->files[f].pressure) continue;
    /* the file that bounds occupancy: vector registers on AMD, R on NVIDIA (the widest file) */
    if (t->files[f].count >= 255) main += used[f];
    else rest += used[f];
  }
  return main << 16 | rest;
}
