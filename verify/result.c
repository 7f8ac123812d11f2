/* result.c - verdicts, violation kinds, and recording findings. */
#include "verify/verify.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *rs_verdict_str(rs_verdict v) {
  static const char *const s[] = {"pass", "syntax", "dataflow", "hardware", "timeout", "infra"};
  return v < RS_V__N ? s[v] : "?";
}

const char *rs_vkind_str(rs_vkind k) {
  static const char *const s[] = {"json", "unknown", "missing", "duplicate", "badreg", "conflict",
                                  "fixed", "class", "align", "reserved", "budget"};
  return k < RS_VK__N ? s[k] : "?";
}

rs_verdict rs_vkind_verdict(rs_vkind k) {
  switch (k) {
  case RS_VK_JSON: case RS_VK_UNKNOWN: case RS_VK_MISSING: case RS_VK_DUPLICATE: case RS_VK_BADREG:
    return RS_V_SYNTAX;
  case RS_VK_CONFLICT: case RS_VK_FIXED:
    return RS_V_DATAFLOW;
  default:
    return RS_V_HARDWARE;
  }
}

void rs_result_init(rs_check_result *r) { memset(r, 0, sizeof *r); }

/* Precedence of a failing verdict: the category a user must fix first. */
static int rank(rs_verdict v) {
  switch (v) {
  case RS_V_SYNTAX: return 3;
  case RS_V_HARDWARE: return 2;
  case RS_V_DATAFLOW: return 1;
  default: return 0;
  }
}

void rs_result_add(rs_check_result *r, rs_vkind k, const char *fmt, ...) {
  r->counts[k]++;
  rs_verdict v = rs_vkind_verdict(k);
  if (rank(v) > rank(r->verdict)) r->verdict = v;
  if (r->ndiag < RS_MAX_DIAG) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->diag[r->ndiag++], sizeof r->diag[0], fmt, ap);
    va_end(ap);
  }
}
