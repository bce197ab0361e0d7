/* SPDX-License-Identifier: BSD-3-Clause */
/* The view of an array that backends receive (tsr__view: the address of element 0, shape and
   strides in elements) and the questions asked of a view: its size, whether it is contiguous,
   its broadcast to a larger shape, whether two views may share memory. The layer under the
   array objects (array.c) and the view functions (reshape.c); it calls nothing of theirs. */
#include "core/internal.h"

void *tsr__array_ptr(const tsr_array *a) {
  /* A zero-byte buffer may have a NULL pointer (GPU allocators): no arithmetic on it. Offset 0
     (every array not sliced from another) asks no element size: this runs three times per
     tsr_gemm call. */
  return a->buffer->data == NULL || a->offset == 0
             ? a->buffer->data
             : (char *)a->buffer->data + a->offset * (int64_t)tsr__dtype_size(a->dtype);
}

tsr__view tsr__view_of(const tsr_array *a) {
  /* Every field assigned, no memset: on the per-call path of every operation (a memset of the
     144-byte struct compiled to REP STOSQ, whose start-up and the stalled loads of the stores it
     made cost ~100 ns of a 400 ns GEMM call on Zen 5). */
  tsr__view v;
  v.dtype = a->dtype;
  v.ndim = a->ndim;
  v.data = tsr__array_ptr(a);
  for (int i = 0; i < TSR_MAX_DIMS; ++i) {
    v.shape[i] = i < a->ndim ? a->shape[i] : 1;
    v.strides[i] = i < a->ndim ? a->strides[i] : 0;
  }
  return v;
}

int64_t tsr__array_size(const tsr_array *a) {
  int64_t n = 1;
  for (int i = 0; i < a->ndim; ++i)
    n *= a->shape[i]; /* checked at creation */
  return n;
}

bool tsr__array_is_contiguous(const tsr_array *a) {
  /* NumPy's definition: size-1 axes may have any stride, and an empty array is contiguous. */
  int64_t expected = 1;
  for (int i = a->ndim - 1; i >= 0; --i) {
    if (a->shape[i] == 0) return true;
    if (a->shape[i] == 1) continue;
    if (a->strides[i] != expected) {
      for (int j = i - 1; j >= 0; --j)
        if (a->shape[j] == 0) return true;
      return false;
    }
    expected *= a->shape[i];
  }
  return true;
}

tsr__view tsr__view_broadcast(const tsr_array *a, int nout, const int64_t *out_shape) {
  tsr__view v = tsr__view_of(a);
  v.ndim = nout;
  for (int i = 0; i < TSR_MAX_DIMS; ++i) {
    v.shape[i] = 1;
    v.strides[i] = 0;
  }
  for (int i = 0; i < nout; ++i) {
    int j = i - (nout - a->ndim);
    v.shape[i] = out_shape[i];
    v.strides[i] = (j < 0 || (a->shape[j] == 1 && out_shape[i] != 1)) ? 0 : a->strides[j];
  }
  return v;
}

/* The byte range [lo, hi) a non-empty view can touch. */
static void tsr__extent(const tsr_array *a, uintptr_t *lo, uintptr_t *hi) {
  int64_t esize = (int64_t)tsr__dtype_size(a->dtype), first = 0, last = 0;
  for (int i = 0; i < a->ndim; ++i) {
    int64_t reach = (a->shape[i] - 1) * a->strides[i];
    if (reach < 0)
      first += reach;
    else
      last += reach;
  }
  uintptr_t base = (uintptr_t)tsr__array_ptr(a);
  *lo = base + (uintptr_t)(first * esize);
  *hi = base + (uintptr_t)((last + 1) * esize);
}

bool tsr__arrays_may_overlap(const tsr_array *a, const tsr_array *b) {
  /* Two buffers the library allocated are distinct memory; only views of one buffer, or
     borrowed memory (tsr_from_host_view, which may wrap any address), need the extents. */
  if (a->buffer != b->buffer && !((a->buffer->flags | b->buffer->flags) & TSR__BUFFER_BORROWED))
    return false;
  if (tsr__array_size(a) == 0 || tsr__array_size(b) == 0) return false;
  uintptr_t alo, ahi, blo, bhi;
  tsr__extent(a, &alo, &ahi);
  tsr__extent(b, &blo, &bhi);
  return alo < bhi && blo < ahi;
}

/* One part (0: real, 1: imaginary) of a complex view as a real view with doubled strides;
   a real view as it is. */
tsr__view tsr__view_part(const tsr__view *v, int part) {
  tsr__view p = *v;
  if (!tsr__dtype_is_complex(v->dtype)) return p;
  p.dtype = tsr__dtype_part(v->dtype);
  p.data = (char *)v->data + (part ? tsr__dtype_size(p.dtype) : 0);
  for (int i = 0; i < TSR_MAX_DIMS; ++i)
    p.strides[i] = 2 * v->strides[i];
  return p;
}
