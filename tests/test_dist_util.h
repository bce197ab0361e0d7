/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the MPI test programs (tests/test_dist_*.c). Every rank runs every test; checks
 * that depend on one rank's data go through dist_all() so that all ranks pass or fail the
 * same assertion together and none is left waiting in a collective.
 *
 * The matrices live on dist_dev, the device named by TSR_TEST_DEVICE (cpu when unset), so the
 * same programs test SUMMA with CPU-resident and with GPU-resident matrices (tests/gpu.cmake
 * registers the GPU runs; with a GPU, TSR_DIST_GPU_STAGING selects the staged or the
 * device-to-device panel path). Without that device every rank exits 77 (skipped).
 */
#ifndef TSR_TEST_DIST_UTIL_H
#define TSR_TEST_DIST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_test.h"
#include "tessera/dist.h"

static int dist_rank, dist_size;
static tsr_device dist_dev; /* where the test matrices live */

/* 1 when `ok` holds on every rank. */
static inline int dist_all(int ok) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}
#define DIST_ASSERT(cond) assert_true(dist_all((cond) ? 1 : 0))

/* The grids of the test suite that fit the number of ranks ({0, 0}: the automatic one). */
static const int dist_grids[][2] = {{1, 1}, {1, 2}, {2, 1}, {1, 4}, {2, 2}, {4, 1}, {0, 0}};
#define DIST_NGRIDS (int)(sizeof dist_grids / sizeof dist_grids[0])
static inline int dist_grid_fits(int g) {
  return dist_grids[g][0] * dist_grids[g][1] == dist_size ||
         (dist_grids[g][0] == 0 && dist_grids[g][1] == 0);
}

/* Random host matrix (row-major m x n, uniform [-1, 1), identical on every rank), rounded to
   f32 when the dtype is f32 so that the float64 reference uses the exact inputs. */
static inline double *dist_random(int64_t m, int64_t n, tsr_dtype dt, uint64_t seed) {
  size_t cnt = (size_t)(m * n) + 1;
  double *x = malloc(cnt * sizeof *x);
  tsr_test_fill_random(x, cnt, seed);
  if (dt == TSR_F32)
    for (size_t i = 0; i < cnt; i++)
      x[i] = (double)(float)x[i];
  return x;
}

/* Converts row-major doubles into a new buffer of the dtype. */
static inline void *dist_to_dtype(const double *x, size_t cnt, tsr_dtype dt) {
  void *p = malloc((cnt + 1) * (dt == TSR_F32 ? 4 : 8));
  for (size_t i = 0; i < cnt; i++) {
    if (dt == TSR_F32)
      ((float *)p)[i] = (float)x[i];
    else
      ((double *)p)[i] = x[i];
  }
  return p;
}

/* A distributed matrix scattered from the row-major doubles x (m x n). */
static inline tsr_dmatrix *dist_matrix_from(tsr_grid *g, const double *x, int64_t m, int64_t n,
                                            int64_t mb, int64_t nb, tsr_dtype dt) {
  tsr_dmatrix *a = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, mb, nb, dt, dist_dev, &a));
  void *h = dist_to_dtype(x, (size_t)(m * n), dt);
  TSR_ASSERT_OK(tsr_dmatrix_scatter(a, 0, h, TSR_ROW_MAJOR, 0));
  free(h);
  return a;
}

/* ||local - ref|| / ||ref|| over the whole matrix (allreduced), ref row-major m x n. */
static inline double dist_rel_error(const tsr_dmatrix *a, const double *ref) {
  tsr_dmatrix_props info;
  TSR_ASSERT_OK(tsr_dmatrix_info(a, &info));
  tsr_grid_props gi;
  TSR_ASSERT_OK(tsr_grid_info(info.grid, &gi));
  tsr_array *loc = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_local(a, &loc));
  double *v = tsr_test_read_f64(loc); /* C order of the local_rows x local_cols view */
  double sums[2] = {0, 0}, tot[2];
  for (int64_t li = 0; li < info.local_rows; li++)
    for (int64_t lj = 0; lj < info.local_cols; lj++) {
      int64_t i = tsr_indxl2g(li, info.mb, gi.myrow, 0, gi.nprow);
      int64_t j = tsr_indxl2g(lj, info.nb, gi.mycol, 0, gi.npcol);
      double d = v[li * info.local_cols + lj] - ref[i * info.n + j];
      sums[0] += isnan(d) ? INFINITY : d * d;
      sums[1] += ref[i * info.n + j] * ref[i * info.n + j];
    }
  free(v);
  tsr_array_release(loc);
  MPI_Allreduce(sums, tot, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return tot[1] > 0 ? sqrt(tot[0] / tot[1]) : sqrt(tot[0]);
}

/* A distributed GEMM problem of the tests: random op(A) (m x k, stored k x m when ta), op(B),
   C0 (m x n), the float64 reference C = alpha op(A) op(B) + beta C0 (tsr_test_ref_gemm_into), and
   A, B, C scattered with nb x nb blocks. With beta = 0, C is filled with NaN: beta = 0 must not
   read C, so a NaN there must not reach the result. */
typedef struct dist_gemm_problem {
  double *a, *b, *c0, *ref; /* host, row-major */
  tsr_dmatrix *A, *B, *C;
} dist_gemm_problem;

static inline double dist_nan_fill(int64_t i, int64_t j, void *ctx) {
  (void)i, (void)j, (void)ctx;
  return NAN;
}

static inline dist_gemm_problem dist_gemm_problem_make(tsr_grid *g, int64_t m, int64_t n, int64_t k,
                                                       int64_t nb, tsr_dtype dt, int ta, int tb,
                                                       double alpha, double beta, uint64_t seed) {
  dist_gemm_problem p;
  p.a = dist_random(ta ? k : m, ta ? m : k, dt, seed);
  p.b = dist_random(tb ? n : k, tb ? k : n, dt, seed + 1);
  p.c0 = dist_random(m, n, dt, seed + 2);
  p.ref = malloc((size_t)(m * n + 1) * sizeof *p.ref);
  assert_non_null(p.ref);
  tsr_test_ref_gemm_into(ta, tb, m, n, k, alpha, p.a, p.b, beta, p.c0, p.ref);
  p.A = dist_matrix_from(g, p.a, ta ? k : m, ta ? m : k, nb, nb, dt);
  p.B = dist_matrix_from(g, p.b, tb ? n : k, tb ? k : n, nb, nb, dt);
  p.C = dist_matrix_from(g, p.c0, m, n, nb, nb, dt);
  if (beta == 0.0) TSR_ASSERT_OK(tsr_dmatrix_fill_fn(p.C, dist_nan_fill, NULL));
  return p;
}

static inline void dist_gemm_problem_free(dist_gemm_problem *p) {
  tsr_dmatrix_free(p->A);
  tsr_dmatrix_free(p->B);
  tsr_dmatrix_free(p->C);
  free(p->a), free(p->b), free(p->c0), free(p->ref);
}

/* TSR_TEST_DEVICE's device; every rank sees the same environment, so all skip together (after
   MPI_Finalize) when the device is missing. */
static inline tsr_device dist_test_device(void) {
  const char *name = getenv("TSR_TEST_DEVICE");
  tsr_device dev = TSR_CPU;
  if (!name || !*name) return dev;
  tsr_status st = tsr_device_parse(name, &dev);
  if (st == TSR_OK) return dev;
  if (dist_rank == 0)
    printf("%s TSR_TEST_DEVICE=%s: %s\n", st == TSR_ERR_NO_DEVICE ? "skipped:" : "bad", name,
           tsr_last_error());
  MPI_Finalize();
  exit(st == TSR_ERR_NO_DEVICE ? TSR_TEST_SKIP : 1);
}

/* main() of an MPI cmocka program: every rank runs the group; the exit code is agreed. */
#define DIST_TEST_MAIN(tests)                                                                      \
  int main(int argc, char **argv) {                                                                \
    MPI_Init(&argc, &argv);                                                                        \
    MPI_Comm_rank(MPI_COMM_WORLD, &dist_rank);                                                     \
    MPI_Comm_size(MPI_COMM_WORLD, &dist_size);                                                     \
    dist_dev = dist_test_device();                                                                 \
    int fails = cmocka_run_group_tests(tests, NULL, NULL);                                         \
    int worst = 0;                                                                                 \
    MPI_Allreduce(&fails, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);                            \
    MPI_Finalize();                                                                                \
    return worst ? 1 : 0;                                                                          \
  }

#endif /* TSR_TEST_DIST_UTIL_H */
