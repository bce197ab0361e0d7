/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AVX-512F sup GEMM (small, unpacked: BLIS's term), f64, and the packed path's f64 edge
 * tiles (the source is gemm_sup_impl.h), compiled with -mavx512f -mfma (gemm.cmake) and called only
 * after run-time detection (gemm_registry.c). Register block 14 rows x 2 vectors (the AVX-512
 * micro-kernels' 14x32 f32 / 14x16 f64); the last vector of a strip is masked, so edge columns cost
 * no padding and no copy. x86-64 only. One file per dtype (gemm_sup_avx512_f32.c is the other):
 * each instantiates several hundred register tiles, and two files compile side by side (about 45 s
 * each with GCC 12 -O3, 86 s as one).
 */
#include "omp/gemm/kernels/avx512/kernels_avx512.h"

#if defined(TSR__GEMM_X86)
#include <immintrin.h>

#define TSR__SUP_NAME tsr__gemm_sup_avx512_f64
#define TSR__SUP_T double
#define TSR__SUP_V __m512d
#define TSR__SUP_L 8
#define TSR__SUP_MR TSR__GEMM_AVX512_MR
#define TSR__SUP_M __mmask8
#define TSR__SUP_MASK(n) ((__mmask8)((1u << (n)) - 1u))
#define TSR__SUP_ZERO() _mm512_setzero_pd()
#define TSR__SUP_SET1(x) _mm512_set1_pd(x)
#define TSR__SUP_LOAD(p) _mm512_loadu_pd(p)
#define TSR__SUP_LOADM(msk, p) _mm512_maskz_loadu_pd(msk, p)
#define TSR__SUP_STORE(p, v) _mm512_storeu_pd(p, v)
#define TSR__SUP_STOREM(p, msk, v) _mm512_mask_storeu_pd(p, msk, v)
#define TSR__SUP_FMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define TSR__SUP_MUL(a, b) _mm512_mul_pd(a, b)
#define TSR__SUP_ADD(a, b) _mm512_add_pd(a, b)
#define TSR__SUP_PACK_B pack_b_f64
#define TSR__SUP_HSUM(v) _mm512_reduce_add_pd(v)
/* Wide strips as f32's (gemm_sup_avx512_f32.c; 32 columns): cblas_dgemm, same measurement: 32^3
   1273 -> 1220, 48^3 4164 -> 4055, 64^3 9870 -> 9422 (scipy-openblas32: 1170, 3924, 9108). */
#define TSR__SUP_NVW 4
#define TSR__SUP_MRW 6
#define TSR__SUP_DI 4
#define TSR__SUP_DJ 6
#define TSR__SUP_LONG_K 1 /* as for f32 (gemm_sup_avx512_f32.c) */
#include "omp/gemm/kernels/gemm_sup_impl.h"

#endif
