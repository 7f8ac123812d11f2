/* llc.h - llc as a tool that corpus/ (building stages) and emit/ (finishing kernels) both run:
 * its options, a subprocess runner, and the probe of its register-allocation rounds. Here, below
 * both, so that neither folder includes the other for it. */
#ifndef RS_LLVM_LLC_H
#define RS_LLVM_LLC_H
#include "mir/rounds.h"
#include "util/util.h"
#include <stdbool.h>

typedef struct {
  const char *llc;      /* default "llc-14" (env RS_LLC) */
  const char *lld;      /* default "ld.lld-14" (env RS_LLD) */
  const char *mcpu;     /* default: the target's name */
  int opt;              /* llc -O level (the corpus variant's opt axis; default 2) */
  bool machine_verify;  /* -verify-machineinstrs (default on) */
  unsigned timeout_s;   /* per tool run (default 120) */
  char start_after[32]; /* the last allocation round's rewriter, "virtregrewriter,N-1" from
                         * rs_llc_rounds; "" = "virtregrewriter,1" (rs_emit_answer probes) */
} rs_llc_opts;
void rs_llc_opts_default(rs_llc_opts *o);

/* Run a command (argv[0] looked up in PATH) with stdin from /dev/null; its stderr is captured
 * into *err_text (malloc'd, may be empty). Returns the exit status (128 + signal when it died, as
 * llc does after a MachineVerifier report), -1 with e set if it could not run or timed out. */
int rs_emit_run(char *const argv[], unsigned timeout_s, char **err_text, rs_err *e);

/* The allocation rounds of o's llc (mir/rounds.h), from its -debug-pass=Structure on an empty
 * module; an llc whose rounds we do not know is an error listing its allocation passes. */
int rs_llc_rounds(const rs_llc_opts *o, rs_rounds *r, rs_err *e);

#endif
