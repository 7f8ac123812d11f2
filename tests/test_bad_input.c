/* test_bad_input.c - hostile and broken input never crashes the parsers and is rejected with
 * "file:line: message" (the CLI exits 2), or, where what is left is still a valid file, accepted
 * consistently (every function builds its allocation Problem; the CLI exits 0).
 *
 *  1. real fixtures truncated at chosen points (IR module section, registers table, instruction
 *     lines, block headers, a liveins line with lane masks) plus a sweep of cuts;
 *  2. garbage: random bytes, bytes 0x80-0xFF in an instruction, a NUL byte, CRLF line endings;
 *  3. empty file, "---" only, a function without a body;
 *  4. unknown classes and registers, malformed operands, register masks, huge register numbers;
 *  5. a bounded deterministic mutation loop over MIR, PTX and SASS fixtures;
 *  6. SASS listings (issue 14): truncated, garbage, an unknown opcode, operands of the wrong
 *     width, address holes, an undefined label, CRLF.
 * Temporary files live in a mkdtemp() directory that is removed at the end. */
#include "front/front.h"
#include "check.h"
#include "analysis/problem.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Under AddressSanitizer the parsers run ~30x slower (its strstr interceptor measures the whole
 * remaining text on every call), so the sweeps take a deterministic subset there. */
#if defined(__SANITIZE_ADDRESS__)
#define SLOW 4
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLOW 4
#endif
#endif
#ifndef SLOW
#define SLOW 1
#endif

static char tmpdir[64];
static char **tmpfiles;
static int ntmp, captmp;

/* ---------------------------------------------------------------- helpers */

static uint64_t rng_state;
static uint64_t rng(void) { /* xorshift64*: deterministic across platforms */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1DULL;
}
static size_t rng_below(size_t n) { return n ? (size_t)(rng() % n) : 0; }

static char *load(const char *path, size_t *len) {
  rs_err e = {{0}};
  char *t = rs_read_file(path, len, &e);
  CHECKF(t != NULL, "%s", e.msg);
  return t;
}

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

/* Write a temp file named name; returns its path (owned by the temp list). */
static const char *put_file(const char *name, const char *buf, size_t len) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "wb");
  CHECKF(f != NULL, "cannot write %s", path);
  if (!f) return NULL;
  fwrite(buf, 1, len, f);
  fclose(f);
  for (int i = 0; i < ntmp; i++)
    if (!strcmp(tmpfiles[i], path)) return tmpfiles[i];
  if (ntmp == captmp) tmpfiles = realloc(tmpfiles, sizeof *tmpfiles * (size_t)(captmp = captmp ? 2 * captmp : 64));
  tmpfiles[ntmp] = dup_n(path, strlen(path));
  return tmpfiles[ntmp++];
}

/* 1-based line of byte offset off (the line the byte at off belongs to). */
static unsigned line_of(const char *s, size_t off) {
  unsigned l = 1;
  for (size_t i = 0; i < off; i++)
    if (s[i] == '\n') l++;
  return l;
}
/* The line a parser reports for "end of input" in the first len bytes: the last line that has
 * any byte (a trailing newline does not start a new line). */
static unsigned last_line(const char *s, size_t len) {
  if (len == 0) return 0;
  return line_of(s, len - 1);
}
static unsigned count_lines(const char *s, size_t len) { return last_line(s, len); }

/* Offset of the start of 1-based line ln. */
static size_t line_start(const char *s, size_t len, unsigned ln) {
  size_t off = 0;
  for (unsigned l = 1; l < ln && off < len; off++)
    if (s[off] == '\n') l++;
  return off;
}
static size_t line_end(const char *s, size_t len, size_t off) {
  while (off < len && s[off] != '\n') off++;
  return off;
}

/* Line number in a "path:LINE: ..." message; 0 if the message has no line, -1 if it does not
 * start with "path:" at all. */
static long msg_line(const char *msg, const char *path) {
  size_t pl = strlen(path);
  if (strncmp(msg, path, pl) || msg[pl] != ':') return -1;
  const char *c = msg + pl + 1;
  if (!isdigit((unsigned char)*c)) return *c == ' ' ? 0 : -1;
  long v = strtol(c, (char **)&c, 10);
  return *c == ':' ? v : -1;
}

typedef struct {
  bool ok;         /* parsed and every function built its Problem */
  long line;       /* rejection: line in the message (0 none, -1 malformed message) */
  char msg[512];
  bool refused; /* the library refused a function alone (exit 1), not the input */
  uint32_t nfuncs, nblocks, ninsts, nops, nvregs, nvars, nconf;
} outcome;

/* Parse buf (copied) as path through the library and build every function's Problem. */
static outcome lib_run(const char *path, const char *buf, size_t len, enum rs_srckind kind) {
  outcome o = {0};
  rs_err e = {{0}};
  rs_module *m = rs_module_parse(path, dup_n(buf, len), len, kind, NULL, &e);
  if (!m) {
    snprintf(o.msg, sizeof o.msg, "%s", e.msg);
    o.line = msg_line(e.msg, path);
    return o;
  }
  o.ok = true;
  o.nfuncs = m->nfuncs;
  if (m->nrefused) { /* a function refused alone (an unknown form): its message, the others go on */
    o.ok = false;
    o.refused = true;
    snprintf(o.msg, sizeof o.msg, "%s", m->refused[0].why);
    o.line = msg_line(m->refused[0].why, path);
  }
  for (uint32_t k = 0; k < m->nfuncs; k++) {
    const rs_func *f = m->funcs[k];
    o.nblocks += f->nblocks;
    o.ninsts += f->ninsts;
    o.nops += f->nops;
    o.nvregs += f->nvregs;
    rs_problem *p = rs_problem_build(f, &e);
    if (!p) {
      o.ok = false;
      snprintf(o.msg, sizeof o.msg, "%s", e.msg);
      o.line = msg_line(e.msg, path);
      break;
    }
    o.nvars += p->nvars;
    o.nconf += p->nconf;
    rs_problem_free(p);
  }
  rs_module_free(m);
  return o;
}

/* Run the CLI on path; returns the exit status, output in out. */
static int cli_run(const char *path, char *out, size_t cap) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' inspect '%s'", rs_check_cli, path);
  return rs_check_run(cmd, out, cap);
}

enum expect { ACCEPT, REJECT, EITHER };

/* The core assertion. want_lines: allowed line numbers for a rejection (0 = "no line"); an
 * empty list (nlines 0) accepts any line >= 1, nlines -1 any line or none. cli: also run the binary. */
static outcome expect(const char *what, const char *name, const char *buf, size_t len,
                      enum rs_srckind kind, enum expect want, const unsigned *want_lines,
                      int nlines, bool cli) {
  const char *path = put_file(name, buf, len);
  outcome o = lib_run(path ? path : name, buf, len, kind);
  if (!path) return o;
  if (want == ACCEPT) CHECKF(o.ok, "%s: expected to be accepted, got: %s", what, o.msg);
  if (want == REJECT) CHECKF(!o.ok, "%s: malformed input accepted silently", what);
  if (!o.ok) {
    CHECKF(o.line >= 0, "%s: message does not start with '%s:': %s", what, path, o.msg);
    if (nlines > 0) {
      bool hit = false;
      for (int i = 0; i < nlines; i++) hit |= o.line == (long)want_lines[i];
      CHECKF(hit, "%s: wrong line (want %u%s): %s", what, want_lines[0], nlines > 1 ? " or another allowed" : "",
             o.msg);
    } else if (nlines == 0) {
      CHECKF(o.line >= 1, "%s: rejection without a line number: %s", what, o.msg);
    }
    CHECKF(o.line <= (long)count_lines(buf, len) + 1, "%s: line past the end of the file: %s", what, o.msg);
  }
  if (cli) {
    char out[8192];
    int rc = cli_run(path, out, sizeof out);
    CHECKF(rc == 0 || rc == 2 || (o.refused && rc == 1), "%s: CLI crashed or misbehaved (exit %d): %.300s", what, rc, out);
    if (o.refused) {
      CHECKF(rc == 1 && strstr(out, "refused"), "%s: library refuses a function but CLI exits %d: %.300s", what, rc, out);
    } else if (o.ok) {
      CHECKF(rc == 0, "%s: library accepts but CLI exits %d: %.300s", what, rc, out);
    } else {
      CHECKF(rc == 2, "%s: library rejects but CLI exits %d", what, rc);
      char want_pfx[600];
      if (o.line > 0) snprintf(want_pfx, sizeof want_pfx, "%s:%ld:", path, o.line);
      else snprintf(want_pfx, sizeof want_pfx, "%s: ", path);
      CHECKF(strstr(out, want_pfx) != NULL, "%s: CLI output lacks '%s': %.300s", what, want_pfx, out);
    }
  }
  return o;
}

static outcome expect1(const char *what, const char *name, const char *buf, size_t len,
                       enum rs_srckind kind, enum expect want, unsigned line, bool cli) {
  return expect(what, name, buf, len, kind, want, &line, 1, cli);
}

/* Find the n-th (0-based) line whose text (after leading spaces) starts with prefix, searching
 * from line `from`; returns its 1-based number or 0. */
static unsigned find_line(const char *s, size_t len, unsigned from, const char *prefix, int nth) {
  size_t off = line_start(s, len, from);
  unsigned ln = from;
  size_t pl = strlen(prefix);
  while (off < len) {
    size_t e = line_end(s, len, off), b = off;
    while (b < e && s[b] == ' ') b++;
    if (e - b >= pl && !memcmp(s + b, prefix, pl) && nth-- == 0) return ln;
    off = e + 1;
    ln++;
  }
  return 0;
}

/* ---------------------------------------------------------------- 1. truncation */

/* Cut the fixture text at line ln, byte column col (col may point at the newline). */
static void cut_at_cli(const char *tag, const char *fix, size_t flen, unsigned ln, size_t col,
                       enum expect want, const unsigned *lines, int nlines, bool cli) {
  size_t off = line_start(fix, flen, ln) + col;
  if (off > flen) off = flen;
  char what[256], name[128];
  snprintf(what, sizeof what, "%s cut at line %u col %zu (\"%.*s\")", tag, ln, col,
           (int)(col < 60 ? col : 60), fix + line_start(fix, flen, ln));
  snprintf(name, sizeof name, "cut_%s_%u_%zu.mir", tag, ln, col);
  expect(what, name, fix, off, RS_SRC_MIR, want, lines, nlines, cli);
}
static void cut_at(const char *tag, const char *fix, size_t flen, unsigned ln, size_t col,
                   enum expect want, const unsigned *lines, int nlines) {
  cut_at_cli(tag, fix, flen, ln, col, want, lines, nlines, true);
}

/* Column just after the first occurrence of needle in line ln (plus extra), or the line length. */
static size_t col_after(const char *s, size_t len, unsigned ln, const char *needle, int extra) {
  size_t b = line_start(s, len, ln), e = line_end(s, len, b);
  char *l = dup_n(s + b, e - b);
  char *h = strstr(l, needle);
  size_t c = h ? (size_t)(h - l) + strlen(needle) + (size_t)extra : e - b;
  free(l);
  return c;
}

static void truncation_small(void) {
  const char *fx = "tests/fixtures/amd/hgemm_mfma16_w2x2_r1x1.prera.mir";
  size_t n;
  char *s = load(fx, &n);
  if (!s) return;
  unsigned ir_end = find_line(s, n, 2, "...", 0);
  unsigned regs = find_line(s, n, 1, "registers:", 0);
  unsigned body = find_line(s, n, 1, "body:", 0);
  unsigned bb0 = body + 1, bb1 = find_line(s, n, body, "bb.1:", 0);
  CHECK(ir_end > 10 && regs > ir_end && body > regs && bb1 > bb0);
  if (!(ir_end > 10 && regs > ir_end && body > regs && bb1 > bb0)) return free(s);

  /* IR module section without its closing "...": rejected at the last line. */
  unsigned mid = ir_end / 2;
  unsigned l;
  cut_at("ir", s, n, mid, 7, REJECT, &mid, 1);
  l = mid - 1;
  cut_at("ir_eol", s, n, mid, 0, REJECT, &l, 1);
  /* Right after the IR section's "...": no function at all. */
  l = 0;
  cut_at("ir_closed", s, n, ir_end + 1, 0, REJECT, &l, 1);

  /* Registers table: mid-entry is malformed at that line; at a line boundary the function has
   * no body (reported at the last line). */
  unsigned r = regs + 40;
  cut_at("regs_mid", s, n, r, 10, REJECT, &r, 1);
  cut_at("regs_mid2", s, n, r, col_after(s, n, r, "class: ", 3), REJECT, &r, 1);
  l = r - 1;
  cut_at("regs_eol", s, n, r, 0, REJECT, &l, 1);

  /* Right after a block header. bb.0 alone is a valid (empty) function body; after bb.1's
   * header, bb.0's successor bb.2 is missing (reported at bb.0's line). */
  cut_at("bb0_hdr", s, n, bb0 + 1, 0, ACCEPT, NULL, 0);
  {
    /* reported at bb.0 (its successors) or at its branch to bb.2 */
    unsigned br = find_line(s, n, bb0, "S_CBRANCH_SCC0 %bb.2", 0);
    unsigned want[2] = {bb0, br};
    cut_at("bb1_hdr", s, n, bb1 + 1, 0, REJECT, want, 2);
  }

  /* Inside bb.0 every cut is rejected: either at the cut line, or bb.0's successors are missing. */
  unsigned cp = find_line(s, n, bb0, "%67:sgpr_32 = COPY $sgpr6", 0);
  CHECK(cp > bb0);
  if (cp) {
    unsigned both[2] = {cp, bb0};
    cut_at("inst_def", s, n, cp, 4 + 6, REJECT, &cp, 1);                   /* "%67:sg" */
    cut_at("inst_eq", s, n, cp, 4 + 13, REJECT, &cp, 1);                   /* "%67:sgpr_32 =" */
    cut_at("inst_preg", s, n, cp, col_after(s, n, cp, "$sg", 0), REJECT, &cp, 1);
    cut_at("inst_full", s, n, cp, col_after(s, n, cp, "$sgpr6", 0), REJECT, &bb0, 1);
    cut_at("inst_any", s, n, cp, 4 + 16, REJECT, both, 2);
  }
  unsigned ld = find_line(s, n, bb0, "%0:sgpr_128 = S_LOAD_DWORDX4_IMM", 0);
  CHECK(ld > bb0);
  if (ld) {
    cut_at("inst_paren", s, n, ld, col_after(s, n, ld, "%66(p", 0), REJECT, &ld, 1);
    cut_at("inst_mem", s, n, ld, col_after(s, n, ld, ":: (dereferenceable", 0), REJECT, &bb0, 1);
  }

  /* Inside the last block (no successors to lose): a cut that leaves a valid prefix is
   * accepted, a cut inside a token is rejected at that line. */
  unsigned endpgm = find_line(s, n, bb1, "S_ENDPGM", 0);
  unsigned last = 0, mem = 0;
  for (unsigned k = endpgm - 1; k > bb1; k--) {
    size_t b = line_start(s, n, k), e = line_end(s, n, b);
    char *t = dup_n(s + b, e - b);
    bool hdr = !strncmp(t, "  bb.", 5);
    if (!last && strstr(t, " = ") && strstr(t, ".sub") && strstr(t, ", implicit $exec") && !strstr(t, "::"))
      last = k;
    if (!mem && strstr(t, " :: (")) mem = k;
    free(t);
    if (hdr) break;
  }
  CHECK(endpgm > bb1 && last > bb1 && mem > bb1);
  if (last) {
    cut_at("last_eol", s, n, last + 1, 0, ACCEPT, NULL, 0);
    cut_at("last_preg", s, n, last, col_after(s, n, last, "implicit $ex", 0), REJECT, &last, 1);
    cut_at("last_comma", s, n, last, col_after(s, n, last, ", implicit $exec", -14), REJECT, &last, 1);
    /* "..., implicit" - the flag word without its register. */
    cut_at("last_flag", s, n, last, col_after(s, n, last, ", implicit", 0), REJECT, &last, 1);
    cut_at("last_sub", s, n, last, col_after(s, n, last, ".sub", 0), REJECT, &last, 1);
  }
  if (mem) /* memory operands are ignored, so a cut inside them leaves a valid instruction */
    cut_at("last_mem", s, n, mem, col_after(s, n, mem, " :: (", 3), ACCEPT, NULL, 0);

  /* A sweep of cuts across the whole file: never a crash, and rejections name the file and a
   * line inside what is left (or no line). The library only, to stay fast. */
  int noline = 0;
  char first_noline[600] = "";
  for (size_t off = 1; off < n; off += 211 * SLOW) {
    char name[64];
    snprintf(name, sizeof name, "sweep_%zu.mir", off);
    const char *path = put_file(name, s, off);
    if (!path) break;
    outcome o = lib_run(path, s, off, RS_SRC_MIR);
    if (!o.ok) {
      CHECKF(o.line >= 0, "sweep cut %zu: message does not start with the path: %s", off, o.msg);
      CHECKF(o.line <= (long)last_line(s, off), "sweep cut %zu: line past the end: %s", off, o.msg);
    }
    if (!o.ok && off >= line_start(s, n, bb0 + 1) && o.line == 0 && noline++ == 0)
      snprintf(first_noline, sizeof first_noline, "cut at byte %zu: %s", off, o.msg);
    unlink(path);
  }
  CHECKF(noline == 0, "sweep: %d cuts inside the body rejected without a line, first: %s", noline,
         first_noline);
  free(s);
}

static void truncation_large(void) {
  const char *fx = "tests/fixtures/amd/fa_hd128_bc32_half.prera.mir";
  size_t n;
  char *s = load(fx, &n);
  if (!s) return;
  unsigned ir_end = find_line(s, n, 2, "...", 0);
  unsigned regs = find_line(s, n, 1, "registers:", 0);
  unsigned body = find_line(s, n, 1, "body:", 0);
  unsigned bb0 = body + 1;
  CHECK(ir_end > 10 && regs > ir_end && body > regs);
  if (!(ir_end > 10 && regs > ir_end && body > regs)) return free(s);
  unsigned mid = ir_end / 2;
  cut_at("L_ir", s, n, mid, 3, REJECT, &mid, 1);
  unsigned r = regs + (body - regs) / 3;
  cut_at("L_regs", s, n, r, col_after(s, n, r, "id: ", 1), REJECT, &r, 1);
  /* right after the header of a block in the middle: earlier successors are then undefined */
  unsigned bm = find_line(s, n, bb0 + 1, "bb.", 3);
  CHECK(bm > bb0);
  if (bm) {
    /* valid if no earlier block branches past it */
    cut_at_cli("L_bbhdr", s, n, bm + 1, 0, EITHER, NULL, 0, false);
    unsigned k = find_line(s, n, bm, "%", 0); /* an instruction line after it */
    if (k) {
      size_t b = line_start(s, n, k), e = line_end(s, n, b);
      /* in the middle of the line: rejected at that line or for a missing successor */
      cut_at("L_inst", s, n, k, (e - b) / 2, REJECT, NULL, 0);
    }
  }
  free(s);
}

/* liveins lines with lane masks (postsplit fixtures print them). */
static void truncation_lanemask(void) {
  const char *fx = "tests/fixtures/amd/hgemm_mfma16_w2x2_r1x1.postsplit.mir";
  size_t n;
  char *s = load(fx, &n);
  if (!s) return;
  unsigned body = find_line(s, n, 1, "body:", 0);
  unsigned ln = 0;
  for (int k = 0; k < 64 && !ln; k++) {
    unsigned c = find_line(s, n, body, "liveins:", k);
    if (!c) break;
    size_t b = line_start(s, n, c), e = line_end(s, n, b);
    char *t = dup_n(s + b, e - b);
    if (strstr(t, "_sgpr3:0x")) ln = c;
    free(t);
  }
  CHECK(ln > body);
  if (!ln) return free(s);
  /* inside a register name: unknown register at that line */
  cut_at("lm_name", s, n, ln, col_after(s, n, ln, "$sgpr0_sgp", 0), REJECT, &ln, 1);
  /* right after the colon: empty lane mask */
  cut_at("lm_colon", s, n, ln, col_after(s, n, ln, "_sgpr3:", 0), REJECT, &ln, 1);
  /* inside the hex digits or after a comma: the shorter mask may be valid, but the block and
   * everything after it is lost, so some earlier block's branch or successor is undefined:
   * rejected, with some line */
  cut_at("lm_hex", s, n, ln, col_after(s, n, ln, "_sgpr3:0x0000", 0), REJECT, NULL, 0);
  cut_at("lm_hex2", s, n, ln, col_after(s, n, ln, "_sgpr3:0x00000000000000F", 0), REJECT, NULL, 0);
  cut_at("lm_comma", s, n, ln, col_after(s, n, ln, "_sgpr3:0x00000000000000FF,", 0), REJECT, NULL, 0);
  free(s);
}

/* ---------------------------------------------------------------- 2./3./4. small files */

static const char base_mir[] =
    "---\n"                                                                   /* 1 */
    "name:            f\n"                                                    /* 2 */
    "tracksRegLiveness: true\n"                                               /* 3 */
    "registers:\n"                                                            /* 4 */
    "  - { id: 0, class: vgpr_32, preferred-register: '' }\n"                 /* 5 */
    "  - { id: 1, class: vgpr_32, preferred-register: '' }\n"                 /* 6 */
    "  - { id: 2, class: vreg_64_align2, preferred-register: '' }\n"          /* 7 */
    "liveins:\n"                                                              /* 8 */
    "  - { reg: '$vgpr0', virtual-reg: '%0' }\n"                              /* 9 */
    "body:             |\n"                                                   /* 10 */
    "  bb.0:\n"                                                               /* 11 */
    "    successors: %bb.1(0x80000000)\n"                                     /* 12 */
    "    liveins: $vgpr0, $sgpr0_sgpr1_sgpr2_sgpr3:0x00000000000000FF\n"      /* 13 */
    "  \n"                                                                    /* 14 */
    "    %0:vgpr_32 = COPY $vgpr0\n"                                          /* 15 */
    "    %1:vgpr_32 = V_ADD_U32_e32 %0, %0, implicit $exec\n"                 /* 16 */
    "    undef %2.sub0:vreg_64_align2 = COPY %1\n"                            /* 17 */
    "    %2.sub1:vreg_64_align2 = COPY %0 ; a comment\n"                      /* 18 */
    "    S_BRANCH %bb.1\n"                                                    /* 19 */
    "  \n"                                                                    /* 20 */
    "  bb.1:\n"                                                               /* 21 */
    "    S_ENDPGM 0, implicit %2, implicit %1\n"                              /* 22 */
    "...\n";

/* base_mir with the first occurrence of from replaced by to. */
static char *subst(const char *from, const char *to, size_t *len) {
  const char *h = strstr(base_mir, from);
  CHECKF(h != NULL, "test bug: '%s' not in the base file", from);
  if (!h) h = base_mir + strlen(base_mir);
  size_t a = (size_t)(h - base_mir), fl = h[0] ? strlen(from) : 0, tl = strlen(to);
  size_t n = strlen(base_mir) - fl + tl;
  char *r = malloc(n + 1);
  memcpy(r, base_mir, a);
  memcpy(r + a, to, tl);
  strcpy(r + a + tl, h + fl);
  *len = n;
  return r;
}

static int ncase;
static void reject_subst(const char *what, const char *from, const char *to, unsigned line) {
  size_t n;
  char *t = subst(from, to, &n);
  char name[64];
  snprintf(name, sizeof name, "case%03d.mir", ++ncase);
  expect1(what, name, t, n, RS_SRC_MIR, REJECT, line, true);
  free(t);
}

static void small_files(void) {
  size_t bl = strlen(base_mir);
  outcome ob = expect("base file", "base.mir", base_mir, bl, RS_SRC_MIR, ACCEPT, NULL, 0, true);
  CHECK(ob.ok && ob.nblocks == 2 && ob.ninsts == 6 && ob.nvars == 3);

  /* 3. empty, "---" only, no body */
  unsigned zero = 0;
  expect1("empty file", "empty.mir", "", 0, RS_SRC_MIR, REJECT, zero, true);
  expect1("'---' only", "dashes.mir", "---\n", 4, RS_SRC_MIR, REJECT, zero, true);
  expect1("'--- |' only", "irsec.mir", "--- |\n", 6, RS_SRC_MIR, REJECT, 1, true);
  {
    const char *t = "---\nname:            f\ntracksRegLiveness: true\n...\n";
    expect1("function without a body", "nobody.mir", t, strlen(t), RS_SRC_MIR, REJECT, 4, true);
    t = "---\nname:            f\nbody:             |\n...\n";
    expect1("function with an empty body", "nobody2.mir", t, strlen(t), RS_SRC_MIR, REJECT, 4, true);
    t = "---\nname:            f\nbody:             |\n    %0:vgpr_32 = COPY $vgpr0\n...\n";
    expect1("instruction outside a block", "noblock.mir", t, strlen(t), RS_SRC_MIR, REJECT, 4, true);
    t = "name: f\n";
    expect1("no document start", "nodoc.mir", t, strlen(t), RS_SRC_MIR, REJECT, 1, true);
  }

  /* 4. registers, classes, operands */
  reject_subst("unknown class inline", "%1:vgpr_32 = V_ADD", "%5:vreg_999 = V_ADD", 16);
  reject_subst("unknown class in registers:", "id: 1, class: vgpr_32", "id: 1, class: vreg_999", 6);
  reject_subst("class contradicting registers:", "%1:vgpr_32 = V_ADD", "%1:sgpr_32 = V_ADD", 16);
  reject_subst("$vgpr256", "COPY $vgpr0", "COPY $vgpr256", 15);
  reject_subst("non-consecutive tuple", "COPY $vgpr0", "COPY $sgpr4_sgpr6", 15);
  reject_subst("$foo", "COPY $vgpr0", "COPY $foo", 15);
  reject_subst("$ alone", "COPY $vgpr0", "COPY $", 15);
  reject_subst("unknown live-in register", "liveins: $vgpr0,", "liveins: $vgpr999,", 13);
  reject_subst("unknown function live-in", "reg: '$vgpr0'", "reg: '$vgpr999'", 9);
  reject_subst("'%' alone", "= COPY %1\n", "= COPY %\n", 17);
  reject_subst("'%5.'", "= COPY %1\n", "= COPY %5.\n", 17);
  reject_subst("'%1.'", "= COPY %1\n", "= COPY %1.\n", 17);
  reject_subst("'%5:'", "= COPY %1\n", "= COPY %5:\n", 17);
  reject_subst("'%1.sub99'", "= COPY %1\n", "= COPY %1.sub99\n", 17);
  reject_subst("'%1.sub1' on a 32-bit class", "= COPY %1\n", "= COPY %1.sub1\n", 17);
  reject_subst("'%bb.'", "S_BRANCH %bb.1", "S_BRANCH %bb.", 19);
  reject_subst("'%bb.99' undefined block", "S_BRANCH %bb.1", "S_BRANCH %bb.99", 19);
  {
    size_t n;
    char *t = subst("successors: %bb.1(", "successors: %bb.99(", &n);
    /* the successors line, or the header of the block that lists it */
    expect("undefined successor", "succ.mir", t, n, RS_SRC_MIR, REJECT, (const unsigned[]){12, 11}, 2, true);
    free(t);
  }
  reject_subst("unbalanced '('", "= COPY %1\n", "= COPY %1(s32\n", 17);
  reject_subst("unbalanced ')'", "= COPY %1\n", "= COPY %1(s32))\n", 17);
  reject_subst("'implicit' alone", "%0, %0, implicit $exec", "%0, %0, implicit", 16);
  reject_subst("'implicit-def dead' alone", "%0, %0, implicit $exec", "%0, %0, implicit-def dead", 16);
  reject_subst("'killed' alone", "%0, %0, implicit $exec", "%0, %0, killed", 16);
  reject_subst("lane mask outside the register", "_sgpr3:0x00000000000000FF", "_sgpr3:0x00000000000001FF", 13);
  reject_subst("lane mask outside a 32-bit register", "liveins: $vgpr0,", "liveins: $vgpr0:0x0000000000000004,", 13);
  reject_subst("lane mask too long", "_sgpr3:0x00000000000000FF", "_sgpr3:0xFFFFFFFFFFFFFFFFFF", 13);
  reject_subst("lane mask not hex", "_sgpr3:0x00000000000000FF", "_sgpr3:0xZZ", 13);
  reject_subst("lane mask empty", "_sgpr3:0x00000000000000FF", "_sgpr3:", 13);
  /* 0 would mean "no lane live"; llc never prints it, and reading it as "all lanes" is wrong */
  reject_subst("lane mask zero", "_sgpr3:0x00000000000000FF", "_sgpr3:0x0000000000000000", 13);
  reject_subst("register mask operand", "S_ENDPGM 0, ", "S_ENDPGM 0, csr_amdgpu_highregs, ", 22);
  reject_subst("CustomRegMask operand", "S_ENDPGM 0, ", "S_ENDPGM 0, CustomRegMask($vgpr0,$vgpr1), ", 22);
  { /* a call names its callee (rocPRIM 5.3's device assert: SI_CALL to @__assert_fail) */
    size_t n;
    char *t = subst("S_ENDPGM 0, ", "dead $sgpr30_sgpr31 = SI_CALL $sgpr4_sgpr5, @__assert_fail, csr_amdgpu_gfx90ainsts, ", &n);
    outcome o = expect1("a call", "call.mir", t, n, RS_SRC_MIR, REJECT, 22, true);
    CHECKF(strstr(o.msg, "call to @__assert_fail (calls are not supported)") != NULL, "call not named: %s", o.msg);
    free(t);
  }
  reject_subst("overflowing vreg number", "= COPY %1\n", "= COPY %99999999999\n", 17);
  reject_subst("vreg number past 2^32", "= COPY %1\n", "= COPY %4294967297\n", 17);
  reject_subst("overflowing vreg in registers:", "id: 1, class", "id: 99999999999, class", 6);
  reject_subst("unterminated bundle", "S_BRANCH %bb.1\n", "S_BRANCH %bb.1 {\n", 23);
  reject_subst("unmatched '}'", "S_BRANCH %bb.1\n", "S_BRANCH %bb.1\n    }\n", 20);
  reject_subst("duplicate block", "  bb.1:\n", "  bb.0:\n", 21);
  reject_subst("malformed block header", "  bb.1:\n", "  bb.x1:\n", 21);

  /* Huge numbers must not make a tiny file allocate gigabytes: a block numbered 2^28-1 is either
   * accepted or rejected with file:line, within 256 MB of address space (normal build only:
   * ASan reserves far more than that up front). */
  {
    size_t n;
    char *t = subst("  bb.1:\n", "  bb.268435455:\n", &n);
    char *u = strstr(t, "%bb.1(");
    memcpy(u, "%bb.0(", 6); /* keep the other references valid: bb.0 loops to itself */
    u = strstr(t, "S_BRANCH %bb.1");
    memcpy(u, "S_BRANCH %bb.0", 14);
    const char *path = put_file("bigblock.mir", t, n);
#if SLOW == 1
    if (path) {
      char cmd[1024], out[4096];
      snprintf(cmd, sizeof cmd, "ulimit -v 262144; '%s' inspect '%s'", rs_check_cli, path);
      int rc = rs_check_run(cmd, out, sizeof out);
      CHECKF(rc == 0 || (rc == 2 && strstr(out, "bigblock.mir:21:")),
             "block number 268435455: exit %d within 256 MB (want 0, or 2 with file:21:): %.200s", rc, out);
    }
#else
    (void)path;
#endif
    free(t);
  }

  /* 2. garbage */
  {
    char buf[4096];
    rng_state = 0x9E3779B97F4A7C15ULL;
    for (int round = 0; round < 4; round++) {
      for (size_t i = 0; i < sizeof buf; i++) {
        buf[i] = (char)(rng() >> 56);
        if (round < 2 && buf[i] == 0) buf[i] = '\n'; /* rounds 0-1: no NUL bytes */
      }
      if (round == 1) memcpy(buf, "---\nname: f\nbody: |\n  bb.0:\n    ", 32);
      char name[64], what[64];
      snprintf(name, sizeof name, "random%d.mir", round);
      snprintf(what, sizeof what, "random bytes #%d", round);
      /* any line: the reason differs; the file must be rejected with the path */
      outcome o = expect(what, name, buf, sizeof buf, RS_SRC_MIR, REJECT, NULL, -1, true);
      snprintf(name, sizeof name, "random%d.ptx", round);
      snprintf(what, sizeof what, "random bytes #%d as PTX", round);
      const char *p = put_file(name, buf, sizeof buf);
      if (p) {
        o = lib_run(p, buf, sizeof buf, RS_SRC_PTX);
        CHECKF(!o.ok, "%s: accepted", what);
        CHECKF(o.line >= 0, "%s: message does not start with the path: %s", what, o.msg);
      }
    }
  }
  {
    /* high bytes inside an instruction: in the opcode, glued to an operand, as an operand */
    reject_subst("0xC3 0xA9 in the opcode", "= V_ADD_U32_e32", "= V_ADD_U\xc3\xa9_e32", 16);
    reject_subst("0xFF after a vreg", "= COPY %1\n", "= COPY %1\xff\n", 17);
    reject_subst("0x80 after a preg", "implicit $exec", "implicit $exec\x80", 16);
    reject_subst("0xE2 0x82 0xAC as an operand", "%0, %0, implicit", "%0, \xe2\x82\xac, implicit", 16);
    reject_subst("0xFE in a block header", "  bb.1:\n", "  bb.1\xfe:\n", 21);
    size_t n;
    char *t = subst("; a comment", "; caf\xc3\xa9 \xff\xfe", &n);
    expect("high bytes in a comment", "comment_hi.mir", t, n, RS_SRC_MIR, ACCEPT, NULL, 0, true);
    free(t);
  }
  {
    /* a NUL byte in the middle of an instruction: rejected at its line */
    size_t n = bl;
    char *t = dup_n(base_mir, bl);
    char *h = strstr(t, "V_ADD_U32");
    h[3] = 0;
    expect1("NUL byte", "nul.mir", t, n, RS_SRC_MIR, REJECT, 16, true);
    free(t);
  }
}

/* CRLF line endings: accepted, with the same IR as the LF file. */
static void crlf(void) {
  const char *fx[] = {"tests/fixtures/amd/hgemm_mfma16_w2x2_r1x1.prera.mir",
                      "tests/fixtures/amd/hgemm_mfma16_w2x2_r1x1.postsplit.mir"};
  for (size_t k = 0; k < 2; k++) {
    size_t n;
    char *s = load(fx[k], &n);
    if (!s) continue;
    char *c = malloc(2 * n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      if (s[i] == '\n') c[m++] = '\r';
      c[m++] = s[i];
    }
    char name[64], what[128];
    snprintf(name, sizeof name, "crlf%zu.mir", k);
    snprintf(what, sizeof what, "CRLF %s", fx[k]);
    outcome a = lib_run(fx[k], s, n, RS_SRC_MIR);
    outcome b = expect(what, name, c, m, RS_SRC_MIR, ACCEPT, NULL, 0, true);
    CHECKF(a.ok && b.ok && a.nblocks == b.nblocks && a.ninsts == b.ninsts && a.nops == b.nops &&
               a.nvregs == b.nvregs && a.nvars == b.nvars && a.nconf == b.nconf,
           "%s: CRLF parse differs from LF (blocks %u/%u insts %u/%u ops %u/%u vars %u/%u conf %u/%u)",
           what, a.nblocks, b.nblocks, a.ninsts, b.ninsts, a.nops, b.nops, a.nvars, b.nvars, a.nconf,
           b.nconf);
    /* CRLF and an error: the line number is still right */
    char *bad = dup_n(c, m);
    char *h = strstr(bad, "S_ENDPGM");
    unsigned want = h ? line_of(bad, (size_t)(h - bad)) : 0;
    if (h) memcpy(h, "$vgpr999", 8);
    snprintf(name, sizeof name, "crlf_bad%zu.mir", k);
    snprintf(what, sizeof what, "CRLF with an error %s", fx[k]);
    expect1(what, name, bad, m, RS_SRC_MIR, REJECT, want, true);
    free(bad);
    free(c);
    free(s);
  }
}

/* ---------------------------------------------------------------- 5. mutation */

typedef struct {
  const char *s;
  size_t n;
} line_t;

static size_t split_lines(const char *s, size_t n, line_t **out) {
  size_t cnt = 0, cap = 1024;
  line_t *l = malloc(sizeof *l * cap);
  for (size_t off = 0; off < n;) {
    size_t e = line_end(s, n, off);
    if (cnt == cap) l = realloc(l, sizeof *l * (cap *= 2));
    l[cnt++] = (line_t){s + off, e - off + (e < n)};
    off = e + 1;
  }
  *out = l;
  return cnt;
}

/* One mutant of s into buf (capacity cap); returns its length. */
static size_t mutate(const char *s, size_t n, const line_t *lines, size_t nl, char *buf, size_t cap) {
  static const char *const toks[] = {"%", "$", ",", "(", ")", ":", ".", " = ", "implicit ",
                                     "%bb.", "%999999", "$vgpr", "sub", ":0x", "{", "}", "\n",
                                     "undef ", "killed ", ";", "bb.", "---", "...", " :: ", "@",
                                     ".reg .b32 %r<", "bra ", "@%p1 ", "ld.global.u32 ", "}\n",
                                     "{\n", "\t", "\r", "\xff", "0x"};
  int kind = (int)rng_below(6);
  size_t m = 0;
  if (kind <= 1) { /* byte flips / byte replacements in a few places */
    memcpy(buf, s, n);
    m = n;
    int k = 1 + (int)rng_below(4);
    for (int i = 0; i < k; i++) {
      size_t at = rng_below(n);
      if (kind == 0) buf[at] = (char)(buf[at] ^ (1 << rng_below(8)));
      else buf[at] = (char)(rng() >> 56);
    }
  } else if (kind <= 3) { /* delete or duplicate a few lines */
    size_t a = rng_below(nl), b = a + 1 + rng_below(kind == 2 ? 8 : 3);
    if (b > nl) b = nl;
    for (size_t i = 0; i < nl; i++) {
      size_t times = i < a || i >= b ? 1 : kind == 2 ? 0 : 2;
      for (size_t t = 0; t < times && m + lines[i].n <= cap; t++) {
        memcpy(buf + m, lines[i].s, lines[i].n);
        m += lines[i].n;
      }
    }
  } else if (kind == 4) { /* swap two tokens: the words around two random spots */
    memcpy(buf, s, n);
    m = n;
    size_t a = rng_below(n), b = rng_below(n);
    size_t la = 0, lb = 0;
    while (a + la < n && la < 12 && buf[a + la] != ' ' && buf[a + la] != '\n') la++;
    while (b + lb < n && lb < 12 && buf[b + lb] != ' ' && buf[b + lb] != '\n') lb++;
    size_t k = la < lb ? la : lb;
    if (a + k <= b || b + k <= a)
      for (size_t i = 0; i < k; i++) {
        char t = buf[a + i];
        buf[a + i] = buf[b + i];
        buf[b + i] = t;
      }
  } else { /* insert or overwrite with a syntax token */
    const char *t = toks[rng_below(sizeof toks / sizeof *toks)];
    size_t tl = strlen(t), at = rng_below(n);
    memcpy(buf, s, at);
    memcpy(buf + at, t, tl);
    size_t skip = rng_below(2) ? 0 : rng_below(6);
    if (at + skip > n) skip = n - at;
    memcpy(buf + at + tl, s + at + skip, n - at - skip);
    m = n + tl - skip;
  }
  return m;
}

static void mutation(const char *fx, enum rs_srckind kind, int count, uint64_t seed) {
  size_t n;
  char *s = load(fx, &n);
  if (!s) return;
  line_t *lines;
  size_t nl = split_lines(s, n, &lines);
  size_t cap = 4 * n + 256;
  char *buf = malloc(cap);
  const char *path = kind == RS_SRC_MIR ? "mutant.mir" : kind == RS_SRC_PTX ? "mutant.ptx" : "mutant.sass";
  char full[128];
  snprintf(full, sizeof full, "%s/%s", tmpdir, path);
  rng_state = seed;
  int accepted = 0, bad_msg = 0;
  for (int i = 0; i < count; i++) {
    size_t m = mutate(s, n, lines, nl, buf, cap);
    outcome o = lib_run(full, buf, m, kind);
    if (o.ok) {
      accepted++;
      continue;
    }
    /* a message naming the file; a line, when given, inside the mutant */
    bool good = o.line >= 0 && o.line <= (long)last_line(buf, m) + 1;
    if (!good && bad_msg++ < 5)
      CHECKF(good, "%s mutant %d (seed %#llx): bad rejection message: %s", fx, i,
             (unsigned long long)seed, o.msg);
    rs_check_count++;
  }
  CHECKF(bad_msg == 0, "%s: %d mutants with bad messages", fx, bad_msg);
  /* sanity: the mutations are neither all harmless nor all fatal */
  CHECKF(accepted > 0 && accepted < count, "%s: %d of %d mutants accepted", fx, accepted, count);
  free(buf);
  free(lines);
  free(s);
}

/* PTX truncation and garbage through the CLI, a few cases. */
static void ptx_cases(void) {
  const char *fx = "tests/fixtures/nv/sgemm_t4x4.sm_89.ptx";
  size_t n;
  char *s = load(fx, &n);
  if (!s) return;
  outcome o = expect("PTX fixture", "ok.ptx", s, n, RS_SRC_PTX, ACCEPT, NULL, 0, true);
  (void)o;
  for (int k = 1; k < 8; k++) {
    size_t off = n * (size_t)k / 8;
    char name[64], what[64];
    snprintf(name, sizeof name, "cut%d.ptx", k);
    snprintf(what, sizeof what, "PTX cut at %zu/%zu", off, n);
    /* a cut PTX function has no closing brace: rejected */
    expect(what, name, s, off, RS_SRC_PTX, REJECT, NULL, 0, true);
  }
  expect1("empty PTX", "empty.ptx", "", 0, RS_SRC_PTX, REJECT, 0, true);
  free(s);
}

/* ---------------------------------------------------------------- 6. SASS listings */

/* Real listings of the corpus (ptxas 13, nvdisasm 11.8): one kernel with loops (sm_75) and three
 * kernels with descriptors (sm_80). */
static const char sass_fx[] = "tests/fixtures/sass/front/ops/gemv_rows240_rpt8_alpha0.sm_75.sass";
static const char sass_fx3[] = "tests/fixtures/sass/calib.sm_80.sass";

/* s with line ln (1-based) replaced by `with` (NULL: deleted); length in *m. */
static char *sass_edit(const char *s, size_t n, unsigned ln, const char *with, size_t *m) {
  size_t a = line_start(s, n, ln), b = line_end(s, n, a);
  if (b < n) b++;
  size_t wl = with ? strlen(with) : 0;
  char *o = malloc(n + wl + 2);
  memcpy(o, s, a);
  if (with) memcpy(o + a, with, wl), o[a + wl++] = '\n';
  memcpy(o + a + wl, s + b, n - b);
  *m = a + wl + n - b;
  o[*m] = 0;
  return o;
}

/* Rejected at `line` (0: no line) through the library and the CLI (exit 2, "file:line:"), with
 * `words` in the message. */
static void sass_reject(const char *what, const char *name, const char *buf, size_t len, unsigned line,
                        const char *words) {
  outcome o = expect1(what, name, buf, len, RS_SRC_SASS, REJECT, line, true);
  CHECKF(o.ok || strstr(o.msg, words) != NULL, "%s: message lacks '%s': %s", what, words, o.msg);
}

/* The listing with line ln's instruction text after the address replaced by `inst`. */
static void sass_inst(const char *what, const char *name, const char *s, size_t n, unsigned ln, const char *inst,
                      const char *words) {
  size_t a = line_start(s, n, ln), e = line_end(s, n, a);
  char line[256];
  const char *c = memchr(s + a, '/', e - a);
  int pre = c ? (int)(c - (s + a)) + 8 : 0; /* the address comment ends 8 bytes after its first slash */
  snprintf(line, sizeof line, "%.*s                   %s", pre, s + a, inst);
  size_t m;
  char *x = sass_edit(s, n, ln, line, &m);
  sass_reject(what, name, x, m, ln, words);
  free(x);
}

static void sass_cases(void) {
  size_t n, n3;
  char *s = load(sass_fx, &n), *s3 = load(sass_fx3, &n3);
  if (!s || !s3) return free(s), free(s3);
  outcome ok = expect("SASS fixture", "ok.sass", s, n, RS_SRC_SASS, ACCEPT, NULL, 0, true);
  CHECK(ok.ok && ok.nfuncs == 1 && ok.ninsts == 136 && ok.nvars > 0);
  outcome ok3 = expect("SASS fixture, 3 kernels", "ok3.sass", s3, n3, RS_SRC_SASS, ACCEPT, NULL, 0, true);
  CHECK(ok3.ok && ok3.nfuncs == 3);
  unsigned size_ln = find_line(s, n, 1, ".size", 0), i0 = find_line(s, n, 1, "/*0000*/", 0);
  unsigned end_ln = find_line(s, n, 1, ".L_x_3:", 0), nl = count_lines(s, n);
  unsigned st = find_line(s, n, 1, "/*07b0*/", 0), lea = find_line(s, n, 1, "/*01f0*/", 0);
  unsigned ldg = find_line(s, n, 1, "/*0330*/", 0), bra = find_line(s, n, 1, "/*0200*/", 0);
  CHECK(size_ln && i0 > size_ln && end_ln == nl && st && lea && ldg && bra);
  if (!(size_ln && i0 > size_ln && end_ln == nl && st && lea && ldg && bra)) return free(s), free(s3);

  /* truncated: a cut at any line boundary inside the kernel never reaches its end label (reported
   * at the .size line that names it); one inside an instruction at that line; one before any
   * instruction: a function without instructions (its .section line), or no function */
  for (unsigned ln = i0 + 1; ln <= end_ln; ln += (unsigned)SLOW) {
    char what[96], name[64];
    snprintf(what, sizeof what, "SASS cut before line %u", ln);
    snprintf(name, sizeof name, "cut_%u.sass", ln);
    expect1(what, name, s, line_start(s, n, ln), RS_SRC_SASS, REJECT, size_ln, ln % 16 == 0);
  }
  for (unsigned ln = i0; ln < end_ln; ln += 7) {
    size_t a = line_start(s, n, ln), e = line_end(s, n, a);
    const char *semi = memchr(s + a, ';', e - a);
    if (!semi) continue;
    char what[96], name[64];
    snprintf(what, sizeof what, "SASS cut inside line %u", ln);
    snprintf(name, sizeof name, "cutin_%u.sass", ln);
    expect1(what, name, s, (size_t)(semi - s), RS_SRC_SASS, REJECT, ln, true);
  }
  unsigned sec = find_line(s, n, 1, "\t.section", 0);
  CHECK(sec > 1 && sec < i0);
  sass_reject("SASS cut after .section", "cut_sec.sass", s, line_start(s, n, sec + 1), sec, "no instructions");
  sass_reject("SASS cut after .headerflags", "cut_hdr.sass", s, line_start(s, n, sec), 0, "no function");
  /* three kernels cut inside the second: the first is whole, the second lacks its end label */
  unsigned k2 = find_line(s3, n3, 1, ".size", 1), k2i = find_line(s3, n3, k2, "/*0040*/", 0);
  CHECK(k2 && k2i);
  if (k2i) sass_reject("SASS 3 kernels cut in the second", "cut3.sass", s3, line_start(s3, n3, k2i), k2, "truncated listing");

  /* garbage: random bytes, an ELF header, bytes 0x80-0xFF, a NUL byte, a line of text */
  rng_state = 0x5A55ULL;
  for (int k = 0; k < 8; k++) {
    char g[2048], name[64];
    size_t gl = 16 + rng_below(sizeof g - 16);
    for (size_t i = 0; i < gl; i++) g[i] = (char)(rng() >> 56);
    snprintf(name, sizeof name, "garbage%d.sass", k);
    expect(name, name, g, gl, RS_SRC_SASS, REJECT, NULL, -1, true);
  }
  sass_reject("SASS: a cubin", "elf.sass", "\x7f" "ELF\x02\x01\x01\x33\x07", 9, 1, "unexpected byte");
  {
    size_t m;
    char *x = sass_edit(s, n, lea, "        /*01f0*/                   IMAD.WIDE.U32 R60, R17, 0xf0, R\xe9\xff ;", &m);
    sass_reject("SASS: bytes 0x80-0xFF in an instruction", "high.sass", x, m, lea, "");
    free(x);
    x = sass_edit(s, n, lea, "        /*01f0*/                   IMAD.WIDE.U32 R60, R17, 0xf0, R60 ; trailing words", &m);
    sass_reject("SASS: text after ';'", "after.sass", x, m, lea, "after ';'");
    free(x);
    x = sass_edit(s, n, lea, "hello world", &m);
    sass_reject("SASS: a line of text in a kernel", "text.sass", x, m, lea, "not an nvdisasm listing");
    free(x);
    x = dup_n(s, n);
    x[line_start(s, n, lea) + 12] = 0;
    sass_reject("SASS: a NUL byte", "nul.sass", x, n, lea, "NUL byte");
    free(x);
  }

  /* an unknown opcode, an unknown form of a known one, a known one with a wrong operand count */
  sass_inst("SASS unknown opcode", "unk.sass", s, n, lea, "FROBNICATE R60, R17 ;", "unknown opcode 'FROBNICATE'");
  sass_inst("SASS unknown modifier", "unkmod.sass", s, n, lea, "IMAD.WIDE.FROB R60, R17, 0xf0, R60 ;", "unknown form");
  sass_inst("SASS operand count", "nops.sass", s, n, lea, "IMAD.WIDE.U32 R60, R17 ;", "2 operands");

  /* operands of the wrong width: an odd pair, a misaligned quad, a predicate for a pair, a
   * pair running past R255, a 32-bit operand written .64 in an address without a pair */
  sass_inst("SASS odd pair", "odd.sass", s, n, lea, "IMAD.WIDE.U32 R61, R17, 0xf0, R60 ;", "wrong width");
  sass_inst("SASS misaligned quad", "quad.sass", s, n, ldg, "LDG.E.128.CONSTANT.SYS R14, [R12] ;", "wrong width");
  sass_inst("SASS predicate as pair", "ppair.sass", s, n, lea, "IMAD.WIDE.U32 P0, R17, 0xf0, R60 ;", "wrong width");
  sass_inst("SASS pair past the end", "past.sass", s, n, lea, "IMAD.WIDE.U32 R254, R17, 0xf0, R60 ;", "");
  sass_inst("SASS odd address pair", "addr.sass", s, n, st, "STG.E.64.SYS [R13], R10 ;", "wrong width");
  sass_inst("SASS guard spelt P00", "guard.sass", s, n, bra, "@!P00 BRA `(.L_x_0) ;", "not spelt as nvdisasm"); /* fuzz_sass */
  sass_inst("SASS no such register", "r256.sass", s, n, lea, "IMAD.WIDE.U32 R60, R256, 0xf0, R60 ;", "no such register");

  /* address holes: an instruction left out, a repeated address, a kernel not at address 0 */
  {
    size_t m;
    char *x = sass_edit(s, n, lea, NULL, &m);
    sass_reject("SASS address hole", "hole.sass", x, m, lea, "address hole");
    free(x);
    x = sass_edit(s, n, lea, "        /*01e0*/                   IMAD.WIDE.U32 R60, R17, 0xf0, R60 ;", &m);
    sass_reject("SASS repeated address", "rep.sass", x, m, lea, "address hole");
    free(x);
    x = sass_edit(s, n, i0, NULL, &m);
    sass_reject("SASS kernel not at 0", "start.sass", x, m, i0, "not /*0000*/");
    free(x);
  }
  /* a branch to a label the listing lacks */
  sass_inst("SASS undefined label", "label.sass", s, n, bra, "@!P0 BRA `(.L_x_9) ;", "undefined label");

  /* CRLF line endings: the same kernel */
  {
    char *c = malloc(2 * n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      if (s[i] == '\n') c[m++] = '\r';
      c[m++] = s[i];
    }
    outcome b = expect("SASS CRLF", "crlf.sass", c, m, RS_SRC_SASS, ACCEPT, NULL, 0, true);
    CHECKF(b.ok && b.ninsts == ok.ninsts && b.nblocks == ok.nblocks && b.nvars == ok.nvars && b.nconf == ok.nconf,
           "SASS CRLF parse differs from LF (insts %u/%u vars %u/%u)", b.ninsts, ok.ninsts, b.nvars, ok.nvars);
    free(c);
  }
  free(s);
  free(s3);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  snprintf(tmpdir, sizeof tmpdir, "/tmp/rs_bad_input.XXXXXX");
  if (!mkdtemp(tmpdir)) {
    CHECKF(0, "mkdtemp failed");
    return rs_check_done("test_bad_input");
  }
  truncation_small();
  truncation_large();
  truncation_lanemask();
  small_files();
  crlf();
  ptx_cases();
  sass_cases();
  /* 3000 mutants (750 under ASan): virtual registers (prera), lane-masked live-ins and physical
   * registers only (final), and two PTX kernels */
  mutation("tests/fixtures/amd/hgemm_mfma16_w2x2_r1x1.prera.mir", RS_SRC_MIR, 1200 / SLOW, 0x1234567ULL);
  mutation("tests/fixtures/amd/hgemm_mfma16_w2x2_r1x1.final.mir", RS_SRC_MIR, 800 / SLOW, 0xBADC0DEULL);
  mutation("tests/fixtures/nv/sgemm_t4x4.sm_89.ptx", RS_SRC_PTX, 500 / SLOW, 0xFEEDULL);
  mutation("tests/fixtures/nv/wmma_w2x2_r2x2.sm_90.ptx", RS_SRC_PTX, 500 / SLOW, 0xC0FFEEULL);
  mutation(sass_fx, RS_SRC_SASS, 500 / SLOW, 0x5A550001ULL);
  mutation(sass_fx3, RS_SRC_SASS, 300 / SLOW, 0x5A550002ULL);

  for (int i = 0; i < ntmp; i++) unlink(tmpfiles[i]);
  rmdir(tmpdir);
  for (int i = 0; i < ntmp; i++) free(tmpfiles[i]);
  free(tmpfiles);
  return rs_check_done("test_bad_input");
}
