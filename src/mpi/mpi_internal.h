/*
 * Internals of the MPI layer: the grid and distributed-matrix structs and the helpers that
 * every collective uses (outcome agreement, host staging of local blocks, MPI error text).
 */
#ifndef TSR_MPI_INTERNAL_H
#define TSR_MPI_INTERNAL_H

#include <mpi.h>

#include "core/internal.h"
#include "tessera/dist.h"

struct tsr_grid {
  MPI_Comm comm, row_comm, col_comm;
  int nprow, npcol, myrow, mycol, rank, size;
  struct tsr__summa_plan *summa_plan; /* SUMMA's buffers, streams and events, kept across
                                         calls (summa.c); freed with the grid */
};

/* Frees a grid's SUMMA plan (NULL is a no-op). (summa.c) */
void tsr__summa_plan_free(struct tsr__summa_plan *plan);

/*
 * The local block lives in `storage`, a 1-D array of max(1, lld * nloc) elements on the
 * rank's device, holding the local mloc x nloc matrix in column-major order with leading
 * dimension lld = max(1, mloc). RSRC = CSRC = 0.
 */
struct tsr_dmatrix {
  tsr_grid *grid;
  int64_t m, n, mb, nb;
  int64_t mloc, nloc, lld;
  tsr_dtype dtype;
  tsr_device device;
  tsr_array *storage;
  int ctxt;
};

/*
 * Collective agreement on the outcome of a step: every rank passes its own status; when any
 * rank failed, every rank returns the status and message of the lowest failing rank (with
 * " (rank r)" appended when some ranks succeeded). Returns TSR_ERR_MPI when the agreement
 * itself fails.
 */
tsr_status tsr__dist_agree(const char *fn, MPI_Comm comm, tsr_status st);

/* TSR_ERR_INCONSISTENT (on every rank) when any of the n values differs between ranks;
   `what` names them in the message. Collective. */
tsr_status tsr__dist_same(const char *fn, MPI_Comm comm, const int64_t *vals, int n,
                          const char *what);

/* Records TSR_ERR_MPI (or `code`) with MPI's text for error code `rc`. */
tsr_status tsr__mpi_error(const char *fn, tsr_status code, int rc, const char *what);

/* The decision of tsr_dist_binding_get (binding.c) from its counts: the node's CPUs, the
   rank's affinity-mask CPUs, the ranks on the node and OMP_NUM_THREADS's value (0: unset).
   Counts below 1 are taken as 1, and a mask larger than the node as the node. */
void tsr__dist_binding_rule(int node_cores, int mask_cores, int ranks_on_node, int env_threads,
                            tsr_dist_binding *out);

/* The MPI datatype of a float dtype. */
MPI_Datatype tsr__mpi_type(tsr_dtype dtype);

/* Number of elements of a matrix's local storage (lld * nloc). */
int64_t tsr__dm_local_count(const tsr_dmatrix *a);

/*
 * The local storage (lld * nloc elements, column-major) in host memory: the storage itself on
 * the CPU (*staged = false), else a new host copy (*staged = true). tsr__dm_host_done frees a
 * staged copy after writing it back to the device when `write_back`.
 */
tsr_status tsr__dm_host_get(const char *fn, const tsr_dmatrix *a, bool copy_in, void **host,
                            bool *staged);
tsr_status tsr__dm_host_done(const char *fn, const tsr_dmatrix *a, void *host, bool staged,
                             bool write_back);

/* A new distributed matrix without collective checks (callers have agreed already). */
tsr_status tsr__dm_create(const char *fn, tsr_grid *grid, int64_t m, int64_t n, int64_t mb,
                          int64_t nb, tsr_dtype dtype, tsr_device device, tsr_dmatrix **out);

/* A new matrix holding the transpose of `a`, with blocks nb x mb, on the same grid and device
   (tsr__bc_redistribute with transpose). Collective; agreed. Adds the bytes moved to *sent and
   *received when not NULL. */
tsr_status tsr__dm_transpose(const char *fn, const tsr_dmatrix *a, tsr_dmatrix **out,
                             uint64_t *sent, uint64_t *received);

/* ---------------------------------------------------------------- general block-cyclic -- */

/*
 * One dimension (rows or columns) of a submatrix of a block-cyclic matrix as PBLAS describes
 * it (11-entry descriptor with first-block sizes): the whole matrix's first block has `ib`
 * rows, the others `b`; block 0 lives on process `src` of `nprocs` (-1: the dimension is
 * replicated, every process holds all of it); the submatrix starts at 0-based global index
 * `off`. Used by the ScaLAPACK drop-in (src/mpi/redistribute.c).
 */
typedef struct tsr__bc_dim {
  int64_t off, ib, b;
  int src, nprocs;
} tsr__bc_dim;

/* A submatrix as seen by one rank: its two dimensions and this rank's local array
   (column-major, leading dimension lld) of the whole matrix. */
typedef struct tsr__bc_matrix {
  tsr__bc_dim row, col;
  void *data;
  int64_t lld;
} tsr__bc_matrix;

/* The layout of a's local array `host` (a's storage or a host copy of it) for the exchange
   below, as a whole matrix on a prow x pcol grid. (dmatrix.c) */
tsr__bc_matrix tsr__dm_layout(const tsr_dmatrix *a, void *host, int prow, int pcol);

/* Process (0..nprocs-1, or -1 when replicated) owning submatrix index i of dimension d. */
int tsr__bc_owner(const tsr__bc_dim *d, int64_t i);
/* Local index (in the owner's local array) of submatrix index i of dimension d. */
int64_t tsr__bc_local(const tsr__bc_dim *d, int64_t i);
/* First submatrix index after i where a new block starts (INT64_MAX when replicated). */
int64_t tsr__bc_next(const tsr__bc_dim *d, int64_t i);

/*
 * Collective over the grid (every rank of `g`, rank = process row * Q + process column):
 * dst(i, j) = src(i, j), or src(j, i) when `transpose`, for the m x n submatrix dst (both
 * submatrices on the grid's processes), as ScaLAPACK's p?gemr2d does, with point-to-point
 * messages between the ranks that share data only. Each block is sent once, from the owner in the
 * receiver's own process row or column when src is replicated, to every owner when dst is
 * replicated. The ranks agree on the outcome. Adds the bytes that crossed to other ranks to *sent /
 * *received (not NULL).
 */
tsr_status tsr__bc_redistribute(const char *fn, const tsr_grid *g, tsr_dtype dtype, int64_t m,
                                int64_t n, const tsr__bc_matrix *src, bool transpose,
                                const tsr__bc_matrix *dst, uint64_t *sent, uint64_t *received);

/* A process grid of nprow x npcol processes of g's communicator other than g itself:
   process (pr, pc) is rank[pr * npcol + pc] (the 2.5D layers, gemm25d.c). */
typedef struct tsr__bc_procs {
  int nprow, npcol;
  const int *rank;
} tsr__bc_procs;

/* Flags of tsr__bc_redistribute_ex. */
#define TSR__BC_ACCUMULATE 1u /* dst(i, j) += instead of = (summing partial products) */
#define TSR__BC_MODELED 2u    /* TSR_SMPI_MODEL: messages only, copies charged as modeled time */

/* tsr__bc_redistribute with the source's and the destination's owners on their own process
   grids (src_procs, dst_procs; NULL: g's), all over g's communicator; a rank outside a grid
   holds none of that matrix. A replicated source needs both on g. */
tsr_status tsr__bc_redistribute_ex(const char *fn, const tsr_grid *g, tsr_dtype dtype, int64_t m,
                                   int64_t n, const tsr__bc_matrix *src,
                                   const tsr__bc_procs *src_procs, bool transpose,
                                   const tsr__bc_matrix *dst, const tsr__bc_procs *dst_procs,
                                   unsigned flags, uint64_t *sent, uint64_t *received);

/* ------------------------------------------------ 2.5D schedule and modeled compute ---- */

/* The checks of tsr_dist_gemm_ex (transposes, grids, dtypes, devices, shapes, block sizes).
   Local; callers agree. */
tsr_status tsr__dist_gemm_check(const char *fn, tsr_trans ta, tsr_trans tb, const tsr_dmatrix *a,
                                const tsr_dmatrix *b, const tsr_dmatrix *c);

/* Agrees on `st` (the caller's checks) and on the options, then sets *replicas to the c that
   options->algorithm / replicas / memory_per_rank select (1: SUMMA on the matrices' grid).
   Collective over c's grid. (gemm25d.c) */
tsr_status tsr__dist_gemm_plan(const char *fn, tsr_status st, tsr_trans ta, const tsr_dmatrix *a,
                               const tsr_dmatrix *c, const tsr_dist_gemm_options *opt,
                               int *replicas);

/* The 2.5D schedule with c = replicas > 1 layers (checked by tsr__dist_gemm_plan). Collective;
   agreed. (gemm25d.c) */
tsr_status tsr__dist_gemm_25d(const char *fn, tsr_trans ta, tsr_trans tb, double alpha,
                              const tsr_dmatrix *a, const tsr_dmatrix *b, double beta,
                              tsr_dmatrix *c, int replicas, const tsr_dist_gemm_options *opt,
                              tsr_dist_stats *stats);

/* The SUMMA schedule (summa.c) on matrices already checked and agreed on (tsr_dist_gemm_ex's
   checks): C = alpha A B + beta C, untransposed, A's column block = B's row block. Collective
   over c's grid; agrees on the outcome; fills *stats (SUMMA's figures and the device work of
   the call). The 2.5D layers call it directly, so nothing is checked or agreed twice. */
tsr_status tsr__dist_summa(const char *fn, double alpha, const tsr_dmatrix *a,
                           const tsr_dmatrix *b, double beta, tsr_dmatrix *c,
                           const tsr_dist_gemm_options *options, tsr_dist_stats *stats);

/* Sets the device-work members of *st (h2d/d2h bytes and copies, host_syncs, gemm_calls,
   gemm_vendor_calls) to what the library's counters counted since count0 (tsr__counters_read). */
void tsr__dist_count_since(tsr_dist_stats *st, const uint64_t count0[TSR__COUNT_N]);

/* The local GEMM of the distributed schedules: tsr_gemm_ex, or in a TSR_SMPI_MODEL build (the
   SimGrid study, bench/scale) smpi_execute_flops(2 m n k) without computing. (smpi_model.c) */
tsr_status tsr__dist_local_gemm(double alpha, const tsr_array *a, const tsr_array *b, double beta,
                                tsr_array *c, tsr_gemm_path path);

/* 1 in a TSR_SMPI_MODEL build: local data movement is charged, not done (smpi_model.c). */
int tsr__dist_modeled(void);

/* Charges the time of copying `bytes` in local memory in a TSR_SMPI_MODEL build (at
   TSR_SMPI_MEMORY_BW bytes/s, default 10e9); no-op otherwise. (smpi_model.c) */
void tsr__dist_model_copy(double bytes);

#endif /* TSR_MPI_INTERNAL_H */
