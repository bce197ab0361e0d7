/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The portable ISA's row of the kernel table: plain C, built everywhere and run on every CPU,
 * the fallback of every choice (tsr__gemm_choose). Its packing routines are the portable ones
 * that define the packed layout (gemm_pack_portable.c).
 */
#include "omp/gemm/kernels/portable/kernels_portable.h"

static bool tsr__gemm_portable_available(void) {
  return true;
}

static const tsr__gemm_kernel tsr__gemm_portable_kernels[] = {
    {.name = "portable-4x8",
     .isa = "portable",
     .dtype = TSR_F32,
     .mr = TSR__GEMM_PORTABLE_MR,
     .nr = TSR__GEMM_PORTABLE_NR_F32,
     .ukr_f32 = tsr__gemm_ukr_portable_f32,
     .pack_a_f32 = tsr__gemm_pack_a_f32,
     .pack_b_f32 = tsr__gemm_pack_b_f32},
    {.name = "portable-4x4",
     .isa = "portable",
     .dtype = TSR_F64,
     .mr = TSR__GEMM_PORTABLE_MR,
     .nr = TSR__GEMM_PORTABLE_NR_F64,
     .ukr_f64 = tsr__gemm_ukr_portable_f64,
     .pack_a_f64 = tsr__gemm_pack_a_f64,
     .pack_b_f64 = tsr__gemm_pack_b_f64},
};

const tsr__gemm_isa tsr__gemm_isa_portable = {.name = "portable",
                                              .rank = 0,
                                              .available = tsr__gemm_portable_available,
                                              TSR__GEMM_ISA_KERNELS(tsr__gemm_portable_kernels)};
