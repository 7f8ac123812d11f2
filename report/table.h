/* table.h - per-group results of a sweep: the table printed at the end of a sweep and by
 * `regsweep report` (one implementation for both; docs/report.md). */
#ifndef RS_TABLE_H
#define RS_TABLE_H
#include "report/bootstrap.h"
#include "storage/run.h"
#include <stdio.h>

#define RS_NK 6 /* pass@k for k in {1,5,10,20,50,100}, k <= samples */
extern const uint32_t rs_table_ks[RS_NK];

/* One (instance, model) pair's outcome, accumulated from attempt rows. */
typedef struct {
  char family[32], target[16], form[16];
  uint64_t id_hash;    /* hash of the instance id: pairs the same instance across runs */
  uint32_t inst_index;
  uint16_t model;      /* variant: model index + the run's model_base */
  uint32_t n;          /* attempts that reached the verifier (infra excluded) */
  uint32_t c;          /* passing attempts */
  int32_t first_pass;  /* attempt index of the first pass, -1 if none */
  int32_t first_infra; /* attempt index of the first infra attempt, -1 if none */
  int8_t greedy;       /* attempt 0: 1 pass, 0 fail, -1 absent/infra */
  uint32_t infra;
  uint32_t fails[6];   /* failing attempts by verdict (rs_verdict indices) */
  uint32_t best_used[RS_RUN_NFILES]; /* fewest registers (file 0 first) among passes */
  uint32_t best_occ;   /* best occupancy among passes */
  /* from the corpus (has_ref 0 when the corpus could not be read) */
  uint8_t has_ref, infeasible, split; /* split: rs_split, 255 unknown */
  uint8_t inferred;    /* the row was read with forms inferred from nvdisasm -plr (params) */
  uint32_t ref_regs[RS_RUN_NFILES], maxp[RS_RUN_NFILES], ref_occ;
} rs_outcome;

typedef struct {
  char *name;          /* owned */
  uint32_t samples;
  bool until_pass;
} rs_variant;

typedef struct {
  rs_outcome *o;
  uint32_t n, cap;
  const char **models; /* model specs, indexed by rs_outcome.model (when var is empty) */
  uint32_t nmodels;
  uint32_t samples;    /* attempts per instance requested */
  bool until_pass;
  /* several runs in one result set (rs_results_load_run fills these; owned) */
  rs_variant *var;
  uint32_t nvar, varcap;
  uint16_t model_base; /* added to the rows' model index while loading */
  /* latencies of non-infra attempts, for quantiles: 12 bytes a row */
  float *lat;          /* infer_s, verify_s pairs */
  uint32_t *lat_o;     /* outcome index of each pair */
  uint64_t nlat, latcap;
  bool no_corpus;      /* skip the corpus lookup (registers, feasibility, split) */
} rs_results;

/* Accumulate the attempt rows of a run file (rows of one pair may be anywhere). Looks up the
 * corpus named by the run's "corpus" attribute for per-instance facts when it can be read. */
int rs_results_load(rs_results *r, rs_runfile *f, rs_err *e);
/* Same, for a run read on its own (the report): variants, samples and until_pass come from the
 * run's config attribute; variant names are "label:model" when label is not NULL. */
int rs_results_load_run(rs_results *r, rs_runfile *f, const char *label, rs_err *e);
void rs_results_free(rs_results *r);
const char *rs_results_model(const rs_results *r, uint32_t m);
uint32_t rs_results_samples(const rs_results *r, uint32_t m);
bool rs_results_until(const rs_results *r, uint32_t m);

/* Grouping keys for --by. */
enum { RS_BY_FAMILY = 1, RS_BY_TARGET = 2, RS_BY_FORM = 4, RS_BY_MODEL = 8, RS_BY_SPLIT = 16 };
#define RS_BY_DEFAULT (RS_BY_FAMILY | RS_BY_TARGET | RS_BY_FORM | RS_BY_MODEL)
/* Parse "family,target,..." into a mask; -1 on an unknown key. */
int rs_by_parse(const char *s);
/* "family/target/..." label of an outcome's group under mask `by` (buf of n bytes). */
const char *rs_group_label(const rs_outcome *o, unsigned by, const rs_results *r, char *buf, size_t n);
int rs_group_cmp(const rs_outcome *a, const rs_outcome *b, unsigned by);

typedef struct { double mean, p50, p95, p99, max; uint64_t n; } rs_latstat;

/* Everything reported for one group. Metrics are over its feasible instances (all instances
 * when the corpus is unknown). */
typedef struct {
  const rs_outcome *key; /* a member: its keys under `by` name the group */
  uint32_t inst, feasible;
  uint32_t samples;      /* smallest requested samples among the group's variants */
  bool until_pass;       /* any until-pass variant in the group */
  rs_ci greedy;          /* attempt-0 pass rate */
  rs_ci pk[RS_NK];       /* pass@k (until-pass: passed within k attempts); n = 0 when k > samples */
  rs_ci anyk[RS_NK];     /* observed: one of the first k attempts passed (Table 2's Pass@k) */
  rs_ci solved;          /* instances with a pass (until-pass: within budget) */
  uint32_t nsolved, maxatt;
  double avgatt;         /* mean attempts to first pass over solved instances */
  uint64_t fails[6], nfail, infra, nattempts;
  rs_latstat lat[2];     /* inference, verification */
  /* quality of the best passing attempt, file 0, over solved instances with corpus facts */
  uint32_t qn, q_le_ref, q_occ_gain, q_occ_loss;
  double q_dref, q_dlb, q_docc; /* mean used-ref, used-lower bound, occupancy-ref occupancy */
} rs_group;

/* Group r's outcomes by `by` (sorted by key) and compute each group's numbers; bootstrap
 * seeded with `seed`. Sorts r->o in place. Returns the count; *out malloc'd. */
uint32_t rs_results_group(rs_results *r, unsigned by, uint64_t seed, rs_group **out);

/* Sort r->o by group key (then instance, variant), keeping the latency rows attached. */
void rs_results_sort(rs_results *r, unsigned by);

enum { RS_FMT_MD, RS_FMT_CSV, RS_FMT_JSON };
struct cJSON;
/* The groups as a JSON array (caller deletes), for documents that hold more than the table. */
struct cJSON *rs_groups_json(const rs_results *r, const rs_group *g, uint32_t n, unsigned by);
void rs_groups_print(const rs_results *r, const rs_group *g, uint32_t n, unsigned by, int fmt, FILE *out);

/* The end-of-sweep summary: rs_results_group + rs_groups_print (markdown, default keys). */
void rs_results_print(rs_results *r, FILE *out);

/* Registers of the files that bound occupancy (VGPR + AGPR on AMD, R on NVIDIA). */
uint32_t rs_occ_regs(const char *target, const uint32_t *v);

#endif
