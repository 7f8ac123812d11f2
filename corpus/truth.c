/* truth.c - compose stage alignments into ground-truth maps, and check them. */
#include "corpus/truth.h"
#include "front/front.h"
#include "mir/splitmir.h"
#include <stdio.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

int rs_truth_postsplit(const rs_func *ps, const rs_func *fin, rs_alignment *a, rs_err *e) {
  return rs_align(ps, fin, a, e);
}

/* spilled: also the values a spill restore of ps redefines the register of, and those an instruction
 * without counterpart names (greedy's spill code): lost track of, not a register each */
static uint32_t prera_map(const rs_func *pre, const rs_func *ps, const rs_alignment *ps_fin, rs_preg *assign,
                          bool spilled) {
  memset(assign, 0, sizeof *assign * pre->nvregs);
  rs_loose lo;
  rs_err e;
  if (rs_align_loose(pre, ps, &lo, &e)) return pre->nvregs ? pre->nvregs : 1;
  /* a value's register: every link must give the same final base unit */
  uint8_t *split = rs_xcalloc(pre->nvregs + 1, 1), *linked = rs_xcalloc(pre->nvregs + 1, 1);
  for (uint32_t i = 0; i < lo.nlinks; i++) {
    const rs_loose_link *ln = &lo.links[i];
    linked[ln->from_vreg] = 1;
    int64_t base;
    if (ln->to_vreg >= 0) {
      rs_preg r = (uint32_t)ln->to_vreg < ps_fin->nassign ? ps_fin->assign[ln->to_vreg] : (rs_preg){0, 0};
      if (!r.lanes || lo.reloaded[ln->to_vreg]) { split[ln->from_vreg] = 1; continue; }
      base = (int64_t)r.unit + ln->delta;
    } else {
      base = (int64_t)ln->unit + ln->delta;
      /* linked to a register a spill restore redefines: the value was spilled (its links may
       * all agree, yet another value held the register in between) */
      const rs_vreg *fv = &pre->vregs[ln->from_vreg];
      for (uint32_t r = 0; spilled && r < lo.nrestored && !split[ln->from_vreg]; r++)
        if (base >= 0 && rs_lanes_overlap((uint32_t)base, fv->full, lo.restored[r].unit, lo.restored[r].lanes))
          split[ln->from_vreg] = 1;
    }
    rs_preg *cur = &assign[ln->from_vreg];
    if (base < 0) split[ln->from_vreg] = 1;
    else if (!cur->lanes) *cur = (rs_preg){(uint32_t)base, pre->vregs[ln->from_vreg].full};
    else if (cur->unit != (uint32_t)base) split[ln->from_vreg] = 1;
  }
  /* a value no kept instruction names (greedy's own split copies in the SGPR round's MIR, all
   * identities LLVM's rewriter deleted: a chain of bundled sub-register copies from a reload)
   * has the register of the copy's other side; the check below then holds every such copy to
   * an identity */
  for (bool grew = true; grew;) {
    grew = false;
    for (uint32_t k = 0; k < lo.ngone; k++) {
      const rs_inst *in = &pre->insts[lo.gone_copies[k]];
      if (in->nops < 2) continue;
      const rs_operand *o[2] = {&pre->ops[in->first_op], &pre->ops[in->first_op + 1]};
      for (int s = 0; s < 2; s++) {
        const rs_operand *a = o[s], *b = o[!s];
        if (a->kind != RS_OP_VREG || assign[a->reg].lanes || split[a->reg] || linked[a->reg]) continue;
        int64_t u = b->kind == RS_OP_PREG ? (int64_t)b->reg + rs_lanes_first(b->lanes)
                    : b->kind == RS_OP_VREG && assign[b->reg].lanes ? (int64_t)assign[b->reg].unit + rs_lanes_first(b->lanes)
                                                                     : -1;
        int64_t base = u - rs_lanes_first(a->lanes);
        if (u < 0 || base < 0) continue;
        assign[a->reg] = (rs_preg){(uint32_t)base, pre->vregs[a->reg].full};
        grew = true;
      }
    }
  }
  /* a COPY greedy did not keep must have been an identity copy (the rewriter's deletion);
   * otherwise greedy replaced it (e.g. by a reload) and its sides' registers are unknown */
  for (uint32_t k = 0; k < lo.ngone; k++) {
    const rs_inst *in = &pre->insts[lo.gone_copies[k]];
    if (in->nops < 2) continue;
    int64_t u[2];
    int32_t v[2] = {-1, -1};
    for (int s = 0; s < 2; s++) {
      const rs_operand *o = &pre->ops[in->first_op + s];
      int low = rs_lanes_first(o->lanes);
      if (o->kind == RS_OP_VREG) {
        v[s] = (int32_t)o->reg;
        u[s] = assign[o->reg].lanes ? (int64_t)assign[o->reg].unit + low : -1;
      } else u[s] = o->kind == RS_OP_PREG ? (int64_t)o->reg + low : -1;
    }
    if (u[0] >= 0 && u[0] == u[1]) continue;
    for (int s = 0; s < 2; s++)
      if (v[s] >= 0) split[v[s]] = 1;
  }
  uint32_t nsplit = 0;
  for (uint32_t v = 0; v < pre->nvregs; v++) {
    if (split[v] || (spilled && lo.lost[v])) {
      assign[v].lanes = 0;
      nsplit++;
    }
  }
  free(split);
  free(linked);
  rs_loose_free(&lo);
  return nsplit;
}

uint32_t rs_truth_prera(const rs_func *pre, const rs_func *ps, const rs_alignment *ps_fin, rs_preg *assign) {
  return prera_map(pre, ps, ps_fin, assign, true);
}

uint32_t rs_truth_prera_linked(const rs_func *pre, const rs_func *ps, const rs_alignment *ps_fin, rs_preg *assign) {
  return prera_map(pre, ps, ps_fin, assign, false);
}

uint32_t rs_truth_prera_split(const rs_func *pre, const rs_func *ps, const rs_alignment *ps_fin, const rs_problem *p,
                              rs_preg *assign) {
  rs_loose lo;
  rs_err e;
  if (rs_align_loose(pre, ps, &lo, &e)) return UINT32_MAX;
  enum { MAXC = 8 };
  uint32_t *ncand = rs_xcalloc(pre->nvregs + 1, sizeof *ncand), (*cand)[MAXC] = rs_xcalloc(pre->nvregs + 1, sizeof *cand);
  for (uint32_t i = 0; i < lo.nlinks; i++) { /* the registers LLVM gave each split value */
    const rs_loose_link *ln = &lo.links[i];
    uint32_t v = ln->from_vreg;
    if (assign[v].lanes) continue;
    int64_t base = -1;
    if (ln->to_vreg < 0) base = (int64_t)ln->unit + ln->delta;
    else if ((uint32_t)ln->to_vreg < ps_fin->nassign && ps_fin->assign[ln->to_vreg].lanes)
      base = (int64_t)ps_fin->assign[ln->to_vreg].unit + ln->delta;
    if (base < 0) continue;
    uint32_t k = 0;
    while (k < ncand[v] && cand[v][k] != (uint32_t)base) k++;
    if (k == ncand[v] && k < MAXC) cand[v][ncand[v]++] = (uint32_t)base;
  }
  rs_loose_free(&lo);
  uint32_t bad = 0, nm;
  for (uint32_t q = 0; q < p->nvars; q++) {
    uint32_t v = p->vars[q].fvreg;
    if (assign[v].lanes) continue;
    if (!ncand[v]) bad = UINT32_MAX; /* no register of LLVM's to give it */
    else assign[v] = (rs_preg){cand[v][0], pre->vregs[v].full};
  }
  if (bad != UINT32_MAX) {
    /* value by value, the candidate that breaks the fewest constraints (two sweeps) */
    bad = rs_truth_check(p, assign, &nm) + nm;
    for (int sweep = 0; sweep < 2 && bad; sweep++)
      for (uint32_t q = 0; q < p->nvars && bad; q++) {
        uint32_t v = p->vars[q].fvreg, keep = assign[v].unit;
        for (uint32_t k = 0; k < ncand[v]; k++) {
          if (cand[v][k] == keep) continue;
          assign[v].unit = cand[v][k];
          uint32_t b = rs_truth_check(p, assign, &nm) + nm;
          if (b < bad) bad = b, keep = cand[v][k];
        }
        assign[v].unit = keep;
      }
  }
  free(ncand);
  free(cand);
  return bad;
}

rs_module *rs_truth_split_instance(const rs_func *pre, const rs_func *ps, const rs_alignment *ps_fin,
                                   const rs_preg *assign, const char *path, const char *target, rs_problem **prob,
                                   char **json, char *why, size_t nwhy) {
  *prob = NULL;
  *json = NULL;
  rs_loose lo;
  rs_err e = {{0}};
  if (rs_align_loose(pre, ps, &lo, &e)) {
    snprintf(why, nwhy, "%s", e.msg);
    return NULL;
  }
  uint8_t *split = rs_xcalloc(pre->nvregs + 1, 1), *seg = NULL;
  for (uint32_t v = 0; v < pre->nvregs; v++) split[v] = pre->vregs[v].cls >= 0 && !assign[v].lanes;
  size_t len = 0;
  char *text = rs_mir_split_instance(pre, ps, &lo, split, &seg, &len, why, nwhy);
  rs_loose_free(&lo);
  rs_module *m = NULL;
  if (text) m = rs_module_parse(path, text, len, RS_SRC_MIR, target, &e);
  if (text && (!m || m->nfuncs != 1)) snprintf(why, nwhy, "split instance not read back: %.80s", m ? "no function" : e.msg);
  rs_problem *p = m && m->nfuncs == 1 ? rs_problem_build(m->funcs[0], &e) : NULL;
  if (p) {
    /* every value its register: a piece its own (postsplit's), any other the pre-RA value's */
    const rs_func *h = m->funcs[0];
    rs_preg *as = rs_xcalloc(h->nvregs + 1, sizeof *as);
    for (uint32_t v = 0; v < h->nvregs; v++) {
      if (v < ps->nvregs && seg[v]) as[v] = v < ps_fin->nassign ? ps_fin->assign[v] : (rs_preg){0, 0};
      else if (v < pre->nvregs) as[v] = assign[v];
      if (as[v].lanes) as[v].lanes = h->vregs[v].full;
    }
    uint32_t nm, bad = rs_truth_check(p, as, &nm);
    if (bad == 0 && nm == 0) *json = rs_truth_json(p, as), *prob = p;
    else {
      snprintf(why, nwhy, "LLVM's registers of the pieces break %u constraints (%u outside the class)",
               bad == UINT32_MAX ? 0 : bad, nm);
      rs_problem_free(p);
    }
    free(as);
  }
  free(split);
  free(seg);
  if (!*json) {
    rs_module_free(m);
    m = NULL;
  }
  return m;
}

char *rs_truth_json(const rs_problem *p, const rs_preg *assign) {
  cJSON *o = cJSON_CreateObject();
  char buf[64];
  for (uint32_t v = 0; v < p->nvars; v++) {
    rs_preg r = assign[p->vars[v].fvreg];
    cJSON_AddStringToObject(o, p->vars[v].name, p->tgt->format_preg(p->tgt, r, buf, sizeof buf));
  }
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  char *r = rs_xstrndup(s, strlen(s));
  cJSON_free(s);
  return r;
}

int rs_truth_assign(const rs_problem *p, const rs_func *f, const char *json, rs_preg *assign, rs_err *e) {
  memset(assign, 0, sizeof *assign * (f->nvregs + 1));
  cJSON *o = cJSON_Parse(json);
  if (!cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return rs_errf(e, p->path, 0, "%s: truth map is not a JSON object", p->func);
  }
  int rc = 0;
  uint32_t n = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, o) {
    int v = rs_problem_find(p, it->string, strlen(it->string));
    rs_preg r;
    if (v < 0 || !cJSON_IsString(it) ||
        p->tgt->parse_preg(p->tgt, it->valuestring, strlen(it->valuestring), &r)) {
      rc = rs_errf(e, p->path, 0, "%s: bad truth entry '%s'", p->func, it->string);
      break;
    }
    assign[p->vars[v].fvreg] = (rs_preg){r.unit, p->vars[v].full};
    n++;
  }
  if (!rc && n != p->nvars) rc = rs_errf(e, p->path, 0, "%s: truth covers %u of %u values", p->func, n, p->nvars);
  cJSON_Delete(o);
  return rc;
}
