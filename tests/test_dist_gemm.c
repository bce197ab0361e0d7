/* SPDX-License-Identifier: BSD-3-Clause */
/* SUMMA tsr_dist_gemm on every grid that fits the rank count: sizes that are not multiples of
   the block size or smaller than one block, f32 and f64, all four transposes, alpha/beta,
   k = 0, against a float64 reference of the same random inputs; SUMMA's chunked local multiply
   (TSR_SUMMA_CHUNK_FLOPS made small for the wide case); statistics, progress,
   Freivalds' check, and bad arguments. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_dist_util.h"

typedef struct gemm_case {
  int64_t m, n, k, nb;
} gemm_case;

static const gemm_case cases[] = {
    {1, 1, 1, 1},
    {5, 3, 2, 8},
    {37, 29, 23, 4},
    {19, 33, 41, 5},
    {16, 16, 16, 4},
    {9, 7, 0, 4},
    /* local blocks wider than SUMMA's column chunk (256 columns with TSR_SUMMA_CHUNK_FLOPS
       set small for this case): the chunked multiply on the CPU */
    {24, 1100, 1300, 600},
};

static void count_panels(int64_t panel, int64_t panels, void *ctx) {
  int64_t *seen = ctx;
  seen[0]++;
  seen[1] = panel;
  seen[2] = panels;
}

static void run_case(tsr_grid *g, const gemm_case *cs, tsr_dtype dt, int ta, int tb, double alpha,
                     double beta, uint64_t seed) {
  int64_t m = cs->m, n = cs->n, k = cs->k, nb = cs->nb;
  dist_gemm_problem pr = dist_gemm_problem_make(g, m, n, k, nb, dt, ta, tb, alpha, beta, seed);
  tsr_dmatrix *A = pr.A, *B = pr.B, *C = pr.C; /* beta = 0: C holds NaN (must not be read) */
  const double *c0 = pr.c0, *ref = pr.ref;
  int64_t seen[3] = {0, 0, 0};
  tsr_dist_gemm_options opt = {TSR_GEMM_AUTO, count_panels, seen};
  tsr_dist_stats stats;
  TSR_ASSERT_OK(tsr_dist_gemm_ex(ta ? TSR_TRANS : TSR_NO_TRANS, tb ? TSR_TRANS : TSR_NO_TRANS,
                                 alpha, A, B, beta, C, &opt, &stats));
  double err = dist_rel_error(C, ref);
  double tol = tsr_test_tol(dt, k);
  if (err > tol)
    print_error("m=%lld n=%lld k=%lld nb=%lld %s ta=%d tb=%d: error %g > %g\n", (long long)m,
                (long long)n, (long long)k, (long long)nb, tsr_dtype_name(dt), ta, tb, err, tol);
  assert_true(err <= tol);
  /* Steps: one GEMM on a 1 x 1 grid; one block a step on the CPU (and on non-square grids);
     on a GPU on a square grid blocks of one owner are aggregated to >= 1024 columns. */
  tsr_grid_props gp;
  TSR_ASSERT_OK(tsr_grid_info(g, &gp));
  const int64_t nkb = (k + nb - 1) / nb;
  int64_t panels = nkb;
  if (gp.size == 1)
    panels = nkb > 0 ? 1 : 0;
  else if (dist_dev.kind != TSR_DEVICE_CPU && gp.nprow == gp.npcol && nb < 1024) {
    const int64_t group = 1024 / nb, round = group * gp.nprow, full = nkb / round;
    const int64_t rest = nkb - full * round;
    panels = full * gp.nprow + (rest < gp.nprow ? rest : gp.nprow);
  }
  DIST_ASSERT(stats.panels == panels && seen[0] == panels && (panels == 0 || seen[1] == panels));
  DIST_ASSERT(panels == 0 || (stats.panel_width >= (k < nb ? k : nb) && stats.panel_width <= k));
  /* The local GEMM calls: one per step on a GPU (and on the CPU unless TSR_SUMMA_CHUNK_FLOPS
     cuts steps into chunks of columns: test_dist_pipeline's test_cpu_progress); a 1 x 1 grid
     moves no byte between host and device. */
  tsr_dmatrix_props cp;
  TSR_ASSERT_OK(tsr_dmatrix_info(C, &cp));
  const int c_empty = cp.local_rows == 0 || cp.local_cols == 0;
  if (dist_dev.kind != TSR_DEVICE_CPU)
    DIST_ASSERT(stats.gemm_calls == (c_empty ? 0 : (uint64_t)(panels ? panels : 1)));
  if (gp.size == 1)
    DIST_ASSERT(stats.h2d_bytes == 0 && stats.d2h_bytes == 0 && stats.gemm_calls == 1);
  DIST_ASSERT(stats.host_syncs_in_loop == 0 || !stats.staging);
  /* In the flat-tree accounting every byte sent is received by exactly one rank. */
  uint64_t bytes[2] = {stats.bytes_sent, stats.bytes_received}, tot[2];
  MPI_Allreduce(bytes, tot, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  assert_true(tot[0] == tot[1]);
  DIST_ASSERT(stats.total_seconds >= stats.compute_seconds && stats.compute_seconds >= 0);
  /* Freivalds' check accepts the product (beta * C0 included), with the tolerance it reports. */
  if (k > 0) {
    tsr_dist_verify_result vr;
    tsr_dmatrix *C0 = beta != 0.0 ? dist_matrix_from(g, c0, m, n, nb, nb, dt) : NULL;
    TSR_ASSERT_OK(tsr_dist_gemm_verify(ta ? TSR_TRANS : TSR_NO_TRANS, tb ? TSR_TRANS : TSR_NO_TRANS,
                                       alpha, A, B, beta, C0, C, 7, &vr));
    if (vr.verdict != TSR_VERIFY_PASSED)
      print_error("verify: verdict %d residual %g tolerance %g\n", (int)vr.verdict, vr.residual,
                  vr.tolerance);
    assert_int_equal(vr.verdict, TSR_VERIFY_PASSED);
    assert_true(vr.residual >= 0 && vr.residual <= vr.tolerance);
    assert_int_equal(vr.rows_checked, m);
    assert_int_equal(vr.nonfinite_inputs, 0);
    tsr_dmatrix_free(C0);
  }
  dist_gemm_problem_free(&pr);
}

static void test_gemm_all_grids(void **state) {
  (void)state;
  uint64_t seed = 100;
  for (int gi = 0; gi < DIST_NGRIDS; gi++) {
    if (!dist_grid_fits(gi)) continue;
    tsr_grid *g = NULL;
    TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, dist_grids[gi][0], dist_grids[gi][1], &g));
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
      for (int t = 0; t < 4; t++) {
        /* The wide case is for SUMMA's chunking, not the transposes: one of them is enough
           (the oversubscribed np4 runs are slow under the sanitizers). */
        if (cases[c].n > 512 && t != 0) continue;
        if (cases[c].n > 512) setenv("TSR_SUMMA_CHUNK_FLOPS", "1e4", 1);
        run_case(g, &cases[c], TSR_F64, t & 1, t >> 1, 0.75, -0.5, seed++);
        run_case(g, &cases[c], TSR_F32, t & 1, t >> 1, 1.25, 0.0, seed++);
        unsetenv("TSR_SUMMA_CHUNK_FLOPS");
      }
    TSR_ASSERT_OK(tsr_grid_free(g));
  }
}

/* A non-square block size works when the blocks are compatible (op(A) mb = C mb, ...). */
static void test_rectangular_blocks(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  int64_t m = 23, n = 17, k = 19;
  double *a = dist_random(m, k, TSR_F64, 1), *b = dist_random(k, n, TSR_F64, 2);
  double *ref = malloc((size_t)(m * n) * sizeof *ref);
  tsr_test_ref_gemm_into(0, 0, m, n, k, 1.0, a, b, 0.0, NULL, ref);
  tsr_dmatrix *A = dist_matrix_from(g, a, m, k, 3, 5, TSR_F64);
  tsr_dmatrix *B = dist_matrix_from(g, b, k, n, 5, 2, TSR_F64);
  tsr_dmatrix *C = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, 3, 2, TSR_F64, dist_dev, &C));
  TSR_ASSERT_OK(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, C));
  assert_true(dist_rel_error(C, ref) <= tsr_test_tol(TSR_F64, k));
  tsr_dmatrix_free(A), tsr_dmatrix_free(B), tsr_dmatrix_free(C);
  free(a), free(b), free(ref);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* Freivalds' check rejects a product with one wrong element. */
static void test_verify_detects_error(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  int64_t m = 40, n = 30, k = 20;
  tsr_dmatrix *A = NULL, *B = NULL, *C = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, m, k, 8, 8, TSR_F64, dist_dev, &A));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, k, n, 8, 8, TSR_F64, dist_dev, &B));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, 8, 8, TSR_F64, dist_dev, &C));
  TSR_ASSERT_OK(tsr_dmatrix_fill_random(A, 1, -1, 1));
  TSR_ASSERT_OK(tsr_dmatrix_fill_random(B, 2, -1, 1));
  TSR_ASSERT_OK(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, C));
  tsr_dist_verify_result vr;
  TSR_ASSERT_OK(tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, NULL, C, 3, &vr));
  assert_int_equal(vr.verdict, TSR_VERIFY_PASSED);
  assert_true(vr.residual <= vr.tolerance);
  /* Rank 0 owns global element (0, 0): its first local element. */
  if (dist_rank == 0) {
    tsr_array *loc = NULL;
    TSR_ASSERT_OK(tsr_dmatrix_local(C, &loc));
    tsr_array_props info;
    TSR_ASSERT_OK(tsr_array_info(loc, &info));
    double *v = malloc((size_t)info.size * sizeof *v);
    TSR_ASSERT_OK(tsr_array_read(loc, v, (size_t)info.size * sizeof *v));
    v[0] += 1e-3;
    TSR_ASSERT_OK(tsr_array_write(loc, v, (size_t)info.size * sizeof *v));
    free(v);
    tsr_array_release(loc);
  }
  TSR_ASSERT_OK(tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, NULL, C, 3, &vr));
  assert_int_equal(vr.verdict, TSR_VERIFY_FAILED);
  assert_true(vr.residual > 1e3 * vr.tolerance);
  tsr_dmatrix_free(A), tsr_dmatrix_free(B), tsr_dmatrix_free(C);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* Products that underflow (issue 30, finding 4): f32 alpha = 1e-40 (subnormal results), f32
   inputs scaled by 1e-22 (subnormal products), and the f64 counterparts (alpha = 1e-310, inputs
   scaled by 1e-160) pass Freivalds' check, while the same products made wrong (computed with
   alpha times `wrong`, far beyond the underflow allowance) still fail it. */
static void test_verify_underflow(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  const int64_t m = 40, n = 30, k = 20, nb = 8;
  static const struct {
    tsr_dtype dt;
    double alpha, scale, wrong;
  } cases[] = {{TSR_F32, 1e-40, 1.0, 1e10},   {TSR_F32, 1.0, 1e-22, 1e12},
               {TSR_F64, 1e-310, 1.0, 1e10},  {TSR_F64, 1.0, 1e-160, 1e16},
               {TSR_F32, -3e-39, 1e-3, 1e10}, {TSR_F64, 2.0, 1e-155, 1e16}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    tsr_dtype dt = cases[c].dt;
    double *a = dist_random(m, k, dt, 40 + c), *b = dist_random(k, n, dt, 50 + c);
    for (int64_t i = 0; i < m * k; i++)
      a[i] = dt == TSR_F32 ? (double)(float)(a[i] * cases[c].scale) : a[i] * cases[c].scale;
    for (int64_t i = 0; i < k * n; i++)
      b[i] = dt == TSR_F32 ? (double)(float)(b[i] * cases[c].scale) : b[i] * cases[c].scale;
    tsr_dmatrix *A = dist_matrix_from(g, a, m, k, nb, nb, dt);
    tsr_dmatrix *B = dist_matrix_from(g, b, k, n, nb, nb, dt), *C = NULL, *W = NULL;
    TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, nb, nb, dt, dist_dev, &C));
    TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, nb, nb, dt, dist_dev, &W));
    TSR_ASSERT_OK(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, cases[c].alpha, A, B, 0.0, C));
    TSR_ASSERT_OK(
        tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, cases[c].alpha * cases[c].wrong, A, B, 0.0, W));
    tsr_dist_verify_result vr, vw;
    TSR_ASSERT_OK(tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, cases[c].alpha, A, B, 0.0, NULL,
                                       C, 5, &vr));
    TSR_ASSERT_OK(tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, cases[c].alpha, A, B, 0.0, NULL,
                                       W, 5, &vw));
    if (vr.verdict != TSR_VERIFY_PASSED || vw.verdict != TSR_VERIFY_FAILED)
      print_error("case %zu (%s alpha %g scale %g): right %d (residual %g), wrong %d (residual "
                  "%g), tolerance %g\n",
                  c, tsr_dtype_name(dt), cases[c].alpha, cases[c].scale, (int)vr.verdict,
                  vr.residual, (int)vw.verdict, vw.residual, vr.tolerance);
    assert_int_equal(vr.verdict, TSR_VERIFY_PASSED);
    assert_true(vr.residual <= vr.tolerance);
    assert_int_equal(vr.rows_checked, m);
    assert_int_equal(vw.verdict, TSR_VERIFY_FAILED);
    assert_true(vw.residual > 10 * vw.tolerance);
    tsr_dmatrix_free(A), tsr_dmatrix_free(B), tsr_dmatrix_free(C), tsr_dmatrix_free(W);
    free(a), free(b);
  }
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* Deterministic fills for the IEEE cases: a smooth random-looking value, with specials placed
   by the context. */
typedef struct special_fill {
  double scale;
  int64_t si, sj; /* where `special` goes (-1: nowhere) */
  double special;
} special_fill;

static double special_value(int64_t i, int64_t j, void *ctx) {
  const special_fill *f = ctx;
  if (i == f->si && j == f->sj) return f->special;
  return f->scale * sin(1.0 + 0.37 * (double)i + 0.91 * (double)j);
}

/* NaN/Inf (the rule in dist.h): NaN or Inf in A, B or C0 is counted and nothing is verified;
   a product that overflows the dtype leaves those rows out (partial); NaN in C computed from
   finite inputs that cannot overflow is a failure. */
static void test_verify_ieee_specials(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  int64_t m = 24, n = 18, k = 20, nb = 4;
  tsr_dmatrix *A = NULL, *B = NULL, *C = NULL, *C0 = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, m, k, nb, nb, TSR_F32, TSR_CPU, &A));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, k, n, nb, nb, TSR_F32, TSR_CPU, &B));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, nb, nb, TSR_F32, TSR_CPU, &C));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, nb, nb, TSR_F32, TSR_CPU, &C0));
  tsr_dist_verify_result vr;

  /* One NaN and one Inf in A, one Inf in C0: 3 non-finite inputs, not verified. */
  special_fill fa = {1.0, 3, 5, NAN}, fb = {1.0, -1, -1, 0}, fc = {1.0, 2, 2, INFINITY};
  TSR_ASSERT_OK(tsr_dmatrix_fill_fn(A, special_value, &fa));
  TSR_ASSERT_OK(tsr_dmatrix_fill_fn(B, special_value, &fb));
  TSR_ASSERT_OK(tsr_dmatrix_fill_fn(C0, special_value, &fc));
  TSR_ASSERT_OK(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, C));
  TSR_ASSERT_OK(tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, NULL, C, 9, &vr));
  assert_int_equal(vr.verdict, TSR_VERIFY_UNVERIFIED);
  assert_int_equal(vr.nonfinite_inputs, 1);
  assert_int_equal(vr.rows_checked, 0);
  /* With beta != 0, C0's Inf counts too (C0 is only read then). */
  TSR_ASSERT_OK(tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.5, C0, C, 9, &vr));
  assert_int_equal(vr.verdict, TSR_VERIFY_UNVERIFIED);
  assert_int_equal(vr.nonfinite_inputs, 2);

  /* Finite inputs whose product overflows f32 in rows 0..3 only (A's rows scaled by 1e20, B by
     1e20: 1e40 > FLT_MAX), others ordinary: those rows are left out, the rest pass. */
  fa.special = 0, fa.si = -1;
  fa.scale = 1.0;
  TSR_ASSERT_OK(tsr_dmatrix_fill_fn(A, special_value, &fa));
  {
    tsr_dmatrix *Abig = NULL;
    TSR_ASSERT_OK(tsr_dmatrix_create(g, m, k, nb, nb, TSR_F32, TSR_CPU, &Abig));
    special_fill big = {1.0, -1, -1, 0};
    TSR_ASSERT_OK(tsr_dmatrix_fill_fn(Abig, special_value, &big));
    /* Scale the first 4 rows (the first block row, owned by process row 0). */
    tsr_array *loc = NULL;
    TSR_ASSERT_OK(tsr_dmatrix_local(Abig, &loc));
    tsr_dmatrix_props info;
    TSR_ASSERT_OK(tsr_dmatrix_info(Abig, &info));
    tsr_grid_props gi;
    TSR_ASSERT_OK(tsr_grid_info(g, &gi));
    /* tsr_array_read gives the local_rows x local_cols view in C order. */
    size_t cnt = (size_t)(info.local_rows * info.local_cols);
    float *v = malloc((cnt ? cnt : 1) * sizeof *v);
    TSR_ASSERT_OK(tsr_array_read(loc, v, cnt * sizeof *v));
    if (gi.myrow == 0)
      for (int64_t lj = 0; lj < info.local_cols; lj++)
        for (int64_t li = 0; li < 4 && li < info.local_rows; li++)
          v[li * info.local_cols + lj] *= 1e20f;
    TSR_ASSERT_OK(tsr_array_write(loc, v, cnt * sizeof *v));
    free(v);
    tsr_array_release(loc);
    special_fill bb = {1e20, -1, -1, 0};
    tsr_dmatrix *Bbig = NULL;
    TSR_ASSERT_OK(tsr_dmatrix_create(g, k, n, nb, nb, TSR_F32, TSR_CPU, &Bbig));
    TSR_ASSERT_OK(tsr_dmatrix_fill_fn(Bbig, special_value, &bb));
    TSR_ASSERT_OK(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, Abig, Bbig, 0.0, C));
    TSR_ASSERT_OK(
        tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, Abig, Bbig, 0.0, NULL, C, 9, &vr));
    assert_int_equal(vr.nonfinite_inputs, 0);
    if (vr.verdict != TSR_VERIFY_PARTIAL || vr.rows_unverified != 4)
      print_error("verdict %d unverified %lld checked %lld residual %g tol %g\n", (int)vr.verdict,
                  (long long)vr.rows_unverified, (long long)vr.rows_checked, vr.residual,
                  vr.tolerance);
    assert_int_equal(vr.verdict, TSR_VERIFY_PARTIAL);
    assert_int_equal(vr.rows_unverified, 4);
    assert_int_equal(vr.rows_checked, m - 4);
    assert_true(vr.residual <= vr.tolerance);
    tsr_dmatrix_free(Abig);
    tsr_dmatrix_free(Bbig);
  }

  /* Finite, small inputs; a NaN written into C: a wrong product. */
  TSR_ASSERT_OK(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, C));
  TSR_ASSERT_OK(tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, NULL, C, 9, &vr));
  assert_int_equal(vr.verdict, TSR_VERIFY_PASSED);
  if (dist_rank == 0) {
    tsr_array *loc = NULL;
    TSR_ASSERT_OK(tsr_dmatrix_local(C, &loc));
    tsr_array_props li;
    TSR_ASSERT_OK(tsr_array_info(loc, &li));
    float *v = malloc((size_t)li.size * sizeof *v);
    TSR_ASSERT_OK(tsr_array_read(loc, v, (size_t)li.size * sizeof *v));
    v[0] = NAN; /* global element (0, 0) */
    TSR_ASSERT_OK(tsr_array_write(loc, v, (size_t)li.size * sizeof *v));
    free(v);
    tsr_array_release(loc);
  }
  TSR_ASSERT_OK(tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, NULL, C, 9, &vr));
  assert_int_equal(vr.verdict, TSR_VERIFY_FAILED);
  assert_int_equal(vr.nonfinite_inputs, 0);

  /* beta != 0 needs C0. */
  TSR_ASSERT_STATUS(
      tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 1.0, NULL, C, 9, &vr),
      TSR_ERR_NULL_POINTER, "C0");
  tsr_dmatrix_free(A), tsr_dmatrix_free(B), tsr_dmatrix_free(C), tsr_dmatrix_free(C0);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

static void test_bad_arguments(void **state) {
  (void)state;
  tsr_grid *g = NULL, *g2 = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g2));
  tsr_dmatrix *A = NULL, *B = NULL, *C = NULL, *B8 = NULL, *Bf = NULL, *Bg = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 4, 5, 2, 2, TSR_F64, dist_dev, &A));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 6, 3, 2, 2, TSR_F64, dist_dev, &B));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 4, 3, 2, 2, TSR_F64, dist_dev, &C));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 5, 3, 4, 2, TSR_F64, dist_dev, &B8));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 5, 3, 2, 2, TSR_F32, dist_dev, &Bf));
  TSR_ASSERT_OK(tsr_dmatrix_create(g2, 5, 3, 2, 2, TSR_F64, dist_dev, &Bg));
  TSR_ASSERT_STATUS(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, A, B, 0, C), TSR_ERR_SHAPE,
                    "inner dimensions differ");
  TSR_ASSERT_STATUS(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, A, B8, 0, C),
                    TSR_ERR_INVALID_ARGUMENT, "block sizes");
  TSR_ASSERT_STATUS(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, A, Bf, 0, C), TSR_ERR_DTYPE,
                    "dtypes differ");
  TSR_ASSERT_STATUS(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, A, Bg, 0, C),
                    TSR_ERR_INVALID_ARGUMENT, "same grid");
  TSR_ASSERT_STATUS(tsr_dist_gemm((tsr_trans)7, TSR_NO_TRANS, 1, A, B, 0, C),
                    TSR_ERR_INVALID_ARGUMENT, "transpose");
  TSR_ASSERT_STATUS(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, NULL, B, 0, C),
                    TSR_ERR_NULL_POINTER, "A");
  tsr_dist_verify_result res;
  TSR_ASSERT_STATUS(tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, 1, A, B, 0, NULL, C, 1, &res),
                    TSR_ERR_SHAPE, "inner dimensions differ");
  /* A grid that does not match the rank count names P, Q and the size. */
  tsr_grid *bad = NULL;
  TSR_ASSERT_STATUS(tsr_grid_create(MPI_COMM_WORLD, dist_size + 1, 1, &bad),
                    TSR_ERR_INVALID_ARGUMENT, "communicator has");
  assert_null(bad);
  TSR_ASSERT_STATUS(tsr_grid_create(MPI_COMM_WORLD, -1, 2, &bad), TSR_ERR_INVALID_ARGUMENT,
                    "negative");
  tsr_dmatrix *I = NULL;
  TSR_ASSERT_STATUS(tsr_dmatrix_create(g, 3, 3, 0, 2, TSR_F64, dist_dev, &I),
                    TSR_ERR_INVALID_ARGUMENT, "block size");
  assert_null(I);
  TSR_ASSERT_STATUS(tsr_dmatrix_create(g, 3, 3, 2, 2, TSR_I32, dist_dev, &I), TSR_ERR_DTYPE,
                    "f32, f64, c64 or c128");
  /* Sizes that differ between ranks are caught on every rank. */
  if (dist_size > 1)
    TSR_ASSERT_STATUS(tsr_dmatrix_create(g, 3 + dist_rank, 3, 2, 2, TSR_F64, dist_dev, &I),
                      TSR_ERR_INCONSISTENT, "differ between ranks");
  assert_null(I);
  tsr_dmatrix_free(A), tsr_dmatrix_free(B), tsr_dmatrix_free(C), tsr_dmatrix_free(B8),
      tsr_dmatrix_free(Bf);
  tsr_dmatrix_free(Bg);
  TSR_ASSERT_OK(tsr_grid_free(g));
  TSR_ASSERT_OK(tsr_grid_free(g2));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_gemm_all_grids),       cmocka_unit_test(test_rectangular_blocks),
    cmocka_unit_test(test_verify_detects_error), cmocka_unit_test(test_verify_underflow),
    cmocka_unit_test(test_verify_ieee_specials), cmocka_unit_test(test_bad_arguments),
};

DIST_TEST_MAIN(tests)
