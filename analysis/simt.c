/* simt.c - the one place liveness knows that VGPRs are written under the EXEC mask.
 *
 * After structurization a divergent if/else is IF -> THEN... -> FLOW -> ELSE... -> ENDIF, where
 * FLOW flips EXEC (lowered SI_ELSE: S_OR_SAVEEXEC + S_XOR_*_term $exec + S_CBRANCH_EXECZ ENDIF).
 * Lanes active in THEN are inactive in ELSE, so a vector value defined before the if and read
 * only in ELSE (not after ENDIF) need not survive THEN: LLVM's SIOptimizeVGPRLiveRange tells the
 * allocator so by making it undef on the THEN->FLOW edges, and LLVM's allocations rely on it.
 * We find the same regions and values in the lowered MIR and exclude them on those edges, with
 * LLVM's conditions: defined in IF or live through it, at IF's loop depth, not read in FLOW or
 * ENDIF, not live into ENDIF. (The pass's waterfall-loop case is not modelled: our kernels make
 * no indirect calls, and a missed case only makes the check stricter.) */
#include "analysis/liveness.h"
#include <stdlib.h>
#include <string.h>

static bool opcode_is(const rs_func *f, const rs_inst *in, const char *a, const char *b) {
  const char *op = rs_func_opcode(f, in);
  return !strcmp(op, a) || (b && !strcmp(op, b));
}

/* ENDIF if block b is a lowered SI_ELSE (FLOW) block, else -1. */
static int flow_target(const rs_func *f, const rs_block *b) {
  bool saveexec = false, xorterm = false;
  int target = -1;
  for (uint32_t k = 0; k < b->ninsts; k++) {
    const rs_inst *in = &f->insts[b->first_inst + k];
    if (opcode_is(f, in, "S_OR_SAVEEXEC_B64", "S_OR_SAVEEXEC_B32")) saveexec = true;
    if (opcode_is(f, in, "S_XOR_B64_term", "S_XOR_B32_term")) xorterm = true;
    if (opcode_is(f, in, "S_CBRANCH_EXECZ", NULL) && xorterm)
      for (uint32_t o = 0; o < in->nops; o++)
        if (f->ops[in->first_op + o].kind == RS_OP_BLOCK) target = (int)f->ops[in->first_op + o].reg;
  }
  return saveexec && xorterm ? target : -1;
}

/* True if b ends a lowered SI_IF whose EXECZ branch goes to flow. */
static bool is_if_of(const rs_func *f, const rs_block *b, uint32_t flow) {
  bool movterm = false;
  for (uint32_t k = 0; k < b->ninsts; k++) {
    const rs_inst *in = &f->insts[b->first_inst + k];
    if (opcode_is(f, in, "S_MOV_B64_term", "S_MOV_B32_term")) movterm = true;
    if (movterm && opcode_is(f, in, "S_CBRANCH_EXECZ", NULL))
      for (uint32_t o = 0; o < in->nops; o++)
        if (f->ops[in->first_op + o].kind == RS_OP_BLOCK && f->ops[in->first_op + o].reg == flow) return true;
  }
  return false;
}

/* Innermost loop header of every block (-1 outside loops), from dominators (Cooper, Harvey,
 * Kennedy) and natural loops of back edges. */
static int32_t *loop_headers(const rs_func *f) {
  uint32_t n = f->nblocks;
  int32_t *rpo = malloc(sizeof *rpo * n), *order = malloc(sizeof *order * n), *idom = malloc(sizeof *idom * n);
  uint32_t *stack = malloc(sizeof *stack * (n + 1)), *post = malloc(sizeof *post * (n + 1));
  uint32_t cnt = rs_cfg_postorder(f, post), sp = 0;
  for (uint32_t i = 0; i < cnt; i++) order[i] = (int32_t)post[i];
  free(post);
  for (uint32_t i = 0; i < n; i++) rpo[i] = -1, idom[i] = -1;
  for (uint32_t i = 0; i < cnt; i++) rpo[order[cnt - 1 - i]] = (int32_t)i;
  idom[0] = 0;
  for (bool ch = true; ch;) {
    ch = false;
    for (uint32_t i = 1; i < cnt; i++) {
      uint32_t b = (uint32_t)order[cnt - 1 - i];
      int32_t nd = -1;
      for (uint32_t p = 0; p < f->blocks[b].npreds; p++) {
        int32_t q = (int32_t)f->blocks[b].preds[p];
        if (idom[q] < 0) continue;
        if (nd < 0) { nd = q; continue; }
        int32_t a = q, c = nd;
        while (a != c) {
          while (rpo[a] > rpo[c]) a = idom[a];
          while (rpo[c] > rpo[a]) c = idom[c];
        }
        nd = a;
      }
      if (nd >= 0 && idom[b] != nd) idom[b] = nd, ch = true;
    }
  }
  int32_t *hdr = malloc(sizeof *hdr * n);
  uint32_t *size = calloc(n, sizeof *size);
  for (uint32_t i = 0; i < n; i++) hdr[i] = -1;
  uint8_t *body = malloc(n);
  for (uint32_t t = 0; t < n; t++) {
    if (rpo[t] < 0) continue;
    for (uint32_t s = 0; s < f->blocks[t].nsuccs; s++) {
      uint32_t h = f->blocks[t].succs[s];
      int32_t d = (int32_t)t; /* back edge if h dominates t */
      while (d != (int32_t)h && d != 0) d = idom[d];
      if (d != (int32_t)h) continue;
      memset(body, 0, n);
      body[h] = 1;
      uint32_t bs = 1;
      sp = 0;
      if (!body[t]) body[t] = 1, bs++, stack[sp++] = t;
      while (sp) {
        uint32_t b = stack[--sp];
        for (uint32_t p = 0; p < f->blocks[b].npreds; p++) {
          uint32_t q = f->blocks[b].preds[p];
          if (!body[q] && rpo[q] >= 0) body[q] = 1, bs++, stack[sp++] = q;
        }
      }
      for (uint32_t b = 0; b < n; b++)
        if (body[b] && (hdr[b] < 0 || bs < size[b])) hdr[b] = (int32_t)h, size[b] = bs;
    }
  }
  free(body);
  free(size);
  free(rpo);
  free(order);
  free(idom);
  free(stack);
  return hdr;
}

static bool vector_only(const rs_target *t, uint32_t files) {
  uint32_t vec = 0;
  for (uint32_t i = 0; i < t->nfiles; i++)
    if (!strcmp(t->files[i].name, "vgpr") || !strcmp(t->files[i].name, "agpr")) vec |= 1u << i;
  return files && (files & ~vec) == 0;
}

static bool any_live(const rs_live *l, const rs_word *set, uint32_t v) {
  return rs_bs_get_bits(set, l->vslot[v], 2u * l->f->vregs[v].width > 64 ? 64 : 2u * l->f->vregs[v].width) != 0;
}

uint32_t rs_simt_exclusions(rs_live *l) {
  const rs_func *f = l->f;
  uint32_t n = f->nblocks, W = l->words, added = 0;
  int32_t *hdr = NULL;
  uint8_t *then = malloc(n + 1), *els = malloc(n + 1);
  uint32_t *stack = malloc(sizeof *stack * (n + 1));
  /* per vreg: read in ELSE, read in FLOW/ENDIF, defined in IF, def loop mismatch */
  uint8_t *vf = malloc(f->nvregs + 1);
  for (uint32_t flow = 0; flow < n; flow++) {
    int endif = flow_target(f, &f->blocks[flow]);
    if (endif < 0 || (uint32_t)endif == flow) continue;
    int32_t ifb = -1;
    for (uint32_t p = 0; p < f->blocks[flow].npreds; p++)
      if (is_if_of(f, &f->blocks[f->blocks[flow].preds[p]], flow)) ifb = (int32_t)f->blocks[flow].preds[p];
    if (ifb < 0) continue;
    if (!hdr) hdr = loop_headers(f);
    /* THEN: reachable from IF without entering FLOW; ELSE: backward from ENDIF, stopping at FLOW */
    memset(then, 0, n);
    memset(els, 0, n);
    uint32_t sp = 0;
    stack[sp++] = (uint32_t)ifb;
    while (sp) {
      uint32_t b = stack[--sp];
      for (uint32_t s = 0; s < f->blocks[b].nsuccs; s++) {
        uint32_t c = f->blocks[b].succs[s];
        if (c != flow && !then[c]) then[c] = 1, stack[sp++] = c;
      }
    }
    stack[sp++] = (uint32_t)endif;
    while (sp) {
      uint32_t b = stack[--sp];
      for (uint32_t p = 0; p < f->blocks[b].npreds; p++) {
        uint32_t q = f->blocks[b].preds[p];
        if (q != flow && !els[q]) els[q] = 1, stack[sp++] = q;
      }
    }
    enum { READ_ELSE = 1, READ_JOIN = 2, DEF_IF = 4, DEF_OTHER_LOOP = 8 };
    memset(vf, 0, f->nvregs + 1);
    for (uint32_t b = 0; b < n; b++) {
      const rs_block *blk = &f->blocks[b];
      for (uint32_t k = 0; k < blk->ninsts; k++) {
        const rs_inst *in = &f->insts[blk->first_inst + k];
        for (uint32_t o = 0; o < in->nops; o++) {
          uint32_t oi = in->first_op + o;
          const rs_operand *op = &f->ops[oi];
          if (op->kind != RS_OP_VREG) continue;
          if (op->flags & RS_F_DEF) {
            if (b == (uint32_t)ifb) vf[op->reg] |= DEF_IF;
            if (hdr[b] != hdr[ifb]) vf[op->reg] |= DEF_OTHER_LOOP;
          } else if (l->use[oi]) {
            if (els[b]) vf[op->reg] |= READ_ELSE;
            if (b == flow || b == (uint32_t)endif) vf[op->reg] |= READ_JOIN;
          }
        }
      }
    }
    rs_word *mask = NULL;
    const rs_word *ifin = l->in + (size_t)ifb * W, *ifout = l->out + (size_t)ifb * W,
                  *endin = l->in + (size_t)endif * W;
    for (uint32_t v = 0; v < f->nvregs; v++) {
      if (l->vslot[v] == UINT32_MAX || (vf[v] & (READ_JOIN | DEF_OTHER_LOOP)) || !(vf[v] & READ_ELSE)) continue;
      if (!vector_only(f->tgt, f->tgt->classes[f->vregs[v].cls].files)) continue;
      bool through = any_live(l, ifin, v) && any_live(l, ifout, v) && !(vf[v] & DEF_IF);
      if (!(through || (vf[v] & DEF_IF)) || any_live(l, endin, v)) continue;
      if (!mask) mask = rs_xcalloc(W + 1, sizeof *mask);
      rs_bs_or_bits(mask, l->vslot[v], rs_lanes_full(f->vregs[v].width));
    }
    if (!mask) continue;
    bool owned = false;
    for (uint32_t t = 0; t < n; t++) {
      if (!then[t]) continue;
      for (uint32_t s = 0; s < f->blocks[t].nsuccs; s++) {
        if (f->blocks[t].succs[s] != flow) continue;
        rs_edge_excl x = {t, flow, owned ? rs_xmalloc(sizeof *mask * (W + 1)) : mask};
        if (owned) memcpy(x.mask, mask, sizeof *mask * (W + 1));
        owned = true;
        RS_PUSH(l->excl, l->nexcl, l->capexcl, x);
        added++;
      }
    }
    if (!owned) free(mask);
  }
  free(hdr);
  free(then);
  free(els);
  free(stack);
  free(vf);
  return added;
}
