/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BLAS drop-in benchmark: an unmodified C program calling the Fortran BLAS dgemm_ (column-major
 * C = A B, f64, alpha = 1, beta = 0), run once against OpenBLAS (the anchor, which this program
 * links) and once with libtessera_blas preloaded in front of it (LD_PRELOAD), in the same run.
 *
 * The program runs itself twice as a child (--child), once with LD_PRELOAD removed and once
 * with LD_PRELOAD=<libtessera_blas>, because which dgemm_ a process calls is fixed when it
 * starts. Each child reports which library served its calls (looked up by symbol) and the
 * median time over the repetitions after one warm-up call; the parent prints one table with
 * the speed ratio (OpenBLAS time / Tessera time: above 1, Tessera is faster) and writes JSON.
 * GFLOP/s = 2 n^3 / seconds / 1e9.
 *
 * Usage: bench_blas [--sizes 1024,2048] [--reps N] [--threads T] [--tessera-lib PATH]
 *                   [--json FILE]
 *   --sizes        square n (default 1024,2048)
 *   --reps         timed calls per size (default 5)
 *   --threads      sets OMP_NUM_THREADS and OPENBLAS_NUM_THREADS for both runs (default:
 *                  the libraries' defaults, every core)
 *   --tessera-lib  the library to preload (default: the one built beside this program)
 *   --json         output file (default bench_blas.json)
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tessera/blas.h" /* dgemm_ and tsr_blas_stats; the symbols come from the BLAS */

#include "bench_util.h"

#ifndef TSR_BENCH_TESSERA_BLAS
#define TSR_BENCH_TESSERA_BLAS "libtessera_blas.so"
#endif

#define MAX_SIZES 16

static int parse_sizes(const char *s, int *out) {
  int n = 0;
  while (*s && n < MAX_SIZES) {
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || v <= 0 || v > 46340) return -1; /* n*n must fit an int */
    out[n++] = (int)v;
    if (*end != ',' && *end != '\0') return -1;
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

/* ---------------------------------------------------------------- child: time dgemm_ -- */

/* Which library this process's dgemm_ comes from. */
static const char *implementation(void) {
  if (dlsym(RTLD_DEFAULT, "tsr_blas_get_stats") != NULL) return "tessera";
  if (dlsym(RTLD_DEFAULT, "openblas_get_config") != NULL) return "openblas";
  return "unknown";
}

static int child(const int *sizes, int nsizes, int reps) {
  printf("impl %s\n", implementation());
  for (int s = 0; s < nsizes; ++s) {
    int n = sizes[s];
    size_t len = (size_t)n * (size_t)n;
    double *a = malloc(len * sizeof *a), *b = malloc(len * sizeof *b), *c = malloc(len * sizeof *c);
    double *t = malloc((size_t)reps * sizeof *t);
    if (!a || !b || !c || !t) {
      fprintf(stderr, "bench_blas: out of memory for n = %d\n", n);
      return 1;
    }
    uint64_t x = 88172645463325252ull; /* xorshift: any non-zero values will do */
    for (size_t i = 0; i < len; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      a[i] = (double)(x >> 11) * 0x1.0p-53 - 0.5;
      b[i] = (double)(x & 0xffff) / 65536.0 - 0.5;
    }
    double one = 1.0, zero = 0.0;
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n); /* warm-up */
    for (int r = 0; r < reps; ++r) {
      double t0 = now_s();
      dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
      t[r] = now_s() - t0;
    }
    /* A spot check that the product was computed: c(0,0) = sum_p a(0,p) b(p,0). */
    double ref = 0.0;
    for (int p = 0; p < n; ++p)
      ref += a[(size_t)p * (size_t)n] * b[p];
    double err = c[0] - ref;
    if (err < 0) err = -err;
    if (err > 1e-9 * (double)n) {
      fprintf(stderr, "bench_blas: wrong result at n = %d (c(0,0) = %g, expected %g)\n", n, c[0],
              ref);
      return 1;
    }
    printf("result %d %.9g\n", n, median(t, reps));
    free(a);
    free(b);
    free(c);
    free(t);
  }
  /* With Tessera, say where the calls ran (a GPU above TSR_BLAS_GPU_MIN_FLOPS). */
  tsr_status (*stats)(tsr_blas_stats *) = NULL;
  *(void **)&stats = dlsym(RTLD_DEFAULT, "tsr_blas_get_stats"); /* POSIX's dlsym idiom */
  if (stats != NULL) {
    tsr_blas_stats st;
    if (stats(&st) == TSR_OK)
      printf("route cpu %llu gpu %llu fallback %llu\n", (unsigned long long)st.cpu,
             (unsigned long long)st.gpu, (unsigned long long)st.fallback);
  }
  return 0;
}

/* ---------------------------------------------------------------- parent -------------- */

typedef struct run_result {
  char impl[32];
  char route[256];
  int n[MAX_SIZES];
  double seconds[MAX_SIZES];
  int count;
} run_result;

/* Runs this program as a child with LD_PRELOAD = preload (NULL: removed) and reads its
   report. */
static int run_child(const char *self, const char *preload, char *const *child_argv,
                     run_result *out) {
  int fds[2];
  if (pipe(fds) != 0) {
    perror("bench_blas: pipe");
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("bench_blas: fork");
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDOUT_FILENO);
    close(fds[1]);
    if (preload != NULL)
      setenv("LD_PRELOAD", preload, 1);
    else
      unsetenv("LD_PRELOAD");
    execv(self, child_argv);
    perror("bench_blas: execv");
    _exit(127);
  }
  close(fds[1]);
  FILE *in = fdopen(fds[0], "r");
  memset(out, 0, sizeof *out);
  char line[256];
  while (in != NULL && fgets(line, sizeof line, in) != NULL) {
    int n;
    double s;
    if (sscanf(line, "impl %31s", out->impl) == 1) continue;
    if (strncmp(line, "route ", 6) == 0) {
      snprintf(out->route, sizeof out->route, "%s", line + 6);
      out->route[strcspn(out->route, "\n")] = '\0';
      continue;
    }
    if (sscanf(line, "result %d %lf", &n, &s) == 2 && out->count < MAX_SIZES) {
      out->n[out->count] = n;
      out->seconds[out->count] = s;
      ++out->count;
    }
  }
  if (in != NULL) fclose(in);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench_blas: the %s run failed\n", preload ? "preloaded" : "anchor");
    return -1;
  }
  return 0;
}

static double gflops(int n, double s) {
  return 2.0 * (double)n * n * n / s / 1e9;
}

int main(int argc, char **argv) {
  int sizes[MAX_SIZES] = {1024, 2048}, nsizes = 2, reps = 5, is_child = 0;
  const char *json = "bench_blas.json", *lib = TSR_BENCH_TESSERA_BLAS, *threads = NULL;
  const char *sizes_arg = "1024,2048";
  for (int i = 1; i < argc; ++i) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--child") == 0) {
      is_child = 1;
    } else if (strcmp(argv[i], "--sizes") == 0 && v) {
      sizes_arg = v;
      nsizes = parse_sizes(v, sizes);
      ++i;
    } else if (strcmp(argv[i], "--reps") == 0 && v) {
      reps = atoi(v);
      ++i;
    } else if (strcmp(argv[i], "--threads") == 0 && v) {
      threads = v;
      ++i;
    } else if (strcmp(argv[i], "--tessera-lib") == 0 && v) {
      lib = v;
      ++i;
    } else if (strcmp(argv[i], "--json") == 0 && v) {
      json = v;
      ++i;
    } else {
      fprintf(stderr,
              "usage: %s [--sizes 1024,2048] [--reps N] [--threads T] [--tessera-lib PATH] "
              "[--json FILE]\n",
              argv[0]);
      return 2;
    }
  }
  if (nsizes <= 0 || reps <= 0 || reps > 1000) {
    fprintf(stderr, "bench_blas: bad --sizes or --reps\n");
    return 2;
  }
  if (is_child) return child(sizes, nsizes, reps);

  if (access(lib, R_OK) != 0) {
    fprintf(stderr, "bench_blas: cannot read %s (%s); pass --tessera-lib\n", lib, strerror(errno));
    return 1;
  }
  if (threads != NULL) {
    setenv("OMP_NUM_THREADS", threads, 1);
    setenv("OPENBLAS_NUM_THREADS", threads, 1);
  }
  char reps_s[16];
  snprintf(reps_s, sizeof reps_s, "%d", reps);
  char *child_argv[] = {argv[0], "--child", "--sizes", (char *)sizes_arg, "--reps", reps_s, NULL};
  const char *self = "/proc/self/exe";

  run_result anchor, ours;
  if (run_child(self, NULL, child_argv, &anchor) != 0) return 1;
  if (run_child(self, lib, child_argv, &ours) != 0) return 1;
  if (strcmp(anchor.impl, "openblas") != 0 || strcmp(ours.impl, "tessera") != 0) {
    fprintf(stderr, "bench_blas: the runs were served by '%s' and '%s', not openblas and tessera\n",
            anchor.impl, ours.impl);
    return 1;
  }
  if (anchor.count != nsizes || ours.count != nsizes) {
    fprintf(stderr, "bench_blas: incomplete results\n");
    return 1;
  }

  printf("bench_blas: dgemm_ C = A B (f64, column-major), median of %d calls, threads %s\n", reps,
         threads ? threads : "default");
  printf("Tessera preloaded from %s; its calls ran on: %s\n", lib, ours.route);
  printf("%6s  %12s %9s  %12s %9s  %8s\n", "n", "OpenBLAS [s]", "GFLOP/s", "Tessera [s]", "GFLOP/s",
         "ratio");
  for (int i = 0; i < nsizes; ++i) {
    int n = anchor.n[i];
    printf("%6d  %12.4f %9.1f  %12.4f %9.1f  %8.3f\n", n, anchor.seconds[i],
           gflops(n, anchor.seconds[i]), ours.seconds[i], gflops(n, ours.seconds[i]),
           anchor.seconds[i] / ours.seconds[i]);
  }
  printf("ratio = OpenBLAS time / Tessera time (above 1: Tessera faster)\n");

  FILE *f = fopen(json, "w");
  if (f == NULL) {
    fprintf(stderr, "bench_blas: cannot write %s: %s\n", json, strerror(errno));
    return 1;
  }
  fprintf(f, "{\n  \"benchmark\": \"blas\",\n  \"routine\": \"dgemm_\",\n  \"dtype\": \"f64\",\n");
  fprintf(f, "  \"anchor\": \"openblas\",\n  \"reps\": %d,\n  \"threads\": \"%s\",\n", reps,
          threads ? threads : "default");
  fprintf(f, "  \"tessera_route\": \"%s\",\n  \"results\": [\n", ours.route);
  for (int i = 0; i < nsizes; ++i) {
    int n = anchor.n[i];
    fprintf(f,
            "    {\"n\": %d, \"openblas_s\": %.6g, \"openblas_gflops\": %.4g, \"tessera_s\": %.6g, "
            "\"tessera_gflops\": %.4g, \"ratio\": %.4g}%s\n",
            n, anchor.seconds[i], gflops(n, anchor.seconds[i]), ours.seconds[i],
            gflops(n, ours.seconds[i]), anchor.seconds[i] / ours.seconds[i],
            i + 1 < nsizes ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  fclose(f);
  printf("wrote %s\n", json);
  return 0;
}
