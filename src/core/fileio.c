/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Files written so that no reader ever sees a partial result, and read without blocking.
 * The one copy of these mechanisms, shared by tsr_npy_save()/tsr_npy_load() (src/core/io.c),
 * the collective MPI-IO of src/mpi/npyio.c and the tessera-gemm job:
 *
 *  - output targets are checked before any work: a regular file or a new name (never a
 *    symbolic link, device node, FIFO, socket or directory, which a rename would replace),
 *    in an existing, writable directory, with a temporary name that fits NAME_MAX/PATH_MAX;
 *  - data goes to a temporary file in the same directory, DIR/.NAME.tessera-tmp.PID.SEQ (NAME
 *    cut to TSR__TEMP_NAME_KEEP bytes so the name stays far below NAME_MAX and the path below
 *    the lengths MPI libraries can take with their own suffixes), every write checked
 *    for its byte count, fsync()ed, closed, the target checked again, then rename()d; the
 *    directory is synced after the rename;
 *  - inputs are opened with O_NONBLOCK and must be regular files (fstat) before a byte is read,
 *    so a FIFO or a device is refused instead of blocking;
 *  - a file that several processes append to (TSR_SCALAPACK_REPORT) is opened the same way,
 *    without blocking and only when it is a regular file or a new name, and each record is
 *    one checked write();
 *  - a read-merge-write of a shared file (the wisdom file) holds an exclusive flock() on a lock
 *    file beside it, PATH.lock, taken with a bounded wait (tsr__lock_beside).
 * A temporary left by a killed process (SIGKILL, power loss) matches `.*.tessera-tmp.*`.
 */
#define _GNU_SOURCE /* fallocate */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif
#ifndef NAME_MAX
#define NAME_MAX 255
#endif

void tsr__byteswap(void *data, int64_t n, size_t itemsize) {
  unsigned char *p = (unsigned char *)data;
  for (int64_t i = 0; i < n; i++, p += itemsize)
    for (size_t lo = 0, hi = itemsize - 1; lo < hi; lo++, hi--) {
      unsigned char t = p[lo];
      p[lo] = p[hi];
      p[hi] = t;
    }
}

/* What a non-regular file is, for messages. */
static const char *tsr__file_kind(mode_t mode) {
  return S_ISDIR(mode)    ? "a directory"
         : S_ISFIFO(mode) ? "a FIFO"
         : S_ISCHR(mode)  ? "a character device"
         : S_ISBLK(mode)  ? "a block device"
         : S_ISSOCK(mode) ? "a socket"
         : S_ISLNK(mode)  ? "a symbolic link"
                          : "not a plain file";
}

/* Splits path into its directory (into dir, "." when none) and returns the last component. */
static const char *tsr__split_dir(const char *path, char *dir, size_t cap) {
  const char *slash = strrchr(path, '/');
  if (!slash) {
    snprintf(dir, cap, ".");
    return path;
  }
  size_t n = (size_t)(slash - path);
  if (n == 0) n = 1; /* "/name" */
  if (n >= cap) n = cap - 1;
  memcpy(dir, path, n);
  dir[n] = '\0';
  return slash + 1;
}

tsr_status tsr__temp_path(const char *path, long pid, unsigned seq, char *buf, size_t cap) {
  if (!path || !buf) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "path is NULL");
  size_t len = strlen(path);
  if (len == 0)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "the output path is empty");
  char dir[PATH_MAX];
  if (len >= sizeof dir)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "output path of %zu bytes is longer than PATH_MAX (%d): %.200s...", len,
                          PATH_MAX, path);
  const char *name = tsr__split_dir(path, dir, sizeof dir);
  size_t nlen = strlen(name);
  if (nlen == 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "output '%s' names a directory",
                          path);
  if (nlen > NAME_MAX)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "output file name of %zu bytes is longer than NAME_MAX (%d): %.200s...",
                          nlen, NAME_MAX, name);
  int keep = nlen > TSR__TEMP_NAME_KEEP ? TSR__TEMP_NAME_KEEP : (int)nlen;
  size_t dlen = (size_t)(name - path); /* the directory part as written, slash included */
  int n = snprintf(buf, cap, "%.*s.%.*s.tessera-tmp.%ld.%u", (int)dlen, path, keep, name, pid, seq);
  if (n < 0 || (size_t)n >= cap || (size_t)n >= PATH_MAX)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "the temporary name for '%.200s' would be %d bytes, over PATH_MAX (%d)",
                          path, n, PATH_MAX);
  return TSR_OK;
}

tsr_status tsr__check_output(const char *path) {
  char tmp[PATH_MAX + 64];
  TSR_CALL(tsr__temp_path(path, 0, 0, tmp, sizeof tmp)); /* empty, too long, "dir/" */
  struct stat sb;
  if (lstat(path, &sb) == 0) {
    const char *kind = S_ISREG(sb.st_mode)   ? NULL
                       : S_ISLNK(sb.st_mode) ? "a symbolic link (name its target instead)"
                                             : tsr__file_kind(sb.st_mode);
    if (kind)
      return tsr__set_error(TSR_ERR_IO, __func__,
                            "output '%s' is %s; only a regular file or a new name is replaced",
                            path, kind);
  } else if (errno != ENOENT) {
    return tsr__set_error(TSR_ERR_IO, __func__, "cannot write '%s': %s", path, strerror(errno));
  }
  char dir[PATH_MAX];
  tsr__split_dir(path, dir, sizeof dir);
  if (stat(dir, &sb) != 0)
    return tsr__set_error(TSR_ERR_IO, __func__,
                          "cannot write '%s': directory '%s' does not exist (%s)", path, dir,
                          strerror(errno));
  if (!S_ISDIR(sb.st_mode))
    return tsr__set_error(TSR_ERR_IO, __func__, "cannot write '%s': '%s' is not a directory", path,
                          dir);
  if (access(dir, W_OK | X_OK) != 0)
    return tsr__set_error(TSR_ERR_IO, __func__,
                          "cannot write '%s': directory '%s' is not writable (%s)", path, dir,
                          strerror(errno));
  return TSR_OK;
}

/* open() with O_NONBLOCK, then fstat: fails unless the descriptor is a regular file, else
   clears O_NONBLOCK. `what` names the file in messages ("wisdom file", "" for none). */
static tsr_status tsr__open_regular(const char *path, int flags, mode_t mode, const char *what,
                                    int *fd_out, uint64_t *size) {
  *fd_out = -1;
  const char *sp = *what ? " " : "";
  int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
  struct stat sb;
  if (fd < 0) {
    /* ENXIO: a FIFO without a reader opened for writing; ELOOP: a link under O_NOFOLLOW;
       EISDIR: a directory opened for writing. */
    int e = errno;
    if ((e == ENXIO || e == ELOOP || e == EISDIR) && lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
      return tsr__set_error(TSR_ERR_IO, __func__, "%s%s%s is not a regular file (%s)", what, sp,
                            path, tsr__file_kind(sb.st_mode));
    return tsr__set_error(TSR_ERR_IO, __func__, "cannot open %s%s%s: %s", what, sp, path,
                          strerror(e));
  }
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return tsr__set_error(TSR_ERR_IO, __func__, "cannot stat %s%s%s: %s", what, sp, path,
                          strerror(e));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return tsr__set_error(TSR_ERR_IO, __func__, "%s%s%s is not a regular file (%s)", what, sp, path,
                          tsr__file_kind(sb.st_mode));
  }
  /* Regular files never block; clear the flag so reads and writes behave as usual. */
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  *fd_out = fd;
  if (size) *size = (uint64_t)sb.st_size;
  return TSR_OK;
}

tsr_status tsr__open_input(const char *path, int *fd_out, uint64_t *size) {
  return tsr__open_regular(path, O_RDONLY, 0, "", fd_out, size);
}

tsr_status tsr__stat_input(const char *path, uint64_t *size) {
  struct stat sb;
  if (stat(path, &sb) != 0)
    return tsr__set_error(TSR_ERR_IO, __func__, "cannot open %s: %s", path, strerror(errno));
  if (!S_ISREG(sb.st_mode))
    return tsr__set_error(TSR_ERR_IO, __func__, "%s is not a regular file (%s)", path,
                          tsr__file_kind(sb.st_mode));
  if (access(path, R_OK) != 0)
    return tsr__set_error(TSR_ERR_IO, __func__, "cannot open %s: %s", path, strerror(errno));
  *size = (uint64_t)sb.st_size;
  return TSR_OK;
}

tsr_status tsr__open_input_file(const char *path, const char *what, FILE **fp) {
  *fp = NULL;
  int fd = -1;
  TSR_CALL(tsr__open_regular(path, O_RDONLY, 0, what, &fd, NULL));
  FILE *f = fdopen(fd, "r");
  if (!f) {
    int e = errno;
    close(fd);
    return tsr__set_error(TSR_ERR_IO, __func__, "cannot open %s %s: %s", what, path, strerror(e));
  }
  *fp = f;
  return TSR_OK;
}

tsr_status tsr__open_append(const char *path, const char *what, int *fd) {
  /* O_NOFOLLOW: like every output, a symbolic link is refused (name its target instead). */
  return tsr__open_regular(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0644, what, fd, NULL);
}

tsr_status tsr__lock_beside(const char *path, double wait_s, int *fd_out) {
  *fd_out = -1;
  char lock[PATH_MAX + 8];
  if (snprintf(lock, sizeof lock, "%s.lock", path) >= (int)sizeof lock)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "the lock file name for '%.200s' is "
                          "longer than PATH_MAX (%d)",
                          path, PATH_MAX);
  int fd = -1;
  TSR_CALL(tsr__open_regular(lock, O_RDWR | O_CREAT | O_NOFOLLOW, 0644, "lock file", &fd, NULL));
  struct timespec t0, now, nap = {0, 20 * 1000 * 1000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) break;
    int e = errno;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double waited = (double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec);
    if ((e != EWOULDBLOCK && e != EINTR) || waited >= wait_s) {
      close(fd);
      return tsr__set_error(TSR_ERR_IO, __func__, "cannot lock %s: %s", lock,
                            e == EWOULDBLOCK ? "another process has held it for too long"
                                             : strerror(e));
    }
    nanosleep(&nap, NULL);
  }
  *fd_out = fd;
  return TSR_OK;
}

void tsr__unlock(int fd) {
  if (fd < 0) return;
  (void)flock(fd, LOCK_UN);
  close(fd);
}

tsr_status tsr__write_all(const char *path, int fd, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  size_t done = 0;
  while (done < n) {
    size_t chunk = n - done > ((size_t)1 << 30) ? ((size_t)1 << 30) : n - done;
    ssize_t w = write(fd, p + done, chunk);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      return tsr__set_error(TSR_ERR_IO, __func__, "cannot write %s: wrote %zu of %zu bytes: %s",
                            path, done, n, w < 0 ? strerror(errno) : "no progress (disk full?)");
    done += (size_t)w;
  }
  return TSR_OK;
}

/* The temporary `tmp` of the result `target`, created new (O_EXCL) for writing into *fd. */
static tsr_status tsr__create_temp(const char *tmp, const char *target, int *fd) {
  *fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0666);
  if (*fd < 0)
    return tsr__set_error(TSR_ERR_IO, __func__, "cannot create %s (temporary file for %s): %s", tmp,
                          target, strerror(errno));
  return TSR_OK;
}

tsr_status tsr__create_reserved(const char *path, const char *target, uint64_t bytes) {
  int fd;
  TSR_CALL(tsr__create_temp(path, target, &fd));
  tsr_status st = TSR_OK;
#if defined(__linux__)
  if (bytes > 0) {
    int rc;
    do
      rc = fallocate(fd, 0, 0, (off_t)bytes);
    while (rc != 0 && errno == EINTR);
    if (rc != 0 && errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL)
      st = tsr__set_error(TSR_ERR_IO, __func__, "cannot reserve %llu bytes for %s: %s",
                          (unsigned long long)bytes, path, strerror(errno));
  }
#endif
  if (close(fd) != 0 && st == TSR_OK)
    st = tsr__set_error(TSR_ERR_IO, __func__, "cannot close %s: %s", path, strerror(errno));
  if (st != TSR_OK) unlink(path);
  return st;
}

/* Syncs the directory holding `path` so that the rename survives a crash. Best effort: some
   file systems refuse fsync on directories, and the file is complete either way. */
static void tsr__sync_parent(const char *path) {
  char dir[PATH_MAX];
  tsr__split_dir(path, dir, sizeof dir);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fsync(fd);
  close(fd);
}

tsr_status tsr__commit_temp(const char *tmp, const char *path) {
  /* The target may have changed since it was checked (a FIFO made in the meantime). */
  tsr_status st = tsr__check_output(path);
  if (st == TSR_OK && rename(tmp, path) != 0)
    st = tsr__set_error(TSR_ERR_IO, __func__, "cannot rename %s to %s: %s", tmp, path,
                        strerror(errno));
  if (st != TSR_OK) {
    unlink(tmp);
    return st;
  }
  tsr__sync_parent(path);
  return TSR_OK;
}

tsr_status tsr__save_file(const char *path, const void *const *parts, const size_t *lens,
                          int nparts) {
  static atomic_uint sequence;
  TSR_CALL(tsr__check_output(path));
  char tmp[PATH_MAX + 64];
  TSR_CALL(
      tsr__temp_path(path, (long)getpid(), atomic_fetch_add(&sequence, 1u) + 1u, tmp, sizeof tmp));
  int fd;
  TSR_CALL(tsr__create_temp(tmp, path, &fd));
  tsr_status st = TSR_OK;
  for (int i = 0; i < nparts && st == TSR_OK; i++)
    st = tsr__write_all(path, fd, parts[i], lens[i]);
  if (st == TSR_OK && fsync(fd) != 0)
    st = tsr__set_error(TSR_ERR_IO, __func__, "cannot sync %s: %s", path, strerror(errno));
  if (close(fd) != 0 && st == TSR_OK)
    st = tsr__set_error(TSR_ERR_IO, __func__, "cannot close %s: %s", path, strerror(errno));
  if (st != TSR_OK) {
    unlink(tmp);
    return st;
  }
  return tsr__commit_temp(tmp, path);
}

/* ---------------------------------------------------------------- public -------------- */

tsr_status tsr_file_check_output(const char *path) {
  TSR_API_ENTRY();
  if (!path) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "path is NULL");
  return tsr__check_output(path);
}

tsr_status tsr_file_temp_path(const char *path, long pid, unsigned seq, char *buf, size_t cap) {
  TSR_API_ENTRY();
  if (!path || !buf)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", path ? "buf" : "path");
  return tsr__temp_path(path, pid, seq, buf, cap);
}

tsr_status tsr_file_write(const char *path, const void *data, size_t len) {
  TSR_API_ENTRY();
  if (!path || (!data && len > 0))
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", path ? "data" : "path");
  const void *parts[1] = {data ? data : ""};
  return tsr__save_file(path, parts, &len, 1);
}
