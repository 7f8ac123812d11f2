/* plots.c - data files + gnuplot scripts, rendered by running gnuplot on each script (the
 * scripts stay beside the images so a figure can be restyled without rerunning the report). */
#include "report/plots.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A gnuplot single-quoted string: ' doubles. */
static void gq(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    fputc(*s, f);
  }
  fputc('\'', f);
}

/* File-name-safe copy of s. */
static void safe(char *dst, size_t n, const char *s) {
  size_t i = 0;
  for (; s[i] && i + 1 < n; i++) {
    char ch = s[i];
    dst[i] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ? ch : '_';
  }
  dst[i] = 0;
}

static FILE *open_in(const char *dir, const char *name, rs_err *e) {
  char p[1200];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  if (!f) rs_errf(e, p, 0, "%s", strerror(errno));
  return f;
}

/* Both terminals: the script renders itself twice. */
static void gp_head(FILE *g, const char *name, const char *size) {
  fprintf(g, "# regenerate: gnuplot %s.gp\nset encoding utf8\nset terminal pngcairo size %s font ',10' noenhanced\n"
             "set output '%s.png'\nset key outside right top\nset grid\n", name, size, name);
}
/* the PNG is drawn by the script's plot command; the SVG replots it */
static void gp_render(FILE *g, const char *name, const char *size) {
  fprintf(g, "set terminal svg size %s dynamic font 'sans,10' noenhanced\nset output '%s.svg'\nreplot\nset output\n",
          size, name);
}

static int run_gnuplot(const char *dir, const char *name, rs_err *e) {
  char script[256];
  snprintf(script, sizeof script, "%s.gp", name);
  pid_t pid = fork();
  if (pid < 0) return rs_errf(e, NULL, 0, "fork: %s", strerror(errno));
  if (pid == 0) { /* gnuplot resolves the scripts' relative outputs inside dir */
    if (chdir(dir)) _exit(126);
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(st) || WEXITSTATUS(st))
    return rs_errf(e, NULL, 0, "gnuplot %s/%s failed (status %d%s)", dir, script, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                   WIFEXITED(st) && WEXITSTATUS(st) == 127 ? ": gnuplot not installed?" : "");
  return 0;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* pass@k against k, one line per model, one figure per family (bootstrap intervals as bars). */
static int plot_passk(rs_results *r, const char *dir, rs_err *e) {
  rs_group *g = NULL;
  uint32_t ng = rs_results_group(r, RS_BY_FAMILY | RS_BY_MODEL, RS_BOOT_SEED, &g);
  int figs = 0, rc = 0;
  for (uint32_t i = 0; i < ng && !rc;) {
    uint32_t j = i;
    while (j < ng && !strcmp(g[j].key->family, g[i].key->family)) j++;
    char fam[64], name[96];
    safe(fam, sizeof fam, g[i].key->family);
    snprintf(name, sizeof name, "passk_%s", fam);
    char dn[128];
    snprintf(dn, sizeof dn, "%s.dat", name);
    char gn[128];
    snprintf(gn, sizeof gn, "%s.gp", name);
    FILE *d = open_in(dir, dn, e), *s = d ? open_in(dir, gn, e) : NULL;
    if (!d || !s) {
      if (d) fclose(d);
      rc = -1;
      break;
    }
    gp_head(s, name, "800,500");
    fprintf(s, "set title 'pass@k, %s (95%% bootstrap intervals)'\nset xlabel 'k'\nset ylabel 'pass@k'\n"
               "set logscale x 2\nset yrange [0:1.05]\nset xrange [0.8:*]\nplot ", g[i].key->family);
    for (uint32_t q = i; q < j; q++) {
      fprintf(d, "# %s\n", rs_results_model(r, g[q].key->model));
      for (int k = 0; k < RS_NK; k++)
        if (g[q].pk[k].n) fprintf(d, "%u %.6f %.6f %.6f\n", rs_table_ks[k], g[q].pk[k].est, g[q].pk[k].lo, g[q].pk[k].hi);
      fprintf(d, "\n\n");
      fprintf(s, "%s'%s' index %u using 1:2:3:4 with yerrorlines title ", q > i ? ", \\\n  " : "", dn, q - i);
      gq(s, rs_results_model(r, g[q].key->model));
    }
    fprintf(s, "\n");
    gp_render(s, name, "800,500");
    fclose(d);
    fclose(s);
    rc = run_gnuplot(dir, name, e);
    figs++;
    i = j;
  }
  free(g);
  return rc ? -1 : figs;
}

/* CDF of inference and verification latency per model (at most 1000 points a curve). */
static int plot_latency(rs_results *r, const char *dir, rs_err *e) {
  uint32_t nm = 0;
  for (uint32_t i = 0; i < r->n; i++)
    if (r->o[i].model + 1u > nm) nm = r->o[i].model + 1u;
  FILE *d = open_in(dir, "latency_cdf.dat", e);
  if (!d) return -1;
  double *v = rs_xmalloc(sizeof *v * (r->nlat ? r->nlat : 1));
  uint32_t blocks = 0;
  uint16_t *bm = rs_xcalloc(2 * (nm ? nm : 1), sizeof *bm);
  for (int w = 0; w < 2; w++)
    for (uint32_t m = 0; m < nm; m++) {
      uint64_t n = 0;
      for (uint64_t i = 0; i < r->nlat; i++)
        if (r->o[r->lat_o[i]].model == m) v[n++] = r->lat[2 * i + w];
      if (!n) continue;
      qsort(v, n, sizeof *v, cmpd);
      fprintf(d, "# %s %s\n", w ? "verify" : "infer", rs_results_model(r, m));
      uint64_t step = n > 1000 ? n / 1000 : 1;
      for (uint64_t i = 0; i < n; i += step) fprintf(d, "%.6g %.6f\n", v[i], (double)(i + 1) / n);
      fprintf(d, "%.6g 1\n\n\n", v[n - 1]);
      bm[blocks++] = (uint16_t)(w * 32768 + m);
    }
  fclose(d);
  free(v);
  FILE *s = open_in(dir, "latency_cdf.gp", e);
  if (!s) {
    free(bm);
    return -1;
  }
  gp_head(s, "latency_cdf", "1200,450");
  /* two panels in one figure: multiplot cannot be replotted, so the plot is a macro run twice */
  fprintf(s, "set ylabel 'fraction of attempts'\nset yrange [0:1]\nset key inside bottom right\n");
  fprintf(s, "draw = \"set multiplot layout 1,2; ");
  for (int w = 0; w < 2; w++) {
    fprintf(s, "set title '%s latency CDF'; set xlabel 'seconds'; plot ", w ? "verification" : "inference");
    bool first = true;
    for (uint32_t b = 0; b < blocks; b++)
      if (bm[b] / 32768 == (unsigned)w) {
        fprintf(s, "%s'latency_cdf.dat' index %u using 1:2 with lines lw 2 title ", first ? "" : ", ", b);
        /* titles inside the macro string: single-quoted, escaped for both levels */
        fputc('\'', s);
        for (const char *p = rs_results_model(r, bm[b] % 32768); *p; p++) {
          if (*p == '\'') fputs("''", s);
          else if (*p == '"' || *p == '\\') fprintf(s, "\\%c", *p);
          else fputc(*p, s);
        }
        fputc('\'', s);
        first = false;
      }
    fprintf(s, "; ");
  }
  fprintf(s, "unset multiplot\"\n"
             "@draw\nset terminal svg size 1200,450 dynamic font 'sans,10' noenhanced\n"
             "set output 'latency_cdf.svg'\n@draw\nset output\n");
  fclose(s);
  free(bm);
  return run_gnuplot(dir, "latency_cdf", e) ? -1 : 1;
}

/* Failure breakdown per model: shares of verified attempts by verdict, infra apart (stacked). */
static int plot_failures(rs_results *r, const char *dir, rs_err *e) {
  rs_group *g = NULL;
  uint32_t ng = rs_results_group(r, RS_BY_MODEL, RS_BOOT_SEED, &g);
  FILE *d = open_in(dir, "failures.dat", e);
  if (!d) {
    free(g);
    return -1;
  }
  fprintf(d, "# model syntax dataflow hardware timeout infra\n");
  for (uint32_t i = 0; i < ng; i++) {
    double tot = (double)(g[i].nattempts + g[i].infra);
    if (tot <= 0) tot = 1;
    fputc('"', d);
    for (const char *p = rs_results_model(r, g[i].key->model); *p; p++) fputc(*p == '"' ? '\'' : *p, d);
    fputc('"', d);
    for (int v = 1; v < 5; v++) fprintf(d, " %.6f", g[i].fails[v] / tot);
    fprintf(d, " %.6f\n", g[i].infra / tot);
  }
  fclose(d);
  free(g);
  FILE *s = open_in(dir, "failures.gp", e);
  if (!s) return -1;
  gp_head(s, "failures", "900,500");
  fprintf(s, "set title 'failed attempts by verdict (share of all attempts; infra is not a model failure)'\n"
             "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
             "set boxwidth 0.6\nset ylabel 'share of attempts'\nset yrange [0:*]\nset xtics rotate by -20\n"
             "plot 'failures.dat' using 2:xtic(1) title 'syntax', '' using 3 title 'dataflow', "
             "'' using 4 title 'hardware', '' using 5 title 'timeout', '' using 6 title 'infra' fs pattern 4\n");
  gp_render(s, "failures", "900,500");
  fclose(s);
  return run_gnuplot(dir, "failures", e) ? -1 : 1;
}

/* Registers used by the best passing answer against the compiler's, per model (first file). */
static int plot_regs(rs_results *r, const char *dir, rs_err *e) {
  rs_results_sort(r, RS_BY_MODEL);
  FILE *d = open_in(dir, "regs.dat", e);
  if (!d) return -1;
  uint32_t blocks = 0, pts = 0;
  int32_t cur = -1;
  uint16_t *bm = NULL;
  uint32_t bcap = 0;
  for (uint32_t i = 0; i < r->n; i++) {
    const rs_outcome *o = &r->o[i];
    if (!o->has_ref || o->first_pass < 0 || o->best_used[0] == UINT32_MAX) continue;
    if (o->model != cur) {
      if (cur >= 0) fprintf(d, "\n\n");
      fprintf(d, "# %s\n", rs_results_model(r, o->model));
      RS_PUSH(bm, blocks, bcap, o->model);
      cur = o->model;
    }
    fprintf(d, "%u %u\n", rs_occ_regs(o->target, o->ref_regs), rs_occ_regs(o->target, o->best_used));
    pts++;
  }
  fclose(d);
  if (!pts) {
    free(bm);
    return 0; /* no corpus facts: nothing to draw */
  }
  FILE *s = open_in(dir, "regs.gp", e);
  if (!s) {
    free(bm);
    return -1;
  }
  gp_head(s, "regs", "700,600");
  fprintf(s, "set title 'registers used (best passing answer) vs the compiler (VGPR+AGPR / R)'\n"
             "set xlabel 'compiler (LLVM / ptxas)'\nset ylabel 'model'\nset size square\nset xrange [0:*]\n"
             "set yrange [0:*]\nplot x title 'y = x' with lines dt 2 lc rgb 'gray'");
  for (uint32_t b = 0; b < blocks; b++) {
    fprintf(s, ", 'regs.dat' index %u using ($1+%.2f):2 with points pt %u title ", b, 0.15 * b, 6 + 2 * b);
    gq(s, rs_results_model(r, bm[b]));
  }
  fprintf(s, "\n");
  gp_render(s, "regs", "700,600");
  fclose(s);
  free(bm);
  return run_gnuplot(dir, "regs", e) ? -1 : 1;
}

int rs_plots_write(rs_results *r, const char *dir, rs_err *e) {
  if (mkdir(dir, 0777) && errno != EEXIST) return rs_errf(e, dir, 0, "mkdir: %s", strerror(errno));
  int total = 0, n;
  if ((n = plot_passk(r, dir, e)) < 0) return -1;
  total += n;
  if ((n = plot_latency(r, dir, e)) < 0) return -1;
  total += n;
  if ((n = plot_failures(r, dir, e)) < 0) return -1;
  total += n;
  if ((n = plot_regs(r, dir, e)) < 0) return -1;
  return total + n;
}
