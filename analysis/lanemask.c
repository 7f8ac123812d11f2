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
 * says; a bit is 0, 1 or a symbol (an unknown, e.g. a compare's result or any other def of a
 * tracked register), and where EXEC takes a symbol (or an unmodeled def writes EXEC) the lane's
 * path forks into both values, substituted in the registers the block writes (see subst). Bits
 * no mask instruction reads later are 0 and symbols are renumbered, so states merge. Branches: S_CBRANCH_EXECZ is never taken by an active lane,
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
 * two values interfere only where one lane holds both. Built only where EXEC is merged into a
 * mask a later mask instruction reads (merges_exec); too many states (more than `cap`): no graph,
 * and the if/else rule of simt.c applies instead. */
#include "analysis/liveness.h"
#include <stdlib.h>
#include <string.h>

#define PERBLOCK 32 /* segments of one block (ggml's flash-attention kernels: at most 15) */
#define MAXK 126 /* tracked registers (literals 2 + 2k + 1 fit a byte) */

typedef struct {
  uint8_t kind;
  uint32_t reg;
  rs_lanes lanes;
} treg;

/* A lane's state: its EXEC bit (never unknown: the lane's path forks instead) and its bit of
 * each tracked register as a literal: 0, 1, or a symbol x_k (2 + 2k) or its negation (3 + 2k),
 * an unknown bit. Registers holding the same symbol hold the same bit: an if's mask and its
 * else mask (`S_XOR %m, %saved`) stay exact complements, and the fork where EXEC takes x_k
 * substitutes its value everywhere. */
typedef struct {
  uint8_t e;
  uint8_t r[MAXK];
} st;

/* A set of tracked registers. */
typedef struct {
  uint64_t w[2];
} km;

static bool km_has(km a, uint32_t j) { return a.w[j >> 6] >> (j & 63) & 1; }
static void km_set(km *a, uint32_t j) { a->w[j >> 6] |= 1ull << (j & 63); }
static km km_or(km a, km b) { return (km){{a.w[0] | b.w[0], a.w[1] | b.w[1]}}; }
static km km_andnot(km a, km b) { return (km){{a.w[0] & ~b.w[0], a.w[1] & ~b.w[1]}}; }
static bool km_eq(km a, km b) { return a.w[0] == b.w[0] && a.w[1] == b.w[1]; }

typedef struct {
  const rs_func *f;
  treg t[MAXK];
  uint32_t k;
  km *lin, *lout; /* per block: tracked registers a mask instruction may still read */
  km *la;         /* per instruction: the same after it */
  km *defb;       /* per block: tracked registers it writes */
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
  uint32_t *perblk; /* segments per block: past PERBLOCK in one block the states are not converging */
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
static km mask_uses(const M *m, const rs_inst *in) {
  km u = {{0, 0}};
  if (maskop(in) == RS_M_NONE || maskop(in) == RS_M_EXECNZ) return u;
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &m->f->ops[in->first_op + o];
    int j = (op->flags & (RS_F_DEF | RS_F_IMPLICIT | RS_F_EXEC)) ? -1 : find_t(m, op);
    if (j >= 0) km_set(&u, (uint32_t)j);
  }
  return u;
}

/* Tracked registers the instruction writes whole (their old bit is dead before it). */
static km full_defs(const M *m, const rs_inst *in) {
  km d = {{0, 0}};
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &m->f->ops[in->first_op + o];
    if (!(op->flags & RS_F_DEF) || (op->flags & RS_F_COND) || !reg_op(op)) continue;
    for (uint32_t j = 0; j < m->k; j++) {
      const treg *t = &m->t[j];
      if (t->kind != op->kind) continue;
      if (op->kind == RS_OP_VREG ? t->reg == op->reg && (op->lanes & t->lanes) == t->lanes
                                 : op->reg <= t->reg && 2 * (t->reg - op->reg) < 64 &&
                                       ((op->lanes >> (2 * (t->reg - op->reg))) & t->lanes) == t->lanes)
        km_set(&d, j);
    }
  }
  return d;
}

/* Which tracked registers a mask instruction may still read: per block, then after each
 * instruction (the block's uses and full defs computed once). */
static void mask_liveness(M *m) {
  const rs_func *f = m->f;
  km *use = rs_xcalloc(f->ninsts + 1, sizeof *use), *def = rs_xcalloc(f->ninsts + 1, sizeof *def);
  for (uint32_t i = 0; i < f->ninsts; i++) use[i] = mask_uses(m, &f->insts[i]), def[i] = full_defs(m, &f->insts[i]);
  m->lin = rs_xcalloc(f->nblocks + 1, sizeof *m->lin);
  m->lout = rs_xcalloc(f->nblocks + 1, sizeof *m->lout);
  m->la = rs_xcalloc(f->ninsts + 1, sizeof *m->la);
  m->defb = rs_xcalloc(f->nblocks + 1, sizeof *m->defb);
  for (uint32_t b = 0; b < f->nblocks; b++)
    for (uint32_t k = 0; k < f->blocks[b].ninsts; k++) {
      const rs_inst *in = &f->insts[f->blocks[b].first_inst + k];
      for (uint32_t o = 0; o < in->nops; o++) {
        const rs_operand *op = &f->ops[in->first_op + o];
        if (!(op->flags & RS_F_DEF) || !reg_op(op)) continue;
        for (uint32_t j = 0; j < m->k; j++)
          if (overlaps(&m->t[j], op)) km_set(&m->defb[b], j);
      }
    }
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t b = f->nblocks; b-- > 0;) {
      const rs_block *blk = &f->blocks[b];
      km live = {{0, 0}};
      for (uint32_t s = 0; s < blk->nsuccs; s++) live = km_or(live, m->lin[blk->succs[s]]);
      m->lout[b] = live;
      for (uint32_t k = blk->ninsts; k-- > 0;) {
        uint32_t i = blk->first_inst + k;
        m->la[i] = live;
        live = km_or(km_andnot(live, def[i]), use[i]);
      }
      if (!km_eq(live, m->lin[b])) m->lin[b] = live, changed = true;
    }
  }
  free(use);
  free(def);
}

static uint64_t hkey(uint32_t b, uint32_t first, const st *s, uint32_t k) {
  uint64_t h = b * 0x9E3779B97F4A7C15ull ^ first * 0xC2B2AE3D27D4EB4Full ^ s->e;
  for (uint32_t j = 0; j < k; j++) h = (h ^ s->r[j]) * 0x100000001B3ull;
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  return h ^ (h >> 29);
}

static bool same(const st *a, const st *b, uint32_t k) { return a->e == b->e && !memcmp(a->r, b->r, k); }

/* The segment (block b from instruction first, entry state s), created (and queued) if new;
 * UINT32_MAX past the cap. */
static uint32_t seg_of(M *m, uint32_t b, uint32_t first, const st *s) {
  if (m->nsegs * 2 + 2 > m->hcap) { /* rehash */
    uint32_t nc = m->hcap ? m->hcap * 2 : 1024;
    free(m->hash);
    m->hash = rs_xcalloc(nc, sizeof *m->hash);
    m->hcap = nc;
    for (uint32_t g = 0; g < m->nsegs; g++) {
      uint32_t h = (uint32_t)(hkey(m->segs[g].block, m->segs[g].first, &m->skey[g], m->k) & (nc - 1));
      while (m->hash[h]) h = (h + 1) & (nc - 1);
      m->hash[h] = g + 1;
    }
  }
  uint32_t h = (uint32_t)(hkey(b, first, s, m->k) & (m->hcap - 1));
  for (; m->hash[h]; h = (h + 1) & (m->hcap - 1)) {
    uint32_t g = m->hash[h] - 1;
    if (m->segs[g].block == b && m->segs[g].first == first && same(&m->skey[g], s, m->k)) return g;
  }
  if (m->nsegs >= m->cap || ++m->perblk[b] > PERBLOCK) return UINT32_MAX;
  uint32_t g = m->nsegs;
  rs_lseg sg = {b, first, first, 0, 0, 0};
  RS_PUSH(m->segs, m->nsegs, m->capsegs, sg);
  rs_grow((void **)&m->skey, sizeof *m->skey, &m->capskey, m->nsegs);
  m->skey[g] = *s;
  m->hash[h] = g + 1;
  RS_PUSH(m->work, m->nwork, m->capwork, g);
  return g;
}

static bool is_sym(uint8_t l) { return l >= 2; }
static uint8_t sym_of(uint8_t l) { return (uint8_t)((l - 2) >> 1); }

/* Dead registers (not in live) hold 0 and symbols are numbered in order of first appearance:
 * states that differ only there are one. */
static void canon(const M *m, st *s, km live) {
  uint8_t map[128];
  memset(map, 0xFF, sizeof map);
  uint8_t next = 0;
  for (uint32_t j = 0; j < m->k; j++) {
    if (!km_has(live, j)) {
      s->r[j] = 0;
      continue;
    }
    if (!is_sym(s->r[j])) continue;
    uint8_t x = sym_of(s->r[j]);
    if (map[x] == 0xFF) map[x] = next++;
    s->r[j] = (uint8_t)(2 + 2 * map[x] + (s->r[j] & 1));
  }
}

/* A symbol no register of s holds. */
static uint8_t fresh(const M *m, const st *s) {
  uint64_t used[2] = {0, 0};
  for (uint32_t j = 0; j < m->k; j++)
    if (is_sym(s->r[j])) used[sym_of(s->r[j]) >> 6] |= 1ull << (sym_of(s->r[j]) & 63);
  uint8_t x = 0;
  while (used[x >> 6] >> (x & 63) & 1) x++;
  return (uint8_t)(2 + 2 * x);
}

/* The registers of `in` (those the block writes) holding symbol x (or its negation) get its value
 * when x is v. A register set before the block keeps the symbol: it then stands for any value,
 * which is sound and keeps loop-invariant masks (a condition computed once before a loop and
 * tested in it) from multiplying the states by every combination of their bits. */
static void subst(const M *m, st *s, uint8_t x, bool v, km in) {
  for (uint32_t j = 0; j < m->k; j++)
    if (km_has(in, j) && is_sym(s->r[j]) && sym_of(s->r[j]) == x) s->r[j] = (uint8_t)(v ^ (s->r[j] & 1));
}

/* The literal an operand holds: EXEC's bit, a tracked register's literal; j gets the register. */
static uint8_t get(const M *m, const st *s, const rs_operand *op, int *j) {
  *j = -1;
  if (op->flags & RS_F_EXEC) return s->e;
  if (reg_op(op) && (*j = find_t(m, op)) >= 0) return s->r[*j];
  return fresh(m, s);
}

static uint8_t l_and(const M *m, const st *s, uint8_t a, uint8_t b) {
  if (!a || !b || a == (b ^ 1)) return 0;
  if (a == 1 || a == b) return b;
  if (b == 1) return a;
  return fresh(m, s);
}

static uint8_t l_or(const M *m, const st *s, uint8_t a, uint8_t b) { return l_and(m, s, a ^ 1, b ^ 1) ^ 1; }

static uint8_t l_xor(const M *m, const st *s, uint8_t a, uint8_t b) {
  if (a < 2) return a ? b ^ 1 : b;
  if (b < 2) return b ? a ^ 1 : a;
  if (a == b || a == (b ^ 1)) return a != b;
  return fresh(m, s);
}

static uint8_t apply(const M *m, const st *s, uint32_t mo, uint8_t a, uint8_t b) {
  switch (mo) {
  case RS_M_MOV: return a;
  case RS_M_NOT: return a ^ 1;
  case RS_M_AND: case RS_M_AND_SAVEEXEC: return l_and(m, s, a, b);
  case RS_M_OR: case RS_M_OR_SAVEEXEC: return l_or(m, s, a, b);
  case RS_M_XOR: return l_xor(m, s, a, b);
  case RS_M_ANDN2: return l_and(m, s, a, b ^ 1);
  case RS_M_ORN2: return l_or(m, s, a, b ^ 1);
  case RS_M_NAND: return l_and(m, s, a, b) ^ 1;
  case RS_M_NOR: return l_or(m, s, a, b) ^ 1;
  case RS_M_XNOR: return l_xor(m, s, a, b) ^ 1;
  default: return fresh(m, s);
  }
}

/* One instruction in state s: the states after it into out (1, or 2 where EXEC takes an unknown
 * bit: the lane's path forks, each side with the bit's value substituted everywhere). */
static int step(const M *m, const rs_inst *in, const st *s, st out[2], km here) {
  const rs_func *f = m->f;
  uint32_t mo = maskop(in);
  const rs_operand *d = NULL, *src[2] = {NULL, NULL};
  unsigned ns = 0;
  if (mo != RS_M_NONE && mo != RS_M_EXECNZ)
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
  st t = *s;
  int n = 1, jd = -1, ja = -1, jb = -1;
  bool eunk = false, save = mo == RS_M_AND_SAVEEXEC || mo == RS_M_OR_SAVEEXEC;
  uint8_t r = 0;
  bool to_exec = false;
  if (d) {
    uint8_t a = src[0] ? get(m, s, src[0], &ja) : 0, b = src[1] ? get(m, s, src[1], &jb) : 0;
    if (mo == RS_M_VCMP) r = s->e ? fresh(m, s) : 0; /* a compare writes 0 to an inactive lane's bit */
    else if (mo == RS_M_ZERO || mo == RS_M_ONES) r = mo == RS_M_ONES;
    else if (save) r = s->e;
    else r = apply(m, s, mo, a, b);
    to_exec = (d->flags & RS_F_EXEC) != 0;
    if (!to_exec) {
      jd = find_t(m, d);
      if (jd >= 0) t.r[jd] = r;
    }
    if (save) { /* the old EXEC into d, then EXEC op= the source */
      r = apply(m, &t, mo, s->e, a);
      to_exec = true;
    }
    if (to_exec) {
      if (!is_sym(r)) {
        t.e = r;
      } else { /* fork */
        out[1] = t;
        subst(m, &t, sym_of(r), (r & 1) != 0, here);
        t.e = 0;
        subst(m, &out[1], sym_of(r), !(r & 1), here);
        out[1].e = 1;
        n = 2;
      }
    }
  }
  /* every other def of a tracked register or of EXEC: unknown */
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if (!(op->flags & RS_F_DEF) || op == d || !reg_op(op)) continue;
    if (op->flags & RS_F_EXEC) {
      /* SI_IF's save `%s = COPY $exec, implicit-def $exec` leaves the lanes alone (mir/exec.c);
       * a SAVEEXEC's EXEC write is modeled above */
      if (!((in->flags & RS_I_COPY) && (op->flags & RS_F_IMPLICIT)) && !(d && save) &&
          !(d && to_exec && op->reg == d->reg && op->lanes == d->lanes))
        eunk = true;
      continue;
    }
    for (uint32_t j = 0; j < m->k; j++)
      if (overlaps(&m->t[j], op) && (int)j != jd)
        for (int k = 0; k < n; k++) {
          st *z = k ? &out[1] : &t;
          z->r[j] = fresh(m, z);
        }
  }
  if (in->flags & RS_I_REGMASK)
    for (int k = 0; k < n; k++)
      for (uint32_t j = 0; j < m->k; j++) {
        st *z = k ? &out[1] : &t;
        z->r[j] = fresh(m, z);
      }
  if ((in->flags & RS_I_EXEC_OTHER) && !d) eunk = true;
  out[0] = t;
  if (eunk && n == 1) {
    out[1] = t;
    out[0].e = 0;
    out[1].e = 1;
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
  const km *la = m->la + blk->first_inst; /* tracked bits read later, after each instruction */
  st s = m->skey[g], next[2];
  uint32_t act = m->nact;
  rs_grow((void **)&m->act, sizeof *m->act, &m->capact, RS_WORDS(act + blk->ninsts + 1) + 1);
  int32_t only = -1;                          /* EXECNZ taken by an active lane: its target only */
  uint32_t nskip = 0, skip[4] = {0, 0, 0, 0}; /* EXECZ instructions an active lane did not take */
  uint32_t k = first, end = blk->ninsts;
  int nnext = 1;
  for (; k < blk->ninsts; k++) {
    const rs_inst *in = &f->insts[blk->first_inst + k];
    bool e = s.e != 0;
    if (e) rs_bs_set(m->act, act + (k - first));
    else rs_bs_clr(m->act, act + (k - first));
    if (e && (in->flags & RS_I_EXEC_SKIP) && nskip < 4) skip[nskip++] = blk->first_inst + k;
    if (e && maskop(in) == RS_M_EXECNZ && only < 0) only = target_of(f, in);
    nnext = step(m, in, &s, next, m->defb[b]);
    if (nnext > 1) { /* fork: the rest of the block as new segments */
      canon(m, &next[0], la[k]);
      canon(m, &next[1], la[k]);
      end = k + 1;
      break;
    }
    s = next[0];
    if (maskop(in) != RS_M_NONE) canon(m, &s, la[k]); /* keeps the symbols few */
  }
  m->nact = act + (end - first);
  m->segs[g].end = end;
  m->segs[g].act = act;
  m->segs[g].succ = m->nsucc;
  bool ok = true;
  if (end < blk->ninsts || nnext > 1) {
    for (int i = 0; i < nnext && ok; i++) {
      uint32_t x = seg_of(m, b, end, &next[i]);
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
      st z = s;
      canon(m, &z, m->lin[c]);
      uint32_t x = seg_of(m, c, 0, &z);
      if (x == UINT32_MAX) ok = false;
      else RS_PUSH(m->succ, m->nsucc, m->capsucc, x);
    }
  }
  m->segs[g].nsucc = m->nsucc - m->segs[g].succ;
  return ok;
}

static void free_m(M *m) {
  free(m->la);
  free(m->defb);
  free(m->lin);
  free(m->lout);
  free(m->segs);
  free(m->succ);
  free(m->act);
  free(m->skey);
  free(m->hash);
  free(m->work);
  free(m->perblk);
}

/* Whether the function merges EXEC into a mask that a later mask instruction reads (an i1 phi
 * lowered by SILowerI1Copies: `%m = S_ORN2_B64 %m, $exec`, `S_AND_B64 $exec, %m`): only then do
 * which lanes reach a block depend on a mask's value beyond the if/else and loop forms, which
 * simt.c's rule covers at a fraction of the cost (the lanes' states of rocPRIM's scans: up to
 * 20,000 segments, 25x the Problem's time). A compare or a save (`COPY $exec`) is not a merge,
 * nor `$vcc = S_AND_B64 $exec, %c` read only by a branch. */
static bool merges_exec(const M *m) {
  const rs_func *f = m->f;
  for (uint32_t i = 0; i < f->ninsts; i++) {
    const rs_inst *in = &f->insts[i];
    uint32_t mo = maskop(in);
    if (mo < RS_M_AND || mo > RS_M_XNOR) continue;
    const rs_operand *d = NULL;
    bool reads_exec = false;
    for (uint32_t o = 0; o < in->nops; o++) {
      const rs_operand *op = &f->ops[in->first_op + o];
      if (op->flags & RS_F_IMPLICIT) continue;
      if (op->flags & RS_F_DEF) d = op;
      else reads_exec |= (op->flags & RS_F_EXEC) != 0;
    }
    int j = d && !(d->flags & RS_F_EXEC) ? find_t(m, d) : -1;
    if (reads_exec && j >= 0 && km_has(m->la[i], (uint32_t)j)) return true;
  }
  return false;
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
      if (m.k == MAXK) return 0;
      m.t[m.k++] = (treg){op->kind, op->reg, op->lanes};
    }
  }
  m.perblk = rs_xcalloc(f->nblocks + 1, sizeof *m.perblk);
  mask_liveness(&m);
  if (!merges_exec(&m)) {
    free_m(&m);
    return 0;
  }
  /* a lane enters active or not; tracked bits read before any def are unknown */
  bool ok = true;
  for (int e = 0; e < 2 && ok; e++) {
    st z;
    memset(&z, 0, sizeof z);
    z.e = (uint8_t)e;
    for (uint32_t j = 0; j < m.k; j++) z.r[j] = (uint8_t)(2 + 2 * j);
    canon(&m, &z, m.lin[0]);
    ok = seg_of(&m, 0, 0, &z) != UINT32_MAX;
  }
  /* depth first: segments are created (and numbered) as the lanes reach them */
  while (ok && m.nwork) ok = run_seg(&m, m.work[--m.nwork]);
  if (!ok) {
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
