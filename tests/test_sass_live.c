/* test_sass_live.c - our SASS liveness against NVIDIA's own (nvdisasm -plr), register for
 * register, on every listing of tests/fixtures/sass/front (real ptxas 13 output; the -plr
 * tables are nvdisasm 11.8's raw output, committed, so the test needs no nvdisasm).
 *
 * What is asserted, per fixture and instruction, on every fixture (28 listings):
 *  - our live registers (rs_sass_live_rows, sass/live.c) are exactly -plr's, register for
 *    register, in every file (GPR, PRED, UGPR, UPRED);
 *  - -plr's own count column equals the registers it marks (the table is read right);
 *  - highest R + 3 = `ptxas -v` "Used N registers" = .sectioninfo SHI_REGISTERS.
 * nvdisasm 11.8's two known quirks, named and counted here:
 *  - R63: -plr never shows R63 (asserted: no mark in any -plr row), so R63 is left out of the
 *    comparison; the rows where R63 is live for us are counted;
 *  - the CALL.REL.NOINC convention: -plr takes every CALL.REL.NOINC (to a `$__internal`
 *    subroutine or to a `.L` label) as an ABI call (callee-saved registers, R0/R1 read, a RET
 *    that returns nowhere; sass/live.c says how). rs_sass_live_rows(RS_PLR_CALLS) models it;
 *    the rows that would differ under the real CFG (without it) are counted, and must be
 *    > 0 on every fixture that calls a `$__internal` subroutine (6 of 20), so the quirk is real
 *    where it is named (a predicated CALL.REL.NOINC to a `.L` label often decides no row);
 *  - R2P: -plr takes `R2P PR, Ra, mask` as reading and writing all of P0-P6, whatever the mask
 *    (RS_PLR_R2P; the lift writes only the mask's predicates, which is what R2P does); counted,
 *    > 0 exactly on the fixtures with an R2P (r2p_mask, from src/r2p_mask.cu).
 *  - chained calls: -plr shows an unpredicated call followed by another before any label or
 *    branch (the shflsync chain of scan_t256_i8's BRA.DIV fallback) writing its whole clobber
 *    set (RS_PLR_CHAIN); counted, > 0 exactly on the fixtures with such a chain.
 * No open gap is left: every row of the 28 fixtures is equal (the scan_t256_i8 rows that
 * differed were the chained calls and -plr's def sites over its own CFG).
 * Beyond front/ (test_plr_more, test_plr_corpus): the listings of tests/fixtures/sass/plr (the
 * mini corpus's scan sm_90 and gemv sm_80, MAGMA's hemm_vbatched sm_86, gesvj sm_75, zhemv
 * sm_75 and zhetrs sm_80, each there for a rule of live.c, and a switch's jump tables (BRX with
 * its BRANCH_TARGETS) sm_86 and sm_90; README.md says which) and every form-sass row of
 * data/corpus-mini.h5 against the -plr tables of their cubins: every row equal, pinned, with the
 * rows RS_PLR_COLLECTIVE (WARPSYNC.COLLECTIVE falls through only) decides.
 * The Problem's liveness (real CFG) is not this emulation: the pinned oracle reproduces ptxas's
 * allocation on all of them (tests/test_sass.c).
 * RS_PLR_DIFF=1 prints every row that differs (a debugging aid). */
#include "front/front.h"
#include "check.h"
#include "sass/sass.h"
#include "storage/corpus.h"
#include <stdlib.h>
#include <string.h>

enum { NF = 4 }; /* GPR PRED UGPR UPRED, -plr's order */
static const char *const plr_names[NF] = {"GPR", "PRED", "UGPR", "UPRED"};
static const char *const our_files[NF] = {"r", "p", "ur", "up"};

typedef struct {
  uint32_t addr;
  int fn;              /* index of its function (.section) in the table, from 0 */
  uint64_t set[NF][4]; /* up to 256 registers per file */
  unsigned count[NF];
} plr_row;

/* Read `nvdisasm -plr -lrm narrow` text t (consumed): per function (.section) a header gives
 * each column's register number (digits stacked vertically), each instruction row one character
 * per register. fnames (optional) receives the functions' names (malloc'd), *nfn of them. */
static plr_row *read_plr_text(char *t, uint32_t *nrows, char ***fnames, uint32_t *nfn) {
  plr_row *rows = NULL;
  int fn = -1;
  if (fnames) *fnames = NULL, *nfn = 0;
  uint32_t n = 0, cap = 0;
  int fileidx[16];
  int colreg[16][1024];
  char hdr[8][4096];
  int nhdr = 0, borders = 0, nseg = 0;
  for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
    const char *sec = strstr(line, ".section\t.text.");
    if (sec) { /* a new function: its own header follows */
      fn++, borders = 0, nhdr = 0;
      if (fnames) {
        *fnames = rs_xrealloc(*fnames, sizeof **fnames * (size_t)(fn + 1));
        (*fnames)[fn] = rs_xstrndup(sec + 15, strcspn(sec + 15, ","));
        *nfn = (uint32_t)fn + 1;
      }
      continue;
    }
    char *tab = strstr(line, "// ");
    if (!tab) continue;
    tab += 3;
    if (tab[0] == '+') {
      if (++borders == 2) { /* header complete: names in hdr[0], digits below */
        nseg = 0;
        char *p = hdr[0];
        for (int s = 0; (p = strchr(p, '|')) && p[1]; s++) {
          p++;
          char nm[16] = "";
          sscanf(p, " %15[A-Z]", nm);
          fileidx[s] = -1;
          for (int k = 0; k < NF; k++)
            if (!strcmp(nm, plr_names[k])) fileidx[s] = k;
          nseg = s + 1;
        }
        /* per segment, column offsets relative to the segment's '|' */
        for (int s = 0; s < nseg && s < 16; s++)
          for (int c = 0; c < 1024; c++) colreg[s][c] = -1;
        for (int h = 1; h < nhdr; h++) {
          int s = -1, c = 0;
          for (char *q = hdr[h]; *q; q++) {
            if (*q == '|') {
              s++, c = 0;
              continue;
            }
            if (s >= 0 && s < 16 && c < 1024 && *q >= '0' && *q <= '9')
              colreg[s][c] = (colreg[s][c] < 0 ? 0 : colreg[s][c] * 10) + (*q - '0');
            if (s >= 0 && s < 16 && c < 1024 && *q == '#') colreg[s][c] = -2;
            c++;
          }
        }
      }
      continue;
    }
    if (borders == 1) {
      if (nhdr < 8) snprintf(hdr[nhdr++], sizeof hdr[0], "%s", tab);
      continue;
    }
    char *a = strstr(line, "/*");
    unsigned addr;
    if (borders < 2 || !a || a > tab || sscanf(a, "/*%x*/", &addr) != 1) continue;
    if (n == cap) rows = rs_xrealloc(rows, sizeof *rows * (cap = cap ? cap * 2 : 1024));
    plr_row *r = &rows[n++];
    memset(r, 0, sizeof *r);
    r->addr = addr;
    r->fn = fn < 0 ? 0 : fn;
    int s = -1, c = 0;
    char num[8];
    int nn = 0;
    for (char *q = tab; *q; q++) {
      if (*q == '|') {
        if (s >= 0 && s < 16 && fileidx[s] >= 0 && nn) {
          num[nn] = 0;
          r->count[fileidx[s]] = (unsigned)atoi(num);
        }
        s++, c = 0, nn = 0;
        continue;
      }
      if (s >= 0 && s < 16 && fileidx[s] >= 0 && c < 1024) {
        int reg = colreg[s][c];
        if (reg >= 0 && reg < 256 && strchr("^vx:", *q)) r->set[fileidx[s]][reg / 64] |= 1ull << (reg % 64);
        if (reg < 0 && *q >= '0' && *q <= '9' && nn < 7) num[nn++] = *q;
      }
      c++;
    }
  }
  *nrows = n;
  return rows;
}

static plr_row *read_plr(const char *path, uint32_t *nrows) {
  rs_err e;
  size_t len;
  char *t = rs_read_file(path, &len, &e);
  if (!t) return NULL;
  plr_row *rows = read_plr_text(t, nrows, NULL, NULL);
  free(t);
  return rows;
}

static unsigned popcount4(const uint64_t *s) {
  unsigned n = 0;
  for (int k = 0; k < 4; k++) n += (unsigned)__builtin_popcountll(s[k]);
  return n;
}

/* "Used N registers" of a ptxas -v log, 0 if absent. */
static unsigned ptxas_regs(const char *path) {
  rs_err e;
  size_t len;
  char *t = rs_read_file(path, &len, &e);
  unsigned n = 0;
  const char *p = t ? strstr(t, "Used ") : NULL;
  if (p) sscanf(p, "Used %u registers", &n);
  free(t);
  return n;
}

/* Fixtures with a chain of calls (RS_PLR_CHAIN must decide rows there, and only there). */
static bool has_chain(const rs_func *f) {
  for (uint32_t k = 0; k + 1 < f->ninsts; k++) {
    if (strncmp(rs_func_opcode(f, &f->insts[k]), "CALL.REL", 8) || (f->insts[k].flags & RS_I_PREDICATED)) continue;
    for (uint32_t j = k + 1; j < f->ninsts; j++) {
      const char *op = rs_func_opcode(f, &f->insts[j]);
      if (!strncmp(op, "CALL.REL", 8) && !(f->insts[j].flags & RS_I_PREDICATED)) return true;
      if (f->insts[j].flags & (RS_I_BRANCH | RS_I_BARRIER)) break;
      bool lab = false; /* a label starts a block named .L or $ */
      for (uint32_t b = 0; b < f->nblocks; b++)
        lab |= f->blocks[b].first_inst == j && (f->blocks[b].name[0] == '.' || f->blocks[b].name[0] == '$');
      if (lab) break;
    }
  }
  return false;
}


/* Rows of function f that differ from the -plr rows of function fn (matched by address: -plr has
 * no row for an instruction 11.8 drops on sm_90; R63 left out as above), our rows with quirks
 * taken; *nrows gets the rows compared. */
static unsigned differing(const rs_func *f, const plr_row *rows, uint32_t n, int fn, unsigned quirks, unsigned *nrows) {
  rs_err e = {{0}};
  rs_word *ours = NULL;
  uint32_t W = 0;
  int rc = rs_sass_live_rows(f, &ours, &W, quirks, &e);
  CHECKF(rc == 0, "%s: %s", f->name, e.msg);
  if (rc) return 0;
  const rs_target *t = f->tgt;
  int first[NF];
  unsigned fcount[NF], d = 0;
  for (int k = 0; k < NF; k++) {
    first[k] = -1, fcount[k] = 0;
    for (uint32_t fi = 0; fi < t->nfiles; fi++)
      if (!strcmp(t->files[fi].name, our_files[k])) first[k] = (int)t->files[fi].first, fcount[k] = t->files[fi].count;
  }
  *nrows = 0;
  for (uint32_t r = 0, i = 0; r < n; r++) {
    if (rows[r].fn != fn) continue;
    while (i < f->ninsts && f->insts[i].addr < rows[r].addr) i++;
    CHECKF(i < f->ninsts && f->insts[i].addr == rows[r].addr, "%s: -plr row /*%04x*/ is no instruction", f->name,
           rows[r].addr);
    if (i >= f->ninsts || f->insts[i].addr != rows[r].addr) continue;
    (*nrows)++;
    bool same = true;
    for (int k = 0; k < NF && same; k++)
      for (unsigned reg = 0; reg < 256 && same; reg++) {
        if (k == 0 && reg == 63) continue;
        bool theirs = rows[r].set[k][reg / 64] >> (reg % 64) & 1;
        bool mine = first[k] >= 0 && reg < fcount[k] && rs_bs_get(ours + (size_t)W * i, (size_t)first[k] + reg);
        same = mine == theirs;
      }
    d += !same;
    if (!same && getenv("RS_PLR_DIFF")) printf("DIFF %s %04x\n", f->name, rows[r].addr);
  }
  free(ours);
  return d;
}

/* A listing and the -plr table of its functions: rows compared, rows differing (all quirks), and
 * rows RS_PLR_COLLECTIVE decides; -1 when they cannot be read. */
static int compare_module(const rs_module *m, char *plr_text, const char *what, unsigned *rows, unsigned *differ,
                          unsigned *collective) {
  uint32_t n = 0, nfn = 0;
  char **fnames = NULL;
  plr_row *pr = read_plr_text(plr_text, &n, &fnames, &nfn);
  CHECKF(n > 0 && nfn == m->nfuncs, "%s: %u -plr rows, %u functions in -plr, %u in the listing", what, n, nfn, m->nfuncs);
  *rows = *differ = *collective = 0;
  for (uint32_t k = 0; k < m->nfuncs && k < nfn; k++) {
    const rs_func *f = m->funcs[k];
    CHECKF(!strcmp(f->name, fnames[k]), "%s: function %u is %s in the listing, %s in -plr", what, k, f->name, fnames[k]);
    unsigned r = 0, r2 = 0;
    *differ += differing(f, pr, n, (int)k, RS_PLR_ALL, &r);
    *collective += differing(f, pr, n, (int)k, RS_PLR_ALL & ~RS_PLR_COLLECTIVE, &r2);
    *rows += r;
  }
  *collective -= *differ < *collective ? *differ : *collective;
  for (uint32_t k = 0; k < nfn; k++) free(fnames[k]);
  free(fnames);
  free(pr);
  return n ? 0 : -1;
}

/* tests/fixtures/sass/plr: listings of code beyond the front fixtures (the mini corpus's own
 * kernels, MAGMA 2.6.2) with nvdisasm 11.8's -plr table of the same functions; each is here for a
 * rule of live.c it decided (the rows that differed before the rule, measured 2026-12-02):
 *  - scan_threads256_items8.sm_90: WARPSYNC.COLLECTIVE has no edge to its label in -plr's CFG
 *    (RS_PLR_COLLECTIVE; 29 rows: R4 across the collective fallback);
 *  - gemv_rows240_rpt24_alpha0.sm_80: a read joins def sites of every width (2 rows: R94 of a
 *    CS2R R94:R95 pair before a side exit, shown up to the fall-through's MOV R94);
 *  - magma_hemm_sideexit.sm_86 (dsymm hemm_template_vbatched_rl_kernel): the region rule over
 *    the span up to each side exit (7 rows: R7, R8 after `@!P0 BRA` in the region entered by
 *    the loop's predicated CALL.REL.NOINC exit);
 *  - magma_gesvj_p2r.sm_75 (gesvj_update_vectors <double,64,16,8,...>): P2R's whole-PR read
 *    joins P0-P6's def sites (12 rows: P0, P1 over the fall-through of a side exit);
 *  - magma_zhemv_upguard.sm_75 (zhemv_kernel_U): a def under a uniform predicate, killing in
 *    -plr (RS_PLR_UPGUARD), joins no value (9 rows: UR4 of `UMOV UR4, URZ` before
 *    `@!UP0 UIADD3 UR4`);
 *  - magma_zhetrs_calllabel.sm_80 (magma_zswap_scal_inverseblock_lower): a call shows the
 *    registers the next instruction writes only when no label lies between (1 row: R12-R15 at
 *    the dblrcp slowpath's call before .L_x_29);
 *  - fptr42.sm_80 / .sm_90 (our kernels, fptr42.cu; issue 42): calls through a function pointer,
 *    `CALL.REL.NOINC R8 `(kernel)`, refused by form before: -plr takes them as it takes a direct
 *    call (R0/R1 and the pointer pair read, the clobber set written, return to the next
 *    instruction); every row equal with no rule of their own;
 *  - calls42.sm_80 / .sm_90 (our kernels, calls42.cu; issue 42): 53 rows of 4 of its 9 functions
 *    differed on sm_80 (sm_86/89 alike) before three rules, and the sm_90 listing was refused
 *    whole (cubin/disasm.c cut the restored label `$__internal_2_$__cuda_sm20_rcp_ru_ftz_f32_slowpath`
 *    and dropped its .type line): a call shows the registers written later in its region before
 *    any read, not only by the next instruction (idiv64: R3 of `MOV R2, R4; MOV R3, R5` after
 *    rem_u64's call; frcp_dir); a call writes UR36-UR62 without killing them (report: UR36/37,
 *    printf's descriptor pair, live across CALL.ABS vprintf); the region rule per exit of its
 *    last block (flagswap: R4/R5 dead at the `@P0 BREAK B0` side of a compare-exchange).
 * Pinned: rows compared, rows differing (0: every row equal), rows RS_PLR_COLLECTIVE decides. */
static const struct {
  const char *name;
  unsigned rows, differ, collective;
} PLR_MORE[] = {
    {"calls42.sm_80", 1326, 0, 0}, /* ours (calls42.cu): CUDA's internal helpers; printf; */
    {"calls42.sm_90", 1353, 0, 0}, /* a BREAK side exit (rules of issue 42, see above) */
    {"collall.sm_90", 203, 0, 0},  /* ours: WARPSYNC.COLLECTIVE.ALL (issue 42) */
    {"forms42.sm_90", 586, 0, 0},  /* issue 42's forms (tests/fixtures/sass-forms): ACQBULK, PREEXIT, */
    {"forms42b.sm_80", 203, 0, 0}, /* HSET2, F2FP.UNPACK_B, WARPSYNC.EXCLUSIVE; B2R, MOVM, HMUL2 */
    {"fptr42.sm_80", 195, 0, 0},   /* ours: calls through a function pointer (CALL.REL.NOINC R8 `(kernel)), */
    {"fptr42.sm_90", 202, 0, 0},   /* refused by form before (issue 42) */
    {"gemv_rows240_rpt24_alpha0.sm_80", 301, 0, 0},
    {"magma_gesvj_p2r.sm_75", 1737, 0, 0},
    {"magma_hemm_sideexit.sm_86", 1723, 0, 0},
    {"magma_zhemv_upguard.sm_75", 1176, 0, 0},
    {"magma_zhetrs_calllabel.sm_80", 250, 0, 0},
    {"redux42.sm_80", 81, 0, 0}, /* ours: a call chain past a predicated BRA and a BRA.CONV */
    {"scan_threads256_items8.sm_90", 120, 0, 29},
    {"switch_jumptable.sm_86", 175, 0, 0},
    {"switch_jumptable.sm_90", 172, 0, 0},
};

static void test_plr_more(void) {
  const char *dir = "tests/fixtures/sass/plr";
  char **list;
  int nl = rs_check_list(dir, ".sass", &list);
  CHECKF(nl == (int)(sizeof PLR_MORE / sizeof *PLR_MORE), "%d listings in %s", nl, dir);
  for (int i = 0; i < nl; i++) {
    char path[700], *base = strrchr(list[i], '/') + 1;
    size_t k = 0;
    while (k < sizeof PLR_MORE / sizeof *PLR_MORE && strncmp(base, PLR_MORE[k].name, strlen(PLR_MORE[k].name))) k++;
    CHECKF(k < sizeof PLR_MORE / sizeof *PLR_MORE, "%s: not pinned", list[i]);
    rs_err e = {{0}};
    rs_module *m = rs_module_load(list[i], NULL, &e);
    snprintf(path, sizeof path, "%.*s.plr", (int)(strlen(list[i]) - 5), list[i]);
    char *t = rs_read_file(path, NULL, &e);
    CHECKF(m && t, "%s: %s", list[i], e.msg);
    unsigned rows = 0, differ = 0, coll = 0;
    if (m && t) compare_module(m, t, path, &rows, &differ, &coll);
    printf("%-34s rows %4u equal %4u differ %u; RS_PLR_COLLECTIVE decides %u rows\n", base, rows, rows - differ, differ,
           coll);
    if (k < sizeof PLR_MORE / sizeof *PLR_MORE)
      CHECKF(rows == PLR_MORE[k].rows && differ == PLR_MORE[k].differ && coll == PLR_MORE[k].collective,
             "%s: %u rows, %u differ, COLLECTIVE decides %u (pinned %u, %u, %u)", base, rows, differ, coll,
             PLR_MORE[k].rows, PLR_MORE[k].differ, PLR_MORE[k].collective);
    free(t);
    rs_module_free(m);
  }
  rs_check_free_list(list, nl);
}

/* The mini corpus (data/corpus-mini.h5): every form-sass row's listing against nvdisasm 11.8's
 * -plr table of the row's cubin (tests/fixtures/sass/plr/corpus-mini.plr.gz: "=== ID" then the
 * table, as scripts/gen-sass-fixtures.sh cuts it; made from the rows' cubins, header rewritten).
 * Pinned: 105 listings, 43,468 rows, every one equal; RS_PLR_COLLECTIVE decides rows on the
 * scan sm_90 rows only (their BRA.DIV fallback is inlined with WARPSYNC.COLLECTIVE). */
static void test_plr_corpus(void) {
  size_t cap = 64u << 20;
  char *gz = rs_xmalloc(cap);
  int rc = rs_check_run("gzip -dc tests/fixtures/sass/plr/corpus-mini.plr.gz", gz, cap);
  CHECKF(rc == 0, "gzip -dc: rc %d", rc);
  rs_err e = {{0}};
  rs_corpus *c = rc ? NULL : rs_corpus_open("data/corpus-mini.h5", &e);
  CHECKF(rc || c, "%s", e.msg);
  unsigned tables = 0, rows = 0, differ = 0, coll = 0, coll_rows = 0, coll_other = 0;
  for (uint64_t i = 0; c && i < rs_corpus_count(c); i++) {
    rs_instance in = {0};
    if (rs_corpus_get(c, i, &in, 1, &e)) {
      CHECKF(0, "row %llu: %s", (unsigned long long)i, e.msg);
      break;
    }
    if (!strcmp(in.form, "sass") && in.raw) {
      char head[200];
      snprintf(head, sizeof head, "=== %s\n", in.id);
      char *at = strstr(gz, head), *end = at ? strstr(at + 1, "\n=== ") : NULL;
      CHECKF(at != NULL, "%s: no -plr table", in.id);
      if (at) {
        char *t = rs_xstrndup(at + strlen(head), end ? (size_t)(end - at - strlen(head)) : strlen(at + strlen(head)));
        rs_module *m = rs_xcalloc(1, sizeof *m);
        m->path = rs_xstrndup(in.id, strlen(in.id));
        m->text = rs_xstrndup(in.raw, strlen(in.raw));
        m->len = strlen(in.raw);
        m->kind = RS_SRC_SASS;
        CHECKF(rs_sass_parse(m, &e) == 0, "%s: %s", in.id, e.msg);
        unsigned r = 0, d = 0, k = 0;
        if (m->nfuncs) compare_module(m, t, in.id, &r, &d, &k);
        tables++, rows += r, differ += d, coll += k;
        coll_rows += k > 0;
        coll_other += k > 0 && !(strstr(in.id, "scan/") == in.id && !strcmp(in.target, "sm_90"));
        if (d) printf("corpus %s: %u of %u rows differ\n", in.id, d, r);
        rs_module_free(m);
        free(t);
      }
    }
    rs_instance_clear(&in);
  }
  if (c) rs_corpus_close(c, &e);
  printf("mini corpus: %u sass rows, %u instructions, %u equal to -plr, %u differ; RS_PLR_COLLECTIVE decides %u rows "
         "(%u listings)\n",
         tables, rows, rows - differ, differ, coll, coll_rows);
  CHECKF(tables == 105 && rows == 43468 && differ == 0, "%u listings, %u rows, %u differ", tables, rows, differ);
  CHECKF(coll > 0 && coll_other == 0, "COLLECTIVE decides %u rows, %u listings outside scan sm_90", coll, coll_other);
  free(gz);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  const char *dir = "tests/fixtures/sass/front";
  char **list;
  int nl = rs_check_list(dir, ".sass", &list);
  CHECKF(nl >= 24, "only %d listings in %s", nl, dir);
  unsigned long tot_rows = 0, tot_equal = 0, tot_diff = 0, tot_r63 = 0, tot_call = 0, tot_r2p = 0, tot_chain = 0;
  for (int i = 0; i < nl; i++) {
    char path[700], base[600];
    snprintf(base, sizeof base, "%s", list[i]);
    base[strlen(base) - 5] = 0;
    rs_err e = {{0}};
    rs_module *m = rs_module_load(list[i], NULL, &e);
    CHECKF(m != NULL, "%s: %s", list[i], e.msg);
    if (!m) continue;
    const rs_func *f = m->funcs[0];
    const rs_target *t = f->tgt;
    /* highest R + 3 = ptxas -v = SHI_REGISTERS */
    unsigned top = 0;
    for (uint32_t v = 0; v < f->nvregs; v++)
      if (f->truth[v].lanes && f->truth[v].unit < 255) {
        unsigned hi = f->truth[v].unit + rs_lanes_units(f->truth[v].lanes);
        if (hi > top) top = hi;
      }
    snprintf(path, sizeof path, "%s.ptxas.txt", base);
    unsigned want = ptxas_regs(path);
    CHECKF(want && top + 2 == want, "%s: highest R + 3 = %u, ptxas -v says %u", list[i], top + 2, want);
    CHECKF(f->declared_regs == want, "%s: SHI_REGISTERS %u, ptxas -v %u", list[i], f->declared_regs, want);
    unsigned ncalls = 0;
    for (uint32_t k = 0; k < f->ninsts; k++) ncalls += !strncmp(rs_func_opcode(f, &f->insts[k]), "CALL.REL.NOINC", 14);
    snprintf(path, sizeof path, "%s.plr", base);
    uint32_t nrows = 0;
    plr_row *rows = read_plr(path, &nrows);
    /* -plr leaves out the padding after the kernel's end; every row must be an instruction */
    CHECKF(rows && nrows > 0 && nrows <= f->ninsts, "%s: %u -plr rows for %u instructions", path, nrows, f->ninsts);
    rs_word *ours, *nocall, *nor2p, *nochain;
    uint32_t W, W2, W3, W4;
    CHECK(rs_sass_live_rows(f, &ours, &W, RS_PLR_ALL, &e) == 0);
    CHECK(rs_sass_live_rows(f, &nocall, &W2, RS_PLR_ALL & ~RS_PLR_CALLS, &e) == 0 && W2 == W);
    CHECK(rs_sass_live_rows(f, &nor2p, &W3, RS_PLR_ALL & ~RS_PLR_R2P, &e) == 0 && W3 == W);
    CHECK(rs_sass_live_rows(f, &nochain, &W4, RS_PLR_ALL & ~RS_PLR_CHAIN, &e) == 0 && W4 == W);
    unsigned nr2p = 0;
    for (uint32_t k = 0; k < f->ninsts; k++)
      nr2p += !strncmp(rs_func_opcode(f, &f->insts[k]), "R2P", 3) || !strncmp(rs_func_opcode(f, &f->insts[k]), "P2R", 3);
    int first[NF];
    unsigned fcount[NF];
    for (int k = 0; k < NF; k++) {
      first[k] = -1, fcount[k] = 0;
      for (uint32_t fi = 0; fi < t->nfiles; fi++)
        if (!strcmp(t->files[fi].name, our_files[k])) first[k] = (int)t->files[fi].first, fcount[k] = t->files[fi].count;
    }
    unsigned equal = 0, ours_only = 0, plr_only = 0, bad_count = 0, shown = 0, r63_plr = 0, r63_ours = 0, call_rows = 0, r2p_rows = 0,
             chain_rows = 0;
    for (uint32_t r = 0; r < nrows && rows && r < f->ninsts; r++) {
      CHECKF(rows[r].addr == f->insts[r].addr, "%s: row %u at %04x, instruction at %04x", path, r, rows[r].addr,
             f->insts[r].addr);
      r63_plr += rows[r].set[0][0] >> 63 & 1;
      r63_ours += first[0] >= 0 && rs_bs_get(ours + (size_t)W * r, (size_t)first[0] + 63);
      call_rows += memcmp(ours + (size_t)W * r, nocall + (size_t)W * r, W * sizeof *ours) != 0;
      r2p_rows += memcmp(ours + (size_t)W * r, nor2p + (size_t)W * r, W * sizeof *ours) != 0;
      chain_rows += memcmp(ours + (size_t)W * r, nochain + (size_t)W * r, W * sizeof *ours) != 0;
      bool same = true;
      for (int k = 0; k < NF; k++) {
        if (rows[r].count[k] != popcount4(rows[r].set[k])) bad_count++;
        for (unsigned reg = 0; reg < 256; reg++) {
          if (k == 0 && reg == 63) continue; /* quirk: 11.8 never shows R63 */
          bool theirs = rows[r].set[k][reg / 64] >> (reg % 64) & 1;
          bool mine = first[k] >= 0 && reg < fcount[k] && rs_bs_get(ours + (size_t)W * r, (size_t)first[k] + reg);
          if (mine == theirs) continue;
          same = false;
          mine ? ours_only++ : plr_only++;
          if (shown++ < 5)
            fprintf(stderr, "%s /*%04x*/: %s%u live %s\n", list[i], rows[r].addr,
                    t->files[rs_target_file_of(t, (uint32_t)first[k])].asm_prefix, reg,
                    mine ? "here, not in -plr" : "in -plr, not here");
        }
      }
      equal += same;
      if (!same && getenv("RS_PLR_DIFF")) { /* debugging aid: every differing row */
        printf("DIFF %s %04x", strrchr(list[i], '/') + 1, rows[r].addr);
        for (int k = 0; k < NF; k++)
          for (int side = 0; side < 2; side++) {
            int any = 0;
            for (unsigned reg = 0; reg < 256; reg++) {
              if (k == 0 && reg == 63) continue;
              bool theirs = rows[r].set[k][reg / 64] >> (reg % 64) & 1;
              bool mine = first[k] >= 0 && reg < fcount[k] && rs_bs_get(ours + (size_t)W * r, (size_t)first[k] + reg);
              if (mine != theirs && mine == !side) printf("%s%s%u", any++ ? "," : side ? " plr+" : " ours+", plr_names[k], reg);
            }
          }
        printf("\n");
      }
    }
    CHECKF(bad_count == 0, "%s: %u -plr rows whose count column differs from their marks", path, bad_count);
    /* `regsweep inspect --live` prints -lrm count's columns: equal to -plr's, row by row */
    if (rs_check_cli) {
      char cmd[800];
      size_t cap = 1 << 20;
      char *out = rs_xmalloc(cap);
      snprintf(cmd, sizeof cmd, "%s inspect %s --live 2>&1", rs_check_cli, list[i]);
      int rc = rs_check_run(cmd, out, cap);
      unsigned lrm_rows = 0, lrm_bad = 0;
      for (char *ln = strchr(out, '\n'); rc == 0 && ln && ln[1]; ln = strchr(ln + 1, '\n')) {
        unsigned a, c[NF];
        if (sscanf(ln + 1, "%x %u %u %u %u", &a, &c[0], &c[1], &c[2], &c[3]) != 5 || lrm_rows >= nrows) continue;
        const plr_row *pr = &rows[lrm_rows++];
        bool same = pr->addr == a;
        for (int k = 0; k < NF; k++) same &= pr->count[k] == c[k];
        if (!same && lrm_bad++ < 3)
          fprintf(stderr, "%s: inspect --live %04x %u %u %u %u, -plr %04x %u %u %u %u\n", list[i], a, c[0], c[1], c[2],
                  c[3], pr->addr, pr->count[0], pr->count[1], pr->count[2], pr->count[3]);
      }
      CHECKF(rc == 0 && lrm_rows == nrows && lrm_bad == 0, "%s: inspect --live: rc %d, %u rows, %u differ from -plr's counts",
             list[i], rc, lrm_rows, lrm_bad);
      free(out);
    }
    CHECKF(r63_plr == 0, "%s: -plr shows R63 in %u rows (the quirk named here is gone)", path, r63_plr);
    CHECKF(ours_only == 0 && plr_only == 0 && equal == nrows,
           "%s: %u registers live for us and not for nvdisasm, %u the other way; %u/%u rows equal", list[i], ours_only,
           plr_only, equal, nrows);
    bool subs = false; /* a $__internal subroutine: there the convention must matter */
    for (uint32_t b = 0; b < f->nblocks; b++) subs |= f->blocks[b].name[0] == '$';
    CHECKF(!subs || call_rows > 0, "%s: calls a subroutine, but -plr's call convention decides no row", list[i]);
    CHECKF(ncalls || !call_rows, "%s: no CALL.REL.NOINC, yet %u rows depend on the call convention", list[i], call_rows);
    CHECKF((nr2p > 0) == (r2p_rows > 0), "%s: %u R2P/P2R, %u rows where -plr's whole PR matters", list[i], nr2p,
           r2p_rows);
    CHECKF(has_chain(f) == (chain_rows > 0), "%s: a chain of calls %s, %u rows where RS_PLR_CHAIN matters", list[i],
           has_chain(f) ? "yes" : "no", chain_rows);
    printf("%-30s rows %4u equal %4u differ %u; quirks: R63 live %4u rows, CALL.REL.NOINC x%u %4u rows, R2P/P2R x%u %3u rows, "
           "chained calls %u rows\n",
           strrchr(list[i], '/') + 1, nrows, equal, ours_only + plr_only, r63_ours, ncalls, call_rows, nr2p, r2p_rows, chain_rows);
    tot_rows += nrows, tot_equal += equal, tot_diff += ours_only + plr_only, tot_r63 += r63_ours, tot_call += call_rows;
    tot_r2p += r2p_rows, tot_chain += chain_rows;
    free(ours);
    free(nocall);
    free(nor2p);
    free(nochain);
    free(rows);
    rs_module_free(m);
  }
  printf("total: %d listings, %lu instructions, %lu rows equal register for register, %lu registers differ; "
         "quirks: R63 live in %lu rows (never shown by -plr), CALL.REL.NOINC convention decides %lu rows, "
         "whole-PR R2P/P2R %lu rows, chained calls %lu rows\n",
         nl, tot_rows, tot_equal, tot_diff, tot_r63, tot_call, tot_r2p, tot_chain);
  rs_check_free_list(list, nl);
  test_plr_more();
  test_plr_corpus();
  return rs_check_done("test_sass_live");
}
