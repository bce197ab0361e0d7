/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The grid's staging object (staging.h): pinned host buffers, device message buffers, copy
 * streams and SUMMA's slots, grow-only and freed with the grid; the staged copies and the
 * wait before MPI in one place, for SUMMA and the block-cyclic exchange.
 */
#include <stdint.h>
#include <stdlib.h>

#include "mpi/staging.h"

struct tsr__staging {
  tsr_device dev;
  void *host[TSR__STAGE_NBUF];
  size_t host_bytes[TSR__STAGE_NBUF];
  tsr_array *dbuf[2]; /* TSR__STAGE_SEND, TSR__STAGE_RECV */
  size_t dbuf_bytes[2];
  bool streams; /* d2h and h2d made */
  void *d2h, *h2d;
  void *summa;
  void (*summa_free)(void *);
};

/* Releases everything the object holds (the object stays). */
static void tsr__staging_clear(tsr__staging *s) {
  if (s->summa && s->summa_free) s->summa_free(s->summa);
  s->summa = NULL;
  s->summa_free = NULL;
  bool pinned = false;
  for (int i = 0; i < TSR__STAGE_NBUF; i++)
    pinned = pinned || s->host[i] != NULL;
  /* No copy may still read or write a buffer that goes. */
  if (pinned || s->streams) (void)tsr_device_synchronize(s->dev);
  for (int i = 0; i < TSR__STAGE_NBUF; i++) {
    tsr__dev_pinned_free(s->dev, s->host[i]);
    s->host[i] = NULL;
    s->host_bytes[i] = 0;
  }
  for (int i = 0; i < 2; i++) {
    tsr_array_release(s->dbuf[i]);
    s->dbuf[i] = NULL;
    s->dbuf_bytes[i] = 0;
  }
  tsr__dev_stream_destroy(s->dev, s->d2h);
  tsr__dev_stream_destroy(s->dev, s->h2d);
  s->d2h = s->h2d = NULL;
  s->streams = false;
}

/* The grid's release (tsr_grid_free through staging_free). */
static void tsr__staging_free(tsr__staging *s) {
  if (!s) return;
  tsr__staging_clear(s);
  free(s);
}

tsr_status tsr__staging_get(const tsr_grid *cg, tsr_device dev, tsr__staging **out) {
  tsr_grid *g = (tsr_grid *)(uintptr_t)cg;
  tsr__staging *s = g->staging;
  if (s && !tsr_device_equal(s->dev, dev)) {
    tsr__staging_clear(s);
    s->dev = dev;
  }
  if (!s) {
    s = calloc(1, sizeof *s);
    if (!s) return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "staging object");
    s->dev = dev;
    g->staging = s;
    g->staging_free = tsr__staging_free;
  }
  *out = s;
  return TSR_OK;
}

tsr_status tsr__staging_host(tsr__staging *s, int which, size_t bytes, void **ptr) {
  if (!s->host[which] || s->host_bytes[which] < bytes) {
    /* A copy queued on the old buffer completes before it goes. */
    if (s->host[which]) TSR_CALL(tsr_device_synchronize(s->dev));
    tsr__dev_pinned_free(s->dev, s->host[which]);
    s->host[which] = NULL;
    s->host_bytes[which] = 0;
    const size_t want = bytes > 0 ? bytes : 1;
    TSR_CALL(tsr__dev_pinned_alloc(s->dev, want, &s->host[which]));
    s->host_bytes[which] = want;
  }
  *ptr = s->host[which];
  return TSR_OK;
}

tsr_status tsr__staging_dev(tsr__staging *s, int which, size_t bytes, void **ptr) {
  if (!s->dbuf[which] || s->dbuf_bytes[which] < bytes) {
    tsr_array_release(s->dbuf[which]); /* stream-ordered: the caching allocator */
    s->dbuf[which] = NULL;
    s->dbuf_bytes[which] = 0;
    int64_t n[1] = {(int64_t)((bytes + 15) / 16) * 2}; /* f64 elements, 16-byte multiples */
    if (n[0] == 0) n[0] = 2;
    TSR_CALL(tsr_empty(1, n, TSR_F64, s->dev, &s->dbuf[which]));
    s->dbuf_bytes[which] = (size_t)n[0] * 8;
  }
  *ptr = tsr__array_ptr(s->dbuf[which]);
  return TSR_OK;
}

tsr_status tsr__staging_streams(tsr__staging *s, void **d2h, void **h2d) {
  if (!s->streams) {
    TSR_CALL(tsr__dev_stream_create(s->dev, &s->d2h));
    TSR_CALL(tsr__dev_stream_create(s->dev, &s->h2d));
    s->streams = true;
  }
  *d2h = s->d2h;
  *h2d = s->h2d;
  return TSR_OK;
}

tsr_status tsr__staging_d2h(tsr__staging *s, int which, size_t off, const void *src, size_t spitch,
                            size_t width, size_t rows, void *stream) {
  return tsr__dev_memcpy_2d_async(s->dev, (char *)s->host[which] + off, width, src, spitch, width,
                                  rows, TSR__COPY_D2H, stream);
}

tsr_status tsr__staging_h2d(tsr__staging *s, int which, size_t off, void *dst, size_t dpitch,
                            size_t width, size_t rows, void *stream) {
  return tsr__dev_memcpy_2d_async(s->dev, dst, dpitch, (const char *)s->host[which] + off, width,
                                  width, rows, TSR__COPY_H2D, stream);
}

tsr_status tsr__staging_ready(tsr__staging *s) {
  return tsr_device_synchronize(s->dev);
}

void *tsr__staging_summa(const tsr__staging *s) {
  return s->summa;
}

void tsr__staging_set_summa(tsr__staging *s, void *slots, void (*free_fn)(void *)) {
  s->summa = slots;
  s->summa_free = free_fn;
}
