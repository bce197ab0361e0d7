/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An LD_PRELOAD shim for the tests: counts how often a process opens the files named in
 * TSR_OPEN_COUNT_PATHS (paths separated by ':'), through open, open64, openat, openat64, their
 * _FORTIFY_SOURCE forms (__open_2, ...), fopen and fopen64, whether the open succeeds or not.
 * A path matches by its spelling or, when the open succeeded, by the device and inode of what
 * was opened (another spelling of the same file). At exit the process appends one line,
 * "pid count_0 count_1 ...", with a single write() to the file TSR_OPEN_COUNT_OUT.
 * Used by test_dist_cli (the job opens each input once per rank).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PATHS 8
/* The build hides symbols by default; the wrappers must be seen to interpose. */
#define EXPORT __attribute__((visibility("default")))

static int npaths = -1; /* -1: not read yet */
static char paths[MAX_PATHS][4096];
static dev_t devs[MAX_PATHS];
static ino_t inos[MAX_PATHS];
static int have_id[MAX_PATHS];
static long counts[MAX_PATHS];

static void load_paths(void) {
  if (npaths >= 0) return;
  npaths = 0;
  const char *env = getenv("TSR_OPEN_COUNT_PATHS");
  while (env && *env && npaths < MAX_PATHS) {
    const char *end = strchr(env, ':');
    size_t len = end ? (size_t)(end - env) : strlen(env);
    if (len >= sizeof paths[0]) len = sizeof paths[0] - 1;
    memcpy(paths[npaths], env, len);
    paths[npaths][len] = '\0';
    struct stat sb;
    if (stat(paths[npaths], &sb) == 0) {
      devs[npaths] = sb.st_dev;
      inos[npaths] = sb.st_ino;
      have_id[npaths] = 1;
    }
    npaths++;
    env = end ? end + 1 : NULL;
  }
}

/* Counts one open of `path` that returned descriptor `fd` (-1: failed). */
static void note(const char *path, int fd) {
  load_paths();
  struct stat sb;
  int known = fd >= 0 && fstat(fd, &sb) == 0;
  for (int i = 0; i < npaths; i++)
    if ((path && strcmp(path, paths[i]) == 0) ||
        (known && have_id[i] && sb.st_dev == devs[i] && sb.st_ino == inos[i])) {
      counts[i]++;
      return;
    }
}

__attribute__((destructor)) static void report(void) {
  const char *out = getenv("TSR_OPEN_COUNT_OUT");
  load_paths();
  if (!out || npaths == 0) return;
  char line[512];
  int n = snprintf(line, sizeof line, "%ld", (long)getpid());
  for (int i = 0; i < npaths && n < (int)sizeof line - 24; i++)
    n += snprintf(line + n, sizeof line - (size_t)n, " %ld", counts[i]);
  line[n++] = '\n';
  /* The real open: this file is not counted (and not a target). */
  int (*real_open)(const char *, int, ...) =
      (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
  int fd = real_open ? real_open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
  if (fd < 0) return;
  if (write(fd, line, (size_t)n) != n) { /* the test then finds the line missing */
  }
  close(fd);
}

/* The mode argument exists only with O_CREAT or O_TMPFILE. */
#define MODE_ARG(flags, mode)                                                                      \
  do {                                                                                             \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                                                         \
      va_list ap;                                                                                  \
      va_start(ap, flags);                                                                         \
      mode = (mode_t)va_arg(ap, int);                                                              \
      va_end(ap);                                                                                  \
    }                                                                                              \
  } while (0)

#define WRAP_OPEN(name)                                                                            \
  EXPORT int name(const char *path, int flags, ...) {                                              \
    mode_t mode = 0;                                                                               \
    MODE_ARG(flags, mode);                                                                         \
    static int (*real)(const char *, int, ...);                                                    \
    if (!real) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name);                    \
    int fd = real(path, flags, mode);                                                              \
    note(path, fd);                                                                                \
    return fd;                                                                                     \
  }
WRAP_OPEN(open)
WRAP_OPEN(open64)

#define WRAP_OPENAT(name)                                                                          \
  EXPORT int name(int dirfd, const char *path, int flags, ...) {                                   \
    mode_t mode = 0;                                                                               \
    MODE_ARG(flags, mode);                                                                         \
    static int (*real)(int, const char *, int, ...);                                               \
    if (!real) real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, #name);               \
    int fd = real(dirfd, path, flags, mode);                                                       \
    note(path, fd);                                                                                \
    return fd;                                                                                     \
  }
WRAP_OPENAT(openat)
WRAP_OPENAT(openat64)

#define WRAP_OPEN2(name)                                                                           \
  EXPORT int name(const char *path, int flags) {                                                   \
    static int (*real)(const char *, int);                                                         \
    if (!real) real = (int (*)(const char *, int))dlsym(RTLD_NEXT, #name);                         \
    int fd = real(path, flags);                                                                    \
    note(path, fd);                                                                                \
    return fd;                                                                                     \
  }
WRAP_OPEN2(__open_2)
WRAP_OPEN2(__open64_2)

#define WRAP_OPENAT2(name)                                                                         \
  EXPORT int name(int dirfd, const char *path, int flags) {                                        \
    static int (*real)(int, const char *, int);                                                    \
    if (!real) real = (int (*)(int, const char *, int))dlsym(RTLD_NEXT, #name);                    \
    int fd = real(dirfd, path, flags);                                                             \
    note(path, fd);                                                                                \
    return fd;                                                                                     \
  }
WRAP_OPENAT2(__openat_2)
WRAP_OPENAT2(__openat64_2)

#define WRAP_FOPEN(name)                                                                           \
  EXPORT FILE *name(const char *path, const char *mode) {                                          \
    static FILE *(*real)(const char *, const char *);                                              \
    if (!real) real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, #name);            \
    FILE *f = real(path, mode);                                                                    \
    note(path, f ? fileno(f) : -1);                                                                \
    return f;                                                                                      \
  }
WRAP_FOPEN(fopen)
WRAP_FOPEN(fopen64)
