/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Portability layer of the GPU backend: what a name-for-name translation of CUDA to HIP
 * cannot cover. The .cu/.cuh files are CUDA; cmake/TesseraHipify.cmake rewrites the CUDA
 * runtime and cuBLAS names to HIP ones at build time. The few places where the two
 * platforms differ in behaviour, not in name, branch on __HIPCC__ here:
 *  - warp size: 32 on NVIDIA, 64 on most AMD GPUs (wavefront). Device code uses the built-in
 *    `warpSize`; the host queries it per device (tsr__gpu_props_of) to size blocks.
 *  - shuffles: CUDA needs the *_sync forms with a lane mask; HIP 5.x has only the maskless
 *    ones (wavefronts execute in lock step).
 *  - the architecture string ("sm_90" from the compute capability, "gfx90a" from
 *    gcnArchName).
 */
#ifndef TSR_GPU_PORT_CUH
#define TSR_GPU_PORT_CUH

#include <cuda_runtime.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/internal.h"

#if defined(__HIPCC__)
#define TSR__GPU_KIND TSR_DEVICE_HIP
#define TSR__GPU_NAME "hip"
#define TSR__GPU_RUNTIME "HIP"
#else
#define TSR__GPU_KIND TSR_DEVICE_CUDA
#define TSR__GPU_NAME "cuda"
#define TSR__GPU_RUNTIME "CUDA"
#endif

/* A kernel launch on a stream, the one form every launch of src/gpu takes:
     TSR__LAUNCH(kernel, grid, block, stream, arguments...);
   A template instance with commas goes in parentheses: TSR__LAUNCH((k<Op, T, true>), ...).
   No launch uses dynamic shared memory. CUDA and HIP (hipcc takes the triple chevrons as they
   are) expand it to kernel<<<grid, block, 0, stream>>>(arguments...); the host emulator of the
   tests (tests/gpu_emu/tsr_emu.h, included first) defines it to run the kernel on host fibers,
   so the kernels compile there unchanged. */
#ifndef TSR__LAUNCH
#define TSR__LAUNCH(kernel, grid, block, stream, ...)                                              \
  kernel<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#endif

/* Largest warp/wavefront any supported GPU has: sizes per-warp scratch in shared memory. */
#define TSR__GPU_MAX_WARP 64
/* Threads per block of the elementwise and reduction kernels: a multiple of 32 and 64. */
#define TSR__GPU_BLOCK 256

/* Shuffle down within a warp of `width` lanes (a power of two <= warpSize), for the
   arithmetic types the runtimes overload (int, long long, their unsigned forms, float,
   double). Every lane of the warp must call it (the CUDA form names all 32 lanes in its
   mask). */
template <typename T> __device__ __forceinline__ T tsr__shfl_down(T v, unsigned delta, int width) {
#if defined(__HIPCC__)
  return __shfl_down(v, delta, width);
#else
  return __shfl_down_sync(0xffffffffu, v, delta, width);
#endif
}

/* Most devices one process addresses: sizes the per-device state of the runtime and of the
   vendor BLAS handles. */
#define TSR__GPU_MAX_DEVICES 64

/* The architecture name of a device: "sm_90" or "gfx90a" (target features dropped). */
static inline void tsr__gpu_arch_string(const cudaDeviceProp *prop, char *buf, size_t size) {
#if defined(__HIPCC__)
  size_t i = 0;
  for (; i + 1 < size && prop->gcnArchName[i] != '\0' && prop->gcnArchName[i] != ':'; i++)
    buf[i] = prop->gcnArchName[i];
  buf[i] = '\0';
#else
  snprintf(buf, size, "sm_%d%d", prop->major, prop->minor);
#endif
}

#endif /* TSR_GPU_PORT_CUH */
