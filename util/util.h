/* util.h - small shared helpers: errors, growable arrays, bitsets, string interning.
 * Libraries never print: they fill an rs_err and return -1. */
#ifndef RS_UTIL_H
#define RS_UTIL_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

typedef struct {
  char msg[512];
} rs_err;

/* Format "file:line: message" (line 0 omits it). Always returns -1 so callers can `return rs_errf(...)`. */
int rs_errf(rs_err *e, const char *file, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

void *rs_xmalloc(size_t n);
void *rs_xcalloc(size_t n, size_t sz);
void *rs_xrealloc(void *p, size_t n);
/* A growing NUL-terminated string: {0} is empty; s is NULL until the first append (owned). */
typedef struct {
  char *s;
  size_t n, cap;
} rs_sbuf;
void rs_sbuf_put(rs_sbuf *b, const char *s, size_t n);
void rs_sbuf_puts(rs_sbuf *b, const char *s);
/* Appends the formatted text whatever its length (a fixed buffer would cut a line). */
void rs_sbuf_printf(rs_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *rs_xstrndup(const char *s, size_t n);

/* Grow *p (element size sz, capacity *cap) to hold at least n elements. */
void rs_grow(void **p, size_t sz, uint32_t *cap, size_t n);
#define RS_PUSH(arr, cnt, cap, val)                                       \
  do {                                                                    \
    rs_grow((void **)&(arr), sizeof *(arr), &(cap), (size_t)(cnt) + 1);   \
    (arr)[(cnt)++] = (val);                                               \
  } while (0)

/* Read a whole file; returns NUL-terminated buffer or NULL with e set. */
char *rs_read_file(const char *path, size_t *len, rs_err *e);
/* mkdir -p (mode 0755); -1 with errno set on failure. */
int rs_mkdirs(const char *path);
/* s single-quoted for sh into out (n bytes; cut, still quoted, when it does not fit). */
void rs_shell_quote(char *out, size_t n, const char *s);

/* Bitsets of 64-bit words. */
typedef uint64_t rs_word;
#define RS_WORDS(n) (((size_t)(n) + 63) / 64)
static inline void rs_bs_set(rs_word *b, size_t i) { b[i >> 6] |= (rs_word)1 << (i & 63); }
static inline void rs_bs_clr(rs_word *b, size_t i) { b[i >> 6] &= ~((rs_word)1 << (i & 63)); }
static inline bool rs_bs_get(const rs_word *b, size_t i) { return (b[i >> 6] >> (i & 63)) & 1; }
/* Set/clear/read up to 64 consecutive bits starting at bit `at`. */
void rs_bs_or_bits(rs_word *b, size_t at, uint64_t bits);
void rs_bs_andnot_bits(rs_word *b, size_t at, uint64_t bits);
uint64_t rs_bs_get_bits(const rs_word *b, size_t at, unsigned n);

/* Number of bit pairs (2k, 2k+1) with any bit set in [from, to); from and to are even. */
size_t rs_bs_count_pairs(const rs_word *b, size_t from, size_t to);

/* String interner: stable indices for repeated names (opcodes). */
typedef struct {
  char **strs;
  uint32_t n, cap;
  uint32_t *tab; /* open addressing, index+1, 0 = empty */
  uint32_t tabcap;
} rs_intern;
uint32_t rs_intern_get(rs_intern *in, const char *s, size_t len);
void rs_intern_free(rs_intern *in);

uint64_t rs_hash_bytes(const void *p, size_t n, uint64_t seed);
/* A file's rs_hash_bytes in 64 KiB chunks as 16 hex digits (a corpus's identity in a run's config
 * and in exports); NULL when it cannot be read. Caller frees. */
char *rs_file_hash(const char *path);
/* Union-find over par[] (par[x] == x: a root); the smaller index becomes the root, so the
 * classes' representatives do not depend on the order of the unions. */
uint32_t rs_uf_find(uint32_t *par, uint32_t x);
void rs_uf_union(uint32_t *par, uint32_t a, uint32_t b);
/* Monotonic clock in seconds (for durations). */
double rs_now(void);

#endif
