/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Random arrays (Philox4x32-10): reproducibility per seed, independence of the shape and of
 * the device, bounds of uniform [low, high), moments of uniform and normal samples, bad
 * arguments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_util.h"

static tsr_device dev;

static const tsr_dtype float_dtypes[2] = {TSR_F32, TSR_F64};

typedef tsr_status (*rng_fn)(int, const int64_t *, tsr_dtype, tsr_device, uint64_t, double, double,
                             tsr_array **);

static double *generate(rng_fn fn, int ndim, const int64_t *shape, tsr_dtype dt, tsr_device d,
                        uint64_t seed, double p0, double p1) {
  tsr_array *a = NULL;
  TSR_ASSERT_OK(fn(ndim, shape, dt, d, seed, p0, p1, &a));
  ct_assert_shape(a, dt, ndim, shape);
  double *x = tsr_test_read_f64(a);
  tsr_array_release(a);
  return x;
}

/* The same seed gives the same values; element i depends only on (seed, i), not on the
   shape or the array length. */
static void test_reproducible(void **state) {
  (void)state;
  rng_fn fns[2] = {tsr_random_uniform, tsr_random_normal};
  for (int f = 0; f < 2; f++)
    for (int d = 0; d < 2; d++) {
      tsr_dtype dt = float_dtypes[d];
      int64_t n = 1021, s2[2] = {13, 7}, n91 = 91, n1 = 1;
      double *x = generate(fns[f], 1, &n, dt, dev, 42, -1, 3);
      double *y = generate(fns[f], 1, &n, dt, dev, 42, -1, 3);
      ct_assert_close(y, x, n, 0, 0, "same seed twice");
      double *z = generate(fns[f], 2, s2, dt, dev, 42, -1, 3);
      ct_assert_close(z, x, 91, 0, 0, "same seed, other shape");
      double *w = generate(fns[f], 1, &n91, dt, dev, 42, -1, 3);
      ct_assert_close(w, x, 91, 0, 0, "same seed, shorter array");
      double *o = generate(fns[f], 1, &n1, dt, dev, 42, -1, 3);
      ct_assert_close(o, x, 1, 0, 0, "same seed, one element");
      free(o);
      /* Odd lengths and a scalar: every lane of a Philox block is consumed alike. */
      double *s = generate(fns[f], 0, NULL, dt, dev, 42, -1, 3);
      ct_assert_close(s, x, 1, 0, 0, "same seed, scalar");
      free(s);
      free(x);
      free(y);
      free(z);
      free(w);
    }
}

/* Different seeds (also ones differing only in the high 32 bits) give different streams. */
static void test_seeds_differ(void **state) {
  (void)state;
  static const uint64_t seeds[] = {0, 1, 2, UINT64_C(1) << 32, UINT64_C(0xFFFFFFFFFFFFFFFF)};
  int64_t n = 1000;
  for (int d = 0; d < 2; d++) {
    double *x[5];
    for (int s = 0; s < 5; s++)
      x[s] = generate(tsr_random_uniform, 1, &n, float_dtypes[d], dev, seeds[s], 0, 1);
    for (int s = 0; s < 5; s++)
      for (int t = s + 1; t < 5; t++) {
        int same = 0;
        for (int64_t i = 0; i < n; i++)
          same += x[s][i] == x[t][i];
        if (same > 10) {
          print_error("seeds %llu and %llu: %d of %lld values equal\n",
                      (unsigned long long)seeds[s], (unsigned long long)seeds[t], same,
                      (long long)n);
          fail();
        }
      }
    for (int s = 0; s < 5; s++)
      free(x[s]);
  }
}

/* Uniform: inside [low, high), mean and variance of 1e5 samples within 6 standard errors. */
static void test_uniform_statistics(void **state) {
  (void)state;
  static const double ranges[][2] = {{0, 1}, {-3, 5}, {10, 20}, {-1e-3, 1e-3}, {1, 2}};
  int64_t n = 100000;
  for (int d = 0; d < 2; d++)
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
      double lo = ranges[r][0], hi = ranges[r][1];
      double *x = generate(tsr_random_uniform, 1, &n, float_dtypes[d], dev, 7 + r, lo, hi);
      double sum = 0, sq = 0, mn = INFINITY, mx = -INFINITY;
      for (int64_t i = 0; i < n; i++) {
        sum += x[i];
        mn = fmin(mn, x[i]);
        mx = fmax(mx, x[i]);
      }
      double mean = sum / (double)n;
      for (int64_t i = 0; i < n; i++)
        sq += (x[i] - mean) * (x[i] - mean);
      double var = sq / (double)(n - 1), w = hi - lo;
      double se_mean = w / sqrt(12.0 * (double)n);
      /* Variance of a uniform sample variance: w^4/180/n. */
      double se_var = w * w / sqrt(180.0 * (double)n);
      if (!(mn >= lo && mx < hi) || fabs(mean - (lo + hi) / 2) > 6 * se_mean ||
          fabs(var - w * w / 12) > 6 * se_var) {
        print_error("uniform %s [%g, %g): min %.9g max %.9g mean %.9g var %.9g\n",
                    tsr_dtype_name(float_dtypes[d]), lo, hi, mn, mx, mean, var);
        fail();
      }
      /* A histogram of 10 bins, each near n/10. */
      int64_t bins[10] = {0};
      for (int64_t i = 0; i < n; i++) {
        int b = (int)((x[i] - lo) / w * 10);
        bins[b < 0 ? 0 : b > 9 ? 9 : b]++;
      }
      for (int b = 0; b < 10; b++)
        assert_true(llabs(bins[b] - n / 10) < 6 * 95);
      free(x);
    }
}

/* f32 values are computed in double and rounded: the rounding must not reach `high`.
   Seed 909 index 20637 and seed 836 index 28258 draw the largest 24-bit fraction,
   1 - 2^-24, where 10 + 10 * (1 - 2^-24) rounds to 20.0f. */
static void test_uniform_f32_never_high(void **state) {
  (void)state;
  static const uint64_t seeds[] = {909, 836};
  int64_t n = 28259;
  for (int s = 0; s < 2; s++) {
    float *x = malloc((size_t)n * sizeof(float));
    assert_non_null(x);
    tsr_array *a = NULL;
    TSR_ASSERT_OK(tsr_random_uniform(1, &n, TSR_F32, dev, seeds[s], 10.0, 20.0, &a));
    TSR_ASSERT_OK(tsr_array_read(a, x, (size_t)n * sizeof(float)));
    for (int64_t i = 0; i < n; i++)
      if (!(x[i] >= 10.0f && x[i] < 20.0f)) {
        print_error("uniform f32 [10, 20) seed %llu: element %lld is %.9g\n",
                    (unsigned long long)seeds[s], (long long)i, (double)x[i]);
        fail();
      }
    tsr_array_release(a);
    free(x);
  }
}

/* The same for f64: a range one ulp wide holds one double, so every value must be low
   (low + (high - low) * u rounds to high for u > 1/2). */
static void test_uniform_f64_never_high(void **state) {
  (void)state;
  int64_t m = 1000;
  double lo = 1.0, hi = nextafter(1.0, 2.0);
  double *y = generate(tsr_random_uniform, 1, &m, TSR_F64, dev, 3, lo, hi);
  for (int64_t i = 0; i < m; i++)
    if (y[i] != lo) {
      print_error("uniform f64 [1, 1+2^-52): element %lld is %.17g\n", (long long)i, y[i]);
      fail();
    }
  free(y);
}

/* Normal: mean, standard deviation, and the 1-sigma and 2-sigma fractions of 1e5 samples. */
static void test_normal_statistics(void **state) {
  (void)state;
  static const double params[][2] = {{0, 1}, {5, 2}, {-1, 0.01}};
  int64_t n = 100000;
  for (int d = 0; d < 2; d++)
    for (size_t p = 0; p < sizeof params / sizeof params[0]; p++) {
      double mu = params[p][0], sigma = params[p][1];
      double *x = generate(tsr_random_normal, 1, &n, float_dtypes[d], dev, 100 + p, mu, sigma);
      double sum = 0, sq = 0;
      int64_t in1 = 0, in2 = 0;
      for (int64_t i = 0; i < n; i++) {
        assert_true(isfinite(x[i]));
        sum += x[i];
      }
      double mean = sum / (double)n;
      for (int64_t i = 0; i < n; i++) {
        double z = (x[i] - mu) / sigma;
        sq += (x[i] - mean) * (x[i] - mean);
        in1 += fabs(z) < 1;
        in2 += fabs(z) < 2;
      }
      double sd = sqrt(sq / (double)(n - 1));
      double f1 = (double)in1 / (double)n, f2 = (double)in2 / (double)n;
      /* Standard errors: sigma/sqrt(n) for the mean, sigma/sqrt(2n) for the stddev,
         sqrt(p(1-p)/n) for the fractions. */
      if (fabs(mean - mu) > 6 * sigma / sqrt((double)n) ||
          fabs(sd - sigma) > 6 * sigma / sqrt(2.0 * (double)n) ||
          fabs(f1 - 0.682689) > 6 * sqrt(0.2166 / (double)n) ||
          fabs(f2 - 0.954500) > 6 * sqrt(0.0434 / (double)n)) {
        print_error("normal %s (%g, %g): mean %.6g sd %.6g P(|z|<1) %.4f P(|z|<2) %.4f\n",
                    tsr_dtype_name(float_dtypes[d]), mu, sigma, mean, sd, f1, f2);
        fail();
      }
      free(x);
    }
  /* stddev 0 gives the mean exactly. */
  int64_t m = 13;
  double *x = generate(tsr_random_normal, 1, &m, TSR_F64, dev, 1, 2.5, 0.0);
  for (int64_t i = 0; i < m; i++)
    assert_true(x[i] == 2.5);
  free(x);
}

/* The same seed gives the same values on every device (uniform: bit-identical). */
static void test_same_on_cpu(void **state) {
  (void)state;
  if (ct_is_cpu(dev)) skip();
  int64_t n = 1021;
  for (int d = 0; d < 2; d++) {
    double *x = generate(tsr_random_uniform, 1, &n, float_dtypes[d], dev, 5, -2, 2);
    double *y = generate(tsr_random_uniform, 1, &n, float_dtypes[d], TSR_CPU, 5, -2, 2);
    ct_assert_close(x, y, n, 0, 0, "uniform on the device vs the CPU");
    free(x);
    free(y);
    x = generate(tsr_random_normal, 1, &n, float_dtypes[d], dev, 5, 1, 3);
    y = generate(tsr_random_normal, 1, &n, float_dtypes[d], TSR_CPU, 5, 1, 3);
    /* log/sin/cos may differ in the last bits between devices. */
    ct_assert_close(x, y, n, 4 * ct_eps(float_dtypes[d]), 1e-9, "normal on the device vs the CPU");
    free(x);
    free(y);
  }
}

/* Integer dtypes, empty/inverted ranges, non-finite parameters, negative stddev. */
static void test_bad_arguments(void **state) {
  (void)state;
  int64_t n = 10;
  tsr_array *a = NULL;
  for (int d = 2; d < 4; d++) {
    TSR_ASSERT_STATUS(tsr_random_uniform(1, &n, (tsr_dtype)d, dev, 1, 0, 1, &a), TSR_ERR_DTYPE,
                      NULL);
    TSR_ASSERT_STATUS(tsr_random_normal(1, &n, (tsr_dtype)d, dev, 1, 0, 1, &a), TSR_ERR_DTYPE,
                      NULL);
  }
  TSR_ASSERT_STATUS(tsr_random_uniform(1, &n, TSR_F32, dev, 1, 1, 1, &a), TSR_ERR_INVALID_ARGUMENT,
                    NULL);
  TSR_ASSERT_STATUS(tsr_random_uniform(1, &n, TSR_F32, dev, 1, 2, 1, &a), TSR_ERR_INVALID_ARGUMENT,
                    NULL);
  TSR_ASSERT_STATUS(tsr_random_uniform(1, &n, TSR_F64, dev, 1, NAN, 1, &a),
                    TSR_ERR_INVALID_ARGUMENT, NULL);
  TSR_ASSERT_STATUS(tsr_random_uniform(1, &n, TSR_F64, dev, 1, 0, INFINITY, &a),
                    TSR_ERR_INVALID_ARGUMENT, NULL);
  TSR_ASSERT_STATUS(tsr_random_uniform(1, &n, TSR_F64, dev, 1, -1e308, 1e308, &a),
                    TSR_ERR_INVALID_ARGUMENT, "tsr_random_uniform: the range high - low");
  TSR_ASSERT_STATUS(tsr_random_uniform(1, &n, TSR_F32, dev, 1, 0, 1e39, &a),
                    TSR_ERR_INVALID_ARGUMENT, "outside the range of f32");
  TSR_ASSERT_STATUS(tsr_random_normal(1, &n, TSR_F64, dev, 1, 0, -1, &a), TSR_ERR_INVALID_ARGUMENT,
                    NULL);
  TSR_ASSERT_STATUS(tsr_random_normal(1, &n, TSR_F64, dev, 1, 0, NAN, &a), TSR_ERR_INVALID_ARGUMENT,
                    NULL);
  TSR_ASSERT_STATUS(tsr_random_normal(1, &n, TSR_F32, dev, 1, 0, INFINITY, &a),
                    TSR_ERR_INVALID_ARGUMENT, NULL);
  assert_null(a);
  /* Empty arrays are fine. */
  int64_t zero = 0;
  TSR_ASSERT_OK(tsr_random_normal(1, &zero, TSR_F32, dev, 1, 0, 1, &a));
  ct_assert_shape(a, TSR_F32, 1, &zero);
  tsr_array_release(a);
}

int main(void) {
  dev = tsr_test_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reproducible),
      cmocka_unit_test(test_seeds_differ),
      cmocka_unit_test(test_uniform_statistics),
      cmocka_unit_test(test_uniform_f32_never_high),
      cmocka_unit_test(test_uniform_f64_never_high),
      cmocka_unit_test(test_normal_statistics),
      cmocka_unit_test(test_same_on_cpu),
      cmocka_unit_test(test_bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
