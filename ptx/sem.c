/* sem.c - one function (PTX, or SASS with physical registers) as a semantic data-flow graph:
 * the driver. Each instruction's printed operands are read from its source line
 * (sem_operand.c), its row of the correspondence table (ptx2sass.c) is found, registers read are
 * linked to the defs that reach them (reach.c), and the rows' templates are evaluated into nodes
 * (sem_eval.c, through the canonicalising rules of sem_rules.c) until no more constants appear:
 * a constant known only through a register needs the uses first. Where ptxas computes the halves
 * of one 64-bit value in two instructions without a carry between them (SHF.L.U64.HI and a
 * 32-bit shift), the pair is found here first and both get the halves' rows. */
#include "ptx/sem_int.h"
#include <stdlib.h>

/* Shift amount of instruction ii under row r's template (`@pow2($2)`: operand 2 is k; else 2^k). */
static int shift_of(B *b, uint32_t ii, const rs_p2s_row *r) {
  const pop *p = rs_sem_opnd(b, ii, 2);
  uint64_t v;
  if (!p || p->kind != PK_IMM || !rs_sem_imm_bits(b->src + p->off, p->len, 'i', &v)) return -1;
  if (strstr(r->sem, "@pow2")) return v < 32 ? (int)v : -1;
  for (int k = 0; k < 32; k++)
    if (v == 1ull << k) return k;
  return -1;
}

/* Do operands 1 of instructions i and j read the same register with the same reaching defs? */
static bool same_source(B *b, uint32_t i, uint32_t j) {
  const pop *p = rs_sem_opnd(b, i, 1), *q = rs_sem_opnd(b, j, 1);
  if (!p || !q || p->kind != PK_REG || q->kind != PK_REG || p->use < 0 || q->use < 0) return false;
  const rs_suse *u = &b->g->uses[p->use], *v = &b->g->uses[q->use];
  uint32_t nu = u->raw[1] - u->raw[0], nv = v->raw[1] - v->raw[0];
  return u->loc == v->loc && nu == nv && !memcmp(b->g->srcs + u->raw[0], b->g->srcs + v->raw[0], nu * sizeof *b->g->srcs);
}

/* A 64-bit shift ptxas wrote as SHF.L.U64.HI (high) and a 32-bit shift (low): give the low one its
 * pair row, so both halves are one 64-bit value. Without a partner the low shift stays 32-bit. */
static void pair_halves(B *b) {
  const rs_func *f = b->f;
  for (uint32_t ii = 0; ii < f->ninsts; ii++) {
    const rs_p2s_row *r = b->row[ii];
    if (!r || strncmp(r->sem, "$0=@hi64(", 9)) continue;
    int k = shift_of(b, ii, r);
    for (uint32_t jj = 0; jj < f->ninsts && k >= 0; jj++) {
      const rs_p2s_row *pr = rs_p2s_find(rs_p2s_sass_pair, rs_p2s_nsass_pair, rs_func_opcode(f, &f->insts[jj]),
                                         b->inpop[jj]);
      if (pr && b->row[jj] != pr && shift_of(b, jj, pr) == k && same_source(b, ii, jj)) {
        b->row[jj] = pr;
        break;
      }
    }
  }
}

int rs_sgraph_build(rs_sgraph *g, const rs_func *f, rs_err *e) {
  memset(g, 0, sizeof *g);
  g->f = f;
  g->sass = f->kind == RS_SRC_SASS;
  g->nlocs = g->sass ? f->tgt->nunits : f->nvregs;
  B b;
  memset(&b, 0, sizeof b);
  b.g = g;
  b.f = f;
  b.e = e;
  b.src = f->src;
  b.param_base = rs_p2s_param_base(f->tgt);
  rs_sem_lines(&b);
  if (!g->sass) rs_sem_ptx_params(&b);
  b.ipop = rs_xcalloc(f->ninsts + 1, sizeof *b.ipop);
  b.inpop = rs_xcalloc(f->ninsts + 1, sizeof *b.inpop);
  b.row = rs_xcalloc(f->ninsts + 1, sizeof *b.row);
  b.gloc = rs_xmalloc(sizeof *b.gloc * (f->ninsts + 1));
  b.gneg = rs_xcalloc(f->ninsts + 1, 1);
  for (uint32_t ii = 0; ii <= f->ninsts; ii++) b.gloc[ii] = UINT32_MAX;
  /* operands: top-level pops of an instruction are contiguous; group elements follow them */
  for (uint32_t ii = 0; ii < f->ninsts; ii++) {
    const rs_inst *in = &f->insts[ii];
    uint32_t off, end;
    rs_sem_operand_span(&b, in, &off, &end);
    uint32_t cuts[64], nc = 0;
    int depth = 0;
    uint32_t start = off;
    for (uint32_t i = off; i <= end && nc < 63; i++) {
      char c = i < end ? b.src[i] : ',';
      if (c == '[' || c == '{' || c == '(') depth++;
      if (c == ']' || c == '}' || c == ')') depth--;
      if (c == ',' && depth == 0) {
        cuts[nc++] = start;
        cuts[nc++] = i;
        start = i + 1;
        if (nc >= 62) break;
      }
    }
    uint32_t ntop = nc / 2;
    if (ntop == 1) { /* no operands at all: the span is blank */
      bool blank = true;
      for (uint32_t i = cuts[0]; i < cuts[1]; i++) blank &= b.src[i] == ' ' || b.src[i] == '\t';
      if (blank) ntop = 0;
    }
    pop *tops = rs_xcalloc(ntop + 1, sizeof *tops);
    for (uint32_t k = 0; k < ntop; k++) {
      rs_sem_classify(&b, in, cuts[2 * k], cuts[2 * k + 1] - cuts[2 * k], &tops[k]);
    }
    /* group elements were pushed at mark..; move the tops after them */
    b.ipop[ii] = b.npops;
    b.inpop[ii] = ntop;
    for (uint32_t k = 0; k < ntop; k++) RS_PUSH(b.pops, b.npops, b.cappops, tops[k]);
    free(tops);
    b.row[ii] = g->sass ? rs_p2s_find(rs_p2s_sass, rs_p2s_nsass, rs_func_opcode(f, in), ntop)
                        : rs_p2s_find(rs_p2s_ptx, rs_p2s_nptx, rs_func_opcode(f, in), ntop);
  }
  rs_sgraph_reaching(g, b.gloc, b.gneg);
  if (g->sass) pair_halves(&b);
  rs_sem_patterns(&b);
  /* evaluate until no new constant is found through a register (at most a few rounds) */
  uint64_t prev = 0;
  for (int pass = 0; pass < 6; pass++) {
    g->nnodes = 0;
    g->nrefs = 0;
    for (uint32_t s = 0; s < g->nsites; s++) g->sites[s].node = UINT32_MAX, g->sites[s].part = 0;
    for (uint32_t ii = 0; ii < f->ninsts; ii++) rs_sem_eval_inst(&b, ii, false);
    /* sites nothing assigned (operands of a template that ignores them): opaque */
    for (uint32_t s = 0; s < g->nsites; s++)
      if (g->sites[s].node == UINT32_MAX) {
        b.cur_inst = g->sites[s].inst;
        rs_sarg r = rs_sem_node(&b, NULL, hmix(hs("unassigned"), s), NULL, 0, 1);
        g->nodes[r.idx].internal = false;
        g->sites[s].node = r.idx;
        g->sites[s].part = 0;
        g->sites[s].len = 1;
      }
    rs_sgraph_resolve(g);
    uint64_t h = 0;
    for (uint32_t n = 0; n < g->nnodes; n++) h = hmix(h, g->nodes[n].op ^ g->nodes[n].leaf);
    h = hmix(h, g->nnodes);
    if (pass && h == prev) break;
    prev = h;
  }
  for (uint32_t ii = 0; ii < f->ninsts; ii++)
    if (!b.row[ii]) rs_sem_note_unknown(g, rs_func_opcode(f, &f->insts[ii]));
  rs_sem_patterns_free(&b);
  free(b.pops);
  free(b.ipop);
  free(b.inpop);
  free(b.row);
  free(b.gloc);
  free(b.gneg);
  free(b.lstart);
  free(b.pname_off);
  free(b.pname_len);
  free(b.pbyte);
  free(b.sname_off);
  free(b.sname_len);
  free(b.sbyte);
  return 0;
}

void rs_sgraph_free(rs_sgraph *g) {
  free(g->nodes);
  free(g->sites);
  free(g->uses);
  free(g->srcs);
  free(g->ress);
  free(g->ref_node);
  free(g->ref_arg);
  free(g->ref_use);
  for (uint32_t i = 0; i < g->nunknown; i++) free(g->unknown[i]);
  free(g->unknown);
  free(g->nunknown_of);
  memset(g, 0, sizeof *g);
}
