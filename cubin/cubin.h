/* cubin.h - NVIDIA cubins (ELF64): read the sections, find each function's code, and rewrite a
 * CUDA 12.8+/13 header into the layout nvdisasm 11.8 reads (../shared/NVIDIA-SASS.md). */
#ifndef RS_CUBIN_H
#define RS_CUBIN_H
#include "util/util.h"
#include <stddef.h>
#include <stdint.h>

/* Room for a function name: C++ template kernels (MAGMA's herk/syrk vbatched) mangle to 140+
 * characters, so the limit is well above any name seen. */
#define RS_CUBIN_NAME_MAX 1024

typedef struct {
  char name[RS_CUBIN_NAME_MAX]; /* function name (the section is .text.<name>) */
  uint64_t size;        /* bytes of code: 16 per instruction */
  const uint8_t *code;  /* into rs_cubin.bytes */
  unsigned shndx;       /* its section's index (for its symbols) */
} rs_cubin_func;

/* A function symbol inside another function's section (nvcc's $kernel$name of a __device__
 * function, ptxas's $__internal_ helpers): name (into rs_cubin.bytes) and offset in the code. */
typedef struct {
  const char *name;
  uint64_t value;
} rs_cubin_sym;

typedef struct {
  uint8_t *bytes;       /* the file (owned); rs_cubin_rewrite changes its header in place */
  size_t len;
  unsigned sm;          /* 75, 80, 86, 87, 89, 90 */
  bool new_layout;      /* OS/ABI 0x41, ABI version 8 (ptxas 12.8+): nvdisasm 11.8 refuses it */
  uint32_t flags;       /* e_flags as read */
  rs_cubin_func *funcs;
  uint32_t nfuncs;
} rs_cubin;

/* Parse a cubin held in memory (takes ownership of bytes; call rs_cubin_free afterwards, also
 * on error). `name` is used in messages. Every offset is checked against the length: a
 * truncated file is an error, never a read past the end. */
int rs_cubin_parse(uint8_t *bytes, size_t len, const char *name, rs_cubin *c, rs_err *e);
int rs_cubin_load(const char *path, rs_cubin *c, rs_err *e); /* on error nothing is left to free */
/* The same, but a cubin without code (no .text.<function> section: a host-only translation unit
 * nvcc still writes one for) is read, with nfuncs 0, instead of refused. */
int rs_cubin_load_any(const char *path, rs_cubin *c, rs_err *e);
/* The architecture from e_flags: new layout sm in bits 8-15 (low byte 0x04, bits 16-23 zero,
 * high byte one of the seen flag sets), old layout sm | 0x500 | sm << 16. Returns 0 when the
 * flags are not one of those. */
unsigned rs_cubin_sm_from_flags(uint8_t osabi, uint8_t abiver, uint32_t flags);
/* Rewrite the header to the old layout (no-op when it is old already). */
void rs_cubin_rewrite(rs_cubin *c);
int rs_cubin_write(const rs_cubin *c, const char *path, rs_err *e);
/* The STT_FUNC symbols of f's section past its start (not the function itself), in *out (owned,
 * free it); their count. A symbol outside the file or the code is skipped. */
uint32_t rs_cubin_subsyms(const rs_cubin *c, const rs_cubin_func *f, rs_cubin_sym **out);
const rs_cubin_func *rs_cubin_find(const rs_cubin *c, const char *name);
/* The two 64-bit words of the instruction at byte offset `at` of a function (at < size). */
void rs_cubin_words(const rs_cubin_func *f, uint64_t at, uint64_t w[2]);
void rs_cubin_free(rs_cubin *c);

#endif
