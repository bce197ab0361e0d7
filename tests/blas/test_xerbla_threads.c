/*
 * Concurrent invalid CBLAS calls (issue 48): the drop-in writes the reference's process-wide
 * RowMajorStrg around each error report, and a cblas_xerbla reads it to map row-major
 * positions back. Several threads here make invalid cblas_dgemm / cblas_sgemm calls at once,
 * row- and column-major, and this program's cblas_xerbla checks, for every report, that it saw
 * the RowMajorStrg of its own call (1 for row-major, 0 for column-major and for a bad layout)
 * and the reference's position. Built against the drop-in's sources compiled with
 * -fsanitize=thread (tests/blas.cmake), so ThreadSanitizer also reports any unsynchronized
 * access to RowMajorStrg (exit status 66): before the reports were serialized, it reported the
 * race on the first run.
 *
 * ThreadSanitizer sees a race only between accesses that no synchronization orders, and the
 * library's first count on a thread takes a lock (its per-thread counter block), as does a
 * thread's exit: a thread that ran all its calls before another made its first would be
 * ordered before it. So every thread makes one invalid call first, then all meet at a
 * barrier, and only then make their calls at once.
 *
 * A plain C program (no cmocka): it prints what went wrong and exits 1.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/blas.h"

extern int RowMajorStrg;

#define EXPORTED __attribute__((visibility("default")))
#define THREADS 6
#define ROUNDS 400

/* What the calling thread expects its report to carry, and what it got. */
static _Thread_local int want_row = -1, seen_row = -1, seen_info = 0, reports = 0;

EXPORTED void cblas_xerbla(int info, const char *rout, const char *form, ...) {
  (void)form;
  (void)rout;
  /* The reference tester's mapping, done while RowMajorStrg still holds the call's value. */
  const int row = RowMajorStrg;
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
  seen_row = row;
  seen_info = info;
  reports++;
}

/* One invalid call: the layout, the argument made bad, and the position the reference
   cblas_xerbla reports for it (after the row-major mapping). */
typedef struct bad_call {
  int layout, ta, tb, m, n, k, lda, ldb, ldc, info;
} bad_call;

static const bad_call calls[] = {
    {CblasColMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 2, 2, 2, 4}, /* M */
    {CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 2, 2, 2, 4}, /* M, row-major */
    {CblasColMajor, CblasNoTrans, CblasNoTrans, 2, -1, 2, 2, 2, 2, 5}, /* N */
    {CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, -1, 2, 2, 2, 2, 5}, /* N, row-major */
    {CblasColMajor, CblasNoTrans, CblasNoTrans, 4, 2, 2, 1, 2, 4, 9},  /* lda */
    {CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 4, 1, 2, 2, 9},  /* lda, row-major */
    {CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 4, 2, 2, 1, 4, 11}, /* ldb, row-major */
    {CblasRowMajor, 999, CblasNoTrans, 2, 2, 2, 2, 2, 2, 2},           /* TransA */
    {CblasColMajor, CblasNoTrans, 999, 2, 2, 2, 2, 2, 2, 3},           /* TransB */
    {999, CblasNoTrans, CblasNoTrans, 2, 2, 2, 2, 2, 2, 1},            /* layout */
};
#define NCALLS (sizeof calls / sizeof calls[0])

static pthread_barrier_t start;
static int failures;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(int thread, size_t c, const char *what, int got, int want) {
  pthread_mutex_lock(&failures_lock);
  if (failures++ < 10)
    fprintf(stderr, "thread %d, call %zu: %s %d, expected %d\n", thread, c, what, got, want);
  pthread_mutex_unlock(&failures_lock);
}

static void *worker(void *arg) {
  const int t = (int)(size_t)arg;
  double a[16] = {0}, b[16] = {0}, c[16] = {0};
  float fa[16] = {0}, fb[16] = {0}, fc[16] = {0};
  /* The thread's first call (its counter block), then all threads at once. */
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 1.0, a, 2, b, 2, 0.0, c, 2);
  pthread_barrier_wait(&start);
  for (int r = 0; r < ROUNDS; r++)
    for (size_t i = 0; i < NCALLS; i++) {
      /* Each thread walks the list from its own place, so row- and column-major reports of
         different threads overlap. */
      const bad_call *x = &calls[(i + (size_t)t) % NCALLS];
      want_row = x->layout == CblasRowMajor;
      reports = 0;
      if ((r + t) % 2)
        cblas_dgemm((CBLAS_LAYOUT)x->layout, (CBLAS_TRANSPOSE)x->ta, (CBLAS_TRANSPOSE)x->tb, x->m,
                    x->n, x->k, 1.0, a, x->lda, b, x->ldb, 0.0, c, x->ldc);
      else
        cblas_sgemm((CBLAS_LAYOUT)x->layout, (CBLAS_TRANSPOSE)x->ta, (CBLAS_TRANSPOSE)x->tb, x->m,
                    x->n, x->k, 1.0f, fa, x->lda, fb, x->ldb, 0.0f, fc, x->ldc);
      size_t which = (i + (size_t)t) % NCALLS;
      if (reports != 1) fail(t, which, "reports", reports, 1);
      if (seen_row != want_row)
        fail(t, which, "RowMajorStrg seen by cblas_xerbla", seen_row, want_row);
      if (seen_info != x->info) fail(t, which, "reported position", seen_info, x->info);
    }
  return NULL;
}

int main(void) {
  pthread_t th[THREADS];
  pthread_barrier_init(&start, NULL, THREADS);
  for (int t = 0; t < THREADS; t++)
    if (pthread_create(&th[t], NULL, worker, (void *)(size_t)t) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  pthread_barrier_destroy(&start);
  if (RowMajorStrg != 0) fail(-1, 0, "RowMajorStrg after the calls", RowMajorStrg, 0);
  printf("%d threads x %d rounds x %zu invalid calls: %d failures\n", THREADS, ROUNDS, NCALLS,
         failures);
  return failures ? 1 : 0;
}
