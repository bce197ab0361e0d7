/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tsr_matmul (NumPy semantics) and tsr_gemm / tsr_gemm_ex against a float64 reference
 * computed here with plain loops, on random inputs: 2-D, 1-D promotions, broadcast batches,
 * non-contiguous operands, ragged sizes (1, primes, k = 0), sizes past the GEMM blocking,
 * transposes, alpha/beta, beta = 0 over NaN, column-major and strided C, and shape errors;
 * small calls on host views (the tiny lane), with operands sharing memory with C, and with
 * TSR_GEMM changed between calls.
 */
#define _XOPEN_SOURCE 700 /* setenv, putenv, strdup */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_util.h"

static tsr_device dev;

static const tsr_dtype float_dtypes[2] = {TSR_F32, TSR_F64};

/* ---------------------------------------------------------------- reference */

/*
 * NumPy matmul of C-ordered host values: promotes 1-D operands, broadcasts batch axes.
 * Writes the result shape to (*nout, so) and returns malloc'ed values.
 */
static double *ref_matmul(int na, const int64_t *sa, const double *ha, int nb, const int64_t *sb,
                          const double *hb, int *nout, int64_t *so) {
  int64_t pa[TSR_MAX_DIMS], pb[TSR_MAX_DIMS];
  int pna = na, pnb = nb;
  memcpy(pa, sa, (size_t)na * sizeof(int64_t));
  memcpy(pb, sb, (size_t)nb * sizeof(int64_t));
  if (na == 1) pa[0] = 1, pa[1] = sa[0], pna = 2;
  if (nb == 1) pb[0] = sb[0], pb[1] = 1, pnb = 2;
  int64_t m = pa[pna - 2], k = pa[pna - 1], n = pb[pnb - 1];
  assert_int_equal(k, pb[pnb - 2]);
  int bna = pna - 2, bnb = pnb - 2;
  int nbatch = bna > bnb ? bna : bnb;
  int64_t bshape[TSR_MAX_DIMS];
  for (int i = 0; i < nbatch; i++) {
    int ia = i - (nbatch - bna), ib = i - (nbatch - bnb);
    int64_t da = ia >= 0 ? pa[ia] : 1, db = ib >= 0 ? pb[ib] : 1;
    bshape[i] = da == 1 ? db : da;
  }
  int64_t nb_total = tsr_test_numel(nbatch, bshape);
  double *out = malloc((size_t)(nb_total * m * n > 0 ? nb_total * m * n : 1) * sizeof(double));
  assert_non_null(out);
  for (int64_t bi = 0; bi < nb_total; bi++) {
    const double *A = ha + ct_bcast_index(nbatch, bshape, bi, bna, pa) * m * k;
    const double *B = hb + ct_bcast_index(nbatch, bshape, bi, bnb, pb) * k * n;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        long double acc = 0;
        for (int64_t p = 0; p < k; p++)
          acc += (long double)A[i * k + p] * B[p * n + j];
        out[(bi * m + i) * n + j] = (double)acc;
      }
  }
  *nout = 0;
  for (int i = 0; i < nbatch; i++)
    so[(*nout)++] = bshape[i];
  if (na > 1) so[(*nout)++] = m;
  if (nb > 1) so[(*nout)++] = n;
  return out;
}

static void check_rel(const double *got, const double *ref, int64_t n, tsr_dtype dt, int64_t k,
                      const char *what) {
  double err = tsr_test_rel_error(got, ref, (size_t)n);
  double tol = tsr_test_tol(dt, k);
  if (!(err <= tol)) {
    print_error("%s (%s, k=%lld): relative error %g > %g\n", what, tsr_dtype_name(dt), (long long)k,
                err, tol);
    fail();
  }
}

/* Checks tsr_matmul(a, b) where ha/hb hold the operands' C-order values. */
static void check_matmul_arrays(const tsr_array *a, const double *ha, const tsr_array *b,
                                const double *hb, const char *what) {
  tsr_array_props ia, ib;
  TSR_ASSERT_OK(tsr_array_info(a, &ia));
  TSR_ASSERT_OK(tsr_array_info(b, &ib));
  int nout;
  int64_t so[TSR_MAX_DIMS];
  double *ref = ref_matmul(ia.ndim, ia.shape, ha, ib.ndim, ib.shape, hb, &nout, so);
  tsr_array *c = NULL;
  tsr_status st = tsr_matmul(a, b, &c);
  if (st != TSR_OK) print_error("%s: %s\n", what, tsr_last_error());
  assert_int_equal(st, TSR_OK);
  tsr_array_props ic;
  TSR_ASSERT_OK(tsr_array_info(c, &ic));
  assert_int_equal(ic.contiguous, 1);
  double *got = ct_read_checked(c, ia.dtype, nout, so);
  check_rel(got, ref, tsr_test_numel(nout, so), ia.dtype, ia.shape[ia.ndim - 1], what);
  free(got);
  free(ref);
  tsr_array_release(c);
}

static void check_matmul(tsr_dtype dt, int na, const int64_t *sa, int nb, const int64_t *sb,
                         uint64_t seed, const char *what) {
  double *ha = NULL, *hb = NULL;
  tsr_array *a = tsr_test_random_array(na, sa, dt, dev, seed, &ha);
  tsr_array *b = tsr_test_random_array(nb, sb, dt, dev, seed + 1, &hb);
  check_matmul_arrays(a, ha, b, hb, what);
  tsr_array_release(a);
  tsr_array_release(b);
  free(ha);
  free(hb);
}

/* ---------------------------------------------------------------- matmul */

static void test_matmul_2d(void **state) {
  (void)state;
  static const int64_t mkn[][3] = {
      {1, 1, 1},      {2, 3, 4},     {7, 13, 5}, {127, 1, 3}, {1, 127, 1}, {64, 64, 64},
      {129, 67, 131}, {13, 1021, 7}, {0, 5, 3},  {3, 0, 4},   {3, 5, 0},   {300, 257, 259},
  };
  for (int d = 0; d < 2; d++)
    for (size_t c = 0; c < sizeof mkn / sizeof mkn[0]; c++) {
      int64_t sa[2] = {mkn[c][0], mkn[c][1]}, sb[2] = {mkn[c][1], mkn[c][2]};
      char what[64];
      snprintf(what, sizeof what, "matmul %lldx%lld @ %lldx%lld", (long long)sa[0],
               (long long)sa[1], (long long)sb[0], (long long)sb[1]);
      check_matmul(float_dtypes[d], 2, sa, 2, sb, 10 + c * 2, what);
    }
}

/* An inner dimension of 0 gives zeros (not garbage). */
static void test_matmul_k0_zeros(void **state) {
  (void)state;
  int64_t sa[2] = {3, 0}, sb[2] = {0, 4}, so[2] = {3, 4};
  tsr_array *a = NULL, *b = NULL, *c = NULL;
  TSR_ASSERT_OK(tsr_empty(2, sa, TSR_F64, dev, &a));
  TSR_ASSERT_OK(tsr_empty(2, sb, TSR_F64, dev, &b));
  TSR_ASSERT_OK(tsr_matmul(a, b, &c));
  double *g = ct_read_checked(c, TSR_F64, 2, so);
  for (int i = 0; i < 12; i++)
    assert_true(g[i] == 0.0);
  free(g);
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
}

static void test_matmul_1d_promotions(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = float_dtypes[d];
    int64_t v7[1] = {7}, m7x5[2] = {7, 5}, m4x7[2] = {4, 7}, b3x7x5[3] = {3, 7, 5},
            b2x4x7[3] = {2, 4, 7}, v1[1] = {1}, m1x1[2] = {1, 1}, v1021[1] = {1021};
    check_matmul(dt, 1, v7, 2, m7x5, 100, "vector @ matrix");
    check_matmul(dt, 2, m4x7, 1, v7, 102, "matrix @ vector");
    check_matmul(dt, 1, v7, 1, v7, 104, "vector @ vector");
    check_matmul(dt, 1, v1021, 1, v1021, 106, "long vector @ vector");
    check_matmul(dt, 1, v7, 3, b3x7x5, 108, "vector @ stack");
    check_matmul(dt, 3, b2x4x7, 1, v7, 110, "stack @ vector");
    check_matmul(dt, 1, v1, 2, m1x1, 112, "1 @ 1x1");
    /* vector @ vector is 0-d. */
    double *ha = NULL, *hb = NULL;
    tsr_array *a = tsr_test_random_array(1, v7, dt, dev, 114, &ha);
    tsr_array *b = tsr_test_random_array(1, v7, dt, dev, 115, &hb);
    tsr_array *c = NULL;
    TSR_ASSERT_OK(tsr_matmul(a, b, &c));
    ct_assert_shape(c, dt, 0, NULL);
    tsr_array_release(c);
    tsr_array_release(a);
    tsr_array_release(b);
    free(ha);
    free(hb);
  }
}

static void test_matmul_batched(void **state) {
  (void)state;
  static const struct {
    int na;
    int64_t sa[4];
    int nb;
    int64_t sb[4];
  } cases[] = {
      {4, {2, 1, 3, 4}, 3, {5, 4, 2}}, /* -> (2,5,3,2) */
      {3, {3, 4, 5}, 2, {5, 2}},       /* -> (3,4,2) */
      {2, {4, 5}, 3, {3, 5, 2}},       /* -> (3,4,2) */
      {3, {1, 2, 3}, 3, {4, 3, 2}},    /* -> (4,2,2) */
      {4, {2, 3, 13, 7}, 4, {2, 3, 7, 11}},
      {3, {0, 3, 4}, 3, {1, 4, 2}},       /* empty batch */
      {3, {2, 3, 0}, 3, {2, 0, 5}},       /* k = 0 in a batch: zeros */
      {3, {1021, 3, 4}, 3, {1021, 4, 2}}, /* many small matrices */
      {3, {1, 5, 3}, 4, {7, 11, 3, 2}},   /* a batch of 1 against 7x11 */
  };
  for (int d = 0; d < 2; d++)
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
      check_matmul(float_dtypes[d], cases[c].na, cases[c].sa, cases[c].nb, cases[c].sb, 200 + c * 2,
                   "batched matmul");
  /* The example of the brief, with its result shape spelled out. */
  int64_t sa[4] = {2, 1, 3, 4}, sb[3] = {5, 4, 2}, so[4] = {2, 5, 3, 2};
  tsr_array *a = tsr_test_random_array(4, sa, TSR_F32, dev, 1, NULL);
  tsr_array *b = tsr_test_random_array(3, sb, TSR_F32, dev, 2, NULL), *c = NULL;
  TSR_ASSERT_OK(tsr_matmul(a, b, &c));
  ct_assert_shape(c, TSR_F32, 4, so);
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
}

/* Transposed, stepped, reversed and batch-permuted operands. */
static void test_matmul_non_contiguous(void **state) {
  (void)state;
  static const int64_t mkn[][3] = {{5, 3, 4}, {13, 127, 7}, {131, 67, 129}};
  for (int d = 0; d < 2; d++)
    for (size_t c = 0; c < sizeof mkn / sizeof mkn[0]; c++) {
      tsr_dtype dt = float_dtypes[d];
      int64_t m = mkn[c][0], k = mkn[c][1], n = mkn[c][2];
      /* A = transpose of a (k, m) array. */
      int64_t sat[2] = {k, m};
      double *hat = NULL;
      tsr_array *at = tsr_test_random_array(2, sat, dt, dev, 300 + c, &hat), *a = NULL;
      TSR_ASSERT_OK(tsr_transpose(at, NULL, &a));
      double *ha = malloc((size_t)(m * k) * sizeof(double));
      assert_non_null(ha);
      for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++)
          ha[i * k + p] = hat[p * m + i];
      /* B = rows reversed, every other column of a (k, 2n) array. */
      int64_t sbb[2] = {k, 2 * n};
      double *hbb = NULL;
      tsr_array *bb = tsr_test_random_array(2, sbb, dt, dev, 400 + c, &hbb), *b1 = NULL, *b = NULL;
      TSR_ASSERT_OK(tsr_slice(bb, 1, 0, TSR_SLICE_END, 2, &b1));
      TSR_ASSERT_OK(tsr_slice(b1, 0, TSR_SLICE_END, -TSR_SLICE_END, -1, &b));
      double *hb = malloc((size_t)(k * n) * sizeof(double));
      assert_non_null(hb);
      for (int64_t p = 0; p < k; p++)
        for (int64_t j = 0; j < n; j++)
          hb[p * n + j] = hbb[(k - 1 - p) * 2 * n + 2 * j];
      check_matmul_arrays(a, ha, b, hb, "transposed @ stepped reversed");
      /* Also: A @ A^T through the view (the Gram-matrix pattern). */
      check_matmul_arrays(a, ha, at, hat, "A @ A^T view");
      tsr_array_release(a);
      tsr_array_release(at);
      tsr_array_release(b);
      tsr_array_release(b1);
      tsr_array_release(bb);
      free(ha);
      free(hat);
      free(hb);
      free(hbb);
    }
  /* Batched operand with its last two axes swapped by a permutation. */
  int64_t s3[3] = {3, 6, 5}, sb[3] = {1, 6, 4};
  double *h3 = NULL, *hb = NULL;
  tsr_array *x = tsr_test_random_array(3, s3, TSR_F64, dev, 500, &h3), *xt = NULL;
  tsr_array *b = tsr_test_random_array(3, sb, TSR_F64, dev, 501, &hb);
  int perm[3] = {0, 2, 1};
  TSR_ASSERT_OK(tsr_transpose(x, perm, &xt)); /* (3,5,6) */
  double *hxt = malloc(90 * sizeof(double));
  assert_non_null(hxt);
  for (int bi = 0; bi < 3; bi++)
    for (int i = 0; i < 5; i++)
      for (int j = 0; j < 6; j++)
        hxt[(bi * 5 + i) * 6 + j] = h3[(bi * 6 + j) * 5 + i];
  check_matmul_arrays(xt, hxt, b, hb, "batch-transposed @ broadcast batch");
  free(hxt);
  free(h3);
  free(hb);
  tsr_array_release(x);
  tsr_array_release(xt);
  tsr_array_release(b);
}

static void test_matmul_errors(void **state) {
  (void)state;
  int64_t s34[2] = {3, 4}, s52[2] = {5, 2}, v5[1] = {5}, b234[3] = {2, 3, 4}, b342[3] = {3, 4, 2};
  tsr_array *a = tsr_test_random_array(2, s34, TSR_F32, dev, 1, NULL);
  tsr_array *b = tsr_test_random_array(2, s52, TSR_F32, dev, 2, NULL);
  tsr_array *v = tsr_test_random_array(1, v5, TSR_F32, dev, 3, NULL), *c = NULL;
  TSR_ASSERT_STATUS(tsr_matmul(a, b, &c), TSR_ERR_SHAPE, "inner dimensions differ");
  assert_non_null(strstr(tsr_last_error(), "tsr_matmul"));
  assert_null(c);
  TSR_ASSERT_STATUS(tsr_matmul(a, v, &c), TSR_ERR_SHAPE, "inner dimensions differ");
  TSR_ASSERT_STATUS(tsr_matmul(v, a, &c), TSR_ERR_SHAPE, "inner dimensions differ");
  /* Batch axes 2 and 3 do not broadcast. */
  tsr_array *x = tsr_test_random_array(3, b234, TSR_F32, dev, 4, NULL);
  tsr_array *y = tsr_test_random_array(3, b342, TSR_F32, dev, 5, NULL);
  TSR_ASSERT_STATUS(tsr_matmul(x, y, &c), TSR_ERR_SHAPE, NULL);
  assert_null(c);
  /* 0-d operands are rejected. */
  tsr_array *s = NULL;
  TSR_ASSERT_OK(tsr_full(0, NULL, TSR_F32, dev, 2, &s));
  TSR_ASSERT_STATUS(tsr_matmul(s, a, &c), TSR_ERR_SHAPE, NULL);
  TSR_ASSERT_STATUS(tsr_matmul(a, s, &c), TSR_ERR_SHAPE, NULL);
  assert_null(c);
  /* Integers and mixed dtypes. */
  int64_t s43[2] = {4, 3};
  tsr_array *i1 = tsr_test_random_array(2, s34, TSR_I32, dev, 6, NULL);
  tsr_array *i2 = tsr_test_random_array(2, s43, TSR_I32, dev, 7, NULL);
  tsr_array *f2 = tsr_test_random_array(2, s43, TSR_F64, dev, 8, NULL);
  TSR_ASSERT_STATUS(tsr_matmul(i1, i2, &c), TSR_ERR_DTYPE, NULL);
  TSR_ASSERT_STATUS(tsr_matmul(a, f2, &c), TSR_ERR_DTYPE, NULL);
  assert_null(c);
  tsr_array *arrays[] = {a, b, v, x, y, s, i1, i2, f2};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
    tsr_array_release(arrays[i]);
}

/* ---------------------------------------------------------------- gemm */

/* The reference is tsr_test_ref_gemm (tests/common); argument order of this file's calls. */
static double *ref_gemm(tsr_trans ta, tsr_trans tb, double alpha, const double *A, const double *B,
                        double beta, const double *C0, int64_t m, int64_t n, int64_t k) {
  return tsr_test_ref_gemm(ta != TSR_NO_TRANS, tb != TSR_NO_TRANS, m, n, k, alpha, A, B, beta, C0);
}

/* Every transpose combination, alpha/beta, ragged and blocked sizes, via gemm and gemm_ex. */
static void test_gemm_trans_alpha_beta(void **state) {
  (void)state;
  static const int64_t mnk[][3] = {{1, 1, 1},       {7, 13, 5}, {127, 3, 1021}, {33, 65, 129},
                                   {300, 259, 257}, {0, 4, 3},  {4, 0, 3}};
  static const double ab[][2] = {{1.0, 0.0}, {1.5, -0.75}, {-2.0, 1.0}};
  uint64_t seed = 1000;
  for (int d = 0; d < 2; d++)
    for (size_t c = 0; c < sizeof mnk / sizeof mnk[0]; c++)
      for (int t = 0; t < 4; t++) {
        tsr_dtype dt = float_dtypes[d];
        tsr_trans ta = (t & 1) ? TSR_TRANS : TSR_NO_TRANS, tb = (t & 2) ? TSR_TRANS : TSR_NO_TRANS;
        int64_t m = mnk[c][0], n = mnk[c][1], k = mnk[c][2];
        /* The size past the blocking (packing edges) with NN and TT only, to stay fast. */
        if (m * n * k > 1000000 && (t == 1 || t == 2)) continue;
        int64_t sa[2] = {ta ? k : m, ta ? m : k}, sb[2] = {tb ? n : k, tb ? k : n};
        int64_t sc[2] = {m, n};
        const double alpha = ab[(c + (size_t)t) % 3][0], beta = ab[(c + (size_t)t) % 3][1];
        double *ha = NULL, *hb = NULL, *hc = NULL;
        tsr_array *a = tsr_test_random_array(2, sa, dt, dev, seed++, &ha);
        tsr_array *b = tsr_test_random_array(2, sb, dt, dev, seed++, &hb);
        tsr_array *cc = tsr_test_random_array(2, sc, dt, dev, seed++, &hc);
        double *ref = ref_gemm(ta, tb, alpha, ha, hb, beta, hc, m, n, k);
        /* Both entry points: tsr_gemm (AUTO path) and tsr_gemm_ex (NATIVE). */
        tsr_status st = (t == 3) ? tsr_gemm_ex(ta, tb, alpha, a, b, beta, cc, TSR_GEMM_NATIVE)
                                 : tsr_gemm(ta, tb, alpha, a, b, beta, cc);
        if (st != TSR_OK) print_error("gemm: %s\n", tsr_last_error());
        assert_int_equal(st, TSR_OK);
        double *got = ct_read_checked(cc, dt, 2, sc);
        char what[96];
        snprintf(what, sizeof what, "gemm %c%c m=%lld n=%lld k=%lld alpha=%g beta=%g",
                 ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m, (long long)n, (long long)k, alpha,
                 beta);
        check_rel(got, ref, m * n, dt, k + 2, what);
        free(got);
        free(ref);
        free(ha);
        free(hb);
        free(hc);
        tsr_array_release(a);
        tsr_array_release(b);
        tsr_array_release(cc);
      }
}

/* A or B sharing memory with C is read as it was before the call (a copy), not as C is
   being overwritten: C = A with k past the largest KC block (1024) makes the CPU GEMM re-read
   rows of A it has already written, so this fails without the copy. */
static void test_gemm_aliased_operands(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = float_dtypes[d];
    /* C is A: (m x k) = (m x k)(k x k). */
    int64_t m = 24, k = 1100;
    int64_t sa[2] = {m, k}, sb[2] = {k, k};
    double *ha = NULL, *hb = NULL;
    tsr_array *a = tsr_test_random_array(2, sa, dt, dev, 31, &ha);
    tsr_array *b = tsr_test_random_array(2, sb, dt, dev, 32, &hb);
    TSR_ASSERT_OK(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 0.75, a, b, 0.5, a));
    double *ref = ref_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 0.75, ha, hb, 0.5, ha, m, k, k);
    double *got = tsr_test_read_f64(a);
    check_rel(got, ref, m * k, dt, k, "C is A");
    free(got);
    free(ref);
    free(ha);
    free(hb);
    tsr_array_release(a);
    tsr_array_release(b);

    /* C is B, and A is the transpose of C (a view of the same buffer). */
    int64_t n = 9, q = 67;
    int64_t sq[2] = {q, q}, sn[2] = {q, n};
    a = tsr_test_random_array(2, sq, dt, dev, 33, &ha);
    b = tsr_test_random_array(2, sn, dt, dev, 34, &hb);
    TSR_ASSERT_OK(tsr_gemm(TSR_TRANS, TSR_NO_TRANS, -1.5, a, b, 2.0, b));
    ref = ref_gemm(TSR_TRANS, TSR_NO_TRANS, -1.5, ha, hb, 2.0, hb, q, n, q);
    got = tsr_test_read_f64(b);
    check_rel(got, ref, q * n, dt, q, "C is B");
    free(got);
    free(ref);
    tsr_array *at = NULL;
    TSR_ASSERT_OK(tsr_transpose(a, NULL, &at));
    double *hat = malloc((size_t)(q * q) * sizeof(double));
    assert_non_null(hat);
    for (int64_t i = 0; i < q; i++)
      for (int64_t j = 0; j < q; j++)
        hat[i * q + j] = ha[j * q + i];
    TSR_ASSERT_OK(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, at, a, 1.0, a));
    ref = ref_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, hat, ha, 1.0, ha, q, q, q);
    got = tsr_test_read_f64(a);
    check_rel(got, ref, q * q, dt, q, "A is a transposed view of C, B is C");
    free(got);
    free(ref);
    free(hat);
    free(ha);
    free(hb);
    tsr_array_release(at);
    tsr_array_release(a);
    tsr_array_release(b);
  }
}

/* A host buffer of rows x cols values (random, rounded to dt) with leading dimension ld
   (the padding holds NaN, which must never be read), in dt; *compact gets the values. */
static void *host_matrix(tsr_dtype dt, int64_t rows, int64_t cols, int64_t ld, uint64_t seed,
                         double **compact) {
  const size_t es = dt == TSR_F32 ? 4 : 8, cnt = (size_t)(rows > 0 ? rows * ld : 1);
  void *x = malloc(cnt * es);
  double *v = malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof(double));
  assert_non_null(x);
  assert_non_null(v);
  tsr_test_fill_random(v, (size_t)(rows * cols), seed);
  for (size_t i = 0; i < cnt; ++i) {
    if (dt == TSR_F32)
      ((float *)x)[i] = NAN;
    else
      ((double *)x)[i] = NAN;
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const size_t at = (size_t)(i * ld + j);
      if (dt == TSR_F32) {
        ((float *)x)[at] = (float)v[i * cols + j];
        v[i * cols + j] = (double)(float)v[i * cols + j];
      } else {
        ((double *)x)[at] = v[i * cols + j];
      }
    }
  *compact = v;
  return x;
}

/* tsr_gemm_host (the pointer entry of the BLAS drop-in): every transpose, small sizes around
   the register tiles and one past them, padded leading dimensions (NaN in the padding), alpha
   and beta, against the float64 reference; C sharing memory with A; and bad arguments. */
static void test_gemm_host(void **state) {
  (void)state;
  /* The last three go through the CPU GEMM's tiny lane's other branches (gemm_driver.c): A B^T
     as dot products (k >= 256, few rows), and B's rows 4 KiB apart (ldb 1024 / 512: its strips
     are packed), the last one just below the lane's bound of m*n*k. */
  static const int64_t mnk[][3] = {{1, 1, 1},    {16, 16, 16}, {15, 17, 9},   {29, 33, 31},
                                   {64, 3, 70},  {3, 100, 64}, {130, 97, 60}, {3, 5, 300},
                                   {20, 16, 12}, {63, 64, 64}};
  uint64_t seed = 7000;
  for (int d = 0; d < 2; d++)
    for (size_t c = 0; c < sizeof mnk / sizeof mnk[0]; c++)
      for (int t = 0; t < 4; t++) {
        const tsr_dtype dt = float_dtypes[d];
        const tsr_trans ta = (t & 1) ? TSR_TRANS : TSR_NO_TRANS,
                        tb = (t & 2) ? TSR_TRANS : TSR_NO_TRANS;
        const int64_t m = mnk[c][0], n = mnk[c][1], k = mnk[c][2];
        const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
        const int64_t lda = ac + 3, ldc = n + 2;
        const int64_t ldb = c >= 8 ? (dt == TSR_F32 ? 1024 : 512) : bc + 1 + (int64_t)c;
        const double alpha = t == 0 ? 1.0 : -1.25, beta = (c + (size_t)t) % 2 ? 0.5 : 0.0;
        double *va, *vb, *vc;
        void *a = host_matrix(dt, ar, ac, lda, seed++, &va);
        void *b = host_matrix(dt, br, bc, ldb, seed++, &vb);
        void *cc = host_matrix(dt, m, n, ldc, seed++, &vc);
        if (beta == 0.0) /* C is not read: NaN in it must not propagate */
          for (int64_t i = 0; i < m; ++i) {
            if (dt == TSR_F32)
              ((float *)cc)[i * ldc] = NAN;
            else
              ((double *)cc)[i * ldc] = NAN;
          }
        TSR_ASSERT_OK(tsr_gemm_host(dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cc, ldc));
        double *ref = ref_gemm(ta, tb, alpha, va, vb, beta, vc, m, n, k);
        double *got = malloc((size_t)(m * n) * sizeof(double));
        assert_non_null(got);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j)
            got[i * n + j] =
                dt == TSR_F32 ? (double)((float *)cc)[i * ldc + j] : ((double *)cc)[i * ldc + j];
        check_rel(got, ref, m * n, dt, k, "tsr_gemm_host");
        /* The padding of C is untouched (still NaN). */
        if (ldc > n) {
          const double pad = dt == TSR_F32 ? (double)((float *)cc)[n] : ((double *)cc)[n];
          assert_true(isnan(pad));
        }
        free(got);
        free(ref);
        free(a);
        free(b);
        free(cc);
        free(va);
        free(vb);
        free(vc);
      }
  /* C is A (square, f64): A is read from a copy taken before C is written. */
  double *va, *vb;
  const int64_t q = 37;
  double *a = host_matrix(TSR_F64, q, q, q, 91, &va);
  double *b = host_matrix(TSR_F64, q, q, q, 92, &vb);
  TSR_ASSERT_OK(
      tsr_gemm_host(TSR_F64, TSR_NO_TRANS, TSR_TRANS, q, q, q, 2.0, a, q, b, q, -1.0, a, q));
  double *ref = ref_gemm(TSR_NO_TRANS, TSR_TRANS, 2.0, va, vb, -1.0, va, q, q, q);
  check_rel(a, ref, q * q, TSR_F64, q, "tsr_gemm_host, C is A");
  free(ref);
  /* alpha = 0 and k = 0 do not read A and B (NULL allowed); m = 0 does nothing. */
  TSR_ASSERT_OK(tsr_gemm_host(TSR_F64, TSR_NO_TRANS, TSR_NO_TRANS, q, q, 0, 1.0, NULL, 1, NULL, q,
                              0.0, b, q));
  assert_true(b[0] == 0.0 && b[q * q - 1] == 0.0);
  TSR_ASSERT_OK(tsr_gemm_host(TSR_F32, TSR_NO_TRANS, TSR_NO_TRANS, 0, 5, 5, 1.0, NULL, 5, NULL, 5,
                              0.0, NULL, 5));
  /* Bad arguments: a status naming the values, C untouched. */
  const double keep = a[0];
  TSR_ASSERT_STATUS(
      tsr_gemm_host(TSR_I32, TSR_NO_TRANS, TSR_NO_TRANS, q, q, q, 1.0, a, q, b, q, 0.0, a, q),
      TSR_ERR_DTYPE, "i32");
  TSR_ASSERT_STATUS(
      tsr_gemm_host(TSR_F64, (tsr_trans)7, TSR_NO_TRANS, q, q, q, 1.0, a, q, b, q, 0.0, a, q),
      TSR_ERR_INVALID_ARGUMENT, "transa is 7");
  TSR_ASSERT_STATUS(
      tsr_gemm_host(TSR_F64, TSR_NO_TRANS, TSR_NO_TRANS, q, -2, q, 1.0, a, q, b, q, 0.0, a, q),
      TSR_ERR_INVALID_ARGUMENT, "n = -2");
  TSR_ASSERT_STATUS(
      tsr_gemm_host(TSR_F64, TSR_NO_TRANS, TSR_NO_TRANS, q, q, q + 5, 1.0, a, q, b, q, 0.0, a, q),
      TSR_ERR_INVALID_ARGUMENT, "lda = 37");
  TSR_ASSERT_STATUS(
      tsr_gemm_host(TSR_F64, TSR_NO_TRANS, TSR_NO_TRANS, q, q, q, 1.0, a, q, b, q, 0.0, a, q - 1),
      TSR_ERR_INVALID_ARGUMENT, "ldc = 36");
  TSR_ASSERT_STATUS(
      tsr_gemm_host(TSR_F64, TSR_NO_TRANS, TSR_NO_TRANS, q, q, q, 1.0, NULL, q, b, q, 0.0, a, q),
      TSR_ERR_NULL_POINTER, "a is NULL");
  TSR_ASSERT_STATUS(
      tsr_gemm_host(TSR_F64, TSR_NO_TRANS, TSR_NO_TRANS, q, q, q, 1.0, a, q, b, q, 0.0, NULL, q),
      TSR_ERR_NULL_POINTER, "c is NULL");
  TSR_ASSERT_STATUS(tsr_gemm_host(TSR_F64, TSR_NO_TRANS, TSR_NO_TRANS, INT64_MAX / 4, 2, 2, 1.0, a,
                                  2, b, 2, 0.0, a, 4),
                    TSR_ERR_OVERFLOW, "overflow");
  assert_true(a[0] == keep);
  free(a);
  free(b);
  free(va);
  free(vb);
}

/* beta = 0 never reads C: NaN/Inf in C do not propagate. alpha = 0 and k = 0 never read A and
   B: NaN there does not propagate either. */
static void test_gemm_beta0_alpha0_k0(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = float_dtypes[d];
    int64_t m = 13, n = 7, k = 5;
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
    double *ha = NULL, *hb = NULL, *hc = NULL;
    tsr_array *a = tsr_test_random_array(2, sa, dt, dev, 11, &ha);
    tsr_array *b = tsr_test_random_array(2, sb, dt, dev, 12, &hb);
    tsr_array *c = NULL;
    TSR_ASSERT_OK(tsr_full(2, sc, dt, dev, NAN, &c));
    TSR_ASSERT_OK(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.25, a, b, 0.0, c));
    double *ref = ref_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.25, ha, hb, 0.0, NULL, m, n, k);
    double *got = tsr_test_read_f64(c);
    check_rel(got, ref, m * n, dt, k, "beta = 0 over a NaN C");
    free(got);
    free(ref);
    tsr_array_release(c);

    /* alpha = 0 with NaN in A and B: C = beta * C. */
    tsr_array *an = NULL, *bn = NULL;
    TSR_ASSERT_OK(tsr_full(2, sa, dt, dev, NAN, &an));
    TSR_ASSERT_OK(tsr_full(2, sb, dt, dev, INFINITY, &bn));
    c = tsr_test_random_array(2, sc, dt, dev, 13, &hc);
    TSR_ASSERT_OK(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 0.0, an, bn, -0.5, c));
    got = tsr_test_read_f64(c);
    for (int64_t i = 0; i < m * n; i++)
      hc[i] *= -0.5;
    ct_assert_close(got, hc, m * n, 0, 0, "alpha = 0 over NaN operands");
    free(got);
    free(hc);
    tsr_array_release(c);

    /* k = 0: C = beta * C. */
    int64_t sa0[2] = {m, 0}, sb0[2] = {0, n};
    tsr_array *a0 = NULL, *b0 = NULL;
    TSR_ASSERT_OK(tsr_empty(2, sa0, dt, dev, &a0));
    TSR_ASSERT_OK(tsr_empty(2, sb0, dt, dev, &b0));
    c = tsr_test_random_array(2, sc, dt, dev, 14, &hc);
    TSR_ASSERT_OK(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 3.0, a0, b0, 2.0, c));
    got = tsr_test_read_f64(c);
    for (int64_t i = 0; i < m * n; i++)
      hc[i] *= 2.0;
    ct_assert_close(got, hc, m * n, 0, 0, "k = 0");
    free(got);
    free(hc);
    tsr_array_release(c);
    /* k = 0 and beta = 0 over NaN: zeros. */
    TSR_ASSERT_OK(tsr_full(2, sc, dt, dev, NAN, &c));
    TSR_ASSERT_OK(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 3.0, a0, b0, 0.0, c));
    got = tsr_test_read_f64(c);
    for (int64_t i = 0; i < m * n; i++)
      assert_true(got[i] == 0.0);
    free(got);
    tsr_array_release(c);

    tsr_array *arrays[] = {a, b, an, bn, a0, b0};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
      tsr_array_release(arrays[i]);
    free(ha);
    free(hb);
  }
}

/* C as a column-major matrix (transposed view), as a sub-block of a larger matrix (leading
   dimension > n), and as a column-stepped view: only C's elements change. A and B as views. */
static void test_gemm_strided_operands(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = float_dtypes[d];
    int64_t m = 37, n = 19, k = 23;
    for (int layout = 0; layout < 3; layout++) {
      /* A column-major: transpose of a (k, m) array; B a sub-block of (k+3, n+5). */
      int64_t sat[2] = {k, m}, sbb[2] = {k + 3, n + 5};
      double *hat = NULL, *hbb = NULL;
      tsr_array *at = tsr_test_random_array(2, sat, dt, dev, 60 + (uint64_t)layout, &hat);
      tsr_array *bb = tsr_test_random_array(2, sbb, dt, dev, 70 + (uint64_t)layout, &hbb);
      tsr_array *a = NULL, *b1 = NULL, *b = NULL;
      TSR_ASSERT_OK(tsr_transpose(at, NULL, &a));
      TSR_ASSERT_OK(tsr_slice(bb, 0, 2, 2 + k, 1, &b1));
      TSR_ASSERT_OK(tsr_slice(b1, 1, 3, 3 + n, 1, &b));
      double *ha = malloc((size_t)(m * k) * sizeof(double)),
             *hb = malloc((size_t)(k * n) * sizeof(double));
      assert_non_null(ha);
      assert_non_null(hb);
      for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++)
          ha[i * k + p] = hat[p * m + i];
      for (int64_t p = 0; p < k; p++)
        for (int64_t j = 0; j < n; j++)
          hb[p * n + j] = hbb[(p + 2) * (n + 5) + 3 + j];

      /* The storage of C and the map from C(i,j) to a storage index. */
      int64_t rows, cols;
      if (layout == 0)
        rows = n, cols = m; /* column-major: C = S^T */
      else if (layout == 1)
        rows = m + 4, cols = n + 6; /* C = S[1:m+1, 2:n+2] */
      else
        rows = m, cols = 2 * n + 1; /* C = S[:, 1::2] */
      int64_t ss[2] = {rows, cols};
      double *hs = NULL;
      tsr_array *s = tsr_test_random_array(2, ss, dt, dev, 80 + (uint64_t)layout, &hs);
      tsr_array *c = NULL, *c1 = NULL;
      if (layout == 0) {
        TSR_ASSERT_OK(tsr_transpose(s, NULL, &c));
      } else if (layout == 1) {
        TSR_ASSERT_OK(tsr_slice(s, 0, 1, m + 1, 1, &c1));
        TSR_ASSERT_OK(tsr_slice(c1, 1, 2, n + 2, 1, &c));
      } else {
        TSR_ASSERT_OK(tsr_slice(s, 1, 1, TSR_SLICE_END, 2, &c));
      }
      double *hc = malloc((size_t)(m * n) * sizeof(double));
      assert_non_null(hc);
      int64_t *where = malloc((size_t)(m * n) * sizeof(int64_t));
      assert_non_null(where);
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          int64_t w = layout == 0   ? j * m + i
                      : layout == 1 ? (i + 1) * cols + (j + 2)
                                    : i * cols + 1 + 2 * j;
          where[i * n + j] = w;
          hc[i * n + j] = hs[w];
        }
      const double alpha = -1.5, beta = 0.5;
      double *ref = ref_gemm(TSR_NO_TRANS, TSR_NO_TRANS, alpha, ha, hb, beta, hc, m, n, k);
      TSR_ASSERT_OK(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, alpha, a, b, beta, c));
      double *gs = tsr_test_read_f64(s);
      /* Elements outside C are untouched; C's elements hold the product. */
      double *gc = malloc((size_t)(m * n) * sizeof(double));
      assert_non_null(gc);
      for (int64_t i = 0; i < m * n; i++) {
        gc[i] = gs[where[i]];
        gs[where[i]] = hs[where[i]];
      }
      ct_assert_close(gs, hs, rows * cols, 0, 0, "storage outside C");
      check_rel(gc, ref, m * n, dt, k + 2,
                layout == 0   ? "column-major C"
                : layout == 1 ? "sub-block C"
                              : "column-stepped C");
      free(gc);
      free(gs);
      free(ref);
      free(where);
      free(hc);
      free(hs);
      free(ha);
      free(hb);
      free(hat);
      free(hbb);
      tsr_array *arrays[] = {at, bb, a, b1, b, s, c, c1};
      for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        tsr_array_release(arrays[i]);
    }
  }
}

/* Layouts no BLAS accepts directly (both strides non-unit, negative strides) for A, B and C,
   with the special alpha/beta cases on such a C: only C's elements change, beta = 0 does not
   read C (NaN there does not propagate), alpha = 0 and k = 0 give beta * C. */
static void test_gemm_exotic_layouts(void **state) {
  (void)state;
  static const double ab[][2] = {{1.5, -0.5}, {0.0, 0.5}, {0.0, 0.0}, {1.0, 0.0}};
  static const int64_t ks[] = {11, 0};
  for (int d = 0; d < 2; d++)
    for (size_t kk = 0; kk < 2; kk++)
      for (size_t c = 0; c < sizeof ab / sizeof ab[0]; c++) {
        tsr_dtype dt = float_dtypes[d];
        const int64_t m = 9, n = 7, k = ks[kk];
        const double alpha = ab[c][0], beta = ab[c][1];
        /* A = S[::2, ::-3] of an (2m, 3k) array: strides (6k, -3). */
        int64_t sas[2] = {2 * m, 3 * k};
        double *has = NULL;
        tsr_array *as = tsr_test_random_array(2, sas, dt, dev, 700 + c, &has), *a1 = NULL,
                  *a = NULL;
        TSR_ASSERT_OK(tsr_slice(as, 0, 0, TSR_SLICE_END, 2, &a1));
        TSR_ASSERT_OK(tsr_slice(a1, 1, TSR_SLICE_END, -TSR_SLICE_END, -3, &a));
        double *ha = malloc((size_t)(m * k + 1) * sizeof(double));
        assert_non_null(ha);
        for (int64_t i = 0; i < m; i++)
          for (int64_t p = 0; p < k; p++)
            ha[i * k + p] = has[(2 * i) * 3 * k + (3 * k - 1 - 3 * p)];
        /* B = T[::-1, ::-1] of a (k, n) array. */
        int64_t sbs[2] = {k, n};
        double *hbs = NULL;
        tsr_array *bs = tsr_test_random_array(2, sbs, dt, dev, 710 + c, &hbs), *b1 = NULL,
                  *b = NULL;
        TSR_ASSERT_OK(tsr_slice(bs, 0, TSR_SLICE_END, -TSR_SLICE_END, -1, &b1));
        TSR_ASSERT_OK(tsr_slice(b1, 1, TSR_SLICE_END, -TSR_SLICE_END, -1, &b));
        double *hb = malloc((size_t)(k * n + 1) * sizeof(double));
        assert_non_null(hb);
        for (int64_t p = 0; p < k; p++)
          for (int64_t j = 0; j < n; j++)
            hb[p * n + j] = hbs[(k - 1 - p) * n + (n - 1 - j)];
        /* C = U[::-1, ::2] of an (m, 2n) array: strides (-2n, 2); NaN where beta = 0. */
        int64_t scs[2] = {m, 2 * n};
        double *hcs = NULL;
        tsr_array *cs = tsr_test_random_array(2, scs, dt, dev, 720 + c, &hcs), *c1 = NULL,
                  *cc = NULL;
        if (beta == 0) {
          for (int64_t i = 0; i < m * 2 * n; i++)
            if (i % 2 == 0) hcs[i] = NAN;
          tsr_array_release(cs);
          cs = tsr_test_array_from_f64(2, scs, dt, dev, hcs);
        }
        TSR_ASSERT_OK(tsr_slice(cs, 0, TSR_SLICE_END, -TSR_SLICE_END, -1, &c1));
        TSR_ASSERT_OK(tsr_slice(c1, 1, 0, TSR_SLICE_END, 2, &cc));
        double *hc = malloc((size_t)(m * n) * sizeof(double));
        int64_t *where = malloc((size_t)(m * n) * sizeof(int64_t));
        assert_non_null(hc);
        assert_non_null(where);
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < n; j++) {
            where[i * n + j] = (m - 1 - i) * 2 * n + 2 * j;
            hc[i * n + j] = hcs[where[i * n + j]];
          }
        double *ref = ref_gemm(TSR_NO_TRANS, TSR_NO_TRANS, alpha, ha, hb, beta, hc, m, n, k);
        tsr_status st = tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, alpha, a, b, beta, cc);
        if (st != TSR_OK) print_error("exotic gemm: %s\n", tsr_last_error());
        assert_int_equal(st, TSR_OK);
        double *gs = tsr_test_read_f64(cs);
        double *gc = malloc((size_t)(m * n) * sizeof(double));
        assert_non_null(gc);
        for (int64_t i = 0; i < m * n; i++) {
          gc[i] = gs[where[i]];
          gs[where[i]] = hcs[where[i]];
        }
        char what[96];
        snprintf(what, sizeof what, "exotic-layout gemm k=%lld alpha=%g beta=%g", (long long)k,
                 alpha, beta);
        ct_assert_close(gs, hcs, m * 2 * n, 0, 0, "storage outside C");
        check_rel(gc, ref, m * n, dt, k + 2, what);
        free(gc);
        free(gs);
        free(ref);
        free(where);
        free(hc);
        free(ha);
        free(hb);
        free(has);
        free(hbs);
        free(hcs);
        tsr_array *arrays[] = {as, a1, a, bs, b1, b, cs, c1, cc};
        for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
          tsr_array_release(arrays[i]);
      }
}

/* Every path gives the reference result. On a GPU the vendor path (cuBLAS/hipBLAS) must work
   where config.h says it was built and answer TSR_ERR_UNSUPPORTED only where it was not (the
   test fails closed). The CPU's CBLAS is loaded at run time, so there TSR_ERR_UNSUPPORTED
   remains an allowed answer. */
static void test_gemm_paths(void **state) {
  (void)state;
  int64_t m = 29, n = 31, k = 17;
  int64_t sa[2] = {k, m}, sb[2] = {n, k}, sc[2] = {m, n};
  double *ha = NULL, *hb = NULL, *hc = NULL;
  tsr_array *a = tsr_test_random_array(2, sa, TSR_F64, dev, 90, &ha);
  tsr_array *b = tsr_test_random_array(2, sb, TSR_F64, dev, 91, &hb);
  double *ref = ref_gemm(TSR_TRANS, TSR_TRANS, 0.5, ha, hb, 0.0, NULL, m, n, k);
  for (int path = TSR_GEMM_AUTO; path <= TSR_GEMM_VENDOR; path++) {
    tsr_array *c = tsr_test_random_array(2, sc, TSR_F64, dev, 92, &hc);
    tsr_status st = tsr_gemm_ex(TSR_TRANS, TSR_TRANS, 0.5, a, b, 0.0, c, (tsr_gemm_path)path);
    const int gpu = dev.kind == TSR_DEVICE_CUDA || dev.kind == TSR_DEVICE_HIP;
    if (path == TSR_GEMM_VENDOR && gpu && !TSR_HAVE_GPU_VENDOR_BLAS) {
      TSR_ASSERT_STATUS(st, TSR_ERR_UNSUPPORTED, NULL);
    } else if (path == TSR_GEMM_VENDOR && !gpu && st == TSR_ERR_UNSUPPORTED) {
      TSR_ASSERT_STATUS(st, TSR_ERR_UNSUPPORTED, NULL);
    } else {
      TSR_ASSERT_OK(st);
      double *got = tsr_test_read_f64(c);
      check_rel(got, ref, m * n, TSR_F64, k, "gemm_ex path");
      free(got);
    }
    free(hc);
    tsr_array_release(c);
  }
  free(ref);
  free(ha);
  free(hb);
  tsr_array_release(a);
  tsr_array_release(b);
}

/* Several user threads multiplying at once (each GEMM call has its own packing workspace):
   every result must still match. The threads use the raw API, since cmocka's assertions are
   not thread-safe, and report back a count of bad results. */
enum { CT_THREADS = 3, CT_ITERS = 6, CT_M = 67, CT_K = 131, CT_N = 45 };

struct ct_mm_job {
  const tsr_array *a, *b;
  const double *ref;
  tsr_device dev;
  int bad;
};

static void *ct_mm_thread(void *arg) {
  struct ct_mm_job *job = arg;
  double *got = malloc(sizeof(double) * CT_M * CT_N);
  if (!got) {
    job->bad++;
    return NULL;
  }
  for (int it = 0; it < CT_ITERS; it++) {
    tsr_array *c = NULL;
    int64_t sc[2] = {CT_M, CT_N};
    tsr_status st =
        (it % 2) ? tsr_matmul(job->a, job->b, &c) : tsr_zeros(2, sc, TSR_F64, job->dev, &c);
    if (st == TSR_OK && it % 2 == 0)
      st = tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, job->a, job->b, 0.0, c);
    if (st == TSR_OK) st = tsr_array_read(c, got, sizeof(double) * CT_M * CT_N);
    if (st != TSR_OK ||
        !(tsr_test_rel_error(got, job->ref, CT_M * CT_N) <= tsr_test_tol(TSR_F64, CT_K)))
      job->bad++;
    tsr_array_release(c);
  }
  free(got);
  return NULL;
}

static void test_concurrent_callers(void **state) {
  (void)state;
  int64_t sa[2] = {CT_M, CT_K}, sb[2] = {CT_K, CT_N};
  double *ha = NULL, *hb = NULL;
  tsr_array *a = tsr_test_random_array(2, sa, TSR_F64, dev, 31, &ha);
  tsr_array *b = tsr_test_random_array(2, sb, TSR_F64, dev, 32, &hb);
  int nout;
  int64_t so[TSR_MAX_DIMS];
  double *ref = ref_matmul(2, sa, ha, 2, sb, hb, &nout, so);
  struct ct_mm_job jobs[CT_THREADS];
  pthread_t th[CT_THREADS];
  for (int t = 0; t < CT_THREADS; t++) {
    jobs[t] = (struct ct_mm_job){a, b, ref, dev, 0};
    assert_int_equal(pthread_create(&th[t], NULL, ct_mm_thread, &jobs[t]), 0);
  }
  int bad = 0;
  for (int t = 0; t < CT_THREADS; t++) {
    assert_int_equal(pthread_join(th[t], NULL), 0);
    bad += jobs[t].bad;
  }
  if (bad) print_error("%d of %d concurrent products were wrong\n", bad, CT_THREADS * CT_ITERS);
  assert_int_equal(bad, 0);
  free(ref);
  free(ha);
  free(hb);
  tsr_array_release(a);
  tsr_array_release(b);
}

static void test_gemm_errors(void **state) {
  (void)state;
  int64_t s34[2] = {3, 4}, s45[2] = {4, 5}, s35[2] = {3, 5}, s55[2] = {5, 5}, v3[1] = {3};
  int64_t b345[3] = {3, 4, 5};
  tsr_array *a = tsr_test_random_array(2, s34, TSR_F32, dev, 1, NULL);
  tsr_array *b = tsr_test_random_array(2, s45, TSR_F32, dev, 2, NULL);
  tsr_array *c = tsr_test_random_array(2, s35, TSR_F32, dev, 3, NULL);
  tsr_array *c55 = tsr_test_random_array(2, s55, TSR_F32, dev, 4, NULL);
  tsr_array *v = tsr_test_random_array(1, v3, TSR_F32, dev, 5, NULL);
  tsr_array *x3 = tsr_test_random_array(3, b345, TSR_F32, dev, 6, NULL);
  tsr_array *c64 = tsr_test_random_array(2, s35, TSR_F64, dev, 7, NULL);
  tsr_array *ci = tsr_test_random_array(2, s35, TSR_I32, dev, 8, NULL);
  TSR_ASSERT_OK(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, a, b, 0, c));
  TSR_ASSERT_STATUS(tsr_gemm(TSR_TRANS, TSR_NO_TRANS, 1, a, b, 0, c), TSR_ERR_SHAPE, "tsr_gemm");
  TSR_ASSERT_STATUS(tsr_gemm(TSR_NO_TRANS, TSR_TRANS, 1, a, b, 0, c), TSR_ERR_SHAPE, NULL);
  TSR_ASSERT_STATUS(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, a, b, 0, c55), TSR_ERR_SHAPE, NULL);
  TSR_ASSERT_STATUS(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, v, b, 0, c), TSR_ERR_SHAPE, NULL);
  TSR_ASSERT_STATUS(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, x3, b, 0, c), TSR_ERR_SHAPE, NULL);
  TSR_ASSERT_STATUS(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, a, b, 0, c64), TSR_ERR_DTYPE, NULL);
  TSR_ASSERT_STATUS(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1, a, b, 0, ci), TSR_ERR_DTYPE, NULL);
  TSR_ASSERT_STATUS(tsr_gemm((tsr_trans)3, TSR_NO_TRANS, 1, a, b, 0, c), TSR_ERR_INVALID_ARGUMENT,
                    NULL);
  TSR_ASSERT_STATUS(tsr_gemm(TSR_NO_TRANS, (tsr_trans)-1, 1, a, b, 0, c), TSR_ERR_INVALID_ARGUMENT,
                    NULL);
  TSR_ASSERT_STATUS(tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1, a, b, 0, c, (tsr_gemm_path)9),
                    TSR_ERR_INVALID_ARGUMENT, "tsr_gemm_ex: gemm path 9");
  TSR_ASSERT_STATUS(tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1, a, b, 0, c55, TSR_GEMM_NATIVE),
                    TSR_ERR_SHAPE, "tsr_gemm_ex: c is 5x5 but op(a) op(b) is 3x5");
  tsr_array *arrays[] = {a, b, c, c55, v, x3, c64, ci};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
    tsr_array_release(arrays[i]);
}

/* ---------------------------------------------------------------- gemm: small host calls */

/* Stores the r x c values v (C order, rounded to dt) at mem, row-major with leading dimension
   ld or column-major (ld >= r), and returns a host view of them. */
static tsr_array *tiny_view(tsr_dtype dt, void *mem, int64_t r, int64_t c, int64_t ld,
                            int col_major, const double *v) {
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) {
      const int64_t at = col_major ? i + j * ld : i * ld + j;
      if (dt == TSR_F32)
        ((float *)mem)[at] = (float)v[i * c + j];
      else
        ((double *)mem)[at] = v[i * c + j];
    }
  int64_t shape[2] = {r, c}, strides[2] = {col_major ? 1 : ld, col_major ? ld : 1};
  tsr_array *x = NULL;
  TSR_ASSERT_OK(tsr_from_host_view(2, shape, strides, dt, mem, &x));
  return x;
}

/* n random values in [-1, 1) rounded to dt (the reference then sees what Tessera sees). */
static double *tiny_values(tsr_dtype dt, int64_t n, uint64_t seed) {
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  assert_non_null(v);
  tsr_test_fill_random(v, (size_t)n, seed);
  for (int64_t i = 0; i < n; ++i)
    v[i] = ct_round(dt, v[i]);
  return v;
}

/* A buffer of n elements of dt, all NaN (padding that must never be read or written). */
static void *nan_buffer(tsr_dtype dt, int64_t n) {
  void *x = malloc((size_t)n * 8);
  assert_non_null(x);
  for (int64_t i = 0; i < n; ++i) {
    if (dt == TSR_F32)
      ((float *)x)[i] = NAN;
    else
      ((double *)x)[i] = NAN;
  }
  return x;
}

/* tsr_gemm on host views small enough for the CPU's tiny lane (the BLAS drop-in's, taken by
   tsr_gemm when no matrix needs a copy and C shares no memory with A or B): every transpose,
   row- and column-major A, B and C with padded leading dimensions (NaN in the padding, which
   must stay NaN), alpha and beta (beta = 0 over NaN), against the float64 reference. */
static void test_gemm_tiny_host_views(void **state) {
  (void)state;
  static const int64_t mnk[][3] = {{1, 1, 1}, {16, 16, 16}, {5, 7, 3}, {2, 9, 17}, {33, 1, 4}};
  uint64_t seed = 8100;
  for (int d = 0; d < 2; d++)
    for (size_t s = 0; s < sizeof mnk / sizeof mnk[0]; s++)
      for (int t = 0; t < 4; t++)
        for (int layout = 0; layout < 8; layout++) {
          const tsr_dtype dt = float_dtypes[d];
          const tsr_trans ta = (t & 1) ? TSR_TRANS : TSR_NO_TRANS,
                          tb = (t & 2) ? TSR_TRANS : TSR_NO_TRANS;
          const int64_t m = mnk[s][0], n = mnk[s][1], k = mnk[s][2];
          const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
          const int acm = layout & 1, bcm = (layout >> 1) & 1, ccm = (layout >> 2) & 1;
          const int64_t lda = (acm ? ar : ac) + 2, ldb = (bcm ? br : bc) + 1,
                        ldc = (ccm ? m : n) + 3;
          const double alpha = (t + layout) % 3 ? -0.75 : 1.0, beta = layout % 2 ? 0.0 : 1.5;
          double *va = tiny_values(dt, ar * ac, seed++), *vb = tiny_values(dt, br * bc, seed++);
          double *vc = tiny_values(dt, m * n, seed++);
          const int64_t na = (acm ? ac : ar) * lda, nb = (bcm ? bc : br) * ldb,
                        nc = (ccm ? n : m) * ldc;
          void *ma = nan_buffer(dt, na), *mb = nan_buffer(dt, nb), *mc = nan_buffer(dt, nc);
          tsr_array *a = tiny_view(dt, ma, ar, ac, lda, acm, va);
          tsr_array *b = tiny_view(dt, mb, br, bc, ldb, bcm, vb);
          tsr_array *c = tiny_view(dt, mc, m, n, ldc, ccm, vc);
          if (beta == 0.0) { /* C is not read: NaN in it must not propagate */
            if (dt == TSR_F32)
              ((float *)mc)[0] = NAN;
            else
              ((double *)mc)[0] = NAN;
          }
          TSR_ASSERT_OK(tsr_gemm(ta, tb, alpha, a, b, beta, c));
          double *ref = ref_gemm(ta, tb, alpha, va, vb, beta, vc, m, n, k);
          double *got = tsr_test_read_f64(c);
          char what[96];
          snprintf(what, sizeof what, "tiny %c%c %lldx%lldx%lld layout %d", ta ? 'T' : 'N',
                   tb ? 'T' : 'N', (long long)m, (long long)n, (long long)k, layout);
          check_rel(got, ref, m * n, dt, k, what);
          /* The padding after C's first stored row or column is untouched. */
          const int64_t pad = ccm ? m : n;
          assert_true(isnan(dt == TSR_F32 ? (double)((float *)mc)[pad] : ((double *)mc)[pad]));
          free(got);
          free(ref);
          tsr_array_release(a);
          tsr_array_release(b);
          tsr_array_release(c);
          free(ma);
          free(mb);
          free(mc);
          free(va);
          free(vb);
          free(vc);
        }
}

/* Where one small call's matrices lie in one host buffer: offsets and leading dimensions in
   elements, all row-major; b_is_ct: B is C's transpose (C's memory, column-major), multiplied
   as op(B) = B^T, else op(B) = B (a row-major op(B): the tiny lane needs no buffer for it and
   takes the call unless C meets A or B). */
typedef struct tiny_alias {
  int64_t m, n, k, off_a, lda, off_b, ldb, off_c, ldc;
  int b_is_ct;
  const char *what;
} tiny_alias;

/* Runs the call on values filling the whole buffer, against the reference taken from the
   values before the call. */
static void tiny_alias_case(tsr_dtype dt, const tiny_alias *x, uint64_t seed) {
  const tsr_trans tb = x->b_is_ct ? TSR_TRANS : TSR_NO_TRANS;
  int64_t size = x->off_a + x->m * x->lda;
  if (x->off_b + x->k * x->ldb > size) size = x->off_b + x->k * x->ldb;
  if (x->off_c + x->m * x->ldc > size) size = x->off_c + x->m * x->ldc;
  void *mem = nan_buffer(dt, size);
  double *vall = tiny_values(dt, size, seed);
  for (int64_t i = 0; i < size; ++i) {
    if (dt == TSR_F32)
      ((float *)mem)[i] = (float)vall[i];
    else
      ((double *)mem)[i] = vall[i];
  }
  const size_t es = dt == TSR_F32 ? 4 : 8;
  int64_t sa[2] = {x->m, x->k}, sb[2] = {x->k, x->n}, sbt[2] = {x->n, x->k}, sc[2] = {x->m, x->n};
  int64_t ra[2] = {x->lda, 1}, rb[2] = {x->ldb, 1}, rc[2] = {x->ldc, 1}, rct[2] = {1, x->ldc};
  tsr_array *a = NULL, *b = NULL, *c = NULL;
  TSR_ASSERT_OK(tsr_from_host_view(2, sa, ra, dt, (char *)mem + x->off_a * es, &a));
  TSR_ASSERT_OK(tsr_from_host_view(2, sc, rc, dt, (char *)mem + x->off_c * es, &c));
  if (x->b_is_ct)
    TSR_ASSERT_OK(tsr_from_host_view(2, sbt, rct, dt, (char *)mem + x->off_c * es, &b));
  else
    TSR_ASSERT_OK(tsr_from_host_view(2, sb, rb, dt, (char *)mem + x->off_b * es, &b));
  double *va = tsr_test_read_f64(a), *vb = tsr_test_read_f64(b), *vc = tsr_test_read_f64(c);
  TSR_ASSERT_OK(tsr_gemm(TSR_NO_TRANS, tb, 1.25, a, b, -0.5, c));
  double *ref = ref_gemm(TSR_NO_TRANS, tb, 1.25, va, vb, -0.5, vc, x->m, x->n, x->k);
  double *got = tsr_test_read_f64(c);
  check_rel(got, ref, x->m * x->n, dt, x->k, x->what);
  free(got);
  free(ref);
  free(va);
  free(vb);
  free(vc);
  free(vall);
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
  free(mem);
}

/* Small calls whose operands share memory with C (the tiny lane must refuse them: the general
   path reads A or B from a copy) or lie in the same buffer without sharing an element (the
   lane takes those whose spans do not meet): host views of one buffer, and owned arrays. C is
   64 columns wide, past every sup kernel's register tile, so that later tiles read what
   earlier ones wrote: each aliased case fails without the copy. */
static void test_gemm_tiny_aliasing(void **state) {
  (void)state;
  static const tiny_alias cases[] = {
      {5, 64, 64, 0, 64, 320, 64, 0, 64, 0, "tiny: C is A"},
      {5, 64, 64, 0, 64, 1000, 64, 131, 64, 0, "tiny: C overlaps A's end"},
      {5, 64, 64, 5000, 64, 0, 64, 4095, 64, 0, "tiny: C starts on B's last element"},
      {24, 24, 24, 2000, 24, 0, 24, 0, 24, 1, "tiny: B is C's transpose"},
      {5, 64, 64, 64, 128, 1000, 64, 0, 128, 0, "tiny: A's rows between C's"},
      {5, 64, 64, 0, 64, 320, 64, 4416, 64, 0, "tiny: A, B, C adjacent in one buffer"},
  };
  for (int d = 0; d < 2; d++)
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
      tiny_alias_case(float_dtypes[d], &cases[i], 8600 + (uint64_t)(d * 10) + i);
  /* Owned arrays: C is A. */
  for (int d = 0; d < 2; d++) {
    const tsr_dtype dt = float_dtypes[d];
    int64_t sa[2] = {5, 64}, sb[2] = {64, 64};
    double *ha = NULL, *hb = NULL;
    tsr_array *a = tsr_test_random_array(2, sa, dt, TSR_CPU, 8680 + (uint64_t)d, &ha);
    tsr_array *b = tsr_test_random_array(2, sb, dt, TSR_CPU, 8690 + (uint64_t)d, &hb);
    TSR_ASSERT_OK(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 0.5, a, b, 2.0, a));
    double *ref = ref_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 0.5, ha, hb, 2.0, ha, 5, 64, 64);
    double *got = tsr_test_read_f64(a);
    check_rel(got, ref, 5 * 64, dt, 64, "tiny: owned, C is A");
    free(got);
    free(ref);
    free(ha);
    free(hb);
    tsr_array_release(a);
    tsr_array_release(b);
  }
}

/* TSR_GEMM changed between tsr_gemm calls on the same small host arrays: every call reads it
   (the reader's per-thread memory of its entry, src/core/env.c, must not hide a change). */
static void test_gemm_env_between_calls(void **state) {
  (void)state;
  const char *old = getenv("TSR_GEMM");
  char *saved = old ? strdup(old) : NULL;
  const int64_t m = 6, n = 5, k = 4;
  int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
  double *ha = NULL, *hb = NULL, *hc = NULL;
  tsr_array *a = tsr_test_random_array(2, sa, TSR_F64, TSR_CPU, 8700, &ha);
  tsr_array *b = tsr_test_random_array(2, sb, TSR_F64, TSR_CPU, 8701, &hb);
  tsr_array *c = tsr_test_random_array(2, sc, TSR_F64, TSR_CPU, 8702, &hc);
  double *ref = ref_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, ha, hb, 0.0, NULL, m, n, k);
  static char buf[] = "TSR_GEMM=native";
  const char *values[] = {NULL, "native", "fastest", "NATIVE", "vendor",     "auto",
                          "",   "bogus",  NULL,      "putenv", "putenv-bad", "putenv-auto"};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; ++i) {
    const char *v = values[i];
    if (!v)
      unsetenv("TSR_GEMM");
    else if (strcmp(v, "putenv") == 0)
      assert_int_equal(putenv(buf), 0);
    else if (strcmp(v, "putenv-bad") == 0)
      memcpy(buf + 9, "nativ", 6); /* the same entry, its text changed in place */
    else if (strcmp(v, "putenv-auto") == 0)
      memcpy(buf + 9, "auto", 5);
    else
      setenv("TSR_GEMM", v, 1);
    const int bad =
        v && (strcmp(v, "fastest") == 0 || strcmp(v, "bogus") == 0 || strcmp(v, "putenv-bad") == 0);
    double before[30], after[30];
    TSR_ASSERT_OK(tsr_array_read(c, before, sizeof before));
    tsr_status st = tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, c);
    if (bad) {
      TSR_ASSERT_STATUS(st, TSR_ERR_INVALID_ARGUMENT, "TSR_GEMM=");
      TSR_ASSERT_OK(tsr_array_read(c, after, sizeof after));
      assert_memory_equal(before, after, sizeof before); /* C untouched */
    } else if (v && strcmp(v, "vendor") == 0 && st == TSR_ERR_UNSUPPORTED) {
      TSR_ASSERT_STATUS(st, TSR_ERR_UNSUPPORTED, NULL); /* no vendor BLAS in this build */
    } else {
      TSR_ASSERT_OK(st);
      double *got = tsr_test_read_f64(c);
      check_rel(got, ref, m * n, TSR_F64, k, v ? v : "TSR_GEMM unset");
      free(got);
    }
    /* Scribble on C so that the next good call must write it. */
    TSR_ASSERT_OK(tsr_array_write(c, hc, (size_t)(m * n) * sizeof(double)));
  }
  unsetenv("TSR_GEMM"); /* removes the putenv'd buffer from the environment */
  if (saved) {
    setenv("TSR_GEMM", saved, 1);
    free(saved);
  }
  free(ref);
  free(ha);
  free(hb);
  free(hc);
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
}

int main(void) {
  dev = tsr_test_device();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matmul_2d),
      cmocka_unit_test(test_matmul_k0_zeros),
      cmocka_unit_test(test_matmul_1d_promotions),
      cmocka_unit_test(test_matmul_batched),
      cmocka_unit_test(test_matmul_non_contiguous),
      cmocka_unit_test(test_matmul_errors),
      cmocka_unit_test(test_gemm_trans_alpha_beta),
      cmocka_unit_test(test_gemm_beta0_alpha0_k0),
      cmocka_unit_test(test_gemm_aliased_operands),
      cmocka_unit_test(test_gemm_strided_operands),
      cmocka_unit_test(test_gemm_exotic_layouts),
      cmocka_unit_test(test_gemm_paths),
      cmocka_unit_test(test_concurrent_callers),
      cmocka_unit_test(test_gemm_errors),
      cmocka_unit_test(test_gemm_host),
      cmocka_unit_test(test_gemm_tiny_host_views),
      cmocka_unit_test(test_gemm_tiny_aliasing),
      cmocka_unit_test(test_gemm_env_between_calls),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
