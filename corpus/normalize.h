/* normalize.h - the normalized text a model is prompted with (VeriLocc §3.2.2), both vendors.
 *
 * Built from the parsed IR (never from raw lines): one header line, one line per block and one
 * line per instruction; virtual registers renamed densely per function and kind (AMD s/v/a, NVIDIA
 * r/d/p), one opcode vocabulary for AMD and NVIDIA, metadata and allocation-irrelevant operands
 * stripped. The name map is exact and one-to-one, so a model's answer in normalized names maps
 * back to the original virtual registers. Format: docs/normalization.md. */
#ifndef RS_NORMALIZE_H
#define RS_NORMALIZE_H
#include "ir/ir.h"

/* Sizes of the text a model would otherwise see vs the normalized text. Lines are non-blank
 * lines; a token is a maximal run of [A-Za-z0-9_] or any other single non-blank character. */
typedef struct {
  uint32_t raw_lines, raw_tokens;       /* MIR: the machine function document; PTX: the .entry */
  uint32_t raw_ir_lines, raw_ir_tokens; /* MIR: plus the embedded LLVM IR module; PTX: = raw */
  uint32_t norm_lines, norm_tokens;
} rs_norm_stats;

typedef struct rs_norm {
  char *text;          /* NUL-terminated normalized text */
  size_t len;
  uint32_t nnames;     /* used virtual registers */
  char **norm;         /* normalized names in normalized order ("v0", "s3", "p1") */
  char **orig;         /* original names, same order ("%4711", "%p3") */
  uint32_t *fvreg;     /* function vreg index per name */
  uint32_t *by_norm;   /* name indices sorted by normalized name (lookups) */
  uint32_t *by_orig;   /* name indices sorted by original name */
  rs_norm_stats st;
} rs_norm;

rs_norm *rs_normalize(const rs_func *f, rs_err *e);
const char *rs_norm_text(const rs_norm *n);
/* Exact reverse and forward maps; NULL if the name is not a used virtual register. */
const char *rs_norm_original(const rs_norm *n, const char *normalized_name);
const char *rs_norm_normalized(const rs_norm *n, const char *original_name);
/* {"v0":"%12",...} in normalized order; malloc'd. */
char *rs_norm_map_json(const rs_norm *n);
void rs_norm_free(rs_norm *n);
/* Count non-blank lines and tokens (definition above) of s[0..len). */
void rs_norm_count(const char *s, size_t len, uint32_t *lines, uint32_t *tokens);

#endif
