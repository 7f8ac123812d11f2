/* recipe.c - recipe lines and command-line files to import units. */
#include "corpus/recipe.h"
#include "corpus/grid.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const lang_names[RS_IMP_NLANG] = {"opencl", "hip", "llvm", "mir", "cuda", "ptx", "cubin"};
static const char *const amd_all = "gfx90a", *const nv_all = "sm_75,sm_80,sm_86,sm_89,sm_90";
const char rs_amd_archs[] = "gfx908, gfx90a, gfx940, gfx942, gfx950, gfx1030, gfx1100, gfx1200, gfx1201";
const char rs_hip_archs[] = "gfx940, gfx942, gfx950, gfx1100, gfx1200, gfx1201";

const char *rs_imp_lang_name(rs_imp_lang l) { return l < RS_IMP_NLANG ? lang_names[l] : "?"; }
bool rs_imp_lang_amd(rs_imp_lang l) { return l <= RS_IMP_MIR; }

/* Targets of the unit's vendor: each must be one the corpus compiles for that vendor. */
static int check_targets(rs_imp_unit *u, const char *targets, const char *where, int line, rs_err *e) {
  bool amd = rs_imp_lang_amd(u->lang);
  if (!targets || !*targets || !strcmp(targets, "-")) targets = u->lang == RS_IMP_HIP ? "gfx940" : amd ? amd_all : nv_all;
  snprintf(u->targets, sizeof u->targets, "%s", targets);
  for (const char *t = targets; *t;) {
    const char *c = strchr(t, ',');
    char one[32];
    snprintf(one, sizeof one, "%.*s", (int)(c ? c - t : (long)strlen(t)), t);
    bool ok = amd ? rs_arch_llvm(one) != 0 : rs_grid_ptx_target(one) && rs_list_has(nv_all, one);
    /* HIP needs rocm-device-libs (5.2: LLVM 15 bitcode), so clang-16 (or clang-22 on its
     * architectures): the corpus reads gfx908/gfx90a/gfx1030 MIR at LLVM 14, so those are refused
     * here rather than misread */
    if (ok && u->lang == RS_IMP_HIP && rs_arch_llvm(one) == 14)
      return rs_errf(e, where, line, "target '%s': HIP compiles with clang-16 or clang-22 (rocm-device-libs 5.2 is "
                     "LLVM 15 bitcode) and the corpus reads %s at LLVM 14; HIP targets: %s", one, one, rs_hip_archs);
    if (!ok)
      return rs_errf(e, where, line, "target '%s' is not one %s compiles for (%s)", one, lang_names[u->lang],
                     amd ? rs_amd_archs : nv_all);
    if (!c) break;
    t = c + 1;
  }
  return 0;
}

static void find_opt(rs_imp_unit *u) {
  u->opt = 3;
  for (const char *c = strstr(u->flags, "-O"); c; c = strstr(c + 2, "-O"))
    if ((c == u->flags || c[-1] == ' ') && c[2] >= '0' && c[2] <= '3') u->opt = c[2] - '0';
}

static bool ends(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

int rs_imp_unit_file(const char *path, const char *targets, rs_imp_unit *u, rs_err *e) {
  static const struct { const char *ext; rs_imp_lang l; } ex[] = {
      {".cl", RS_IMP_OPENCL}, {".hip", RS_IMP_HIP},   {".ll", RS_IMP_LLVM}, {".bc", RS_IMP_LLVM},
      {".prera.mir", RS_IMP_MIR}, {".cu", RS_IMP_CUDA}, {".ptx", RS_IMP_PTX}, {".cubin", RS_IMP_CUBIN},
      {".o", RS_IMP_CUBIN}};
  memset(u, 0, sizeof *u);
  size_t i = 0;
  while (i < sizeof ex / sizeof *ex && !ends(path, ex[i].ext)) i++;
  if (i == sizeof ex / sizeof *ex)
    return rs_errf(e, path, 0, "unknown kind of input (.cl .hip .ll .bc .prera.mir .cu .ptx .cubin .o; "
                               "or list it in a recipe with its language)");
  u->lang = ex[i].l;
  snprintf(u->source, sizeof u->source, "%s", path);
  if (access(path, R_OK)) return rs_errf(e, path, 0, "cannot read");
  find_opt(u);
  return check_targets(u, targets, path, 0, e);
}

int rs_recipe_load(const char *path, const char *targets_default, rs_imp_unit **out, uint32_t *n, rs_err *e) {
  *out = NULL;
  *n = 0;
  char *text = rs_read_file(path, NULL, e);
  if (!text) return -1;
  char dir[512];
  snprintf(dir, sizeof dir, "%s", path);
  char *sl = strrchr(dir, '/');
  if (sl) sl[1] = 0;
  else dir[0] = 0;
  uint32_t cap = 0;
  int rc = 0, line = 0;
  for (char *s = text, *nl; s && *s && !rc; s = nl ? nl + 1 : NULL) {
    nl = strchr(s, '\n');
    if (nl) *nl = 0;
    line++;
    if (*s == '#' || !s[strspn(s, " \t\r")]) continue;
    char *f[5] = {0};
    int nf = 0;
    for (char *c = s; nf < 5 && c;) {
      f[nf++] = c;
      c = strchr(c, '\t');
      if (c) *c++ = 0;
    }
    for (int k = 0; k < nf; k++) f[k][strcspn(f[k], "\r")] = 0;
    if (nf < 2 || nf > 4) {
      rc = rs_errf(e, path, line, "expected source<TAB>language[<TAB>flags[<TAB>targets]], got %d fields", nf);
      break;
    }
    rs_imp_unit u;
    memset(&u, 0, sizeof u);
    u.line = line;
    int l = 0;
    while (l < RS_IMP_NLANG && strcmp(f[1], lang_names[l])) l++;
    if (l == RS_IMP_NLANG) {
      rc = rs_errf(e, path, line, "unknown language '%s' (opencl, hip, llvm, mir, cuda, ptx, cubin)", f[1]);
      break;
    }
    u.lang = (rs_imp_lang)l;
    if (f[0][0] == '/') snprintf(u.source, sizeof u.source, "%s", f[0]);
    else snprintf(u.source, sizeof u.source, "%s%s", dir, f[0]);
    if (access(u.source, R_OK)) {
      rc = rs_errf(e, path, line, "source '%s' cannot be read", u.source);
      break;
    }
    const char *fl = nf > 2 && strcmp(f[2], "-") ? f[2] : "";
    if (strlen(fl) >= sizeof u.flags) { /* cut, it would compile something else than the line says */
      rc = rs_errf(e, path, line, "flags are %zu characters, at most %zu", strlen(fl), sizeof u.flags - 1);
      break;
    }
    snprintf(u.flags, sizeof u.flags, "%s", fl);
    find_opt(&u);
    if ((rc = check_targets(&u, nf > 3 ? f[3] : targets_default, path, line, e))) break;
    RS_PUSH(*out, *n, cap, u);
  }
  free(text);
  if (rc) {
    free(*out);
    *out = NULL;
    *n = 0;
  }
  return rc;
}

static bool same_set(const rs_imp_unit *a, const rs_imp_unit *b) {
  return a->lang == b->lang && !strcmp(a->source, b->source) && !strcmp(a->flags, b->flags);
}

void rs_imp_name_units(rs_imp_unit *u, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    /* the same kernel set (language, source, flags) for other targets keeps its name, so that
     * its rows are one variant across architectures */
    uint32_t j = 0;
    while (j < i && !same_set(&u[j], &u[i])) j++;
    if (j < i) {
      memcpy(u[i].name, u[j].name, sizeof u[i].name); /* j < i: two units (snprintf from u to u trips -Wrestrict) */
      continue;
    }
    const char *b = strrchr(u[i].source, '/');
    b = b ? b + 1 : u[i].source;
    char stem[40];
    snprintf(stem, sizeof stem, "%.*s", (int)strcspn(b, "."), b);
    for (char *c = stem; *c; c++)
      if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
        *c = '_';
    snprintf(u[i].name, sizeof u[i].name, "%s", stem);
    for (int k = 2;; k++) {
      bool clash = false;
      for (uint32_t j = 0; j < i && !clash; j++) clash = !strcmp(u[j].name, u[i].name);
      if (!clash) break;
      snprintf(u[i].name, sizeof u[i].name, "%.36s-%d", stem, k % 1000);
    }
  }
}

int rs_imp_check_overlap(const rs_imp_unit *u, uint32_t n, rs_err *e) {
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < i; j++) {
      if (!same_set(&u[i], &u[j])) continue;
      for (const char *t = u[i].targets; *t;) {
        const char *c = strchr(t, ',');
        char one[32];
        snprintf(one, sizeof one, "%.*s", (int)(c ? c - t : (long)strlen(t)), t);
        if (rs_list_has(u[j].targets, one))
          return rs_errf(e, u[i].source, u[i].line, "listed twice for target %s (%s lines %d and %d, same flags)", one,
                         rs_imp_lang_name(u[i].lang), u[j].line, u[i].line);
        if (!c) break;
        t = c + 1;
      }
    }
  return 0;
}
