/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU GEMM's kernels (BLIS's kernels/<arch>): the micro-kernels, the small-matrix kernels
 * and the ISA packing routines, one file per ISA compiled with that ISA's flags (gemm.cmake),
 * their register blocks, and the macros the ISA files define them with. Only the files of
 * omp/gemm/kernels include this header; the frame reaches the kernels through the table
 * (tsr__gemm_kernels, gemm_kernels.c) and the contract in omp/gemm/gemm.h.
 */
#ifndef TSR_OMP_GEMM_KERNELS_H
#define TSR_OMP_GEMM_KERNELS_H

#include "omp/gemm/gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Micro-kernels, one set per ISA file. The portable ones are always built; the others exist
   on x86-64 only (TSR__GEMM_X86). */
void tsr__gemm_ukr_portable_f32(int64_t k, float alpha, const float *ap, const float *bp,
                                float beta, float *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_portable_f64(int64_t k, double alpha, const double *ap, const double *bp,
                                double beta, double *c, int64_t rs_c, int64_t cs_c);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TSR__GEMM_X86 1
void tsr__gemm_ukr_avx2_f32(int64_t k, float alpha, const float *ap, const float *bp, float beta,
                            float *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx2_f32_stream(int64_t k, float alpha, const float *ap, const float *bp,
                                   float beta, float *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx2_f64(int64_t k, double alpha, const double *ap, const double *bp,
                            double beta, double *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx2_f64_stream(int64_t k, double alpha, const double *ap, const double *bp,
                                   double beta, double *c, int64_t rs_c, int64_t cs_c);
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
/* Small-matrix GEMM without packing (gemm_small_avx2.c, gemm_small_avx512_f32.c and _f64.c). */
void tsr__gemm_small_avx2_f32(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb,
                              void *bbuf);
void tsr__gemm_small_avx2_f64(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb,
                              void *bbuf);
void tsr__gemm_small_avx512_f32(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb,
                                void *bbuf);
void tsr__gemm_small_avx512_f64(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb,
                                void *bbuf);
void tsr__gemm_small_avx2_f32_inplace(const tsr__gemm_args *g);
void tsr__gemm_small_avx2_f64_inplace(const tsr__gemm_args *g);
void tsr__gemm_small_avx512_f32_inplace(const tsr__gemm_args *g);
void tsr__gemm_small_avx512_f64_inplace(const tsr__gemm_args *g);
void tsr__gemm_small_avx2_f32_edge(int mb, int nb, int64_t k, const float *ap, const float *bp,
                                   float alpha, float beta, float *c, int64_t ldc);
void tsr__gemm_small_avx2_f64_edge(int mb, int nb, int64_t k, const double *ap, const double *bp,
                                   double alpha, double beta, double *c, int64_t ldc);
void tsr__gemm_small_avx512_f32_edge(int mb, int nb, int64_t k, const float *ap, const float *bp,
                                     float alpha, float beta, float *c, int64_t ldc);
void tsr__gemm_small_avx512_f64_edge(int mb, int nb, int64_t k, const double *ap, const double *bp,
                                     double alpha, double beta, double *c, int64_t ldc);
/* Defines NAME, an ISA packing of op(B) (tsr__gemm_pack_f32/f64, gemm.h) for a kernel of NR
   columns: op(B) stored transposed into panels of NR columns or NR / 2 (one vector: the small
   path's narrow strips) in registers, op(B) as stored into full NR panels by ROWS(kc, panels,
   sizeof(T), b, ldb, bp) (the ISA's row copy), everything else by PORTABLE (gemm_pack.c). T the
   element type; BT(src, ldb, jb, kk, dst, W) the ISA's packer of H = NR / 2 columns: kk (1..H)
   k steps of jb (0..H) columns from src (the rest zeros), transposed into rows W apart at dst.
   op(B) stored transposed (B(p, j) at b[j*ldb + p]) goes in strips of W columns, each two halves
   of H storage rows (W = NR) or one (W = H), k in chunks of H: a whole strip's whole chunks call
   BT with constant jb = kk = H, so it is straight code (a runtime jb and kk had cost a test and
   branch per column and per store and spilled the row offsets, and the edges' values in the
   same loop a prologue of ~80 instructions: dgemm 16^3 with op(B) = B^T on Emerald Rapids
   packed 16 x 16 in 550 instructions); the partial chunk and strip go to NAME##_edge. */
#define TSR__PACK_B_DEFINE(NAME, T, NR, BT, ROWS, PORTABLE)                                        \
  static __attribute__((noinline)) void NAME##_edge(const int W, int64_t kc, int64_t p, int jb,    \
                                                    const T *src, int64_t ldb, T *dst) {           \
    enum { H = (NR) / 2 };                                                                         \
    for (; p < kc; p += H) {                                                                       \
      const int kk = (int)(kc - p < H ? kc - p : H);                                               \
      BT(src + p, ldb, jb < H ? jb : H, kk, dst + p * W, W);                                       \
      if (W > H)                                                                                   \
        BT(jb > H ? src + H * ldb + p : src, ldb, jb > H ? jb - H : 0, kk, dst + p * W + H, W);    \
    }                                                                                              \
  }                                                                                                \
  static inline __attribute__((always_inline)) void NAME##_bt(const int W, int64_t kc, int64_t nc, \
                                                              const T *b, int64_t ldb, T *bp) {    \
    enum { H = (NR) / 2 };                                                                         \
    for (int64_t j0 = 0; j0 < nc; j0 += W) {                                                       \
      const int jb = (int)(nc - j0 < W ? nc - j0 : W);                                             \
      const T *src = b + j0 * ldb; /* row j of storage = column j of op(B) */                      \
      T *dst = bp + j0 * kc;                                                                       \
      int64_t p = 0;                                                                               \
      if (jb == W)                                                                                 \
        for (; p + H <= kc; p += H) {                                                              \
          BT(src + p, ldb, H, H, dst + p * W, W);                                                  \
          if (W > H) BT(src + H * ldb + p, ldb, H, H, dst + p * W + H, W);                         \
        }                                                                                          \
      if (p < kc) NAME##_edge(W, kc, p, jb, src, ldb, dst);                                        \
    }                                                                                              \
  }                                                                                                \
  void NAME(int nr, int64_t kc, int64_t nc, const T *b, int64_t ldb, bool trans, T *bp) {          \
    if (trans && nr == (NR)) {                                                                     \
      NAME##_bt(NR, kc, nc, b, ldb, bp);                                                           \
      return;                                                                                      \
    }                                                                                              \
    if (trans && nr == (NR) / 2) {                                                                 \
      NAME##_bt((NR) / 2, kc, nc, b, ldb, bp);                                                     \
      return;                                                                                      \
    }                                                                                              \
    if (trans || nr != (NR)) {                                                                     \
      PORTABLE(nr, kc, nc, b, ldb, trans, bp);                                                     \
      return;                                                                                      \
    }                                                                                              \
    const int64_t full = nc / (NR);                                                                \
    ROWS(kc, full, (int)sizeof(T), (const char *)b, ldb, (char *)bp);                              \
    if (full * (NR) < nc)                                                                          \
      PORTABLE(nr, kc, nc - full * (NR), b + full * (NR), ldb, false, bp + full * (NR)*kc);        \
  }

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

/* Defines the micro-kernel NAME and its streaming variant NAME##_stream (element type T) from
   a function NAME##_body(k, alpha, ap, bp, beta, c, rs_c, cs_c, bool stream) that the ISA file
   defines first: the variant passes beta 0, cs_c 1 and stream true (the contract above). */
#define TSR__GEMM_UKR_DEFINE(NAME, T)                                                              \
  void NAME(int64_t k, T alpha, const T *ap, const T *bp, T beta, T *c, int64_t rs_c,              \
            int64_t cs_c) {                                                                        \
    NAME##_body(k, alpha, ap, bp, beta, c, rs_c, cs_c, false);                                     \
  }                                                                                                \
  void NAME##_stream(int64_t k, T alpha, const T *ap, const T *bp, T beta, T *c, int64_t rs_c,     \
                     int64_t cs_c) {                                                               \
    (void)beta;                                                                                    \
    (void)cs_c;                                                                                    \
    NAME##_body(k, alpha, ap, bp, 0, c, rs_c, 1, true);                                            \
  }

/* The C update an assembly micro-kernel does after its k loop, from the accumulators:
   C = alpha*AB (beta == 0, C not read), alpha*AB + C (beta == 1), alpha*AB + beta*C, or
   alpha*AB with non-temporal stores (the streaming variant). */
#define TSR__GEMM_EPI_ZERO 0
#define TSR__GEMM_EPI_ONE 1
#define TSR__GEMM_EPI_BETA 2
#define TSR__GEMM_EPI_STREAM 3
static inline int64_t tsr__gemm_epi_mode(double beta, bool stream) {
  return stream      ? TSR__GEMM_EPI_STREAM
         : beta == 0 ? TSR__GEMM_EPI_ZERO
         : beta == 1 ? TSR__GEMM_EPI_ONE
                     : TSR__GEMM_EPI_BETA;
}

/*
 * When the x86 micro-kernels fetch C's tile: during the last steps of the k loop, one row per
 * step (its first and last byte), starting tail steps before the end
 * (TSR__GEMM_PF_C_TAIL_*), so that the lines arrive a few hundred nanoseconds before the
 * update needs them. Fetched before the loop instead, the lines were evicted again by the
 * packed A and B streaming through L1 over a deep k slice; and when C's row stride is a
 * power of two, its rows share a few L1 and L2 sets, the refetch missed to L3 or memory, and
 * the update stalled on it. Measured on Zen 5, sgemm 4096^3, one thread: 243-245 -> 254-256
 * GFLOP/s (C update skipped altogether: 255-256; ldc 4160 instead of 4096: 255-258).
 * Shallower slices (k < tail) fetch the whole tile before the loop, as the update would
 * otherwise wait for each line's read-for-ownership (beta == 0 included). Sets *k1 steps
 * without the fetch, then *k2 steps fetching a row each (%[cpf] advanced by %[rsb]), then *k3
 * without; returns whether the caller fetches the tile before the loop.
 */
static inline bool tsr__gemm_pf_c_split(int64_t k, int mr, int64_t tail, bool fetch, int64_t *k1,
                                        int64_t *k2, int64_t *k3) {
  *k1 = k;
  *k2 = *k3 = 0;
  if (!fetch) return false;
  if (k < tail) return true;
  *k1 = k - tail;
  *k2 = mr;
  *k3 = tail - mr;
  return false;
}
/* The kernel-body side of that fetch (a body with parameters k, c, rs_c, stream and `direct`
   from TSR__GEMM_EPI_OPERANDS): declares the counts k1, k2, k3, the fetch pointer cpf and the
   row stride in bytes rsb for TSR__GEMM_KLOOP, and fetches the tile before the loop when the
   slice is shallow. MR rows; TAIL the tail length; LASTB the byte offset of a row's last
   element; RW 1 to fetch for writing (PREFETCHW), 0 for reading. */
#define TSR__GEMM_PF_C_SETUP(MR, TAIL, LASTB, RW)                                                  \
  int64_t k1, k2, k3;                                                                              \
  const char *cpf = (const char *)c;                                                               \
  const int64_t rsb = rs_c * (int64_t)sizeof(*c);                                                  \
  if (tsr__gemm_pf_c_split(k, (MR), (TAIL), direct && !stream, &k1, &k2, &k3))                     \
    for (int i_ = 0; i_ < (MR); ++i_) {                                                            \
      __builtin_prefetch(cpf + i_ * rsb, (RW), 3);                                                 \
      __builtin_prefetch(cpf + i_ * rsb + (LASTB), (RW), 3);                                       \
    }
/* Tail lengths in k steps, about 1400 cycles of FMAs each: 14 cycles a step for the AVX-512
   14 x 2 block, 6 for the AVX2 6 x 2 block (two FMA pipes). At least MR. */
#define TSR__GEMM_PF_C_TAIL_AVX512 100
#define TSR__GEMM_PF_C_TAIL_AVX2 230

/* That k loop as assembly text (labels 1-5 and 2 local to the kernel's asm statement):
   %[k], %[k2], %[k3] the three counts, STEP one k step, PF the prefetch instruction
   ("prefetchw", or "prefetcht0" where PREFETCHW may be a no-op), LASTB the byte offset of a C
   row's last element (a number). Ends at label 2, where the C update follows. */
// clang-format off
#define TSR__GEMM_KLOOP(STEP, PF, LASTB)                                                           \
  "test %[k], %[k]\n\t"                                                                            \
  "jz 3f\n\t"                                                                                      \
  ".p2align 5\n"                                                                                   \
  "1:\n\t" STEP                                                                                    \
  "dec %[k]\n\t"                                                                                   \
  "jnz 1b\n"                                                                                       \
  "3:\n\t"                                                                                         \
  "test %[k2], %[k2]\n\t"                                                                          \
  "jz 2f\n"                                                                                        \
  "4:\n\t" STEP                                                                                    \
  PF " (%[cpf])\n\t"                                                                               \
  PF " " TSR__GEMM_STR(LASTB) "(%[cpf])\n\t"                                                       \
  "add %[rsb], %[cpf]\n\t"                                                                         \
  "dec %[k2]\n\t"                                                                                  \
  "jnz 4b\n\t"                                                                                     \
  "test %[k3], %[k3]\n\t"                                                                          \
  "jz 2f\n"                                                                                        \
  "5:\n\t" STEP                                                                                    \
  "dec %[k3]\n\t"                                                                                  \
  "jnz 5b\n"                                                                                       \
  "2:\n\t"
// clang-format on

/*
 * The operands of that update, declared in a kernel body whose parameters are named k, alpha,
 * ap, bp, beta, c, rs_c, cs_c, stream and which has a stack tile t of MR x NR elements of T:
 * with unit column stride (direct) the assembly updates C itself; otherwise it stores AB into
 * t (mode ZERO, alpha 1), and TSR__GEMM_EPI_STRIDED then applies alpha and beta to C.
 */
#define TSR__GEMM_EPI_OPERANDS(T, NR)                                                              \
  const bool direct = cs_c == 1;                                                                   \
  const T ab[2] = {direct ? alpha : 1, direct ? beta : 0};                                         \
  T *cp = direct ? c : t;                                                                          \
  const int64_t rs = (direct ? rs_c : (NR)) * (int64_t)sizeof(T);                                  \
  const int64_t mode = direct ? tsr__gemm_epi_mode(beta, stream) : TSR__GEMM_EPI_ZERO
#define TSR__GEMM_EPI_STRIDED(MR, NR)                                                              \
  do {                                                                                             \
    if (direct) break;                                                                             \
    for (int i_ = 0; i_ < (MR); ++i_)                                                              \
      for (int j_ = 0; j_ < (NR); ++j_) {                                                          \
        const int64_t e_ = i_ * rs_c + j_ * cs_c;                                                  \
        c[e_] = beta == 0 ? alpha * t[i_ * (NR) + j_] : alpha * t[i_ * (NR) + j_] + beta * c[e_];  \
      }                                                                                            \
  } while (0)

/*
 * That update as GNU assembly text, shared by the x86 kernels (gemm_ukr_avx2.c,
 * gemm_ukr_avx512.c): TSR__GEMM_EPILOGUE(ROWS, V, AL, BE, BC, SUF, ES). Operands: %[c] the
 * tile's first row (advanced row by row), %[rs] the row stride in bytes, %[mode] a
 * TSR__GEMM_EPI_* value, %[ab] a pointer to {alpha, beta}. Registers V AL and V BE ("zmm",
 * "30", "31") take alpha and beta: the kernel's B and broadcast registers, free after its
 * loop. ROWS(E, SUF) applies a row macro E(SUF, V, VB, AL, BE, R0, R1) to each row of
 * accumulators (vectors R0, R1; VB the vector bytes). BC/SUF/ES: "ss"/"ps"/"4" or
 * "sd"/"pd"/"8". Updating C from the accumulators rather than through a stack tile saves a
 * store and a load per vector: measured on Zen 5 (AVX-512 sgemm micro-kernel in SUMMA's
 * pattern, 4096 rows of C, beta = 1, one thread), k = 256: 246 -> 256 GFLOP/s, k = 64:
 * 230 -> 247.
 */
// clang-format off
#define TSR__GEMM_STR_(x) #x
#define TSR__GEMM_STR(x) TSR__GEMM_STR_(x)
/* Pieces of a row: R0, R1 *= alpha; then R0, R1 stored by ST ("vmovu" or "vmovnt") and %[c]
   advanced to the next row. */
#define TSR__GEMM_EPI_MUL(SUF, V, AL, R0, R1)                                                      \
  "vmul" SUF " %%" V AL ", %%" V #R0 ", %%" V #R0 "\n\t"                                           \
  "vmul" SUF " %%" V AL ", %%" V #R1 ", %%" V #R1 "\n\t"
#define TSR__GEMM_EPI_STORE(ST, SUF, V, VB, R0, R1)                                                \
  ST SUF " %%" V #R0 ", (%[c])\n\t"                                                                \
  ST SUF " %%" V #R1 ", " VB "(%[c])\n\t"                                                          \
  "add %[rs], %[c]\n\t"
/* C = alpha*AB (beta == 0: C not read) */
#define TSR__GEMM_EPI_ROW_ZERO(SUF, V, VB, AL, BE, R0, R1)                                         \
  TSR__GEMM_EPI_MUL(SUF, V, AL, R0, R1) TSR__GEMM_EPI_STORE("vmovu", SUF, V, VB, R0, R1)
/* C = alpha*AB + C, one fused op per vector */
#define TSR__GEMM_EPI_ROW_ONE(SUF, V, VB, AL, BE, R0, R1)                                          \
  "vfmadd213" SUF " (%[c]), %%" V AL ", %%" V #R0 "\n\t"                                           \
  "vfmadd213" SUF " " VB "(%[c]), %%" V AL ", %%" V #R1 "\n\t"                                     \
  TSR__GEMM_EPI_STORE("vmovu", SUF, V, VB, R0, R1)
/* C = alpha*AB + beta*C */
#define TSR__GEMM_EPI_ROW_BETA(SUF, V, VB, AL, BE, R0, R1)                                         \
  TSR__GEMM_EPI_MUL(SUF, V, AL, R0, R1)                                                            \
  "vfmadd231" SUF " (%[c]), %%" V BE ", %%" V #R0 "\n\t"                                           \
  "vfmadd231" SUF " " VB "(%[c]), %%" V BE ", %%" V #R1 "\n\t"                                     \
  TSR__GEMM_EPI_STORE("vmovu", SUF, V, VB, R0, R1)
/* C = alpha*AB, non-temporal stores */
#define TSR__GEMM_EPI_ROW_STREAM(SUF, V, VB, AL, BE, R0, R1)                                       \
  TSR__GEMM_EPI_MUL(SUF, V, AL, R0, R1) TSR__GEMM_EPI_STORE("vmovnt", SUF, V, VB, R0, R1)
/* Labels 11-13 and 19 are local to the kernel's asm statement. */
#define TSR__GEMM_EPILOGUE(ROWS, V, AL, BE, BC, SUF, ES)                                           \
  "vbroadcast" BC " (%[ab]), %%" V AL "\n\t"                                                       \
  "vbroadcast" BC " " ES "(%[ab]), %%" V BE "\n\t"                                                 \
  "cmp $" TSR__GEMM_STR(TSR__GEMM_EPI_ONE) ", %[mode]\n\t"                                         \
  "je 11f\n\t"                                                                                     \
  "cmp $" TSR__GEMM_STR(TSR__GEMM_EPI_BETA) ", %[mode]\n\t"                                        \
  "je 12f\n\t"                                                                                     \
  "cmp $" TSR__GEMM_STR(TSR__GEMM_EPI_STREAM) ", %[mode]\n\t"                                      \
  "je 13f\n\t"                                                                                     \
  ROWS(TSR__GEMM_EPI_ROW_ZERO, SUF) "jmp 19f\n"                                                    \
  "11:\n\t"                                                                                        \
  ROWS(TSR__GEMM_EPI_ROW_ONE, SUF) "jmp 19f\n"                                                     \
  "12:\n\t"                                                                                        \
  ROWS(TSR__GEMM_EPI_ROW_BETA, SUF) "jmp 19f\n"                                                    \
  "13:\n\t"                                                                                        \
  ROWS(TSR__GEMM_EPI_ROW_STREAM, SUF)                                                              \
  "19:\n\t"
// clang-format on

/* Register blocks (compile-time: the kernels are written for them). */
#define TSR__GEMM_PORTABLE_MR 4
#define TSR__GEMM_PORTABLE_NR_F32 8
#define TSR__GEMM_PORTABLE_NR_F64 4
#define TSR__GEMM_AVX2_MR 6
#define TSR__GEMM_AVX2_NR_F32 16
#define TSR__GEMM_AVX2_NR_F64 8
#define TSR__GEMM_AVX512_MR 14
#define TSR__GEMM_AVX512_NR_F32 32
#define TSR__GEMM_AVX512_NR_F64 16

#ifdef __cplusplus
}
#endif
#endif /* TSR_OMP_GEMM_KERNELS_H */
