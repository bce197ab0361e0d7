/* SPDX-License-Identifier: BSD-3-Clause */
/* The helpers the CPU GEMM tests share (gemm_test.h): the reference check of one case, the
   program's tuning object, the kernel-under-test filter and the programs' common start. */
#include "gemm_test.h"

/* gemm_test.h says what each of these is for. */
tsr__gemm_tuning tg_tuning = TSR__GEMM_TUNING_DEFAULT;

void tg_set_threads(int t) {
#if defined(_OPENMP)
  omp_set_num_threads(t);
#else
  (void)t;
#endif
}

/* The configuration (kernel and blocks) a call of dt on t threads runs with. */
tsr__gemm_config tg_cfg_of(tsr_dtype dt, int t) {
  tsr__gemm_config c;
  tsr__gemm_config_get(dt, t, &tg_tuning, &c);
  return c;
}

/* Sentinel stored in C's padding (columns n..ldc-1): it must survive every call. */
#define PAD_SENTINEL 12345.0

/* Memory of `bytes` bytes with an inaccessible page right after its last byte (at_end) or right
   before its first; *map and *len describe the whole mapping (for munmap). */
static char *guarded_alloc(size_t bytes, bool at_end, char **map, size_t *len) {
  const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  const size_t body = (bytes + pg - 1) / pg * pg;
  *len = body + 2 * pg;
  *map = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(*map != MAP_FAILED);
  assert_int_equal(mprotect(*map, pg, PROT_NONE), 0);
  assert_int_equal(mprotect(*map + pg + body, pg, PROT_NONE), 0);
  return at_end ? *map + pg + body - bytes : *map + pg;
}

void tg_store(tsr_dtype dt, void *p, size_t i, double v) {
  if (dt == TSR_F32)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}

double tg_load(tsr_dtype dt, const void *p, size_t i) {
  return dt == TSR_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* The backend entry inside an API context, as the core calls it (the one error rule: the
   backend's messages carry the public function's name, never an internal one). */
static tsr_status tsr_cpu_gemm(const tsr__gemm_args *g) {
  TSR_API_ENTRY();
  return tsr__omp_gemm(TSR_CPU, g);
}

/* Runs one case through tsr__omp_gemm and checks it against the reference. Returns the
   status of the call (checks only on TSR_OK). */
tsr_status tg_run_case(const gemm_case *gc, uint64_t seed) {
  const tsr_dtype dt = gc->dtype;
  const size_t es = dt == TSR_F32 ? 4 : 8;
  const int64_t m = gc->m, n = gc->n, k = gc->k;
  /* Stored shapes: A is m x k (or k x m transposed), B is k x n (or n x k). */
  const int64_t ar = gc->ta ? k : m, ac = gc->ta ? m : k;
  const int64_t br = gc->tb ? n : k, bc = gc->tb ? k : n;
  const int64_t lda = (ac > 0 ? ac : 1) + gc->pad_a, ldb = (bc > 0 ? bc : 1) + gc->pad_b;
  const int64_t ldc = (n > 0 ? n : 1) + gc->pad_c;
  /* One extra element (none with guard pages): the matrices need not end where the last row
     does. */
  const size_t extra = gc->guard ? 0 : 1;
  const size_t na = (size_t)(ar * lda) + extra, nb = (size_t)(br * ldb) + extra,
               nc = (size_t)(m * ldc) + extra;
  double *ha = malloc((na + 1) * sizeof *ha), *hb = malloc((nb + 1) * sizeof *hb);
  double *hc = malloc((nc + 1) * sizeof *hc), *ref = malloc((nc + 1) * sizeof *ref);
  /* C starts one element past a 64-byte boundary, so the kernels' C accesses are unaligned as
     they may be in user code (unless the case asks for alignment). */
  char *a, *b, *cbuf, *c, *gmap[3] = {NULL, NULL, NULL};
  size_t glen[3] = {0, 0, 0};
  if (gc->guard) {
    a = guarded_alloc((na ? na : 1) * es, gc->guard == 1, &gmap[0], &glen[0]);
    b = guarded_alloc((nb ? nb : 1) * es, gc->guard == 1, &gmap[1], &glen[1]);
    c = cbuf = guarded_alloc((nc ? nc : 1) * es, gc->guard == 1, &gmap[2], &glen[2]);
  } else {
    a = malloc(na * es);
    b = malloc(nb * es);
    cbuf = aligned_alloc(64, ((nc + 1) * es + 63) / 64 * 64);
    c = gc->align_c ? cbuf : cbuf + es;
  }
  assert_non_null(ha);
  assert_non_null(hb);
  assert_non_null(hc);
  assert_non_null(ref);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(cbuf);
  tsr_test_fill_random(ha, na, seed);
  tsr_test_fill_random(hb, nb, seed + 1);
  tsr_test_fill_random(hc, nc, seed + 2);
  for (size_t i = 0; i < na; ++i) {
    if (gc->nan_ab) ha[i] = NAN;
    tg_store(dt, a, i, ha[i]);
    ha[i] = tg_load(dt, a, i); /* the reference sees the rounded inputs */
  }
  for (size_t i = 0; i < nb; ++i) {
    if (gc->nan_ab) hb[i] = NAN;
    tg_store(dt, b, i, hb[i]);
    hb[i] = tg_load(dt, b, i);
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      double v = hc[i * ldc + j];
      if (j >= n)
        v = PAD_SENTINEL;
      else if (gc->nan_c)
        v = NAN;
      hc[i * ldc + j] = v;
    }
  for (size_t i = 0; i < nc; ++i) {
    tg_store(dt, c, i, hc[i]);
    hc[i] = tg_load(dt, c, i);
  }

  /* Reference in float64 (long double sums for f64 inputs). */
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      long double s = 0;
      if (gc->alpha != 0)
        for (int64_t p = 0; p < k; ++p) {
          const double x = gc->ta ? ha[p * lda + i] : ha[i * lda + p];
          const double y = gc->tb ? hb[j * ldb + p] : hb[p * ldb + j];
          s += (long double)x * y;
        }
      double r = (double)((long double)gc->alpha * s);
      if (gc->beta != 0) r += gc->beta * hc[i * ldc + j];
      ref[i * ldc + j] = r;
    }

  tsr__gemm_args args = {.dtype = dt,
                         .trans_a = gc->ta,
                         .trans_b = gc->tb,
                         .m = m,
                         .n = n,
                         .k = k,
                         .alpha = gc->alpha,
                         .beta = gc->beta,
                         .a = a,
                         .lda = lda,
                         .b = b,
                         .ldb = ldb,
                         .c = c,
                         .ldc = ldc,
                         .path = gc->path,
                         .tuning = &tg_tuning};
  if (gc->expect_stream != 0) {
    int nt = 1;
#if defined(_OPENMP)
    nt = omp_get_max_threads();
#endif
    const tsr__gemm_config cf = tg_cfg_of(dt, nt);
    if (tsr__gemm_stream_c(&args, &cf) != (gc->expect_stream == 1))
      fail_msg("streaming stores %s expected but %s: dtype %d m %lld n %lld k %lld beta %g ldc "
               "%lld C %% 64 = %d, kernel %s KC %lld",
               gc->expect_stream == 1 ? "were" : "were not",
               gc->expect_stream == 1 ? "not planned" : "planned", (int)dt, (long long)m,
               (long long)n, (long long)k, gc->beta, (long long)ldc, (int)((uintptr_t)c % 64),
               cf.ker->name, (long long)cf.kc);
  }
  const tsr_status st = tsr_cpu_gemm(&args);
  if (st == TSR_OK) {
    /* Gather the m x n results and compare by relative norm error; the padding must be
       untouched and no NaN may appear. */
    const size_t cnt = (size_t)(m * n);
    double *got = malloc((cnt ? cnt : 1) * sizeof *got),
           *want = malloc((cnt ? cnt : 1) * sizeof *want);
    assert_non_null(got);
    assert_non_null(want);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        got[i * n + j] = tg_load(dt, c, (size_t)(i * ldc + j));
        want[i * n + j] = ref[i * ldc + j];
        if (isnan(got[i * n + j]))
          fail_msg("NaN at (%lld,%lld): dtype %d ta %d tb %d m %lld n %lld k %lld alpha %g "
                   "beta %g",
                   (long long)i, (long long)j, (int)dt, gc->ta, gc->tb, (long long)m, (long long)n,
                   (long long)k, gc->alpha, gc->beta);
      }
      for (int64_t j = n; j < ldc; ++j)
        if (tg_load(dt, c, (size_t)(i * ldc + j)) != PAD_SENTINEL)
          fail_msg("padding of C row %lld col %lld overwritten (m %lld n %lld k %lld)",
                   (long long)i, (long long)j, (long long)m, (long long)n, (long long)k);
    }
    const double err = tsr_test_rel_error(got, want, cnt);
    const double tol = tsr_test_tol(dt, k);
    if (!(err <= tol))
      fail_msg("rel error %.3g > %.3g: dtype %s ta %d tb %d m %lld n %lld k %lld alpha %g "
               "beta %g lds %lld %lld %lld path %d kernel %s",
               err, tol, dt == TSR_F32 ? "f32" : "f64", gc->ta, gc->tb, (long long)m, (long long)n,
               (long long)k, gc->alpha, gc->beta, (long long)lda, (long long)ldb, (long long)ldc,
               (int)gc->path, tg_cfg_of(dt, 1).ker->name);
    free(got);
    free(want);
  }
  free(ha);
  free(hb);
  free(hc);
  free(ref);
  if (gc->guard) {
    for (int i = 0; i < 3; ++i)
      munmap(gmap[i], glen[i]);
  } else {
    free(a);
    free(b);
    free(cbuf);
  }
  return st;
}

void tg_check(gemm_case gc, uint64_t seed) {
  TSR_ASSERT_OK(tg_run_case(&gc, seed));
}

/* All four transpose combinations of one shape, with padded leading dimensions on two of
   them and alpha/beta varied (beta 0, 1 and 0.5: the micro-kernels' three C updates). */
void tg_check_all_trans(tsr_dtype dt, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  for (int t = 0; t < 4; ++t) {
    gemm_case gc = {.dtype = dt,
                    .ta = t & 1,
                    .tb = (t >> 1) & 1,
                    .m = m,
                    .n = n,
                    .k = k,
                    .alpha = t == 2   ? -0.75
                             : t == 1 ? 1.5
                                      : 1.0,
                    .beta = t == 0   ? 0.0
                            : t == 1 ? 1.0
                                     : 0.5,
                    .pad_a = t & 1 ? 3 : 0,
                    .pad_b = t == 2 ? 5 : 0,
                    .pad_c = t >= 2 ? 7 : 0,
                    .path = TSR_GEMM_NATIVE};
    tg_check(gc, seed + (uint64_t)t * 7919);
  }
}

const tsr_dtype tg_dtypes[2] = {TSR_F32, TSR_F64};

/* Whether this run tests kernel k's ISA (CTest runs the program once per ISA, naming it in
   TSR_CPU_KERNEL; unset or auto: every one). */
bool tg_isa_under_test(const tsr__gemm_kernel *k) {
  const char *want = getenv("TSR_CPU_KERNEL");
  return !want || !*want || strcmp(want, "auto") == 0 || strcmp(want, k->isa) == 0;
}
int tg_setup(void) {
  const char *want = getenv("TSR_CPU_KERNEL");
  if (want && *want && strcmp(want, "auto") != 0) {
    if (!tsr__gemm_isa_available(want)) {
      printf("TSR_CPU_KERNEL=%s: this CPU or build lacks it, skipped\n", want);
      return TSR_TEST_SKIP;
    }
    if (strcmp(tsr__omp_gemm_kernel_name(TSR_F32), want) != 0 ||
        strcmp(tsr__omp_gemm_kernel_name(TSR_F64), want) != 0) {
      printf("TSR_CPU_KERNEL=%s but %s/%s selected\n", want, tsr__omp_gemm_kernel_name(TSR_F32),
             tsr__omp_gemm_kernel_name(TSR_F64));
      return 1;
    }
  }
  /* Exercise the threaded paths whatever the machine's load: every call on all its threads. */
  tg_tuning.fixed_threads = true;
  tg_tuning.full_team = true;
  for (int d = 0; d < 2; ++d)
    for (int t = 1; t <= 2; ++t) {
      const tsr__gemm_config c = tg_cfg_of(tg_dtypes[d], t);
      printf("%d thread(s): kernel %s: MR=%d NR=%d KC=%lld MC=%lld NC=%lld grain %d (%s)\n", t,
             c.ker->name, c.ker->mr, c.ker->nr, (long long)c.kc, (long long)c.mc, (long long)c.nc,
             c.grain, c.source);
    }
  return 0;
}
