/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sizes past the 32-bit and grid limits on the GPU (label gpu_large): an elementwise add and a
 * reduction over more than 2^31 elements (64-bit indexing in the grid-stride loops and the
 * reduction split), and a GEMM with more than 65535 x 128 rows (more row tiles than
 * gridDim.y allows: the kernel loops over row tiles). Needs a GPU of 40 GiB with 26 GiB free
 * (three 8 GiB arrays at once, and room for the context): skipped (77) without a GPU, with less
 * memory, or when an allocation of 26 GiB fails because other processes hold the memory (CTest
 * runs it alone, RUN_SERIAL, but other users of the GPU are beyond its reach). Checked against
 * exact or float64 references computed here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tsr_test.h"

static tsr_device gpu;

/* c = a + b over 2^31 + 4099 f32 elements, a random, b = 2: the first and last 4096 elements
   read back and compared exactly (a + 2 is exact in f32 for |a| < 1). */
static void test_add_past_2g(void **state) {
  (void)state;
  int64_t n = ((int64_t)1 << 31) + 4099;
  tsr_array *a = NULL, *b = NULL, *c = NULL;
  TSR_ASSERT_OK(tsr_random_uniform(1, &n, TSR_F32, gpu, 77, -1.0, 1.0, &a));
  TSR_ASSERT_OK(tsr_full(1, &n, TSR_F32, gpu, 2.0, &b));
  TSR_ASSERT_OK(tsr_add(a, b, &c));
  tsr_array_release(b);
  const int64_t w = 4096, starts[2] = {0, n - w};
  float *x = malloc(w * sizeof *x), *y = malloc(w * sizeof *y);
  assert_non_null(x);
  assert_non_null(y);
  for (int s = 0; s < 2; s++) {
    tsr_array *av = NULL, *cv = NULL;
    TSR_ASSERT_OK(tsr_slice(a, 0, starts[s], starts[s] + w, 1, &av));
    TSR_ASSERT_OK(tsr_slice(c, 0, starts[s], starts[s] + w, 1, &cv));
    TSR_ASSERT_OK(tsr_array_read(av, x, (size_t)w * sizeof *x));
    TSR_ASSERT_OK(tsr_array_read(cv, y, (size_t)w * sizeof *y));
    for (int64_t i = 0; i < w; i++)
      assert_true(y[i] == x[i] + 2.0f);
    tsr_array_release(av);
    tsr_array_release(cv);
  }
  free(x);
  free(y);
  tsr_array_release(a);
  tsr_array_release(c);
}

/* The sum of 2^31 + 4099 f64 twos is exact in any order (integers below 2^53). */
static void test_sum_past_2g(void **state) {
  (void)state;
  int64_t n = ((int64_t)1 << 31) + 4099;
  tsr_array *a = NULL, *s = NULL;
  TSR_ASSERT_OK(tsr_full(1, &n, TSR_F64, gpu, 2.0, &a));
  TSR_ASSERT_OK(tsr_sum(a, TSR_AXIS_ALL, 0, &s));
  double got = 0;
  TSR_ASSERT_OK(tsr_array_read(s, &got, sizeof got));
  assert_true(got == 2.0 * (double)n);
  tsr_array_release(a);
  tsr_array_release(s);
}

/* C = A B with m = 65535 * 128 + 77 rows, k = 16, n = 24, f32, against float64 on the first
   and last 2048 rows. */
static void test_gemm_many_rows(void **state) {
  (void)state;
  const int64_t m = 65535LL * 128 + 77, k = 16, n = 24, w = 2048;
  int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
  tsr_array *a = NULL, *c = NULL;
  double *hb = NULL;
  TSR_ASSERT_OK(tsr_random_uniform(2, sa, TSR_F32, gpu, 78, -1.0, 1.0, &a));
  tsr_array *b = tsr_test_random_array(2, sb, TSR_F32, gpu, 79, &hb);
  TSR_ASSERT_OK(tsr_empty(2, sc, TSR_F32, gpu, &c));
  TSR_ASSERT_OK(tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, c, TSR_GEMM_NATIVE));
  const int64_t starts[2] = {0, m - w};
  for (int s = 0; s < 2; s++) {
    tsr_array *av = NULL, *cv = NULL;
    TSR_ASSERT_OK(tsr_slice(a, 0, starts[s], starts[s] + w, 1, &av));
    TSR_ASSERT_OK(tsr_slice(c, 0, starts[s], starts[s] + w, 1, &cv));
    double *ha = tsr_test_read_f64(av), *hc = tsr_test_read_f64(cv);
    double *ref = tsr_test_ref_gemm(0, 0, w, n, k, 1.0, ha, hb, 0.0, NULL);
    double err = tsr_test_rel_error(hc, ref, (size_t)(w * n));
    assert_true(err <= tsr_test_tol(TSR_F32, k));
    free(ha);
    free(hc);
    free(ref);
    tsr_array_release(av);
    tsr_array_release(cv);
  }
  free(hb);
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
}

int main(void) {
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
  tsr_device_props props;
  if (tsr_device_get_props(gpu, &props) != TSR_OK) return 1;
  if (props.total_memory < ((size_t)40 << 30)) {
    printf("skipped: %s has %zu bytes of memory, the large tests need 40 GiB\n", props.name,
           props.total_memory);
    return TSR_TEST_SKIP;
  }
  /* Free memory: the public API reports the total only, so ask for the largest moment's need
     (test_add_past_2g: three arrays of 8 GiB) plus 2 GiB, and give it back. */
  int64_t probe_elems = ((int64_t)26 << 30) / 4;
  tsr_array *probe = NULL;
  st = tsr_empty(1, &probe_elems, TSR_F32, gpu, &probe);
  if (st == TSR_ERR_OUT_OF_MEMORY) {
    printf("skipped: %s has less than 26 GiB free (another process holds the rest): %s\n",
           props.name, tsr_last_error());
    return TSR_TEST_SKIP;
  }
  if (st != TSR_OK) {
    fprintf(stderr, "tsr_empty (26 GiB probe): %s\n", tsr_last_error());
    return 1;
  }
  tsr_array_release(probe);
  if (tsr_device_trim(gpu) != TSR_OK) {
    fprintf(stderr, "tsr_device_trim: %s\n", tsr_last_error());
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_add_past_2g),
      cmocka_unit_test(test_sum_past_2g),
      cmocka_unit_test(test_gemm_many_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
