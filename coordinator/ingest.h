/* ingest.h - `sweep --ingest DIR --out RUN`: the command line of a resume of RUN whose batch:
 * model reads its answers from DIR (coordinator/ingest.c). */
#ifndef RS_INGEST_H
#define RS_INGEST_H
#include "util/util.h"

/* The sweep's argument vector for ingesting the batch results in batch_dir into run_dir: the
 * options run_dir/config.json was made with (corpus, every model, samples, until-pass, split,
 * filter, seed, verifier, block, keep, feedback), each batch: model pointed at batch_dir, and
 * --resume, followed by the caller's own arguments (argv[1..argc-1]) without --ingest and its
 * value. *nout gets the count; NULL with e when the run has no config or no batch: model. Free
 * with rs_ingest_argv_free. */
char **rs_ingest_argv(const char *run_dir, const char *batch_dir, int argc, char **argv, int *nout, rs_err *e);
void rs_ingest_argv_free(char **v, int n);

#endif
