/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AVX-512F sup GEMM (small, unpacked: BLIS's term), f32, and the packed path's f32 edge
 * tiles (the source is gemm_sup_impl.h), compiled with -mavx512f -mfma (gemm.cmake) and called only
 * after run-time detection (gemm_registry.c). Register block 14 rows x 2 vectors (the AVX-512
 * micro-kernels' 14x32 f32 / 14x16 f64); the last vector of a strip is masked, so edge columns cost
 * no padding and no copy. x86-64 only. One file per dtype (gemm_sup_avx512_f64.c is the other):
 * each instantiates several hundred register tiles, and two files compile side by side (about 45 s
 * each with GCC 12 -O3, 86 s as one).
 */
#include "omp/gemm/kernels/avx512/kernels_avx512.h"

#if defined(TSR__GEMM_X86)
#include <immintrin.h>

#define TSR__SUP_NAME tsr__gemm_sup_avx512_f32
#define TSR__SUP_T float
#define TSR__SUP_V __m512
#define TSR__SUP_L 16
#define TSR__SUP_MR TSR__GEMM_AVX512_MR
#define TSR__SUP_M __mmask16
#define TSR__SUP_MASK(n) ((__mmask16)((1u << (n)) - 1u))
#define TSR__SUP_ZERO() _mm512_setzero_ps()
#define TSR__SUP_SET1(x) _mm512_set1_ps(x)
#define TSR__SUP_LOAD(p) _mm512_loadu_ps(p)
#define TSR__SUP_LOADM(msk, p) _mm512_maskz_loadu_ps(msk, p)
#define TSR__SUP_STORE(p, v) _mm512_storeu_ps(p, v)
#define TSR__SUP_STOREM(p, msk, v) _mm512_mask_storeu_ps(p, msk, v)
#define TSR__SUP_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define TSR__SUP_MUL(a, b) _mm512_mul_ps(a, b)
#define TSR__SUP_ADD(a, b) _mm512_add_ps(a, b)
#define TSR__SUP_PACK_B pack_b_f32
#define TSR__SUP_HSUM(v) _mm512_reduce_add_ps(v)
/* Tiles over op(A) = A take at most 10 rows (gemm_sup_impl.h): the 11-14-row tiles reload
   their row pointers from the stack in the k loop. Zen 4 (EPYC, family 25 model 17), one
   thread, cblas_sgemm row-major NN in a loop, best of 5 (ns), rows capped at 8 / 10 / 14
   against scipy-openblas32 0.3.34: 32^3 657 / 663 / 655 (609); 48^3 2114 / 2118 / 2360 (2060);
   64^3 4900 / 4850 / 4850 (4610). dgemm keeps 14 rows: 48^3 4220 / 4222 / 4085-4143 (3900),
   64^3 10000 / 9970 / 9650 (9140). */
#define TSR__SUP_MRS 10
/* Wide strips (gemm_sup_impl.h): 4 vectors by at most 6 rows, 24 accumulators, 4 vectors of
   op(B) and the broadcast in the 32 registers. Zen 4, one thread, cblas_sgemm row-major NN, best
   of 30 loops of calls, alternating processes with the 2-vector strips (ns): 48^3 2101 -> 1983,
   64^3 4866 -> 4743 (scipy-openblas32 0.3.34: 1956, 4613); a standalone copy of both tiles,
   64^3 4803 -> 4642, 48^3 2047 -> 1967, and 3 x 3, 4 x 4, 5 x 4, 7 x 4 within 1 % of 6 x 4. */
#define TSR__SUP_NVW 4
#define TSR__SUP_MRW 6
#define TSR__SUP_DI 4
#define TSR__SUP_DJ 6
/* The k loop said to be long (gemm_sup_impl.h): Emerald Rapids, in-process best of 41,
   kernel alone, sgemm 16^3 ~104 -> ~88 ns, 32^3 ~462 -> ~442 (no row offsets reloaded). */
#define TSR__SUP_LONG_K 1
#include "omp/gemm/kernels/gemm_sup_impl.h"

#endif
