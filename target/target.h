/* target.h - register files of the targets (AMD gfx908, gfx90a, gfx940, gfx942, gfx950, gfx1030, gfx1100, gfx1200, gfx1201; sm_75, sm_80, sm_86, sm_89, sm_90).
 *
 * Every target numbers its physical 32-bit registers ("units") 0..nunits-1; a register file is a
 * contiguous range of units.  A physical register, possibly a tuple or a 16-bit half, is a first
 * unit plus a lane mask relative to it: bit 2k is the low 16 bits of unit+k, bit 2k+1 the high 16
 * bits (LLVM's AMDGPU LaneBitmask layout, so MIR lane masks need no translation).
 * Back ends are data plus a few hooks, one file each, found by name (IOR style). */
#ifndef RS_TARGET_H
#define RS_TARGET_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t rs_lanes;

typedef struct {
  uint32_t unit;  /* first 32-bit register */
  rs_lanes lanes; /* lanes used, relative to unit; 0 = not a register */
} rs_preg;

enum rs_vendor { RS_AMD, RS_NV };

/* Register files a target has at most (sizes per-file arrays in ir/, analysis/ and above). */
#define RS_MAX_FILES 8

typedef struct {
  const char *name;       /* "sgpr", "vgpr", "agpr", "special", "r", "p" */
  const char *asm_prefix; /* "s", "v", "a", "R", "P"; NULL for special */
  uint32_t first, count;  /* units [first, first+count) */
  uint32_t budget;        /* registers an allocation may use from the start of the file */
  uint32_t granule;       /* allocation granule for occupancy */
  bool pressure;          /* counted in pressure / registers-used reports */
} rs_regfile;

/* A named special register an allocatable class may contain (e.g. VCC in sreg_64). */
typedef struct {
  const char *name; /* asm spelling, "vcc" */
  rs_preg reg;
} rs_special;

typedef struct {
  char name[48];     /* as spelled in MIR or PTX: "vreg_128_align2", "b64" (llc-16 prints 33-char names) */
  uint16_t width;    /* 32-bit units (a 16-bit class has width 1 and half != 0) */
  uint8_t align;     /* base alignment in units, counted from the start of the file */
  uint8_t half;      /* 0 full registers; 1 lo16 only; 2 hi16 only */
  uint32_t files;    /* bit f: may live in file f */
  uint32_t specials; /* bit s: may be special register s (only for width-matching specials) */
} rs_regclass;

/* A function's launch bounds as LLVM reads them from its IR attributes (AMD; 0 = absent):
 * "amdgpu-flat-work-group-size"="min,max" and "amdgpu-waves-per-eu"="min[,max]". uses_agpr:
 * the function names an AGPR (an AGPR-only class or a physical AGPR), LLVM's usesAGPRs. */
typedef struct {
  uint32_t wg_min, wg_max;
  uint32_t wpe_min, wpe_max;
  bool uses_agpr;
  /* "amdgpu-agpr-alloc"="min[,max]" (LLVM 20+; the attributor writes "0" when a kernel needs no
   * AGPRs): how llc-22 splits the unified file of gfx942/gfx950 */
  bool agpr_alloc;
  uint32_t agpr_min, agpr_max; /* agpr_max 0 when absent */
} rs_launch;

typedef struct rs_target rs_target;
struct rs_target {
  const char *name;
  enum rs_vendor vendor;
  const rs_regfile *files;
  uint32_t nfiles;
  uint32_t nunits;
  const rs_special *specials;
  uint32_t nspecials;
  const rs_regclass *classes;
  uint32_t nclasses;
  const uint8_t *unit_flags; /* nunits entries of RS_UNIT_* */
  /* Parse a register spelled in MIR (without '$') or assembly ("v[4:5]", "R12"); 0 on success. */
  int (*parse_preg)(const rs_target *t, const char *s, size_t n, rs_preg *out);
  /* Assembly spelling of a register; returns buf. */
  char *(*format_preg)(const rs_target *t, rs_preg r, char *buf, size_t n);
  /* Waves (AMD, per SIMD) or warps (NVIDIA, per SM) allowed by the registers used per file. */
  unsigned (*occupancy)(const rs_target *t, const unsigned *used_per_file);
  /* Per file, the registers a function with these launch bounds may use from the start of the
   * file (LLVM's getReservedRegs); budget[] starts as the files' budgets. *waves gets the
   * minimum waves per SIMD they imply. NULL: the file budgets hold (NVIDIA). */
  void (*fn_budget)(const rs_target *t, const rs_launch *l, uint32_t *budget, unsigned *waves);
  /* Waves per SIMD that LDS use and the work-group size allow, whatever the registers (LLVM's
   * getOccupancyWithWorkGroupSizes); NULL where it does not apply (NVIDIA). */
  unsigned (*lds_occupancy)(const rs_target *t, unsigned lds_bytes, unsigned wg_size);
  /* the LLVM major version whose MIR the target reads where it matters (22: llc-22 reserves
   * sgprForEXECCopy, llc-16 does not, measured with the MachineVerifier); 0 otherwise */
  uint8_t llvm;
  /* Facts callers used to branch on the vendor for: */
  uint8_t reads;              /* RS_READS_*: the source forms read for this target */
  const char *emitter;        /* emit/'s rs_emitter for it: "llc" (AMD) or "cubin" (NVIDIA) */
  const char *occupancy_unit; /* what occupancy counts: "waves/SIMD" (AMD) or "warps/SM" (NVIDIA) */
  const char *any_reg;        /* a register every instance may name ("v0", "R0") */
  const char *not_a_reg;      /* register-like text naming no register ("vx999", "Rx999") */
  /* Lanes of a wave may run an if/else's sides one after the other (AMDGPU's EXEC mask): values
   * dead in the THEN side of a divergent branch are free there (analysis/simt.c). */
  bool simt_exclusions;
};

/* rs_target.reads: MIR (llc's, AMD), PTX and SASS listings (NVIDIA) */
enum { RS_READS_MIR = 1, RS_READS_PTX = 2, RS_READS_SASS = 4 };

enum {
  RS_UNIT_RESERVED = 1, /* never allocatable, not tracked by liveness (exec, mode, RZ ...) */
  RS_UNIT_TRACKED = 2,  /* liveness tracks it (allocatable units, vcc, scc, m0 ...) */
};

const rs_target *rs_target_by_name(const char *name);
extern const rs_target rs_target_gfx90a, rs_target_sm89, rs_target_sm90;
/* More AMD architectures (target/amdgpu.h: shared model; one data file each). The w64 variants
 * are gfx10+/gfx11 compiled with +wavefrontsize64 (wave32 is the default there). */
extern const rs_target rs_target_gfx908, rs_target_gfx940, rs_target_gfx1030, rs_target_gfx1030_w64,
    rs_target_gfx1100, rs_target_gfx1100_w64;
/* llc-22: MI300X/MI325X, MI350X/MI355X, RDNA4 */
extern const rs_target rs_target_gfx942, rs_target_gfx950, rs_target_gfx1200, rs_target_gfx1200_w64, rs_target_gfx1201,
    rs_target_gfx1201_w64;
extern const rs_target rs_target_sm75, rs_target_sm80, rs_target_sm86; /* SASS only (PTX fixtures are sm_89/sm_90) */
/* Every target, in a fixed order; *n gets the count. */
const rs_target *const *rs_target_all(size_t *n);
/* Comma list of the other targets of t's vendor that know a class named name[0..n) ("gfx90a,
 * gfx940"), into buf; returns 0 when none does. For errors naming a class of another arch. */
size_t rs_target_class_owners(const rs_target *t, const char *name, size_t n, char *buf, size_t cap);

/* Class lookup by name; -1 if unknown. */
int rs_target_class(const rs_target *t, const char *name, size_t n);
/* File index of a unit, -1 if none. */
int rs_target_file_of(const rs_target *t, uint32_t unit);
/* Number of 32-bit units spanned by a lane mask. */
unsigned rs_lanes_units(rs_lanes l);
/* First unit a lane mask touches (0 for an empty mask): the offset of a sub-register. */
static inline int rs_lanes_first(rs_lanes l) { return l ? __builtin_ctzll(l) / 2 : 0; }
/* Lane mask for n full units. */
static inline rs_lanes rs_lanes_full(unsigned n) { return n >= 32 ? ~(rs_lanes)0 : (((rs_lanes)1 << (2 * n)) - 1); }

/* Do lanes la at unit ua and lanes lb at unit ub touch the same physical lane? */
static inline bool rs_lanes_overlap(uint32_t ua, rs_lanes la, uint32_t ub, rs_lanes lb) {
  if (ua > ub) {
    uint32_t tu = ua; ua = ub; ub = tu;
    rs_lanes tl = la; la = lb; lb = tl;
  }
  uint32_t d = 2 * (ub - ua); /* b starts d lanes above a */
  return d < 64 && ((la >> d) & lb) != 0;
}

/* Why a register is not a member of a class (0 = member). */
enum rs_member {
  RS_MEMBER_OK = 0,
  RS_MEMBER_WIDTH,    /* wrong number of units / halves */
  RS_MEMBER_FILE,     /* wrong register file for the class */
  RS_MEMBER_ALIGN,    /* misaligned tuple */
  RS_MEMBER_RANGE,    /* runs past the end of its file */
  RS_MEMBER_RESERVED, /* touches a reserved unit */
  RS_MEMBER_BUDGET,   /* beyond the file's budget */
  RS_MEMBER_FNBUDGET, /* beyond the function's budget (launch bounds; analysis/problem.h) */
};
enum rs_member rs_target_member(const rs_target *t, int cls, rs_preg r);
const char *rs_member_str(enum rs_member m);

#endif
