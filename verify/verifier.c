/* verifier.c - `--verifier native|z3|both`: the three as hook structs found by name, and the
 * calls every caller makes (open, parse + check, close). */
#include "verify/verifier.h"
#include <string.h>

static int open_none(rs_verifier *v, unsigned timeout_ms, rs_err *e) {
  (void)v, (void)timeout_ms, (void)e;
  return 0;
}

static int open_z3(rs_verifier *v, unsigned timeout_ms, rs_err *e) {
  v->z3 = rs_z3_new(v->p, timeout_ms, e);
  return v->z3 ? 0 : -1;
}

static bool check_native(rs_verifier *v, const rs_candidate *c, rs_check_result *res, rs_check_result *z3res) {
  if (z3res) rs_result_init(z3res);
  rs_check_native(v->p, c, res);
  return true;
}

static bool check_z3(rs_verifier *v, const rs_candidate *c, rs_check_result *res, rs_check_result *z3res) {
  if (z3res) rs_result_init(z3res);
  rs_z3_check(v->z3, c, res);
  /* registers used and occupancy come from the native pass, which is cheap */
  rs_check_result nat;
  rs_result_init(&nat);
  rs_check_native(v->p, c, &nat);
  memcpy(res->used, nat.used, sizeof res->used);
  res->occupancy = nat.occupancy;
  return true;
}

static bool check_both(rs_verifier *v, const rs_candidate *c, rs_check_result *res, rs_check_result *z3res) {
  if (z3res) rs_result_init(z3res);
  rs_check_native(v->p, c, res);
  rs_check_result tmp, *zr = z3res;
  if (!zr) {
    rs_result_init(&tmp);
    zr = &tmp;
  }
  rs_z3_check(v->z3, c, zr);
  bool agree = zr->verdict == res->verdict || zr->verdict == RS_V_TIMEOUT;
  if (!agree) v->disagreements++;
  return agree;
}

const rs_verifier_ops rs_verifier_native = {"native", open_none, check_native};
const rs_verifier_ops rs_verifier_z3 = {"z3", open_z3, check_z3};
const rs_verifier_ops rs_verifier_both = {"both", open_z3, check_both};

/* In RS_VERIFIER_* order. */
static const rs_verifier_ops *const all[] = {&rs_verifier_native, &rs_verifier_z3, &rs_verifier_both};

const rs_verifier_ops *rs_verifier_ops_by_name(const char *name) {
  int k = rs_verifier_kind(name);
  return k < 0 ? NULL : all[k];
}

int rs_verifier_kind(const char *name) {
  for (int k = 0; k < (int)(sizeof all / sizeof *all); k++)
    if (!strcmp(name, all[k]->name)) return k;
  return -1;
}

int rs_verifier_open(rs_verifier *v, int kind, const rs_problem *p, unsigned timeout_ms, rs_err *e) {
  memset(v, 0, sizeof *v);
  if (kind < 0 || kind >= (int)(sizeof all / sizeof *all)) return rs_errf(e, "verifier", 0, "unknown verifier %d", kind);
  v->kind = kind;
  v->ops = all[kind];
  v->p = p;
  return v->ops->open(v, timeout_ms, e);
}

void rs_verifier_close(rs_verifier *v) {
  rs_z3_free(v->z3);
  v->z3 = NULL;
}

bool rs_verify_candidate(rs_verifier *v, const rs_candidate *c, rs_check_result *res, rs_check_result *z3res) {
  return v->ops->check(v, c, res, z3res);
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
