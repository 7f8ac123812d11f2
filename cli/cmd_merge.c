/* cmd_merge.c - `regsweep corpus merge`: corpora built or imported apart into one (corpus/merge.h). */
#include "cli/cli.h"
#include "corpus/merge.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage =
    "usage: regsweep corpus merge --out OUT.h5 IN.h5 IN2.h5 ...\n"
    "  The union of the inputs' rows, failures and attributes. A later input wins on the same instance\n"
    "  id and the same build failure (a piece re-built replaces the old one); rows with the IR hash,\n"
    "  target and form of one already written are dropped as duplicates. OUT may be one of the inputs.\n";

int rs_cmd_corpus_merge(int argc, char **argv) {
  const char *out = NULL;
  const char **in = rs_xcalloc((size_t)argc, sizeof *in);
  uint32_t n = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      fputs(usage, stdout);
      free(in);
      return 0;
    }
    if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
    else if (argv[i][0] == '-') {
      fprintf(stderr, "regsweep corpus merge: unknown option '%s'\n%s", argv[i], usage);
      free(in);
      return 2;
    } else in[n++] = argv[i];
  }
  if (!out || !n) {
    fprintf(stderr, "regsweep corpus merge: %s\n%s", !out ? "--out is required" : "which corpora?", usage);
    free(in);
    return 2;
  }
  rs_merge_stats st;
  rs_err e = {{0}};
  int rc = rs_corpus_merge(in, n, out, &st, &e);
  free(in);
  if (rc) {
    fprintf(stderr, "regsweep corpus merge: %s\n", e.msg);
    return 1;
  }
  fprintf(stderr,
          "merge: %s: %" PRIu64 " instances (%" PRIu64 " with ground truth), %" PRIu64 " build failures; of %" PRIu64
          " rows read %" PRIu64 " replaced by a later input, %" PRIu64 " duplicates dropped\n",
          out, st.kept, st.truths, st.failures, st.rows, st.replaced, st.duplicates);
  return 0;
}
