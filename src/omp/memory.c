/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory of the CPU backend: allocation (the core's 64-byte-aligned host allocator),
 * transfers (host memory is device memory here), and the kernels that write arrays without
 * reading another operation's result: fill, arange, copy with dtype conversion, rng.
 */
/* madvise(MADV_HUGEPAGE) is a Linux extension. */
#define _DEFAULT_SOURCE 1

#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "omp/omp_internal.h"

/* Large arrays ask for transparent huge pages (as NumPy does): the first touch of a fresh
   256 MiB array otherwise takes 65536 page faults, which can cost more than the operation
   that writes it. Advice only; where THP is off or unsupported nothing changes. */
#define TSR__OMP_HUGEPAGE_MIN ((size_t)4 << 20)
#define TSR__OMP_HUGEPAGE_SIZE ((uintptr_t)2 << 20)

tsr_status tsr__omp_alloc(tsr_device dev, size_t bytes, unsigned flags, void **ptr,
                          unsigned *granted_flags) {
  (void)dev;
  (void)flags; /* managed memory means nothing on the host: plain memory is granted */
  TSR_CALL(tsr__host_alloc(bytes, ptr));
  *granted_flags = TSR_ALLOC_DEFAULT;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= TSR__OMP_HUGEPAGE_MIN) {
    /* The whole huge pages inside the block: madvise wants page-aligned ranges. */
    uintptr_t lo = ((uintptr_t)*ptr + TSR__OMP_HUGEPAGE_SIZE - 1) & ~(TSR__OMP_HUGEPAGE_SIZE - 1);
    uintptr_t hi = ((uintptr_t)*ptr + bytes) & ~(TSR__OMP_HUGEPAGE_SIZE - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
  }
#endif
  return TSR_OK;
}

void tsr__omp_free(tsr_device dev, void *ptr, size_t bytes, unsigned flags) {
  (void)dev;
  (void)bytes;
  (void)flags;
  tsr__host_free(ptr);
}

/* Large copies are split among the threads: one core cannot saturate the memory bus. */
tsr_status tsr__omp_memcpy(tsr_device dev, void *dst, const void *src, size_t bytes) {
  (void)dev;
  if (bytes == 0) return TSR_OK;
  const size_t chunk = (size_t)1 << 20;
  if (bytes < 8 * chunk || tsr__omp_threads() == 1) {
    memcpy(dst, src, bytes);
    return TSR_OK;
  }
  const int64_t nchunks = (int64_t)((bytes + chunk - 1) / chunk);
  TSR__OMP_PRAGMA(omp parallel for schedule(dynamic, 1))
  for (int64_t c = 0; c < nchunks; c++) {
    size_t off = (size_t)c * chunk;
    size_t len = bytes - off < chunk ? bytes - off : chunk;
    memcpy((char *)dst + off, (const char *)src + off, len);
  }
  return TSR_OK;
}

/* ---------------------------------------------------------------- fill ---------------- */

/* Same-size element moves (fill, same-dtype copy) only move bits, so one kernel per size. */
#define TSR__OMP_FILL_KERNEL(BITS)                                                                 \
  static void fill_##BITS(int64_t n, char *const p[], const int64_t s[], const void *param) {      \
    uint##BITS##_t *d = (uint##BITS##_t *)p[0];                                                    \
    const uint##BITS##_t v = *(const uint##BITS##_t *)param;                                       \
    if (s[0] == 1) {                                                                               \
      TSR__OMP_PRAGMA(omp simd)                                                                    \
      for (int64_t i = 0; i < n; i++)                                                              \
        d[i] = v;                                                                                  \
    } else {                                                                                       \
      const int64_t sd = s[0];                                                                     \
      for (int64_t i = 0; i < n; i++)                                                              \
        d[i * sd] = v;                                                                             \
    }                                                                                              \
  }
TSR__OMP_FILL_KERNEL(32)
TSR__OMP_FILL_KERNEL(64)

/* 16-byte elements (c128): two 64-bit words each. */
typedef struct tsr__omp_w128 {
  uint64_t lo, hi;
} tsr__omp_w128;
static void fill_128(int64_t n, char *const p[], const int64_t s[], const void *param) {
  tsr__omp_w128 *d = (tsr__omp_w128 *)p[0];
  const tsr__omp_w128 v = *(const tsr__omp_w128 *)param;
  const int64_t sd = s[0];
  for (int64_t i = 0; i < n; i++)
    d[i * sd] = v;
}

/* The element of `dtype` nearest to `value` (saturating, NaN -> 0 for integers; a complex
   element value + 0i), as bits: 4-byte elements in bits32, 8-byte ones in bits64, 16-byte ones
   in bits128. */
static void tsr__convert_scalar(double value, tsr_dtype dtype, uint64_t *bits64, uint32_t *bits32,
                                tsr__omp_w128 *bits128) {
  switch (dtype) {
  case TSR_F32: {
    float f = (float)value;
    memcpy(bits32, &f, 4);
    break;
  }
  case TSR_F64: memcpy(bits64, &value, 8); break;
  case TSR_I32: {
    int32_t i = tsr__sat_f64_to_i32(value);
    memcpy(bits32, &i, 4);
    break;
  }
  case TSR_I64: {
    int64_t i = tsr__sat_f64_to_i64(value);
    memcpy(bits64, &i, 8);
    break;
  }
  case TSR_C64: {
    const tsr_complex64 z = {(float)value, 0.0f};
    memcpy(bits64, &z, 8);
    break;
  }
  case TSR_C128: {
    const tsr_complex128 z = {value, 0.0};
    memcpy(bits128, &z, 16);
    break;
  }
  }
}

tsr_status tsr__omp_fill(tsr_device dev, const tsr__view *dst, double value) {
  (void)dev;
  const size_t es = tsr__dtype_size(dst->dtype);
  TSR_CHECK(es != 0, TSR_ERR_DTYPE, "unknown dtype %d", (int)dst->dtype);
  uint64_t v64 = 0;
  uint32_t v32 = 0;
  tsr__omp_w128 v128 = {0, 0};
  tsr__convert_scalar(value, dst->dtype, &v64, &v32, &v128);
  const int64_t *strides[1] = {dst->strides};
  tsr__omp_loop lp;
  tsr__omp_loop_init(&lp, dst->ndim, dst->shape, 1, strides, &es);
  char *const base[1] = {(char *)dst->data};
  if (es == 4)
    tsr__omp_loop_run(&lp, base, fill_32, &v32, lp.size);
  else if (es == 8)
    tsr__omp_loop_run(&lp, base, fill_64, &v64, lp.size);
  else
    tsr__omp_loop_run(&lp, base, fill_128, &v128, lp.size);
  return TSR_OK;
}

/* ---------------------------------------------------------------- arange -------------- */

#define TSR__OMP_ARANGE(T, CONVERT)                                                                \
  do {                                                                                             \
    T *d = (T *)dst->data;                                                                         \
    TSR__OMP_PRAGMA(omp parallel for schedule(static) if (n > TSR__OMP_PAR_THRESHOLD))             \
    for (int64_t i = 0; i < n; i++)                                                                \
      d[i] = CONVERT(start + (double)i * step);                                                    \
  } while (0)
#define TSR__OMP_TO_F32(x) ((float)(x))
#define TSR__OMP_TO_F64(x) (x)

tsr_status tsr__omp_arange(tsr_device dev, const tsr__view *dst, double start, double step) {
  (void)dev;
  int64_t n = 1;
  for (int d = 0; d < dst->ndim; d++)
    n *= dst->shape[d];
  switch (dst->dtype) {
  case TSR_F32: TSR__OMP_ARANGE(float, TSR__OMP_TO_F32); break;
  case TSR_F64: TSR__OMP_ARANGE(double, TSR__OMP_TO_F64); break;
  case TSR_I32: TSR__OMP_ARANGE(int32_t, tsr__sat_f64_to_i32); break;
  case TSR_I64: TSR__OMP_ARANGE(int64_t, tsr__sat_f64_to_i64); break;
  default: return tsr__set_error(TSR_ERR_DTYPE, __func__, "unknown dtype %d", (int)dst->dtype);
  }
  return TSR_OK;
}

/* ---------------------------------------------------------------- copy ---------------- */

/* Same dtype: a bit copy, memcpy when both sides are contiguous. */
#define TSR__OMP_MOVE_KERNEL(BITS)                                                                 \
  static void move_##BITS(int64_t n, char *const p[], const int64_t s[], const void *param) {      \
    (void)param;                                                                                   \
    uint##BITS##_t *d = (uint##BITS##_t *)p[0];                                                    \
    const uint##BITS##_t *src = (const uint##BITS##_t *)p[1];                                      \
    if (s[0] == 1 && s[1] == 1) {                                                                  \
      memcpy(d, src, (size_t)n * sizeof *d);                                                       \
    } else if (s[0] == 1 && s[1] == 0) {                                                           \
      const uint##BITS##_t v = src[0];                                                             \
      TSR__OMP_PRAGMA(omp simd)                                                                    \
      for (int64_t i = 0; i < n; i++)                                                              \
        d[i] = v;                                                                                  \
    } else {                                                                                       \
      const int64_t sd = s[0], ss = s[1];                                                          \
      for (int64_t i = 0; i < n; i++)                                                              \
        d[i * sd] = src[i * ss];                                                                   \
    }                                                                                              \
  }
TSR__OMP_MOVE_KERNEL(32)
TSR__OMP_MOVE_KERNEL(64)

static void move_128(int64_t n, char *const p[], const int64_t s[], const void *param) {
  (void)param;
  tsr__omp_w128 *d = (tsr__omp_w128 *)p[0];
  const tsr__omp_w128 *src = (const tsr__omp_w128 *)p[1];
  if (s[0] == 1 && s[1] == 1) {
    memcpy(d, src, (size_t)n * sizeof *d);
  } else {
    const int64_t sd = s[0], ss = s[1];
    for (int64_t i = 0; i < n; i++)
      d[i * sd] = src[i * ss];
  }
}

/* Conversions as C converts, except float -> integer, which saturates (see
   tsr__sat_f64_to_i32) and integer narrowing, which wraps (explicitly, through unsigned). */
static inline int32_t tsr__i32_from_i64(int64_t x) {
  return (int32_t)(uint32_t)(uint64_t)x;
}
static inline int64_t tsr__i64_from_i32(int32_t x) {
  return x;
}
#define TSR__OMP_CVT_f32(x) ((float)(x))
#define TSR__OMP_CVT_f64(x) ((double)(x))
#define TSR__OMP_CVT_i32(x)                                                                        \
  _Generic((x), float                                                                              \
           : tsr__sat_f64_to_i32, double                                                           \
           : tsr__sat_f64_to_i32, int64_t                                                          \
           : tsr__i32_from_i64)(x)
#define TSR__OMP_CVT_i64(x)                                                                        \
  _Generic((x), float                                                                              \
           : tsr__sat_f64_to_i64, double                                                           \
           : tsr__sat_f64_to_i64, int32_t                                                          \
           : tsr__i64_from_i32)(x)

#define TSR__OMP_CONVERT_KERNEL(TD, DN, TS, SN)                                                    \
  static void convert_##SN##_to_##DN(int64_t n, char *const p[], const int64_t s[],                \
                                     const void *param) {                                          \
    (void)param;                                                                                   \
    TD *d = (TD *)p[0];                                                                            \
    const TS *src = (const TS *)p[1];                                                              \
    if (s[0] == 1 && s[1] == 1) {                                                                  \
      TSR__OMP_PRAGMA(omp simd)                                                                    \
      for (int64_t i = 0; i < n; i++)                                                              \
        d[i] = TSR__OMP_CVT_##DN(src[i]);                                                          \
    } else if (s[0] == 1 && s[1] == 0) {                                                           \
      const TD v = TSR__OMP_CVT_##DN(src[0]);                                                      \
      TSR__OMP_PRAGMA(omp simd)                                                                    \
      for (int64_t i = 0; i < n; i++)                                                              \
        d[i] = v;                                                                                  \
    } else {                                                                                       \
      const int64_t sd = s[0], ss = s[1];                                                          \
      for (int64_t i = 0; i < n; i++)                                                              \
        d[i * sd] = TSR__OMP_CVT_##DN(src[i * ss]);                                                \
    }                                                                                              \
  }
TSR__OMP_CONVERT_KERNEL(float, f32, double, f64)
TSR__OMP_CONVERT_KERNEL(float, f32, int32_t, i32)
TSR__OMP_CONVERT_KERNEL(float, f32, int64_t, i64)
TSR__OMP_CONVERT_KERNEL(double, f64, float, f32)
TSR__OMP_CONVERT_KERNEL(double, f64, int32_t, i32)
TSR__OMP_CONVERT_KERNEL(double, f64, int64_t, i64)
TSR__OMP_CONVERT_KERNEL(int32_t, i32, float, f32)
TSR__OMP_CONVERT_KERNEL(int32_t, i32, double, f64)
TSR__OMP_CONVERT_KERNEL(int32_t, i32, int64_t, i64)
TSR__OMP_CONVERT_KERNEL(int64_t, i64, float, f32)
TSR__OMP_CONVERT_KERNEL(int64_t, i64, double, f64)
TSR__OMP_CONVERT_KERNEL(int64_t, i64, int32_t, i32)

/* To complex: a real or integer source gives (x, 0); c64 <-> c128 converts both parts. The
   complex part of the source is read as its part pair (tsr_complex64/128 are C99's layout). */
#define TSR__OMP_RE_f32(x) ((double)(x))
#define TSR__OMP_RE_f64(x) ((double)(x))
#define TSR__OMP_RE_i32(x) ((double)(x))
#define TSR__OMP_RE_i64(x) ((double)(x))
#define TSR__OMP_RE_c64(x) ((double)(x).re)
#define TSR__OMP_RE_c128(x) ((x).re)
#define TSR__OMP_IM_f32(x) 0.0
#define TSR__OMP_IM_f64(x) 0.0
#define TSR__OMP_IM_i32(x) 0.0
#define TSR__OMP_IM_i64(x) 0.0
#define TSR__OMP_IM_c64(x) ((double)(x).im)
#define TSR__OMP_IM_c128(x) ((x).im)
#define TSR__OMP_TO_COMPLEX_KERNEL(TD, PT, DN, TS, SN)                                             \
  static void convert_##SN##_to_##DN(int64_t n, char *const p[], const int64_t s[],                \
                                     const void *param) {                                          \
    (void)param;                                                                                   \
    TD *d = (TD *)p[0];                                                                            \
    const TS *src = (const TS *)p[1];                                                              \
    const int64_t sd = s[0], ss = s[1];                                                            \
    for (int64_t i = 0; i < n; i++) {                                                              \
      const TS x = src[i * ss];                                                                    \
      d[i * sd].re = (PT)TSR__OMP_RE_##SN(x);                                                      \
      d[i * sd].im = (PT)TSR__OMP_IM_##SN(x);                                                      \
    }                                                                                              \
  }
TSR__OMP_TO_COMPLEX_KERNEL(tsr_complex64, float, c64, float, f32)
TSR__OMP_TO_COMPLEX_KERNEL(tsr_complex64, float, c64, double, f64)
TSR__OMP_TO_COMPLEX_KERNEL(tsr_complex64, float, c64, int32_t, i32)
TSR__OMP_TO_COMPLEX_KERNEL(tsr_complex64, float, c64, int64_t, i64)
TSR__OMP_TO_COMPLEX_KERNEL(tsr_complex64, float, c64, tsr_complex128, c128)
TSR__OMP_TO_COMPLEX_KERNEL(tsr_complex128, double, c128, float, f32)
TSR__OMP_TO_COMPLEX_KERNEL(tsr_complex128, double, c128, double, f64)
TSR__OMP_TO_COMPLEX_KERNEL(tsr_complex128, double, c128, int32_t, i32)
TSR__OMP_TO_COMPLEX_KERNEL(tsr_complex128, double, c128, int64_t, i64)
TSR__OMP_TO_COMPLEX_KERNEL(tsr_complex128, double, c128, tsr_complex64, c64)

/* [dst dtype][src dtype]; the diagonal is the bit copy. Complex to real is NULL: the core
   refuses it (tsr__check_convert). */
static const tsr__omp_kernel convert_kernels[TSR_NUM_DTYPES][TSR_NUM_DTYPES] = {
    [TSR_F32] = {[TSR_F32] = move_32,
                 [TSR_F64] = convert_f64_to_f32,
                 [TSR_I32] = convert_i32_to_f32,
                 [TSR_I64] = convert_i64_to_f32},
    [TSR_F64] = {[TSR_F32] = convert_f32_to_f64,
                 [TSR_F64] = move_64,
                 [TSR_I32] = convert_i32_to_f64,
                 [TSR_I64] = convert_i64_to_f64},
    [TSR_I32] = {[TSR_F32] = convert_f32_to_i32,
                 [TSR_F64] = convert_f64_to_i32,
                 [TSR_I32] = move_32,
                 [TSR_I64] = convert_i64_to_i32},
    [TSR_I64] = {[TSR_F32] = convert_f32_to_i64,
                 [TSR_F64] = convert_f64_to_i64,
                 [TSR_I32] = convert_i32_to_i64,
                 [TSR_I64] = move_64},
    [TSR_C64] = {[TSR_F32] = convert_f32_to_c64,
                 [TSR_F64] = convert_f64_to_c64,
                 [TSR_I32] = convert_i32_to_c64,
                 [TSR_I64] = convert_i64_to_c64,
                 [TSR_C64] = move_64,
                 [TSR_C128] = convert_c128_to_c64},
    [TSR_C128] = {[TSR_F32] = convert_f32_to_c128,
                  [TSR_F64] = convert_f64_to_c128,
                  [TSR_I32] = convert_i32_to_c128,
                  [TSR_I64] = convert_i64_to_c128,
                  [TSR_C64] = convert_c64_to_c128,
                  [TSR_C128] = move_128},
};

tsr_status tsr__omp_copy(tsr_device dev, const tsr__view *dst, const tsr__view *src) {
  (void)dev;
  TSR_CHECK((unsigned)dst->dtype < TSR_NUM_DTYPES && (unsigned)src->dtype < TSR_NUM_DTYPES,
            TSR_ERR_DTYPE, "unknown dtype (dst %d, src %d)", (int)dst->dtype, (int)src->dtype);
  TSR_CHECK(convert_kernels[dst->dtype][src->dtype] != NULL, TSR_ERR_DTYPE,
            "cannot convert %s to %s", tsr_dtype_name(src->dtype), tsr_dtype_name(dst->dtype));
  const int64_t *strides[2] = {dst->strides, src->strides};
  const size_t elsize[2] = {tsr__dtype_size(dst->dtype), tsr__dtype_size(src->dtype)};
  tsr__omp_loop lp;
  tsr__omp_loop_init(&lp, dst->ndim, dst->shape, 2, strides, elsize);
  char *const base[2] = {(char *)dst->data, (char *)src->data};
  tsr__omp_loop_run(&lp, base, convert_kernels[dst->dtype][src->dtype], NULL, lp.size);
  return TSR_OK;
}

/* ---------------------------------------------------------------- rng ----------------- */

tsr_status tsr__omp_rng(tsr_device dev, const tsr__view *dst, uint64_t seed, uint64_t offset,
                        tsr__rng_dist dist, double p0, double p1) {
  (void)dev;
  TSR_CHECK(tsr__dtype_is_float(dst->dtype), TSR_ERR_DTYPE,
            "random numbers need a float dtype, not %s", tsr_dtype_name(dst->dtype));
  int64_t n = 1;
  for (int d = 0; d < dst->ndim; d++)
    n *= dst->shape[d];
  tsr__rng_fill_host(dst->data, dst->dtype, n, seed, offset, dist, p0, p1);
  return TSR_OK;
}
