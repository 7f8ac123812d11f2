/* nvidia.c - NVIDIA sm_89 (Ada) and sm_90 (Hopper) register files as SASS exposes them.
 * Unit numbering: R0..R255 (R255 = RZ), then P0..P7 (P7 = PT).  Facts: shared/REGFILES.md. */
#include "target/target.h"
#include <stdio.h>
#include <string.h>

enum {
  R0 = 0, NR = 256, RZ = R0 + NR - 1,
  P0 = R0 + NR, NP = 8, PT = P0 + NP - 1,
  NUNITS = P0 + NP,
};
enum { F_R, F_P };

static const rs_regfile files[] = {
    /* granule: 8 registers per thread = 256 per warp */
    [F_R] = {"r", "R", R0, NR, NR - 1, 8, true},
    [F_P] = {"p", "P", P0, NP, NP - 1, 1, true},
};

/* Class names are the PTX register kinds the PTX parser assigns (ptx/ptx_parse.c). 16-bit values
 * take a whole R register, so "b16" has width 1 and no half. */
static const rs_regclass classes[] = {
    {"pred", 1, 1, 0, 1u << F_P | 1u << F_R, 0}, /* P0-P6, or an R register (ptxas P2R/R2P) */
    {"b16", 1, 1, 0, 1u << F_R, 0},
    {"b32", 1, 1, 0, 1u << F_R, 0},
    {"b64", 2, 2, 0, 1u << F_R, 0},
    {"b128", 4, 4, 0, 1u << F_R, 0},
};

/* Constant table, no runtime initialisation: 255 tracked R, RZ, 7 tracked P, PT. */
#define T RS_UNIT_TRACKED
#define X RS_UNIT_RESERVED
#define U4 T, T, T, T
#define U16 U4, U4, U4, U4
#define U64 U16, U16, U16, U16
static const uint8_t unit_flags[] = {
    U64, U64, U64, U16, U16, U16, U4, U4, U4, T, T, T, X, /* R0..R254, RZ */
    T, T, T, T, T, T, T, X,                               /* P0..P6, PT */
};
#undef T
#undef X
#undef U4
#undef U16
#undef U64
_Static_assert(sizeof unit_flags == NUNITS, "unit_flags must cover every unit");

/* Decimal number of 1..3 digits, at most max; returns chars consumed, 0 if malformed. */
static size_t parse_num(const char *s, size_t n, uint32_t max, uint32_t *out) {
  size_t i = 0;
  uint32_t v = 0;
  while (i < n && s[i] >= '0' && s[i] <= '9') {
    if (i == 3) return 0; /* longer than any register number: also rules out overflow */
    v = v * 10 + (uint32_t)(s[i] - '0');
    i++;
  }
  if (i == 0 || v > max) return 0;
  *out = v;
  return i;
}

static int nv_parse_preg(const rs_target *t, const char *s, size_t n, rs_preg *out) {
  (void)t;
  uint32_t lo, hi;
  size_t k;
  if (n == 2 && s[0] == 'R' && s[1] == 'Z') {
    *out = (rs_preg){RZ, rs_lanes_full(1)};
    return 0;
  }
  if (n == 2 && s[0] == 'P' && s[1] == 'T') {
    *out = (rs_preg){PT, rs_lanes_full(1)};
    return 0;
  }
  if (n < 2) return -1;
  if (s[0] == 'P') {
    if ((k = parse_num(s + 1, n - 1, NP - 1, &lo)) == 0 || k != n - 1) return -1;
    *out = (rs_preg){P0 + lo, rs_lanes_full(1)};
    return 0;
  }
  if (s[0] != 'R') return -1;
  if (s[1] != '[') {
    if ((k = parse_num(s + 1, n - 1, NR - 1, &lo)) == 0 || k != n - 1) return -1;
    *out = (rs_preg){R0 + lo, rs_lanes_full(1)};
    return 0;
  }
  /* R[lo:hi] */
  size_t i = 2;
  if ((k = parse_num(s + i, n - i, NR - 1, &lo)) == 0) return -1;
  i += k;
  if (i >= n || s[i] != ':') return -1;
  i++;
  if ((k = parse_num(s + i, n - i, NR - 1, &hi)) == 0) return -1;
  i += k;
  if (i + 1 != n || s[i] != ']') return -1;
  if (hi < lo || hi - lo + 1 > 32) return -1; /* lane masks hold at most 32 units */
  *out = (rs_preg){R0 + lo, rs_lanes_full(hi - lo + 1)};
  return 0;
}

static char *nv_format_preg(const rs_target *t, rs_preg r, char *buf, size_t n) {
  (void)t;
  unsigned w = rs_lanes_units(r.lanes);
  if (!n) return buf;
  if (r.unit >= P0 && r.unit < P0 + NP && w == 1) {
    if (r.unit == PT)
      snprintf(buf, n, "PT");
    else
      snprintf(buf, n, "P%u", (unsigned)(r.unit - P0));
  } else if (r.unit < R0 + NR && w >= 1) {
    if (w == 1 && r.unit == RZ)
      snprintf(buf, n, "RZ");
    else if (w == 1)
      snprintf(buf, n, "R%u", (unsigned)r.unit);
    else
      snprintf(buf, n, "R[%u:%u]", (unsigned)r.unit, (unsigned)(r.unit + w - 1));
  } else {
    snprintf(buf, n, "?%u", (unsigned)r.unit);
  }
  return buf;
}

/* Warps per SM: 4 sub-partitions of 16384 registers, 256-register granule per warp. */
static unsigned occupancy(unsigned regs, unsigned cap) {
  if (regs == 0) return cap;
  unsigned long per_warp = ((unsigned long)regs * 32 + 255) / 256 * 256;
  unsigned long warps = 4 * (16384 / per_warp);
  return warps < cap ? (unsigned)warps : cap;
}
static unsigned sm89_occupancy(const rs_target *t, const unsigned *used) {
  (void)t;
  return occupancy(used[F_R], 48);
}
static unsigned sm90_occupancy(const rs_target *t, const unsigned *used) {
  (void)t;
  return occupancy(used[F_R], 64);
}

#define NV_TARGET(nm, occ)                                                                    \
  {                                                                                           \
    .name = nm, .vendor = RS_NV, .files = files, .nfiles = sizeof files / sizeof *files,      \
    .nunits = NUNITS, .specials = NULL, .nspecials = 0, .classes = classes,                   \
    .nclasses = sizeof classes / sizeof *classes, .unit_flags = unit_flags,                   \
    .parse_preg = nv_parse_preg, .format_preg = nv_format_preg, .occupancy = occ,             \
  }
const rs_target rs_target_sm89 = NV_TARGET("sm_89", sm89_occupancy);
const rs_target rs_target_sm90 = NV_TARGET("sm_90", sm90_occupancy);
