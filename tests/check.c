/* check.c - test helpers (see check.h). */
#include "check.h"
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

int rs_check_failures, rs_check_count;
const char *rs_check_cli = "build/regsweep";

void rs_check_init(int argc, char **argv) {
  if (argc > 1) rs_check_cli = argv[1];
}

int rs_check_done(const char *name) {
  printf("%s: %d checks, %d failed\n", name, rs_check_count, rs_check_failures);
  if (rs_check_count == 0) {
    fprintf(stderr, "%s: no checks ran\n", name);
    return 1;
  }
  return rs_check_failures ? 1 : 0;
}

int rs_check_stride(void) {
  const char *q = getenv("RS_TEST_QUICK");
  return q && !strcmp(q, "1") ? 3 : 1;
}

static int cmpstr(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int rs_check_list(const char *dir, const char *suffix, char ***out) {
  DIR *d = opendir(dir);
  *out = NULL;
  if (!d) return 0;
  int n = 0, cap = 0;
  struct dirent *de;
  size_t sl = strlen(suffix);
  while ((de = readdir(d))) {
    size_t l = strlen(de->d_name);
    if (l < sl || strcmp(de->d_name + l - sl, suffix)) continue;
    if (n == cap) *out = realloc(*out, sizeof **out * (size_t)(cap = cap ? cap * 2 : 16));
    size_t pl = strlen(dir) + l + 2;
    (*out)[n] = malloc(pl);
    snprintf((*out)[n], pl, "%s/%s", dir, de->d_name);
    n++;
  }
  closedir(d);
  if (n) qsort(*out, (size_t)n, sizeof **out, cmpstr);
  return n;
}

void rs_check_free_list(char **l, int n) {
  for (int i = 0; i < n; i++) free(l[i]);
  free(l);
}

int rs_check_run(const char *cmd, char *out, size_t cap) {
  char full[4096];
  snprintf(full, sizeof full, "%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  if (!p) return -1;
  size_t n = 0;
  if (out && cap) {
    n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    char sink[4096];
    while (fread(sink, 1, sizeof sink, p) > 0) {}
  }
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}
