/* h5util.h - small HDF5 helpers shared by the storage modules (corpus_h5.c, run_h5.c).
 *
 * Conventions: callers silence HDF5's error printing around each public entry point
 * (rs_h5_quiet_on/off); helpers return <0 on failure and leave HDF5's error stack as it was at the
 * failing call, so rs_h5_err can quote its innermost message. */
#ifndef RS_H5UTIL_H
#define RS_H5UTIL_H
#include "util/util.h"
#include <hdf5.h>
#include <stdint.h>

typedef struct {
  H5E_auto2_t fn;
  void *data;
} rs_h5_quiet;
void rs_h5_quiet_on(rs_h5_quiet *q);        /* save the caller's handler, print nothing */
void rs_h5_quiet_off(const rs_h5_quiet *q); /* restore it */

/* Fill e with "path: what (HDF5: innermost message)", clear the stack; returns -1. */
int rs_h5_err(rs_err *e, const char *path, const char *what);
/* Cleanup calls clear the error stack: keep a copy across them (restore closes the copy). */
hid_t rs_h5_err_save(void);
void rs_h5_err_restore(hid_t st);
void rs_h5_close(hid_t *id, herr_t (*fn)(hid_t)); /* close if open, set to -1 */

/* Types. */
int rs_h5_add_str(hid_t compound, const char *name, size_t off, size_t size); /* fixed, NULLTERM */
hid_t rs_h5_packed(hid_t mt); /* file type: a copy of the memory type without padding */

/* File access list: 1.8+ object headers so attributes over 64 KiB go to dense storage. */
hid_t rs_h5_fapl(void);

/* 1-D extendible chunked dataset: [shuffle] + deflate(level) + Fletcher-32 (last, so a damaged
 * chunk is reported rather than decoded into garbage); chunk cache of `cache` bytes. */
hid_t rs_h5_create_ds(hid_t loc, const char *name, hid_t ftype, hsize_t chunk, int shuffle,
                      int level, size_t cache);
/* Open "name" or "group/name"; -1 when absent (no error on the stack then). */
hid_t rs_h5_open_ds(hid_t file, const char *name, size_t cache);
/* Extend ds to at+n elements and write buf there / read n elements from at. */
int rs_h5_append(hid_t ds, hid_t mtype, uint64_t at, const void *buf, hsize_t n);
int rs_h5_read(hid_t ds, hid_t mtype, uint64_t at, void *buf, hsize_t n);
int64_t rs_h5_len(hid_t ds);      /* elements of a 1-D dataset, -1 if not 1-D */
int64_t rs_h5_byte_len(hid_t ds); /* same, -1 unless its elements are 1-byte integers */

/* Every member of mt must exist in ds's compound type (HDF5 would otherwise silently leave
 * missing fields untouched). Errors read "path: not a <kind>: <dsname> has no column 'x'". */
int rs_h5_check_members(hid_t ds, hid_t mt, const char *dsname, const char *path,
                        const char *kind, rs_err *e);

/* Attributes on loc. Strings are fixed-length UTF-8; the last write of a key wins. */
int rs_h5_set_int_attr(hid_t loc, const char *key, int value);
int rs_h5_set_str_attr(hid_t loc, const char *key, const char *value);
char *rs_h5_get_str_attr(hid_t loc, const char *key); /* malloc'd, NULL if absent / not a string */
/* The names of loc's string attributes (malloc'd array of malloc'd names; *n of them). */
char **rs_h5_str_attr_names(hid_t loc, uint32_t *n);
/* The int attribute schema_version of loc must equal want; messages name path and kind. */
int rs_h5_check_schema(hid_t loc, const char *path, const char *kind, int want, rs_err *e);

#endif
