/* sass.c - a passing answer on a form-sass instance to a cubin: the NVIDIA half of `emit`.
 *
 * There is no assembler to hand the work to, so the order is: our verifier must pass the answer
 * (never a cubin from an unverified assignment); the listing is written back under it and
 * re-lifted, and every operand must still read the same definitions (a write-back that joins
 * two values is refused: a gap between our Problem and the listing); a value whose operand the
 * listing does not print (the hidden .E descriptor) must keep its register; no register may race
 * an in-flight instruction under ptxas's scoreboards (cubin/hazard.c); then the changed
 * instructions are re-encoded into a copy of the instance's cubin with the register count set,
 * and nvdisasm, not our encoder, reads the result back. Every step after the verifier is
 * mcode/'s pipeline (the same as `regalloc X.cubin -o`); this file says what an answer means.
 *
 * An imported unit's cubin holds all its kernels while the instance's listing holds its own
 * (corpus/import_split.c): lowering, the hazard check and the crosscheck work on whole cubins, so
 * the other kernels' listing is read from the cubin (nvdisasm, as `corpus disasm` does) and they
 * keep ptxas's registers. */
#include "emit/emit.h"
#include "mcode/mcode.h"
#include "verify/verifier.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Does the cubin hold functions the instance's listing lacks (an imported unit's other kernels)? */
static bool cubin_has_more(const rs_mc *mc) {
  for (uint32_t k = 0; k < mc->cub.nfuncs; k++) {
    uint32_t j = 0;
    while (j < mc->m->nfuncs && strcmp(mc->m->funcs[j]->name, mc->cub.funcs[k].name)) j++;
    if (j == mc->m->nfuncs) return true;
  }
  return false;
}

int rs_emit_sass(const rs_loaded *l, const char *answer, size_t len, const uint8_t *cubin, size_t cubin_len,
                 const char *out_path, const char *nvdisasm, bool crosscheck, rs_emit_sass_result *r, rs_err *e) {
  memset(r, 0, sizeof *r);
  const rs_problem *p = l->p;
  const rs_func *f = l->f;
  if (f->kind != RS_SRC_SASS) return rs_errf(e, f->path, 0, "%s: a cubin is written only for a SASS instance", f->name);
  const char *id = l->row.id[0] ? l->row.id : f->path;
  if (!cubin || !cubin_len)
    return rs_errf(e, id, 0,
                   "no cubin for this instance: the corpus predates its /text/cubin column (re-assemble it with "
                   "`regsweep corpus build`) or pass --cubin FILE.cubin");
  rs_verifier vf;
  if (rs_verifier_open(&vf, RS_VERIFIER_NATIVE, p, 10000, e)) return -1;
  rs_candidate cand;
  rs_verify_text(&vf, &l->names, answer, len, &cand, &r->verdict, NULL);
  rs_verifier_close(&vf);
  if (r->verdict.verdict != RS_V_PASS) {
    r->refused = true;
    snprintf(r->why, sizeof r->why, "the verifier rejects the answer (%s)", rs_verdict_str(r->verdict.verdict));
    rs_candidate_free(&cand);
    return 1;
  }
  /* the machine code, read once: the instance's listing, or the whole cubin's when it holds more */
  rs_mc mc;
  if (rs_mc_borrow(&mc, l->m, cubin, cubin_len, id, e)) {
    rs_candidate_free(&cand);
    return -1;
  }
  int rc = 0;
  uint32_t fk = 0;
  if (cubin_has_more(&mc)) {
    rc = rs_mc_disasm_whole(&mc, nvdisasm, l->row.target[0] ? l->row.target : NULL, e);
    while (!rc && fk < mc.m->nfuncs && strcmp(mc.m->funcs[fk]->name, l->f->name)) fk++;
    if (!rc && (fk == mc.m->nfuncs || mc.m->funcs[fk]->nvregs != l->f->nvregs || mc.m->funcs[fk]->ninsts != l->f->ninsts))
      rc = rs_errf(e, id, 0, "the cubin's own listing of %s differs from the instance's", l->f->name);
  } else {
    while (mc.m->funcs[fk] != f) fk++;
  }
  if (rc) {
    rs_candidate_free(&cand);
    rs_mc_free_input(&mc);
    return -1;
  }
  /* per function of the module: the answer for the instance's, the listing's own elsewhere */
  const rs_module *m = mc.m;
  f = m->funcs[fk];
  rs_preg **as = rs_xcalloc(m->nfuncs + 1, sizeof *as);
  for (uint32_t k = 0; k < m->nfuncs; k++) {
    const rs_func *g = m->funcs[k];
    as[k] = rs_xcalloc(g->nvregs + 1, sizeof *as[k]);
    for (uint32_t v = 0; v < g->nvregs && g->truth; v++) as[k][v] = g->truth[v];
  }
  for (uint32_t v = 0; v < p->nvars && !rc; v++) {
    if (!cand.reg || !cand.reg[v].lanes) rc = rs_errf(e, f->path, 0, "the answer gives no register for %s", p->vars[v].name);
    else as[fk][p->vars[v].fvreg] = (rs_preg){cand.reg[v].unit, p->vars[v].full};
  }
  rs_candidate_free(&cand);
  int64_t moved = rc ? -1 : rs_mc_hidden_moved(f, as[fk]);
  if (moved >= 0) {
    r->refused = true;
    snprintf(r->why, sizeof r->why, "value %s moved, but one of its operands is not printed (hidden descriptor)",
             f->vregs[moved].name);
  }
  char *text = NULL;
  rs_module *n = NULL;
  /* re-lift: the same values, and the counts from the written registers */
  if (!rc && !r->refused && rs_mc_write(&mc, as, "(answer written back)", &text, &n, e)) rc = -1;
  for (uint32_t k = 0; k < m->nfuncs; k++) free(as[k]);
  free(as);
  if (n && rs_sass_same_values(f, n->funcs[fk], NULL, r->why, sizeof r->why)) r->refused = true;
  if (!rc && !r->refused) {
    rs_mc_lower_opts o = {.out = out_path, .nvd = nvdisasm, .crosscheck = crosscheck, .hazards_refuse = true};
    rs_mc_lowered lr;
    int st = rs_mc_lower(&mc, text, n, &o, &lr, e);
    r->low = lr.st;
    r->lower_s = lr.ms / 1e3;
    r->xcheck_s = lr.xcheck_s;
    r->hazards = lr.hazards;
    r->crosschecked = lr.crosschecked;
    r->x = lr.x;
    for (uint32_t k = 0; k < mc.cub.nfuncs && k < 8 && lr.regcount; k++) r->regs[k] = lr.regcount[k];
    if (st == 1 && lr.hazards) { /* r->why: the first */
      r->encode_refused = true;
      snprintf(r->why, sizeof r->why, "%s", lr.hazard);
    } else if (st == 1 && !lr.lowered) { /* a form without a trusted field */
      r->encode_refused = true;
      snprintf(r->why, sizeof r->why, "%s", e->msg);
    } else if (st == 2) {
      rc = -1;
    }
    rs_mc_lowered_free(&lr);
  }
  rs_module_free(n);
  free(text);
  rs_mc_free_input(&mc);
  if (rc) return -1;
  return r->refused || r->encode_refused || (r->crosschecked && !rs_crosscheck_ok(&r->x)) ? 1 : 0;
}
