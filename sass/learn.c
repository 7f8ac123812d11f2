/* learn.c - where each register operand sits in the 128-bit encoding, learned per form from
 * (encoding, listing) pairs of real ptxas output.
 *
 * A form is (architecture, word 0 bits 0-11, the shape: the kinds of its register tokens in
 * text order). For every token of a form, the candidates are every bit offset whose field of
 * the token's width held the token's register in every instruction of the form seen (opcode
 * bits 0-11 and the scheduling/reuse bits 105-127 are never candidates). A token's field is
 * trusted when exactly one candidate is left; a token that left several (a register that never
 * varied, say) or none (the operand is not one plain field) stays untrusted and a lowering that
 * would change it refuses the kernel. Three refinements, each checked on the samples and the table
 * (rs_sass_learn_emit): the guard's bit, tied tokens (operands that always held the same
 * register), and narrowing (fields do not overlap; R and UR fields follow operand order).
 * rs_sass_fields_check then re-encodes every instruction and compares the words: the table in
 * fields.c is only regenerated from runs where it holds. */
#include "sass/lower.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint8_t sm;
  uint16_t opc;
  char shape[RS_MAX_TOKENS + 1];
  uint32_t samples;
  uint64_t cand[RS_MAX_TOKENS][2]; /* bit o: offset o still fits */
  uint64_t vals[RS_MAX_TOKENS][4]; /* distinct values seen */
  uint32_t eq[RS_MAX_TOKENS];      /* tokens of the same kind that always held the same register */
} group;

struct rs_sass_learner {
  group *g;
  uint32_t n, cap;
  uint32_t *slot; /* open addressing: index + 1 */
  uint32_t nslot;
};

static uint32_t hash(unsigned sm, unsigned opc, const char *shape) {
  uint32_t h = 2166136261u ^ sm ^ opc << 8;
  for (const char *s = shape; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

rs_sass_learner *rs_sass_learner_new(void) {
  rs_sass_learner *L = rs_xcalloc(1, sizeof *L);
  L->nslot = 1024;
  L->slot = rs_xcalloc(L->nslot, sizeof *L->slot);
  return L;
}

void rs_sass_learner_free(rs_sass_learner *L) {
  if (!L) return;
  free(L->g);
  free(L->slot);
  free(L);
}

static void rehash(rs_sass_learner *L) {
  free(L->slot);
  L->nslot *= 2;
  L->slot = rs_xcalloc(L->nslot, sizeof *L->slot);
  for (uint32_t i = 0; i < L->n; i++) {
    uint32_t h = hash(L->g[i].sm, L->g[i].opc, L->g[i].shape) & (L->nslot - 1);
    while (L->slot[h]) h = (h + 1) & (L->nslot - 1);
    L->slot[h] = i + 1;
  }
}

static group *find_group(rs_sass_learner *L, unsigned sm, unsigned opc, const rs_sass_tokens *t) {
  uint32_t h = hash(sm, opc, t->shape) & (L->nslot - 1);
  for (; L->slot[h]; h = (h + 1) & (L->nslot - 1)) {
    group *g = &L->g[L->slot[h] - 1];
    if (g->sm == sm && g->opc == opc && !strcmp(g->shape, t->shape)) return g;
  }
  group ng;
  memset(&ng, 0, sizeof ng);
  ng.sm = (uint8_t)sm;
  ng.opc = (uint16_t)opc;
  memcpy(ng.shape, t->shape, sizeof ng.shape);
  for (unsigned k = 0; k < t->n; k++) {
    unsigned w = rs_tk_width[t->kind[k]];
    for (unsigned o = 12; o + w <= 105; o++) ng.cand[k][o >> 6] |= 1ull << (o & 63);
  }
  RS_PUSH(L->g, L->n, L->cap, ng);
  L->slot[h] = L->n;
  if (L->n * 2 > L->nslot) rehash(L);
  return &L->g[L->n - 1];
}

static unsigned bits_at(const uint64_t w[2], unsigned off, unsigned width) {
  unsigned v = 0;
  for (unsigned b = 0; b < width; b++) v |= (unsigned)(w[(off + b) >> 6] >> ((off + b) & 63) & 1) << b;
  return v;
}

/* Calls fn for every instruction line of the listing with its words from the cubin. */
typedef int (*inst_fn)(void *ctx, unsigned sm, const uint64_t w[2], const rs_sass_tokens *t, const rs_sass_iline *l,
                       const char *name, rs_err *e);

static int each_inst(const rs_cubin *c, const char *listing, const char *name, inst_fn fn, void *ctx, rs_err *e) {
  rs_sass_ilines il;
  if (rs_sass_ilines_of(listing, name, &il, e)) return -1;
  int rc = 0;
  const rs_cubin_func *f = NULL;
  for (uint32_t i = 0; i < il.n && !rc; i++) {
    const rs_sass_iline *l = &il.v[i];
    if (!f || strcmp(f->name, l->func)) f = rs_cubin_find(c, l->func);
    if (!f) {
      rc = rs_errf(e, name, l->line, "function %s is not in the cubin", l->func);
      break;
    }
    if (l->addr % 16 || l->addr >= f->size) {
      rc = rs_errf(e, name, l->line, "function %s: address 0x%04x outside its .text section", f->name, l->addr);
      break;
    }
    rs_sass_tokens t;
    if (rs_sass_tokens_of(l->text, l->len, &t, NULL, 0)) {
      rc = rs_errf(e, name, l->line, "%s /*%04x*/: cannot read the instruction's operands", f->name, l->addr);
      break;
    }
    uint64_t w[2];
    rs_cubin_words(f, l->addr, w);
    rc = fn(ctx, c->sm, w, &t, l, name, e);
  }
  rs_sass_ilines_free(&il);
  return rc;
}

static int learn_one(void *ctx, unsigned sm, const uint64_t w[2], const rs_sass_tokens *t, const rs_sass_iline *l,
                     const char *name, rs_err *e) {
  (void)l, (void)name, (void)e;
  group *g = find_group(ctx, sm, (unsigned)(w[0] & 0xfff), t);
  for (unsigned k = 0; k < t->n; k++) {
    uint32_t same = 0;
    for (unsigned j = 0; j < t->n; j++) same |= (uint32_t)(t->kind[j] == t->kind[k] && t->val[j] == t->val[k]) << j;
    g->eq[k] = g->samples ? g->eq[k] & same : same;
  }
  g->samples++;
  for (unsigned k = 0; k < t->n; k++) {
    unsigned wd = rs_tk_width[t->kind[k]];
    g->vals[k][t->val[k] >> 6] |= 1ull << (t->val[k] & 63);
    for (unsigned o = 12; o + wd <= 105; o++)
      if ((g->cand[k][o >> 6] >> (o & 63) & 1) && bits_at(w, o, wd) != t->val[k])
        g->cand[k][o >> 6] &= ~(1ull << (o & 63));
  }
  return 0;
}

int rs_sass_learn_add(rs_sass_learner *L, const rs_cubin *c, const char *listing, const char *name, rs_err *e) {
  return each_inst(c, listing, name, learn_one, L, e);
}

static int gcmp(const void *a, const void *b) {
  const group *x = a, *y = b;
  if (x->sm != y->sm) return x->sm < y->sm ? -1 : 1;
  if (x->opc != y->opc) return x->opc < y->opc ? -1 : 1;
  return strcmp(x->shape, y->shape);
}

static unsigned popcount2(const uint64_t m[2]) {
  return (unsigned)(__builtin_popcountll(m[0]) + __builtin_popcountll(m[1]));
}

char *rs_sass_learn_emit(const rs_sass_learner *L, uint32_t *forms, uint32_t *tokens, uint32_t *untrusted) {
  group *g = rs_xmalloc(sizeof *g * (L->n + 1));
  if (L->n) memcpy(g, L->g, sizeof *g * L->n);
  qsort(g, L->n, sizeof *g, gcmp);
  size_t cap = 1 << 16, n = 0;
  char *out = rs_xmalloc(cap);
  *forms = L->n;
  *tokens = *untrusted = 0;
#define P(...)                                                                                                     \
  do {                                                                                                             \
    int k_ = snprintf(out + n, cap - n, __VA_ARGS__);                                                              \
    while ((size_t)k_ >= cap - n) {                                                                                \
      out = rs_xrealloc(out, cap *= 2);                                                                            \
      k_ = snprintf(out + n, cap - n, __VA_ARGS__);                                                                \
    }                                                                                                              \
    n += (size_t)k_;                                                                                               \
  } while (0)
  P("/* fields.c - GENERATED by `regsweep lower learn` (scripts/learn-sass-fields.sh): the register fields\n"
    " * of the SASS encoding per form (architecture, word 0 bits 0-11, register token kinds), learned\n"
    " * from (encoding, listing) pairs of ptxas 13 output (sass/learn.c says how). Per token: the\n"
    " * field's lowest bit, -1 when not trusted (several or no offsets fit every sample). Do not\n"
    " * edit by hand; docs/lower.md. */\n#include \"sass/lower.h\"\n\n");
  /* The guard: where every form that pins it down puts it (bit 12 in all ptxas 13 output seen),
   * that offset is taken for a form whose samples leave several offsets, provided it is one of
   * them (it fits every sample of that form too). No such rule for the other operands: their
   * place depends on the operand's role. */
  int guard_at = -2;
  for (uint32_t i = 0; i < L->n; i++)
    for (size_t k = 0; g[i].shape[k]; k++)
      if ((g[i].shape[k] == 'G' || g[i].shape[k] == 'H') && popcount2(g[i].cand[k]) == 1) {
        int o = g[i].cand[k][0] ? __builtin_ctzll(g[i].cand[k][0]) : 64 + __builtin_ctzll(g[i].cand[k][1]);
        guard_at = guard_at == -2 || guard_at == o ? o : -1;
      }
  /* R and UR operands are printed in the order of their fields: checked over every pair of
   * uniquely learned tokens of one kind in one form. An opcode with an exception (TEX, TLD, TLD4
   * print their second destination first) is left out of the rule for that kind, its tied tokens
   * staying tied; the rule holds for the others only while they have no exception (one opcode's
   * quirk used to turn it off for every form: DFMA's tied accumulators could not be split). */
  uint32_t in_order[RS_TK__N] = {0}, out_of_order[RS_TK__N] = {0};
  uint64_t(*odd)[4096 / 64] = rs_xcalloc(RS_TK__N, sizeof *odd); /* per kind: opcodes with an exception */
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < L->n; i++) {
      int last[RS_TK__N];
      for (int k = 0; k < RS_TK__N; k++) last[k] = -1;
      for (size_t k = 0; g[i].shape[k]; k++) {
        if (popcount2(g[i].cand[k]) != 1) continue;
        int o = g[i].cand[k][0] ? __builtin_ctzll(g[i].cand[k][0]) : 64 + __builtin_ctzll(g[i].cand[k][1]);
        int kind = (int)(strchr(rs_tk_letter, g[i].shape[k]) - rs_tk_letter);
        bool skip = odd[kind][g[i].opc >> 6] >> (g[i].opc & 63) & 1;
        if (last[kind] >= 0 && pass == 0 && o < last[kind]) odd[kind][g[i].opc >> 6] |= 1ull << (g[i].opc & 63);
        if (last[kind] >= 0 && pass == 1 && !skip) (o > last[kind] ? in_order : out_of_order)[kind]++;
        last[kind] = o;
      }
    }
  bool ordered[RS_TK__N];
  for (int k = 0; k < RS_TK__N; k++) ordered[k] = (k == RS_TK_R || k == RS_TK_UR) && in_order[k] && !out_of_order[k];
#define ORDERED(kind, opc) (ordered[kind] && !(odd[kind][(opc) >> 6] >> ((opc) & 63) & 1))
  P("/* Operand order: R fields in increasing bit order in %u of %u pairs, UR in %u of %u, apart from\n"
    " * the opcodes with an exception (their tied tokens stay tied):", in_order[RS_TK_R],
    in_order[RS_TK_R] + out_of_order[RS_TK_R], in_order[RS_TK_UR], in_order[RS_TK_UR] + out_of_order[RS_TK_UR]);
  for (int k = 0; k < RS_TK__N; k++)
    for (unsigned opc = 0; opc < 4096 && (k == RS_TK_R || k == RS_TK_UR); opc++)
      if (odd[k][opc >> 6] >> (opc & 63) & 1) P(" %c 0x%03x", rs_tk_letter[k], opc);
  P(". Tied tokens are split in that order (%s). */\n\n",
    ordered[RS_TK_R] && ordered[RS_TK_UR] ? "the rule holds for both kinds" : "only for a kind where it held");
  uint8_t *has_tie = rs_xcalloc(L->n + 1, 1);
  for (uint32_t i = 0; i < L->n; i++) {
    size_t nt = strlen(g[i].shape);
    int off[RS_MAX_TOKENS], tie[RS_MAX_TOKENS];
    for (size_t k = 0; k < nt; k++) {
      unsigned pc = popcount2(g[i].cand[k]);
      bool guard = g[i].shape[k] == 'G' || g[i].shape[k] == 'H';
      off[k] = tie[k] = -1;
      if (pc == 1) off[k] = g[i].cand[k][0] ? __builtin_ctzll(g[i].cand[k][0]) : 64 + __builtin_ctzll(g[i].cand[k][1]);
      else if (guard && guard_at >= 0 && (g[i].cand[k][guard_at >> 6] >> (guard_at & 63) & 1)) off[k] = guard_at;
    }
    /* Tied tokens: m tokens that always held the same register (UIADD3 UR4, UR4, ...; HMMA's D and
     * C) each fit the same m offsets. Which is which is unknown, but with equal registers the words
     * are the same either way: the j-th token takes the j-th offset and may only be written
     * together with its partners, with the same register (rs_sass_encode refuses otherwise). */
    for (size_t k = 0; k < nt; k++) {
      if (off[k] >= 0 || tie[k] >= 0) continue;
      uint32_t grp = g[i].eq[k];
      unsigned m = (unsigned)__builtin_popcount(grp), pc = popcount2(g[i].cand[k]);
      bool same = m >= 2 && pc == m;
      for (size_t j = 0; j < nt && same; j++)
        if (grp >> j & 1)
          same = g[i].cand[j][0] == g[i].cand[k][0] && g[i].cand[j][1] == g[i].cand[k][1] && g[i].eq[j] == grp;
      if (!same) continue;
      uint64_t c[2] = {g[i].cand[k][0], g[i].cand[k][1]};
      int kind = (int)(strchr(rs_tk_letter, g[i].shape[k]) - rs_tk_letter);
      for (size_t j = 0; j < nt; j++) {
        if (!(grp >> j & 1)) continue;
        int o = c[0] ? __builtin_ctzll(c[0]) : 64 + __builtin_ctzll(c[1]);
        c[o >> 6] &= ~(1ull << (o & 63));
        off[j] = o;
        tie[j] = ORDERED(kind, g[i].opc) ? -2 : (int)k; /* -2: split by the order rule */
      }
      if (!ORDERED(kind, g[i].opc)) has_tie[i] = 1;
    }
    /* Narrowing, to a fixpoint: an operand's field cannot overlap another operand's known field,
     * and an R or UR operand's lies between the fields of the same-kind operands printed before
     * and after it (the order rule). Exactly one fitting offset left: trusted ("narrowed"). */
    bool narrowed[RS_MAX_TOKENS] = {0};
    for (bool again = true; again;) {
      again = false;
      for (size_t k = 0; k < nt; k++) {
        if (off[k] >= 0) continue;
        int kind = (int)(strchr(rs_tk_letter, g[i].shape[k]) - rs_tk_letter);
        unsigned w = rs_tk_width[kind];
        int lo = -1, hi = 128, found = -1, count = 0;
        for (size_t j = 0; j < nt && ORDERED(kind, g[i].opc); j++)
          if (j != k && off[j] >= 0 && g[i].shape[j] == g[i].shape[k]) {
            if (j < k && off[j] > lo) lo = off[j];
            if (j > k && off[j] < hi) hi = off[j];
          }
        for (unsigned o = 12; o + w <= 105; o++) {
          if (!(g[i].cand[k][o >> 6] >> (o & 63) & 1) || (int)o <= lo || (int)o >= hi) continue;
          bool clash = false;
          for (size_t j = 0; j < nt && !clash; j++) {
            if (j == k || off[j] < 0) continue;
            unsigned wj = rs_tk_width[strchr(rs_tk_letter, g[i].shape[j]) - rs_tk_letter];
            clash = o < (unsigned)off[j] + wj && (unsigned)off[j] < o + w;
          }
          if (!clash) found = (int)o, count++;
        }
        if (count == 1) off[k] = found, narrowed[k] = again = true;
      }
    }
    P("static const int8_t o%u[] = {", i);
    for (size_t k = 0; k < nt; k++) {
      (*tokens)++;
      *untrusted += off[k] < 0;
      P("%s%d", k ? ", " : "", off[k]);
    }
    P("%s};", nt ? "" : "0");
    for (size_t k = 0; k < nt; k++) {
      unsigned pc = popcount2(g[i].cand[k]);
      bool guard = g[i].shape[k] == 'G' || g[i].shape[k] == 'H';
      if (pc != 1) P(" /* %zu: %u offsets fit, %u values%s */", k, pc,
                     popcount2(g[i].vals[k]) + popcount2(g[i].vals[k] + 2),
                     tie[k] >= 0 ? "; tied" : tie[k] == -2 ? "; tied, split in operand order" :
                     narrowed[k] ? "; narrowed (no overlap, operand order)" :
                     guard && off[k] >= 0 ? "; the guard's bit" : "");
    }
    P("\n");
    if (has_tie[i]) {
      P("static const int8_t t%u[] = {", i);
      for (size_t k = 0; k < nt; k++) P("%s%d", k ? ", " : "", tie[k] < 0 ? -1 : tie[k]);
      P("};\n");
    }
  }
  P("\nconst rs_sass_form rs_sass_forms[] = {\n");
  for (uint32_t i = 0; i < L->n; i++)
    if (has_tie[i]) P("    {%u, 0x%03x, \"%s\", o%u, t%u, %u},\n", g[i].sm, g[i].opc, g[i].shape, i, i, g[i].samples);
    else P("    {%u, 0x%03x, \"%s\", o%u, NULL, %u},\n", g[i].sm, g[i].opc, g[i].shape, i, g[i].samples);
  P("};\nconst size_t rs_sass_nforms = sizeof rs_sass_forms / sizeof *rs_sass_forms;\n");
#undef ORDERED
#undef P
  free(odd);
  free(has_tie);
  free(g);
  return out;
}

/* ---- the check ---- */

static int check_one(void *ctx, unsigned sm, const uint64_t w[2], const rs_sass_tokens *t, const rs_sass_iline *l,
                     const char *name, rs_err *e) {
  rs_sass_fieldcheck *st = ctx;
  st->insts++;
  unsigned opc = (unsigned)(w[0] & 0xfff);
  const rs_sass_form *f = rs_sass_form_find(sm, opc, t->shape);
  if (!f) {
    st->unknown_forms++;
    return 0;
  }
  uint64_t x[2] = {w[0], w[1]};
  uint32_t which = 0;
  for (unsigned k = 0; k < t->n; k++) {
    if (f->off[k] < 0) {
      st->untrusted++;
      continue;
    }
    unsigned wd = rs_tk_width[t->kind[k]];
    for (unsigned b = 0; b < wd; b++) x[(f->off[k] + b) >> 6] &= ~(1ull << ((f->off[k] + b) & 63));
    which |= 1u << k;
    st->tokens++;
  }
  char why[160];
  if (rs_sass_encode(sm, x, t, which, why, sizeof why))
    return rs_errf(e, name, l->line, "%s /*%04x*/: %s", l->func, l->addr, why);
  if (x[0] != w[0] || x[1] != w[1])
    return rs_errf(e, name, l->line,
                   "%s /*%04x*/ %s: re-encoding gives 0x%016llx%016llx, the cubin has 0x%016llx%016llx", l->func,
                   l->addr, t->op, (unsigned long long)x[1], (unsigned long long)x[0], (unsigned long long)w[1],
                   (unsigned long long)w[0]);
  st->reproduced++;
  return 0;
}

int rs_sass_fields_check(const rs_cubin *c, const char *listing, const char *name, rs_sass_fieldcheck *st,
                         rs_err *e) {
  return each_inst(c, listing, name, check_one, st, e);
}
