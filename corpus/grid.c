/* grid.c - read the grid file and enumerate, filter and sample its points. */
#include "corpus/grid.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_AXES 16
#define MAX_VALUES 16

typedef struct {
  char name[32];
  char values[MAX_VALUES][32];
  int nvalues;
} axis;

int rs_list_has(const char *list, const char *word) {
  if (!list || !*list) return 1;
  size_t n = strlen(word);
  for (const char *c = list; *c;) {
    const char *e = strchr(c, ',');
    size_t l = e ? (size_t)(e - c) : strlen(c);
    if (l == n && !strncmp(c, word, n)) return 1;
    if (!e) break;
    c = e + 1;
  }
  return 0;
}

static int parse_axes(const char *s, axis *ax, int *nax, const char *path, unsigned line, rs_err *e) {
  *nax = 0;
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", s);
  for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
    char *eq = strchr(tok, '=');
    if (!eq || eq == tok || *nax >= MAX_AXES) return rs_errf(e, path, line, "malformed axis '%s'", tok);
    axis *a = &ax[(*nax)++];
    *eq = 0;
    snprintf(a->name, sizeof a->name, "%s", tok);
    a->nvalues = 0;
    for (char *v = eq + 1; v && *v;) {
      char *bar = strchr(v, '|');
      if (bar) *bar = 0;
      if (!*v || a->nvalues >= MAX_VALUES) return rs_errf(e, path, line, "malformed values of axis '%s'", a->name);
      for (char *q = v; *q; q++)
        if (!isalnum((unsigned char)*q) && *q != '_' && *q != '.')
          return rs_errf(e, path, line, "value '%s' of axis '%s' must be alphanumeric", v, a->name);
      snprintf(a->values[a->nvalues++], 32, "%s", v);
      v = bar ? bar + 1 : NULL;
    }
  }
  return 0;
}

static void point(const axis *ax, int nax, const int *idx, const char *fields[4], rs_variant *v) {
  memset(v, 0, sizeof *v);
  snprintf(v->family, sizeof v->family, "%s", fields[0]);
  snprintf(v->vendor, sizeof v->vendor, "%s", fields[1]);
  snprintf(v->source, sizeof v->source, "%s", fields[2]);
  snprintf(v->kind, sizeof v->kind, "%s", fields[3]);
  v->opt = 2;
  size_t nl = 0, pl = 0;
  for (int k = 0; k < nax; k++) {
    const char *val = ax[k].values[idx[k]];
    char lname[32];
    size_t i;
    for (i = 0; ax[k].name[i] && i < sizeof lname - 1; i++) lname[i] = (char)tolower((unsigned char)ax[k].name[i]);
    lname[i] = 0;
    if (!strcmp(ax[k].name, "arch")) { /* archs: the target, not a macro nor part of the name */
      snprintf(v->arch, sizeof v->arch, "%.15s", val);
      continue;
    }
    if (!strcmp(ax[k].name, "opt")) v->opt = atoi(val);
    else if (!strcmp(ax[k].name, "fastmath")) v->fastmath = atoi(val);
    else pl += (size_t)snprintf(v->params + pl, sizeof v->params - pl, "%s-D%s=%s", pl ? " " : "", ax[k].name, val);
    /* the type axis reads best as its value alone ("half"), every other as name+value */
    if (!strcmp(ax[k].name, "DTYPE"))
      nl += (size_t)snprintf(v->name + nl, sizeof v->name - nl, "%s%s", nl ? "_" : "", val);
    else
      nl += (size_t)snprintf(v->name + nl, sizeof v->name - nl, "%s%s%s", nl ? "_" : "", lname, val);
    if (nl >= sizeof v->name) nl = sizeof v->name - 1;
    if (pl >= sizeof v->params) pl = sizeof v->params - 1;
  }
}

int rs_grid_load(const char *path, rs_variant **out, uint32_t *n, rs_err *e) {
  size_t len;
  char *text = rs_read_file(path, &len, e);
  if (!text) return -1;
  rs_variant *vs = NULL;
  uint32_t nv = 0, cap = 0;
  unsigned line = 0;
  int rc = 0;
  for (char *c = text, *nl; c && *c && !rc; c = nl ? nl + 1 : NULL) {
    nl = strchr(c, '\n');
    if (nl) *nl = 0;
    line++;
    if (*c == '#' || !*c) continue;
    const char *fields[5];
    int nf = 0;
    for (char *f = c; f && nf < 5; nf++) {
      fields[nf] = f;
      f = strchr(f, '\t');
      if (f) *f++ = 0;
    }
    if (nf != 5) {
      rc = rs_errf(e, path, line, "expected 5 tab-separated fields");
      break;
    }
    if (strcmp(fields[1], "amd") && strcmp(fields[1], "nv")) {
      rc = rs_errf(e, path, line, "vendor must be amd or nv, not '%s'", fields[1]);
      break;
    }
    axis ax[MAX_AXES];
    int nax, idx[MAX_AXES] = {0};
    if ((rc = parse_axes(fields[4], ax, &nax, path, line, e))) break;
    for (int k = 0; k < nax && !rc; k++) /* archs: an arch axis names AMD architectures we compile */
      for (int j = 0; j < ax[k].nvalues && !strcmp(ax[k].name, "arch"); j++)
        if (strcmp(fields[1], "amd") || !rs_arch_llvm(ax[k].values[j]))
          rc = rs_errf(e, path, line, "arch '%s' is not an AMD architecture the corpus compiles (gfx908, gfx90a, "
                       "gfx940, gfx1030, gfx1100)", ax[k].values[j]);
    if (rc) break;
    for (;;) {
      rs_variant v;
      point(ax, nax, idx, fields, &v);
      RS_PUSH(vs, nv, cap, v);
      int k = nax - 1;
      while (k >= 0 && ++idx[k] == ax[k].nvalues) idx[k--] = 0;
      if (k < 0) break;
    }
  }
  free(text);
  if (rc) {
    free(vs);
    return -1;
  }
  *out = vs;
  *n = nv;
  return 0;
}

/* archs: which LLVM compiles which AMD architecture (Debian 12 ships llc-14 and llc-16; llc-14
 * does not know gfx940 or gfx11). */
int rs_arch_llvm(const char *arch) {
  static const struct { const char *arch; int llvm; } t[] = {
      {"gfx90a", 14}, {"gfx908", 14}, {"gfx1030", 14}, {"gfx940", 16}, {"gfx1100", 16}};
  for (size_t i = 0; i < sizeof t / sizeof *t; i++)
    if (!strcmp(t[i].arch, arch)) return t[i].llvm;
  return 0;
}

const char *rs_variant_arch(const rs_variant *v) {
  if (strcmp(v->vendor, "amd")) return NULL;
  return v->arch[0] ? v->arch : "gfx90a";
}

int rs_grid_targets(const char *vendor, const char *targets, const char *out[RS_GRID_MAX_TARGETS]) {
  static const char *const amd[] = {"gfx90a"}, *const nv[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90"};
  const char *const *all = !strcmp(vendor, "amd") ? amd : nv;
  int na = !strcmp(vendor, "amd") ? 1 : 5, n = 0;
  for (int i = 0; i < na; i++)
    if (rs_list_has(targets, all[i])) out[n++] = all[i];
  return n;
}

/* every NVIDIA target: its PTX gets a truth from the SASS of the same compile (corpus/ptxtruth.c) */
bool rs_grid_ptx_target(const char *target) { return !strncmp(target, "sm_", 3); }

void rs_grid_filter(rs_variant *v, uint32_t *n, const char *families, const char *targets) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < *n; i++) {
    const char *t[RS_GRID_MAX_TARGETS];
    const char *arch = rs_variant_arch(&v[i]);
    if (rs_list_has(families, v[i].family) &&
        (arch ? rs_list_has(targets, arch) : rs_grid_targets(v[i].vendor, targets, t) > 0))
      v[k++] = v[i];
  }
  *n = k;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void rs_grid_sample(rs_variant *v, uint32_t *n, uint32_t limit, uint64_t seed) {
  if (!limit || limit >= *n) return;
  /* Rank every variant by a seeded hash of its identity, then take the lowest ranks round-robin
   * over the (family, vendor, arch) groups: the choice of one variant does not depend on the others,
   * so reruns and larger limits stay consistent. */
  uint32_t N = *n;
  uint64_t *rank = rs_xmalloc(sizeof *rank * N);
  uint32_t *group = rs_xmalloc(sizeof *group * N), ngroups = 0;
  char (*gname)[64] = rs_xmalloc(sizeof *gname * N);
  for (uint32_t i = 0; i < N; i++) {
    char id[512];
    /* archs: gfx90a keeps its old identity (so its ranks do not move); other archs add theirs */
    const char *arch = v[i].arch[0] && strcmp(v[i].arch, "gfx90a") ? v[i].arch : "";
    snprintf(id, sizeof id, "%s/%s/%s/%d/%d%s%s", v[i].family, v[i].vendor, v[i].name, v[i].opt, v[i].fastmath,
             *arch ? "/" : "", arch);
    uint64_t s = seed ^ rs_hash_bytes(id, strlen(id), 0);
    rank[i] = splitmix(&s);
    char g[64]; /* family/vendor/arch: --limit spreads over the architectures too */
    snprintf(g, sizeof g, "%s/%s/%s", v[i].family, v[i].vendor, v[i].arch);
    uint32_t k;
    for (k = 0; k < ngroups && strcmp(gname[k], g); k++) {}
    if (k == ngroups) memcpy(gname[ngroups++], g, sizeof g);
    group[i] = k;
  }
  /* order indices by (group, rank); then pick round-robin from each group's front */
  uint32_t *ord = rs_xmalloc(sizeof *ord * N), *start = rs_xcalloc(ngroups + 1, sizeof *start);
  for (uint32_t i = 0; i < N; i++) start[group[i] + 1]++;
  for (uint32_t g = 0; g < ngroups; g++) start[g + 1] += start[g];
  uint32_t *fill = rs_xmalloc(sizeof *fill * (ngroups + 1));
  memcpy(fill, start, sizeof *fill * (ngroups + 1));
  for (uint32_t i = 0; i < N; i++) ord[fill[group[i]]++] = i;
  for (uint32_t g = 0; g < ngroups; g++) /* insertion sort by rank within the group */
    for (uint32_t a = start[g] + 1; a < start[g + 1]; a++)
      for (uint32_t b = a; b > start[g] && rank[ord[b]] < rank[ord[b - 1]]; b--) {
        uint32_t t = ord[b]; ord[b] = ord[b - 1]; ord[b - 1] = t;
      }
  bool *keep = rs_xcalloc(N, sizeof *keep);
  uint32_t kept = 0;
  memcpy(fill, start, sizeof *fill * (ngroups + 1));
  while (kept < limit) {
    bool progress = false;
    for (uint32_t g = 0; g < ngroups && kept < limit; g++)
      if (fill[g] < start[g + 1]) {
        keep[ord[fill[g]++]] = true;
        kept++;
        progress = true;
      }
    if (!progress) break;
  }
  free(ord);
  free(start);
  free(fill);
  uint32_t k = 0;
  for (uint32_t i = 0; i < N; i++)
    if (keep[i]) v[k++] = v[i];
  *n = k;
  free(rank);
  free(group);
  free(gname);
  free(keep);
}
