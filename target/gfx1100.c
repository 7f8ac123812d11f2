/* gfx1100.c - AMD RDNA3 (Navi 31) as llc-16 models it: data only (target/amdgpu.h). No AGPRs,
 * s0..s105 addressable, SGPRs never limit occupancy, no even-alignment rule for vector tuples.
 * gfx1100 has the large register file (FeatureGFX11FullVGPRs): wave32 (the default) 1536 VGPRs
 * per lane with granule 24, wave64 (+wavefrontsize64) 768 with granule 12; at most 16 waves
 * per SIMD. llc-16 adds sreg_32_xexec_hi_and_sreg_32_xm0 and the 288..384-bit tuples. */
#include "target/amdgpu.h"

static const rs_regfile files32[] = {RS_AMD_FILE_SGPR(106), RS_AMD_FILE_SPEC, RS_AMD_FILE_VGPR(24)};
static const rs_regfile files64[] = {RS_AMD_FILE_SGPR(106), RS_AMD_FILE_SPEC, RS_AMD_FILE_VGPR(12)};
static const rs_special specials32[] = {RS_AMD_SPECIALS_W32};
static const rs_special specials64[] = {RS_AMD_SPECIALS_W64};
static const rs_regclass classes32[] = {RS_AMD_RDNA3_CLASSES(RS_AMD_S32_W32, RS_AMD_S64_W32)};
static const rs_regclass classes64[] = {RS_AMD_RDNA3_CLASSES(RS_AMD_S32_W64, RS_AMD_S64_W64)};
static const uint8_t flags32[RS_AMD_NUNITS_NOAGPR] = {RS_AMD_UNIT_FLAGS(RS_UNIT_RESERVED, RS_AMD_NVGPR)};
static const uint8_t flags64[RS_AMD_NUNITS_NOAGPR] = {RS_AMD_UNIT_FLAGS(RS_UNIT_TRACKED, RS_AMD_NVGPR)};
static const rs_amd_occ occ32 = {.max_waves = 16, .vgpr_total = 1536, .vgpr_granule = 24, .wave = 32, .lds_bytes = 131072, .barriers = 32, .lds_per_simd = true};
static const rs_amd_occ occ64 = {.max_waves = 16, .vgpr_total = 768, .vgpr_granule = 12, .wave = 64, .lds_bytes = 131072, .barriers = 32, .lds_per_simd = true};
RS_AMD_HOOKS(32, occ32)
RS_AMD_HOOKS(64, occ64)

const rs_target rs_target_gfx1100 =
    RS_AMD_TARGET("gfx1100", files32, specials32, classes32, flags32, RS_AMD_NUNITS_NOAGPR, occupancy32, budget32);
const rs_target rs_target_gfx1100_w64 =
    RS_AMD_TARGET("gfx1100w64", files64, specials64, classes64, flags64, RS_AMD_NUNITS_NOAGPR, occupancy64, budget64);
