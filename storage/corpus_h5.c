/* corpus_h5.c - storage/corpus.h on HDF5 (serial). Layout: docs/corpus-schema.md.
 *
 * Texts go to four extendible uint8 datasets (/text/raw, /text/norm, /text/name_map, /text/truth)
 * (and a form-sass row's cubin to the optional /text/cubin, located by /cubin_index)
 * because HDF5 filters do not compress variable-length strings; the row table /instances keeps
 * (offset, length) per text. Rows and text bytes are buffered and written in batches so a 20k-row
 * build does a few hundred extend+write calls instead of 100k.
 *
 * Every public entry point silences HDF5's automatic error printing and restores the caller's
 * handler on return (the library never prints); the innermost HDF5 message is copied into rs_err.
 * A rs_corpus is not thread-safe, and neither is the serial HDF5 library underneath it. */
#include "storage/corpus.h"
#include "storage/h5util.h"
#include <errno.h>
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
#define REF_W 5                        /* /reference_index entries per row */
#define KIND "regsweep corpus"         /* names the file type in h5util's error messages */

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
  /* optional: /text/cubin (bytes) and /cubin_index (per row: offset, length; length 0 = none).
   * A corpus written before them has neither: cub < 0, rows read with cubin NULL. */
  hid_t cub, cubidx;
  uint64_t cubsize;         /* bytes in /text/cubin */
  uint8_t *cb;              /* writer: buffered cubin bytes */
  size_t cbn, cbcap;
  uint64_t *cbi;            /* writer: buffered (offset, length) pairs, one per buffered row */
  /* optional: /text/reference (form ptx's reference allocations, JSON) and /reference_index (per
   * row: offset, length, kept, labelled, registers; length 0 = none). Older corpora lack both. */
  hid_t rtx, ridx;
  uint64_t rsize;
  char *rb;
  size_t rbn, rbcap;
  uint64_t *rbi;
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

/* ---- types ---- */

#define FSIZE(T, f) sizeof(((T *)0)->f)

static hid_t make_rec_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(rec));
  if (t < 0) return -1;
  int bad = 0;
#define S(f) bad |= rs_h5_add_str(t, #f, HOFFSET(rec, in.f), FSIZE(rs_instance, f))
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
#define S(f) bad |= rs_h5_add_str(t, #f, HOFFSET(rs_build_failure, f), FSIZE(rs_build_failure, f))
  S(variant); S(family); S(target); S(params); S(message);
#undef S
  if (bad) {
    H5Tclose(t);
    return -1;
  }
  return t;
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
  c->file = c->root = c->inst = c->fail = c->rec_mt = c->fail_mt = c->cub = c->cubidx = -1;
  c->rtx = c->ridx = -1;
  for (int k = 0; k < NTEXT; k++) c->text[k] = -1;
  return c;
}

/* Close every HDF5 object and free memory; returns -1 if closing the file failed. */
static int corpus_free(rs_corpus *c) {
  int rc = 0;
  rs_h5_close(&c->inst, H5Dclose);
  rs_h5_close(&c->fail, H5Dclose);
  for (int k = 0; k < NTEXT; k++) {
    rs_h5_close(&c->text[k], H5Dclose);
    free(c->tb[k]);
  }
  rs_h5_close(&c->cub, H5Dclose);
  rs_h5_close(&c->cubidx, H5Dclose);
  free(c->cb);
  free(c->cbi);
  rs_h5_close(&c->rtx, H5Dclose);
  rs_h5_close(&c->ridx, H5Dclose);
  free(c->rb);
  free(c->rbi);
  rs_h5_close(&c->rec_mt, H5Tclose);
  rs_h5_close(&c->fail_mt, H5Tclose);
  rs_h5_close(&c->root, H5Gclose);
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

rs_corpus *rs_corpus_create(const char *path, rs_err *e) {
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  rs_corpus *c = corpus_new(path, 1);
  hid_t fapl = rs_h5_fapl(), gtext = -1, ft = -1, fft = -1;
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
  ft = c->rec_mt >= 0 ? rs_h5_packed(c->rec_mt) : -1;
  fft = c->fail_mt >= 0 ? rs_h5_packed(c->fail_mt) : -1;
  if (c->root < 0 || ft < 0 || fft < 0) {
    what = "cannot build the HDF5 types";
    goto fail;
  }
  if (rs_h5_set_int_attr(c->root, "schema_version", RS_CORPUS_SCHEMA) < 0) {
    what = "cannot write schema_version";
    goto fail;
  }
  /* Shuffle only where elements are wider than a byte (it is the identity on uint8). */
  what = "cannot create the corpus datasets";
  c->inst = rs_h5_create_ds(c->file, "instances", ft, ROW_CHUNK, 1, DEFLATE_LEVEL, 1u << 20);
  if (c->inst < 0) goto fail;
  c->fail = rs_h5_create_ds(c->file, "failures", fft, 64, 1, DEFLATE_LEVEL, 1u << 20);
  if (c->fail < 0) goto fail;
  if ((gtext = H5Gcreate2(c->file, "text", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) goto fail;
  for (int k = 0; k < NTEXT; k++) {
    c->text[k] = rs_h5_create_ds(gtext, text_name[k], H5T_STD_U8LE, TEXT_CHUNK, 0, DEFLATE_LEVEL,
                                 4u * TEXT_CHUNK);
    if (c->text[k] < 0) {
      what = "cannot create the text datasets";
      goto fail;
    }
  }
  c->cub = rs_h5_create_ds(gtext, "cubin", H5T_STD_U8LE, TEXT_CHUNK, 0, DEFLATE_LEVEL, 4u * TEXT_CHUNK);
  c->cubidx = rs_h5_create_ds(c->file, "cubin_index", H5T_STD_U64LE, 2 * ROW_CHUNK, 1, DEFLATE_LEVEL, 1u << 16);
  if (c->cub < 0 || c->cubidx < 0) {
    what = "cannot create the cubin datasets";
    goto fail;
  }
  c->rtx = rs_h5_create_ds(gtext, "reference", H5T_STD_U8LE, TEXT_CHUNK, 0, DEFLATE_LEVEL, 4u * TEXT_CHUNK);
  c->ridx = rs_h5_create_ds(c->file, "reference_index", H5T_STD_U64LE, REF_W * ROW_CHUNK, 1, DEFLATE_LEVEL, 1u << 16);
  if (c->rtx < 0 || c->ridx < 0) {
    what = "cannot create the reference datasets";
    goto fail;
  }
  goto done;
fail:
  rs_h5_err(e, path, what);
  corpus_free(c);
  c = NULL;
  if (created) unlink(path); /* no half-made corpus left behind */
done:
  if (fapl >= 0) H5Pclose(fapl);
  if (gtext >= 0) H5Gclose(gtext);
  if (ft >= 0) H5Tclose(ft);
  if (fft >= 0) H5Tclose(fft);
  rs_h5_quiet_off(&q);
  return c;
}

/* Write buffered rows and text bytes. Called with HDF5 printing already silenced. */
static int flush_rows(rs_corpus *c, rs_err *e) {
  for (int k = 0; k < NTEXT; k++) {
    if (rs_h5_append(c->text[k], H5T_NATIVE_UINT8, c->tsize[k], c->tb[k], c->tn[k]) < 0) {
      char what[64];
      snprintf(what, sizeof what, "cannot write /text/%s", text_name[k]);
      return rs_h5_err(e, c->path, what);
    }
    c->tsize[k] += c->tn[k];
    c->tn[k] = 0;
  }
  if (rs_h5_append(c->cub, H5T_NATIVE_UINT8, c->cubsize, c->cb, c->cbn) < 0 ||
      rs_h5_append(c->cubidx, H5T_NATIVE_UINT64, 2 * c->nflushed, c->cbi, 2 * (hsize_t)c->nbuf) < 0)
    return rs_h5_err(e, c->path, "cannot write /text/cubin");
  c->cubsize += c->cbn;
  c->cbn = 0;
  if (rs_h5_append(c->rtx, H5T_NATIVE_UINT8, c->rsize, c->rb, c->rbn) < 0 ||
      rs_h5_append(c->ridx, H5T_NATIVE_UINT64, REF_W * c->nflushed, c->rbi, REF_W * (hsize_t)c->nbuf) < 0)
    return rs_h5_err(e, c->path, "cannot write /text/reference");
  c->rsize += c->rbn;
  c->rbn = 0;
  if (rs_h5_append(c->inst, c->rec_mt, c->nflushed, c->buf, c->nbuf) < 0)
    return rs_h5_err(e, c->path, "cannot write /instances");
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
  r->in.cubin = NULL;
  r->in.cubin_len = 0;
  r->in.reference = NULL;
  {
    size_t rn = in->reference ? strlen(in->reference) : 0;
    c->rbi = rs_xrealloc(c->rbi, sizeof *c->rbi * REF_W * ((size_t)c->nbuf + 1));
    uint64_t *ri = c->rbi + REF_W * c->nbuf;
    ri[0] = c->rsize + c->rbn, ri[1] = rn, ri[2] = rn ? in->reference_kept : 0, ri[3] = rn ? in->reference_labelled : 0;
    ri[4] = rn ? in->reference_regs : 0;
    if (rn) {
      if (c->rbn + rn > c->rbcap) {
        size_t nc = c->rbcap ? c->rbcap : (1u << 16);
        while (nc < c->rbn + rn) nc *= 2;
        c->rb = rs_xrealloc(c->rb, nc);
        c->rbcap = nc;
      }
      memcpy(c->rb + c->rbn, in->reference, rn);
      c->rbn += rn;
    }
  }
  c->cbi = rs_xrealloc(c->cbi, sizeof *c->cbi * 2 * ((size_t)c->nbuf + 1));
  c->cbi[2 * c->nbuf] = c->cubsize + c->cbn;
  c->cbi[2 * c->nbuf + 1] = in->cubin ? in->cubin_len : 0;
  if (in->cubin && in->cubin_len) {
    if (c->cbn + in->cubin_len > c->cbcap) {
      size_t nc = c->cbcap ? c->cbcap : (1u << 20);
      while (nc < c->cbn + in->cubin_len) nc *= 2;
      c->cb = rs_xrealloc(c->cb, nc);
      c->cbcap = nc;
    }
    memcpy(c->cb + c->cbn, in->cubin, in->cubin_len);
    c->cbn += in->cubin_len;
  }
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

  size_t pending = c->cbn;
  for (int k = 0; k < NTEXT; k++) pending += c->tn[k];
  if (c->nbuf < FLUSH_ROWS && pending < FLUSH_BYTES) return 0;
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  int rc = flush_rows(c, e);
  rs_h5_quiet_off(&q);
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
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  int rc = 0;
  if (rs_h5_set_str_attr(c->root, key, value) < 0) { /* NULL value is stored as "" */
    char what[128];
    snprintf(what, sizeof what, "cannot write attribute '%.80s'", key);
    rc = rs_h5_err(e, c->path, what);
  }
  rs_h5_quiet_off(&q);
  return rc;
}

/* ---- reading ---- */

rs_corpus *rs_corpus_open(const char *path, rs_err *e) {
  if (access(path, R_OK) != 0) {
    rs_errf(e, path, 0, "cannot open corpus: %s", strerror(errno));
    return NULL;
  }
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  rs_corpus *c = corpus_new(path, 0);
  hid_t fapl = rs_h5_fapl();
  c->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  hid_t st = c->file < 0 ? rs_h5_err_save() : -1;
  if (fapl >= 0) H5Pclose(fapl);
  rs_h5_err_restore(st);
  if (c->file < 0) {
    rs_h5_err(e, path, "not a readable HDF5 file (not a corpus, truncated, or corrupt)");
    goto fail;
  }
  c->root = H5Gopen2(c->file, "/", H5P_DEFAULT);
  if (c->root < 0) {
    rs_h5_err(e, path, "cannot open the root group (corrupt file?)");
    goto fail;
  }
  if (rs_h5_check_schema(c->root, path, KIND, RS_CORPUS_SCHEMA, e) < 0) goto fail;
  c->rec_mt = make_rec_type();
  c->fail_mt = make_fail_type();
  if (c->rec_mt < 0 || c->fail_mt < 0) {
    rs_h5_err(e, path, "cannot build the HDF5 types");
    goto fail;
  }
  c->inst = rs_h5_open_ds(c->file, "instances", 1u << 20);
  c->fail = rs_h5_open_ds(c->file, "failures", 1u << 20);
  if (c->inst < 0 || c->fail < 0) {
    rs_h5_err(e, path, "not a regsweep corpus (missing /instances or /failures)");
    goto fail;
  }
  if (rs_h5_check_members(c->inst, c->rec_mt, "/instances", path, KIND, e) < 0 ||
      rs_h5_check_members(c->fail, c->fail_mt, "/failures", path, KIND, e) < 0)
    goto fail;
  int64_t n = rs_h5_len(c->inst), nf = rs_h5_len(c->fail);
  if (n < 0 || nf < 0) {
    rs_h5_err(e, path, "corrupt corpus (/instances or /failures is not 1-D)");
    goto fail;
  }
  c->nrows = c->nflushed = (uint64_t)n;
  c->nfail_file = (uint64_t)nf;
  for (int k = 0; k < NTEXT; k++) {
    char nm[32];
    snprintf(nm, sizeof nm, "text/%s", text_name[k]);
    c->text[k] = rs_h5_open_ds(c->file, nm, 4u * TEXT_CHUNK);
    int64_t len = c->text[k] >= 0 ? rs_h5_byte_len(c->text[k]) : -1;
    if (len < 0) {
      char what[96];
      snprintf(what, sizeof what, "not a regsweep corpus (missing or malformed /text/%s)",
               text_name[k]);
      rs_h5_err(e, path, what);
      goto fail;
    }
    c->tsize[k] = (uint64_t)len;
  }
  c->cubidx = rs_h5_open_ds(c->file, "cubin_index", 1u << 16); /* optional: older corpora lack it */
  if (c->cubidx >= 0) {
    c->cub = rs_h5_open_ds(c->file, "text/cubin", 4u * TEXT_CHUNK);
    int64_t len = c->cub >= 0 ? rs_h5_byte_len(c->cub) : -1, ni = rs_h5_len(c->cubidx);
    if (len < 0 || ni != 2 * n) {
      rs_h5_err(e, path, "corrupt corpus (/cubin_index without a matching /text/cubin, or not one pair per row)");
      goto fail;
    }
    c->cubsize = (uint64_t)len;
  }
  c->ridx = rs_h5_open_ds(c->file, "reference_index", 1u << 16); /* optional: older corpora lack it */
  if (c->ridx >= 0) {
    c->rtx = rs_h5_open_ds(c->file, "text/reference", 4u * TEXT_CHUNK);
    int64_t len = c->rtx >= 0 ? rs_h5_byte_len(c->rtx) : -1, ni = rs_h5_len(c->ridx);
    if (len < 0 || ni != REF_W * (int64_t)n) {
      rs_h5_err(e, path, "corrupt corpus (/reference_index without a matching /text/reference, or not 5 entries per row)");
      goto fail;
    }
    c->rsize = (uint64_t)len;
  }
  goto done;
fail:
  corpus_free(c);
  c = NULL;
done:
  H5Eclear2(H5E_DEFAULT);
  rs_h5_quiet_off(&q);
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
  if (rs_h5_read(c->text[k], H5T_NATIVE_UINT8, off, s, len) < 0) {
    free(s);
    char what[96];
    snprintf(what, sizeof what, "row %" PRIu64 ": cannot read /text/%s", i, text_name[k]);
    return rs_h5_err(e, c->path, what);
  }
  s[len] = 0;
  *out = s;
  return 0;
}

/* Row i's cubin from the optional column (none: cubin NULL). */
static int read_cubin(rs_corpus *c, uint64_t i, rs_instance *out, rs_err *e) {
  uint64_t ol[2];
  if (rs_h5_read(c->cubidx, H5T_NATIVE_UINT64, 2 * i, ol, 2) < 0) {
    char what[96];
    snprintf(what, sizeof what, "row %" PRIu64 ": cannot read /cubin_index", i);
    return rs_h5_err(e, c->path, what);
  }
  if (!ol[1]) return 0;
  if (ol[1] > MAX_TEXT || ol[0] > c->cubsize || ol[1] > c->cubsize - ol[0])
    return rs_errf(e, c->path, 0, "row %" PRIu64 ": cubin [%" PRIu64 ", +%" PRIu64 ") is outside /text/cubin: corrupt corpus",
                   i, ol[0], ol[1]);
  out->cubin = rs_xmalloc((size_t)ol[1]);
  if (rs_h5_read(c->cub, H5T_NATIVE_UINT8, ol[0], out->cubin, ol[1]) < 0) {
    free(out->cubin);
    out->cubin = NULL;
    char what[96];
    snprintf(what, sizeof what, "row %" PRIu64 ": cannot read /text/cubin", i);
    return rs_h5_err(e, c->path, what);
  }
  out->cubin_len = ol[1];
  return 0;
}

/* Row i's reference statistics, and its text when want_text (none: all 0, NULL). */
static int read_reference(rs_corpus *c, uint64_t i, rs_instance *out, int want_text, rs_err *e) {
  uint64_t ri[REF_W];
  if (rs_h5_read(c->ridx, H5T_NATIVE_UINT64, REF_W * i, ri, REF_W) < 0) {
    char what[96];
    snprintf(what, sizeof what, "row %" PRIu64 ": cannot read /reference_index", i);
    return rs_h5_err(e, c->path, what);
  }
  if (!ri[1]) return 0;
  if (ri[1] > MAX_TEXT || ri[0] > c->rsize || ri[1] > c->rsize - ri[0] || !ri[4])
    return rs_errf(e, c->path, 0, "row %" PRIu64 ": reference [%" PRIu64 ", +%" PRIu64 ") is outside /text/reference or has no registers: corrupt corpus",
                   i, ri[0], ri[1]);
  out->reference_kept = (uint32_t)ri[2], out->reference_labelled = (uint32_t)ri[3], out->reference_regs = (uint32_t)ri[4];
  if (!want_text) return 0;
  out->reference = rs_xmalloc((size_t)ri[1] + 1);
  if (rs_h5_read(c->rtx, H5T_NATIVE_UINT8, ri[0], out->reference, ri[1]) < 0) {
    free(out->reference);
    out->reference = NULL;
    char what[96];
    snprintf(what, sizeof what, "row %" PRIu64 ": cannot read /text/reference", i);
    return rs_h5_err(e, c->path, what);
  }
  out->reference[ri[1]] = 0;
  return 0;
}

int rs_corpus_get(rs_corpus *c, uint64_t i, rs_instance *out, int want_texts, rs_err *e) {
  if (c->writing) return rs_errf(e, c->path, 0, "corpus is open for writing, not reading");
  if (i >= c->nrows)
    return rs_errf(e, c->path, 0, "row %" PRIu64 " out of range (%" PRIu64 " rows)", i,
                   c->nrows);
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  int rc = 0;
  if (!c->blk || i < c->blk_start || i >= c->blk_start + c->blk_n) {
    if (!c->blk) c->blk = rs_xmalloc(sizeof *c->blk * ROW_CHUNK);
    uint64_t start = i / ROW_CHUNK * ROW_CHUNK;
    uint64_t n = c->nrows - start < ROW_CHUNK ? c->nrows - start : ROW_CHUNK;
    memset(c->blk, 0, sizeof *c->blk * ROW_CHUNK);
    c->blk_n = 0;
    if (rs_h5_read(c->inst, c->rec_mt, start, c->blk, n) < 0) {
      char what[96];
      snprintf(what, sizeof what, "cannot read /instances rows %" PRIu64 "..%" PRIu64, start,
               start + n - 1);
      rc = rs_h5_err(e, c->path, what);
      goto out;
    }
    c->blk_start = start;
    c->blk_n = (uint32_t)n;
  }
  const rec *r = &c->blk[i - c->blk_start];
  *out = r->in;
  out->raw = out->norm = out->name_map = out->truth = NULL;
  out->cubin = NULL;
  out->cubin_len = 0;
  out->reference = NULL;
  out->reference_kept = out->reference_labelled = out->reference_regs = 0;
  /* A damaged file could hold unterminated strings; never hand those out. */
#define Z(f) out->f[sizeof out->f - 1] = 0;
  Z(id) Z(family) Z(kind) Z(target) Z(form) Z(variant) Z(params) Z(function) Z(truth_reason)
#undef Z
  if (c->ridx >= 0 && !strcmp(out->form, "ptx")) rc = read_reference(c, i, out, want_texts, e);
  if (want_texts && !rc) {
    char **dst[NTEXT] = {&out->raw, &out->norm, &out->name_map, &out->truth};
    for (int k = 0; k < NTEXT && !rc; k++) rc = read_text(c, i, r, k, dst[k], e);
    if (!rc && c->cubidx >= 0) rc = read_cubin(c, i, out, e);
    if (rc) rs_instance_clear(out);
  }
out:
  rs_h5_quiet_off(&q);
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
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  int rc = 0;
  memset(out, 0, sizeof *out);
  if (rs_h5_read(c->fail, c->fail_mt, i, out, 1) < 0) {
    char what[64];
    snprintf(what, sizeof what, "cannot read /failures row %" PRIu64, i);
    rc = rs_h5_err(e, c->path, what);
  }
#define Z(f) out->f[sizeof out->f - 1] = 0;
  Z(variant) Z(family) Z(target) Z(params) Z(message)
#undef Z
  rs_h5_quiet_off(&q);
  return rc;
}

/* Reader: load every id (only the id column is converted) and hash them. */
static int build_index(rs_corpus *c, rs_err *e) {
  if (c->nrows >= UINT32_MAX / 2) return rs_errf(e, c->path, 0, "too many rows to index");
  hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(idbuf));
  int rc = 0;
  if (mt < 0 || rs_h5_add_str(mt, "id", 0, sizeof(idbuf)) < 0) {
    rc = rs_h5_err(e, c->path, "cannot build the id type");
    goto out;
  }
  free(c->ids);
  c->ids = rs_xcalloc(c->nrows ? (size_t)c->nrows : 1, sizeof *c->ids);
  c->capids = (uint32_t)(c->nrows ? c->nrows : 1);
  if (rs_h5_read(c->inst, mt, 0, c->ids, c->nrows) < 0) {
    rc = rs_h5_err(e, c->path, "cannot read the id column of /instances");
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
    rs_h5_quiet q;
    rs_h5_quiet_on(&q);
    int rc = build_index(c, e);
    rs_h5_quiet_off(&q);
    if (rc < 0) return -2;
  }
  return index_lookup(c, id);
}

char *rs_corpus_get_attr(rs_corpus *c, const char *key) {
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  char *val = rs_h5_get_str_attr(c->root, key);
  rs_h5_quiet_off(&q);
  return val;
}

char **rs_corpus_attr_names(rs_corpus *c, uint32_t *n) {
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  char **v = rs_h5_str_attr_names(c->root, n);
  rs_h5_quiet_off(&q);
  return v;
}

int rs_corpus_copy_attrs(rs_corpus *from, rs_corpus *to, rs_err *e) {
  uint32_t n = 0;
  char **k = rs_corpus_attr_names(from, &n);
  int rc = 0;
  for (uint32_t i = 0; i < n; i++) {
    char *v = rc ? NULL : rs_corpus_get_attr(from, k[i]);
    if (v) rc = rs_corpus_set_attr(to, k[i], v, e);
    free(v);
    free(k[i]);
  }
  free(k);
  return rc;
}

int rs_corpus_close(rs_corpus *c, rs_err *e) {
  if (!c) return 0;
  rs_h5_quiet q;
  rs_h5_quiet_on(&q);
  int rc = 0;
  if (c->writing) {
    rc = flush_rows(c, e);
    if (!rc && rs_h5_append(c->fail, c->fail_mt, 0, c->fails, c->nfails) < 0)
      rc = rs_h5_err(e, c->path, "cannot write /failures");
    if (!rc && H5Fflush(c->file, H5F_SCOPE_LOCAL) < 0)
      rc = rs_h5_err(e, c->path, "cannot flush the corpus file");
  }
  char *path = rs_xstrndup(c->path, strlen(c->path));
  if (corpus_free(c) < 0 && !rc) rc = rs_h5_err(e, path, "cannot close the corpus file");
  free(path);
  H5Eclear2(H5E_DEFAULT);
  rs_h5_quiet_off(&q);
  return rc;
}

void rs_instance_clear(rs_instance *in) {
  if (!in) return;
  free(in->raw);
  free(in->norm);
  free(in->name_map);
  free(in->truth);
  free(in->cubin);
  free(in->reference);
  in->reference = NULL;
  in->raw = in->norm = in->name_map = in->truth = NULL;
  in->cubin = NULL;
  in->cubin_len = 0;
}

enum rs_split rs_instance_split(const rs_instance *in, const char *holdout) {
  if (!holdout || !*holdout) return in->split == RS_SPLIT_TEST ? RS_SPLIT_TEST : RS_SPLIT_TRAIN;
  return strcmp(in->target, holdout) ? RS_SPLIT_TRAIN : RS_SPLIT_TEST;
}
