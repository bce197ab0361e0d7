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

#endif /* TSR_BLAS_INTERNAL_H */
