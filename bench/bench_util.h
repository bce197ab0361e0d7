/* SPDX-License-Identifier: BSD-3-Clause */
/* Timing helpers shared by the benchmarks: the tools' one copy (src/cli/timing.h). */
#ifndef TSR_BENCH_UTIL_H
#define TSR_BENCH_UTIL_H
#include "../src/cli/timing.h"
#endif /* TSR_BENCH_UTIL_H */
