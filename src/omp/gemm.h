/*
 * CPU GEMM internals (BLIS layering: Goto & van de Geijn 2008; Van Zee & van de Geijn 2015).
 *
 *   gemm_driver.c    entry, plan (blocks clipped to the problem, thread count), the jc/pc/ic
 *                    loop nest, packing buffers
 *   gemm_thread.c    the GEMM's thread pool, the waits of the ticket hand-out, and the
 *                    adaptive thread count
 *   gemm_macro.c     macro-kernel (jr/ir loops over micro-panels, edge tiles), f32 and f64
 *                    generated from one source (gemm_macro_impl.h)
 *   gemm_pack.c      packing of op(A) into MR-row micro-panels and op(B) into NR-column ones
 *   gemm_kernels.c   the micro-kernel table and which ISAs this CPU runs
 *   gemm_registry.c  CPU microarchitecture registry (CPUID vendor, family, model -> kernel
 *                    and cache blocks), configuration of a call (registry, wisdom, overrides)
 *   gemm_wisdom.c    tessera-tune's wisdom file (read, write, validate against the kernel
 *                    table); calls nothing of the registry
 *   gemm_vendor.c    the vendor CBLAS path (dlopen)
 *   gemm_ukr_*.c     MR x NR register micro-kernels, one file per ISA (own compile flags)
 *   gemm_small_*.c   small-matrix GEMM without packing, one file per ISA, one source
 *                    (gemm_small_impl.h)
 *
 * The interface that benchmarks, tessera-tune and tests use is gemm_tune.h (it includes this
 * file). Internal to the CPU backend (not exported).
 */
#ifndef TSR_OMP_GEMM_H
#define TSR_OMP_GEMM_H

#include <stdatomic.h>

#include "core/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The CPU backend's gemm entry (struct tsr__backend_ops.gemm): row-major
 * C = alpha*op(A)*op(B) + beta*C as described by tsr__gemm_args (trusted arguments).
 * path TSR_GEMM_NATIVE: the packed BLIS-style implementation, OpenMP-parallel.
 * path TSR_GEMM_VENDOR: the vendor CBLAS found at configure time (TESSERA_WITH_VENDOR_BLAS),
 * loaded with dlopen so that a preloaded Tessera BLAS drop-in cannot intercept it.
 * Error messages follow the one rule (core/internal.h): they carry the API context's name.
 * Returns TSR_OK; TSR_ERR_UNSUPPORTED (vendor path not built or the library cannot be
 * loaded, or a dtype other than f32/f64); TSR_ERR_OUT_OF_MEMORY (packing buffers).
 */
tsr_status tsr__omp_gemm(tsr_device dev, const tsr__gemm_args *args);

/*
 * The instruction set of the micro-kernel the native path uses for dtype by default: "avx512",
 * "avx2" or "portable" (tsr_device_props.arch of the CPU). Static string; "none" for a dtype
 * other than f32/f64.
 */
const char *tsr__omp_gemm_kernel_name(tsr_dtype dtype);

/* Frees the calling thread's cached packing buffers (tsr_device_trim on the CPU). */
void tsr__omp_gemm_trim(void);

/* ---------------------------------------------------------------- micro-kernels -------- */

/*
 * Micro-kernel contract (both precisions, `T` = float or double):
 *   C_tile(MR x NR) = alpha * Ap * Bp + beta * C_tile
 * Ap: packed A micro-panel, k columns of MR contiguous elements (column p at ap + p*MR).
 * Bp: packed B micro-panel, k rows of NR contiguous elements (row p at bp + p*NR).
 * C_tile: element (i,j) at c[i*rs_c + j*cs_c]. beta == 0: C_tile is not read.
 * The panels are 64-byte aligned and zero-padded to full MR / NR; k may be 0.
 * The kernels compute full tiles only; the macro-kernel handles edges with a temporary tile
 * of at most TSR__GEMM_MAX_TILE elements.
 *
 * Streaming variant (ukr_stream_*, where a kernel has one): the same product with beta taken
 * as 0, written with non-temporal stores (they bypass the caches: no read-for-ownership of C's
 * lines, no eviction of the packed panels), for C that is written once and outgrows the
 * last-level cache. Requires cs_c == 1 and every row of the tile 64-byte aligned (c and
 * rs_c * sizeof(T) multiples of 64). The stores are weakly ordered: the caller issues an
 * SFENCE before C is read or another thread is told it is done.
 */
typedef void (*tsr__gemm_ukr_f32)(int64_t k, float alpha, const float *ap, const float *bp,
                                  float beta, float *c, int64_t rs_c, int64_t cs_c);
typedef void (*tsr__gemm_ukr_f64)(int64_t k, double alpha, const double *ap, const double *bp,
                                  double beta, double *c, int64_t rs_c, int64_t cs_c);

/* Packing routine: pack_a(mr, mc, kc, a, lda, trans, ap) / pack_b(nr, kc, nc, b, ldb, trans,
   bp), layout in gemm_pack.c. */
typedef void (*tsr__gemm_pack_f32)(int r, int64_t x, int64_t y, const float *src, int64_t ld,
                                   bool trans, float *dst);
typedef void (*tsr__gemm_pack_f64)(int r, int64_t x, int64_t y, const double *src, int64_t ld,
                                   bool trans, double *dst);

/* Largest MR*NR of any registered kernel (the macro-kernel's edge tile; test_gemm_kernels
   checks tsr__gemm_max_tile() against it). */
#define TSR__GEMM_MAX_TILE 512

struct tsr__gemm_kernel;
/*
 * Small-matrix GEMM without packing (gemm_small_impl.h): the call g (trusted arguments,
 * m, n, k > 0, alpha != 0; beta == 0 does not read C) on the calling thread, with the register
 * block of ker (MR rows, NR = 2 vectors). op(A) is read in place; op(B) too unless
 * tsr__gemm_small_pack_b, when each NR-column strip is packed with ker's pack_b into bbuf
 * (k * NR elements; unused otherwise). kb (1 <= kb, k or less) is the k block: with kb < k the
 * call runs as ceil(k / kb) passes over C, each reading kb rows of op(B) (tsr__gemm_small_kblock).
 * The driver routes small calls here (tsr__gemm_small_path), several threads each taking column
 * or row chunks of C as sub-problems (gemm_driver.c).
 */
typedef void (*tsr__gemm_small_fn)(const tsr__gemm_args *g, const struct tsr__gemm_kernel *ker,
                                   int64_t kb, void *bbuf);
/*
 * An edge tile of the packed path (gemm_small_impl.h): C[0:mb, 0:nb] = alpha * A_panel * B_panel
 * + beta * C (beta == 0: C not read), 1 <= mb <= MR, 1 <= nb <= NR, from a packed MR x k
 * micro-panel of op(A) (element (i, p) at ap[p*MR + i]) and a packed k x NR micro-panel of op(B)
 * ((p, j) at bp[p*NR + j]); C(i, j) at c[i*ldc + j]. Exactly mb rows and masked columns are
 * computed: no padded tile, no copy.
 */
typedef void (*tsr__gemm_edge_f32)(int mb, int nb, int64_t k, const float *ap, const float *bp,
                                   float alpha, float beta, float *c, int64_t ldc);
typedef void (*tsr__gemm_edge_f64)(int mb, int nb, int64_t k, const double *ap, const double *bp,
                                   double alpha, double beta, double *c, int64_t ldc);
static inline int64_t tsr__min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
static inline int64_t tsr__max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}
/* Whether the small path runs A * B^T as dot products along k (gemm_small_impl.h): op(A) = A and
   op(B) = B^T, both unit-stride along k; k long enough (TSR__GEMM_DOT_MIN_K) that the lane sums
   at the end of each tile are a small part of it; and few rows (TSR__GEMM_DOT_MAX_M), where
   transposing B^T into strips is not amortized over many row tiles. Measured on Zen 5, one
   thread, against the strip path, GFLOP/s: sgemm 1x4096x4096 5.2 -> 19, 16x4096x4096 70 -> 96-106,
   64x4096x4096 153-165 -> 168-177; dgemm 1x4096x4096 4.6 -> 8.6, 64x2000x2000 93-96 -> 85; with
   the AVX2 kernels sgemm 16x4096x4096 29 -> 63-67. With more rows the strips win (sgemm
   300x300x300 222-244 -> 176-189), as they do for short k (AVX2 sgemm 100x100x300 95 -> 76-83). */
#define TSR__GEMM_DOT_MIN_K 256
#define TSR__GEMM_DOT_MAX_M 64
static inline bool tsr__gemm_small_dot(const tsr__gemm_args *g) {
  return !g->trans_a && g->trans_b && g->k >= TSR__GEMM_DOT_MIN_K && g->m <= TSR__GEMM_DOT_MAX_M;
}
/* Whether several MR-row blocks (m > mr) reuse strips of B (not B^T) whose rows are a multiple
   of 4 KiB apart: those rows fall into one L1 set and evict each other. */
static inline bool tsr__gemm_small_rows_alias(const tsr__gemm_args *g, int mr) {
  return !g->trans_b && g->m > mr && ((size_t)g->ldb * (g->dtype == TSR_F64 ? 8 : 4)) % 4096 == 0;
}
/* Whether the small path packs op(B)'s NR-column strips: for B^T unless it runs as dot products
   (above), and when its rows alias. Measured on Zen 5, one thread, dgemm 32x512x32 (ldb 512: 4
   KiB): 79 -> 93 GFLOP/s with AVX-512, 34 -> 47 with AVX2; at 2 KiB (sgemm, same shape) packing
   lost (230 -> 214). */
static inline bool tsr__gemm_small_pack_b(const tsr__gemm_args *g, int mr) {
  return (g->trans_b && !tsr__gemm_small_dot(g)) || tsr__gemm_small_rows_alias(g, mr);
}

/* A registered micro-kernel (BLIS "ukernel" with its register block). */
typedef struct tsr__gemm_kernel {
  const char *name; /* "avx512-14x16": ISA and MR x NR, no spaces (wisdom files use it) */
  const char *isa;  /* "portable", "avx2", "avx512" */
  tsr_dtype dtype;
  int mr, nr;
  tsr__gemm_ukr_f32 ukr_f32; /* set for TSR_F32 */
  tsr__gemm_ukr_f64 ukr_f64; /* set for TSR_F64 */
  /* Packing routines for this kernel's MR/NR (the portable ones, or ISA-specific ones that
     fall back to them for what they do not cover); the pair of the kernel's dtype is set. */
  tsr__gemm_pack_f32 pack_a_f32, pack_b_f32;
  tsr__gemm_pack_f64 pack_a_f64, pack_b_f64;
  /* Streaming-store variant of the micro-kernel (contract above), NULL when it has none. */
  tsr__gemm_ukr_f32 ukr_stream_f32;
  tsr__gemm_ukr_f64 ukr_stream_f64;
  /* Small-matrix GEMM with this register block (contract above), NULL when it has none. */
  tsr__gemm_small_fn small;
  /* The packed path's edge tiles (contract above), NULL when it has none (the macro-kernel
     then pads the tile and copies its corner out); the one of the kernel's dtype is set. */
  tsr__gemm_edge_f32 edge_f32;
  tsr__gemm_edge_f64 edge_f64;
} tsr__gemm_kernel;

/*
 * What one call runs with: the kernel, the cache blocks (KC for L1: the B micro-panel; MC for
 * L2: the packed A block; NC for L3: the packed B panel), and where they came from.
 */
typedef struct tsr__gemm_config {
  const tsr__gemm_kernel *ker;
  int64_t kc, mc, nc;
  int grain; /* thread partition: work units (row blocks x column chunks) per thread, 1..16 */
  const char *source; /* "registry", "rule", "wisdom", "TSR_CPU_GEMM_BLOCKS", "override" */
  /* The small-path rule (tsr__gemm_small_path): calls whose op(A) and C each take at most
     small_bytes bytes run unpacked. From the registry row, else the CPU's L2 size; wisdom and
     overrides keep the default's (an override's 0 takes it). */
  int64_t small_bytes;
} tsr__gemm_config;

/* The configuration for a call of dtype (TSR_F32/TSR_F64) on nt threads (gemm_registry.c),
   under the call's tuning t (omp/gemm_tune.h; NULL: none). Never fails for f32/f64 (the
   portable kernel always exists). */
struct tsr__gemm_tuning;
void tsr__gemm_config_get(tsr_dtype dtype, int nt, const struct tsr__gemm_tuning *t,
                          tsr__gemm_config *out);

/* Packing (gemm_pack.c). Pack the mc x kc block of op(A) starting at (i0, p0) into MR-row
   micro-panels, zero-padded to a multiple of MR; and the kc x nc block of op(B) starting at
   (p0, j0) into NR-column micro-panels, zero-padded to a multiple of NR. */
void tsr__gemm_pack_a_f32(int mr, int64_t mc, int64_t kc, const float *a, int64_t lda, bool trans,
                          float *ap);
void tsr__gemm_pack_a_f64(int mr, int64_t mc, int64_t kc, const double *a, int64_t lda, bool trans,
                          double *ap);
void tsr__gemm_pack_b_f32(int nr, int64_t kc, int64_t nc, const float *b, int64_t ldb, bool trans,
                          float *bp);
void tsr__gemm_pack_b_f64(int nr, int64_t kc, int64_t nc, const double *b, int64_t ldb, bool trans,
                          double *bp);

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
/* Small-matrix GEMM without packing (gemm_small_avx2.c, gemm_small_avx512.c). */
void tsr__gemm_small_avx2_f32(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb,
                              void *bbuf);
void tsr__gemm_small_avx2_f64(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb,
                              void *bbuf);
void tsr__gemm_small_avx512_f32(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb,
                                void *bbuf);
void tsr__gemm_small_avx512_f64(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb,
                                void *bbuf);
void tsr__gemm_small_avx2_f32_edge(int mb, int nb, int64_t k, const float *ap, const float *bp,
                                   float alpha, float beta, float *c, int64_t ldc);
void tsr__gemm_small_avx2_f64_edge(int mb, int nb, int64_t k, const double *ap, const double *bp,
                                   double alpha, double beta, double *c, int64_t ldc);
void tsr__gemm_small_avx512_f32_edge(int mb, int nb, int64_t k, const float *ap, const float *bp,
                                     float alpha, float beta, float *c, int64_t ldc);
void tsr__gemm_small_avx512_f64_edge(int mb, int nb, int64_t k, const double *ap, const double *bp,
                                     double alpha, double beta, double *c, int64_t ldc);
/* AVX-512 packing (gemm_pack_avx512.c): the transposing cases for MR = 14 and NR = 16/32 in
   registers, everything else through the portable routines. */
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

/* ---------------------------------------------------------------- driver pieces -------- */

/* Everything the threads share for one call (gemm_driver.c fills it). */
typedef struct tsr__gemm_plan {
  const tsr__gemm_args *g;
  const tsr__gemm_kernel *ker;
  int64_t kc, nc;  /* cache blocks, clipped to the problem */
  int64_t mu;      /* most rows of a work unit: a multiple of MR, at most the configuration's MC */
  int64_t rblocks; /* row blocks: the ceil(m / MR) micro-panels shared evenly among them */
  bool stream_c;   /* full tiles go through ker's streaming micro-kernel (tsr__gemm_native) */
  int nt;          /* threads asked for (pool slots) */
  int grain;       /* work units per thread (tsr__gemm_config.grain) */
  char *bbuf[2];   /* packed B panels, kc x round_up(nc, NR) each, used by alternate (jc, pc)
                      steps (the same buffer twice when one suffices: one thread or one step) */
  char *abuf;      /* per-slot A blocks: round_up(mu, MR) x kc each */
  size_t abytes;   /* bytes per slot A block (multiple of 4096) */
} tsr__gemm_plan;

/* Macro-kernel (gemm_macro.c): C[ic.., jc+q0*NR..] (mcb rows, B micro-panels q0..q1 of the
   packed panel bbuf) = alpha * packed A block * packed B panel + beta * C. */
void tsr__gemm_macro(const tsr__gemm_plan *pl, const char *abuf, const char *bbuf, int64_t ic,
                     int64_t jc, int64_t mcb, int64_t kcb, int64_t ncb, int64_t q0, int64_t q1,
                     double beta);

/*
 * Work hand-out of one call (gemm_driver.c; the waits in gemm_thread.c). The call's (jc, pc)
 * steps are numbered s = 0, 1, ...; step s is a few B-panel packing chunks B(s) and then the
 * compute units U(s), and one ticket counter numbers them all in the order B(0) U(0) B(1)
 * U(1) ... Whoever takes a ticket runs it after what it depends on, counted in monotone
 * counters (never reset, so no thread-count barrier is needed and a thread that never shows
 * up holds nobody):
 *   a unit of U(s)   after all of B(s) (bdone[s & 1], cumulative over the steps of that
 *                    parity) and all of U(s - 1) (udone, cumulative: the same C tiles, kept in
 *                    k order, so results do not depend on the thread count);
 *   a chunk of B(s)  after all of U(s - 2), the last readers of its buffer (two alternate),
 *                    so idle threads pack the next panel while the last units of a step run.
 * Tickets are taken in order and every dependency has a smaller ticket, so it cannot deadlock.
 */
typedef struct tsr__gemm_sync {
  _Atomic int64_t next;     /* next ticket */
  _Atomic int64_t bdone[2]; /* B chunks finished, by step parity */
  _Atomic int64_t udone;    /* units finished */
  _Atomic int64_t work_ns;  /* sum over threads of time not spent waiting */
  int64_t caller_work_ns;   /* the caller's (slot 0's) share of work_ns */
} tsr__gemm_sync;
void tsr__gemm_sync_init(tsr__gemm_sync *s);
/* Waits (spinning briefly, then yielding) until *v >= target (acquire). */
void tsr__gemm_wait_at_least(_Atomic int64_t *v, int64_t target);
int64_t tsr__gemm_now_ns(void);

/*
 * The GEMM's thread pool (gemm_thread.c): runs fn(arg, 0) on the calling thread and
 * fn(arg, slot), slot 1 .. nt-1, on pool threads that join while the call runs, each slot at
 * most once. The caller never waits for a thread that has not joined: fn must complete the
 * whole job when the caller runs it alone (the GEMM's tickets do), and pool_run returns once
 * fn(arg, 0) has returned and every thread that joined has left. One job at a time: a call
 * made while another thread's job runs is run by its caller alone. Returns the number of
 * threads that ran fn (1 .. nt). With t->full_team (omp/gemm_tune.h) the caller first waits
 * for its pool threads to join (tests).
 */
int tsr__gemm_pool_run(int nt, const struct tsr__gemm_tuning *t, void (*fn)(void *arg, int slot),
                       void *arg);

/* The adaptive thread count (gemm_thread.c): whether a call of `flops` should use nt > 1
   threads (always with t->fixed_threads), and what the calls teach it, on the process's state
   and clock. */
bool tsr__gemm_worth_parallel(const struct tsr__gemm_tuning *t, double flops, int nt);
void tsr__gemm_learn_parallel(int64_t region_ns, int64_t caller_work_ns, int64_t work_ns,
                              double flops);
void tsr__gemm_learn_serial(int64_t ns, double flops);

/* The same rules on a given state and clock (now, in nanoseconds), which is how tests drive
   them. A zero-initialized state has learned nothing. Times in nanoseconds. */
typedef struct tsr__gemm_adapt {
  _Atomic int64_t overhead_ns; /* running mean of a parallel call's overhead; 0: none yet */
  _Atomic int64_t overhead_at; /* when it was last measured */
  _Atomic int64_t fs_per_flop; /* one thread's time per flop, femtoseconds */
  _Atomic int64_t reprobe_ns;  /* how long a high overhead is trusted; 0: the shortest */
} tsr__gemm_adapt;
bool tsr__gemm_adapt_parallel(tsr__gemm_adapt *s, double flops, int nt, int64_t now);
void tsr__gemm_adapt_learn_parallel(tsr__gemm_adapt *s, int64_t region_ns, int64_t caller_work_ns,
                                    int64_t work_ns, double flops, int64_t now);
void tsr__gemm_adapt_learn_serial(tsr__gemm_adapt *s, int64_t ns, double flops);

/* The vendor path (gemm_vendor.c). Returns TSR_ERR_UNSUPPORTED when not built/loadable. */
tsr_status tsr__gemm_vendor(const tsr__gemm_args *g);

#ifdef __cplusplus
}
#endif
#endif /* TSR_OMP_GEMM_H */
