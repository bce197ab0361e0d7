/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A GPU whose context is lost (an illegal address in a kernel: a sticky error) must fail
 * every later call with a message that names the first error, not blame whatever call comes
 * next, and the CPU must go on working. A real GPU cannot be made to fault through the public
 * API, so this runs only under the host emulator's fault injection (tests/gpu_emu/run.sh sets
 * TSR_EMU_FAULT_AFTER: the N-th synchronizing runtime call reports cudaErrorIllegalAddress);
 * elsewhere it reports skipped (77).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_test.h"

static tsr_device gpu;

static void test_sticky_error(void **state) {
  (void)state;
  int64_t n = 1000;
  tsr_array *a = NULL, *b = NULL;
  TSR_ASSERT_OK(tsr_full(1, &n, TSR_F64, gpu, 1.5, &a));
  double *host = malloc((size_t)n * sizeof *host);
  assert_non_null(host);
  /* Work until the injected fault surfaces. */
  tsr_status st = TSR_OK;
  int calls = 0;
  while (st == TSR_OK && calls < 100) {
    tsr_array *c = NULL;
    st = tsr_add(a, a, &c);
    if (st == TSR_OK) st = tsr_array_read(c, host, (size_t)n * sizeof *host);
    tsr_array_release(c);
    calls++;
  }
  assert_int_equal(st, TSR_ERR_GPU);
  char first[512];
  snprintf(first, sizeof first, "%s", tsr_last_error());
  assert_non_null(strstr(first, "unusable"));
  assert_non_null(strstr(first, "cudaErrorIllegalAddress"));
  /* Every later call on the device fails with the same reason, whatever it is. */
  TSR_ASSERT_STATUS(tsr_full(1, &n, TSR_F64, gpu, 2.0, &b), TSR_ERR_GPU, "unusable");
  assert_null(b);
  TSR_ASSERT_STATUS(tsr_device_synchronize(gpu), TSR_ERR_GPU, "cudaErrorIllegalAddress");
  TSR_ASSERT_STATUS(tsr_array_read(a, host, (size_t)n * sizeof *host), TSR_ERR_GPU, "unusable");
  /* The CPU is unaffected. */
  tsr_array *x = NULL, *y = NULL;
  TSR_ASSERT_OK(tsr_full(1, &n, TSR_F64, TSR_CPU, 1.5, &x));
  TSR_ASSERT_OK(tsr_add(x, x, &y));
  TSR_ASSERT_OK(tsr_array_read(y, host, (size_t)n * sizeof *host));
  for (int64_t i = 0; i < n; i++)
    assert_true(host[i] == 3.0);
  free(host);
  tsr_array_release(a);
  tsr_array_release(x);
  tsr_array_release(y);
}

int main(void) {
  if (!getenv("TSR_EMU_FAULT_AFTER")) {
    printf("skipped: needs the GPU emulator's fault injection (tests/gpu_emu/run.sh)\n");
    return TSR_TEST_SKIP;
  }
  tsr_status st = tsr_device_parse(TSR_HAVE_CUDA ? "cuda" : "hip", &gpu);
  if (st != TSR_OK) {
    printf("skipped: no GPU: %s\n", tsr_last_error());
    return TSR_TEST_SKIP;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_sticky_error)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
