/* corpus_h5.c - storage/corpus.h on HDF5 (serial). Layout: docs/corpus-schema.md.
 *
 * Texts go to four extendible uint8 datasets (/text/raw, /text/norm, /text/name_map, /text/truth)
 * because HDF5 filters do not compress variable-length strings; the row table /instances keeps
 * (offset, length) per text. Rows and text bytes are buffered and written in batches so a 20k-row
 * build does a few hundred extend+write calls instead of 100k.
 *
 * Every public entry point silences HDF5's automatic error printing and restores the caller's
 * handler on return (the library never prints); the innermost HDF5 message is copied into rs_err.
 * A rs_corpus is not thread-safe, and neither is the serial HDF5 library underneath it. */
#include "storage/corpus.h"
#include <errno.h>
#include <hdf5.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NTEXT = 4 };
static const char *const text_name[NTEXT] = {"raw", "norm", "name_map", "truth"};

#define ROW_CHUNK 256                  /* rows per chunk of /instances */
#define TEXT_CHUNK (1u << 20)          /* bytes per chunk of /text/<kind> */
#define DEFLATE_LEVEL 5
#define FLUSH_ROWS 512                 /* write buffered rows after this many ... */
#define FLUSH_BYTES (16u << 20)        /* ... or this many buffered text bytes */
#define MAX_TEXT ((uint64_t)1 << 32)   /* a longer text means a corrupt length field */

/* One row as HDF5 sees it in memory: the fixed fields of rs_instance plus text locations.
 * The text pointers inside `in` are not part of the HDF5 type. */
typedef struct {
  rs_instance in;
  uint64_t off[NTEXT], len[NTEXT];
  uint8_t text_null; /* bit k set: text k was NULL (distinct from "") */
} rec;

typedef char idbuf[sizeof(((rs_instance *)0)->id)];

struct rs_corpus {
  char *path;
  int writing;
  hid_t file, root, inst, fail, text[NTEXT];
  hid_t rec_mt, fail_mt;    /* memory types */
  uint64_t nrows;           /* rows in the file plus rows buffered */
  uint64_t nflushed;        /* rows in the file */
  uint64_t tsize[NTEXT];    /* bytes in each text dataset */
  /* writer buffers */
  rec *buf;
  uint32_t nbuf, capbuf;
  uint8_t *tb[NTEXT];
  size_t tn[NTEXT], tcap[NTEXT];
  rs_build_failure *fails;
  uint32_t nfails, capfails;
  uint64_t nfail_file;      /* reader: rows of /failures */
  /* reader: one block of rows, chunk-aligned, for sequential and nearby access */
  rec *blk;
  uint64_t blk_start;
  uint32_t blk_n;
  /* id index (writer: always, to reject duplicates; reader: built on first find) */
  idbuf *ids;
  uint32_t nids, capids;
  uint32_t *tab; /* open addressing, row+1, 0 = empty */
  uint32_t tabcap;
  int indexed;
};

/* ---- HDF5 error handling ---- */

typedef struct {
  H5E_auto2_t fn;
  void *data;
} quiet;

static void quiet_on(quiet *q) {
  if (H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data) < 0) {
    q->fn = NULL;
    q->data = NULL;
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}
static void quiet_off(const quiet *q) { H5Eset_auto2(H5E_DEFAULT, q->fn, q->data); }

static herr_t innermost_cb(unsigned n, const H5E_error2_t *err, void *data) {
  if (n == 0 && err->desc) snprintf(data, 200, "%s", err->desc);
  return 0;
}

/* Fill e with "path: what (HDF5: innermost message)". Returns -1. */
static int h5err(rs_err *e, const char *path, const char *what) {
  char detail[200] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_cb, detail);
  H5Eclear2(H5E_DEFAULT);
  if (detail[0]) return rs_errf(e, path, 0, "%s (HDF5: %s)", what, detail);
  return rs_errf(e, path, 0, "%s", what);
}

/* Cleanup calls are API calls and clear the error stack: keep a copy across them. */
static hid_t err_save(void) { return H5Eget_current_stack(); }
static void err_restore(hid_t st) {
  if (st >= 0) H5Eset_current_stack(st); /* also closes st */
}

static void close_id(hid_t *id, herr_t (*fn)(hid_t)) {
  if (*id >= 0) fn(*id);
  *id = -1;
}

/* ---- types ---- */

static int add_str(hid_t t, const char *name, size_t off, size_t size) {
  hid_t s = H5Tcopy(H5T_C_S1);
  int bad = s < 0 || H5Tset_size(s, size) < 0 || H5Tset_strpad(s, H5T_STR_NULLTERM) < 0 ||
            H5Tinsert(t, name, off, s) < 0;
  if (s >= 0) H5Tclose(s);
  return bad ? -1 : 0;
}

#define FSIZE(T, f) sizeof(((T *)0)->f)

static hid_t make_rec_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(rec));
  if (t < 0) return -1;
  int bad = 0;
#define S(f) bad |= add_str(t, #f, HOFFSET(rec, in.f), FSIZE(rs_instance, f))
#define N(name, off, ty) bad |= H5Tinsert(t, name, off, ty) < 0
  S(id); S(family); S(kind); S(target); S(form); S(variant); S(params); S(function);
  N("ir_hash", HOFFSET(rec, in.ir_hash), H5T_NATIVE_UINT64);
  S(truth_reason);
  N("nvregs", HOFFSET(rec, in.nvregs), H5T_NATIVE_UINT32);
  N("ninsts", HOFFSET(rec, in.ninsts), H5T_NATIVE_UINT32);
  N("nblocks", HOFFSET(rec, in.nblocks), H5T_NATIVE_UINT32);
  N("nconf", HOFFSET(rec, in.nconf), H5T_NATIVE_UINT32);
  /* Arrays as plain columns (maxp_0 ...): pandas takes scalar fields only. */
  for (int k = 0; k < RS_CORPUS_NFILES; k++) {
    char nm[32];
    snprintf(nm, sizeof nm, "maxp_%d", k);
    N(nm, HOFFSET(rec, in.maxp) + (size_t)k * sizeof(uint32_t), H5T_NATIVE_UINT32);
  }
  for (int k = 0; k < RS_CORPUS_NFILES; k++) {
    char nm[32];
    snprintf(nm, sizeof nm, "ref_regs_%d", k);
    N(nm, HOFFSET(rec, in.ref_regs) + (size_t)k * sizeof(uint32_t), H5T_NATIVE_UINT32);
  }
  N("spill_bytes", HOFFSET(rec, in.spill_bytes), H5T_NATIVE_UINT32);
  N("infeasible", HOFFSET(rec, in.infeasible), H5T_NATIVE_UINT8);
  N("split", HOFFSET(rec, in.split), H5T_NATIVE_UINT8);
  N("same_nv", HOFFSET(rec, in.same_nv), H5T_NATIVE_UINT8);
  N("same_amd", HOFFSET(rec, in.same_amd), H5T_NATIVE_UINT8);
  N("raw_lines", HOFFSET(rec, in.raw_lines), H5T_NATIVE_UINT32);
  N("norm_lines", HOFFSET(rec, in.norm_lines), H5T_NATIVE_UINT32);
  N("raw_tokens", HOFFSET(rec, in.raw_tokens), H5T_NATIVE_UINT32);
  N("norm_tokens", HOFFSET(rec, in.norm_tokens), H5T_NATIVE_UINT32);
  for (int k = 0; k < NTEXT; k++) {
    char nm[32];
    snprintf(nm, sizeof nm, "%s_off", text_name[k]);
    N(nm, HOFFSET(rec, off) + (size_t)k * sizeof(uint64_t), H5T_NATIVE_UINT64);
    snprintf(nm, sizeof nm, "%s_len", text_name[k]);
    N(nm, HOFFSET(rec, len) + (size_t)k * sizeof(uint64_t), H5T_NATIVE_UINT64);
  }
  N("text_null", HOFFSET(rec, text_null), H5T_NATIVE_UINT8);
#undef S
#undef N
  if (bad) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

static hid_t make_fail_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(rs_build_failure));
  if (t < 0) return -1;
  int bad = 0;
#define S(f) bad |= add_str(t, #f, HOFFSET(rs_build_failure, f), FSIZE(rs_build_failure, f))
  S(variant); S(family); S(target); S(params); S(message);
#undef S
  if (bad) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

/* File type: the memory type without its padding. */
static hid_t file_type_of(hid_t mt) {
  hid_t t = H5Tcopy(mt);
  if (t < 0) return -1;
  if (H5Tpack(t) < 0) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

/* ---- datasets ---- */

static hid_t cache_dapl(size_t bytes) {
  hid_t p = H5Pcreate(H5P_DATASET_ACCESS);
  if (p >= 0) H5Pset_chunk_cache(p, 521, bytes, 0.75);
  return p;
}

static hid_t make_ds(hid_t loc, const char *name, hid_t ftype, hsize_t chunk, int shuffle,
                     size_t cache) {
  hsize_t dims = 0, maxd = H5S_UNLIMITED;
  hid_t sp = H5Screate_simple(1, &dims, &maxd);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t dapl = cache_dapl(cache);
  hid_t ds = -1;
  /* Shuffle only where elements are wider than a byte (it is the identity on uint8);
   * fletcher32 last so a damaged chunk is reported rather than decoded into garbage. */
  if (sp >= 0 && dcpl >= 0 && dapl >= 0 && H5Pset_chunk(dcpl, 1, &chunk) >= 0 &&
      (!shuffle || H5Pset_shuffle(dcpl) >= 0) && H5Pset_deflate(dcpl, DEFLATE_LEVEL) >= 0 &&
      H5Pset_fletcher32(dcpl) >= 0)
    ds = H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, dcpl, dapl);
  hid_t st = ds < 0 ? err_save() : -1;
  if (sp >= 0) H5Sclose(sp);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (dapl >= 0) H5Pclose(dapl);
  err_restore(st);
  return ds;
}

/* Extend ds to at+n elements and write buf there. */
static int ds_append(hid_t ds, hid_t mtype, uint64_t at, const void *buf, hsize_t n) {
  if (n == 0) return 0;
  hsize_t size = at + n, start = at;
  if (H5Dset_extent(ds, &size) < 0) return -1;
  hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(1, &n, NULL);
  int rc = -1;
  if (fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &n, NULL) >= 0 &&
      H5Dwrite(ds, mtype, ms, fs, H5P_DEFAULT, buf) >= 0)
    rc = 0;
  hid_t st = rc ? err_save() : -1;
  if (fs >= 0) H5Sclose(fs);
  if (ms >= 0) H5Sclose(ms);
  err_restore(st);
  return rc;
}

static int ds_read(hid_t ds, hid_t mtype, uint64_t at, void *buf, hsize_t n) {
  if (n == 0) return 0;
  hsize_t start = at;
  hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(1, &n, NULL);
  int rc = -1;
  if (fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &n, NULL) >= 0 &&
      H5Dread(ds, mtype, ms, fs, H5P_DEFAULT, buf) >= 0)
    rc = 0;
  hid_t st = rc ? err_save() : -1;
  if (fs >= 0) H5Sclose(fs);
  if (ms >= 0) H5Sclose(ms);
  err_restore(st);
  return rc;
}

/* Number of elements of a 1-D dataset, or -1 when it is not 1-D. */
static int64_t ds_len(hid_t ds) {
  hid_t sp = H5Dget_space(ds);
  if (sp < 0) return -1;
  hsize_t d = 0;
  int r = H5Sget_simple_extent_ndims(sp);
  if (r == 1) H5Sget_simple_extent_dims(sp, &d, NULL);
  H5Sclose(sp);
  return r == 1 ? (int64_t)d : -1;
}

/* ---- id index ---- */

static void index_insert_slot(rs_corpus *c, uint32_t row) {
  const char *id = c->ids[row];
  uint32_t j = (uint32_t)rs_hash_bytes(id, strlen(id), 0) & (c->tabcap - 1);
  while (c->tab[j]) j = (j + 1) & (c->tabcap - 1);
  c->tab[j] = row + 1;
}

static int64_t index_lookup(const rs_corpus *c, const char *id) {
  if (!c->tabcap) return -1;
  uint32_t j = (uint32_t)rs_hash_bytes(id, strlen(id), 0) & (c->tabcap - 1);
  while (c->tab[j]) {
    if (!strcmp(c->ids[c->tab[j] - 1], id)) return (int64_t)c->tab[j] - 1;
    j = (j + 1) & (c->tabcap - 1);
  }
  return -1;
}

/* Add ids[row] (already stored) to the table, growing it to stay at most half full. */
static void index_add(rs_corpus *c, uint32_t row) {
  if ((uint64_t)(row + 1) * 2 > c->tabcap) {
    uint32_t nc = c->tabcap ? c->tabcap * 2 : 1024;
    while ((uint64_t)(row + 1) * 2 > nc) nc *= 2;
    free(c->tab);
    c->tab = rs_xcalloc(nc, sizeof *c->tab);
    c->tabcap = nc;
    for (uint32_t i = 0; i < row; i++) index_insert_slot(c, i);
  }
  index_insert_slot(c, row);
}

/* ---- lifecycle ---- */

static rs_corpus *corpus_new(const char *path, int writing) {
  rs_corpus *c = rs_xcalloc(1, sizeof *c);
  c->path = rs_xstrndup(path, strlen(path));
  c->writing = writing;
  c->file = c->root = c->inst = c->fail = c->rec_mt = c->fail_mt = -1;
  for (int k = 0; k < NTEXT; k++) c->text[k] = -1;
  return c;
}

/* Close every HDF5 object and free memory; returns -1 if closing the file failed. */
static int corpus_free(rs_corpus *c) {
  int rc = 0;
  close_id(&c->inst, H5Dclose);
  close_id(&c->fail, H5Dclose);
  for (int k = 0; k < NTEXT; k++) {
    close_id(&c->text[k], H5Dclose);
    free(c->tb[k]);
  }
  close_id(&c->rec_mt, H5Tclose);
  close_id(&c->fail_mt, H5Tclose);
  close_id(&c->root, H5Gclose);
  if (c->file >= 0 && H5Fclose(c->file) < 0) rc = -1;
  c->file = -1;
  free(c->buf);
  free(c->fails);
  free(c->blk);
  free(c->ids);
  free(c->tab);
  free(c->path);
  free(c);
  return rc;
}

static hid_t make_fapl(void) {
  hid_t p = H5Pcreate(H5P_FILE_ACCESS);
  /* 1.8+ object headers: attributes over 64 KiB go to dense storage instead of failing. */
  if (p >= 0) H5Pset_libver_bounds(p, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  return p;
}

rs_corpus *rs_corpus_create(const char *path, rs_err *e) {
  quiet q;
  quiet_on(&q);
  rs_corpus *c = corpus_new(path, 1);
  hid_t fapl = make_fapl(), gtext = -1, ft = -1, fft = -1, sp = -1, at = -1;
  int ver = RS_CORPUS_SCHEMA;
  const char *what = NULL;
  int created = 0;
  c->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  if (c->file < 0) {
    what = "cannot create the corpus file";
    goto fail;
  }
  created = 1;
  c->root = H5Gopen2(c->file, "/", H5P_DEFAULT);
  c->rec_mt = make_rec_type();
  c->fail_mt = make_fail_type();
  ft = c->rec_mt >= 0 ? file_type_of(c->rec_mt) : -1;
  fft = c->fail_mt >= 0 ? file_type_of(c->fail_mt) : -1;
  if (c->root < 0 || ft < 0 || fft < 0) {
    what = "cannot build the HDF5 types";
    goto fail;
  }
  sp = H5Screate(H5S_SCALAR);
  at = sp >= 0 ? H5Acreate2(c->root, "schema_version", H5T_STD_I32LE, sp, H5P_DEFAULT,
                            H5P_DEFAULT)
               : -1;
  if (at < 0 || H5Awrite(at, H5T_NATIVE_INT, &ver) < 0) {
    what = "cannot write schema_version";
    goto fail;
  }
  what = "cannot create the corpus datasets";
  if ((c->inst = make_ds(c->file, "instances", ft, ROW_CHUNK, 1, 1u << 20)) < 0) goto fail;
  if ((c->fail = make_ds(c->file, "failures", fft, 64, 1, 1u << 20)) < 0) goto fail;
  if ((gtext = H5Gcreate2(c->file, "text", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) goto fail;
  for (int k = 0; k < NTEXT; k++) {
    c->text[k] = make_ds(gtext, text_name[k], H5T_STD_U8LE, TEXT_CHUNK, 0, 4u * TEXT_CHUNK);
    if (c->text[k] < 0) {
      what = "cannot create the text datasets";
      goto fail;
    }
  }
  goto done;
fail:
  h5err(e, path, what);
  corpus_free(c);
  c = NULL;
  if (created) unlink(path); /* no half-made corpus left behind */
done:
  if (fapl >= 0) H5Pclose(fapl);
  if (gtext >= 0) H5Gclose(gtext);
  if (ft >= 0) H5Tclose(ft);
  if (fft >= 0) H5Tclose(fft);
  if (at >= 0) H5Aclose(at);
  if (sp >= 0) H5Sclose(sp);
  quiet_off(&q);
  return c;
}

/* Write buffered rows and text bytes. Called with HDF5 printing already silenced. */
static int flush_rows(rs_corpus *c, rs_err *e) {
  for (int k = 0; k < NTEXT; k++) {
    if (ds_append(c->text[k], H5T_NATIVE_UINT8, c->tsize[k], c->tb[k], c->tn[k]) < 0) {
      char what[64];
      snprintf(what, sizeof what, "cannot write /text/%s", text_name[k]);
      return h5err(e, c->path, what);
    }
    c->tsize[k] += c->tn[k];
    c->tn[k] = 0;
  }
  if (ds_append(c->inst, c->rec_mt, c->nflushed, c->buf, c->nbuf) < 0)
    return h5err(e, c->path, "cannot write /instances");
  c->nflushed += c->nbuf;
  c->nbuf = 0;
  return 0;
}

static int check_term(const char *s, size_t n, const char *field, const char *path, uint64_t row,
                      rs_err *e) {
  if (memchr(s, 0, n)) return 0;
  return rs_errf(e, path, 0, "row %" PRIu64 ": field %s is not NUL-terminated", row, field);
}

int rs_corpus_append(rs_corpus *c, const rs_instance *in, rs_err *e) {
  if (!c->writing) return rs_errf(e, c->path, 0, "corpus is open for reading, not writing");
  uint64_t row = c->nrows;
  if (row >= UINT32_MAX / 2) return rs_errf(e, c->path, 0, "too many rows");
#define T(f)                                                                   \
  if (check_term(in->f, sizeof in->f, #f, c->path, row, e) < 0) return -1;
  T(id) T(family) T(kind) T(target) T(form) T(variant) T(params) T(function) T(truth_reason)
#undef T
  if (!in->id[0]) return rs_errf(e, c->path, 0, "row %" PRIu64 ": empty id", row);
  int64_t dup = index_lookup(c, in->id);
  if (dup >= 0)
    return rs_errf(e, c->path, 0, "row %" PRIu64 ": duplicate id '%s' (row %" PRId64 ")", row,
                   in->id, dup);

  rs_grow((void **)&c->buf, sizeof *c->buf, &c->capbuf, (size_t)c->nbuf + 1);
  rec *r = &c->buf[c->nbuf];
  memset(r, 0, sizeof *r);
  r->in = *in;
  const char *texts[NTEXT] = {in->raw, in->norm, in->name_map, in->truth};
  r->in.raw = r->in.norm = r->in.name_map = r->in.truth = NULL;
  for (int k = 0; k < NTEXT; k++) {
    size_t n = texts[k] ? strlen(texts[k]) : 0;
    if (!texts[k]) r->text_null |= (uint8_t)(1u << k);
    r->off[k] = c->tsize[k] + c->tn[k];
    r->len[k] = n;
    if (c->tn[k] + n > c->tcap[k]) {
      size_t nc = c->tcap[k] ? c->tcap[k] : (1u << 20);
      while (nc < c->tn[k] + n) nc *= 2;
      c->tb[k] = rs_xrealloc(c->tb[k], nc);
      c->tcap[k] = nc;
    }
    if (n) memcpy(c->tb[k] + c->tn[k], texts[k], n);
    c->tn[k] += n;
  }
  c->nbuf++;
  c->nrows++;
  rs_grow((void **)&c->ids, sizeof *c->ids, &c->capids, (size_t)c->nids + 1);
  memcpy(c->ids[c->nids], in->id, sizeof c->ids[0]);
  index_add(c, c->nids++);

  size_t pending = 0;
  for (int k = 0; k < NTEXT; k++) pending += c->tn[k];
  if (c->nbuf < FLUSH_ROWS && pending < FLUSH_BYTES) return 0;
  quiet q;
  quiet_on(&q);
  int rc = flush_rows(c, e);
  quiet_off(&q);
  return rc;
}

int rs_corpus_add_failure(rs_corpus *c, const rs_build_failure *f, rs_err *e) {
  if (!c->writing) return rs_errf(e, c->path, 0, "corpus is open for reading, not writing");
  uint64_t row = c->nfails;
#define T(x)                                                                   \
  if (check_term(f->x, sizeof f->x, "failure " #x, c->path, row, e) < 0) return -1;
  T(variant) T(family) T(target) T(params) T(message)
#undef T
  RS_PUSH(c->fails, c->nfails, c->capfails, *f);
  return 0;
}

int rs_corpus_set_attr(rs_corpus *c, const char *key, const char *value, rs_err *e) {
  if (!c->writing) return rs_errf(e, c->path, 0, "corpus is open for reading, not writing");
  if (!key || !key[0] || !strcmp(key, "schema_version") || strchr(key, '/'))
    return rs_errf(e, c->path, 0, "invalid attribute name '%s'", key ? key : "(null)");
  if (!value) value = "";
  quiet q;
  quiet_on(&q);
  int rc = 0;
  hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a = -1;
  htri_t ex = H5Aexists(c->root, key);
  if (ex > 0) H5Adelete(c->root, key); /* last value wins */
  if (t < 0 || sp < 0 || ex < 0 || H5Tset_size(t, strlen(value) + 1) < 0 ||
      H5Tset_strpad(t, H5T_STR_NULLTERM) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0 ||
      (a = H5Acreate2(c->root, key, t, sp, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
      H5Awrite(a, t, value) < 0) {
    char what[128];
    snprintf(what, sizeof what, "cannot write attribute '%.80s'", key);
    rc = h5err(e, c->path, what);
  }
  if (a >= 0) H5Aclose(a);
  if (t >= 0) H5Tclose(t);
  if (sp >= 0) H5Sclose(sp);
  quiet_off(&q);
  return rc;
}

/* ---- reading ---- */

/* Every member of the memory type must exist in the file's compound type (HDF5 would otherwise
 * silently leave missing fields untouched). */
static int check_members(hid_t ds, hid_t mt, const char *dsname, const char *path, rs_err *e) {
  hid_t ft = H5Dget_type(ds);
  if (ft < 0 || H5Tget_class(ft) != H5T_COMPOUND) {
    if (ft >= 0) H5Tclose(ft);
    return rs_errf(e, path, 0, "not a regsweep corpus: %s is not a table", dsname);
  }
  int n = H5Tget_nmembers(mt), rc = 0;
  for (int i = 0; i < n && !rc; i++) {
    char *nm = H5Tget_member_name(mt, (unsigned)i);
    if (nm && H5Tget_member_index(ft, nm) < 0)
      rc = rs_errf(e, path, 0, "not a regsweep corpus: %s has no column '%s'", dsname, nm);
    H5free_memory(nm);
  }
  H5Tclose(ft);
  H5Eclear2(H5E_DEFAULT);
  return rc;
}

static hid_t open_ds(hid_t file, const char *name, size_t cache) {
  /* H5Lexists on "a/b" fails when "a" is missing; that reads the same as absent. */
  const char *slash = strchr(name, '/');
  if (slash) {
    char parent[64];
    snprintf(parent, sizeof parent, "%.*s", (int)(slash - name), name);
    if (H5Lexists(file, parent, H5P_DEFAULT) <= 0) return -1;
  }
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return -1;
  hid_t dapl = cache_dapl(cache);
  hid_t ds = H5Dopen2(file, name, dapl);
  hid_t st = ds < 0 ? err_save() : -1;
  if (dapl >= 0) H5Pclose(dapl);
  err_restore(st);
  return ds;
}

rs_corpus *rs_corpus_open(const char *path, rs_err *e) {
  if (access(path, R_OK) != 0) {
    rs_errf(e, path, 0, "cannot open corpus: %s", strerror(errno));
    return NULL;
  }
  quiet q;
  quiet_on(&q);
  rs_corpus *c = corpus_new(path, 0);
  hid_t fapl = make_fapl(), a = -1, at = -1, asp = -1;
  c->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  hid_t st = c->file < 0 ? err_save() : -1;
  if (fapl >= 0) H5Pclose(fapl);
  err_restore(st);
  if (c->file < 0) {
    h5err(e, path, "not a readable HDF5 file (not a corpus, truncated, or corrupt)");
    goto fail;
  }
  c->root = H5Gopen2(c->file, "/", H5P_DEFAULT);
  if (c->root < 0) {
    h5err(e, path, "cannot open the root group (corrupt file?)");
    goto fail;
  }
  htri_t has = H5Aexists(c->root, "schema_version");
  if (has < 0) {
    h5err(e, path, "cannot read the file attributes (corrupt file?)");
    goto fail;
  }
  if (has == 0) {
    rs_errf(e, path, 0, "not a regsweep corpus (no schema_version attribute)");
    goto fail;
  }
  int ver = -1;
  a = H5Aopen(c->root, "schema_version", H5P_DEFAULT);
  at = a >= 0 ? H5Aget_type(a) : -1;
  asp = a >= 0 ? H5Aget_space(a) : -1;
  if (at < 0 || asp < 0 || H5Tget_class(at) != H5T_INTEGER ||
      H5Sget_simple_extent_npoints(asp) != 1 || H5Aread(a, H5T_NATIVE_INT, &ver) < 0) {
    h5err(e, path, "not a regsweep corpus (unreadable schema_version)");
    goto fail;
  }
  if (ver != RS_CORPUS_SCHEMA) {
    rs_errf(e, path, 0, "corpus schema version %d; this build reads version %d", ver,
            RS_CORPUS_SCHEMA);
    goto fail;
  }
  c->rec_mt = make_rec_type();
  c->fail_mt = make_fail_type();
  if (c->rec_mt < 0 || c->fail_mt < 0) {
    h5err(e, path, "cannot build the HDF5 types");
    goto fail;
  }
  c->inst = open_ds(c->file, "instances", 1u << 20);
  c->fail = open_ds(c->file, "failures", 1u << 20);
  if (c->inst < 0 || c->fail < 0) {
    h5err(e, path, "not a regsweep corpus (missing /instances or /failures)");
    goto fail;
  }
  if (check_members(c->inst, c->rec_mt, "/instances", path, e) < 0 ||
      check_members(c->fail, c->fail_mt, "/failures", path, e) < 0)
    goto fail;
  int64_t n = ds_len(c->inst), nf = ds_len(c->fail);
  if (n < 0 || nf < 0) {
    h5err(e, path, "corrupt corpus (/instances or /failures is not 1-D)");
    goto fail;
  }
  c->nrows = c->nflushed = (uint64_t)n;
  c->nfail_file = (uint64_t)nf;
  for (int k = 0; k < NTEXT; k++) {
    char nm[32];
    snprintf(nm, sizeof nm, "text/%s", text_name[k]);
    c->text[k] = open_ds(c->file, nm, 4u * TEXT_CHUNK);
    hid_t tt = c->text[k] >= 0 ? H5Dget_type(c->text[k]) : -1;
    int ok = tt >= 0 && H5Tget_class(tt) == H5T_INTEGER && H5Tget_size(tt) == 1;
    if (tt >= 0) H5Tclose(tt);
    int64_t len = ok ? ds_len(c->text[k]) : -1;
    if (len < 0) {
      char what[96];
      snprintf(what, sizeof what, "not a regsweep corpus (missing or malformed /text/%s)",
               text_name[k]);
      h5err(e, path, what);
      goto fail;
    }
    c->tsize[k] = (uint64_t)len;
  }
  goto done;
fail:
  corpus_free(c);
  c = NULL;
done:
  if (asp >= 0) H5Sclose(asp);
  if (at >= 0) H5Tclose(at);
  if (a >= 0) H5Aclose(a);
  H5Eclear2(H5E_DEFAULT);
  quiet_off(&q);
  return c;
}

uint64_t rs_corpus_count(const rs_corpus *c) { return c->nrows; }

uint64_t rs_corpus_failure_count(const rs_corpus *c) {
  return c->writing ? c->nfails : c->nfail_file;
}

static int read_text(rs_corpus *c, uint64_t i, const rec *r, int k, char **out, rs_err *e) {
  *out = NULL;
  if (r->text_null & (1u << k)) return 0;
  uint64_t off = r->off[k], len = r->len[k];
  if (len > MAX_TEXT || off > c->tsize[k] || len > c->tsize[k] - off)
    return rs_errf(e, c->path, 0,
                   "row %" PRIu64 ": %s text [%" PRIu64 ", +%" PRIu64 ") is outside /text/%s "
                   "(%" PRIu64 " bytes): corrupt corpus",
                   i, text_name[k], off, len, text_name[k], c->tsize[k]);
  char *s = rs_xmalloc((size_t)len + 1);
  if (ds_read(c->text[k], H5T_NATIVE_UINT8, off, s, len) < 0) {
    free(s);
    char what[96];
    snprintf(what, sizeof what, "row %" PRIu64 ": cannot read /text/%s", i, text_name[k]);
    return h5err(e, c->path, what);
  }
  s[len] = 0;
  *out = s;
  return 0;
}

int rs_corpus_get(rs_corpus *c, uint64_t i, rs_instance *out, int want_texts, rs_err *e) {
  if (c->writing) return rs_errf(e, c->path, 0, "corpus is open for writing, not reading");
  if (i >= c->nrows)
    return rs_errf(e, c->path, 0, "row %" PRIu64 " out of range (%" PRIu64 " rows)", i,
                   c->nrows);
  quiet q;
  quiet_on(&q);
  int rc = 0;
  if (!c->blk || i < c->blk_start || i >= c->blk_start + c->blk_n) {
    if (!c->blk) c->blk = rs_xmalloc(sizeof *c->blk * ROW_CHUNK);
    uint64_t start = i / ROW_CHUNK * ROW_CHUNK;
    uint64_t n = c->nrows - start < ROW_CHUNK ? c->nrows - start : ROW_CHUNK;
    memset(c->blk, 0, sizeof *c->blk * ROW_CHUNK);
    c->blk_n = 0;
    if (ds_read(c->inst, c->rec_mt, start, c->blk, n) < 0) {
      char what[96];
      snprintf(what, sizeof what, "cannot read /instances rows %" PRIu64 "..%" PRIu64, start,
               start + n - 1);
      rc = h5err(e, c->path, what);
      goto out;
    }
    c->blk_start = start;
    c->blk_n = (uint32_t)n;
  }
  const rec *r = &c->blk[i - c->blk_start];
  *out = r->in;
  out->raw = out->norm = out->name_map = out->truth = NULL;
  /* A damaged file could hold unterminated strings; never hand those out. */
#define Z(f) out->f[sizeof out->f - 1] = 0;
  Z(id) Z(family) Z(kind) Z(target) Z(form) Z(variant) Z(params) Z(function) Z(truth_reason)
#undef Z
  if (want_texts) {
    char **dst[NTEXT] = {&out->raw, &out->norm, &out->name_map, &out->truth};
    for (int k = 0; k < NTEXT && !rc; k++) rc = read_text(c, i, r, k, dst[k], e);
    if (rc) rs_instance_clear(out);
  }
out:
  quiet_off(&q);
  return rc;
}

int rs_corpus_get_failure(rs_corpus *c, uint64_t i, rs_build_failure *out, rs_err *e) {
  if (c->writing) {
    if (i >= c->nfails) return rs_errf(e, c->path, 0, "failure %" PRIu64 " out of range", i);
    *out = c->fails[i];
    return 0;
  }
  if (i >= c->nfail_file)
    return rs_errf(e, c->path, 0, "failure %" PRIu64 " out of range (%" PRIu64 " failures)", i,
                   c->nfail_file);
  quiet q;
  quiet_on(&q);
  int rc = 0;
  memset(out, 0, sizeof *out);
  if (ds_read(c->fail, c->fail_mt, i, out, 1) < 0) {
    char what[64];
    snprintf(what, sizeof what, "cannot read /failures row %" PRIu64, i);
    rc = h5err(e, c->path, what);
  }
#define Z(f) out->f[sizeof out->f - 1] = 0;
  Z(variant) Z(family) Z(target) Z(params) Z(message)
#undef Z
  quiet_off(&q);
  return rc;
}

/* Reader: load every id (only the id column is converted) and hash them. */
static int build_index(rs_corpus *c, rs_err *e) {
  if (c->nrows >= UINT32_MAX / 2) return rs_errf(e, c->path, 0, "too many rows to index");
  hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(idbuf));
  int rc = 0;
  if (mt < 0 || add_str(mt, "id", 0, sizeof(idbuf)) < 0) {
    rc = h5err(e, c->path, "cannot build the id type");
    goto out;
  }
  free(c->ids);
  c->ids = rs_xcalloc(c->nrows ? (size_t)c->nrows : 1, sizeof *c->ids);
  c->capids = (uint32_t)(c->nrows ? c->nrows : 1);
  if (ds_read(c->inst, mt, 0, c->ids, c->nrows) < 0) {
    rc = h5err(e, c->path, "cannot read the id column of /instances");
    goto out;
  }
  for (uint32_t i = 0; i < (uint32_t)c->nrows; i++) {
    c->ids[i][sizeof c->ids[i] - 1] = 0;
    index_add(c, i);
  }
  c->nids = (uint32_t)c->nrows;
  c->indexed = 1;
out:
  if (mt >= 0) H5Tclose(mt);
  return rc;
}

int64_t rs_corpus_find(rs_corpus *c, const char *id, rs_err *e) {
  if (!c->writing && !c->indexed) {
    quiet q;
    quiet_on(&q);
    int rc = build_index(c, e);
    quiet_off(&q);
    if (rc < 0) return -2;
  }
  return index_lookup(c, id);
}

char *rs_corpus_get_attr(rs_corpus *c, const char *key) {
  if (!key || !key[0]) return NULL;
  quiet q;
  quiet_on(&q);
  char *val = NULL;
  hid_t a = -1, t = -1, mt = -1;
  if (H5Aexists(c->root, key) <= 0) goto out;
  a = H5Aopen(c->root, key, H5P_DEFAULT);
  t = a >= 0 ? H5Aget_type(a) : -1;
  if (t < 0 || H5Tget_class(t) != H5T_STRING) goto out;
  if (H5Tis_variable_str(t) > 0) {
    /* Written by another tool (h5py writes variable-length strings). */
    char *vl = NULL;
    mt = H5Tcopy(H5T_C_S1);
    if (mt >= 0 && H5Tset_size(mt, H5T_VARIABLE) >= 0 && H5Aread(a, mt, &vl) >= 0 && vl) {
      val = rs_xstrndup(vl, strlen(vl));
      H5free_memory(vl);
    }
  } else {
    size_t n = H5Tget_size(t);
    char *s = rs_xcalloc(n + 1, 1);
    if (H5Aread(a, t, s) >= 0) {
      s[n] = 0;
      val = s;
    } else {
      free(s);
    }
  }
out:
  if (mt >= 0) H5Tclose(mt);
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  H5Eclear2(H5E_DEFAULT);
  quiet_off(&q);
  return val;
}

int rs_corpus_close(rs_corpus *c, rs_err *e) {
  if (!c) return 0;
  quiet q;
  quiet_on(&q);
  int rc = 0;
  if (c->writing) {
    rc = flush_rows(c, e);
    if (!rc && ds_append(c->fail, c->fail_mt, 0, c->fails, c->nfails) < 0)
      rc = h5err(e, c->path, "cannot write /failures");
    if (!rc && H5Fflush(c->file, H5F_SCOPE_LOCAL) < 0)
      rc = h5err(e, c->path, "cannot flush the corpus file");
  }
  char *path = rs_xstrndup(c->path, strlen(c->path));
  if (corpus_free(c) < 0 && !rc) rc = h5err(e, path, "cannot close the corpus file");
  free(path);
  H5Eclear2(H5E_DEFAULT);
  quiet_off(&q);
  return rc;
}

void rs_instance_clear(rs_instance *in) {
  if (!in) return;
  free(in->raw);
  free(in->norm);
  free(in->name_map);
  free(in->truth);
  in->raw = in->norm = in->name_map = in->truth = NULL;
}
