/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internals of the CPU backend (src/omp) other than GEMM: the strided N-d loop shared by
 * the elementwise, copy and fill kernels, the OpenMP helpers and the entry points the ops
 * table (backend.c) points to. Not exported.
 */
#ifndef TSR_OMP_INTERNAL_H
#define TSR_OMP_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "core/convert.h"
#include "core/internal.h"
#include "core/layout.h"

#ifdef _OPENMP
#include <omp.h>
/* _Pragma form so that a build without OpenMP has no unknown-pragma warnings. */
#define TSR__OMP_PRAGMA(x) _Pragma(#x)
#else
#define TSR__OMP_PRAGMA(x)
#endif

/* Token pasting after expansion: the C templates (*_impl.h) name what they generate with it. */
#define TSR__OMP_CAT_(a, b) a##b
#define TSR__OMP_CAT(a, b) TSR__OMP_CAT_(a, b)

/*
 * Below this many elements (of work) a kernel runs on the calling thread: starting an
 * OpenMP team costs a few microseconds, which is the whole cost of a small op. 2^15 f32
 * elements are 128 KiB per operand, about where one core stops being able to keep up.
 */
#define TSR__OMP_PAR_THRESHOLD ((int64_t)1 << 15)

/*
 * Software prefetch of the cache line at an address given as an integer (it may lie past
 * the end of the array: a prefetch never faults, and integer arithmetic keeps that defined).
 * Streaming reductions gain 30-50% with it on virtual machines whose hardware prefetcher
 * runs short of the memory bandwidth.
 */
#if defined(__GNUC__) || defined(__clang__)
#define TSR__OMP_PREFETCH(addr) __builtin_prefetch((const void *)(addr))
#else
#define TSR__OMP_PREFETCH(addr) ((void)(addr))
#endif
#define TSR__OMP_PREFETCH_BYTES 4096

/* Threads OpenMP would use for a parallel region here (1 without OpenMP). */
int tsr__omp_threads(void);

/* ---------------------------------------------------------------- host CPU facts ------ */

/* One cache level: bytes, associativity, line bytes. */
typedef struct tsr__cpu_cache {
  int64_t size, ways, line;
} tsr__cpu_cache;

/* What the CPU backend knows about the host CPU (cpuinfo.c, the one place that reads it). */
typedef struct tsr__cpu_facts {
  char model_name[128];    /* /proc/cpuinfo "model name", else "CPU" */
  char vendor[13];         /* CPUID vendor ("GenuineIntel", "AuthenticAMD"), else "unknown" */
  int family, model;       /* CPUID displayed family and model (0 where there is no CPUID) */
  tsr__cpu_cache cache[3]; /* L1 data, L2, L3 (sysconf, /sys, else defaults) */
} tsr__cpu_facts;

/* The host CPU's facts, read on first use (thread-safe); never NULL. */
const tsr__cpu_facts *tsr__cpu_facts_get(void);

/* ---------------------------------------------------------------- strided loops ------- */

/* Most operands of one loop: out, a, b. */
#define TSR__OMP_MAX_OPS 3

/*
 * A loop over a shape shared by up to three operands with their own strides (elements).
 * tsr__omp_loop_init drops size-1 axes and merges axes i, i+1 whenever every operand has
 * stride[i] == shape[i+1] * stride[i+1], so a C-contiguous operand set becomes one axis and
 * the innermost loop is as long as possible. After init, ndim >= 1 (a scalar becomes one axis
 * of length 1) and size is the element count (0: nothing to do).
 */
typedef struct tsr__omp_loop {
  int ndim;
  int nops;
  int64_t size;
  int64_t shape[TSR_MAX_DIMS];
  int64_t strides[TSR__OMP_MAX_OPS][TSR_MAX_DIMS];
  size_t elsize[TSR__OMP_MAX_OPS];
} tsr__omp_loop;

/* strides[k] are operand k's strides for `shape` (ndim 0..TSR_MAX_DIMS). */
void tsr__omp_loop_init(tsr__omp_loop *lp, int ndim, const int64_t *shape, int nops,
                        const int64_t *const strides[], const size_t elsize[]);

/*
 * Kernel for one run of the innermost axis: n elements; p[k] is operand k's first element,
 * s[k] its stride in elements; param is the caller's (the op's scalar arguments).
 */
typedef void (*tsr__omp_kernel)(int64_t n, char *const p[], const int64_t s[], const void *param);

/*
 * Runs `kernel` over every element of the loop, whose operands start at base[k]. Operand 0
 * is the output and is only written: when it is contiguous and the operands outgrow the
 * last-level cache, the kernel writes it into an L1 tile that is then streamed to memory
 * (non-temporal stores). The elements are split in chunks among the OpenMP threads when
 * `work` exceeds TSR__OMP_PAR_THRESHOLD, else it runs on the calling thread.
 */
void tsr__omp_loop_run(const tsr__omp_loop *lp, char *const base[], tsr__omp_kernel kernel,
                       const void *param, int64_t work);

/* Element offsets (per operand) of the element with C-order flat index `flat`. */
void tsr__omp_loop_offsets(const tsr__omp_loop *lp, int64_t flat, int64_t off[]);

/* Start of part t of n elements split among nt parts (t == nt gives n), on a multiple of
   16 elements (a 64-byte line of f32) so that threads do not write the same cache line. */
static inline int64_t tsr__omp_split_point(int64_t n, int nt, int t) {
  if (t >= nt) return n;
  int64_t b = (n / nt) * t + (t < n % nt ? t : n % nt);
  b = (b + 15) / 16 * 16;
  return b < n ? b : n;
}

/* ---------------------------------------------------------------- entry points -------- */

tsr_status tsr__omp_alloc(tsr_device dev, size_t bytes, unsigned flags, void **ptr,
                          unsigned *granted_flags);
void tsr__omp_free(tsr_device dev, void *ptr, size_t bytes, unsigned flags);
tsr_status tsr__omp_memcpy(tsr_device dev, void *dst, const void *src, size_t bytes);
tsr_status tsr__omp_fill(tsr_device dev, const tsr__view *dst, double value);
tsr_status tsr__omp_arange(tsr_device dev, const tsr__view *dst, double start, double step);
tsr_status tsr__omp_copy(tsr_device dev, const tsr__view *dst, const tsr__view *src);
tsr_status tsr__omp_rng(tsr_device dev, const tsr__view *dst, uint64_t seed, uint64_t offset,
                        tsr__rng_dist dist, double p0, double p1);
/* Block-cyclic local blocks (bc_kernels.c): the rng_block_cyclic and matvec_f64 entries. */
tsr_status tsr__omp_rng_block_cyclic(tsr_device dev, void *data, tsr_dtype dtype,
                                     const tsr__bc_block *l, uint64_t seed, double low,
                                     double high);
tsr_status tsr__omp_matvec_f64(tsr_device dev, const void *data, tsr_dtype dtype, int64_t rows,
                               int64_t cols, int64_t ld, bool trans, const double *x1,
                               const double *x2, double *y1, double *y2, int64_t *nonfinite);
tsr_status tsr__omp_binary(tsr_device dev, tsr_binary_op op, const tsr__view *out,
                           const tsr__view *a, const tsr__view *b);
tsr_status tsr__omp_unary(tsr_device dev, tsr_unary_op op, const tsr__view *out,
                          const tsr__view *a);
tsr_status tsr__omp_reduce(tsr_device dev, tsr_reduce_op op, const tsr__view *out,
                           const tsr__view *a, int axis);

#endif /* TSR_OMP_INTERNAL_H */
