/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AVX2 sup GEMM (small, unpacked: BLIS's term), and the packed path's edge tiles (the
 * source is gemm_sup_impl.h), compiled with -mavx2 -mfma (gemm.cmake) and called only after
 * run-time detection (gemm_registry.c). Register block 6 rows x 2 vectors (the AVX2 micro-kernels'
 * 6x16 f32 / 6x8 f64: 12 accumulators, 2 B vectors and a broadcast in the 16 ymm registers); the
 * last vector of a strip is masked with vmaskmov, which neither reads nor faults outside the mask.
 * x86-64 only.
 */
#include "omp/gemm/kernels/avx2/kernels_avx2.h"

#if defined(TSR__GEMM_X86)
#include <immintrin.h>

/* The first n of 8 (f32) or 4 (f64) lanes as a vmaskmov mask (sign bits). */
static inline __m256i tsr__sm_mask32(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline __m256i tsr__sm_mask64(int n) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
}
/* Sums of the lanes. */
static inline float tsr__sm_hsum_ps(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
}
static inline double tsr__sm_hsum_pd(__m256d v) {
  __m128d x = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(x, _mm_unpackhi_pd(x, x)));
}

#define TSR__SUP_NAME tsr__gemm_sup_avx2_f32
#define TSR__SUP_T float
#define TSR__SUP_V __m256
#define TSR__SUP_L 8
#define TSR__SUP_MR TSR__GEMM_AVX2_MR
#define TSR__SUP_M __m256i
#define TSR__SUP_MASK(n) tsr__sm_mask32(n)
#define TSR__SUP_ZERO() _mm256_setzero_ps()
#define TSR__SUP_SET1(x) _mm256_set1_ps(x)
#define TSR__SUP_LOAD(p) _mm256_loadu_ps(p)
#define TSR__SUP_LOADM(msk, p) _mm256_maskload_ps(p, msk)
#define TSR__SUP_STORE(p, v) _mm256_storeu_ps(p, v)
#define TSR__SUP_STOREM(p, msk, v) _mm256_maskstore_ps(p, msk, v)
#define TSR__SUP_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define TSR__SUP_MUL(a, b) _mm256_mul_ps(a, b)
#define TSR__SUP_ADD(a, b) _mm256_add_ps(a, b)
#define TSR__SUP_PACK_B pack_b_f32
#define TSR__SUP_HSUM(v) tsr__sm_hsum_ps(v)
#define TSR__SUP_DI 2
#define TSR__SUP_DJ 4
#include "omp/gemm/kernels/gemm_sup_impl.h"

#define TSR__SUP_NAME tsr__gemm_sup_avx2_f64
#define TSR__SUP_T double
#define TSR__SUP_V __m256d
#define TSR__SUP_L 4
#define TSR__SUP_MR TSR__GEMM_AVX2_MR
#define TSR__SUP_M __m256i
#define TSR__SUP_MASK(n) tsr__sm_mask64(n)
#define TSR__SUP_ZERO() _mm256_setzero_pd()
#define TSR__SUP_SET1(x) _mm256_set1_pd(x)
#define TSR__SUP_LOAD(p) _mm256_loadu_pd(p)
#define TSR__SUP_LOADM(msk, p) _mm256_maskload_pd(p, msk)
#define TSR__SUP_STORE(p, v) _mm256_storeu_pd(p, v)
#define TSR__SUP_STOREM(p, msk, v) _mm256_maskstore_pd(p, msk, v)
#define TSR__SUP_FMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define TSR__SUP_MUL(a, b) _mm256_mul_pd(a, b)
#define TSR__SUP_ADD(a, b) _mm256_add_pd(a, b)
#define TSR__SUP_PACK_B pack_b_f64
#define TSR__SUP_HSUM(v) tsr__sm_hsum_pd(v)
#define TSR__SUP_DI 2
#define TSR__SUP_DJ 4
#include "omp/gemm/kernels/gemm_sup_impl.h"

#endif
