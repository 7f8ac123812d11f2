/* rewrite.c - substitute physical registers for virtual ones in MIR text, as LLVM's
 * VirtRegRewriter would have: operands become `renamable $reg` (sub-register operands the
 * physical sub-register; `undef` leaves sub-register defs: with sub-register liveness AMDGPU
 * adds no super-register implicit defs), identity copies are deleted (or become KILL when their
 * source is undef or they carry extra operands), every block lists the registers of the virtual
 * registers live into it (with the live lanes when the value has sub-register operands, since
 * only then LLVM's interval has sub-ranges), and the registers table is emptied. Kill flags are
 * not added: they are optional after allocation and llc's output does not change without them
 * (checked on every fixture). Edits are made line by line on the printed text, so everything
 * else (IR module, frame info, memory operands) stays byte for byte. */
#include "analysis/liveness.h"
#include "emit/emit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *s;
  size_t n;
} span;

static const char *find(const char *h, size_t n, const char *needle, size_t m) {
  for (size_t i = 0; i + m <= n; i++)
    if (!memcmp(h + i, needle, m)) return h + i;
  return NULL;
}

static bool is_flag_word(const char *s, size_t n) {
  static const char *const w[] = {"implicit", "implicit-def", "def", "dead", "killed", "undef",
                                  "internal", "early-clobber", "debug-use", "renamable"};
  for (size_t i = 0; i < sizeof w / sizeof *w; i++)
    if (strlen(w[i]) == n && !memcmp(w[i], s, n)) return true;
  return false;
}

/* Where an operand's flag words begin: walk back over " word" while word is a flag. */
static size_t flags_start(const char *src, size_t line_off, size_t off) {
  size_t at = off;
  while (at > line_off + 1 && src[at - 1] == ' ') {
    size_t e = at - 1, s = e;
    while (s > line_off && src[s - 1] != ' ' && src[s - 1] != ',') s--;
    if (s == e || !is_flag_word(src + s, e - s)) break;
    at = s;
  }
  return at;
}


/* The physical register an operand names under the assignment. */
static int op_preg(const rs_func *f, const rs_preg *assign, const rs_operand *o, rs_preg *out, rs_err *e,
                   uint32_t line) {
  if (o->kind == RS_OP_PREG) {
    *out = (rs_preg){o->reg, o->lanes};
    return 0;
  }
  rs_preg r = assign[o->reg];
  if (!r.lanes) return rs_errf(e, f->path, line, "%s has no register in the answer", f->vregs[o->reg].name);
  if (!(o->flags & RS_F_SUBREG)) {
    *out = (rs_preg){r.unit, f->vregs[o->reg].full};
    return 0;
  }
  int d = rs_lanes_first(o->lanes);
  *out = (rs_preg){r.unit + (uint32_t)d, o->lanes >> (2 * d)};
  return 0;
}

/* New text for one virtual register operand: flags (minus `undef` on a sub-register def, plus
 * `renamable`), the register, and a `(tied-def N)` if it had one. */
static void op_text(rs_sbuf *b, const rs_func *f, const rs_operand *o, const char *flags, size_t nflags, rs_preg r,
                    bool kill) {
  bool renamable = false, placed = !kill;
  for (size_t i = 0; i < nflags;) {
    size_t j = i;
    while (j < nflags && flags[j] != ' ') j++;
    bool drop = j - i == 5 && !memcmp(flags + i, "undef", 5) && (o->flags & RS_F_SUBREG) && (o->flags & RS_F_DEF);
    drop |= j - i == 6 && !memcmp(flags + i, "killed", 6); /* recomputed */
    bool lead = (j - i == 8 && !memcmp(flags + i, "implicit", 8)) || (j - i == 4 && !memcmp(flags + i, "dead", 4));
    if (!placed && !lead) {
      rs_sbuf_puts(b, "killed "); /* LLVM's order: implicit, dead, killed, undef, ..., renamable */
      placed = true;
    }
    if (j - i == 9 && !memcmp(flags + i, "renamable", 9)) renamable = true;
    if (!drop && j > i) {
      rs_sbuf_put(b, flags + i, j - i);
      rs_sbuf_put(b, " ", 1);
    }
    i = j + 1;
  }
  if (!placed) rs_sbuf_puts(b, "killed ");
  if (!renamable) rs_sbuf_puts(b, "renamable ");
  char nm[320]; /* a 32-register tuple: 32 x "vgpr255_" */
  rs_sbuf_put(b, "$", 1);
  rs_sbuf_puts(b, rs_emit_mir_name(f->tgt, r, nm, sizeof nm));
  const char *t = f->src + o->text_off, *end = t + o->text_len;
  const char *tied = NULL;
  for (const char *c = t; c + 10 <= end; c++)
    if (!memcmp(c, "(tied-def ", 10)) tied = c;
  if (tied) {
    const char *q = memchr(tied, ')', (size_t)(end - tied));
    if (q) rs_sbuf_put(b, tied, (size_t)(q - tied + 1));
  }
}

/* A live-in list item "$name" or "$name:0xMASK". */
typedef struct {
  char name[320];
  rs_lanes mask; /* 0 = all lanes (printed without a mask) */
} livein;

static int cmp_livein(const void *x, const void *y) {
  const livein *a = x, *b = y;
  return rs_emit_livein_cmp(a->name, strlen(a->name), b->name, strlen(b->name));
}

static void add_livein(livein **v, uint32_t *n, uint32_t *cap, const char *name, rs_lanes mask) {
  for (uint32_t i = 0; i < *n; i++)
    if (!strcmp((*v)[i].name, name)) {
      (*v)[i].mask = (*v)[i].mask && mask ? (*v)[i].mask | mask : 0;
      return;
    }
  livein li;
  snprintf(li.name, sizeof li.name, "%s", name);
  li.mask = mask;
  RS_PUSH(*v, *n, *cap, li);
}

/* Parse an existing "liveins: a, b:0x3" line body. */
static void parse_liveins(const char *s, size_t n, livein **v, uint32_t *cnt, uint32_t *cap) {
  size_t i = 0;
  while (i < n) {
    while (i < n && (s[i] == ' ' || s[i] == ',')) i++;
    size_t j = i;
    while (j < n && s[j] != ',') j++;
    size_t e = j;
    while (e > i && s[e - 1] == ' ') e--;
    if (e > i && s[i] == '$') {
      const char *colon = memchr(s + i, ':', e - i);
      size_t nl = colon ? (size_t)(colon - (s + i)) : e - i;
      char nm[320];
      snprintf(nm, sizeof nm, "%.*s", (int)(nl - 1), s + i + 1);
      add_livein(v, cnt, cap, nm, colon ? strtoull(colon + 1, NULL, 16) : 0);
    }
    i = j + 1;
  }
}

static void print_liveins(rs_sbuf *b, const char *indent, size_t nind, livein *v, uint32_t n) {
  qsort(v, n, sizeof *v, cmp_livein);
  rs_sbuf_put(b, indent, nind);
  rs_sbuf_puts(b, "liveins: ");
  for (uint32_t i = 0; i < n; i++) {
    char m[32];
    if (i) rs_sbuf_puts(b, ", ");
    rs_sbuf_put(b, "$", 1);
    rs_sbuf_puts(b, v[i].name);
    if (v[i].mask) {
      snprintf(m, sizeof m, ":0x%016llX", (unsigned long long)v[i].mask);
      rs_sbuf_puts(b, m);
    }
  }
}

/* LLVM's liveness view for kill flags: an operand without a sub-register index reads and writes
 * the whole register (our liveness knows better for VOP3P sources, LLVM does not), a sub-register
 * operand the lanes of its index. Virtual registers only, same slots as rs_live. */
static rs_lanes subreg_index_lanes(const rs_func *f, const rs_operand *o) {
  if (!(o->flags & RS_F_SUBREG) || !o->subreg) return f->vregs[o->reg].full;
  const char *s = f->names.strs[o->subreg - 1];
  int first = -1, last = -1;
  rs_lanes half = 0;
  for (const char *c = s; *c;) {
    if (!strncmp(c, "sub", 3)) {
      int k = atoi(c + 3);
      if (first < 0) first = k;
      last = k;
    } else if (!strncmp(c, "lo16", 4)) half = 1;
    else if (!strncmp(c, "hi16", 4)) half = 2;
    const char *u = strchr(c, '_');
    if (!u) break;
    c = u + 1;
  }
  if (first < 0) first = last = 0;
  if (half) return (half << (2 * first)) & f->vregs[o->reg].full;
  return rs_lanes_full((unsigned)(last - first + 1)) << (2 * first);
}

static void llvm_step_back(const rs_func *f, const rs_live *lv, const rs_inst *in, rs_word *live) {
  for (uint32_t k = 0; k < in->nops; k++) {
    const rs_operand *o = &f->ops[in->first_op + k];
    if (o->kind != RS_OP_VREG || !(o->flags & RS_F_DEF) || lv->vslot[o->reg] == UINT32_MAX) continue;
    rs_lanes d = (o->flags & RS_F_SUBREG) && !(o->flags & RS_F_UNDEF) ? subreg_index_lanes(f, o) : f->vregs[o->reg].full;
    rs_bs_andnot_bits(live, lv->vslot[o->reg], d);
  }
  for (uint32_t k = 0; k < in->nops; k++) {
    const rs_operand *o = &f->ops[in->first_op + k];
    if (o->kind != RS_OP_VREG || (o->flags & (RS_F_DEF | RS_F_UNDEF)) || lv->vslot[o->reg] == UINT32_MAX) continue;
    rs_bs_or_bits(live, lv->vslot[o->reg], subreg_index_lanes(f, o));
  }
}

static rs_word *llvm_live_out(const rs_func *f, const rs_live *lv) {
  size_t W = lv->words;
  rs_word *out = rs_xcalloc((size_t)f->nblocks * W + 1, sizeof *out), *in = rs_xcalloc((size_t)f->nblocks * W + 1, sizeof *in);
  rs_word *cur = rs_xcalloc(W + 1, sizeof *cur);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t bi = f->nblocks; bi-- > 0;) {
      const rs_block *b = &f->blocks[bi];
      rs_word *o = out + (size_t)bi * W;
      for (uint32_t s = 0; s < b->nsuccs; s++)
        for (size_t w = 0; w < W; w++) o[w] |= in[(size_t)b->succs[s] * W + w];
      memcpy(cur, o, W * sizeof *cur);
      for (uint32_t i = b->ninsts; i-- > 0;) llvm_step_back(f, lv, &f->insts[b->first_inst + i], cur);
      rs_word *bin = in + (size_t)bi * W;
      for (size_t w = 0; w < W; w++)
        if (cur[w] != bin[w]) bin[w] = cur[w], changed = true;
    }
  }
  free(in);
  free(cur);
  return out;
}

/* Reads of lanes no definition reaches, in LLVM's view (a read without sub-register index reads
 * every lane): LLVM puts no kill on a partly undefined read. */
static bool *llvm_undef_reads(const rs_func *f, const rs_live *lv) {
  bool *u = rs_xcalloc(f->nops + 1, 1);
  rs_word *cur = rs_xcalloc(lv->words + 1, sizeof *cur);
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    const rs_block *b = &f->blocks[bi];
    memcpy(cur, lv->defin + (size_t)bi * lv->words, sizeof *cur * lv->words);
    for (uint32_t i = 0; i < b->ninsts; i++) {
      const rs_inst *in = &f->insts[b->first_inst + i];
      for (uint32_t k = 0; k < in->nops; k++) {
        const rs_operand *o = &f->ops[in->first_op + k];
        if (o->kind != RS_OP_VREG || (o->flags & (RS_F_DEF | RS_F_UNDEF)) || lv->vslot[o->reg] == UINT32_MAX) continue;
        rs_lanes want = subreg_index_lanes(f, o);
        unsigned nb = 2u * f->vregs[o->reg].width;
        if (want & ~rs_bs_get_bits(cur, lv->vslot[o->reg], nb > 64 ? 64 : nb)) u[in->first_op + k] = true;
      }
      for (uint32_t k = 0; k < in->nops; k++) {
        const rs_operand *o = &f->ops[in->first_op + k];
        if (o->kind != RS_OP_VREG || !(o->flags & RS_F_DEF) || lv->vslot[o->reg] == UINT32_MAX) continue;
        if ((o->flags & RS_F_SUBREG) && (o->flags & RS_F_UNDEF)) rs_bs_andnot_bits(cur, lv->vslot[o->reg], f->vregs[o->reg].full);
        rs_bs_or_bits(cur, lv->vslot[o->reg], subreg_index_lanes(f, o));
      }
    }
  }
  free(cur);
  return u;
}

/* Values of the answer per register unit. */
static uint32_t **unit_owners(const rs_func *f, const rs_preg *assign) {
  uint32_t **own = rs_xcalloc(f->tgt->nunits + 1, sizeof *own);
  uint32_t *cnt = rs_xcalloc(f->tgt->nunits + 1, sizeof *cnt);
  for (uint32_t v = 0; v < f->nvregs; v++)
    for (unsigned u = 0; assign[v].lanes && u < f->vregs[v].width; u++)
      if (assign[v].unit + u < f->tgt->nunits) cnt[assign[v].unit + u]++;
  for (uint32_t u = 0; u < f->tgt->nunits; u++)
    if (cnt[u]) {
      own[u] = rs_xcalloc(cnt[u] + 1, sizeof **own);
      own[u][0] = 0;
    }
  for (uint32_t v = 0; v < f->nvregs; v++)
    for (unsigned u = 0; assign[v].lanes && u < f->vregs[v].width; u++) {
      uint32_t x = assign[v].unit + u;
      if (x < f->tgt->nunits) own[x][1 + own[x][0]++] = v;
    }
  free(cnt);
  return own;
}

/* Would killing v's register end another value the answer keeps there, live after the read? (The
 * verifier lets a value take lanes of a tuple that are dead at that point, e.g. the lanes of a
 * copy source whose copy is dead; LLVM's own allocations do the same.) */
static bool defined_by(const rs_func *f, const rs_inst *in, uint32_t w) {
  for (uint32_t k = 0; k < in->nops; k++) {
    const rs_operand *o = &f->ops[in->first_op + k];
    if (o->kind == RS_OP_VREG && (o->flags & RS_F_DEF) && o->reg == w) return true;
  }
  return false;
}

static bool overlaps_live(const rs_func *f, const rs_live *lv, const rs_preg *assign, uint32_t **owners,
                          const rs_operand *o, const rs_inst *in, const rs_word *live) {
  uint32_t v = o->reg;
  rs_preg named;
  rs_err e;
  if (op_preg(f, assign, o, &named, &e, 0)) return true;
  for (unsigned u = 0; u < rs_lanes_units(named.lanes); u++) { /* the register the kill names */
    uint32_t x = named.unit + u;
    if (x >= f->tgt->nunits || !owners[x]) continue;
    for (uint32_t i = 0; i < owners[x][0]; i++) {
      uint32_t w = owners[x][1 + i];
      if (w == v || lv->vslot[w] == UINT32_MAX || defined_by(f, in, w)) continue; /* a new value from here */
      unsigned k = x - assign[w].unit;
      if (rs_bs_get_bits(live, lv->vslot[w] + 2 * k, 2)) return true;
    }
  }
  return false;
}

/* Kill flags as LiveIntervals::addKillFlags gives them: the first read of a value at the end of
 * its live segment, i.e. no lane of it live after the instruction, or the instruction rewrites it
 * whole, in LLVM's liveness view (llvm_step_back). No kill when the instruction writes only a
 * sub-register (the next segment is adjacent), when a read lane has no reaching definition, when
 * another value of the answer lives in part of the register past the read (overlaps_live), or
 * when a physical register of the assigned register stays live past the read
 * (`$x = COPY %5; FOO %5; BAR killed $x`). */
static bool *kill_flags(const rs_func *f, const rs_live *lv, const rs_preg *assign) {
  bool *kill = rs_xcalloc(f->nops + 1, 1);
  rs_word *live = rs_xcalloc(lv->words + 1, sizeof *live), *llv = rs_xcalloc(lv->words + 1, sizeof *llv);
  rs_word *lout = llvm_live_out(f, lv);
  uint32_t **owners = unit_owners(f, assign);
  bool *lundef = llvm_undef_reads(f, lv);
  for (uint32_t bi = 0; bi < f->nblocks; bi++) {
    const rs_block *bk = &f->blocks[bi];
    memcpy(live, lv->out + (size_t)bi * lv->words, sizeof *live * lv->words);
    memcpy(llv, lout + (size_t)bi * lv->words, sizeof *llv * lv->words);
    for (uint32_t ii = bk->ninsts; ii-- > 0;) {
      const rs_inst *in = &f->insts[bk->first_inst + ii];
      for (uint32_t k = 0; k < in->nops; k++) {
        const rs_operand *o = &f->ops[in->first_op + k];
        if (o->kind != RS_OP_VREG || (o->flags & (RS_F_DEF | RS_F_UNDEF))) continue;
        uint32_t v = o->reg;
        bool first = true, full_def = false, part_def = false, undef_read = false;
        for (uint32_t j = 0; j < in->nops; j++) {
          const rs_operand *q = &f->ops[in->first_op + j];
          if (q->kind != RS_OP_VREG || q->reg != v) continue;
          if (q->flags & RS_F_DEF) {
            if (q->flags & RS_F_SUBREG) part_def = true;
            else full_def = true;
          } else if (!(q->flags & RS_F_UNDEF)) {
            if (j < k) first = false;
            if (lv->uundef[in->first_op + j] || lundef[in->first_op + j]) undef_read = true;
          }
        }
        if (!first || lv->vslot[v] == UINT32_MAX) continue;
        unsigned nb = 2u * f->vregs[v].width;
        rs_lanes after = rs_bs_get_bits(live, lv->vslot[v], nb > 64 ? 64 : nb) & f->vregs[v].full;
        bool kl = full_def || (!part_def && !after);
        if (kl && undef_read) kl = false;
        /* LLVM's view decides (it reads a whole register where no sub-register is named) */
        rs_lanes lafter = rs_bs_get_bits(llv, lv->vslot[v], nb > 64 ? 64 : nb) & f->vregs[v].full;
        kl = full_def || (!part_def && !lafter);
        if (kl && undef_read) kl = false;
        if (kl && overlaps_live(f, lv, assign, owners, o, in, live)) kl = false;
        for (unsigned u = 0; kl && assign[v].lanes && u < f->vregs[v].width; u++) {
          rs_operand pr = {0};
          pr.kind = RS_OP_PREG;
          pr.reg = assign[v].unit + u;
          pr.lanes = 3;
          uint32_t ps = pr.reg < f->tgt->nunits ? rs_live_op_slot(lv, &pr) : UINT32_MAX;
          if (ps != UINT32_MAX && rs_bs_get_bits(live, ps, 2)) kl = false;
        }
        kill[in->first_op + k] = kl;
      }
      rs_live_step_back(lv, in, live);
      llvm_step_back(f, lv, in, llv);
    }
  }
  free(live);
  free(llv);
  free(lout);
  free(lundef);
  for (uint32_t u = 0; u < f->tgt->nunits; u++) free(owners[u]);
  free(owners);
  return kill;
}

char *rs_emit_rewrite(const rs_func *f, const rs_preg *assign, rs_rewrite_stats *st, rs_err *e) {
  memset(st, 0, sizeof *st);
  if (f->kind != RS_SRC_MIR || f->tgt->vendor != RS_AMD)
    return rs_errf(e, f->path, 0, "%s: emit needs AMDGPU MIR (PTX/SASS has no assembler here)", f->name), NULL;
  const char *src = f->src;
  size_t len = strlen(src);
  /* line table */
  uint32_t nlines = 0, cap = 0;
  size_t *ls = NULL;
  for (size_t o = 0; o < len;) {
    RS_PUSH(ls, nlines, cap, o);
    const char *nl = memchr(src + o, '\n', len - o);
    o = nl ? (size_t)(nl - src) + 1 : len;
  }
  RS_PUSH(ls, nlines, cap, len);
  nlines--; /* ls[nlines] = end */
#define LEND(i) (ls[(i) + 1] > ls[i] && src[ls[(i) + 1] - 1] == '\n' ? ls[(i) + 1] - 1 : ls[(i) + 1])
  char **repl = rs_xcalloc(nlines + 1, sizeof *repl), **after = rs_xcalloc(nlines + 1, sizeof *after);
  bool *del = rs_xcalloc(nlines + 1, 1);
  int rc = 0;
  rs_sbuf b = {0};

  /* the function's YAML document: empty the registers table, forget virtual-reg links */
  uint32_t fl = f->line ? f->line - 1 : 0, fend = fl;
  while (fend < nlines && !(fend > fl && (!strncmp(src + ls[fend], "---", 3) || !strncmp(src + ls[fend], "...", 3) ||
                                         !strncmp(src + ls[fend], "name:", 5))))
    fend++;
  for (uint32_t i = fl; i < fend; i++) {
    const char *t = src + ls[i];
    size_t n = LEND(i) - ls[i];
    if (n >= 10 && !strncmp(t, "registers:", 10)) {
      repl[i] = rs_xstrndup("registers:       []", 19);
      for (uint32_t j = i + 1; j < fend && src[ls[j]] == ' '; j++) del[j] = true;
    } else if (n > 2 && t[0] == ' ') {
      const char *v = find(t, n, "virtual-reg: '%", 15);
      if (v) {
        const char *q = memchr(v + 15, '\'', n - (size_t)(v + 15 - t));
        if (q) {
          b.n = 0;
          rs_sbuf_put(&b, t, (size_t)(v - t));
          rs_sbuf_puts(&b, "virtual-reg: ''");
          rs_sbuf_put(&b, q + 1, n - (size_t)(q + 1 - t));
          repl[i] = rs_xstrndup(b.s, b.n);
        }
      }
    }
  }

  rs_live *lv = rs_live_compute(f, e);
  if (!lv) rc = -1;
  bool *killop = rc ? NULL : kill_flags(f, lv, assign);

  /* instructions */
  for (uint32_t ii = 0; ii < f->ninsts && !rc; ii++) {
    const rs_inst *in = &f->insts[ii];
    for (uint32_t k = 0; k < in->nops; k++) { /* registers named (before any copy is deleted) */
      const rs_operand *o = &f->ops[in->first_op + k];
      rs_preg r;
      if ((o->kind != RS_OP_VREG && o->kind != RS_OP_PREG) || (o->kind == RS_OP_VREG && !assign[o->reg].lanes)) continue;
      op_preg(f, assign, o, &r, e, in->line);
      int fi = rs_target_file_of(f->tgt, r.unit);
      if (fi < 0 || fi >= RS_MAX_FILES) continue;
      unsigned top = r.unit - f->tgt->files[fi].first + rs_lanes_units(r.lanes);
      if (top > st->named[fi]) st->named[fi] = top;
    }
    uint32_t li = in->line - 1;
    if (li >= nlines) {
      rc = rs_errf(e, f->path, in->line, "instruction line out of range");
      break;
    }
    bool any = false, to_kill = false;
    for (uint32_t k = 0; k < in->nops; k++) any |= f->ops[in->first_op + k].kind == RS_OP_VREG;
    /* identity copy under the assignment? */
    if (!strcmp(rs_func_opcode(f, in), "COPY") && in->nops >= 2) {
      const rs_operand *d = &f->ops[in->first_op], *s = &f->ops[in->first_op + 1];
      rs_preg rd, rsrc;
      if ((d->kind == RS_OP_VREG || s->kind == RS_OP_VREG) && (d->kind == RS_OP_VREG || d->kind == RS_OP_PREG) &&
          (s->kind == RS_OP_VREG || s->kind == RS_OP_PREG)) {
        if (op_preg(f, assign, d, &rd, e, in->line) || op_preg(f, assign, s, &rsrc, e, in->line)) {
          rc = -1;
          break;
        }
        if (rd.unit == rsrc.unit && rd.lanes == rsrc.lanes) {
          if (!(s->flags & RS_F_UNDEF) && in->nops == 2 && !(in->flags & RS_I_BUNDLED)) {
            del[li] = true;
            st->copies_removed++;
            continue;
          }
          st->copies_killed++;
          to_kill = true;
        }
      }
    }
    if (!any) continue;
    size_t lo = ls[li], hi = LEND(li), at = lo;
    b.n = 0;
    for (uint32_t k = 0; k < in->nops && !rc; k++) {
      const rs_operand *o = &f->ops[in->first_op + k];
      if (o->kind != RS_OP_VREG) continue;
      if (o->text_off < at || o->text_off + o->text_len > hi) {
        rc = rs_errf(e, f->path, in->line, "operand text outside its line");
        break;
      }
      size_t fs = flags_start(src, lo, o->text_off);
      if (fs < at) fs = o->text_off;
      rs_preg r;
      if (op_preg(f, assign, o, &r, e, in->line)) {
        rc = -1;
        break;
      }
      rs_sbuf_put(&b, src + at, fs - at);
      op_text(&b, f, o, src + fs, o->text_off > fs ? o->text_off - fs - 1 : 0, r, killop[in->first_op + k]);
      at = o->text_off + o->text_len;
      st->operands++;
    }
    if (rc) break;
    rs_sbuf_put(&b, src + at, hi - at);
    if (to_kill) {
      /* identity copy with an undef source: LLVM keeps it as a KILL (liveness information) */
      char *c = strstr(b.s, "= COPY ");
      if (c) memcpy(c, "= KILL ", 7);
    }
    repl[li] = rs_xstrndup(b.s, b.n);
  }

  free(killop);
  /* block live-ins */
  if (!rc) {
    bool *sub = rs_xcalloc(f->nvregs + 1, 1);
    for (uint32_t k = 0; k < f->nops; k++)
      if (f->ops[k].kind == RS_OP_VREG && (f->ops[k].flags & RS_F_SUBREG)) sub[f->ops[k].reg] = true;
    rs_word *w = rs_xcalloc(lv->words + 1, sizeof *w);
    livein *lvec = NULL;
    uint32_t nl = 0, capl = 0;
    for (uint32_t bi = 0; bi < f->nblocks && !rc; bi++) {
      const rs_block *bk = &f->blocks[bi];
      rs_live_block_in(lv, bi, w);
      nl = 0;
      uint32_t added = 0;
      int lin = -1, anchor = (int)bk->line - 1;
      for (uint32_t i = bk->line; i < nlines; i++) {
        const char *t = src + ls[i];
        size_t n = LEND(i) - ls[i], s0 = 0;
        while (s0 < n && t[s0] == ' ') s0++;
        if (n - s0 >= 11 && !strncmp(t + s0, "successors:", 11)) anchor = (int)i;
        else if (n - s0 >= 8 && !strncmp(t + s0, "liveins:", 8)) lin = (int)i, anchor = (int)i;
        else break;
      }
      if (lin >= 0) {
        const char *t = src + ls[lin];
        size_t n = LEND((uint32_t)lin) - ls[lin];
        const char *c = find(t, n, "liveins:", 8);
        parse_liveins(c + 8, n - (size_t)(c + 8 - t), &lvec, &nl, &capl);
      }
      for (uint32_t v = 0; v < f->nvregs; v++) {
        if (lv->vslot[v] == UINT32_MAX || f->vregs[v].cls < 0) continue;
        unsigned nb = 2u * f->vregs[v].width;
        rs_lanes bits = rs_bs_get_bits(w, lv->vslot[v], nb > 64 ? 64 : nb) & f->vregs[v].full;
        if (!bits) continue;
        if (!assign[v].lanes) {
          rc = rs_errf(e, f->path, bk->line, "%s is live into %s but has no register in the answer", f->vregs[v].name,
                       bk->name);
          break;
        }
        rs_lanes m = 0;
        for (unsigned d = 0; d < f->vregs[v].width; d++)
          if (bits >> (2 * d) & 3) m |= (rs_lanes)3 << (2 * d);
        m &= f->vregs[v].full;
        char nm[320];
        rs_emit_mir_name(f->tgt, (rs_preg){assign[v].unit, f->vregs[v].full}, nm, sizeof nm);
        bool half = f->vregs[v].full == 1 || f->vregs[v].full == 2;
        add_livein(&lvec, &nl, &capl, nm, sub[v] && !half ? m : 0);
        added++;
      }
      if (rc || !added) continue;
      st->liveins_added += added;
      b.n = 0;
      if (lin >= 0) {
        const char *t = src + ls[lin];
        size_t ind = 0;
        while (t[ind] == ' ') ind++;
        print_liveins(&b, t, ind, lvec, nl);
        free(repl[lin]);
        repl[lin] = rs_xstrndup(b.s, b.n);
      } else {
        /* indent as the block's first body line (or 4) */
        print_liveins(&b, "    ", 4, lvec, nl);
        free(after[anchor]);
        after[anchor] = rs_xstrndup(b.s, b.n);
      }
    }
    free(lvec);
    free(w);
    free(sub);
  }
  rs_live_free(lv);

  char *out = NULL;
  if (!rc) {
    b.n = 0;
    for (uint32_t i = 0; i < nlines; i++) {
      if (!del[i]) {
        if (repl[i]) rs_sbuf_puts(&b, repl[i]);
        else rs_sbuf_put(&b, src + ls[i], LEND(i) - ls[i]);
        rs_sbuf_put(&b, "\n", 1);
      }
      if (after[i]) {
        rs_sbuf_puts(&b, after[i]);
        rs_sbuf_put(&b, "\n", 1);
      }
    }
    out = b.s ? b.s : rs_xstrndup("", 0);
    b.s = NULL;
  }
  for (uint32_t i = 0; i <= nlines; i++) free(repl[i]), free(after[i]);
  free(repl);
  free(after);
  free(del);
  free(ls);
  free(b.s);
  return out;
#undef LEND
}
