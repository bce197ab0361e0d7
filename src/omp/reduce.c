/*
 * Reductions of the CPU backend (sum, mean, max, min, argmax along one axis).
 *
 * The output axes form a strided loop over (out, a) like an elementwise op; the reduced axis
 * is (L, sr). Two ways to traverse, chosen so that memory is read in order:
 *  - vector: each output reduces its own run of L elements (the reduced axis is the
 *    innermost, or the outputs are not contiguous in a). Outputs are split among threads;
 *    one or a few outputs with a long run (reduce-all) split the run instead.
 *  - rows: the outputs' innermost axis is contiguous in a (a reduction along axis 0 of a
 *    C-contiguous matrix): blocks of up to TSR__OMP_RBLOCK columns accumulate row after row
 *    in registers / L1, and threads take different blocks.
 * f32 sums and all means accumulate in double; integer sums wrap modulo 2^64 and are then
 * narrowed (NumPy's wrap-around). max/min propagate NaN; argmax returns the first maximum,
 * a NaN counting as the maximum (NumPy).
 */
#include "core/opdefs.h"
#include "omp/omp_internal.h"

/* `omp simd` is a request: loops that call scalar libm functions stay scalar, and clang
   would warn about each of them. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

/* A long run (reduce-all) is cut into parts of at least TSR__OMP_PART_MIN elements, at
   most TSR__OMP_MAX_PARTS of them (their partial results live on the stack). */
#define TSR__OMP_PART_MIN ((int64_t)1 << 14)
#define TSR__OMP_MAX_PARTS 64
/* Columns one rows-block accumulates at once: 8 KiB of f32 per row keeps the hardware
   prefetchers streaming; 2048 double accumulators (16 KiB) stay in L1. */
#define TSR__OMP_RBLOCK 2048

typedef struct tsr__omp_rplan {
  tsr_reduce_op op;
  int64_t L, sr;    /* the reduced axis: length and stride in a (elements) */
  tsr__omp_loop lp; /* over the outputs; operand 0 is out, 1 is a */
  bool rows;        /* traversal by rows (else by vectors) */
  int64_t N, bs;    /* rows: length of the innermost output axis, columns per block */
  char *out;
  const char *a;
} tsr__omp_rplan;

#define T float
#define MT float
#define TSR__OMP_IS_INT 0
#define VSUMD vsumd_f32
#define VEXTREME vextreme_f32
#define VARGMAX vargmax_f32
#define RSUMD rsumd_f32
#define REXTREME rextreme_f32
#define RARGMAX rargmax_f32
#define VECTOR_KERNEL vector_kernel_f32
#define VECTOR_SPLIT vector_split_f32
#define ROWS_BLOCK rows_block_f32
#define REDUCE reduce_f32
#include "omp/reduce_impl.h"

#define T double
#define MT double
#define TSR__OMP_IS_INT 0
#define VSUMD vsumd_f64
#define VEXTREME vextreme_f64
#define VARGMAX vargmax_f64
#define RSUMD rsumd_f64
#define REXTREME rextreme_f64
#define RARGMAX rargmax_f64
#define VECTOR_KERNEL vector_kernel_f64
#define VECTOR_SPLIT vector_split_f64
#define ROWS_BLOCK rows_block_f64
#define REDUCE reduce_f64
#include "omp/reduce_impl.h"

/* x != x in the NaN-aware maximum/minimum is always false for integers, as intended. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtautological-compare"
#endif

#define T int32_t
#define MT double
#define TSR__OMP_IS_INT 1
#define VSUMD vsumd_i32
#define VSUMU vsumu_i32
#define VEXTREME vextreme_i32
#define VARGMAX vargmax_i32
#define RSUMD rsumd_i32
#define RSUMU rsumu_i32
#define REXTREME rextreme_i32
#define RARGMAX rargmax_i32
#define VECTOR_KERNEL vector_kernel_i32
#define VECTOR_SPLIT vector_split_i32
#define ROWS_BLOCK rows_block_i32
#define REDUCE reduce_i32
#include "omp/reduce_impl.h"

#define T int64_t
#define MT double
#define TSR__OMP_IS_INT 1
#define VSUMD vsumd_i64
#define VSUMU vsumu_i64
#define VEXTREME vextreme_i64
#define VARGMAX vargmax_i64
#define RSUMD rsumd_i64
#define RSUMU rsumu_i64
#define REXTREME rextreme_i64
#define RARGMAX rargmax_i64
#define VECTOR_KERNEL vector_kernel_i64
#define VECTOR_SPLIT vector_split_i64
#define ROWS_BLOCK rows_block_i64
#define REDUCE reduce_i64
#include "omp/reduce_impl.h"

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

tsr_status tsr__omp_reduce(tsr_device dev, tsr_reduce_op op, const tsr__view *out,
                           const tsr__view *a, int axis) {
  TSR_CHECK((unsigned)op < TSR_NUM_REDUCE_OPS, TSR_ERR_UNSUPPORTED, "unknown reduction %d",
            (int)op);
  TSR_CHECK((unsigned)a->dtype < TSR_NUM_DTYPES, TSR_ERR_DTYPE, "unknown dtype %d", (int)a->dtype);
  TSR_CHECK(axis >= 0 && axis < a->ndim, TSR_ERR_INVALID_ARGUMENT,
            "axis %d out of range for %d dimensions", axis, a->ndim);
  tsr__omp_rplan pl;
  pl.op = op;
  pl.L = a->shape[axis];
  pl.sr = a->strides[axis];
  pl.out = (char *)out->data;
  pl.a = (const char *)a->data;
  int64_t oshape[TSR_MAX_DIMS], astrides[TSR_MAX_DIMS];
  int k = 0;
  for (int d = 0; d < a->ndim; d++) {
    if (d == axis) continue;
    oshape[k] = a->shape[d];
    astrides[k] = a->strides[d];
    k++;
  }
  const int64_t *strides[2] = {out->strides, astrides};
  const size_t elsize[2] = {tsr__dtype_size(out->dtype), tsr__dtype_size(a->dtype)};
  tsr__omp_loop_init(&pl.lp, k, oshape, 2, strides, elsize);
  if (pl.lp.size == 0) return TSR_OK;
  if (pl.L == 0) {
    TSR_CHECK(op == TSR_SUM || op == TSR_MEAN, TSR_ERR_INVALID_ARGUMENT,
              "reduction %d over an empty axis has no value", (int)op);
    return tsr__omp_fill(dev, out, op == TSR_SUM ? 0.0 : NAN);
  }

  const int nd = pl.lp.ndim;
  pl.N = pl.lp.shape[nd - 1];
  pl.rows = pl.lp.strides[1][nd - 1] == 1 && pl.N > 1 && pl.L > 1 && pl.sr != 1;
  pl.bs = TSR__OMP_RBLOCK;
  const int nt = tsr__omp_threads();
  if (pl.rows && pl.lp.size * pl.L > TSR__OMP_PAR_THRESHOLD) {
    /* Narrower blocks when there are fewer blocks than threads (a short, wide matrix). */
    const int64_t outer = pl.lp.size / pl.N;
    while (pl.bs > 16 && outer * ((pl.N + pl.bs - 1) / pl.bs) < nt)
      pl.bs /= 2;
  }

  switch (a->dtype) {
  case TSR_F32: reduce_f32(&pl); break;
  case TSR_F64: reduce_f64(&pl); break;
  case TSR_I32: reduce_i32(&pl); break;
  case TSR_I64: reduce_i64(&pl); break;
  }
  return TSR_OK;
}
