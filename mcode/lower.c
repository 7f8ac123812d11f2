/* lower.c - a checked recolouring into a checked cubin: the register counts it needs, no race
 * with ptxas's scoreboards (cubin/hazard.c), cubin/lower.c's re-encoding into a copy of the
 * cubin held in rs_mc (the input is read once), the file written, and nvdisasm, not our encoder,
 * reading it back (cubin/crosscheck.c); a cubin nvdisasm disagrees with is removed. */
#include "mcode/mcode.h"
#include "sass/sass.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rs_mc_regcounts(const rs_cubin *c, const rs_module *n, const char *name, uint32_t **out, rs_err *e) {
  *out = NULL;
  uint32_t *rc = rs_xcalloc(c->nfuncs + 1, sizeof *rc);
  for (uint32_t k = 0; k < c->nfuncs; k++) {
    uint32_t j = 0;
    while (j < n->nfuncs && strcmp(n->funcs[j]->name, c->funcs[k].name)) j++;
    if (j == n->nfuncs) {
      free(rc);
      return rs_errf(e, name, 0, "no function %s", c->funcs[k].name);
    }
    rc[k] = rs_sass_regcount_of(n->funcs[j]);
  }
  *out = rc;
  return 0;
}

/* Functions of mc's cubin the lifted listing n lacks because the front end refused them (mc->m's
 * refusals): keep[k] set, why[k] says so. Returns how many. A function missing for another reason
 * is not marked (regcounts_kept names it). */
static uint32_t front_refused(const rs_mc *mc, const rs_module *n, uint8_t *keep, rs_lower_kept *why) {
  const rs_cubin *c = &mc->cub;
  uint32_t nk = 0;
  for (uint32_t k = 0; k < c->nfuncs; k++) {
    uint32_t j = 0;
    while (j < n->nfuncs && strcmp(n->funcs[j]->name, c->funcs[k].name)) j++;
    if (j < n->nfuncs) continue;
    for (uint32_t i = 0; i < mc->m->nrefused; i++) {
      const rs_refusal *f = &mc->m->refused[i];
      if (strcmp(f->func, c->funcs[k].name)) continue;
      keep[k] = 1, nk++;
      why[k].func = k;
      /* the front end's message without its FILE:LINE (the listing's, printed with the refusal) */
      const char *w = strstr(f->why, ": ");
      w = w && strchr(f->why, ':') < w ? w + 2 : f->why;
      char full[1024];
      snprintf(full, sizeof full, "/*%04x*/: refused by the front end (form %s, operands %s): %s", f->addr, f->form,
               *f->shape ? f->shape : "-", w);
      snprintf(why[k].why, sizeof why[k].why, "%.*s", (int)sizeof why[k].why - 1, full);
      break;
    }
  }
  return nk;
}

/* rs_mc_regcounts, with a kept function's count ptxas's (its .nv.info's): n need not hold it. */
static int regcounts_kept(const rs_cubin *c, const rs_module *n, const char *name, const uint8_t *keep,
                          uint32_t **out, rs_err *e) {
  *out = NULL;
  rs_nvinfo_func *nf = NULL;
  if (rs_nvinfo_read(c, name, &nf, e)) return -1;
  uint32_t *rc = rs_xcalloc(c->nfuncs + 1, sizeof *rc);
  for (uint32_t k = 0; k < c->nfuncs; k++) {
    uint32_t j = 0;
    while (j < n->nfuncs && strcmp(n->funcs[j]->name, c->funcs[k].name)) j++;
    if (j < n->nfuncs && !keep[k]) rc[k] = rs_sass_regcount_of(n->funcs[j]);
    else if (keep[k]) rc[k] = nf[k].regcount;
    else {
      free(rc);
      free(nf);
      return rs_errf(e, name, 0, "no function %s", c->funcs[k].name);
    }
  }
  free(nf);
  *out = rc;
  return 0;
}

/* Hazards of every function of the lifted listing n against c's control bits; per (may be NULL):
 * per cubin function (c->funcs order), 1 where it has any, its first in why[k]. */
static int hazards_of(const rs_cubin *c, const rs_module *n, const char *name, uint32_t *count, char *first,
                      size_t fn, uint8_t *per, rs_lower_kept *why, rs_err *e) {
  *count = 0;
  if (first && fn) first[0] = 0;
  int rc = 0;
  for (uint32_t k = 0; k < n->nfuncs && !rc; k++) {
    const rs_func *f = n->funcs[k];
    uint64_t (*ctl)[2] = NULL;
    rc = rs_sass_ctl_of(c, f, name, &ctl, e);
    char one[400];
    uint32_t h = rc ? 0 : rs_sass_hazards(f, (const uint64_t(*)[2])ctl, one, sizeof one);
    if (h && !*count && first) snprintf(first, fn, "%s", one);
    const rs_cubin_func *cf = h && per ? rs_cubin_find(c, f->name) : NULL;
    if (cf) {
      uint32_t fi = (uint32_t)(cf - c->funcs);
      per[fi] = 1;
      why[fi].func = fi;
      snprintf(why[fi].why, sizeof why[fi].why, "%u scoreboard hazard%s with ptxas's control bits, first: %.220s", h,
               h == 1 ? "" : "s", one);
    }
    *count += h;
    free(ctl);
  }
  return rc;
}

/* The listing lifted for the cubin's architecture. */
static rs_module *lift_for(const rs_cubin *c, const char *listing, const char *name, rs_err *e) {
  char tg[16];
  snprintf(tg, sizeof tg, "sm_%u", c->sm);
  return rs_sass_from_text(name, rs_xstrndup(listing, strlen(listing)), strlen(listing), tg, NULL, e);
}

int rs_sass_hazards_listing(const rs_cubin *c, const char *listing, const char *name, uint32_t *count, char *first,
                            size_t n, rs_err *e) {
  *count = 0;
  if (first && n) first[0] = 0;
  rs_module *m = lift_for(c, listing, name, e);
  if (!m) return -1;
  int rc = hazards_of(c, m, name, count, first, n, NULL, NULL, e);
  rs_module_free(m);
  return rc;
}

int rs_mc_crosscheck(const rs_mc *mc, const char *nvd, const char *written, const char *intended,
                     const uint32_t *regcount, rs_crosscheck_stats *x, rs_err *e) {
  rs_nvdisasm nd; /* the one mc found (its --version run once), unless another is named */
  if (mc->have_nd && (!nvd || !strcmp(nvd, mc->nd.path))) nd = mc->nd;
  else if (rs_nvdisasm_open(nvd, &nd, e)) return -1;
  /* the original's -lrm output from the load when that was the same nvdisasm's */
  const char *full = !strcmp(nd.path, mc->nd.path) ? mc->orig_full : NULL;
  return rs_sass_crosscheck_full(&nd, written, &mc->cub, mc->cubin_path, mc->name, full, intended, regcount, x, e);
}

int rs_mc_lower(const rs_mc *mc, const char *next, const rs_module *relift, const rs_mc_lower_opts *o,
                rs_mc_lowered *r, rs_err *e) {
  memset(r, 0, sizeof *r);
  const rs_cubin *c0 = &mc->cub;
  const char *name = mc->name, *out = o->out;
  char sm[16];
  snprintf(sm, sizeof sm, "sm_%u", c0->sm);
  /* the listing lifted for the cubin's architecture: the re-lift when it is that already */
  rs_module *own = relift && !strcmp(relift->tgt->name, sm) ? NULL : lift_for(c0, next, name, e);
  const rs_module *n = own ? own : relift;
  if (!n) return 2;
  int status = 0;
  /* a function the front end refused (named by the command already) keeps ptxas's code and
   * register count: the others are written and crosschecked (a refusal is as narrow as its cause) */
  uint8_t *keep = rs_xcalloc(c0->nfuncs + 1, 1);
  rs_lower_kept *hwhy = rs_xcalloc(c0->nfuncs + 1, sizeof *hwhy);
  front_refused(mc, n, keep, hwhy);
  if (regcounts_kept(c0, n, n->path, keep, &r->regcount, e)) status = 2;
  /* the scheduling bits stay ptxas's: a recolouring that races an in-flight instruction is refused */
  bool encoder_check = !out; /* into a temporary file, crosschecked, removed */
  char tmp[] = "/tmp/regsweep-encoder-check-XXXXXX";
  if (!status && encoder_check) {
    int fd = mkstemp(tmp);
    if (fd < 0) {
      rs_errf(e, NULL, 0, "cannot create a temporary file: %s", strerror(errno));
      status = 2;
    } else {
      close(fd);
      out = tmp;
    }
  }
  if (out) snprintf(r->out, sizeof r->out, "%s", out);
  /* spill accesses free mode rewrote as MOV/NOP (spills.c): written from scratch, their hazards
   * walked on their new control bits (spilllower.c), not on the STL/LDL's */
  uint32_t nrw = 0;
  if (!status && rs_spills_count_rewritten(mc->m->text, next, name, &nrw, e)) status = 2;
  /* keep_refused: a racing function keeps ptxas's code, the rest goes on */
  bool kr = o->keep_refused && !nrw;
  if (!status && !nrw &&
      hazards_of(c0, n, name, &r->hazards, r->hazard, sizeof r->hazard, kr ? keep : NULL, kr ? hwhy : NULL, e))
    status = 2;
  rs_module_free(own);
  if (!status && r->hazards && !encoder_check && !o->keep_refused) {
    rs_errf(e, NULL, 0, "%s: %u scoreboard hazard%s with ptxas's control bits, first: %s: the kernel is refused", name,
            r->hazards, r->hazards == 1 ? "" : "s", r->hazard);
    status = 1;
  }
  rs_cubin c = *c0; /* lowered into a copy of the bytes: mc keeps the input as read */
  c.bytes = NULL;
  if (!status) {
    c.bytes = rs_xmalloc(c0->len);
    memcpy(c.bytes, c0->bytes, c0->len);
    c.funcs = rs_xmalloc(sizeof *c.funcs * (c0->nfuncs + 1));
    for (uint32_t k = 0; k < c0->nfuncs; k++) {
      c.funcs[k] = c0->funcs[k];
      c.funcs[k].code = c.bytes + (c0->funcs[k].code - c0->bytes);
    }
    double t0 = rs_now();
    int rc;
    if (nrw) {
      rs_spill_lower_stats sst;
      rc = rs_spills_lower(&c, mc->m->text, next, r->regcount, name, &sst, e);
      r->st = sst.low;
      r->spill_rewritten = sst.rewritten, r->spill_movs = sst.movs, r->spill_nops = sst.nops;
      if (rc && sst.hazards) {
        r->hazards = sst.hazards;
        snprintf(r->hazard, sizeof r->hazard, "%s", sst.first_hazard);
      }
    } else {
      rs_lower_opts lo = {.keep_refused = o->keep_refused, .keep = keep, .probe_only = o->probe_only,
                          .nd = mc->have_nd ? &mc->nd : NULL};
      rc = rs_sass_lower_opts(&c, mc->m->text, next, r->regcount, name, &lo, &r->st, e);
    }
    r->ms = (rs_now() - t0) * 1e3;
    if (!rc) { /* the kept functions: the refused and racing ones, then those lowering could not write */
      for (uint32_t k = 0; k < c0->nfuncs; k++)
        if (keep[k]) r->kept = rs_xrealloc(r->kept, sizeof *r->kept * (r->nkept + 1)), r->kept[r->nkept++] = hwhy[k];
      for (uint32_t k = 0; k < r->st.nkept; k++) {
        r->kept = rs_xrealloc(r->kept, sizeof *r->kept * (r->nkept + 1)), r->kept[r->nkept++] = r->st.kept[k];
        keep[r->st.kept[k].func] = 1;
      }
    }
    rs_lower_stats_free(&r->st);
    if (rc) {
      status = strstr(e->msg, "refused") ? 1 : 2;
    } else if (o->must_be_identical && memcmp(c.bytes, c0->bytes, c0->len)) {
      rs_errf(e, NULL, 0, "%s: pinned lowering changed the cubin (must be byte-identical)", name);
      status = 1;
    } else if (rs_cubin_write(&c, out, e)) {
      status = 2;
    } else {
      r->lowered = true;
      r->identical = o->must_be_identical;
    }
    rs_cubin_free(&c);
  }
  /* what was meant: a kept function as ptxas wrote it, with ptxas's register count */
  char *intended = NULL;
  if (!status && r->nkept) {
    rs_nvinfo_func *nf = NULL;
    if (rs_nvinfo_read(c0, name, &nf, e) || !(intended = rs_sass_listing_keep(c0, mc->m->text, next, keep, e))) status = 2;
    for (uint32_t k = 0; !status && k < c0->nfuncs; k++)
      if (keep[k]) r->regcount[k] = nf[k].regcount;
    free(nf);
  }
  if (!status && o->crosscheck) {
    double t0 = rs_now();
    if (rs_mc_crosscheck(mc, o->nvd, out, intended ? intended : next, r->regcount, &r->x, e)) {
      r->xcheck_error = true;
      status = 2;
      unlink(out);
    } else {
      r->crosschecked = true;
      if (!rs_crosscheck_ok(&r->x)) {
        status = 1;
        if (encoder_check) e->msg[0] = 0; /* the temporary file goes anyway */
        else rs_errf(e, NULL, 0, "%s removed: nvdisasm does not read back what we meant", out), unlink(out);
      }
    }
    r->xcheck_s = rs_now() - t0;
  }
  if (encoder_check && out == tmp) unlink(tmp);
  free(intended);
  free(keep);
  free(hwhy);
  if (!status && r->nkept) { /* written and crosschecked, but not all of it is ours */
    rs_errf(e, NULL, 0, "%s: %u of %u functions kept ptxas's code (named above)", name, r->nkept, c0->nfuncs);
    status = 1;
  }
  return status;
}

void rs_mc_lowered_free(rs_mc_lowered *r) {
  free(r->regcount);
  r->regcount = NULL;
  free(r->kept);
  r->kept = NULL;
  r->nkept = 0;
}
