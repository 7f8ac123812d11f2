/* verifier.h - one verifier chosen by name: native, z3, or both (both counts disagreements:
 * any disagreement is a bug in one of them and is reported loudly by the callers). */
#ifndef RS_VERIFIER_H
#define RS_VERIFIER_H
#include "verify/verify.h"

enum { RS_VERIFIER_NATIVE, RS_VERIFIER_Z3, RS_VERIFIER_BOTH };

typedef struct {
  int kind;
  const rs_problem *p;
  rs_z3 *z3;
  uint32_t disagreements;
} rs_verifier;

int rs_verifier_kind(const char *name); /* -1 if unknown */
int rs_verifier_open(rs_verifier *v, int kind, const rs_problem *p, unsigned timeout_ms, rs_err *e);
void rs_verifier_close(rs_verifier *v);
/* Check a parsed candidate; with `both`, z3res (optional) gets Z3's result. Returns false on a
 * disagreement. */
bool rs_verify_candidate(rs_verifier *v, const rs_candidate *c, rs_check_result *res, rs_check_result *z3res);
/* Parse + check; c is filled (free with rs_candidate_free). */
bool rs_verify_text(rs_verifier *v, const rs_namemap *names, const char *text, size_t len, rs_candidate *c,
                    rs_check_result *res, rs_check_result *z3res);

#endif
