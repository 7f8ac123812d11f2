/* sass.c - a passing answer on a form-sass instance to a cubin: the NVIDIA half of `emit`.
 *
 * There is no assembler to hand the work to, so the order is: our verifier must pass the answer
 * (never a cubin from an unverified assignment); the listing is written back under it and
 * re-lifted, and every operand must still read the same definitions (a write-back that joins
 * two values is refused: a gap between our Problem and the listing); a value whose operand the
 * listing does not print (the hidden .E descriptor) must keep its register; no register may race
 * an in-flight instruction under ptxas's scoreboards (cubin/hazard.c); then cubin/lower.c
 * re-encodes the changed instructions into a copy of the instance's cubin and sets the register
 * count, and nvdisasm, not our encoder, reads the result back (cubin/crosscheck.c).
 *
 * An imported unit's cubin holds all its kernels while the instance's listing holds its own
 * (corpus/import_split.c): lowering, the hazard check and the crosscheck work on whole cubins, so
 * the other kernels' listing is read from the cubin (nvdisasm, as `corpus disasm` does) and they
 * keep ptxas's registers. */
#include "front/front.h"
#include "emit/emit.h"
#include "cubin/lower.h"
#include "sass/sass.h"
#include "verify/verifier.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_temp(const uint8_t *b, size_t n, char *path, rs_err *e) {
  int fd = mkstemp(path);
  if (fd < 0) return rs_errf(e, path, 0, "cannot create a temporary file: %s", strerror(errno));
  FILE *f = fdopen(fd, "wb");
  size_t w = f ? fwrite(b, 1, n, f) : 0;
  if (!f || (fclose(f) | (w != n))) {
    unlink(path);
    return rs_errf(e, path, 0, "cannot write a temporary file");
  }
  return 0;
}

/* The module of the whole cubin when it holds functions the instance's listing lacks (*out NULL
 * when it holds none), its function of the instance's name in *fk. */
static int whole_cubin(const rs_loaded *l, const uint8_t *cubin, size_t cubin_len, const char *nvdisasm,
                       rs_module **out, uint32_t *fk, rs_err *e) {
  *out = NULL;
  const char *id = l->row.id[0] ? l->row.id : l->f->path;
  uint8_t *bytes = rs_xmalloc(cubin_len);
  memcpy(bytes, cubin, cubin_len);
  rs_cubin c;
  int rc = rs_cubin_parse(bytes, cubin_len, id, &c, e);
  bool missing = false;
  for (uint32_t k = 0; !rc && k < c.nfuncs && !missing; k++) {
    uint32_t j = 0;
    while (j < l->m->nfuncs && strcmp(l->m->funcs[j]->name, c.funcs[k].name)) j++;
    missing = j == l->m->nfuncs;
  }
  rs_cubin_free(&c);
  if (rc || !missing) return rc;
  char tmp[] = "/tmp/regsweep-emit-unit-XXXXXX";
  rs_nvdisasm nd;
  char *text = NULL;
  rs_sass_stats st;
  const char *args[] = {"-c", NULL};
  rc = rs_nvdisasm_open(nvdisasm, &nd, e);
  if (!rc) rc = write_temp(cubin, cubin_len, tmp, e);
  if (!rc) {
    rc = rs_sass_disasm(&nd, tmp, args, &text, &st, e);
    unlink(tmp);
  }
  rs_module *m = rc ? NULL : rs_module_parse(id, text, strlen(text), RS_SRC_SASS, l->row.target[0] ? l->row.target : NULL, e);
  if (!rc && !m) rc = -1;
  uint32_t j = 0;
  while (m && j < m->nfuncs && strcmp(m->funcs[j]->name, l->f->name)) j++;
  if (m && (j == m->nfuncs || m->funcs[j]->nvregs != l->f->nvregs || m->funcs[j]->ninsts != l->f->ninsts))
    rc = rs_errf(e, id, 0, "the cubin's own listing of %s differs from the instance's", l->f->name);
  if (rc) {
    rs_module_free(m);
    return -1;
  }
  *out = m, *fk = j;
  return 0;
}

int rs_emit_sass(const rs_loaded *l, const char *answer, size_t len, const uint8_t *cubin, size_t cubin_len,
                 const char *out_path, const char *nvdisasm, bool crosscheck, rs_emit_sass_result *r, rs_err *e) {
  memset(r, 0, sizeof *r);
  const rs_problem *p = l->p;
  const rs_func *f = l->f;
  if (f->kind != RS_SRC_SASS) return rs_errf(e, f->path, 0, "%s: a cubin is written only for a SASS instance", f->name);
  if (!cubin || !cubin_len)
    return rs_errf(e, l->row.id[0] ? l->row.id : f->path, 0,
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
  /* per function of the module: the answer for the instance's, the listing's own elsewhere */
  const rs_module *m = l->m;
  rs_module *whole = NULL;
  uint32_t fk = 0;
  if (whole_cubin(l, cubin, cubin_len, nvdisasm, &whole, &fk, e)) {
    rs_candidate_free(&cand);
    return -1;
  }
  if (whole) m = whole, f = whole->funcs[fk];
  rs_preg **as = rs_xcalloc(m->nfuncs + 1, sizeof *as);
  for (uint32_t k = 0; k < m->nfuncs; k++) {
    const rs_func *g = m->funcs[k];
    as[k] = rs_xcalloc(g->nvregs + 1, sizeof *as[k]);
    for (uint32_t v = 0; v < g->nvregs && g->truth; v++) as[k][v] = g->truth[v];
    if (g == f) fk = k;
  }
  int rc = 0;
  for (uint32_t v = 0; v < p->nvars && !rc; v++) {
    if (!cand.reg || !cand.reg[v].lanes) rc = rs_errf(e, f->path, 0, "the answer gives no register for %s", p->vars[v].name);
    else as[fk][p->vars[v].fvreg] = (rs_preg){cand.reg[v].unit, p->vars[v].full};
  }
  rs_candidate_free(&cand);
  for (uint32_t i = 0; i < f->nops && !rc && !r->refused; i++) {
    const rs_operand *op = &f->ops[i];
    if (op->kind == RS_OP_VREG && !op->text_len && f->truth && as[fk][op->reg].unit != f->truth[op->reg].unit) {
      r->refused = true;
      snprintf(r->why, sizeof r->why, "value %s moved, but one of its operands is not printed (hidden descriptor)",
               f->vregs[op->reg].name);
    }
  }
  char *text = rc || r->refused ? NULL : rs_sass_write_module(m, as);
  for (uint32_t k = 0; k < m->nfuncs; k++) free(as[k]);
  free(as);
  rs_module *n = NULL;
  uint32_t *counts = NULL;
  rs_cubin c;
  memset(&c, 0, sizeof c);
  if (text) { /* re-lift: the same values, and the counts from the written registers */
    n = rs_module_parse("(answer written back)", rs_xstrndup(text, strlen(text)), strlen(text), RS_SRC_SASS,
                        l->row.target[0] ? l->row.target : NULL, e);
    if (!n || n->nfuncs != m->nfuncs) rc = n ? rs_errf(e, f->path, 0, "the written listing has other functions") : -1;
    else if (rs_sass_same_values(f, n->funcs[fk], NULL, r->why, sizeof r->why)) r->refused = true;
  }
  uint8_t *bytes = NULL;
  if (text && !rc && !r->refused) {
    bytes = rs_xmalloc(cubin_len);
    memcpy(bytes, cubin, cubin_len);
    rc = rs_cubin_parse(bytes, cubin_len, l->row.id[0] ? l->row.id : "cubin", &c, e);
    bytes = NULL; /* owned by c */
    counts = rc ? NULL : rs_xcalloc(c.nfuncs + 1, sizeof *counts);
    for (uint32_t k = 0; !rc && k < c.nfuncs; k++) {
      uint32_t j = 0;
      while (j < n->nfuncs && strcmp(n->funcs[j]->name, c.funcs[k].name)) j++;
      if (j == n->nfuncs) rc = rs_errf(e, f->path, 0, "function %s of the cubin is not in the listing", c.funcs[k].name);
      else counts[k] = rs_sass_regcount_of(n->funcs[j]);
    }
    uint32_t nh = 0;
    if (!rc) rc = rs_sass_hazards_listing(&c, text, l->row.id[0] ? l->row.id : f->path, &nh, r->why, sizeof r->why, e);
    if (!rc && nh) r->hazards = nh, r->encode_refused = true; /* r->why: the first */
    double t0 = rs_now();
    if (!rc && !nh) {
      int lr = rs_sass_lower(&c, m->text, text, counts, l->row.id[0] ? l->row.id : f->path, &r->low, e);
      if (lr && strstr(e->msg, "refused")) {
        r->encode_refused = true;
        snprintf(r->why, sizeof r->why, "%s", e->msg);
      } else if (lr) {
        rc = -1;
      }
    }
    r->lower_s = rs_now() - t0;
    for (uint32_t k = 0; k < c.nfuncs && k < 8 && counts; k++) r->regs[k] = counts[k];
    if (!rc && !r->encode_refused) rc = rs_cubin_write(&c, out_path, e);
  }
  if (!rc && !r->refused && !r->encode_refused && crosscheck) {
    rs_nvdisasm nd;
    char orig[] = "/tmp/regsweep-emit-orig-XXXXXX";
    double t0 = rs_now();
    rc = rs_nvdisasm_open(nvdisasm, &nd, e);
    if (!rc) rc = write_temp(cubin, cubin_len, orig, e);
    if (!rc) {
      rc = rs_sass_crosscheck(&nd, out_path, orig, text, counts, &r->x, e);
      unlink(orig);
    }
    r->crosschecked = !rc;
    r->xcheck_s = rs_now() - t0;
    if (rc || !rs_crosscheck_ok(&r->x)) unlink(out_path); /* never leave a cubin nvdisasm disagrees with */
  }
  free(counts);
  rs_cubin_free(&c);
  rs_module_free(n);
  rs_module_free(whole);
  free(text);
  if (rc) return -1;
  return r->refused || r->encode_refused || (r->crosschecked && !rs_crosscheck_ok(&r->x)) ? 1 : 0;
}
