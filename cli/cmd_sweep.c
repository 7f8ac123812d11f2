/* cmd_sweep.c - `regsweep sweep`: its options and usage; the run is coordinator/sweep.c. */
#include "cli/cli.h"
#include "coordinator/ingest.h"
#include "coordinator/sweep.h"
#include "corpus/instance.h"
#include "verify/verifier.h"
#include "worker/bind.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_usage_sweep(void) {
  puts("usage: [mpirun -np N] regsweep sweep --corpus corpus.h5 --model SPEC [--model SPEC2 ...] --out RUN_DIR\n"
       "       [--samples N] [--until-pass] [--split train|test|all] [--filter family=fa,target=gfx90a,form=prera]\n"
       "       [--holdout-arch T]  (unseen-architecture split: test = target T, train = every other target)\n"
       "       [--ingest BATCH_DIR] [--resume] [--seed S] [--verifier native|z3|both] [--bind core|gpu|none] [--keep all|failed|none]\n"
       "       [--block N] [--progress-every SECONDS] [--z3-timeout-ms N] [--max-infra N] [--feedback]\n"
       "       [--inflight N] [--window-mode window|instance] [--verify-threads N]\n"
       "       [--emit-check N]\n"
       "--filter keys family, target, form, kind (values joined by '|'), and sample=K: about one kernel\n"
       "in K (by a hash of family and variant: kept on all its targets and forms, the same in oracle).\n"
       "\n"
       "Rank 0 coordinates (hands out shards, tracks progress, merges); ranks 1..N-1 generate, verify\n"
       "and record every attempt; one process does both. Attempt k of an instance is seeded by\n"
       "(seed, instance, model identity, k): results do not depend on -np, shards, resumes or which\n"
       "server answered (an openai: model's identity is its model name and sampling parameters, not its\n"
       "URL, timeout or window: docs/models.md). --samples N draws all N attempts (unbiased pass@k for\n"
       "every k <= N); --until-pass stops at the first verified candidate; with --feedback each next\n"
       "attempt's prompt carries the verifier's diagnostic of the previous rejected one (VeriLocc's loop;\n"
       "an openai: model's feedback=0 keeps it out). Attempt 0 is greedy. Results: RUN_DIR/run.h5 (docs/run-schema.md), RUN_DIR/summary.md;\n"
       "finished shards stay in RUN_DIR/shards, so --resume redoes only what is missing or corrupt, and\n"
       "extending --samples from 10 to 20 reuses the first 10 attempts. A worker stops the sweep after\n"
       "--max-infra (default 20) attempts in a row that the model server did not answer (down, timing\n"
       "out, 429/5xx after retries); --resume also redoes finished shards holding such attempts. A\n"
       "server that refuses every request the same way (no such model, credentials, a bad request: 3 in\n"
       "a row of 2 instances) stops it at once with the reason and what to change; a prompt beyond the\n"
       "server's context is recorded for its instance (infra 'context') and the sweep goes on. Infra\n"
       "attempts are listed by reason in the summary, with the context that would fit every instance.\n"
       "--model batch:DIR?model=M writes the requests as OpenAI Batch files (DIR/round-N/SHARD.requests.jsonl,\n"
       "what vllm run-batch reads); --ingest DIR --out RUN_DIR reads DIR/round-N/*.results.jsonl back,\n"
       "verifies and records every answer as an online sweep does (a resume: run it again after each\n"
       "round; --until-pass asks the next round for what still fails; docs/slurm.md). A run directory a live sweep holds (RUN_DIR/lock) is refused.\n"
       "A shard file that exists but cannot be read stops a resume: it is never overwritten.\n"
       "Each worker keeps up to a model's window of requests in flight (openai: inflight=, default 64,\n"
       "or --inflight N, which is not part of the model's identity; never more than the server runs at\n"
       "once where it says so (llama.cpp slots, SGLang, a vLLM queue); backed off on 429/503 or rising\n"
       "latency) across instances and shards: --until-pass interleaves\n"
       "many instances' loops, --samples sends the blocks of several instances together; results do not\n"
       "depend on it. --window-mode instance runs one instance at a time (the old way, for comparison).\n"
       "--verify-threads (default 2) verifies candidates off the network thread.\n"
       "--emit-check N: after the merge, emit up to N passing AMD answers per model with llc-14 and its\n"
       "MachineVerifier (docs/emit.md; implies --keep all); a rejection is a verifier bug (RUN_DIR/emit-check.tsv).\n"
       "NVIDIA (form sass) answers are lowered into their instance's cubin and read back by nvdisasm\n"
       "(docs/lower.md): a passing answer that joins values on write-back is a verifier gap, a\n"
       "crosscheck mismatch an encoder bug; both fail the sweep like an LLVM rejection.");
}

typedef rs_sweep_opts opts; /* coordinator/sweep.h */

static int parse(int argc, char **argv, opts *o) {
  memset(o, 0, sizeof *o);
  o->samples = 10;
  o->block = 10;
  o->seed = 1;
  o->split = "all";
  o->verifier = "native";
  o->bind = "core";
  o->keep = "failed";
  o->every = 5;
  o->z3_ms = 10000;
  o->max_infra = 20;
  o->verify_threads = 2;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--until-pass")) o->until_pass = true;
    else if (!strcmp(a, "--resume")) o->resume = true;
    else if (!strcmp(a, "--feedback")) o->feedback = true;
    else if (!v) return fprintf(stderr, "regsweep sweep: %s needs a value\n", a), -1;
    else {
      i++;
      if (!strcmp(a, "--corpus")) o->corpus = v;
      else if (!strcmp(a, "--out")) o->out = v;
      else if (!strcmp(a, "--model")) {
        if (o->nmodels == 16) return fprintf(stderr, "regsweep sweep: at most 16 models\n"), -1;
        o->models[o->nmodels++] = v;
      } else if (!strcmp(a, "--samples")) o->samples = (uint32_t)strtoul(v, NULL, 10);
      else if (!strcmp(a, "--block")) o->block = (uint32_t)strtoul(v, NULL, 10);
      else if (!strcmp(a, "--seed")) o->seed = strtoul(v, NULL, 10);
      else if (!strcmp(a, "--split")) o->split = v;
      else if (!strcmp(a, "--filter")) o->filter = v;
      else if (!strcmp(a, "--holdout-arch")) o->holdout = v;
      else if (!strcmp(a, "--verifier")) o->verifier = v;
      else if (!strcmp(a, "--bind")) o->bind = v;
      else if (!strcmp(a, "--keep")) o->keep = v;
      else if (!strcmp(a, "--progress-every")) o->every = strtod(v, NULL);
      else if (!strcmp(a, "--z3-timeout-ms")) o->z3_ms = (unsigned)strtoul(v, NULL, 10);
      else if (!strcmp(a, "--max-infra")) o->max_infra = (uint32_t)strtoul(v, NULL, 10);
      else if (!strcmp(a, "--inflight")) o->inflight = (unsigned)strtoul(v, NULL, 10);
      else if (!strcmp(a, "--verify-threads")) o->verify_threads = (unsigned)strtoul(v, NULL, 10);
      else if (!strcmp(a, "--window-mode")) {
        if (strcmp(v, "window") && strcmp(v, "instance"))
          return fprintf(stderr, "regsweep sweep: --window-mode window|instance\n"), -1;
        o->one_instance = !strcmp(v, "instance");
      }
      else if (!strcmp(a, "--emit-check")) o->emit_check = (uint32_t)strtoul(v, NULL, 10);
      else return fprintf(stderr, "regsweep sweep: unknown option '%s'\n", a), -1;
    }
  }
  if (!o->corpus || !o->out || !o->nmodels || !o->samples || o->samples > 100000)
    return fprintf(stderr, "regsweep sweep: need --corpus, --out, --model and 1 <= --samples <= 100000\n"), -1;
  if (strcmp(o->split, "all") && strcmp(o->split, "train") && strcmp(o->split, "test"))
    return fprintf(stderr, "regsweep sweep: --split train|test|all\n"), -1;
  if (o->holdout && !rs_target_by_name(o->holdout))
    return fprintf(stderr, "regsweep sweep: --holdout-arch: unknown target '%s'\n", o->holdout), -1;
  if (rs_verifier_kind(o->verifier) < 0) return fprintf(stderr, "regsweep sweep: --verifier native|z3|both\n"), -1;
  rs_bind_mode bm;
  if (rs_bind_mode_parse(o->bind, &bm)) return fprintf(stderr, "regsweep sweep: --bind core|gpu|none\n"), -1;
  if (strcmp(o->keep, "all") && strcmp(o->keep, "failed") && strcmp(o->keep, "none"))
    return fprintf(stderr, "regsweep sweep: --keep all|failed|none\n"), -1;
  if (o->inflight > 4096) return fprintf(stderr, "regsweep sweep: --inflight 1..4096\n"), -1;
  if (o->verify_threads > 64) return fprintf(stderr, "regsweep sweep: --verify-threads 0..64\n"), -1;
  if (o->until_pass) o->block = 0; /* sequential attempts: one block */
  if (o->emit_check) o->keep = "all"; /* emit-check reads the passing answers' texts */
  return 0;
}

int rs_cmd_sweep(int argc, char **argv) {
  opts o;
  if (rs_cli_wants_help(argc, argv)) {
    rs_usage_sweep();
    return 0;
  }
  /* --ingest DIR: a resume of --out whose batch: model reads DIR's result files (coordinator/ingest.c) */
  char **iargv = NULL;
  int iargc = 0;
  const char *ingest = NULL, *iout = NULL;
  for (int i = 1; i + 1 < argc; i++) {
    if (!strcmp(argv[i], "--ingest")) ingest = argv[i + 1];
    if (!strcmp(argv[i], "--out")) iout = argv[i + 1];
  }
  if (ingest) {
    rs_err ie;
    if (!iout) return fprintf(stderr, "regsweep sweep: --ingest DIR needs --out RUN_DIR (the batch sweep's run)\n"), 2;
    if (!(iargv = rs_ingest_argv(iout, ingest, argc, argv, &iargc, &ie)))
      return fprintf(stderr, "regsweep sweep: --ingest: %s\n", ie.msg), 2;
    argc = iargc;
    argv = iargv;
  }
  if (parse(argc, argv, &o)) return rs_ingest_argv_free(iargv, iargc), 2;
  rs_failpoint fault; /* fault injection for tests/test_faults.sh only */
  if (!rs_failpoint_parse(getenv("RS_FAULT"), &fault)) {
    fprintf(stderr, "regsweep sweep: RS_FAULT=%s: expected RANK:generate|append|renamed:N\n", getenv("RS_FAULT"));
    return rs_ingest_argv_free(iargv, iargc), 2;
  }
  if (!rs_filter_valid(o.filter)) {
    fprintf(stderr, "regsweep sweep: --filter takes family=, target=, form=, kind= (values joined by '|'), sample=K\n");
    return rs_ingest_argv_free(iargv, iargc), 2;
  }
  int status = rs_sweep_run(&o, fault);
  rs_ingest_argv_free(iargv, iargc);
  return status;
}
