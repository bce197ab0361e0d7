/*
 * AVX2+FMA micro-kernels, compiled with -mavx2 -mfma (gemm.cmake) and called only after
 * run-time detection (gemm_kernels.c). x86-64 only.
 *
 * Register block 6 x (2 vectors): 6x16 for f32, 6x8 for f64 (the classic Haswell shape). The
 * 12 accumulators, the two B vectors of the current k step and one broadcast A element use 15
 * of the 16 ymm registers; per k step 2 aligned vector loads of B and 6 broadcasts of A feed
 * 12 FMAs.
 */
#include "omp/gemm.h"

#if defined(TSR__GEMM_X86)
#include <immintrin.h>

/* Prefetch distance (k steps) of the A micro-panel, which streams from L2. */
#define TSR__PF_A 8

#define ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)

/* ---------------------------------------------------------------- f64, 6x8 ------------- */

#define D_DECL(i) __m256d c##i##_0 = _mm256_setzero_pd(), c##i##_1 = _mm256_setzero_pd();
#define D_FMA(i)                                                                               \
  {                                                                                            \
    const __m256d a_ = _mm256_broadcast_sd(a_p + (i));                                         \
    c##i##_0 = _mm256_fmadd_pd(a_, b_0, c##i##_0);                                             \
    c##i##_1 = _mm256_fmadd_pd(a_, b_1, c##i##_1);                                             \
  }
#define D_STEP(u)                                                                              \
  {                                                                                            \
    const double *a_p = ap + (u) * 6;                                                          \
    const __m256d b_0 = _mm256_load_pd(bp + (u) * 8);                                          \
    const __m256d b_1 = _mm256_load_pd(bp + (u) * 8 + 4);                                      \
    ROWS6(D_FMA)                                                                               \
  }
#define D_PREFETCH_C(i)                                                                        \
  _mm_prefetch((const char *)(c + (i) * rs_c), _MM_HINT_T0);                                   \
  _mm_prefetch((const char *)(c + (i) * rs_c + 7 * cs_c), _MM_HINT_T0);
#define D_STORE0(i)                                                                            \
  _mm256_storeu_pd(c + (i) * rs_c, _mm256_mul_pd(va, c##i##_0));                               \
  _mm256_storeu_pd(c + (i) * rs_c + 4, _mm256_mul_pd(va, c##i##_1));
#define D_STOREB(i)                                                                            \
  _mm256_storeu_pd(c + (i) * rs_c,                                                             \
                   _mm256_fmadd_pd(vb, _mm256_loadu_pd(c + (i) * rs_c),                        \
                                   _mm256_mul_pd(va, c##i##_0)));                              \
  _mm256_storeu_pd(c + (i) * rs_c + 4,                                                         \
                   _mm256_fmadd_pd(vb, _mm256_loadu_pd(c + (i) * rs_c + 4),                    \
                                   _mm256_mul_pd(va, c##i##_1)));
#define D_SPILL(i)                                                                             \
  _mm256_storeu_pd(t + (i) * 8, c##i##_0);                                                     \
  _mm256_storeu_pd(t + (i) * 8 + 4, c##i##_1);

void tsr__gemm_ukr_avx2_f64(int64_t k, double alpha, const double *ap, const double *bp,
                            double beta, double *c, int64_t rs_c, int64_t cs_c) {
  ROWS6(D_DECL)
  if (beta != 0) {
    ROWS6(D_PREFETCH_C)
  }
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    /* 4 steps of A are 4*6*8 = 192 bytes: three lines. */
    _mm_prefetch((const char *)(ap + TSR__PF_A * 6), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + TSR__PF_A * 6 + 8), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + TSR__PF_A * 6 + 16), _MM_HINT_T0);
    D_STEP(0) D_STEP(1) D_STEP(2) D_STEP(3)
    ap += 4 * 6;
    bp += 4 * 8;
  }
  for (; p < k; ++p) {
    D_STEP(0)
    ap += 6;
    bp += 8;
  }
  const __m256d va = _mm256_set1_pd(alpha);
  if (cs_c == 1) {
    if (beta == 0) {
      ROWS6(D_STORE0)
    } else {
      const __m256d vb = _mm256_set1_pd(beta);
      ROWS6(D_STOREB)
    }
    return;
  }
  double t[6 * 8];
  ROWS6(D_SPILL)
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 8; ++j) {
      double *cij = c + i * rs_c + j * cs_c;
      *cij = beta == 0 ? alpha * t[i * 8 + j] : alpha * t[i * 8 + j] + beta * *cij;
    }
}

/* ---------------------------------------------------------------- f32, 6x16 ------------ */

#define S_DECL(i) __m256 c##i##_0 = _mm256_setzero_ps(), c##i##_1 = _mm256_setzero_ps();
#define S_FMA(i)                                                                               \
  {                                                                                            \
    const __m256 a_ = _mm256_broadcast_ss(a_p + (i));                                          \
    c##i##_0 = _mm256_fmadd_ps(a_, b_0, c##i##_0);                                             \
    c##i##_1 = _mm256_fmadd_ps(a_, b_1, c##i##_1);                                             \
  }
#define S_STEP(u)                                                                              \
  {                                                                                            \
    const float *a_p = ap + (u) * 6;                                                           \
    const __m256 b_0 = _mm256_load_ps(bp + (u) * 16);                                          \
    const __m256 b_1 = _mm256_load_ps(bp + (u) * 16 + 8);                                      \
    ROWS6(S_FMA)                                                                               \
  }
#define S_PREFETCH_C(i)                                                                        \
  _mm_prefetch((const char *)(c + (i) * rs_c), _MM_HINT_T0);                                   \
  _mm_prefetch((const char *)(c + (i) * rs_c + 15 * cs_c), _MM_HINT_T0);
#define S_STORE0(i)                                                                            \
  _mm256_storeu_ps(c + (i) * rs_c, _mm256_mul_ps(va, c##i##_0));                               \
  _mm256_storeu_ps(c + (i) * rs_c + 8, _mm256_mul_ps(va, c##i##_1));
#define S_STOREB(i)                                                                            \
  _mm256_storeu_ps(c + (i) * rs_c,                                                             \
                   _mm256_fmadd_ps(vb, _mm256_loadu_ps(c + (i) * rs_c),                        \
                                   _mm256_mul_ps(va, c##i##_0)));                              \
  _mm256_storeu_ps(c + (i) * rs_c + 8,                                                         \
                   _mm256_fmadd_ps(vb, _mm256_loadu_ps(c + (i) * rs_c + 8),                    \
                                   _mm256_mul_ps(va, c##i##_1)));
#define S_SPILL(i)                                                                             \
  _mm256_storeu_ps(t + (i) * 16, c##i##_0);                                                    \
  _mm256_storeu_ps(t + (i) * 16 + 8, c##i##_1);

void tsr__gemm_ukr_avx2_f32(int64_t k, float alpha, const float *ap, const float *bp,
                            float beta, float *c, int64_t rs_c, int64_t cs_c) {
  ROWS6(S_DECL)
  if (beta != 0) {
    ROWS6(S_PREFETCH_C)
  }
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    /* 4 steps of A are 4*6*4 = 96 bytes: two lines. */
    _mm_prefetch((const char *)(ap + TSR__PF_A * 6), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + TSR__PF_A * 6 + 16), _MM_HINT_T0);
    S_STEP(0) S_STEP(1) S_STEP(2) S_STEP(3)
    ap += 4 * 6;
    bp += 4 * 16;
  }
  for (; p < k; ++p) {
    S_STEP(0)
    ap += 6;
    bp += 16;
  }
  const __m256 va = _mm256_set1_ps(alpha);
  if (cs_c == 1) {
    if (beta == 0) {
      ROWS6(S_STORE0)
    } else {
      const __m256 vb = _mm256_set1_ps(beta);
      ROWS6(S_STOREB)
    }
    return;
  }
  float t[6 * 16];
  ROWS6(S_SPILL)
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 16; ++j) {
      float *cij = c + i * rs_c + j * cs_c;
      *cij = beta == 0 ? alpha * t[i * 16 + j] : alpha * t[i * 16 + j] + beta * *cij;
    }
}

#else
/* ISO C forbids an empty translation unit. */
typedef int tsr__gemm_ukr_avx2_unused;
#endif
