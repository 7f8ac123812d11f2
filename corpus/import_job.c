/* import_job.c - the shell job that compiles one import unit (corpus/import.h), and the OpenCL
 * prelude its -nogpulib compiles include. */
#include "corpus/import.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* OpenCL without rocm-device-libs (-nogpulib, as the grid compiles): the work-item functions and
 * barriers real kernels call and the common float/int math, defined over the amdgcn and LLVM
 * builtins (`-include`d); any other library call is left a call, which the MIR reader refuses by
 * name. */
const char rs_import_prelude[] =
    "/* regsweep corpus import: OpenCL work-item functions and barriers for -nogpulib compiles */\n"
    "#define RS_OVL __attribute__((overloadable, always_inline))\n"
    "RS_OVL size_t get_local_id(uint d) { return d == 0 ? __builtin_amdgcn_workitem_id_x() : d == 1 ? __builtin_amdgcn_workitem_id_y() : d == 2 ? __builtin_amdgcn_workitem_id_z() : 0; }\n"
    "RS_OVL size_t get_group_id(uint d) { return d == 0 ? __builtin_amdgcn_workgroup_id_x() : d == 1 ? __builtin_amdgcn_workgroup_id_y() : d == 2 ? __builtin_amdgcn_workgroup_id_z() : 0; }\n"
    "RS_OVL size_t get_local_size(uint d) {\n"
    "  __constant ushort *p = (__constant ushort *)__builtin_amdgcn_dispatch_ptr();\n"
    "  return d < 3 ? p[2 + d] : 1;\n"
    "}\n"
    "RS_OVL size_t get_num_groups(uint d) {\n"
    "  __constant uint *p = (__constant uint *)__builtin_amdgcn_dispatch_ptr();\n"
    "  return d < 3 ? (p[3 + d] + get_local_size(d) - 1) / get_local_size(d) : 1;\n"
    "}\n"
    "RS_OVL size_t get_global_size(uint d) { __constant uint *p = (__constant uint *)__builtin_amdgcn_dispatch_ptr(); return d < 3 ? p[3 + d] : 1; }\n"
    "RS_OVL size_t get_global_id(uint d) { return get_group_id(d) * get_local_size(d) + get_local_id(d); }\n"
    "RS_OVL uint get_work_dim(void) { __constant ushort *p = (__constant ushort *)__builtin_amdgcn_dispatch_ptr(); return p[0] & 3; }\n"
    "RS_OVL void barrier(cl_mem_fence_flags f) {\n"
    "  __builtin_amdgcn_fence(__ATOMIC_RELEASE, \"workgroup\");\n"
    "  __builtin_amdgcn_s_barrier();\n"
    "  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, \"workgroup\");\n"
    "}\n"
    "RS_OVL void work_group_barrier(cl_mem_fence_flags f) { barrier(f); }\n"
    "RS_OVL float fmin(float a, float b) { return __builtin_fminf(a, b); }\n"
    "RS_OVL float fmax(float a, float b) { return __builtin_fmaxf(a, b); }\n"
    "RS_OVL float fabs(float a) { return __builtin_fabsf(a); }\n"
    "RS_OVL float sqrt(float a) { return __builtin_sqrtf(a); }\n"
    "RS_OVL float rsqrt(float a) { return 1.0f / __builtin_sqrtf(a); }\n"
    "RS_OVL float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }\n"
    "RS_OVL float mad(float a, float b, float c) { return __builtin_fmaf(a, b, c); }\n"
    "RS_OVL float exp2(float a) { return __builtin_exp2f(a); }\n"
    "RS_OVL float exp(float a) { return __builtin_expf(a); }\n"
    "RS_OVL float log2(float a) { return __builtin_log2f(a); }\n"
    "RS_OVL float floor(float a) { return __builtin_floorf(a); }\n"
    "RS_OVL float ceil(float a) { return __builtin_ceilf(a); }\n"
    "RS_OVL int min(int a, int b) { return a < b ? a : b; }\n"
    "RS_OVL int max(int a, int b) { return a > b ? a : b; }\n"
    "RS_OVL uint min(uint a, uint b) { return a < b ? a : b; }\n"
    "RS_OVL uint max(uint a, uint b) { return a > b ? a : b; }\n";


static int hexdigit(char c) { return c >= 'a' ? c - 'a' + 10 : c - '0'; }

/* ROCm's ISA version of gfxNNN: major digits, then minor and stepping (hex): 942 -> 9402 */
static int isa_version(const char *t) {
  const char *g = t + 3;
  size_t gl = strlen(g);
  char mj[8];
  snprintf(mj, sizeof mj, "%.*s", (int)(gl - 2), g);
  return atoi(mj) * 1000 + hexdigit(g[gl - 2]) * 100 + hexdigit(g[gl - 1]);
}

static int hip_wave(const char *t, const rs_imp_unit *u) {
  return isa_version(t) >= 10000 && !strstr(u->flags, "-mwavefrontsize64") ? 32 : 64;
}

/* HIP for an LLVM-22 architecture. clang-16 does not know gfx942/gfx950/gfx1200/gfx1201, so clang-22
 * compiles it for the real target; Debian's HIP 5.2 headers and device libraries need four
 * things clang-22 no longer gives them, each supplied exactly:
 *  - __AMDGCN_WAVEFRONT_SIZE (warpSize; clang-22 dropped the macro): the target's wave size, 64
 *    on gfx9, 32 on gfx12 (64 with -mwavefrontsize64 in the flags);
 *  - oclc_isa_version_NNN.bc (5.2 ships none for them): the 940 file with the target's ISA
 *    version (major*1000 + minor*100 + stepping: 9402, 9500, 12000, 12001, as ROCm 6 defines
 *    it), in a per-job folder beside links to every 5.2 library;
 *  - code object v5 (-mcode-object-version=5): clang-22's default v6 needs oclc_abi_version_600,
 *    which 5.2 lacks;
 *  - hip.bc and oclc_daz_opt_{off,on}.bc, which clang-16 linked and clang-22 no longer does (ROCm 6
 *    moved them into the headers): the 5.2 headers call __atomic_work_item_fence (__syncthreads)
 *    and 5.2's ocml reads __oclc_daz_opt; daz on with -fgpu-flush-denormals-to-zero, as clang-16;
 *  - <cstdlib> first (-include), as clang's HIP wrapper (which -nogpuinc leaves out) includes it
 *    before the unit: a unit that includes <hip/hip_fp16.h> before <hip/hip_runtime.h> (MIOpen's
 *    kernels) reaches cuda_wrappers/<new>, whose device operator new calls ::malloc, before
 *    anything declared it (`no member named 'malloc' in the global namespace`).
 * A library function that does not suit the target (5.2 predates gfx12) stays a call (the MIR
 * reader refuses it) or llc-22 deletes it (refused below): named, never guessed. */
/* The per-job device-library folder of an LLVM-22 architecture: links to every 5.2 library, and
 * oclc_isa_version_NNN.bc made from the 940 one with the target's ISA version. */
static void devlibs22_dir(rs_sbuf *b, const char *qdl, const char *t) {
  const char *g = t + 3;
  rs_sbuf_printf(b, "elif ! { { mkdir -p \"$t/dl\" && ln -sf %s/*.bc \"$t/dl/\" && rm -f \"$t/dl/oclc_isa_version_%s.bc\" && "
         "llvm-dis-22 %s/oclc_isa_version_940.bc -o - | sed 's/constant i32 9400,/constant i32 %d,/' | "
         "llvm-as-22 -o \"$t/dl/oclc_isa_version_%s.bc\" && llvm-dis-22 \"$t/dl/oclc_isa_version_%s.bc\" -o - | "
         "grep -q '@__oclc_ISA_version = .* constant i32 %d,'; } 2>\"$t/err\" || { echo 'error: oclc_isa_version_%s.bc "
         "(ISA version %d) not made from the 940 one' >> \"$t/err\"; false; }; }; then tfail \"$f\" devlibs \"$t/err\"\n",
      qdl, g, qdl, isa_version(t), g, g, isa_version(t), g, isa_version(t));
}

/* anything still undefined (a function or global no library defined) is named, not left to run as
 * a call or a load of nothing */
static void devlibs22_undefined(rs_sbuf *b) {
  rs_sbuf_printf(b, "elif llvm-dis-22 \"$t/k.bc\" -o - | grep -E '^declare |= external ' | grep -v '@llvm\\.' > \"$t/ext\" && "
         "{ printf 'error: undefined after linking rocm-device-libs 5.2: '; grep -oE '@[^ (]+' \"$t/ext\" | tr '\\n' ' '; } "
         "> \"$t/err\"; then tfail \"$f\" clang-22 \"$t/err\"\n");
}

static void hip_devlibs22(rs_sbuf *b, const char *qdl, const char *qs, const char *t, const rs_imp_unit *u) {
  int wave = hip_wave(t, u);
  devlibs22_dir(b, qdl, t);
  bool daz = strstr(u->flags, "-fgpu-flush-denormals-to-zero") || strstr(u->flags, "-fcuda-flush-denormals-to-zero");
  rs_sbuf_printf(b, "elif ! clang-22 -x hip --cuda-device-only --offload-arch=%s -mcode-object-version=5 -D__AMDGCN_WAVEFRONT_SIZE=%d "
         "-O%d -emit-llvm -c -nogpuinc -include cstdlib -I/usr/include -I\"$(clang-22 -print-resource-dir)\" --rocm-device-lib-path=\"$t/dl\" "
         "-Xclang -mlink-builtin-bitcode -Xclang \"$t/dl/hip.bc\" -Xclang -mlink-builtin-bitcode -Xclang "
         "\"$t/dl/oclc_daz_opt_%s.bc\" %s %s -o \"$t/k.bc\" 2>\"$t/err\"; then tfail \"$f\" clang-22 \"$t/err\"\n",
      t, wave, u->opt, daz ? "on" : "off", u->flags, qs);
  devlibs22_undefined(b);
}

/* OpenCL for an LLVM-22 architecture with the 5.2 OpenCL library (opencl.bc, ocml, ockl: vload,
 * vstore, convert_*, math, work-item functions), as clang-16 links it on gfx940. clang-22 mangles
 * a generic-address-space pointer without a qualifier (`vload4(size_t, const ushort *)`:
 * `_Z6vload4mPKt`); clang-16, which built the 5.2 library, mangles it as address space 0
 * (`_Z6vload4mPU3AS0Kt`), so linking in one step leaves the call. Three steps: clang-22 without
 * its optimizations and libraries (the kernel's IR, its calls declared); each declared function
 * renamed to the library function whose demangled name is the same but for " AS0" (llvm-cxxfilt:
 * `vload4(unsigned long, unsigned short const AS0*)`), no other name touched; clang-22 on that IR
 * with the libraries, at the unit's -O, internalized as the grid's, and oclc_daz_opt_{off,on}.bc,
 * which clang-16 links for OpenCL and clang-22 no longer does (5.2's ocml rsqrt, sqrt, ... read
 * __oclc_daz_opt): on only with -cl-denorms-are-zero, clang-16's choice on targets with fast f32
 * FMA and denormals (all of these) and clang-22's own f32 denormal mode for them. */
static void ocl_devlibs22(rs_sbuf *b, const char *qdl, const char *qs, const char *t, const rs_imp_unit *u) {
  bool daz = strstr(u->flags, "-cl-denorms-are-zero") != NULL;
  rs_sbuf_printf(b, "if false; then :\n");
  devlibs22_dir(b, qdl, t);
  rs_sbuf_printf(b, "elif ! clang-22 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=%s -mcode-object-version=5 -nogpulib -O%d "
         "-Xclang -disable-llvm-passes -emit-llvm -S %s %s -o \"$t/k0.ll\" 2>\"$t/err\"; then tfail \"$f\" clang-22 \"$t/err\"\n",
      t, u->opt, u->flags, qs);
  rs_sbuf_printf(b, "elif ! { llvm-dis-22 \"$t/dl/opencl.bc\" -o - | grep -oE '^define [^@]*@_Z[^(]*U3AS0[^(]*' | sed 's/.*@//' > \"$t/as0\" && "
         "llvm-cxxfilt-22 < \"$t/as0\" | sed 's/ AS0//g' | paste - \"$t/as0\" > \"$t/as0map\" && "
         "{ grep -oE '^declare [^@]*@_Z[^(]*' \"$t/k0.ll\" | sed 's/.*@//' > \"$t/decl\"; true; } && "
         "llvm-cxxfilt-22 < \"$t/decl\" | paste - \"$t/decl\" > \"$t/declmap\" && "
         "awk -F'\\t' 'NR==FNR{m[$1]=$2;next} ($1 in m){printf \"s/@%%s(/@%%s(/g\\n\",$2,m[$1]}' \"$t/as0map\" \"$t/declmap\" "
         "> \"$t/ren.sed\" && sed -f \"$t/ren.sed\" \"$t/k0.ll\" > \"$t/k1.ll\"; } 2>\"$t/err\"; then tfail \"$f\" as0-names \"$t/err\"\n");
  rs_sbuf_printf(b, "elif ! clang-22 -x ir \"$t/k1.ll\" -target amdgcn-amd-amdhsa -mcpu=%s -mcode-object-version=5 --rocm-device-lib-path=\"$t/dl\" "
         "-O%d -mllvm -amdgpu-internalize-symbols -Wno-unused-command-line-argument -Xclang -mlink-builtin-bitcode -Xclang "
         "\"$t/dl/oclc_daz_opt_%s.bc\" %s -emit-llvm -c -o \"$t/k.bc\" 2>\"$t/err\"; then tfail \"$f\" clang-22 \"$t/err\"\n",
      t, u->opt, daz ? "on" : "off", u->flags);
  devlibs22_undefined(b);
}

int rs_import_llvm(const rs_import_opts *o, const rs_imp_unit *u, const char *t, bool *devlibs) {
  /* HIP, and OpenCL when rocm-device-libs is there (get_global_id, math: its opencl/ocml/ockl
   * bitcode, LLVM 15, which clang-14 cannot read): clang-16, so llc-16, on the LLVM-16 archs.
   * HIP on the LLVM-22 archs: clang-22 (clang-16 does not know them; hip_devlibs22). Without
   * rocm-device-libs OpenCL goes as the grid's (-nogpulib: a library call is left, and named as
   * such); on the LLVM-22 archs it always does (clang-22 + internalize, as the grid). */
  char isa[1300];
  snprintf(isa, sizeof isa, "%s/oclc_isa_version_%s.bc", o->devlibs ? o->devlibs : "", t + 3);
  int av = rs_arch_llvm(t);
  char isa940[1300];
  snprintf(isa940, sizeof isa940, "%s/oclc_isa_version_940.bc", o->devlibs ? o->devlibs : "");
  *devlibs = o->devlibs && ((u->lang == RS_IMP_HIP && av != 22) ||
                            (u->lang == RS_IMP_OPENCL && av == 16 && access(isa, R_OK) == 0) ||
                            (u->lang == RS_IMP_OPENCL && av == 22 && access(isa940, R_OK) == 0));
  return (*devlibs && av != 22) || (u->lang == RS_IMP_HIP && av != 22) ? 16 : av;
}

void rs_import_route(const rs_import_opts *o, const rs_imp_unit *u, const char *t, char *buf, size_t n) {
  bool dl = false;
  int ver = t && rs_imp_lang_amd(u->lang) ? rs_import_llvm(o, u, t, &dl) : 0;
  switch (u->lang) {
  case RS_IMP_OPENCL:
    if (dl && ver == 22) snprintf(buf, n, "via=clang-22+rocm-device-libs+isa%d+cov5+as0names", isa_version(t));
    else snprintf(buf, n, "via=clang-%d+%s", ver, dl ? "rocm-device-libs" : ver >= 22 ? "prelude+internalize" : "prelude");
    break;
  case RS_IMP_HIP:
    if (ver == 22)
      snprintf(buf, n, "via=clang-22+rocm-device-libs+isa%d+cov5+wave%d", isa_version(t), hip_wave(t, u));
    else snprintf(buf, n, "via=clang-16+rocm-device-libs");
    break;
  case RS_IMP_LLVM: snprintf(buf, n, "via=llc-%d", ver); break;
  case RS_IMP_MIR: snprintf(buf, n, "via=mir"); break;
  case RS_IMP_CUDA: snprintf(buf, n, "via=nvcc"); break;
  case RS_IMP_PTX: snprintf(buf, n, "via=ptxas"); break;
  default: snprintf(buf, n, "via=cubin"); break;
  }
}

/* The unit's shell job. Per target it leaves what the grid's compile leaves (AMD: ARCH/{prera,
 * postsplit,final}.mir for the whole module; NVIDIA: T.ptx, T.cubin, T.ptxas.txt, T.sass), or
 * ARCH/FAILED, T.FAILED, T.sass.FAILED with the tool and its first error lines. */
char *rs_import_job(const rs_import_opts *o, const rs_imp_unit *u, const char *dir, const char *cubin_target,
                    const rs_rounds_cache *rounds) {
  rs_sbuf b = {0};
  char qd[1100], qs[1100], t[16];
  rs_shell_quote(qd, sizeof qd, dir);
  rs_shell_quote(qs, sizeof qs, u->source);
  rs_sbuf_printf(&b, "d=%s; t=\"$d.tmp.$$\"; rm -rf \"$t\"; mkdir -p \"$t\" || exit 3\n"
          "tfail() { { echo \"$2\"; grep -m3 -i 'error' \"$3\" || tail -n 3 \"$3\"; } > \"$1\"; }\n",
      qd);
  char pre[1100], qpre[1200];
  snprintf(pre, sizeof pre, "%s/prelude.cl", o->work);
  rs_shell_quote(qpre, sizeof qpre, pre);
  if (u->lang == RS_IMP_CUBIN) {
    snprintf(t, sizeof t, "%s", cubin_target);
    rs_sbuf_printf(&b, "cp %s \"$t/%s.cubin\" 2>\"$t/err\" || tfail \"$t/%s.FAILED\" cp \"$t/err\"\n", qs, t, t);
  }
  for (const char *tg = u->targets; *tg && u->lang != RS_IMP_CUBIN;) {
    const char *c = strchr(tg, ',');
    snprintf(t, sizeof t, "%.*s", (int)(c ? c - tg : (long)strlen(tg)), tg);
    tg = c ? c + 1 : tg + strlen(tg);
    if (rs_imp_lang_amd(u->lang)) {
      bool dl;
      int ver = rs_import_llvm(o, u, t, &dl);
      const rs_rounds *r = u->lang == RS_IMP_MIR ? NULL : rs_rounds_find(rounds, ver, t, u->opt);
      char llc[128];
      snprintf(llc, sizeof llc, "llc-%d -march=amdgcn -mcpu=%s -O%d", ver, t, u->opt);
      rs_sbuf_printf(&b, "mkdir -p \"$t/%s\"; f=\"$t/%s/FAILED\"\n", t, t);
      if (u->lang == RS_IMP_OPENCL && dl && ver == 22) {
        char qdl[1100];
        rs_shell_quote(qdl, sizeof qdl, o->devlibs);
        ocl_devlibs22(&b, qdl, qs, t, u);
      } else if (u->lang == RS_IMP_OPENCL && dl) {
        char qdl[1100];
        rs_shell_quote(qdl, sizeof qdl, o->devlibs);
        rs_sbuf_printf(&b, "if ! clang-16 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=%s --rocm-device-lib-path=%s -O%d "
                "-emit-llvm -c %s %s -o \"$t/k.bc\" 2>\"$t/err\"; then tfail \"$f\" clang-16 \"$t/err\"\n",
            t, qdl, u->opt, u->flags, qs);
      } else if (u->lang == RS_IMP_OPENCL)
        rs_sbuf_printf(&b, "if ! clang-%d -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=%s -nogpulib -O%d %s-emit-llvm -c "
                "-include %s %s %s -o \"$t/k.bc\" 2>\"$t/err\"; then tfail \"$f\" clang-%d \"$t/err\"\n",
            ver, t, u->opt, ver >= 22 ? "-mllvm -amdgpu-internalize-symbols " : "", qpre, u->flags, qs, ver);
      else if (u->lang == RS_IMP_HIP && !o->devlibs)
        rs_sbuf_printf(&b, "if echo 'rocm-device-libs not installed (apt-get install rocm-device-libs libamdhip64-dev)' > \"$t/err\"; "
                "then tfail \"$f\" hip \"$t/err\"\n");
      else if (u->lang == RS_IMP_HIP) {
        char qdl[1100];
        rs_shell_quote(qdl, sizeof qdl, o->devlibs);
        rs_sbuf_printf(&b, "if [ ! -f /usr/include/hip/hip_runtime.h ] && echo '/usr/include/hip/hip_runtime.h missing (apt-get "
                "install libamdhip64-dev)' > \"$t/err\"; then tfail \"$f\" hip \"$t/err\"\n");
        /* --hip-path, not -nogpuinc: clang's HIP runtime wrapper is then included first, so the
         * C++ headers it wraps (cuda_wrappers/<algorithm>, <complex>, <new>) see __host__ and
         * __device__ as library code (rocSPARSE, rocPRIM) needs them */
        if (ver == 22) hip_devlibs22(&b, qdl, qs, t, u);
        else rs_sbuf_printf(&b, "elif ! clang-16 -x hip --cuda-device-only --offload-arch=%s -O%d -emit-llvm -c --hip-path=/usr "
                "--rocm-device-lib-path=%s %s %s -o \"$t/k.bc\" 2>\"$t/err\"; "
                "then tfail \"$f\" clang-16 \"$t/err\"\n",
            t, u->opt, qdl, u->flags, qs);
      } else if (u->lang == RS_IMP_LLVM) {
        /* the IR's own "target-cpu"/"target-features" would override -mcpu: dropped, so that
         * one IR compiles for every architecture asked (an IR of a newer LLVM fails here, named) */
        size_t sl = strlen(u->source);
        if (sl > 3 && !strcmp(u->source + sl - 3, ".ll"))
          rs_sbuf_printf(&b, "if ! cp %s \"$t/k.ll\" 2>\"$t/err\"; then tfail \"$f\" cp \"$t/err\"\n", qs);
        else
          rs_sbuf_printf(&b, "if ! llvm-dis-%d %s -o \"$t/k.ll\" 2>\"$t/err\"; then tfail \"$f\" llvm-dis-%d \"$t/err\"\n", ver, qs,
              ver);
        rs_sbuf_printf(&b, "elif ! sed -E 's/\"target-(cpu|features)\"=\"[^\"]*\"//g' \"$t/k.ll\" > \"$t/k.bc\" 2>\"$t/err\"; then "
                "tfail \"$f\" sed \"$t/err\"\n");
      }
      if (u->lang == RS_IMP_MIR) {
        /* X.prera.mir names the other two stages: X.postsplit.mir, X.final.mir */
        char base[600], qb[1300];
        snprintf(base, sizeof base, "%.*s", (int)(strlen(u->source) - strlen(".prera.mir")), u->source);
        rs_shell_quote(qb, sizeof qb, base);
        rs_sbuf_printf(&b, "b=%s; for s in prera postsplit final; do cp \"$b.$s.mir\" \"$t/%s/$s.mir\" 2>\"$t/err\" || "
                "{ tfail \"$f\" \"missing stage $s\" \"$t/err\"; break; }; done\n",
            qb, t);
        continue;
      }
      /* the stages: the last allocation round's greedy and rewriter (2 rounds at LLVM 14/16, 3 at
       * 22), as probed by rs_import; never assumed */
      if (!r) {
        rs_sbuf_printf(&b, "elif echo 'llc-%d: allocation rounds for %s -O%d not probed' > \"$t/err\"; then tfail \"$f\" llc-%d "
                "\"$t/err\"\nfi\n", ver, t, u->opt, ver);
        continue;
      }
      bool hip22 = (u->lang == RS_IMP_HIP || (u->lang == RS_IMP_OPENCL && dl)) && ver == 22; /* 5.2 libraries on LLVM 22 */
      if (hip22) {
        /* llc-22 deletes a function whose target features the architecture lacks (AMDGPU's
         * remove-incompatible-functions; e.g. 5.2's __ockl_sdot2 needs dot2-insts, which gfx12
         * has not) and the call with it, silently: the kernel would lose its computation. Its
         * remark makes that a named failure. */
        rs_sbuf_printf(&b, "elif ! %s -pass-remarks=amdgpu-remove-incompatible-functions -stop-before=greedy \"$t/k.bc\" -o "
                "\"$t/%s/prera.mir\" 2>\"$t/err\"; then tfail \"$f\" llc-%d \"$t/err\"\n"
                "elif grep -q 'removing function' \"$t/err\" && { printf 'error: llc-22 removed a rocm-device-libs 5.2 "
                "function %s cannot run, and its calls: '; grep -m1 'removing function' \"$t/err\"; } > \"$t/err2\"; then "
                "tfail \"$f\" llc-22 \"$t/err2\"\n",
            llc, t, ver, t);
      } else
        rs_sbuf_printf(&b, "elif ! %s -stop-before=greedy \"$t/k.bc\" -o \"$t/%s/prera.mir\" 2>\"$t/err\"; then tfail \"$f\" llc-%d "
                "\"$t/err\"\n", llc, t, ver);
      rs_sbuf_printf(&b, "elif ! %s -stop-after=%s \"$t/k.bc\" -o \"$t/%s/postsplit.mir\" 2>\"$t/err\"; then tfail \"$f\" llc-%d \"$t/err\"\n"
              "elif ! %s -stop-after=%s \"$t/k.bc\" -o \"$t/%s/final.mir\" 2>\"$t/err\"; then tfail \"$f\" llc-%d \"$t/err\"\n",
          llc, r->greedy_last, t, ver, llc, r->rewriter_last, t, ver);
      /* the SGPR round's own greedy (its split copies, rematerialized constants and spill pseudos
       * as virtual registers, which postsplit names by physical register): a prera row whose
       * values that round split is read over it (corpus/sground.c). Optional: none, no harm */
      if (r->n >= 2 && r->kind[0] == RS_ROUND_SGPR)
        rs_sbuf_printf(&b, "elif ! %s -stop-after=greedy \"$t/k.bc\" -o \"$t/%s/sground.mir\" 2>/dev/null; then "
                "rm -f \"$t/%s/sground.mir\"\n", llc, t, t);
      rs_sbuf_printf(&b, "fi; rm -f \"$t/k.bc\" \"$t/k.ll\"\n");
      if (hip22) rs_sbuf_printf(&b, "rm -rf \"$t/dl\" \"$t/err2\" \"$t/ext\" \"$t/k0.ll\" \"$t/k1.ll\" \"$t/as0\" \"$t/as0map\" \"$t/decl\" \"$t/declmap\" \"$t/ren.sed\"\n");
    } else {
      char qn[1100] = "''", px[1024] = "ptxas";
      if (o->nvcc) {
        rs_shell_quote(qn, sizeof qn, o->nvcc);
        snprintf(px, sizeof px, "%.*s/ptxas", (int)(strrchr(o->nvcc, '/') - o->nvcc), o->nvcc);
      }
      char qpx[1100];
      rs_shell_quote(qpx, sizeof qpx, px);
      rs_sbuf_printf(&b, "f=\"$t/%s.FAILED\"\n", t);
      if (!o->nvcc)
        rs_sbuf_printf(&b, "if echo 'nvcc not found (CUDA toolkit; $NVCC)' > \"$t/err\"; then tfail \"$f\" nvcc \"$t/err\"\n");
      else if (u->lang == RS_IMP_CUDA)
        rs_sbuf_printf(&b, "if ! %s -arch=%s -ptx %s %s -o \"$t/%s.ptx\" 2>\"$t/err\"; then tfail \"$f\" nvcc \"$t/err\"\n", qn, t,
            u->flags, qs, t);
      else
        rs_sbuf_printf(&b, "if ! cp %s \"$t/%s.ptx\" 2>\"$t/err\"; then tfail \"$f\" cp \"$t/err\"\n", qs, t);
      rs_sbuf_printf(&b, "elif ! %s -v -arch=%s \"$t/%s.ptx\" -o \"$t/%s.cubin\" 2>\"$t/%s.ptxas.txt\"; then tfail \"$f\" ptxas "
              "\"$t/%s.ptxas.txt\"\nfi\n",
          qpx, t, t, t, t, t);
    }
    if (!rs_imp_lang_amd(u->lang)) continue;
  }
  if (!rs_imp_lang_amd(u->lang)) {
    /* form sass for every target that has a cubin */
    if (o->self && o->nvdisasm) {
      char qself[1100], qnd[1100];
      rs_shell_quote(qself, sizeof qself, o->self);
      rs_shell_quote(qnd, sizeof qnd, o->nvdisasm);
      /* as corpus/compile.c: a listing with a form the table lacks is listed again with -plr */
      rs_sbuf_printf(&b, "for c in \"$t\"/*.cubin; do [ -f \"$c\" ] || continue; s=\"${c%%.cubin}\"\n"
              "  { %s corpus disasm \"$c\" --nvdisasm %s -o \"$s.sass\" 2>\"$t/err\" && "
              "{ %s corpus forms \"$s.sass\" >/dev/null 2>&1 || "
              "%s corpus disasm \"$c\" --plr --nvdisasm %s -o \"$s.sass\" 2>\"$t/err\"; }; } || "
              "{ sed \"s|$t/||g\" \"$t/err\" > \"$s.sass.FAILED\"; rm -f \"$s.sass\"; }\ndone\n",
          qself, qnd, qself, qself, qnd);
    } else {
      rs_sbuf_printf(&b, "for c in \"$t\"/*.cubin; do [ -f \"$c\" ] || continue; echo 'no nvdisasm: form sass not made' > "
              "\"${c%%.cubin}.sass.FAILED\"; done\n");
    }
  }
  rs_sbuf_printf(&b, "rm -f \"$t/err\"; mv -T \"$t\" \"$d\" 2>/dev/null || rm -rf \"$t\"\n");
  return b.s;
}
