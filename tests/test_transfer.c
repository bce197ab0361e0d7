/* SPDX-License-Identifier: BSD-3-Clause */
/* Transfers: tsr_array_to, tsr_array_read and tsr_array_write (exact round trips, strided
   views), and a .npy save/load round trip of a strided view. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_util.h"

static tsr_device dev;

static const tsr_dtype all_dtypes[TSR_NUM_DTYPES] = {TSR_F32, TSR_F64, TSR_I32, TSR_I64};

/* Bit patterns survive a write/read round trip unchanged (NaN payloads, -0, denormals). */
static void test_write_read_bits(void **state) {
  (void)state;
  static const int64_t sizes[] = {0, 1, 7, 127, 1021, 100003};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int d = 0; d < TSR_NUM_DTYPES; d++) {
      size_t es = 0;
      TSR_ASSERT_OK(tsr_dtype_size(all_dtypes[d], &es));
      size_t bytes = (size_t)sizes[s] * es;
      unsigned char *src = malloc(bytes + 1), *dst = malloc(bytes + 1);
      assert_non_null(src);
      assert_non_null(dst);
      for (size_t i = 0; i < bytes; i++)
        src[i] = (unsigned char)((i * 2654435761u) >> 13);
      tsr_array *a = NULL;
      TSR_ASSERT_OK(tsr_empty(1, &sizes[s], all_dtypes[d], dev, &a));
      TSR_ASSERT_OK(tsr_array_write(a, src, bytes));
      memset(dst, 0xAB, bytes + 1);
      TSR_ASSERT_OK(tsr_array_read(a, dst, bytes));
      assert_memory_equal(src, dst, bytes);
      assert_int_equal(dst[bytes], 0xAB); /* nothing written past the end */
      tsr_array_release(a);
      free(src);
      free(dst);
    }
}

/* tsr_array_to: a contiguous copy on the target, for every pair of (CPU, device under test). */
static void test_array_to_round_trip(void **state) {
  (void)state;
  tsr_device targets[2] = {TSR_CPU, dev};
  int64_t shape[3] = {3, 13, 7};
  for (int d = 0; d < TSR_NUM_DTYPES; d++)
    for (int from = 0; from < 2; from++)
      for (int to = 0; to < 2; to++) {
        double *host = NULL;
        tsr_array *a = tsr_test_random_array(3, shape, all_dtypes[d], targets[from],
                                             (uint64_t)(d * 4 + from * 2 + to), &host);
        tsr_array *b = NULL, *c = NULL;
        TSR_ASSERT_OK(tsr_array_to(a, targets[to], &b));
        assert_ptr_not_equal(a, b);
        tsr_array_props info;
        TSR_ASSERT_OK(tsr_array_info(b, &info));
        assert_true(tsr_device_equal(info.device, targets[to]));
        assert_int_equal(info.contiguous, 1);
        TSR_ASSERT_OK(tsr_array_to(b, targets[from], &c));
        double *got = ct_read_checked(c, all_dtypes[d], 3, shape);
        ct_assert_close(got, host, 3 * 13 * 7, 0, 0, "array_to round trip");
        free(got);
        /* b is a copy: changing a does not change it. */
        tsr_array *z = NULL;
        TSR_ASSERT_OK(tsr_zeros(0, NULL, all_dtypes[d], targets[from], &z));
        TSR_ASSERT_OK(tsr_assign(a, z));
        got = tsr_test_read_f64(b);
        ct_assert_close(got, host, 3 * 13 * 7, 0, 0, "copy after its source changed");
        free(got);
        tsr_array_release(z);
        tsr_array_release(a);
        tsr_array_release(b);
        tsr_array_release(c);
        free(host);
      }
}

/* tsr_array_to of a non-contiguous view gives the view's elements in C order. */
static void test_array_to_of_view(void **state) {
  (void)state;
  int64_t shape[2] = {127, 13};
  double *host = NULL;
  tsr_array *a = tsr_test_random_array(2, shape, TSR_F64, dev, 5, &host);
  tsr_array *t = NULL, *s = NULL, *b = NULL;
  TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));      /* (13,127) */
  TSR_ASSERT_OK(tsr_slice(t, 1, 100, 2, -7, &s)); /* columns 100, 93, ..., 9 */
  TSR_ASSERT_OK(tsr_array_to(s, TSR_CPU, &b));
  int64_t ncol = (100 - 2 - 1) / 7 + 1;
  int64_t want[2] = {13, ncol};
  double *got = ct_read_checked(b, TSR_F64, 2, want);
  for (int64_t i = 0; i < 13; i++)
    for (int64_t j = 0; j < ncol; j++) {
      double ref = host[(100 - 7 * j) * 13 + i];
      if (got[i * ncol + j] != ref) {
        print_error("element (%lld,%lld): %g, expected %g\n", (long long)i, (long long)j,
                    got[i * ncol + j], ref);
        fail();
      }
    }
  free(got);
  free(host);
  tsr_array_release(b);
  tsr_array_release(s);
  tsr_array_release(t);
  tsr_array_release(a);
}

/* tsr_array_write into a strided view changes exactly the view's elements. */
static void test_write_strided_view(void **state) {
  (void)state;
  for (int d = 0; d < TSR_NUM_DTYPES; d++) {
    tsr_dtype dt = all_dtypes[d];
    int64_t shape[2] = {8, 9};
    double *host = NULL;
    tsr_array *a = tsr_test_random_array(2, shape, dt, dev, 40 + (uint64_t)d, &host);
    tsr_array *t = NULL, *v = NULL;
    TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));               /* (9,8) */
    TSR_ASSERT_OK(tsr_slice(t, 0, 1, TSR_SLICE_END, 3, &v)); /* rows 1,4,7 of t: columns of a */
    int64_t n = 3 * 8;
    double *vals = ct_random_host(n, dt, 50 + (uint64_t)d, -1000, 1000);
    tsr_array *src = tsr_test_array_from_f64(2, (int64_t[]){3, 8}, dt, dev, vals);
    /* Write via the host: convert vals to the dtype's bytes. */
    size_t es = 0;
    TSR_ASSERT_OK(tsr_dtype_size(dt, &es));
    void *buf = malloc((size_t)n * es);
    assert_non_null(buf);
    TSR_ASSERT_OK(tsr_array_read(src, buf, (size_t)n * es));
    TSR_ASSERT_OK(tsr_array_write(v, buf, (size_t)n * es));
    for (int64_t r = 0; r < 3; r++)
      for (int64_t c = 0; c < 8; c++)
        host[c * 9 + (1 + 3 * r)] = vals[r * 8 + c];
    double *got = tsr_test_read_f64(a);
    ct_assert_close(got, host, 72, 0, 0, "base after writing a strided view");
    free(got);
    /* Reading the view gives back what was written. */
    void *back = malloc((size_t)n * es);
    assert_non_null(back);
    TSR_ASSERT_OK(tsr_array_read(v, back, (size_t)n * es));
    assert_memory_equal(back, buf, (size_t)n * es);
    free(back);
    free(buf);
    free(vals);
    free(host);
    tsr_array_release(src);
    tsr_array_release(v);
    tsr_array_release(t);
    tsr_array_release(a);
  }
}

/* tsr_npy_save of a strided view on the device, tsr_npy_load back: the view's values in C
   order, exactly, for every dtype (and a 0-d array). */
static void test_npy_round_trip_of_view(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "core_transfer_%ld.npy", (long)getpid());
  for (int d = 0; d < TSR_NUM_DTYPES; d++) {
    int64_t shape[2] = {13, 7};
    double *host = NULL;
    tsr_array *a = tsr_test_random_array(2, shape, all_dtypes[d], dev, 90 + (uint64_t)d, &host);
    tsr_array *t = NULL, *v = NULL, *back = NULL;
    TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));                  /* (7,13) */
    TSR_ASSERT_OK(tsr_slice(t, 1, -1, -TSR_SLICE_END, -2, &v)); /* (7,7) reversed columns */
    TSR_ASSERT_OK(tsr_npy_save(path, v));
    TSR_ASSERT_OK(tsr_npy_load(path, dev, &back));
    int64_t want[2] = {7, 7};
    double *got = ct_read_checked(back, all_dtypes[d], 2, want);
    for (int64_t i = 0; i < 7; i++)
      for (int64_t j = 0; j < 7; j++) {
        double ref = host[(12 - 2 * j) * 7 + i];
        if (got[i * 7 + j] != ref) {
          print_error("%s (%lld,%lld): %g, expected %g\n", tsr_dtype_name(all_dtypes[d]),
                      (long long)i, (long long)j, got[i * 7 + j], ref);
          fail();
        }
      }
    free(got);
    free(host);
    tsr_array_release(back);
    tsr_array_release(v);
    tsr_array_release(t);
    tsr_array_release(a);
  }
  tsr_array *s = NULL, *back = NULL;
  TSR_ASSERT_OK(tsr_full(0, NULL, TSR_F64, dev, -2.5, &s));
  TSR_ASSERT_OK(tsr_npy_save(path, s));
  TSR_ASSERT_OK(tsr_npy_load(path, dev, &back));
  double *got = ct_read_checked(back, TSR_F64, 0, NULL);
  assert_true(got[0] == -2.5);
  free(got);
  tsr_array_release(back);
  tsr_array_release(s);
  assert_int_equal(remove(path), 0);
}

/* A 0-d array reads and writes one element. */
static void test_read_scalar(void **state) {
  (void)state;
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_full(0, NULL, TSR_I64, dev, -123456789012.0, &a));
  int64_t x = 0;
  TSR_ASSERT_OK(tsr_array_read(a, &x, sizeof x));
  assert_true(x == -123456789012LL);
  int64_t y = 77;
  TSR_ASSERT_OK(tsr_array_write(a, &y, sizeof y));
  TSR_ASSERT_OK(tsr_array_read(a, &x, sizeof x));
  assert_true(x == 77);
  tsr_array_release(a);
}

int main(void) {
  dev = tsr_test_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_write_read_bits),        cmocka_unit_test(test_array_to_round_trip),
      cmocka_unit_test(test_array_to_of_view),       cmocka_unit_test(test_write_strided_view),
      cmocka_unit_test(test_npy_round_trip_of_view), cmocka_unit_test(test_read_scalar),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
