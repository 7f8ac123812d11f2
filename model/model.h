/* model.h - candidate generators behind one interface, chosen by a spec string (IOR style):
 *   builtin:chaitin[?free=1]     Chaitin-Briggs graph colouring (deterministic)
 *   builtin:sampled?temp=T       a seeded stochastic allocator with model-like mistakes
 *                                (a synthetic baseline, not a model)
 *   builtin:truth                replays the ground truth
 *   replay:FILE.jsonl            answers produced elsewhere, one line per instance and attempt
 *   openai:URL?model=M&...       an OpenAI-compatible inference server (vLLM, SGLang, llama.cpp)
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
} rs_gen_input;

typedef struct rs_model rs_model;
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

struct rs_model {
  const rs_model_ops *ops;
  char *spec;   /* as given */
  char *arg;    /* text after the scheme (URL or file for openai:/replay:), without the ?query */
  char *query;  /* "k=v&k2=v2" or "" */
  void *state;  /* back end's own */
};

rs_model *rs_model_open(const char *spec, rs_err *e);
int rs_model_generate(rs_model *m, const rs_gen_input *in, uint32_t first, uint32_t n, const uint64_t *seeds,
                      rs_gen *out, rs_err *e);
void rs_model_close(rs_model *m);
void rs_gen_clear(rs_gen *g);
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

extern const rs_model_ops rs_model_chaitin, rs_model_sampled, rs_model_truth, rs_model_replay, rs_model_openai;

#endif
