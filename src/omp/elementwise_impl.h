/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Elementwise kernels for one dtype, expanded from the operator tables of core/opdefs.h.
 * Included by elementwise.c once per dtype after defining its parameters (the C-template
 * convention, docs/conventions.md; this file #undefs them at its end):
 *   TSR__EW_T    the element type
 *   TSR__EW_U    the type integer add/sub/mul/neg compute in: the unsigned type for integers,
 *                so that overflow wraps modulo 2^bits (signed overflow is undefined
 *                behaviour); TSR__EW_T for floats
 *   TSR__EW_SFX  the dtype suffix of the generated names (f32, f64, i32, i64)
 *   TSR__EW_INT  1 for integer dtypes: only the operators marked INT=1 are generated
 *   TSR__EW_CPLX 1 for the complex dtypes (T a C99 `_Complex` type): only the operators that
 *                TSR__OP_COMPLEX (core/opdefs.h) marks are generated, each with the expression
 *                TSR__OMP_CEXPR_<name>(expr) the including file defines for it (conj: conj(x));
 *                0 otherwise
 * The body calls the types T and U (aliases it #undefs with the parameters).
 *
 * Each kernel handles one run of the innermost axis (tsr__omp_kernel) with fast paths for
 * all-contiguous operands and for a broadcast (stride-0) operand, where `omp simd` lets the
 * compiler vectorize (the loop has no carried dependence even when out aliases an input).
 */
#if !defined(TSR__EW_T) || !defined(TSR__EW_U) || !defined(TSR__EW_SFX) ||                         \
    !defined(TSR__EW_INT) || !defined(TSR__EW_CPLX)
#error                                                                                             \
    "define TSR__EW_T, TSR__EW_U, TSR__EW_SFX, TSR__EW_INT and TSR__EW_CPLX before including elementwise_impl.h"
#endif
#define T TSR__EW_T
#define U TSR__EW_U

/* Compute type of each operator: U wraps for integers, T keeps comparisons signed. */
#define TSR__OMP_CT_add U
#define TSR__OMP_CT_sub U
#define TSR__OMP_CT_mul U
#define TSR__OMP_CT_div T
#define TSR__OMP_CT_maximum T
#define TSR__OMP_CT_minimum T
#define TSR__OMP_CT_pow T
#define TSR__OMP_CT_neg U
#define TSR__OMP_CT_abs T /* TSR__ABS wraps abs(INT_MIN) itself */
#define TSR__OMP_CT_exp T
#define TSR__OMP_CT_log T
#define TSR__OMP_CT_sqrt T
#define TSR__OMP_CT_tanh T
#define TSR__OMP_CT_sigmoid T
#define TSR__OMP_CT_relu T
#define TSR__OMP_CT_conj T

#define TSR__OMP_BIN_LOOP(CTY, expr, OI, XV, YV)                                                   \
  TSR__OMP_PRAGMA(omp simd)                                                                        \
  for (int64_t i = 0; i < n; i++) {                                                                \
    const CTY x = (CTY)(XV), y = (CTY)(YV);                                                        \
    o[OI] = (T)(expr);                                                                             \
  }

#define TSR__OMP_BIN_KERNEL(name, expr)                                                            \
  static void TSR__OMP_CAT(tsr__binary_##name##_, TSR__EW_SFX)(                                    \
      int64_t n, char *const p[], const int64_t s[], const void *param) {                          \
    (void)param;                                                                                   \
    T *o = (T *)p[0];                                                                              \
    const T *a = (const T *)p[1];                                                                  \
    const T *b = (const T *)p[2];                                                                  \
    if (s[0] == 1 && s[1] == 1 && s[2] == 1) {                                                     \
      TSR__OMP_BIN_LOOP(TSR__OMP_CT_##name, expr, i, a[i], b[i])                                   \
    } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {                                              \
      const T bv = b[0];                                                                           \
      TSR__OMP_BIN_LOOP(TSR__OMP_CT_##name, expr, i, a[i], bv)                                     \
    } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {                                              \
      const T av = a[0];                                                                           \
      TSR__OMP_BIN_LOOP(TSR__OMP_CT_##name, expr, i, av, b[i])                                     \
    } else {                                                                                       \
      const int64_t so = s[0], sa = s[1], sb = s[2];                                               \
      for (int64_t i = 0; i < n; i++) {                                                            \
        const TSR__OMP_CT_##name x = (TSR__OMP_CT_##name)a[i * sa];                                \
        const TSR__OMP_CT_##name y = (TSR__OMP_CT_##name)b[i * sb];                                \
        o[i * so] = (T)(expr);                                                                     \
      }                                                                                            \
    }                                                                                              \
  }

#define TSR__OMP_UN_KERNEL(name, expr)                                                             \
  static void TSR__OMP_CAT(tsr__unary_##name##_, TSR__EW_SFX)(                                     \
      int64_t n, char *const p[], const int64_t s[], const void *param) {                          \
    (void)param;                                                                                   \
    T *o = (T *)p[0];                                                                              \
    const T *a = (const T *)p[1];                                                                  \
    if (s[0] == 1 && s[1] == 1) {                                                                  \
      TSR__OMP_PRAGMA(omp simd)                                                                    \
      for (int64_t i = 0; i < n; i++) {                                                            \
        const TSR__OMP_CT_##name x = (TSR__OMP_CT_##name)a[i];                                     \
        o[i] = (T)(expr);                                                                          \
      }                                                                                            \
    } else {                                                                                       \
      const int64_t so = s[0], sa = s[1];                                                          \
      for (int64_t i = 0; i < n; i++) {                                                            \
        const TSR__OMP_CT_##name x = (TSR__OMP_CT_##name)a[i * sa];                                \
        o[i * so] = (T)(expr);                                                                     \
      }                                                                                            \
    }                                                                                              \
  }

/* Integers get only the operators marked INT=1 (the core rejects the others). */
#if TSR__EW_CPLX
/* Complex: the operators TSR__OP_COMPLEX marks, abs excepted (its result is real: elementwise.c
   has its own kernel), with the including file's complex expression. */
#define TSR__OMP_GEN_BIN_1(name, expr) TSR__OMP_BIN_KERNEL(name, TSR__OMP_CEXPR_##name(expr))
#define TSR__OMP_GEN_UN_1(name, expr) TSR__OMP_UN_KERNEL(name, TSR__OMP_CEXPR_##name(expr))
#define TSR__OMP_GEN_BIN_0(name, expr)
#define TSR__OMP_GEN_UN_0(name, expr)
#define TSR__OMP_GEN_BIN(ENUM, name, INT, expr)                                                    \
  TSR__OMP_CAT(TSR__OMP_GEN_BIN_, TSR__OP_COMPLEX(name))(name, expr)
#define TSR__OMP_GEN_UN(ENUM, name, INT, expr)                                                     \
  TSR__OMP_CAT(TSR__OMP_GEN_UN_, TSR__OMP_CPLX_UN(name))(name, expr)
#else
#define TSR__OMP_GEN_BIN_1(name, expr) TSR__OMP_BIN_KERNEL(name, expr)
#define TSR__OMP_GEN_UN_1(name, expr) TSR__OMP_UN_KERNEL(name, expr)
#if TSR__EW_INT
#define TSR__OMP_GEN_BIN_0(name, expr)
#define TSR__OMP_GEN_UN_0(name, expr)
#else
#define TSR__OMP_GEN_BIN_0(name, expr) TSR__OMP_BIN_KERNEL(name, expr)
#define TSR__OMP_GEN_UN_0(name, expr) TSR__OMP_UN_KERNEL(name, expr)
#endif
#define TSR__OMP_GEN_BIN(ENUM, name, INT, expr) TSR__OMP_GEN_BIN_##INT(name, expr)
#define TSR__OMP_GEN_UN(ENUM, name, INT, expr) TSR__OMP_GEN_UN_##INT(name, expr)
#endif

TSR__BINARY_OPS(TSR__OMP_GEN_BIN)
TSR__UNARY_OPS(TSR__OMP_GEN_UN)

#undef TSR__OMP_GEN_BIN
#undef TSR__OMP_GEN_UN
#undef TSR__OMP_GEN_BIN_0
#undef TSR__OMP_GEN_UN_0
#undef TSR__OMP_GEN_BIN_1
#undef TSR__OMP_GEN_UN_1
#undef TSR__OMP_BIN_KERNEL
#undef TSR__OMP_UN_KERNEL
#undef TSR__OMP_BIN_LOOP
#undef TSR__OMP_CT_add
#undef TSR__OMP_CT_sub
#undef TSR__OMP_CT_mul
#undef TSR__OMP_CT_div
#undef TSR__OMP_CT_maximum
#undef TSR__OMP_CT_minimum
#undef TSR__OMP_CT_pow
#undef TSR__OMP_CT_neg
#undef TSR__OMP_CT_abs
#undef TSR__OMP_CT_exp
#undef TSR__OMP_CT_log
#undef TSR__OMP_CT_sqrt
#undef TSR__OMP_CT_tanh
#undef TSR__OMP_CT_sigmoid
#undef TSR__OMP_CT_relu
#undef TSR__OMP_CT_conj
#undef T
#undef U
#undef TSR__EW_T
#undef TSR__EW_U
#undef TSR__EW_SFX
#undef TSR__EW_INT
#undef TSR__EW_CPLX
