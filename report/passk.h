/* passk.h - the unbiased pass@k estimator (Chen et al. 2021) and small statistics helpers. */
#ifndef RS_PASSK_H
#define RS_PASSK_H
#include <stdint.h>

/* 1 - C(n-c, k) / C(n, k) = 1 - prod_{i=n-c+1..n} (1 - k/i); exactly 1 when n - c < k.
 * Returns -1 when k > n (undefined). */
double rs_passk(uint32_t n, uint32_t c, uint32_t k);
/* Percentile (0..100) of a copy of v (linear interpolation between order statistics). */
double rs_percentile(const double *v, uint32_t n, double pct);

#endif
