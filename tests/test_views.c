/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Views (reshape, transpose, slice and their compositions), contiguous/copy/astype, assign,
 * and the lifetime of buffers shared by views. The reference is a host model of a strided view
 * over the base's float64 values, with NumPy's slice clipping written out independently.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_util.h"

static tsr_device dev;

/* ---------------------------------------------------------------- host model of a view */

typedef struct hv {
  int ndim;
  int64_t shape[TSR_MAX_DIMS];
  int64_t strides[TSR_MAX_DIMS];
  int64_t offset;
} hv;

static hv hv_contig(int ndim, const int64_t *shape) {
  hv v;
  memset(&v, 0, sizeof v);
  v.ndim = ndim;
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    v.shape[i] = shape[i];
    v.strides[i] = s;
    s *= shape[i];
  }
  return v;
}

static hv hv_transpose(hv v, const int *perm) {
  hv t = v;
  for (int i = 0; i < v.ndim; i++) {
    int p = perm ? perm[i] : v.ndim - 1 - i;
    if (p < 0) p += v.ndim;
    t.shape[i] = v.shape[p];
    t.strides[i] = v.strides[p];
  }
  return t;
}

/* NumPy's slice index adjustment (clip start/stop to the axis, count the elements). */
static int64_t clip_index(int64_t i, int64_t n, int64_t step) {
  if (i < 0) {
    i = (i < -n) ? (step < 0 ? -1 : 0) : i + n;
  } else if (i >= n) {
    i = step < 0 ? n - 1 : n;
  }
  return i;
}

static hv hv_slice(hv v, int axis, int64_t start, int64_t stop, int64_t step) {
  int64_t n = v.shape[axis];
  /* Python has no INT64_MIN problem; one element either way. */
  int64_t count_step = step == INT64_MIN ? -INT64_MAX : step;
  start = clip_index(start, n, step);
  stop = clip_index(stop, n, step);
  int64_t len;
  if (step > 0)
    len = start < stop ? (stop - start - 1) / step + 1 : 0;
  else
    len = stop < start ? (start - stop - 1) / (-count_step) + 1 : 0;
  if (len > 0) v.offset += start * v.strides[axis];
  v.shape[axis] = len;
  if (len > 1) v.strides[axis] *= step;
  return v;
}

static int64_t hv_size(const hv *v) {
  return tsr_test_numel(v->ndim, v->shape);
}

/* Buffer index of element `lin` (C order) of the view. */
static int64_t hv_index(const hv *v, int64_t lin) {
  int64_t idx = v->offset;
  for (int ax = v->ndim - 1; ax >= 0; ax--) {
    idx += (lin % v->shape[ax]) * v->strides[ax];
    lin /= v->shape[ax];
  }
  return idx;
}

static double *hv_gather(const hv *v, const double *base) {
  int64_t n = hv_size(v);
  double *x = malloc((size_t)(n ? n : 1) * sizeof(double));
  assert_non_null(x);
  for (int64_t i = 0; i < n; i++)
    x[i] = base[hv_index(v, i)];
  return x;
}

/* Asserts that the array holds the model's values (and shape). */
static void check_view(const tsr_array *a, tsr_dtype dtype, const hv *v, const double *base,
                       const char *what) {
  double *got = ct_read_checked(a, dtype, v->ndim, v->shape);
  double *ref = hv_gather(v, base);
  ct_assert_close(got, ref, hv_size(v), 0, 0, what);
  free(got);
  free(ref);
}

/* Writes fresh values through the view and checks the whole base: the view must share the
   base's buffer exactly where the model says (tsr_array_write into a strided view). */
static void check_write_through(tsr_array *view, const hv *v, tsr_array *base, double *host,
                                int64_t base_n, uint64_t seed) {
  int64_t n = hv_size(v);
  double *vals = ct_random_host(n, TSR_F64, seed, -10, 10);
  TSR_ASSERT_OK(tsr_array_write(view, vals, (size_t)n * sizeof(double)));
  for (int64_t i = 0; i < n; i++)
    host[hv_index(v, i)] = vals[i];
  double *got = tsr_test_read_f64(base);
  ct_assert_close(got, host, base_n, 0, 0, "base after writing through a view");
  free(got);
  free(vals);
}

static int is_contiguous(const tsr_array *a) {
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(a, &info));
  return info.contiguous;
}

/* ---------------------------------------------------------------- reshape */

static void test_reshape_view(void **state) {
  (void)state;
  int64_t shape[3] = {2, 3, 4};
  double *host = NULL;
  tsr_array *a = tsr_test_random_array(3, shape, TSR_F64, dev, 11, &host);

  static const struct {
    int ndim;
    int64_t req[4], want[4];
  } cases[] = {
      {2, {4, 6}, {4, 6}},
      {2, {-1, 4}, {6, 4}},
      {1, {-1}, {24}},
      {4, {1, 24, 1, 1}, {1, 24, 1, 1}},
      {3, {2, -1, 3}, {2, 4, 3}},
      {3, {2, 3, 4}, {2, 3, 4}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    tsr_array *r = NULL;
    TSR_ASSERT_OK(tsr_reshape(a, cases[c].ndim, cases[c].req, &r));
    hv v = hv_contig(cases[c].ndim, cases[c].want); /* same C-order values as the base */
    check_view(r, TSR_F64, &v, host, "reshape of a contiguous array");
    assert_true(is_contiguous(r));
    /* A view: writes show in the base. */
    check_write_through(r, &v, a, host, 24, 100 + c);
    tsr_array_release(r);
  }
  free(host);
  tsr_array_release(a);
}

/* Scalars and empty arrays reshape too. */
static void test_reshape_scalar_and_empty(void **state) {
  (void)state;
  tsr_array *s = NULL, *r = NULL;
  TSR_ASSERT_OK(tsr_full(0, NULL, TSR_I32, dev, 42, &s));
  int64_t one[3] = {1, 1, 1};
  TSR_ASSERT_OK(tsr_reshape(s, 3, one, &r));
  int32_t x = 0;
  ct_assert_shape(r, TSR_I32, 3, one);
  TSR_ASSERT_OK(tsr_array_read(r, &x, sizeof x));
  assert_int_equal(x, 42);
  tsr_array *back = NULL;
  TSR_ASSERT_OK(tsr_reshape(r, 0, NULL, &back));
  ct_assert_shape(back, TSR_I32, 0, NULL);
  tsr_array_release(back);
  tsr_array_release(r);
  tsr_array_release(s);

  int64_t eshape[2] = {0, 3}, to[2] = {3, 0}, inferred[2] = {-1, 3}, want[2] = {0, 3};
  tsr_array *e = NULL;
  TSR_ASSERT_OK(tsr_zeros(2, eshape, TSR_F32, dev, &e));
  TSR_ASSERT_OK(tsr_reshape(e, 2, to, &r));
  ct_assert_shape(r, TSR_F32, 2, to);
  tsr_array_release(r);
  TSR_ASSERT_OK(tsr_reshape(e, 2, inferred, &r));
  ct_assert_shape(r, TSR_F32, 2, want);
  tsr_array_release(r);
  tsr_array_release(e);
}

/* A transposed matrix cannot be flattened by strides: the result is a contiguous copy. */
static void test_reshape_copy(void **state) {
  (void)state;
  int64_t shape[2] = {3, 4};
  double *host = NULL;
  tsr_array *a = tsr_test_random_array(2, shape, TSR_F64, dev, 12, &host);
  tsr_array *t = NULL, *r = NULL;
  TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));
  int64_t flat[1] = {-1};
  TSR_ASSERT_OK(tsr_reshape(t, 1, flat, &r));
  hv v = hv_transpose(hv_contig(2, shape), NULL);
  double *ref = hv_gather(&v, host);
  int64_t want[1] = {12};
  double *got = ct_read_checked(r, TSR_F64, 1, want);
  ct_assert_close(got, ref, 12, 0, 0, "reshape of a transposed matrix");
  assert_true(is_contiguous(r));
  /* A copy: writing into it leaves the base alone. */
  double vals[12];
  for (int i = 0; i < 12; i++)
    vals[i] = 1000 + i;
  TSR_ASSERT_OK(tsr_array_write(r, vals, sizeof vals));
  double *base = tsr_test_read_f64(a);
  ct_assert_close(base, host, 12, 0, 0, "base after writing into a reshape copy");
  free(base);
  free(got);
  free(ref);
  tsr_array_release(r);
  tsr_array_release(t);
  tsr_array_release(a);
  free(host);
}

/* Splitting an axis of a strided view is expressible by strides: NumPy returns a view. */
static void test_reshape_strided_view(void **state) {
  (void)state;
  int64_t shape[2] = {4, 6};
  double *host = NULL;
  tsr_array *a = tsr_test_random_array(2, shape, TSR_F64, dev, 13, &host);
  tsr_array *s = NULL, *r = NULL;
  TSR_ASSERT_OK(tsr_slice(a, 1, 0, TSR_SLICE_END, 2, &s)); /* (4,3), strides (6,2) */
  int64_t to[3] = {2, 2, 3};
  TSR_ASSERT_OK(tsr_reshape(s, 3, to, &r));
  hv v = hv_slice(hv_contig(2, shape), 1, 0, TSR_SLICE_END, 2);
  /* The same elements as v, split along axis 0. */
  hv w;
  memset(&w, 0, sizeof w);
  w.ndim = 3;
  w.shape[0] = 2, w.shape[1] = 2, w.shape[2] = 3;
  w.strides[0] = 2 * v.strides[0], w.strides[1] = v.strides[0], w.strides[2] = v.strides[1];
  w.offset = v.offset;
  check_view(r, TSR_F64, &w, host, "reshape of a column-strided view");
  check_write_through(r, &w, a, host, 24, 5);
  tsr_array_release(r);
  tsr_array_release(s);
  tsr_array_release(a);
  free(host);
}

/* ---------------------------------------------------------------- transpose */

static void test_transpose(void **state) {
  (void)state;
  int64_t shape[3] = {2, 3, 4};
  double *host = NULL;
  tsr_array *a = tsr_test_random_array(3, shape, TSR_F64, dev, 21, &host);
  static const int perms[][3] = {{2, 0, 1}, {0, 1, 2}, {1, 0, 2}, {-1, 0, -2}, {2, 1, 0}};
  for (size_t p = 0; p < sizeof perms / sizeof perms[0]; p++) {
    tsr_array *t = NULL;
    TSR_ASSERT_OK(tsr_transpose(a, perms[p], &t));
    hv v = hv_transpose(hv_contig(3, shape), perms[p]);
    check_view(t, TSR_F64, &v, host, "transpose");
    check_write_through(t, &v, a, host, 24, 200 + p);
    tsr_array_release(t);
  }
  /* NULL reverses the axes. */
  tsr_array *t = NULL;
  TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));
  hv v = hv_transpose(hv_contig(3, shape), NULL);
  check_view(t, TSR_F64, &v, host, "transpose(NULL)");
  assert_false(is_contiguous(t));
  tsr_array_release(t);
  tsr_array_release(a);
  free(host);

  /* 1-D and 0-D: the identity. */
  int64_t n[1] = {7};
  a = tsr_test_random_array(1, n, TSR_I32, dev, 22, &host);
  TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));
  v = hv_contig(1, n);
  check_view(t, TSR_I32, &v, host, "transpose of 1-D");
  tsr_array_release(t);
  tsr_array_release(a);
  free(host);
  TSR_ASSERT_OK(tsr_full(0, NULL, TSR_F32, dev, 1.25, &a));
  TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));
  ct_assert_shape(t, TSR_F32, 0, NULL);
  tsr_array_release(t);
  tsr_array_release(a);
}

/* ---------------------------------------------------------------- slice */

static void test_slice_1d(void **state) {
  (void)state;
  const int64_t E = TSR_SLICE_END;
  const int64_t cases[][3] = {
      {0, E, E},
      {E, -E, INT64_MIN},
      {-1, -E, -E},
      {INT64_MIN, E, 3},
      {INT64_MIN, INT64_MIN, -1},
      {2, 7, 1},
      {0, E, 1},
      {-3, E, 1},
      {-100, 3, 1},
      {8, 100, 1},
      {1, 9, 3},
      {8, 2, -2},
      {E, -E, -1},
      {E, -E, -3},
      {-1, -E, -4},
      {100, 2, -1},
      {5, 2, 1},
      {2, 5, -1},
      {-100, -50, 1},
      {50, 100, 1},
      {-100, E, -1},
      {0, 0, 1},
      {9, 9, -1},
      {3, -3, 1},
      {-2, 1, -1},
      {0, E, 100},
      {E, -E, -100},
  };
  int64_t shape[1] = {10};
  double *host = NULL;
  tsr_array *a = tsr_test_random_array(1, shape, TSR_F64, dev, 31, &host);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    tsr_array *s = NULL;
    TSR_ASSERT_OK(tsr_slice(a, 0, cases[c][0], cases[c][1], cases[c][2], &s));
    hv v = hv_slice(hv_contig(1, shape), 0, cases[c][0], cases[c][1], cases[c][2]);
    char what[96];
    snprintf(what, sizeof what, "slice [%lld:%lld:%lld]", (long long)cases[c][0],
             (long long)cases[c][1], (long long)cases[c][2]);
    check_view(s, TSR_F64, &v, host, what);
    if (hv_size(&v) > 0) check_write_through(s, &v, a, host, 10, 300 + c);
    tsr_array_release(s);
  }
  free(host);
  tsr_array_release(a);
}

static void test_slice_2d(void **state) {
  (void)state;
  int64_t shape[2] = {5, 7};
  double *host = NULL;
  tsr_array *a = tsr_test_random_array(2, shape, TSR_I64, dev, 32, &host);
  tsr_array *s1 = NULL, *s2 = NULL;
  TSR_ASSERT_OK(tsr_slice(a, 1, 1, -1, 2, &s1));                           /* columns 1,3,5 */
  TSR_ASSERT_OK(tsr_slice(s1, 0, TSR_SLICE_END, -TSR_SLICE_END, -2, &s2)); /* rows 4,2,0 */
  hv v1 = hv_slice(hv_contig(2, shape), 1, 1, -1, 2);
  hv v2 = hv_slice(v1, 0, TSR_SLICE_END, -TSR_SLICE_END, -2);
  check_view(s1, TSR_I64, &v1, host, "column slice");
  check_view(s2, TSR_I64, &v2, host, "row slice of a column slice");
  assert_false(is_contiguous(s2));
  tsr_array_release(s1);
  tsr_array_release(s2);
  /* An empty slice of a 2-D array keeps the other axis. */
  TSR_ASSERT_OK(tsr_slice(a, 0, 3, 3, 1, &s1));
  int64_t want[2] = {0, 7};
  ct_assert_shape(s1, TSR_I64, 2, want);
  tsr_array_release(s1);
  tsr_array_release(a);
  free(host);
}

/* Random chains of transposes and slices on a 3-D array, then a reshape to 1-D. */
static void test_view_compositions(void **state) {
  (void)state;
  int64_t shape[3] = {4, 5, 6};
  double *host = NULL;
  tsr_array *base = tsr_test_random_array(3, shape, TSR_F32, dev, 41, &host);
  double r[6];
  for (int trial = 0; trial < 60; trial++) {
    tsr_array *cur = NULL;
    TSR_ASSERT_OK(tsr_array_retain(base));
    cur = base;
    hv v = hv_contig(3, shape);
    for (int step = 0; step < 4; step++) {
      tsr_test_fill_random(r, 6, (uint64_t)(trial * 10 + step + 1));
      tsr_array *next = NULL;
      if (r[0] < -0.3) {
        int perm[3] = {0, 1, 2};
        int swap_a = (int)((r[1] + 1) * 1.5), swap_b = (int)((r[2] + 1) * 1.5);
        int tmp = perm[swap_a];
        perm[swap_a] = perm[swap_b];
        perm[swap_b] = tmp;
        TSR_ASSERT_OK(tsr_transpose(cur, perm, &next));
        v = hv_transpose(v, perm);
      } else {
        int axis = (int)((r[1] + 1) * 1.5);
        int64_t n = v.shape[axis];
        int64_t start = (int64_t)floor(r[2] * (double)(n + 2));
        int64_t stop = (int64_t)floor(r[3] * (double)(n + 2));
        int64_t stepv = (int64_t)floor(r[4] * 3.0);
        if (stepv == 0) stepv = r[5] < 0 ? -1 : 1;
        if (r[5] > 0.6) stop = stepv > 0 ? TSR_SLICE_END : -TSR_SLICE_END;
        TSR_ASSERT_OK(tsr_slice(cur, axis, start, stop, stepv, &next));
        v = hv_slice(v, axis, start, stop, stepv);
      }
      tsr_array_release(cur);
      cur = next;
      check_view(cur, TSR_F32, &v, host, "composed view");
    }
    /* A reshape of whatever came out keeps the C-order values. */
    int64_t flat[1] = {-1};
    tsr_array *f = NULL;
    TSR_ASSERT_OK(tsr_reshape(cur, 1, flat, &f));
    int64_t n = hv_size(&v);
    double *ref = hv_gather(&v, host);
    double *got = ct_read_checked(f, TSR_F32, 1, &n);
    ct_assert_close(got, ref, n, 0, 0, "reshape of a composed view");
    free(ref);
    free(got);
    tsr_array_release(f);
    tsr_array_release(cur);
  }
  tsr_array_release(base);
  free(host);
}

/* ---------------------------------------------------------------- contiguous / copy */

static void test_contiguous_and_copy(void **state) {
  (void)state;
  int64_t shape[2] = {13, 7};
  double *host = NULL;
  tsr_array *a = tsr_test_random_array(2, shape, TSR_F64, dev, 51, &host);
  tsr_array *c = NULL;
  /* Already contiguous: the same object, one more reference. */
  TSR_ASSERT_OK(tsr_contiguous(a, &c));
  assert_ptr_equal(c, a);
  tsr_array_release(c);

  tsr_array *t = NULL;
  TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));
  hv v = hv_transpose(hv_contig(2, shape), NULL);
  TSR_ASSERT_OK(tsr_contiguous(t, &c));
  assert_ptr_not_equal(c, t);
  assert_true(is_contiguous(c));
  check_view(c, TSR_F64, &v, host, "contiguous of a transpose");
  tsr_array_release(c);

  /* copy: always a new, independent array. */
  TSR_ASSERT_OK(tsr_copy(a, &c));
  assert_ptr_not_equal(c, a);
  double *vals = ct_random_host(91, TSR_F64, 52, -1, 1);
  TSR_ASSERT_OK(tsr_array_write(c, vals, 91 * sizeof(double)));
  double *got = tsr_test_read_f64(a);
  ct_assert_close(got, host, 91, 0, 0, "original after writing its copy");
  free(got);
  got = tsr_test_read_f64(c);
  ct_assert_close(got, vals, 91, 0, 0, "copy after writing it");
  free(got);
  free(vals);
  tsr_array_release(c);

  /* copy of a stepped slice. */
  tsr_array *s = NULL;
  TSR_ASSERT_OK(tsr_slice(t, 1, -1, -TSR_SLICE_END, -3, &s));
  hv sv = hv_slice(v, 1, -1, -TSR_SLICE_END, -3);
  TSR_ASSERT_OK(tsr_copy(s, &c));
  assert_true(is_contiguous(c));
  check_view(c, TSR_F64, &sv, host, "copy of a reversed stepped slice");
  tsr_array_release(c);
  tsr_array_release(s);
  tsr_array_release(t);
  tsr_array_release(a);
  free(host);
}

/* ---------------------------------------------------------------- astype */

static const tsr_dtype all_dtypes[TSR_NUM_DTYPES] = {TSR_F32, TSR_F64, TSR_I32, TSR_I64};

static void test_astype_all_pairs(void **state) {
  (void)state;
  int64_t shape[2] = {7, 13};
  for (int from = 0; from < TSR_NUM_DTYPES; from++)
    for (int to = 0; to < TSR_NUM_DTYPES; to++) {
      tsr_dtype df = all_dtypes[from], dt = all_dtypes[to];
      /* Values in [-1000, 1000): fractional for floats, so truncation is exercised. */
      double *host = ct_random_host(91, df, 60 + (uint64_t)(from * 4 + to), -1000, 1000);
      tsr_array *a = tsr_test_array_from_f64(2, shape, df, dev, host);
      tsr_array *t = NULL, *c = NULL;
      TSR_ASSERT_OK(tsr_transpose(a, NULL, &t)); /* on a non-contiguous view */
      TSR_ASSERT_OK(tsr_astype(t, dt, &c));
      assert_true(is_contiguous(c));
      hv v = hv_transpose(hv_contig(2, shape), NULL);
      double *ref = hv_gather(&v, host);
      int to_int = dt == TSR_I32 || dt == TSR_I64;
      for (int i = 0; i < 91; i++)
        ref[i] = ct_round(dt, to_int ? trunc(ref[i]) : ref[i]);
      int64_t tshape[2] = {13, 7};
      double *got = ct_read_checked(c, dt, 2, tshape);
      ct_assert_close(got, ref, 91, 0, 0, "astype");
      free(got);
      free(ref);
      free(host);
      tsr_array_release(c);
      tsr_array_release(t);
      tsr_array_release(a);
    }
}

/* Float to integer: truncation toward zero, saturation at the limits, NaN gives 0. */
static void test_astype_saturation(void **state) {
  (void)state;
  static const double in[] = {1e10, -1e10, 3e9,   NAN,          INFINITY,      -INFINITY, 2.9,
                              -2.9, 1e19,  -1e19, 2147483647.5, -2147483648.9, 0.0,       -0.5};
  enum { N = sizeof in / sizeof in[0] };
  static const int32_t want32[N] = {INT32_MAX, INT32_MIN, INT32_MAX, 0,         INT32_MAX,
                                    INT32_MIN, 2,         -2,        INT32_MAX, INT32_MIN,
                                    INT32_MAX, INT32_MIN, 0,         0};
  static const int64_t want64[N] = {
      10000000000LL, -10000000000LL, 3000000000LL,  0, INT64_MAX, INT64_MIN, 2, -2, INT64_MAX,
      INT64_MIN,     2147483647LL,   -2147483648LL, 0, 0};
  int64_t shape[1] = {N};
  for (int src = 0; src < 2; src++) {
    tsr_dtype sdt = src ? TSR_F64 : TSR_F32;
    tsr_array *a = tsr_test_array_from_f64(1, shape, sdt, dev, in);
    tsr_array *c32 = NULL, *c64 = NULL;
    TSR_ASSERT_OK(tsr_astype(a, TSR_I32, &c32));
    TSR_ASSERT_OK(tsr_astype(a, TSR_I64, &c64));
    int32_t g32[N];
    int64_t g64[N];
    TSR_ASSERT_OK(tsr_array_read(c32, g32, sizeof g32));
    TSR_ASSERT_OK(tsr_array_read(c64, g64, sizeof g64));
    for (int i = 0; i < N; i++) {
      /* f32 cannot hold 2147483647.5 exactly (it rounds to 2^31, out of i32 range either
         way) nor 3e9 or 1e10 exactly, so compare against the f32 value for i64. */
      double v = sdt == TSR_F32 ? (double)(float)in[i] : in[i];
      int64_t w64 = want64[i];
      if (sdt == TSR_F32 && isfinite(v) && fabs(v) < 9e18) w64 = (int64_t)trunc(v);
      if (g32[i] != want32[i] || g64[i] != w64) {
        print_error("astype %s -> int of %.17g: i32 %d (want %d), i64 %lld (want %lld)\n",
                    tsr_dtype_name(sdt), v, g32[i], want32[i], (long long)g64[i], (long long)w64);
        fail();
      }
    }
    tsr_array_release(c32);
    tsr_array_release(c64);
    tsr_array_release(a);
  }
}

/* Row slices of a C-contiguous array are C-contiguous (NumPy's flag), and so is a view whose
   only non-unit axis is contiguous: tsr_contiguous returns them without a copy. */
static void test_contiguous_flag(void **state) {
  (void)state;
  int64_t shape[2] = {5, 4}, col[2] = {5, 1};
  tsr_array *a = tsr_test_random_array(2, shape, TSR_F32, dev, 55, NULL), *rows = NULL;
  tsr_array *c = NULL, *step = NULL, *cvt = NULL;
  TSR_ASSERT_OK(tsr_slice(a, 0, 1, 3, 1, &rows));
  assert_true(is_contiguous(rows));
  TSR_ASSERT_OK(tsr_contiguous(rows, &c));
  assert_ptr_equal(c, rows);
  tsr_array_release(c);
  TSR_ASSERT_OK(tsr_slice(a, 0, 0, TSR_SLICE_END, 2, &step));
  assert_false(is_contiguous(step));
  tsr_array *col_arr = tsr_test_random_array(2, col, TSR_F32, dev, 56, NULL);
  TSR_ASSERT_OK(tsr_transpose(col_arr, NULL, &cvt)); /* (1,5): strides of the unit axis are moot */
  assert_true(is_contiguous(cvt));
  tsr_array_release(cvt);
  tsr_array_release(col_arr);
  tsr_array_release(step);
  tsr_array_release(rows);
  tsr_array_release(a);
}

/* Float to float: out-of-range f64 values become +-inf in f32, NaN stays NaN (IEEE). */
static void test_astype_float_range(void **state) {
  (void)state;
  const double in[5] = {1e300, -1e300, NAN, 1e-300, 3.0000000001};
  int64_t shape[1] = {5};
  tsr_array *a = tsr_test_array_from_f64(1, shape, TSR_F64, dev, in), *c = NULL;
  TSR_ASSERT_OK(tsr_astype(a, TSR_F32, &c));
  float got[5];
  TSR_ASSERT_OK(tsr_array_read(c, got, sizeof got));
  assert_true(isinf(got[0]) && got[0] > 0);
  assert_true(isinf(got[1]) && got[1] < 0);
  assert_true(isnan(got[2]));
  assert_true(got[3] == 0.0f);
  assert_true(got[4] == 3.0f);
  tsr_array_release(c);
  tsr_array_release(a);
}

/* ---------------------------------------------------------------- assign */

static void test_assign_broadcast(void **state) {
  (void)state;
  int64_t bshape[2] = {4, 3};
  double *host = NULL;
  tsr_array *base = tsr_test_random_array(2, bshape, TSR_F64, dev, 71, &host);
  tsr_array *dst = NULL;
  TSR_ASSERT_OK(tsr_transpose(base, NULL, &dst)); /* (3,4), non-contiguous */
  hv v = hv_transpose(hv_contig(2, bshape), NULL);

  /* (4,) stretched over the rows. */
  int64_t rshape[1] = {4};
  double *row = NULL;
  tsr_array *src = tsr_test_random_array(1, rshape, TSR_F64, dev, 72, &row);
  TSR_ASSERT_OK(tsr_assign(dst, src));
  for (int64_t i = 0; i < 12; i++)
    host[hv_index(&v, i)] = row[i % 4];
  double *got = tsr_test_read_f64(base);
  ct_assert_close(got, host, 12, 0, 0, "assign (4,) into a transposed (3,4)");
  free(got);
  free(row);
  tsr_array_release(src);

  /* (3,1) with a dtype conversion (i32 into f64). */
  int64_t cshape[2] = {3, 1};
  double *col = NULL;
  src = tsr_test_random_array(2, cshape, TSR_I32, dev, 73, &col);
  TSR_ASSERT_OK(tsr_assign(dst, src));
  for (int64_t i = 0; i < 12; i++)
    host[hv_index(&v, i)] = col[i / 4];
  got = tsr_test_read_f64(base);
  ct_assert_close(got, host, 12, 0, 0, "assign i32 (3,1) into f64 (3,4)");
  free(got);
  free(col);
  tsr_array_release(src);

  /* A scalar into a stepped slice only touches the slice. */
  tsr_array *s = NULL;
  TSR_ASSERT_OK(tsr_slice(dst, 1, 1, TSR_SLICE_END, 2, &s));
  hv sv = hv_slice(v, 1, 1, TSR_SLICE_END, 2);
  TSR_ASSERT_OK(tsr_full(0, NULL, TSR_F32, dev, -0.375, &src));
  TSR_ASSERT_OK(tsr_assign(s, src));
  for (int64_t i = 0; i < hv_size(&sv); i++)
    host[hv_index(&sv, i)] = -0.375;
  got = tsr_test_read_f64(base);
  ct_assert_close(got, host, 12, 0, 0, "assign scalar into a stepped slice");
  free(got);
  tsr_array_release(src);
  tsr_array_release(s);

  /* Same shape, f64 into i64 (truncation toward zero). */
  int64_t ishape[2] = {3, 4};
  tsr_array *ia = NULL;
  TSR_ASSERT_OK(tsr_zeros(2, ishape, TSR_I64, dev, &ia));
  TSR_ASSERT_OK(tsr_assign(ia, dst));
  double *ref = hv_gather(&v, host);
  for (int i = 0; i < 12; i++)
    ref[i] = trunc(ref[i]);
  got = tsr_test_read_f64(ia);
  ct_assert_close(got, ref, 12, 0, 0, "assign f64 into i64");
  free(got);
  free(ref);
  tsr_array_release(ia);

  tsr_array_release(dst);
  tsr_array_release(base);
  free(host);
}

/* Source and destination sharing memory: the result is as if src were copied first (NumPy
   handles overlap the same way): a = a^T, and a shift of a row by one. */
static void test_assign_overlap(void **state) {
  (void)state;
  int64_t shape[2] = {6, 6};
  double *host = NULL;
  tsr_array *a = tsr_test_random_array(2, shape, TSR_F64, dev, 91, &host), *t = NULL;
  TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));
  TSR_ASSERT_OK(tsr_assign(a, t));
  double ref[36];
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++)
      ref[i * 6 + j] = host[j * 6 + i];
  double *got = tsr_test_read_f64(a);
  ct_assert_close(got, ref, 36, 0, 0, "a = a^T");
  free(got);
  tsr_array_release(t);
  tsr_array_release(a);
  free(host);

  int64_t n = 1021;
  tsr_array *v = tsr_test_random_array(1, &n, TSR_F64, dev, 92, &host), *dst = NULL, *src = NULL;
  TSR_ASSERT_OK(tsr_slice(v, 0, 1, TSR_SLICE_END, 1, &dst)); /* v[1:] */
  TSR_ASSERT_OK(tsr_slice(v, 0, 0, -1, 1, &src));            /* v[:-1] */
  TSR_ASSERT_OK(tsr_assign(dst, src));
  double *shifted = malloc((size_t)n * sizeof(double));
  assert_non_null(shifted);
  shifted[0] = host[0];
  for (int64_t i = 1; i < n; i++)
    shifted[i] = host[i - 1];
  got = tsr_test_read_f64(v);
  ct_assert_close(got, shifted, n, 0, 0, "v[1:] = v[:-1]");
  free(got);
  free(shifted);
  free(host);
  tsr_array_release(dst);
  tsr_array_release(src);
  tsr_array_release(v);
}

/* ---------------------------------------------------------------- lifetimes */

/* Views keep the buffer alive after the base is released (ASan checks the reads). */
static void test_views_outlive_base(void **state) {
  (void)state;
  int64_t shape[2] = {6, 5};
  double *host = NULL;
  tsr_array *base = tsr_test_random_array(2, shape, TSR_F64, dev, 81, &host);
  tsr_array *t = NULL, *s = NULL, *r = NULL;
  TSR_ASSERT_OK(tsr_transpose(base, NULL, &t));
  TSR_ASSERT_OK(tsr_slice(t, 1, 1, 5, 2, &s));
  TSR_ASSERT_OK(tsr_reshape(base, 2, (int64_t[]){3, 10}, &r));
  TSR_ASSERT_OK(tsr_array_release(base));
  TSR_ASSERT_OK(tsr_array_release(t));
  hv v = hv_slice(hv_transpose(hv_contig(2, shape), NULL), 1, 1, 5, 2);
  check_view(s, TSR_F64, &v, host, "slice after its base was released");
  hv rv = hv_contig(2, (int64_t[]){3, 10});
  check_view(r, TSR_F64, &rv, host, "reshape after its base was released");
  /* Writing through one surviving view shows in the other. */
  tsr_array *r2 = NULL;
  TSR_ASSERT_OK(tsr_reshape(r, 2, (int64_t[]){6, 5}, &r2));
  TSR_ASSERT_OK(tsr_array_release(r));
  double vals[2][5];
  for (int i = 0; i < 10; i++)
    vals[i / 5][i % 5] = 500.0 + i;
  TSR_ASSERT_OK(tsr_array_write(s, vals, sizeof vals));
  for (int64_t i = 0; i < 10; i++)
    host[hv_index(&v, i)] = 500.0 + (double)i;
  double *got = tsr_test_read_f64(r2);
  ct_assert_close(got, host, 30, 0, 0, "buffer shared by two surviving views");
  free(got);
  TSR_ASSERT_OK(tsr_array_release(s));
  TSR_ASSERT_OK(tsr_array_release(r2));
  free(host);
}

int main(void) {
  dev = tsr_test_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reshape_view),
      cmocka_unit_test(test_reshape_scalar_and_empty),
      cmocka_unit_test(test_reshape_copy),
      cmocka_unit_test(test_reshape_strided_view),
      cmocka_unit_test(test_transpose),
      cmocka_unit_test(test_slice_1d),
      cmocka_unit_test(test_slice_2d),
      cmocka_unit_test(test_view_compositions),
      cmocka_unit_test(test_contiguous_and_copy),
      cmocka_unit_test(test_astype_all_pairs),
      cmocka_unit_test(test_astype_saturation),
      cmocka_unit_test(test_contiguous_flag),
      cmocka_unit_test(test_astype_float_range),
      cmocka_unit_test(test_assign_broadcast),
      cmocka_unit_test(test_assign_overlap),
      cmocka_unit_test(test_views_outlive_base),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
