/* bench_mir22.c - parse + liveness + Problem of llc-22 MIR beside llc-22 reading the same file.
 *
 * Default input: the largest attention MIR (fa_*) of tests/fixtures/gfx950 (or FILE, e.g. the
 * largest gfx950 attention MIR of a corpus work directory). Contenders alternate within every
 * round (the order flips each round; the machine is shared and noisy):
 *   ours: rs_module_load + rs_problem_build per function + frees, in-process;
 *   llc:  `llc-22 -march=amdgcn -mcpu=gfx950 -run-pass=none -o /dev/null FILE` (MIR parse with
 *         the embedded IR module, print nothing), a process.
 * Prints medians, minima and the ratio llc / ours (> 1: ours is faster).
 * usage: bench_mir22 [--quick] [--rounds N] [--llc PATH] [FILE]   (from the repository root) */
#include "front/front.h"
#include "analysis/problem.h"
#include "ir/ir.h"
#include <dirent.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmpd);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The largest fa_*.mir of dir into out; 0 if none. */
static int largest(const char *dir, char *out, size_t n) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  long best = -1;
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t l = strlen(de->d_name);
    if (strncmp(de->d_name, "fa_", 3) || l < 4 || strcmp(de->d_name + l - 4, ".mir")) continue;
    char p[1100];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    if (stat(p, &sb) == 0 && sb.st_size > best) best = sb.st_size, snprintf(out, n, "%s", p);
  }
  closedir(d);
  return best >= 0;
}

static double time_ours(const char *path, unsigned *nfuncs) {
  double t0 = now_s();
  rs_err e = {{0}};
  rs_module *m = rs_module_load(path, NULL, &e);
  if (!m) {
    fprintf(stderr, "bench_mir22: %s\n", e.msg);
    exit(1);
  }
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    rs_problem *p = rs_problem_build(m->funcs[i], &e);
    if (!p) {
      fprintf(stderr, "bench_mir22: %s\n", e.msg);
      exit(1);
    }
    rs_problem_free(p);
  }
  *nfuncs = m->nfuncs;
  rs_module_free(m);
  return now_s() - t0;
}

static double time_llc(const char *llc, const char *path) {
  char *argv[] = {(char *)llc, "-march=amdgcn", "-mcpu=gfx950", "-run-pass=none", "-o", "/dev/null", (char *)path, NULL};
  double t0 = now_s();
  pid_t pid;
  if (posix_spawnp(&pid, llc, NULL, NULL, argv, environ)) {
    fprintf(stderr, "bench_mir22: cannot run %s\n", llc);
    exit(1);
  }
  int st;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st)) {
    fprintf(stderr, "bench_mir22: %s failed on %s (status %d)\n", llc, path, st);
    exit(1);
  }
  return now_s() - t0;
}

int main(int argc, char **argv) {
  int rounds = 7;
  const char *llc = "llc-22", *file = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) rounds = 1;
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--llc") && i + 1 < argc) llc = argv[++i];
    else if (argv[i][0] != '-') file = argv[i];
    else {
      fprintf(stderr, "usage: bench_mir22 [--quick] [--rounds N] [--llc PATH] [FILE]\n");
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;
  char path[1100];
  if (file) snprintf(path, sizeof path, "%s", file);
  else if (!largest("tests/fixtures/gfx950", path, sizeof path)) {
    fprintf(stderr, "bench_mir22: no tests/fixtures/gfx950/fa_*.mir (run from the repository root)\n");
    return 1;
  }
  double *ours = calloc((size_t)rounds, sizeof *ours), *theirs = calloc((size_t)rounds, sizeof *theirs);
  unsigned nf = 0;
  for (int r = 0; r < rounds; r++) {
    if (r % 2) {
      theirs[r] = time_llc(llc, path);
      ours[r] = time_ours(path, &nf);
    } else {
      ours[r] = time_ours(path, &nf);
      theirs[r] = time_llc(llc, path);
    }
  }
  struct stat sb;
  stat(path, &sb);
  double mo = median(ours, rounds), ml = median(theirs, rounds);
  printf("bench_mir22: %s (%ld bytes, %u function%s), %d round%s\n", path, (long)sb.st_size, nf, nf == 1 ? "" : "s",
         rounds, rounds == 1 ? "" : "s");
  printf("  parse + Problem (ours, in-process): median %.1f ms, min %.1f ms\n", 1e3 * mo, 1e3 * ours[0]);
  printf("  %s -run-pass=none (process):     median %.1f ms, min %.1f ms\n", llc, 1e3 * ml, 1e3 * theirs[0]);
  printf("  ratio llc / ours: %.2f\n", ml / mo);
  free(ours);
  free(theirs);
  return 0;
}
