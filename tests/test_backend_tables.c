/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every backend table compiled into this build (tsr__omp_backend; tsr__gpu_backend in CUDA and
 * HIP builds) is complete: each entry of struct tsr__backend_ops (src/core/internal.h) is
 * classified below as required (never NULL; the core calls it without a check) or optional
 * (NULL: the core's fallback, or nothing to do), and every required entry is present. A new
 * entry of the struct fails this file's build until it is classified (the size check), and a
 * classified name that is not an entry fails it too. The device kinds' rows (TSR_DEVICE_KIND_MAP)
 * give the names, the parser and its message of release 0.1.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "tsr_test.h"

/* Required: the core calls these on every backend without looking. */
#define TSR_TEST_REQUIRED(X)                                                                       \
  X(name)                                                                                          \
  X(device_count)                                                                                  \
  X(device_props)                                                                                  \
  X(alloc)                                                                                         \
  X(free)                                                                                          \
  X(memcpy_h2d)                                                                                    \
  X(memcpy_d2h)                                                                                    \
  X(memcpy_d2d)                                                                                    \
  X(synchronize)                                                                                   \
  X(fill)                                                                                          \
  X(copy)                                                                                          \
  X(binary)                                                                                        \
  X(unary)                                                                                         \
  X(reduce)                                                                                        \
  X(gemm)

/* Optional: NULL takes the core's fallback (arange, rng: on the host and copied; the
   block-cyclic kernels: staged through the host and the CPU backend's; copy_rects: the
   rectangles copied on the host, right for host memory) or means nothing to do
   (unavailable_reason, trim, gemm_tiny, the asynchronous group on devices whose work is complete
   when an op returns). */
#define TSR_TEST_OPTIONAL(X)                                                                       \
  X(unavailable_reason)                                                                            \
  X(trim)                                                                                          \
  X(arange)                                                                                        \
  X(rng)                                                                                           \
  X(gemm_tiny)                                                                                     \
  X(rng_block_cyclic)                                                                              \
  X(matvec_f64)                                                                                    \
  X(copy_rects)                                                                                    \
  TSR_TEST_ASYNC(X)

/* The asynchronous group: a backend provides all of it or none. */
#define TSR_TEST_ASYNC(X)                                                                          \
  X(pinned_alloc)                                                                                  \
  X(pinned_free)                                                                                   \
  X(stream_create)                                                                                 \
  X(stream_destroy)                                                                                \
  X(event_create)                                                                                  \
  X(event_destroy)                                                                                 \
  X(event_record)                                                                                  \
  X(event_query)                                                                                   \
  X(event_elapsed)                                                                                 \
  X(stream_wait_event)                                                                             \
  X(memcpy_2d_async)

#define TSR_TEST_ONE(entry) +1
/* Every entry is one pointer (a function or the name): a new entry changes the size. */
_Static_assert(sizeof(struct tsr__backend_ops) ==
                   (0 TSR_TEST_REQUIRED(TSR_TEST_ONE) TSR_TEST_OPTIONAL(TSR_TEST_ONE)) *
                       sizeof(void *),
               "struct tsr__backend_ops has an entry that tests/test_backend_tables.c does not "
               "classify as required or optional");

typedef struct table {
  const char *what;
  const struct tsr__backend_ops *ops;
} table;

static const table tables[] = {
    {"tsr__omp_backend", &tsr__omp_backend},
#if TSR_HAVE_CUDA || TSR_HAVE_HIP
    {"tsr__gpu_backend", &tsr__gpu_backend},
#endif
};

/* Each classified entry is a distinct entry: together they cover the struct exactly. */
static void test_classification_covers_struct(void **state) {
  (void)state;
  enum { N = sizeof(struct tsr__backend_ops) / sizeof(void *) };
  int seen[N] = {0};
#define MARK(entry)                                                                                \
  do {                                                                                             \
    size_t at = offsetof(struct tsr__backend_ops, entry);                                          \
    assert_int_equal(at % sizeof(void *), 0);                                                      \
    assert_true(at / sizeof(void *) < N);                                                          \
    seen[at / sizeof(void *)]++;                                                                   \
  } while (0);
  TSR_TEST_REQUIRED(MARK)
  TSR_TEST_OPTIONAL(MARK)
#undef MARK
  for (int i = 0; i < N; i++) {
    if (seen[i] != 1)
      print_error("entry %d of struct tsr__backend_ops is classified %d times\n", i, seen[i]);
    assert_int_equal(seen[i], 1);
  }
}

static void test_required_present(void **state) {
  (void)state;
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
    const struct tsr__backend_ops *ops = tables[t].ops;
#define CHECK(entry)                                                                               \
  if (ops->entry == NULL)                                                                          \
    print_error("%s: the required entry %s is NULL\n", tables[t].what, #entry);                    \
  assert_non_null(ops->entry);
    TSR_TEST_REQUIRED(CHECK)
#undef CHECK
  }
}

/* Optional entries: each present or not; the asynchronous group all or none. */
static void test_optional_consistent(void **state) {
  (void)state;
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
    const struct tsr__backend_ops *ops = tables[t].ops;
    int present = 0, total = 0;
#define COUNT(entry)                                                                               \
  present += ops->entry != NULL;                                                                   \
  total++;
    TSR_TEST_ASYNC(COUNT)
#undef COUNT
    if (present != 0 && present != total)
      print_error("%s: %d of the %d asynchronous entries\n", tables[t].what, present, total);
    assert_true(present == 0 || present == total);
    /* A device with its own memory (the asynchronous group) copies rectangles itself: the
       core's fallback runs them on the host. */
    if (present == total && ops->copy_rects == NULL)
      print_error("%s: asynchronous entries without copy_rects\n", tables[t].what);
    assert_true(present == 0 || ops->copy_rects != NULL);
#define SHOW(entry)                                                                                \
  printf("%s: optional %s %s\n", tables[t].what, #entry,                                           \
         ops->entry ? "present" : "NULL (fallback)");
    TSR_TEST_OPTIONAL(SHOW)
#undef SHOW
  }
}

/* Each table's name is a device kind's, and the registry maps that kind to the table. */
static void test_tables_registered(void **state) {
  (void)state;
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
    const struct tsr__backend_ops *ops = tables[t].ops;
    bool named = false;
#define KIND(kind, ENUM, value, label, is_gpu)                                                     \
  if (strcmp(ops->name, #kind) == 0) {                                                             \
    named = true;                                                                                  \
    int n = 0;                                                                                     \
    TSR_ASSERT_OK(tsr_device_count(ENUM, &n));                                                     \
    if (n > 0) {                                                                                   \
      const struct tsr__backend_ops *got = NULL;                                                   \
      TSR_ASSERT_OK(tsr__backend_for((tsr_device){ENUM, 0}, &got));                                \
      assert_ptr_equal(got, ops);                                                                  \
    }                                                                                              \
  }
    TSR_DEVICE_KIND_MAP(KIND)
#undef KIND
    if (!named) print_error("%s: name \"%s\" is no device kind's\n", tables[t].what, ops->name);
    assert_true(named);
  }
  const struct tsr__backend_ops *cpu = NULL;
  TSR_ASSERT_OK(tsr__backend_for(TSR_CPU, &cpu));
  assert_ptr_equal(cpu, &tsr__omp_backend);
}

/* The device kinds' rows (TSR_DEVICE_KIND_MAP): values, names, the parser and its message. */
static void test_device_kind_rows(void **state) {
  (void)state;
  int rows = 0;
  char buf[32];
#define KIND(kname, ENUM, value, label, is_gpu)                                                    \
  do {                                                                                             \
    assert_int_equal((int)ENUM, value);                                                            \
    assert_int_equal(value, rows);                                                                 \
    TSR_ASSERT_OK(tsr_device_string((tsr_device){ENUM, 0}, buf, sizeof buf));                      \
    assert_string_equal(buf, is_gpu ? #kname ":0" : #kname);                                       \
    TSR_ASSERT_OK(tsr_device_string((tsr_device){ENUM, 3}, buf, sizeof buf));                      \
    assert_string_equal(buf, #kname ":3");                                                         \
    int n = 0;                                                                                     \
    TSR_ASSERT_OK(tsr_device_count(ENUM, &n));                                                     \
    tsr_device d = {TSR_DEVICE_CPU, -1};                                                           \
    tsr_status st = tsr_device_parse(#kname, &d);                                                  \
    if (n > 0) {                                                                                   \
      TSR_ASSERT_OK(st);                                                                           \
      assert_int_equal(d.kind, ENUM);                                                              \
      assert_int_equal(d.index, 0);                                                                \
    } else {                                                                                       \
      TSR_ASSERT_STATUS(st, TSR_ERR_NO_DEVICE, "no " label " device 0");                           \
    }                                                                                              \
    rows++;                                                                                        \
  } while (0);
  TSR_DEVICE_KIND_MAP(KIND)
#undef KIND
  assert_int_equal(rows, 3);
  assert_int_equal(TSR_DEVICE_CPU, 0);
  assert_int_equal(TSR_DEVICE_CUDA, 1);
  assert_int_equal(TSR_DEVICE_HIP, 2);
  tsr_device d;
  TSR_ASSERT_STATUS(tsr_device_parse("xpu", &d), TSR_ERR_INVALID_ARGUMENT,
                    "tsr_device_parse: \"xpu\" is not a device (expected auto, cpu, cuda, cuda:N, "
                    "hip or hip:N)");
  assert_string_equal(tsr_last_error(), "tsr_device_parse: \"xpu\" is not a device (expected "
                                        "auto, cpu, cuda, cuda:N, hip or hip:N)");
  TSR_ASSERT_STATUS(tsr_device_string((tsr_device){(tsr_device_kind)3, 0}, buf, sizeof buf),
                    TSR_ERR_INVALID_ARGUMENT, "unknown device kind 3");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_classification_covers_struct),
      cmocka_unit_test(test_required_present),
      cmocka_unit_test(test_optional_consistent),
      cmocka_unit_test(test_tables_registered),
      cmocka_unit_test(test_device_kind_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
