/* failpoint.c - parse RS_FAULT and kill this rank at the named point (fault-matrix tests only;
 * failpoint.h). */
#include "worker/failpoint.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"none", "generate", "append", "renamed"};

bool rs_failpoint_parse(const char *spec, rs_failpoint *f) {
  memset(f, 0, sizeof *f);
  if (!spec || !*spec) return true;
  char point[16];
  int rank;
  unsigned after;
  if (sscanf(spec, "%d:%15[a-z]:%u", &rank, point, &after) != 3 || rank < 0 || !after) return false;
  for (int p = RS_FP_GENERATE; p <= RS_FP_RENAMED; p++)
    if (!strcmp(point, names[p])) {
      *f = (rs_failpoint){rank, p, after, 0};
      return true;
    }
  return false;
}

void rs_failpoint_hit(rs_failpoint *f, int rank, int point) {
  if (!f || f->point != point || f->rank != rank || ++f->hits != f->after) return;
  /* said before dying so the test log shows the kill was the injected one */
  fprintf(stderr, "regsweep: RS_FAULT: rank %d kills itself at %s #%u\n", rank, names[point], f->after);
  fflush(stderr);
  raise(SIGKILL);
}
