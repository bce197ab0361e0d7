/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The vendor GEMM path: cuBLAS (hipBLAS after hipify). Built when the build found the
 * library (TSR_GPU_VENDOR_BLAS=1, set by src/gpu/gpu.cmake); otherwise the path reports
 * TSR_ERR_UNSUPPORTED and the native kernels serve.
 *
 * cuBLAS is column-major. A row-major m x n matrix with leading dimension ld is, read
 * column-major, its n x m transpose with the same ld, so the row-major product
 * C = op(A) op(B) is computed as the column-major C^T = op(B)^T op(A)^T: swap the operands
 * and m with n, keep the transpose flags and leading dimensions.
 *
 * Complex (c64: cublasCgemm, c128: cublasZgemm): the same mapping. A row-major op(X) that is
 * the conjugate transpose X^H maps to the column-major CUBLAS_OP_C of the same buffer
 * ((X^H)^T = conj(X), the buffer read column-major is X^T, and conj(X) = (X^T)^H). A conjugate
 * without transpose (conj_x without trans_x) would need a column-major conj-no-transpose,
 * which cuBLAS and hipBLAS do not have: tsr__gpu_gemm (gemm.cu) sends such calls to the native
 * kernels and this file refuses them (TSR_ERR_UNSUPPORTED). alpha and beta are passed as the
 * library's complex type (cuComplex / hipblasComplex: two floats or doubles, real first) without
 * naming it, through tsr__blas_cptr below, so the one source serves both libraries.
 *
 * Sizes: cuBLAS 12 (CUDA 12) and later has the 64-bit-index entry points (cublasSgemm_64); with an
 * older cuBLAS, and with hipBLAS, sizes must fit in int and larger problems get
 * TSR_ERR_UNSUPPORTED (the native path has no such limit).
 *
 * Memory: cuBLAS allocates its workspace itself; CUBLAS_STATUS_ALLOC_FAILED releases
 * Tessera's cache of device memory (tsr_device_trim) and retries once.
 */
#include "gpu_internal.cuh"

#if TSR_GPU_VENDOR_BLAS

#include <cublas_v2.h>

#include <limits.h>
#include <pthread.h>

#if !defined(__HIPCC__) && defined(CUDART_VERSION) && CUDART_VERSION >= 12000
#define TSR__GPU_BLAS_64 1
typedef int64_t tsr__blas_int;
#else
#define TSR__GPU_BLAS_64 0
typedef int tsr__blas_int;
#endif

/* One handle per device, bound to the device's stream, created on first use. */
static cublasHandle_t tsr__gpu_blas_handles[TSR__GPU_MAX_DEVICES];
static pthread_mutex_t tsr__gpu_blas_lock = PTHREAD_MUTEX_INITIALIZER;

static tsr_status tsr__gpu_blas_status(cublasStatus_t st, const char *call) {
  return tsr__set_error(st == CUBLAS_STATUS_ALLOC_FAILED ? TSR_ERR_OUT_OF_MEMORY : TSR_ERR_BLAS,
                        __func__, "%s failed with cuBLAS status %d", call, (int)st);
}

static tsr_status tsr__gpu_blas_handle(tsr_device dev, cudaStream_t stream, cublasHandle_t *out) {
  TSR_CHECK(dev.index >= 0 && dev.index < TSR__GPU_MAX_DEVICES, TSR_ERR_NO_DEVICE,
            "device index %d out of range", dev.index);
  pthread_mutex_lock(&tsr__gpu_blas_lock);
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  if (!tsr__gpu_blas_handles[dev.index]) {
    cublasHandle_t h = NULL;
    st = cublasCreate(&h);
    if (st == CUBLAS_STATUS_SUCCESS) {
      st = cublasSetStream(h, stream);
      if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
      if (st == CUBLAS_STATUS_SUCCESS)
        tsr__gpu_blas_handles[dev.index] = h;
      else
        (void)cublasDestroy(h);
    }
  }
  *out = tsr__gpu_blas_handles[dev.index];
  pthread_mutex_unlock(&tsr__gpu_blas_lock);
  if (st != CUBLAS_STATUS_SUCCESS) return tsr__gpu_blas_status(st, "cublasCreate");
  return TSR_OK;
}

/* A pointer to complex data (or a complex scalar) converted to the pointer type the called
   function declares: cuComplex / cuDoubleComplex, hipblasComplex / hipblasDoubleComplex, all
   (re, im) pairs like the host's tsr_complex64 / tsr_complex128. */
struct tsr__blas_cptr {
  const void *p;
  template <typename P> operator const P *() const { return static_cast<const P *>(p); }
};
struct tsr__blas_mptr {
  void *p;
  template <typename P> operator P *() const { return static_cast<P *>(p); }
};

static cublasOperation_t tsr__gpu_blas_op(bool trans, bool conj) {
  return !trans ? CUBLAS_OP_N : conj ? CUBLAS_OP_C : CUBLAS_OP_T;
}

/* The row-major product as the column-major C^T = op(B)^T op(A)^T (see the top). */
static cublasStatus_t tsr__gpu_blas_gemm(cublasHandle_t h, const tsr__gemm_args *g) {
  const cublasOperation_t op_a = tsr__gpu_blas_op(g->trans_a, g->conj_a);
  const cublasOperation_t op_b = tsr__gpu_blas_op(g->trans_b, g->conj_b);
  const tsr__blas_int m = (tsr__blas_int)g->m, n = (tsr__blas_int)g->n, k = (tsr__blas_int)g->k;
  const tsr__blas_int lda = (tsr__blas_int)g->lda, ldb = (tsr__blas_int)g->ldb,
                      ldc = (tsr__blas_int)g->ldc;
  if (g->dtype == TSR_F32) {
    const float alpha = (float)g->alpha, beta = (float)g->beta;
#if TSR__GPU_BLAS_64
    return cublasSgemm_64(h, op_b, op_a, n, m, k, &alpha, (const float *)g->b, ldb,
                          (const float *)g->a, lda, &beta, (float *)g->c, ldc);
#else
    return cublasSgemm(h, op_b, op_a, n, m, k, &alpha, (const float *)g->b, ldb,
                       (const float *)g->a, lda, &beta, (float *)g->c, ldc);
#endif
  }
  if (g->dtype == TSR_C64) {
    const tsr_complex64 alpha = {(float)g->alpha, (float)g->alpha_im},
                        beta = {(float)g->beta, (float)g->beta_im};
    const tsr__blas_cptr pa = {&alpha}, pb = {&beta}, a = {g->a}, b = {g->b};
    const tsr__blas_mptr c = {g->c};
#if TSR__GPU_BLAS_64
    return cublasCgemm_64(h, op_b, op_a, n, m, k, pa, b, ldb, a, lda, pb, c, ldc);
#else
    return cublasCgemm(h, op_b, op_a, n, m, k, pa, b, ldb, a, lda, pb, c, ldc);
#endif
  }
  if (g->dtype == TSR_C128) {
    const tsr_complex128 alpha = {g->alpha, g->alpha_im}, beta = {g->beta, g->beta_im};
    const tsr__blas_cptr pa = {&alpha}, pb = {&beta}, a = {g->a}, b = {g->b};
    const tsr__blas_mptr c = {g->c};
#if TSR__GPU_BLAS_64
    return cublasZgemm_64(h, op_b, op_a, n, m, k, pa, b, ldb, a, lda, pb, c, ldc);
#else
    return cublasZgemm(h, op_b, op_a, n, m, k, pa, b, ldb, a, lda, pb, c, ldc);
#endif
  }
  const double alpha = g->alpha, beta = g->beta;
#if TSR__GPU_BLAS_64
  return cublasDgemm_64(h, op_b, op_a, n, m, k, &alpha, (const double *)g->b, ldb,
                        (const double *)g->a, lda, &beta, (double *)g->c, ldc);
#else
  return cublasDgemm(h, op_b, op_a, n, m, k, &alpha, (const double *)g->b, ldb,
                     (const double *)g->a, lda, &beta, (double *)g->c, ldc);
#endif
}

tsr_status tsr__gpu_gemm_vendor(tsr_device dev, const tsr__gemm_args *g) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  if (g->m == 0 || g->n == 0) return TSR_OK;
#if !TSR__GPU_BLAS_64
  TSR_CHECK(g->m <= INT_MAX && g->n <= INT_MAX && g->k <= INT_MAX && g->lda <= INT_MAX &&
                g->ldb <= INT_MAX && g->ldc <= INT_MAX,
            TSR_ERR_UNSUPPORTED,
            "m=%lld n=%lld k=%lld or a leading dimension exceeds the vendor BLAS's 32-bit "
            "sizes; use the native path",
            (long long)g->m, (long long)g->n, (long long)g->k);
#endif
  TSR_CHECK(g->dtype == TSR_F32 || g->dtype == TSR_F64 || g->dtype == TSR_C64 ||
                g->dtype == TSR_C128,
            TSR_ERR_DTYPE, "GEMM needs f32, f64, c64 or c128, got %s", tsr_dtype_name(g->dtype));
  TSR_CHECK(!(g->conj_a && !g->trans_a) && !(g->conj_b && !g->trans_b), TSR_ERR_UNSUPPORTED,
            "the vendor BLAS has no conjugate without transpose (conj_a=%d trans_a=%d, "
            "conj_b=%d trans_b=%d); the native path serves it",
            (int)g->conj_a, (int)g->trans_a, (int)g->conj_b, (int)g->trans_b);
  cublasHandle_t h = NULL;
  TSR_CALL(tsr__gpu_blas_handle(dev, s, &h));
  cublasStatus_t st = tsr__gpu_blas_gemm(h, g);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) {
    TSR_CALL(tsr__gpu_trim(dev));
    st = tsr__gpu_blas_gemm(h, g);
  }
  if (st != CUBLAS_STATUS_SUCCESS)
    return tsr__gpu_blas_status(st, g->dtype == TSR_F32   ? "cublasSgemm"
                                    : g->dtype == TSR_F64 ? "cublasDgemm"
                                    : g->dtype == TSR_C64 ? "cublasCgemm"
                                                          : "cublasZgemm");
  tsr__count(TSR__COUNT_GEMM_VENDOR, 1);
  return TSR_OK;
}

#else /* !TSR_GPU_VENDOR_BLAS */

tsr_status tsr__gpu_gemm_vendor(tsr_device dev, const tsr__gemm_args *g) {
  (void)dev;
  (void)g;
  return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__,
                        "the vendor GEMM path needs " TSR__GPU_RUNTIME
                        "'s BLAS library, which was not found when Tessera was built");
}

#endif /* TSR_GPU_VENDOR_BLAS */
