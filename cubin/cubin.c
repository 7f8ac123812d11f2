/* cubin.c - the ELF side of a cubin: header check/rewrite and the .text.<function> sections. */
#include "cubin/cubin.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const uint8_t *p) { return (uint32_t)u16(p) | (uint32_t)u16(p + 2) << 16; }
static uint64_t u64(const uint8_t *p) { return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32; }

static bool known_sm(unsigned sm) {
  static const unsigned sms[] = {75, 80, 86, 87, 89, 90};
  for (size_t i = 0; i < sizeof sms / sizeof *sms; i++)
    if (sms[i] == sm) return true;
  return false;
}

unsigned rs_cubin_sm_from_flags(uint8_t osabi, uint8_t abiver, uint32_t flags) {
  if (osabi == 0x41 && abiver == 8) {
    /* seen: 0x06 plain, 0x09 ptxas -lineinfo, 0x0a nvcc -lineinfo, 0x0b -g; low byte 0x04 */
    unsigned hi = flags >> 24, sm = flags >> 8 & 0xff;
    if ((flags & 0xff) != 0x04 || (flags >> 16 & 0xff) != 0) return 0;
    if (hi != 0x06 && hi != 0x09 && hi != 0x0a && hi != 0x0b) return 0;
    return known_sm(sm) ? sm : 0;
  }
  if (osabi == 33 && abiver == 7) {
    unsigned sm = flags & 0xff;
    if ((flags >> 16 & 0xff) != sm || (flags & 0xff00) != 0x500 || flags >> 24) return 0;
    return known_sm(sm) ? sm : 0;
  }
  return 0;
}

static int parse(uint8_t *b, size_t len, const char *name, rs_cubin *c, bool need_code, rs_err *e) {
  memset(c, 0, sizeof *c);
  c->bytes = b;
  c->len = len;
  if (len < 64 || memcmp(b, "\177ELF", 4))
    return rs_errf(e, name, 0, "not an ELF file (%zu bytes)", len);
  if (b[4] != 2 || b[5] != 1) return rs_errf(e, name, 0, "not a 64-bit little-endian ELF file");
  if (u16(b + 18) != 190) return rs_errf(e, name, 0, "ELF machine %u is not EM_CUDA (190)", u16(b + 18));
  c->flags = u32(b + 0x30);
  c->sm = rs_cubin_sm_from_flags(b[7], b[8], c->flags);
  if (!c->sm)
    return rs_errf(e, name, 0, "unknown cubin header: OS/ABI 0x%x, ABI version %u, e_flags 0x%x", b[7], b[8],
                   c->flags);
  c->new_layout = b[7] == 0x41;
  uint64_t shoff = u64(b + 0x28);
  unsigned shentsize = u16(b + 0x3a), shnum = u16(b + 0x3c), shstrndx = u16(b + 0x3e);
  if (shentsize < 64 || shstrndx >= shnum || shoff > len || (uint64_t)shnum * shentsize > len - shoff)
    return rs_errf(e, name, 0, "truncated: %u section headers at offset %llu do not fit in %zu bytes", shnum,
                   (unsigned long long)shoff, len);
  uint64_t phoff = u64(b + 0x20);
  unsigned phentsize = u16(b + 0x36), phnum = u16(b + 0x38);
  if (phnum && (phoff > len || (uint64_t)phnum * phentsize > len - phoff))
    return rs_errf(e, name, 0, "truncated: %u program headers at offset %llu do not fit in %zu bytes", phnum,
                   (unsigned long long)phoff, len);
  const uint8_t *sh = b + shoff, *ss = sh + (size_t)shstrndx * shentsize;
  uint64_t stroff = u64(ss + 24), strsize = u64(ss + 32);
  if (stroff > len || strsize > len - stroff || !strsize || b[stroff + strsize - 1])
    return rs_errf(e, name, 0, "truncated: section name table outside the file");
  uint32_t cap = 0;
  for (unsigned i = 0; i < shnum; i++) {
    const uint8_t *s = sh + (size_t)i * shentsize;
    uint32_t nm = u32(s), type = u32(s + 4);
    uint64_t off = u64(s + 24), size = u64(s + 32);
    if (nm >= strsize) return rs_errf(e, name, 0, "section %u: name offset %u outside the name table", i, nm);
    const char *sn = (const char *)b + stroff + nm;
    if (type == 8 /* SHT_NOBITS */) continue;
    if (off > len || size > len - off)
      return rs_errf(e, name, 0, "truncated: section %s (%llu bytes at %llu) ends past the file's %zu bytes", sn,
                     (unsigned long long)size, (unsigned long long)off, len);
    if (strncmp(sn, ".text.", 6)) continue;
    if (size % 16) return rs_errf(e, name, 0, "section %s: %llu bytes is not a whole number of instructions", sn,
                                  (unsigned long long)size);
    rs_cubin_func f;
    memset(&f, 0, sizeof f);
    if (strlen(sn + 6) >= sizeof f.name) return rs_errf(e, name, 0, "section %s: function name too long", sn);
    snprintf(f.name, sizeof f.name, "%s", sn + 6);
    f.size = size;
    f.code = b + off;
    f.shndx = i;
    RS_PUSH(c->funcs, c->nfuncs, cap, f);
  }
  if (!c->nfuncs && need_code) return rs_errf(e, name, 0, "no .text.<function> section: not a cubin with code");
  return 0;
}

int rs_cubin_parse(uint8_t *b, size_t len, const char *name, rs_cubin *c, rs_err *e) {
  return parse(b, len, name, c, true, e);
}

/* all or nothing: a refused file leaves nothing to free */
static int load(const char *path, rs_cubin *c, bool need_code, rs_err *e) {
  size_t len;
  char *b = rs_read_file(path, &len, e);
  if (!b) {
    memset(c, 0, sizeof *c);
    return -1;
  }
  int rc = parse((uint8_t *)b, len, path, c, need_code, e);
  if (rc) rs_cubin_free(c);
  return rc;
}

int rs_cubin_load(const char *path, rs_cubin *c, rs_err *e) { return load(path, c, true, e); }
int rs_cubin_load_any(const char *path, rs_cubin *c, rs_err *e) { return load(path, c, false, e); }

void rs_cubin_rewrite(rs_cubin *c) {
  if (!c->new_layout) return;
  uint32_t f = c->sm | 0x500u | (uint32_t)c->sm << 16;
  c->bytes[7] = 33;
  c->bytes[8] = 7;
  for (int i = 0; i < 4; i++) c->bytes[0x30 + i] = (uint8_t)(f >> 8 * i);
  c->flags = f;
  c->new_layout = false;
}

int rs_cubin_write(const rs_cubin *c, const char *path, rs_err *e) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return rs_errf(e, path, 0, "cannot create: %s", strerror(errno));
  size_t w = fwrite(c->bytes, 1, c->len, fp);
  if (fclose(fp) || w != c->len) return rs_errf(e, path, 0, "write error");
  return 0;
}

uint32_t rs_cubin_subsyms(const rs_cubin *c, const rs_cubin_func *f, rs_cubin_sym **out) {
  const uint8_t *b = c->bytes;
  uint64_t shoff = u64(b + 0x28);
  unsigned shentsize = u16(b + 0x3a), shnum = u16(b + 0x3c);
  uint32_t n = 0, cap = 0;
  *out = NULL;
  for (unsigned i = 0; i < shnum; i++) { /* the headers were checked by rs_cubin_parse */
    const uint8_t *s = b + shoff + (size_t)i * shentsize;
    if (u32(s + 4) != 2 /* SHT_SYMTAB */) continue;
    uint64_t off = u64(s + 24), size = u64(s + 32);
    unsigned link = u32(s + 40);
    if (link >= shnum || off > c->len || size > c->len - off) continue;
    const uint8_t *ls = b + shoff + (size_t)link * shentsize;
    uint64_t soff = u64(ls + 24), ssize = u64(ls + 32);
    if (soff > c->len || ssize > c->len - soff) continue;
    for (uint64_t k = 0; k + 24 <= size; k += 24) {
      const uint8_t *y = b + off + k;
      uint32_t nm = u32(y);
      uint64_t v = u64(y + 8);
      if ((y[4] & 0xf) != 2 /* STT_FUNC */ || u16(y + 6) != f->shndx || !v || v >= f->size || nm >= ssize ||
          !memchr(b + soff + nm, 0, ssize - nm))
        continue;
      rs_cubin_sym sy = {(const char *)b + soff + nm, v};
      RS_PUSH(*out, n, cap, sy);
    }
  }
  return n;
}

const rs_cubin_func *rs_cubin_find(const rs_cubin *c, const char *name) {
  for (uint32_t i = 0; i < c->nfuncs; i++)
    if (!strcmp(c->funcs[i].name, name)) return &c->funcs[i];
  return NULL;
}

void rs_cubin_words(const rs_cubin_func *f, uint64_t at, uint64_t w[2]) {
  w[0] = u64(f->code + at);
  w[1] = u64(f->code + at + 8);
}

void rs_cubin_free(rs_cubin *c) {
  free(c->bytes);
  free(c->funcs);
  memset(c, 0, sizeof *c);
}
