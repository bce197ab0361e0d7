/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AVX-512F micro-kernels, compiled with -mavx512f -mfma (gemm.cmake) and called only after
 * run-time detection (gemm_registry.c). x86-64 only.
 *
 * Register block 14 x (2 vectors): 14x32 for f32, 14x16 for f64 (the row-major analogue of
 * BLIS's Skylake-X 16x14 / 32x12 shapes). Per k step: 2 aligned vector loads of B and 14
 * broadcasts of A feed 28 FMAs, so the two FMA ports, not the load ports, are the bottleneck.
 */
#include "omp/gemm/kernels/avx512/kernels_avx512.h"

#if defined(TSR__GEMM_X86)
#include <immintrin.h>

/*
 * The k loop is GNU inline assembly: with 28 accumulators in intrinsic variables, GCC 12
 * spills some of them to the stack inside the loop and shuffles others between registers
 * (Clang 14 spills too). The assembly fixes the allocation: zmm0-27 accumulate (row i in
 * zmm 2i and 2i+1), zmm28/29 hold the two B vectors of the step, zmm30/31 alternate as the
 * broadcast A element, all 32 registers (as in BLIS's Skylake-X kernels). The same assembly
 * then updates C from the accumulators (TSR__GEMM_EPILOGUE, gemm.h) when C's columns are
 * unit-stride; for other strides it stores the 14 x NR product to a stack tile, which C code
 * applies.
 */

/* Prefetch distance of the A micro-panel (which streams from L2) in bytes: 8 k steps. */
#define TSR__PF_A_F64 "896"
#define TSR__PF_A_F32 "448"

#define TSR__XMM_CLOBBERS                                                                          \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",         \
      "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",    \
      "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30",    \
      "xmm31"

#define TSR__ZERO28                                                                                \
  "vpxord %%zmm0, %%zmm0, %%zmm0\n\t"                                                              \
  "vmovdqa64 %%zmm0, %%zmm1\n\t"                                                                   \
  "vmovdqa64 %%zmm0, %%zmm2\n\t"                                                                   \
  "vmovdqa64 %%zmm0, %%zmm3\n\t"                                                                   \
  "vmovdqa64 %%zmm0, %%zmm4\n\t"                                                                   \
  "vmovdqa64 %%zmm0, %%zmm5\n\t"                                                                   \
  "vmovdqa64 %%zmm0, %%zmm6\n\t"                                                                   \
  "vmovdqa64 %%zmm0, %%zmm7\n\t"                                                                   \
  "vmovdqa64 %%zmm0, %%zmm8\n\t"                                                                   \
  "vmovdqa64 %%zmm0, %%zmm9\n\t"                                                                   \
  "vmovdqa64 %%zmm0, %%zmm10\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm11\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm12\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm13\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm14\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm15\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm16\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm17\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm18\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm19\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm20\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm21\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm22\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm23\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm24\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm25\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm26\n\t"                                                                  \
  "vmovdqa64 %%zmm0, %%zmm27\n\t"

/* Kept out of clang-format: it reaches no fixed point on these juxtaposed string
   macros; one invocation per line. */
// clang-format off
/* Row i of one k step: broadcast A(i) (element size ES) into zmm S, two FMAs into
   zmm R0, R1. SUF is pd or ps, BC is sd or ss. */
#define TSR__ROW(BC, SUF, ES, i, R0, R1, S)                                                        \
  "vbroadcast" BC " " #i "*" ES "(%[a]), %%zmm" #S "\n\t"                                          \
  "vfmadd231" SUF " %%zmm28, %%zmm" #S ", %%zmm" #R0 "\n\t"                                        \
  "vfmadd231" SUF " %%zmm29, %%zmm" #S ", %%zmm" #R1 "\n\t"

#define TSR__STEP14(BC, SUF, ES)                                                                   \
  TSR__ROW(BC, SUF, ES, 0, 0, 1, 30)                                                               \
  TSR__ROW(BC, SUF, ES, 1, 2, 3, 31)                                                               \
  TSR__ROW(BC, SUF, ES, 2, 4, 5, 30)                                                               \
  TSR__ROW(BC, SUF, ES, 3, 6, 7, 31)                                                               \
  TSR__ROW(BC, SUF, ES, 4, 8, 9, 30)                                                               \
  TSR__ROW(BC, SUF, ES, 5, 10, 11, 31)                                                             \
  TSR__ROW(BC, SUF, ES, 6, 12, 13, 30)                                                             \
  TSR__ROW(BC, SUF, ES, 7, 14, 15, 31)                                                             \
  TSR__ROW(BC, SUF, ES, 8, 16, 17, 30)                                                             \
  TSR__ROW(BC, SUF, ES, 9, 18, 19, 31)                                                             \
  TSR__ROW(BC, SUF, ES, 10, 20, 21, 30)                                                            \
  TSR__ROW(BC, SUF, ES, 11, 22, 23, 31)                                                            \
  TSR__ROW(BC, SUF, ES, 12, 24, 25, 30)                                                            \
  TSR__ROW(BC, SUF, ES, 13, 26, 27, 31)

/* One k step of the 14 x 2-vector block: B's two vectors, the A prefetch, PFB (nothing, or
   the B prefetch below), 14 rows of FMAs. */
#define TSR__STEP_F64_(PFB)                                                                        \
  "vmovapd (%[b]), %%zmm28\n\t"                                                                     \
  "vmovapd 64(%[b]), %%zmm29\n\t"                                                                   \
  "prefetcht0 " TSR__PF_A_F64 "(%[a])\n\t"                                                          \
  "prefetcht0 " TSR__PF_A_F64 "+64(%[a])\n\t" PFB TSR__STEP14("sd", "pd", "8")                      \
  "add $112, %[a]\n\t"                                                                              \
  "add $128, %[b]\n\t"
#define TSR__STEP_F32_(PFB)                                                                        \
  "vmovaps (%[b]), %%zmm28\n\t"                                                                     \
  "vmovaps 64(%[b]), %%zmm29\n\t"                                                                   \
  "prefetcht0 " TSR__PF_A_F32 "(%[a])\n\t" PFB TSR__STEP14("ss", "ps", "4") "add $56, %[a]\n\t"   \
  "add $128, %[b]\n\t"
/* The B prefetch of the "-pb" kernels: the B micro-panel's two lines 8 k steps ahead. A
   micro-panel of KC x NR elements outgrows the L1 at deep KC (KC 512 f64: 64 KiB; KC 1024 f32:
   128 KiB) and, in the row-wise order of shallow slices (gemm_macro.c), every B micro-panel
   comes from L2 or L3 once per A micro-panel; the hardware prefetchers of Intel's Golden Cove
   (Sapphire/Emerald Rapids) left those loads exposed. Measured on Emerald Rapids (one
   thread, both kernels interleaved in one process with OpenBLAS 0.3.34, medians of 5-7 rounds
   of the ratio to it): dgemm 2048^3 0.96 -> 0.97, 4096x4096x256 1.09 -> 1.14, SUMMA's local
   multiply (row-major 2048x4096x256, beta 1) 0.84 -> 0.93; sgemm 2048^3 0.97 -> 1.02,
   4096x4096x256 1.14 -> 1.17. Zen 4/5 keep the kernels without it (their rows were measured
   so; tessera-tune tries both). */
#define TSR__PF_B "prefetcht0 1024(%[b])\n\tprefetcht0 1088(%[b])\n\t"
#define TSR__STEP_F64 TSR__STEP_F64_("")
#define TSR__STEP_F64_PB TSR__STEP_F64_(TSR__PF_B)
#define TSR__STEP_F32 TSR__STEP_F32_("")
#define TSR__STEP_F32_PB TSR__STEP_F32_(TSR__PF_B)
/* The C update after the k loop (gemm.h): alpha, beta in zmm30/31, two 64-byte vectors
   a row. */
#define TSR__E14(E, SUF, R0, R1) E(SUF, "zmm", "64", "30", "31", R0, R1)
#define TSR__ROWS14(E, SUF)                                                                        \
  TSR__E14(E, SUF, 0, 1) TSR__E14(E, SUF, 2, 3) TSR__E14(E, SUF, 4, 5) TSR__E14(E, SUF, 6, 7)      \
  TSR__E14(E, SUF, 8, 9) TSR__E14(E, SUF, 10, 11) TSR__E14(E, SUF, 12, 13)                         \
  TSR__E14(E, SUF, 14, 15) TSR__E14(E, SUF, 16, 17) TSR__E14(E, SUF, 18, 19)                       \
  TSR__E14(E, SUF, 20, 21) TSR__E14(E, SUF, 22, 23) TSR__E14(E, SUF, 24, 25)                       \
  TSR__E14(E, SUF, 26, 27)
// clang-format on

/* The kernel body NAME##_body for element type T, NR = 2 vectors of T, k step STEP (with or
   without the B prefetch); LASTB the byte offset of a C row's last element, BC/SUF/ES the
   broadcast and FMA suffixes and the element size as strings. */
#define TSR__UKR_BODY(NAME, T, NR, STEP, LASTB, BC, SUF, ES)                                       \
  static inline __attribute__((always_inline)) void NAME##_body(                                   \
      int64_t k, T alpha, const T *ap, const T *bp, T beta, T *c, int64_t rs_c, int64_t cs_c,      \
      bool stream) {                                                                               \
    _Alignas(64) T t[14 * (NR)];                                                                   \
    TSR__GEMM_EPI_OPERANDS(T, NR);                                                                 \
    /* The C tile's lines, for writing (PREFETCHW), whatever beta: with beta == 0 the stores       \
       after the k loop would otherwise wait for each line's read-for-ownership from memory        \
       (measured on Zen 5, 4096x4096x256, one thread: sgemm 184 -> 205 GFLOP/s, dgemm 88 ->        \
       94); before or late in the k loop, with the next tile's (kernels.h). */                     \
    TSR__GEMM_PF_C_SETUP(14, TSR__GEMM_PF_C_TAIL_AVX512, LASTB, 1, 1);                             \
    __asm__ volatile(TSR__ZERO28 TSR__GEMM_KLOOP(STEP, "prefetchw", LASTB,                         \
                                                 TSR__GEMM_PF_C_NEXT128("prefetchw", LASTB))       \
                         TSR__GEMM_EPILOGUE(TSR__ROWS14, "zmm", "30", "31", BC, SUF, ES)           \
                     : TSR__GEMM_ASM_OUTPUTS                                                       \
                     : TSR__GEMM_ASM_INPUTS, [nxt] "r"(nxt)                                        \
                     : "cc", "memory", TSR__XMM_CLOBBERS);                                         \
    TSR__GEMM_EPI_STRIDED(14, NR);                                                                 \
  }                                                                                                \
  TSR__GEMM_UKR_DEFINE(NAME, T)

/* f64, 14x16 */
TSR__UKR_BODY(tsr__gemm_ukr_avx512_f64, double, 16, TSR__STEP_F64, 120, "sd", "pd", "8")
TSR__UKR_BODY(tsr__gemm_ukr_avx512_f64_pb, double, 16, TSR__STEP_F64_PB, 120, "sd", "pd", "8")
/* f32, 14x32 */
TSR__UKR_BODY(tsr__gemm_ukr_avx512_f32, float, 32, TSR__STEP_F32, 124, "ss", "ps", "4")
TSR__UKR_BODY(tsr__gemm_ukr_avx512_f32_pb, float, 32, TSR__STEP_F32_PB, 124, "ss", "ps", "4")

#else
/* ISO C forbids an empty translation unit. */
typedef int tsr__gemm_ukr_avx512_unused;
#endif
