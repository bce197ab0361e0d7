/* SPDX-License-Identifier: BSD-3-Clause */
/* tsr_from_host_view: zero-copy CPU arrays over caller-owned memory (what the BLAS drop-in
   wraps its callers' matrices with). Stack buffers make ASan catch any attempt to free them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_test.h"

/* A column-major 3 x 4 matrix with leading dimension 5 reads back in C order. */
static void test_column_major(void **state) {
  (void)state;
  double mem[5 * 4];
  tsr_test_fill_random(mem, 20, 11);
  int64_t shape[2] = {3, 4}, strides[2] = {1, 5};
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_from_host_view(2, shape, strides, TSR_F64, mem, &a));
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(a, &info));
  assert_int_equal(info.ndim, 2);
  assert_int_equal(info.shape[0], 3);
  assert_int_equal(info.shape[1], 4);
  assert_int_equal(info.strides[0], 1);
  assert_int_equal(info.strides[1], 5);
  assert_int_equal(info.device.kind, TSR_DEVICE_CPU);
  assert_int_equal(info.contiguous, 0);
  double got[12];
  TSR_ASSERT_OK(tsr_array_read(a, got, sizeof got));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      assert_true(got[i * 4 + j] == mem[i + j * 5]);
  TSR_ASSERT_OK(tsr_array_release(a));
}

/* Negative strides: the view starts at `data` and walks backwards. */
static void test_negative_stride(void **state) {
  (void)state;
  float mem[10];
  for (int i = 0; i < 10; ++i)
    mem[i] = (float)(i * i) + 0.5f;
  int64_t shape[1] = {10}, strides[1] = {-1};
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_from_host_view(1, shape, strides, TSR_F32, &mem[9], &a));
  float got[10];
  TSR_ASSERT_OK(tsr_array_read(a, got, sizeof got));
  for (int i = 0; i < 10; ++i)
    assert_true(got[i] == mem[9 - i]);
  TSR_ASSERT_OK(tsr_array_release(a));
}

/* Writes reach the caller's memory; views outlive the array they came from; the last
   release leaves the memory alone (a free of this stack buffer would abort under ASan). */
static void test_write_through_and_views(void **state) {
  (void)state;
  double mem[6] = {0};
  int64_t shape[2] = {2, 3};
  tsr_array *a = NULL, *t = NULL, *src = NULL;
  TSR_ASSERT_OK(tsr_from_host_view(2, shape, NULL, TSR_F64, mem, &a)); /* C-contiguous */
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(a, &info));
  assert_int_equal(info.contiguous, 1);
  TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));
  TSR_ASSERT_OK(tsr_array_release(a));
  double vals[6];
  tsr_test_fill_random(vals, 6, 5);
  int64_t tshape[2] = {3, 2};
  TSR_ASSERT_OK(tsr_from_host(2, tshape, TSR_F64, TSR_CPU, vals, &src));
  TSR_ASSERT_OK(tsr_assign(t, src)); /* mem = vals^T, written through the transposed view */
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      assert_true(mem[j * 3 + i] == vals[i * 2 + j]);
  TSR_ASSERT_OK(tsr_array_release(src));
  TSR_ASSERT_OK(tsr_array_release(t));
  assert_true(mem[0] == vals[0]); /* still ours */
}

/* A broadcast view (stride 0) reads one element many times and refuses every write; the
   memory is left as it was. */
static void test_broadcast_view_read_only(void **state) {
  (void)state;
  double mem[3];
  tsr_test_fill_random(mem, 3, 21);
  double keep[3];
  memcpy(keep, mem, sizeof mem);
  int64_t shape[2] = {4, 3}, strides[2] = {0, 1};
  tsr_array *a = NULL, *src = NULL, *b = NULL;
  TSR_ASSERT_OK(tsr_from_host_view(2, shape, strides, TSR_F64, mem, &a));
  double got[12];
  TSR_ASSERT_OK(tsr_array_read(a, got, sizeof got));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      assert_true(got[i * 3 + j] == mem[j]);
  double vals[12];
  tsr_test_fill_random(vals, 12, 22);
  TSR_ASSERT_STATUS(tsr_array_write(a, vals, sizeof vals), TSR_ERR_INVALID_ARGUMENT,
                    "tsr_array_write: a (shape 4x3) is a broadcast view: axis 0 has stride 0");
  TSR_ASSERT_OK(tsr_from_host(2, shape, TSR_F64, TSR_CPU, vals, &src));
  TSR_ASSERT_STATUS(tsr_assign(a, src), TSR_ERR_INVALID_ARGUMENT, "tsr_assign: dst");
  int64_t sb[2] = {3, 3};
  TSR_ASSERT_OK(tsr_from_host(2, sb, TSR_F64, TSR_CPU, vals, &b));
  TSR_ASSERT_STATUS(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, src, b, 0.0, a),
                    TSR_ERR_INVALID_ARGUMENT, "broadcast view");
  assert_memory_equal(mem, keep, sizeof mem);
  TSR_ASSERT_OK(tsr_array_release(b));
  TSR_ASSERT_OK(tsr_array_release(src));
  TSR_ASSERT_OK(tsr_array_release(a));
}

/* Two views of the same caller memory are two buffers: tsr_assign between overlapping ones
   must still behave like memmove (the source is staged), and disjoint ones copy directly. */
static void test_assign_overlapping_views(void **state) {
  (void)state;
  double mem[10];
  tsr_test_fill_random(mem, 10, 23);
  double old[10];
  memcpy(old, mem, sizeof mem);
  int64_t shape[1] = {9};
  tsr_array *lo = NULL, *hi = NULL;
  TSR_ASSERT_OK(tsr_from_host_view(1, shape, NULL, TSR_F64, mem, &lo));
  TSR_ASSERT_OK(tsr_from_host_view(1, shape, NULL, TSR_F64, mem + 1, &hi));
  TSR_ASSERT_OK(tsr_assign(hi, lo)); /* mem[1..9] = old mem[0..8] */
  assert_true(mem[0] == old[0]);
  for (int i = 1; i < 10; ++i)
    assert_true(mem[i] == old[i - 1]);
  memcpy(mem, old, sizeof mem);
  TSR_ASSERT_OK(tsr_assign(lo, hi)); /* mem[0..8] = old mem[1..9] */
  for (int i = 0; i < 9; ++i)
    assert_true(mem[i] == old[i + 1]);
  assert_true(mem[9] == old[9]);
  TSR_ASSERT_OK(tsr_array_release(lo));
  TSR_ASSERT_OK(tsr_array_release(hi));
}

/* Empty views need no memory. */
static void test_empty(void **state) {
  (void)state;
  int64_t shape[2] = {0, 7};
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_from_host_view(2, shape, NULL, TSR_F32, NULL, &a));
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(a, &info));
  assert_int_equal(info.size, 0);
  TSR_ASSERT_OK(tsr_array_release(a));
}

static void test_bad_input(void **state) {
  (void)state;
  double mem[8] = {0};
  int64_t shape[2] = {2, 2}, strides[2] = {2, 1};
  tsr_array *a = (tsr_array *)mem; /* must be reset to NULL on failure */
  TSR_ASSERT_STATUS(tsr_from_host_view(2, shape, strides, TSR_F64, mem, NULL), TSR_ERR_NULL_POINTER,
                    "out");
  TSR_ASSERT_STATUS(tsr_from_host_view(2, shape, strides, TSR_F64, NULL, &a), TSR_ERR_NULL_POINTER,
                    "data");
  assert_null(a);
  TSR_ASSERT_STATUS(tsr_from_host_view(2, NULL, strides, TSR_F64, mem, &a), TSR_ERR_NULL_POINTER,
                    "shape");
  TSR_ASSERT_STATUS(tsr_from_host_view(9, shape, strides, TSR_F64, mem, &a),
                    TSR_ERR_INVALID_ARGUMENT, "ndim");
  int64_t neg[2] = {2, -1};
  TSR_ASSERT_STATUS(tsr_from_host_view(2, neg, strides, TSR_F64, mem, &a), TSR_ERR_INVALID_ARGUMENT,
                    "shape[1]");
  TSR_ASSERT_STATUS(tsr_from_host_view(2, shape, strides, (tsr_dtype)42, mem, &a), TSR_ERR_DTYPE,
                    NULL);
  TSR_ASSERT_STATUS(tsr_from_host_view(2, shape, strides, TSR_F64, (char *)mem + 4, &a),
                    TSR_ERR_INVALID_ARGUMENT, "aligned");
  int64_t huge[2] = {INT64_MAX / 2, 1};
  TSR_ASSERT_STATUS(tsr_from_host_view(2, shape, huge, TSR_F64, mem, &a), TSR_ERR_OVERFLOW, NULL);
  int64_t big_shape[2] = {3, 3}, spread[2] = {INT64_MAX / 2, INT64_MIN / 2};
  TSR_ASSERT_STATUS(tsr_from_host_view(2, big_shape, spread, TSR_F64, mem, &a), TSR_ERR_OVERFLOW,
                    NULL);
  assert_null(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_column_major),
      cmocka_unit_test(test_negative_stride),
      cmocka_unit_test(test_write_through_and_views),
      cmocka_unit_test(test_empty),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_broadcast_view_read_only),
      cmocka_unit_test(test_assign_overlapping_views),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
