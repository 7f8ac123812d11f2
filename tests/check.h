/* check.h - the tiny assertion helpers every test uses. A failed CHECK prints file:line and the
 * expression and makes the test exit 1 at the end (not at once, so one run shows every failure). */
#ifndef RS_CHECK_H
#define RS_CHECK_H
#include <stdio.h>

extern int rs_check_failures;
extern int rs_check_count;
extern const char *rs_check_cli; /* path of the regsweep binary (argv[1]) */

#define CHECK(cond)                                                                   \
  do {                                                                                \
    rs_check_count++;                                                                 \
    if (!(cond)) {                                                                    \
      rs_check_failures++;                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);        \
    }                                                                                 \
  } while (0)
#define CHECKF(cond, ...)                                                             \
  do {                                                                                \
    rs_check_count++;                                                                 \
    if (!(cond)) {                                                                    \
      rs_check_failures++;                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);        \
      fprintf(stderr, __VA_ARGS__);                                                   \
      fputc('\n', stderr);                                                            \
    }                                                                                 \
  } while (0)

void rs_check_init(int argc, char **argv);
int rs_check_done(const char *name);
/* Files matching dir/\*suffix, sorted; returns count, fills *out (free with rs_check_free_list). */
int rs_check_list(const char *dir, const char *suffix, char ***out);
void rs_check_free_list(char **l, int n);
/* 1, or 3 under RS_TEST_QUICK=1 (the sanitizer phase): a test walking a fixture directory checks
 * every rs_check_stride()-th file there, the same assertions on a third of the files, and all of
 * them in the plain build (tests/CMakeLists.txt runs it in both when its source names this). */
int rs_check_stride(void);
/* Run a shell command, capture stdout+stderr (first cap bytes) and return the exit status. */
int rs_check_run(const char *cmd, char *out, size_t cap);

#endif
