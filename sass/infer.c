/* infer.c - table rows for instruction forms sass/optable.c lacks, read off nvdisasm's own life
 * ranges (`nvdisasm -c -plr -lrm narrow`, completed by cubin/disasm.c): for every instance of an
 * unknown form, each register operand's column in its row says whether the instruction defines
 * it (^), reads it (v) or both (x), and the columns after it with the same kind of mark, not
 * named by another operand, give its width (1, 2 or 4, aligned as tuples are). A form is
 * inferred only when every instance gives the same roles; one whose instances disagree, or with
 * a register -plr marks neither read nor written, stays unknown, with the reason; so does one
 * with a register -plr marks read or written that no operand names (a hidden descriptor, a
 * third register of a tuple), an operand of a file -plr does not show (B), or a control
 * instruction (its control-flow role is not in -plr). The rows are printed (`corpus forms
 * --inferred`) for review, and the parser reads an unknown form with its row
 * (rs_sass_opts.inferred), marked inferred; mcode/load.c keeps such a function only if its
 * pinned run reproduces ptxas. */
#include "sass/sass.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NG = 4, MAXOPS = 16, MAXREG = 256 };
static const char *const gname[NG] = {"GPR", "PRED", "UGPR", "UPRED"};

/* The control instructions of NVIDIA's instruction-set reference (CUDA Binary Utilities, Turing
 * to Hopper: "Control Instructions"), by opcode: what follows them, where they go, which joins
 * they make is not in -plr, so a form of one is never inferred. */
static const char *const control[] = {"ACQBULK", "BMOV", "BPT", "BRA", "BREAK", "BRX", "BRXU", "BSSY", "BSYNC",
                                      "CALL", "ELECT", "ENDCOLLECTIVE", "EXIT", "JMP", "JMX", "JMXU", "KILL",
                                      "NANOSLEEP", "PREEXIT", "RET", "RPCMOV", "RTT", "WARPSYNC", "YIELD"};

static bool is_control(const char *form) {
  size_t b = strcspn(form, ".");
  for (size_t i = 0; i < sizeof control / sizeof *control; i++)
    if (strlen(control[i]) == b && !memcmp(control[i], form, b)) return true;
  return false;
}

bool rs_sass_masked(const char *mask, const char *form) {
  size_t fl = strlen(form);
  for (const char *m = mask; m && *m;) {
    size_t l = strcspn(m, ",");
    if (l == fl && !memcmp(m, form, l)) return true;
    m += l + (m[l] == ',');
  }
  return false;
}

const char *rs_sass_test_mask(void) {
  const char *m = getenv("RS_TEST_MASK_ROWS");
  return m && *m ? m : NULL;
}

/* The table's row for a form, as the parser sees it (a masked row is no row). */
static bool known(const rs_sass_infer *x, const char *form, uint32_t nops) {
  const char *variant;
  char why[300];
  const rs_sass_op *row = rs_sass_lookup(form, strlen(form), nops, &variant, why, sizeof why);
  return row && !rs_sass_masked(x->mask, row->form);
}

typedef struct {
  int order[NG];    /* group of each segment, -1 none */
  int col0[NG];     /* per group: column of register 0, relative to the "//" */
  int size[NG];     /* registers shown */
  bool have;
} layout;

/* Does s[0..n) contain w? */
static bool has(const char *s, size_t n, const char *w) {
  size_t k = strlen(w);
  for (size_t i = 0; i + k <= n; i++)
    if (!memcmp(s + i, w, k)) return true;
  return false;
}

/* Position of "//" in a line, or -1. */
static int cmt(const char *s, size_t n) {
  for (size_t i = 0; i + 1 < n; i++)
    if (s[i] == '/' && s[i + 1] == '/') return (int)i;
  return -1;
}

/* The header lines: "// |  GPR  | PRED |" names the segments, "// |  # 0123 | # 0 |" places them. */
static void header(layout *L, const char *s, size_t n) {
  int c = cmt(s, n);
  if (c < 0) return;
  const char *t = s + c;
  size_t tn = n - (size_t)c;
  if (has(t, tn, "GPR") && !has(t, tn, "#")) {
    int seg = -1;
    for (int g = 0; g < NG; g++) L->order[g] = -1;
    for (size_t i = 0; i < tn; i++) {
      if (t[i] == '|') seg++;
      for (int g = 0; g < NG && seg >= 0 && seg < NG; g++)
        if (!strncmp(t + i, gname[g], strlen(gname[g])) && (i == 0 || t[i - 1] == ' ' || t[i - 1] == '|') &&
            (t[i + strlen(gname[g])] == ' ' || t[i + strlen(gname[g])] == '|') && L->order[seg] < 0)
          L->order[seg] = g;
    }
    return;
  }
  if (!has(t, tn, "# 0") && !has(t, tn, "#  0")) return;
  int seg = -1;
  for (int g = 0; g < NG; g++) L->col0[g] = -1, L->size[g] = 0;
  for (size_t i = 0; i < tn; i++) {
    if (t[i] == '|') seg++;
    if (t[i] != '#' || seg < 0 || seg >= NG || L->order[seg] < 0) continue;
    size_t j = i + 1;
    while (j < tn && t[j] == ' ') j++;
    int g = L->order[seg];
    L->col0[g] = (int)j;
    while (j < tn && t[j] >= '0' && t[j] <= '9') j++, L->size[g]++;
  }
  L->have = true;
}

/* A register token: group and index, or -1 (RZ, PT ... and everything else). */
static int reg_of(const char *s, size_t n, int *idx) {
  int g = -1;
  size_t p = 0;
  if (n >= 3 && s[0] == 'U' && s[1] == 'R' && s[2] >= '0' && s[2] <= '9') g = 2, p = 2;
  else if (n >= 3 && s[0] == 'U' && s[1] == 'P' && s[2] >= '0' && s[2] <= '9') g = 3, p = 2;
  else if (n >= 2 && s[0] == 'R' && s[1] >= '0' && s[1] <= '9') g = 0, p = 1;
  else if (n >= 2 && s[0] == 'P' && s[1] >= '0' && s[1] <= '9') g = 1, p = 1;
  if (g < 0) return -1;
  int v = 0;
  while (p < n && s[p] >= '0' && s[p] <= '9') v = v * 10 + (s[p++] - '0');
  *idx = v;
  return g;
}

static char mark(const char *row, size_t rn, int c, const layout *L, int g, int idx) {
  if (L->col0[g] < 0 || idx >= L->size[g]) return '?';
  size_t at = (size_t)(c + L->col0[g] + idx);
  return at < rn ? row[at] : ' ';
}

/* Operand codes of a candidate row: role (d, s, x) x width (1, 2, 4), or fixed kinds. */
enum { C_MEM = 9, C_LABEL = 10, C_ANY = 255, MAXCAND = 256 };
static const char role_ch[3] = {'d', 's', 'x'};
static const int width_of[3] = {1, 2, 4};

/* Intersect the form's candidates with one instance's (same operand count): vectors equal
 * operand by operand, C_ANY (a zero register or a constant there) taking the other's code. */
static void intersect(rs_sass_inferred *r, const uint8_t *b, uint32_t nb) {
  uint32_t no = r->nops ? r->nops : 1, k = 0;
  uint8_t *out = rs_xmalloc((size_t)MAXCAND * no);
  for (uint32_t i = 0; i < r->ncand; i++)
    for (uint32_t j = 0; j < nb && k < MAXCAND; j++) {
      const uint8_t *a = r->cand + (size_t)i * no, *c = b + (size_t)j * no;
      uint8_t v[MAXOPS];
      bool ok = true;
      for (uint32_t o = 0; o < r->nops && ok; o++) {
        v[o] = a[o] == C_ANY ? c[o] : a[o];
        ok = a[o] == C_ANY || c[o] == C_ANY || a[o] == c[o];
      }
      for (uint32_t q = 0; q < k && ok; q++) ok = memcmp(out + (size_t)q * no, v, r->nops) != 0;
      if (ok) memcpy(out + (size_t)k++ * no, v, r->nops);
    }
  free(r->cand);
  r->cand = out;
  r->ncand = k;
}

/* Between assignments that fit every instance alike (each gives exactly -plr's reads and
 * writes there; they differ in which operand a register is attributed to): fewer operands read
 * and written (x), then fewer written ones, written ones first (SASS prints its results before
 * its sources: IMAD.WIDE.U32 R2, R7, 0x4, R2 fits d2 s1 s1 s2 and s2 s1 s1 d2), then the wider
 * tuples. Wider is the safe side: a
 * tuple keeps its registers together in a recolouring, where two single registers read as one
 * pair by the hardware would be split (IMAD.WIDE.U32 R2, R3, 0x4, R2 fits d2 s1 s1 s1 and
 * d2 s1 s1 s2 alike; the table's row is the latter). */
static uint32_t cost(const uint8_t *v, uint32_t nops) {
  uint32_t k = 0;
  for (uint32_t o = 0; o < nops; o++)
    if (v[o] < C_MEM) /* SASS prints what it writes first: a write on a later operand costs more */
      k += (v[o] / 3 == 2 ? 10000u : v[o] / 3 == 0 ? 100u + 10u * o : 0u) + 4u - (uint32_t)width_of[v[o] % 3];
  return k;
}

/* The row of the form's one least candidate (C_ANY: read as one register), or why none. */
static void settle(rs_sass_inferred *r) {
  free(r->ops), free(r->why);
  r->ops = NULL, r->why = NULL;
  char b[300];
  uint32_t best = UINT32_MAX, nbest = 0, at = 0, no = r->nops ? r->nops : 1;
  for (uint32_t i = 0; i < r->ncand; i++) {
    uint32_t k = cost(r->cand + (size_t)i * no, r->nops);
    if (k < best) best = k, nbest = 0, at = i;
    nbest += k == best;
  }
  if (nbest != 1) {
    if (r->ncand) snprintf(b, sizeof b, "ambiguous: %u role assignments fit all %u instances alike", nbest, r->instances);
    else snprintf(b, sizeof b, "instances disagree: no one role assignment fits instance %u and those before it", r->instances);
    r->why = rs_xstrndup(b, strlen(b));
    return;
  }
  size_t k = 0;
  b[0] = 0;
  r->zero_only = 0;
  for (uint32_t o = 0; o < r->nops; o++) {
    uint8_t c = r->cand[(size_t)at * no + o];
    if (c == C_ANY && o < 32) r->zero_only |= 1u << o;
    if (c == C_MEM) k += (size_t)snprintf(b + k, sizeof b - k, "%sm", o ? " " : "");
    else if (c == C_LABEL) k += (size_t)snprintf(b + k, sizeof b - k, "%sl", o ? " " : "");
    else if (c == C_ANY) k += (size_t)snprintf(b + k, sizeof b - k, "%ss1", o ? " " : "");
    else k += (size_t)snprintf(b + k, sizeof b - k, "%s%c%d", o ? " " : "", role_ch[c / 3], width_of[c % 3]);
  }
  r->ops = rs_xstrndup(b, k);
}

/* One instance: its candidates (nc vectors of nops codes), or why it cannot be read. */
static void note(rs_sass_infer *x, const char *form, uint32_t nops, const uint8_t *cand, uint32_t nc, const char *why) {
  rs_sass_inferred *r = NULL;
  for (uint32_t i = 0; i < x->n && !r; i++)
    if (x->v[i].nops == nops && !strcmp(x->v[i].form, form)) r = &x->v[i];
  if (!r) {
    rs_sass_inferred z = {.form = rs_xstrndup(form, strlen(form)), .nops = nops};
    RS_PUSH(x->v, x->n, x->cap, z);
    r = &x->v[x->n - 1];
    r->ncand = UINT32_MAX; /* no instance yet */
  }
  r->instances++;
  if (r->dead) return;
  if (why) {
    free(r->why), free(r->ops);
    r->ops = NULL;
    r->why = rs_xstrndup(why, strlen(why));
    r->dead = true;
    return;
  }
  if (r->ncand == UINT32_MAX) {
    uint32_t no = nops ? nops : 1;
    r->cand = rs_xmalloc((size_t)(nc ? nc : 1) * no);
    memcpy(r->cand, cand, (size_t)nc * nops);
    r->ncand = nc;
  } else {
    intersect(r, cand, nc);
  }
  settle(r);
  if (!r->ncand) r->dead = true;
}

/* Does the assignment codes[] of the register operands explain the instance's -plr row exactly:
 * every register marked ^ written and not read, v read and not written, x both, and every other
 * one neither (base: the guard's and the addresses' registers, read)? */
static bool explains(const uint8_t *codes, uint32_t nreg, const int *rg, const int *ri, uint8_t base[NG][MAXREG],
                     const char *s, size_t n, int c, const layout *L) {
  uint8_t d[NG][MAXREG], u[NG][MAXREG];
  memset(d, 0, sizeof d);
  memcpy(u, base, sizeof u);
  for (uint32_t o = 0; o < nreg; o++) {
    int role = codes[o] / 3, w = width_of[codes[o] % 3];
    if (ri[o] % w || ri[o] + w > L->size[rg[o]] || ri[o] + w > MAXREG) return false; /* tuples are aligned */
    for (int k = 0; k < w; k++) {
      if (role != 1) d[rg[o]][ri[o] + k] = 1;
      if (role != 0) u[rg[o]][ri[o] + k] = 1;
    }
  }
  for (int g = 0; g < NG; g++)
    for (int r = 0; r < L->size[g] && r < MAXREG; r++) {
      char m = mark(s, n, c, L, g, r);
      char want = d[g][r] && u[g][r] ? 'x' : d[g][r] ? '^' : u[g][r] ? 'v' : 0;
      if (want ? m != want : (m == 'v' || m == '^' || m == 'x')) return false;
    }
  return true;
}


/* One instruction line with its -plr row: roles of an unknown form's operands. */
static void instruction(rs_sass_infer *x, const layout *L, const char *s, size_t n, bool all) {
  int c = cmt(s, n);
  const char *semi = memchr(s, ';', n);
  if (c < 0 || !semi || !L->have) return;
  size_t i = 0;
  while (i < n && s[i] != '/') i++;
  i += 2;
  while (i < n && s[i] != '/') i++; /* end of the address comment */
  i++;
  while (i < n && s[i] == ' ') i++;
  if (i < n && s[i] == '@') {
    while (i < n && s[i] != ' ') i++;
    while (i < n && s[i] == ' ') i++;
  }
  size_t mo = i;
  while (i < (size_t)(semi - s) && s[i] != ' ') i++;
  size_t mnl = i - mo, end = (size_t)(semi - s);
  char form[96];
  snprintf(form, sizeof form, "%.*s", (int)(mnl < 95 ? mnl : 95), s + mo);
  size_t so[MAXOPS], sl[MAXOPS];
  uint32_t nops = 0;
  int depth = 0;
  size_t st = i;
  for (size_t k = i; k <= end && nops < MAXOPS; k++) {
    char ch = k < end ? s[k] : ',';
    if (ch == ' ' && depth <= 0 && k + 1 < end && s[k + 1] == '`') ch = ','; /* RET.REL.NODEC R20 `(k) */
    if (ch == '[' || ch == '{' || ch == '(') depth++;
    if (ch == ']' || ch == '}' || ch == ')') depth--;
    if (ch == ',' && depth <= 0) {
      size_t a = st, z = k;
      while (a < z && s[a] == ' ') a++;
      while (z > a && s[z - 1] == ' ') z--;
      if (z > a) so[nops] = a, sl[nops++] = z - a;
      st = k + 1;
    }
  }
  if (!all && known(x, form, nops)) return;
  char w[200] = "";
  if (is_control(form)) snprintf(w, sizeof w, "a control instruction: its control-flow role is not in -plr");
  for (size_t t = mo; t + 16 < end && !*w; t++)
    if (!memcmp(s + t, "BRANCH_TARGETS", 14)) snprintf(w, sizeof w, "a jump table: its control-flow role is not in -plr");
  /* what no assignment chooses: the guard's and the addresses' registers are read */
  uint8_t base[NG][MAXREG];
  memset(base, 0, sizeof base);
  const char *g0 = s + mo;
  for (const char *q = s; q < g0 && !*w; q++)
    if (*q == '@') {
      q += q[1] == '!' ? 2 : 1;
      int gidx, gg = reg_of(q, (size_t)(g0 - q), &gidx);
      if (gg >= 0 && gidx < MAXREG) base[gg][gidx] = 1;
      break;
    }
  uint8_t fixed[MAXOPS];      /* per operand: C_MEM, C_LABEL, C_ANY, or 0 (a register: chosen) */
  int rg[MAXOPS], ri[MAXOPS]; /* the register operands' file and index */
  uint32_t at[MAXOPS], nreg = 0;
  for (uint32_t o = 0; o < nops && !*w; o++) {
    const char *t = s + so[o];
    size_t tl = sl[o];
    while (tl && (*t == '-' || *t == '!' || *t == '|' || *t == '~')) t++, tl--;
    fixed[o] = C_ANY;
    if (tl >= 2 && t[0] == 'B' && t[1] >= '0' && t[1] <= '9') {
      snprintf(w, sizeof w, "operand %u (%.*s): a B register, which -plr does not show", o, (int)sl[o], s + so[o]);
      break;
    }
    if (t[0] == '[' || !strncmp(t, "desc[", 5) || !strncmp(t, "c[", 2) || !strncmp(t, "cx[", 3)) {
      /* an address or a constant: the registers inside are read (R2.64: a pair) */
      for (size_t a = 0; a < tl; a++) {
        char pc = a ? t[a - 1] : ' ';
        if ((pc >= 'A' && pc <= 'Z') || (pc >= 'a' && pc <= 'z') || (pc >= '0' && pc <= '9') || pc == '.' || pc == '_')
          continue; /* inside a word: UR4's R4, 0x10 */
        int idx, g = reg_of(t + a, tl - a, &idx);
        if (g < 0 || idx >= MAXREG) continue;
        size_t z = a + 1;
        while (z < tl && ((t[z] >= '0' && t[z] <= '9') || t[z] == 'R' || t[z] == 'P')) z++;
        int wd = (z + 3 <= tl && !memcmp(t + z, ".64", 3)) || (t[0] == 'd' && a == 5) ? 2 : 1;
        for (int k = 0; k < wd && idx + k < MAXREG; k++) base[g][idx + k] = 1;
      }
      if (t[0] != 'c') fixed[o] = C_MEM;
      continue;
    }
    if (t[0] == '`') {
      fixed[o] = C_LABEL;
      continue;
    }
    int idx, g = reg_of(t, tl, &idx);
    if (g < 0) continue; /* RZ, PT, an immediate, a special register: read, any width */
    if (idx >= MAXREG || idx >= L->size[g]) {
      snprintf(w, sizeof w, "operand %u (%.*s): not in -plr's columns", o, (int)sl[o], s + so[o]);
      break;
    }
    fixed[o] = 0;
    rg[nreg] = g, ri[nreg] = idx, at[nreg++] = o;
  }
  if (nreg > 6 && !*w) snprintf(w, sizeof w, "%u register operands: too many to choose roles for", nreg);
  if (*w) {
    note(x, form, nops, NULL, 0, w);
    return;
  }
  /* every assignment of role and width to the register operands that explains the row */
  uint8_t *cand = rs_xmalloc((size_t)MAXCAND * (nops ? nops : 1));
  uint32_t nc = 0, total = 1;
  for (uint32_t k = 0; k < nreg; k++) total *= 9;
  uint8_t codes[MAXOPS];
  for (uint32_t e = 0; e < total && nc < MAXCAND; e++) {
    uint32_t v = e;
    bool plausible = true;
    for (uint32_t k = 0; k < nreg && plausible; k++) {
      codes[k] = (uint8_t)(v % 9), v /= 9;
      char m = mark(s, n, c, L, rg[k], ri[k]); /* the operand's own register */
      int role = codes[k] / 3;
      plausible = role == 0 ? (m == '^' || m == 'x') : role == 1 ? (m == 'v' || m == 'x') : m == 'x';
      plausible &= codes[k] % 3 == 0 || rg[k] == 0 || rg[k] == 2; /* predicates are single */
    }
    if (!plausible || !explains(codes, nreg, rg, ri, base, s, n, c, L)) continue;
    uint8_t *row = cand + (size_t)nc++ * nops;
    for (uint32_t o = 0; o < nops; o++) row[o] = fixed[o];
    for (uint32_t k = 0; k < nreg; k++) row[at[k]] = codes[k];
  }
  note(x, form, nops, cand, nc, nc ? NULL : "-plr marks registers that no role and width of its operands explain");
  free(cand);
}


int rs_sass_infer_listing(const char *text, bool all, rs_sass_infer *x) {
  layout L;
  memset(&L, 0, sizeof L);
  for (int g = 0; g < NG; g++) L.order[g] = -1, L.col0[g] = -1;
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    size_t a = 0;
    while (a < n && (p[a] == ' ' || p[a] == '\t')) a++;
    if (a + 2 < n && p[a] == '/' && p[a + 1] == '*' && p[a + 2] >= '0' && p[a + 2] <= 'f') instruction(x, &L, p, n, all);
    else if (a + 1 < n && p[a] == '/' && p[a + 1] == '/') header(&L, p, n);
    p += n + (e ? 1 : 0);
  }
  return 0;
}

rs_sass_inferred *rs_sass_infer_find(rs_sass_infer *x, const char *form, size_t n, uint32_t nops) {
  for (uint32_t i = 0; x && i < x->n; i++) {
    rs_sass_inferred *r = &x->v[i];
    if (!r->why && r->nops == nops && strlen(r->form) == n && !memcmp(r->form, form, n)) return r;
  }
  return NULL;
}

uint32_t rs_sass_inferred_in(const rs_sass_infer *x, const char *func, char *buf, size_t cap) {
  uint32_t k = 0;
  size_t at = 0;
  if (cap) *buf = 0;
  for (uint32_t i = 0; x && i < x->n; i++)
    for (uint32_t j = 0; j < x->v[i].nfuncs; j++)
      if (!strcmp(x->v[i].funcs[j], func)) {
        if (at < cap) at += (size_t)snprintf(buf + at, cap - at, "%s%s/%u", k ? " " : "", x->v[i].form, x->v[i].nops);
        k++;
        break;
      }
  return k;
}

int rs_sass_inferred_param(const rs_sass_infer *x, const char *func, char *buf, size_t cap) {
  int k = 0;
  size_t at = 0;
  if (cap) *buf = 0;
  for (uint32_t i = 0; x && i < x->n; i++)
    for (uint32_t j = 0; j < x->v[i].nfuncs && x->v[i].ops; j++)
      if (!strcmp(x->v[i].funcs[j], func)) {
        int w = snprintf(buf + (at < cap ? at : 0), at < cap ? cap - at : 0, "%s%s/%u=%s", k ? ";" : " " RS_SASS_INFERRED_KEY "=\"",
                         x->v[i].form, x->v[i].nops, x->v[i].ops);
        at += (size_t)w;
        k++;
        break;
      }
  if (k) at += (size_t)snprintf(buf + (at < cap ? at : 0), at < cap ? cap - at : 0, "\"");
  if (k && at >= cap) {
    if (cap) *buf = 0;
    return -1;
  }
  return k;
}

int rs_sass_infer_from_params(const char *params, rs_sass_infer *x, char *why, size_t whylen) {
  static const char key[] = " " RS_SASS_INFERRED_KEY "=\"";
  const char *p = params ? strstr(params, key) : NULL;
  if (!p) return 0;
  p += sizeof key - 1;
  const char *end = strchr(p, '"');
  if (!end) {
    snprintf(why, whylen, "params: %s not closed", RS_SASS_INFERRED_KEY);
    return -1;
  }
  int k = 0;
  while (p < end) {
    const char *semi = memchr(p, ';', (size_t)(end - p));
    if (!semi) semi = end;
    const char *sl = memchr(p, '/', (size_t)(semi - p)), *eq = sl ? memchr(sl, '=', (size_t)(semi - sl)) : NULL;
    char *num_end = NULL;
    unsigned long no = sl ? strtoul(sl + 1, &num_end, 10) : 0;
    uint32_t words = 0; /* the roles: one word per operand */
    for (const char *c = eq ? eq + 1 : semi; c < semi; c++) words += *c != ' ' && (c == eq + 1 || c[-1] == ' ');
    if (!sl || sl == p || !eq || num_end != eq || no > MAXOPS || words != no) {
      snprintf(why, whylen, "params: %s: bad row '%.*s' (want FORM/N=ROLES, N roles)", RS_SASS_INFERRED_KEY,
               (int)(semi - p), p);
      return -1;
    }
    rs_sass_inferred z = {.form = rs_xstrndup(p, (size_t)(sl - p)), .nops = (uint32_t)no,
                          .ops = rs_xstrndup(eq + 1, (size_t)(semi - eq - 1))};
    RS_PUSH(x->v, x->n, x->cap, z);
    k++;
    p = semi + (semi < end);
  }
  return k;
}

void rs_sass_infer_free(rs_sass_infer *x) {
  for (uint32_t i = 0; i < x->n; i++) {
    rs_sass_inferred *r = &x->v[i];
    free(r->form), free(r->ops), free(r->why), free(r->row), free(r->cand);
    for (uint32_t j = 0; j < r->nfuncs; j++) free(r->funcs[j]);
    free(r->funcs);
  }
  free(x->v);
  memset(x, 0, sizeof *x);
}

/* The check of a function read with inferred rows that pinned cannot make: its liveness as
 * -plr shows it (live.c, every quirk taken: equal to -plr on every row measured) must equal the
 * -plr columns of the same listing, row by row, register by register (R63, never shown by 11.8,
 * left out). A row that misreads a register would show it live or dead elsewhere. */
int rs_sass_plr_check(const rs_func *f, const char *text, uint32_t *nrows, char *why, size_t whylen) {
  static const char *const files[NG] = {"r", "p", "ur", "up"};
  char head[600];
  snprintf(head, sizeof head, ".section\t.text.%s,", f->name);
  const char *p = strstr(text, head);
  if (!p) {
    snprintf(why, whylen, "no -plr rows for %s", f->name);
    return -1;
  }
  rs_err e = {{0}};
  rs_word *ours = NULL;
  uint32_t W = 0;
  if (rs_sass_live_rows(f, &ours, &W, RS_PLR_ALL, &e)) {
    snprintf(why, whylen, "%s", e.msg);
    return -1;
  }
  const rs_target *t = f->tgt;
  int first[NG];
  uint32_t count[NG];
  for (int g = 0; g < NG; g++) {
    first[g] = -1, count[g] = 0;
    for (uint32_t fi = 0; fi < t->nfiles; fi++)
      if (!strcmp(t->files[fi].name, files[g])) first[g] = (int)t->files[fi].first, count[g] = t->files[fi].count;
  }
  layout L;
  memset(&L, 0, sizeof L);
  for (int g = 0; g < NG; g++) L.order[g] = -1, L.col0[g] = -1;
  int rc = 0;
  uint32_t i = 0, rows = 0;
  p = strchr(p, '\n');
  for (p = p ? p + 1 : NULL; p && *p && !rc;) {
    const char *end = strchr(p, '\n');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    size_t a = 0;
    while (a < n && (p[a] == ' ' || p[a] == '\t')) a++;
    if (n - a > 9 && !memcmp(p + a, ".section", 8) && (p[a + 8] == '\t' || p[a + 8] == ' ')) break; /* the next function */
    if (a + 1 < n && p[a] == '/' && p[a + 1] == '/') header(&L, p, n);
    else if (a + 2 < n && p[a] == '/' && p[a + 1] == '*' && L.have && cmt(p, n) > 0) {
      uint32_t addr = (uint32_t)strtoul(p + a + 2, NULL, 16);
      while (i < f->ninsts && f->insts[i].addr < addr) i++;
      if (i >= f->ninsts || f->insts[i].addr != addr) {
        snprintf(why, whylen, "-plr row /*%04x*/ is no instruction of %s", addr, f->name);
        rc = 1;
        break;
      }
      int c = cmt(p, n);
      rows++;
      for (int g = 0; g < NG && !rc; g++)
        for (uint32_t r = 0; r < 256 && !rc; r++) {
          if (g == 0 && r == 63) continue;
          char m = r < (uint32_t)L.size[g] ? mark(p, n, c, &L, g, (int)r) : ' ';
          bool theirs = m != ' ' && m != '?';
          bool mine = first[g] >= 0 && r < count[g] && rs_bs_get(ours + (size_t)W * i, (size_t)first[g] + r);
          if (mine != theirs) {
            snprintf(why, whylen, "/*%04x*/: %s%s%u %s by nvdisasm -plr, %s by ours", addr, g >= 2 ? "U" : "",
                     g == 1 || g == 3 ? "P" : "R", r, theirs ? "live" : "dead", mine ? "live" : "dead");
            rc = 1;
          }
        }
    }
    p = end ? end + 1 : NULL;
  }
  free(ours);
  if (nrows) *nrows = rows;
  if (!rc && !rows) {
    snprintf(why, whylen, "no -plr rows for %s", f->name);
    rc = -1;
  }
  return rc;
}
