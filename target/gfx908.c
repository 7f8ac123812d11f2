/* gfx908.c - AMD CDNA1 (MI100) as llc-14 models it: data only (target/amdgpu.h).
 * Separate VGPR and AGPR files of 256 registers each; the larger count bounds occupancy
 * (256 per lane, granule 4, at most 10 waves per SIMD; SGPRs limit above 80). Vector tuples
 * have no even-alignment rule, so llc-14 prints only the plain classes (vreg_64, areg_512). */
#include "target/amdgpu.h"

static const rs_regfile files[] = {RS_AMD_FILE_SGPR(102), RS_AMD_FILE_SPEC, RS_AMD_FILE_VGPR(4),
                                   RS_AMD_FILE_AGPR(4)};
static const rs_special specials[] = {RS_AMD_SPECIALS_W64};
static const rs_regclass classes[] = {
    RS_AMD_SCALAR_CLASSES(RS_AMD_S32_W64, RS_AMD_S64_W64),
    RS_AMD_VGPR_CLASSES(RS_AMD_S32_W64, RS_AMD_S64_W64),
    RS_AMD_AGPR_CLASSES,
    RS_AMD_TUPLES(RS_AMD_VR), RS_AMD_TUPLES(RS_AMD_AR),
};
static const uint8_t unit_flags[RS_AMD_NUNITS] = {
    RS_AMD_UNIT_FLAGS(RS_UNIT_TRACKED, RS_AMD_NVGPR + RS_AMD_NAGPR)};
static const rs_amd_occ occ = {.max_waves = 10, .vgpr_total = 256, .vgpr_granule = 4, .unified = false,
                               .sgpr_limits = true,
                               .wave = 64, .lds_bytes = 65536, .agprs = RS_AMD_AGPR_SEPARATE};
RS_AMD_HOOKS(, occ)

const rs_target rs_target_gfx908 =
    RS_AMD_TARGET("gfx908", files, specials, classes, unit_flags, RS_AMD_NUNITS, occupancy, budget);
