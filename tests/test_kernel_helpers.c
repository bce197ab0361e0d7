/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The helpers shared by the CPU backend and the GPU kernels (src/core/convert.h,
 * src/core/layout.h), tested directly and through tsr_astype on the test device: saturating
 * float -> integer conversion at and around each edge of int32 and int64 (and NaN, the
 * infinities), and axis collapsing with its flat-index offsets against a plain N-d walk.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tsr_test.h"

#include "core/convert.h"
#include "core/layout.h"

static tsr_device dev; /* the device under test, set in main() */

typedef struct edge32 {
  double x;
  int32_t want;
} edge32;
typedef struct edge64 {
  double x;
  int64_t want;
} edge64;

/* Truncation toward zero inside the range; saturation from the first double past each end. */
static const edge32 edges32[] = {
    {2147483647.0, INT32_MAX},
    {2147483647.75, INT32_MAX},
    {2147483648.0, INT32_MAX},
    {2147483649.0, INT32_MAX},
    {1e300, INT32_MAX},
    {INFINITY, INT32_MAX},
    {2147483646.5, 2147483646},
    {-2147483648.0, INT32_MIN},
    {-2147483648.75, INT32_MIN},
    {-2147483649.0, INT32_MIN},
    {-1e300, INT32_MIN},
    {-INFINITY, INT32_MIN},
    {-2147483647.5, -2147483647},
    {-0.75, 0},
    {0.75, 0},
    {-1.5, -1},
    {NAN, 0},
};
/* 2^63 - 1024 is the largest double below 2^63; -2^63 is exact; the next double below it is
   -2^63 - 2048. */
static const edge64 edges64[] = {
    {9223372036854774784.0, INT64_C(9223372036854774784)},
    {9223372036854775808.0, INT64_MAX},
    {1e300, INT64_MAX},
    {INFINITY, INT64_MAX},
    {-9223372036854775808.0, INT64_MIN},
    {-9223372036854777856.0, INT64_MIN},
    {-1e300, INT64_MIN},
    {-INFINITY, INT64_MIN},
    {-9223372036854774784.0, -INT64_C(9223372036854774784)},
    {2251799813685248.5, INT64_C(2251799813685248)}, /* 2^51 + 0.5 is exact */
    {-2.5, -2},
    {NAN, 0},
};
#define N32 (sizeof edges32 / sizeof edges32[0])
#define N64 (sizeof edges64 / sizeof edges64[0])

static void test_convert_edges(void **state) {
  (void)state;
  for (size_t i = 0; i < N32; i++) {
    if (tsr__sat_f64_to_i32(edges32[i].x) != edges32[i].want)
      print_error("i32(%.17g) = %d, want %d\n", edges32[i].x, tsr__sat_f64_to_i32(edges32[i].x),
                  edges32[i].want);
    assert_int_equal(tsr__sat_f64_to_i32(edges32[i].x), edges32[i].want);
  }
  for (size_t i = 0; i < N64; i++) {
    if (tsr__sat_f64_to_i64(edges64[i].x) != edges64[i].want)
      print_error("i64(%.17g) = %lld, want %lld\n", edges64[i].x,
                  (long long)tsr__sat_f64_to_i64(edges64[i].x), (long long)edges64[i].want);
    assert_true(tsr__sat_f64_to_i64(edges64[i].x) == edges64[i].want);
  }
}

/* The same edges through tsr_astype on the test device (the backend's conversion kernels). */
static void test_astype_edges(void **state) {
  (void)state;
  double x32[N32], x64[N64];
  for (size_t i = 0; i < N32; i++)
    x32[i] = edges32[i].x;
  for (size_t i = 0; i < N64; i++)
    x64[i] = edges64[i].x;
  int64_t n32 = (int64_t)N32, n64 = (int64_t)N64;
  tsr_array *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  TSR_ASSERT_OK(tsr_empty(1, &n32, TSR_F64, dev, &a));
  TSR_ASSERT_OK(tsr_array_write(a, x32, sizeof x32));
  TSR_ASSERT_OK(tsr_astype(a, TSR_I32, &b));
  int32_t got32[N32];
  TSR_ASSERT_OK(tsr_array_read(b, got32, sizeof got32));
  for (size_t i = 0; i < N32; i++)
    assert_int_equal(got32[i], edges32[i].want);
  TSR_ASSERT_OK(tsr_empty(1, &n64, TSR_F64, dev, &c));
  TSR_ASSERT_OK(tsr_array_write(c, x64, sizeof x64));
  TSR_ASSERT_OK(tsr_astype(c, TSR_I64, &d));
  int64_t got64[N64];
  TSR_ASSERT_OK(tsr_array_read(d, got64, sizeof got64));
  for (size_t i = 0; i < N64; i++)
    assert_true(got64[i] == edges64[i].want);
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
  tsr_array_release(d);
}

/* Collapsed shapes address the same elements as the original N-d walk, for random shapes
   (with size-1 axes) and strides that are contiguous, padded, transposed or broadcast. */
static void test_collapse_offsets(void **state) {
  (void)state;
  uint64_t r = 12345;
  for (int trial = 0; trial < 500; trial++) {
    int ndim = (int)(r % 5) + 1;
    int64_t shape[TSR_MAX_DIMS], st[2][TSR_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
      r = r * 6364136223846793005ULL + 1442695040888963407ULL;
      shape[d] = (int64_t)(r >> 61) + 1; /* 1..8 */
    }
    /* operand 0 C-contiguous; operand 1 picks per trial: padded rows, reversed axes, or a
       broadcast axis */
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
      st[0][d] = s;
      s *= shape[d];
    }
    int kind = trial % 3;
    s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
      int dd = kind == 1 ? ndim - 1 - d : d;
      st[1][dd] = s;
      s *= shape[dd] + (kind == 0 && d == ndim - 1 ? 3 : 0);
    }
    if (kind == 2) st[1][trial % ndim] = 0;
    const int64_t *strides[2] = {st[0], st[1]};
    int64_t cshape[TSR_MAX_DIMS], cst[2][TSR_MAX_DIMS], size = 0;
    int cnd = tsr__collapse_axes(ndim, shape, 2, strides, cshape, cst, &size);
    assert_true(cnd >= 1 && cnd <= ndim);
    int64_t total = 1;
    for (int d = 0; d < ndim; d++)
      total *= shape[d];
    assert_true(size == total);
    for (int64_t flat = 0; flat < total; flat++) {
      int64_t want[2] = {0, 0}, rem = flat;
      for (int d = ndim - 1; d >= 0; d--) {
        int64_t i = rem % shape[d];
        rem /= shape[d];
        want[0] += i * st[0][d];
        want[1] += i * st[1][d];
      }
      int64_t got[2];
      tsr__flat_offsets(cnd, cshape, 2, (const int64_t(*)[TSR_MAX_DIMS])cst, flat, got);
      assert_true(got[0] == want[0] && got[1] == want[1]);
    }
    r = r * 6364136223846793005ULL + 1442695040888963407ULL;
  }
  /* A scalar (ndim 0) is one element at offset 0. */
  int64_t cshape[TSR_MAX_DIMS], cst[1][TSR_MAX_DIMS], size = 0;
  const int64_t *none[1] = {NULL};
  assert_int_equal(tsr__collapse_axes(0, NULL, 1, none, cshape, cst, &size), 1);
  assert_true(size == 1 && cshape[0] == 1);
}

int main(void) {
  dev = tsr_test_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_convert_edges),
      cmocka_unit_test(test_astype_edges),
      cmocka_unit_test(test_collapse_offsets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
