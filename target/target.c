/* target.c - target lookup and the target-neutral register facts (class membership). */
#include "target/target.h"
#include <stdio.h>
#include <string.h>

static const rs_target *const all[] = {&rs_target_gfx90a, &rs_target_sm89, &rs_target_sm90,
                                       /* archs: more AMD architectures */
                                       &rs_target_gfx908, &rs_target_gfx940, &rs_target_gfx1030,
                                       &rs_target_gfx1030_w64, &rs_target_gfx1100, &rs_target_gfx1100_w64,
                                       /* llc-22 */
                                       &rs_target_gfx942, &rs_target_gfx950, &rs_target_gfx1200,
                                       &rs_target_gfx1200_w64, &rs_target_gfx1201, &rs_target_gfx1201_w64,
                                       /* SASS only (PTX fixtures are sm_89/sm_90) */
                                       &rs_target_sm75, &rs_target_sm80, &rs_target_sm86, &rs_target_sm87};

const rs_target *const *rs_target_all(size_t *n) {
  *n = sizeof all / sizeof *all;
  return all;
}

size_t rs_target_class_owners(const rs_target *t, const char *name, size_t n, char *buf, size_t cap) {
  size_t k = 0;
  if (cap) buf[0] = 0;
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
    const rs_target *o = all[i];
    if (o == t || o->vendor != t->vendor || rs_target_class(o, name, n) < 0) continue;
    int w = snprintf(buf + k, cap > k ? cap - k : 0, "%s%s", k ? ", " : "", o->name);
    if (w > 0 && k + (size_t)w < cap) k += (size_t)w;
  }
  return k;
}

const rs_target *rs_target_by_name(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    if (strcmp(all[i]->name, name) == 0) return all[i];
  /* Accept the spellings users type: "sm89", "SM_90", "mi250x" (MI300X/MI325X are gfx942;
   * gfx940 is the pre-release MI300 ISA) */
  if (strcmp(name, "sm89") == 0) return &rs_target_sm89;
  if (strcmp(name, "sm90") == 0 || strcmp(name, "sm_90a") == 0) return &rs_target_sm90;
  if (strcmp(name, "mi250x") == 0 || strcmp(name, "mi210") == 0) return &rs_target_gfx90a;
  if (strcmp(name, "mi100") == 0) return &rs_target_gfx908;
  if (strcmp(name, "mi300") == 0 || strcmp(name, "mi300x") == 0 || strcmp(name, "mi300a") == 0 ||
      strcmp(name, "mi325x") == 0)
    return &rs_target_gfx942;
  if (strcmp(name, "mi350x") == 0 || strcmp(name, "mi355x") == 0) return &rs_target_gfx950;
  return NULL;
}

int rs_target_class(const rs_target *t, const char *name, size_t n) {
  for (uint32_t i = 0; i < t->nclasses; i++)
    if (strlen(t->classes[i].name) == n && memcmp(t->classes[i].name, name, n) == 0) return (int)i;
  return -1;
}

int rs_target_file_of(const rs_target *t, uint32_t unit) {
  for (uint32_t f = 0; f < t->nfiles; f++)
    if (unit >= t->files[f].first && unit < t->files[f].first + t->files[f].count) return (int)f;
  return -1;
}

unsigned rs_lanes_units(rs_lanes l) {
  unsigned n = 0;
  while (l) {
    n++;
    l >>= 2;
  }
  return n;
}

static rs_lanes class_lanes(const rs_regclass *c) {
  if (c->half == 1) return 1;
  if (c->half == 2) return 2;
  return rs_lanes_full(c->width);
}

enum rs_member rs_target_member(const rs_target *t, int cls, rs_preg r) {
  const rs_regclass *c = &t->classes[cls];
  if (r.lanes != class_lanes(c)) return RS_MEMBER_WIDTH;
  for (uint32_t s = 0; s < t->nspecials; s++)
    if ((c->specials >> s & 1) && t->specials[s].reg.unit == r.unit &&
        t->specials[s].reg.lanes == r.lanes)
      return RS_MEMBER_OK;
  int f = rs_target_file_of(t, r.unit);
  if (f < 0 || !(c->files >> f & 1)) return RS_MEMBER_FILE;
  const rs_regfile *rf = &t->files[f];
  uint32_t idx = r.unit - rf->first, w = c->width;
  if (idx + w > rf->count) return RS_MEMBER_RANGE;
  if (c->align > 1 && idx % c->align) return RS_MEMBER_ALIGN;
  for (uint32_t u = r.unit; u < r.unit + w; u++)
    if (t->unit_flags[u] & RS_UNIT_RESERVED) return RS_MEMBER_RESERVED;
  if (idx + w > rf->budget) return RS_MEMBER_BUDGET;
  return RS_MEMBER_OK;
}

const char *rs_member_str(enum rs_member m) {
  switch (m) {
  case RS_MEMBER_OK: return "ok";
  case RS_MEMBER_WIDTH: return "wrong width for the class";
  case RS_MEMBER_FILE: return "wrong register file for the class";
  case RS_MEMBER_ALIGN: return "misaligned tuple";
  case RS_MEMBER_RANGE: return "runs past the end of the register file";
  case RS_MEMBER_RESERVED: return "reserved register";
  case RS_MEMBER_BUDGET: return "beyond the register budget";
  case RS_MEMBER_FNBUDGET: return "beyond the function's register budget (launch bounds)";
  }
  return "?";
}
