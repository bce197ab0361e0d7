/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What keeps tessera-gemm from losing data or hanging: every path is checked on every rank
 * before any work (an input a rank cannot see, an output directory missing on one node, a FIFO
 * or a device node, an output that is also an input), the temporary output file is removed when
 * the job is interrupted, and the node's available memory is read for the memory check.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gemm_cli.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* ---------------------------------------------------------------- paths --------------- */

/* The directory of `path`, resolved, plus its last component: two spellings of one new file
   compare equal. Returns 0 when the directory cannot be resolved. */
static int canonical(const char *path, char *out, size_t cap) {
  char dir[PATH_MAX], res[PATH_MAX];
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else
    snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
  if (!realpath(dir, res)) return 0;
  return snprintf(out, cap, "%s/%s", res, base) < (int)cap;
}

/* 1 when a and b name the same file (existing: same device and inode). */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  char ca[PATH_MAX + 256], cb[PATH_MAX + 256];
  if (canonical(a, ca, sizeof ca) && canonical(b, cb, sizeof cb)) return strcmp(ca, cb) == 0;
  return strcmp(a, b) == 0;
}

static int check_target(const char *what, const char *path, const options *o, char *msg,
                        size_t cap) {
  tsr_status st = tsr_file_check_output(path);
  if (st != TSR_OK) {
    snprintf(msg, cap, "%s: %s", what, tsr_last_error());
    return EXIT_RUNTIME;
  }
  const char *inputs[3] = {o->a_path, o->b_path, o->c_path};
  static const char *names[3] = {"-a", "-b", "-c"};
  for (int i = 0; i < 3; i++)
    if (inputs[i] && same_file(path, inputs[i])) {
      snprintf(msg, cap, "%s '%s' is the input %s; refusing to overwrite an input", what, path,
               names[i]);
      return EXIT_USAGE;
    }
  return 0;
}

int check_paths(const options *o, char *msg, size_t cap) {
  /* Inputs are opened (once per rank) and checked by tsr_dmatrix_npy_open (step_shapes). */
  int code = 0;
  /* The output: every rank opens it with MPI-IO, so every rank checks it. */
  if (o->out_path) code = check_target("-o", o->out_path, o, msg, cap);
  if ((code = agree(code, msg))) return code;
  /* The JSON report: rank 0 writes it. */
  if (g_rank == 0 && o->json_path) {
    code = check_target("--json", o->json_path, o, msg, cap);
    if (!code && o->out_path && same_file(o->json_path, o->out_path)) {
      snprintf(msg, cap, "--json '%s' is the output -o; give them different names", o->json_path);
      code = EXIT_USAGE;
    }
  }
  return agree(code, msg);
}

/* ---------------------------------------------------------------- signals ------------- */

/* The temporary output file, computed before the handler is armed: the handler only calls
   unlink() and raise(), which are async-signal-safe. */
static char temp_path[PATH_MAX + 64];
static volatile sig_atomic_t temp_armed;

static void on_signal(int sig) {
  if (temp_armed) unlink(temp_path);
  /* SA_RESETHAND restored the default action: the process ends as the signal says. */
  raise(sig);
}

void guard_temp_file(const char *out_path, long pid0) {
  if (!out_path || tsr_file_temp_path(out_path, pid0, 0, temp_path, sizeof temp_path) != TSR_OK)
    return;
  temp_armed = 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
  for (int i = 0; i < 3; i++) {
    struct sigaction old;
    /* A signal the launcher told us to ignore stays ignored. */
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sigs[i], &sa, NULL);
  }
}

/* ---------------------------------------------------------------- memory -------------- */

int64_t memory_available(int ranks_on_node) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  long long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
  fclose(f);
  if (kib <= 0) return 0;
  return (int64_t)kib * 1024 / (ranks_on_node > 0 ? ranks_on_node : 1);
}
