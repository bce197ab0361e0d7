/* SPDX-License-Identifier: BSD-3-Clause */
/* Devices: counting, parsing, naming, properties, the default device. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "core_util.h"

static tsr_device dev;

static void test_count(void **state) {
  (void)state;
  int n = -1;
  TSR_ASSERT_OK(tsr_device_count(TSR_DEVICE_CPU, &n));
  assert_int_equal(n, 1);
  for (int kind = TSR_DEVICE_CUDA; kind <= TSR_DEVICE_HIP; kind++) {
    n = -1;
    TSR_ASSERT_OK(tsr_device_count((tsr_device_kind)kind, &n));
    assert_true(n >= 0);
  }
  /* The device under test exists, so its kind counts it. */
  TSR_ASSERT_OK(tsr_device_count(dev.kind, &n));
  assert_true(dev.index < n);
}

static void test_parse_and_string(void **state) {
  (void)state;
  tsr_device d = {TSR_DEVICE_HIP, 5};
  TSR_ASSERT_OK(tsr_device_parse("cpu", &d));
  assert_int_equal(d.kind, TSR_DEVICE_CPU);
  assert_int_equal(d.index, 0);
  assert_true(tsr_device_equal(d, TSR_CPU));

  char buf[32];
  TSR_ASSERT_OK(tsr_device_string(TSR_CPU, buf, sizeof buf));
  assert_string_equal(buf, "cpu");
  /* Exactly enough room: three characters and the NUL. */
  memset(buf, 'x', sizeof buf);
  TSR_ASSERT_OK(tsr_device_string(TSR_CPU, buf, 4));
  assert_string_equal(buf, "cpu");

  /* The string of the device under test parses back to it. */
  TSR_ASSERT_OK(tsr_device_string(dev, buf, sizeof buf));
  TSR_ASSERT_OK(tsr_device_parse(buf, &d));
  assert_true(tsr_device_equal(d, dev));

  /* auto: the first GPU of the build, else the CPU; it always exists. */
  TSR_ASSERT_OK(tsr_device_parse("auto", &d));
  int n = 0;
  TSR_ASSERT_OK(tsr_device_count(d.kind, &n));
  assert_true(d.index >= 0 && d.index < n);
}

static void test_equal(void **state) {
  (void)state;
  tsr_device a = {TSR_DEVICE_CUDA, 0}, b = {TSR_DEVICE_CUDA, 1}, c = {TSR_DEVICE_HIP, 0};
  assert_true(tsr_device_equal(a, a));
  assert_false(tsr_device_equal(a, b));
  assert_false(tsr_device_equal(a, c));
  assert_false(tsr_device_equal(TSR_CPU, a));
}

static void test_props(void **state) {
  (void)state;
  tsr_device_props p;
  memset(&p, 0x7f, sizeof p);
  TSR_ASSERT_OK(tsr_device_get_props(dev, &p));
  assert_true(strlen(p.name) > 0 && strlen(p.name) < sizeof p.name);
  assert_true(strlen(p.arch) < sizeof p.arch);
  assert_true(p.total_memory > 0);
  assert_true(p.multiprocessors >= 1);
  if (ct_is_cpu(dev))
    assert_int_equal(p.warp_size, 1);
  else
    assert_true(p.warp_size == 32 || p.warp_size == 64);
  assert_true(p.concurrent_managed == 0 || p.concurrent_managed == 1);
}

static void test_synchronize_and_trim(void **state) {
  (void)state;
  int64_t shape[1] = {1000};
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_full(1, shape, TSR_F32, dev, 2.5, &a));
  TSR_ASSERT_OK(tsr_device_synchronize(dev));
  TSR_ASSERT_OK(tsr_array_release(a));
  TSR_ASSERT_OK(tsr_device_trim(dev));
  /* Allocation still works after a trim. */
  TSR_ASSERT_OK(tsr_full(1, shape, TSR_F32, dev, 1.5, &a));
  double *x = tsr_test_read_f64(a);
  assert_true(x[0] == 1.5 && x[999] == 1.5);
  free(x);
  TSR_ASSERT_OK(tsr_array_release(a));
}

/* TSR_DEVICE picks the default device; unset means the first GPU, else the CPU. */
static void test_default_from_env(void **state) {
  (void)state;
  const char *old = getenv("TSR_DEVICE");
  char *saved = old ? strdup(old) : NULL;
  tsr_device d;

  assert_int_equal(setenv("TSR_DEVICE", "cpu", 1), 0);
  TSR_ASSERT_OK(tsr_device_default(&d));
  assert_true(tsr_device_equal(d, TSR_CPU));

  tsr_device via_auto;
  TSR_ASSERT_OK(tsr_device_parse("auto", &via_auto));
  assert_int_equal(setenv("TSR_DEVICE", "auto", 1), 0);
  TSR_ASSERT_OK(tsr_device_default(&d));
  assert_true(tsr_device_equal(d, via_auto));
  assert_int_equal(unsetenv("TSR_DEVICE"), 0);
  TSR_ASSERT_OK(tsr_device_default(&d));
  assert_true(tsr_device_equal(d, via_auto));

  /* The device under test by name. */
  char buf[32];
  TSR_ASSERT_OK(tsr_device_string(dev, buf, sizeof buf));
  assert_int_equal(setenv("TSR_DEVICE", buf, 1), 0);
  TSR_ASSERT_OK(tsr_device_default(&d));
  assert_true(tsr_device_equal(d, dev));

  if (saved) {
    setenv("TSR_DEVICE", saved, 1);
    free(saved);
  } else {
    unsetenv("TSR_DEVICE");
  }
}

int main(void) {
  dev = tsr_test_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_count),
      cmocka_unit_test(test_parse_and_string),
      cmocka_unit_test(test_equal),
      cmocka_unit_test(test_props),
      cmocka_unit_test(test_synchronize_and_trim),
      cmocka_unit_test(test_default_from_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
