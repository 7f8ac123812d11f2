/* load.c - the machine-code input, read once: a listing file (and the cubin lending its control
 * bits), a cubin (its completed nvdisasm listing, or a listing given), a corpus row, or a module
 * lifted elsewhere (emit). Every later step takes this one rs_mc. */
#include "mcode/mcode.h"
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s) { return s ? rs_xstrndup(s, strlen(s)) : NULL; }

int rs_mc_listing(rs_mc *mc, const char *path, const char *target, const char *cubin_path, rs_err *e) {
  memset(mc, 0, sizeof *mc);
  if (!(mc->m = rs_sass_load(path, target, NULL, e))) return -1;
  mc->name = dup_or_null(cubin_path ? cubin_path : path);
  if (cubin_path) {
    if (rs_cubin_load(cubin_path, &mc->cub, e)) {
      rs_mc_free_input(mc);
      return -1;
    }
    mc->cubin_path = dup_or_null(cubin_path);
    mc->scoreboards = true;
  }
  return 0;
}

int rs_mc_cubin(rs_mc *mc, const char *cubin_path, const char *listing, const char *target, const char *nvd,
                bool scoreboards, rs_err *e) {
  memset(mc, 0, sizeof *mc);
  char *text = NULL;
  size_t n = 0;
  if (listing) { /* the listing is read first: a missing one is named before the cubin */
    if (!(text = rs_read_file(listing, &n, e))) return -1;
    if (rs_cubin_load(cubin_path, &mc->cub, e)) {
      free(text);
      return -1;
    }
  } else {
    rs_nvdisasm nd;
    rs_sass_stats st;
    static const char *const args[] = {"-c", NULL};
    if (rs_cubin_load(cubin_path, &mc->cub, e)) return -1;
    if (rs_nvdisasm_open(nvd, &nd, e) || rs_sass_disasm_loaded(&nd, &mc->cub, cubin_path, cubin_path, args, &text, &st, e)) {
      rs_cubin_free(&mc->cub);
      return -1;
    }
    n = strlen(text);
  }
  mc->name = dup_or_null(cubin_path);
  mc->cubin_path = dup_or_null(cubin_path);
  mc->scoreboards = scoreboards;
  /* the listing's own name in messages (nvdisasm's: the cubin's) */
  if (!(mc->m = rs_sass_from_text(listing ? listing : cubin_path, text, n, target, NULL, e))) {
    rs_mc_free_input(mc);
    return -1;
  }
  return 0;
}

int rs_mc_instance(rs_mc *mc, const rs_instance *in, rs_err *e) {
  memset(mc, 0, sizeof *mc);
  size_t n = strlen(in->raw);
  if (!(mc->m = rs_sass_from_text(in->id, rs_xstrndup(in->raw, n), n, in->target, NULL, e)))
    return -1;
  mc->name = dup_or_null(in->id);
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
  rs_cubin_free(&mc->cub);
  free(mc->name);
  free(mc->cubin_path);
  memset(mc, 0, sizeof *mc);
}

int rs_mc_ctl(const rs_mc *mc, const rs_func *f, uint64_t (**ctl)[2], rs_err *e) {
  *ctl = NULL;
  return rs_mc_has_cubin(mc) && mc->scoreboards ? rs_sass_ctl_of(&mc->cub, f, mc->name, ctl, e) : 0;
}
