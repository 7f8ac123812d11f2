/* load.c - the machine-code input, read once: a listing file (and the cubin lending its control
 * bits), a cubin (its completed nvdisasm listing, or a listing given), a corpus row, or a module
 * lifted elsewhere (emit). Every later step takes this one rs_mc. */
#include "mcode/mcode.h"
#include "cubin/disasm.h"
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s) { return s ? rs_xstrndup(s, strlen(s)) : NULL; }
static int read_inferring(rs_mc *mc, const char *name, char *text, size_t n, const char *target, const rs_nvdisasm *nd,
                          rs_err *e);

int rs_mc_listing(rs_mc *mc, const char *path, const char *target, const char *cubin_path, rs_err *e) {
  memset(mc, 0, sizeof *mc);
  size_t n;
  char *text = rs_read_file(path, &n, e);
  if (!text) return -1;
  mc->name = dup_or_null(cubin_path ? cubin_path : path);
  if (cubin_path) {
    if (rs_cubin_load(cubin_path, &mc->cub, e)) {
      free(text);
      rs_mc_free_input(mc);
      return -1;
    }
    mc->cubin_path = dup_or_null(cubin_path);
    mc->scoreboards = true;
  }
  /* a listing with -plr columns infers the forms the table lacks from them (no nvdisasm run) */
  if (read_inferring(mc, path, text, n, target, NULL, e)) {
    rs_mc_free_input(mc);
    return -1;
  }
  return 0;
}

/* Does a refusal of m come from an instruction form (not the lift, a label, a call)? */
static bool form_refused(const rs_module *m) {
  for (uint32_t i = 0; i < m->nrefused; i++)
    if (*m->refused[i].shape && strcmp(m->refused[i].shape, "label")) return true;
  return false;
}

/* Does the listing carry nvdisasm's -plr columns (a "// |  # 0123..." header row; "// |   # ..."
 * where a count reaches 100: a function using R100+)? */
static bool has_plr(const char *t, size_t n) {
  for (const char *p = t; p && p < t + n; p = memchr(p, '\n', (size_t)(t + n - p)), p = p ? p + 1 : NULL) {
    const char *e = memchr(p, '\n', (size_t)(t + n - p));
    size_t l = e ? (size_t)(e - p) : (size_t)(t + n - p);
    for (size_t i = 0; i + 6 < l; i++) { /* "// |" then spaces, as many as the widest count needs, then "# " */
      if (memcmp(p + i, "// |", 4)) continue;
      size_t k = i + 4;
      while (k < l && p[k] == ' ') k++;
      if (k > i + 4 && k + 1 < l && p[k] == '#' && p[k + 1] == ' ') return true;
    }
  }
  return false;
}

/* Operands of a refusal's shape ("R,R,R,PT": 4; "no operands": 0). */
static uint32_t shape_ops(const char *shape) {
  if (!strcmp(shape, "no operands")) return 0;
  uint32_t n = 1;
  for (const char *c = shape; *c; c++) n += *c == ',';
  return n;
}

/* The cubin's `nvdisasm -lrm narrow` output, run once and kept in mc (the crosscheck's original
 * side too). */
static int full_of(rs_mc *mc, const rs_nvdisasm *nd, rs_err *e) {
  return mc->orig_full ? 0 : rs_xcheck_disasm(nd, &mc->cub, mc->cubin_path, mc->name, &mc->orig_full, e);
}

/* The cubin's listing with -plr columns (`nvdisasm -c -plr -lrm narrow`, completed), taken from
 * that one run. */
static int plr_listing(rs_mc *mc, const rs_nvdisasm *nd, char **out, rs_err *e) {
  *out = NULL;
  if (!nd) return rs_errf(e, mc->name, 0, "no nvdisasm");
  if (full_of(mc, nd, e)) return -1;
  char *raw = rs_xcheck_code(&mc->cub, mc->orig_full, true);
  rs_sass_stats st;
  int rc = rs_sass_complete(&mc->cub, raw, mc->name, out, &st, e);
  free(raw);
  return rc;
}

/* Forms mc's listing (text, taken) refuses, inferred from the cubin's `nvdisasm -plr` listing
 * (sass/infer.c), and the listing read again with them; each function read with an inferred row
 * stays only if its pinned run reproduces ptxas (the check of the rows), else it is refused with
 * that reason. A form not inferred keeps its refusal, with infer.c's reason added. */
static int read_inferring(rs_mc *mc, const char *name, char *text, size_t n, const char *target, const rs_nvdisasm *nd,
                          rs_err *e) {
  rs_sass_opts o = {.mask = rs_sass_test_mask()};
  bool own_plr = has_plr(text, n); /* a listing with its -plr columns is its own source */
  char *copy = nd || own_plr ? rs_xstrndup(text, n) : NULL;
  rs_module *m = rs_sass_from_text(name, text, n, target, &o, e);
  if (!m || !copy || !form_refused(m)) {
    free(copy);
    mc->m = m;
    return m ? 0 : -1;
  }
  char *ptext = own_plr ? rs_xstrndup(copy, n) : NULL;
  rs_err pe = {{0}};
  rs_sass_infer *x = rs_xcalloc(1, sizeof *x);
  x->mask = o.mask;
  mc->inferred = x;
  if (!own_plr && plr_listing(mc, nd, &ptext, &pe)) {
    free(copy); /* no -plr listing: the refusals stand, with why */
    for (uint32_t i = 0; i < m->nrefused; i++) {
      char *w = rs_xmalloc(strlen(m->refused[i].why) + strlen(pe.msg) + 40);
      sprintf(w, "%s; no -plr listing to infer it from: %s", m->refused[i].why, pe.msg);
      free(m->refused[i].why);
      m->refused[i].why = w;
    }
    mc->m = m;
    return 0;
  }
  rs_sass_infer_listing(ptext, false, x);
  bool any = false;
  for (uint32_t i = 0; i < x->n; i++) any |= !x->v[i].why;
  if (any) { /* read again with the inferred rows */
    o.inferred = x;
    rs_err re = {{0}};
    rs_module *m2 = rs_sass_from_text(name, copy, n, target, &o, &re);
    copy = NULL;
    if (m2) rs_module_free(m), m = m2;
  }
  free(copy);
  for (uint32_t i = 0; i < m->nrefused; i++) { /* why a refused form was not inferred, or its row */
    rs_refusal *r = &m->refused[i];
    uint32_t no = shape_ops(r->shape);
    for (uint32_t j = 0; j < x->n; j++)
      if (x->v[j].nops == no && !strcmp(x->v[j].form, r->form)) {
        const char *y = x->v[j].why ? x->v[j].why : x->v[j].ops;
        char *w = rs_xmalloc(strlen(r->why) + strlen(y) + 80);
        sprintf(w, x->v[j].why ? "%s; not inferred from nvdisasm -plr (%u instances): %s"
                               : "%s; read with the row inferred from nvdisasm -plr (%u instances): '%s'",
                r->why, x->v[j].instances, y);
        free(r->why);
        r->why = w;
        break;
      }
  }
  mc->m = m;
  /* the checks of every function using one: pinned reproduces ptxas, and its liveness equals
   * -plr's columns row by row (what pinned cannot see: a read or write a row misses) */
  for (uint32_t k = 0; k < m->nfuncs;) {
    char rows[400];
    if (!rs_sass_inferred_in(x, m->funcs[k]->name, rows, sizeof rows)) {
      k++;
      continue;
    }
    rs_mc_pin r;
    rs_err ke = {{0}};
    uint32_t fails = rs_mc_pinned(mc, k, &r, &ke);
    char why[1600], live[400];
    int lv = fails ? 0 : rs_sass_plr_check(m->funcs[k], ptext, NULL, live, sizeof live);
    if (!fails && !lv) {
      rs_mc_pin_free(&r);
      k++;
      continue;
    }
    if (fails)
      snprintf(why, sizeof why, "pinned with the inferred row(s) %s does not reproduce ptxas: %s", rows,
               fails == UINT32_MAX ? ke.msg : r.msgs.n ? r.msgs.v[0] : "?");
    else
      snprintf(why, sizeof why, "with the inferred row(s) %s its liveness is not nvdisasm -plr's: %s", rows, live);
    rs_module_refuse(m, m->funcs[k]->name, m->funcs[k]->line, 0, "inferred", "", why);
    rs_module_drop_func(m, k);
    rs_mc_pin_free(&r);
  }
  free(ptext);
  return 0;
}

int rs_mc_plr_text(rs_mc *mc, char **out, rs_err *e) {
  *out = NULL;
  const char *t = mc->m ? mc->m->text : NULL;
  if (t && has_plr(t, strlen(t))) {
    *out = rs_xstrndup(t, strlen(t));
    return 0;
  }
  if (!mc->cubin_path || !mc->have_nd)
    return rs_errf(e, mc->name, 0, "no nvdisasm -plr columns: give the cubin, or a listing from `corpus disasm --plr`");
  return plr_listing(mc, &mc->nd, out, e);
}

int rs_mc_cubin(rs_mc *mc, const char *cubin_path, const char *listing, const char *target, const char *nvd,
                bool scoreboards, rs_err *e) {
  memset(mc, 0, sizeof *mc);
  char *text = NULL;
  size_t n = 0;
  rs_nvdisasm nd;
  bool have_nd = false;
  if (listing) { /* the listing is read first: a missing one is named before the cubin */
    if (!(text = rs_read_file(listing, &n, e))) return -1;
    if (rs_cubin_load(cubin_path, &mc->cub, e)) {
      free(text);
      return -1;
    }
    rs_err ne = {{0}};
    have_nd = rs_nvdisasm_open(nvd, &nd, &ne) == 0; /* to infer forms, and for the crosscheck */
  } else {
    rs_sass_stats st;
    static const char *const args[] = {"-c", NULL};
    if (rs_cubin_load_any(cubin_path, &mc->cub, e)) return -1;
    mc->name = dup_or_null(cubin_path);
    mc->cubin_path = dup_or_null(cubin_path);
    if (!mc->cub.nfuncs) { /* a host-only unit's cubin: read, nothing in it to allocate */
      mc->codeless = true;
      return 0;
    }
    /* one `-lrm narrow` run gives the listing (-c's, derived), the -plr columns and the
     * crosscheck's original side; -c itself only where the derivation cannot be made */
    char *raw = NULL;
    if (rs_nvdisasm_open(nvd, &nd, e) || full_of(mc, &nd, e) ||
        ((raw = rs_xcheck_code(&mc->cub, mc->orig_full, false))
             ? rs_sass_complete(&mc->cub, raw, cubin_path, &text, &st, e)
             : rs_sass_disasm_loaded(&nd, &mc->cub, cubin_path, cubin_path, args, &text, &st, e))) {
      free(raw);
      rs_mc_free_input(mc);
      return -1;
    }
    free(raw);
    have_nd = true;
    n = strlen(text);
  }
  free(mc->name);
  free(mc->cubin_path);
  mc->name = dup_or_null(cubin_path);
  mc->cubin_path = dup_or_null(cubin_path);
  mc->nd = nd, mc->have_nd = have_nd;
  mc->scoreboards = scoreboards;
  /* the listing's own name in messages (nvdisasm's: the cubin's) */
  if (read_inferring(mc, listing ? listing : cubin_path, text, n, target, have_nd ? &nd : NULL, e)) {
    rs_mc_free_input(mc);
    return -1;
  }
  return 0;
}

int rs_mc_instance(rs_mc *mc, const rs_instance *in, rs_err *e) {
  memset(mc, 0, sizeof *mc);
  size_t n = strlen(in->raw);
  mc->name = dup_or_null(in->id);
  /* the rows the import inferred from nvdisasm -plr (params inferred_forms), read as there */
  rs_sass_opts o = {.mask = rs_sass_test_mask()};
  char why[300];
  mc->inferred = rs_xcalloc(1, sizeof *mc->inferred);
  int k = rs_sass_infer_from_params(in->params, mc->inferred, why, sizeof why);
  if (k < 0) {
    rs_errf(e, in->id, 0, "%s", why);
    rs_mc_free_input(mc);
    return -1;
  }
  o.inferred = k ? mc->inferred : NULL;
  if (!(mc->m = rs_sass_from_text(in->id, rs_xstrndup(in->raw, n), n, in->target, &o, e))) {
    rs_mc_free_input(mc);
    return -1;
  }
  if (in->cubin && in->cubin_len) { /* the row's cubin: ptxas's control bits, its scoreboards in the Problem */
    uint8_t *bytes = rs_xmalloc(in->cubin_len);
    memcpy(bytes, in->cubin, in->cubin_len);
    if (rs_cubin_parse(bytes, in->cubin_len, in->id, &mc->cub, e)) {
      rs_mc_free_input(mc);
      return -1;
    }
    mc->scoreboards = true;
  }
  return 0;
}

int rs_mc_borrow(rs_mc *mc, rs_module *m, const uint8_t *cubin, size_t cubin_len, const char *name, rs_err *e) {
  memset(mc, 0, sizeof *mc);
  mc->m = m;
  mc->borrowed = true;
  mc->name = dup_or_null(name);
  uint8_t *bytes = rs_xmalloc(cubin_len + 1);
  memcpy(bytes, cubin, cubin_len);
  if (rs_cubin_parse(bytes, cubin_len, name, &mc->cub, e)) {
    rs_mc_free_input(mc);
    return -1;
  }
  mc->scoreboards = true;
  return 0;
}

int rs_mc_disasm_whole(rs_mc *mc, const char *nvd, const char *target, rs_err *e) {
  rs_nvdisasm nd;
  char *text = NULL;
  rs_sass_stats st;
  static const char *const args[] = {"-c", NULL};
  if (rs_nvdisasm_open(nvd, &nd, e) ||
      rs_sass_disasm_loaded(&nd, &mc->cub, mc->cubin_path, mc->name, args, &text, &st, e))
    return -1;
  rs_module *m = rs_sass_from_text(mc->name, text, strlen(text), target, NULL, e);
  if (!m) return -1;
  if (!mc->borrowed) rs_module_free(mc->m);
  mc->m = m;
  mc->borrowed = false;
  return 0;
}

void rs_mc_free_input(rs_mc *mc) {
  if (!mc->borrowed) rs_module_free(mc->m);
  if (mc->inferred) rs_sass_infer_free(mc->inferred), free(mc->inferred);
  rs_cubin_free(&mc->cub);
  free(mc->name);
  free(mc->cubin_path);
  free(mc->orig_full);
  memset(mc, 0, sizeof *mc);
}

int rs_mc_ctl(const rs_mc *mc, const rs_func *f, uint64_t (**ctl)[2], rs_err *e) {
  *ctl = NULL;
  return rs_mc_has_cubin(mc) && mc->scoreboards ? rs_sass_ctl_of(&mc->cub, f, mc->name, ctl, e) : 0;
}
