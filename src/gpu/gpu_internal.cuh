/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Declarations shared by the .cu files of the GPU backend (C++; the table itself is C).
 */
#ifndef TSR_GPU_INTERNAL_CUH
#define TSR_GPU_INTERNAL_CUH

#include "gpu_port.cuh"

#include "core/convert.h"
#include "core/layout.h"

/* ---------------------------------------------------------------- errors -------------- */

/* Records "fn: call failed: <runtime message> (<error name>)" and returns
   TSR_ERR_OUT_OF_MEMORY for allocation failures, TSR_ERR_GPU otherwise. Clears the
   runtime's (non-sticky) last error so later calls do not report it again. A sticky error
   (an illegal address, a kernel fault or assertion, an uncorrectable ECC error: the CUDA
   context is lost) marks the current device unusable: every later call on it fails with
   TSR_ERR_GPU and a message naming that first error. tsr__gpu_error passes its call site
   (core/internal.h, "the raise site"). */
tsr_status tsr__gpu_error_at(cudaError_t err, const char *fn, const char *call, const char *file,
                             int line, const char *func);
#define tsr__gpu_error(err, fn, call)                                                              \
  tsr__gpu_error_at((err), (fn), (call), __FILE__, __LINE__, __func__)

/* Translates a runtime return code; the enclosing function returns tsr_status. */
#define TSR_GPU_CALL(expr)                                                                         \
  do {                                                                                             \
    cudaError_t tsr__gpu_e_ = (expr);                                                              \
    if (tsr__gpu_e_ != cudaSuccess) return tsr__gpu_error(tsr__gpu_e_, __func__, #expr);           \
  } while (0)

/* After kernel launches on `stream`: the launch errors (bad configuration, no kernel image for
   this GPU...), then, in the debug mode, the kernels' own errors. */
tsr_status tsr__gpu_after_launch(cudaStream_t stream);
#define TSR_GPU_CHECK_LAUNCH(stream)                                                               \
  do {                                                                                             \
    TSR_GPU_CALL(cudaGetLastError());                                                              \
    TSR_CALL(tsr__gpu_after_launch(stream));                                                       \
  } while (0)

/* ---------------------------------------------------------------- runtime ------------- */

/* Restores the thread's current device when it goes out of scope: tsr__gpu_begin makes the
   operation's device current, and the caller's choice (cudaSetDevice in the user's code)
   must survive the call. */
struct tsr__gpu_device_guard {
  int previous = -1; /* -1: nothing to restore */
  tsr__gpu_device_guard() = default;
  tsr__gpu_device_guard(const tsr__gpu_device_guard &) = delete;
  tsr__gpu_device_guard &operator=(const tsr__gpu_device_guard &) = delete;
  ~tsr__gpu_device_guard() {
    if (previous >= 0) {
      (void)cudaSetDevice(previous);
      (void)cudaGetLastError();
    }
  }
};

/* Checks `dev` (index, not marked unusable), makes it current on this thread (guard restores
   the previous one), and returns its stream (created on first use). */
tsr_status tsr__gpu_begin(tsr_device dev, cudaStream_t *stream, tsr__gpu_device_guard *guard);
/* The usual opening of a backend entry: declares the guard, fills `stream`, returns on error. */
#define TSR__GPU_BEGIN(dev, stream)                                                                \
  tsr__gpu_device_guard tsr__gpu_guard_;                                                           \
  TSR_CALL(tsr__gpu_begin((dev), &(stream), &tsr__gpu_guard_))

/* Cached properties of device `index` (valid once the device count is known). */
const cudaDeviceProp *tsr__gpu_props_of(int index);

/* Blocks for a grid-stride loop over n items: enough to fill the device, at least 1. */
unsigned tsr__gpu_grid_for(tsr_device dev, int64_t n, int block);

/* Device memory from the caching allocator, for temporaries of one operation. Reuse by a
   later allocation is safe because all work of the device is ordered on its one stream. */
tsr_status tsr__gpu_scratch_alloc(tsr_device dev, size_t bytes, void **ptr);
void tsr__gpu_scratch_free(tsr_device dev, void *ptr, size_t bytes);

/* The backend entries, one file each group. */
tsr_status tsr__gpu_device_count(int *count);
const char *tsr__gpu_unavailable_reason(void);
tsr_status tsr__gpu_device_props(int index, tsr_device_props *props);
tsr_status tsr__gpu_alloc(tsr_device dev, size_t bytes, unsigned flags, void **ptr,
                          unsigned *granted_flags);
void tsr__gpu_free(tsr_device dev, void *ptr, size_t bytes, unsigned flags);
tsr_status tsr__gpu_memcpy_h2d(tsr_device dev, void *dst, const void *src, size_t bytes);
tsr_status tsr__gpu_memcpy_d2h(tsr_device dev, void *dst, const void *src, size_t bytes);
tsr_status tsr__gpu_memcpy_d2d(tsr_device dev, void *dst, const void *src, size_t bytes);
tsr_status tsr__gpu_synchronize(tsr_device dev);
tsr_status tsr__gpu_trim(tsr_device dev);
tsr_status tsr__gpu_fill(tsr_device dev, const tsr__view *dst, double value);
tsr_status tsr__gpu_arange(tsr_device dev, const tsr__view *dst, double start, double step);
tsr_status tsr__gpu_copy(tsr_device dev, const tsr__view *dst, const tsr__view *src);
tsr_status tsr__gpu_binary(tsr_device dev, tsr_binary_op op, const tsr__view *out,
                           const tsr__view *a, const tsr__view *b);
tsr_status tsr__gpu_unary(tsr_device dev, tsr_unary_op op, const tsr__view *out,
                          const tsr__view *a);
tsr_status tsr__gpu_reduce(tsr_device dev, tsr_reduce_op op, const tsr__view *out,
                           const tsr__view *a, int axis);
tsr_status tsr__gpu_rng(tsr_device dev, const tsr__view *dst, uint64_t seed, uint64_t offset,
                        tsr__rng_dist dist, double p0, double p1);
tsr_status tsr__gpu_gemm(tsr_device dev, const tsr__gemm_args *args);
tsr_status tsr__gpu_gemm_native(tsr_device dev, const tsr__gemm_args *args);
/* cuBLAS (hipBLAS after hipify); TSR_ERR_UNSUPPORTED when built without it. */
tsr_status tsr__gpu_gemm_vendor(tsr_device dev, const tsr__gemm_args *args);
/* Block-cyclic local blocks (bc.cu). */
tsr_status tsr__gpu_rng_block_cyclic(tsr_device dev, void *data, tsr_dtype dtype,
                                     const tsr__bc_block *l, uint64_t seed, double low,
                                     double high);
tsr_status tsr__gpu_matvec_f64(tsr_device dev, const void *data, tsr_dtype dtype, int64_t rows,
                               int64_t cols, int64_t ld, bool trans, const double *x1,
                               const double *x2, double *y1, double *y2, int64_t *nonfinite);
/* Streams, events, pinned memory and 2-D copies (runtime.cu): the asynchronous group, reached
   from above the core only through tsr__dev_* (src/core/devops.c). A NULL stream handle is the
   device's own stream. */
tsr_status tsr__gpu_pinned_alloc(tsr_device dev, size_t bytes, void **ptr);
void tsr__gpu_pinned_free(tsr_device dev, void *ptr);
tsr_status tsr__gpu_stream_create(tsr_device dev, void **stream);
void tsr__gpu_stream_destroy(tsr_device dev, void *stream);
tsr_status tsr__gpu_event_create(tsr_device dev, void **event);
void tsr__gpu_event_destroy(tsr_device dev, void *event);
tsr_status tsr__gpu_event_record(tsr_device dev, void *event, void *stream);
tsr_status tsr__gpu_event_query(tsr_device dev, void *event, int *done);
tsr_status tsr__gpu_event_elapsed(tsr_device dev, void *start, void *stop, double *seconds);
tsr_status tsr__gpu_stream_wait_event(tsr_device dev, void *stream, void *event);
tsr_status tsr__gpu_memcpy_2d_async(tsr_device dev, void *dst, size_t dpitch, const void *src,
                                    size_t spitch, size_t width, size_t rows, tsr__copy_dir dir,
                                    void *stream);
/* Strided rectangles in one launch (rects.cu). */
tsr_status tsr__gpu_copy_rects(tsr_device dev, void *dst, const void *src, tsr_dtype dtype,
                               const tsr__rect *r, int64_t n, tsr__rect_op op);

/* ---------------------------------------------------------------- layouts ------------- */

/*
 * Up to three views of one shape (out, a, b), collapsed by the core's tsr__collapse_axes
 * (core/layout.h: size-1 dimensions dropped, mergeable neighbours merged), so that most arrays
 * reach the kernels as 1-D or 2-D. Passed to kernels by value.
 */
#define TSR__GPU_MAX_OPERANDS 3
struct tsr__gpu_layout {
  int ndim;     /* >= 1 */
  int64_t size; /* elements */
  int64_t shape[TSR_MAX_DIMS];
  int64_t stride[TSR__GPU_MAX_OPERANDS][TSR_MAX_DIMS];
};

/* views[0] gives the shape; all views must have it. */
void tsr__gpu_layout_make(const tsr__view *const *views, int nviews, tsr__gpu_layout *out);

/* True when every view of the layout is C-contiguous (one dimension of stride 1). */
bool tsr__gpu_layout_contiguous(const tsr__gpu_layout *layout, int nviews);

/* Element offsets (in elements) of linear index i (C order) in each of the NV views. */
template <int NV>
__device__ __forceinline__ void tsr__gpu_offsets(const tsr__gpu_layout &layout, int64_t i,
                                                 int64_t off[NV]) {
  tsr__flat_offsets(layout.ndim, layout.shape, NV, layout.stride, i, off);
}

/* ---------------------------------------------------------------- dtype helpers ------- */

template <typename T> struct tsr__gpu_is_float { static const bool value = false; };
template <> struct tsr__gpu_is_float<float> { static const bool value = true; };
template <> struct tsr__gpu_is_float<double> { static const bool value = true; };

/* 16 bytes of T, loaded and stored as one vector access (128-bit loads). */
template <typename T> struct alignas(16) tsr__gpu_vec {
  static const int width = 16 / (int)sizeof(T);
  T v[16 / sizeof(T)];
};

/* ---------------------------------------------------------------- complex ------------- */

/*
 * One element of TSR_C64 (R = float) or TSR_C128 (R = double) on the device: the host's
 * tsr_complex64 / tsr_complex128 layout (real, imaginary; C99 complex), aligned to its size so
 * that an element is one 8- or 16-byte access (the alignment of CUDA's float2/double2 and of
 * cuBLAS's cuComplex/cuDoubleComplex; device buffers and element offsets keep it). Plain C++
 * (no <complex>, no <cuComplex.h>): the same source compiles for CUDA, for HIP after hipify and
 * for the host emulator. Trivially default-constructible, so it may sit in __shared__ arrays.
 * Products and quotients are written out: a*b is four multiply-adds (the compiler fuses them on
 * the device, as it does for the real dtypes).
 */
template <typename R> struct alignas(2 * sizeof(R)) tsr__gpu_complex {
  R re, im;
  tsr__gpu_complex() = default;
  __host__ __device__ constexpr tsr__gpu_complex(R r, R i = R(0)) : re(r), im(i) {}
};
typedef tsr__gpu_complex<float> tsr__gpu_c64;
typedef tsr__gpu_complex<double> tsr__gpu_c128;
static_assert(sizeof(tsr__gpu_c64) == sizeof(tsr_complex64) &&
                  sizeof(tsr__gpu_c128) == sizeof(tsr_complex128),
              "device complex elements have the host's size");
static_assert(offsetof(tsr__gpu_c64, im) == offsetof(tsr_complex64, im) &&
                  offsetof(tsr__gpu_c128, im) == offsetof(tsr_complex128, im),
              "device complex elements have the host's layout (re, im)");

template <typename R>
__host__ __device__ __forceinline__ tsr__gpu_complex<R> operator+(tsr__gpu_complex<R> a,
                                                                  tsr__gpu_complex<R> b) {
  return tsr__gpu_complex<R>(a.re + b.re, a.im + b.im);
}
template <typename R>
__host__ __device__ __forceinline__ tsr__gpu_complex<R> operator-(tsr__gpu_complex<R> a,
                                                                  tsr__gpu_complex<R> b) {
  return tsr__gpu_complex<R>(a.re - b.re, a.im - b.im);
}
template <typename R>
__host__ __device__ __forceinline__ tsr__gpu_complex<R> operator-(tsr__gpu_complex<R> a) {
  return tsr__gpu_complex<R>(-a.re, -a.im);
}
template <typename R>
__host__ __device__ __forceinline__ tsr__gpu_complex<R> operator*(tsr__gpu_complex<R> a,
                                                                  tsr__gpu_complex<R> b) {
  return tsr__gpu_complex<R>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
template <typename R>
__host__ __device__ __forceinline__ tsr__gpu_complex<R> &operator+=(tsr__gpu_complex<R> &a,
                                                                    tsr__gpu_complex<R> b) {
  a.re += b.re;
  a.im += b.im;
  return a;
}
template <typename R>
__host__ __device__ __forceinline__ bool operator==(tsr__gpu_complex<R> a, tsr__gpu_complex<R> b) {
  return a.re == b.re && a.im == b.im;
}
template <typename R>
__host__ __device__ __forceinline__ bool operator!=(tsr__gpu_complex<R> a, tsr__gpu_complex<R> b) {
  return !(a == b);
}
/* a / b by Smith's method (scaled by the larger part of b: no overflow or underflow in the
   intermediate |b|^2 for parts within the range's square root of its ends). */
template <typename R>
__host__ __device__ __forceinline__ tsr__gpu_complex<R> operator/(tsr__gpu_complex<R> a,
                                                                  tsr__gpu_complex<R> b) {
  if (fabs(b.re) >= fabs(b.im)) {
    const R r = b.im / b.re, d = b.re + b.im * r;
    return tsr__gpu_complex<R>((a.re + a.im * r) / d, (a.im - a.re * r) / d);
  }
  const R r = b.re / b.im, d = b.re * r + b.im;
  return tsr__gpu_complex<R>((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}

/* The conjugate; the identity for the real types (so generic code may call it on any T). */
template <typename R>
__host__ __device__ __forceinline__ tsr__gpu_complex<R> tsr__gpu_conj(tsr__gpu_complex<R> a) {
  return tsr__gpu_complex<R>(a.re, -a.im);
}
template <typename T> __host__ __device__ __forceinline__ T tsr__gpu_conj(T a) {
  return a;
}

template <typename T> struct tsr__gpu_is_complex { static const bool value = false; };
template <typename R> struct tsr__gpu_is_complex<tsr__gpu_complex<R>> {
  static const bool value = true;
};
/* The real type of T's parts (T itself for the real types). */
template <typename T> struct tsr__gpu_real { typedef T type; };
template <typename R> struct tsr__gpu_real<tsr__gpu_complex<R>> { typedef R type; };

/* A host scalar (re, im) as T: the imaginary part is dropped for the real types. */
template <typename T> static inline T tsr__gpu_scalar(double re, double im) {
  if constexpr (tsr__gpu_is_complex<T>::value) {
    typedef typename tsr__gpu_real<T>::type R;
    return T((R)re, (R)im);
  } else {
    (void)im;
    return (T)re;
  }
}

/* Runs the statements with T the C type of `dtype`; nothing for an unknown dtype (the core
   validated it, the caller still returns an error after the switch). */
#define TSR__GPU_DTYPE_SWITCH(dtype, T, ...)                                                       \
  switch (dtype) {                                                                                 \
  case TSR_F32: {                                                                                  \
    typedef float T;                                                                               \
    __VA_ARGS__;                                                                                   \
  } break;                                                                                         \
  case TSR_F64: {                                                                                  \
    typedef double T;                                                                              \
    __VA_ARGS__;                                                                                   \
  } break;                                                                                         \
  case TSR_I32: {                                                                                  \
    typedef int32_t T;                                                                             \
    __VA_ARGS__;                                                                                   \
  } break;                                                                                         \
  case TSR_I64: {                                                                                  \
    typedef int64_t T;                                                                             \
    __VA_ARGS__;                                                                                   \
  } break;                                                                                         \
  default: break;                                                                                  \
  }

/* C conversion, except that float -> integer saturates at the integer limits and maps NaN to
   0 (core/convert.h, as the CPU backend does; plain C leaves those cases undefined). Complex:
   real -> complex has imaginary part 0, complex -> complex converts both parts, complex -> real
   takes the real part (as C does; the core decides whether to allow it). */
template <typename D, typename S> __host__ __device__ __forceinline__ D tsr__gpu_convert(S x) {
  if constexpr (tsr__gpu_is_complex<S>::value) {
    if constexpr (tsr__gpu_is_complex<D>::value) {
      typedef typename tsr__gpu_real<D>::type R;
      return D((R)x.re, (R)x.im);
    } else {
      return tsr__gpu_convert<D, typename tsr__gpu_real<S>::type>(x.re);
    }
  } else if constexpr (tsr__gpu_is_complex<D>::value) {
    typedef typename tsr__gpu_real<D>::type R;
    return D(tsr__gpu_convert<R, S>(x), R(0));
  } else if constexpr (!tsr__gpu_is_float<D>::value && tsr__gpu_is_float<S>::value) {
    if constexpr (sizeof(D) == 4)
      return (D)tsr__sat_f64_to_i32((double)x);
    else
      return (D)tsr__sat_f64_to_i64((double)x);
  } else {
    return (D)x;
  }
}

/* TSR__GPU_DTYPE_SWITCH plus the complex dtypes (T = tsr__gpu_c64, tsr__gpu_c128), for the
   entries that have complex kernels (fill, copy, the elementwise operators, sum, random). */
#define TSR__GPU_DTYPE_SWITCH_ALL(dtype, T, ...)                                                   \
  switch (dtype) {                                                                                 \
  case TSR_C64: {                                                                                  \
    typedef tsr__gpu_c64 T;                                                                        \
    __VA_ARGS__;                                                                                   \
  } break;                                                                                         \
  case TSR_C128: {                                                                                 \
    typedef tsr__gpu_c128 T;                                                                       \
    __VA_ARGS__;                                                                                   \
  } break;                                                                                         \
  default: TSR__GPU_DTYPE_SWITCH(dtype, T, __VA_ARGS__) break;                                     \
  }

#endif /* TSR_GPU_INTERNAL_CUH */
