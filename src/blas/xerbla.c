/*
 * Error handlers of the BLAS drop-in and the reference CBLAS globals.
 *
 * The handlers are weak and called through the PLT (this file is separate so the compiler
 * cannot bind the calls in blas.c locally): an application's own xerbla_ / cblas_xerbla,
 * such as the reference testers' recording ones, takes precedence. Unlike the reference
 * handlers, which stop the program, these print and return, as a library should.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tessera/blas.h"

/* Set by the reference cblas_* wrappers while a row-major call reports an error, read by
   cblas_xerbla. Exported under the reference names because the reference CBLAS testers
   reference them, and an optimized BLAS underneath (OpenBLAS) does not define them. */
TSR_API int RowMajorStrg = 0;
/* The reference sets it while a CBLAS routine runs, for its Fortran-to-C xerbla bridge;
   this library reports CBLAS errors directly and leaves it 0. */
TSR_API int CBLAS_CallFromC = 0;

__attribute__((weak)) void xerbla_(const char *srname, const int *info, size_t srname_len) {
  /* Fortran passes the exact length; a C caller that omits it leaves garbage, so the name is
     also cut at a NUL and at 32 characters. Trailing blanks are padding. */
  size_t len = srname_len < 32 ? srname_len : 32;
  len = strnlen(srname, len);
  while (len > 0 && srname[len - 1] == ' ') --len;
  fprintf(stderr, " ** On entry to %.*s parameter number %2d had an illegal value\n", (int)len,
          srname, *info);
}

__attribute__((weak)) void cblas_xerbla(int info, const char *rout, const char *form, ...) {
  /* The reference mapping: a row-major GEMM reports the positions of the column-major call
     it makes, with A and B (and M and N) swapped; swap them back. */
  if (RowMajorStrg && strstr(rout, "gemm") != NULL) {
    if (info == 4)
      info = 5;
    else if (info == 5)
      info = 4;
    else if (info == 9)
      info = 11;
    else if (info == 11)
      info = 9;
  }
  if (info != 0) fprintf(stderr, "Parameter %d to routine %s was incorrect\n", info, rout);
  va_list args;
  va_start(args, form);
  vfprintf(stderr, form, args);
  va_end(args);
}
