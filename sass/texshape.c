/* texshape.c - register tuple widths of texture instructions (TEX TLD TLD4 TXD TXQ), which follow
 * operands and modifiers rather than the mnemonic alone: tables, one rule.
 *
 * Printed as `TEX[.mods] [Pp,] Rd0, Rd1, Ra[, Rb], handle..., geometry[, mask]` (handle: UR pair
 * on sm_90, c[0x0] offsets before). Measured against nvdisasm 11.8 -plr on ptxas 13 output of
 * tests/fixtures/sass-real/textures.cu (sm_75-sm_90; test_sass_real.c checks every row):
 *   - results: n = components in the mask (none printed: 0xf); Rd1 holds the first two (a pair,
 *     or one), Rd0 the rest (RZ when n <= 2). .F16 packs two halves a register: Rd1 one, Rd0 one
 *     when n > 2.
 *   - sources: T = coordinates (array index included) + extras (.LL level, .AOFFI offsets, .MS
 *     sample, .DC depth, and the handle when it is a register: .B, printed with no handle
 *     operands). Without .SCR, Ra holds the coordinates and Rb the extras (not printed when
 *     none); with .SCR (sm_75-89) they are split evenly, Ra ceil(T/2) and Rb the rest (TLD4.SCR
 *     2D: R2, R7 one register each; TLD4.SCR.R.B 2D: R4:R5, R3). TXD: Ra the coordinates and the
 *     extras, Rb the gradients, two per spatial coordinate (ARRAY_1D: 2, ARRAY_2D: 4).
 *   The register-handle forms, .DC, TLD 3D and TXD ARRAY_1D/ARRAY_2D/.AOFFI were measured on
 *   tests/fixtures/sass-tex/tex.cu and texptx.cu (sm_75-sm_89: every row equal to -plr).
 * Anything unmeasured (a TLD without .LZ or .LL, TXD CUBE, a mask above 0xf) is an error naming
 * it. */
#include "sass/sass.h"
#include <stdio.h>
#include <string.h>

/* coordinates per geometry, the array index counted, and how many of them are spatial (TXD's
 * gradients: two per spatial coordinate, none for the array index) */
static const struct {
  const char *name;
  uint8_t coords, spatial;
} geoms[] = {
    {"1D", 1, 1}, {"2D", 2, 2}, {"3D", 3, 3}, {"CUBE", 3, 3}, {"ARRAY_1D", 2, 1}, {"ARRAY_2D", 3, 2}, {"ARRAY_CUBE", 4, 3},
};

/* modifiers that add a source value */
static const struct {
  const char *name;
  uint8_t extra;
} extras[] = {{"LL", 1}, {"AOFFI", 1}, {"MS", 1}, {"DC", 1}}; /* MS: the sample index (tex.2dms); DC: the depth
                                                             * compared against; .CL and .NDV add none */

/* the families: which geometries were measured, gradients per spatial coordinate (TXD: Ra holds
 * the coordinates and the other extras, Rb the gradients, with or without .SCR), whether a level
 * modifier is required (TLD: .LZ or .LL), whether the mnemonic names a channel first (TLD4.R .G
 * .B .A: a second .B is the register handle) */
static const struct {
  const char *base;
  const char *geoms; /* measured, space separated; NULL: no geometry operand (TXQ) */
  uint8_t grads;
  bool level, channel;
} families[] = {
    {"TEX", "2D 3D CUBE ARRAY_1D ARRAY_2D ARRAY_CUBE", 0, false, false},
    {"TLD", "1D 2D 3D ARRAY_2D", 0, true, false},
    {"TLD4", "2D ARRAY_2D", 0, false, true},
    {"TXD", "2D ARRAY_1D ARRAY_2D", 2, false, false},
    {"TXQ", NULL, 0, false, false},
};

static bool word_in(const char *list, const char *w, size_t n) {
  for (const char *p = list; *p;) {
    while (*p == ' ') p++;
    size_t k = strcspn(p, " ");
    if (k == n && !memcmp(p, w, n)) return true;
    p += k;
  }
  return false;
}

bool rs_sass_is_geometry(const char *s, size_t n) {
  for (size_t i = 0; i < sizeof geoms / sizeof *geoms; i++)
    if (strlen(geoms[i].name) == n && !memcmp(geoms[i].name, s, n)) return true;
  return false;
}

int rs_sass_tex_shape(const char *mn, size_t mnl, const char *geom, size_t geoml, uint32_t mask, rs_sass_texshape *out,
                      char *why, size_t whylen) {
  size_t base = 0;
  while (base < mnl && mn[base] != '.') base++;
  int fam = -1;
  for (size_t i = 0; i < sizeof families / sizeof *families; i++)
    if (strlen(families[i].base) == base && !memcmp(families[i].base, mn, base)) fam = (int)i;
  if (fam < 0) return snprintf(why, whylen, "%.*s is not a texture instruction", (int)(mnl > 60 ? 60 : mnl), mn), -1;
  bool scr = false, f16 = false, level = false, chan = !families[fam].channel;
  unsigned extra = 0;
  for (size_t i = base; i < mnl;) {
    size_t j = ++i;
    while (i < mnl && mn[i] != '.') i++;
    const char *m = mn + j;
    size_t n = i - j;
    scr |= n == 3 && !memcmp(m, "SCR", 3);
    f16 |= n == 3 && !memcmp(m, "F16", 3);
    level |= (n == 2 && (!memcmp(m, "LZ", 2) || !memcmp(m, "LL", 2)));
    if (n == 1 && strchr("RGBA", m[0])) { /* TLD4's channel first; then .B: the handle in a register */
      if (!chan) chan = true;
      else if (m[0] == 'B') extra++;
    }
    for (size_t k = 0; k < sizeof extras / sizeof *extras; k++)
      if (strlen(extras[k].name) == n && !memcmp(extras[k].name, m, n)) extra += extras[k].extra;
  }
  if (families[fam].level && !level)
    return snprintf(why, whylen, "%.*s without .LZ or .LL: its level operand was never measured", (int)(mnl > 60 ? 60 : mnl),
                    mn),
           -1;
  if (mask == 0 || mask > 0xf)
    return snprintf(why, whylen, "%.*s: component mask 0x%x is not one of 0x1-0xf", (int)(mnl > 60 ? 60 : mnl), mn, mask), -1;
  unsigned n = (unsigned)__builtin_popcount(mask);
  memset(out, 0, sizeof *out);
  if (f16) {
    out->dst_lo = 1;
    out->dst_hi = n > 2;
  } else {
    out->dst_lo = (uint8_t)(n < 2 ? n : 2);
    out->dst_hi = (uint8_t)(n > 2 ? n - 2 : 0);
  }
  if (!families[fam].geoms) return 0; /* TXQ: its source is a plain operand of the row */
  unsigned coords = 0, spatial = 0;
  for (size_t i = 0; i < sizeof geoms / sizeof *geoms; i++)
    if (geom && strlen(geoms[i].name) == geoml && !memcmp(geoms[i].name, geom, geoml))
      coords = geoms[i].coords, spatial = geoms[i].spatial;
  if (!coords || !word_in(families[fam].geoms, geom, geoml))
    return snprintf(why, whylen, "%.*s with geometry '%.*s': its coordinate registers were never measured",
                    (int)(mnl > 60 ? 60 : mnl), mn, (int)(geoml > 20 ? 20 : geoml), geom ? geom : ""),
           -1;
  unsigned grads = families[fam].grads * spatial, total = coords + extra + grads;
  unsigned a = grads ? coords + extra : scr ? (total + 1) / 2 : coords, b = total - a;
  if (a > 4 || b > 4)
    return snprintf(why, whylen, "%.*s %.*s: %u source registers do not fit two tuples", (int)(mnl > 60 ? 60 : mnl), mn,
                    (int)(geoml > 20 ? 20 : geoml), geom, total),
           -1;
  out->coords = (uint8_t)a;
  out->extra = (uint8_t)b;
  return 0;
}
