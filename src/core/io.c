/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * .npy files on the host (the header itself is src/core/npy.c). Loading converts byte order
 * and Fortran order on the host, then hands a C-contiguous buffer to tsr_from_host(), so every
 * device gets the same bytes. Saving reads any view back in C order through tsr_array_read()
 * and writes it with tsr__save_file() (src/core/fileio.c): checked target, temporary file in
 * the same folder, checked writes, fsync, rename: readers see the old file or the new one.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/internal.h"

/* Our dtypes need a few hundred header bytes; the limit only bounds what a hostile header
   length can make us allocate (NumPy itself refuses headers over 10000 bytes by default). */
#define IO_MAX_HEADER ((size_t)1 << 24)

/* Fortran order is C order of the reversed shape, so converting it is a full reversal of the
   axes: element (i0, ..., i{n-1}) moves from i0 + s0*(i1 + s1*(...)) to C position.
   Reads the source sequentially; 2-D matrices (the common case) go tile by tile so that the
   strided side stays in cache. */
#define IO_TILE 32
#define IO_DEFINE_F2C(name, type)                                                                  \
  static void name(type *dst, const type *src, int ndim, const int64_t *shape) {                   \
    if (ndim == 2) {                                                                               \
      int64_t rows = shape[0], cols = shape[1]; /* src[i + rows*j] -> dst[i*cols + j] */           \
      for (int64_t jj = 0; jj < cols; jj += IO_TILE)                                               \
        for (int64_t ii = 0; ii < rows; ii += IO_TILE) {                                           \
          int64_t je = jj + IO_TILE < cols ? jj + IO_TILE : cols;                                  \
          int64_t ie = ii + IO_TILE < rows ? ii + IO_TILE : rows;                                  \
          for (int64_t j = jj; j < je; j++)                                                        \
            for (int64_t i = ii; i < ie; i++)                                                      \
              dst[i * cols + j] = src[i + rows * j];                                               \
        }                                                                                          \
      return;                                                                                      \
    }                                                                                              \
    int64_t cstride[TSR_MAX_DIMS], idx[TSR_MAX_DIMS] = {0}, total = 1;                             \
    for (int k = ndim - 1; k >= 0; k--) {                                                          \
      cstride[k] = total;                                                                          \
      total *= shape[k];                                                                           \
    }                                                                                              \
    int64_t d = 0;                                                                                 \
    for (int64_t s = 0; s < total; s++) {                                                          \
      dst[d] = src[s];                                                                             \
      for (int k = 0; k < ndim; k++) { /* axis 0 varies fastest in the source */                   \
        d += cstride[k];                                                                           \
        if (++idx[k] < shape[k]) break;                                                            \
        d -= cstride[k] * shape[k];                                                                \
        idx[k] = 0;                                                                                \
      }                                                                                            \
    }                                                                                              \
  }
/* 16-byte elements (c128) move as one unit of two words. */
typedef struct tsr__io_w128 {
  uint64_t lo, hi;
} tsr__io_w128;
IO_DEFINE_F2C(io_f2c_4, uint32_t)
IO_DEFINE_F2C(io_f2c_8, uint64_t)
IO_DEFINE_F2C(io_f2c_16, tsr__io_w128)

/* Restates the parser's reason X as "<public function>: X in path". */
static tsr_status tsr__io_relabel(tsr_status st, const char *path) {
  return tsr__set_error(st, __func__, "%s in %s", tsr__last_error_detail(), path);
}

/* Reads exactly n bytes; a short read is TSR_ERR_FORMAT (the file ended), a failed one
   TSR_ERR_IO with the system's reason. */
static tsr_status tsr__io_read_exact(const char *path, FILE *fp, void *dst, size_t n,
                                     const char *what) {
  errno = 0;
  size_t got = fread(dst, 1, n, fp);
  if (got == n) return TSR_OK;
  if (ferror(fp))
    return tsr__set_error(TSR_ERR_IO, __func__, "cannot read %s of %s: %s", what, path,
                          strerror(errno ? errno : EIO));
  return tsr__set_error(TSR_ERR_FORMAT, __func__, "truncated %s in %s: read %zu of %zu bytes", what,
                        path, got, n);
}

tsr_status tsr__npy_read_header_at(const char *path, uint64_t fsize, tsr__read_at_fn read,
                                   void *ctx, tsr_npy_header *h) {
  /* The fixed prefix says how long the header is; the parser reports any inconsistency. */
  unsigned char pre[12];
  size_t npre = fsize < sizeof pre ? (size_t)fsize : sizeof pre;
  TSR_CALL(read(ctx, 0, pre, npre));
  uint64_t need = npre;
  if (npre >= 10 && pre[6] == 1)
    need = 10 + ((uint64_t)pre[8] | (uint64_t)pre[9] << 8);
  else if (npre >= 12 && (pre[6] == 2 || pre[6] == 3))
    need = 12 + ((uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
                 (uint64_t)pre[11] << 24);
  if (need > fsize) need = fsize; /* the parser then says "truncated header" */
  if (need > IO_MAX_HEADER)
    return tsr__set_error(TSR_ERR_FORMAT, __func__,
                          "header of %s is %" PRIu64 " bytes, over the limit of %zu", path, need,
                          IO_MAX_HEADER);
  unsigned char *head = (unsigned char *)malloc(need > 0 ? (size_t)need : 1);
  if (head == NULL)
    return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__,
                          "cannot allocate %" PRIu64 " bytes for the header of %s", need, path);
  memcpy(head, pre, npre);
  tsr_status st = need > npre ? read(ctx, npre, head + npre, (size_t)need - npre) : TSR_OK;
  if (st == TSR_OK) {
    st = tsr_npy_parse_header(head, (size_t)need, h);
    if (st != TSR_OK) st = tsr__io_relabel(st, path);
  }
  free(head);
  return st;
}

/* tsr__npy_read_header_at's reader on a stdio stream at its start (reads are sequential). */
typedef struct tsr__io_stream {
  const char *path;
  FILE *fp;
} tsr__io_stream;

static tsr_status tsr__io_stream_read(void *ctx, uint64_t offset, void *dst, size_t n) {
  const tsr__io_stream *s = (const tsr__io_stream *)ctx;
  (void)offset;
  return tsr__io_read_exact(s->path, s->fp, dst, n, "header");
}

/*
 * Opens `path`, parses its header and checks that the file holds all the data. On success
 * with `keep` non-NULL the file stays open, positioned at the first element.
 */
static tsr_status tsr__io_open(const char *path, tsr_npy_header *h, FILE **keep) {
  tsr_status st = TSR_OK;
  int fd = -1;
  uint64_t fsize = 0;
  /* Non-blocking open and a regular-file check first: a FIFO or a device would block. */
  TSR_CALL(tsr__open_input(path, &fd, &fsize));
  FILE *fp = fdopen(fd, "rb");
  if (!fp) {
    int e = errno;
    close(fd);
    return tsr__set_error(TSR_ERR_IO, __func__, "cannot open %s: %s", path, strerror(e));
  }

  tsr__io_stream ctx = {path, fp};
  TSR_CALL_GOTO(st, done, tsr__npy_read_header_at(path, fsize, tsr__io_stream_read, &ctx, h));

  uint64_t data_bytes = (uint64_t)h->size * tsr__dtype_size(h->dtype);
  uint64_t end = (uint64_t)h->data_offset + data_bytes; /* < 2^63 + 2^33: no overflow */
  if (end > fsize) {
    st = tsr__set_error(TSR_ERR_FORMAT, __func__,
                        "truncated data in %s: need %" PRIu64 " bytes (%zu of header, %" PRId64
                        " elements of %zu bytes), file has %" PRIu64,
                        path, end, h->data_offset, h->size, tsr__dtype_size(h->dtype), fsize);
    goto done;
  }
  if (keep && fseeko(fp, (off_t)h->data_offset, SEEK_SET) != 0)
    st = tsr__set_error(TSR_ERR_IO, __func__, "cannot seek in %s: %s", path, strerror(errno));
done:
  if (st == TSR_OK && keep) {
    *keep = fp;
  } else {
    fclose(fp);
  }
  return st;
}

tsr_status tsr_npy_read_header(const char *path, tsr_npy_header *header) {
  TSR_API_ENTRY();
  TSR_CHECK(path, TSR_ERR_NULL_POINTER, "path is NULL");
  TSR_CHECK(header, TSR_ERR_NULL_POINTER, "header is NULL");
  tsr_npy_header h;
  TSR_CALL(tsr__io_open(path, &h, NULL));
  *header = h;
  return TSR_OK;
}

tsr_status tsr_npy_load(const char *path, tsr_device device, tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(path, TSR_ERR_NULL_POINTER, "path is NULL");
  TSR_CHECK(out, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  /* Arguments first, then the file: a device that does not exist never opens it. */
  const struct tsr__backend_ops *ops = NULL;
  TSR_CALL(tsr__backend_for(device, &ops));
  tsr_status st = TSR_OK;
  void *data = NULL, *tmp = NULL;
  tsr_npy_header h;
  FILE *fp = NULL;
  TSR_CALL(tsr__io_open(path, &h, &fp));

  size_t itemsize = tsr__dtype_size(h.dtype);
  size_t bytes = (size_t)h.size * itemsize; /* the parser checked it fits */
  data = malloc(bytes > 0 ? bytes : 1);
  TSR_CHECK_GOTO(st, done, data, TSR_ERR_OUT_OF_MEMORY,
                 "cannot allocate %zu bytes for the data of %s", bytes, path);
  TSR_CALL_GOTO(st, done, tsr__io_read_exact(path, fp, data, bytes, "data"));
  fclose(fp);
  fp = NULL;

  /* A complex element is two numbers: each part is swapped on its own. */
  if (h.big_endian != tsr__host_big_endian()) {
    if (tsr__dtype_is_complex(h.dtype))
      tsr__byteswap(data, 2 * h.size, itemsize / 2);
    else
      tsr__byteswap(data, h.size, itemsize);
  }
  if (h.fortran_order && h.ndim > 1 && h.size > 0) {
    tmp = malloc(bytes);
    TSR_CHECK_GOTO(st, done, tmp, TSR_ERR_OUT_OF_MEMORY,
                   "cannot allocate %zu bytes to reorder the Fortran-order data of %s", bytes,
                   path);
    if (itemsize == 4)
      io_f2c_4((uint32_t *)tmp, (const uint32_t *)data, h.ndim, h.shape);
    else if (itemsize == 8)
      io_f2c_8((uint64_t *)tmp, (const uint64_t *)data, h.ndim, h.shape);
    else
      io_f2c_16((tsr__io_w128 *)tmp, (const tsr__io_w128 *)data, h.ndim, h.shape);
    void *swap = data;
    data = tmp;
    tmp = swap;
  }
  TSR_CALL_GOTO(st, done, tsr_from_host(h.ndim, h.shape, h.dtype, device, data, out));
done:
  if (fp) fclose(fp);
  free(data);
  free(tmp);
  return st;
}

tsr_status tsr_npy_save(const char *path, const tsr_array *a) {
  TSR_API_ENTRY();
  TSR_CHECK(path, TSR_ERR_NULL_POINTER, "path is NULL");
  TSR_CHECK(a, TSR_ERR_NULL_POINTER, "a is NULL");
  /* Before staging the data: a target that cannot be written fails at once. */
  TSR_CALL(tsr__check_output(path));
  tsr_array_props info;
  TSR_CALL(tsr_array_info(a, &info));
  size_t itemsize = tsr__dtype_size(info.dtype);
  size_t bytes = (size_t)info.size * itemsize; /* an array's byte count fits (shape check) */
  char header[1024];
  size_t hlen;
  TSR_CALL(
      tsr_npy_format_header(info.dtype, 0, info.ndim, info.shape, header, sizeof header, &hlen));
  void *data = malloc(bytes > 0 ? bytes : 1);
  TSR_CHECK(data, TSR_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes to stage the data for %s",
            bytes, path);
  tsr_status st = tsr_array_read(a, data, bytes);
  if (st == TSR_OK) {
    if (tsr__host_big_endian()) {
      if (tsr__dtype_is_complex(info.dtype))
        tsr__byteswap(data, 2 * info.size, itemsize / 2);
      else
        tsr__byteswap(data, info.size, itemsize);
    }
    const void *parts[2] = {header, data};
    size_t lens[2] = {hlen, bytes};
    st = tsr__save_file(path, parts, lens, 2);
  }
  free(data);
  return st;
}
