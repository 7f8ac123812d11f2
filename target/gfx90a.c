/* gfx90a.c - AMD CDNA2 (MI210/MI250X) register files as LLVM 14 models them.
 * Unit numbering: s0..s105, then the special registers, then v0..v255, then a0..a255. */
#include "target/target.h"
#include <stdio.h>
#include <string.h>

enum {
  SGPR0 = 0, NSGPR = 106,
  SPEC0 = SGPR0 + NSGPR,
  /* special units, in this order (pairs are lo then hi so tuples stay contiguous) */
  U_VCC_LO = SPEC0, U_VCC_HI, U_EXEC_LO, U_EXEC_HI, U_M0, U_SCC, U_MODE, U_FLAT_LO, U_FLAT_HI,
  U_XNACK_LO, U_XNACK_HI, U_NULL, U_TBA_LO, U_TBA_HI, U_TMA_LO, U_TMA_HI, U_SHB, U_SHL, U_PRB, U_PRL,
  U_POPS, U_VCCZ, U_EXECZ, U_SRCSCC, U_LDSDIR, U_FP, U_SP, U_RSRC, U_TTMP0,
  NSPEC = U_TTMP0 + 16 - SPEC0,
  VGPR0 = SPEC0 + NSPEC, NVGPR = 256,
  AGPR0 = VGPR0 + NVGPR, NAGPR = 256,
  NUNITS = AGPR0 + NAGPR,
};
enum { F_SGPR, F_SPEC, F_VGPR, F_AGPR };

static const rs_regfile files[] = {
    [F_SGPR] = {"sgpr", "s", SGPR0, NSGPR, 102, 16, true},
    [F_SPEC] = {"special", NULL, SPEC0, NSPEC, NSPEC, 1, false},
    [F_VGPR] = {"vgpr", "v", VGPR0, NVGPR, 256, 8, true},
    [F_AGPR] = {"agpr", "a", AGPR0, NAGPR, 256, 8, true},
};

/* Names of the special units (MIR spelling without '$'; assembly uses the same words). */
static const char *const spec_names[] = {
    "vcc_lo", "vcc_hi", "exec_lo", "exec_hi", "m0", "scc", "mode", "flat_scr_lo", "flat_scr_hi",
    "xnack_mask_lo", "xnack_mask_hi", "sgpr_null", "tba_lo", "tba_hi", "tma_lo", "tma_hi",
    "src_shared_base", "src_shared_limit", "src_private_base", "src_private_limit",
    "src_pops_exiting_wave_id", "src_vccz", "src_execz", "src_scc", "lds_direct", "fp_reg",
    "sp_reg", "private_rsrc_reg"};
/* Two-unit aliases. */
static const struct { const char *name; uint32_t unit; } pair_names[] = {
    {"vcc", U_VCC_LO}, {"exec", U_EXEC_LO}, {"flat_scr", U_FLAT_LO},
    {"xnack_mask", U_XNACK_LO}, {"tba", U_TBA_LO}, {"tma", U_TMA_LO}};

/* Allocatable specials: LLVM allocates VCC to sreg_64 values (preferred-register '$vcc'). */
enum { SP_VCC, SP_VCC_LO, SP_VCC_HI };
static const rs_special specials[] = {
    [SP_VCC] = {"vcc", {U_VCC_LO, 0xF}},
    [SP_VCC_LO] = {"vcc_lo", {U_VCC_LO, 0x3}},
    [SP_VCC_HI] = {"vcc_hi", {U_VCC_HI, 0x3}},
};

#define FS (1u << F_SGPR)
#define FV (1u << F_VGPR)
#define FA (1u << F_AGPR)
#define S32 ((1u << SP_VCC_LO) | (1u << SP_VCC_HI))
#define S64 (1u << SP_VCC)
/* SGPR tuples of 96 bits or more start at a multiple of 4; gfx90a vector tuples of 64 bits or
 * more are even-aligned (the _align2 classes; the plain names keep LLVM's weaker alignment 1). */
#define SALIGN(w) ((w) == 1 ? 1 : (w) == 2 ? 2 : 4)
#define SG(n, w) {"sgpr_" #n, w, SALIGN(w), 0, FS, 0}, {"sreg_" #n, w, SALIGN(w), 0, FS, 0}
#define VR(n, w) {"vreg_" #n, w, 1, 0, FV, 0}, {"vreg_" #n "_align2", w, 2, 0, FV, 0},       \
                 {"areg_" #n, w, 1, 0, FA, 0}, {"areg_" #n "_align2", w, 2, 0, FA, 0},       \
                 {"av_" #n, w, 1, 0, FV | FA, 0}, {"av_" #n "_align2", w, 2, 0, FV | FA, 0}
static const rs_regclass classes[] = {
    {"sgpr_32", 1, 1, 0, FS, 0},
    {"sreg_32", 1, 1, 0, FS, S32},
    {"sreg_32_xm0", 1, 1, 0, FS, S32},
    {"sreg_32_xm0_xexec", 1, 1, 0, FS, S32},
    {"sreg_32_xexec_hi", 1, 1, 0, FS, S32},
    {"sreg_32_xexec", 1, 1, 0, FS, S32},
    {"sgpr_lo16", 1, 1, 1, FS, 0},
    {"sgpr_64", 2, 2, 0, FS, 0},
    {"sreg_64", 2, 2, 0, FS, S64},
    {"sreg_64_xexec", 2, 2, 0, FS, S64},
    {"ccr_sgpr_64", 2, 2, 0, FS, 0},
    {"gfx_ccr_sgpr_64", 2, 2, 0, FS, 0},
    SG(96, 3), SG(128, 4), SG(160, 5), SG(192, 6), SG(224, 7), SG(256, 8), SG(512, 16),
    SG(1024, 32),
    {"vgpr_32", 1, 1, 0, FV, 0},
    /* vreg_1 holds i1 values before SILowerI1Copies; llc-14 still lists it in registers:
     * tables. It has no members, so a value of it can never be allocated. */
    {"vreg_1", 1, 1, 0, 0, 0},
    {"vgpr_lo16", 1, 1, 1, FV, 0},
    {"vgpr_hi16", 1, 1, 2, FV, 0},
    {"agpr_32", 1, 1, 0, FA, 0},
    {"agpr_lo16", 1, 1, 1, FA, 0},
    {"av_32", 1, 1, 0, FV | FA, 0},
    {"vs_32", 1, 1, 0, FV | FS, S32},
    {"vs_64", 2, 2, 0, FV | FS, S64},
    VR(64, 2), VR(96, 3), VR(128, 4), VR(160, 5), VR(192, 6), VR(224, 7), VR(256, 8),
    VR(512, 16), VR(1024, 32),
};

#define T RS_UNIT_TRACKED
#define R RS_UNIT_RESERVED
static const uint8_t unit_flags[NUNITS] = {
    [SGPR0 ... SGPR0 + NSGPR - 1] = T,
    [U_VCC_LO] = T, [U_VCC_HI] = T, [U_SCC] = T,
    [U_EXEC_LO] = R, [U_EXEC_HI] = R, [U_M0] = R, [U_MODE ... U_TTMP0 + 15] = R,
    [VGPR0 ... VGPR0 + NVGPR - 1] = T,
    [AGPR0 ... AGPR0 + NAGPR - 1] = T,
};
#undef T
#undef R

static int parse_uint(const char **p, const char *end, unsigned *out) {
  const char *s = *p;
  unsigned v = 0;
  if (s >= end || *s < '0' || *s > '9') return -1;
  while (s < end && *s >= '0' && *s <= '9') {
    if (v > 100000) return -1; /* overflowing register numbers are not registers */
    v = v * 10 + (unsigned)(*s++ - '0');
  }
  *p = s;
  *out = v;
  return 0;
}

static bool eq(const char *s, size_t n, const char *w) { return strlen(w) == n && !memcmp(s, w, n); }

/* Base unit and count of a numbered kind ("sgpr"/"s", "vgpr"/"v", "agpr"/"a", "ttmp"). */
static int kind_base(const char *s, size_t n, uint32_t *base, uint32_t *count) {
  if (eq(s, n, "sgpr") || eq(s, n, "s")) { *base = SGPR0; *count = NSGPR; return 0; }
  if (eq(s, n, "vgpr") || eq(s, n, "v")) { *base = VGPR0; *count = NVGPR; return 0; }
  if (eq(s, n, "agpr") || eq(s, n, "a")) { *base = AGPR0; *count = NAGPR; return 0; }
  if (eq(s, n, "ttmp")) { *base = U_TTMP0; *count = 16; return 0; }
  return -1;
}

/* MIR "$sgpr4_sgpr5", "$vgpr0_lo16", "$vcc"; assembly "v[4:5]", "s7", "a[0:15]", "vcc". */
static int parse_preg(const rs_target *t, const char *s, size_t n, rs_preg *out) {
  (void)t;
  if (n && s[0] == '$') s++, n--;
  const char *end = s + n;
  for (size_t i = 0; i < sizeof spec_names / sizeof *spec_names; i++)
    if (eq(s, n, spec_names[i])) { *out = (rs_preg){SPEC0 + (uint32_t)i, 0x3}; return 0; }
  for (size_t i = 0; i < sizeof pair_names / sizeof *pair_names; i++)
    if (eq(s, n, pair_names[i].name)) { *out = (rs_preg){pair_names[i].unit, 0xF}; return 0; }
  const char *p = s;
  while (p < end && *p >= 'a' && *p <= 'z') p++;
  uint32_t base, count;
  if (kind_base(s, (size_t)(p - s), &base, &count)) return -1;
  size_t klen = (size_t)(p - s);
  unsigned lo, hi;
  if (p < end && *p == '[') { /* assembly tuple */
    p++;
    if (parse_uint(&p, end, &lo) || p >= end || *p++ != ':' || parse_uint(&p, end, &hi) ||
        p >= end || *p++ != ']' || p != end || hi < lo)
      return -1;
  } else {
    if (parse_uint(&p, end, &lo)) return -1;
    hi = lo;
    /* MIR tuples: each further element is "_<kind><n>" with n = previous + 1. */
    while (p < end && *p == '_') {
      const char *q = p + 1;
      if (end - q == 4 && (!memcmp(q, "lo16", 4) || !memcmp(q, "hi16", 4))) {
        if (hi != lo || lo >= count) return -1;
        *out = (rs_preg){base + lo, q[0] == 'l' ? 0x1 : 0x2};
        return 0;
      }
      if ((size_t)(end - q) < klen || memcmp(q, s, klen)) return -1;
      q += klen;
      unsigned nx;
      if (parse_uint(&q, end, &nx) || nx != hi + 1) return -1;
      hi = nx;
      p = q;
    }
    if (p != end) return -1;
  }
  if (hi >= count || hi - lo >= 32) return -1;
  *out = (rs_preg){base + lo, rs_lanes_full(hi - lo + 1)};
  return 0;
}

static char *format_preg(const rs_target *t, rs_preg r, char *buf, size_t n) {
  int f = rs_target_file_of(t, r.unit);
  unsigned w = rs_lanes_units(r.lanes);
  if (f < 0) {
    snprintf(buf, n, "?");
  } else if (f == F_SPEC) {
    for (size_t i = 0; i < sizeof pair_names / sizeof *pair_names; i++)
      if (pair_names[i].unit == r.unit && w == 2) {
        snprintf(buf, n, "%s", pair_names[i].name);
        return buf;
      }
    snprintf(buf, n, "%s", spec_names[r.unit - SPEC0]);
  } else {
    unsigned idx = r.unit - files[f].first;
    const char *half = r.lanes == 1 ? ".l" : r.lanes == 2 ? ".h" : "";
    if (w <= 1)
      snprintf(buf, n, "%s%u%s", files[f].asm_prefix, idx, half);
    else
      snprintf(buf, n, "%s[%u:%u]", files[f].asm_prefix, idx, idx + w - 1);
  }
  return buf;
}

/* Waves per SIMD from VGPR+AGPR use (REGFILES.md): the unified 512-entry file, granule 8. */
static unsigned occupancy(const rs_target *t, const unsigned *used) {
  (void)t;
  unsigned v = used[F_VGPR], a = used[F_AGPR];
  unsigned total = a ? ((v + 3) / 4 * 4 + a) : v;
  unsigned g = (total + 7) / 8 * 8;
  unsigned w = g ? 512 / g : 8;
  if (w > 8) w = 8;
  if (w < 1) w = 1;
  /* SGPRs: 800 per SIMD, granule 16; bites only above ~100, which gfx90a cannot address. */
  return w;
}

const rs_target rs_target_gfx90a = {
    .name = "gfx90a",
    .vendor = RS_AMD,
    .files = files,
    .nfiles = sizeof files / sizeof *files,
    .nunits = NUNITS,
    .specials = specials,
    .nspecials = sizeof specials / sizeof *specials,
    .classes = classes,
    .nclasses = sizeof classes / sizeof *classes,
    .unit_flags = unit_flags,
    .parse_preg = parse_preg,
    .format_preg = format_preg,
    .occupancy = occupancy,
};
