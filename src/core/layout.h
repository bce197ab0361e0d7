/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Axis collapsing and flat-index offsets for strided N-d loops: the one copy used by the CPU
 * backend's loop (src/omp/loop.c) and by the GPU kernels (src/gpu/gpu_internal.cuh). Plain C,
 * header-only so that the GPU compilers (nvcc, hipcc) can inline it into device code.
 *
 * Several operands share one shape; operand k has its own strides (in elements). Size-1 axes
 * are dropped (their stride never matters) and axes d, d+1 are merged whenever every operand
 * has stride[d] == shape[d+1] * stride[d+1], so a C-contiguous operand set becomes one axis.
 */
#ifndef TSR_CORE_LAYOUT_H
#define TSR_CORE_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "tessera/array.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TSR__HOST_DEVICE __host__ __device__
#else
#define TSR__HOST_DEVICE
#endif

/*
 * Collapses `shape` (ndim 0..TSR_MAX_DIMS) for nops operands with strides[k][0..ndim).
 * Writes the kept axes to out_shape / out_strides[k] (C order) and the element count to
 * *size; returns the number of kept axes, at least 1 (a scalar, or a shape of size-1 axes,
 * becomes one axis of length 1 and stride 1).
 */
static inline int tsr__collapse_axes(int ndim, const int64_t *shape, int nops,
                                     const int64_t *const strides[],
                                     int64_t out_shape[TSR_MAX_DIMS],
                                     int64_t (*out_strides)[TSR_MAX_DIMS], int64_t *size) {
  int nd = 0;
  *size = 1;
  for (int d = 0; d < ndim; d++) {
    *size *= shape[d];
    if (shape[d] == 1) continue;
    bool merge = nd > 0;
    for (int k = 0; k < nops && merge; k++)
      merge = out_strides[k][nd - 1] == shape[d] * strides[k][d];
    if (merge) {
      out_shape[nd - 1] *= shape[d];
      for (int k = 0; k < nops; k++)
        out_strides[k][nd - 1] = strides[k][d];
    } else {
      out_shape[nd] = shape[d];
      for (int k = 0; k < nops; k++)
        out_strides[k][nd] = strides[k][d];
      nd++;
    }
  }
  if (nd == 0) {
    out_shape[0] = 1;
    for (int k = 0; k < nops; k++)
      out_strides[k][0] = 1;
    nd = 1;
  }
  return nd;
}

/* Element offsets, per operand, of the element with C-order flat index `flat` of a collapsed
   shape. */
TSR__HOST_DEVICE static inline void tsr__flat_offsets(int ndim, const int64_t *shape, int nops,
                                                      const int64_t (*strides)[TSR_MAX_DIMS],
                                                      int64_t flat, int64_t off[]) {
  for (int k = 0; k < nops; k++)
    off[k] = 0;
  for (int d = ndim - 1; d >= 0; d--) {
    const int64_t i = flat % shape[d];
    flat /= shape[d];
    for (int k = 0; k < nops; k++)
      off[k] += i * strides[k][d];
  }
}

#endif /* TSR_CORE_LAYOUT_H */
