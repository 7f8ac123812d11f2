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
#include <stdint.h>
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

/* The listing's text with its `desc[URx]` written as nvdisasm 11.8 prints the same field when the
 * access's UR-offset mode bit is flipped: `desc[URx][Ry.64+0x10]` -> `[Ry.64+URx+0x10]` (sm_80-89,
 * where another bit makes 11.8 print desc[URx] itself, both readings put URx at one field: LDGSTS at
 * bit 64, LDG at 32, FlashAttention-2 sm_86; on sm_90 the UR offset is the only one 11.8 prints).
 * 0 when the text has no desc[] followed by an [R address. */
static size_t desc_as_offset(const char *s, size_t n, char *out, size_t outn) {
  const char *d = NULL;
  for (size_t i = 0; i + 5 <= n && !d; i++)
    if (!memcmp(s + i, "desc[", 5)) d = s + i;
  if (!d) return 0;
  const char *c = memchr(d, ']', n - (size_t)(d - s));
  if (!c || c + 2 >= s + n || c[1] != '[' || c[2] != 'R') return 0;
  const char *r = c + 3; /* the address register: R digits, then .64 or not */
  while (r < s + n && ((*r >= '0' && *r <= '9') || *r == 'Z')) r++;
  if (r + 3 <= s + n && !memcmp(r, ".64", 3)) r += 3;
  int k = snprintf(out, outn, "%.*s%.*s+%.*s%.*s", (int)(d - s), s, (int)(r - (c + 1)), c + 1, (int)(c - (d + 5)), d + 5,
                   (int)(s + n - r), r);
  return k > 0 && (size_t)k < outn ? (size_t)k : 0;
}

/* A branch target: the listing names it `(label); nvdisasm -b prints the raw stream's address,
 * which differs from slot to slot of the batch (BRA.CONV UR4, `(.L_x_10) reads back as BRA.CONV
 * UR4, 0xb0 in one slot, 0xc0 in the next). Both become `T, so the register tokens around a
 * target are compared (BRA.CONV/BRA.DIV UR, cuda-samples FunctionPointers sm_90); a flipped bit
 * that moves only the target then says nothing. The listing's: its `(...), in place of s into
 * out; 0 when it has none. */
static size_t label_norm(const char *s, size_t n, char *out, size_t outn) {
  const char *b = NULL;
  for (size_t i = 0; i + 2 <= n && !b; i++)
    if (s[i] == '`' && s[i + 1] == '(') b = s + i;
  if (!b) return 0;
  const char *c = memchr(b, ')', n - (size_t)(b - s));
  if (!c) return 0;
  int k = snprintf(out, outn, "%.*s`T%.*s", (int)(b - s), s, (int)(s + n - c - 1), c + 1);
  return k > 0 && (size_t)k < outn ? (size_t)k : 0;
}

/* nvdisasm's side: its last ` 0x...` number (the target: the last operand of every form with a
 * label) becomes `T in place; the new length, or n when it has none. */
static uint32_t target_norm(char *t, uint32_t n) {
  for (uint32_t i = n; i-- > 2;) {
    if (t[i - 2] != ' ' || t[i - 1] != '0' || t[i] != 'x') continue;
    uint32_t e = i + 1;
    while (e < n && ((t[e] >= '0' && t[e] <= '9') || (t[e] >= 'a' && t[e] <= 'f'))) e++;
    t[i - 1] = '`', t[i] = 'T';
    memmove(t + i + 1, t + e, n - e);
    return n - (e - i - 1);
  }
  return n;
}

/* Does nvdisasm's line t (tn bytes) read exactly as want (wn bytes)? */
static bool same_text(const char *t, size_t tn, const char *want, size_t wn) { return tn == wn && !memcmp(t, want, wn); }

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
  /* the listing's texts with a branch target as `T (label_norm); lab[i]: instruction i has one */
  char (*ls)[SKEL] = rs_xmalloc(sizeof *ls * n);
  const char *const *s0 = s;
  uint32_t *len0 = rs_xmalloc(sizeof *len0 * n);
  const char **sn = rs_xmalloc(sizeof *sn * n);
  bool *lab = rs_xcalloc(n, sizeof *lab);
  for (size_t i = 0; i < n; i++) {
    size_t k = label_norm(s0[i], len[i], ls[i], sizeof ls[i]);
    lab[i] = k > 0;
    sn[i] = k ? ls[i] : s0[i], len0[i] = k ? (uint32_t)k : len[i];
  }
  s = sn, len = len0;
  /* per instruction: nvdisasm's tokens of the unflipped words, where they land in the listing's,
   * and per token and field bit the flipped bit that showed it (-1 none yet, -2 two) */
  typedef struct {
    bool ok;
    rs_sass_tokens tb;
    char sb[SKEL];
    int map[RS_MAX_TOKENS];
    int bit[RS_MAX_TOKENS][8];
    /* the desc[URx] token (listing index dk, -1 none), which 11.8 prints only with one bit flipped:
     * show, that bit (-1 not found yet; shown_as 1 desc[URx] itself, 2 as the address's UR offset);
     * round 3 flips every other bit on top of it, dbit as bit above */
    int dk, show, shown_as, dtok;
    uint64_t rej[2]; /* bits whose variant nvdisasm rejected in rounds 1-2: not flipped again in 3 */
    rs_sass_tokens t3;
    char s3[SKEL];
    int dbit[8];
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
  /* round 3's words: an instruction's with its desc-showing bit flipped */
  uint64_t (*w3)[2] = rs_xmalloc(sizeof *w3 * (n + 1));
  for (size_t i = 0; i < n; i++) w3[i][0] = w[i][0], w3[i][1] = w[i][1], P[i].dk = P[i].show = -1;
  for (int round = 0; round < 3 && !rc; round++) {
    size_t nv = 0;
    for (size_t i = 0; i < n; i++) {
      if (round && !P[i].ok) continue;
      if (round == 2) { /* the desc[] token through the bit that shows it */
        if (P[i].show < 0) continue;
        vi[nv] = (uint32_t)i, vb[nv++] = 0xff;
        for (unsigned b = FIRST_BIT; b <= LAST_BIT; b++) /* where fields lie (desc: 32 or 64 so far) */
          if ((int)b != P[i].show && first_round(b) && !(P[i].rej[b >> 6] >> (b & 63) & 1))
            vi[nv] = (uint32_t)i, vb[nv++] = (uint8_t)b;
        continue;
      }
      bool open = !round || P[i].dk >= 0; /* round 2 looks for the bit that shows desc[] too */
      for (unsigned k = 0; round && k < P[i].tb.n; k++)
        for (unsigned j = 0; j < rs_tk_width[P[i].tb.kind[k]]; j++) open |= P[i].bit[k][j] == -1;
      if (!open) continue;
      if (!round) vi[nv] = (uint32_t)i, vb[nv++] = 0xff; /* the unflipped words */
      for (unsigned b = FIRST_BIT; b <= LAST_BIT; b++)
        if (first_round(b) == !round) vi[nv] = (uint32_t)i, vb[nv++] = (uint8_t)b;
    }
    if (!nv) {
      if (round == 1) continue; /* round 3 may still have work */
      break;
    }
    memset(text, 0, sizeof *text * nv);
    char *out = NULL;
    if (decode_round(nd, sm, round == 2 ? (const uint64_t(*)[2])w3 : w, vi, vb, nv, &out, text, tl, &runs, st, e)) {
      rc = -1;
      break;
    }
    variants += (uint32_t)nv;
    for (size_t v = 0; v < nv; v++) /* out is ours: targets normalised in place */
      if (text[v] && lab[vi[v]]) tl[v] = target_norm((char *)(uintptr_t)text[v], tl[v]);
    for (size_t v = 0; v < nv; v++) {
      pi *q = &P[vi[v]];
      size_t i = vi[v];
      if (!text[v] && vb[v] != 0xff) q->rej[vb[v] >> 6] |= 1ull << (vb[v] & 63);
      if (round == 2) { /* the desc[] token's field, read off variants of the showing words */
        rs_sass_tokens tv;
        char sv[SKEL];
        if (!text[v] || rs_sass_tokens_of(text[v], tl[v], &tv, sv, sizeof sv)) continue;
        if (vb[v] == 0xff) { /* the showing words must still read as they did in round 2 */
          q->t3 = tv, memcpy(q->s3, sv, sizeof sv);
          memset(q->dbit, -1, sizeof q->dbit);
          q->dtok = q->shown_as == 1 ? q->dk : q->dk + 1; /* as offset: after the address register */
          if (q->dtok >= (int)tv.n || tv.kind[q->dtok] != RS_TK_UR) q->show = -1;
          continue;
        }
        if (q->show < 0 || strcmp(sv, q->s3) || tv.n != q->t3.n) continue;
        int which = -1, j = -1;
        for (unsigned k = 0; k < tv.n; k++) {
          unsigned d = tv.val[k] ^ q->t3.val[k];
          if (!d) continue;
          if (which >= 0 || (d & (d - 1)) || d >= 1u << rs_tk_width[tv.kind[k]]) {
            which = -2;
            break;
          }
          which = (int)k, j = __builtin_ctz(d);
        }
        if (which == q->dtok) q->dbit[j] = q->dbit[j] == -1 ? vb[v] : -2;
        continue;
      }
      if (round == 1 && q->dk >= 0 && text[v] && q->shown_as != 1) { /* does this bit show desc[]? */
        char alt[SKEL];
        size_t an = desc_as_offset(s[i], len[i], alt, sizeof alt);
        if (same_text(text[v], tl[v], s[i], len[i])) q->show = vb[v], q->shown_as = 1;
        else if (q->show < 0 && an && same_text(text[v], tl[v], alt, an)) q->show = vb[v], q->shown_as = 2;
      }
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
        if (is_desc && !(is_desc & (is_desc - 1)) && tl0.kind[__builtin_ctz(is_desc)] == RS_TK_UR)
          q->dk = __builtin_ctz(is_desc); /* one descriptor: round 2 looks for the bit showing it */
        continue;
      }
      if (!q->ok || !text[v]) continue;
      rs_sass_tokens tv;
      char sv[SKEL];
      if (rs_sass_tokens_of(text[v], tl[v], &tv, sv, sizeof sv) || strcmp(sv, q->sb) || tv.n != q->tb.n) continue;
      /* one token changed in one bit; or several of one kind that held one register, all the same
       * way: one field printed twice (BAR.SYNC R13, R13 on sm_90: bit 32 moves both; there is no
       * second field), each token gets it and the caller ties them */
      int which = -1, j = -1;
      unsigned dd = 0, set = 0;
      for (unsigned k = 0; k < q->tb.n; k++) {
        unsigned d = tv.val[k] ^ q->tb.val[k];
        if (!d) continue;
        if ((d & (d - 1)) || d >= 1u << rs_tk_width[q->tb.kind[k]] ||
            (which >= 0 && (d != dd || q->tb.kind[k] != q->tb.kind[which] || q->tb.val[k] != q->tb.val[which]))) {
          which = -2;
          break;
        }
        if (which < 0) which = (int)k, j = __builtin_ctz(d), dd = d;
        set |= 1u << k;
      }
      for (unsigned k = 0; which >= 0 && k < q->tb.n; k++)
        if (set >> k & 1) q->bit[k][j] = q->bit[k][j] == -1 ? vb[v] : -2;
    }
    free(out);
    if (round == 1)
      for (size_t i = 0; i < n; i++)
        if (P[i].show >= 0) w3[i][P[i].show >> 6] ^= 1ull << (P[i].show & 63);
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
    if (q->ok && q->show >= 0) { /* the descriptor: every bit of its 6-bit field seen at one offset */
      int o = -1;
      bool ok = true;
      for (unsigned j = 0; ok && j < rs_tk_width[RS_TK_UR]; j++) {
        if (q->dbit[j] < 0 || (o >= 0 && q->dbit[j] - (int)j != o)) ok = false;
        else o = q->dbit[j] - (int)j;
      }
      if (ok && o >= 0) off[i][q->dk] = (int8_t)o, found++, st ? st->descs++ : 0;
    }
  }
  free(w3);
  free(ls);
  free(len0);
  free(sn);
  free(lab);
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
