/* SPDX-License-Identifier: BSD-3-Clause */
/* Block-cyclic matrices: ScaLAPACK index helpers, grid shapes, descriptor and local layout,
   scatter/gather round trips, Philox and function fills. */
#include <stdio.h>

#include "test_dist_util.h"

/* numroc / indxg2p / indxg2l / indxl2g against a brute-force deal of the blocks. */
static void test_index_helpers(void **state) {
  (void)state;
  for (int64_t n = 0; n <= 23; n++)
    for (int64_t nb = 1; nb <= 5; nb++)
      for (int np = 1; np <= 4; np++) {
        int64_t count[4] = {0, 0, 0, 0};
        for (int64_t ig = 0; ig < n; ig++) {
          int owner = (int)((ig / nb) % np);
          assert_int_equal(tsr_indxg2p(ig, nb, 0, np), owner);
          int64_t il = tsr_indxg2l(ig, nb, np);
          assert_int_equal(il, count[owner]);
          assert_int_equal(tsr_indxl2g(il, nb, owner, 0, np), ig);
          count[owner]++;
        }
        for (int p = 0; p < np; p++)
          assert_int_equal(tsr_numroc(n, nb, p, 0, np), count[p]);
      }
  assert_int_equal(tsr_numroc(10, 0, 0, 0, 1), 0); /* invalid: 0, no crash */
  assert_int_equal(tsr_numroc(10, 2, 3, 0, 2), 0);
}

static void test_grid_shapes(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  tsr_grid_props gi;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  TSR_ASSERT_OK(tsr_grid_info(g, &gi));
  /* Near-square with P <= Q; rank r at (r / Q, r % Q). */
  int want_p = dist_size == 4 ? 2 : 1;
  assert_int_equal(gi.nprow, want_p);
  assert_int_equal(gi.npcol, dist_size / want_p);
  assert_int_equal(gi.myrow, dist_rank / gi.npcol);
  assert_int_equal(gi.mycol, dist_rank % gi.npcol);
  int rs = 0, cs = 0, rr = -1;
  MPI_Comm_size(gi.row_comm, &rs);
  MPI_Comm_size(gi.col_comm, &cs);
  MPI_Comm_rank(gi.row_comm, &rr);
  assert_int_equal(rs, gi.npcol);
  assert_int_equal(cs, gi.nprow);
  assert_int_equal(rr, gi.mycol);
  /* The grid's communicator is a duplicate. */
  int cmp = 0;
  MPI_Comm_compare(gi.comm, MPI_COMM_WORLD, &cmp);
  assert_int_equal(cmp, MPI_CONGRUENT);
  TSR_ASSERT_OK(tsr_grid_free(g));
  /* One side given: the other is derived. */
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 1, &g));
  TSR_ASSERT_OK(tsr_grid_info(g, &gi));
  assert_int_equal(gi.nprow, dist_size);
  TSR_ASSERT_OK(tsr_grid_free(g));
  TSR_ASSERT_OK(tsr_grid_free(NULL));
  TSR_ASSERT_STATUS(tsr_grid_create(MPI_COMM_WORLD, 0, 0, NULL), TSR_ERR_NULL_POINTER, NULL);
}

static void test_descriptor_and_local(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  tsr_grid_props gi;
  TSR_ASSERT_OK(tsr_grid_info(g, &gi));
  tsr_dmatrix *a = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 13, 7, 3, 2, TSR_F32, TSR_CPU, &a));
  tsr_dmatrix_props info;
  TSR_ASSERT_OK(tsr_dmatrix_info(a, &info));
  int64_t mloc = tsr_numroc(13, 3, gi.myrow, 0, gi.nprow);
  int64_t nloc = tsr_numroc(7, 2, gi.mycol, 0, gi.npcol);
  assert_int_equal(info.local_rows, mloc);
  assert_int_equal(info.local_cols, nloc);
  assert_int_equal(info.lld, mloc > 1 ? mloc : 1);
  int want[9] = {1, -1, 13, 7, 3, 2, 0, 0, (int)(mloc > 1 ? mloc : 1)};
  for (int i = 0; i < 9; i++)
    assert_int_equal(info.desc[i], want[i]);
  TSR_ASSERT_OK(tsr_dmatrix_set_context(a, 5));
  TSR_ASSERT_OK(tsr_dmatrix_info(a, &info));
  assert_int_equal(info.desc[TSR_DESC_CTXT], 5);
  /* The local block is a column-major view: strides (1, LLD). */
  tsr_array *loc = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_local(a, &loc));
  tsr_array_props ai;
  TSR_ASSERT_OK(tsr_array_info(loc, &ai));
  assert_int_equal(ai.ndim, 2);
  assert_int_equal(ai.shape[0], mloc);
  assert_int_equal(ai.shape[1], nloc);
  assert_int_equal(ai.strides[0], 1);
  assert_int_equal(ai.strides[1], info.lld);
  assert_int_equal(ai.dtype, TSR_F32);
  tsr_dmatrix_free(a);
  /* The view outlives the matrix. */
  TSR_ASSERT_OK(tsr_array_release(loc));
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* Scatter then gather, both layouts, padded leading dimensions, every root. */
static void test_scatter_gather(void **state) {
  (void)state;
  for (int gi = 0; gi < DIST_NGRIDS; gi++) {
    if (!dist_grid_fits(gi)) continue;
    tsr_grid *g = NULL;
    TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, dist_grids[gi][0], dist_grids[gi][1], &g));
    const int64_t sizes[][4] = {{11, 9, 2, 3}, {3, 2, 5, 5}, {1, 17, 1, 4}, {0, 4, 2, 2}};
    for (int s = 0; s < 4; s++)
      for (int dt = 0; dt < 2; dt++)
        for (int lay = 0; lay < 2; lay++) {
          int64_t m = sizes[s][0], n = sizes[s][1];
          tsr_dtype dtype = dt ? TSR_F64 : TSR_F32;
          tsr_layout layout = lay ? TSR_COL_MAJOR : TSR_ROW_MAJOR;
          int64_t ld = (layout == TSR_ROW_MAJOR ? n : m) + 3;
          int64_t cnt = ld * (layout == TSR_ROW_MAJOR ? m : n);
          double *x = dist_random(cnt, 1, dtype, 40 + s);
          void *host = dist_to_dtype(x, (size_t)cnt, dtype);
          size_t es = dtype == TSR_F32 ? 4 : 8;
          void *back = calloc((size_t)cnt + 1, es);
          int root = dist_size - 1;
          tsr_dmatrix *a = NULL;
          TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, sizes[s][2], sizes[s][3], dtype, TSR_CPU, &a));
          TSR_ASSERT_OK(tsr_dmatrix_scatter(a, root, host, layout, ld));
          /* Local elements sit where the block-cyclic rule puts them. */
          double *ref = malloc((size_t)(m * n + 1) * sizeof *ref);
          for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++)
              ref[i * n + j] = x[layout == TSR_ROW_MAJOR ? i * ld + j : i + j * ld];
          assert_true(dist_rel_error(a, ref) == 0.0);
          TSR_ASSERT_OK(tsr_dmatrix_gather(a, root, back, layout, ld));
          if (dist_rank == root) {
            /* Padding stays untouched (zero); the matrix comes back exactly. */
            int ok = 1;
            for (int64_t i = 0; i < m; i++)
              for (int64_t j = 0; j < n; j++) {
                int64_t e = layout == TSR_ROW_MAJOR ? i * ld + j : i + j * ld;
                ok &= memcmp((char *)back + e * es, (char *)host + e * es, es) == 0;
              }
            assert_true(ok);
          }
          tsr_dmatrix_free(a);
          free(x), free(host), free(back), free(ref);
        }
    TSR_ASSERT_OK(tsr_grid_free(g));
  }
}

static void test_scatter_bad(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  tsr_dmatrix *a = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 4, 4, 2, 2, TSR_F64, TSR_CPU, &a));
  double buf[16] = {0};
  TSR_ASSERT_STATUS(tsr_dmatrix_scatter(a, dist_size, buf, TSR_ROW_MAJOR, 0),
                    TSR_ERR_INVALID_ARGUMENT, "root");
  TSR_ASSERT_STATUS(tsr_dmatrix_scatter(a, 0, buf, TSR_ROW_MAJOR, 2), TSR_ERR_INVALID_ARGUMENT,
                    "leading dimension");
  TSR_ASSERT_STATUS(tsr_dmatrix_gather(a, 0, NULL, TSR_COL_MAJOR, 0), TSR_ERR_NULL_POINTER, "host");
  tsr_dmatrix_free(a);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* The Philox fill gives the matrix of tsr_random_uniform for every grid and block size. */
static void test_fill_random_matches_serial(void **state) {
  (void)state;
  for (int dt = 0; dt < 2; dt++) {
    tsr_dtype dtype = dt ? TSR_F64 : TSR_F32;
    int64_t shape[2] = {21, 10};
    tsr_array *serial = NULL;
    TSR_ASSERT_OK(tsr_random_uniform(2, shape, dtype, TSR_CPU, 99, -2.0, 3.0, &serial));
    double *ref = tsr_test_read_f64(serial);
    for (int gi = 0; gi < DIST_NGRIDS; gi++) {
      if (!dist_grid_fits(gi)) continue;
      tsr_grid *g = NULL;
      TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, dist_grids[gi][0], dist_grids[gi][1], &g));
      for (int64_t nb = 1; nb <= 7; nb += 3) {
        tsr_dmatrix *a = NULL;
        TSR_ASSERT_OK(tsr_dmatrix_create(g, 21, 10, nb, nb + 1, dtype, TSR_CPU, &a));
        TSR_ASSERT_OK(tsr_dmatrix_fill_random(a, 99, -2.0, 3.0));
        assert_true(dist_rel_error(a, ref) == 0.0);
        tsr_dmatrix_free(a);
      }
      TSR_ASSERT_OK(tsr_grid_free(g));
    }
    free(ref);
    tsr_array_release(serial);
  }
}

static double index_value(int64_t i, int64_t j, void *ctx) {
  return (double)(i * 1000 + j) * *(double *)ctx;
}

static void test_fill_fn(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  tsr_dmatrix *a = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 9, 14, 2, 3, TSR_F64, TSR_CPU, &a));
  double scale = 0.5;
  TSR_ASSERT_OK(tsr_dmatrix_fill_fn(a, index_value, &scale));
  double ref[9 * 14];
  for (int i = 0; i < 9; i++)
    for (int j = 0; j < 14; j++)
      ref[i * 14 + j] = (i * 1000 + j) * 0.5;
  assert_true(dist_rel_error(a, ref) == 0.0);
  TSR_ASSERT_STATUS(tsr_dmatrix_fill_fn(a, NULL, NULL), TSR_ERR_NULL_POINTER, "function");
  TSR_ASSERT_STATUS(tsr_dmatrix_fill_random(a, 1, 1.0, 1.0), TSR_ERR_INVALID_ARGUMENT, "low");
  tsr_dmatrix_free(a);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* An element function that calls Tessera itself: the failure it provokes is named after the
   function it called, not after tsr_dmatrix_fill_fn (the API context is suspended around it). */
static double failing_call_value(int64_t i, int64_t j, void *ctx) {
  size_t bytes = 0;
  if (tsr_dtype_size((tsr_dtype)99, &bytes) != TSR_ERR_DTYPE) return NAN;
  snprintf((char *)ctx, 256, "%s", tsr_last_error());
  return (double)(i + j);
}

static void test_fill_fn_callback_errors(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  tsr_dmatrix *a = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 5, 4, 2, 2, TSR_F64, TSR_CPU, &a));
  char seen[256] = "";
  TSR_ASSERT_OK(tsr_dmatrix_fill_fn(a, failing_call_value, seen));
  tsr_dmatrix_props info;
  TSR_ASSERT_OK(tsr_dmatrix_info(a, &info));
  if (info.local_rows > 0 && info.local_cols > 0) {
    assert_true(strncmp(seen, "tsr_dtype_size: ", 16) == 0);
  }
  double ref[5 * 4];
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 4; j++)
      ref[i * 4 + j] = i + j;
  assert_true(dist_rel_error(a, ref) == 0.0);
  tsr_dmatrix_free(a);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_index_helpers),
    cmocka_unit_test(test_grid_shapes),
    cmocka_unit_test(test_descriptor_and_local),
    cmocka_unit_test(test_scatter_gather),
    cmocka_unit_test(test_scatter_bad),
    cmocka_unit_test(test_fill_random_matches_serial),
    cmocka_unit_test(test_fill_fn),
    cmocka_unit_test(test_fill_fn_callback_errors),
};

DIST_TEST_MAIN(tests)
