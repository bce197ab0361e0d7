/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Float -> integer conversion defined for every input, the one copy used by the core, the CPU
 * backend and the GPU kernels (header-only, so device code can inline it): truncation toward
 * zero, saturation to the integer limits, NaN -> 0 (what tsr_astype documents; a plain C cast
 * of an out-of-range value is undefined behaviour).
 *
 * Bounds: every double in (-2^31 - 1, 2^31) truncates into int32 range, so the cut-offs are
 * x >= 2^31 and x <= -2^31 - 1 (both exact doubles). For int64, 2^63 is the first double
 * above the range and -2^63 is exactly representable, so the cut-offs are x >= 2^63 and
 * x < -2^63. (tests/test_kernel_helpers.c checks the values at and around each edge.)
 */
#ifndef TSR_CORE_CONVERT_H
#define TSR_CORE_CONVERT_H

#include <stdint.h>

#include "core/layout.h" /* TSR__HOST_DEVICE */

TSR__HOST_DEVICE static inline int32_t tsr__sat_f64_to_i32(double x) {
  if (x != x) return 0;
  if (x >= 2147483648.0) return INT32_MAX;
  if (x <= -2147483649.0) return INT32_MIN;
  return (int32_t)x;
}

TSR__HOST_DEVICE static inline int64_t tsr__sat_f64_to_i64(double x) {
  if (x != x) return 0;
  if (x >= 9223372036854775808.0) return INT64_MAX;
  if (x < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)x;
}

#endif /* TSR_CORE_CONVERT_H */
