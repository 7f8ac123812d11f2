/* slots.c - spill slot order as llc's StackSlotColoring gives it in a one-shot compile.
 * Restarted from MIR, llc has no LiveStacks intervals (the register allocator makes them, MIR
 * does not carry them), so StackSlotColoring does nothing and the frame layout keeps the spill
 * slots in creation order; in a one-shot compile it renumbers them by spill weight. This redoes
 * the renumbering: weight of a slot = sum over its frame-index operands of the block's frequency
 * relative to the entry (llc's own block frequencies, from -print-machine-bfi), slots sorted by
 * weight (descending, ties by number), the k-th taking the k-th lowest slot number with its own
 * size and alignment. Not redone: the sharing of one slot by values whose original live ranges
 * do not overlap (those ranges are gone by the postsplit stage); a kernel where LLVM shares gets
 * a larger frame than the compiler's, never a wrong one. */
#include "emit/emit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int id;
  int stack_id; /* index into a small table of stack-id names */
  double w;
  size_t size_off, size_len; /* text of "size: S, alignment: A" in the entry */
  char sizetext[64];
} slot;

/* Block frequencies relative to the entry, from llc's "-print-machine-bfi" lines
 * " - BB7[name]: float = 10.0, int = 255" (the integer frequency, as LLVM's spill weight uses). */
static double *parse_bfi(const char *txt, uint32_t *n) {
  double *f = NULL;
  uint32_t cap = 0;
  *n = 0;
  double entry = 0;
  for (const char *p = strstr(txt, " - BB"); p; p = strstr(p + 1, " - BB")) {
    unsigned bb = (unsigned)strtoul(p + 5, NULL, 10);
    const char *q = strstr(p, "int = "), *nl = strchr(p, '\n');
    if (!q || (nl && q > nl)) continue;
    double v = strtod(q + 6, NULL);
    if (bb == 0) entry = v;
    while (*n <= bb) RS_PUSH(f, *n, cap, 0.0);
    f[bb] = v;
  }
  for (uint32_t i = 0; i < *n; i++) f[i] = entry > 0 ? (double)((float)f[i] / (float)entry) : 0;
  return f;
}

static int cmp_slot(const void *a, const void *b) {
  const slot *x = a, *y = b;
  if (x->stack_id != y->stack_id) return x->stack_id - y->stack_id;
  if ((float)x->w != (float)y->w) return (float)x->w > (float)y->w ? -1 : 1;
  return x->id - y->id;
}

static int cmp_pos(const void *a, const void *b) {
  const slot *x = a, *y = b;
  return x->size_off < y->size_off ? -1 : x->size_off > y->size_off;
}

static int cmp_id(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

char *rs_emit_color_slots(const char *mir, const char *bfi, uint32_t *moved, rs_err *e) {
  *moved = 0;
  uint32_t nf = 0;
  double *freq = parse_bfi(bfi, &nf);
  const char *st = strstr(mir, "\nstack:"), *body = strstr(mir, "\nbody:");
  if (!st || !body || st > body) {
    free(freq);
    return rs_xstrndup(mir, strlen(mir));
  }
  /* spill slot entries */
  slot *sl = NULL;
  uint32_t ns = 0, caps = 0;
  char ids[4][32] = {{0}};
  int nids = 0;
  for (const char *p = strstr(st, "\n  - { id: "); p && p < body; p = strstr(p + 1, "\n  - { id: ")) {
    const char *end = strstr(p + 1, "\n  - {");
    if (!end || end > body) end = body;
    const char *ty = strstr(p, "type: spill-slot");
    if (!ty || ty > end) continue;
    const char *sz = strstr(p, "size: "), *al = sz ? strstr(sz, "alignment: ") : NULL;
    const char *sid = strstr(p, "stack-id: ");
    if (!sz || !al || sz > end || al > end) continue;
    const char *ae = al + 11;
    while (*ae >= '0' && *ae <= '9') ae++;
    slot s;
    memset(&s, 0, sizeof s);
    s.id = atoi(p + 11);
    s.size_off = (size_t)(sz - mir);
    s.size_len = (size_t)(ae - sz);
    snprintf(s.sizetext, sizeof s.sizetext, "%.*s", (int)s.size_len, sz);
    char nm[32] = "default";
    if (sid && sid < end) {
      size_t k = 0;
      for (const char *c = sid + 10; *c && *c != ',' && *c != ' ' && *c != '\n' && k < sizeof nm - 1; c++) nm[k++] = *c;
      nm[k] = 0;
    }
    int si = -1;
    for (int i = 0; i < nids; i++)
      if (!strcmp(ids[i], nm)) si = i;
    if (si < 0 && nids < 4) snprintf(ids[si = nids++], sizeof ids[0], "%s", nm);
    s.stack_id = si < 0 ? 3 : si;
    RS_PUSH(sl, ns, caps, s);
  }
  if (ns < 2) {
    free(sl);
    free(freq);
    return rs_xstrndup(mir, strlen(mir));
  }
  /* weights: every %stack.N operand of an instruction (not DBG_VALUE, not memory operands) */
  int bb = -1;
  for (const char *l = body + 1; *l;) {
    const char *nl = strchr(l, '\n');
    size_t n = nl ? (size_t)(nl - l) : strlen(l);
    const char *t = l;
    while (t < l + n && *t == ' ') t++;
    if (!strncmp(t, "bb.", 3)) bb = atoi(t + 3);
    else if (bb >= 0 && strncmp(t, "DBG_VALUE", 9) && strncmp(t, "successors:", 11) && strncmp(t, "liveins:", 8)) {
      const char *mm = NULL;
      for (const char *c = t; c + 3 < l + n; c++)
        if (!strncmp(c, " :: ", 4)) {
          mm = c;
          break;
        }
      const char *lim = mm ? mm : l + n;
      for (const char *c = t; c + 7 < lim; c++)
        if (!strncmp(c, "%stack.", 7)) {
          int id = atoi(c + 7);
          for (uint32_t i = 0; i < ns; i++)
            if (sl[i].id == id) sl[i].w = (float)sl[i].w + (float)((uint32_t)bb < nf ? freq[bb] : 0);
        }
    }
    l = nl ? nl + 1 : l + n;
  }
  free(freq);
  /* new numbers: per stack id, the k-th heaviest takes the k-th lowest number */
  qsort(sl, ns, sizeof *sl, cmp_slot);
  int maxid = 0;
  for (uint32_t i = 0; i < ns; i++)
    if (sl[i].id > maxid) maxid = sl[i].id;
  int *to = rs_xmalloc(sizeof *to * (size_t)(maxid + 1)), *nums = rs_xmalloc(sizeof *nums * ns);
  for (int i = 0; i <= maxid; i++) to[i] = i;
  const char **newsize = rs_xcalloc((size_t)maxid + 1, sizeof *newsize);
  for (uint32_t a = 0; a < ns;) {
    uint32_t b = a;
    while (b < ns && sl[b].stack_id == sl[a].stack_id) b++;
    for (uint32_t j = a; j < b; j++) nums[j - a] = sl[j].id;
    qsort(nums, b - a, sizeof *nums, cmp_id);
    for (uint32_t j = a; j < b; j++) {
      to[sl[j].id] = nums[j - a];
      newsize[nums[j - a]] = sl[j].sizetext;
      if (nums[j - a] != sl[j].id) (*moved)++;
    }
    a = b;
  }
  /* size texts by position in the file */
  slot *bypos = rs_xmalloc(sizeof *bypos * ns);
  memcpy(bypos, sl, sizeof *sl * ns);
  qsort(bypos, ns, sizeof *bypos, cmp_pos);
  uint32_t next = 0;
  /* rebuild the text */
  size_t len = strlen(mir), cap = len * 2 + 1024, o = 0;
  char *out = rs_xmalloc(cap);
  for (size_t i = 0; i < len;) {
    if (o + 64 >= cap) out = rs_xrealloc(out, cap *= 2);
    bool done = false;
    if (mir + i > body && !strncmp(mir + i, "%stack.", 7)) {
      char *end;
      long id = strtol(mir + i + 7, &end, 10);
      if (end > mir + i + 7 && id >= 0 && id <= maxid) {
        o += (size_t)snprintf(out + o, cap - o, "%%stack.%d", to[id]);
        i = (size_t)(end - mir);
        done = true;
      }
    }
    if (!done && next < ns && bypos[next].size_off == i) {
      o += (size_t)snprintf(out + o, cap - o, "%s", newsize[bypos[next].id]);
      i += bypos[next].size_len;
      next++;
      done = true;
    }
    if (!done) out[o++] = mir[i++];
  }
  out[o] = 0;
  free(newsize);
  free(bypos);
  free(to);
  free(nums);
  free(sl);
  (void)e;
  return out;
}
