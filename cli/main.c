/* main.c - `regsweep <command>`: dispatch to the subcommands listed below. */
#include "cli/cli.h"
#include <stdio.h>
#include <string.h>

static const rs_cmd commands[] = {
    {"inspect", "parse MIR or PTX and summarize blocks, registers, interference, pressure",
     rs_cmd_inspect, rs_usage_inspect},
    {"corpus", "build, describe and export the kernel corpus (corpus.h5)", rs_cmd_corpus, rs_usage_corpus},
    {"verify", "verify one candidate allocation (native, Z3 or both)", rs_cmd_verify, rs_usage_verify},
    {"sweep", "the distributed sweep: generate, verify and record every attempt (MPI)", rs_cmd_sweep, rs_usage_sweep},
    {"slurm", "write a Slurm job script for a sweep and submit it (sbatch)", rs_cmd_slurm, rs_usage_slurm},
    {"report", "tables, comparisons and plots of one or more runs", rs_cmd_report, rs_usage_report},
    {"reward", "the verifier as an RL reward: JSONL offline, or an HTTP service for trainers", rs_cmd_reward, rs_usage_reward},
    {"attempts", "print a run's attempt table (TSV, diff-able) or its provenance", rs_cmd_attempts, rs_usage_attempts},
    {"alloc", "candidate allocations from a model for one instance (JSON lines)", rs_cmd_alloc, rs_usage_alloc},
    {"oracle", "all ground truths must verify and all mutants be rejected, by both verifiers", rs_cmd_oracle,
     rs_usage_oracle},
    {"emit", "a passing answer to assembly / an HSA code object via llc (LLVM verifies it)", rs_cmd_emit, rs_usage_emit},
    {"regalloc", "SASS: --pinned reproduces the listing's own allocation; --free recolours it", rs_cmd_regalloc,
     rs_usage_regalloc},
    {"lower", "SASS: a recoloured listing back into its cubin (learned fields), crosschecked by nvdisasm", rs_cmd_lower,
     rs_usage_lower},
    {"ptxtruth", "PTX: the SASS register ptxas gave each PTX value (matching), coverage, truth check",
     rs_cmd_ptxtruth, rs_usage_ptxtruth},
};
#define NCMDS (sizeof commands / sizeof *commands)

static void usage(FILE *out) {
  fprintf(out, "usage: regsweep <command> [options]\n\ncommands:\n");
  for (size_t i = 0; i < NCMDS; i++) fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "  %-10s %s\n", "help", "this text, or `regsweep help <command>`");
  fprintf(out, "\n`regsweep <command> --help` describes a command's options.\n");
}

int rs_cli_wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    if (argc > 2)
      for (size_t i = 0; i < NCMDS; i++)
        if (!strcmp(argv[2], commands[i].name)) {
          commands[i].usage();
          return 0;
        }
    usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < NCMDS; i++)
    if (!strcmp(argv[1], commands[i].name)) {
      if (rs_cli_wants_help(argc - 1, argv + 1)) {
        commands[i].usage();
        return 0;
      }
      return commands[i].run(argc - 1, argv + 1);
    }
  fprintf(stderr, "regsweep: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
