/* cmd_attempts.c - `regsweep attempts RUN_DIR|run.h5`: the attempt table as TSV, without the
 * fields that legitimately differ between identical runs (timings, worker rank) unless
 * --timings is given, so two runs can be compared with diff. */
#include "cli/cli.h"
#include "report/export.h"
#include "storage/corpus.h"
#include "storage/run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void rs_usage_attempts(void) {
  puts("usage: regsweep attempts RUN_DIR|run.h5 [--timings] [--texts] [--provenance]\n"
       "       regsweep attempts RUN_DIR|run.h5 --export sft|dpo|feedback -o OUT.jsonl [--per-prompt K]\n"
       "                [--split train|test] [--corpus C.h5] [--holdout-arch T]\n"
       "\n"
       "One line per attempt: instance, model, attempt, seed, verdict, violation counts, registers\n"
       "used, occupancy, tokens, finish, and a hash of the candidate text. --timings adds inference\n"
       "and verification seconds and the worker rank; --texts the first diagnostic and the candidate\n"
       "(newlines, tabs and backslashes escaped as \\n, \\t and \\\\: one line per attempt);\n"
       "--provenance prints the run's attributes.\n"
       "--export writes training data from the attempts (docs/reward.md): sft, passing answers best\n"
       "register count first; dpo, (chosen passing, rejected failing with its category) pairs; feedback,\n"
       "(prompt, failed answer, diagnostics, passing answer). Only instances of --split (default train;\n"
       "the run's --holdout-arch split when it had one), at most K lines each (default 4), every answer\n"
       "verified again, provenance on each line. Needs the answers' texts: sweep --keep all.");
}

/* A text as one TSV field: a model's newlines and tabs (and the backslash) escaped as \n, \t,
 * \r and \\, so each attempt stays one line and two runs diff line by line. */
static void put_escaped(const char *s) {
  for (; s && *s; s++) {
    if (*s == '\n') fputs("\\n", stdout);
    else if (*s == '\t') fputs("\\t", stdout);
    else if (*s == '\r') fputs("\\r", stdout);
    else if (*s == '\\') fputs("\\\\", stdout);
    else putchar(*s);
  }
}

static int export_(const char *path, const char *kind, const char *out, const char *corpus, const char *holdout,
                   const char *split, unsigned long per_prompt) {
  rs_export_opts o = {path, corpus, holdout, rs_export_kind(kind), RS_SPLIT_TRAIN, (unsigned)per_prompt, NULL};
  if (o.kind < 0 || !out || !per_prompt || (strcmp(split, "train") && strcmp(split, "test"))) {
    fprintf(stderr, "regsweep attempts: --export sft|dpo|feedback -o OUT.jsonl [--per-prompt K>0] [--split train|test]\n");
    return 2;
  }
  o.split = strcmp(split, "test") ? RS_SPLIT_TRAIN : RS_SPLIT_TEST;
  o.out = fopen(out, "w");
  if (!o.out) {
    perror(out);
    return 2;
  }
  rs_err e = {{0}};
  rs_export_stats st;
  double t0 = rs_now();
  int rc = rs_export_attempts(&o, &st, &e);
  if (fclose(o.out) && !rc) rc = rs_errf(&e, out, 0, "write error");
  if (rc) {
    fprintf(stderr, "regsweep attempts: %s\n", e.msg);
    remove(out); /* nothing half-written is left behind */
    return 2;
  }
  fprintf(stderr,
          "attempts: %s: %u lines (%llu bytes) to %s in %.2f s; %u attempts over %u instances, %u of them not in the %s "
          "split, %u without a passing answer; answers left out: %u without text (sweep --keep all keeps them), %u whose "
          "verdict changed when verified again\n",
          kind, st.lines, (unsigned long long)st.bytes, out, rs_now() - t0, st.attempts, st.instances, st.other_split,
          split, st.no_pass, st.no_text, st.mismatch);
  return 0;
}

int rs_cmd_attempts(int argc, char **argv) {
  const char *path = NULL, *export = NULL, *out = NULL, *corpus = NULL, *holdout = NULL, *split = "train";
  unsigned long per_prompt = 4;
  bool timings = false, prov = false, texts = false;
  for (int i = 1; i < argc; i++) {
    bool more = i + 1 < argc;
    if (!strcmp(argv[i], "--export") && more) export = argv[++i];
    else if (!strcmp(argv[i], "-o") && more) out = argv[++i];
    else if (!strcmp(argv[i], "--corpus") && more) corpus = argv[++i];
    else if (!strcmp(argv[i], "--holdout-arch") && more) holdout = argv[++i];
    else if (!strcmp(argv[i], "--split") && more) split = argv[++i];
    else if (!strcmp(argv[i], "--per-prompt") && more) per_prompt = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--timings")) timings = true;
    else if (!strcmp(argv[i], "--provenance")) prov = true;
    else if (!strcmp(argv[i], "--texts")) texts = true;
    else if (argv[i][0] != '-' && !path) path = argv[i];
    else {
      rs_usage_attempts();
      return 2;
    }
  }
  if (!path) {
    rs_usage_attempts();
    return 2;
  }
  char buf[1200];
  struct stat sb;
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    snprintf(buf, sizeof buf, "%s/run.h5", path);
    path = buf;
  }
  rs_err e = {{0}};
  if (export) return export_(path, export, out, corpus, holdout, split, per_prompt);
  rs_runfile *f = rs_runfile_open(path, &e);
  if (!f) {
    fprintf(stderr, "regsweep attempts: %s\n", e.msg);
    return 2;
  }
  static const char *const verdicts[] = {"pass", "syntax", "dataflow", "hardware", "timeout", "infra"};
  if (prov) {
    static const char *const keys[] = {"corpus", "corpus_hash", "models", "code_version", "ranks", "bindings", "start", "end",
                                       "this_start", "window", "config", "model_servers"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
      char *v = rs_runfile_get_attr(f, keys[k]);
      printf("%s: %s\n", keys[k], v ? v : "");
      free(v);
    }
  }
  int rc = 0;
  for (uint64_t i = 0; i < rs_runfile_count(f) && !prov; i++) {
    rs_attempt a;
    if ((rc = rs_runfile_get(f, i, &a, 1, &e))) break;
    printf("%s\t%u\t%u\t%016llx\t%s\t", a.instance, a.model, a.attempt, (unsigned long long)a.seed,
           a.verdict < 6 ? verdicts[a.verdict] : "?");
    for (int k = 0; k < RS_RUN_NKINDS; k++) printf("%s%u", k ? "," : "", a.counts[k]);
    printf("\t");
    for (int k = 0; k < RS_RUN_NFILES; k++) printf("%s%u", k ? "," : "", a.used[k]);
    printf("\t%u\t%u\t%u\t%u\t%016llx", a.occupancy, a.prompt_tokens, a.completion_tokens, a.finish,
           (unsigned long long)(a.candidate ? rs_hash_bytes(a.candidate, strlen(a.candidate), 0) : 0));
    if (timings) printf("\t%.6f\t%.6f\t%u", a.infer_s, a.verify_s, a.rank);
    if (texts) {
      printf("\t");
      put_escaped(a.diag);
      printf("\t");
      put_escaped(a.candidate);
    }
    printf("\n");
    rs_attempt_clear(&a);
  }
  if (rc) fprintf(stderr, "regsweep attempts: %s\n", e.msg);
  rs_runfile_close(f, &e);
  return rc ? 2 : 0;
}
