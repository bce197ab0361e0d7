/* SPDX-License-Identifier: BSD-3-Clause */
#include "tsr_test.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The function an asserted expression calls: its leading identifier when a "(" follows it
   ("(tsr_matmul(a, b, &c))" -> "tsr_matmul"), else "" (a variable, a function pointer). */
static void called_name(const char *expr, char *name, size_t size) {
  while (*expr == '(' || isspace((unsigned char)*expr)) /* wrapping macros add parentheses */
    expr++;
  size_t n = 0;
  while (expr[n] == '_' || isalnum((unsigned char)expr[n]))
    n++;
  const char *p = expr + n;
  while (isspace((unsigned char)*p))
    p++;
  if (*p != '(' || n >= size) n = 0;
  memcpy(name, expr, n);
  name[n] = '\0';
}

void tsr_test_assert_error_names(const char *called, const char *expr) {
  const char *msg = tsr_last_error();
  /* The one rule for errors: never an internal function's name... */
  if (strncmp(msg, "tsr__", 5) == 0) {
    print_error("%s: message \"%s\" names an internal function\n", expr, msg);
    fail();
  }
  /* ...but the public function the user called, first. */
  size_t len = strlen(called);
  if (strncmp(called, "tsr_", 4) == 0 && strncmp(called, "tsr_test_", 9) != 0 &&
      (strncmp(msg, called, len) != 0 || strncmp(msg + len, ": ", 2) != 0)) {
    print_error("%s: message \"%s\" does not begin with \"%s: \"\n", expr, msg, called);
    fail();
  }
}

void tsr_test_assert_status(tsr_status got, tsr_status want, const char *needle, const char *expr) {
  if (got != want)
    print_error("%s returned %s, expected %s (last error: %s)\n", expr, tsr_status_name(got),
                tsr_status_name(want), tsr_last_error());
  assert_int_equal(got, want);
  if (want != TSR_OK) {
    const char *msg = tsr_last_error();
    if (msg[0] == '\0') print_error("%s: empty error message\n", expr);
    assert_true(msg[0] != '\0');
    if (needle && !strstr(msg, needle)) {
      print_error("%s: message \"%s\" lacks \"%s\"\n", expr, msg, needle);
      fail();
    }
    char called[64];
    called_name(expr, called, sizeof called);
    tsr_test_assert_error_names(called, expr);
  }
}

tsr_device tsr_test_device(void) {
  const char *name = getenv("TSR_TEST_DEVICE");
  if (!name || !*name) name = "cpu";
  tsr_device dev;
  tsr_status st = tsr_device_parse(name, &dev);
  if (st == TSR_ERR_NO_DEVICE) {
    printf("skipped: no %s device: %s\n", name, tsr_last_error());
    exit(TSR_TEST_SKIP);
  }
  if (st != TSR_OK) {
    fprintf(stderr, "bad TSR_TEST_DEVICE=%s: %s\n", name, tsr_last_error());
    exit(1);
  }
  return dev;
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void tsr_test_fill_random(double *x, size_t n, uint64_t seed) {
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
  for (size_t i = 0; i < n; i++)
    x[i] = (double)(splitmix64(&s) >> 11) * 0x1.0p-52 - 1.0;
}

double tsr_test_rel_error(const double *x, const double *ref, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    double d = x[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  if (isnan(num)) return INFINITY;
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

double tsr_test_tol(tsr_dtype dtype, int64_t k) {
  double eps = (dtype == TSR_F32) ? 1.2e-7 : (dtype == TSR_F64 ? 2.3e-16 : 0.0);
  if (k < 1) k = 1;
  return 10.0 * eps * sqrt((double)k) + ((dtype == TSR_F32 || dtype == TSR_F64) ? 4 * eps : 0);
}

int64_t tsr_test_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++)
    n *= shape[i];
  return n;
}

tsr_array *tsr_test_array_from_f64(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device dev,
                                   const double *data) {
  int64_t n = tsr_test_numel(ndim, shape);
  size_t es = (dtype == TSR_F32 || dtype == TSR_I32) ? 4 : 8;
  void *buf = malloc((size_t)(n > 0 ? n : 1) * es);
  assert_non_null(buf);
  for (int64_t i = 0; i < n; i++) {
    switch (dtype) {
    case TSR_F32: ((float *)buf)[i] = (float)data[i]; break;
    case TSR_F64: ((double *)buf)[i] = data[i]; break;
    case TSR_I32: ((int32_t *)buf)[i] = (int32_t)data[i]; break;
    case TSR_I64: ((int64_t *)buf)[i] = (int64_t)data[i]; break;
    }
  }
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_from_host(ndim, shape, dtype, dev, buf, &a));
  free(buf);
  return a;
}

tsr_array *tsr_test_random_array(int ndim, const int64_t *shape, tsr_dtype dtype, tsr_device dev,
                                 uint64_t seed, double **host) {
  int64_t n = tsr_test_numel(ndim, shape);
  double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  assert_non_null(x);
  tsr_test_fill_random(x, (size_t)n, seed);
  for (int64_t i = 0; i < n; i++) {
    if (dtype == TSR_F32) x[i] = (double)(float)x[i];
    if (dtype == TSR_I32 || dtype == TSR_I64) x[i] = floor(x[i] * 100.0);
  }
  tsr_array *a = tsr_test_array_from_f64(ndim, shape, dtype, dev, x);
  if (host)
    *host = x;
  else
    free(x);
  return a;
}

double *tsr_test_read_f64(const tsr_array *a) {
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(a, &info));
  size_t es = (info.dtype == TSR_F32 || info.dtype == TSR_I32) ? 4 : 8;
  size_t n = (size_t)info.size;
  void *buf = malloc((n ? n : 1) * es);
  double *out = malloc((n ? n : 1) * sizeof(double));
  assert_non_null(buf);
  assert_non_null(out);
  TSR_ASSERT_OK(tsr_array_read(a, buf, n * es));
  for (size_t i = 0; i < n; i++) {
    switch (info.dtype) {
    case TSR_F32: out[i] = ((float *)buf)[i]; break;
    case TSR_F64: out[i] = ((double *)buf)[i]; break;
    case TSR_I32: out[i] = ((int32_t *)buf)[i]; break;
    case TSR_I64: out[i] = (double)((int64_t *)buf)[i]; break;
    }
  }
  free(buf);
  return out;
}

void tsr_test_ref_gemm_into(int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                            const double *a, const double *b, double beta, const double *c0,
                            double *c) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      long double acc = 0;
      for (int64_t p = 0; p < k; p++) {
        double x = ta ? a[p * m + i] : a[i * k + p];
        double y = tb ? b[j * k + p] : b[p * n + j];
        acc += (long double)x * y;
      }
      c[i * n + j] = alpha * (double)acc + (beta == 0.0 ? 0.0 : beta * c0[i * n + j]);
    }
}

double *tsr_test_ref_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                          const double *a, const double *b, double beta, const double *c0) {
  double *c = malloc((size_t)(m * n > 0 ? m * n : 1) * sizeof *c);
  assert_non_null(c);
  tsr_test_ref_gemm_into(ta, tb, m, n, k, alpha, a, b, beta, c0, c);
  return c;
}
