/* spills.c - ptxas's spill slots ([R1+k] words stored by STL, loaded by LDL) found, promoted to
 * values of free mode in place, written back and checked (sass/spills.h says the rules). */
#include "sass/spills.h"
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool has_mod(const char *mn, const char *mod) {
  size_t n = strlen(mod);
  for (const char *p = strchr(mn, '.'); p; p = strchr(p + 1, '.'))
    if (!strncmp(p + 1, mod, n) && (p[1 + n] == '.' || !p[1 + n])) return true;
  return false;
}

static bool is_op(const char *mn, const char *op) {
  size_t n = strlen(op);
  return !strncmp(mn, op, n) && (mn[n] == '.' || !mn[n]);
}

static uint32_t unit_of(const rs_target *t, const char *name) {
  rs_preg r;
  return t->parse_preg(t, name, strlen(name), &r) ? UINT32_MAX : r.unit;
}

/* The immediate text of op as a number (hex or decimal); false when it is none. */
static bool imm_of(const rs_func *f, const rs_operand *op, long *v) {
  if (op->kind != RS_OP_IMM || !op->text_len || op->text_len > 30) return false;
  char b[32];
  memcpy(b, f->src + op->text_off, op->text_len);
  b[op->text_len] = 0;
  char *end;
  *v = strtol(b, &end, 0);
  if (op->text_off && f->src[op->text_off - 1] == '-') *v = -*v; /* the parser leaves the sign out */
  return *end == 0;
}

bool rs_spills_is_rewrite(const char *x, const char *y) {
  return (is_op(x, "STL") || is_op(x, "LDL")) && (!strcmp(y, "MOV") || !strcmp(y, "NOP") || !strcmp(y, "IMAD.WIDE.U32"));
}

void rs_spills_free(rs_spills *s) {
  free(s->acc);
  free(s->webs);
  memset(s, 0, sizeof *s);
}

/* Reads of R1 that keep the frame's address inside: an STL/LDL [R1(+imm)] base, the implicit
 * stack-pointer read of EXIT/RET/CALL, the prologue's IADD3 R1, R1, -F. */
int rs_spills_find(const rs_func *f, rs_spills *s, rs_err *e) {
  (void)e;
  memset(s, 0, sizeof *s);
  const rs_target *t = f->tgt;
  uint32_t r1 = unit_of(t, "R1");
  uint32_t capacc = 0;
  char *ref = s->refused;
  size_t refn = sizeof s->refused;
  for (uint32_t i = 0; i < f->ninsts; i++) {
    const rs_inst *in = &f->insts[i];
    const char *mn = rs_func_opcode(f, in);
    bool stl = is_op(mn, "STL"), ldl = is_op(mn, "LDL");
    if (!strncmp(mn, "CALL.ABS", 8) && !*ref) snprintf(ref, refn, "an external call at /*%04x*/", in->addr);
    if (stl || ldl) {
      /* [base(+imm)]: the base is the first register operand that is not the load's result */
      uint32_t b = ldl ? 1 : 0;
      const rs_operand *base = b < in->nops ? &f->ops[in->first_op + b] : NULL;
      if (!base || base->kind != RS_OP_PREG || base->reg != r1) {
        if (!*ref) snprintf(ref, refn, "a local access not through R1 at /*%04x*/ (%s)", in->addr, mn);
        continue;
      }
      long off = 0;
      if (b + 1 < in->nops && f->ops[in->first_op + b + 1].kind == RS_OP_IMM &&
          !imm_of(f, &f->ops[in->first_op + b + 1], &off)) {
        if (!*ref) snprintf(ref, refn, "an address offset not read at /*%04x*/", in->addr);
        continue;
      }
      if (off < 0 || off % 4) {
        if (!*ref) snprintf(ref, refn, "an unaligned or negative frame offset at /*%04x*/", in->addr);
        continue;
      }
      rs_spill_access a = {i, (uint32_t)off, stl, 1, -1};
      if (has_mod(mn, "64")) a.words = 2;
      if (has_mod(mn, "128")) a.words = 4;
      RS_PUSH(s->acc, s->nacc, capacc, a);
      if (stl) s->stores++;
      else s->loads++;
      continue;
    }
    for (uint32_t o = 0; o < in->nops; o++) {
      const rs_operand *op = &f->ops[in->first_op + o];
      if (op->kind != RS_OP_PREG || op->reg != r1 || !op->lanes) continue;
      bool prologue_mov = (is_op(mn, "MOV") || is_op(mn, "LDC")) && (op->flags & RS_F_DEF) && o == 0 && in->nops == 2 &&
                          f->ops[in->first_op + 1].kind == RS_OP_OTHER;
      /* ptxas's other form of it: IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] (sgemm_tiled DTYPE=double at .maxnreg 96) */
      if (!strcmp(mn, "IMAD.MOV.U32") && (op->flags & RS_F_DEF) && o == 0 && in->nops == 4 &&
          f->ops[in->first_op + 3].kind == RS_OP_OTHER) {
        bool rz = true;
        for (uint32_t q = 1; q < 3; q++)
          rz &= f->ops[in->first_op + q].kind == RS_OP_PREG && f->ops[in->first_op + q].reg == unit_of(t, "RZ");
        prologue_mov = rz;
      }
      bool prologue_add = false;
      if (is_op(mn, "IADD3") && in->nops == 4 && f->ops[in->first_op].kind == RS_OP_PREG &&
          f->ops[in->first_op].reg == r1 && f->ops[in->first_op + 1].kind == RS_OP_PREG &&
          f->ops[in->first_op + 1].reg == r1) {
        long v;
        if (imm_of(f, &f->ops[in->first_op + 2], &v) && v <= 0) {
          prologue_add = true;
          if (o == 0) s->frame = (uint32_t)-v;
        }
      }
      /* sm_90's form: VIADD R1, R1, 0xffffff60 (the 32-bit immediate of -F) */
      if (is_op(mn, "VIADD") && in->nops == 3 && f->ops[in->first_op].kind == RS_OP_PREG &&
          f->ops[in->first_op].reg == r1 && f->ops[in->first_op + 1].kind == RS_OP_PREG &&
          f->ops[in->first_op + 1].reg == r1) {
        long v;
        if (imm_of(f, &f->ops[in->first_op + 2], &v) && v > 0x7fffffffL && v <= 0xffffffffL) {
          prologue_add = true;
          if (o == 0) s->frame = (uint32_t)(0x100000000L - v);
        }
      }
      bool entry = in->line <= f->insts[0].line + 64 && i < 64; /* the prologue's place */
      if ((op->flags & RS_F_IMPLICIT) && !(op->flags & RS_F_DEF)) continue; /* EXIT/RET/CALL's stack pointer */
      if (entry && (prologue_mov || prologue_add)) continue;
      if (!*ref)
        snprintf(ref, refn, "R1 %s at /*%04x*/ (%s)", (op->flags & RS_F_DEF) ? "written" : "read (the frame's address escapes)",
                 in->addr, mn);
    }
  }
  /* words: bad = touched by an access that is not a plain unpredicated STL / LDL / LDL.LU (.64/.128) */
  uint32_t nw = 0;
  for (uint32_t a = 0; a < s->nacc; a++)
    if (s->acc[a].off / 4 + s->acc[a].words > nw) nw = s->acc[a].off / 4 + s->acc[a].words;
  uint8_t *bad = rs_xcalloc(nw + 1, 1); /* 1: not promotable */
  for (uint32_t a = 0; a < s->nacc; a++) {
    const rs_spill_access *x = &s->acc[a];
    const rs_inst *in = &f->insts[x->inst];
    const char *mn = rs_func_opcode(f, in);
    const char *plain_st[] = {"STL", "STL.64", "STL.128"}, *plain_ld[] = {"LDL", "LDL.64", "LDL.128"},
               *plain_lu[] = {"LDL.LU", "LDL.LU.64", "LDL.LU.128"};
    unsigned wi = x->words == 1 ? 0 : x->words == 2 ? 1 : 2;
    bool plain = x->store ? !strcmp(mn, plain_st[wi]) : (!strcmp(mn, plain_ld[wi]) || !strcmp(mn, plain_lu[wi]));
    if (!plain || (in->flags & RS_I_PREDICATED) || (x->off / 4) % x->words)
      for (uint32_t w = 0; w < x->words; w++) bad[x->off / 4 + w] = 1;
  }
  /* reaching stores per word: a site per (good store, word it writes), then one entry site per word */
  bool *good = rs_xcalloc(s->nacc + 1, sizeof *good);
  uint32_t *site_of = rs_xmalloc(sizeof *site_of * (s->nacc + 1)); /* access -> its first site (stores) */
  uint32_t nsites = 0;
  for (uint32_t a = 0; a < s->nacc; a++) {
    good[a] = true;
    for (uint32_t w = 0; w < s->acc[a].words; w++) good[a] &= !bad[s->acc[a].off / 4 + w];
    site_of[a] = s->acc[a].store && good[a] ? nsites : UINT32_MAX;
    if (site_of[a] != UINT32_MAX) nsites += s->acc[a].words;
  }
  uint32_t *acc_at = rs_xmalloc(sizeof *acc_at * (f->ninsts + 1));
  for (uint32_t i = 0; i < f->ninsts; i++) acc_at[i] = UINT32_MAX;
  for (uint32_t a = 0; a < s->nacc; a++) acc_at[s->acc[a].inst] = a;
  uint32_t *word_site = rs_xmalloc(sizeof *word_site * (nsites + 1)); /* site -> word */
  uint32_t *site_acc = rs_xmalloc(sizeof *site_acc * (nsites + 1));  /* site -> access */
  for (uint32_t a = 0; a < s->nacc; a++)
    for (uint32_t w = 0; site_of[a] != UINT32_MAX && w < s->acc[a].words; w++)
      word_site[site_of[a] + w] = s->acc[a].off / 4 + w, site_acc[site_of[a] + w] = a;
  size_t W = RS_WORDS(nsites + nw) + 1;
  rs_word *in = rs_xcalloc(W * (f->nblocks + 1), sizeof *in), *out = rs_xcalloc(W * (f->nblocks + 1), sizeof *out);
  rs_word *cur = rs_xcalloc(W, sizeof *cur);
  uint32_t *par = rs_xmalloc(sizeof *par * (s->nacc + 1));
  for (uint32_t a = 0; a < s->nacc; a++) par[a] = a;
  uint8_t *web_bad = rs_xcalloc(s->nacc + 1, 1); /* per access: a load may read a word before any store */
#define STEP(ii)                                                                                                   \
  do {                                                                                                             \
    uint32_t a_ = acc_at[ii];                                                                                      \
    if (a_ != UINT32_MAX && site_of[a_] != UINT32_MAX)                                                             \
      for (uint32_t k_ = 0; k_ < s->acc[a_].words; k_++) {                                                         \
        uint32_t w_ = s->acc[a_].off / 4 + k_;                                                                     \
        for (uint32_t z = 0; z < nsites; z++)                                                                      \
          if (word_site[z] == w_) rs_bs_clr(cur, z);                                                               \
        rs_bs_clr(cur, nsites + w_);                                                                               \
        rs_bs_set(cur, site_of[a_] + k_);                                                                          \
      }                                                                                                            \
  } while (0)
  /* per word, its sites: a list would be faster; frames are small (a few hundred words) */
  for (bool changed = true; changed && nsites;) {
    changed = false;
    for (uint32_t bi = 0; bi < f->nblocks; bi++) {
      const rs_block *b = &f->blocks[bi];
      rs_word *bin = in + W * bi;
      if (bi == 0 || !b->npreds)
        for (uint32_t w = 0; w < nw; w++) rs_bs_set(bin, nsites + w);
      for (uint32_t p = 0; p < b->npreds; p++)
        for (size_t w = 0; w < W; w++) bin[w] |= out[W * b->preds[p] + w];
      memcpy(cur, bin, W * sizeof *cur);
      for (uint32_t k = 0; k < b->ninsts; k++) STEP(b->first_inst + k);
      if (memcmp(cur, out + W * bi, W * sizeof *cur)) {
        memcpy(out + W * bi, cur, W * sizeof *cur);
        changed = true;
      }
    }
  }
  for (uint32_t bi = 0; bi < f->nblocks && nsites; bi++) {
    const rs_block *b = &f->blocks[bi];
    memcpy(cur, in + W * bi, W * sizeof *cur);
    for (uint32_t k = 0; k < b->ninsts; k++) {
      uint32_t ii = b->first_inst + k, a = acc_at[ii];
      if (a != UINT32_MAX && !s->acc[a].store && good[a])
        for (uint32_t q = 0; q < s->acc[a].words; q++) {
          uint32_t w = s->acc[a].off / 4 + q;
          if (rs_bs_get(cur, nsites + w)) web_bad[a] = 1;
          for (uint32_t z = 0; z < nsites; z++)
            if (word_site[z] == w && rs_bs_get(cur, z)) rs_uf_union(par, a, site_acc[z]);
        }
      STEP(ii);
    }
  }
#undef STEP
  /* webs: a web's slot is the span of its accesses, which must be 1, 2 or 4 words aligned to its
   * size (a pair stored whole and loaded as two words is one pair value) */
  uint32_t *web_of = rs_xmalloc(sizeof *web_of * (s->nacc + 1)), capw = 0;
  uint32_t *span_end = NULL, cap_end = 0, n_end = 0;
  for (uint32_t a = 0; a < s->nacc; a++) web_of[a] = UINT32_MAX;
  for (uint32_t a = 0; a < s->nacc; a++) {
    const rs_spill_access *x = &s->acc[a];
    uint32_t r = rs_uf_find(par, a);
    if (web_of[r] == UINT32_MAX) {
      rs_spill_web w = {0};
      w.off = x->off;
      w.words = x->words;
      w.first = x->inst;
      w.ok = true;
      RS_PUSH(s->webs, s->nwebs, capw, w);
      RS_PUSH(span_end, n_end, cap_end, x->off + 4 * x->words);
      web_of[r] = s->nwebs - 1;
    }
    rs_spill_web *w = &s->webs[web_of[r]];
    s->acc[a].web = (int32_t)web_of[r];
    if (x->store) w->nstores++;
    else w->nloads++;
    if (x->inst < w->first) w->first = x->inst;
    if (x->off < w->off) w->off = x->off;
    if (x->off + 4 * x->words > span_end[web_of[r]]) span_end[web_of[r]] = x->off + 4 * x->words;
    if (w->ok && *ref) w->ok = false, snprintf(w->why, sizeof w->why, "%s", ref);
    else if (w->ok && !good[a])
      w->ok = false, snprintf(w->why, sizeof w->why, "a misaligned, sub-word or predicated access of [R1+0x%x]", x->off);
  }
  for (uint32_t k = 0; k < s->nwebs; k++) {
    rs_spill_web *w = &s->webs[k];
    w->words = (span_end[k] - w->off) / 4;
    if (w->ok && ((w->words != 1 && w->words != 2 && w->words != 4) || (w->off / 4) % w->words))
      w->ok = false, snprintf(w->why, sizeof w->why, "its accesses span [R1+0x%x, +%u words): not a register, pair or quad", w->off,
                              w->words);
  }
  for (uint32_t a = 0; a < s->nacc; a++) {
    rs_spill_web *w = &s->webs[s->acc[a].web];
    if (web_bad[a] && w->ok) w->ok = false, snprintf(w->why, sizeof w->why, "a load may read [R1+0x%x] before any store", w->off);
  }
  free(span_end);
  free(good);
  free(bad);
  free(site_of);
  free(acc_at);
  free(word_site);
  free(in);
  free(out);
  free(cur);
  free(par);
  free(web_bad);
  free(site_acc);
  free(web_of);
  return 0;
}

/* The slot value's operand of an access of `words` words at word `at` of its slot. */
static rs_operand slot_op(uint32_t vreg, unsigned words, unsigned at, bool def, const rs_operand *text) {
  rs_operand o = {0};
  o.kind = RS_OP_VREG;
  o.flags = def ? RS_F_DEF : 0;
  o.reg = vreg;
  o.lanes = rs_lanes_full(words) << (2 * at);
  o.text_off = text->text_off; /* a token of the old line: write-back replaces the whole line */
  o.text_len = text->text_len;
  return o;
}

uint32_t rs_spills_apply(rs_func *f, const rs_spills *s, const uint8_t *promote, int32_t *slot_vreg) {
  const rs_target *t = f->tgt;
  uint32_t *acc_at = rs_xmalloc(sizeof *acc_at * (f->ninsts + 1));
  for (uint32_t i = 0; i < f->ninsts; i++) acc_at[i] = UINT32_MAX;
  for (uint32_t a = 0; a < s->nacc; a++)
    if (s->acc[a].web >= 0 && promote[s->acc[a].web] && s->webs[s->acc[a].web].ok) acc_at[s->acc[a].inst] = a;
  int cls[5] = {-1, rs_target_class(t, "r32", 3), rs_target_class(t, "r64", 3), -1, rs_target_class(t, "r128", 4)};
  uint32_t r0 = unit_of(t, "R0");
  for (uint32_t w = 0; w < s->nwebs; w++) {
    slot_vreg[w] = -1;
    if (!promote[w] || !s->webs[w].ok || !s->webs[w].nloads) continue;
    char nm[48];
    snprintf(nm, sizeof nm, "slot[R1+0x%x]@%04x", s->webs[w].off, (unsigned)f->insts[s->webs[w].first].addr);
    rs_vreg v = {0};
    v.name = rs_xstrndup(nm, strlen(nm));
    unsigned nwd = s->webs[w].words;
    v.cls = cls[nwd];
    v.width = nwd;
    v.full = rs_lanes_full(nwd);
    v.line = f->insts[s->webs[w].first].line;
    v.hint_preg_unit = -1;
    RS_PUSH(f->vregs, f->nvregs, f->capvregs, v);
    f->truth = rs_xrealloc(f->truth, sizeof *f->truth * f->capvregs);
    f->truth[f->nvregs - 1] = (rs_preg){r0, rs_lanes_full(nwd)}; /* none: a placeholder in the R file (scoreboard.c asks the file) */
    slot_vreg[w] = (int32_t)f->nvregs - 1;
  }
  rs_operand *ops = rs_xmalloc(sizeof *ops * (f->nops + 1));
  uint32_t n = 0, done = 0, mov = rs_intern_get(&f->names, "MOV", 3), nop = rs_intern_get(&f->names, "NOP", 3);
  for (uint32_t i = 0; i < f->ninsts; i++) {
    rs_inst *in = &f->insts[i];
    const rs_operand *o = &f->ops[in->first_op];
    uint32_t first = n, a = acc_at[i];
    if (a == UINT32_MAX) {
      memcpy(ops + n, o, sizeof *ops * in->nops);
      n += in->nops;
    } else {
      const rs_spill_access *x = &s->acc[a];
      int32_t sv = slot_vreg[x->web];
      const rs_operand *base = &o[x->store ? 0 : 1];
      if (sv < 0) { /* a store no load reads */
        in->opcode = nop;
      } else if (x->store) {
        ops[n++] = slot_op((uint32_t)sv, x->words, (x->off - s->webs[x->web].off) / 4, true, base);
        ops[n] = o[in->nops - 1]; /* the stored register */
        ops[n].flags &= (uint16_t)~(RS_F_KILL | RS_F_DEAD);
        n++;
        in->opcode = mov;
      } else {
        ops[n++] = o[0]; /* the loaded register */
        ops[n++] = slot_op((uint32_t)sv, x->words, (x->off - s->webs[x->web].off) / 4, false, base);
        in->opcode = mov;
      }
      in->flags &= ~(uint32_t)RS_I_COPY;
      if (n - first == 2 && ops[first].kind == RS_OP_VREG && ops[first + 1].kind == RS_OP_VREG) in->flags |= RS_I_COPY;
      done++;
    }
    in->first_op = first;
    in->nops = n - first;
  }
  free(f->ops);
  f->capops = f->nops + 1;
  f->ops = ops;
  f->nops = n;
  free(acc_at);
  return done;
}

char *rs_spills_write(const char *text, const rs_func *f, const rs_preg *assign, uint32_t *nops) {
  const rs_target *t = f->tgt;
  size_t len = strlen(text), cap = len + 64, n = 0;
  char *out = rs_xmalloc(cap);
  uint32_t line = 1, ii = 0, movi = UINT32_MAX, nopi = UINT32_MAX;
  *nops = 0;
  for (uint32_t k = 0; k < f->ninsts; k++) { /* interned ids of MOV and NOP */
    const char *mn = rs_func_opcode(f, &f->insts[k]);
    if (!strcmp(mn, "MOV") && movi == UINT32_MAX) movi = f->insts[k].opcode;
    if (!strcmp(mn, "NOP") && nopi == UINT32_MAX) nopi = f->insts[k].opcode;
  }
  /* rewritten instructions: opcode MOV/NOP with an operand printed inside an STL/LDL line */
  for (const char *p = text; *p;) {
    const char *le = strchr(p, '\n');
    size_t ll = le ? (size_t)(le - p) + 1 : strlen(p);
    while (ii < f->ninsts && f->insts[ii].line < line) ii++;
    const rs_inst *in = ii < f->ninsts && f->insts[ii].line == line ? &f->insts[ii] : NULL;
    const char *semi = in ? memchr(p, ';', ll) : NULL;
    const char *ac = in ? strstr(p, "*/") : NULL;
    bool stl_ldl = false;
    const char *st = NULL;
    if (in && semi && ac && ac < semi) {
      st = ac + 2;
      while (st < semi && *st == ' ') st++;
      stl_ldl = !strncmp(st, "STL", 3) || !strncmp(st, "LDL", 3);
    }
    char ins[80] = "";
    if (stl_ldl && (in->opcode == movi || in->opcode == nopi)) {
      char r[2][24];
      unsigned words = 1;
      if (in->nops) {
        rs_lanes l = f->ops[in->first_op].lanes;
        words = l ? rs_lanes_units(l >> (__builtin_ctzll(l) & ~1u)) : 1;
      }
      for (uint32_t o = 0; o < in->nops && o < 2; o++) {
        const rs_operand *op = &f->ops[in->first_op + o];
        unsigned lo = op->lanes ? (unsigned)__builtin_ctzll(op->lanes) / 2 : 0; /* R95 of a quad at R92 */
        rs_preg x = op->kind == RS_OP_VREG ? (rs_preg){assign[op->reg].unit + lo, 3} : (rs_preg){op->reg, 3};
        t->format_preg(t, x, r[o], sizeof r[o]);
      }
      if (in->opcode == nopi || !strcmp(r[0], r[1])) snprintf(ins, sizeof ins, "NOP "), ++*nops;
      else if (words == 1) snprintf(ins, sizeof ins, "MOV %s, %s ", r[0], r[1]);
      else if (words == 2) snprintf(ins, sizeof ins, "IMAD.WIDE.U32 %s, RZ, RZ, %s ", r[0], r[1]); /* 0 * 0 + pair */
      else snprintf(ins, sizeof ins, "NO_128_BIT_COPY %s, %s ", r[0], r[1]); /* placement never asks: the re-lift refuses */
    }
    size_t need = n + ll + 64;
    if (need > cap) out = rs_xrealloc(out, cap = need * 2);
    if (*ins) {
      size_t pre = (size_t)(st - p), il = strlen(ins);
      memcpy(out + n, p, pre);
      n += pre;
      memcpy(out + n, ins, il);
      n += il;
      memcpy(out + n, semi, ll - (size_t)(semi - p));
      n += ll - (size_t)(semi - p);
    } else {
      memcpy(out + n, p, ll);
      n += ll;
    }
    p += ll;
    line++;
  }
  out[n] = 0;
  return out;
}
