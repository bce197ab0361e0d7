/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AVX2+FMA micro-kernels, compiled with -mavx2 -mfma (gemm.cmake) and called only after
 * run-time detection (gemm_registry.c). x86-64 only.
 *
 * Register block 6 x (2 vectors): 6x16 for f32, 6x8 for f64 (the classic Haswell shape).
 * Per k step 2 aligned vector loads of B and 6 broadcasts of A feed 12 FMAs. Measured on
 * Sapphire Rapids forced to this kernel, single thread: dgemm 2048^3 33-34 GFLOP/s, sgemm
 * 69 (OpenBLAS 0.3.21's Haswell kernels: 34-37 and 73).
 */
#include "omp/gemm/kernels/avx2/kernels_avx2.h"

#if defined(TSR__GEMM_X86)
#include <immintrin.h>

/*
 * The k loop is GNU inline assembly with a fixed allocation, as in the AVX-512 file: ymm0-11
 * accumulate (row i in ymm 2i and 2i+1), ymm12/13 hold the two B vectors of the step,
 * ymm14/15 alternate as the broadcast A element. The same assembly then updates C from the
 * accumulators (TSR__GEMM_EPILOGUE, gemm.h) when C's columns are unit-stride; for other
 * strides it stores the product to a stack tile, which C code applies.
 */

/* Prefetch distance of the A micro-panel (which streams from L2), in bytes: 8 k steps. */
#define TSR__PF_A_F64 "384"
#define TSR__PF_A_F32 "192"

#define TSR__YMM_CLOBBERS                                                                          \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",         \
      "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

#define TSR__ZERO12                                                                                \
  "vxorps %%ymm0, %%ymm0, %%ymm0\n\t"                                                              \
  "vmovaps %%ymm0, %%ymm1\n\t"                                                                     \
  "vmovaps %%ymm0, %%ymm2\n\t"                                                                     \
  "vmovaps %%ymm0, %%ymm3\n\t"                                                                     \
  "vmovaps %%ymm0, %%ymm4\n\t"                                                                     \
  "vmovaps %%ymm0, %%ymm5\n\t"                                                                     \
  "vmovaps %%ymm0, %%ymm6\n\t"                                                                     \
  "vmovaps %%ymm0, %%ymm7\n\t"                                                                     \
  "vmovaps %%ymm0, %%ymm8\n\t"                                                                     \
  "vmovaps %%ymm0, %%ymm9\n\t"                                                                     \
  "vmovaps %%ymm0, %%ymm10\n\t"                                                                    \
  "vmovaps %%ymm0, %%ymm11\n\t"

/* Kept out of clang-format: it reaches no fixed point on these juxtaposed string
   macros; one invocation per line. */
// clang-format off
/* Row i of one k step: broadcast A(i) (element size ES) into ymm S, two FMAs into
   ymm R0, R1. SUF is pd or ps, BC is sd or ss. */
#define TSR__ROW(BC, SUF, ES, i, R0, R1, S)                                                        \
  "vbroadcast" BC " " #i "*" ES "(%[a]), %%ymm" #S "\n\t"                                          \
  "vfmadd231" SUF " %%ymm12, %%ymm" #S ", %%ymm" #R0 "\n\t"                                        \
  "vfmadd231" SUF " %%ymm13, %%ymm" #S ", %%ymm" #R1 "\n\t"

#define TSR__STEP6(BC, SUF, ES)                                                                    \
  TSR__ROW(BC, SUF, ES, 0, 0, 1, 14)                                                               \
  TSR__ROW(BC, SUF, ES, 1, 2, 3, 15)                                                               \
  TSR__ROW(BC, SUF, ES, 2, 4, 5, 14)                                                               \
  TSR__ROW(BC, SUF, ES, 3, 6, 7, 15)                                                               \
  TSR__ROW(BC, SUF, ES, 4, 8, 9, 14)                                                               \
  TSR__ROW(BC, SUF, ES, 5, 10, 11, 15)

/* One k step of the 6 x 2-vector block: B's two vectors, the A prefetch, 6 rows of FMAs. */
#define TSR__STEP_F64                                                                              \
  "vmovapd (%[b]), %%ymm12\n\t"                                                                     \
  "vmovapd 32(%[b]), %%ymm13\n\t"                                                                   \
  "prefetcht0 " TSR__PF_A_F64 "(%[a])\n\t" TSR__STEP6("sd", "pd", "8") "add $48, %[a]\n\t"         \
  "add $64, %[b]\n\t"
#define TSR__STEP_F32                                                                              \
  "vmovaps (%[b]), %%ymm12\n\t"                                                                     \
  "vmovaps 32(%[b]), %%ymm13\n\t"                                                                   \
  "prefetcht0 " TSR__PF_A_F32 "(%[a])\n\t" TSR__STEP6("ss", "ps", "4") "add $24, %[a]\n\t"         \
  "add $64, %[b]\n\t"
/* The C update after the k loop (gemm.h): alpha, beta in ymm14/15, two 32-byte vectors
   a row. */
#define TSR__E6(E, SUF, R0, R1) E(SUF, "ymm", "32", "14", "15", R0, R1)
#define TSR__ROWS6(E, SUF)                                                                         \
  TSR__E6(E, SUF, 0, 1) TSR__E6(E, SUF, 2, 3) TSR__E6(E, SUF, 4, 5) TSR__E6(E, SUF, 6, 7)          \
  TSR__E6(E, SUF, 8, 9) TSR__E6(E, SUF, 10, 11)
// clang-format on

/* The kernel body NAME##_body for element type T, NR = 2 vectors of T, k step STEP; LASTB the
   byte offset of a C row's last element, BC/SUF/ES the broadcast and FMA suffixes and the
   element size as strings. The C tile's lines are fetched whatever beta (beta == 0: the stores
   would wait for the lines), before or late in the k loop (kernels.h); without the next
   tile's fetch of the AVX-512 kernels, which did not gain here. */
/* Kept out of clang-format: it joins the two operand lists into one line. */
// clang-format off
#define TSR__UKR_BODY(NAME, T, NR, STEP, LASTB, BC, SUF, ES)                                       \
  static inline __attribute__((always_inline)) void NAME##_body(                                   \
      int64_t k, T alpha, const T *ap, const T *bp, T beta, T *c, int64_t rs_c, int64_t cs_c,      \
      bool stream) {                                                                               \
    _Alignas(32) T t[6 * (NR)];                                                                    \
    TSR__GEMM_EPI_OPERANDS(T, NR);                                                                 \
    TSR__GEMM_PF_C_SETUP(6, TSR__GEMM_PF_C_TAIL_AVX2, LASTB, 0, 0);                                \
    __asm__ volatile(                                                                              \
        TSR__ZERO12 TSR__GEMM_KLOOP(STEP, "prefetcht0", LASTB, "")                                 \
            TSR__GEMM_EPILOGUE(TSR__ROWS6, "ymm", "14", "15", BC, SUF, ES) "vzeroupper\n\t"        \
        : TSR__GEMM_ASM_OUTPUTS                                                                    \
        : TSR__GEMM_ASM_INPUTS                                                                     \
        : "cc", "memory", TSR__YMM_CLOBBERS);                                                      \
    TSR__GEMM_EPI_STRIDED(6, NR);                                                                  \
  }                                                                                                \
  TSR__GEMM_UKR_DEFINE(NAME, T)
// clang-format on

/* f64, 6x8 */
TSR__UKR_BODY(tsr__gemm_ukr_avx2_f64, double, 8, TSR__STEP_F64, 56, "sd", "pd", "8")
/* f32, 6x16 */
TSR__UKR_BODY(tsr__gemm_ukr_avx2_f32, float, 16, TSR__STEP_F32, 60, "ss", "ps", "4")

#else
/* ISO C forbids an empty translation unit. */
typedef int tsr__gemm_ukr_avx2_unused;
#endif
