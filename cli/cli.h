/* cli.h - the regsweep subcommands. Each returns the process exit status:
 * 0 success, 1 a negative result (e.g. a rejected candidate), 2 bad input or usage. */
#ifndef RS_CLI_H
#define RS_CLI_H
#include "mcode/mcode.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
  void (*usage)(void);
} rs_cmd;

int rs_cmd_inspect(int argc, char **argv);
void rs_usage_inspect(void);
int rs_cmd_corpus(int argc, char **argv);
int rs_cmd_corpus_forms(int argc, char **argv); /* cmd_forms.c: `corpus forms` (SASS opcode coverage) */
int rs_cmd_corpus_import(int argc, char **argv); /* cmd_import.c: `corpus import` (a user's kernels) */
int rs_cmd_corpus_merge(int argc, char **argv);  /* cmd_merge.c: `corpus merge` (corpora built apart) */
int rs_cmd_verify(int argc, char **argv);
void rs_usage_verify(void);
int rs_cmd_oracle(int argc, char **argv);
int rs_cmd_alloc(int argc, char **argv);
int rs_cmd_sweep(int argc, char **argv);
int rs_cmd_attempts(int argc, char **argv);
int rs_cmd_reward(int argc, char **argv); /* cmd_reward.c: the verifier as an RL reward */
void rs_usage_reward(void);
int rs_cmd_slurm(int argc, char **argv);
void rs_usage_slurm(void);
int rs_cmd_report(int argc, char **argv);
void rs_usage_report(void);
void rs_usage_attempts(void);
void rs_usage_sweep(void);
void rs_usage_alloc(void);
void rs_usage_oracle(void);
void rs_usage_corpus(void);
int rs_cmd_emit(int argc, char **argv);
void rs_usage_emit(void);
int rs_cmd_regalloc(int argc, char **argv); /* cmd_regalloc.c (SASS) */
void rs_usage_regalloc(void);
int rs_cmd_lower(int argc, char **argv); /* cmd_lower.c (SASS -> cubin) */
void rs_usage_lower(void);
/* lowered.c: a lowering's lines (mcode/mcode.h's rs_mc_lower), for lower and regalloc alike;
 * returns status. And nvdisasm's crosscheck line (with the first mismatch on stderr). */
void rs_print_xcheck(const rs_crosscheck_stats *x);
/* RS_LOWER_PROBE_ONLY=1 in the environment: lower through nvdisasm's probe alone (no table). */
bool rs_lower_probe_only(void);
int rs_lower_print(const rs_mc *mc, const rs_mc_lower_opts *o, const rs_mc_lowered *r, int status, const rs_err *e);
int rs_cmd_ptxtruth(int argc, char **argv); /* cmd_ptxtruth.c (PTX -> SASS labels) */
void rs_usage_ptxtruth(void);

/* True if argv[i] is -h/--help. */
int rs_cli_wants_help(int argc, char **argv);

#endif
