/* bench_run_h5.c - throughput and size of run files (storage/run_h5.c).
 *
 * Two shapes of attempt rows, each written, read back sequentially, then read at random:
 *   bare   - fixed fields only (candidate and diag NULL: a sweep that does not keep texts);
 *   texts  - plus a candidate like a model's answer, a JSON map of ~300 entries
 *            ({"v0":"v[4:5]",...}, ~4 KB), and a ~100-byte diagnostic.
 * Texts are drawn from a pre-built pool (1024 distinct ones) so generation is not timed.
 * Figures: rows/s written, rows/s read (sequential, random), file bytes per attempt.
 *
 * usage: bench_run_h5 [--quick] [--rows N] [--text-rows N] [--dir DIR]   (defaults 1000000, 200000, /tmp;
 *        --quick: 20000, 2000) */
#include "bench/bench.h"
#include "storage/run.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define POOL 1024

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static char *gen_candidate(uint64_t *s, int n) {
  size_t cap = (size_t)n * 32 + 16, len = 0;
  char *t = rs_xmalloc(cap);
  t[len++] = '{';
  for (int i = 0; i < n; i++) {
    unsigned r = (unsigned)(rnd(s) % 256), w = 1 + (unsigned)(rnd(s) % 4);
    if (w == 1)
      len += (size_t)snprintf(t + len, cap - len, "%s\"v%d\":\"v%u\"", i ? "," : "", i, r);
    else
      len += (size_t)snprintf(t + len, cap - len, "%s\"v%d\":\"v[%u:%u]\"", i ? "," : "", i, r,
                              r + w - 1);
  }
  t[len++] = '}';
  t[len] = 0;
  return t;
}

static void fill(uint64_t *s, uint64_t i, rs_attempt *a) {
  memset(a, 0, sizeof *a);
  snprintf(a->instance, sizeof a->instance, "fa/bm%u_bn%u_d%u/gfx90a/prera",
           (unsigned)(16 << (i / 10 % 4)), (unsigned)(32 << (i / 40 % 3)), (unsigned)(i / 10));
  a->inst_index = (uint32_t)(i / 10);
  a->model = (uint16_t)(i / 7 % 3);
  a->attempt = (uint32_t)(i % 10);
  a->seed = rnd(s);
  a->verdict = (uint8_t)(rnd(s) % 6);
  a->finish = (uint8_t)(rnd(s) % 3);
  a->wrapped = (uint8_t)(rnd(s) % 2);
  if (a->verdict) a->counts[rnd(s) % RS_RUN_NKINDS] = (uint32_t)(1 + rnd(s) % 20);
  a->used[0] = (uint32_t)(rnd(s) % 256);
  a->used[1] = (uint32_t)(rnd(s) % 104);
  a->occupancy = (uint32_t)(1 + rnd(s) % 8);
  a->infer_s = (double)(rnd(s) % 100000) * 1e-4;
  a->verify_s = (double)(rnd(s) % 100000) * 1e-7;
  a->prompt_tokens = (uint32_t)(2000 + rnd(s) % 20000);
  a->completion_tokens = (uint32_t)(500 + rnd(s) % 4000);
  a->rank = (uint32_t)(1 + i % 63);
}

static int run(const char *dir, const char *label, uint64_t n, char **cands, char **diags) {
  char path[512];
  snprintf(path, sizeof path, "%s/bench_run_%s_%d.h5", dir, label, (int)getpid());
  rs_err e = {{0}};
  uint64_t s = 42;
  double text_bytes = 0;
  double t0 = now_s();
  rs_runfile *f = rs_runfile_create(path, &e);
  if (!f) {
    fprintf(stderr, "%s\n", e.msg);
    return 1;
  }
  for (uint64_t i = 0; i < n; i++) {
    rs_attempt a;
    fill(&s, i, &a);
    if (cands) {
      a.candidate = cands[rnd(&s) % POOL];
      a.diag = a.verdict ? diags[rnd(&s) % POOL] : NULL;
      text_bytes += (double)strlen(a.candidate) + (a.diag ? (double)strlen(a.diag) : 0);
    }
    if (rs_runfile_append(f, &a, &e) < 0) {
      fprintf(stderr, "%s\n", e.msg);
      rs_runfile_close(f, &e);
      return 1;
    }
  }
  for (uint64_t i = 0; i < n / 10; i++) {
    rs_summary sm;
    memset(&sm, 0, sizeof sm);
    snprintf(sm.instance, sizeof sm.instance, "fa/x%" PRIu64 "/gfx90a/prera", i);
    sm.inst_index = (uint32_t)i;
    sm.attempts = 10;
    sm.first_pass = -1;
    if (rs_runfile_add_summary(f, &sm, &e) < 0) break;
  }
  if (rs_runfile_close(f, &e) < 0) {
    fprintf(stderr, "%s\n", e.msg);
    return 1;
  }
  double tw = now_s() - t0;
  struct stat st;
  stat(path, &st);

  t0 = now_s();
  f = rs_runfile_open(path, &e);
  if (!f) {
    fprintf(stderr, "%s\n", e.msg);
    return 1;
  }
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; i++) {
    rs_attempt a;
    if (rs_runfile_get(f, i, &a, 1, &e) < 0) {
      fprintf(stderr, "%s\n", e.msg);
      break;
    }
    sum += a.attempt + (a.candidate ? strlen(a.candidate) : 0);
    rs_attempt_clear(&a);
  }
  double tr = now_s() - t0;
  uint64_t nrand = n < 20000 ? n : 20000;
  s = 9;
  t0 = now_s();
  for (uint64_t j = 0; j < nrand; j++) {
    rs_attempt a;
    if (rs_runfile_get(f, rnd(&s) % n, &a, 1, &e) < 0) break;
    sum += a.seed;
    rs_attempt_clear(&a);
  }
  double trr = now_s() - t0;
  rs_runfile_close(f, &e);
  unlink(path);

  printf("%-6s rows %9" PRIu64 "  text %7.1f MB  write %9.0f rows/s  read seq %9.0f rows/s  "
         "read random %8.0f rows/s  file %8.1f MB  %7.1f bytes/attempt%s (%" PRIu64 ")\n",
         label, n, text_bytes / 1e6, (double)n / tw, (double)n / tr, (double)nrand / trr,
         (double)st.st_size / 1e6, (double)st.st_size / (double)n,
         cands ? "" : "", sum % 10);
  if (cands)
    printf("       texts: %.0f bytes/attempt raw -> %.1f stored (whole file, %.1fx)\n",
           text_bytes / (double)n, (double)st.st_size / (double)n,
           text_bytes / (double)st.st_size);
  return 0;
}

int main(int argc, char **argv) {
  bool quick = rs_bench_take_flag(&argc, argv, "--quick");
  uint64_t rows = quick ? 20000 : 1000000, text_rows = quick ? 2000 : 200000;
  const char *dir = "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--rows"))
      rows = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--text-rows"))
      text_rows = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--dir"))
      dir = argv[i + 1];
    else {
      fprintf(stderr, "usage: %s [--quick] [--rows N] [--text-rows N] [--dir DIR]\n", argv[0]);
      return 2;
    }
  }
  uint64_t s = 1;
  char **cands = rs_xmalloc(POOL * sizeof *cands), **diags = rs_xmalloc(POOL * sizeof *diags);
  double clen = 0;
  for (int i = 0; i < POOL; i++) {
    cands[i] = gen_candidate(&s, 280 + (int)(rnd(&s) % 40));
    clen += (double)strlen(cands[i]);
    char d[160];
    snprintf(d, sizeof d, "conflict: v%u and v%u share v%u (both live at instruction %u, bb.%u)",
             (unsigned)(rnd(&s) % 300), (unsigned)(rnd(&s) % 300), (unsigned)(rnd(&s) % 256),
             (unsigned)(rnd(&s) % 5000), (unsigned)(rnd(&s) % 40));
    diags[i] = rs_xstrndup(d, strlen(d));
  }
  printf("candidate texts: %.0f bytes on average (~300-entry JSON maps); diag ~%zu bytes\n",
         clen / POOL, strlen(diags[0]));
  int rc = run(dir, "bare", rows, NULL, NULL);
  if (!rc && text_rows) rc = run(dir, "texts", text_rows, cands, diags);
  for (int i = 0; i < POOL; i++) {
    free(cands[i]);
    free(diags[i]);
  }
  free(cands);
  free(diags);
  return rc;
}
