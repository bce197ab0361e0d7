/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AVX-512 ISA's row of the kernel table: its kernels (AVX-512F, x86-64 only), best first
 * per dtype, and whether this CPU runs them. Compiled with the baseline flags (gemm.cmake): the
 * predicate runs on any CPU.
 */
#include "omp/gemm/kernels/avx512/kernels_avx512.h"

static bool tsr__gemm_avx512_available(void) {
#if defined(TSR__GEMM_X86)
  __builtin_cpu_init();
  /* The kernels use FMA through AVX512F only, but are compiled with -mfma too. */
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

#if defined(TSR__GEMM_X86)
/* One register block (14 x 2 vectors) per dtype, with and without a B prefetch. */
#define TSR__GEMM_AVX512_ROW(NAME, SFX, DT, T, UKR)                                                \
  {                                                                                                \
    .name = NAME, .isa = "avx512", .dtype = DT, .mr = TSR__GEMM_AVX512_MR,                         \
    .nr = TSR__GEMM_AVX512_NR_##SFX, .ukr_##T = UKR, .pack_a_##T = tsr__gemm_pack_a_avx512_##T,    \
    .pack_b_##T = tsr__gemm_pack_b_avx512_##T, .ukr_stream_##T = UKR##_stream,                     \
    .sup = tsr__gemm_sup_avx512_##T, .edge_##T = tsr__gemm_sup_avx512_##T##_edge,                  \
    .sup_inplace = tsr__gemm_sup_avx512_##T##_inplace                                              \
  }
static const tsr__gemm_kernel tsr__gemm_avx512_kernels[] = {
    TSR__GEMM_AVX512_ROW("avx512-14x32", F32, TSR_F32, f32, tsr__gemm_ukr_avx512_f32),
    TSR__GEMM_AVX512_ROW("avx512-14x16", F64, TSR_F64, f64, tsr__gemm_ukr_avx512_f64),
    /* The same register blocks with a B prefetch (gemm_ukr_avx512.c): the Intel rows'. */
    TSR__GEMM_AVX512_ROW("avx512-14x32-pb", F32, TSR_F32, f32, tsr__gemm_ukr_avx512_f32_pb),
    TSR__GEMM_AVX512_ROW("avx512-14x16-pb", F64, TSR_F64, f64, tsr__gemm_ukr_avx512_f64_pb),
};
#undef TSR__GEMM_AVX512_ROW
#endif

const tsr__gemm_isa tsr__gemm_isa_avx512 = {.name = "avx512",
                                            .rank = 512,
                                            .available = tsr__gemm_avx512_available,
#if defined(TSR__GEMM_X86)
                                            TSR__GEMM_ISA_KERNELS(tsr__gemm_avx512_kernels)
#endif
};
