/*
 * .npy files on the host (the header itself is src/core/npy.c). Loading converts byte order
 * and Fortran order on the host, then hands a C-contiguous buffer to tsr_from_host(), so every
 * device gets the same bytes. Saving reads any view back in C order through tsr_array_read()
 * and writes it to a temporary file in the same folder that is renamed into place only after
 * it was completely written and synced: readers see the old file or the new one, never half.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
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

static int io_host_is_big_endian(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 0;
}

static void io_byteswap(void *data, int64_t n, size_t itemsize) {
  unsigned char *p = (unsigned char *)data;
  for (int64_t i = 0; i < n; i++, p += itemsize) {
    for (size_t lo = 0, hi = itemsize - 1; lo < hi; lo++, hi--) {
      unsigned char t = p[lo];
      p[lo] = p[hi];
      p[hi] = t;
    }
  }
}

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
IO_DEFINE_F2C(io_f2c_4, uint32_t)
IO_DEFINE_F2C(io_f2c_8, uint64_t)

/* Restates the parser's reason X as "fn: X in path". */
static tsr_status io_relabel(tsr_status st, const char *fn, const char *path) {
  return tsr__set_error(st, fn, "%s in %s", tsr__last_error_detail(), path);
}

/* Reads exactly n bytes; a short read is TSR_ERR_FORMAT (the file ended), a failed one
   TSR_ERR_IO with the system's reason. */
static tsr_status io_read_exact(const char *fn, const char *path, FILE *fp, void *dst, size_t n,
                                const char *what) {
  errno = 0;
  size_t got = fread(dst, 1, n, fp);
  if (got == n) return TSR_OK;
  if (ferror(fp))
    return tsr__set_error(TSR_ERR_IO, fn, "cannot read %s of %s: %s", what, path,
                          strerror(errno ? errno : EIO));
  return tsr__set_error(TSR_ERR_FORMAT, fn, "truncated %s in %s: read %zu of %zu bytes", what, path,
                        got, n);
}

/*
 * Opens `path`, parses its header and checks that the file holds all the data. On success
 * with `keep` non-NULL the file stays open, positioned at the first element.
 */
static tsr_status io_open(const char *fn, const char *path, tsr_npy_header *h, FILE **keep) {
  tsr_status st = TSR_OK;
  unsigned char *head = NULL;
  FILE *fp = fopen(path, "rb");
  if (!fp) return tsr__set_error(TSR_ERR_IO, fn, "cannot open %s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fileno(fp), &sb) != 0) {
    int e = errno;
    fclose(fp);
    return tsr__set_error(TSR_ERR_IO, fn, "cannot stat %s: %s", path, strerror(e));
  }
  if (!S_ISREG(sb.st_mode)) {
    fclose(fp);
    return tsr__set_error(TSR_ERR_IO, fn, "%s is not a regular file", path);
  }
  uint64_t fsize = (uint64_t)sb.st_size;

  /* The fixed prefix says how long the header is; the parser reports any inconsistency. */
  unsigned char pre[12];
  size_t npre = fsize < sizeof pre ? (size_t)fsize : sizeof pre;
  TSR_CALL_GOTO(st, done, io_read_exact(fn, path, fp, pre, npre, "header"));
  uint64_t need = npre;
  if (npre >= 10 && pre[6] == 1)
    need = 10 + ((uint64_t)pre[8] | (uint64_t)pre[9] << 8);
  else if (npre >= 12 && (pre[6] == 2 || pre[6] == 3))
    need = 12 + ((uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
                 (uint64_t)pre[11] << 24);
  if (need > fsize) need = fsize; /* the parser then says "truncated header" */
  /* Not TSR_CHECK_GOTO: the messages must name `fn`, the public function, not io_open. */
  if (need > IO_MAX_HEADER) {
    st = tsr__set_error(TSR_ERR_FORMAT, fn,
                        "header of %s is %" PRIu64 " bytes, over the limit of %zu", path, need,
                        IO_MAX_HEADER);
    goto done;
  }
  head = (unsigned char *)malloc(need > 0 ? (size_t)need : 1);
  if (head == NULL) {
    st = tsr__set_error(TSR_ERR_OUT_OF_MEMORY, fn,
                        "cannot allocate %" PRIu64 " bytes for the header of %s", need, path);
    goto done;
  }
  memcpy(head, pre, npre);
  if (need > npre)
    TSR_CALL_GOTO(st, done,
                  io_read_exact(fn, path, fp, head + npre, (size_t)need - npre, "header"));
  st = tsr_npy_parse_header(head, (size_t)need, h);
  if (st != TSR_OK) {
    st = io_relabel(st, fn, path);
    goto done;
  }

  uint64_t data_bytes = (uint64_t)h->size * tsr__dtype_size(h->dtype);
  uint64_t end = (uint64_t)h->data_offset + data_bytes; /* < 2^63 + 2^33: no overflow */
  if (end > fsize) {
    st = tsr__set_error(TSR_ERR_FORMAT, fn,
                        "truncated data in %s: need %" PRIu64 " bytes (%zu of header, %" PRId64
                        " elements of %zu bytes), file has %" PRIu64,
                        path, end, h->data_offset, h->size, tsr__dtype_size(h->dtype), fsize);
    goto done;
  }
  if (keep && fseeko(fp, (off_t)h->data_offset, SEEK_SET) != 0)
    st = tsr__set_error(TSR_ERR_IO, fn, "cannot seek in %s: %s", path, strerror(errno));
done:
  free(head);
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
  TSR_CALL(io_open(__func__, path, &h, NULL));
  *header = h;
  return TSR_OK;
}

tsr_status tsr_npy_load(const char *path, tsr_device device, tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CHECK(path, TSR_ERR_NULL_POINTER, "path is NULL");
  TSR_CHECK(out, TSR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  tsr_status st = TSR_OK;
  void *data = NULL, *tmp = NULL;
  tsr_npy_header h;
  FILE *fp = NULL;
  TSR_CALL(io_open(__func__, path, &h, &fp));

  size_t itemsize = tsr__dtype_size(h.dtype);
  size_t bytes = (size_t)h.size * itemsize; /* the parser checked it fits */
  data = malloc(bytes > 0 ? bytes : 1);
  TSR_CHECK_GOTO(st, done, data, TSR_ERR_OUT_OF_MEMORY,
                 "cannot allocate %zu bytes for the data of %s", bytes, path);
  TSR_CALL_GOTO(st, done, io_read_exact(__func__, path, fp, data, bytes, "data"));
  fclose(fp);
  fp = NULL;

  if (h.big_endian != io_host_is_big_endian()) io_byteswap(data, h.size, itemsize);
  if (h.fortran_order && h.ndim > 1 && h.size > 0) {
    tmp = malloc(bytes);
    TSR_CHECK_GOTO(st, done, tmp, TSR_ERR_OUT_OF_MEMORY,
                   "cannot allocate %zu bytes to reorder the Fortran-order data of %s", bytes,
                   path);
    if (itemsize == 4)
      io_f2c_4((uint32_t *)tmp, (const uint32_t *)data, h.ndim, h.shape);
    else
      io_f2c_8((uint64_t *)tmp, (const uint64_t *)data, h.ndim, h.shape);
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

/* Syncs the folder holding `path` so that the rename itself survives a crash. Best effort:
   some file systems refuse fsync on directories, and the file is complete either way. */
static void io_sync_parent(const char *path) {
  const char *slash = strrchr(path, '/');
  char dir[4096];
  if (!slash) {
    strcpy(dir, ".");
  } else if (slash == path) {
    strcpy(dir, "/");
  } else {
    size_t n = (size_t)(slash - path);
    if (n >= sizeof dir) return;
    memcpy(dir, path, n);
    dir[n] = '\0';
  }
  int fd = open(dir, O_RDONLY);
  if (fd < 0) return;
  (void)fsync(fd);
  close(fd);
}

tsr_status tsr_npy_save(const char *path, const tsr_array *a) {
  TSR_API_ENTRY();
  static atomic_uint sequence;
  TSR_CHECK(path, TSR_ERR_NULL_POINTER, "path is NULL");
  TSR_CHECK(a, TSR_ERR_NULL_POINTER, "a is NULL");
  tsr_status st = TSR_OK;
  void *data = NULL;
  char *tmp = NULL;
  FILE *fp = NULL;
  int created = 0;

  tsr_array_info_t info;
  TSR_CALL(tsr_array_info(a, &info));
  size_t itemsize = tsr__dtype_size(info.dtype);
  size_t bytes = (size_t)info.size * itemsize; /* an array's byte count fits (shape check) */
  char header[1024];
  size_t hlen;
  TSR_CALL(
      tsr_npy_format_header(info.dtype, 0, info.ndim, info.shape, header, sizeof header, &hlen));

  data = malloc(bytes > 0 ? bytes : 1);
  TSR_CHECK_GOTO(st, done, data, TSR_ERR_OUT_OF_MEMORY,
                 "cannot allocate %zu bytes to stage the data for %s", bytes, path);
  TSR_CALL_GOTO(st, done, tsr_array_read(a, data, bytes));
  if (io_host_is_big_endian()) io_byteswap(data, info.size, itemsize);

  /* Same folder as the target so that rename() is atomic; pid + sequence keep concurrent
     writers (processes or threads) from sharing a temporary file. */
  size_t tmplen = strlen(path) + 64;
  tmp = (char *)malloc(tmplen);
  TSR_CHECK_GOTO(st, done, tmp, TSR_ERR_OUT_OF_MEMORY, "cannot allocate a file name");
  snprintf(tmp, tmplen, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&sequence, 1u));
  fp = fopen(tmp, "wbx");
  TSR_CHECK_GOTO(st, done, fp, TSR_ERR_IO, "cannot create %s (temporary file for %s): %s", tmp,
                 path, strerror(errno));
  created = 1;
  errno = 0;
  TSR_CHECK_GOTO(st, done, fwrite(header, 1, hlen, fp) == hlen, TSR_ERR_IO,
                 "cannot write the header of %s: %s", path, strerror(errno ? errno : EIO));
  errno = 0;
  TSR_CHECK_GOTO(st, done, fwrite(data, 1, bytes, fp) == bytes, TSR_ERR_IO,
                 "cannot write %zu bytes of data to %s: %s", bytes, path,
                 strerror(errno ? errno : EIO));
  TSR_CHECK_GOTO(st, done, fflush(fp) == 0, TSR_ERR_IO, "cannot write %s: %s", path,
                 strerror(errno));
  TSR_CHECK_GOTO(st, done, fsync(fileno(fp)) == 0, TSR_ERR_IO, "cannot sync %s: %s", path,
                 strerror(errno));
  {
    int rc = fclose(fp);
    fp = NULL;
    TSR_CHECK_GOTO(st, done, rc == 0, TSR_ERR_IO, "cannot close %s: %s", path, strerror(errno));
  }
  TSR_CHECK_GOTO(st, done, rename(tmp, path) == 0, TSR_ERR_IO, "cannot rename %s to %s: %s", tmp,
                 path, strerror(errno));
  created = 0;
  io_sync_parent(path);
done:
  if (fp) fclose(fp);
  if (created) remove(tmp);
  free(tmp);
  free(data);
  return st;
}
