/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtessera_blas (and with it libtessera) loads through dlopen in a process whose static TLS
 * surplus other libraries used up first, as in a Python process that imported other native
 * modules before the BLAS, and computes right, on the loading thread and on a thread started
 * after the load. With the initial-exec TLS model the load failed: "libtessera.so.0: cannot
 * allocate memory in static TLS block" (the library's thread-locals now use TLS descriptors).
 *
 * The program must not link libtessera (it would then be loaded at start-up, in static TLS), so
 * it uses neither cmocka's suite helpers nor the suite's reference GEMM (tsr_test_common links
 * the library): a plain main, exit status 0 (passed), 1 (failed) or 77 (skipped: the stand-in
 * library itself could not be loaded on this C library). It does link what libtessera links
 * (tests/blas.cmake), so that only libtessera's own TLS is asked of the surplus.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *,
                         int, double, double *, int);
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112, M = 7, N = 5, K = 9 };
static dgemm_fn dgemm;

/* C = A^T B (row-major, A stored K x M) by cblas_dgemm, against a float64 loop on values from a
   linear congruential generator in [-1, 1); returns the largest relative error. */
static double check_product(uint64_t seed) {
  double a[K * M], b[K * N], c[M * N];
  for (int i = 0; i < K * M + K * N; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    const double v = (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
    if (i < K * M)
      a[i] = v;
    else
      b[i - K * M] = v;
  }
  dgemm(ROW_MAJOR, TRANS, NO_TRANS, M, N, K, 1.0, a, M, b, N, 0.0, c, N);
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0, mag = 0;
      for (int p = 0; p < K; ++p) {
        ref += a[p * M + i] * b[p * N + j];
        mag += fabs(a[p * M + i] * b[p * N + j]);
      }
      const double e = fabs(c[i * N + j] - ref) / (mag > 0 ? mag : 1);
      if (!(e <= worst)) worst = e; /* NaN counts as the worst */
    }
  return worst;
}

static void *on_thread(void *err) {
  *(double *)err = check_product(7);
  return NULL;
}

int main(void) {
  void *ie = dlopen(TSR_TEST_IE_LIB, RTLD_NOW | RTLD_LOCAL);
  if (!ie) {
    printf("skipped: the stand-in library did not load: %s\n", dlerror());
    return 77;
  }
  char *(*touch)(void) = (char *(*)(void))dlsym(ie, "tsr_test_ie_touch");
  if (!touch || !touch()) {
    printf("FAILED: the stand-in library has no tsr_test_ie_touch\n");
    return 1;
  }
  void *blas = dlopen(TSR_TEST_BLAS_LIB, RTLD_NOW | RTLD_LOCAL);
  if (!blas) {
    printf("FAILED: dlopen(%s) after 1 KiB of initial-exec TLS: %s\n", TSR_TEST_BLAS_LIB,
           dlerror());
    return 1;
  }
  dgemm = (dgemm_fn)dlsym(blas, "cblas_dgemm");
  if (!dgemm) {
    printf("FAILED: no cblas_dgemm in %s\n", TSR_TEST_BLAS_LIB);
    return 1;
  }
  const double here = check_product(3);
  double there = INFINITY;
  pthread_t t;
  if (pthread_create(&t, NULL, on_thread, &there) != 0 || pthread_join(t, NULL) != 0) {
    printf("FAILED: cannot run the second thread\n");
    return 1;
  }
  printf("relative error: %.3g (loading thread), %.3g (new thread)\n", here, there);
  if (!(here < 1e-14 && there < 1e-14)) {
    printf("FAILED: wrong product\n");
    return 1;
  }
  return 0;
}
