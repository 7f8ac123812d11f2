/* ptx_floors.h - the per-family floors of the ptx form on data/corpus-mini.h5 (issue 39), one table
 * for tests/test_ptxtruth.c (the share of values labelled by matching) and tests/test_ptxref.c (the
 * share whose reference keeps ptxas's register): measured 2026-12 over every target (sm_75-sm_90),
 * rounded down (docs/ptxtruth.md). `big` marks the families whose references spend seconds each in
 * Z3 (and whose matching is most of test_ptxtruth's time): the RS_TEST_QUICK phases leave them out. */
#ifndef RS_TEST_PTX_FLOORS_H
#define RS_TEST_PTX_FLOORS_H
#include <stdbool.h>
#include <string.h>

typedef struct {
  const char *family;
  double labelled, kept; /* % of the family's values */
  bool big;
} rs_ptx_floor;

static const rs_ptx_floor rs_ptx_floors[] = {
    {"sgemm", 73.5, 71.5, true},  {"wmma", 68.5, 60.0, true},   {"fa", 51.5, 50.5, true},    {"reduce", 69.5, 58.5, false},
    {"scan", 63.5, 57.0, false},  {"conv2d", 57.0, 52.5, false}, {"gemv", 89.5, 74.5, false},
};
enum { RS_PTX_NFLOORS = sizeof rs_ptx_floors / sizeof *rs_ptx_floors };

/* The family's index in rs_ptx_floors, or -1. */
static inline int rs_ptx_floor_of(const char *family) {
  for (int k = 0; k < RS_PTX_NFLOORS; k++)
    if (!strcmp(rs_ptx_floors[k].family, family)) return k;
  return -1;
}
#endif
