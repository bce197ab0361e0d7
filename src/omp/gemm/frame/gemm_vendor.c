/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU GEMM's vendor path (TSR_GEMM_VENDOR): a CBLAS found at configure time
 * (TESSERA_WITH_VENDOR_BLAS, gemm.cmake), loaded at run time.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "omp/gemm/gemm.h" /* first: tessera/config.h says TSR_HAVE_VENDOR_BLAS */

#if TSR_HAVE_VENDOR_BLAS && defined(TSR_OMP_VENDOR_BLAS_LIB)
#include <dlfcn.h>
#endif

/*
 * The vendor CBLAS is loaded with dlopen(RTLD_LOCAL) from the soname found at configure time
 * and its functions are looked up in that handle with dlsym. Calling cblas_dgemm by symbol
 * name instead would resolve to Tessera's own BLAS drop-in when that is LD_PRELOADed (and it
 * forwards to tsr_gemm: infinite recursion); a handle lookup only sees the vendor library.
 * The library is not linked into libtessera, so it costs nothing unless the vendor path runs.
 */
#if TSR_HAVE_VENDOR_BLAS && defined(TSR_OMP_VENDOR_BLAS_LIB)
/* CBLAS enumerators (values fixed by the CBLAS standard, so no cblas.h is needed). */
enum {
  TSR__CBLAS_ROW_MAJOR = 101,
  TSR__CBLAS_NO_TRANS = 111,
  TSR__CBLAS_TRANS = 112,
  TSR__CBLAS_CONJ_TRANS = 113
};
typedef void (*tsr__cblas_sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
                                    const float *, int, float, float *, int);
typedef void (*tsr__cblas_dgemm_fn)(int, int, int, int, int, int, double, const double *, int,
                                    const double *, int, double, double *, int);
/* cblas_cgemm / cblas_zgemm: scalars by pointer (the CBLAS standard). */
typedef void (*tsr__cblas_xgemm_fn)(int, int, int, int, int, int, const void *, const void *, int,
                                    const void *, int, const void *, void *, int);
static pthread_once_t tsr__vendor_once = PTHREAD_ONCE_INIT;
/* NULL when the library lacks them (the real path still works). */
static tsr__cblas_xgemm_fn tsr__vendor_cgemm, tsr__vendor_zgemm;
static tsr__cblas_sgemm_fn tsr__vendor_sgemm;
static tsr__cblas_dgemm_fn tsr__vendor_dgemm;
static char tsr__vendor_error[256];

static void tsr__vendor_load(void) {
  const char *names[] = {TSR_OMP_VENDOR_BLAS_LIB, TSR_OMP_VENDOR_BLAS_PATH};
  void *h = NULL;
  for (int i = 0; i < 2 && !h; ++i)
    h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(tsr__vendor_error, sizeof tsr__vendor_error, "%s", e ? e : "dlopen failed");
    return;
  }
  /* dlsym returns void *; converting through memcpy keeps ISO C pedantic mode quiet. */
  void *s = dlsym(h, "cblas_sgemm"), *d = dlsym(h, "cblas_dgemm");
  if (!s || !d) {
    snprintf(tsr__vendor_error, sizeof tsr__vendor_error, "%s has no cblas_sgemm/cblas_dgemm",
             TSR_OMP_VENDOR_BLAS_LIB);
    dlclose(h);
    return;
  }
  memcpy(&tsr__vendor_sgemm, &s, sizeof s);
  memcpy(&tsr__vendor_dgemm, &d, sizeof d);
  void *c = dlsym(h, "cblas_cgemm"), *z = dlsym(h, "cblas_zgemm");
  if (c) memcpy(&tsr__vendor_cgemm, &c, sizeof c);
  if (z) memcpy(&tsr__vendor_zgemm, &z, sizeof z);
  /* The handle stays open for the life of the process. */
}

tsr_status tsr__gemm_vendor(const tsr__gemm_args *g) {
  if (g->m == 0 || g->n == 0) return TSR_OK;
  pthread_once(&tsr__vendor_once, tsr__vendor_load);
  if (!tsr__vendor_sgemm || !tsr__vendor_dgemm)
    return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__,
                          "the vendor CBLAS (%s) cannot be loaded: %s", TSR_OMP_VENDOR_BLAS_LIB,
                          tsr__vendor_error);
  const int64_t lim = 2147483647;
  if (g->m > lim || g->n > lim || g->k > lim || g->lda > lim || g->ldb > lim || g->ldc > lim)
    return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__,
                          "a size or leading dimension exceeds the 32-bit CBLAS interface "
                          "(m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld)",
                          (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->lda,
                          (long long)g->ldb, (long long)g->ldc);
  const bool cplx = g->dtype == TSR_C64 || g->dtype == TSR_C128;
  const int ta =
      g->trans_a ? (g->conj_a ? TSR__CBLAS_CONJ_TRANS : TSR__CBLAS_TRANS) : TSR__CBLAS_NO_TRANS;
  const int tb =
      g->trans_b ? (g->conj_b ? TSR__CBLAS_CONJ_TRANS : TSR__CBLAS_TRANS) : TSR__CBLAS_NO_TRANS;
  if (cplx) {
    const tsr__cblas_xgemm_fn f = g->dtype == TSR_C64 ? tsr__vendor_cgemm : tsr__vendor_zgemm;
    if (!f)
      return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__, "the vendor CBLAS (%s) has no %s",
                            TSR_OMP_VENDOR_BLAS_LIB,
                            g->dtype == TSR_C64 ? "cblas_cgemm" : "cblas_zgemm");
    if ((g->conj_a && !g->trans_a) || (g->conj_b && !g->trans_b))
      return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__,
                            "CBLAS cannot express conj(%s) without a transpose (conj_a %d, "
                            "trans_a %d, conj_b %d, trans_b %d); use the native path",
                            g->conj_a && !g->trans_a ? "A" : "B", (int)g->conj_a, (int)g->trans_a,
                            (int)g->conj_b, (int)g->trans_b);
    const float fa[2] = {(float)g->alpha, (float)g->alpha_im},
                fb[2] = {(float)g->beta, (float)g->beta_im};
    const double da[2] = {g->alpha, g->alpha_im}, db[2] = {g->beta, g->beta_im};
    const bool c64 = g->dtype == TSR_C64;
    f(TSR__CBLAS_ROW_MAJOR, ta, tb, (int)g->m, (int)g->n, (int)g->k, c64 ? (const void *)fa : da,
      g->a, (int)g->lda, g->b, (int)g->ldb, c64 ? (const void *)fb : db, g->c, (int)g->ldc);
  } else if (g->dtype == TSR_F32)
    tsr__vendor_sgemm(TSR__CBLAS_ROW_MAJOR, ta, tb, (int)g->m, (int)g->n, (int)g->k,
                      (float)g->alpha, g->a, (int)g->lda, g->b, (int)g->ldb, (float)g->beta, g->c,
                      (int)g->ldc);
  else
    tsr__vendor_dgemm(TSR__CBLAS_ROW_MAJOR, ta, tb, (int)g->m, (int)g->n, (int)g->k, g->alpha, g->a,
                      (int)g->lda, g->b, (int)g->ldb, g->beta, g->c, (int)g->ldc);
  tsr__count(TSR__COUNT_GEMM_VENDOR, 1);
  return TSR_OK;
}
#else
tsr_status tsr__gemm_vendor(const tsr__gemm_args *g) {
  return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__,
                        "the vendor GEMM path is not built for the CPU (configure with "
                        "-DTESSERA_WITH_VENDOR_BLAS=ON and a CBLAS such as OpenBLAS)");
}
#endif
