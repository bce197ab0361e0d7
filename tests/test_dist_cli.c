/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tessera-gemm job, started through mpiexec from this serial program: results on random
 * and real input against float64 references computed here, and every bad input (exit code,
 * one message from rank 0, no output file left).
 * Arguments: <mpiexec> <tessera-gemm> <data folder>.
 */
#define _GNU_SOURCE /* mkdtemp, mount */
#include <complex.h>
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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

/* The job defaults to --device auto, which takes a GPU where there is one: every run here
   names the CPU unless its arguments name a device (the device cases: test_devices), so the
   suite checks the same thing on a GPU host as on a laptop. */
#define CPU "--device cpu"

/* GPUs on this host, as the job will see them (tsr_device_count, read in main). */
static int ncuda, nhip;

/* Runs `mpiexec -n np tessera-gemm [--device cpu] args` (args already shell-quoted; --device
   cpu unless args name a device); returns the exit code and leaves stdout/stderr in
   out_text/err_text. */
static int run_np(int np, const char *args) {
  char cmd[4096], o[300], e[300];
  snprintf(o, sizeof o, "%s/stdout.txt", dir);
  snprintf(e, sizeof e, "%s/stderr.txt", dir);
  /* Under timeout(1): a hang fails the test (exit 124) instead of blocking CI. */
  snprintf(cmd, sizeof cmd, "timeout -k 5 100 '%s' -n %d --oversubscribe '%s' %s %s > '%s' 2> '%s'",
           mpiexec, np, prog, strstr(args, "--device") ? "" : CPU, args, o, e);
  int rc = system(cmd);
  slurp(o, out_text, sizeof out_text);
  slurp(e, err_text, sizeof err_text);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}
static int run(const char *args) {
  return run_np(2, args);
}

/* Runs a whole shell command line under timeout(1) (stdout/stderr into out_text/err_text). */
static int run_shell(const char *cmdline) {
  char cmd[8192], o[300], e[300];
  snprintf(o, sizeof o, "%s/stdout.txt", dir);
  snprintf(e, sizeof e, "%s/stderr.txt", dir);
  snprintf(cmd, sizeof cmd, "timeout -k 5 100 sh -c \"%s\" > '%s' 2> '%s'", cmdline, o, e);
  int rc = system(cmd);
  slurp(o, out_text, sizeof out_text);
  slurp(e, err_text, sizeof err_text);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
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
    if (strstr(e->d_name, ".tessera-tmp.") || strcmp(e->d_name, "c.npy") == 0) n++;
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
  expect_failure("-m 4 -n 4 -k 4 --device tpu", 2, "--device");
}

/* The C in `cpath` of a random problem (-m m -n n -k k --seed seed, f32, transposes ta/tb)
   against op(A) op(B) in float64, A and B being the Philox matrices the job documents (A from
   seed S, B from seed S+1, uniform [-1, 1)). */
static void check_random_product(const char *cpath, int64_t m, int64_t n, int64_t k, int ta, int tb,
                                 uint64_t seed) {
  int64_t shape_a[2] = {ta ? k : m, ta ? m : k}, shape_b[2] = {tb ? n : k, tb ? k : n};
  tsr_array *A = NULL, *B = NULL;
  TSR_ASSERT_OK(tsr_random_uniform(2, shape_a, TSR_F32, TSR_CPU, seed, -1.0, 1.0, &A));
  TSR_ASSERT_OK(tsr_random_uniform(2, shape_b, TSR_F32, TSR_CPU, seed + 1, -1.0, 1.0, &B));
  double *a = tsr_test_read_f64(A), *b = tsr_test_read_f64(B);
  double *ref = malloc((size_t)(m * n) * sizeof *ref);
  assert_non_null(ref);
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
  free(a), free(b), free(c), free(ref);
  tsr_array_release(A);
  tsr_array_release(B);
}

/* The device each rank takes, on whatever host runs this (--device is the only thing here that
   differs between a laptop and a GPU node): --device cpu is the CPU on every rank; --device
   cuda is a CUDA GPU (local rank mod the GPUs present) with the right product where the host
   has one, else exit 1 naming the missing GPU; --device auto (the default) is the first GPU
   kind present, else the CPU. On a GPU, a problem over its memory is refused with the GPU's
   figures (the CPU's refusal: test_memory_check). */
static void test_devices(void **state) {
  (void)state;
  const char *kinds[3] = {"cpu", "cuda", "auto"};
  char args[1024], cpath[300], want[128];
  snprintf(cpath, sizeof cpath, "%s/c.npy", dir);
  for (int d = 0; d < 3; d++) {
    snprintf(args, sizeof args,
             "--device %s -m 33 -n 21 -k 17 --seed 9 --block 8 --dtype f32 -o '%s'", kinds[d],
             cpath);
    if (d == 1 && ncuda == 0) {
      /* The library's reason (tsr_device_parse), not a guess of the job's. */
      expect_failure(args, 1,
                     TSR_HAVE_CUDA ? "no CUDA device 0" : "this build has no CUDA support");
      assert_non_null(strstr(err_text, "--device cuda on "));
      continue;
    }
    int rc = run_np(2, args);
    if (rc != 0) print_error("%s: exit %d\n%s\n", args, rc, err_text);
    assert_int_equal(rc, 0);
    for (int r = 0; r < 2; r++) {
      if (d == 0 || (d == 2 && ncuda == 0 && nhip == 0))
        snprintf(want, sizeof want, "rank %d: device cpu on ", r);
      else if (d == 1 || ncuda > 0)
        snprintf(want, sizeof want, "rank %d: device cuda:%d on ", r, r % ncuda);
      else
        snprintf(want, sizeof want, "rank %d: device hip:%d on ", r, r % nhip);
      if (!strstr(out_text, want)) print_error("no \"%s\" in\n%s\n", want, out_text);
      assert_non_null(strstr(out_text, want));
    }
    check_random_product(cpath, 33, 21, 17, 0, 0, 9);
    remove(cpath);
  }
  if (ncuda > 0) {
    /* 32 TB of C: over any GPU's memory, refused before anything is allocated. */
    expect_failure("--device cuda -m 2000000 -n 2000000 -k 1", 1, "GiB per rank");
    assert_non_null(strstr(err_text, "its GPU cuda:"));
    assert_non_null(strstr(err_text, "nothing was allocated"));
  }
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
    check_random_product(cpath, m, n, k, ta, tb, 5);
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
           "'%s' -n 1 '%s' " CPU " -m 8 -n 8 -k 8 : -n 1 '%s' " CPU " -m 9 -n 8 -k 8 > /dev/null "
           "2> '%s'",
           mpiexec, prog, prog, e);
  int rc = system(cmd);
  slurp(e, err_text, sizeof err_text);
  assert_true(WIFEXITED(rc));
  assert_int_equal(WEXITSTATUS(rc), 2);
  assert_non_null(strstr(err_text, "differ between ranks"));
  assert_int_equal(count(err_text, "tessera-gemm: error:"), 1);
}

/* ---------------------------------------------------------------- issue 11 and 14 ----- */

/* Writes an m x n matrix (row-major float64 values, stored as `dt`) as a .npy file. */
static void save_matrix(const char *path, const double *v, int64_t m, int64_t n, tsr_dtype dt) {
  int64_t shape[2] = {m, n};
  tsr_array *a = tsr_test_array_from_f64(2, shape, dt, TSR_CPU, v);
  TSR_ASSERT_OK(tsr_npy_save(path, a));
  tsr_array_release(a);
}

static double *random_values(int64_t count, uint64_t seed) {
  double *v = malloc((size_t)count * sizeof *v);
  tsr_test_fill_random(v, (size_t)count, seed);
  return v;
}

/* C = alpha A B + beta C0 in float64: the suite's reference (tests/common), no transposes. */
static double *reference_gemm(const double *a, const double *b, const double *c0, double alpha,
                              double beta, int64_t m, int64_t n, int64_t k) {
  return tsr_test_ref_gemm(0, 0, m, n, k, alpha, a, b, beta, c0);
}

static void remove_temp_files(const char *folder) {
  char path[600];
  DIR *d = opendir(folder);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, ".tessera-tmp.")) {
      snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
      remove(path);
    }
  if (d) closedir(d);
}

static int temp_files(const char *folder) {
  int n = 0;
  DIR *d = opendir(folder);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, ".tessera-tmp.")) n++;
  if (d) closedir(d);
  return n;
}

/* Flags take no value; numbers are range-checked without overflow (issue 11.7, 11.10; the
   --verify=0 bug of issue 13). */
static void test_option_values(void **state) {
  (void)state;
  expect_failure("-m 4 -n 4 -k 4 --verify=0", 2, "takes no value");
  /* --transa takes n|t|c (issue 50); alone it is t */
  expect_failure("-m 4 -n 4 -k 4 --transa=no", 2,
                 "bad value 'no' for --transa: expected one of n|t|c");
  expect_failure("-m 4 -n 4 -k 4 --progress=1", 2, "takes no value");
  expect_failure("-m 4 -n 4 -k 4 --no-verify=false", 2, "takes no value");
  expect_failure("-m 4 -n 4 -k 4 --help=1", 2, "takes no value");
  expect_failure("-m 4 -n 4 -k 4 --grid 4294967298x1", 2, "--grid");
  expect_failure("-m 4 -n 4 -k 4 --grid 2x", 2, "--grid");
  expect_failure("-m 4 -n 4 -k 4 --grid 1x2x3", 2, "--grid");
  expect_failure("-m 99999999999999999999 -n 4 -k 4", 2, "-m");
  expect_failure("-m 4 -n 4 -k 4 --seed -1", 2, "--seed");
  expect_failure("-m 4 -n 4 -k 4 --alpha nan", 2, "--alpha");
  expect_failure("-m 4 -n 4 -k 4 --repeat 0", 2, "--repeat");
  expect_failure("-m 4 -n 4 -k 4 --max-memory 12abc", 2, "--max-memory");
  expect_failure("-m 4 -n 4 -k 4 stray", 2, "unexpected argument");
  expect_failure("-m 4 -n 4 -k 4 --dtype=f16", 2, "f64|f32");
  /* Options with values take "--opt=value" and "--opt value" alike. */
  assert_int_equal(run("-m 6 -n 5 -k 4 --grid=1x2 --block=2 --dtype=f32 --seed=3"), 0);
  assert_non_null(strstr(out_text, "grid: 1 x 2"));
  assert_non_null(strstr(out_text, "f32"));
  /* --no-verify really skips, --verify after it turns the check back on. */
  assert_int_equal(run("-m 6 -n 5 -k 4 --no-verify"), 0);
  assert_non_null(strstr(out_text, "skipped (--no-verify)"));
  assert_int_equal(run("-m 6 -n 5 -k 4 --no-verify --verify"), 0);
  assert_non_null(strstr(out_text, "Freivalds residual"));
}

/* The JSON report against its published schema (docs/tessera-gemm.schema.json, draft 2020-12)
   with Python's jsonschema, in each outcome: passed (2 ranks with the ring, the tree and auto
   broadcasts, 1 rank), NaN in an input (exit 4), an unreadable input (exit 1); and what the
   schema cannot say: passed == (exit code 0), the error text, the broadcast that ran, the
   hosts. */
static const char json_check_py[] =
    "import json, sys\n"
    "try:\n"
    "    import jsonschema\n"
    "except ImportError:\n"
    "    sys.exit(77)\n"
    "schema = json.load(open(sys.argv[1]))\n"
    "d = json.load(open(sys.argv[2], encoding='utf-8'))\n"
    "V = jsonschema.Draft202012Validator\n"
    "V.check_schema(schema)\n"
    "fc = getattr(V, 'FORMAT_CHECKER', None)  # jsonschema >= 4.5\n"
    "errors = sorted(V(schema, format_checker=fc).iter_errors(d), key=str)\n"
    "for e in errors:\n"
    "    print('schema: at', list(e.absolute_path), e.message)\n"
    "if errors:\n"
    "    sys.exit(1)\n"
    "code = int(sys.argv[3])\n"
    "assert d['exit_code'] == code, (d['exit_code'], code)\n"
    "assert d['passed'] == (code == 0), d['passed']\n"
    "assert eval(sys.argv[4], {'d': d}), sys.argv[4]\n";

/* Whether Python's jsonschema imports (CI installs Debian's python3-jsonschema,
   scripts/common.sh); else it is installed once with pip into a folder of its own, put on
   PYTHONPATH (pip --target: no user site or virtual environment needed, and allowed where the
   system Python is externally managed, PEP 668). 0 with a note when neither works (no
   network): the schema checks are then skipped. */
static int have_jsonschema(void) {
  static int have = -1;
  if (have >= 0) return have;
  have = system("python3 -c 'import jsonschema' > /dev/null 2>&1") == 0;
  if (!have) {
    static char lib[300];
    const char *tmp = getenv("TMPDIR");
    snprintf(lib, sizeof lib, "%s/tessera-test-pylib", tmp && *tmp ? tmp : "/tmp");
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "[ -d '%s/jsonschema' ] || timeout 300 python3 -m pip install --quiet "
             "--disable-pip-version-check --target '%s' 'jsonschema>=4.5' > /dev/null 2>&1",
             lib, lib);
    int rc = system(cmd);
    (void)rc;
    setenv("PYTHONPATH", lib, 1);
    have = system("python3 -c 'import jsonschema' > /dev/null 2>&1") == 0;
    if (!have) unsetenv("PYTHONPATH");
  }
  if (!have)
    print_message("note: Python's jsonschema is not installed and pip could not install it: "
                  "the JSON report is NOT validated against docs/tessera-gemm.schema.json\n");
  return have;
}

/* The report at jpath of a run that exited `code`: valid under the schema, and `expr` (Python
   over d, the document) holds. */
static void check_report(const char *jpath, int code, const char *expr) {
  char script[300], cmd[4096];
  snprintf(script, sizeof script, "%s/json_check.py", dir);
  FILE *f = fopen(script, "w");
  assert_non_null(f);
  fputs(json_check_py, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "python3 '%s' '%s/../docs/tessera-gemm.schema.json' '%s' %d \"%s\"",
           script, data, jpath, code, expr);
  int rc = system(cmd);
  if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
    char doc[16384];
    slurp(jpath, doc, sizeof doc);
    print_error("report of exit %d fails its checks (%s):\n%s\n", code, expr, doc);
  }
  assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
  remove(script);
}

static void test_json_schema(void **state) {
  (void)state;
  if (!have_jsonschema()) {
    skip();
    return;
  }
  char args[2048], jpath[300], a[300], b[300];
  snprintf(jpath, sizeof jpath, "%s/s.json", dir);
  /* Passed on 2 ranks (1 x 2: A's panels go along the row), the ring asked for and used. */
  snprintf(args, sizeof args, "-m 40 -n 24 -k 32 --block 8 --bcast ring --json '%s'", jpath);
  int rc = run(args);
  if (rc != 0) print_error("exit %d\n%s\n", rc, err_text);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out_text, "time (s): generate "));
  assert_non_null(strstr(out_text, "panel broadcasts per rank (max): mpi 0, ring "));
  check_report(jpath, 0,
               "d['error'] is None and d['verify']['verdict'] == 'passed' and "
               "d['bcast']['requested'] == 'ring' and d['bcast']['used'] == ['ring'] and "
               "d['pipeline']['steps'] > 0 and d['bcast']['broadcasts_max_rank'] == "
               "{'mpi': 0, 'ring': d['pipeline']['steps'], 'tree': 0} and "
               "[x['rank'] for x in d['devices']] == [0, 1] and "
               "all(x['kind'] == 'cpu' and x['device'] == 'cpu' and x['threads'] >= 1 "
               "and x['name'] for x in d['devices']) and "
               "sorted(r for h in d['hosts'] for r in h['ranks']) == [0, 1] and "
               "d['mpi']['library'] and d['build']['backends'][0] == 'cpu' and "
               "d['seconds']['read'] == 0 and d['timestamp'].endswith('Z')");
  /* The tree asked for: the tree ran, every panel. */
  snprintf(args, sizeof args, "-m 40 -n 24 -k 32 --block 8 --bcast tree --json '%s'", jpath);
  assert_int_equal(run(args), 0);
  check_report(jpath, 0,
               "d['bcast']['used'] == ['tree'] and d['bcast']['broadcasts_max_rank'] == "
               "{'mpi': 0, 'ring': 0, 'tree': d['pipeline']['steps']}");
  /* auto on a row of 2 ranks: MPI_Ibcast. */
  snprintf(args, sizeof args, "-m 40 -n 24 -k 32 --block 8 --json '%s'", jpath);
  assert_int_equal(run(args), 0);
  check_report(jpath, 0, "d['bcast']['requested'] == 'auto' and d['bcast']['used'] == ['mpi']");
  /* 1 rank: no broadcast, the banner in the singular. */
  assert_int_equal(run_np(1, args), 0);
  assert_non_null(strstr(out_text, "grid: 1 x 1 (1 rank), block 8"));
  check_report(jpath, 0, "d['bcast']['used'] == [] and d['ranks'] == 1 and len(d['devices']) == 1");
  /* NaN in an input: written, exit 4, passed false with the warning as the error. */
  snprintf(a, sizeof a, "%s/na.npy", dir);
  snprintf(b, sizeof b, "%s/nb.npy", dir);
  double *va = random_values(6 * 5, 31), *vb = random_values(5 * 4, 32);
  va[7] = NAN;
  save_matrix(a, va, 6, 5, TSR_F64);
  save_matrix(b, vb, 5, 4, TSR_F64);
  snprintf(args, sizeof args, "-a '%s' -b '%s' --block 2 -o '%s/c.npy' --json '%s'", a, b, dir,
           jpath);
  assert_int_equal(run(args), 4);
  assert_non_null(strstr(out_text, "time (s): read "));
  check_report(jpath, 4,
               "d['verify']['verdict'] == 'unverified' and 'NaN' in d['error'] and "
               "d['output'] is not None and d['verify']['nonfinite_inputs'] == 1 and "
               "d['seconds']['generate'] == 0");
  remove(jpath);
  /* A missing input: exit 1, the library's message in the report. */
  snprintf(args, sizeof args, "-a '%s/missing.npy' -b '%s' --json '%s'", dir, b, jpath);
  assert_int_equal(run(args), 1);
  check_report(jpath, 1,
               "'missing.npy' in d['error'] and d['verify']['verdict'] == 'not_run' and "
               "d['output'] is None and len(d['devices']) == 2");
  free(va), free(vb);
  remove(jpath), remove(a), remove(b);
  char cpath[300];
  snprintf(cpath, sizeof cpath, "%s/c.npy", dir);
  remove(cpath);
}

/* The same binary spelled differently on two ranks is fine (argv[0] is not compared). */
static void test_argv0_spelling(void **state) {
  (void)state;
  char cmd[4096], other[1024];
  const char *slash = strrchr(prog, '/');
  snprintf(other, sizeof other, "%.*s/./%s", (int)(slash - prog), prog, slash + 1);
  snprintf(cmd, sizeof cmd,
           "'%s' -n 1 '%s' " CPU " -m 8 -n 8 -k 8 : -n 1 '%s' " CPU " -m 8 -n 8 -k 8", mpiexec,
           prog, other);
  int rc = run_shell(cmd);
  if (rc != 0) print_error("%s\n", err_text);
  assert_int_equal(rc, 0);
}

/* --json: validated before any work on rank 0; never an input or the output; escaped; a
   failure to write it is an error (issue 11.2, 11.9). */
static void test_json_targets(void **state) {
  (void)state;
  char args[4096], a[300], b[300], cpath[300], jpath[600];
  snprintf(a, sizeof a, "%s/ja.npy", dir);
  snprintf(b, sizeof b, "%s/jb.npy", dir);
  snprintf(cpath, sizeof cpath, "%s/c.npy", dir);
  double *va = random_values(6 * 4, 1), *vb = random_values(4 * 5, 2);
  save_matrix(a, va, 6, 4, TSR_F64);
  save_matrix(b, vb, 4, 5, TSR_F64);
  struct stat before, after;
  assert_int_equal(stat(a, &before), 0);
  /* An input as the JSON target, on a failing run (inner dimensions differ) and a good one. */
  snprintf(args, sizeof args, "-a '%s' -b '%s' --json '%s'", a, a, a);
  expect_failure(args, 2, "refusing to overwrite an input");
  snprintf(args, sizeof args, "-a '%s' -b '%s' --json '%s'", a, b, b);
  expect_failure(args, 2, "input -b");
  assert_int_equal(stat(a, &after), 0);
  assert_true(after.st_ino == before.st_ino && after.st_size == before.st_size);
  /* The output as the JSON target. */
  snprintf(args, sizeof args, "-a '%s' -b '%s' -o '%s' --json '%s'", a, b, cpath, cpath);
  expect_failure(args, 2, "is the output");
  /* Unwritable: refused before the run (no timing printed). */
  snprintf(args, sizeof args, "-a '%s' -b '%s' --json /nonexistent/x.json", a, b);
  expect_failure(args, 1, "does not exist");
  assert_null(strstr(out_text, "GFLOP/s"));
  /* A FIFO: refused at once, never opened (no hang). */
  snprintf(jpath, sizeof jpath, "%s/j.fifo", dir);
  assert_int_equal(mkfifo(jpath, 0600), 0);
  snprintf(args, sizeof args, "-a '%s' -b '%s' --json '%s'", a, b, jpath);
  expect_failure(args, 1, "FIFO");
  unlink(jpath);
  /* Quotes, backslashes and a tab in the name: valid JSON that names the file. */
  snprintf(jpath, sizeof jpath, "%s/q\"b\\s\tx.json", dir);
  {
    char cmd[8192], o[300], e[300];
    snprintf(o, sizeof o, "%s/stdout.txt", dir);
    snprintf(e, sizeof e, "%s/stderr.txt", dir);
    snprintf(cmd, sizeof cmd,
             "timeout -k 5 100 '%s' -n 2 --oversubscribe '%s' " CPU " -a '%s' -b '%s' --json '%s' "
             "> '%s' 2> '%s'",
             mpiexec, prog, a, b, jpath, o, e);
    int rc = system(cmd);
    assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
  }
  FILE *f = fopen(jpath, "r");
  assert_non_null(f);
  char json[16384];
  size_t n = fread(json, 1, sizeof json - 1, f);
  json[n] = '\0';
  fclose(f);
  /* The escaped name of input a (plain) and a well-formed document: Python's json parses it. */
  char check[1024];
  snprintf(check, sizeof check,
           "python3 -c \"import json,sys; d=json.load(open(sys.argv[1])); "
           "assert len(d['peak_memory_bytes'])==2 and min(d['peak_memory_bytes'])>0; "
           "assert len(d['memory_needed_bytes'])==2; assert d['verify']['verdict']=='passed'\" "
           "'%s'",
           jpath);
  assert_int_equal(system(check), 0);
  unlink(jpath);
  /* Failure to write the report is an error, not a warning: a 512-byte file size limit. */
  snprintf(jpath, sizeof jpath, "%s/r.json", dir);
  snprintf(args, sizeof args,
           "'%s' -n 2 --oversubscribe --mca btl self,tcp sh -c 'trap \\\"\\\" XFSZ; ulimit -f 1; "
           "exec %s " CPU " -a %s -b %s --json %s'",
           mpiexec, prog, a, b, jpath);
  int rc = run_shell(args);
  if (rc != 1) print_error("exit %d\n%s\n", rc, err_text);
  assert_int_equal(rc, 1);
  assert_non_null(strstr(err_text, "cannot write the JSON report"));
  assert_false(exists(jpath));
  assert_int_equal(temp_files(dir), 0);
  free(va), free(vb);
  remove(a), remove(b);
}

/* -o onto a FIFO, a device node, a symlink, an input; -a on a FIFO (issue 11.3, 11.4). */
static void test_output_targets(void **state) {
  (void)state;
  char args[4096], a[300], b[300], fifo[300], link[300], target[300];
  snprintf(a, sizeof a, "%s/oa.npy", dir);
  snprintf(b, sizeof b, "%s/ob.npy", dir);
  double *va = random_values(6 * 4, 3), *vb = random_values(4 * 5, 4);
  save_matrix(a, va, 6, 4, TSR_F64);
  save_matrix(b, vb, 4, 5, TSR_F64);
  snprintf(fifo, sizeof fifo, "%s/o.fifo", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  snprintf(args, sizeof args, "-a '%s' -b '%s' -o '%s'", a, b, fifo);
  expect_failure(args, 1, "FIFO");
  struct stat sb;
  assert_int_equal(lstat(fifo, &sb), 0);
  assert_true(S_ISFIFO(sb.st_mode));
  snprintf(args, sizeof args, "-a '%s' -b '%s' -o '%s'", a, b, a);
  expect_failure(args, 2, "refusing to overwrite an input");
  snprintf(args, sizeof args, "-a '%s' -b '%s' -o %s/c.npy", fifo, b, dir);
  expect_failure(args, 1, "FIFO");
  unlink(fifo);
  struct stat before;
  assert_int_equal(stat("/dev/null", &before), 0);
  snprintf(args, sizeof args, "-a '%s' -b '%s' -o /dev/null", a, b);
  expect_failure(args, 1, "character device");
  assert_int_equal(stat("/dev/null", &sb), 0);
  assert_true(S_ISCHR(sb.st_mode) && sb.st_rdev == before.st_rdev);
  snprintf(target, sizeof target, "%s/target.npy", dir);
  snprintf(link, sizeof link, "%s/link.npy", dir);
  save_matrix(target, va, 6, 4, TSR_F64);
  assert_int_equal(symlink("target.npy", link), 0);
  snprintf(args, sizeof args, "-a '%s' -b '%s' -o '%s'", a, b, link);
  expect_failure(args, 1, "symbolic link");
  assert_int_equal(lstat(link, &sb), 0);
  assert_true(S_ISLNK(sb.st_mode));
  int64_t tm = 0, tn = 0;
  double *tv = load_f64(target, &tm, &tn);
  assert_true(tm == 6 && tn == 4);
  assert_memory_equal(tv, va, 24 * sizeof *tv);
  free(tv);
  unlink(link), unlink(target);
  snprintf(args, sizeof args, "-a '%s' -b '%s' -o '%s'", a, b, b);
  expect_failure(args, 2, "input -b");
  free(va), free(vb);
  remove(a), remove(b);
}

/* A full disk: a file size limit (works for any user) and a 1 MiB tmpfs (where this process may
   mount one): exit 1, the reason, no result and no temporary file (issue 11.1). */
static void test_full_disk(void **state) {
  (void)state;
  char args[4096], cpath[300];
  snprintf(cpath, sizeof cpath, "%s/c.npy", dir);
  snprintf(args, sizeof args,
           "'%s' -n 2 --oversubscribe --mca btl self,tcp sh -c 'trap \\\"\\\" XFSZ; ulimit -f "
           "1024; exec %s " CPU " -m 400 -n 400 -k 400 -o %s'",
           mpiexec, prog, cpath);
  int rc = run_shell(args);
  if (rc != 1) print_error("exit %d\n%s\n", rc, err_text);
  assert_int_equal(rc, 1);
  assert_non_null(strstr(err_text, "File too large"));
  assert_null(strstr(out_text, "output:"));
  assert_false(exists(cpath));
  assert_int_equal(temp_files(dir), 0);

  char mnt[300];
  snprintf(mnt, sizeof mnt, "%s/tmpfs", dir);
  assert_int_equal(mkdir(mnt, 0700), 0);
  if (mount("tmpfs", mnt, "tmpfs", 0, "size=1m") == 0) {
    snprintf(cpath, sizeof cpath, "%s/c.npy", mnt);
    snprintf(args, sizeof args, "-m 400 -n 400 -k 400 -o '%s'", cpath);
    rc = run(args);
    if (rc != 1) print_error("exit %d\n%s\n", rc, err_text);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err_text, "No space left on device"));
    assert_false(exists(cpath));
    assert_int_equal(temp_files(mnt), 0);
    /* What fits is written. */
    snprintf(args, sizeof args, "-m 100 -n 100 -k 10 -o '%s'", cpath);
    assert_int_equal(run(args), 0);
    assert_true(exists(cpath));
    remove(cpath);
    assert_int_equal(umount(mnt), 0);
  } else {
    print_message("(tmpfs not mountable: %s; the file size limit covered the full disk)\n",
                  strerror(errno));
  }
  rmdir(mnt);
}

/* SIGTERM, SIGINT or SIGKILL to rank 0 while it writes a 128 MB result: no temporary file and
   no result are left (the handler of the signalled rank, or of the rank mpiexec then
   terminates, removes the temporary) (issue 11.5). After SIGKILL the cleanup is rank 1's, on
   the SIGTERM Open MPI sends it; Open MPI follows with SIGKILL after odls_base_sigkill_timeout
   (1 s by default), which a loaded CI machine (sanitizers) can miss: 3 s here. mpiexec waits
   that long at every such end whether or not a process is left (10 s made this test a minute
   of each CI variant), and only the SIGKILL case depends on it, where leftovers are reported,
   not asserted (below). */
static void test_interrupted_write(void **state) {
  (void)state;
  const int sigs[3] = {SIGTERM, SIGINT, SIGKILL};
  char cpath[300], cmd[4096];
  snprintf(cpath, sizeof cpath, "%s/big.npy", dir);
  for (int s = 0; s < 3; s++) {
    snprintf(cmd, sizeof cmd,
             "OMPI_MCA_odls_base_sigkill_timeout=3 exec timeout -k 5 100 '%s' -n 2 "
             "--oversubscribe '%s' " CPU " -m 4000 -n 4000 -k 1 "
             "--no-verify -o '%s' > /dev/null 2>&1",
             mpiexec, prog, cpath);
    pid_t child = fork();
    if (child == 0) {
      execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
      _exit(127);
    }
    long pid0 = 0;
    for (int i = 0; i < 20000 && !pid0; i++) { /* up to ~100 s */
      DIR *d = opendir(dir);
      struct dirent *e;
      while (d && (e = readdir(d)))
        if (strstr(e->d_name, "big.npy.tessera-tmp.")) {
          const char *p = strstr(e->d_name, ".tessera-tmp.") + strlen(".tessera-tmp.");
          pid0 = strtol(p, NULL, 10);
        }
      if (d) closedir(d);
      int st;
      if (!pid0 && waitpid(child, &st, WNOHANG) == child) {
        child = 0;
        break;
      }
      if (!pid0) nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
    if (!pid0) { /* finished before we saw it: nothing to interrupt this time */
      print_message("(signal %d: the write finished before it could be interrupted)\n", sigs[s]);
      if (child) waitpid(child, NULL, 0);
      remove(cpath);
      continue;
    }
    assert_int_equal(kill((pid_t)pid0, sigs[s]), 0);
    int status = 0;
    waitpid(child, &status, 0);
    assert_true(!WIFEXITED(status) || WEXITSTATUS(status) != 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 124); /* no hang */
    assert_false(exists(cpath)); /* nothing that looks like a result */
    int left = temp_files(dir);
    if (left) {
      print_error("signal %d to rank 0 (pid %ld): %d temporary files left:", sigs[s], pid0, left);
      DIR *d = opendir(dir);
      struct dirent *e;
      while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tessera-tmp.")) print_error(" %s", e->d_name);
      if (d) closedir(d);
      print_error("\n");
    }
    /* SIGTERM/SIGINT: the signalled rank's handler removes the temporary, always: no leftover
       is asserted. SIGKILL cannot be caught: the cleanup is the survivor's, on Open MPI's
       SIGTERM, which a machine under load can lose to the follow-up SIGKILL. Then only no result
       (above) and no hang are asserted; leftovers (temp_files counts those matching the
       temporary's pattern) are reported, not asserted, and removed. */
    if (sigs[s] != SIGKILL) assert_int_equal(left, 0);
    remove_temp_files(dir);
  }
}

/* MPMD launch whose ranks resolve a relative path in different folders (node-local paths): the
   folder exists for rank 0 only. A clean error on all ranks, no hang (timeout), nothing left
   (issue 11.4). */
static void test_per_rank_paths(void **state) {
  (void)state;
  char x[300], y[300], out[300], cmd[4096], in[300];
  snprintf(x, sizeof x, "%s/X", dir);
  snprintf(y, sizeof y, "%s/Y", dir);
  snprintf(out, sizeof out, "%s/out", x);
  assert_int_equal(mkdir(x, 0700), 0);
  assert_int_equal(mkdir(y, 0700), 0);
  assert_int_equal(mkdir(out, 0700), 0);
  snprintf(cmd, sizeof cmd,
           "'%s' -n 1 --wdir '%s' '%s' " CPU " -m 40 -n 30 -k 20 -o out/c.npy : -n 1 --wdir '%s' "
           "'%s' " CPU " -m 40 -n 30 -k 20 -o out/c.npy",
           mpiexec, x, prog, y, prog);
  int rc = run_shell(cmd);
  if (rc != 1) print_error("exit %d\n%s\n", rc, err_text);
  assert_int_equal(rc, 1);
  assert_non_null(strstr(err_text, "does not exist"));
  assert_non_null(strstr(err_text, "rank 1"));
  assert_int_equal(count(err_text, "tessera-gemm: error:"), 1);
  assert_int_equal(temp_files(out), 0);
  snprintf(in, sizeof in, "%s/c.npy", out);
  assert_false(exists(in));
  /* An input that only rank 0 sees. */
  double *v = random_values(20 * 20, 5);
  snprintf(in, sizeof in, "%s/in.npy", x);
  save_matrix(in, v, 20, 20, TSR_F64);
  snprintf(cmd, sizeof cmd,
           "'%s' -n 1 --wdir '%s' '%s' " CPU " -a in.npy -b in.npy : -n 1 --wdir '%s' '%s' " CPU
           " -a in.npy -b in.npy",
           mpiexec, x, prog, y, prog);
  rc = run_shell(cmd);
  if (rc != 1) print_error("exit %d\n%s\n", rc, err_text);
  assert_int_equal(rc, 1);
  assert_non_null(strstr(err_text, "in.npy"));
  assert_non_null(strstr(err_text, "rank 1"));
  free(v);
  remove(in);
  rmdir(out), rmdir(x), rmdir(y);
}

/* Output names of 234 to 244 bytes: written (the temporary name is short) and equal to the
   result under a short name (issue 11.4). */
static void test_long_output_names(void **state) {
  (void)state;
  char name[300], path[600], args[2048], cpath[300];
  snprintf(cpath, sizeof cpath, "%s/short.npy", dir);
  snprintf(args, sizeof args, "-m 30 -n 20 -k 10 -o '%s'", cpath);
  assert_int_equal(run(args), 0);
  int64_t m0 = 0, n0 = 0;
  double *want = load_f64(cpath, &m0, &n0);
  for (int len = 234; len <= 244; len += 2) {
    memset(name, 'x', (size_t)len);
    memcpy(name + len - 4, ".npy", 5);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(args, sizeof args, "-m 30 -n 20 -k 10 -o '%s'", path);
    int rc = run(args);
    if (rc != 0) print_error("length %d: exit %d\n%s\n", len, rc, err_text);
    assert_int_equal(rc, 0);
    int64_t m = 0, n = 0;
    double *got = load_f64(path, &m, &n);
    assert_true(m == m0 && n == n0);
    assert_memory_equal(got, want, (size_t)(m * n) * sizeof *got);
    free(got);
    remove(path);
    assert_int_equal(temp_files(dir), 0);
  }
  free(want);
  remove(cpath);
}

/* NaN/Inf in the inputs: computed as IEEE says (matching a float64 reference, NaN where it has
   NaN), reported, written, exit 4. A product that overflows f32: rows left out of the check,
   exit 4, written (issue 11.6). */
static void test_ieee_inputs(void **state) {
  (void)state;
  const int64_t m = 12, n = 9, k = 7;
  char a[300], b[300], cpath[300], args[2048];
  snprintf(a, sizeof a, "%s/na.npy", dir);
  snprintf(b, sizeof b, "%s/nb.npy", dir);
  snprintf(cpath, sizeof cpath, "%s/c.npy", dir);
  double *va = random_values(m * k, 6), *vb = random_values(k * n, 7);
  va[2 * k + 3] = NAN;
  va[5 * k + 0] = INFINITY;
  vb[1 * n + 4] = -INFINITY;
  save_matrix(a, va, m, k, TSR_F64);
  save_matrix(b, vb, k, n, TSR_F64);
  snprintf(args, sizeof args, "-a '%s' -b '%s' --block 4 -o '%s'", a, b, cpath);
  int rc = run(args);
  if (rc != 4) print_error("exit %d\n%s\n%s\n", rc, out_text, err_text);
  assert_int_equal(rc, 4);
  assert_non_null(strstr(out_text, "inputs contain 3 NaN/Inf; product not verified"));
  assert_non_null(strstr(out_text, "output:"));
  double *ref = reference_gemm(va, vb, NULL, 1.0, 0.0, m, n, k);
  int64_t cm = 0, cn = 0;
  double *c = load_f64(cpath, &cm, &cn);
  int nans = 0;
  for (int64_t i = 0; i < m * n; i++) {
    assert_int_equal(isnan(c[i]) != 0, isnan(ref[i]) != 0);
    nans += isnan(ref[i]) != 0;
    if (isinf(ref[i])) assert_true(c[i] == ref[i]);
    if (isfinite(ref[i])) assert_true(fabs(c[i] - ref[i]) <= 1e-13 * (1 + fabs(ref[i])));
  }
  assert_true(nans > 0);
  free(c), free(ref);
  remove(cpath);

  /* Finite f32 inputs whose product overflows in row 3 only. */
  tsr_test_fill_random(va, (size_t)(m * k), 8);
  tsr_test_fill_random(vb, (size_t)(k * n), 9);
  for (int64_t p = 0; p < k; p++)
    va[3 * k + p] = 1e25 * (p % 2 ? 1 : -1);
  for (int64_t i = 0; i < k * n; i++)
    vb[i] = vb[i] * 1e15;
  save_matrix(a, va, m, k, TSR_F32);
  save_matrix(b, vb, k, n, TSR_F32);
  rc = run(args);
  if (rc != 4) print_error("exit %d\n%s\n%s\n", rc, out_text, err_text);
  assert_int_equal(rc, 4);
  assert_non_null(strstr(out_text, "1 rows of the product may overflow f32"));
  assert_non_null(strstr(out_text, "Freivalds residual"));
  assert_non_null(strstr(out_text, "output:"));
  c = load_f64(cpath, &cm, &cn);
  ref = malloc((size_t)(m * n) * sizeof *ref);
  {
    /* The reference from the f32-rounded inputs. */
    for (int64_t i = 0; i < m * k; i++)
      va[i] = (double)(float)va[i];
    for (int64_t i = 0; i < k * n; i++)
      vb[i] = (double)(float)vb[i];
    double *r = reference_gemm(va, vb, NULL, 1.0, 0.0, m, n, k);
    memcpy(ref, r, (size_t)(m * n) * sizeof *ref);
    free(r);
  }
  for (int64_t i = 0; i < m * n; i++) {
    if (i / n == 3) continue; /* the overflowing row: Inf or huge, as f32 arithmetic gives */
    assert_true(fabs(c[i] - ref[i]) <= tsr_test_tol(TSR_F32, k) * 1e15 * k);
  }
  free(c), free(ref), free(va), free(vb);
  remove(cpath), remove(a), remove(b);
}

/* The job computes its memory need before allocating and refuses what does not fit, with the
   figures; --max-memory overrides (issue 11.8, issue 14). */
static void test_memory_check(void **state) {
  (void)state;
  time_t t0 = time(NULL);
  /* 32 TB of C: more than any machine has (60000 x 60000 was killed by the kernel before). */
  expect_failure("-m 2000000 -n 2000000 -k 1", 1, "available per rank");
  assert_non_null(strstr(err_text, "nothing was allocated"));
  assert_true(time(NULL) - t0 < 60);
  expect_failure("-m 400 -n 400 -k 400 --max-memory 1000000", 1, "over --max-memory 1000000");
  assert_non_null(strstr(err_text, "needs about"));
  assert_int_equal(run("-m 40 -n 40 -k 40 --max-memory 1000000000000"), 0);
}

/* C = alpha op(A) op(B) + beta C against a float64 reference; beta = 0 never reads C
   (issue 14). */
static void test_alpha_beta(void **state) {
  (void)state;
  const int64_t m = 23, n = 17, k = 11;
  char a[300], b[300], c[300], cpath[300], args[2048], jpath[300];
  snprintf(a, sizeof a, "%s/aa.npy", dir);
  snprintf(b, sizeof b, "%s/ab.npy", dir);
  snprintf(c, sizeof c, "%s/ac.npy", dir);
  snprintf(cpath, sizeof cpath, "%s/c.npy", dir);
  snprintf(jpath, sizeof jpath, "%s/ab.json", dir);
  double *va = random_values(m * k, 11), *vb = random_values(k * n, 12),
         *vc = random_values(m * n, 13);
  save_matrix(a, va, m, k, TSR_F64);
  save_matrix(b, vb, k, n, TSR_F64);
  save_matrix(c, vc, m, n, TSR_F64);
  for (int np = 1; np <= 4; np *= 2) {
    snprintf(args, sizeof args,
             "-a '%s' -b '%s' -c '%s' --alpha 1.5 --beta -0.75 --block 4 --repeat 2 -o '%s' "
             "--json '%s'",
             a, b, c, cpath, jpath);
    int rc = run_np(np, args);
    if (rc != 0) print_error("np %d exit %d\n%s\n", np, rc, err_text);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out_text, "+ beta * C"));
    assert_non_null(strstr(out_text, "serial float64 product"));
    double *ref = reference_gemm(va, vb, vc, 1.5, -0.75, m, n, k);
    int64_t cm = 0, cn = 0;
    double *got = load_f64(cpath, &cm, &cn);
    assert_true(cm == m && cn == n);
    assert_true(tsr_test_rel_error(got, ref, (size_t)(m * n)) <= tsr_test_tol(TSR_F64, k));
    free(got), free(ref);
    char check[1024];
    snprintf(check, sizeof check,
             "python3 -c \"import json,sys; d=json.load(open(sys.argv[1])); "
             "assert d['beta']==-0.75 and d['alpha']==1.5; "
             "assert len(d['peak_memory_bytes'])==%d and min(d['peak_memory_bytes'])>0\" '%s'",
             np, jpath);
    assert_int_equal(system(check), 0);
    remove(cpath), remove(jpath);
  }
  /* beta = 0: C is never read, so NaN there (or a FIFO as -c) does not matter. */
  for (int64_t i = 0; i < m * n; i++)
    vc[i] = NAN;
  save_matrix(c, vc, m, n, TSR_F64);
  snprintf(args, sizeof args, "-a '%s' -b '%s' -c '%s' --alpha -2 -o '%s'", a, b, c, cpath);
  assert_int_equal(run(args), 0);
  double *ref = reference_gemm(va, vb, NULL, -2.0, 0.0, m, n, k);
  int64_t cm = 0, cn = 0;
  double *got = load_f64(cpath, &cm, &cn);
  assert_true(tsr_test_rel_error(got, ref, (size_t)(m * n)) <= tsr_test_tol(TSR_F64, k));
  free(got), free(ref);
  /* A C of the wrong shape is refused before any work. */
  save_matrix(c, vc, m, n - 1, TSR_F64);
  snprintf(args, sizeof args, "-a '%s' -b '%s' -c '%s' --beta 1 -o '%s'", a, b, c, cpath);
  remove(cpath);
  expect_failure(args, 1, "the product is 23x17");
  /* Random inputs with beta: C from seed S+3, verified (Freivalds and serial). */
  assert_int_equal(run("-m 20 -n 10 -k 5 --beta 2 --alpha 0.5 --block 4"), 0);
  assert_non_null(strstr(out_text, "serial float64 product"));
  free(va), free(vb), free(vc);
  remove(a), remove(b), remove(c);
}

/* Issue 30 through the job: products that underflow verify and match a float64 reference
   (f32 inputs scaled by 1e-22, f32 alpha = 1e-40, f64 alpha = 1e-310), a subnormal --alpha is
   accepted and one that rounds to 0 refused, the JSON report of a non-UTF-8 path is valid JSON
   (the byte as \ufffd), a huge refused shape has no undefined arithmetic on the way (UBSan
   reports would show in stderr), and TSR_WISDOM naming a FIFO neither hangs the job nor stays
   silent (one warning line per process at most, with the reason). */
static void test_issue30_job(void **state) {
  (void)state;
  const int64_t m = 24, n = 18, k = 20;
  char a[300], b[300], cpath[300], c0[300], jpath[300], args[2048], check[2048];
  snprintf(a, sizeof a, "%s/ua.npy", dir);
  snprintf(b, sizeof b, "%s/ub.npy", dir);
  snprintf(cpath, sizeof cpath, "%s/c.npy", dir);
  snprintf(c0, sizeof c0, "%s/c\xff.npy", dir);
  snprintf(jpath, sizeof jpath, "%s/u.json", dir);
  double *va = random_values(m * k, 61), *vb = random_values(k * n, 62);
  static const struct {
    tsr_dtype dt;
    double scale, alpha;
    const char *alpha_arg;
  } cases[] = {{TSR_F32, 1e-22, 1.0, "1"},
               {TSR_F32, 1.0, 1e-40, "1e-40"},
               {TSR_F64, 1.0, 1e-310, "1e-310"},
               {TSR_F64, 1e-160, 1.0, "1"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    tsr_dtype dt = cases[c].dt;
    double *sa = malloc((size_t)(m * k) * sizeof *sa), *sb = malloc((size_t)(k * n) * sizeof *sb);
    for (int64_t i = 0; i < m * k; i++)
      sa[i] = dt == TSR_F32 ? (double)(float)(va[i] * cases[c].scale) : va[i] * cases[c].scale;
    for (int64_t i = 0; i < k * n; i++)
      sb[i] = dt == TSR_F32 ? (double)(float)(vb[i] * cases[c].scale) : vb[i] * cases[c].scale;
    save_matrix(a, sa, m, k, dt);
    save_matrix(b, sb, k, n, dt);
    snprintf(args, sizeof args, "-a '%s' -b '%s' --alpha %s --block 4 -o '%s'", a, b,
             cases[c].alpha_arg, cpath);
    int rc = run(args);
    if (rc != 0) print_error("case %zu: exit %d\n%s\n%s\n", c, rc, out_text, err_text);
    assert_int_equal(rc, 0);
    assert_null(strstr(err_text, "runtime error"));
    double *ref = reference_gemm(sa, sb, NULL, cases[c].alpha, 0.0, m, n, k);
    int64_t cm = 0, cn = 0;
    double *got = load_f64(cpath, &cm, &cn);
    assert_true(cm == m && cn == n);
    /* Per element: the rounding of k + 3 operations plus, for each, an absolute loss of at
       most the smallest normal number where the result underflows. */
    double eps = dt == TSR_F32 ? FLT_EPSILON : DBL_EPSILON, lam = dt == TSR_F32 ? FLT_MIN : DBL_MIN;
    int64_t nonzero = 0;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double mag = 0;
        for (int64_t p = 0; p < k; p++)
          mag += fabs(sa[i * k + p] * sb[p * n + j]);
        double bound = (double)(k + 3) * (eps * fabs(cases[c].alpha) * mag + lam);
        if (!(fabs(got[i * n + j] - ref[i * n + j]) <= bound))
          fail_msg("case %zu (%d): C[%lld,%lld] = %g, reference %g, bound %g", c, (int)c,
                   (long long)i, (long long)j, got[i * n + j], ref[i * n + j], bound);
        nonzero += got[i * n + j] != 0.0;
      }
    assert_true(nonzero > m * n / 2); /* underflowed, not flushed to nothing */
    free(got), free(ref), free(sa), free(sb);
    remove(cpath);
  }
  /* A subnormal alpha on random inputs; one below the smallest subnormal is refused. */
  assert_int_equal(run("-m 30 -n 20 -k 25 --dtype f32 --alpha 1e-40 --block 8"), 0);
  assert_int_equal(run("-m 30 -n 20 -k 25 --dtype f64 --alpha 1e-310 --beta 1e-320 --block 8"), 0);
  expect_failure("-m 8 -n 8 -k 8 --alpha 1e-400", 2, "below the smallest double");
  /* A non-UTF-8 byte in a path: the JSON report parses, the byte is U+FFFD. */
  double *vc = random_values(m * n, 63);
  save_matrix(a, va, m, k, TSR_F64);
  save_matrix(b, vb, k, n, TSR_F64);
  save_matrix(c0, vc, m, n, TSR_F64);
  snprintf(args, sizeof args, "-a '%s' -b '%s' -c '%s' --beta 0.5 --json '%s'", a, b, c0, jpath);
  assert_int_equal(run(args), 0);
  snprintf(check, sizeof check,
           "python3 -c \"import json,sys; d=json.load(open(sys.argv[1], encoding='utf-8', "
           "errors='strict')); assert d['c'].endswith('/c\\ufffd.npy'), d['c']\" '%s'",
           jpath);
  assert_int_equal(system(check), 0);
  remove(jpath), remove(c0);
  /* 10^12 x 10^12: refused for memory, its need saturated, no signed overflow on the way. */
  assert_int_equal(run("-m 1000000000000 -n 1000000000000 -k 1"), 1);
  assert_non_null(strstr(err_text, "needs about"));
  assert_null(strstr(err_text, "runtime error"));
  /* TSR_WISDOM naming a FIFO: the job runs (under timeout), correct, and says why. */
  char fifo[300];
  snprintf(fifo, sizeof fifo, "%s/wisdom.fifo", dir);
  assert_int_equal(mkfifo(fifo, 0644), 0);
  setenv("TSR_WISDOM", fifo, 1);
  int rc = run("-m 64 -n 48 -k 40 --block 8");
  unsetenv("TSR_WISDOM");
  if (rc != 0) print_error("TSR_WISDOM=FIFO: exit %d\n%s\n", rc, err_text);
  assert_int_equal(rc, 0);
  int warned = count(err_text, "is ignored (");
  assert_true(warned >= 1 && warned <= 2);
  assert_non_null(strstr(err_text, "a FIFO"));
  remove(fifo);
  free(va), free(vb), free(vc);
  remove(a), remove(b);
}

/* --algorithm summa|2.5d|auto and --replicas (issue 15): the product against a float64
   reference on 4 ranks (c = 4: 1 x 1 x 4 layers; c = 0: the library's choice), the schedule
   in the text and JSON reports, the 2.5D replicas in the memory estimate, and the refusals. */
static void test_algorithms(void **state) {
  (void)state;
  const int64_t m = 29, n = 21, k = 37;
  char a[300], b[300], cpath[300], jpath[300], args[2048], check[2048];
  snprintf(a, sizeof a, "%s/ga.npy", dir);
  snprintf(b, sizeof b, "%s/gb.npy", dir);
  snprintf(cpath, sizeof cpath, "%s/c.npy", dir);
  snprintf(jpath, sizeof jpath, "%s/g.json", dir);
  double *va = random_values(m * k, 21), *vb = random_values(k * n, 22);
  save_matrix(a, va, m, k, TSR_F64);
  save_matrix(b, vb, k, n, TSR_F64);
  double *ref = reference_gemm(va, vb, NULL, -1.25, 0.0, m, n, k);
  static const char *const runs[3][2] = {
      {"--algorithm 2.5d --replicas 4", "d['algorithm']=='2.5d' and d['replicas']==4"},
      {"--algorithm=2.5d", "d['algorithm']=='2.5d' and d['replicas']>1"},
      {"--algorithm auto", "(d['algorithm'],d['replicas']>1) in (('summa',False),('2.5d',True))"},
  };
  for (int r = 0; r < 3; r++) {
    snprintf(args, sizeof args, "-a '%s' -b '%s' --alpha -1.25 --block 4 %s -o '%s' --json '%s'", a,
             b, runs[r][0], cpath, jpath);
    int rc = run_np(4, args);
    if (rc != 0) print_error("%s: exit %d\n%s\n", runs[r][0], rc, err_text);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out_text, "schedule: "));
    assert_non_null(strstr(out_text, "bytes redistributed per rank"));
    int64_t cm = 0, cn = 0;
    double *got = load_f64(cpath, &cm, &cn);
    assert_true(cm == m && cn == n);
    assert_true(tsr_test_rel_error(got, ref, (size_t)(m * n)) <= tsr_test_tol(TSR_F64, k));
    free(got);
    snprintf(check, sizeof check,
             "python3 -c \"import json,sys; d=json.load(open(sys.argv[1])); assert %s; "
             "assert (d['bytes_redistributed_max_rank']>0)==(d['algorithm']=='2.5d')\" '%s'",
             runs[r][1], jpath);
    assert_int_equal(system(check), 0);
    remove(cpath), remove(jpath);
  }
  /* The estimate counts the 2.5D replicas: c = 4 copies of partial C need more than SUMMA. */
  char j2[300];
  snprintf(j2, sizeof j2, "%s/g2.json", dir);
  snprintf(args, sizeof args, "-m 64 -n 64 -k 32 --block 4 --json '%s'", jpath);
  assert_int_equal(run_np(4, args), 0);
  snprintf(args, sizeof args,
           "-m 64 -n 64 -k 32 --block 4 --algorithm 2.5d --replicas 4 --json '%s'", j2);
  assert_int_equal(run_np(4, args), 0);
  snprintf(check, sizeof check,
           "python3 -c \"import json,sys; s=json.load(open(sys.argv[1])); "
           "t=json.load(open(sys.argv[2])); "
           "assert s['algorithm']=='summa' and t['algorithm']=='2.5d'; "
           "assert min(t['memory_needed_bytes']) > max(s['memory_needed_bytes'])\" '%s' '%s'",
           jpath, j2);
  assert_int_equal(system(check), 0);
  remove(jpath), remove(j2);
  /* Refusals, before any work (2 ranks). */
  expect_failure("-m 8 -n 8 -k 8 --algorithm 2.5d --replicas 3", 2,
                 "3 replicas do not split 2 ranks");
  expect_failure("-m 8 -n 8 -k 8 --algorithm=bogus", 2, "expected one of summa|2.5d|auto");
  expect_failure("-m 8 -n 8 -k 8 --algorithm 2.5d --replicas -1", 2, "for --replicas");
  expect_failure("-m 8 -n 8 -k 8 --replicas 2", 2, "--replicas applies to --algorithm 2.5d");
  expect_failure("-m 400 -n 400 -k 400 --memory-per-rank 1000000", 1, "over --max-memory");
  assert_int_equal(run("-m 8 -n 8 -k 8 --block 2 --algorithm 2.5d --replicas 2"), 0);
  assert_non_null(strstr(out_text, "algorithm: 2.5d, replicas 2"));
  free(va), free(vb), free(ref);
  remove(a), remove(b);
}

/* Each input is opened once per rank (np 1 and 2; -a, -b and -c with beta != 0): the
   LD_PRELOAD shim tests/open_count.c counts every open, openat and fopen of the three paths in
   each job process (issue 32). A test of the count itself: a count of 0 or 2 fails. */
static void test_opens_once(void **state) {
  (void)state;
#ifndef TSR_OPEN_COUNT_SHIM
  skip();
#else
  char a[300], b[300], c[300], o[300], counts[300], cmd[8192], asan[1024];
  snprintf(a, sizeof a, "%s/open_a.npy", dir);
  snprintf(b, sizeof b, "%s/open_b.npy", dir);
  snprintf(c, sizeof c, "%s/open_c.npy", dir);
  snprintf(o, sizeof o, "%s/open_o.npy", dir);
  snprintf(counts, sizeof counts, "%s/opens.txt", dir);
  double *va = random_values(9 * 7, 21), *vb = random_values(7 * 5, 22),
         *vc = random_values(9 * 5, 23);
  save_matrix(a, va, 9, 7, TSR_F64);
  save_matrix(b, vb, 7, 5, TSR_F64);
  save_matrix(c, vc, 9, 5, TSR_F64);
  /* The shim is preloaded before an ASan runtime the job links: let ASan accept that. */
  const char *prev = getenv("ASAN_OPTIONS");
  snprintf(asan, sizeof asan, "%s%sverify_asan_link_order=0", prev ? prev : "",
           prev && *prev ? ":" : "");
  for (int np = 1; np <= 2; np++) {
    remove(counts);
    remove(o);
    snprintf(cmd, sizeof cmd,
             "'%s' -n %d --oversubscribe -x LD_PRELOAD='%s' -x TSR_OPEN_COUNT_PATHS='%s:%s:%s' "
             "-x TSR_OPEN_COUNT_OUT='%s' -x ASAN_OPTIONS='%s' '%s' " CPU
             " -a '%s' -b '%s' -c '%s' --alpha 1.5 --beta 0.5 --block 4 -o '%s'",
             mpiexec, np, TSR_OPEN_COUNT_SHIM, a, b, c, counts, asan, prog, a, b, c, o);
    int rc = run_shell(cmd);
    if (rc != 0) print_error("np %d: exit %d\n%s\n", np, rc, err_text);
    assert_int_equal(rc, 0);
    assert_true(exists(o));
    FILE *f = fopen(counts, "r");
    assert_non_null(f);
    long pid = 0, ca = 0, cb = 0, cc = 0;
    int lines = 0;
    while (fscanf(f, "%ld %ld %ld %ld", &pid, &ca, &cb, &cc) == 4) {
      if (ca != 1 || cb != 1 || cc != 1)
        print_error("np %d: process %ld opened A %ld, B %ld, C %ld times\n", np, pid, ca, cb, cc);
      assert_true(ca == 1 && cb == 1 && cc == 1);
      lines++;
    }
    fclose(f);
    assert_int_equal(lines, np);
  }
  free(va), free(vb), free(vc);
  remove(a), remove(b), remove(c), remove(o), remove(counts);
#endif
}

/* ---------------------------------------------------------------- issue 50: complex --- */

/* Writes a complex .npy by hand (format 1.0, descr '<c16' or '<c8', C or Fortran order) from
   row-major float64-complex values v (m x n): independent of the library's writer. */
static void save_complex(const char *path, const double _Complex *v, int64_t m, int64_t n, int c64,
                         int fortran) {
  char dict[200];
  int len =
      snprintf(dict, sizeof dict, "{'descr': '<c%d', 'fortran_order': %s, 'shape': (%lld, %lld), }",
               c64 ? 8 : 16, fortran ? "True" : "False", (long long)m, (long long)n);
  int pad = (64 - (10 + len + 1) % 64) % 64;
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  magic[8] = (unsigned char)((len + pad + 1) & 0xff);
  magic[9] = (unsigned char)((len + pad + 1) >> 8);
  fwrite(magic, 1, 10, f);
  fwrite(dict, 1, (size_t)len, f);
  for (int i = 0; i < pad; i++)
    fputc(' ', f);
  fputc('\n', f);
  for (int64_t e = 0; e < m * n; e++) {
    int64_t i = fortran ? e % m : e / n, j = fortran ? e / m : e % n;
    double _Complex z = v[i * n + j];
    if (c64) {
      float p[2] = {(float)creal(z), (float)cimag(z)};
      fwrite(p, sizeof p, 1, f);
    } else {
      double p[2] = {creal(z), cimag(z)};
      fwrite(p, sizeof p, 1, f);
    }
  }
  fclose(f);
}

/* Reads the job's complex output (C order, little-endian '<c16' or '<c8'): m x n values. */
static double _Complex *load_complex(const char *path, int64_t m, int64_t n, const char *descr) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  unsigned char magic[10];
  assert_int_equal(fread(magic, 1, 10, f), 10);
  size_t hl = magic[8] | (size_t)magic[9] << 8;
  char *h = calloc(hl + 1, 1);
  assert_int_equal(fread(h, 1, hl, f), hl);
  char want[64];
  snprintf(want, sizeof want, "'descr': '%s'", descr);
  if (!strstr(h, want) || !strstr(h, "'fortran_order': False")) print_error("header: %s\n", h);
  assert_non_null(strstr(h, want));
  snprintf(want, sizeof want, "(%lld, %lld)", (long long)m, (long long)n);
  assert_non_null(strstr(h, want));
  free(h);
  double _Complex *v = malloc((size_t)(m * n) * sizeof *v);
  int c64 = strcmp(descr, "<c8") == 0;
  for (int64_t e = 0; e < m * n; e++) {
    if (c64) {
      float p[2];
      assert_int_equal(fread(p, sizeof p, 1, f), 1);
      v[e] = p[0] + p[1] * I;
    } else {
      double p[2];
      assert_int_equal(fread(p, sizeof p, 1, f), 1);
      v[e] = p[0] + p[1] * I;
    }
  }
  fclose(f);
  return v;
}

/* Random complex values (kind 1: purely imaginary), exact in c64 when c64. */
static double _Complex *random_complex(int64_t count, uint64_t seed, int kind, int c64) {
  double *r = random_values(2 * count, seed);
  double _Complex *z = malloc((size_t)count * sizeof *z);
  for (int64_t i = 0; i < count; i++) {
    double re = kind == 1 ? 0.0 : r[2 * i], im = r[2 * i + 1];
    if (c64) re = (float)re, im = (float)im;
    z[i] = re + im * I;
  }
  free(r);
  return z;
}

/* C = alpha op(A) op(B) + beta C0 in float64 complex, op 0 N, 1 T, 2 C; A stored m x k, or
   k x m when ta; C0 NULL: beta not applied. */
static double _Complex *reference_complex(int ta, int tb, int64_t m, int64_t n, int64_t k,
                                          double _Complex alpha, const double _Complex *a,
                                          const double _Complex *b, double _Complex beta,
                                          const double _Complex *c0) {
  double _Complex *c = malloc((size_t)(m * n) * sizeof *c);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double _Complex s = 0;
      for (int64_t l = 0; l < k; l++) {
        double _Complex x = ta ? a[l * m + i] : a[i * k + l], y = tb ? b[j * k + l] : b[l * n + j];
        if (ta == 2) x = conj(x);
        if (tb == 2) y = conj(y);
        s += x * y;
      }
      c[i * n + j] = alpha * s + (c0 ? beta * c0[i * n + j] : 0);
    }
  return c;
}

static double complex_rel_error(const double _Complex *x, const double _Complex *ref, int64_t n) {
  double d = 0, r = 0;
  for (int64_t i = 0; i < n; i++) {
    double e = cabs(x[i] - ref[i]);
    d += isnan(e) ? INFINITY : e * e;
    r += cabs(ref[i]) * cabs(ref[i]);
  }
  return sqrt(d / r);
}

/* The job on complex .npy inputs: c128 with --transa c (A purely imaginary: a missing
   conjugation negates the product), complex alpha and beta, on 1, 2 and 4 ranks, against the
   float64-complex reference; the JSON report names the dtype and the ops; c64 Fortran-order
   inputs with --transb c; complex random inputs; NaN in a complex input (written, exit 4). */
static void test_complex_job(void **state) {
  (void)state;
  const int64_t m = 13, n = 9, k = 7;
  char a[300], b[300], c[300], cpath[300], jpath[300], args[2048];
  snprintf(a, sizeof a, "%s/za.npy", dir);
  snprintf(b, sizeof b, "%s/zb.npy", dir);
  snprintf(c, sizeof c, "%s/zc.npy", dir);
  snprintf(cpath, sizeof cpath, "%s/c.npy", dir);
  snprintf(jpath, sizeof jpath, "%s/z.json", dir);
  double _Complex *va = random_complex(k * m, 51, 1, 0), *vb = random_complex(k * n, 52, 0, 0),
                  *vc = random_complex(m * n, 53, 0, 0);
  save_complex(a, va, k, m, 0, 0);
  save_complex(b, vb, k, n, 0, 1);
  save_complex(c, vc, m, n, 0, 0);
  const double _Complex alpha = 1.5 - 0.5 * I, beta = 0.25 + 0.75 * I;
  double _Complex *ref = reference_complex(2, 0, m, n, k, alpha, va, vb, beta, vc);
  for (int np = 1; np <= 4; np *= 2) {
    snprintf(args, sizeof args,
             "-a '%s' -b '%s' -c '%s' --transa c --alpha 1.5,-0.5 --beta 0.25,0.75 --block 3 "
             "-o '%s' --json '%s'",
             a, b, c, cpath, jpath);
    int rc = run_np(np, args);
    if (rc != 0) print_error("np %d exit %d\n%s\n%s\n", np, rc, out_text, err_text);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out_text, "A^H"));
    assert_non_null(strstr(out_text, "c128"));
    assert_non_null(strstr(out_text, "8 m n k"));
    assert_non_null(strstr(out_text, "serial float64 product"));
    double _Complex *got = load_complex(cpath, m, n, "<c16");
    double err = complex_rel_error(got, ref, m * n);
    if (!(err <= 4 * tsr_test_tol(TSR_F64, 2 * k))) print_error("np %d error %g\n", np, err);
    assert_true(err <= 4 * tsr_test_tol(TSR_F64, 2 * k));
    free(got);
    char check[1024];
    snprintf(check, sizeof check,
             "python3 -c \"import json,sys; d=json.load(open(sys.argv[1])); "
             "assert d['dtype']=='c128' and d['op_a']=='C' and d['op_b']=='N' and d['transa']; "
             "assert d['alpha']==1.5 and d['alpha_im']==-0.5 and d['beta_im']==0.75\" '%s'",
             jpath);
    assert_int_equal(system(check), 0);
    remove(cpath), remove(jpath);
  }
  free(ref);
  /* c64, Fortran-order inputs, --transb c, a purely imaginary alpha, beta 0 (C not read). */
  double _Complex *fa = random_complex(m * k, 61, 0, 1), *fb = random_complex(n * k, 62, 0, 1);
  save_complex(a, fa, m, k, 1, 1);
  save_complex(b, fb, n, k, 1, 1);
  snprintf(args, sizeof args, "-a '%s' -b '%s' --transb c --alpha 0,2 --block 4 -o '%s'", a, b,
           cpath);
  int rc = run(args);
  if (rc != 0) print_error("exit %d\n%s\n", rc, err_text);
  assert_int_equal(rc, 0);
  ref = reference_complex(0, 2, m, n, k, 2.0 * I, fa, fb, 0, NULL);
  double _Complex *got = load_complex(cpath, m, n, "<c8");
  assert_true(complex_rel_error(got, ref, m * n) <= 4 * tsr_test_tol(TSR_F32, 2 * k));
  free(got), free(ref);
  remove(cpath);
  /* Random complex inputs, every op pair, verified by Freivalds and the serial product. */
  const char *ops[3] = {"n", "t", "c"};
  for (int x = 0; x < 3; x++) {
    snprintf(args, sizeof args,
             "-m 11 -n 6 -k 5 --dtype c64 --transa %s --transb %s --alpha 0.5,1 --beta -1,0.5 "
             "--block 2",
             ops[x], ops[2 - x]);
    rc = run(args);
    if (rc != 0) print_error("%s: exit %d\n%s\n", args, rc, err_text);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out_text, "serial float64 product"));
  }
  /* NaN in a complex input: multiplied, written, not verified, exit 4. */
  va[3] = NAN * I;
  save_complex(a, va, k, m, 0, 0);
  save_complex(b, vb, k, n, 0, 0);
  snprintf(args, sizeof args, "-a '%s' -b '%s' --transa c -o '%s'", a, b, cpath);
  rc = run(args);
  if (rc != 4) print_error("exit %d\n%s\n", rc, err_text);
  assert_int_equal(rc, 4);
  assert_true(exists(cpath));
  remove(cpath);
  free(va), free(vb), free(vc), free(fa), free(fb);
  remove(a), remove(b), remove(c);
}

/* Bad complex input: a scalar that does not parse as complex, --transa c with an integer
   dtype, complex scalars for real matrices, a complex .npy of an itemsize Tessera does not read,
   a complex C for real A and B. */
static void test_complex_bad_input(void **state) {
  (void)state;
  expect_failure("-m 4 -n 4 -k 4 --dtype c128 --alpha 1.5,x", 2,
                 "bad value '1.5,x' for --alpha: expected a finite number or a complex");
  expect_failure("-m 4 -n 4 -k 4 --dtype c64 --beta ,1", 2, "bad value ',1' for --beta");
  expect_failure("-m 4 -n 4 -k 4 --dtype i32 --transa c", 2, "bad value 'i32' for --dtype");
  expect_failure("-m 4 -n 4 -k 4 --transa x", 2, "unexpected argument 'x'");
  expect_failure("-m 4 -n 4 -k 4 --alpha 1,0.5", 2,
                 "complex scalars need complex matrices (c64 or c128), the inputs are f64");
  char a[300], b[300], args[1024];
  snprintf(a, sizeof a, "%s/wa.npy", dir);
  snprintf(b, sizeof b, "%s/wb.npy", dir);
  double _Complex *v = random_complex(16, 70, 0, 0);
  save_complex(b, v, 4, 4, 0, 0);
  /* '<c32' (complex256): a header Tessera parses and refuses, naming the type */
  FILE *f = fopen(a, "wb");
  assert_non_null(f);
  const char hdr[] = "{'descr': '<c32', 'fortran_order': False, 'shape': (2, 2), }";
  int len = (int)strlen(hdr), pad = (64 - (10 + len + 1) % 64) % 64;
  unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(len + pad + 1),
                             0};
  fwrite(magic, 1, 10, f);
  fwrite(hdr, 1, (size_t)len, f);
  for (int i = 0; i < pad; i++)
    fputc(' ', f);
  fputc('\n', f);
  fwrite(v, 1, 128, f);
  fclose(f);
  snprintf(args, sizeof args, "-a '%s' -b '%s'", a, b);
  expect_failure(args, 1, "c32");
  /* c128 A with f64 B */
  double *r = random_values(16, 71);
  save_matrix(a, r, 4, 4, TSR_F64);
  snprintf(args, sizeof args, "-a '%s' -b '%s'", a, b);
  expect_failure(args, 1, "dtypes differ: A is f64, B is c128");
  free(v), free(r);
  remove(a), remove(b);
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

/* Three groups, three CTest tests: "devices" (usage, --device cpu/cuda/auto: what differs
   between a CPU, a CUDA and a HIP build), "job" (results, options, IEEE data, memory,
   alpha/beta) and "faults" (targets, full disk, signals, per-rank paths, long names). The GPU
   builds' CI variants run the first only (scripts/test.d/cuda.sh, hip.sh): the other two drive
   the same CPU job as the cpu and asan variants. */
int main(int argc, char **argv) {
  if ((argc != 5 && argc != 6) || (strcmp(argv[4], "devices") != 0 && strcmp(argv[4], "job") != 0 &&
                                   strcmp(argv[4], "faults") != 0)) {
    fprintf(stderr,
            "usage: %s <mpiexec> <tessera-gemm> <data folder> devices|job|faults [TESTS]\n"
            "TESTS: a cmocka name pattern (e.g. 'test_json*') to run part of the group\n",
            argv[0]);
    return 2;
  }
  if (argc == 6) cmocka_set_test_filter(argv[5]);
  mpiexec = argv[1];
  prog = argv[2];
  data = argv[3];
  if (tsr_device_count(TSR_DEVICE_CUDA, &ncuda) != TSR_OK ||
      tsr_device_count(TSR_DEVICE_HIP, &nhip) != TSR_OK) {
    fprintf(stderr, "tsr_device_count: %s\n", tsr_last_error());
    return 1;
  }
  const struct CMUnitTest devices[] = {
      cmocka_unit_test(test_help_and_usage),
      cmocka_unit_test(test_devices),
  };
  const struct CMUnitTest job[] = {
      cmocka_unit_test(test_random_problem),    cmocka_unit_test(test_wine_gram),
      cmocka_unit_test(test_bad_input),         cmocka_unit_test(test_option_values),
      cmocka_unit_test(test_ieee_inputs),       cmocka_unit_test(test_memory_check),
      cmocka_unit_test(test_alpha_beta),        cmocka_unit_test(test_algorithms),
      cmocka_unit_test(test_issue30_job),       cmocka_unit_test(test_opens_once),
      cmocka_unit_test(test_json_schema),       cmocka_unit_test(test_complex_job),
      cmocka_unit_test(test_complex_bad_input),
  };
  const struct CMUnitTest faults[] = {
      cmocka_unit_test(test_argv0_spelling),    cmocka_unit_test(test_json_targets),
      cmocka_unit_test(test_output_targets),    cmocka_unit_test(test_full_disk),
      cmocka_unit_test(test_interrupted_write), cmocka_unit_test(test_per_rank_paths),
      cmocka_unit_test(test_long_output_names),
  };
  if (strcmp(argv[4], "devices") == 0) return cmocka_run_group_tests(devices, setup, teardown);
  if (strcmp(argv[4], "job") == 0) return cmocka_run_group_tests(job, setup, teardown);
  return cmocka_run_group_tests(faults, setup, teardown);
}
