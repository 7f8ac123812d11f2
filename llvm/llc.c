/* llc.c - llc's default options, running a tool with its stderr captured and a time limit (no
 * shell), and reading llc's allocation rounds from -debug-pass=Structure. */
#include "llvm/llc.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void rs_llc_opts_default(rs_llc_opts *o) {
  memset(o, 0, sizeof *o);
  o->llc = getenv("RS_LLC") && *getenv("RS_LLC") ? getenv("RS_LLC") : "llc-14";
  o->lld = getenv("RS_LLD") && *getenv("RS_LLD") ? getenv("RS_LLD") : "ld.lld-14";
  o->opt = 2;
  o->machine_verify = true;
  o->timeout_s = 120;
}

int rs_llc_rounds(const rs_llc_opts *o, rs_rounds *r, rs_err *e) {
  char mcpu[64], optl[16];
  snprintf(mcpu, sizeof mcpu, "-mcpu=%s", o->mcpu ? o->mcpu : "gfx90a");
  snprintf(optl, sizeof optl, "-O%d", o->opt);
  /* an empty module: the pipeline llc prints does not depend on the input */
  char *argv[] = {(char *)o->llc, "-march=amdgcn", mcpu, optl, "-debug-pass=Structure", "-o", "/dev/null", "/dev/null", NULL};
  char *text = NULL;
  int st = rs_emit_run(argv, o->timeout_s, &text, e);
  if (st == 0) st = rs_rounds_parse(text, o->llc, r, e);
  else if (st > 0) st = rs_errf(e, o->llc, 0, "-debug-pass=Structure failed (status %d): %.300s", st, text ? text : "");
  free(text);
  return st;
}

int rs_emit_run(char *const argv[], unsigned timeout_s, char **err_text, rs_err *e) {
  *err_text = NULL;
  int fd[2];
  if (pipe(fd)) return rs_errf(e, argv[0], 0, "pipe: %s", strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return rs_errf(e, argv[0], 0, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) {
      dup2(nul, 0);
      dup2(nul, 1);
    }
    dup2(fd[1], 2);
    close(fd[0]);
    close(fd[1]);
    execvp(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(fd[1]);
  size_t cap = 4096, n = 0;
  char *buf = rs_xmalloc(cap);
  double deadline = rs_now() + (timeout_s ? timeout_s : 120);
  bool timed_out = false;
  for (;;) {
    double left = deadline - rs_now();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p = {fd[0], POLLIN, 0};
    int r = poll(&p, 1, (int)(left * 1000) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    if (n + 1024 > cap) buf = rs_xrealloc(buf, cap *= 2);
    ssize_t k = read(fd[0], buf + n, cap - n - 1);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    n += (size_t)k;
    if (n > (16u << 20)) break; /* enough of a message */
  }
  close(fd[0]);
  buf[n] = 0;
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  *err_text = buf;
  if (timed_out) return rs_errf(e, argv[0], 0, "timed out after %u s", timeout_s);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && strstr(buf, "cannot run "))
    return rs_errf(e, argv[0], 0, "%s", strstr(buf, "cannot run "));
  /* a tool that aborts (LLVM's MachineVerifier reports, then aborts) answered too */
  if (!WIFEXITED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
