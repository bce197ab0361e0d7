/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The backend entry copy_rects (src/core/internal.h, tsr__dev_copy_rects): a list of strided
 * rectangles copied (or added, or conjugated) device to device in one kernel launch on the
 * device's stream (per 56 rectangles). The block-cyclic exchange (src/mpi/redistribute.c)
 * packs and unpacks its messages with it: one launch per message direction instead of one
 * strided copy per (column segment, row segment) pair.
 *
 * Launch: blockIdx.y walks the rectangles, blockIdx.x and the threads the elements of one
 * rectangle in a grid-stride loop, column-major inside the rectangle. The list travels in the
 * kernel's parameters, TSR__GPU_RECTS_INLINE rectangles a launch (3.5 KiB of the 4 KiB CUDA and
 * HIP allow), so nothing is copied between host and device for it: one launch for up to 56
 * rectangles, ceil(n / 56) for longer lists.
 */
#include <string.h>

#include "gpu_internal.cuh"

#define TSR__GPU_RECTS_INLINE 56 /* 56 * 64 bytes of parameters */

struct tsr__gpu_rects_inline {
  tsr__rect r[TSR__GPU_RECTS_INLINE];
};

/* An element is PARTS values of P (complex: 2). OP: TSR__RECT_COPY, _ADD, _CONJ. */
template <typename P, int PARTS, int OP>
__global__ void tsr__gpu_rects_kernel(P *dst, const P *src, tsr__gpu_rects_inline inl, int n) {
  const int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  for (int q = blockIdx.y; q < n; q += gridDim.y) {
    const tsr__rect r = inl.r[q];
    const int64_t total = r.rows * r.cols;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += nthreads) {
      const int64_t i = t % r.rows, j = t / r.rows;
      P *o = dst + (r.dst_off + i * r.dst_rs + j * r.dst_cs) * PARTS;
      const P *x = src + (r.src_off + i * r.src_rs + j * r.src_cs) * PARTS;
#pragma unroll
      for (int p = 0; p < PARTS; p++) {
        if (OP == TSR__RECT_ADD)
          o[p] += x[p];
        else if (OP == TSR__RECT_CONJ && p == PARTS - 1)
          o[p] = -x[p];
        else
          o[p] = x[p];
      }
    }
  }
}

template <typename P, int PARTS, int OP>
static void tsr__gpu_rects_launch(dim3 grid, cudaStream_t s, void *dst, const void *src,
                                  const tsr__gpu_rects_inline &inl, int n) {
  TSR__LAUNCH((tsr__gpu_rects_kernel<P, PARTS, OP>), grid, TSR__GPU_BLOCK, s, (P *)dst,
              (const P *)src, inl, n);
}

/* 16-byte elements copied as two 8-byte values (c128 without arithmetic). */
template <int OP>
static void tsr__gpu_rects_dispatch(tsr_dtype dtype, dim3 grid, cudaStream_t s, void *dst,
                                    const void *src, const tsr__gpu_rects_inline &inl, int n) {
  switch (dtype) {
  case TSR_F32: tsr__gpu_rects_launch<float, 1, OP>(grid, s, dst, src, inl, n); break;
  case TSR_F64: tsr__gpu_rects_launch<double, 1, OP>(grid, s, dst, src, inl, n); break;
  case TSR_C64: tsr__gpu_rects_launch<float, 2, OP>(grid, s, dst, src, inl, n); break;
  case TSR_C128: tsr__gpu_rects_launch<double, 2, OP>(grid, s, dst, src, inl, n); break;
  default: break; /* integers: copies only, below */
  }
}

/* One launch for n <= TSR__GPU_RECTS_INLINE rectangles. */
static void tsr__gpu_rects_chunk(cudaStream_t s, void *dst, const void *src, tsr_dtype dtype,
                                 const tsr__rect *r, int n, tsr__rect_op op) {
  /* Blocks per rectangle from the mean rectangle, at most 64; rectangles along y. */
  int64_t total = 0;
  for (int q = 0; q < n; q++)
    total += r[q].rows * r[q].cols;
  if (total == 0) return;
  const int64_t mean = (total + n - 1) / n;
  int64_t gx = (mean + TSR__GPU_BLOCK - 1) / TSR__GPU_BLOCK;
  gx = gx < 1 ? 1 : gx > 64 ? 64 : gx;
  const dim3 grid((unsigned)gx, (unsigned)n);
  tsr__gpu_rects_inline inl;
  memset(&inl, 0, sizeof inl);
  memcpy(inl.r, r, (size_t)n * sizeof *r);
  const size_t es = tsr__dtype_size(dtype);
  if (op == TSR__RECT_ADD)
    tsr__gpu_rects_dispatch<TSR__RECT_ADD>(dtype, grid, s, dst, src, inl, n);
  else if (op == TSR__RECT_CONJ)
    tsr__gpu_rects_dispatch<TSR__RECT_CONJ>(dtype, grid, s, dst, src, inl, n);
  else if (es == 4)
    tsr__gpu_rects_launch<uint32_t, 1, TSR__RECT_COPY>(grid, s, dst, src, inl, n);
  else if (es == 8)
    tsr__gpu_rects_launch<uint64_t, 1, TSR__RECT_COPY>(grid, s, dst, src, inl, n);
  else
    tsr__gpu_rects_launch<uint64_t, 2, TSR__RECT_COPY>(grid, s, dst, src, inl, n);
}

tsr_status tsr__gpu_copy_rects(tsr_device dev, void *dst, const void *src, tsr_dtype dtype,
                               const tsr__rect *r, int64_t n, tsr__rect_op op) {
  if (n <= 0) return TSR_OK;
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  for (int64_t q = 0; q < n; q += TSR__GPU_RECTS_INLINE) {
    const int64_t left = n - q;
    tsr__gpu_rects_chunk(s, dst, src, dtype, r + q,
                         (int)(left < TSR__GPU_RECTS_INLINE ? left : TSR__GPU_RECTS_INLINE), op);
  }
  TSR_GPU_CHECK_LAUNCH(s);
  return TSR_OK;
}
