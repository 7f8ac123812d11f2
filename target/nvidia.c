/* nvidia.c - NVIDIA register files as SASS exposes them (sm_75, sm_80, sm_86, sm_89, sm_90).
 *
 * Unit numbering: R0..R255 (R255 = RZ), P0..P7 (P7 = PT), then the files PTX never names:
 * UR0..UR63 (UR63 = URZ), UP0..UP7 (UP7 = UPT), B0..B15 (convergence barriers). R and P come
 * first so PTX (which uses only them) keeps its file indices. Facts: shared/REGFILES.md and
 * shared/NVIDIA-SASS.md. */
#include "target/target.h"
#include <stdio.h>
#include <string.h>

enum {
  R0 = 0, NR = 256, RZ = R0 + NR - 1,
  P0 = R0 + NR, NP = 8, PT = P0 + NP - 1,
  UR0 = P0 + NP, NUR = 64, URZ = UR0 + NUR - 1,
  UP0 = UR0 + NUR, NUP = 8, UPT = UP0 + NUP - 1,
  B0 = UP0 + NUP, NB = 16,
  NUNITS = B0 + NB,
};
enum { F_R, F_P, F_UR, F_UP, F_B };

static const rs_regfile files[] = {
    /* granule: 8 registers per thread = 256 per warp */
    [F_R] = {"r", "R", R0, NR, NR - 1, 8, true},
    [F_P] = {"p", "P", P0, NP, NP - 1, 1, true},
    [F_UR] = {"ur", "UR", UR0, NUR, NUR - 1, 1, true},
    [F_UP] = {"up", "UP", UP0, NUP, NUP - 1, 1, true},
    [F_B] = {"b", "B", B0, NB, NB, 1, true},
};

/* The first five are the PTX register kinds the PTX parser assigns (ptx/ptx_parse.c); 16-bit
 * values take a whole R register, so "b16" has width 1 and no half. The rest are the SASS
 * classes sass/lift.c gives register webs: tuples are aligned to their size (pairs even, quads
 * at multiples of 4; 0 exceptions in the listings measured). */
static const rs_regclass classes[] = {
    {"pred", 1, 1, 0, 1u << F_P | 1u << F_R, 0}, /* P0-P6, or an R register (ptxas P2R/R2P) */
    {"b16", 1, 1, 0, 1u << F_R, 0},
    {"b32", 1, 1, 0, 1u << F_R, 0},
    {"b64", 2, 2, 0, 1u << F_R, 0},
    {"b128", 4, 4, 0, 1u << F_R, 0},
    {"r32", 1, 1, 0, 1u << F_R, 0},
    {"r64", 2, 2, 0, 1u << F_R, 0},
    {"r128", 4, 4, 0, 1u << F_R, 0},
    {"r96", 3, 4, 0, 1u << F_R, 0}, /* a texture triple (TXD ARRAY_2D, TEX CUBE coordinates R4:R6): quad-aligned */
    {"ur32", 1, 1, 0, 1u << F_UR, 0},
    {"ur64", 2, 2, 0, 1u << F_UR, 0},
    {"ur128", 4, 4, 0, 1u << F_UR, 0},
    {"p1", 1, 1, 0, 1u << F_P, 0},
    {"up1", 1, 1, 0, 1u << F_UP, 0},
    {"b1", 1, 1, 0, 1u << F_B, 0},
};

/* Constant table, no runtime initialisation: tracked registers, reserved zero/true ones. */
#define T RS_UNIT_TRACKED
#define X RS_UNIT_RESERVED
#define U4 T, T, T, T
#define U16 U4, U4, U4, U4
#define U64 U16, U16, U16, U16
static const uint8_t unit_flags[] = {
    U64, U64, U64, U16, U16, U16, U4, U4, U4, T, T, T, X, /* R0..R254, RZ */
    T, T, T, T, T, T, T, X,                               /* P0..P6, PT */
    U16, U16, U16, U4, U4, U4, T, T, T, X,                /* UR0..UR62, URZ */
    T, T, T, T, T, T, T, X,                               /* UP0..UP6, UPT */
    U16,                                                  /* B0..B15 */
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

/* Prefixes longest first, so "UR" is not read as "U" + "R". */
static const struct {
  const char *pre, *zero;
  uint32_t first, count;
} spell[] = {
    {"UR", "URZ", UR0, NUR}, {"UP", "UPT", UP0, NUP}, {"R", "RZ", R0, NR},
    {"P", "PT", P0, NP},     {"B", NULL, B0, NB},
};

static int nv_parse_preg(const rs_target *t, const char *s, size_t n, rs_preg *out) {
  (void)t;
  uint32_t lo, hi;
  size_t k;
  for (size_t i = 0; i < sizeof spell / sizeof *spell; i++) {
    size_t pl = strlen(spell[i].pre);
    if (n <= pl || memcmp(s, spell[i].pre, pl)) continue;
    if (spell[i].zero && strlen(spell[i].zero) == n && !memcmp(s, spell[i].zero, n)) {
      *out = (rs_preg){spell[i].first + spell[i].count - 1, rs_lanes_full(1)};
      return 0;
    }
    if (s[pl] != '[') {
      if ((k = parse_num(s + pl, n - pl, spell[i].count - 1, &lo)) == 0 || k != n - pl) return -1;
      *out = (rs_preg){spell[i].first + lo, rs_lanes_full(1)};
      return 0;
    }
    /* R[lo:hi], UR[lo:hi] */
    size_t j = pl + 1;
    if ((k = parse_num(s + j, n - j, spell[i].count - 1, &lo)) == 0) return -1;
    j += k;
    if (j >= n || s[j] != ':') return -1;
    j++;
    if ((k = parse_num(s + j, n - j, spell[i].count - 1, &hi)) == 0) return -1;
    j += k;
    if (j + 1 != n || s[j] != ']') return -1;
    if (hi < lo || hi - lo + 1 > 32) return -1; /* lane masks hold at most 32 units */
    *out = (rs_preg){spell[i].first + lo, rs_lanes_full(hi - lo + 1)};
    return 0;
  }
  return -1;
}

static char *nv_format_preg(const rs_target *t, rs_preg r, char *buf, size_t n) {
  (void)t;
  unsigned w = rs_lanes_units(r.lanes);
  if (!n) return buf;
  for (size_t i = 0; i < sizeof spell / sizeof *spell; i++) {
    if (r.unit < spell[i].first || r.unit >= spell[i].first + spell[i].count || w < 1) continue;
    uint32_t idx = r.unit - spell[i].first;
    if (w == 1 && spell[i].zero && idx == spell[i].count - 1)
      snprintf(buf, n, "%s", spell[i].zero);
    else if (w == 1)
      snprintf(buf, n, "%s%u", spell[i].pre, (unsigned)idx);
    else
      snprintf(buf, n, "%s[%u:%u]", spell[i].pre, (unsigned)idx, (unsigned)(idx + w - 1));
    return buf;
  }
  snprintf(buf, n, "?%u", (unsigned)r.unit);
  return buf;
}

/* Warps per SM: 4 sub-partitions of 16384 registers, 256-register granule per warp. Only R
 * registers bound occupancy (uniform registers are per warp, not per thread). */
static unsigned occupancy(unsigned regs, unsigned cap) {
  if (regs == 0) return cap;
  unsigned long per_warp = ((unsigned long)regs * 32 + 255) / 256 * 256;
  unsigned long warps = 4 * (16384 / per_warp);
  return warps < cap ? (unsigned)warps : cap;
}
/* Resident warps per SM by architecture (CUDA occupancy tables). */
static unsigned sm75_occupancy(const rs_target *t, const unsigned *used) {
  (void)t;
  return occupancy(used[F_R], 32);
}
static unsigned sm80_occupancy(const rs_target *t, const unsigned *used) {
  (void)t;
  return occupancy(used[F_R], 64);
}
static unsigned sm86_occupancy(const rs_target *t, const unsigned *used) {
  (void)t;
  return occupancy(used[F_R], 48);
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
    .reads = RS_READS_PTX | RS_READS_SASS, .emitter = "cubin", .occupancy_unit = "warps/SM",     \
    .any_reg = "R0", .not_a_reg = "Rx999",                                                    \
  }
const rs_target rs_target_sm75 = NV_TARGET("sm_75", sm75_occupancy);
const rs_target rs_target_sm80 = NV_TARGET("sm_80", sm80_occupancy);
const rs_target rs_target_sm86 = NV_TARGET("sm_86", sm86_occupancy);
const rs_target rs_target_sm89 = NV_TARGET("sm_89", sm89_occupancy);
const rs_target rs_target_sm90 = NV_TARGET("sm_90", sm90_occupancy);
