/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU GEMM, complex dtypes (TSR_C64, TSR_C128) by the 1m method (src/omp/gemm/frame/
 * gemm_complex.c) through the backend entry tsr__omp_gemm, against an independent
 * float64-complex reference (a plain triple loop over op(A) and op(B) converted to double once,
 * with their moduli for the error bound) on random inputs: every
 * op combination of N, T, C (conjugate transpose) and R (conjugate, no transpose: CBLAS's
 * row-major calls) on both operands; complex alpha and beta, beta 0 over a C of NaN, alpha 0
 * over A and B of NaN, k 0; purely imaginary operands; odd sizes, edge tiles, leading
 * dimensions above the minimum; the sup path (small, unpacked: BLIS's term) and the packed path
 * each forced and the library's own rule; sizes past the cache blocks (several KC slices, NC
 * blocks); 1 and 2 threads; the vendor path (cblas_cgemm/cblas_zgemm) where built. A missing or
 * misplaced conjugation changes the product of these inputs.
 *
 * Run once per kernel (TSR_CPU_KERNEL), as the other rooms; a kernel the CPU lacks: skipped.
 */
#include "gemm_test.h"

typedef struct cx_case {
  tsr_dtype dt;
  int opa, opb; /* 0 N, 1 T, 2 C (conj transpose), 3 R (conj, no transpose) */
  int64_t m, n, k, pad;
  double ar, ai, br, bi;
  bool nan_c, nan_ab, imag_only;
  bool vendor; /* TSR_GEMM_VENDOR (else native) */
} cx_case;

static uint64_t rng_state;
static double rnd(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void put(tsr_dtype dt, void *p, size_t i, double re, double im) {
  if (dt == TSR_C64) {
    ((float *)p)[2 * i] = (float)re;
    ((float *)p)[2 * i + 1] = (float)im;
  } else {
    ((double *)p)[2 * i] = re;
    ((double *)p)[2 * i + 1] = im;
  }
}
static void get(tsr_dtype dt, const void *p, size_t i, long double *re, long double *im) {
  if (dt == TSR_C64) {
    *re = ((const float *)p)[2 * i];
    *im = ((const float *)p)[2 * i + 1];
  } else {
    *re = ((const double *)p)[2 * i];
    *im = ((const double *)p)[2 * i + 1];
  }
}

/* The reference's operand: `lines` lines of k complex elements of the stored matrix p (leading
   dimension ld): line r, element q at r * ld + q when along (else q * ld + r), conjugated when
   conj; 3 doubles each (re, im, modulus). Freed by the caller. */
static double *ref_lines(tsr_dtype dt, const void *p, int64_t ld, int64_t lines, int64_t k,
                         bool along, bool conj) {
  const size_t n = (size_t)(lines > 0 ? lines : 1) * (size_t)(k > 0 ? k : 1);
  double *out = malloc(n * 3 * sizeof *out);
  assert_non_null(out);
  for (int64_t r = 0; r < lines; ++r)
    for (int64_t q = 0; q < k; ++q) {
      long double xr, xi;
      get(dt, p, (size_t)(along ? r * ld + q : q * ld + r), &xr, &xi);
      double *o = out + 3 * (size_t)(r * k + q);
      o[0] = (double)xr, o[1] = (double)(conj ? -xi : xi), o[2] = (double)sqrtl(xr * xr + xi * xi);
    }
  return out;
}

/* Runs one case on the threads set; asserts the product within the dtype's tolerance. Returns
   false (nothing checked) when the vendor path is not available. */
static bool run_cx(const cx_case *cc, uint64_t seed) {
  rng_state = seed * 2654435761u + 17;
  const tsr_dtype dt = cc->dt;
  const size_t es = dt == TSR_C64 ? 8 : 16;
  const bool ta = cc->opa == 1 || cc->opa == 2, tb = cc->opb == 1 || cc->opb == 2;
  const bool ca = cc->opa >= 2, cb = cc->opb >= 2;
  const int64_t m = cc->m, n = cc->n, k = cc->k;
  const int64_t ar = ta ? k : m, acol = ta ? m : k, br = tb ? n : k, bcol = tb ? k : n;
  const int64_t lda = acol + cc->pad, ldb = bcol + cc->pad, ldc = n + cc->pad;
  const size_t na = (size_t)(ar > 0 ? ar : 1) * (size_t)lda,
               nb = (size_t)(br > 0 ? br : 1) * (size_t)ldb, nc = (size_t)(m > 0 ? m : 1) * ldc;
  void *a = malloc(na * es), *b = malloc(nb * es), *c = malloc(nc * es), *c0 = malloc(nc * es);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(c);
  assert_non_null(c0);
  for (size_t i = 0; i < na; ++i)
    put(dt, a, i, cc->nan_ab ? NAN : cc->imag_only ? 0 : rnd(), cc->nan_ab ? NAN : rnd());
  for (size_t i = 0; i < nb; ++i)
    put(dt, b, i, cc->nan_ab ? NAN : cc->imag_only ? 0 : rnd(), cc->nan_ab ? NAN : rnd());
  for (size_t i = 0; i < nc; ++i)
    put(dt, c, i, cc->nan_c ? NAN : rnd(), cc->nan_c ? NAN : rnd());
  memcpy(c0, c, nc * es);
  tsr__gemm_args g = tsr__gemm_args_host(dt, ta, tb, m, n, k, cc->ar, a, lda, b, ldb, cc->br, c,
                                         ldc, TSR_GEMM_NATIVE);
  g.conj_a = ca;
  g.conj_b = cb;
  g.alpha_im = cc->ai;
  g.beta_im = cc->bi;
  g.tuning = &tg_tuning;
  if (cc->vendor) g.path = TSR_GEMM_VENDOR;
  const tsr_status st = tsr__omp_gemm(TSR_CPU, &g);
  if (cc->vendor && st == TSR_ERR_UNSUPPORTED) {
    free(a);
    free(b);
    free(c);
    free(c0);
    return false;
  }
  assert_int_equal(st, TSR_OK);
  const long double eps = dt == TSR_C64 ? 1.2e-7L : 2.3e-16L;
  const bool alpha0 = cc->ar == 0 && cc->ai == 0, beta0 = cc->br == 0 && cc->bi == 0;
  /* op(A) (row i at i * k) and op(B) (column j at j * k) in double, conjugated as asked, with
     their moduli: the reference's inner loop reads plain arrays. */
  double *opa = ref_lines(dt, a, lda, m, k, !ta, ca), *opb = ref_lines(dt, b, ldb, n, k, tb, cb);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sr = 0, si = 0, mag = 0;
      const double *x = opa + 3 * (size_t)(i * k), *y = opb + 3 * (size_t)(j * k);
      if (!alpha0)
        for (int64_t p = 0; p < 3 * k; p += 3) {
          sr += x[p] * y[p] - x[p + 1] * y[p + 1];
          si += x[p] * y[p + 1] + x[p + 1] * y[p];
          mag += x[p + 2] * y[p + 2];
        }
      const long double tr = cc->ar * sr - cc->ai * si, ti = cc->ar * si + cc->ai * sr;
      long double cr = 0, ci = 0, er = tr, ei = ti;
      if (!beta0) {
        get(dt, c0, (size_t)(i * ldc + j), &cr, &ci);
        er += cc->br * cr - cc->bi * ci;
        ei += cc->br * ci + cc->bi * cr;
      }
      const long double am = sqrtl((long double)cc->ar * cc->ar + (long double)cc->ai * cc->ai);
      const long double bm = sqrtl((long double)cc->br * cc->br + (long double)cc->bi * cc->bi);
      const long double tol =
          8 * eps * ((long double)(k + 4) * am * mag + 4 * bm * sqrtl(cr * cr + ci * ci)) + 1e-30L;
      long double gr, gi;
      get(dt, c, (size_t)(i * ldc + j), &gr, &gi);
      if (!(fabsl(gr - er) <= tol && fabsl(gi - ei) <= tol)) {
        fprintf(stderr,
                "%s op %d/%d m=%lld n=%lld k=%lld pad=%lld alpha=(%g,%g) beta=(%g,%g) imag=%d: "
                "C(%lld,%lld) = (%Lg,%Lg), want (%Lg,%Lg), tol %Lg\n",
                tsr_dtype_name(dt), cc->opa, cc->opb, (long long)m, (long long)n, (long long)k,
                (long long)cc->pad, cc->ar, cc->ai, cc->br, cc->bi, (int)cc->imag_only,
                (long long)i, (long long)j, gr, gi, er, ei, tol);
        fail();
      }
    }
  /* Padding of C untouched. */
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = n; j < ldc; ++j)
      assert_memory_equal((char *)c + (size_t)(i * ldc + j) * es,
                          (char *)c0 + (size_t)(i * ldc + j) * es, es);
  free(opa);
  free(opb);
  free(a);
  free(b);
  free(c);
  free(c0);
  return true;
}

static const tsr_dtype cx_dtypes[2] = {TSR_C64, TSR_C128};

/* Every op pair (N, T, C, R each side) on one shape, complex alpha and beta, padded. */
static void all_ops(tsr_dtype dt, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  for (int oa = 0; oa < 4; ++oa)
    for (int ob = 0; ob < 4; ++ob) {
      cx_case cc = {dt, oa, ob, m, n, k, (oa + ob) % 3, 0.75, -0.5, 0.5, 0.25};
      run_cx(&cc, seed + (uint64_t)(oa * 4 + ob));
    }
}

/* The library's rule, the sup path forced, the packed path forced. */
static const int64_t sup_modes[3] = {-1, INT64_MAX, 0};

static void test_ops_shapes(void **state) {
  (void)state;
  const int64_t shapes[][3] = {{1, 1, 1},   {3, 5, 7},    {16, 16, 16}, {17, 19, 23},
                               {31, 33, 9}, {64, 64, 64}, {15, 2, 40},  {2, 45, 3}};
  for (int d = 0; d < 2; ++d)
    for (int s = 0; s < 3; ++s) {
      tg_tuning.sup_mnk = sup_modes[s];
      for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        all_ops(cx_dtypes[d], shapes[i][0], shapes[i][1], shapes[i][2], 100 * i + (uint64_t)s);
    }
  tg_tuning.sup_mnk = -1;
}

/* alpha and beta cases: real, purely imaginary, beta 0 over NaN, alpha 0 over NaN, k 0, beta 1;
   purely imaginary operands. */
static void test_scalars(void **state) {
  (void)state;
  const double sc[][4] = {{1, 0, 0, 0},   {0, 1, 0, 0}, {1, 0, 1, 0},     {-0.5, 2, 0, -1},
                          {0, 0, 0.5, 1}, {0, 0, 0, 0}, {2.5, 0, 0, 1.5}, {0.3, -0.7, 1, 0}};
  for (int d = 0; d < 2; ++d)
    for (int s = 0; s < 3; ++s) {
      tg_tuning.sup_mnk = sup_modes[s];
      for (size_t i = 0; i < sizeof sc / sizeof sc[0]; ++i)
        for (int op = 0; op < 4; ++op) {
          cx_case cc = {cx_dtypes[d], op,       3 - op,   13,      11, 29, 2,
                        sc[i][0],     sc[i][1], sc[i][2], sc[i][3]};
          cc.nan_c = sc[i][2] == 0 && sc[i][3] == 0;
          cc.nan_ab = sc[i][0] == 0 && sc[i][1] == 0;
          run_cx(&cc, 7 + i);
          cc.nan_ab = false;
          cc.imag_only = true;
          run_cx(&cc, 9 + i);
          cc.imag_only = false;
          cc.k = 0;
          cc.nan_c = sc[i][2] == 0 && sc[i][3] == 0;
          run_cx(&cc, 11 + i);
        }
    }
  tg_tuning.sup_mnk = -1;
}

/* Past the cache blocks (several KC slices, NC blocks, MC row blocks) on 1 and 2 threads, and
   sizes around the sup path's bound. */
static void test_large_threads(void **state) {
  (void)state;
  const int64_t shapes[][3] = {{150, 70, 300}, {37, 1100, 260}, {97, 130, 65}, {200, 9, 41}};
  for (int t = 1; t <= 2; ++t) {
    tg_set_threads(t);
    for (int d = 0; d < 2; ++d)
      for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        for (int oa = 0; oa < 4; oa += (i == 0 ? 1 : 3))
          for (int ob = 0; ob < 4; ob += (i == 0 ? 1 : 2)) {
            cx_case cc = {cx_dtypes[d], oa,  ob,   shapes[i][0], shapes[i][1], shapes[i][2], 3,
                          -1.25,        0.5, 0.75, -0.5};
            run_cx(&cc, 31 * i + (uint64_t)(4 * oa + ob));
            cc.br = cc.bi = 0;
            cc.nan_c = true;
            run_cx(&cc, 37 * i + (uint64_t)(4 * oa + ob));
          }
  }
  tg_set_threads(1);
}

/* alpha 1, the common call, whose B packing has its own loops (gemm_complex.c: op(B) = B with
   and without conj(B); conj(A) and op(B) = B^T the general ones): every op pair, the packed path
   forced and the library's rule, 1 and 2 threads (B packed in chunks of micro-panels); partial
   micro-panels, a number of complex rows per KC slice that is not a multiple of the rows packed
   at a time (k 301: slices of 101 rows with c128's KC 256, one of 301 with c64's), and two NC
   blocks (n 2100, 4200 real columns); beta complex and 0 over NaN; purely imaginary operands. */
static void test_alpha_one(void **state) {
  (void)state;
  const int64_t shapes[][3] = {{29, 37, 13}, {8, 2100, 20}, {150, 70, 301}};
  for (int t = 1; t <= 2; ++t) {
    tg_set_threads(t);
    for (int d = 0; d < 2; ++d)
      for (int s = 0; s < 3; s += 2) {
        tg_tuning.sup_mnk = sup_modes[s];
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
          for (int oa = 0; oa < 4; ++oa)
            for (int ob = 0; ob < 4; ++ob) {
              if (i == 2 && oa != 0 && ob != 0) continue; /* the large shape: fewer pairs */
              cx_case cc = {cx_dtypes[d],
                            oa,
                            ob,
                            shapes[i][0],
                            shapes[i][1],
                            shapes[i][2],
                            (oa + ob + (int64_t)i) % 2,
                            1,
                            0,
                            0.5,
                            -0.25};
              const uint64_t seed = 41 * i + (uint64_t)(4 * oa + ob) + 1000 * (uint64_t)t;
              run_cx(&cc, seed);
              cc.br = cc.bi = 0;
              cc.nan_c = true;
              cc.imag_only = oa == ob;
              run_cx(&cc, seed + 7);
            }
      }
  }
  tg_tuning.sup_mnk = -1;
  tg_set_threads(1);
}

/* The vendor path (cblas_cgemm/cblas_zgemm of the vendor CBLAS, where built): N, T, C on each
   side; conj without a transpose (R) is refused, naming it. Skipped without a vendor CBLAS. */
static void test_vendor(void **state) {
  (void)state;
  for (int d = 0; d < 2; ++d)
    for (int oa = 0; oa < 3; ++oa)
      for (int ob = 0; ob < 3; ++ob) {
        cx_case cc = {cx_dtypes[d], oa, ob, 19, 23, 17, 2, 0.5, 1.5, -0.25, 0.75};
        cc.vendor = true;
        if (!run_cx(&cc, 3 + (uint64_t)(3 * oa + ob))) skip();
      }
  double z[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  tsr__gemm_args g = tsr__gemm_args_host(TSR_C128, false, false, 1, 1, 1, 1.0, z, 1, z + 2, 1, 0.0,
                                         z + 4, 1, TSR_GEMM_VENDOR);
  g.conj_a = true;
  assert_int_equal(tsr__omp_gemm(TSR_CPU, &g), TSR_ERR_UNSUPPORTED);
  assert_non_null(strstr(tsr_last_error(), "conj"));
}

/* Dtypes the CPU GEMM lacks: TSR_ERR_UNSUPPORTED naming the dtype. */
static void test_refused(void **state) {
  (void)state;
  int32_t x = 0;
  tsr__gemm_args g =
      tsr__gemm_args_host(TSR_I32, false, false, 1, 1, 1, 1.0, &x, 1, &x, 1, 0.0, &x, 1, 0);
  assert_int_equal(tsr__omp_gemm(TSR_CPU, &g), TSR_ERR_UNSUPPORTED);
  assert_non_null(strstr(tsr_last_error(), tsr_dtype_name(TSR_I32)));
  assert_string_equal(tsr__omp_gemm_kernel_name(TSR_C128), tsr__omp_gemm_kernel_name(TSR_F64));
}

int main(void) {
  const int rc = tg_setup();
  if (rc != 0) return rc;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ops_shapes),    cmocka_unit_test(test_scalars),
      cmocka_unit_test(test_large_threads), cmocka_unit_test(test_alpha_one),
      cmocka_unit_test(test_refused),       cmocka_unit_test(test_vendor),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
