/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Elementwise binary and unary operators of the CPU backend: the scalar expressions of
 * core/opdefs.h expanded into strided loops for every dtype (elementwise_impl.h).
 * <tgmath.h> makes exp(x), pow(x, y)... the float functions for float operands.
 */
#include <tgmath.h>

#include "core/opdefs.h"
#include "omp/omp_internal.h"

/* `omp simd` is a request: loops that call scalar libm functions stay scalar, and clang
   would warn about each of them. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

/* |x| for every dtype; integer abs(INT_MIN) wraps to INT_MIN (as NumPy) instead of
   overflowing. */
static inline float tsr__abs_f32(float x) {
  return fabsf(x);
}
static inline double tsr__abs_f64(double x) {
  return (fabs)(x);
}
static inline int32_t tsr__abs_i32(int32_t x) {
  return x < 0 ? (int32_t)(0u - (uint32_t)x) : x;
}
static inline int64_t tsr__abs_i64(int64_t x) {
  return x < 0 ? (int64_t)(UINT64_C(0) - (uint64_t)x) : x;
}
#define TSR__ABS(x)                                                                                \
  _Generic((x), float                                                                              \
           : tsr__abs_f32, double                                                                  \
           : tsr__abs_f64, int32_t                                                                 \
           : tsr__abs_i32, int64_t                                                                 \
           : tsr__abs_i64)(x)

#define TSR__EW_T float
#define TSR__EW_U float
#define TSR__EW_SFX f32
#define TSR__EW_CPLX 0
#define TSR__EW_INT 0
#include "omp/elementwise_impl.h"

#define TSR__EW_T double
#define TSR__EW_U double
#define TSR__EW_SFX f64
#define TSR__EW_CPLX 0
#define TSR__EW_INT 0
#include "omp/elementwise_impl.h"

/* x != x in the NaN-aware maximum/minimum is always false for integers, as intended. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtautological-compare"
#endif

#define TSR__EW_T int32_t
#define TSR__EW_U uint32_t
#define TSR__EW_SFX i32
#define TSR__EW_CPLX 0
#define TSR__EW_INT 1
#include "omp/elementwise_impl.h"

#define TSR__EW_T int64_t
#define TSR__EW_U uint64_t
#define TSR__EW_SFX i64
#define TSR__EW_CPLX 0
#define TSR__EW_INT 1
#include "omp/elementwise_impl.h"

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* The complex dtypes: C99 `_Complex` arithmetic (Annex G: the library's multiplication and
   division keep infinities and NaN as the standard says) and <complex.h>'s functions through
   <tgmath.h>; tsr_complex64/128 have the same layout. Unary operators other than abs (a real
   result, below) as TSR__OP_COMPLEX says; each operator's complex expression: */
#define TSR__OMP_CPLX_UN(name) TSR__OMP_CAT(TSR__OMP_CPLX_UN_, name)
#define TSR__OMP_CPLX_UN_neg TSR__OP_COMPLEX_neg
#define TSR__OMP_CPLX_UN_abs 0
#define TSR__OMP_CPLX_UN_exp TSR__OP_COMPLEX_exp
#define TSR__OMP_CPLX_UN_log TSR__OP_COMPLEX_log
#define TSR__OMP_CPLX_UN_sqrt TSR__OP_COMPLEX_sqrt
#define TSR__OMP_CPLX_UN_tanh TSR__OP_COMPLEX_tanh
#define TSR__OMP_CPLX_UN_sigmoid TSR__OP_COMPLEX_sigmoid
#define TSR__OMP_CPLX_UN_relu TSR__OP_COMPLEX_relu
#define TSR__OMP_CPLX_UN_conj TSR__OP_COMPLEX_conj
#define TSR__OMP_CEXPR_add(e) e
#define TSR__OMP_CEXPR_sub(e) e
#define TSR__OMP_CEXPR_mul(e) e
#define TSR__OMP_CEXPR_div(e) e
#define TSR__OMP_CEXPR_neg(e) e
#define TSR__OMP_CEXPR_exp(e) e
#define TSR__OMP_CEXPR_log(e) e
#define TSR__OMP_CEXPR_sqrt(e) e
#define TSR__OMP_CEXPR_tanh(e) e
#define TSR__OMP_CEXPR_conj(e) conj(x)

#define TSR__EW_T float _Complex
#define TSR__EW_U float _Complex
#define TSR__EW_SFX c64
#define TSR__EW_INT 0
#define TSR__EW_CPLX 1
#include "omp/elementwise_impl.h"

#define TSR__EW_T double _Complex
#define TSR__EW_U double _Complex
#define TSR__EW_SFX c128
#define TSR__EW_INT 0
#define TSR__EW_CPLX 1
#include "omp/elementwise_impl.h"

/* |x| of a complex array into its part dtype: cabs, hypot's semantics (no overflow or
   underflow of the squares; an infinite part gives +inf even beside a NaN). */
#define TSR__OMP_CABS_KERNEL(SFX, CT, RT, FN)                                                      \
  static void tsr__unary_cabs_##SFX(int64_t n, char *const p[], const int64_t s[],                 \
                                    const void *param) {                                           \
    (void)param;                                                                                   \
    RT *o = (RT *)p[0];                                                                            \
    const CT *a = (const CT *)p[1];                                                                \
    const int64_t so = s[0], sa = s[1];                                                            \
    for (int64_t i = 0; i < n; i++)                                                                \
      o[i * so] = FN(a[i * sa]);                                                                   \
  }
TSR__OMP_CABS_KERNEL(c64, float _Complex, float, cabsf)
TSR__OMP_CABS_KERNEL(c128, double _Complex, double, cabs)

/* Dispatch tables [op][dtype]; NULL where the operator does not take the dtype. */
#define TSR__OMP_INT_ONLY_1(fn) fn
#define TSR__OMP_INT_ONLY_0(fn) NULL
#define TSR__OMP_BIN_ENTRY(ENUM, name, INT, expr)                                                  \
  [ENUM] = {[TSR_F32] = tsr__binary_##name##_f32,                                                  \
            [TSR_F64] = tsr__binary_##name##_f64,                                                  \
            [TSR_I32] = TSR__OMP_INT_ONLY_##INT(tsr__binary_##name##_i32),                         \
            [TSR_I64] = TSR__OMP_INT_ONLY_##INT(tsr__binary_##name##_i64),                         \
            [TSR_C64] =                                                                            \
                TSR__OMP_CAT(TSR__OMP_INT_ONLY_, TSR__OP_COMPLEX(name))(tsr__binary_##name##_c64), \
            [TSR_C128] = TSR__OMP_CAT(TSR__OMP_INT_ONLY_,                                          \
                                      TSR__OP_COMPLEX(name))(tsr__binary_##name##_c128)},
#define TSR__OMP_UN_ENTRY(ENUM, name, INT, expr)                                                   \
  [ENUM] = {[TSR_F32] = tsr__unary_##name##_f32,                                                   \
            [TSR_F64] = tsr__unary_##name##_f64,                                                   \
            [TSR_I32] = TSR__OMP_INT_ONLY_##INT(tsr__unary_##name##_i32),                          \
            [TSR_I64] = TSR__OMP_INT_ONLY_##INT(tsr__unary_##name##_i64),                          \
            [TSR_C64] =                                                                            \
                TSR__OMP_CAT(TSR__OMP_INT_ONLY_, TSR__OMP_CPLX_UN(name))(tsr__unary_##name##_c64), \
            [TSR_C128] = TSR__OMP_CAT(TSR__OMP_INT_ONLY_,                                          \
                                      TSR__OMP_CPLX_UN(name))(tsr__unary_##name##_c128)},

static const tsr__omp_kernel binary_kernels[TSR_NUM_BINARY_OPS][TSR_NUM_DTYPES] = {
    TSR__BINARY_OPS(TSR__OMP_BIN_ENTRY)};
static const tsr__omp_kernel unary_kernels[TSR_NUM_UNARY_OPS][TSR_NUM_DTYPES] = {
    TSR__UNARY_OPS(TSR__OMP_UN_ENTRY)};

/* Relative cost per element, so that transcendental operators go parallel on smaller
   arrays than memory-bound ones. */
static int64_t tsr__binary_cost(tsr_binary_op op) {
  return op == TSR_POW ? 16 : 1;
}
static int64_t tsr__unary_cost(tsr_unary_op op) {
  return op == TSR_EXP || op == TSR_LOG || op == TSR_TANH || op == TSR_SIGMOID ? 16 : 1;
}

tsr_status tsr__omp_binary(tsr_device dev, tsr_binary_op op, const tsr__view *out,
                           const tsr__view *a, const tsr__view *b) {
  (void)dev;
  TSR_CHECK((unsigned)op < TSR_NUM_BINARY_OPS && (unsigned)out->dtype < TSR_NUM_DTYPES &&
                binary_kernels[op][out->dtype] != NULL,
            TSR_ERR_UNSUPPORTED, "binary operator %d has no CPU kernel for dtype %s", (int)op,
            tsr_dtype_name(out->dtype));
  const int64_t *strides[3] = {out->strides, a->strides, b->strides};
  const size_t es = tsr__dtype_size(out->dtype);
  const size_t elsize[3] = {es, es, es};
  tsr__omp_loop lp;
  tsr__omp_loop_init(&lp, out->ndim, out->shape, 3, strides, elsize);
  char *const base[3] = {(char *)out->data, (char *)a->data, (char *)b->data};
  tsr__omp_loop_run(&lp, base, binary_kernels[op][out->dtype], NULL,
                    lp.size * tsr__binary_cost(op));
  return TSR_OK;
}

tsr_status tsr__omp_unary(tsr_device dev, tsr_unary_op op, const tsr__view *out,
                          const tsr__view *a) {
  (void)dev;
  if (op == TSR_ABS && tsr__dtype_is_complex(a->dtype)) {
    /* out has the part dtype (the core allocated it so). */
    const int64_t *strides[2] = {out->strides, a->strides};
    const size_t elsize[2] = {tsr__dtype_size(out->dtype), tsr__dtype_size(a->dtype)};
    tsr__omp_loop lp;
    tsr__omp_loop_init(&lp, out->ndim, out->shape, 2, strides, elsize);
    char *const base[2] = {(char *)out->data, (char *)a->data};
    tsr__omp_loop_run(&lp, base, a->dtype == TSR_C64 ? tsr__unary_cabs_c64 : tsr__unary_cabs_c128,
                      NULL, lp.size * 4);
    return TSR_OK;
  }
  TSR_CHECK((unsigned)op < TSR_NUM_UNARY_OPS && (unsigned)out->dtype < TSR_NUM_DTYPES &&
                unary_kernels[op][out->dtype] != NULL,
            TSR_ERR_UNSUPPORTED, "unary operator %d has no CPU kernel for dtype %s", (int)op,
            tsr_dtype_name(out->dtype));
  const int64_t *strides[2] = {out->strides, a->strides};
  const size_t es = tsr__dtype_size(out->dtype);
  const size_t elsize[2] = {es, es};
  tsr__omp_loop lp;
  tsr__omp_loop_init(&lp, out->ndim, out->shape, 2, strides, elsize);
  char *const base[2] = {(char *)out->data, (char *)a->data};
  tsr__omp_loop_run(&lp, base, unary_kernels[op][out->dtype], NULL, lp.size * tsr__unary_cost(op));
  return TSR_OK;
}
