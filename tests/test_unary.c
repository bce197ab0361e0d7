/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Elementwise unary operators against a float64 reference on random inputs: every operator
 * and dtype it supports, ragged sizes, non-contiguous inputs, integer wrap-around, special
 * values, and TSR_ERR_DTYPE for the float-only operators on integers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_util.h"

static tsr_device dev;

/* The real dtypes (core_util.h): the complex ones are checked in test_complex.c. */
static const tsr_dtype all_dtypes[] = CT_REAL_DTYPES;
#define N_DTYPES CT_COUNT(all_dtypes)
static const char *op_names[TSR_NUM_UNARY_OPS] = {"neg",  "abs",     "exp",  "log", "sqrt",
                                                  "tanh", "sigmoid", "relu", "conj"};

static int is_int(tsr_dtype dt) {
  return dt == TSR_I32 || dt == TSR_I64;
}
static int int_ok(tsr_unary_op op) {
  return op == TSR_NEG || op == TSR_ABS || op == TSR_RELU || op == TSR_CONJ;
}

static double ref_op(tsr_unary_op op, tsr_dtype dt, double x) {
  double v = 0;
  switch (op) {
  case TSR_NEG: v = -x; break;
  case TSR_ABS: v = fabs(x); break;
  case TSR_EXP: v = exp(x); break;
  case TSR_LOG: v = log(x); break;
  case TSR_SQRT: v = sqrt(x); break;
  case TSR_TANH: v = tanh(x); break;
  case TSR_SIGMOID: v = 1.0 / (1.0 + exp(-x)); break;
  case TSR_RELU: v = x > 0 ? x : 0.0; break;
  case TSR_CONJ: v = x; break; /* the identity for real and integer dtypes */
  }
  return ct_round(dt, v);
}

/* neg/abs/relu/sqrt are exact (sqrt is correctly rounded by IEEE); the libm functions get
   a few ulps, sigmoid a few more (two roundings inside). */
static double op_rtol(tsr_unary_op op, tsr_dtype dt) {
  switch (op) {
  case TSR_NEG:
  case TSR_ABS:
  case TSR_RELU:
  case TSR_CONJ: return 0;
  case TSR_SQRT: return 2 * ct_eps(dt);
  case TSR_SIGMOID: return 16 * ct_eps(dt);
  default: return 8 * ct_eps(dt);
  }
}

static double *input_values(tsr_unary_op op, tsr_dtype dt, int64_t n, uint64_t seed) {
  if (is_int(dt)) return ct_random_host(n, dt, seed, -1000, 1000);
  if (op == TSR_LOG || op == TSR_SQRT) return ct_random_host(n, dt, seed, 1e-3, 50);
  if (op == TSR_EXP) return ct_random_host(n, dt, seed, -20, 20);
  return ct_random_host(n, dt, seed, -6, 6);
}

static void check_array(tsr_unary_op op, const tsr_array *a, const double *ha) {
  tsr_array_props ia;
  TSR_ASSERT_OK(tsr_array_info(a, &ia));
  tsr_array *out = NULL;
  tsr_status st = tsr_unary(op, a, &out);
  if (st != TSR_OK)
    print_error("%s %s: %s\n", op_names[op], tsr_dtype_name(ia.dtype), tsr_last_error());
  assert_int_equal(st, TSR_OK);
  tsr_array_props io;
  TSR_ASSERT_OK(tsr_array_info(out, &io));
  assert_int_equal(io.contiguous, 1);
  double *got = ct_read_checked(out, ia.dtype, ia.ndim, ia.shape);
  double *ref = malloc((size_t)(ia.size ? ia.size : 1) * sizeof(double));
  assert_non_null(ref);
  for (int64_t i = 0; i < ia.size; i++)
    ref[i] = ref_op(op, ia.dtype, ha[i]);
  char what[64];
  snprintf(what, sizeof what, "%s %s", op_names[op], tsr_dtype_name(ia.dtype));
  ct_assert_close(got, ref, ia.size, op_rtol(op, ia.dtype), 0, what);
  free(got);
  free(ref);
  tsr_array_release(out);
}

static void test_all_ops_dtypes_sizes(void **state) {
  (void)state;
  static const struct {
    int ndim;
    int64_t shape[3];
  } shapes[] = {{0, {0}},    {1, {0}},       {1, {1}},      {1, {7}},      {2, {13, 127}},
                {1, {1021}}, {3, {2, 0, 3}}, {1, {100003}}, {3, {3, 5, 7}}};
  uint64_t seed = 1;
  for (int op = 0; op < TSR_NUM_UNARY_OPS; op++)
    for (int d = 0; d < N_DTYPES; d++) {
      tsr_dtype dt = all_dtypes[d];
      if (is_int(dt) && !int_ok((tsr_unary_op)op)) continue;
      for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t n = tsr_test_numel(shapes[s].ndim, shapes[s].shape);
        double *h = input_values((tsr_unary_op)op, dt, n, seed++);
        tsr_array *a = tsr_test_array_from_f64(shapes[s].ndim, shapes[s].shape, dt, dev, h);
        check_array((tsr_unary_op)op, a, h);
        tsr_array_release(a);
        free(h);
      }
    }
}

static void test_named_wrappers(void **state) {
  (void)state;
  typedef tsr_status (*fn_t)(const tsr_array *, tsr_array **);
  static const fn_t fns[TSR_NUM_UNARY_OPS] = {tsr_neg,  tsr_abs,     tsr_exp,  tsr_log, tsr_sqrt,
                                              tsr_tanh, tsr_sigmoid, tsr_relu, tsr_conj};
  int64_t shape[2] = {3, 5};
  for (int op = 0; op < TSR_NUM_UNARY_OPS; op++) {
    double *h = input_values((tsr_unary_op)op, TSR_F64, 15, 40 + (uint64_t)op);
    tsr_array *a = tsr_test_array_from_f64(2, shape, TSR_F64, dev, h), *o = NULL;
    TSR_ASSERT_OK(fns[op](a, &o));
    double *got = ct_read_checked(o, TSR_F64, 2, shape);
    double ref[15];
    for (int i = 0; i < 15; i++)
      ref[i] = ref_op((tsr_unary_op)op, TSR_F64, h[i]);
    ct_assert_close(got, ref, 15, op_rtol((tsr_unary_op)op, TSR_F64), 0, op_names[op]);
    free(got);
    free(h);
    tsr_array_release(o);
    tsr_array_release(a);
  }
}

/* Transposed and stepped, reversed inputs, small and past the OpenMP threshold. */
static void test_non_contiguous(void **state) {
  (void)state;
  static const int64_t sizes[][2] = {{4, 3}, {127, 13}, {331, 307}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int op = 0; op < TSR_NUM_UNARY_OPS; op++)
      for (int d = 0; d < N_DTYPES; d++) {
        tsr_dtype dt = all_dtypes[d];
        if (is_int(dt) && !int_ok((tsr_unary_op)op)) continue;
        int64_t m = sizes[s][0], n = sizes[s][1];
        int64_t shape[2] = {m, n};
        uint64_t seed = 700 + s * 64 + (uint64_t)(op * 4 + d);
        double *base = input_values((tsr_unary_op)op, dt, m * n, seed);
        tsr_array *a = tsr_test_array_from_f64(2, shape, dt, dev, base);
        tsr_array *t = NULL, *v = NULL;
        TSR_ASSERT_OK(tsr_transpose(a, NULL, &t)); /* (n, m) */
        double *ht = malloc((size_t)(m * n) * sizeof(double));
        assert_non_null(ht);
        for (int64_t i = 0; i < n; i++)
          for (int64_t j = 0; j < m; j++)
            ht[i * m + j] = base[j * n + i];
        check_array((tsr_unary_op)op, t, ht);
        /* t[::-2, :] */
        TSR_ASSERT_OK(tsr_slice(t, 0, TSR_SLICE_END, -TSR_SLICE_END, -2, &v));
        int64_t rows = (n + 1) / 2;
        double *hv = malloc((size_t)(rows * m) * sizeof(double));
        assert_non_null(hv);
        for (int64_t i = 0; i < rows; i++)
          for (int64_t j = 0; j < m; j++)
            hv[i * m + j] = ht[(n - 1 - 2 * i) * m + j];
        check_array((tsr_unary_op)op, v, hv);
        free(hv);
        free(ht);
        free(base);
        tsr_array_release(v);
        tsr_array_release(t);
        tsr_array_release(a);
      }
}

/* Random layouts: permuted, stepped and reversed views of up to 5 axes. */
static void test_random_layouts(void **state) {
  (void)state;
  uint64_t seed = 9000;
  for (int trial = 0; trial < 30; trial++) {
    int64_t shape[5];
    int nd = ct_random_shape((uint64_t)trial + 300, 6, shape);
    for (int op = 0; op < TSR_NUM_UNARY_OPS; op++)
      for (int d = 0; d < N_DTYPES; d++) {
        tsr_dtype dt = all_dtypes[d];
        if (is_int(dt) && !int_ok((tsr_unary_op)op)) continue;
        double lo = -6, hi = 6;
        if (is_int(dt))
          lo = -1000, hi = 1000;
        else if (op == TSR_LOG || op == TSR_SQRT)
          lo = 1e-3, hi = 50;
        double *h = NULL;
        tsr_array *a = ct_random_view(nd, shape, dt, dev, seed++, lo, hi, &h);
        check_array((tsr_unary_op)op, a, h);
        tsr_array_release(a);
        free(h);
      }
  }
}

/* Integer neg/abs of the most negative value wrap to itself (NumPy); UBSan would flag the
   C expression -x on it. */
static void test_integer_wrap(void **state) {
  (void)state;
  int64_t shape[1] = {3};
  int32_t x32[3] = {INT32_MIN, INT32_MAX, -5};
  int64_t x64[3] = {INT64_MIN, INT64_MAX, -5};
  tsr_array *a = NULL, *o = NULL;
  int32_t r32[3];
  int64_t r64[3];
  TSR_ASSERT_OK(tsr_from_host(1, shape, TSR_I32, dev, x32, &a));
  TSR_ASSERT_OK(tsr_neg(a, &o));
  TSR_ASSERT_OK(tsr_array_read(o, r32, sizeof r32));
  assert_int_equal(r32[0], INT32_MIN);
  assert_int_equal(r32[1], -INT32_MAX);
  assert_int_equal(r32[2], 5);
  tsr_array_release(o);
  TSR_ASSERT_OK(tsr_abs(a, &o));
  TSR_ASSERT_OK(tsr_array_read(o, r32, sizeof r32));
  assert_int_equal(r32[0], INT32_MIN);
  assert_int_equal(r32[2], 5);
  tsr_array_release(o);
  tsr_array_release(a);

  TSR_ASSERT_OK(tsr_from_host(1, shape, TSR_I64, dev, x64, &a));
  TSR_ASSERT_OK(tsr_neg(a, &o));
  TSR_ASSERT_OK(tsr_array_read(o, r64, sizeof r64));
  assert_true(r64[0] == INT64_MIN);
  assert_true(r64[1] == -INT64_MAX);
  tsr_array_release(o);
  TSR_ASSERT_OK(tsr_abs(a, &o));
  TSR_ASSERT_OK(tsr_array_read(o, r64, sizeof r64));
  assert_true(r64[0] == INT64_MIN);
  assert_true(r64[2] == 5);
  tsr_array_release(o);
  tsr_array_release(a);
}

/* IEEE special values: abs(-0) is +0, log(0) = -inf, log(-1) and sqrt(-1) are NaN, NaN
   propagates, exp overflows to inf, sigmoid saturates to 0 and 1. */
static void test_special_values(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = all_dtypes[d];
    const double x[8] = {-0.0, 0.0, -1.0, NAN, 1000.0, -1000.0, INFINITY, -INFINITY};
    int64_t shape[1] = {8};
    tsr_array *a = tsr_test_array_from_f64(1, shape, dt, dev, x);
    for (int op = 0; op < TSR_NUM_UNARY_OPS; op++) {
      if (op == TSR_RELU) continue; /* relu(NaN) is not specified by the header */
      tsr_array *o = NULL;
      TSR_ASSERT_OK(tsr_unary((tsr_unary_op)op, a, &o));
      double *got = tsr_test_read_f64(o);
      double ref[8];
      for (int i = 0; i < 8; i++)
        ref[i] = ref_op((tsr_unary_op)op, dt, x[i]);
      ct_assert_close(got, ref, 8, op_rtol((tsr_unary_op)op, dt), 0, op_names[op]);
      if (op == TSR_ABS) assert_false(signbit(got[0]));
      free(got);
      tsr_array_release(o);
    }
    tsr_array_release(a);
  }
}

static void test_integer_dtype_errors(void **state) {
  (void)state;
  int64_t shape[2] = {2, 3};
  for (int d = 2; d < 4; d++) {
    tsr_array *a = tsr_test_random_array(2, shape, all_dtypes[d], dev, 5, NULL);
    for (int op = 0; op < TSR_NUM_UNARY_OPS; op++) {
      if (int_ok((tsr_unary_op)op)) continue;
      tsr_array *o = NULL;
      TSR_ASSERT_STATUS(tsr_unary((tsr_unary_op)op, a, &o), TSR_ERR_DTYPE, NULL);
      assert_null(o);
    }
    tsr_array *o = NULL;
    TSR_ASSERT_STATUS(tsr_exp(a, &o), TSR_ERR_DTYPE, NULL);
    TSR_ASSERT_STATUS(tsr_log(a, &o), TSR_ERR_DTYPE, NULL);
    TSR_ASSERT_STATUS(tsr_sqrt(a, &o), TSR_ERR_DTYPE, NULL);
    TSR_ASSERT_STATUS(tsr_tanh(a, &o), TSR_ERR_DTYPE, NULL);
    TSR_ASSERT_STATUS(tsr_sigmoid(a, &o), TSR_ERR_DTYPE, NULL);
    assert_null(o);
    tsr_array_release(a);
  }
}

int main(void) {
  dev = tsr_test_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_all_ops_dtypes_sizes), cmocka_unit_test(test_named_wrappers),
      cmocka_unit_test(test_non_contiguous),       cmocka_unit_test(test_random_layouts),
      cmocka_unit_test(test_integer_wrap),         cmocka_unit_test(test_special_values),
      cmocka_unit_test(test_integer_dtype_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
