/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The portable packing of GEMM operands into the micro-kernel's format (BLIS layering): the
 * portable kernels' packers, and what every ISA's packers fall back to (kernels/<isa>/
 * gemm_pack_<isa>.c); they define the layout. Declared in omp/gemm/gemm.h.
 *
 * A block (mc x kc of op(A)) -> ceil(mc/MR) micro-panels; micro-panel r holds rows
 * r*MR .. r*MR+MR-1, column p of it at ap + r*MR*kc + p*MR (MR contiguous elements).
 * B block (kc x nc of op(B)) -> ceil(nc/NR) micro-panels; micro-panel q holds columns
 * q*NR .. q*NR+NR-1, row p of it at bp + q*NR*kc + p*NR (NR contiguous elements).
 * Rows/columns past the edge are zero, so the micro-kernel always computes full tiles and the
 * padding contributes nothing. Packing is where the transpose flags (and therefore every
 * layout the core accepts) are absorbed: the micro-kernel sees unit-stride panels only.
 *
 * Loop order: the inner loop always runs along the source's contiguous dimension, so the
 * reads stream through memory and the strided writes land in the packed micro-panel, which is
 * small enough (kc*MR or kc*NR elements) to stay in L1/L2.
 */
#include <string.h>

#include "omp/gemm/kernels/portable/kernels_portable.h"

#define TSR__PACK_A(T)                                                                             \
  if (!trans) { /* (i,p) at a[i*lda + p]: rows are contiguous */                                   \
    for (int64_t i0 = 0; i0 < mc; i0 += mr) {                                                      \
      const int ib = (int)(mc - i0 < mr ? mc - i0 : mr);                                           \
      T *dst = ap + i0 * kc;                                                                       \
      for (int i = 0; i < ib; ++i) {                                                               \
        const T *src = a + (i0 + i) * lda;                                                         \
        for (int64_t p = 0; p < kc; ++p)                                                           \
          dst[p * mr + i] = src[p];                                                                \
      }                                                                                            \
      for (int i = ib; i < mr; ++i)                                                                \
        for (int64_t p = 0; p < kc; ++p)                                                           \
          dst[p * mr + i] = 0;                                                                     \
    }                                                                                              \
  } else { /* (i,p) at a[p*lda + i]: columns of op(A) are contiguous */                            \
    /* Row p of the storage across every micro-panel, read once (a micro-panel at a time would     \
       read the block once per panel); each panel's column p is a copy of mr elements. */          \
    for (int64_t p = 0; p < kc; ++p) {                                                             \
      const T *src = a + p * lda;                                                                  \
      for (int64_t i0 = 0; i0 < mc; i0 += mr) {                                                    \
        const int ib = (int)(mc - i0 < mr ? mc - i0 : mr);                                         \
        T *d = ap + i0 * kc + p * mr;                                                              \
        memcpy(d, src + i0, (size_t)ib * sizeof(T));                                               \
        for (int i = ib; i < mr; ++i)                                                              \
          d[i] = 0;                                                                                \
      }                                                                                            \
    }                                                                                              \
  }

#define TSR__PACK_B(T)                                                                             \
  if (!trans) { /* (p,j) at b[p*ldb + j]: rows of op(B) are contiguous */                          \
    /* Row by row across all the micro-panels: each source row is read once, in order (a           \
       micro-panel at a time would touch a new page on every row). */                              \
    const int64_t nfull = nc / nr * nr;                                                            \
    for (int64_t p = 0; p < kc; ++p) {                                                             \
      const T *src = b + p * ldb;                                                                  \
      for (int64_t j0 = 0; j0 < nfull; j0 += nr)                                                   \
        memcpy(bp + j0 * kc + p * nr, src + j0, (size_t)nr * sizeof(T));                           \
      if (nfull < nc) {                                                                            \
        T *d = bp + nfull * kc + p * nr;                                                           \
        const int jb = (int)(nc - nfull);                                                          \
        for (int j = 0; j < jb; ++j)                                                               \
          d[j] = src[nfull + j];                                                                   \
        for (int j = jb; j < nr; ++j)                                                              \
          d[j] = 0;                                                                                \
      }                                                                                            \
    }                                                                                              \
  } else { /* (p,j) at b[j*ldb + p]: columns of op(B) are contiguous */                            \
    for (int64_t j0 = 0; j0 < nc; j0 += nr) {                                                      \
      const int jb = (int)(nc - j0 < nr ? nc - j0 : nr);                                           \
      T *dst = bp + j0 * kc;                                                                       \
      for (int j = 0; j < jb; ++j) {                                                               \
        const T *src = b + (j0 + j) * ldb;                                                         \
        for (int64_t p = 0; p < kc; ++p)                                                           \
          dst[p * nr + j] = src[p];                                                                \
      }                                                                                            \
      for (int j = jb; j < nr; ++j)                                                                \
        for (int64_t p = 0; p < kc; ++p)                                                           \
          dst[p * nr + j] = 0;                                                                     \
    }                                                                                              \
  }

void tsr__gemm_pack_a_f32(int mr, int64_t mc, int64_t kc, const float *a, int64_t lda, bool trans,
                          float *ap) {
  TSR__PACK_A(float)
}

void tsr__gemm_pack_a_f64(int mr, int64_t mc, int64_t kc, const double *a, int64_t lda, bool trans,
                          double *ap) {
  TSR__PACK_A(double)
}

void tsr__gemm_pack_b_f32(int nr, int64_t kc, int64_t nc, const float *b, int64_t ldb, bool trans,
                          float *bp) {
  TSR__PACK_B(float)
}

void tsr__gemm_pack_b_f64(int nr, int64_t kc, int64_t nc, const double *b, int64_t ldb, bool trans,
                          double *bp) {
  TSR__PACK_B(double)
}
