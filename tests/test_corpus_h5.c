/* test_corpus_h5.c - storage/corpus_h5.c: write a corpus, read it back byte-exactly, find by id,
 * reject broken files with a message naming them, stay readable by h5dump. Prints (does not
 * assert) throughput and the compression ratio of the texts. */
#include "check.h"
#include "storage/corpus.h"
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NROWS 300
#define KEEP_ENV "RS_KEEP_CORPUS" /* set to a path to keep the 300-row file for inspection */
#define NFAIL 7
#define BIGROW 150

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* MIR-like text of exactly n bytes, with quotes, backslashes, tabs and UTF-8 sprinkled in. */
static char *gen_text(uint64_t *s, size_t n) {
  static const char *const ops[] = {"V_ADD_U32_e32", "V_MOV_B32_e32", "S_LOAD_DWORDX4_IMM",
                                    "V_MFMA_F32_32X32X8F16", "GLOBAL_LOAD_DWORDX2", "COPY"};
  char *t = malloc(n + 1);
  size_t i = 0;
  while (i < n) {
    char line[160];
    int k = (int)(rnd(s) % 8);
    int len;
    if (k == 0)
      len = snprintf(line, sizeof line, "  ; \"quoted\" \\path\\ \u00e9\u2192\u03b1\t%u\n",
                     (unsigned)(rnd(s) % 1000));
    else
      len = snprintf(line, sizeof line, "  %%%u:vgpr_32 = %s %%%u, %%%u, implicit $exec\n",
                     (unsigned)(rnd(s) % 5000), ops[rnd(s) % 6], (unsigned)(rnd(s) % 5000),
                     (unsigned)(rnd(s) % 5000));
    size_t m = (size_t)len < n - i ? (size_t)len : n - i;
    memcpy(t + i, line, m);
    i += m;
  }
  /* A cut line may split a UTF-8 sequence: fine, texts are bytes (just no NUL). */
  t[n] = 0;
  return t;
}

static void make_row(uint64_t *s, int i, rs_instance *r) {
  static const char *const targets[] = {"gfx90a", "sm_89", "sm_90"};
  static const char *const forms[] = {"prera", "postsplit", "ptx"};
  memset(r, 0, sizeof *r);
  snprintf(r->family, sizeof r->family, "%s", i % 2 ? "sgemm" : "fa");
  snprintf(r->kind, sizeof r->kind, "%s", i % 2 ? "gemm" : "attention");
  snprintf(r->target, sizeof r->target, "%s", targets[i % 3]);
  snprintf(r->form, sizeof r->form, "%s", forms[i % 3]);
  snprintf(r->variant, sizeof r->variant, "bm%d_bn%d_k%d", 16 << (i % 4), 32 << (i % 3), i);
  snprintf(r->params, sizeof r->params, "-DBM=%d -DBN=%d -DNAME=\"v%d\" -DUTF=\u00e9", 16 << (i % 4),
           32 << (i % 3), i);
  snprintf(r->function, sizeof r->function, "kernel_%d", i);
  snprintf(r->id, sizeof r->id, "%s/%s/%s/%s", r->family, r->variant, r->target, r->form);
  r->ir_hash = rnd(s);
  r->nvregs = (uint32_t)rnd(s);
  r->ninsts = (uint32_t)rnd(s);
  r->nblocks = (uint32_t)(rnd(s) % 100);
  r->nconf = (uint32_t)rnd(s);
  for (int k = 0; k < RS_CORPUS_NFILES; k++) {
    r->maxp[k] = (uint32_t)rnd(s);
    r->ref_regs[k] = (uint32_t)rnd(s);
  }
  r->spill_bytes = (uint32_t)rnd(s);
  r->infeasible = (uint8_t)(i % 2);
  r->split = (uint8_t)(i % 5 == 0);
  r->same_nv = (uint8_t)(i % 3 == 0);
  r->same_amd = 255;
  r->raw_lines = (uint32_t)rnd(s);
  r->norm_lines = (uint32_t)rnd(s);
  r->raw_tokens = UINT32_MAX;
  r->norm_tokens = (uint32_t)rnd(s);
  size_t rawn = (size_t)(rnd(s) % (i % 10 == 0 ? 200000 : 20000));
  if (i == BIGROW) rawn = 1u << 20;
  r->raw = i % 17 == 0 ? NULL : gen_text(s, i % 19 == 0 ? 0 : rawn);
  r->norm = i % 23 == 0 ? NULL : gen_text(s, rawn / 2);
  r->name_map = gen_text(s, (size_t)(rnd(s) % 3000));
  if (i % 3 == 0) {
    r->truth = NULL;
    snprintf(r->truth_reason, sizeof r->truth_reason, "no \"virtregrewriter\" dump (row %d)", i);
  } else {
    r->truth = i % 7 == 0 ? gen_text(s, 0) : gen_text(s, (size_t)(rnd(s) % 5000));
  }
}

static size_t text_bytes(const rs_instance *r) {
  size_t n = 0;
  const char *t[4] = {r->raw, r->norm, r->name_map, r->truth};
  for (int k = 0; k < 4; k++) n += t[k] ? strlen(t[k]) : 0;
  return n;
}

static int same_text(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

static int same_fixed(const rs_instance *a, const rs_instance *b) {
  int ok = !strcmp(a->id, b->id) && !strcmp(a->family, b->family) && !strcmp(a->kind, b->kind) &&
           !strcmp(a->target, b->target) && !strcmp(a->form, b->form) &&
           !strcmp(a->variant, b->variant) && !strcmp(a->params, b->params) &&
           !strcmp(a->function, b->function) && !strcmp(a->truth_reason, b->truth_reason) &&
           a->ir_hash == b->ir_hash && a->nvregs == b->nvregs && a->ninsts == b->ninsts &&
           a->nblocks == b->nblocks && a->nconf == b->nconf && a->spill_bytes == b->spill_bytes &&
           a->infeasible == b->infeasible && a->split == b->split && a->same_nv == b->same_nv &&
           a->same_amd == b->same_amd && a->raw_lines == b->raw_lines &&
           a->norm_lines == b->norm_lines && a->raw_tokens == b->raw_tokens &&
           a->norm_tokens == b->norm_tokens;
  for (int k = 0; k < RS_CORPUS_NFILES; k++)
    ok = ok && a->maxp[k] == b->maxp[k] && a->ref_regs[k] == b->ref_regs[k];
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

static char *slurp(const char *path, size_t *n) {
  rs_err e;
  return rs_read_file(path, n, &e);
}
static void spit(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fwrite(p, 1, n, f);
  fclose(f);
}

/* Expect open to fail with a message naming the path (and containing `want` if given). */
static void expect_open_fails(const char *path, const char *want, const char *dir) {
  rs_err e = {{0}};
  capture cap;
  capture_on(&cap, dir);
  rs_corpus *c = rs_corpus_open(path, &e);
  long printed = capture_off(&cap);
  CHECKF(c == NULL, "%s opened", path);
  if (c) rs_corpus_close(c, &e);
  CHECKF(strstr(e.msg, path) != NULL, "message does not name the file: %s", e.msg);
  if (want) CHECKF(strstr(e.msg, want) != NULL, "want '%s' in: %s", want, e.msg);
  CHECKF(printed == 0, "%ld bytes printed to stderr opening %s", printed, path);
  printf("  rejected %s: %s\n", strrchr(path, '/') + 1, e.msg);
}

/* An HDF5 file that is not a corpus: no attribute, or a foreign schema version. */
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

static void storage_report(const char *path, double raw_mb) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK(f >= 0);
  if (f < 0) return;
  static const char *const names[] = {"/text/raw", "/text/norm", "/text/name_map", "/text/truth"};
  hsize_t stored = 0, logical = 0;
  for (int k = 0; k < 4; k++) {
    hid_t d = H5Dopen2(f, names[k], H5P_DEFAULT);
    CHECK(d >= 0);
    hid_t dcpl = H5Dget_create_plist(d), sp = H5Dget_space(d);
    CHECKF(H5Pget_nfilters(dcpl) >= 2, "%s has no deflate filter", names[k]);
    CHECK(H5Pget_layout(dcpl) == H5D_CHUNKED);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(sp, &n, NULL);
    logical += n;
    stored += H5Dget_storage_size(d);
    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Dclose(d);
  }
  H5Fclose(f);
  struct stat st;
  stat(path, &st);
  printf("  texts %.2f MB -> %.2f MB stored (ratio %.2fx); file %.2f MB\n", (double)logical / 1e6,
         (double)stored / 1e6, stored ? (double)logical / (double)stored : 0.0,
         (double)st.st_size / 1e6);
  CHECK(fabs((double)logical / 1e6 - raw_mb) < 1e-6 || raw_mb < 0);
}

/* Speed at the real row count: 20k rows of small texts, checked by hash, not kept. */
static void perf_run(const char *dir) {
  char path[300];
  snprintf(path, sizeof path, "%s/perf.h5", dir);
  enum { N = 20000 };
  uint64_t *hash = calloc(N, sizeof *hash);
  uint64_t s = 99;
  rs_err e = {{0}};
  double bytes = 0, t0 = now(), tgen = 0;
  rs_corpus *c = rs_corpus_create(path, &e);
  CHECKF(c != NULL, "%s", e.msg);
  if (!c) {
    free(hash);
    return;
  }
  for (int i = 0; i < N; i++) {
    double g0 = now();
    rs_instance r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "perf/%d", i);
    r.ir_hash = (uint64_t)i;
    r.raw = gen_text(&s, 1500 + (size_t)(rnd(&s) % 3000));
    r.norm = gen_text(&s, 1000 + (size_t)(rnd(&s) % 2000));
    r.name_map = gen_text(&s, 200);
    r.truth = gen_text(&s, 300);
    hash[i] = rs_hash_bytes(r.raw, strlen(r.raw), 0) ^ rs_hash_bytes(r.truth, strlen(r.truth), 1);
    bytes += (double)text_bytes(&r);
    tgen += now() - g0;
    if (rs_corpus_append(c, &r, &e) < 0) {
      CHECKF(0, "%s", e.msg);
      rs_instance_clear(&r);
      break;
    }
    rs_instance_clear(&r);
  }
  CHECKF(rs_corpus_close(c, &e) == 0, "%s", e.msg);
  double tw = now() - t0 - tgen;
  t0 = now();
  c = rs_corpus_open(path, &e);
  CHECKF(c != NULL, "%s", e.msg);
  int bad = 0;
  if (c) {
    CHECK(rs_corpus_count(c) == N);
    for (uint64_t i = 0; i < rs_corpus_count(c); i++) {
      rs_instance r;
      if (rs_corpus_get(c, i, &r, 1, &e) < 0) {
        bad++;
        continue;
      }
      uint64_t h = rs_hash_bytes(r.raw, strlen(r.raw), 0) ^ rs_hash_bytes(r.truth, strlen(r.truth), 1);
      bad += h != hash[i] || r.ir_hash != i;
      rs_instance_clear(&r);
    }
    double t1 = now();
    CHECK(rs_corpus_find(c, "perf/12345", &e) == 12345);
    printf("  perf: first find (index %d ids) %.1f ms\n", N, (now() - t1) * 1e3);
    rs_corpus_close(c, &e);
  }
  double tr = now() - t0;
  CHECKF(bad == 0, "%d perf rows differ", bad);
  printf("  perf: %d rows, %.1f MB texts: write %.0f rows/s %.1f MB/s; read %.0f rows/s %.1f MB/s\n",
         N, bytes / 1e6, N / tw, bytes / 1e6 / tw, N / tr, bytes / 1e6 / tr);
  storage_report(path, bytes / 1e6);
  unlink(path);
  free(hash);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  char dir[] = "/tmp/rs_corpus_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[300], p2[300];
  snprintf(path, sizeof path, "%s/corpus.h5", dir);
  rs_err e = {{0}};

  /* ---- write ---- */
  uint64_t seed = 12345;
  rs_instance *rows = calloc(NROWS, sizeof *rows);
  double bytes = 0;
  for (int i = 0; i < NROWS; i++) {
    make_row(&seed, i, &rows[i]);
    bytes += (double)text_bytes(&rows[i]);
  }
  double t0 = now();
  rs_corpus *c = rs_corpus_create(path, &e);
  CHECKF(c != NULL, "create: %s", e.msg);
  if (!c) return rs_check_done("test_corpus_h5");
  for (int i = 0; i < NROWS; i++) CHECKF(rs_corpus_append(c, &rows[i], &e) == 0, "%s", e.msg);
  CHECK(rs_corpus_count(c) == NROWS);
  /* Writer-side rules: unique ids, terminated fixed strings. */
  CHECK(rs_corpus_append(c, &rows[3], &e) < 0 && strstr(e.msg, "duplicate"));
  rs_instance bad = rows[4];
  snprintf(bad.id, sizeof bad.id, "unique/one");
  memset(bad.family, 'x', sizeof bad.family);
  CHECK(rs_corpus_append(c, &bad, &e) < 0 && strstr(e.msg, "family"));
  CHECK(rs_corpus_count(c) == NROWS);
  CHECK(rs_corpus_find(c, rows[77].id, &e) == 77);
  rs_build_failure fails[NFAIL];
  for (int i = 0; i < NFAIL; i++) {
    memset(&fails[i], 0, sizeof fails[i]);
    snprintf(fails[i].variant, sizeof fails[i].variant, "bad_%d", i);
    snprintf(fails[i].family, sizeof fails[i].family, "hgemm_mfma");
    snprintf(fails[i].target, sizeof fails[i].target, "gfx90a");
    snprintf(fails[i].params, sizeof fails[i].params, "-DBM=%d", 512 << i);
    snprintf(fails[i].message, sizeof fails[i].message,
             "k.cl:%d:3: error: \"local memory\" (%d bytes) exceeds limit \u2192 65536", i, 70000 + i);
    CHECKF(rs_corpus_add_failure(c, &fails[i], &e) == 0, "%s", e.msg);
  }
  CHECK(rs_corpus_failure_count(c) == NFAIL);
  size_t bign = 200000;
  char *big = malloc(bign + 1);
  for (size_t i = 0; i < bign; i++) big[i] = (char)('a' + i % 26);
  big[bign] = 0;
  CHECKF(rs_corpus_set_attr(c, "seed", "42", &e) == 0, "%s", e.msg);
  CHECKF(rs_corpus_set_attr(c, "llc", "first", &e) == 0, "%s", e.msg);
  CHECKF(rs_corpus_set_attr(c, "llc", "LLVM 14.0.6 \"release\"\n\u00e9", &e) == 0, "%s", e.msg);
  CHECKF(rs_corpus_set_attr(c, "empty", "", &e) == 0, "%s", e.msg);
  CHECKF(rs_corpus_set_attr(c, "big", big, &e) == 0, "%s", e.msg);
  CHECK(rs_corpus_set_attr(c, "schema_version", "2", &e) < 0);
  char *got = rs_corpus_get_attr(c, "llc");
  CHECK(got && !strcmp(got, "LLVM 14.0.6 \"release\"\n\u00e9"));
  free(got);
  CHECKF(rs_corpus_close(c, &e) == 0, "close: %s", e.msg);
  double tw = now() - t0;
  printf("  write: %d rows, %.1f MB texts in %.3f s: %.0f rows/s, %.1f MB/s\n", NROWS, bytes / 1e6,
         tw, NROWS / tw, bytes / 1e6 / tw);

  /* ---- the standard tool reads it ---- */
  char cmd[700], out[65536];
  snprintf(cmd, sizeof cmd, "h5dump -H %s", path);
  int rc = rs_check_run(cmd, out, sizeof out);
  CHECKF(rc == 0, "h5dump -H exit %d: %.300s", rc, out);
  CHECK(strstr(out, "DATASET \"instances\"") != NULL);
  CHECK(strstr(out, "GROUP \"text\"") != NULL);
  CHECK(strstr(out, "DATASET \"raw\"") != NULL);
  CHECK(strstr(out, "ATTRIBUTE \"schema_version\"") != NULL);
  CHECK(strstr(out, "\"ir_hash\"") != NULL);
  snprintf(cmd, sizeof cmd, "h5dump -d /instances -c 2 %s", path);
  rc = rs_check_run(cmd, out, sizeof out);
  CHECKF(rc == 0 && strstr(out, rows[0].id), "h5dump -d /instances exit %d", rc);

  /* ---- read back ---- */
  t0 = now();
  c = rs_corpus_open(path, &e);
  CHECKF(c != NULL, "open: %s", e.msg);
  if (c) {
    CHECK(rs_corpus_count(c) == NROWS);
    int diff = 0;
    for (int i = 0; i < NROWS; i++) {
      rs_instance r;
      if (rs_corpus_get(c, (uint64_t)i, &r, 1, &e) < 0) {
        CHECKF(0, "get %d: %s", i, e.msg);
        continue;
      }
      int ok = same_fixed(&r, &rows[i]) && same_text(r.raw, rows[i].raw) &&
               same_text(r.norm, rows[i].norm) && same_text(r.name_map, rows[i].name_map) &&
               same_text(r.truth, rows[i].truth);
      if (!ok && diff++ < 5) fprintf(stderr, "row %d differs (%s)\n", i, rows[i].id);
      rs_instance_clear(&r);
    }
    double tr = now() - t0;
    CHECKF(diff == 0, "%d rows differ", diff);
    printf("  read: %d rows in %.3f s: %.0f rows/s, %.1f MB/s\n", NROWS, tr, NROWS / tr,
           bytes / 1e6 / tr);
    /* NULL and "" stay distinct; the 1 MB text is whole. */
    rs_instance r;
    CHECK(rs_corpus_get(c, 17, &r, 1, &e) == 0 && r.raw == NULL);
    rs_instance_clear(&r);
    CHECK(rs_corpus_get(c, 19, &r, 1, &e) == 0 && r.raw && r.raw[0] == 0);
    rs_instance_clear(&r);
    CHECK(rs_corpus_get(c, BIGROW, &r, 1, &e) == 0 && r.raw && strlen(r.raw) == (1u << 20));
    rs_instance_clear(&r);
    /* Without texts: fields only, random order (crosses row blocks). */
    for (int j = 0; j < 50; j++) {
      int i = (int)((unsigned)(j * 7919) % NROWS);
      CHECK(rs_corpus_get(c, (uint64_t)i, &r, 0, &e) == 0 && same_fixed(&r, &rows[i]) &&
            !r.raw && !r.norm && !r.name_map && !r.truth);
    }
    CHECK(rs_corpus_get(c, NROWS, &r, 0, &e) < 0 && strstr(e.msg, path));
    /* find */
    int found = 0;
    for (int i = 0; i < NROWS; i++) found += rs_corpus_find(c, rows[i].id, &e) == i;
    CHECK(found == NROWS);
    CHECK(rs_corpus_find(c, "no/such/id", &e) == -1);
    CHECK(rs_corpus_find(c, "", &e) == -1);
    /* failures */
    CHECK(rs_corpus_failure_count(c) == NFAIL);
    for (int i = 0; i < NFAIL; i++) {
      rs_build_failure f;
      CHECK(rs_corpus_get_failure(c, (uint64_t)i, &f, &e) == 0 &&
            !strcmp(f.variant, fails[i].variant) && !strcmp(f.family, fails[i].family) &&
            !strcmp(f.target, fails[i].target) && !strcmp(f.params, fails[i].params) &&
            !strcmp(f.message, fails[i].message));
    }
    rs_build_failure f;
    CHECK(rs_corpus_get_failure(c, NFAIL, &f, &e) < 0);
    /* attributes */
    char *v = rs_corpus_get_attr(c, "seed");
    CHECK(v && !strcmp(v, "42"));
    free(v);
    v = rs_corpus_get_attr(c, "llc");
    CHECK(v && !strcmp(v, "LLVM 14.0.6 \"release\"\n\u00e9"));
    free(v);
    v = rs_corpus_get_attr(c, "empty");
    CHECK(v && !strcmp(v, ""));
    free(v);
    v = rs_corpus_get_attr(c, "big");
    CHECK(v && !strcmp(v, big));
    free(v);
    CHECK(rs_corpus_get_attr(c, "missing") == NULL);
    CHECK(rs_corpus_get_attr(c, "schema_version") == NULL); /* an int, not a string */
    CHECK(rs_corpus_append(c, &rows[0], &e) < 0);
    CHECKF(rs_corpus_close(c, &e) == 0, "%s", e.msg);
  }
  free(big);
  storage_report(path, bytes / 1e6);

  /* ---- broken files ---- */
  size_t n = 0;
  char *whole = slurp(path, &n);
  CHECK(whole != NULL && n > 1000);
  snprintf(p2, sizeof p2, "%s/missing.h5", dir);
  expect_open_fails(p2, "No such file", dir);
  snprintf(p2, sizeof p2, "%s/half.h5", dir);
  spit(p2, whole, n / 2);
  expect_open_fails(p2, NULL, dir);
  unlink(p2);
  snprintf(p2, sizeof p2, "%s/random.h5", dir);
  {
    uint64_t s = 7;
    char *junk = malloc(65536);
    for (int i = 0; i < 65536; i++) junk[i] = (char)rnd(&s);
    spit(p2, junk, 65536);
    free(junk);
  }
  expect_open_fails(p2, "not a readable HDF5 file", dir);
  unlink(p2);
  snprintf(p2, sizeof p2, "%s/empty.h5", dir);
  spit(p2, "", 0);
  expect_open_fails(p2, NULL, dir);
  unlink(p2);
  snprintf(p2, sizeof p2, "%s/foreign.h5", dir);
  write_foreign(p2, -1);
  expect_open_fails(p2, "not a regsweep corpus", dir);
  write_foreign(p2, 99);
  expect_open_fails(p2, "schema version 99", dir);
  unlink(p2);
  /* One damaged text chunk: the file opens, rows whose text lies there fail with a message
   * (fletcher32), the other rows still read, nothing is printed. */
  snprintf(p2, sizeof p2, "%s/chunk.h5", dir);
  {
    haddr_t addr = HADDR_UNDEF;
    hsize_t csize = 0, origin = 0;
    unsigned mask = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/text/raw", H5P_DEFAULT);
    CHECK(H5Dget_chunk_info_by_coord(d, &origin, &mask, &addr, &csize) >= 0);
    H5Dclose(d);
    H5Fclose(f);
    CHECK(addr != HADDR_UNDEF && addr + csize <= n && csize > 100);
    char *copy = malloc(n);
    memcpy(copy, whole, n);
    if (addr != HADDR_UNDEF && addr + csize <= n) memset(copy + addr + csize / 2, 0x5a, 16);
    spit(p2, copy, n);
    free(copy);
    capture cap;
    capture_on(&cap, dir);
    rs_err e2 = {{0}};
    int failed = 0, okrows = 0;
    rs_corpus *d2 = rs_corpus_open(p2, &e2);
    CHECKF(d2 != NULL, "%s", e2.msg);
    for (uint64_t i = 0; d2 && i < rs_corpus_count(d2); i++) {
      rs_instance r;
      if (rs_corpus_get(d2, i, &r, 1, &e2) < 0) {
        if (!failed++) printf("  damaged chunk: %s\n", e2.msg);
        CHECKF(strstr(e2.msg, p2) && strstr(e2.msg, "/text/raw"), "%s", e2.msg);
        CHECK(!r.raw && !r.norm && !r.name_map && !r.truth);
      } else {
        okrows++;
        rs_instance_clear(&r);
      }
    }
    if (d2) rs_corpus_close(d2, &e2);
    long printed = capture_off(&cap);
    CHECKF(failed > 0 && okrows > 0, "damaged chunk: %d rows failed, %d read", failed, okrows);
    CHECKF(printed == 0, "%ld bytes printed for the damaged chunk", printed);
  }
  unlink(p2);
  /* Damaged bytes at spread offsets: open or some read must fail, never crash or print. */
  snprintf(p2, sizeof p2, "%s/flipped.h5", dir);
  for (size_t at = n / 4; at < n; at += n / 4) memset(whole + at, 0x5a, 64);
  spit(p2, whole, n);
  {
    capture cap;
    capture_on(&cap, dir);
    rs_err e2 = {{0}};
    int failures = 0;
    rs_corpus *d = rs_corpus_open(p2, &e2);
    if (!d) failures++;
    for (uint64_t i = 0; d && i < rs_corpus_count(d); i++) {
      rs_instance r;
      if (rs_corpus_get(d, i, &r, 1, &e2) < 0) {
        failures++;
        CHECKF(strstr(e2.msg, p2) != NULL, "%s", e2.msg);
      } else {
        rs_instance_clear(&r);
      }
    }
    if (d) rs_corpus_close(d, &e2);
    long printed = capture_off(&cap);
    CHECKF(failures > 0, "damaged file read without error");
    CHECKF(printed == 0, "%ld bytes printed for the damaged file", printed);
    printf("  damaged file: %d failing opens/reads, e.g. %s\n", failures, e2.msg);
  }
  unlink(p2);
  free(whole);
  snprintf(p2, sizeof p2, "%s/no/such/dir/c.h5", dir);
  {
    capture cap;
    capture_on(&cap, dir);
    rs_corpus *d = rs_corpus_create(p2, &e);
    long printed = capture_off(&cap);
    CHECK(d == NULL && strstr(e.msg, p2));
    CHECK(printed == 0);
  }

  perf_run(dir);

  for (int i = 0; i < NROWS; i++) rs_instance_clear(&rows[i]);
  free(rows);
  const char *keep = getenv(KEEP_ENV);
  if (keep && rename(path, keep) == 0) printf("  kept %s\n", keep);
  unlink(path);
  CHECK(rmdir(dir) == 0);
  return rs_check_done("test_corpus_h5");
}
