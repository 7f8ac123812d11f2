/* spillroom.c - which spill slot values no in-place colouring can hold: a slot value has no room
 * when, at some point of its range, the function's other values (every value but the slot
 * values) already fill the registers under the kernel's count. Free mode never moves, inserts or
 * splits anything, so those values need a register each there whatever the colouring; the slot
 * cannot go without more registers (lower occupancy). The rest of the slot values is what the
 * freed registers could at most hold: the measure issue 37's "every spill the freed registers can
 * hold is gone" is read against (docs/lower.md "Spill slots").
 *
 * Counted on the rewritten function with every promotable slot applied (its own liveness): per
 * point (before and after each instruction), the R-file units of the live and defined lanes of
 * values that are not slot values, against the allocatable units below the count. A value whose
 * class may use several files is not counted, nor a def read by nothing: both only undercount, so
 * "no room" is never claimed wrongly by them. */
#include "mcode/mcode.h"
#include "analysis/liveness.h"
#include "sass/sass.h"
#include <stdlib.h>
#include <string.h>


typedef struct {
  const rs_live *l;
  const rs_word *rmask; /* lanes counted: other values' R-file lanes, allocatable R units */
  rs_word *tmp;
  uint32_t nslot, *sv, *first, *end; /* slot values: their lanes [first, end) */
  int64_t *room;                     /* per slot value: the fewest units free at a point it is live */
  unsigned avail;
} ctx;

static void point(ctx *c, const rs_word *live, const rs_word *defd) {
  uint32_t W = c->l->words;
  bool any = false;
  for (uint32_t w = 0; w < W; w++) c->tmp[w] = live[w] & defd[w];
  for (uint32_t k = 0; k < c->nslot && !any; k++)
    for (uint32_t s = c->first[k]; s < c->end[k] && !any; s++) any = rs_bs_get(c->tmp, s);
  if (!any) return;
  size_t used = 0; /* the other values' units: a unit is an even/odd lane pair */
  for (uint32_t w = 0; w < W; w++) {
    rs_word x = c->tmp[w] & c->rmask[w];
    used += (size_t)__builtin_popcountll((x | (x >> 1)) & 0x5555555555555555ull);
  }
  int64_t freeu = (int64_t)c->avail - (int64_t)used;
  for (uint32_t k = 0; k < c->nslot; k++) {
    bool live_k = false;
    for (uint32_t s = c->first[k]; s < c->end[k] && !live_k; s++) live_k = rs_bs_get(c->tmp, s);
    if (live_k && freeu < c->room[k]) c->room[k] = freeu;
  }
}

uint32_t rs_spills_noroom(const rs_func *g, const rs_spills *s, const int32_t *slot_vreg, unsigned limit, uint8_t *noroom,
                          rs_err *e) {
  const rs_target *t = g->tgt;
  for (uint32_t w = 0; w < s->nwebs; w++) noroom[w] = 0;
  int rfile = -1;
  for (uint32_t fi = 0; fi < t->nfiles; fi++)
    if (!strcmp(t->files[fi].name, "r")) rfile = (int)fi;
  if (rfile < 0 || limit < 3) return 0;
  rs_live *l = rs_live_compute(g, e);
  if (!l) return 0; /* no claim without liveness */
  uint32_t W = l->words, first = t->files[rfile].first, top = first + limit - 2;
  ctx c = {0};
  c.l = l;
  rs_word *rmask = rs_xcalloc(W + 1, sizeof *rmask);
  c.tmp = rs_xcalloc(W + 1, sizeof *c.tmp);
  uint8_t *is_slot = rs_xcalloc(g->nvregs + 1, 1);
  c.sv = rs_xmalloc(sizeof *c.sv * (s->nwebs + 1));
  c.first = rs_xmalloc(sizeof *c.first * (s->nwebs + 1));
  c.end = rs_xmalloc(sizeof *c.end * (s->nwebs + 1));
  c.room = rs_xmalloc(sizeof *c.room * (s->nwebs + 1));
  for (uint32_t w = 0; w < s->nwebs; w++) {
    if (slot_vreg[w] < 0 || l->vslot[slot_vreg[w]] == UINT32_MAX) continue;
    uint32_t v = (uint32_t)slot_vreg[w];
    is_slot[v] = 1;
    c.sv[c.nslot] = w;
    c.first[c.nslot] = l->vslot[v];
    c.end[c.nslot] = l->vslot[v] + 2 * s->webs[w].words;
    c.room[c.nslot] = INT64_MAX;
    c.nslot++;
  }
  for (uint32_t u = first; u < top; u++)
    if (rs_sass_allocatable(t, u)) {
      c.avail++;
      rs_bs_set(rmask, l->pbase + 2 * u);
      rs_bs_set(rmask, l->pbase + 2 * u + 1);
    }
  for (uint32_t gi = 0; gi < l->ngroups; gi++) {
    const rs_slotgroup *gr = &l->groups[gi];
    if (gr->files != (1u << rfile)) continue; /* R only; several files: not counted */
    for (uint32_t x = gr->first; x < gr->end; x++)
      if (l->owner[x] < g->nvregs && !is_slot[l->owner[x]]) rs_bs_set(rmask, x);
  }
  c.rmask = rmask;
  rs_word *live = rs_xmalloc(sizeof *live * (W + 1)), *defd = rs_xmalloc(sizeof *defd * (W + 1));
  for (uint32_t bi = 0; bi < g->nblocks && c.nslot; bi++) {
    const rs_block *b = &g->blocks[bi];
    memcpy(live, l->out + (size_t)bi * W, W * sizeof *live);
    memcpy(defd, l->defout + (size_t)bi * W, W * sizeof *defd);
    point(&c, live, defd);
    for (uint32_t k = b->ninsts; k-- > 0;) {
      const rs_inst *in = &g->insts[b->first_inst + k];
      rs_live_defs_back(l, in, defd);
      rs_live_step_back(l, in, live);
      point(&c, live, defd);
    }
  }
  uint32_t n = 0;
  for (uint32_t k = 0; k < c.nslot; k++)
    if (c.room[k] != INT64_MAX && c.room[k] < (int64_t)s->webs[c.sv[k]].words) noroom[c.sv[k]] = 1, n++;
  free(live);
  free(defd);
  free(rmask);
  free(c.tmp);
  free(is_slot);
  free(c.sv);
  free(c.first);
  free(c.end);
  free(c.room);
  rs_live_free(l);
  return n;
}
