/* cmd_corpus.c - `regsweep corpus build|info|export|list|disasm` and the dispatch to forms,
 * import and merge (their own files). */
#include "cli/cli.h"
#include "corpus/assemble.h"
#include "corpus/instance.h"
#include "corpus/ptxref.h"
#include "cubin/disasm.h"
#include "sass/sass.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void rs_usage_corpus(void) {
  puts("usage: regsweep corpus build --out corpus.h5 [--families F,..] [--targets gfx90a,gfx940,..,sm_75,..,sm_90]\n"
       "                             [--limit N] [--seed S] [-j N] [--grid FILE] [--kernels DIR] [--work DIR]\n"
       "                             [--nvdisasm PATH]\n"
       "       regsweep corpus info corpus.h5\n"
       "       regsweep corpus list corpus.h5 [--params]  (one line per instance: id, IR hash, split, truth[, params])\n"
       "       regsweep corpus export corpus.h5 --split train|test [--subset mixed|same-amd|same-nv|\n"
       "                             verilocc-nv|verilocc-amd|verilocc-mixed]\n"
       "                             [--holdout-arch T] [--format jsonl] [--out FILE]\n"
       "       regsweep corpus disasm FILE.cubin [-o OUT.sass] [--nvdisasm PATH] [--hex] [--plr]\n"
       "       regsweep corpus disasm --check FILE.sass\n"
       "       regsweep corpus disasm FILE.cubin --rewrite OUT.cubin   (header for nvdisasm 11.8 only)\n"
       "       regsweep corpus forms FILE.cubin|FILE.sass|CORPUS.h5... [--nvdisasm PATH] [--unused] [--inferred]\n"
       "       regsweep corpus merge --out OUT.h5 IN.h5 IN2.h5 ...  (corpora built apart into one)\n"
       "\n"
       "build   compiles every grid point (corpus/recipes/grid.tsv) of the kernels in corpus/kernels\n"
       "        with clang-14/llc-14 (gfx908, gfx90a, gfx1030), clang-16/llc-16 (gfx940, gfx1100) and\n"
       "        clang-22/llc-22 (gfx942, gfx950, gfx1200, gfx1201): forms\n"
       "        prera and postsplit, ground truth from LLVM's final allocation; the grid's `arch` axis says\n"
       "        which architectures a family compiles for; and nvcc/ptxas on sm_75, sm_80, sm_86, sm_89, sm_90\n"
       "        (form sass: the completed nvdisasm listing with its exact truth, when an nvdisasm is found;\n"
       "        form ptx: truth = ptxas's registers matched back to the PTX values, `regsweep ptxtruth`),\n"
       "        then writes one row per distinct instance.\n"
       "        --limit N takes a seeded sample spread over the families. Compiler outputs are cached in\n"
       "        --work (default OUT.work): an interrupted build resumes where it stopped.\n"
       "info    counts per family x target x form, truth coverage, build failures, size reduction.\n"
       "export  (prompt, completion) pairs for fine-tuning: the normalized IR and the normalized\n"
       "        ground-truth map, one JSON object per line (instances with a ground truth only).\n"
       "        --holdout-arch T: the unseen-architecture split instead of the seeded 80/20 one\n"
       "        (test = every instance of target T, train = every other target's).\n"
       "        --subset verilocc-nv|verilocc-amd|verilocc-mixed: VeriLocc's settings (sm_89 form ptx: the\n"
       "        normalized PTX and ptxas's SASS registers; gfx90a form prera; both), same 80/20 split.\n"
       "disasm  the complete SASS listing of a cubin (ptxas 12.8+/13 headers rewritten for nvdisasm 11.8,\n"
       "        sm_90 instructions 11.8 drops decoded from the encoding, hidden desc[URx] written);\n"
       "        nvdisasm: --nvdisasm, else PATH, else /opt/nvidia-cuda-11.8/usr/bin. --check: refuse a\n"
       "        listing with an address hole. Bad input exits 2 with file: message.\n"
       "forms   opcode coverage: every form (mnemonic with its modifiers, operand count) the instructions\n"
       "        of the cubins (disassembled as by disasm), listings or a corpus's sass rows have, its count and the row of\n"
       "        sass/optable.c it matches or why none does; --unused lists rows no instruction matched.\n"
       "        Exit 1 when a form is unknown or a file is refused.");
}

static int have_tool(const char *name) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
  return system(cmd) == 0;
}

static int build(int argc, char **argv) {
  const char *out = NULL, *families = NULL, *targets = NULL, *grid = "corpus/recipes/grid.tsv",
             *kernels = "corpus/kernels", *work = NULL, *nvdisasm = NULL;
  unsigned long limit = 0, seed = 1;
  long jobs = sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strncmp(a, "-j", 2) && a[2]) { /* -j4 */
      jobs = strtol(a + 2, NULL, 10);
      continue;
    }
    if (!val) {
      fprintf(stderr, "regsweep corpus build: %s needs a value\n", a);
      return 2;
    }
    if (!strcmp(a, "--out")) out = val;
    else if (!strcmp(a, "--families")) families = val;
    else if (!strcmp(a, "--targets")) targets = val;
    else if (!strcmp(a, "--grid")) grid = val;
    else if (!strcmp(a, "--kernels")) kernels = val;
    else if (!strcmp(a, "--work")) work = val;
    else if (!strcmp(a, "--nvdisasm")) nvdisasm = val;
    else if (!strcmp(a, "--limit")) limit = strtoul(val, NULL, 10);
    else if (!strcmp(a, "--seed")) seed = strtoul(val, NULL, 10);
    else if (!strcmp(a, "-j")) jobs = strtol(val, NULL, 10);
    else {
      fprintf(stderr, "regsweep corpus build: unknown option '%s'\n", a);
      return 2;
    }
    i++;
  }
  if (!out) {
    fprintf(stderr, "regsweep corpus build: --out is required\n");
    return 2;
  }
  if (targets)
    for (const char *t = targets; *t;) {
      const char *c = strchr(t, ',');
      char one[32];
      snprintf(one, sizeof one, "%.*s", (int)(c ? c - t : (long)strlen(t)), t);
      if (!rs_target_by_name(one)) {
        fprintf(stderr, "regsweep corpus build: unknown target '%s' (gfx908, gfx90a, gfx940, gfx942, gfx950, gfx1030, "
                        "gfx1100, gfx1200, gfx1201, sm_75, sm_80, sm_86, sm_89, sm_90)\n", one);
        return 2;
      }
      if (!c) break;
      t = c + 1;
    }
  rs_err e = {{0}};
  rs_variant *v = NULL;
  uint32_t n = 0;
  if (rs_grid_load(grid, &v, &n, &e)) {
    fprintf(stderr, "regsweep corpus build: %s\n", e.msg);
    return 2;
  }
  rs_grid_filter(v, &n, families, targets);
  rs_grid_sample(v, &n, (uint32_t)limit, seed);
  if (!n) {
    fprintf(stderr, "regsweep corpus build: no grid point matches --families/--targets\n");
    free(v);
    return 2;
  }
  bool amd = false, nv = false, llvm16 = false, llvm22 = false;
  for (uint32_t i = 0; i < n; i++) {
    int ver = !strcmp(v[i].vendor, "amd") ? rs_arch_llvm(rs_variant_arch(&v[i])) : 0;
    if (ver) amd = true, llvm16 |= ver == 16, llvm22 |= ver == 22;
    else nv = true;
  }
  const char *nvcc = rs_find_nvcc();
  bool no14 = amd && (!have_tool("clang-14") || !have_tool("llc-14")), no16 = llvm16 && (!have_tool("clang-16") || !have_tool("llc-16"));
  bool no22 = llvm22 && (!have_tool("clang-22") || !have_tool("llc-22"));
  if (no14 || no16 || no22 || (nv && !nvcc)) {
    fprintf(stderr, "regsweep corpus build: %s not found (scripts/install-deps.sh installs clang-14/llvm-14, "
                    "clang-16/llvm-16 (gfx940, gfx1100) and clang-22/llvm-22 (gfx942, gfx950, gfx1200, gfx1201); "
                    "NVIDIA targets need the CUDA toolkit's nvcc, or pass --targets gfx908,gfx90a,gfx940,gfx1030,gfx1100)\n",
            nv && !nvcc ? "nvcc" : no14 ? "clang-14/llc-14" : no16 ? "clang-16/llc-16" : "clang-22/llc-22");
    free(v);
    return 2;
  }
  char workbuf[1024], tmp[1100];
  if (!work) {
    snprintf(workbuf, sizeof workbuf, "%s.work", out);
    work = workbuf;
  }
  /* form sass: our own binary disassembles each cubin in the compile jobs (nvdisasm found as in
   * `corpus disasm`); without a disassembler the build goes on with form ptx only */
  rs_nvdisasm nd = {{0}, 0, 0};
  char self[1024] = "";
  if (nv) {
    rs_err de = {{0}};
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    self[sl > 0 ? sl : 0] = 0;
    if (rs_nvdisasm_open(nvdisasm, &nd, &de)) {
      if (nvdisasm) {
        fprintf(stderr, "regsweep corpus build: %s\n", de.msg);
        free(v);
        return 2;
      }
      fprintf(stderr, "corpus: form sass skipped: %s\n", de.msg);
      nd.path[0] = 0;
    }
  }
  rs_compile_opts o = {kernels, work, targets, nvcc ? nvcc : "", (int)(jobs > 0 ? jobs : 1), 1,
                       nd.path[0] && self[0] ? self : NULL, nd.path[0] ? nd.path : NULL};
  fprintf(stderr, "corpus: %u variants (%s%s%s), %d jobs, work directory %s\n", n, amd ? "AMD" : "",
          amd && nv ? " + " : "", nv ? "NVIDIA" : "", o.jobs, work);
  rs_compile_stats cs;
  if (rs_compile_all(v, n, &o, &cs, &e)) {
    fprintf(stderr, "regsweep corpus build: %s\n", e.msg);
    free(v);
    return 2;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp", out);
  rs_corpus *c = rs_corpus_create(tmp, &e);
  if (!c) {
    fprintf(stderr, "regsweep corpus build: %s\n", e.msg);
    free(v);
    return 2;
  }
  double t0 = rs_now();
  rs_assemble_stats as;
  int rc = rs_assemble(v, n, &o, seed, c, &as, &e);
  double assemble_s = rs_now() - t0;
  char val[64];
  snprintf(val, sizeof val, "%lu", seed);
  if (!rc) rc = rs_corpus_set_attr(c, "seed", val, &e);
  if (!rc) rc = rs_corpus_set_attr(c, "grid", grid, &e);
  if (!rc)
    rc = rs_corpus_set_attr(c, "targets",
                            targets ? targets
                                    : "gfx908,gfx90a,gfx940,gfx942,gfx950,gfx1030,gfx1100,gfx1200,gfx1201,sm_75,sm_80,sm_86,"
                                      "sm_89,sm_90",
                            &e);
  char tools[400];
  snprintf(tools, sizeof tools, "clang-14, llc-14 (LLVM 14: gfx908, gfx90a, gfx1030), clang-16, llc-16 (LLVM 16: gfx940, "
                                "gfx1100), clang-22, llc-22 (LLVM 22: gfx942, gfx950, gfx1200, gfx1201), nvcc/ptxas "
                                "(CUDA 13)%s", o.nvdisasm ? ", nvdisasm " : "");
  if (o.nvdisasm) snprintf(tools + strlen(tools), sizeof tools - strlen(tools), "%u.%u", nd.major, nd.minor);
  if (!rc) rc = rs_corpus_set_attr(c, "tools", tools, &e);
  time_t now_t = time(NULL);
  char when[64];
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now_t));
  if (!rc) rc = rs_corpus_set_attr(c, "created", when, &e);
  if (!rc)
    rc = rs_corpus_set_attr(c, "nvidia_truth",
                            o.nvdisasm ? "form sass: the listing's registers (exact); form ptx: none, a reference allocation "
                                                   "instead (label_kind reference, /text/reference); ref_regs holds ptxas -v"
                                       : "none: no SASS disassembler (form sass skipped); ref_regs holds ptxas -v",
                            &e);
  int crc = rs_corpus_close(c, &e);
  if (rc || crc) {
    fprintf(stderr, "regsweep corpus build: %s\n", e.msg);
    unlink(tmp);
    free(v);
    return 2;
  }
  if (rename(tmp, out)) {
    perror(out);
    free(v);
    return 2;
  }
  printf("corpus: %s: %u instances (%u duplicates dropped), %u build failures, %u with ground truth, "
         "%u prera truths split by LLVM, %u truths inconsistent, %u infeasible\n",
         out, as.instances, as.duplicates, as.failures, as.with_truth, as.truth_split, as.truth_violations,
         as.infeasible);
  if (as.split_instances)
    printf("corpus: %u prera rows as split instances: the pre-RA MIR with greedy's split copies and spill code (or the SGPR round's MIR), each piece in LLVM's register\n",
           as.split_instances);
  if (as.split_labels)
    printf("corpus: %u prera truths of values LLVM split, each in one of the registers LLVM gave it (the split label)\n",
           as.split_labels);
  /* form ptx: the reference allocation of every instance with its sass row (issue 39) */
  if (o.nvdisasm) {
    rs_ptxref_stats st;
    if (rs_ptxref_store(out, &st, &e)) {
      fprintf(stderr, "regsweep corpus build: references: %s\n", e.msg);
      free(v);
      return 2;
    }
    if (st.ptx)
      printf("corpus: %u ptx instances: %u references stored (label_kind reference, not truths; verified by native "
             "and Z3), %u refused, %u without a sass row; %.1f%% of their values keep ptxas's register, %.1f s\n",
             st.ptx, st.refs, st.refused, st.nosass, st.values ? 100.0 * st.kept / st.values : 0.0, st.seconds);
  }
  printf("corpus: wall time: compile %.1f s (%u compiled, %u cached), assemble %.1f s = analyze %.1f s + "
         "align %.1f s + store %.1f s + other %.1f s\n",
         cs.wall_s, cs.compiled, cs.cached, assemble_s, as.analyze_s, as.align_s, as.store_s,
         assemble_s - as.analyze_s - as.align_s - as.store_s);
  free(v);
  return 0;
}

typedef struct {
  char key[96];
  uint32_t n, truth, reference, infeasible;
  uint64_t raw_lines, raw_tokens, norm_lines, norm_tokens;
} bucket;

static bucket *find_bucket(bucket **b, uint32_t *n, uint32_t *cap, const char *key) {
  for (uint32_t i = 0; i < *n; i++)
    if (!strcmp((*b)[i].key, key)) return &(*b)[i];
  bucket z;
  memset(&z, 0, sizeof z);
  snprintf(z.key, sizeof z.key, "%s", key);
  RS_PUSH(*b, *n, *cap, z);
  return &(*b)[*n - 1];
}

/* Open a corpus for a subcommand, or say why not. */
static rs_corpus *open_corpus(const char *path, const char *sub) {
  rs_err e = {{0}};
  rs_corpus *c = rs_corpus_open(path, &e);
  if (!c) fprintf(stderr, "regsweep corpus %s: %s\n", sub, e.msg);
  return c;
}

static int info(int argc, char **argv) {
  if (argc < 3) {
    rs_usage_corpus();
    return 2;
  }
  rs_err e = {{0}};
  rs_corpus *c = open_corpus(argv[2], "info");
  if (!c) return 2;
  bucket *b = NULL, *r = NULL;
  uint32_t nb = 0, cb = 0, nr = 0, cr = 0, splits[2] = {0, 0}, ninf = 0;
  char forms[400] = ""; /* the inferred rows' FORM/N, each once */
  uint64_t n = rs_corpus_count(c);
  for (uint64_t i = 0; i < n; i++) {
    rs_instance in;
    if (rs_corpus_get(c, i, &in, 0, &e)) {
      fprintf(stderr, "regsweep corpus info: %s\n", e.msg);
      rs_corpus_close(c, &e);
      free(b);
      free(r);
      return 2;
    }
    char key[96];
    snprintf(key, sizeof key, "%s\t%s\t%s", in.family, in.target, in.form);
    bucket *k = find_bucket(&b, &nb, &cb, key);
    k->n++;
    k->truth += in.truth_reason[0] == 0;
    k->reference += in.truth_reason[0] != 0 && in.reference_regs; /* a reference is never a truth */
    k->infeasible += in.infeasible;
    k = find_bucket(&r, &nr, &cr, key); /* sizes per family x target x form too (ptx and sass differ) */
    k->n++;
    k->raw_lines += in.raw_lines;
    k->raw_tokens += in.raw_tokens;
    k->norm_lines += in.norm_lines;
    k->norm_tokens += in.norm_tokens;
    splits[in.split & 1]++;
    rs_sass_infer x = {0};
    char why[300];
    if (rs_sass_infer_from_params(in.params, &x, why, sizeof why) > 0) ninf++;
    for (uint32_t j = 0; j < x.n; j++) {
      char fn[128];
      size_t l = strlen(forms);
      snprintf(fn, sizeof fn, "%s/%u", x.v[j].form, x.v[j].nops);
      bool have = false;
      for (const char *q = forms; (q = strstr(q, fn)) && !have; q++)
        have = (q == forms || q[-1] == ' ') && (q[strlen(fn)] == ',' || !q[strlen(fn)]);
      if (!have && l + strlen(fn) + 3 < sizeof forms) snprintf(forms + l, sizeof forms - l, "%s%s", l ? ", " : "", fn);
    }
    rs_sass_infer_free(&x);
    rs_instance_clear(&in);
  }
  printf("%s: %llu instances (train %u, test %u), %llu build failures\n", argv[2], (unsigned long long)n,
         splits[0], splits[1], (unsigned long long)rs_corpus_failure_count(c));
  if (ninf) /* marked: forms the table lacks, read with rows from nvdisasm -plr (params inferred_forms) */
    printf("inferred forms (nvdisasm -plr, params inferred_forms): %u instances (%s)\n", ninf, forms);
  printf("\n");
  printf("| family | target | form | instances | with truth | with reference (not a truth) | infeasible |\n"
         "|---|---|---|---:|---:|---:|---:|\n");
  for (uint32_t i = 0; i < nb; i++) {
    char k[96];
    snprintf(k, sizeof k, "%s", b[i].key);
    char *t1 = strchr(k, '\t'), *t2 = strchr(t1 + 1, '\t');
    *t1 = *t2 = 0;
    printf("| %s | %s | %s | %u | %u | %u | %u |\n", k, t1 + 1, t2 + 1, b[i].n, b[i].truth, b[i].reference,
           b[i].infeasible);
  }
  printf("\nSize reduction by normalization (mean per instance):\n\n"
         "| family | target | form | raw lines | norm lines | lines -%% | raw tokens | norm tokens | tokens -%% |\n"
         "|---|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (uint32_t i = 0; i < nr; i++) {
    char k[96];
    snprintf(k, sizeof k, "%s", r[i].key);
    char *t1 = strchr(k, '\t'), *t2 = strchr(t1 + 1, '\t');
    *t1 = *t2 = 0;
    double rl = (double)r[i].raw_lines / r[i].n, nl = (double)r[i].norm_lines / r[i].n,
           rt = (double)r[i].raw_tokens / r[i].n, nt = (double)r[i].norm_tokens / r[i].n;
    printf("| %s | %s | %s | %.0f | %.0f | %.1f | %.0f | %.0f | %.1f |\n", k, t1 + 1, t2 + 1, rl, nl,
           rl > 0 ? 100 * (1 - nl / rl) : 0, rt, nt, rt > 0 ? 100 * (1 - nt / rt) : 0);
  }
  /* archs: one unseen-architecture split per target (--holdout-arch T in sweep and export) */
  bucket *t = NULL;
  uint32_t nt = 0, ct = 0;
  for (uint32_t i = 0; i < nb; i++) {
    char k[96];
    snprintf(k, sizeof k, "%s", b[i].key);
    char *t1 = strchr(k, '\t'), *t2 = strchr(t1 + 1, '\t');
    *t2 = 0;
    bucket *x = find_bucket(&t, &nt, &ct, t1 + 1);
    x->n += b[i].n;
    x->truth += b[i].truth;
  }
  printf("\nUnseen-architecture splits (--holdout-arch T: test = T, train = every other target):\n\n"
         "| T | test instances | test with truth | train instances | train with truth |\n|---|---:|---:|---:|---:|\n");
  uint32_t all_n = 0, all_t = 0;
  for (uint32_t i = 0; i < nt; i++) all_n += t[i].n, all_t += t[i].truth;
  for (uint32_t i = 0; i < nt; i++)
    printf("| %s | %u | %u | %u | %u |\n", t[i].key, t[i].n, t[i].truth, all_n - t[i].n, all_t - t[i].truth);
  free(t);
  uint64_t nf = rs_corpus_failure_count(c);
  /* archs: failures per family x target with the first reason, so "which and why" is one table */
  bucket *fb = NULL;
  uint32_t nfb = 0, cfb = 0;
  char (*why)[160] = NULL;
  uint32_t cwhy = 0;
  for (uint64_t i = 0; i < nf; i++) {
    rs_build_failure f;
    if (rs_corpus_get_failure(c, i, &f, &e)) break;
    char key[96];
    snprintf(key, sizeof key, "%s\t%s", f.family, f.target);
    uint32_t before = nfb;
    bucket *x = find_bucket(&fb, &nfb, &cfb, key);
    x->n++;
    if (nfb != before) {
      rs_grow((void **)&why, sizeof *why, &cwhy, nfb);
      snprintf(why[nfb - 1], sizeof why[nfb - 1], "%.159s", f.message);
    }
  }
  if (nfb) printf("\nBuild failures per family x target (first reason):\n\n| family | target | failures | first reason |\n|---|---|---:|---|\n");
  for (uint32_t i = 0; i < nfb; i++) {
    char k[96];
    snprintf(k, sizeof k, "%s", fb[i].key);
    char *t1 = strchr(k, '\t');
    *t1 = 0;
    printf("| %s | %s | %u | %s |\n", k, t1 + 1, fb[i].n, why[i]);
  }
  free(fb);
  free(why);
  if (nf) printf("\nBuild failures (first 10 of %llu):\n", (unsigned long long)nf);
  for (uint64_t i = 0; i < nf && i < 10; i++) {
    rs_build_failure f;
    if (rs_corpus_get_failure(c, i, &f, &e) == 0)
      printf("  %s/%s/%s: %s\n", f.family, f.variant, f.target, f.message);
  }
  free(b);
  free(r);
  return rs_corpus_close(c, &e) ? 2 : 0;
}

static int export_(int argc, char **argv) {
  const char *split = NULL, *subset = "mixed", *format = "jsonl", *out = NULL, *holdout = NULL, *labels = NULL;
  if (argc < 3) {
    rs_usage_corpus();
    return 2;
  }
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--split")) split = argv[i + 1];
    else if (!strcmp(argv[i], "--subset")) subset = argv[i + 1];
    else if (!strcmp(argv[i], "--format")) format = argv[i + 1];
    else if (!strcmp(argv[i], "--out")) out = argv[i + 1];
    else if (!strcmp(argv[i], "--holdout-arch")) holdout = argv[i + 1];
    else if (!strcmp(argv[i], "--labels")) labels = argv[i + 1];
    else {
      fprintf(stderr, "regsweep corpus export: unknown option '%s'\n", argv[i]);
      return 2;
    }
  }
  /* VeriLocc's own settings (§4.2): one NVIDIA architecture (its RTX 4090, sm_89) with the
   * normalized PTX as input and ptxas's SASS registers as answer, one AMD one (its MI250x,
   * gfx90a) with the pre-RA MIR, and both mixed; the same seeded 80/20 split column */
  static const char *const vl[][2] = {{"verilocc-nv", "target=sm_89,form=ptx"},
                                      {"verilocc-amd", "target=gfx90a,form=prera"}};
  bool verilocc = !strncmp(subset, "verilocc-", 9);
  if (!split || (strcmp(split, "train") && strcmp(split, "test")) || strcmp(format, "jsonl") ||
      (strcmp(subset, "mixed") && strcmp(subset, "same-amd") && strcmp(subset, "same-nv") &&
       strcmp(subset, "verilocc-nv") && strcmp(subset, "verilocc-amd") && strcmp(subset, "verilocc-mixed"))) {
    fprintf(stderr, "regsweep corpus export: need --split train|test; --format jsonl; --subset "
                    "mixed|same-amd|same-nv|verilocc-nv|verilocc-amd|verilocc-mixed\n");
    return 2;
  }
  /* which labels: truths only, references only (form ptx, corpus/ptxref.c), or a truth where one
   * exists and else the reference; VeriLocc's NVIDIA settings default to any (no ptx truth exists
   * on most instances: docs/ptxtruth.md), the rest to truth as before */
  if (!labels) labels = !strcmp(subset, "verilocc-nv") || !strcmp(subset, "verilocc-mixed") ? "any" : "truth";
  if (strcmp(labels, "truth") && strcmp(labels, "reference") && strcmp(labels, "any")) {
    fprintf(stderr, "regsweep corpus export: --labels truth|reference|any, not '%s'\n", labels);
    return 2;
  }
  bool use_truth = strcmp(labels, "reference") != 0, use_ref = strcmp(labels, "truth") != 0;
  if (holdout && !rs_target_by_name(holdout)) {
    fprintf(stderr, "regsweep corpus export: --holdout-arch: unknown target '%s'\n", holdout);
    return 2;
  }
  rs_err e = {{0}};
  rs_corpus *c = open_corpus(argv[2], "export");
  if (!c) return 2;
  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) {
    perror(out);
    rs_corpus_close(c, &e);
    return 2;
  }
  uint32_t written = 0, no_truth = 0, n_truth = 0, n_ref = 0;
  int want = !strcmp(split, "test") ? RS_SPLIT_TEST : RS_SPLIT_TRAIN, rc = 0;
  for (uint64_t i = 0; i < rs_corpus_count(c) && !rc; i++) {
    rs_instance in;
    if ((rc = rs_corpus_get(c, i, &in, 1, &e))) break;
    bool take = (int)rs_instance_split(&in, holdout) == want && (!strcmp(subset, "mixed") || (!strcmp(subset, "same-amd") && in.same_amd) ||
                                     (!strcmp(subset, "same-nv") && in.same_nv));
    if (verilocc)
      take = (int)rs_instance_split(&in, holdout) == want &&
             ((strcmp(subset, "verilocc-amd") && rs_filter_match(vl[0][1], &in)) ||
              (strcmp(subset, "verilocc-nv") && rs_filter_match(vl[1][1], &in)));
    const char *label = use_truth && in.truth ? in.truth : use_ref && in.reference ? in.reference : NULL;
    bool is_truth = label && label == in.truth;
    if (take && !label) no_truth++;
    if (take && label) {
      /* completion: the label in normalized names (name_map is normalized -> original) */
      cJSON *map = cJSON_Parse(in.name_map ? in.name_map : "{}"), *truth = cJSON_Parse(label);
      cJSON *comp = cJSON_CreateObject(), *it;
      cJSON_ArrayForEach(it, map) {
        cJSON *r = cJSON_GetObjectItemCaseSensitive(truth, it->valuestring);
        if (cJSON_IsString(r)) cJSON_AddStringToObject(comp, it->string, r->valuestring);
      }
      char *cs = cJSON_PrintUnformatted(comp);
      cJSON *line = cJSON_CreateObject();
      cJSON_AddStringToObject(line, "id", in.id);
      cJSON_AddStringToObject(line, "target", in.target);
      cJSON_AddStringToObject(line, "prompt", in.norm ? in.norm : "");
      cJSON_AddStringToObject(line, "completion", cs);
      cJSON_AddStringToObject(line, "label_kind", is_truth ? "truth" : "reference");
      char *ls = cJSON_PrintUnformatted(line);
      fprintf(f, "%s\n", ls);
      cJSON_free(ls);
      cJSON_free(cs);
      cJSON_Delete(line);
      cJSON_Delete(comp);
      cJSON_Delete(map);
      cJSON_Delete(truth);
      written++;
      n_truth += is_truth, n_ref += !is_truth;
    }
    rs_instance_clear(&in);
  }
  if (out && fclose(f)) rc = rs_errf(&e, out, 0, "write error");
  rs_corpus_close(c, &e);
  if (rc) {
    fprintf(stderr, "regsweep corpus export: %s\n", e.msg);
    return 2;
  }
  fprintf(stderr, "corpus export: %u pairs written (%s, %s%s%s); %u instances of the selection have no %s\n",
          written, split, subset, holdout ? ", held-out architecture " : "", holdout ? holdout : "", no_truth,
          !use_ref ? "ground truth" : !use_truth ? "reference" : "ground truth or reference");
  fprintf(stderr, "corpus export: labels %s: %u ground truths, %u references (label_kind reference: verified, not a truth)\n",
          labels, n_truth, n_ref);
  return 0;
}

static int list(int argc, char **argv) {
  /* --params: the row's params (grid macros; an import's file, route and flags) as a last column */
  bool params = argc == 4 && !strcmp(argv[3], "--params");
  if (argc < 3 || (argc > 3 && !params)) {
    rs_usage_corpus();
    return 2;
  }
  rs_err e = {{0}};
  rs_corpus *c = open_corpus(argv[2], "list");
  if (!c) return 2;
  int rc = 0;
  for (uint64_t i = 0; i < rs_corpus_count(c) && !rc; i++) {
    rs_instance in;
    if ((rc = rs_corpus_get(c, i, &in, 0, &e))) break;
    printf("%s\t%016llx\t%s\t%u vregs\t%s%s%s\n", in.id, (unsigned long long)in.ir_hash,
           in.split == RS_SPLIT_TEST ? "test" : "train", in.nvregs, in.truth_reason[0] ? in.truth_reason : "truth",
           params ? "\t" : "", params ? in.params : "");
    rs_instance_clear(&in);
  }
  for (uint64_t i = 0; i < rs_corpus_failure_count(c) && !rc; i++) {
    rs_build_failure f;
    if ((rc = rs_corpus_get_failure(c, i, &f, &e))) break;
    printf("FAILED %s/%s/%s\t%s%s%s\n", f.family, f.variant, f.target, f.message, params ? "\t" : "", params ? f.params : "");
  }
  if (rc) fprintf(stderr, "regsweep corpus list: %s\n", e.msg);
  rs_corpus_close(c, &e);
  return rc ? 2 : 0;
}

static int disasm(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *nvd = NULL, *check = NULL, *rewrite = NULL;
  bool hex = false, plr = false; /* --plr: nvdisasm's life-range columns on every line (-plr -lrm narrow) */
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--plr")) {
      plr = true;
      continue;
    }
    if (!strcmp(a, "--hex")) {
      hex = true;
      continue;
    }
    if (!strcmp(a, "-o") || !strcmp(a, "--nvdisasm") || !strcmp(a, "--check") || !strcmp(a, "--rewrite")) {
      if (!val) {
        fprintf(stderr, "regsweep corpus disasm: %s needs a value\n", a);
        return 2;
      }
      if (!strcmp(a, "-o")) out = val;
      else if (!strcmp(a, "--nvdisasm")) nvd = val;
      else if (!strcmp(a, "--rewrite")) rewrite = val;
      else check = val;
      i++;
    } else if (a[0] == '-' || in) {
      fprintf(stderr, "regsweep corpus disasm: unexpected argument '%s'\n", a);
      return 2;
    } else {
      in = a;
    }
  }
  rs_err e = {{0}};
  if (check) {
    char *text = rs_read_file(check, NULL, &e);
    int rc = text ? rs_sass_check_listing(text, check, &e) : -1;
    free(text);
    if (rc) fprintf(stderr, "regsweep corpus disasm: %s\n", e.msg);
    else printf("%s: no address hole\n", check);
    return rc ? 2 : 0;
  }
  if (!in) {
    fprintf(stderr, "regsweep corpus disasm: which cubin? (regsweep corpus --help)\n");
    return 2;
  }
  if (rewrite) { /* only the header, for running nvdisasm 11.8 by hand (-plr tables) */
    rs_cubin c;
    int rc = rs_cubin_load(in, &c, &e);
    if (!rc) {
      rs_cubin_rewrite(&c);
      rc = rs_cubin_write(&c, rewrite, &e);
    }
    rs_cubin_free(&c);
    if (rc) fprintf(stderr, "regsweep corpus disasm: %s\n", e.msg);
    return rc ? 2 : 0;
  }
  rs_cubin c; /* a broken cubin is reported as such, whether or not nvdisasm is there */
  int bad = rs_cubin_load(in, &c, &e);
  rs_cubin_free(&c);
  if (bad) {
    fprintf(stderr, "regsweep corpus disasm: %s\n", e.msg);
    return 2;
  }
  rs_nvdisasm nd;
  if (rs_nvdisasm_open(nvd, &nd, &e)) {
    fprintf(stderr, "regsweep corpus disasm: %s\n", e.msg);
    return 2;
  }
  const char *args[] = {"-c", hex ? "-hex" : NULL, NULL, NULL, NULL, NULL};
  if (plr) args[hex ? 2 : 1] = "-plr", args[hex ? 3 : 2] = "-lrm", args[hex ? 4 : 3] = "narrow";
  char *text;
  rs_sass_stats st;
  if (rs_sass_disasm(&nd, in, args, &text, &st, &e)) {
    fprintf(stderr, "regsweep corpus disasm: %s\n", e.msg);
    return 2;
  }
  FILE *fp = out ? fopen(out, "w") : stdout;
  if (!fp) {
    fprintf(stderr, "regsweep corpus disasm: %s: cannot create\n", out);
    free(text);
    return 2;
  }
  fputs(text, fp);
  free(text);
  if (out && fclose(fp)) {
    fprintf(stderr, "regsweep corpus disasm: %s: write error\n", out);
    return 2;
  }
  fprintf(stderr, "%s: %u functions, %u instructions, %u holes filled, %u desc[] decoded (nvdisasm %u.%u)\n", in,
          st.funcs, st.insts, st.filled, st.descs, nd.major, nd.minor);
  return 0;
}

int rs_cmd_corpus(int argc, char **argv) {
  if (argc < 2) {
    rs_usage_corpus();
    return 2;
  }
  if (!strcmp(argv[1], "build")) return build(argc, argv);
  if (!strcmp(argv[1], "info")) return info(argc, argv);
  if (!strcmp(argv[1], "export")) return export_(argc, argv);
  if (!strcmp(argv[1], "list")) return list(argc, argv);
  if (!strcmp(argv[1], "disasm")) return disasm(argc, argv);
  if (!strcmp(argv[1], "forms")) return rs_cmd_corpus_forms(argc, argv);
  if (!strcmp(argv[1], "import")) return rs_cmd_corpus_import(argc, argv);
  if (!strcmp(argv[1], "merge")) return rs_cmd_corpus_merge(argc, argv);
  fprintf(stderr, "regsweep corpus: unknown subcommand '%s' (build, import, merge, info, export, list, disasm, forms)\n", argv[1]);
  return 2;
}
