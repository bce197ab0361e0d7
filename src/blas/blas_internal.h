/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to libtessera_blas (not exported). */
#ifndef TSR_BLAS_INTERNAL_H
#define TSR_BLAS_INTERNAL_H

#include "tessera/blas.h"

/* The reference CBLAS global read by cblas_xerbla (xerbla.c). Reached through the GOT, so
   that an executable's copy (the CBLAS testers have one) is the one written. */
extern TSR_API int RowMajorStrg;

/* Reports argument `info` of the Fortran routine `srname` ("DGEMM ") through the process's
   xerbla_, or prints the reference message when there is none. */
void tsr__blas_xerbla(const char *srname, int info);

/* Reports argument `info` of the CBLAS routine `rout` through the process's cblas_xerbla
   (with `form`, a printf format of one int `value`, or ""), or prints the reference message
   when there is none, with RowMajorStrg = `row` during the report (1: a row-major call, whose
   positions the handler maps back) and 0 after it, as the reference CBLAS does. Thread-safe:
   reports are serialized, so concurrent ones never race on RowMajorStrg. */
void tsr__blas_cblas_xerbla(int row, int info, const char *rout, const char *form, int value);

/* ---------------------------------------------------------------- complex ------------ */

/*
 * The complex GEMMs of the drop-in (blas.c; to be documented in tessera/blas.h with the real
 * ones). Same semantics as the reference BLAS/CBLAS ZGEMM and CGEMM: alpha and beta by pointer
 * to one complex element of the routine's precision (C99 layout: real, imaginary), 'N', 'T',
 * 'C' (conjugate transpose; lowercase accepted), beta 0 never reads C, alpha 0 or k 0 is
 * C = beta C, errors reported through xerbla_ ("ZGEMM ", "CGEMM ", "ZGEMM3M", "CGEMM3M"; the
 * positions of DGEMM) or cblas_xerbla (the positions of cblas_dgemm). The 3M variants (an
 * OpenBLAS extension) compute the same product the same way.
 */
TSR_API void zgemm_(const char *transa, const char *transb, const int *m, const int *n,
                    const int *k, const void *alpha, const void *a, const int *lda, const void *b,
                    const int *ldb, const void *beta, void *c, const int *ldc);
TSR_API void cgemm_(const char *transa, const char *transb, const int *m, const int *n,
                    const int *k, const void *alpha, const void *a, const int *lda, const void *b,
                    const int *ldb, const void *beta, void *c, const int *ldc);
TSR_API void zgemm3m_(const char *transa, const char *transb, const int *m, const int *n,
                      const int *k, const void *alpha, const void *a, const int *lda, const void *b,
                      const int *ldb, const void *beta, void *c, const int *ldc);
TSR_API void cgemm3m_(const char *transa, const char *transb, const int *m, const int *n,
                      const int *k, const void *alpha, const void *a, const int *lda, const void *b,
                      const int *ldb, const void *beta, void *c, const int *ldc);
TSR_API void cblas_zgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                         const int M, const int N, const int K, const void *alpha, const void *A,
                         const int lda, const void *B, const int ldb, const void *beta, void *C,
                         const int ldc);
TSR_API void cblas_cgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                         const int M, const int N, const int K, const void *alpha, const void *A,
                         const int lda, const void *B, const int ldb, const void *beta, void *C,
                         const int ldc);
TSR_API void cblas_zgemm3m(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                           const int M, const int N, const int K, const void *alpha, const void *A,
                           const int lda, const void *B, const int ldb, const void *beta, void *C,
                           const int ldc);
TSR_API void cblas_cgemm3m(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB,
                           const int M, const int N, const int K, const void *alpha, const void *A,
                           const int lda, const void *B, const int ldb, const void *beta, void *C,
                           const int ldc);

#endif /* TSR_BLAS_INTERNAL_H */
