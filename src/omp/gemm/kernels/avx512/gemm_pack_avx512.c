/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AVX-512 packing for the AVX-512 kernels (MR = 14; NR = 16 f64, 32 f32), compiled with
 * -mavx512f (gemm.cmake) and used only when the AVX-512 kernels run. Same layout and contract
 * as gemm_pack.c, which handles everything these do not (partial micro-panels, other MR/NR).
 *
 * The two packings that transpose: op(A) stored row-major (A(i, p) at a[i*lda + p]) into
 * MR-row micro-panels (column p of a panel is MR contiguous elements), and op(B) stored
 * transposed (B(p, j) at b[j*ldb + p]) into NR-column micro-panels. The portable loops write
 * one element at a time with a stride of MR (or NR) elements; here 8 (f64) or 16 (f32) source
 * rows are loaded as vectors and transposed in registers, so each packed column is written
 * with one (masked) vector store. Measured on Zen 5, one thread: sgemm/dgemm 512^3 and 1024^3
 * lose 5-12% to the portable A packing against transposed-A storage, whose packing is a copy.
 *
 * That copy (op(A) stored transposed, A(i, p) at a[p*lda + i]) is here too: each packed column
 * is one masked vector load and store of 14 contiguous elements, and each row of the storage is
 * read once across every micro-panel. It matters where op(A)'s packing is not amortized over
 * many columns of C: the Gram matrix X^T X of a tall X (small m = n, long k). Measured on Zen 5,
 * one thread, sgemm TN against the portable copy: 64x64x10000 158 -> 195 GFLOP/s, 64x64x100000
 * 94 -> 117, 256x256x20000 176 -> 200, 32x32x100000 50 -> 139; 1000^3 unchanged.
 */
#include "omp/gemm/kernels/avx512/kernels_avx512.h"

#if defined(TSR__GEMM_X86)
#include <immintrin.h>

/* 8 x 8 f64 transpose: out[c] holds column c of the rows in r[0..7]. */
static inline void tsr__transpose8_pd(const __m512d r[8], __m512d out[8]) {
  __m512d t[8], u[4];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);     /* cols 0,2,4,6 of the pair */
    t[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]); /* cols 1,3,5,7 */
  }
  for (int h = 0; h < 2; ++h) { /* h = 0: even columns (t0,t2,t4,t6), h = 1: odd */
    u[0] = _mm512_shuffle_f64x2(t[h], t[h + 2], 0x88);
    u[1] = _mm512_shuffle_f64x2(t[h], t[h + 2], 0xDD);
    u[2] = _mm512_shuffle_f64x2(t[h + 4], t[h + 6], 0x88);
    u[3] = _mm512_shuffle_f64x2(t[h + 4], t[h + 6], 0xDD);
    out[h + 0] = _mm512_shuffle_f64x2(u[0], u[2], 0x88);
    out[h + 4] = _mm512_shuffle_f64x2(u[0], u[2], 0xDD);
    out[h + 2] = _mm512_shuffle_f64x2(u[1], u[3], 0x88);
    out[h + 6] = _mm512_shuffle_f64x2(u[1], u[3], 0xDD);
  }
}

/* 16 x 16 f32 transpose: out[c] holds column c of the rows in r[0..15]. */
static inline void tsr__transpose16_ps(const __m512 r[16], __m512 out[16]) {
  __m512 t[16], s[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  /* s[4g + j]: rows 4g..4g+3, column 4L + j in 128-bit lane L. */
  for (int g = 0; g < 4; ++g) {
    const __m512d a0 = _mm512_castps_pd(t[4 * g]), a1 = _mm512_castps_pd(t[4 * g + 1]);
    const __m512d a2 = _mm512_castps_pd(t[4 * g + 2]), a3 = _mm512_castps_pd(t[4 * g + 3]);
    s[4 * g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
    s[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
    s[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
    s[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
  }
  for (int j = 0; j < 4; ++j) {
    const __m512 v0 = _mm512_shuffle_f32x4(s[j], s[4 + j], 0x88);
    const __m512 v1 = _mm512_shuffle_f32x4(s[j], s[4 + j], 0xDD);
    const __m512 w0 = _mm512_shuffle_f32x4(s[8 + j], s[12 + j], 0x88);
    const __m512 w1 = _mm512_shuffle_f32x4(s[8 + j], s[12 + j], 0xDD);
    out[j] = _mm512_shuffle_f32x4(v0, w0, 0x88);
    out[8 + j] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
    out[4 + j] = _mm512_shuffle_f32x4(v1, w1, 0x88);
    out[12 + j] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
  }
}

/* Half of an NR-column micro-panel of op(B) stored transposed (B(p, j) at src[j*ldb + p]), or
   all of a one-vector panel (W = 8 f64, 16 f32: the sup path's strips of at most one vector):
   the kk (1..8) k steps from src of its 8 columns, of which the first jb (0..8) exist and the rest
   are packed as zeros, into dst (row p of the panel at dst + p*W). Whole strips and the partial
   strip and k chunk at the edges alike: one masked load per column, one transpose, one store per
   k step (the portable loop, element by element, took 60 % of a 16^3 sgemm with op(B) = B^T).
   Whole chunks call it with constant jb and kk (TSR__PACK_B_DEFINE, kernels.h). */
static inline __attribute__((always_inline)) void
tsr__pack_bt8_f64(const double *src, int64_t ldb, int jb, int kk, double *dst, const int W) {
  __m512d r[8], c[8];
  const __mmask8 mk = (__mmask8)(kk >= 8 ? 0xFF : (1u << kk) - 1);
  for (int j = 0; j < 8; ++j)
    r[j] = j < jb ? _mm512_maskz_loadu_pd(mk, src + j * ldb) : _mm512_setzero_pd();
  tsr__transpose8_pd(r, c);
  for (int q = 0; q < kk; ++q)
    _mm512_storeu_pd(dst + q * W, c[q]);
}

/* The f32 half: 16 columns (jb 0..16), kk 1..16 k steps, rows of the panel W (32 or 16) apart. */
static inline __attribute__((always_inline)) void
tsr__pack_bt16_f32(const float *src, int64_t ldb, int jb, int kk, float *dst, const int W) {
  __m512 r[16], c[16];
  const __mmask16 mk = (__mmask16)(kk >= 16 ? 0xFFFF : (1u << kk) - 1);
  for (int j = 0; j < 16; ++j)
    r[j] = j < jb ? _mm512_maskz_loadu_ps(mk, src + j * ldb) : _mm512_setzero_ps();
  tsr__transpose16_ps(r, c);
  for (int q = 0; q < kk; ++q)
    _mm512_storeu_ps(dst + q * W, c[q]);
}

/* ---------------------------------------------------------------- f64 ----------------- */

/* One full 14-row micro-panel of row-major A: rows a[i*lda ..], kc columns. */
static void tsr__pack_a14_f64(int64_t kc, const double *a, int64_t lda, double *dst) {
  __m512d r[8], c[8];
  int64_t p = 0;
  for (; p + 8 <= kc; p += 8) {
    for (int i = 0; i < 8; ++i)
      r[i] = _mm512_loadu_pd(a + i * lda + p);
    tsr__transpose8_pd(r, c);
    for (int q = 0; q < 8; ++q)
      _mm512_storeu_pd(dst + (p + q) * 14, c[q]);
    for (int i = 0; i < 6; ++i)
      r[i] = _mm512_loadu_pd(a + (8 + i) * lda + p);
    r[6] = r[7] = _mm512_setzero_pd();
    tsr__transpose8_pd(r, c);
    for (int q = 0; q < 8; ++q)
      _mm512_mask_storeu_pd(dst + (p + q) * 14 + 8, 0x3F, c[q]);
  }
  for (; p < kc; ++p)
    for (int i = 0; i < 14; ++i)
      dst[p * 14 + i] = a[i * lda + p];
}

/* op(A) stored transposed (A(i, p) at a[p*lda + i]): each packed column is a copy of 14
   contiguous elements. Row p of the storage is read once, across every micro-panel (one
   micro-panel at a time would read the block once per panel); the last panel's rows past mc are
   zero (masked loads read nothing past them). */
static void tsr__pack_at14_f64(int64_t mc, int64_t kc, const double *a, int64_t lda, double *ap) {
  const int64_t panels = (mc + 13) / 14;
  for (int64_t p = 0; p < kc; ++p) {
    const double *src = a + p * lda;
    double *dst = ap + p * 14;
    for (int64_t r = 0; r < panels; ++r) {
      const int64_t left = mc - r * 14;
      const __mmask8 lo = left >= 8 ? 0xFF : (__mmask8)((1u << left) - 1);
      const __mmask8 hi = left >= 14 ? 0x3F : left <= 8 ? 0 : (__mmask8)((1u << (left - 8)) - 1);
      _mm512_storeu_pd(dst + r * 14 * kc, _mm512_maskz_loadu_pd(lo, src + r * 14));
      _mm512_mask_storeu_pd(dst + r * 14 * kc + 8, 0x3F,
                            _mm512_maskz_loadu_pd(hi, src + r * 14 + 8));
    }
  }
}

void tsr__gemm_pack_a_avx512_f64(int mr, int64_t mc, int64_t kc, const double *a, int64_t lda,
                                 bool trans, double *ap) {
  if (mr != 14) {
    tsr__gemm_pack_a_f64(mr, mc, kc, a, lda, trans, ap);
    return;
  }
  if (trans) {
    tsr__pack_at14_f64(mc, kc, a, lda, ap);
    return;
  }
  int64_t i0 = 0;
  for (; i0 + 14 <= mc; i0 += 14)
    tsr__pack_a14_f64(kc, a + i0 * lda, lda, ap + i0 * kc);
  if (i0 < mc) tsr__gemm_pack_a_f64(mr, mc - i0, kc, a + i0 * lda, lda, false, ap + i0 * kc);
}

/* op(B) stored row-major (no transpose) into micro-panels of 128 bytes a row (NR = 32 f32,
   16 f64): row by row across every full micro-panel, each row read once in order, two vector
   loads and stores a panel row; the last partial panel through the portable routine. */
static void tsr__pack_b_rows128(int64_t kc, int64_t nfull, int es, const char *b, int64_t ldb,
                                char *bp) {
  const int64_t row = 128, panel = kc * row, ld = ldb * es;
  int64_t p = 0;
  /* Eight rows at a time: 1 KiB written contiguously into each panel. */
  for (; p + 8 <= kc; p += 8) {
    const char *src = b + p * ld;
    char *dst = bp + p * row;
    for (int64_t j = 0; j < nfull; ++j)
      for (int r = 0; r < 8; ++r) {
        const float *s = (const float *)(const void *)(src + r * ld + j * row);
        float *d = (float *)(void *)(dst + j * panel + r * row);
        _mm512_store_ps(d, _mm512_loadu_ps(s));
        _mm512_store_ps(d + 16, _mm512_loadu_ps(s + 16));
      }
  }
  for (; p < kc; ++p)
    for (int64_t j = 0; j < nfull; ++j) {
      const float *s = (const float *)(const void *)(b + p * ld + j * row);
      float *d = (float *)(void *)(bp + p * row + j * panel);
      _mm512_store_ps(d, _mm512_loadu_ps(s));
      _mm512_store_ps(d + 16, _mm512_loadu_ps(s + 16));
    }
}

/* op(B)'s packing for this kernel's NR (TSR__PACK_B_DEFINE, kernels.h). */
TSR__PACK_B_DEFINE(tsr__gemm_pack_b_avx512_f64, double, 16, tsr__pack_bt8_f64, tsr__pack_b_rows128,
                   tsr__gemm_pack_b_f64)

/* ---------------------------------------------------------------- f32 ----------------- */

static void tsr__pack_a14_f32(int64_t kc, const float *a, int64_t lda, float *dst) {
  __m512 r[16], c[16];
  int64_t p = 0;
  for (; p + 16 <= kc; p += 16) {
    for (int i = 0; i < 14; ++i)
      r[i] = _mm512_loadu_ps(a + i * lda + p);
    r[14] = r[15] = _mm512_setzero_ps();
    tsr__transpose16_ps(r, c);
    for (int q = 0; q < 16; ++q)
      _mm512_mask_storeu_ps(dst + (p + q) * 14, 0x3FFF, c[q]);
  }
  for (; p < kc; ++p)
    for (int i = 0; i < 14; ++i)
      dst[p * 14 + i] = a[i * lda + p];
}

/* op(A) stored transposed, f32: as tsr__pack_at14_f64, one masked vector a packed column. */
static void tsr__pack_at14_f32(int64_t mc, int64_t kc, const float *a, int64_t lda, float *ap) {
  const int64_t panels = (mc + 13) / 14;
  for (int64_t p = 0; p < kc; ++p) {
    const float *src = a + p * lda;
    float *dst = ap + p * 14;
    for (int64_t r = 0; r < panels; ++r) {
      const int64_t left = mc - r * 14;
      const __mmask16 in = left >= 14 ? 0x3FFF : (__mmask16)((1u << left) - 1);
      _mm512_mask_storeu_ps(dst + r * 14 * kc, 0x3FFF, _mm512_maskz_loadu_ps(in, src + r * 14));
    }
  }
}

void tsr__gemm_pack_a_avx512_f32(int mr, int64_t mc, int64_t kc, const float *a, int64_t lda,
                                 bool trans, float *ap) {
  if (mr != 14) {
    tsr__gemm_pack_a_f32(mr, mc, kc, a, lda, trans, ap);
    return;
  }
  if (trans) {
    tsr__pack_at14_f32(mc, kc, a, lda, ap);
    return;
  }
  int64_t i0 = 0;
  for (; i0 + 14 <= mc; i0 += 14)
    tsr__pack_a14_f32(kc, a + i0 * lda, lda, ap + i0 * kc);
  if (i0 < mc) tsr__gemm_pack_a_f32(mr, mc - i0, kc, a + i0 * lda, lda, false, ap + i0 * kc);
}

/* op(B)'s packing for this kernel's NR (TSR__PACK_B_DEFINE, kernels.h). */
TSR__PACK_B_DEFINE(tsr__gemm_pack_b_avx512_f32, float, 32, tsr__pack_bt16_f32, tsr__pack_b_rows128,
                   tsr__gemm_pack_b_f32)

#else
/* ISO C forbids an empty translation unit. */
typedef int tsr__gemm_pack_avx512_unused;
#endif
