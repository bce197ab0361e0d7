/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cross-device checks of the GPU backend against the CPU backend on the same random inputs
 * (GEMM: against a float64 reference computed here):
 * Philox arrays (uniform bit for bit, normal within a few ulps), every elementwise and unary
 * operator, reductions (including the split-axis and NaN paths), dtype conversions, fill and
 * arange, GEMM (native and vendor paths, every transpose, edge tiles, unaligned views,
 * beta = 0 with NaN in C), exact transfers, device mismatch, out of memory, managed memory,
 * and long chains of queued work (stream order and allocator reuse).
 * The CPU backend is itself checked against float64 references by the core suite.
 * Without a GPU the program exits 77 (skipped).
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_test.h"

static tsr_device gpu;
#define CPU ((tsr_device){TSR_DEVICE_CPU, 0})

/* The real dtypes first, then the complex ones (issue 50): loops over operations every dtype
   has (transfers) run over all N_DTYPES; the real-only checks (orderings, integer wrap, the
   conversions' specials) over N_REAL_DTYPES; the complex dtypes have their own cases below
   (test_complex_*), also at the backend level on the emulator (tests/gpu_emu/test_emu_complex.c).
 */
#define N_REAL_DTYPES 4
#define N_DTYPES 6
static const tsr_dtype all_dtypes[N_DTYPES] = {TSR_F32, TSR_F64, TSR_I32,
                                               TSR_I64, TSR_C64, TSR_C128};

static int is_float(tsr_dtype d) {
  return d == TSR_F32 || d == TSR_F64;
}

static size_t dsize(tsr_dtype d) {
  return d == TSR_C128 ? 16 : (d == TSR_F32 || d == TSR_I32) ? 4 : 8;
}

/* Shape and dtype equal, then |g - c| <= rtol * max(1, |c|) elementwise (rtol 0: equal);
   NaN must meet NaN, infinities must be equal. */
static void expect_match(const tsr_array *g, const tsr_array *c, double rtol, const char *what) {
  tsr_array_props gi, ci;
  TSR_ASSERT_OK(tsr_array_info(g, &gi));
  TSR_ASSERT_OK(tsr_array_info(c, &ci));
  assert_true(tsr_device_equal(gi.device, gpu));
  assert_true(tsr_device_equal(ci.device, CPU));
  assert_int_equal(gi.dtype, ci.dtype);
  assert_int_equal(gi.ndim, ci.ndim);
  for (int d = 0; d < gi.ndim; d++)
    assert_int_equal(gi.shape[d], ci.shape[d]);
  double *x = tsr_test_read_f64(g), *y = tsr_test_read_f64(c);
  for (int64_t i = 0; i < gi.size; i++) {
    int ok;
    if (isnan(y[i]))
      ok = isnan(x[i]);
    else if (isinf(y[i]) || rtol == 0.0)
      ok = x[i] == y[i];
    else
      ok = fabs(x[i] - y[i]) <= rtol * fmax(1.0, fabs(y[i]));
    if (!ok) {
      print_error("%s: element %lld: gpu gives %.17g, cpu %.17g (rtol %g)\n", what, (long long)i,
                  x[i], y[i], rtol);
      free(x);
      free(y);
      fail();
    }
  }
  free(x);
  free(y);
}

/* The same random values on the CPU (*c) and the GPU (*g). */
static void random_pair(int ndim, const int64_t *shape, tsr_dtype dtype, uint64_t seed,
                        tsr_array **c, tsr_array **g) {
  *c = tsr_test_random_array(ndim, shape, dtype, CPU, seed, NULL);
  TSR_ASSERT_OK(tsr_array_to(*c, gpu, g));
}

/* Raw bytes of an array (C order), malloc'ed. */
static unsigned char *read_bytes(const tsr_array *a, size_t *bytes) {
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(a, &info));
  *bytes = (size_t)info.size * dsize(info.dtype);
  unsigned char *buf = malloc(*bytes + 1);
  assert_non_null(buf);
  TSR_ASSERT_OK(tsr_array_read(a, buf, *bytes));
  return buf;
}

/* ---------------------------------------------------------------- device ------------ */

static void test_props(void **state) {
  (void)state;
  tsr_device_props p;
  TSR_ASSERT_OK(tsr_device_get_props(gpu, &p));
  assert_true(p.name[0] != '\0');
  assert_true(strncmp(p.arch, gpu.kind == TSR_DEVICE_CUDA ? "sm_" : "gfx", 3) == 0);
  assert_true(p.warp_size == 32 || p.warp_size == 64);
  assert_true(p.multiprocessors > 0);
  assert_true(p.total_memory > ((size_t)1 << 28));
  assert_true(p.concurrent_managed == 0 || p.concurrent_managed == 1);
  TSR_ASSERT_OK(tsr_device_synchronize(gpu));
  TSR_ASSERT_OK(tsr_device_trim(gpu));
}

/* Bit patterns (NaN payloads, -0, denormals) survive host -> GPU -> host and GPU -> CPU ->
   GPU unchanged, for sizes around the vector widths and above the allocator's size classes. */
static void test_transfer_exact(void **state) {
  (void)state;
  static const int64_t sizes[] = {1, 3, 17, 1000, (1 << 20) + 3};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int d = 0; d < N_DTYPES; d++) {
      size_t bytes = (size_t)sizes[s] * dsize(all_dtypes[d]);
      unsigned char *src = malloc(bytes);
      assert_non_null(src);
      for (size_t i = 0; i < bytes; i++)
        src[i] = (unsigned char)((i * 2654435761u) >> 13);
      tsr_array *g = NULL, *c = NULL, *g2 = NULL;
      TSR_ASSERT_OK(tsr_from_host(1, &sizes[s], all_dtypes[d], gpu, src, &g));
      size_t n1 = 0, n2 = 0;
      unsigned char *back = read_bytes(g, &n1);
      assert_int_equal(n1, bytes);
      assert_memory_equal(src, back, bytes);
      TSR_ASSERT_OK(tsr_array_to(g, CPU, &c));
      TSR_ASSERT_OK(tsr_array_to(c, gpu, &g2));
      unsigned char *back2 = read_bytes(g2, &n2);
      assert_memory_equal(src, back2, bytes);
      free(back);
      free(back2);
      free(src);
      tsr_array_release(g);
      tsr_array_release(c);
      tsr_array_release(g2);
    }
}

/* Writing through a transposed GPU view lands in the right places. */
static void test_write_strided(void **state) {
  (void)state;
  int64_t shape[2] = {37, 19};
  tsr_array *g = NULL, *gt = NULL;
  TSR_ASSERT_OK(tsr_zeros(2, shape, TSR_F64, gpu, &g));
  TSR_ASSERT_OK(tsr_transpose(g, NULL, &gt));
  double src[19 * 37], got[37 * 19];
  tsr_test_fill_random(src, 19 * 37, 5);
  TSR_ASSERT_OK(tsr_array_write(gt, src, sizeof src)); /* src is gt's C order: 19 x 37 */
  TSR_ASSERT_OK(tsr_array_read(g, got, sizeof got));
  for (int i = 0; i < 37; i++)
    for (int j = 0; j < 19; j++)
      assert_true(got[i * 19 + j] == src[j * 37 + i]);
  tsr_array_release(gt);
  tsr_array_release(g);
}

static void test_device_mismatch(void **state) {
  (void)state;
  int64_t shape[2] = {8, 8};
  tsr_array *c = NULL, *g = NULL, *out = NULL;
  random_pair(2, shape, TSR_F32, 11, &c, &g);
  TSR_ASSERT_STATUS(tsr_add(c, g, &out), TSR_ERR_DEVICE_MISMATCH, NULL);
  assert_null(out);
  TSR_ASSERT_STATUS(tsr_matmul(g, c, &out), TSR_ERR_DEVICE_MISMATCH, NULL);
  assert_null(out);
  TSR_ASSERT_STATUS(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, g, g, 0.0, c),
                    TSR_ERR_DEVICE_MISMATCH, NULL);
  tsr_array_release(c);
  tsr_array_release(g);
}

/* More than the device has: a status, no crash, and the device still works afterwards. */
static void test_out_of_memory(void **state) {
  (void)state;
  tsr_device_props p;
  TSR_ASSERT_OK(tsr_device_get_props(gpu, &p));
  int64_t n = (int64_t)(p.total_memory / 8) * 2; /* twice the memory, in f64 elements */
  tsr_array *a = NULL;
  TSR_ASSERT_STATUS(tsr_empty(1, &n, TSR_F64, gpu, &a), TSR_ERR_OUT_OF_MEMORY, NULL);
  assert_null(a);
  int64_t small = 1000;
  TSR_ASSERT_OK(tsr_full(1, &small, TSR_F64, gpu, 2.5, &a));
  double v[1000];
  TSR_ASSERT_OK(tsr_array_read(a, v, sizeof v));
  for (int i = 0; i < 1000; i++)
    assert_true(v[i] == 2.5);
  tsr_array_release(a);
  TSR_ASSERT_OK(tsr_device_trim(gpu));
}

/* Managed memory where the device grants it, device memory elsewhere: the same results. */
static void test_managed(void **state) {
  (void)state;
  int64_t shape[2] = {123, 45};
  double host[123 * 45], got[123 * 45];
  tsr_test_fill_random(host, 123 * 45, 21);
  tsr_array *a = NULL, *b = NULL;
  TSR_ASSERT_OK(tsr_empty_ex(2, shape, TSR_F64, gpu, TSR_ALLOC_MANAGED, &a));
  TSR_ASSERT_OK(tsr_array_write(a, host, sizeof host));
  TSR_ASSERT_OK(tsr_add(a, a, &b));
  TSR_ASSERT_OK(tsr_array_read(b, got, sizeof got));
  for (int i = 0; i < 123 * 45; i++)
    assert_true(got[i] == 2 * host[i]);
  tsr_array_release(a);
  tsr_array_release(b);
}

/* ---------------------------------------------------------------- random ------------ */

static void test_random_same_bits(void **state) {
  (void)state;
  static const int64_t sizes[] = {1, 5, 1027, 100003};
  for (int d = 0; d < 2; d++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      uint64_t seed = 0x9E3779B97F4A7C15ull * (s + 1) + (uint64_t)d;
      tsr_array *c = NULL, *g = NULL;
      TSR_ASSERT_OK(tsr_random_uniform(1, &sizes[s], all_dtypes[d], CPU, seed, -2.0, 3.0, &c));
      TSR_ASSERT_OK(tsr_random_uniform(1, &sizes[s], all_dtypes[d], gpu, seed, -2.0, 3.0, &g));
      size_t nc = 0, ng = 0;
      unsigned char *bc = read_bytes(c, &nc), *bg = read_bytes(g, &ng);
      assert_int_equal(nc, ng);
      assert_memory_equal(bc, bg, nc); /* bit for bit */
      double *v = tsr_test_read_f64(g);
      for (int64_t i = 0; i < sizes[s]; i++)
        assert_true(v[i] >= -2.0 && v[i] < 3.0);
      free(v);
      free(bc);
      free(bg);
      tsr_array_release(c);
      tsr_array_release(g);

      /* Normal: the devices' log/sin/cos may differ in the last bit. */
      TSR_ASSERT_OK(tsr_random_normal(1, &sizes[s], all_dtypes[d], CPU, seed, 1.5, 2.0, &c));
      TSR_ASSERT_OK(tsr_random_normal(1, &sizes[s], all_dtypes[d], gpu, seed, 1.5, 2.0, &g));
      expect_match(g, c, all_dtypes[d] == TSR_F32 ? 1e-6 : 1e-13, "random_normal");
      tsr_array_release(c);
      tsr_array_release(g);
    }
}

/* ---------------------------------------------------------------- elementwise ------- */

static const int binary_int_ok[TSR_NUM_BINARY_OPS] = {1, 1, 1, 0, 1, 1, 0};
static const char *binary_names[TSR_NUM_BINARY_OPS] = {"add",     "sub",     "mul", "div",
                                                       "maximum", "minimum", "pow"};

static void check_binary(const tsr_array *ca, const tsr_array *cb, const tsr_array *ga,
                         const tsr_array *gb, tsr_dtype dtype, const char *layout) {
  for (int op = 0; op < TSR_NUM_BINARY_OPS; op++) {
    if (!is_float(dtype) && !binary_int_ok[op]) continue;
    tsr_array *c = NULL, *g = NULL;
    TSR_ASSERT_OK(tsr_binary((tsr_binary_op)op, ca, cb, &c));
    TSR_ASSERT_OK(tsr_binary((tsr_binary_op)op, ga, gb, &g));
    char what[96];
    snprintf(what, sizeof what, "%s %s %s", binary_names[op], tsr_dtype_name(dtype), layout);
    /* + - * / max min are correctly rounded everywhere; pow is a library function. */
    double rtol = op == TSR_POW ? (dtype == TSR_F32 ? 4e-7 : 1e-15) : 0.0;
    expect_match(g, c, rtol, what);
    tsr_array_release(c);
    tsr_array_release(g);
  }
}

static void test_binary(void **state) {
  (void)state;
  for (int d = 0; d < N_REAL_DTYPES; d++) {
    tsr_dtype dt = all_dtypes[d];
    tsr_array *ca, *cb, *ga, *gb;
    /* Contiguous: the vectorized path and its scalar tail. */
    int64_t n = 100003;
    random_pair(1, &n, dt, 100 + (uint64_t)d, &ca, &ga);
    random_pair(1, &n, dt, 200 + (uint64_t)d, &cb, &gb);
    check_binary(ca, cb, ga, gb, dt, "contiguous");
    /* Misaligned: a view starting one element in. */
    tsr_array *cas, *cbs, *gas, *gbs;
    TSR_ASSERT_OK(tsr_slice(ca, 0, 1, TSR_SLICE_END, 1, &cas));
    TSR_ASSERT_OK(tsr_slice(cb, 0, 0, n - 1, 1, &cbs));
    TSR_ASSERT_OK(tsr_slice(ga, 0, 1, TSR_SLICE_END, 1, &gas));
    TSR_ASSERT_OK(tsr_slice(gb, 0, 0, n - 1, 1, &gbs));
    check_binary(cas, cbs, gas, gbs, dt, "misaligned");
    tsr_array_release(cas);
    tsr_array_release(cbs);
    tsr_array_release(gas);
    tsr_array_release(gbs);
    tsr_array_release(ca);
    tsr_array_release(cb);
    tsr_array_release(ga);
    tsr_array_release(gb);

    /* Broadcasting (257x129 with 129, and 257x1 with 1x129) and a transposed operand. */
    int64_t s2[2] = {257, 129}, s1[1] = {129}, col[2] = {257, 1}, row[2] = {1, 129};
    int64_t st[2] = {129, 257};
    random_pair(2, s2, dt, 300 + (uint64_t)d, &ca, &ga);
    random_pair(1, s1, dt, 400 + (uint64_t)d, &cb, &gb);
    check_binary(ca, cb, ga, gb, dt, "broadcast row");
    tsr_array_release(cb);
    tsr_array_release(gb);
    tsr_array *cc, *gc;
    random_pair(2, col, dt, 500 + (uint64_t)d, &cb, &gb);
    random_pair(2, row, dt, 600 + (uint64_t)d, &cc, &gc);
    check_binary(cb, cc, gb, gc, dt, "outer broadcast");
    tsr_array_release(cb);
    tsr_array_release(gb);
    tsr_array_release(cc);
    tsr_array_release(gc);
    tsr_array *ct, *gt, *ctt, *gtt;
    random_pair(2, st, dt, 700 + (uint64_t)d, &ct, &gt);
    TSR_ASSERT_OK(tsr_transpose(ct, NULL, &ctt));
    TSR_ASSERT_OK(tsr_transpose(gt, NULL, &gtt));
    check_binary(ca, ctt, ga, gtt, dt, "transposed");
    tsr_array_release(ct);
    tsr_array_release(gt);
    tsr_array_release(ctt);
    tsr_array_release(gtt);
    tsr_array_release(ca);
    tsr_array_release(ga);
  }
}

/* Integer +, -, * wrap around on both devices (no undefined overflow). */
static void test_integer_wrap(void **state) {
  (void)state;
  int32_t a32[4] = {INT32_MAX, INT32_MIN, 65536, -7};
  int32_t b32[4] = {1, 1, 65536, 3};
  int64_t a64[4] = {INT64_MAX, INT64_MIN, (int64_t)1 << 40, -7};
  int64_t b64[4] = {1, 1, (int64_t)1 << 40, 3};
  int64_t n = 4;
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = d ? TSR_I64 : TSR_I32;
    tsr_array *ca, *cb, *ga, *gb;
    TSR_ASSERT_OK(tsr_from_host(1, &n, dt, CPU, d ? (void *)a64 : (void *)a32, &ca));
    TSR_ASSERT_OK(tsr_from_host(1, &n, dt, CPU, d ? (void *)b64 : (void *)b32, &cb));
    TSR_ASSERT_OK(tsr_array_to(ca, gpu, &ga));
    TSR_ASSERT_OK(tsr_array_to(cb, gpu, &gb));
    tsr_binary_op ops[3] = {TSR_ADD, TSR_SUB, TSR_MUL};
    for (int o = 0; o < 3; o++) {
      tsr_array *c, *g;
      TSR_ASSERT_OK(tsr_binary(ops[o], ca, cb, &c));
      TSR_ASSERT_OK(tsr_binary(ops[o], ga, gb, &g));
      size_t nc, ng;
      unsigned char *bc = read_bytes(c, &nc), *bg = read_bytes(g, &ng);
      assert_memory_equal(bc, bg, nc);
      free(bc);
      free(bg);
      tsr_array_release(c);
      tsr_array_release(g);
    }
    tsr_array *c, *g;
    TSR_ASSERT_OK(tsr_neg(ca, &c));
    TSR_ASSERT_OK(tsr_neg(ga, &g));
    expect_match(g, c, 0.0, "neg wrap");
    tsr_array_release(c);
    tsr_array_release(g);
    tsr_array_release(ca);
    tsr_array_release(cb);
    tsr_array_release(ga);
    tsr_array_release(gb);
  }
}

static void test_unary(void **state) {
  (void)state;
  /* conj (the identity for real dtypes) where tessera/ops.h has it. */
  static const int int_ok[TSR_NUM_UNARY_OPS] = {
    1,
    1,
    0,
    0,
    0,
    0,
    0,
    1,
#if TSR_NUM_UNARY_OPS > 8
    1
#endif
  };
  static const char *names[TSR_NUM_UNARY_OPS] = {
    "neg",
    "abs",
    "exp",
    "log",
    "sqrt",
    "tanh",
    "sigmoid",
    "relu",
#if TSR_NUM_UNARY_OPS > 8
    "conj"
#endif
  };
  for (int d = 0; d < N_REAL_DTYPES; d++) {
    tsr_dtype dt = all_dtypes[d];
    int64_t shape[2] = {301, 67};
    tsr_array *ca, *ga, *cat, *gat;
    random_pair(2, shape, dt, 800 + (uint64_t)d, &ca, &ga);
    /* x in [-1,1) times 3 spreads exp/tanh; log/sqrt of negatives give NaN on both. */
    tsr_array *three_c, *three_g, *cx, *gx;
    TSR_ASSERT_OK(tsr_full(0, NULL, dt, CPU, 3.0, &three_c));
    TSR_ASSERT_OK(tsr_full(0, NULL, dt, gpu, 3.0, &three_g));
    TSR_ASSERT_OK(tsr_mul(ca, three_c, &cx));
    TSR_ASSERT_OK(tsr_mul(ga, three_g, &gx));
    TSR_ASSERT_OK(tsr_transpose(cx, NULL, &cat));
    TSR_ASSERT_OK(tsr_transpose(gx, NULL, &gat));
    for (int op = 0; op < TSR_NUM_UNARY_OPS; op++) {
      if (!is_float(dt) && !int_ok[op]) continue;
      double rtol = (op == TSR_NEG || op == TSR_ABS || op == TSR_RELU || op == TSR_SQRT || op >= 8)
                        ? 0.0
                        : (dt == TSR_F32 ? 4e-7 : 1e-15);
      for (int strided = 0; strided < 2; strided++) {
        tsr_array *c, *g;
        TSR_ASSERT_OK(tsr_unary((tsr_unary_op)op, strided ? cat : cx, &c));
        TSR_ASSERT_OK(tsr_unary((tsr_unary_op)op, strided ? gat : gx, &g));
        char what[64];
        snprintf(what, sizeof what, "%s %s%s", names[op], tsr_dtype_name(dt),
                 strided ? " transposed" : "");
        expect_match(g, c, rtol, what);
        tsr_array_release(c);
        tsr_array_release(g);
      }
    }
    tsr_array_release(three_c);
    tsr_array_release(three_g);
    tsr_array_release(cx);
    tsr_array_release(gx);
    tsr_array_release(cat);
    tsr_array_release(gat);
    tsr_array_release(ca);
    tsr_array_release(ga);
  }
}

/* ---------------------------------------------------------------- reductions -------- */

static void check_reductions(const tsr_array *c, const tsr_array *g, tsr_dtype dt, int ndim,
                             const char *layout) {
  static const char *names[TSR_NUM_REDUCE_OPS] = {"sum", "mean", "max", "min", "argmax"};
  for (int op = 0; op < TSR_NUM_REDUCE_OPS; op++)
    for (int axis = -1; axis < ndim; axis++) {
      int ax = axis < 0 ? TSR_AXIS_ALL : axis;
      tsr_array *rc, *rg;
      TSR_ASSERT_OK(tsr_reduce((tsr_reduce_op)op, c, ax, 0, &rc));
      TSR_ASSERT_OK(tsr_reduce((tsr_reduce_op)op, g, ax, 0, &rg));
      char what[96];
      snprintf(what, sizeof what, "%s %s axis %d %s", names[op], tsr_dtype_name(dt), axis, layout);
      /* Sums in a different order: f64 (and the double accumulators of f32 and means) agree
         to ~1e-13; max/min/argmax and integer sums are exact. */
      double rtol = 0.0;
      if (op == TSR_SUM && is_float(dt)) rtol = dt == TSR_F32 ? 2.4e-7 : 1e-12;
      if (op == TSR_MEAN) rtol = dt == TSR_F32 ? 2.4e-7 : 1e-12;
      expect_match(rg, rc, rtol, what);
      tsr_array_release(rc);
      tsr_array_release(rg);
    }
}

static void test_reduce(void **state) {
  (void)state;
  for (int d = 0; d < N_REAL_DTYPES; d++) {
    tsr_dtype dt = all_dtypes[d];
    tsr_array *c, *g, *ct, *gt;
    /* Few long rows (axis split over blocks) and many short columns (one thread each). */
    int64_t s1[2] = {3, 100003};
    random_pair(2, s1, dt, 900 + (uint64_t)d, &c, &g);
    check_reductions(c, g, dt, 2, "3x100003");
    tsr_array_release(c);
    tsr_array_release(g);
    /* Square, and its transpose (strided axes). */
    int64_t s2[2] = {700, 513};
    random_pair(2, s2, dt, 1000 + (uint64_t)d, &c, &g);
    check_reductions(c, g, dt, 2, "700x513");
    TSR_ASSERT_OK(tsr_transpose(c, NULL, &ct));
    TSR_ASSERT_OK(tsr_transpose(g, NULL, &gt));
    check_reductions(ct, gt, dt, 2, "transposed");
    tsr_array_release(ct);
    tsr_array_release(gt);
    tsr_array_release(c);
    tsr_array_release(g);
    /* 3-D with a middle axis. */
    int64_t s3[3] = {33, 250, 7};
    random_pair(3, s3, dt, 1100 + (uint64_t)d, &c, &g);
    check_reductions(c, g, dt, 3, "33x250x7");
    tsr_array_release(c);
    tsr_array_release(g);
  }
}

/* max/min propagate NaN and argmax picks the first NaN, on every reduction path. */
static void test_reduce_nan(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = all_dtypes[d];
    int64_t shape[2] = {4, 50000};
    int64_t n = shape[0] * shape[1];
    double *x = malloc((size_t)n * sizeof *x);
    assert_non_null(x);
    tsr_test_fill_random(x, (size_t)n, 77);
    x[1 * 50000 + 31337] = NAN;
    x[1 * 50000 + 40000] = NAN;
    x[3 * 50000 + 5] = NAN;
    tsr_array *c = tsr_test_array_from_f64(2, shape, dt, CPU, x);
    tsr_array *g = NULL;
    TSR_ASSERT_OK(tsr_array_to(c, gpu, &g));
    check_reductions(c, g, dt, 2, "with NaN");
    free(x);
    tsr_array_release(c);
    tsr_array_release(g);
  }
}

/* ---------------------------------------------------------------- conversions ------- */

static void test_astype(void **state) {
  (void)state;
  /* Specials: saturation, NaN -> 0, truncation toward zero, rounding to f32. */
  double special[] = {NAN,        INFINITY,     -INFINITY,     3e9,    -3e9,   1e19,
                      -1e19,      2.5,          -2.5,          0.5,    -0.0,   1e-40,
                      16777217.0, 2147483647.5, -2147483648.5, 9.3e18, -9.3e18};
  int64_t ns = (int64_t)(sizeof special / sizeof special[0]);
  for (int from = 0; from < N_REAL_DTYPES; from++) {
    tsr_array *c, *g;
    if (is_float(all_dtypes[from])) {
      c = tsr_test_array_from_f64(1, &ns, all_dtypes[from], CPU, special);
    } else {
      int64_t n = 1001;
      c = tsr_test_random_array(1, &n, all_dtypes[from], CPU, 1200 + (uint64_t)from, NULL);
    }
    TSR_ASSERT_OK(tsr_array_to(c, gpu, &g));
    for (int to = 0; to < N_REAL_DTYPES; to++) {
      tsr_array *rc, *rg;
      TSR_ASSERT_OK(tsr_astype(c, all_dtypes[to], &rc));
      TSR_ASSERT_OK(tsr_astype(g, all_dtypes[to], &rg));
      size_t nc, ng;
      unsigned char *bc = read_bytes(rc, &nc), *bg = read_bytes(rg, &ng);
      assert_int_equal(nc, ng);
      if (memcmp(bc, bg, nc) != 0) {
        print_error("astype %s -> %s differs between gpu and cpu\n",
                    tsr_dtype_name(all_dtypes[from]), tsr_dtype_name(all_dtypes[to]));
        expect_match(rg, rc, 0.0, "astype");
        fail();
      }
      free(bc);
      free(bg);
      tsr_array_release(rc);
      tsr_array_release(rg);
    }
    /* A strided copy with conversion. */
    tsr_array *cs, *gs, *rc, *rg;
    TSR_ASSERT_OK(tsr_slice(c, 0, TSR_SLICE_END, 0, -3, &cs));
    TSR_ASSERT_OK(tsr_slice(g, 0, TSR_SLICE_END, 0, -3, &gs));
    TSR_ASSERT_OK(tsr_astype(cs, TSR_F64, &rc));
    TSR_ASSERT_OK(tsr_astype(gs, TSR_F64, &rg));
    expect_match(rg, rc, 0.0, "astype of a reversed strided view");
    tsr_array_release(cs);
    tsr_array_release(gs);
    tsr_array_release(rc);
    tsr_array_release(rg);
    tsr_array_release(c);
    tsr_array_release(g);
  }
}

static void test_fill_arange(void **state) {
  (void)state;
  double values[] = {3.7, -2.5, 1e20, -1e20, NAN, 0.1};
  int64_t shape[3] = {5, 17, 3};
  for (int d = 0; d < N_REAL_DTYPES; d++) {
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
      tsr_array *c, *g;
      TSR_ASSERT_OK(tsr_full(3, shape, all_dtypes[d], CPU, values[v], &c));
      TSR_ASSERT_OK(tsr_full(3, shape, all_dtypes[d], gpu, values[v], &g));
      expect_match(g, c, 0.0, "full");
      tsr_array_release(c);
      tsr_array_release(g);
    }
    tsr_array *c, *g;
    TSR_ASSERT_OK(tsr_arange(0.5, 1000.3, 0.7, all_dtypes[d], CPU, &c));
    TSR_ASSERT_OK(tsr_arange(0.5, 1000.3, 0.7, all_dtypes[d], gpu, &g));
    expect_match(g, c, 0.0, "arange");
    tsr_array_release(c);
    tsr_array_release(g);
  }
  /* Fill through a strided view: every other column of a GPU matrix. */
  int64_t s2[2] = {9, 10};
  tsr_array *g, *gv, *c, *cv, *one_c, *one_g;
  TSR_ASSERT_OK(tsr_zeros(2, s2, TSR_F32, gpu, &g));
  TSR_ASSERT_OK(tsr_zeros(2, s2, TSR_F32, CPU, &c));
  TSR_ASSERT_OK(tsr_slice(g, 1, 0, TSR_SLICE_END, 2, &gv));
  TSR_ASSERT_OK(tsr_slice(c, 1, 0, TSR_SLICE_END, 2, &cv));
  TSR_ASSERT_OK(tsr_full(0, NULL, TSR_F32, gpu, 4.0, &one_g));
  TSR_ASSERT_OK(tsr_full(0, NULL, TSR_F32, CPU, 4.0, &one_c));
  TSR_ASSERT_OK(tsr_assign(gv, one_g));
  TSR_ASSERT_OK(tsr_assign(cv, one_c));
  expect_match(g, c, 0.0, "assign through a strided view");
  tsr_array_release(g);
  tsr_array_release(gv);
  tsr_array_release(c);
  tsr_array_release(cv);
  tsr_array_release(one_c);
  tsr_array_release(one_g);
}

/* ---------------------------------------------------------------- GEMM -------------- */

/* One GEMM on the GPU against the float64 reference; C starts as NaN when beta == 0 (must
   not be read) and random otherwise. Compared by relative norm error. The vendor path must
   work where config.h says it was built (fails closed). */
static void check_gemm(tsr_dtype dt, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                       double beta, tsr_gemm_path path, int offset_view, uint64_t seed) {
  int64_t sa[2] = {ta ? k : m, (ta ? m : k) + offset_view};
  int64_t sb[2] = {tb ? n : k, (tb ? k : n) + offset_view};
  int64_t sc[2] = {m, n};
  tsr_array *ga0, *gb0, *ga, *gb, *gc;
  ga0 = tsr_test_random_array(2, sa, dt, gpu, seed, NULL);
  gb0 = tsr_test_random_array(2, sb, dt, gpu, seed + 1, NULL);
  /* offset_view: a column slice starting at 1 (unaligned start, ld > row length). */
  TSR_ASSERT_OK(tsr_slice(ga0, 1, offset_view, TSR_SLICE_END, 1, &ga));
  TSR_ASSERT_OK(tsr_slice(gb0, 1, offset_view, TSR_SLICE_END, 1, &gb));
  if (beta == 0.0)
    TSR_ASSERT_OK(tsr_full(2, sc, dt, gpu, NAN, &gc));
  else
    gc = tsr_test_random_array(2, sc, dt, gpu, seed + 2, NULL);
  double *ha = tsr_test_read_f64(ga), *hb = tsr_test_read_f64(gb), *hc = tsr_test_read_f64(gc);
  tsr_trans tra = ta ? TSR_TRANS : TSR_NO_TRANS, trb = tb ? TSR_TRANS : TSR_NO_TRANS;
  tsr_status st = tsr_gemm_ex(tra, trb, alpha, ga, gb, beta, gc, path);
  if (path == TSR_GEMM_VENDOR && !TSR_HAVE_GPU_VENDOR_BLAS) {
    TSR_ASSERT_STATUS(st, TSR_ERR_UNSUPPORTED, NULL);
  } else {
    TSR_ASSERT_OK(st);
    double *x = tsr_test_read_f64(gc);
    double *y = tsr_test_ref_gemm(ta, tb, m, n, k, alpha, ha, hb, beta, hc);
    for (int64_t i = 0; i < m * n; i++)
      assert_true(isfinite(x[i]));
    double err = tsr_test_rel_error(x, y, (size_t)(m * n));
    double tol = tsr_test_tol(dt, k);
    if (!(err <= tol))
      print_error("gemm %s ta=%d tb=%d %lldx%lldx%lld alpha=%g beta=%g path=%d view=%d: "
                  "relative error %g > %g\n",
                  tsr_dtype_name(dt), ta, tb, (long long)m, (long long)n, (long long)k, alpha, beta,
                  (int)path, offset_view, err, tol);
    assert_true(err <= tol);
    free(x);
    free(y);
  }
  free(ha);
  free(hb);
  free(hc);
  tsr_array *arrays[] = {ga0, gb0, ga, gb, gc};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
    tsr_array_release(arrays[i]);
}

static void test_gemm(void **state) {
  (void)state;
  /* Edge tiles, both tile configurations and split-K (chosen by shape and SM count: on the
     emulator's 2 SMs, 300x300 takes the large tiles and 64x70x1100, 5x200x700 split K). */
  static const int64_t sizes[][3] = {{1, 1, 1},       {17, 33, 5},    {130, 129, 67},
                                     {256, 256, 256}, {200, 64, 300}, {300, 300, 40},
                                     {64, 70, 1100},  {5, 200, 700}};
  static const double ab[][2] = {{1.0, 0.0}, {0.5, 2.0}, {-1.25, 1.0}};
  /* TSR_EMU_QUICK (the host emulator in CI, tests/gpu.cmake): one alpha/beta pair per shape
     and transpose instead of three, rotating, so each pair still meets each shape. */
  const int quick = getenv("TSR_EMU_QUICK") != NULL;
  uint64_t seed = 5000;
  for (int d = 0; d < 2; d++)
    for (int path = TSR_GEMM_NATIVE; path <= TSR_GEMM_VENDOR; path++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int t = 0; t < 4; t++)
          for (size_t c = 0; c < sizeof ab / sizeof ab[0]; c++)
            if (!quick || c == (s + (size_t)t) % 3)
              check_gemm(all_dtypes[d], t & 1, t >> 1, sizes[s][0], sizes[s][1], sizes[s][2],
                         ab[c][0], ab[c][1], (tsr_gemm_path)path, (int)(s + c) % 2, seed += 3);
}

/* alpha = 0 and k = 0: C = beta C without reading A and B. */
static void test_gemm_degenerate(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    check_gemm(all_dtypes[d], 0, 0, 31, 45, 20, 0.0, 0.5, TSR_GEMM_NATIVE, 0, 7000);
    check_gemm(all_dtypes[d], 0, 0, 31, 45, 20, 0.0, 0.0, TSR_GEMM_NATIVE, 0, 7010);
    check_gemm(all_dtypes[d], 0, 0, 31, 45, 0, 1.0, 3.0, TSR_GEMM_NATIVE, 0, 7020);
    check_gemm(all_dtypes[d], 1, 1, 31, 45, 0, 1.0, 0.0, TSR_GEMM_NATIVE, 0, 7030);
  }
}

/* ---------------------------------------------------------------- queued work ------- */

/* Many dependent operations queued without synchronizing, with temporaries released as soon
   as possible (their blocks are reused at once by the caching allocator): the result must
   be as on the CPU. */
static void test_queued_chain(void **state) {
  (void)state;
  int64_t n = 4099;
  tsr_array *c, *g, *cx, *gx;
  random_pair(1, &n, TSR_F64, 31, &c, &g);
  TSR_ASSERT_OK(tsr_copy(c, &cx));
  TSR_ASSERT_OK(tsr_copy(g, &gx));
  for (int it = 0; it < 60; it++) {
    tsr_array *tc, *tg, *uc, *ug;
    TSR_ASSERT_OK(tsr_mul(cx, c, &tc));
    TSR_ASSERT_OK(tsr_mul(gx, g, &tg));
    TSR_ASSERT_OK(tsr_tanh(tc, &uc));
    TSR_ASSERT_OK(tsr_tanh(tg, &ug));
    tsr_array_release(tc);
    tsr_array_release(tg);
    tsr_array_release(cx);
    tsr_array_release(gx);
    TSR_ASSERT_OK(tsr_add(uc, c, &cx));
    TSR_ASSERT_OK(tsr_add(ug, g, &gx));
    tsr_array_release(uc);
    tsr_array_release(ug);
  }
  expect_match(gx, cx, 1e-12, "queued chain");
  tsr_array *sc, *sg;
  TSR_ASSERT_OK(tsr_sum(cx, TSR_AXIS_ALL, 0, &sc));
  TSR_ASSERT_OK(tsr_sum(gx, TSR_AXIS_ALL, 0, &sg));
  expect_match(sg, sc, 1e-12, "queued chain sum");
  tsr_array *arrays[] = {c, g, cx, gx, sc, sg};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
    tsr_array_release(arrays[i]);
}

/* The caching allocator may hand a freed block to a smaller request of a nearby size class (a
   6 MiB request reusing a cached 8 MiB block): arrays allocated and freed with sizes going down
   and up again, twice over, must each read back the values written through them. */
static void test_allocator_reuse(void **state) {
  (void)state;
  static const int64_t mib[] = {8, 6, 7, 2, 8, 3, 6, 8};
  for (int round = 0; round < 2; round++)
    for (size_t i = 0; i < sizeof mib / sizeof mib[0]; i++) {
      int64_t n = mib[i] * (1 << 20) / 8 - 3; /* f64 elements, just under the class */
      tsr_array *a = NULL, *b = NULL;
      TSR_ASSERT_OK(tsr_full(1, &n, TSR_F64, gpu, (double)(i + 1), &a));
      TSR_ASSERT_OK(tsr_full(1, &n, TSR_F64, gpu, 0.5, &b));
      tsr_array *c = NULL;
      TSR_ASSERT_OK(tsr_add(a, b, &c));
      double *x = tsr_test_read_f64(c);
      for (int64_t j = 0; j < n; j += 4097)
        assert_true(x[j] == (double)(i + 1) + 0.5);
      assert_true(x[n - 1] == (double)(i + 1) + 0.5);
      free(x);
      tsr_array_release(a);
      tsr_array_release(b);
      tsr_array_release(c);
    }
  TSR_ASSERT_OK(tsr_device_trim(gpu));
}

/* ---------------------------------------------------------------- complex ----------- */

/* Complex operations go through the core, which gains them in issue 50 step by step: where it
   still refuses one (TSR_ERR_UNSUPPORTED or TSR_ERR_DTYPE on the CPU too), the case reports
   skipped, never passed. */
static int core_refuses(tsr_status st) {
  if (st == TSR_ERR_UNSUPPORTED || st == TSR_ERR_DTYPE) {
    print_message("skipped: the core refuses it: %s\n", tsr_last_error());
    return 1;
  }
  return 0;
}

/* n random complex values in [-1, 1)^2 (kind 1: purely imaginary) as dtype dt, on dev. */
static tsr_array *complex_array(int ndim, const int64_t *shape, tsr_dtype dt, tsr_device dev,
                                uint64_t seed, int kind, double complex **host) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++)
    n *= shape[d];
  double *parts = malloc((size_t)(2 * n + 1) * sizeof *parts);
  assert_non_null(parts);
  tsr_test_fill_random(parts, (size_t)(2 * n), seed);
  double complex *h = malloc((size_t)(n + 1) * sizeof *h);
  unsigned char *raw = malloc((size_t)(n + 1) * 16);
  assert_true(h && raw);
  for (int64_t i = 0; i < n; i++) {
    double re = kind == 1 ? 0.0 : parts[2 * i], im = parts[2 * i + 1];
    if (dt == TSR_C64) {
      float v[2] = {(float)re, (float)im};
      memcpy(raw + 8 * i, v, 8);
      h[i] = (double)v[0] + (double)v[1] * I;
    } else {
      double v[2] = {re, im};
      memcpy(raw + 16 * i, v, 16);
      h[i] = re + im * I;
    }
  }
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_from_host(ndim, shape, dt, dev, raw, &a));
  free(parts);
  free(raw);
  if (host)
    *host = h;
  else
    free(h);
  return a;
}

static double complex *read_complex(const tsr_array *a) {
  size_t bytes = 0;
  unsigned char *raw = read_bytes(a, &bytes);
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(a, &info));
  double complex *h = malloc((size_t)(info.size + 1) * sizeof *h);
  assert_non_null(h);
  for (int64_t i = 0; i < info.size; i++) {
    if (info.dtype == TSR_C64) {
      float v[2];
      memcpy(v, raw + 8 * i, 8);
      h[i] = (double)v[0] + (double)v[1] * I;
    } else {
      double v[2];
      memcpy(v, raw + 16 * i, 16);
      h[i] = v[0] + v[1] * I;
    }
  }
  free(raw);
  return h;
}

/* The same seed gives the same complex values on the CPU and the GPU (uniform: bit for bit). */
static void test_complex_random(void **state) {
  (void)state;
  static const int64_t sizes[] = {1, 5, 1027};
  int cpu_differs = 0;
  for (int d = N_REAL_DTYPES; d < N_DTYPES; d++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      /* The rule: element i's parts are values 2i and 2i + 1 of the part dtype's stream. */
      const tsr_dtype part = all_dtypes[d] == TSR_C64 ? TSR_F32 : TSR_F64;
      const int64_t n2 = 2 * sizes[s];
      tsr_array *c = NULL, *g = NULL, *r = NULL;
      TSR_ASSERT_OK(tsr_random_uniform(1, &sizes[s], all_dtypes[d], gpu, 77 + s, -2.0, 3.0, &g));
      TSR_ASSERT_OK(tsr_random_uniform(1, &n2, part, CPU, 77 + s, -2.0, 3.0, &r));
      size_t nc = 0, ng = 0, nr = 0;
      unsigned char *bg = read_bytes(g, &ng), *br = read_bytes(r, &nr);
      assert_int_equal(ng, nr);
      assert_memory_equal(bg, br, ng); /* the GPU follows the rule, bit for bit */
      tsr_status st = tsr_random_uniform(1, &sizes[s], all_dtypes[d], CPU, 77 + s, -2.0, 3.0, &c);
      if (!core_refuses(st)) {
        TSR_ASSERT_OK(st);
        unsigned char *bc = read_bytes(c, &nc);
        assert_int_equal(nc, ng);
        /* The CPU's complex fill: the same rule (issue 50's core); one without it is reported
           and the case skipped below, not failed here. */
        if (memcmp(bc, br, nc) != 0)
          cpu_differs = 1;
        else
          assert_memory_equal(bc, bg, nc);
        free(bc);
        tsr_array_release(c);
      }
      free(bg);
      free(br);
      tsr_array_release(g);
      tsr_array_release(r);
    }
  if (cpu_differs) {
    print_message("skipped: the CPU's complex random does not yet take parts 2i, 2i + 1 of the "
                  "part stream (the GPU does)\n");
    skip();
  }
}

/* + - * / and neg of complex arrays, GPU against CPU (correctly rounded parts may differ by
   the order of the product's two terms where a device fuses them: a few ulps). */
static void test_complex_elementwise(void **state) {
  (void)state;
  for (int d = N_REAL_DTYPES; d < N_DTYPES; d++) {
    const tsr_dtype dt = all_dtypes[d];
    const double eps = dt == TSR_C64 ? 0x1.0p-24 : 0x1.0p-53;
    int64_t shape[2] = {129, 67};
    tsr_array *ca = complex_array(2, shape, dt, CPU, 40 + (uint64_t)d, 0, NULL);
    tsr_array *cb = complex_array(2, shape, dt, CPU, 50 + (uint64_t)d, 1, NULL); /* imaginary */
    tsr_array *ga, *gb;
    TSR_ASSERT_OK(tsr_array_to(ca, gpu, &ga));
    TSR_ASSERT_OK(tsr_array_to(cb, gpu, &gb));
    for (int op = TSR_ADD; op <= TSR_DIV; op++) {
      tsr_array *c = NULL, *g = NULL;
      tsr_status st = tsr_binary((tsr_binary_op)op, ca, cb, &c);
      if (core_refuses(st)) continue;
      TSR_ASSERT_OK(st);
      TSR_ASSERT_OK(tsr_binary((tsr_binary_op)op, ga, gb, &g));
      double complex *x = read_complex(g), *y = read_complex(c);
      for (int64_t i = 0; i < shape[0] * shape[1]; i++)
        if (!(cabs(x[i] - y[i]) <= 8 * eps * fmax(cabs(y[i]), 1e-300))) {
          print_error("binary %d %s element %lld: gpu (%g, %g), cpu (%g, %g)\n", op,
                      tsr_dtype_name(dt), (long long)i, creal(x[i]), cimag(x[i]), creal(y[i]),
                      cimag(y[i]));
          fail();
        }
      free(x);
      free(y);
      tsr_array_release(c);
      tsr_array_release(g);
    }
    tsr_array *c = NULL, *g = NULL;
    tsr_status st = tsr_neg(ca, &c);
    if (!core_refuses(st)) {
      TSR_ASSERT_OK(st);
      TSR_ASSERT_OK(tsr_neg(ga, &g));
      size_t nc, ng;
      unsigned char *bc = read_bytes(c, &nc), *bg = read_bytes(g, &ng);
      assert_memory_equal(bc, bg, nc);
      free(bc);
      free(bg);
      tsr_array_release(c);
      tsr_array_release(g);
    }
    tsr_array_release(ca);
    tsr_array_release(cb);
    tsr_array_release(ga);
    tsr_array_release(gb);
  }
}

/* Complex GEMM on the GPU (native and vendor paths) against a float64-complex reference, every
   pair of N, T and C, odd sizes, general and purely imaginary inputs (a lost conjugation
   changes the sign of the product), real alpha and beta; beta 0 over NaN. */
static void test_complex_gemm(void **state) {
  (void)state;
  static const int64_t sizes[][3] = {{17, 33, 5}, {130, 70, 19}, {256, 256, 256}};
  const tsr_trans ops[3] = {TSR_NO_TRANS, TSR_TRANS, TSR_CONJ_TRANS};
  uint64_t seed = 9000;
  for (int d = N_REAL_DTYPES; d < N_DTYPES; d++)
    for (int path = TSR_GEMM_NATIVE; path <= TSR_GEMM_VENDOR; path++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int oa = 0; oa < 3; oa++)
          for (int ob = 0; ob < 3; ob++) {
            /* TSR_EMU_QUICK (the emulator in CI): the two smaller shapes only. */
            if (getenv("TSR_EMU_QUICK") && s == 2) continue;
            const tsr_dtype dt = all_dtypes[d];
            const int64_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
            const int ta = oa > 0, tb = ob > 0;
            int64_t sa[2] = {ta ? k : m, ta ? m : k}, sb[2] = {tb ? n : k, tb ? k : n};
            int64_t sc[2] = {m, n};
            double complex *ha, *hb, *hc;
            const double alpha = 0.75, beta = (oa + ob) % 2 ? 0.0 : -1.5;
            tsr_array *ga = complex_array(2, sa, dt, gpu, seed++, (oa + ob) % 2, &ha);
            tsr_array *gb = complex_array(2, sb, dt, gpu, seed++, 0, &hb);
            tsr_array *gc = complex_array(2, sc, dt, gpu, seed++, 0, &hc);
            if (beta == 0.0) { /* NaN parts: C must not be read */
              size_t bytes = (size_t)(m * n) * dsize(dt);
              unsigned char *nan_bytes = malloc(bytes);
              assert_non_null(nan_bytes);
              memset(nan_bytes, 0xFF, bytes); /* all-ones: a quiet NaN in float and double */
              TSR_ASSERT_OK(tsr_array_write(gc, nan_bytes, bytes));
              free(nan_bytes);
            }
            tsr_status st =
                tsr_gemm_ex(ops[oa], ops[ob], alpha, ga, gb, beta, gc, (tsr_gemm_path)path);
            if (st == TSR_ERR_INVALID_ARGUMENT && (oa == 2 || ob == 2)) {
              core_refuses(TSR_ERR_UNSUPPORTED); /* a core without 'C' yet: skipped */
            } else if (path == TSR_GEMM_VENDOR && !TSR_HAVE_GPU_VENDOR_BLAS) {
              TSR_ASSERT_STATUS(st, TSR_ERR_UNSUPPORTED, NULL);
            } else if (!core_refuses(st)) {
              TSR_ASSERT_OK(st);
              double complex *x = read_complex(gc);
              double num = 0.0, den = 0.0;
              for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                  double complex acc = 0;
                  for (int64_t p = 0; p < k; p++) {
                    double complex u = ta ? ha[p * m + i] : ha[i * k + p];
                    double complex v = tb ? hb[j * k + p] : hb[p * n + j];
                    if (oa == 2) u = conj(u);
                    if (ob == 2) v = conj(v);
                    acc += u * v;
                  }
                  double complex ref = alpha * acc + (beta != 0.0 ? beta * hc[i * n + j] : 0);
                  double e = cabs(x[i * n + j] - ref);
                  num += isfinite(e) ? e * e : INFINITY;
                  den += cabs(ref) * cabs(ref);
                }
              double err = sqrt(num / fmax(den, 1e-300));
              double tol = tsr_test_tol(dt == TSR_C64 ? TSR_F32 : TSR_F64, k) * 2;
              if (!(err <= tol))
                print_error("complex gemm %s %d%d %lldx%lldx%lld path %d: error %g > %g\n",
                            tsr_dtype_name(dt), oa, ob, (long long)m, (long long)n, (long long)k,
                            path, err, tol);
              assert_true(err <= tol);
              free(x);
            }
            free(ha);
            free(hb);
            free(hc);
            tsr_array_release(ga);
            tsr_array_release(gb);
            tsr_array_release(gc);
          }
}

int main(void) {
  /* The GPU of this build (cuda or hip), skipped (77) when there is none. */
  const char *name = TSR_HAVE_CUDA ? "cuda" : "hip";
  tsr_status st = tsr_device_parse(name, &gpu);
  if (st == TSR_ERR_NO_DEVICE) {
    printf("skipped: no %s device: %s\n", name, tsr_last_error());
    return TSR_TEST_SKIP;
  }
  if (st != TSR_OK) {
    fprintf(stderr, "tsr_device_parse(%s): %s\n", name, tsr_last_error());
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_props),
      cmocka_unit_test(test_transfer_exact),
      cmocka_unit_test(test_write_strided),
      cmocka_unit_test(test_device_mismatch),
      cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_managed),
      cmocka_unit_test(test_random_same_bits),
      cmocka_unit_test(test_binary),
      cmocka_unit_test(test_integer_wrap),
      cmocka_unit_test(test_unary),
      cmocka_unit_test(test_reduce),
      cmocka_unit_test(test_reduce_nan),
      cmocka_unit_test(test_astype),
      cmocka_unit_test(test_fill_arange),
      cmocka_unit_test(test_gemm),
      cmocka_unit_test(test_gemm_degenerate),
      cmocka_unit_test(test_queued_chain),
      cmocka_unit_test(test_allocator_reuse),
      cmocka_unit_test(test_complex_random),
      cmocka_unit_test(test_complex_elementwise),
      cmocka_unit_test(test_complex_gemm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
