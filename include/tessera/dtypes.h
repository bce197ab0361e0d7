/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file dtypes.h
 * @brief Element types, defined once as the rows of ::TSR_DTYPE_MAP.
 *
 * Every enumeration of the dtypes in Tessera (the enum, the names, the parser, the element
 * sizes, the `.npy` type strings, the MPI datatypes of the distributed layer) is generated from
 * the rows below, libuv's `UV_ERRNO_MAP` style. A program may expand the map too:
 *
 *     #define ROW(name, ENUM, value, c_type, size, npy, is_float, is_cx) puts(#name);
 *     TSR_DTYPE_MAP(ROW)
 *
 * Adding a dtype is a row here (the next free value: the values are the ABI and never change),
 * its MPI datatype's row in `src/mpi/mpi_dtypes.h`, then the kernels (docs/conventions.md,
 * "Adding things").
 */
#ifndef TESSERA_DTYPES_H
#define TESSERA_DTYPES_H

#include <stddef.h>
#include <stdint.h>

#include "tessera/config.h"
#include "tessera/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * One element of ::TSR_C64 in memory: real part, imaginary part (the layout of C99's
 * `float _Complex` and C++'s `std::complex<float>`, which may be passed where a pointer to it
 * is asked). A struct, not `_Complex`, so that the header is C++ too.
 */
typedef struct tsr_complex64 {
  float re; /**< real part */
  float im; /**< imaginary part */
} tsr_complex64;

/** One element of ::TSR_C128 in memory: real part, imaginary part (C99 `double _Complex`). */
typedef struct tsr_complex128 {
  double re; /**< real part */
  double im; /**< imaginary part */
} tsr_complex128;

/**
 * The dtypes, one row each: `X(name, ENUM, value, c_type, size, npy, is_float,
 * is_complex)`.
 *  - name: what tsr_dtype_name() returns and tsr_dtype_parse() reads, as an identifier (`f32`;
 *    `#name` gives the string);
 *  - ENUM, value: the ::tsr_dtype constant and its number (the ABI: rows are in value order
 *    0, 1, 2, ... and a value never changes);
 *  - c_type, size: the C type of one element and its size in bytes (`sizeof(c_type)`);
 *  - npy: the `.npy` type string without its byte-order character (`"f4"`);
 *  - is_float: 1 for floating dtypes, real or complex (div, pow, mean, gemm), 0 for integers;
 *  - is_complex: 1 for the complex dtypes (no ordering: comparisons, maximum, minimum, relu,
 *    sort refuse them), 0 for real ones.
 *
 * The dtypes: ::TSR_F32, IEEE-754 binary32; ::TSR_F64, IEEE-754 binary64; ::TSR_I32,
 * int32_t; ::TSR_I64, int64_t; ::TSR_C64, single complex (two binary32: real, imaginary);
 * ::TSR_C128, double complex (two binary64). The complex dtypes have C99's layout of
 * `float _Complex` / `double _Complex` (Fortran's COMPLEX / COMPLEX*16, C++'s
 * `std::complex<float>` / `std::complex<double>`, NumPy's `complex64` / `complex128`): real
 * part first, then imaginary, interleaved element by element.
 */
#define TSR_DTYPE_MAP(X)                                                                           \
  X(f32, TSR_F32, 0, float, 4, "f4", 1, 0)                                                         \
  X(f64, TSR_F64, 1, double, 8, "f8", 1, 0)                                                        \
  X(i32, TSR_I32, 2, int32_t, 4, "i4", 0, 0)                                                       \
  X(i64, TSR_I64, 3, int64_t, 8, "i8", 0, 0)                                                       \
  X(c64, TSR_C64, 4, tsr_complex64, 8, "c8", 1, 1)                                                 \
  X(c128, TSR_C128, 5, tsr_complex128, 16, "c16", 1, 1)

#define TSR__DTYPE_ENUM(name, ENUM, value, c_type, size, npy, is_float, is_complex) ENUM = value,
/** Element types (the rows of ::TSR_DTYPE_MAP). */
typedef enum tsr_dtype { TSR_DTYPE_MAP(TSR__DTYPE_ENUM) } tsr_dtype;
#undef TSR__DTYPE_ENUM

/* One per row: TSR_NUM_DTYPES counts the rows. */
#define TSR__DTYPE_ONE(name, ENUM, value, c_type, size, npy, is_float, is_complex) +1

/** Number of dtypes (their values are 0 .. TSR_NUM_DTYPES - 1). */
#define TSR_NUM_DTYPES (0 TSR_DTYPE_MAP(TSR__DTYPE_ONE))

/**
 * Size in bytes of one element (4, 8 or 16).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_DTYPE for an unknown dtype.
 */
TSR_API tsr_status tsr_dtype_size(tsr_dtype dtype, size_t *bytes);

/** Name of a dtype ("f32", "f64", "i32", "i64", "c64", "c128"); "unknown" otherwise. Cannot fail.
 */
TSR_API const char *tsr_dtype_name(tsr_dtype dtype);

/**
 * The dtype named `text` ("f32", "f64", "i32", "i64", "c64", "c128": exactly the names
 * tsr_dtype_name() gives, case-sensitive).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_DTYPE when `text` names no dtype.
 */
TSR_API tsr_status tsr_dtype_parse(const char *text, tsr_dtype *dtype);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_DTYPES_H */
