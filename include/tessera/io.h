/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file io.h
 * @brief NumPy `.npy` files on the host.
 *
 * Format: NumPy's NEP 1 (".npy" format, versions 1.0, 2.0 and 3.0). Readable dtypes: f32,
 * f64, i32, i64, c64, c128 (descr `<f4 >f4 <f8 >f8 <i4 >i4 <i8 >i8 <c8 >c8 <c16 >c16`, and
 * the native-order forms `=f8` and `f8`; `|f8`, "byte order not applicable", is rejected for
 * these multi-byte types), C or Fortran order, either byte order (a big-endian complex item
 * is swapped part by part: each 4- or 8-byte half on its own). A well-formed file of another
 * dtype NumPy writes (`<c32`, `<f2`, unsigned, bool, strings, structured dtypes...) gets
 * ::TSR_ERR_DTYPE with its descr in the message; anything else (a malformed header, a descr no
 * NumPy writes such as a complex item size other than 8, 16, 24 or 32 (`<c4`), `|f8`) gets
 * ::TSR_ERR_FORMAT with a message saying what was found. Files are
 * written little-endian, C order, version 1.0 (2.0 when the header does not fit in 65535 bytes), to
 * a temporary name that is renamed into place only after the whole file was written and synced.
 * Inputs are opened without blocking and must be regular files (a FIFO or a device is refused,
 * never waited on).
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
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_FORMAT (bad magic, unsupported version,
 *         malformed dictionary or descr, truncated header, ndim > TSR_MAX_DIMS, negative or
 *         overflowing shape, a complex descr of an item size NumPy has not); ::TSR_ERR_DTYPE (a
 *         well-formed header of a dtype other than f4, f8, i4, i8, c8, c16, e.g. `<c32`; the
 *         message gives the descr).
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
 *         data, or a header over 16 MiB); ::TSR_ERR_DTYPE (as tsr_npy_parse_header()).
 */
TSR_API tsr_status tsr_npy_read_header(const char *path, tsr_npy_header *header);

/**
 * Loads a `.npy` file into a new C-contiguous array on `device` (byte order and Fortran order
 * converted). The arguments are checked before the file is opened (a NULL `out` or a
 * device that does not exist never opens it).
 * @return statuses of tsr_npy_read_header() and tsr_empty() (::TSR_ERR_NO_DEVICE).
 */
TSR_API tsr_status tsr_npy_load(const char *path, tsr_device device, tsr_array **out);

/**
 * Saves an array (any view, any device) as a `.npy` file: little-endian, C order, written the
 * way tsr_file_write() writes: the target is checked first (tsr_file_check_output()), the data
 * goes to a temporary file beside it (tsr_file_temp_path()) with every write checked, is
 * fsync()ed and then renamed onto `path`; on failure nothing is left.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (empty path, name over
 *         NAME_MAX or PATH_MAX); ::TSR_ERR_IO (target not a regular file or new name, directory
 *         missing or not writable, cannot create, write (disk full, file size limit), sync or
 *         rename, with the system's reason); ::TSR_ERR_GPU; ::TSR_ERR_OUT_OF_MEMORY.
 */
TSR_API tsr_status tsr_npy_save(const char *path, const tsr_array *a);

/**
 * Checks, without writing anything, that `path` can be written by tsr_npy_save(),
 * tsr_file_write() and tsr_dmatrix_write_npy(): `path` is a regular file (it will be replaced)
 * or does not exist; it is not a symbolic link, directory, FIFO, socket or device node (those
 * are never replaced); its directory exists and is writable; the name and its temporary name fit
 * NAME_MAX and PATH_MAX. Local (one process).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (empty, too long, ends in
 *         '/'); ::TSR_ERR_IO (what the target is, or why its directory cannot take it).
 */
TSR_API tsr_status tsr_file_check_output(const char *path);

/**
 * The temporary name under which Tessera writes `path` before renaming it into place:
 * `DIR/.NAME.tessera-tmp.PID.SEQ`, where NAME is the final component of `path` cut to its first
 * 32 bytes (so the name stays far below NAME_MAX and the whole path below the lengths MPI-IO
 * libraries can take with their own suffixes), PID the writing process (rank 0 of the
 * communicator for tsr_dmatrix_write_npy(), whose SEQ counts its calls in that process from 0;
 * tsr_npy_save() and tsr_file_write() use SEQ >= 1 from their own counter).
 * Such a file is removed on every error path; one left by a killed process matches
 * `.*.tessera-tmp.*` and may be deleted. Local, async-signal-safe to *use* the result (e.g.
 * unlink() it from a signal handler).
 * @param cap size of `buf` (PATH_MAX + 64 is always enough).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (as
 *         tsr_file_check_output(), or `cap` too small).
 */
TSR_API tsr_status tsr_file_temp_path(const char *path, long pid, unsigned seq, char *buf,
                                      size_t cap);

/**
 * Writes `len` bytes to `path` with the protocol of tsr_npy_save() (checked target, temporary
 * file, checked writes, fsync, rename). `data` may be NULL when `len` is 0; `len` in bytes.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (`path`, or `data` with `len` > 0);
 *         ::TSR_ERR_INVALID_ARGUMENT (empty path, a path naming a directory: ending in '/', '.'
 *         or '..', name over NAME_MAX or PATH_MAX, temporary name over PATH_MAX); ::TSR_ERR_IO
 *         (target not a regular file or new name, directory missing or not writable, cannot
 *         create, write (disk full, file size limit), sync or rename, with the system's reason).
 */
TSR_API tsr_status tsr_file_write(const char *path, const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_IO_H */
