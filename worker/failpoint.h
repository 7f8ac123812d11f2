/* failpoint.h - deterministic fault injection for the fault-matrix test (tests/test_faults.sh):
 * a worker rank kills itself with SIGKILL at a named point of its loop, exactly as `kill -9`
 * would, but at a point a test cannot hit from outside by timing. Off unless the sweep is run
 * with RS_FAULT=RANK:POINT:N in its environment (cli/cmd_sweep.c reads it; docs/run-schema.md). */
#ifndef RS_FAILPOINT_H
#define RS_FAILPOINT_H
#include <stdbool.h>
#include <stdint.h>

enum rs_fp_point {
  RS_FP_NONE,
  RS_FP_GENERATE, /* before the N-th model call (no row of that block written yet) */
  RS_FP_APPEND,   /* after the N-th row appended to an unfinished shard file */
  RS_FP_RENAMED,  /* after the N-th finished shard is renamed into place, before it is reported */
};

typedef struct {
  int rank;       /* MPI rank that dies */
  int point;      /* rs_fp_point */
  uint32_t after; /* on the after-th time the point is reached */
  uint32_t hits;
} rs_failpoint;

/* Parse "RANK:POINT:N" (POINT generate|append|renamed); false if malformed. NULL/"" = none. */
bool rs_failpoint_parse(const char *spec, rs_failpoint *f);
/* Count one pass of `point` by `rank`; SIGKILL this process when it is the chosen one. */
void rs_failpoint_hit(rs_failpoint *f, int rank, int point);

#endif
