/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error reporting of the BLAS drop-in, and the reference CBLAS globals.
 *
 * The library does not define xerbla_ or cblas_xerbla: it references them weakly and calls
 * whichever the process has (the application's own, such as the reference testers'
 * recording ones, else the underlying BLAS's), as the reference BLAS routines do. Were a
 * definition here, an executable's own handler would not be exported to override it. Only
 * when the process has none do the built-in handlers below print the reference message; they
 * return rather than stop the program, as a library should.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "blas/blas_internal.h"

/* Set by the reference cblas_* wrappers while a row-major call reports an error, read by
   cblas_xerbla. Exported under the reference names because the reference CBLAS testers
   reference them, and an optimized BLAS underneath (OpenBLAS) does not define them. */
TSR_API int RowMajorStrg = 0;
/* The reference sets it while a CBLAS routine runs, for its Fortran-to-C xerbla bridge;
   this library reports CBLAS errors directly and leaves it 0. */
TSR_API int CBLAS_CallFromC = 0;

extern void xerbla_(const char *srname, const int *info, size_t srname_len) __attribute__((weak));
extern void cblas_xerbla(int info, const char *rout, const char *form, ...) __attribute__((weak));

void tsr__blas_xerbla(const char *srname, int info) {
  if (xerbla_ != NULL) {
    xerbla_(srname, &info, strlen(srname));
    return;
  }
  size_t len = strlen(srname);
  while (len > 0 && srname[len - 1] == ' ')
    --len; /* Fortran blank padding */
  fprintf(stderr, " ** On entry to %.*s parameter number %2d had an illegal value\n", (int)len,
          srname, info);
}

/*
 * RowMajorStrg is one variable of the process, so two threads reporting errors at once would
 * race on it (and one could see the other's value). Every report therefore holds this lock
 * from setting RowMajorStrg to resetting it, around the handler that reads it: reports are
 * serialized, valid calls never take it. Recursive, so a cblas_xerbla that itself makes an
 * invalid CBLAS call reports it instead of deadlocking; held across fork() (pthread_atfork),
 * so a child never inherits it locked by a thread that does not exist there.
 */
static pthread_once_t tsr__blas_report_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t tsr__blas_report_lock;

static void tsr__blas_report_lock_take(void) {
  pthread_mutex_lock(&tsr__blas_report_lock);
}
static void tsr__blas_report_lock_drop(void) {
  pthread_mutex_unlock(&tsr__blas_report_lock);
}
static void tsr__blas_report_init(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&tsr__blas_report_lock, &attr);
  pthread_mutexattr_destroy(&attr);
  pthread_atfork(tsr__blas_report_lock_take, tsr__blas_report_lock_drop,
                 tsr__blas_report_lock_drop);
}

/* The report itself, under the lock with RowMajorStrg set. */
static void tsr__blas_cblas_report(int row, int info, const char *rout, const char *form,
                                   int value) {
  if (cblas_xerbla != NULL) {
    if (form[0] != '\0')
      cblas_xerbla(info, rout, form, value);
    else
      cblas_xerbla(info, rout, "");
    return;
  }
  /* The reference mapping: a row-major GEMM reports the positions of the column-major call
     it makes, with A and B (and M and N) swapped; swap them back. */
  if (row && strstr(rout, "gemm") != NULL) {
    if (info == 4)
      info = 5;
    else if (info == 5)
      info = 4;
    else if (info == 9)
      info = 11;
    else if (info == 11)
      info = 9;
  }
  fprintf(stderr, "Parameter %d to routine %s was incorrect\n", info, rout);
  if (form[0] != '\0') fprintf(stderr, form, value);
}

void tsr__blas_cblas_xerbla(int row, int info, const char *rout, const char *form, int value) {
  pthread_once(&tsr__blas_report_once, tsr__blas_report_init);
  tsr__blas_report_lock_take();
  RowMajorStrg = row;
  tsr__blas_cblas_report(row, info, rout, form, value);
  RowMajorStrg = 0; /* as the reference leaves it after every call */
  tsr__blas_report_lock_drop();
}
