/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one rule for errors (docs/architecture.md): a message names the public function the
 * user called, never an internal one. Every TSR_ASSERT_STATUS of the suite checks the first
 * name of the message (tests/common/tsr_test.c); this program provokes the errors that are
 * raised deep inside, where the name would otherwise be an internal helper's or a backend's:
 * allocations that fail in the host allocator or a backend, public functions reached through
 * other public functions, and the GEMM backends. Each message must begin with the called
 * function's name and carry no internal name anywhere.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "core_util.h"

/* The 128 TiB results below must fail as out of memory; under AddressSanitizer the allocator
   must return NULL instead of aborting. Only ASan builds read the hook. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1";
}

static tsr_device dev;

/* Asserts the status, that the message begins with "name: " (TSR_ASSERT_STATUS) and that no
   internal name appears anywhere in it, the restated reason of an inner failure included. */
#define EXPECT_NAMED(expr, code, needle)                                                           \
  do {                                                                                             \
    tsr_clear_error();                                                                             \
    TSR_ASSERT_STATUS((expr), (code), (needle));                                                   \
    if (strstr(tsr_last_error(), "tsr__") != NULL) {                                               \
      print_error("%s: message \"%s\" names an internal function\n", #expr, tsr_last_error());     \
      fail();                                                                                      \
    }                                                                                              \
  } while (0)

/* 2^22 x 2^22 = 2^44 elements (128 TiB of f64) that all alias one host double: stride 0. */
#define HUGE_N ((int64_t)1 << 22)
static double one_value = 1.5;

/* Sets an environment variable and returns its old value (NULL when unset) for env_restore. */
static char *env_set(const char *name, const char *value) {
  const char *old = getenv(name);
  char *saved = old ? strdup(old) : NULL;
  setenv(name, value, 1);
  return saved;
}

static void env_restore(const char *name, char *saved) {
  if (saved)
    setenv(name, saved, 1);
  else
    unsetenv(name);
  free(saved);
}

static tsr_array *huge_view(void) {
  int64_t shape[2] = {HUGE_N, HUGE_N}, strides[2] = {0, 0};
  tsr_array *v = NULL;
  TSR_ASSERT_OK(tsr_from_host_view(2, shape, strides, TSR_F64, &one_value, &v));
  return v;
}

/* Results the allocator cannot hold: the failure happens in the host allocator or the
   backend's alloc, below the public function. */
static void test_allocation_failures(void **state) {
  (void)state;
  tsr_array *v = huge_view(), *out = NULL;
  EXPECT_NAMED(tsr_copy(v, &out), TSR_ERR_OUT_OF_MEMORY, "bytes");
  EXPECT_NAMED(tsr_contiguous(v, &out), TSR_ERR_OUT_OF_MEMORY, "bytes");
  EXPECT_NAMED(tsr_astype(v, TSR_F32, &out), TSR_ERR_OUT_OF_MEMORY, "bytes");
  EXPECT_NAMED(tsr_add(v, v, &out), TSR_ERR_OUT_OF_MEMORY, "bytes");
  EXPECT_NAMED(tsr_exp(v, &out), TSR_ERR_OUT_OF_MEMORY, "bytes");
  EXPECT_NAMED(tsr_array_to(v, dev, &out), TSR_ERR_OUT_OF_MEMORY, "bytes");
  assert_null(out);

  /* matmul of an (N x 1) and a (1 x N) view: the N x N result cannot be allocated. */
  int64_t col_shape[2] = {HUGE_N, 1}, row_shape[2] = {1, HUGE_N}, zero[2] = {0, 0};
  tsr_array *col = NULL, *row = NULL;
  TSR_ASSERT_OK(tsr_from_host_view(2, col_shape, zero, TSR_F64, &one_value, &col));
  TSR_ASSERT_OK(tsr_from_host_view(2, row_shape, zero, TSR_F64, &one_value, &row));
  EXPECT_NAMED(tsr_matmul(col, row, &out), TSR_ERR_OUT_OF_MEMORY, "bytes");
  assert_null(out);

  /* The context ends with the call: the next failure is named after the next function. */
  int64_t shape[2] = {HUGE_N, HUGE_N};
  EXPECT_NAMED(tsr_empty(2, shape, TSR_F64, dev, &out), TSR_ERR_OUT_OF_MEMORY, "bytes");
  EXPECT_NAMED(tsr_zeros(2, shape, TSR_F64, dev, &out), TSR_ERR_OUT_OF_MEMORY, "bytes");
  tsr_array_release(col);
  tsr_array_release(row);
  tsr_array_release(v);
}

/* The GEMM backends fail inside (a vendor path that is not built or cannot be loaded): the
   message names tsr_matmul, tsr_gemm or tsr_gemm_ex as called, never a backend function nor
   another public function. When the vendor path works, the results must be right. */
static void test_gemm_backend_errors(void **state) {
  (void)state;
  int64_t sa[2] = {5, 3}, sb[2] = {3, 4}, sc[2] = {5, 4};
  double *ha = NULL, *hb = NULL;
  tsr_array *a = tsr_test_random_array(2, sa, TSR_F64, dev, 1, &ha);
  tsr_array *b = tsr_test_random_array(2, sb, TSR_F64, dev, 2, &hb);
  tsr_array *c = NULL, *out = NULL;
  TSR_ASSERT_OK(tsr_zeros(2, sc, TSR_F64, dev, &c));
  tsr_status st = tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, c, TSR_GEMM_VENDOR);
  if (st != TSR_OK) {
    TSR_ASSERT_STATUS(st, TSR_ERR_UNSUPPORTED, NULL);
    tsr_test_assert_error_names("tsr_gemm_ex", "tsr_gemm_ex(..., TSR_GEMM_VENDOR)");
    char *saved = env_set("TSR_GEMM", "vendor");
    EXPECT_NAMED(tsr_matmul(a, b, &out), TSR_ERR_UNSUPPORTED, NULL);
    EXPECT_NAMED(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, c), TSR_ERR_UNSUPPORTED,
                 NULL);
    env_restore("TSR_GEMM", saved);
  } else {
    /* The vendor path ran: compare with a float64 reference. */
    double *hc = tsr_test_read_f64(c);
    double ref[20];
    for (int i = 0; i < 5; i++)
      for (int j = 0; j < 4; j++) {
        double s = 0;
        for (int p = 0; p < 3; p++)
          s += ha[i * 3 + p] * hb[p * 4 + j];
        ref[i * 4 + j] = s;
      }
    ct_assert_close(hc, ref, 20, 1e-12, 1e-12, "vendor gemm");
    free(hc);
  }
  /* A malformed TSR_GEMM is read inside tsr_matmul's call. */
  char *saved = env_set("TSR_GEMM", "fastest");
  EXPECT_NAMED(tsr_matmul(a, b, &out), TSR_ERR_INVALID_ARGUMENT, "fastest");
  env_restore("TSR_GEMM", saved);
  assert_null(out);
  free(ha);
  free(hb);
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
}

/* The CPU vendor GEMM refuses a leading dimension beyond the 32-bit CBLAS interface (or is
   not built, or cannot be loaded): each way the backend fails with TSR_ERR_UNSUPPORTED before
   it reads A, and the message names the public function called, not the backend's idea of
   it. A's view claims rows 2^31 elements apart; nothing beyond its first row is ever read. */
static void test_cpu_vendor_gemm_refusal(void **state) {
  (void)state;
  /* C, B, then A in one buffer: A's far-reaching view lies after C, so the core sees no
     overlap with C and copies nothing (a copy would read the far rows). */
  static double buf[12] = {0, 0, 0, 0, 1, 0, 0, 1, 1, 2, 3, 4};
  int64_t shape[2] = {2, 2}, far_rows[2] = {(int64_t)1 << 31, 1};
  tsr_array *a = NULL, *b = NULL, *c = NULL, *out = NULL;
  TSR_ASSERT_OK(tsr_from_host_view(2, shape, NULL, TSR_F64, buf, &c));
  TSR_ASSERT_OK(tsr_from_host_view(2, shape, NULL, TSR_F64, buf + 4, &b));
  TSR_ASSERT_OK(tsr_from_host_view(2, shape, far_rows, TSR_F64, buf + 8, &a));
  EXPECT_NAMED(tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, c, TSR_GEMM_VENDOR),
               TSR_ERR_UNSUPPORTED, NULL);
  char *saved = env_set("TSR_GEMM", "vendor");
  EXPECT_NAMED(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, c), TSR_ERR_UNSUPPORTED, NULL);
  EXPECT_NAMED(tsr_matmul(a, b, &out), TSR_ERR_UNSUPPORTED, NULL);
  env_restore("TSR_GEMM", saved);
  assert_null(out);
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
}

int main(void) {
  dev = tsr_test_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_allocation_failures),
      cmocka_unit_test(test_gemm_backend_errors),
      cmocka_unit_test(test_cpu_vendor_gemm_refusal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
