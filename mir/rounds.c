/* rounds.c - the allocation rounds of an llc pipeline from its -debug-pass=Structure listing. */
#include "mir/rounds.h"
#include <stdio.h>
#include <string.h>

/* The passes that shape the rounds, as llc names them; tokens for the shape check. */
static const struct { const char *name; char tok; } passes[] = {
    {"Greedy Register Allocator", 'G'},       {"Virtual Register Rewriter", 'V'},
    {"SI lower SGPR spill instructions", 'L'}, {"SI Lower WWM Copies", 'W'},
    {"Fast Register Allocator", 'X'},          {"Basic Register Allocator", 'X'},
    {"PBQP Register Allocator", 'X'},
};

static const struct { const char *shape; unsigned n; rs_round_kind kind[RS_ROUNDS_MAX]; } known[] = {
    {"GVLGV", 2, {RS_ROUND_SGPR, RS_ROUND_VECTOR}},                   /* llc-14, llc-16 */
    {"GVLGWVGV", 3, {RS_ROUND_SGPR, RS_ROUND_WWM, RS_ROUND_VECTOR}}, /* llc-22 */
};

int rs_rounds_parse(const char *text, const char *who, rs_rounds *out, rs_err *e) {
  memset(out, 0, sizeof *out);
  char shape[64] = "", seen[1024] = "";
  size_t ns = 0, nseen = 0;
  /* Stack Slot Coloring instances: all of them, and how many stood before the last rewriter */
  unsigned nssc = 0, ssc_before = 0;
  for (const char *c = text ? text : ""; *c;) {
    const char *nl = strchr(c, '\n'), *end = nl ? nl : c + strlen(c);
    while (c < end && (*c == ' ' || *c == '\t')) c++;
    size_t len = (size_t)(end - c);
    while (len && (c[len - 1] == ' ' || c[len - 1] == '\r')) len--;
    static const char ssc[] = "Stack Slot Coloring";
    if (len == sizeof ssc - 1 && !memcmp(c, ssc, len)) nssc++;
    for (size_t k = 0; k < sizeof passes / sizeof *passes; k++)
      if (strlen(passes[k].name) == len && !memcmp(c, passes[k].name, len)) {
        if (passes[k].tok == 'V') ssc_before = nssc;
        if (ns + 1 < sizeof shape) shape[ns++] = passes[k].tok;
        int w = snprintf(seen + nseen, sizeof seen - nseen, "%s%s", nseen ? " -> " : "", passes[k].name);
        if (w > 0 && nseen + (size_t)w < sizeof seen) nseen += (size_t)w;
      }
    c = nl ? nl + 1 : end;
  }
  shape[ns] = 0;
  for (size_t k = 0; k < sizeof known / sizeof *known; k++)
    if (!strcmp(shape, known[k].shape)) {
      out->n = known[k].n;
      memcpy(out->kind, known[k].kind, sizeof out->kind);
      snprintf(out->greedy_last, sizeof out->greedy_last, "greedy,%u", out->n - 1);
      snprintf(out->rewriter_last, sizeof out->rewriter_last, "virtregrewriter,%u", out->n - 1);
      if (nssc > ssc_before) snprintf(out->slots_last, sizeof out->slots_last, "stack-slot-coloring,%u", ssc_before);
      return 0;
    }
  unsigned greedy = 0;
  for (size_t k = 0; k < ns; k++) greedy += shape[k] == 'G';
  if (!ns)
    return rs_errf(e, who, 0, "no register allocator in llc's -debug-pass=Structure output (is it llc for amdgcn?)");
  return rs_errf(e, who, 0,
                 "llc's pipeline has %u greedy rounds in an order regsweep does not know (known: SGPR, vector; or "
                 "SGPR, whole-wave, vector): %s",
                 greedy, seen);
}
