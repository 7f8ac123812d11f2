/* test_attempts_export.c - `regsweep attempts RUN --export sft|dpo|feedback` on a small sweep of
 * the mini corpus with builtin:sampled (a synthetic baseline, not a model), both splits swept:
 * each export has lines, none of a test-split instance (nor, with --holdout-arch, of the held-out
 * architecture) in a training file, every answer judged as the line says by the verifier, SFT
 * lines best register count first, provenance on each line. */
#include "check.h"
#include "corpus/instance.h"
#include "verify/verifier.h"
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *corpus = "data/corpus-mini.h5";

/* The instance last loaded (lines come grouped by instance): loading is most of a check's time. */
typedef struct {
  char id[160];
  rs_loaded l;
  bool ok;
} cache;
static void cache_drop(cache *c) {
  if (c->ok) rs_loaded_free(&c->l);
  c->ok = false;
  c->id[0] = 0;
}

static const char *verdict_of(cache *ch, const char *id, const char *text, unsigned *regs) {
  rs_err e = {{0}};
  if (!ch->ok || strcmp(ch->id, id)) {
    cache_drop(ch);
    if (rs_load_named(corpus, id, NULL, NULL, &ch->l, &e)) return "(unloadable)";
    ch->ok = true;
    snprintf(ch->id, sizeof ch->id, "%s", id);
  }
  rs_loaded l = ch->l;
  rs_verifier vf;
  rs_verifier_open(&vf, RS_VERIFIER_NATIVE, l.p, 0, &e);
  rs_candidate c;
  rs_check_result r;
  rs_verify_text(&vf, &l.names, text, strlen(text), &c, &r, NULL);
  const char *v = rs_verdict_str(r.verdict);
  *regs = 0;
  for (uint32_t f = 0; f < l.p->tgt->nfiles && f < RS_MAX_FILES; f++)
    if (l.p->tgt->files[f].pressure) *regs += r.used[f];
  rs_candidate_free(&c);
  rs_verifier_close(&vf);
  return v;
}

static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Check one export file; returns its line count. want_split: "train" or "test"; not_target: a
 * held-out architecture none of the lines may have (or NULL). */
static unsigned check_file(cache *ch, rs_corpus *c, const char *path, const char *kind, const char *want_split, const char *holdout) {
  size_t len;
  rs_err e = {{0}};
  char *t = rs_read_file(path, &len, &e);
  CHECKF(t != NULL, "%s: %s", path, e.msg);
  if (!t) return 0;
  unsigned lines = 0, last_regs = 0;
  char last_inst[160] = "";
  for (char *p = t, *nl; p && *p; p = nl ? nl + 1 : NULL) {
    nl = strchr(p, '\n');
    if (nl) *nl = 0;
    cJSON *o = cJSON_Parse(p);
    CHECK(o != NULL);
    if (!o) continue;
    lines++;
    const char *id = str(o, "instance"), *prompt = str(o, "prompt");
    CHECK(id && prompt && prompt[0]);
    int64_t row = id ? rs_corpus_find(c, id, &e) : -1;
    CHECK(row >= 0);
    if (row >= 0) {
      rs_instance in;
      rs_corpus_get(c, (uint64_t)row, &in, 1, &e);
      const char *split = rs_instance_split(&in, holdout) == RS_SPLIT_TEST ? "test" : "train";
      CHECKF(!strcmp(split, want_split), "%s: %s is a %s instance", path, id, split);
      if (holdout) CHECKF(strcmp(in.target, holdout), "%s: %s is of the held-out %s", path, id, holdout);
      CHECK(in.norm && !strcmp(in.norm, prompt)); /* the corpus export's prompt */
      rs_instance_clear(&in);
    }
    const cJSON *pv = cJSON_GetObjectItemCaseSensitive(o, "provenance");
    unsigned regs = 0;
    if (!strcmp(kind, "sft")) {
      CHECK(!strcmp(verdict_of(ch, id, str(o, "completion"), &regs), "pass"));
      CHECK(str(pv, "run") && str(pv, "corpus") && str(pv, "model") && str(pv, "seed") &&
            !strcmp(str(pv, "split"), want_split));
      CHECK(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(pv, "attempt")));
      if (!strcmp(last_inst, id)) CHECKF(regs >= last_regs, "sft %s: rank order by registers (%u after %u)", id, regs, last_regs);
      snprintf(last_inst, sizeof last_inst, "%s", id);
      last_regs = regs;
    } else {
      bool dpo = !strcmp(kind, "dpo");
      const char *good = str(o, dpo ? "chosen" : "passing"), *bad = str(o, dpo ? "rejected" : "failed");
      const char *cat = str(o, dpo ? "rejected_category" : "category");
      const char *diag = str(o, dpo ? "rejected_diagnostics" : "diagnostics");
      CHECK(good && bad && cat && diag && diag[0]);
      if (good && bad && cat) {
        CHECK(!strcmp(verdict_of(ch, id, good, &regs), "pass"));
        const char *v = verdict_of(ch, id, bad, &regs);
        CHECKF(!strcmp(v, cat) && strcmp(v, "pass"), "%s %s: rejected is %s, the line says %s", kind, id, v, cat);
      }
      const cJSON *a = cJSON_GetObjectItemCaseSensitive(pv, dpo ? "chosen" : "passing"),
                  *b = cJSON_GetObjectItemCaseSensitive(pv, dpo ? "rejected" : "failed");
      CHECK(str(a, "model") && str(b, "seed") && !strcmp(str(b, "split"), want_split));
    }
    cJSON_Delete(o);
  }
  free(t);
  return lines;
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  char dir[] = "/tmp/rs_export_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char cmd[2048], out[16384];
  /* RS_TEST_QUICK (the sanitizer build): fewer kernels and samples, the same checks */
  cache ch;
  memset(&ch, 0, sizeof ch);
  bool quick = getenv("RS_TEST_QUICK") && !strcmp(getenv("RS_TEST_QUICK"), "1");
  /* both splits swept, every answer kept: the export must pick the train instances itself */
  snprintf(cmd, sizeof cmd,
           "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0 '%s' sweep --corpus %s "
           "--model 'builtin:sampled?temp=0.8' --filter '%s' --samples %d --split all --keep all --out %s/run",
           rs_check_cli, corpus, quick ? "family=sgemm,target=gfx90a|sm_89" : "family=sgemm|reduce,target=gfx90a|gfx1100|sm_89",
           quick ? 4 : 6, dir);
  CHECKF(rs_check_run(cmd, out, sizeof out) == 0, "sweep: %s", out);
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(corpus, &e);
  CHECK(c != NULL);
  const char *kinds[] = {"sft", "dpo", "feedback"};
  for (int k = 0; k < 3 && c; k++) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s.jsonl", dir, kinds[k]);
    snprintf(cmd, sizeof cmd, "'%s' attempts %s/run --export %s -o %s", rs_check_cli, dir, kinds[k], path);
    CHECKF(rs_check_run(cmd, out, sizeof out) == 0, "export %s: %s", kinds[k], out);
    CHECKF(strstr(out, "not in the train split") && !strstr(out, " 0 of them not in the train split"),
           "the run has test instances the export left out: %s", out);
    unsigned n = check_file(&ch, c, path, kinds[k], "train", NULL);
    CHECKF(n >= (quick ? 2u : 5u), "%s: %u lines", kinds[k], n);
  }
  if (c) {
    /* the test split on request (an evaluation file), and the unseen-architecture split */
    char path[256];
    snprintf(path, sizeof path, "%s/dpo-test.jsonl", dir);
    snprintf(cmd, sizeof cmd, "'%s' attempts %s/run --export dpo --split test -o %s", rs_check_cli, dir, path);
    CHECKF(rs_check_run(cmd, out, sizeof out) == 0, "export test split: %s", out);
    check_file(&ch, c, path, "dpo", "test", NULL);
    snprintf(path, sizeof path, "%s/sft-holdout.jsonl", dir);
    snprintf(cmd, sizeof cmd, "'%s' attempts %s/run --export sft --holdout-arch gfx90a --per-prompt 2 -o %s", rs_check_cli,
             dir, path);
    CHECKF(rs_check_run(cmd, out, sizeof out) == 0, "export holdout: %s", out);
    CHECK(check_file(&ch, c, path, "sft", "train", "gfx90a") > 0);
    rs_corpus_close(c, NULL);
  }
  /* bad input: an unknown kind, a missing -o, a run that is not one */
  snprintf(cmd, sizeof cmd, "'%s' attempts %s/run --export rlhf -o %s/x.jsonl", rs_check_cli, dir, dir);
  CHECK(rs_check_run(cmd, out, sizeof out) == 2);
  snprintf(cmd, sizeof cmd, "'%s' attempts %s/run --export sft", rs_check_cli, dir);
  CHECK(rs_check_run(cmd, out, sizeof out) == 2);
  snprintf(cmd, sizeof cmd, "'%s' attempts %s/nothing --export sft -o %s/y.jsonl", rs_check_cli, dir, dir);
  char ypath[64];
  snprintf(ypath, sizeof ypath, "%s/y.jsonl", dir);
  CHECK(rs_check_run(cmd, out, sizeof out) == 2 && access(ypath, F_OK) != 0); /* nothing half-written left */
  cache_drop(&ch);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(rs_check_run(cmd, out, sizeof out) == 0);
  return rs_check_done("test_attempts_export");
}
