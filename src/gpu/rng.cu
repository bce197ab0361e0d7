/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Random arrays and arange: element i is a pure function of its index, computed with the
 * same code as the CPU (src/core/philox.h), so uniform values match the CPU bit for bit.
 *
 * Bit-exactness needs the double arithmetic to be rounded operation by operation: philox.h
 * uses __dmul_rn/__dadd_rn on the device, arange below does the same, and the HIP build
 * compiles this file with -ffp-contract=off (hip-clang may fuse even the _rn helpers,
 * which are plain operators there).
 */
#include "gpu_internal.cuh"

#include "core/philox.h"

/* Elements per Philox block and the element of a computed block, per dtype. */
template <typename T> struct tsr__gpu_philox;
template <> struct tsr__gpu_philox<float> {
  static const int per_block = 4;
  static __device__ __forceinline__ float lane(const uint32_t w[4], unsigned l, int dist, double p0,
                                               double p1) {
    return tsr__philox_f32_lane(w, l, dist, p0, p1);
  }
};
template <> struct tsr__gpu_philox<double> {
  static const int per_block = 2;
  static __device__ __forceinline__ double lane(const uint32_t w[4], unsigned l, int dist,
                                                double p0, double p1) {
    return tsr__philox_f64_lane(w, l, dist, p0, p1);
  }
};

/* Elements [offset, offset + n) of the stream, n > 0: each thread computes whole Philox
   blocks (one 10-round evaluation for 4 f32 or 2 f64 values, held in registers: the lanes
   are unrolled, so w is never indexed at run time) and writes the block's elements that fall
   in the range. */
template <typename T>
__global__ void tsr__gpu_rng_kernel(T *dst, int64_t n, uint64_t seed, uint64_t offset, int dist,
                                    double p0, double p1) {
  constexpr int PER = tsr__gpu_philox<T>::per_block;
  const uint64_t first = offset / PER, last = (offset + (uint64_t)n - 1) / PER;
  const uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
  for (uint64_t b = first + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; b <= last;
       b += nthreads) {
    uint32_t w[4];
    tsr__philox_block(seed, b, w);
#pragma unroll
    for (int l = 0; l < PER; l++) {
      const uint64_t idx = b * PER + (uint64_t)l;
      if (idx >= offset && idx - offset < (uint64_t)n)
        dst[idx - offset] = tsr__gpu_philox<T>::lane(w, (unsigned)l, dist, p0, p1);
    }
  }
}

static int64_t tsr__gpu_view_size(const tsr__view *v) {
  int64_t n = 1;
  for (int d = 0; d < v->ndim; d++)
    n *= v->shape[d];
  return n;
}

tsr_status tsr__gpu_rng(tsr_device dev, const tsr__view *dst, uint64_t seed, uint64_t offset,
                        tsr__rng_dist dist, double p0, double p1) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  int64_t n = tsr__gpu_view_size(dst);
  if (n == 0) return TSR_OK;
  unsigned grid = tsr__gpu_grid_for(dev, n / 2 + 1, TSR__GPU_BLOCK); /* ~ Philox blocks */
  int d = dist == TSR__RNG_NORMAL ? TSR__PHILOX_NORMAL : TSR__PHILOX_UNIFORM;
  switch (dst->dtype) {
  case TSR_F32:
    TSR__LAUNCH(tsr__gpu_rng_kernel<float>, grid, TSR__GPU_BLOCK, s, (float *)dst->data, n, seed,
                offset, d, p0, p1);
    break;
  case TSR_F64:
    TSR__LAUNCH(tsr__gpu_rng_kernel<double>, grid, TSR__GPU_BLOCK, s, (double *)dst->data, n, seed,
                offset, d, p0, p1);
    break;
  /* Complex element i: real part from stream index 2i, imaginary part from 2i + 1 of its part
     type's stream (the CPU's rule, core/philox.c), so the array is the real one of 2n parts
     starting at 2 offset. */
  case TSR_C64:
    grid = tsr__gpu_grid_for(dev, n + 1, TSR__GPU_BLOCK);
    TSR__LAUNCH(tsr__gpu_rng_kernel<float>, grid, TSR__GPU_BLOCK, s, (float *)dst->data, 2 * n,
                seed, 2 * offset, d, p0, p1);
    break;
  case TSR_C128:
    grid = tsr__gpu_grid_for(dev, n + 1, TSR__GPU_BLOCK);
    TSR__LAUNCH(tsr__gpu_rng_kernel<double>, grid, TSR__GPU_BLOCK, s, (double *)dst->data, 2 * n,
                seed, 2 * offset, d, p0, p1);
    break;
  default:
    return tsr__set_error(TSR_ERR_DTYPE, __func__,
                          "random arrays need f32, f64, c64 or c128, got %s",
                          tsr_dtype_name(dst->dtype));
  }
  TSR_GPU_CHECK_LAUNCH(s);
  return TSR_OK;
}

/* start + i*step in double, rounded per operation like the C code (no FMA), then
   converted to the dtype. */
template <typename T>
__global__ void tsr__gpu_arange_kernel(T *dst, int64_t n, double start, double step) {
  int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += nthreads)
    dst[i] = tsr__gpu_convert<T, double>(__dadd_rn(start, __dmul_rn((double)i, step)));
}

tsr_status tsr__gpu_arange(tsr_device dev, const tsr__view *dst, double start, double step) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  int64_t n = tsr__gpu_view_size(dst);
  if (n == 0) return TSR_OK;
  unsigned grid = tsr__gpu_grid_for(dev, n, TSR__GPU_BLOCK);
  TSR__GPU_DTYPE_SWITCH(dst->dtype, T, {
    TSR__LAUNCH(tsr__gpu_arange_kernel<T>, grid, TSR__GPU_BLOCK, s, (T *)dst->data, n, start, step);
    TSR_GPU_CHECK_LAUNCH(s);
    return TSR_OK;
  });
  return tsr__set_error(TSR_ERR_DTYPE, __func__, "dtype %d is not supported on %s", (int)dst->dtype,
                        TSR__GPU_NAME);
}
