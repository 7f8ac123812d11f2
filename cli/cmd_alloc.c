/* cmd_alloc.c - `regsweep alloc`: candidates from a model for one instance, as JSON lines. */
#include "cli/cli.h"
#include "corpus/instance.h"
#include "model/model.h"
#include "verify/verifier.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_usage_alloc(void) {
  puts("usage: regsweep alloc (FILE.mir|FILE.ptx | --corpus corpus.h5 --instance ID) --model SPEC\n"
       "                      [-n N] [--seed S] [--verifier native|z3|both|none] [--function NAME]\n"
       "\n"
       "Prints one JSON line per attempt: attempt, seed, answer, inference time, tokens, finish\n"
       "reason, and (unless --verifier none) the verdict, first diagnostic, registers used and\n"
       "occupancy. Models: builtin:chaitin[?free=1], builtin:sampled?temp=T (a synthetic baseline,\n"
       "not a model), builtin:truth, replay:FILE.jsonl, openai:URL?model=M (see docs/models.md).\n"
       "A summary on stderr compares registers used with the compiler's and the pressure bound.");
}

int rs_cmd_alloc(int argc, char **argv) {
  const char *corpus = NULL, *instance = NULL, *file = NULL, *spec = NULL, *vname = "native", *function = NULL;
  unsigned long n = 1, seed = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--corpus") && v) corpus = argv[++i];
    else if (!strcmp(a, "--instance") && v) instance = argv[++i];
    else if (!strcmp(a, "--model") && v) spec = argv[++i];
    else if (!strcmp(a, "-n") && v) n = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(a, "--seed") && v) seed = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(a, "--verifier") && v) vname = argv[++i];
    else if (!strcmp(a, "--function") && v) function = argv[++i];
    else if (a[0] != '-' && !file) file = a;
    else {
      fprintf(stderr, "regsweep alloc: unexpected argument '%s'\n", a);
      return 2;
    }
  }
  int vk = strcmp(vname, "none") ? rs_verifier_kind(vname) : -2;
  if (!spec || (!file == !corpus) || (corpus && !instance) || vk == -1 || n == 0 || n > 100000) {
    rs_usage_alloc();
    return 2;
  }
  rs_err e = {{0}};
  rs_loaded l;
  if (rs_load_named(corpus, instance, file, function, &l, &e)) {
    fprintf(stderr, "regsweep alloc: %s\n", e.msg);
    return 2;
  }
  rs_model *m = rs_model_open(spec, &e);
  if (!m) {
    fprintf(stderr, "regsweep alloc: %s\n", e.msg);
    rs_loaded_free(&l);
    return 2;
  }
  rs_verifier vf;
  if (vk >= 0 && rs_verifier_open(&vf, vk, l.p, 10000, &e)) {
    fprintf(stderr, "regsweep alloc: %s\n", e.msg);
    rs_model_close(m);
    rs_loaded_free(&l);
    return 2;
  }
  const char **vnames = rs_value_names(l.p, &l.names);
  rs_gen_input in = {l.row.id, l.p->tgt->name, l.p, l.row.norm, &l.names, vnames, l.row.truth, NULL, NULL, NULL, NULL};
  uint64_t *seeds = rs_xmalloc(sizeof *seeds * n);
  for (uint32_t k = 0; k < n; k++) seeds[k] = rs_attempt_seed(seed, l.row.id, spec, k);
  rs_gen *g = rs_xcalloc(n, sizeof *g);
  int status = 0;
  if (rs_model_generate(m, &in, 0, (uint32_t)n, seeds, g, &e)) {
    fprintf(stderr, "regsweep alloc: %s\n", e.msg);
    status = 2;
  }
  uint32_t passed = 0;
  unsigned best_used = 0;
  for (uint32_t k = 0; k < n && !status; k++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "attempt", k);
    char sbuf[32];
    snprintf(sbuf, sizeof sbuf, "%016llx", (unsigned long long)seeds[k]);
    cJSON_AddStringToObject(o, "seed", sbuf);
    if (g[k].infra) {
      cJSON_AddStringToObject(o, "verdict", "infra");
      cJSON_AddStringToObject(o, "error", g[k].error);
    } else {
      cJSON_AddStringToObject(o, "answer", g[k].text ? g[k].text : "");
      if (g[k].error[0]) cJSON_AddStringToObject(o, "note", g[k].error);
    }
    cJSON_AddNumberToObject(o, "infer_s", g[k].infer_s);
    cJSON_AddNumberToObject(o, "prompt_tokens", g[k].prompt_tokens);
    cJSON_AddNumberToObject(o, "completion_tokens", g[k].completion_tokens);
    cJSON_AddStringToObject(o, "finish", g[k].finish == RS_FINISH_LENGTH ? "length" : g[k].finish == RS_FINISH_ERROR ? "error" : "stop");
    if (vk >= 0 && !g[k].infra) {
      rs_candidate cand;
      rs_check_result r, z;
      const char *txt = g[k].text ? g[k].text : "";
      rs_verify_text(&vf, &l.names, txt, strlen(txt), &cand, &r, &z);
      cJSON_AddStringToObject(o, "verdict", rs_verdict_str(r.verdict));
      if (r.ndiag) cJSON_AddStringToObject(o, "diagnostic", r.diag[0]);
      cJSON_AddNumberToObject(o, "verify_s", r.seconds + z.seconds);
      if (r.verdict == RS_V_PASS) {
        passed++;
        cJSON *u = cJSON_AddObjectToObject(o, "registers_used");
        unsigned total = 0;
        for (uint32_t f = 0; f < l.p->tgt->nfiles && f < RS_MAX_FILES; f++)
          if (l.p->tgt->files[f].pressure) {
            cJSON_AddNumberToObject(u, l.p->tgt->files[f].name, r.used[f]);
            if (l.p->tgt->files[f].count >= 255) total += r.used[f];
          }
        cJSON_AddNumberToObject(o, "occupancy", r.occupancy);
        if (!best_used || total < best_used) best_used = total;
      }
      rs_candidate_free(&cand);
    }
    char *s = cJSON_PrintUnformatted(o);
    puts(s);
    cJSON_free(s);
    cJSON_Delete(o);
  }
  if (vk >= 0 && !status) {
    unsigned lb = 0, ref = 0;
    for (uint32_t f = 0; f < l.p->tgt->nfiles && f < RS_MAX_FILES; f++)
      if (l.p->tgt->files[f].count >= 255) {
        lb += l.p->maxp[f];
        ref += l.row.ref_regs[f];
      }
    if (l.p->maxp_flex > lb) lb = l.p->maxp_flex;
    fprintf(stderr, "alloc: %s: %u/%lu attempts pass; best vector/R registers used %u (compiler %u%s, pressure "
                    "lower bound %u)\n",
            l.row.id, passed, n, best_used, ref, corpus ? "" : " unknown for a file", lb);
  }
  for (uint32_t k = 0; k < n; k++) rs_gen_clear(&g[k]);
  free(g);
  free(seeds);
  free(vnames);
  if (vk >= 0) rs_verifier_close(&vf);
  rs_model_close(m);
  rs_loaded_free(&l);
  return status;
}
