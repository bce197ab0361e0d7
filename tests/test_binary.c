/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Elementwise binary operators with NumPy broadcasting, every dtype, against a float64
 * reference on random inputs; contiguous, transposed, stepped and reversed operands; ragged
 * sizes; integer wrap-around; NaN and division by zero; shape and dtype errors.
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
static const char *op_names[TSR_NUM_BINARY_OPS] = {"add",     "sub",     "mul", "div",
                                                   "maximum", "minimum", "pow"};

static int is_int(tsr_dtype dt) {
  return dt == TSR_I32 || dt == TSR_I64;
}
static int int_ok(tsr_binary_op op) {
  return op != TSR_DIV && op != TSR_POW;
}

/* Reference in float64 (integers: int64 arithmetic wrapped to the dtype), rounded to dt. */
static double ref_op(tsr_binary_op op, tsr_dtype dt, double x, double y) {
  if (is_int(dt)) {
    uint64_t ux = (uint64_t)(int64_t)x, uy = (uint64_t)(int64_t)y, r = 0;
    switch (op) {
    case TSR_ADD: r = ux + uy; break;
    case TSR_SUB: r = ux - uy; break;
    case TSR_MUL: r = ux * uy; break;
    case TSR_MAXIMUM: return x > y ? x : y;
    case TSR_MINIMUM: return x < y ? x : y;
    default: fail();
    }
    return ct_round(dt, (double)(int64_t)r);
  }
  double v = 0;
  switch (op) {
  case TSR_ADD: v = x + y; break;
  case TSR_SUB: v = x - y; break;
  case TSR_MUL: v = x * y; break;
  case TSR_DIV: v = x / y; break;
  case TSR_MAXIMUM: v = (isnan(x) || isnan(y)) ? NAN : (x > y ? x : y); break;
  case TSR_MINIMUM: v = (isnan(x) || isnan(y)) ? NAN : (x < y ? x : y); break;
  case TSR_POW: v = pow(x, y); break;
  }
  return ct_round(dt, v);
}

/* Relative tolerance: f32 inputs make +,-,*,/ of the f64 reference round to the exact f32
   result, so only pow (a libm function; CUDA's powf is within 4 ulp) gets a few ulps. */
static double op_rtol(tsr_binary_op op, tsr_dtype dt) {
  if (op == TSR_POW) return 16 * ct_eps(dt);
  if (op == TSR_DIV) return 2 * ct_eps(dt);
  return 0;
}

/* Random host values for operand `which` (0: a, 1: b) suited to the operator's domain. */
static double *operand_values(tsr_binary_op op, tsr_dtype dt, int which, int64_t n, uint64_t seed) {
  if (is_int(dt)) return ct_random_host(n, dt, seed, -100, 100);
  if (op == TSR_POW) return ct_random_host(n, dt, seed, which ? -3 : 0.5, which ? 3 : 2);
  if (op == TSR_DIV && which) {
    double *x = ct_random_host(n, dt, seed, 0.25, 1.25);
    for (int64_t i = 1; i < n; i += 2)
      x[i] = -x[i];
    return x;
  }
  return ct_random_host(n, dt, seed, -1, 1);
}

/* Checks op(a, b) where ha/hb hold the operands' values in C order. */
static void check_arrays(tsr_binary_op op, const tsr_array *a, const double *ha, const tsr_array *b,
                         const double *hb, int nout, const int64_t *oshape) {
  tsr_array_props ia, ib;
  TSR_ASSERT_OK(tsr_array_info(a, &ia));
  TSR_ASSERT_OK(tsr_array_info(b, &ib));
  tsr_array *out = NULL;
  tsr_status st = tsr_binary(op, a, b, &out);
  if (st != TSR_OK)
    print_error("%s %s: %s\n", op_names[op], tsr_dtype_name(ia.dtype), tsr_last_error());
  assert_int_equal(st, TSR_OK);
  tsr_array_props io;
  TSR_ASSERT_OK(tsr_array_info(out, &io));
  assert_int_equal(io.contiguous, 1);
  assert_true(tsr_device_equal(io.device, dev));
  double *got = ct_read_checked(out, ia.dtype, nout, oshape);
  int64_t n = tsr_test_numel(nout, oshape);
  double *ref = malloc((size_t)(n ? n : 1) * sizeof(double));
  assert_non_null(ref);
  /* Operands of the result's shape index directly (the large cases). */
  int same_a = ia.size == n && ia.ndim == nout, same_b = ib.size == n && ib.ndim == nout;
  for (int64_t i = 0; i < n; i++) {
    double x = ha[same_a ? i : ct_bcast_index(nout, oshape, i, ia.ndim, ia.shape)];
    double y = hb[same_b ? i : ct_bcast_index(nout, oshape, i, ib.ndim, ib.shape)];
    ref[i] = ref_op(op, ia.dtype, x, y);
  }
  char what[64];
  snprintf(what, sizeof what, "%s %s", op_names[op], tsr_dtype_name(ia.dtype));
  ct_assert_close(got, ref, n, op_rtol(op, ia.dtype), 0, what);
  free(got);
  free(ref);
  tsr_array_release(out);
}

static void check_shapes(tsr_binary_op op, tsr_dtype dt, int na, const int64_t *sa, int nb,
                         const int64_t *sb, int nout, const int64_t *so, uint64_t seed) {
  int64_t n_a = tsr_test_numel(na, sa), n_b = tsr_test_numel(nb, sb);
  double *ha = operand_values(op, dt, 0, n_a, seed);
  double *hb = operand_values(op, dt, 1, n_b, seed + 7919);
  tsr_array *a = tsr_test_array_from_f64(na, sa, dt, dev, ha);
  tsr_array *b = tsr_test_array_from_f64(nb, sb, dt, dev, hb);
  check_arrays(op, a, ha, b, hb, nout, so);
  tsr_array_release(a);
  tsr_array_release(b);
  free(ha);
  free(hb);
}

struct bcase {
  int na;
  int64_t sa[5];
  int nb;
  int64_t sb[5];
  int nout;
  int64_t so[5];
};

static const struct bcase bcases[] = {
    {0, {0}, 2, {3, 4}, 2, {3, 4}},    /* scalar with array */
    {2, {3, 4}, 0, {0}, 2, {3, 4}},    /* array with scalar */
    {0, {0}, 0, {0}, 0, {0}},          /* scalar with scalar */
    {2, {3, 1}, 2, {1, 4}, 2, {3, 4}}, /* outer */
    {1, {4}, 2, {3, 4}, 2, {3, 4}},    /* row vector */
    {2, {3, 4}, 1, {4}, 2, {3, 4}},
    {3, {2, 1, 5}, 2, {3, 1}, 3, {2, 3, 5}}, /* both stretch */
    {3, {1, 1, 1}, 1, {7}, 3, {1, 1, 7}},
    {5, {5, 1, 3, 1, 2}, 4, {6, 3, 1, 1}, 5, {5, 6, 3, 1, 2}},
    {1, {0}, 1, {1}, 1, {0}}, /* size-0 axes */
    {2, {3, 0}, 2, {3, 1}, 2, {3, 0}},
    {3, {2, 0, 1}, 1, {4}, 3, {2, 0, 4}},
    {1, {1}, 1, {1}, 1, {1}}, /* ragged sizes */
    {1, {7}, 1, {7}, 1, {7}},
    {2, {13, 127}, 2, {13, 127}, 2, {13, 127}},
    {1, {1021}, 1, {1}, 1, {1021}},
    {1, {100003}, 1, {100003}, 1, {100003}}, /* past any OpenMP threshold */
    {2, {100003, 1}, 1, {3}, 2, {100003, 3}},
};

static void test_broadcast_all_ops_dtypes(void **state) {
  (void)state;
  uint64_t seed = 1;
  for (int op = 0; op < TSR_NUM_BINARY_OPS; op++)
    for (int d = 0; d < N_DTYPES; d++) {
      if (is_int(all_dtypes[d]) && !int_ok((tsr_binary_op)op)) continue;
      for (size_t c = 0; c < sizeof bcases / sizeof bcases[0]; c++) {
        const struct bcase *k = &bcases[c];
        /* The large broadcast (300009 elements) only for two operators: the contiguous
           100003 case already takes every operator past the OpenMP threshold. */
        if (k->so[0] == 100003 && k->nout == 2 && op != TSR_ADD && op != TSR_MAXIMUM) continue;
        check_shapes((tsr_binary_op)op, all_dtypes[d], k->na, k->sa, k->nb, k->sb, k->nout, k->so,
                     seed++);
      }
    }
}

/* The named wrappers are the same operators. */
static void test_named_wrappers(void **state) {
  (void)state;
  typedef tsr_status (*fn_t)(const tsr_array *, const tsr_array *, tsr_array **);
  static const fn_t fns[TSR_NUM_BINARY_OPS] = {tsr_add,     tsr_sub,     tsr_mul, tsr_div,
                                               tsr_maximum, tsr_minimum, tsr_pow};
  int64_t sa[2] = {5, 1}, sb[1] = {3};
  for (int op = 0; op < TSR_NUM_BINARY_OPS; op++) {
    double *ha = operand_values((tsr_binary_op)op, TSR_F64, 0, 5, 90 + (uint64_t)op);
    double *hb = operand_values((tsr_binary_op)op, TSR_F64, 1, 3, 95 + (uint64_t)op);
    tsr_array *a = tsr_test_array_from_f64(2, sa, TSR_F64, dev, ha);
    tsr_array *b = tsr_test_array_from_f64(1, sb, TSR_F64, dev, hb);
    tsr_array *out = NULL;
    TSR_ASSERT_OK(fns[op](a, b, &out));
    int64_t so[2] = {5, 3};
    double *got = ct_read_checked(out, TSR_F64, 2, so);
    double ref[15];
    for (int i = 0; i < 15; i++)
      ref[i] = ref_op((tsr_binary_op)op, TSR_F64, ha[i / 3], hb[i % 3]);
    ct_assert_close(got, ref, 15, op_rtol((tsr_binary_op)op, TSR_F64), 0, op_names[op]);
    free(got);
    free(ha);
    free(hb);
    tsr_array_release(out);
    tsr_array_release(a);
    tsr_array_release(b);
  }
}

/* Non-contiguous operands: a transposed matrix, a stepped slice, a reversed slice, a view
   with an offset, each against the others and against broadcast rows/columns. */
static void test_non_contiguous(void **state) {
  (void)state;
  static const int64_t sizes[][2] = {{3, 4}, {13, 7}, {331, 307}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int d = 0; d < N_DTYPES; d++) {
      tsr_dtype dt = all_dtypes[d];
      int64_t m = sizes[s][0], n = sizes[s][1];
      tsr_binary_op op = is_int(dt) ? TSR_SUB : (s == 1 ? TSR_DIV : TSR_MUL);
      /* A: transpose of an (n, m) array. */
      int64_t ashape[2] = {n, m};
      double *abase = operand_values(op, dt, 0, n * m, 500 + s * 8 + (uint64_t)d);
      tsr_array *ab = tsr_test_array_from_f64(2, ashape, dt, dev, abase);
      tsr_array *a = NULL;
      TSR_ASSERT_OK(tsr_transpose(ab, NULL, &a));
      double *ha = malloc((size_t)(m * n) * sizeof(double));
      assert_non_null(ha);
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
          ha[i * n + j] = abase[j * m + i];
      /* B: rows reversed, columns with step 2, from an (m, 2n+1) array. */
      int64_t bshape[2] = {m, 2 * n + 1};
      double *bbase = operand_values(op, dt, 1, m * (2 * n + 1), 600 + s * 8 + (uint64_t)d);
      tsr_array *bb = tsr_test_array_from_f64(2, bshape, dt, dev, bbase);
      tsr_array *b1 = NULL, *b = NULL;
      TSR_ASSERT_OK(tsr_slice(bb, 1, 1, TSR_SLICE_END, 2, &b1));
      TSR_ASSERT_OK(tsr_slice(b1, 0, TSR_SLICE_END, -TSR_SLICE_END, -1, &b));
      double *hb = malloc((size_t)(m * n) * sizeof(double));
      assert_non_null(hb);
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
          hb[i * n + j] = bbase[(m - 1 - i) * (2 * n + 1) + 1 + 2 * j];
      int64_t so[2] = {m, n};
      check_arrays(op, a, ha, b, hb, 2, so);
      check_arrays(op, b, hb, a, ha, 2, so);
      check_arrays(op, a, ha, a, ha, 2, so); /* the same array twice */

      /* A non-contiguous row (offset view with a step) broadcast against the transpose. */
      tsr_array *row = NULL, *rowv = NULL;
      TSR_ASSERT_OK(tsr_slice(b, 0, 1, 2, 1, &row)); /* (1, n) with an offset */
      int64_t rshape[1] = {n};
      TSR_ASSERT_OK(tsr_reshape(row, 1, rshape, &rowv));
      check_arrays(op, a, ha, rowv, hb + n, 2, so);
      tsr_array_release(rowv);
      tsr_array_release(row);

      tsr_array_release(a);
      tsr_array_release(ab);
      tsr_array_release(b);
      tsr_array_release(b1);
      tsr_array_release(bb);
      free(ha);
      free(hb);
      free(abase);
      free(bbase);
    }
}

/* Random layouts: both operands are permuted, stepped and reversed views of up to 5 axes,
   one of them broadcast (size-1 or missing axes), for every operator and dtype. This drives
   the dimension collapsing of the elementwise loops through mixed layouts. */
static void test_random_layouts(void **state) {
  (void)state;
  uint64_t seed = 4000;
  for (int trial = 0; trial < 40; trial++) {
    double r[12];
    tsr_test_fill_random(r, 12, (uint64_t)trial + 77);
    int nd = 1 + (int)((r[0] + 1) * 2.5); /* 1..5 */
    if (nd > 5) nd = 5;
    int64_t so[5], sb[5];
    for (int i = 0; i < nd; i++)
      so[i] = 1 + (int64_t)((r[1 + i] + 1) * 3); /* 1..6 */
    /* b: drop leading axes and set some to 1. */
    int nb = nd - (int)((r[6] + 1) * 0.5 * nd);
    if (nb < 1) nb = 1;
    for (int i = 0; i < nb; i++)
      sb[i] = r[7 + i % 5] > 0.2 ? 1 : so[nd - nb + i];
    for (int op = 0; op < TSR_NUM_BINARY_OPS; op++)
      for (int d = 0; d < N_DTYPES; d++) {
        tsr_dtype dt = all_dtypes[d];
        if (is_int(dt) && !int_ok((tsr_binary_op)op)) continue;
        double alo = -1, ahi = 1, blo = -1, bhi = 1;
        if (is_int(dt)) alo = blo = -100, ahi = bhi = 100;
        if (op == TSR_POW) alo = 0.5, ahi = 2, blo = -3, bhi = 3;
        if (op == TSR_DIV) blo = 0.25, bhi = 1.25;
        double *ha = NULL, *hb = NULL;
        tsr_array *a = ct_random_view(nd, so, dt, dev, seed++, alo, ahi, &ha);
        tsr_array *b = ct_random_view(nb, sb, dt, dev, seed++, blo, bhi, &hb);
        check_arrays((tsr_binary_op)op, a, ha, b, hb, nd, so);
        check_arrays((tsr_binary_op)op, b, hb, a, ha, nd, so);
        tsr_array_release(a);
        tsr_array_release(b);
        free(ha);
        free(hb);
      }
  }
}

/* A 0-d view into the middle of a buffer (an offset, no strides) as either operand. */
static void test_scalar_view_with_offset(void **state) {
  (void)state;
  for (int d = 0; d < N_DTYPES; d++) {
    tsr_dtype dt = all_dtypes[d];
    int64_t n = 13, shape[2] = {3, 5};
    double *hv = NULL, *hm = NULL;
    tsr_array *v = tsr_test_random_array(1, &n, dt, dev, 60 + (uint64_t)d, &hv);
    tsr_array *m = tsr_test_random_array(2, shape, dt, dev, 70 + (uint64_t)d, &hm);
    tsr_array *one = NULL, *s = NULL;
    TSR_ASSERT_OK(tsr_slice(v, 0, 7, 8, 1, &one));
    TSR_ASSERT_OK(tsr_reshape(one, 0, NULL, &s));
    check_arrays(TSR_SUB, s, hv + 7, m, hm, 2, shape);
    check_arrays(TSR_MUL, m, hm, s, hv + 7, 2, shape);
    tsr_array_release(s);
    tsr_array_release(one);
    tsr_array_release(v);
    tsr_array_release(m);
    free(hv);
    free(hm);
  }
}

/* Integer overflow wraps modulo 2^bits (NumPy); UBSan would flag signed overflow in C. */
static void test_integer_wrap(void **state) {
  (void)state;
  int64_t shape[1] = {4};
  int32_t a32[4] = {INT32_MAX, INT32_MIN, 65536, -7};
  int32_t b32[4] = {1, 1, 65536, 3};
  int64_t a64[4] = {INT64_MAX, INT64_MIN, INT64_C(1) << 62, -7};
  int64_t b64[4] = {1, 1, 4, 3};
  tsr_array *a = NULL, *b = NULL, *o = NULL;
  int32_t r32[4];
  int64_t r64[4];

  TSR_ASSERT_OK(tsr_from_host(1, shape, TSR_I32, dev, a32, &a));
  TSR_ASSERT_OK(tsr_from_host(1, shape, TSR_I32, dev, b32, &b));
  TSR_ASSERT_OK(tsr_add(a, b, &o));
  TSR_ASSERT_OK(tsr_array_read(o, r32, sizeof r32));
  assert_int_equal(r32[0], INT32_MIN);
  assert_int_equal(r32[1], INT32_MIN + 1);
  tsr_array_release(o);
  TSR_ASSERT_OK(tsr_sub(a, b, &o));
  TSR_ASSERT_OK(tsr_array_read(o, r32, sizeof r32));
  assert_int_equal(r32[1], INT32_MAX);
  tsr_array_release(o);
  TSR_ASSERT_OK(tsr_mul(a, b, &o));
  TSR_ASSERT_OK(tsr_array_read(o, r32, sizeof r32));
  assert_int_equal(r32[2], 0);
  assert_int_equal(r32[3], -21);
  tsr_array_release(o);
  tsr_array_release(a);
  tsr_array_release(b);

  TSR_ASSERT_OK(tsr_from_host(1, shape, TSR_I64, dev, a64, &a));
  TSR_ASSERT_OK(tsr_from_host(1, shape, TSR_I64, dev, b64, &b));
  TSR_ASSERT_OK(tsr_add(a, b, &o));
  TSR_ASSERT_OK(tsr_array_read(o, r64, sizeof r64));
  assert_true(r64[0] == INT64_MIN);
  tsr_array_release(o);
  TSR_ASSERT_OK(tsr_sub(a, b, &o));
  TSR_ASSERT_OK(tsr_array_read(o, r64, sizeof r64));
  assert_true(r64[1] == INT64_MAX);
  tsr_array_release(o);
  TSR_ASSERT_OK(tsr_mul(a, b, &o));
  TSR_ASSERT_OK(tsr_array_read(o, r64, sizeof r64));
  assert_true(r64[2] == 0);
  assert_true(r64[3] == -21);
  tsr_array_release(o);
  tsr_array_release(a);
  tsr_array_release(b);
}

/* NaN propagates through maximum/minimum from either side; x/0 follows IEEE. */
static void test_nan_and_inf(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = all_dtypes[d];
    const double x[6] = {NAN, 1.0, NAN, -2.0, 1.0, 0.0};
    const double y[6] = {1.0, NAN, NAN, -3.0, 0.0, 0.0};
    int64_t shape[1] = {6};
    tsr_array *a = tsr_test_array_from_f64(1, shape, dt, dev, x);
    tsr_array *b = tsr_test_array_from_f64(1, shape, dt, dev, y);
    for (int op = 0; op < TSR_NUM_BINARY_OPS; op++) {
      tsr_array *o = NULL;
      TSR_ASSERT_OK(tsr_binary((tsr_binary_op)op, a, b, &o));
      double *got = tsr_test_read_f64(o);
      double ref[6];
      for (int i = 0; i < 6; i++)
        ref[i] = ref_op((tsr_binary_op)op, dt, x[i], y[i]);
      ct_assert_close(got, ref, 6, op_rtol((tsr_binary_op)op, dt), 0, op_names[op]);
      free(got);
      tsr_array_release(o);
    }
    tsr_array_release(a);
    tsr_array_release(b);
  }
}

/* Integer dtypes reject div and pow; operands of different dtypes are rejected. */
static void test_dtype_errors(void **state) {
  (void)state;
  int64_t shape[1] = {3};
  for (int d = 2; d < 4; d++) {
    tsr_array *a = tsr_test_random_array(1, shape, all_dtypes[d], dev, 3, NULL), *o = NULL;
    TSR_ASSERT_STATUS(tsr_div(a, a, &o), TSR_ERR_DTYPE, NULL);
    assert_null(o);
    TSR_ASSERT_STATUS(tsr_pow(a, a, &o), TSR_ERR_DTYPE, NULL);
    TSR_ASSERT_STATUS(tsr_binary(TSR_DIV, a, a, &o), TSR_ERR_DTYPE, NULL);
    assert_null(o);
    tsr_array_release(a);
  }
  for (int d1 = 0; d1 < N_DTYPES; d1++)
    for (int d2 = 0; d2 < N_DTYPES; d2++) {
      if (d1 == d2) continue;
      tsr_array *a = tsr_test_random_array(1, shape, all_dtypes[d1], dev, 4, NULL);
      tsr_array *b = tsr_test_random_array(1, shape, all_dtypes[d2], dev, 5, NULL);
      tsr_array *o = NULL;
      TSR_ASSERT_STATUS(tsr_add(a, b, &o), TSR_ERR_DTYPE, NULL);
      assert_null(o);
      tsr_array_release(a);
      tsr_array_release(b);
    }
}

/* Shapes that do not broadcast: TSR_ERR_SHAPE naming both shapes. */
static void test_shape_errors(void **state) {
  (void)state;
  static const struct {
    int na;
    int64_t sa[3];
    int nb;
    int64_t sb[3];
    const char *ta, *tb;
  } bad[] = {
      {2, {3, 4}, 2, {2, 5}, "3x4", "2x5"}, {1, {3}, 1, {4}, "3", "4"},
      {2, {3, 4}, 1, {3}, "3x4", "3"},      {3, {2, 1, 5}, 2, {3, 4}, "2x1x5", "3x4"},
      {1, {0}, 1, {2}, "0", "2"},
  };
  for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
    tsr_array *a = tsr_test_random_array(bad[c].na, bad[c].sa, TSR_F32, dev, 8, NULL);
    tsr_array *b = tsr_test_random_array(bad[c].nb, bad[c].sb, TSR_F32, dev, 9, NULL);
    tsr_array *o = NULL;
    TSR_ASSERT_STATUS(tsr_binary(TSR_ADD, a, b, &o), TSR_ERR_SHAPE, bad[c].ta);
    assert_non_null(strstr(tsr_last_error(), bad[c].tb));
    assert_null(o);
    TSR_ASSERT_STATUS(tsr_maximum(b, a, &o), TSR_ERR_SHAPE, bad[c].tb);
    assert_non_null(strstr(tsr_last_error(), bad[c].ta));
    tsr_array_release(a);
    tsr_array_release(b);
  }
}

/* Operands on different devices (only testable when the device under test is a GPU). */
static void test_device_mismatch(void **state) {
  (void)state;
  if (ct_is_cpu(dev)) skip();
  int64_t shape[1] = {5};
  tsr_array *a = tsr_test_random_array(1, shape, TSR_F32, dev, 1, NULL);
  tsr_array *b = tsr_test_random_array(1, shape, TSR_F32, TSR_CPU, 2, NULL);
  tsr_array *o = NULL;
  TSR_ASSERT_STATUS(tsr_add(a, b, &o), TSR_ERR_DEVICE_MISMATCH, NULL);
  assert_null(o);
  tsr_array_release(a);
  tsr_array_release(b);
}

int main(void) {
  dev = tsr_test_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_broadcast_all_ops_dtypes),
      cmocka_unit_test(test_named_wrappers),
      cmocka_unit_test(test_non_contiguous),
      cmocka_unit_test(test_random_layouts),
      cmocka_unit_test(test_scalar_view_with_offset),
      cmocka_unit_test(test_integer_wrap),
      cmocka_unit_test(test_nan_and_inf),
      cmocka_unit_test(test_dtype_errors),
      cmocka_unit_test(test_shape_errors),
      cmocka_unit_test(test_device_mismatch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
