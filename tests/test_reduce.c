/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reductions (sum, mean, max, min, argmax) along each axis and over all, with keepdims and
 * negative axes, on contiguous and non-contiguous inputs, every dtype, ragged sizes, NaN
 * propagation and empty axes, against a float64 reference.
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
static const char *op_names[TSR_NUM_REDUCE_OPS] = {"sum", "mean", "max", "min", "argmax"};

static int is_int(tsr_dtype dt) {
  return dt == TSR_I32 || dt == TSR_I64;
}

static tsr_dtype result_dtype(tsr_reduce_op op, tsr_dtype dt) {
  if (op == TSR_ARGMAX) return TSR_I64;
  if (op == TSR_MEAN && is_int(dt)) return TSR_F64;
  return dt;
}

/*
 * Reference reduction of C-ordered values h (shape ndim/shape) along axis (or all when axis
 * is TSR_AXIS_ALL). Fills ref (one value per output) and tol (absolute tolerance per output:
 * the rounding of the result to its dtype plus a float64 summation error bound).
 */
static void reduce_ref(tsr_reduce_op op, tsr_dtype dt, int ndim, const int64_t *shape,
                       const double *h, int axis, double *ref, double *tol) {
  int64_t total = tsr_test_numel(ndim, shape);
  int64_t len, inner, outer;
  if (axis == TSR_AXIS_ALL) {
    len = total, inner = 1, outer = 1;
  } else {
    len = shape[axis];
    inner = 1;
    for (int i = axis + 1; i < ndim; i++)
      inner *= shape[i];
    outer = 1;
    for (int i = 0; i < axis; i++)
      outer *= shape[i];
  }
  tsr_dtype rdt = result_dtype(op, dt);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      double acc = 0, abs_acc = 0;
      int has_nan = 0;
      int64_t first_nan = -1;
      for (int64_t k = 0; k < len; k++) {
        double x = h[(o * len + k) * inner + in];
        if (isnan(x) && !has_nan) first_nan = k;
        has_nan |= isnan(x);
        acc += x;
        abs_acc += fabs(x);
      }
      /* max/min/argmax: the first extreme element wins ties. */
      double best = len ? h[o * len * inner + in] : 0;
      int64_t best_i = 0;
      for (int64_t k = 1; k < len; k++) {
        double x = h[(o * len + k) * inner + in];
        if ((op == TSR_MIN) ? x < best : x > best) best = x, best_i = k;
      }
      /* NaN propagates; argmax points at the first NaN (NumPy). */
      if (has_nan) best = NAN, best_i = first_nan;
      double v = 0, t = 0;
      double eps = ct_eps(rdt);
      switch (op) {
      case TSR_SUM:
        v = acc;
        t = 2 * eps * fabs(acc) + 16 * 0x1.0p-53 * abs_acc * (1 + log2((double)len + 1));
        break;
      case TSR_MEAN:
        v = len ? acc / (double)len : NAN;
        t = len ? 2 * eps * fabs(v) +
                      16 * 0x1.0p-53 * abs_acc / (double)len * (1 + log2((double)len + 1))
                : 0;
        break;
      case TSR_MAX:
      case TSR_MIN: v = best; break;
      case TSR_ARGMAX: v = (double)best_i; break;
      }
      if (is_int(rdt) || op == TSR_MAX || op == TSR_MIN) t = 0;
      ref[o * inner + in] = ct_round(rdt, v);
      tol[o * inner + in] = t;
    }
}

/* Output shape of a reduction. */
static int out_shape(int ndim, const int64_t *shape, int axis, int keepdims, int64_t *os) {
  if (axis == TSR_AXIS_ALL) {
    if (!keepdims) return 0;
    for (int i = 0; i < ndim; i++)
      os[i] = 1;
    return ndim;
  }
  int n = 0;
  for (int i = 0; i < ndim; i++) {
    if (i != axis)
      os[n++] = shape[i];
    else if (keepdims)
      os[n++] = 1;
  }
  return n;
}

/* Reduces array a (C-order values h) and checks against the reference; `axis_arg` is what
   is passed to the library (may be negative), `axis` its normalized value. */
static void check_reduce(tsr_reduce_op op, const tsr_array *a, const double *h, int axis_arg,
                         int keepdims) {
  tsr_array_props ia;
  TSR_ASSERT_OK(tsr_array_info(a, &ia));
  int axis = (axis_arg != TSR_AXIS_ALL && axis_arg < 0) ? axis_arg + ia.ndim : axis_arg;
  int64_t os[TSR_MAX_DIMS];
  int nout = out_shape(ia.ndim, ia.shape, axis, keepdims, os);
  int64_t nres = tsr_test_numel(nout, os);
  double *ref = malloc((size_t)(nres ? nres : 1) * sizeof(double));
  double *tol = malloc((size_t)(nres ? nres : 1) * sizeof(double));
  assert_non_null(ref);
  assert_non_null(tol);
  reduce_ref(op, ia.dtype, ia.ndim, ia.shape, h, axis, ref, tol);

  tsr_array *out = NULL;
  tsr_status st = tsr_reduce(op, a, axis_arg, keepdims, &out);
  if (st != TSR_OK)
    print_error("%s %s axis %d keepdims %d: %s\n", op_names[op], tsr_dtype_name(ia.dtype), axis_arg,
                keepdims, tsr_last_error());
  assert_int_equal(st, TSR_OK);
  double *got = ct_read_checked(out, result_dtype(op, ia.dtype), nout, os);
  for (int64_t i = 0; i < nres; i++) {
    int ok = isnan(ref[i]) ? isnan(got[i]) : fabs(got[i] - ref[i]) <= tol[i];
    if (!ok) {
      print_error("%s %s axis %d keepdims %d: output %lld is %.17g, expected %.17g (tol %g)\n",
                  op_names[op], tsr_dtype_name(ia.dtype), axis_arg, keepdims, (long long)i, got[i],
                  ref[i], tol[i]);
      fail();
    }
  }
  free(got);
  free(ref);
  free(tol);
  tsr_array_release(out);
}

/* Every op, dtype, axis (positive and negative), all, keepdims on a set of shapes. */
static void test_axes_dtypes_shapes(void **state) {
  (void)state;
  static const struct {
    int ndim;
    int64_t shape[3];
  } shapes[] = {{1, {1}},      {1, {7}},        {2, {13, 127}}, {3, {2, 3, 5}}, {2, {1021, 1}},
                {1, {100003}}, {2, {331, 307}}, {3, {1, 1, 1}}, {0, {0}}};
  uint64_t seed = 1;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int d = 0; d < N_DTYPES; d++) {
      tsr_dtype dt = all_dtypes[d];
      int nd = shapes[s].ndim;
      int64_t n = tsr_test_numel(nd, shapes[s].shape);
      /* Integers in a small range give ties, which argmax must break to the first. */
      double *h = ct_random_host(n, dt, seed++, is_int(dt) ? -20 : -1, is_int(dt) ? 20 : 1);
      tsr_array *a = tsr_test_array_from_f64(nd, shapes[s].shape, dt, dev, h);
      /* keepdims and negative axes change no arithmetic: large shapes try them once. */
      int large = n > 10000;
      for (int op = 0; op < TSR_NUM_REDUCE_OPS; op++)
        for (int keep = large ? op % 2 : 0; keep < (large ? op % 2 + 1 : 2); keep++) {
          check_reduce((tsr_reduce_op)op, a, h, TSR_AXIS_ALL, keep);
          for (int ax = 0; ax < nd; ax++) {
            check_reduce((tsr_reduce_op)op, a, h, large && op % 2 ? ax - nd : ax, keep);
            if (!large) check_reduce((tsr_reduce_op)op, a, h, ax - nd, keep);
          }
        }
      tsr_array_release(a);
      free(h);
    }
}

/* The named wrappers are the same reductions. */
static void test_named_wrappers(void **state) {
  (void)state;
  typedef tsr_status (*fn_t)(const tsr_array *, int, int, tsr_array **);
  static const fn_t fns[TSR_NUM_REDUCE_OPS] = {tsr_sum, tsr_mean, tsr_max, tsr_min, tsr_argmax};
  int64_t shape[2] = {5, 6};
  double *h = ct_random_host(30, TSR_F64, 77, -1, 1);
  tsr_array *a = tsr_test_array_from_f64(2, shape, TSR_F64, dev, h);
  for (int op = 0; op < TSR_NUM_REDUCE_OPS; op++) {
    tsr_array *x = NULL, *y = NULL;
    TSR_ASSERT_OK(fns[op](a, 1, 0, &x));
    TSR_ASSERT_OK(tsr_reduce((tsr_reduce_op)op, a, 1, 0, &y));
    double *gx = tsr_test_read_f64(x), *gy = tsr_test_read_f64(y);
    ct_assert_close(gx, gy, 5, 0, 0, op_names[op]);
    free(gx);
    free(gy);
    tsr_array_release(x);
    tsr_array_release(y);
  }
  check_reduce(TSR_SUM, a, h, 0, 0);
  tsr_array_release(a);
  free(h);
}

/* Transposed and stepped/reversed views, reduced along each axis and over all. */
static void test_non_contiguous(void **state) {
  (void)state;
  static const int64_t sizes[][2] = {{5, 3}, {127, 13}, {331, 307}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int d = 0; d < N_DTYPES; d++) {
      tsr_dtype dt = all_dtypes[d];
      int64_t m = sizes[s][0], n = sizes[s][1];
      int64_t shape[2] = {m, n};
      double *base = ct_random_host(m * n, dt, 900 + s * 4 + (uint64_t)d, -50, 50);
      tsr_array *a = tsr_test_array_from_f64(2, shape, dt, dev, base);
      tsr_array *t = NULL, *v = NULL;
      TSR_ASSERT_OK(tsr_transpose(a, NULL, &t)); /* (n, m) */
      double *ht = malloc((size_t)(m * n) * sizeof(double));
      assert_non_null(ht);
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++)
          ht[i * m + j] = base[j * n + i];
      TSR_ASSERT_OK(tsr_slice(t, 1, -1, -TSR_SLICE_END, -2, &v)); /* t[:, ::-2] */
      int64_t cols = (m + 1) / 2;
      double *hv = malloc((size_t)(n * cols) * sizeof(double));
      assert_non_null(hv);
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < cols; j++)
          hv[i * cols + j] = ht[i * m + (m - 1 - 2 * j)];
      /* The large size (past the OpenMP threshold) takes one call per traversal. */
      int large = s == 2;
      for (int op = 0; op < TSR_NUM_REDUCE_OPS; op++) {
        for (int ax = 0; ax < 2; ax++) {
          if (!large || ax == 0) check_reduce((tsr_reduce_op)op, t, ht, ax, ax);
          if (!large || ax == 1) check_reduce((tsr_reduce_op)op, v, hv, ax, 0);
        }
        check_reduce((tsr_reduce_op)op, t, ht, TSR_AXIS_ALL, 0);
        if (!large) check_reduce((tsr_reduce_op)op, v, hv, TSR_AXIS_ALL, 1);
      }
      free(hv);
      free(ht);
      free(base);
      tsr_array_release(v);
      tsr_array_release(t);
      tsr_array_release(a);
    }
}

/* Random layouts: permuted, stepped and reversed views of up to 5 axes, every axis. */
static void test_random_layouts(void **state) {
  (void)state;
  uint64_t seed = 12000;
  for (int trial = 0; trial < 30; trial++) {
    int64_t shape[5];
    int nd = ct_random_shape((uint64_t)trial + 500, 8, shape);
    for (int d = 0; d < N_DTYPES; d++) {
      tsr_dtype dt = all_dtypes[d];
      double *h = NULL;
      tsr_array *a = ct_random_view(nd, shape, dt, dev, seed++, is_int(dt) ? -20 : -1,
                                    is_int(dt) ? 20 : 1, &h);
      for (int op = 0; op < TSR_NUM_REDUCE_OPS; op++) {
        check_reduce((tsr_reduce_op)op, a, h, TSR_AXIS_ALL, 0);
        for (int ax = 0; ax < nd; ax++)
          check_reduce((tsr_reduce_op)op, a, h, ax, trial % 2);
      }
      tsr_array_release(a);
      free(h);
    }
  }
}

/* A NaN anywhere in a row makes that row's max, min, sum and mean NaN and its argmax the
   first NaN's index (NumPy), and leaves the other rows alone; also over all axes, and at the
   first and last position. */
static void test_nan_propagation(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = all_dtypes[d];
    int64_t shape[2] = {4, 1021};
    double *h = ct_random_host(4 * 1021, dt, 31 + (uint64_t)d, -1, 1);
    h[0 * 1021 + 0] = NAN;
    h[1 * 1021 + 500] = NAN;
    h[2 * 1021 + 1020] = NAN;
    tsr_array *a = tsr_test_array_from_f64(2, shape, dt, dev, h);
    for (int op = 0; op < TSR_NUM_REDUCE_OPS; op++) {
      check_reduce((tsr_reduce_op)op, a, h, 1, 0);
      check_reduce((tsr_reduce_op)op, a, h, 0, 0);
      check_reduce((tsr_reduce_op)op, a, h, TSR_AXIS_ALL, 0);
    }
    /* The explicit expectation, independent of the reference code. */
    tsr_array *mx = NULL;
    TSR_ASSERT_OK(tsr_max(a, 1, 0, &mx));
    double *g = tsr_test_read_f64(mx);
    assert_true(isnan(g[0]) && isnan(g[1]) && isnan(g[2]) && !isnan(g[3]));
    free(g);
    tsr_array_release(mx);
    TSR_ASSERT_OK(tsr_min(a, TSR_AXIS_ALL, 0, &mx));
    g = tsr_test_read_f64(mx);
    assert_true(isnan(g[0]));
    free(g);
    tsr_array_release(mx);
    tsr_array_release(a);
    free(h);
  }
}

/* Long runs are split among threads and the partial results combined: a NaN in any part
   must survive the combination, and argmax must still find the first maximum (ties across
   parts). 100003 elements, reduced over all and along a long axis 0. */
static void test_long_runs_nan_and_ties(void **state) {
  (void)state;
  int64_t n = 100003;
  static const int64_t nan_at[] = {0, 50000, 100002};
  for (int d = 0; d < 2; d++)
    for (size_t p = 0; p < sizeof nan_at / sizeof nan_at[0]; p++) {
      tsr_dtype dt = all_dtypes[d];
      double *h = ct_random_host(n, dt, 70 + p, -1, 1);
      h[nan_at[p]] = NAN;
      tsr_array *a = tsr_test_array_from_f64(1, &n, dt, dev, h);
      for (int op = 0; op < TSR_NUM_REDUCE_OPS; op++)
        check_reduce((tsr_reduce_op)op, a, h, 0, 0);
      /* The same values as a column: a long axis 0 with stride 2 (every other row). */
      int64_t s2[2] = {n, 2};
      double *h2 = malloc((size_t)(2 * n) * sizeof(double));
      assert_non_null(h2);
      for (int64_t i = 0; i < n; i++)
        h2[2 * i] = h[i], h2[2 * i + 1] = -h[i];
      tsr_array *b = tsr_test_array_from_f64(2, s2, dt, dev, h2);
      for (int op = 0; op < TSR_NUM_REDUCE_OPS; op++)
        check_reduce((tsr_reduce_op)op, b, h2, 0, 0);
      free(h2);
      tsr_array_release(b);
      tsr_array_release(a);
      free(h);
    }
  for (int d = 0; d < N_DTYPES; d++) {
    /* Equal maxima at 17 and 90001 (different parts): the first wins; an all-equal array
       gives 0. */
    double *h = ct_random_host(n, all_dtypes[d], 80, -50, 50);
    h[17] = 60;
    h[90001] = 60;
    tsr_array *a = tsr_test_array_from_f64(1, &n, all_dtypes[d], dev, h), *o = NULL;
    int64_t idx = -1;
    TSR_ASSERT_OK(tsr_argmax(a, TSR_AXIS_ALL, 0, &o));
    TSR_ASSERT_OK(tsr_array_read(o, &idx, sizeof idx));
    assert_true(idx == 17);
    tsr_array_release(o);
    tsr_array_release(a);
    TSR_ASSERT_OK(tsr_full(1, &n, all_dtypes[d], dev, 3, &a));
    TSR_ASSERT_OK(tsr_argmax(a, 0, 0, &o));
    TSR_ASSERT_OK(tsr_array_read(o, &idx, sizeof idx));
    assert_true(idx == 0);
    tsr_array_release(o);
    tsr_array_release(a);
    free(h);
  }
}

/* argmax breaks ties to the first index, along an axis and over all (flat C order of the
   view, also for a transposed view). */
static void test_argmax_ties_and_flat_index(void **state) {
  (void)state;
  int64_t shape[2] = {3, 4};
  const double x[12] = {1, 5, 5, 0, /**/ 7, 7, 7, 7, /**/ -1, -3, -1, -2};
  for (int d = 0; d < N_DTYPES; d++) {
    tsr_array *a = tsr_test_array_from_f64(2, shape, all_dtypes[d], dev, x), *o = NULL, *t = NULL;
    TSR_ASSERT_OK(tsr_argmax(a, 1, 0, &o));
    int64_t idx[4];
    TSR_ASSERT_OK(tsr_array_read(o, idx, 3 * sizeof(int64_t)));
    assert_true(idx[0] == 1 && idx[1] == 0 && idx[2] == 0);
    tsr_array_release(o);
    TSR_ASSERT_OK(tsr_argmax(a, 0, 0, &o));
    TSR_ASSERT_OK(tsr_array_read(o, idx, 4 * sizeof(int64_t)));
    assert_true(idx[0] == 1 && idx[1] == 1 && idx[2] == 1 && idx[3] == 1);
    tsr_array_release(o);
    TSR_ASSERT_OK(tsr_argmax(a, TSR_AXIS_ALL, 0, &o));
    TSR_ASSERT_OK(tsr_array_read(o, idx, sizeof(int64_t)));
    assert_true(idx[0] == 4);
    tsr_array_release(o);
    /* Transposed (4,3): C order is 1,7,-1, 5,7,-3, ...: the first 7 is at flat index 1. */
    TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));
    TSR_ASSERT_OK(tsr_argmax(t, TSR_AXIS_ALL, 1, &o));
    int64_t one[2] = {1, 1};
    ct_assert_shape(o, TSR_I64, 2, one);
    TSR_ASSERT_OK(tsr_array_read(o, idx, sizeof(int64_t)));
    assert_true(idx[0] == 1);
    tsr_array_release(o);
    tsr_array_release(t);
    tsr_array_release(a);
  }
}

/* f32 sums accumulate in f64 (header): 100003 values whose f32 running sum would drift. */
static void test_f32_sum_accuracy(void **state) {
  (void)state;
  int64_t n = 100003;
  double *h = ct_random_host(n, TSR_F32, 55, 0.0, 1.0);
  double exact = 0;
  for (int64_t i = 0; i < n; i++)
    exact += h[i];
  tsr_array *a = tsr_test_array_from_f64(1, &n, TSR_F32, dev, h), *s = NULL;
  TSR_ASSERT_OK(tsr_sum(a, TSR_AXIS_ALL, 0, &s));
  float got;
  TSR_ASSERT_OK(tsr_array_read(s, &got, sizeof got));
  /* Only the final rounding to f32: within one ulp. */
  assert_true(fabs((double)got - exact) <= 2 * 0x1.0p-24 * exact);
  tsr_array_release(s);
  TSR_ASSERT_OK(tsr_mean(a, 0, 0, &s));
  TSR_ASSERT_OK(tsr_array_read(s, &got, sizeof got));
  assert_true(fabs((double)got - exact / (double)n) <= 2 * 0x1.0p-24 * exact / (double)n);
  tsr_array_release(s);
  tsr_array_release(a);
  free(h);
}

/* Empty axes: sum 0, mean NaN, max/min/argmax TSR_ERR_INVALID_ARGUMENT; reducing a non-empty
   axis of an array with an empty other axis is fine (empty result). */
static void test_empty(void **state) {
  (void)state;
  int64_t shape[2] = {0, 3};
  for (int d = 0; d < N_DTYPES; d++) {
    tsr_dtype dt = all_dtypes[d];
    tsr_array *a = NULL, *o = NULL;
    TSR_ASSERT_OK(tsr_zeros(2, shape, dt, dev, &a));
    double *g;
    int64_t three[1] = {3}, zero[1] = {0};

    TSR_ASSERT_OK(tsr_sum(a, 0, 0, &o));
    g = ct_read_checked(o, dt, 1, three);
    assert_true(g[0] == 0 && g[1] == 0 && g[2] == 0);
    free(g);
    tsr_array_release(o);

    TSR_ASSERT_OK(tsr_mean(a, 0, 0, &o));
    g = ct_read_checked(o, result_dtype(TSR_MEAN, dt), 1, three);
    assert_true(isnan(g[0]) && isnan(g[1]) && isnan(g[2]));
    free(g);
    tsr_array_release(o);

    TSR_ASSERT_OK(tsr_sum(a, TSR_AXIS_ALL, 0, &o));
    g = ct_read_checked(o, dt, 0, NULL);
    assert_true(g[0] == 0);
    free(g);
    tsr_array_release(o);

    TSR_ASSERT_OK(tsr_mean(a, TSR_AXIS_ALL, 1, &o));
    int64_t ones[2] = {1, 1};
    g = ct_read_checked(o, result_dtype(TSR_MEAN, dt), 2, ones);
    assert_true(isnan(g[0]));
    free(g);
    tsr_array_release(o);

    for (int op = TSR_MAX; op <= TSR_ARGMAX; op++) {
      TSR_ASSERT_STATUS(tsr_reduce((tsr_reduce_op)op, a, 0, 0, &o), TSR_ERR_INVALID_ARGUMENT, NULL);
      assert_null(o);
      TSR_ASSERT_STATUS(tsr_reduce((tsr_reduce_op)op, a, TSR_AXIS_ALL, 0, &o),
                        TSR_ERR_INVALID_ARGUMENT, NULL);
      assert_null(o);
      /* Along the non-empty axis there is nothing to reduce: an empty result. */
      TSR_ASSERT_OK(tsr_reduce((tsr_reduce_op)op, a, 1, 0, &o));
      ct_assert_shape(o, result_dtype((tsr_reduce_op)op, dt), 1, zero);
      tsr_array_release(o);
    }
    tsr_array_release(a);
  }
}

/* Axis out of range and unknown ops. */
static void test_bad_axis(void **state) {
  (void)state;
  int64_t shape[2] = {2, 3};
  tsr_array *a = tsr_test_random_array(2, shape, TSR_F32, dev, 3, NULL), *o = NULL;
  static const int axes[] = {2, -3, 100, INT_MIN + 1};
  for (size_t i = 0; i < sizeof axes / sizeof axes[0]; i++) {
    TSR_ASSERT_STATUS(tsr_sum(a, axes[i], 0, &o), TSR_ERR_INVALID_ARGUMENT, NULL);
    assert_null(o);
  }
  tsr_array *s = NULL;
  TSR_ASSERT_OK(tsr_full(0, NULL, TSR_F64, dev, 2.5, &s));
  TSR_ASSERT_STATUS(tsr_max(s, 0, 0, &o), TSR_ERR_INVALID_ARGUMENT, NULL);
  TSR_ASSERT_STATUS(tsr_reduce((tsr_reduce_op)TSR_NUM_REDUCE_OPS, a, 0, 0, &o),
                    TSR_ERR_INVALID_ARGUMENT, NULL);
  TSR_ASSERT_STATUS(tsr_reduce((tsr_reduce_op)-1, a, 0, 0, &o), TSR_ERR_INVALID_ARGUMENT, NULL);
  assert_null(o);
  tsr_array_release(s);
  tsr_array_release(a);
}

int main(void) {
  dev = tsr_test_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_axes_dtypes_shapes),
      cmocka_unit_test(test_named_wrappers),
      cmocka_unit_test(test_non_contiguous),
      cmocka_unit_test(test_random_layouts),
      cmocka_unit_test(test_nan_propagation),
      cmocka_unit_test(test_long_runs_nan_and_ties),
      cmocka_unit_test(test_argmax_ties_and_flat_index),
      cmocka_unit_test(test_f32_sum_accuracy),
      cmocka_unit_test(test_empty),
      cmocka_unit_test(test_bad_axis),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
