/* native.c - the native checker: hardware rules per value, then lane-aware interference and
 * fixed-register exclusions over the Problem. Same semantics as the Z3 checker (verify/z3.c). */
#include "verify/verify.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

static rs_vkind member_kind(enum rs_member m) {
  switch (m) {
  case RS_MEMBER_ALIGN: return RS_VK_ALIGN;
  case RS_MEMBER_RESERVED: return RS_VK_RESERVED;
  case RS_MEMBER_RANGE: case RS_MEMBER_BUDGET: case RS_MEMBER_FNBUDGET: return RS_VK_BUDGET;
  default: return RS_VK_CLASS;
  }
}

/* A register named past the end of file f (c->beyond): rs_target_member's rules in its order,
 * where width and file come before the range. */
static rs_vkind beyond_kind(const rs_target *t, int cls, const rs_beyond *b, rs_lanes lanes, const char **why) {
  const rs_regclass *c = &t->classes[cls];
  rs_lanes want = c->half == 1 ? 1 : c->half == 2 ? 2 : rs_lanes_full(c->width);
  if (lanes != want) return *why = rs_member_str(RS_MEMBER_WIDTH), RS_VK_CLASS;
  if (!(c->files >> b->file & 1)) return *why = rs_member_str(RS_MEMBER_FILE), RS_VK_CLASS;
  *why = rs_member_str(RS_MEMBER_RANGE);
  return RS_VK_BUDGET;
}

static unsigned line_of(const rs_problem *p, uint32_t inst) {
  return inst < p->ninsts && p->inst_line ? p->inst_line[inst] : 0;
}

void rs_check_native(const rs_problem *p, const rs_candidate *c, rs_check_result *res) {
  double t0 = rs_now();
  const rs_target *t = p->tgt;
  char a[48], b[48];
  for (uint32_t v = 0; v < p->nvars; v++) {
    rs_preg r = c->reg[v];
    if (r.unit == RS_UNIT_BEYOND) {
      const char *why;
      rs_vkind k = beyond_kind(t, p->vars[v].cls, &c->beyond[v], r.lanes, &why);
      rs_result_add(res, k, "%s (%s) in %s: %s (%s has %u)", p->vars[v].name, t->classes[p->vars[v].cls].name,
                    rs_candidate_reg_str(t, c, v, a, sizeof a), why, t->files[c->beyond[v].file].name,
                    t->files[c->beyond[v].file].count);
      continue;
    }
    enum rs_member m = rs_problem_member(p, p->vars[v].cls, r);
    if (m == RS_MEMBER_FNBUDGET) { /* hardware: such a kernel could not launch */
      int f = rs_target_file_of(t, r.unit);
      char why[96];
      rs_result_add(res, RS_VK_BUDGET, "%s (%s) in %s: beyond the function's register budget (%s: %u %s)",
                    p->vars[v].name, t->classes[p->vars[v].cls].name, t->format_preg(t, r, a, sizeof a),
                    rs_problem_budget_why(p, why, sizeof why), p->budget[f], t->files[f].name);
      continue;
    }
    if (m != RS_MEMBER_OK) {
      rs_result_add(res, member_kind(m), "%s (%s) in %s: %s", p->vars[v].name, t->classes[p->vars[v].cls].name,
                    t->format_preg(t, r, a, sizeof a), rs_member_str(m));
      continue;
    }
    for (uint32_t k = 0; k < p->nreserved; k++)
      if (rs_lanes_overlap(r.unit, p->vars[v].full, p->reserved[k].unit, p->reserved[k].lanes)) {
        rs_result_add(res, RS_VK_RESERVED, "%s in %s: overlaps %s, reserved by the function", p->vars[v].name,
                      t->format_preg(t, r, a, sizeof a), t->format_preg(t, p->reserved[k], b, sizeof b));
        break;
      }
  }
  for (uint32_t i = 0; i < p->nconf; i++) {
    const rs_conflict *cf = &p->conf[i];
    rs_preg ra = c->reg[cf->a], rb = c->reg[cf->b];
    if (ra.unit == RS_UNIT_BEYOND || rb.unit == RS_UNIT_BEYOND) continue; /* no unit: nothing shared */
    if (!rs_lanes_overlap(ra.unit, cf->la, rb.unit, cf->lb)) continue;
    rs_result_add(res, RS_VK_CONFLICT, "%s (%s) and %s (%s) are live at once (line %u) but share a register",
                  p->vars[cf->a].name, t->format_preg(t, ra, a, sizeof a), p->vars[cf->b].name,
                  t->format_preg(t, rb, b, sizeof b), line_of(p, cf->inst));
  }
  for (uint32_t i = 0; i < p->nfixed; i++) {
    const rs_fixed *x = &p->fixed[i];
    rs_preg r = c->reg[x->v];
    if (r.unit == RS_UNIT_BEYOND) continue;
    if (!rs_lanes_overlap(r.unit, x->lv, x->p.unit, x->p.lanes)) continue;
    rs_result_add(res, RS_VK_FIXED, "%s (%s) overlaps %s, which is live or written in its range (line %u)",
                  p->vars[x->v].name, t->format_preg(t, r, a, sizeof a), t->format_preg(t, x->p, b, sizeof b),
                  line_of(p, x->inst));
  }
  /* registers used: the values' registers (a register past its file's end counts as far as it
   * names) and the fixed registers they live beside */
  memset(res->used, 0, sizeof res->used);
  uint64_t taken[RS_MAX_FILES][RS_WWM_BITS / 64]; /* for the whole-wave registers LLVM moves */
  if (p->nwwm) memset(taken, 0, sizeof taken);
  for (uint32_t v = 0; v < p->nvars; v++) {
    bool past = c->reg[v].unit == RS_UNIT_BEYOND; /* counts as far as it names */
    int f = past ? (int)c->beyond[v].file : rs_target_file_of(t, c->reg[v].unit);
    if (f < 0 || f >= RS_MAX_FILES || !t->files[f].pressure) continue;
    unsigned lo = past ? c->beyond[v].index : c->reg[v].unit - t->files[f].first, top = lo + rs_lanes_units(c->reg[v].lanes);
    if (top > res->used[f]) res->used[f] = top;
    for (unsigned u = lo; p->nwwm && u < top && u < RS_WWM_BITS; u++) taken[f][u / 64] |= 1ull << (u % 64);
  }
  for (uint32_t i = 0; i < p->nfixed; i++) {
    int f = rs_target_file_of(t, p->fixed[i].p.unit);
    if (f < 0 || f >= RS_MAX_FILES || !t->files[f].pressure || rs_wwm_has(p->wwm, p->nwwm, p->fixed[i].p.unit)) continue;
    unsigned lo = p->fixed[i].p.unit - t->files[f].first, top = lo + rs_lanes_units(p->fixed[i].p.lanes);
    if (top > res->used[f]) res->used[f] = top;
    for (unsigned u = lo; p->nwwm && u < top && u < RS_WWM_BITS; u++) taken[f][u / 64] |= 1ull << (u % 64);
  }
  if (p->nwwm) rs_wwm_count(t, p->wwm, p->nwwm, taken, res->used);
  res->occupancy = t->occupancy(t, res->used);
  res->seconds += rs_now() - t0;
}
