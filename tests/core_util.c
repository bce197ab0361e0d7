/* SPDX-License-Identifier: BSD-3-Clause */
#include "core_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

double ct_eps(tsr_dtype dtype) {
  switch (dtype) {
  case TSR_F32: return 0x1.0p-24;
  case TSR_F64: return 0x1.0p-53;
  default: return 0.0;
  }
}

double ct_round(tsr_dtype dtype, double x) {
  switch (dtype) {
  case TSR_F32: return (double)(float)x;
  case TSR_I32: return (double)(int32_t)(uint32_t)(uint64_t)(int64_t)x;
  case TSR_I64: return (double)(int64_t)x;
  default: return x;
  }
}

static void shape_str(int ndim, const int64_t *shape, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  used += (size_t)snprintf(buf, size, "(");
  for (int i = 0; i < ndim && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)shape[i]);
  if (used < size) snprintf(buf + used, size - used, ")");
}

void ct_assert_shape(const tsr_array *a, tsr_dtype dtype, int ndim, const int64_t *shape) {
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(a, &info));
  int same = info.dtype == dtype && info.ndim == ndim;
  for (int i = 0; same && i < ndim; i++)
    same = info.shape[i] == shape[i];
  if (!same) {
    char got[160], want[160];
    shape_str(info.ndim, info.shape, got, sizeof got);
    shape_str(ndim, shape, want, sizeof want);
    print_error("array is %s %s, expected %s %s\n", tsr_dtype_name(info.dtype), got,
                tsr_dtype_name(dtype), want);
    fail();
  }
}

void ct_assert_close(const double *got, const double *ref, int64_t n, double rtol, double atol,
                     const char *what) {
  for (int64_t i = 0; i < n; i++) {
    double g = got[i], r = ref[i];
    int ok;
    if (isnan(r))
      ok = isnan(g);
    else if (isinf(r))
      ok = g == r;
    else
      ok = !isnan(g) && fabs(g - r) <= rtol * fabs(r) + atol;
    if (!ok) {
      print_error("%s: element %lld is %.17g, expected %.17g (rtol %g, atol %g)\n", what,
                  (long long)i, g, r, rtol, atol);
      fail();
    }
  }
}

int64_t ct_bcast_index(int nout, const int64_t *oshape, int64_t lin, int n, const int64_t *shape) {
  int64_t idx = 0, stride = 1;
  for (int ax = nout - 1; ax >= 0; ax--) {
    int64_t coord = lin % oshape[ax];
    lin /= oshape[ax];
    int sa = ax - (nout - n);
    if (sa < 0) continue;
    if (shape[sa] != 1) idx += coord * stride;
    stride *= shape[sa];
  }
  return idx;
}

double *ct_read_checked(const tsr_array *a, tsr_dtype dtype, int ndim, const int64_t *shape) {
  ct_assert_shape(a, dtype, ndim, shape);
  return tsr_test_read_f64(a);
}

double *ct_random_host(int64_t n, tsr_dtype dtype, uint64_t seed, double lo, double hi) {
  double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  assert_non_null(x);
  tsr_test_fill_random(x, (size_t)n, seed);
  for (int64_t i = 0; i < n; i++) {
    double v = lo + (hi - lo) * (x[i] + 1.0) * 0.5;
    if (dtype == TSR_I32 || dtype == TSR_I64) v = floor(v);
    x[i] = ct_round(dtype, v);
  }
  return x;
}

int ct_random_shape(uint64_t seed, int64_t max_len, int64_t shape[5]) {
  double r[6];
  tsr_test_fill_random(r, 6, seed);
  int nd = 1 + (int)((r[0] + 1) * 2.5);
  if (nd > 5) nd = 5;
  for (int i = 0; i < nd; i++)
    shape[i] = 1 + (int64_t)((r[1 + i] + 1) * (0.5 * (double)max_len));
  return nd;
}

tsr_array *ct_random_view(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device dev,
                          uint64_t seed, double lo, double hi, double **host) {
  double r[3 * TSR_MAX_DIMS];
  tsr_test_fill_random(r, (size_t)(3 * ndim), seed ^ 0x5eedu);
  /* A random permutation (Fisher-Yates), a step of 1 or 2 and a direction per axis. */
  int perm[TSR_MAX_DIMS], step[TSR_MAX_DIMS], rev[TSR_MAX_DIMS];
  for (int i = 0; i < ndim; i++)
    perm[i] = i;
  for (int i = ndim - 1; i > 0; i--) {
    int j = (int)((r[i] + 1) * 0.5 * (i + 1));
    if (j > i) j = i;
    int t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  int64_t bshape[TSR_MAX_DIMS], len[TSR_MAX_DIMS];
  for (int i = 0; i < ndim; i++) {
    step[i] = r[ndim + i] > 0 ? 2 : 1;
    rev[i] = r[2 * ndim + i] > 0.3;
    len[i] = shape[i] * step[i];
    bshape[perm[i]] = len[i];
  }
  int64_t bn = tsr_test_numel(ndim, bshape);
  double *base = ct_random_host(bn, dtype, seed, lo, hi);
  tsr_array *b = tsr_test_array_from_f64(ndim, bshape, dtype, dev, base);
  tsr_array *v = NULL;
  TSR_ASSERT_OK(tsr_transpose(b, perm, &v));
  tsr_array_release(b);
  for (int i = 0; i < ndim; i++) {
    if (step[i] == 1 && !rev[i]) continue;
    tsr_array *s = NULL;
    if (rev[i])
      TSR_ASSERT_OK(tsr_slice(v, i, TSR_SLICE_END, -TSR_SLICE_END, -step[i], &s));
    else
      TSR_ASSERT_OK(tsr_slice(v, i, 0, TSR_SLICE_END, step[i], &s));
    tsr_array_release(v);
    v = s;
  }
  /* The view's values: base strides are C-contiguous over bshape. */
  int64_t bstride[TSR_MAX_DIMS];
  int64_t acc = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    bstride[i] = acc;
    acc *= bshape[i];
  }
  int64_t n = tsr_test_numel(ndim, shape);
  double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  assert_non_null(x);
  for (int64_t lin = 0; lin < n; lin++) {
    int64_t rem = lin, idx = 0;
    for (int i = ndim - 1; i >= 0; i--) {
      int64_t c = rem % shape[i];
      rem /= shape[i];
      int64_t coord = rev[i] ? len[i] - 1 - c * step[i] : c * step[i];
      idx += coord * bstride[perm[i]];
    }
    x[lin] = base[idx];
  }
  free(base);
  ct_assert_shape(v, dtype, ndim, shape);
  *host = x;
  return v;
}

int ct_is_cpu(tsr_device dev) {
  return dev.kind == TSR_DEVICE_CPU;
}
