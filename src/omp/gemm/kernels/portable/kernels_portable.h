/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The portable kernels (plain C, always built, the fallback on every CPU): the micro-kernels
 * (gemm_ukr_portable.c) and their register blocks. The portable packing routines
 * (gemm_pack_portable.c), which define the packed layout and which the ISA packers fall back
 * to, are declared in omp/gemm/gemm.h (tsr__gemm_pack_a_f32 ...). Included by this folder's
 * files only.
 */
#ifndef TSR_OMP_GEMM_KERNELS_PORTABLE_H
#define TSR_OMP_GEMM_KERNELS_PORTABLE_H

#include "omp/gemm/kernels/kernels.h"

/* Register blocks (compile-time: the kernels are written for them). */
#define TSR__GEMM_PORTABLE_MR 4
#define TSR__GEMM_PORTABLE_NR_F32 8
#define TSR__GEMM_PORTABLE_NR_F64 4

void tsr__gemm_ukr_portable_f32(int64_t k, float alpha, const float *ap, const float *bp,
                                float beta, float *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_portable_f64(int64_t k, double alpha, const double *ap, const double *bp,
                                double beta, double *c, int64_t rs_c, int64_t cs_c);

#endif /* TSR_OMP_GEMM_KERNELS_PORTABLE_H */
