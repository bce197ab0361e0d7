/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Kernels for the local blocks of 2D block-cyclic matrices (the backend entries
 * rng_block_cyclic and matvec_f64, src/core/internal.h): the distributed random fill, so that
 * a job's inputs are generated where they live, and the float64 matrix-vector products of
 * Freivalds' check, so that verification reads the local blocks on the device instead of
 * copying them to the host.
 *
 * The fill computes element (i, j) of the global matrix as the uniform Philox value of index
 * i * n + j with tsr__philox_f32/f64 (src/core/philox.h, rounded operation by operation on the
 * device), the same bits as the CPU backend's batched fill (src/omp/bc_kernels.c).
 */
#include "gpu_internal.cuh"

#include "core/philox.h"

/* Global index of local index l (ScaLAPACK INDXL2G with source 0; tsr__bc_l2g on the host). */
__device__ __forceinline__ int64_t tsr__gpu_bc_l2g(int64_t l, int64_t nb, int p, int np) {
  return (l / nb * np + p) * nb + l % nb;
}

template <typename T>
__global__ void tsr__gpu_bc_rng_kernel(T *dst, tsr__bc_block l, uint64_t seed, double low,
                                       double high) {
  const int64_t total = l.mloc * l.nloc;
  const int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += nthreads) {
    const int64_t li = t % l.mloc, lj = t / l.mloc;
    const int64_t i = tsr__gpu_bc_l2g(li, l.mb, l.myrow, l.nprow);
    const int64_t j = tsr__gpu_bc_l2g(lj, l.nb, l.mycol, l.npcol);
    const uint64_t idx = (uint64_t)i * (uint64_t)l.n + (uint64_t)j;
    T v;
    if constexpr (tsr__gpu_is_complex<T>::value) {
      /* Complex element idx: parts 2 idx and 2 idx + 1 of the part dtype's stream (the CPU's
         rule, tsr__rng_fill_host). */
      if constexpr (sizeof(T) == 8)
        v = T(tsr__philox_f32(seed, 2 * idx, TSR__PHILOX_UNIFORM, low, high),
              tsr__philox_f32(seed, 2 * idx + 1, TSR__PHILOX_UNIFORM, low, high));
      else
        v = T(tsr__philox_f64(seed, 2 * idx, TSR__PHILOX_UNIFORM, low, high),
              tsr__philox_f64(seed, 2 * idx + 1, TSR__PHILOX_UNIFORM, low, high));
    } else if (sizeof(T) == 4) {
      v = (T)tsr__philox_f32(seed, idx, TSR__PHILOX_UNIFORM, low, high);
    } else {
      v = (T)tsr__philox_f64(seed, idx, TSR__PHILOX_UNIFORM, low, high);
    }
    dst[li + lj * l.lld] = v;
  }
}

tsr_status tsr__gpu_rng_block_cyclic(tsr_device dev, void *data, tsr_dtype dtype,
                                     const tsr__bc_block *l, uint64_t seed, double low,
                                     double high) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  const int64_t total = l->mloc * l->nloc;
  if (total == 0) return TSR_OK;
  const unsigned grid = tsr__gpu_grid_for(dev, total, TSR__GPU_BLOCK);
  if (dtype == TSR_F32)
    TSR__LAUNCH(tsr__gpu_bc_rng_kernel<float>, grid, TSR__GPU_BLOCK, s, (float *)data, *l, seed,
                low, high);
  else if (dtype == TSR_F64)
    TSR__LAUNCH(tsr__gpu_bc_rng_kernel<double>, grid, TSR__GPU_BLOCK, s, (double *)data, *l, seed,
                low, high);
  else if (dtype == TSR_C64)
    TSR__LAUNCH(tsr__gpu_bc_rng_kernel<tsr__gpu_c64>, grid, TSR__GPU_BLOCK, s, (tsr__gpu_c64 *)data,
                *l, seed, low, high);
  else if (dtype == TSR_C128)
    TSR__LAUNCH(tsr__gpu_bc_rng_kernel<tsr__gpu_c128>, grid, TSR__GPU_BLOCK, s,
                (tsr__gpu_c128 *)data, *l, seed, low, high);
  else
    return tsr__set_error(TSR_ERR_DTYPE, __func__,
                          "random matrices need f32, f64, c64 or c128, got %s",
                          tsr_dtype_name(dtype));
  TSR_GPU_CHECK_LAUNCH(s);
  return TSR_OK;
}

/* ---------------------------------------------------------------- matvec -------------- */

/* y = M x over column chunk blockIdx.y: thread row r sums columns [c0, c1) in float64 and
   writes its partial sums and non-finite count to part[(chunk * 3 + q) * rows + r]. Threads
   of a warp read consecutive rows of a column: coalesced. */
template <typename T>
__global__ void tsr__gpu_matvec_n_kernel(const T *m, int64_t rows, int64_t cols, int64_t ld,
                                         int64_t chunk_cols, const double *x1, const double *x2,
                                         double *part) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const int64_t c0 = (int64_t)blockIdx.y * chunk_cols;
  const int64_t c1 = c0 + chunk_cols < cols ? c0 + chunk_cols : cols;
  double s1 = 0.0, s2 = 0.0, bad = 0.0;
  for (int64_t c = c0; c < c1; c++) {
    const double v = (double)m[r + c * ld];
    bad += isfinite(v) ? 0.0 : 1.0;
    if (x1) s1 += v * x1[c];
    if (x2) s2 += fabs(v) * x2[c];
  }
  double *p = part + (int64_t)blockIdx.y * 3 * rows;
  p[r] = s1;
  p[rows + r] = s2;
  p[2 * rows + r] = bad;
}

/* Sums the chunks' partials: out[q * rows + r] = sum over chunks of part[(chunk*3+q)*rows+r]. */
__global__ void tsr__gpu_matvec_sum_kernel(const double *part, int64_t rows, int chunks,
                                           double *out) {
  const int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < 3 * rows; t += nthreads) {
    const int64_t q = t / rows, r = t % rows;
    double s = 0.0;
    for (int c = 0; c < chunks; c++)
      s += part[((int64_t)c * 3 + q) * rows + r];
    out[t] = s;
  }
}

/* y = M^T x: one block per stored column (grid-stride), its threads down the column, then a
   block reduction of the three sums; writes out[q * cols + j]. */
template <typename T>
__global__ void tsr__gpu_matvec_t_kernel(const T *m, int64_t rows, int64_t cols, int64_t ld,
                                         const double *x1, const double *x2, double *out) {
  __shared__ double red[3][TSR__GPU_BLOCK];
  for (int64_t j = blockIdx.x; j < cols; j += gridDim.x) {
    double s1 = 0.0, s2 = 0.0, bad = 0.0;
    for (int64_t i = threadIdx.x; i < rows; i += blockDim.x) {
      const double v = (double)m[i + j * ld];
      bad += isfinite(v) ? 0.0 : 1.0;
      if (x1) s1 += v * x1[i];
      if (x2) s2 += fabs(v) * x2[i];
    }
    red[0][threadIdx.x] = s1;
    red[1][threadIdx.x] = s2;
    red[2][threadIdx.x] = bad;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h /= 2) {
      if (threadIdx.x < h)
        for (int q = 0; q < 3; q++)
          red[q][threadIdx.x] += red[q][threadIdx.x + h];
      __syncthreads();
    }
    if (threadIdx.x == 0)
      for (int q = 0; q < 3; q++)
        out[q * cols + j] = red[q][0];
    __syncthreads();
  }
}

template <typename T>
static tsr_status tsr__gpu_matvec_launch(tsr_device dev, cudaStream_t s, const T *m, int64_t rows,
                                         int64_t cols, int64_t ld, bool trans, const double *x1,
                                         const double *x2, double *out, double *part, int chunks,
                                         int64_t chunk_cols) {
  if (trans) {
    const unsigned grid = tsr__gpu_grid_for(dev, cols * TSR__GPU_BLOCK, TSR__GPU_BLOCK);
    TSR__LAUNCH(tsr__gpu_matvec_t_kernel<T>, grid, TSR__GPU_BLOCK, s, m, rows, cols, ld, x1, x2,
                out);
  } else {
    dim3 grid((unsigned)((rows + TSR__GPU_BLOCK - 1) / TSR__GPU_BLOCK), (unsigned)chunks);
    TSR__LAUNCH(tsr__gpu_matvec_n_kernel<T>, grid, TSR__GPU_BLOCK, s, m, rows, cols, ld, chunk_cols,
                x1, x2, part);
    TSR_GPU_CHECK_LAUNCH(s);
    const unsigned g2 = tsr__gpu_grid_for(dev, 3 * rows, TSR__GPU_BLOCK);
    TSR__LAUNCH(tsr__gpu_matvec_sum_kernel, g2, TSR__GPU_BLOCK, s, part, rows, chunks, out);
  }
  TSR_GPU_CHECK_LAUNCH(s);
  return TSR_OK;
}

tsr_status tsr__gpu_matvec_f64(tsr_device dev, const void *data, tsr_dtype dtype, int64_t rows,
                               int64_t cols, int64_t ld, bool trans, const double *x1,
                               const double *x2, double *y1, double *y2, int64_t *nonfinite) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  TSR_CHECK(dtype == TSR_F32 || dtype == TSR_F64, TSR_ERR_DTYPE, "need f32 or f64, got %s",
            tsr_dtype_name(dtype));
  const int64_t in = trans ? rows : cols, out_n = trans ? cols : rows;
  if (out_n == 0 || in == 0) {
    for (int64_t r = 0; y1 && r < out_n; r++)
      y1[r] = 0.0;
    for (int64_t r = 0; y2 && r < out_n; r++)
      y2[r] = 0.0;
    if (nonfinite) *nonfinite = 0;
    return TSR_OK;
  }
  /* Column chunks of the untransposed product: enough blocks to fill the device. */
  const int64_t row_blocks = (rows + TSR__GPU_BLOCK - 1) / TSR__GPU_BLOCK;
  const int64_t want = (int64_t)tsr__gpu_props_of(dev.index)->multiProcessorCount * 8;
  int64_t chunks = trans ? 1 : (want + row_blocks - 1) / row_blocks;
  if (chunks > 64) chunks = 64;
  if (chunks > cols) chunks = cols;
  if (chunks < 1) chunks = 1;
  const int64_t chunk_cols = (cols + chunks - 1) / chunks;
  chunks = (cols + chunk_cols - 1) / chunk_cols;
  /* One scratch block: x1, x2 (in each), the result (3 * out_n), the partials. */
  const size_t n_x = (size_t)in, n_out = 3 * (size_t)out_n;
  const size_t n_part = trans ? 0 : 3 * (size_t)rows * (size_t)chunks;
  const size_t bytes = (2 * n_x + n_out + n_part) * sizeof(double);
  double *scratch = NULL;
  TSR_CALL(tsr__gpu_scratch_alloc(dev, bytes, (void **)&scratch));
  double *dx1 = scratch, *dx2 = scratch + n_x, *dout = scratch + 2 * n_x, *dpart = dout + n_out;
  double *host = (double *)malloc(n_out * sizeof(double));
  tsr_status st =
      host ? TSR_OK : tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "%zu result values", n_out);
  if (st == TSR_OK && x1) st = tsr__gpu_memcpy_h2d(dev, dx1, x1, n_x * sizeof(double));
  if (st == TSR_OK && x2) st = tsr__gpu_memcpy_h2d(dev, dx2, x2, n_x * sizeof(double));
  if (st == TSR_OK) {
    if (dtype == TSR_F32)
      st = tsr__gpu_matvec_launch<float>(dev, s, (const float *)data, rows, cols, ld, trans,
                                         x1 ? dx1 : NULL, x2 ? dx2 : NULL, dout, dpart, (int)chunks,
                                         chunk_cols);
    else
      st = tsr__gpu_matvec_launch<double>(dev, s, (const double *)data, rows, cols, ld, trans,
                                          x1 ? dx1 : NULL, x2 ? dx2 : NULL, dout, dpart,
                                          (int)chunks, chunk_cols);
  }
  if (st == TSR_OK) st = tsr__gpu_memcpy_d2h(dev, host, dout, n_out * sizeof(double));
  if (st == TSR_OK) {
    double bad = 0.0;
    for (int64_t r = 0; r < out_n; r++) {
      if (y1 && x1) y1[r] = host[r];
      if (y2 && x2) y2[r] = host[out_n + r];
      bad += host[2 * out_n + r];
    }
    if (nonfinite) *nonfinite = (int64_t)bad;
  }
  free(host);
  tsr__gpu_scratch_free(dev, scratch, bytes);
  return st;
}
