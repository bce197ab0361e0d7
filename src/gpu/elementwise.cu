/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Elementwise kernels: fill, copy with dtype conversion, and the binary and unary operators
 * of src/core/opdefs.h, expanded from the shared X-macro table (never re-written here).
 *
 * Every kernel is a grid-stride loop with 64-bit indices. Shapes and strides travel by value
 * in a tsr__gpu_layout after dimension collapsing; fully contiguous operands take a fast path
 * that moves 16 bytes per load/store when all pointers are 16-byte aligned.
 */
#include "gpu_internal.cuh"

#include "core/opdefs.h"

/* ---------------------------------------------------------------- operator functors --- */

/*
 * Integers: the table's +, - and * must wrap like the CPU backend's (signed overflow is
 * undefined in C and C++). tsr__gpu_wrap<S, U> is a signed value whose arithmetic is done in
 * the unsigned type U and whose comparisons are signed, so the same expressions apply.
 */
template <typename S, typename U> struct tsr__gpu_wrap {
  S v;
  __device__ __forceinline__ tsr__gpu_wrap() : v(0) {}
  __device__ __forceinline__ tsr__gpu_wrap(S x) : v(x) {}
};
#define TSR__GPU_WRAP_ARITH(op)                                                                    \
  template <typename S, typename U>                                                                \
  __device__ __forceinline__ tsr__gpu_wrap<S, U> operator op(tsr__gpu_wrap<S, U> a,                \
                                                             tsr__gpu_wrap<S, U> b) {              \
    return tsr__gpu_wrap<S, U>((S)((U)a.v op(U) b.v));                                             \
  }
TSR__GPU_WRAP_ARITH(+)
TSR__GPU_WRAP_ARITH(-)
TSR__GPU_WRAP_ARITH(*)
#undef TSR__GPU_WRAP_ARITH
#define TSR__GPU_WRAP_CMP(op)                                                                      \
  template <typename S, typename U>                                                                \
  __device__ __forceinline__ bool operator op(tsr__gpu_wrap<S, U> a, tsr__gpu_wrap<S, U> b) {      \
    return a.v op b.v;                                                                             \
  }
TSR__GPU_WRAP_CMP(<)
TSR__GPU_WRAP_CMP(>)
TSR__GPU_WRAP_CMP(==)
TSR__GPU_WRAP_CMP(!=)
#undef TSR__GPU_WRAP_CMP
template <typename S, typename U>
__device__ __forceinline__ tsr__gpu_wrap<S, U> operator-(tsr__gpu_wrap<S, U> a) {
  return tsr__gpu_wrap<S, U>((S)((U)0 - (U)a.v));
}

/* The type the operator expressions are evaluated in. */
template <typename T> struct tsr__gpu_arith { typedef T type; };
template <> struct tsr__gpu_arith<int32_t> { typedef tsr__gpu_wrap<int32_t, uint32_t> type; };
template <> struct tsr__gpu_arith<int64_t> { typedef tsr__gpu_wrap<int64_t, uint64_t> type; };

template <typename T> __device__ __forceinline__ T tsr__gpu_to_arith(T x) {
  return x;
}
__device__ __forceinline__ tsr__gpu_arith<int32_t>::type tsr__gpu_to_arith(int32_t x) {
  return tsr__gpu_arith<int32_t>::type(x);
}
__device__ __forceinline__ tsr__gpu_arith<int64_t>::type tsr__gpu_to_arith(int64_t x) {
  return tsr__gpu_arith<int64_t>::type(x);
}
template <typename T> __device__ __forceinline__ T tsr__gpu_from_arith(T x) {
  return x;
}
template <typename S, typename U>
__device__ __forceinline__ S tsr__gpu_from_arith(tsr__gpu_wrap<S, U> x) {
  return x.v;
}

/* TSR__ABS as opdefs.h asks: fabs for floats, a comparison for integers. */
__device__ __forceinline__ float tsr__gpu_abs(float x) {
  return fabsf(x);
}
__device__ __forceinline__ double tsr__gpu_abs(double x) {
  return fabs(x);
}
template <typename S, typename U>
__device__ __forceinline__ tsr__gpu_wrap<S, U> tsr__gpu_abs(tsr__gpu_wrap<S, U> x) {
  return x < tsr__gpu_wrap<S, U>(0) ? -x : x;
}
#define TSR__ABS(x) tsr__gpu_abs(x)

/* One functor per operator: `apply` evaluates the table's expression in type T. */
#define TSR__GPU_BINARY_FUNCTOR(ENUM, name, INT, expr)                                             \
  struct tsr__gpu_bin_##name {                                                                     \
    static const bool int_ok = (INT) != 0;                                                         \
    template <typename T> __device__ __forceinline__ static T apply(T x, T y) { return (expr); }   \
  };
TSR__BINARY_OPS(TSR__GPU_BINARY_FUNCTOR)
#undef TSR__GPU_BINARY_FUNCTOR

#define TSR__GPU_UNARY_FUNCTOR(ENUM, name, INT, expr)                                              \
  struct tsr__gpu_un_##name {                                                                      \
    static const bool int_ok = (INT) != 0;                                                         \
    template <typename T> __device__ __forceinline__ static T apply(T x) { return (expr); }        \
  };
TSR__UNARY_OPS(TSR__GPU_UNARY_FUNCTOR)
#undef TSR__GPU_UNARY_FUNCTOR

static bool tsr__gpu_aligned16(const void *p) {
  return ((uintptr_t)p & 15u) == 0;
}

/* The operators of the tables defined for the complex dtypes (the core refuses the others):
   + - * / by the operators of tsr__gpu_complex (gpu_internal.cuh; / by Smith's method), unary
   minus; abs (to the real dtype) and conj have their own kernels below. */
/* conj's operator: TSR_CONJ where tessera/ops.h has it (the ninth unary operator), else -1
   (no operator). For the real dtypes the table's own entry (the identity) serves it. */
#if TSR_NUM_UNARY_OPS > 8
#define TSR__GPU_UNARY_CONJ ((int)TSR_CONJ)
#else
#define TSR__GPU_UNARY_CONJ (-1)
#endif

static constexpr bool tsr__gpu_complex_binary_ok(tsr_binary_op op) {
  return op == TSR_ADD || op == TSR_SUB || op == TSR_MUL || op == TSR_DIV;
}
static constexpr bool tsr__gpu_complex_unary_ok(tsr_unary_op op) {
  return op == TSR_NEG;
}

/* ---------------------------------------------------------------- binary -------------- */

template <typename Op, typename T, bool VEC>
__global__ void tsr__gpu_binary_contiguous(T *out, const T *a, const T *b, int64_t n) {
  typedef typename tsr__gpu_arith<T>::type A;
  int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  int64_t done = 0;
  if (VEC) {
    typedef tsr__gpu_vec<T> V;
    int64_t nvec = n / V::width;
    const V *av = (const V *)a, *bv = (const V *)b;
    V *ov = (V *)out;
    for (int64_t i = tid; i < nvec; i += nthreads) {
      V x = av[i], y = bv[i], r;
#pragma unroll
      for (int l = 0; l < V::width; l++)
        r.v[l] = tsr__gpu_from_arith(
            Op::template apply<A>(tsr__gpu_to_arith(x.v[l]), tsr__gpu_to_arith(y.v[l])));
      ov[i] = r;
    }
    done = nvec * V::width;
  }
  for (int64_t i = done + tid; i < n; i += nthreads)
    out[i] = tsr__gpu_from_arith(
        Op::template apply<A>(tsr__gpu_to_arith(a[i]), tsr__gpu_to_arith(b[i])));
}

template <typename Op, typename T>
__global__ void tsr__gpu_binary_strided(T *out, const T *a, const T *b, tsr__gpu_layout layout) {
  typedef typename tsr__gpu_arith<T>::type A;
  int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < layout.size; i += nthreads) {
    int64_t off[3];
    tsr__gpu_offsets<3>(layout, i, off);
    out[off[0]] = tsr__gpu_from_arith(
        Op::template apply<A>(tsr__gpu_to_arith(a[off[1]]), tsr__gpu_to_arith(b[off[2]])));
  }
}

template <typename Op, typename T>
static tsr_status tsr__gpu_binary_launch(tsr_device dev, cudaStream_t s, const tsr__view *out,
                                         const tsr__view *a, const tsr__view *b) {
  const tsr__view *views[3] = {out, a, b};
  tsr__gpu_layout layout;
  tsr__gpu_layout_make(views, 3, &layout);
  if (layout.size == 0) return TSR_OK;
  unsigned grid = tsr__gpu_grid_for(dev, layout.size, TSR__GPU_BLOCK);
  T *o = (T *)out->data;
  const T *x = (const T *)a->data, *y = (const T *)b->data;
  if (tsr__gpu_layout_contiguous(&layout, 3)) {
    if (tsr__gpu_aligned16(o) && tsr__gpu_aligned16(x) && tsr__gpu_aligned16(y)) {
      grid = tsr__gpu_grid_for(dev, layout.size / tsr__gpu_vec<T>::width + 1, TSR__GPU_BLOCK);
      TSR__LAUNCH((tsr__gpu_binary_contiguous<Op, T, true>), grid, TSR__GPU_BLOCK, s, o, x, y,
                  layout.size);
    } else {
      TSR__LAUNCH((tsr__gpu_binary_contiguous<Op, T, false>), grid, TSR__GPU_BLOCK, s, o, x, y,
                  layout.size);
    }
  } else {
    TSR__LAUNCH((tsr__gpu_binary_strided<Op, T>), grid, TSR__GPU_BLOCK, s, o, x, y, layout);
  }
  TSR_GPU_CHECK_LAUNCH(s);
  return TSR_OK;
}

template <typename T>
static tsr_status tsr__gpu_binary_typed(tsr_device dev, cudaStream_t s, tsr_binary_op op,
                                        const tsr__view *out, const tsr__view *a,
                                        const tsr__view *b) {
  switch (op) {
#define TSR__GPU_BINARY_CASE(ENUM, name, INT, expr)                                                \
  case ENUM:                                                                                       \
    if constexpr (tsr__gpu_is_complex<T>::value) {                                                 \
      if constexpr (tsr__gpu_complex_binary_ok(ENUM))                                              \
        return tsr__gpu_binary_launch<tsr__gpu_bin_##name, T>(dev, s, out, a, b);                  \
    } else if constexpr (tsr__gpu_is_float<T>::value || (INT) != 0)                                \
      return tsr__gpu_binary_launch<tsr__gpu_bin_##name, T>(dev, s, out, a, b);                    \
    break;
    TSR__BINARY_OPS(TSR__GPU_BINARY_CASE)
#undef TSR__GPU_BINARY_CASE
  default: break;
  }
  return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__,
                        "operator %d is not defined for dtype %s on " TSR__GPU_NAME, (int)op,
                        tsr_dtype_name(out->dtype));
}

tsr_status tsr__gpu_binary(tsr_device dev, tsr_binary_op op, const tsr__view *out,
                           const tsr__view *a, const tsr__view *b) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  TSR__GPU_DTYPE_SWITCH_ALL(out->dtype, T, return tsr__gpu_binary_typed<T>(dev, s, op, out, a, b));
  return tsr__set_error(TSR_ERR_DTYPE, __func__, "dtype %d is not supported on %s", (int)out->dtype,
                        TSR__GPU_NAME);
}

/* ---------------------------------------------------------------- unary --------------- */

template <typename Op, typename T, bool VEC>
__global__ void tsr__gpu_unary_contiguous(T *out, const T *a, int64_t n) {
  typedef typename tsr__gpu_arith<T>::type A;
  int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  int64_t done = 0;
  if (VEC) {
    typedef tsr__gpu_vec<T> V;
    int64_t nvec = n / V::width;
    const V *av = (const V *)a;
    V *ov = (V *)out;
    for (int64_t i = tid; i < nvec; i += nthreads) {
      V x = av[i], r;
#pragma unroll
      for (int l = 0; l < V::width; l++)
        r.v[l] = tsr__gpu_from_arith(Op::template apply<A>(tsr__gpu_to_arith(x.v[l])));
      ov[i] = r;
    }
    done = nvec * V::width;
  }
  for (int64_t i = done + tid; i < n; i += nthreads)
    out[i] = tsr__gpu_from_arith(Op::template apply<A>(tsr__gpu_to_arith(a[i])));
}

template <typename Op, typename T>
__global__ void tsr__gpu_unary_strided(T *out, const T *a, tsr__gpu_layout layout) {
  typedef typename tsr__gpu_arith<T>::type A;
  int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < layout.size; i += nthreads) {
    int64_t off[2];
    tsr__gpu_offsets<2>(layout, i, off);
    out[off[0]] = tsr__gpu_from_arith(Op::template apply<A>(tsr__gpu_to_arith(a[off[1]])));
  }
}

template <typename Op, typename T>
static tsr_status tsr__gpu_unary_launch(tsr_device dev, cudaStream_t s, const tsr__view *out,
                                        const tsr__view *a) {
  const tsr__view *views[2] = {out, a};
  tsr__gpu_layout layout;
  tsr__gpu_layout_make(views, 2, &layout);
  if (layout.size == 0) return TSR_OK;
  unsigned grid = tsr__gpu_grid_for(dev, layout.size, TSR__GPU_BLOCK);
  T *o = (T *)out->data;
  const T *x = (const T *)a->data;
  if (tsr__gpu_layout_contiguous(&layout, 2)) {
    if (tsr__gpu_aligned16(o) && tsr__gpu_aligned16(x)) {
      grid = tsr__gpu_grid_for(dev, layout.size / tsr__gpu_vec<T>::width + 1, TSR__GPU_BLOCK);
      TSR__LAUNCH((tsr__gpu_unary_contiguous<Op, T, true>), grid, TSR__GPU_BLOCK, s, o, x,
                  layout.size);
    } else {
      TSR__LAUNCH((tsr__gpu_unary_contiguous<Op, T, false>), grid, TSR__GPU_BLOCK, s, o, x,
                  layout.size);
    }
  } else {
    TSR__LAUNCH((tsr__gpu_unary_strided<Op, T>), grid, TSR__GPU_BLOCK, s, o, x, layout);
  }
  TSR_GPU_CHECK_LAUNCH(s);
  return TSR_OK;
}

template <typename T>
static tsr_status tsr__gpu_unary_typed(tsr_device dev, cudaStream_t s, tsr_unary_op op,
                                       const tsr__view *out, const tsr__view *a) {
  switch (op) {
#define TSR__GPU_UNARY_CASE(ENUM, name, INT, expr)                                                 \
  case ENUM:                                                                                       \
    if constexpr (tsr__gpu_is_complex<T>::value) {                                                 \
      if constexpr (tsr__gpu_complex_unary_ok(ENUM))                                               \
        return tsr__gpu_unary_launch<tsr__gpu_un_##name, T>(dev, s, out, a);                       \
    } else if constexpr (tsr__gpu_is_float<T>::value || (INT) != 0)                                \
      return tsr__gpu_unary_launch<tsr__gpu_un_##name, T>(dev, s, out, a);                         \
    break;
    TSR__UNARY_OPS(TSR__GPU_UNARY_CASE)
#undef TSR__GPU_UNARY_CASE
  default: break;
  }
  return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__,
                        "operator %d is not defined for dtype %s on " TSR__GPU_NAME, (int)op,
                        tsr_dtype_name(out->dtype));
}

/* |x| of a complex array into its real dtype (hypot: no overflow for parts past the square
   root of the range), and conj. */
struct tsr__gpu_un_cabs {
  template <typename T>
  __device__ __forceinline__ static typename tsr__gpu_real<T>::type apply(T x) {
    return hypot(x.re, x.im);
  }
};
struct tsr__gpu_un_cconj {
  template <typename T> __device__ __forceinline__ static T apply(T x) { return tsr__gpu_conj(x); }
};

/* The principal values of exp, log, sqrt and tanh of x + yi (C99's cexp, clog, csqrt, ctanh
   for finite arguments; their Annex G special cases of infinities and NaN are not reproduced). */
struct tsr__gpu_un_cexp {
  template <typename T> __device__ __forceinline__ static T apply(T z) {
    const auto e = exp(z.re);
    return T(e * cos(z.im), e * sin(z.im));
  }
};
struct tsr__gpu_un_clog {
  template <typename T> __device__ __forceinline__ static T apply(T z) {
    return T(log(hypot(z.re, z.im)), atan2(z.im, z.re));
  }
};
struct tsr__gpu_un_csqrt {
  template <typename T> __device__ __forceinline__ static T apply(T z) {
    typedef typename tsr__gpu_real<T>::type R;
    if (z.re == R(0) && z.im == R(0)) return T(R(0), z.im);
    const R t = sqrt((fabs(z.re) + hypot(z.re, z.im)) * R(0.5));
    if (z.re >= R(0)) return T(t, z.im / (R(2) * t));
    return T(fabs(z.im) / (R(2) * t), copysign(t, z.im));
  }
};
struct tsr__gpu_un_ctanh {
  template <typename T> __device__ __forceinline__ static T apply(T z) {
    typedef typename tsr__gpu_real<T>::type R;
    if (fabs(z.re) > R(20)) /* tanh's real part is +-1 to the last bit, cosh(2x) overflows */
      return T(copysign(R(1), z.re), copysign(R(0), sin(R(2) * z.im)));
    const R d = cosh(R(2) * z.re) + cos(R(2) * z.im);
    return T(sinh(R(2) * z.re) / d, sin(R(2) * z.im) / d);
  }
};

template <typename Op, typename D, typename S>
__global__ void tsr__gpu_unary_complex_kernel(D *out, const S *a, tsr__gpu_layout layout) {
  int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < layout.size; i += nthreads) {
    int64_t off[2];
    tsr__gpu_offsets<2>(layout, i, off);
    out[off[0]] = Op::apply(a[off[1]]);
  }
}

template <typename Op, typename D, typename S>
static tsr_status tsr__gpu_unary_complex_launch(tsr_device dev, cudaStream_t s,
                                                const tsr__view *out, const tsr__view *a) {
  const tsr__view *views[2] = {out, a};
  tsr__gpu_layout layout;
  tsr__gpu_layout_make(views, 2, &layout);
  if (layout.size == 0) return TSR_OK;
  unsigned grid = tsr__gpu_grid_for(dev, layout.size, TSR__GPU_BLOCK);
  TSR__LAUNCH((tsr__gpu_unary_complex_kernel<Op, D, S>), grid, TSR__GPU_BLOCK, s, (D *)out->data,
              (const S *)a->data, layout);
  TSR_GPU_CHECK_LAUNCH(s);
  return TSR_OK;
}

/* The complex operators whose kernels are not the table's: abs (complex -> its real dtype),
   conj, exp, log, sqrt, tanh. Returns false for the others (the table's kernels serve neg; the
   rest are refused there with TSR_ERR_UNSUPPORTED naming the dtype). */
template <typename T>
static bool tsr__gpu_unary_complex_special(tsr_device dev, cudaStream_t s, int op,
                                           const tsr__view *out, const tsr__view *a,
                                           tsr_status *st) {
  typedef typename tsr__gpu_real<T>::type R;
  if (op == (int)TSR_ABS) {
    if (out->dtype != (sizeof(R) == 4 ? TSR_F32 : TSR_F64)) {
      *st = tsr__set_error(TSR_ERR_DTYPE, __func__, "abs of %s writes %s, not %s",
                           tsr_dtype_name(a->dtype), sizeof(R) == 4 ? "f32" : "f64",
                           tsr_dtype_name(out->dtype));
      return true;
    }
    *st = tsr__gpu_unary_complex_launch<tsr__gpu_un_cabs, R, T>(dev, s, out, a);
    return true;
  }
  switch (op) {
  case TSR_EXP: *st = tsr__gpu_unary_complex_launch<tsr__gpu_un_cexp, T, T>(dev, s, out, a); break;
  case TSR_LOG: *st = tsr__gpu_unary_complex_launch<tsr__gpu_un_clog, T, T>(dev, s, out, a); break;
  case TSR_SQRT:
    *st = tsr__gpu_unary_complex_launch<tsr__gpu_un_csqrt, T, T>(dev, s, out, a);
    break;
  case TSR_TANH:
    *st = tsr__gpu_unary_complex_launch<tsr__gpu_un_ctanh, T, T>(dev, s, out, a);
    break;
  default:
    if (op != TSR__GPU_UNARY_CONJ) return false;
    *st = tsr__gpu_unary_complex_launch<tsr__gpu_un_cconj, T, T>(dev, s, out, a);
  }
  return true;
}

tsr_status tsr__gpu_unary(tsr_device dev, tsr_unary_op op, const tsr__view *out,
                          const tsr__view *a) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  if (a->dtype == TSR_C64 || a->dtype == TSR_C128) {
    tsr_status st = TSR_OK;
    if (a->dtype == TSR_C64
            ? tsr__gpu_unary_complex_special<tsr__gpu_c64>(dev, s, (int)op, out, a, &st)
            : tsr__gpu_unary_complex_special<tsr__gpu_c128>(dev, s, (int)op, out, a, &st))
      return st;
  }
  TSR__GPU_DTYPE_SWITCH_ALL(out->dtype, T, return tsr__gpu_unary_typed<T>(dev, s, op, out, a));
  return tsr__set_error(TSR_ERR_DTYPE, __func__, "dtype %d is not supported on %s", (int)out->dtype,
                        TSR__GPU_NAME);
}

/* ---------------------------------------------------------------- fill ---------------- */

template <typename T>
__global__ void tsr__gpu_fill_kernel(T *dst, T value, tsr__gpu_layout layout) {
  int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < layout.size; i += nthreads) {
    int64_t off[1];
    tsr__gpu_offsets<1>(layout, i, off);
    dst[off[0]] = value;
  }
}

/* Four elements as one access (16 or 32 bytes: one or two 128-bit loads/stores). */
template <typename T> struct alignas(4 * sizeof(T)) tsr__gpu_quad { T v[4]; };

template <typename T> static bool tsr__gpu_quad_aligned(const void *p) {
  return ((uintptr_t)p % (4 * sizeof(T))) == 0;
}

/* VEC: dst is aligned for tsr__gpu_quad<T>; four elements per store, then the tail. */
template <typename T, bool VEC>
__global__ void tsr__gpu_fill_contiguous(T *dst, T value, int64_t n) {
  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  int64_t done = 0;
  if (VEC) {
    tsr__gpu_quad<T> q;
#pragma unroll
    for (int l = 0; l < 4; l++)
      q.v[l] = value;
    const int64_t nq = n / 4;
    for (int64_t i = tid; i < nq; i += nthreads)
      reinterpret_cast<tsr__gpu_quad<T> *>(dst)[i] = q;
    done = nq * 4;
  }
  for (int64_t i = done + tid; i < n; i += nthreads)
    dst[i] = value;
}

template <typename T>
static tsr_status tsr__gpu_fill_typed(tsr_device dev, cudaStream_t s, const tsr__view *dst,
                                      double value) {
  const tsr__view *views[1] = {dst};
  tsr__gpu_layout layout;
  tsr__gpu_layout_make(views, 1, &layout);
  if (layout.size == 0) return TSR_OK;
  T v = tsr__gpu_convert<T, double>(value);
  unsigned grid = tsr__gpu_grid_for(dev, layout.size, TSR__GPU_BLOCK);
  const bool contiguous = tsr__gpu_layout_contiguous(&layout, 1);
  if (contiguous && tsr__gpu_quad_aligned<T>(dst->data)) {
    grid = tsr__gpu_grid_for(dev, layout.size / 4 + 1, TSR__GPU_BLOCK);
    TSR__LAUNCH((tsr__gpu_fill_contiguous<T, true>), grid, TSR__GPU_BLOCK, s, (T *)dst->data, v,
                layout.size);
  } else if (contiguous)
    TSR__LAUNCH((tsr__gpu_fill_contiguous<T, false>), grid, TSR__GPU_BLOCK, s, (T *)dst->data, v,
                layout.size);
  else
    TSR__LAUNCH(tsr__gpu_fill_kernel<T>, grid, TSR__GPU_BLOCK, s, (T *)dst->data, v, layout);
  TSR_GPU_CHECK_LAUNCH(s);
  return TSR_OK;
}

tsr_status tsr__gpu_fill(tsr_device dev, const tsr__view *dst, double value) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  TSR__GPU_DTYPE_SWITCH_ALL(dst->dtype, T, return tsr__gpu_fill_typed<T>(dev, s, dst, value));
  return tsr__set_error(TSR_ERR_DTYPE, __func__, "dtype %d is not supported on %s", (int)dst->dtype,
                        TSR__GPU_NAME);
}

/* ---------------------------------------------------------------- copy ---------------- */

template <typename D, typename S>
__global__ void tsr__gpu_copy_kernel(D *dst, const S *src, tsr__gpu_layout layout) {
  int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < layout.size; i += nthreads) {
    int64_t off[2];
    tsr__gpu_offsets<2>(layout, i, off);
    dst[off[0]] = tsr__gpu_convert<D, S>(src[off[1]]);
  }
}

/* Type-converting copy of contiguous arrays; VEC: both aligned for tsr__gpu_quad, four
   elements per load and store, then the tail. */
template <typename D, typename S, bool VEC>
__global__ void tsr__gpu_copy_contiguous(D *dst, const S *src, int64_t n) {
  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
  int64_t done = 0;
  if (VEC) {
    const int64_t nq = n / 4;
    for (int64_t i = tid; i < nq; i += nthreads) {
      const tsr__gpu_quad<S> x = reinterpret_cast<const tsr__gpu_quad<S> *>(src)[i];
      tsr__gpu_quad<D> y;
#pragma unroll
      for (int l = 0; l < 4; l++)
        y.v[l] = tsr__gpu_convert<D, S>(x.v[l]);
      reinterpret_cast<tsr__gpu_quad<D> *>(dst)[i] = y;
    }
    done = nq * 4;
  }
  for (int64_t i = done + tid; i < n; i += nthreads)
    dst[i] = tsr__gpu_convert<D, S>(src[i]);
}

template <typename D, typename S>
static tsr_status tsr__gpu_copy_typed(tsr_device dev, cudaStream_t s, const tsr__view *dst,
                                      const tsr__view *src) {
  const tsr__view *views[2] = {dst, src};
  tsr__gpu_layout layout;
  tsr__gpu_layout_make(views, 2, &layout);
  if (layout.size == 0) return TSR_OK;
  unsigned grid = tsr__gpu_grid_for(dev, layout.size, TSR__GPU_BLOCK);
  if (tsr__gpu_layout_contiguous(&layout, 2)) {
    if (dst->dtype == src->dtype) {
      TSR_GPU_CALL(cudaMemcpyAsync(dst->data, src->data, (size_t)layout.size * sizeof(D),
                                   cudaMemcpyDeviceToDevice, s));
      return TSR_OK;
    }
    if (tsr__gpu_quad_aligned<D>(dst->data) && tsr__gpu_quad_aligned<S>(src->data)) {
      grid = tsr__gpu_grid_for(dev, layout.size / 4 + 1, TSR__GPU_BLOCK);
      TSR__LAUNCH((tsr__gpu_copy_contiguous<D, S, true>), grid, TSR__GPU_BLOCK, s, (D *)dst->data,
                  (const S *)src->data, layout.size);
    } else {
      TSR__LAUNCH((tsr__gpu_copy_contiguous<D, S, false>), grid, TSR__GPU_BLOCK, s, (D *)dst->data,
                  (const S *)src->data, layout.size);
    }
  } else {
    TSR__LAUNCH((tsr__gpu_copy_kernel<D, S>), grid, TSR__GPU_BLOCK, s, (D *)dst->data,
                (const S *)src->data, layout);
  }
  TSR_GPU_CHECK_LAUNCH(s);
  return TSR_OK;
}

tsr_status tsr__gpu_copy(tsr_device dev, const tsr__view *dst, const tsr__view *src) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  TSR__GPU_DTYPE_SWITCH_ALL(
      dst->dtype, D,
      TSR__GPU_DTYPE_SWITCH_ALL(src->dtype, S, return tsr__gpu_copy_typed<D, S>(dev, s, dst, src)));
  return tsr__set_error(TSR_ERR_DTYPE, __func__, "dtypes %d -> %d are not supported on %s",
                        (int)src->dtype, (int)dst->dtype, TSR__GPU_NAME);
}
