/* gfx120x.c - AMD RDNA4, gfx1200 (Navi 44: RX 9060 XT) and gfx1201 (Navi 48: RX 9070, 9070 XT,
 * AI PRO R9700), as llc-22 models them: data only (target/amdgpu.h), one set for both.
 * gfx1100's register model, measured again on llc-22's .s: no AGPRs, s0..s105, SGPRs never
 * limit occupancy, no alignment rule for vector tuples, the large VGPR file (wave32 1536 per
 * lane with granule 24, wave64 768 / 12; 16 waves per SIMD), 128 KiB of LDS per WGP. New in
 * llc-22: VCC_HI is allocatable in wave32 (RS_AMD_SPECIALS_W32_HI).
 * gfx1200 and gfx1201 compile to the same code; they stay two targets (same data, two names) for
 * the holdout splits. */
#include "target/amdgpu.h"

static const rs_regfile files32[] = {RS_AMD_FILE_SGPR(106), RS_AMD_FILE_SPEC, RS_AMD_FILE_VGPR(24)};
static const rs_regfile files64[] = {RS_AMD_FILE_SGPR(106), RS_AMD_FILE_SPEC, RS_AMD_FILE_VGPR(12)};
static const rs_special specials32[] = {RS_AMD_SPECIALS_W32_HI};
static const rs_special specials64[] = {RS_AMD_SPECIALS_W64};
static const rs_regclass classes32[] = {RS_AMD_RDNA3_CLASSES(RS_AMD_S32_W32_HI, RS_AMD_S64_W32),
                                        RS_AMD_SCALAR_CLASSES_22(RS_AMD_S64_W32)};
static const rs_regclass classes64[] = {RS_AMD_RDNA3_CLASSES(RS_AMD_S32_W64, RS_AMD_S64_W64),
                                        RS_AMD_SCALAR_CLASSES_22(RS_AMD_S64_W64)};
static const uint8_t flags32[RS_AMD_NUNITS_NOAGPR] = {RS_AMD_UNIT_FLAGS(RS_UNIT_TRACKED, RS_AMD_NVGPR)};
static const uint8_t flags64[RS_AMD_NUNITS_NOAGPR] = {RS_AMD_UNIT_FLAGS(RS_UNIT_TRACKED, RS_AMD_NVGPR)};
static const rs_amd_occ occ32 = {.max_waves = 16, .vgpr_total = 1536, .vgpr_granule = 24, .wave = 32, .lds_bytes = 131072, .barriers = 32, .lds_per_simd = true};
static const rs_amd_occ occ64 = {.max_waves = 16, .vgpr_total = 768, .vgpr_granule = 12, .wave = 64, .lds_bytes = 131072, .barriers = 32, .lds_per_simd = true};
RS_AMD_HOOKS(32, occ32)
RS_AMD_HOOKS(64, occ64)

const rs_target rs_target_gfx1200 =
    RS_AMD_TARGET_22("gfx1200", files32, specials32, classes32, flags32, RS_AMD_NUNITS_NOAGPR, occupancy32, budget32);
const rs_target rs_target_gfx1200_w64 =
    RS_AMD_TARGET_22("gfx1200w64", files64, specials64, classes64, flags64, RS_AMD_NUNITS_NOAGPR, occupancy64, budget64);
const rs_target rs_target_gfx1201 =
    RS_AMD_TARGET_22("gfx1201", files32, specials32, classes32, flags32, RS_AMD_NUNITS_NOAGPR, occupancy32, budget32);
const rs_target rs_target_gfx1201_w64 =
    RS_AMD_TARGET_22("gfx1201w64", files64, specials64, classes64, flags64, RS_AMD_NUNITS_NOAGPR, occupancy64, budget64);
