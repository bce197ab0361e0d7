/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One check of the CPU backend's GEMM for the tests that link the static library (it calls
 * the internal tsr__omp_gemm): C = A*B, row-major, no transposes, alpha 1, beta 0, A (m x k)
 * and B (k x n) random from two seeds, in dtype dt (f32 or f64), against the float64
 * reference of the same rounded inputs, with the call's tuning (NULL: the library's). Returns true
 * when the status is TSR_OK and the relative error is within tsr_test_tol(dt, k). No cmocka
 * asserts, so threads and forked children may call it; include after tsr_test.h and
 * omp/gemm/gemm_tune.h.
 */
#ifndef TSR_TEST_GEMM_H
#define TSR_TEST_GEMM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

static inline bool tsr_test_native_gemm_ok(tsr_dtype dt, int64_t m, int64_t n, int64_t k,
                                           uint64_t seed_a, uint64_t seed_b,
                                           const tsr__gemm_tuning *tuning) {
  const size_t ma = (size_t)(m * k), mb = (size_t)(k * n), mc = (size_t)(m * n);
  double *a = malloc(sizeof(double) * ma), *b = malloc(sizeof(double) * mb);
  double *r = malloc(sizeof(double) * mc), *got = malloc(sizeof(double) * mc);
  void *ta = malloc(8 * ma), *tb = malloc(8 * mb), *tc = malloc(8 * mc);
  bool ok = a && b && r && got && ta && tb && tc;
  if (ok) {
    tsr_test_fill_random(a, ma, seed_a);
    tsr_test_fill_random(b, mb, seed_b);
    /* The operands in dt; the reference uses the values dt holds. */
    for (size_t i = 0; i < ma; ++i) {
      if (dt == TSR_F32)
        a[i] = ((float *)ta)[i] = (float)a[i];
      else
        ((double *)ta)[i] = a[i];
    }
    for (size_t i = 0; i < mb; ++i) {
      if (dt == TSR_F32)
        b[i] = ((float *)tb)[i] = (float)b[i];
      else
        ((double *)tb)[i] = b[i];
    }
    tsr_test_ref_gemm_into(0, 0, m, n, k, 1.0, a, b, 0.0, NULL, r);
    tsr__gemm_args g = {.dtype = dt,
                        .m = m,
                        .n = n,
                        .k = k,
                        .alpha = 1.0,
                        .beta = 0.0,
                        .a = ta,
                        .lda = k,
                        .b = tb,
                        .ldb = n,
                        .c = tc,
                        .ldc = n,
                        .path = TSR_GEMM_NATIVE,
                        .tuning = tuning};
    ok = tsr__omp_gemm(TSR_CPU, &g) == TSR_OK;
    if (ok) {
      for (size_t i = 0; i < mc; ++i)
        got[i] = dt == TSR_F32 ? (double)((float *)tc)[i] : ((double *)tc)[i];
      ok = tsr_test_rel_error(got, r, mc) <= tsr_test_tol(dt, k);
    }
  }
  free(a);
  free(b);
  free(r);
  free(got);
  free(ta);
  free(tb);
  free(tc);
  return ok;
}

#endif /* TSR_TEST_GEMM_H */
