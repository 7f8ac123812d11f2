/* align.c - instruction-by-instruction alignment of two stages of one function.
 * VirtRegRewriter only renames registers and deletes identity copies (and KILLs), so the two
 * streams match opcode for opcode except for those deletions, which must turn out to be
 * identity copies under the recovered assignment: that is checked, not assumed. */
#include "mir/align.h"
#include <stdlib.h>
#include <string.h>

static bool droppable(const rs_func *f, const rs_inst *in) {
  const char *op = rs_func_opcode(f, in);
  return !strcmp(op, "COPY") || !strcmp(op, "KILL");
}


typedef struct {
  const rs_func *from, *to;
  rs_alignment *a;
  uint32_t *undo;    /* vregs whose assignment a tentative match set */
  uint32_t nundo, capundo;
  uint32_t *dropped; /* from-instructions left out */
  uint32_t ndropped, capdropped;
  uint32_t dblock;   /* dropped[dblock..] belong to the block being aligned */
  uint64_t steps;
  /* fallback: one search over all blocks (a block's first consistent choice can be wrong and
   * only show later, see align_from) */
  bool global;
  uint32_t blk, deepest;
} S;

/* A dropped COPY must be an identity copy: both sides in the same register. Enforce it as the
 * drop is chosen, binding a side that is still unknown from the other (undoable). Checking only
 * after the block let a COPY be matched with the wrong surviving copy and its neighbour be
 * dropped: e.g. `%a = COPY %b; %c = COPY %a` before `$agpr9 = COPY $vgpr34`, where llc deleted
 * both (a = c = b's register) and kept the next copy; the bad choice then broke a later block.
 * Returns -1 if the copy cannot be an identity, 1 if both sides are still unknown, else 0. */
static int drop_bind(S *s, const rs_inst *pi) {
  if (strcmp(rs_func_opcode(s->from, pi), "COPY") || pi->nops < 2) return 0;
  const rs_operand *o[2] = {&s->from->ops[pi->first_op], &s->from->ops[pi->first_op + 1]};
  uint32_t u[2]; /* unit of each side's first dword; UINT32_MAX while unknown */
  for (int k = 0; k < 2; k++) {
    u[k] = UINT32_MAX;
    if (o[k]->kind == RS_OP_PREG) u[k] = o[k]->reg + (uint32_t)rs_lanes_first(o[k]->lanes);
    else if (o[k]->kind == RS_OP_VREG && s->a->assign[o[k]->reg].lanes)
      u[k] = s->a->assign[o[k]->reg].unit + (uint32_t)rs_lanes_first(o[k]->lanes);
  }
  if (u[0] == UINT32_MAX && u[1] == UINT32_MAX) return 1;
  for (int k = 0; k < 2; k++)
    if (u[k] == UINT32_MAX) {
      /* a value seen only in removed copies takes its register from the other side */
      if (o[k]->kind != RS_OP_VREG || u[!k] < (uint32_t)rs_lanes_first(o[k]->lanes)) return -1;
      s->a->assign[o[k]->reg] = (rs_preg){u[!k] - (uint32_t)rs_lanes_first(o[k]->lanes), s->from->vregs[o[k]->reg].full};
      RS_PUSH(s->undo, s->nundo, s->capundo, o[k]->reg);
      return 0;
    }
  return u[0] == u[1] ? 0 : -1;
}

/* Settle dropped[from..]: propagate registers through chains of removed copies until nothing
 * changes; -1 (with the line) if one of them is not an identity copy. */
static int settle_drops(S *s, uint32_t from, uint32_t *bad_line) {
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t k = from; k < s->ndropped; k++) {
      const rs_inst *pi = &s->from->insts[s->dropped[k]];
      uint32_t before = s->nundo;
      if (drop_bind(s, pi) < 0) {
        if (bad_line) *bad_line = pi->line;
        return -1;
      }
      changed |= s->nundo != before;
    }
  }
  return 0;
}

/* Bind the operands of a tentative match; 0 if consistent with what is known. */
static int bind(S *s, const rs_inst *pi, const rs_inst *fi) {
  for (uint32_t k = 0; k < pi->nops; k++) {
    const rs_operand *po = &s->from->ops[pi->first_op + k], *fo = &s->to->ops[fi->first_op + k];
    s->a->op_map[fi->first_op + k] = (int32_t)(pi->first_op + k);
    if (po->kind == RS_OP_VREG) {
      if (fo->kind != RS_OP_PREG) return -1;
      int base = (int)fo->reg + rs_lanes_first(fo->lanes) - rs_lanes_first(po->lanes);
      if (base < 0) return -1;
      rs_preg *cur = &s->a->assign[po->reg];
      if (cur->lanes) {
        if (cur->unit != (uint32_t)base) return -1;
        continue;
      }
      *cur = (rs_preg){(uint32_t)base, s->from->vregs[po->reg].full};
      RS_PUSH(s->undo, s->nundo, s->capundo, po->reg);
    } else if (po->kind == RS_OP_PREG) {
      if (fo->kind != RS_OP_PREG || fo->reg != po->reg || fo->lanes != po->lanes) return -1;
    } else if (po->kind != fo->kind) {
      return -1;
    }
  }
  return 0;
}

/* Operands the rewriter appended: llc-22 marks the lanes an undef sub-register def leaves
 * undefined (`undef %1.sub1:vreg_64_align2 = IMPLICIT_DEF` -> `$vgpr3 = IMPLICIT_DEF implicit-def
 * $vgpr2`). Each must be an implicit def inside the register of such a def, as bound. */
static bool extras_ok(const S *s, const rs_inst *pi, const rs_inst *fi) {
  for (uint32_t k = pi->nops; k < fi->nops; k++) {
    const rs_operand *fo = &s->to->ops[fi->first_op + k];
    if (fo->kind != RS_OP_PREG || (fo->flags & (RS_F_DEF | RS_F_IMPLICIT)) != (RS_F_DEF | RS_F_IMPLICIT)) return false;
    bool inside = false;
    for (uint32_t d = 0; d < pi->nops && !inside; d++) {
      const rs_operand *po = &s->from->ops[pi->first_op + d];
      if (po->kind != RS_OP_VREG || (po->flags & (RS_F_DEF | RS_F_UNDEF | RS_F_SUBREG)) != (RS_F_DEF | RS_F_UNDEF | RS_F_SUBREG))
        continue;
      const rs_preg *r = &s->a->assign[po->reg];
      if (!r->lanes || fo->reg < r->unit || fo->reg - r->unit >= 32) continue;
      uint32_t off = 2 * (fo->reg - r->unit); /* fo's lanes start off lanes into the register */
      inside = (off == 0 || fo->lanes >> (64 - off) == 0) && ((fo->lanes << off) & ~r->lanes) == 0;
    }
    if (!inside) return false;
  }
  return true;
}

static void undo_to(S *s, uint32_t mark) {
  while (s->nundo > mark) s->a->assign[s->undo[--s->nundo]].lanes = 0;
}

/* Align from-instructions [i..) with to-instructions [j..) of one block, backtracking over the
 * choice "match this COPY or drop it": an identity copy the rewriter deleted may sit right
 * before a real copy of the same shape. */
static bool align_from(S *s, uint32_t b);

static bool align_block(S *s, const rs_block *pb, const rs_block *fb, uint32_t i, uint32_t j) {
  if (++s->steps > 50000000) return false;
  /* copies dropped with both sides unknown may have been pinned down since */
  if (i == pb->ninsts) {
    if (j != fb->ninsts || settle_drops(s, s->dblock, NULL)) return false;
    return !s->global || align_from(s, s->blk + 1);
  }
  const rs_inst *pi = &s->from->insts[pb->first_inst + i];
  const rs_inst *fi = j < fb->ninsts ? &s->to->insts[fb->first_inst + j] : NULL;
  uint32_t mark = s->nundo, dmark = s->ndropped;
  if (fi && fi->nops >= pi->nops && !strcmp(rs_func_opcode(s->from, pi), rs_func_opcode(s->to, fi))) {
    if (bind(s, pi, fi) == 0 && (fi->nops == pi->nops || extras_ok(s, pi, fi)) && align_block(s, pb, fb, i + 1, j + 1)) {
      s->a->matched++;
      return true;
    }
    undo_to(s, mark);
    s->ndropped = dmark;
  }
  if (droppable(s->from, pi) && drop_bind(s, pi) >= 0) {
    RS_PUSH(s->dropped, s->ndropped, s->capdropped, pb->first_inst + i);
    if (align_block(s, pb, fb, i + 1, j)) return true;
  }
  undo_to(s, mark);
  s->ndropped = dmark;
  return false;
}

/* The global search: align block b with the rest of the function as its continuation, so a
 * choice that breaks a later block is undone. Needed where both "match this COPY, drop the next"
 * and the reverse fit a block: llc-16 on gfx1100 kept `$vgpr5 = COPY $vgpr30` for
 * `undef %a.sub1 = COPY %b.sub1; %c.sub1 = COPY %a.sub1`, and only a later use of %a shows
 * which one the rewriter deleted. */
static bool align_from(S *s, uint32_t b) {
  if (b == s->from->nblocks) return settle_drops(s, 0, NULL) == 0;
  uint32_t blk = s->blk, dblock = s->dblock;
  s->blk = b;
  s->dblock = s->ndropped;
  if (b > s->deepest) s->deepest = b;
  bool ok = align_block(s, &s->from->blocks[b], &s->to->blocks[b], 0, 0);
  s->blk = blk;
  s->dblock = dblock;
  return ok;
}

int rs_align(const rs_func *from, const rs_func *to, rs_alignment *a, rs_err *e) {
  memset(a, 0, sizeof *a);
  if (from->nblocks != to->nblocks)
    return rs_errf(e, to->path, to->line, "%s: %u blocks vs %u: the stages do not align", to->name,
                   from->nblocks, to->nblocks);
  a->op_map = rs_xmalloc(sizeof *a->op_map * (to->nops + 1));
  for (uint32_t i = 0; i < to->nops; i++) a->op_map[i] = -1;
  a->nassign = from->nvregs;
  a->assign = rs_xcalloc(from->nvregs + 1, sizeof *a->assign);
  S st = {from, to, a, NULL, 0, 0, NULL, 0, 0, 0, 0, false, 0, 0};
  S *s = &st;
  int rc = 0;
  uint32_t bad_block = 0;
  for (uint32_t b = 0; b < from->nblocks && !rc; b++) {
    const rs_block *pb = &from->blocks[b], *fb = &to->blocks[b];
    s->steps = 0;
    s->dblock = s->ndropped;
    if (!align_block(s, pb, fb, 0, 0)) rc = -1, bad_block = b;
  }
  if (rc) { /* start over with the search over all blocks */
    undo_to(s, 0);
    memset(a->assign, 0, sizeof *a->assign * (from->nvregs + 1));
    for (uint32_t i = 0; i < to->nops; i++) a->op_map[i] = -1;
    a->matched = 0;
    s->ndropped = 0;
    s->steps = 0;
    s->global = true;
    if (from->nblocks && align_from(s, 0)) rc = 0;
    else if (s->deepest > bad_block) bad_block = s->deepest;
  }
  if (rc) {
    const rs_block *fb = &to->blocks[bad_block];
    rc = rs_errf(e, to->path, fb->line, "%s: block %s does not align with %s", to->name, fb->name, from->path);
  }
  /* every dropped COPY must be an identity copy under the assignment (chains across blocks) */
  uint32_t bad_line = 0;
  if (!rc && settle_drops(s, 0, &bad_line))
    rc = rs_errf(e, from->path, bad_line, "COPY removed by the rewriter is not an identity copy");
  uint32_t ndropped = s->ndropped;
  free(s->undo);
  free(s->dropped);
  a->dropped = ndropped;
  if (rc) rs_alignment_free(a);
  return rc;
}

void rs_alignment_free(rs_alignment *a) {
  free(a->op_map);
  free(a->assign);
  memset(a, 0, sizeof *a);
}

/* Same instruction up to register names? */
static bool same_shape(const rs_func *a, const rs_inst *x, const rs_func *b, const rs_inst *y) {
  if (x->nops > y->nops || strcmp(rs_func_opcode(a, x), rs_func_opcode(b, y))) return false;
  /* `to` may add implicit physical registers only: LLVM's liveness of a whole tuple on the lane
   * writes and reads SILowerSGPRSpills inserts (`implicit-def $sgpr2_sgpr3`), which the SGPR
   * round's instance does not take (mir/sgspill.c) */
  for (uint32_t k = x->nops; k < y->nops; k++) {
    const rs_operand *q = &b->ops[y->first_op + k];
    if (q->kind != RS_OP_PREG || !(q->flags & RS_F_IMPLICIT)) return false;
  }
  for (uint32_t k = 0; k < x->nops; k++) {
    const rs_operand *p = &a->ops[x->first_op + k], *q = &b->ops[y->first_op + k];
    bool pr = p->kind == RS_OP_VREG || p->kind == RS_OP_PREG, qr = q->kind == RS_OP_VREG || q->kind == RS_OP_PREG;
    if (pr != qr) return false;
    if (pr) {
      if ((p->flags & RS_F_DEF) != (q->flags & RS_F_DEF)) return false;
      /* physical registers stay; a virtual one becomes a register its class allows */
      if (p->kind == RS_OP_PREG && (q->kind != RS_OP_PREG || q->reg != p->reg || q->lanes != p->lanes)) return false;
      if (p->kind == RS_OP_VREG) {
        uint32_t files = a->tgt->classes[a->vregs[p->reg].cls].files;
        if (q->kind == RS_OP_VREG && !(files & b->tgt->classes[b->vregs[q->reg].cls].files)) return false;
        if (q->kind == RS_OP_PREG) {
          int f = rs_target_file_of(b->tgt, q->reg);
          if (f >= 0 && b->tgt->files[f].asm_prefix && !(files >> f & 1)) return false;
          /* nor one its class's alignment forbids: `%5.sub1 = COPY` of an aligned SGPR pair is
           * never `$sgpr4 = COPY` (two adjacent copies paired crosswise otherwise: rocRAND
           * mrg32k3a poisson gfx940, the SGPR round's instance) */
          const rs_regclass *rc = &a->tgt->classes[a->vregs[p->reg].cls];
          int64_t base = (int64_t)q->reg + rs_lanes_first(q->lanes) - rs_lanes_first(p->lanes) -
                         (f >= 0 ? b->tgt->files[f].first : 0);
          if (f >= 0 && b->tgt->files[f].asm_prefix && rc->align > 1 && (base < 0 || base % rc->align)) return false;
        }
      }
      continue;
    }
    if (p->kind != q->kind) return false;
    if (p->kind == RS_OP_BLOCK ? p->reg != q->reg
                               : (p->text_len != q->text_len ||
                                  memcmp(a->src + p->text_off, b->src + q->text_off, p->text_len)))
      return false;
  }
  return true;
}

static int cmp_link(const void *x, const void *y) {
  const rs_loose_link *a = x, *b = y;
  if (a->from_vreg != b->from_vreg) return a->from_vreg < b->from_vreg ? -1 : 1;
  if (a->to_vreg != b->to_vreg) return a->to_vreg < b->to_vreg ? -1 : 1;
  if (a->unit != b->unit) return a->unit < b->unit ? -1 : 1;
  return a->delta < b->delta ? -1 : a->delta > b->delta;
}

static void mark_lost(const rs_func *f, const rs_inst *in, rs_loose *out) {
  if (droppable(f, in)) {
    if (!strcmp(rs_func_opcode(f, in), "COPY")) RS_PUSH(out->gone_copies, out->ngone, out->capgone, (uint32_t)(in - f->insts));
    return;
  }
  for (uint32_t k = 0; k < in->nops; k++)
    if (f->ops[in->first_op + k].kind == RS_OP_VREG) out->lost[f->ops[in->first_op + k].reg] = 1;
}

/* A spill restore greedy (or SILowerSGPRSpills) inserted: remember the physical registers it defines.
 * llc-16 lowers SGPR spills before its VGPR round, so its postsplit restores an SGPR as an inserted
 * `$sgprN = V_READLANE_B32 $vgprM, lane` (rocRAND log_normal philox gfx940: the saved EXEC of an
 * if, spilled across the THEN side, read as a value kept in s[2:3]); the program's own readlanes
 * are in `from` too and match, only inserted ones reach here. */
static void note_restore(const rs_func *f, const rs_inst *in, rs_loose *out) {
  const char *opc = rs_func_opcode(f, in);
  if (!strstr(opc, "RESTORE") && strncmp(opc, "V_READLANE_B32", 14)) return;
  for (uint32_t k = 0; k < in->nops; k++) {
    const rs_operand *o = &f->ops[in->first_op + k];
    if (o->kind == RS_OP_PREG && (o->flags & RS_F_DEF)) RS_PUSH(out->restored, out->nrestored, out->caprestored, ((rs_preg){o->reg, o->lanes}));
    /* llc-22's VGPR round reloads into a virtual register: the values linked to it were spilled
     * (often back into the register they had: our gemv_batched under amdgpu_waves_per_eu(4) on
     * gfx942, whose carried-back map broke 1 constraint) */
    if (o->kind == RS_OP_VREG && (o->flags & RS_F_DEF) && o->reg < f->nvregs) out->reloaded[o->reg] = 1;
  }
}

int rs_align_loose(const rs_func *from, const rs_func *to, rs_loose *out, rs_err *e) {
  memset(out, 0, sizeof *out);
  if (from->nblocks != to->nblocks)
    return rs_errf(e, to->path, to->line, "%s: %u blocks vs %u: the stages do not align", to->name,
                   from->nblocks, to->nblocks);
  uint16_t *dp = NULL;
  size_t dpcap = 0;
  out->lost = rs_xcalloc(from->nvregs + 1, 1);
  out->reloaded = rs_xcalloc(to->nvregs + 1, 1);
  out->pair = rs_xmalloc(((size_t)to->ninsts + 1) * sizeof *out->pair);
  for (uint32_t k = 0; k < to->ninsts; k++) out->pair[k] = -1;
  for (uint32_t bi = 0; bi < from->nblocks; bi++) {
    const rs_block *fb = &from->blocks[bi], *tb = &to->blocks[bi];
    uint32_t n = fb->ninsts, m = tb->ninsts;
    size_t cells = (size_t)(n + 1) * (m + 1);
    if (n >= 65535 || m >= 65535 || cells > 64u * 1024 * 1024) {
      free(dp);
      rs_loose_free(out);
      return rs_errf(e, from->path, fb->line, "block %s too long to align", fb->name);
    }
    if (cells > dpcap) {
      free(dp);
      dp = rs_xmalloc(cells * sizeof *dp);
      dpcap = cells;
    }
    /* dp[i][j] = LCS of from[i..], to[j..] */
    for (uint32_t i = n + 1; i-- > 0;)
      for (uint32_t j = m + 1; j-- > 0;) {
        uint16_t *c = &dp[(size_t)i * (m + 1) + j];
        if (i == n || j == m) *c = 0;
        else if (same_shape(from, &from->insts[fb->first_inst + i], to, &to->insts[tb->first_inst + j]))
          *c = (uint16_t)(dp[(size_t)(i + 1) * (m + 1) + j + 1] + 1);
        else {
          uint16_t a = dp[(size_t)(i + 1) * (m + 1) + j], b = dp[(size_t)i * (m + 1) + j + 1];
          *c = a > b ? a : b;
        }
      }
    uint32_t i = 0, j = 0;
    while (i < n && j < m) {
      const rs_inst *x = &from->insts[fb->first_inst + i], *y = &to->insts[tb->first_inst + j];
      if (same_shape(from, x, to, y) && dp[(size_t)i * (m + 1) + j] == dp[(size_t)(i + 1) * (m + 1) + j + 1] + 1) {
        for (uint32_t k = 0; k < x->nops; k++) {
          const rs_operand *p = &from->ops[x->first_op + k], *q = &to->ops[y->first_op + k];
          if (p->kind != RS_OP_VREG) continue;
          rs_loose_link ln = {p->reg, -1, 0, 0};
          int lp = rs_lanes_first(p->lanes), lq = rs_lanes_first(q->lanes);
          if (q->kind == RS_OP_VREG) ln.to_vreg = (int32_t)q->reg, ln.delta = lq - lp;
          else if (q->kind == RS_OP_PREG) ln.unit = q->reg, ln.delta = lq - lp;
          else continue;
          RS_PUSH(out->links, out->nlinks, out->caplinks, ln);
        }
        out->pair[tb->first_inst + j] = (int32_t)(fb->first_inst + i);
        out->matched++;
        i++, j++;
      } else if (dp[(size_t)(i + 1) * (m + 1) + j] >= dp[(size_t)i * (m + 1) + j + 1]) {
        mark_lost(from, x, out);
        out->from_only++;
        i++;
      } else {
        note_restore(to, y, out);
        out->to_only++;
        j++;
      }
    }
    out->from_only += n - i; /* the unmatched tails */
    out->to_only += m - j;
    for (; j < m; j++) note_restore(to, &to->insts[tb->first_inst + j], out);
    for (; i < n; i++) mark_lost(from, &from->insts[fb->first_inst + i], out);
  }
  free(dp);
  if (out->nlinks) {
    qsort(out->links, out->nlinks, sizeof *out->links, cmp_link);
    uint32_t k = 0;
    for (uint32_t i = 0; i < out->nlinks; i++)
      if (!k || cmp_link(&out->links[k - 1], &out->links[i])) out->links[k++] = out->links[i];
    out->nlinks = k;
  }
  return 0;
}

void rs_loose_free(rs_loose *l) {
  free(l->links);
  free(l->lost);
  free(l->gone_copies);
  free(l->restored);
  free(l->pair);
  free(l->reloaded);
  memset(l, 0, sizeof *l);
}
