/* model.h - candidate generators behind one interface, chosen by a spec string (IOR style):
 *   builtin:chaitin[?free=1]     Chaitin-Briggs graph colouring (deterministic)
 *   builtin:sampled?temp=T       a seeded stochastic allocator with model-like mistakes
 *                                (a synthetic baseline, not a model)
 *   builtin:truth                replays the ground truth
 *   replay:FILE.jsonl            answers produced elsewhere, one line per instance and attempt
 *   openai:URL?model=M&...       an OpenAI-compatible inference server (vLLM, SGLang, llama.cpp)
 *   batch:DIR?model=M&...        the same requests as files in the OpenAI Batch format (vllm run-batch)
 * One file per back end under model/. */
#ifndef RS_MODEL_H
#define RS_MODEL_H
#include "verify/verify.h"

enum rs_finish { RS_FINISH_STOP, RS_FINISH_LENGTH, RS_FINISH_ERROR };

typedef struct {
  char *text;            /* the answer as produced (JSON, or prose around it); NULL on infra */
  double infer_s;        /* wall time to obtain this candidate */
  uint32_t prompt_tokens, completion_tokens;
  int finish;            /* rs_finish */
  bool infra;            /* could not be obtained: verdict `infra`, never a model failure */
  bool transient;        /* infra that may pass on a later try (server down, timeout, 429/5xx):
                          * the sweep stops after a run of these and --resume redoes them */
  bool refused;          /* infra the server would answer the same way to every such request (HTTP
                          * 400/401/403/404, not a prompt beyond its context): the sweep stops on a run
                          * of these with the reason and what to change (rs_refusal_advice) */
  bool deferred;         /* infra, transient: the request was written to a batch file (batch:) and its
                          * answer comes with a later `sweep --ingest`: the instance stops here (no
                          * further attempt), and the stop rule for unanswered attempts ignores it */
  bool context;          /* infra because the instance does not fit the server's context (prompt plus
                          * max_tokens; counted by its tokenizer and not sent, or refused by it): a
                          * fact of the instance, never a reason to stop (error says "context: ...") */
  char error[256];       /* why, when infra */
} rs_gen;

typedef struct {
  const char *id;            /* instance id */
  const char *target;        /* gfx90a | sm_89 | sm_90 */
  const rs_problem *p;
  const char *prompt;        /* the normalized IR the model reads */
  const rs_namemap *names;   /* normalized -> original names */
  const char *const *vnames; /* per Problem value, the name answers use (normalized if known) */
  const char *truth;         /* ground truth JSON (original names) or NULL */
  const char *feedback;      /* verifier diagnostics of the previous rejected attempt, or NULL */
  /* Optional: called once per candidate as soon as it is complete (k = index in out), so the
   * caller can verify it while other requests are still in flight. */
  void (*ready)(void *ctx, uint32_t k, rs_gen *g);
  void *ready_ctx;
  const char *shard;         /* the shard the attempts belong to (batch: one request file each), or NULL */
} rs_gen_input;

typedef struct rs_model rs_model;

/* One finished candidate of the asynchronous interface. */
typedef struct {
  void *tag;        /* as given to submit */
  uint32_t attempt;
  rs_gen g;         /* owned by the caller once returned */
} rs_done;

/* The request window of a back end (openai: adaptive, per server), for progress and provenance. */
typedef struct {
  uint32_t now, max, min_seen; /* current window, its cap (inflight=), the smallest it came down to */
  uint32_t inflight;           /* requests at the server right now */
  uint32_t cuts;               /* times it was backed off (429/503, rising latency) */
  uint32_t capacity;           /* requests the server runs at once, as it said or as learnt; 0: unknown */
  uint32_t srv_running, srv_waiting; /* what the server last said runs and waits (all clients) */
  double oldest_s;             /* age of the oldest request in flight */
  char learned[96];            /* where the capacity came from, for the progress line */
} rs_window;

typedef struct {
  const char *scheme;        /* spec prefix up to '?' or ':' argument, e.g. "builtin:chaitin" */
  int (*open)(rs_model *m, rs_err *e);
  /* Produce n candidates for attempts first..first+n-1, attempt k seeded by seeds[k-first].
   * Per-candidate failures are rs_gen.infra, not errors; return -1 only for a broken model. */
  int (*generate)(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                  rs_gen *out, rs_err *e);
  void (*close)(rs_model *m);
  bool streams;              /* calls in->ready itself as candidates complete */
} rs_model_ops;

/* The asynchronous interface of a back end that has one (openai), found by scheme in model.c;
 * model.c runs the others through an adapter that calls generate when polled. */
typedef struct {
  /* submit queues attempts first..first+n-1 of one instance; `in`
   * must stay valid until all n are returned by poll. */
  int (*submit)(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds, void *tag,
                rs_err *e);
  /* Wait up to timeout_s for finished candidates; writes up to max, returns how many, -1 when broken. */
  int (*poll)(rs_model *m, double timeout_s, rs_done *out, uint32_t max, rs_err *e);
  uint32_t (*room)(const rs_model *m);        /* attempts it would start now beyond those it holds */
  uint32_t (*pending)(const rs_model *m);     /* submitted, not yet returned */
  void (*wake)(rs_model *m);                  /* any thread: a poll waiting now returns early */
  void (*cancel)(rs_model *m);                /* drop everything submitted (after a failure) */
  void (*window)(const rs_model *m, rs_window *w);
  void (*limit)(rs_model *m, uint32_t max);   /* cap the window (sweep --inflight) */
} rs_model_async;

struct rs_model {
  const rs_model_ops *ops;
  char *spec;   /* as given */
  char *arg;    /* text after the scheme (URL or file for openai:/replay:), without the ?query */
  char *query;  /* "k=v&k2=v2" or "" */
  void *state;  /* back end's own */
  const rs_model_async *async; /* NULL: the adapter below */
  struct rs_sync_queue *sq; /* model.c's adapter for back ends without submit/poll */
};

rs_model *rs_model_open(const char *spec, rs_err *e);
int rs_model_generate(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                      rs_gen *out, rs_err *e);
void rs_model_close(rs_model *m);
/* The asynchronous interface, for every back end (synchronous ones run inside rs_model_poll, on
 * the calling thread, a whole submitted block per call, so CPU-bound builtin models keep their
 * speed). Candidates come back in completion order. */
int rs_model_submit(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds, void *tag,
                    rs_err *e);
int rs_model_poll(rs_model *m, double timeout_s, rs_done *out, uint32_t max, rs_err *e);
uint32_t rs_model_room(const rs_model *m);
uint32_t rs_model_pending(const rs_model *m);
bool rs_model_is_async(const rs_model *m); /* polls wait on the network (else they compute) */
void rs_model_wake(rs_model *m);
void rs_model_cancel(rs_model *m);
void rs_model_window(const rs_model *m, rs_window *w);
/* Cap the window of a back end that has one (a transport setting: not part of the model spec, so
 * it changes no seed and a --resume may change it). */
void rs_model_limit(rs_model *m, uint32_t max);
void rs_gen_clear(rs_gen *g);
/* What to change about a refusal (rs_gen.refused) whose error is `err`: a sentence. */
const char *rs_refusal_advice(const char *err);
/* Value of key in the spec's query (URL-decoded), or NULL. */
const char *rs_model_param(const rs_model *m, const char *key, char *buf, size_t n);

/* The seed of one attempt: depends only on (sweep seed, instance, the model's identity, attempt),
 * so results do not depend on ranks, sharding, resume, or which server answered (identity.c). */
uint64_t rs_attempt_seed(uint64_t sweep_seed, const char *instance, const char *model, uint32_t attempt);
/* What a model's answers depend on: the spec for builtin:/replay:, for openai: the model name and
 * request-shaping parameters without URL or transport settings (identity.c). Free it. */
char *rs_model_identity(const char *spec);
/* The back end's provenance line ("" if it has none). */
void rs_model_describe(const rs_model *m, char *out, size_t n);

/* Per Problem value, the name answers use: its normalized name when `names` maps it (what a model
 * trained on the normalized corpus writes), else the original. Free the array (not the names). */
const char **rs_value_names(const rs_problem *p, const rs_namemap *names);
/* Register assignment -> candidate JSON with the given value names; reg[v] per Problem value;
 * lanes 0 = leave the value out. */
char *rs_assignment_json(const rs_problem *p, const char *const *vnames, const rs_preg *reg);

extern const rs_model_ops rs_model_chaitin, rs_model_sampled, rs_model_truth, rs_model_replay, rs_model_openai,
    rs_model_batch;
extern const rs_model_async rs_model_openai_async;

#endif
