/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU GEMM micro-kernel table (BLIS's kernels/<arch> side): every micro-kernel with its
 * register block, packing routines, streaming-store and small-path variants, and which ISAs
 * this CPU runs. The registry (gemm_registry.c) and the wisdom file (gemm_wisdom.c) name
 * kernels from this table; it calls neither.
 */
#include <string.h>

#include "omp/gemm/gemm_tune.h"
#include "omp/gemm/kernels/kernels.h"

#if defined(TSR__GEMM_X86)
#include <immintrin.h>
#endif
#include "omp/omp_internal.h"

/* Every micro-kernel, best first per dtype within an ISA. */
static const tsr__gemm_kernel tsr__gemm_kernels[] = {
#if defined(TSR__GEMM_X86)
    {"avx512-14x32", "avx512", TSR_F32, TSR__GEMM_AVX512_MR, TSR__GEMM_AVX512_NR_F32,
     tsr__gemm_ukr_avx512_f32, NULL, tsr__gemm_pack_a_avx512_f32, tsr__gemm_pack_b_avx512_f32, NULL,
     NULL, tsr__gemm_ukr_avx512_f32_stream, NULL, tsr__gemm_small_avx512_f32,
     tsr__gemm_small_avx512_f32_edge, NULL, tsr__gemm_small_avx512_f32_inplace},
    {"avx512-14x16", "avx512", TSR_F64, TSR__GEMM_AVX512_MR, TSR__GEMM_AVX512_NR_F64, NULL,
     tsr__gemm_ukr_avx512_f64, NULL, NULL, tsr__gemm_pack_a_avx512_f64, tsr__gemm_pack_b_avx512_f64,
     NULL, tsr__gemm_ukr_avx512_f64_stream, tsr__gemm_small_avx512_f64, NULL,
     tsr__gemm_small_avx512_f64_edge, tsr__gemm_small_avx512_f64_inplace},
    /* The same register blocks with a B prefetch (gemm_ukr_avx512.c): the Intel rows'. */
    {"avx512-14x32-pb", "avx512", TSR_F32, TSR__GEMM_AVX512_MR, TSR__GEMM_AVX512_NR_F32,
     tsr__gemm_ukr_avx512_f32_pb, NULL, tsr__gemm_pack_a_avx512_f32, tsr__gemm_pack_b_avx512_f32,
     NULL, NULL, tsr__gemm_ukr_avx512_f32_pb_stream, NULL, tsr__gemm_small_avx512_f32,
     tsr__gemm_small_avx512_f32_edge, NULL, tsr__gemm_small_avx512_f32_inplace},
    {"avx512-14x16-pb", "avx512", TSR_F64, TSR__GEMM_AVX512_MR, TSR__GEMM_AVX512_NR_F64, NULL,
     tsr__gemm_ukr_avx512_f64_pb, NULL, NULL, tsr__gemm_pack_a_avx512_f64,
     tsr__gemm_pack_b_avx512_f64, NULL, tsr__gemm_ukr_avx512_f64_pb_stream,
     tsr__gemm_small_avx512_f64, NULL, tsr__gemm_small_avx512_f64_edge,
     tsr__gemm_small_avx512_f64_inplace},
    {"avx2-6x16", "avx2", TSR_F32, TSR__GEMM_AVX2_MR, TSR__GEMM_AVX2_NR_F32, tsr__gemm_ukr_avx2_f32,
     NULL, tsr__gemm_pack_a_avx2_f32, tsr__gemm_pack_b_avx2_f32, NULL, NULL,
     tsr__gemm_ukr_avx2_f32_stream, NULL, tsr__gemm_small_avx2_f32, tsr__gemm_small_avx2_f32_edge,
     NULL, tsr__gemm_small_avx2_f32_inplace},
    {"avx2-6x8", "avx2", TSR_F64, TSR__GEMM_AVX2_MR, TSR__GEMM_AVX2_NR_F64, NULL,
     tsr__gemm_ukr_avx2_f64, NULL, NULL, tsr__gemm_pack_a_avx2_f64, tsr__gemm_pack_b_avx2_f64, NULL,
     tsr__gemm_ukr_avx2_f64_stream, tsr__gemm_small_avx2_f64, NULL, tsr__gemm_small_avx2_f64_edge,
     tsr__gemm_small_avx2_f64_inplace},
#endif
    {"portable-4x8", "portable", TSR_F32, TSR__GEMM_PORTABLE_MR, TSR__GEMM_PORTABLE_NR_F32,
     tsr__gemm_ukr_portable_f32, NULL, tsr__gemm_pack_a_f32, tsr__gemm_pack_b_f32, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL},
    {"portable-4x4", "portable", TSR_F64, TSR__GEMM_PORTABLE_MR, TSR__GEMM_PORTABLE_NR_F64, NULL,
     tsr__gemm_ukr_portable_f64, NULL, NULL, tsr__gemm_pack_a_f64, tsr__gemm_pack_b_f64, NULL, NULL,
     NULL, NULL, NULL, NULL},
};
enum { TSR__GEMM_NKERNELS = sizeof tsr__gemm_kernels / sizeof tsr__gemm_kernels[0] };

bool tsr__gemm_isa_available(const char *isa) {
  if (strcmp(isa, "portable") == 0) return true;
#if defined(TSR__GEMM_X86)
  __builtin_cpu_init();
  if (strcmp(isa, "avx2") == 0)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  /* The AVX-512 kernels use FMA through AVX512F only, but are compiled with -mfma too. */
  if (strcmp(isa, "avx512") == 0)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#endif
  return false;
}

const tsr__gemm_kernel *tsr__gemm_kernel_find(const char *name, tsr_dtype dtype) {
  for (int i = 0; i < TSR__GEMM_NKERNELS; ++i) {
    const tsr__gemm_kernel *k = &tsr__gemm_kernels[i];
    if (k->dtype == dtype && strcmp(k->name, name) == 0) return k;
  }
  return NULL;
}

const tsr__gemm_kernel *tsr__gemm_kernel_first(const char *isa, tsr_dtype dtype) {
  for (int i = 0; i < TSR__GEMM_NKERNELS; ++i) {
    const tsr__gemm_kernel *k = &tsr__gemm_kernels[i];
    if (k->dtype == dtype && strcmp(k->isa, isa) == 0) return k;
  }
  return NULL;
}

int tsr__gemm_kernel_list(tsr_dtype dtype, const tsr__gemm_kernel **out, int max) {
  int n = 0;
  for (int i = 0; i < TSR__GEMM_NKERNELS && n < max; ++i) {
    const tsr__gemm_kernel *k = &tsr__gemm_kernels[i];
    if (k->dtype == dtype && tsr__gemm_isa_available(k->isa)) out[n++] = k;
  }
  return n;
}

int tsr__gemm_max_tile(void) {
  int m = 0;
  for (int i = 0; i < TSR__GEMM_NKERNELS; ++i)
    if (tsr__gemm_kernels[i].mr * tsr__gemm_kernels[i].nr > m)
      m = tsr__gemm_kernels[i].mr * tsr__gemm_kernels[i].nr;
  return m;
}

void tsr__gemm_store_fence(void) {
#if defined(TSR__GEMM_X86)
  _mm_sfence();
#endif
}
