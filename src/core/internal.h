/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal interfaces shared by the core and the backends. Nothing here is exported.
 *
 * Flow of a call: the public function in src/core validates its arguments once (NULL, shapes,
 * dtypes, devices, overflow), resolves broadcasting into strides, allocates the result, and
 * dispatches through the ops table of the array's device (struct tsr__backend_ops). Backends
 * trust what they are given.
 */
#ifndef TSR_INTERNAL_H
#define TSR_INTERNAL_H

/* The GPU backend includes this file from CUDA/HIP C++, where C11 atomics do not exist:
   the array structs below are C only (backends see tsr__view). */
#ifndef __cplusplus
#include <stdatomic.h>
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* FILE: tsr__open_input_file */

/* Not tessera.h: dist.h would pull mpi.h into every file, CUDA ones included. */
#include "tessera/array.h"
#include "tessera/config.h"
#include "tessera/device.h"
#include "tessera/io.h"
#include "tessera/linalg.h"
#include "tessera/ops.h"
#include "tessera/status.h"

#include "core/dropin.h" /* what the drop-ins may call */
#include "core/env.h"    /* the one environment reader */

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- errors -------------- */

/*
 * The one rule for errors: a message names the public function the user called, never an
 * internal one, then the offending values: `tsr_matmul: inner dimensions differ: a is 3x4,
 * b is 5x2`.
 *
 * The mechanism: every public function that can fail starts with TSR_API_ENTRY(), which records
 * its name as this thread's API context for the duration of the call. tsr__set_error (and so
 * TSR_CHECK, TSR_CHECK_GOTO) writes the context's name whenever one is set, whatever `fn` it was
 * given; only outside any public call (no context) is `fn` used. Consequences:
 *  - internal helpers and backends just use TSR_CHECK (their __func__ is replaced by the
 *    context) or pass __func__; they never hard-code a public name and never take one as a
 *    parameter (only the message primitives tsr__set_error, tsr__mpi_error, tsr__gpu_error
 *    have a name parameter; docs/conventions.md, "Naming");
 *  - a public function called by another one (tsr_matmul -> tsr_gemm_ex, tsr_dist_gemm ->
 *    tsr_gemm) reports under the outer name: the context is set by the outermost entry only;
 *  - code that calls back into user code (tsr_dmatrix_fill_fn's element function, the SUMMA
 *    progress function) suspends the context
 *    around the callback with TSR_API_SUSPEND()/TSR_API_RESUME(), so the user's own calls are
 *    named after themselves.
 * The marker uses the cleanup attribute (GCC, Clang and the host compilers of nvcc/hipcc) to
 * restore the outer context on every return path.
 */
/*
 * The raise site. Each message primitive is a macro that passes where it is called
 * (__FILE__, __LINE__, __func__) to its `_at` function, which records the site beside the
 * message in the thread's error state (tsr__thread_message): call sites stay as they are, and
 * tsr_last_error_site() reads it back. The file is kept relative to src/ ("core/npy.c"). Under
 * TSR_ERROR_TRACE=1 every recorded error also prints one line to stderr:
 *   tessera: <message> [raised at core/npy.c:257 in tsr__npy_unsupported]
 * The agreement (tsr__dist_agree, mpi/grid.c) carries the failing rank's site to every rank.
 */
tsr_status tsr__set_error_at(tsr_status code, const char *fn, const char *file, int line,
                             const char *func, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
/* tsr__set_error(code, fn, fmt, ...): the message primitive, recording its call site. */
#define tsr__set_error(code, fn, ...)                                                              \
  tsr__set_error_at((code), (fn), __FILE__, __LINE__, __func__, __VA_ARGS__)

/* The message of the last error without its "fn: " prefix (for restating a backend's reason
   inside a message of one's own). */
const char *tsr__last_error_detail(void);

/* The site of an error, copied (a site adopted from another rank has no string literal): the
   file relative to src/, the line (0: no site, e.g. an error recorded by tsr_set_error) and the
   function; truncated to fit. The agreement broadcasts it as it is (no pointers). */
#define TSR__SITE_FILE 64
#define TSR__SITE_FUNC 64
typedef struct tsr__error_site {
  char file[TSR__SITE_FILE];
  char func[TSR__SITE_FUNC];
  int line;
} tsr__error_site;
/* The site of this thread's last error (all empty, line 0, when it has none). */
void tsr__last_error_site_get(tsr__error_site *out);

/* A thread's last error message (status.c): text is "fn: detail", the detail from text[prefix],
   and where it was raised. It lives in the thread's block of per-thread state (thread_state.c,
   with its counters), not in a thread-local array: the library's thread-locals stay small enough
   for static TLS under dlopen (see tsr__thread_state in thread_state.c). */
typedef struct tsr__thread_message {
  char text[1024];
  size_t prefix;
  tsr__error_site site; /* where text was raised (site.line 0: nowhere known) */
} tsr__thread_message;
typedef struct tsr__thread_state tsr__thread_state;
/* The calling thread's message; with create, taking the thread's block if it has none yet.
   NULL when it has none (create false), or none could be had (no memory or no thread key). */
tsr__thread_message *tsr__thread_message_get(bool create);

/* The API context: tsr__api_enter sets it to `fn` when none is set and returns the previous
   one; tsr__api_leave restores *prev. Use through TSR_API_ENTRY(). */
const char *tsr__api_enter(const char *fn);
void tsr__api_leave(const char *const *prev);
/* Clears the context and returns it / restores it: around callbacks into user code. */
const char *tsr__api_suspend(void);
void tsr__api_resume(const char *saved);

/* First statement of every public function that can fail (see "the one rule" above). */
#define TSR_API_ENTRY() TSR_API_ENTRY_AS(__func__)
/* The same for a program of the project that calls internal helpers outside any public call
   (tessera-tune): their messages name the program. Use it in a scope around those calls only:
   public calls made inside it report under the program's name too. */
#define TSR_API_ENTRY_AS(name)                                                                     \
  const char *const tsr__api_prev_ __attribute__((cleanup(tsr__api_leave), unused)) =              \
      tsr__api_enter(name)
#define TSR_API_SUSPEND() const char *const tsr__api_saved_ = tsr__api_suspend()
#define TSR_API_RESUME() tsr__api_resume(tsr__api_saved_)

/* Fails the enclosing function (which must return tsr_status) with a message. Stays on in
   release builds. The message names the API context (else __func__); the raise site is the
   line of the TSR_CHECK. */
#define TSR_CHECK(cond, code, ...)                                                                 \
  do {                                                                                             \
    if (!(cond)) return tsr__set_error((code), __func__, __VA_ARGS__);                             \
  } while (0)

/* Propagates a non-OK status (the message and raise site stay those of the callee's error). */
#define TSR_CALL(expr)                                                                             \
  do {                                                                                             \
    tsr_status tsr__st_ = (expr);                                                                  \
    if (tsr__st_ != TSR_OK) return tsr__st_;                                                       \
  } while (0)

/* Variants for functions with cleanup: store the status in `st` and jump to `label`. */
#define TSR_CHECK_GOTO(st, label, cond, code, ...)                                                 \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      (st) = tsr__set_error((code), __func__, __VA_ARGS__);                                        \
      goto label;                                                                                  \
    }                                                                                              \
  } while (0)
#define TSR_CALL_GOTO(st, label, expr)                                                             \
  do {                                                                                             \
    (st) = (expr);                                                                                 \
    if ((st) != TSR_OK) goto label;                                                                \
  } while (0)

/* ---------------------------------------------------------------- dtypes & sizes ------ */

/* Generated from the rows of TSR_DTYPE_MAP (tessera/dtypes.h) in src/core/dtype.c. Element
   size in bytes, 0 for an invalid dtype. */
size_t tsr__dtype_size(tsr_dtype dtype);
bool tsr__dtype_valid(tsr_dtype dtype);
bool tsr__dtype_is_float(tsr_dtype dtype);
/* TSR_C64 and TSR_C128 (the rows with is_complex). */
bool tsr__dtype_is_complex(tsr_dtype dtype);
/* The real dtype of a complex dtype's parts (f32 for c64, f64 for c128); a real dtype itself. */
tsr_dtype tsr__dtype_part(tsr_dtype dtype);
/* TSR_OK when an array of dtype `from` may be converted to `to` (tsr_astype, tsr_assign);
   complex to real is TSR_ERR_DTYPE naming both and pointing to tsr_real/tsr_imag/tsr_abs. */
tsr_status tsr__check_convert(tsr_dtype to, tsr_dtype from);
/* The .npy type string without its byte order ("f4"), NULL for an invalid dtype. */
const char *tsr__dtype_npy(tsr_dtype dtype);
/* The dtype whose .npy type string (no byte order) is t[0..n); false when there is none. */
bool tsr__dtype_from_npy(const char *t, size_t n, tsr_dtype *dtype);

/* Overflow-checked arithmetic: false on overflow. */
bool tsr__mul_overflow_i64(int64_t a, int64_t b, int64_t *out);
bool tsr__add_overflow_i64(int64_t a, int64_t b, int64_t *out);

/* Checks ndim/shape (ndim 0..8, sizes >= 0, product and bytes fit int64 and size_t) and
   returns the element count. Messages name the API context. */
tsr_status tsr__shape_check(int ndim, const int64_t *shape, tsr_dtype dtype, int64_t *size);

/* 64-byte-aligned host memory; bytes may be 0 (a valid unique pointer is returned).
   Returns TSR_ERR_OUT_OF_MEMORY with the byte count in the message. */
tsr_status tsr__host_alloc(size_t bytes, void **ptr);
void tsr__host_free(void *ptr);
/* The build's variant below them (libuv style: one file per variant, chosen by core.cmake,
   no #if in the callers): alloc_system.c (aligned_alloc/free) or, in the SimGrid model
   build (-DTSR_SMPI_MODEL), alloc_smpi.c. `bytes` is a multiple of `align`, never 0; the
   block returns NULL when out of memory; release takes what block returned. */
void *tsr__host_block(size_t align, size_t bytes);
void tsr__host_block_release(void *ptr);

/* ---------------------------------------------------------------- files (fileio.c) ---- */

/* .npy data is little-endian on disk; these convert on big-endian hosts and read '>' files. */
static inline int tsr__host_big_endian(void) {
  const union {
    uint16_t u;
    unsigned char c[2];
  } one = {1};
  return one.c[0] == 0;
}
void tsr__byteswap(void *data, int64_t n, size_t itemsize);

/* Bytes of the final file name kept in a temporary name (DIR/.NAME.tessera-tmp.PID.SEQ). */
#define TSR__TEMP_NAME_KEEP 32

/* The temporary name for `path` (same directory); TSR_ERR_INVALID_ARGUMENT when path is empty,
   ends in '/', or it or the temporary name exceeds NAME_MAX/PATH_MAX. Local. */
tsr_status tsr__temp_path(const char *path, long pid, unsigned seq, char *buf, size_t cap);
/* TSR_OK when `path` may be written by write-to-temporary-then-rename: a regular file or a new
   name (not a symlink, FIFO, device, socket, directory) in an existing writable directory, and
   its temporary name fits. TSR_ERR_IO / TSR_ERR_INVALID_ARGUMENT with the reason. Local. */
tsr_status tsr__check_output(const char *path);
/* Opens an input without blocking (O_NONBLOCK), refuses anything but a regular file, then
   clears O_NONBLOCK. *fd is -1 on failure; *size is the file's size. */
tsr_status tsr__open_input(const char *path, int *fd, uint64_t *size);
/* Reads n bytes at `offset` of an input (tsr__npy_read_header_at's source); a failed or short
   read records the error (naming the file) and returns its status. */
typedef tsr_status (*tsr__read_at_fn)(void *ctx, uint64_t offset, void *dst, size_t n);
/* The one reader of a .npy header (src/core/io.c): the prefix's length field, the 16 MiB
   limit, the parser; errors name `path`. `fsize`: the file's size. Reads from offset 0 up,
   in order. Used by tsr_npy_read_header/tsr_npy_load (a stdio stream) and by the MPI-IO
   reader (src/mpi/npyio.c, on the file handle it already opened). */
tsr_status tsr__npy_read_header_at(const char *path, uint64_t fsize, tsr__read_at_fn read,
                                   void *ctx, tsr_npy_header *h);
/* tsr__open_input's checks without opening (stat, access): a regular file this process may
   read; *size is its size. For a reader that opens the file itself (MPI_File_open). */
tsr_status tsr__stat_input(const char *path, uint64_t *size);
/* tsr__open_input as a stdio stream ("r"); `what` names the file in messages ("wisdom file"). */
tsr_status tsr__open_input_file(const char *path, const char *what, FILE **fp);
/* Opens (creating, mode 0644) a file to append records to, without blocking and only when it
   is a regular file or a new name (a FIFO, device, directory or symbolic link is TSR_ERR_IO);
   *fd is -1 on failure. Appends of one write() each do not interleave between processes. */
tsr_status tsr__open_append(const char *path, const char *what, int *fd);
/* Takes an exclusive flock() on PATH.lock (created beside path, mode 0644, left in place),
   waiting at most wait_s seconds for another holder; TSR_ERR_IO when it cannot be created or
   is not a regular file, or the wait ran out. Release with tsr__unlock(*fd). */
tsr_status tsr__lock_beside(const char *path, double wait_s, int *fd);
void tsr__unlock(int fd);
/* write() until all n bytes are written; a short or failed write is TSR_ERR_IO. */
tsr_status tsr__write_all(const char *path, int fd, const void *data, size_t n);
/* Creates the new file `path` (O_EXCL: an existing file is an error; `target` is the result it
   is the temporary of, for messages) and reserves the disk blocks of its first `bytes` bytes
   (Linux fallocate), so that a full disk or a file size limit fails here, before any data is
   written, and no later write can be dropped for lack of space; a file system that cannot
   reserve is not an error. On failure nothing is left. */
tsr_status tsr__create_reserved(const char *path, const char *target, uint64_t bytes);
/* Checks the target again, renames the complete (synced, closed) temporary onto it and syncs
   the directory; removes the temporary on failure. */
tsr_status tsr__commit_temp(const char *tmp, const char *path);
/* The whole protocol for host data: check, temporary, checked writes of the parts, fsync,
   close, commit. Nothing is left at `path` or beside it on failure. */
tsr_status tsr__save_file(const char *path, const void *const *parts, const size_t *lens,
                          int nparts);

/* ---------------------------------------------------------------- arrays -------------- */

#ifndef __cplusplus
typedef struct tsr__buffer {
  atomic_int refcount;
  tsr_device device;
  void *data; /* host pointer for the CPU, device pointer for GPUs */
  size_t bytes;
  unsigned flags; /* tsr_alloc_flags actually granted, and TSR__BUFFER_BORROWED */
} tsr__buffer;

/* tsr__buffer.flags bit: the memory belongs to the caller (tsr_from_host_view); the last
   release frees the header only, never the data through the backend. */
#define TSR__BUFFER_BORROWED (1u << 16)

struct tsr_array {
  atomic_int refcount;
  tsr__buffer *buffer;
  tsr_dtype dtype;
  int ndim;
  int64_t shape[TSR_MAX_DIMS];
  int64_t strides[TSR_MAX_DIMS]; /* elements */
  int64_t offset;                /* elements from buffer->data */
};

/* A new array object (refcount 1) over `buffer`, taking over the caller's reference to it;
   shape/strides for axes >= ndim are filled with 1/0. NULL when out of memory. */
tsr_array *tsr__array_struct(tsr__buffer *buffer, tsr_dtype dtype, int ndim, const int64_t *shape,
                             const int64_t *strides, int64_t offset);
#endif /* !__cplusplus */

/*
 * What a backend receives: the address of element (0,...,0) and the shape/strides in elements.
 * Plain data, passed by value to GPU kernels. Dimensions [ndim, TSR_MAX_DIMS) are ignored.
 * ndim 0 is one element.
 */
typedef struct tsr__view {
  void *data;
  tsr_dtype dtype;
  int ndim;
  int64_t shape[TSR_MAX_DIMS];
  int64_t strides[TSR_MAX_DIMS];
} tsr__view;

tsr__view tsr__view_of(const tsr_array *a);
/* The real (part 0) or imaginary (part 1) parts of a complex view as a view of its real part
   dtype (strides doubled, the imaginary one a part's size further); a real view unchanged.
   What the core and backends use to run real kernels on complex data (fill, reductions). */
tsr__view tsr__view_part(const tsr__view *v, int part);
/* Address of element (0,...,0) of a's view (a device pointer for GPU arrays); NULL for an
   empty buffer that has no memory. */
void *tsr__array_ptr(const tsr_array *a);

/*
 * Raw copies between host memory and an array, for layers above the core (the MPI layer's
 * staging of local blocks and SUMMA panels): `bytes` bytes from/to the elements of the
 * C-contiguous array `a` starting at element `offset` of its view, through the backend's
 * memcpy_h2d/memcpy_d2h (with their ordering and synchronization). Checked: the
 * range lies inside the array, the array is contiguous, the host pointer exists, the device
 * can copy (TSR_ERR_INVALID_ARGUMENT, TSR_ERR_NULL_POINTER, TSR_ERR_UNSUPPORTED). 0 bytes is
 * a no-op. Messages name the API context.
 */
tsr_status tsr__copy_h2d(tsr_array *a, int64_t offset, const void *src, size_t bytes);
tsr_status tsr__copy_d2h(const tsr_array *a, int64_t offset, void *dst, size_t bytes);
int64_t tsr__array_size(const tsr_array *a);
bool tsr__array_is_contiguous(const tsr_array *a);

/* A new array object sharing a's buffer, with the given view (retains the buffer). */
tsr_status tsr__array_new_view(const tsr_array *a, int ndim, const int64_t *shape,
                               const int64_t *strides, int64_t offset, tsr_array **out);

/* Allocates a C-contiguous array without argument re-checking beyond shape/overflow. */
tsr_status tsr__array_alloc(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device device,
                            unsigned flags, tsr_array **out);

/* `a` itself (a new reference) when C-contiguous, else a C-contiguous copy on its device.
   Messages name the API context. */
tsr_status tsr__array_contiguous(const tsr_array *a, tsr_array **out);

/* Whether two arrays may share memory (their byte ranges intersect; false when either is
   empty, or when they are on two buffers the library allocated, without looking further).
   Conservative: interleaved views of one buffer count as overlapping. Both arrays must be on
   one device. */
bool tsr__arrays_may_overlap(const tsr_array *a, const tsr_array *b);

/* C-contiguous strides for a shape. */
void tsr__contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);

/*
 * NumPy broadcasting of two shapes into `out_shape` (ndim = max). Returns TSR_ERR_SHAPE with
 * both shapes in the message when they do not broadcast.
 */
tsr_status tsr__broadcast_shapes(int na, const int64_t *sa, int nb, const int64_t *sb, int *nout,
                                 int64_t *out_shape);

/* The view of `a` stretched to (nout, out_shape): missing leading axes and size-1 axes get
   stride 0. The shapes must broadcast. */
tsr__view tsr__view_broadcast(const tsr_array *a, int nout, const int64_t *out_shape);

/* Formats a shape as "3x4x5" ("scalar" for ndim 0) into buf; returns buf. */
const char *tsr__shape_str(int ndim, const int64_t *shape, char *buf, size_t size);

/* ---------------------------------------------------------------- random numbers ------ */

typedef enum tsr__rng_dist { TSR__RNG_UNIFORM = 0, TSR__RNG_NORMAL = 1 } tsr__rng_dist;
/* The Philox4x32-10 generator and the index -> value mapping live in src/core/philox.h,
   a header usable from C and CUDA so both produce the same bits. */

/* Fills n contiguous host elements (f32, f64, c64 or c128) with the Philox values of indices
   offset .. offset+n-1 (OpenMP-parallel); complex element i is the pair of its part dtype's
   values of indices 2i, 2i+1 (the real stream of 2n values from 2 offset). p0/p1: low/high
   (uniform) or mean/stddev (normal). The CPU backend's rng and the core's fallback for backends
   without one. */
void tsr__rng_fill_host(void *dst, tsr_dtype dtype, int64_t n, uint64_t seed, uint64_t offset,
                        tsr__rng_dist dist, double p0, double p1);

/* ---------------------------------------------------------------- GEMM ---------------- */

/*
 * Row-major GEMM as backends see it (the core has already normalized any layout to this):
 *   C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C
 *   A: !trans_a: element (i,p) at a[i*lda + p], lda >= max(1,k)
 *       trans_a: element (i,p) at a[p*lda + i], lda >= max(1,m)
 *   B: !trans_b: element (p,j) at b[p*ldb + j], ldb >= max(1,n)
 *       trans_b: element (p,j) at b[j*ldb + p], ldb >= max(1,k)
 *   C: element (i,j) at c[i*ldc + j], ldc >= max(1,n)
 * beta == 0: C is written without being read. alpha == 0 or k == 0: C = beta*C (A, B unread).
 * m, n may be 0 (nothing to do). dtype is TSR_F32, TSR_F64, TSR_C64 or TSR_C128 (for the complex
 * dtypes alpha/beta are (alpha, alpha_im)/(beta, beta_im) and conj_a/conj_b may be set); pointers
 * are on the device.
 * path is TSR_GEMM_NATIVE or TSR_GEMM_VENDOR (never AUTO).
 */
typedef struct tsr__gemm_args {
  tsr_dtype dtype;
  bool trans_a, trans_b;
  /* Complex dtypes only (false for real ones): op(X) takes the conjugate of X's elements too
     (with trans_x: the conjugate transpose, BLAS's 'C'; without: conj(X), which CBLAS's row-major
     calls need). */
  bool conj_a, conj_b;
  int64_t m, n, k;
  double alpha, beta;
  /* Complex dtypes only (0 for real ones): the imaginary parts of alpha and beta. For a complex
     dtype, "beta == 0" and "alpha == 0" below mean both parts are 0. */
  double alpha_im, beta_im;
  const void *a;
  int64_t lda;
  const void *b;
  int64_t ldb;
  void *c;
  int64_t ldc;
  tsr_gemm_path path;
  /* The CPU GEMM's per-call tuning (omp/gemm/gemm_tune.h: tests, tessera-tune, benchmarks); NULL,
     as the core passes it: the library's own choices. Other backends ignore it. */
  const struct tsr__gemm_tuning *tuning;
} tsr__gemm_args;

/* A checked call in backend form, member by member, not as a compound literal: GCC zeroes a
   literal's padding first with a `rep stos` of the whole struct, which starts slowly (a seventh
   of the call path of an sgemm 16^3 through CBLAS on Emerald Rapids). No tuning object. */
static inline tsr__gemm_args tsr__gemm_args_host(tsr_dtype dtype, bool ta, bool tb, int64_t m,
                                                 int64_t n, int64_t k, double alpha, const void *a,
                                                 int64_t lda, const void *b, int64_t ldb,
                                                 double beta, void *c, int64_t ldc,
                                                 tsr_gemm_path path) {
  tsr__gemm_args g;
  g.dtype = dtype;
  g.trans_a = ta;
  g.trans_b = tb;
  g.conj_a = false;
  g.conj_b = false;
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = alpha;
  g.beta = beta;
  g.alpha_im = 0.0;
  g.beta_im = 0.0;
  g.a = a;
  g.lda = lda;
  g.b = b;
  g.ldb = ldb;
  g.c = c;
  g.ldc = ldc;
  g.path = path;
  g.tuning = NULL;
  return g;
}

/* Resolves TSR_GEMM_AUTO from the TSR_GEMM environment variable: `native` or `vendor` pick
   that path; unset or `auto` leave TSR_GEMM_AUTO for the backend to decide per call (the CPU
   backend runs native; the GPU backend routes by dtype and shape, src/gpu/gemm.cu). */
tsr_status tsr__gemm_resolve_path(tsr_gemm_path requested, tsr_gemm_path *out);

/* ---------------------------------------------------------------- progress hook ----- */

/*
 * Work done from inside a long CPU GEMM, on the thread that called it. SUMMA's broadcasts move
 * only inside MPI calls (Open MPI has no progress thread by default: a rendezvous of a large
 * panel, a pipelined ring's segment forwarding), while one step's local multiply takes tens of
 * milliseconds; cutting the multiply into chunks to test MPI between them repacks a panel per
 * chunk. Instead, while a hook is set on a thread (tsr__progress_set), the CPU GEMM driver calls
 * tsr__progress_poll from that thread between its units of work (one packed block of A times a
 * range of B's micro-panels: a fraction of a millisecond to a few on one core), and the poll
 * calls fn(ctx) when interval_ns have passed since its last call ended. The other threads of a
 * multi-threaded GEMM never call it (the caller's thread is the one MPI was given), nor does a
 * vendor BLAS. fn must not run a CPU GEMM (the hook is unset while it runs).
 */
typedef struct tsr__progress_hook {
  void (*fn)(void *ctx);
  void *ctx;
  int64_t interval_ns; /* least time between the end of a call and the next */
  int64_t next_ns;     /* monotonic clock: no call before (0: the first poll calls) */
  int64_t calls;       /* calls made so far (statistics and tests) */
} tsr__progress_hook;
/* Sets the calling thread's hook (NULL: none); returns the one it replaces. */
tsr__progress_hook *tsr__progress_set(tsr__progress_hook *h);
/* Calls the calling thread's hook if one is set and its time has come; returns the nanoseconds
   the call took (0 when none was made), which a timed caller counts as not its work. */
int64_t tsr__progress_poll(void);
/* The monotonic clock (CLOCK_MONOTONIC) in nanoseconds. */
int64_t tsr__now_ns(void);

/* ---------------------------------------------------------------- device work ------- */

/*
 * Process-wide counters of device work, so that a caller (SUMMA's statistics, the tests of
 * the GPU pipeline) can prove what a step did without a GPU: host<->device copies (bytes and
 * calls), host synchronizations (the host blocked until the device's queued work was done:
 * synchronize, a blocking copy, waiting for an event), and local GEMM calls (all devices) of
 * which the vendor BLAS ran. Backends count their own work (src/gpu/runtime.cu); the core
 * counts GEMM calls. The BLAS drop-in counts its calls here too (tsr_blas_get_stats).
 * Each thread counts into a block of its own (no locked instruction, no shared cache line:
 * src/core/thread_state.c); tsr__counters_read sums every thread's, exited threads' included. A
 * reader sees every count of work that completed before it in its own thread, and counts of
 * other threads' concurrent work too.
 */
typedef enum tsr__counter {
  TSR__COUNT_H2D_BYTES,
  TSR__COUNT_H2D_COPIES,
  TSR__COUNT_D2H_BYTES,
  TSR__COUNT_D2H_COPIES,
  TSR__COUNT_HOST_SYNCS,
  TSR__COUNT_GEMM_CALLS,
  TSR__COUNT_GEMM_VENDOR,
  /* The BLAS drop-in (src/blas/blas.c): calls by entry point, and by outcome. */
  TSR__COUNT_BLAS_SGEMM,
  TSR__COUNT_BLAS_DGEMM,
  TSR__COUNT_BLAS_CBLAS_SGEMM,
  TSR__COUNT_BLAS_CBLAS_DGEMM,
  TSR__COUNT_BLAS_ERRORS,
  TSR__COUNT_BLAS_TRIVIAL,
  TSR__COUNT_BLAS_GPU,
  TSR__COUNT_BLAS_FALLBACK,
  /* The ScaLAPACK drop-in (src/scalapack/scalapack.c): calls, paths, bytes, nanoseconds. */
  TSR__COUNT_SCALAPACK_PDGEMM,
  TSR__COUNT_SCALAPACK_PSGEMM,
  TSR__COUNT_SCALAPACK_ERRORS,
  TSR__COUNT_SCALAPACK_QUICK,
  TSR__COUNT_SCALAPACK_SCALE,
  TSR__COUNT_SCALAPACK_SUMMA,
  TSR__COUNT_SCALAPACK_REDIST,
  TSR__COUNT_SCALAPACK_DIRECT,
  TSR__COUNT_SCALAPACK_FAILED,
  TSR__COUNT_SCALAPACK_SENT,
  TSR__COUNT_SCALAPACK_RECEIVED,
  TSR__COUNT_SCALAPACK_NANOSECONDS,
  /* Panel broadcasts started (src/mpi/bcast.c), by the algorithm that ran (tsr_dist_stats's
     bcast_mpi, bcast_ring, bcast_tree). */
  TSR__COUNT_BCAST_MPI,
  TSR__COUNT_BCAST_RING,
  TSR__COUNT_BCAST_TREE,
  TSR__COUNT_N
} tsr__counter;
void tsr__count(tsr__counter c, uint64_t n);
void tsr__counters_read(uint64_t out[TSR__COUNT_N]);
/* A statistic that can be reset (the drop-ins' tsr_*_reset_stats) keeps a baseline of its n
   counters from `first` on, never writing the counters themselves (other threads own them):
   tsr__counters_mark sets base[0..n-1] to their current sums, tsr__counters_since writes their
   sums less base into out[0..n-1] (0 where a concurrent mark went past). base is read and
   written with relaxed atomic operations (a plain array: this header is C++ as well). */
void tsr__counters_mark(tsr__counter first, int n, uint64_t *base);
void tsr__counters_since(tsr__counter first, int n, const uint64_t *base, uint64_t *out);

/* Direction of an asynchronous copy (memcpy_2d_async). */
typedef enum tsr__copy_dir { TSR__COPY_H2D, TSR__COPY_D2H, TSR__COPY_D2D } tsr__copy_dir;

/* The local part of a 2D block-cyclic matrix (ScaLAPACK layout, RSRC = CSRC = 0): global
   m x n in mb x nb blocks over an nprow x npcol grid; this rank is (myrow, mycol) and holds
   mloc x nloc elements, column-major with leading dimension lld. */
typedef struct tsr__bc_block {
  int64_t m, n, mb, nb;
  int myrow, mycol, nprow, npcol;
  int64_t mloc, nloc, lld;
} tsr__bc_block;

/* Global index of local index l (block size nb, this process p of np): ScaLAPACK's INDXL2G
   with source 0, inline so that kernels and loops can use it per run of a block. */
static inline int64_t tsr__bc_l2g(int64_t l, int64_t nb, int p, int np) {
  return (l / nb * np + p) * nb + l % nb;
}

/*
 * Device operations for the layers above the core (src/mpi): each dispatches to the device's
 * backend table and falls back to what the host does where the backend has no entry (the CPU:
 * pinned memory is ordinary host memory, streams and events are NULL handles, an event is
 * always complete, an asynchronous copy is a memcpy). Messages name the API context (see the
 * error rule above). Statuses: TSR_ERR_NO_DEVICE, TSR_ERR_GPU, TSR_ERR_OUT_OF_MEMORY.
 */
tsr_status tsr__dev_pinned_alloc(tsr_device dev, size_t bytes, void **ptr);
void tsr__dev_pinned_free(tsr_device dev, void *ptr);
tsr_status tsr__dev_stream_create(tsr_device dev, void **stream);
void tsr__dev_stream_destroy(tsr_device dev, void *stream);
tsr_status tsr__dev_event_create(tsr_device dev, void **event);
void tsr__dev_event_destroy(tsr_device dev, void *event);
tsr_status tsr__dev_event_record(tsr_device dev, void *event, void *stream);
tsr_status tsr__dev_event_query(tsr_device dev, void *event, int *done);
tsr_status tsr__dev_event_elapsed(tsr_device dev, void *start, void *stop, double *seconds);
tsr_status tsr__dev_stream_wait_event(tsr_device dev, void *stream, void *event);
tsr_status tsr__dev_memcpy_2d_async(tsr_device dev, void *dst, size_t dpitch, const void *src,
                                    size_t spitch, size_t width, size_t rows, tsr__copy_dir dir,
                                    void *stream);
/* A list of strided rectangles copied in one device operation (tsr__dev_copy_rects): element
   (i, j) of a rows x cols rectangle, 0 <= i < rows, 0 <= j < cols, is read at element
   src_off + i * src_rs + j * src_cs of the source and written at dst_off + i * dst_rs +
   j * dst_cs of the destination (element offsets and strides, not bytes). */
typedef struct tsr__rect {
  int64_t rows, cols;
  int64_t src_off, src_rs, src_cs;
  int64_t dst_off, dst_rs, dst_cs;
} tsr__rect;
/* What tsr__dev_copy_rects does with each element: dst = src, dst += src (f32, f64, c64, c128)
   or dst = conj(src) (c64, c128). */
typedef enum tsr__rect_op { TSR__RECT_COPY, TSR__RECT_ADD, TSR__RECT_CONJ } tsr__rect_op;
/* The n rectangles r[0..n-1] from `src` to `dst` (raw pointers to elements of `dtype` in dev's
   memory; no rectangle's destination overlaps another's or the source), queued on the device's
   own stream by the backend's optional copy_rects (the GPU: one launch per 56 rectangles, the
   list in the kernel's parameters), or on the host where the backend has none (the CPU). No
   host synchronization, no host<->device copy. */
tsr_status tsr__dev_copy_rects(tsr_device dev, void *dst, const void *src, tsr_dtype dtype,
                               const tsr__rect *r, int64_t n, tsr__rect_op op);
/* Fills a block-cyclic local block in place (see the backend entry rng_block_cyclic). */
tsr_status tsr__dev_rng_block_cyclic(tsr_array *storage, const tsr__bc_block *l, uint64_t seed,
                                     double low, double high);
/* For the column-major rows x cols matrix M at element `offset` of `storage` (leading
   dimension ld, f32 or f64; a c64 or c128 storage is read as the real matrix of its parts:
   rows and ld counted in parts, twice the complex ones), in float64 on the device: y1 =
   op(M) x1 and y2 = |op(M)| x2,
   op(M) = M or M^T, and *nonfinite = the number of NaN/Inf elements of M. x1, x2 (host,
   length cols of op(M)), y1, y2 (host, length rows of op(M)) and nonfinite may each be NULL
   (x1 NULL: no y1; x2 NULL: no y2). Used by Freivalds' check (src/mpi/verify.c). */
tsr_status tsr__dev_matvec_f64(const tsr_array *storage, int64_t rows, int64_t cols, int64_t ld,
                               bool trans, const double *x1, const double *x2, double *y1,
                               double *y2, int64_t *nonfinite);

/* ---------------------------------------------------------------- backends ------------ */

/*
 * One table per backend (SUNDIALS style), its entries required or optional:
 *  - required, never NULL (the core calls them without a check): name, device_count,
 *    device_props, alloc, free, memcpy_h2d, memcpy_d2h, memcpy_d2d, synchronize, fill, copy,
 *    binary, unary, reduce, gemm;
 *  - optional, NULL for the core's fallback or nothing to do: unavailable_reason, trim, arange
 *    and rng (computed on the host and copied), gemm_tiny, the distributed-matrix kernels,
 *    the asynchronous group (all or none) and copy_rects, as their comments below say.
 * tests/test_backend_tables.c checks every compiled table against this split and fails to build
 * when an entry is added without being classified there.
 *
 * Contracts, all views already validated by the core:
 *  - copy:   dst and src have the same shape (src broadcast: strides may be 0), dtypes may
 *            differ (C conversion; float->int saturates, NaN -> 0). dst does not overlap src.
 *  - binary: out is C-contiguous with the broadcast shape; a and b are stretched to out's
 *            shape (strides 0 on broadcast axes); all three have the same dtype.
 *  - unary:  out C-contiguous, same shape and dtype as a (a any strides).
 *  - reduce: reduces a along `axis` (0 <= axis < a->ndim); out is C-contiguous with a's shape
 *            minus that axis. out dtype: sum/max/min as a; mean as a for floats, f64 for
 *            integers; argmax i64. A zero-length axis reaches the backend only for sum (0) and
 *            mean (NaN). Reduce-all arrives as a contiguous 1-D view, axis 0.
 *  - fill:   dst any strides.  arange / rng: dst C-contiguous, element i gets
 *            start + i*step / the Philox value for index offset + i.
 *  - gemm:   see tsr__gemm_args. An unsupported path returns TSR_ERR_UNSUPPORTED.
 * Work may be asynchronous on the device's stream; memcpy_d2h and synchronize wait for it.
 */
struct tsr__backend_ops {
  const char *name; /* "cpu", "cuda", "hip" */
  tsr_status (*device_count)(int *count);
  /* Why no device is available (driver missing...), or "" */
  const char *(*unavailable_reason)(void);
  tsr_status (*device_props)(int index, tsr_device_props *props);
  tsr_status (*alloc)(tsr_device dev, size_t bytes, unsigned flags, void **ptr,
                      unsigned *granted_flags);
  void (*free)(tsr_device dev, void *ptr, size_t bytes, unsigned flags);
  tsr_status (*memcpy_h2d)(tsr_device dev, void *dst, const void *src, size_t bytes);
  tsr_status (*memcpy_d2h)(tsr_device dev, void *dst, const void *src, size_t bytes);
  tsr_status (*memcpy_d2d)(tsr_device dev, void *dst, const void *src, size_t bytes);
  tsr_status (*synchronize)(tsr_device dev);
  tsr_status (*trim)(tsr_device dev);
  tsr_status (*fill)(tsr_device dev, const tsr__view *dst, double value);
  tsr_status (*arange)(tsr_device dev, const tsr__view *dst, double start, double step);
  tsr_status (*copy)(tsr_device dev, const tsr__view *dst, const tsr__view *src);
  tsr_status (*binary)(tsr_device dev, tsr_binary_op op, const tsr__view *out, const tsr__view *a,
                       const tsr__view *b);
  tsr_status (*unary)(tsr_device dev, tsr_unary_op op, const tsr__view *out, const tsr__view *a);
  tsr_status (*reduce)(tsr_device dev, tsr_reduce_op op, const tsr__view *out, const tsr__view *a,
                       int axis);
  tsr_status (*rng)(tsr_device dev, const tsr__view *dst, uint64_t seed, uint64_t offset,
                    tsr__rng_dist dist, double p0, double p1);
  tsr_status (*gemm)(tsr_device dev, const tsr__gemm_args *args);
  /* Optional (NULL: none): runs a small host call on the calling thread with nothing to allocate
     and nothing that can fail, returning true, or returns false having done nothing (then call
     gemm). Arguments as gemm's, checked; C shares no memory with A or B. The per-call cost of
     16^3 through the BLAS drop-in (tsr__gemm_host_tiny, issue 31). */
  bool (*gemm_tiny)(const tsr__gemm_args *args);

  /* ---- Distributed-matrix kernels (optional: NULL -> the core stages through the host and
     runs the CPU backend's; see tsr__dev_rng_block_cyclic, tsr__dev_matvec_f64). ---- */
  /* The local block (column-major, l->lld) of a block-cyclic matrix filled with the uniform
     Philox values of index i * l->n + j for global element (i, j) in [low, high): the same
     values as tsr_random_uniform of the whole m x n row-major matrix, on every device. */
  tsr_status (*rng_block_cyclic)(tsr_device dev, void *data, tsr_dtype dtype,
                                 const tsr__bc_block *l, uint64_t seed, double low, double high);
  /* See tsr__dev_matvec_f64. */
  tsr_status (*matvec_f64)(tsr_device dev, const void *data, tsr_dtype dtype, int64_t rows,
                           int64_t cols, int64_t ld, bool trans, const double *x1, const double *x2,
                           double *y1, double *y2, int64_t *nonfinite);

  /* ---- Asynchronous devices (optional: NULL on backends whose work is complete when the op
     returns, the CPU). Streams and events are opaque handles; a NULL stream is the device's
     own stream, where every other op of the table runs (the compute stream). ---- */
  tsr_status (*pinned_alloc)(tsr_device dev, size_t bytes, void **ptr);
  void (*pinned_free)(tsr_device dev, void *ptr);
  tsr_status (*stream_create)(tsr_device dev, void **stream);
  void (*stream_destroy)(tsr_device dev, void *stream);
  tsr_status (*event_create)(tsr_device dev, void **event);
  void (*event_destroy)(tsr_device dev, void *event);
  tsr_status (*event_record)(tsr_device dev, void *event, void *stream);
  /* *done = 1 when the work before the event's last record completed; never blocks. */
  tsr_status (*event_query)(tsr_device dev, void *event, int *done);
  /* Seconds between two recorded events; waits for `stop` (a host synchronization). */
  tsr_status (*event_elapsed)(tsr_device dev, void *start, void *stop, double *seconds);
  /* Work queued on `stream` after this call waits for the event's last record. */
  tsr_status (*stream_wait_event)(tsr_device dev, void *stream, void *event);
  /* rows copies of width bytes (dst + r*dpitch <- src + r*spitch) queued on `stream`; the
     pointers may be device or pinned host memory (dir says which way). */
  tsr_status (*memcpy_2d_async)(tsr_device dev, void *dst, size_t dpitch, const void *src,
                                size_t spitch, size_t width, size_t rows, tsr__copy_dir dir,
                                void *stream);

  /* ---- Batched strided copies (optional: NULL -> the core runs the rectangles on the host,
     right for host memory; a backend with its own memory has it). See tsr__dev_copy_rects. ---- */
  tsr_status (*copy_rects)(tsr_device dev, void *dst, const void *src, tsr_dtype dtype,
                           const tsr__rect *r, int64_t n, tsr__rect_op op);
};

/* The CPU backend's tiny lane for callers that have already checked their arguments as the
   reference BLAS does (src/core/linalg.c; the BLAS drop-in, tsr_gemm on host arrays): *g is a
   row-major call in backend form (tsr__gemm_args_host) on host memory with m, n, k > 0, leading
   dimensions at least the stored rows' lengths, A, B and C not NULL, alpha != 0. Runs the call and
   returns true when the CPU backend can run it without allocating (its tiny lane) and C shares
   no memory with A or B; otherwise returns false having done nothing, and the caller goes on to
   tsr_gemm_host. Never fails, never sets an error, names no API context: the second round of
   checks and the context are what it saves. */
bool tsr__gemm_host_tiny(const tsr__gemm_args *g);

/* The tables. tsr__gpu_backend exists when TSR_HAVE_CUDA or TSR_HAVE_HIP (one per build). */
extern const struct tsr__backend_ops tsr__omp_backend;
#if TSR_HAVE_CUDA || TSR_HAVE_HIP
extern const struct tsr__backend_ops tsr__gpu_backend;
#endif

/* The table for a device, checking that the kind is built in and the index exists
   (TSR_ERR_NO_DEVICE naming the device and, for GPUs, the runtime's reason). */
tsr_status tsr__backend_for(tsr_device dev, const struct tsr__backend_ops **ops);

/* Formats a device as "cpu", "cuda:0", "hip:1" into buf (for messages); returns buf. */
const char *tsr__device_str(tsr_device dev, char *buf, size_t size);

/* The drop-ins' internal interface (core/dropin.h): exported, versioned. */
TSR__DROPIN_CORE(TSR__DROPIN_EXPORT)

#ifdef __cplusplus
}
#endif
#endif /* TSR_INTERNAL_H */
