/* bootstrap.c - percentile bootstrap, quantiles, McNemar. */
#include "report/bootstrap.h"
#include "util/util.h"
#include <math.h>
#include <stdlib.h>

uint64_t rs_boot_rng(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double rs_quantile_sorted(const double *s, uint32_t n, double pct) {
  if (!n) return NAN;
  double pos = pct / 100.0 * (n - 1);
  uint32_t lo = (uint32_t)pos;
  return lo + 1 < n ? s[lo] + (pos - lo) * (s[lo + 1] - s[lo]) : s[n - 1];
}

void rs_boot_means(const double *v, uint32_t n, uint32_t m, uint32_t B, uint64_t seed, rs_ci *out) {
  double *sum = rs_xcalloc(m, sizeof *sum);
  uint32_t *cnt = rs_xcalloc(m, sizeof *cnt);
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < m; j++)
      if (!isnan(v[(size_t)i * m + j])) sum[j] += v[(size_t)i * m + j], cnt[j]++;
  for (uint32_t j = 0; j < m; j++) {
    out[j].n = cnt[j];
    out[j].est = cnt[j] ? sum[j] / cnt[j] : NAN;
    out[j].lo = out[j].hi = out[j].est;
  }
  if (n < 2 || !B) goto done;
  /* rep[j * B + b]: column j's mean in resample b */
  double *rep = rs_xmalloc(sizeof *rep * m * B);
  uint64_t st = seed;
  for (uint32_t b = 0; b < B; b++) {
    for (uint32_t j = 0; j < m; j++) sum[j] = 0, cnt[j] = 0;
    for (uint32_t i = 0; i < n; i++) {
      const double *row = v + (size_t)(rs_boot_rng(&st) % n) * m;
      for (uint32_t j = 0; j < m; j++)
        if (!isnan(row[j])) sum[j] += row[j], cnt[j]++;
    }
    for (uint32_t j = 0; j < m; j++) rep[(size_t)j * B + b] = cnt[j] ? sum[j] / cnt[j] : out[j].est;
  }
  for (uint32_t j = 0; j < m; j++) {
    if (!out[j].n) continue;
    double *r = rep + (size_t)j * B;
    qsort(r, B, sizeof *r, cmpd);
    out[j].lo = rs_quantile_sorted(r, B, 2.5);
    out[j].hi = rs_quantile_sorted(r, B, 97.5);
    /* resampled means of bounded data can round past the estimate by an ulp */
    if (out[j].lo > out[j].est) out[j].lo = out[j].est;
    if (out[j].hi < out[j].est) out[j].hi = out[j].est;
  }
  free(rep);
done:
  free(sum);
  free(cnt);
}

double rs_mcnemar_p(uint32_t b, uint32_t c) {
  uint32_t n = b + c;
  if (!n) return 1.0;
  if (n < 25) { /* exact: 2 * P(X <= min(b,c)), X ~ Binomial(n, 1/2), in logs to stay finite */
    uint32_t k = b < c ? b : c;
    double p = 0;
    for (uint32_t i = 0; i <= k; i++)
      p += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0));
    p *= 2;
    return p > 1 ? 1 : p;
  }
  double d = fabs((double)b - (double)c) - 1;
  if (d < 0) d = 0;
  double chi2 = d * d / n;
  return erfc(sqrt(chi2 / 2)); /* survival of chi-square with 1 degree of freedom */
}
