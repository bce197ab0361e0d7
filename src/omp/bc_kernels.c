/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU backend's kernels for the local blocks of block-cyclic matrices (the backend
 * entries rng_block_cyclic and matvec_f64, src/core/internal.h): the distributed random fill
 * and the matrix-vector products of Freivalds' check. Also the core's host fallback for
 * backends without them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "omp/omp_internal.h"

tsr_status tsr__omp_rng_block_cyclic(tsr_device dev, void *data, tsr_dtype dtype,
                                     const tsr__bc_block *l, uint64_t seed, double low,
                                     double high) {
  (void)dev;
  const size_t es = tsr__dtype_size(dtype);
  const int64_t col_blocks = (l->nloc + l->nb - 1) / l->nb;
  const int64_t row_blocks = (l->mloc + l->mb - 1) / l->mb;
  /* One task per (local column block, local row block): the rows of a row block are a run of
     global rows, the columns of a column block a run of global columns, so each row of the
     tile is one contiguous range of the Philox stream (index i * n + j0 ...), generated
     with each Philox block computed once (tsr__rng_fill_host) and stored down the tile's
     column-major columns. */
#if TSR_HAVE_OPENMP
#pragma omp parallel for schedule(dynamic, 1) collapse(2) if (l->mloc * l->nloc > 65536)
#endif
  for (int64_t cb = 0; cb < col_blocks; cb++) {
    for (int64_t rb = 0; rb < row_blocks; rb++) {
      const int64_t lj0 = cb * l->nb, li0 = rb * l->mb;
      const int64_t w = l->nloc - lj0 < l->nb ? l->nloc - lj0 : l->nb;
      const int64_t h = l->mloc - li0 < l->mb ? l->mloc - li0 : l->mb;
      const int64_t j0 = tsr__bc_l2g(lj0, l->nb, l->mycol, l->npcol);
      const int64_t i0 = tsr__bc_l2g(li0, l->mb, l->myrow, l->nprow);
      double row[1024]; /* 8 KiB: runs of up to 1024 f64 / 2048 f32 / 512 c128 values */
      const int64_t cap = (int64_t)(sizeof row / es);
      for (int64_t r = 0; r < h; r++) {
        for (int64_t c0 = 0; c0 < w; c0 += cap) {
          const int64_t cw = w - c0 < cap ? w - c0 : cap;
          const uint64_t idx = (uint64_t)(i0 + r) * (uint64_t)l->n + (uint64_t)(j0 + c0);
          tsr__rng_fill_host(row, dtype, cw, seed, idx, TSR__RNG_UNIFORM, low, high);
          char *dst = (char *)data + (size_t)((li0 + r) + (lj0 + c0) * l->lld) * es;
          const size_t step = (size_t)l->lld * es;
          if (dtype == TSR_F32)
            for (int64_t c = 0; c < cw; c++)
              *(float *)(dst + (size_t)c * step) = ((const float *)row)[c];
          else if (dtype == TSR_F64)
            for (int64_t c = 0; c < cw; c++)
              *(double *)(dst + (size_t)c * step) = row[c];
          else /* complex: element by element, es bytes each */
            for (int64_t c = 0; c < cw; c++)
              memcpy(dst + (size_t)c * step, (const char *)row + (size_t)c * es, es);
        }
      }
    }
  }
  return TSR_OK;
}

static inline double tsr__bc_load(const void *data, tsr_dtype dtype, int64_t e) {
  return dtype == TSR_F32 ? (double)((const float *)data)[e] : ((const double *)data)[e];
}

tsr_status tsr__omp_matvec_f64(tsr_device dev, const void *data, tsr_dtype dtype, int64_t rows,
                               int64_t cols, int64_t ld, bool trans, const double *x1,
                               const double *x2, double *y1, double *y2, int64_t *nonfinite) {
  (void)dev;
  /* Real dtypes only: a complex matrix's check goes its own way (src/mpi/verify.c). */
  TSR_CHECK(dtype == TSR_F32 || dtype == TSR_F64, TSR_ERR_DTYPE,
            "the float64 matrix-vector product takes f32 or f64 matrices, not %s",
            tsr_dtype_name(dtype));
  /* M is stored rows x cols (column-major); op(M) rows are M's columns when trans. */
  const int64_t out = trans ? cols : rows;
  if (y1)
    for (int64_t r = 0; r < out; r++)
      y1[r] = 0.0;
  if (y2)
    for (int64_t r = 0; r < out; r++)
      y2[r] = 0.0;
  int64_t bad = 0;
  if (trans) {
    /* y[j] = sum_i M(i, j) x[i]: one dot product down each stored column. */
#if TSR_HAVE_OPENMP
#pragma omp parallel for schedule(static) reduction(+ : bad) if (rows * cols > 65536)
#endif
    for (int64_t j = 0; j < cols; j++) {
      double s1 = 0.0, s2 = 0.0;
      int64_t b = 0;
      for (int64_t i = 0; i < rows; i++) {
        const double v = tsr__bc_load(data, dtype, i + j * ld);
        b += !isfinite(v);
        if (x1) s1 += v * x1[i];
        if (x2) s2 += fabs(v) * x2[i];
      }
      if (y1 && x1) y1[j] = s1;
      if (y2 && x2) y2[j] = s2;
      bad += b;
    }
  } else {
    /* y[i] = sum_j M(i, j) x[j]: threads own row ranges and walk the columns (unit stride). */
#if TSR_HAVE_OPENMP
#pragma omp parallel reduction(+ : bad) if (rows * cols > 65536)
#endif
    {
      int64_t r0 = 0, r1 = rows;
#if TSR_HAVE_OPENMP
      const int nt = omp_get_num_threads(), t = omp_get_thread_num();
      r0 = rows * t / nt;
      r1 = rows * (t + 1) / nt;
#endif
      for (int64_t j = 0; j < cols; j++) {
        const double a1 = x1 ? x1[j] : 0.0, a2 = x2 ? x2[j] : 0.0;
        for (int64_t i = r0; i < r1; i++) {
          const double v = tsr__bc_load(data, dtype, i + j * ld);
          bad += !isfinite(v);
          if (y1 && x1) y1[i] += v * a1;
          if (y2 && x2) y2[i] += fabs(v) * a2;
        }
      }
    }
  }
  if (nonfinite) *nonfinite = bad;
  return TSR_OK;
}
