/* test_verify.c - candidate parsing and the checkers on small hand-written MIR, one rule each,
 * with both verifiers (any disagreement fails the test). */
#include "check.h"
#include "verify/verifier.h"
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
  return rs_check_done("test_verify");
}
