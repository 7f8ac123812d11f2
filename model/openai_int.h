/* openai_int.h - private to the openai: back end (model/openai*.c). The back end is three files:
 * openai.c (transport: curl multi, retries, timeouts), openai_body.c (what a request says: the
 * parameters that shape it, prompt, sampling, schema) and openai_reply.c (what an answer means:
 * parsing, error classes). The transport calls only the functions below. */
#ifndef RS_OPENAI_INT_H
#define RS_OPENAI_INT_H
#include "model/model.h"
#include "model/openai_schema.h"
#include <cjson/cJSON.h>

/* The request-shaping part of the model's configuration (no transport settings). */
typedef struct {
  char *model;    /* the server's model name */
  char *stop;     /* NULL: none */
  char *tmpl;     /* template text */
  double temperature, top_p;
  bool chat, schema, feedback, has_top_p;
  uint32_t max_tokens;
} rs_oa_body;

/* Number / 0-1 parameter of the spec's query; absent: *out unchanged. -1 with e on a bad value. */
int rs_oa_param_num(const rs_model *m, const char *key, double lo, double hi, double *out, rs_err *e);
int rs_oa_param_bool(const rs_model *m, const char *key, bool *out, rs_err *e);

/* Is key (kl bytes) one of the request-shaping parameters parsed by rs_oa_body_configure? */
bool rs_oa_body_knows(const char *key, size_t kl);
/* The model's identity from its spec's query: "openai" plus the request-shaping parameters that
 * differ from their defaults, in a fixed order, URL-decoded, numbers normalized (0.70 = 0.7), the
 * schema dialect reduced to 0/1. No I/O: cheap enough for every attempt seed. */
void rs_oa_identity(const char *query, rs_sb *out);
/* The request-shaping parameters of m's spec; 0, or -1 with e (b is then freed by the caller). */
int rs_oa_body_configure(const rs_model *m, rs_oa_body *b, rs_err *e);
void rs_oa_body_free(rs_oa_body *b);

/* The request of one instance (prompt, sampling, schema), shared by its attempts; cJSON_Delete. */
cJSON *rs_oa_build_request(const rs_oa_body *b, const rs_gen_input *in);
/* The printed body of one request of `req`: attempt index `attempt` (0 is greedy), its seed (the
 * server receives 31 bits) and n choices. malloc'd (free), NULL if printing failed. */
char *rs_oa_attempt_body(cJSON *req, const rs_oa_body *b, uint32_t attempt, uint64_t seed, uint32_t n);

/* Fill g from a 200 response; 0, or -1 with why (malformed: the request is infra). */
int rs_oa_parse_reply(const rs_oa_body *b, const char *body, size_t len, rs_gen *g, char *why, size_t wn);
/* A short printable excerpt of a server's error body: error.message, message, detail, or the body. */
void rs_oa_server_message(const char *body, size_t len, char *out, size_t n);

#endif
