/* SPDX-License-Identifier: BSD-3-Clause */
/* Timing helpers of the command-line tools and the benchmarks: a monotonic clock and the
   median of repetitions. Header-only, no Tessera dependency (bench/bench_util.h includes it, so
   the tools never reach into bench/). */
#ifndef TSR_CLI_TIMING_H
#define TSR_CLI_TIMING_H

#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* qsort comparison of doubles, ascending. */
static inline int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v in place); n >= 1. */
static inline double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif /* TSR_CLI_TIMING_H */
