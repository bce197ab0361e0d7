/* SPDX-License-Identifier: BSD-3-Clause */
/* Status codes, their names and descriptions, and the thread-local last-error message. */
#include <pthread.h>
#include <string.h>

#include "core_util.h"

static tsr_device dev;

/* Every code of the one X-macro list has its own name and a non-empty description. */
static void test_every_code_named(void **state) {
  (void)state;
  int count = 0;
#define CHECK_CODE(name, value, text)                                                              \
  assert_int_equal((int)name, value);                                                              \
  assert_string_equal(tsr_status_name(name), #name);                                               \
  assert_string_equal(tsr_strerror(name), text);                                                   \
  assert_true(strlen(text) > 0);                                                                   \
  count++;
  TSR_STATUS_LIST(CHECK_CODE)
#undef CHECK_CODE
  assert_int_equal(count, 17);
}

static void test_unknown_code(void **state) {
  (void)state;
  assert_string_equal(tsr_status_name((tsr_status)12345), "TSR_ERR_UNKNOWN");
  assert_string_equal(tsr_status_name((tsr_status)-1), "TSR_ERR_UNKNOWN");
  const char *text = tsr_strerror((tsr_status)12345);
  assert_non_null(text);
  assert_true(strlen(text) > 0);
}

static void test_dtype_names_and_sizes(void **state) {
  (void)state;
  static const char *names[] = {"f32", "f64", "i32", "i64", "c64", "c128"};
  static const size_t sizes[] = {4, 8, 4, 8, 8, 16};
  for (int d = 0; d < TSR_NUM_DTYPES; d++) {
    assert_string_equal(tsr_dtype_name((tsr_dtype)d), names[d]);
    size_t bytes = 0;
    TSR_ASSERT_OK(tsr_dtype_size((tsr_dtype)d, &bytes));
    assert_int_equal(bytes, sizes[d]);
  }
  assert_string_equal(tsr_dtype_name((tsr_dtype)99), "unknown");
  assert_string_equal(tsr_dtype_name((tsr_dtype)-1), "unknown");
}

/* A failing call records "function: values"; tsr_clear_error empties it. */
static void test_last_error_and_clear(void **state) {
  (void)state;
  tsr_clear_error();
  assert_string_equal(tsr_last_error(), "");
  int64_t shape[2] = {3, -4};
  tsr_array *a = NULL;
  TSR_ASSERT_STATUS(tsr_empty(2, shape, TSR_F32, dev, &a), TSR_ERR_INVALID_ARGUMENT, "tsr_empty");
  assert_null(a);
  /* The message names the bad value. */
  assert_non_null(strstr(tsr_last_error(), "-4"));
  tsr_clear_error();
  assert_string_equal(tsr_last_error(), "");
}

/* The most recent failure wins. */
static void test_last_error_overwritten(void **state) {
  (void)state;
  tsr_array *a = NULL;
  TSR_ASSERT_STATUS(tsr_empty(-1, NULL, TSR_F32, dev, &a), TSR_ERR_INVALID_ARGUMENT, "tsr_empty");
  TSR_ASSERT_STATUS(tsr_dtype_size(TSR_F32, NULL), TSR_ERR_NULL_POINTER, "tsr_dtype_size");
  assert_null(strstr(tsr_last_error(), "tsr_empty"));
}

/* Layers on the public API report through the same channel: tsr_set_error formats, prefixes
   the function name and returns the code it was given. */
static void test_set_error(void **state) {
  (void)state;
  tsr_clear_error();
  assert_int_equal(tsr_set_error(TSR_ERR_SHAPE, "my_solver", "n = %d, lda = %d", 7, 3),
                   TSR_ERR_SHAPE);
  assert_string_equal(tsr_last_error(), "my_solver: n = 7, lda = 3");
  assert_int_equal(tsr_set_error(TSR_ERR_INTERNAL, NULL, "%s", "x"), TSR_ERR_INTERNAL);
  assert_string_equal(tsr_last_error(), "tessera: x");
  /* A message longer than the buffer is truncated, not overflowed. */
  char big[2048];
  memset(big, 'y', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  tsr_set_error(TSR_ERR_INVALID_ARGUMENT, "f", "%s", big);
  assert_true(strlen(tsr_last_error()) < sizeof big);
  assert_int_equal(strncmp(tsr_last_error(), "f: yyy", 6), 0);
  tsr_clear_error();
}

struct thread_result {
  char seen_at_start[256];
  char own_message[256];
  tsr_status status;
};

static void *thread_main(void *arg) {
  struct thread_result *r = arg;
  /* A successful call first: GEMM calls are counted, which gives the thread its block of
     per-thread state (and the message in it) before any error. */
  double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {0};
  const int64_t shape[2] = {2, 2}, strides[2] = {2, 1};
  tsr_array *va = NULL, *vb = NULL, *vc = NULL;
  if (tsr_from_host_view(2, shape, strides, TSR_F64, a, &va) != TSR_OK ||
      tsr_from_host_view(2, shape, strides, TSR_F64, b, &vb) != TSR_OK ||
      tsr_from_host_view(2, shape, strides, TSR_F64, c, &vc) != TSR_OK ||
      tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, va, vb, 0.0, vc) != TSR_OK || c[0] != 19.0 ||
      c[3] != 50.0)
    r->status = TSR_ERR_INTERNAL;
  tsr_array_release(va);
  tsr_array_release(vb);
  tsr_array_release(vc);
  strncpy(r->seen_at_start, tsr_last_error(), sizeof r->seen_at_start - 1);
  size_t bytes;
  if (r->status == TSR_OK) r->status = tsr_dtype_size((tsr_dtype)77, &bytes);
  strncpy(r->own_message, tsr_last_error(), sizeof r->own_message - 1);
  return NULL;
}

/* The message is per thread: a new thread sees none, and its failure does not touch ours. */
static void test_last_error_thread_local(void **state) {
  (void)state;
  int64_t shape[1] = {-7};
  tsr_array *a = NULL;
  TSR_ASSERT_STATUS(tsr_zeros(1, shape, TSR_F64, dev, &a), TSR_ERR_INVALID_ARGUMENT, "tsr_zeros");
  char mine[1024];
  strncpy(mine, tsr_last_error(), sizeof mine - 1);
  mine[sizeof mine - 1] = '\0';

  struct thread_result r;
  memset(&r, 0, sizeof r);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, thread_main, &r), 0);
  assert_int_equal(pthread_join(th, NULL), 0);

  assert_string_equal(r.seen_at_start, "");
  assert_int_equal(r.status, TSR_ERR_DTYPE);
  assert_non_null(strstr(r.own_message, "tsr_dtype_size"));
  assert_string_equal(tsr_last_error(), mine);

  /* A thread started after that one exited takes over its per-thread state (the library keeps
     the message in a block that passes to the next new thread): it still starts with none. */
  for (int round = 0; round < 3; ++round) {
    memset(&r, 0, sizeof r);
    assert_int_equal(pthread_create(&th, NULL, thread_main, &r), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_string_equal(r.seen_at_start, "");
    assert_non_null(strstr(r.own_message, "tsr_dtype_size"));
  }
  assert_string_equal(tsr_last_error(), mine);
}

int main(void) {
  dev = tsr_test_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_code_named),        cmocka_unit_test(test_unknown_code),
      cmocka_unit_test(test_dtype_names_and_sizes),   cmocka_unit_test(test_last_error_and_clear),
      cmocka_unit_test(test_last_error_overwritten),  cmocka_unit_test(test_set_error),
      cmocka_unit_test(test_last_error_thread_local),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
