/* shard_run.c - a shard's file: its path and what a resume finds there (the loop that fills
 * it is worker/engine.c). */
#include "worker/shard_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void rs_shard_path(const char *run_dir, const rs_shard *s, char *buf, size_t n) {
  snprintf(buf, n, "%s/shards/%s.h5", run_dir, s->name);
}

int rs_shard_check(const char *path, uint32_t *transient, rs_err *e) {
  *transient = 0;
  if (access(path, F_OK) != 0) return RS_SHARD_MISSING;
  if (access(path, R_OK) != 0) {
    rs_errf(e, path, 0, "shard file is not readable: %s", strerror(errno));
    return RS_SHARD_UNREADABLE;
  }
  rs_runfile *f = rs_runfile_open(path, e);
  if (!f) return RS_SHARD_BAD;
  char *complete = rs_runfile_get_attr(f, "complete"), *rows = rs_runfile_get_attr(f, "rows");
  char *tr = rs_runfile_get_attr(f, "transient");
  int st = RS_SHARD_OK;
  if (!complete || strcmp(complete, "1")) st = RS_SHARD_BAD, rs_errf(e, path, 0, "shard was not finished");
  else if (!rows || strtoull(rows, NULL, 10) != rs_runfile_count(f))
    st = RS_SHARD_BAD, rs_errf(e, path, 0, "shard has %llu rows, says %s", (unsigned long long)rs_runfile_count(f),
                              rows ? rows : "none");
  /* reading every row proves the compressed chunks are intact (a flipped byte fails its checksum) */
  for (uint64_t i = 0; st == RS_SHARD_OK && i < rs_runfile_count(f); i++) {
    rs_attempt a;
    if (rs_runfile_get(f, i, &a, 1, e)) st = RS_SHARD_BAD;
    else rs_attempt_clear(&a);
  }
  if (st == RS_SHARD_OK && tr && (*transient = (uint32_t)strtoul(tr, NULL, 10))) st = RS_SHARD_RETRY;
  free(complete);
  free(rows);
  free(tr);
  rs_err ce;
  rs_runfile_close(f, &ce);
  return st;
}
