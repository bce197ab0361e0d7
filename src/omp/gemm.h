/*
 * CPU GEMM (BLIS layering: Goto & van de Geijn 2008; Van Zee & van de Geijn 2015).
 *
 *   gemm.c          driver: the jc/pc/ic loops over NC, KC, MC blocks, OpenMP, vendor path
 *   gemm_pack.c     packing of op(A) into MR-row micro-panels and op(B) into NR-column ones
 *   gemm_kernels.c  the kernel registry (block sizes), CPU feature detection, selection
 *   gemm_ukr_*.c    MR x NR register micro-kernels, one file per ISA (own compile flags)
 *
 * Internal to the CPU backend (not exported).
 */
#ifndef TSR_OMP_GEMM_H
#define TSR_OMP_GEMM_H

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
 * Returns TSR_OK; TSR_ERR_UNSUPPORTED (vendor path not built or the library cannot be
 * loaded, or a dtype other than f32/f64); TSR_ERR_OUT_OF_MEMORY (packing buffers).
 */
tsr_status tsr__omp_gemm(tsr_device dev, const tsr__gemm_args *args);

/*
 * The instruction set of the micro-kernel the native path uses for dtype: "avx512", "avx2"
 * or "portable" (tsr_device_props.arch of the CPU, benchmarks). Static string; "none" for a
 * dtype other than f32/f64. The full descriptor with the register block ("avx512 14x32") is
 * tsr__gemm_kernel_get(dtype)->name.
 */
const char *tsr__omp_gemm_kernel_name(tsr_dtype dtype);

/* Frees the calling thread's cached packing buffers (tsr_device_trim on the CPU). */
void tsr__omp_gemm_trim(void);

/* ---------------------------------------------------------------- internals ----------- */

/*
 * Micro-kernel contract (both precisions, `T` = float or double):
 *   C_tile(MR x NR) = alpha * Ap * Bp + beta * C_tile
 * Ap: packed A micro-panel, k columns of MR contiguous elements (column p at ap + p*MR).
 * Bp: packed B micro-panel, k rows of NR contiguous elements (row p at bp + p*NR).
 * C_tile: element (i,j) at c[i*rs_c + j*cs_c]. beta == 0: C_tile is not read.
 * The panels are 64-byte aligned and zero-padded to full MR / NR; k may be 0.
 * The kernels compute full tiles only; the macro-kernel handles edges with a temporary tile.
 */
typedef void (*tsr__gemm_ukr_f32)(int64_t k, float alpha, const float *ap, const float *bp,
                                  float beta, float *c, int64_t rs_c, int64_t cs_c);
typedef void (*tsr__gemm_ukr_f64)(int64_t k, double alpha, const double *ap, const double *bp,
                                  double beta, double *c, int64_t rs_c, int64_t cs_c);

/* A registered micro-kernel with its block sizes (BLIS "context"). */
typedef struct tsr__gemm_kernel {
  const char *name; /* "avx512 14x32" */
  const char *isa;  /* "portable", "avx2", "avx512" */
  tsr_dtype dtype;
  int mr, nr;         /* register block */
  int mc_cap_mr;      /* measured upper bound on MC in units of MR (0: the model's MC) */
  int64_t kc, mc, nc; /* cache blocks: kc for L1 (B micro-panel), mc for L2 (A), nc for L3 (B) */
  tsr__gemm_ukr_f32 ukr_f32; /* set for TSR_F32 */
  tsr__gemm_ukr_f64 ukr_f64; /* set for TSR_F64 */
} tsr__gemm_kernel;

/*
 * The kernel used for dtype: chosen once (the first call) from TSR_CPU_KERNEL
 * (portable | avx2 | avx512; unset or "auto": the best the CPU supports). Asking for an ISA
 * the CPU or the build lacks falls back to the best one available (no error: a portable
 * build must run everywhere); tsr__omp_gemm_kernel_name tells which one runs.
 * Block sizes are computed from the cache sizes (see gemm_kernels.c).
 */
const tsr__gemm_kernel *tsr__gemm_kernel_get(tsr_dtype dtype);

/* Re-reads TSR_CPU_KERNEL and re-selects (tests). Not thread-safe with concurrent gemms.
   Returns true when the requested ISA is what got selected (false: fell back). */
bool tsr__gemm_kernel_reselect(void);

/* On (default): a call runs multi-threaded only when the measured fork/join overhead of
   recent calls is small against the time it saves (gemm.c). Off: always use
   omp_get_max_threads() above the fixed size threshold (tests, to exercise the threaded
   paths deterministically). */
void tsr__gemm_set_adaptive(bool on);

/* Whether the CPU and this build support an ISA name ("portable", "avx2", "avx512"). */
bool tsr__gemm_isa_available(const char *isa);

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
void tsr__gemm_ukr_avx2_f64(int64_t k, double alpha, const double *ap, const double *bp,
                            double beta, double *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx512_f32(int64_t k, float alpha, const float *ap, const float *bp, float beta,
                              float *c, int64_t rs_c, int64_t cs_c);
void tsr__gemm_ukr_avx512_f64(int64_t k, double alpha, const double *ap, const double *bp,
                              double beta, double *c, int64_t rs_c, int64_t cs_c);
#endif

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
#endif /* TSR_OMP_GEMM_H */
