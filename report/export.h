/* export.h - training data from a sweep's attempts: SFT pairs, preference (DPO) pairs and
 * verifier-feedback triples, one JSON line each, train split only unless asked, every answer
 * verified again against the corpus before it is written. docs/reward.md "Data from sweeps". */
#ifndef RS_EXPORT_H
#define RS_EXPORT_H
#include "util/util.h"
#include <stdio.h>

enum { RS_EXPORT_SFT, RS_EXPORT_DPO, RS_EXPORT_FEEDBACK };

typedef struct {
  const char *run;      /* run.h5 */
  const char *corpus;   /* NULL: the run's own (its `corpus` attribute) */
  const char *holdout;  /* NULL: the run's --holdout-arch, if any */
  int kind;             /* RS_EXPORT_* */
  int split;            /* rs_split: the split written (train by default) */
  unsigned per_prompt;  /* most lines per instance */
  FILE *out;
} rs_export_opts;

typedef struct {
  uint32_t attempts, instances, lines;
  uint32_t other_split;    /* instances left out: not in the split written */
  uint32_t no_text;        /* answers left out: the run did not keep their text (sweep --keep all) */
  uint32_t mismatch;       /* answers left out: verified again, the verdict differs from the run's */
  uint32_t no_pass;        /* instances without a passing answer (no SFT line, no pair, no triple) */
  uint64_t bytes;
} rs_export_stats;

int rs_export_kind(const char *name); /* sft|dpo|feedback, -1 otherwise */
int rs_export_attempts(const rs_export_opts *o, rs_export_stats *st, rs_err *e);

#endif
