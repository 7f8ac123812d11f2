/* counts.c - register counts llc reports for an AMDGPU kernel: the comment block after the
 * function ("; NumVgprs: 50") and the HSA metadata (".vgpr_count: 50"). llc-14 prints no
 * .agpr_count; its "; NumAgprs:" comment is the AGPR figure and .vgpr_count the unified total. */
#include "emit/emit.h"
#include <stdlib.h>
#include <string.h>

static int field(const char *text, const char *key) {
  const char *p = strstr(text, key);
  if (!p) return -1;
  p += strlen(key);
  while (*p == ' ') p++;
  if (*p < '0' || *p > '9') return -1;
  return (int)strtol(p, NULL, 10);
}

int rs_emit_counts(const char *asm_text, rs_kernel_counts *c, rs_err *e) {
  c->vgpr = field(asm_text, "; NumVgprs:");
  c->agpr = field(asm_text, "; NumAgprs:");
  c->total_vgpr = field(asm_text, "; TotalNumVgprs:");
  c->sgpr = field(asm_text, "; NumSgprs:");
  c->occupancy = field(asm_text, "; Occupancy:");
  c->scratch = field(asm_text, "; ScratchSize:");
  c->vgpr_count = field(asm_text, ".vgpr_count:");
  c->sgpr_count = field(asm_text, ".sgpr_count:");
  if (c->vgpr < 0 || c->sgpr < 0 || c->vgpr_count < 0)
    return rs_errf(e, "llc output", 0, "no register counts in the assembly (NumVgprs / .vgpr_count)");
  if (c->agpr < 0) c->agpr = 0;
  if (c->total_vgpr < 0) c->total_vgpr = c->vgpr;
  return 0;
}
