/* hazard.c - the one way keeping ptxas's scheduling bits can break a recolouring.
 *
 * Control bits (word 1 bits 41-57): stall 41-44, yield 45, write barrier 46-48, read barrier
 * 49-51 (7 = none), wait mask 52-57. A variable-latency instruction (loads, stores, MUFU, S2R,
 * shared and texture accesses ...) reads its sources or writes its destination some time after
 * it issues; ptxas arms a scoreboard for it and makes the first instruction that would overwrite
 * such a source (read barrier) or touch such a destination (write barrier) wait on it. Every
 * dependence between values is kept by a recolouring (same definitions reach every use), so
 * true dependences stay protected. What is new is a false one: a register the recolouring gives
 * to another value may be written, or read, while the old instruction is still in flight, by an
 * instruction that has no reason to wait. Liveness cannot see this (the value died at issue).
 *
 * Guard predicates and uniform operands are read when the instruction issues (calibrated on
 * ptxas's output: its own code overwrites them behind in-flight stores without waiting), so only
 * R registers count for a read barrier; a write barrier covers every destination.
 *
 * rs_sass_hazards walks forward from every instruction that arms a barrier, along the CFG, until
 * an instruction waits on that barrier (its wait mask, or a DEPBAR naming it; a read barrier also
 * ends at a wait on the same instruction's write barrier): on the way, an
 * instruction that writes a register the armed one reads (read barrier), or reads or writes one
 * it writes (write barrier), is a hazard. ptxas's own listings have none (test_sass_lower);
 * lowering refuses a recolouring that has any. The walk (rs_sass_sb_walk) is shared with
 * cubin/scoreboard.c, which turns the same (armed, unprotected) pairs into conflicts of the free
 * Problem, so that a recolouring with a hazard is not a valid colouring in the first place. */
#include "cubin/lower.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Units an operand names (values through their listing registers), into b; false if none. */
static bool units_of(const rs_func *f, const rs_operand *op, rs_word *b, uint32_t nunits) {
  rs_preg r; /* lanes are relative to the value's (or the operand's) first register */
  if (op->kind == RS_OP_VREG && f->truth) r = (rs_preg){f->truth[op->reg].unit, op->lanes};
  else if (op->kind == RS_OP_PREG) r = (rs_preg){op->reg, op->lanes};
  else return false;
  bool any = false;
  for (unsigned u = 0; u < 32; u++)
    if ((r.lanes >> (2 * u) & 3) && r.unit + u < nunits) {
      rs_bs_set(b, r.unit + u);
      any = true;
    }
  return any;
}

static bool overlaps(const rs_word *a, const rs_word *b, size_t words) {
  for (size_t i = 0; i < words; i++)
    if (a[i] & b[i]) return true;
  return false;
}

/* EXIT's implicit R1 read is a liveness device (sass/optable.c: spills keep the frame pointer
 * live to the end): the thread ends there and reads no register. ptxas's own code exits while
 * the LDC that loads R1 is in flight (cuda-samples FunctionPointers sm_90 SobelTex: `LDC R1,
 * c[0x0][0x28]` on scoreboard 0, `@P0 EXIT` at 0x40 before the wait; fptrexit.cu). A guard is
 * read at issue like any other and stays. */
bool rs_sass_sb_ignored(const rs_func *f, uint32_t k, const rs_operand *op) {
  if (!(op->flags & RS_F_IMPLICIT) || (op->flags & RS_F_DEF) || op->text_len) return false;
  const char *on = f->names.strs[f->insts[k].opcode];
  return strcspn(on, ".") == 4 && !strncmp(on, "EXIT", 4);
}

/* Registers instruction i reads (uses) and writes (defs); constants (RZ, PT) excluded. */
static void rw_sets(const rs_func *f, uint32_t i, rs_word *rd, rs_word *wr, size_t words, uint32_t nunits) {
  memset(rd, 0, words * sizeof *rd);
  memset(wr, 0, words * sizeof *wr);
  const rs_inst *in = &f->insts[i];
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if (!rs_sass_sb_ignored(f, i, op)) units_of(f, op, op->flags & RS_F_DEF ? wr : rd, nunits);
  }
  const rs_target *t = f->tgt;
  for (uint32_t fi = 0; fi < t->nfiles; fi++) { /* RZ, URZ, PT, UPT: read as constants, writes discarded */
    uint32_t last = t->files[fi].first + t->files[fi].count - 1;
    if (last < nunits && (!strcmp(t->files[fi].name, "r") || !strcmp(t->files[fi].name, "ur") ||
                          !strcmp(t->files[fi].name, "p") || !strcmp(t->files[fi].name, "up")))
      rs_bs_clr(rd, last), rs_bs_clr(wr, last);
  }
}

/* The pipe an opcode issues to, for the in-order rule: a later instruction of the same
 * variable-latency pipe cannot overtake an earlier one's operand reads (ptxas's own DFMA and
 * sm_75 HMMA.1688 chains, and global loads, overwrite registers an earlier one of the same pipe
 * still reads, without a wait).
 * Returns a small id, or -1 for none of them. */
static int pipe_of(const char *op) {
  static const char *const pipes[][17] = {
      {"DFMA", "DADD", "DMUL", NULL},
      {"HMMA", NULL},
      {"IMMA", NULL},
      /* texture fetches and surface loads, each opcode its own pipe (only same-opcode pairs
       * measured): ptxas 13 writes a later one's result over registers an earlier one still
       * reads, with no wait (texptx.cu GradA2_9 sm_80-90: TXD R40, R6, ... right after TXD R4,
       * R2, R4, R16 reads the triple R4:R6; textures.cu tex_sample sm_80: TEX.SCR.LL after
       * TEX.SCR.LL; surf.cu L2b16_9 sm_80: SULD R8, [R14] after SULD [R8] reads R8:R9) */
      {"TEX", NULL},
      {"TXD", NULL},
      {"SULD", NULL},
      /* memory: a later access's result lands after an earlier one read its address (conv2d
       * sm_90: LDG R21 right after an LDG reading R20:R21); shared accesses queue behind global
       * ones (MAGMA trsm sm_90: LDS R59 overwrites what STG.E [R34.64], R59 stores, and that STG
       * arms no read barrier at all); LDGSTS too (FlashAttention-2 hdim256 sm_90 at 168, a local
       * build: LDL.LU.64 R6 overwrites the address LDGSTS [R0+0x16000], desc[UR18][R6.64+0x180]
       * still reads, with no wait) */
      {"LDGSTS", "LDG", "LD", "LDL", "STG", "ST", "STL", "ATOMG", "ATOM", "RED", "REDG", "LDS", "STS", "LDSM", "ATOMS", "SHFL", NULL}};
  size_t n = strcspn(op, ".");
  for (int p = 0; p < (int)(sizeof pipes / sizeof *pipes); p++)
    for (int k = 0; pipes[p][k]; k++)
      if (strlen(pipes[p][k]) == n && !strncmp(op, pipes[p][k], n)) return p;
  return -1;
}

/* The pipe whose results land in issue order, for the write rule: a later shared-memory load
 * may write a register an earlier one still writes, without a wait (MAGMA trsm sm_90: LDS R47
 * issued while LDS.128 R44 is in flight, its R47 never read; R47 read after both are waited on,
 * so ptxas relies on the later write landing last). Returns a small id, or -1. */
static int wpipe_of(const char *op) {
  size_t n = strcspn(op, ".");
  if ((n == 3 && !strncmp(op, "LDS", 3)) || (n == 4 && !strncmp(op, "LDSM", 4))) return 0;
  return -1;
}

static const char *opname(const rs_func *f, uint32_t i) { return f->names.strs[f->insts[i].opcode]; }

/* The register unit of an operand (a value through its listing register); false if none. */
static bool unit_of(const rs_func *f, const rs_operand *op, uint32_t *unit) {
  if (op->kind == RS_OP_VREG && f->truth) *unit = f->truth[op->reg].unit;
  else if (op->kind == RS_OP_PREG) *unit = op->reg;
  else return false;
  return true;
}

/* Instruction i's guard: G_NONE (none, or @PT), G_NEVER (@!PT: never executes), else G_ON with
 * its predicate's unit and sense (neg: @!Pn). The guard is the operand printed after '@'. */
enum { G_NONE, G_NEVER, G_ON };
static int guard_of(const rs_func *f, uint32_t i, uint32_t *unit, bool *neg) {
  const rs_inst *in = &f->insts[i];
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if (!op->text_len || op->text_off < 1 || (op->flags & RS_F_DEF)) continue;
    const char *t = f->src + op->text_off;
    bool n = t[-1] == '!' && op->text_off >= 2 && t[-2] == '@';
    if (!n && t[-1] != '@') continue;
    if (op->text_len == 2 && t[0] == 'P' && t[1] == 'T') return n ? G_NEVER : G_NONE;
    if (op->text_len == 3 && !strncmp(t, "UPT", 3)) return n ? G_NEVER : G_NONE;
    if (!unit_of(f, op, unit)) return G_NONE;
    *neg = n;
    return G_ON;
  }
  return G_NONE;
}

/* Does instruction k write register unit u? */
static bool writes_unit(const rs_func *f, uint32_t k, uint32_t u) {
  const rs_inst *in = &f->insts[k];
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    uint32_t x;
    if ((op->flags & RS_F_DEF) && unit_of(f, op, &x)) {
      for (unsigned l = 0; l < 32; l++)
        if ((op->lanes >> (2 * l) & 3) && x + l == u) return true;
    }
  }
  return false;
}

/* The walk (hazard.c's and scoreboard.c's): for every instruction i arming a barrier sb of a
 * kind, every instruction k reachable from i along the CFG before one waits on sb (its wait mask,
 * or a DEPBAR), is visited once; a read barrier skips (but walks through) a k of i's in-order pipe.
 * visit returning true stops the walk past that k.
 * Guards: an instruction under @!PT never executes (arms nothing, races nothing); a k whose guard
 * is i's predicate negated (@P0 / @!P0), with no write to that predicate between them on the path
 * walked, never executes when i did: walked through, not visited (ptxas's own code: `@!P0 LDG.E
 * R17` then `@P0 IMAD.MOV.U32 R17, RZ, RZ, RZ` with no wait; FlashAttention-2 sm_90 `@P1 LDC R8`
 * / `@!P1 MOV R8`). The walk is path-sensitive in that one bit: a k is reached with the guard
 * still i's (the predicate not rewritten since) or not. A recolouring keeps this sound: the
 * predicate's value is read at k, so it stays live, in one register, from i to k. */
void rs_sass_sb_walk(const rs_func *f, const uint64_t (*ctl)[2], rs_sass_sb_visit visit, void *ctx) {
  uint32_t ni = f->ninsts;
  uint32_t *blk = rs_xmalloc(sizeof *blk * (ni + 1)), *stack = rs_xmalloc(sizeof *stack * (2 * ni + 2));
  /* seen: (k, guard still i's) pairs pushed; visited: k whose visit ran; stopped: ... returned true */
  rs_word *seen = rs_xcalloc(RS_WORDS(2 * ni) + 1, sizeof *seen);
  rs_word *visited = rs_xcalloc(RS_WORDS(ni) + 1, sizeof *visited), *stopped = rs_xcalloc(RS_WORDS(ni) + 1, sizeof *stopped);
  int *gk = rs_xmalloc(sizeof *gk * (ni + 1));
  uint32_t *gu = rs_xmalloc(sizeof *gu * (ni + 1));
  bool *gn = rs_xmalloc(sizeof *gn * (ni + 1));
  for (uint32_t b = 0; b < f->nblocks; b++)
    for (uint32_t k = 0; k < f->blocks[b].ninsts; k++) blk[f->blocks[b].first_inst + k] = b;
  for (uint32_t i = 0; i < ni; i++) gk[i] = guard_of(f, i, &gu[i], &gn[i]);
  for (uint32_t i = 0; i < ni; i++) {
    if (gk[i] == G_NEVER) continue;
    unsigned wb = (unsigned)(ctl[i][1] >> 46 & 7), rb = (unsigned)(ctl[i][1] >> 49 & 7);
    for (int kind = 0; kind < 2; kind++) { /* RS_SB_READ, RS_SB_WRITE */
      unsigned sb = kind ? wb : rb;
      if (sb > 5) continue;
      /* a read barrier also ends at a wait on i's write barrier: its result is written after its
       * operands were read (ptxas relies on it: a SHFL in a called subroutine, RET waiting only on
       * its write barrier, the caller then overwriting the SHFL's source) */
      unsigned ends = 1u << sb | (kind == RS_SB_READ && wb <= 5 ? 1u << wb : 0);
      memset(seen, 0, (RS_WORDS(2 * ni) + 1) * sizeof *seen);
      memset(visited, 0, (RS_WORDS(ni) + 1) * sizeof *visited);
      memset(stopped, 0, (RS_WORDS(ni) + 1) * sizeof *stopped);
      uint32_t sp = 0;
      int pipe = pipe_of(opname(f, i)), wpipe = kind == RS_SB_WRITE ? wpipe_of(opname(f, i)) : -1;
      bool guarded = gk[i] == G_ON;
#define PUSH(x, v)                                                                                                 \
  do {                                                                                                             \
    uint32_t x_ = 2 * (x) + ((v) ? 1 : 0);                                                                         \
    if ((x) < ni && !rs_bs_get(seen, x_)) rs_bs_set(seen, x_), stack[sp++] = x_;                                   \
  } while (0)
#define PUSH_NEXT(k, v)                                                                                            \
  do {                                                                                                             \
    uint32_t kb_ = blk[k];                                                                                         \
    if ((k) + 1 < f->blocks[kb_].first_inst + f->blocks[kb_].ninsts) PUSH((k) + 1, v);                             \
    else                                                                                                           \
      for (uint32_t s_ = 0; s_ < f->blocks[kb_].nsuccs; s_++) PUSH(f->blocks[f->blocks[kb_].succs[s_]].first_inst, v); \
  } while (0)
      /* the instructions after i: next in its block, else the block's successors */
      PUSH_NEXT(i, guarded && !writes_unit(f, i, gu[i]));
      while (sp) {
        uint32_t k = stack[--sp] / 2;
        bool same = stack[sp] & 1; /* i's guard predicate not rewritten on the way */
        unsigned wait = (unsigned)(ctl[k][1] >> 52 & 0x3f);
        const char *on = opname(f, k);
        if (wait & ends || !strncmp(on, "DEPBAR", 6)) continue; /* k waits: protected from here */
        bool in_order = kind == RS_SB_READ && pipe >= 0 && pipe_of(on) == pipe; /* behind i's reads */
        bool never = gk[k] == G_NEVER || (same && gk[k] == G_ON && gu[k] == gu[i] && gn[k] != gn[i]);
        int as = wpipe >= 0 && wpipe_of(on) == wpipe ? RS_SB_WRITE_READS : kind; /* k's writes land after i's */
        if (!in_order && !never) {
          if (!rs_bs_get(visited, k)) {
            rs_bs_set(visited, k);
            if (visit(ctx, i, k, as, sb)) rs_bs_set(stopped, k);
          }
          if (rs_bs_get(stopped, k)) continue;
        }
        PUSH_NEXT(k, same && !writes_unit(f, k, gu[i]));
      }
#undef PUSH_NEXT
#undef PUSH
    }
  }
  free(blk);
  free(stack);
  free(seen);
  free(visited);
  free(stopped);
  free(gk);
  free(gu);
  free(gn);
}

typedef struct {
  const rs_func *f;
  uint32_t nunits, r_first, r_count;
  size_t words;
  rs_word *armed, *krd, *kwr; /* armed: the registers of (at, kind) */
  uint32_t at, found;
  int kind;
  char *first;
  size_t n;
} H;

/* A hazard at k: it writes a register `at` still reads (read barrier), or touches one it still
 * writes (write barrier). */
static bool hazard_at(void *ctx, uint32_t i, uint32_t k, int kind, unsigned sb) {
  H *h = ctx;
  const rs_func *f = h->f;
  size_t words = h->words;
  bool reads_only = false; /* k's writes land after i's */
  if (kind == RS_SB_WRITE_READS) kind = RS_SB_WRITE, reads_only = true;
  if (i != h->at || kind != h->kind) {
    rw_sets(f, i, h->krd, h->kwr, words, h->nunits);
    memcpy(h->armed, kind ? h->kwr : h->krd, words * sizeof *h->armed);
    if (!kind) /* only R operands are read late (predicates and uniform operands at issue) */
      for (uint32_t u = 0; u < h->nunits; u++)
        if (u < h->r_first || u >= h->r_first + h->r_count) rs_bs_clr(h->armed, u);
    h->at = i, h->kind = kind;
  }
  rw_sets(f, k, h->krd, h->kwr, words, h->nunits);
  bool bad = (!reads_only && overlaps(h->kwr, h->armed, words)) || (kind && overlaps(h->krd, h->armed, words));
  if (bad && !h->found++ && h->first)
    snprintf(h->first, h->n, "%s /*%04x*/ %s %s a register that /*%04x*/ %s still %s (scoreboard %u, no wait between)",
             f->name, (unsigned)f->insts[k].addr, opname(f, k), kind ? "touches" : "overwrites",
             (unsigned)f->insts[i].addr, opname(f, i), kind ? "writes" : "reads", sb);
  return bad;
}

uint32_t rs_sass_hazards(const rs_func *f, const uint64_t (*ctl)[2], char *first, size_t n) {
  const rs_target *t = f->tgt;
  H h = {.f = f, .nunits = t->nunits, .words = RS_WORDS(t->nunits), .at = UINT32_MAX, .first = first, .n = n};
  h.armed = rs_xcalloc(h.words + 1, sizeof *h.armed);
  h.krd = rs_xcalloc(h.words + 1, sizeof *h.krd);
  h.kwr = rs_xcalloc(h.words + 1, sizeof *h.kwr);
  if (first && n) first[0] = 0;
  for (uint32_t fi = 0; fi < t->nfiles; fi++)
    if (!strcmp(t->files[fi].name, "r")) h.r_first = t->files[fi].first, h.r_count = t->files[fi].count;
  rs_sass_sb_walk(f, ctl, hazard_at, &h);
  free(h.armed);
  free(h.krd);
  free(h.kwr);
  return h.found;
}
