/* util.c - errors, allocation, files, bitsets, interning. */
#include "util/util.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int rs_errf(rs_err *e, const char *file, unsigned line, const char *fmt, ...) {
  if (!e) return -1;
  size_t n = 0;
  if (file && line)
    n = (size_t)snprintf(e->msg, sizeof e->msg, "%s:%u: ", file, line);
  else if (file)
    n = (size_t)snprintf(e->msg, sizeof e->msg, "%s: ", file);
  if (n >= sizeof e->msg) n = sizeof e->msg - 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg + n, sizeof e->msg - n, fmt, ap);
  va_end(ap);
  return -1;
}

static void oom(void) {
  /* Out of memory is not an input error: nothing sensible to recover. */
  fputs("regsweep: out of memory\n", stderr);
  abort();
}

void *rs_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) oom();
  return p;
}
void *rs_xcalloc(size_t n, size_t sz) {
  void *p = calloc(n ? n : 1, sz ? sz : 1);
  if (!p) oom();
  return p;
}
void *rs_xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) oom();
  return p;
}
char *rs_xstrndup(const char *s, size_t n) {
  char *d = rs_xmalloc(n + 1);
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

void rs_grow(void **p, size_t sz, uint32_t *cap, size_t n) {
  if (n <= *cap) return;
  size_t c = *cap ? *cap : 8;
  while (c < n) c *= 2;
  if (c > UINT32_MAX) oom();
  *p = rs_xrealloc(*p, c * sz);
  *cap = (uint32_t)c;
}

char *rs_read_file(const char *path, size_t *len, rs_err *e) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    rs_errf(e, path, 0, "cannot open: %s", strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = rs_xmalloc(cap);
  for (;;) {
    if (n + 1 >= cap) buf = rs_xrealloc(buf, cap *= 2);
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    rs_errf(e, path, 0, "read error");
    return NULL;
  }
  buf[n] = 0;
  if (len) *len = n;
  return buf;
}

void rs_bs_or_bits(rs_word *b, size_t at, uint64_t bits) {
  size_t w = at >> 6, s = at & 63;
  b[w] |= bits << s;
  if (s && (bits >> (64 - s))) b[w + 1] |= bits >> (64 - s);
}
void rs_bs_andnot_bits(rs_word *b, size_t at, uint64_t bits) {
  size_t w = at >> 6, s = at & 63;
  b[w] &= ~(bits << s);
  if (s && (bits >> (64 - s))) b[w + 1] &= ~(bits >> (64 - s));
}
uint64_t rs_bs_get_bits(const rs_word *b, size_t at, unsigned n) {
  size_t w = at >> 6, s = at & 63;
  uint64_t v = b[w] >> s;
  if (s && n > 64 - s) v |= b[w + 1] << (64 - s);
  return n >= 64 ? v : v & (((uint64_t)1 << n) - 1);
}

size_t rs_bs_count_pairs(const rs_word *b, size_t from, size_t to) {
  size_t n = 0;
  while (from < to) {
    size_t w = from >> 6, s = from & 63, e = (w + 1) * 64 < to ? 64 : to - w * 64;
    rs_word x = b[w] >> s;
    if (e - s < 64) x &= ((rs_word)1 << (e - s)) - 1;
    n += (size_t)__builtin_popcountll((x | (x >> 1)) & 0x5555555555555555ull);
    from = w * 64 + e;
  }
  return n;
}

uint64_t rs_hash_bytes(const void *p, size_t n, uint64_t seed) {
  /* FNV-1a, then a final mix: fast enough for names and IR hashing. */
  const unsigned char *s = p;
  uint64_t h = 1469598103934665603ull ^ seed;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

char *rs_file_hash(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint64_t h = 0;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) h = rs_hash_bytes(buf, n, h);
  fclose(f);
  char *s = rs_xmalloc(20);
  snprintf(s, 20, "%016llx", (unsigned long long)h);
  return s;
}

uint32_t rs_intern_get(rs_intern *in, const char *s, size_t len) {
  if (in->n * 2 >= in->tabcap) {
    uint32_t nc = in->tabcap ? in->tabcap * 2 : 64;
    uint32_t *nt = rs_xcalloc(nc, sizeof *nt);
    for (uint32_t i = 0; i < in->n; i++) {
      uint64_t h = rs_hash_bytes(in->strs[i], strlen(in->strs[i]), 0);
      uint32_t j = (uint32_t)h & (nc - 1);
      while (nt[j]) j = (j + 1) & (nc - 1);
      nt[j] = i + 1;
    }
    free(in->tab);
    in->tab = nt;
    in->tabcap = nc;
  }
  uint64_t h = rs_hash_bytes(s, len, 0);
  uint32_t j = (uint32_t)h & (in->tabcap - 1);
  while (in->tab[j]) {
    const char *c = in->strs[in->tab[j] - 1];
    if (strlen(c) == len && memcmp(c, s, len) == 0) return in->tab[j] - 1;
    j = (j + 1) & (in->tabcap - 1);
  }
  RS_PUSH(in->strs, in->n, in->cap, rs_xstrndup(s, len));
  in->tab[j] = in->n;
  return in->n - 1;
}

void rs_intern_free(rs_intern *in) {
  for (uint32_t i = 0; i < in->n; i++) free(in->strs[i]);
  free(in->strs);
  free(in->tab);
  memset(in, 0, sizeof *in);
}

double rs_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint32_t rs_uf_find(uint32_t *par, uint32_t x) {
  while (par[x] != x) x = par[x] = par[par[x]];
  return x;
}

void rs_uf_union(uint32_t *par, uint32_t a, uint32_t b) {
  a = rs_uf_find(par, a);
  b = rs_uf_find(par, b);
  if (a != b) par[a < b ? b : a] = a < b ? a : b;
}

int rs_mkdirs(const char *path) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *c = buf + 1; *c; c++)
    if (*c == '/') {
      *c = 0;
      if (mkdir(buf, 0755) && errno != EEXIST) return -1;
      *c = '/';
    }
  return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

void rs_shell_quote(char *out, size_t n, const char *s) {
  size_t k = 0;
  if (k < n - 1) out[k++] = '\'';
  for (; *s && k + 5 < n; s++) {
    if (*s == '\'') {
      memcpy(out + k, "'\\''", 4);
      k += 4;
    } else {
      out[k++] = *s;
    }
  }
  if (k < n - 1) out[k++] = '\'';
  out[k] = 0;
}

void rs_sbuf_put(rs_sbuf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->s = rs_xrealloc(b->s, b->cap);
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}

void rs_sbuf_puts(rs_sbuf *b, const char *s) { rs_sbuf_put(b, s, strlen(s)); }

void rs_sbuf_printf(rs_sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  if (b->n + (size_t)k + 1 > b->cap) {
    b->cap = (b->n + (size_t)k + 1) * 2;
    b->s = rs_xrealloc(b->s, b->cap);
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->n, (size_t)k + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)k;
}
