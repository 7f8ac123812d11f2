/* spills.c - spill slots in the machine-code pipeline (sass/spills.h): after free mode's colouring
 * of a function, its promotable slots get registers (rs_spills_promote) and the rewritten function
 * takes the listing's place; the write-back prints the rewritten STL/LDL as MOV/NOP and the check
 * compares the written listing with the original through the copies and frame words. */
#include "mcode/mcode.h"
#include "sass/sass.h"
#include "sass/spills.h"
#include "front/front.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rs_mc_spills {
  uint32_t nf;
  rs_spills *sp;        /* per function: what was found */
  rs_spill_result *sr;  /* per function: what was promoted (sr[k].mod holds the original once rewritten) */
  uint32_t *nops;       /* per function: rewritten accesses written as NOP */
};

void rs_mc_spills_free(struct rs_mc_spills *s) {
  if (!s) return;
  for (uint32_t k = 0; k < s->nf; k++) {
    rs_spills_free(&s->sp[k]);
    rs_spill_result_free(&s->sr[k]);
  }
  free(s->sp);
  free(s->sr);
  free(s->nops);
  free(s);
}

bool rs_mc_spills_rewritten(const rs_mc_recolour *r, uint32_t k) {
  return r->spills && k < r->spills->nf && r->spills->sr[k].promoted_webs;
}

int rs_mc_spills_promote(const rs_mc *mc, uint32_t k, const rs_preg *alt, rs_problem **pk, rs_mc_recolour *r,
                         rs_err *e) {
  rs_module *m = mc->m;
  if (!r->spills) {
    r->spills = rs_xcalloc(1, sizeof *r->spills);
    r->spills->nf = m->nfuncs;
    r->spills->sp = rs_xcalloc(m->nfuncs + 1, sizeof *r->spills->sp);
    r->spills->sr = rs_xcalloc(m->nfuncs + 1, sizeof *r->spills->sr);
    r->spills->nops = rs_xcalloc(m->nfuncs + 1, sizeof *r->spills->nops);
  }
  struct rs_mc_spills *s = r->spills;
  rs_func *f = m->funcs[k];
  if (rs_spills_find(f, &s->sp[k], e)) return -1;
  bool any = false;
  for (uint32_t w = 0; w < s->sp[k].nwebs; w++) any |= s->sp[k].webs[w].ok;
  if (!any || r->fn[k].extern_call) return 0;
  uint64_t (*ctl)[2] = NULL;
  if (rs_mc_ctl(mc, f, &ctl, e)) return -1;
  unsigned limit = rs_mc_r_count(f, f->truth), sm = m->tgt && !strncmp(m->tgt->name, "sm_", 3) ? (unsigned)atoi(m->tgt->name + 3) : 0;
  rs_spill_result *sr = &s->sr[k], other;
  memset(&other, 0, sizeof other);
  int rc = rs_spills_promote(m, k, &s->sp[k], (const uint64_t(*)[2])ctl, r->as[k], limit, sm, sr, e);
  if (!rc && alt) rc = rs_spills_promote(m, k, &s->sp[k], (const uint64_t(*)[2])ctl, alt, limit, sm, &other, e);
  free(ctl);
  if (rc) {
    rs_spill_result_free(&other);
    return -1;
  }
  /* the better of the two: fewer accesses left, then fewer R */
  uint32_t left0 = sr->stores_left + sr->loads_left, left1 = other.stores_left + other.loads_left;
  if (alt && other.promoted_webs &&
      (left1 < left0 ||
       (left1 == left0 && sr->promoted_webs && rs_mc_r_count(other.f, other.assign) < rs_mc_r_count(sr->f, sr->assign)))) {
    rs_spill_result t = *sr;
    *sr = other;
    other = t;
  }
  rs_spill_result_free(&other);
  if (!sr->promoted_webs) return 0;
  /* the rewritten function takes the original's place in the listing */
  rs_func *g = sr->f;
  const char *msrc = f->src, *mpath = f->path; /* the same text in both modules: each keeps its own */
  f->src = g->src, f->path = g->path;
  g->src = msrc, g->path = mpath;
  sr->mod->funcs[k] = f;
  m->funcs[k] = g;
  free(r->as[k]);
  r->as[k] = sr->assign;
  sr->assign = NULL;
  rs_problem_free(*pk);
  *pk = sr->p;
  sr->p = NULL;
  rs_mc_fn *fn = &r->fn[k];
  fn->nsb = sr->nsb;
  fn->nvars = (*pk)->nvars;
  fn->after = rs_mc_r_count(g, r->as[k]);
  fn->occ_after = rs_mc_occupancy(g->tgt, fn->after);
  return 0;
}

int rs_mc_spills_write(const rs_mc *mc, rs_mc_recolour *r, rs_err *e) {
  const rs_module *m = mc->m;
  char *text = rs_sass_write_module(m, r->as);
  for (uint32_t k = 0; k < m->nfuncs; k++)
    if (rs_mc_spills_rewritten(r, k)) {
      char *t2 = rs_spills_write(text, m->funcs[k], r->as[k], &r->spills->nops[k]);
      free(text);
      text = t2;
    }
  r->text = text;
  r->relift = NULL;
  rs_module *n = rs_module_parse("(recoloured)", rs_xstrndup(text, strlen(text)), strlen(text), RS_SRC_SASS, m->tgt->name, e);
  if (!n) return -1;
  if (n->nfuncs != m->nfuncs) {
    rs_module_free(n);
    return rs_errf(e, "(recoloured)", 0, "the written listing has other functions");
  }
  r->relift = n;
  return 0;
}

uint32_t rs_mc_spills_check(const rs_mc_recolour *r, uint32_t k, const rs_func *written, uint32_t *uses, char *why,
                            size_t n) {
  const rs_spill_result *sr = &r->spills->sr[k];
  return rs_spills_check(sr->mod->funcs[k], written, sr->rewritten, uses, why, n);
}

void rs_mc_spills_line(const rs_mc_recolour *r, uint32_t k, char *spl, size_t n) {
  spl[0] = 0;
  if (!r->spills || k >= r->spills->nf) return;
  const rs_spills *sp = &r->spills->sp[k];
  if (!sp->stores && !sp->loads) return;
  const rs_spill_result *sr = &r->spills->sr[k];
  uint32_t s2 = sr->promoted_webs ? sr->stores_left : sp->stores, l2 = sr->promoted_webs ? sr->loads_left : sp->loads;
  uint32_t ok = 0, kept = 0, wide = 0, wide_in = 0, okw = 0, inw = 0, nr = 0, nrw = 0, nrin = 0;
  for (uint32_t w = 0; w < sp->nwebs; w++)
    if (sp->webs[w].ok) {
      bool in = sr->promoted_webs && sr->promote && sr->promote[w];
      ok++;
      okw += sp->webs[w].words;
      inw += in ? sp->webs[w].words : 0;
      if (!in && sr->noroom && sr->noroom[w]) nr++, nrw += sp->webs[w].words;
      if (in && sr->noroom && sr->noroom[w]) nrin++; /* the bound contradicted: must stay 0 */
      if (sp->webs[w].words > 1) wide++, wide_in += in;
    } else {
      kept += sp->webs[w].nstores + sp->webs[w].nloads;
    }
  int o = snprintf(spl, n, "; spills: %u stores, %u loads -> %u, %u (frame %u -> %u bytes)", sp->stores, sp->loads, s2,
                   l2, sp->frame, sp->frame);
  if (o < 0 || (size_t)o >= n) return;
  if (sp->refused[0]) snprintf(spl + o, n - (size_t)o, ", kept: %s", sp->refused);
  else
    snprintf(spl + o, n - (size_t)o,
             ", %u of %u promotable slot values in registers, %u NOPs; %u accesses not promotable (mixed-size, "
             "sub-word, predicated, or read before a store); 64/128-bit: %u of %u; slot words: %u promotable, %u in "
             "registers, %u of %u kept have no room (%u slot values: the other values fill the count at a point of each range)",
             sr->promoted_webs, ok, r->spills->nops[k], kept, wide_in, wide, okw, inw, nrw, okw - inw, nr);
  size_t used = strlen(spl);
  if (nrin && used < n) snprintf(spl + used, n - used, "; %u slot values said to have no room are in registers", nrin);
}
