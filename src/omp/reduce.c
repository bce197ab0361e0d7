/* SPDX-License-Identifier: BSD-3-Clause */
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

#define TSR__RED_T float
#define TSR__RED_MT float
#define TSR__RED_INT 0
#define TSR__RED_SFX f32
#include "omp/reduce_impl.h"

#define TSR__RED_T double
#define TSR__RED_MT double
#define TSR__RED_INT 0
#define TSR__RED_SFX f64
#include "omp/reduce_impl.h"

/* x != x in the NaN-aware maximum/minimum is always false for integers, as intended. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtautological-compare"
#endif

#define TSR__RED_T int32_t
#define TSR__RED_MT double
#define TSR__RED_INT 1
#define TSR__RED_SFX i32
#include "omp/reduce_impl.h"

#define TSR__RED_T int64_t
#define TSR__RED_MT double
#define TSR__RED_INT 1
#define TSR__RED_SFX i64
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
  if (tsr__dtype_is_complex(a->dtype)) {
    /* A complex sum or mean is the real reduction of each part: the parts are views of the
       part dtype (strides doubled), so the real kernels, their f64 accumulation of f32 and
       their traversal serve them unchanged. */
    TSR_CHECK((op == TSR_SUM || op == TSR_MEAN) && out->dtype == a->dtype, TSR_ERR_DTYPE,
              "reduction %d is not defined for the complex dtype %s", (int)op,
              tsr_dtype_name(a->dtype));
    for (int part = 0; part < 2; part++) {
      const tsr__view o = tsr__view_part(out, part), x = tsr__view_part(a, part);
      TSR_CALL(tsr__omp_reduce(dev, op, &o, &x, axis));
    }
    return TSR_OK;
  }
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
  case TSR_F32: tsr__reduce_f32(&pl); break;
  case TSR_F64: tsr__reduce_f64(&pl); break;
  case TSR_I32: tsr__reduce_i32(&pl); break;
  case TSR_I64: tsr__reduce_i64(&pl); break;
  default: break; /* complex: above */
  }
  return TSR_OK;
}
