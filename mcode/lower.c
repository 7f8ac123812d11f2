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

/* Hazards of every function of the lifted listing n against c's control bits. */
static int hazards_of(const rs_cubin *c, const rs_module *n, const char *name, uint32_t *count, char *first,
                      size_t fn, rs_err *e) {
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
  int rc = hazards_of(c, m, name, count, first, n, e);
  rs_module_free(m);
  return rc;
}

int rs_mc_crosscheck(const rs_mc *mc, const char *nvd, const char *written, const char *intended,
                     const uint32_t *regcount, rs_crosscheck_stats *x, rs_err *e) {
  rs_nvdisasm nd;
  if (rs_nvdisasm_open(nvd, &nd, e)) return -1;
  return rs_sass_crosscheck_loaded(&nd, written, &mc->cub, mc->cubin_path, mc->name, intended, regcount, x, e);
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
  if (rs_mc_regcounts(c0, n, n->path, &r->regcount, e)) status = 2;
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
  if (!status && hazards_of(c0, n, name, &r->hazards, r->hazard, sizeof r->hazard, e)) status = 2;
  rs_module_free(own);
  if (!status && r->hazards && !encoder_check) {
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
    int rc = rs_sass_lower(&c, mc->m->text, next, r->regcount, name, &r->st, e);
    r->ms = (rs_now() - t0) * 1e3;
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
  if (!status && o->crosscheck) {
    double t0 = rs_now();
    if (rs_mc_crosscheck(mc, o->nvd, out, next, r->regcount, &r->x, e)) {
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
  return status;
}

void rs_mc_lowered_free(rs_mc_lowered *r) {
  free(r->regcount);
  r->regcount = NULL;
}
