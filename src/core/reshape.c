/* SPDX-License-Identifier: BSD-3-Clause */
/* The public view functions: new arrays over the same buffer with another shape, axis order or
   range (reshape, transpose, slice); reshape copies only when strides cannot express the new
   shape (NumPy's rule). */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

/*
 * Strides for viewing `a` with a new shape of the same size without copying, or false when
 * the strides cannot express it. Groups of old axes are matched with groups of new axes of
 * equal product (size-1 axes dropped); each old group must be contiguous in memory, and the
 * new axes of the group then get strides inside it (the rule of NumPy's reshape).
 */
static bool tsr__reshape_strides(const tsr_array *a, int nnew, const int64_t *newshape,
                                 int64_t *newstrides) {
  int64_t od[TSR_MAX_DIMS], os[TSR_MAX_DIMS];
  int nold = 0;
  for (int i = 0; i < a->ndim; ++i)
    if (a->shape[i] != 1) {
      od[nold] = a->shape[i];
      os[nold] = a->strides[i];
      ++nold;
    }
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < nnew && oi < nold) {
    int64_t np = newshape[ni], op = od[oi];
    while (np != op) {
      if (np < op)
        np *= newshape[nj++];
      else
        op *= od[oj++];
    }
    for (int k = oi; k < oj - 1; ++k)
      if (os[k] != od[k + 1] * os[k + 1]) return false;
    newstrides[nj - 1] = os[oj - 1];
    for (int k = nj - 1; k > ni; --k)
      newstrides[k - 1] = newstrides[k] * newshape[k];
    ni = nj++;
    oi = oj++;
  }
  /* Trailing size-1 axes: any stride works; use the last one as NumPy does. */
  int64_t last = ni > 0 ? newstrides[ni - 1] : 1;
  for (int k = ni; k < nnew; ++k)
    newstrides[k] = last;
  return true;
}

tsr_status tsr_reshape(const tsr_array *a, int ndim, const int64_t *shape, tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(out != NULL, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  TSR_CHECK(a != NULL, TSR_ERR_NULL_POINTER, "a is NULL");
  TSR_CHECK(ndim >= 0 && ndim <= TSR_MAX_DIMS, TSR_ERR_INVALID_ARGUMENT, "ndim %d is outside 0..%d",
            ndim, TSR_MAX_DIMS);
  TSR_CHECK(ndim == 0 || shape != NULL, TSR_ERR_NULL_POINTER, "shape is NULL with ndim %d", ndim);
  int64_t size = tsr__array_size(a);
  int64_t ns[TSR_MAX_DIMS];
  int infer = -1;
  int64_t known = 1;
  char s1[128], s2[128];
  for (int i = 0; i < ndim; ++i) {
    ns[i] = shape[i];
    if (shape[i] == -1) {
      TSR_CHECK(infer < 0, TSR_ERR_INVALID_ARGUMENT, "shape %s has more than one -1",
                tsr__shape_str(ndim, shape, s1, sizeof s1));
      infer = i;
      continue;
    }
    TSR_CHECK(shape[i] >= 0, TSR_ERR_INVALID_ARGUMENT, "shape[%d] is %lld", i, (long long)shape[i]);
    TSR_CHECK(tsr__mul_overflow_i64(known, shape[i], &known), TSR_ERR_OVERFLOW,
              "element count of shape %s overflows int64",
              tsr__shape_str(ndim, shape, s1, sizeof s1));
  }
  if (infer >= 0) {
    TSR_CHECK(known != 0 && size % known == 0, TSR_ERR_SHAPE,
              "cannot reshape %s (%lld elements) into %s",
              tsr__shape_str(a->ndim, a->shape, s1, sizeof s1), (long long)size,
              tsr__shape_str(ndim, shape, s2, sizeof s2));
    ns[infer] = size / known;
  }
  int64_t nsize;
  TSR_CALL(tsr__shape_check(ndim, ns, a->dtype, &nsize));
  TSR_CHECK(nsize == size, TSR_ERR_SHAPE,
            "cannot reshape %s (%lld elements) into %s (%lld elements)",
            tsr__shape_str(a->ndim, a->shape, s1, sizeof s1), (long long)size,
            tsr__shape_str(ndim, ns, s2, sizeof s2), (long long)nsize);
  int64_t strides[TSR_MAX_DIMS];
  if (size == 0) {
    tsr__contiguous_strides(ndim, ns, strides);
    return tsr__array_new_view(a, ndim, ns, strides, a->offset, out);
  }
  if (tsr__reshape_strides(a, ndim, ns, strides))
    return tsr__array_new_view(a, ndim, ns, strides, a->offset, out);
  /* Strides cannot express it, so `a` is not contiguous: a contiguous copy, then its view. */
  tsr_array *c = NULL;
  TSR_CALL(tsr__array_contiguous(a, &c));
  tsr__contiguous_strides(ndim, ns, strides);
  tsr_status st = tsr__array_new_view(c, ndim, ns, strides, c->offset, out);
  tsr_array_release(c);
  return st;
}

tsr_status tsr_transpose(const tsr_array *a, const int *perm, tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(out != NULL, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  TSR_CHECK(a != NULL, TSR_ERR_NULL_POINTER, "a is NULL");
  int n = a->ndim, p[TSR_MAX_DIMS];
  bool seen[TSR_MAX_DIMS] = {false};
  for (int i = 0; i < n; ++i) {
    int v = perm ? perm[i] : n - 1 - i;
    if (v < 0) v += n;
    if (v < 0 || v >= n || seen[v]) {
      char buf[128];
      size_t used = 0;
      buf[0] = '\0';
      for (int j = 0; j < n && used < sizeof buf; ++j) {
        int k = snprintf(buf + used, sizeof buf - used, j ? ", %d" : "%d", perm[j]);
        if (k < 0) break;
        used += (size_t)k;
      }
      return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                            "perm [%s] is not a permutation of the %d axes", buf, n);
    }
    seen[v] = true;
    p[i] = v;
  }
  int64_t shape[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  for (int i = 0; i < n; ++i) {
    shape[i] = a->shape[p[i]];
    strides[i] = a->strides[p[i]];
  }
  return tsr__array_new_view(a, n, shape, strides, a->offset, out);
}

/* Python's slice.indices(): clip start/stop to the axis and count the elements. */
static int64_t tsr__slice_clip(int64_t i, int64_t len, int64_t step) {
  if (i < 0) {
    i += len;
    if (i < 0) i = step < 0 ? -1 : 0;
  } else if (i >= len) {
    i = step < 0 ? len - 1 : len;
  }
  return i;
}

tsr_status tsr_slice(const tsr_array *a, int axis, int64_t start, int64_t stop, int64_t step,
                     tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(out != NULL, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  TSR_CHECK(a != NULL, TSR_ERR_NULL_POINTER, "a is NULL");
  int ax = axis < 0 ? axis + a->ndim : axis;
  TSR_CHECK(ax >= 0 && ax < a->ndim, TSR_ERR_INVALID_ARGUMENT,
            "axis %d is out of range for a %d-D array", axis, a->ndim);
  TSR_CHECK(step != 0, TSR_ERR_INVALID_ARGUMENT, "step is 0");
  if (step == INT64_MIN) step = -INT64_MAX; /* so that -step exists; one element either way */
  int64_t len = a->shape[ax];
  int64_t lo = tsr__slice_clip(start, len, step), hi = tsr__slice_clip(stop, len, step);
  int64_t n = 0;
  if (step > 0 && lo < hi) n = (hi - lo - 1) / step + 1;
  if (step < 0 && hi < lo) n = (lo - hi - 1) / (-step) + 1;
  int64_t shape[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
  memcpy(shape, a->shape, sizeof shape);
  memcpy(strides, a->strides, sizeof strides);
  shape[ax] = n;
  int64_t offset = a->offset;
  if (n > 0) offset += lo * a->strides[ax];
  if (n > 1)
    TSR_CHECK(tsr__mul_overflow_i64(a->strides[ax], step, &strides[ax]), TSR_ERR_OVERFLOW,
              "stride %lld times step %lld overflows", (long long)a->strides[ax], (long long)step);
  return tsr__array_new_view(a, a->ndim, shape, strides, offset, out);
}
