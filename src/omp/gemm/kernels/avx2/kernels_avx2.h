/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AVX2+FMA kernels (x86-64 only, TSR__GEMM_X86): micro-kernels (gemm_ukr_avx2.c), packing
 * (gemm_pack_avx2.c), sup kernels (small, unpacked: BLIS's term) and edge tiles (gemm_sup_avx2.c),
 * compiled with this folder's flags (isa.cmake), their register block, and the row that registers
 * them (gemm_isa_avx2.c). Included by this folder's files only.
 */
#ifndef TSR_OMP_GEMM_KERNELS_AVX2_H
#define TSR_OMP_GEMM_KERNELS_AVX2_H

#include "omp/gemm/kernels/kernels.h"

/* Register block (compile-time: the kernels are written for it). */
#define TSR__GEMM_AVX2_MR 6
#define TSR__GEMM_AVX2_NR_F32 16
#define TSR__GEMM_AVX2_NR_F64 8
/* The C fetch's tail (TSR__GEMM_PF_C_SETUP, kernels.h) in k steps, about 1400 cycles of FMAs:
   6 cycles a step for the 6 x 2 block (two FMA pipes). At least MR. */
#define TSR__GEMM_PF_C_TAIL_AVX2 230

#if defined(TSR__GEMM_X86)
void tsr__gemm_ukr_avx2_f32(int64_t k, float alpha, const float *ap, const float *bp, float beta,
                            float *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx2_f32_stream(int64_t k, float alpha, const float *ap, const float *bp,
                                   float beta, float *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx2_f64(int64_t k, double alpha, const double *ap, const double *bp,
                            double beta, double *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx2_f64_stream(int64_t k, double alpha, const double *ap, const double *bp,
                                   double beta, double *c, int64_t rs_c, int64_t cs_c);
/* The sup path's GEMM without packing, its in-place entry and the packed path's edge tiles
   (gemm_sup_avx2.c). */
void tsr__gemm_sup_avx2_f32(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb,
                            void *bbuf);
void tsr__gemm_sup_avx2_f64(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb,
                            void *bbuf);
void tsr__gemm_sup_avx2_f32_inplace(const tsr__gemm_args *g);
void tsr__gemm_sup_avx2_f64_inplace(const tsr__gemm_args *g);
void tsr__gemm_sup_avx2_f32_edge(int mb, int nb, int64_t k, const float *ap, const float *bp,
                                 float alpha, float beta, float *c, int64_t ldc);
void tsr__gemm_sup_avx2_f64_edge(int mb, int nb, int64_t k, const double *ap, const double *bp,
                                 double alpha, double beta, double *c, int64_t ldc);
/* AVX2 packing (gemm_pack_avx2.c): the transposing cases and the copies for MR = 6 and
   NR = 8/16 (and B^T panels of one vector) in registers, everything else through the portable
   routines. */
void tsr__gemm_pack_a_avx2_f32(int mr, int64_t mc, int64_t kc, const float *a, int64_t lda,
                               bool trans, float *ap);
void tsr__gemm_pack_a_avx2_f64(int mr, int64_t mc, int64_t kc, const double *a, int64_t lda,
                               bool trans, double *ap);
void tsr__gemm_pack_b_avx2_f32(int nr, int64_t kc, int64_t nc, const float *b, int64_t ldb,
                               bool trans, float *bp);
void tsr__gemm_pack_b_avx2_f64(int nr, int64_t kc, int64_t nc, const double *b, int64_t ldb,
                               bool trans, double *bp);
#endif

#endif /* TSR_OMP_GEMM_KERNELS_AVX2_H */
