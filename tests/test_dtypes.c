/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dtypes are the rows of TSR_DTYPE_MAP (tessera/dtypes.h) and everything about them is
 * generated from the rows: every row round-trips through the name, the parser, the size and
 * the .npy type string; the values are the ABI (0..3 for f32, f64, i32, i64, as in release
 * 0.1); the generated strings and messages are the hand-written ones they replaced.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "tsr_test.h"

/* Every row: name -> parse -> the same enum; size == sizeof(c_type); float or not; .npy. */
static void test_rows_round_trip(void **state) {
  (void)state;
  int rows = 0;
#define CHECK_ROW(name, ENUM, value, c_type, size, npy, is_float, is_complex)                      \
  do {                                                                                             \
    assert_int_equal((int)ENUM, value);                                                            \
    assert_int_equal(value, rows);                                                                 \
    assert_string_equal(tsr_dtype_name(ENUM), #name);                                              \
    tsr_dtype parsed = (tsr_dtype)-1;                                                              \
    TSR_ASSERT_OK(tsr_dtype_parse(#name, &parsed));                                                \
    assert_int_equal(parsed, ENUM);                                                                \
    size_t bytes = 0;                                                                              \
    TSR_ASSERT_OK(tsr_dtype_size(ENUM, &bytes));                                                   \
    assert_int_equal(bytes, sizeof(c_type));                                                       \
    assert_int_equal(bytes, size);                                                                 \
    assert_int_equal(tsr__dtype_is_float(ENUM), is_float);                                         \
    assert_int_equal(tsr__dtype_is_complex(ENUM), is_complex);                                     \
    assert_true(tsr__dtype_valid(ENUM));                                                           \
    assert_string_equal(tsr__dtype_npy(ENUM), npy);                                                \
    tsr_dtype from_npy = (tsr_dtype)-1;                                                            \
    assert_true(tsr__dtype_from_npy(npy, strlen(npy), &from_npy));                                 \
    assert_int_equal(from_npy, ENUM);                                                              \
    rows++;                                                                                        \
  } while (0);
  TSR_DTYPE_MAP(CHECK_ROW)
#undef CHECK_ROW
  assert_int_equal(rows, TSR_NUM_DTYPES);
}

/* The ABI and the strings of release 0.1, written out (what the rows must keep producing). */
static void test_values_and_names_unchanged(void **state) {
  (void)state;
  static const struct {
    tsr_dtype dtype;
    int value;
    const char *name, *descr;
    size_t size;
  } old[] = {{TSR_F32, 0, "f32", "<f4", 4}, {TSR_F64, 1, "f64", "<f8", 8},
             {TSR_I32, 2, "i32", "<i4", 4}, {TSR_I64, 3, "i64", "<i8", 8},
             {TSR_C64, 4, "c64", "<c8", 8}, {TSR_C128, 5, "c128", "<c16", 16}};
  assert_int_equal(TSR_NUM_DTYPES, 6);
  for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) {
    assert_int_equal((int)old[i].dtype, old[i].value);
    assert_string_equal(tsr_dtype_name(old[i].dtype), old[i].name);
    assert_int_equal(tsr__dtype_size(old[i].dtype), old[i].size);
    char buf[128], want[96];
    size_t len = 0;
    const int64_t shape[2] = {3, 5};
    TSR_ASSERT_OK(tsr_npy_format_header(old[i].dtype, 0, 2, shape, buf, sizeof buf, &len));
    snprintf(want, sizeof want, "{'descr': '%s', 'fortran_order': False, 'shape': (3, 5), }",
             old[i].descr);
    assert_int_equal(len, 128);
    assert_memory_equal(buf + 10, want, strlen(want));
  }
  assert_string_equal(tsr_dtype_name((tsr_dtype)TSR_NUM_DTYPES), "unknown");
  assert_string_equal(tsr_dtype_name((tsr_dtype)-1), "unknown");
  assert_int_equal(tsr__dtype_size((tsr_dtype)TSR_NUM_DTYPES), 0);
  assert_false(tsr__dtype_valid((tsr_dtype)-1));
  assert_null(tsr__dtype_npy((tsr_dtype)TSR_NUM_DTYPES));
}

/* A header written for a dtype parses back to it, in both byte orders. */
static void test_npy_header_round_trip(void **state) {
  (void)state;
  for (int d = 0; d < TSR_NUM_DTYPES; d++) {
    for (int big = 0; big <= 1; big++) {
      char buf[256];
      size_t len = 0;
      const int64_t shape[3] = {2, 7, 4};
      TSR_ASSERT_OK(tsr_npy_format_header((tsr_dtype)d, big, 3, shape, buf, sizeof buf, &len));
      if (big) {
        size_t at = 10; /* past the magic, the version and the length */
        while (at + 1 < len && !(buf[at] == '\'' && buf[at + 1] == '<'))
          at++;
        assert_true(at + 1 < len);
        buf[at + 1] = '>';
      }
      tsr_npy_header h;
      TSR_ASSERT_OK(tsr_npy_parse_header(buf, len, &h));
      assert_int_equal(h.dtype, d);
      assert_int_equal(h.big_endian, big);
      assert_int_equal(h.fortran_order, big);
      assert_int_equal(h.ndim, 3);
      assert_int_equal(h.size, 2 * 7 * 4);
    }
  }
  size_t len = 0;
  char buf[256];
  const int64_t shape[1] = {1};
  TSR_ASSERT_STATUS(
      tsr_npy_format_header((tsr_dtype)TSR_NUM_DTYPES, 0, 1, shape, buf, sizeof buf, &len),
      TSR_ERR_DTYPE, "tsr_npy_format_header: unknown dtype 6");
}

/* A .npy header with the given dictionary (version 1.0). */
static size_t make_header(const char *dict, char *buf, size_t cap) {
  size_t n = strlen(dict), total = (10 + n + 1 + 63) / 64 * 64;
  assert_true(total <= cap);
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (char)((total - 10) & 0xff);
  buf[9] = (char)((total - 10) >> 8);
  memcpy(buf + 10, dict, n);
  memset(buf + 10 + n, ' ', total - 10 - n - 1);
  buf[total - 1] = '\n';
  return total;
}

/* The messages that list the dtypes, generated from the rows, read as the hand-written ones. */
static void test_messages_unchanged(void **state) {
  (void)state;
  static const struct {
    const char *dict;
    tsr_status code;
    const char *message;
  } cases[] = {
      {"{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }", TSR_ERR_DTYPE,
       "tsr_npy_parse_header: unsupported dtype '<u8' (supported: f4, f8, i4, i8, c8, c16 in "
       "either "
       "byte order)"},
      {"{'descr': '<q7', 'fortran_order': False, 'shape': (2,), }", TSR_ERR_FORMAT,
       "tsr_npy_parse_header: unsupported dtype '<q7' (supported: f4, f8, i4, i8, c8, c16 in "
       "either "
       "byte order)"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", TSR_ERR_DTYPE,
       "tsr_npy_parse_header: unsupported dtype [('a', '<f4')]: only simple type strings ('<f4', "
       "'<f8', '<i4', '<i8', '<c8', '<c16', either byte order) are supported, not structured "
       "dtypes"},
      {"{'descr': 7, 'fortran_order': False, 'shape': (2,), }", TSR_ERR_FORMAT,
       "tsr_npy_parse_header: unsupported dtype 7, 'fortran_order': False, 'shap...: only simple "
       "type "
       "strings ('<f4', '<f8', '<i4', '<i8', '<c8', '<c16', either byte order) are supported, not "
       "structured "
       "dtypes"},
      {"{'descr': '|f8', 'fortran_order': False, 'shape': (2,), }", TSR_ERR_FORMAT,
       "tsr_npy_parse_header: unsupported dtype '|f8': byte order '|' (not applicable) is "
       "invalid for a 8-byte type"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[256];
    size_t len = make_header(cases[i].dict, buf, sizeof buf);
    tsr_npy_header h;
    TSR_ASSERT_STATUS(tsr_npy_parse_header(buf, len, &h), cases[i].code, "tsr_npy_parse_header");
    assert_string_equal(tsr_last_error(), cases[i].message);
  }
}

static void test_parse_refuses(void **state) {
  (void)state;
  tsr_dtype d = TSR_F64;
  static const char *bad[] = {"F32", "f16", "", "f32 ", "float", "i8", "unknown"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    TSR_ASSERT_STATUS(tsr_dtype_parse(bad[i], &d), TSR_ERR_DTYPE, "is not a dtype");
    assert_int_equal(d, TSR_F64);
  }
  TSR_ASSERT_STATUS(
      tsr_dtype_parse("c256", &d), TSR_ERR_DTYPE,
      "tsr_dtype_parse: \"c256\" is not a dtype (expected one of f32, f64, i32, i64, c64, c128)");
  TSR_ASSERT_STATUS(tsr_dtype_parse(NULL, &d), TSR_ERR_NULL_POINTER, "text is NULL");
  TSR_ASSERT_STATUS(tsr_dtype_parse("f32", NULL), TSR_ERR_NULL_POINTER, "dtype is NULL");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows_round_trip),
      cmocka_unit_test(test_values_and_names_unchanged),
      cmocka_unit_test(test_npy_header_round_trip),
      cmocka_unit_test(test_messages_unchanged),
      cmocka_unit_test(test_parse_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
