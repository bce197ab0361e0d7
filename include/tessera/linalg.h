/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file linalg.h
 * @brief Matrix multiplication: NumPy matmul and BLAS-style GEMM.
 *
 * On the CPU, GEMM follows the BLIS layering (Van Zee & van de Geijn, "BLIS: A Framework for
 * Rapidly Instantiating BLAS Functionality", ACM TOMS 2015; Goto & van de Geijn, "Anatomy of
 * High-Performance Matrix Multiplication", ACM TOMS 2008). On GPUs, a shared-memory tiled kernel
 * with register blocking, or the vendor BLAS (cuBLAS / hipBLAS). Float dtypes: f32, f64 and the
 * complex c64, c128 (C99 layout; complex scalars through tsr_gemm_complex() and
 * tsr_gemm_host_complex(), conjugate transposes with ::TSR_CONJ_TRANS). A backend that has no
 * complex GEMM (yet) returns ::TSR_ERR_UNSUPPORTED naming the dtype.
 *
 * CPU micro-kernel: chosen at run time from the CPU's features (AVX-512, else AVX2+FMA, else
 * portable C); the environment variable `TSR_CPU_KERNEL` = `portable` | `avx2` | `avx512`
 * forces one. A kernel the CPU (or the build) lacks is not an error: the best available one
 * runs, and tsr_device_get_props() reports it in `arch`.
 *
 * CPU threads: the GEMM runs on a thread pool of its own (POSIX threads started at the first
 * multithreaded call, not an OpenMP team: src/omp/gemm/frame/gemm_thread.c), with up to
 * omp_get_max_threads() threads of the calling thread (`OMP_NUM_THREADS`,
 * omp_set_num_threads()) counting the caller. A product below 64^3 (m n k), and a call made
 * inside an OpenMP parallel region, run on the calling thread alone, and an adaptive count
 * may choose fewer threads for a call that would not gain from them. One call at a time has
 * the pool: a call made while another thread's call holds it runs on its calling thread.
 * Pool threads inherit the CPU affinity of the thread that started them and no signals; after
 * a call they poll for 100 ms, then sleep, taking no CPU time (`OMP_WAIT_POLICY=passive`:
 * sleep at once, for machines shared with other busy processes; `active`: never sleep). The
 * other CPU operations (elementwise, reductions) are OpenMP loops on
 * omp_get_max_threads() threads.
 */
#ifndef TESSERA_LINALG_H
#define TESSERA_LINALG_H

#include "tessera/array.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Transposition of a GEMM operand. */
typedef enum tsr_trans {
  TSR_NO_TRANS = 0,  /**< op(X) = X */
  TSR_TRANS = 1,     /**< op(X) = X^T */
  TSR_CONJ_TRANS = 2 /**< op(X) = X^H, the conjugate transpose (BLAS's 'C'); for a real dtype
                          the same as ::TSR_TRANS, as BLAS defines it */
} tsr_trans;

/** Which GEMM implementation serves a call. */
typedef enum tsr_gemm_path {
  TSR_GEMM_AUTO = 0,   /**< `TSR_GEMM` environment variable (`native`, `vendor` or `auto`); unset
                            or `auto`: the backend chooses per call (CPU: native; GPU: the vendor
                            BLAS, where built, for f32 and f64 of at least 256 in each of m, n
                            and k, else native, and native too where the vendor BLAS refuses the
                            sizes; the thresholds are per GPU family in src/gpu/gemm.cu, measured
                            on sm_90 only) */
  TSR_GEMM_NATIVE = 1, /**< Tessera's own kernels */
  TSR_GEMM_VENDOR = 2  /**< cuBLAS / hipBLAS on GPUs (built when found, CMake option
                            TESSERA_GPU_VENDOR_BLAS, ON by default); on the CPU the CBLAS
                            (OpenBLAS) found at configure time with TESSERA_WITH_VENDOR_BLAS,
                            loaded with dlopen() at its first use, not linked.
                            ::TSR_ERR_UNSUPPORTED when the path is not built or the library
                            cannot be loaded, and on a GPU when m, n, k or a leading dimension
                            exceeds INT_MAX with hipBLAS or cuBLAS older than 12 (32-bit
                            sizes); ::TSR_GEMM_AUTO then uses the native kernels */
} tsr_gemm_path;

/**
 * NumPy matmul: 2-D x 2-D is the matrix product ((m,k) x (k,n) -> (m,n)); a 1-D first operand
 * is promoted to (1,k) and a 1-D second operand to (k,1), and the added axis is removed from
 * the result; operands with more than 2 axes are stacks of matrices whose leading (batch)
 * axes broadcast. 0-D operands are rejected. The result is a new C-contiguous array. Dtypes
 * f32, f64, c64, c128 (no conjugation: NumPy's `@`). The implementation is chosen as by
 * tsr_gemm() (the `TSR_GEMM` environment variable).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_SHAPE (inner dimensions differ, batch
 *         shapes do not broadcast, 0-D operand, result over ::TSR_MAX_DIMS axes);
 *         ::TSR_ERR_DTYPE (differ or integer); ::TSR_ERR_DEVICE_MISMATCH;
 *         ::TSR_ERR_OVERFLOW (the result's element count); ::TSR_ERR_INVALID_ARGUMENT and
 *         ::TSR_ERR_UNSUPPORTED (`TSR_GEMM`, as for tsr_gemm(); a backend without a complex
 *         GEMM); ::TSR_ERR_OUT_OF_MEMORY;
 *         ::TSR_ERR_GPU; ::TSR_ERR_BLAS (vendor path).
 */
TSR_API tsr_status tsr_matmul(const tsr_array *a, const tsr_array *b, tsr_array **out);

/**
 * C = alpha * op(A) * op(B) + beta * C on 2-D arrays of one float dtype (f32, f64, c64, c128)
 * on one device: op(A) is m x k, op(B) is k x n, C is m x n and is updated in place. op(X) is
 * X (::TSR_NO_TRANS), X^T (::TSR_TRANS) or X^H (::TSR_CONJ_TRANS, the conjugate transpose;
 * X^T for the real dtypes). For complex arrays alpha and beta are real here (see
 * tsr_gemm_complex()). Any strides are
 * accepted (row-major, column-major, or views; other layouts are copied first). As in the
 * reference BLAS, beta = 0 never reads C (NaN in C does not propagate) and alpha = 0 or k = 0
 * does not read A or B. Unlike the reference BLAS, A or B may share memory with C (even be C):
 * such an operand is read from a copy taken before C is written. The implementation is
 * ::TSR_GEMM_AUTO's (see tsr_gemm_ex()).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_SHAPE (not 2-D, or sizes disagree);
 *         ::TSR_ERR_DTYPE (dtypes differ, or integer); ::TSR_ERR_DEVICE_MISMATCH;
 *         ::TSR_ERR_INVALID_ARGUMENT (bad transpose value, C overlaps itself through a broadcast
 *         view, or `TSR_GEMM` is none of `auto`, `native`, `vendor`); ::TSR_ERR_UNSUPPORTED
 *         (`TSR_GEMM=vendor` in a build without a vendor BLAS; a backend without a complex
 *         GEMM); ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_GPU; ::TSR_ERR_BLAS (vendor path).
 */
TSR_API tsr_status tsr_gemm(tsr_trans transa, tsr_trans transb, double alpha, const tsr_array *a,
                            const tsr_array *b, double beta, tsr_array *c);

/**
 * As tsr_gemm(), choosing the implementation per call.
 * @return as tsr_gemm(), and ::TSR_ERR_UNSUPPORTED when the vendor path is asked for and not
 *         built (or, for ::TSR_GEMM_AUTO, when `TSR_GEMM` asks for it) or, on a GPU, when m, n,
 *         k or a leading dimension exceeds INT_MAX with hipBLAS or cuBLAS older than 12
 *         (::TSR_GEMM_AUTO then uses the native kernels), and
 *         ::TSR_ERR_INVALID_ARGUMENT when `path` is not a ::tsr_gemm_path or, for
 *         ::TSR_GEMM_AUTO, `TSR_GEMM` is none of `auto`, `native`, `vendor`.
 */
TSR_API tsr_status tsr_gemm_ex(tsr_trans transa, tsr_trans transb, double alpha, const tsr_array *a,
                               const tsr_array *b, double beta, tsr_array *c, tsr_gemm_path path);

/**
 * C = alpha * op(A) * op(B) + beta * C with complex scalars (ZGEMM/CGEMM): as tsr_gemm_ex() in
 * every other respect (shapes, strides, overlap, paths, statuses). op(X) is X, X^T or X^H
 * (::TSR_NO_TRANS, ::TSR_TRANS, ::TSR_CONJ_TRANS). For c64 arrays alpha and beta are rounded
 * to single precision parts, as CGEMM's scalars are; beta = 0 (both parts) never reads C,
 * alpha = 0 (both parts) or k = 0 never reads A or B. The real dtypes (f32, f64) are accepted
 * with real scalars: their imaginary parts must be 0.
 * @param alpha, beta the scalars, real part and imaginary part.
 * @return as tsr_gemm_ex(), and ::TSR_ERR_INVALID_ARGUMENT when the arrays are real and alpha or
 *         beta has a nonzero imaginary part (the message names both scalars and the dtype).
 */
TSR_API tsr_status tsr_gemm_complex(tsr_trans transa, tsr_trans transb, tsr_complex128 alpha,
                                    const tsr_array *a, const tsr_array *b, tsr_complex128 beta,
                                    tsr_array *c, tsr_gemm_path path);

/**
 * C = alpha * op(A) * op(B) + beta * C on host memory given by pointers, in the row-major
 * convention of CBLAS: op(A) is m x k, op(B) is k x n, C is m x n; A is stored as a row-major
 * (transa ? k x m : m x k) matrix whose rows are lda elements apart, B as a row-major
 * (transb ? n x k : k x n) matrix with ldb, C with ldc (elements of `dtype`: f32, f64, c64 or
 * c128; ::TSR_CONJ_TRANS conjugates a complex operand's elements as well). A
 * column-major problem is the row-major C^T = op(B)^T op(A)^T (swap A and B, m and n). Runs the
 * native CPU kernels (never a vendor BLAS: this is the BLAS drop-in's entry) without building
 * arrays, for the least cost per call on small matrices. As tsr_gemm(): beta = 0 never reads C,
 * alpha = 0 or k = 0 never reads A or B (they may then be NULL), and an A or B that shares
 * memory with C is read from a copy taken before C is written. m = 0 or n = 0 does nothing.
 * @return ::TSR_OK; ::TSR_ERR_DTYPE (not f32, f64, c64 or c128); ::TSR_ERR_INVALID_ARGUMENT
 *         (bad transpose value, negative size, a leading dimension below its stored row length
 *         or 1); ::TSR_ERR_NULL_POINTER (c, or a or b when they are read); ::TSR_ERR_OVERFLOW
 *         (the extents do not fit in 64 bits); ::TSR_ERR_OUT_OF_MEMORY (the GEMM's buffers, or
 *         a copy of an operand that overlaps C); ::TSR_ERR_UNSUPPORTED (a complex dtype before
 *         the CPU backend has its complex GEMM).
 */
TSR_API tsr_status tsr_gemm_host(tsr_dtype dtype, tsr_trans transa, tsr_trans transb, int64_t m,
                                 int64_t n, int64_t k, double alpha, const void *a, int64_t lda,
                                 const void *b, int64_t ldb, double beta, void *c, int64_t ldc);

/**
 * tsr_gemm_host() with the scalars given as BLAS gives them: `alpha` and `beta` point to one
 * element of `dtype` each (a float for f32, a double for f64, a ::tsr_complex64 (or C99
 * `float _Complex`) for c64, a ::tsr_complex128 (`double _Complex`) for c128), read once before
 * any other work. Every other argument, the row-major convention, the conjugation of
 * ::TSR_CONJ_TRANS, and what is (not) read as tsr_gemm_host(): beta = 0 (both parts) never
 * reads C, alpha = 0 (both parts) or k = 0 never reads A or B. The BLAS drop-in's cgemm_/zgemm_
 * and the ScaLAPACK drop-in's local products call it.
 * @return as tsr_gemm_host(), and ::TSR_ERR_NULL_POINTER when `alpha` or `beta` is NULL.
 */
TSR_API tsr_status tsr_gemm_host_complex(tsr_dtype dtype, tsr_trans transa, tsr_trans transb,
                                         int64_t m, int64_t n, int64_t k, const void *alpha,
                                         const void *a, int64_t lda, const void *b, int64_t ldb,
                                         const void *beta, void *c, int64_t ldc);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_LINALG_H */
