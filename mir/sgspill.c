/* sgspill.c - the SGPR round's spill code as LLVM lowered it: each SI_SPILL_S*_SAVE / _RESTORE of
 * the MIR llc's SGPR round printed becomes the lane writes / reads that stand in its place in
 * LLVM's postsplit MIR (llc-16: V_WRITELANE_B32 / V_READLANE_B32; llc-22: SI_SPILL_S32_TO_VGPR /
 * SI_RESTORE_S32_FROM_VGPR), so that the spilled value is an SGPR value with its own register and
 * the VGPR lane that holds it across the gap is an instruction's operand (docs/real-suite.md). */
#include "mir/sgspill.h"
#include "mir/mirtext.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ends_with(const char *s, const char *t) {
  size_t n = strlen(s), m = strlen(t);
  return n >= m && !strcmp(s + n - m, t);
}

/* 1: a spill save, 2: a restore (SI_SPILL_S32_TO_VGPR, llc-22's lowered form, is neither) */
static int spill_kind(const char *op) {
  if (strncmp(op, "SI_SPILL_S", 10)) return 0;
  return ends_with(op, "_SAVE") ? 1 : ends_with(op, "_RESTORE") ? 2 : 0;
}

/* 1: writes an SGPR into a VGPR lane, 2: reads one back (the SGPR operand: 1 and 0) */
static int lane_kind(const char *op) {
  if (!strcmp(op, "V_WRITELANE_B32") || !strcmp(op, "SI_SPILL_S32_TO_VGPR")) return 1;
  if (!strcmp(op, "V_READLANE_B32") || !strcmp(op, "SI_RESTORE_S32_FROM_VGPR")) return 2;
  return 0;
}

/* The spilled value's operand: the save's source, the restore's def. */
static const rs_operand *spilled_op(const rs_func *g, const rs_inst *in, int kind) {
  for (uint32_t k = 0; k < in->nops; k++) {
    const rs_operand *o = &g->ops[in->first_op + k];
    if (o->kind == RS_OP_VREG && !!(o->flags & RS_F_DEF) == (kind == 2)) return o;
  }
  return NULL;
}

static bool is_sgpr_text(const char *src, const rs_operand *o) {
  return o->kind == RS_OP_PREG && o->text_len > 5 && !strncmp(src + o->text_off, "$sgpr", 5);
}

/* A lane instruction's line with its SGPR operand renamed to the value's 32-bit sub-register
 * (`name`) and its implicit operands of the whole spilled register dropped: LLVM's liveness
 * bookkeeping of the physical tuple (`implicit-def $sgpr2_sgpr3` on the first lane write, which
 * writes nothing; as a def of the value it would clobber what shares the register with an
 * undefined half). False where an implicit operand names other SGPRs. */
static bool put_lane(rs_sbuf *b, const rs_func *ps, const rs_lines *lq, const rs_inst *in, uint32_t sop,
                     const char *name, uint32_t base, rs_lanes full) {
  const char *src = ps->src;
  uint32_t at = lq->start[in->line];
  for (uint32_t k = 0; k < in->nops; k++) {
    const rs_operand *o = &ps->ops[in->first_op + k];
    uint32_t st = rs_mir_op_start(src, o), end = o->text_off + o->text_len;
    if (k == sop) {
      rs_sbuf_put(b, src + at, st - at);
      rs_sbuf_put(b, name, strlen(name));
      at = end;
    } else if ((o->flags & RS_F_IMPLICIT) && is_sgpr_text(src, o)) {
      if (o->reg != base || o->lanes != full) return false;
      while (st > at && src[st - 1] == ' ') st--;
      if (st > at && src[st - 1] == ',') st--;
      rs_sbuf_put(b, src + at, st - at);
      at = end;
    }
  }
  rs_sbuf_put(b, src + at, rs_line_end(lq, in->line) - at);
  return true;
}

/* The lanes of v no path defines at instruction i: those an `undef` sub-register def before it in
 * its block left undefined (only lanes so shown; 0 where the block does not tell). LLVM saves a
 * whole tuple, an undefined half too (rocRAND mrg32k3a poisson gfx940: `undef %4867.sub1 = COPY`,
 * then both halves to lanes), and reading that half reads nothing. */
static rs_lanes undefined_lanes(const rs_func *g, uint32_t i, uint32_t v) {
  uint32_t b0 = 0;
  for (uint32_t bi = 0; bi < g->nblocks; bi++)
    if (i >= g->blocks[bi].first_inst && i < g->blocks[bi].first_inst + g->blocks[bi].ninsts) b0 = g->blocks[bi].first_inst;
  rs_lanes def = 0;
  for (uint32_t j = i; j-- > b0;) {
    const rs_inst *in = &g->insts[j];
    for (uint32_t k = 0; k < in->nops; k++) {
      const rs_operand *o = &g->ops[in->first_op + k];
      if (o->kind != RS_OP_VREG || o->reg != v || !(o->flags & RS_F_DEF)) continue;
      if (!(o->flags & RS_F_SUBREG)) return 0; /* a whole def: every lane */
      def |= o->lanes;
      if (o->flags & RS_F_UNDEF) return g->vregs[v].full & ~def;
    }
  }
  return 0;
}

char *rs_mir_sgpr_spill_lanes(const rs_func *g, const rs_func *ps, const rs_loose *lo, const rs_preg *as,
                              size_t *len, char *w, size_t nw) {
  if (g->nblocks != ps->nblocks) {
    rs_mir_why(w, nw, "blocks differ (%u, %u)", g->nblocks, ps->nblocks);
    return NULL;
  }
  int32_t *gpair = rs_xmalloc((g->ninsts + 1) * sizeof *gpair);
  for (uint32_t i = 0; i < g->ninsts; i++) gpair[i] = -1;
  for (uint32_t j = 0; j < ps->ninsts; j++)
    if (lo->pair[j] >= 0) gpair[lo->pair[j]] = (int32_t)j;
  uint8_t *taken = rs_xcalloc(ps->ninsts + 1, 1);
  /* per spill pseudo of g: its lane instructions of ps, in ps order (lane[first[i] ..]) */
  uint32_t *first = rs_xcalloc(g->ninsts + 1, sizeof *first), *nlane = rs_xcalloc(g->ninsts + 1, sizeof *nlane),
           *vbase = rs_xcalloc(g->ninsts + 1, sizeof *vbase), *idef = rs_xcalloc(g->ninsts + 1, sizeof *idef);
  uint32_t *lane = rs_xmalloc((ps->ninsts + 1) * sizeof *lane), nl = 0;
  int rc = 0;
  for (uint32_t bi = 0; bi < g->nblocks && !rc; bi++) {
    const rs_block *gb = &g->blocks[bi], *qb = &ps->blocks[bi];
    for (uint32_t i = gb->first_inst; i < gb->first_inst + gb->ninsts && !rc; i++) {
      const rs_inst *in = &g->insts[i];
      int kind = spill_kind(rs_func_opcode(g, in));
      if (!kind) continue;
      const rs_operand *vo = spilled_op(g, in, kind);
      if (!vo || (vo->flags & RS_F_SUBREG)) {
        rc = rs_mir_why(w, nw, "%s of %s", rs_func_opcode(g, in), vo ? "a sub-register" : "no value");
        break;
      }
      uint32_t v = vo->reg, width = g->vregs[v].width;
      if (width > 32) {
        rc = rs_mir_why(w, nw, "%s spilled: %u registers", g->vregs[v].name, width);
        break;
      }
      /* the gap between the neighbours that have a counterpart in ps */
      uint32_t jlo = qb->first_inst, jhi = qb->first_inst + qb->ninsts;
      for (uint32_t k = i; k-- > gb->first_inst;)
        if (gpair[k] >= 0) {
          jlo = (uint32_t)gpair[k] + 1;
          break;
        }
      for (uint32_t k = i + 1; k < gb->first_inst + gb->ninsts; k++)
        if (gpair[k] >= 0) {
          jhi = (uint32_t)gpair[k];
          break;
        }
      /* LLVM's register for the value: its linked operands', else (defined only by copies the
       * SGPR rewriter deleted as identities, or by a restore) the one LLVM's first lane
       * instruction still open in the gap names whole (its implicit operand of the spilled
       * tuple; the instruction itself for one register): SILowerSGPRSpills lowers the pseudos in
       * place and in order. Either way rs_truth_prera's identity check and the Problem check the
       * instance built on it. */
      uint32_t base = as[v].unit;
      bool known = as[v].lanes != 0;
      for (uint32_t j = jlo; j < jhi && !known; j++) {
        const rs_inst *q = &ps->insts[j];
        if (taken[j] || lo->pair[j] >= 0 || lane_kind(rs_func_opcode(ps, q)) != kind || q->nops <= (kind == 1 ? 1u : 0u))
          continue;
        for (uint32_t k = 0; k < q->nops && !known; k++) {
          const rs_operand *o = &ps->ops[q->first_op + k];
          bool whole = width == 1 ? k == (kind == 1 ? 1u : 0u) : (o->flags & RS_F_IMPLICIT) && o->lanes == g->vregs[v].full;
          if (whole && is_sgpr_text(ps->src, o)) base = o->reg, known = true;
        }
        if (!known) break; /* the first open lane instruction is another value's */
      }
      if (!known) {
        rc = rs_mir_why(w, nw, "%s spilled without a register of LLVM's", g->vregs[v].name);
        break;
      }
      vbase[i] = base;
      uint64_t seen = 0;
      first[i] = nl;
      for (uint32_t j = jlo; j < jhi; j++) {
        const rs_inst *q = &ps->insts[j];
        if (taken[j] || lo->pair[j] >= 0 || lane_kind(rs_func_opcode(ps, q)) != kind) continue;
        uint32_t sop = kind == 1 ? 1 : 0;
        if (q->nops <= sop) continue;
        const rs_operand *so = &ps->ops[q->first_op + sop];
        if (!is_sgpr_text(ps->src, so) || so->reg < base || so->reg >= base + width) continue;
        uint64_t bit = 1ull << (so->reg - base);
        if (seen & bit) continue;
        seen |= bit;
        taken[j] = 1;
        lane[nl++] = j;
      }
      nlane[i] = nl - first[i];
      /* llc-22 starts a lane VGPR with `$vgprN = IMPLICIT_DEF` right before its first write */
      if (nlane[i] && kind == 1) {
        uint32_t j0 = lane[first[i]];
        const rs_inst *q = j0 > qb->first_inst ? &ps->insts[j0 - 1] : NULL;
        if (q && !taken[j0 - 1] && lo->pair[j0 - 1] < 0 && !strcmp(rs_func_opcode(ps, q), "IMPLICIT_DEF") && q->nops == 1 &&
            ps->ops[q->first_op].kind == RS_OP_PREG && ps->ops[q->first_op].reg == ps->ops[ps->insts[j0].first_op].reg) {
          taken[j0 - 1] = 1;
          idef[i] = j0; /* + 1: 0 is none */
        }
      }
      if (nlane[i] != width)
        rc = rs_mir_why(w, nw, "%s of %s: %u of its %u registers written to or read from lanes there", rs_func_opcode(g, in),
                 g->vregs[v].name, nlane[i], width);
    }
  }
  char *out = NULL;
  if (!rc) {
    rs_lines lg, lq;
    rs_lines_of(g->src, &lg);
    rs_lines_of(ps->src, &lq);
    int32_t *inst_at = rs_xmalloc((lg.nlines + 2) * sizeof *inst_at); /* g line -> its spill pseudo */
    for (uint32_t L = 0; L <= lg.nlines + 1; L++) inst_at[L] = -1;
    for (uint32_t i = 0; i < g->ninsts; i++)
      if (nlane[i]) inst_at[g->insts[i].line] = (int32_t)i;
    /* greedy's bundles of sub-register copies (SplitKit), read in parallel: written one after
     * the other where no copy of the bundle reads a register another writes, so that the
     * rewriter deletes the identities as LLVM's did and no bundle reaches llc with some removed */
    uint8_t *flat = rs_xcalloc(lg.nlines + 2, 1); /* 1: head ("{" dropped), 2: member ("internal"), 3: "}" */
    for (uint32_t i = 0; i < g->ninsts; i++) {
      if (!(g->insts[i].flags & RS_I_BUNDLED)) continue;
      uint32_t L0 = g->insts[i].line;
      if (L0 > lg.nlines || !memchr(lg.s + lg.start[L0], '{', rs_line_end(&lg, L0) - lg.start[L0])) continue;
      uint32_t e = i + 1;
      while (e < g->ninsts && (g->insts[e].flags & RS_I_BUNDLED) && g->insts[e].line == g->insts[e - 1].line + 1) e++;
      uint32_t Lc = g->insts[e - 1].line + 1;
      const char *c = lg.s + lg.start[Lc];
      while (*c == ' ') c++;
      bool ok = Lc <= lg.nlines && c[0] == '}';
      for (uint32_t a = i; a < e && ok; a++) {
        const rs_inst *x = &g->insts[a];
        ok = !strcmp(rs_func_opcode(g, x), "COPY") && x->nops == 2;
        for (uint32_t d = i; d < e && ok; d++) /* no source is a destination of the bundle */
          ok = !(g->ops[x->first_op + 1].kind == RS_OP_VREG && g->ops[g->insts[d].first_op].kind == RS_OP_VREG &&
                 g->ops[x->first_op + 1].reg == g->ops[g->insts[d].first_op].reg);
      }
      if (!ok) continue;
      flat[L0] = 1;
      for (uint32_t a = i + 1; a < e; a++) flat[g->insts[a].line] = 2;
      flat[Lc] = 3;
      i = e - 1;
    }
    /* the lane VGPRs are physical registers of the instance: live into the blocks LLVM's are */
    uint32_t *lunit = rs_xmalloc((nl + 1) * sizeof *lunit), nu = 0;
    const rs_operand **lop = rs_xmalloc((nl + 1) * sizeof *lop);
    for (uint32_t q = 0; q < nl; q++) {
      const rs_inst *li = &ps->insts[lane[q]];
      const rs_operand *o = &ps->ops[li->first_op + (lane_kind(rs_func_opcode(ps, li)) == 1 ? 0 : 1)];
      bool dup = o->kind != RS_OP_PREG;
      for (uint32_t u = 0; u < nu && !dup; u++) dup = lunit[u] == o->reg;
      if (!dup) lunit[nu] = o->reg, lop[nu++] = o;
    }
    char **addl = rs_xcalloc(lg.nlines + 2, sizeof *addl); /* g line -> live-ins to add there */
    bool *append = rs_xcalloc(lg.nlines + 2, sizeof *append); /* to its liveins: list, else a new line after it */
    for (uint32_t bi = 0; bi < g->nblocks; bi++) {
      rs_sbuf t = {0};
      const rs_block *qb = &ps->blocks[bi];
      for (uint32_t u = 0; u < nu; u++)
        for (uint32_t k = 0; k < qb->nliveins; k++)
          if (qb->liveins[k].reg.unit == lunit[u] && qb->liveins[k].reg.lanes) {
            rs_sbuf_put(&t, ", ", 2);
            rs_sbuf_put(&t, ps->src + lop[u]->text_off, lop[u]->text_len);
            break;
          }
      if (!t.n) continue;
      uint32_t L = g->blocks[bi].line, at = L;
      while (at + 1 <= lg.nlines) {
        const char *x = lg.s + lg.start[at + 1];
        while (*x == ' ') x++;
        if (!strncmp(x, "successors:", 11)) at++;
        else if (!strncmp(x, "liveins:", 8)) {
          at++;
          append[at] = true;
          break;
        } else break;
      }
      addl[at] = t.s;
    }
    /* llc-22's lane VGPRs (whole-wave registers): the function's info names them */
    const char *wwm = strstr(ps->src, "\n  wwmReservedRegs:\n");
    size_t nwwm = 0;
    if (wwm && !strstr(g->src, "\n  wwmReservedRegs:")) {
      wwm++;
      const char *e = strchr(wwm, '\n') + 1;
      while (!strncmp(e, "    - ", 6) && strchr(e, '\n')) e = strchr(e, '\n') + 1;
      nwwm = (size_t)(e - wwm);
    }
    rs_sbuf b = {0};
    char name[96];
    for (uint32_t L = 1; L <= lg.nlines && !rc; L++) {
      const char *s = lg.s + lg.start[L];
      uint32_t n = rs_line_end(&lg, L) - lg.start[L];
      if (!strncmp(s, "stack:", 6) && s[6] == '\n') {
        /* the SGPR spill slots leave the frame: nothing refers to them any more */
        rs_sbuf e = {0};
        uint32_t kept = 0, E = L + 1;
        while (E <= lg.nlines && !strncmp(lg.s + lg.start[E], "  - { id:", 9)) {
          uint32_t F = E;
          while (F < lg.nlines && !memchr(lg.s + lg.start[F], '}', rs_line_end(&lg, F) - lg.start[F])) F++;
          const char *a = lg.s + lg.start[E];
          size_t m = rs_line_end(&lg, F) - lg.start[E];
          char *t = rs_xstrndup(a, m);
          if (!strstr(t, "stack-id: sgpr-spill")) rs_sbuf_put(&e, a, m), kept++;
          free(t);
          E = F + 1;
        }
        if (kept) rs_sbuf_put(&b, s, n), rs_sbuf_put(&b, e.s, e.n);
        else rs_sbuf_put(&b, "stack:           []\n", 20);
        free(e.s);
        L = E - 1;
        continue;
      }
      if (flat[L] == 3) continue;
      if (flat[L] == 1) { /* the head without its " {" */
        const char *br = memchr(s, '{', n);
        while (br > s && br[-1] == ' ') br--;
        rs_sbuf_put(&b, s, (size_t)(br - s));
        rs_sbuf_put(&b, "\n", 1);
        continue;
      }
      if (flat[L] == 2) { /* a member without "internal " */
        const char *in = strstr(s, "internal ");
        if (in && in < s + n) {
          rs_sbuf_put(&b, s, (size_t)(in - s));
          rs_sbuf_put(&b, in + 9, n - (size_t)(in + 9 - s));
        } else rs_sbuf_put(&b, s, n);
        continue;
      }
      if (addl[L] && append[L]) { /* ", $vgprN" before the newline */
        rs_sbuf_put(&b, s, n - (n && s[n - 1] == '\n'));
        rs_sbuf_put(&b, addl[L], strlen(addl[L]));
        rs_sbuf_put(&b, "\n", 1);
        continue;
      }
      if (addl[L]) { /* a liveins: line of its own, after the block's header or successors */
        rs_sbuf_put(&b, s, n);
        rs_sbuf_put(&b, "    liveins: ", 13);
        rs_sbuf_put(&b, addl[L] + 2, strlen(addl[L] + 2));
        rs_sbuf_put(&b, "\n", 1);
        continue;
      }
      if (inst_at[L] < 0) {
        rs_sbuf_put(&b, s, n);
        if (nwwm && !strncmp(s, "machineFunctionInfo:", 20)) rs_sbuf_put(&b, wwm, nwwm);
        continue;
      }
      uint32_t i = (uint32_t)inst_at[L];
      int kind = spill_kind(rs_func_opcode(g, &g->insts[i]));
      uint32_t v = spilled_op(g, &g->insts[i], kind)->reg, width = g->vregs[v].width;
      if (idef[i]) {
        uint32_t IL = ps->insts[idef[i] - 1].line;
        rs_sbuf_put(&b, lq.s + lq.start[IL], rs_line_end(&lq, IL) - lq.start[IL]);
      }
      rs_lanes undef = kind == 1 ? undefined_lanes(g, i, v) : 0;
      for (uint32_t q = 0; q < nlane[i]; q++) {
        const rs_inst *li = &ps->insts[lane[first[i] + q]];
        uint32_t sop = kind == 1 ? 1 : 0;
        uint32_t k = ps->ops[li->first_op + sop].reg - vbase[i];
        bool u = kind == 2 ? q == 0 : (undef >> (2 * k) & 3) != 0;
        if (width == 1) snprintf(name, sizeof name, "%s", g->vregs[v].name);
        else snprintf(name, sizeof name, "%s%s.sub%u", u ? "undef " : "", g->vregs[v].name, k);
        if (!put_lane(&b, ps, &lq, li, sop, name, vbase[i], g->vregs[v].full))
          rc = rs_mir_why(w, nw, "%s of %s: a lane instruction names other SGPRs", rs_func_opcode(g, &g->insts[i]),
                   g->vregs[v].name);
      }
    }
    for (uint32_t L = 0; L <= lg.nlines + 1; L++) free(addl[L]);
    free(addl);
    free(append);
    free(flat);
    free(lunit);
    free(lop);
    free(inst_at);
    rs_lines_free(&lg);
    rs_lines_free(&lq);
    if (rc) free(b.s);
    else out = b.s, *len = b.n;
  }
  free(gpair);
  free(taken);
  free(first);
  free(nlane);
  free(vbase);
  free(idef);
  free(lane);
  return out;
}
