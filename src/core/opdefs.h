/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The elementwise operators, defined once as scalar expressions and expanded into the OpenMP
 * loops (src/omp) and the CUDA/HIP kernels (src/gpu). The expressions use only the arguments
 * `x`, `y` and the element type `T`, and math functions by their generic names: in C the
 * including file uses <tgmath.h>, in CUDA C++ the overloads of <cmath>, so `exp(x)` is expf for
 * float and exp for double in both. The order matches the public enums in tessera/ops.h.
 *
 * Integer dtypes use the operators marked INT=1 only (the core rejects the others); the
 * including file must make integer add/sub/mul wrap (compute in the unsigned type), see
 * TSR__INT_WRAP below.
 *
 * X(ENUM, name, INT, expression)
 */
#ifndef TSR_OPDEFS_H
#define TSR_OPDEFS_H

/* NaN-propagating maximum/minimum (NumPy semantics): if x is NaN pick x, else compare. */
#define TSR__MAXIMUM(x, y) (((x) != (x) || (x) > (y)) ? (x) : (y))
#define TSR__MINIMUM(x, y) (((x) != (x) || (x) < (y)) ? (x) : (y))

#define TSR__BINARY_OPS(X)                                                                         \
  X(TSR_ADD, add, 1, (x) + (y))                                                                    \
  X(TSR_SUB, sub, 1, (x) - (y))                                                                    \
  X(TSR_MUL, mul, 1, (x) * (y))                                                                    \
  X(TSR_DIV, div, 0, (x) / (y))                                                                    \
  X(TSR_MAXIMUM, maximum, 1, TSR__MAXIMUM(x, y))                                                   \
  X(TSR_MINIMUM, minimum, 1, TSR__MINIMUM(x, y))                                                   \
  X(TSR_POW, pow, 0, pow((x), (y)))

/* abs goes through TSR__ABS, which each including file defines for its types (see below):
   fabs for floats (|-0| = +0, NaN stays NaN), a comparison for integers, where the most
   negative value wraps to itself as in NumPy. */
#define TSR__UNARY_OPS(X)                                                                          \
  X(TSR_NEG, neg, 1, -(x))                                                                         \
  X(TSR_ABS, abs, 1, TSR__ABS(x))                                                                  \
  X(TSR_EXP, exp, 0, exp(x))                                                                       \
  X(TSR_LOG, log, 0, log(x))                                                                       \
  X(TSR_SQRT, sqrt, 0, sqrt(x))                                                                    \
  X(TSR_TANH, tanh, 0, tanh(x))                                                                    \
  X(TSR_SIGMOID, sigmoid, 0, (T)1 / ((T)1 + exp(-(x))))                                            \
  X(TSR_RELU, relu, 1, ((x) > (T)0 ? (x) : (T)0))                                                  \
  X(TSR_CONJ, conj, 1, (x))

/* conj's expression is the identity: what it is for the real and integer dtypes (NumPy's
   conjugate). The complex dtypes' kernels conjugate (src/omp/elementwise.c: conj(x) of
   <complex.h>; the GPU's own complex kernels).

   The operators defined for the complex dtypes c64 and c128 (1) and those refused there with
   TSR_ERR_DTYPE (0: no order for maximum, minimum, relu; no complex pow or sigmoid), by
   operator name; abs of a complex array gives its part dtype (|x| = hypot(re, im)). A backend
   without a complex kernel for a defined one returns TSR_ERR_UNSUPPORTED. */
#define TSR__OP_COMPLEX_add 1
#define TSR__OP_COMPLEX_sub 1
#define TSR__OP_COMPLEX_mul 1
#define TSR__OP_COMPLEX_div 1
#define TSR__OP_COMPLEX_maximum 0
#define TSR__OP_COMPLEX_minimum 0
#define TSR__OP_COMPLEX_pow 0
#define TSR__OP_COMPLEX_neg 1
#define TSR__OP_COMPLEX_abs 1
#define TSR__OP_COMPLEX_exp 1
#define TSR__OP_COMPLEX_log 1
#define TSR__OP_COMPLEX_sqrt 1
#define TSR__OP_COMPLEX_tanh 1
#define TSR__OP_COMPLEX_sigmoid 0
#define TSR__OP_COMPLEX_relu 0
#define TSR__OP_COMPLEX_conj 1
#define TSR__OP_CAT_(a, b) a##b
#define TSR__OP_CAT(a, b) TSR__OP_CAT_(a, b)
/* 1 when operator `name` (an identifier of the tables) takes the complex dtypes. */
#define TSR__OP_COMPLEX(name) TSR__OP_CAT(TSR__OP_COMPLEX_, name)

/* The including file defines TSR__ABS(x) for its types (fabs for floats, a comparison for
   integers, computed in unsigned arithmetic) before expanding the tables. */

/* Whether an operator accepts integer dtypes, and complex ones, for the core's checks. */
#define TSR__OP_INT_OK(ENUM, name, INT, expr) [ENUM] = INT,
#define TSR__OP_COMPLEX_OK(ENUM, name, INT, expr) [ENUM] = TSR__OP_COMPLEX(name),

#endif /* TSR_OPDEFS_H */
