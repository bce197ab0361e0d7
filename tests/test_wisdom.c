/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU GEMM's wisdom file (src/omp/gemm/config/gemm_wisdom.c): written and read back, used by
 * the library (the configuration of a call comes from it, and the GEMM stays correct against a
 * float64 reference), and ignored, never fatal, when corrupt, truncated, of another version,
 * from another CPU, naming a kernel that does not exist, or missing. Also the path rules
 * (TSR_WISDOM, XDG_CACHE_HOME, HOME) and a write that cannot succeed.
 * Issue 30: a FIFO, device or directory as the wisdom file is refused without blocking, and
 * as a destination refused, never replaced (a symbolic link too); four processes merging into
 * one file under its lock keep every entry; an ignored file named by TSR_WISDOM gives one
 * warning line per process (a fresh process: this program re-run with --child).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tsr_test.h"

#include "omp/gemm/gemm_tune.h"
#include "tsr_test_gemm.h"
#include "omp/omp_internal.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

static char tmpdir[256];

/* This program's GEMMs run on the thread count set (no adaptive count), passed with each call. */
static const tsr__gemm_tuning tuning = {
    .fixed_threads = true, .stream_min_bytes = -1, .sup_mnk = -1};

/* A failing status and a message containing needle. The wisdom functions are internal and
   name the program that calls them (tessera-tune) through their fn argument, so the suite's
   TSR_ASSERT_STATUS rule (the message starts with the called function's name) does not apply. */
#define ASSERT_FAILS(expr, code, needle)                                                           \
  do {                                                                                             \
    const tsr_status st_ = (expr);                                                                 \
    if (st_ != (code) || !strstr(tsr_last_error(), (needle)))                                      \
      fail_msg("%s: status %s, message \"%s\"; want %s and \"%s\"", #expr, tsr_status_name(st_),   \
               tsr_last_error(), tsr_status_name(code), (needle));                                 \
  } while (0)

static int setup(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/tsr_wisdom_XXXXXX");
  if (!mkdtemp(tmpdir)) return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[320];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

static void path_in_tmp(char *buf, size_t size, const char *name) {
  snprintf(buf, size, "%s/%s", tmpdir, name);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_true(fputs(text, f) >= 0);
  assert_int_equal(fclose(f), 0);
}

/* A wisdom for this CPU with entries for both dtypes on 1 and 2 threads, using the registry's
   kernels and blocks different from the defaults. */
static void make_wisdom(tsr__gemm_wisdom *w) {
  memset(w, 0, sizeof *w);
  snprintf(w->cpu, sizeof w->cpu, "%s", tsr__cpu_facts_get()->model_name);
  for (int d = 0; d < 2; ++d)
    for (int t = 1; t <= 2; ++t) {
      const tsr_dtype dt = d == 0 ? TSR_F32 : TSR_F64;
      tsr__gemm_config c;
      tsr__gemm_config_default(dt, t, &c);
      tsr__gemm_wisdom_entry *e = &w->e[w->n++];
      e->dtype = dt;
      e->threads = t;
      snprintf(e->kernel, sizeof e->kernel, "%s", c.ker->name);
      e->kc = 40 + 8 * t;          /* small, so the GEMM below crosses several KC slices */
      e->mc = c.ker->mr * (2 + t); /* several MC blocks */
      e->nc = c.ker->nr * (3 + d); /* several NC blocks */
      e->grain = t;
    }
}

/* C = A*B through tsr__omp_gemm against a float64 reference. */
static void check_gemm(tsr_dtype dt, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  assert_true(tsr_test_native_gemm_ok(dt, m, n, k, seed, seed + 1, &tuning));
}

static void use_file(const char *path) {
  setenv("TSR_WISDOM", path, 1);
  tsr__gemm_wisdom_reload();
}

static void assert_state_starts(const char *prefix) {
  char st[700];
  tsr__gemm_wisdom_status(st, sizeof st);
  if (strncmp(st, prefix, strlen(prefix)) != 0)
    fail_msg("wisdom state \"%s\", want \"%s...\"", st, prefix);
}

/* Written, read back equal, and used by the library for exactly its (dtype, threads). */
static void test_write_read_use(void **state) {
  (void)state;
  char path[320];
  path_in_tmp(path, sizeof path, "sub/wisdom"); /* the parent directory is created */
  tsr__gemm_wisdom w, r;
  make_wisdom(&w);
  TSR_ASSERT_OK(tsr__gemm_wisdom_write(path, &w));
  TSR_ASSERT_OK(tsr__gemm_wisdom_read(path, &r));
  assert_string_equal(r.cpu, w.cpu);
  assert_int_equal(r.n, w.n);
  for (int i = 0; i < w.n; ++i) {
    assert_int_equal(r.e[i].dtype, w.e[i].dtype);
    assert_int_equal(r.e[i].threads, w.e[i].threads);
    assert_string_equal(r.e[i].kernel, w.e[i].kernel);
    assert_int_equal(r.e[i].kc, w.e[i].kc);
    assert_int_equal(r.e[i].mc, w.e[i].mc);
    assert_int_equal(r.e[i].nc, w.e[i].nc);
    assert_int_equal(r.e[i].grain, w.e[i].grain);
  }
  /* No temporary file is left beside it. */
  char dir[320];
  path_in_tmp(dir, sizeof dir, "sub");
  char cmd[400];
  snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
  assert_int_equal(system(cmd), 0);

  use_file(path);
  assert_state_starts("used:");
  for (int i = 0; i < w.n; ++i) {
    tsr__gemm_config c;
    tsr__gemm_config_get(w.e[i].dtype, w.e[i].threads, NULL, &c);
    assert_string_equal(c.source, "wisdom");
    assert_string_equal(c.ker->name, w.e[i].kernel);
    assert_int_equal(c.kc, w.e[i].kc);
    assert_int_equal(c.mc, w.e[i].mc);
    assert_int_equal(c.nc, w.e[i].nc);
    assert_int_equal(c.grain, w.e[i].grain);
#if defined(_OPENMP)
    omp_set_num_threads(w.e[i].threads);
#endif
    check_gemm(w.e[i].dtype, 3 * c.mc + 5, 2 * c.nc + 7, 3 * c.kc + 1, 100 + (uint64_t)i);
  }
  /* A thread count without an entry runs with the registry's configuration. */
  tsr__gemm_config c, d;
  tsr__gemm_config_get(TSR_F64, 7, NULL, &c);
  tsr__gemm_config_default(TSR_F64, 7, &d);
  assert_string_not_equal(c.source, "wisdom");
  assert_int_equal(c.kc, d.kc);
  /* A call whose tuning says no_wisdom: defaults, while other calls keep the wisdom. */
  const tsr__gemm_tuning off = {.no_wisdom = true, .stream_min_bytes = -1, .sup_mnk = -1};
  tsr__gemm_config_get(TSR_F64, 1, &off, &c);
  assert_string_not_equal(c.source, "wisdom");
  tsr__gemm_config_get(TSR_F64, 1, NULL, &c);
}

/* Each bad file is rejected by the reader with the right status and ignored by the library,
   whose GEMMs then run with the registry's configuration and stay correct. */
static void test_bad_files_ignored(void **state) {
  (void)state;
  const char *cpu = tsr__cpu_facts_get()->model_name;
  tsr__gemm_config def;
  tsr__gemm_config_default(TSR_F64, 1, &def);
  char good_entry[160];
  snprintf(good_entry, sizeof good_entry, "entry f64 1 %s 64 %d %d 2\n", def.ker->name,
           def.ker->mr * 2, def.ker->nr * 2);
  struct {
    const char *name;
    char text[1200];
    tsr_status want;
  } cases[12];
  int n = 0;
  cases[n].name = "garbage";
  snprintf(cases[n].text, sizeof cases[n].text,
           "\x7f"
           "ELF\x01garbage\n");
  cases[n++].want = TSR_ERR_FORMAT;
  cases[n].name = "empty";
  cases[n].text[0] = '\0';
  cases[n++].want = TSR_ERR_FORMAT;
  cases[n].name = "version";
  snprintf(cases[n].text, sizeof cases[n].text, "tessera-wisdom 99\ncpu %s\n%s", cpu, good_entry);
  cases[n++].want = TSR_ERR_FORMAT;
  cases[n].name = "foreign";
  snprintf(cases[n].text, sizeof cases[n].text, "tessera-wisdom 1\ncpu Some Other CPU 9000\n%s",
           good_entry);
  cases[n++].want = TSR_ERR_INCONSISTENT;
  cases[n].name = "truncated";
  snprintf(cases[n].text, sizeof cases[n].text, "tessera-wisdom 1\ncpu %s\nentry f64 1 %s 64", cpu,
           def.ker->name);
  cases[n++].want = TSR_ERR_FORMAT;
  cases[n].name = "kernel";
  snprintf(cases[n].text, sizeof cases[n].text,
           "tessera-wisdom 1\ncpu %s\nentry f64 1 quantum-99x99 64 64 64 4\n", cpu);
  cases[n++].want = TSR_ERR_FORMAT;
  cases[n].name = "dtype-kernel";
  snprintf(cases[n].text, sizeof cases[n].text,
           "tessera-wisdom 1\ncpu %s\nentry f32 1 %s 64 %d %d 4\n", cpu, def.ker->name, def.ker->mr,
           def.ker->nr);
  cases[n++].want = TSR_ERR_FORMAT;
  cases[n].name = "blocks";
  snprintf(cases[n].text, sizeof cases[n].text,
           "tessera-wisdom 1\ncpu %s\nentry f64 1 %s -5 %d 99999999 4\n", cpu, def.ker->name,
           def.ker->mr);
  cases[n++].want = TSR_ERR_FORMAT;
  cases[n].name = "grain";
  snprintf(cases[n].text, sizeof cases[n].text,
           "tessera-wisdom 1\ncpu %s\nentry f64 2 %s 64 %d %d 0\n", cpu, def.ker->name, def.ker->mr,
           def.ker->nr);
  cases[n++].want = TSR_ERR_FORMAT;
  cases[n].name = "nocpu";
  snprintf(cases[n].text, sizeof cases[n].text, "tessera-wisdom 1\n%s", good_entry);
  cases[n++].want = TSR_ERR_FORMAT;
  cases[n].name = "trailing";
  snprintf(cases[n].text, sizeof cases[n].text,
           "tessera-wisdom 1\ncpu %s\nentry f64 1 %s 64 %d %d 2 extra\n", cpu, def.ker->name,
           def.ker->mr, def.ker->nr);
  cases[n++].want = TSR_ERR_FORMAT;
  cases[n].name = "longline";
  memset(cases[n].text, 'x', 1100);
  cases[n].text[1100] = '\0';
  cases[n++].want = TSR_ERR_FORMAT;
  for (int i = 0; i < n; ++i) {
    char path[320];
    path_in_tmp(path, sizeof path, cases[i].name);
    write_text(path, cases[i].text);
    tsr__gemm_wisdom w;
    const tsr_status st = tsr__gemm_wisdom_read(path, &w);
    if (st != cases[i].want)
      fail_msg("%s: status %s, want %s (%s)", cases[i].name, tsr_status_name(st),
               tsr_status_name(cases[i].want), tsr_last_error());
    assert_true(strlen(tsr_last_error()) > 0);
    use_file(path);
    assert_state_starts("ignored:");
    tsr__gemm_config c;
    tsr__gemm_config_get(TSR_F64, 1, NULL, &c);
    assert_string_not_equal(c.source, "wisdom");
    assert_int_equal(c.kc, def.kc);
#if defined(_OPENMP)
    omp_set_num_threads(1);
#endif
    check_gemm(TSR_F64, 33, 29, 70, 200 + (uint64_t)i);
  }
  /* The good entry alone in a valid file is used (the cases above differ only in their fault). */
  char path[320];
  path_in_tmp(path, sizeof path, "good");
  char text[600];
  snprintf(text, sizeof text, "# comment\ntessera-wisdom 1\ncpu %s\n\n%s", cpu, good_entry);
  write_text(path, text);
  use_file(path);
  assert_state_starts("used:");
  /* Missing file: "none". */
  path_in_tmp(path, sizeof path, "missing");
  use_file(path);
  assert_state_starts("none:");
  unsetenv("TSR_WISDOM");
  tsr__gemm_wisdom_reload();
}

/* $TSR_WISDOM, else $XDG_CACHE_HOME/tessera/wisdom, else $HOME/.cache/tessera/wisdom. */
static void test_path_rules(void **state) {
  (void)state;
  char saved_home[512] = "", saved_xdg[512] = "";
  const char *h = getenv("HOME"), *x = getenv("XDG_CACHE_HOME");
  if (h) snprintf(saved_home, sizeof saved_home, "%s", h);
  if (x) snprintf(saved_xdg, sizeof saved_xdg, "%s", x);
  char p[512];
  setenv("TSR_WISDOM", "/a/b", 1);
  setenv("XDG_CACHE_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  TSR_ASSERT_OK(tsr__gemm_wisdom_path(p, sizeof p));
  assert_string_equal(p, "/a/b");
  unsetenv("TSR_WISDOM");
  TSR_ASSERT_OK(tsr__gemm_wisdom_path(p, sizeof p));
  assert_string_equal(p, "/x/tessera/wisdom");
  unsetenv("XDG_CACHE_HOME");
  TSR_ASSERT_OK(tsr__gemm_wisdom_path(p, sizeof p));
  assert_string_equal(p, "/h/.cache/tessera/wisdom");
  ASSERT_FAILS(tsr__gemm_wisdom_path(p, 4), TSR_ERR_INVALID_ARGUMENT, "longer");
  unsetenv("HOME");
  ASSERT_FAILS(tsr__gemm_wisdom_path(p, sizeof p), TSR_ERR_INVALID_ARGUMENT, "unset");
  if (saved_home[0]) setenv("HOME", saved_home, 1);
  if (saved_xdg[0]) setenv("XDG_CACHE_HOME", saved_xdg, 1);
}

/* A write that cannot succeed returns TSR_ERR_IO and leaves nothing behind; an entry that
   would not read back is refused. */
static void test_write_errors(void **state) {
  (void)state;
  tsr__gemm_wisdom w;
  make_wisdom(&w);
  char path[320];
  path_in_tmp(path, sizeof path, "no/such/dir/wisdom");
  ASSERT_FAILS(tsr__gemm_wisdom_write(path, &w), TSR_ERR_IO, "no/such");
  path_in_tmp(path, sizeof path, "bad");
  snprintf(w.e[0].kernel, sizeof w.e[0].kernel, "nonexistent-1x1");
  ASSERT_FAILS(tsr__gemm_wisdom_write(path, &w), TSR_ERR_INVALID_ARGUMENT, "kernel");
  assert_int_not_equal(access(path, F_OK), 0);
}

/* Waits for pid at most `seconds`; kills it and fails the test when it is still running. */
static int wait_exit(pid_t pid, double seconds, const char *what) {
  struct timespec nap = {0, 10 * 1000 * 1000};
  for (double t = 0; t < seconds; t += 0.01) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    nanosleep(&nap, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  fail_msg("%s: still running after %.0f s (blocked?)", what, seconds);
  return -1;
}

/* Not regular files: read without blocking and refused (TSR_ERR_IO naming the kind); as
   destinations refused and left as they were. A forked reader is timed so that a blocking
   open fails the test instead of hanging it. */
static void test_special_files(void **state) {
  (void)state;
  char fifo[320], dir[320], link[320], target[320];
  path_in_tmp(fifo, sizeof fifo, "fifo");
  path_in_tmp(dir, sizeof dir, "adir");
  path_in_tmp(link, sizeof link, "link");
  path_in_tmp(target, sizeof target, "target");
  assert_int_equal(mkfifo(fifo, 0644), 0);
  assert_int_equal(mkdir(dir, 0755), 0);
  write_text(target, "not wisdom\n");
  assert_int_equal(symlink(target, link), 0);
  struct {
    const char *path, *kind;
  } reads[] = {{fifo, "FIFO"}, {dir, "directory"}, {"/dev/null", "character device"}};
  for (size_t i = 0; i < sizeof reads / sizeof reads[0]; ++i) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      tsr__gemm_wisdom w;
      tsr_status st = tsr__gemm_wisdom_read(reads[i].path, &w);
      _exit(st == TSR_ERR_IO && strstr(tsr_last_error(), reads[i].kind) ? 0 : 1);
    }
    assert_int_equal(wait_exit(pid, 10, reads[i].path), 0);
  }
  tsr__gemm_wisdom w;
  make_wisdom(&w);
  ASSERT_FAILS(tsr__gemm_wisdom_write(fifo, &w), TSR_ERR_IO, "a FIFO");
  ASSERT_FAILS(tsr__gemm_wisdom_write(link, &w), TSR_ERR_IO, "symbolic link");
  ASSERT_FAILS(tsr__gemm_wisdom_write(dir, &w), TSR_ERR_IO, "directory");
  ASSERT_FAILS(tsr__gemm_wisdom_update(link, &w, NULL), TSR_ERR_IO, "symbolic link");
  ASSERT_FAILS(tsr__gemm_wisdom_check_path(fifo), TSR_ERR_IO, "a FIFO");
  ASSERT_FAILS(tsr__gemm_wisdom_check_path("/dev/null"), TSR_ERR_IO, "character device");
  struct stat sb;
  assert_int_equal(lstat(fifo, &sb), 0);
  assert_true(S_ISFIFO(sb.st_mode));
  assert_int_equal(lstat(link, &sb), 0);
  assert_true(S_ISLNK(sb.st_mode));
  assert_int_equal(stat("/dev/null", &sb), 0);
  assert_true(S_ISCHR(sb.st_mode));
  char buf[64] = "";
  FILE *f = fopen(target, "r");
  assert_non_null(f);
  assert_non_null(fgets(buf, sizeof buf, f));
  fclose(f);
  assert_string_equal(buf, "not wisdom\n");
}

/* Four processes merge their entries into one file at once, 25 times each: under the lock
   none is lost, and the file always parses. */
static void test_concurrent_update(void **state) {
  (void)state;
  char path[320];
  path_in_tmp(path, sizeof path, "shared");
  tsr__gemm_config def;
  tsr__gemm_config_default(TSR_F64, 1, &def);
  pid_t pids[4];
  for (int p = 0; p < 4; ++p) {
    pids[p] = fork();
    assert_true(pids[p] >= 0);
    if (pids[p] == 0) {
      int bad = 0;
      for (int round = 0; round < 25 && !bad; ++round) {
        tsr__gemm_wisdom w;
        memset(&w, 0, sizeof w);
        snprintf(w.cpu, sizeof w.cpu, "%s", tsr__cpu_facts_get()->model_name);
        tsr__gemm_wisdom_entry *e = &w.e[w.n++];
        *e = (tsr__gemm_wisdom_entry){.dtype = TSR_F64,
                                      .threads = p + 1,
                                      .kc = 64 + 8 * round,
                                      .mc = def.ker->mr * 2,
                                      .nc = def.ker->nr * 2,
                                      .grain = 1};
        snprintf(e->kernel, sizeof e->kernel, "%s", def.ker->name);
        bad = tsr__gemm_wisdom_update(path, &w, NULL) != TSR_OK;
        tsr__gemm_wisdom r;
        bad = bad || tsr__gemm_wisdom_read(path, &r) != TSR_OK;
      }
      _exit(bad);
    }
  }
  for (int p = 0; p < 4; ++p)
    assert_int_equal(wait_exit(pids[p], 120, "writer"), 0);
  tsr__gemm_wisdom r;
  TSR_ASSERT_OK(tsr__gemm_wisdom_read(path, &r));
  assert_int_equal(r.n, 4);
  for (int t = 1; t <= 4; ++t) {
    int found = 0;
    for (int i = 0; i < r.n; ++i)
      found += r.e[i].threads == t && r.e[i].kc == 64 + 8 * 24;
    assert_int_equal(found, 1);
  }
}

/* The child of test_warning: GEMMs (correct) with TSR_WISDOM as set by the parent. */
static int warn_child(void) {
  int ok = 1;
  for (int i = 0; i < 3; ++i) {
    ok = ok && tsr_test_native_gemm_ok(TSR_F64, 33, 29, 70, 300 + (uint64_t)i, 400, &tuning);
    tsr__gemm_wisdom_reload();
  }
  return ok ? 0 : 1;
}

/* Runs this program as a warn_child with TSR_WISDOM=path (TSR_WISDOM_WARN=quiet when not
   NULL); returns the lines of its stderr that carry the warning, its text in err. */
static int warnings_of(const char *path, const char *quiet, char *err, size_t cap) {
  char errpath[320];
  path_in_tmp(errpath, sizeof errpath, "child.err");
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0) _exit(99);
    setenv("TSR_WISDOM", path, 1);
    if (quiet)
      setenv("TSR_WISDOM_WARN", quiet, 1);
    else
      unsetenv("TSR_WISDOM_WARN");
    execl("/proc/self/exe", "test_wisdom", "--child", (char *)NULL);
    _exit(98);
  }
  assert_int_equal(wait_exit(pid, 60, path), 0);
  FILE *f = fopen(errpath, "r");
  assert_non_null(f);
  size_t n = fread(err, 1, cap - 1, f);
  err[n] = '\0';
  fclose(f);
  int lines = 0;
  for (const char *p = err; (p = strstr(p, "is ignored (")); p++)
    lines++;
  return lines;
}

/* An ignored file named by TSR_WISDOM: exactly one line per process, with the reason, and the
   GEMMs correct; none for a valid file or with TSR_WISDOM_WARN=0. */
static void test_warning(void **state) {
  (void)state;
  const char *cpu = tsr__cpu_facts_get()->model_name;
  char path[320], fifo[320], err[4096], text[400];
  path_in_tmp(path, sizeof path, "corrupt");
  write_text(path, "tessera-wisdom 1\ncpu Some Other CPU 9000\n");
  assert_int_equal(warnings_of(path, NULL, err, sizeof err), 1);
  assert_non_null(strstr(err, "another CPU"));
  assert_non_null(strstr(err, path));
  assert_int_equal(warnings_of(path, "0", err, sizeof err), 0);
  path_in_tmp(fifo, sizeof fifo, "wfifo");
  assert_int_equal(mkfifo(fifo, 0644), 0);
  assert_int_equal(warnings_of(fifo, NULL, err, sizeof err), 1);
  assert_non_null(strstr(err, "FIFO"));
  path_in_tmp(path, sizeof path, "absent");
  assert_int_equal(warnings_of(path, NULL, err, sizeof err), 1);
  assert_non_null(strstr(err, "no such file"));
  path_in_tmp(path, sizeof path, "valid");
  snprintf(text, sizeof text, "tessera-wisdom 1\ncpu %s\n", cpu);
  write_text(path, text);
  assert_int_equal(warnings_of(path, NULL, err, sizeof err), 0);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--child") == 0) return warn_child();
  /* Start from no wisdom whatever the user's cache holds (and no warning about it). */
  setenv("TSR_WISDOM_WARN", "0", 1);
  setenv("TSR_WISDOM", "/nonexistent/tessera-test-wisdom", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_write_read_use), cmocka_unit_test(test_bad_files_ignored),
      cmocka_unit_test(test_path_rules),     cmocka_unit_test(test_write_errors),
      cmocka_unit_test(test_special_files),  cmocka_unit_test(test_concurrent_update),
      cmocka_unit_test(test_warning),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
