/* merge.h - several corpora into one (`regsweep corpus merge`): libraries imported or built
 * apart (on different nodes, by different jobs) become one corpus without compiling again. */
#ifndef RS_MERGE_H
#define RS_MERGE_H
#include "util/util.h"
#include <stdint.h>

typedef struct {
  uint64_t rows;       /* rows read over all inputs */
  uint64_t kept;       /* rows written */
  uint64_t replaced;   /* rows whose id a later input also holds (the later one is kept) */
  uint64_t duplicates; /* rows with the IR hash, target and form of a row already written */
  uint64_t truths;     /* rows written with a ground truth */
  uint64_t failures;   /* build failures written */
} rs_merge_stats;

/* Write the union of the corpora in[0..n) to out (through OUT.merge.tmp, renamed when complete,
 * so out may be one of the inputs). A later input wins on the same instance id and the same build
 * failure (family, variant, target): a re-built piece replaces the old one; dedup (IR hash,
 * target, form) keeps the first row written. Every row keeps its split, texts and cubin; string
 * attributes are copied, a later input's on the same key winning (each family's import:NAME is
 * kept). Errors name the file. */
int rs_corpus_merge(const char *const *in, uint32_t n, const char *out, rs_merge_stats *st, rs_err *e);

#endif
