/* test_corpus_cubin.c - the optional cubin column of a corpus (/text/cubin + /cubin_index):
 *  1. rows written with and without a cubin read back byte for byte / as none, across a flush
 *     boundary (600 rows: the writer flushes every 512);
 *  2. the committed mini corpus, built before the column, opens and reads with no cubin;
 *  3. a /cubin_index that does not hold two entries per row is a corrupt corpus, named. */
#include "check.h"
#include "storage/corpus.h"
#include <hdf5.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NROWS = 600 };

static void fill_row(rs_instance *in, int i, uint8_t *cub, size_t n) {
  memset(in, 0, sizeof *in);
  snprintf(in->id, sizeof in->id, "sgemm/v%d/sm_90/sass", i);
  snprintf(in->family, sizeof in->family, "sgemm");
  snprintf(in->target, sizeof in->target, "sm_90");
  snprintf(in->form, sizeof in->form, "sass");
  in->raw = "listing";
  if (i % 3) { /* every third row has none */
    for (size_t k = 0; k < n; k++) cub[k] = (uint8_t)(i * 7 + k);
    in->cubin = cub;
    in->cubin_len = n;
  }
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  char path[] = "/tmp/regsweep-cubin-col-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_create(path, &e);
  CHECKF(c != NULL, "%s", e.msg);
  uint8_t *cub = rs_xmalloc(5000);
  for (int i = 0; c && i < NROWS; i++) {
    rs_instance in;
    fill_row(&in, i, cub, (size_t)(100 + i * 7));
    CHECKF(!rs_corpus_append(c, &in, &e), "%s", e.msg);
  }
  CHECKF(c && !rs_corpus_close(c, &e), "%s", e.msg);
  c = rs_corpus_open(path, &e);
  CHECKF(c != NULL, "%s", e.msg);
  int bad = 0;
  uint8_t *want = rs_xmalloc(5000);
  for (int i = 0; c && i < NROWS; i++) {
    rs_instance in, w;
    CHECKF(!rs_corpus_get(c, (uint64_t)i, &in, 1, &e), "%s", e.msg);
    fill_row(&w, i, want, (size_t)(100 + i * 7));
    bool ok = w.cubin ? in.cubin && in.cubin_len == w.cubin_len && !memcmp(in.cubin, w.cubin, w.cubin_len)
                      : !in.cubin && !in.cubin_len;
    bad += !ok;
    rs_instance_clear(&in);
    rs_instance no; /* without texts: no cubin either */
    CHECK(!rs_corpus_get(c, (uint64_t)i, &no, 0, &e) && !no.cubin);
  }
  CHECKF(!bad, "%d of %d rows read back another cubin", bad, NROWS);
  if (c) rs_corpus_close(c, &e);
  /* 3. one index entry too many */
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t d = f >= 0 ? H5Dopen2(f, "cubin_index", H5P_DEFAULT) : -1;
  hsize_t dims[1] = {2 * NROWS + 1};
  CHECK(d >= 0 && H5Dset_extent(d, dims) >= 0);
  if (d >= 0) H5Dclose(d);
  if (f >= 0) H5Fclose(f);
  c = rs_corpus_open(path, &e);
  CHECKF(!c && strstr(e.msg, "cubin_index") && strstr(e.msg, path), "%s", e.msg);
  if (c) rs_corpus_close(c, NULL);
  unlink(path);
  /* 2. the mini corpus as shipped keeps every sass row's cubin, and no other row has one */
  c = rs_corpus_open("data/corpus-mini.h5", &e);
  CHECKF(c != NULL, "%s", e.msg);
  uint64_t n = c ? rs_corpus_count(c) : 0, sass = 0, with = 0, other = 0;
  for (uint64_t i = 0; i < n; i++) {
    rs_instance in;
    if (rs_corpus_get(c, i, &in, 1, &e)) break;
    bool is_sass = !strcmp(in.form, "sass");
    sass += is_sass;
    with += is_sass && in.cubin && in.cubin_len > 52 && !memcmp(in.cubin, "\177ELF", 4);
    other += !is_sass && in.cubin;
    rs_instance_clear(&in);
  }
  CHECKF(sass > 100 && with == sass && !other, "%" PRIu64 " sass rows, %" PRIu64 " with an ELF cubin, %" PRIu64 " others with one",
         sass, with, other);
  if (c) rs_corpus_close(c, &e);
  /* 4. a corpus written before the column (both datasets removed from a copy): rows read
   * without a cubin, nothing refused */
  char old[] = "/tmp/rs_cubin_old_XXXXXX";
  int ofd = mkstemp(old);
  CHECK(ofd >= 0);
  if (ofd >= 0) close(ofd);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "cp data/corpus-mini.h5 %s", old);
  CHECK(system(cmd) == 0);
  f = H5Fopen(old, H5F_ACC_RDWR, H5P_DEFAULT);
  CHECK(f >= 0 && H5Ldelete(f, "cubin_index", H5P_DEFAULT) >= 0 && H5Ldelete(f, "text/cubin", H5P_DEFAULT) >= 0);
  if (f >= 0) H5Fclose(f);
  c = rs_corpus_open(old, &e);
  CHECKF(c != NULL, "%s", e.msg);
  uint64_t none = 0;
  n = c ? rs_corpus_count(c) : 0;
  for (uint64_t i = 0; i < n; i++) {
    rs_instance in;
    if (rs_corpus_get(c, i, &in, 1, &e)) break;
    none += !in.cubin;
    rs_instance_clear(&in);
  }
  CHECKF(n > 0 && none == n, "%" PRIu64 " of %" PRIu64 " rows without a cubin", none, n);
  if (c) rs_corpus_close(c, &e);
  /* emit to a cubin from such a corpus: bad input (2), the missing column named */
  char out[2048], ecmd[1024];
  snprintf(ecmd, sizeof ecmd,
           "id=$(%s corpus list %s | awk '$1 ~ /sm_89\\/sass$/ {print $1; exit}'); %s emit --corpus %s --instance \"$id\" truth "
           "-o %s.cubin 2>&1; echo \"exit $?\"",
           rs_check_cli, old, rs_check_cli, old, old);
  rs_check_run(ecmd, out, sizeof out);
  CHECKF(strstr(out, "predates its /text/cubin column") && strstr(out, "exit 2"), "old corpus emit: %s", out);
  snprintf(ecmd, sizeof ecmd, "%s.cubin", old);
  CHECKF(access(ecmd, F_OK) != 0, "a cubin was written from an old corpus");
  unlink(old);
  free(cub);
  free(want);
  return rs_check_done("test_corpus_cubin");
}
