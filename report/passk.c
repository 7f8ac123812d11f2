/* passk.c - the unbiased pass@k estimator and percentiles (passk.h). */
#include "report/passk.h"
#include <stdlib.h>
#include <string.h>

double rs_passk(uint32_t n, uint32_t c, uint32_t k) {
  if (k > n || k == 0) return -1;
  if (n - c < k) return 1.0;
  double prod = 1.0;
  for (uint32_t i = n - c + 1; i <= n; i++) prod *= 1.0 - (double)k / (double)i;
  return 1.0 - prod;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double rs_percentile(const double *v, uint32_t n, double pct) {
  if (!n) return 0;
  double *s = malloc(sizeof *s * n);
  if (!s) return 0;
  memcpy(s, v, sizeof *s * n);
  qsort(s, n, sizeof *s, cmpd);
  double pos = pct / 100.0 * (n - 1);
  uint32_t lo = (uint32_t)pos;
  double r = lo + 1 < n ? s[lo] + (pos - lo) * (s[lo + 1] - s[lo]) : s[n - 1];
  free(s);
  return r;
}
