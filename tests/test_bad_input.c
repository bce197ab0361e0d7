/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad input of every kind through the public API: NULL for every pointer argument, negative
 * and overflowing sizes, bad ndim, dtype, device, operator, axis, permutation, slice step,
 * transpose flag, reshape count, environment variables, byte counts, and malformed .npy files.
 * Every case expects its status AND a non-empty message recorded by that very call.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_util.h"

/* The out-of-memory cases ask for 256 TiB; under AddressSanitizer the allocator must return
   NULL instead of aborting. The hook is only read by ASan builds. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1";
}

static tsr_device dev;

/* Clears the last error first, so the message checked was written by this call. */
#define EXPECT(expr, code)                                                                         \
  do {                                                                                             \
    tsr_clear_error();                                                                             \
    TSR_ASSERT_STATUS((expr), (code), NULL);                                                       \
  } while (0)
#define EXPECT_MSG(expr, code, needle)                                                             \
  do {                                                                                             \
    tsr_clear_error();                                                                             \
    TSR_ASSERT_STATUS((expr), (code), (needle));                                                   \
  } while (0)

/* The first index past the devices present (queried in main: index 7 exists on an 8-GPU
   node), so the missing-device cases hold on any host and check the bound itself. */
static tsr_device no_gpu = {TSR_DEVICE_CUDA, 0};
static tsr_device no_hip = {TSR_DEVICE_HIP, 0};
static const tsr_device bad_kind = {(tsr_device_kind)42, 0};
static const tsr_device cpu1 = {TSR_DEVICE_CPU, 1};
static const tsr_device cpu_neg = {TSR_DEVICE_CPU, -1};

/* ---------------------------------------------------------------- devices */

static void test_devices(void **state) {
  (void)state;
  tsr_device d;
  int n;
  tsr_device_props props;
  char buf[64];
  EXPECT(tsr_device_default(NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_device_parse(NULL, &d), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_device_parse("cpu", NULL), TSR_ERR_NULL_POINTER);
  static const char *garbage[] = {
      "gpu:x",   "",     "gpu",    "cuda:",  "cuda:x",
      "cuda:-1", "cpu:", "hip:1x", "CUDA 0", "cuda:99999999999999999999999"};
  for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
    tsr_clear_error();
    tsr_status st = tsr_device_parse(garbage[i], &d);
    if (st != TSR_ERR_INVALID_ARGUMENT)
      print_error("tsr_device_parse(\"%s\") gave %s\n", garbage[i], tsr_status_name(st));
    TSR_ASSERT_STATUS(st, TSR_ERR_INVALID_ARGUMENT, NULL);
  }
  EXPECT(tsr_device_parse("cuda:1000", &d), TSR_ERR_NO_DEVICE);
  EXPECT(tsr_device_parse("hip:1000", &d), TSR_ERR_NO_DEVICE);
  char name[32], why[48];
  snprintf(name, sizeof name, "cuda:%d", no_gpu.index);
  snprintf(why, sizeof why, "no CUDA device %d", no_gpu.index);
  EXPECT_MSG(tsr_device_parse(name, &d), TSR_ERR_NO_DEVICE, why);
  snprintf(name, sizeof name, "hip:%d", no_hip.index);
  snprintf(why, sizeof why, "no HIP device %d", no_hip.index);
  EXPECT_MSG(tsr_device_parse(name, &d), TSR_ERR_NO_DEVICE, why);

  EXPECT(tsr_device_count(TSR_DEVICE_CPU, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_device_count((tsr_device_kind)42, &n), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_device_count((tsr_device_kind)-1, &n), TSR_ERR_INVALID_ARGUMENT);

  EXPECT(tsr_device_get_props(dev, NULL), TSR_ERR_NULL_POINTER);
  const tsr_device missing[] = {no_gpu, no_hip, bad_kind, cpu1, cpu_neg};
  for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
    EXPECT(tsr_device_get_props(missing[i], &props), TSR_ERR_NO_DEVICE);
    EXPECT(tsr_device_synchronize(missing[i]), TSR_ERR_NO_DEVICE);
    EXPECT(tsr_device_trim(missing[i]), TSR_ERR_NO_DEVICE);
  }

  EXPECT(tsr_device_string(dev, NULL, 10), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_device_string(TSR_CPU, buf, 3), TSR_ERR_INVALID_ARGUMENT); /* "cpu" needs 4 */
  EXPECT(tsr_device_string(TSR_CPU, buf, 0), TSR_ERR_INVALID_ARGUMENT);
}

/* TSR_DEVICE that does not parse, or names a missing device. */
static void test_device_env(void **state) {
  (void)state;
  const char *old = getenv("TSR_DEVICE");
  char *saved = old ? strdup(old) : NULL;
  tsr_device d;
  setenv("TSR_DEVICE", "gpu:x", 1);
  EXPECT_MSG(tsr_device_default(&d), TSR_ERR_INVALID_ARGUMENT, "gpu:x");
  setenv("TSR_DEVICE", "cuda:1000", 1);
  EXPECT(tsr_device_default(&d), TSR_ERR_NO_DEVICE);
  setenv("TSR_DEVICE", "hip:1000", 1);
  EXPECT(tsr_device_default(&d), TSR_ERR_NO_DEVICE);
  if (saved) {
    setenv("TSR_DEVICE", saved, 1);
    free(saved);
  } else {
    unsetenv("TSR_DEVICE");
  }
}

/* ---------------------------------------------------------------- creation */

typedef tsr_status (*create_fn)(int, const int64_t *, tsr_dtype, tsr_device, tsr_array **);

static tsr_status make_full(int nd, const int64_t *s, tsr_dtype dt, tsr_device d, tsr_array **o) {
  return tsr_full(nd, s, dt, d, 1.5, o);
}
static tsr_status make_empty_ex(int nd, const int64_t *s, tsr_dtype dt, tsr_device d,
                                tsr_array **o) {
  return tsr_empty_ex(nd, s, dt, d, TSR_ALLOC_MANAGED, o);
}
static tsr_status make_uniform(int nd, const int64_t *s, tsr_dtype dt, tsr_device d,
                               tsr_array **o) {
  return tsr_random_uniform(nd, s, dt, d, 1, 0, 1, o);
}
static tsr_status make_normal(int nd, const int64_t *s, tsr_dtype dt, tsr_device d, tsr_array **o) {
  return tsr_random_normal(nd, s, dt, d, 1, 0, 1, o);
}
static double host_data[64];
static tsr_status make_from_host(int nd, const int64_t *s, tsr_dtype dt, tsr_device d,
                                 tsr_array **o) {
  return tsr_from_host(nd, s, dt, d, host_data, o);
}

/* Every creating function rejects the same bad shapes, dtypes and devices. */
static void test_creation(void **state) {
  (void)state;
  static const create_fn fns[] = {tsr_empty,    tsr_zeros,   make_full,     make_empty_ex,
                                  make_uniform, make_normal, make_from_host};
  static const char *names[] = {"tsr_empty",    "tsr_zeros",          "tsr_full",
                                "tsr_empty_ex", "tsr_random_uniform", "tsr_random_normal",
                                "tsr_from_host"};
  const int64_t ok[2] = {2, 3}, neg[2] = {2, -3}, big[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
  const int64_t huge[3] = {INT64_C(1) << 31, INT64_C(1) << 31, 4}; /* 2^64 elements */
  const int64_t bytes_over[1] = {INT64_C(1) << 61};                /* 2^64 bytes as f64 */
  const int64_t maxed[2] = {INT64_MAX, 2};
  const int64_t zero_then_big[3] = {0, INT64_C(1) << 30, INT64_C(1) << 20};
  const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
    tsr_array *a = NULL;
    EXPECT_MSG(fns[f](2, ok, TSR_F64, dev, NULL), TSR_ERR_NULL_POINTER, names[f]);
    EXPECT_MSG(fns[f](2, NULL, TSR_F64, dev, &a), TSR_ERR_NULL_POINTER, names[f]);
    EXPECT_MSG(fns[f](2, neg, TSR_F64, dev, &a), TSR_ERR_INVALID_ARGUMENT, "-3");
    EXPECT(fns[f](9, nine, TSR_F64, dev, &a), TSR_ERR_INVALID_ARGUMENT);
    EXPECT(fns[f](-1, ok, TSR_F64, dev, &a), TSR_ERR_INVALID_ARGUMENT);
    EXPECT(fns[f](2, big, TSR_F64, dev, &a), TSR_ERR_OVERFLOW);
    EXPECT(fns[f](3, huge, TSR_F32, dev, &a), TSR_ERR_OVERFLOW);
    EXPECT(fns[f](1, bytes_over, TSR_F64, dev, &a), TSR_ERR_OVERFLOW);
    EXPECT(fns[f](2, maxed, TSR_F32, dev, &a), TSR_ERR_OVERFLOW);
    EXPECT(fns[f](2, ok, (tsr_dtype)99, dev, &a), TSR_ERR_DTYPE);
    EXPECT(fns[f](2, ok, (tsr_dtype)-1, dev, &a), TSR_ERR_DTYPE);
    EXPECT(fns[f](2, ok, TSR_F64, no_gpu, &a), TSR_ERR_NO_DEVICE);
    EXPECT(fns[f](2, ok, TSR_F64, no_hip, &a), TSR_ERR_NO_DEVICE);
    EXPECT(fns[f](2, ok, TSR_F64, bad_kind, &a), TSR_ERR_NO_DEVICE);
    EXPECT(fns[f](2, ok, TSR_F64, cpu1, &a), TSR_ERR_NO_DEVICE);
    assert_null(a);
    /* A zero-sized axis makes the count 0: a valid empty array even with large other axes
       (NumPy still rejects them when the product of the others overflows). */
    if (fns[f] != make_from_host) {
      TSR_ASSERT_OK(fns[f](3, zero_then_big, TSR_F64, dev, &a));
      tsr_array_release(a);
      a = NULL;
    }
  }
  tsr_array *a = NULL;
  int64_t n = 4;
  EXPECT(tsr_from_host(1, &n, TSR_F32, dev, NULL, &a), TSR_ERR_NULL_POINTER);
  /* 2^45 doubles (256 TiB): no such memory. */
  int64_t oom = INT64_C(1) << 45;
  EXPECT(tsr_empty(1, &oom, TSR_F64, dev, &a), TSR_ERR_OUT_OF_MEMORY);
  EXPECT(tsr_zeros(1, &oom, TSR_F64, dev, &a), TSR_ERR_OUT_OF_MEMORY);
  assert_null(a);

  EXPECT(tsr_arange(0, 10, 1, TSR_F32, dev, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_arange(0, 10, 0, TSR_F32, dev, &a), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_arange(0, 10, NAN, TSR_F32, dev, &a), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_arange(0, 10, INFINITY, TSR_F32, dev, &a), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_arange(0, 10, 1, (tsr_dtype)99, dev, &a), TSR_ERR_DTYPE);
  EXPECT(tsr_arange(0, 10, 1, TSR_F32, no_gpu, &a), TSR_ERR_NO_DEVICE);
  EXPECT(tsr_arange(0, 1e30, 1, TSR_F64, dev, &a), TSR_ERR_OVERFLOW); /* 1e30 elements */
  assert_null(a);

  size_t bytes;
  EXPECT(tsr_dtype_size(TSR_F32, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_dtype_size((tsr_dtype)99, &bytes), TSR_ERR_DTYPE);
}

/* ---------------------------------------------------------------- arrays */

static void test_array_functions(void **state) {
  (void)state;
  int64_t s34[2] = {3, 4};
  tsr_array *a = tsr_test_random_array(2, s34, TSR_F64, dev, 1, NULL), *o = NULL;
  tsr_array_props info;
  double buf[12];

  EXPECT(tsr_array_retain(NULL), TSR_ERR_NULL_POINTER);
  TSR_ASSERT_OK(tsr_array_release(NULL));
  EXPECT(tsr_array_info(NULL, &info), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_array_info(a, NULL), TSR_ERR_NULL_POINTER);

  EXPECT(tsr_array_read(NULL, buf, sizeof buf), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_array_read(a, NULL, sizeof buf), TSR_ERR_NULL_POINTER);
  EXPECT_MSG(tsr_array_read(a, buf, sizeof buf - 1), TSR_ERR_INVALID_ARGUMENT, "95");
  EXPECT(tsr_array_read(a, buf, sizeof buf + 8), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_array_read(a, buf, 0), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_array_read(a, buf, 12 * sizeof(float)), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_array_write(NULL, buf, sizeof buf), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_array_write(a, NULL, sizeof buf), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_array_write(a, buf, sizeof buf - 8), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_array_write(a, buf, SIZE_MAX), TSR_ERR_INVALID_ARGUMENT);

  EXPECT(tsr_array_to(NULL, dev, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_array_to(a, dev, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_array_to(a, no_gpu, &o), TSR_ERR_NO_DEVICE);
  EXPECT(tsr_array_to(a, bad_kind, &o), TSR_ERR_NO_DEVICE);
  EXPECT(tsr_copy(NULL, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_copy(a, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_contiguous(NULL, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_contiguous(a, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_astype(NULL, TSR_F32, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_astype(a, TSR_F32, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_astype(a, (tsr_dtype)99, &o), TSR_ERR_DTYPE);
  assert_null(o);

  /* assign: NULLs, shapes that do not broadcast to dst's shape. */
  int64_t s43[2] = {4, 3}, s234[3] = {2, 3, 4}, s3[1] = {3};
  tsr_array *b43 = tsr_test_random_array(2, s43, TSR_F64, dev, 2, NULL);
  tsr_array *b234 = tsr_test_random_array(3, s234, TSR_F64, dev, 3, NULL);
  tsr_array *b3 = tsr_test_random_array(1, s3, TSR_F32, dev, 4, NULL);
  EXPECT(tsr_assign(NULL, a), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_assign(a, NULL), TSR_ERR_NULL_POINTER);
  EXPECT_MSG(tsr_assign(a, b43), TSR_ERR_SHAPE, "4x3");
  EXPECT(tsr_assign(a, b234), TSR_ERR_SHAPE); /* src must not grow dst */
  EXPECT(tsr_assign(a, b3), TSR_ERR_SHAPE);
  /* A failed assign writes nothing. */
  double before[12], after[12];
  TSR_ASSERT_OK(tsr_array_read(a, before, sizeof before));
  EXPECT(tsr_assign(a, b234), TSR_ERR_SHAPE);
  TSR_ASSERT_OK(tsr_array_read(a, after, sizeof after));
  assert_memory_equal(before, after, sizeof before);

  tsr_array_release(b43);
  tsr_array_release(b234);
  tsr_array_release(b3);
  tsr_array_release(a);
}

static void test_views(void **state) {
  (void)state;
  int64_t s34[2] = {3, 4};
  tsr_array *a = tsr_test_random_array(2, s34, TSR_F32, dev, 5, NULL), *o = NULL;

  int64_t r6x2[2] = {6, 2}, r5[1] = {5}, r7x2[2] = {7, 2}, two_inferred[2] = {-1, -1};
  int64_t minus2[2] = {-2, 6}, bigr[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 1 << 20};
  int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 12}, inf5[2] = {-1, 5};
  EXPECT(tsr_reshape(NULL, 2, r6x2, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_reshape(a, 2, NULL, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_reshape(a, 2, r6x2, NULL), TSR_ERR_NULL_POINTER);
  EXPECT_MSG(tsr_reshape(a, 1, r5, &o), TSR_ERR_SHAPE, "tsr_reshape");
  EXPECT(tsr_reshape(a, 2, r7x2, &o), TSR_ERR_SHAPE);
  EXPECT(tsr_reshape(a, 2, inf5, &o), TSR_ERR_SHAPE); /* 12 is not a multiple of 5 */
  EXPECT(tsr_reshape(a, 2, two_inferred, &o), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_reshape(a, 2, minus2, &o), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_reshape(a, 9, nine, &o), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_reshape(a, -1, r6x2, &o), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_reshape(a, 3, bigr, &o), TSR_ERR_OVERFLOW);
  assert_null(o);

  static const int bad_perms[][2] = {{0, 0}, {1, 1}, {0, 2}, {-3, 0}, {2, -1}};
  EXPECT(tsr_transpose(NULL, NULL, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_transpose(a, NULL, NULL), TSR_ERR_NULL_POINTER);
  for (size_t p = 0; p < sizeof bad_perms / sizeof bad_perms[0]; p++)
    EXPECT_MSG(tsr_transpose(a, bad_perms[p], &o), TSR_ERR_INVALID_ARGUMENT, "tsr_transpose");
  assert_null(o);

  EXPECT(tsr_slice(NULL, 0, 0, 1, 1, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_slice(a, 0, 0, 1, 1, NULL), TSR_ERR_NULL_POINTER);
  EXPECT_MSG(tsr_slice(a, 0, 0, 3, 0, &o), TSR_ERR_INVALID_ARGUMENT, "step");
  EXPECT(tsr_slice(a, 2, 0, 1, 1, &o), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_slice(a, 100, 0, 1, 1, &o), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_slice(a, -100, 0, 1, 1, &o), TSR_ERR_INVALID_ARGUMENT);
  tsr_array *s = NULL;
  TSR_ASSERT_OK(tsr_full(0, NULL, TSR_F32, dev, 1, &s));
  EXPECT(tsr_slice(s, 0, 0, 1, 1, &o), TSR_ERR_INVALID_ARGUMENT); /* a scalar has no axis */
  assert_null(o);
  tsr_array_release(s);
  tsr_array_release(a);
}

/* ---------------------------------------------------------------- ops */

static void test_ops(void **state) {
  (void)state;
  int64_t s34[2] = {3, 4};
  tsr_array *a = tsr_test_random_array(2, s34, TSR_F32, dev, 6, NULL), *o = NULL;
  typedef tsr_status (*bin_fn)(const tsr_array *, const tsr_array *, tsr_array **);
  static const bin_fn bins[] = {tsr_add,     tsr_sub,     tsr_mul, tsr_div,
                                tsr_maximum, tsr_minimum, tsr_pow};
  for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++) {
    EXPECT(bins[i](NULL, a, &o), TSR_ERR_NULL_POINTER);
    EXPECT(bins[i](a, NULL, &o), TSR_ERR_NULL_POINTER);
    EXPECT(bins[i](a, a, NULL), TSR_ERR_NULL_POINTER);
  }
  EXPECT(tsr_binary(TSR_ADD, NULL, a, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_binary(TSR_ADD, a, NULL, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_binary(TSR_ADD, a, a, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_binary((tsr_binary_op)TSR_NUM_BINARY_OPS, a, a, &o), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_binary((tsr_binary_op)-1, a, a, &o), TSR_ERR_INVALID_ARGUMENT);

  typedef tsr_status (*un_fn)(const tsr_array *, tsr_array **);
  static const un_fn uns[] = {tsr_neg,  tsr_abs,  tsr_exp,     tsr_log,
                              tsr_sqrt, tsr_tanh, tsr_sigmoid, tsr_relu};
  for (size_t i = 0; i < sizeof uns / sizeof uns[0]; i++) {
    EXPECT(uns[i](NULL, &o), TSR_ERR_NULL_POINTER);
    EXPECT(uns[i](a, NULL), TSR_ERR_NULL_POINTER);
  }
  EXPECT(tsr_unary(TSR_EXP, NULL, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_unary(TSR_EXP, a, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_unary((tsr_unary_op)TSR_NUM_UNARY_OPS, a, &o), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_unary((tsr_unary_op)-1, a, &o), TSR_ERR_INVALID_ARGUMENT);

  typedef tsr_status (*red_fn)(const tsr_array *, int, int, tsr_array **);
  static const red_fn reds[] = {tsr_sum, tsr_mean, tsr_max, tsr_min, tsr_argmax};
  for (size_t i = 0; i < sizeof reds / sizeof reds[0]; i++) {
    EXPECT(reds[i](NULL, 0, 0, &o), TSR_ERR_NULL_POINTER);
    EXPECT(reds[i](a, 0, 0, NULL), TSR_ERR_NULL_POINTER);
    EXPECT_MSG(reds[i](a, 2, 0, &o), TSR_ERR_INVALID_ARGUMENT, "2");
    EXPECT(reds[i](a, -3, 1, &o), TSR_ERR_INVALID_ARGUMENT);
  }
  EXPECT(tsr_reduce(TSR_SUM, NULL, 0, 0, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_reduce(TSR_SUM, a, 0, 0, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_reduce((tsr_reduce_op)TSR_NUM_REDUCE_OPS, a, 0, 0, &o), TSR_ERR_INVALID_ARGUMENT);
  assert_null(o);
  tsr_array_release(a);
}

/* ---------------------------------------------------------------- linalg */

static void test_linalg(void **state) {
  (void)state;
  int64_t s34[2] = {3, 4}, s45[2] = {4, 5}, s35[2] = {3, 5};
  tsr_array *a = tsr_test_random_array(2, s34, TSR_F64, dev, 7, NULL);
  tsr_array *b = tsr_test_random_array(2, s45, TSR_F64, dev, 8, NULL);
  tsr_array *c = tsr_test_random_array(2, s35, TSR_F64, dev, 9, NULL), *o = NULL;
  EXPECT(tsr_matmul(NULL, b, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_matmul(a, NULL, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_matmul(a, b, NULL), TSR_ERR_NULL_POINTER);
  EXPECT_MSG(tsr_matmul(b, a, &o), TSR_ERR_SHAPE, "inner dimensions differ");
  assert_null(o);
  EXPECT(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, NULL, b, 0, c), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, a, NULL, 0, c), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, a, b, 0, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1, NULL, b, 0, c, TSR_GEMM_NATIVE),
         TSR_ERR_NULL_POINTER);
  EXPECT(tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1, a, NULL, 0, c, TSR_GEMM_NATIVE),
         TSR_ERR_NULL_POINTER);
  EXPECT(tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1, a, b, 0, NULL, TSR_GEMM_NATIVE),
         TSR_ERR_NULL_POINTER);
  EXPECT(tsr_gemm((tsr_trans)7, TSR_NO_TRANS, 1, a, b, 0, c), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_gemm(TSR_NO_TRANS, (tsr_trans)7, 1, a, b, 0, c), TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, b, a, 0, c), TSR_ERR_SHAPE);

  /* TSR_GEMM garbage makes the AUTO path fail; C is untouched. */
  const char *old = getenv("TSR_GEMM");
  char *saved = old ? strdup(old) : NULL;
  double before[15], after[15];
  TSR_ASSERT_OK(tsr_array_read(c, before, sizeof before));
  setenv("TSR_GEMM", "fastest", 1);
  EXPECT_MSG(tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1, a, b, 0, c, TSR_GEMM_AUTO),
             TSR_ERR_INVALID_ARGUMENT, "fastest");
  TSR_ASSERT_OK(tsr_array_read(c, after, sizeof after));
  assert_memory_equal(before, after, sizeof before);
  /* Explicit paths ignore the variable. */
  TSR_ASSERT_OK(tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1, a, b, 0, c, TSR_GEMM_NATIVE));
  if (saved) {
    setenv("TSR_GEMM", saved, 1);
    free(saved);
  } else {
    unsetenv("TSR_GEMM");
  }
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
}

/* Operands on two devices (only when the device under test is a GPU). */
static void test_device_mismatch(void **state) {
  (void)state;
  if (ct_is_cpu(dev)) skip();
  int64_t s33[2] = {3, 3};
  tsr_array *g = tsr_test_random_array(2, s33, TSR_F32, dev, 1, NULL);
  tsr_array *h = tsr_test_random_array(2, s33, TSR_F32, TSR_CPU, 2, NULL), *o = NULL;
  EXPECT(tsr_add(g, h, &o), TSR_ERR_DEVICE_MISMATCH);
  EXPECT(tsr_assign(g, h), TSR_ERR_DEVICE_MISMATCH);
  EXPECT(tsr_matmul(g, h, &o), TSR_ERR_DEVICE_MISMATCH);
  EXPECT(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, g, g, 0, h), TSR_ERR_DEVICE_MISMATCH);
  EXPECT(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, h, g, 0, g), TSR_ERR_DEVICE_MISMATCH);
  assert_null(o);
  tsr_array_release(g);
  tsr_array_release(h);
}

/* ---------------------------------------------------------------- .npy files */

static char tmp_path[256];

static const char *temp_file(const char *tag) {
  snprintf(tmp_path, sizeof tmp_path, "core_bad_input_%ld_%s.npy", (long)getpid(), tag);
  return tmp_path;
}

static void write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
}

static void test_npy(void **state) {
  (void)state;
  tsr_array *o = NULL;
  tsr_npy_header h;
  char hdr[256];
  size_t len = 0;
  int64_t s10[1] = {10};

  /* NULL arguments. */
  EXPECT(tsr_npy_load(NULL, dev, &o), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_npy_load("x.npy", dev, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_npy_read_header(NULL, &h), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_npy_read_header("x.npy", NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_npy_parse_header(NULL, 10, &h), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_npy_parse_header(hdr, sizeof hdr, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_npy_format_header(TSR_F64, 0, 1, s10, NULL, sizeof hdr, &len), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_npy_format_header(TSR_F64, 0, 1, s10, hdr, sizeof hdr, NULL), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_npy_format_header(TSR_F64, 0, 1, NULL, hdr, sizeof hdr, &len), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_npy_format_header((tsr_dtype)99, 0, 1, s10, hdr, sizeof hdr, &len), TSR_ERR_DTYPE);
  EXPECT(tsr_npy_format_header(TSR_F64, 0, 9, s10, hdr, sizeof hdr, &len),
         TSR_ERR_INVALID_ARGUMENT);
  EXPECT(tsr_npy_format_header(TSR_F64, 0, 1, s10, hdr, 8, &len), TSR_ERR_INVALID_ARGUMENT);

  int64_t s3[1] = {3};
  tsr_array *a = tsr_test_random_array(1, s3, TSR_F64, dev, 1, NULL);
  EXPECT(tsr_npy_save(NULL, a), TSR_ERR_NULL_POINTER);
  EXPECT(tsr_npy_save("x.npy", NULL), TSR_ERR_NULL_POINTER);
  /* A folder that does not exist: TSR_ERR_IO, and nothing left behind. */
  EXPECT(tsr_npy_save("no_such_dir_tessera/x.npy", a), TSR_ERR_IO);
  tsr_array_release(a);

  /* Missing file. */
  EXPECT_MSG(tsr_npy_load("no_such_file_tessera.npy", dev, &o), TSR_ERR_IO,
             "no_such_file_tessera.npy");
  EXPECT(tsr_npy_read_header("no_such_file_tessera.npy", &h), TSR_ERR_IO);

  /* Garbage. */
  const char *path = temp_file("garbage");
  const char garbage[] = "this is not a numpy file at all, just text\n";
  write_file(path, garbage, sizeof garbage);
  EXPECT(tsr_npy_load(path, dev, &o), TSR_ERR_FORMAT);
  remove(path);

  /* Empty file. */
  path = temp_file("empty");
  write_file(path, "", 0);
  EXPECT(tsr_npy_load(path, dev, &o), TSR_ERR_FORMAT);
  remove(path);

  /* A valid header for 10 doubles followed by only 5. */
  TSR_ASSERT_OK(tsr_npy_format_header(TSR_F64, 0, 1, s10, hdr, sizeof hdr, &len));
  unsigned char file[256 + 80];
  memcpy(file, hdr, len);
  memset(file + len, 0x3f, 5 * sizeof(double));
  path = temp_file("truncated_data");
  write_file(path, file, len + 5 * sizeof(double));
  EXPECT(tsr_npy_load(path, dev, &o), TSR_ERR_FORMAT);
  EXPECT(tsr_npy_read_header(path, &h), TSR_ERR_FORMAT);
  remove(path);

  /* The header cut in the middle of its dictionary. */
  path = temp_file("truncated_header");
  write_file(path, hdr, len / 2);
  EXPECT(tsr_npy_load(path, dev, &o), TSR_ERR_FORMAT);
  remove(path);

  /* A complete file loads (the control for the cases above), but not onto a missing device. */
  memset(file + len, 0, 10 * sizeof(double));
  path = temp_file("ok");
  write_file(path, file, len + 10 * sizeof(double));
  TSR_ASSERT_OK(tsr_npy_load(path, dev, &o));
  tsr_array_release(o);
  o = NULL;
  EXPECT(tsr_npy_load(path, no_gpu, &o), TSR_ERR_NO_DEVICE);
  remove(path);
  assert_null(o);

  /* Arguments first, then the file (issue 48): a missing device fails as such even when the
     file is missing too, and no file is opened for it. */
  EXPECT_MSG(tsr_npy_load("no_such_file_tessera.npy", no_gpu, &o), TSR_ERR_NO_DEVICE, "device");
  assert_null(o);
}

/* A well-formed .npy of a dtype Tessera does not read is TSR_ERR_DTYPE with the descr in the
   message, from every reader (issue 48); a malformed descr stays TSR_ERR_FORMAT. */
static void test_npy_dtypes(void **state) {
  (void)state;
  static const char *const unsupported[] = {"<c32",    "<u8", "<f2", "<u4", "|u1", "|b1",
                                            "<M8[ns]", "|S5", "<U3", "|O",  "<f16"};
  char dict[160], want[200];
  unsigned char file[256 + 64];
  memset(file, 0, sizeof file);
  tsr_npy_header h;
  tsr_array *o = NULL;
  for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (2, 3), }",
             unsupported[i]);
    size_t n = strlen(dict), len = (10 + n + 1 + 63) / 64 * 64;
    memcpy(file, "\x93NUMPY\x01\x00", 8);
    file[8] = (unsigned char)((len - 10) & 0xff);
    file[9] = (unsigned char)((len - 10) >> 8);
    memcpy(file + 10, dict, n);
    memset(file + 10 + n, ' ', len - 11 - n);
    file[len - 1] = '\n';
    snprintf(want, sizeof want, "unsupported dtype '%s'", unsupported[i]);
    EXPECT_MSG(tsr_npy_parse_header(file, len, &h), TSR_ERR_DTYPE, want);
    const char *path = temp_file("dtype");
    write_file(path, file, len + 64);
    EXPECT_MSG(tsr_npy_read_header(path, &h), TSR_ERR_DTYPE, want);
    EXPECT_MSG(tsr_npy_load(path, dev, &o), TSR_ERR_DTYPE, want);
    assert_null(o);
    remove(path);
  }
  /* A structured dtype is well-formed too. */
  const char structured[] = "{'descr': [('x', '<f8'), ('y', '<i4')], 'fortran_order': False, "
                            "'shape': (2,), }";
  size_t n = strlen(structured), len = (10 + n + 1 + 63) / 64 * 64;
  memcpy(file + 10, structured, n);
  memset(file + 10 + n, ' ', len - 11 - n);
  file[8] = (unsigned char)((len - 10) & 0xff);
  file[9] = (unsigned char)((len - 10) >> 8);
  file[len - 1] = '\n';
  EXPECT_MSG(tsr_npy_parse_header(file, len, &h), TSR_ERR_DTYPE,
             "unsupported dtype [('x', '<f8'), ('y', '<i4')]: ");
  /* Malformed: no NumPy writes these, and a malformed rest of the header wins. */
  static const char *const malformed[] = {
      "{'descr': '<f9', 'fortran_order': False, 'shape': (2,), }",
      "{'descr': '|f8', 'fortran_order': False, 'shape': (2,), }",
      "{'descr': 'c16x', 'fortran_order': False, 'shape': (2,), }",
      "{'descr': '<c16', 'fortran_order': Maybe, 'shape': (2,), }",
      "{'descr': [('x', '<f8'), 'fortran_order': False, 'shape': (2,), }"};
  for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
    n = strlen(malformed[i]);
    len = (10 + n + 1 + 63) / 64 * 64;
    memcpy(file + 10, malformed[i], n);
    memset(file + 10 + n, ' ', len - 11 - n);
    file[8] = (unsigned char)((len - 10) & 0xff);
    file[9] = (unsigned char)((len - 10) >> 8);
    file[len - 1] = '\n';
    EXPECT(tsr_npy_parse_header(file, len, &h), TSR_ERR_FORMAT);
  }
}

int main(void) {
  dev = tsr_test_device();
  if (tsr_device_count(TSR_DEVICE_CUDA, &no_gpu.index) != TSR_OK ||
      tsr_device_count(TSR_DEVICE_HIP, &no_hip.index) != TSR_OK) {
    fprintf(stderr, "tsr_device_count: %s\n", tsr_last_error());
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_devices),  cmocka_unit_test(test_device_env),
      cmocka_unit_test(test_creation), cmocka_unit_test(test_array_functions),
      cmocka_unit_test(test_views),    cmocka_unit_test(test_ops),
      cmocka_unit_test(test_linalg),   cmocka_unit_test(test_device_mismatch),
      cmocka_unit_test(test_npy),      cmocka_unit_test(test_npy_dtypes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
