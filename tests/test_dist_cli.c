/*
 * The tessera-gemm job, started through mpiexec from this serial program: results on random
 * and real input against float64 references computed here, and every bad input (exit code,
 * one message from rank 0, no output file left).
 * Arguments: <mpiexec> <tessera-gemm> <data folder>.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, truncate */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tsr_test.h"

static const char *mpiexec, *prog, *data;
static char dir[256];
static char out_text[65536], err_text[65536];

static void slurp(const char *path, char *buf, size_t cap) {
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  size_t n = fread(buf, 1, cap - 1, f);
  buf[n] = '\0';
  fclose(f);
}

/* Runs `mpiexec -n np tessera-gemm args` (args already shell-quoted); returns the exit code
   and leaves stdout/stderr in out_text/err_text. */
static int run_np(int np, const char *args) {
  char cmd[4096], o[300], e[300];
  snprintf(o, sizeof o, "%s/stdout.txt", dir);
  snprintf(e, sizeof e, "%s/stderr.txt", dir);
  snprintf(cmd, sizeof cmd, "'%s' -n %d --oversubscribe '%s' %s > '%s' 2> '%s'", mpiexec, np, prog,
           args, o, e);
  int rc = system(cmd);
  slurp(o, out_text, sizeof out_text);
  slurp(e, err_text, sizeof err_text);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}
static int run(const char *args) {
  return run_np(2, args);
}

static int count(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

static int exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

/* No temporary or output file of a failed run is left in the folder. */
static int leftovers(void) {
  int n = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, ".tmp.") || strcmp(e->d_name, "c.npy") == 0) n++;
  if (d) closedir(d);
  return n;
}

/* Asserts a failing run: exit code, exactly one error line (from rank 0), a message
   containing `needle`, and no output file. */
static void expect_failure(const char *args, int code, const char *needle) {
  int rc = run(args);
  if (rc != code || count(err_text, "tessera-gemm: error:") != 1 ||
      (needle && !strstr(err_text, needle)))
    print_error("args: %s\nexit %d (want %d)\nstderr:\n%s\n", args, rc, code, err_text);
  assert_int_equal(rc, code);
  assert_int_equal(count(err_text, "tessera-gemm: error:"), 1);
  if (needle) assert_non_null(strstr(err_text, needle));
  assert_int_equal(leftovers(), 0);
}

static double *load_f64(const char *path, int64_t *m, int64_t *n) {
  tsr_array *a = NULL;
  TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &a));
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(a, &info));
  assert_int_equal(info.ndim, 2);
  *m = info.shape[0];
  *n = info.shape[1];
  double *v = tsr_test_read_f64(a);
  tsr_array_release(a);
  return v;
}

static void test_help_and_usage(void **state) {
  (void)state;
  assert_int_equal(run("--help"), 0);
  assert_non_null(strstr(out_text, "usage: tessera-gemm"));
  assert_non_null(strstr(out_text, "exit codes"));
  assert_int_equal(count(out_text, "usage: tessera-gemm"), 1); /* rank 0 only */
  expect_failure("--bogus", 2, "unknown option");
  expect_failure("-m 5 -n 5", 2, "-k");
  expect_failure("--block 0 -m 4 -n 4 -k 4", 2, "--block");
  expect_failure("-m 4 -n 4 -k 4 --grid 3x1", 2, "grid 3 x 1");
  expect_failure("-m 4 -n 4 -k 4 --device cuda", 1, "CUDA");
}

/* Random problem: C must equal op(A) op(B) of the Philox matrices the job documents (A from
   seed S, B from seed S+1, uniform [-1, 1)). */
static void test_random_problem(void **state) {
  (void)state;
  char args[1024], cpath[300], jpath[300];
  snprintf(cpath, sizeof cpath, "%s/c.npy", dir);
  snprintf(jpath, sizeof jpath, "%s/r.json", dir);
  const int64_t m = 33, n = 21, k = 17;
  for (int t = 0; t < 4; t++) {
    int ta = t & 1, tb = t >> 1;
    snprintf(args, sizeof args,
             "-m 33 -n 21 -k 17 --seed 5 --block 8 --dtype f32 %s %s -o '%s' --json '%s' "
             "--repeat 2 --warmup 1 --progress",
             ta ? "--transa" : "", tb ? "--transb" : "", cpath, jpath);
    int rc = run(args);
    if (rc != 0) print_error("stderr: %s\n", err_text);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out_text, "grid: 1 x 2"));
    assert_non_null(strstr(out_text, "rank 1: device cpu"));
    assert_non_null(strstr(out_text, "GFLOP/s"));
    assert_non_null(strstr(out_text, "Freivalds residual"));
    assert_non_null(strstr(err_text, "panel 3 of 3"));
    assert_true(exists(jpath));
    int64_t shape_a[2] = {ta ? k : m, ta ? m : k}, shape_b[2] = {tb ? n : k, tb ? k : n};
    tsr_array *A = NULL, *B = NULL;
    TSR_ASSERT_OK(tsr_random_uniform(2, shape_a, TSR_F32, TSR_CPU, 5, -1.0, 1.0, &A));
    TSR_ASSERT_OK(tsr_random_uniform(2, shape_b, TSR_F32, TSR_CPU, 6, -1.0, 1.0, &B));
    double *a = tsr_test_read_f64(A), *b = tsr_test_read_f64(B);
    double ref[33 * 21];
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t p = 0; p < k; p++)
          s += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
        ref[i * n + j] = s;
      }
    int64_t cm = 0, cn = 0;
    double *c = load_f64(cpath, &cm, &cn);
    assert_int_equal(cm, m);
    assert_int_equal(cn, n);
    assert_true(tsr_test_rel_error(c, ref, (size_t)(m * n)) <= tsr_test_tol(TSR_F32, k));
    free(a), free(b), free(c);
    tsr_array_release(A);
    tsr_array_release(B);
    remove(cpath);
    remove(jpath);
  }
}

/* The real data: the Gram matrix of the wine measurements, W W^T (178 x 178), on 1, 2 and 4
   ranks. */
static void test_wine_gram(void **state) {
  (void)state;
  char args[1024], cpath[300], wpath[300];
  snprintf(cpath, sizeof cpath, "%s/c.npy", dir);
  snprintf(wpath, sizeof wpath, "%s/wine.npy", data);
  int64_t wm = 0, wn = 0;
  double *w = load_f64(wpath, &wm, &wn);
  double *ref = malloc((size_t)(wm * wm) * sizeof *ref);
  for (int64_t i = 0; i < wm; i++)
    for (int64_t j = 0; j < wm; j++) {
      double s = 0;
      for (int64_t p = 0; p < wn; p++)
        s += w[i * wn + p] * w[j * wn + p];
      ref[i * wm + j] = s;
    }
  for (int np = 1; np <= 4; np *= 2) {
    snprintf(args, sizeof args, "-a '%s' -b '%s' --transb --block 32 -o '%s'", wpath, wpath, cpath);
    int rc = run_np(np, args);
    if (rc != 0) print_error("stderr: %s\n", err_text);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out_text, "serial float64 product"));
    int64_t cm = 0, cn = 0;
    double *c = load_f64(cpath, &cm, &cn);
    assert_int_equal(cm, wm);
    assert_int_equal(cn, wm);
    assert_true(tsr_test_rel_error(c, ref, (size_t)(wm * wm)) <= tsr_test_tol(TSR_F64, wn));
    free(c);
    remove(cpath);
  }
  free(w);
  free(ref);
}

static void test_bad_input(void **state) {
  (void)state;
  char args[2048], wpath[300], cpath[300], bad[300];
  snprintf(wpath, sizeof wpath, "%s/wine.npy", data);
  snprintf(cpath, sizeof cpath, "%s/c.npy", dir);

  snprintf(args, sizeof args, "-a '%s/missing.npy' -b '%s' -o '%s'", dir, wpath, cpath);
  expect_failure(args, 1, "missing.npy");

  snprintf(bad, sizeof bad, "%s/corrupt.npy", dir);
  FILE *f = fopen(bad, "wb");
  fputs("\x93NUMPY\x01\x00garbage garbage garbage", f);
  fclose(f);
  snprintf(args, sizeof args, "-a '%s' -b '%s' -o '%s'", bad, wpath, cpath);
  expect_failure(args, 1, "corrupt.npy");

  /* Truncated: wine.npy cut in the middle of its data. */
  snprintf(bad, sizeof bad, "%s/trunc.npy", dir);
  {
    FILE *in = fopen(wpath, "rb"), *out = fopen(bad, "wb");
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, in);
    fwrite(buf, 1, n, out);
    fclose(in);
    fclose(out);
  }
  snprintf(args, sizeof args, "-a '%s' -b '%s' --transb -o '%s'", bad, wpath, cpath);
  expect_failure(args, 1, NULL);

  /* Unsupported dtype: a 2-D int64 matrix. */
  snprintf(bad, sizeof bad, "%s/int.npy", dir);
  {
    int64_t v[6] = {1, 2, 3, 4, 5, 6}, shape[2] = {2, 3};
    tsr_array *a = NULL;
    TSR_ASSERT_OK(tsr_from_host(2, shape, TSR_I64, TSR_CPU, v, &a));
    TSR_ASSERT_OK(tsr_npy_save(bad, a));
    tsr_array_release(a);
  }
  snprintf(args, sizeof args, "-a '%s' -b '%s' -o '%s'", bad, bad, cpath);
  expect_failure(args, 1, "i64");

  /* Inner dimensions differ: 178x13 times 178x13. */
  snprintf(args, sizeof args, "-a '%s' -b '%s' -o '%s'", wpath, wpath, cpath);
  expect_failure(args, 1, "inner dimensions differ");

  /* Unwritable output path. */
  snprintf(args, sizeof args, "-a '%s' -b '%s' --transb -o '%s/no/such/c.npy'", wpath, wpath, dir);
  expect_failure(args, 1, "does not exist");
  snprintf(args, sizeof args, "-a '%s' -b '%s' --transb -o '%s'", wpath, wpath, dir);
  expect_failure(args, 1, "is a directory");

  /* Ranks started with different command lines (MPMD launch). */
  char cmd[4096], e[300];
  snprintf(e, sizeof e, "%s/stderr.txt", dir);
  snprintf(cmd, sizeof cmd,
           "'%s' -n 1 '%s' -m 8 -n 8 -k 8 : -n 1 '%s' -m 9 -n 8 -k 8 > /dev/null 2> '%s'", mpiexec,
           prog, prog, e);
  int rc = system(cmd);
  slurp(e, err_text, sizeof err_text);
  assert_true(WIFEXITED(rc));
  assert_int_equal(WEXITSTATUS(rc), 2);
  assert_non_null(strstr(err_text, "differ between ranks"));
  assert_int_equal(count(err_text, "tessera-gemm: error:"), 1);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/tsr_dist_cli_XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[600];
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.') {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      remove(p);
    }
  if (d) closedir(d);
  rmdir(dir);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s <mpiexec> <tessera-gemm> <data folder>\n", argv[0]);
    return 2;
  }
  mpiexec = argv[1];
  prog = argv[2];
  data = argv[3];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_help_and_usage),
      cmocka_unit_test(test_random_problem),
      cmocka_unit_test(test_wine_gram),
      cmocka_unit_test(test_bad_input),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
