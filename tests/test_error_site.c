/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Errors that say where (issue 49, section 3): the raise site of the last error
 * (tsr_last_error_site: file relative to src/, line, internal function) beside the unchanged
 * message, its lifetime (the last error's: never set or left stale by a successful call, cleared
 * with the message, none for tsr_set_error, per thread), and TSR_ERROR_TRACE=1 (one line on
 * stderr per raised error, nothing without it).
 * Arguments: the src/ folder (ctest passes it), to check that the reported line raises.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsr_test.h"

static const char *src_dir;

/* The site, copied (the strings live until the next Tessera call). */
typedef struct site {
  char file[128], func[128];
  int line;
} site;

static site site_now(void) {
  const char *file = "x", *func = "x";
  int line = -1;
  tsr_last_error_site(&file, &line, &func);
  site s;
  snprintf(s.file, sizeof s.file, "%s", file ? file : "(null)");
  snprintf(s.func, sizeof s.func, "%s", func ? func : "(null)");
  s.line = line;
  return s;
}

static void assert_no_site(void) {
  site s = site_now();
  assert_string_equal(s.file, "");
  assert_string_equal(s.func, "");
  assert_int_equal(s.line, 0);
}

/* Lines [line - 8, line] of src/<file> (a call spread over lines reports one of them) contain
   one of the message primitives: the site is a raise, not the public function's entry. */
static void assert_line_raises(const site *s) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", src_dir, s->file);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("site %s:%d: cannot open %s", s->file, s->line, path);
  char text[4096];
  int n = 0, found = 0;
  while (fgets(text, sizeof text, f) && ++n <= s->line)
    if (n >= s->line - 8 &&
        (strstr(text, "tsr__set_error") || strstr(text, "TSR_CHECK") || strstr(text, "_error(")))
      found = 1;
  fclose(f);
  if (!found)
    fail_msg("site %s:%d (%s): no message primitive on or just above that line", s->file, s->line,
             s->func);
}

/* A .npy file whose header names a dtype Tessera does not read ('<u4', unsigned). */
static void write_bad_npy(const char *path) {
  char header[128];
  int n = snprintf(header, sizeof header,
                   "{'descr': '<u4', 'fortran_order': False, 'shape': (2, 2), }");
  while ((10 + n + 1) % 64 != 0)
    header[n++] = ' ';
  header[n++] = '\n';
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)n, 0};
  assert_int_equal(fwrite(pre, 1, sizeof pre, f), sizeof pre);
  assert_int_equal(fwrite(header, 1, (size_t)n, f), (size_t)n);
  const unsigned char data[64] = {0};
  assert_int_equal(fwrite(data, 1, sizeof data, f), sizeof data);
  assert_int_equal(fclose(f), 0);
}

/* An error raised deep inside a public call: the message is as before (the public name, no
   site in it); the site names the internal helper, its file under src/ and a raising line. */
static void test_site_of_deep_error(void **state) {
  (void)state;
  char path[] = "/tmp/tsr_error_site_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  write_bad_npy(path);
  tsr_array *a = NULL;
  tsr_clear_error();
  tsr_status st = tsr_npy_load(path, TSR_CPU, &a);
  unlink(path);
  assert_int_not_equal(st, TSR_OK);
  assert_null(a);
  const char *msg = tsr_last_error();
  assert_int_equal(strncmp(msg, "tsr_npy_load: ", 14), 0);
  assert_null(strstr(msg, "raised at"));
  assert_null(strstr(msg, ".c:"));
  site s = site_now();
  if (strcmp(s.file, "core/npy.c") != 0 && strcmp(s.file, "core/io.c") != 0)
    fail_msg("site file \"%s\", want core/npy.c or core/io.c (message \"%s\")", s.file, msg);
  assert_true(s.line > 0);
  if (strncmp(s.func, "tsr__", 5) != 0)
    fail_msg("site function \"%s\" is not an internal helper", s.func);
  assert_line_raises(&s);

  /* A check in a public function itself: its own name, its own file. */
  int64_t shape[2] = {3, -4};
  TSR_ASSERT_STATUS(tsr_empty(2, shape, TSR_F32, TSR_CPU, &a), TSR_ERR_INVALID_ARGUMENT, "-4");
  s = site_now();
  assert_int_equal(strncmp(s.file, "core/", 5), 0);
  assert_true(s.line > 0 && s.func[0] != '\0');
  assert_line_raises(&s);
}

/* The site belongs to the last error, as the message does. */
static void test_site_lifetime(void **state) {
  (void)state;
  tsr_clear_error();
  assert_no_site();
  /* Successful calls on a thread without an error leave no site. */
  size_t bytes = 0;
  TSR_ASSERT_OK(tsr_dtype_size(TSR_F64, &bytes));
  tsr_array *a = NULL;
  int64_t shape[1] = {3};
  TSR_ASSERT_OK(tsr_zeros(1, shape, TSR_F64, TSR_CPU, &a));
  assert_no_site();
  assert_string_equal(tsr_last_error(), "");

  /* An error sets it; a later successful call changes neither the message nor the site. */
  TSR_ASSERT_STATUS(tsr_dtype_size((tsr_dtype)77, &bytes), TSR_ERR_DTYPE, "tsr_dtype_size");
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tsr_last_error());
  site first = site_now();
  assert_true(first.line > 0);
  TSR_ASSERT_OK(tsr_dtype_size(TSR_F32, &bytes));
  tsr_array *b = NULL;
  TSR_ASSERT_OK(tsr_copy(a, &b));
  site after = site_now();
  assert_string_equal(tsr_last_error(), msg);
  assert_string_equal(after.file, first.file);
  assert_string_equal(after.func, first.func);
  assert_int_equal(after.line, first.line);

  /* The next error replaces it. */
  int64_t bad[1] = {-1};
  tsr_array *c = NULL;
  TSR_ASSERT_STATUS(tsr_zeros(1, bad, TSR_F64, TSR_CPU, &c), TSR_ERR_INVALID_ARGUMENT, "-1");
  site second = site_now();
  assert_true(second.line > 0);
  assert_true(second.line != first.line || strcmp(second.file, first.file) != 0);

  /* A message recorded through tsr_set_error has no site: the previous one is not shown. */
  tsr_set_error(TSR_ERR_INTERNAL, "my_layer", "n = %d", 3);
  assert_string_equal(tsr_last_error(), "my_layer: n = 3");
  assert_no_site();

  /* Cleared with the message; NULL pointers are allowed. */
  TSR_ASSERT_STATUS(tsr_zeros(1, bad, TSR_F64, TSR_CPU, &c), TSR_ERR_INVALID_ARGUMENT, "-1");
  int line = 0;
  tsr_last_error_site(NULL, &line, NULL);
  assert_int_equal(line, second.line);
  tsr_last_error_site(NULL, NULL, NULL);
  tsr_clear_error();
  assert_no_site();
  tsr_array_release(a);
  tsr_array_release(b);
}

static void *thread_site(void *arg) {
  site *out = arg;
  size_t bytes = 0;
  tsr_dtype_size(TSR_F64, &bytes);
  *out = site_now(); /* a new thread: no error, no site */
  return NULL;
}

/* Per thread: another thread's site is not ours, and a new thread starts with none. */
static void test_site_per_thread(void **state) {
  (void)state;
  size_t bytes = 0;
  TSR_ASSERT_STATUS(tsr_dtype_size((tsr_dtype)77, &bytes), TSR_ERR_DTYPE, "tsr_dtype_size");
  site mine = site_now();
  site theirs;
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, thread_site, &theirs), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_string_equal(theirs.file, "");
  assert_int_equal(theirs.line, 0);
  site again = site_now();
  assert_int_equal(again.line, mine.line);
  assert_string_equal(again.file, mine.file);
  tsr_clear_error();
}

/* Runs fn with stderr sent to a file; returns what was written (malloc'ed). */
static char *capture_stderr(void (*fn)(void)) {
  char path[] = "/tmp/tsr_error_trace_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  fflush(stderr);
  int saved = dup(2);
  assert_true(saved >= 0);
  assert_true(dup2(fd, 2) >= 0);
  fn();
  fflush(stderr);
  assert_true(dup2(saved, 2) >= 0);
  close(saved);
  off_t size = lseek(fd, 0, SEEK_END);
  assert_true(size >= 0);
  char *text = calloc(1, (size_t)size + 1);
  assert_non_null(text);
  assert_int_equal(pread(fd, text, (size_t)size, 0), size);
  close(fd);
  unlink(path);
  return text;
}

/* Two errors (each raised once), with successful calls around them; the expected lines. */
static char expected[2][1400];
static void raise_two(void) {
  size_t bytes = 0;
  tsr_dtype_size(TSR_F32, &bytes);
  for (int i = 0; i < 2; ++i) {
    if (i == 0)
      tsr_dtype_size((tsr_dtype)77, &bytes);
    else {
      int64_t bad[1] = {-2};
      tsr_array *c = NULL;
      tsr_zeros(1, bad, TSR_F64, TSR_CPU, &c);
    }
    site s = site_now();
    snprintf(expected[i], sizeof expected[i], "tessera: %s [raised at %s:%d in %s]\n",
             tsr_last_error(), s.file, s.line, s.func);
    tsr_dtype_size(TSR_F64, &bytes);
  }
}

/* TSR_ERROR_TRACE=1: one line per raised error, the message and its site; nothing when the
   variable is unset or 0. The messages themselves stay as they are. */
static void test_trace(void **state) {
  (void)state;
  unsetenv("TSR_ERROR_TRACE");
  char *text = capture_stderr(raise_two);
  assert_string_equal(text, "");
  free(text);
  setenv("TSR_ERROR_TRACE", "0", 1);
  text = capture_stderr(raise_two);
  assert_string_equal(text, "");
  free(text);

  setenv("TSR_ERROR_TRACE", "1", 1);
  text = capture_stderr(raise_two);
  unsetenv("TSR_ERROR_TRACE");
  char want[2900];
  snprintf(want, sizeof want, "%s%s", expected[0], expected[1]);
  assert_string_equal(text, want);
  assert_non_null(strstr(expected[0], "tessera: tsr_dtype_size: "));
  assert_non_null(strstr(expected[1], "tessera: tsr_zeros: "));
  assert_null(strstr(tsr_last_error(), "raised at"));
  free(text);
  tsr_clear_error();
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s SRC_DIR\n", argv[0]);
    return 2;
  }
  src_dir = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_site_of_deep_error),
      cmocka_unit_test(test_site_lifetime),
      cmocka_unit_test(test_site_per_thread),
      cmocka_unit_test(test_trace),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
