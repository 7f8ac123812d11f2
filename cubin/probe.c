/* probe.c - where an instruction's register operands sit in its encoding, asked of nvdisasm
 * itself rather than learned from samples.
 *
 * For an instruction whose 128-bit words are in the cubin, every bit that can hold an operand
 * (12-104: not the opcode bits 0-11, not the scheduling and reuse bits 105-127) is flipped in
 * one variant each; all variants of a batch of instructions are written as one raw instruction
 * stream and decoded by one `nvdisasm -b SMxy` run. A variant that decodes to the same text but
 * for one register token, whose number differs in exactly bit j, says bit j of that token's
 * field is the flipped bit; a token whose every field bit is seen so, all at one offset, has its
 * field found. Variants that change anything else (a modifier, an operand kind, an opcode nvdisasm
 * does not know) say nothing. The unflipped words must decode to the instruction as listed (the
 * completed listing's `desc[URx]`, which nvdisasm 11.8 does not print, aside), else nothing is
 * found for it. A field found here is still only used when nvdisasm reads the written cubin back
 * as meant (crosscheck.c): the probe is a second independent reading, not a proof. */
#include "cubin/lower.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { FIRST_BIT = 12, LAST_BIT = 104, SKEL = 512 };

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The text with every `desc[URx]` removed (nvdisasm 11.8 prints the descriptor of a .E access
 * not at all; the completed listing writes it, docs/sass.md). *at: the token index of the
 * descriptor in the listing's tokens, -1 if none. */
static size_t strip_desc(const char *s, size_t n, char *out, size_t outn) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 1 < outn;) {
    if (i + 5 <= n && !memcmp(s + i, "desc[", 5)) {
      const char *c = memchr(s + i, ']', n - i);
      if (c) {
        i = (size_t)(c - s) + 1;
        continue;
      }
    }
    out[o++] = s[i++];
  }
  out[o] = 0;
  return o;
}

uint32_t rs_sass_desc_tokens(const char *s, size_t n) {
  uint32_t m = 0;
  for (size_t d = 0; d + 5 <= n; d++) {
    rs_sass_tokens pre;
    if (!memcmp(s + d, "desc[", 5) && !rs_sass_tokens_of(s, d, &pre, NULL, 0) && pre.n < 32) m |= 1u << pre.n;
  }
  return m;
}

/* One decoded line per address of the raw stream: text[addr / 16] (into out), NULL if none. */
static void index_lines(char *out, const char **text, uint32_t *len, size_t n) {
  for (char *p = out; p && *p;) {
    char *nl = strchr(p, '\n');
    if (nl) *nl = 0;
    char *a = strstr(p, "/*");
    if (a) {
      char *end;
      unsigned long addr = strtoul(a + 2, &end, 16);
      if (end != a + 2 && !strncmp(end, "*/", 2) && addr % 16 == 0 && addr / 16 < n) {
        char *t = end + 2;
        while (*t == ' ') t++;
        char *semi = strchr(t, ';');
        if (semi) {
          char *e = semi;
          while (e > t && e[-1] == ' ') e--;
          text[addr / 16] = t;
          len[addr / 16] = (uint32_t)(e - t);
        }
      }
    }
    p = nl ? nl + 1 : NULL;
  }
}

/* The bits flipped first: where every field learned so far lies (cubin/fields.c, 1,689 forms:
 * guard 12-14, R/UR/B fields 16-45 and 64-71, P fields 77-79 and 81-89); the rest of 12-104
 * only for a token the first round leaves open. Fewer variants, and fewer that nvdisasm rejects
 * (a flipped modifier bit can make an encoding it refuses, which stops the whole run). */
static bool first_round(unsigned b) {
  return (b >= 12 && b <= 14) || (b >= 16 && b <= 45) || (b >= 64 && b <= 71) || (b >= 77 && b <= 79) ||
         (b >= 81 && b <= 89);
}

enum { MAX_RUNS = 48 };

/* Decode the variants (inst, bit) of one round: one nvdisasm run, again without a variant it
 * rejects ("... at address A": that slot gets the unflipped words) until it decodes all, at most
 * MAX_RUNS runs in all. text[v]/tl[v]: variant v's decoded text, NULL if rejected. */
static int decode_round(const rs_nvdisasm *nd, unsigned sm, const uint64_t (*w)[2], const uint32_t *vi,
                        const uint8_t *vb, size_t nv, char **keep, const char **text, uint32_t *tl, unsigned *runs,
                        rs_sass_probe_stats *st, rs_err *e) {
  uint8_t *raw = rs_xmalloc(nv * 16 + 16);
  uint8_t *dead = rs_xcalloc(nv + 1, 1);
  for (size_t v = 0; v < nv; v++) {
    uint64_t x[2] = {w[vi[v]][0], w[vi[v]][1]};
    if (vb[v] != 0xff) x[vb[v] >> 6] ^= 1ull << (vb[v] & 63);
    uint8_t *p = raw + 16 * v;
    for (int k = 0; k < 16; k++) p[k] = (uint8_t)(x[k / 8] >> 8 * (k % 8));
  }
  char arch[8];
  snprintf(arch, sizeof arch, "SM%u", sm);
  const char *args[] = {"-b", arch, NULL};
  int rc = -1;
  while (*runs < MAX_RUNS) {
    char tmp[] = "/tmp/regsweep-probe-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) {
      rc = rs_errf(e, tmp, 0, "cannot create a temporary file: %s", strerror(errno));
      break;
    }
    size_t done = 0;
    while (done < nv * 16) {
      ssize_t k = write(fd, raw + done, nv * 16 - done);
      if (k <= 0) break;
      done += (size_t)k;
    }
    close(fd);
    if (done != nv * 16) {
      unlink(tmp);
      rc = rs_errf(e, tmp, 0, "cannot write the probe batch");
      break;
    }
    char *out = NULL;
    rs_err re = {0};
    (*runs)++;
    int r = rs_nvdisasm_run(nd, tmp, "probe batch", args, &out, &re);
    unlink(tmp);
    if (!r) {
      index_lines(out, text, tl, nv);
      *keep = out;
      rc = 0;
      break;
    }
    const char *at = strstr(re.msg, "at address 0x");
    unsigned long a = at ? strtoul(at + 14, NULL, 16) : ~0ul;
    if (a % 16 || a / 16 >= nv || dead[a / 16]) { /* not one variant's fault */
      *e = re;
      break;
    }
    /* its slot decodes as the unflipped words from now on, and so does every variant with the same
     * bit flipped (outside the bits where fields lie): nvdisasm rejects a few modifier bits (73,
     * 90, 91 in sgemm sm_89) for most opcodes, and each rejection costs a run; no field learned so
     * far lies there */
    unsigned bad = vb[a / 16];
    for (size_t v = 0; v < nv; v++) { /* a bit where fields lie: that variant only */
      if (dead[v] || (v != a / 16 && (vb[v] != bad || first_round(bad)))) continue;
      dead[v] = 1;
      if (st) st->rejected++;
      const uint64_t *x = w[vi[v]];
      for (int k = 0; k < 16; k++) raw[16 * v + (unsigned)k] = (uint8_t)(x[k / 8] >> 8 * (k % 8));
    }
  }
  if (rc && *runs >= MAX_RUNS && !e->msg[0]) rs_errf(e, "probe batch", 0, "nvdisasm rejected too many variants");
  for (size_t v = 0; v < nv && !rc; v++)
    if (dead[v]) text[v] = NULL;
  free(raw);
  free(dead);
  return rc;
}

int rs_sass_probe(const rs_nvdisasm *nd, unsigned sm, size_t n, const uint64_t (*w)[2], const char *const *s,
                  const uint32_t *len, int8_t (*off)[RS_MAX_TOKENS], rs_sass_probe_stats *st, rs_err *e) {
  double t0 = now_ms();
  for (size_t i = 0; i < n; i++) memset(off[i], -1, RS_MAX_TOKENS);
  if (!n) return 0;
  /* per instruction: nvdisasm's tokens of the unflipped words, where they land in the listing's,
   * and per token and field bit the flipped bit that showed it (-1 none yet, -2 two) */
  typedef struct {
    bool ok;
    rs_sass_tokens tb;
    char sb[SKEL];
    int map[RS_MAX_TOKENS];
    int bit[RS_MAX_TOKENS][8];
  } pi;
  pi *P = rs_xcalloc(n, sizeof *P);
  size_t cap = n * (1 + LAST_BIT - FIRST_BIT + 1) + 1;
  uint32_t *vi = rs_xmalloc(sizeof *vi * cap);
  uint8_t *vb = rs_xmalloc(cap);
  const char **text = rs_xmalloc(sizeof *text * cap);
  uint32_t *tl = rs_xmalloc(sizeof *tl * cap);
  unsigned runs = 0;
  int rc = 0;
  uint32_t found = 0, variants = 0;
  for (int round = 0; round < 2 && !rc; round++) {
    size_t nv = 0;
    for (size_t i = 0; i < n; i++) {
      if (round && !P[i].ok) continue;
      bool open = !round;
      for (unsigned k = 0; round && k < P[i].tb.n; k++)
        for (unsigned j = 0; j < rs_tk_width[P[i].tb.kind[k]]; j++) open |= P[i].bit[k][j] == -1;
      if (!open) continue;
      if (!round) vi[nv] = (uint32_t)i, vb[nv++] = 0xff; /* the unflipped words */
      for (unsigned b = FIRST_BIT; b <= LAST_BIT; b++)
        if (first_round(b) == !round) vi[nv] = (uint32_t)i, vb[nv++] = (uint8_t)b;
    }
    if (!nv) break;
    memset(text, 0, sizeof *text * nv);
    char *out = NULL;
    if (decode_round(nd, sm, w, vi, vb, nv, &out, text, tl, &runs, st, e)) {
      rc = -1;
      break;
    }
    variants += (uint32_t)nv;
    for (size_t v = 0; v < nv; v++) {
      pi *q = &P[vi[v]];
      size_t i = vi[v];
      if (vb[v] == 0xff) { /* the unflipped words must decode as listed */
        rs_sass_tokens tl0, ts;
        char sl[SKEL], ss[SKEL], stripped[SKEL];
        if (!text[v] || rs_sass_tokens_of(s[i], len[i], &tl0, sl, sizeof sl)) continue;
        size_t sn = strip_desc(s[i], len[i], stripped, sizeof stripped);
        if (rs_sass_tokens_of(stripped, sn, &ts, ss, sizeof ss) ||
            rs_sass_tokens_of(text[v], tl[v], &q->tb, q->sb, sizeof q->sb) || strcmp(q->sb, ss) || q->tb.n != ts.n ||
            memcmp(q->tb.val, ts.val, ts.n))
          continue; /* nvdisasm does not read these words as the listing says */
        /* nvdisasm's token k is the listing's token map[k]: the listing's desc[] tokens skipped
         * (the tokens before each `desc[` counted on the text before it) */
        uint32_t is_desc = rs_sass_desc_tokens(s[i], len[i]);
        unsigned j = 0;
        for (unsigned k = 0; k < ts.n; k++, j++) {
          while (j < tl0.n && (is_desc >> j & 1)) j++;
          q->map[k] = j < tl0.n && tl0.kind[j] == ts.kind[k] && tl0.val[j] == ts.val[k] ? (int)j : -1;
        }
        memset(q->bit, -1, sizeof q->bit);
        q->ok = true;
        continue;
      }
      if (!q->ok || !text[v]) continue;
      rs_sass_tokens tv;
      char sv[SKEL];
      if (rs_sass_tokens_of(text[v], tl[v], &tv, sv, sizeof sv) || strcmp(sv, q->sb) || tv.n != q->tb.n) continue;
      int which = -1, j = -1;
      for (unsigned k = 0; k < q->tb.n; k++) {
        unsigned d = tv.val[k] ^ q->tb.val[k];
        if (!d) continue;
        if (which >= 0 || (d & (d - 1)) || d >= 1u << rs_tk_width[q->tb.kind[k]]) {
          which = -2;
          break;
        }
        which = (int)k, j = __builtin_ctz(d);
      }
      if (which >= 0) q->bit[which][j] = q->bit[which][j] == -1 ? vb[v] : -2;
    }
    free(out);
  }
  for (size_t i = 0; i < n && !rc; i++) {
    pi *q = &P[i];
    for (unsigned k = 0; q->ok && k < q->tb.n; k++) {
      int o = -1;
      bool ok = q->map[k] >= 0;
      for (unsigned j = 0; ok && j < rs_tk_width[q->tb.kind[k]]; j++) {
        if (q->bit[k][j] < 0 || (o >= 0 && q->bit[k][j] - (int)j != o)) ok = false;
        else o = q->bit[k][j] - (int)j;
      }
      if (ok && o >= 0) off[i][q->map[k]] = (int8_t)o, found++;
    }
  }
  free(P);
  free(vi);
  free(vb);
  free(text);
  free(tl);
  if (st) {
    st->batches++;
    st->runs += runs;
    st->insts += (uint32_t)n;
    st->variants += variants;
    st->fields += found;
    st->ms += now_ms() - t0;
  }
  return rc;
}
