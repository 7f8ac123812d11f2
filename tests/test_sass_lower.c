/* test_sass_lower.c - SASS listing -> cubin (cubin/lower.h) on the committed ptxas 13 cubins and
 * their completed listings (the three kept cubins of tests/fixtures/sass/); never runs nvdisasm.
 *
 *  1. The learned table (cubin/fields.c): every instruction of the three fixture cubins
 *     re-encodes from its listing byte-identically (the trust criterion), none of an unknown form.
 *  2. Register counts: EIATTR_REGCOUNT of each cubin = ptxas -v's count = the count lowering
 *     computes from the lifted listing (widths included); sh_info carries it on sm_89, 0 on sm_90.
 *  3. Pinned lowering (listing unchanged) leaves the cubin byte-identical.
 *  4. A renaming of one register (a value's whole web would do the same per instruction):
 *     exactly the words of the instructions naming it change, only in the learned field's bits,
 *     and the field then holds the new register; the register count follows the listing.
 *  5. Refusals, the cubin untouched: a listing that changes more than registers, one that is not
 *     the listing of this cubin, a form whose field is not trusted, a truncated .nv.info.
 *  6. Scoreboard hazards (cubin/hazard.c): none in ptxas's own listings; an ALU result moved onto the
 *     register an in-flight store still reads is one.
 *  7. Learning with --merge (rs_sass_learn_merge): a table learned from sgemm sm_89, merged with
 *     sm_90's samples, keeps every sm_89 row verbatim; merged with its own samples again it is
 *     the same table (every row in both, sample counts added); a base whose trusted field the
 *     samples contradict is refused naming the form; a file that is no table is refused.
 *  8. The texture and surface forms of issue 23 (register handles, .DC, TXD geometries, TXQ.B,
 *     SURED.MIN.S64): the registers each writes and reads are those nvdisasm -plr marks.
 *  9. TXD's coordinate triple: one value of exactly three registers (r96), and a TXD writing a
 *     register an earlier TXD still reads is no hazard (in-order pipe), an ALU write is one. */
#include "front/front.h"
#include "check.h"
#include "cubin/lower.h"
#include "mcode/mcode.h"
#include "sass/sass.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIR "tests/fixtures/sass/"

static char *slurp(const char *p) {
  rs_err e;
  size_t n;
  char *s = rs_read_file(p, &n, &e);
  CHECKF(s != NULL, "%s", e.msg);
  return s;
}

static void test_table(const char *k) {
  char cp[256], lp[256];
  snprintf(cp, sizeof cp, DIR "%s.cubin", k);
  snprintf(lp, sizeof lp, DIR "%s.sass", k);
  rs_cubin c;
  rs_err e = {{0}};
  CHECKF(!rs_cubin_load(cp, &c, &e), "%s", e.msg);
  char *l = slurp(lp);
  rs_sass_fieldcheck st = {0};
  int rc = rs_sass_fields_check(&c, l, lp, &st, &e);
  CHECKF(!rc, "%s: %s", k, e.msg);
  CHECKF(st.insts > 100 && st.reproduced == st.insts && !st.unknown_forms,
         "%s: %u instructions, %u reproduced, %u of unknown forms", k, st.insts, st.reproduced, st.unknown_forms);
  CHECKF(st.tokens > st.insts, "%s: only %u fields re-encoded over %u instructions", k, st.tokens, st.insts);
  free(l);
  rs_cubin_free(&c);
}

/* ptxas -v "Used N registers" of a fixture. */
static unsigned ptxas_count(const char *k) {
  char p[256];
  snprintf(p, sizeof p, DIR "%s.ptxas-v.txt", k);
  char *s = slurp(p);
  const char *u = s ? strstr(s, "Used ") : NULL;
  unsigned n = u ? (unsigned)atoi(u + 5) : 0;
  free(s);
  return n;
}

static void test_counts_and_pinned(const char *k, bool shinfo) {
  char cp[256], lp[256];
  snprintf(cp, sizeof cp, DIR "%s.cubin", k);
  snprintf(lp, sizeof lp, DIR "%s.sass", k);
  rs_cubin c;
  rs_err e = {{0}};
  CHECKF(!rs_cubin_load(cp, &c, &e), "%s", e.msg);
  rs_nvinfo_func *nf = NULL;
  CHECKF(!rs_nvinfo_read(&c, cp, &nf, &e), "%s", e.msg);
  char *l = slurp(lp);
  rs_module *m = rs_module_parse(lp, rs_xstrndup(l, strlen(l)), strlen(l), RS_SRC_SASS, NULL, &e);
  CHECKF(m && m->nfuncs == c.nfuncs, "%s: %s", k, e.msg);
  for (uint32_t i = 0; nf && m && i < c.nfuncs; i++) {
    CHECKF(nf[i].regcount == ptxas_count(k), "%s: REGCOUNT %u, ptxas -v %u", k, nf[i].regcount, ptxas_count(k));
    CHECKF(rs_sass_regcount_of(m->funcs[i]) == nf[i].regcount, "%s: computed %u, REGCOUNT %u", k,
           rs_sass_regcount_of(m->funcs[i]), nf[i].regcount);
    CHECKF((nf[i].sh_info >> 24) == (shinfo ? nf[i].regcount : 0), "%s: sh_info byte %u", k, nf[i].sh_info >> 24);
  }
  uint8_t *before = rs_xmalloc(c.len);
  memcpy(before, c.bytes, c.len);
  rs_lower_stats st;
  CHECKF(!rs_sass_lower(&c, l, l, NULL, lp, &st, &e), "%s", e.msg);
  CHECK(!memcmp(before, c.bytes, c.len) && st.changed == 0 && st.insts > 100);
  uint32_t same = nf ? nf[0].regcount : 0;
  CHECKF(!rs_sass_lower(&c, l, l, &same, lp, &st, &e), "%s", e.msg);
  CHECK(!memcmp(before, c.bytes, c.len));
  free(before);
  free(nf);
  rs_module_free(m);
  free(l);
  rs_cubin_free(&c);
}

/* Replace every whole token `from` by `to` in the instruction lines (not in labels). */
static char *rename_reg(const char *l, const char *from, const char *to, uint32_t *lines) {
  size_t n = strlen(l), fl = strlen(from), tl = strlen(to);
  char *o = rs_xmalloc(n * 2 + 1);
  size_t k = 0;
  *lines = 0;
  bool counted = false;
  for (size_t i = 0; i < n;) {
    if (l[i] == '\n') counted = false;
    bool word = !strncmp(l + i, from, fl) && (i == 0 || !(isalnum((unsigned char)l[i - 1]) || l[i - 1] == '_')) &&
                !(isalnum((unsigned char)l[i + fl]) || l[i + fl] == '_');
    if (word) {
      memcpy(o + k, to, tl);
      k += tl;
      i += fl;
      if (!counted) (*lines)++, counted = true;
    } else {
      o[k++] = l[i++];
    }
  }
  o[k] = 0;
  return o;
}

static void test_rename(void) {
  const char *k = "sgemm_t4x4.sm_89";
  char cp[256], lp[256];
  snprintf(cp, sizeof cp, DIR "%s.cubin", k);
  snprintf(lp, sizeof lp, DIR "%s.sass", k);
  rs_cubin c;
  rs_err e = {{0}};
  CHECKF(!rs_cubin_load(cp, &c, &e), "%s", e.msg);
  char *l = slurp(lp);
  /* R36 -> R70: above every register the kernel uses, so the count must grow to 73 */
  CHECK(!strstr(l, "R70"));
  uint32_t nlines = 0;
  char *r = rename_reg(l, "R36", "R70", &nlines);
  CHECK(nlines > 3);
  uint8_t *before = rs_xmalloc(c.len);
  memcpy(before, c.bytes, c.len);
  uint32_t count = 73;
  rs_lower_stats st;
  int rc = rs_sass_lower(&c, l, r, &count, lp, &st, &e);
  CHECKF(!rc, "%s", e.msg);
  CHECKF(st.changed == nlines, "%u instructions changed, %u lines name R36", st.changed, nlines);
  /* every changed word: only inside learned R fields, and those now read 70 where R36 was */
  rs_sass_ilines a, b;
  CHECK(!rs_sass_ilines_of(l, lp, &a, &e) && !rs_sass_ilines_of(r, lp, &b, &e));
  const rs_cubin_func *f = &c.funcs[0];
  uint32_t off_text = (uint32_t)(f->code - c.bytes), changed_insts = 0;
  for (uint32_t i = 0; i < a.n && !rc; i++) {
    uint64_t w[2], o[2];
    rs_cubin_words(f, a.v[i].addr, w);
    rs_cubin_func of = *f;
    of.code = before + off_text;
    rs_cubin_words(&of, a.v[i].addr, o);
    rs_sass_tokens t;
    rs_sass_tokens_of(b.v[i].text, b.v[i].len, &t, NULL, 0);
    uint64_t allowed[2] = {0, 0};
    const rs_sass_form *fm = rs_sass_form_find(c.sm, (unsigned)(o[0] & 0xfff), t.shape);
    bool names = a.v[i].len != b.v[i].len || memcmp(a.v[i].text, b.v[i].text, a.v[i].len);
    for (unsigned j = 0; fm && j < t.n; j++) {
      if (t.kind[j] != RS_TK_R || t.val[j] != 70 || fm->off[j] < 0) continue;
      unsigned v = 0;
      for (unsigned q = 0; q < 8; q++) {
        unsigned bit = (unsigned)fm->off[j] + q;
        allowed[bit >> 6] |= 1ull << (bit & 63);
        v |= (unsigned)(w[bit >> 6] >> (bit & 63) & 1) << q;
      }
      CHECKF(v == 70, "/*%04x*/: field at %d holds %u", a.v[i].addr, fm->off[j], v);
    }
    uint64_t d0 = w[0] ^ o[0], d1 = w[1] ^ o[1];
    CHECKF(!(d0 & ~allowed[0]) && !(d1 & ~allowed[1]), "/*%04x*/: bits outside the R36 fields changed", a.v[i].addr);
    CHECKF(names == (d0 || d1), "/*%04x*/: %s", a.v[i].addr, names ? "renamed but not re-encoded" : "re-encoded");
    changed_insts += d0 || d1;
  }
  CHECK(changed_insts == nlines);
  rs_nvinfo_func *nf = NULL;
  CHECKF(!rs_nvinfo_read(&c, cp, &nf, &e), "%s", e.msg);
  CHECK(nf && nf[0].regcount == 73 && (nf[0].sh_info >> 24) == 73);
  free(nf);
  /* 5. refusals; the cubin is left as it was after each */
  memcpy(c.bytes, before, c.len);
  char *bad = rs_xstrndup(l, strlen(l));
  char *p = strstr(bad, "FFMA R");
  CHECK(p != NULL);
  if (p) memcpy(p, "FMUL", 4); /* an opcode change is not a recolouring */
  CHECK(rs_sass_lower(&c, l, bad, NULL, lp, &st, &e) && strstr(e.msg, "more than registers"));
  CHECK(!memcmp(before, c.bytes, c.len));
  char *other = rename_reg(l, "R37", "R71", &nlines); /* not the listing of this cubin */
  CHECK(rs_sass_lower(&c, other, l, NULL, lp, &st, &e) && strstr(e.msg, "not the listing of this cubin"));
  CHECK(!memcmp(before, c.bytes, c.len));
  /* a token whose field is not trusted: the first one in the table, renamed, must be refused */
  bool found = false;
  for (uint32_t i = 0; i < a.n && !found; i++) {
    uint64_t w[2];
    rs_cubin_words(f, a.v[i].addr, w);
    rs_sass_tokens t;
    rs_sass_tokens_of(a.v[i].text, a.v[i].len, &t, NULL, 0);
    const rs_sass_form *fm = rs_sass_form_find(c.sm, (unsigned)(w[0] & 0xfff), t.shape);
    for (unsigned j = 0; fm && j < t.n && !found; j++) {
      if (fm->off[j] >= 0) continue;
      char why[200];
      t.val[j] ^= 1;
      uint64_t x[2] = {w[0], w[1]};
      found = true;
      CHECK(rs_sass_encode(c.sm, x, &t, 1u << j, why, sizeof why) && strstr(why, "no trusted field"));
    }
  }
  /* the probe left none of this listing's forms untrusted (lower learn --probe): a row of the
   * table that has one, its tokens written as the row's shape says */
  for (size_t r = 0; r < rs_sass_nforms && !found; r++) {
    const rs_sass_form *fm = &rs_sass_forms[r];
    rs_sass_tokens t = {0};
    t.n = (uint8_t)strlen(fm->shape);
    snprintf(t.shape, sizeof t.shape, "%s", fm->shape);
    snprintf(t.op, sizeof t.op, "ROW");
    for (unsigned j = 0; j < t.n; j++) t.kind[j] = (uint8_t)(strchr(rs_tk_letter, fm->shape[j]) - rs_tk_letter);
    for (unsigned j = 0; j < t.n && !found; j++) {
      if (fm->off[j] >= 0) continue;
      char why[200];
      uint64_t x[2] = {fm->opc, 0};
      found = true;
      CHECK(rs_sass_encode(fm->sm, x, &t, 1u << j, why, sizeof why) && strstr(why, "no trusted field"));
    }
  }
  CHECK(found);
  /* a truncated .nv.info: its section size cut into the first record */
  rs_cubin tc;
  uint8_t *copy = rs_xmalloc(c.len);
  memcpy(copy, before, c.len);
  CHECK(!rs_cubin_parse(copy, c.len, "truncated", &tc, &e));
  uint64_t shoff = 0;
  for (int q = 0; q < 8; q++) shoff |= (uint64_t)tc.bytes[0x28 + q] << 8 * q;
  unsigned shnum = tc.bytes[0x3c] | tc.bytes[0x3d] << 8, shstr = tc.bytes[0x3e] | tc.bytes[0x3f] << 8;
  uint8_t *ss = tc.bytes + shoff + 64u * shstr;
  uint64_t stroff = 0;
  for (int q = 0; q < 8; q++) stroff |= (uint64_t)ss[24 + q] << 8 * q;
  bool cut = false;
  for (unsigned s = 0; s < shnum; s++) {
    uint8_t *h = tc.bytes + shoff + 64u * s;
    uint32_t nm = h[0] | h[1] << 8 | h[2] << 16 | (uint32_t)h[3] << 24;
    if (strcmp((char *)tc.bytes + stroff + nm, ".nv.info")) continue;
    h[32] = 6, h[33] = h[34] = h[35] = 0; /* 6 bytes: the REGCOUNT record needs 12 */
    cut = true;
  }
  CHECK(cut);
  CHECK(rs_nvinfo_read(&tc, "truncated", &nf, &e) && strstr(e.msg, "truncated .nv.info"));
  CHECK(rs_sass_lower(&tc, l, r, &count, "truncated", &st, &e) && strstr(e.msg, "truncated .nv.info"));
  rs_cubin_free(&tc);
  free(bad);
  free(other);
  rs_sass_ilines_free(&a);
  rs_sass_ilines_free(&b);
  free(before);
  free(r);
  free(l);
  rs_cubin_free(&c);
}

/* Scoreboard hazards: none in ptxas's own listings; one made by giving the destination of the
 * instruction right after an armed read barrier the register the armed instruction reads. */
static void test_hazards(const char *k, bool construct) {
  char cp[256], lp[256];
  snprintf(cp, sizeof cp, DIR "%s.cubin", k);
  snprintf(lp, sizeof lp, DIR "%s.sass", k);
  rs_cubin c;
  rs_err e = {{0}};
  CHECKF(!rs_cubin_load(cp, &c, &e), "%s", e.msg);
  char *l = slurp(lp), first[400];
  uint32_t n = 99;
  CHECKF(!rs_sass_hazards_listing(&c, l, lp, &n, first, sizeof first, &e) && n == 0, "%s: %u hazards: %s %s", k, n,
         first, e.msg);
  rs_sass_ilines il;
  CHECK(!rs_sass_ilines_of(l, lp, &il, &e));
  const rs_cubin_func *f = &c.funcs[0];
  bool made = false;
  static const char *const alu[] = {"IADD3", "IMAD", "LOP3", "SHF", "LEA", "FFMA", "FADD", "FMUL", "MOV", "VIADD"};
  for (uint32_t i = 0; construct && i + 1 < il.n && !made; i++) {
    uint64_t w[2];
    rs_cubin_words(f, il.v[i].addr, w);
    unsigned rb = (unsigned)(w[1] >> 49 & 7);
    rs_sass_tokens a, b;
    if (rb > 5 || strncmp(il.v[i].text, "ST", 2)) continue;
    rs_sass_tokens_of(il.v[i].text, il.v[i].len, &a, NULL, 0);
    if (a.n < 2 || a.kind[a.n - 1] != RS_TK_R || a.val[a.n - 1] == 255) continue;
    /* ST* [Ra], Rb ; ... ; ALU Rd, ... (no wait on the store's barrier) -> ALU Rb, ...: it overwrites
     * the stored register while the store may still read it */
    for (uint32_t j = i + 1; j < il.n && j < i + 8 && !made; j++) {
      uint64_t x[2];
      rs_cubin_words(f, il.v[j].addr, x);
      if (x[1] >> 52 >> rb & 1) break;
      if (il.v[j].text[0] == '@' || strncmp(il.v[j].func, il.v[i].func, 200)) break;
      rs_sass_tokens_of(il.v[j].text, il.v[j].len, &b, NULL, 0);
      bool is_alu = false;
      for (size_t q = 0; q < sizeof alu / sizeof *alu; q++) is_alu |= !strcmp(b.op, alu[q]);
      if (!strcmp(b.op, "BRA") || !strcmp(b.op, "BSYNC") || !strcmp(b.op, "EXIT")) break;
      if (!is_alu || b.n < 2 || b.kind[0] != RS_TK_R) continue;
      const char *d = il.v[j].text + strlen(b.op);
      while (*d && *d != 'R') d++;
      size_t at = (size_t)(d - l), dl = 1;
      while (isdigit((unsigned char)d[dl]) || d[dl] == 'Z') dl++;
      char reg[8];
      snprintf(reg, sizeof reg, "R%u", a.val[a.n - 1]);
      char *bad = rs_xmalloc(strlen(l) + 8);
      memcpy(bad, l, at);
      strcpy(bad + at, reg);
      strcat(bad, l + at + dl);
      CHECKF(!rs_sass_hazards_listing(&c, bad, lp, &n, first, sizeof first, &e) && n >= 1 &&
                 strstr(first, "overwrites a register that") && strstr(first, "still reads"),
             "%s: %u hazards after /*%04x*/: %s", k, n, il.v[j].addr, first);
      free(bad);
      made = true;
    }
  }
  CHECKF(made || !construct, "%s: no store followed by an ALU op without a wait", k);
  rs_sass_ilines_free(&il);
  free(l);
  rs_cubin_free(&c);
}

static void test_tokens(void) {
  rs_sass_tokens t;
  char sk[128];
  const char *s = "@!P0 IMAD.WIDE R4, R36.reuse, R5, c[0x0][0x160]";
  CHECK(!rs_sass_tokens_of(s, strlen(s), &t, sk, sizeof sk));
  CHECK(t.n == 4 && !strcmp(t.shape, "GRRR") && t.val[0] == 0 && t.val[2] == 36 && !strcmp(t.op, "IMAD"));
  CHECKF(!strcmp(sk, "@!G IMAD.WIDE R, R.reuse, R, c[0x0][0x160]"), "%s", sk);
  s = "LDG.E R5, desc[UR10][R2.64+0x10]";
  CHECK(!rs_sass_tokens_of(s, strlen(s), &t, NULL, 0) && !strcmp(t.shape, "RUR") && t.val[1] == 10);
  s = "ISETP.GE.AND P0, PT, RZ, UR4, !PT";
  CHECK(!rs_sass_tokens_of(s, strlen(s), &t, NULL, 0) && !strcmp(t.shape, "PPRUP") && t.val[2] == 255);
  s = "S2R R0, SR_TID.X";
  CHECK(!rs_sass_tokens_of(s, strlen(s), &t, NULL, 0) && !strcmp(t.shape, "R"));
  s = "BSSY B1, `(.L_x_6)";
  CHECK(!rs_sass_tokens_of(s, strlen(s), &t, NULL, 0) && !strcmp(t.shape, "B") && t.val[0] == 1);
}

/* A learner fed the fixture pairs named (NULL-terminated). */
static rs_sass_learner *learner_of(const char *const *ks) {
  rs_sass_learner *L = rs_sass_learner_new();
  for (; *ks; ks++) {
    char cp[256], lp[256];
    snprintf(cp, sizeof cp, DIR "%s.cubin", *ks);
    snprintf(lp, sizeof lp, DIR "%s.sass", *ks);
    rs_cubin c;
    rs_err e = {{0}};
    CHECKF(!rs_cubin_load(cp, &c, &e), "%s", e.msg);
    char *l = slurp(lp);
    CHECKF(!rs_sass_learn_add(L, &c, l, lp, &e), "%s", e.msg);
    free(l);
    rs_cubin_free(&c);
  }
  return L;
}


static void test_merge(void) {
  static const char *const k89[] = {"sgemm_t4x4.sm_89", NULL}, *const k90[] = {"sgemm_t4x4.sm_90", NULL};
  rs_sass_learn_stats a, b;
  rs_sass_learner *L = learner_of(k89);
  char *base = rs_sass_learn_emit(L, &a);
  rs_sass_learner_free(L);
  CHECKF(a.forms > 20 && a.pairs == 1 && strstr(base, "Learned from 1 (cubin, listing) pairs"), "%u forms", a.forms);

  /* other samples (sm_90): every sm_89 row kept as it was, text and all */
  L = learner_of(k90);
  rs_sass_learn_stats fresh90;
  char *t90 = rs_sass_learn_emit(L, &fresh90);
  free(t90);
  rs_err e = {{0}};
  CHECKF(!rs_sass_learn_merge(L, base, "base.c", &e), "%s", e.msg);
  char *m = rs_sass_learn_emit(L, &b);
  rs_sass_learner_free(L);
  CHECKF(b.kept == a.forms && b.both == 0 && b.added == fresh90.forms && b.forms == a.forms + fresh90.forms &&
             b.base_forms == a.forms && b.base_tokens == a.tokens && b.base_untrusted == a.untrusted &&
             b.untrusted == a.untrusted + fresh90.untrusted,
         "kept %u both %u added %u of %u+%u forms", b.kept, b.both, b.added, a.forms, fresh90.forms);
  CHECK(strstr(m, "Merged (`regsweep lower learn --merge`) from 1 new") && strstr(m, "base.c (Learned from 1 (cubin"));
  /* each sm_89 row's array line (after its name oN, renumbered) is in the merged text, comments too */
  size_t rows = 0, found = 0;
  for (const char *p = base; (p = strstr(p, "static const int8_t o")); p++) {
    const char *body = strchr(p, '['), *eol = strchr(p, '\n');
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)(eol - body), body);
    rows++;
    found += strstr(m, line) != NULL;
  }
  CHECKF(rows == a.forms && found == rows, "%zu of %zu base rows kept verbatim", found, rows);
  free(m);

  /* the same samples again: every row in both, the same fields, sample counts added */
  L = learner_of(k89);
  CHECKF(!rs_sass_learn_merge(L, base, "base.c", &e), "%s", e.msg);
  m = rs_sass_learn_emit(L, &b);
  rs_sass_learner_free(L);
  CHECKF(b.both == a.forms && b.kept == 0 && b.added == 0 && b.tokens == a.tokens && b.untrusted == a.untrusted &&
             b.newly_trusted == 0,
         "both %u kept %u added %u, untrusted %u vs %u", b.both, b.kept, b.added, b.untrusted, a.untrusted);
  CHECK(strstr(m, "/* merged: ") != NULL);
  free(m);

  /* a trusted field moved by one bit: the samples contradict it, the form is named */
  char *bad = rs_xstrndup(base, strlen(base));
  char *row = NULL;
  for (char *p = bad; (p = strstr(p, "static const int8_t o")) && !row; p++) {
    char *eol = strchr(p, '\n'), *c = strchr(p, '{');
    if (memchr(p, '/', (size_t)(eol - p))) continue; /* a row with comments: some field not learned uniquely */
    int v = atoi(c + 1);
    if (v >= 12 && v <= 90 && isdigit((unsigned char)c[1]) && isdigit((unsigned char)c[2]) && !isdigit((unsigned char)c[3]))
      row = p; /* two digits, as its neighbour v + 1: the rest of the text stays put */
  }
  CHECK(row != NULL);
  if (row) {
    char *c = strchr(row, '{');
    int v = atoi(c + 1) + 1;
    c[1] = (char)('0' + v / 10), c[2] = (char)('0' + v % 10);
    L = learner_of(k89);
    int rc = rs_sass_learn_merge(L, bad, "bad.c", &e);
    CHECKF(rc && strstr(e.msg, "bad.c:") && strstr(e.msg, "contradict the base table") && strstr(e.msg, "operand 0") &&
               strstr(e.msg, "sm_89"),
           "%s", e.msg);
    rs_sass_learner_free(L);
  }
  free(bad);

  /* not a field table; a row without its array; samples added after a merge */
  L = learner_of(k89);
  CHECK(rs_sass_learn_merge(L, "int x;\n", "x.c", &e) && strstr(e.msg, "not a field table"));
  char *cut = rs_xstrndup(base, strlen(base));
  char *o0 = strstr(cut, "static const int8_t o0[]");
  CHECK(o0 != NULL);
  if (o0) o0[20] = 'x'; /* "x0[]": the first row has no array any more */
  CHECK(rs_sass_learn_merge(L, cut, "cut.c", &e) && strstr(e.msg, "cut.c:") && strstr(e.msg, "arrays are missing"));
  free(cut);
  CHECKF(!rs_sass_learn_merge(L, base, "base.c", &e), "%s", e.msg);
  CHECK(rs_sass_learn_merge(L, base, "base.c", &e) && strstr(e.msg, "a second base table"));
  rs_cubin c;
  CHECK(!rs_cubin_load(DIR "sgemm_t4x4.sm_90.cubin", &c, &e));
  char *l = slurp(DIR "sgemm_t4x4.sm_90.sass");
  CHECK(rs_sass_learn_add(L, &c, l, "late", &e) && strstr(e.msg, "after the merge"));
  free(l);
  rs_cubin_free(&c);
  rs_sass_learner_free(L);
  free(base);
}

/* 8. The texture and surface forms of issue 23 the table lacked (sass/optable.c, sass/texshape.c):
 * each line is ptxas 13's sm_86 output for tests/fixtures/sass-tex/{tex,texptx,surf}.cu as
 * nvdisasm 11.8 lists it, with the GPRs nvdisasm -plr marks that row written and read; the lifted
 * instruction must write and read exactly those. (The handle in a register, .B, is one more extra
 * in Rb; TXD puts the coordinates and extras in Ra, two gradients per spatial coordinate in Rb.) */
static const struct {
  const char *line, *w, *r;
} texforms[] = {
    {"TEX.B.LL R4, R6, R4, R20, ARRAY_CUBE", "4 5 6 7", "4 5 6 7 20 21"},
    {"TEX.SCR.B.NDV R18, R20, R18, R20, CUBE", "18 19 20 21", "18 19 20 21"},
    {"TEX.SCR.B.F16.RN.LL R7, R6, R6, R4, 2D", "6 7", "4 5 6 7"},
    {"TEX.LL.AOFFI.DC R10, R8, R54, R8, 0x0, 0x5a, 2D", "8 9 10 11", "8 9 10 54 55"},
    {"TLD4.SCR.R.B R6, R4, R4, R3, 2D", "4 5 6 7", "3 4 5"},
    {"TLD4.SCR.B.B R14, R12, R12, R4, 2D", "12 13 14 15", "4 12 13"},
    {"TLD4.R.B.AOFFI.DC R4, R22, R22, R4, 2D", "4 5 22 23", "4 5 6 22 23"},
    {"TLD4.SCR.G R10, R6, R6, R10, 0x0, 0x5a, ARRAY_2D", "6 7 10 11", "6 7 10"},
    {"TLD4.SCR.G.B R10, R6, R20, R6, ARRAY_2D", "6 7 10 11", "6 7 20 21"},
    {"TLD.SCR.B.LZ RZ, R4, R4, R3, 1D, 0x3", "4 5", "3 4"},
    {"TLD.B.LZ.AOFFI.MS R4, R24, R24, R4, ARRAY_2D", "4 5 24 25", "4 5 6 24 25 26"},
    {"TLD.B.LL.AOFFI.CL R16, R12, R16, R12, 3D", "12 13 16 17", "12 13 14 16 17 18"},
    {"TXD.B RZ, R10, R8, R20, ARRAY_1D, 0x1", "10", "8 9 10 20 21"},
    {"TXD R36, R2, R28, R36, 0x0, 0x5a, ARRAY_2D", "2 3 36 37", "28 29 30 36 37 38 39"},
    {"TXD.B.AOFFI R4, R6, R4, R20, 2D", "4 5 6 7", "4 5 6 7 20 21 22 23"},
    {"TXQ.B RZ, R6, R4, TEX_HEADER_DIMENSION, 0x1", "6", "4 5"},
    {"SULD.D.BA.2D.128.STRONG.SM.TRAP R4, [R6], R21", "4 5 6 7", "6 7 21"},
    {"SUST.D.BA.3D.128.STRONG.SM [R8], R4, R11", "", "4 5 6 7 8 9 10 11"},
    {"SURED.D.BA.1D.MIN.S64.STRONG.SYS.TRAP [R12], R2, R11", "", "2 3 11 12"},
    {"SURED.D.BA.1D.MIN.S64.STRONG.SYS.TRAP [R13], R4, 0x0, 0x5a", "", "4 5 13"},
    {"SURED.D.BA.2D.ADD.U64.STRONG.SYS.TRAP [R2], R4, R21", "", "2 3 4 5 21"},
};

static void regs_of(const rs_func *f, const rs_inst *in, bool def, char *out, size_t cap) {
  bool set[256] = {false};
  for (uint32_t o = 0; o < in->nops; o++) {
    const rs_operand *op = &f->ops[in->first_op + o];
    if (op->kind != RS_OP_PREG || !(op->flags & RS_F_DEF) != !def) continue;
    int fi = rs_target_file_of(f->tgt, op->reg);
    if (fi < 0 || strcmp(f->tgt->files[fi].name, "r") || (f->tgt->unit_flags[op->reg] & RS_UNIT_RESERVED)) continue;
    for (unsigned k = 0; k < rs_lanes_units(op->lanes); k++)
      if (op->reg - f->tgt->files[fi].first + k < 256) set[op->reg - f->tgt->files[fi].first + k] = true;
  }
  size_t n = 0;
  out[0] = 0;
  for (unsigned i = 0; i < 256 && n + 5 < cap; i++)
    if (set[i]) n += (size_t)snprintf(out + n, cap - n, "%s%u", n ? " " : "", i);
}

static void test_texforms(void) {
  char path[] = "/tmp/rs_texforms_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  FILE *fp = fdopen(fd, "w");
  size_t n = sizeof texforms / sizeof *texforms;
  fprintf(fp, "\t.headerflags\t@\"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM86 "
              "EF_CUDA_VIRTUAL_SM(EF_CUDA_SM86)\"\n\t.section\t.text.k,\"ax\",@progbits\nk:\n.text.k:\n");
  for (size_t i = 0; i < n; i++) fprintf(fp, "        /*%04zx*/                   %s ;\n", 16 * i, texforms[i].line);
  fprintf(fp, "        /*%04zx*/                   EXIT ;\n", 16 * n);
  fclose(fp);
  rs_err e = {{0}};
  rs_sass_opts o = {.no_lift = true, .whole = true};
  rs_module *m = rs_sass_load(path, NULL, &o, &e);
  unlink(path);
  CHECKF(m && m->nfuncs == 1, "texforms listing: %s", e.msg);
  if (!m || m->nfuncs != 1) {
    rs_module_free(m);
    return;
  }
  const rs_func *f = m->funcs[0];
  unsigned equal = 0;
  for (size_t i = 0; i < n; i++) {
    const rs_inst *in = NULL;
    for (uint32_t j = 0; j < f->ninsts; j++)
      if (f->insts[j].addr == 16 * i) in = &f->insts[j];
    CHECKF(in != NULL, "no instruction at 0x%zx", 16 * i);
    if (!in) continue;
    char w[200], r[200];
    regs_of(f, in, true, w, sizeof w);
    regs_of(f, in, false, r, sizeof r);
    bool ok = !strcmp(w, texforms[i].w) && !strcmp(r, texforms[i].r);
    CHECKF(ok, "%s: writes {%s} reads {%s}, -plr {%s} {%s}", texforms[i].line, w, r, texforms[i].w, texforms[i].r);
    equal += ok;
  }
  printf("texture/surface forms against -plr: %u of %zu equal\n", equal, n);
  rs_module_free(m);
}

/* 9. TXD's coordinate triple (texptx.cu GradA2_9, ptxas 13 sm_80-90): `TXD R4, R2, R4, R16 ...
 * ARRAY_2D` reads R4:R6 (-plr: R7 untouched) and the next TXD writes R6:R7 with no wait between.
 * The triple is one value of exactly three registers (class r96, quad-aligned: as a quad its
 * phantom R7 raised the register count and pinned lowering was not byte-identical), and a later
 * TXD's write behind an earlier one's reads is no hazard (one in-order pipe), while an ALU write
 * of R6 there is one. */
static rs_module *load_text(const char *body, rs_err *e) {
  char path[] = "/tmp/rs_txd_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return NULL;
  FILE *fp = fdopen(fd, "w");
  fprintf(fp, "\t.headerflags\t@\"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM86 "
              "EF_CUDA_VIRTUAL_SM(EF_CUDA_SM86)\"\n\t.section\t.text.k,\"ax\",@progbits\nk:\n.text.k:\n%s", body);
  fclose(fp);
  rs_module *m = rs_sass_load(path, NULL, NULL, e);
  unlink(path);
  return m;
}

static uint32_t txd_hazards(const char *second, bool *triple_ok) {
  char body[1024];
  snprintf(body, sizeof body,
           "        /*0000*/                   MOV R6, 0x4 ;\n"
           "        /*0010*/                   FADD R4, R27, 0.375 ;\n"
           "        /*0020*/                   FADD R5, R21, -0.1875 ;\n"
           "        /*0030*/                   TXD R4, R2, R4, R16, 0x0, 0x5a, ARRAY_2D ;\n"
           "        /*0040*/                   %s ;\n"
           "        /*0050*/                   FADD R8, R6, R7 ;\n"
           "        /*0060*/                   EXIT ;\n",
           second);
  rs_err e = {{0}};
  rs_module *m = load_text(body, &e);
  CHECKF(m && m->nfuncs == 1, "TXD listing: %s", e.msg);
  if (!m || m->nfuncs != 1) return rs_module_free(m), UINT32_MAX;
  const rs_func *f = m->funcs[0];
  *triple_ok = false;
  for (uint32_t v = 0; v < f->nvregs; v++)
    if (!strcmp(f->vregs[v].name, "R4@0000")) /* the triple: its first def is MOV R6 */
      *triple_ok = f->vregs[v].width == 3 && !strcmp(f->tgt->classes[f->vregs[v].cls].name, "r96") &&
                   f->truth[v].lanes == rs_lanes_full(3);
  /* control bits: no barriers, no waits; the first TXD arms read barrier 1 (write barrier none) */
  uint64_t (*ctl)[2] = rs_xcalloc(f->ninsts + 1, sizeof *ctl);
  for (uint32_t i = 0; i < f->ninsts; i++) {
    ctl[i][1] = 0x3full << 46;
    if (f->insts[i].addr == 0x30) ctl[i][1] = 7ull << 46 | 1ull << 49;
  }
  char first[300];
  uint32_t n = rs_sass_hazards(f, (const uint64_t(*)[2])ctl, first, sizeof first);
  free(ctl);
  rs_module_free(m);
  return n;
}

static void test_txd_triple(void) {
  bool ok = false;
  uint32_t n = txd_hazards("TXD R40, R6, R40, R12, 0x0, 0x58, ARRAY_2D", &ok);
  CHECKF(ok, "the TXD coordinate triple R4:R6 is not one r96 value of 3 registers");
  CHECKF(n == 0, "TXD writing R6:R7 behind a TXD reading R4:R6: %u hazards, want 0 (in-order pipe)", n);
  n = txd_hazards("FADD R6, R27, 1", &ok);
  CHECKF(n == 1, "FADD writing R6 while TXD still reads R4:R6: %u hazards, want 1", n);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  test_tokens();
  test_table("sgemm_t4x4.sm_89");
  test_table("sgemm_t4x4.sm_90");
  test_table("calib.sm_90");
  test_counts_and_pinned("sgemm_t4x4.sm_89", true);
  test_counts_and_pinned("sgemm_t4x4.sm_90", false);
  test_rename();
  test_hazards("sgemm_t4x4.sm_89", true); /* its sm_90 twin's stores are all followed by waits or branches */
  test_hazards("sgemm_t4x4.sm_90", false);
  test_hazards("calib.sm_90", false);
  test_merge();
  test_texforms();
  test_txd_triple();
  return rs_check_done("test_sass_lower");
}
