/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file blas.h
 * @brief libtessera_blas: a BLAS-compatible drop-in that serves GEMM with Tessera.
 *
 * The shared library `libtessera_blas` exports the Fortran BLAS `sgemm_`, `dgemm_`, `cgemm_` and
 * `zgemm_` (and OpenBLAS's `cgemm3m_`, `zgemm3m_`) and the CBLAS `cblas_sgemm`, `cblas_dgemm`,
 * `cblas_cgemm`, `cblas_zgemm` (and `cblas_cgemm3m`, `cblas_zgemm3m`) with the semantics of the
 * reference BLAS
 * (netlib BLAS 3.11, Dongarra et al., "A Set of Level 3 Basic Linear Algebra Subprograms",
 * ACM TOMS 16(1), 1990; CBLAS: BLAS Technical Forum Standard, 2001, Annex B):
 *  - column-major operands with leading dimensions (CBLAS also row-major); transpose
 *    characters 'N', 'T', 'C' in either case ('C' is 'T' for real matrices, the conjugate
 *    transpose for complex ones);
 *  - beta = 0 never reads C (NaN in C does not propagate); alpha = 0 or k = 0 does not read
 *    A or B; quick return when m = 0, n = 0, or (alpha = 0 or k = 0) and beta = 1;
 *  - arguments checked in the reference order; the first bad one is reported through
 *    `xerbla_` (Fortran entry points, reference parameter positions) or `cblas_xerbla`
 *    (CBLAS, positions counting the layout as parameter 1, with the reference CBLAS
 *    conventions for row-major calls), and the call returns without touching C.
 *
 * Routing of each call: problems of fewer than `TSR_BLAS_GPU_MIN_FLOPS` floating-point
 * operations (2mnk; default ::TSR_BLAS_GPU_MIN_FLOPS_DEFAULT) run on the CPU through Tessera's
 * native OpenMP GEMM, directly on the caller's memory (no copy). Larger ones run on the default
 * device (tsr_device_default(): `TSR_DEVICE`, else the first GPU), transfers included: A, B
 * (and C unless beta = 0) are copied to the device, and C is copied back. `TSR_DEVICE=cpu`
 * keeps every call on the CPU. Should Tessera fail (out of memory), the call is still computed:
 * a GPU failure falls back to the CPU, a CPU failure to a plain loop, with one message on
 * stderr.
 *
 * Use it by linking (`-ltessera_blas` before `-lblas`) or, without relinking, by
 * `LD_PRELOAD=libtessera_blas.so ./app` in front of any BLAS: the GEMM calls reach Tessera
 * and every other BLAS routine stays with the application's BLAS. See docs/blas.md.
 *
 * Errors are reported through the process's `xerbla_` / `cblas_xerbla`: the application's
 * own when it defines one, else the underlying BLAS's. The library references them weakly
 * and does not define them; when the process has none, it prints the reference message on
 * stderr and returns (the reference handlers stop the program). Besides the documented
 * functions the library exports the reference CBLAS globals `int RowMajorStrg` and
 * `int CBLAS_CallFromC`, which the reference `cblas_xerbla` (and the reference CBLAS
 * testers) read.
 *
 * Environment: `TSR_BLAS_GPU_MIN_FLOPS` (threshold, a non-negative number; anything else
 * means the default), `TSR_DEVICE` (see device.h), `TSR_GEMM` (native/vendor GEMM on the GPU;
 * the CPU route always uses the native GEMM, since a vendor CBLAS call from inside a preloaded
 * BLAS could come back to this library), `TSR_BLAS_VERBOSE=1` (call counts by route on
 * stderr at exit, see tsr_blas_get_stats(); the complex calls on a second line, "tessera_blas:
 * complex calls: ...").
 */
#ifndef TESSERA_BLAS_H
#define TESSERA_BLAS_H

#include <stddef.h>
#include <stdint.h>

#include "tessera/device.h"
#include "tessera/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Default of `TSR_BLAS_GPU_MIN_FLOPS`: problems of at least 2mnk = 1e9 flops (about
    m = n = k = 800) go to the GPU, where the GEMM outweighs the PCIe transfers of A, B, C. */
#define TSR_BLAS_GPU_MIN_FLOPS_DEFAULT 1e9

/* ---------------------------------------------------------------- Fortran BLAS -------- */

/**
 * Fortran BLAS DGEMM: C = alpha op(A) op(B) + beta C, column-major, op(X) = X or X^T
 * (transa/transb 'N', 'T' or 'C', either case). op(A) is m x k, op(B) k x n, C m x n;
 * lda >= max(1, rows of A as stored), ldb likewise, ldc >= max(1, m). Every argument is
 * passed by reference; the hidden Fortran lengths of transa/transb are not read (C callers
 * may omit them). Errors call xerbla_("DGEMM ", &info) with info = 1 (transa), 2 (transb),
 * 3 (m < 0), 4 (n < 0), 5 (k < 0), 8 (lda), 10 (ldb) or 13 (ldc).
 */
TSR_API void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
                    const int *k, const double *alpha, const double *a, const int *lda,
                    const double *b, const int *ldb, const double *beta, double *c, const int *ldc);

/** Fortran BLAS SGEMM: dgemm_() in single precision (errors name "SGEMM "). */
TSR_API void sgemm_(const char *transa, const char *transb, const int *m, const int *n,
                    const int *k, const float *alpha, const float *a, const int *lda,
                    const float *b, const int *ldb, const float *beta, float *c, const int *ldc);

/**
 * Fortran BLAS ZGEMM: C = alpha op(A) op(B) + beta C for double complex matrices (COMPLEX*16,
 * C99 `double _Complex`: real and imaginary parts interleaved), column-major, op(X) = X, X^T
 * or X^H (transa/transb 'N', 'T' or 'C', either case). `alpha` and `beta` point to one
 * double complex element each. Shapes, leading dimensions, quick returns and error positions
 * as dgemm_() (errors name "ZGEMM "); beta = 0 never reads C, alpha = 0 or k = 0 reads neither
 * A nor B (C = beta C). Computed by the CPU GEMM's 1m method on the real micro-kernels
 * (docs/architecture.md, "Complex dtypes").
 */
TSR_API void zgemm_(const char *transa, const char *transb, const int *m, const int *n,
                    const int *k, const void *alpha, const void *a, const int *lda, const void *b,
                    const int *ldb, const void *beta, void *c, const int *ldc);

/** Fortran BLAS CGEMM: zgemm_() in single complex (COMPLEX; errors name "CGEMM "). */
TSR_API void cgemm_(const char *transa, const char *transb, const int *m, const int *n,
                    const int *k, const void *alpha, const void *a, const int *lda, const void *b,
                    const int *ldb, const void *beta, void *c, const int *ldc);

/**
 * ZGEMM3M, the OpenBLAS/MKL extension some codes call: the same product as zgemm_(), computed
 * the same way (errors name "ZGEMM3M").
 */
TSR_API void zgemm3m_(const char *transa, const char *transb, const int *m, const int *n,
                      const int *k, const void *alpha, const void *a, const int *lda, const void *b,
                      const int *ldb, const void *beta, void *c, const int *ldc);

/** CGEMM3M: cgemm_() under the extension's name (errors name "CGEMM3M"). */
TSR_API void cgemm3m_(const char *transa, const char *transb, const int *m, const int *n,
                      const int *k, const void *alpha, const void *a, const int *lda, const void *b,
                      const int *ldb, const void *beta, void *c, const int *ldc);

/**
 * The BLAS error handler the drop-in calls (it does not define it): parameter number `*info`
 * of routine `srname` (a Fortran string of `srname_len` characters, blank-padded: "DGEMM ")
 * had an illegal value. Define it in your program to handle errors; without any (neither
 * yours nor the underlying BLAS's), the drop-in prints " ** On entry to DGEMM parameter
 * number  8 had an illegal value" on stderr and returns.
 */
void xerbla_(const char *srname, const int *info, size_t srname_len);

/* ---------------------------------------------------------------- CBLAS --------------- */

/* The CBLAS enums, unless a cblas.h (reference or OpenBLAS, both guarded by CBLAS_H) came
   first: include cblas.h before this header when you use both. */
#ifndef CBLAS_H
/** CBLAS storage order. */
typedef enum CBLAS_LAYOUT { CblasRowMajor = 101, CblasColMajor = 102 } CBLAS_LAYOUT;
/** CBLAS transposition (CblasConjTrans is CblasTrans for real matrices). */
typedef enum CBLAS_TRANSPOSE {
  CblasNoTrans = 111,
  CblasTrans = 112,
  CblasConjTrans = 113
} CBLAS_TRANSPOSE;

/**
 * CBLAS DGEMM: C = alpha op(A) op(B) + beta C with the matrices stored in `layout` order
 * (row-major: element (i, j) of X at x[i*ldx + j]). op(A) is M x K, op(B) K x N, C M x N.
 * Errors call cblas_xerbla(info, "cblas_dgemm", ...): 1 (layout), 2 (TransA), 3 (TransB), and
 * otherwise the Fortran DGEMM position plus one, of the column-major call that the reference
 * CBLAS makes (for row-major: A and B, M and N swapped) with `RowMajorStrg` set to 1 for the
 * duration of the call, so that the reference cblas_xerbla maps it back to the parameter of
 * the caller (4 M, 5 N, 6 K, 9 lda, 11 ldb, 14 ldc).
 */
TSR_API void cblas_dgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                         const int M, const int N, const int K, const double alpha, const double *A,
                         const int lda, const double *B, const int ldb, const double beta,
                         double *C, const int ldc);

/** CBLAS SGEMM: cblas_dgemm() in single precision (errors name "cblas_sgemm"). */
TSR_API void cblas_sgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                         const int M, const int N, const int K, const float alpha, const float *A,
                         const int lda, const float *B, const int ldb, const float beta, float *C,
                         const int ldc);

/**
 * CBLAS ZGEMM: cblas_dgemm() for double complex matrices (`layout` order, TransA/TransB
 * CblasNoTrans, CblasTrans or CblasConjTrans), `alpha` and `beta` pointing to one double
 * complex element each; errors name "cblas_zgemm" at cblas_dgemm()'s positions. A row-major
 * call is computed as the column-major product of the transposes, conjugations kept.
 */
TSR_API void cblas_zgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                         const int M, const int N, const int K, const void *alpha, const void *A,
                         const int lda, const void *B, const int ldb, const void *beta, void *C,
                         const int ldc);

/** CBLAS CGEMM: cblas_zgemm() in single complex (errors name "cblas_cgemm"). */
TSR_API void cblas_cgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                         const int M, const int N, const int K, const void *alpha, const void *A,
                         const int lda, const void *B, const int ldb, const void *beta, void *C,
                         const int ldc);

/** cblas_zgemm() under OpenBLAS's 3M name (errors name "cblas_zgemm3m"). */
TSR_API void cblas_zgemm3m(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                           const int M, const int N, const int K, const void *alpha, const void *A,
                           const int lda, const void *B, const int ldb, const void *beta, void *C,
                           const int ldc);

/** cblas_cgemm() under OpenBLAS's 3M name (errors name "cblas_cgemm3m"). */
TSR_API void cblas_cgemm3m(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                           const int M, const int N, const int K, const void *alpha, const void *A,
                           const int lda, const void *B, const int ldb, const void *beta, void *C,
                           const int ldc);

/**
 * The CBLAS error handler the drop-in calls (it does not define it): parameter `info` of
 * routine `rout` was illegal; `form` is a printf format for details. Without one in the
 * process, the drop-in maps row-major GEMM positions as the reference does (see
 * cblas_dgemm()), prints "Parameter 4 to routine cblas_dgemm was incorrect" on stderr and
 * returns.
 */
void cblas_xerbla(int info, const char *rout, const char *form, ...);
#endif /* CBLAS_H */

/* ---------------------------------------------------------------- Tessera extras ------ */

/** Calls counted by the drop-in since the start (or tsr_blas_reset_stats()). */
typedef struct tsr_blas_stats {
  uint64_t sgemm;       /**< calls of sgemm_ */
  uint64_t dgemm;       /**< calls of dgemm_ */
  uint64_t cblas_sgemm; /**< calls of cblas_sgemm */
  uint64_t cblas_dgemm; /**< calls of cblas_dgemm */
  uint64_t errors;      /**< calls rejected through xerbla_ / cblas_xerbla */
  uint64_t trivial;     /**< quick returns and C = beta C (alpha = 0 or k = 0), done in place */
  uint64_t cpu; /**< computed by the native CPU GEMM on the caller's memory (the calls not counted
                    elsewhere: a call still running counts here) */
  uint64_t gpu; /**< computed on a GPU (transfers included) */
  uint64_t fallback; /**< computed by the plain loop because Tessera failed */
} tsr_blas_stats;

/** @deprecated The name of ::tsr_blas_stats in release 0.1; kept for source compatibility. */
typedef tsr_blas_stats tsr_blas_stats_t;

/**
 * Reads the call counters: the calls of every thread, including threads that have exited
 * (each thread counts its own calls, so concurrent callers share no counter; the sum is exact
 * once concurrent calls have returned).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER.
 */
TSR_API tsr_status tsr_blas_get_stats(tsr_blas_stats *stats);

/** Sets every counter to zero: tsr_blas_get_stats() then counts from this call on.
    @return ::TSR_OK. */
TSR_API tsr_status tsr_blas_reset_stats(void);

/**
 * The device a GEMM of size m x n x k would run on: the CPU when 2mnk is below
 * `TSR_BLAS_GPU_MIN_FLOPS` or the default device (tsr_device_default()) is the CPU or cannot
 * be determined, else that GPU.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (a negative size).
 */
TSR_API tsr_status tsr_blas_route(int64_t m, int64_t n, int64_t k, tsr_device *device);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_BLAS_H */
