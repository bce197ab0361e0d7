/*
 * The vendor GEMM path: cuBLAS (hipBLAS after hipify). Built when the build found the
 * library (TSR_GPU_VENDOR_BLAS=1, set by src/gpu/gpu.cmake); otherwise the path reports
 * TSR_ERR_UNSUPPORTED and the native kernels serve.
 *
 * cuBLAS is column-major. A row-major m x n matrix with leading dimension ld is, read
 * column-major, its n x m transpose with the same ld, so the row-major product
 * C = op(A) op(B) is computed as the column-major C^T = op(B)^T op(A)^T: swap the operands
 * and m with n, keep the transpose flags and leading dimensions.
 */
#include "gpu_internal.cuh"

#if TSR_GPU_VENDOR_BLAS

#include <cublas_v2.h>

#include <limits.h>
#include <pthread.h>

/* One handle per device, bound to the device's stream, created on first use. */
#define TSR__GPU_BLAS_MAX_DEVICES 64
static cublasHandle_t tsr__gpu_blas_handles[TSR__GPU_BLAS_MAX_DEVICES];
static pthread_mutex_t tsr__gpu_blas_lock = PTHREAD_MUTEX_INITIALIZER;

static tsr_status tsr__gpu_blas_status(cublasStatus_t st, const char *call) {
  return tsr__set_error(st == CUBLAS_STATUS_ALLOC_FAILED ? TSR_ERR_OUT_OF_MEMORY : TSR_ERR_BLAS,
                        "tsr_gemm", "%s failed with cuBLAS status %d", call, (int)st);
}

static tsr_status tsr__gpu_blas_handle(tsr_device dev, cudaStream_t stream, cublasHandle_t *out) {
  TSR_CHECK(dev.index >= 0 && dev.index < TSR__GPU_BLAS_MAX_DEVICES, TSR_ERR_NO_DEVICE,
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

tsr_status tsr__gpu_gemm_vendor(tsr_device dev, const tsr__gemm_args *g) {
  cudaStream_t s = NULL;
  TSR_CALL(tsr__gpu_begin(dev, &s));
  if (g->m == 0 || g->n == 0) return TSR_OK;
  TSR_CHECK(g->m <= INT_MAX && g->n <= INT_MAX && g->k <= INT_MAX && g->lda <= INT_MAX &&
                g->ldb <= INT_MAX && g->ldc <= INT_MAX,
            TSR_ERR_UNSUPPORTED,
            "m=%lld n=%lld k=%lld or a leading dimension exceeds the vendor BLAS's 32-bit "
            "sizes; use the native path",
            (long long)g->m, (long long)g->n, (long long)g->k);
  cublasHandle_t h = NULL;
  TSR_CALL(tsr__gpu_blas_handle(dev, s, &h));
  const cublasOperation_t op_a = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = (int)g->m, n = (int)g->n, k = (int)g->k;
  cublasStatus_t st;
  if (g->dtype == TSR_F32) {
    const float alpha = (float)g->alpha, beta = (float)g->beta;
    st = cublasSgemm(h, op_b, op_a, n, m, k, &alpha, (const float *)g->b, (int)g->ldb,
                     (const float *)g->a, (int)g->lda, &beta, (float *)g->c, (int)g->ldc);
  } else if (g->dtype == TSR_F64) {
    const double alpha = g->alpha, beta = g->beta;
    st = cublasDgemm(h, op_b, op_a, n, m, k, &alpha, (const double *)g->b, (int)g->ldb,
                     (const double *)g->a, (int)g->lda, &beta, (double *)g->c, (int)g->ldc);
  } else {
    return tsr__set_error(TSR_ERR_DTYPE, "tsr_gemm", "GEMM needs f32 or f64, got %s",
                          tsr_dtype_name(g->dtype));
  }
  if (st != CUBLAS_STATUS_SUCCESS)
    return tsr__gpu_blas_status(st, g->dtype == TSR_F32 ? "cublasSgemm" : "cublasDgemm");
  return TSR_OK;
}

#else /* !TSR_GPU_VENDOR_BLAS */

tsr_status tsr__gpu_gemm_vendor(tsr_device dev, const tsr__gemm_args *g) {
  (void)dev;
  (void)g;
  return tsr__set_error(TSR_ERR_UNSUPPORTED, "tsr_gemm",
                        "the vendor GEMM path needs " TSR__GPU_RUNTIME
                        "'s BLAS library, which was not found when Tessera was built");
}

#endif /* TSR_GPU_VENDOR_BLAS */
