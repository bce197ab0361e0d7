/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file scalapack.h
 * @brief libtessera_scalapack: a ScaLAPACK drop-in that computes PDGEMM, PSGEMM, PZGEMM and
 * PCGEMM with Tessera's distributed GEMM.
 *
 * The shared library `libtessera_scalapack` exports the PBLAS entry points `pdgemm_`,
 * `psgemm_`, `pzgemm_` and `pcgemm_` with the semantics of the reference PBLAS (ScaLAPACK 2.2,
 * PBLAS 2.0: Choi, Dongarra, Ostrouchov, Petitet, Walker, Whaley, "A Proposal for a Set of Parallel
 * Basic Linear Algebra Subprograms", LAPACK Working Note 100, 1995):
 *  - sub(C) = alpha op(sub(A)) op(sub(B)) + beta sub(C) with sub(X) = X(IX:IX+rows-1,
 *    JX:JX+cols-1) (1-based global indices), op(X) = X, X^T or (complex routines) X^H
 *    (TRANSA, TRANSB 'N', 'T' or 'C', either case; 'C' is 'T' for the real routines);
 *  - descriptors of type 1 (9 integers: DTYPE, CTXT, M, N, MB, NB, RSRC, CSRC, LLD) and of
 *    type 2 (11 integers: DTYPE, CTXT, M, N, IMB, INB, MB, NB, RSRC, CSRC, LLD, with the
 *    sizes of the first block), each matrix with its own blocks and source process (-1:
 *    replicated), any LLD at least the local rows;
 *  - the process grid of the BLACS context (row- or column-major), mapped to MPI with
 *    `Cblacs_get(ctxt, 10, ...)` and `Cblacs2sys_handle()`;
 *  - beta = 0 never reads C (a NaN there does not propagate); alpha = 0 or K = 0 never reads
 *    A or B; quick return when M = 0, N = 0, or (alpha = 0 or K = 0) and beta = 1;
 *  - arguments checked in the reference order with the reference codes (-i for scalar
 *    argument i, -(100 i + j) for entry j of descriptor argument i, entries numbered as in
 *    the 11-integer descriptor), reported as the reference does, through `PB_Cabort` (which
 *    the PBLAS testers replace), else `pxerbla_`; nothing is computed then.
 *
 * Every call is computed by Tessera (nothing is forwarded to the ScaLAPACK underneath): when
 * the three submatrices are laid out as Tessera's SUMMA needs them (each starts a full
 * block on the process where sub(C) starts, no transposes, matching block sizes) SUMMA runs
 * directly on the caller's memory, on the grid rotated to put that process at (0, 0); otherwise the
 * operands that do not fit are first redistributed (point-to-point messages between the ranks that
 * share data, transposing on the way) into that layout, and C is redistributed back. See
 * docs/scalapack.md.
 *
 * Environment: `TSR_SCALAPACK_REPORT=FILE` appends one JSON line per process at exit (calls,
 * calls per path, seconds, bytes moved); `TSR_SCALAPACK_PATH=redistribute` forces the
 * redistribution path (for measurements). The local GEMM is Tessera's (`TSR_GEMM`,
 * `OMP_NUM_THREADS` as for tsr_gemm()).
 */
#ifndef TESSERA_SCALAPACK_H
#define TESSERA_SCALAPACK_H

#include <stdint.h>

#include "tessera/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * PBLAS PDGEMM: sub(C) = alpha op(sub(A)) op(sub(B)) + beta sub(C) on block-cyclic
 * distributed matrices (see the file description). op(sub(A)) is M x K, op(sub(B)) K x N,
 * sub(C) M x N. Every argument is passed by reference (Fortran); IA..JC are 1-based. Errors
 * (reference codes): -1 TRANSA, -2 TRANSB, -3 M, -4 N, -5 K, -8/-9 IA/JA, -12/-13 IB/JB,
 * -17/-18 IC/JC out of range, -(1000 + j), -(1400 + j), -(1900 + j) entry j of DESCA, DESCB,
 * DESCC. Collective over the context's grid.
 */
TSR_API void pdgemm_(const char *transa, const char *transb, const int *m, const int *n,
                     const int *k, const double *alpha, const double *a, const int *ia,
                     const int *ja, const int *desca, const double *b, const int *ib, const int *jb,
                     const int *descb, const double *beta, double *c, const int *ic, const int *jc,
                     const int *descc);

/** PBLAS PSGEMM: pdgemm_() in single precision (errors name "PSGEMM"). */
TSR_API void psgemm_(const char *transa, const char *transb, const int *m, const int *n,
                     const int *k, const float *alpha, const float *a, const int *ia, const int *ja,
                     const int *desca, const float *b, const int *ib, const int *jb,
                     const int *descb, const float *beta, float *c, const int *ic, const int *jc,
                     const int *descc);

/**
 * PBLAS PZGEMM: pdgemm_() in double complex (COMPLEX*16, C99 `double complex` layout: real and
 * imaginary parts interleaved); ALPHA and BETA point to one complex each. TRANSA/TRANSB 'C'
 * is the conjugate transpose (op(X) = X^H), 'T' the plain transpose. Errors name "PZGEMM",
 * with pdgemm_()'s codes. Always computed on the caller's layouts (the direct path).
 */
TSR_API void pzgemm_(const char *transa, const char *transb, const int *m, const int *n,
                     const int *k, const double *alpha, const double *a, const int *ia,
                     const int *ja, const int *desca, const double *b, const int *ib, const int *jb,
                     const int *descb, const double *beta, double *c, const int *ic, const int *jc,
                     const int *descc);

/** PBLAS PCGEMM: pzgemm_() in single complex (COMPLEX, C99 `float complex` layout; errors
    name "PCGEMM"). */
TSR_API void pcgemm_(const char *transa, const char *transb, const int *m, const int *n,
                     const int *k, const float *alpha, const float *a, const int *ia, const int *ja,
                     const int *desca, const float *b, const int *ib, const int *jb,
                     const int *descb, const float *beta, float *c, const int *ic, const int *jc,
                     const int *descc);

/** Counters of this process's calls (see tsr_scalapack_get_stats()). */
typedef struct tsr_scalapack_stats {
  uint64_t pdgemm;         /**< calls of pdgemm_ */
  uint64_t psgemm;         /**< calls of psgemm_ */
  uint64_t errors;         /**< calls rejected for invalid arguments */
  uint64_t quick;          /**< quick returns (M = 0, N = 0, or alpha or K = 0 with beta = 1) */
  uint64_t scale;          /**< alpha = 0 or K = 0: sub(C) = beta sub(C), local */
  uint64_t summa;          /**< SUMMA directly on the caller's memory */
  uint64_t redistribute;   /**< SUMMA after redistributing one or more operands */
  uint64_t failed;         /**< Tessera failed (out of memory, MPI error): message on stderr */
  double seconds;          /**< wall seconds inside the two entry points */
  uint64_t bytes_sent;     /**< bytes sent to other ranks (redistribution and SUMMA panels) */
  uint64_t bytes_received; /**< bytes received from other ranks */
  uint64_t direct;         /**< the direct path: SUMMA on the caller's own layouts, with
                                PBLAS's row and column broadcasts (docs/scalapack.md) */
  uint64_t pcgemm;         /**< calls of pcgemm_ */
  uint64_t pzgemm;         /**< calls of pzgemm_ */
} tsr_scalapack_stats;

/** This process's counters since the start or the last reset. Local.
    @return ::TSR_OK; ::TSR_ERR_NULL_POINTER. */
TSR_API tsr_status tsr_scalapack_get_stats(tsr_scalapack_stats *stats);

/** Resets the counters to zero. Local. @return ::TSR_OK. */
TSR_API tsr_status tsr_scalapack_reset_stats(void);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_SCALAPACK_H */
