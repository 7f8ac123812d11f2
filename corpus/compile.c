/* compile.c - one shell script per variant, run N at a time. */
#include "corpus/compile.h"
#include "llvm/llc.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void rs_variant_dir(const rs_compile_opts *o, const rs_variant *v, char *buf, size_t n) {
  /* archs: AMD architectures other than gfx90a get a level of their own (gfx90a caches stay valid) */
  const char *arch = rs_variant_arch(v);
  if (arch && strcmp(arch, "gfx90a"))
    snprintf(buf, n, "%s/%s/%s/%s/%s", o->work, v->vendor, arch, v->family, v->name);
  else
    snprintf(buf, n, "%s/%s/%s/%s", o->work, v->vendor, v->family, v->name);
}

const char *rs_find_nvcc(void) {
  const char *env = getenv("NVCC");
  if (env && access(env, X_OK) == 0) return env;
  if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0) return "/usr/local/cuda/bin/nvcc";
  return NULL;
}

/* The script compiles into $t and renames it to the variant directory; on failure it keeps the
 * compiler's message in FAILED (a failure is a result too: it is not retried on resume). */
static void script(const rs_compile_opts *o, const rs_variant *v, const rs_rounds *r, const char *dir, char *s, size_t n) {
  char qdir[1200], qsrc[1200], src[1024];
  snprintf(src, sizeof src, "%s/%s", o->kernels, v->source);
  rs_shell_quote(qdir, sizeof qdir, dir);
  rs_shell_quote(qsrc, sizeof qsrc, src);
  size_t k = (size_t)snprintf(s, n,
                              "d=%s; t=\"$d.tmp.$$\"; rm -rf \"$t\"; mkdir -p \"$t\" || exit 3\n"
                              "fail() { { echo \"$1\"; grep -m3 -i 'error' \"$t/err\" || tail -n 3 \"$t/err\"; } > \"$t/FAILED\"; "
                              "mv -T \"$t\" \"$d\" 2>/dev/null || rm -rf \"$t\"; exit 0; }\n",
                              qdir);
  if (!strcmp(v->vendor, "amd")) {
    /* archs: llc-14, llc-16 or llc-22 by architecture; the postsplit and final stages are the
     * last allocation round's greedy and rewriter (r, read from llc's pipeline). clang-22 also
     * emits each kernel as a callable copy __clang_ocl_kern_imp_NAME: LLVM's own AMDGPU
     * internalize (+ globaldce; it keeps entry points) leaves only the kernel. */
    const char *arch = rs_variant_arch(v);
    int ver = rs_arch_llvm(arch);
    char llc[256];
    snprintf(llc, sizeof llc, "llc-%d -march=amdgcn -mcpu=%s -O%d", ver, arch, v->opt);
    k += (size_t)snprintf(s + k, n - k,
                          "clang-%d -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=%s -nogpulib -O%d %s"
                          "-emit-llvm -c %s %s -o \"$t/k.bc\" 2>\"$t/err\" || fail clang-%d\n"
                          "%s -stop-before=greedy \"$t/k.bc\" -o \"$t/prera.mir\" 2>\"$t/err\" || fail llc\n"
                          "%s -stop-after=%s \"$t/k.bc\" -o \"$t/postsplit.mir\" 2>\"$t/err\" || fail llc\n"
                          "%s -stop-after=%s \"$t/k.bc\" -o \"$t/final.mir\" 2>\"$t/err\" || fail llc\n"
                          "rm -f \"$t/k.bc\" \"$t/err\"\n",
                          ver, arch, v->opt, ver >= 22 ? "-mllvm -amdgpu-internalize-symbols " : "", v->params, qsrc,
                          ver, llc, llc, r->greedy_last, llc, r->rewriter_last);
  } else {
    /* NVIDIA, per target: PTX (nvcc), cubin + `ptxas -v` (ptxas 13), and with a disassembler the
     * completed SASS listing (`regsweep corpus disasm`). A target that fails leaves T.FAILED (the
     * other targets still count); a listing we refuse leaves T.sass.FAILED with the reason. */
    const char *tg[RS_GRID_MAX_TARGETS];
    int nt = rs_grid_targets(v->vendor, o->targets, tg);
    char qnvcc[1100], ptxas[1024], qptxas[1100], qself[1100] = "", qnd[1100] = "";
    rs_shell_quote(qnvcc, sizeof qnvcc, o->nvcc);
    snprintf(ptxas, sizeof ptxas, "%.*s/ptxas", (int)(strrchr(o->nvcc, '/') - o->nvcc), o->nvcc);
    rs_shell_quote(qptxas, sizeof qptxas, ptxas);
    if (o->self && o->nvdisasm) {
      rs_shell_quote(qself, sizeof qself, o->self);
      rs_shell_quote(qnd, sizeof qnd, o->nvdisasm);
    }
    k += (size_t)snprintf(s + k, n - k,
                          "tfail() { { echo \"$2\"; grep -m3 -i 'error' \"$3\" || tail -n 3 \"$3\"; } > \"$t/$1.FAILED\"; }\n");
    for (int i = 0; i < nt; i++) {
      k += (size_t)snprintf(s + k, n - k,
                            "if ! %s -arch=%s -ptx %s %s %s -o \"$t/%s.ptx\" 2>\"$t/err\"; then tfail %s nvcc \"$t/err\"\n"
                            "elif ! %s -v -arch=%s \"$t/%s.ptx\" -o \"$t/%s.cubin\" 2>\"$t/%s.ptxas.txt\"; then "
                            "tfail %s ptxas \"$t/%s.ptxas.txt\"\n",
                            qnvcc, tg[i], v->fastmath ? "-use_fast_math" : "", v->params, qsrc, tg[i], tg[i], qptxas,
                            tg[i], tg[i], tg[i], tg[i], tg[i], tg[i]);
      /* a listing with a form the table lacks is listed again with nvdisasm's life ranges
       * (-plr columns), from which assembly infers that form's row (sass/infer.c) */
      if (qself[0])
        k += (size_t)snprintf(s + k, n - k,
                              "elif ! %s corpus disasm \"$t/%s.cubin\" --nvdisasm %s -o \"$t/%s.sass\" 2>\"$t/err\" || "
                              "{ ! %s corpus forms \"$t/%s.sass\" >/dev/null 2>&1 && "
                              "! %s corpus disasm \"$t/%s.cubin\" --plr --nvdisasm %s -o \"$t/%s.sass\" 2>\"$t/err\"; }; then "
                              "sed \"s|$t/||g\" \"$t/err\" > \"$t/%s.sass.FAILED\"; rm -f \"$t/%s.sass\"\n",
                              qself, tg[i], qnd, tg[i], qself, tg[i], qself, tg[i], qnd, tg[i], tg[i], tg[i]);
      k += (size_t)snprintf(s + k, n - k, "fi\n");
    }
    k += (size_t)snprintf(s + k, n - k, "rm -f \"$t/err\"\n");
  }
  /* rename into place; if another run finished the same variant meanwhile, keep that one */
  snprintf(s + k, n - k, "mv -T \"$t\" \"$d\" 2>/dev/null || rm -rf \"$t\"\n");
}

const rs_rounds *rs_rounds_find(const rs_rounds_cache *c, int ver, const char *arch, int opt) {
  for (uint32_t p = 0; p < c->n; p++)
    if (c->p[p].ver == ver && c->p[p].opt == opt && !strcmp(c->p[p].arch, arch)) return &c->p[p].r;
  return NULL;
}

const rs_rounds *rs_rounds_probe(rs_rounds_cache *c, int ver, const char *arch, int opt, rs_err *e) {
  const rs_rounds *r = rs_rounds_find(c, ver, arch, opt);
  if (r) return r;
  if (c->n == sizeof c->p / sizeof *c->p) {
    rs_errf(e, arch, 0, "too many (llc, architecture, -O) combinations");
    return NULL;
  }
  char llc[16];
  snprintf(llc, sizeof llc, "llc-%d", ver);
  rs_llc_opts lo;
  rs_llc_opts_default(&lo);
  lo.llc = llc;
  lo.mcpu = arch;
  lo.opt = opt;
  if (rs_llc_rounds(&lo, &c->p[c->n].r, e)) return NULL;
  c->p[c->n].ver = ver, c->p[c->n].opt = opt;
  snprintf(c->p[c->n].arch, sizeof c->p[c->n].arch, "%s", arch);
  return &c->p[c->n++].r;
}

int rs_compile_all(const rs_variant *v, uint32_t n, const rs_compile_opts *o, rs_compile_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  st->total = n;
  double t0 = rs_now();
  int jobs = o->jobs > 0 ? o->jobs : 1, running = 0, rc = 0;
  uint32_t next = 0, finished = 0;
  size_t cap = 32768;
  char *sc = rs_xmalloc(cap), dir[1024];
  pid_t *pids = rs_xcalloc((size_t)jobs, sizeof *pids);
  /* the allocation rounds of each (llc, architecture, -O) the variants use, read from llc's
   * pipeline once: an llc whose rounds we do not know stops the build here, naming its passes */
  rs_rounds_cache *probed = rs_xcalloc(1, sizeof *probed);
  const rs_rounds **round_of = rs_xcalloc(n + 1, sizeof *round_of);
  for (uint32_t i = 0; i < n && !rc; i++) {
    if (strcmp(v[i].vendor, "amd")) continue;
    const char *arch = rs_variant_arch(&v[i]);
    if (!(round_of[i] = rs_rounds_probe(probed, rs_arch_llvm(arch), arch, v[i].opt, e))) rc = -1;
  }
  uint32_t *which = rs_xcalloc((size_t)jobs, sizeof *which);
  while ((next < n || running) && !rc) {
    while (running < jobs && next < n) {
      uint32_t i = next++;
      rs_variant_dir(o, &v[i], dir, sizeof dir);
      struct stat sb;
      if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)) { /* finished earlier */
        char f[1100];
        snprintf(f, sizeof f, "%s/FAILED", dir);
        st->cached++;
        if (access(f, F_OK) == 0) st->failed++;
        finished++;
        continue;
      }
      char parent[1024];
      snprintf(parent, sizeof parent, "%s", dir);
      *strrchr(parent, '/') = 0;
      if (rs_mkdirs(parent)) {
        rc = rs_errf(e, parent, 0, "cannot create: %s", strerror(errno));
        break;
      }
      script(o, &v[i], round_of[i], dir, sc, cap);
      pid_t pid = fork();
      if (pid < 0) {
        rc = rs_errf(e, o->work, 0, "fork: %s", strerror(errno));
        break;
      }
      if (pid == 0) {
        execl("/bin/sh", "sh", "-c", sc, (char *)NULL);
        _exit(127);
      }
      int slot = 0;
      while (pids[slot]) slot++;
      pids[slot] = pid;
      which[slot] = i;
      running++;
    }
    if (!running) break;
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      rc = rs_errf(e, o->work, 0, "waitpid: %s", strerror(errno));
      break;
    }
    for (int s = 0; s < jobs; s++)
      if (pids[s] == pid) {
        pids[s] = 0;
        running--;
        finished++;
        rs_variant_dir(o, &v[which[s]], dir, sizeof dir);
        char f[1100];
        snprintf(f, sizeof f, "%s/FAILED", dir);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
          rc = rs_errf(e, dir, 0, "compile job ended abnormally (status %d)", status);
        else if (access(f, F_OK) == 0)
          st->failed++;
        else
          st->compiled++;
        if (o->progress && (finished % 50 == 0 || finished == n))
          fprintf(stderr, "corpus: compiled %u/%u variants (%u cached, %u failed), %.0f s\n", finished, n,
                  st->cached, st->failed, rs_now() - t0);
      }
  }
  /* on error: let running jobs finish so no half-written directory is left behind */
  while (running > 0) {
    int status;
    if (waitpid(-1, &status, 0) > 0) running--;
    else if (errno != EINTR) break;
  }
  free(sc);
  free(round_of);
  free(probed);
  free(pids);
  free(which);
  st->wall_s = rs_now() - t0;
  return rc;
}
