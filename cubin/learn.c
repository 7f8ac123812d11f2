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
#include "cubin/lower.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint8_t sm;
  uint16_t opc;
  char shape[RS_MAX_TOKENS + 1];
  uint32_t samples;
  char op[32];                     /* the mnemonic of its first sample (for messages) */
  uint64_t cand[RS_MAX_TOKENS][2]; /* bit o: offset o still fits */
  uint64_t vals[RS_MAX_TOKENS][4]; /* distinct values seen */
  uint32_t eq[RS_MAX_TOKENS];      /* tokens of the same kind that always held the same register */
  /* merge (rs_sass_learn_merge): the base table's row, if it has one */
  uint32_t base_samples;           /* its samples (0: a form the base lacks) */
  bool kept;                       /* unseen in the new samples: emitted exactly as the base had it */
  int8_t boff[RS_MAX_TOKENS], btie[RS_MAX_TOKENS];
  bool bunique[RS_MAX_TOKENS];     /* the base learned its field uniquely (one offset fit) */
  char *bnote;                     /* kept: the base's comments on the row (owned) */
  /* the probe (rs_sass_learn_probe): one sample's words and text, and the fields nvdisasm showed */
  uint64_t sw[2];
  char stext[200];
  bool has_sample, probed;
  unsigned sfixed; /* its RZ/URZ/PT tokens */
  int8_t poff[RS_MAX_TOKENS];
} group;

struct rs_sass_learner {
  group *g;
  uint32_t n, cap;
  uint32_t *slot; /* open addressing: index + 1 */
  uint32_t nslot;
  uint32_t pairs;  /* (cubin, listing) pairs added */
  /* merge */
  bool merged;
  char base[256];  /* the base table's name and what its header says it was learned from */
  uint32_t base_forms, base_tokens, base_untrusted, kept, both;
  uint32_t probe_replaced; /* base fields a probe contradicted */
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
  for (uint32_t i = 0; i < L->n; i++) free(L->g[i].bnote);
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

static int kind_of(char letter) { return (int)(strchr(rs_tk_letter, letter) - rs_tk_letter); }

/* Every offset a field of `kind` may take (not the opcode bits 0-11, not the control bits 105-127). */
static void all_offsets(int kind, uint64_t c[2]) {
  c[0] = c[1] = 0;
  for (unsigned o = 12; o + rs_tk_width[kind] <= 105; o++) c[o >> 6] |= 1ull << (o & 63);
}

static group *find_group(rs_sass_learner *L, unsigned sm, unsigned opc, const char *shape, bool create) {
  uint32_t h = hash(sm, opc, shape) & (L->nslot - 1);
  for (; L->slot[h]; h = (h + 1) & (L->nslot - 1)) {
    group *g = &L->g[L->slot[h] - 1];
    if (g->sm == sm && g->opc == opc && !strcmp(g->shape, shape)) return g;
  }
  if (!create) return NULL;
  group ng;
  memset(&ng, 0, sizeof ng);
  ng.sm = (uint8_t)sm;
  ng.opc = (uint16_t)opc;
  snprintf(ng.shape, sizeof ng.shape, "%s", shape);
  for (size_t k = 0; shape[k]; k++) all_offsets(kind_of(shape[k]), ng.cand[k]);
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
  (void)name, (void)e;
  group *g = find_group(ctx, sm, (unsigned)(w[0] & 0xfff), t->shape, true);
  if (!g->op[0]) snprintf(g->op, sizeof g->op, "%s", t->op);
  for (unsigned k = 0; k < t->n && k < RS_MAX_TOKENS; k++) { /* the bound for gcc -O2's -Warray-bounds */
    uint32_t same = 0;
    for (unsigned j = 0; j < t->n && j < RS_MAX_TOKENS; j++) same |= (uint32_t)(t->kind[j] == t->kind[k] && t->val[j] == t->val[k]) << j;
    g->eq[k] = g->samples ? g->eq[k] & same : same;
  }
  g->samples++;
  unsigned fixed = 0; /* RZ/URZ/PT tokens: flipping their bits often makes another alias, which says nothing */
  for (unsigned k = 0; k < t->n; k++) fixed += t->val[k] == (1u << rs_tk_width[t->kind[k]]) - 1 && t->kind[k] != RS_TK_B;
  if ((!g->has_sample || fixed < g->sfixed) && l->len < sizeof g->stext) { /* the one the probe asks nvdisasm about */
    g->sfixed = fixed;
    g->sw[0] = w[0], g->sw[1] = w[1];
    memcpy(g->stext, l->text, l->len);
    g->stext[l->len] = 0;
    g->has_sample = true;
  }
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
  if (L->merged) return rs_errf(e, name, 0, "samples added after the merge with the base table");
  if (each_inst(c, listing, name, learn_one, L, e)) return -1;
  L->pairs++;
  return 0;
}

/* ---- the probe: fields from nvdisasm itself ---- */

/* Probe one sample of every form the samples added so far have (one nvdisasm batch per
 * architecture, probe.c): where nvdisasm pins a token's field down, that field is the table's
 * (rs_sass_learn_emit), over what the samples left tied, narrowed or untrusted, and a base row's
 * field the probe contradicts is replaced rather than kept (rs_sass_learn_merge). */
int rs_sass_learn_probe(rs_sass_learner *L, const rs_nvdisasm *nd, rs_sass_probe_stats *st, rs_err *e) {
  if (L->merged) return rs_errf(e, "probe", 0, "the probe runs before the merge with the base table");
  uint32_t *idx = rs_xmalloc(sizeof *idx * (L->n + 1));
  uint64_t(*w)[2] = rs_xmalloc(sizeof *w * (L->n + 1));
  const char **s = rs_xmalloc(sizeof *s * (L->n + 1));
  uint32_t *len = rs_xmalloc(sizeof *len * (L->n + 1));
  int8_t(*off)[RS_MAX_TOKENS] = rs_xmalloc(sizeof *off * (L->n + 1));
  int rc = 0;
  for (unsigned sm = 0; sm < 256 && !rc; sm++) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < L->n; i++)
      if (L->g[i].sm == sm && L->g[i].has_sample) {
        idx[n] = i, w[n][0] = L->g[i].sw[0], w[n][1] = L->g[i].sw[1];
        s[n] = L->g[i].stext, len[n] = (uint32_t)strlen(L->g[i].stext);
        n++;
      }
    if (!n) continue;
    rc = rs_sass_probe(nd, sm, n, (const uint64_t(*)[2])w, s, len, off, st, e);
    for (uint32_t k = 0; k < n && !rc; k++) {
      memcpy(L->g[idx[k]].poff, off[k], RS_MAX_TOKENS);
      for (unsigned t = 0; t < RS_MAX_TOKENS; t++) /* one field printed twice (probe.c): the samples decide */
        for (unsigned u = 0; u < RS_MAX_TOKENS; u++)
          if (u != t && off[k][t] >= 0 && off[k][u] == off[k][t]) L->g[idx[k]].poff[t] = -1;
      L->g[idx[k]].probed = true;
    }
  }
  free(idx);
  free(w);
  free(s);
  free(len);
  free(off);
  return rc;
}

/* ---- merging with a base table ---- */

/* One row of a base table (a fields.c this file wrote), with its offset and tie arrays. */
typedef struct {
  unsigned sm, opc, samples, line;
  char shape[RS_MAX_TOKENS + 1];
  int8_t off[RS_MAX_TOKENS], tie[RS_MAX_TOKENS];
  bool nofit[RS_MAX_TOKENS]; /* its comment says "K: 0 offsets fit": not one plain field */
  bool noted[RS_MAX_TOKENS]; /* has a comment: not learned uniquely (several fit: tied, narrowed, guard) */
  const char *note; /* the o-array line's comments (into the source) */
  size_t notelen;
} brow;

typedef struct {
  int8_t v[RS_MAX_TOKENS];
  unsigned n;
  bool set;
  const char *note;
  size_t notelen;
} barr;

/* "{a, b, c};" -> v (at most RS_MAX_TOKENS), n; the text after "};" in *rest. -1 if malformed. */
static int parse_list(const char *s, barr *a, const char **rest) {
  if (*s++ != '{') return -1;
  a->n = 0;
  for (;;) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < -1 || v > 127 || a->n >= RS_MAX_TOKENS) return -1;
    a->v[a->n++] = (int8_t)v;
    s = end;
    if (*s == ',') s += (s[1] == ' ') ? 2 : 1;
    else if (*s == '}') break;
    else return -1;
  }
  if (strncmp(s, "};", 2)) return -1;
  *rest = s + 2;
  a->set = true;
  return 0;
}

static barr *arr_at(barr **v, uint32_t *n, uint32_t i) {
  if (i >= 1u << 20) return NULL;
  if (i >= *n) {
    uint32_t m = *n ? *n : 256;
    while (m <= i) m *= 2;
    *v = rs_xrealloc(*v, sizeof **v * m);
    memset(*v + *n, 0, sizeof **v * (m - *n));
    *n = m;
  }
  return &(*v)[i];
}

/* The rows of a fields.c: `static const int8_t oN[] = {...};` (tN likewise) and the rows
 * `{sm, 0xOPC, "SHAPE", oN, tN|NULL, SAMPLES},` of rs_sass_forms[]. */
static int parse_base(const char *src, const char *name, brow **rows, uint32_t *nrows, char *from, size_t fromn,
                      rs_err *e) {
  barr *o = NULL, *t = NULL;
  uint32_t no = 0, nt = 0, cap = 0;
  int rc = 0;
  *rows = NULL, *nrows = 0;
  /* what its header says it was learned from: "Learned from N (cubin, listing) pairs" (a fresh
   * table) or "Merged (...) from N new ..." (a merged one) */
  const char *lf = strstr(src, "Learned from "), *mf = strstr(src, "Merged (");
  const char *hdr_end = strstr(src, "*/");
  if (lf && hdr_end && lf < hdr_end) snprintf(from, fromn, "%.*s", (int)strcspn(lf, ":*\n"), lf);
  else if (mf && hdr_end && mf < hdr_end) snprintf(from, fromn, "itself a merged table");
  else snprintf(from, fromn, "its header names no pair count");
  unsigned line = 0;
  for (const char *p = src; *p && !rc; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
    line++;
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char kind;
    unsigned idx;
    int at = 0;
    if (sscanf(p, "static const int8_t %c%u[] = %n", &kind, &idx, &at) == 2 && at > 0 && (kind == 'o' || kind == 't')) {
      barr *a = kind == 'o' ? arr_at(&o, &no, idx) : arr_at(&t, &nt, idx);
      const char *rest;
      if (!a || a->set || parse_list(p + at, a, &rest) || rest > p + len) {
        rc = rs_errf(e, name, line, "not an array of the field table (or one defined twice)");
        break;
      }
      a->note = rest, a->notelen = (size_t)(p + len - rest);
      continue;
    }
    unsigned sm, opc, samples;
    int a1 = 0, a2 = 0;
    if (sscanf(p, " {%u, 0x%x, \"%n", &sm, &opc, &a1) != 2 || !a1) continue;
    const char *q = p + a1, *qe = strchr(q, '"');
    brow r;
    memset(&r, 0, sizeof r);
    unsigned oi, ti = 0;
    char tbuf[16];
    if (!qe || qe > p + len || (size_t)(qe - q) > RS_MAX_TOKENS ||
        sscanf(qe, "\", o%u, %15[^,], %u},%n", &oi, tbuf, &samples, &a2) != 3 || !a2 ||
        (strcmp(tbuf, "NULL") && sscanf(tbuf, "t%u", &ti) != 1) || sm > 255 || opc > 0xfff) {
      rc = rs_errf(e, name, line, "not a row of rs_sass_forms[]");
      break;
    }
    r.sm = sm, r.opc = opc, r.samples = samples, r.line = line;
    memcpy(r.shape, q, (size_t)(qe - q));
    size_t ntok = strlen(r.shape);
    for (size_t k = 0; k < ntok; k++)
      if (!strchr(rs_tk_letter, r.shape[k])) rc = rs_errf(e, name, line, "token letter '%c' is not one of %s", r.shape[k], rs_tk_letter);
    barr *oa = oi < no ? &o[oi] : NULL, *ta = strcmp(tbuf, "NULL") ? (ti < nt ? &t[ti] : NULL) : NULL;
    if (!rc && (!oa || !oa->set || oa->n != (ntok ? ntok : 1) || (strcmp(tbuf, "NULL") && (!ta || !ta->set || ta->n != ntok))))
      rc = rs_errf(e, name, line, "row 0x%03x '%s' (sm_%u): its arrays are missing or of another length", opc,
                   r.shape, sm);
    for (size_t k = 0; k < ntok && !rc; k++) {
      r.off[k] = oa->v[k];
      r.tie[k] = ta ? ta->v[k] : -1;
      if ((r.off[k] >= 0 && (r.off[k] < 12 || r.off[k] + rs_tk_width[kind_of(r.shape[k])] > 105)) ||
          r.tie[k] >= (int)ntok || r.tie[k] < -1)
        rc = rs_errf(e, name, line, "row 0x%03x '%s' (sm_%u): operand %zu's field or tie is out of range", opc, r.shape,
                     sm, k);
    }
    if (rc) break;
    r.note = oa->note, r.notelen = oa->notelen;
    for (const char *c = r.note; c && c < r.note + r.notelen && (c = strstr(c, "/* ")) && c < r.note + r.notelen; c += 3) {
      unsigned k, fits;
      if (sscanf(c, "/* %u: %u offsets fit", &k, &fits) == 2 && k < ntok) r.nofit[k] = !fits, r.noted[k] = true;
    }
    RS_PUSH(*rows, *nrows, cap, r);
  }
  if (!rc && !*nrows) rc = rs_errf(e, name, 0, "no rows of rs_sass_forms[]: not a field table");
  free(o);
  free(t);
  if (rc) free(*rows), *rows = NULL, *nrows = 0;
  return rc;
}

static void offsets_str(const uint64_t c[2], char *s, size_t n) {
  size_t k = 0;
  s[0] = 0;
  for (unsigned o = 0; o < 128 && k + 8 < n; o++)
    if (c[o >> 6] >> (o & 63) & 1) k += (size_t)snprintf(s + k, n - k, "%s%u", k ? " " : "", o);
  if (!k) snprintf(s, n, "none");
}

int rs_sass_learn_merge(rs_sass_learner *L, const char *base_src, const char *name, rs_err *e) {
  if (L->merged) return rs_errf(e, name, 0, "a second base table");
  brow *r;
  uint32_t nr;
  char from[160];
  if (parse_base(base_src, name, &r, &nr, from, sizeof from, e)) return -1;
  snprintf(L->base, sizeof L->base, "%s (%s)", name, from);
  int rc = 0;
  uint32_t nnew = L->n; /* groups of the new samples: the ones a base row may meet */
  for (uint32_t i = 0; i < nr && !rc; i++) {
    size_t nt = strlen(r[i].shape);
    L->base_forms++;
    L->base_tokens += (uint32_t)nt;
    for (size_t k = 0; k < nt; k++) L->base_untrusted += r[i].off[k] < 0;
    group *g = find_group(L, r[i].sm, r[i].opc, r[i].shape, false);
    if (g && ((uint32_t)(g - L->g) >= nnew || g->base_samples)) {
      rc = rs_errf(e, name, r[i].line, "form 0x%03x '%s' (sm_%u) has two rows", r[i].opc, r[i].shape, r[i].sm);
      break;
    }
    if (!g) {
      /* unseen in the new samples: kept as the base has it (its trusted fields as candidates, so
       * the guard and order rules see them; its ties and untrusted tokens as they were) */
      g = find_group(L, r[i].sm, r[i].opc, r[i].shape, true);
      g->kept = true;
      g->samples = g->base_samples = r[i].samples;
      for (size_t k = 0; k < nt; k++) {
        g->boff[k] = r[i].off[k], g->btie[k] = r[i].tie[k];
        g->bunique[k] = r[i].off[k] >= 0 && !r[i].noted[k];
        g->eq[k] = 1u << k;
        if (r[i].off[k] >= 0 && r[i].tie[k] < 0)
          g->cand[k][0] = g->cand[k][1] = 0, g->cand[k][r[i].off[k] >> 6] = 1ull << (r[i].off[k] & 63);
      }
      g->bnote = rs_xmalloc(r[i].notelen + 1);
      memcpy(g->bnote, r[i].note, r[i].notelen);
      g->bnote[r[i].notelen] = 0;
      L->kept++;
      continue;
    }
    /* seen in both: every field the base trusts must fit every new sample (else the form is named
     * and nothing is written); then the base's fields stand and the new samples decide the rest */
    for (size_t k = 0; k < nt && !rc; k++) {
      g->boff[k] = r[i].off[k], g->btie[k] = r[i].tie[k];
      g->bunique[k] = r[i].off[k] >= 0 && !r[i].noted[k];
      if (r[i].nofit[k]) g->cand[k][0] = g->cand[k][1] = 0; /* no offset fit the base's samples: none fits all */
      if (g->probed && g->poff[k] >= 0 && g->poff[k] != r[i].off[k]) { /* nvdisasm says otherwise: the base goes */
        g->boff[k] = -1, g->btie[k] = -1, g->bunique[k] = false;
        L->probe_replaced += r[i].off[k] >= 0;
        continue;
      }
      if (r[i].off[k] < 0) continue;
      uint64_t want[2] = {0, 0};
      uint32_t grp = 0;
      for (size_t j = 0; j < nt; j++)
        if (j == k || (r[i].tie[k] >= 0 && r[i].tie[j] == r[i].tie[k]))
          want[r[i].off[j] >> 6] |= 1ull << (r[i].off[j] & 63), grp |= 1u << j;
      uint64_t both[2] = {g->cand[k][0] & want[0], g->cand[k][1] & want[1]};
      if (!both[0] && !both[1]) {
        char fit[128];
        offsets_str(g->cand[k], fit, sizeof fit);
        rc = rs_errf(e, name, r[i].line,
                     "form %s 0x%03x '%s' (sm_%u): the new samples (%u) contradict the base table (%u samples): "
                     "operand %zu (%c) is at bit %d there%s, the new samples fit bits %s",
                     g->op, r[i].opc, r[i].shape, r[i].sm, g->samples, r[i].samples, k, r[i].shape[k], r[i].off[k],
                     r[i].tie[k] >= 0 ? " (tied)" : "", fit);
        break;
      }
      g->cand[k][0] = both[0], g->cand[k][1] = both[1];
      g->eq[k] &= grp;
    }
    /* a base-trusted token is tied to nothing it was not tied to in the base */
    for (size_t k = 0; k < nt; k++)
      for (size_t j = 0; j < nt; j++)
        if (j != k && g->boff[j] >= 0 && !(r[i].tie[j] >= 0 && r[i].tie[j] == r[i].tie[k])) g->eq[k] &= ~(1u << j);
    g->base_samples = r[i].samples;
    g->samples += r[i].samples;
    L->both++;
  }
  free(r);
  if (!rc) L->merged = true;
  return rc;
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

/* Token k's field was learned as the one offset that fits (not by a refinement): what the guard
 * and order rules are measured on. A field the base trusts counts when the base learned it so. */
static bool learned_uniquely(const group *g, size_t k) {
  if (popcount2(g->cand[k]) != 1) return false;
  return !(g->kept || g->base_samples) || g->boff[k] < 0 || g->bunique[k];
}

char *rs_sass_learn_emit(const rs_sass_learner *L, rs_sass_learn_stats *st) {
  group *g = rs_xmalloc(sizeof *g * (L->n + 1));
  if (L->n) memcpy(g, L->g, sizeof *g * L->n);
  qsort(g, L->n, sizeof *g, gcmp);
  size_t cap = 1 << 16, n = 0;
  char *out = rs_xmalloc(cap);
  memset(st, 0, sizeof *st);
  st->forms = L->n;
  st->pairs = L->pairs;
  st->kept = L->kept, st->both = L->both, st->added = L->merged ? L->n - L->kept - L->both : 0;
  st->probe_replaced = L->probe_replaced;
  st->base_forms = L->base_forms, st->base_tokens = L->base_tokens, st->base_untrusted = L->base_untrusted;
  uint32_t *tokens = &st->tokens, *untrusted = &st->untrusted;
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
    " * from (encoding, listing) pairs of ptxas 13 output (cubin/learn.c says how). Per token: the\n"
    " * field's lowest bit, -1 when not trusted (several or no offsets fit every sample). Do not\n"
    " * edit by hand; docs/lower.md.\n");
  if (!L->merged) P(" * Learned from %u (cubin, listing) pairs: %u forms. */\n", L->pairs, L->n);
  else
    P(" * Merged (`regsweep lower learn --merge`) from %u new (cubin, listing) pairs and the base table\n"
      " * %s, %u forms:\n"
      " * %u kept as the base had them (unseen in the new pairs; their comments are the base's),\n"
      " * %u seen in both (the base's trusted fields fit every new sample; the new pairs decide the\n"
      " * base's untrusted ones), %u new: %u forms. */\n",
      L->pairs, L->base, L->base_forms, L->kept, L->both, L->n - L->kept - L->both, L->n);
  P("#include \"cubin/lower.h\"\n\n");
  /* The guard: where every form that pins it down puts it (bit 12 in all ptxas 13 output seen),
   * that offset is taken for a form whose samples leave several offsets, provided it is one of
   * them (it fits every sample of that form too). No such rule for the other operands: their
   * place depends on the operand's role. */
  int guard_at = -2;
  for (uint32_t i = 0; i < L->n; i++)
    for (size_t k = 0; g[i].shape[k]; k++)
      if ((g[i].shape[k] == 'G' || g[i].shape[k] == 'H') && learned_uniquely(&g[i], k)) {
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
        if (!learned_uniquely(&g[i], k)) continue;
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
  P("/* Operand order: R fields in increasing bit order in %u of %u pairs, UR in %u of %u%s, apart from\n"
    " * the opcodes with an exception (their tied tokens stay tied):", in_order[RS_TK_R],
    in_order[RS_TK_R] + out_of_order[RS_TK_R], in_order[RS_TK_UR], in_order[RS_TK_UR] + out_of_order[RS_TK_UR],
    L->merged ? "\n * (fields learned as the one offset that fits, here or in the base table)" : "");
  for (int k = 0; k < RS_TK__N; k++)
    for (unsigned opc = 0; opc < 4096 && (k == RS_TK_R || k == RS_TK_UR); opc++)
      if (odd[k][opc >> 6] >> (opc & 63) & 1) P(" %c 0x%03x", rs_tk_letter[k], opc);
  P(". Tied tokens are split in that order (%s). */\n\n",
    ordered[RS_TK_R] && ordered[RS_TK_UR] ? "the rule holds for both kinds" : "only for a kind where it held");
  uint8_t *has_tie = rs_xcalloc(L->n + 1, 1);
  for (uint32_t i = 0; i < L->n; i++) {
    size_t nt = strlen(g[i].shape);
    int off[RS_MAX_TOKENS], tie[RS_MAX_TOKENS];
    if (g[i].kept) { /* as the base had it, comments included */
      P("static const int8_t o%u[] = {", i);
      for (size_t k = 0; k < nt; k++) {
        (*tokens)++;
        *untrusted += g[i].boff[k] < 0;
        has_tie[i] |= g[i].btie[k] >= 0;
        P("%s%d", k ? ", " : "", g[i].boff[k]);
      }
      P("%s};%s\n", nt ? "" : "0", g[i].bnote);
      if (has_tie[i]) {
        P("static const int8_t t%u[] = {", i);
        for (size_t k = 0; k < nt; k++) P("%s%d", k ? ", " : "", g[i].btie[k]);
        P("};\n");
      }
      continue;
    }
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
    /* nvdisasm's probe: where it pins a field down, that field stands, over a tie, a narrowing or
     * an untrusted token; a field the samples alone fixed elsewhere is a contradiction (counted,
     * and named in the row's comment) */
    int was[RS_MAX_TOKENS];
    bool by_probe[RS_MAX_TOKENS] = {0};
    for (size_t k = 0; k < nt; k++) {
      was[k] = off[k];
      if (!g[i].probed || g[i].poff[k] < 0) continue;
      if (off[k] == g[i].poff[k] && tie[k] < 0) {
        st->probe_confirmed++;
        continue;
      }
      st->probe_set++;
      st->probe_contradicted += off[k] >= 0 && off[k] != g[i].poff[k] && popcount2(g[i].cand[k]) == 1;
      off[k] = g[i].poff[k], tie[k] = -1, by_probe[k] = true;
    }
    has_tie[i] = 0;
    for (size_t k = 0; k < nt; k++) has_tie[i] |= tie[k] >= 0;
    P("static const int8_t o%u[] = {", i);
    for (size_t k = 0; k < nt; k++) {
      (*tokens)++;
      *untrusted += off[k] < 0;
      st->newly_trusted += g[i].base_samples && g[i].boff[k] < 0 && off[k] >= 0;
      P("%s%d", k ? ", " : "", off[k]);
    }
    P("%s};", nt ? "" : "0");
    for (size_t k = 0; k < nt; k++) {
      unsigned pc = popcount2(g[i].cand[k]);
      bool guard = g[i].shape[k] == 'G' || g[i].shape[k] == 'H';
      if (by_probe[k]) {
        if (was[k] >= 0) P(" /* %zu: probed (nvdisasm) at bit %d, the samples gave %d */", k, off[k], was[k]);
        else P(" /* %zu: probed (nvdisasm), %u offsets fit the samples */", k, pc);
        continue;
      }
      if (pc != 1) P(" /* %zu: %u offsets fit, %u values%s */", k, pc,
                     popcount2(g[i].vals[k]) + popcount2(g[i].vals[k] + 2),
                     tie[k] >= 0 ? "; tied" : tie[k] == -2 ? "; tied, split in operand order" :
                     narrowed[k] ? "; narrowed (no overlap, operand order)" :
                     guard && off[k] >= 0 ? "; the guard's bit" : "");
    }
    if (g[i].base_samples) {
      P(" /* merged: %u samples in the base, %u new", g[i].base_samples, g[i].samples - g[i].base_samples);
      for (size_t k = 0; k < nt; k++)
        if (g[i].boff[k] < 0 && off[k] >= 0) P("; %zu: untrusted in the base", k);
      P(" */");
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

/* ---- the check against the probe ---- */

typedef struct {
  uint32_t n, cap;
  struct pform {
    unsigned sm, opc;
    char shape[RS_MAX_TOKENS + 1];
    uint64_t w[2];
    char text[200];
    uint32_t line, addr, fixed;
    char func[96];
  } *v;
} pforms;

static int collect_one(void *ctx, unsigned sm, const uint64_t w[2], const rs_sass_tokens *t, const rs_sass_iline *l,
                       const char *name, rs_err *e) {
  (void)name, (void)e;
  pforms *p = ctx;
  unsigned opc = (unsigned)(w[0] & 0xfff);
  if (!rs_sass_form_find(sm, opc, t->shape) || l->len >= sizeof p->v->text) return 0;
  unsigned fixed = 0; /* as the learner's sample: the instance with the fewest RZ/URZ/PT */
  for (unsigned k = 0; k < t->n; k++) fixed += t->val[k] == (1u << rs_tk_width[t->kind[k]]) - 1 && t->kind[k] != RS_TK_B;
  struct pform *f = NULL;
  for (uint32_t k = 0; k < p->n && !f; k++)
    if (p->v[k].sm == sm && p->v[k].opc == opc && !strcmp(p->v[k].shape, t->shape)) {
      if (fixed >= p->v[k].fixed) return 0;
      f = &p->v[k];
    }
  if (!f && p->n == p->cap) p->v = rs_xrealloc(p->v, sizeof *p->v * (p->cap = p->cap ? 2 * p->cap : 64));
  if (!f) f = &p->v[p->n++];
  f->fixed = fixed;
  f->sm = sm, f->opc = opc, f->w[0] = w[0], f->w[1] = w[1], f->line = l->line, f->addr = l->addr;
  snprintf(f->shape, sizeof f->shape, "%s", t->shape);
  memcpy(f->text, l->text, l->len);
  f->text[l->len] = 0;
  snprintf(f->func, sizeof f->func, "%s", l->func);
  return 0;
}

int rs_sass_fields_probecheck(const rs_nvdisasm *nd, const rs_cubin *c, const char *listing, const char *name,
                              rs_sass_probecheck *st, rs_err *e) {
  pforms p = {0};
  int rc = each_inst(c, listing, name, collect_one, &p, e);
  uint64_t(*w)[2] = rs_xmalloc(sizeof *w * (p.n + 1));
  const char **s = rs_xmalloc(sizeof *s * (p.n + 1));
  uint32_t *len = rs_xmalloc(sizeof *len * (p.n + 1));
  int8_t(*off)[RS_MAX_TOKENS] = rs_xmalloc(sizeof *off * (p.n + 1));
  for (uint32_t k = 0; k < p.n; k++)
    w[k][0] = p.v[k].w[0], w[k][1] = p.v[k].w[1], s[k] = p.v[k].text, len[k] = (uint32_t)strlen(p.v[k].text);
  if (!rc && p.n) rc = rs_sass_probe(nd, c->sm, p.n, (const uint64_t(*)[2])w, s, len, off, &st->probe, e);
  for (uint32_t k = 0; k < p.n && !rc; k++) {
    const rs_sass_form *f = rs_sass_form_find(p.v[k].sm, p.v[k].opc, p.v[k].shape);
    st->forms++;
    for (size_t t = 0; t < strlen(f->shape) && !rc; t++) {
      if (f->off[t] < 0) continue;
      if (off[k][t] < 0) st->open++;
      else if (off[k][t] == f->off[t]) st->confirmed++;
      else
        rc = rs_errf(e, name, p.v[k].line,
                     "%s /*%04x*/ '%s': the table's row for form 0x%03x '%s' (sm_%u) has operand %zu (%c) at bit %d, "
                     "nvdisasm's probe of these words at bit %d: the row is wrong",
                     p.v[k].func, p.v[k].addr, p.v[k].text, f->opc, f->shape, f->sm, t, f->shape[t], f->off[t],
                     off[k][t]);
    }
  }
  free(w);
  free(s);
  free(len);
  free(off);
  free(p.v);
  return rc;
}
