/* emit.h - from a passing answer to a kernel: substitute the answer's physical registers into the
 * instance's MIR (what LLVM's VirtRegRewriter does), then let llc finish from after register
 * allocation (frame lowering, spill code, scheduling, waitcnts) to assembly or an HSA code object.
 * LLVM's MachineVerifier runs on every emitted kernel: an independent check of our verifier.
 * NVIDIA SASS (sass.c): no assembler exists, so the answer is written into the instance's cubin
 * by cubin/lower.c and read back by nvdisasm (docs/lower.md). */
#ifndef RS_EMIT_H
#define RS_EMIT_H
#include "analysis/problem.h"
#include "corpus/instance.h"
#include "ir/ir.h"
#include "cubin/lower.h"
#include "llvm/llc.h"
#include "storage/run.h"
#include <stdio.h>

/* ---- rewrite.c: the register substitution ---- */
typedef struct {
  uint32_t operands;      /* virtual register operands rewritten */
  uint32_t copies_removed;/* identity copies deleted (as VirtRegRewriter does) */
  uint32_t copies_killed; /* identity copies turned into KILL (undef source or extra operands) */
  uint32_t liveins_added; /* block live-in entries added for virtual registers */
  uint32_t slots_moved;   /* spill slots renumbered as StackSlotColoring would (slots.c) */
  uint32_t vcc_respelled; /* wave32: implicit $vcc_lo operands spelled $vcc for the MIR parser */
  uint32_t ir_declared;   /* IR functions without a machine function made declarations (irstubs.c) */
  unsigned named[RS_MAX_FILES]; /* per file: highest register + 1 that an instruction names after
                                 * the rewrite (LLVM counts these; a tuple lane no instruction
                                 * touches is not counted, the verifier counts it) */
} rs_rewrite_stats;

/* Rewrite function f of its module's text: every virtual register operand becomes its register
 * in assign (per function vreg; lanes 0 = none, an error if the vreg is used), sub-register
 * operands the matching physical sub-register, block live-ins gain the live virtual registers,
 * the registers table is emptied. Returns the whole module text (malloc'd) or NULL with e set. */
char *rs_emit_rewrite(const rs_func *f, const rs_preg *assign, rs_rewrite_stats *st, rs_err *e);

/* ---- wave32.c: wave32 MIR as llc's MIR parser reads it back (see wave32.c) ---- */
/* A copy of mir (malloc'd) with the implicit `$vcc_lo` of the VCC-implicit opcodes (S_CBRANCH_VCCNZ,
 * S_CBRANCH_VCCZ) spelled `$vcc`, as their descriptors say; LLVM's own wave32 post-RA MIR needs
 * it too. *fixed = operands changed (may be NULL). Wave64 MIR has none: it comes back unchanged. */
char *rs_emit_wave32_fixup(const char *mir, uint32_t *fixed);

/* ---- irstubs.c: IR functions the MIR has no machine function for, as declarations ---- */
/* A copy of mir (malloc'd) whose IR document declares, instead of defining, every function
 * without a machine function (an imported module's inlined helpers: llc -start-after crashes on
 * their empty machine functions). *declared = functions changed (may be NULL). */
char *rs_emit_declare_unlowered(const char *mir, uint32_t *declared);

/* MIR spelling of a physical register without '$' ("vgpr4_vgpr5", "sgpr7", "vcc", "vgpr3_hi16"). */
char *rs_emit_mir_name(const rs_target *t, rs_preg r, char *buf, size_t n);
/* LLVM's register enum order for live-in lists (single registers first, names numeric-aware). */
int rs_emit_livein_cmp(const char *a, size_t na, const char *b, size_t nb);

/* ---- slots.c: spill slots numbered as llc's StackSlotColoring would (see slots.c) ---- */
/* mir: rewritten MIR; bfi: llc's -print-machine-bfi output for it. Returns new text (malloc'd);
 * *moved = slots renumbered. */
char *rs_emit_color_slots(const char *mir, const char *bfi, uint32_t *moved, rs_err *e);

/* ---- llc.c: running llc / ld.lld ---- */
enum rs_emit_kind { RS_EMIT_MIR, RS_EMIT_ASM, RS_EMIT_HSACO };

/* rs_llc_opts, rs_llc_opts_default, rs_emit_run, rs_llc_rounds: llvm/llc.h */

/* llc from rewritten MIR to out_path (asm, or obj then ld.lld -shared for HSACO). When llc judges
 * the kernel bad (MachineVerifier findings, or llc dying on it) returns 1 with llc's stderr in
 * *diag (malloc'd); -1 with e when llc cannot read the input or a tool is missing; 0 on success. */
int rs_emit_llc(const char *mir_path, const char *out_path, enum rs_emit_kind kind, const rs_llc_opts *o,
                char **diag, rs_err *e);

/* llc's block frequencies for the MIR (-print-machine-bfi up to stack-slot-coloring) into *bfi.
 * 1 (*bfi = llc's stderr) when llc refuses the kernel while reading it (MachineVerifier). */
int rs_emit_bfi(const char *mir_path, const rs_llc_opts *o, char **bfi, rs_err *e);

/* The informative lines of llc's stderr (MachineVerifier findings, fatal errors) into buf. */
char *rs_emit_llc_summary(const char *diag, char *buf, size_t n);

/* ---- counts.c: the register counts of an emitted kernel (AMDGPU asm) ---- */
typedef struct {
  int vgpr, agpr, total_vgpr, sgpr, occupancy, scratch; /* -1 when absent */
  int vgpr_count, sgpr_count;                           /* HSA metadata .vgpr_count/.sgpr_count */
  int agpr_named, agpr_spill; /* highest AGPR + 1 named by the kernel's instructions, and by the
                               * lines of LLVM's post-RA VGPR spills into free AGPRs ("Reload Reuse") */
} rs_kernel_counts;
int rs_emit_counts(const char *asm_text, rs_kernel_counts *c, rs_err *e);

/* ---- emit.c: one answer to one kernel ---- */
typedef struct {
  rs_llc_opts llc;
  bool force;           /* emit a rejected answer anyway (marked in the output) */
  const char *keep_dir; /* where to write work files (default: a fresh mkdtemp directory) */
} rs_emit_opts;

typedef struct {
  rs_check_result verdict;  /* our verifier's result for the answer */
  rs_rewrite_stats rw;
  bool refused;             /* rejected by our verifier and not forced */
  bool llc_rejected;        /* llc (MachineVerifier) refused the rewritten MIR */
  char *llc_diag;           /* llc's stderr when it refused (malloc'd) */
  rs_kernel_counts counts;  /* of the emitted kernel (asm) */
  bool counts_checked;      /* counts compared with the verifier's */
  int lds_occupancy;        /* LLVM's occupancy bound from LDS use and work-group size; the
                             * kernel's occupancy must be min(verifier's, this) */
  char counts_diff[256];    /* "" when equal */
  char counts_note[256];    /* why a count is below the verifier's though equal in effect, or "" */
  double rewrite_s, llc_s;
} rs_emit_result;

/* Verify `answer` against the loaded instance, rewrite, and (unless out kind is MIR only) run
 * llc. Writes out_path. Returns 0 when something was emitted, 1 when refused or llc rejected
 * (res says which), -1 with e on bad input or infrastructure errors. */
int rs_emit_answer(const rs_loaded *l, const char *answer, size_t len, const char *out_path, enum rs_emit_kind kind,
                   const rs_emit_opts *o, rs_emit_result *res, rs_err *e);
void rs_emit_result_free(rs_emit_result *r);
/* Kind from the output file name (.s, .hsaco/.co, .mir); -1 if none. */
int rs_emit_kind_of(const char *path);
/* The llc -O level of a corpus variant ("opt3_..." -> 3; default 2); params: its -D macros, so a
 * kernel macro named OPT is not taken for the level. */
int rs_emit_variant_opt(const char *variant, const char *params);

/* ---- sass.c: a passing answer on a form-sass instance to a cubin ---- */
typedef struct {
  rs_check_result verdict;  /* our verifier's result */
  bool refused;             /* verifier rejected it, a hidden operand's value moved, or the written
                             * listing joins values (why) */
  bool encode_refused;      /* a changed operand has no trusted field, or the registers race an
                             * in-flight instruction under ptxas's scoreboards (hazards) (why) */
  uint32_t hazards;
  bool crosschecked;        /* nvdisasm read the written cubin back (x) */
  rs_lower_stats low;
  rs_crosscheck_stats x;
  uint32_t regs[8];         /* register count written, per cubin function (first 8) */
  char why[512];
  double lower_s, xcheck_s;
} rs_emit_sass_result;

/* Verify, write the listing back, re-lift, lower into a copy of `cubin` (the instance's), write
 * out_path, and (crosscheck) have nvdisasm (path or NULL: found as `corpus disasm` does) read
 * it back; a cubin it disagrees with is removed. 0 written (and crosschecked when asked), 1
 * refused or a crosscheck mismatch (res says which), -1 with e on bad input (no cubin, a cubin
 * that does not parse, a .nv.info we cannot read) or when nvdisasm cannot run. */
int rs_emit_sass(const rs_loaded *l, const char *answer, size_t len, const uint8_t *cubin, size_t cubin_len,
                 const char *out_path, const char *nvdisasm, bool crosscheck, rs_emit_sass_result *res, rs_err *e);

/* ---- check.c: --emit-check over a finished run ---- */
enum { RS_EMIT_CHECK_NV_ARCHS = 6 }; /* sm_75 80 86 87 89 90 */
typedef struct {
  uint32_t checked, llc_ok, llc_rejected, counts_mismatch, errors;
  /* NVIDIA: lowered + crosschecked ok, refused for an untrusted field, a passing answer that joins
   * values once written back (verifier gap), nvdisasm disagreeing (encoder bug); per arch the same
   * four and errors */
  uint32_t nv_checked, nv_ok, nv_encode_refused, nv_gap, nv_mismatch;
  uint32_t nv_arch[RS_EMIT_CHECK_NV_ARCHS][5];
  char last_outcome[32];
} rs_emit_check_stats;

/* An emitter: how a target's passing answers become kernels for --emit-check, chosen by the
 * target's emitter name (target.h): "llc" (AMD: MIR rewrite + llc's MachineVerifier, emit.c) or
 * "cubin" (NVIDIA: lowered into the instance's cubin, read back by nvdisasm, sass.c). */
typedef struct {
  const char *work, *dir, *out; /* work files, the run's emit-check/ (kept rejects), llc's output */
  FILE *tsv;                    /* RUN_DIR/emit-check.tsv: each answer writes its row */
  uint32_t rejects;             /* MIR files kept so far */
} rs_emit_check_ctx;
typedef struct {
  const char *name;
  /* Emit one passing answer of the run, judge it, count it in st and write its row. */
  void (*check_one)(rs_emit_check_ctx *cx, const rs_loaded *l, const rs_attempt *a, const char *model,
                    rs_emit_check_stats *st);
} rs_emitter;
const rs_emitter *rs_emitter_by_name(const char *name); /* NULL if unknown */
const rs_emitter *rs_emitter_for(const rs_target *t);

/* For each model, emit and LLVM-verify up to n passing answers of the run (AMD instances, spread
 * over instances; NVIDIA form-sass instances lowered and crosschecked by nvdisasm); writes RUN_DIR/emit-check.tsv (instance, model, attempt, outcome, counts,
 * message) and fills per-model stats (array of nmodels). A passing answer LLVM rejects is a
 * verifier bug: it is listed with both messages. */
int rs_emit_check_run(const char *run_path, const char *corpus_path, const char *const *models, uint32_t nmodels,
                      uint32_t n, const char *out_dir, rs_emit_check_stats *stats, rs_err *e);
/* The same, printing one line per model to report: the one call `sweep` makes after its merge.
 * Returns 0, 1 when LLVM rejected some passing answer, -1 with e on errors. */
int rs_emit_check_sweep(const char *run_path, const char *corpus_path, const char *const *models, uint32_t nmodels,
                        uint32_t n, const char *out_dir, FILE *report, rs_err *e);

#endif
