/* SPDX-License-Identifier: BSD-3-Clause */
/* Complex matrices (c64, c128) in the distributed layer (issue 50): tsr_dist_gemm_complex on
   every grid that fits the rank count, every N/T/C combination, complex alpha and beta, odd
   sizes and block sizes, against an independent float64-complex reference (host loops here, not
   the library) on random inputs, purely imaginary and conjugate-sensitive ones included; the
   2.5D schedule; Freivalds' check with a complex vector; the random fill; .npy through MPI-IO
   (<c8, <c16, >c16, Fortran order, a wrong itemsize); bad arguments. */
#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <unistd.h>

#include "test_dist_util.h"

typedef double _Complex zd;

/* Random host matrix (row-major m x n, identical on every rank). kind 0: real and imaginary
   parts uniform in [-1, 1); 1: purely imaginary; 2: real (imaginary parts 0). Rounded to c64
   when dt is c64, so the reference uses the exact inputs. */
static zd *cx_random(int64_t m, int64_t n, tsr_dtype dt, uint64_t seed, int kind) {
  size_t cnt = (size_t)(m * n) + 1;
  double *r = malloc(2 * cnt * sizeof *r);
  zd *z = malloc(cnt * sizeof *z);
  tsr_test_fill_random(r, 2 * cnt, seed);
  for (size_t i = 0; i < cnt; i++) {
    double re = kind == 1 ? 0.0 : r[2 * i], im = kind == 2 ? 0.0 : r[2 * i + 1];
    if (dt == TSR_C64) re = (double)(float)re, im = (double)(float)im;
    z[i] = re + im * I;
  }
  free(r);
  return z;
}

/* The reference: C = alpha op(A) op(B) + beta C0 in float64 complex (row-major; A is m x k, or
   k x m when ta != N; op = C conjugates). beta = 0 does not read C0. */
static zd *cx_ref(tsr_trans ta, tsr_trans tb, int64_t m, int64_t n, int64_t k, zd alpha,
                  const zd *a, const zd *b, zd beta, const zd *c0) {
  zd *c = malloc((size_t)(m * n + 1) * sizeof *c);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      zd s = 0;
      for (int64_t l = 0; l < k; l++) {
        zd x = ta == TSR_NO_TRANS ? a[i * k + l] : a[l * m + i];
        zd y = tb == TSR_NO_TRANS ? b[l * n + j] : b[j * k + l];
        if (ta == TSR_CONJ_TRANS) x = conj(x);
        if (tb == TSR_CONJ_TRANS) y = conj(y);
        s += x * y;
      }
      c[i * n + j] = alpha * s + (beta != 0 ? beta * c0[i * n + j] : 0);
    }
  return c;
}

/* A new distributed matrix scattered from the row-major complex host matrix x. */
static tsr_dmatrix *cx_matrix(tsr_grid *g, const zd *x, int64_t m, int64_t n, int64_t mb,
                              int64_t nb, tsr_dtype dt) {
  tsr_dmatrix *a = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, mb, nb, dt, dist_dev, &a));
  size_t cnt = (size_t)(m * n) + 1;
  void *h = malloc(cnt * 16);
  for (size_t i = 0; i + 1 < cnt; i++) {
    if (dt == TSR_C64)
      ((float _Complex *)h)[i] = (float _Complex)x[i];
    else
      ((zd *)h)[i] = x[i];
  }
  TSR_ASSERT_OK(tsr_dmatrix_scatter(a, 0, h, TSR_ROW_MAJOR, 0));
  free(h);
  return a;
}

/* The whole matrix gathered to every rank (row-major, float64 complex). */
static zd *cx_gather(const tsr_dmatrix *a) {
  tsr_dmatrix_props p;
  TSR_ASSERT_OK(tsr_dmatrix_info(a, &p));
  size_t cnt = (size_t)(p.m * p.n) + 1;
  void *h = calloc(cnt, 16);
  TSR_ASSERT_OK(tsr_dmatrix_gather(a, 0, h, TSR_ROW_MAJOR, 0));
  MPI_Bcast(h, (int)(cnt * (p.dtype == TSR_C64 ? 8 : 16)), MPI_BYTE, 0, MPI_COMM_WORLD);
  zd *z = malloc(cnt * sizeof *z);
  for (size_t i = 0; i < cnt; i++)
    z[i] = p.dtype == TSR_C64 ? (zd)((float _Complex *)h)[i] : ((zd *)h)[i];
  free(h);
  return z;
}

/* ||x - ref|| / ||ref|| (moduli). */
static double cx_rel_error(const zd *x, const zd *ref, size_t n) {
  double d = 0, r = 0;
  for (size_t i = 0; i < n; i++) {
    double e = cabs(x[i] - ref[i]);
    d += isnan(e) ? INFINITY : e * e;
    r += cabs(ref[i]) * cabs(ref[i]);
  }
  return r > 0 ? sqrt(d / r) : sqrt(d);
}

static double cx_tol(tsr_dtype dt, int64_t k) {
  return 4.0 * tsr_test_tol(dt == TSR_C64 ? TSR_F32 : TSR_F64, 2 * (k > 0 ? k : 1));
}

static double nan_fill(int64_t i, int64_t j, void *ctx) {
  (void)i, (void)j, (void)ctx;
  return NAN;
}

static const tsr_trans ops[3] = {TSR_NO_TRANS, TSR_TRANS, TSR_CONJ_TRANS};
static const char *op_name(tsr_trans t) {
  return t == TSR_NO_TRANS ? "N" : t == TSR_TRANS ? "T" : "C";
}

/* One product: random inputs of kinds ka, kb, C0 random (beta != 0) or NaN (beta = 0), the
   distributed result against the reference. Returns the relative error (same on every rank). */
static double run_one(tsr_grid *g, tsr_dtype dt, int64_t m, int64_t n, int64_t k, int64_t nb,
                      tsr_trans ta, tsr_trans tb, zd alpha, zd beta, int ka, int kb,
                      const tsr_dist_gemm_options *opt, uint64_t seed) {
  const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  zd *a = cx_random(ar, ac, dt, seed, ka), *b = cx_random(br, bc, dt, seed + 1, kb);
  zd *c0 = cx_random(m, n, dt, seed + 2, 0);
  zd *ref = cx_ref(ta, tb, m, n, k, alpha, a, b, beta, c0);
  tsr_dmatrix *A = cx_matrix(g, a, ar, ac, nb, nb, dt), *B = cx_matrix(g, b, br, bc, nb, nb, dt);
  tsr_dmatrix *C = cx_matrix(g, c0, m, n, nb, nb, dt);
  if (beta == 0) TSR_ASSERT_OK(tsr_dmatrix_fill_fn(C, nan_fill, NULL));
  tsr_complex128 al = {creal(alpha), cimag(alpha)}, be = {creal(beta), cimag(beta)};
  tsr_dist_stats stats;
  TSR_ASSERT_OK(tsr_dist_gemm_complex(ta, tb, al, A, B, be, C, opt, &stats));
  zd *got = cx_gather(C);
  double err = cx_rel_error(got, ref, (size_t)(m * n));
  if (err > cx_tol(dt, k) && dist_rank == 0)
    print_error("%s m=%lld n=%lld k=%lld nb=%lld op %s%s kinds %d%d: error %g\n",
                tsr_dtype_name(dt), (long long)m, (long long)n, (long long)k, (long long)nb,
                op_name(ta), op_name(tb), ka, kb, err);
  tsr_dmatrix_free(A), tsr_dmatrix_free(B), tsr_dmatrix_free(C);
  free(a), free(b), free(c0), free(ref), free(got);
  return err;
}

typedef struct cx_case {
  int64_t m, n, k, nb;
} cx_case;

static const cx_case cases[] = {{1, 1, 1, 1}, {7, 5, 3, 2}, {13, 11, 9, 4}, {9, 7, 0, 3}};

/* Every grid, both dtypes, all nine op combinations, complex alpha/beta (and beta = 0 with NaN
   in C, which must not be read). */
static void test_complex_gemm_all(void **state) {
  (void)state;
  const tsr_dtype dts[2] = {TSR_C64, TSR_C128};
  for (int gi = 0; gi < DIST_NGRIDS; gi++) {
    if (!dist_grid_fits(gi)) continue;
    tsr_grid *g = NULL;
    TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, dist_grids[gi][0], dist_grids[gi][1], &g));
    uint64_t seed = 100 + (uint64_t)gi;
    for (int d = 0; d < 2; d++)
      for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int x = 0; x < 3; x++)
          for (int y = 0; y < 3; y++) {
            const cx_case *cs = &cases[c];
            zd alpha = 1.5 - 0.5 * I, beta = (x + y) % 2 ? 0.25 + 0.75 * I : 0;
            double err = run_one(g, dts[d], cs->m, cs->n, cs->k, cs->nb, ops[x], ops[y], alpha,
                                 beta, 0, 0, NULL, seed += 3);
            DIST_ASSERT(err <= cx_tol(dts[d], cs->k));
          }
    TSR_ASSERT_OK(tsr_grid_free(g));
  }
}

/* Conjugate-sensitive inputs: A purely imaginary (conj(A) = -A), B real, alpha purely
   imaginary: a missing or extra conjugation negates the product, so the error would be 2. */
static void test_conjugate_sensitive(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = d ? TSR_C128 : TSR_C64;
    for (int x = 0; x < 3; x++)
      for (int y = 0; y < 3; y++) {
        double err = run_one(g, dt, 10, 9, 11, 3, ops[x], ops[y], 2.0 * I, 0, 1, 2, NULL,
                             500 + (uint64_t)(3 * x + y));
        DIST_ASSERT(err <= cx_tol(dt, 11));
        err = run_one(g, dt, 10, 9, 11, 3, ops[x], ops[y], -0.5 + 1.0 * I, 1.0 * I, 2, 1, NULL,
                      600 + (uint64_t)(3 * x + y));
        DIST_ASSERT(err <= cx_tol(dt, 11));
      }
  }
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* 2.5D with c = P replicas (layers of 1 x 1) where P > 1: slicing, conjugating transposes,
   complex accumulation of the layers' partial products and a complex beta. */
static void test_complex_25d(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  tsr_dist_gemm_options opt;
  memset(&opt, 0, sizeof opt);
  opt.algorithm = dist_size > 1 ? TSR_DIST_GEMM_2_5D : TSR_DIST_GEMM_SUMMA;
  opt.replicas = dist_size;
  for (int x = 0; x < 3; x++)
    for (int y = 0; y < 3; y++) {
      double err = run_one(g, TSR_C128, 11, 13, 17, 3, ops[x], ops[y], 0.5 + 2.0 * I,
                           -1.0 + 0.5 * I, 0, 0, &opt, 700 + (uint64_t)(3 * x + y));
      DIST_ASSERT(err <= cx_tol(TSR_C128, 17));
    }
  double err =
      run_one(g, TSR_C64, 12, 10, 14, 4, TSR_CONJ_TRANS, TSR_TRANS, 1.0, 0.5 * I, 1, 0, &opt, 720);
  DIST_ASSERT(err <= cx_tol(TSR_C64, 14));
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* 0.5 everywhere but NaN at (1, 2) (tsr_dmatrix_fill_fn: the real part; imaginary 0). */
static double nan_at_1_2(int64_t i, int64_t j, void *ctx) {
  (void)ctx;
  return i == 1 && j == 2 ? NAN : 0.5;
}

/* Freivalds' check with a complex vector: a right product passes, a product with T where C
   was asked (a missing conjugation) fails, complex scalars for real matrices are refused. */
static void test_complex_verify(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = d ? TSR_C128 : TSR_C64;
    const int64_t m = 15, n = 12, k = 10, nb = 4;
    tsr_dmatrix *A = NULL, *B = NULL, *C0 = NULL, *C = NULL;
    TSR_ASSERT_OK(tsr_dmatrix_create(g, k, m, nb, nb, dt, dist_dev, &A));
    TSR_ASSERT_OK(tsr_dmatrix_create(g, k, n, nb, nb, dt, dist_dev, &B));
    TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, nb, nb, dt, dist_dev, &C0));
    TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, nb, nb, dt, dist_dev, &C));
    TSR_ASSERT_OK(tsr_dmatrix_fill_random(A, 11, -1, 1));
    TSR_ASSERT_OK(tsr_dmatrix_fill_random(B, 12, -1, 1));
    TSR_ASSERT_OK(tsr_dmatrix_fill_random(C0, 13, -1, 1));
    tsr_complex128 al = {0.75, -1.25}, be = {-0.5, 0.5};
    tsr_dist_verify_result r;
    for (int wrong = 0; wrong < 2; wrong++) {
      TSR_ASSERT_OK(tsr_dmatrix_fill_random(C, 13, -1, 1)); /* C = C0 */
      TSR_ASSERT_OK(tsr_dist_gemm_complex(wrong ? TSR_TRANS : TSR_CONJ_TRANS, TSR_NO_TRANS, al, A,
                                          B, be, C, NULL, NULL));
      TSR_ASSERT_OK(
          tsr_dist_gemm_verify_complex(TSR_CONJ_TRANS, TSR_NO_TRANS, al, A, B, be, C0, C, 42, &r));
      DIST_ASSERT(r.verdict == (wrong ? TSR_VERIFY_FAILED : TSR_VERIFY_PASSED));
      DIST_ASSERT(r.rows_checked == m);
      if (wrong)
        DIST_ASSERT(r.residual > 1e3 * r.tolerance);
      else
        DIST_ASSERT(r.residual <= r.tolerance);
    }
    tsr_dmatrix_free(A), tsr_dmatrix_free(B), tsr_dmatrix_free(C0), tsr_dmatrix_free(C);
  }
  /* Every pair of operations, on device-resident matrices the check reads as real parts: the
     right product passes, the product with the other of T/C (or N for C) fails; a NaN part
     makes the check unverified, each non-finite part counted. */
  const tsr_trans ops[3] = {TSR_NO_TRANS, TSR_TRANS, TSR_CONJ_TRANS};
  for (int d = 0; d < 2; d++)
    for (int ia = 0; ia < 3; ia++)
      for (int ib = 0; ib < 3; ib++) {
        tsr_dtype dt = d ? TSR_C128 : TSR_C64;
        const int64_t m = 9, n = 7, k = 6, nb = 2;
        const tsr_trans ta = ops[ia], tb = ops[ib];
        tsr_dmatrix *A = NULL, *B = NULL, *C = NULL;
        TSR_ASSERT_OK(tsr_dmatrix_create(g, ta == TSR_NO_TRANS ? m : k, ta == TSR_NO_TRANS ? k : m,
                                         nb, nb, dt, dist_dev, &A));
        TSR_ASSERT_OK(tsr_dmatrix_create(g, tb == TSR_NO_TRANS ? k : n, tb == TSR_NO_TRANS ? n : k,
                                         nb, nb, dt, dist_dev, &B));
        TSR_ASSERT_OK(tsr_dmatrix_create(g, m, n, nb, nb, dt, dist_dev, &C));
        TSR_ASSERT_OK(tsr_dmatrix_fill_random(A, 21 + ia, -1, 1));
        TSR_ASSERT_OK(tsr_dmatrix_fill_random(B, 31 + ib, -1, 1));
        tsr_complex128 al = {-0.25, 1.5}, zero = {0.0, 0.0};
        tsr_dist_verify_result r;
        for (int wrong = 0; wrong < 2; wrong++) {
          /* wrong: op(B) with the conjugation flipped (N <-> C is not a shape change only for
             square operands, so flip T <-> C and, for N, conjugate A's op instead) */
          tsr_trans pa = ta, pb = tb;
          if (wrong && tb != TSR_NO_TRANS)
            pb = tb == TSR_TRANS ? TSR_CONJ_TRANS : TSR_TRANS;
          else if (wrong)
            pa = ta == TSR_NO_TRANS ? ta : (ta == TSR_TRANS ? TSR_CONJ_TRANS : TSR_TRANS);
          if (wrong && tb == TSR_NO_TRANS && ta == TSR_NO_TRANS) continue; /* nothing to flip */
          TSR_ASSERT_OK(tsr_dist_gemm_complex(pa, pb, al, A, B, zero, C, NULL, NULL));
          TSR_ASSERT_OK(tsr_dist_gemm_verify_complex(ta, tb, al, A, B, zero, NULL, C, 5, &r));
          DIST_ASSERT(r.verdict == (wrong ? TSR_VERIFY_FAILED : TSR_VERIFY_PASSED));
          DIST_ASSERT(r.nonfinite_inputs == 0);
        }
        if (ia == 0 && ib == 0) { /* a NaN real part in A at (1, 2), imaginary parts 0 */
          TSR_ASSERT_OK(tsr_dmatrix_fill_fn(A, nan_at_1_2, NULL));
          TSR_ASSERT_OK(tsr_dist_gemm_verify_complex(ta, tb, al, A, B, zero, NULL, C, 5, &r));
          DIST_ASSERT(r.verdict == TSR_VERIFY_UNVERIFIED);
          DIST_ASSERT(r.nonfinite_inputs == 1);
        }
        tsr_dmatrix_free(A), tsr_dmatrix_free(B), tsr_dmatrix_free(C);
      }
  /* complex scalars with real matrices: refused by the product and by the check */
  tsr_dmatrix *R = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 4, 4, 2, 2, TSR_F64, dist_dev, &R));
  TSR_ASSERT_OK(tsr_dmatrix_fill_random(R, 3, -1, 1));
  tsr_complex128 al = {1.0, 0.5}, be = {0.0, 0.0};
  TSR_ASSERT_STATUS(tsr_dist_gemm_complex(TSR_NO_TRANS, TSR_NO_TRANS, al, R, R, be, R, NULL, NULL),
                    TSR_ERR_INVALID_ARGUMENT, "alpha = (1, 0.5)");
  tsr_dist_verify_result r;
  TSR_ASSERT_STATUS(
      tsr_dist_gemm_verify_complex(TSR_NO_TRANS, TSR_NO_TRANS, al, R, R, be, NULL, R, 1, &r),
      TSR_ERR_INVALID_ARGUMENT, "complex scalar for f64");
  tsr_dmatrix_free(R);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* TSR_CONJ_TRANS on real matrices is TSR_TRANS (bitwise the same product). */
static void test_real_conj_is_trans(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  tsr_dmatrix *A = NULL, *B = NULL, *C1 = NULL, *C2 = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 9, 7, 2, 2, TSR_F64, dist_dev, &A));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 8, 9, 2, 2, TSR_F64, dist_dev, &B));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 7, 8, 2, 2, TSR_F64, dist_dev, &C1));
  TSR_ASSERT_OK(tsr_dmatrix_create(g, 7, 8, 2, 2, TSR_F64, dist_dev, &C2));
  TSR_ASSERT_OK(tsr_dmatrix_fill_random(A, 1, -1, 1));
  TSR_ASSERT_OK(tsr_dmatrix_fill_random(B, 2, -1, 1));
  TSR_ASSERT_OK(tsr_dist_gemm(TSR_TRANS, TSR_TRANS, 1.5, A, B, 0.0, C1));
  TSR_ASSERT_OK(tsr_dist_gemm(TSR_CONJ_TRANS, TSR_CONJ_TRANS, 1.5, A, B, 0.0, C2));
  double x1[56], x2[56];
  TSR_ASSERT_OK(tsr_dmatrix_gather(C1, 0, x1, TSR_ROW_MAJOR, 0));
  TSR_ASSERT_OK(tsr_dmatrix_gather(C2, 0, x2, TSR_ROW_MAJOR, 0));
  int same = dist_rank != 0 || memcmp(x1, x2, sizeof x1) == 0;
  int nonzero = dist_rank != 0 || x1[5] != 0.0;
  DIST_ASSERT(same && nonzero);
  tsr_dist_verify_result r;
  TSR_ASSERT_OK(
      tsr_dist_gemm_verify(TSR_CONJ_TRANS, TSR_CONJ_TRANS, 1.5, A, B, 0.0, NULL, C2, 9, &r));
  DIST_ASSERT(r.verdict == TSR_VERIFY_PASSED);
  tsr_dmatrix_free(A), tsr_dmatrix_free(B), tsr_dmatrix_free(C1), tsr_dmatrix_free(C2);
  TSR_ASSERT_OK(tsr_grid_free(g));
}

/* The random fill: the same values on every grid and block size; real and imaginary parts
   distinct, in range. */
static void test_complex_fill_random(void **state) {
  (void)state;
  tsr_grid *g = NULL, *g1 = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 1, dist_size, &g1));
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = d ? TSR_C128 : TSR_C64;
    tsr_dmatrix *X = NULL, *Y = NULL;
    TSR_ASSERT_OK(tsr_dmatrix_create(g, 11, 7, 3, 2, dt, dist_dev, &X));
    TSR_ASSERT_OK(tsr_dmatrix_create(g1, 11, 7, 5, 4, dt, dist_dev, &Y));
    TSR_ASSERT_OK(tsr_dmatrix_fill_random(X, 77, -2, 3));
    TSR_ASSERT_OK(tsr_dmatrix_fill_random(Y, 77, -2, 3));
    zd *x = cx_gather(X), *y = cx_gather(Y);
    int ok = 1, distinct = 0;
    for (int i = 0; i < 77; i++) {
      ok = ok && x[i] == y[i] && creal(x[i]) >= -2 && creal(x[i]) < 3 && cimag(x[i]) >= -2 &&
           cimag(x[i]) < 3;
      distinct += creal(x[i]) != cimag(x[i]);
    }
    DIST_ASSERT(ok && distinct > 70);
    free(x), free(y);
    tsr_dmatrix_free(X), tsr_dmatrix_free(Y);
  }
  TSR_ASSERT_OK(tsr_grid_free(g));
  TSR_ASSERT_OK(tsr_grid_free(g1));
}

/* A hand-written .npy (format 1.0) with descr `descr`, rows x cols, payload `data` of `bytes`
   bytes, by rank 0. */
static void write_raw_npy(const char *path, const char *descr, int fortran, int64_t rows,
                          int64_t cols, const void *data, size_t bytes) {
  if (dist_rank == 0) {
    char dict[200];
    int len =
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': (%lld, %lld), }",
                 descr, fortran ? "True" : "False", (long long)rows, (long long)cols);
    int total = 10 + len + 1, pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    uint16_t hl = (uint16_t)(len + pad + 1);
    magic[8] = (unsigned char)(hl & 0xff), magic[9] = (unsigned char)(hl >> 8);
    fwrite(magic, 1, 10, f);
    fwrite(dict, 1, (size_t)len, f);
    for (int i = 0; i < pad; i++)
      fputc(' ', f);
    fputc('\n', f);
    fwrite(data, 1, bytes, f);
    fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void swap_bytes(unsigned char *p, size_t n, size_t w) {
  for (size_t i = 0; i < n; i += w)
    for (size_t a = 0, b = w - 1; a < b; a++, b--) {
      unsigned char t = p[i + a];
      p[i + a] = p[i + b], p[i + b] = t;
    }
}

/* Complex .npy through MPI-IO: write/read round trips in C and Fortran order for c64 and c128,
   files written by hand (<c16 Fortran order, >c16 big-endian) read against their values, a
   complex file with an itemsize Tessera does not read refused with the dtype named. */
static void test_complex_npy(void **state) {
  (void)state;
  char dir[] = "/tmp/tsr_dist_cx_XXXXXX";
  if (dist_rank == 0) assert_non_null(mkdtemp(dir));
  MPI_Bcast(dir, (int)sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  char path[128];
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  const int64_t m = 9, n = 7;
  for (int d = 0; d < 2; d++)
    for (int fo = 0; fo < 2; fo++) {
      tsr_dtype dt = d ? TSR_C128 : TSR_C64;
      zd *x = cx_random(m, n, dt, 900 + (uint64_t)(2 * d + fo), 0);
      tsr_dmatrix *X = cx_matrix(g, x, m, n, 2, 3, dt), *Y = NULL;
      snprintf(path, sizeof path, "%s/x%d%d.npy", dir, d, fo);
      TSR_ASSERT_OK(tsr_dmatrix_write_npy(X, path, fo));
      TSR_ASSERT_OK(tsr_dmatrix_read_npy(g, path, 4, 2, dist_dev, &Y));
      tsr_dmatrix_props p;
      TSR_ASSERT_OK(tsr_dmatrix_info(Y, &p));
      DIST_ASSERT(p.dtype == dt && p.m == m && p.n == n);
      zd *y = cx_gather(Y);
      DIST_ASSERT(memcmp(x, y, (size_t)(m * n) * sizeof *x) == 0);
      free(x), free(y);
      tsr_dmatrix_free(X), tsr_dmatrix_free(Y);
    }
  /* By hand: Fortran-order <c16 and big-endian >c16 (C order) of the same values. */
  zd *x = cx_random(m, n, TSR_C128, 950, 0), *cm = malloc((size_t)(m * n) * sizeof *cm);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++)
      cm[i + j * m] = x[i * n + j];
  snprintf(path, sizeof path, "%s/f.npy", dir);
  write_raw_npy(path, "<c16", 1, m, n, cm, (size_t)(m * n) * 16);
  tsr_dmatrix *Y = NULL;
  TSR_ASSERT_OK(tsr_dmatrix_read_npy(g, path, 2, 2, dist_dev, &Y));
  zd *y = cx_gather(Y);
  DIST_ASSERT(memcmp(x, y, (size_t)(m * n) * sizeof *x) == 0);
  free(y);
  tsr_dmatrix_free(Y);
  unsigned char *be = malloc((size_t)(m * n) * 16);
  memcpy(be, x, (size_t)(m * n) * 16);
  swap_bytes(be, (size_t)(m * n) * 16, 8);
  snprintf(path, sizeof path, "%s/b.npy", dir);
  write_raw_npy(path, ">c16", 0, m, n, be, (size_t)(m * n) * 16);
  TSR_ASSERT_OK(tsr_dmatrix_read_npy(g, path, 3, 2, dist_dev, &Y));
  y = cx_gather(Y);
  DIST_ASSERT(memcmp(x, y, (size_t)(m * n) * sizeof *x) == 0);
  free(y);
  tsr_dmatrix_free(Y);
  /* A complex itemsize Tessera does not read (<c32): refused, named. */
  snprintf(path, sizeof path, "%s/w.npy", dir);
  write_raw_npy(path, "<c32", 0, 2, 2, be, 64);
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, 2, dist_dev, &Y), TSR_ERR_DTYPE, "c32");
  assert_null(Y);
  /* A <c16 file shorter than its data: a format error, not a crash. */
  snprintf(path, sizeof path, "%s/s.npy", dir);
  write_raw_npy(path, "<c16", 0, m, n, be, (size_t)(m * n) * 8);
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, path, 2, 2, dist_dev, &Y), TSR_ERR_FORMAT, "bytes");
  free(x), free(cm), free(be);
  TSR_ASSERT_OK(tsr_grid_free(g));
  MPI_Barrier(MPI_COMM_WORLD);
  if (dist_rank == 0) {
    const char *names[] = {"x00", "x01", "x10", "x11", "f", "b", "w", "s"};
    for (int i = 0; i < 8; i++) {
      snprintf(path, sizeof path, "%s/%s.npy", dir, names[i]);
      unlink(path);
    }
    rmdir(dir);
  }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_complex_gemm_all),   cmocka_unit_test(test_conjugate_sensitive),
    cmocka_unit_test(test_complex_25d),        cmocka_unit_test(test_complex_verify),
    cmocka_unit_test(test_real_conj_is_trans), cmocka_unit_test(test_complex_fill_random),
    cmocka_unit_test(test_complex_npy),
};

DIST_TEST_MAIN(tests)
