/* bench_disasm.c - our SASS front end (parse + lift + Problem) beside nvdisasm producing the same
 * listing from the cubin, on the largest SASS listing of tests/fixtures/sass.
 *
 * The cubin is compiled from that listing's PTX (tests/fixtures/nv/NAME.T.ptx, or the sm_89 PTX
 * with its .target changed) with ptxas 13, then in alternating rounds (the order flips each round,
 * the machine is shared and noisy):
 *   nvdisasm   `nvdisasm -c` on the header-rewritten cubin (what corpus build runs per kernel);
 *   complete   rs_sass_disasm: the same plus our hole filling, labels and desc[] (whole pipeline);
 *   ours       rs_module_load(listing) (parse + lift) + rs_problem_build per function.
 * Prints medians and minima and the ratio nvdisasm / ours (goal >= 5x). Without nvdisasm or
 * ptxas it says so and exits 0 (benchmarks are not tests).
 *
 * usage: bench_disasm [--quick] [--rounds N] [--nvdisasm PATH] [--ptxas PATH]   (from the repository root;
 * --quick: one round) */
#include "front/front.h"
#include "bench/bench.h"
#include "analysis/problem.h"
#include "ir/ir.h"
#include "cubin/disasm.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  bool quick = rs_bench_take_flag(&argc, argv, "--quick");
  int rounds = 9;
  const char *nvd = NULL, *ptxas = "/usr/local/cuda/bin/ptxas";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--nvdisasm")) nvd = argv[i + 1];
    else if (!strcmp(argv[i], "--ptxas")) ptxas = argv[i + 1];
  }
  if (rounds < 1 || rounds > 1000) rounds = 9;
  if (quick) rounds = 1;
  /* the largest listing */
  DIR *d = opendir("tests/fixtures/sass");
  if (!d) {
    fprintf(stderr, "bench_disasm: run from the repository root (no tests/fixtures/sass)\n");
    return 2;
  }
  char best[512] = "";
  off_t best_size = 0;
  for (struct dirent *de; (de = readdir(d));) {
    size_t l = strlen(de->d_name);
    if (l < 6 || strcmp(de->d_name + l - 5, ".sass")) continue;
    char p[512];
    struct stat sb;
    snprintf(p, sizeof p, "tests/fixtures/sass/%s", de->d_name);
    if (!stat(p, &sb) && sb.st_size > best_size) best_size = sb.st_size, snprintf(best, sizeof best, "%s", p);
  }
  closedir(d);
  if (!best[0]) return 2;
  rs_err e = {{0}};
  rs_nvdisasm nd;
  if (rs_nvdisasm_open(nvd, &nd, &e)) {
    printf("bench_disasm: skipped: %s\n", e.msg);
    return 0;
  }
  if (access(ptxas, X_OK)) {
    printf("bench_disasm: skipped: no ptxas at %s (CUDA 13 toolkit) to compile the cubin\n", ptxas);
    return 0;
  }
  /* NAME.sm_XX.sass -> its PTX */
  char stem[512], arch[16], ptx[600], cmd[2400], tmp[] = "/tmp/bench-disasm-XXXXXX";
  const char *base = strrchr(best, '/') + 1;
  snprintf(stem, sizeof stem, "%.*s", (int)(strstr(base, ".sm_") - base), base);
  snprintf(arch, sizeof arch, "%.5s", strstr(base, ".sm_") + 1);
  if (!mkdtemp(tmp)) return 2;
  snprintf(ptx, sizeof ptx, "tests/fixtures/nv/%s.%s.ptx", stem, arch);
  if (access(ptx, R_OK)) {
    snprintf(cmd, sizeof cmd, "sed 's/^\\.target sm_89$/.target %s/' tests/fixtures/nv/%s.sm_89.ptx > %s/k.ptx", arch,
             stem, tmp);
    snprintf(ptx, sizeof ptx, "%s/k.ptx", tmp);
  } else {
    snprintf(cmd, sizeof cmd, "cp %s %s/k.ptx", ptx, tmp);
  }
  char cubin[600], old[600];
  snprintf(cubin, sizeof cubin, "%s/k.cubin", tmp);
  snprintf(old, sizeof old, "%s/old.cubin", tmp);
  size_t k = strlen(cmd);
  snprintf(cmd + k, sizeof cmd - k, " && %s -arch=%s %s/k.ptx -o %s", ptxas, arch, tmp, cubin);
  if (system(cmd)) {
    fprintf(stderr, "bench_disasm: %s failed\n", cmd);
    return 2;
  }
  rs_cubin c;
  if (rs_cubin_load(cubin, &c, &e) || (rs_cubin_rewrite(&c), rs_cubin_write(&c, old, &e))) {
    fprintf(stderr, "bench_disasm: %s\n", e.msg);
    rs_cubin_free(&c);
    return 2;
  }
  rs_cubin_free(&c);
  double *tn = calloc((size_t)rounds, sizeof *tn), *tc = calloc((size_t)rounds, sizeof *tc),
         *to = calloc((size_t)rounds, sizeof *to);
  const char *args[] = {"-c", NULL};
  unsigned insts = 0, values = 0;
  int rc = 0;
  for (int r = 0; r < rounds && !rc; r++) {
    for (int turn = 0; turn < 3 && !rc; turn++) {
      int which = (turn + r) % 3;
      double t0 = now_s();
      char *out = NULL;
      if (which == 0) {
        rc = rs_nvdisasm_run(&nd, old, cubin, args, &out, &e);
        tn[r] = now_s() - t0;
      } else if (which == 1) {
        rs_sass_stats st;
        rc = rs_sass_disasm(&nd, cubin, args, &out, &st, &e);
        tc[r] = now_s() - t0;
      } else {
        rs_module *m = rs_module_load(best, NULL, &e);
        if (!m) rc = -1;
        for (uint32_t f = 0; m && f < m->nfuncs && !rc; f++) {
          rs_problem *p = rs_problem_build(m->funcs[f], &e);
          if (!p) rc = -1;
          else if (r == 0) insts += m->funcs[f]->ninsts, values += p->nvars;
          rs_problem_free(p);
        }
        rs_module_free(m);
        to[r] = now_s() - t0;
      }
      free(out);
    }
  }
  if (rc) {
    fprintf(stderr, "bench_disasm: %s\n", e.msg);
    return 2;
  }
  double mn = tn[0], mc = tc[0], mo = to[0];
  for (int r = 1; r < rounds; r++) {
    if (tn[r] < mn) mn = tn[r];
    if (tc[r] < mc) mc = tc[r];
    if (to[r] < mo) mo = to[r];
  }
  double n_med = median(tn, rounds), c_med = median(tc, rounds), o_med = median(to, rounds);
  printf("bench_disasm: %s (%u instructions, %u values), %d rounds, nvdisasm %u.%u\n", best, insts, values, rounds,
         nd.major, nd.minor);
  printf("| step | median ms | min ms |\n|---|---:|---:|\n");
  printf("| nvdisasm -c (cubin -> listing) | %.1f | %.1f |\n", 1e3 * n_med, 1e3 * mn);
  printf("| rs_sass_disasm (nvdisasm + holes, labels, desc[]) | %.1f | %.1f |\n", 1e3 * c_med, 1e3 * mc);
  printf("| ours: parse + lift + Problem | %.1f | %.1f |\n", 1e3 * o_med, 1e3 * mo);
  printf("ratio nvdisasm / ours: %.1fx (median), %.1fx (min); completion overhead over nvdisasm: %.1f%% (median)\n",
         n_med / o_med, mn / mo, 100 * (c_med - n_med) / n_med);
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  if (system(cmd)) rc = 2;
  free(tn);
  free(tc);
  free(to);
  return rc;
}
