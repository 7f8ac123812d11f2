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
    /* the message, not the work directory's path in front of it (a reason is short) */
    size_t dl = strlen(dir);
    const char *m = strncmp(e.msg, dir, dl) || e.msg[dl] != '/' ? e.msg : e.msg + dl + 1;
    snprintf(reason, n, "PTX->SASS match: %.100s", m);
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

const char *const rs_break_cause_name[RS_BRK_N] = {
    "same value (a copy)", "a copy of a value defined twice", "read moved above the def", "def moved below the last read",
    "read elsewhere",      "def not located",                 "other"};

static bool defines(const rs_func *f, uint32_t ii, uint32_t vreg) {
  const rs_inst *in = &f->insts[ii];
  for (uint32_t k = 0; k < in->nops; k++) {
    const rs_operand *o = &f->ops[in->first_op + k];
    if (o->kind == RS_OP_VREG && (o->flags & RS_F_DEF) && o->reg == vreg) return true;
  }
  return false;
}

static uint32_t ndefs(const rs_func *f, uint32_t vreg) {
  uint32_t n = 0;
  for (uint32_t ii = 0; ii < f->ninsts; ii++) n += defines(f, ii, vreg);
  return n;
}

static bool reads(const rs_func *f, uint32_t ii, uint32_t vreg) {
  const rs_inst *in = &f->insts[ii];
  for (uint32_t k = 0; k < in->nops; k++) {
    const rs_operand *o = &f->ops[in->first_op + k];
    if (o->kind == RS_OP_VREG && !(o->flags & RS_F_DEF) && o->reg == vreg) return true;
  }
  return false;
}

/* The SASS instructions of vreg v's evidence (defs or reads; of PTX instruction pi, or any:
 * UINT32_MAX): lowest and highest, false if none. */
static bool sass_span(const rs_match *m, uint32_t v, bool def, uint32_t pi, uint32_t *lo, uint32_t *hi) {
  *lo = UINT32_MAX, *hi = 0;
  for (uint32_t i = 0; i < m->nev; i++) {
    const rs_lsite *x = &m->ev[i];
    if (x->def != def || x->vreg != v || (pi != UINT32_MAX && x->ptx_inst != pi)) continue;
    if (x->sass_inst < *lo) *lo = x->sass_inst;
    if (x->sass_inst > *hi) *hi = x->sass_inst;
  }
  return *lo != UINT32_MAX;
}

/* The cause of broken conflict c (docs/ptxtruth.md): d is defined at the PTX point while o is
 * live; in SASS their live ranges (defs to reads of the matched evidence) are disjoint when ptxas
 * reordered. Order is each listing's text order (exact in straight-line code; in a loop a read
 * above may be the next trip's). */
static uint8_t break_cause(const rs_func *ptx, const rs_problem *p, const rs_match *m, const rs_conflict *c,
                           uint32_t *dv, uint32_t *ov) {
  uint32_t a = c->a, b = c->b, fa = p->vars[a].fvreg, fb = p->vars[b].fvreg;
  bool da = defines(ptx, c->inst, fa), db = defines(ptx, c->inst, fb);
  *dv = db ? b : a, *ov = db ? a : b;
  if (!da && !db) return RS_BRK_OTHER;
  uint32_t d = db ? fb : fa, o = db ? fa : fb, dlo, dhi, rlo, rhi, olo, ohi;
  const rs_inst *ci = &ptx->insts[c->inst];
  if ((ci->flags & RS_I_COPY) && ci->nops == 2 && ptx->ops[ci->first_op + 1].kind == RS_OP_VREG &&
      ptx->ops[ci->first_op + 1].reg == o)
    return ndefs(ptx, d) == 1 && ndefs(ptx, o) == 1 ? RS_BRK_SAMEVAL : RS_BRK_COPY_MULTI;
  if (!sass_span(m, d, true, c->inst, &dlo, &dhi)) return RS_BRK_NODEF;
  bool later = false, unread = false;
  uint32_t nreads = 0;
  for (uint32_t ii = c->inst + 1; ii < ptx->ninsts; ii++) {
    if (!reads(ptx, ii, o)) continue;
    nreads++;
    uint32_t lo, hi;
    if (!sass_span(m, o, false, ii, &lo, &hi)) unread = true;
    else later |= hi > dlo;
  }
  if (nreads && !later && !unread) return RS_BRK_READ_ABOVE;
  /* o's defs all below d's last read: o's range starts after d's ends */
  if (sass_span(m, d, false, UINT32_MAX, &rlo, &rhi) && sass_span(m, o, true, UINT32_MAX, &olo, &ohi) && olo > rhi)
    return RS_BRK_DEF_BELOW;
  return unread ? RS_BRK_NOTREAD : RS_BRK_OTHER;
}

static void classify_breaks(const rs_func *ptx, const rs_problem *p, const rs_preg *as, rs_ptxtruth *t) {
  for (uint32_t i = 0; i < p->nconf; i++) {
    const rs_conflict *c = &p->conf[i];
    if (!overlap(c->la, as[p->vars[c->a].fvreg].unit, c->lb, as[p->vars[c->b].fvreg].unit)) continue;
    rs_break k = {i, 0, 0, 0};
    k.cause = break_cause(ptx, p, &t->m, c, &k.d, &k.o);
    t->ncause[k.cause]++;
    RS_PUSH(t->brk, t->nbrk, t->capbrk, k);
  }
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
      else {
        classify_breaks(ptx, p, as, t);
        /* fits the corpus's 128-byte truth_reason with 3-digit counts */
        snprintf(t->reason, sizeof t->reason,
                 "ptxas's registers break the PTX-level constraints: %u conflicts, %u outside the class (%u copies, "
                 "%u reordered, %u other)",
                 t->conflicts == UINT32_MAX ? 0 : t->conflicts, t->nonmember,
                 t->ncause[RS_BRK_SAMEVAL] + t->ncause[RS_BRK_COPY_MULTI],
                 t->ncause[RS_BRK_READ_ABOVE] + t->ncause[RS_BRK_DEF_BELOW],
                 t->ncause[RS_BRK_NOTREAD] + t->ncause[RS_BRK_NODEF] + t->ncause[RS_BRK_OTHER]);
      }
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
  free(t->brk);
  memset(t, 0, sizeof *t);
}
