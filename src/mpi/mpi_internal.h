/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internals of the MPI layer: the grid and distributed-matrix structs and the helpers that
 * every collective uses (outcome agreement, host staging of local blocks, MPI error text).
 */
#ifndef TSR_MPI_INTERNAL_H
#define TSR_MPI_INTERNAL_H

#include <mpi.h>

#include "core/internal.h"
#include "mpi/mpi_dtypes.h" /* the MPI column of the dtypes */
#include "tessera/dist.h"

struct tsr_grid {
  MPI_Comm comm, row_comm, col_comm;
  int nprow, npcol, myrow, mycol, rank, size;
  bool oversubscribed; /* some node of the grid holds more of its ranks than CPUs (agreed at
                          creation, tsr__bcast_oversubscribed in binding.c; also cached on the
                        three comms) */
  /* staging.c's object (staging.h): pinned host buffers, device message buffers, copy streams
     and SUMMA's slots, shared by SUMMA and the block-cyclic exchange; made on first use,
     grow-only, freed with the grid through staging_free (set by staging.c: the grid does not
     call into it). */
  struct tsr__staging *staging;
  void (*staging_free)(struct tsr__staging *);
};

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

/* ------------------------------------------------ the ground of src/mpi (mpi_base.c) --- */

/*
 * Collective agreement on the outcome of a step: every rank passes its own status; when any
 * rank failed, every rank returns the status, message and raise site of the lowest failing
 * rank (with " (rank r)" appended to the message when some ranks succeeded). Returns
 * TSR_ERR_MPI when the agreement itself fails, and, without any MPI call, when comm may not be
 * used (tsr__mpi_comm_usable: after MPI_Finalize, every public call that agrees returns
 * TSR_ERR_MPI "MPI is already finalized" instead of aborting in MPI).
 */
tsr_status tsr__dist_agree(MPI_Comm comm, tsr_status st);

/* TSR_ERR_INCONSISTENT (on every rank) when any of the n values differs between ranks;
   `what` names them in the message. Collective; TSR_ERR_MPI as tsr__dist_agree when comm may
   not be used. */
tsr_status tsr__dist_same(MPI_Comm comm, const int64_t *vals, int n, const char *what);

/* `code` with a message when no MPI call may be made on `comm`: MPI not initialized, already
   finalized, or comm is MPI_COMM_NULL (which the default error handler would abort on). Local;
   every public entry taking an MPI_Comm calls it before any MPI call on comm. */
tsr_status tsr__mpi_comm_usable(MPI_Comm comm, tsr_status code);

/* Records TSR_ERR_MPI (or `code`) with MPI's text for error code `rc`; tsr__mpi_error passes
   its call site (core/internal.h, "the raise site"). */
tsr_status tsr__mpi_error_at(const char *fn, tsr_status code, int rc, const char *what,
                             const char *file, int line, const char *func);
#define tsr__mpi_error(fn, code, rc, what)                                                         \
  tsr__mpi_error_at((fn), (code), (rc), (what), __FILE__, __LINE__, __func__)

/* The MPI datatype of a dtype, MPI_DATATYPE_NULL for an invalid one: tsr__mpi_dtype_of, the
   rows of mpi/mpi_dtypes.h. */
MPI_Datatype tsr__mpi_type(tsr_dtype dtype);

/* ------------------------------------------------ ranks on the nodes' cores (binding.c) - */

/* The decision of tsr_dist_binding_get from its counts: the node's CPUs, the rank's
   affinity-mask CPUs, the ranks on the node and OMP_NUM_THREADS's value (0: unset). Counts
   below 1 are taken as 1, and a mask larger than the node as the node. */
void tsr__dist_binding_rule(int node_cores, int mask_cores, int ranks_on_node, int env_threads,
                            tsr_dist_binding *out);

/* The counts of tsr_dist_binding_get: the CPUs of this rank's node that the job may use
   (online CPUs, fewer when the cgroup's cpuset says so) and the ranks of `comm` on this node
   (MPI_Comm_split_type SHARED). Collective over comm. */
tsr_status tsr__dist_node_counts(MPI_Comm comm, int *node_cores, int *ranks_on_node);

/* Whether `comm` is oversubscribed, the same answer on every rank: true when the node
   of some rank holds more ranks of comm than CPUs (tsr__dist_node_counts: an oversubscribed
   node, e.g. mpirun --oversubscribe), agreed with one MPI_Allreduce (MPI_MAX), or as
   TSR_BCAST_OVERSUBSCRIBED (or its deprecated alias, src/core/env.c) forces it (1 on any
   rank: true). Cached on the communicator (an
   attribute, copied by MPI_Comm_dup): collective over comm the first time, local after. In
   a TSR_SMPI_MODEL build (bench/scale) false, or as the variable forces it, without any MPI
   call: the simulated ranks share the simulator's host, not the modeled platform's CPUs.
   Errors: TSR_ERR_MPI when the reduction fails (a rank that cannot count its node takes
   true). */
tsr_status tsr__bcast_oversubscribed(MPI_Comm comm, bool *oversubscribed);

/* tsr__bcast_oversubscribed computed anew (collective; not cached). tsr_grid_create agrees on
   it over the grid's communicator and caches it on the row and column communicators with
   tsr__bcast_oversubscribed_set (the value of a larger set of ranks, the same on every rank of
   each). */
tsr_status tsr__bcast_oversubscribed_agree(MPI_Comm comm, bool *oversubscribed);
tsr_status tsr__bcast_oversubscribed_set(MPI_Comm comm, bool oversubscribed);

/* The cached fact of comm: 0 or 1, or -1 when none is cached (always -1 in a TSR_SMPI_MODEL
   build). Local. */
int tsr__bcast_oversubscribed_cached(MPI_Comm comm);

/* ------------------------------------------------ distributed matrices (dmatrix.c) ----- */

/* Number of elements of a matrix's local storage (lld * nloc). */
int64_t tsr__dm_local_count(const tsr_dmatrix *a);

/*
 * The local storage (lld * nloc elements, column-major) in host memory: the storage itself on
 * the CPU (*staged = false), else a new host copy (*staged = true). tsr__dm_host_done frees a
 * staged copy after writing it back to the device when `write_back`.
 */
tsr_status tsr__dm_host_get(const tsr_dmatrix *a, bool copy_in, void **host, bool *staged);
tsr_status tsr__dm_host_done(const tsr_dmatrix *a, void *host, bool staged, bool write_back);

/* A new distributed matrix without collective checks (callers have agreed already). */
tsr_status tsr__dm_create(tsr_grid *grid, int64_t m, int64_t n, int64_t mb, int64_t nb,
                          tsr_dtype dtype, tsr_device device, tsr_dmatrix **out);

/* A new matrix holding the transpose of `a` (the conjugate transpose when `conj` and a is
   complex), with blocks nb x mb, on the same grid and device (tsr__bc_redistribute_ex with
   transpose, TSR__BC_CONJ for conj). Collective; agreed. Adds the bytes moved to *sent and
   *received when not NULL. */
tsr_status tsr__dm_transpose(const tsr_dmatrix *a, bool conj, tsr_dmatrix **out, uint64_t *sent,
                             uint64_t *received);

/* Whether op = t conjugates the elements of a matrix of `dtype`: TSR_CONJ_TRANS on a complex
   dtype (on a real one it is TSR_TRANS, as BLAS defines). */
static inline bool tsr__dist_conj(tsr_trans t, tsr_dtype dtype) {
  return t == TSR_CONJ_TRANS && tsr__dtype_is_complex(dtype);
}

/* The scalar v as a complex alpha/beta of the internal schedules (imaginary part 0). */
static inline tsr_complex128 tsr__dist_real(double v) {
  tsr_complex128 z = {v, 0.0};
  return z;
}

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
   (column-major, leading dimension lld) of the whole matrix: host memory at `data`, or, when
   `storage` is not NULL, the array `storage` on GPU `device` (a GPU matrix's local block,
   element 0 at its buffer's start; `data` is then ignored). */
typedef struct tsr__bc_matrix {
  tsr__bc_dim row, col;
  void *data;
  int64_t lld;
  tsr_array *storage;
  tsr_device device;
} tsr__bc_matrix;

/* The layout of a's local array `host` (a's storage or a host copy of it) for the exchange
   below, as a whole matrix on a prow x pcol grid. (dmatrix.c) */
tsr__bc_matrix tsr__dm_layout(const tsr_dmatrix *a, void *host, int prow, int pcol);

/* The layout of a's own local block where it lives, on a prow x pcol grid: its host memory on
   the CPU, its device array on a GPU (the exchange then moves it device-resident, staged by
   the same rule as SUMMA's panels: tsr__dist_gpu_staging). (dmatrix.c) */
tsr__bc_matrix tsr__dm_layout_local(const tsr_dmatrix *a, int prow, int pcol);

/* Whether GPU data go to MPI through pinned host buffers (true) or in device memory: not
   tsr_dist_gpu_aware(), or TSR_DIST_GPU_STAGING's 1 / 0. SUMMA's panels and the block-cyclic
   exchange of device matrices follow it. (gpu_aware.c) */
bool tsr__dist_gpu_staging(void);

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
 *
 * Device-resident (src or dst with a GPU `storage`; both on the same device where this rank
 * holds both): the messages are packed and unpacked on the device (strided device copies, a
 * transpose included) and go to MPI in device memory when MPI takes it, else through pinned
 * host buffers: one device-to-host copy of what this rank sends to others and one
 * host-to-device copy of what it receives (at most two of each, the own part stays on the
 * device), counted by tsr__count. TSR__BC_ACCUMULATE adds on the device (per rectangle).
 */
tsr_status tsr__bc_redistribute(const tsr_grid *g, tsr_dtype dtype, int64_t m, int64_t n,
                                const tsr__bc_matrix *src, bool transpose,
                                const tsr__bc_matrix *dst, uint64_t *sent, uint64_t *received);

/* A process grid of nprow x npcol processes of g's communicator other than g itself:
   process (pr, pc) is rank[pr * npcol + pc] (the 2.5D layers, gemm25d.c). With copies > 1 the
   grid exists `copies` times, copy l at ranks rank[...] + l * copy_stride, each holding its own
   matrix of the same layout: as a source, every copy sends its part and a destination receives
   the sum (with TSR__BC_ACCUMULATE; the c layers' partial products of 2.5D in one exchange).
   copies 0 or 1: one grid. */
typedef struct tsr__bc_procs {
  int nprow, npcol;
  const int *rank;
  int copies, copy_stride;
} tsr__bc_procs;

/* Flags of tsr__bc_redistribute_ex. */
#define TSR__BC_ACCUMULATE 1u /* dst(i, j) += instead of = (summing partial products) */
#define TSR__BC_MODELED 2u    /* TSR_SMPI_MODEL: messages only, copies charged as modeled time */
#define TSR__BC_CONJ                                                                               \
  4u /* complex dtypes: dst = conj(src) (with transpose: src^H); ignored                           \
        for real dtypes */

/* tsr__bc_redistribute with the source's and the destination's owners on their own process
   grids (src_procs, dst_procs; NULL: g's), all over g's communicator; a rank outside a grid
   holds none of that matrix. A replicated source needs both on g. */
tsr_status tsr__bc_redistribute_ex(const tsr_grid *g, tsr_dtype dtype, int64_t m, int64_t n,
                                   const tsr__bc_matrix *src, const tsr__bc_procs *src_procs,
                                   bool transpose, const tsr__bc_matrix *dst,
                                   const tsr__bc_procs *dst_procs, unsigned flags, uint64_t *sent,
                                   uint64_t *received);

/* ------------------------------------------------ the schedules (dist_gemm.c's table) - */

/* The checks of tsr_dist_gemm_ex (transposes, grids, dtypes, devices, shapes, block sizes).
   Local; callers agree. (dist_gemm.c) */
tsr_status tsr__dist_gemm_check(tsr_trans ta, tsr_trans tb, const tsr_dmatrix *a,
                                const tsr_dmatrix *b, const tsr_dmatrix *c);

/* Latency of one message round, in words, in the schedules' cost model. */
#define TSR__DIST_ROUND_WORDS 2000.0

/* A call as the schedules' cost functions see it: C is m x n, the inner dimension k in
   `panels` panels of kb (op(A)'s column block), the matrices' pr x pc grid of `size` ranks,
   elements of es bytes; and what the options fix: `replicas` asked for (2.5D's c; 0: the
   schedule chooses) and `memory_per_rank` (bytes a chosen schedule may add; 0: no limit).
   The same on every rank (the options were agreed). */
typedef struct tsr__dist_shape {
  double m, n, k;
  int64_t panels, kb;
  int pr, pc, size;
  size_t es;
  int replicas;
  int64_t memory_per_rank;
} tsr__dist_shape;

/* A call as the dispatcher hands it to a schedule's run: checked and agreed, the schedule's
   parameter (`replicas`, 2.5D's c) from its cost function, the call's start (MPI_Wtime: the
   communication seconds of a schedule count from it). */
typedef struct tsr__dist_call {
  tsr_trans ta, tb;
  tsr_complex128 alpha, beta;
  const tsr_dmatrix *a, *b;
  tsr_dmatrix *c;
  const tsr_dist_gemm_options *options; /* may be NULL */
  int replicas;
  double t_start;
} tsr__dist_call;

/*
 * One schedule, a row of the dispatcher's table (dist_gemm.c):
 *   name       as tessera-gemm's JSON spells it ("summa", "2.5d");
 *   algorithm  its value in tsr_dist_gemm_options::algorithm and tsr_dist_stats::algorithm;
 *   cost       the modeled cost of the call (words a rank receives plus TSR__DIST_ROUND_WORDS
 *              per message round), INFINITY when the schedule does not apply to the call's
 *              shape, grid or asked replicas; sets *replicas to the parameter it costed (1 for
 *              SUMMA). Local and deterministic: the same on every rank. An error only when the
 *              options ask what the schedule can never do (2.5D: replicas that do not split
 *              the ranks), with the message;
 *   run        the schedule on a checked, agreed call: collective, agrees on its outcome, and
 *              fills its figures in *stats (zeroed by the dispatcher, which then sets
 *              algorithm, replicas, total_seconds and the device work of the whole call).
 * The dispatcher runs the row that options->algorithm names, or under TSR_DIST_GEMM_AUTO the
 * cheapest (the first of equal costs, in table order); SUMMA, the first row, applies to every
 * call and serves when the named row does not apply.
 */
typedef struct tsr__dist_schedule {
  const char *name;
  tsr_dist_algorithm algorithm;
  tsr_status (*cost)(const tsr__dist_shape *shape, double *cost, int *replicas);
  tsr_status (*run)(const tsr__dist_call *call, tsr_dist_stats *stats);
} tsr__dist_schedule;

/* The table's rows in order, *n of them (dist_gemm.c). */
const tsr__dist_schedule *tsr__dist_schedules(size_t *n);

/* The row and parameter the dispatcher takes for `shape` under `options` (NULL: SUMMA):
   local, deterministic, on checked options; an error only from the named row's cost
   (dist_gemm.c). */
tsr_status tsr__dist_schedule_pick(const tsr__dist_shape *shape,
                                   const tsr_dist_gemm_options *options,
                                   const tsr__dist_schedule **row, int *replicas);

/* SUMMA's row (summa.c): SUMMA on the matrices' own grid, transposed operands first
   redistributed into their transpose (tsr__dm_transpose), then tsr__dist_summa. */
tsr_status tsr__dist_summa_cost(const tsr__dist_shape *shape, double *cost, int *replicas);
tsr_status tsr__dist_summa_run(const tsr__dist_call *call, tsr_dist_stats *stats);

/* 2.5D's row (gemm25d.c): c = replicas > 1 layers of q x q ranks (q^2 = P / c); the cost of
   the asked c, or the cheapest c within memory_per_rank and the number of panels. */
tsr_status tsr__dist_25d_cost(const tsr__dist_shape *shape, double *cost, int *replicas);
tsr_status tsr__dist_25d_run(const tsr__dist_call *call, tsr_dist_stats *stats);

/* The SUMMA schedule (summa.c) on matrices already checked and agreed on (tsr_dist_gemm_ex's
   checks): C = alpha A B + beta C, untransposed, A's column block = B's row block. Collective
   over c's grid; agrees on the outcome; fills *stats (SUMMA's figures and the device work of
   the call). The 2.5D layers call it directly, so nothing is checked or agreed twice. */
tsr_status tsr__dist_summa(tsr_complex128 alpha, const tsr_dmatrix *a, const tsr_dmatrix *b,
                           tsr_complex128 beta, tsr_dmatrix *c,
                           const tsr_dist_gemm_options *options, tsr_dist_stats *stats);

/* ------------------------------------------------ statistics and modeled compute ------ */

/* Sets the device-work members of *st (dist_stats.c) (h2d/d2h bytes and copies, host_syncs,
   gemm_calls, gemm_vendor_calls) and the broadcast counts (bcast_mpi, bcast_ring, bcast_tree)
   to what the library's counters counted since count0
   (tsr__counters_read). */
void tsr__dist_count_since(tsr_dist_stats *st, const uint64_t count0[TSR__COUNT_N]);

/* Adds the figures of a SUMMA run (tsr__dist_summa's stats) to a schedule's statistics: bytes
   and communication seconds summed, the rest taken over (the dispatcher and 2.5D). */
void tsr__dist_stats_add_summa(tsr_dist_stats *st, const tsr_dist_stats *summa);

/* The local GEMM of the distributed schedules, C = alpha A B + beta C (no transposes): tsr_gemm_ex
   for the real dtypes (alpha.re, beta.re), tsr_gemm_complex for the complex ones, or in a
   TSR_SMPI_MODEL build (the SimGrid study, bench/scale) smpi_execute_flops(2 m n k, 8 m n k
   for complex) without computing. k = 0 scales C by beta. (smpi_model.c) */
tsr_status tsr__dist_local_gemm(tsr_complex128 alpha, const tsr_array *a, const tsr_array *b,
                                tsr_complex128 beta, tsr_array *c, tsr_gemm_path path);

/* The GPU node of the SimGrid study (smpi_model.c; in every build, reading the environment):
   tsr__dist_model_gpu: 1 when TSR_SMPI_GPU=1 (modeled local GEMMs are then charged
   tsr__dist_model_gemm_seconds instead of flops at the host speed); the modeled seconds of an
   m x n x k GEMM of elements of es bytes on an H100 (rate per shape, see smpi_model.c); the
   seconds of staging `bytes` through PCIe (0 unless TSR_SMPI_GPU_STAGING=1). */
int tsr__dist_model_gpu(void);
double tsr__dist_model_gemm_seconds(double m, double n, double k, size_t es);
double tsr__dist_model_staging_seconds(double bytes);
/* The seconds of packing a panel of `bytes` on the modeled device (to pinned memory when
   staging, else within HBM). */
double tsr__dist_model_pack_seconds(double bytes);
/* The modeled host's polling interval while it waits for the modeled device (seconds; 0, the
   default: it blocks until a message of the broadcasts in flight or the device's time comes,
   with tsr__model_timer below). */
double tsr__dist_model_poll_seconds(void);

/* The modeled host's alarm clock (TSR_SMPI_MODEL build, TSR_SMPI_GPU=1, TSR_SMPI_GPU_POLL=0): a
   message to itself on MPI_COMM_SELF, sized so that it arrives `seconds` later in simulated
   time, from a folded buffer (SMPI_SHARED_MALLOC: nothing is copied). The host waits in one
   MPI_Waitany on it and the broadcasts' requests, so it wakes when a segment arrives or leaves
   or when the modeled device is done, without polling. Why not MPI_Test: SimGrid 3.32 keeps
   every communication completed by a test in its actor's list of activities (only a wait
   removes it), and every later wait and compute charge scans that list, so a run's cost grew
   with the square of its messages (docs/scaling.md). The size for `seconds` comes from the
   loopback rate measured on the timers already fired (the first one is short). start posts
   the timer (not running); fired completes it after MPI_Waitany returned its receive (recv
   is then MPI_REQUEST_NULL); stop waits out a running one (its time has come by then). */
typedef struct tsr__model_timer {
  MPI_Request recv, send;
  double start;
  int64_t bytes;
  int running;
} tsr__model_timer;
void tsr__dist_model_timer_start(tsr__model_timer *t, double seconds);
void tsr__dist_model_timer_fired(tsr__model_timer *t);
void tsr__dist_model_timer_stop(tsr__model_timer *t);
/* Charges `seconds` of compute to this rank's simulated host (TSR_SMPI_MODEL; no-op else). */
void tsr__dist_model_charge(double seconds);

/* 1 in a TSR_SMPI_MODEL build: local data movement is charged, not done (smpi_model.c). */
int tsr__dist_modeled(void);

/* Charges the time of copying `bytes` in local memory in a TSR_SMPI_MODEL build (at
   TSR_SMPI_MEMORY_BW bytes/s, default 10e9); no-op otherwise. (smpi_model.c) */
void tsr__dist_model_copy(double bytes);

/* ------------------------------------------------ pipelined panel broadcast (bcast.c) -- */

/*
 * A non-blocking broadcast of `count` elements of a basic MPI type (contiguous buffer) from
 * `root` to every rank of `comm`, progressed by its caller (tsr__bcast_test / _testall /
 * _wait). The storage is the caller's (one struct per broadcast in flight; no allocation).
 *
 * algo (resolved once in tsr__bcast_start, identically on every rank):
 *   TSR_DIST_BCAST_MPI:  MPI_Ibcast (the MPI library's algorithm; a drop-in for it);
 *   TSR_DIST_BCAST_RING: the buffer in segments of segment_bytes, relative rank r = (rank -
 *     root) mod size receives every segment from r - 1 and forwards it to r + 1;
 *   TSR_DIST_BCAST_TREE: the same segments down a binary tree (r receives from (r - 1) / 2,
 *     forwards to 2r + 1 and 2r + 2);
 *   TSR_DIST_BCAST_AUTO: tsr__bcast_choose(count * element size, size, segment size, false,
 *     tsr__bcast_oversubscribed(comm)): the rule for host buffers; a caller with device buffers
 *     resolves AUTO itself with device = true (SUMMA does), so that they never reach
 *     MPI_Ibcast.
 * AUTO and a ring or tree with the default segment (segment_bytes = 0) need to know whether
 * the ranks are oversubscribed (tsr__bcast_oversubscribed): the first such broadcast on a
 * communicator whose fact is not cached yet makes that collective inside tsr__bcast_start, so the
 * ranks must reach it in the same order, and none may block meanwhile on a pipelined broadcast that
 * needs another rank's forwarding; a grid's communicators are cached at its creation.
 * A segment is forwarded by the first test/wait call after it arrived: the pipeline moves as
 * often as the caller tests (Open MPI also progresses its own requests only inside MPI calls).
 * At most TSR__BCAST_WINDOW receives and TSR__BCAST_WINDOW sends per child are in flight.
 *
 * Every rank must pass the same count, type, root, algo, segment_bytes and tag (tags are not
 * checked: a mismatch is a wrong broadcast or a hang, as with MPI_Ibcast). Broadcasts in
 * flight at once on one communicator need distinct tags in [0, 32767]; a tag may be reused
 * once this rank's previous broadcast with it completed (SUMMA: its two slots, tags 0 and 1,
 * one per communicator). MPI_Ibcast ignores the tag (MPI orders collectives itself).
 *
 * segment_bytes: 0 for the default (tsr__bcast_segment_bytes with the communicator's fact);
 * rounded down to a multiple of the element size, at least one element. The buffer may be
 * device memory when the MPI is GPU-aware for point-to-point (only pointers reach MPI: the
 * broadcast never reads it), else host memory (pinned for GPU staging). It must stay untouched
 * until the broadcast completed.
 *
 * Errors (the op is then complete, *done = 1, and later calls return the same status): bad
 * arguments TSR_ERR_INVALID_ARGUMENT / TSR_ERR_OVERFLOW (count over INT_MAX for MPI_Ibcast) /
 * TSR_ERR_NULL_POINTER, before any message; an MPI call that fails gives TSR_ERR_MPI through
 * tsr__mpi_error (the communicator needs MPI_ERRORS_RETURN, as the grid's have). A segment that
 * arrives with an error (e.g. truncated) is still forwarded, so that the rest of the pipeline
 * completes with undefined data instead of hanging; the caller agrees on the outcome
 * (tsr__dist_agree), as SUMMA does. Limits: when posting a send or a receive fails, or a peer
 * dies, the ranks below it in the ring/tree wait in tsr__bcast_wait until the MPI aborts the
 * job (Open MPI's default for a dead peer) -- there is no timeout; after an error this rank's
 * pending receives are cancelled and completed, its pending sends released with
 * MPI_Request_free (the buffer must stay allocated until the communicator is freed).
 *
 * Error messages name the public function that is running (the API context).
 */
#define TSR__BCAST_WINDOW 8

typedef struct tsr__bcast {
  char *buf;
  MPI_Datatype type;
  MPI_Comm comm;
  size_t es;     /* bytes of one element */
  int64_t count; /* elements */
  int64_t seg;   /* elements of a segment (the last one may be shorter) */
  int64_t nseg;  /* segments (0 when count is 0) */
  int root, rank, size, tag;
  tsr_dist_bcast algo; /* resolved: MPI, RING or TREE */
  int parent;          /* -1 at the root */
  int nchild, child[2];
  int64_t recv_posted, recv_done;         /* segments whose receive was posted / completed */
  int64_t sent[2], send_done[2];          /* per child: sends posted / completed */
  MPI_Request rreq[TSR__BCAST_WINDOW];    /* receive of segment i in rreq[i % W] */
  MPI_Request sreq[2][TSR__BCAST_WINDOW]; /* send of segment i to child c in sreq[c][i % W] */
  MPI_Request mreq;                       /* MPI_Ibcast */
  tsr_status status;                      /* TSR_OK, or the first error */
  int done;
  /* Requests complete only in waits (tsr__bcast_wait_any), never in MPI_Test: the modeled GPU
     host's event-driven waits (TSR_SMPI_MODEL, tsr__model_timer). */
  int wait_only;
  uint64_t bytes_sent, bytes_received; /* payload this rank sent / received so far */
} tsr__bcast;

/* The algorithm AUTO picks for `bytes` to `size` ranks in segments of `segment_bytes` (0: the
   default), in host memory (device = false) or device memory, on oversubscribed ranks
   (oversubscribed, tsr__bcast_oversubscribed) or not: host buffers take MPI when size <= 2,
   bytes < 64 KiB or bytes < TSR_BCAST_MPI_BELOW (default 1 MiB); device buffers never MPI
   (Open MPI's GPU support does not cover MPI_Ibcast): TREE when size <= 2 or bytes < 64 KiB.
   Otherwise TREE when the ranks are oversubscribed (a ring moves only while all its ranks run: 4
   ranks on 2 cores lost up to 2x, docs/scaling.md; its default segment is then 1 MiB), else
   RING when bytes >= (size - 2 - log2 size) (segment + alpha beta), else TREE. alpha beta
   (latency x bandwidth) is 32 KiB, or TSR_BCAST_ALPHA_BETA bytes (the cost model is in
   bcast.c). Local; the same arguments give the same answer on every rank. */
tsr_dist_bcast tsr__bcast_choose(int64_t bytes, int size, int64_t segment_bytes, bool device,
                                 bool oversubscribed);

/* The default segment size for `bytes` to `size` ranks (segment_bytes = 0): the ring's optimum
   sqrt(bytes alpha beta / (size - 2)) in [16 KiB, 1 MiB], multiples of 4 KiB; 1 MiB on
   oversubscribed ranks (oversubscribed: each hop waits for its forwarder to be scheduled, so fewer,
   larger segments); the whole buffer (at least 16 KiB) when size <= 2. */
int64_t tsr__bcast_segment_bytes(int64_t bytes, int size, bool oversubscribed);

/* Starts the broadcast (posts what can be posted). Local: no agreement. */
tsr_status tsr__bcast_start(tsr__bcast *op, void *buf, int64_t count, MPI_Datatype type, int root,
                            MPI_Comm comm, tsr_dist_bcast algo, int64_t segment_bytes, int tag);

/* Progresses without blocking: completes arrived segments, posts their forwards and the next
   receives. *done = 1 when this rank's part is complete (buffer received, sends finished). */
tsr_status tsr__bcast_test(tsr__bcast *op, int *done);

/* tsr__bcast_test on n ops (NULL entries and completed ops are skipped), as MPI_Testall:
 *done = 1 when all are complete. Returns the first error of the ops (all are progressed). */
tsr_status tsr__bcast_testall(int n, tsr__bcast *const *ops, int *done);

/* Tests until complete (spins on MPI_Test-like calls; the only blocking call). */
tsr_status tsr__bcast_wait(tsr__bcast *op);

/* tsr__bcast_wait on n ops together (progressing all of them while waiting). */
tsr_status tsr__bcast_waitall(int n, tsr__bcast *const *ops);

/* Waits until ops[0..n) complete while also progressing also[0..n_also) (the broadcasts of
   later panels, not waited for: a ring must keep forwarding them). Blocks in MPI_Waitany on
   the pending requests of all of them (no spinning) when n + n_also <= 16, else tests in a
   loop. Returns the first error of `ops`; errors of `also` stay in those ops (their own
   test/wait returns them). NULL entries and completed ops are skipped. */
tsr_status tsr__bcast_wait_while(int n, tsr__bcast *const *ops, int n_also,
                                 tsr__bcast *const *also);

/* Blocks in one MPI_Waitany until a pending request of the ops (NULL entries and completed
   ops skipped; at most 16 ops) or *extra (may be NULL or MPI_REQUEST_NULL) completes. Returns
   true when it was *extra (then MPI_REQUEST_NULL); a completed request of an op is seen by
   its next test. With nothing to wait on it returns false at once. With an extra request the
   ops' MPI_Ibcast requests are left out (as the polled host did): tsr__bcast_wait_while
   completes them. */
bool tsr__bcast_wait_any(int n, tsr__bcast *const *ops, MPI_Request *extra);

/* Abandons an op that is still in flight (after a local error elsewhere): cancels and
   completes its receives, releases its sends (MPI_Request_free). No-op when complete. */
void tsr__bcast_abandon(tsr__bcast *op);

/* The drop-ins' internal interface (core/dropin.h): exported, versioned. */
TSR__DROPIN_MPI(TSR__DROPIN_EXPORT)

#endif /* TSR_MPI_INTERNAL_H */
