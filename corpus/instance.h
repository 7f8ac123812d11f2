/* instance.h - one corpus row made ready to verify or allocate: parsed IR, Problem, names. */
#ifndef RS_INSTANCE_H
#define RS_INSTANCE_H
#include "storage/corpus.h"
#include "verify/verify.h"

struct rs_sass_infer;

typedef struct {
  rs_instance row;   /* texts loaded */
  rs_module *m;
  const rs_func *f;
  rs_problem *p;
  rs_namemap names;  /* normalized -> original, from the stored name map */
  char **nm_norm, **nm_orig;
  struct rs_sass_infer *inferred; /* form sass: the rows of params' inferred_forms (NULL: none) */
} rs_loaded;

int rs_instance_load(rs_corpus *c, uint64_t i, rs_loaded *out, rs_err *e);
/* The second half of rs_instance_load, for a row already read (out->row): parse, Problem, names.
 * Touches no file, so a worker runs it off its main thread (HDF5 reads stay on that thread). */
int rs_instance_prepare(rs_loaded *out, rs_err *e);
/* The same from a file (MIR or PTX; first function unless `function` names one). */
int rs_file_load(const char *path, const char *function, rs_loaded *out, rs_err *e);
/* The instance a command names: `--corpus C --instance ID`, or a MIR/PTX file. */
int rs_load_named(const char *corpus, const char *instance, const char *file, const char *function, rs_loaded *out,
                  rs_err *e);
void rs_loaded_free(rs_loaded *l);

/* Instance filters "family=fa|sgemm,target=gfx90a,form=prera" (keys family, target, form, kind;
 * values joined by '|'; sample=K keeps about one kernel in K, on all its targets and forms),
 * shared by sweep and oracle. */
bool rs_filter_valid(const char *filter);
bool rs_filter_match(const char *filter, const rs_instance *in);

#endif
