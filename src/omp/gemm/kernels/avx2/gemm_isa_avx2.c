/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AVX2 ISA's row of the kernel table: its kernels (AVX2 + FMA, x86-64 only) and whether
 * this CPU runs them. Compiled with the baseline flags (gemm.cmake): the predicate runs on any
 * CPU.
 */
#include "omp/gemm/kernels/avx2/kernels_avx2.h"

static bool tsr__gemm_avx2_available(void) {
#if defined(TSR__GEMM_X86)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

#if defined(TSR__GEMM_X86)
static const tsr__gemm_kernel tsr__gemm_avx2_kernels[] = {
    {.name = "avx2-6x16",
     .isa = "avx2",
     .dtype = TSR_F32,
     .mr = TSR__GEMM_AVX2_MR,
     .nr = TSR__GEMM_AVX2_NR_F32,
     .ukr_f32 = tsr__gemm_ukr_avx2_f32,
     .pack_a_f32 = tsr__gemm_pack_a_avx2_f32,
     .pack_b_f32 = tsr__gemm_pack_b_avx2_f32,
     .ukr_stream_f32 = tsr__gemm_ukr_avx2_f32_stream,
     .sup = tsr__gemm_sup_avx2_f32,
     .edge_f32 = tsr__gemm_sup_avx2_f32_edge,
     .sup_inplace = tsr__gemm_sup_avx2_f32_inplace},
    {.name = "avx2-6x8",
     .isa = "avx2",
     .dtype = TSR_F64,
     .mr = TSR__GEMM_AVX2_MR,
     .nr = TSR__GEMM_AVX2_NR_F64,
     .ukr_f64 = tsr__gemm_ukr_avx2_f64,
     .pack_a_f64 = tsr__gemm_pack_a_avx2_f64,
     .pack_b_f64 = tsr__gemm_pack_b_avx2_f64,
     .ukr_stream_f64 = tsr__gemm_ukr_avx2_f64_stream,
     .sup = tsr__gemm_sup_avx2_f64,
     .edge_f64 = tsr__gemm_sup_avx2_f64_edge,
     .sup_inplace = tsr__gemm_sup_avx2_f64_inplace},
};
#endif

const tsr__gemm_isa tsr__gemm_isa_avx2 = {.name = "avx2",
                                          .rank = 256,
                                          .available = tsr__gemm_avx2_available,
#if defined(TSR__GEMM_X86)
                                          TSR__GEMM_ISA_KERNELS(tsr__gemm_avx2_kernels)
#endif
};
