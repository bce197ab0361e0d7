/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ops.h
 * @brief Elementwise binary and unary operators and reductions.
 *
 * Binary operators broadcast their operands by NumPy's rules (shapes aligned at the trailing
 * axis; a size-1 axis stretches) over any strides, and return a new C-contiguous array on the
 * operands' device. Both operands must have the same dtype and device (convert with
 * tsr_astype(), move with tsr_array_to()).
 *
 * Integer dtypes support add, sub, mul, maximum, minimum, neg, abs, relu, conj (integer
 * overflow wraps modulo 2^bits, as in NumPy) and every reduction; the other operators need a
 * float dtype and return ::TSR_ERR_DTYPE for integers.
 *
 * The complex dtypes (c64, c128) support add, sub, mul, div (C99 complex arithmetic with its
 * Annex G rules for infinities and NaN on the CPU), neg, conj, abs (whose result has the part
 * dtype: f32 for c64, f64 for c128, |x| = hypot(re, im) without overflow or underflow of the
 * squares), exp, log, sqrt, tanh (the principal values of C99's cexp, clog, csqrt, ctanh on
 * the CPU), sum and mean (each part reduced as the real dtype, f32 parts accumulating in
 * f64). Complex numbers have no order: maximum, minimum, relu, max, min and argmax, and also
 * pow and sigmoid, return ::TSR_ERR_DTYPE naming the operator and the dtype. A backend without
 * a complex kernel for an operator (a GPU build whose complex kernels are not there) returns
 * ::TSR_ERR_UNSUPPORTED naming the dtype.
 *
 * Each function lists the statuses it can return; every failure also records a message
 * (tsr_last_error()) that names the function and the offending values.
 */
#ifndef TESSERA_OPS_H
#define TESSERA_OPS_H

#include <limits.h>

#include "tessera/array.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Elementwise binary operators (same order as TSR__BINARY_OPS in src/core/opdefs.h). */
typedef enum tsr_binary_op {
  TSR_ADD = 0,     /**< x + y */
  TSR_SUB = 1,     /**< x - y */
  TSR_MUL = 2,     /**< x * y */
  TSR_DIV = 3,     /**< x / y (IEEE: x/0 is +-inf or NaN) */
  TSR_MAXIMUM = 4, /**< larger of x, y; NaN if either is NaN */
  TSR_MINIMUM = 5, /**< smaller of x, y; NaN if either is NaN */
  TSR_POW = 6      /**< x raised to y (C pow) */
} tsr_binary_op;
#define TSR_NUM_BINARY_OPS 7

/** Elementwise unary operators (same order as TSR__UNARY_OPS in src/core/opdefs.h). */
typedef enum tsr_unary_op {
  TSR_NEG = 0,     /**< -x */
  TSR_ABS = 1,     /**< |x| */
  TSR_EXP = 2,     /**< e^x */
  TSR_LOG = 3,     /**< natural logarithm */
  TSR_SQRT = 4,    /**< square root */
  TSR_TANH = 5,    /**< hyperbolic tangent */
  TSR_SIGMOID = 6, /**< 1 / (1 + e^-x) */
  TSR_RELU = 7,    /**< max(x, 0) */
  TSR_CONJ = 8     /**< complex conjugate re - im i; the identity for real and integer dtypes */
} tsr_unary_op;
#define TSR_NUM_UNARY_OPS 9

/** Reductions. */
typedef enum tsr_reduce_op {
  TSR_SUM = 0,   /**< sum; dtype kept (f32 sums, and c64 parts, accumulate in f64) */
  TSR_MEAN = 1,  /**< arithmetic mean; f64 for integer input; NaN over an empty axis */
  TSR_MAX = 2,   /**< maximum (NaN propagates); not for complex dtypes */
  TSR_MIN = 3,   /**< minimum (NaN propagates); not for complex dtypes */
  TSR_ARGMAX = 4 /**< index (i64) of the first maximum along the axis, or in C order over all;
                      not for complex dtypes */
} tsr_reduce_op;
#define TSR_NUM_REDUCE_OPS 5

/** Reduce over all axes (the result has ndim 0, or all size-1 axes with keepdims). */
#define TSR_AXIS_ALL INT_MIN

/**
 * out = op(a, b) elementwise with broadcasting. Integer dtypes are accepted by add, sub, mul,
 * maximum and minimum.
 * @return ::TSR_OK; ::TSR_ERR_INVALID_ARGUMENT (op is not a ::tsr_binary_op);
 * ::TSR_ERR_NULL_POINTER (a, b or out);
 *         ::TSR_ERR_DEVICE_MISMATCH (a and b on different devices); ::TSR_ERR_DTYPE (a and b
 *         of different dtypes, or an integer dtype for div or pow); ::TSR_ERR_SHAPE (the shapes do
 * not broadcast);
 *         ::TSR_ERR_OVERFLOW (the broadcast result has more elements than int64 counts);
 *         ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the device's backend lacks the
 *         operator); ::TSR_ERR_GPU (a GPU runtime failure).
 */
TSR_API tsr_status tsr_binary(tsr_binary_op op, const tsr_array *a, const tsr_array *b,
                              tsr_array **out);
/**
 * out = a + b (broadcasting).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a, b or out);
 *         ::TSR_ERR_DEVICE_MISMATCH (a and b on different devices); ::TSR_ERR_DTYPE (a and b
 *         of different dtypes); ::TSR_ERR_SHAPE (the shapes do not broadcast);
 *         ::TSR_ERR_OVERFLOW (the broadcast result has more elements than int64 counts);
 *         ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the device's backend lacks the
 *         operator); ::TSR_ERR_GPU (a GPU runtime failure).
 */
TSR_API tsr_status tsr_add(const tsr_array *a, const tsr_array *b, tsr_array **out);
/**
 * out = a - b (broadcasting).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a, b or out);
 *         ::TSR_ERR_DEVICE_MISMATCH (a and b on different devices); ::TSR_ERR_DTYPE (a and b
 *         of different dtypes); ::TSR_ERR_SHAPE (the shapes do not broadcast);
 *         ::TSR_ERR_OVERFLOW (the broadcast result has more elements than int64 counts);
 *         ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the device's backend lacks the
 *         operator); ::TSR_ERR_GPU (a GPU runtime failure).
 */
TSR_API tsr_status tsr_sub(const tsr_array *a, const tsr_array *b, tsr_array **out);
/**
 * out = a * b elementwise (broadcasting).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a, b or out);
 *         ::TSR_ERR_DEVICE_MISMATCH (a and b on different devices); ::TSR_ERR_DTYPE (a and b
 *         of different dtypes); ::TSR_ERR_SHAPE (the shapes do not broadcast);
 *         ::TSR_ERR_OVERFLOW (the broadcast result has more elements than int64 counts);
 *         ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the device's backend lacks the
 *         operator); ::TSR_ERR_GPU (a GPU runtime failure).
 */
TSR_API tsr_status tsr_mul(const tsr_array *a, const tsr_array *b, tsr_array **out);
/**
 * out = a / b elementwise (broadcasting; float dtypes).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a, b or out);
 *         ::TSR_ERR_DEVICE_MISMATCH (a and b on different devices); ::TSR_ERR_DTYPE (a and b
 *         of different dtypes, or an integer dtype); ::TSR_ERR_SHAPE (the shapes do not broadcast);
 *         ::TSR_ERR_OVERFLOW (the broadcast result has more elements than int64 counts);
 *         ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the device's backend lacks the
 *         operator); ::TSR_ERR_GPU (a GPU runtime failure).
 */
TSR_API tsr_status tsr_div(const tsr_array *a, const tsr_array *b, tsr_array **out);
/**
 * out = maximum(a, b) elementwise (broadcasting; NaN if either is NaN).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a, b or out);
 *         ::TSR_ERR_DEVICE_MISMATCH (a and b on different devices); ::TSR_ERR_DTYPE (a and b
 *         of different dtypes); ::TSR_ERR_SHAPE (the shapes do not broadcast);
 *         ::TSR_ERR_OVERFLOW (the broadcast result has more elements than int64 counts);
 *         ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the device's backend lacks the
 *         operator); ::TSR_ERR_GPU (a GPU runtime failure).
 */
TSR_API tsr_status tsr_maximum(const tsr_array *a, const tsr_array *b, tsr_array **out);
/**
 * out = minimum(a, b) elementwise (broadcasting; NaN if either is NaN).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a, b or out);
 *         ::TSR_ERR_DEVICE_MISMATCH (a and b on different devices); ::TSR_ERR_DTYPE (a and b
 *         of different dtypes); ::TSR_ERR_SHAPE (the shapes do not broadcast);
 *         ::TSR_ERR_OVERFLOW (the broadcast result has more elements than int64 counts);
 *         ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the device's backend lacks the
 *         operator); ::TSR_ERR_GPU (a GPU runtime failure).
 */
TSR_API tsr_status tsr_minimum(const tsr_array *a, const tsr_array *b, tsr_array **out);
/**
 * out = pow(a, b) elementwise (broadcasting; float dtypes).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a, b or out);
 *         ::TSR_ERR_DEVICE_MISMATCH (a and b on different devices); ::TSR_ERR_DTYPE (a and b
 *         of different dtypes, or an integer dtype); ::TSR_ERR_SHAPE (the shapes do not broadcast);
 *         ::TSR_ERR_OVERFLOW (the broadcast result has more elements than int64 counts);
 *         ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the device's backend lacks the
 *         operator); ::TSR_ERR_GPU (a GPU runtime failure).
 */
TSR_API tsr_status tsr_pow(const tsr_array *a, const tsr_array *b, tsr_array **out);

/**
 * out = op(a) elementwise, same shape and dtype as `a` (abs of a complex array: its part
 * dtype). Integer dtypes are accepted by neg, abs, relu and conj; complex ones as the file's
 * opening comment lists.
 * @return ::TSR_OK; ::TSR_ERR_INVALID_ARGUMENT (op is not a ::tsr_unary_op); ::TSR_ERR_NULL_POINTER
 * (a or out);
 *         ::TSR_ERR_DTYPE (an integer dtype for an operator that needs f32 or f64);
 * ::TSR_ERR_OUT_OF_MEMORY;
 *         ::TSR_ERR_UNSUPPORTED (the device's backend lacks the operator); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_unary(tsr_unary_op op, const tsr_array *a, tsr_array **out);
/**
 * out = -a (integers wrap: -INT_MIN is INT_MIN).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out); ::TSR_ERR_OUT_OF_MEMORY;
 *         ::TSR_ERR_UNSUPPORTED (the device's backend lacks the operator); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_neg(const tsr_array *a, tsr_array **out);
/**
 * out = |a| (integers wrap: |INT_MIN| is INT_MIN). For a complex array the modulus
 * hypot(re, im) as the part dtype (f32 for c64, f64 for c128).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out); ::TSR_ERR_OUT_OF_MEMORY;
 *         ::TSR_ERR_UNSUPPORTED (the device's backend lacks the operator); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_abs(const tsr_array *a, tsr_array **out);
/**
 * out = exp(a) (float dtypes).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out);
 *         ::TSR_ERR_DTYPE (an integer dtype: the operator needs f32 or f64);
 * ::TSR_ERR_OUT_OF_MEMORY;
 *         ::TSR_ERR_UNSUPPORTED (the device's backend lacks the operator); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_exp(const tsr_array *a, tsr_array **out);
/**
 * out = log(a) (float dtypes).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out);
 *         ::TSR_ERR_DTYPE (an integer dtype: the operator needs f32 or f64);
 * ::TSR_ERR_OUT_OF_MEMORY;
 *         ::TSR_ERR_UNSUPPORTED (the device's backend lacks the operator); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_log(const tsr_array *a, tsr_array **out);
/**
 * out = sqrt(a) (float dtypes).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out);
 *         ::TSR_ERR_DTYPE (an integer dtype: the operator needs f32 or f64);
 * ::TSR_ERR_OUT_OF_MEMORY;
 *         ::TSR_ERR_UNSUPPORTED (the device's backend lacks the operator); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_sqrt(const tsr_array *a, tsr_array **out);
/**
 * out = tanh(a) (float dtypes).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out);
 *         ::TSR_ERR_DTYPE (an integer dtype: the operator needs f32 or f64);
 * ::TSR_ERR_OUT_OF_MEMORY;
 *         ::TSR_ERR_UNSUPPORTED (the device's backend lacks the operator); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_tanh(const tsr_array *a, tsr_array **out);
/**
 * out = 1 / (1 + exp(-a)) (float dtypes).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out);
 *         ::TSR_ERR_DTYPE (an integer dtype: the operator needs f32 or f64);
 * ::TSR_ERR_OUT_OF_MEMORY;
 *         ::TSR_ERR_UNSUPPORTED (the device's backend lacks the operator); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_sigmoid(const tsr_array *a, tsr_array **out);
/**
 * out = max(a, 0) (real and integer dtypes).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out); ::TSR_ERR_DTYPE (a complex dtype);
 *         ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the device's backend lacks the
 *         operator); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_relu(const tsr_array *a, tsr_array **out);
/**
 * out = conj(a): the complex conjugate (re, -im) of every element, same shape and dtype; for a
 * real or integer dtype a copy of `a` (NumPy's conjugate).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out); ::TSR_ERR_OUT_OF_MEMORY;
 *         ::TSR_ERR_UNSUPPORTED (the device's backend lacks the operator); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_conj(const tsr_array *a, tsr_array **out);

/**
 * Reduces `a` along `axis` (negative counts from the end) or over all axes
 * (::TSR_AXIS_ALL). The result drops the axis, or keeps it with size 1 when `keepdims` is
 * non-zero. Result dtypes: as `a` for sum/max/min; mean gives f64 for integer input;
 * argmax gives i64.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out); ::TSR_ERR_INVALID_ARGUMENT (op is not
 *         a ::tsr_reduce_op, axis out of range for a's ndim, or a zero-length axis / empty
 *         array for max, min and argmax, which have no value there); ::TSR_ERR_DTYPE (max,
 *         min or argmax of a complex dtype); ::TSR_ERR_OUT_OF_MEMORY;
 *         ::TSR_ERR_UNSUPPORTED (the device's backend lacks reductions); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_reduce(tsr_reduce_op op, const tsr_array *a, int axis, int keepdims,
                              tsr_array **out);
/**
 * Sum along `axis` or over all (::TSR_AXIS_ALL); 0 over an empty axis.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out); ::TSR_ERR_INVALID_ARGUMENT (axis
 *         out of range for a's ndim); ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the
 *         device's backend lacks reductions); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_sum(const tsr_array *a, int axis, int keepdims, tsr_array **out);
/**
 * Mean along `axis` or over all (f64 for integer input); NaN over an empty axis.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out); ::TSR_ERR_INVALID_ARGUMENT (axis
 *         out of range for a's ndim); ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the
 *         device's backend lacks reductions); ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_mean(const tsr_array *a, int axis, int keepdims, tsr_array **out);
/**
 * Maximum along `axis` or over all (NaN propagates).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out); ::TSR_ERR_INVALID_ARGUMENT (axis
 *         out of range for a's ndim, or a zero-length axis / empty array, which has no maximum);
 * ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the device's backend lacks reductions);
 * ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_max(const tsr_array *a, int axis, int keepdims, tsr_array **out);
/**
 * Minimum along `axis` or over all (NaN propagates).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out); ::TSR_ERR_INVALID_ARGUMENT (axis
 *         out of range for a's ndim, or a zero-length axis / empty array, which has no minimum);
 * ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the device's backend lacks reductions);
 * ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_min(const tsr_array *a, int axis, int keepdims, tsr_array **out);
/**
 * Index of the first maximum along `axis`, or the flat C-order index over all (i64 result).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (a or out); ::TSR_ERR_INVALID_ARGUMENT (axis
 *         out of range for a's ndim, or a zero-length axis / empty array, which has no maximum);
 * ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_UNSUPPORTED (the device's backend lacks reductions);
 * ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_argmax(const tsr_array *a, int axis, int keepdims, tsr_array **out);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_OPS_H */
