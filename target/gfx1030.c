/* gfx1030.c - AMD RDNA2 as llc-14 models it: data only (target/amdgpu.h). No AGPRs, s0..s105
 * addressable, SGPRs never limit occupancy; no even-alignment rule for vector tuples. Wave32
 * (the default): 1024 VGPRs per lane, granule 16, lane masks in sreg_32 (vcc_lo; VCC_HI
 * reserved); wave64 (+wavefrontsize64): 512, granule 8, lane masks in sreg_64. At most 16 waves
 * per SIMD (GFX10.3). */
#include "target/amdgpu.h"

static const rs_regfile files32[] = {RS_AMD_FILE_SGPR(106), RS_AMD_FILE_SPEC, RS_AMD_FILE_VGPR(16)};
static const rs_regfile files64[] = {RS_AMD_FILE_SGPR(106), RS_AMD_FILE_SPEC, RS_AMD_FILE_VGPR(8)};
static const rs_special specials32[] = {RS_AMD_SPECIALS_W32};
static const rs_special specials64[] = {RS_AMD_SPECIALS_W64};
static const rs_regclass classes32[] = {
    RS_AMD_SCALAR_CLASSES(RS_AMD_S32_W32, RS_AMD_S64_W32),
    RS_AMD_VGPR_CLASSES(RS_AMD_S32_W32, RS_AMD_S64_W32),
    RS_AMD_TUPLES(RS_AMD_VR),
};
static const rs_regclass classes64[] = {
    RS_AMD_SCALAR_CLASSES(RS_AMD_S32_W64, RS_AMD_S64_W64),
    RS_AMD_VGPR_CLASSES(RS_AMD_S32_W64, RS_AMD_S64_W64),
    RS_AMD_TUPLES(RS_AMD_VR),
};
static const uint8_t flags32[RS_AMD_NUNITS_NOAGPR] = {RS_AMD_UNIT_FLAGS(RS_UNIT_RESERVED, RS_AMD_NVGPR)};
static const uint8_t flags64[RS_AMD_NUNITS_NOAGPR] = {RS_AMD_UNIT_FLAGS(RS_UNIT_TRACKED, RS_AMD_NVGPR)};
static const rs_amd_occ occ32 = {.max_waves = 16, .vgpr_total = 1024, .vgpr_granule = 16, .wave = 32, .lds_bytes = 65536};
static const rs_amd_occ occ64 = {.max_waves = 16, .vgpr_total = 512, .vgpr_granule = 8, .wave = 64, .lds_bytes = 65536};
RS_AMD_HOOKS(32, occ32)
RS_AMD_HOOKS(64, occ64)

const rs_target rs_target_gfx1030 =
    RS_AMD_TARGET("gfx1030", files32, specials32, classes32, flags32, RS_AMD_NUNITS_NOAGPR, occupancy32, budget32);
const rs_target rs_target_gfx1030_w64 =
    RS_AMD_TARGET("gfx1030w64", files64, specials64, classes64, flags64, RS_AMD_NUNITS_NOAGPR, occupancy64, budget64);
