/* test_sass_tools.c - the cubin/disassembler half of the SASS front end, on committed real ptxas 13
 * output (tests/fixtures/sass/, scripts/gen-sass-fixtures.sh); never runs nvdisasm.
 *
 *  1. ELF header: the CUDA 13 layout is recognised per arch and rewritten for nvdisasm 11.8;
 *     unknown flags and truncated cubins are errors, never reads past the end.
 *  2. Holes: nvdisasm 11.8's own tables (.lrm, .plr) of every sm_90 kernel have address holes,
 *     exactly where the completed listing has VIADD/VIMNMX/VIADDMNMX; no other arch has any.
 *     Every label a branch names is defined (11.8 drops the label of a dropped instruction too;
 *     completion restores it from the branch's encoding).
 *  3. Completion round trip: the committed listing minus what we added (header note, filled
 *     lines, desc[URx]) is what nvdisasm printed; completing it against the committed cubin
 *     gives the committed listing back byte for byte. Completing 11.8's -lrm table fills the
 *     same instructions.
 *  4. Filled instructions are right: (a) their destination is read later and their sources are
 *     written earlier in every sm_90 kernel; (b) the calibration kernels (calib.sm_90.ptx) are run
 *     on a small SASS interpreter and every stored word equals the PTX semantics.
 *  5. Descriptors: every desc[URx] written is a pair a `ULDC.64 URx, c[0x0][0x118|0x208]` loads
 *     (sm_80+), no .E access is left without one, sm_75 has none.
 *  6. ptxas -v "Used N registers" = highest R + 3 for every function of every listing.
 *  7. Bad input through the CLI: truncated and garbage cubins, a listing with a hole, a cubin a
 *     (stand-in) nvdisasm refuses: exit 2 with a message naming the file.
 * The stand-in nvdisasm of 7 is a TEST DOUBLE: a two-line shell script written by this test. */
#include "check.h"
#include "cubin/disasm.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR "tests/fixtures/sass"
static const char *const archs[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90"};

static char *slurp(const char *path) {
  rs_err e;
  char *t = rs_read_file(path, NULL, &e);
  CHECKF(t, "%s", e.msg);
  return t;
}

/* ------------------------------------------------------------------ listing lines */

typedef struct {
  char func[128];
  uint64_t addr;
  char text[256]; /* instruction without the address, leading blanks and " ;" */
} inst;

/* Instructions of a listing (any of .sass, .lrm, .plr), in order. */
static int insts_of(const char *listing, inst **out) {
  int n = 0, cap = 0;
  *out = NULL;
  char func[128] = "";
  for (const char *c = listing; *c;) {
    const char *nl = strchr(c, '\n');
    size_t len = nl ? (size_t)(nl - c) : strlen(c);
    char l[4096];
    snprintf(l, sizeof l, "%.*s", (int)(len < sizeof l ? len : sizeof l - 1), c);
    c += len + (nl != NULL);
    char *s = l;
    while (*s == ' ' || *s == '\t') s++;
    if (!strncmp(s, ".section", 8) && (s[8] == ' ' || s[8] == '\t')) {
      char *t = strstr(s, ".text.");
      func[0] = 0;
      if (t) {
        t += 6;
        size_t k = strcspn(t, ",");
        snprintf(func, sizeof func, "%.*s", (int)k, t);
      }
      continue;
    }
    unsigned long long a;
    int used = 0;
    if (s[0] != '/' || s[1] != '*' || !isxdigit((unsigned char)s[2]) || sscanf(s, "/*%llx*/%n", &a, &used) != 1 || !used)
      continue;
    if (n == cap) *out = realloc(*out, sizeof **out * (size_t)(cap = cap ? cap * 2 : 256));
    inst *in = &(*out)[n++];
    snprintf(in->func, sizeof in->func, "%s", func);
    in->addr = a;
    char *t = s + used;
    while (*t == ' ') t++;
    char *semi = strchr(t, ';'), *cm = strstr(t, "//");
    if (cm && (!semi || cm < semi)) semi = cm;
    if (semi) *semi = 0;
    size_t k = strlen(t);
    while (k && t[k - 1] == ' ') t[--k] = 0;
    snprintf(in->text, sizeof in->text, "%s", t);
  }
  return n;
}

static const char *opcode(const char *text, char *buf, size_t n) { /* skips the guard */
  if (*text == '@') text = strchr(text, ' ') ? strchr(text, ' ') + 1 : text;
  size_t k = strcspn(text, " ");
  snprintf(buf, n, "%.*s", (int)(k < n ? k : n - 1), text);
  return buf;
}

static bool dropped_by_118(const char *text) {
  char op[64];
  opcode(text, op, sizeof op);
  return !strncmp(op, "VIADD", 5) || !strncmp(op, "VIMNMX", 6);
}

/* Does text mention register R<r> (not UR<r>, not R<r>0)? */
static bool mentions(const char *text, unsigned r) {
  char pat[16];
  snprintf(pat, sizeof pat, "R%u", r);
  size_t pl = strlen(pat);
  for (const char *p = text; (p = strstr(p, pat)); p++) {
    if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
    if (isdigit((unsigned char)p[pl])) continue;
    return true;
  }
  return false;
}

/* Registers R<k> of an operand list: first (destination) in *dst, the others in src[]. */
static int regs_of(const char *text, unsigned *dst, unsigned *src, int cap) {
  const char *ops = strchr(text + (*text == '@' ? strcspn(text, " ") + 1 : 0), ' ');
  int n = 0, first = 1;
  *dst = 1000;
  for (const char *p = ops; p && *p; p++) {
    if (*p == 'R' && isdigit((unsigned char)p[1]) && (p == ops || !isalnum((unsigned char)p[-1]))) {
      unsigned r = (unsigned)strtoul(p + 1, NULL, 10);
      if (first) *dst = r;
      else if (n < cap) src[n++] = r;
      first = 0;
    } else if (*p == ',') {
      first = 0;
    }
  }
  return n;
}

/* ------------------------------------------------------------------ 1. ELF header */

static void test_header(void) {
  struct {
    uint8_t osabi, abi;
    uint32_t flags;
    unsigned sm;
  } cases[] = {
      {0x41, 8, 0x6004b04, 75}, {0x41, 8, 0x6005004, 80}, {0x41, 8, 0x6005604, 86}, {0x41, 8, 0x6005904, 89},
      {0x41, 8, 0x6005a04, 90}, {0x41, 8, 0x9005904, 89}, {0x41, 8, 0xa005904, 89}, {0x41, 8, 0xb005904, 89},
      {33, 7, 0x590559, 89},    {33, 7, 0x5a055a, 90},    {33, 7, 0x4b054b, 75},
      /* unknown: another low byte, bits 16-23 set, an unseen high byte, sm_100, mixed layouts */
      {0x41, 8, 0x6005a05, 0},  {0x41, 8, 0x6015a04, 0},  {0x41, 8, 0x1005a04, 0}, {0x41, 8, 0x6006404, 0},
      {33, 7, 0x6005a04, 0},    {0x41, 7, 0x6005a04, 0},  {33, 7, 0x590558, 0},    {0, 0, 0x6005a04, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    CHECKF(rs_cubin_sm_from_flags(cases[i].osabi, cases[i].abi, cases[i].flags) == cases[i].sm,
           "flags 0x%x -> %u, want %u", cases[i].flags, rs_cubin_sm_from_flags(cases[i].osabi, cases[i].abi, cases[i].flags),
           cases[i].sm);

  static const struct {
    const char *file;
    unsigned sm;
    uint32_t old;
  } cub[] = {{DIR "/sgemm_t4x4.sm_89.cubin", 89, 0x590559}, {DIR "/sgemm_t4x4.sm_90.cubin", 90, 0x5a055a}};
  for (size_t i = 0; i < 2; i++) {
    rs_cubin c;
    rs_err e;
    int rc = rs_cubin_load(cub[i].file, &c, &e);
    CHECKF(rc == 0, "%s", e.msg);
    if (rc) {
      rs_cubin_free(&c);
      continue;
    }
    CHECK(c.sm == cub[i].sm && c.new_layout && c.bytes[7] == 0x41 && c.bytes[8] == 8);
    CHECK(c.nfuncs == 1 && !strcmp(c.funcs[0].name, "sgemm_tiled"));
    /* the .text size is 16 bytes per instruction of the completed listing */
    char path[256];
    snprintf(path, sizeof path, DIR "/sgemm_t4x4.sm_%u.sass", cub[i].sm);
    char *l = slurp(path);
    inst *in;
    int n = l ? insts_of(l, &in) : 0;
    CHECKF(c.funcs[0].size == 16ull * (uint64_t)n, "%s: .text %llu bytes, listing %d instructions", cub[i].file,
           (unsigned long long)c.funcs[0].size, n);
    free(in);
    free(l);
    size_t len = c.len;
    uint8_t *copy = rs_xmalloc(len);
    memcpy(copy, c.bytes, len);
    rs_cubin_rewrite(&c);
    uint32_t f = (uint32_t)c.bytes[0x30] | (uint32_t)c.bytes[0x31] << 8 | (uint32_t)c.bytes[0x32] << 16 |
                 (uint32_t)c.bytes[0x33] << 24;
    CHECKF(c.bytes[7] == 33 && c.bytes[8] == 7 && f == cub[i].old, "rewritten flags 0x%x", f);
    size_t diff = 0;
    for (size_t k = 0; k < len; k++) diff += copy[k] != c.bytes[k];
    CHECKF(diff <= 6, "rewrite changed %zu bytes (header only: 2 + flags)", diff);
    /* the rewritten cubin reads back as the same arch, old layout */
    uint8_t *again = rs_xmalloc(len);
    memcpy(again, c.bytes, len);
    rs_cubin c2;
    rc = rs_cubin_parse(again, len, "rewritten", &c2, &e);
    CHECKF(rc == 0 && c2.sm == cub[i].sm && !c2.new_layout, "%s", rc ? e.msg : "layout");
    rs_cubin_free(&c2);
    /* every truncation is an error, never a crash or a read past the end (ASan) */
    unsigned errors = 0, cuts = 0;
    for (size_t cut = 0; cut < len; cut += cut < 128 ? 1 : 97) {
      uint8_t *t = rs_xmalloc(cut ? cut : 1);
      memcpy(t, copy, cut);
      rs_cubin tc;
      rs_err te = {{0}};
      int r = rs_cubin_parse(t, cut, "cut.cubin", &tc, &te);
      cuts++;
      errors += r != 0 && !strncmp(te.msg, "cut.cubin: ", 11);
      rs_cubin_free(&tc);
    }
    /* the section headers sit at the end of a cubin: every cut loses them */
    CHECKF(errors == cuts, "%u of %u truncations rejected", errors, cuts);
    free(copy);
    rs_cubin_free(&c);
  }
}

/* ------------------------------------------------------------------ 2-3. holes, round trip */

static unsigned restored_labels, total_holes, total_filled_checked, total_desc_checked, total_kernels, total_roundtrip;

static void test_holes(void) {
  char **lrm;
  int n = rs_check_list(DIR, ".lrm", &lrm);
  CHECKF(n == 32, "%d -lrm tables", n);
  unsigned sm90_holes = 0;
  for (int i = 0; i < n; i++) {
    char sass_path[512];
    snprintf(sass_path, sizeof sass_path, "%.*s.sass", (int)(strlen(lrm[i]) - 4), lrm[i]);
    char *t = slurp(lrm[i]), *s = slurp(sass_path);
    if (!t || !s) {
      free(t);
      free(s);
      continue;
    }
    bool sm90 = strstr(lrm[i], ".sm_90.") != NULL;
    rs_err e = {{0}};
    int rc = rs_sass_check_listing(t, lrm[i], &e);
    CHECKF(sm90 ? rc != 0 && strstr(e.msg, "address hole") && !strncmp(e.msg, lrm[i], strlen(lrm[i])) : rc == 0,
           "%s: %s", lrm[i], rc ? e.msg : "no hole");
    CHECKF(rs_sass_check_listing(s, sass_path, &e) == 0, "%s: %s", sass_path, e.msg);
    /* the hole addresses are exactly the completed listing's VIADD/VIMNMX/VIADDMNMX */
    inst *a, *b;
    int na = insts_of(t, &a), nb = insts_of(s, &b), j = 0, holes = 0, bad = 0;
    for (int k = 0; k < nb; k++) {
      bool printed = j < na && !strcmp(a[j].func, b[k].func) && a[j].addr == b[k].addr;
      /* the tables stop at the function symbol's end: the NOP padding after it has no row */
      bool padding = !printed && !strcmp(b[k].text, "NOP") && (j == na || strcmp(a[j].func, b[k].func));
      if (printed) j++;
      else if (!padding) holes++;
      if (!padding) bad += printed == dropped_by_118(b[k].text);
    }
    CHECKF(j == na && bad == 0, "%s: %d of %d table rows matched, %d rows disagree", lrm[i], j, na, bad);
    CHECKF(sm90 ? holes > 0 : holes == 0, "%s: %d holes", lrm[i], holes);
    if (sm90 && strncmp(lrm[i], DIR "/calib", strlen(DIR "/calib"))) sm90_holes += (unsigned)holes;
    total_holes += (unsigned)holes;
    /* every label a branch names is defined; those 11.8 dropped with their instruction are back */
    unsigned undefined = 0;
    for (const char *r = s; (r = strstr(r, "`(")); r++) {
      char lb[64], def[72];
      size_t k = strcspn(r + 2, ")");
      snprintf(lb, sizeof lb, "%.*s", (int)(k < 60 ? k : 60), r + 2);
      snprintf(def, sizeof def, "\n%s:", lb);
      if (!strstr(s, def)) undefined++;
      else if (!strstr(t, def)) restored_labels++;
    }
    CHECKF(undefined == 0, "%s: %u branch labels undefined", sass_path, undefined);
    free(a);
    free(b);
    free(t);
    free(s);
  }
  CHECKF(sm90_holes == 58, "%u holes in the sm_90 kernel fixtures (58 measured)", sm90_holes);
  /* wmma_w2x2_r4x2.sm_90: `@!P0 BRA .L_x_11` goes to a VIADD 11.8 drops, label and all */
  CHECKF(restored_labels >= 1, "%u branch references to labels restored from the encoding", restored_labels);
  rs_check_free_list(lrm, n);
}

/* The committed listing minus what completion added = nvdisasm's listing; completing it again
 * must give the committed listing back. */
static void roundtrip(const char *stem) {
  char p[256];
  snprintf(p, sizeof p, DIR "/%s.sass", stem);
  char *s = slurp(p);
  snprintf(p, sizeof p, DIR "/%s.cubin", stem);
  rs_cubin c;
  rs_err e;
  if (!s || rs_cubin_load(p, &c, &e)) {
    CHECKF(0, "%s", s ? e.msg : "listing");
    free(s);
    if (s) rs_cubin_free(&c);
    return;
  }
  size_t n = strlen(s);
  char *raw = rs_xmalloc(n + 1), *o = raw;
  const char *c0 = strchr(s, '\n') + 1; /* drop the header note */
  unsigned dropped = 0, descs = 0;
  for (const char *l = c0; *l;) {
    const char *nl = strchr(l, '\n');
    size_t len = nl ? (size_t)(nl - l + 1) : strlen(l);
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)len, l);
    l += len;
    char *tx = line;
    while (*tx == ' ') tx++;
    if (!strncmp(tx, "/*", 2) && strchr(tx, '/') && dropped_by_118(strstr(tx, "*/") + 2 + strspn(strstr(tx, "*/") + 2, " "))) {
      dropped++;
      continue;
    }
    for (char *d; (d = strstr(line, "desc[UR"));) {
      char *end = strchr(d, ']');
      memmove(d, end + 1, strlen(end + 1) + 1);
      descs++;
    }
    size_t k = strlen(line);
    memcpy(o, line, k);
    o += k;
  }
  *o = 0;
  char *out = NULL;
  rs_sass_stats st;
  int rc = rs_sass_complete(&c, raw, p, &out, &st, &e);
  CHECKF(rc == 0, "%s", e.msg);
  if (!rc) {
    CHECKF(!strcmp(out, s), "%s: completing nvdisasm's listing does not reproduce the committed one", stem);
    CHECKF(st.filled == dropped && st.descs == descs && st.holes == dropped, "%s: filled %u of %u, desc %u of %u", stem,
           st.filled, dropped, st.descs, descs);
    total_roundtrip++;
  }
  free(out);
  /* and nvdisasm's -lrm table (instruction text cut) gets the same instructions filled */
  snprintf(p, sizeof p, DIR "/%s.lrm", stem);
  char *t = slurp(p);
  rc = t ? rs_sass_complete(&c, t, p, &out, &st, &e) : -1;
  CHECKF(rc == 0, "%s", e.msg);
  if (!rc) {
    inst *a, *b;
    int na = insts_of(out, &a), nb = insts_of(s, &b), same = 0, filled = 0, found = 0;
    for (int k = 0, j = 0; k < na; k++) {
      while (j < nb && (strcmp(a[k].func, b[j].func) || a[k].addr != b[j].addr)) j++;
      if (j == nb) break;
      found++;
      if (dropped_by_118(a[k].text)) {
        filled++;
        same += !strcmp(a[k].text, b[j].text);
      }
    }
    CHECKF(found == na && na + (int)st.padding == nb && filled == (int)dropped && same == filled,
           "%s: lrm completion %d/%d rows (+%u padding of %d), %d/%d fills equal", stem, found, na, st.padding, nb,
           same, filled);
    free(a);
    free(b);
  }
  free(out);
  free(t);
  free(raw);
  free(s);
  rs_cubin_free(&c);
}

/* ------------------------------------------------------------------ 4a. dataflow around fills */

static void test_fill_dataflow(void) {
  char **ls;
  int n = rs_check_list(DIR, ".sm_90.sass", &ls);
  for (int i = 0; i < n; i++) {
    char *s = slurp(ls[i]);
    inst *in = NULL;
    int ni = s ? insts_of(s, &in) : 0;
    for (int k = 0; k < ni; k++) {
      if (!dropped_by_118(in[k].text)) continue;
      unsigned d, src[4];
      int ns = regs_of(in[k].text, &d, src, 4);
      bool read_later = false;
      for (int j = k + 1; j < ni && !strcmp(in[j].func, in[k].func) && !read_later; j++) {
        unsigned d2, s2[8];
        int n2 = regs_of(in[j].text, &d2, s2, 8);
        char op[64];
        opcode(in[j].text, op, sizeof op);
        /* a store's first operand is an address: read too */
        if (!strncmp(op, "ST", 2) || !strncmp(op, "RED", 3)) s2[n2 < 8 ? n2++ : 7] = d2;
        for (int q = 0; q < n2; q++) read_later |= s2[q] == d || (s2[q] + 1 == d && strstr(in[j].text, ".64"));
      }
      CHECKF(read_later, "%s 0x%04llx %s: R%u is never read", ls[i], (unsigned long long)in[k].addr, in[k].text, d);
      for (int q = 0; q < ns; q++) {
        bool written = false;
        for (int j = k - 1; j >= 0 && !strcmp(in[j].func, in[k].func) && !written; j--) {
          unsigned d2, s2[8];
          regs_of(in[j].text, &d2, s2, 8);
          char op[64];
          opcode(in[j].text, op, sizeof op);
          bool pair = strstr(op, ".64") || strstr(op, ".WIDE") || !strncmp(op, "CS2R", 4);
          written = d2 == src[q] || (pair && d2 + 1 == src[q]);
        }
        /* a loop-carried source may be written below (before the back edge) */
        for (int j = k + 1; j < ni && !strcmp(in[j].func, in[k].func) && !written; j++) {
          unsigned d2, s2[8];
          regs_of(in[j].text, &d2, s2, 8);
          written = d2 == src[q] && strstr(s, ".L_x_");
        }
        CHECKF(written, "%s 0x%04llx %s: source R%u is never written", ls[i], (unsigned long long)in[k].addr,
               in[k].text, src[q]);
      }
      total_filled_checked++;
    }
    free(in);
    free(s);
  }
  rs_check_free_list(ls, n);
}

/* ------------------------------------------------------------------ 4b. interpreter */

typedef struct {
  uint32_t r[256], ur[64];
  bool p[8];
  uint32_t c[0x400];          /* constant bank 0, by byte offset / 4 */
  uint32_t tid[3];
  uint32_t stored[32];        /* word index from the thread's own slot (out + tid.x * 4) */
  bool have[32];
  int err;
} machine;

static uint32_t val(machine *m, const char *op) {
  while (*op == ' ') op++;
  bool neg = *op == '-';
  if (neg) op++;
  uint32_t v = 0;
  if (!strncmp(op, "RZ", 2)) v = 0;
  else if (!strncmp(op, "URZ", 3)) v = 0;
  else if (op[0] == 'R') v = m->r[strtoul(op + 1, NULL, 10)];
  else if (op[0] == 'U' && op[1] == 'R') v = m->ur[strtoul(op + 2, NULL, 10)];
  else if (!strncmp(op, "0x", 2)) v = (uint32_t)strtoul(op, NULL, 16);
  else if (!strncmp(op, "c[0x0][", 7)) v = m->c[strtoul(op + 7, NULL, 16) / 4];
  else m->err++;
  return neg ? (uint32_t)-v : v;
}

static unsigned regno(const char *op) {
  while (*op == ' ') op++;
  return op[0] == 'U' ? (unsigned)strtoul(op + 2, NULL, 10) : (unsigned)strtoul(op + 1, NULL, 10);
}

static uint32_t minmax(uint32_t a, uint32_t b, bool is_signed, const char *sel) {
  while (*sel == ' ') sel++;
  bool mn = strcmp(sel, "PT") == 0; /* PT = min, !PT = max */
  if (is_signed) return mn ? ((int32_t)a < (int32_t)b ? a : b) : ((int32_t)a > (int32_t)b ? a : b);
  return mn ? (a < b ? a : b) : (a > b ? a : b);
}

/* Run one function of a listing (straight-line code up to EXIT). */
static void run_func(machine *m, const inst *in, int n, const char *func) {
  uint64_t base = (uint64_t)m->c[0x210 / 4] | (uint64_t)m->c[0x214 / 4] << 32;
  for (int k = 0; k < n && !m->err; k++) {
    if (strcmp(in[k].func, func)) continue;
    char t[256], *ops[8];
    snprintf(t, sizeof t, "%s", in[k].text);
    for (char *r; (r = strstr(t, ".reuse"));) memmove(r, r + 6, strlen(r + 6) + 1);
    char *body = t;
    if (*body == '@') {
      bool not = body[1] == '!';
      unsigned p = (unsigned)(body[not ? 3 : 2] - '0');
      body = strchr(body, ' ') + 1;
      if (m->p[p] == not) continue;
    }
    char *sp = strchr(body, ' ');
    int no = 0;
    if (sp) {
      *sp = 0;
      for (char *o = strtok(sp + 1, ","); o && no < 8; o = strtok(NULL, ",")) ops[no++] = o;
    }
    const char *op = body;
    bool u32 = strstr(op, ".U32") != NULL;
    if (!strcmp(op, "EXIT")) return;
    if (!strcmp(op, "LDC") || !strcmp(op, "ULDC") || !strcmp(op, "LDC.64") || !strcmp(op, "ULDC.64")) {
      bool ur = op[0] == 'U';
      unsigned d = regno(ops[0]), off = (unsigned)strtoul(strstr(ops[1], "][") + 2, NULL, 16) / 4;
      (ur ? m->ur : m->r)[d] = m->c[off];
      if (strstr(op, ".64")) (ur ? m->ur : m->r)[d + 1] = m->c[off + 1];
    } else if (!strcmp(op, "S2R")) {
      m->r[regno(ops[0])] = m->tid[strstr(ops[1], "SR_TID.X") ? 0 : strstr(ops[1], "SR_TID.Y") ? 1 : 2];
    } else if (!strcmp(op, "IMAD.WIDE.U32")) {
      uint64_t v = (uint64_t)val(m, ops[1]) * val(m, ops[2]) +
                   ((uint64_t)m->r[regno(ops[3])] | (uint64_t)m->r[regno(ops[3]) + 1] << 32);
      m->r[regno(ops[0])] = (uint32_t)v;
      m->r[regno(ops[0]) + 1] = (uint32_t)(v >> 32);
    } else if (!strcmp(op, "IMAD.MOV.U32")) {
      m->r[regno(ops[0])] = val(m, ops[1]) * val(m, ops[2]) + val(m, ops[3]);
    } else if (!strcmp(op, "IADD3")) {
      m->r[regno(ops[0])] = val(m, ops[1]) + val(m, ops[2]) + val(m, ops[3]);
    } else if (!strcmp(op, "ISETP.GT.AND")) {
      m->p[ops[0][1] == 'T' ? 7 : ops[0][1] - '0'] = (int32_t)val(m, ops[2]) > (int32_t)val(m, ops[3]);
    } else if (!strcmp(op, "VIADD")) {
      m->r[regno(ops[0])] = val(m, ops[1]) + val(m, ops[2]);
    } else if (!strncmp(op, "VIMNMX", 6) && no == 4) {
      m->r[regno(ops[0])] = minmax(val(m, ops[1]), val(m, ops[2]), !u32, ops[3]);
    } else if (!strncmp(op, "VIADDMNMX", 9) && no == 5) {
      m->r[regno(ops[0])] = minmax(val(m, ops[1]) + val(m, ops[2]), val(m, ops[3]), !u32, ops[4]);
    } else if (!strcmp(op, "STG.E")) {
      const char *a = strstr(ops[0], "][R");
      if (!a) {
        m->err++;
        continue;
      }
      unsigned r = (unsigned)strtoul(a + 3, NULL, 10);
      const char *plus = strchr(a, '+');
      uint64_t addr = ((uint64_t)m->r[r] | (uint64_t)m->r[r + 1] << 32) + (plus ? strtoul(plus + 1, NULL, 16) : 0);
      uint64_t w = (addr - base) / 4 - m->tid[0];
      if (w >= 32) m->err++;
      else {
        m->stored[w] = val(m, ops[1]);
        m->have[w] = true;
      }
    } else {
      fprintf(stderr, "interpreter: %s not modelled\n", op);
      m->err++;
    }
  }
}

static int32_t smin(int32_t a, int32_t b) { return a < b ? a : b; }
static int32_t smax(int32_t a, int32_t b) { return a > b ? a : b; }
static uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t umax(uint32_t a, uint32_t b) { return a > b ? a : b; }

static void test_interpreter(void) {
  char *s = slurp(DIR "/calib.sm_90.sass");
  if (!s) return;
  inst *in;
  int n = insts_of(s, &in);
  static const int32_t params[][2] = {{-100, -3}, {50, 2000}, {7, -70000}, {-2000000000, 5}};
  static const uint32_t tids[][3] = {{5, 2, 1}, {400, 1500, 3}, {2, 0, 9}, {31, 1023, 0}};
  unsigned words = 0;
  for (size_t pi = 0; pi < 4; pi++)
    for (size_t ti = 0; ti < 4; ti++) {
      int32_t N = params[pi][0], M = params[pi][1];
      uint32_t tx = tids[ti][0], ty = tids[ti][1], tz = tids[ti][2], n32 = (uint32_t)N, m32 = (uint32_t)M;
      for (int f = 0; f < 2; f++) {
        machine *m = rs_xcalloc(1, sizeof *m);
        m->c[0x210 / 4] = 0x10000;
        m->c[0x218 / 4] = n32;
        m->c[0x21c / 4] = m32;
        m->c[0x28 / 4] = 0xfffc;
        memcpy(m->tid, tids[ti], sizeof m->tid);
        uint32_t want[14];
        bool used[14] = {0};
        if (f == 0) { /* cal_minmax, as its PTX says */
          uint32_t r3 = tx + 77, r4 = ty + n32, r13 = tx + ty, r15 = ty + 9;
          uint32_t w[14] = {0,
                            (uint32_t)smin((int32_t)r3, (int32_t)r4),
                            (uint32_t)smax((int32_t)r3, (int32_t)r4),
                            umin(r3, r4),
                            umax(r3, r4),
                            (uint32_t)smin((int32_t)tx, 300),
                            (uint32_t)smax((int32_t)tx, -5),
                            umin(ty, 1000),
                            umax(ty, 7),
                            (uint32_t)smin((int32_t)r13, M),
                            (uint32_t)smax((int32_t)r15, (int32_t)tx),
                            tx - 33,
                            (uint32_t)smin((int32_t)tx, N),
                            umax(ty, m32)};
          for (int k = 1; k < 14; k++) w[0] += w[k];
          memcpy(want, w, sizeof w);
          for (int k = 0; k < 14; k++) used[k] = true;
          run_func(m, in, n, "cal_minmax");
        } else { /* cal_addmnmx */
          uint32_t w[14] = {0,
                            (uint32_t)smin((int32_t)(tx + ty), (int32_t)tz),
                            (uint32_t)smax((int32_t)(tx + n32), (int32_t)tz),
                            umin(ty + tz, tx),
                            tx - n32,
                            n32 - ty,
                            umin(ty + 5, 100),
                            (int32_t)tx > 3 ? tz + 11 : tz};
          memcpy(want, w, sizeof w);
          for (int k = 1; k < 8; k++) used[k] = true;
          run_func(m, in, n, "cal_addmnmx");
        }
        CHECKF(!m->err, "interpreter failed on %s", f ? "cal_addmnmx" : "cal_minmax");
        for (int k = 0; k < 14; k++) {
          if (!used[k]) continue;
          CHECKF(m->have[k] && m->stored[k] == want[k], "%s n=%d m=%d tid=(%u,%u,%u): word %d = 0x%x, PTX says 0x%x",
                 f ? "cal_addmnmx" : "cal_minmax", N, M, tx, ty, tz, k, m->stored[k], want[k]);
          words++;
        }
        free(m);
      }
    }
  CHECKF(words == 16 * 21, "%u stored words compared", words);
  free(in);
  free(s);
}

/* ------------------------------------------------------------------ 5-6. descriptors, ptxas -v */

static void test_desc_and_counts(void) {
  char **ls;
  int n = rs_check_list(DIR, ".sass", &ls);
  CHECKF(n == 32, "%d listings", n);
  unsigned per_arch[5] = {0};
  for (int i = 0; i < n; i++) {
    char *s = slurp(ls[i]), vp[512];
    snprintf(vp, sizeof vp, "%.*s.ptxas-v.txt", (int)(strlen(ls[i]) - 5), ls[i]);
    char *v = slurp(vp);
    if (!s || !v) {
      free(s);
      free(v);
      continue;
    }
    unsigned sm = (unsigned)atoi(strstr(ls[i], ".sm_") + 4);
    for (int a = 0; a < 5; a++) per_arch[a] += (unsigned)atoi(archs[a] + 3) == sm;
    inst *in = NULL;
    int ni = insts_of(s, &in);
    const char *konst = sm >= 90 ? "c[0x0][0x208]" : "c[0x0][0x118]";
    int start = 0;
    while (start < ni) {
      int end = start;
      while (end < ni && !strcmp(in[end].func, in[start].func)) end++;
      bool loaded[64] = {0};
      unsigned highest = 0, descs = 0, bare = 0, wrong = 0;
      for (int k = start; k < end; k++) {
        const char *t = in[k].text;
        char op[64];
        opcode(t, op, sizeof op);
        if (!strcmp(op, "ULDC.64") && strstr(t, konst)) loaded[regno(strchr(t, 'U') + 8)] = true;
        for (const char *d = t; (d = strstr(d, "desc[UR")); d++) {
          unsigned u = (unsigned)strtoul(d + 7, NULL, 10);
          descs++;
          wrong += u >= 64 || !loaded[u];
        }
        char base[16];
        snprintf(base, sizeof base, "%.*s", (int)strcspn(op, "."), op);
        bool access = !strcmp(base, "LDG") || !strcmp(base, "STG") || !strcmp(base, "LD") || !strcmp(base, "ST") ||
                      !strcmp(base, "REDG") || !strcmp(base, "ATOMG") || !strcmp(base, "RED") || !strcmp(base, "ATOM");
        if (access && strstr(op, ".E") && !strstr(t, "desc[")) bare++;
        for (unsigned r = highest + 1; r < 255; r++)
          if (mentions(t, r)) highest = r;
      }
      if (sm >= 80) {
        CHECKF(descs > 0 && wrong == 0 && bare == 0, "%s %s: %u desc[], %u not a loaded descriptor, %u .E without",
               ls[i], in[start].func, descs, wrong, bare);
        total_desc_checked += descs;
      } else {
        CHECKF(descs == 0, "%s: sm_75 has no descriptors", ls[i]);
      }
      /* ptxas -v: "Compiling entry function 'F'" ... "Used N registers" */
      char key[200];
      snprintf(key, sizeof key, "function '%s'", in[start].func);
      const char *f = strstr(v, key), *u = f ? strstr(f, "Used ") : NULL;
      unsigned used = u ? (unsigned)atoi(u + 5) : 0;
      CHECKF(used == highest + 3, "%s %s: ptxas -v %u registers, highest R%u", ls[i], in[start].func, used, highest);
      total_kernels++;
      start = end;
    }
    free(in);
    free(s);
    free(v);
  }
  for (int a = 0; a < 5; a++) CHECKF(per_arch[a] >= 6, "%s: %u listings", archs[a], per_arch[a]);
  rs_check_free_list(ls, n);
}

/* ------------------------------------------------------------------ 7. bad input, CLI */

static void test_cli(void) {
  char dir[] = "/tmp/rs-sass-XXXXXX", cmd[2048], out[4096], p[256];
  if (!mkdtemp(dir)) {
    CHECK(0);
    return;
  }
  char *cub = NULL;
  size_t len = 0;
  rs_err e;
  cub = rs_read_file(DIR "/sgemm_t4x4.sm_90.cubin", &len, &e);
  CHECK(cub != NULL);
  if (!cub) return;
  /* truncated and garbage cubins */
  const size_t cuts[] = {10, 100, len / 2, len - 1};
  for (int i = 0; i < 4; i++) {
    snprintf(p, sizeof p, "%s/cut%d.cubin", dir, i);
    FILE *fp = fopen(p, "wb");
    fwrite(cub, 1, cuts[i], fp);
    fclose(fp);
    snprintf(cmd, sizeof cmd, "%s corpus disasm %s --nvdisasm /bin/true", rs_check_cli, p);
    int rc = rs_check_run(cmd, out, sizeof out);
    CHECKF(rc == 2 && strstr(out, p) && !strstr(out, "Sanitizer"), "cut %zu: rc %d: %s", cuts[i], rc, out);
  }
  snprintf(p, sizeof p, "%s/garbage.cubin", dir);
  FILE *fp = fopen(p, "wb");
  for (int i = 0; i < 5000; i++) fputc((i * 7919) & 0xff, fp);
  fclose(fp);
  snprintf(cmd, sizeof cmd, "%s corpus disasm %s", rs_check_cli, p);
  int rc = rs_check_run(cmd, out, sizeof out);
  /* without any nvdisasm the tool is reported missing; with one the cubin is refused: both exit 2 */
  CHECKF(rc == 2 && (strstr(out, p) || strstr(out, "nvdisasm")), "garbage: rc %d: %s", rc, out);
  /* a listing with a hole (nvdisasm 11.8's own -lrm table of an sm_90 kernel) */
  snprintf(cmd, sizeof cmd, "%s corpus disasm --check " DIR "/sgemm_t4x4.sm_90.lrm", rs_check_cli);
  rc = rs_check_run(cmd, out, sizeof out);
  CHECKF(rc == 2 && strstr(out, DIR "/sgemm_t4x4.sm_90.lrm:") && strstr(out, "address hole"), "hole: rc %d: %s", rc, out);
  snprintf(cmd, sizeof cmd, "%s corpus disasm --check " DIR "/sgemm_t4x4.sm_90.sass", rs_check_cli);
  CHECK(rs_check_run(cmd, out, sizeof out) == 0);
  /* TEST DOUBLE: a stand-in nvdisasm that refuses every cubin the way 11.8 refuses CUDA 13 ones */
  snprintf(p, sizeof p, "%s/standin-nvdisasm", dir);
  fp = fopen(p, "w");
  fprintf(fp, "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'Cuda compilation tools, release 12.9, V12.9.0'; exit 0; }\n"
              "echo 'nvdisasm fatal   : Elf file does not contain Cuda architecture information' >&2; exit 1\n");
  fclose(fp);
  chmod(p, 0755);
  snprintf(cmd, sizeof cmd, "%s corpus disasm " DIR "/sgemm_t4x4.sm_90.cubin --nvdisasm %s", rs_check_cli, p);
  rc = rs_check_run(cmd, out, sizeof out);
  CHECKF(rc == 2 && strstr(out, DIR "/sgemm_t4x4.sm_90.cubin: nvdisasm 12.9 refused it") &&
             strstr(out, "architecture information"),
         "refused: rc %d: %s", rc, out);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
  free(cub);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  test_header();
  test_holes();
  roundtrip("sgemm_t4x4.sm_89");
  roundtrip("sgemm_t4x4.sm_90");
  roundtrip("calib.sm_90");
  test_fill_dataflow();
  test_interpreter();
  test_desc_and_counts();
  test_cli();
  CHECKF(total_roundtrip == 3, "%u round trips", total_roundtrip);
  printf("sass tools: %u kernels (listing x function), %u holes in 11.8's tables, %u fills checked against the "
         "dataflow, %u desc[] checked against their ULDC.64, %u references to restored labels\n",
         total_kernels, total_holes, total_filled_checked, total_desc_checked, restored_labels);
  return rs_check_done("test_sass_tools");
}
