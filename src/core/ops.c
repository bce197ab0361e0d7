/* SPDX-License-Identifier: BSD-3-Clause */
/* Elementwise operators and reductions: validation, broadcasting and result allocation once
   here, then one call into the backend table of the operands' device. */

#include "core/internal.h"
#include "core/opdefs.h"

#define TSR__OP_NAME(ENUM, name, INT, expr) [ENUM] = #name,
static const char *const tsr__binary_names[TSR_NUM_BINARY_OPS] = {TSR__BINARY_OPS(TSR__OP_NAME)};
static const char *const tsr__unary_names[TSR_NUM_UNARY_OPS] = {TSR__UNARY_OPS(TSR__OP_NAME)};
#undef TSR__OP_NAME
static const int tsr__binary_int_ok[TSR_NUM_BINARY_OPS] = {TSR__BINARY_OPS(TSR__OP_INT_OK)};
static const int tsr__unary_int_ok[TSR_NUM_UNARY_OPS] = {TSR__UNARY_OPS(TSR__OP_INT_OK)};
static const int tsr__binary_complex_ok[TSR_NUM_BINARY_OPS] = {TSR__BINARY_OPS(TSR__OP_COMPLEX_OK)};
static const int tsr__unary_complex_ok[TSR_NUM_UNARY_OPS] = {TSR__UNARY_OPS(TSR__OP_COMPLEX_OK)};

/* TSR_ERR_DTYPE for an operator that complex numbers do not have. */
static tsr_status tsr__not_complex(const char *kind, const char *name, tsr_dtype dtype) {
  return tsr__set_error(TSR_ERR_DTYPE, __func__,
                        "%s %s is not defined for the complex dtype %s (complex numbers have no "
                        "order; the complex operators are add, sub, mul, div, neg, conj, abs, "
                        "exp, log, sqrt, tanh, sum, mean)",
                        kind, name, tsr_dtype_name(dtype));
}

/* ---------------------------------------------------------------- binary -------------- */

static tsr_status tsr__binary(tsr_binary_op op, const tsr_array *a, const tsr_array *b,
                              tsr_array **out) {
  if (out == NULL) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "out is NULL");
  *out = NULL;
  if (a == NULL || b == NULL)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", a == NULL ? "a" : "b");
  if ((unsigned)op >= TSR_NUM_BINARY_OPS)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "unknown binary operator %d",
                          (int)op);
  tsr_device dev = a->buffer->device;
  char d1[32], d2[32];
  if (!tsr_device_equal(dev, b->buffer->device))
    return tsr__set_error(TSR_ERR_DEVICE_MISMATCH, __func__, "a is on %s, b is on %s",
                          tsr__device_str(dev, d1, sizeof d1),
                          tsr__device_str(b->buffer->device, d2, sizeof d2));
  if (a->dtype != b->dtype)
    return tsr__set_error(TSR_ERR_DTYPE, __func__, "dtypes differ: a is %s, b is %s",
                          tsr_dtype_name(a->dtype), tsr_dtype_name(b->dtype));
  if (!tsr__dtype_is_float(a->dtype) && !tsr__binary_int_ok[op])
    return tsr__set_error(TSR_ERR_DTYPE, __func__, "operator %s needs a float dtype, got %s",
                          tsr__binary_names[op], tsr_dtype_name(a->dtype));
  if (tsr__dtype_is_complex(a->dtype) && !tsr__binary_complex_ok[op])
    return tsr__not_complex("operator", tsr__binary_names[op], a->dtype);
  int n;
  int64_t shape[TSR_MAX_DIMS];
  TSR_CALL(tsr__broadcast_shapes(a->ndim, a->shape, b->ndim, b->shape, &n, shape));
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(dev, &ops));
  tsr_array *c = NULL;
  TSR_CALL(tsr__array_alloc(n, shape, a->dtype, dev, 0, &c));
  if (tsr__array_size(c) > 0) {
    tsr__view cv = tsr__view_of(c);
    tsr__view av = tsr__view_broadcast(a, n, shape), bv = tsr__view_broadcast(b, n, shape);
    tsr_status st = ops->binary(dev, op, &cv, &av, &bv);
    if (st != TSR_OK) {
      tsr_array_release(c);
      return st;
    }
  }
  *out = c;
  return TSR_OK;
}

tsr_status tsr_binary(tsr_binary_op op, const tsr_array *a, const tsr_array *b, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__binary(op, a, b, out);
}
tsr_status tsr_add(const tsr_array *a, const tsr_array *b, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__binary(TSR_ADD, a, b, out);
}
tsr_status tsr_sub(const tsr_array *a, const tsr_array *b, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__binary(TSR_SUB, a, b, out);
}
tsr_status tsr_mul(const tsr_array *a, const tsr_array *b, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__binary(TSR_MUL, a, b, out);
}
tsr_status tsr_div(const tsr_array *a, const tsr_array *b, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__binary(TSR_DIV, a, b, out);
}
tsr_status tsr_maximum(const tsr_array *a, const tsr_array *b, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__binary(TSR_MAXIMUM, a, b, out);
}
tsr_status tsr_minimum(const tsr_array *a, const tsr_array *b, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__binary(TSR_MINIMUM, a, b, out);
}
tsr_status tsr_pow(const tsr_array *a, const tsr_array *b, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__binary(TSR_POW, a, b, out);
}

/* ---------------------------------------------------------------- unary --------------- */

static tsr_status tsr__unary(tsr_unary_op op, const tsr_array *a, tsr_array **out) {
  if (out == NULL) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "out is NULL");
  *out = NULL;
  if (a == NULL) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "a is NULL");
  if ((unsigned)op >= TSR_NUM_UNARY_OPS)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "unknown unary operator %d", (int)op);
  if (!tsr__dtype_is_float(a->dtype) && !tsr__unary_int_ok[op])
    return tsr__set_error(TSR_ERR_DTYPE, __func__, "operator %s needs a float dtype, got %s",
                          tsr__unary_names[op], tsr_dtype_name(a->dtype));
  if (tsr__dtype_is_complex(a->dtype) && !tsr__unary_complex_ok[op])
    return tsr__not_complex("operator", tsr__unary_names[op], a->dtype);
  tsr_device dev = a->buffer->device;
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(dev, &ops));
  tsr_array *c = NULL;
  /* |x| of a complex array is real: the backend's unary gets an out of the part dtype. */
  const tsr_dtype rtype = op == TSR_ABS ? tsr__dtype_part(a->dtype) : a->dtype;
  TSR_CALL(tsr__array_alloc(a->ndim, a->shape, rtype, dev, 0, &c));
  if (tsr__array_size(c) > 0) {
    tsr__view cv = tsr__view_of(c), av = tsr__view_of(a);
    tsr_status st = ops->unary(dev, op, &cv, &av);
    if (st != TSR_OK) {
      tsr_array_release(c);
      return st;
    }
  }
  *out = c;
  return TSR_OK;
}

tsr_status tsr_unary(tsr_unary_op op, const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__unary(op, a, out);
}
tsr_status tsr_neg(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__unary(TSR_NEG, a, out);
}
tsr_status tsr_abs(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__unary(TSR_ABS, a, out);
}
tsr_status tsr_exp(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__unary(TSR_EXP, a, out);
}
tsr_status tsr_log(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__unary(TSR_LOG, a, out);
}
tsr_status tsr_sqrt(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__unary(TSR_SQRT, a, out);
}
tsr_status tsr_tanh(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__unary(TSR_TANH, a, out);
}
tsr_status tsr_sigmoid(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__unary(TSR_SIGMOID, a, out);
}
tsr_status tsr_relu(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__unary(TSR_RELU, a, out);
}
tsr_status tsr_conj(const tsr_array *a, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__unary(TSR_CONJ, a, out);
}

/* ---------------------------------------------------------------- reductions ---------- */

static tsr_status tsr__reduce(tsr_reduce_op op, const tsr_array *a, int axis, int keepdims,
                              tsr_array **out) {
  if (out == NULL) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "out is NULL");
  *out = NULL;
  if (a == NULL) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "a is NULL");
  if ((unsigned)op >= TSR_NUM_REDUCE_OPS)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "unknown reduction %d", (int)op);
  if (tsr__dtype_is_complex(a->dtype) && op != TSR_SUM && op != TSR_MEAN)
    return tsr__not_complex("reduction",
                            op == TSR_MAX   ? "max"
                            : op == TSR_MIN ? "min"
                                            : "argmax",
                            a->dtype);
  int nd = a->ndim;
  bool all = axis == TSR_AXIS_ALL;
  int ax = all ? 0 : (axis < 0 ? axis + nd : axis);
  if (!all && (ax < 0 || ax >= nd))
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "axis %d is out of range for a %d-D array", axis, nd);
  int64_t size = tsr__array_size(a);
  int64_t len = all ? size : a->shape[ax];
  char s[128];
  if (len == 0 && (op == TSR_MAX || op == TSR_MIN || op == TSR_ARGMAX))
    return tsr__set_error(
        TSR_ERR_INVALID_ARGUMENT, __func__, "zero-size array has no %s (shape %s)",
        op == TSR_MIN ? "minimum" : "maximum", tsr__shape_str(nd, a->shape, s, sizeof s));
  tsr_dtype rtype = a->dtype;
  if (op == TSR_MEAN && !tsr__dtype_is_float(a->dtype)) rtype = TSR_F64;
  if (op == TSR_ARGMAX) rtype = TSR_I64;

  /* Result shape: the reduced axes dropped, or kept with size 1. */
  int rn = 0;
  int64_t rshape[TSR_MAX_DIMS];
  for (int i = 0; i < nd; ++i) {
    bool reduced = all || i == ax;
    if (!reduced)
      rshape[rn++] = a->shape[i];
    else if (keepdims)
      rshape[rn++] = 1;
  }

  tsr_device dev = a->buffer->device;
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(dev, &ops));
  tsr_array *r = NULL;
  TSR_CALL(tsr__array_alloc(rn, rshape, rtype, dev, 0, &r));
  if (tsr__array_size(r) == 0) {
    *out = r;
    return TSR_OK;
  }

  /* What the backend sees: the result without kept axes (same memory, contiguous) and the
     input, flattened to 1-D for a reduce-all. */
  tsr__view rv = tsr__view_of(r);
  rv.ndim = 0;
  for (int i = 0; i < nd; ++i)
    if (!(all || i == ax)) rv.shape[rv.ndim++] = a->shape[i];
  for (int i = rv.ndim; i < TSR_MAX_DIMS; ++i)
    rv.shape[i] = 1;
  tsr__contiguous_strides(rv.ndim, rv.shape, rv.strides);

  tsr_status st = TSR_OK;
  tsr_array *src = NULL;
  if (all) {
    st = tsr__array_contiguous(a, &src);
    if (st != TSR_OK) {
      tsr_array_release(r);
      return st;
    }
  }
  tsr__view av;
  if (all) {
    av = tsr__view_of(src);
    av.ndim = 1;
    av.shape[0] = size;
    av.strides[0] = 1;
    for (int i = 1; i < TSR_MAX_DIMS; ++i) {
      av.shape[i] = 1;
      av.strides[i] = 0;
    }
  } else {
    av = tsr__view_of(a);
  }
  st = ops->reduce(dev, op, &rv, &av, ax);
  tsr_array_release(src);
  if (st != TSR_OK) {
    tsr_array_release(r);
    return st;
  }
  *out = r;
  return TSR_OK;
}

tsr_status tsr_reduce(tsr_reduce_op op, const tsr_array *a, int axis, int keepdims,
                      tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__reduce(op, a, axis, keepdims, out);
}
tsr_status tsr_sum(const tsr_array *a, int axis, int keepdims, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__reduce(TSR_SUM, a, axis, keepdims, out);
}
tsr_status tsr_mean(const tsr_array *a, int axis, int keepdims, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__reduce(TSR_MEAN, a, axis, keepdims, out);
}
tsr_status tsr_max(const tsr_array *a, int axis, int keepdims, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__reduce(TSR_MAX, a, axis, keepdims, out);
}
tsr_status tsr_min(const tsr_array *a, int axis, int keepdims, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__reduce(TSR_MIN, a, axis, keepdims, out);
}
tsr_status tsr_argmax(const tsr_array *a, int axis, int keepdims, tsr_array **out) {
  TSR_API_ENTRY();
  return tsr__reduce(TSR_ARGMAX, a, axis, keepdims, out);
}
