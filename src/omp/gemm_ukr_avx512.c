/*
 * AVX-512F micro-kernels, compiled with -mavx512f -mfma (gemm.cmake) and called only after
 * run-time detection (gemm_kernels.c). x86-64 only.
 *
 * Register block 14 x (2 vectors): 14x32 for f32, 14x16 for f64. The 28 accumulators, the two
 * B vectors of the current k step and one broadcast A element use 31 of the 32 zmm registers
 * (the row-major analogue of BLIS's Skylake-X 16x14 / 32x12 shapes). Per k step: 2 aligned
 * vector loads of B and 14 broadcasts of A (folded into the FMA as {1toN} memory operands)
 * feed 28 FMAs, so the two FMA ports, not the load ports, are the bottleneck.
 */
#include "omp/gemm.h"

#if defined(TSR__GEMM_X86)
#include <immintrin.h>

/* How far ahead (in k steps) the A micro-panel is prefetched into L1: it streams from L2
   while the B micro-panel stays in L1 (see the block-size model in gemm_kernels.c). */
#define TSR__PF_A 8

#define ROWS14(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)

/* ---------------------------------------------------------------- f64, 14x16 ----------- */

#define D_DECL(i) __m512d c##i##_0 = _mm512_setzero_pd(), c##i##_1 = _mm512_setzero_pd();
#define D_FMA(i)                                                                               \
  {                                                                                            \
    const __m512d a_ = _mm512_set1_pd(a_p[i]);                                                 \
    c##i##_0 = _mm512_fmadd_pd(a_, b_0, c##i##_0);                                             \
    c##i##_1 = _mm512_fmadd_pd(a_, b_1, c##i##_1);                                             \
  }
#define D_STEP(u)                                                                              \
  {                                                                                            \
    const double *a_p = ap + (u) * 14;                                                         \
    const __m512d b_0 = _mm512_load_pd(bp + (u) * 16);                                         \
    const __m512d b_1 = _mm512_load_pd(bp + (u) * 16 + 8);                                     \
    ROWS14(D_FMA)                                                                              \
  }
#define D_PREFETCH_C(i)                                                                        \
  _mm_prefetch((const char *)(c + (i) * rs_c), _MM_HINT_T0);                                   \
  _mm_prefetch((const char *)(c + (i) * rs_c + 15 * cs_c), _MM_HINT_T0);
#define D_STORE0(i)                                                                            \
  _mm512_storeu_pd(c + (i) * rs_c, _mm512_mul_pd(va, c##i##_0));                               \
  _mm512_storeu_pd(c + (i) * rs_c + 8, _mm512_mul_pd(va, c##i##_1));
#define D_STOREB(i)                                                                            \
  _mm512_storeu_pd(c + (i) * rs_c,                                                             \
                   _mm512_fmadd_pd(vb, _mm512_loadu_pd(c + (i) * rs_c),                        \
                                   _mm512_mul_pd(va, c##i##_0)));                              \
  _mm512_storeu_pd(c + (i) * rs_c + 8,                                                         \
                   _mm512_fmadd_pd(vb, _mm512_loadu_pd(c + (i) * rs_c + 8),                    \
                                   _mm512_mul_pd(va, c##i##_1)));
#define D_SPILL(i)                                                                             \
  _mm512_storeu_pd(t + (i) * 16, c##i##_0);                                                    \
  _mm512_storeu_pd(t + (i) * 16 + 8, c##i##_1);

void tsr__gemm_ukr_avx512_f64(int64_t k, double alpha, const double *ap, const double *bp,
                              double beta, double *c, int64_t rs_c, int64_t cs_c) {
  ROWS14(D_DECL)
  if (beta != 0) {
    ROWS14(D_PREFETCH_C)
  }
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    _mm_prefetch((const char *)(ap + TSR__PF_A * 14), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + TSR__PF_A * 14 + 8), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + TSR__PF_A * 14 + 16), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + TSR__PF_A * 14 + 24), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + TSR__PF_A * 14 + 32), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + TSR__PF_A * 14 + 40), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + TSR__PF_A * 14 + 48), _MM_HINT_T0);
    D_STEP(0) D_STEP(1) D_STEP(2) D_STEP(3)
    ap += 4 * 14;
    bp += 4 * 16;
  }
  for (; p < k; ++p) {
    D_STEP(0)
    ap += 14;
    bp += 16;
  }
  const __m512d va = _mm512_set1_pd(alpha);
  if (cs_c == 1) {
    if (beta == 0) {
      ROWS14(D_STORE0)
    } else {
      const __m512d vb = _mm512_set1_pd(beta);
      ROWS14(D_STOREB)
    }
    return;
  }
  double t[14 * 16];
  ROWS14(D_SPILL)
  for (int i = 0; i < 14; ++i)
    for (int j = 0; j < 16; ++j) {
      double *cij = c + i * rs_c + j * cs_c;
      *cij = beta == 0 ? alpha * t[i * 16 + j] : alpha * t[i * 16 + j] + beta * *cij;
    }
}

/* ---------------------------------------------------------------- f32, 14x32 ----------- */

#define S_DECL(i) __m512 c##i##_0 = _mm512_setzero_ps(), c##i##_1 = _mm512_setzero_ps();
#define S_FMA(i)                                                                               \
  {                                                                                            \
    const __m512 a_ = _mm512_set1_ps(a_p[i]);                                                  \
    c##i##_0 = _mm512_fmadd_ps(a_, b_0, c##i##_0);                                             \
    c##i##_1 = _mm512_fmadd_ps(a_, b_1, c##i##_1);                                             \
  }
#define S_STEP(u)                                                                              \
  {                                                                                            \
    const float *a_p = ap + (u) * 14;                                                          \
    const __m512 b_0 = _mm512_load_ps(bp + (u) * 32);                                          \
    const __m512 b_1 = _mm512_load_ps(bp + (u) * 32 + 16);                                     \
    ROWS14(S_FMA)                                                                              \
  }
#define S_PREFETCH_C(i)                                                                        \
  _mm_prefetch((const char *)(c + (i) * rs_c), _MM_HINT_T0);                                   \
  _mm_prefetch((const char *)(c + (i) * rs_c + 31 * cs_c), _MM_HINT_T0);
#define S_STORE0(i)                                                                            \
  _mm512_storeu_ps(c + (i) * rs_c, _mm512_mul_ps(va, c##i##_0));                               \
  _mm512_storeu_ps(c + (i) * rs_c + 16, _mm512_mul_ps(va, c##i##_1));
#define S_STOREB(i)                                                                            \
  _mm512_storeu_ps(c + (i) * rs_c,                                                             \
                   _mm512_fmadd_ps(vb, _mm512_loadu_ps(c + (i) * rs_c),                        \
                                   _mm512_mul_ps(va, c##i##_0)));                              \
  _mm512_storeu_ps(c + (i) * rs_c + 16,                                                        \
                   _mm512_fmadd_ps(vb, _mm512_loadu_ps(c + (i) * rs_c + 16),                   \
                                   _mm512_mul_ps(va, c##i##_1)));
#define S_SPILL(i)                                                                             \
  _mm512_storeu_ps(t + (i) * 32, c##i##_0);                                                    \
  _mm512_storeu_ps(t + (i) * 32 + 16, c##i##_1);

void tsr__gemm_ukr_avx512_f32(int64_t k, float alpha, const float *ap, const float *bp,
                              float beta, float *c, int64_t rs_c, int64_t cs_c) {
  ROWS14(S_DECL)
  if (beta != 0) {
    ROWS14(S_PREFETCH_C)
  }
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    _mm_prefetch((const char *)(ap + TSR__PF_A * 14), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + TSR__PF_A * 14 + 16), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + TSR__PF_A * 14 + 32), _MM_HINT_T0);
    _mm_prefetch((const char *)(ap + TSR__PF_A * 14 + 48), _MM_HINT_T0);
    S_STEP(0) S_STEP(1) S_STEP(2) S_STEP(3)
    ap += 4 * 14;
    bp += 4 * 32;
  }
  for (; p < k; ++p) {
    S_STEP(0)
    ap += 14;
    bp += 32;
  }
  const __m512 va = _mm512_set1_ps(alpha);
  if (cs_c == 1) {
    if (beta == 0) {
      ROWS14(S_STORE0)
    } else {
      const __m512 vb = _mm512_set1_ps(beta);
      ROWS14(S_STOREB)
    }
    return;
  }
  float t[14 * 32];
  ROWS14(S_SPILL)
  for (int i = 0; i < 14; ++i)
    for (int j = 0; j < 32; ++j) {
      float *cij = c + i * rs_c + j * cs_c;
      *cij = beta == 0 ? alpha * t[i * 32 + j] : alpha * t[i * 32 + j] + beta * *cij;
    }
}

#else
/* ISO C forbids an empty translation unit. */
typedef int tsr__gemm_ukr_avx512_unused;
#endif
