/* SPDX-License-Identifier: BSD-3-Clause */
/* Shapes, strides and broadcasting: the overflow-checked size arithmetic every creating
   function relies on. */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

bool tsr__mul_overflow_i64(int64_t a, int64_t b, int64_t *out) {
#if defined(__GNUC__)
  return !__builtin_mul_overflow(a, b, out);
#else
  if (a != 0 && b != 0) {
    if ((a > 0) == (b > 0)) {
      if ((a > 0 && a > INT64_MAX / b) || (a < 0 && a < INT64_MAX / b)) return false;
    } else if ((a > 0 && b < INT64_MIN / a) || (a < 0 && a < INT64_MIN / b)) {
      return false;
    }
  }
  *out = a * b;
  return true;
#endif
}

bool tsr__add_overflow_i64(int64_t a, int64_t b, int64_t *out) {
#if defined(__GNUC__)
  return !__builtin_add_overflow(a, b, out);
#else
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return false;
  *out = a + b;
  return true;
#endif
}

const char *tsr__shape_str(int ndim, const int64_t *shape, char *buf, size_t size) {
  if (buf == NULL || size == 0) return buf;
  buf[0] = '\0';
  if (ndim <= 0 || shape == NULL) {
    snprintf(buf, size, "%s", ndim == 0 ? "scalar" : "?");
    return buf;
  }
  size_t used = 0;
  for (int i = 0; i < ndim && used < size; ++i) {
    int n = snprintf(buf + used, size - used, i ? "x%lld" : "%lld", (long long)shape[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
  return buf;
}

tsr_status tsr__shape_check(int ndim, const int64_t *shape, tsr_dtype dtype, int64_t *size) {
  if (ndim < 0 || ndim > TSR_MAX_DIMS)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "ndim %d %s", ndim,
                          ndim < 0 ? "is negative" : "exceeds TSR_MAX_DIMS (8)");
  if (ndim > 0 && shape == NULL)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "shape is NULL with ndim %d", ndim);
  size_t esize = tsr__dtype_size(dtype);
  if (esize == 0) return tsr__set_error(TSR_ERR_DTYPE, __func__, "unknown dtype %d", (int)dtype);
  for (int i = 0; i < ndim; ++i)
    if (shape[i] < 0)
      return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "shape[%d] is %lld", i,
                            (long long)shape[i]);
  /* The product over the non-zero sizes must fit even when some size is 0: contiguous
     strides are built from it. */
  int64_t span = 1;
  bool empty = false;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] == 0) empty = true;
    if (!tsr__mul_overflow_i64(span, shape[i] ? shape[i] : 1, &span)) {
      char buf[256];
      return tsr__set_error(TSR_ERR_OVERFLOW, __func__, "element count of shape %s overflows int64",
                            tsr__shape_str(ndim, shape, buf, sizeof buf));
    }
  }
  int64_t bytes;
  if (!tsr__mul_overflow_i64(span, (int64_t)esize, &bytes) || (uint64_t)bytes > SIZE_MAX) {
    char buf[256];
    return tsr__set_error(TSR_ERR_OVERFLOW, __func__, "byte count of shape %s (%s) overflows",
                          tsr__shape_str(ndim, shape, buf, sizeof buf), tsr_dtype_name(dtype));
  }
  if (size) *size = empty ? 0 : span;
  return TSR_OK;
}

void tsr__contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i]; /* checked by tsr__shape_check; 0 once an axis is empty (nothing is addressed) */
  }
  for (int i = ndim < 0 ? 0 : ndim; i < TSR_MAX_DIMS; ++i)
    strides[i] = 0;
}

tsr_status tsr__broadcast_shapes(int na, const int64_t *sa, int nb, const int64_t *sb, int *nout,
                                 int64_t *out_shape) {
  int n = na > nb ? na : nb;
  int64_t res[TSR_MAX_DIMS];
  for (int i = 0; i < n; ++i) {
    /* Align at the trailing axis: axis i of the result is axis i-(n-na) of a. */
    int ia = i - (n - na), ib = i - (n - nb);
    int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
    if (da == db || db == 1) {
      res[i] = da;
    } else if (da == 1) {
      res[i] = db;
    } else {
      char ba[256], bb[256];
      return tsr__set_error(TSR_ERR_SHAPE, __func__, "shapes %s and %s cannot be broadcast",
                            tsr__shape_str(na, sa, ba, sizeof ba),
                            tsr__shape_str(nb, sb, bb, sizeof bb));
    }
  }
  for (int i = 0; i < n; ++i)
    out_shape[i] = res[i];
  *nout = n;
  return TSR_OK;
}
