/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the backend-agnostic core suite (tests/test_*.c), on top of tests/common.
 * Everything reads results back with tsr_array_read, so the same programs run on GPUs.
 */
#ifndef TSR_CORE_UTIL_H
#define TSR_CORE_UTIL_H

#include "tsr_test.h"

/*
 * The dtype lists of the suites' loops, generated from TSR_DTYPE_MAP so that a new row joins
 * them: CT_DTYPES every dtype, CT_REAL_DTYPES those without is_complex (the suites whose
 * float64 references are real; the complex dtypes' values are checked in test_complex.c and,
 * on a GPU, test_gpu_cross.c). Use as `static const tsr_dtype all_dtypes[] = CT_REAL_DTYPES;`
 * and loop to CT_COUNT(all_dtypes).
 */
#define CT__DTYPE_ALL(name, ENUM, value, c_type, size, npy, is_float, is_cx) ENUM,
#define CT__DTYPE_IF_REAL_0(ENUM) ENUM,
#define CT__DTYPE_IF_REAL_1(ENUM)
#define CT__DTYPE_REAL(name, ENUM, value, c_type, size, npy, is_float, is_cx)                      \
  CT__DTYPE_IF_REAL_##is_cx(ENUM)
#define CT_DTYPES                                                                                  \
  { TSR_DTYPE_MAP(CT__DTYPE_ALL) }
#define CT_REAL_DTYPES                                                                             \
  { TSR_DTYPE_MAP(CT__DTYPE_REAL) }
#define CT_COUNT(list) ((int)(sizeof(list) / sizeof((list)[0])))

/* Unit roundoff of a dtype (0 for integers: results must be exact). */
double ct_eps(tsr_dtype dtype);

/* x rounded to what `dtype` can hold (float rounding; integers wrap like the C cast of the
   unsigned value, the NumPy rule for integer overflow). */
double ct_round(tsr_dtype dtype, double x);

/* Asserts dtype, ndim and shape of an array, printing both shapes on failure. */
void ct_assert_shape(const tsr_array *a, tsr_dtype dtype, int ndim, const int64_t *shape);

/* Asserts |got - ref| <= rtol*|ref| + atol elementwise; NaN must match NaN and infinities
   must match exactly. Prints the first mismatch with `what`. */
void ct_assert_close(const double *got, const double *ref, int64_t n, double rtol, double atol,
                     const char *what);

/* Index into a C-contiguous array of shape (n, shape) for element `lin` (C order) of the
   broadcast result of shape (nout, oshape): NumPy broadcasting, trailing axes aligned. */
int64_t ct_bcast_index(int nout, const int64_t *oshape, int64_t lin, int n, const int64_t *shape);

/* Reads an array and asserts its dtype/shape, returning its values as float64 (caller frees). */
double *ct_read_checked(const tsr_array *a, tsr_dtype dtype, int ndim, const int64_t *shape);

/* Host float64 random values in [lo, hi), rounded to `dtype` (integers: floor). */
double *ct_random_host(int64_t n, tsr_dtype dtype, uint64_t seed, double lo, double hi);

/* A random shape of 1..5 axes of sizes 1..max_len (even max_len <= 8), from `seed`, for the
   random-layout tests; returns ndim and fills shape[0..ndim). */
int ct_random_shape(uint64_t seed, int64_t max_len, int64_t shape[5]);

/*
 * A random non-contiguous view of the given shape: a permutation of the axes of a larger
 * base array, with steps of 2 and reversed axes chosen at random from `seed`. Values are
 * random in [lo, hi) (see ct_random_host); *host receives the view's values in C order
 * (malloc'ed). The caller releases the view (it keeps its base alive).
 */
tsr_array *ct_random_view(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device dev,
                          uint64_t seed, double lo, double hi, double **host);

/* 1 when the device is the CPU. */
int ct_is_cpu(tsr_device dev);

#endif /* TSR_CORE_UTIL_H */
