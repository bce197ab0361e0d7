/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The complex dtypes (c64, c128) through the array API on the CPU (issue 50): creation,
 * conversions, Philox, the elementwise operators and reductions defined for complex numbers and
 * the refusals of the others, .npy (either byte order, Fortran order, a wrong item size), and
 * the GEMM entries (tsr_gemm_complex, tsr_gemm, tsr_gemm_host, tsr_gemm_host_complex,
 * tsr_matmul with stacks) against an independent float64-complex reference on random inputs
 * (never zeros), with purely imaginary and conjugate-sensitive cases. The GEMM tests skip with
 * a message while the CPU backend answers TSR_ERR_UNSUPPORTED for complex records.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "tsr_test.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef double _Complex zd;

static const tsr_dtype cdtypes[2] = {TSR_C64, TSR_C128};

/* n random complex values, both parts in [-1, 1) and away from 0 (|part| >= 1/16); `kind` 0:
   general, 1: purely imaginary, 2: purely real. */
static zd *rand_z(int64_t n, uint64_t seed, int kind) {
  double *r = malloc(sizeof(double) * (size_t)(2 * n + 1));
  tsr_test_fill_random(r, (size_t)(2 * n), seed);
  zd *z = malloc(sizeof(zd) * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++) {
    double re = r[2 * i], im = r[2 * i + 1];
    re += re < 0 ? -0.0625 : 0.0625;
    im += im < 0 ? -0.0625 : 0.0625;
    z[i] = CMPLX(kind == 1 ? 0.0 : re, kind == 2 ? 0.0 : im);
  }
  free(r);
  return z;
}

/* Host values rounded to the dtype's parts, in the dtype's layout (malloc'ed). */
static void *pack(const zd *z, int64_t n, tsr_dtype dt) {
  if (dt == TSR_C64) {
    tsr_complex64 *p = malloc(sizeof *p * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
      p[i] = (tsr_complex64){(float)creal(z[i]), (float)cimag(z[i])};
    return p;
  }
  tsr_complex128 *p = malloc(sizeof *p * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++)
    p[i] = (tsr_complex128){creal(z[i]), cimag(z[i])};
  return p;
}

/* z rounded to the dtype (the values an array of it holds). */
static void round_to(zd *z, int64_t n, tsr_dtype dt) {
  /* Through volatile floats: GCC 12 at -O3 vectorizes z[i] = CMPLX((float)creal(z[i]), ...)
     and leaves the epilogue's element unrounded. */
  if (dt == TSR_C64)
    for (int64_t i = 0; i < n; i++) {
      volatile float re = (float)creal(z[i]), im = (float)cimag(z[i]);
      z[i] = CMPLX(re, im);
    }
}

static tsr_array *make(int ndim, const int64_t *shape, tsr_dtype dt, const zd *z) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++)
    n *= shape[i];
  void *p = pack(z, n, dt);
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_from_host(ndim, shape, dt, TSR_CPU, p, &a));
  free(p);
  return a;
}

/* An array's values as float64 complex (asserting its dtype and element count). */
static zd *read_z(const tsr_array *a, tsr_dtype dt, int64_t n) {
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(a, &info));
  assert_int_equal(info.dtype, dt);
  assert_int_equal(info.size, n);
  zd *z = malloc(sizeof(zd) * (size_t)(n + 1));
  if (dt == TSR_C64) {
    tsr_complex64 *p = malloc(sizeof *p * (size_t)(n + 1));
    TSR_ASSERT_OK(tsr_array_read(a, p, sizeof *p * (size_t)n));
    for (int64_t i = 0; i < n; i++)
      z[i] = CMPLX(p[i].re, p[i].im);
    free(p);
  } else {
    tsr_complex128 *p = malloc(sizeof *p * (size_t)(n + 1));
    TSR_ASSERT_OK(tsr_array_read(a, p, sizeof *p * (size_t)n));
    for (int64_t i = 0; i < n; i++)
      z[i] = CMPLX(p[i].re, p[i].im);
    free(p);
  }
  return z;
}

static double eps_of(tsr_dtype dt) {
  return dt == TSR_C64 || dt == TSR_F32 ? 0x1.0p-24 : 0x1.0p-53;
}

/* |got - ref| <= tol * (|ref| + scale) for every element. */
static void assert_close_z(const zd *got, const zd *ref, int64_t n, double tol, double scale,
                           const char *what) {
  for (int64_t i = 0; i < n; i++) {
    double d = cabs(got[i] - ref[i]);
    if (!(d <= tol * (cabs(ref[i]) + scale))) {
      print_error("%s: element %lld is %.17g%+.17gi, expected %.17g%+.17gi\n", what, (long long)i,
                  creal(got[i]), cimag(got[i]), creal(ref[i]), cimag(ref[i]));
      fail();
    }
  }
}

/* ------------------------------------------------------------------ creation ---------- */

static void test_creation(void **state) {
  (void)state;
  const int64_t shape[2] = {3, 5};
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = cdtypes[d];
    tsr_array *a = NULL;
    TSR_ASSERT_OK(tsr_full_complex(2, shape, dt, TSR_CPU, (tsr_complex128){1.5, -2.25}, &a));
    zd *z = read_z(a, dt, 15);
    for (int i = 0; i < 15; i++)
      assert_true(z[i] == CMPLX(1.5, -2.25));
    free(z);
    tsr_array_release(a);
    TSR_ASSERT_OK(tsr_full(2, shape, dt, TSR_CPU, -0.75, &a));
    z = read_z(a, dt, 15);
    for (int i = 0; i < 15; i++)
      assert_true(z[i] == CMPLX(-0.75, 0.0));
    free(z);
    tsr_array_release(a);
    TSR_ASSERT_OK(tsr_zeros(2, shape, dt, TSR_CPU, &a));
    z = read_z(a, dt, 15);
    for (int i = 0; i < 15; i++)
      assert_true(z[i] == 0.0);
    free(z);
    tsr_array_release(a);
    TSR_ASSERT_STATUS(tsr_arange(0, 4, 1, dt, TSR_CPU, &a), TSR_ERR_DTYPE, "complex");
  }
  tsr_array *a = NULL;
  TSR_ASSERT_STATUS(tsr_full_complex(2, shape, TSR_F64, TSR_CPU, (tsr_complex128){1, 2}, &a),
                    TSR_ERR_INVALID_ARGUMENT, "f64");
  TSR_ASSERT_OK(tsr_full_complex(2, shape, TSR_F64, TSR_CPU, (tsr_complex128){3, 0}, &a));
  double v[15];
  TSR_ASSERT_OK(tsr_array_read(a, v, sizeof v));
  assert_true(v[14] == 3.0);
  tsr_array_release(a);
}

/* from_host / read, views and copies keep the (re, im) pairs. */
static void test_transfers_views(void **state) {
  (void)state;
  const int64_t shape[2] = {4, 6};
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = cdtypes[d];
    zd *z = rand_z(24, 11 + d, 0);
    round_to(z, 24, dt);
    tsr_array *a = make(2, shape, dt, z), *t = NULL, *c = NULL, *s = NULL, *cs = NULL;
    TSR_ASSERT_OK(tsr_transpose(a, NULL, &t));
    TSR_ASSERT_OK(tsr_contiguous(t, &c));
    zd *got = read_z(c, dt, 24);
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 6; j++)
        assert_true(got[j * 4 + i] == z[i * 6 + j]);
    free(got);
    TSR_ASSERT_OK(tsr_slice(a, 1, 5, -TSR_SLICE_END, -2, &s)); /* columns 5, 3, 1 */
    TSR_ASSERT_OK(tsr_copy(s, &cs));
    got = read_z(cs, dt, 12);
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 3; j++)
        assert_true(got[i * 3 + j] == z[i * 6 + 5 - 2 * j]);
    free(got);
    /* Writing a strided view writes whole elements. */
    zd w[12];
    for (int i = 0; i < 12; i++)
      w[i] = CMPLX(100 + i, -(double)i - 0.5);
    void *pw = pack(w, 12, dt);
    TSR_ASSERT_OK(tsr_array_write(s, pw, (dt == TSR_C64 ? 8u : 16u) * 12u));
    free(pw);
    got = read_z(a, dt, 24);
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 6; j++)
        assert_true(got[i * 6 + j] == (j % 2 == 1 ? w[i * 3 + (5 - j) / 2] : z[i * 6 + j]));
    free(got);
    tsr_array_release(a);
    tsr_array_release(t);
    tsr_array_release(c);
    tsr_array_release(s);
    tsr_array_release(cs);
    free(z);
  }
}

static void test_astype_parts(void **state) {
  (void)state;
  const int64_t shape[1] = {7};
  double r[7];
  tsr_test_fill_random(r, 7, 5);
  tsr_array *x = tsr_test_array_from_f64(1, shape, TSR_F64, TSR_CPU, r), *y = NULL;
  for (int d = 0; d < 2; d++) {
    TSR_ASSERT_OK(tsr_astype(x, cdtypes[d], &y));
    zd *z = read_z(y, cdtypes[d], 7);
    for (int i = 0; i < 7; i++) {
      assert_true(creal(z[i]) == (cdtypes[d] == TSR_C64 ? (double)(float)r[i] : r[i]));
      assert_true(cimag(z[i]) == 0.0);
    }
    free(z);
    tsr_array_release(y);
  }
  /* c128 -> c64 -> c128 rounds each part. */
  zd *z = rand_z(7, 6, 0);
  tsr_array *a = make(1, shape, TSR_C128, z), *b = NULL, *c = NULL, *re = NULL, *im = NULL;
  TSR_ASSERT_OK(tsr_astype(a, TSR_C64, &b));
  TSR_ASSERT_OK(tsr_astype(b, TSR_C128, &c));
  zd *got = read_z(c, TSR_C128, 7);
  for (int i = 0; i < 7; i++)
    assert_true(got[i] == CMPLX((float)creal(z[i]), (float)cimag(z[i])));
  free(got);
  /* Complex to real is refused, naming both dtypes and the way out. */
  TSR_ASSERT_STATUS(tsr_astype(a, TSR_F64, &y), TSR_ERR_DTYPE, "cannot convert c128 to f64");
  TSR_ASSERT_STATUS(tsr_astype(b, TSR_I32, &y), TSR_ERR_DTYPE, "tsr_real");
  TSR_ASSERT_STATUS(tsr_assign(x, a), TSR_ERR_DTYPE, "c128 to f64");
  TSR_ASSERT_OK(tsr_real(a, &re));
  TSR_ASSERT_OK(tsr_imag(a, &im));
  double rv[7], iv[7];
  TSR_ASSERT_OK(tsr_array_read(re, rv, sizeof rv));
  TSR_ASSERT_OK(tsr_array_read(im, iv, sizeof iv));
  for (int i = 0; i < 7; i++) {
    assert_true(rv[i] == creal(z[i]));
    assert_true(iv[i] == cimag(z[i]));
  }
  tsr_array_release(re);
  tsr_array_release(im);
  TSR_ASSERT_OK(tsr_imag(x, &im)); /* of a real array: zeros */
  TSR_ASSERT_OK(tsr_array_read(im, iv, sizeof iv));
  for (int i = 0; i < 7; i++)
    assert_true(iv[i] == 0.0);
  tsr_array_release(im);
  free(z);
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
  tsr_array_release(x);
}

/* Complex element i is (real stream 2i, real stream 2i+1) of the part dtype, same seed. */
static void test_random(void **state) {
  (void)state;
  const int64_t shape[2] = {5, 7}, twice[1] = {70};
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = cdtypes[d], pt = dt == TSR_C64 ? TSR_F32 : TSR_F64;
    for (int dist = 0; dist < 2; dist++) {
      tsr_array *z = NULL, *r = NULL;
      if (dist == 0) {
        TSR_ASSERT_OK(tsr_random_uniform(2, shape, dt, TSR_CPU, 42, -2.0, 3.0, &z));
        TSR_ASSERT_OK(tsr_random_uniform(1, twice, pt, TSR_CPU, 42, -2.0, 3.0, &r));
      } else {
        TSR_ASSERT_OK(tsr_random_normal(2, shape, dt, TSR_CPU, 42, 1.0, 2.0, &z));
        TSR_ASSERT_OK(tsr_random_normal(1, twice, pt, TSR_CPU, 42, 1.0, 2.0, &r));
      }
      zd *zv = read_z(z, dt, 35);
      double *rv = tsr_test_read_f64(r);
      int distinct = 0;
      for (int i = 0; i < 35; i++) {
        assert_true(creal(zv[i]) == rv[2 * i]);
        assert_true(cimag(zv[i]) == rv[2 * i + 1]);
        if (dist == 0) assert_true(creal(zv[i]) >= -2.0 && cimag(zv[i]) < 3.0);
        distinct += creal(zv[i]) != cimag(zv[i]);
      }
      assert_true(distinct > 30);
      free(zv);
      free(rv);
      tsr_array_release(z);
      tsr_array_release(r);
    }
  }
}

/* ------------------------------------------------------------------ elementwise ------- */

static void test_binary(void **state) {
  (void)state;
  const int64_t sa[2] = {4, 5}, sb[1] = {5};
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = cdtypes[d];
    for (int kind = 0; kind < 2; kind++) { /* general, purely imaginary b */
      zd *x = rand_z(20, 21 + d, 0), *y = rand_z(5, 31 + d, kind);
      round_to(x, 20, dt);
      round_to(y, 5, dt);
      tsr_array *a = make(2, sa, dt, x), *b = make(1, sb, dt, y), *o = NULL;
      for (int op = 0; op < 4; op++) {
        TSR_ASSERT_OK(tsr_binary((tsr_binary_op)op, a, b, &o));
        zd *got = read_z(o, dt, 20), ref[20];
        for (int i = 0; i < 20; i++) {
          zd p = x[i], q = y[i % 5];
          ref[i] = op == 0 ? p + q : op == 1 ? p - q : op == 2 ? p * q : p / q;
        }
        assert_close_z(got, ref, 20, 8 * eps_of(dt), 0.0, "binary");
        free(got);
        tsr_array_release(o);
      }
      tsr_array_release(a);
      tsr_array_release(b);
      free(x);
      free(y);
    }
    /* Refused with the operator and the dtype named. */
    zd *x = rand_z(5, 3, 0);
    tsr_array *a = make(1, sb, dt, x), *o = NULL;
    const char *want = dt == TSR_C64 ? "c64" : "c128";
    TSR_ASSERT_STATUS(tsr_maximum(a, a, &o), TSR_ERR_DTYPE, "maximum");
    TSR_ASSERT_STATUS(tsr_minimum(a, a, &o), TSR_ERR_DTYPE, want);
    TSR_ASSERT_STATUS(tsr_pow(a, a, &o), TSR_ERR_DTYPE, "pow");
    TSR_ASSERT_STATUS(tsr_relu(a, &o), TSR_ERR_DTYPE, "relu");
    TSR_ASSERT_STATUS(tsr_sigmoid(a, &o), TSR_ERR_DTYPE, "sigmoid");
    TSR_ASSERT_STATUS(tsr_max(a, TSR_AXIS_ALL, 0, &o), TSR_ERR_DTYPE, "max");
    TSR_ASSERT_STATUS(tsr_min(a, 0, 0, &o), TSR_ERR_DTYPE, "min");
    TSR_ASSERT_STATUS(tsr_argmax(a, 0, 0, &o), TSR_ERR_DTYPE, want);
    tsr_array *r = NULL;
    TSR_ASSERT_OK(tsr_real(a, &r));
    TSR_ASSERT_STATUS(tsr_add(a, r, &o), TSR_ERR_DTYPE, "dtypes differ");
    tsr_array_release(r);
    tsr_array_release(a);
    free(x);
  }
}

static void test_unary(void **state) {
  (void)state;
  const int64_t shape[2] = {3, 7};
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = cdtypes[d];
    for (int kind = 0; kind < 2; kind++) {
      zd *x = rand_z(21, 41 + d + 2 * kind, kind);
      round_to(x, 21, dt);
      tsr_array *a = make(2, shape, dt, x), *o = NULL;
      const tsr_unary_op ops[6] = {TSR_NEG, TSR_CONJ, TSR_EXP, TSR_LOG, TSR_SQRT, TSR_TANH};
      for (int k = 0; k < 6; k++) {
        TSR_ASSERT_OK(tsr_unary(ops[k], a, &o));
        zd *got = read_z(o, dt, 21), ref[21];
        for (int i = 0; i < 21; i++) {
          zd p = x[i];
          ref[i] = k == 0   ? -p
                   : k == 1 ? conj(p)
                   : k == 2 ? cexp(p)
                   : k == 3 ? clog(p)
                   : k == 4 ? csqrt(p)
                            : ctanh(p);
        }
        /* conj and neg are exact; a missing conjugation would fail on every element. */
        char what[32];
        snprintf(what, sizeof what, "unary %d %s", (int)ops[k], tsr_dtype_name(dt));
        assert_close_z(got, ref, 21, k < 2 ? 0.0 : 16 * eps_of(dt), k < 2 ? 0.0 : 1.0, what);
        free(got);
        tsr_array_release(o);
      }
      /* abs: the part dtype, hypot. */
      TSR_ASSERT_OK(tsr_abs(a, &o));
      tsr_array_props info;
      TSR_ASSERT_OK(tsr_array_info(o, &info));
      assert_int_equal(info.dtype, dt == TSR_C64 ? TSR_F32 : TSR_F64);
      double *got = tsr_test_read_f64(o), ref[21];
      for (int i = 0; i < 21; i++)
        ref[i] = cabs(x[i]);
      assert_true(tsr_test_rel_error(got, ref, 21) <= 4 * eps_of(dt));
      free(got);
      tsr_array_release(o);
      tsr_array_release(a);
      free(x);
    }
    /* abs without overflow of the squares. */
    zd big[2] = {CMPLX(3e300, 4e300), CMPLX(-3e-300, 4e-300)};
    const int64_t two[1] = {2};
    if (dt == TSR_C128) {
      tsr_array *a = make(1, two, dt, big), *o = NULL;
      TSR_ASSERT_OK(tsr_abs(a, &o));
      double v[2];
      TSR_ASSERT_OK(tsr_array_read(o, v, sizeof v));
      assert_true(fabs(v[0] - 5e300) <= 1e285 && fabs(v[1] - 5e-300) <= 1e-315);
      tsr_array_release(a);
      tsr_array_release(o);
    }
  }
  /* conj of a real or integer array is a copy. */
  double r[6];
  tsr_test_fill_random(r, 6, 9);
  const int64_t six[1] = {6};
  tsr_array *x = tsr_test_array_from_f64(1, six, TSR_F32, TSR_CPU, r), *o = NULL;
  TSR_ASSERT_OK(tsr_conj(x, &o));
  double *got = tsr_test_read_f64(o);
  for (int i = 0; i < 6; i++)
    assert_true(got[i] == (double)(float)r[i]);
  free(got);
  tsr_array_release(o);
  tsr_array_release(x);
}

static void test_reduce(void **state) {
  (void)state;
  const int64_t shape[2] = {37, 29};
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = cdtypes[d];
    zd *x = rand_z(37 * 29, 51 + d, 0);
    round_to(x, 37 * 29, dt);
    tsr_array *a = make(2, shape, dt, x), *o = NULL;
    for (int axis = -1; axis < 2; axis++) {
      for (int mean = 0; mean < 2; mean++) {
        int ax = axis < 0 ? TSR_AXIS_ALL : axis;
        TSR_ASSERT_OK(mean ? tsr_mean(a, ax, 0, &o) : tsr_sum(a, ax, 0, &o));
        int64_t n = axis < 0 ? 1 : axis == 0 ? 29 : 37;
        zd ref[37], *got = read_z(o, dt, n);
        for (int64_t j = 0; j < n; j++)
          ref[j] = 0;
        for (int i = 0; i < 37; i++)
          for (int j = 0; j < 29; j++)
            ref[axis < 0 ? 0 : axis == 0 ? j : i] += x[i * 29 + j];
        int64_t len = axis < 0 ? 37 * 29 : axis == 0 ? 37 : 29;
        if (mean)
          for (int64_t j = 0; j < n; j++)
            ref[j] /= (double)len;
        assert_close_z(got, ref, n, 4 * eps_of(dt), mean ? 1.0 : (double)len, "sum/mean");
        free(got);
        tsr_array_release(o);
      }
    }
    tsr_array_release(a);
    free(x);
  }
}

/* ------------------------------------------------------------------ .npy -------------- */

static char g_dir[64];

/* A .npy file written byte by byte: version 1.0, `descr`, the data as given. */
static void write_npy(const char *path, const char *dict, const void *data, size_t bytes) {
  unsigned char head[128];
  size_t dl = strlen(dict), total = (10 + dl + 1 + 63) / 64 * 64;
  memcpy(head, "\x93NUMPY\x01\x00", 8);
  head[8] = (unsigned char)((total - 10) & 0xff);
  head[9] = (unsigned char)((total - 10) >> 8);
  memcpy(head + 10, dict, dl);
  memset(head + 10 + dl, ' ', total - 11 - dl);
  head[total - 1] = '\n';
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(head, 1, total, f), total);
  assert_int_equal(fwrite(data, 1, bytes, f), bytes);
  assert_int_equal(fclose(f), 0);
}

static void swap_bytes(unsigned char *p, size_t n) {
  for (size_t i = 0; i < n / 2; i++) {
    unsigned char t = p[i];
    p[i] = p[n - 1 - i];
    p[n - 1 - i] = t;
  }
}

static void test_npy(void **state) {
  (void)state;
  char path[128];
  const int64_t shape[2] = {3, 4};
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = cdtypes[d];
    const size_t half = dt == TSR_C64 ? 4 : 8;
    zd *z = rand_z(12, 61 + d, 0);
    round_to(z, 12, dt);
    /* Round trip through tsr_npy_save / tsr_npy_load. */
    snprintf(path, sizeof path, "%s/rt%d.npy", g_dir, d);
    tsr_array *a = make(2, shape, dt, z), *b = NULL;
    TSR_ASSERT_OK(tsr_npy_save(path, a));
    tsr_npy_header h;
    TSR_ASSERT_OK(tsr_npy_read_header(path, &h));
    assert_int_equal(h.dtype, dt);
    TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &b));
    zd *got = read_z(b, dt, 12);
    for (int i = 0; i < 12; i++)
      assert_true(got[i] == z[i]);
    free(got);
    tsr_array_release(b);
    /* Big-endian, Fortran order, written here: each part swapped on its own. */
    unsigned char *raw = pack(z, 12, dt), *fo = malloc(12 * 2 * half);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        memcpy(fo + (size_t)(i + 3 * j) * 2 * half, raw + (size_t)(i * 4 + j) * 2 * half, 2 * half);
    for (size_t p = 0; p < 24; p++)
      swap_bytes(fo + p * half, half);
    char dict[96];
    snprintf(dict, sizeof dict, "{'descr': '>c%d', 'fortran_order': True, 'shape': (3, 4), }",
             (int)(2 * half));
    snprintf(path, sizeof path, "%s/be%d.npy", g_dir, d);
    write_npy(path, dict, fo, 12 * 2 * half);
    TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &b));
    got = read_z(b, dt, 12);
    for (int i = 0; i < 12; i++)
      assert_true(got[i] == z[i]);
    free(got);
    tsr_array_release(b);
    free(raw);
    free(fo);
    tsr_array_release(a);
    free(z);
  }
  /* A complex item size NumPy never writes is a format error naming the descr. */
  unsigned char data[64] = {0};
  snprintf(path, sizeof path, "%s/bad.npy", g_dir);
  write_npy(path, "{'descr': '<c4', 'fortran_order': False, 'shape': (2,), }", data, 16);
  tsr_array *b = NULL;
  TSR_ASSERT_STATUS(tsr_npy_load(path, TSR_CPU, &b), TSR_ERR_FORMAT, "<c4");
  /* Long double complex is NumPy's but not Tessera's. */
  write_npy(path, "{'descr': '<c32', 'fortran_order': False, 'shape': (1,), }", data, 32);
  TSR_ASSERT_STATUS(tsr_npy_load(path, TSR_CPU, &b), TSR_ERR_DTYPE, "c32");
}

/* ------------------------------------------------------------------ GEMM -------------- */

/* op(X) element (i, p) of the row-major stored matrix x (rows x cols), op by trans t. */
static zd op_at(const zd *x, int64_t cols, tsr_trans t, int64_t i, int64_t p) {
  zd v = t == TSR_NO_TRANS ? x[i * cols + p] : x[p * cols + i];
  return t == TSR_CONJ_TRANS ? conj(v) : v;
}

/* Whether a complex GEMM ran: false (with a note, once) when the backend has none yet. */
static int gemm_ran(tsr_status st) {
  static int noted;
  if (st == TSR_ERR_UNSUPPORTED) {
    if (!noted) print_message("complex GEMM skipped: %s\n", tsr_last_error());
    noted = 1;
    return 0;
  }
  TSR_ASSERT_OK(st);
  return 1;
}

static void test_gemm(void **state) {
  (void)state;
  const int64_t m = 7, n = 5, k = 9;
  const tsr_trans ts[3] = {TSR_NO_TRANS, TSR_TRANS, TSR_CONJ_TRANS};
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = cdtypes[d];
    for (int ia = 0; ia < 3; ia++)
      for (int ib = 0; ib < 3; ib++) {
        tsr_trans ta = ts[ia], tb = ts[ib];
        const int64_t as[2] = {ta ? k : m, ta ? m : k}, bs[2] = {tb ? n : k, tb ? k : n};
        const int64_t cs[2] = {m, n};
        zd *x = rand_z(m * k, 71 + ia, ia == 2 && ib == 0 ? 1 : 0), *y = rand_z(k * n, 81 + ib, 0);
        zd *c0 = rand_z(m * n, 91, 0);
        round_to(x, m * k, dt);
        round_to(y, k * n, dt);
        round_to(c0, m * n, dt);
        const tsr_complex128 alpha = {0.75, -1.25}, beta = {-0.5, 0.375};
        tsr_array *a = make(2, as, dt, x), *b = make(2, bs, dt, y), *c = make(2, cs, dt, c0);
        int ran = gemm_ran(tsr_gemm_complex(ta, tb, alpha, a, b, beta, c, TSR_GEMM_AUTO));
        if (ran) {
          zd ref[35], *got = read_z(c, dt, m * n);
          for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
              zd s = 0;
              for (int64_t p = 0; p < k; p++)
                s += op_at(x, as[1], ta, i, p) * op_at(y, bs[1], tb, p, j);
              ref[i * n + j] =
                  CMPLX(alpha.re, alpha.im) * s + CMPLX(beta.re, beta.im) * c0[i * n + j];
            }
          assert_close_z(got, ref, m * n, 32 * eps_of(dt), 2.0 * (double)k, "tsr_gemm_complex");
          free(got);
          /* tsr_gemm_host_complex on the same data (row-major pointers, BLAS scalars). */
          void *ah = pack(x, m * k, dt), *bh = pack(y, k * n, dt), *ch = pack(c0, m * n, dt);
          tsr_complex64 al64 = {(float)alpha.re, (float)alpha.im},
                        be64 = {(float)beta.re, (float)beta.im};
          const void *pa = dt == TSR_C64 ? (const void *)&al64 : (const void *)&alpha;
          const void *pb = dt == TSR_C64 ? (const void *)&be64 : (const void *)&beta;
          TSR_ASSERT_OK(
              tsr_gemm_host_complex(dt, ta, tb, m, n, k, pa, ah, as[1], bh, bs[1], pb, ch, n));
          tsr_array *hc = make(2, cs, dt, c0);
          TSR_ASSERT_OK(tsr_array_write(hc, ch, (dt == TSR_C64 ? 8u : 16u) * (size_t)(m * n)));
          got = read_z(hc, dt, m * n);
          assert_close_z(got, ref, m * n, 32 * eps_of(dt), 2.0 * (double)k,
                         "tsr_gemm_host_complex");
          free(got);
          tsr_array_release(hc);
          free(ah);
          free(bh);
          free(ch);
        }
        tsr_array_release(a);
        tsr_array_release(b);
        tsr_array_release(c);
        free(x);
        free(y);
        free(c0);
      }
  }
  /* Real arrays take real scalars only; TSR_CONJ_TRANS is TSR_TRANS for them. */
  const int64_t s2[2] = {2, 2};
  double r[4] = {1, 2, 3, 4};
  tsr_array *a = tsr_test_array_from_f64(2, s2, TSR_F64, TSR_CPU, r);
  tsr_array *c = tsr_test_array_from_f64(2, s2, TSR_F64, TSR_CPU, r);
  TSR_ASSERT_STATUS(tsr_gemm_complex(TSR_NO_TRANS, TSR_NO_TRANS, (tsr_complex128){1, 0.5}, a, a,
                                     (tsr_complex128){0, 0}, c, TSR_GEMM_AUTO),
                    TSR_ERR_INVALID_ARGUMENT, "imaginary");
  TSR_ASSERT_OK(tsr_gemm(TSR_CONJ_TRANS, TSR_NO_TRANS, 1.0, a, a, 0.0, c));
  double got[4];
  TSR_ASSERT_OK(tsr_array_read(c, got, sizeof got));
  assert_true(got[0] == 10 && got[1] == 14 && got[2] == 14 && got[3] == 20); /* A^T A */
  TSR_ASSERT_STATUS(tsr_gemm((tsr_trans)3, TSR_NO_TRANS, 1.0, a, a, 0.0, c),
                    TSR_ERR_INVALID_ARGUMENT, "TSR_CONJ_TRANS");
  tsr_array_release(a);
  tsr_array_release(c);
}

/* Column-major C (a transposed view) and NumPy matmul over stacks. */
static void test_matmul_layouts(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = cdtypes[d];
    const int64_t as[3] = {3, 4, 6}, bs[2] = {6, 5};
    zd *x = rand_z(72, 101, 0), *y = rand_z(30, 102, 0);
    round_to(x, 72, dt);
    round_to(y, 30, dt);
    tsr_array *a = make(3, as, dt, x), *b = make(2, bs, dt, y), *o = NULL;
    tsr_status st = tsr_matmul(a, b, &o);
    if (gemm_ran(st)) {
      zd *got = read_z(o, dt, 60), ref[60];
      for (int s = 0; s < 3; s++)
        for (int i = 0; i < 4; i++)
          for (int j = 0; j < 5; j++) {
            zd acc = 0;
            for (int p = 0; p < 6; p++)
              acc += x[s * 24 + i * 6 + p] * y[p * 5 + j];
            ref[s * 20 + i * 5 + j] = acc;
          }
      assert_close_z(got, ref, 60, 32 * eps_of(dt), 6.0, "tsr_matmul");
      free(got);
      tsr_array_release(o);
      /* C (4x5) stored column-major: the transpose of a row-major 5x4 buffer. */
      const int64_t ct[2] = {5, 4};
      tsr_array *cbuf = NULL, *cv = NULL, *a0 = NULL, *a0v = NULL;
      TSR_ASSERT_OK(tsr_zeros(2, ct, dt, TSR_CPU, &cbuf));
      TSR_ASSERT_OK(tsr_transpose(cbuf, NULL, &cv));
      TSR_ASSERT_OK(tsr_slice(a, 0, 0, 1, 1, &a0));
      const int64_t s2[2] = {4, 6};
      TSR_ASSERT_OK(tsr_reshape(a0, 2, s2, &a0v)); /* 4 x 6 */
      /* op(A) = A0v (4x6) times op(B) = Y^H, Y 5x6 and purely imaginary. */
      const int64_t ys[2] = {5, 6};
      zd *y3 = rand_z(30, 104, 1);
      round_to(y3, 30, dt);
      tsr_array *b3 = make(2, ys, dt, y3);
      TSR_ASSERT_OK(tsr_gemm_complex(TSR_NO_TRANS, TSR_CONJ_TRANS, (tsr_complex128){0, 1}, a0v, b3,
                                     (tsr_complex128){0, 0}, cv, TSR_GEMM_AUTO));
      zd *cvals = read_z(cbuf, dt, 20); /* row-major 5x4 buffer: element (i, j) of C at j*4+i */
      zd ref2[20], got2[20];
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++) {
          zd acc = 0;
          for (int p = 0; p < 6; p++)
            acc += x[i * 6 + p] * conj(y3[j * 6 + p]);
          ref2[i * 5 + j] = I * acc;
          got2[i * 5 + j] = cvals[j * 4 + i];
        }
      assert_close_z(got2, ref2, 20, 32 * eps_of(dt), 6.0, "column-major C, A B^H");
      free(cvals);
      free(y3);
      tsr_array_release(b3);
      tsr_array_release(a0v);
      tsr_array_release(a0);
      tsr_array_release(cv);
      tsr_array_release(cbuf);
    }
    tsr_array_release(a);
    tsr_array_release(b);
    free(x);
    free(y);
  }
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/tsr_complex_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_creation),     cmocka_unit_test(test_transfers_views),
      cmocka_unit_test(test_astype_parts), cmocka_unit_test(test_random),
      cmocka_unit_test(test_binary),       cmocka_unit_test(test_unary),
      cmocka_unit_test(test_reduce),       cmocka_unit_test(test_npy),
      cmocka_unit_test(test_gemm),         cmocka_unit_test(test_matmul_layouts),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  if (system(cmd) != 0) rc = rc ? rc : 1;
  return rc;
}
