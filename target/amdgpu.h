/* amdgpu.h - internal to target/: the register model every AMD target shares, so that each
 * per-architecture file (gfx908.c, gfx90a.c, gfx940.c, gfx942.c, gfx950.c, gfx1030.c, gfx1100.c,
 * gfx120x.c) is data only.
 *
 * All AMD targets number their units the same way: s0..s105, the special registers, v0..v255,
 * then a0..a255 on architectures with AGPRs (RDNA targets stop after v255, so "$agpr0" does not
 * parse there). The facts per architecture are what llc-14/16/22 print in the .s metadata
 * (tests/test_archs.c checks them against the fixtures of every architecture). */
#ifndef RS_AMDGPU_H
#define RS_AMDGPU_H
#include "target/target.h"

enum {
  RS_AMD_SGPR0 = 0, RS_AMD_NSGPR = 106,
  RS_AMD_SPEC0 = RS_AMD_SGPR0 + RS_AMD_NSGPR,
  /* special units, in this order (pairs are lo then hi so tuples stay contiguous) */
  RS_AMD_VCC_LO = RS_AMD_SPEC0, RS_AMD_VCC_HI, RS_AMD_EXEC_LO, RS_AMD_EXEC_HI, RS_AMD_M0, RS_AMD_SCC,
  RS_AMD_MODE, RS_AMD_FLAT_LO, RS_AMD_FLAT_HI, RS_AMD_XNACK_LO, RS_AMD_XNACK_HI, RS_AMD_NULL,
  RS_AMD_NULL_HI /* llc-16: $sgpr_null64 */, RS_AMD_TBA_LO, RS_AMD_TBA_HI, RS_AMD_TMA_LO, RS_AMD_TMA_HI, RS_AMD_SHB, RS_AMD_SHL, RS_AMD_PRB,
  RS_AMD_PRL, RS_AMD_POPS, RS_AMD_VCCZ, RS_AMD_EXECZ, RS_AMD_SRCSCC, RS_AMD_LDSDIR, RS_AMD_FP,
  RS_AMD_SP, RS_AMD_RSRC, RS_AMD_TTMP0,
  RS_AMD_NSPEC = RS_AMD_TTMP0 + 16 - RS_AMD_SPEC0,
  RS_AMD_VGPR0 = RS_AMD_SPEC0 + RS_AMD_NSPEC, RS_AMD_NVGPR = 256,
  RS_AMD_AGPR0 = RS_AMD_VGPR0 + RS_AMD_NVGPR, RS_AMD_NAGPR = 256,
  RS_AMD_NUNITS_NOAGPR = RS_AMD_AGPR0,              /* gfx1030, gfx1100 */
  RS_AMD_NUNITS = RS_AMD_AGPR0 + RS_AMD_NAGPR,      /* gfx908, gfx90a, gfx940 */
};
enum { RS_AMD_F_SGPR, RS_AMD_F_SPEC, RS_AMD_F_VGPR, RS_AMD_F_AGPR };

/* Register files. SGPR budget: s0..s101 on GFX9 (VCC, FLAT_SCRATCH, XNACK live above), s0..s105
 * on GFX10+ (LLVM's getAddressableNumSGPRs). Vector budgets: 256 architectural registers each. */
#define RS_AMD_FILE_SGPR(budget) {"sgpr", "s", RS_AMD_SGPR0, RS_AMD_NSGPR, budget, 16, true}
#define RS_AMD_FILE_SPEC {"special", NULL, RS_AMD_SPEC0, RS_AMD_NSPEC, RS_AMD_NSPEC, 1, false}
#define RS_AMD_FILE_VGPR(granule) {"vgpr", "v", RS_AMD_VGPR0, RS_AMD_NVGPR, 256, granule, true}
#define RS_AMD_FILE_AGPR(granule) {"agpr", "a", RS_AMD_AGPR0, RS_AMD_NAGPR, 256, granule, true}

/* Allocatable specials. Wave64: LLVM gives sreg_64 values VCC (preferred-register '$vcc') and
 * sreg_32 values its halves. Wave32: lane masks are 32-bit and only vcc_lo is allocatable
 * (SIRegisterInfo reserves VCC_HI in wave32). */
#define RS_AMD_SPECIALS_W64                                                                     \
  {"vcc", {RS_AMD_VCC_LO, 0xF}}, {"vcc_lo", {RS_AMD_VCC_LO, 0x3}}, {"vcc_hi", {RS_AMD_VCC_HI, 0x3}}
#define RS_AMD_S32_W64 6u /* bits of vcc_lo, vcc_hi in RS_AMD_SPECIALS_W64 */
#define RS_AMD_S64_W64 1u
#define RS_AMD_SPECIALS_W32 {"vcc_lo", {RS_AMD_VCC_LO, 0x3}}
#define RS_AMD_S32_W32 1u
#define RS_AMD_S64_W32 0u
/* llc-22 wave32 (gfx1200, gfx1201): VCC_HI is an allocatable SGPR (greedy gives it to sreg_32
 * values, measured on fixture gfx1201/fa_hd96_bc16_f32_c2_d4); llc-14/16 reserve it */
#define RS_AMD_SPECIALS_W32_HI {"vcc_lo", {RS_AMD_VCC_LO, 0x3}}, {"vcc_hi", {RS_AMD_VCC_HI, 0x3}}
#define RS_AMD_S32_W32_HI 3u

#define RS_AMD_FS (1u << RS_AMD_F_SGPR)
#define RS_AMD_FV (1u << RS_AMD_F_VGPR)
#define RS_AMD_FA (1u << RS_AMD_F_AGPR)
/* SGPR tuples of 96 bits or more start at a multiple of 4 (all architectures). */
#define RS_AMD_SALIGN(w) ((w) == 1 ? 1 : (w) == 2 ? 2 : 4)
#define RS_AMD_SG(n, w) {"sgpr_" #n, w, RS_AMD_SALIGN(w), 0, RS_AMD_FS, 0}, \
                        {"sreg_" #n, w, RS_AMD_SALIGN(w), 0, RS_AMD_FS, 0}

/* Scalar classes (llc-14 and llc-16); S32/S64: the specials the lane-mask classes may take. */
#define RS_AMD_SCALAR_CLASSES(S32, S64)                                                         \
  {"sgpr_32", 1, 1, 0, RS_AMD_FS, 0}, {"sreg_32", 1, 1, 0, RS_AMD_FS, S32},                     \
  {"sreg_32_xm0", 1, 1, 0, RS_AMD_FS, S32}, {"sreg_32_xm0_xexec", 1, 1, 0, RS_AMD_FS, S32},     \
  {"sreg_32_xexec_hi", 1, 1, 0, RS_AMD_FS, S32}, {"sreg_32_xexec", 1, 1, 0, RS_AMD_FS, S32},    \
  {"sgpr_lo16", 1, 1, 1, RS_AMD_FS, 0}, {"sgpr_64", 2, 2, 0, RS_AMD_FS, 0},                     \
  {"sreg_64", 2, 2, 0, RS_AMD_FS, S64}, {"sreg_64_xexec", 2, 2, 0, RS_AMD_FS, S64},             \
  {"ccr_sgpr_64", 2, 2, 0, RS_AMD_FS, 0}, {"gfx_ccr_sgpr_64", 2, 2, 0, RS_AMD_FS, 0},           \
  RS_AMD_SG(96, 3), RS_AMD_SG(128, 4), RS_AMD_SG(160, 5), RS_AMD_SG(192, 6), RS_AMD_SG(224, 7), \
  RS_AMD_SG(256, 8), RS_AMD_SG(512, 16), RS_AMD_SG(1024, 32)
/* New in llc-16: the class intersection it prints for wave32 lane masks and readfirstlane
 * results, and the 288..384-bit tuples added for image instructions (LLVM 16). */
#define RS_AMD_SCALAR_CLASSES_16(S32)                                                           \
  {"sreg_32_xexec_hi_and_sreg_32_xm0", 1, 1, 0, RS_AMD_FS, S32},                               \
  RS_AMD_SG(288, 9), RS_AMD_SG(320, 10), RS_AMD_SG(352, 11), RS_AMD_SG(384, 12)

/* Vector classes every architecture has. vreg_1 holds i1 values before SILowerI1Copies; llc
 * still lists it in registers: tables. It has no members, so it can never be allocated. */
#define RS_AMD_VGPR_CLASSES(S32, S64)                                                           \
  {"vgpr_32", 1, 1, 0, RS_AMD_FV, 0}, {"vreg_1", 1, 1, 0, 0, 0},                                \
  {"vgpr_lo16", 1, 1, 1, RS_AMD_FV, 0}, {"vgpr_hi16", 1, 1, 2, RS_AMD_FV, 0},                   \
  {"vs_32", 1, 1, 0, RS_AMD_FV | RS_AMD_FS, S32}, {"vs_64", 2, 2, 0, RS_AMD_FV | RS_AMD_FS, S64}
/* AGPR / either-file scalar classes (gfx908, gfx90a, gfx940). */
#define RS_AMD_AGPR_CLASSES                                                                     \
  {"agpr_32", 1, 1, 0, RS_AMD_FA, 0}, {"agpr_lo16", 1, 1, 1, RS_AMD_FA, 0},                     \
  {"av_32", 1, 1, 0, RS_AMD_FV | RS_AMD_FA, 0}

/* Tuples of n bits (w units). Plain names take any start register; the _align2 classes (gfx90a,
 * gfx940: every VGPR/AGPR tuple of 64 bits or more starts even) exist only where LLVM needs them. */
#define RS_AMD_VR(n, w) {"vreg_" #n, w, 1, 0, RS_AMD_FV, 0}
#define RS_AMD_AR(n, w) {"areg_" #n, w, 1, 0, RS_AMD_FA, 0}, {"av_" #n, w, 1, 0, RS_AMD_FV | RS_AMD_FA, 0}
#define RS_AMD_VR2(n, w) {"vreg_" #n "_align2", w, 2, 0, RS_AMD_FV, 0}
#define RS_AMD_AR2(n, w) {"areg_" #n "_align2", w, 2, 0, RS_AMD_FA, 0}, \
                         {"av_" #n "_align2", w, 2, 0, RS_AMD_FV | RS_AMD_FA, 0}
#define RS_AMD_TUPLES(X)                                                                        \
  X(64, 2), X(96, 3), X(128, 4), X(160, 5), X(192, 6), X(224, 7), X(256, 8), X(512, 16), X(1024, 32)
#define RS_AMD_TUPLES_16(X) X(288, 9), X(320, 10), X(352, 11), X(384, 12)

/* New in llc-22: 64-bit scalars that may not be SGPR_NULL64 (VCC allowed). */
#define RS_AMD_SCALAR_CLASSES_22(S64) {"sreg_64_xexec_xnull", 2, 2, 0, RS_AMD_FS, S64}

/* The class lists of llc-16 and llc-22 (the same names): CDNA3 (gfx940, gfx942, gfx950), wave64,
 * both files, _align2 tuples; RDNA3/4 (gfx1100, gfx1200, gfx1201), VGPRs only. */
#define RS_AMD_CDNA3_CLASSES                                                                    \
  RS_AMD_SCALAR_CLASSES(RS_AMD_S32_W64, RS_AMD_S64_W64), RS_AMD_SCALAR_CLASSES_16(RS_AMD_S32_W64), \
  RS_AMD_VGPR_CLASSES(RS_AMD_S32_W64, RS_AMD_S64_W64), RS_AMD_AGPR_CLASSES,                     \
  RS_AMD_TUPLES(RS_AMD_VR), RS_AMD_TUPLES(RS_AMD_AR), RS_AMD_TUPLES(RS_AMD_VR2), RS_AMD_TUPLES(RS_AMD_AR2), \
  RS_AMD_TUPLES_16(RS_AMD_VR), RS_AMD_TUPLES_16(RS_AMD_AR), RS_AMD_TUPLES_16(RS_AMD_VR2),       \
  RS_AMD_TUPLES_16(RS_AMD_AR2)
#define RS_AMD_RDNA3_CLASSES(S32, S64)                                                          \
  RS_AMD_SCALAR_CLASSES(S32, S64), RS_AMD_SCALAR_CLASSES_16(S32), RS_AMD_VGPR_CLASSES(S32, S64), \
  RS_AMD_TUPLES(RS_AMD_VR), RS_AMD_TUPLES_16(RS_AMD_VR)

/* Unit flags: SGPRs, VCC (both halves in wave64, vcc_lo only in wave32), SCC and the vector
 * registers are tracked; EXEC, M0, MODE and the other specials are reserved. */
#define RS_AMD_UNIT_FLAGS(vcc_hi, nvec)                                                         \
  [RS_AMD_SGPR0 ... RS_AMD_SGPR0 + RS_AMD_NSGPR - 1] = RS_UNIT_TRACKED,                         \
  [RS_AMD_VCC_LO] = RS_UNIT_TRACKED, [RS_AMD_VCC_HI] = vcc_hi, [RS_AMD_SCC] = RS_UNIT_TRACKED,  \
  [RS_AMD_EXEC_LO] = RS_UNIT_RESERVED, [RS_AMD_EXEC_HI] = RS_UNIT_RESERVED,                     \
  [RS_AMD_M0] = RS_UNIT_RESERVED, [RS_AMD_MODE ... RS_AMD_TTMP0 + 15] = RS_UNIT_RESERVED,       \
  [RS_AMD_VGPR0 ... RS_AMD_VGPR0 + (nvec) - 1] = RS_UNIT_TRACKED

/* Occupancy parameters (LLVM's AMDGPUBaseInfo: getMaxWavesPerEU, getTotalNumVGPRs,
 * getVGPRAllocGranule, getOccupancyWithNumSGPRs). */
typedef struct {
  unsigned max_waves;    /* waves per SIMD */
  unsigned vgpr_total;   /* vector registers per SIMD lane */
  unsigned vgpr_granule; /* allocation granule */
  bool unified;          /* AGPRs after accum_offset = alignTo(#VGPR, 4) in the same file */
  bool sgpr_limits;      /* GFX9: the SGPR count limits waves (GFX10+: never) */
  /* Launch bounds -> the function's budget (rs_amd_fn_budget; docs/emit.md, "The function's
   * register budget"): */
  unsigned wave;         /* lanes per wave: 64, or 32 (gfx10+ default) */
  enum { RS_AMD_AGPR_NONE, RS_AMD_AGPR_SEPARATE, RS_AMD_AGPR_SPLIT } agprs;
  bool agpr_alloc_attr;  /* llc-22's split: "amdgpu-agpr-alloc", else half each (llc-14/16: usesAGPRs) */
  /* LDS bound (rs_amd_lds_occupancy): bytes a work-group may use, and whether llc counts the
   * work-groups per SIMD (llc-16 and later; llc-14 per CU with the old 40-wave rule), with at
   * most `barriers` groups of more than one wave per CU. */
  unsigned lds_bytes, barriers;
  bool lds_per_simd;
} rs_amd_occ;

unsigned rs_amd_occupancy(const rs_amd_occ *o, const rs_target *t, const unsigned *used);
unsigned rs_amd_lds_occupancy(const rs_amd_occ *o, unsigned lds_bytes, unsigned wg_size);
void rs_amd_fn_budget(const rs_amd_occ *o, const rs_target *t, const rs_launch *l, uint32_t *budget,
                      unsigned *waves);
int rs_amd_parse_preg(const rs_target *t, const char *s, size_t n, rs_preg *out);
char *rs_amd_format_preg(const rs_target *t, rs_preg r, char *buf, size_t n);

/* One rs_target from its data (the per-architecture files only fill tables). */
#define RS_AMD_TARGET(NAME, FILES, SPECIALS, CLASSES, FLAGS, NUNITS, OCC_FN, BUDGET_FN)        \
  {RS_AMD_FIELDS(NAME, FILES, SPECIALS, CLASSES, FLAGS, NUNITS, OCC_FN, BUDGET_FN)}
/* The same for an architecture whose MIR comes from llc-22 (rs_target.llvm). */
#define RS_AMD_TARGET_22(NAME, FILES, SPECIALS, CLASSES, FLAGS, NUNITS, OCC_FN, BUDGET_FN)     \
  {RS_AMD_FIELDS(NAME, FILES, SPECIALS, CLASSES, FLAGS, NUNITS, OCC_FN, BUDGET_FN), .llvm = 22}
#define RS_AMD_FIELDS(NAME, FILES, SPECIALS, CLASSES, FLAGS, NUNITS, OCC_FN, BUDGET_FN)        \
  .name = NAME, .vendor = RS_AMD, .files = FILES, .nfiles = sizeof FILES / sizeof *FILES,       \
   .nunits = NUNITS, .specials = SPECIALS, .nspecials = sizeof SPECIALS / sizeof *SPECIALS,      \
   .classes = CLASSES, .nclasses = sizeof CLASSES / sizeof *CLASSES, .unit_flags = FLAGS,        \
   .parse_preg = rs_amd_parse_preg, .format_preg = rs_amd_format_preg, .occupancy = OCC_FN,        \
   .fn_budget = BUDGET_FN, .lds_occupancy = LDS_##OCC_FN, .reads = RS_READS_MIR, .emitter = "llc",        \
   .occupancy_unit = "waves/SIMD", .any_reg = "v0", .not_a_reg = "vx999", .simt_exclusions = true
/* The three hooks of one architecture's occupancy data (RS_AMD_TARGET names the LDS one after
 * the occupancy one: LDS_occupancy##SUFFIX). */
#define RS_AMD_HOOKS(SUFFIX, OCC)                                                                \
  static unsigned occupancy##SUFFIX(const rs_target *t, const unsigned *u) { return rs_amd_occupancy(&OCC, t, u); } \
  static unsigned LDS_occupancy##SUFFIX(const rs_target *t, unsigned lds, unsigned wg) {                \
    (void)t;                                                                                     \
    return rs_amd_lds_occupancy(&OCC, lds, wg);                                                  \
  }                                                                                              \
  static void budget##SUFFIX(const rs_target *t, const rs_launch *l, uint32_t *b, unsigned *w) {              \
    rs_amd_fn_budget(&OCC, t, l, b, w);                                                          \
  }

#endif
