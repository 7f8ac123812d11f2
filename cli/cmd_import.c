/* cmd_import.c - `regsweep corpus import`: a user's kernels (sources listed in a recipe, or
 * compiler outputs named on the command line) into a new or existing corpus (corpus/import.h). */
#include "cli/cli.h"
#include "corpus/import.h"
#include "cubin/disasm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const usage =
    "usage: regsweep corpus import --out C.h5 (RECIPE.tsv | FILE...) [--family NAME] [--targets T,..] [-j N]\n"
    "                              [--work DIR] [--seed S] [--nvdisasm PATH] [--rocm-device-libs DIR]\n"
    "  RECIPE.tsv: source<TAB>language<TAB>flags<TAB>targets per line (language opencl|hip|llvm|mir|cuda|ptx|cubin;\n"
    "  flags and targets may be '-'). FILE: .cl .hip .ll .bc X.prera.mir .cu .ptx .cubin .o (by extension).\n"
    "  Rows of --family (default: 'import') already in C.h5 are replaced; the rest is kept. Resumable: the\n"
    "  work directory (default C.h5.work) keeps every compiled unit. See docs/import.md.\n";

/* rocm-device-libs' bitcode folder: DIR given, else the Debian package's. */
static const char *find_devlibs(const char *given) {
  static const char *const known[] = {"/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", "/usr/lib/amdgcn/bitcode",
                                      "/opt/rocm/amdgcn/bitcode"};
  if (given) return access(given, R_OK) == 0 ? given : NULL;
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (access(known[i], R_OK) == 0) return known[i];
  return NULL;
}

int rs_cmd_corpus_import(int argc, char **argv) {
  const char *out = NULL, *family = "import", *targets = NULL, *work = NULL, *nvdisasm = NULL, *devlibs = NULL;
  unsigned long seed = 1;
  long jobs = 2;
  const char **files = rs_xcalloc((size_t)argc, sizeof *files);
  int nfiles = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strncmp(a, "-j", 2) && a[2]) {
      jobs = strtol(a + 2, NULL, 10);
      continue;
    }
    if (a[0] != '-') {
      files[nfiles++] = a;
      continue;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage, stdout);
      free(files);
      return 0;
    }
    if (!val) {
      fprintf(stderr, "regsweep corpus import: %s needs a value\n", a);
      free(files);
      return 2;
    }
    if (!strcmp(a, "--out")) out = val;
    else if (!strcmp(a, "--family")) family = val;
    else if (!strcmp(a, "--targets")) targets = val;
    else if (!strcmp(a, "--work")) work = val;
    else if (!strcmp(a, "--nvdisasm")) nvdisasm = val;
    else if (!strcmp(a, "--rocm-device-libs")) devlibs = val;
    else if (!strcmp(a, "--seed")) seed = strtoul(val, NULL, 10);
    else if (!strcmp(a, "-j")) jobs = strtol(val, NULL, 10);
    else {
      fprintf(stderr, "regsweep corpus import: unknown option '%s'\n%s", a, usage);
      free(files);
      return 2;
    }
    i++;
  }
  if (!out || !nfiles) {
    fprintf(stderr, "regsweep corpus import: %s\n%s", !out ? "--out is required" : "which recipe or files?", usage);
    free(files);
    return 2;
  }
  if (!family[0] || strlen(family) > 31 || strchr(family, '/')) {
    fprintf(stderr, "regsweep corpus import: --family '%s': 1-31 characters, no '/'\n", family);
    free(files);
    return 2;
  }
  rs_err e = {{0}};
  rs_imp_unit *u = NULL;
  uint32_t n = 0, cap = 0;
  int rc = 0;
  for (int i = 0; i < nfiles && !rc; i++) {
    size_t l = strlen(files[i]);
    if (l > 4 && !strcmp(files[i] + l - 4, ".tsv")) {
      rs_imp_unit *r;
      uint32_t nr;
      rc = rs_recipe_load(files[i], targets, &r, &nr, &e);
      for (uint32_t k = 0; k < nr; k++) RS_PUSH(u, n, cap, r[k]);
      if (!rc) free(r);
    } else {
      /* a file's targets: --targets filtered to its vendor (the other vendor's are not an error) */
      rs_imp_unit one;
      char tg[160] = "";
      if (targets) {
        rs_imp_unit probe;
        rs_err pe = {{0}};
        bool amd = rs_imp_unit_file(files[i], NULL, &probe, &pe) == 0 && rs_imp_lang_amd(probe.lang);
        for (const char *t = targets; *t;) {
          const char *c = strchr(t, ',');
          int k = (int)(c ? c - t : (long)strlen(t));
          if ((amd ? !strncmp(t, "gfx", 3) : !strncmp(t, "sm_", 3)) || !(strncmp(t, "gfx", 3) == 0 || strncmp(t, "sm_", 3) == 0))
            snprintf(tg + strlen(tg), sizeof tg - strlen(tg), "%s%.*s", tg[0] ? "," : "", k, t);
          t = c ? c + 1 : t + k;
        }
      }
      rc = rs_imp_unit_file(files[i], tg[0] ? tg : NULL, &one, &e);
      if (!rc) RS_PUSH(u, n, cap, one);
    }
  }
  free(files);
  if (rc) {
    fprintf(stderr, "regsweep corpus import: %s\n", e.msg);
    free(u);
    return 2;
  }
  char workbuf[1100], self[1024] = "";
  if (!work) {
    snprintf(workbuf, sizeof workbuf, "%s.work", out);
    work = workbuf;
  }
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  self[sl > 0 ? sl : 0] = 0;
  rs_nvdisasm nd = {{0}, 0, 0};
  rs_err de = {{0}};
  if (rs_nvdisasm_open(nvdisasm, &nd, &de)) {
    if (nvdisasm) {
      fprintf(stderr, "regsweep corpus import: %s\n", de.msg);
      free(u);
      return 2;
    }
    fprintf(stderr, "import: form sass skipped: %s\n", de.msg);
    nd.path[0] = 0;
  }
  const char *dl = find_devlibs(devlibs);
  if (devlibs && !dl) {
    fprintf(stderr, "regsweep corpus import: --rocm-device-libs %s: cannot read\n", devlibs);
    free(u);
    return 2;
  }
  rs_import_opts o = {work, family, rs_find_nvcc(), self[0] ? self : NULL, nd.path[0] ? nd.path : NULL, dl,
                      (int)(jobs > 0 ? jobs : 1), 1, seed};
  rs_import_stats st;
  fprintf(stderr, "import: %u units into %s (family %s), %d jobs, work directory %s\n", n, out, family, o.jobs, work);
  if (rs_import(u, n, &o, out, &st, &e)) {
    fprintf(stderr, "regsweep corpus import: %s\n", e.msg);
    free(u);
    return 2;
  }
  printf("import: %s: %u units (%u compiled, %u cached), %u kernels -> %u instances (%u duplicates dropped), "
         "%u with ground truth, %u build failures, %u prera truths split by LLVM, %u truths inconsistent; "
         "kept %u rows of other families, replaced %u of family %s\n",
         out, st.units, st.compiled, st.cached, st.kernels, st.instances, st.duplicates, st.with_truth, st.failures,
         st.truth_split, st.truth_violations, st.kept, st.replaced, family);
  if (st.split_instances)
    printf("import: %u prera rows as split instances: the pre-RA MIR with greedy's split copies and spill code (or the SGPR round's MIR), each piece in LLVM's register\n",
           st.split_instances);
  if (st.split_labels)
    printf("import: %u prera truths of values LLVM split, each in one of the registers LLVM gave it (the split label)\n",
           st.split_labels);
  if (st.disasm_redone)
    printf("import: %u SASS listings refused when their unit compiled were disassembled now\n", st.disasm_redone);
  printf("import: wall time: compile %.1f s, split + assemble + merge %.1f s\n", st.compile_s, st.assemble_s);
  free(u);
  return 0;
}
