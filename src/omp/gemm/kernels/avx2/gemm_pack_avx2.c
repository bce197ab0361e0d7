/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AVX2 packing for the AVX2 kernels (MR = 6; NR = 16 f32, 8 f64), compiled with -mavx2 -mfma
 * (gemm.cmake) and used only when the AVX2 kernels run. Same layout and contract as
 * gemm_pack.c (the portable routines), which handle what these do not (partial micro-panels of
 * A, other MR/NR). The AVX-512 counterpart is gemm_pack_avx512.c.
 *
 * The portable packing moves one element at a time wherever it transposes: op(A) stored
 * row-major (every row-major A * B, and column-major A^T * B) into MR-row micro-panels, and
 * op(B) stored transposed into NR-column micro-panels (also the sup path's B^T strips). Here
 * 8 (f32) or 4 (f64) source rows are loaded as vectors and transposed in registers, so each
 * packed column or row is written with one or two vector stores; the copies (op(A) stored
 * transposed, op(B) row-major) move whole vectors instead of calling memcpy for 24 to 64 bytes.
 * Partial k chunks and partial strips of B^T use vmaskmov loads (no read, no fault outside the
 * mask) and zero rows, as the AVX-512 file does with its masks.
 */
#include "omp/gemm/kernels/avx2/kernels_avx2.h"

#if defined(TSR__GEMM_X86)
#include <immintrin.h>

/* The first n (0..8) of 8 f32 lanes, or (0..4) of 4 f64 lanes, as a vmaskmov mask. */
static inline __m256i tsr__pk_mask32(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline __m256i tsr__pk_mask64(int n) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
}

/* 8 x 8 f32 transpose: out[c] holds column c of the rows in r[0..7]. */
static inline __attribute__((always_inline)) void tsr__transpose8_ps(const __m256 r[8],
                                                                     __m256 out[8]) {
  __m256 t[8], s[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);     /* r0[0] r1[0] r0[1] r1[1] | +4 */
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]); /* r0[2] r1[2] r0[3] r1[3] | +4 */
  }
  for (int h = 0; h < 2; ++h) { /* rows 4h..4h+3, columns 0..3 and 4..7 of each 128-bit lane */
    const __m256 a = t[4 * h], b = t[4 * h + 1], c = t[4 * h + 2], d = t[4 * h + 3];
    s[4 * h + 0] = _mm256_shuffle_ps(a, c, 0x44); /* column 0 (lane 0), 4 (lane 1) */
    s[4 * h + 1] = _mm256_shuffle_ps(a, c, 0xEE); /* column 1, 5 */
    s[4 * h + 2] = _mm256_shuffle_ps(b, d, 0x44); /* column 2, 6 */
    s[4 * h + 3] = _mm256_shuffle_ps(b, d, 0xEE); /* column 3, 7 */
  }
  for (int j = 0; j < 4; ++j) {
    out[j] = _mm256_permute2f128_ps(s[j], s[4 + j], 0x20);
    out[4 + j] = _mm256_permute2f128_ps(s[j], s[4 + j], 0x31);
  }
}

/* 4 x 4 f64 transpose: out[c] holds column c of the rows in r[0..3]. */
static inline __attribute__((always_inline)) void tsr__transpose4_pd(const __m256d r[4],
                                                                     __m256d out[4]) {
  const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]); /* r0[0] r1[0] r0[2] r1[2] */
  const __m256d t1 = _mm256_unpackhi_pd(r[0], r[1]); /* r0[1] r1[1] r0[3] r1[3] */
  const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]);
  const __m256d t3 = _mm256_unpackhi_pd(r[2], r[3]);
  out[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  out[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  out[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  out[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

/* op(B) stored row-major into micro-panels of 64 bytes a row (NR = 16 f32, 8 f64): row by row
   across every full micro-panel, each source row read once, in order. */
static void tsr__pack_b_rows64(int64_t kc, int64_t nfull, int es, const char *b, int64_t ldb,
                               char *bp) {
  const int64_t row = 64, panel = kc * row, ld = ldb * es;
  for (int64_t p = 0; p < kc; ++p) {
    const char *src = b + p * ld;
    char *dst = bp + p * row;
    for (int64_t j = 0; j < nfull; ++j) {
      const float *s = (const float *)(const void *)(src + j * row);
      float *d = (float *)(void *)(dst + j * panel);
      const __m256 v0 = _mm256_loadu_ps(s), v1 = _mm256_loadu_ps(s + 8);
      _mm256_storeu_ps(d, v0);
      _mm256_storeu_ps(d + 8, v1);
    }
  }
}

/* ---------------------------------------------------------------- f32 ----------------- */

/* One full 6-row micro-panel of row-major A (rows a[i*lda ..], kc columns) into dst (column p at
   dst + 6p): 8 columns at a time, rows 6 and 7 of the transpose zero. A column's 8-lane store
   runs 2 elements into the next column, which its own store then overwrites; the last column of
   the panel is stored as 4 + 2 so that nothing past the panel is written. */
static void tsr__pack_a6_f32(int64_t kc, const float *a, int64_t lda, float *dst) {
  __m256 r[8], c[8];
  r[6] = r[7] = _mm256_setzero_ps();
  int64_t p = 0;
  for (; p + 8 < kc; p += 8) {
    for (int i = 0; i < 6; ++i)
      r[i] = _mm256_loadu_ps(a + i * lda + p);
    tsr__transpose8_ps(r, c);
    for (int q = 0; q < 8; ++q)
      _mm256_storeu_ps(dst + (p + q) * 6, c[q]);
  }
  /* The last 1..8 columns. */
  const int kk = (int)(kc - p);
  const __m256i mk = tsr__pk_mask32(kk);
  for (int i = 0; i < 6; ++i)
    r[i] = _mm256_maskload_ps(a + i * lda + p, mk);
  tsr__transpose8_ps(r, c);
  for (int q = 0; q < kk; ++q) {
    float *d = dst + (p + q) * 6;
    _mm_storeu_ps(d, _mm256_castps256_ps128(c[q]));
    _mm_storel_pi((__m64 *)(void *)(d + 4), _mm256_extractf128_ps(c[q], 1));
  }
}

/* op(A) stored transposed (A(i, p) at a[p*lda + i]): each packed column is a copy of 6
   contiguous elements (4 + 2); row p of the storage is read once across every full panel, the
   last partial panel through the portable routine. */
static void tsr__pack_at6_f32(int64_t panels, int64_t kc, const float *a, int64_t lda, float *ap) {
  for (int64_t p = 0; p < kc; ++p) {
    const float *src = a + p * lda;
    float *dst = ap + p * 6;
    for (int64_t r = 0; r < panels; ++r) {
      const __m128 lo = _mm_loadu_ps(src + r * 6);
      const __m128 hi =
          _mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(const void *)(src + r * 6 + 4));
      _mm_storeu_ps(dst + r * 6 * kc, lo);
      _mm_storel_pi((__m64 *)(void *)(dst + r * 6 * kc + 4), hi);
    }
  }
}

void tsr__gemm_pack_a_avx2_f32(int mr, int64_t mc, int64_t kc, const float *a, int64_t lda,
                               bool trans, float *ap) {
  if (mr != 6 || kc < 1) {
    tsr__gemm_pack_a_f32(mr, mc, kc, a, lda, trans, ap);
    return;
  }
  const int64_t full = mc / 6;
  if (trans)
    tsr__pack_at6_f32(full, kc, a, lda, ap);
  else
    for (int64_t i = 0; i < full; ++i)
      tsr__pack_a6_f32(kc, a + i * 6 * lda, lda, ap + i * 6 * kc);
  if (full * 6 < mc)
    tsr__gemm_pack_a_f32(mr, mc - full * 6, kc, trans ? a + full * 6 : a + full * 6 * lda, lda,
                         trans, ap + full * 6 * kc);
}

/* Half of a 16-column micro-panel of op(B) stored transposed (B(p, j) at src[j*ldb + p]), or all
   of a one-vector panel (W = 8: the sup path's strips of at most one vector): kk (1..8) k steps
   of its 8 columns, of which the first jb (0..8) exist and the rest are packed as zeros, into dst
   (row p of the panel at dst + W*p). Whole chunks call it with constant jb and kk
   (TSR__PACK_B_DEFINE, kernels.h). */
static inline __attribute__((always_inline)) void
tsr__pack_bt8_f32(const float *src, int64_t ldb, int jb, int kk, float *dst, const int W) {
  __m256 r[8], c[8];
  if (kk == 8) {
    for (int j = 0; j < 8; ++j)
      r[j] = j < jb ? _mm256_loadu_ps(src + j * ldb) : _mm256_setzero_ps();
  } else {
    const __m256i mk = tsr__pk_mask32(kk);
    for (int j = 0; j < 8; ++j)
      r[j] = j < jb ? _mm256_maskload_ps(src + j * ldb, mk) : _mm256_setzero_ps();
  }
  tsr__transpose8_ps(r, c);
  for (int q = 0; q < kk; ++q)
    _mm256_storeu_ps(dst + q * W, c[q]);
}

/* op(B)'s packing for this kernel's NR (TSR__PACK_B_DEFINE, kernels.h). */
TSR__PACK_B_DEFINE(tsr__gemm_pack_b_avx2_f32, float, 16, tsr__pack_bt8_f32, tsr__pack_b_rows64,
                   tsr__gemm_pack_b_f32)

/* ---------------------------------------------------------------- f64 ----------------- */

/* One full 6-row micro-panel of row-major A, f64: 4 columns at a time, rows 0..3 by a 4 x 4
   transpose (one 4-lane store a column), rows 4 and 5 interleaved (one 2-lane store). */
static void tsr__pack_a6_f64(int64_t kc, const double *a, int64_t lda, double *dst) {
  __m256d r[4], c[4];
  for (int64_t p = 0; p < kc; p += 4) {
    const int kk = (int)(kc - p < 4 ? kc - p : 4);
    __m256d r4, r5;
    if (kk == 4) {
      for (int i = 0; i < 4; ++i)
        r[i] = _mm256_loadu_pd(a + i * lda + p);
      r4 = _mm256_loadu_pd(a + 4 * lda + p);
      r5 = _mm256_loadu_pd(a + 5 * lda + p);
    } else {
      const __m256i mk = tsr__pk_mask64(kk);
      for (int i = 0; i < 4; ++i)
        r[i] = _mm256_maskload_pd(a + i * lda + p, mk);
      r4 = _mm256_maskload_pd(a + 4 * lda + p, mk);
      r5 = _mm256_maskload_pd(a + 5 * lda + p, mk);
    }
    tsr__transpose4_pd(r, c);
    const __m256d lo = _mm256_unpacklo_pd(r4, r5); /* columns 0 and 2 of rows 4, 5 */
    const __m256d hi = _mm256_unpackhi_pd(r4, r5); /* columns 1 and 3 */
    const __m128d t[4] = {_mm256_castpd256_pd128(lo), _mm256_castpd256_pd128(hi),
                          _mm256_extractf128_pd(lo, 1), _mm256_extractf128_pd(hi, 1)};
    for (int q = 0; q < kk; ++q) {
      _mm256_storeu_pd(dst + (p + q) * 6, c[q]);
      _mm_storeu_pd(dst + (p + q) * 6 + 4, t[q]);
    }
  }
}

/* op(A) stored transposed, f64: each packed column a copy of 6 contiguous elements (4 + 2). */
static void tsr__pack_at6_f64(int64_t panels, int64_t kc, const double *a, int64_t lda,
                              double *ap) {
  for (int64_t p = 0; p < kc; ++p) {
    const double *src = a + p * lda;
    double *dst = ap + p * 6;
    for (int64_t r = 0; r < panels; ++r) {
      const __m256d lo = _mm256_loadu_pd(src + r * 6);
      const __m128d hi = _mm_loadu_pd(src + r * 6 + 4);
      _mm256_storeu_pd(dst + r * 6 * kc, lo);
      _mm_storeu_pd(dst + r * 6 * kc + 4, hi);
    }
  }
}

void tsr__gemm_pack_a_avx2_f64(int mr, int64_t mc, int64_t kc, const double *a, int64_t lda,
                               bool trans, double *ap) {
  if (mr != 6 || kc < 1) {
    tsr__gemm_pack_a_f64(mr, mc, kc, a, lda, trans, ap);
    return;
  }
  const int64_t full = mc / 6;
  if (trans)
    tsr__pack_at6_f64(full, kc, a, lda, ap);
  else
    for (int64_t i = 0; i < full; ++i)
      tsr__pack_a6_f64(kc, a + i * 6 * lda, lda, ap + i * 6 * kc);
  if (full * 6 < mc)
    tsr__gemm_pack_a_f64(mr, mc - full * 6, kc, trans ? a + full * 6 : a + full * 6 * lda, lda,
                         trans, ap + full * 6 * kc);
}

/* Half of an 8-column micro-panel of op(B) stored transposed, f64, or all of a one-vector panel
   (W = 4): kk (1..4) k steps of its 4 columns, the first jb (0..4) present, into dst (row p of
   the panel at dst + W*p). */
static inline __attribute__((always_inline)) void
tsr__pack_bt4_f64(const double *src, int64_t ldb, int jb, int kk, double *dst, const int W) {
  __m256d r[4], c[4];
  if (kk == 4) {
    for (int j = 0; j < 4; ++j)
      r[j] = j < jb ? _mm256_loadu_pd(src + j * ldb) : _mm256_setzero_pd();
  } else {
    const __m256i mk = tsr__pk_mask64(kk);
    for (int j = 0; j < 4; ++j)
      r[j] = j < jb ? _mm256_maskload_pd(src + j * ldb, mk) : _mm256_setzero_pd();
  }
  tsr__transpose4_pd(r, c);
  for (int q = 0; q < kk; ++q)
    _mm256_storeu_pd(dst + q * W, c[q]);
}

/* op(B)'s packing for this kernel's NR (TSR__PACK_B_DEFINE, kernels.h). */
TSR__PACK_B_DEFINE(tsr__gemm_pack_b_avx2_f64, double, 8, tsr__pack_bt4_f64, tsr__pack_b_rows64,
                   tsr__gemm_pack_b_f64)

#else
/* ISO C forbids an empty translation unit. */
typedef int tsr__gemm_pack_avx2_unused;
#endif
