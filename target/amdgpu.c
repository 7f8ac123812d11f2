/* amdgpu.c - what every AMD target shares: register spelling (MIR and assembly) and the
 * occupancy formula. The per-architecture files hold only data (target/amdgpu.h). */
#include "target/amdgpu.h"
#include <stdio.h>
#include <string.h>

/* Names of the special units (MIR spelling without '$'; assembly uses the same words). */
static const char *const spec_names[] = {
    "vcc_lo", "vcc_hi", "exec_lo", "exec_hi", "m0", "scc", "mode", "flat_scr_lo", "flat_scr_hi",
    "xnack_mask_lo", "xnack_mask_hi", "sgpr_null", "sgpr_null_hi", "tba_lo", "tba_hi", "tma_lo", "tma_hi",
    "src_shared_base", "src_shared_limit", "src_private_base", "src_private_limit",
    "src_pops_exiting_wave_id", "src_vccz", "src_execz", "src_scc", "lds_direct", "fp_reg",
    "sp_reg", "private_rsrc_reg"};
/* Two-unit aliases. */
static const struct { const char *name; uint32_t unit; } pair_names[] = {
    {"vcc", RS_AMD_VCC_LO}, {"exec", RS_AMD_EXEC_LO}, {"flat_scr", RS_AMD_FLAT_LO},
    {"xnack_mask", RS_AMD_XNACK_LO}, {"tba", RS_AMD_TBA_LO}, {"tma", RS_AMD_TMA_LO},
    {"sgpr_null64", RS_AMD_NULL}};

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
  if (eq(s, n, "sgpr") || eq(s, n, "s")) { *base = RS_AMD_SGPR0; *count = RS_AMD_NSGPR; return 0; }
  if (eq(s, n, "vgpr") || eq(s, n, "v")) { *base = RS_AMD_VGPR0; *count = RS_AMD_NVGPR; return 0; }
  if (eq(s, n, "agpr") || eq(s, n, "a")) { *base = RS_AMD_AGPR0; *count = RS_AMD_NAGPR; return 0; }
  if (eq(s, n, "ttmp")) { *base = RS_AMD_TTMP0; *count = 16; return 0; }
  return -1;
}

/* MIR "$sgpr4_sgpr5", "$vgpr0_lo16", "$vcc"; assembly "v[4:5]", "s7", "a[0:15]", "vcc".
 * Units past the target's last one (AGPRs on RDNA) are not registers of that target. */
int rs_amd_parse_preg(const rs_target *t, const char *s, size_t n, rs_preg *out) {
  if (n && s[0] == '$') s++, n--;
  const char *end = s + n;
  for (size_t i = 0; i < sizeof spec_names / sizeof *spec_names; i++)
    if (eq(s, n, spec_names[i])) { *out = (rs_preg){RS_AMD_SPEC0 + (uint32_t)i, 0x3}; return 0; }
  for (size_t i = 0; i < sizeof pair_names / sizeof *pair_names; i++)
    if (eq(s, n, pair_names[i].name)) { *out = (rs_preg){pair_names[i].unit, 0xF}; return 0; }
  const char *p = s;
  while (p < end && *p >= 'a' && *p <= 'z') p++;
  uint32_t base, count;
  if (kind_base(s, (size_t)(p - s), &base, &count) || base + count > t->nunits) return -1;
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

char *rs_amd_format_preg(const rs_target *t, rs_preg r, char *buf, size_t n) {
  int f = rs_target_file_of(t, r.unit);
  unsigned w = rs_lanes_units(r.lanes);
  if (f < 0) {
    snprintf(buf, n, "?");
  } else if (f == RS_AMD_F_SPEC) {
    for (size_t i = 0; i < sizeof pair_names / sizeof *pair_names; i++)
      if (pair_names[i].unit == r.unit && w == 2) {
        snprintf(buf, n, "%s", pair_names[i].name);
        return buf;
      }
    if (r.unit - RS_AMD_SPEC0 < sizeof spec_names / sizeof *spec_names)
      snprintf(buf, n, "%s", spec_names[r.unit - RS_AMD_SPEC0]);
    else
      snprintf(buf, n, "ttmp%u", r.unit - RS_AMD_TTMP0);
  } else {
    unsigned idx = r.unit - t->files[f].first;
    const char *half = r.lanes == 1 ? ".l" : r.lanes == 2 ? ".h" : "";
    if (w <= 1)
      snprintf(buf, n, "%s%u%s", t->files[f].asm_prefix, idx, half);
    else
      snprintf(buf, n, "%s[%u:%u]", t->files[f].asm_prefix, idx, idx + w - 1);
  }
  return buf;
}

/* Waves per SIMD from the registers used, as LLVM computes it (GCNSubtarget::computeOccupancy
 * without the LDS and attribute bounds): used[] holds LLVM's counts (NumVgprs, NumAgprs,
 * NumSgprs including VCC/FLAT_SCRATCH/XNACK where the architecture adds them). */
unsigned rs_amd_occupancy(const rs_amd_occ *o, const rs_target *t, const unsigned *used) {
  unsigned v = used[RS_AMD_F_VGPR], a = t->nfiles > RS_AMD_F_AGPR ? used[RS_AMD_F_AGPR] : 0;
  /* unified file: AGPRs after accum_offset; separate files: the larger of the two bounds */
  unsigned total = o->unified && a ? (v + 3) / 4 * 4 + a : (v > a ? v : a);
  unsigned w = o->max_waves;
  if (total >= o->vgpr_granule) {
    unsigned g = (total + o->vgpr_granule - 1) / o->vgpr_granule * o->vgpr_granule;
    unsigned k = o->vgpr_total / g;
    if (k < 1) k = 1;
    if (k < w) w = k;
  }
  if (o->sgpr_limits) {
    unsigned s = used[RS_AMD_F_SGPR];
    unsigned k = s <= 80 ? 10 : s <= 88 ? 9 : s <= 100 ? 8 : 7;
    if (k < w) w = k;
  }
  return w;
}

/* LLVM's occupancy bound from LDS and the work-group size, which registers cannot raise
 * (getOccupancyWithLocalMemSize / getOccupancyWithWorkGroupSizes for a fixed group size).
 * llc-14 (gfx908, gfx90a, gfx1030): work-groups per CU = min(LDS / lds_bytes, 40 / waves per
 * group, at most 16), times the waves of a group, at most the SIMD's waves. llc-16 and llc-22
 * count per SIMD: groups = min(LDS / lds_bytes, the CU's waves (4 SIMDs) / waves per group, at
 * most `barriers` when a group has more than one wave), then groups x waves per group / 4,
 * rounded up, at most the SIMD's waves; fitted to every fixture and mini-corpus kernel (e.g.
 * gfx1100, 24576 bytes, 64 work-items: 5 x 2 / 4 = 3). LDS per group: 64 KiB (gfx9, gfx10.3),
 * 128 KiB per WGP (gfx11, gfx12), 160 KiB on gfx950; a kernel without LDS is bounded by the
 * work-group size alone. */
unsigned rs_amd_lds_occupancy(const rs_amd_occ *o, unsigned lds_bytes, unsigned wg_size) {
  if (wg_size < 1) wg_size = 1;
  long waves = ((long)wg_size + o->wave - 1) / o->wave, per_cu = waves == 1 ? 40 : 40 / waves;
  if (per_cu > 16) per_cu = 16;
  if (o->lds_per_simd) {
    long cu = (long)o->max_waves * 4;
    per_cu = waves == 1 ? cu : cu / waves;
    if (waves > 1 && per_cu > (long)o->barriers) per_cu = o->barriers;
  }
  long groups = (long)o->lds_bytes / (lds_bytes ? lds_bytes : 1);
  if (groups == 0) return 1;
  if (groups > per_cu) groups = per_cu;
  long occ = groups * waves;
  if (o->lds_per_simd) occ = (occ + 3) / 4;
  return (unsigned)(occ > (long)o->max_waves ? (long)o->max_waves : occ);
}

/* The registers LLVM leaves a function with these launch bounds (llc-14 and llc-16, measured
 * with the MachineVerifier on every architecture: docs/emit.md, "The function's register
 * budget"). AMDGPUSubtarget::getWavesPerEU gives the minimum waves per SIMD W: a work-group of
 * up to wg_max work-items is ceil(wg_max / wave) waves spread over 4 SIMDs (a CU, or a gfx10+
 * WGP), raised by a valid "amdgpu-waves-per-eu" minimum. getMaxNumVGPRs: N = alignDown(total /
 * W, granule), at most the addressable 512 (gfx90a, gfx940) or 256. SIRegisterInfo::
 * getReservedRegs reserves the rest: gfx908 N VGPRs and N AGPRs; gfx90a/gfx940 N/2 each when
 * the function uses AGPRs, else N VGPRs (at most 256) and the remainder N - 256 as AGPRs. SGPRs
 * (GFX9 only; they bind only from 7 waves on): alignDown(800 / W - 16 trap-handler SGPRs, 16)
 * less VCC, FLAT_SCRATCH and XNACK_MASK (6; LLVM subtracts 4 when the kernel has no flat
 * scratch, so this may refuse 2 SGPRs LLVM allows), at most the file's 102. */
void rs_amd_fn_budget(const rs_amd_occ *o, const rs_target *t, const rs_launch *l, uint32_t *budget,
                      unsigned *waves) {
  unsigned wg_max = l->wg_max;
  bool wg_given = wg_max != 0;
  if (!wg_given || l->wg_min < 1 || l->wg_min > wg_max || wg_max > 1024) wg_max = 1024; /* LLVM's default */
  unsigned implied = ((wg_max + o->wave - 1) / o->wave + 3) / 4;
  unsigned w = implied ? implied : 1;
  if (l->wpe_min) {
    unsigned lo = l->wpe_min, hi = l->wpe_max ? l->wpe_max : o->max_waves;
    if (lo <= hi && hi <= o->max_waves && !(wg_given && lo < implied)) w = lo;
  }
  *waves = w;
  unsigned n = o->vgpr_total / w / o->vgpr_granule * o->vgpr_granule;
  unsigned addressable = o->agprs == RS_AMD_AGPR_SPLIT ? 512 : 256;
  if (n > addressable) n = addressable;
  unsigned v = n, a = 0;
  if (o->agprs == RS_AMD_AGPR_SEPARATE) {
    a = n;
  } else if (o->agprs == RS_AMD_AGPR_SPLIT && o->agpr_alloc_attr) {
    /* llc-22 (GCNSubtarget::getMaxNumVectorRegs): "amdgpu-agpr-alloc"="m[,M]" reserves at least
     * alignTo(m, 4) AGPRs (at most M); absent, half the file each */
    unsigned amin = n / 2, amax = n / 2;
    if (l->agpr_alloc) {
      amin = (l->agpr_min + 3) / 4 * 4;
      amax = l->agpr_max ? l->agpr_max : ~0u;
      if (amin > 256) amin = 256;
    }
    if (amax < amin) amax = amin;
    if (amax > n) amax = n;
    if (amin > amax) amin = amax;
    v = n - amin > 256 ? 256 : n - amin;
    a = n - v < amax ? n - v : amax;
  } else if (o->agprs == RS_AMD_AGPR_SPLIT) {
    if (l->uses_agpr) v = a = n / 2;
    else v = n > 256 ? 256 : n, a = n > 256 ? n - 256 : 0;
  }
  if (budget[RS_AMD_F_VGPR] > v) budget[RS_AMD_F_VGPR] = v;
  if (t->nfiles > RS_AMD_F_AGPR && budget[RS_AMD_F_AGPR] > a) budget[RS_AMD_F_AGPR] = a;
  if (o->sgpr_limits) {
    unsigned s = 800 / w;
    s = (s > 16 ? s - 16 : 0) / 16 * 16;
    s = s > 6 ? s - 6 : 0;
    if (budget[RS_AMD_F_SGPR] > s) budget[RS_AMD_F_SGPR] = s;
  }
}
