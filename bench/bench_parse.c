/* bench_parse.c - parse + liveness + Problem build against the vendor tools on the same file.
 *
 * AMD: the largest attention MIR (fa_ prefix) in tests/fixtures/amd, and its other stages, beside
 *   `llc-14 -march=amdgcn -mcpu=gfx90a -run-pass=none -o /dev/null FILE` (MIR parse, including
 *   the embedded IR module, then print nothing).
 * Other AMD architectures (archs): the largest fa_ MIR of tests/fixtures/gfx940 and the wave64
 *   postsplit MIR of tests/fixtures/gfx1100 beside llc-16 (the llc-16 column), gfx908/gfx1030
 *   beside llc-14, same command (llc cannot re-read its own wave32 MIR, see below).
 * NVIDIA: the largest .ptx in tests/fixtures/nv beside `ptxas -arch=sm_90 FILE -o /dev/null`
 *   (a full compile, not just a parse). Skipped with a note when ptxas is not installed.
 *
 * The machine is shared and noisy, so contenders alternate within every round (the order flips
 * each round) and we report medians and minima rather than one long run of each.
 * Ours is timed twice: in-process (rs_module_load + rs_problem_build per function + frees) and
 * as a process (`regsweep inspect FILE`), so start-up cost is counted on both sides.
 *
 * usage: bench_parse [--quick] [--rounds N] [--fixtures DIR] [--regsweep PATH] [--llc PATH] [--ptxas PATH]
 * Run from the repository root (scripts/bench.sh does). Exits 0 unless something fails. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "front/front.h"
#include "bench/bench.h"
#include "ir/ir.h"
#include "analysis/liveness.h"
#include "analysis/problem.h"

extern char **environ;

#define TARGET_RATIO 5.0

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(const double *v, int n) {
  double *s = rs_xmalloc((size_t)n * sizeof *s);
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  free(s);
  return m;
}

static double minimum(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++)
    if (v[i] < m) m = v[i];
  return m;
}

/* Run argv with stdout/stderr to /dev/null; returns wall seconds, or -1 if it did not exit 0.
 * Spawn and wait are inside the timed region: that is the cost a user of the tool pays. */
static double run_proc(char *const argv[]) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  double t0 = now_s();
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  double t = now_s() - t0;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

typedef struct {
  uint32_t nfuncs;
  uint64_t insts;
} work_stats;

/* Ours in-process: everything `inspect` needs, then free it. Returns total seconds or -1.
 * ph (optional) gets the phases: [0] load+parse, [1] problem build (liveness inside), [2] frees,
 * [3] liveness alone, timed outside the total (it is recomputed inside the build). */
static double run_ours(const char *path, work_stats *ws, double *ph, rs_err *e) {
  double t0 = now_s();
  rs_module *m = rs_module_load(path, NULL, e);
  if (!m) return -1;
  double t1 = now_s(), tfree = 0, tlive = 0;
  uint64_t insts = 0;
  for (uint32_t k = 0; k < m->nfuncs; k++) {
    rs_problem *p = rs_problem_build(m->funcs[k], e);
    if (!p) {
      rs_module_free(m);
      return -1;
    }
    insts += m->funcs[k]->ninsts;
    double tf = now_s();
    rs_problem_free(p);
    tfree += now_s() - tf;
  }
  double t2 = now_s();
  uint32_t nf = m->nfuncs;
  if (ph) {
    for (uint32_t k = 0; k < m->nfuncs; k++) {
      double tl = now_s();
      rs_live *l = rs_live_compute(m->funcs[k], e);
      rs_live_free(l);
      tlive += now_s() - tl;
    }
  }
  double t3 = now_s();
  rs_module_free(m);
  double t4 = now_s();
  if (ws) {
    ws->nfuncs = nf;
    ws->insts = insts;
  }
  if (ph) {
    ph[0] = t1 - t0;
    ph[1] = t2 - t1 - tfree;
    ph[2] = tfree + (t4 - t3);
    ph[3] = tlive;
  }
  return (t2 - t0) + (t4 - t3);
}

static long count_lines(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return -1;
  long n = 0;
  int c;
  while ((c = getc(fp)) != EOF) n += c == '\n';
  fclose(fp);
  return n;
}

static bool has_suffix(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && !strcmp(s + n - m, suf);
}

/* Largest regular file in dir whose name starts with prefix and ends with suffix; ties go to
 * the greater name so the choice does not depend on readdir order. Malloc'd path or NULL. */
static char *largest_file(const char *dir, const char *prefix, const char *suffix) {
  DIR *d = opendir(dir);
  if (!d) return NULL;
  char *best = NULL, bestname[NAME_MAX + 1] = "";
  off_t bestsz = -1;
  struct dirent *de;
  while ((de = readdir(d))) {
    const char *n = de->d_name;
    if (strncmp(n, prefix, strlen(prefix)) || !has_suffix(n, suffix)) continue;
    size_t len = strlen(dir) + strlen(n) + 2;
    char *p = rs_xmalloc(len);
    snprintf(p, len, "%s/%s", dir, n);
    struct stat st;
    if (stat(p, &st) || !S_ISREG(st.st_mode) ||
        st.st_size < bestsz || (st.st_size == bestsz && strcmp(n, bestname) < 0)) {
      free(p);
      continue;
    }
    free(best);
    best = p;
    bestsz = st.st_size;
    snprintf(bestname, sizeof bestname, "%s", n);
  }
  closedir(d);
  return best;
}

static bool executable(const char *prog) {
  if (strchr(prog, '/')) return access(prog, X_OK) == 0;
  const char *path = getenv("PATH");
  if (!path) return false;
  char buf[PATH_MAX];
  for (const char *p = path; *p;) {
    const char *c = strchr(p, ':');
    size_t n = c ? (size_t)(c - p) : strlen(p);
    snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog);
    if (n && access(buf, X_OK) == 0) return true;
    if (!c) break;
    p = c + 1;
  }
  return false;
}

typedef struct {
  const char *label; /* short name for the table */
  const char *path;
  long lines;
  work_stats ws;
  double in_med, in_min;     /* ours in-process */
  double pr_med, pr_min;     /* ours as a process; < 0 when skipped */
  double th_med, th_min;     /* theirs */
  double ph_med[4];          /* ours in-process phases, see run_ours */
  bool ok;
} row;

/* One file: `rounds` rounds, each running all contenders; order flips every round so neither
 * side always runs on a cache warmed (or a CPU slowed) by the other. */
static int bench_file(row *r, int rounds, const char *regsweep, char *const theirs[]) {
  rs_err e = {{0}};
  r->lines = count_lines(r->path);
  /* Warm-up, and check everyone succeeds before timing. */
  if (run_ours(r->path, &r->ws, NULL, &e) < 0) {
    fprintf(stderr, "bench_parse: ours failed on %s: %s\n", r->path, e.msg);
    return -1;
  }
  if (run_proc(theirs) < 0) {
    fprintf(stderr, "bench_parse: '%s' failed on %s\n", theirs[0], r->path);
    return -1;
  }
  char *ours_argv[] = {(char *)regsweep, "inspect", (char *)r->path, NULL};
  bool proc = regsweep != NULL;
  if (proc && run_proc(ours_argv) < 0) {
    fprintf(stderr, "bench_parse: '%s inspect %s' failed; process timing skipped\n", regsweep,
            r->path);
    proc = false;
  }
  double *in = rs_xmalloc((size_t)rounds * sizeof *in);
  double *pr = rs_xmalloc((size_t)rounds * sizeof *pr);
  double *th = rs_xmalloc((size_t)rounds * sizeof *th);
  double *ph = rs_xmalloc((size_t)rounds * 4 * sizeof *ph), *col = rs_xmalloc((size_t)rounds * sizeof *col);
  int rc = 0;
  for (int i = 0; i < rounds && rc == 0; i++) {
    for (int step = 0; step < 3; step++) {
      int which = i % 2 ? 2 - step : step;
      double t = 0;
      if (which == 0) t = in[i] = run_ours(r->path, NULL, ph + 4 * i, &e);
      else if (which == 1) t = pr[i] = proc ? run_proc(ours_argv) : 0;
      else t = th[i] = run_proc(theirs);
      if (t < 0) {
        fprintf(stderr, "bench_parse: round %d failed on %s\n", i, r->path);
        rc = -1;
        break;
      }
    }
  }
  if (rc == 0) {
    r->in_med = median(in, rounds), r->in_min = minimum(in, rounds);
    r->pr_med = proc ? median(pr, rounds) : -1, r->pr_min = proc ? minimum(pr, rounds) : -1;
    r->th_med = median(th, rounds), r->th_min = minimum(th, rounds);
    for (int k = 0; k < 4; k++) {
      for (int i = 0; i < rounds; i++) col[i] = ph[4 * i + k];
      r->ph_med[k] = median(col, rounds);
    }
    r->ok = true;
  }
  free(in);
  free(pr);
  free(th);
  free(ph);
  free(col);
  return rc;
}

static void print_table(const char *theirs_name, row *rows, int n) {
  printf("%-40s %6s %6s | %9s %9s | %9s %9s | %9s %9s | %8s %8s\n", "file", "lines", "insts",
         "ours-in", "(min)", "ours-proc", "(min)", theirs_name, "(min)", "ratio-in", "ratio-pr");
  printf("%-40s %6s %6s | %9s %9s | %9s %9s | %9s %9s | %8s %8s\n", "", "", "", "med ms", "ms",
         "med ms", "ms", "med ms", "ms", "median", "median");
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (!r->ok) {
      printf("%-40s  (failed)\n", r->label);
      continue;
    }
    printf("%-40s %6ld %6llu | %9.2f %9.2f | ", r->label, r->lines, (unsigned long long)r->ws.insts,
           r->in_med * 1e3, r->in_min * 1e3);
    if (r->pr_med >= 0) printf("%9.2f %9.2f | ", r->pr_med * 1e3, r->pr_min * 1e3);
    else printf("%9s %9s | ", "-", "-");
    printf("%9.2f %9.2f | %7.1fx ", r->th_med * 1e3, r->th_min * 1e3, r->th_med / r->in_med);
    if (r->pr_med > 0) printf("%7.1fx\n", r->th_med / r->pr_med);
    else printf("%8s\n", "-");
  }
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (!r->ok) continue;
    printf("  %s: ours %.0f source lines/s, %.0f instructions/s (in-process median, %u function%s)\n",
           r->label, r->lines / r->in_med, (double)r->ws.insts / r->in_med, r->ws.nfuncs,
           r->ws.nfuncs == 1 ? "" : "s");
    printf("    phases (median ms): load+parse %.2f, problem build %.2f (of which liveness ~%.2f), "
           "frees %.2f\n", r->ph_med[0] * 1e3, r->ph_med[1] * 1e3, r->ph_med[3] * 1e3,
           r->ph_med[2] * 1e3);
  }
}

/* The CLI built beside this bench: BUILD/bench/bench_parse -> BUILD/regsweep. */
static char *default_regsweep(void) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return NULL;
  buf[n] = 0;
  for (int up = 0; up < 2; up++) {
    char *s = strrchr(buf, '/');
    if (!s) return NULL;
    *s = 0;
  }
  size_t len = strlen(buf) + sizeof "/regsweep";
  char *p = rs_xmalloc(len);
  snprintf(p, len, "%s/regsweep", buf);
  if (access(p, X_OK)) {
    free(p);
    return NULL;
  }
  return p;
}

int main(int argc, char **argv) {
  bool quick = rs_bench_take_flag(&argc, argv, "--quick");
  int rounds = 15;
  const char *fixtures = "tests/fixtures", *llc = "llc-14", *ptxas = "/usr/local/cuda/bin/ptxas";
  char *regsweep = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--fixtures") && i + 1 < argc) fixtures = argv[++i];
    else if (!strcmp(argv[i], "--regsweep") && i + 1 < argc) {
      free(regsweep);
      regsweep = rs_xstrndup(argv[i + 1], strlen(argv[i + 1]));
      i++;
    } else if (!strcmp(argv[i], "--llc") && i + 1 < argc) llc = argv[++i];
    else if (!strcmp(argv[i], "--ptxas") && i + 1 < argc) ptxas = argv[++i];
    else {
      fprintf(stderr, "usage: bench_parse [--rounds N] [--fixtures DIR] [--regsweep PATH] "
                      "[--llc PATH] [--ptxas PATH]\n");
      free(regsweep);
      return 2;
    }
  }
  if (rounds < 1 || quick) rounds = 1;
  if (!regsweep) regsweep = default_regsweep();
  int status = 0;
  printf("bench_parse: %d rounds per file, contenders alternate within each round\n", rounds);
  printf("ours-in = rs_module_load + rs_problem_build (liveness inside) per function + frees, in-process\n");
  printf("ours-proc = `%s inspect FILE >/dev/null` (process start-up included)\n",
         regsweep ? regsweep : "regsweep");
  if (!regsweep) printf("  (regsweep executable not found next to this bench: ours-proc skipped)\n");

  /* --- AMD: largest attention MIR, plus its other pipeline stages --- */
  char amddir[PATH_MAX], nvdir[PATH_MAX];
  snprintf(amddir, sizeof amddir, "%s/amd", fixtures);
  snprintf(nvdir, sizeof nvdir, "%s/nv", fixtures);
  char *big = largest_file(amddir, "fa_", ".mir");
  printf("\n== AMDGPU MIR vs `%s -march=amdgcn -mcpu=gfx90a -run-pass=none -o /dev/null` ==\n", llc);
  if (!big) {
    printf("no %s/fa_*.mir: skipped\n", amddir);
  } else if (!executable(llc)) {
    printf("%s not found: skipped\n", llc);
  } else {
    static const char *stages[] = {".prera.mir", ".postsplit.mir", ".final.mir"};
    char *paths[3] = {NULL, NULL, NULL};
    row rows[3];
    int n = 0, headline = -1;
    size_t blen = strlen(big);
    const char *stage = NULL;
    for (int s = 0; s < 3; s++)
      if (has_suffix(big, stages[s])) stage = stages[s];
    for (int s = 0; s < 3; s++) {
      char *p;
      if (!stage) { /* no stage suffix: just the one file */
        if (s) break;
        p = rs_xstrndup(big, blen);
      } else {
        size_t stem = blen - strlen(stage), len = stem + strlen(stages[s]) + 1;
        p = rs_xmalloc(len);
        snprintf(p, len, "%.*s%s", (int)stem, big, stages[s]);
        if (access(p, R_OK)) {
          free(p);
          continue;
        }
      }
      if (!strcmp(p, big)) headline = n;
      paths[n] = p;
      rows[n] = (row){.path = p};
      const char *slash = strrchr(p, '/');
      rows[n].label = slash ? slash + 1 : p;
      n++;
    }
    for (int i = 0; i < n; i++) {
      char *theirs[] = {(char *)llc, "-march=amdgcn", "-mcpu=gfx90a", "-run-pass=none", "-o",
                        "/dev/null", paths[i], NULL};
      if (bench_file(&rows[i], rounds, regsweep, theirs)) status = 1;
    }
    print_table("llc", rows, n);
    if (headline >= 0 && rows[headline].ok) {
      const row *r = &rows[headline];
      double ri = r->th_med / r->in_med, rp = r->pr_med > 0 ? r->th_med / r->pr_med : -1;
      printf("largest (%s): llc/ours in-process %.1fx", r->label, ri);
      if (rp > 0) printf(", process vs process %.1fx", rp);
      printf(" -> target >= %.0fx %s\n", TARGET_RATIO,
             (rp > 0 ? rp : ri) >= TARGET_RATIO ? "met" : "NOT met");
    }
    for (int i = 0; i < n; i++) free(paths[i]);
  }
  free(big);

  /* --- archs: the other AMD architectures, each against the llc that produced its MIR (the
   * llc-16 column: gfx940, gfx1100; llc-14: gfx908, gfx1030) on its largest fa_ fixture --- */
  /* RDNA: the wave64 fixture, because llc cannot read back its own wave32 MIR ("missing implicit
   * register operand 'implicit $vcc'" at S_CBRANCH_VCCNZ ..., implicit $vcc_lo; LLVM 14 and 16). */
  static const struct { const char *llc, *archs[2], *prefix[2], *suffix[2]; } more[] = {
      {"llc-16", {"gfx940", "gfx1100"}, {"fa_", ""}, {".mir", "_w64.postsplit.mir"}},
      {"llc-14", {"gfx908", "gfx1030"}, {"fa_", ""}, {".mir", "_w64.postsplit.mir"}}};
  for (size_t g = 0; g < sizeof more / sizeof *more; g++) {
    printf("\n== AMDGPU MIR (%s, %s) vs `%s -march=amdgcn -mcpu=ARCH -run-pass=none -o /dev/null` ==\n",
           more[g].archs[0], more[g].archs[1], more[g].llc);
    if (!executable(more[g].llc)) {
      printf("%s not found: skipped\n", more[g].llc);
      continue;
    }
    row rows[2];
    char *paths[2] = {NULL, NULL}, cpu[2][32];
    int n = 0;
    for (int a = 0; a < 2; a++) {
      char dir[PATH_MAX];
      snprintf(dir, sizeof dir, "%s/%s", fixtures, more[g].archs[a]);
      char *p = largest_file(dir, more[g].prefix[a], more[g].suffix[a]);
      if (!p) {
        printf("no %s/%s*%s: skipped\n", dir, more[g].prefix[a], more[g].suffix[a]);
        continue;
      }
      snprintf(cpu[n], sizeof cpu[n], "-mcpu=%s", more[g].archs[a]);
      paths[n] = p;
      rows[n] = (row){.path = p, .label = p + strlen(fixtures) + 1};
      char *theirs[] = {(char *)more[g].llc, "-march=amdgcn", cpu[n], "-run-pass=none", "-o", "/dev/null", p, NULL};
      if (bench_file(&rows[n], rounds, regsweep, theirs)) status = 1;
      n++;
    }
    print_table(more[g].llc, rows, n);
    for (int i = 0; i < n; i++) free(paths[i]);
  }

  /* --- NVIDIA: largest PTX --- */
  char *ptx = largest_file(nvdir, "", ".ptx");
  printf("\n== PTX vs `%s -arch=sm_90 FILE -o /dev/null` (ptxas compiles fully; not a parse-only "
         "comparison) ==\n", ptxas);
  if (!ptx) {
    printf("no %s/*.ptx: skipped\n", nvdir);
  } else if (!executable(ptxas)) {
    printf("ptxas not installed (%s): skipped\n", ptxas);
  } else {
    const char *slash = strrchr(ptx, '/');
    row r = {.path = ptx, .label = slash ? slash + 1 : ptx};
    char *theirs[] = {(char *)ptxas, "-arch=sm_90", ptx, "-o", "/dev/null", NULL};
    if (bench_file(&r, rounds, regsweep, theirs)) status = 1;
    print_table("ptxas", &r, 1);
  }
  free(ptx);
  free(regsweep);
  return status;
}
