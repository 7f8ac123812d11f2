/* bench_emit.c - emit time per kernel next to llc's own compile of the same kernel, side by side.
 *   emit:  verify the ground truth + rewrite the postsplit MIR + llc from after virtregrewriter,1
 *          (MachineVerifier on, as `regsweep emit` runs it)
 *   llc:   llc-14 -start-before=greedy,0 on the kernel's prera MIR: LLVM allocating registers itself
 *          and finishing the same pipeline (no MachineVerifier), i.e. what emit replaces.
 * Both alternate per round (the machine is noisy); the best of REPS rounds is printed, then the ratio.
 * usage: bench_emit [--quick] [REPS] (run from the repository root; uses tests/fixtures/amd;
 * --quick: one round of the first kernel). */
#include "front/front.h"
#include "bench/bench.h"
#include "corpus/truth.h"
#include "emit/emit.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  bool quick = rs_bench_take_flag(&argc, argv, "--quick");
  int reps = quick ? 1 : argc > 1 ? atoi(argv[1]) : 3;
  if (reps < 1) reps = 1;
  const char *dir = "tests/fixtures/amd";
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "bench_emit: run from the repository root (%s)\n", dir);
    return 2;
  }
  char *names[256];
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) && n < 256) {
    size_t l = strlen(de->d_name);
    if (l > 10 && !strcmp(de->d_name + l - 10, ".final.mir"))
      names[n++] = rs_xstrndup(de->d_name, l - 10);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp);
  int todo = quick && n > 1 ? 1 : n;
  char tmp[] = "/tmp/rs-bench-emit-XXXXXX";
  if (!mkdtemp(tmp)) return 2;
  printf("%-36s %9s %9s %9s %9s %7s\n", "kernel", "rewrite", "emit", "llc-own", "", "ratio");
  printf("%-36s %9s %9s %9s %9s %7s\n", "", "ms", "ms", "ms", "", "emit/own");
  double sum_e = 0, sum_o = 0;
  int failed = 0;
  for (int i = 0; i < todo; i++) {
    char ps[512], fin[512], pre[512], out[600], own[600];
    snprintf(ps, sizeof ps, "%s/%s.postsplit.mir", dir, names[i]);
    snprintf(fin, sizeof fin, "%s/%s.final.mir", dir, names[i]);
    snprintf(pre, sizeof pre, "%s/%s.prera.mir", dir, names[i]);
    snprintf(out, sizeof out, "%s/e.s", tmp);
    snprintf(own, sizeof own, "%s/o.s", tmp);
    rs_err e = {{0}};
    rs_loaded l;
    rs_module *mf = rs_module_load(fin, NULL, &e);
    if (!mf || rs_file_load(ps, NULL, &l, &e)) {
      fprintf(stderr, "bench_emit: %s\n", e.msg);
      rs_module_free(mf);
      failed++;
      continue;
    }
    rs_alignment a;
    if (rs_align(l.f, mf->funcs[0], &a, &e)) {
      fprintf(stderr, "bench_emit: %s\n", e.msg);
      rs_loaded_free(&l);
      rs_module_free(mf);
      continue;
    }
    char *json = rs_truth_json(l.p, a.assign);
    double best_e = 1e9, best_o = 1e9, best_rw = 1e9;
    bool ok = true;
    for (int r = 0; r < reps && ok; r++) {
      rs_emit_opts o;
      memset(&o, 0, sizeof o);
      rs_llc_opts_default(&o.llc);
      rs_emit_result res;
      double t0 = rs_now();
      int rc = rs_emit_answer(&l, json, strlen(json), out, RS_EMIT_ASM, &o, &res, &e);
      double te = rs_now() - t0;
      if (rc) {
        fprintf(stderr, "bench_emit: %s: emit failed: %s\n", names[i], e.msg);
        ok = false;
      }
      if (res.rewrite_s < best_rw) best_rw = res.rewrite_s;
      rs_emit_result_free(&res);
      char *av[] = {(char *)o.llc.llc, "-march=amdgcn", "-mcpu=gfx90a", "-O2", "-start-before=greedy,0", pre, "-o", own, NULL};
      char *err = NULL;
      t0 = rs_now();
      int st = rs_emit_run(av, 300, &err, &e);
      double to = rs_now() - t0;
      free(err);
      if (st) {
        fprintf(stderr, "bench_emit: %s: llc failed\n", names[i]);
        ok = false;
      }
      if (te < best_e) best_e = te;
      if (to < best_o) best_o = to;
    }
    failed += !ok;
    if (ok) {
      printf("%-36.36s %9.1f %9.1f %9.1f %9s %7.2f\n", names[i], best_rw * 1e3, best_e * 1e3, best_o * 1e3, "",
             best_e / best_o);
      sum_e += best_e, sum_o += best_o;
    }
    free(json);
    rs_alignment_free(&a);
    rs_loaded_free(&l);
    rs_module_free(mf);
  }
  if (sum_o > 0) printf("%-36s %9s %9.1f %9.1f %9s %7.2f\n", "total", "", sum_e * 1e3, sum_o * 1e3, "", sum_e / sum_o);
  for (int i = 0; i < n; i++) free(names[i]);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  return system(cmd) || failed ? 1 : 0;
}
