/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reductions along one axis (reduce-all arrives as a contiguous 1-D view, axis 0).
 *
 * Two shapes of work:
 *  - many outputs, short or strided axis: one thread per output walks the axis (neighbouring
 *    threads read neighbouring elements when the axis is not the innermost one);
 *  - few outputs, long axis: blocks reduce chunks of the axis (block tree: warp shuffles,
 *    then one value per warp through shared memory), and when one block per output does not
 *    fill the GPU the axis is split over several blocks whose partials a second kernel
 *    combines.
 * Shuffles use the device's warp size (`warpSize`: 32 on NVIDIA, 64 on AMD wavefronts), so
 * the same tree is correct on both. Block size 256 is a multiple of either.
 *
 * Semantics (internal.h, ops.h, as the CPU backend): f32 sums and all means accumulate in
 * double; integer sums wrap (modulo 2^64, then the dtype); mean of integers is f64; max/min
 * propagate NaN (TSR__MAXIMUM of opdefs.h); argmax is the first index of the maximum, and the
 * first NaN if there is one (NumPy). Combination operators are associative and commutative
 * (argmax breaks ties by the smaller index), so the order of the tree does not change
 * max/min/argmax results.
 */
#include "gpu_internal.cuh"

#include "core/opdefs.h"

#include <limits.h>
#include <string.h>

/* ---------------------------------------------------------------- accumulators -------- */

template <typename T> struct tsr__gpu_argmax_acc {
  T v;
  long long i;
};

__device__ __forceinline__ float tsr__gpu_shfl_acc(float v, unsigned d, int w) {
  return tsr__shfl_down(v, d, w);
}
__device__ __forceinline__ double tsr__gpu_shfl_acc(double v, unsigned d, int w) {
  return tsr__shfl_down(v, d, w);
}
__device__ __forceinline__ int32_t tsr__gpu_shfl_acc(int32_t v, unsigned d, int w) {
  return (int32_t)tsr__shfl_down((int)v, d, w);
}
__device__ __forceinline__ int64_t tsr__gpu_shfl_acc(int64_t v, unsigned d, int w) {
  return (int64_t)tsr__shfl_down((long long)v, d, w);
}
__device__ __forceinline__ unsigned long long tsr__gpu_shfl_acc(unsigned long long v, unsigned d,
                                                                int w) {
  return tsr__shfl_down(v, d, w);
}
__device__ __forceinline__ tsr__gpu_c128 tsr__gpu_shfl_acc(tsr__gpu_c128 v, unsigned d, int w) {
  return tsr__gpu_c128(tsr__shfl_down(v.re, d, w), tsr__shfl_down(v.im, d, w));
}
template <typename T>
__device__ __forceinline__ tsr__gpu_argmax_acc<T> tsr__gpu_shfl_acc(tsr__gpu_argmax_acc<T> v,
                                                                    unsigned d, int w) {
  tsr__gpu_argmax_acc<T> r;
  r.v = tsr__gpu_shfl_acc(v.v, d, w);
  r.i = tsr__shfl_down(v.i, d, w);
  return r;
}

template <typename T> struct tsr__gpu_sum_acc { typedef unsigned long long type; };
template <> struct tsr__gpu_sum_acc<float> { typedef double type; };
template <> struct tsr__gpu_sum_acc<double> { typedef double type; };

template <typename T> __device__ __forceinline__ T tsr__gpu_lowest();
template <> __device__ __forceinline__ float tsr__gpu_lowest<float>() {
  return -INFINITY;
}
template <> __device__ __forceinline__ double tsr__gpu_lowest<double>() {
  return -INFINITY;
}
template <> __device__ __forceinline__ int32_t tsr__gpu_lowest<int32_t>() {
  return INT32_MIN;
}
template <> __device__ __forceinline__ int64_t tsr__gpu_lowest<int64_t>() {
  return INT64_MIN;
}
template <typename T> __device__ __forceinline__ T tsr__gpu_highest();
template <> __device__ __forceinline__ float tsr__gpu_highest<float>() {
  return INFINITY;
}
template <> __device__ __forceinline__ double tsr__gpu_highest<double>() {
  return INFINITY;
}
template <> __device__ __forceinline__ int32_t tsr__gpu_highest<int32_t>() {
  return INT32_MAX;
}
template <> __device__ __forceinline__ int64_t tsr__gpu_highest<int64_t>() {
  return INT64_MAX;
}

/* Each reduction: Acc (accumulator), Out (result type), identity, make (from element j),
   combine, finalize (with the axis length). */
template <typename T> struct tsr__gpu_red_sum {
  static const bool indexed = false; /* make() ignores the element's index */
  typedef typename tsr__gpu_sum_acc<T>::type Acc;
  typedef T Out;
  static __device__ __forceinline__ Acc identity() { return (Acc)0; }
  static __device__ __forceinline__ Acc make(T x, int64_t) {
    if constexpr (tsr__gpu_is_float<T>::value)
      return (Acc)x;
    else
      return (Acc)(long long)x; /* sign-extend, then wrap modulo 2^64 */
  }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return a + b; }
  static __device__ __forceinline__ Out finalize(Acc a, int64_t) {
    if constexpr (tsr__gpu_is_float<T>::value)
      return (Out)a;
    else
      return (Out)(long long)a;
  }
};

/* Complex sums and means accumulate both parts in double (c64 as f32 does), in the order of the
   real reductions' trees; the result has the input's dtype. */
template <typename T, bool MEAN> struct tsr__gpu_red_csum {
  static const bool indexed = false;
  typedef tsr__gpu_c128 Acc;
  typedef T Out;
  static __device__ __forceinline__ Acc identity() { return Acc(0.0, 0.0); }
  static __device__ __forceinline__ Acc make(T x, int64_t) {
    return Acc((double)x.re, (double)x.im);
  }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return a + b; }
  static __device__ __forceinline__ Out finalize(Acc a, int64_t len) {
    typedef typename tsr__gpu_real<T>::type R;
    if (MEAN) return Out((R)(a.re / (double)len), (R)(a.im / (double)len));
    return Out((R)a.re, (R)a.im);
  }
};

template <typename T> struct tsr__gpu_mean_out { typedef double type; };
template <> struct tsr__gpu_mean_out<float> { typedef float type; };

/* Means accumulate in double for every dtype, as the CPU backend does. */
template <typename T> struct tsr__gpu_red_mean {
  static const bool indexed = false;
  typedef double Acc;
  typedef typename tsr__gpu_mean_out<T>::type Out;
  static __device__ __forceinline__ Acc identity() { return 0.0; }
  static __device__ __forceinline__ Acc make(T x, int64_t) { return (double)x; }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return a + b; }
  /* len 0 gives 0/0 = NaN, as the contract asks. */
  static __device__ __forceinline__ Out finalize(Acc a, int64_t len) {
    return (Out)(a / (double)len);
  }
};

template <typename T> struct tsr__gpu_red_max {
  static const bool indexed = false;
  typedef T Acc;
  typedef T Out;
  static __device__ __forceinline__ Acc identity() { return tsr__gpu_lowest<T>(); }
  static __device__ __forceinline__ Acc make(T x, int64_t) { return x; }
  static __device__ __forceinline__ Acc combine(Acc x, Acc y) { return TSR__MAXIMUM(x, y); }
  static __device__ __forceinline__ Out finalize(Acc a, int64_t) { return a; }
};

template <typename T> struct tsr__gpu_red_min {
  static const bool indexed = false;
  typedef T Acc;
  typedef T Out;
  static __device__ __forceinline__ Acc identity() { return tsr__gpu_highest<T>(); }
  static __device__ __forceinline__ Acc make(T x, int64_t) { return x; }
  static __device__ __forceinline__ Acc combine(Acc x, Acc y) { return TSR__MINIMUM(x, y); }
  static __device__ __forceinline__ Out finalize(Acc a, int64_t) { return a; }
};

template <typename T> struct tsr__gpu_red_argmax {
  static const bool indexed = true;
  typedef tsr__gpu_argmax_acc<T> Acc;
  typedef int64_t Out;
  static __device__ __forceinline__ Acc identity() {
    Acc a;
    a.v = tsr__gpu_lowest<T>();
    a.i = LLONG_MAX;
    return a;
  }
  static __device__ __forceinline__ Acc make(T x, int64_t j) {
    Acc a;
    a.v = x;
    a.i = (long long)j;
    return a;
  }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    bool a_nan = a.v != a.v, b_nan = b.v != b.v;
    if (a_nan || b_nan) {
      if (a_nan && b_nan) return a.i <= b.i ? a : b;
      return a_nan ? a : b;
    }
    if (a.v > b.v) return a;
    if (b.v > a.v) return b;
    return a.i <= b.i ? a : b;
  }
  static __device__ __forceinline__ Out finalize(Acc a, int64_t) { return (Out)a.i; }
};

/* ---------------------------------------------------------------- kernels ------------- */

/* Reduces v over the block; the result is valid in thread 0. Every thread must call it. */
template <class R>
__device__ __forceinline__ typename R::Acc tsr__gpu_block_reduce(typename R::Acc v,
                                                                 typename R::Acc *scratch) {
  const int ws = warpSize;
  const int lane = (int)threadIdx.x % ws, warp = (int)threadIdx.x / ws;
  const int nwarps = (int)blockDim.x / ws;
  for (int o = ws / 2; o > 0; o >>= 1)
    v = R::combine(v, tsr__gpu_shfl_acc(v, (unsigned)o, ws));
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < nwarps ? scratch[lane] : R::identity();
    for (int o = ws / 2; o > 0; o >>= 1)
      v = R::combine(v, tsr__gpu_shfl_acc(v, (unsigned)o, ws));
  }
  __syncthreads(); /* scratch may be reused by the caller's next round */
  return v;
}

/* One thread per output. `outer` maps an output index to the offset of its first element. */
template <class R, typename T>
__global__ void tsr__gpu_reduce_thread(typename R::Out *out, const T *a, tsr__gpu_layout outer,
                                       int64_t len, int64_t stride) {
  int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < outer.size; o += nthreads) {
    int64_t off[1];
    tsr__gpu_offsets<1>(outer, o, off);
    const T *p = a + off[0];
    typename R::Acc acc = R::identity();
    for (int64_t j = 0; j < len; j++)
      acc = R::combine(acc, R::make(p[j * stride], j));
    out[o] = R::finalize(acc, len);
  }
}

/*
 * This thread's share of elements [j0, j1) of a row with the given stride, for a block-wide
 * reduction. Contiguous rows of index-free reductions (sum, mean, max, min) are read as 16-byte
 * vectors into four independent accumulators (four loads in flight per thread), with scalar
 * head and tail; otherwise element by element.
 */
template <class R, typename T>
__device__ __forceinline__ typename R::Acc tsr__gpu_reduce_span(const T *p, int64_t j0, int64_t j1,
                                                                int64_t stride) {
  typedef typename R::Acc Acc;
  const int64_t t = threadIdx.x, bd = blockDim.x;
  Acc acc = R::identity();
  if (R::indexed || stride != 1) {
    for (int64_t j = j0 + t; j < j1; j += bd)
      acc = R::combine(acc, R::make(p[j * stride], j));
    return acc;
  }
  typedef tsr__gpu_vec<T> V;
  constexpr int W = V::width;
  int64_t head = (int64_t)(((16u - ((uintptr_t)(p + j0) & 15u)) & 15u) / sizeof(T));
  if (head > j1 - j0) head = j1 - j0;
  for (int64_t j = j0 + t; j < j0 + head; j += bd)
    acc = R::combine(acc, R::make(p[j], j));
  const int64_t vb = j0 + head, nv = (j1 - vb) / W;
  const V *pv = reinterpret_cast<const V *>(p + vb);
  Acc a1 = R::identity(), a2 = R::identity(), a3 = R::identity();
  int64_t q = t;
  for (; q + 3 * bd < nv; q += 4 * bd) {
    const V x0 = pv[q], x1 = pv[q + bd], x2 = pv[q + 2 * bd], x3 = pv[q + 3 * bd];
#pragma unroll
    for (int l = 0; l < W; l++) {
      acc = R::combine(acc, R::make(x0.v[l], 0));
      a1 = R::combine(a1, R::make(x1.v[l], 0));
      a2 = R::combine(a2, R::make(x2.v[l], 0));
      a3 = R::combine(a3, R::make(x3.v[l], 0));
    }
  }
  for (; q < nv; q += bd) {
    const V x = pv[q];
#pragma unroll
    for (int l = 0; l < W; l++)
      acc = R::combine(acc, R::make(x.v[l], 0));
  }
  acc = R::combine(R::combine(acc, a1), R::combine(a2, a3));
  for (int64_t j = vb + nv * W + t; j < j1; j += bd)
    acc = R::combine(acc, R::make(p[j], j));
  return acc;
}

/* One warp (wavefront) per output, for contiguous rows too long for one thread and too short
   for a block: lanes stride over the row, then a shuffle tree. Warps are uniform per output,
   so every lane of a warp reaches the shuffles together. */
template <class R, typename T>
__global__ void tsr__gpu_reduce_warp(typename R::Out *out, const T *a, tsr__gpu_layout outer,
                                     int64_t len) {
  const int ws = warpSize;
  const int lane = (int)threadIdx.x % ws;
  const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / ws;
  const int64_t nwarps = (int64_t)gridDim.x * blockDim.x / ws;
  for (int64_t o = warp; o < outer.size; o += nwarps) {
    int64_t off[1];
    tsr__gpu_offsets<1>(outer, o, off);
    const T *p = a + off[0];
    typename R::Acc acc = R::identity();
    for (int64_t j = lane; j < len; j += ws)
      acc = R::combine(acc, R::make(p[j], j));
    for (int d = ws / 2; d > 0; d >>= 1)
      acc = R::combine(acc, tsr__gpu_shfl_acc(acc, (unsigned)d, ws));
    if (lane == 0) out[o] = R::finalize(acc, len);
  }
}

/* Block-wide: task t reduces chunk (t % splits) of output (t / splits). With FINAL the
   result goes to out, else the partial accumulator to partial[t]. */
template <class R, typename T, bool FINAL>
__global__ void tsr__gpu_reduce_block(typename R::Out *out, typename R::Acc *partial, const T *a,
                                      tsr__gpu_layout outer, int64_t len, int64_t stride,
                                      int64_t splits, int64_t chunk) {
  __shared__ typename R::Acc scratch[TSR__GPU_BLOCK / 32];
  int64_t tasks = outer.size * splits;
  for (int64_t t = blockIdx.x; t < tasks; t += gridDim.x) {
    int64_t o = t / splits, part = t % splits;
    int64_t off[1];
    tsr__gpu_offsets<1>(outer, o, off);
    const T *p = a + off[0];
    int64_t j1 = (part + 1) * chunk < len ? (part + 1) * chunk : len;
    typename R::Acc acc = tsr__gpu_reduce_span<R, T>(p, part * chunk, j1, stride);
    acc = tsr__gpu_block_reduce<R>(acc, scratch);
    if (threadIdx.x == 0) {
      if (FINAL)
        out[o] = R::finalize(acc, len);
      else
        partial[t] = acc;
    }
  }
}

/* Combines the `splits` partials of each output. */
template <class R>
__global__ void tsr__gpu_reduce_partials(typename R::Out *out, const typename R::Acc *partial,
                                         int64_t nout, int64_t splits, int64_t len) {
  __shared__ typename R::Acc scratch[TSR__GPU_BLOCK / 32];
  for (int64_t o = blockIdx.x; o < nout; o += gridDim.x) {
    typename R::Acc acc = R::identity();
    for (int64_t s = threadIdx.x; s < splits; s += blockDim.x)
      acc = R::combine(acc, partial[o * splits + s]);
    acc = tsr__gpu_block_reduce<R>(acc, scratch);
    if (threadIdx.x == 0) out[o] = R::finalize(acc, len);
  }
}

/* ---------------------------------------------------------------- dispatch ------------ */

template <class R, typename T>
static tsr_status tsr__gpu_reduce_launch(tsr_device dev, cudaStream_t s, const tsr__view *out,
                                         const tsr__view *a, int axis) {
  typedef typename R::Acc Acc;
  typedef typename R::Out Out;
  /* The outputs in C order, addressed through a's strides of the kept axes. */
  tsr__view outer_view;
  memset(&outer_view, 0, sizeof outer_view);
  outer_view.ndim = a->ndim - 1;
  for (int d = 0, k = 0; d < a->ndim; d++) {
    if (d == axis) continue;
    outer_view.shape[k] = a->shape[d];
    outer_view.strides[k] = a->strides[d];
    k++;
  }
  const tsr__view *views[1] = {&outer_view};
  tsr__gpu_layout outer;
  tsr__gpu_layout_make(views, 1, &outer);
  int64_t nout = outer.size;
  if (nout == 0) return TSR_OK;
  int64_t len = a->shape[axis], stride = a->strides[axis];
  const T *src = (const T *)a->data;
  Out *dst = (Out *)out->data;
  int64_t sms = tsr__gpu_props_of(dev.index)->multiProcessorCount;
  if (sms < 1) sms = 1;

  if (len <= 64 || (nout >= 8 * sms * TSR__GPU_BLOCK && stride != 1)) {
    unsigned grid = tsr__gpu_grid_for(dev, nout, TSR__GPU_BLOCK);
    TSR__LAUNCH((tsr__gpu_reduce_thread<R, T>), grid, TSR__GPU_BLOCK, s, dst, src, outer, len,
                stride);
    TSR_GPU_CHECK_LAUNCH(s);
    return TSR_OK;
  }

  /* Contiguous rows of moderate length with enough of them to fill the GPU: a warp each.
     (PROVISIONAL bounds, from occupancy arithmetic; bench_gpu on a device is to confirm.) */
  if (stride == 1 && len <= 4096 && nout >= 2 * sms * (TSR__GPU_BLOCK / 32)) {
    int ws = tsr__gpu_props_of(dev.index)->warpSize;
    if (ws < 1) ws = 32;
    unsigned grid = tsr__gpu_grid_for(dev, nout * ws, TSR__GPU_BLOCK);
    TSR__LAUNCH((tsr__gpu_reduce_warp<R, T>), grid, TSR__GPU_BLOCK, s, dst, src, outer, len);
    TSR_GPU_CHECK_LAUNCH(s);
    return TSR_OK;
  }

  /* Split the axis only when one block per output leaves the GPU idle, and never into chunks
     of fewer than 16 elements per thread. */
  int64_t target = 8 * sms;
  int64_t splits = 1;
  if (nout < target) {
    int64_t max_splits = (len + 16 * TSR__GPU_BLOCK - 1) / (16 * TSR__GPU_BLOCK);
    splits = (target + nout - 1) / nout;
    if (splits > max_splits) splits = max_splits;
    if (splits < 1) splits = 1;
  }
  int64_t chunk = (len + splits - 1) / splits;
  splits = (len + chunk - 1) / chunk;
  int64_t tasks = nout * splits;
  unsigned grid = tsr__gpu_grid_for(dev, tasks, 1);
  if (splits == 1) {
    TSR__LAUNCH((tsr__gpu_reduce_block<R, T, true>), grid, TSR__GPU_BLOCK, s, dst, NULL, src, outer,
                len, stride, 1, chunk);
    TSR_GPU_CHECK_LAUNCH(s);
    return TSR_OK;
  }
  void *scratch = NULL;
  size_t bytes = (size_t)tasks * sizeof(Acc);
  TSR_CALL(tsr__gpu_scratch_alloc(dev, bytes, &scratch));
  Acc *partial = (Acc *)scratch;
  TSR__LAUNCH((tsr__gpu_reduce_block<R, T, false>), grid, TSR__GPU_BLOCK, s, dst, partial, src,
              outer, len, stride, splits, chunk);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) {
    unsigned grid2 = tsr__gpu_grid_for(dev, nout, 1);
    TSR__LAUNCH(tsr__gpu_reduce_partials<R>, grid2, TSR__GPU_BLOCK, s, dst, partial, nout, splits,
                len);
    err = cudaGetLastError();
  }
  /* Queued behind the kernels on the stream: a later user of the block runs after them. */
  tsr__gpu_scratch_free(dev, scratch, bytes);
  if (err != cudaSuccess) return tsr__gpu_error(err, __func__, "reduction kernel launch");
  return tsr__gpu_after_launch(s);
}

template <typename T>
static tsr_status tsr__gpu_reduce_typed(tsr_device dev, cudaStream_t s, tsr_reduce_op op,
                                        const tsr__view *out, const tsr__view *a, int axis) {
  if constexpr (tsr__gpu_is_complex<T>::value) {
    /* sum and mean only (no ordering: the core refuses max, min and argmax). */
    if (op == TSR_SUM)
      return tsr__gpu_reduce_launch<tsr__gpu_red_csum<T, false>, T>(dev, s, out, a, axis);
    if (op == TSR_MEAN)
      return tsr__gpu_reduce_launch<tsr__gpu_red_csum<T, true>, T>(dev, s, out, a, axis);
    return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__,
                          "reduction %d is not defined for dtype %s on %s", (int)op,
                          tsr_dtype_name(a->dtype), TSR__GPU_NAME);
  } else {
    switch (op) {
    case TSR_SUM: return tsr__gpu_reduce_launch<tsr__gpu_red_sum<T>, T>(dev, s, out, a, axis);
    case TSR_MEAN: return tsr__gpu_reduce_launch<tsr__gpu_red_mean<T>, T>(dev, s, out, a, axis);
    case TSR_MAX: return tsr__gpu_reduce_launch<tsr__gpu_red_max<T>, T>(dev, s, out, a, axis);
    case TSR_MIN: return tsr__gpu_reduce_launch<tsr__gpu_red_min<T>, T>(dev, s, out, a, axis);
    case TSR_ARGMAX: return tsr__gpu_reduce_launch<tsr__gpu_red_argmax<T>, T>(dev, s, out, a, axis);
    }
  }
  return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__, "reduction %d is not supported on %s",
                        (int)op, TSR__GPU_NAME);
}

tsr_status tsr__gpu_reduce(tsr_device dev, tsr_reduce_op op, const tsr__view *out,
                           const tsr__view *a, int axis) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  TSR__GPU_DTYPE_SWITCH_ALL(a->dtype, T, return tsr__gpu_reduce_typed<T>(dev, s, op, out, a, axis));
  return tsr__set_error(TSR_ERR_DTYPE, __func__, "dtype %d is not supported on %s", (int)a->dtype,
                        TSR__GPU_NAME);
}
