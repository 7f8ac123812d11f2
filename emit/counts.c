/* counts.c - register counts llc reports for an AMDGPU kernel: the comment block after the
 * function ("; NumVgprs: 50") and the HSA metadata (".vgpr_count: 50"). llc-14 prints no
 * .agpr_count; its "; NumAgprs:" comment is the AGPR figure and .vgpr_count the unified total.
 * llc-22 calls the SGPR figure "; TotalNumSgprs:" (VCC, FLAT_SCRATCH, XNACK included, as before). */
#include "emit/emit.h"
#include <ctype.h>
#include <stdbool.h>
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

/* Highest AGPR + 1 that instruction lines name ("a7", "a[4:7]"), split by whether the line is
 * one LLVM adds when it spills a VGPR into a free AGPR after allocation (commented "Reload
 * Reuse" by SIRegisterInfo): those AGPRs are LLVM's, not the answer's. Comments are skipped. */
static void agpr_tops(const char *s, int *named, int *spill) {
  *named = *spill = 0;
  while (*s) {
    const char *eol = strchr(s, '\n');
    size_t n = eol ? (size_t)(eol - s) : strlen(s);
    if (*s == '\t' && s[1] != '.') {
      const char *semi = memchr(s, ';', n), *end = semi ? semi : s + n;
      bool reuse = false;
      for (const char *q = semi; q && q + 12 <= s + n && !reuse; q++) reuse = !strncmp(q, "Reload Reuse", 12);
      int *top = reuse ? spill : named;
      for (const char *p = s + 1; p < end; p++) {
        if (*p != 'a' || isalnum((unsigned char)p[-1]) || p[-1] == '_') continue;
        const char *q = p + 1;
        long hi = -1;
        if (*q == '[') { /* a[lo:hi] */
          char *x;
          strtol(q + 1, &x, 10);
          if (*x == ':') hi = strtol(x + 1, &x, 10);
          if (*x != ']') hi = -1;
        } else if (isdigit((unsigned char)*q)) {
          char *x;
          hi = strtol(q, &x, 10);
          if (isalnum((unsigned char)*x) || *x == '_') hi = -1;
        }
        if (hi >= 0 && hi + 1 > *top) *top = (int)hi + 1;
      }
    }
    s += n + (eol != NULL);
  }
}

int rs_emit_counts(const char *asm_text, rs_kernel_counts *c, rs_err *e) {
  c->vgpr = field(asm_text, "; NumVgprs:");
  c->agpr = field(asm_text, "; NumAgprs:");
  c->total_vgpr = field(asm_text, "; TotalNumVgprs:");
  c->sgpr = field(asm_text, "; NumSgprs:");
  if (c->sgpr < 0) c->sgpr = field(asm_text, "; TotalNumSgprs:"); /* llc-22's name for it */
  c->occupancy = field(asm_text, "; Occupancy:");
  c->scratch = field(asm_text, "; ScratchSize:");
  c->vgpr_count = field(asm_text, ".vgpr_count:");
  c->sgpr_count = field(asm_text, ".sgpr_count:");
  if (c->vgpr < 0 || c->sgpr < 0 || c->vgpr_count < 0)
    return rs_errf(e, "llc output", 0, "no register counts in the assembly (NumVgprs / .vgpr_count)");
  if (c->agpr < 0) c->agpr = 0;
  agpr_tops(asm_text, &c->agpr_named, &c->agpr_spill);
  if (c->total_vgpr < 0) c->total_vgpr = c->vgpr;
  return 0;
}
