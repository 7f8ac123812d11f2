/* gfx90a.c - AMD CDNA2 (MI210/MI250X) as llc-14 models it: data only (target/amdgpu.h).
 * One 512-entry vector file per lane: AGPRs follow the VGPRs at accum_offset =
 * alignTo(#VGPR, 4); allocation granule 8, at most 8 waves per SIMD; every vector tuple of 64
 * bits or more is even-aligned (the _align2 classes; the plain names keep alignment 1). */
#include "target/amdgpu.h"

static const rs_regfile files[] = {RS_AMD_FILE_SGPR(102), RS_AMD_FILE_SPEC, RS_AMD_FILE_VGPR(8),
                                   RS_AMD_FILE_AGPR(8)};
static const rs_special specials[] = {RS_AMD_SPECIALS_W64};
static const rs_regclass classes[] = {
    RS_AMD_SCALAR_CLASSES(RS_AMD_S32_W64, RS_AMD_S64_W64),
    RS_AMD_VGPR_CLASSES(RS_AMD_S32_W64, RS_AMD_S64_W64),
    RS_AMD_AGPR_CLASSES,
    RS_AMD_TUPLES(RS_AMD_VR), RS_AMD_TUPLES(RS_AMD_AR), RS_AMD_TUPLES(RS_AMD_VR2), RS_AMD_TUPLES(RS_AMD_AR2),
};
static const uint8_t unit_flags[RS_AMD_NUNITS] = {
    RS_AMD_UNIT_FLAGS(RS_UNIT_TRACKED, RS_AMD_NVGPR + RS_AMD_NAGPR)};
static const rs_amd_occ occ = {.max_waves = 8, .vgpr_total = 512, .vgpr_granule = 8, .unified = true,
                               .sgpr_limits = true,
                               .wave = 64, .lds_bytes = 65536, .agprs = RS_AMD_AGPR_SPLIT};
RS_AMD_HOOKS(, occ)

const rs_target rs_target_gfx90a =
    RS_AMD_TARGET("gfx90a", files, specials, classes, unit_flags, RS_AMD_NUNITS, occupancy, budget);
