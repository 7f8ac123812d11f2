/* bootstrap.h - seeded bootstrap intervals, quantiles and McNemar's test for the reports.
 * Everything is deterministic: the same inputs and seed give the same intervals. */
#ifndef RS_BOOTSTRAP_H
#define RS_BOOTSTRAP_H
#include <stdint.h>

#define RS_BOOT_RESAMPLES 1000
#define RS_BOOT_SEED 0x5eed5eedull

typedef struct {
  double est, lo, hi; /* mean and its 95% percentile-bootstrap interval; NaN when no data */
  uint32_t n;         /* items that had a value */
} rs_ci;

/* splitmix64: the caller keeps the state, so there is no hidden global generator. */
uint64_t rs_boot_rng(uint64_t *state);

/* Means of the m columns of v (n rows x m columns, row-major) with 95% intervals from B
 * resamples of the n rows; one row resample is shared by all columns (so a paired difference
 * column is resampled with its pair). NaN entries are missing values: skipped in that column. */
void rs_boot_means(const double *v, uint32_t n, uint32_t m, uint32_t B, uint64_t seed, rs_ci *out);

/* Quantile (0..100) of an ascending array, linear interpolation (same rule as rs_percentile). */
double rs_quantile_sorted(const double *s, uint32_t n, double pct);

/* McNemar's test on discordant pairs b (A only passes) and c (B only passes): two-sided p-value,
 * exact binomial when b + c < 25, else chi-square with continuity correction. 1 when b+c = 0. */
double rs_mcnemar_p(uint32_t b, uint32_t c);

#endif
