/* run_h5.c - storage/run.h on HDF5 (serial). Layout: docs/run-schema.md.
 *
 * Same approach as corpus_h5.c: fixed fields in compound tables (/attempts, /summary), texts in
 * extendible uint8 datasets (/text/candidate, /text/diag) because HDF5 filters do not compress
 * variable-length strings; each attempt row keeps (offset, length) per text and a null mask.
 * A sweep writes millions of rows, so rows and text bytes are buffered and written in batches of
 * thousands; a write error is sticky (the file is unusable after it) and close reports it.
 *
 * Every public entry point silences HDF5's error printing and restores the caller's handler on
 * return; the innermost HDF5 message is copied into rs_err. Not thread-safe. */
#include "storage/run.h"
#include "storage/h5util.h"
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { NTEXT = 2 };
static const char *const text_name[NTEXT] = {"candidate", "diag"};
static const char *const kind_name[RS_RUN_NKINDS] = {
    "json", "unknown", "missing", "duplicate", "badreg", "conflict",
    "fixed", "class", "align", "reserved", "budget"};

#define KIND "regsweep run file"
#define ROW_CHUNK 256               /* rows per chunk of /attempts (~75 KB before deflate): random reads */
#define SUM_CHUNK 1024              /* rows per chunk of /summary */
#define TEXT_CHUNK (64u << 10)      /* bytes per text chunk: small, so a random read inflates little */
#define DEFLATE_LEVEL 1             /* 1.8x the write speed of level 4 for 15% more bytes (bench) */
#define FLUSH_ROWS 4096             /* write buffered rows after this many ... */
#define FLUSH_BYTES (16u << 20)     /* ... or this many buffered text bytes */
#define MAX_TEXT ((uint64_t)1 << 32) /* a longer text means a corrupt length field */

/* An attempt as HDF5 sees it in memory; the text pointers in `a` are not in the HDF5 type. */
typedef struct {
  rs_attempt a;
  uint64_t off[NTEXT], len[NTEXT];
  uint8_t text_null; /* bit k set: text k was NULL (distinct from "") */
} arec;

struct rs_runfile {
  char *path;
  int writing;
  int broken;               /* a write failed: refuse further writes, close reports it */
  hid_t file, root, att, sum, text[NTEXT];
  hid_t att_mt, sum_mt;     /* memory types */
  uint64_t natt, natt_file; /* rows in total (file + buffer) / in the file */
  uint64_t nsum, nsum_file;
  uint64_t tsize[NTEXT];    /* bytes in each text dataset */
  /* writer buffers */
  arec *abuf;
  uint32_t nabuf, capabuf;
  uint8_t *tb[NTEXT];
  size_t tn[NTEXT], tcap[NTEXT];
  rs_summary *sbuf;
  uint32_t nsbuf, capsbuf;
  /* reader: one chunk-aligned block of each table, for sequential and nearby access */
  arec *ablk;
  uint64_t ablk_start;
  uint32_t ablk_n;
  rs_summary *sblk;
  uint64_t sblk_start;
  uint32_t sblk_n;
};

/* ---- types ---- */

#define FSIZE(T, f) sizeof(((T *)0)->f)

static hid_t make_att_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(arec));
  if (t < 0) return -1;
  int bad = 0;
  char nm[48];
#define N(name, off, ty) bad |= H5Tinsert(t, name, off, ty) < 0
#define F(f, ty) N(#f, HOFFSET(arec, a.f), ty)
  bad |= rs_h5_add_str(t, "instance", HOFFSET(arec, a.instance), FSIZE(rs_attempt, instance));
  F(inst_index, H5T_NATIVE_UINT32);
  F(model, H5T_NATIVE_UINT16);
  F(attempt, H5T_NATIVE_UINT32);
  F(seed, H5T_NATIVE_UINT64);
  F(verdict, H5T_NATIVE_UINT8);
  F(finish, H5T_NATIVE_UINT8);
  F(wrapped, H5T_NATIVE_UINT8);
  /* Arrays as plain columns: pandas takes scalar fields only. */
  for (int k = 0; k < RS_RUN_NKINDS; k++) {
    snprintf(nm, sizeof nm, "counts_%s", kind_name[k]);
    N(nm, HOFFSET(arec, a.counts) + (size_t)k * sizeof(uint32_t), H5T_NATIVE_UINT32);
  }
  for (int k = 0; k < RS_RUN_NFILES; k++) {
    snprintf(nm, sizeof nm, "used_%d", k);
    N(nm, HOFFSET(arec, a.used) + (size_t)k * sizeof(uint32_t), H5T_NATIVE_UINT32);
  }
  F(occupancy, H5T_NATIVE_UINT32);
  F(infer_s, H5T_NATIVE_DOUBLE);
  F(verify_s, H5T_NATIVE_DOUBLE);
  F(prompt_tokens, H5T_NATIVE_UINT32);
  F(completion_tokens, H5T_NATIVE_UINT32);
  F(rank, H5T_NATIVE_UINT32);
  for (int k = 0; k < NTEXT; k++) {
    snprintf(nm, sizeof nm, "%s_off", text_name[k]);
    N(nm, HOFFSET(arec, off) + (size_t)k * sizeof(uint64_t), H5T_NATIVE_UINT64);
    snprintf(nm, sizeof nm, "%s_len", text_name[k]);
    N(nm, HOFFSET(arec, len) + (size_t)k * sizeof(uint64_t), H5T_NATIVE_UINT64);
  }
  N("text_null", HOFFSET(arec, text_null), H5T_NATIVE_UINT8);
#undef F
  if (bad) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

static hid_t make_sum_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(rs_summary));
  if (t < 0) return -1;
  int bad = 0;
  char nm[48];
#define F(f, ty) N(#f, HOFFSET(rs_summary, f), ty)
  bad |= rs_h5_add_str(t, "instance", HOFFSET(rs_summary, instance), FSIZE(rs_summary, instance));
  F(inst_index, H5T_NATIVE_UINT32);
  F(model, H5T_NATIVE_UINT16);
  F(attempts, H5T_NATIVE_UINT32);
  F(passes, H5T_NATIVE_UINT32);
  F(first_pass, H5T_NATIVE_INT32);
  F(infra, H5T_NATIVE_UINT32);
  for (int k = 0; k < RS_RUN_NFILES; k++) {
    snprintf(nm, sizeof nm, "best_used_%d", k);
    N(nm, HOFFSET(rs_summary, best_used) + (size_t)k * sizeof(uint32_t), H5T_NATIVE_UINT32);
  }
  F(best_occupancy, H5T_NATIVE_UINT32);
#undef F
#undef N
  if (bad) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

/* ---- lifecycle ---- */

static rs_runfile *run_new(const char *path, int writing) {
  rs_runfile *f = rs_xcalloc(1, sizeof *f);
  f->path = rs_xstrndup(path, strlen(path));
  f->writing = writing;
  f->file = f->root = f->att = f->sum = f->att_mt = f->sum_mt = -1;
  for (int k = 0; k < NTEXT; k++) f->text[k] = -1;
  return f;
}

/* Close every HDF5 object and free memory; returns -1 if closing the file failed. */
static int run_free(rs_runfile *f) {
  int rc = 0;
  rs_h5_close(&f->att, H5Dclose);
  rs_h5_close(&f->sum, H5Dclose);
  for (int k = 0; k < NTEXT; k++) {
    rs_h5_close(&f->text[k], H5Dclose);
    free(f->tb[k]);
  }
  rs_h5_close(&f->att_mt, H5Tclose);
  rs_h5_close(&f->sum_mt, H5Tclose);
  rs_h5_close(&f->root, H5Gclose);
  if (f->file >= 0 && H5Fclose(f->file) < 0) rc = -1;
  f->file = -1;
  free(f->abuf);
  free(f->sbuf);
  free(f->ablk);
  free(f->sblk);
  free(f->path);
  free(f);
  return rc;
}

rs_runfile *rs_runfile_create(const char *path, rs_err *e) {
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  rs_runfile *f = run_new(path, 1);
  hid_t fapl = rs_h5_fapl(), gtext = -1, aft = -1, sft = -1;
  const char *what = NULL;
  f->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  if (f->file < 0) {
    what = "cannot create the run file";
    goto fail;
  }
  f->root = H5Gopen2(f->file, "/", H5P_DEFAULT);
  f->att_mt = make_att_type();
  f->sum_mt = make_sum_type();
  aft = f->att_mt >= 0 ? rs_h5_packed(f->att_mt) : -1;
  sft = f->sum_mt >= 0 ? rs_h5_packed(f->sum_mt) : -1;
  if (f->root < 0 || aft < 0 || sft < 0) {
    what = "cannot build the HDF5 types";
    goto fail;
  }
  if (rs_h5_set_int_attr(f->root, "schema_version", RS_RUN_SCHEMA) < 0) {
    what = "cannot write schema_version";
    goto fail;
  }
  what = "cannot create the run datasets";
  f->att = rs_h5_create_ds(f->file, "attempts", aft, ROW_CHUNK, 1, DEFLATE_LEVEL, 4u << 20);
  if (f->att < 0) goto fail;
  f->sum = rs_h5_create_ds(f->file, "summary", sft, SUM_CHUNK, 1, DEFLATE_LEVEL, 1u << 20);
  if (f->sum < 0) goto fail;
  if ((gtext = H5Gcreate2(f->file, "text", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) goto fail;
  for (int k = 0; k < NTEXT; k++) {
    f->text[k] = rs_h5_create_ds(gtext, text_name[k], H5T_STD_U8LE, TEXT_CHUNK, 0, DEFLATE_LEVEL,
                                 8u * TEXT_CHUNK);
    if (f->text[k] < 0) goto fail;
  }
  goto done;
fail:
  rs_h5_err(e, path, what);
  {
    /* No half-made file left behind; only a regular file we created (never a device). */
    int created = f->file >= 0;
    run_free(f);
    f = NULL;
    struct stat st;
    if (created && stat(path, &st) == 0 && S_ISREG(st.st_mode)) unlink(path);
  }
  H5Eclear2(H5E_DEFAULT);
done:
  if (fapl >= 0) H5Pclose(fapl);
  if (gtext >= 0) H5Gclose(gtext);
  if (aft >= 0) H5Tclose(aft);
  if (sft >= 0) H5Tclose(sft);
  rs_h5_quiet_off(&q);
  return f;
}

static int broken_err(rs_runfile *f, rs_err *e) {
  return rs_errf(e, f->path, 0, "an earlier write to this run file failed; it is incomplete");
}

/* Write buffered attempt rows and text bytes. Called with HDF5 printing silenced. */
static int flush_attempts(rs_runfile *f, rs_err *e) {
  if (f->broken) return broken_err(f, e);
  for (int k = 0; k < NTEXT; k++) {
    if (rs_h5_append(f->text[k], H5T_NATIVE_UINT8, f->tsize[k], f->tb[k], f->tn[k]) < 0) {
      char what[64];
      snprintf(what, sizeof what, "cannot write /text/%s", text_name[k]);
      f->broken = 1;
      return rs_h5_err(e, f->path, what);
    }
    f->tsize[k] += f->tn[k];
    f->tn[k] = 0;
  }
  if (rs_h5_append(f->att, f->att_mt, f->natt_file, f->abuf, f->nabuf) < 0) {
    f->broken = 1;
    return rs_h5_err(e, f->path, "cannot write /attempts");
  }
  f->natt_file += f->nabuf;
  f->nabuf = 0;
  return 0;
}

static int flush_summaries(rs_runfile *f, rs_err *e) {
  if (f->broken) return broken_err(f, e);
  if (rs_h5_append(f->sum, f->sum_mt, f->nsum_file, f->sbuf, f->nsbuf) < 0) {
    f->broken = 1;
    return rs_h5_err(e, f->path, "cannot write /summary");
  }
  f->nsum_file += f->nsbuf;
  f->nsbuf = 0;
  return 0;
}

static int not_writing(rs_runfile *f, rs_err *e) {
  return rs_errf(e, f->path, 0, "run file is open for reading, not writing");
}

int rs_runfile_append(rs_runfile *f, const rs_attempt *a, rs_err *e) {
  if (!f->writing) return not_writing(f, e);
  if (f->broken) return broken_err(f, e);
  if (!memchr(a->instance, 0, sizeof a->instance))
    return rs_errf(e, f->path, 0, "attempt %" PRIu64 ": instance id is not NUL-terminated",
                   f->natt);
  rs_grow((void **)&f->abuf, sizeof *f->abuf, &f->capabuf, (size_t)f->nabuf + 1);
  arec *r = &f->abuf[f->nabuf];
  memset(r, 0, sizeof *r); /* padding too: it reaches the buffer HDF5 converts */
  r->a = *a;
  r->a.candidate = r->a.diag = NULL;
  /* Bytes after the NUL would reach the file: keep it deterministic and compressible. */
  size_t il = strlen(r->a.instance);
  memset(r->a.instance + il, 0, sizeof r->a.instance - il);
  const char *texts[NTEXT] = {a->candidate, a->diag};
  for (int k = 0; k < NTEXT; k++) {
    size_t n = texts[k] ? strlen(texts[k]) : 0;
    if (!texts[k]) r->text_null |= (uint8_t)(1u << k);
    r->off[k] = f->tsize[k] + f->tn[k];
    r->len[k] = n;
    if (f->tn[k] + n > f->tcap[k]) {
      size_t nc = f->tcap[k] ? f->tcap[k] : (1u << 20);
      while (nc < f->tn[k] + n) nc *= 2;
      f->tb[k] = rs_xrealloc(f->tb[k], nc);
      f->tcap[k] = nc;
    }
    if (n) memcpy(f->tb[k] + f->tn[k], texts[k], n);
    f->tn[k] += n;
  }
  f->nabuf++;
  f->natt++;
  if (f->nabuf < FLUSH_ROWS && f->tn[0] + f->tn[1] < FLUSH_BYTES) return 0;
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  int rc = flush_attempts(f, e);
  rs_h5_quiet_off(&q);
  return rc;
}

int rs_runfile_add_summary(rs_runfile *f, const rs_summary *s, rs_err *e) {
  if (!f->writing) return not_writing(f, e);
  if (f->broken) return broken_err(f, e);
  if (!memchr(s->instance, 0, sizeof s->instance))
    return rs_errf(e, f->path, 0, "summary %" PRIu64 ": instance id is not NUL-terminated",
                   f->nsum);
  rs_grow((void **)&f->sbuf, sizeof *f->sbuf, &f->capsbuf, (size_t)f->nsbuf + 1);
  rs_summary *r = &f->sbuf[f->nsbuf];
  memset(r, 0, sizeof *r);
  *r = *s;
  size_t il = strlen(r->instance);
  memset(r->instance + il, 0, sizeof r->instance - il);
  f->nsbuf++;
  f->nsum++;
  if (f->nsbuf < FLUSH_ROWS) return 0;
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  int rc = flush_summaries(f, e);
  rs_h5_quiet_off(&q);
  return rc;
}

int rs_runfile_set_attr(rs_runfile *f, const char *key, const char *value, rs_err *e) {
  if (!f->writing) return not_writing(f, e);
  if (!key || !key[0] || !strcmp(key, "schema_version") || strchr(key, '/'))
    return rs_errf(e, f->path, 0, "invalid attribute name '%s'", key ? key : "(null)");
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  int rc = 0;
  if (rs_h5_set_str_attr(f->root, key, value) < 0) {
    char what[128];
    snprintf(what, sizeof what, "cannot write attribute '%.80s'", key);
    rc = rs_h5_err(e, f->path, what);
  }
  rs_h5_quiet_off(&q);
  return rc;
}

int rs_runfile_close(rs_runfile *f, rs_err *e) {
  if (!f) return 0;
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  int rc = 0;
  if (f->writing) {
    /* The data is only safe once H5Fflush and H5Fclose both succeed (chunk and metadata caches
     * hold the last writes until then): a full disk shows up here. */
    if (f->broken) rc = broken_err(f, e);
    if (!rc) rc = flush_attempts(f, e);
    if (!rc) rc = flush_summaries(f, e);
    if (!rc && H5Fflush(f->file, H5F_SCOPE_LOCAL) < 0)
      rc = rs_h5_err(e, f->path, "cannot flush the run file");
  }
  char *path = rs_xstrndup(f->path, strlen(f->path));
  if (run_free(f) < 0 && !rc) rc = rs_h5_err(e, path, "cannot close the run file");
  free(path);
  H5Eclear2(H5E_DEFAULT);
  rs_h5_quiet_off(&q);
  return rc;
}

/* ---- reading ---- */

rs_runfile *rs_runfile_open(const char *path, rs_err *e) {
  if (access(path, R_OK) != 0) {
    rs_errf(e, path, 0, "cannot open run file: %s", strerror(errno));
    return NULL;
  }
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  rs_runfile *f = run_new(path, 0);
  hid_t fapl = rs_h5_fapl();
  f->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  hid_t st = f->file < 0 ? rs_h5_err_save() : -1;
  if (fapl >= 0) H5Pclose(fapl);
  rs_h5_err_restore(st);
  if (f->file < 0) {
    rs_h5_err(e, path, "not a readable HDF5 file (not a run file, truncated, or corrupt)");
    goto fail;
  }
  f->root = H5Gopen2(f->file, "/", H5P_DEFAULT);
  if (f->root < 0) {
    rs_h5_err(e, path, "cannot open the root group (corrupt file?)");
    goto fail;
  }
  if (rs_h5_check_schema(f->root, path, KIND, RS_RUN_SCHEMA, e) < 0) goto fail;
  f->att_mt = make_att_type();
  f->sum_mt = make_sum_type();
  if (f->att_mt < 0 || f->sum_mt < 0) {
    rs_h5_err(e, path, "cannot build the HDF5 types");
    goto fail;
  }
  f->att = rs_h5_open_ds(f->file, "attempts", 4u << 20);
  f->sum = rs_h5_open_ds(f->file, "summary", 1u << 20);
  if (f->att < 0 || f->sum < 0) {
    rs_h5_err(e, path, "not a " KIND " (missing /attempts or /summary)");
    goto fail;
  }
  if (rs_h5_check_members(f->att, f->att_mt, "/attempts", path, KIND, e) < 0 ||
      rs_h5_check_members(f->sum, f->sum_mt, "/summary", path, KIND, e) < 0)
    goto fail;
  int64_t n = rs_h5_len(f->att), ns = rs_h5_len(f->sum);
  if (n < 0 || ns < 0) {
    rs_h5_err(e, path, "corrupt run file (/attempts or /summary is not 1-D)");
    goto fail;
  }
  f->natt = f->natt_file = (uint64_t)n;
  f->nsum = f->nsum_file = (uint64_t)ns;
  for (int k = 0; k < NTEXT; k++) {
    char nm[32];
    snprintf(nm, sizeof nm, "text/%s", text_name[k]);
    f->text[k] = rs_h5_open_ds(f->file, nm, 8u * TEXT_CHUNK);
    int64_t len = f->text[k] >= 0 ? rs_h5_byte_len(f->text[k]) : -1;
    if (len < 0) {
      char what[96];
      snprintf(what, sizeof what, "not a " KIND " (missing or malformed /text/%s)", text_name[k]);
      rs_h5_err(e, path, what);
      goto fail;
    }
    f->tsize[k] = (uint64_t)len;
  }
  goto done;
fail:
  run_free(f);
  f = NULL;
done:
  H5Eclear2(H5E_DEFAULT);
  rs_h5_quiet_off(&q);
  return f;
}

uint64_t rs_runfile_count(const rs_runfile *f) { return f->natt; }
uint64_t rs_runfile_summary_count(const rs_runfile *f) { return f->nsum; }

static int read_text(rs_runfile *f, uint64_t i, const arec *r, int k, char **out, rs_err *e) {
  *out = NULL;
  if (r->text_null & (1u << k)) return 0;
  uint64_t off = r->off[k], len = r->len[k];
  if (len > MAX_TEXT || off > f->tsize[k] || len > f->tsize[k] - off)
    return rs_errf(e, f->path, 0,
                   "attempt %" PRIu64 ": %s text [%" PRIu64 ", +%" PRIu64 ") is outside "
                   "/text/%s (%" PRIu64 " bytes): corrupt run file",
                   i, text_name[k], off, len, text_name[k], f->tsize[k]);
  char *s = rs_xmalloc((size_t)len + 1);
  if (rs_h5_read(f->text[k], H5T_NATIVE_UINT8, off, s, len) < 0) {
    free(s);
    char what[96];
    snprintf(what, sizeof what, "attempt %" PRIu64 ": cannot read /text/%s", i, text_name[k]);
    return rs_h5_err(e, f->path, what);
  }
  s[len] = 0;
  *out = s;
  return 0;
}

/* Make row i of a table resident in its block buffer (one chunk-aligned block). */
static int load_block(rs_runfile *f, hid_t ds, hid_t mt, const char *dsname, uint64_t i,
                      uint64_t nrows, uint32_t rows, size_t elsize, void **blk, uint64_t *start,
                      uint32_t *n, rs_err *e) {
  if (*blk && i >= *start && i < *start + *n) return 0;
  if (!*blk) *blk = rs_xmalloc(elsize * rows);
  uint64_t s = i / rows * rows;
  uint64_t m = nrows - s < rows ? nrows - s : rows;
  memset(*blk, 0, elsize * rows);
  *n = 0;
  if (rs_h5_read(ds, mt, s, *blk, m) < 0) {
    char what[96];
    snprintf(what, sizeof what, "cannot read %s rows %" PRIu64 "..%" PRIu64, dsname, s,
             s + m - 1);
    return rs_h5_err(e, f->path, what);
  }
  *start = s;
  *n = (uint32_t)m;
  return 0;
}

int rs_runfile_get(rs_runfile *f, uint64_t i, rs_attempt *out, int want_texts, rs_err *e) {
  memset(out, 0, sizeof *out);
  if (f->writing) return rs_errf(e, f->path, 0, "run file is open for writing, not reading");
  if (i >= f->natt)
    return rs_errf(e, f->path, 0, "attempt %" PRIu64 " out of range (%" PRIu64 " rows)", i,
                   f->natt);
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  int rc = load_block(f, f->att, f->att_mt, "/attempts", i, f->natt, ROW_CHUNK, sizeof(arec),
                      (void **)&f->ablk, &f->ablk_start, &f->ablk_n, e);
  if (!rc) {
    const arec *r = &f->ablk[i - f->ablk_start];
    *out = r->a;
    out->candidate = out->diag = NULL;
    out->instance[sizeof out->instance - 1] = 0; /* a damaged file could lack the NUL */
    if (want_texts) {
      rc = read_text(f, i, r, 0, &out->candidate, e);
      if (!rc) rc = read_text(f, i, r, 1, &out->diag, e);
      if (rc) rs_attempt_clear(out);
    }
  }
  rs_h5_quiet_off(&q);
  return rc;
}

int rs_runfile_get_summary(rs_runfile *f, uint64_t i, rs_summary *out, rs_err *e) {
  memset(out, 0, sizeof *out);
  if (f->writing) return rs_errf(e, f->path, 0, "run file is open for writing, not reading");
  if (i >= f->nsum)
    return rs_errf(e, f->path, 0, "summary %" PRIu64 " out of range (%" PRIu64 " rows)", i,
                   f->nsum);
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  int rc = load_block(f, f->sum, f->sum_mt, "/summary", i, f->nsum, SUM_CHUNK, sizeof(rs_summary),
                      (void **)&f->sblk, &f->sblk_start, &f->sblk_n, e);
  if (!rc) {
    *out = f->sblk[i - f->sblk_start];
    out->instance[sizeof out->instance - 1] = 0;
  }
  rs_h5_quiet_off(&q);
  return rc;
}

char *rs_runfile_get_attr(rs_runfile *f, const char *key) {
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  char *v = rs_h5_get_str_attr(f->root, key);
  rs_h5_quiet_off(&q);
  return v;
}

void rs_attempt_clear(rs_attempt *a) {
  if (!a) return;
  free(a->candidate);
  free(a->diag);
  a->candidate = a->diag = NULL;
}
