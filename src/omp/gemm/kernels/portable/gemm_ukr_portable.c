/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Portable GEMM micro-kernels (plain C, always built, the fallback on every CPU).
 * Register blocks: 4x8 (f32) and 4x4 (f64): small enough that the accumulator tile fits the
 * 16 vector registers of SSE2/NEON once the compiler vectorizes the j loops.
 */
#include "omp/gemm/kernels/portable/kernels_portable.h"

#define MR TSR__GEMM_PORTABLE_MR

/* C_tile = alpha*acc + beta*C_tile; beta == 0 does not read C (NaN must not propagate). */
#define TSR__PORTABLE_UPDATE(NR)                                                                   \
  do {                                                                                             \
    if (beta == 0) {                                                                               \
      for (int i = 0; i < MR; ++i)                                                                 \
        for (int j = 0; j < (NR); ++j)                                                             \
          c[i * rs_c + j * cs_c] = alpha * acc[i][j];                                              \
    } else {                                                                                       \
      for (int i = 0; i < MR; ++i)                                                                 \
        for (int j = 0; j < (NR); ++j)                                                             \
          c[i * rs_c + j * cs_c] = alpha * acc[i][j] + beta * c[i * rs_c + j * cs_c];              \
    }                                                                                              \
  } while (0)

void tsr__gemm_ukr_portable_f32(int64_t k, float alpha, const float *ap, const float *bp,
                                float beta, float *c, int64_t rs_c, int64_t cs_c) {
  enum { NR = TSR__GEMM_PORTABLE_NR_F32 };
  float acc[MR][NR] = {{0}};
  for (int64_t p = 0; p < k; ++p) {
    for (int i = 0; i < MR; ++i) {
      const float a = ap[i];
      for (int j = 0; j < NR; ++j)
        acc[i][j] += a * bp[j];
    }
    ap += MR;
    bp += NR;
  }
  TSR__PORTABLE_UPDATE(NR);
}

void tsr__gemm_ukr_portable_f64(int64_t k, double alpha, const double *ap, const double *bp,
                                double beta, double *c, int64_t rs_c, int64_t cs_c) {
  enum { NR = TSR__GEMM_PORTABLE_NR_F64 };
  double acc[MR][NR] = {{0}};
  for (int64_t p = 0; p < k; ++p) {
    for (int i = 0; i < MR; ++i) {
      const double a = ap[i];
      for (int j = 0; j < NR; ++j)
        acc[i][j] += a * bp[j];
    }
    ap += MR;
    bp += NR;
  }
  TSR__PORTABLE_UPDATE(NR);
}
