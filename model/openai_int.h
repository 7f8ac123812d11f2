/* openai_int.h - private to the openai: back end (model/openai*.c). The back end is three files:
 * openai.c (transport: curl multi, retries, timeouts), openai_body.c (what a request says: the
 * parameters that shape it, prompt, sampling, schema) and openai_reply.c (what an answer means:
 * parsing, error classes). The transport calls only the functions below. */
#ifndef RS_OPENAI_INT_H
#define RS_OPENAI_INT_H
#include "model/model.h"
#include "model/openai_schema.h"
#include <cjson/cJSON.h>

/* How a request asks for structured output (schema=...): servers silently ignore the forms they
 * do not read, so the dialect is chosen per server and checked by the probe (openai_probe.c). */
enum { RS_OA_SCHEMA_NONE, RS_OA_SCHEMA_OPENAI, RS_OA_SCHEMA_LLAMACPP, RS_OA_SCHEMA_VLLM, RS_OA_NDIALECTS };
extern const char *const rs_oa_dialect_name[RS_OA_NDIALECTS]; /* "0", "openai", "llamacpp", "vllm" */

/* Where the server says how many requests run and wait (rs_oa_watch). */
enum { RS_OA_WATCH_NONE, RS_OA_WATCH_SLOTS, RS_OA_WATCH_VLLM, RS_OA_WATCH_SGLANG };

/* Where the server counts a prompt's tokens with its own tokenizer (openai_context.c). */
enum { RS_OA_TOK_NONE, RS_OA_TOK_LLAMACPP, RS_OA_TOK_VLLM };

/* What the probe at open found out (openai_probe.c). */
enum { RS_OA_PROBE_OFF, RS_OA_PROBE_PENDING, RS_OA_PROBE_OK };

/* Sampling parameters beyond temperature: sent as given, or with sampling=explicit (the default)
 * as neutral values where the run means "off" (llama.cpp applies top_k 40, min_p 0.05, top_p 0.95
 * unasked; vLLM does not). */
enum { RS_OA_TOP_P, RS_OA_TOP_K, RS_OA_MIN_P, RS_OA_REP_PEN, RS_OA_PRES_PEN, RS_OA_FREQ_PEN, RS_OA_NSAMP };

/* The request-shaping part of the model's configuration (no transport settings), and what the
 * client learnt about the server at open. */
typedef struct {
  char *model;    /* the server's model name */
  char *stop;     /* NULL: none */
  char *tmpl;     /* template text */
  double temperature;
  double samp[RS_OA_NSAMP]; /* value sent */
  bool samp_set[RS_OA_NSAMP]; /* given in the spec */
  bool explicit_sampling;   /* sampling=explicit: send every parameter, neutral when not given */
  bool chat, feedback, probe;
  bool strict;    /* schema_strict=1: each value's schema admits exactly its class's registers */
  int dialect;    /* RS_OA_SCHEMA_* */
  uint32_t max_tokens;
  uint32_t n;     /* choices per request (n=K; attempt 0 always alone) */
  /* learnt at open (openai_probe.c), for provenance and the truncation check */
  int probe_state;
  char probe_note[240];
  uint32_t n_ctx;         /* the server's context in tokens (llama.cpp /props, vLLM /v1/models), 0: unknown */
  char server_note[240];  /* server facts and defaults read at open */
  /* the server's capacity: requests it runs at once (llama.cpp /props total_slots or /slots,
   * SGLang's server info max_running_requests; vLLM's only from its queue while running), 0: not
   * said; and where the running and waiting requests can be read while a sweep runs */
  uint32_t slots;
  char slots_src[48];
  int watch;              /* RS_OA_WATCH_* */
  /* prompt tokens per instance seen so far (openai_reply.c: silent truncation) */
  struct rs_oa_seen {
    uint64_t key;
    uint32_t tokens;
  } *seen;
  uint32_t nseen_cap;
  /* the context as a per-instance limit (openai_context.c): where the server counts tokens, and
   * the instances known not to fit (counted, or refused by the server), so no attempt of theirs is
   * sent again */
  int tokenizer;          /* RS_OA_TOK_* */
  char ctx_src[64];       /* where n_ctx was read ("llama.cpp /props n_ctx") */
  struct rs_oa_ctxmark {
    uint64_t key;         /* 0: empty (open addressing by the instance's id) */
    uint32_t prompt, ctx; /* prompt tokens and the context the server said (0: not said) */
    bool fits;            /* counted and fitting (without feedback): not counted again */
  } *marks;
  uint32_t nmarks, marks_cap;
} rs_oa_body;

/* Number / 0-1 parameter of the spec's query; absent: *out unchanged. -1 with e on a bad value. */
int rs_oa_param_num(const rs_model *m, const char *key, double lo, double hi, double *out, rs_err *e);
int rs_oa_param_bool(const rs_model *m, const char *key, bool *out, rs_err *e);

/* Is key (kl bytes) one of the request-shaping parameters parsed by rs_oa_body_configure? */
bool rs_oa_body_knows(const char *key, size_t kl);
/* The model's identity from its spec's query: "openai" plus the request-shaping parameters that
 * differ from their defaults, in a fixed order, URL-decoded, numbers normalized (0.70 = 0.7), the
 * schema dialect reduced to 0/1. No I/O: cheap enough for every attempt seed. */
void rs_oa_identity(const char *query, rs_sbuf *out);
/* The request-shaping parameters of m's spec; 0, or -1 with e (b is then freed by the caller). */
int rs_oa_body_configure(const rs_model *m, rs_oa_body *b, rs_err *e);
void rs_oa_body_free(rs_oa_body *b);

/* Add `schema` (owned) to request r in the dialect's form (none: freed). */
void rs_oa_add_schema(cJSON *r, int dialect, cJSON *schema);
/* The request of one instance (prompt, sampling, schema), shared by its attempts; cJSON_Delete. */
cJSON *rs_oa_build_request(const rs_oa_body *b, const rs_gen_input *in);
/* How many attempts from `attempt` on (at most `left`) one request asks for: with n=K the
 * attempts are grouped by attempt / K (aligned, so a group does not depend on how a sweep splits
 * its calls, as long as calls start at multiples of K), attempt 0 always alone (greedy). */
uint32_t rs_oa_group(const rs_oa_body *b, uint32_t attempt, uint32_t left);
/* The printed body of one request of `req`: attempt index `attempt` (0 is greedy), its seed (the
 * server receives 31 bits) and n choices. malloc'd (free), NULL if printing failed. */
char *rs_oa_attempt_body(cJSON *req, const rs_oa_body *b, uint32_t attempt, uint64_t seed, uint32_t n);

/* Fill g[0..n-1] from a 200 response carrying n choices (by their "index"); 0, or -1 with why
 * (malformed: the request is infra). Then the truncation check on each of them (rs_oa_check_prompt). */
int rs_oa_parse_reply(rs_oa_body *b, const rs_gen_input *in, const char *body, size_t len, rs_gen *g, uint32_t n,
                      char *why, size_t wn);
/* Silent prompt truncation: a 200 answer whose usage.prompt_tokens is far below the prompt's size
 * (bytes per token), far below an earlier attempt's of the same instance, or that filled the
 * server's context, becomes infra (not transient: a retry meets the same server) with the reason. */
void rs_oa_check_prompt(rs_oa_body *b, const rs_gen_input *in, rs_gen *g);

/* The probe at open and the server's facts (openai_probe.c). `url` is the API base of the spec,
 * `endpoint` the completion endpoint. Reads /props or /models (n_ctx, defaults), then sends one
 * tiny request whose schema admits a single answer: 0 if it conformed or got no answer (state
 * PENDING: tried again by the next generate), -1 with e naming the dialect to try if the server
 * ignored the schema. */
typedef struct {
  const char *url, *endpoint, *key_env;
  double timeout_s;
} rs_oa_link;
int rs_oa_probe(rs_oa_body *b, const rs_oa_link *l, rs_err *e);
/* Requests the server runs and queues now (b->watch says where to read them: llama.cpp's /slots,
 * vLLM's or SGLang's /metrics gauges); 0, or -1 when it did not say. One short blocking GET. */
int rs_oa_watch(const rs_oa_body *b, const rs_oa_link *l, uint32_t *running, uint32_t *waiting);
/* One line for the run's provenance: dialect, probe outcome, sampling sent, server facts. */
void rs_oa_describe(const rs_oa_body *b, char *out, size_t n);
/* The same for an open openai: model (openai.c; rs_model_describe calls it). */
void rs_oa_model_describe(const rs_model *m, char *out, size_t n);
/* Is a server's error message (4xx/5xx) one the same request meets again, so that retrying or
 * redoing it on --resume is futile (the prompt does not fit the context)? */
bool rs_oa_deterministic_error(const char *msg);
/* A short printable excerpt of a server's error body: error.message, message, detail, or the body. */
/* Request headers (JSON, the API key read from the environment now, never kept); free with
 * curl_slist_free_all. In openai.c. */
struct curl_slist *rs_oa_headers(const char *key_env);
void rs_oa_server_message(const char *body, size_t len, char *out, size_t n);

/* One blocking request to `url` (GET when body is NULL): the HTTP status with the body in *out
 * (malloc'd, NUL-terminated; free it), or -1 with curl's error in why. The key is masked. */
long rs_oa_http(const rs_oa_link *l, const char *url, const char *body, double timeout_s, char **out, char *why,
                size_t wn);
/* The server's root (the API base without a trailing /v1) + path. */
void rs_oa_root_url(const rs_oa_link *l, const char *path, char *url, size_t n);

/* The provenance line of an open batch: model (model/batch.c). */
void rs_batch_describe(const rs_model *m, char *out, size_t n);

/* ---- the context as a per-instance limit (openai_context.c) ---- */
/* Does instance in (request req, as built) fit the server's context with max_tokens? false when
 * it is known not to: marked by an earlier refusal, or counted by the server's tokenizer; then
 * *ptok gets its prompt tokens and why the "context: ..." error. Counting is one blocking POST
 * to the server's /tokenize (llama.cpp after /apply-template for chat; vLLM with the messages). */
bool rs_oa_context_fits(rs_oa_body *b, const rs_oa_link *l, const rs_gen_input *in, const cJSON *req, uint32_t *ptok,
                        char *why, size_t wn);
/* The server refused an attempt of `in` for its context with message msg: mark the instance (its
 * later attempts are not sent) and write the "context: ..." error with the numbers the message
 * gives (prompt tokens, context); *ptok gets the prompt tokens (0: not said). */
void rs_oa_context_refused(rs_oa_body *b, const rs_gen_input *in, const char *msg, uint32_t *ptok, char *why, size_t wn);
/* The numbers in a server's context refusal (llama.cpp, vLLM, SGLang): prompt tokens and context
 * size, 0 where it does not say. For the tests. */
void rs_oa_context_numbers(const char *msg, uint32_t *prompt, uint32_t *ctx);

#endif
