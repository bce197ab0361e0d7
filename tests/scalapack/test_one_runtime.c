/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One runtime per process: a program that calls the public API (tsr_gemm_host), the ScaLAPACK
 * drop-in (pdgemm_) and the BLAS drop-in (dgemm_) gets one Tessera runtime, the one in
 * libtessera.so, which both drop-ins depend on. Each check below fails when a drop-in carries a
 * private copy of the library (as libtessera_scalapack did: tessera_static linked in):
 *
 *  - one thread pool: the first multi-threaded GEMM of a runtime starts its pool threads
 *    (OMP_NUM_THREADS - 1 of them; the first call always runs in parallel); after tsr_gemm_host
 *    started them, pdgemm_ and dgemm_ on the same sizes start no thread;
 *  - one error state: an error raised inside libtessera_scalapack (tsr_scalapack_get_stats(NULL))
 *    is what libtessera's tsr_last_error() returns on this thread;
 *  - one wisdom cache: TSR_WISDOM names a file that does not exist, so the first GEMM of a
 *    runtime says once on stderr that it is ignored: exactly one such line for the three APIs;
 *  - one environment reader: TSR_SCALAPACK_PATH has a bad value, read by the drop-in through
 *    libtessera's reader, whose warning names the variable once.
 * The three products are checked against a float64 reference on random inputs.
 *
 * Run with 1 rank (ctest: scalapack_one_runtime), OMP_NUM_THREADS=3, TSR_WISDOM and
 * TSR_SCALAPACK_PATH set by the test's environment.
 */
#define _GNU_SOURCE
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessera.h"
#include "tessera/blas.h"
#include "tessera/scalapack.h"

extern void Cblacs_pinfo(int *rank, int *nprocs);
extern void Cblacs_get(int ctxt, int what, int *val);
extern void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
extern void Cblacs_gridexit(int ctxt);

static int failures;
#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stdout, "FAIL %s:%d: ", __FILE__, __LINE__);                                         \
      fprintf(stdout, __VA_ARGS__);                                                                \
      fputc('\n', stdout);                                                                         \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

/* Threads of this process (/proc/self/status). */
static int thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int n = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "Threads: %d", &n) == 1) break;
  if (f) fclose(f);
  return n;
}

#define N 384

/* Column-major C = A * B in float64, the reference. */
static void reference(const double *a, const double *b, double *c) {
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++) {
      double s = 0;
      for (int p = 0; p < N; p++)
        s += a[i + p * N] * b[p + j * N];
      c[i + j * N] = s;
    }
}

static double max_diff(const double *x, const double *y) {
  double d = 0;
  for (int i = 0; i < N * N; i++)
    d = fmax(d, fabs(x[i] - y[i]));
  return d;
}

/* Lines of the captured stderr that contain `needle`. */
static int count_lines(FILE *f, const char *needle) {
  char line[1024];
  int n = 0;
  rewind(f);
  while (fgets(line, sizeof line, f))
    if (strstr(line, needle)) ++n;
  return n;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 0, ctxt = 0;
  Cblacs_pinfo(&rank, &nprocs);
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "R", 1, 1);
  MPI_Barrier(MPI_COMM_WORLD);

  /* stderr into a file, to count the warnings. */
  FILE *err = tmpfile();
  if (!err || dup2(fileno(err), STDERR_FILENO) < 0) {
    printf("FAIL: cannot capture stderr\n");
    return 1;
  }

  double *a = malloc(sizeof(double) * N * N), *b = malloc(sizeof(double) * N * N);
  double *ref = malloc(sizeof(double) * N * N), *c = malloc(sizeof(double) * N * N);
  srand(12345);
  for (int i = 0; i < N * N; i++) {
    a[i] = rand() / (double)RAND_MAX - 0.5;
    b[i] = rand() / (double)RAND_MAX - 0.5;
  }
  reference(a, b, ref);
  const double tol = 1e-10 * N;

  /* The public API first: column-major C = A B is the row-major C^T = B^T A^T. */
  const int before = thread_count();
  CHECK(tsr_gemm_host(TSR_F64, TSR_NO_TRANS, TSR_NO_TRANS, N, N, N, 1.0, b, N, a, N, 0.0, c, N) ==
            TSR_OK,
        "tsr_gemm_host: %s", tsr_last_error());
  CHECK(max_diff(c, ref) < tol, "tsr_gemm_host differs from the reference by %g", max_diff(c, ref));
  const int pool = thread_count();
  /* The check below means something only if the first GEMM did start pool threads. */
  CHECK(pool >= before + 2, "tsr_gemm_host started %d threads (OMP_NUM_THREADS=3: expected 2)",
        pool - before);

  /* The ScaLAPACK drop-in on a 1 x 1 grid (its SUMMA path: blocks of 64, LLD = N). */
  const int n = N, one = 1, desc[9] = {1, ctxt, N, N, 64, 64, 0, 0, N};
  const double alpha = 1.0, beta = 0.0;
  memset(c, 0, sizeof(double) * N * N);
  tsr_scalapack_reset_stats();
  pdgemm_("N", "N", &n, &n, &n, &alpha, a, &one, &one, desc, b, &one, &one, desc, &beta, c, &one,
          &one, desc);
  CHECK(max_diff(c, ref) < tol, "pdgemm_ differs from the reference by %g", max_diff(c, ref));
  tsr_scalapack_stats ss;
  CHECK(tsr_scalapack_get_stats(&ss) == TSR_OK && ss.pdgemm == 1 && ss.failed == 0,
        "pdgemm_ was not served by libtessera_scalapack (calls %llu, failed %llu)",
        (unsigned long long)ss.pdgemm, (unsigned long long)ss.failed);
  CHECK(thread_count() == pool, "pdgemm_ started %d threads: a second thread pool",
        thread_count() - pool);

  /* The BLAS drop-in. */
  memset(c, 0, sizeof(double) * N * N);
  tsr_blas_reset_stats();
  dgemm_("N", "N", &n, &n, &n, &alpha, a, &n, b, &n, &beta, c, &n);
  CHECK(max_diff(c, ref) < tol, "dgemm_ differs from the reference by %g", max_diff(c, ref));
  tsr_blas_stats bs;
  CHECK(tsr_blas_get_stats(&bs) == TSR_OK && bs.dgemm == 1 && bs.cpu == 1,
        "dgemm_ was not served by libtessera_blas on the CPU (dgemm_ %llu, cpu %llu)",
        (unsigned long long)bs.dgemm, (unsigned long long)bs.cpu);
  CHECK(thread_count() == pool, "dgemm_ started %d threads: a second thread pool",
        thread_count() - pool);

  /* One error state: raised in the drop-in, read through libtessera. */
  CHECK(tsr_gemm_host(TSR_F64, TSR_NO_TRANS, TSR_NO_TRANS, -1, N, N, 1.0, b, N, a, N, 0.0, c, N) ==
            TSR_ERR_INVALID_ARGUMENT,
        "tsr_gemm_host accepted m = -1");
  CHECK(tsr_scalapack_get_stats(NULL) == TSR_ERR_NULL_POINTER, "stats NULL accepted");
  CHECK(strcmp(tsr_last_error(), "tsr_scalapack_get_stats: stats is NULL") == 0,
        "libtessera's last error is \"%s\", not the drop-in's error: a second error state",
        tsr_last_error());

  /* One wisdom cache and one environment reader: one line each on stderr. */
  fflush(stderr);
  const int wisdom = count_lines(err, "TSR_WISDOM=");
  const int path = count_lines(err, "TSR_SCALAPACK_PATH=\"sideways\"");
  CHECK(wisdom == 1, "%d warnings about TSR_WISDOM (expected 1: one wisdom cache)", wisdom);
  CHECK(path == 1, "%d warnings about TSR_SCALAPACK_PATH (expected 1)", path);
  if (failures) {
    char line[1024];
    rewind(err);
    printf("stderr was:\n");
    while (fgets(line, sizeof line, err))
      fputs(line, stdout);
  }

  free(a);
  free(b);
  free(c);
  free(ref);
  fclose(err);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  printf("%s: %d failure(s)\n", argv[0], failures);
  return failures ? 1 : 0;
}
