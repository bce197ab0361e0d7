/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device operations for the layers above the core (internal.h, "device work"): the dispatch of
 * streams, events, pinned memory, asynchronous copies and the distributed-matrix kernels to the
 * device's backend, with the host's behaviour where a backend has no entry. src/mpi reaches
 * devices only through these, so it includes no GPU header and has no CUDA/HIP conditionals.
 * The counters of device work are the per-thread counters (thread_state.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

/* ---------------------------------------------------------------- dispatch ------------ */

static const struct tsr__backend_ops *tsr__devops_table(tsr_device dev, tsr_status *st) {
  const struct tsr__backend_ops *ops = NULL;
  *st = tsr__backend_for(dev, &ops);
  return *st == TSR_OK ? ops : NULL;
}

tsr_status tsr__dev_pinned_alloc(tsr_device dev, size_t bytes, void **ptr) {
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  if (ops->pinned_alloc) return ops->pinned_alloc(dev, bytes, ptr);
  return tsr__host_alloc(bytes ? bytes : 1, ptr);
}

void tsr__dev_pinned_free(tsr_device dev, void *ptr) {
  if (!ptr) return;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (ops && ops->pinned_free)
    ops->pinned_free(dev, ptr);
  else
    tsr__host_free(ptr);
}

tsr_status tsr__dev_stream_create(tsr_device dev, void **stream) {
  *stream = NULL;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  return ops->stream_create ? ops->stream_create(dev, stream) : TSR_OK;
}

void tsr__dev_stream_destroy(tsr_device dev, void *stream) {
  if (!stream) return;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (ops && ops->stream_destroy) ops->stream_destroy(dev, stream);
}

tsr_status tsr__dev_event_create(tsr_device dev, void **event) {
  *event = NULL;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  return ops->event_create ? ops->event_create(dev, event) : TSR_OK;
}

void tsr__dev_event_destroy(tsr_device dev, void *event) {
  if (!event) return;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (ops && ops->event_destroy) ops->event_destroy(dev, event);
}

tsr_status tsr__dev_event_record(tsr_device dev, void *event, void *stream) {
  if (!event) return TSR_OK;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  return ops->event_record ? ops->event_record(dev, event, stream) : TSR_OK;
}

tsr_status tsr__dev_event_query(tsr_device dev, void *event, int *done) {
  *done = 1;
  if (!event) return TSR_OK;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  return ops->event_query ? ops->event_query(dev, event, done) : TSR_OK;
}

tsr_status tsr__dev_event_elapsed(tsr_device dev, void *start, void *stop, double *seconds) {
  *seconds = 0.0;
  if (!start || !stop) return TSR_OK;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  return ops->event_elapsed ? ops->event_elapsed(dev, start, stop, seconds) : TSR_OK;
}

tsr_status tsr__dev_stream_wait_event(tsr_device dev, void *stream, void *event) {
  if (!event) return TSR_OK;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  return ops->stream_wait_event ? ops->stream_wait_event(dev, stream, event) : TSR_OK;
}

tsr_status tsr__dev_memcpy_2d_async(tsr_device dev, void *dst, size_t dpitch, const void *src,
                                    size_t spitch, size_t width, size_t rows, tsr__copy_dir dir,
                                    void *stream) {
  if (width == 0 || rows == 0) return TSR_OK;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  if (ops->memcpy_2d_async)
    return ops->memcpy_2d_async(dev, dst, dpitch, src, spitch, width, rows, dir, stream);
  /* Host memory on both sides: done on return. */
  for (size_t r = 0; r < rows; r++)
    memcpy((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
  return TSR_OK;
}

/* ---------------------------------------------------------------- strided rectangles -- */

/* One rectangle on the host: elements of es bytes; for ADD and CONJ the element is `parts`
   values of type T (1 real, 2 complex). */
#define TSR__RECT_HOST(T, parts)                                                                   \
  for (int64_t j = 0; j < r->cols; j++)                                                            \
    for (int64_t i = 0; i < r->rows; i++) {                                                        \
      T *o = (T *)dst + (r->dst_off + i * r->dst_rs + j * r->dst_cs) * (parts);                    \
      const T *x = (const T *)src + (r->src_off + i * r->src_rs + j * r->src_cs) * (parts);        \
      if (op == TSR__RECT_ADD) {                                                                   \
        for (int q = 0; q < (parts); q++)                                                          \
          o[q] += x[q];                                                                            \
      } else {                                                                                     \
        o[0] = x[0];                                                                               \
        if ((parts) == 2) o[(parts)-1] = -x[(parts)-1];                                            \
      }                                                                                            \
    }

static void tsr__rect_host(void *dst, const void *src, tsr_dtype dtype, const tsr__rect *r,
                           tsr__rect_op op) {
  const size_t es = tsr__dtype_size(dtype);
  if (op == TSR__RECT_COPY) {
    for (int64_t j = 0; j < r->cols; j++) {
      if (r->src_rs == 1 && r->dst_rs == 1) { /* a column run: one memcpy */
        memcpy((char *)dst + (size_t)(r->dst_off + j * r->dst_cs) * es,
               (const char *)src + (size_t)(r->src_off + j * r->src_cs) * es, (size_t)r->rows * es);
        continue;
      }
      for (int64_t i = 0; i < r->rows; i++)
        memcpy((char *)dst + (size_t)(r->dst_off + i * r->dst_rs + j * r->dst_cs) * es,
               (const char *)src + (size_t)(r->src_off + i * r->src_rs + j * r->src_cs) * es, es);
    }
    return;
  }
  switch (dtype) {
  case TSR_F32: TSR__RECT_HOST(float, 1) break;
  case TSR_F64: TSR__RECT_HOST(double, 1) break;
  case TSR_C64: TSR__RECT_HOST(float, 2) break;
  default: TSR__RECT_HOST(double, 2) break; /* TSR_C128 (checked by the caller) */
  }
}
#undef TSR__RECT_HOST

tsr_status tsr__dev_copy_rects(tsr_device dev, void *dst, const void *src, tsr_dtype dtype,
                               const tsr__rect *r, int64_t n, tsr__rect_op op) {
  if (n <= 0) return TSR_OK;
  const bool cplx = tsr__dtype_is_complex(dtype);
  const bool real = dtype == TSR_F32 || dtype == TSR_F64;
  if ((op == TSR__RECT_ADD && !cplx && !real) || (op == TSR__RECT_CONJ && !cplx))
    return tsr__set_error(TSR_ERR_INTERNAL, __func__, "rectangle operation %d on %s", (int)op,
                          tsr_dtype_name(dtype));
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  if (ops->copy_rects) return ops->copy_rects(dev, dst, src, dtype, r, n, op);
  /* Host memory: done on return. */
  for (int64_t q = 0; q < n; q++)
    tsr__rect_host(dst, src, dtype, &r[q], op);
  return TSR_OK;
}

/* ---------------------------------------------------------------- dmatrix kernels ----- */

tsr_status tsr__dev_rng_block_cyclic(tsr_array *storage, const tsr__bc_block *l, uint64_t seed,
                                     double low, double high) {
  if (l->mloc == 0 || l->nloc == 0) return TSR_OK;
  tsr_device dev = storage->buffer->device;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  void *data = tsr__array_ptr(storage);
  if (ops->rng_block_cyclic)
    return ops->rng_block_cyclic(dev, data, storage->dtype, l, seed, low, high);
  /* Generated on the host by the CPU backend, then copied (one whole-block copy). */
  const size_t bytes = (size_t)(l->lld * l->nloc) * tsr__dtype_size(storage->dtype);
  void *host = NULL;
  TSR_CALL(tsr__host_alloc(bytes, &host));
  tsr_device cpu = {TSR_DEVICE_CPU, 0};
  st = tsr__omp_backend.rng_block_cyclic(cpu, host, storage->dtype, l, seed, low, high);
  if (st == TSR_OK) st = tsr__copy_h2d(storage, 0, host, bytes);
  tsr__host_free(host);
  return st;
}

tsr_status tsr__dev_matvec_f64(const tsr_array *storage, int64_t rows, int64_t cols, int64_t ld,
                               bool trans, const double *x1, const double *x2, double *y1,
                               double *y2, int64_t *nonfinite) {
  tsr_device dev = storage->buffer->device;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  const void *data = tsr__array_ptr(storage);
  /* A complex matrix is read as the real matrix of its parts (rows and ld in parts). */
  const tsr_dtype dtype = tsr__dtype_part(storage->dtype);
  if (ops->matvec_f64)
    return ops->matvec_f64(dev, data, dtype, rows, cols, ld, trans, x1, x2, y1, y2, nonfinite);
  /* Staged through the host for backends without the kernel. */
  const size_t bytes = (size_t)(ld * cols) * tsr__dtype_size(dtype);
  void *host = NULL;
  TSR_CALL(tsr__host_alloc(bytes ? bytes : 1, &host));
  st = tsr__copy_d2h(storage, 0, host, bytes);
  tsr_device cpu = {TSR_DEVICE_CPU, 0};
  if (st == TSR_OK)
    st = tsr__omp_backend.matvec_f64(cpu, host, dtype, rows, cols, ld, trans, x1, x2, y1, y2,
                                     nonfinite);
  tsr__host_free(host);
  return st;
}
