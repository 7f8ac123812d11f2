/* gfx942.c - AMD CDNA3 as shipped (MI300X, MI300A, MI325X) as llc-22 models it: data only
 * (target/amdgpu.h). gfx940's register file (512 entries per lane, AGPRs after accum_offset =
 * alignTo(#VGPR, 4), granule 8, 8 waves per SIMD, _align2 vector tuples, s0..s101); llc-22
 * splits the file by "amdgpu-agpr-alloc" (its attributor writes "0" for kernels that need no
 * AGPR: then all 512 may be VGPRs up to v255). 64 KiB of LDS per work-group. */
#include "target/amdgpu.h"

static const rs_regfile files[] = {RS_AMD_FILE_SGPR(102), RS_AMD_FILE_SPEC, RS_AMD_FILE_VGPR(8),
                                   RS_AMD_FILE_AGPR(8)};
static const rs_special specials[] = {RS_AMD_SPECIALS_W64};
static const rs_regclass classes[] = {RS_AMD_CDNA3_CLASSES, RS_AMD_SCALAR_CLASSES_22(RS_AMD_S64_W64)};
static const uint8_t unit_flags[RS_AMD_NUNITS] = {
    RS_AMD_UNIT_FLAGS(RS_UNIT_TRACKED, RS_AMD_NVGPR + RS_AMD_NAGPR)};
static const rs_amd_occ occ = {.max_waves = 8, .vgpr_total = 512, .vgpr_granule = 8, .unified = true,
                               .sgpr_limits = true, .wave = 64, .agprs = RS_AMD_AGPR_SPLIT,
                               .agpr_alloc_attr = true, .lds_bytes = 65536, .barriers = 16,
                               .lds_per_simd = true};
RS_AMD_HOOKS(, occ)

const rs_target rs_target_gfx942 =
    RS_AMD_TARGET_22("gfx942", files, specials, classes, unit_flags, RS_AMD_NUNITS, occupancy, budget);
