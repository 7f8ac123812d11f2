/* bench.h - what every bench under bench/ shares. `--quick` is CI's smoke run (scripts/run-bench.sh,
 * ctest bench_quick_*): the smallest input and one round, so a bench that crashes or no longer
 * builds fails CI; it asserts nothing about speed (timing belongs to the full run). */
#ifndef RS_BENCH_H
#define RS_BENCH_H
#include <stdbool.h>
#include <string.h>

/* Removes every FLAG from argv (so the bench's own parsing never sees it); true if one was there. */
static inline bool rs_bench_take_flag(int *argc, char **argv, const char *flag) {
  bool found = false;
  int o = 1;
  for (int i = 1; i < *argc; i++) {
    if (!strcmp(argv[i], flag)) found = true;
    else argv[o++] = argv[i];
  }
  *argc = o;
  argv[o] = NULL;
  return found;
}

#endif
