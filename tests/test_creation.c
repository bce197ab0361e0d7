/* SPDX-License-Identifier: BSD-3-Clause */
/* Creating arrays: empty, zeros, full, arange, from_host; array_info; reference counting. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_util.h"

static tsr_device dev;

/* The real dtypes (core_util.h): the complex ones are checked in test_complex.c. */
static const tsr_dtype all_dtypes[] = CT_REAL_DTYPES;
#define N_DTYPES CT_COUNT(all_dtypes)
/* Every dtype, complex included: the tests that check no values. */
static const tsr_dtype every_dtype[] = CT_DTYPES;

static void check_info_contiguous(const tsr_array *a, tsr_dtype dtype, int ndim,
                                  const int64_t *shape) {
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(a, &info));
  assert_int_equal(info.dtype, dtype);
  assert_int_equal(info.ndim, ndim);
  int64_t size = 1, stride = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    assert_int_equal(info.shape[i], shape[i]);
    /* Strides of size-1 axes do not matter for C-contiguity; check the others. */
    if (shape[i] > 1) assert_int_equal(info.strides[i], stride);
    stride *= shape[i];
    size *= shape[i];
  }
  for (int i = ndim; i < TSR_MAX_DIMS; i++)
    assert_int_equal(info.shape[i], 1);
  assert_int_equal(info.size, size);
  assert_int_equal(info.offset, 0);
  assert_int_equal(info.contiguous, 1);
  assert_true(tsr_device_equal(info.device, dev));
}

/* Shapes with ragged sizes: scalar, empty, one, primes, and past any parallel threshold. */
static const struct {
  int ndim;
  int64_t shape[3];
} shapes[] = {{0, {0}},    {1, {0}},       {1, {1}},      {1, {7}},       {2, {13, 127}},
              {1, {1021}}, {3, {3, 0, 5}}, {1, {100003}}, {3, {2, 1, 5}}, {2, {1, 1}}};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

static void test_empty_info(void **state) {
  (void)state;
  for (size_t s = 0; s < NSHAPES; s++)
    for (int d = 0; d < CT_COUNT(every_dtype); d++) {
      tsr_array *a = NULL;
      TSR_ASSERT_OK(tsr_empty(shapes[s].ndim, shapes[s].shape, every_dtype[d], dev, &a));
      check_info_contiguous(a, every_dtype[d], shapes[s].ndim, shapes[s].shape);
      TSR_ASSERT_OK(tsr_array_release(a));
      TSR_ASSERT_OK(tsr_empty_ex(shapes[s].ndim, shapes[s].shape, every_dtype[d], dev,
                                 TSR_ALLOC_MANAGED, &a));
      check_info_contiguous(a, every_dtype[d], shapes[s].ndim, shapes[s].shape);
      TSR_ASSERT_OK(tsr_array_release(a));
    }
  /* ndim 0 with shape NULL is a scalar. */
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_empty(0, NULL, TSR_F64, dev, &a));
  check_info_contiguous(a, TSR_F64, 0, NULL);
  TSR_ASSERT_OK(tsr_array_release(a));
}

static void test_zeros_and_full(void **state) {
  (void)state;
  for (size_t s = 0; s < NSHAPES; s++)
    for (int d = 0; d < N_DTYPES; d++) {
      tsr_dtype dt = all_dtypes[d];
      int64_t n = tsr_test_numel(shapes[s].ndim, shapes[s].shape);
      tsr_array *z = NULL, *f = NULL;
      TSR_ASSERT_OK(tsr_zeros(shapes[s].ndim, shapes[s].shape, dt, dev, &z));
      TSR_ASSERT_OK(tsr_full(shapes[s].ndim, shapes[s].shape, dt, dev, -3.0, &f));
      check_info_contiguous(f, dt, shapes[s].ndim, shapes[s].shape);
      double *zx = tsr_test_read_f64(z), *fx = tsr_test_read_f64(f);
      for (int64_t i = 0; i < n; i++) {
        assert_true(zx[i] == 0.0);
        assert_true(fx[i] == -3.0);
      }
      free(zx);
      free(fx);
      tsr_array_release(z);
      tsr_array_release(f);
    }
}

/* tsr_full converts the value as C converts: truncation toward zero for integers. */
static void test_full_conversion(void **state) {
  (void)state;
  int64_t shape[1] = {5};
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_full(1, shape, TSR_I32, dev, -2.75, &a));
  int32_t i32[5];
  TSR_ASSERT_OK(tsr_array_read(a, i32, sizeof i32));
  for (int i = 0; i < 5; i++)
    assert_int_equal(i32[i], -2);
  tsr_array_release(a);

  TSR_ASSERT_OK(tsr_full(1, shape, TSR_I64, dev, 3.0e12 + 0.9, &a));
  int64_t i64[5];
  TSR_ASSERT_OK(tsr_array_read(a, i64, sizeof i64));
  for (int i = 0; i < 5; i++)
    assert_true(i64[i] == 3000000000000LL);
  tsr_array_release(a);

  TSR_ASSERT_OK(tsr_full(1, shape, TSR_F32, dev, 0.1, &a));
  float f32[5];
  TSR_ASSERT_OK(tsr_array_read(a, f32, sizeof f32));
  for (int i = 0; i < 5; i++)
    assert_true(f32[i] == 0.1f);
  tsr_array_release(a);

  TSR_ASSERT_OK(tsr_full(0, NULL, TSR_F64, dev, NAN, &a));
  double f64;
  TSR_ASSERT_OK(tsr_array_read(a, &f64, sizeof f64));
  assert_true(isnan(f64));
  tsr_array_release(a);
}

static void check_arange(double start, double stop, double step, tsr_dtype dtype, int64_t want_n) {
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_arange(start, stop, step, dtype, dev, &a));
  int64_t shape[1] = {want_n};
  double *x = ct_read_checked(a, dtype, 1, shape);
  for (int64_t i = 0; i < want_n; i++) {
    double ref = ct_round(dtype, start + (double)i * step);
    double tol = 4 * ct_eps(dtype) * (fabs(start) + fabs((double)i * step));
    if (fabs(x[i] - ref) > tol) {
      print_error("arange(%g, %g, %g, %s)[%lld] = %.17g, expected %.17g\n", start, stop, step,
                  tsr_dtype_name(dtype), (long long)i, x[i], ref);
      fail();
    }
  }
  free(x);
  tsr_array_release(a);
}

/* NumPy arange: ceil((stop - start) / step) elements, none when the range is empty. */
static void test_arange(void **state) {
  (void)state;
  for (int d = 0; d < N_DTYPES; d++) {
    tsr_dtype dt = all_dtypes[d];
    check_arange(0, 10, 1, dt, 10);
    check_arange(3, -4, -2, dt, 4); /* 3 1 -1 -3 */
    check_arange(5, 5, 1, dt, 0);
    check_arange(5, 2, 1, dt, 0);
    check_arange(2, 5, -1, dt, 0);
    check_arange(-7, 100003 - 7, 1, dt, 100003);
  }
  check_arange(0, 1, 0.1, TSR_F64, 10);
  check_arange(0.5, 2.0, 0.25, TSR_F32, 6);
  check_arange(1, 2, 0.3, TSR_F64, 4); /* ceil(3.33) */
  check_arange(-1.5, 1.5, 0.5, TSR_F32, 6);
}

static void test_from_host(void **state) {
  (void)state;
  for (size_t s = 0; s < NSHAPES; s++)
    for (int d = 0; d < N_DTYPES; d++) {
      tsr_dtype dt = all_dtypes[d];
      int64_t n = tsr_test_numel(shapes[s].ndim, shapes[s].shape);
      double *ref = NULL;
      tsr_array *a = tsr_test_random_array(shapes[s].ndim, shapes[s].shape, dt, dev,
                                           1000 + s * 4 + (uint64_t)d, &ref);
      check_info_contiguous(a, dt, shapes[s].ndim, shapes[s].shape);
      double *x = tsr_test_read_f64(a);
      ct_assert_close(x, ref, n, 0, 0, "from_host round trip");
      free(x);
      free(ref);
      tsr_array_release(a);
    }
  /* data may be NULL when there are no elements. */
  int64_t shape[2] = {4, 0};
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_from_host(2, shape, TSR_F32, dev, NULL, &a));
  check_info_contiguous(a, TSR_F32, 2, shape);
  tsr_array_release(a);
}

/* The host data is copied: changing it afterwards does not change the array. */
static void test_from_host_copies(void **state) {
  (void)state;
  double data[3] = {1.5, -2.5, 3.25};
  int64_t shape[1] = {3};
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_from_host(1, shape, TSR_F64, dev, data, &a));
  data[0] = 99;
  double back[3];
  TSR_ASSERT_OK(tsr_array_read(a, back, sizeof back));
  assert_true(back[0] == 1.5 && back[1] == -2.5 && back[2] == 3.25);
  tsr_array_release(a);
}

/* retain/release: the array lives until the last reference is dropped; NULL is a no-op. */
static void test_retain_release(void **state) {
  (void)state;
  int64_t shape[1] = {13};
  tsr_array *a = tsr_test_random_array(1, shape, TSR_F64, dev, 7, NULL);
  TSR_ASSERT_OK(tsr_array_retain(a));
  TSR_ASSERT_OK(tsr_array_retain(a));
  TSR_ASSERT_OK(tsr_array_release(a));
  TSR_ASSERT_OK(tsr_array_release(a));
  double *x = tsr_test_read_f64(a); /* still alive: one reference left */
  free(x);
  TSR_ASSERT_OK(tsr_array_release(a));
  TSR_ASSERT_OK(tsr_array_release(NULL));
}

int main(void) {
  dev = tsr_test_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_info),      cmocka_unit_test(test_zeros_and_full),
      cmocka_unit_test(test_full_conversion), cmocka_unit_test(test_arange),
      cmocka_unit_test(test_from_host),       cmocka_unit_test(test_from_host_copies),
      cmocka_unit_test(test_retain_release),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
