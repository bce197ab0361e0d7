/* SPDX-License-Identifier: BSD-3-Clause */
/* Array objects: a reference-counted buffer on one device plus a view. Creation (empty, full,
   arange, random, from host memory), transfers between host and devices, copies and
   assignment. Every function validates its input, then dispatches through the backend table
   of the array's device. The view accessors are in view.c, the view functions (reshape,
   transpose, slice) in reshape.c. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/convert.h"
#include "core/internal.h"

/* ---------------------------------------------------------------- helpers ------------- */

static size_t tsr__array_bytes(const tsr_array *a) {
  return (size_t)tsr__array_size(a) * tsr__dtype_size(a->dtype);
}

/* "a 3x4 f32 array on cpu", for messages. */
static const char *tsr__array_desc(const tsr_array *a, char *buf, size_t size) {
  char shape[128], dev[32];
  snprintf(buf, size, "%s %s array on %s", tsr__shape_str(a->ndim, a->shape, shape, sizeof shape),
           tsr_dtype_name(a->dtype), tsr__device_str(a->buffer->device, dev, sizeof dev));
  return buf;
}

tsr_array *tsr__array_struct(tsr__buffer *buffer, tsr_dtype dtype, int ndim, const int64_t *shape,
                             const int64_t *strides, int64_t offset) {
  tsr_array *a = malloc(sizeof *a);
  if (a == NULL) return NULL;
  atomic_init(&a->refcount, 1);
  a->buffer = buffer;
  a->dtype = dtype;
  a->ndim = ndim;
  for (int i = 0; i < TSR_MAX_DIMS; ++i) {
    a->shape[i] = i < ndim ? shape[i] : 1;
    a->strides[i] = i < ndim ? strides[i] : 0;
  }
  a->offset = offset;
  return a;
}

static void tsr__buffer_release(tsr__buffer *b) {
  if (atomic_fetch_sub_explicit(&b->refcount, 1, memory_order_acq_rel) != 1) return;
  const struct tsr__backend_ops *ops = NULL;
  /* The device existed when the buffer was made; a lookup failure leaks rather than crashes. */
  if ((b->flags & TSR__BUFFER_BORROWED) == 0 && tsr__backend_for(b->device, &ops) == TSR_OK)
    ops->free(b->device, b->data, b->bytes, b->flags);
  free(b);
}

tsr_status tsr__array_alloc(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                            unsigned flags, tsr_array **out) {
  int64_t size;
  TSR_CALL(tsr__shape_check(ndim, shape, dtype, &size));
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(device, &ops));
  size_t bytes = (size_t)size * tsr__dtype_size(dtype);
  tsr__buffer *b = malloc(sizeof *b);
  if (b == NULL)
    return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "cannot allocate an array header");
  void *data = NULL;
  unsigned granted = 0;
  tsr_status st = ops->alloc(device, bytes, flags, &data, &granted);
  if (st != TSR_OK) {
    free(b);
    /* Restate the backend's reason inside a message that says what was being allocated. */
    char shp[128], dev[32];
    return tsr__set_error(st, __func__, "cannot allocate %zu bytes for a %s %s array on %s (%s)",
                          bytes, tsr__shape_str(ndim, shape, shp, sizeof shp),
                          tsr_dtype_name(dtype), tsr__device_str(device, dev, sizeof dev),
                          tsr__last_error_detail());
  }
  atomic_init(&b->refcount, 1);
  b->device = device;
  b->data = data;
  b->bytes = bytes;
  b->flags = granted;
  int64_t strides[TSR_MAX_DIMS];
  tsr__contiguous_strides(ndim, shape, strides);
  tsr_array *a = tsr__array_struct(b, dtype, ndim, shape, strides, 0);
  if (a == NULL) {
    tsr__buffer_release(b);
    return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "cannot allocate an array header");
  }
  *out = a;
  return TSR_OK;
}

tsr_status tsr__array_new_view(const tsr_array *a, int ndim, const int64_t *shape,
                               const int64_t *strides, int64_t offset, tsr_array **out) {
  tsr_array *v = tsr__array_struct(a->buffer, a->dtype, ndim, shape, strides, offset);
  TSR_CHECK(v != NULL, TSR_ERR_OUT_OF_MEMORY, "cannot allocate an array header");
  atomic_fetch_add_explicit(&a->buffer->refcount, 1, memory_order_relaxed);
  *out = v;
  return TSR_OK;
}

static void tsr__host_store(void *dst, tsr_dtype dtype, int64_t i, double x) {
  switch (dtype) {
  case TSR_F32: ((float *)dst)[i] = (float)x; break;
  case TSR_F64: ((double *)dst)[i] = x; break;
  case TSR_I32: ((int32_t *)dst)[i] = tsr__sat_f64_to_i32(x); break;
  case TSR_I64: ((int64_t *)dst)[i] = tsr__sat_f64_to_i64(x); break;
  case TSR_C64: ((tsr_complex64 *)dst)[i] = (tsr_complex64){(float)x, 0.0f}; break;
  case TSR_C128: ((tsr_complex128 *)dst)[i] = (tsr_complex128){x, 0.0}; break;
  }
}

/* The fallback of the optional arange entry: a contiguous array's values start + i * step
   computed on the host, then copied. */
static tsr_status tsr__arange_via_host(const struct tsr__backend_ops *ops, tsr_array *a,
                                       double start, double step) {
  int64_t n = tsr__array_size(a);
  size_t bytes = tsr__array_bytes(a);
  void *host;
  TSR_CALL(tsr__host_alloc(bytes, &host));
  for (int64_t i = 0; i < n; ++i)
    tsr__host_store(host, a->dtype, i, start + (double)i * step);
  tsr__view v = tsr__view_of(a);
  tsr_status st = ops->memcpy_h2d(a->buffer->device, v.data, host, bytes);
  tsr__host_free(host);
  return st;
}

/* Every element = value + value_im i (value_im is 0 for a real dtype). A complex array is
   filled as its two real part views, so every backend's real fill serves it. */
static tsr_status tsr__fill(tsr_array *a, double value, double value_im) {
  if (tsr__array_size(a) == 0) return TSR_OK;
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(a->buffer->device, &ops));
  tsr__view v = tsr__view_of(a);
  if (!tsr__dtype_is_complex(a->dtype)) return ops->fill(a->buffer->device, &v, value);
  tsr__view re = tsr__view_part(&v, 0), im = tsr__view_part(&v, 1);
  TSR_CALL(ops->fill(a->buffer->device, &re, value));
  return ops->fill(a->buffer->device, &im, value_im);
}

/* dst = src elementwise through the backend's copy (shapes equal; src may be broadcast). */
static tsr_status tsr__copy_view(tsr_device dev, const tsr__view *dst, const tsr__view *src) {
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(dev, &ops));
  return ops->copy(dev, dst, src);
}

/* A new C-contiguous copy of `a` (same device) converted to `dtype`. */
static tsr_status tsr__copy_as(const tsr_array *a, tsr_dtype dtype, tsr_array **out) {
  tsr_array *c = NULL;
  TSR_CALL(tsr__array_alloc(a->ndim, a->shape, dtype, a->buffer->device, 0, &c));
  if (tsr__array_size(a) > 0) {
    tsr__view dv = tsr__view_of(c), sv = tsr__view_of(a);
    tsr_status st = tsr__copy_view(a->buffer->device, &dv, &sv);
    if (st != TSR_OK) {
      tsr_array_release(c);
      return st;
    }
  }
  *out = c;
  return TSR_OK;
}

tsr_status tsr__array_contiguous(const tsr_array *a, tsr_array **out) {
  if (tsr__array_is_contiguous(a)) {
    tsr_array *m = (tsr_array *)a; /* only the atomic reference count changes */
    atomic_fetch_add_explicit(&m->refcount, 1, memory_order_relaxed);
    *out = m;
    return TSR_OK;
  }
  return tsr__copy_as(a, a->dtype, out);
}

/* Copies a's elements in C order to host memory of exactly tsr__array_bytes(a) bytes. */
static tsr_status tsr__read(const tsr_array *a, void *dst) {
  size_t bytes = tsr__array_bytes(a);
  if (bytes == 0) return TSR_OK;
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(a->buffer->device, &ops));
  tsr_array *c = NULL;
  TSR_CALL(tsr__array_contiguous(a, &c));
  tsr__view v = tsr__view_of(c);
  tsr_status st = ops->memcpy_d2h(c->buffer->device, dst, v.data, bytes);
  tsr_array_release(c);
  return st;
}

/* The checks of tsr__copy_h2d/d2h: the element range [offset, offset + bytes/esize) lies
   inside the C-contiguous array a, the host pointer exists, and the device can copy. */
static tsr_status tsr__check_host_copy(const tsr_array *a, int64_t offset, const void *host,
                                       size_t bytes, bool to_device,
                                       const struct tsr__backend_ops **ops) {
  char desc[256], dev[32];
  if (a == NULL) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "array is NULL");
  if (!tsr__array_is_contiguous(a))
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "a raw copy needs a C-contiguous array, not a strided %s",
                          tsr__array_desc(a, desc, sizeof desc));
  int64_t size = tsr__array_size(a);
  size_t esize = tsr__dtype_size(a->dtype);
  if (offset < 0 || offset > size || bytes > (size_t)(size - offset) * esize)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "%zu bytes at element %lld do not fit the %s (%lld elements)", bytes,
                          (long long)offset, tsr__array_desc(a, desc, sizeof desc),
                          (long long)size);
  if (host == NULL)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "the host %s is NULL",
                          to_device ? "source" : "destination");
  TSR_CALL(tsr__backend_for(a->buffer->device, ops));
  if ((to_device ? (*ops)->memcpy_h2d : (*ops)->memcpy_d2h) == NULL)
    return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__, "%s copy is not supported on %s",
                          to_device ? "host-to-device" : "device-to-host",
                          tsr__device_str(a->buffer->device, dev, sizeof dev));
  return TSR_OK;
}

tsr_status tsr__copy_h2d(tsr_array *a, int64_t offset, const void *src, size_t bytes) {
  if (bytes == 0) return TSR_OK;
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__check_host_copy(a, offset, src, bytes, true, &ops));
  char *dst = (char *)tsr__array_ptr(a) + offset * (int64_t)tsr__dtype_size(a->dtype);
  return ops->memcpy_h2d(a->buffer->device, dst, src, bytes);
}

tsr_status tsr__copy_d2h(const tsr_array *a, int64_t offset, void *dst, size_t bytes) {
  if (bytes == 0) return TSR_OK;
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__check_host_copy(a, offset, dst, bytes, false, &ops));
  const char *src = (const char *)tsr__array_ptr(a) + offset * (int64_t)tsr__dtype_size(a->dtype);
  return ops->memcpy_d2h(a->buffer->device, dst, src, bytes);
}

/* ---------------------------------------------------------------- creation ------------ */

static tsr_status tsr__empty(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                             unsigned flags, tsr_array **out) {
  if (out == NULL) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "out is NULL");
  *out = NULL;
  if ((flags & ~(unsigned)TSR_ALLOC_MANAGED) != 0)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "unknown allocation flags 0x%x",
                          flags);
  return tsr__array_alloc(ndim, shape, dtype, device, flags, out);
}

tsr_status tsr_empty(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                     tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__empty(ndim, shape, dtype, device, 0, out);
}

tsr_status tsr_empty_ex(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                        unsigned flags, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__empty(ndim, shape, dtype, device, flags, out);
}

static tsr_status tsr__full(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                            double value, double value_im, tsr_array **out) {
  TSR_CALL(tsr__empty(ndim, shape, dtype, device, 0, out));
  tsr_status st = tsr__fill(*out, value, value_im);
  if (st != TSR_OK) {
    tsr_array_release(*out);
    *out = NULL;
  }
  return st;
}

tsr_status tsr_zeros(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                     tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__full(ndim, shape, dtype, device, 0.0, 0.0, out);
}

tsr_status tsr_full(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                    double value, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__full(ndim, shape, dtype, device, value, 0.0, out);
}

tsr_status tsr_full_complex(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                            tsr_complex128 value, tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(out != NULL, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  TSR_CHECK(tsr__dtype_valid(dtype), TSR_ERR_DTYPE, "unknown dtype %d", (int)dtype);
  TSR_CHECK(tsr__dtype_is_complex(dtype) || value.im == 0.0, TSR_ERR_INVALID_ARGUMENT,
            "value %g%+gi has a nonzero imaginary part but dtype %s is real", value.re, value.im,
            tsr_dtype_name(dtype));
  return tsr__full(ndim, shape, dtype, device, value.re, value.im, out);
}

tsr_status tsr_arange(double start, double stop, double step, tsr_dtype dtype, tsr_device device,
                      tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(out != NULL, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  TSR_CHECK(isfinite(start) && isfinite(stop), TSR_ERR_INVALID_ARGUMENT,
            "start %g and stop %g must be finite", start, stop);
  TSR_CHECK(isfinite(step) && step != 0.0, TSR_ERR_INVALID_ARGUMENT,
            "step %g must be finite and non-zero", step);
  TSR_CHECK(!tsr__dtype_is_complex(dtype), TSR_ERR_DTYPE,
            "dtype %s is complex: arange makes real sequences (tsr_astype of a real arange gives "
            "its complex values)",
            tsr_dtype_name(dtype));
  double len = ceil((stop - start) / step);
  TSR_CHECK(!(len >= 9223372036854775807.0), TSR_ERR_OVERFLOW,
            "arange(%g, %g, %g) has %g elements, more than int64 can count", start, stop, step,
            len);
  int64_t n = len > 0 ? (int64_t)len : 0;
  tsr_array *a = NULL;
  TSR_CALL(tsr__array_alloc(1, &n, dtype, device, 0, &a));
  tsr_status st = TSR_OK;
  if (n > 0) {
    const struct tsr__backend_ops *ops;
    TSR_CALL_GOTO(st, fail, tsr__backend_for(device, &ops));
    if (ops->arange != NULL) {
      tsr__view v = tsr__view_of(a);
      TSR_CALL_GOTO(st, fail, ops->arange(device, &v, start, step));
    } else {
      TSR_CALL_GOTO(st, fail, tsr__arange_via_host(ops, a, start, step));
    }
  }
  *out = a;
  return TSR_OK;
fail:
  tsr_array_release(a);
  return st;
}

static tsr_status tsr__random(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                              uint64_t seed, tsr__rng_dist dist, double p0, double p1,
                              tsr_array **out) {
  tsr_array *a = NULL;
  TSR_CALL(tsr__array_alloc(ndim, shape, dtype, device, 0, &a));
  tsr_status st = TSR_OK;
  int64_t n = tsr__array_size(a);
  if (n > 0) {
    const struct tsr__backend_ops *ops;
    TSR_CALL_GOTO(st, fail, tsr__backend_for(device, &ops));
    tsr__view v = tsr__view_of(a);
    if (ops->rng != NULL) {
      TSR_CALL_GOTO(st, fail, ops->rng(device, &v, seed, 0, dist, p0, p1));
    } else {
      void *host = NULL;
      size_t bytes = tsr__array_bytes(a);
      TSR_CALL_GOTO(st, fail, tsr__host_alloc(bytes, &host));
      tsr__rng_fill_host(host, dtype, n, seed, 0, dist, p0, p1);
      st = ops->memcpy_h2d(device, v.data, host, bytes);
      tsr__host_free(host);
      if (st != TSR_OK) goto fail;
    }
  }
  *out = a;
  return TSR_OK;
fail:
  tsr_array_release(a);
  return st;
}

tsr_status tsr_random_uniform(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                              uint64_t seed, double low, double high, tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(out != NULL, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  TSR_CHECK(tsr__dtype_is_float(dtype), TSR_ERR_DTYPE,
            "dtype %s is not a float dtype (f32, f64, c64 or c128)", tsr_dtype_name(dtype));
  TSR_CHECK(isfinite(low) && isfinite(high) && low < high, TSR_ERR_INVALID_ARGUMENT,
            "low %g and high %g must be finite with low < high", low, high);
  /* The values are low + (high - low) * u: the width must be finite (else every value clamps
     to high's neighbour), and f32 bounds must be floats (converting more is undefined). */
  TSR_CHECK(isfinite(high - low), TSR_ERR_INVALID_ARGUMENT,
            "the range high - low = %g - (%g) overflows", high, low);
  TSR_CHECK((dtype != TSR_F32 && dtype != TSR_C64) ||
                (fabs(low) <= FLT_MAX && fabs(high) <= FLT_MAX),
            TSR_ERR_INVALID_ARGUMENT, "low %g and high %g are outside the range of f32", low, high);
  return tsr__random(ndim, shape, dtype, device, seed, TSR__RNG_UNIFORM, low, high, out);
}

tsr_status tsr_random_normal(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                             uint64_t seed, double mean, double stddev, tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(out != NULL, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  TSR_CHECK(tsr__dtype_is_float(dtype), TSR_ERR_DTYPE,
            "dtype %s is not a float dtype (f32, f64, c64 or c128)", tsr_dtype_name(dtype));
  TSR_CHECK(isfinite(mean), TSR_ERR_INVALID_ARGUMENT, "mean %g is not finite", mean);
  TSR_CHECK(isfinite(stddev) && stddev >= 0.0, TSR_ERR_INVALID_ARGUMENT,
            "stddev %g must be finite and >= 0", stddev);
  return tsr__random(ndim, shape, dtype, device, seed, TSR__RNG_NORMAL, mean, stddev, out);
}

tsr_status tsr_from_host(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                         const void *data, tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(out != NULL, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  int64_t size;
  TSR_CALL(tsr__shape_check(ndim, shape, dtype, &size));
  TSR_CHECK(data != NULL || size == 0, TSR_ERR_NULL_POINTER, "data is NULL");
  tsr_array *a = NULL;
  TSR_CALL(tsr__array_alloc(ndim, shape, dtype, device, 0, &a));
  tsr_status st = TSR_OK;
  if (size > 0) {
    const struct tsr__backend_ops *ops;
    TSR_CALL_GOTO(st, fail, tsr__backend_for(device, &ops));
    tsr__view v = tsr__view_of(a);
    TSR_CALL_GOTO(st, fail, ops->memcpy_h2d(device, v.data, data, tsr__array_bytes(a)));
  }
  *out = a;
  return TSR_OK;
fail:
  tsr_array_release(a);
  return st;
}

/* ---------------------------------------------------------------- references & info --- */

tsr_status tsr_array_retain(tsr_array *a) {
  TSR_API_ENTRY();
  TSR_CHECK(a != NULL, TSR_ERR_NULL_POINTER, "a is NULL");
  atomic_fetch_add_explicit(&a->refcount, 1, memory_order_relaxed);
  return TSR_OK;
}

tsr_status tsr_array_release(tsr_array *a) {
  TSR_API_ENTRY();
  if (a == NULL) return TSR_OK;
  if (atomic_fetch_sub_explicit(&a->refcount, 1, memory_order_acq_rel) != 1) return TSR_OK;
  tsr__buffer_release(a->buffer);
  free(a);
  return TSR_OK;
}

tsr_status tsr_array_info(const tsr_array *a, tsr_array_props *info) {
  TSR_API_ENTRY();
  TSR_CHECK(a != NULL, TSR_ERR_NULL_POINTER, "a is NULL");
  TSR_CHECK(info != NULL, TSR_ERR_NULL_POINTER, "info is NULL");
  memset(info, 0, sizeof *info);
  info->dtype = a->dtype;
  info->ndim = a->ndim;
  for (int i = 0; i < TSR_MAX_DIMS; ++i) {
    info->shape[i] = i < a->ndim ? a->shape[i] : 1;
    info->strides[i] = i < a->ndim ? a->strides[i] : 0;
  }
  info->offset = a->offset;
  info->size = tsr__array_size(a);
  info->device = a->buffer->device;
  info->contiguous = tsr__array_is_contiguous(a) ? 1 : 0;
  return TSR_OK;
}

/* ---------------------------------------------------------------- host transfers ------ */

/* A view with stride 0 on an axis of size > 1 (tsr_from_host_view's broadcast views) maps
   several elements to one address: writing it would race between the backend's threads. */
static tsr_status tsr__check_writable(const tsr_array *a, const char *name) {
  for (int i = 0; i < a->ndim; ++i)
    if (a->shape[i] > 1 && a->strides[i] == 0) {
      char shape[128];
      return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                            "%s (shape %s) is a broadcast view: axis %d has stride 0, so its "
                            "elements overlap and it cannot be written",
                            name, tsr__shape_str(a->ndim, a->shape, shape, sizeof shape), i);
    }
  return TSR_OK;
}

static tsr_status tsr__check_bytes(const tsr_array *a, size_t bytes, const void *ptr,
                                   const char *ptr_name) {
  size_t want = tsr__array_bytes(a);
  if (bytes != want) {
    char desc[256];
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "bytes is %zu but the %s holds %zu bytes", bytes,
                          tsr__array_desc(a, desc, sizeof desc), want);
  }
  if (ptr == NULL && want > 0)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", ptr_name);
  return TSR_OK;
}

tsr_status tsr_array_read(const tsr_array *a, void *dst, size_t bytes) {
  TSR_API_ENTRY();
  TSR_CHECK(a != NULL, TSR_ERR_NULL_POINTER, "a is NULL");
  TSR_CALL(tsr__check_bytes(a, bytes, dst, "dst"));
  return tsr__read(a, dst);
}

tsr_status tsr_array_write(tsr_array *a, const void *src, size_t bytes) {
  TSR_API_ENTRY();
  TSR_CHECK(a != NULL, TSR_ERR_NULL_POINTER, "a is NULL");
  TSR_CALL(tsr__check_bytes(a, bytes, src, "src"));
  TSR_CALL(tsr__check_writable(a, "a"));
  if (bytes == 0) return TSR_OK;
  tsr_device dev = a->buffer->device;
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(dev, &ops));
  if (tsr__array_is_contiguous(a)) {
    tsr__view v = tsr__view_of(a);
    return ops->memcpy_h2d(dev, v.data, src, bytes);
  }
  /* A strided view: stage contiguously on the device, then scatter with the backend copy. */
  tsr_array *t = NULL;
  TSR_CALL(tsr__array_alloc(a->ndim, a->shape, a->dtype, dev, 0, &t));
  tsr__view tv = tsr__view_of(t), av = tsr__view_of(a);
  tsr_status st = ops->memcpy_h2d(dev, tv.data, src, bytes);
  if (st == TSR_OK) st = tsr__copy_view(dev, &av, &tv);
  tsr_array_release(t);
  return st;
}

/* ---------------------------------------------------------------- copies -------------- */

static tsr_status tsr__to(const tsr_array *a, tsr_device device, tsr_array **out) {
  if (out == NULL) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "out is NULL");
  *out = NULL;
  if (a == NULL) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "a is NULL");
  tsr_device src = a->buffer->device;
  if (tsr_device_equal(src, device)) return tsr__copy_as(a, a->dtype, out);

  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(device, &ops));
  tsr_array *b = NULL;
  TSR_CALL(tsr__array_alloc(a->ndim, a->shape, a->dtype, device, 0, &b));
  size_t bytes = tsr__array_bytes(a);
  tsr_status st = TSR_OK;
  if (bytes > 0) {
    tsr__view bv = tsr__view_of(b);
    if (device.kind == TSR_DEVICE_CPU) {
      /* CPU buffers are host memory: read straight into the result. */
      TSR_CALL_GOTO(st, fail, tsr__read(a, bv.data));
    } else {
      if (src.kind == TSR_DEVICE_CPU && tsr__array_is_contiguous(a)) {
        tsr__view av = tsr__view_of(a);
        TSR_CALL_GOTO(st, fail, ops->memcpy_h2d(device, bv.data, av.data, bytes));
      } else {
        /* Between two GPUs (or from a strided CPU view): through host memory. */
        void *host = NULL;
        TSR_CALL_GOTO(st, fail, tsr__host_alloc(bytes, &host));
        st = tsr__read(a, host);
        if (st == TSR_OK) st = ops->memcpy_h2d(device, bv.data, host, bytes);
        tsr__host_free(host);
        if (st != TSR_OK) goto fail;
      }
    }
  }
  *out = b;
  return TSR_OK;
fail:
  tsr_array_release(b);
  return st;
}

tsr_status tsr_array_to(const tsr_array *a, tsr_device device, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__to(a, device, out);
}

tsr_status tsr_copy(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__to(a, a != NULL ? a->buffer->device : TSR_CPU, out);
}

tsr_status tsr_contiguous(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(out != NULL, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  TSR_CHECK(a != NULL, TSR_ERR_NULL_POINTER, "a is NULL");
  return tsr__array_contiguous(a, out);
}

tsr_status tsr_astype(const tsr_array *a, tsr_dtype dtype, tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(out != NULL, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  TSR_CHECK(a != NULL, TSR_ERR_NULL_POINTER, "a is NULL");
  TSR_CHECK(tsr__dtype_valid(dtype), TSR_ERR_DTYPE, "unknown dtype %d", (int)dtype);
  TSR_CALL(tsr__check_convert(dtype, a->dtype));
  return tsr__copy_as(a, dtype, out);
}

tsr_status tsr__check_convert(tsr_dtype to, tsr_dtype from) {
  if (tsr__dtype_is_complex(from) && !tsr__dtype_is_complex(to))
    return tsr__set_error(TSR_ERR_DTYPE, __func__,
                          "cannot convert %s to %s: the imaginary part would be dropped (take "
                          "tsr_real, tsr_imag or tsr_abs of the complex array)",
                          tsr_dtype_name(from), tsr_dtype_name(to));
  return TSR_OK;
}

/* The real or imaginary part (part 0 or 1) of `a` as a new C-contiguous real array. */
static tsr_status tsr__part(const tsr_array *a, int part, tsr_array **out) {
  TSR_CHECK(out != NULL, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  TSR_CHECK(a != NULL, TSR_ERR_NULL_POINTER, "a is NULL");
  tsr_dtype rt = tsr__dtype_part(a->dtype);
  if (!tsr__dtype_is_complex(a->dtype) && part == 0) return tsr__copy_as(a, rt, out);
  tsr_array *c = NULL;
  TSR_CALL(tsr__array_alloc(a->ndim, a->shape, rt, a->buffer->device, 0, &c));
  tsr_status st = TSR_OK;
  if (tsr__array_size(c) > 0) {
    tsr__view cv = tsr__view_of(c);
    if (tsr__dtype_is_complex(a->dtype)) {
      tsr__view av = tsr__view_of(a);
      tsr__view pv = tsr__view_part(&av, part);
      st = tsr__copy_view(a->buffer->device, &cv, &pv);
    } else {
      st = tsr__fill(c, 0.0, 0.0); /* a real array's imaginary part */
    }
  }
  if (st != TSR_OK) {
    tsr_array_release(c);
    return st;
  }
  *out = c;
  return TSR_OK;
}

tsr_status tsr_real(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__part(a, 0, out);
}

tsr_status tsr_imag(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__part(a, 1, out);
}

static bool tsr__same_shape(int na, const int64_t *sa, int nb, const int64_t *sb) {
  if (na != nb) return false;
  for (int i = 0; i < na; ++i)
    if (sa[i] != sb[i]) return false;
  return true;
}

tsr_status tsr_assign(tsr_array *dst, const tsr_array *src) {
  TSR_API_ENTRY();
  TSR_CHECK(dst != NULL, TSR_ERR_NULL_POINTER, "dst is NULL");
  TSR_CHECK(src != NULL, TSR_ERR_NULL_POINTER, "src is NULL");
  char d1[32], d2[32], s1[128], s2[128];
  TSR_CHECK(tsr_device_equal(dst->buffer->device, src->buffer->device), TSR_ERR_DEVICE_MISMATCH,
            "dst is on %s, src is on %s", tsr__device_str(dst->buffer->device, d1, sizeof d1),
            tsr__device_str(src->buffer->device, d2, sizeof d2));
  int n;
  int64_t shape[TSR_MAX_DIMS];
  tsr_status st = tsr__broadcast_shapes(dst->ndim, dst->shape, src->ndim, src->shape, &n, shape);
  TSR_CHECK(st == TSR_OK && tsr__same_shape(n, shape, dst->ndim, dst->shape), TSR_ERR_SHAPE,
            "src of shape %s cannot be broadcast to dst of shape %s",
            tsr__shape_str(src->ndim, src->shape, s1, sizeof s1),
            tsr__shape_str(dst->ndim, dst->shape, s2, sizeof s2));
  TSR_CALL(tsr__check_convert(dst->dtype, src->dtype));
  if (tsr__array_size(dst) == 0) return TSR_OK;
  TSR_CALL(tsr__check_writable(dst, "dst"));
  /* The backend copy assumes no overlap; an overlapping source is copied first. */
  tsr_array *s = NULL;
  if (tsr__arrays_may_overlap(dst, src))
    TSR_CALL(tsr__copy_as(src, src->dtype, &s));
  else
    TSR_CALL(tsr__array_new_view(src, src->ndim, src->shape, src->strides, src->offset, &s));
  tsr__view dv = tsr__view_of(dst);
  tsr__view sv = tsr__view_broadcast(s, dst->ndim, dst->shape);
  st = tsr__copy_view(dst->buffer->device, &dv, &sv);
  tsr_array_release(s);
  return st;
}
