/* test_run_h5.c - storage/run_h5.c: write attempts + summaries + attributes, read them back
 * exactly (NULL vs "" texts, a 1 MB text, quotes/newlines/UTF-8), random access, h5dump reads
 * the file, broken files are rejected with a message naming them, and write errors (a full disk,
 * simulated with RLIMIT_FSIZE) reach the caller of append/close. */
#include "check.h"
#include "storage/run.h"
#include <fcntl.h>
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define NATT 5000
#define NSUM 400
#define BIGROW 2500

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A candidate like a model's answer: {"v0":"v[4:5]",...} with n entries. */
static char *gen_candidate(uint64_t *s, int n) {
  size_t cap = (size_t)n * 32 + 64, len = 0;
  char *t = malloc(cap);
  t[len++] = '{';
  for (int i = 0; i < n; i++) {
    unsigned r = (unsigned)(rnd(s) % 250);
    len += (size_t)snprintf(t + len, cap - len, "%s\"v%d\":\"v[%u:%u]\"", i ? "," : "", i, r,
                            r + 1 + (unsigned)(rnd(s) % 4));
  }
  t[len++] = '}';
  t[len] = 0;
  return t;
}

static char *dupstr(const char *s) { return s ? strcpy(malloc(strlen(s) + 1), s) : NULL; }

static void make_attempt(uint64_t *s, int i, rs_attempt *a) {
  memset(a, 0, sizeof *a);
  snprintf(a->instance, sizeof a->instance, "%s/bm%d_\"q\"_\u00e9/%s/prera", i % 2 ? "sgemm" : "fa",
           i / 10, i % 3 ? "gfx90a" : "sm_90");
  a->inst_index = (uint32_t)(i / 10);
  a->model = (uint16_t)(i % 3 == 0 ? 65535 : i % 3);
  a->attempt = (uint32_t)(i % 10);
  a->seed = rnd(s);
  a->verdict = (uint8_t)(i % 6);
  a->finish = (uint8_t)(i % 4);
  a->wrapped = (uint8_t)(i % 2);
  for (int k = 0; k < RS_RUN_NKINDS; k++) a->counts[k] = (uint32_t)rnd(s);
  for (int k = 0; k < RS_RUN_NFILES; k++) a->used[k] = (uint32_t)(rnd(s) % 513);
  a->occupancy = (uint32_t)(i % 9);
  a->infer_s = (double)(rnd(s) % 1000000) / 7.0;
  a->verify_s = (double)rnd(s) * 1e-30;
  a->prompt_tokens = UINT32_MAX;
  a->completion_tokens = (uint32_t)rnd(s);
  a->rank = (uint32_t)(i % 64);
  if (i % 7 == 0)
    a->candidate = NULL;
  else if (i % 11 == 0)
    a->candidate = dupstr("");
  else if (i == BIGROW) {
    a->candidate = malloc((1u << 20) + 1);
    for (size_t j = 0; j < (1u << 20); j++) a->candidate[j] = (char)('!' + (j * 7 + j / 97) % 90);
    a->candidate[1u << 20] = 0;
  } else if (i % 13 == 0)
    a->candidate = dupstr("Sure! Here is the map:\n```json\n{\"v0\": \"v[0]\", \"v1\": \"s\\\"q\"}\n"
                          "```\n\u2192 done \u00e9\u03b1\t\U0001F600\r\n");
  else
    a->candidate = gen_candidate(s, 20 + (int)(rnd(s) % 40));
  if (a->verdict == 0)
    a->diag = NULL;
  else if (i % 5 == 0)
    a->diag = dupstr("");
  else {
    char d[200];
    snprintf(d, sizeof d, "conflict: \"v%u\" and \"v%u\" share v[%u]\nline 2 \u00e9", (unsigned)i,
             (unsigned)(i + 1), (unsigned)(i % 100));
    a->diag = dupstr(d);
  }
}

static int same_text(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

static int same_fixed(const rs_attempt *a, const rs_attempt *b) {
  int ok = !strcmp(a->instance, b->instance) && a->inst_index == b->inst_index &&
           a->model == b->model && a->attempt == b->attempt && a->seed == b->seed &&
           a->verdict == b->verdict && a->finish == b->finish && a->wrapped == b->wrapped &&
           a->occupancy == b->occupancy && a->infer_s == b->infer_s &&
           a->verify_s == b->verify_s && a->prompt_tokens == b->prompt_tokens &&
           a->completion_tokens == b->completion_tokens && a->rank == b->rank;
  for (int k = 0; k < RS_RUN_NKINDS; k++) ok = ok && a->counts[k] == b->counts[k];
  for (int k = 0; k < RS_RUN_NFILES; k++) ok = ok && a->used[k] == b->used[k];
  return ok;
}

static void make_summary(int i, rs_summary *s) {
  memset(s, 0, sizeof *s);
  snprintf(s->instance, sizeof s->instance, "inst/%d/\u00e9\"", i);
  s->inst_index = (uint32_t)i;
  s->model = (uint16_t)(i % 4);
  s->attempts = 10;
  s->passes = (uint32_t)(i % 11);
  s->first_pass = i % 11 ? i % 10 : -1;
  s->infra = (uint32_t)(i % 3);
  for (int k = 0; k < RS_RUN_NFILES; k++) s->best_used[k] = (uint32_t)(i * 4 + k);
  s->best_occupancy = UINT32_MAX - (uint32_t)i;
}

static int same_summary(const rs_summary *a, const rs_summary *b) {
  int ok = !strcmp(a->instance, b->instance) && a->inst_index == b->inst_index &&
           a->model == b->model && a->attempts == b->attempts && a->passes == b->passes &&
           a->first_pass == b->first_pass && a->infra == b->infra &&
           a->best_occupancy == b->best_occupancy;
  for (int k = 0; k < RS_RUN_NFILES; k++) ok = ok && a->best_used[k] == b->best_used[k];
  return ok;
}

/* stderr goes to a file while the library handles broken input: it must stay silent. */
typedef struct {
  int saved;
  char path[300];
} capture;
static void capture_on(capture *c, const char *dir) {
  snprintf(c->path, sizeof c->path, "%s/stderr.txt", dir);
  fflush(stderr);
  c->saved = dup(2);
  int fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, 2);
  close(fd);
}
static long capture_off(capture *c) {
  fflush(stderr);
  dup2(c->saved, 2);
  close(c->saved);
  struct stat st;
  long n = stat(c->path, &st) == 0 ? (long)st.st_size : -1;
  unlink(c->path);
  return n;
}

static void spit(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  if (n) fwrite(p, 1, n, f);
  fclose(f);
}

static void expect_open_fails(const char *path, const char *want, const char *dir) {
  rs_err e = {{0}};
  capture cap;
  capture_on(&cap, dir);
  rs_runfile *f = rs_runfile_open(path, &e);
  long printed = capture_off(&cap);
  CHECKF(f == NULL, "%s opened", path);
  if (f) rs_runfile_close(f, &e);
  CHECKF(strstr(e.msg, path) != NULL, "message does not name the file: %s", e.msg);
  if (want) CHECKF(strstr(e.msg, want) != NULL, "want '%s' in: %s", want, e.msg);
  CHECKF(printed == 0, "%ld bytes printed to stderr opening %s", printed, path);
  printf("  rejected %s: %s\n", strrchr(path, '/') + 1, e.msg);
}

/* An HDF5 file that is not a run file: no attribute, or a given schema version (no datasets). */
static void write_foreign(const char *path, int version) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (version >= 0) {
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "schema_version", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT, &version);
    H5Aclose(a);
    H5Sclose(sp);
  }
  H5Fclose(f);
}

/* A full disk, simulated with RLIMIT_FSIZE (no root, no mounts): writes past the limit fail
 * with EFBIG. HDF5 caches metadata and chunks, and we buffer rows, so with a few hundred rows the
 * first failing write happens inside close; with many, inside append. Either way the caller must
 * hear of it, with the path, nothing may be printed, and later appends must fail too. Runs in a
 * child so the limit (and the HDF5 objects a failed close cannot release) stay there. */
static int full_disk_child(const char *path, int nrows, const char *dir) {
  int failures0 = rs_check_failures; /* inherited from the parent */
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit rl = {256u << 10, 256u << 10};
  CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
  uint64_t s = 5;
  rs_err e = {{0}};
  capture cap;
  if (!getenv("RS_NOCAP")) capture_on(&cap, dir);
  rs_runfile *f = rs_runfile_create(path, &e);
  int failed_at = -1, later_ok = 0; /* row whose append failed; nrows: close failed */
  CHECKF(f != NULL, "create under the limit failed: %s", e.msg);
  if (f) {
    CHECK(rs_runfile_set_attr(f, "config", "{\"x\": 1}", &e) == 0);
    for (int i = 0; i < nrows; i++) {
      rs_attempt a;
      make_attempt(&s, i + 1, &a);
      if (!a.candidate) a.candidate = gen_candidate(&s, 300);
      rs_err ea = {{0}};
      int rc = rs_runfile_append(f, &a, &ea);
      rs_attempt_clear(&a);
      if (rc < 0 && failed_at < 0) {
        failed_at = i;
        e = ea; /* the first error is the one that says what happened */
      }
      else if (rc == 0 && failed_at >= 0)
        later_ok++;
    }
    rs_err e2 = {{0}};
    int crc = rs_runfile_close(f, &e2);
    CHECKF(crc < 0, "close on a full disk returned %d", crc);
    if (failed_at < 0) {
      failed_at = nrows;
      e = e2;
    } else {
      CHECKF(strstr(e2.msg, "earlier write") != NULL, "close after a failed append: %s", e2.msg);
    }
  }
  long printed = getenv("RS_NOCAP") ? 0 : capture_off(&cap);
  CHECKF(failed_at >= 0, "no error writing %d rows past the size limit", nrows);
  CHECKF(strstr(e.msg, path) != NULL, "message does not name the file: %s", e.msg);
  CHECKF(later_ok == 0, "%d appends succeeded after a failed one", later_ok);
  CHECKF(printed == 0, "%ld bytes printed on a full disk", printed);
  printf("  full disk, %d rows: %s %s\n", nrows,
         failed_at == nrows ? "close failed:" : "append failed:", e.msg);
  if (nrows <= 1000) CHECKF(failed_at == nrows, "expected the error at close, got row %d", failed_at);
  else CHECKF(failed_at < nrows, "expected the error in append");
  fflush(stdout);
  return rs_check_failures - failures0;
}

static void full_disk(const char *dir) {
  for (int round = 0; round < 2; round++) {
    int nrows = round == 0 ? 800 : 6000;  /* 800 rows: ~3 MB buffered, written at close */
    char path[300];
    snprintf(path, sizeof path, "%s/full%d.h5", dir, round);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(full_disk_child(path, nrows, dir) ? 1 : 0); /* _exit: skip H5close */
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "full-disk child (%d rows) failed", nrows);
    /* What is left on disk must not pass for a complete run file. */
    expect_open_fails(path, NULL, dir);
    unlink(path);
  }
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  char dir[] = "/tmp/rs_run_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[300], p2[300];
  snprintf(path, sizeof path, "%s/run.h5", dir);
  rs_err e = {{0}};

  /* ---- write ---- */
  uint64_t seed = 777;
  rs_attempt *rows = calloc(NATT, sizeof *rows);
  for (int i = 0; i < NATT; i++) make_attempt(&seed, i, &rows[i]);
  rs_summary sums[NSUM];
  for (int i = 0; i < NSUM; i++) make_summary(i, &sums[i]);
  size_t bign = 200000;
  char *big = malloc(bign + 1);
  for (size_t i = 0; i < bign; i++) big[i] = (char)('a' + i % 26);
  big[bign] = 0;
  const char *config = "{\"seed\": 42,\n \"models\": [\"builtin:sampled?temp=0.3\", "
                       "\"openai:http://h:8000/v1?model=M\"],\n \"note\": \"\u00e9\\\"\"}";

  rs_runfile *f = rs_runfile_create(path, &e);
  CHECKF(f != NULL, "create: %s", e.msg);
  if (!f) return rs_check_done("test_run_h5");
  for (int i = 0; i < NATT; i++) {
    CHECKF(rs_runfile_append(f, &rows[i], &e) == 0, "append %d: %s", i, e.msg);
    if (i < NSUM) CHECKF(rs_runfile_add_summary(f, &sums[i], &e) == 0, "%s", e.msg);
  }
  CHECK(rs_runfile_count(f) == NATT);
  CHECK(rs_runfile_summary_count(f) == NSUM);
  rs_attempt bad = rows[1];
  memset(bad.instance, 'x', sizeof bad.instance);
  CHECK(rs_runfile_append(f, &bad, &e) < 0 && strstr(e.msg, "instance"));
  CHECK(rs_runfile_count(f) == NATT);
  rs_attempt got;
  CHECK(rs_runfile_get(f, 0, &got, 1, &e) < 0 && strstr(e.msg, "writing"));
  CHECKF(rs_runfile_set_attr(f, "config", "first", &e) == 0, "%s", e.msg);
  CHECKF(rs_runfile_set_attr(f, "config", config, &e) == 0, "%s", e.msg);
  CHECKF(rs_runfile_set_attr(f, "corpus_path", "/data/corpus.h5", &e) == 0, "%s", e.msg);
  CHECKF(rs_runfile_set_attr(f, "empty", "", &e) == 0, "%s", e.msg);
  CHECKF(rs_runfile_set_attr(f, "big", big, &e) == 0, "%s", e.msg);
  CHECK(rs_runfile_set_attr(f, "schema_version", "2", &e) < 0);
  CHECK(rs_runfile_set_attr(f, "a/b", "x", &e) < 0);
  CHECK(rs_runfile_set_attr(f, "", "x", &e) < 0);
  char *v = rs_runfile_get_attr(f, "config");
  CHECK(v && !strcmp(v, config));
  free(v);
  CHECKF(rs_runfile_close(f, &e) == 0, "close: %s", e.msg);
  CHECK(rs_runfile_close(NULL, &e) == 0);

  /* ---- the standard tool reads it ---- */
  char cmd[700], out[65536];
  snprintf(cmd, sizeof cmd, "h5dump -H %s", path);
  int rc = rs_check_run(cmd, out, sizeof out);
  CHECKF(rc == 0, "h5dump -H exit %d: %.300s", rc, out);
  CHECK(strstr(out, "DATASET \"attempts\"") != NULL);
  CHECK(strstr(out, "DATASET \"summary\"") != NULL);
  CHECK(strstr(out, "DATASET \"candidate\"") != NULL);
  CHECK(strstr(out, "DATASET \"diag\"") != NULL);
  CHECK(strstr(out, "ATTRIBUTE \"schema_version\"") != NULL);
  CHECK(strstr(out, "\"counts_json\"") && strstr(out, "\"counts_budget\"") &&
        strstr(out, "\"used_3\"") && strstr(out, "\"best_used_3\""));
  snprintf(cmd, sizeof cmd, "h5dump -d /summary -c 2 %s", path);
  rc = rs_check_run(cmd, out, sizeof out);
  CHECKF(rc == 0 && strstr(out, "inst/1/"), "h5dump -d /summary exit %d", rc);

  /* ---- read back ---- */
  f = rs_runfile_open(path, &e);
  CHECKF(f != NULL, "open: %s", e.msg);
  if (f) {
    CHECK(rs_runfile_count(f) == NATT);
    CHECK(rs_runfile_summary_count(f) == NSUM);
    int diff = 0;
    for (int i = 0; i < NATT; i++) {
      if (rs_runfile_get(f, (uint64_t)i, &got, 1, &e) < 0) {
        CHECKF(0, "get %d: %s", i, e.msg);
        continue;
      }
      int ok = same_fixed(&got, &rows[i]) && same_text(got.candidate, rows[i].candidate) &&
               same_text(got.diag, rows[i].diag);
      if (!ok && diff++ < 5) fprintf(stderr, "attempt %d differs\n", i);
      rs_attempt_clear(&got);
    }
    CHECKF(diff == 0, "%d attempts differ", diff);
    /* NULL and "" stay distinct; the 1 MB text is whole. */
    CHECK(rs_runfile_get(f, 7, &got, 1, &e) == 0 && got.candidate == NULL);
    rs_attempt_clear(&got);
    CHECK(rs_runfile_get(f, 11, &got, 1, &e) == 0 && got.candidate && !got.candidate[0]);
    rs_attempt_clear(&got);
    CHECK(rs_runfile_get(f, BIGROW, &got, 1, &e) == 0 && got.candidate &&
          strlen(got.candidate) == (1u << 20));
    rs_attempt_clear(&got);
    /* Random order, with and without texts (crosses row blocks both ways). */
    int rdiff = 0;
    uint64_t s = 3;
    for (int j = 0; j < 2000; j++) {
      int i = (int)(rnd(&s) % NATT), texts = j % 2;
      if (rs_runfile_get(f, (uint64_t)i, &got, texts, &e) < 0) {
        rdiff++;
        continue;
      }
      rdiff += !same_fixed(&got, &rows[i]) ||
               (texts ? !same_text(got.candidate, rows[i].candidate) ||
                            !same_text(got.diag, rows[i].diag)
                      : got.candidate || got.diag);
      rs_attempt_clear(&got);
    }
    CHECKF(rdiff == 0, "%d random reads differ", rdiff);
    CHECK(rs_runfile_get(f, NATT, &got, 0, &e) < 0 && strstr(e.msg, path));
    /* summaries, backwards */
    int sdiff = 0;
    for (int i = NSUM - 1; i >= 0; i--) {
      rs_summary sm;
      sdiff += rs_runfile_get_summary(f, (uint64_t)i, &sm, &e) < 0 || !same_summary(&sm, &sums[i]);
    }
    CHECKF(sdiff == 0, "%d summaries differ", sdiff);
    rs_summary sm;
    CHECK(rs_runfile_get_summary(f, NSUM, &sm, &e) < 0 && strstr(e.msg, path));
    /* attributes */
    v = rs_runfile_get_attr(f, "config");
    CHECK(v && !strcmp(v, config));
    free(v);
    v = rs_runfile_get_attr(f, "corpus_path");
    CHECK(v && !strcmp(v, "/data/corpus.h5"));
    free(v);
    v = rs_runfile_get_attr(f, "empty");
    CHECK(v && !strcmp(v, ""));
    free(v);
    v = rs_runfile_get_attr(f, "big");
    CHECK(v && !strcmp(v, big));
    free(v);
    CHECK(rs_runfile_get_attr(f, "missing") == NULL);
    CHECK(rs_runfile_get_attr(f, "schema_version") == NULL); /* an int, not a string */
    CHECK(rs_runfile_append(f, &rows[0], &e) < 0 && strstr(e.msg, "reading"));
    CHECK(rs_runfile_set_attr(f, "x", "y", &e) < 0);
    CHECKF(rs_runfile_close(f, &e) == 0, "%s", e.msg);
  }
  free(big);
  for (int i = 0; i < NATT; i++) rs_attempt_clear(&rows[i]);
  free(rows);

  /* ---- an empty run file is valid ---- */
  snprintf(p2, sizeof p2, "%s/empty_run.h5", dir);
  f = rs_runfile_create(p2, &e);
  CHECK(f && rs_runfile_close(f, &e) == 0);
  f = rs_runfile_open(p2, &e);
  CHECKF(f && rs_runfile_count(f) == 0 && rs_runfile_summary_count(f) == 0, "%s", e.msg);
  if (f) rs_runfile_close(f, &e);
  unlink(p2);
  snprintf(p2, sizeof p2, "%s/no/such/dir/run.h5", dir);
  f = rs_runfile_create(p2, &e);
  CHECK(f == NULL && strstr(e.msg, p2));

  /* ---- broken files ---- */
  size_t n = 0;
  char *whole = rs_read_file(path, &n, &e);
  CHECK(whole != NULL && n > 100000);
  snprintf(p2, sizeof p2, "%s/missing.h5", dir);
  expect_open_fails(p2, "No such file", dir);
  snprintf(p2, sizeof p2, "%s/half.h5", dir);
  spit(p2, whole, n / 2);
  expect_open_fails(p2, NULL, dir);
  spit(p2, whole, n - 1); /* one byte short */
  expect_open_fails(p2, NULL, dir);
  unlink(p2);
  snprintf(p2, sizeof p2, "%s/random.h5", dir);
  {
    uint64_t s = 11;
    char *junk = malloc(65536);
    for (int i = 0; i < 65536; i++) junk[i] = (char)rnd(&s);
    spit(p2, junk, 65536);
    free(junk);
  }
  expect_open_fails(p2, "not a readable HDF5 file", dir);
  spit(p2, "", 0);
  expect_open_fails(p2, NULL, dir);
  unlink(p2);
  snprintf(p2, sizeof p2, "%s/foreign.h5", dir);
  write_foreign(p2, -1);
  expect_open_fails(p2, "no schema_version", dir);
  write_foreign(p2, 99);
  expect_open_fails(p2, "schema version 99", dir);
  write_foreign(p2, RS_RUN_SCHEMA);
  expect_open_fails(p2, "missing /attempts", dir);
  unlink(p2);
  free(whole);

  full_disk(dir);

  unlink(path);
  rmdir(dir);
  return rs_check_done("test_run_h5");
}
