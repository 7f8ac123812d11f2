/* bench_sass_free.c - `regalloc --free` over every SASS kernel available: the fixtures
 * (tests/fixtures/sass, every .sass) and the instances of form `sass` of any corpus given. Per family x
 * arch: R registers before (ptxas) / after (ours), occupancy before / after, kernels with fewer /
 * equal / more R than ptxas, the Problem's R pressure bound, colouring and validation time per
 * kernel, measured side by side in one run (the machine is noisy). Every recolouring is
 * validated (sass/free_check.c); a kernel that fails validation counts as `invalid`, never as a
 * win. Issue 14's goal: <= ptxas on >= 90% of kernels and fewer on >= 30%.
 *   build/bench/bench_sass_free [--quick] [--fixtures DIR] [corpus.h5 ...] */
#include "analysis/problem.h"
#include "sass/free.h"
#include "storage/corpus.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char family[48], arch[16];
  uint32_t n, fewer, equal, more, invalid;
  double before, after, occ_before, occ_after, bound, t_colour, t_check;
} row;

typedef struct {
  row rows[64];
  uint32_t nrows, refused;
  bool quick;
} bench;

static row *row_of(bench *b, const char *family, const char *arch) {
  for (uint32_t k = 0; k < b->nrows; k++)
    if (!strcmp(b->rows[k].family, family) && !strcmp(b->rows[k].arch, arch)) return &b->rows[k];
  if (b->nrows == 64) return &b->rows[63];
  row *r = &b->rows[b->nrows++];
  memset(r, 0, sizeof *r);
  snprintf(r->family, sizeof r->family, "%s", family);
  snprintf(r->arch, sizeof r->arch, "%s", arch);
  return r;
}

/* Recolour and validate every function of m; `ptxas` is the compiler's count when known (else
 * the listing's own highest R + 3, which equals it on every fixture). */
static void run_module(bench *b, rs_module *m, const char *family, unsigned ptxas) {
  rs_err e = {{0}};
  rs_preg **a = rs_xcalloc(m->nfuncs + 1, sizeof *a);
  rs_sass_free_stats *st = rs_xcalloc(m->nfuncs + 1, sizeof *st);
  double tc = rs_now();
  bool bad = false;
  for (uint32_t k = 0; k < m->nfuncs; k++) {
    const rs_func *f = m->funcs[k];
    a[k] = rs_xcalloc(f->nvregs + 1, sizeof **a);
    rs_problem *p = rs_problem_build(f, &e);
    if (!p) {
      fprintf(stderr, "%s: %s\n", m->path, e.msg);
      bad = true;
      continue;
    }
    rs_sass_free_colour(f, p, b->quick, a[k], &st[k]);
    rs_problem_free(p);
  }
  tc = rs_now() - tc;
  double tv = rs_now();
  char *text = rs_sass_free_write(m, a);
  unsigned *after = rs_xcalloc(m->nfuncs + 1, sizeof *after);
  rs_sass_free_fail fails[2];
  uint32_t nf = bad ? UINT32_MAX : rs_sass_free_check(m, text, fails, 2, after, &e);
  tv = rs_now() - tv;
  if (nf) fprintf(stderr, "%s: INVALID: %s\n", m->path, nf == UINT32_MAX ? e.msg : fails[0].what);
  for (uint32_t k = 0; k < m->nfuncs; k++) { /* one kernel per function (entry or not) */
    row *r = row_of(b, family, m->funcs[k]->tgt->name);
    unsigned before = ptxas && m->nfuncs == 1 ? ptxas : st[k].r_before;
    r->n++;
    r->t_colour += tc / m->nfuncs;
    r->t_check += tv / m->nfuncs;
    if (nf) {
      r->invalid++;
      continue;
    }
    r->before += before;
    r->after += after[k];
    r->occ_before += st[k].occ_before;
    r->occ_after += st[k].occ_after;
    r->bound += st[k].r_bound;
    if (after[k] < before) r->fewer++;
    else if (after[k] == before) r->equal++;
    else r->more++;
  }
  free(after);
  free(text);
  for (uint32_t k = 0; k < m->nfuncs; k++) free(a[k]);
  free(a);
  free(st);
}

static int by_name(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

static void run_fixtures(bench *b, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  char **names = NULL;
  uint32_t n = 0, cap = 0;
  for (struct dirent *de; (de = readdir(d));) {
    size_t l = strlen(de->d_name);
    if (l > 5 && !strcmp(de->d_name + l - 5, ".sass")) RS_PUSH(names, n, cap, rs_xstrndup(de->d_name, l));
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, by_name);
  for (uint32_t i = 0; i < n; i++) {
    char path[1200], vpath[1200], family[48];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    snprintf(family, sizeof family, "%.*s", (int)strcspn(names[i], "."), names[i]);
    snprintf(vpath, sizeof vpath, "%s/%.*s.ptxas-v.txt", dir, (int)(strlen(names[i]) - 5), names[i]);
    rs_err e = {{0}};
    size_t len;
    char *v = rs_read_file(vpath, &len, &e);
    unsigned ptxas = 0;
    const char *u = v ? strstr(v, "Used ") : NULL;
    if (u) sscanf(u, "Used %u registers", &ptxas);
    free(v);
    rs_module *m = rs_module_load(path, NULL, &e);
    if (!m) {
      printf("refused (parser): %s\n", e.msg);
      b->refused++;
    } else {
      run_module(b, m, family, ptxas);
      rs_module_free(m);
    }
    free(names[i]);
  }
  free(names);
}

static int run_corpus(bench *b, const char *path) {
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(path, &e);
  if (!c) return fprintf(stderr, "%s\n", e.msg), 2;
  uint64_t used = 0;
  for (uint64_t i = 0; i < rs_corpus_count(c); i++) {
    rs_instance in;
    if (rs_corpus_get(c, i, &in, 1, &e)) {
      fprintf(stderr, "%s\n", e.msg);
      break;
    }
    if (!strcmp(in.form, "sass") && in.raw) {
      size_t n = strlen(in.raw);
      rs_module *m = rs_module_parse(in.id, rs_xstrndup(in.raw, n), n, RS_SRC_SASS, in.target, &e);
      if (!m) {
        printf("refused (parser): %s\n", e.msg);
        b->refused++;
      } else {
        run_module(b, m, in.family, in.ref_regs[0]);
        rs_module_free(m);
        used++;
      }
    }
    rs_instance_clear(&in);
  }
  printf("%s: %llu instances of form sass\n", path, (unsigned long long)used);
  rs_corpus_close(c, &e);
  return 0;
}

int main(int argc, char **argv) {
  bench *b = rs_xcalloc(1, sizeof *b);
  const char *fixtures = "tests/fixtures/sass";
  int rc = 0;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--quick")) b->quick = true;
    else if (!strcmp(argv[i], "--fixtures") && i + 1 < argc) fixtures = argv[++i];
  run_fixtures(b, fixtures);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) continue;
    if (!strcmp(argv[i], "--fixtures")) { i++; continue; }
    rc |= run_corpus(b, argv[i]);
  }
  printf("\nregalloc --free%s: R registers per kernel (ptxas -v style), means per family x arch\n",
         b->quick ? " --quick" : "");
  printf("%-20s %-6s %4s %8s %8s %7s %10s %6s %6s %5s %5s %10s %10s\n", "family", "arch", "n", "R ptxas", "R ours",
         "bound", "occupancy", "fewer", "equal", "more", "inval", "colour ms", "check ms");
  uint32_t N = 0, F = 0, E = 0, M = 0, I = 0;
  double tc = 0, tv = 0, saved = 0;
  for (uint32_t k = 0; k < b->nrows; k++) {
    row *r = &b->rows[k];
    uint32_t ok = r->n - r->invalid;
    double d = ok ? ok : 1;
    char occ[24];
    snprintf(occ, sizeof occ, "%.0f->%.0f", r->occ_before / d, r->occ_after / d);
    printf("%-20s %-6s %4u %8.1f %8.1f %7.1f %10s %6u %6u %5u %5u %10.0f %10.0f\n", r->family, r->arch, r->n,
           r->before / d, r->after / d, r->bound / d, occ, r->fewer, r->equal, r->more, r->invalid,
           1e3 * r->t_colour / r->n, 1e3 * r->t_check / r->n);
    N += r->n, F += r->fewer, E += r->equal, M += r->more, I += r->invalid;
    tc += r->t_colour, tv += r->t_check, saved += r->before - r->after;
  }
  double dn = N ? N : 1;
  printf("\nkernels %u (refused by the parser: %u): fewer R than ptxas %u (%.0f%%), equal %u, more %u, invalid %u\n", N,
         b->refused, F, 100.0 * F / dn, E, M, I);
  printf("<= ptxas on %.0f%% (goal >= 90%%), fewer on %.0f%% (goal >= 30%%); %.1f R registers saved per kernel; "
         "%.0f ms colouring + %.0f ms validation per kernel\n",
         100.0 * (F + E) / dn, 100.0 * F / dn, (N - I) ? saved / (N - I) : 0, 1e3 * tc / dn, 1e3 * tv / dn);
  free(b);
  return rc ? rc : I ? 1 : 0;
}
