/* verifier.h - one verifier chosen by name: native, z3, or both (both counts disagreements:
 * any disagreement is a bug in one of them and is reported loudly by the callers). Each is a
 * struct of hooks found by name (rs_verifier_ops), as model back ends are (model/model.h). */
#ifndef RS_VERIFIER_H
#define RS_VERIFIER_H
#include "verify/verify.h"

/* Index of a verifier in rs_verifier_ops_all (and what rs_verifier_kind returns). */
enum { RS_VERIFIER_NATIVE, RS_VERIFIER_Z3, RS_VERIFIER_BOTH };

typedef struct rs_verifier rs_verifier;
typedef struct {
  const char *name; /* "native", "z3", "both": --verifier */
  /* The solver state it needs for p, if any (v->z3); 0, or -1 with e. */
  int (*open)(rs_verifier *v, unsigned timeout_ms, rs_err *e);
  /* Check a parsed candidate into res; z3res (optional) gets Z3's own result where it runs
   * beside another checker. Returns false on a disagreement between checkers. */
  bool (*check)(rs_verifier *v, const rs_candidate *c, rs_check_result *res, rs_check_result *z3res);
} rs_verifier_ops;

struct rs_verifier {
  int kind; /* RS_VERIFIER_* */
  const rs_verifier_ops *ops;
  const rs_problem *p;
  rs_z3 *z3;
  uint32_t disagreements;
};

extern const rs_verifier_ops rs_verifier_native, rs_verifier_z3, rs_verifier_both;
/* By name; NULL if unknown. */
const rs_verifier_ops *rs_verifier_ops_by_name(const char *name);

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
