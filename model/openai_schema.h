/* openai_schema.h - pieces of the openai: back end that depend only on the Problem (no HTTP):
 * the answer's JSON schema, the register description and template rendering. */
#ifndef RS_OPENAI_SCHEMA_H
#define RS_OPENAI_SCHEMA_H
#include "model/model.h"
#include <cjson/cJSON.h>

/* Regex (JSON Schema / ECMA, also valid POSIX ERE) of the legal spellings of a class: by register
 * file and width, numbers bounded to the file's digits ("^v[0-9]{1,3}$",
 * "^(v\[[0-9]{1,3}:[0-9]{1,3}\]|a\[…\])$", "^P[0-9]{1,1}$"); alignment and budget are left to
 * the verifier (v300 matches). NULL if the class has no spelling. */
char *rs_oa_class_pattern(const rs_target *t, int cls);
/* {"type":"object","properties":{name:{"type":"string","pattern":...}},"required":[every name],
 * "additionalProperties":false}; vnames may be NULL (original names). Linear in the values. */
cJSON *rs_oa_schema(const rs_problem *p, const char *const *vnames);
/* schema_strict=1: each value's string is one of exactly the registers of its class the
 * function may use (width, alignment, inside the file, off reserved units, within its budget:
 * rs_problem_member), an enumeration in "$defs" per class, referenced by "$ref" from each value.
 * strict=false: rs_oa_schema. */
cJSON *rs_oa_schema_ex(const rs_problem *p, const char *const *vnames, bool strict);
/* The enumeration of one class (a JSON array of spellings), NULL if it has no register. */
cJSON *rs_oa_class_enum(const rs_problem *p, int cls);
/* A few lines on the register files and classes the Problem's values use. */
void rs_oa_describe_registers(rs_sbuf *b, const rs_problem *p);

/* Replace {{key}} by its value; unknown placeholders stay as written. */
typedef struct {
  const char *const *key;
  const char *const *val;
  uint32_t n;
} rs_oa_vars;
void rs_oa_render(rs_sbuf *b, const char *tmpl, size_t len, const rs_oa_vars *vars);

/* Fill g from the body of a 200 response (chat: choices[0].message.content, else
 * choices[0].text; finish_reason, usage). Returns 0, or -1 with the reason in why. The body is
 * untrusted; exposed for fuzz/fuzz_openai.c. Defined in openai_reply.c. */
int rs_openai_parse_response(const char *body, size_t len, bool chat, rs_gen *g, char *why, size_t wn);

#endif
