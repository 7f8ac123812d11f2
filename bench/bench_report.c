/* bench_report.c - `regsweep report` over 1,000,000 attempt rows: a synthetic run file (5,000
 * instances x 2 models x 100 samples, random verdicts) is written by a child process, then this
 * process loads, groups (with bootstrap), compares and prints it, and reports time and peak RSS
 * (VmHWM, which the writer's memory does not inflate). Usage: bench_report [--quick] [ROWS]
 * (--quick: 20,000 rows) */
#include "bench/bench.h"
#include "report/compare.h"
#include "report/table.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long vmhwm_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmHWM:", 6)) kb = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  return kb;
}

static int write_run(const char *path, uint64_t rows) {
  static const char *fam[] = {"sgemm", "wmma", "fa"}, *tgt[] = {"sm_89", "sm_90", "gfx90a"};
  rs_err e;
  rs_runfile *f = rs_runfile_create(path, &e);
  if (!f || rs_runfile_set_attr(f, "config", "{\"models\":[\"A\",\"B\"],\"samples\":100,\"until_pass\":false}", &e))
    return fprintf(stderr, "%s\n", e.msg), 1;
  uint64_t s = 1;
  rs_attempt a;
  memset(&a, 0, sizeof a);
  for (uint64_t i = 0; i < rows; i++) {
    uint32_t inst = (uint32_t)(i / 200), model = (uint32_t)(i / 100 % 2);
    snprintf(a.instance, sizeof a.instance, "%s/v%u/%s/%s", fam[inst % 3], inst, tgt[inst / 3 % 3], inst % 2 ? "ptx" : "prera");
    a.inst_index = inst;
    a.model = (uint16_t)model;
    a.attempt = (uint32_t)(i % 100);
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t r = (uint32_t)(s >> 33) % 100;
    /* per-instance difficulty: pass chance 0..30% (+5% for model B); 1% infra */
    uint32_t pc = inst % 31 + 5 * model;
    a.verdict = (uint8_t)(r < pc ? 0 : r == 99 ? 5 : 1 + r % 4);
    a.infer_s = 0.5 + (double)(s >> 40 & 0xffff) / 4096.0;
    a.verify_s = 0.001 * (double)(s >> 20 & 0xff);
    a.used[0] = 64 + r % 32;
    a.occupancy = 4 + r % 4;
    if (rs_runfile_append(f, &a, &e)) return fprintf(stderr, "%s\n", e.msg), 1;
  }
  return rs_runfile_close(f, &e) ? (fprintf(stderr, "%s\n", e.msg), 1) : 0;
}

int main(int argc, char **argv) {
  bool quick = rs_bench_take_flag(&argc, argv, "--quick");
  uint64_t rows = argc > 1 ? strtoull(argv[1], NULL, 10) : quick ? 20000 : 1000000;
  char path[] = "/tmp/bench_report_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  close(fd);
  double t0 = rs_now();
  pid_t pid = fork();
  if (pid == 0) _exit(write_run(path, rows));
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st)) return unlink(path), 1;
  double t1 = rs_now();
  long base = vmhwm_kb();
  rs_err e;
  rs_runfile *f = rs_runfile_open(path, &e);
  if (!f) return fprintf(stderr, "%s\n", e.msg), 1;
  rs_results r;
  memset(&r, 0, sizeof r);
  if (rs_results_load_run(&r, f, NULL, &e)) return fprintf(stderr, "%s\n", e.msg), 1;
  rs_runfile_close(f, &e);
  double t2 = rs_now();
  rs_group *g = NULL;
  uint32_t ng = rs_results_group(&r, RS_BY_DEFAULT, RS_BOOT_SEED, &g);
  FILE *out = fopen("/dev/null", "w");
  rs_groups_print(&r, g, ng, RS_BY_DEFAULT, RS_FMT_MD, out);
  double t3 = rs_now();
  rs_comparison *c = NULL;
  uint32_t nc = rs_compare(&r, RS_BY_FAMILY, RS_BOOT_SEED, &c);
  rs_compare_print(&r, c, nc, RS_BY_FAMILY, RS_FMT_MD, out);
  double t4 = rs_now();
  fclose(out);
  printf("bench_report: %llu rows (%u pairs, %u groups, %u comparisons)\n", (unsigned long long)rows, r.n, ng, nc);
  printf("  write run file   %.2f s (child process)\n", t1 - t0);
  printf("  load             %.2f s (%.0f rows/s)\n", t2 - t1, rows / (t2 - t1));
  printf("  group + print    %.2f s (1000 bootstrap resamples per group)\n", t3 - t2);
  printf("  compare          %.2f s\n", t4 - t3);
  printf("  total report     %.2f s; peak RSS %.1f MB (before loading %.1f MB)\n", t4 - t1, vmhwm_kb() / 1024.0, base / 1024.0);
  free(g);
  free(c);
  rs_results_free(&r);
  unlink(path);
  return 0;
}
