/* lanemask.c - each lane's own paths through a function: its EXEC bit and its bits of the scalar
 * lane masks LLVM keeps in SGPRs (the per-lane exec-mask model).
 *
 * A VGPR holds one value per lane, and a vector instruction reads and writes only the lanes EXEC
 * enables. LLVM keeps lane masks in SGPRs and moves them into EXEC later: structured if/else and
 * loops (SILowerControlFlow), but also an i1 phi lowered to bit operations on masks, e.g. a
 * vector loop with a remainder (ggml's flash_attn_f32_f16_q1_local_tile):
 *     %m = S_MOV_B64 -1; IF (vector path) { %m = 0; loop; IF (remainder) { %m = COPY $exec; %r = ... } }
 *     %m = S_ORN2_B64 %m, $exec; ... $exec = S_AND_B64 $exec, %m   (remainder loop reads %r)
 * The lanes that ran the vector loop without a remainder never enter the remainder loop, so they
 * never read the value %r had before the vector path, and LLVM gives its register to the vector
 * path. Which lanes enter depends on the value of %m, not on the CFG.
 *
 * So the lanes are followed one at a time, as a finite-state machine: a lane's state is its EXEC
 * bit and its bit of every tracked mask register (the registers the wave-sized mask instructions
 * of mir/exec.c name, RS_I_MASKOP). Each instruction updates the bits as its per-lane meaning
 * says; any other def of a tracked register, or of EXEC, gives an unknown bit, and the lane's
 * path forks into both values (only where the bit is still read by a mask instruction: a dead
 * bit is 0, so states merge). Branches: S_CBRANCH_EXECZ is never taken by an active lane,
 * S_CBRANCH_EXECNZ always; every other branch (SCC, VCC) may go either way. An inactive lane
 * follows the wave wherever it goes. A lane starts active or inactive at the entry (whole-wave
 * mode may enable a lane that entered inactive).
 *
 * The result is a graph of segments: instructions [first, end) of one block run in one lane state
 * (a segment ends at the block's end or where the state forks), with a bit per instruction:
 * whether the lane is active there. Every path of a lane through the function is a path of this
 * graph, with its active instructions the ones the lane runs (the states over-approximate: an
 * unknown bit takes both values). analysis/liveness.c runs per-lane (vector) liveness and reaching
 * definitions on it; problem.c finds the interference of per-lane values segment by segment, so
 * two values interfere only where one lane holds both. Too many states (more than `cap`): no
 * graph, and the if/else rule of simt.c applies instead. */
#include "analysis/liveness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXK 62          /* tracked registers: bits 0..61 of a state; bit 63 is EXEC */
#define EBIT (1ull << 63)

typedef struct {
  uint8_t kind;
  uint32_t reg;
  rs_lanes lanes;
} treg;

/* A lane's state: bit j of v is its bit of tracked register j unless bit j of u says unknown;
 * bit 63 of v is its EXEC bit (never unknown: the lane's path forks instead). */
typedef struct {
  uint64_t v, u;
} st;

typedef struct {
  const rs_func *f;
  treg t[MAXK];
  uint32_t k;
  uint64_t *lin, *lout; /* per block: tracked registers a mask instruction may still read */
  /* the segment table */
  rs_lseg *segs;
  uint32_t nsegs, capsegs;
  uint32_t *succ;
  uint32_t nsucc, capsucc;
  rs_word *act;
  uint32_t nact, capact; /* bits used / words allocated */
  st *skey;              /* per segment: its entry state */
  uint32_t capskey;
  uint32_t *hash, hcap;  /* open addressing: segment + 1, 0 = empty */
  uint32_t cap;
  /* worklist */
  uint32_t *work;
  uint32_t nwork, capwork;
} M;

static uint32_t maskop(const rs_inst *in) { return (in->flags & RS_I_MASKOP) >> RS_I_MASKOP_SHIFT; }

static bool reg_op(const rs_operand *op) { return op->kind == RS_OP_VREG || op->kind == RS_OP_PREG; }

static int find_t(const M *m, const rs_operand *op) {
  for (uint32_t i = 0; i < m->k; i++)
    if (m->t[i].kind == op->kind && m->t[i].reg == op->reg && m->t[i].lanes == op->lanes) return (int)i;
  return -1;
}

static bool overlaps(const treg *t, const rs_operand *op) {
  if (t->kind != op->kind) return false;
  if (op->kind == RS_OP_VREG) return t->reg == op->reg && (t->lanes & op->lanes);
  return rs_lanes_overlap(t->reg, t->lanes, op->reg, op->lanes);
}

/* Tracked registers a mask instruction reads (its explicit sources). */
static uint64_t mask_uses(const M *m, const rs_inst *in) {
  uint64_t u = 0;
  if (maskop(in) == RS_M_NONE || maskop(in) == RS_M_EXECNZ) return 0;
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &m->f->ops[in->first_op + o];
    int j = (op->flags & (RS_F_DEF | RS_F_IMPLICIT | RS_F_EXEC)) ? -1 : find_t(m, op);
    if (j >= 0) u |= 1ull << j;
  }
  return u;
}

/* Tracked registers the instruction writes whole (their old bit is dead before it). */
static uint64_t full_defs(const M *m, const rs_inst *in) {
  uint64_t d = 0;
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &m->f->ops[in->first_op + o];
    if (!(op->flags & RS_F_DEF) || (op->flags & RS_F_COND) || !reg_op(op)) continue;
    for (uint32_t j = 0; j < m->k; j++) {
      const treg *t = &m->t[j];
      if (t->kind != op->kind) continue;
      if (op->kind == RS_OP_VREG ? t->reg == op->reg && (op->lanes & t->lanes) == t->lanes
                                 : op->reg <= t->reg && 2 * (t->reg - op->reg) < 64 &&
                                       ((op->lanes >> (2 * (t->reg - op->reg))) & t->lanes) == t->lanes)
        d |= 1ull << j;
    }
  }
  return d;
}

static void mask_liveness(M *m) {
  const rs_func *f = m->f;
  m->lin = rs_xcalloc(f->nblocks + 1, sizeof *m->lin);
  m->lout = rs_xcalloc(f->nblocks + 1, sizeof *m->lout);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t b = f->nblocks; b-- > 0;) {
      const rs_block *blk = &f->blocks[b];
      uint64_t live = 0;
      for (uint32_t s = 0; s < blk->nsuccs; s++) live |= m->lin[blk->succs[s]];
      m->lout[b] = live;
      for (uint32_t k = blk->ninsts; k-- > 0;) {
        const rs_inst *in = &f->insts[blk->first_inst + k];
        live = (live & ~full_defs(m, in)) | mask_uses(m, in);
      }
      if (live != m->lin[b]) m->lin[b] = live, changed = true;
    }
  }
}

static uint64_t hkey(uint32_t b, uint32_t first, st s) {
  uint64_t h = s.v * 0x9E3779B97F4A7C15ull ^ s.u * 0xD6E8FEB86659FD93ull ^ ((uint64_t)b << 32 | first) * 0xC2B2AE3D27D4EB4Full;
  return h ^ (h >> 29);
}

/* The segment (block b from instruction first, entry state s), created (and queued) if new;
 * UINT32_MAX past the cap. */
static uint32_t seg_of(M *m, uint32_t b, uint32_t first, st s) {
  if (m->nsegs * 2 + 2 > m->hcap) { /* rehash */
    uint32_t nc = m->hcap ? m->hcap * 2 : 1024;
    free(m->hash);
    m->hash = rs_xcalloc(nc, sizeof *m->hash);
    m->hcap = nc;
    for (uint32_t g = 0; g < m->nsegs; g++) {
      uint32_t h = (uint32_t)(hkey(m->segs[g].block, m->segs[g].first, m->skey[g]) & (nc - 1));
      while (m->hash[h]) h = (h + 1) & (nc - 1);
      m->hash[h] = g + 1;
    }
  }
  uint32_t h = (uint32_t)(hkey(b, first, s) & (m->hcap - 1));
  for (; m->hash[h]; h = (h + 1) & (m->hcap - 1)) {
    uint32_t g = m->hash[h] - 1;
    if (m->segs[g].block == b && m->segs[g].first == first && m->skey[g].v == s.v && m->skey[g].u == s.u) return g;
  }
  if (m->nsegs >= m->cap) return UINT32_MAX;
  uint32_t g = m->nsegs;
  rs_lseg sg = {b, first, first, 0, 0, 0};
  RS_PUSH(m->segs, m->nsegs, m->capsegs, sg);
  rs_grow((void **)&m->skey, sizeof *m->skey, &m->capskey, m->nsegs);
  m->skey[g] = s;
  m->hash[h] = g + 1;
  RS_PUSH(m->work, m->nwork, m->capwork, g);
  return g;
}

enum { T0 = 0, T1 = 1, TU = 2 }; /* a lane's bit: 0, 1, unknown */

/* Dead tracked bits (not in live) are 0: states that differ only there are one. */
static st canon(st s, uint64_t live) {
  s.v &= live | EBIT;
  s.u &= live;
  return s;
}

/* The bit an operand holds in state s: EXEC, a tracked register; -1 for anything else. */
static int get(const M *m, st s, const rs_operand *op, int *j) {
  *j = -1;
  if (!op) return -1;
  if (op->flags & RS_F_EXEC) return (s.v & EBIT) ? T1 : T0;
  if (!reg_op(op) || (*j = find_t(m, op)) < 0) return -1;
  return (s.u >> *j & 1) ? TU : (int)(s.v >> *j & 1);
}

static void put(st *s, int j, int x) {
  if (j < 0) return;
  uint64_t b = 1ull << j;
  s->u = x == TU ? s->u | b : s->u & ~b;
  s->v = x == T1 ? s->v | b : s->v & ~b;
}

static void put_e(st *s, bool e) { s->v = e ? s->v | EBIT : s->v & ~EBIT; }

static int f2(uint32_t mo, int a, int b) {
  switch (mo) {
  case RS_M_MOV: return a;
  case RS_M_NOT: return !a;
  case RS_M_AND: case RS_M_AND_SAVEEXEC: return a && b;
  case RS_M_OR: case RS_M_OR_SAVEEXEC: return a || b;
  case RS_M_XOR: return a != b;
  case RS_M_ANDN2: return a && !b;
  case RS_M_ORN2: return a || !b;
  case RS_M_NAND: return !(a && b);
  case RS_M_NOR: return !(a || b);
  case RS_M_XNOR: return a == b;
  default: return 0;
  }
}

/* op applied to 3-valued a, b; with want >= 0, ra and rb get what a and b must be for the result
 * to be want (TU where either value fits). */
static int eval(uint32_t mo, int a, int b, int want, int *ra, int *rb) {
  bool seen[2] = {false, false};
  int ca = -1, cb = -1;
  if (b < 0) b = TU; /* one source: b is not read */
  for (int x = 0; x < 2; x++)
    for (int y = 0; y < 2; y++) {
      if ((a != TU && a != x) || (b != TU && b != y)) continue;
      int r = f2(mo, x, y);
      seen[r] = true;
      if (want >= 0 && r == want) {
        ca = ca < 0 ? x : ca == x ? x : TU;
        cb = cb < 0 ? y : cb == y ? y : TU;
      }
    }
  if (ra) *ra = ca < 0 ? a : ca;
  if (rb) *rb = cb < 0 ? b : cb;
  return seen[0] && seen[1] ? TU : seen[1] ? T1 : T0;
}

/* One instruction in state s: the states after it into out (1, or 2 where EXEC becomes a value
 * the lane's bits do not decide: the lane's path forks). */
static int step(const M *m, const rs_inst *in, st s, st out[2]) {
  const rs_func *f = m->f;
  uint32_t mo = maskop(in);
  const rs_operand *d = NULL, *src[2] = {NULL, NULL};
  bool eunk = false;
  if (mo != RS_M_NONE && mo != RS_M_EXECNZ) {
    unsigned ns = 0;
    for (uint32_t o = 0; o < in->nops; o++) {
      const rs_operand *op = &f->ops[in->first_op + o];
      if (mo == RS_M_VCMP) { /* its one def, explicit (e64) or implicit $vcc (e32) */
        if ((op->flags & RS_F_DEF) && !d) d = op;
        continue;
      }
      if (op->flags & RS_F_IMPLICIT) continue;
      if (op->flags & RS_F_DEF) d = op;
      else if (ns < 2) src[ns++] = op;
    }
  }
  int ja = -1, jb = -1, jd = -1;
  int a = get(m, s, src[0], &ja), b = get(m, s, src[1], &jb);
  bool e = (s.v & EBIT) != 0;
  st t = s;
  int n = 1;
  if (d && mo == RS_M_VCMP) {
    get(m, s, d, &jd);
    put(&t, jd, e ? TU : T0); /* a compare writes 0 to an inactive lane's bit */
  } else if (d && (mo == RS_M_ZERO || mo == RS_M_ONES)) {
    if (d->flags & RS_F_EXEC) put_e(&t, mo == RS_M_ONES);
    else get(m, s, d, &jd), put(&t, jd, mo == RS_M_ONES ? T1 : T0);
  } else if (d && mo != RS_M_NONE && mo != RS_M_EXECNZ && a >= 0 && (b >= 0 || !src[1])) {
    bool save = mo == RS_M_AND_SAVEEXEC || mo == RS_M_OR_SAVEEXEC;
    int x = save ? (e ? T1 : T0) : a, y = save ? a : b;
    int jx = save ? -1 : ja, jy = save ? ja : jb;
    if (jx >= 0 && jx == jy) jy = -1; /* the same register twice: refine it once */
    int r = eval(mo, x, y, -1, NULL, NULL);
    bool to_exec = save || (d->flags & RS_F_EXEC);
    if (save) get(m, s, d, &jd), put(&t, jd, e ? T1 : T0);
    if (!to_exec) {
      get(m, s, d, &jd);
      put(&t, jd, r);
    } else if (r != TU) {
      put_e(&t, r == T1);
    } else { /* fork: each EXEC value, with the sources it implies */
      out[1] = t;
      for (int k = 0; k < 2; k++) {
        st *z = k ? &out[1] : &t;
        int rx, ry;
        eval(mo, x, y, k, &rx, &ry);
        put(z, jx, rx);
        put(z, jy, ry);
        put_e(z, k == 1);
      }
      n = 2;
    }
  } else {
    d = NULL;
  }
  /* every other def of a tracked register or of EXEC: unknown */
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if (!(op->flags & RS_F_DEF) || op == d || !reg_op(op)) continue;
    if (op->flags & RS_F_EXEC) {
      /* SI_IF's save `%s = COPY $exec, implicit-def $exec` leaves the lanes alone (mir/exec.c) */
      bool saved = d && (mo == RS_M_AND_SAVEEXEC || mo == RS_M_OR_SAVEEXEC); /* its EXEC write, modeled */
      if (!((in->flags & RS_I_COPY) && (op->flags & RS_F_IMPLICIT)) && !saved &&
          !(d && (d->flags & RS_F_EXEC) && op->reg == d->reg && op->lanes == d->lanes))
        eunk = true;
      continue;
    }
    for (uint32_t j = 0; j < m->k; j++)
      if (overlaps(&m->t[j], op) && (int)j != jd)
        for (int k = 0; k < n; k++) put(k ? &out[1] : &t, (int)j, TU);
  }
  if (in->flags & RS_I_REGMASK)
    for (int k = 0; k < n; k++) (k ? &out[1] : &t)->u |= m->k < 64 ? (1ull << m->k) - 1 : ~0ull;
  if ((in->flags & RS_I_EXEC_OTHER) && !d) eunk = true;
  out[0] = t;
  if (eunk && n == 1) {
    out[1] = t;
    put_e(&out[0], false);
    put_e(&out[1], true);
    n = 2;
  }
  return n;
}

/* Block operand of branch instruction `in`, -1 if none. */
static int32_t target_of(const rs_func *f, const rs_inst *in) {
  for (uint32_t o = 0; o < in->nops; o++)
    if (f->ops[in->first_op + o].kind == RS_OP_BLOCK) return (int32_t)f->ops[in->first_op + o].reg;
  return -1;
}

/* Whether block b reaches c other than by its branch instruction `except` (another branch to c,
 * or falling through into c). */
static bool reached_otherwise(const rs_func *f, uint32_t b, uint32_t except, uint32_t c) {
  const rs_block *blk = &f->blocks[b];
  for (uint32_t k = 0; k < blk->ninsts; k++) {
    const rs_inst *in = &f->insts[blk->first_inst + k];
    if (blk->first_inst + k != except && (in->flags & RS_I_BRANCH) && target_of(f, in) == (int32_t)c) return true;
  }
  bool barrier = blk->ninsts && (f->insts[blk->first_inst + blk->ninsts - 1].flags & RS_I_BARRIER);
  return !barrier && c == b + 1;
}

/* Runs segment g from its entry state; false past the cap. */
static bool run_seg(M *m, uint32_t g) {
  const rs_func *f = m->f;
  uint32_t b = m->segs[g].block, first = m->segs[g].first;
  const rs_block *blk = &f->blocks[b];
  /* tracked bits read later, after each instruction of the block */
  uint64_t *la = rs_xmalloc(sizeof *la * (blk->ninsts + 1)), live = m->lout[b];
  for (uint32_t k = blk->ninsts; k-- > 0;) {
    la[k] = live;
    const rs_inst *in = &f->insts[blk->first_inst + k];
    live = (live & ~full_defs(m, in)) | mask_uses(m, in);
  }
  st s = m->skey[g], next[2];
  uint32_t act = m->nact;
  rs_grow((void **)&m->act, sizeof *m->act, &m->capact, RS_WORDS(act + blk->ninsts + 1) + 1);
  int32_t only = -1;                          /* EXECNZ taken by an active lane: its target only */
  uint32_t nskip = 0, skip[4] = {0, 0, 0, 0}; /* EXECZ instructions an active lane did not take */
  uint32_t k = first, end = blk->ninsts;
  int nnext = 1;
  for (; k < blk->ninsts; k++) {
    const rs_inst *in = &f->insts[blk->first_inst + k];
    bool e = (s.v & EBIT) != 0;
    if (e) rs_bs_set(m->act, act + (k - first));
    else rs_bs_clr(m->act, act + (k - first));
    if (e && (in->flags & RS_I_EXEC_SKIP) && nskip < 4) skip[nskip++] = blk->first_inst + k;
    if (e && maskop(in) == RS_M_EXECNZ && only < 0) only = target_of(f, in);
    nnext = step(m, in, s, next);
    next[0] = canon(next[0], la[k]);
    next[1] = canon(next[1], la[k]);
    if (nnext > 1) { /* fork: the rest of the block as new segments */
      end = k + 1;
      break;
    }
    s = next[0];
  }
  m->nact = act + (end - first);
  m->segs[g].end = end;
  m->segs[g].act = act;
  m->segs[g].succ = m->nsucc;
  bool ok = true;
  if (end < blk->ninsts || nnext > 1) {
    for (int i = 0; i < nnext && ok; i++) {
      uint32_t x = seg_of(m, b, end, next[i]);
      if (x == UINT32_MAX) ok = false;
      else RS_PUSH(m->succ, m->nsucc, m->capsucc, x);
    }
  } else {
    for (uint32_t i = 0; i < blk->nsuccs && ok; i++) {
      uint32_t c = blk->succs[i];
      bool skipped = false;
      for (uint32_t j = 0; j < nskip; j++)
        if (target_of(f, &f->insts[skip[j]]) == (int32_t)c && !reached_otherwise(f, b, skip[j], c)) skipped = true;
      if (skipped || (only >= 0 && (int32_t)c != only)) continue;
      uint32_t x = seg_of(m, c, 0, canon(s, m->lin[c]));
      if (x == UINT32_MAX) ok = false;
      else RS_PUSH(m->succ, m->nsucc, m->capsucc, x);
    }
  }
  m->segs[g].nsucc = m->nsucc - m->segs[g].succ;
  free(la);
  return ok;
}

static void free_m(M *m) {
  free(m->lin);
  free(m->lout);
  free(m->segs);
  free(m->succ);
  free(m->act);
  free(m->skey);
  free(m->hash);
  free(m->work);
}

uint32_t rs_lanemask_build(rs_live *l, uint32_t cap) {
  const rs_func *f = l->f;
  M m = {0};
  m.f = f;
  m.cap = cap;
  if (!f->nblocks) return 0;
  for (uint32_t i = 0; i < f->ninsts; i++) {
    const rs_inst *in = &f->insts[i];
    if (maskop(in) == RS_M_NONE || maskop(in) == RS_M_EXECNZ) continue;
    for (uint32_t o = 0; o < in->nops; o++) {
      const rs_operand *op = &f->ops[in->first_op + o];
      bool vcmp_def = maskop(in) == RS_M_VCMP && (op->flags & RS_F_DEF);
      if (!reg_op(op) || (op->flags & RS_F_EXEC) || ((op->flags & RS_F_IMPLICIT) && !vcmp_def) ||
          (maskop(in) == RS_M_VCMP && !vcmp_def) || find_t(&m, op) >= 0)
        continue;
      if (m.k == MAXK) { if (getenv("RS_LM_DEBUG")) fprintf(stderr, "lanemask: K\n"); return 0; }
      m.t[m.k++] = (treg){op->kind, op->reg, op->lanes};
    }
  }
  mask_liveness(&m);
  /* a lane enters active or not; tracked bits read before any def are unknown */
  bool ok = true;
  for (int e = 0; e < 2 && ok; e++) ok = seg_of(&m, 0, 0, (st){e ? EBIT : 0, m.lin[0]}) != UINT32_MAX;
  /* depth first: segments are created (and numbered) as the lanes reach them */
  while (ok && m.nwork) ok = run_seg(&m, m.work[--m.nwork]);
  if (getenv("RS_LM_DUMP")) {
    for (uint32_t j = 0; j < m.k; j++) fprintf(stderr, "t%u kind %u reg %u lanes %llx\n", j, m.t[j].kind, m.t[j].reg, (unsigned long long)m.t[j].lanes);
    uint32_t want = (uint32_t)atoi(getenv("RS_LM_DUMP"));
    for (uint32_t g = 0; g < m.nsegs; g++)
      if (m.segs[g].block == want && m.segs[g].first == 0) fprintf(stderr, "state %016llx/%llx lin %llx\n", (unsigned long long)m.skey[g].v, (unsigned long long)m.skey[g].u, (unsigned long long)m.lin[want]);
  }
  if (!ok) {
    if (getenv("RS_LM_DEBUG")) fprintf(stderr, "lanemask: k %u segs %u\n", m.k, m.nsegs);
    free_m(&m);
    return 0;
  }
  l->segs = m.segs;
  l->nsegs = m.nsegs;
  l->segsucc = m.succ;
  l->segact = m.act;
  m.segs = NULL;
  m.succ = NULL;
  m.act = NULL;
  free_m(&m);
  return l->nsegs;
}
