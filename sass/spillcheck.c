/* spillcheck.c - the independent check of a listing whose spill slots became register copies:
 * every read of an instruction that was not rewritten reads the same original definitions as in
 * the original listing, following copies back (sass/spills.h, rs_spills_check).
 *
 * Both functions are lifted from text; registers are taken physically (a value's truth). A
 * definition is a (instruction, operand, unit) of an instruction that was not rewritten, or "zero"
 * (RZ stored), or "entry" (no def reaches). In the written listing a rewritten MOV's def stands for
 * what its source reads there and a NOP defines nothing; in the original, a load of a promoted
 * slot's word stands for what the stores that reach it (through the frame word, a pseudo-register
 * here) stored. The sets are solved to a fixpoint (copies may form cycles around loops). */
#include "sass/spills.h"
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ZERO = 0, ENTRY = 1 }; /* ids 0 and 1; a real def site: 2 + its index */

typedef struct {
  uint32_t *v;
  uint32_t n, cap;
} set;

static void set_add(set *s, uint32_t x) {
  uint32_t i = 0;
  while (i < s->n && s->v[i] < x) i++;
  if (i < s->n && s->v[i] == x) return;
  rs_grow((void **)&s->v, sizeof *s->v, &s->cap, s->n + 1);
  memmove(s->v + i + 1, s->v + i, sizeof *s->v * (s->n - i));
  s->v[i] = x;
  s->n++;
}

static bool set_eq(const set *a, const set *b) {
  return a->n == b->n && (!a->n || !memcmp(a->v, b->v, sizeof *a->v * a->n));
}

/* One function's reaching definitions over units (the target's, plus frame words for the original). */
typedef struct {
  const rs_func *f;
  uint32_t nunits;     /* target units + frame words */
  uint32_t nsites;
  uint32_t *site_unit, *site_inst, *site_key; /* key: op << 8 | unit offset; copies: UINT32_MAX */
  int32_t *site_src;   /* a copy's source: a unit (register or frame word), or -1: zero (RZ) */
  uint32_t *unit_first, *site_next;
  uint32_t *op_first;  /* per operand: first site (defs) */
  /* per (operand, unit offset) read: reaching sites, as a set index */
  set *reads;          /* one per operand unit: index op_read[op] + k */
  uint32_t *op_read;
  uint32_t nreads;
  set *copy;           /* per site: what a copy's source reads (may name other copies) */
  set *sol;            /* per copy site: the real definitions it stands for (solved) */
  uint32_t *inst_copy; /* per instruction: its first copy site (one per unit copied), UINT32_MAX if none */
  uint8_t *inst_ncopy; /* per instruction: its copy sites */
} RD;

static int32_t unit_of_op(const rs_func *f, const rs_operand *op) {
  if (op->kind == RS_OP_VREG && f->truth) {
    unsigned lo = op->lanes ? (unsigned)__builtin_ctzll(op->lanes) / 2 : 0;
    return (int32_t)(f->truth[op->reg].unit + lo);
  }
  if (op->kind == RS_OP_PREG && op->lanes && rs_sass_allocatable(f->tgt, op->reg)) return (int32_t)op->reg;
  return -1;
}

static unsigned width_of(const rs_operand *op) { return op->lanes ? rs_lanes_units(op->lanes >> (__builtin_ctzll(op->lanes) & ~1u)) : 0; }

/* frame word of a promoted access in the original (orig only; -1 elsewhere) */
typedef struct {
  int32_t word;  /* frame word, or -1 */
  uint32_t words; /* 1, 2 or 4 */
  bool store;
} slotacc;

static void rd_build(RD *r, const rs_func *f, const uint8_t *rewritten, bool is_orig, const slotacc *sa, uint32_t nwords) {
  memset(r, 0, sizeof *r);
  r->f = f;
  r->nunits = f->tgt->nunits + nwords;
  uint32_t cap = 0;
  r->op_first = rs_xmalloc(sizeof *r->op_first * (f->nops + 1));
  r->inst_copy = rs_xmalloc(sizeof *r->inst_copy * (f->ninsts + 1));
  r->inst_ncopy = rs_xcalloc(f->ninsts + 1, 1);
  for (uint32_t i = 0; i < f->ninsts; i++) r->inst_copy[i] = UINT32_MAX;
  r->op_read = rs_xmalloc(sizeof *r->op_read * (f->nops + 1));
  for (uint32_t i = 0; i < f->nops; i++) r->op_first[i] = r->op_read[i] = UINT32_MAX;
#define ADD_SITE(u, ii, key, src)                                                                                  \
  do {                                                                                                             \
    rs_grow((void **)&r->site_unit, sizeof *r->site_unit, &cap, r->nsites + 1);                                    \
    r->site_inst = rs_xrealloc(r->site_inst, sizeof *r->site_inst * cap);                                          \
    r->site_key = rs_xrealloc(r->site_key, sizeof *r->site_key * cap);                                             \
    r->site_src = rs_xrealloc(r->site_src, sizeof *r->site_src * cap);                                            \
    r->site_unit[r->nsites] = (u), r->site_inst[r->nsites] = (ii), r->site_key[r->nsites] = (key);                 \
    r->site_src[r->nsites] = (src);                                                                                \
    r->nsites++;                                                                                                   \
  } while (0)
  for (uint32_t ii = 0; ii < f->ninsts; ii++) {
    const rs_inst *in = &f->insts[ii];
    bool rw = rewritten[ii];
    uint32_t tn = f->tgt->nunits;
    if (is_orig && sa[ii].word >= 0) { /* a promoted slot access: the store defines the frame words */
      r->inst_copy[ii] = r->nsites;
      if (sa[ii].store) {
        int32_t su = unit_of_op(f, &f->ops[in->first_op + in->nops - 1]);
        for (uint32_t k = 0; k < sa[ii].words; k++)
          ADD_SITE(tn + (uint32_t)sa[ii].word + k, ii, UINT32_MAX, su >= 0 ? su + (int32_t)k : -1);
        r->inst_ncopy[ii] = (uint8_t)sa[ii].words;
      } else { /* the load's result is a copy of the words */
        int32_t du = unit_of_op(f, &f->ops[in->first_op]);
        for (uint32_t k = 0; du >= 0 && k < sa[ii].words; k++)
          ADD_SITE((uint32_t)du + k, ii, UINT32_MAX, (int32_t)(tn + (uint32_t)sa[ii].word + k));
        r->inst_ncopy[ii] = du >= 0 ? (uint8_t)sa[ii].words : 0;
      }
      continue;
    }
    if (!is_orig && rw) { /* MOV d, s / IMAD.WIDE.U32 d, RZ, RZ, s: a copy per unit; NOP: nothing */
      const rs_operand *d = &f->ops[in->first_op], *src = &f->ops[in->first_op + in->nops - 1];
      int32_t du = in->nops >= 2 ? unit_of_op(f, d) : -1, su = unit_of_op(f, src);
      if (du >= 0) {
        r->inst_copy[ii] = r->nsites;
        for (unsigned k = 0; k < width_of(d); k++) ADD_SITE((uint32_t)du + k, ii, UINT32_MAX, su >= 0 ? su + (int32_t)k : -1);
        r->inst_ncopy[ii] = (uint8_t)width_of(d);
      }
      continue;
    }
    for (uint32_t o = 0; o < in->nops; o++) {
      const rs_operand *op = &f->ops[in->first_op + o];
      int32_t u = unit_of_op(f, op);
      if (!(op->flags & RS_F_DEF) || u < 0) continue;
      r->op_first[in->first_op + o] = r->nsites;
      for (unsigned k = 0; k < width_of(op); k++) ADD_SITE((uint32_t)u + k, ii, o << 8 | k, 0);
    }
  }
#undef ADD_SITE
  r->unit_first = rs_xmalloc(sizeof *r->unit_first * (r->nunits + 1));
  r->site_next = rs_xmalloc(sizeof *r->site_next * (r->nsites + 1));
  for (uint32_t u = 0; u < r->nunits; u++) r->unit_first[u] = UINT32_MAX;
  for (uint32_t s = r->nsites; s-- > 0;) {
    r->site_next[s] = r->unit_first[r->site_unit[s]];
    r->unit_first[r->site_unit[s]] = s;
  }
}

static void rd_free(RD *r) {
  for (uint32_t i = 0; i < r->nreads; i++) free(r->reads[i].v);
  for (uint32_t i = 0; r->copy && i < r->nsites; i++) free(r->copy[i].v), free(r->sol[i].v);
  free(r->reads);
  free(r->copy);
  free(r->sol);
  free(r->inst_copy);
  free(r->inst_ncopy);
  free(r->site_unit);
  free(r->site_inst);
  free(r->site_key);
  free(r->site_src);
  free(r->unit_first);
  free(r->site_next);
  free(r->op_first);
  free(r->op_read);
}

static bool is_cond(const rs_operand *op) { return (op->flags & RS_F_DEF) && (op->flags & RS_F_COND); }

/* Apply instruction ii's defs to cur. */
static void rd_defs(const RD *r, uint32_t ii, rs_word *cur) {
  const rs_inst *in = &r->f->insts[ii];
  for (uint32_t o = 0; o < in->nops; o++) {
    uint32_t oi = in->first_op + o, s0 = r->op_first[oi];
    if (s0 == UINT32_MAX) continue;
    const rs_operand *op = &r->f->ops[oi];
    for (uint32_t s = s0; s < r->nsites && r->site_inst[s] == ii && (s == s0 || r->site_key[s] >> 8 == o); s++) {
      if (!is_cond(op))
        for (uint32_t z = r->unit_first[r->site_unit[s]]; z != UINT32_MAX; z = r->site_next[z]) rs_bs_clr(cur, z);
      rs_bs_set(cur, s);
      if (r->site_key[s] == UINT32_MAX) break;
    }
  }
  /* copies (a promoted store defines frame words, a load or a rewritten copy registers) */
  for (uint32_t k = 0, s0 = r->inst_copy[ii]; s0 != UINT32_MAX && k < r->inst_ncopy[ii]; k++) {
    uint32_t s = s0 + k;
    for (uint32_t z = r->unit_first[r->site_unit[s]]; z != UINT32_MAX; z = r->site_next[z]) rs_bs_clr(cur, z);
    rs_bs_set(cur, s);
  }
}

static void reach_into(const RD *r, const rs_word *cur, uint32_t u, set *out) {
  bool any = false;
  for (uint32_t z = r->unit_first[u]; z != UINT32_MAX; z = r->site_next[z])
    if (rs_bs_get(cur, z)) set_add(out, 2 + z), any = true;
  if (!any) set_add(out, ENTRY);
}

/* Reaching sites of every read (and of the sources of copies) */
static void rd_solve(RD *r) {
  const rs_func *f = r->f;
  size_t W = RS_WORDS(r->nsites) + 1;
  rs_word *in = rs_xcalloc(W * (f->nblocks + 1), sizeof *in), *out = rs_xcalloc(W * (f->nblocks + 1), sizeof *out);
  rs_word *cur = rs_xcalloc(W, sizeof *cur);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t bi = 0; bi < f->nblocks; bi++) {
      const rs_block *b = &f->blocks[bi];
      rs_word *bin = in + W * bi;
      for (uint32_t p = 0; p < b->npreds; p++)
        for (size_t w = 0; w < W; w++) bin[w] |= out[W * b->preds[p] + w];
      memcpy(cur, bin, W * sizeof *cur);
      for (uint32_t k = 0; k < b->ninsts; k++) rd_defs(r, b->first_inst + k, cur);
      if (memcmp(cur, out + W * bi, W * sizeof *cur)) {
        memcpy(out + W * bi, cur, W * sizeof *cur);
        changed = true;
      }
    }
  }
  uint32_t capr = 0;
  r->copy = rs_xcalloc(r->nsites + 1, sizeof *r->copy);
  r->sol = rs_xcalloc(r->nsites + 1, sizeof *r->sol);
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    const rs_block *b = &f->blocks[bi];
    memcpy(cur, in + W * bi, W * sizeof *cur);
    for (uint32_t k = 0; k < b->ninsts; k++) {
      uint32_t ii = b->first_inst + k;
      const rs_inst *ins = &f->insts[ii];
      for (uint32_t o = 0; o < ins->nops; o++) {
        uint32_t oi = ins->first_op + o;
        const rs_operand *op = &f->ops[oi];
        int32_t u = unit_of_op(f, op);
        if (u < 0 || ((op->flags & RS_F_DEF) && !is_cond(op))) continue;
        unsigned w = width_of(op);
        r->op_read[oi] = r->nreads;
        for (unsigned q = 0; q < w; q++) {
          rs_grow((void **)&r->reads, sizeof *r->reads, &capr, r->nreads + 1);
          memset(&r->reads[r->nreads], 0, sizeof *r->reads);
          reach_into(r, cur, (uint32_t)u + q, &r->reads[r->nreads]);
          r->nreads++;
        }
      }
      /* copies: what their source reads here */
      for (uint32_t q = 0, s0 = r->inst_copy[ii]; s0 != UINT32_MAX && q < r->inst_ncopy[ii]; q++) {
        uint32_t s = s0 + q;
        if (r->site_src[s] >= 0) reach_into(r, cur, (uint32_t)r->site_src[s], &r->copy[s]);
        else set_add(&r->copy[s], ZERO);
      }
      rd_defs(r, ii, cur);
    }
  }
  free(in);
  free(out);
  free(cur);
}

static bool is_copy(const RD *r, uint32_t id) { return id >= 2 && r->site_key[id - 2] == UINT32_MAX; }

/* The real definitions a set of sites stands for: copies replaced by their solved sets. */
static void expand(const RD *r, const set *x, set *out) {
  for (uint32_t i = 0; i < x->n; i++) {
    uint32_t id = x->v[i];
    if (!is_copy(r, id)) {
      set_add(out, id);
      continue;
    }
    const set *c = &r->sol[id - 2];
    for (uint32_t j = 0; j < c->n; j++) set_add(out, c->v[j]);
  }
}

/* sol[s] = the real ids of copy[s] and the sol of every copy it names: the least fixpoint
 * (copies may form cycles around loops; a cycle adds nothing of its own). */
static void close_copies(RD *r) {
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t s = 0; s < r->nsites; s++) {
      if (r->site_key[s] != UINT32_MAX) continue;
      set z = {0};
      expand(r, &r->copy[s], &z);
      if (!set_eq(&z, &r->sol[s])) {
        free(r->sol[s].v);
        r->sol[s] = z;
        changed = true;
      } else {
        free(z.v);
      }
    }
  }
}

/* A real site as (instruction, operand, unit): comparable across the two functions. */
static void canon(const RD *r, const set *x, set *out) {
  for (uint32_t i = 0; i < x->n; i++) {
    uint32_t id = x->v[i];
    if (id < 2) set_add(out, id);
    else set_add(out, 2 + (r->site_inst[id - 2] << 12 | r->site_key[id - 2]));
  }
}

uint32_t rs_spills_check(const rs_func *orig, const rs_func *written, const uint8_t *rewritten, uint32_t *uses,
                         char *why, size_t n) {
  *uses = 0;
  if (why && n) why[0] = 0;
  if (orig->ninsts != written->ninsts) {
    snprintf(why, n, "the written listing has %u instructions, the original %u", written->ninsts, orig->ninsts);
    return 1;
  }
  /* the original's promoted accesses: their frame words */
  slotacc *sa = rs_xmalloc(sizeof *sa * (orig->ninsts + 1));
  uint32_t nwords = 0;
  for (uint32_t i = 0; i < orig->ninsts; i++) {
    sa[i].word = -1;
    sa[i].words = 0;
    sa[i].store = false;
    if (!rewritten[i]) continue;
    const rs_inst *in = &orig->insts[i];
    const char *mn = rs_func_opcode(orig, in);
    bool st = !strncmp(mn, "STL", 3);
    uint32_t b = st ? 0 : 1;
    long off = 0;
    if (b + 1 < in->nops && orig->ops[in->first_op + b + 1].kind == RS_OP_IMM) {
      const rs_operand *im = &orig->ops[in->first_op + b + 1];
      char t[32];
      snprintf(t, sizeof t, "%.*s", (int)(im->text_len < 30 ? im->text_len : 30), orig->src + im->text_off);
      off = strtol(t, NULL, 0);
    }
    sa[i].word = (int32_t)(off / 4);
    sa[i].store = st;
    sa[i].words = strstr(mn, ".128") ? 4 : strstr(mn, ".64") ? 2 : 1;
    if ((uint32_t)sa[i].word + sa[i].words > nwords) nwords = (uint32_t)sa[i].word + sa[i].words;
  }
  RD a, b;
  rd_build(&a, orig, rewritten, true, sa, nwords);
  rd_build(&b, written, rewritten, false, sa, 0);
  rd_solve(&a);
  rd_solve(&b);
  close_copies(&a);
  close_copies(&b);
  uint32_t bad = 0;
  for (uint32_t i = 0; i < orig->ninsts; i++) {
    if (rewritten[i]) continue;
    const rs_inst *x = &orig->insts[i], *y = &written->insts[i];
    if (x->nops != y->nops) {
      if (!bad++) snprintf(why, n, "/*%04x*/ has %u operands written, %u before", (unsigned)x->addr, y->nops, x->nops);
      continue;
    }
    for (uint32_t o = 0; o < x->nops; o++) {
      uint32_t ra = a.op_read[x->first_op + o], rb = b.op_read[y->first_op + o];
      if (ra == UINT32_MAX && rb == UINT32_MAX) continue;
      const rs_operand *op = &orig->ops[x->first_op + o];
      unsigned w = width_of(op);
      for (unsigned q = 0; q < w; q++) {
        (*uses)++;
        set ea = {0}, eb = {0}, ca = {0}, cb = {0};
        if (ra != UINT32_MAX) expand(&a, &a.reads[ra + q], &ea);
        if (rb != UINT32_MAX) expand(&b, &b.reads[rb + q], &eb);
        canon(&a, &ea, &ca);
        canon(&b, &eb, &cb);
        if (((ra == UINT32_MAX) != (rb == UINT32_MAX) || !set_eq(&ca, &cb)) && getenv("RS_SPILLS_DEBUG")) {
          fprintf(stderr, "mismatch at /*%04x*/ op %u:", (unsigned)x->addr, o);
          for (uint32_t z = 0; z < ca.n; z++)
            fprintf(stderr, " o:%s", ca.v[z] < 2 ? (ca.v[z] ? "entry" : "zero") : "");
          for (uint32_t z = 0; z < ca.n; z++)
            if (ca.v[z] >= 2) fprintf(stderr, " o%04x", (unsigned)orig->insts[(ca.v[z] - 2) >> 12].addr);
          for (uint32_t z = 0; z < cb.n; z++)
            if (cb.v[z] >= 2) fprintf(stderr, " w%04x", (unsigned)orig->insts[(cb.v[z] - 2) >> 12].addr);
            else fprintf(stderr, " w:%s", cb.v[z] ? "entry" : "zero");
          fprintf(stderr, "\n");
        }
        if ((ra == UINT32_MAX) != (rb == UINT32_MAX) || !set_eq(&ca, &cb)) {
          if (!bad++)
            snprintf(why, n, "/*%04x*/ %s operand %u reads %u definition(s) written, %u in the original (not the same)",
                     (unsigned)x->addr, rs_func_opcode(orig, x), o, cb.n, ca.n);
        }
        free(ea.v);
        free(eb.v);
        free(ca.v);
        free(cb.v);
      }
    }
  }
  rd_free(&a);
  rd_free(&b);
  free(sa);
  return bad;
}
