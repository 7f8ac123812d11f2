/* table.h - per-group results of a sweep: the table printed at the end of a sweep and by
 * `regsweep report` (one implementation for both). */
#ifndef RS_TABLE_H
#define RS_TABLE_H
#include "storage/run.h"
#include <stdio.h>

/* One (instance, model) pair's outcome, accumulated from attempt rows. */
typedef struct {
  char family[32], target[16], form[16];
  uint16_t model;
  uint32_t n;          /* attempts that reached the verifier (infra excluded) */
  uint32_t c;          /* passing attempts */
  int32_t first_pass;  /* attempt index of the first pass, -1 if none */
  int8_t greedy;       /* attempt 0: 1 pass, 0 fail, -1 absent/infra */
  uint32_t infra;
  uint32_t fails[6];   /* failing attempts by verdict (rs_verdict indices) */
} rs_outcome;

typedef struct {
  rs_outcome *o;
  uint32_t n, cap;
  const char **models; /* model specs, indexed by rs_outcome.model */
  uint32_t nmodels;
  uint32_t samples;    /* attempts per instance requested */
  bool until_pass;
} rs_results;

/* Accumulate the attempt rows of a run file (rows of one pair may be anywhere). */
int rs_results_load(rs_results *r, rs_runfile *f, rs_err *e);
void rs_results_free(rs_results *r);
/* Markdown table per family x target x form x model: instances, greedy pass rate, pass@k for
 * k in {1,5,10,20,50,100} <= samples, attempts to first pass, failure breakdown, infra. */
void rs_results_print(const rs_results *r, FILE *out);

#endif
