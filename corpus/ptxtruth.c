/* ptxtruth.c - a match (ptx/match.c) becomes an instance truth, or a reason there is none.
 *
 * Values ptxas keeps in no register at all (constants and parameters it reads in place, results
 * nobody reads, intermediates a fused SASS instruction computes inside: mul.wide of IMAD.WIDE,
 * the shift of an .X4 address) still need one in an answer to the PTX Problem: they get the
 * lowest register of their class that conflicts with nothing placed so far (counted as
 * `completed`; no label of ptxas's is changed). A value the match could not place at all
 * (optimised away or no correspondence, split, rematerialised, ambiguous, uniform) leaves the
 * instance without a truth. Every other value needs its label. The complete map is then checked
 * against the PTX Problem: ptxas schedules and rematerialises, so its registers can break the
 * PTX-level interference; such a map is kept out with the count, as LLVM's inconsistent ones. */
#include "corpus/ptxtruth.h"
#include "corpus/truth.h"
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

rs_module *rs_ptxtruth_load_sass(const char *path, const char *target, rs_err *e) {
  rs_sass_opts o = {.no_lift = true};
  return rs_sass_load(path, target, &o, e);
}

rs_module *rs_ptxtruth_parse_sass(const char *name, char *text, size_t len, const char *target, rs_err *e) {
  rs_module *m = rs_xcalloc(1, sizeof *m);
  m->path = rs_xstrndup(name, strlen(name));
  m->text = text;
  m->len = len;
  m->kind = RS_SRC_SASS;
  rs_sass_opts o = {.no_lift = true};
  int rc = 0;
  if (target && !(m->tgt = rs_target_by_name(target))) rc = rs_errf(e, name, 0, "unknown target '%s'", target);
  if (!rc) rc = rs_sass_parse_opts(m, &o, e);
  if (!rc && m->nfuncs == 0) rc = rs_errf(e, name, 0, "no function found");
  if (rc) {
    rs_module_free(m);
    return NULL;
  }
  return m;
}

int rs_ptxtruth_with(const rs_func *ptx, const rs_problem *p, const rs_module *sass, rs_ptxtruth *t, rs_err *e) {
  for (uint32_t j = 0; j < sass->nfuncs; j++)
    if (!strcmp(sass->funcs[j]->name, ptx->name)) return rs_ptxtruth_build(ptx, p, sass->funcs[j], t, e);
  memset(t, 0, sizeof *t);
  snprintf(t->reason, sizeof t->reason, "PTX->SASS match: no function %.60s in the SASS listing", ptx->name);
  return 0;
}

char *rs_ptxtruth_for_dir(const char *dir, const char *target, const rs_func *ptx, const rs_problem *p, char *reason,
                          size_t n, int *broken) {
  char path[1200];
  *broken = 0;
  snprintf(path, sizeof path, "%s/%s.sass", dir, target);
  if (access(path, R_OK)) {
    char failed[1220];
    snprintf(failed, sizeof failed, "%s.FAILED", path);
    snprintf(reason, n, "PTX->SASS match: %s", access(failed, F_OK) ? "no SASS listing of this compile (a build without nvdisasm)"
                                                                     : "the SASS listing was refused (see the sass build failure)");
    return NULL;
  }
  rs_err e = {{0}};
  rs_module *sm = rs_ptxtruth_load_sass(path, target, &e);
  rs_ptxtruth t;
  if (!sm || rs_ptxtruth_with(ptx, p, sm, &t, &e)) {
    snprintf(reason, n, "PTX->SASS match: %.100s", e.msg);
    rs_module_free(sm);
    return NULL;
  }
  char *truth = t.truth;
  t.truth = NULL;
  *broken = t.map && !truth;
  snprintf(reason, n, "%s", t.reason);
  rs_ptxtruth_free(&t);
  rs_module_free(sm);
  return truth;
}

static uint32_t units_of(rs_lanes l, uint32_t base, uint32_t *out) {
  uint32_t n = 0;
  for (unsigned k = 0; k < 32 && l >> (2 * k); k++)
    if ((l >> (2 * k)) & 3) out[n++] = base + k;
  return n;
}

static bool overlap(rs_lanes la, uint32_t a, rs_lanes lb, uint32_t b) {
  uint32_t ua[32], ub[32], na = units_of(la, a, ua), nb = units_of(lb, b, ub);
  for (uint32_t i = 0; i < na; i++)
    for (uint32_t j = 0; j < nb; j++)
      if (ua[i] == ub[j]) return true;
  return false;
}

/* Lowest register of var v's class clear of every placed neighbour and fixed exclusion. */
static bool complete_one(const rs_problem *p, uint32_t v, rs_preg *as, const bool *placed) {
  const rs_target *t = p->tgt;
  const rs_pvar *x = &p->vars[v];
  for (uint32_t fi = 0; fi < t->nfiles; fi++) {
    if (!(x->files & (1u << fi))) continue;
    for (uint32_t u = t->files[fi].first; u < t->files[fi].first + t->files[fi].count; u++) {
      rs_preg r = {u, x->full};
      if (rs_problem_member(p, x->cls, r) != RS_MEMBER_OK) continue;
      bool ok = true;
      for (uint32_t c = 0; c < p->nconf && ok; c++) {
        const rs_conflict *k = &p->conf[c];
        if (k->a == v && placed[k->b]) ok = !overlap(k->la, u, k->lb, as[p->vars[k->b].fvreg].unit);
        else if (k->b == v && placed[k->a]) ok = !overlap(k->lb, u, k->la, as[p->vars[k->a].fvreg].unit);
      }
      for (uint32_t f = 0; f < p->nfixed && ok; f++)
        if (p->fixed[f].v == v) ok = !overlap(p->fixed[f].lv, u, p->fixed[f].p.lanes, p->fixed[f].p.unit);
      if (ok) {
        as[x->fvreg] = r;
        return true;
      }
    }
  }
  return false;
}

int rs_ptxtruth_build(const rs_func *ptx, const rs_problem *p, const rs_func *sass, rs_ptxtruth *t, rs_err *e) {
  memset(t, 0, sizeof *t);
  double t0 = rs_now();
  if (rs_match_run(ptx, sass, &t->m, e)) return -1;
  t->match_s = rs_now() - t0;
  t->nvalues = p->nvars;
  rs_preg *as = rs_xcalloc(ptx->nvregs + 1, sizeof *as);
  bool *placed = rs_xcalloc(p->nvars + 1, 1);
  uint32_t nmissing = 0;
  for (uint32_t v = 0; v < p->nvars; v++) {
    const rs_label *l = &t->m.lbl[p->vars[v].fvreg];
    if (l->status == RS_LBL_LABELLED) {
      as[p->vars[v].fvreg] = l->reg;
      placed[v] = true;
      t->labelled++;
    } else if (l->status != RS_LBL_FOLDED && l->status != RS_LBL_DEAD && l->status != RS_LBL_FUSED) {
      t->missing[l->status]++;
      nmissing++;
    }
  }
  if (nmissing) {
    int k = snprintf(t->reason, sizeof t->reason, "PTX->SASS match: %u of %u values unlabelled (", nmissing, p->nvars);
    bool first = true;
    for (int s = 0; s < RS_LBL_NSTATUS && k < (int)sizeof t->reason; s++)
      if (t->missing[s]) {
        k += snprintf(t->reason + k, sizeof t->reason - (size_t)k, "%s%u %s", first ? "" : ", ", t->missing[s],
                      rs_label_status_name[s]);
        first = false;
      }
    if (k < (int)sizeof t->reason) snprintf(t->reason + k, sizeof t->reason - (size_t)k, ")");
  } else {
    bool ok = true;
    for (uint32_t v = 0; v < p->nvars && ok; v++)
      if (!placed[v]) {
        ok = complete_one(p, v, as, placed);
        placed[v] = ok;
        t->completed += ok;
      }
    if (!ok) snprintf(t->reason, sizeof t->reason, "PTX->SASS match: no free register for a folded value");
    else {
      t->conflicts = rs_truth_check(p, as, &t->nonmember);
      t->map = rs_truth_json(p, as);
      if (t->conflicts == 0 && t->nonmember == 0) t->truth = rs_xstrndup(t->map, strlen(t->map));
      else
        snprintf(t->reason, sizeof t->reason,
                 "ptxas's registers break the PTX-level constraints: %u conflicts, %u outside the class",
                 t->conflicts == UINT32_MAX ? 0 : t->conflicts, t->nonmember);
    }
  }
  free(as);
  free(placed);
  return 0;
}

void rs_ptxtruth_free(rs_ptxtruth *t) {
  rs_match_free(&t->m);
  free(t->truth);
  free(t->map);
  memset(t, 0, sizeof *t);
}
