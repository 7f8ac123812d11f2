/* reach.c - the def-use links of a semantic graph (ptx/sem.c builds it, ptx/match.c colours it):
 * which sites reach each read, over the function's CFG, and the same with copies and selects
 * looked through. A predicated def keeps the old value, except for a read under the same guard
 * with the guard unchanged since (if-converted code: `@!P0 SHF R6 ...; @!P0 STS [R6.X4]`). */
#include "ptx/match.h"
#include <stdlib.h>
#include <string.h>

void rs_sgraph_reaching(rs_sgraph *g, const uint32_t *gloc, const uint8_t *gneg) {
  const rs_func *f = g->f;
  uint32_t *first = rs_xmalloc(sizeof *first * (g->nlocs + 1)), *next = rs_xmalloc(sizeof *next * (g->nsites + 1));
  for (uint32_t l = 0; l <= g->nlocs; l++) first[l] = UINT32_MAX;
  for (uint32_t s = g->nsites; s-- > 0;) {
    next[s] = first[g->sites[s].loc];
    first[g->sites[s].loc] = s;
  }
  /* per instruction, its sites and uses (both are in instruction order) */
  uint32_t *sfirst = rs_xcalloc(f->ninsts + 1, sizeof *sfirst), *ufirst = rs_xcalloc(f->ninsts + 1, sizeof *ufirst);
  for (uint32_t s = 0; s < g->nsites; s++) sfirst[g->sites[s].inst + 1]++;
  for (uint32_t u = 0; u < g->nuses; u++) ufirst[g->uses[u].inst + 1]++;
  for (uint32_t i = 0; i < f->ninsts; i++) sfirst[i + 1] += sfirst[i], ufirst[i + 1] += ufirst[i];
  size_t W = RS_WORDS(g->nsites) + 1;
  rs_word *in = rs_xcalloc(W * (f->nblocks + 1), sizeof *in), *out = rs_xcalloc(W * (f->nblocks + 1), sizeof *out);
  rs_word *cur = rs_xcalloc(W, sizeof *cur);
  bool *cond = rs_xcalloc(g->nsites + 1, 1);
  int64_t *lg_key = rs_xmalloc(sizeof *lg_key * (g->nlocs + 1));
  uint32_t *lg_site = rs_xcalloc(g->nlocs + 1, sizeof *lg_site), *lg_ep = rs_xcalloc(g->nlocs + 1, sizeof *lg_ep);
  uint32_t *ep = rs_xcalloc(g->nlocs + 1, sizeof *ep);
  for (uint32_t i = 0; i < f->ninsts; i++)
    if (f->insts[i].flags & RS_I_PREDICATED)
      for (uint32_t s = sfirst[i]; s < sfirst[i + 1]; s++) cond[s] = true;
  for (int pass = 0; pass < 2; pass++) {
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t bi = 0; bi < f->nblocks; bi++) {
        const rs_block *bl = &f->blocks[bi];
        rs_word *bin = in + W * bi;
        for (uint32_t p = 0; p < bl->npreds; p++)
          for (size_t w = 0; w < W; w++) bin[w] |= out[W * bl->preds[p] + w];
        memcpy(cur, bin, W * sizeof *cur);
        if (pass == 1)
          for (uint32_t l = 0; l < g->nlocs; l++) lg_key[l] = -1;
        for (uint32_t k = 0; k < bl->ninsts; k++) {
          uint32_t ii = bl->first_inst + k;
          int64_t key = gloc[ii] == UINT32_MAX ? -2 : (int64_t)gloc[ii] * 2 + gneg[ii];
          if (pass == 1)
            for (uint32_t u = ufirst[ii]; u < ufirst[ii + 1]; u++) {
              rs_suse *x = &g->uses[u];
              for (unsigned q = 0; q < x->w; q++) {
                uint32_t l = x->loc + q;
                x->raw[q] = g->nsrcs;
                /* if-converted code: a def under the same guard, guard unchanged since, is the
                 * only def this guarded use can see */
                if (key >= 0 && lg_key[l] == key && lg_ep[l] == ep[gloc[ii]]) {
                  RS_PUSH(g->srcs, g->nsrcs, g->capsrcs, lg_site[l]);
                  continue;
                }
                for (uint32_t s = first[l]; s != UINT32_MAX; s = next[s])
                  if (rs_bs_get(cur, s)) RS_PUSH(g->srcs, g->nsrcs, g->capsrcs, s);
              }
              x->raw[x->w] = g->nsrcs;
            }
          for (uint32_t s = sfirst[ii]; s < sfirst[ii + 1]; s++) {
            uint32_t l = g->sites[s].loc;
            if (!cond[s])
              for (uint32_t o = first[l]; o != UINT32_MAX; o = next[o]) rs_bs_clr(cur, o);
            if (pass == 1) {
              lg_key[l] = cond[s] && key >= 0 ? key : -1;
              lg_site[l] = s;
              lg_ep[l] = key >= 0 ? ep[gloc[ii]] : 0;
            }
          }
          for (uint32_t s = sfirst[ii]; s < sfirst[ii + 1]; s++) {
            rs_bs_set(cur, s);
            ep[g->sites[s].loc]++;
          }
        }
        if (pass == 0 && memcmp(cur, out + W * bi, W * sizeof *cur)) {
          memcpy(out + W * bi, cur, W * sizeof *cur);
          changed = true;
        }
      }
      if (pass == 1) break;
    }
  }
  free(cond);
  free(lg_key);
  free(lg_site);
  free(lg_ep);
  free(ep);
  free(first);
  free(next);
  free(sfirst);
  free(ufirst);
  free(in);
  free(out);
  free(cur);
}

/* Sources with copies looked through (a copy of one unit: its source use's sources). */
typedef struct {
  uint8_t *seen;
  uint32_t *stack;
  uint32_t n, cap;
} visit;

static void resolve_one(rs_sgraph *g, uint32_t s, visit *v, uint32_t depth) {
  if (v->seen[s]) return;
  v->seen[s] = 1;
  RS_PUSH(v->stack, v->n, v->cap, s);
  const rs_ssite *x = &g->sites[s];
  const rs_snode *n = x->node == UINT32_MAX ? NULL : &g->nodes[x->node];
  if (n && n->phi && depth < 64) { /* either value of a select */
    for (int k = 1; k <= 2; k++) {
      const rs_suse *u = &g->uses[n->a[k].idx];
      for (uint32_t i = u->raw[0]; i < u->raw[1]; i++) resolve_one(g, g->srcs[i], v, depth + 1);
    }
    return;
  }
  if (n && n->copy && n->a[0].kind == RS_SA_USE && depth < 64 && x->part != 0xff) {
    const rs_suse *u = &g->uses[n->a[0].idx];
    unsigned k = g->sass ? x->part : 0;
    if (k < u->w && (g->sass ? n->width == u->w : true)) {
      for (uint32_t i = u->raw[k]; i < u->raw[k + 1]; i++) resolve_one(g, g->srcs[i], v, depth + 1);
      return;
    }
  }
  RS_PUSH(g->ress, g->nress, g->capress, s);
}

void rs_sgraph_resolve(rs_sgraph *g) {
  g->nress = 0;
  visit v = {rs_xcalloc(g->nsites + 1, 1), NULL, 0, 0};
  for (uint32_t u = 0; u < g->nuses; u++) {
    rs_suse *x = &g->uses[u];
    for (unsigned k = 0; k < x->w; k++) {
      x->res[k] = g->nress;
      for (uint32_t i = x->raw[k]; i < x->raw[k + 1]; i++) resolve_one(g, g->srcs[i], &v, 0);
      for (uint32_t i = 0; i < v.n; i++) v.seen[v.stack[i]] = 0;
      v.n = 0;
    }
    x->res[x->w] = g->nress;
  }
  free(v.seen);
  free(v.stack);
}

