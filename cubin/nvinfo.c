/* nvinfo.c - a cubin's register count per function, where the driver reads it.
 *
 * Measured on ptxas 13 cubins (docs/lower.md): the global `.nv.info` section holds one
 * EIATTR_REGCOUNT record per kernel (format 0x04 EIFMT_SVAL, attribute 0x2f, payload u32
 * symbol index + u32 count) on every architecture; the `.text.NAME` section header's sh_info
 * carries the count in bits 24-31 on sm_75-sm_89 and 0 there on sm_90 (the low 24 bits are the
 * symbol index). Records: u8 format, u8 attribute, then EIFMT_NVAL (0x01) nothing, EIFMT_BVAL
 * (0x02) and EIFMT_HVAL (0x03) a u16 value, EIFMT_SVAL (0x04) a u16 size and that many bytes. */
#include "cubin/lower.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const uint8_t *p) { return (uint32_t)u16(p) | (uint32_t)u16(p + 2) << 16; }
static uint64_t u64(const uint8_t *p) { return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32; }
static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i);
}

enum { EIATTR_REGCOUNT = 0x2f, EIFMT_SVAL = 0x04 };

typedef struct {
  const char *name;
  uint32_t type, link, info;
  uint64_t off, size, hdr;
} sec;

/* Section i (the header table was validated by rs_cubin_parse). */
static void section(const rs_cubin *c, unsigned i, sec *s) {
  const uint8_t *b = c->bytes;
  uint64_t shoff = u64(b + 0x28);
  unsigned shentsize = u16(b + 0x3a), shstrndx = u16(b + 0x3e);
  const uint8_t *h = b + shoff + (size_t)i * shentsize, *ss = b + shoff + (size_t)shstrndx * shentsize;
  s->name = (const char *)b + u64(ss + 24) + u32(h);
  s->type = u32(h + 4);
  s->off = u64(h + 24);
  s->size = u64(h + 32);
  s->link = u32(h + 40);
  s->info = u32(h + 44);
  s->hdr = shoff + (uint64_t)i * shentsize;
}

/* Name of symbol `idx` of the symbol table, NULL when out of range or outside the file. */
static const char *symbol_name(const rs_cubin *c, const sec *symtab, const sec *strtab, uint32_t idx) {
  if ((uint64_t)idx >= symtab->size / 24) return NULL;
  const uint8_t *s = c->bytes + symtab->off + (uint64_t)idx * 24;
  uint32_t nm = u32(s);
  if (nm >= strtab->size || !memchr(c->bytes + strtab->off + nm, 0, strtab->size - nm)) return NULL;
  return (const char *)c->bytes + strtab->off + nm;
}

int rs_nvinfo_read(const rs_cubin *c, const char *name, rs_nvinfo_func **funcs, rs_err *e) {
  *funcs = NULL;
  unsigned shnum = u16(c->bytes + 0x3c);
  sec info = {0}, symtab = {0}, strtab = {0};
  bool have_info = false, have_sym = false;
  for (unsigned i = 0; i < shnum; i++) {
    sec s;
    section(c, i, &s);
    if (!strcmp(s.name, ".nv.info")) {
      if (have_info) return rs_errf(e, name, 0, "two .nv.info sections");
      info = s;
      have_info = true;
    } else if (s.type == 2 /* SHT_SYMTAB */) {
      symtab = s;
      have_sym = true;
    }
  }
  if (!have_info) return rs_errf(e, name, 0, "no .nv.info section: the register count has nowhere to go");
  if (!have_sym || symtab.link >= shnum) return rs_errf(e, name, 0, "no symbol table (.symtab)");
  section(c, symtab.link, &strtab);
  rs_nvinfo_func *fs = rs_xcalloc(c->nfuncs + 1, sizeof *fs);
  for (uint32_t k = 0; k < c->nfuncs; k++) snprintf(fs[k].name, sizeof fs[k].name, "%s", c->funcs[k].name);
  /* sh_info of each .text section */
  for (unsigned i = 0; i < shnum; i++) {
    sec s;
    section(c, i, &s);
    if (strncmp(s.name, ".text.", 6)) continue;
    for (uint32_t k = 0; k < c->nfuncs; k++)
      if (!strcmp(fs[k].name, s.name + 6)) fs[k].shdr = s.hdr, fs[k].sh_info = s.info;
  }
  const uint8_t *p = c->bytes + info.off;
  uint64_t at = 0;
  int rc = 0;
  while (at < info.size && !rc) {
    if (info.size - at < 4) {
      rc = rs_errf(e, name, 0, "truncated .nv.info: a record header at +0x%llx runs past the section (%llu bytes)",
                   (unsigned long long)at, (unsigned long long)info.size);
      break;
    }
    unsigned fmt = p[at], attr = p[at + 1];
    uint64_t len = fmt == EIFMT_SVAL ? 4u + u16(p + at + 2) : fmt >= 1 && fmt <= 3 ? 4u : 0;
    if (!len) {
      rc = rs_errf(e, name, 0, ".nv.info +0x%llx: unknown record format 0x%02x (attribute 0x%02x)",
                   (unsigned long long)at, fmt, attr);
      break;
    }
    if (len > info.size - at) {
      rc = rs_errf(e, name, 0, "truncated .nv.info: record 0x%02x at +0x%llx needs %llu bytes, %llu left", attr,
                   (unsigned long long)at, (unsigned long long)len, (unsigned long long)(info.size - at));
      break;
    }
    if (attr == EIATTR_REGCOUNT) {
      if (fmt != EIFMT_SVAL || len != 12) {
        rc = rs_errf(e, name, 0, ".nv.info +0x%llx: EIATTR_REGCOUNT is not an 8-byte EIFMT_SVAL record",
                     (unsigned long long)at);
        break;
      }
      uint32_t sym = u32(p + at + 4), n = u32(p + at + 8);
      const char *sn = symbol_name(c, &symtab, &strtab, sym);
      uint32_t k = 0;
      while (sn && k < c->nfuncs && strcmp(fs[k].name, sn)) k++;
      if (!sn || k == c->nfuncs) {
        rc = rs_errf(e, name, 0, ".nv.info: EIATTR_REGCOUNT for symbol %u (%s), which is no function of the cubin",
                     sym, sn ? sn : "out of range");
        break;
      }
      if (fs[k].rec_off) {
        rc = rs_errf(e, name, 0, ".nv.info: two EIATTR_REGCOUNT records for %s", sn);
        break;
      }
      if (n > 255) {
        rc = rs_errf(e, name, 0, ".nv.info: EIATTR_REGCOUNT of %s is %u (more than 255 registers)", sn, n);
        break;
      }
      fs[k].regcount = n;
      fs[k].rec_off = (uint32_t)(info.off + at + 8);
    }
    at += len;
  }
  for (uint32_t k = 0; k < c->nfuncs && !rc; k++) {
    uint32_t hi = fs[k].sh_info >> 24;
    if (!fs[k].rec_off) rc = rs_errf(e, name, 0, ".nv.info: no EIATTR_REGCOUNT for function %s", fs[k].name);
    else if (hi && hi != fs[k].regcount)
      rc = rs_errf(e, name, 0, "function %s: sh_info says %u registers, EIATTR_REGCOUNT %u (inconsistent)", fs[k].name,
                   hi, fs[k].regcount);
  }
  if (rc) {
    free(fs);
    return -1;
  }
  *funcs = fs;
  return 0;
}

void rs_nvinfo_set_regcount(rs_cubin *c, const rs_nvinfo_func *f, uint32_t count) {
  put32(c->bytes + f->rec_off, count);
  if (f->sh_info >> 24) put32(c->bytes + f->shdr + 44, (f->sh_info & 0xffffffu) | count << 24);
}

int rs_nvinfo_params(const rs_cubin *c, const char *func, uint32_t *sizes, uint32_t max, uint32_t *n, rs_err *e) {
  *n = 0;
  char want[160];
  snprintf(want, sizeof want, ".nv.info.%s", func);
  unsigned shnum = u16(c->bytes + 0x3c);
  for (unsigned i = 0; i < shnum; i++) {
    sec s;
    section(c, i, &s);
    if (strcmp(s.name, want)) continue;
    const uint8_t *p = c->bytes + s.off;
    for (uint64_t at = 0; at < s.size;) {
      if (s.size - at < 4) return rs_errf(e, want, 0, "truncated record at +0x%llx", (unsigned long long)at);
      unsigned fmt = p[at], attr = p[at + 1];
      uint64_t len = fmt == EIFMT_SVAL ? 4u + u16(p + at + 2) : fmt >= 1 && fmt <= 3 ? 4u : 0;
      if (!len || len > s.size - at)
        return rs_errf(e, want, 0, "record 0x%02x at +0x%llx: unknown format or past the section", attr,
                       (unsigned long long)at);
      if (attr == 0x17 /* EIATTR_KPARAM_INFO: u32 index, u16 ordinal, u16 offset, u32 flags (size << 18) */) {
        if (len != 16) return rs_errf(e, want, 0, "EIATTR_KPARAM_INFO of %llu bytes", (unsigned long long)len);
        unsigned ord = u16(p + at + 8);
        if (ord >= max) return rs_errf(e, want, 0, "parameter %u: more than %u", ord, max);
        sizes[ord] = u32(p + at + 12) >> 18 & 0x3fff;
        if (ord + 1 > *n) *n = ord + 1;
      }
      at += len;
    }
    return 0;
  }
  return rs_errf(e, want, 0, "no such section in the cubin");
}
