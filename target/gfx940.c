/* gfx940.c - AMD CDNA3 (MI300 family) as llc-16 models it: data only (target/amdgpu.h).
 * The register file is gfx90a's (512 entries per lane, AGPRs after accum_offset, granule 8,
 * 8 waves per SIMD, _align2 vector tuples); llc-16 adds the 288..384-bit tuple classes. */
#include "target/amdgpu.h"

static const rs_regfile files[] = {RS_AMD_FILE_SGPR(102), RS_AMD_FILE_SPEC, RS_AMD_FILE_VGPR(8),
                                   RS_AMD_FILE_AGPR(8)};
static const rs_special specials[] = {RS_AMD_SPECIALS_W64};
static const rs_regclass classes[] = {RS_AMD_CDNA3_CLASSES};
static const uint8_t unit_flags[RS_AMD_NUNITS] = {
    RS_AMD_UNIT_FLAGS(RS_UNIT_TRACKED, RS_AMD_NVGPR + RS_AMD_NAGPR)};
static const rs_amd_occ occ = {.max_waves = 8, .vgpr_total = 512, .vgpr_granule = 8, .unified = true,
                               .sgpr_limits = true,
                               .wave = 64, .lds_bytes = 65536, .barriers = 16, .lds_per_simd = true, .agprs = RS_AMD_AGPR_SPLIT};
RS_AMD_HOOKS(, occ)

const rs_target rs_target_gfx940 =
    RS_AMD_TARGET("gfx940", files, specials, classes, unit_flags, RS_AMD_NUNITS, occupancy, budget);
