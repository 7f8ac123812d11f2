/* test_verify.c - candidate parsing and the checkers on small hand-written MIR, one rule each,
 * with both verifiers (any disagreement fails the test). */
#include "front/front.h"
#include "check.h"
#include "corpus/instance.h"
#include "model/model.h"
#include "verify/verifier.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* Peak resident set of this process (kB). */
static long rss_kb(void) {
  struct rusage u;
  return getrusage(RUSAGE_SELF, &u) ? 0 : u.ru_maxrss;
}

/* %0 vreg_64: sub0 defined, %1 lives while only sub0 is live, then sub1 is defined; %2 is a
 * 32-bit value used with %0; %3 is an SGPR pair; $vcc is written while %4 is live. */
static const char *mir =
    "---\n"
    "name: rules\n"
    "tracksRegLiveness: true\n"
    "machineFunctionInfo:\n"
    "  stackPtrOffsetReg: '$sgpr32'\n"
    "body: |\n"
    "  bb.0:\n"
    "    liveins: $sgpr4_sgpr5\n"
    "    %3:sgpr_64 = COPY $sgpr4_sgpr5\n"
    "    %4:sreg_32 = S_MOV_B32 7\n"
    "    undef %0.sub0:vreg_64_align2 = V_MOV_B32_e32 1, implicit $exec\n"
    "    %1:vgpr_32 = V_MOV_B32_e32 2, implicit $exec\n"
    "    %2:vgpr_32 = V_ADD_U32_e32 killed %1, %0.sub0, implicit $exec\n"
    "    %0.sub1:vreg_64_align2 = V_MOV_B32_e32 3, implicit $exec\n"
    "    $vcc = S_MOV_B64 0\n"
    "    S_ENDPGM 0, implicit %0, implicit %2, implicit %3, implicit %4, implicit $vcc\n"
    "...\n";

typedef struct {
  const char *answer;
  rs_verdict want;
  rs_vkind kind; /* a kind that must be counted (ignored for pass) */
  bool wrapped;
} tcase;

static const tcase cases[] = {
    /* legal, including %1 on the dead lane sub1 of %0 (v1) */
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}", RS_V_PASS, RS_VK_JSON, false},
    {"{\"%0\":\"$vgpr0_vgpr1\",\"%1\":\"$vgpr1\",\"%2\":\"$vgpr2\",\"%3\":\"$sgpr0_sgpr1\",\"%4\":\"$sgpr2\"}", RS_V_PASS, RS_VK_JSON, false},
    {"Here is the allocation:\n```json\n{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}\n```\n",
     RS_V_PASS, RS_VK_JSON, true},
    /* dataflow */
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v0\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}", RS_V_DATAFLOW, RS_VK_CONFLICT, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v2\",\"%2\":\"v1\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}", RS_V_DATAFLOW, RS_VK_CONFLICT, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"vcc_lo\"}", RS_V_DATAFLOW, RS_VK_FIXED, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[2:3]\",\"%4\":\"s2\"}", RS_V_DATAFLOW, RS_VK_CONFLICT, false},
    /* the COPY kills $sgpr4_sgpr5: %3 may take the argument registers */
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[4:5]\",\"%4\":\"s2\"}", RS_V_PASS, RS_VK_JSON, false},
    /* hardware */
    {"{\"%0\":\"v[1:2]\",\"%1\":\"v3\",\"%2\":\"v4\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}", RS_V_HARDWARE, RS_VK_ALIGN, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"s3\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}", RS_V_HARDWARE, RS_VK_CLASS, false},
    {"{\"%0\":\"v0\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}", RS_V_HARDWARE, RS_VK_CLASS, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s102\"}", RS_V_HARDWARE, RS_VK_BUDGET, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s32\"}", RS_V_HARDWARE, RS_VK_RESERVED, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"a2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}", RS_V_HARDWARE, RS_VK_CLASS, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"exec_lo\"}", RS_V_HARDWARE, RS_VK_CLASS, false},
    /* syntax */
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\"}", RS_V_SYNTAX, RS_VK_MISSING, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\",\"%9\":\"v9\"}", RS_V_SYNTAX, RS_VK_UNKNOWN, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\",\"%4\":\"s3\"}", RS_V_SYNTAX, RS_VK_DUPLICATE, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"q2\"}", RS_V_SYNTAX, RS_VK_BADREG, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v99999999999999999999\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}", RS_V_SYNTAX, RS_VK_BADREG, false},
    {"{\"%0\":\"v[1:0]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}", RS_V_SYNTAX, RS_VK_BADREG, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":5}", RS_V_SYNTAX, RS_VK_BADREG, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"} and more", RS_V_SYNTAX, RS_VK_JSON, false},
    {"{\"%0\":\"v[0:1]\",\"%1\":\"v1\"", RS_V_SYNTAX, RS_VK_JSON, false},
    {"[\"v0\"]", RS_V_SYNTAX, RS_VK_JSON, true},
    {"", RS_V_SYNTAX, RS_VK_JSON, false},
    {"no json here", RS_V_SYNTAX, RS_VK_JSON, true},
    {"{\"%0\":{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"h\":{\"i\":{\"j\":{\"k\":{\"l\":{\"m\":{\"n\":{\"o\":{\"p\":1}}}}}}}}}}}}}}}}}",
     RS_V_SYNTAX, RS_VK_JSON, false},
    {"{\"%0\":\"v[0:1]\",\"\xff\xfe\":\"v1\"}", RS_V_SYNTAX, RS_VK_UNKNOWN, false},
};

/* --- real corpus instances: a register named past its file's end is hardware, not syntax --- */

enum { P_V32, P_S32, P_V64, P_A32, P_R32, P_R64, P_PRED, P_ANY };
typedef struct {
  const char *target; /* "gfx90a" or "sm_90" */
  int pick;           /* the kind of value whose register the answer replaces */
  const char *reg;    /* the replacement */
  rs_verdict want;
  rs_vkind kind;
} ccase;

static const ccase ccases[] = {
    {"gfx90a", P_V32, "v300", RS_V_HARDWARE, RS_VK_BUDGET},
    {"gfx90a", P_V32, "v256", RS_V_HARDWARE, RS_VK_BUDGET},
    {"gfx90a", P_V32, "$vgpr300", RS_V_HARDWARE, RS_VK_BUDGET},
    {"gfx90a", P_V32, "vgpr300", RS_V_HARDWARE, RS_VK_BUDGET},
    {"gfx90a", P_V32, "a260", RS_V_HARDWARE, RS_VK_CLASS}, /* a file the value may not use */
    {"gfx90a", P_V32, "v[300:301]", RS_V_HARDWARE, RS_VK_CLASS}, /* too wide for a vgpr_32 */
    {"gfx90a", P_A32, "a260", RS_V_HARDWARE, RS_VK_BUDGET}, /* a[260:...] for a wider value */
    {"gfx90a", P_S32, "s120", RS_V_HARDWARE, RS_VK_BUDGET},
    {"gfx90a", P_S32, "s106", RS_V_HARDWARE, RS_VK_BUDGET},
    {"gfx90a", P_V64, "v[300:301]", RS_V_HARDWARE, RS_VK_BUDGET},
    {"gfx90a", P_V64, "v[255:256]", RS_V_HARDWARE, RS_VK_BUDGET}, /* runs past the end */
    {"gfx90a", P_V64, "$vgpr300_vgpr301", RS_V_HARDWARE, RS_VK_BUDGET},
    {"gfx90a", P_V32, "q7", RS_V_SYNTAX, RS_VK_BADREG},
    {"gfx90a", P_V32, "v", RS_V_SYNTAX, RS_VK_BADREG},
    {"gfx90a", P_V32, "vx3", RS_V_SYNTAX, RS_VK_BADREG},
    {"gfx90a", P_V32, "v300x", RS_V_SYNTAX, RS_VK_BADREG},
    {"gfx90a", P_V32, "v100000", RS_V_SYNTAX, RS_VK_BADREG}, /* RS_BEYOND_MAX: not a name */
    {"gfx90a", P_V64, "v[301:300]", RS_V_SYNTAX, RS_VK_BADREG},
    {"gfx90a", P_V64, "$vgpr300_vgpr302", RS_V_SYNTAX, RS_VK_BADREG}, /* not a tuple */
    {"gfx90a", P_V64, "$vgpr300_sgpr301", RS_V_SYNTAX, RS_VK_BADREG},
    {"gfx90a", P_S32, "ttmp20", RS_V_SYNTAX, RS_VK_BADREG},
    {"sm_90", P_R32, "R300", RS_V_HARDWARE, RS_VK_BUDGET},
    {"sm_90", P_R32, "R256", RS_V_HARDWARE, RS_VK_BUDGET},
    {"sm_90", P_R32, "R[300:301]", RS_V_HARDWARE, RS_VK_CLASS},
    {"sm_90", P_R64, "R[300:301]", RS_V_HARDWARE, RS_VK_BUDGET},
    {"sm_90", P_R64, "R[255:256]", RS_V_HARDWARE, RS_VK_BUDGET},
    {"sm_90", P_PRED, "P9", RS_V_HARDWARE, RS_VK_BUDGET},
    {"sm_90", P_R32, "P9", RS_V_HARDWARE, RS_VK_CLASS}, /* a b32 value may not live in P */
    {"sm_90", P_R32, "q7", RS_V_SYNTAX, RS_VK_BADREG},
    {"sm_90", P_R32, "R", RS_V_SYNTAX, RS_VK_BADREG},
    {"sm_90", P_R32, "Rx3", RS_V_SYNTAX, RS_VK_BADREG},
    {"sm_90", P_R32, "r300", RS_V_SYNTAX, RS_VK_BADREG}, /* SASS spells R, not r */
};

static int file_named(const rs_target *t, const char *name) {
  for (uint32_t f = 0; f < t->nfiles; f++)
    if (!strcmp(t->files[f].name, name)) return (int)f;
  return -1;
}

static bool picks(const rs_problem *p, uint32_t v, int pick) {
  const rs_target *t = p->tgt;
  const rs_regclass *c = &t->classes[p->vars[v].cls];
  unsigned only = 0, width = 1;
  switch (pick) {
  case P_V32: only = 1u << file_named(t, "vgpr"); break;
  case P_S32: only = 1u << file_named(t, "sgpr"); break;
  case P_V64: only = 1u << file_named(t, "vgpr"), width = 2; break;
  case P_A32: return !c->half && (c->files >> file_named(t, "agpr") & 1); /* any width */
  case P_R32: only = 1u << file_named(t, "r"); break;
  case P_R64: only = 1u << file_named(t, "r"), width = 2; break;
  case P_PRED: /* predicates: P, or P and R where the model lets them spill to R */
    return c->width == 1 && !c->half && (c->files >> file_named(t, "p") & 1);
  }
  return c->files == only && c->width == width && !c->half;
}

/* One instance: LLVM's allocation (gfx90a) or builtin:chaitin's (NVIDIA, no ground truth) with
 * one value's register replaced per case that applies; both verifiers must agree. */
static void corpus_instance(rs_loaded *l, rs_model *chaitin, bool *done) {
  const rs_problem *p = l->p;
  const char **vn = rs_value_names(p, &l->names);
  rs_verifier vf;
  rs_err e = {{0}};
  CHECKF(rs_verifier_open(&vf, RS_VERIFIER_BOTH, p, 20000, &e) == 0, "%s", e.msg);
  char *base = NULL;
  if (l->row.truth) {
    base = strdup(l->row.truth);
  } else {
    rs_gen_input in = {l->row.id, l->row.target, p, l->row.norm, &l->names, vn, NULL, NULL, NULL, NULL, NULL};
    uint64_t seed = 1;
    rs_gen g;
    memset(&g, 0, sizeof g);
    CHECK(rs_model_generate(chaitin, &in, 0, 1, &seed, &g, &e) == 0);
    base = g.text ? strdup(g.text) : NULL;
    rs_gen_clear(&g);
  }
  rs_candidate c;
  rs_check_result r, z;
  CHECK(base != NULL);
  bool ok = base && rs_verify_text(&vf, &l->names, base, strlen(base), &c, &r, &z) && r.verdict == RS_V_PASS;
  CHECKF(ok, "%s: the unchanged answer is %s", l->row.id, rs_verdict_str(r.verdict));
  char *json = ok ? rs_assignment_json(p, vn, c.reg) : NULL; /* re-keyed by the names answers use */
  rs_candidate_free(&c);
  for (size_t i = 0; json && i < sizeof ccases / sizeof *ccases; i++) {
    const ccase *k = &ccases[i];
    if (done[i] || strcmp(k->target, l->row.target)) continue;
    uint32_t v = 0;
    while (v < p->nvars && !picks(p, v, k->pick)) v++;
    if (v == p->nvars) continue;
    char regtxt[32];
    unsigned w = p->tgt->classes[p->vars[v].cls].width;
    if (k->pick == P_A32 && w > 1) snprintf(regtxt, sizeof regtxt, "a[260:%u]", 260 + w - 1);
    else snprintf(regtxt, sizeof regtxt, "%s", k->reg);
    cJSON *o = cJSON_Parse(json);
    cJSON_ReplaceItemInObjectCaseSensitive(o, vn[v], cJSON_CreateString(regtxt));
    char *ans = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    bool agree = rs_verify_text(&vf, &l->names, ans, strlen(ans), &c, &r, &z);
    CHECKF(agree && r.verdict == k->want && r.counts[k->kind] && z.counts[k->kind],
           "%s: %s (%s) = %s: native %s, z3 %s, want %s/%s (%s | %s)", l->row.id, vn[v],
           p->tgt->classes[p->vars[v].cls].name, regtxt, rs_verdict_str(r.verdict), rs_verdict_str(z.verdict),
           rs_verdict_str(k->want), rs_vkind_str(k->kind), r.ndiag ? r.diag[0] : "", z.ndiag ? z.diag[0] : "");
    /* the diagnostics name the register as written (assembly spelling) */
    if (k->want == RS_V_HARDWARE && regtxt[0] != '$' && strncmp(regtxt, "vgpr", 4))
      CHECKF(r.ndiag && strstr(r.diag[0], regtxt) && z.ndiag && strstr(z.diag[0], regtxt), "%s: %s | %s", regtxt,
             r.ndiag ? r.diag[0] : "", z.ndiag ? z.diag[0] : "");
    rs_candidate_free(&c);
    cJSON_free(ans);
    done[i] = true;
  }
  free(json);
  free(base);
  free(vn);
  rs_verifier_close(&vf);
}

static void corpus_cases(void) {
  rs_err e = {{0}};
  rs_corpus *cp = rs_corpus_open("data/corpus-mini.h5", &e);
  CHECKF(cp != NULL, "%s", e.msg);
  if (!cp) return;
  rs_model *chaitin = rs_model_open("builtin:chaitin", &e);
  CHECK(chaitin != NULL);
  enum { N = sizeof ccases / sizeof *ccases };
  bool done[N] = {false};
  unsigned left = N;
  for (uint64_t i = 0; i < rs_corpus_count(cp) && left; i++) {
    rs_instance row;
    if (rs_corpus_get(cp, i, &row, 0, &e)) {
      CHECKF(0, "%s", e.msg);
      break;
    }
    /* small instances keep the sanitizer build quick; AMD answers are LLVM's own */
    bool want = !row.infeasible && row.nvregs < 700 && (!strcmp(row.target, "sm_90") || !row.truth_reason[0]);
    bool pending = false;
    for (size_t k = 0; k < N; k++) pending |= !done[k] && !strcmp(ccases[k].target, row.target);
    rs_instance_clear(&row);
    if (!want || !pending) continue;
    rs_loaded l;
    if (rs_instance_load(cp, i, &l, &e)) {
      CHECKF(0, "%s", e.msg);
      break;
    }
    corpus_instance(&l, chaitin, done);
    rs_loaded_free(&l);
    left = 0;
    for (size_t k = 0; k < N; k++) left += !done[k];
  }
  for (size_t k = 0; k < N; k++)
    CHECKF(done[k], "no corpus instance has a value for case %zu (%s %s)", k, ccases[k].target, ccases[k].reg);
  printf("registers past their file's end on corpus instances: %zu cases checked by both verifiers\n", (size_t)N - left);
  rs_model_close(chaitin);
  rs_corpus_close(cp, &e);
}

int main(int argc, char **argv) {
  rs_check_init(argc, argv);
  rs_err e = {{0}};
  rs_module *m = rs_module_parse("rules.mir", strdup(mir), strlen(mir), RS_SRC_MIR, "gfx90a", &e);
  CHECKF(m != NULL, "%s", e.msg);
  if (!m) return rs_check_done("test_verify");
  rs_problem *p = rs_problem_build(m->funcs[0], &e);
  rs_verifier vf;
  CHECKF(rs_verifier_open(&vf, getenv("NATIVE_ONLY") ? RS_VERIFIER_NATIVE : RS_VERIFIER_BOTH, p, 5000, &e) == 0, "%s", e.msg);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    rs_candidate c;
    rs_check_result r, z;
    bool agree = rs_verify_text(&vf, NULL, cases[i].answer, strlen(cases[i].answer), &c, &r, &z);
    CHECKF(agree, "case %zu: native %s, z3 %s", i, rs_verdict_str(r.verdict), rs_verdict_str(z.verdict));
    CHECKF(r.verdict == cases[i].want, "case %zu: want %s, got %s (%s)", i, rs_verdict_str(cases[i].want),
           rs_verdict_str(r.verdict), r.ndiag ? r.diag[0] : "");
    if (cases[i].want != RS_V_PASS)
      CHECKF(r.counts[cases[i].kind] > 0 && r.ndiag > 0, "case %zu: kind %s not counted", i, rs_vkind_str(cases[i].kind));
    if (r.verdict != RS_V_SYNTAX) CHECKF(c.wrapped == cases[i].wrapped, "case %zu: wrapped %d", i, c.wrapped);
    if (cases[i].want == RS_V_PASS) CHECK(r.used[2] == 3 && r.occupancy == 8);
    rs_candidate_free(&c);
  }
  /* normalized names resolve through a name map */
  const char *norm[] = {"v0", "v1"}, *orig[] = {"%0", "%2"};
  rs_namemap nm = {norm, orig, 2};
  const char *ans = "{\"v0\":\"v[0:1]\",\"%1\":\"v1\",\"v1\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}";
  rs_candidate c;
  rs_check_result r;
  rs_verify_text(&vf, &nm, ans, strlen(ans), &c, &r, NULL);
  CHECKF(r.verdict == RS_V_PASS, "normalized names: %s", r.ndiag ? r.diag[0] : "");
  rs_candidate_free(&c);
  ans = "{\"v0\":\"v[0:1]\",\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"v1\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}";
  rs_verify_text(&vf, &nm, ans, strlen(ans), &c, &r, NULL);
  CHECKF(r.verdict == RS_V_SYNTAX && r.counts[RS_VK_DUPLICATE], "both spellings of one value");
  rs_candidate_free(&c);
  /* adversarial answers (issue: 10 MB bodies, 10^6 keys, deep nesting, NUL bytes, invalid UTF-8,
   * overflowing register numbers): each is `syntax`, none crashes, memory stays bounded */
  size_t big = 12u << 20;
  char *b = malloc(big + 1);
  memset(b, ' ', big); /* touched before the RSS baseline is taken */
  long rss0 = rss_kb();
  size_t ten = 10u << 20;
  b[0] = '{';
  b[ten - 1] = '}';
  b[ten] = 0;
  rs_verify_text(&vf, NULL, b, ten, &c, &r, NULL);
  CHECKF(r.verdict == RS_V_SYNTAX && r.counts[RS_VK_JSON], "10 MB body: %s", r.ndiag ? r.diag[0] : "");
  rs_candidate_free(&c);
  /* 10^6 distinct keys (~11 MB: over the answer limit) and as many as fit under it (~380k keys) */
  size_t k = 0;
  b[k++] = '{';
  for (int i = 0; i < 1000000; i++) k += (size_t)sprintf(b + k, "\"k%d\":1,", i);
  b[k - 1] = '}';
  rs_verify_text(&vf, NULL, b, k, &c, &r, NULL);
  CHECKF(r.verdict == RS_V_SYNTAX && r.counts[RS_VK_JSON], "10^6 keys (%zu bytes)", k);
  rs_candidate_free(&c);
  k = 0;
  b[k++] = '{';
  for (int i = 0; k + 16 < RS_CAND_MAX_BYTES; i++) k += (size_t)sprintf(b + k, "\"k%d\":1,", i);
  b[k - 1] = '}';
  rs_verify_text(&vf, NULL, b, k, &c, &r, NULL);
  CHECKF(r.verdict == RS_V_SYNTAX && (r.counts[RS_VK_UNKNOWN] || r.counts[RS_VK_BADREG]), "keys up to the limit");
  rs_candidate_free(&c);
  /* 100,000 levels of nesting, inside an object and bare */
  k = 0;
  b[k++] = '{';
  k += (size_t)sprintf(b + k, "\"%%0\":");
  for (int i = 0; i < 100000; i++) b[k++] = '[';
  for (int i = 0; i < 100000; i++) b[k++] = ']';
  b[k++] = '}';
  rs_verify_text(&vf, NULL, b, k, &c, &r, NULL);
  CHECKF(r.verdict == RS_V_SYNTAX && r.counts[RS_VK_JSON], "deep nesting");
  rs_candidate_free(&c);
  rs_verify_text(&vf, NULL, b + 6, 200000, &c, &r, NULL);
  CHECKF(r.verdict == RS_V_SYNTAX && r.counts[RS_VK_JSON], "deep bare array");
  rs_candidate_free(&c);
  memcpy(b, "{\"%0\":\"v\0\"}", 11);
  rs_verify_text(&vf, NULL, b, 11, &c, &r, NULL);
  CHECK(r.verdict == RS_V_SYNTAX && r.counts[RS_VK_JSON]);
  rs_candidate_free(&c);
  static const char *const bad_values[] = {
      "{\"%0\":\"v[0:1]\",\"%1\":\"v\xff\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}",          /* invalid UTF-8 */
      "{\"%0\":\"v[0:1]\",\"%1\":\"v\xc3\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}",          /* truncated UTF-8 */
      "{\"%0\":\"v[4294967295:4294967296]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s2\"}",
      "{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[18446744073709551616:18446744073709551617]\",\"%4\":\"s2\"}",
      "{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s-1\"}",
      "{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s1e9\"}",
      "{\"%0\":\"v[0:1]\",\"%1\":\"v1\",\"%2\":\"v2\",\"%3\":\"s[0:1]\",\"%4\":\"s\\u0000\"}",
  };
  for (size_t i = 0; i < sizeof bad_values / sizeof *bad_values; i++) {
    rs_verify_text(&vf, NULL, bad_values[i], strlen(bad_values[i]), &c, &r, NULL);
    CHECKF(r.verdict == RS_V_SYNTAX && r.counts[RS_VK_BADREG], "bad register value %zu: verdict %d", i, r.verdict);
    rs_candidate_free(&c);
  }
  /* bounded: what the checks above kept at their peak, beyond the 12 MB buffer (cJSON's tree of
   * the ~4 MB answer under the limit is the largest). ASan's quarantine keeps freed memory, so
   * the bound is checked in the plain build only. */
  long grew = rss_kb() - rss0;
#if !defined(__SANITIZE_ADDRESS__)
  CHECKF(grew < 128 * 1024, "peak memory grew by %ld kB", grew);
#endif
  printf("adversarial answers: peak RSS +%ld kB\n", grew);
  free(b);
  CHECK(vf.disagreements == 0);
  rs_verifier_close(&vf);
  rs_problem_free(p);
  rs_module_free(m);
  corpus_cases();
  return rs_check_done("test_verify");
}
