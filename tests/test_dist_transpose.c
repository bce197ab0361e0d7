/* SPDX-License-Identifier: BSD-3-Clause */
/* Transposed operands of the distributed GEMM go through the one block-cyclic exchange
   (tsr__dm_transpose on tsr__bc_redistribute): every P x Q grid of 1 to 6 ranks (odd and
   prime counts, 1 x P and P x 1 included), ragged sizes, blocks that differ per dimension
   (the transpose turns mb x kb blocks into kb x mb) or exceed the matrix, f32 and f64, all
   four transpose combinations, against the float64 reference of the same random inputs. On a
   device (TSR_TEST_DEVICE; tests/gpu_emu runs it as dist_transpose) the exchange runs on the
   device: a 1 x 1 grid copies nothing between host and device. */
#include "test_dist_util.h"

typedef struct tcase {
  int64_t m, n, k, mb, nb, kb;
} tcase;

static const tcase cases[] = {
    {13, 11, 9, 3, 2, 4}, /* ragged edges, three different block sizes */
    {1, 7, 5, 2, 3, 1},   /* one row, blocks of one */
    {20, 3, 17, 5, 5, 5}, /* tall and thin */
    {6, 6, 6, 8, 8, 8},   /* one block larger than the matrix */
};

/* A block-cyclic matrix holding the row-major doubles x (rows x cols) with rb x cb blocks. */
static tsr_dmatrix *from_host(tsr_grid *g, const double *x, int64_t rows, int64_t cols, int64_t rb,
                              int64_t cb, tsr_dtype dt) {
  return dist_matrix_from(g, x, rows, cols, rb, cb, dt);
}

static void run(tsr_grid *g, const tcase *cs, tsr_dtype dt, int ta, int tb, uint64_t seed) {
  const int64_t m = cs->m, n = cs->n, k = cs->k;
  const double alpha = 1.25, beta = -0.5;
  double *a = dist_random(ta ? k : m, ta ? m : k, dt, seed);
  double *b = dist_random(tb ? n : k, tb ? k : n, dt, seed + 1);
  double *c0 = dist_random(m, n, dt, seed + 2);
  double *ref = malloc((size_t)(m * n) * sizeof *ref);
  assert_non_null(ref);
  tsr_test_ref_gemm_into(ta, tb, m, n, k, alpha, a, b, beta, c0, ref);
  /* Stored shapes and blocks: op(A) is m x k in mb x kb blocks, op(B) k x n in kb x nb. */
  tsr_dmatrix *A =
      ta ? from_host(g, a, k, m, cs->kb, cs->mb, dt) : from_host(g, a, m, k, cs->mb, cs->kb, dt);
  tsr_dmatrix *B =
      tb ? from_host(g, b, n, k, cs->nb, cs->kb, dt) : from_host(g, b, k, n, cs->kb, cs->nb, dt);
  tsr_dmatrix *C = from_host(g, c0, m, n, cs->mb, cs->nb, dt);
  tsr_dist_stats stats;
  TSR_ASSERT_OK(tsr_dist_gemm_ex(ta ? TSR_TRANS : TSR_NO_TRANS, tb ? TSR_TRANS : TSR_NO_TRANS,
                                 alpha, A, B, beta, C, NULL, &stats));
  const double err = dist_rel_error(C, ref), tol = tsr_test_tol(dt, k);
  if (err > tol)
    print_error("%lldx%lldx%lld blocks %lld/%lld/%lld %s ta=%d tb=%d: error %g > %g\n",
                (long long)m, (long long)n, (long long)k, (long long)cs->mb, (long long)cs->nb,
                (long long)cs->kb, tsr_dtype_name(dt), ta, tb, err, tol);
  assert_true(err <= tol);
  /* One rank: the transposes are device-to-device copies (no host copy at all). */
  tsr_grid_props gp;
  TSR_ASSERT_OK(tsr_grid_info(g, &gp));
  if (gp.size == 1)
    assert_true(stats.d2h_copies == 0 && stats.h2d_copies == 0 && stats.d2h_bytes == 0 &&
                stats.h2d_bytes == 0);
  /* Every byte the exchange sent was received by one rank. */
  uint64_t bytes[2] = {stats.bytes_sent, stats.bytes_received}, tot[2];
  MPI_Allreduce(bytes, tot, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  assert_true(tot[0] == tot[1]);
  tsr_dmatrix_free(A);
  tsr_dmatrix_free(B);
  tsr_dmatrix_free(C);
  free(a), free(b), free(c0), free(ref);
}

static void test_transposes_every_grid(void **state) {
  (void)state;
  uint64_t seed = 500;
  for (int p = 1; p <= dist_size; p++) {
    if (dist_size % p) continue;
    tsr_grid *g = NULL;
    TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, p, dist_size / p, &g));
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
      for (int t = 1; t < 4; t++) { /* at least one operand transposed */
        run(g, &cases[c], TSR_F64, t & 1, t >> 1, seed++);
        run(g, &cases[c], TSR_F32, t & 1, t >> 1, seed++);
      }
    TSR_ASSERT_OK(tsr_grid_free(g));
  }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_transposes_every_grid),
};
DIST_TEST_MAIN(tests)
