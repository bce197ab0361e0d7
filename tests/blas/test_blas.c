/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtessera_blas through its exported symbols, linked directly: sgemm_, dgemm_, cblas_sgemm
 * and cblas_dgemm at sizes in the hundreds (beyond the reference testers' limit of 65) with
 * ragged leading dimensions, every transpose, both CBLAS layouts, against a float64 reference;
 * the reference special cases; the xerbla parameter positions; the routing.
 *
 * This program defines xerbla_ and cblas_xerbla, which the library calls (as a reference
 * tester's): they record the calls. The build hides symbols by default; these must be
 * exported for the library to find them.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <complex.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/blas.h"
#include "tsr_test.h"

/* ---------------------------------------------------------------- recording handlers -- */

extern int RowMajorStrg;

static int xerbla_calls, xerbla_info;
static char xerbla_name[32];

#define EXPORTED __attribute__((visibility("default")))

EXPORTED void xerbla_(const char *srname, const int *info, size_t srname_len) {
  size_t n = srname_len < sizeof xerbla_name - 1 ? srname_len : sizeof xerbla_name - 1;
  memcpy(xerbla_name, srname, n);
  while (n > 0 && xerbla_name[n - 1] == ' ')
    --n;
  xerbla_name[n] = '\0';
  xerbla_info = *info;
  ++xerbla_calls;
}

/* Records the position the reference cblas_xerbla would report: row-major GEMM positions
   arrive in the column-major call's terms and are mapped back while RowMajorStrg is set. */
EXPORTED void cblas_xerbla(int info, const char *rout, const char *form, ...) {
  (void)form;
  if (RowMajorStrg && strstr(rout, "gemm") != NULL) {
    if (info == 4)
      info = 5;
    else if (info == 5)
      info = 4;
    else if (info == 9)
      info = 11;
    else if (info == 11)
      info = 9;
  }
  snprintf(xerbla_name, sizeof xerbla_name, "%s", rout);
  xerbla_info = info;
  ++xerbla_calls;
}

static void reset_xerbla(void) {
  xerbla_calls = 0;
  xerbla_info = 0;
  xerbla_name[0] = '\0';
}

/* ---------------------------------------------------------------- a GEMM case ----------- */

enum api { FORTRAN, CBLAS };

typedef struct gemm_case {
  enum api api;
  tsr_dtype dtype;
  int row_major; /* CBLAS only */
  char ta, tb;   /* 'N', 'T', 'C' in either case */
  int m, n, k;
  int pad_a, pad_b, pad_c; /* leading dimension minus its minimum */
  double alpha, beta;
  int nan_c; /* C starts as NaN (meaningful with beta = 0) */
} gemm_case;

static int is_trans(char t) {
  return t != 'N' && t != 'n';
}

/* A matrix of r x c logical elements in the case's layout, stored with leading dimension ld:
   element (i, j) at i + j*ld (column-major) or i*ld + j (row-major). */
typedef struct mat {
  int r, c, ld, row_major;
  size_t len; /* elements including the padding */
} mat;

static mat mat_make(int r, int c, int pad, int row_major) {
  mat x = {r, c, 0, row_major, 0};
  int lead = row_major ? c : r;
  x.ld = (lead > 1 ? lead : 1) + pad;
  int other = row_major ? r : c;
  x.len = (size_t)x.ld * (size_t)(other > 0 ? other : 1);
  return x;
}

static size_t at(const mat *x, int i, int j) {
  return x->row_major ? (size_t)i * (size_t)x->ld + (size_t)j
                      : (size_t)i + (size_t)j * (size_t)x->ld;
}

static int in_matrix(const mat *x, size_t idx) {
  size_t lead = idx % (size_t)x->ld;
  return (int)lead < (x->row_major ? x->c : x->r);
}

/* Host data of one operand: float64 values (exact in f32 for f32 cases) and the buffer passed
   to the library in the case's dtype. */
typedef struct operand {
  mat shape;
  double *v;
  void *buf;
} operand;

static operand operand_make(mat shape, tsr_dtype dtype, uint64_t seed) {
  operand o = {shape, malloc(shape.len * sizeof(double)), NULL};
  assert_non_null(o.v);
  tsr_test_fill_random(o.v, shape.len, seed);
  size_t es = dtype == TSR_F64 ? sizeof(double) : sizeof(float);
  o.buf = malloc(shape.len * es);
  assert_non_null(o.buf);
  for (size_t i = 0; i < shape.len; ++i) {
    if (dtype == TSR_F32) {
      o.v[i] = (double)(float)o.v[i];
      ((float *)o.buf)[i] = (float)o.v[i];
    } else {
      ((double *)o.buf)[i] = o.v[i];
    }
  }
  return o;
}

static void operand_set(operand *o, tsr_dtype dtype, size_t i, double v) {
  o->v[i] = v;
  if (dtype == TSR_F32)
    ((float *)o->buf)[i] = (float)v;
  else
    ((double *)o->buf)[i] = v;
}

static double operand_get(const operand *o, tsr_dtype dtype, size_t i) {
  return dtype == TSR_F32 ? (double)((const float *)o->buf)[i] : ((const double *)o->buf)[i];
}

static void operand_free(operand *o) {
  free(o->v);
  free(o->buf);
}

static CBLAS_TRANSPOSE cblas_t(char t) {
  return !is_trans(t) ? CblasNoTrans : (t == 'C' || t == 'c') ? CblasConjTrans : CblasTrans;
}

/* Calls the entry point of the case. */
static void call(const gemm_case *t, const operand *a, const operand *b, operand *c) {
  if (t->api == FORTRAN) {
    if (t->dtype == TSR_F64) {
      double alpha = t->alpha, beta = t->beta;
      dgemm_(&t->ta, &t->tb, &t->m, &t->n, &t->k, &alpha, a->buf, &a->shape.ld, b->buf,
             &b->shape.ld, &beta, c->buf, &c->shape.ld);
    } else {
      float alpha = (float)t->alpha, beta = (float)t->beta;
      sgemm_(&t->ta, &t->tb, &t->m, &t->n, &t->k, &alpha, a->buf, &a->shape.ld, b->buf,
             &b->shape.ld, &beta, c->buf, &c->shape.ld);
    }
    return;
  }
  CBLAS_LAYOUT layout = t->row_major ? CblasRowMajor : CblasColMajor;
  if (t->dtype == TSR_F64)
    cblas_dgemm(layout, cblas_t(t->ta), cblas_t(t->tb), t->m, t->n, t->k, t->alpha, a->buf,
                a->shape.ld, b->buf, b->shape.ld, t->beta, c->buf, c->shape.ld);
  else
    cblas_sgemm(layout, cblas_t(t->ta), cblas_t(t->tb), t->m, t->n, t->k, (float)t->alpha, a->buf,
                a->shape.ld, b->buf, b->shape.ld, (float)t->beta, c->buf, c->shape.ld);
}

/* Runs one case against the float64 reference; the padding of C must stay untouched. */
static void run_case(const gemm_case *t, uint64_t seed) {
  int row = t->api == CBLAS && t->row_major;
  int ta = is_trans(t->ta), tb = is_trans(t->tb);
  mat sa = mat_make(ta ? t->k : t->m, ta ? t->m : t->k, t->pad_a, row);
  mat sb = mat_make(tb ? t->n : t->k, tb ? t->k : t->n, t->pad_b, row);
  mat sc = mat_make(t->m, t->n, t->pad_c, row);
  operand a = operand_make(sa, t->dtype, seed);
  operand b = operand_make(sb, t->dtype, seed + 1);
  operand c = operand_make(sc, t->dtype, seed + 2);
  if (t->nan_c)
    for (size_t i = 0; i < sc.len; ++i)
      if (in_matrix(&sc, i)) operand_set(&c, t->dtype, i, NAN);
  for (size_t i = 0; i < sc.len; ++i)
    if (!in_matrix(&sc, i)) operand_set(&c, t->dtype, i, 4242.0); /* padding sentinel */

  size_t mn = (size_t)t->m * (size_t)t->n;
  double *ref = malloc((mn ? mn : 1) * sizeof(double));
  double *got = malloc((mn ? mn : 1) * sizeof(double));
  assert_non_null(ref);
  assert_non_null(got);
  /* The reference on contiguous copies of op(A) (m x k) and op(B)^T (n x k): dot products
     over unit strides keep it fast in unoptimized sanitizer builds. */
  size_t mk = (size_t)t->m * (size_t)t->k, nk = (size_t)t->n * (size_t)t->k;
  double *opa = malloc((mk ? mk : 1) * sizeof(double));
  double *opbt = malloc((nk ? nk : 1) * sizeof(double));
  assert_non_null(opa);
  assert_non_null(opbt);
  for (int i = 0; i < t->m; ++i)
    for (int p = 0; p < t->k; ++p)
      opa[(size_t)i * (size_t)t->k + (size_t)p] = a.v[ta ? at(&sa, p, i) : at(&sa, i, p)];
  for (int j = 0; j < t->n; ++j)
    for (int p = 0; p < t->k; ++p)
      opbt[(size_t)j * (size_t)t->k + (size_t)p] = b.v[tb ? at(&sb, j, p) : at(&sb, p, j)];
  for (int i = 0; i < t->m; ++i)
    for (int j = 0; j < t->n; ++j) {
      const double *x = opa + (size_t)i * (size_t)t->k, *y = opbt + (size_t)j * (size_t)t->k;
      double s = 0.0;
      for (int p = 0; p < t->k; ++p)
        s += x[p] * y[p];
      double c0 = t->beta == 0.0 ? 0.0 : t->beta * c.v[at(&sc, i, j)];
      ref[(size_t)i * (size_t)t->n + (size_t)j] = t->alpha * s + c0;
    }
  free(opa);
  free(opbt);

  tsr_blas_stats before, after;
  TSR_ASSERT_OK(tsr_blas_get_stats(&before));
  reset_xerbla();
  call(t, &a, &b, &c);
  TSR_ASSERT_OK(tsr_blas_get_stats(&after));
  assert_int_equal(xerbla_calls, 0);
  assert_int_equal(after.fallback, before.fallback);
  assert_int_equal(after.errors, before.errors);

  for (int i = 0; i < t->m; ++i)
    for (int j = 0; j < t->n; ++j)
      got[(size_t)i * (size_t)t->n + (size_t)j] = operand_get(&c, t->dtype, at(&sc, i, j));
  for (size_t i = 0; i < mn; ++i)
    assert_false(isnan(got[i]));
  double err = tsr_test_rel_error(got, ref, mn);
  double tol = tsr_test_tol(t->dtype, t->k);
  if (!(err <= tol))
    print_error("%s %s %s ta=%c tb=%c m=%d n=%d k=%d alpha=%g beta=%g: error %.3g > %.3g\n",
                t->api == FORTRAN ? "fortran" : "cblas", tsr_dtype_name(t->dtype),
                row ? "row-major" : "col-major", t->ta, t->tb, t->m, t->n, t->k, t->alpha, t->beta,
                err, tol);
  assert_true(err <= tol);
  for (size_t i = 0; i < sc.len; ++i)
    if (!in_matrix(&sc, i)) assert_true(operand_get(&c, t->dtype, i) == 4242.0);

  free(ref);
  free(got);
  operand_free(&a);
  operand_free(&b);
  operand_free(&c);
}

/* ---------------------------------------------------------------- computations -------- */

static const char trans_pairs[][2] = {{'N', 'N'}, {'t', 'N'}, {'N', 'C'}, {'T', 'c'}};

static void all_transposes(enum api api, tsr_dtype dtype, int row_major, int m, int n, int k,
                           uint64_t seed) {
  for (size_t p = 0; p < sizeof trans_pairs / sizeof trans_pairs[0]; ++p) {
    gemm_case t = {api, dtype, row_major, trans_pairs[p][0], trans_pairs[p][1], m, n, k, 3, 5, 7,
                   0.7, 1.3,   0};
    run_case(&t, seed + 10 * p);
  }
}

static void test_dgemm(void **state) {
  (void)state;
  all_transposes(FORTRAN, TSR_F64, 0, 257, 100, 300, 100);
  all_transposes(FORTRAN, TSR_F64, 0, 128, 320, 129, 200);
}

static void test_sgemm(void **state) {
  (void)state;
  all_transposes(FORTRAN, TSR_F32, 0, 257, 100, 300, 300);
  all_transposes(FORTRAN, TSR_F32, 0, 128, 320, 129, 400);
}

static void test_cblas_dgemm(void **state) {
  (void)state;
  all_transposes(CBLAS, TSR_F64, 0, 300, 257, 100, 500);
  all_transposes(CBLAS, TSR_F64, 1, 300, 257, 100, 600);
}

static void test_cblas_sgemm(void **state) {
  (void)state;
  all_transposes(CBLAS, TSR_F32, 0, 100, 300, 257, 700);
  all_transposes(CBLAS, TSR_F32, 1, 100, 300, 257, 800);
}

/* Small calls (the drop-in's small lane, tsr__gemm_host_tiny, and the CPU GEMM's tiny lane
   behind it, issue 31): both APIs, both layouts, every transpose, sizes around the register
   tiles, A * B^T with a long k (dot products), and B with its leading dimension 4 KiB (its
   strips are packed: the lane hands the call on), against the float64 reference. */
static void test_small_calls(void **state) {
  (void)state;
  /* One tile (the sup (small, unpacked) kernel's TSR__SUP_ONE: up to 16 rows of one vector, or 14
     of two, with op(A) = A^T; fewer with op(A) = A), just past it, and several tiles and strips. */
  static const int mnk[][3] = {{1, 1, 1},   {16, 16, 16}, {7, 13, 5},   {14, 20, 9}, {16, 9, 33},
                               {12, 32, 7}, {17, 16, 8},  {40, 33, 64}, {3, 5, 300}};
  uint64_t seed = 900;
  for (int d = 0; d < 2; ++d)
    for (size_t s = 0; s < sizeof mnk / sizeof mnk[0]; ++s)
      for (int api = 0; api < 3; ++api) {
        const tsr_dtype dt = d ? TSR_F64 : TSR_F32;
        const int row = api == 2;
        all_transposes(api == 0 ? FORTRAN : CBLAS, dt, row, mnk[s][0], mnk[s][1], mnk[s][2], seed);
        seed += 50;
      }
  /* ldb * element size = 4096 (column-major B not transposed: k x n, ld = k + pad). */
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dt = d ? TSR_F64 : TSR_F32;
    const int ld = d ? 512 : 1024, m = 20, n = 16, k = 12;
    gemm_case t = {FORTRAN, dt, 0, 'N', 'N', m, n, k, 1, ld - k, 2, 1.0, 0.0, 1};
    run_case(&t, seed++);
  }
}

/* Reference semantics that need no arithmetic on A and B, or must ignore what C held. */
static void test_special_cases(void **state) {
  (void)state;
  for (int d = 0; d < 2; ++d) {
    tsr_dtype dt = d ? TSR_F32 : TSR_F64;
    for (int api = 0; api < 3; ++api) {
      enum api which = api == 0 ? FORTRAN : CBLAS;
      int row = api == 2;
      /* beta = 0: NaN in C must not propagate (at a size in the hundreds, and a small one). */
      gemm_case big = {which, dt, row, 'N', 'T', 130, 150, 170, 1, 0, 2, 1.5, 0.0, 1};
      run_case(&big, 900 + (uint64_t)api);
      gemm_case small = {which, dt, row, 'T', 'N', 5, 3, 4, 0, 0, 0, -1.0, 0.0, 1};
      run_case(&small, 910 + (uint64_t)api);
    }
  }

  /* alpha = 0 reads neither A nor B (all NaN here): C = beta C; alpha = 0, beta = 0 gives
     exact zeros over a NaN C; alpha = 0, beta = 1 and k = 0, beta = 1 leave C bit for bit;
     k = 0 otherwise scales C; m = 0 or n = 0 touch nothing. */
  enum { M = 37, N = 41, K = 29, LD = 48 };
  static double a[LD * LD], b[LD * LD], c[LD * N], c0[LD * N];
  for (size_t i = 0; i < sizeof a / sizeof a[0]; ++i)
    a[i] = NAN;
  for (size_t i = 0; i < sizeof b / sizeof b[0]; ++i)
    b[i] = NAN;
  tsr_test_fill_random(c0, LD * N, 77);
  c0[3] = NAN; /* survives only where C is left alone */
  int m = M, n = N, k = K, ld = LD, zero = 0;
  double alpha0 = 0.0, one = 1.0, two = 2.0, beta0 = 0.0, half = 0.5;

  memcpy(c, c0, sizeof c);
  dgemm_("N", "N", &m, &n, &k, &alpha0, a, &ld, b, &ld, &two, c, &ld);
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < LD; ++i) {
      size_t x = (size_t)i + (size_t)j * LD;
      if (i < M && x != 3)
        assert_true(c[x] == 2.0 * c0[x]);
      else if (i >= M)
        assert_true(c[x] == c0[x]);
    }
  assert_true(isnan(c[3]));

  memcpy(c, c0, sizeof c);
  dgemm_("T", "T", &m, &n, &k, &alpha0, a, &ld, b, &ld, &beta0, c, &ld);
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < LD; ++i) {
      size_t x = (size_t)i + (size_t)j * LD;
      assert_true(i < M ? c[x] == 0.0 && !signbit(c[x]) : c[x] == c0[x]);
    }

  memcpy(c, c0, sizeof c);
  dgemm_("N", "N", &m, &n, &k, &alpha0, a, &ld, b, &ld, &one, c, &ld);
  assert_memory_equal(c, c0, sizeof c);
  dgemm_("N", "N", &m, &n, &zero, &one, a, &ld, b, &ld, &one, c, &ld);
  assert_memory_equal(c, c0, sizeof c);
  dgemm_("N", "N", &zero, &n, &k, &one, a, &ld, b, &ld, &beta0, c, &ld);
  dgemm_("N", "N", &m, &zero, &k, &one, a, &ld, b, &ld, &beta0, c, &ld);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 0, N, K, 1.0, a, LD, b, LD, 0.0, c, LD);
  assert_memory_equal(c, c0, sizeof c);

  dgemm_("N", "N", &m, &n, &zero, &one, a, &ld, b, &ld, &half, c, &ld);
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < M; ++i) {
      size_t x = (size_t)i + (size_t)j * LD;
      if (x != 3) assert_true(c[x] == 0.5 * c0[x]);
    }

  /* The same in single precision through CBLAS row-major. */
  static float fa[LD * LD], fb[LD * LD], fc[LD * LD];
  for (size_t i = 0; i < sizeof fa / sizeof fa[0]; ++i)
    fa[i] = NAN;
  for (size_t i = 0; i < sizeof fb / sizeof fb[0]; ++i)
    fb[i] = NAN;
  for (size_t i = 0; i < sizeof fc / sizeof fc[0]; ++i)
    fc[i] = NAN;
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, 0.0f, fa, LD, fb, LD, 0.0f, fc, LD);
  for (int i = 0; i < LD; ++i)
    for (int j = 0; j < LD; ++j) {
      size_t x = (size_t)i * LD + (size_t)j;
      if (i < M && j < N)
        assert_true(fc[x] == 0.0f);
      else
        assert_true(isnan(fc[x]));
    }
}

/* ---------------------------------------------------------------- error exits --------- */

typedef struct bad_call {
  char ta, tb;
  int m, n, k, lda, ldb, ldc;
  int info;
} bad_call;

/* The reference DGEMM's checks, in its order (positions of the Fortran interface). */
static const bad_call fortran_bad[] = {
    {'X', 'N', 0, 0, 0, 1, 1, 1, 1},    {'N', 'x', 0, 0, 0, 1, 1, 1, 2},
    {'N', 'N', -1, 0, 0, 1, 1, 1, 3},   {'N', 'N', 0, -1, 0, 1, 1, 1, 4},
    {'N', 'N', 0, 0, -1, 1, 1, 1, 5},   {'N', 'N', 2, 0, 0, 1, 1, 2, 8},
    {'T', 'N', 0, 0, 2, 1, 2, 1, 8},    {'N', 'N', 0, 0, 2, 1, 1, 1, 10},
    {'N', 'T', 0, 2, 0, 1, 1, 1, 10},   {'N', 'N', 2, 0, 0, 2, 1, 1, 13},
    {'X', 'X', -1, -1, -1, 0, 0, 0, 1}, /* the first error wins */
};

static void test_fortran_error_exits(void **state) {
  (void)state;
  double a[4] = {1, 2, 3, 4}, c[4] = {5, 6, 7, 8};
  float fa[4] = {1, 2, 3, 4}, fc[4] = {5, 6, 7, 8};
  double one = 1.0;
  float fone = 1.0f;
  for (size_t i = 0; i < sizeof fortran_bad / sizeof fortran_bad[0]; ++i) {
    const bad_call *x = &fortran_bad[i];
    reset_xerbla();
    dgemm_(&x->ta, &x->tb, &x->m, &x->n, &x->k, &one, a, &x->lda, a, &x->ldb, &one, c, &x->ldc);
    assert_int_equal(xerbla_calls, 1);
    assert_string_equal(xerbla_name, "DGEMM");
    assert_int_equal(xerbla_info, x->info);
    reset_xerbla();
    sgemm_(&x->ta, &x->tb, &x->m, &x->n, &x->k, &fone, fa, &x->lda, fa, &x->ldb, &fone, fc,
           &x->ldc);
    assert_int_equal(xerbla_calls, 1);
    assert_string_equal(xerbla_name, "SGEMM");
    assert_int_equal(xerbla_info, x->info);
  }
  assert_true(c[0] == 5 && c[1] == 6 && c[2] == 7 && c[3] == 8);
  assert_true(fc[0] == 5 && fc[1] == 6 && fc[2] == 7 && fc[3] == 8);
}

/* NULL ALPHA/BETA (issue 30): the arguments are checked first, in the reference's order (every
   bad call above reports the same position), M = 0 or N = 0 returns quietly without reading
   them, and where the reference would read a NULL scalar, its position (6, 11) is reported
   instead of a crash; C is never touched. */
static void test_fortran_null_scalars(void **state) {
  (void)state;
  double a[4] = {1, 2, 3, 4}, c[4] = {5, 6, 7, 8}, one = 1.0;
  float fa[4] = {1, 2, 3, 4}, fc[4] = {5, 6, 7, 8}, fone = 1.0f;
  for (size_t i = 0; i < sizeof fortran_bad / sizeof fortran_bad[0]; ++i) {
    const bad_call *x = &fortran_bad[i];
    reset_xerbla();
    dgemm_(&x->ta, &x->tb, &x->m, &x->n, &x->k, NULL, a, &x->lda, a, &x->ldb, NULL, c, &x->ldc);
    assert_int_equal(xerbla_calls, 1);
    assert_int_equal(xerbla_info, x->info);
    reset_xerbla();
    sgemm_(&x->ta, &x->tb, &x->m, &x->n, &x->k, NULL, fa, &x->lda, fa, &x->ldb, NULL, fc, &x->ldc);
    assert_int_equal(xerbla_calls, 1);
    assert_int_equal(xerbla_info, x->info);
  }
  const int zero = 0, two = 2, k = 2, ld = 2;
  const struct {
    const int *m, *n;
    bool null_alpha, null_beta;
    int info; /* 0: quiet return */
  } cases[] = {{&zero, &two, true, true, 0},  {&two, &zero, true, true, 0},
               {&zero, &zero, true, true, 0}, {&two, &two, true, false, 6},
               {&two, &two, false, true, 11}, {&two, &two, true, true, 6}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    reset_xerbla();
    dgemm_("N", "N", cases[i].m, cases[i].n, &k, cases[i].null_alpha ? NULL : &one, a, &ld, a, &ld,
           cases[i].null_beta ? NULL : &one, c, &ld);
    assert_int_equal(xerbla_calls, cases[i].info ? 1 : 0);
    assert_int_equal(xerbla_info, cases[i].info);
    reset_xerbla();
    sgemm_("N", "N", cases[i].m, cases[i].n, &k, cases[i].null_alpha ? NULL : &fone, fa, &ld, fa,
           &ld, cases[i].null_beta ? NULL : &fone, fc, &ld);
    assert_int_equal(xerbla_calls, cases[i].info ? 1 : 0);
    assert_int_equal(xerbla_info, cases[i].info);
  }
  assert_true(c[0] == 5 && c[1] == 6 && c[2] == 7 && c[3] == 8);
  assert_true(fc[0] == 5 && fc[1] == 6 && fc[2] == 7 && fc[3] == 8);
}

/* CBLAS positions as the caller sees them (layout is parameter 1), for both layouts. */
typedef struct bad_cblas {
  int layout, ta, tb;
  int m, n, k, lda, ldb, ldc;
  int info;
} bad_cblas;

static const bad_cblas cblas_bad[] = {
    {0, CblasNoTrans, CblasNoTrans, 0, 0, 0, 1, 1, 1, 1},
    {CblasColMajor, 0, CblasNoTrans, 0, 0, 0, 1, 1, 1, 2},
    {CblasRowMajor, 0, CblasNoTrans, 0, 0, 0, 1, 1, 1, 2},
    {CblasColMajor, CblasNoTrans, 0, 0, 0, 0, 1, 1, 1, 3},
    {CblasRowMajor, CblasTrans, 0, 0, 0, 0, 1, 1, 1, 3},
    {CblasColMajor, CblasNoTrans, CblasNoTrans, -1, 0, 0, 1, 1, 1, 4},
    {CblasColMajor, CblasNoTrans, CblasNoTrans, 0, -1, 0, 1, 1, 1, 5},
    {CblasColMajor, CblasNoTrans, CblasNoTrans, 0, 0, -1, 1, 1, 1, 6},
    {CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 0, 0, 1, 1, 2, 9},
    {CblasColMajor, CblasTrans, CblasNoTrans, 0, 0, 2, 1, 2, 1, 9},
    {CblasColMajor, CblasNoTrans, CblasNoTrans, 0, 0, 2, 2, 1, 1, 11},
    {CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 0, 0, 2, 1, 1, 14},
    {CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 0, 0, 1, 1, 1, 4},
    {CblasRowMajor, CblasNoTrans, CblasTrans, 0, -1, 0, 1, 1, 1, 5},
    {CblasRowMajor, CblasTrans, CblasTrans, 0, 0, -1, 1, 1, 1, 6},
    {CblasRowMajor, CblasNoTrans, CblasNoTrans, 0, 0, 2, 1, 1, 2, 9},
    {CblasRowMajor, CblasTrans, CblasNoTrans, 2, 0, 0, 1, 2, 1, 9},
    {CblasRowMajor, CblasNoTrans, CblasNoTrans, 0, 2, 0, 1, 1, 2, 11},
    {CblasRowMajor, CblasNoTrans, CblasTrans, 0, 0, 2, 2, 1, 1, 11},
    {CblasRowMajor, CblasNoTrans, CblasNoTrans, 0, 2, 0, 1, 2, 1, 14},
};

static void test_cblas_error_exits(void **state) {
  (void)state;
  double a[4] = {1, 2, 3, 4}, c[4] = {5, 6, 7, 8};
  float fa[4] = {1, 2, 3, 4}, fc[4] = {5, 6, 7, 8};
  for (size_t i = 0; i < sizeof cblas_bad / sizeof cblas_bad[0]; ++i) {
    const bad_cblas *x = &cblas_bad[i];
    reset_xerbla();
    cblas_dgemm((CBLAS_LAYOUT)x->layout, (CBLAS_TRANSPOSE)x->ta, (CBLAS_TRANSPOSE)x->tb, x->m, x->n,
                x->k, 1.0, a, x->lda, a, x->ldb, 1.0, c, x->ldc);
    if (xerbla_info != x->info)
      print_error("cblas case %zu: info %d, expected %d\n", i, xerbla_info, x->info);
    assert_int_equal(xerbla_calls, 1);
    assert_string_equal(xerbla_name, "cblas_dgemm");
    assert_int_equal(xerbla_info, x->info);
    assert_int_equal(RowMajorStrg, 0);
    reset_xerbla();
    cblas_sgemm((CBLAS_LAYOUT)x->layout, (CBLAS_TRANSPOSE)x->ta, (CBLAS_TRANSPOSE)x->tb, x->m, x->n,
                x->k, 1.0f, fa, x->lda, fa, x->ldb, 1.0f, fc, x->ldc);
    assert_int_equal(xerbla_calls, 1);
    assert_string_equal(xerbla_name, "cblas_sgemm");
    assert_int_equal(xerbla_info, x->info);
  }
  assert_true(c[0] == 5 && c[1] == 6 && c[2] == 7 && c[3] == 8);
  assert_true(fc[0] == 5 && fc[1] == 6 && fc[2] == 7 && fc[3] == 8);
}

/* ---------------------------------------------------------------- routing ------------- */

static int gpu_count(void) {
  int cuda = 0, hip = 0;
  TSR_ASSERT_OK(tsr_device_count(TSR_DEVICE_CUDA, &cuda));
  TSR_ASSERT_OK(tsr_device_count(TSR_DEVICE_HIP, &hip));
  return cuda + hip;
}

static void test_route(void **state) {
  (void)state;
  tsr_device d;
  TSR_ASSERT_STATUS(tsr_blas_route(10, 10, 10, NULL), TSR_ERR_NULL_POINTER, "device is NULL");
  TSR_ASSERT_STATUS(tsr_blas_route(-1, 10, 10, &d), TSR_ERR_INVALID_ARGUMENT, "m = -1");
  TSR_ASSERT_STATUS(tsr_blas_get_stats(NULL), TSR_ERR_NULL_POINTER, "stats is NULL");
  int gpus = gpu_count();

  /* Small problems stay on the CPU with the default threshold. */
  unsetenv("TSR_BLAS_GPU_MIN_FLOPS");
  unsetenv("TSR_DEVICE");
  TSR_ASSERT_OK(tsr_blas_route(100, 100, 100, &d));
  assert_int_equal(d.kind, TSR_DEVICE_CPU);
  /* Large ones go to the GPU when there is one. */
  TSR_ASSERT_OK(tsr_blas_route(2000, 2000, 2000, &d));
  assert_int_equal(d.kind != TSR_DEVICE_CPU, gpus > 0);
  /* TSR_DEVICE=cpu forces the CPU whatever the size. */
  setenv("TSR_DEVICE", "cpu", 1);
  setenv("TSR_BLAS_GPU_MIN_FLOPS", "0", 1);
  TSR_ASSERT_OK(tsr_blas_route(2000, 2000, 2000, &d));
  assert_int_equal(d.kind, TSR_DEVICE_CPU);
  unsetenv("TSR_DEVICE");
  /* The threshold is read at each call; junk means the default. */
  TSR_ASSERT_OK(tsr_blas_route(2, 2, 2, &d));
  assert_int_equal(d.kind != TSR_DEVICE_CPU, gpus > 0);
  setenv("TSR_BLAS_GPU_MIN_FLOPS", "1e30", 1);
  TSR_ASSERT_OK(tsr_blas_route(2000, 2000, 2000, &d));
  assert_int_equal(d.kind, TSR_DEVICE_CPU);
  setenv("TSR_BLAS_GPU_MIN_FLOPS", "lots", 1);
  TSR_ASSERT_OK(tsr_blas_route(100, 100, 100, &d));
  assert_int_equal(d.kind, TSR_DEVICE_CPU);
  unsetenv("TSR_BLAS_GPU_MIN_FLOPS");
}

/* With a GPU, a call above the threshold runs there, transfers included, and still honours
   ragged leading dimensions and beta = 0 over NaN. */
static void test_gpu_route(void **state) {
  (void)state;
  if (gpu_count() == 0) {
    skip();
    return;
  }
  unsetenv("TSR_DEVICE");
  setenv("TSR_BLAS_GPU_MIN_FLOPS", "0", 1);
  tsr_blas_stats before, after;
  TSR_ASSERT_OK(tsr_blas_get_stats(&before));
  all_transposes(FORTRAN, TSR_F64, 0, 257, 100, 300, 1000);
  all_transposes(CBLAS, TSR_F32, 1, 100, 300, 257, 1100);
  gemm_case nan_c = {FORTRAN, TSR_F64, 0, 'N', 'N', 200, 150, 100, 2, 3, 4, 1.0, 0.0, 1};
  run_case(&nan_c, 1200);
  TSR_ASSERT_OK(tsr_blas_get_stats(&after));
  assert_int_equal(after.gpu - before.gpu, 9);
  unsetenv("TSR_BLAS_GPU_MIN_FLOPS");
}

/* The counters see every entry point; nothing needed the fallback loop. */
static void test_stats(void **state) {
  (void)state;
  TSR_ASSERT_OK(tsr_blas_reset_stats());
  tsr_blas_stats s;
  TSR_ASSERT_OK(tsr_blas_get_stats(&s));
  assert_int_equal(s.dgemm + s.sgemm + s.cblas_dgemm + s.cblas_sgemm + s.cpu, 0);
  gemm_case t = {CBLAS, TSR_F64, 1, 'N', 'N', 64, 65, 66, 0, 1, 2, 1.0, 1.0, 0};
  run_case(&t, 1300);
  t.api = FORTRAN;
  run_case(&t, 1301);
  t.dtype = TSR_F32;
  run_case(&t, 1302);
  t.alpha = 0.0; /* C = beta C: done in place */
  t.beta = 2.0;
  run_case(&t, 1303);
  TSR_ASSERT_OK(tsr_blas_get_stats(&s));
  assert_int_equal(s.cblas_dgemm, 1);
  assert_int_equal(s.dgemm, 1);
  assert_int_equal(s.sgemm, 2);
  assert_int_equal(s.cpu + s.gpu, 3);
  assert_int_equal(s.trivial, 1);
  assert_int_equal(s.fallback, 0);
  assert_int_equal(tsr_blas_get_stats(NULL), TSR_ERR_NULL_POINTER);
}

/* Threads calling at once: every call is counted exactly once, the counts of threads that
   have exited included, whether a later thread takes over their counters or not, and every
   result is right. Each thread calls cblas_dgemm (row-major 12 x 10 x 9, beta = 1, small enough
   for the per-call lane) CALLS times on its own random operands and compares the last C with a
   float64 reference (cmocka's asserts run on the main thread only). */
enum { STATS_THREADS = 4, STATS_CALLS = 2000 };
typedef struct stats_worker {
  uint64_t seed;
  double err; /* relative error of the final C */
} stats_worker;

static void *stats_worker_run(void *p) {
  stats_worker *w = p;
  enum { M = 12, N = 10, K = 9 };
  double a[M * K], b[K * N], c[M * N], ref[M * N];
  tsr_test_fill_random(a, M * K, w->seed);
  tsr_test_fill_random(b, K * N, w->seed + 1);
  tsr_test_fill_random(c, M * N, w->seed + 2);
  memcpy(ref, c, sizeof c);
  /* C += 2^-10 A B, CALLS times: exact in the reference's terms as CALLS small additions. */
  const double alpha = 1.0 / 1024;
  for (int i = 0; i < STATS_CALLS; ++i)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, alpha, a, K, b, N, 1.0, c, N);
  for (int i = 0; i < STATS_CALLS; ++i)
    tsr_test_ref_gemm_into(0, 0, M, N, K, alpha, a, b, 1.0, ref, ref);
  w->err = tsr_test_rel_error(c, ref, M * N);
  return NULL;
}

static void stats_wave(uint64_t seed) {
  pthread_t th[STATS_THREADS];
  stats_worker w[STATS_THREADS];
  for (int t = 0; t < STATS_THREADS; ++t) {
    w[t] = (stats_worker){seed + 10 * (uint64_t)t, INFINITY};
    assert_int_equal(pthread_create(&th[t], NULL, stats_worker_run, &w[t]), 0);
  }
  for (int t = 0; t < STATS_THREADS; ++t) {
    assert_int_equal(pthread_join(th[t], NULL), 0);
    assert_true(w[t].err < 1e-12);
  }
}

static void test_stats_threads(void **state) {
  (void)state;
  TSR_ASSERT_OK(tsr_blas_reset_stats());
  tsr_blas_stats s;
  stats_wave(1400);
  TSR_ASSERT_OK(tsr_blas_get_stats(&s));
  assert_int_equal(s.cblas_dgemm, STATS_THREADS * STATS_CALLS);
  assert_int_equal(s.cpu, STATS_THREADS * STATS_CALLS);
  /* A second wave after the first exited: the new threads take over the counters the first
     left, and the sum goes on from there. */
  stats_wave(1500);
  TSR_ASSERT_OK(tsr_blas_get_stats(&s));
  assert_int_equal(s.cblas_dgemm, 2 * STATS_THREADS * STATS_CALLS);
  assert_int_equal(s.cpu, 2 * STATS_THREADS * STATS_CALLS);
  assert_int_equal(s.sgemm + s.dgemm + s.cblas_sgemm + s.errors + s.trivial + s.fallback, 0);
  /* A reset counts from zero again, the exited threads' calls included in what it drops. */
  TSR_ASSERT_OK(tsr_blas_reset_stats());
  TSR_ASSERT_OK(tsr_blas_get_stats(&s));
  assert_int_equal(s.cblas_dgemm + s.cpu, 0);
  stats_wave(1600);
  TSR_ASSERT_OK(tsr_blas_get_stats(&s));
  assert_int_equal(s.cblas_dgemm, STATS_THREADS * STATS_CALLS);
}

/* ---------------------------------------------------------------- complex ------------- */

/* The complex entry points (src/blas/blas_internal.h declares them for the library). */
typedef void (*fortran_cx_fn)(const char *, const char *, const int *, const int *, const int *,
                              const void *, const void *, const int *, const void *, const int *,
                              const void *, void *, const int *);
typedef void (*cblas_cx_fn)(CBLAS_LAYOUT, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, const int, const int,
                            const int, const void *, const void *, const int, const void *,
                            const int, const void *, void *, const int);
void zgemm_(const char *, const char *, const int *, const int *, const int *, const void *,
            const void *, const int *, const void *, const int *, const void *, void *,
            const int *);
void cgemm_(const char *, const char *, const int *, const int *, const int *, const void *,
            const void *, const int *, const void *, const int *, const void *, void *,
            const int *);
void zgemm3m_(const char *, const char *, const int *, const int *, const int *, const void *,
              const void *, const int *, const void *, const int *, const void *, void *,
              const int *);
void cgemm3m_(const char *, const char *, const int *, const int *, const int *, const void *,
              const void *, const int *, const void *, const int *, const void *, void *,
              const int *);
void cblas_zgemm(CBLAS_LAYOUT, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, const int, const int, const int,
                 const void *, const void *, const int, const void *, const int, const void *,
                 void *, const int);
void cblas_cgemm(CBLAS_LAYOUT, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, const int, const int, const int,
                 const void *, const void *, const int, const void *, const int, const void *,
                 void *, const int);
void cblas_zgemm3m(CBLAS_LAYOUT, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, const int, const int, const int,
                   const void *, const void *, const int, const void *, const int, const void *,
                   void *, const int);
void cblas_cgemm3m(CBLAS_LAYOUT, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, const int, const int, const int,
                   const void *, const void *, const int, const void *, const int, const void *,
                   void *, const int);

static double cx_rnd(unsigned long long *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* One complex call: column-major (Fortran, or CBLAS col/row) C = alpha op(A) op(B) + beta C with
   every op pair of N, T, C, random real and imaginary parts (so a missing conjugation shows),
   padded leading dimensions, complex alpha/beta, and beta 0 over a C of NaN; against a
   float64-complex reference. dbl: c128 (else c64). */
static void cx_case(bool dbl, fortran_cx_fn f, cblas_cx_fn cb, CBLAS_LAYOUT lay, int m, int n,
                    int k) {
  const char ops[3] = {'N', 'T', 'C'};
  const CBLAS_TRANSPOSE cops[3] = {CblasNoTrans, CblasTrans, CblasConjTrans};
  unsigned long long seed = 50;
  const bool row = cb && lay == CblasRowMajor;
  for (int oa = 0; oa < 3; ++oa)
    for (int ob = 0; ob < 3; ++ob)
      for (int zb = 0; zb < 2; ++zb) {
        const bool ta = oa > 0, tb = ob > 0;
        /* Stored A: ra x ca in the layout's sense (row-major: rows; column-major: columns). */
        const int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
        const int lda = (row ? ac : ar) + 3, ldb = (row ? bc : br) + 2, ldc = (row ? n : m) + 1;
        const size_t na = (size_t)lda * (size_t)(row ? ar : ac),
                     nb = (size_t)ldb * (size_t)(row ? br : bc),
                     nc = (size_t)ldc * (size_t)(row ? m : n);
        double complex *A = malloc(na * sizeof *A), *B = malloc(nb * sizeof *B),
                       *C0 = malloc(nc * sizeof *C0);
        void *a = malloc(na * 16), *b = malloc(nb * 16), *c = malloc(nc * 16);
        assert_true(A && B && C0 && a && b && c);
        for (size_t i = 0; i < na; ++i)
          A[i] = cx_rnd(&seed) + I * cx_rnd(&seed);
        for (size_t i = 0; i < nb; ++i)
          B[i] = cx_rnd(&seed) + I * cx_rnd(&seed);
        for (size_t i = 0; i < nc; ++i)
          C0[i] = zb ? NAN : cx_rnd(&seed) + I * cx_rnd(&seed);
        /* The operands in the routine's precision; the reference reads back what it holds. */
        for (size_t i = 0; i < na; ++i) {
          if (dbl)
            ((double complex *)a)[i] = A[i];
          else
            A[i] = ((float complex *)a)[i] = (float complex)A[i];
        }
        for (size_t i = 0; i < nb; ++i) {
          if (dbl)
            ((double complex *)b)[i] = B[i];
          else
            B[i] = ((float complex *)b)[i] = (float complex)B[i];
        }
        for (size_t i = 0; i < nc; ++i) {
          if (dbl)
            ((double complex *)c)[i] = C0[i];
          else
            C0[i] = ((float complex *)c)[i] = (float complex)C0[i];
        }
        const double complex al = 0.7 - 0.9 * I, be = zb ? 0 : 1.3 - 1.1 * I;
        const float complex fal = (float complex)al, fbe = (float complex)be;
        const void *pal = dbl ? (const void *)&al : (const void *)&fal;
        const void *pbe = dbl ? (const void *)&be : (const void *)&fbe;
        if (f)
          f(&ops[oa], &ops[ob], &m, &n, &k, pal, a, &lda, b, &ldb, pbe, c, &ldc);
        else
          cb(lay, cops[oa], cops[ob], m, n, k, pal, a, lda, b, ldb, pbe, c, ldc);
          /* Element (i, j) of stored X with leading dimension ld in the call's layout. */
#define CX_AT(X, i, j, ld) (row ? (X)[(size_t)(i) * (ld) + (j)] : (X)[(size_t)(j) * (ld) + (i)])
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            double complex s = 0;
            double mag = 0;
            for (int p = 0; p < k; ++p) {
              double complex u = ta ? CX_AT(A, p, i, lda) : CX_AT(A, i, p, lda);
              double complex v = tb ? CX_AT(B, j, p, ldb) : CX_AT(B, p, j, ldb);
              if (oa == 2) u = conj(u);
              if (ob == 2) v = conj(v);
              s += u * v;
              mag += cabs(u) * cabs(v);
            }
            const double complex want = al * s + (zb ? 0 : be * CX_AT(C0, i, j, ldc));
            const size_t at = row ? (size_t)i * ldc + j : (size_t)j * ldc + i;
            const double complex got =
                dbl ? ((double complex *)c)[at] : (double complex)((float complex *)c)[at];
            const double cmag = zb ? 0 : cabs(CX_AT(C0, i, j, ldc));
            const double tol = (dbl ? 1e-13 : 1e-5) * (k + 2) * (mag + 4 * cmag) + 1e-30;
            if (!(cabs(got - want) <= tol)) {
              fprintf(stderr, "%s %c%c beta0=%d (%d,%d): got %g%+gi want %g%+gi\n", dbl ? "z" : "c",
                      ops[oa], ops[ob], zb, i, j, creal(got), cimag(got), creal(want), cimag(want));
              fail();
            }
          }
#undef CX_AT
        free(A);
        free(B);
        free(C0);
        free(a);
        free(b);
        free(c);
      }
}

static void test_complex(void **state) {
  (void)state;
  reset_xerbla();
  const int sizes[][3] = {{5, 3, 7}, {37, 29, 41}, {70, 90, 130}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    const int m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
    cx_case(true, zgemm_, NULL, CblasColMajor, m, n, k);
    cx_case(false, cgemm_, NULL, CblasColMajor, m, n, k);
    cx_case(true, zgemm3m_, NULL, CblasColMajor, m, n, k);
    cx_case(false, cgemm3m_, NULL, CblasColMajor, m, n, k);
    for (int l = 0; l < 2; ++l) {
      const CBLAS_LAYOUT lay = l ? CblasRowMajor : CblasColMajor;
      cx_case(true, NULL, cblas_zgemm, lay, m, n, k);
      cx_case(false, NULL, cblas_cgemm, lay, m, n, k);
      cx_case(true, NULL, cblas_zgemm3m, lay, m, n, k);
      cx_case(false, NULL, cblas_cgemm3m, lay, m, n, k);
    }
  }
  assert_int_equal(xerbla_calls, 0);
}

/* The complex routines' error exits: the positions of DGEMM (Fortran, with their names) and of
   cblas_dgemm (CBLAS, row-major mapped back); C untouched. */
static void test_complex_error_exits(void **state) {
  (void)state;
  double complex z[4] = {1, 2, 3, 4}, one = 1;
  float complex cz[4] = {1, 2, 3, 4}, cone = 1;
  const fortran_cx_fn fz[2] = {zgemm_, zgemm3m_}, fc[2] = {cgemm_, cgemm3m_};
  const char *nz[2] = {"ZGEMM", "ZGEMM3M"}, *nc[2] = {"CGEMM", "CGEMM3M"};
  for (size_t i = 0; i < sizeof fortran_bad / sizeof fortran_bad[0]; ++i) {
    const bad_call *x = &fortran_bad[i];
    for (int v = 0; v < 2; ++v) {
      reset_xerbla();
      fz[v](&x->ta, &x->tb, &x->m, &x->n, &x->k, &one, z, &x->lda, z, &x->ldb, &one, z, &x->ldc);
      assert_int_equal(xerbla_calls, 1);
      assert_string_equal(xerbla_name, nz[v]);
      assert_int_equal(xerbla_info, x->info);
      reset_xerbla();
      fc[v](&x->ta, &x->tb, &x->m, &x->n, &x->k, &cone, cz, &x->lda, cz, &x->ldb, &cone, cz,
            &x->ldc);
      assert_int_equal(xerbla_calls, 1);
      assert_string_equal(xerbla_name, nc[v]);
      assert_int_equal(xerbla_info, x->info);
    }
  }
  /* NULL alpha where the reference would read it: position 6; lowercase 'c' accepted. */
  const int two = 2;
  reset_xerbla();
  zgemm_("c", "t", &two, &two, &two, NULL, z, &two, z, &two, &one, z, &two);
  assert_int_equal(xerbla_info, 6);
  /* CBLAS: bad layout 1, TransA 2, M < 0 in row-major reported as 4 (M) after the mapping. */
  reset_xerbla();
  cblas_zgemm((CBLAS_LAYOUT)0, CblasNoTrans, CblasNoTrans, 1, 1, 1, &one, z, 1, z, 1, &one, z, 1);
  assert_int_equal(xerbla_info, 1);
  assert_string_equal(xerbla_name, "cblas_zgemm");
  reset_xerbla();
  cblas_cgemm3m(CblasColMajor, (CBLAS_TRANSPOSE)0, CblasNoTrans, 1, 1, 1, &cone, cz, 1, cz, 1,
                &cone, cz, 1);
  assert_int_equal(xerbla_info, 2);
  assert_string_equal(xerbla_name, "cblas_cgemm3m");
  reset_xerbla();
  cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 1, 1, &one, z, 1, z, 1, &one, z, 1);
  assert_int_equal(xerbla_info, 4);
  reset_xerbla();
  cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 2, 1, &cone, cz, 1, cz, 2, &cone, cz,
              1);
  assert_int_equal(xerbla_info, 14); /* ldc < N */
  assert_true(z[0] == 1 && z[1] == 2 && z[2] == 3 && z[3] == 4);
  assert_true(cz[0] == 1 && cz[1] == 2 && cz[2] == 3 && cz[3] == 4);
}

/* With an argument, only the tests whose names match that cmocka pattern (blas_wisdom_fifo
   runs one GEMM test against a FIFO as the wisdom file). */
int main(int argc, char **argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  /* The default threshold would send the larger cases to a GPU where there is one; this
     program tests the CPU route except in test_gpu_route. */
  setenv("TSR_DEVICE", "cpu", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dgemm),
      cmocka_unit_test(test_sgemm),
      cmocka_unit_test(test_cblas_dgemm),
      cmocka_unit_test(test_cblas_sgemm),
      cmocka_unit_test(test_small_calls),
      cmocka_unit_test(test_special_cases),
      cmocka_unit_test(test_fortran_error_exits),
      cmocka_unit_test(test_fortran_null_scalars),
      cmocka_unit_test(test_cblas_error_exits),
      cmocka_unit_test(test_stats),
      cmocka_unit_test(test_stats_threads),
      cmocka_unit_test(test_route),
      cmocka_unit_test(test_gpu_route),
      cmocka_unit_test(test_complex),
      cmocka_unit_test(test_complex_error_exits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
