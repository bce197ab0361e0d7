/**
 * @file io.h
 * @brief NumPy `.npy` files on the host.
 *
 * Format: NumPy's NEP 1 (".npy" format, versions 1.0, 2.0 and 3.0). Readable dtypes: f32,
 * f64, i32, i64 (descr `<f4 >f4 <f8 >f8 <i4 >i4 <i8 >i8`, and the native-order forms `=f8`
 * and `f8`; `|f8`, "byte order not applicable", is rejected for these multi-byte types),
 * C or Fortran order, either byte order. Anything else gets ::TSR_ERR_FORMAT with a message
 * saying what was found. Files are written little-endian, C order, version 1.0 (2.0 when the
 * header does not fit in 65535 bytes), to a temporary name that is renamed into place only
 * after the whole file was written.
 */
#ifndef TESSERA_IO_H
#define TESSERA_IO_H

#include <stddef.h>
#include <stdint.h>

#include "tessera/array.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A parsed `.npy` header. */
typedef struct tsr_npy_header {
  int major_version; /**< 1, 2 or 3 */
  tsr_dtype dtype;
  int big_endian;    /**< 1 when the data is big-endian */
  int fortran_order; /**< 1 when the data is in Fortran (column-major) order */
  int ndim;          /**< 0..TSR_MAX_DIMS */
  int64_t shape[TSR_MAX_DIMS];
  size_t data_offset; /**< bytes from the start of the file to the first element */
  int64_t size;       /**< elements: product of shape */
} tsr_npy_header;

/**
 * Parses the header at the start of a `.npy` file held in memory (the first `len` bytes).
 * Never reads past `len`; it does not need the data. Pure and thread-safe (the fuzz target).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_FORMAT (bad magic, unsupported version
 *         or dtype, malformed dictionary, truncated header, ndim > TSR_MAX_DIMS, negative or
 *         overflowing shape).
 */
TSR_API tsr_status tsr_npy_parse_header(const void *buf, size_t len, tsr_npy_header *header);

/**
 * Formats a version 1.0 (or 2.0 when needed) header for C-order or Fortran-order
 * little-endian data, padded so the data starts on a 64-byte boundary.
 * @param[out] buf receives the header; @param cap its size; @param[out] len header bytes.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (cap too small,
 *         bad ndim, negative size); ::TSR_ERR_DTYPE.
 */
TSR_API tsr_status tsr_npy_format_header(tsr_dtype dtype, int fortran_order, int ndim,
                                         const int64_t *shape, char *buf, size_t cap, size_t *len);

/**
 * Reads the header of a `.npy` file and checks that the file is long enough for the data.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_IO (cannot open or read, or not a
 *         regular file); ::TSR_ERR_FORMAT (as tsr_npy_parse_header(), file shorter than its
 *         data, or a header over 16 MiB).
 */
TSR_API tsr_status tsr_npy_read_header(const char *path, tsr_npy_header *header);

/**
 * Loads a `.npy` file into a new C-contiguous array on `device` (byte order and Fortran order
 * converted).
 * @return statuses of tsr_npy_read_header() and tsr_empty().
 */
TSR_API tsr_status tsr_npy_load(const char *path, tsr_device device, tsr_array **out);

/**
 * Saves an array (any view, any device) as a `.npy` file: little-endian, C order. Written to
 * `path` + a temporary suffix in the same folder, then renamed; on failure nothing is left.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_IO (cannot create, write or rename,
 *         with the system's reason); ::TSR_ERR_GPU; ::TSR_ERR_OUT_OF_MEMORY.
 */
TSR_API tsr_status tsr_npy_save(const char *path, const tsr_array *a);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_IO_H */
