/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AVX-512F kernels (x86-64 only, TSR__GEMM_X86): micro-kernels with and without a B
 * prefetch (gemm_ukr_avx512.c), packing (gemm_pack_avx512.c), sup kernels (small, unpacked: BLIS's
 * term) and edge tiles (gemm_sup_avx512_f32.c, gemm_sup_avx512_f64.c: one file a dtype, they
 * compile side by side), compiled with this folder's flags (isa.cmake), their register block, and
 * the row that registers them (gemm_isa_avx512.c). Included by this folder's files only.
 */
#ifndef TSR_OMP_GEMM_KERNELS_AVX512_H
#define TSR_OMP_GEMM_KERNELS_AVX512_H

#include "omp/gemm/kernels/kernels.h"

/* Register block (compile-time: the kernels are written for it). */
#define TSR__GEMM_AVX512_MR 14
#define TSR__GEMM_AVX512_NR_F32 32
#define TSR__GEMM_AVX512_NR_F64 16
/* The C fetch's tail (TSR__GEMM_PF_C_SETUP, kernels.h) in k steps, about 1400 cycles of FMAs:
   14 cycles a step for the 14 x 2 block (two FMA pipes). At least MR. */
#define TSR__GEMM_PF_C_TAIL_AVX512 100

#if defined(TSR__GEMM_X86)
void tsr__gemm_ukr_avx512_f32(int64_t k, float alpha, const float *ap, const float *bp, float beta,
                              float *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx512_f32_stream(int64_t k, float alpha, const float *ap, const float *bp,
                                     float beta, float *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx512_f64(int64_t k, double alpha, const double *ap, const double *bp,
                              double beta, double *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx512_f64_stream(int64_t k, double alpha, const double *ap, const double *bp,
                                     double beta, double *c, int64_t rs_c, int64_t cs_c);
/* The same with a B prefetch ("-pb" kernels, gemm_ukr_avx512.c). */
void tsr__gemm_ukr_avx512_f32_pb(int64_t k, float alpha, const float *ap, const float *bp,
                                 float beta, float *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx512_f32_pb_stream(int64_t k, float alpha, const float *ap, const float *bp,
                                        float beta, float *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx512_f64_pb(int64_t k, double alpha, const double *ap, const double *bp,
                                 double beta, double *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx512_f64_pb_stream(int64_t k, double alpha, const double *ap, const double *bp,
                                        double beta, double *c, int64_t rs_c, int64_t cs_c);
/* The sup path's GEMM without packing, its in-place entry and the packed path's edge tiles
   (gemm_sup_avx512_f32.c and _f64.c). */
void tsr__gemm_sup_avx512_f32(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb,
                              void *bbuf);
void tsr__gemm_sup_avx512_f64(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb,
                              void *bbuf);
void tsr__gemm_sup_avx512_f32_inplace(const tsr__gemm_args *g);
void tsr__gemm_sup_avx512_f64_inplace(const tsr__gemm_args *g);
void tsr__gemm_sup_avx512_f32_edge(int mb, int nb, int64_t k, const float *ap, const float *bp,
                                   float alpha, float beta, float *c, int64_t ldc);
void tsr__gemm_sup_avx512_f64_edge(int mb, int nb, int64_t k, const double *ap, const double *bp,
                                   double alpha, double beta, double *c, int64_t ldc);
/* AVX-512 packing (gemm_pack_avx512.c): the transposing cases for MR = 14 and NR = 16/32 (and
   B^T panels of one vector) in registers, everything else through the portable routines. */
void tsr__gemm_pack_a_avx512_f32(int mr, int64_t mc, int64_t kc, const float *a, int64_t lda,
                                 bool trans, float *ap);
void tsr__gemm_pack_a_avx512_f64(int mr, int64_t mc, int64_t kc, const double *a, int64_t lda,
                                 bool trans, double *ap);
void tsr__gemm_pack_b_avx512_f32(int nr, int64_t kc, int64_t nc, const float *b, int64_t ldb,
                                 bool trans, float *bp);
void tsr__gemm_pack_b_avx512_f64(int nr, int64_t kc, int64_t nc, const double *b, int64_t ldb,
                                 bool trans, double *bp);
#endif

#endif /* TSR_OMP_GEMM_KERNELS_AVX512_H */
