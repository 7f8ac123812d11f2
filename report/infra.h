/* infra.h - why attempts got no answer: a run's infra attempts grouped by reason, so a sweep's
 * summary, summary.md and `report` say "HTTP 400: request (5994 tokens) exceeds the available
 * context size" instead of only "infra 24". */
#ifndef RS_INFRA_H
#define RS_INFRA_H
#include "storage/run.h"
#include <stdio.h>

typedef struct {
  char text[84];   /* the first such error's reason, up to 80 characters (the model URL left out) */
  uint64_t key;    /* hash of the reason with its numbers blanked (5994 tokens, 4096 tokens) */
  uint64_t count;
  uint16_t model;
} rs_infra_reason;

/* Instances too large for a model's server context (infra "context: ..." rows): how many, the
 * most tokens one needs (prompt + max_tokens) and the context the server said. */
typedef struct {
  uint16_t model;
  uint32_t instances, unsaid; /* unsaid: of them, refused without the numbers */
  uint32_t need_max, ctx;
  uint64_t *keys;             /* the instances seen (hashes) */
} rs_infra_ctx;

typedef struct {
  rs_infra_reason *r; /* most frequent first */
  uint32_t n, cap;
  uint64_t total;
  rs_infra_ctx *ctx;  /* per model with too-large instances */
  uint32_t nctx;
  uint64_t pending;   /* batch: attempts whose requests wait in a round's files */
  unsigned round;     /* the newest such round */
  char batch_dir[200];
} rs_infra;

/* Add the infra attempts of f (model indices shifted by model_base); 0, or -1 with e. */
int rs_infra_load(rs_infra *in, rs_runfile *f, uint16_t model_base, rs_err *e);
/* The reason an error text is grouped under (what text/key become), exposed for the tests. */
void rs_infra_reason_of(const char *diag, char *text, size_t n, uint64_t *key);
/* The numbers of a "context: prompt P tokens + max_tokens M = N > the server's context C tokens"
 * error: *need N and *ctx C (0 where absent); false when it is no context error. */
bool rs_infra_context_of(const char *diag, uint32_t *need, uint32_t *ctx);
/* "## Infra attempts by reason" as a Markdown table (nothing when there are none); the first
 * `max` reasons, the rest summed; then per model the instances too large for the server's context
 * and the context that would fit them all. `models` names them (NULL: indices). */
void rs_infra_print(const rs_infra *in, const char *const *models, uint32_t nmodels, uint32_t max, FILE *out);
void rs_infra_free(rs_infra *in);

#endif
