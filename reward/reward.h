/* reward.h - the verifier as an RL reward: a corpus loaded once, items (instance id or the exact
 * prompt text regsweep generated, plus a completion) judged by the same verifier as `regsweep
 * verify`, and a shaping configuration that turns the verdict into a number. docs/reward.md. */
#ifndef RS_REWARD_H
#define RS_REWARD_H
#include "util/util.h"
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RS_SHAPING_VERSION 1

/* How a verdict becomes a reward (versioned; printed in every answer's metadata). */
typedef struct {
  int version;
  double pass;       /* reward of a passing answer before the quality bonus */
  double syntax, dataflow, hardware, timeout; /* reward of each failing category (before partial credit) */
  double error;      /* reward reported for an item that could not be judged (unknown instance...) */
  double partial;    /* weight of partial credit: + partial * (share of values without a violation)
                      * for dataflow and hardware failures; 0 = off */
  double quality;    /* weight of the register bonus for a pass: + quality * mean over register
                      * files with a compiler count of (compiler - used) / compiler, clamped to
                      * [-1, 1]; 0 = off */
} rs_shaping;

void rs_shaping_default(rs_shaping *s);
/* Overlay the fields of a JSON object onto s; unknown keys or another version are errors. */
int rs_shaping_parse(rs_shaping *s, const char *json, rs_err *e);
cJSON *rs_shaping_json(const rs_shaping *s);

enum { RS_REWARD_NATIVE, RS_REWARD_Z3, RS_REWARD_BOTH }; /* = verify/verifier.h's RS_VERIFIER_* */

typedef struct rs_reward rs_reward;

/* Load every instance of the corpus (parse, Problem, names) and hash the prompts regsweep
 * generates for it; with a filter (as sweep's --filter) only the matching ones (the others are
 * item errors). verifier: "native", "z3" or "both". */
rs_reward *rs_reward_open(const char *corpus, const char *filter, const char *verifier, unsigned z3_timeout_ms,
                          const rs_shaping *s, rs_err *e);
void rs_reward_close(rs_reward *r);
uint32_t rs_reward_ninstances(const rs_reward *r);
uint32_t rs_reward_nprompts(const rs_reward *r); /* prompt texts known (hashed) */
/* The metadata every answer carries: shaping, verifier, corpus path and hash, code version. */
cJSON *rs_reward_meta(const rs_reward *r);

typedef struct {
  const char *instance;   /* instance id, or NULL */
  const char *prompt;     /* the exact prompt text, or NULL (one of the two) */
  const char *completion; /* the model's answer */
  size_t completion_len;
  const char *error;      /* set by request parsing: the item is this error, not judged */
} rs_reward_item;

/* Judge one item (thread-safe): a JSON object with reward, verdict, counts, diagnostics,
 * registers against the compiler's, or error. *reward gets the number. */
cJSON *rs_reward_eval(const rs_reward *r, const rs_reward_item *it, double *reward);

/* A pool of verification threads shared by all requests. */
typedef struct rs_rpool rs_rpool;
rs_rpool *rs_rpool_new(unsigned nthreads);
/* Run fn(ctx, i) for i in [0, n) on the pool's threads; returns when all are done. Several
 * callers may run batches at once (their items interleave in the queue). */
void rs_rpool_run(rs_rpool *p, void (*fn)(void *ctx, uint32_t i), void *ctx, uint32_t n);
void rs_rpool_free(rs_rpool *p);

/* Judge a batch in parallel: a JSON array of results (in order); rewards (n) filled if not NULL. */
cJSON *rs_reward_batch(const rs_reward *r, rs_rpool *p, const rs_reward_item *items, uint32_t n, double *rewards);

/* Request shapes (request.c). The items point into *doc, which the caller deletes after the
 * batch. Returns the number of items (>= 0) or -1 with e (a per-request error). */
enum { RS_SHAPE_NATIVE, RS_SHAPE_OPENRLHF };
int rs_reward_parse_request(const char *body, size_t len, int shape, cJSON **doc, rs_reward_item **items,
                            rs_err *e);
/* The answer of a request in its shape. */
char *rs_reward_answer(const rs_reward *r, int shape, cJSON *results, const double *rewards, uint32_t n);

/* Offline (jsonl.c): one item per non-empty line of `in` (a line that is no item is that item's
 * error, with its line number), one answer line per item to out, with "line" and "meta". */
typedef struct {
  uint32_t items, pass, errors;
} rs_reward_jsonl_stats;
int rs_reward_jsonl(const rs_reward *r, unsigned threads, const char *in, FILE *out, rs_reward_jsonl_stats *st, rs_err *e);

/* The HTTP server (http.c). */
typedef struct {
  const char *host;       /* "127.0.0.1" by default: loopback */
  unsigned port;          /* 0: any free port (printed) */
  unsigned threads;       /* verification threads */
  unsigned conns;         /* connections handled at once */
  size_t max_body;        /* bytes; larger requests get 413 */
  unsigned read_timeout_ms; /* a request not fully read by then gets 408 and is closed */
  uint32_t max_items;     /* items per request */
  bool allow_shutdown;    /* POST /shutdown stops the server (tests) */
} rs_reward_serve_opts;
void rs_reward_serve_defaults(rs_reward_serve_opts *o);
typedef struct rs_reward_server rs_reward_server;
/* Bind and listen (port known after this), then serve on background threads. */
rs_reward_server *rs_reward_serve_start(const rs_reward *r, const rs_reward_serve_opts *o, rs_err *e);
unsigned rs_reward_serve_port(const rs_reward_server *s);
/* Block until a POST /shutdown or rs_reward_serve_stop from another thread. */
void rs_reward_serve_wait(rs_reward_server *s);
void rs_reward_serve_stop(rs_reward_server *s);
void rs_reward_serve_free(rs_reward_server *s);
/* Served so far: requests, items, per-request errors (for the log line). */
void rs_reward_serve_counts(rs_reward_server *s, uint64_t *requests, uint64_t *items, uint64_t *errors);

#endif
