/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Distributed matrix multiplication from C: a 2D block-cyclic A and B on a process grid,
 * C = A * B with SUMMA, checked with Freivalds' test and against a few directly computed
 * entries, then written to a .npy file with MPI-IO.
 *
 *   mpiexec -n 4 ./dist_gemm [out.npy]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tessera.h"
#include "tessera/dist.h"

/* Entries defined by formulas, so any rank can compute any entry: A(i,p) and B(p,j). */
static double a_entry(int64_t i, int64_t p, void *ctx) {
  (void)ctx;
  return 1.0 / (double)(i + p + 1);
}
static double b_entry(int64_t p, int64_t j, void *ctx) {
  (void)ctx;
  return sin((double)(p + 2 * j));
}

/* Every rank makes the same calls, so every failure is reported by all of them alike. */
#define CHECK(call)                                                                                \
  do {                                                                                             \
    tsr_status st_ = (call);                                                                       \
    if (st_ != TSR_OK) {                                                                           \
      if (rank == 0) fprintf(stderr, "%s failed: %s\n", #call, tsr_last_error());                  \
      MPI_Finalize();                                                                              \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int64_t m = 300, n = 200, k = 250, nb = 64;

  /* P x Q chosen near-square from the number of ranks. */
  tsr_grid *grid = NULL;
  CHECK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &grid));
  tsr_grid_props gi;
  CHECK(tsr_grid_info(grid, &gi));

  /* Each rank keeps its blocks on its default device (a GPU when there is one). */
  tsr_device dev;
  CHECK(tsr_device_default(&dev));
  tsr_dmatrix *A = NULL, *B = NULL, *C = NULL;
  CHECK(tsr_dmatrix_create(grid, m, k, nb, nb, TSR_F64, dev, &A));
  CHECK(tsr_dmatrix_create(grid, k, n, nb, nb, TSR_F64, dev, &B));
  CHECK(tsr_dmatrix_create(grid, m, n, nb, nb, TSR_F64, dev, &C));
  CHECK(tsr_dmatrix_fill_fn(A, a_entry, NULL));
  CHECK(tsr_dmatrix_fill_fn(B, b_entry, NULL));

  tsr_dist_stats stats;
  CHECK(tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, C, NULL, &stats));

  tsr_dist_verify_result check;
  CHECK(tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, NULL, C, 1234, &check));
  double residual = check.residual;

  /* The whole C on rank 0, to look at a few entries. */
  double *whole = rank == 0 ? malloc((size_t)(m * n) * sizeof *whole) : NULL;
  CHECK(tsr_dmatrix_gather(C, 0, whole, TSR_ROW_MAJOR, 0));
  int ok = check.verdict == TSR_VERIFY_PASSED;
  if (rank == 0) {
    const int64_t probe[3][2] = {{0, 0}, {m / 2, n / 3}, {m - 1, n - 1}};
    for (int t = 0; t < 3; t++) {
      int64_t i = probe[t][0], j = probe[t][1];
      double s = 0;
      for (int64_t p = 0; p < k; p++)
        s += a_entry(i, p, NULL) * b_entry(p, j, NULL);
      double got = whole[i * n + j];
      printf("C[%lld][%lld] = %.15f (direct sum %.15f)\n", (long long)i, (long long)j, got, s);
      ok = ok && fabs(got - s) <= 1e-12 * (1 + fabs(s));
    }
    printf("grid %d x %d, %lld panels; rank 0 sent %llu and received %llu bytes, "
           "%.3f s waiting, %.3f s computing\n",
           gi.nprow, gi.npcol, (long long)stats.panels, (unsigned long long)stats.bytes_sent,
           (unsigned long long)stats.bytes_received, stats.comm_seconds, stats.compute_seconds);
    printf("Freivalds residual %.3g: %s\n", residual, ok ? "ok" : "WRONG");
  }
  free(whole);
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);

  if (argc > 1) CHECK(tsr_dmatrix_write_npy(C, argv[1], 0));

  tsr_dmatrix_free(A);
  tsr_dmatrix_free(B);
  tsr_dmatrix_free(C);
  tsr_grid_free(grid);
  MPI_Finalize();
  return ok ? 0 : 1;
}
