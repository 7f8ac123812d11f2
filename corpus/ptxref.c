/* ptxref.c - the reference allocation of a ptx instance (issue 39): a verified answer to the PTX
 * Problem that keeps ptxas's register for as many matched values as PTX order allows.
 *
 * Why not the truth: ptxas schedules against its own order, so its registers can break PTX-level
 * interference (docs/ptxtruth.md). The reference keeps a maximal conflict-free subset of the
 * labels (greedy: the label in the most broken conflicts goes first, ties to the wider live range
 * are not tried: a label dropped frees its neighbours' conflicts, so few go), then places every
 * other value first-fit: ptxas's register when it was labelled and is free, else the lowest free
 * register of its class. Values are placed in the Problem's colouring order. Should first-fit run
 * out of registers, the Problem is coloured by model/color.c alone (no label kept; counted). The
 * map leaves only after the native and the Z3 verifier both pass it. */
#include "corpus/ptxref.h"
#include "corpus/truth.h"
#include "front/front.h"
#include "storage/corpus.h"
#include "model/color.h"
#include "verify/verifier.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  uint32_t *first, *list; /* per value: its conflicts list[first[v] .. first[v+1]] */
} adj;

static void adj_build(const rs_problem *p, adj *g) {
  g->first = rs_xcalloc(p->nvars + 2, sizeof *g->first);
  g->list = rs_xcalloc(2u * p->nconf + 1, sizeof *g->list);
  for (uint32_t c = 0; c < p->nconf; c++) g->first[p->conf[c].a + 1]++, g->first[p->conf[c].b + 1]++;
  for (uint32_t v = 0; v < p->nvars; v++) g->first[v + 1] += g->first[v];
  uint32_t *fill = rs_xcalloc(p->nvars + 1, sizeof *fill);
  for (uint32_t c = 0; c < p->nconf; c++) {
    uint32_t a = p->conf[c].a, b = p->conf[c].b;
    g->list[g->first[a] + fill[a]++] = c;
    g->list[g->first[b] + fill[b]++] = c;
  }
  free(fill);
}

/* Can value v take register r, given the placed values (a[w].lanes != 0) and the fixed ones? */
static bool fits(const rs_problem *p, const adj *g, const rs_preg *a, uint32_t v, rs_preg r) {
  if (rs_problem_member(p, p->vars[v].cls, r) != RS_MEMBER_OK) return false;
  for (uint32_t k = g->first[v]; k < g->first[v + 1]; k++) {
    const rs_conflict *c = &p->conf[g->list[k]];
    uint32_t w = c->a == v ? c->b : c->a;
    if (w == v || !a[w].lanes) continue;
    rs_lanes mine = c->a == v ? c->la : c->lb, theirs = c->a == v ? c->lb : c->la;
    if (rs_lanes_overlap(r.unit, mine, a[w].unit, theirs)) return false;
  }
  for (uint32_t f = 0; f < p->nfixed; f++)
    if (p->fixed[f].v == v && rs_lanes_overlap(r.unit, p->fixed[f].lv, p->fixed[f].p.unit, p->fixed[f].p.lanes))
      return false;
  return true;
}

static bool first_fit(const rs_problem *p, const adj *g, rs_preg *a, uint32_t v) {
  const rs_target *t = p->tgt;
  const rs_pvar *x = &p->vars[v];
  for (uint32_t fi = 0; fi < t->nfiles; fi++) {
    if (!(x->files & (1u << fi))) continue;
    for (uint32_t u = t->files[fi].first; u < t->files[fi].first + t->files[fi].count; u++) {
      rs_preg r = {u, x->full};
      if (fits(p, g, a, v, r)) {
        a[v] = r;
        return true;
      }
    }
  }
  return false;
}

typedef struct {
  uint32_t order, v;
} ordv;

static int by_order(const void *x, const void *y) {
  const ordv *a = x, *b = y;
  return a->order != b->order ? (a->order < b->order ? -1 : 1) : (a->v < b->v ? -1 : a->v > b->v);
}

/* Both verifiers on the map; 1 pass, 0 fail (reason set), -1 infrastructure. */
static int verify_both(const rs_problem *p, const char *json, rs_ptxref *r, rs_err *e) {
  rs_verifier vf;
  if (rs_verifier_open(&vf, RS_VERIFIER_BOTH, p, 60000, e)) return -1;
  rs_candidate c;
  rs_check_result res, z3;
  bool agree = rs_verify_text(&vf, NULL, json, strlen(json), &c, &res, &z3);
  rs_candidate_free(&c);
  rs_verifier_close(&vf);
  if (agree && res.verdict == RS_V_PASS && z3.verdict == RS_V_PASS) return 1;
  snprintf(r->reason, sizeof r->reason, "reference refused: native %s, z3 %s%s%.60s", rs_verdict_str(res.verdict),
           rs_verdict_str(z3.verdict), res.ndiag ? ": " : "", res.ndiag ? res.diag[0] : "");
  return 0;
}

int rs_ptxref_build(const rs_func *ptx, const rs_problem *p, const rs_ptxtruth *t, rs_ptxref *r, rs_err *e) {
  (void)ptx;
  memset(r, 0, sizeof *r);
  double t0 = rs_now();
  r->nvalues = p->nvars;
  adj g;
  adj_build(p, &g);
  rs_preg *want = rs_xcalloc(p->nvars + 1, sizeof *want), *a = rs_xcalloc(p->nvars + 1, sizeof *a);
  for (uint32_t v = 0; v < p->nvars; v++) {
    const rs_label *l = &t->m.lbl[p->vars[v].fvreg];
    if (l->status != RS_LBL_LABELLED) continue;
    r->labelled++;
    want[v] = l->reg;
    /* a label outside the value's class or on a fixed register is never kept */
    if (rs_problem_member(p, p->vars[v].cls, l->reg) == RS_MEMBER_OK) a[v] = l->reg;
    if (a[v].lanes && !fits(p, &g, a, v, a[v])) {
      /* fixed-register clash only matters here; conflicts are resolved below */
      bool fixed_bad = false;
      for (uint32_t f = 0; f < p->nfixed; f++)
        fixed_bad |= p->fixed[f].v == v &&
                     rs_lanes_overlap(l->reg.unit, p->fixed[f].lv, p->fixed[f].p.unit, p->fixed[f].p.lanes);
      if (fixed_bad) a[v].lanes = 0;
    }
  }
  /* the broken conflicts among kept labels, and each value's count of them */
  uint32_t *nbad = rs_xcalloc(p->nvars + 1, sizeof *nbad);
  uint32_t *bad = NULL, nb = 0, capb = 0;
  for (uint32_t c = 0; c < p->nconf; c++) {
    const rs_conflict *k = &p->conf[c];
    if (a[k->a].lanes && a[k->b].lanes && rs_lanes_overlap(a[k->a].unit, k->la, a[k->b].unit, k->lb)) {
      RS_PUSH(bad, nb, capb, c);
      nbad[k->a]++, nbad[k->b]++;
    }
  }
  for (uint32_t live = nb; live;) {
    uint32_t worst = 0;
    for (uint32_t v = 1; v < p->nvars; v++)
      if (nbad[v] > nbad[worst]) worst = v;
    a[worst].lanes = 0;
    r->dropped++;
    for (uint32_t i = 0; i < nb; i++) {
      const rs_conflict *k = &p->conf[bad[i]];
      if (bad[i] == UINT32_MAX || (k->a != worst && k->b != worst)) continue;
      nbad[k->a]--, nbad[k->b]--;
      bad[i] = UINT32_MAX;
      live--;
    }
  }
  free(bad);
  free(nbad);
  for (uint32_t v = 0; v < p->nvars; v++) r->kept += a[v].lanes != 0;
  /* the rest, first-fit in colouring order, ptxas's register first */
  ordv *ord = rs_xcalloc(p->nvars + 1, sizeof *ord);
  for (uint32_t v = 0; v < p->nvars; v++) ord[v] = (ordv){p->vars[v].order, v};
  qsort(ord, p->nvars, sizeof *ord, by_order);
  bool ok = true;
  for (uint32_t i = 0; i < p->nvars && ok; i++) {
    uint32_t v = ord[i].v;
    if (a[v].lanes) continue;
    if (want[v].lanes && rs_problem_member(p, p->vars[v].cls, want[v]) == RS_MEMBER_OK && fits(p, &g, a, v, want[v])) {
      a[v] = want[v];
      r->biased++;
    } else ok = first_fit(p, &g, a, v);
  }
  free(ord);
  if (!ok) {
    rs_color *col = rs_color_new(p);
    memset(a, 0, sizeof *a * (p->nvars + 1));
    ok = rs_color_run(col, RS_ORDER_BRIGGS, true, NULL, 1, a) == 0;
    rs_color_free(col);
    r->fallback = 1;
    r->kept = r->biased = 0;
    for (uint32_t v = 0; v < p->nvars; v++) r->kept += want[v].lanes && a[v].unit == want[v].unit;
  }
  int rc = 0;
  if (!ok) snprintf(r->reason, sizeof r->reason, "reference: no register for a value without spilling");
  else {
    unsigned used[RS_MAX_FILES];
    rs_color_used(p, a, used);
    r->regs = used[0];
    rs_preg *as = rs_xcalloc(ptx->nvregs + 1, sizeof *as);
    for (uint32_t v = 0; v < p->nvars; v++) as[p->vars[v].fvreg] = a[v];
    char *json = rs_truth_json(p, as);
    free(as);
    int vr = verify_both(p, json, r, e);
    if (vr == 1) r->map = json;
    else free(json);
    rc = vr < 0 ? -1 : 0;
  }
  free(want);
  free(a);
  free(g.first);
  free(g.list);
  r->seconds = rs_now() - t0;
  return rc;
}

void rs_ptxref_free(rs_ptxref *r) {
  free(r->map);
  memset(r, 0, sizeof *r);
}

/* The reference of ptx row pi against its sass row sx; 0 with pi->reference NULL when refused. */
static int reference_of(rs_instance *pi, const rs_instance *sx, rs_ptxref_stats *st, rs_err *e) {
  rs_module *pm = rs_module_parse(pi->id, rs_xstrndup(pi->raw, strlen(pi->raw)), strlen(pi->raw), RS_SRC_PTX,
                                  pi->target, e);
  rs_module *sm = pm ? rs_ptxtruth_parse_sass(sx->id, rs_xstrndup(sx->raw, strlen(sx->raw)), strlen(sx->raw),
                                              sx->target, e)
                     : NULL;
  rs_problem *p = sm ? rs_problem_build(pm->funcs[0], e) : NULL;
  int rc = -1;
  rs_ptxtruth t;
  if (p && !rs_ptxtruth_with(pm->funcs[0], p, sm, &t, e)) {
    rs_ptxref r;
    rc = rs_ptxref_build(pm->funcs[0], p, &t, &r, e);
    st->seconds += r.seconds;
    if (!rc && r.map) {
      pi->reference = r.map;
      r.map = NULL;
      pi->reference_kept = r.kept, pi->reference_labelled = r.labelled, pi->reference_regs = r.regs;
      st->refs++;
      st->values += r.nvalues, st->labelled += r.labelled, st->kept += r.kept, st->regs += r.regs;
      st->ptxas_regs += pi->ref_regs[0] ? pi->ref_regs[0] : sx->ref_regs[0];
    } else if (!rc) st->refused++;
    rs_ptxref_free(&r);
    rs_ptxtruth_free(&t);
  }
  if (rc && e->msg[0]) {
    char m[sizeof e->msg];
    snprintf(m, sizeof m, "%s", e->msg);
    rs_errf(e, pi->id, 0, "reference: %s", m);
  }
  rs_problem_free(p);
  rs_module_free(pm);
  rs_module_free(sm);
  return rc;
}

int rs_ptxref_store(const char *path, rs_ptxref_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  rs_corpus *in = rs_corpus_open(path, e);
  if (!in) return -1;
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  rs_corpus *out = rs_corpus_create(tmp, e);
  int rc = out ? rs_corpus_copy_attrs(in, out, e) : -1;
  uint64_t n = rs_corpus_count(in);
  for (uint64_t i = 0; i < n && !rc; i++) {
    rs_instance row;
    if ((rc = rs_corpus_get(in, i, &row, 1, e))) break;
    if (!strcmp(row.form, "ptx")) {
      st->ptx++;
      free(row.reference); /* recomputed: a rerun replaces the old reference */
      row.reference = NULL;
      row.reference_kept = row.reference_labelled = row.reference_regs = 0;
      char sid[200];
      snprintf(sid, sizeof sid, "%s/%s/%s/sass", row.family, row.variant, row.target);
      int64_t si = row.truth ? -1 : rs_corpus_find(in, sid, e);
      if (row.truth) st->truths++;
      else if (si == -2) rc = -1;
      else if (si < 0 || !row.raw) st->nosass++;
      else {
        rs_instance sx;
        if (!(rc = rs_corpus_get(in, (uint64_t)si, &sx, 1, e))) {
          if (!sx.raw) st->nosass++;
          else rc = reference_of(&row, &sx, st, e);
          rs_instance_clear(&sx);
        }
        /* the block cache now holds sx's rows: re-read nothing, row is a copy */
      }
    }
    if (!rc) rc = rs_corpus_append(out, &row, e);
    rs_instance_clear(&row);
  }
  for (uint64_t i = 0; i < rs_corpus_failure_count(in) && !rc; i++) {
    rs_build_failure f;
    rc = rs_corpus_get_failure(in, i, &f, e);
    if (!rc) rc = rs_corpus_add_failure(out, &f, e);
  }
  rs_err ce = {{0}};
  if (out && rs_corpus_close(out, rc ? &ce : e) && !rc) rc = -1;
  rs_corpus_close(in, &ce);
  if (!rc && rename(tmp, path)) rc = rs_errf(e, path, 0, "cannot replace the corpus with %s", tmp);
  if (rc && out) unlink(tmp);
  return rc;
}
