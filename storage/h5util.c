/* h5util.c - see h5util.h. One copy of the HDF5 patterns corpus_h5.c and run_h5.c share. */
#include "storage/h5util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_h5_quiet_on(rs_h5_quiet *q) {
  if (H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data) < 0) {
    q->fn = NULL;
    q->data = NULL;
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void rs_h5_quiet_off(const rs_h5_quiet *q) { H5Eset_auto2(H5E_DEFAULT, q->fn, q->data); }

typedef struct {
  char detail[200];
  int sys_errno; /* the system error a failed read/write/open reports, or 0 */
} h5_cause;

static herr_t innermost_cb(unsigned n, const H5E_error2_t *err, void *data) {
  if (n == 0 && err->desc) {
    h5_cause *c = data;
    /* I/O failures read "file write failed: time = <ctime>, filename = ..., errno = 28, ...":
     * keep the system error and the first words, drop the rest (it has newlines and buffers) */
    const char *en = strstr(err->desc, "errno = ");
    if (en) c->sys_errno = atoi(en + 8);
    const char *cut = strstr(err->desc, ": time = ");
    snprintf(c->detail, sizeof c->detail, "%.*s", cut ? (int)(cut - err->desc) : 199, err->desc);
    for (char *d = c->detail; *d; d++)
      if (*d == '\n') *d = ' ';
  }
  return 0;
}

int rs_h5_err(rs_err *e, const char *path, const char *what) {
  h5_cause c = {"", 0};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_cb, &c);
  H5Eclear2(H5E_DEFAULT);
  if (c.sys_errno > 0) return rs_errf(e, path, 0, "%s: %s (HDF5: %s)", what, strerror(c.sys_errno), c.detail);
  if (c.detail[0]) return rs_errf(e, path, 0, "%s (HDF5: %s)", what, c.detail);
  return rs_errf(e, path, 0, "%s", what);
}

hid_t rs_h5_err_save(void) { return H5Eget_current_stack(); }

void rs_h5_err_restore(hid_t st) {
  if (st >= 0) H5Eset_current_stack(st);
}

void rs_h5_close(hid_t *id, herr_t (*fn)(hid_t)) {
  if (*id >= 0) fn(*id);
  *id = -1;
}

int rs_h5_add_str(hid_t t, const char *name, size_t off, size_t size) {
  hid_t s = H5Tcopy(H5T_C_S1);
  int bad = s < 0 || H5Tset_size(s, size) < 0 || H5Tset_strpad(s, H5T_STR_NULLTERM) < 0 ||
            H5Tinsert(t, name, off, s) < 0;
  if (s >= 0) H5Tclose(s);
  return bad ? -1 : 0;
}

hid_t rs_h5_packed(hid_t mt) {
  hid_t t = H5Tcopy(mt);
  if (t < 0) return -1;
  if (H5Tpack(t) < 0) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

hid_t rs_h5_fapl(void) {
  hid_t p = H5Pcreate(H5P_FILE_ACCESS);
  if (p >= 0) H5Pset_libver_bounds(p, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  return p;
}

static hid_t cache_dapl(size_t bytes) {
  hid_t p = H5Pcreate(H5P_DATASET_ACCESS);
  if (p >= 0) H5Pset_chunk_cache(p, 521, bytes, 0.75);
  return p;
}

hid_t rs_h5_create_ds(hid_t loc, const char *name, hid_t ftype, hsize_t chunk, int shuffle,
                      int level, size_t cache) {
  hsize_t dims = 0, maxd = H5S_UNLIMITED;
  hid_t sp = H5Screate_simple(1, &dims, &maxd);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t dapl = cache_dapl(cache);
  hid_t ds = -1;
  if (sp >= 0 && dcpl >= 0 && dapl >= 0 && H5Pset_chunk(dcpl, 1, &chunk) >= 0 &&
      (!shuffle || H5Pset_shuffle(dcpl) >= 0) && H5Pset_deflate(dcpl, (unsigned)level) >= 0 &&
      H5Pset_fletcher32(dcpl) >= 0)
    ds = H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, dcpl, dapl);
  hid_t st = ds < 0 ? rs_h5_err_save() : -1;
  if (sp >= 0) H5Sclose(sp);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (dapl >= 0) H5Pclose(dapl);
  rs_h5_err_restore(st);
  return ds;
}

hid_t rs_h5_open_ds(hid_t file, const char *name, size_t cache) {
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
  hid_t st = ds < 0 ? rs_h5_err_save() : -1;
  if (dapl >= 0) H5Pclose(dapl);
  rs_h5_err_restore(st);
  return ds;
}

static int ds_io(hid_t ds, hid_t mtype, uint64_t at, void *buf, hsize_t n, int write,
                 int extend) {
  if (n == 0) return 0;
  hsize_t start = at, size = at + n;
  if (extend && H5Dset_extent(ds, &size) < 0) return -1;
  hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(1, &n, NULL);
  int rc = -1;
  if (fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &n, NULL) >= 0 &&
      (write ? H5Dwrite(ds, mtype, ms, fs, H5P_DEFAULT, buf)
             : H5Dread(ds, mtype, ms, fs, H5P_DEFAULT, buf)) >= 0)
    rc = 0;
  hid_t st = rc ? rs_h5_err_save() : -1;
  if (fs >= 0) H5Sclose(fs);
  if (ms >= 0) H5Sclose(ms);
  rs_h5_err_restore(st);
  return rc;
}

int rs_h5_append(hid_t ds, hid_t mtype, uint64_t at, const void *buf, hsize_t n) {
  return ds_io(ds, mtype, at, (void *)(uintptr_t)buf, n, 1, 1);
}

int rs_h5_read(hid_t ds, hid_t mtype, uint64_t at, void *buf, hsize_t n) {
  return ds_io(ds, mtype, at, buf, n, 0, 0);
}

int64_t rs_h5_len(hid_t ds) {
  hid_t sp = H5Dget_space(ds);
  if (sp < 0) return -1;
  hsize_t d = 0;
  int r = H5Sget_simple_extent_ndims(sp);
  if (r == 1) H5Sget_simple_extent_dims(sp, &d, NULL);
  H5Sclose(sp);
  return r == 1 ? (int64_t)d : -1;
}

int64_t rs_h5_byte_len(hid_t ds) {
  hid_t t = H5Dget_type(ds);
  int ok = t >= 0 && H5Tget_class(t) == H5T_INTEGER && H5Tget_size(t) == 1;
  if (t >= 0) H5Tclose(t);
  return ok ? rs_h5_len(ds) : -1;
}

int rs_h5_check_members(hid_t ds, hid_t mt, const char *dsname, const char *path,
                        const char *kind, rs_err *e) {
  hid_t ft = H5Dget_type(ds);
  if (ft < 0 || H5Tget_class(ft) != H5T_COMPOUND) {
    if (ft >= 0) H5Tclose(ft);
    H5Eclear2(H5E_DEFAULT);
    return rs_errf(e, path, 0, "not a %s: %s is not a table", kind, dsname);
  }
  int n = H5Tget_nmembers(mt), rc = 0;
  for (int i = 0; i < n && !rc; i++) {
    char *nm = H5Tget_member_name(mt, (unsigned)i);
    if (nm && H5Tget_member_index(ft, nm) < 0)
      rc = rs_errf(e, path, 0, "not a %s: %s has no column '%s'", kind, dsname, nm);
    H5free_memory(nm);
  }
  H5Tclose(ft);
  H5Eclear2(H5E_DEFAULT);
  return rc;
}

int rs_h5_set_int_attr(hid_t loc, const char *key, int value) {
  hid_t sp = H5Screate(H5S_SCALAR), a = -1;
  htri_t ex = H5Aexists(loc, key);
  if (ex > 0) H5Adelete(loc, key);
  int rc = sp >= 0 && ex >= 0 &&
                   (a = H5Acreate2(loc, key, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
                   H5Awrite(a, H5T_NATIVE_INT, &value) >= 0
               ? 0
               : -1;
  hid_t st = rc ? rs_h5_err_save() : -1;
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  rs_h5_err_restore(st);
  return rc;
}

int rs_h5_set_str_attr(hid_t loc, const char *key, const char *value) {
  if (!value) value = "";
  hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a = -1;
  htri_t ex = H5Aexists(loc, key);
  if (ex > 0) H5Adelete(loc, key); /* last value wins */
  int rc = t >= 0 && sp >= 0 && ex >= 0 && H5Tset_size(t, strlen(value) + 1) >= 0 &&
                   H5Tset_strpad(t, H5T_STR_NULLTERM) >= 0 && H5Tset_cset(t, H5T_CSET_UTF8) >= 0 &&
                   (a = H5Acreate2(loc, key, t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
                   H5Awrite(a, t, value) >= 0
               ? 0
               : -1;
  hid_t st = rc ? rs_h5_err_save() : -1;
  if (a >= 0) H5Aclose(a);
  if (t >= 0) H5Tclose(t);
  if (sp >= 0) H5Sclose(sp);
  rs_h5_err_restore(st);
  return rc;
}

char *rs_h5_get_str_attr(hid_t loc, const char *key) {
  char *val = NULL;
  hid_t a = -1, t = -1, mt = -1;
  if (!key || !key[0] || H5Aexists(loc, key) <= 0) goto out;
  a = H5Aopen(loc, key, H5P_DEFAULT);
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
  return val;
}

typedef struct {
  char **v;
  uint32_t n, cap;
} names;

static herr_t name_one(hid_t loc, const char *name, const H5A_info_t *info, void *op) {
  (void)info;
  names *l = op;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1;
  if (t >= 0 && H5Tget_class(t) == H5T_STRING) RS_PUSH(l->v, l->n, l->cap, rs_xstrndup(name, strlen(name)));
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  return 0;
}

char **rs_h5_str_attr_names(hid_t loc, uint32_t *n) {
  names l = {0};
  hsize_t at = 0;
  H5Aiterate2(loc, H5_INDEX_NAME, H5_ITER_INC, &at, name_one, &l);
  H5Eclear2(H5E_DEFAULT);
  *n = l.n;
  return l.v;
}

int rs_h5_check_schema(hid_t loc, const char *path, const char *kind, int want, rs_err *e) {
  htri_t has = H5Aexists(loc, "schema_version");
  if (has < 0) return rs_h5_err(e, path, "cannot read the file attributes (corrupt file?)");
  if (has == 0) return rs_errf(e, path, 0, "not a %s (no schema_version attribute)", kind);
  int ver = -1, rc = 0;
  hid_t a = H5Aopen(loc, "schema_version", H5P_DEFAULT);
  hid_t at = a >= 0 ? H5Aget_type(a) : -1, asp = a >= 0 ? H5Aget_space(a) : -1;
  if (at < 0 || asp < 0 || H5Tget_class(at) != H5T_INTEGER ||
      H5Sget_simple_extent_npoints(asp) != 1 || H5Aread(a, H5T_NATIVE_INT, &ver) < 0) {
    char what[96];
    snprintf(what, sizeof what, "not a %s (unreadable schema_version)", kind);
    rc = rs_h5_err(e, path, what);
  } else if (ver != want) {
    rc = rs_errf(e, path, 0, "%s schema version %d; this build reads version %d", kind, ver,
                 want);
  }
  if (asp >= 0) H5Sclose(asp);
  if (at >= 0) H5Tclose(at);
  if (a >= 0) H5Aclose(a);
  H5Eclear2(H5E_DEFAULT);
  return rc;
}
