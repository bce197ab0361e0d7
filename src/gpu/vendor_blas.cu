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

/* The row-major product as the column-major C^T = op(B)^T op(A)^T (see the top). */
static cublasStatus_t tsr__gpu_blas_gemm(cublasHandle_t h, const tsr__gemm_args *g) {
  const cublasOperation_t op_a = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
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
  TSR_CHECK(g->dtype == TSR_F32 || g->dtype == TSR_F64, TSR_ERR_DTYPE,
            "GEMM needs f32 or f64, got %s", tsr_dtype_name(g->dtype));
  cublasHandle_t h = NULL;
  TSR_CALL(tsr__gpu_blas_handle(dev, s, &h));
  cublasStatus_t st = tsr__gpu_blas_gemm(h, g);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) {
    TSR_CALL(tsr__gpu_trim(dev));
    st = tsr__gpu_blas_gemm(h, g);
  }
  if (st != CUBLAS_STATUS_SUCCESS)
    return tsr__gpu_blas_status(st, g->dtype == TSR_F32 ? "cublasSgemm" : "cublasDgemm");
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
