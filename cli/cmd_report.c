/* cmd_report.c - `regsweep report RUN_DIR [RUN_DIR2 ...]`: per-group tables (report/table.c, the
 * same code as the end-of-sweep summary), paired comparisons of variants, and plots. */
#include "report/infra.h"
#include "report/compare.h"
#include "report/plots.h"
#include "report/table.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Registered in cli/main.c's command table. */
int rs_cmd_report(int argc, char **argv);
void rs_usage_report(void);

void rs_usage_report(void) {
  puts("usage: regsweep report RUN_DIR|run.h5 [RUN_DIR2 ...] [--by family,target,form,model,split]\n"
       "       [--format md|csv|json] [--plots DIR] [--seed S]\n"
       "\n"
       "Per group (default --by family,target,form,model): feasible instances, greedy pass rate,\n"
       "pass@k (k in 1,5,10,20,50,100, k <= samples; unbiased estimator) with 95% bootstrap intervals,\n"
       "for --until-pass runs the pass rate within budget and attempts to first pass, the failure\n"
       "breakdown (infra apart), latency quantiles, and register quality against the compiler. The\n"
       "markdown output starts with the paper's Table 2 (pass rate = the greedy attempt, Pass@K = a\n"
       "pass among the first K attempts as observed, attempts until the first pass). With several\n"
       "variants (models, or several runs) on the same instances, each is compared with the first:\n"
       "paired bootstrap intervals on the differences and McNemar's test on greedy pass. --plots\n"
       "writes PNG+SVG figures with gnuplot. Output is deterministic (bootstrap seeded by --seed). See docs/report.md.");
}

static const char *run_path(const char *arg, char *buf, size_t n) {
  struct stat sb;
  if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    snprintf(buf, n, "%s/run.h5", arg);
    return buf;
  }
  return arg;
}

/* Label of a run among several: its directory's last component. */
static void run_label(const char *arg, char *buf, size_t n) {
  snprintf(buf, n, "%s", arg);
  size_t l = strlen(buf);
  while (l > 1 && buf[l - 1] == '/') buf[--l] = 0;
  if (l > 7 && !strcmp(buf + l - 7, "/run.h5")) buf[l -= 7] = 0;
  const char *s = strrchr(buf, '/');
  if (s) memmove(buf, s + 1, strlen(s + 1) + 1);
  l = strlen(buf);
  if (l > 3 && !strcmp(buf + l - 3, ".h5")) buf[l - 3] = 0; /* a run file given directly */
}

int rs_cmd_report(int argc, char **argv) {
  const char *runs[64], *plots = NULL;
  int nruns = 0, fmt = RS_FMT_MD, by = RS_BY_DEFAULT;
  uint64_t seed = RS_BOOT_SEED;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--by") && i + 1 < argc) {
      if ((by = rs_by_parse(argv[++i])) < 0) {
        fprintf(stderr, "regsweep report: --by takes family,target,form,model,split\n");
        return 2;
      }
    } else if (!strcmp(a, "--format") && i + 1 < argc) {
      a = argv[++i];
      if (!strcmp(a, "md")) fmt = RS_FMT_MD;
      else if (!strcmp(a, "csv")) fmt = RS_FMT_CSV;
      else if (!strcmp(a, "json")) fmt = RS_FMT_JSON;
      else {
        fprintf(stderr, "regsweep report: --format md|csv|json\n");
        return 2;
      }
    } else if (!strcmp(a, "--plots") && i + 1 < argc) plots = argv[++i];
    else if (!strcmp(a, "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
    else if (a[0] != '-' && nruns < 64) runs[nruns++] = a;
    else {
      rs_usage_report();
      return 2;
    }
  }
  if (!nruns) {
    rs_usage_report();
    return 2;
  }
  rs_results res;
  memset(&res, 0, sizeof res);
  rs_infra inf = {0}; /* why infra attempts got no answer, by reason */
  rs_err e = {{0}};
  for (int i = 0; i < nruns; i++) {
    char buf[1200], lab[256];
    const char *p = run_path(runs[i], buf, sizeof buf);
    rs_runfile *f = rs_runfile_open(p, &e);
    if (!f) {
      fprintf(stderr, "regsweep report: %s\n", e.msg);
      rs_results_free(&res);
      return 2;
    }
    run_label(runs[i], lab, sizeof lab);
    uint16_t base = (uint16_t)res.nvar;
    int rc = rs_results_load_run(&res, f, nruns > 1 ? lab : NULL, &e);
    if (!rc) rc = rs_infra_load(&inf, f, base, &e);
    rs_runfile_close(f, &e);
    if (rc) {
      fprintf(stderr, "regsweep report: %s: %s\n", p, e.msg);
      rs_results_free(&res);
      rs_infra_free(&inf);
      return 2;
    }
  }
  rs_group *g = NULL;
  uint32_t ng = rs_results_group(&res, (unsigned)by, seed, &g);
  rs_comparison *c = NULL;
  uint32_t nc = res.nvar > 1 ? rs_compare(&res, (unsigned)by, seed, &c) : 0;
  /* rs_compare re-sorted the outcomes the groups point into: regroup (same seed, same numbers) */
  free(g);
  ng = rs_results_group(&res, (unsigned)by, seed, &g);
  if (fmt == RS_FMT_JSON) {
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddItemToObject(doc, "groups", rs_groups_json(&res, g, ng, (unsigned)by));
    cJSON_AddItemToObject(doc, "comparisons", rs_compare_json(&res, c, nc, (unsigned)by));
    char *s = cJSON_Print(doc);
    printf("%s\n", s);
    cJSON_free(s);
    cJSON_Delete(doc);
  } else {
    rs_groups_print(&res, g, ng, (unsigned)by, fmt, stdout);
    if (fmt == RS_FMT_MD && inf.total) {
      const char **names = rs_xcalloc(res.nvar + 1, sizeof *names);
      for (uint32_t v = 0; v < res.nvar; v++) names[v] = res.var[v].name;
      printf("\n");
      rs_infra_print(&inf, names, res.nvar, 20, stdout);
      free(names);
    }
    if (nc) {
      printf("\n");
      if (fmt == RS_FMT_MD) printf("## Comparisons (each variant against the first)\n\n");
      rs_compare_print(&res, c, nc, (unsigned)by, fmt, stdout);
    }
  }
  free(c);
  free(g);
  int status = 0;
  if (plots) {
    int n = rs_plots_write(&res, plots, &e);
    if (n < 0) {
      fprintf(stderr, "regsweep report: plots: %s\n", e.msg);
      status = 1;
    } else fprintf(stderr, "regsweep report: %d figures in %s (PNG + SVG)\n", n, plots);
  }
  rs_results_free(&res);
  rs_infra_free(&inf);
  return status;
}
