/* merge.c - shard files -> run.h5, with per (instance, model) summaries. */
#include "coordinator/coord.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int by_canon(const void *a, const void *b) {
  const rs_shard *x = *(const rs_shard *const *)a, *y = *(const rs_shard *const *)b;
  if (x->group != y->group) return x->group < y->group ? -1 : 1;
  if (x->model != y->model) return x->model < y->model ? -1 : 1;
  return x->att_first < y->att_first ? -1 : x->att_first > y->att_first;
}

int rs_merge(const rs_plan *pl, const char *run_dir, const char *path, const char *const *attr_keys,
             const char *const *attr_vals, uint32_t nattrs, rs_err *e) {
  char tmp[1200], sp[1200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  rs_runfile *out = rs_runfile_create(tmp, e);
  if (!out) return -1;
  const rs_shard **ord = rs_xmalloc(sizeof *ord * (pl->nshards + 1));
  for (uint32_t i = 0; i < pl->nshards; i++) ord[i] = &pl->shards[i];
  qsort(ord, pl->nshards, sizeof *ord, by_canon);
  int rc = 0;
  /* summaries: one per (instance, model) of a group, finished when the group's shards are done */
  uint32_t i = 0;
  while (i < pl->nshards && !rc) {
    uint32_t g = ord[i]->group, j = i;
    while (j < pl->nshards && ord[j]->group == g) j++;
    uint32_t first = pl->gstart[g], cnt = pl->gstart[g + 1] - first, nm = 0;
    for (uint32_t k = i; k < j; k++)
      if (ord[k]->model + 1 > nm) nm = ord[k]->model + 1;
    rs_summary *sum = rs_xcalloc((size_t)cnt * nm + 1, sizeof *sum);
    for (uint32_t k = 0; k < cnt * nm; k++) sum[k].first_pass = -1;
    for (uint32_t k = i; k < j && !rc; k++) {
      rs_shard_path(run_dir, ord[k], sp, sizeof sp);
      rs_runfile *in = rs_runfile_open(sp, e);
      if (!in) {
        rc = -1;
        break;
      }
      for (uint64_t r = 0; r < rs_runfile_count(in) && !rc; r++) {
        rs_attempt a;
        if ((rc = rs_runfile_get(in, r, &a, 1, e))) break;
        rc = rs_runfile_append(out, &a, e);
        /* locate the instance within the group */
        uint32_t q;
        for (q = 0; q < cnt && pl->inst[first + q] != a.inst_index; q++) {}
        if (q < cnt && a.model < nm) {
          rs_summary *s = &sum[q * nm + a.model];
          snprintf(s->instance, sizeof s->instance, "%s", a.instance);
          s->inst_index = a.inst_index;
          s->model = a.model;
          s->attempts++;
          if (a.verdict == 5) s->infra++;
          if (a.verdict == 0) {
            s->passes++;
            if (s->first_pass < 0 || (int32_t)a.attempt < s->first_pass) s->first_pass = (int32_t)a.attempt;
            bool better = !s->best_occupancy;
            for (int f = 0; f < RS_RUN_NFILES && !better; f++)
              if (a.used[f] != s->best_used[f]) {
                better = a.used[f] < s->best_used[f];
                break;
              }
            if (better) {
              memcpy(s->best_used, a.used, sizeof s->best_used);
              s->best_occupancy = a.occupancy ? a.occupancy : 1;
            }
          }
        }
        rs_attempt_clear(&a);
      }
      rs_err ce;
      rs_runfile_close(in, &ce);
    }
    for (uint32_t k = 0; k < cnt * nm && !rc; k++)
      if (sum[k].attempts) rc = rs_runfile_add_summary(out, &sum[k], e);
    free(sum);
    i = j;
  }
  free(ord);
  for (uint32_t a = 0; a < nattrs && !rc; a++) rc = rs_runfile_set_attr(out, attr_keys[a], attr_vals[a], e);
  rs_err ce;
  if (rs_runfile_close(out, rc ? &ce : e) && !rc) rc = -1;
  if (!rc && rename(tmp, path)) rc = rs_errf(e, path, 0, "cannot rename the merged run file into place");
  if (rc) unlink(tmp);
  return rc;
}
