/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A GPU build on a machine without a GPU (or without its driver): the library loads, reports
 * 0 GPU devices without failing, uses the CPU by default, and every explicit request for the
 * GPU fails with TSR_ERR_NO_DEVICE and the runtime's reason. Labelled cpu: it passes only
 * when it really checked that path, and is skipped (77) on a machine that has a GPU.
 */
/* setenv/unsetenv */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_test.h"

static const tsr_device_kind gpu_kind = TSR_HAVE_CUDA ? TSR_DEVICE_CUDA : TSR_DEVICE_HIP;
static const char *gpu_name = TSR_HAVE_CUDA ? "cuda" : "hip";
/* Part of the backend's reason in every no-device message ("the CUDA runtime found no
   usable device: <the runtime's own error>"). */
#define REASON "runtime"

static void test_count_is_zero(void **state) {
  (void)state;
  int n = -1;
  TSR_ASSERT_OK(tsr_device_count(gpu_kind, &n));
  assert_int_equal(n, 0);
}

static void test_parse_fails_with_reason(void **state) {
  (void)state;
  tsr_device dev = {TSR_DEVICE_CPU, 0};
  char text[16];
  TSR_ASSERT_STATUS(tsr_device_parse(gpu_name, &dev), TSR_ERR_NO_DEVICE, REASON);
  snprintf(text, sizeof text, "%s:1", gpu_name);
  TSR_ASSERT_STATUS(tsr_device_parse(text, &dev), TSR_ERR_NO_DEVICE, NULL);
  /* "auto" falls back to the CPU. */
  TSR_ASSERT_OK(tsr_device_parse("auto", &dev));
  assert_int_equal(dev.kind, TSR_DEVICE_CPU);
}

static void test_default_device(void **state) {
  (void)state;
  tsr_device dev = {gpu_kind, 3};
  unsetenv("TSR_DEVICE");
  TSR_ASSERT_OK(tsr_device_default(&dev));
  assert_int_equal(dev.kind, TSR_DEVICE_CPU);
  setenv("TSR_DEVICE", gpu_name, 1);
  TSR_ASSERT_STATUS(tsr_device_default(&dev), TSR_ERR_NO_DEVICE, REASON);
  unsetenv("TSR_DEVICE");
}

static void test_explicit_requests_fail(void **state) {
  (void)state;
  tsr_device gpu = {gpu_kind, 0};
  int64_t shape[2] = {4, 5};
  tsr_array *a = NULL;
  TSR_ASSERT_STATUS(tsr_empty(2, shape, TSR_F32, gpu, &a), TSR_ERR_NO_DEVICE, REASON);
  assert_null(a);
  TSR_ASSERT_STATUS(tsr_random_uniform(2, shape, TSR_F64, gpu, 1, 0.0, 1.0, &a), TSR_ERR_NO_DEVICE,
                    REASON);
  assert_null(a);
  tsr_device_props props;
  TSR_ASSERT_STATUS(tsr_device_get_props(gpu, &props), TSR_ERR_NO_DEVICE, REASON);
  TSR_ASSERT_STATUS(tsr_device_synchronize(gpu), TSR_ERR_NO_DEVICE, REASON);
  TSR_ASSERT_STATUS(tsr_device_trim(gpu), TSR_ERR_NO_DEVICE, REASON);

  /* A CPU array cannot be moved there, and stays intact. */
  double host[20], back[20];
  tsr_test_fill_random(host, 20, 3);
  tsr_array *c = NULL, *g = NULL;
  TSR_ASSERT_OK(tsr_from_host(2, shape, TSR_F64, TSR_CPU, host, &c));
  TSR_ASSERT_STATUS(tsr_array_to(c, gpu, &g), TSR_ERR_NO_DEVICE, REASON);
  assert_null(g);
  TSR_ASSERT_OK(tsr_array_read(c, back, sizeof back));
  assert_memory_equal(host, back, sizeof host);
  tsr_array_release(c);
}

int main(void) {
  int n = 0;
  if (tsr_device_count(gpu_kind, &n) != TSR_OK) {
    fprintf(stderr, "tsr_device_count failed: %s\n", tsr_last_error());
    return 1;
  }
  if (n > 0) {
    printf("skipped: this machine has %d %s device(s); the test checks the no-device path\n", n,
           gpu_name);
    return TSR_TEST_SKIP;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_count_is_zero),
      cmocka_unit_test(test_parse_fails_with_reason),
      cmocka_unit_test(test_default_device),
      cmocka_unit_test(test_explicit_requests_fail),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
