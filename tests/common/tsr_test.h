/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared test helpers. Every test program includes this (after the cmocka prerequisites).
 * The backend-agnostic suite gets its device from TSR_TEST_DEVICE (cpu, cuda, hip; default
 * cpu): when that device is absent the program exits 77, which CTest reports as skipped.
 */
#ifndef TSR_TEST_H
#define TSR_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the three above first. */
#include <cmocka.h>

#include "tessera.h"

/* Exit code CTest reads as "skipped" (SKIP_RETURN_CODE). */
#define TSR_TEST_SKIP 77

/* Asserts that a Tessera call returned TSR_OK, printing the last error otherwise. */
#define TSR_ASSERT_OK(expr)                                                                        \
  do {                                                                                             \
    tsr_status st_ = (expr);                                                                       \
    if (st_ != TSR_OK)                                                                             \
      print_error("%s failed: %s: %s\n", #expr, tsr_status_name(st_), tsr_last_error());           \
    assert_int_equal(st_, TSR_OK);                                                                 \
  } while (0)

/* Asserts a specific failing status and a non-empty message containing `needle` (or any
   message when needle is NULL). */
#define TSR_ASSERT_STATUS(expr, code, needle)                                                      \
  tsr_test_assert_status((expr), (code), (needle), #expr)
void tsr_test_assert_status(tsr_status got, tsr_status want, const char *needle, const char *expr);

/* The one rule for errors, checked on the last error by every TSR_ASSERT_STATUS: the message
   does not begin with an internal name (tsr__), and when `called` is a public tsr_ function
   it begins with "called: ". `expr` is printed on failure. */
void tsr_test_assert_error_names(const char *called, const char *expr);

/* The device under test (TSR_TEST_DEVICE); exits with TSR_TEST_SKIP when it is absent.
   Call it once in main() before running the tests. */
tsr_device tsr_test_device(void);

/* Independent host random numbers (SplitMix64, not Philox): uniform in [-1, 1). */
void tsr_test_fill_random(double *x, size_t n, uint64_t seed);

/* ||x - ref||_2 / ||ref||_2 (absolute norm when ref is all zeros). */
double tsr_test_rel_error(const double *x, const double *ref, size_t n);

/* Relative-error tolerance appropriate for a dtype and a dot-product length k. */
double tsr_test_tol(tsr_dtype dtype, int64_t k);

/* A new array on `dev` from float64 host data converted to `dtype` (C-contiguous). */
tsr_array *tsr_test_array_from_f64(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device dev,
                                   const double *data);

/* A new random array (uniform [-1,1) from tsr_test_fill_random); the float64 values are
   written to *host (malloc'ed, caller frees) when host is not NULL. Values are exactly
   representable in f32 for f32 arrays (rounded before use as reference). */
tsr_array *tsr_test_random_array(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device dev,
                                 uint64_t seed, double **host);

/* Reads any array into a malloc'ed float64 buffer in C order (caller frees). */
double *tsr_test_read_f64(const tsr_array *a);

/* The suite's one float64 GEMM reference: C = alpha op(A) op(B) + beta C0, all row-major and
   contiguous (op(A) is m x k: A is m x k, or k x m read transposed when `ta`; op(B) is k x n
   likewise with `tb`), sums in long double. C0 is not read when beta == 0 (may be NULL); NaN and
   Inf propagate as IEEE says. Returns a malloc'ed m x n buffer (caller frees; never NULL). */
double *tsr_test_ref_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                          const double *a, const double *b, double beta, const double *c0);

/* The same reference into a caller's m x n row-major buffer `c` (may be c0 itself: each element
   of C0 is read once, before its result is written). */
void tsr_test_ref_gemm_into(int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                            const double *a, const double *b, double beta, const double *c0,
                            double *c);

/* Number of elements of a shape. */
int64_t tsr_test_numel(int ndim, const int64_t *shape);

#endif /* TSR_TEST_H */
