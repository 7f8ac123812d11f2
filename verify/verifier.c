/* verifier.c - `--verifier native|z3|both` behind one call: parse, then check. */
#include "verify/verifier.h"
#include <string.h>

int rs_verifier_kind(const char *name) {
  if (!strcmp(name, "native")) return RS_VERIFIER_NATIVE;
  if (!strcmp(name, "z3")) return RS_VERIFIER_Z3;
  if (!strcmp(name, "both")) return RS_VERIFIER_BOTH;
  return -1;
}

int rs_verifier_open(rs_verifier *v, int kind, const rs_problem *p, unsigned timeout_ms, rs_err *e) {
  memset(v, 0, sizeof *v);
  v->kind = kind;
  v->p = p;
  if (kind != RS_VERIFIER_NATIVE) {
    v->z3 = rs_z3_new(p, timeout_ms, e);
    if (!v->z3) return -1;
  }
  return 0;
}

void rs_verifier_close(rs_verifier *v) {
  rs_z3_free(v->z3);
  v->z3 = NULL;
}

bool rs_verify_candidate(rs_verifier *v, const rs_candidate *c, rs_check_result *res, rs_check_result *z3res) {
  if (z3res) rs_result_init(z3res);
  if (v->kind != RS_VERIFIER_Z3) rs_check_native(v->p, c, res);
  if (v->kind == RS_VERIFIER_NATIVE) return true;
  rs_check_result *zr = v->kind == RS_VERIFIER_Z3 ? res : z3res;
  rs_check_result tmp;
  if (!zr) {
    rs_result_init(&tmp);
    zr = &tmp;
  }
  rs_z3_check(v->z3, c, zr);
  if (v->kind == RS_VERIFIER_Z3) {
    /* registers used and occupancy come from the native pass, which is cheap */
    rs_check_result nat;
    rs_result_init(&nat);
    rs_check_native(v->p, c, &nat);
    memcpy(res->used, nat.used, sizeof res->used);
    res->occupancy = nat.occupancy;
    return true;
  }
  bool agree = zr->verdict == res->verdict || zr->verdict == RS_V_TIMEOUT;
  if (!agree) v->disagreements++;
  return agree;
}

bool rs_verify_text(rs_verifier *v, const rs_namemap *names, const char *text, size_t len, rs_candidate *c,
                    rs_check_result *res, rs_check_result *z3res) {
  rs_result_init(res);
  if (z3res) rs_result_init(z3res);
  if (rs_candidate_parse(v->p, names, text, len, c, res)) {
    if (z3res) *z3res = *res; /* both verifiers share the parser */
    return true;
  }
  return rs_verify_candidate(v, c, res, z3res);
}
