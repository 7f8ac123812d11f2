/* plan.h - the sweep's unit of work. A shard is (model, attempt block, group of instances).
 * The plan depends only on the selected instances, the models, the number of samples and the
 * block size — never on the number of ranks — so resume and re-runs with other -np find the
 * same shard files, and extending a sweep from n = 10 to n = 20 adds only new blocks. */
#ifndef RS_PLAN_H
#define RS_PLAN_H
#include <stdint.h>

typedef struct {
  char name[64];         /* file stem: m<model>-a<first>-<end>-g<group> */
  uint32_t model;
  uint32_t att_first, att_end; /* attempts [att_first, att_end) */
  uint32_t group;
  uint32_t first, count; /* instances [first, first + count) of the plan's list */
  uint64_t cost;
} rs_shard;

typedef struct {
  uint32_t *inst;        /* corpus rows, in selection order */
  uint64_t *cost;        /* per instance: cost of one attempt (arbitrary units) */
  uint32_t ninst;
  uint32_t *gstart;      /* group g = instances [gstart[g], gstart[g+1]) */
  uint32_t ngroups;
  rs_shard *shards;      /* dispatch order: costliest first */
  uint32_t nshards;
} rs_plan;

/* Group instances (in the given order) so that no group costs much more than `group_cost` per
 * attempt block, then make one shard per (model, block, group). `block` = attempts per shard
 * (0 = all samples in one block: required for --until-pass). */
void rs_plan_make(rs_plan *pl, const uint32_t *inst, const uint64_t *cost, uint32_t ninst, uint32_t nmodels,
                  uint32_t samples, uint32_t block, uint64_t group_cost);
void rs_plan_free(rs_plan *pl);
/* Index of a shard by name, or -1. */
int rs_plan_find(const rs_plan *pl, const char *name);

#endif
