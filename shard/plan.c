/* plan.c - the sweep's plan: instances grouped by cost into shards of (model, attempt block,
 * group), independent of -np. */
#include "shard/plan.h"
#include "util/util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_cost(const void *a, const void *b) {
  const rs_shard *x = a, *y = b;
  if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
  return strcmp(x->name, y->name); /* deterministic ties */
}

void rs_plan_make(rs_plan *pl, const uint32_t *inst, const uint64_t *cost, uint32_t ninst, uint32_t nmodels,
                  uint32_t samples, uint32_t block, uint64_t group_cost) {
  memset(pl, 0, sizeof *pl);
  pl->ninst = ninst;
  pl->inst = rs_xmalloc(sizeof *pl->inst * (ninst + 1));
  pl->cost = rs_xmalloc(sizeof *pl->cost * (ninst + 1));
  memcpy(pl->inst, inst, sizeof *inst * ninst);
  memcpy(pl->cost, cost, sizeof *cost * ninst);
  pl->gstart = rs_xmalloc(sizeof *pl->gstart * (ninst + 2));
  uint64_t acc = 0;
  for (uint32_t i = 0; i < ninst; i++) {
    if (i == 0 || acc + cost[i] > group_cost) {
      pl->gstart[pl->ngroups++] = i;
      acc = 0;
    }
    acc += cost[i];
  }
  pl->gstart[pl->ngroups] = ninst;
  if (!block || block > samples) block = samples;
  uint32_t nblocks = samples ? (samples + block - 1) / block : 0;
  pl->shards = rs_xcalloc((size_t)nmodels * nblocks * pl->ngroups + 1, sizeof *pl->shards);
  for (uint32_t m = 0; m < nmodels; m++)
    for (uint32_t b = 0; b < nblocks; b++)
      for (uint32_t g = 0; g < pl->ngroups; g++) {
        rs_shard *s = &pl->shards[pl->nshards++];
        s->model = m;
        s->att_first = b * block;
        s->att_end = (b + 1) * block < samples ? (b + 1) * block : samples;
        s->group = g;
        s->first = pl->gstart[g];
        s->count = pl->gstart[g + 1] - pl->gstart[g];
        for (uint32_t i = s->first; i < s->first + s->count; i++) s->cost += cost[i] * (s->att_end - s->att_first);
        snprintf(s->name, sizeof s->name, "m%u-a%u-%u-g%u", m, s->att_first, s->att_end, g);
      }
  qsort(pl->shards, pl->nshards, sizeof *pl->shards, by_cost);
}

void rs_plan_free(rs_plan *pl) {
  free(pl->inst);
  free(pl->cost);
  free(pl->gstart);
  free(pl->shards);
  memset(pl, 0, sizeof *pl);
}

int rs_plan_find(const rs_plan *pl, const char *name) {
  for (uint32_t i = 0; i < pl->nshards; i++)
    if (!strcmp(pl->shards[i].name, name)) return (int)i;
  return -1;
}
