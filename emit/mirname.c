/* mirname.c - physical registers as MIR spells them, and LLVM's order of live-in lists. */
#include "emit/emit.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

char *rs_emit_mir_name(const rs_target *t, rs_preg r, char *buf, size_t n) {
  int f = rs_target_file_of(t, r.unit);
  if (f < 0 || !t->files[f].asm_prefix) return t->format_preg(t, r, buf, n); /* vcc, m0: same words */
  const char *file = t->files[f].name;
  unsigned idx = r.unit - t->files[f].first, w = rs_lanes_units(r.lanes);
  if (r.lanes == 1 || r.lanes == 2) {
    snprintf(buf, n, "%s%u_%s", file, idx, r.lanes == 1 ? "lo16" : "hi16");
    return buf;
  }
  size_t k = 0;
  buf[0] = 0;
  for (unsigned i = 0; i < (w ? w : 1) && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, "%s%s%u", i ? "_" : "", file, idx + i);
  return buf;
}

/* Tuples are synthesized after the plain registers in TableGen, so they number after them. */
static bool is_tuple(const char *s, size_t n) {
  for (size_t i = 0; i + 1 < n; i++)
    if (s[i] == '_' && isalpha((unsigned char)s[i + 1]) && i + 5 <= n &&
        (!strncmp(s + i + 1, "sgpr", 4) || !strncmp(s + i + 1, "vgpr", 4) || !strncmp(s + i + 1, "agpr", 4) ||
         !strncmp(s + i + 1, "ttmp", 4)))
      return true;
  return false;
}

/* TableGen's LessRecordRegister: runs of digits compare as numbers, the rest as text. */
int rs_emit_livein_cmp(const char *a, size_t na, const char *b, size_t nb) {
  bool ta = is_tuple(a, na), tb = is_tuple(b, nb);
  if (ta != tb) return ta ? 1 : -1;
  size_t i = 0, j = 0;
  while (i < na && j < nb) {
    if (isdigit((unsigned char)a[i]) && isdigit((unsigned char)b[j])) {
      unsigned long x = 0, y = 0;
      while (i < na && isdigit((unsigned char)a[i])) x = x * 10 + (unsigned long)(a[i++] - '0');
      while (j < nb && isdigit((unsigned char)b[j])) y = y * 10 + (unsigned long)(b[j++] - '0');
      if (x != y) return x < y ? -1 : 1;
      continue;
    }
    if (a[i] != b[j]) return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
    i++, j++;
  }
  return (i < na) - (j < nb);
}
