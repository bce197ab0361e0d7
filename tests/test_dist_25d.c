/* SPDX-License-Identifier: BSD-3-Clause */
/* The 2.5D schedule of tsr_dist_gemm_ex (Solomonik & Demmel 2011): c replicas on a
   sqrt(P/c) x sqrt(P/c) x c grid, for every c the rank count allows (P = 8: 2 x 2 x 2; P = 4:
   1 x 1 x 4 and 2 x 2 x 1), every transpose combination, ragged sizes (not multiples of the
   block size, fewer panels than layers), f32 and f64, alpha/beta, against a float64 reference
   of the same random inputs; the words moved against SUMMA's; the automatic choice; bad
   replicas; the host<->device copies of device-resident layers (test_25d_device_copies). */
#include <string.h>

#include "test_dist_util.h"

typedef struct gemm_case {
  int64_t m, n, k, nb;
} gemm_case;

static const gemm_case cases[] = {
    {37, 29, 23, 4}, {19, 33, 41, 5}, {16, 16, 16, 4}, {5, 3, 2, 8}, {9, 7, 0, 4}, {3, 4, 61, 3},
};

static void count_panels(int64_t panel, int64_t panels, void *ctx) {
  int64_t *seen = ctx;
  seen[0]++;
  seen[1] = panels;
}

/* Runs one product with 2.5D (replicas c) and checks it; returns this rank's stats. */
static tsr_dist_stats run_case(tsr_grid *g, const gemm_case *cs, tsr_dtype dt, int ta, int tb,
                               double alpha, double beta, int c, uint64_t seed) {
  int64_t m = cs->m, n = cs->n, k = cs->k, nb = cs->nb;
  dist_gemm_problem pr = dist_gemm_problem_make(g, m, n, k, nb, dt, ta, tb, alpha, beta, seed);
  tsr_dmatrix *A = pr.A, *B = pr.B, *C = pr.C; /* beta = 0: C holds NaN (must not be read) */
  const double *ref = pr.ref;
  int64_t seen[2] = {0, 0};
  tsr_dist_gemm_options opt;
  memset(&opt, 0, sizeof opt);
  opt.algorithm = TSR_DIST_GEMM_2_5D;
  opt.replicas = c;
  opt.progress = count_panels;
  opt.progress_ctx = seen;
  tsr_dist_stats stats;
  TSR_ASSERT_OK(tsr_dist_gemm_ex(ta ? TSR_TRANS : TSR_NO_TRANS, tb ? TSR_TRANS : TSR_NO_TRANS,
                                 alpha, A, B, beta, C, &opt, &stats));
  double err = dist_rel_error(C, ref);
  double tol = tsr_test_tol(dt, k);
  if (err > tol)
    print_error("c=%d m=%lld n=%lld k=%lld nb=%lld %s ta=%d tb=%d: error %g > %g\n", c,
                (long long)m, (long long)n, (long long)k, (long long)nb, tsr_dtype_name(dt), ta, tb,
                err, tol);
  assert_true(err <= tol);
  DIST_ASSERT(stats.replicas == c &&
              stats.algorithm == (c > 1 ? TSR_DIST_GEMM_2_5D : TSR_DIST_GEMM_SUMMA));
  DIST_ASSERT(seen[0] == stats.panels && stats.bytes_redistributed <= stats.bytes_received);
  uint64_t bytes[2] = {stats.bytes_sent, stats.bytes_received}, tot[2];
  MPI_Allreduce(bytes, tot, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  assert_true(tot[0] == tot[1]);
  dist_gemm_problem_free(&pr);
  return stats;
}

/* Every valid c for this rank count, on several process grids holding the matrices. */
static void test_25d_all_replicas(void **state) {
  (void)state;
  uint64_t seed = 500;
  static const int grids[][2] = {{0, 0}, {1, 0}, {0, 1}};
  for (int c = 2; c <= dist_size; c++) {
    int q = 1;
    while ((q + 1) * (q + 1) * c <= dist_size)
      q++;
    if (dist_size % c != 0 || q * q * c != dist_size) continue;
    for (int gi = 0; gi < 3; gi++) {
      int p = grids[gi][0] ? dist_size : 0, qq = grids[gi][1] ? dist_size : 0;
      tsr_grid *g = NULL;
      TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, p, qq, &g));
      /* the other grids: the two raggedest cases, f64 (keeps the P = 8 run short) */
      for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        if (gi > 0 && ci != 0 && ci != 5) continue;
        for (int t = 0; t < 4; t++) {
          run_case(g, &cases[ci], TSR_F64, t & 1, t >> 1, 0.75, -0.5, c, seed++);
          if (gi == 0) run_case(g, &cases[ci], TSR_F32, t & 1, t >> 1, 1.25, 0.0, c, seed++);
        }
      }
      TSR_ASSERT_OK(tsr_grid_free(g));
    }
  }
}

/* The words a rank receives. The panel broadcasts of 2.5D (layers of q x q ranks, k / c
   each) carry at most 1/sqrt(c) of SUMMA's on the matrices' grid; with P = 4 and c = 4 (the
   1D split of k, 1 x 1 x 4) there are none, and a product with m, n << k moves fewer words in
   all than SUMMA on 2 x 2. */
static void test_25d_moves_fewer_words(void **state) {
  (void)state;
  if (dist_size != 4 && dist_size != 8) skip();
  int c = dist_size == 4 ? 4 : 2;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  const gemm_case big = {dist_size == 4 ? 8 : 32, dist_size == 4 ? 8 : 32, 256, 4};
  tsr_dist_stats s25 = run_case(g, &big, TSR_F64, 0, 0, 1.0, 0.0, c, 900);
  tsr_dist_stats s2d = run_case(g, &big, TSR_F64, 0, 0, 1.0, 0.0, 1, 901);
  uint64_t v[3] = {s25.bytes_received, s25.bytes_received - s25.bytes_redistributed,
                   s2d.bytes_received},
           tot[3];
  MPI_Allreduce(v, tot, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  assert_true((double)tot[1] <= (double)tot[2] / sqrt((double)c));
  if (dist_size == 4) {
    assert_true(tot[1] == 0 && tot[0] < tot[2]);
  }
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* The choice: SUMMA when asked, checked replicas when given, the 1D split for m, n << k,
   SUMMA for the square product on 2 ranks (no c > 1 applies), a memory limit respected. */
static void test_choose(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  tsr_dmatrix *A = NULL, *B = NULL, *C = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 8, 4096, 16, 16, TSR_F64, TSR_CPU, &A));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 4096, 8, 16, 16, TSR_F64, TSR_CPU, &B));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 8, 8, 16, 16, TSR_F64, TSR_CPU, &C));
  tsr_dist_gemm_options opt;
  memset(&opt, 0, sizeof opt);
  tsr_dist_algorithm alg = TSR_DIST_GEMM_AUTO;
  int r = -1;
  TSR_ASSERT_OK(tsr_dist_gemm_choose(TSR_NO_TRANS, TSR_NO_TRANS, A, B, C, &opt, &alg, &r));
  assert_true(alg == TSR_DIST_GEMM_SUMMA && r == 1);
  opt.algorithm = TSR_DIST_GEMM_AUTO;
  TSR_ASSERT_OK(tsr_dist_gemm_choose(TSR_NO_TRANS, TSR_NO_TRANS, A, B, C, &opt, &alg, &r));
  if (dist_size == 1 || dist_size == 2) {
    /* P = 2 has no q x q x c split with c > 1 except c = 2 (q = 1): the 1D split of k */
    assert_true(dist_size == 1 ? r == 1 : (r == 2 && alg == TSR_DIST_GEMM_2_5D));
  } else if (dist_size == 4) {
    assert_true(r == 4 && alg == TSR_DIST_GEMM_2_5D);
  } else {
    assert_true(r > 1);
  }
  /* a limit too small for any replica gives SUMMA */
  opt.memory_per_rank = 64;
  TSR_ASSERT_OK(tsr_dist_gemm_choose(TSR_NO_TRANS, TSR_NO_TRANS, A, B, C, &opt, &alg, &r));
  assert_true(r == 1 && alg == TSR_DIST_GEMM_SUMMA);
  /* a square product on the square grid of 4: SUMMA (2.5D's reduction does not pay) */
  tsr_dmatrix *S1 = NULL, *S2 = NULL, *S3 = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 512, 512, 16, 16, TSR_F64, TSR_CPU, &S1));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 512, 512, 16, 16, TSR_F64, TSR_CPU, &S2));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 512, 512, 16, 16, TSR_F64, TSR_CPU, &S3));
  opt.memory_per_rank = 0;
  TSR_ASSERT_OK(tsr_dist_gemm_choose(TSR_NO_TRANS, TSR_NO_TRANS, S1, S2, S3, &opt, &alg, &r));
  if (dist_size == 4) assert_true(r == 1);
  /* explicit replicas: checked */
  opt.algorithm = TSR_DIST_GEMM_2_5D;
  opt.replicas = 3;
  tsr_status st = tsr_dist_gemm_choose(TSR_NO_TRANS, TSR_NO_TRANS, A, B, C, &opt, &alg, &r);
  if (dist_size % 3 != 0) {
    assert_int_equal(st, TSR_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tsr_last_error(), "3 replicas"));
    assert_int_equal(tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, C, &opt, NULL),
                     TSR_ERR_INVALID_ARGUMENT);
  }
  opt.replicas = -1;
  assert_int_equal(tsr_dist_gemm_choose(TSR_NO_TRANS, TSR_NO_TRANS, A, B, C, &opt, &alg, &r),
                   TSR_ERR_INVALID_ARGUMENT);
  opt.replicas = 1;
  opt.algorithm = (tsr_dist_algorithm)7;
  assert_int_equal(tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, C, &opt, NULL),
                   TSR_ERR_INVALID_ARGUMENT);
  assert_int_equal(tsr_dist_gemm_choose(TSR_NO_TRANS, TSR_NO_TRANS, A, B, C, &opt, NULL, &r),
                   TSR_ERR_NULL_POINTER);
  tsr_dmatrix_free(A), tsr_dmatrix_free(B), tsr_dmatrix_free(C);
  tsr_dmatrix_free(S1), tsr_dmatrix_free(S2), tsr_dmatrix_free(S3);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* Auto runs whatever it chose, correctly. */
static void test_auto_runs(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  int64_t m = 6, n = 5, k = 203, nb = 4;
  double *a = dist_random(m, k, TSR_F64, 77), *b = dist_random(k, n, TSR_F64, 78);
  double *ref = malloc((size_t)(m * n) * sizeof *ref);
  tsr_test_ref_gemm_into(0, 0, m, n, k, 1.0, a, b, 0.0, NULL, ref);
  tsr_dmatrix *A = dist_matrix_from(g, a, m, k, nb, nb, TSR_F64);
  tsr_dmatrix *B = dist_matrix_from(g, b, k, n, nb, nb, TSR_F64);
  tsr_dmatrix *C = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, nb, nb, TSR_F64, dist_dev, &C));
  tsr_dist_gemm_options opt;
  memset(&opt, 0, sizeof opt);
  opt.algorithm = TSR_DIST_GEMM_AUTO;
  tsr_dist_stats stats;
  TSR_ASSERT_OK(tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, C, &opt, &stats));
  assert_true(dist_rel_error(C, ref) <= tsr_test_tol(TSR_F64, k));
  DIST_ASSERT(dist_size == 1 ? stats.replicas == 1 : stats.replicas > 1);
  tsr_dmatrix_free(A), tsr_dmatrix_free(B), tsr_dmatrix_free(C);
  free(a), free(b), free(ref);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

static int staging_env(void) {
  const char *v = getenv("TSR_DIST_GPU_STAGING");
  if (v && strcmp(v, "1") == 0) return 1;
  if (v && strcmp(v, "0") == 0) return 0;
  return !tsr_dist_gpu_aware();
}

/* Device-resident layers (the emulator of tests/gpu_emu runs this with GPU matrices, staged and
   device to device): the slicing, the layers' SUMMA and the reduction copy between host and
   device exactly what crosses to other ranks when staging (every byte received is copied to
   the device once, a byte sent is copied to the host at most once: once per exchange, once
   per broadcast panel however many ranks receive it; with layers of one rank, c = P, exactly
   the bytes sent), nothing when MPI takes device memory, and never the whole local blocks.
   On the CPU nothing is copied. Transposes, f32 and beta != 0, 1 included. */
static void test_25d_device_copies(void **state) {
  (void)state;
  uint64_t seed = 700;
  const int gpu = dist_dev.kind != TSR_DEVICE_CPU, staged = gpu && staging_env();
  const gemm_case big = {45, 38, 67, 4};
  for (int c = 2; c <= dist_size; c++) {
    int q = 1;
    while ((q + 1) * (q + 1) * c <= dist_size)
      q++;
    if (dist_size % c != 0 || q * q * c != dist_size) continue;
    tsr_grid *g = NULL;
    TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
    for (int t = 0; t < 4; t++) {
      const tsr_dtype dt = t % 2 ? TSR_F32 : TSR_F64;
      const double beta = t < 2 ? 0.0 : 0.5;
      tsr_dist_stats s = run_case(g, &big, dt, t & 1, t >> 1, 1.5, beta, c, seed++);
      if (staged && (s.h2d_bytes != s.bytes_received || s.d2h_bytes > s.bytes_sent ||
                     (q == 1 && s.d2h_bytes != s.bytes_sent)))
        print_error("rank %d c=%d t=%d: h2d %llu (received %llu), d2h %llu (sent %llu)\n",
                    dist_rank, c, t, (unsigned long long)s.h2d_bytes,
                    (unsigned long long)s.bytes_received, (unsigned long long)s.d2h_bytes,
                    (unsigned long long)s.bytes_sent);
      if (staged) {
        DIST_ASSERT(s.h2d_bytes == s.bytes_received && s.d2h_bytes <= s.bytes_sent);
        if (q == 1) DIST_ASSERT(s.d2h_bytes == s.bytes_sent);
        /* at most two copies each way per exchange (around the own part): 2 slicings and c
           reductions, plus SUMMA's panels */
        DIST_ASSERT(s.d2h_copies <= 2 * (uint64_t)(2 + c) + 2 * (uint64_t)s.panels &&
                    s.h2d_copies <= 2 * (uint64_t)(2 + c) + 2 * (uint64_t)s.panels);
      } else {
        DIST_ASSERT(s.h2d_bytes == 0 && s.d2h_bytes == 0 && s.h2d_copies == 0 && s.d2h_copies == 0);
      }
    }
    TSR_ASSERT_OK(tsr_grid_free(g));
  }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_25d_all_replicas),
    cmocka_unit_test(test_25d_device_copies),
    cmocka_unit_test(test_25d_moves_fewer_words),
    cmocka_unit_test(test_choose),
    cmocka_unit_test(test_auto_runs),
};

DIST_TEST_MAIN(tests)
