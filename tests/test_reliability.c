/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tsr_npy_save / tsr_npy_load / tsr_file_write against unlucky targets and faults (issue 11):
 * a FIFO (input and output: refused at once, never waited on), device nodes (/dev/null and one
 * of our own: never replaced), symbolic links (refused, link and target untouched), a
 * directory, long legal names (234-255 bytes: saved and loaded; 256: refused), a full disk
 * (a file size limit, RLIMIT_FSIZE, in a child process; a 64 KiB tmpfs when this process may
 * mount one) leaving nothing behind, and the documented temporary-name pattern.
 * Every case runs under alarm(): a hang fails the test instead of blocking CI.
 */
#define _GNU_SOURCE /* mount, mknod */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tsr_test.h"

static char g_dir[64];

static void path_in(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

/* Entries of the folder (besides . and ..), and those that are temporary files. */
static int count_entries(const char *dir, int *temps) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  if (temps) *temps = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    n++;
    if (temps && strstr(e->d_name, ".tessera-tmp.")) (*temps)++;
  }
  closedir(d);
  return n;
}

static tsr_array *random_matrix(int64_t m, int64_t n, uint64_t seed) {
  const int64_t shape[2] = {m, n};
  return tsr_test_random_array(2, shape, TSR_F64, TSR_CPU, seed, NULL);
}

/* Saves, loads back and compares bit for bit. */
static void save_and_check(const char *path, const tsr_array *a) {
  TSR_ASSERT_OK(tsr_npy_save(path, a));
  tsr_array *b = NULL;
  TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &b));
  tsr_array_props ia, ib;
  TSR_ASSERT_OK(tsr_array_info(a, &ia));
  TSR_ASSERT_OK(tsr_array_info(b, &ib));
  assert_int_equal(ia.size, ib.size);
  double *x = tsr_test_read_f64(a), *y = tsr_test_read_f64(b);
  assert_memory_equal(x, y, (size_t)ia.size * sizeof *x);
  free(x);
  free(y);
  tsr_array_release(b);
}

static void test_fifo(void **state) {
  (void)state;
  char fifo[256];
  path_in(fifo, sizeof fifo, "fifo.npy");
  assert_int_equal(mkfifo(fifo, 0600), 0);
  alarm(20); /* a blocking open would hang here */
  tsr_array *a = random_matrix(3, 4, 1), *b = NULL;
  TSR_ASSERT_STATUS(tsr_npy_load(fifo, TSR_CPU, &b), TSR_ERR_IO, "FIFO");
  assert_null(b);
  tsr_npy_header h;
  TSR_ASSERT_STATUS(tsr_npy_read_header(fifo, &h), TSR_ERR_IO, "not a regular file");
  TSR_ASSERT_STATUS(tsr_npy_save(fifo, a), TSR_ERR_IO, "is a FIFO");
  TSR_ASSERT_STATUS(tsr_file_write(fifo, "x", 1), TSR_ERR_IO, "is a FIFO");
  alarm(0);
  struct stat sb;
  assert_int_equal(lstat(fifo, &sb), 0);
  assert_true(S_ISFIFO(sb.st_mode)); /* still a FIFO, not replaced */
  int temps = 0;
  assert_int_equal(count_entries(g_dir, &temps), 1);
  assert_int_equal(temps, 0);
  unlink(fifo);
  tsr_array_release(a);
}

static void test_device_nodes(void **state) {
  (void)state;
  tsr_array *a = random_matrix(3, 4, 2);
  struct stat before, after;
  assert_int_equal(stat("/dev/null", &before), 0);
  TSR_ASSERT_STATUS(tsr_npy_save("/dev/null", a), TSR_ERR_IO, "character device");
  TSR_ASSERT_STATUS(tsr_file_check_output("/dev/null"), TSR_ERR_IO, "character device");
  assert_int_equal(stat("/dev/null", &after), 0);
  assert_true(S_ISCHR(after.st_mode));
  assert_true(after.st_ino == before.st_ino && after.st_rdev == before.st_rdev);
  /* Reading a device is refused before a byte is read (no blocking on a tty or a pipe). */
  tsr_array *b = NULL;
  TSR_ASSERT_STATUS(tsr_npy_load("/dev/null", TSR_CPU, &b), TSR_ERR_IO, "character device");
  /* A device node of our own, where this process may make one (root): never replaced. */
  char node[256];
  path_in(node, sizeof node, "null.npy");
  if (mknod(node, S_IFCHR | 0600, makedev(1, 3)) == 0) {
    TSR_ASSERT_STATUS(tsr_npy_save(node, a), TSR_ERR_IO, "character device");
    assert_int_equal(lstat(node, &after), 0);
    assert_true(S_ISCHR(after.st_mode));
    unlink(node);
  } else {
    print_message("(mknod not permitted here: %s; /dev/null covered the case)\n", strerror(errno));
  }
  int temps = 0;
  assert_int_equal(count_entries(g_dir, &temps), 0);
  tsr_array_release(a);
}

static void test_symlink_and_directory(void **state) {
  (void)state;
  char target[256], link[256], dir[256];
  path_in(target, sizeof target, "target.npy");
  path_in(link, sizeof link, "link.npy");
  path_in(dir, sizeof dir, "adir");
  tsr_array *a = random_matrix(5, 6, 3), *b = random_matrix(2, 2, 4);
  save_and_check(target, a);
  assert_int_equal(symlink("target.npy", link), 0);
  TSR_ASSERT_STATUS(tsr_npy_save(link, b), TSR_ERR_IO, "symbolic link");
  struct stat sb;
  assert_int_equal(lstat(link, &sb), 0);
  assert_true(S_ISLNK(sb.st_mode));
  /* The target still holds a, and loading through the link works. */
  tsr_array *c = NULL;
  TSR_ASSERT_OK(tsr_npy_load(link, TSR_CPU, &c));
  double *x = tsr_test_read_f64(a), *y = tsr_test_read_f64(c);
  assert_memory_equal(x, y, 30 * sizeof *x);
  free(x), free(y);
  tsr_array_release(c);
  /* A dangling link is refused too (the rename would replace the link, not create the
     target). */
  unlink(target);
  TSR_ASSERT_STATUS(tsr_npy_save(link, b), TSR_ERR_IO, "symbolic link");
  assert_int_equal(lstat(link, &sb), 0);
  assert_true(S_ISLNK(sb.st_mode));
  unlink(link);
  assert_int_equal(mkdir(dir, 0700), 0);
  TSR_ASSERT_STATUS(tsr_npy_save(dir, b), TSR_ERR_IO, "is a directory");
  TSR_ASSERT_STATUS(tsr_npy_load(dir, TSR_CPU, &c), TSR_ERR_IO, "directory");
  char slash[300];
  snprintf(slash, sizeof slash, "%s/", dir);
  TSR_ASSERT_STATUS(tsr_npy_save(slash, b), TSR_ERR_INVALID_ARGUMENT, "names a directory");
  rmdir(dir);
  TSR_ASSERT_STATUS(tsr_npy_save("", b), TSR_ERR_INVALID_ARGUMENT, "empty");
  int temps = 0;
  assert_int_equal(count_entries(g_dir, &temps), 0);
  tsr_array_release(a);
  tsr_array_release(b);
}

/* Legal names up to NAME_MAX (255) are written and read; their temporary names stay short. */
static void test_long_names(void **state) {
  (void)state;
  tsr_array *a = random_matrix(7, 3, 5);
  char name[300], path[400];
  const int lens[] = {234, 236, 238, 240, 242, 244, 250, 255};
  for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
    memset(name, 'n', (size_t)lens[i]);
    memcpy(name + lens[i] - 4, ".npy", 5);
    path_in(path, sizeof path, name);
    save_and_check(path, a);
    char tmp[4200];
    TSR_ASSERT_OK(tsr_file_temp_path(path, 123, 4, tmp, sizeof tmp));
    const char *base = strrchr(tmp, '/') + 1;
    assert_true(strlen(base) < 140);
    int temps = 0;
    assert_int_equal(count_entries(g_dir, &temps), 1);
    assert_int_equal(temps, 0);
    unlink(path);
  }
  memset(name, 'n', 256);
  name[256] = '\0';
  path_in(path, sizeof path, name);
  TSR_ASSERT_STATUS(tsr_npy_save(path, a), TSR_ERR_INVALID_ARGUMENT, "NAME_MAX");
  tsr_array_release(a);
}

/* The documented pattern DIR/.NAME.tessera-tmp.PID.SEQ, NAME cut to 32 bytes. */
static void test_temp_name_pattern(void **state) {
  (void)state;
  char buf[4200];
  TSR_ASSERT_OK(tsr_file_temp_path("out/c.npy", 42, 0, buf, sizeof buf));
  assert_string_equal(buf, "out/.c.npy.tessera-tmp.42.0");
  TSR_ASSERT_OK(tsr_file_temp_path("c.npy", 7, 3, buf, sizeof buf));
  assert_string_equal(buf, ".c.npy.tessera-tmp.7.3");
  TSR_ASSERT_OK(tsr_file_temp_path("/c.npy", 7, 3, buf, sizeof buf));
  assert_string_equal(buf, "/.c.npy.tessera-tmp.7.3");
  char longname[200];
  memset(longname, 'x', 150);
  longname[150] = '\0';
  TSR_ASSERT_OK(tsr_file_temp_path(longname, 1, 1, buf, sizeof buf));
  assert_int_equal(strlen(buf), 1 + 32 + strlen(".tessera-tmp.1.1"));
  TSR_ASSERT_STATUS(tsr_file_temp_path("c.npy", 1, 1, buf, 8), TSR_ERR_INVALID_ARGUMENT,
                    "PATH_MAX");
  TSR_ASSERT_STATUS(tsr_file_temp_path(NULL, 1, 1, buf, sizeof buf), TSR_ERR_NULL_POINTER, NULL);
}

/* In a child: the file size limit at `limit` bytes (SIGXFSZ ignored, so writes fail with EFBIG),
   then save a matrix larger than it. The child's exit code: 0 when the save failed cleanly. */
static int save_under_fsize_limit(const char *path, rlim_t limit) {
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(77);
    tsr_array *a = random_matrix(200, 200, 6); /* 320 KB */
    tsr_status st = tsr_npy_save(path, a);
    int ok = st == TSR_ERR_IO &&
             (strstr(tsr_last_error(), "File too large") || strstr(tsr_last_error(), "wrote"));
    if (!ok) fprintf(stderr, "status %s: %s\n", tsr_status_name(st), tsr_last_error());
    tsr_array_release(a);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void test_full_disk(void **state) {
  (void)state;
  char path[256];
  path_in(path, sizeof path, "full.npy");
  /* An existing result must survive a failed replacement. */
  tsr_array *old = random_matrix(2, 3, 7);
  save_and_check(path, old);
  int rc = save_under_fsize_limit(path, 64 * 1024);
  assert_int_equal(rc, 0);
  int temps = 0;
  assert_int_equal(count_entries(g_dir, &temps), 1);
  assert_int_equal(temps, 0);
  tsr_array *b = NULL;
  TSR_ASSERT_OK(tsr_npy_load(path, TSR_CPU, &b));
  tsr_array_props info;
  TSR_ASSERT_OK(tsr_array_info(b, &info));
  assert_int_equal(info.size, 6); /* still the old file */
  tsr_array_release(b);
  unlink(path);

  /* A real full file system: a 64 KiB tmpfs, where this process may mount one. */
  char mnt[256];
  path_in(mnt, sizeof mnt, "tmpfs");
  assert_int_equal(mkdir(mnt, 0700), 0);
  if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k") == 0) {
    snprintf(path, sizeof path, "%s/c.npy", mnt);
    tsr_array *a = random_matrix(200, 200, 8);
    TSR_ASSERT_STATUS(tsr_npy_save(path, a), TSR_ERR_IO, "No space left on device");
    assert_int_equal(count_entries(mnt, NULL), 0);
    /* A small file still fits: the failure left the space free. */
    save_and_check(path, old);
    unlink(path);
    tsr_array_release(a);
    assert_int_equal(umount(mnt), 0);
  } else {
    print_message("(tmpfs not mountable here: %s; the file size limit covered the case)\n",
                  strerror(errno));
  }
  rmdir(mnt);
  tsr_array_release(old);
}

static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/tsr_reliability_XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return rmdir(g_dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fifo),
      cmocka_unit_test(test_device_nodes),
      cmocka_unit_test(test_symlink_and_directory),
      cmocka_unit_test(test_long_names),
      cmocka_unit_test(test_temp_name_pattern),
      cmocka_unit_test(test_full_disk),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
