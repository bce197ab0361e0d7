/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file array.h
 * @brief N-dimensional arrays: creation, views, transfers.
 *
 * A ::tsr_array is opaque and reference-counted: a buffer on one device plus a view (dtype,
 * ndim <= ::TSR_MAX_DIMS, shape, strides in elements, offset in elements). Arrays are
 * row-major (C order) when created; reshape, transpose and slice return views that share the
 * buffer. Every creating function returns a new reference the caller owns and must drop with
 * tsr_array_release(). Sizes are int64_t; every size product is overflow-checked.
 *
 * GPU work is asynchronous on the device's stream; tsr_array_read() synchronizes.
 */
#ifndef TESSERA_ARRAY_H
#define TESSERA_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "tessera/device.h"
#include "tessera/dtypes.h" /* tsr_dtype, its names and sizes */
#include "tessera/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest number of dimensions an array may have. */
#define TSR_MAX_DIMS 8

/** Opaque reference-counted array. */
typedef struct tsr_array tsr_array;

/** Allocation flags for tsr_empty_ex(). */
typedef enum tsr_alloc_flags {
  TSR_ALLOC_DEFAULT = 0,
  /** Managed (unified) memory, used only where the device reports concurrent managed access;
      elsewhere the allocation silently falls back to device memory. */
  TSR_ALLOC_MANAGED = 1
} tsr_alloc_flags;

/**
 * Description of an array, filled by tsr_array_info(). (Public types carry no `_t` suffix;
 * `tsr_array_info` is the function, hence `props`, as for tsr_device_props.)
 */
typedef struct tsr_array_props {
  tsr_dtype dtype;
  int ndim;
  int64_t shape[TSR_MAX_DIMS];   /**< entries [ndim, TSR_MAX_DIMS) are 1 */
  int64_t strides[TSR_MAX_DIMS]; /**< in elements, may be 0 (broadcast) or negative */
  int64_t offset;                /**< in elements, from the start of the buffer */
  int64_t size;                  /**< number of elements (product of shape; 1 for ndim 0) */
  tsr_device device;
  int contiguous; /**< 1 when the view is C-contiguous */
} tsr_array_props;

/** @deprecated The name of ::tsr_array_props in release 0.1; kept for source compatibility. */
typedef tsr_array_props tsr_array_info_t;

/**
 * A new uninitialized C-contiguous array of `shape[0] x ... x shape[ndim-1]` elements.
 * @param ndim 0..::TSR_MAX_DIMS (0 gives a scalar of one element).
 * @param shape `ndim` sizes >= 0 (may be NULL when ndim is 0).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (ndim out of range,
 *         negative size); ::TSR_ERR_OVERFLOW (element or byte count overflows);
 *         ::TSR_ERR_DTYPE; ::TSR_ERR_NO_DEVICE; ::TSR_ERR_OUT_OF_MEMORY.
 */
TSR_API tsr_status tsr_empty(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                             tsr_array **out);

/** As tsr_empty(), with ::tsr_alloc_flags. Same statuses. */
TSR_API tsr_status tsr_empty_ex(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                                unsigned flags, tsr_array **out);

/** A new array of zeros. Statuses as tsr_empty(). */
TSR_API tsr_status tsr_zeros(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                             tsr_array **out);

/** A new array with every element equal to `value` (converted to dtype as C converts; for a
    complex dtype the real part is `value` and the imaginary part 0). Statuses as tsr_empty(). */
TSR_API tsr_status tsr_full(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                            double value, tsr_array **out);

/**
 * A new array with every element equal to the complex `value` (`value.re + value.im i`,
 * rounded to the dtype's parts). For a real or integer dtype `value.im` must be 0 and the
 * result is tsr_full() of `value.re`.
 * @return statuses as tsr_empty(); ::TSR_ERR_INVALID_ARGUMENT (a nonzero imaginary part for a
 *         real dtype, naming the value and the dtype).
 */
TSR_API tsr_status tsr_full_complex(int ndim, const int64_t *shape, tsr_dtype dtype,
                                    tsr_device device, tsr_complex128 value, tsr_array **out);

/**
 * A new 1-D array start, start+step, ... of ceil((stop-start)/step) elements (NumPy arange).
 * Real and integer dtypes only (for complex values convert a real arange with tsr_astype()).
 * @return statuses as tsr_empty(), ::TSR_ERR_INVALID_ARGUMENT when step is 0 or not finite,
 *         and ::TSR_ERR_DTYPE for a complex dtype.
 */
TSR_API tsr_status tsr_arange(double start, double stop, double step, tsr_dtype dtype,
                              tsr_device device, tsr_array **out);

/**
 * A new array of uniform random numbers in [low, high) from Philox4x32-10 (Salmon et al.,
 * "Parallel random numbers: as easy as 1, 2, 3", SC 2011). Element i (C order) depends only on
 * (seed, i): the same seed gives the same values on every device. f32 uses 24 random bits,
 * f64 53 bits. Float dtypes only. A complex element i takes its real part from index 2i and
 * its imaginary part from index 2i+1 of its part dtype's stream (c64: f32's, c128: f64's), so
 * both parts lie in [low, high) and a complex array of n elements holds the values of the
 * real array of 2n elements of the same seed, on every device.
 * @return statuses as tsr_empty(); ::TSR_ERR_DTYPE for integer dtypes;
 *         ::TSR_ERR_INVALID_ARGUMENT when low >= high, either is not finite, high - low
 *         overflows, or (f32) either is beyond the f32 range.
 */
TSR_API tsr_status tsr_random_uniform(int ndim, const int64_t *shape, tsr_dtype dtype,
                                      tsr_device device, uint64_t seed, double low, double high,
                                      tsr_array **out);

/**
 * A new array of normal random numbers N(mean, stddev^2): Philox4x32-10 uniforms through the
 * Box-Muller transform. Same values for the same seed on every device, up to the last-bit
 * differences of each device's log/sin/cos. Float dtypes only; a complex element's real and
 * imaginary parts are the part dtype's values of indices 2i and 2i+1 (as tsr_random_uniform()),
 * each N(mean, stddev^2).
 * @return statuses as tsr_empty(); ::TSR_ERR_DTYPE; ::TSR_ERR_INVALID_ARGUMENT (stddev < 0
 *         or not finite).
 */
TSR_API tsr_status tsr_random_normal(int ndim, const int64_t *shape, tsr_dtype dtype,
                                     tsr_device device, uint64_t seed, double mean, double stddev,
                                     tsr_array **out);

/**
 * A new array holding a copy of C-contiguous host data (`size * dtype size` bytes read).
 * @return statuses as tsr_empty(); ::TSR_ERR_NULL_POINTER when `data` is NULL and size > 0.
 */
TSR_API tsr_status tsr_from_host(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                                 const void *data, tsr_array **out);

/**
 * A CPU array that views caller-owned host memory without copying it (zero-copy interop with
 * C and Fortran codes: the BLAS drop-in wraps its callers' column-major matrices this way).
 * Element (i0, ..., i{ndim-1}) is at `data + (i0*strides[0] + ...) * dtype size`, so a
 * column-major m x n matrix with leading dimension ld is shape {m, n}, strides {1, ld}.
 * Tessera never frees `data`: the caller keeps the memory alive, and does not free it, until
 * the last array sharing it (views and results of tsr_reshape/tsr_transpose/tsr_slice
 * included) has been released. Writing through the array (tsr_assign, tsr_gemm's C)
 * changes the caller's memory.
 * @param shape `ndim` sizes >= 0 (may be NULL when ndim is 0).
 * @param strides `ndim` strides in elements, any sign; 0 gives a broadcast view (read it
 *        only). NULL means C-contiguous.
 * @param data address of element (0, ..., 0), aligned to the dtype size; may be NULL only
 *        when the array has no elements.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (out, shape, or data); ::TSR_ERR_INVALID_ARGUMENT
 *         (ndim out of range, negative size, misaligned data); ::TSR_ERR_OVERFLOW (the
 *         element or byte extent overflows); ::TSR_ERR_DTYPE; ::TSR_ERR_OUT_OF_MEMORY
 *         (array header).
 */
TSR_API tsr_status tsr_from_host_view(int ndim, const int64_t *shape, const int64_t *strides,
                                      tsr_dtype dtype, void *data, tsr_array **out);

/** Adds a reference. @return ::TSR_OK; ::TSR_ERR_NULL_POINTER. */
TSR_API tsr_status tsr_array_retain(tsr_array *a);

/** Drops a reference; the buffer is freed with its last view. NULL is accepted (no-op).
    @return ::TSR_OK. */
TSR_API tsr_status tsr_array_release(tsr_array *a);

/** Describes an array. @return ::TSR_OK; ::TSR_ERR_NULL_POINTER. */
TSR_API tsr_status tsr_array_info(const tsr_array *a, tsr_array_props *info);

/**
 * Copies the array's elements, in C order, to host memory (synchronizes the device).
 * @param bytes size of `dst`; must equal size * dtype size.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (bytes differ);
 *         ::TSR_ERR_GPU; ::TSR_ERR_OUT_OF_MEMORY (staging).
 */
TSR_API tsr_status tsr_array_read(const tsr_array *a, void *dst, size_t bytes);

/**
 * Overwrites the array's elements from C-ordered host memory (works on strided views too).
 * @param bytes size of `src`; must equal size * dtype size.
 * @return as tsr_array_read(), and ::TSR_ERR_INVALID_ARGUMENT when `a` is a broadcast view
 *         (stride 0 on an axis of size > 1).
 */
TSR_API tsr_status tsr_array_write(tsr_array *a, const void *src, size_t bytes);

/**
 * A C-contiguous copy of `a` on `device` (a copy even when the device is the same).
 * @return statuses as tsr_empty(); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_array_to(const tsr_array *a, tsr_device device, tsr_array **out);

/** A C-contiguous copy of `a` on its device. Statuses as tsr_array_to(). */
TSR_API tsr_status tsr_copy(const tsr_array *a, tsr_array **out);

/** `a` itself (a new reference) when C-contiguous, else a C-contiguous copy.
    Statuses as tsr_array_to(). */
TSR_API tsr_status tsr_contiguous(const tsr_array *a, tsr_array **out);

/**
 * A C-contiguous copy of `a` converted to `dtype` (C conversion rules; float to integer
 * truncates toward zero, and out-of-range values saturate to the integer limits; NaN gives 0).
 * A real or integer array converts to a complex dtype with imaginary parts 0; c64 and c128
 * convert to each other part by part. Complex to a real or integer dtype is refused (NumPy
 * would drop the imaginary part with a warning): take tsr_real(), tsr_imag() or tsr_abs().
 * @return statuses as tsr_array_to(); ::TSR_ERR_DTYPE (unknown dtype, or complex to real,
 *         naming both dtypes).
 */
TSR_API tsr_status tsr_astype(const tsr_array *a, tsr_dtype dtype, tsr_array **out);

/**
 * The real part of `a` as a new C-contiguous array of its part dtype (f32 for c64, f64 for
 * c128); for a real or integer array, a C-contiguous copy (NumPy's `real`).
 * @return statuses as tsr_array_to().
 */
TSR_API tsr_status tsr_real(const tsr_array *a, tsr_array **out);

/**
 * The imaginary part of `a` as a new C-contiguous array of its part dtype; for a real or
 * integer array, zeros of its dtype (NumPy's `imag`).
 * @return statuses as tsr_array_to().
 */
TSR_API tsr_status tsr_imag(const tsr_array *a, tsr_array **out);

/**
 * Copies `src` into the existing array `dst`, broadcasting `src` to dst's shape and converting
 * the dtype as tsr_astype() does; both on the same device. `dst` may be any view but a broadcast
 * one; `src` may share memory with `dst` (it is then staged first).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_SHAPE; ::TSR_ERR_DEVICE_MISMATCH;
 *         ::TSR_ERR_DTYPE (a complex `src` into a real `dst`);
 *         ::TSR_ERR_INVALID_ARGUMENT (`dst` has stride 0 on an axis of size > 1);
 *         ::TSR_ERR_OUT_OF_MEMORY (staging an overlapping src); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_assign(tsr_array *dst, const tsr_array *src);

/**
 * A view with a new shape and the same number of elements. One entry may be -1 (inferred).
 * When the strides cannot express the new shape, the result is a contiguous copy (NumPy rule).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT; ::TSR_ERR_SHAPE
 *         (element counts differ); ::TSR_ERR_OVERFLOW; ::TSR_ERR_OUT_OF_MEMORY and ::TSR_ERR_GPU
 *         (when a copy is needed).
 */
TSR_API tsr_status tsr_reshape(const tsr_array *a, int ndim, const int64_t *shape, tsr_array **out);

/**
 * A view with permuted axes: result axis i is `a`'s axis perm[i]. `perm` NULL reverses the
 * axes (matrix transpose for 2-D). Negative entries count from the end.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (not a permutation);
 *         ::TSR_ERR_OUT_OF_MEMORY (array header).
 */
TSR_API tsr_status tsr_transpose(const tsr_array *a, const int *perm, tsr_array **out);

/**
 * A view `a[start:stop:step]` along one axis (NumPy basic slicing: negative start/stop count
 * from the end and are clipped; step may be negative but not 0). Use ::TSR_SLICE_END as
 * stop (or start for negative steps) for "to the end".
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (axis out of range,
 *         step 0); ::TSR_ERR_OVERFLOW (stride times step overflows int64);
 *         ::TSR_ERR_OUT_OF_MEMORY (array header).
 */
TSR_API tsr_status tsr_slice(const tsr_array *a, int axis, int64_t start, int64_t stop,
                             int64_t step, tsr_array **out);

/** "To the end" marker for tsr_slice() (INT64_MAX; for negative steps use -TSR_SLICE_END). */
#define TSR_SLICE_END INT64_MAX

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_ARRAY_H */
