/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU GEMM internals (BLIS layering: Goto & van de Geijn 2008; Van Zee & van de Geijn 2015).
 *
 *   gemm_driver.c    entry, plan (blocks clipped to the problem, thread count), the jc/pc/ic
 *                    loop nest, packing buffers
 *   gemm_thread.c    the GEMM's thread pool, the waits of the ticket hand-out, and the
 *                    adaptive thread count
 *   gemm_macro.c     macro-kernel (jr/ir loops over micro-panels, edge tiles), f32 and f64
 *                    generated from one source (gemm_macro_impl.h)
 *   gemm_kernels.c   the micro-kernel table (kernels/: one row per ISA folder) and which ISAs
 *                    this CPU runs
 *   gemm_registry.c  CPU microarchitecture registry (CPUID vendor, family, model -> kernel
 *                    and cache blocks), configuration of a call (registry, wisdom, overrides)
 *   gemm_wisdom.c    tessera-tune's wisdom file (read, write, validate against the kernel
 *                    table); calls nothing of the registry
 *   gemm_vendor.c    the vendor CBLAS path (dlopen)
 *   kernels/<isa>/   one folder per ISA (own compile flags): gemm_ukr_<isa>.c, MR x NR
 *                    register micro-kernels; gemm_pack_<isa>.c, packing of op(A) into MR-row
 *                    micro-panels and op(B) into NR-column ones (kernels/portable/
 *                    gemm_pack_portable.c: the portable routines, which define the layout);
 *                    gemm_sup_<isa>*.c, the sup path (small, unpacked: BLIS's
 *                    term): GEMM without packing, one source
 *                    (kernels/gemm_sup_impl.h); gemm_isa_<isa>.c, the ISA's table row
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
 * C = alpha*op(A)*op(B) + beta*C as described by tsr__gemm_args (trusted arguments), for
 * TSR_F32, TSR_F64, TSR_C64 and TSR_C128 (complex: conj_a/conj_b, complex alpha and beta;
 * beta 0 does not read C, alpha 0 or k 0 is C = beta C).
 * path TSR_GEMM_NATIVE: the packed BLIS-style implementation, OpenMP-parallel; complex dtypes
 * by the 1m method on the real kernels (gemm_complex.c).
 * path TSR_GEMM_VENDOR: the vendor CBLAS found at configure time (TESSERA_WITH_VENDOR_BLAS),
 * loaded with dlopen so that a preloaded Tessera BLAS drop-in cannot intercept it.
 * Error messages follow the one rule (core/internal.h): they carry the API context's name.
 * Returns TSR_OK; TSR_ERR_UNSUPPORTED (vendor path not built or the library cannot be
 * loaded or lacks the dtype's function, or a dtype other than f32/f64/c64/c128);
 * TSR_ERR_OUT_OF_MEMORY (packing buffers).
 */
tsr_status tsr__omp_gemm(tsr_device dev, const tsr__gemm_args *args);
/* The backend table's gemm_tiny (core/internal.h): a native call with m, n, k > 0 and alpha != 0
   that the tiny lane (gemm_driver.c) runs without allocating (op(B) read in place) is run and
   true returned; otherwise false, nothing done. */
bool tsr__omp_gemm_tiny(const tsr__gemm_args *args);

/*
 * The instruction set of the micro-kernel the native path uses for dtype by default: "avx512",
 * "avx2" or "portable" (tsr_device_props.arch of the CPU). Static string; "none" for a dtype
 * other than f32/f64/c64/c128 (a complex dtype runs its real dtype's kernel, 1m).
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
   bp), layout in kernels/portable/gemm_pack_portable.c. */
typedef void (*tsr__gemm_pack_f32)(int r, int64_t x, int64_t y, const float *src, int64_t ld,
                                   bool trans, float *dst);
typedef void (*tsr__gemm_pack_f64)(int r, int64_t x, int64_t y, const double *src, int64_t ld,
                                   bool trans, double *dst);

/* Largest MR*NR of any registered kernel (the macro-kernel's edge tile; tests/gemm/
   test_gemm_frame.c checks tsr__gemm_max_tile() against it). */
#define TSR__GEMM_MAX_TILE 512

struct tsr__gemm_kernel;
/*
 * The sup path's GEMM without packing (gemm_sup_impl.h): the call g (trusted arguments,
 * m, n, k > 0, alpha != 0; beta == 0 does not read C) on the calling thread, with the register
 * block of ker (MR rows, NR = 2 vectors). op(A) is read in place; op(B) too unless
 * tsr__gemm_sup_pack_b, when each NR-column strip is packed with ker's pack_b into bbuf
 * (k * NR elements; unused otherwise). kb (1 <= kb, k or less) is the k block: with kb < k the
 * call runs as ceil(k / kb) passes over C, each reading kb rows of op(B) (tsr__gemm_sup_kblock).
 * The driver routes small calls here (tsr__gemm_sup_path), several threads each taking column
 * or row chunks of C as sub-problems (gemm_driver.c).
 */
typedef void (*tsr__gemm_sup_fn)(const tsr__gemm_args *g, const struct tsr__gemm_kernel *ker,
                                 int64_t kb, void *bbuf);
/* The sup path's call with op(B) = B read in place in one k block (gemm_sup_impl.h): g as
   tsr__gemm_sup_fn's, for a call that tsr__gemm_sup_pack_b and tsr__gemm_sup_dot both
   decline (so op(B) is not transposed), with the kernel's register block. What tsr__gemm_sup_fn
   runs for such a call with kb = k, without its questions: the tiny lane's call (gemm_driver.c). */
typedef void (*tsr__gemm_inplace_fn)(const tsr__gemm_args *g);
/*
 * An edge tile of the packed path (gemm_sup_impl.h): C[0:mb, 0:nb] = alpha * A_panel * B_panel
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
/* Whether the sup path runs A * B^T as dot products along k (gemm_sup_impl.h): op(A) = A and
   op(B) = B^T, both unit-stride along k; k long enough (TSR__GEMM_DOT_MIN_K) that the lane sums
   at the end of each tile are a small part of it; and few rows (TSR__GEMM_DOT_MAX_M), where
   transposing B^T into strips is not amortized over many row tiles. Measured on Zen 5, one
   thread, against the strip path, GFLOP/s: sgemm 1x4096x4096 5.2 -> 19, 16x4096x4096 70 -> 96-106,
   64x4096x4096 153-165 -> 168-177; dgemm 1x4096x4096 4.6 -> 8.6, 64x2000x2000 93-96 -> 85; with
   the AVX2 kernels sgemm 16x4096x4096 29 -> 63-67. With more rows the strips win (sgemm
   300x300x300 222-244 -> 176-189), as they do for short k (AVX2 sgemm 100x100x300 95 -> 76-83). */
#define TSR__GEMM_DOT_MIN_K 256
#define TSR__GEMM_DOT_MAX_M 64
/* From TSR__GEMM_DOT_SHORT_K, also where the strips waste most of what they pack or compute:
   op(B) = B^T with at most 16 bytes of columns (a strip of NR columns would hold 1-4 useful
   lanes of each vector), C of at most 16 elements, or op(A) with up to 4 rows and k >= 16 per
   row (the B^T strips are packed for 1-4 rows of products). These are the inner products of
   Householder reductions (column-major A^T B with m or n of 1: LAPACK's DLARF, the local
   products of ScaLAPACK's PDLATRD). Zen 4, one thread, column-major A^T B, beta 0, ratio to
   OpenBLAS 0.3.21 (f64 / f32), before -> after: 1x1x255 0.09 / 0.05 -> 0.91-1.08 / 1.06;
   1x1x63 0.17 / 0.13 -> 1.13-1.17 / 1.02-1.04; 2x2x255 0.12 / 0.08 -> 0.82 / 0.88-0.90;
   3x3x40 0.44 / 0.37 -> 1.10 / 1.15-1.19; 1x300x300 0.22 / 0.12 -> 0.90-0.93 / 0.78-0.79;
   1x1000x16 1.31 / 0.63 -> 4.4-6.9 / 2.1-2.2; 4x1000x64 1.40 / 0.73 -> 1.52 / 1.77. */
#define TSR__GEMM_DOT_SHORT_K 16
static inline bool tsr__gemm_sup_dot(const tsr__gemm_args *g) {
  if (g->trans_a || !g->trans_b || g->k < TSR__GEMM_DOT_SHORT_K) return false;
  if (g->k >= TSR__GEMM_DOT_MIN_K && g->m <= TSR__GEMM_DOT_MAX_M) return true;
  const int64_t es = g->dtype == TSR_F64 ? 8 : 4;
  return g->n * es <= 16 || g->m * g->n <= 16 || (g->m <= 4 && g->k >= 16 * g->m);
}
/* Whether several MR-row blocks (m > mr) reuse strips of B (not B^T) whose rows are a multiple
   of 4 KiB apart: those rows fall into one L1 set and evict each other. */
static inline bool tsr__gemm_sup_rows_alias(const tsr__gemm_args *g, int mr) {
  return !g->trans_b && g->m > mr && ((size_t)g->ldb * (g->dtype == TSR_F64 ? 8 : 4)) % 4096 == 0;
}
/* Whether the sup path packs op(B)'s NR-column strips: for B^T unless it runs as dot products
   (above), and when its rows alias. Measured on Zen 5, one thread, dgemm 32x512x32 (ldb 512: 4
   KiB): 79 -> 93 GFLOP/s with AVX-512, 34 -> 47 with AVX2; at 2 KiB (sgemm, same shape) packing
   lost (230 -> 214). */
static inline bool tsr__gemm_sup_pack_b(const tsr__gemm_args *g, int mr) {
  return (g->trans_b && !tsr__gemm_sup_dot(g)) || tsr__gemm_sup_rows_alias(g, mr);
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
  /* The sup path's GEMM with this register block (contract above), NULL when it has none. */
  tsr__gemm_sup_fn sup;
  /* The packed path's edge tiles (contract above), NULL when it has none (the macro-kernel
     then pads the tile and copies its corner out); the one of the kernel's dtype is set. */
  tsr__gemm_edge_f32 edge_f32;
  tsr__gemm_edge_f64 edge_f64;
  /* The sup path's in-place call (contract above), set exactly when `sup` is. */
  tsr__gemm_inplace_fn sup_inplace;
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
  /* The sup-path rule (tsr__gemm_sup_path): calls whose op(A) and C each take at most
     sup_bytes bytes run unpacked. From the registry row, else the CPU's L2 size; wisdom and
     overrides keep the default's (an override's 0 takes it). */
  int64_t sup_bytes;
} tsr__gemm_config;

/* The configuration for a call of dtype (TSR_F32/TSR_F64) on nt threads (gemm_registry.c),
   under the call's tuning t (omp/gemm/gemm_tune.h; NULL: none). Never fails for f32/f64 (the
   portable kernel always exists). */
struct tsr__gemm_tuning;
void tsr__gemm_config_get(tsr_dtype dtype, int nt, const struct tsr__gemm_tuning *t,
                          tsr__gemm_config *out);

/* The packed path's configuration for call g from its configuration cfg (gemm_registry.c):
   replaced by the registry's kernel for shallow products (tsr__gemm_choice.shallow, with its
   blocks and cfg's grain) when k is at most TSR__GEMM_SHALLOW_K, C's rows lie a multiple of
   the L1's set period apart and cfg's kernel has more rows than that kernel; kept for a
   call's own configuration (source "override") and when TSR_CPU_KERNEL names an ISA.
   Returns whether it was replaced (the driver then takes the packed path). */
bool tsr__gemm_config_shallow(const tsr__gemm_args *g, tsr__gemm_config *cfg);

/* The configuration of one-thread calls without a tuning object (tsr__gemm_config_get(dtype,
   1, NULL)), worked out once per registry and wisdom (re)load, with the tiny lane's bounds
   (gemm_driver.c): calls of m*n*k*element size bytes up to tiny_bytes (the smaller of the L2
   and the LLC; 0 when the kernel has no sup path) whose op(A) and C are within the
   sup-path rule run on it. operand_bytes: that rule (cfg.sup_bytes) where it is below
   tiny_bytes, else 0: then m*n*k within tiny_bytes implies it, and the lane asks nothing more
   (a row whose rule is below the L2, Sapphire/Emerald Rapids' 96 KiB, would otherwise shrink
   the lane to m*n*k within the rule: dgemm 24^3 and 32^3 out of it). */
typedef struct tsr__gemm_serial {
  tsr__gemm_config cfg;
  double tiny_bytes;
  double operand_bytes;
  double l1_bytes; /* the L1 data cache: op(A) = A^T beyond it is packed (gemm_driver.c) */
} tsr__gemm_serial;
/* Per dtype (f32, f64), tagged with 1 + the wisdom's generation (gemm_registry.c). */
extern tsr__gemm_serial tsr__gemm_serials[2];
extern atomic_uint tsr__gemm_serial_tag[2];
/* Bumped by every (re)load of the wisdom (gemm_wisdom.c; gemm_tune.h). */
extern atomic_uint tsr__gemm_wisdom_gen;
/* Works the entry out again (a new tag); returns it. */
const tsr__gemm_serial *tsr__gemm_serial_refresh(tsr_dtype dtype);
/* The entry of dtype, current with the wisdom. Inline: a called function's register saves were
   a twentieth of the tiny lane's path (issue 31). */
static inline const tsr__gemm_serial *tsr__gemm_serial_get(tsr_dtype dtype) {
  const int d = dtype == TSR_F32 ? 0 : 1;
  const unsigned want = 1u + atomic_load_explicit(&tsr__gemm_wisdom_gen, memory_order_acquire);
  if (__builtin_expect(atomic_load_explicit(&tsr__gemm_serial_tag[d], memory_order_acquire) == want,
                       1))
    return &tsr__gemm_serials[d];
  return tsr__gemm_serial_refresh(dtype);
}

/* The portable packing (kernels/portable/gemm_pack_portable.c), which every ISA's packers
   fall back to and which defines the layout. Pack the mc x kc block of op(A) starting at (i0, p0)
   into MR-row micro-panels, zero-padded to a multiple of MR; and the kc x nc block of op(B)
   starting at (p0, j0) into NR-column micro-panels, zero-padded to a multiple of NR. */
void tsr__gemm_pack_a_f32(int mr, int64_t mc, int64_t kc, const float *a, int64_t lda, bool trans,
                          float *ap);
void tsr__gemm_pack_a_f64(int mr, int64_t mc, int64_t kc, const double *a, int64_t lda, bool trans,
                          double *ap);
void tsr__gemm_pack_b_f32(int nr, int64_t kc, int64_t nc, const float *b, int64_t ldb, bool trans,
                          float *bp);
void tsr__gemm_pack_b_f64(int nr, int64_t kc, int64_t nc, const double *b, int64_t ldb, bool trans,
                          double *bp);

/* The micro-kernels, sup kernels and ISA packing routines themselves, their register
   blocks and the macros that define them are the kernels' own: omp/gemm/kernels/kernels.h. The
   frame reaches them only through the table (tsr__gemm_kernel rows of kernels/<isa>/, listed
   by kernels/gemm_kernels.c). */

/* Orders streaming (non-temporal) stores of the micro-kernels before what follows: the unit's
   completion count, which other threads and the caller act on (kernels/gemm_kernels.c; a
   no-op where the kernels issue none). */
void tsr__gemm_store_fence(void);

/* ---------------------------------------------------------------- driver pieces -------- */

struct tsr__gemm_induced;

/* Everything the threads share for one call (gemm_driver.c fills it). */
typedef struct tsr__gemm_plan {
  const tsr__gemm_args *g;
  /* A complex call run by the 1m method (gemm_complex.c): g is its real form and the B panels
     (and A blocks of op(A) = A^T) are packed by ind's packers; NULL for a real call. */
  const struct tsr__gemm_induced *ind;
  const tsr__gemm_kernel *ker;
  int64_t kc, nc;  /* cache blocks, clipped to the problem */
  int64_t mu;      /* most rows of a work unit: a multiple of MR, at most the configuration's MC */
  int64_t rblocks; /* row blocks: the ceil(m / MR) micro-panels shared evenly among them */
  bool stream_c;   /* full tiles go through ker's streaming micro-kernel (tsr__gemm_native) */
  int64_t sweep;   /* B micro-panels per sweep of the row-wise tile order (gemm_macro.c) */
  int nt;          /* threads asked for (pool slots) */
  int grain;       /* work units per thread (tsr__gemm_config.grain) */
  char *bbuf[2];   /* packed B panels, kc x round_up(nc, NR) each, used by alternate (jc, pc)
                      steps (the same buffer twice when one suffices: one thread or one step) */
  char *abuf;      /* per-slot A blocks: round_up(mu, MR) x kc each */
  size_t abytes;   /* bytes per slot A block (multiple of 4096) */
} tsr__gemm_plan;

/* B micro-panels per sweep of the row-wise tile order (gemm_macro.c) for ker and a k slice of
   kc: half the L2's worth, at least one (gemm_driver.c). */
int64_t tsr__gemm_row_sweep(const tsr__gemm_kernel *ker, int64_t kc);

/* The deepest k slice whose tiles the macro-kernel takes along C's rows (ir outer, jr inner;
   deeper slices go down C's columns of tiles: gemm_macro.c says why). The x86 micro-kernels
   fetch the next tile of that order (kernels.h, tsr__gemm_next_tile), so the two share it. */
#define TSR__GEMM_ROWWISE_KC 256

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

/*
 * The GEMM's thread pool (gemm_thread.c): runs fn(arg, 0) on the calling thread and
 * fn(arg, slot), slot 1 .. nt-1, on pool threads that join while the call runs, each slot at
 * most once. The caller never waits for a thread that has not joined: fn must complete the
 * whole job when the caller runs it alone (the GEMM's tickets do), and pool_run returns once
 * fn(arg, 0) has returned and every thread that joined has left. One job at a time: a call
 * made while another thread's job runs is run by its caller alone. Returns the number of
 * threads that ran fn (1 .. nt). With t->full_team (omp/gemm/gemm_tune.h) the caller first waits
 * for its pool threads to join (tests).
 */
int tsr__gemm_pool_run(int nt, const struct tsr__gemm_tuning *t, void (*fn)(void *arg, int slot),
                       void *arg);

/* The adaptive thread count (gemm_thread.c): whether a call of `flops` should use nt > 1
   threads (always with t->fixed_threads), and what the calls teach it, on the process's state.
   now: tsr__now_ns(), or -1 when the caller did not read the clock (it costs ~20 ns, 1 % of an
   sgemm 64^3): the answer is then read without it, except that a re-probe that is due waits for
   a call that passes the time (a marked warm probe reads the clock itself).
   tsr__gemm_surely_serial: whether that answer is one thread, without claiming a probe (it
   changes nothing but a warm mark whose window has passed), for a lane that runs only serial
   calls and otherwise leaves the call to one that asks tsr__gemm_worth_parallel. */
bool tsr__gemm_worth_parallel(const struct tsr__gemm_tuning *t, double flops, int nt, int64_t now);
bool tsr__gemm_surely_serial(double flops, int nt, int64_t now);
void tsr__gemm_learn_parallel(int64_t region_ns, int64_t caller_work_ns, int64_t work_ns,
                              double flops);
void tsr__gemm_learn_serial(int64_t ns, double flops);

/* The same rules on a given state and clock (now, in nanoseconds; -1 for the two questions,
   tsr__gemm_adapt_parallel and tsr__gemm_adapt_serial, as above), which is how tests drive
   them. A zero-initialized state has learned nothing. Times in nanoseconds. */
typedef struct tsr__gemm_adapt {
  _Atomic int64_t overhead_ns; /* running mean of a parallel call's overhead; 0: none yet */
  _Atomic int64_t overhead_at; /* when it was last measured */
  _Atomic int64_t fs_per_flop; /* one thread's time per flop, femtoseconds */
  _Atomic int64_t reprobe_ns;  /* how long a high overhead is trusted; 0: the shortest */
  /* A parallel call that had to wake sleeping pool threads (tsr__gemm_adapt_cold) measured
     their wake-up, which calls that follow while the threads poll do not pay: the next call
     before warm_probe_before is a probe too, and what it measures replaces a higher mean
     (warm_probe: that call is under way). 0: none. Threads just woken can still be settling:
     a warm probe that measured less than the mean before it arms the next one, up to
     warm_left probes per mark, all before warm_until. */
  _Atomic int64_t warm_probe_before;
  atomic_bool warm_probe;
  _Atomic int64_t warm_until;
  atomic_int warm_left;
} tsr__gemm_adapt;
/* The call just learned (tsr__gemm_adapt_learn_parallel) woke its threads from sleep. */
void tsr__gemm_adapt_cold(tsr__gemm_adapt *s, int64_t now);
bool tsr__gemm_adapt_parallel(tsr__gemm_adapt *s, double flops, int nt, int64_t now);
bool tsr__gemm_adapt_serial(tsr__gemm_adapt *s, double flops, int nt, int64_t now);
void tsr__gemm_adapt_learn_parallel(tsr__gemm_adapt *s, int64_t region_ns, int64_t caller_work_ns,
                                    int64_t work_ns, double flops, int64_t now);
void tsr__gemm_adapt_learn_serial(tsr__gemm_adapt *s, int64_t ns, double flops);

/* ---------------------------------------------------------------- complex (1m) ------- */

/*
 * An induced method's packing (Van Zee & Smith's 1m, gemm_complex.c): the complex call cx whose
 * real form the driver runs, and the packers that write the real form's B panels (and its A
 * blocks when cx->trans_a) from it. The driver calls them through its plan and knows nothing
 * else of complex: the caller installs them, as BLIS installs an induced method's packing.
 * Real element counts: pack_b writes real rows [2*p0, 2*p0 + kc) and columns [2*j0, 2*j0 + nc)
 * (kc, nc even) of the real form of alpha * op(B) in pack_b's micro-panel layout with NR = nr;
 * pack_a the rows [i0, i0 + mc), real columns [2*p0, 2*p0 + kc) of op(A) = A^T, pack_a's layout.
 */
typedef struct tsr__gemm_induced {
  const tsr__gemm_args *cx;
  void (*pack_b_f32)(const tsr__gemm_args *cx, int nr, int64_t p0, int64_t j0, int64_t kc,
                     int64_t nc, float *bp);
  void (*pack_b_f64)(const tsr__gemm_args *cx, int nr, int64_t p0, int64_t j0, int64_t kc,
                     int64_t nc, double *bp);
  void (*pack_a_f32)(const tsr__gemm_args *cx, int mr, int64_t i0, int64_t p0, int64_t mc,
                     int64_t kc, float *ap);
  void (*pack_a_f64)(const tsr__gemm_args *cx, int mr, int64_t i0, int64_t p0, int64_t mc,
                     int64_t kc, double *ap);
} tsr__gemm_induced;

/* A complex call (TSR_C64/TSR_C128, native path) by the 1m method (gemm_complex.c, which
   explains it): settles beta, builds the real form and runs it with tsr__gemm_real. */
tsr_status tsr__gemm_complex(const tsr__gemm_args *g);
/* The native real call g (m, n, k > 0, alpha != 0) from the thread decision on (gemm_driver.c).
   ind: the induced method whose real form g is (its packers fill the panels: no tiny lane, no
   sup path), or NULL. */
tsr_status tsr__gemm_real(const tsr__gemm_args *g, const tsr__gemm_induced *ind);
/* C = beta C of a real call (beta 0 writes zeros without reading C; gemm_driver.c). */
void tsr__gemm_scale(const tsr__gemm_args *g);
/* Frees the calling thread's packing buffers (gemm_driver.c) and complex staging buffer
   (gemm_complex.c); tsr__omp_gemm_trim (gemm_entry.c) calls both. */
void tsr__gemm_buffers_trim(void);
void tsr__gemm_complex_trim(void);

/* The vendor path (gemm_vendor.c). Returns TSR_ERR_UNSUPPORTED when not built/loadable. */
tsr_status tsr__gemm_vendor(const tsr__gemm_args *g);

#ifdef __cplusplus
}
#endif
#endif /* TSR_OMP_GEMM_H */
