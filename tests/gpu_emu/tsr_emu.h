/* SPDX-License-Identifier: BSD-3-Clause */
// Host emulation of the CUDA subset src/gpu uses, for tests/gpu_emu/run.sh (see there).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
#include <memory>

using std::cos;
using std::exp;
using std::fabs;
using std::isfinite;
using std::log;
using std::pow;
using std::sin;
using std::sqrt;
using std::tanh;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#define CUDA_EMU 1

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
extern thread_local dim3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;
extern int warpSize;
extern int tsr_emu_sms;

void __syncthreads();
double tsr_emu_shfl_d(double v, unsigned delta, int width);
long long tsr_emu_shfl_ll(long long v, unsigned delta, int width);
template <typename T> T __shfl_down_sync(unsigned, T v, unsigned delta, int width) {
  if constexpr (sizeof(T) == 8 && std::is_floating_point<T>::value)
    return (T)tsr_emu_shfl_d(v, delta, width);
  else if constexpr (std::is_floating_point<T>::value)
    return (T)tsr_emu_shfl_d((double)v, delta, width);
  else
    return (T)tsr_emu_shfl_ll((long long)v, delta, width);
}
inline double __dmul_rn(double a, double b) {
  volatile double r = a * b;
  return r;
}
inline double __dadd_rn(double a, double b) {
  volatile double r = a + b;
  return r;
}

void tsr_emu_launch(dim3 grid, dim3 block, std::function<void()> body);

// The launch form of src/gpu (gpu_port.cuh): TSR__LAUNCH(kernel, grid, block, stream, args...)
// runs kernel(args...) for every thread of the grid before it returns (the stream is not
// modelled). The arguments are evaluated once, at the launch, as CUDA evaluates them.
template <typename... P> struct tsr_emu_launcher {
  dim3 grid, block;
  void (*kernel)(P...);
  // The kernel's own parameter types, so that arguments convert as in a CUDA launch (NULL to
  // a pointer, an int to an int64_t).
  void operator()(P... args) const {
    tsr_emu_launch(grid, block, [&]() { kernel(args...); });
  }
};
template <typename... P>
tsr_emu_launcher<P...> tsr_emu_make_launcher(dim3 grid, dim3 block, void (*kernel)(P...)) {
  return tsr_emu_launcher<P...>{grid, block, kernel};
}
#define TSR__LAUNCH(kernel, grid, block, stream, ...)                                              \
  ((void)(stream), tsr_emu_make_launcher(dim3(grid), dim3(block), kernel)(__VA_ARGS__))

typedef int cudaError_t;
enum {
  cudaSuccess = 0,
  cudaErrorMemoryAllocation = 2,
  cudaErrorNoDevice = 100,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchTimeout = 702,
  cudaErrorAssert = 710,
  cudaErrorLaunchFailure = 719,
  cudaErrorECCUncorrectable = 214
};
typedef struct tsr_emu_stream *cudaStream_t;
typedef struct tsr_emu_event *cudaEvent_t;
enum { cudaStreamNonBlocking = 1, cudaMemAttachGlobal = 1 };
enum cudaMemcpyKind {
  cudaMemcpyDefault,
  cudaMemcpyDeviceToDevice,
  cudaMemcpyHostToDevice,
  cudaMemcpyDeviceToHost
};
struct cudaDeviceProp {
  char name[256];
  int major, minor;
  size_t totalGlobalMem;
  int warpSize;
  int multiProcessorCount;
  int concurrentManagedAccess;
};
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int i);
cudaError_t cudaSetDevice(int);
cudaError_t cudaGetDevice(int *);
cudaError_t cudaPeekAtLastError();
cudaError_t cudaGetLastError();
const char *cudaGetErrorString(cudaError_t);
const char *cudaGetErrorName(cudaError_t);
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaMallocManaged(void **p, size_t n, int);
cudaError_t cudaMallocHost(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemcpy2DAsync(void *d, size_t dpitch, const void *s, size_t spitch, size_t width,
                              size_t rows, cudaMemcpyKind, cudaStream_t);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, int);
cudaError_t cudaStreamDestroy(cudaStream_t);
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned);
cudaError_t cudaStreamSynchronize(cudaStream_t);
cudaError_t cudaEventCreate(cudaEvent_t *);
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t);
cudaError_t cudaEventSynchronize(cudaEvent_t);
cudaError_t cudaEventQuery(cudaEvent_t);
cudaError_t cudaEventElapsedTime(float *, cudaEvent_t, cudaEvent_t);
cudaError_t cudaEventDestroy(cudaEvent_t);
