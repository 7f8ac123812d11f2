/* llc.c - rewritten MIR through llc (and ld.lld for a code object) with the MachineVerifier on,
 * its block frequencies, and the lines of its diagnostics that matter. */
#include "emit/emit.h"
#include "mir/rounds.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Prera and postsplit both continue after the last round's rewriter: from the prera form llc
 * skips only the earlier rounds and SILowerSGPRSpills, which have nothing to do for a complete
 * assignment without spills. */
static const char *start_after(const rs_llc_opts *o) { return o->start_after[0] ? o->start_after : "virtregrewriter,1"; }

int rs_emit_llc(const char *mir_path, const char *out_path, enum rs_emit_kind kind, const rs_llc_opts *o, char **diag,
                rs_err *e) {
  *diag = NULL;
  char mcpu[64], optl[16], start[64], obj[1100];
  snprintf(mcpu, sizeof mcpu, "-mcpu=%s", o->mcpu ? o->mcpu : "gfx90a");
  snprintf(optl, sizeof optl, "-O%d", o->opt);
  snprintf(start, sizeof start, "-start-after=%s", start_after(o));
  snprintf(obj, sizeof obj, "%s.o", out_path);
  char *argv[16];
  int k = 0;
  argv[k++] = (char *)o->llc;
  argv[k++] = "-march=amdgcn";
  argv[k++] = mcpu;
  argv[k++] = optl;
  argv[k++] = start;
  if (o->machine_verify) argv[k++] = "-verify-machineinstrs";
  argv[k++] = kind == RS_EMIT_HSACO ? "-filetype=obj" : "-filetype=asm";
  argv[k++] = (char *)mir_path;
  argv[k++] = "-o";
  argv[k++] = kind == RS_EMIT_HSACO ? obj : (char *)out_path;
  argv[k] = NULL;
  char *err = NULL;
  int st = rs_emit_run(argv, o->timeout_s, &err, e);
  if (st < 0) {
    free(err);
    return -1;
  }
  if (st != 0) {
    unlink(kind == RS_EMIT_HSACO ? obj : out_path);
    /* a judgement on the kernel (MachineVerifier findings, or llc dying on it) versus llc not
     * reading its input at all (a trimmed or foreign IR module): the latter is not a verdict */
    if (st > 128 || (err && strstr(err, "Bad machine code"))) {
      *diag = err;
      return 1;
    }
    char sum[600];
    rs_errf(e, o->llc, 0, "could not compile the rewritten MIR (status %d): %s", st,
            rs_emit_llc_summary(err, sum, sizeof sum));
    free(err);
    return -1;
  }
  free(err);
  if (kind != RS_EMIT_HSACO) return 0;
  char *largv[] = {(char *)o->lld, "-shared", obj, "-o", (char *)out_path, NULL};
  st = rs_emit_run(largv, o->timeout_s, &err, e);
  unlink(obj);
  if (st == 0) {
    free(err);
    return 0;
  }
  if (st > 0) rs_errf(e, o->lld, 0, "link failed (status %d): %.400s", st, err ? err : "");
  free(err);
  return -1;
}

/* The informative lines of an llc failure: MachineVerifier findings, their instructions, fatal errors. */
char *rs_emit_llc_summary(const char *diag, char *buf, size_t n) {
  size_t k = 0, lines = 0;
  buf[0] = 0;
  for (const char *p = diag ? diag : ""; *p && lines < 12 && k + 2 < n;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if ((len >= 4 && !memcmp(p, "*** ", 4)) || (len >= 14 && !memcmp(p, "- instruction:", 14)) ||
        (len >= 10 && !memcmp(p, "LLVM ERROR", 10)) || (len >= 6 && !memcmp(p, "error:", 6)) || false) {
      k += (size_t)snprintf(buf + k, n - k, "%s%.*s", k ? "\n" : "", (int)len, p);
      lines++;
    }
    p = nl ? nl + 1 : p + len;
  }
  if (!buf[0] && diag) snprintf(buf, n, "%.*s", (int)(n - 1 < 400 ? n - 1 : 400), diag);
  if (k >= n - 2) buf[n - 1] = 0;
  return buf;
}

int rs_emit_bfi(const char *mir_path, const rs_llc_opts *o, char **bfi, rs_err *e) {
  char mcpu[64], optl[16], start[64];
  snprintf(mcpu, sizeof mcpu, "-mcpu=%s", o->mcpu ? o->mcpu : "gfx90a");
  snprintf(optl, sizeof optl, "-O%d", o->opt);
  snprintf(start, sizeof start, "-start-after=%s", start_after(o));
  /* stop at the Stack Slot Coloring after the last rewriter, the instance read from this llc's
   * pipeline: llc-22 runs one after round 0 too, before the restart point, and stopping after
   * that one fails ("Cannot stop compilation after pass that is not run") */
  rs_rounds r;
  *bfi = NULL;
  if (rs_llc_rounds(o, &r, e)) return -1;
  if (!r.slots_last[0])
    return rs_errf(e, o->llc, 0, "no Stack Slot Coloring after %s in llc's pipeline: no block frequencies for the spill slots",
                   r.rewriter_last);
  char stop[64];
  snprintf(stop, sizeof stop, "-stop-after=%s", r.slots_last);
  char *argv[] = {(char *)o->llc, "-march=amdgcn", mcpu, optl, start, stop,
                  "-print-machine-bfi", (char *)mir_path, "-o", "/dev/null", NULL};
  int st = rs_emit_run(argv, o->timeout_s, bfi, e);
  if (st < 0) return -1;
  if (st != 0 && (st > 128 || strstr(*bfi, "Bad machine code"))) return 1; /* llc refused the kernel itself */
  if (st != 0 || !strstr(*bfi, "block-frequency-info:")) {
    char sum[600];
    rs_errf(e, o->llc, 0, "no block frequencies for the spill slots (status %d): %s", st,
            rs_emit_llc_summary(*bfi, sum, sizeof sum));
    free(*bfi);
    *bfi = NULL;
    return -1;
  }
  return 0;
}
