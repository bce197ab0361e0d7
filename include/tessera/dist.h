/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file dist.h
 * @brief Distributed matrices over MPI: process grid, 2D block-cyclic matrices, SUMMA GEMM,
 * collective MPI-IO `.npy` files.
 *
 * Not included by tessera.h: a program that uses the distributed layer includes this header
 * itself (it needs `mpi.h`, and a library built with MPI, `TSR_HAVE_MPI`).
 *
 * Every function here taking a ::tsr_grid or a ::tsr_dmatrix is COLLECTIVE over the grid's
 * communicator: every rank of the grid must call it, with the same arguments (except host
 * buffers that only the root uses). The ranks agree on the outcome before returning: when any
 * rank fails (bad file, out of memory, GPU error...), every rank returns the same status and the
 * same message in tsr_last_error() (suffixed "(rank r)" naming the first failing rank when not
 * every rank failed), so no rank is left waiting in a later collective. Arguments that differ
 * between ranks (sizes, block sizes, dtypes) are detected and give ::TSR_ERR_INCONSISTENT.
 * NULL grid or matrix pointers are the one exception: they are detected locally only.
 *
 * Conventions follow ScaLAPACK (Blackford et al., "ScaLAPACK Users' Guide", SIAM 1997):
 * - Process grid: P x Q processes; the rank r of the grid's communicator sits at process row
 *   r / Q and process column r % Q (row-major, like the default BLACS grid, order 'R').
 * - A global M x N matrix is cut into MB x NB blocks dealt out cyclically: block (I, J) lives
 *   on process (I mod P, J mod Q) (RSRC = CSRC = 0). Each rank stores its blocks as one local
 *   matrix in COLUMN-MAJOR order with leading dimension LLD = max(1, local rows), the local
 *   sizes given by numroc. The 9-integer descriptor {DTYPE_=1, CTXT, M, N, MB, NB, RSRC, CSRC,
 *   LLD} can be handed to ScaLAPACK routines together with the local data.
 * - Global indices in this API are 0-based (ScaLAPACK's are 1-based; the descriptor itself
 *   holds sizes only, so it is the same in both).
 */
#ifndef TESSERA_DIST_H
#define TESSERA_DIST_H

/* Only MPI's C interface: C++ programs would otherwise link Open MPI's or MPICH's C++
   bindings (libmpi_cxx), which the library does not use. */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#include <stdint.h>

#include "tessera/array.h"
#include "tessera/io.h" /* tsr_npy_header */
#include "tessera/linalg.h"
#include "tessera/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- process grid -------- */

/** Opaque P x Q process grid over a duplicate of an MPI communicator. */
typedef struct tsr_grid tsr_grid;

/** Description of a grid, filled by tsr_grid_info(). */
typedef struct tsr_grid_props {
  int nprow;         /**< P, process rows */
  int npcol;         /**< Q, process columns */
  int myrow;         /**< this rank's process row: rank / Q */
  int mycol;         /**< this rank's process column: rank % Q */
  int rank;          /**< rank in the grid's communicator */
  int size;          /**< P * Q */
  MPI_Comm comm;     /**< the grid's communicator (a duplicate; owned by the grid) */
  MPI_Comm row_comm; /**< the Q ranks of this process row, ranked by process column */
  MPI_Comm col_comm; /**< the P ranks of this process column, ranked by process row */
} tsr_grid_props;

/** @deprecated The name of ::tsr_grid_props in release 0.1; kept for source compatibility. */
typedef tsr_grid_props tsr_grid_info_t;

/**
 * Creates a P x Q process grid over `comm` (duplicated with MPI_Comm_dup, so the grid's
 * messages never mix with the caller's). Collective over `comm`. The ranks also agree here,
 * once, whether they are oversubscribed (some node holds more of them than CPUs), which the
 * panel broadcasts' ::TSR_DIST_BCAST_AUTO then reads without another collective.
 * @param p, q process rows and columns. Both 0: the near-square grid P x Q with P <= Q and
 *        P * Q = size (P the largest divisor of size not above sqrt(size)); one of them 0: the
 *        other is size / given.
 * @param[out] out the new grid; free it with tsr_grid_free().
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (negative p or q,
 *         P * Q != communicator size; the message gives P, Q and the size; or comm is
 *         MPI_COMM_NULL, MPI not initialized or already finalized, found before any MPI call);
 *         ::TSR_ERR_INCONSISTENT (p, q differ between ranks); ::TSR_ERR_MPI;
 *         ::TSR_ERR_OUT_OF_MEMORY.
 */
TSR_API tsr_status tsr_grid_create(MPI_Comm comm, int p, int q, tsr_grid **out);

/**
 * Frees a grid and its communicators. Collective. Matrices created on the grid must be freed
 * first. NULL is accepted (no-op).
 *
 * After MPI_Finalize (a grid freed by a destructor or an atexit handler) MPI_Comm_free is no
 * longer allowed: the grid's host memory and its kept SUMMA buffers are freed without any MPI
 * call (its communicators ended with MPI) and the result is ::TSR_OK; tsr_dmatrix_free() needs
 * no MPI either. The entries that communicate return ::TSR_ERR_MPI then, with "MPI is already
 * finalized" in the message, instead of calling MPI (tsr_grid_create() and
 * tsr_dist_binding_get(): ::TSR_ERR_INVALID_ARGUMENT, as documented there). A .npy handle
 * (tsr_dmatrix_npy_open()) must be closed before MPI_Finalize, as MPI requires of its files
 * (tsr_dmatrix_npy_close() after it frees the handle and returns ::TSR_ERR_MPI).
 * @return ::TSR_OK; ::TSR_ERR_MPI.
 */
TSR_API tsr_status tsr_grid_free(tsr_grid *grid);

/** Describes a grid (local, not collective). @return ::TSR_OK; ::TSR_ERR_NULL_POINTER. */
TSR_API tsr_status tsr_grid_info(const tsr_grid *grid, tsr_grid_props *info);

/* ---------------------------------------------------------------- agreement ----------- */

/** Longest message (bytes, terminator included) tsr_dist_agree() carries from a failing rank. */
#define TSR_DIST_AGREE_MSG 1024

/**
 * Agreement of every rank of `comm` on the outcome of a step, the rule every collective
 * Tessera call follows before it goes on (so a failure on one rank fails every rank instead
 * of leaving the others waiting): each rank passes its own `*code` (0: success, any other
 * value: the caller's failure code, e.g. a ::tsr_status or an exit code) and its message; when
 * any rank failed, every rank returns with `*code` and `msg` set to those of the
 * **lowest-numbered failing rank**, with " (rank r)" appended when some ranks succeeded (when
 * every rank failed the message is rank 0's as it is). When no rank failed, `*code` stays 0 and
 * `msg` is left alone. The message travels truncated to TSR_DIST_AGREE_MSG - 1 bytes and is
 * written into `msg` truncated to cap - 1 bytes (always terminated). When some rank failed, the
 * agreed failure also becomes every rank's last error: tsr_last_error() names this function and
 * gives the agreed message, and tsr_last_error_site() the raise site of the failing rank's last
 * error (its own tsr_last_error_site() at the call: pass the code of a Tessera call that just
 * failed there, and every rank learns where it was raised). Collective over `comm` (every rank
 * must call it, with any cap).
 * @param[in,out] code this rank's code in; the agreed code out.
 * @param[in,out] msg this rank's message in (read only when *code != 0; NULL then means "");
 *                the agreed message out when some rank failed (not written when msg is NULL).
 * @return ::TSR_OK (the agreement took place, whatever the codes); ::TSR_ERR_NULL_POINTER
 *         (code is NULL; no communication, so every rank must pass the same); ::TSR_ERR_MPI
 *         (comm is MPI_COMM_NULL, or MPI is not initialized or already finalized: found before
 *         any MPI call, the message names the function and the value; or MPI_Allreduce /
 *         MPI_Bcast failed: *code is unchanged).
 */
TSR_API tsr_status tsr_dist_agree(MPI_Comm comm, int *code, char *msg, size_t cap);

/* ---------------------------------------------------------------- index helpers ------- */

/**
 * Number of rows (or columns) of an `n`-long dimension cut in blocks of `nb` that process
 * `iproc` of `nprocs` owns when block 0 lives on process `isrcproc` (ScaLAPACK NUMROC).
 * Returns 0 for invalid arguments (n < 0, nb < 1, nprocs < 1, iproc out of range). Local,
 * cannot fail.
 */
TSR_API int64_t tsr_numroc(int64_t n, int64_t nb, int iproc, int isrcproc, int nprocs);

/** Process (row or column) that owns 0-based global index `ig` (ScaLAPACK INDXG2P). */
TSR_API int tsr_indxg2p(int64_t ig, int64_t nb, int isrcproc, int nprocs);

/** 0-based local index of 0-based global index `ig` on its owner (ScaLAPACK INDXG2L). */
TSR_API int64_t tsr_indxg2l(int64_t ig, int64_t nb, int nprocs);

/** 0-based global index of 0-based local index `il` on process `iproc` (ScaLAPACK
    INDXL2G). */
TSR_API int64_t tsr_indxl2g(int64_t il, int64_t nb, int iproc, int isrcproc, int nprocs);

/* ---------------------------------------------------------------- distributed matrix -- */

/** Opaque distributed matrix: 2D block-cyclic over a grid, one local block per rank. */
typedef struct tsr_dmatrix tsr_dmatrix;

/** Positions in the ScaLAPACK array descriptor (0-based C indices). */
enum {
  TSR_DESC_DTYPE = 0, /**< descriptor type, 1 = dense */
  TSR_DESC_CTXT = 1,  /**< BLACS context; -1 unless set with tsr_dmatrix_set_context() */
  TSR_DESC_M = 2,
  TSR_DESC_N = 3,
  TSR_DESC_MB = 4,
  TSR_DESC_NB = 5,
  TSR_DESC_RSRC = 6,
  TSR_DESC_CSRC = 7,
  TSR_DESC_LLD = 8,
  TSR_DESC_LEN = 9
};

/** Description of a distributed matrix, filled by tsr_dmatrix_info(). */
typedef struct tsr_dmatrix_props {
  int64_t m, n;           /**< global rows, columns */
  int64_t mb, nb;         /**< block rows, block columns */
  int64_t local_rows;     /**< numroc(m, mb, myrow, 0, P) */
  int64_t local_cols;     /**< numroc(n, nb, mycol, 0, Q) */
  int64_t lld;            /**< leading dimension of the local column-major block */
  tsr_dtype dtype;        /**< f32, f64, c64 or c128 */
  tsr_device device;      /**< where the local block lives */
  int desc[TSR_DESC_LEN]; /**< ScaLAPACK descriptor; sizes that exceed INT_MAX are stored as -1 */
  const tsr_grid *grid;
} tsr_dmatrix_props;

/** @deprecated The name of ::tsr_dmatrix_props in release 0.1; kept for source compatibility. */
typedef tsr_dmatrix_props tsr_dmatrix_info_t;

/**
 * A new M x N block-cyclic matrix with MB x NB blocks over `grid`, its local block
 * uninitialized, on `device` (each rank may pass its own device). Collective.
 * @param dtype ::TSR_F32, ::TSR_F64, ::TSR_C64 or ::TSR_C128 (complex: C99 layout, real and
 *        imaginary parts interleaved; the MPI datatypes MPI_C_FLOAT_COMPLEX and
 *        MPI_C_DOUBLE_COMPLEX carry them).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (m, n < 0, mb, nb < 1);
 *         ::TSR_ERR_DTYPE; ::TSR_ERR_INCONSISTENT (m, n, mb, nb or dtype differ between
 *         ranks); ::TSR_ERR_OVERFLOW; ::TSR_ERR_NO_DEVICE; ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_MPI.
 */
TSR_API tsr_status tsr_dmatrix_create(tsr_grid *grid, int64_t m, int64_t n, int64_t mb, int64_t nb,
                                      tsr_dtype dtype, tsr_device device, tsr_dmatrix **out);

/** Frees a distributed matrix (local; NULL accepted). @return ::TSR_OK. */
TSR_API tsr_status tsr_dmatrix_free(tsr_dmatrix *a);

/** Describes a distributed matrix (local). @return ::TSR_OK; ::TSR_ERR_NULL_POINTER. */
TSR_API tsr_status tsr_dmatrix_info(const tsr_dmatrix *a, tsr_dmatrix_props *info);

/**
 * The rank's local block as a 2-D array view of local_rows x local_cols with strides
 * (1, LLD) in elements (column-major), on the matrix's device, sharing the matrix's memory:
 * writes through it change the matrix. Returns a new reference (release it with
 * tsr_array_release(); it may outlive the matrix). Local.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_OUT_OF_MEMORY.
 */
TSR_API tsr_status tsr_dmatrix_local(const tsr_dmatrix *a, tsr_array **local);

/** Stores a BLACS context in the descriptor (desc[TSR_DESC_CTXT]); Tessera itself never uses
    it. Local. @return ::TSR_OK; ::TSR_ERR_NULL_POINTER. */
TSR_API tsr_status tsr_dmatrix_set_context(tsr_dmatrix *a, int ctxt);

/** Layout of a whole matrix in a root's host buffer. */
typedef enum tsr_layout {
  TSR_ROW_MAJOR = 0, /**< element (i, j) at buf[i * ld + j], ld >= max(1, N) */
  TSR_COL_MAJOR = 1  /**< element (i, j) at buf[i + j * ld], ld >= max(1, M) */
} tsr_layout;

/**
 * Distributes a whole M x N matrix held in host memory on rank `root` (elements of the
 * matrix's dtype) to the local blocks. Collective; only the root reads `host`.
 * @param ld leading dimension of `host` (see ::tsr_layout); 0 means the tight one.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (host NULL on the root when M*N > 0);
 *         ::TSR_ERR_INVALID_ARGUMENT (root out of range, bad layout, ld too small);
 *         ::TSR_ERR_INCONSISTENT; ::TSR_ERR_OVERFLOW (a local block over INT_MAX elements);
 *         ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_GPU; ::TSR_ERR_MPI.
 */
TSR_API tsr_status tsr_dmatrix_scatter(tsr_dmatrix *a, int root, const void *host,
                                       tsr_layout layout, int64_t ld);

/**
 * Collects the local blocks into a whole M x N matrix in host memory on rank `root`.
 * Collective; only the root writes `host`. Arguments and statuses as tsr_dmatrix_scatter().
 */
TSR_API tsr_status tsr_dmatrix_gather(const tsr_dmatrix *a, int root, void *host, tsr_layout layout,
                                      int64_t ld);

/**
 * Fills the matrix with uniform random numbers in [low, high) from Philox4x32-10: global
 * element (i, j) gets the value of index i * N + j, so the matrix equals
 * tsr_random_uniform() of an M x N array with the same seed, for every grid and block size.
 * A complex matrix (c64, c128) takes the values of indices 2 (i * N + j) (real part) and
 * 2 (i * N + j) + 1 (imaginary part), each in [low, high): the 2 M N values of the interleaved
 * real sequence, for every grid and block size. Collective (no communication beyond the agreement
 * on the outcome).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (low >= high or not
 *         finite); ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_GPU; ::TSR_ERR_MPI.
 */
TSR_API tsr_status tsr_dmatrix_fill_random(tsr_dmatrix *a, uint64_t seed, double low, double high);

/** Callback for tsr_dmatrix_fill_fn(): the value of global element (i, j), 0-based. */
typedef double (*tsr_dmatrix_element_fn)(int64_t i, int64_t j, void *ctx);

/** @deprecated The name of ::tsr_dmatrix_element_fn in release 0.1; kept for source
    compatibility. */
typedef tsr_dmatrix_element_fn tsr_dmatrix_fill_fn_t;

/**
 * Sets every element to fn(i, j, ctx) (rounded to the dtype; for a complex matrix the value
 * is the real part and the imaginary part is 0), i, j the 0-based global indices. Each rank calls
 * fn for its own elements only. Collective.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_GPU;
 *         ::TSR_ERR_MPI.
 */
TSR_API tsr_status tsr_dmatrix_fill_fn(tsr_dmatrix *a, tsr_dmatrix_element_fn fn, void *ctx);

/* ---------------------------------------------------------------- MPI-IO .npy ---------- */

/**
 * A `.npy` matrix file opened on every rank of a grid (tsr_dmatrix_npy_open()): one open of
 * the file per rank, its header parsed once (on rank 0), its blocks read by
 * tsr_dmatrix_npy_read(). A job that needs the shape before it allocates (tessera-gemm's
 * memory check) opens its inputs once this way instead of reading headers and then the file.
 */
typedef struct tsr_dmatrix_npy tsr_dmatrix_npy;

/**
 * Opens a 2-D `.npy` file (f32, f64, c64 `<c8` or c128 `<c16`; C or Fortran order; either byte
 * order; format 1.0, 2.0
 * or 3.0; see io.h) on every rank of `grid`. Every rank first checks, without opening it, that
 * it sees a regular file it may read (a path missing on one node, a FIFO or a device fails
 * every rank instead of blocking one), then opens it with one collective MPI_File_open; rank 0
 * reads and parses the header through that handle and broadcasts it (a bad file gives the same
 * error on every rank), and every rank checks that its copy holds all the data. Collective;
 * the ranks agree on the outcome (the lowest failing rank's message, with " (rank r)" when
 * some ranks succeeded). Close with tsr_dmatrix_npy_close(), before freeing the grid (the
 * handle keeps the grid's communicator).
 * @param[out] out the open file; NULL on failure.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (grid, path or out); ::TSR_ERR_IO (missing,
 *         unreadable, not a regular file, MPI_File_open failed); ::TSR_ERR_INVALID_ARGUMENT (a
 *         path longer than this MPI-IO can open); ::TSR_ERR_FORMAT (malformed or truncated
 *         header, unsupported version, the file shorter than its data on some rank);
 *         ::TSR_ERR_DTYPE (a well-formed file of another dtype: i4, i8, or one Tessera does not
 *         read such as `<c32`; the message gives it); ::TSR_ERR_SHAPE (not 2-D);
 *         ::TSR_ERR_OUT_OF_MEMORY;
 *         ::TSR_ERR_MPI.
 */
TSR_API tsr_status tsr_dmatrix_npy_open(tsr_grid *grid, const char *path, tsr_dmatrix_npy **out);

/**
 * The header of an open file (shape[0] x shape[1] elements of `dtype`, the same on every rank).
 * Local.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER.
 */
TSR_API tsr_status tsr_dmatrix_npy_header(const tsr_dmatrix_npy *file, tsr_npy_header *header);

/**
 * Reads the open file into a new MB x NB block-cyclic matrix on the file's grid: every rank
 * sets a file view built with MPI_Type_create_darray (block-cyclic MB, NB over the P x Q grid)
 * at the data offset and reads its own elements with MPI_File_read_all; no rank ever holds
 * more than its local block. May be called more than once (other block sizes, devices).
 * Collective; agreed.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (mb, nb < 1);
 *         ::TSR_ERR_INCONSISTENT (mb, nb differ between ranks); ::TSR_ERR_IO (read failed or
 *         short); ::TSR_ERR_OVERFLOW (a block size, a dimension or the local element count
 *         over INT_MAX, which MPI-IO's counts and file views cannot express; the message names
 *         the value and the limit);
 *         ::TSR_ERR_NO_DEVICE; ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_GPU; ::TSR_ERR_MPI.
 */
TSR_API tsr_status tsr_dmatrix_npy_read(tsr_dmatrix_npy *file, int64_t mb, int64_t nb,
                                        tsr_device device, tsr_dmatrix **out);

/**
 * Closes the file on every rank and frees the handle (NULL: no-op). Collective; agreed.
 * After MPI_Finalize (a handle must be closed before it, as MPI requires of its files) it
 * makes no MPI call: it frees the handle's memory and returns ::TSR_ERR_MPI with "MPI is
 * already finalized" in the message.
 * @return ::TSR_OK; ::TSR_ERR_IO (MPI_File_close failed); ::TSR_ERR_MPI (MPI_File_close's
 *         agreement failed, or MPI is already finalized).
 */
TSR_API tsr_status tsr_dmatrix_npy_close(tsr_dmatrix_npy *file);

/**
 * Reads a 2-D `.npy` file into a new MB x NB block-cyclic matrix on `grid`:
 * tsr_dmatrix_npy_open(), tsr_dmatrix_npy_read(), tsr_dmatrix_npy_close() (one open of the
 * file per rank, the header parsed once on rank 0). Collective. The arguments are checked
 * and agreed on before the file is touched: a NULL grid or out (locally), a NULL path, block
 * sizes and this rank's device fail without opening it.
 * @return the statuses of those three.
 */
TSR_API tsr_status tsr_dmatrix_read_npy(tsr_grid *grid, const char *path, int64_t mb, int64_t nb,
                                        tsr_device device, tsr_dmatrix **out);

/**
 * Writes the matrix as a little-endian `.npy` file (format 1.0, or 2.0 for huge headers), in
 * C order (`fortran_order` 0) or Fortran order (1), collectively with MPI-IO: rank 0 writes
 * the header, every rank writes its elements through a darray file view with
 * MPI_File_write_all, into a temporary file beside it, `<dir>/.<name>.tessera-tmp.<pid of rank
 * 0>.<n>` (`<name>` cut to its first 32 bytes, `<n>` counting the writes of the job); only when
 * every rank succeeded does rank 0 sync it and rename it to `path`. On failure the temporary
 * file is deleted and nothing is left.
 * Collective.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_IO (cannot create, write or rename,
 *         with the reason); ::TSR_ERR_OVERFLOW; ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_GPU;
 *         ::TSR_ERR_MPI.
 */
TSR_API tsr_status tsr_dmatrix_write_npy(const tsr_dmatrix *a, const char *path, int fortran_order);

/* ---------------------------------------------------------------- SUMMA GEMM ---------- */

/**
 * Per-rank measurements of one tsr_dist_gemm_ex() call.
 *
 * Bytes count the payload of the panel broadcasts (and of the redistribution of transposed
 * operands) as in a flat broadcast tree, whatever tree MPI really uses: as the root of a
 * broadcast to a communicator of s ranks, a rank adds the panel's bytes times (s - 1) to
 * bytes_sent; every other member adds the panel's bytes to bytes_received.
 */
typedef struct tsr_dist_stats {
  uint64_t bytes_sent;     /**< bytes this rank contributed as broadcast root */
  uint64_t bytes_received; /**< bytes this rank received */
  double comm_seconds;     /**< wall seconds waiting for communication to complete */
  double compute_seconds;  /**< wall seconds in the local tsr_gemm calls */
  double total_seconds;    /**< wall seconds of the whole call on this rank */
  int64_t panels;          /**< number of k panels (ceil(k / panel width)) */
  int gpu_aware_mpi;       /**< 1 when GPU panels went to MPI directly (GPU-aware MPI) */
  int algorithm; /**< the schedule that ran: ::TSR_DIST_GEMM_SUMMA or ::TSR_DIST_GEMM_2_5D */
  int replicas;  /**< c, the number of replicas (layers) used; 1 for SUMMA */
  uint64_t bytes_redistributed; /**< of bytes_received: received outside the panel broadcasts
                                     (2.5D's k-slicing of A and B and its reduction of C, and
                                     the redistribution of transposed operands) */
  /* Device work of the whole call on this rank (process-wide counters of the library, so
     work of other threads of the process during the call is included). Zero copies on the
     CPU. */
  uint64_t h2d_bytes;          /**< bytes copied host to device */
  uint64_t h2d_copies;         /**< host-to-device copy operations */
  uint64_t d2h_bytes;          /**< bytes copied device to host */
  uint64_t d2h_copies;         /**< device-to-host copy operations */
  uint64_t host_syncs;         /**< times the host waited for the device's queued work */
  uint64_t host_syncs_in_loop; /**< of host_syncs: inside the panel loop (0 when staging) */
  uint64_t copy_waits; /**< times the host waited for a staged panel copy before MPI used it */
  uint64_t gemm_calls; /**< local GEMM calls (launches on a GPU) */
  uint64_t gemm_vendor_calls; /**< of gemm_calls: run by the vendor BLAS (cuBLAS, hipBLAS) */
  int64_t panel_width;        /**< k columns a SUMMA step multiplies (the widest step) */
  int staging;        /**< 1 when GPU panels went through pinned host buffers (MPI not GPU-aware) */
  double gpu_seconds; /**< GPU: seconds of the compute stream from the first local GEMM to the
                           last (events), 0 on the CPU */
  uint64_t progress_calls; /**< CPU: times the local GEMM tested the broadcasts in flight from
                                inside (its progress hook, between units of work; 0 on a GPU and
                                with the vendor BLAS) */
  /* Which panel broadcast ran (::tsr_dist_bcast; ::TSR_DIST_BCAST_AUTO decides per broadcast,
     so one call may use several): the A and B panel broadcasts this rank took part in during
     the call, by the algorithm that moved them. All three are 0 when no panel was broadcast
     (a 1 x 1 grid, or k = 0). */
  uint64_t bcast_mpi;  /**< panel broadcasts by MPI_Ibcast (::TSR_DIST_BCAST_MPI) */
  uint64_t bcast_ring; /**< panel broadcasts by the pipelined ring (::TSR_DIST_BCAST_RING) */
  uint64_t bcast_tree; /**< panel broadcasts by the pipelined tree (::TSR_DIST_BCAST_TREE) */
} tsr_dist_stats;

/** Called on every rank after panel `panel` (1-based) of `panels` was multiplied. */
typedef void (*tsr_dist_progress_fn)(int64_t panel, int64_t panels, void *ctx);

/** Schedules of tsr_dist_gemm_ex(). */
typedef enum tsr_dist_algorithm {
  TSR_DIST_GEMM_SUMMA = 0, /**< 2D SUMMA on the matrices' own P x Q grid (the default) */
  TSR_DIST_GEMM_2_5D = 1,  /**< 2.5D with c replicas on a sqrt(P/c) x sqrt(P/c) x c grid */
  TSR_DIST_GEMM_AUTO = 2   /**< the one that moves the fewest words per rank (see
                                tsr_dist_gemm_choose()) */
} tsr_dist_algorithm;

/**
 * How the panels of the distributed schedules are broadcast along process rows and columns
 * (tsr_dist_gemm_options::bcast, `tessera-gemm --bcast`).
 *
 * ::TSR_DIST_BCAST_RING and ::TSR_DIST_BCAST_TREE are Tessera's own pipelined broadcasts on
 * point-to-point messages (src/mpi/bcast.c): the panel is cut into segments that are forwarded
 * as soon as they arrive, along a ring (rank root+1 receives from the root, root+2 from root+1,
 * ...) or a binary tree rooted at the root, as HPL's "long" broadcasts and ScaLAPACK's
 * topologies do. A ring of s ranks moves a panel of N bytes in about (s - 2 + N / S)
 * segment times (S the segment size) with each rank sending the panel once; a flat tree costs
 * the root (s - 1) N. They pass only pointers to MPI, so a GPU-aware MPI moves device panels
 * directly.
 *
 * ::TSR_DIST_BCAST_AUTO (0, the default of zero-initialized options) chooses per broadcast
 * from the panel's bytes N and the communicator's size s: MPI_Ibcast when s <= 2, N < 64 KiB
 * or N is below the environment variable TSR_BCAST_MPI_BELOW (bytes, default 1 MiB: on a
 * shared-memory node of 4 ranks the pipelined forms lost to Open MPI's MPI_Ibcast below it);
 * else the ring when N >= (s - 2 - log2 s) (S + alpha beta), S the segment size, else the
 * tree (the ring then costs N / beta + (s - 2) (alpha + S / beta), the tree about
 * 2 N / beta + log2(s) (alpha + S / beta)). Segments: S = sqrt(N alpha beta / (s - 2)) in
 * [16 KiB, 1 MiB]. alpha beta, the fabric's latency times its bandwidth, is taken as 32 KiB
 * (1.3 us at 25 GB/s), or from the environment variable TSR_BCAST_ALPHA_BETA (bytes).
 * Where the communicator is oversubscribed (some node holds more of its ranks than CPUs,
 * e.g. `mpirun --oversubscribe`), AUTO never takes the ring: a ring advances only while all of
 * its ranks run, and 4 ranks on 2 cores lost up to 2x with it (docs/scaling.md); it takes the
 * tree where the ring would serve, in segments of 1 MiB (each hop waits for its forwarder to
 * be scheduled, so fewer, larger segments). The ranks agree on that fact once per
 * communicator (one MPI_Allreduce, cached; a grid's communicators at tsr_grid_create), and the
 * environment variable TSR_BCAST_OVERSUBSCRIBED (auto, 0, 1; formerly TSR_BCAST_SHARED_CORES,
 * a deprecated alias read when it is unset) can force it.
 *
 * SUMMA (and the layers of 2.5D) broadcast every A and B panel this way. With GPU panels in
 * device memory (a GPU-aware MPI) AUTO never picks MPI_Ibcast, which Open MPI's GPU support
 * does not cover: the tree serves for s <= 2 or N < 64 KiB, the ring or the tree by the rule
 * above otherwise (TSR_BCAST_MPI_BELOW applies to host buffers only; oversubscribed ranks
 * take the tree).
 */
typedef enum tsr_dist_bcast {
  TSR_DIST_BCAST_AUTO = 0, /**< chosen per broadcast by size and communicator (see above) */
  TSR_DIST_BCAST_MPI = 1,  /**< MPI_Ibcast: the MPI library's own algorithm */
  TSR_DIST_BCAST_RING = 2, /**< pipelined ring of segments */
  TSR_DIST_BCAST_TREE = 3  /**< pipelined binary tree of segments */
} tsr_dist_bcast;

/** Options of tsr_dist_gemm_ex(); zero-initialize for the defaults. */
typedef struct tsr_dist_gemm_options {
  tsr_gemm_path path;            /**< local GEMM implementation (::TSR_GEMM_AUTO default) */
  tsr_dist_progress_fn progress; /**< NULL: no progress reports */
  void *progress_ctx;
  tsr_dist_algorithm algorithm; /**< ::TSR_DIST_GEMM_SUMMA (default), _2_5D or _AUTO */
  int replicas;                 /**< c for ::TSR_DIST_GEMM_2_5D: P / c must be a perfect square;
                                     0 lets the library choose (as _AUTO does, among c > 1) */
  int64_t memory_per_rank;      /**< bytes per rank that 2.5D may allocate beyond A, B and C
                                     (replicas and buffers) when the library chooses c; 0: no
                                     limit */
  int64_t panel_width;  /**< least k columns of a SUMMA step on a square process grid: blocks
                             of one owner are multiplied together (rounded down to a multiple
                             of the block size); 0: 1024 on GPUs, one block on the CPU. A 1 x 1
                             grid always runs one local GEMM. */
  tsr_dist_bcast bcast; /**< panel broadcast (::TSR_DIST_BCAST_AUTO default), see
                             ::tsr_dist_bcast */
} tsr_dist_gemm_options;

/**
 * C = alpha * op(A) * op(B) + beta * C on distributed matrices with SUMMA (van de Geijn &
 * Watts, "SUMMA: Scalable Universal Matrix Multiplication Algorithm", Concurrency: Practice
 * and Experience 9(4), 1997). op(A) is m x k, op(B) is k x n, C is m x n. op(X) is X
 * (::TSR_NO_TRANS), X^T (::TSR_TRANS) or the conjugate transpose X^H (::TSR_CONJ_TRANS; for the
 * real dtypes the same as ::TSR_TRANS, as BLAS defines). The dtypes are f32, f64, c64 and c128;
 * complex scalars: tsr_dist_gemm_complex().
 *
 * The panel width is the block size along k. For each k panel, the process column owning it
 * broadcasts its A panel along process rows and the process row owning it broadcasts its B
 * panel along process columns (options->bcast on the row and column communicators); the
 * broadcasts of the next panels are in flight while panel k is multiplied locally with
 * tsr_gemm() on each rank's device (look-ahead 2 on GPUs, three panel slots; 1 on the CPU,
 * where multiply and broadcasts share the cores; the environment variable TSR_SUMMA_LOOKAHEAD
 * takes auto or 1 to 3). On a GPU panel k's GEMM is queued before panel k-1's
 * slot is reused for panel k+2, so the device keeps a GEMM queued while the host forwards
 * panels. On the CPU the broadcasts in flight must be tested while the local multiply runs,
 * because MPI libraries such as Open MPI progress non-blocking messages only inside MPI calls:
 * by default each step is one local GEMM that tests them from inside, between its units of
 * work (about every millisecond; tsr_dist_stats::progress_calls counts it). Where the local
 * multiply has no such hook (`TSR_GEMM=vendor`), it runs in column chunks of at least 2e9
 * flops (multiples of 256 columns) with the broadcasts tested between them; the environment
 * variable TSR_SUMMA_CHUNK_FLOPS sets that least chunk and chunks the native path too (each
 * chunk repacks the A panel). beta is applied with the first panel (beta = 0 never reads C).
 * Transposed operands (TSR_TRANS, TSR_CONJ_TRANS) are first redistributed into their transpose
 * (conjugated on the way for TSR_CONJ_TRANS on complex matrices) by
 * point-to-point messages (op(A) then has blocks NB_A x MB_A; GPU matrices stay on the device,
 * staged as the panels are), then multiplied as above: correct for every combination, at the
 * cost of one extra copy of the transposed operand.
 *
 * Steps: a 1 x 1 grid multiplies its local blocks with one GEMM. On a GPU on a square grid a
 * step aggregates several blocks of one owner (options->panel_width, default 1024 columns).
 *
 * GPU local blocks: the panels travel device-to-device when MPI is GPU-aware
 * (tsr_dist_gpu_aware()), else through pinned host buffers: a broadcast's root copies only
 * the panel it sends, the others copy the panel they received to the device, on copy streams
 * ordered by events, so the host never waits for the GPU's GEMMs inside the panel loop. A
 * communicator of one rank moves nothing (a 1 x 1 grid copies no byte). Buffers, streams and
 * events are kept with the grid across calls (freed by tsr_grid_free()). `stats` reports the
 * copies, host synchronizations and GEMM calls of the call.
 *
 * Requirements: A, B, C on the same grid and of the same dtype; block sizes compatible:
 * op(A)'s row block = C's MB, op(B)'s column block = C's NB, op(A)'s column block = op(B)'s
 * row block (the panel width). All matrices created with the same square block size satisfy
 * this for every transpose combination.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_SHAPE (sizes disagree, with the sizes);
 *         ::TSR_ERR_INVALID_ARGUMENT (different grids, incompatible block sizes, bad transpose
 *         value); ::TSR_ERR_DTYPE; ::TSR_ERR_DEVICE_MISMATCH (A, B, C of one rank on different
 *         devices); ::TSR_ERR_OVERFLOW; ::TSR_ERR_OUT_OF_MEMORY; ::TSR_ERR_GPU; ::TSR_ERR_MPI.
 */
TSR_API tsr_status tsr_dist_gemm(tsr_trans transa, tsr_trans transb, double alpha,
                                 const tsr_dmatrix *a, const tsr_dmatrix *b, double beta,
                                 tsr_dmatrix *c);

/**
 * As tsr_dist_gemm(), with options (may be NULL) and this rank's measurements written to
 * `stats` (may be NULL). Same statuses, and ::TSR_ERR_INVALID_ARGUMENT for a bad
 * `options->algorithm` or `options->bcast`, negative `replicas` or `memory_per_rank`, or replicas c
 * that do not divide P into c layers of sqrt(P/c) x sqrt(P/c) ranks.
 *
 * With `options->algorithm` = ::TSR_DIST_GEMM_2_5D and c > 1 replicas this is the 2.5D
 * algorithm (E. Solomonik and J. Demmel, "Communication-optimal parallel 2.5D matrix
 * multiplication and LU factorization algorithms", Euro-Par 2011): the P ranks of the grid
 * form c layers of q x q ranks (q = sqrt(P / c); layer l holds grid ranks l q^2 ... (l+1) q^2 - 1,
 * ranked row-major). Layer l receives the k panels j with j mod c = l of op(A) and op(B)
 * (point-to-point redistribution from the grid's block-cyclic layout), multiplies them with
 * SUMMA on its q x q grid, and the c partial products are summed into C by its owners
 * (C = alpha * sum + beta * C). Per rank this moves (mk + kn) / sqrt(cP) words in the panel
 * broadcasts, sqrt(c) times fewer than SUMMA on a square grid, plus (mk + kn + c mn) / P for
 * the slicing and the reduction, and holds c mn / P words of partial C. c = P (q = 1) is the
 * 1D split of k, best when m, n << k. Every transpose combination is handled in the slicing,
 * without the extra transposed copy SUMMA makes. GPU matrices stay on the device: the slices,
 * the layers' SUMMA and the reduction pack and unpack their messages on the GPU and hand them
 * to MPI in device memory when MPI is GPU-aware, else through pinned host buffers (only the
 * bytes that cross to other ranks are copied, as for SUMMA's panels; `stats` counts them).
 */
TSR_API tsr_status tsr_dist_gemm_ex(tsr_trans transa, tsr_trans transb, double alpha,
                                    const tsr_dmatrix *a, const tsr_dmatrix *b, double beta,
                                    tsr_dmatrix *c, const tsr_dist_gemm_options *options,
                                    tsr_dist_stats *stats);

/**
 * C = alpha * op(A) * op(B) + beta * C with complex scalars alpha and beta (ZGEMM's and
 * PZGEMM's form): otherwise tsr_dist_gemm_ex() exactly (options and stats may be NULL; the same
 * schedules, SUMMA or 2.5D, the same checks and statuses, collective, the ranks agree on the
 * outcome). For c64 and c128 matrices op(X) may be X, X^T (::TSR_TRANS) or the conjugate
 * transpose X^H (::TSR_CONJ_TRANS: the operand is conjugated while it is redistributed into its
 * transpose, no extra pass); the local products run as complex GEMMs (tsr_gemm_complex() on
 * each rank's device), 8 real flops per complex multiply-add. alpha or beta 0 means both parts
 * 0; beta = 0 never reads C (NaN there does not propagate).
 *
 * For the real dtypes (f32, f64) the scalars must be real (imaginary parts 0): the call is then
 * tsr_dist_gemm_ex() with alpha.re and beta.re, and ::TSR_CONJ_TRANS is ::TSR_TRANS.
 * @return as tsr_dist_gemm_ex(); ::TSR_ERR_INVALID_ARGUMENT also when alpha or beta has an
 *         imaginary part and the matrices are real (the message gives both scalars and the
 *         dtype); ::TSR_ERR_UNSUPPORTED where a device lacks the complex GEMM or the complex
 *         conjugate (tsr_conj(), used by the exchange of GPU matrices), with the message.
 */
TSR_API tsr_status tsr_dist_gemm_complex(tsr_trans transa, tsr_trans transb, tsr_complex128 alpha,
                                         const tsr_dmatrix *a, const tsr_dmatrix *b,
                                         tsr_complex128 beta, tsr_dmatrix *c,
                                         const tsr_dist_gemm_options *options,
                                         tsr_dist_stats *stats);

/** Verdict of tsr_dist_gemm_verify(). */
typedef enum tsr_verify_verdict {
  TSR_VERIFY_PASSED = 0,     /**< every row of C checked and within the tolerance */
  TSR_VERIFY_FAILED = 1,     /**< a checked row is beyond the tolerance, or non-finite in a row
                                  whose product cannot overflow: C is not the product */
  TSR_VERIFY_UNVERIFIED = 2, /**< the inputs hold NaN/Inf (nonfinite_inputs > 0): nothing is
                                  checked (IEEE arithmetic propagates them; the product is as
                                  meaningful as the data) */
  TSR_VERIFY_PARTIAL = 3     /**< finite inputs, rows_unverified rows may overflow the dtype
                                  (and hold Inf/NaN legitimately); every other row passed */
} tsr_verify_verdict;

/** What tsr_dist_gemm_verify() found; the same on every rank. */
typedef struct tsr_dist_verify_result {
  tsr_verify_verdict verdict;
  double residual;  /**< max over the checked rows of |y_i - w_i| / s_i (0 when none) */
  double tolerance; /**< the bound the residual was compared with (see tsr_dist_gemm_verify()) */
  int64_t nonfinite_inputs; /**< NaN/Inf elements in A and B (and C0 when beta != 0); for
                                 complex matrices their NaN/Inf real and imaginary parts */
  int64_t rows_checked;     /**< rows of C whose residual was computed */
  int64_t rows_unverified;  /**< rows left out because their product may overflow */
} tsr_dist_verify_result;

/**
 * The schedule tsr_dist_gemm_ex() would run for these operands and options, without running
 * it. Candidates: SUMMA on the matrices' P x Q grid, and 2.5D for every c > 1 with
 * P / c a perfect square, c at most the number of k panels, and (when
 * `options->memory_per_rank` > 0) its extra memory within that limit. Each is scored by the
 * words a rank receives, (mk / P_r)(1 - 1/Q) + (kn / Q)(1 - 1/P_r) for SUMMA on P_r x Q, and
 * (mk + kn)(1 - 1/q) / (q c) + (mk + kn + c mn) / P for 2.5D, plus 2000 words for each
 * message round (SUMMA: 2 per panel; 2.5D: 2 per panel of a layer, plus 2 + c for the
 * slicing and the reduction); the lowest wins. ::TSR_DIST_GEMM_SUMMA in the options
 * always gives SUMMA; ::TSR_DIST_GEMM_2_5D with replicas > 0 checks and gives those
 * replicas; with replicas 0 it chooses among c > 1 (SUMMA when none is valid).
 * Collective (the inputs are checked and agreed on like tsr_dist_gemm_ex()).
 * @param[out] algorithm ::TSR_DIST_GEMM_SUMMA or ::TSR_DIST_GEMM_2_5D.
 * @param[out] replicas c (1 for SUMMA).
 * @return ::TSR_OK; statuses as tsr_dist_gemm_ex().
 */
TSR_API tsr_status tsr_dist_gemm_choose(tsr_trans transa, tsr_trans transb, const tsr_dmatrix *a,
                                        const tsr_dmatrix *b, const tsr_dmatrix *c,
                                        const tsr_dist_gemm_options *options,
                                        tsr_dist_algorithm *algorithm, int *replicas);

/**
 * Bytes per rank that tsr_dist_gemm_ex() with ::TSR_DIST_GEMM_2_5D and `replicas` c allocates
 * beyond the local blocks of A, B and C, for C m x n, inner dimension k in panels of `kb`, on
 * `ranks` ranks, elements of `dtype`: the k slices of op(A) and op(B), the partial C, the
 * layer's SUMMA panel buffers and the exchange buffers (the same estimate
 * tsr_dist_gemm_choose() compares with `options->memory_per_rank`). An estimate of the
 * average rank (local sizes taken as totals over P), without MPI's own buffers. Local, not
 * collective; allocates nothing. c = 1 (SUMMA) gives 0.
 * @param[out] bytes the estimate in bytes (INT64_MAX when it does not fit).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (`bytes`); ::TSR_ERR_DTYPE;
 *         ::TSR_ERR_INVALID_ARGUMENT (negative m, n, k; kb or ranks < 1; replicas c < 1 or
 *         c not dividing `ranks` into c layers of q x q ranks, with the values).
 */
TSR_API tsr_status tsr_dist_gemm_memory_25d(int64_t m, int64_t n, int64_t k, int64_t kb, int ranks,
                                            int replicas, tsr_dtype dtype, int64_t *bytes);

/**
 * Freivalds' check (R. Freivalds, "Probabilistic machines can use less running time", IFIP
 * 1977) of C = alpha * op(A) * op(B) + beta * C0, in O(mn + mk + kn) work: with x a Philox
 * random vector (uniform in [-1, 1), from `seed`), y = C x and
 * w = alpha * op(A) (op(B) x) + beta * C0 x are computed in float64 with distributed
 * matrix-vector products and compared row by row against the rounding-error scale
 * s = |alpha| |op(A)| (|op(B)| |x|) + |beta| |C0| |x|:
 *   residual = max_i |y_i - w_i| / (s_i + u / tolerance)  (0 / 0 reads as 0).
 * The tolerance is (k + 3) * eps(C's dtype) + 2 * (k + n + 3) * eps(f64), a rigorous bound of
 * the GEMM and matrix-vector rounding errors (residuals are typically far below); a wrong
 * element of C shows up as a residual of the order of its error over its row's scale.
 * u covers results that underflow (subnormal, or flushed to zero under FTZ/DAZ), which the
 * relative bound does not: u = ((k max(1,|alpha|) + 3) lam + ((n + k) max(1,|alpha|) + 3)
 * DBL_MIN) * sum_j |x_j|, lam the smallest normal number of C's dtype (FLT_MIN, DBL_MIN): an
 * operation with a result below lam loses at most lam. Products whose rows are all far below
 * k * lam (f32 alpha = 1e-40) therefore pass when right and fail only when wrong by more than u.
 *
 * IEEE special values (the rule): NaN/Inf elements of A, B (and C0 when beta != 0) are
 * counted; when there are any, nothing is verified (::TSR_VERIFY_UNVERIFIED). With finite
 * inputs, a row i whose magnitude bound t_i = |alpha| |op(A)| (|op(B)| 1) + |beta| |C0| 1 reaches
 * the largest finite value of the dtype (divided by 1 + tolerance) may overflow legitimately: it
 * is left out and counted (::TSR_VERIFY_PARTIAL when every other row passes). Any other row
 * holding NaN/Inf fails the check, as does a residual over the tolerance.
 *
 * `c0` is the C before the product (beta * C0 added); it may be NULL when beta == 0 and is then
 * never read. Collective; the result is the same on every rank.
 * @return ::TSR_OK (the verdict is in `result`, a failed check is not an error status);
 *         ::TSR_ERR_NULL_POINTER (a, b, c, result, or c0 with beta != 0); statuses as
 *         tsr_dist_gemm() (shapes, grids, dtypes of A, B, C, and of C0 against C, checked alike).
 */
TSR_API tsr_status tsr_dist_gemm_verify(tsr_trans transa, tsr_trans transb, double alpha,
                                        const tsr_dmatrix *a, const tsr_dmatrix *b, double beta,
                                        const tsr_dmatrix *c0, const tsr_dmatrix *c, uint64_t seed,
                                        tsr_dist_verify_result *result);

/**
 * tsr_dist_gemm_verify() with complex scalars, for the products of tsr_dist_gemm_complex().
 * For complex matrices (c64, c128) x is a complex random vector (real and imaginary parts
 * uniform in [-1, 1), Philox from `seed`), the products are computed in float64 complex
 * (op(X) = X^H conjugates), magnitudes are moduli (|z| = sqrt(re^2 + im^2)) and the tolerance
 * is that of the real check with k replaced by 2k (each complex multiply-add is two real ones
 * per part) plus the moduli's rounding; a missing or extra conjugation shows up as a residual
 * of order 1. For real matrices the scalars must be real (as tsr_dist_gemm_complex()) and the
 * call is tsr_dist_gemm_verify(). `c0` may be NULL when beta is 0 (both parts).
 * @return as tsr_dist_gemm_verify(); ::TSR_ERR_INVALID_ARGUMENT for complex scalars with real
 *         matrices.
 */
TSR_API tsr_status tsr_dist_gemm_verify_complex(tsr_trans transa, tsr_trans transb,
                                                tsr_complex128 alpha, const tsr_dmatrix *a,
                                                const tsr_dmatrix *b, tsr_complex128 beta,
                                                const tsr_dmatrix *c0, const tsr_dmatrix *c,
                                                uint64_t seed, tsr_dist_verify_result *result);

/* ---------------------------------------------------------------- threads per rank ---- */

/** A rank's CPU threads and its binding, filled by tsr_dist_binding_get(). Counts are logical
 *  CPUs (hardware threads). */
typedef struct tsr_dist_binding {
  int node_cores;    /**< CPUs of this rank's node the job may use: online CPUs, or the cgroup's
                          cpuset when smaller */
  int mask_cores;    /**< CPUs in this rank's affinity mask (sched_getaffinity) */
  int ranks_on_node; /**< ranks of the communicator on this node (MPI_COMM_TYPE_SHARED) */
  int per_rank;      /**< node_cores / ranks_on_node (at least 1): the rank's share */
  int threads;       /**< the threads to run: OMP_NUM_THREADS's (first) value when set, else
                          min(mask_cores, per_rank); never more than the mask's CPUs unless
                          OMP_NUM_THREADS asks */
  int threads_set;   /**< 1 when OMP_NUM_THREADS gave `threads` */
  int short_mask;    /**< 1 when mask_cores < per_rank: the launcher bound the rank to fewer
                          CPUs than its share (Open MPI binds each rank to one core when
                          np <= 2), so cores of the node stay idle */
  char advice[320];  /**< "" or one sentence: with short_mask, the mask, the share and the
                          bindings that fix it ('mpirun --bind-to none' or
                          'mpirun --map-by ppr:R:node:PE=C'); else when OMP_NUM_THREADS exceeds
                          the mask's CPUs, that the threads share cores */
} tsr_dist_binding;

/**
 * Counts this rank's node CPUs, affinity-mask CPUs and fellow ranks on the node in `comm`, and
 * says how many threads the rank should run and whether its binding leaves cores idle (see
 * ::tsr_dist_binding). Sets nothing: the caller applies `threads` (e.g. omp_set_num_threads)
 * and reports `advice`. Collective over `comm` (it splits it by node).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER (out); ::TSR_ERR_INVALID_ARGUMENT (comm is
 *         MPI_COMM_NULL, or MPI is not initialized or already finalized: found before any MPI
 *         call); ::TSR_ERR_MPI (the node split failed).
 */
TSR_API tsr_status tsr_dist_binding_get(MPI_Comm comm, tsr_dist_binding *out);

/**
 * 1 when the MPI library can take device pointers of this build's GPUs, asked at run time
 * through Open MPI's extensions: MPIX_Query_cuda_support() in CUDA builds,
 * MPIX_Query_rocm_support() in HIP builds; 0 in CPU-only builds and with MPI libraries
 * without these extensions. Local, cannot fail.
 */
TSR_API int tsr_dist_gpu_aware(void);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_DIST_H */
