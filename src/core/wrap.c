/* SPDX-License-Identifier: BSD-3-Clause */
/* tsr_from_host_view: arrays over caller-owned host memory (zero-copy interop). The buffer is
   marked TSR__BUFFER_BORROWED, so the last release frees the headers and never the data. */
#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"

tsr_status tsr_from_host_view(int ndim, const int64_t *shape, const int64_t *strides,
                              tsr_dtype dtype, void *data, tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(out != NULL, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  int64_t size;
  TSR_CALL(tsr__shape_check(ndim, shape, dtype, &size));
  size_t esize = tsr__dtype_size(dtype);
  TSR_CHECK(data != NULL || size == 0, TSR_ERR_NULL_POINTER,
            "data is NULL for an array of %lld elements", (long long)size);
  TSR_CHECK((uintptr_t)data % esize == 0, TSR_ERR_INVALID_ARGUMENT,
            "data %p is not aligned to the %zu-byte %s elements", data, esize,
            tsr_dtype_name(dtype));

  int64_t st[TSR_MAX_DIMS];
  if (strides != NULL) {
    for (int i = 0; i < ndim; ++i)
      st[i] = strides[i];
  } else {
    tsr__contiguous_strides(ndim, shape, st);
  }

  /* The extent [lo, hi] of element offsets the view can touch, relative to `data`; with
     negative strides the buffer starts before `data`. */
  int64_t lo = 0, hi = 0;
  if (size > 0) {
    for (int i = 0; i < ndim; ++i) {
      int64_t reach;
      TSR_CHECK(tsr__mul_overflow_i64(shape[i] - 1, st[i], &reach), TSR_ERR_OVERFLOW,
                "axis %d: (size %lld - 1) x stride %lld overflows int64", i, (long long)shape[i],
                (long long)st[i]);
      bool ok =
          reach < 0 ? tsr__add_overflow_i64(lo, reach, &lo) : tsr__add_overflow_i64(hi, reach, &hi);
      TSR_CHECK(ok, TSR_ERR_OVERFLOW, "the element extent of the view overflows int64");
    }
  }
  int64_t span = 0, bytes = 0;
  if (size > 0) {
    TSR_CHECK(lo != INT64_MIN && tsr__add_overflow_i64(hi, -lo, &span) &&
                  tsr__add_overflow_i64(span, 1, &span) &&
                  tsr__mul_overflow_i64(span, (int64_t)esize, &bytes) &&
                  (uint64_t)bytes <= PTRDIFF_MAX,
              TSR_ERR_OVERFLOW, "the byte extent of the view overflows");
  }

  tsr__buffer *b = malloc(sizeof *b);
  tsr_array *a = NULL;
  if (b != NULL) {
    atomic_init(&b->refcount, 1);
    b->device = TSR_CPU;
    b->data = size > 0 ? (char *)data + lo * (int64_t)esize : data;
    b->bytes = (size_t)bytes;
    b->flags = TSR__BUFFER_BORROWED;
    a = tsr__array_struct(b, dtype, ndim, shape, st, size > 0 ? -lo : 0);
  }
  if (a == NULL) {
    free(b); /* borrowed: the header only, never the caller's data */
    return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "cannot allocate an array header");
  }
  *out = a;
  return TSR_OK;
}
