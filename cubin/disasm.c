/* disasm.c - run nvdisasm on a cubin and complete its listing: every address of every
 * function printed (holes filled from the encoding or the listing refused), the hidden .E
 * descriptor written as desc[URx]. */
#include "cubin/disasm.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ND_FALLBACK "/opt/nvidia-cuda-11.8/usr/bin/nvdisasm"

static const char *find(const char *s, size_t n, const char *pat) {
  size_t m = strlen(pat);
  for (size_t i = 0; i + m <= n; i++)
    if (!memcmp(s + i, pat, m)) return s + i;
  return NULL;
}


/* ------------------------------------------------------------------ running nvdisasm */

/* Run argv; stdout into *out, stderr into *err (both malloc'd). Returns the exit status, or -1. */
static int run_capture(char *const *argv, char **out, char **err, rs_err *e) {
  int po[2], pe[2];
  *out = *err = NULL;
  if (pipe(po)) return rs_errf(e, argv[0], 0, "pipe: %s", strerror(errno));
  if (pipe(pe)) {
    close(po[0]);
    close(po[1]);
    return rs_errf(e, argv[0], 0, "pipe: %s", strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
    return rs_errf(e, argv[0], 0, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    dup2(po[1], 1);
    dup2(pe[1], 2);
    close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
    int dn = open("/dev/null", O_RDONLY);
    if (dn >= 0) dup2(dn, 0);
    execv(argv[0], argv);
    _exit(127);
  }
  close(po[1]);
  close(pe[1]);
  rs_sbuf so = {0}, se = {0};
  rs_sbuf_put(&so, "", 0);
  rs_sbuf_put(&se, "", 0);
  struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t r = read(fds[i].fd, buf, sizeof buf);
      if (r > 0) rs_sbuf_put(i ? &se : &so, buf, (size_t)r);
      else if (r == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        open_fds--;
      }
    }
  }
  for (int i = 0; i < 2; i++)
    if (fds[i].fd >= 0) close(fds[i].fd);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      free(so.s);
      free(se.s);
      return rs_errf(e, argv[0], 0, "waitpid: %s", strerror(errno));
    }
  *out = so.s;
  *err = se.s;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static bool executable(const char *p) { return access(p, X_OK) == 0; }

int rs_nvdisasm_open(const char *explicit_path, rs_nvdisasm *nd, rs_err *e) {
  memset(nd, 0, sizeof *nd);
  if (explicit_path) {
    if (!executable(explicit_path)) return rs_errf(e, explicit_path, 0, "nvdisasm: not an executable file");
    snprintf(nd->path, sizeof nd->path, "%s", explicit_path);
  } else {
    const char *path = getenv("PATH");
    for (const char *c = path; c && *c && !nd->path[0];) {
      const char *s = strchr(c, ':');
      size_t l = s ? (size_t)(s - c) : strlen(c);
      char cand[1024];
      if (l && l < sizeof cand - 10) {
        snprintf(cand, sizeof cand, "%.*s/nvdisasm", (int)l, c);
        if (executable(cand)) snprintf(nd->path, sizeof nd->path, "%s", cand);
      }
      c = s ? s + 1 : c + l;
    }
    if (!nd->path[0] && executable(ND_FALLBACK)) snprintf(nd->path, sizeof nd->path, "%s", ND_FALLBACK);
    if (!nd->path[0])
      return rs_errf(e, "nvdisasm", 0,
                     "not found (give --nvdisasm PATH, put it on PATH, or run scripts/install-deps.sh, which "
                     "extracts CUDA 11.8's into /opt/nvidia-cuda-11.8)");
  }
  char *argv[] = {nd->path, "--version", NULL}, *out, *err;
  int st = run_capture(argv, &out, &err, e);
  if (st < 0) return -1;
  const char *r = strstr(out, "release ");
  if (st == 0 && r) sscanf(r + 8, "%u.%u", &nd->major, &nd->minor);
  free(out);
  free(err);
  if (!nd->major) return rs_errf(e, nd->path, 0, "`nvdisasm --version` printed no release: not nvdisasm?");
  return 0;
}

int rs_nvdisasm_run(const rs_nvdisasm *nd, const char *cubin_path, const char *name, const char *const *args,
                    char **out, rs_err *e) {
  char *argv[24];
  int k = 0;
  argv[k++] = (char *)nd->path;
  for (int i = 0; args && args[i] && k < 22; i++) argv[k++] = (char *)args[i];
  argv[k++] = (char *)cubin_path;
  argv[k] = NULL;
  char *err;
  int st = run_capture(argv, out, &err, e);
  if (st < 0) return -1;
  if (st || *err) {
    char *nl = strchr(err, '\n');
    if (nl) *nl = 0;
    rs_errf(e, name, 0, "nvdisasm %u.%u refused it (exit %d): %s", nd->major, nd->minor, st,
            *err ? err : st == 127 ? "cannot execute" : "no message");
    free(*out);
    free(err);
    *out = NULL;
    return -1;
  }
  free(err);
  return 0;
}

/* ------------------------------------------------------------------ listing completion */

typedef struct {
  const char *s;   /* line start */
  size_t len;      /* without the newline */
  unsigned no;     /* 1-based */
} line;

static bool next_line(const char **c, line *l) {
  if (!**c) return false;
  const char *nl = strchr(*c, '\n');
  l->s = *c;
  l->len = nl ? (size_t)(nl - *c) : strlen(*c);
  l->no++;
  *c = nl ? nl + 1 : *c + l->len;
  return true;
}

/* an instruction line: spaces, the address in a comment (slash-star 01c0 star-slash), the instruction -> address; the text after the address comment in *rest. */
static bool inst_addr(const line *l, uint64_t *addr, size_t *rest) {
  size_t i = 0;
  while (i < l->len && (l->s[i] == ' ' || l->s[i] == '\t')) i++;
  if (i + 2 >= l->len || l->s[i] != '/' || l->s[i + 1] != '*' || !isxdigit((unsigned char)l->s[i + 2])) return false;
  uint64_t a = 0;
  size_t j = i + 2;
  for (; j < l->len && isxdigit((unsigned char)l->s[j]) && j - i < 20; j++)
    a = a * 16 + (uint64_t)(isdigit((unsigned char)l->s[j]) ? l->s[j] - '0' : (tolower((unsigned char)l->s[j]) - 'a' + 10));
  if (j + 1 >= l->len || l->s[j] != '*' || l->s[j + 1] != '/') return false;
  *addr = a;
  *rest = j + 2;
  return true;
}

/* `.section .text.NAME,...` -> NAME */
static bool section_name(const line *l, char *name, size_t n) {
  size_t i = 0;
  while (i < l->len && (l->s[i] == ' ' || l->s[i] == '\t')) i++;
  if (l->len - i < 9 || strncmp(l->s + i, ".section", 8) || (l->s[i + 8] != ' ' && l->s[i + 8] != '\t')) return false;
  i += 8;
  while (i < l->len && (l->s[i] == ' ' || l->s[i] == '\t')) i++;
  if (l->len - i < 7 || strncmp(l->s + i, ".text.", 6)) {
    name[0] = 0; /* another section: ends the function */
    return true;
  }
  i += 6;
  size_t k = 0;
  while (i < l->len && l->s[i] != ',' && !isspace((unsigned char)l->s[i]) && k + 1 < n) name[k++] = l->s[i++];
  name[k] = 0;
  return true;
}

/* A label: "NAME:" at column 0 (.L_x_3, $__internal_0_..., the function's own symbols), maybe
 * followed by -plr columns. */
static bool is_branch_label(const line *l) {
  if (l->len < 2 || isspace((unsigned char)l->s[0]) || l->s[0] == '/') return false;
  size_t k = 0;
  while (k < l->len && !isspace((unsigned char)l->s[k]) && l->s[k] != ':') k++;
  return k > 0 && k < l->len && l->s[k] == ':';
}

#define NO_ADDR UINT64_MAX
#define LABEL_MAX 256 /* a label name, NUL included (was 48: a restored label was cut to 47 characters) */

/* A branch label of a function and the address its branches' encodings give (NO_ADDR: no
 * decoded branch goes there). nvdisasm 11.8 drops the label of a dropped instruction too. */
typedef struct {
  const rs_cubin_func *f;
  char name[LABEL_MAX]; /* $__internal_11_$__cuda_sm20_rcp_ru_ftz_f32_slowpath: 51 */
  uint64_t addr;
  bool defined, emitted, call; /* call: a CALL.REL.NOINC goes there */
  bool sym;                    /* from the symbol table only: restored where a hole is, else not needed */
} lab;

typedef struct {
  const char *s;
  size_t len;
  int label; /* index into labs, -1 = not a label line */
} pend;

/* Target of a branch (BRA 0x947, CALL.REL 0x944, BSSY 0x945) from its encoding, or -1. A signed
 * byte offset from the next instruction in bits 32-81 (sm_75-89; BSSY on sm_90 too); sm_90
 * BRA/CALL: offset/4 with its low 8 bits in 16-23 and the rest in 34-81. Both checked against
 * every label nvdisasm prints (docs/sass.md). */
static int64_t branch_target(unsigned sm, uint64_t a, const uint64_t w[2]) {
  unsigned op = (unsigned)(w[0] & 0xfff);
  int64_t off;
  if (op != 0x947 && op != 0x944 && op != 0x945) return -1;
  if (sm >= 90 && op != 0x945) {
    uint64_t hi = w[0] >> 34 | (w[1] & 0x3ffff) << 30; /* 48 bits */
    int64_t h = (int64_t)(hi << 16) >> 16;
    off = (int64_t)((uint64_t)h * 256 | (w[0] >> 16 & 0xff)) * 4;
  } else {
    uint64_t v = w[0] >> 32 | (w[1] & 0x3ffff) << 32; /* 50 bits */
    off = (int64_t)(v << 14) >> 14;
  }
  return (int64_t)a + 16 + off;
}

static size_t label_name(const char *s, size_t n, char *out, size_t cap) {
  size_t k = 0;
  while (k < n && k + 1 < cap && (isalnum((unsigned char)s[k]) || s[k] == '_' || s[k] == '.' || s[k] == '$')) {
    out[k] = s[k];
    k++;
  }
  out[k] = 0;
  return k;
}
typedef struct {
  const rs_cubin *c;
  const char *name;
  rs_sbuf out;
  rs_sass_stats *st;
  const rs_cubin_func *f;   /* current function */
  uint64_t next;            /* next expected address */
  pend *pending;            /* lines since the last instruction (placed once the holes are known) */
  uint32_t npending, cappending;
  lab *labs;                /* branch labels: where the encodings say they are */
  uint32_t nlabs, caplabs;
  int hex_col;              /* column of the encoding comments of a -hex listing, 0 = none */
  char filled_note[1024];
  const rs_cubin_func *noted; /* function the note names last */
} C;

static void pad_to(rs_sbuf *b, size_t line_start, size_t col) {
  size_t have = b->n - line_start;
  while (have < col) {
    rs_sbuf_put(b, " ", 1);
    have++;
  }
}

/* Append the filled instruction at address a (or fail). */
static int fill_one(C *x, uint64_t a, unsigned lineno, rs_err *e) {
  uint64_t w[2];
  rs_cubin_words(x->f, a, w);
  char text[256];
  x->st->holes++;
  if (rs_sass_fill(x->c->sm, w, text, sizeof text))
    return rs_errf(e, x->name, lineno, "function %s address 0x%04llx: nvdisasm printed nothing and %s", x->f->name,
                   (unsigned long long)a, text);
  /* nvdisasm's layout: 8 spaces, the address comment, a 19-column field with the guard right-aligned */
  const char *op = text;
  char guard[8] = "";
  if (text[0] == '@') {
    const char *sp = strchr(text, ' ');
    snprintf(guard, sizeof guard, "%.*s", (int)(sp - text + 1), text);
    op = sp + 1;
  }
  size_t start = x->out.n;
  rs_sbuf_printf(&x->out, "        /*%04llx*/%*s%s%s ;", (unsigned long long)a, (int)(19 - strlen(guard)), "", guard, op);
  if (x->hex_col) {
    pad_to(&x->out, start, (size_t)x->hex_col);
    if (x->out.s[x->out.n - 1] != ' ') rs_sbuf_put(&x->out, " ", 1);
    rs_sbuf_printf(&x->out, "/* 0x%016llx */\n", (unsigned long long)w[0]);
    pad_to(&x->out, x->out.n, (size_t)x->hex_col);
    rs_sbuf_printf(&x->out, "/* 0x%016llx */", (unsigned long long)w[1]);
  }
  rs_sbuf_put(&x->out, "\n", 1);
  x->st->filled++;
  x->st->insts++;
  size_t k = strlen(x->filled_note);
  bool first = x->noted != x->f;
  x->noted = x->f;
  if (k < sizeof x->filled_note - 160)
    snprintf(x->filled_note + k, sizeof x->filled_note - k, "%s%s%.150s 0x%04llx %.*s", k ? (first ? ";" : ",") : "",
             first ? " " : "", first ? x->f->name : "", (unsigned long long)a, (int)strcspn(op, " ."), op);
  else if (!strstr(x->filled_note, "..."))
    snprintf(x->filled_note + k, sizeof x->filled_note - k, " ...");
  return 0;
}

static void opcode_of(const char *s, size_t len, size_t *op_at, size_t *op_len, char *base, size_t bn);

static int find_lab(const C *x, const rs_cubin_func *f, const char *name) {
  for (uint32_t i = 0; i < x->nlabs; i++)
    if (x->labs[i].f == f && !strcmp(x->labs[i].name, name)) return (int)i;
  return -1;
}

static void emit_pending(C *x, uint32_t i) {
  rs_sbuf_put(&x->out, x->pending[i].s, x->pending[i].len);
  rs_sbuf_put(&x->out, "\n", 1);
  if (x->pending[i].label >= 0) x->labs[x->pending[i].label].emitted = true;
}

/* Write the lines since the last instruction and fill the holes up to `a` (the next printed
 * address, or the end of the code): each label goes where its branches' encodings say. */
static int place(C *x, uint64_t a, unsigned lineno, rs_err *e) {
  uint32_t k = 0;
  bool holes = x->next < a;
  for (uint32_t i = 0; i < x->npending && holes; i++) {
    int li = x->pending[i].label;
    if (li < 0) continue;
    uint64_t r = x->labs[li].addr;
    if (r == NO_ADDR)
      return rs_errf(e, x->name, lineno,
                     "function %s address 0x%04llx: label %s next to an instruction nvdisasm dropped, and no "
                     "branch encoding says where it is",
                     x->f->name, (unsigned long long)x->next, x->labs[li].name);
    if (r < x->next || r > a)
      return rs_errf(e, x->name, lineno, "function %s: label %s printed before 0x%04llx, its branches go to 0x%04llx",
                     x->f->name, x->labs[li].name, (unsigned long long)a, (unsigned long long)r);
  }
  for (; x->next < a; x->next += 16) {
    while (k < x->npending && (x->pending[k].label < 0 || x->labs[x->pending[k].label].addr <= x->next))
      emit_pending(x, k++);
    for (uint32_t i = 0; i < x->nlabs; i++) /* labels nvdisasm dropped with their instruction */
      if (x->labs[i].f == x->f && !x->labs[i].defined && x->labs[i].addr == x->next && !x->labs[i].emitted) {
        /* a subroutine's symbol ($__internal_..._slowpath, called; sm_90's VIADD at its entry
         * dropped, and its .type line with it): the parser takes a called label as a subroutine
         * only when it is a function symbol */
        if (x->labs[i].call && x->labs[i].name[0] == '$')
          rs_sbuf_printf(&x->out, "        .type           %s,@function\n", x->labs[i].name);
        rs_sbuf_printf(&x->out, "%s:\n", x->labs[i].name);
        x->labs[i].emitted = true;
        x->st->labels++;
      }
    if (fill_one(x, x->next, lineno, e)) return -1;
  }
  for (; k < x->npending; k++) {
    int li = x->pending[k].label;
    if (li >= 0 && x->labs[li].addr != NO_ADDR && x->labs[li].addr != a && !holes)
      return rs_errf(e, x->name, lineno, "function %s: label %s printed at 0x%04llx, its branches go to 0x%04llx",
                     x->f->name, x->labs[li].name, (unsigned long long)a, (unsigned long long)x->labs[li].addr);
    emit_pending(x, k);
  }
  x->npending = 0;
  return 0;
}

/* End of a function: the rest of its .text must be printed too (before its trailing lines). */
static int end_func(C *x, unsigned lineno, rs_err *e) {
  if (!x->f) return 0;
  /* NOP padding after the function's symbol: -plr/-lrm tables stop at the symbol's end */
  uint64_t end = x->f->size;
  while (end > x->next) {
    uint64_t w[2];
    rs_cubin_words(x->f, end - 16, w);
    if ((w[0] & 0xffff) != 0x7918 || w[0] >> 16) break;
    end -= 16;
  }
  if (end < x->f->size && x->next <= end) x->st->padding += (uint32_t)((x->f->size - end) / 16);
  if (place(x, end, lineno, e)) return -1;
  for (uint32_t i = 0; i < x->nlabs; i++)
    if (x->labs[i].f == x->f && !x->labs[i].defined && !x->labs[i].emitted && !x->labs[i].sym)
      return rs_errf(e, x->name, lineno, "function %s: branch to %s (0x%04llx), which is not an instruction we list",
                     x->f->name, x->labs[i].name, (unsigned long long)x->labs[i].addr);
  x->f = NULL;
  return 0;
}

/* Every branch label of the listing, with the address its branches' encodings give. */
static int scan_labels(C *x, const char *listing, rs_err *e) {
  const char *cur = listing;
  line l = {0};
  const rs_cubin_func *f = NULL;
  while (next_line(&cur, &l)) {
    char fn[RS_CUBIN_NAME_MAX], nm[LABEL_MAX];
    uint64_t a;
    size_t rest;
    if (section_name(&l, fn, sizeof fn)) {
      f = fn[0] ? rs_cubin_find(x->c, fn) : NULL;
    } else if (f && is_branch_label(&l)) {
      label_name(l.s, l.len, nm, sizeof nm);
      int i = find_lab(x, f, nm);
      if (i < 0) {
        lab L = {f, "", NO_ADDR, true, false, false, false};
        snprintf(L.name, sizeof L.name, "%s", nm);
        RS_PUSH(x->labs, x->nlabs, x->caplabs, L);
      } else {
        x->labs[i].defined = true;
      }
    } else if (f && inst_addr(&l, &a, &rest) && a < f->size && a % 16 == 0) {
      const char *ref = find(l.s + rest, l.len - rest, "`(");
      if (!ref) continue;
      /* only the forms whose layout we checked: BRA and BRA.U.ANY (sm_90's waterfall loops; not
       * .DIV or plain .U: those carry a UR), BSSY, CALL.REL.NOINC */
      size_t op_at, op_len;
      char base[16];
      opcode_of(l.s + rest, (size_t)(ref - l.s - rest), &op_at, &op_len, base, sizeof base);
      const char *op = l.s + rest + op_at;
      if (!((op_len == 3 && !strncmp(op, "BRA", 3)) || (op_len == 9 && !strncmp(op, "BRA.U.ANY", 9)) ||
            (op_len == 4 && !strncmp(op, "BSSY", 4)) ||
            (op_len == 14 && !strncmp(op, "CALL.REL.NOINC", 14))))
        continue;
      /* CALL.REL.NOINC R14 `(kernel): through a function pointer, the label is its base, not a target */
      bool direct = true;
      for (const char *q = op + op_len; op_len == 14 && q < ref; q++) direct &= *q == ' ';
      if (!direct) continue;
      uint64_t w[2];
      rs_cubin_words(f, a, w);
      int64_t t = branch_target(x->c->sm, a, w);
      if (t < 0) continue;
      label_name(ref + 2, (size_t)(l.s + l.len - ref - 2), nm, sizeof nm);
      int i = find_lab(x, f, nm);
      if (i < 0) {
        lab L = {f, "", NO_ADDR, false, false, false, false};
        snprintf(L.name, sizeof L.name, "%s", nm);
        RS_PUSH(x->labs, x->nlabs, x->caplabs, L);
        i = (int)x->nlabs - 1;
      }
      if (op_len == 14) x->labs[i].call = true;
      if (t >= (int64_t)f->size || t % 16)
        return rs_errf(e, x->name, l.no, "function %s address 0x%04llx: branch encoding gives 0x%llx, outside the code",
                       f->name, (unsigned long long)a, (unsigned long long)t);
      if (x->labs[i].addr != NO_ADDR && x->labs[i].addr != (uint64_t)t)
        return rs_errf(e, x->name, l.no, "function %s: branches to %s disagree (0x%04llx, 0x%04llx)", f->name, nm,
                       (unsigned long long)x->labs[i].addr, (unsigned long long)t);
      x->labs[i].addr = (uint64_t)t;
      x->st->branches++;
    }
  }
  return 0;
}

/* The opcode of an instruction's text ("@P0 LDG.E.64 R2, [R4.64] ;"): base and span. */
static void opcode_of(const char *s, size_t len, size_t *op_at, size_t *op_len, char *base, size_t bn) {
  size_t i = 0;
  while (i < len && s[i] == ' ') i++;
  if (i < len && s[i] == '@') {
    while (i < len && s[i] != ' ') i++;
    while (i < len && s[i] == ' ') i++;
  }
  *op_at = i;
  size_t j = i;
  while (j < len && s[j] != ' ' && s[j] != ';') j++;
  *op_len = j - i;
  size_t k = 0;
  for (size_t q = i; q < j && s[q] != '.' && k + 1 < bn; q++) base[k++] = s[q];
  base[k] = 0;
}

static bool has_mod(const char *op, size_t n, const char *mod) {
  size_t ml = strlen(mod);
  for (size_t i = 0; i + ml < n + 1; i++)
    if (op[i] == '.' && !strncmp(op + i + 1, mod, ml) && (i + 1 + ml == n || op[i + 1 + ml] == '.')) return true;
  return false;
}

/* Copy an instruction line, writing desc[URx] before its address operand when it is a .E access
 * whose listing does not print the descriptor. */
static int copy_inst(C *x, const line *l, size_t rest, uint64_t a, rs_err *e) {
  const char *s = l->s + rest;
  size_t len = l->len - rest;
  const char *semi = memchr(s, ';', len);
  size_t ilen = semi ? (size_t)(semi - s) : len;
  size_t op_at, op_len;
  char base[16];
  opcode_of(s, ilen, &op_at, &op_len, base, sizeof base);
  uint64_t w[2];
  rs_cubin_words(x->f, a, w);
  int ur = has_mod(s + op_at, op_len, "E") ? rs_sass_desc_ur(x->c->sm, base, w) : -2;
  const char *br = ur == -2 ? NULL : memchr(s + op_at + op_len, '[', ilen - op_at - op_len);
  if (br && !strcmp(base, "LDGSTS")) { /* LDGSTS.E [Rshared], [Rglobal.64]: the global one, as CUDA 12 prints */
    const char *g = find(br, ilen - (size_t)(br - s), ", [");
    br = g ? g + 2 : NULL;
  }
  bool listed = find(s, ilen, "desc[") != NULL;
  if (listed && ur != -2) x->st->descs_listed++;
  if (ur == -2 || listed || !br) {
    rs_sbuf_put(&x->out, l->s, l->len);
    rs_sbuf_put(&x->out, "\n", 1);
    return 0;
  }
  if (ur < 0 || ur % 2 || ur > 61)
    return rs_errf(e, x->name, l->no,
                   "function %s address 0x%04llx: %.*s: descriptor field unknown for encoding %016llx %016llx",
                   x->f->name, (unsigned long long)a, (int)op_len, s + op_at, (unsigned long long)w[0],
                   (unsigned long long)w[1]);
  size_t at = (size_t)(br - l->s);
  rs_sbuf_put(&x->out, l->s, at);
  rs_sbuf_printf(&x->out, "desc[UR%d]", ur);
  /* keep the -hex / -plr columns where they were: eat as many spaces before them as we added */
  size_t added = (size_t)snprintf(NULL, 0, "desc[UR%d]", ur), tail = at;
  const char *sc = memchr(l->s + at, ';', l->len - at);
  if (sc) {
    size_t after = (size_t)(sc - l->s) + 1;
    rs_sbuf_put(&x->out, l->s + at, after - at);
    size_t sp = 0;
    while (after + sp < l->len && l->s[after + sp] == ' ') sp++;
    size_t eat = sp > added + 1 ? added : sp > 1 ? sp - 1 : 0;
    tail = after + eat;
  }
  rs_sbuf_put(&x->out, l->s + tail, l->len - tail);
  rs_sbuf_put(&x->out, "\n", 1);
  x->st->descs++;
  return 0;
}

int rs_sass_complete(const rs_cubin *c, const char *listing, const char *name, char **out, rs_sass_stats *st,
                     rs_err *e) {
  memset(st, 0, sizeof *st);
  *out = NULL;
  C x;
  memset(&x, 0, sizeof x);
  x.c = c;
  x.name = name;
  x.st = st;
  bool *seen = rs_xcalloc(c->nfuncs + 1, sizeof *seen);
  const char *cur = listing;
  line l = {0};
  int rc = 0;
  /* header comment, written first so a reader sees the listing was completed */
  rs_sbuf body = {0};
  rs_sbuf_put(&body, "", 0);
  rc = scan_labels(&x, listing, e);
  /* function symbols nvdisasm 11.8 dropped with a dropped instruction (sm_90's VIADD R1 at the
   * entry of a __device__ function called through a pointer: $kernel$_Z10ComputeBox...): from the
   * symbol table, restored with their .type line where the hole is */
  for (uint32_t k = 0; !rc && k < c->nfuncs; k++) {
    rs_cubin_sym *ys;
    uint32_t ny = rs_cubin_subsyms(c, &c->funcs[k], &ys);
    for (uint32_t j = 0; j < ny; j++) {
      if (find_lab(&x, &c->funcs[k], ys[j].name) >= 0 || strlen(ys[j].name) >= LABEL_MAX) continue;
      lab L = {&c->funcs[k], "", ys[j].value, false, false, true, true};
      snprintf(L.name, sizeof L.name, "%s", ys[j].name);
      RS_PUSH(x.labs, x.nlabs, x.caplabs, L);
    }
    free(ys);
  }
  while (!rc && next_line(&cur, &l)) {
    char fn[RS_CUBIN_NAME_MAX];
    uint64_t a;
    size_t rest;
    if (section_name(&l, fn, sizeof fn)) {
      if ((rc = end_func(&x, l.no, e))) break;
      rs_sbuf_put(&x.out, l.s, l.len);
      rs_sbuf_put(&x.out, "\n", 1);
      if (fn[0]) {
        x.f = rs_cubin_find(c, fn);
        if (!x.f) {
          rc = rs_errf(e, name, l.no, "function %s is not in the cubin", fn);
          break;
        }
        uint32_t fi = (uint32_t)(x.f - c->funcs);
        if (seen[fi]) {
          rc = rs_errf(e, name, l.no, "function %s listed twice", fn);
          break;
        }
        seen[fi] = true;
        st->funcs++;
        x.next = 0;
      }
    } else if (inst_addr(&l, &a, &rest)) {
      if (!x.f) {
        rc = rs_errf(e, name, l.no, "instruction at 0x%04llx outside a .text section", (unsigned long long)a);
        break;
      }
      if (a % 16 || a < x.next || a >= x.f->size) {
        rc = rs_errf(e, name, l.no, "function %s: address 0x%04llx %s", x.f->name, (unsigned long long)a,
                     a % 16 ? "is not a multiple of 16"
                     : a >= x.f->size ? "is past the end of its .text section"
                                      : "is out of order");
        break;
      }
      if (!x.hex_col) {
        const char *h = find(l.s, l.len, "/* 0x");
        if (h) x.hex_col = (int)(h - l.s);
      }
      if ((rc = place(&x, a, l.no, e))) break;
      if ((rc = copy_inst(&x, &l, rest, a, e))) break;
      st->insts++;
      x.next = a + 16;
    } else if (x.f) { /* held until the next instruction shows whether holes come first */
      pend P = {l.s, l.len, -1};
      if (is_branch_label(&l)) {
        char nm[LABEL_MAX];
        label_name(l.s, l.len, nm, sizeof nm);
        P.label = find_lab(&x, x.f, nm);
      }
      RS_PUSH(x.pending, x.npending, x.cappending, P);
    } else {
      rs_sbuf_put(&x.out, l.s, l.len);
      rs_sbuf_put(&x.out, "\n", 1);
    }
  }
  if (!rc) rc = end_func(&x, l.no, e);
  for (uint32_t i = 0; !rc && i < c->nfuncs; i++)
    if (!seen[i]) rc = rs_errf(e, name, 0, "function %s of the cubin is not in the listing", c->funcs[i].name);
  free(seen);
  free(x.pending);
  free(x.labs);
  if (rc) {
    free(x.out.s);
    free(body.s);
    return -1;
  }
  rs_sbuf_printf(&body, "\t// regsweep: listing completed from the cubin (sm_%u): %u instructions, %u holes filled%s%s, "
                   "%u desc[] written from the encoding, %u labels restored\n",
            c->sm, st->insts, st->filled, st->filled ? ":" : "", x.filled_note, st->descs, st->labels);
  rs_sbuf_put(&body, x.out.s ? x.out.s : "", x.out.n);
  free(x.out.s);
  *out = body.s;
  return 0;
}

int rs_sass_check_listing(const char *listing, const char *name, rs_err *e) {
  const char *cur = listing;
  line l = {0};
  bool in = false;
  uint64_t next = 0;
  while (next_line(&cur, &l)) {
    char fn[RS_CUBIN_NAME_MAX];
    uint64_t a;
    size_t rest;
    if (section_name(&l, fn, sizeof fn)) {
      in = fn[0] != 0;
      next = 0;
    } else if (in && inst_addr(&l, &a, &rest)) {
      if (a != next)
        return rs_errf(e, name, l.no, "address hole: 0x%04llx follows 0x%04llx (%llu instructions missing%s)",
                       (unsigned long long)a, (unsigned long long)(next - 16),
                       (unsigned long long)(a > next ? (a - next) / 16 : 0),
                       a < next ? ", out of order" : "; nvdisasm 11.8 drops some sm_90 instructions");
      next = a + 16;
    }
  }
  return 0;
}

const char *rs_nvdisasm_feed(const rs_nvdisasm *nd, const rs_cubin *c, const char *path, char *tmp, bool *made,
                             rs_err *e) {
  *made = false;
  bool rewrite = c->new_layout && (nd->major < 12 || (nd->major == 12 && nd->minor < 8));
  if (path && !rewrite) return path;
  rs_cubin copy = *c; /* the header rewritten in a copy: c stays as read */
  copy.bytes = rs_xmalloc(c->len);
  memcpy(copy.bytes, c->bytes, c->len);
  if (rewrite) rs_cubin_rewrite(&copy);
  int fd = mkstemp(tmp);
  int wrc = fd < 0 ? rs_errf(e, tmp, 0, "cannot create a temporary file: %s", strerror(errno))
                   : rs_cubin_write(&copy, tmp, e);
  free(copy.bytes);
  if (fd >= 0) close(fd);
  if (wrc) {
    if (fd >= 0) unlink(tmp);
    return NULL;
  }
  *made = true;
  return tmp;
}

int rs_sass_disasm_loaded(const rs_nvdisasm *nd, const rs_cubin *c, const char *cubin_path, const char *name,
                          const char *const *args, char **out, rs_sass_stats *st, rs_err *e) {
  *out = NULL;
  char tmp[] = "/tmp/regsweep-cubin-XXXXXX";
  bool made = false;
  const char *feed = rs_nvdisasm_feed(nd, c, cubin_path, tmp, &made, e);
  if (!feed) return -1;
  char *raw = NULL;
  int rc = rs_nvdisasm_run(nd, feed, name, args, &raw, e);
  if (made) unlink(tmp);
  if (!rc) rc = rs_sass_complete(c, raw, name, out, st, e);
  free(raw);
  return rc;
}

int rs_sass_disasm(const rs_nvdisasm *nd, const char *cubin_path, const char *const *args, char **out,
                   rs_sass_stats *st, rs_err *e) {
  *out = NULL;
  rs_cubin c;
  if (rs_cubin_load(cubin_path, &c, e)) {
    rs_cubin_free(&c);
    return -1;
  }
  int rc = rs_sass_disasm_loaded(nd, &c, cubin_path, cubin_path, args, out, st, e);
  rs_cubin_free(&c);
  return rc;
}
