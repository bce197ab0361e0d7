/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internals of libtessera_scalapack shared by its two files: the call record of one
 * PDGEMM/PSGEMM (scalapack.c checks the arguments and builds it) and the direct path
 * (pgemm_direct.c: SUMMA on the caller's own block-cyclic layouts).
 */
#ifndef TSR_SCALAPACK_INTERNAL_H
#define TSR_SCALAPACK_INTERNAL_H

#include "mpi/mpi_internal.h"

/* This process's place in the BLACS grid of the call's context. */
typedef struct tsr__grid_pos {
  int nprow, npcol, myrow, mycol;
} tsr__grid_pos;

/* One checked call (PDGEMM, PSGEMM, PCGEMM or PZGEMM): sub(A) as stored (K x M when ta), sub(B) (N
   x K when tb), sub(C), each with its layout as the descriptors give it (rotated by the caller when
   it moves the grid). */
typedef struct tsr__pgemm_call {
  const char *rout; /* "PDGEMM", "PSGEMM", "PCGEMM", "PZGEMM" */
  tsr_dtype dtype;  /* f64, f32, c64, c128 */
  bool ta, tb;
  bool conj_a, conj_b; /* 'C': op(X) = X^H (complex dtypes only) */
  int m, n, k;
  double alpha, beta;
  double alpha_im, beta_im; /* imaginary parts (0 for real dtypes) */
  tsr__bc_matrix a, b, c;
  tsr__grid_pos gp;
  int ctxt;
  int mode[2]; /* the direct path's step 2 for A and B (pgemm_direct.c), -1 until the rule */
} tsr__pgemm_call;

/* Whether dtype is one of the complex routines' (PCGEMM, PZGEMM). (libtessera's dtype rows
   are not among the drop-ins' entries.) */
static inline bool tsr__pgemm_complex(tsr_dtype dtype) {
  return dtype == TSR_C64 || dtype == TSR_C128;
}

/* A buffer kept across calls on one BLACS context (grow-only). */
typedef struct tsr__pgemm_workspace {
  void *p;
  size_t bytes;
} tsr__pgemm_workspace;

/*
 * Whether the direct path computes this call (the rule of docs/scalapack.md "Two paths"): it
 * reads only values that every process of the grid passes alike (sizes, transposes, the
 * descriptors' global entries; never LLD), so every process takes the same path without
 * communicating. `forced`: 0 auto, 1 never (TSR_SCALAPACK_PATH=redistribute), 2 always
 * (TSR_SCALAPACK_PATH=direct).
 */
bool tsr__pgemm_direct_pays(tsr__pgemm_call *p, int forced);

/*
 * sub(C) = alpha op(sub(A)) op(sub(B)) + beta sub(C) on the caller's layouts, on grid g (the
 * context's processes, process (r, c) BLACS's (r, c), no rotation): for each step of k (a
 * run of indices inside one block of A and one of B), the process row or column that holds
 * the step's panel broadcasts it to the processes of C that need it (when its rows are
 * not distributed as C's, they are first gathered along the holding row or column), and the
 * steps' panels are multiplied locally, up to 256 of k at a time. Collective over g; `ws`
 * grows on the first calls (the processes agree on its allocation then, and only then).
 * A small sub(C) on one process whose operands share k's owners takes the reduction variant
 * instead (pgemm_direct.c): only the process line holding the operands and C's owner take
 * part (an MPI_Reduce along k, at most one message), the others return at once; every process
 * decides alike from the descriptors. Adds the bytes sent to and received from other processes
 * to *sent and *received. Returns TSR_OK; TSR_ERR_MPI when an MPI call fails;
 * TSR_ERR_OUT_OF_MEMORY when the workspace or a local GEMM's buffers cannot be allocated (this
 * process's part of sub(C) may then be partly updated).
 */
tsr_status tsr__pgemm_direct(const tsr__pgemm_call *p, tsr_grid *g, tsr__pgemm_workspace *ws,
                             uint64_t *sent, uint64_t *received);

#endif /* TSR_SCALAPACK_INTERNAL_H */
