/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU GEMM: every micro-kernel, both precisions, all four transpose combinations, alpha/beta
 * special cases, padded leading dimensions, and sizes around every register and cache block
 * (MR, NR, KC, MC, NC), with 1, 2 and 3 threads (every pool thread joining each call, and as
 * they come), against a float64 reference on random inputs; the GEMM's thread pool itself. Calls
 * the backend entry tsr__omp_gemm directly (linked against the static library), plus a few cases
 * through the public tsr_gemm / tsr_matmul.
 *
 * The kernel under test comes from TSR_CPU_KERNEL (portable, avx2, avx512; CTest runs the
 * program once per value). A kernel the CPU lacks makes the program exit 77 (skipped).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tsr_test.h"

#include "omp/gemm/gemm_tune.h"
#include "omp/gemm/kernels/kernels.h"
#include "omp/omp_internal.h"
#include "tsr_test_gemm.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

/* This program's tuning of the CPU GEMM, passed with every call it makes through the backend
   entry (tsr__gemm_args.tuning) and to the configuration and pool queries; main() asks for
   the thread count set (no adaptive count) and full teams, so the multi-threaded orderings
   run whatever the machine's load. */
static tsr__gemm_tuning tuning = TSR__GEMM_TUNING_DEFAULT;

static void set_threads(int t) {
#if defined(_OPENMP)
  omp_set_num_threads(t);
#else
  (void)t;
#endif
}

/* The configuration (kernel and blocks) a call of dt on t threads runs with. */
static tsr__gemm_config cfg_of(tsr_dtype dt, int t) {
  tsr__gemm_config c;
  tsr__gemm_config_get(dt, t, &tuning, &c);
  return c;
}

/* Sentinel stored in C's padding (columns n..ldc-1): it must survive every call. */
#define PAD_SENTINEL 12345.0

typedef struct gemm_case {
  tsr_dtype dtype;
  bool ta, tb;
  int64_t m, n, k;
  double alpha, beta;
  int64_t pad_a, pad_b, pad_c; /* leading dimension minus the stored width */
  bool nan_c;                  /* C starts as NaN (only with beta == 0) */
  bool nan_ab;                 /* A and B are NaN (only with alpha == 0 or k == 0) */
  tsr_gemm_path path;
  bool align_c;      /* C starts on a 64-byte boundary (else one element past one) */
  int expect_stream; /* 1: the call must use streaming stores, -1: must not, 0: unchecked */
  int guard;         /* A, B, C exactly sized, an inaccessible page right after (1) or right
                        before (2) each: any access outside the matrices faults */
} gemm_case;

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

static void store(tsr_dtype dt, void *p, size_t i, double v) {
  if (dt == TSR_F32)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}
static double load(tsr_dtype dt, const void *p, size_t i) {
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
static tsr_status run_case(const gemm_case *gc, uint64_t seed) {
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
    store(dt, a, i, ha[i]);
    ha[i] = load(dt, a, i); /* the reference sees the rounded inputs */
  }
  for (size_t i = 0; i < nb; ++i) {
    if (gc->nan_ab) hb[i] = NAN;
    store(dt, b, i, hb[i]);
    hb[i] = load(dt, b, i);
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
    store(dt, c, i, hc[i]);
    hc[i] = load(dt, c, i);
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
                         .tuning = &tuning};
  if (gc->expect_stream != 0) {
    int nt = 1;
#if defined(_OPENMP)
    nt = omp_get_max_threads();
#endif
    const tsr__gemm_config cf = cfg_of(dt, nt);
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
        got[i * n + j] = load(dt, c, (size_t)(i * ldc + j));
        want[i * n + j] = ref[i * ldc + j];
        if (isnan(got[i * n + j]))
          fail_msg("NaN at (%lld,%lld): dtype %d ta %d tb %d m %lld n %lld k %lld alpha %g "
                   "beta %g",
                   (long long)i, (long long)j, (int)dt, gc->ta, gc->tb, (long long)m, (long long)n,
                   (long long)k, gc->alpha, gc->beta);
      }
      for (int64_t j = n; j < ldc; ++j)
        if (load(dt, c, (size_t)(i * ldc + j)) != PAD_SENTINEL)
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
               (int)gc->path, cfg_of(dt, 1).ker->name);
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

static void check(gemm_case gc, uint64_t seed) {
  TSR_ASSERT_OK(run_case(&gc, seed));
}

/* All four transpose combinations of one shape, with padded leading dimensions on two of
   them and alpha/beta varied (beta 0, 1 and 0.5: the micro-kernels' three C updates). */
static void check_all_trans(tsr_dtype dt, int64_t m, int64_t n, int64_t k, uint64_t seed) {
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
    check(gc, seed + (uint64_t)t * 7919);
  }
}

static const tsr_dtype dtypes[2] = {TSR_F32, TSR_F64};

/* Sizes 1, primes, and just under/at/over MR and NR, in every dimension. */
static void check_small_shapes(void) {
  set_threads(2);
  for (int d = 0; d < 2; ++d) {
    const tsr__gemm_kernel *kr = cfg_of(dtypes[d], 2).ker;
    const int64_t s[] = {1,
                         2,
                         3,
                         5,
                         13,
                         31,
                         kr->mr - 1,
                         kr->mr,
                         kr->mr + 1,
                         kr->nr - 1,
                         kr->nr,
                         kr->nr + 1,
                         2 * kr->mr + 3,
                         2 * kr->nr + 1,
                         67};
    const int ns = (int)(sizeof s / sizeof s[0]);
    for (int i = 0; i < ns; ++i) {
      if (s[i] < 1) continue;
      check_all_trans(dtypes[d], s[i], s[i], s[i], 100 + (uint64_t)i);
      check_all_trans(dtypes[d], s[i], 7, 3, 200 + (uint64_t)i);
      check_all_trans(dtypes[d], 5, s[i], 11, 300 + (uint64_t)i);
      check_all_trans(dtypes[d], 3, 4, s[i], 400 + (uint64_t)i);
      check_all_trans(dtypes[d], s[i], s[(i + 5) % ns], s[(i + 9) % ns], 500 + (uint64_t)i);
    }
  }
}

/* Those shapes through the packed path and (on one thread, where the kernel has one) the
   small-matrix path. */
static void test_small_shapes(void **state) {
  (void)state;
  tuning.small_mnk = 0;
  check_small_shapes();
  tuning.small_mnk = -1;
  check_small_shapes();
}

/* Just under/at/over KC, MC and NC (one large dimension at a time keeps this fast), through
   the packed path (the small-matrix path has no cache blocks). */
static void test_cache_block_edges(void **state) {
  (void)state;
  tuning.small_mnk = 0;
  for (int d = 0; d < 2; ++d) {
    for (int t = 1; t <= 2; ++t) {
      set_threads(t);
      const tsr__gemm_config cf = cfg_of(dtypes[d], t);
      const tsr__gemm_config *kr = &cf;
      for (int64_t e = -1; e <= 1; ++e) {
        check_all_trans(dtypes[d], kr->ker->mr + 1, kr->ker->nr + 3, kr->kc + e, 600 + (uint64_t)e);
        check_all_trans(dtypes[d], kr->mc + e, kr->ker->nr + 1, 9, 700 + (uint64_t)e);
        check_all_trans(dtypes[d], 3, kr->nc + e, 4, 800 + (uint64_t)e);
      }
      check_all_trans(dtypes[d], 2 * kr->ker->mr + 1, kr->ker->nr + 1, 2 * kr->kc + 3, 900);
      /* Several MC blocks and KC slices with beta != 0: C accumulates across slices. */
      check_all_trans(dtypes[d], kr->mc + kr->ker->mr + 1, 7, kr->kc + 7, 910);
      /* A shallow slice (one k slice, tiles along C's rows) over two whole sweeps of B's
         micro-panels and part of a third, the last tile partial (gemm_macro.c); NC widened to
         the whole n where the configuration's is narrower (else each NC block would hold less
         than two sweeps). */
      const int64_t ks = kr->kc < 200 ? kr->kc : 200;
      const int64_t sw = tsr__gemm_row_sweep(kr->ker, ks);
      const int64_t nsw = (2 * sw + 1) * kr->ker->nr + 5;
      tsr__gemm_config wide = cf;
      wide.nc = nsw > cf.nc ? (2 * sw + 2) * kr->ker->nr : cf.nc; /* one NC block */
      tuning.config[d] = &wide;
      check_all_trans(dtypes[d], 2 * kr->ker->mr + 1, nsw, ks, 920);
      tuning.config[d] = NULL;
    }
  }
  tuning.small_mnk = -1;
}

/* Large enough to run multi-threaded: square, short-wide (thread grid splits columns) and
   tall-skinny (splits rows), with 1, 2 and 3 threads (3 gives uneven splits). */
static void test_threaded_shapes(void **state) {
  (void)state;
  const int64_t shapes[][3] = {{97, 101, 103}, {20, 1500, 30}, {1500, 21, 30}, {120, 100, 230}};
  for (int d = 0; d < 2; ++d)
    for (int t = 1; t <= 3; ++t) {
      set_threads(t);
      for (int s = 0; s < 4; ++s)
        check_all_trans(dtypes[d], shapes[s][0], shapes[s][1], shapes[s][2],
                        1000 + (uint64_t)(s * 10 + t));
    }
  /* With the adaptive thread count and the pool's usual hand-out (the defaults) too: each
     call may run on one thread or more, pool threads joining at any point. */
  set_threads(2);
  tuning.fixed_threads = false;
  tuning.full_team = false;
  for (int r = 0; r < 3; ++r)
    check_all_trans(TSR_F64, 97, 101, 103, 1100 + (uint64_t)r);
  set_threads(3);
  tuning.fixed_threads = true;
  for (int r = 0; r < 3; ++r)
    check_all_trans(TSR_F32, 150, 70, 300, 1110 + (uint64_t)r);
  tuning.full_team = true;
}

/* No access outside the matrices: A, B and C exactly sized, with an inaccessible page right
   after their last element (then right before their first), every transpose, no padding, shapes
   with partial micro-panels and tiles in every dimension, through the packed path, the small
   path and its k blocks, on 1 and 2 threads. A masked load or store that covers one lane too
   many, or a packing loop that reads a full micro-panel past the last row, faults here (in the
   other tests it lands in the allocation's slack). */
static void test_guard_pages(void **state) {
  (void)state;
  for (int d = 0; d < 2; ++d)
    for (int t = 1; t <= 2; ++t) {
      set_threads(t);
      const tsr__gemm_kernel *kr = cfg_of(dtypes[d], t).ker;
      const int64_t mr = kr->mr, nr = kr->nr;
      const int64_t shapes[][3] = {
          {1, 1, 1},           {mr + 1, nr - 1, 17}, {2 * mr - 1, 3, 29},
          {3, 2 * nr + 5, 31}, {mr + 5, nr + 7, 70}, {2 * mr + 3, 2 * nr + 1, 300}};
      for (int path = 0; path < 3; ++path) {
        /* 0: packed; 1: small, one k block; 2: small, k blocks of 7. */
        tuning.small_mnk = path == 0 ? 0 : INT64_MAX;
        tuning.small_kblock = path == 2 ? 7 : 0;
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
          for (int tr = 0; tr < 4; ++tr)
            for (int gd = 1; gd <= 2; ++gd) {
              gemm_case gc = {.dtype = dtypes[d],
                              .ta = tr & 1,
                              .tb = tr >> 1,
                              .m = shapes[i][0],
                              .n = shapes[i][1],
                              .k = shapes[i][2],
                              .alpha = 1.25,
                              .beta = tr == 1 ? 0.0 : -0.5,
                              .path = TSR_GEMM_NATIVE,
                              .guard = gd};
              check(gc, 1200 + (uint64_t)(i * 16 + (size_t)tr * 4 + (size_t)gd));
            }
      }
    }
  tuning.small_mnk = -1;
  tuning.small_kblock = 0;
}

/* The small path's wide strips (gemm_small_impl.h, TSR__SM_NVW: AVX-512 takes op(B) in place in
   strips of 4 vectors, tiles of at most 6 rows): every tile height 1-7, strips of 3 and 4
   vectors with a full or a masked last vector, a wide strip followed by a narrow remainder,
   both strides of op(A), alpha 1 and not, beta 0 and not, guard pages after and before each
   operand. Where the kernel has no wide strips the same cases run its narrow tiles. */
static void test_small_wide_tiles(void **state) {
  (void)state;
  set_threads(1);
  tuning.small_mnk = INT64_MAX;
  tuning.small_kblock = 0;
  for (int d = 0; d < 2; ++d) {
    const int64_t l = cfg_of(dtypes[d], 1).ker->nr / 2; /* lanes of a vector (NR = 2 vectors) */
    const int64_t ns[] = {2 * l + 1, 3 * l, 4 * l - 1, 4 * l, 5 * l + 1, 10 * l + 3};
    for (int64_t m = 1; m <= 7; ++m)
      for (size_t i = 0; i < sizeof ns / sizeof ns[0]; ++i)
        for (int t = 0; t < 4; ++t) {
          gemm_case gc = {.dtype = dtypes[d],
                          .ta = t & 1,
                          .tb = false,
                          .m = m,
                          .n = ns[i],
                          .k = t < 2 ? 9 : 1,
                          .alpha = t == 1 ? 1.0 : 1.25,
                          .beta = t == 2 ? 0.0 : -0.5,
                          .path = TSR_GEMM_NATIVE,
                          .guard = 1 + (int)((i + (size_t)m) % 2)};
          check(gc, 3100 + (uint64_t)(m * 64 + (int64_t)i * 4 + t));
        }
  }
  tuning.small_mnk = -1;
}

/* Streaming (non-temporal) stores of C (tsr__gemm_stream_c), with the size threshold at 0 so
   that small cases take the path: full and edge tiles, every transpose, 1-3 threads, C
   starting as NaN (never read); and the cases that must not stream. */
static void test_streaming_stores(void **state) {
  (void)state;
  tuning.stream_min_bytes = 0;
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dt = dtypes[d];
    const int64_t line = dt == TSR_F32 ? 16 : 8; /* elements per 64 bytes */
    for (int t = 1; t <= 3; ++t) {
      set_threads(t);
      const tsr__gemm_config cf = cfg_of(dt, t);
      const int mr = cf.ker->mr, nr = cf.ker->nr;
      const int has =
          (dt == TSR_F32 ? cf.ker->ukr_stream_f32 != NULL : cf.ker->ukr_stream_f64 != NULL) ? 1
                                                                                            : -1;
      const int64_t shapes[][3] = {{3 * mr + 5, 4 * nr + 7, cf.kc},
                                   {mr, nr, 1},
                                   {2 * mr, 5 * nr, 37},
                                   {131, 3 * nr + 1, 64}};
      for (int sh = 0; sh < 4; ++sh) {
        const int64_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
        const int64_t ldc = (n + line - 1) / line * line;
        for (int tr = 0; tr < 4; ++tr) {
          gemm_case gc = {.dtype = dt,
                          .ta = tr & 1,
                          .tb = tr >> 1,
                          .m = m,
                          .n = n,
                          .k = k,
                          .alpha = tr == 3 ? -0.75 : 1.0,
                          .beta = 0.0,
                          .pad_a = tr,
                          .pad_c = ldc - n,
                          .nan_c = true,
                          .path = TSR_GEMM_NATIVE,
                          .align_c = true,
                          .expect_stream = has};
          check(gc, 12000 + (uint64_t)(d * 1000 + t * 100 + sh * 10 + tr));
        }
        /* Not streamed: beta != 0 (C is read), C or its rows misaligned, k over KC (C is
           written once per slice). */
        gemm_case no = {.dtype = dt,
                        .m = m,
                        .n = n,
                        .k = k,
                        .alpha = 1.0,
                        .beta = 0.5,
                        .pad_c = ldc - n,
                        .path = TSR_GEMM_NATIVE,
                        .align_c = true,
                        .expect_stream = -1};
        check(no, 13000 + (uint64_t)(d * 1000 + t * 100 + sh));
        no.beta = 0.0;
        no.align_c = false;
        check(no, 13500 + (uint64_t)(d * 1000 + t * 100 + sh));
        no.align_c = true;
        no.pad_c = ldc - n + 1;
        check(no, 14000 + (uint64_t)(d * 1000 + t * 100 + sh));
        no.pad_c = ldc - n;
        no.k = cf.kc + 1;
        check(no, 14500 + (uint64_t)(d * 1000 + t * 100 + sh));
      }
    }
  }
  /* The default threshold (the last-level cache): a small C is not streamed. */
  tuning.stream_min_bytes = -1;
  set_threads(2);
  check((gemm_case){.dtype = TSR_F32,
                    .m = 64,
                    .n = 64,
                    .k = 64,
                    .alpha = 1.0,
                    .path = TSR_GEMM_NATIVE,
                    .align_c = true,
                    .expect_stream = -1},
        15000);
}

/* beta == 0 never reads C (NaN must not propagate); alpha == 0 and k == 0 never read A/B. */
static void test_alpha_beta_special(void **state) {
  (void)state;
  set_threads(2);
  for (int d = 0; d < 2; ++d) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = (t >> 1) & 1;
      /* beta = 0 over NaN C, small and threaded sizes. */
      check((gemm_case){.dtype = dtypes[d],
                        .ta = ta,
                        .tb = tb,
                        .m = 37,
                        .n = 41,
                        .k = 29,
                        .alpha = 1.5,
                        .beta = 0.0,
                        .pad_c = 2,
                        .nan_c = true,
                        .path = TSR_GEMM_NATIVE},
            2000 + (uint64_t)t);
      check((gemm_case){.dtype = dtypes[d],
                        .ta = ta,
                        .tb = tb,
                        .m = 90,
                        .n = 80,
                        .k = 70,
                        .alpha = -1.0,
                        .beta = 0.0,
                        .nan_c = true,
                        .path = TSR_GEMM_NATIVE},
            2010 + (uint64_t)t);
      /* alpha = 0 with NaN A and B: C = beta*C. */
      check((gemm_case){.dtype = dtypes[d],
                        .ta = ta,
                        .tb = tb,
                        .m = 33,
                        .n = 17,
                        .k = 8,
                        .alpha = 0.0,
                        .beta = -2.0,
                        .pad_c = 1,
                        .nan_ab = true,
                        .path = TSR_GEMM_NATIVE},
            2020 + (uint64_t)t);
      /* alpha = 0 and beta = 0 over NaN C: zeros. */
      check((gemm_case){.dtype = dtypes[d],
                        .ta = ta,
                        .tb = tb,
                        .m = 9,
                        .n = 70,
                        .k = 8,
                        .alpha = 0.0,
                        .beta = 0.0,
                        .nan_c = true,
                        .nan_ab = true,
                        .path = TSR_GEMM_NATIVE},
            2030 + (uint64_t)t);
    }
    /* k == 0: C = beta*C, and beta = 0 writes zeros over NaN. */
    check((gemm_case){.dtype = dtypes[d],
                      .m = 6,
                      .n = 5,
                      .k = 0,
                      .alpha = 1.0,
                      .beta = 3.0,
                      .pad_c = 2,
                      .path = TSR_GEMM_NATIVE},
          2040);
    check((gemm_case){.dtype = dtypes[d],
                      .m = 6,
                      .n = 5,
                      .k = 0,
                      .alpha = 1.0,
                      .beta = 0.0,
                      .nan_c = true,
                      .path = TSR_GEMM_NATIVE},
          2041);
    /* m == 0 or n == 0: nothing to do (the padding check covers n == 0). */
    check((gemm_case){.dtype = dtypes[d],
                      .m = 0,
                      .n = 5,
                      .k = 3,
                      .alpha = 1.0,
                      .beta = 1.0,
                      .path = TSR_GEMM_NATIVE},
          2050);
    check((gemm_case){.dtype = dtypes[d],
                      .m = 4,
                      .n = 0,
                      .k = 3,
                      .alpha = 1.0,
                      .beta = 1.0,
                      .pad_c = 3,
                      .path = TSR_GEMM_NATIVE},
          2051);
  }
}

/* The micro-kernel itself with a non-unit column stride of C (the driver always passes
   unit stride; the contract allows any). */
static void test_ukr_general_stride(void **state) {
  (void)state;
  for (int d = 0; d < 2; ++d) {
    const tsr__gemm_kernel *kr = cfg_of(dtypes[d], 1).ker;
    const int mr = kr->mr, nr = kr->nr;
    const int64_t k = 19, rs = 1, cs = mr + 2; /* C stored column-major with padding */
    double *ha = malloc(sizeof(double) * (size_t)(mr * k));
    double *hb = malloc(sizeof(double) * (size_t)(nr * k));
    double *hc = malloc(sizeof(double) * (size_t)(cs * nr));
    void *ap = NULL, *bp = NULL, *cp = NULL;
    assert_non_null(ha);
    assert_non_null(hb);
    assert_non_null(hc);
    TSR_ASSERT_OK(tsr__host_alloc((size_t)(mr * k) * 8, &ap));
    TSR_ASSERT_OK(tsr__host_alloc((size_t)(nr * k) * 8, &bp));
    TSR_ASSERT_OK(tsr__host_alloc((size_t)(cs * nr) * 8, &cp));
    tsr_test_fill_random(ha, (size_t)(mr * k), 3000);
    tsr_test_fill_random(hb, (size_t)(nr * k), 3001);
    tsr_test_fill_random(hc, (size_t)(cs * nr), 3002);
    for (int beta_zero = 0; beta_zero < 2; ++beta_zero) {
      const double alpha = 0.5, beta = beta_zero ? 0.0 : -1.25;
      for (int64_t i = 0; i < mr * k; ++i)
        store(dtypes[d], ap, (size_t)i, ha[i]);
      for (int64_t i = 0; i < nr * k; ++i)
        store(dtypes[d], bp, (size_t)i, hb[i]);
      for (int64_t i = 0; i < cs * nr; ++i)
        store(dtypes[d], cp, (size_t)i, hc[i]);
      if (dtypes[d] == TSR_F32)
        kr->ukr_f32(k, (float)alpha, ap, bp, (float)beta, cp, rs, cs);
      else
        kr->ukr_f64(k, alpha, ap, bp, beta, cp, rs, cs);
      /* Elementwise bound (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed.,
         sec. 3.1): a k-term dot product in precision u has |error| <= gamma_k * sum|a||b|,
         gamma_k = k*u/(1-k*u); scaling by alpha and adding beta*C add two more roundings,
         so |C - C_exact| <= gamma_(k+2) * (|alpha| sum_p |a_ip b_pj| + |beta c_ij|).
         The worst ratio of error to that bound must not exceed 1. */
      const double u = dtypes[d] == TSR_F32 ? 0x1p-24 : 0x1p-53;
      const double gam = (double)(k + 2) * u / (1 - (double)(k + 2) * u);
      double maxerr = 0;
      for (int i = 0; i < mr; ++i)
        for (int j = 0; j < nr; ++j) {
          double s = 0, sabs = 0;
          for (int64_t p = 0; p < k; ++p) {
            const double x = load(dtypes[d], ap, (size_t)(p * mr + i)),
                         y = load(dtypes[d], bp, (size_t)(p * nr + j));
            s += x * y;
            sabs += fabs(x * y);
          }
          const double c0 = hc[i * rs + j * cs];
          const double c0r = dtypes[d] == TSR_F32 ? (double)(float)c0 : c0;
          const double want = alpha * s + (beta_zero ? 0.0 : beta * c0r);
          const double bound =
              gam * (fabs(alpha) * sabs + (beta_zero ? 0.0 : fabs(beta * c0r))) + 0x1p-1000;
          const double e = fabs(load(dtypes[d], cp, (size_t)(i * rs + j * cs)) - want) / bound;
          if (e > maxerr) maxerr = e;
        }
      /* Padding rows mr..cs-1 of each column are untouched. */
      for (int j = 0; j < nr; ++j)
        for (int64_t i = mr; i < cs; ++i) {
          const double orig = dtypes[d] == TSR_F32 ? (double)(float)hc[i + j * cs] : hc[i + j * cs];
          assert_true(load(dtypes[d], cp, (size_t)(i + j * cs)) == orig);
        }
      if (!(maxerr <= 1.0))
        fail_msg("micro-kernel %s with column stride %lld: error %.3g x the rounding bound",
                 kr->name, (long long)cs, maxerr);
    }
    free(ha);
    free(hb);
    free(hc);
    tsr__host_free(ap);
    tsr__host_free(bp);
    tsr__host_free(cp);
  }
}

/* Calls from inside a parallel region run single-threaded, each thread with its own
   cached packing buffers. */
static void test_called_from_threads(void **state) {
  (void)state;
  set_threads(2);
  int failures = 0;
#if defined(_OPENMP)
#pragma omp parallel for reduction(+ : failures) schedule(static, 1)
#endif
  for (int i = 0; i < 4; ++i)
    /* cmocka's asserts are not thread-safe: compare here, assert after. */
    failures += !tsr_test_native_gemm_ok(TSR_F64, 70 + i, 65, 80, 4000 + (uint64_t)i,
                                         4100 + (uint64_t)i, &tuning);
  assert_int_equal(failures, 0);
}

/* ---------------------------------------------------------------- thread pool --------- */

/* A job of 4000 tickets: each ticket marked once, by whichever thread takes it; each slot
   used at most once per job. */
typedef struct pool_job {
  atomic_int next;
  atomic_int marks[4000];
  atomic_int slots[8];
  int sleep_us; /* per ticket, so that jobs overlap in time */
} pool_job;

static void pool_job_fn(void *arg, int slot) {
  pool_job *j = arg;
  if (slot >= 0 && slot < 8) atomic_fetch_add(&j->slots[slot], 1);
  for (;;) {
    const int t = atomic_fetch_add(&j->next, 1);
    if (t >= 4000) break;
    atomic_fetch_add(&j->marks[t], 1);
    if (j->sleep_us) {
      const struct timespec ts = {0, 1000L * j->sleep_us};
      nanosleep(&ts, NULL);
    }
  }
}

/* Checks one finished job run by `ran` threads; returns the number of defects. */
static int pool_job_defects(pool_job *j, int ran, int nt) {
  int bad = ran < 1 || ran > nt;
  for (int t = 0; t < 4000; ++t)
    bad += atomic_load(&j->marks[t]) != 1;
  for (int s = 0; s < 8; ++s)
    bad += atomic_load(&j->slots[s]) != (s < ran ? 1 : 0);
  return bad;
}

static void *pool_caller(void *arg) {
  pool_job *j = arg;
  const int ran = tsr__gemm_pool_run(3, &tuning, pool_job_fn, j);
  return (void *)(intptr_t)pool_job_defects(j, ran, 3);
}

/* An adaptive thread-count state that has learned nothing. */
static void adapt_init(tsr__gemm_adapt *s) {
  atomic_init(&s->overhead_ns, 0);
  atomic_init(&s->overhead_at, 0);
  atomic_init(&s->fs_per_flop, 0);
  atomic_init(&s->reprobe_ns, 0);
  atomic_init(&s->warm_probe_before, 0);
  atomic_init(&s->warm_probe, false);
  atomic_init(&s->warm_until, 0);
  atomic_init(&s->warm_left, 0);
}

/* A probe that had to wake sleeping pool threads measured their wake-up: the next call while
   they poll (tsr__gemm_adapt_cold) probes again, and the overhead it measures, lower, is what
   the calls after it use; later calls pay no wake-up and stay on the threads. Without the warm
   probe a library that went serial stayed serial, every re-probe finding the threads asleep. */
static void test_adaptive_warm_probe(void **state) {
  (void)state;
  const int64_t ms = 1000000;
  const double flops = 4e6; /* one thread: 40 us, two would save 20 us */
  tsr__gemm_adapt s;
  adapt_init(&s);
  tsr__gemm_adapt_learn_serial(&s, 40000, flops);
  /* A cold probe: 60 us, the caller worked 20 (overhead 40 us, the threads' wake-up). */
  int64_t t = 1000 * ms;
  tsr__gemm_adapt_learn_parallel(&s, 60000, 20000, 20000, flops, t);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1 * ms)); /* no mark: serial */
  tsr__gemm_adapt_cold(&s, t);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1 * ms)); /* the warm probe */
  /* It measures 3 us: the mean is replaced, and the calls after it run on the threads. */
  tsr__gemm_adapt_learn_parallel(&s, 23000, 20000, 20000, flops, t + 1 * ms);
  assert_int_equal(atomic_load(&s.overhead_ns), 3000);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 2 * ms));
  /* One warm probe per mark, and only while the threads poll. */
  tsr__gemm_adapt_learn_parallel(&s, 100000, 20000, 20000, flops, t + 2 * ms);
  tsr__gemm_adapt_learn_parallel(&s, 100000, 20000, 20000, flops, t + 2 * ms);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 3 * ms));
  tsr__gemm_adapt_cold(&s, t + 3 * ms);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 40 * ms)); /* past the window */
  tsr__gemm_adapt_cold(&s, t + 40 * ms);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 41 * ms));
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 42 * ms)); /* used */
}

/* A state that learned one thread's 40 us for 4e6 flops, then a cold parallel call of
   cold_ns (the caller worked 20 us) at time t, marked cold. */
static void settle_start(tsr__gemm_adapt *s, int64_t cold_ns, int64_t t) {
  adapt_init(s);
  tsr__gemm_adapt_learn_serial(s, 40000, 4e6);
  tsr__gemm_adapt_learn_parallel(s, cold_ns, 20000, 20000, 4e6, t);
  tsr__gemm_adapt_cold(s, t);
}

/* Threads that have just woken may still be settling: a warm probe that measured less than the
   mean, but still too much, arms another, up to three per cold call and within its window.
   Before, the one warm probe left sgemm 128^3 on two threads serial after a spell of tiny
   calls (Zen 4: 286 us cold, 50 us warm, then 38 us a call serial against 21 in parallel). */
static void test_adaptive_warm_probes_settle(void **state) {
  (void)state;
  const int64_t ms = 1000000;
  const double flops = 4e6; /* one thread: 40 us, two would save 20 us */
  tsr__gemm_adapt s;
  const int64_t t = 1000 * ms;
  /* The cold call: overhead 266 us. */
  settle_start(&s, 286000, t);
  /* Warm probe 1: 30 us, lower (it replaces the mean) but still more than the saving. */
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1 * ms));
  tsr__gemm_adapt_learn_parallel(&s, 50000, 20000, 20000, flops, t + 1 * ms);
  assert_int_equal(atomic_load(&s.overhead_ns), 30000);
  /* Warm probe 2 (armed by the first): 1 us, and the calls after it run on the threads. */
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 2 * ms));
  tsr__gemm_adapt_learn_parallel(&s, 21000, 20000, 20000, flops, t + 2 * ms);
  assert_int_equal(atomic_load(&s.overhead_ns), 1000);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 3 * ms));
  /* At most three per cold call: a machine that stays slow is not probed on every call. */
  settle_start(&s, 900000, t);
  int64_t ovh = 880000;
  for (int i = 0; i < 3; ++i) {
    assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + (1 + i) * ms));
    ovh /= 2; /* lower each time, still far above the 20 us saved */
    tsr__gemm_adapt_learn_parallel(&s, 20000 + ovh, 20000, 20000, flops, t + (1 + i) * ms);
  }
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 5 * ms));
  /* And a warm probe that measured no less arms none. */
  settle_start(&s, 120000, t);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1 * ms));
  tsr__gemm_adapt_learn_parallel(&s, 150000, 20000, 20000, flops, t + 1 * ms);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 2 * ms));
  /* Nor one past the cold call's window. */
  settle_start(&s, 286000, t);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1 * ms));
  tsr__gemm_adapt_learn_parallel(&s, 50000, 20000, 20000, flops, t + 1 * ms);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 40 * ms));
}

/* The adaptive thread count's rules on a state of the test's own and a clock it sets:
   serial while the overhead it learned outweighs what threads save; re-probed after 50 ms,
   then at doubling waits up to max(1 s, 100 x overhead), never longer; one fast probe brings
   the threads back at once and halves the wait. */
static void test_adaptive_reprobe(void **state) {
  (void)state;
  const int64_t ms = 1000000;
  const double flops = 1e8;
  tsr__gemm_adapt s;
  adapt_init(&s);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, 0)); /* nothing learned */
  /* One thread: 1 ms for 1e8 flops, so two threads would save 0.5 ms. */
  tsr__gemm_adapt_learn_serial(&s, 1 * ms, flops);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, 0));
  /* A contended parallel call: 11 ms, of which the caller worked 1 ms (overhead 10 ms). */
  int64_t t = 1000 * ms;
  tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1 * ms));
  /* A call large enough that threads save more than twice the overhead still runs on them. */
  assert_true(tsr__gemm_adapt_parallel(&s, 100 * flops, 2, t + 1 * ms));
  /* Probes while the contention lasts: after 50, 100, 200, 400, 800 ms, then every 1 s. */
  const int64_t waits[] = {50, 100, 200, 400, 800, 1000, 1000, 1000};
  for (size_t i = 0; i < sizeof waits / sizeof waits[0]; ++i) {
    assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + (waits[i] - 1) * ms));
    assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + waits[i] * ms));
    t += waits[i] * ms + 1;
    assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t)); /* the probe */
    tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  }
  /* A higher overhead (40 ms): the waits go on doubling past 1 s, up to 100 x the overhead
     (a probe then costs ~1%), never beyond. */
  for (int i = 0; i < 3; ++i)
    tsr__gemm_adapt_learn_parallel(&s, 41 * ms, 1 * ms, 1 * ms, flops, t);
  const int64_t at_least[] = {1000, 2000, 3000, 3000};
  for (size_t i = 0; i < sizeof at_least / sizeof at_least[0]; ++i) {
    const int64_t ovh = atomic_load(&s.overhead_ns);
    assert_true(ovh > 30 * ms && ovh < 41 * ms);
    assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + at_least[i] * ms));
    t += 100 * ovh + 1;
    assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t));
    tsr__gemm_adapt_learn_parallel(&s, 41 * ms, 1 * ms, 1 * ms, flops, t);
  }
  /* The overhead falls back (10 ms, too slowly to replace the mean): the wait, 4 s after the
     doubling, shrinks with it to 100 x the new overhead. */
  for (int i = 0; i < 3; ++i)
    tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  const int64_t low = atomic_load(&s.overhead_ns);
  assert_true(low > 10 * ms && low < 20 * ms);
  t += 100 * low + 1;
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t));
  tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  /* The machine has quietened: the probe measures 20 us; threads again at once, and the wait
     halves: the next contention is re-probed sooner. */
  const int64_t before = atomic_load(&s.reprobe_ns);
  assert_true(before > 1000 * ms);
  tsr__gemm_adapt_learn_parallel(&s, 1 * ms + 20000, 1 * ms, 1 * ms, flops, t);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1));
  assert_int_equal(atomic_load(&s.reprobe_ns), before / 2);
  t += 10 * ms;
  tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + before / 2));
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + before / 2 + 1));
}

/* The answer read without the clock (now < 0: the callers read it on one call in eight) and
   without claiming a probe (tsr__gemm_adapt_serial, the tiny lane's question): a re-probe that
   is due waits for a call with the time; a marked warm probe is seen either way; asking without
   claiming changes nothing, so the call that then asks tsr__gemm_adapt_parallel gets the probe;
   an expired mark is retired. */
static void test_adaptive_unread_clock(void **state) {
  (void)state;
  const int64_t ms = 1000000;
  const double flops = 1e8;
  tsr__gemm_adapt s;
  adapt_init(&s);
  /* Nothing learned: threads, with the clock or without. */
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, -1));
  assert_false(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  /* 1 ms a call on one thread, 10 ms of overhead on two: one thread. */
  const int64_t t = 1000 * ms;
  tsr__gemm_adapt_learn_serial(&s, 1 * ms, flops);
  tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, -1));
  assert_true(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  assert_true(tsr__gemm_adapt_serial(&s, flops, 2, t + 1 * ms));
  /* A call that saves more than twice the overhead: threads, no clock needed. */
  assert_true(tsr__gemm_adapt_parallel(&s, 100 * flops, 2, -1));
  assert_false(tsr__gemm_adapt_serial(&s, 100 * flops, 2, -1));
  /* The re-probe due after 50 ms: not without the clock; asked without claiming it, twice, it
     stays due and the wait unchanged; claimed once, the wait doubles. */
  const int64_t due = t + 50 * ms + 1;
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, -1));
  assert_true(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  const int64_t wait0 = atomic_load(&s.reprobe_ns);
  assert_false(tsr__gemm_adapt_serial(&s, flops, 2, due));
  assert_false(tsr__gemm_adapt_serial(&s, flops, 2, due));
  assert_int_equal(atomic_load(&s.reprobe_ns), wait0);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, due));
  assert_int_equal(atomic_load(&s.reprobe_ns), 100 * ms);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, due + 1));
  /* A warm probe marked (its window far ahead of the clock): seen with the clock unread, not
     taken by the question that does not claim, taken once by the one that does. */
  tsr__gemm_adapt_cold(&s, tsr__now_ns() + 3600 * 1000 * ms);
  assert_false(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  assert_false(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  assert_false(atomic_load(&s.warm_probe));
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, -1));
  assert_true(atomic_load(&s.warm_probe));
  assert_true(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, -1));
  /* A mark whose window has passed grants nothing and is retired by either question, so that
     the calls after it do not read the clock for it. */
  tsr__gemm_adapt_cold(&s, t); /* its window ended at t + 20 ms */
  assert_true(atomic_load(&s.warm_probe_before) > 0);
  assert_true(tsr__gemm_adapt_serial(&s, flops, 2, due + 2 * ms));
  assert_int_equal(atomic_load(&s.warm_probe_before), 0);
  tsr__gemm_adapt_cold(&s, t);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, due + 2 * ms));
  assert_int_equal(atomic_load(&s.warm_probe_before), 0);
  /* With the clock unread, a mark is judged on the clock, not granted: on the process clock, 1 s
     of overhead learned just now (no re-probe for 5 s) and a mark whose window ended ~1 s ago. */
  adapt_init(&s);
  const int64_t now = tsr__now_ns();
  tsr__gemm_adapt_learn_serial(&s, 1 * ms, flops);
  tsr__gemm_adapt_learn_parallel(&s, 1001 * ms, 1 * ms, 1 * ms, flops, now);
  tsr__gemm_adapt_cold(&s, now - 1000 * ms);
  assert_true(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  assert_int_equal(atomic_load(&s.warm_probe_before), 0);
}

/* The pool: every slot once, the caller alone finishes a job nobody joins, the full team
   joins when asked to wait for it, two callers at once (one runs alone), and a forked child
   starts its own pool. */
static void test_thread_pool(void **state) {
  (void)state;
  pool_job *j = calloc(3, sizeof *j);
  assert_non_null(j);
  /* One thread: the caller, slot 0. */
  assert_int_equal(tsr__gemm_pool_run(1, &tuning, pool_job_fn, &j[0]), 1);
  assert_int_equal(pool_job_defects(&j[0], 1, 1), 0);
  /* Full team of 4 (pool threads are started on demand). */
  memset(j, 0, sizeof *j);
  j[0].sleep_us = 2;
  tuning.full_team = true;
  int ran = tsr__gemm_pool_run(4, &tuning, pool_job_fn, &j[0]);
  assert_int_equal(ran, 4);
  assert_int_equal(pool_job_defects(&j[0], ran, 4), 0);
  /* Without waiting: whoever joins, every ticket exactly once. */
  tuning.full_team = false;
  for (int r = 0; r < 20; ++r) {
    memset(j, 0, sizeof *j);
    ran = tsr__gemm_pool_run(1 + r % 4, &tuning, pool_job_fn, &j[0]);
    assert_int_equal(pool_job_defects(&j[0], ran, 1 + r % 4), 0);
  }
  /* Two callers at once. */
  memset(j, 0, 2 * sizeof *j);
  j[0].sleep_us = j[1].sleep_us = 5;
  pthread_t th[2];
  for (int i = 0; i < 2; ++i)
    assert_int_equal(pthread_create(&th[i], NULL, pool_caller, &j[i]), 0);
  for (int i = 0; i < 2; ++i) {
    void *defects = NULL;
    assert_int_equal(pthread_join(th[i], &defects), 0);
    assert_int_equal((int)(intptr_t)defects, 0);
  }
  /* A forked child: its own pool, a full team, a correct threaded GEMM. */
  fflush(NULL);
  const pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    tuning.full_team = true;
    memset(&j[2], 0, sizeof j[2]);
    const int r = tsr__gemm_pool_run(3, &tuning, pool_job_fn, &j[2]);
    int bad = r != 3 || pool_job_defects(&j[2], r, 3) != 0;
    set_threads(2);
    bad += !tsr_test_native_gemm_ok(TSR_F64, 150, 140, 130, 4200, 4300, &tuning);
    _exit(bad ? 1 : 0);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  tuning.full_team = true;
  free(j);
}

/* The vendor path: correct results when built, TSR_ERR_UNSUPPORTED otherwise. */
static void test_vendor_path(void **state) {
  (void)state;
  for (int d = 0; d < 2; ++d) {
    gemm_case gc = {.dtype = dtypes[d],
                    .ta = true,
                    .tb = false,
                    .m = 45,
                    .n = 38,
                    .k = 27,
                    .alpha = 0.5,
                    .beta = 2.0,
                    .pad_a = 1,
                    .pad_c = 4,
                    .path = TSR_GEMM_VENDOR};
#if TSR_HAVE_VENDOR_BLAS
    TSR_ASSERT_OK(run_case(&gc, 5000));
    gc.ta = false;
    gc.tb = true;
    gc.beta = 0.0;
    gc.nan_c = true;
    TSR_ASSERT_OK(run_case(&gc, 5001));
#else
    TSR_ASSERT_STATUS(run_case(&gc, 5000), TSR_ERR_UNSUPPORTED, "vendor");
#endif
  }
}

/* ---------------------------------------------------------------- default rule -------- */

/* A CPU for tsr__gemm_choose: vendor, family, model, ISAs, L1/L2/L3 in KiB. */
static tsr__gemm_cpu fake_cpu(const char *vendor, int family, int model, bool avx2, bool avx512,
                              int64_t l1k, int64_t l2k, int64_t l3k) {
  tsr__gemm_cpu c;
  memset(&c, 0, sizeof c);
  snprintf(c.vendor, sizeof c.vendor, "%s", vendor);
  c.family = family;
  c.model = model;
  c.avx2 = avx2;
  c.avx512 = avx512;
  const int64_t kib[3] = {l1k, l2k, l3k};
  for (int i = 0; i < 3; ++i)
    c.cache[i] = (tsr__cpu_cache){kib[i] * 1024, i == 0 ? 8 : 16, 64};
  return c;
}

/* Every configuration of a rule choice: the kernel of `isa` for both dtypes and thread counts,
   and blocks that fit the caches the CPU reported (the B micro-panel, NR x KC, within the L1
   unless KC sits at its floor of 128; the A block, MC x KC, within half the L2; the B panel,
   KC x NC, within a quarter of the L3), multiples of the register block. */
static void assert_rule_fits(const tsr__gemm_cpu *cpu, const tsr__gemm_choice *ch,
                             const char *isa) {
  for (int d = 0; d < 2; ++d)
    for (int t = 0; t < 2; ++t) {
      const tsr__gemm_config *c = &ch->cfg[d][t];
      const int64_t s = tsr__dtype_size(dtypes[d]);
      assert_string_equal(c->ker->isa, isa);
      assert_int_equal(c->ker->dtype, dtypes[d]);
      assert_string_equal(c->source, "rule");
      assert_true(c->kc >= 128 && c->kc <= 512 && c->kc % 8 == 0);
      if (c->kc > 128) assert_true(c->kc * c->ker->nr * s <= cpu->cache[0].size);
      assert_true(c->mc % c->ker->mr == 0 && c->mc >= c->ker->mr);
      if (c->mc > c->ker->mr) assert_true(c->mc * c->kc * s <= cpu->cache[1].size / 2);
      assert_true(c->nc % c->ker->nr == 0 && c->nc >= c->ker->nr && c->nc <= 4096);
      if (c->nc > c->ker->nr) assert_true(c->kc * c->nc * s <= cpu->cache[2].size / 4);
      /* Not far below what fits either: one more KC step, MR rows or NR columns would not. */
      if (c->kc < 512 && c->kc > 128)
        assert_true((c->kc + 8) * c->ker->nr * s > cpu->cache[0].size);
      assert_true((c->mc + c->ker->mr) * c->kc * s > cpu->cache[1].size / 2);
      assert_memory_equal(&ch->cfg[d][0].kc, &ch->cfg[d][1].kc, 3 * sizeof(int64_t));
    }
}

/* The default for CPUs without a measured row (tsr__gemm_choose on CPUs described here, not
   this machine): the widest ISA for both dtypes, blocks from the reported caches; measured rows
   keep their figures; TSR_CPU_KERNEL-style requests. */
static void test_default_rule(void **state) {
  (void)state;
  tsr__gemm_choice ch;
  /* No vector ISA (or a non-x86 build): the portable kernels. */
  tsr__gemm_cpu plain = fake_cpu("unknown", 0, 0, false, false, 32, 512, 8192);
  assert_true(tsr__gemm_choose(&plain, NULL, &ch));
  assert_rule_fits(&plain, &ch, "portable");
#if defined(TSR__GEMM_X86)
  /* An unseen AVX-512 CPU (a Skylake-X CPUID, which has no row, and an invented AMD family):
     the AVX-512 kernels for f32 and f64. */
  tsr__gemm_cpu skx = fake_cpu("GenuineIntel", 6, 0x55, true, true, 32, 1024, 39424);
  assert_true(tsr__gemm_choose(&skx, "auto", &ch));
  assert_rule_fits(&skx, &ch, "avx512");
  assert_string_equal(ch.uarch, "unknown");
  assert_string_equal(ch.cfg[0][0].ker->name, "avx512-14x32");
  assert_int_equal(ch.cfg[1][0].kc, 256); /* 32 KiB / (16 * 8) */
  assert_int_equal(ch.cfg[1][0].mc, 252); /* 512 KiB / (256 * 8) = 256, rounded to 14 */
  tsr__gemm_cpu amd = fake_cpu("AuthenticAMD", 0x1B, 0x20, true, true, 48, 2048, 131072);
  assert_true(tsr__gemm_choose(&amd, "", &ch));
  assert_rule_fits(&amd, &ch, "avx512");
  assert_int_equal(ch.cfg[0][0].kc, 384); /* 48 KiB / (32 * 4) */
  /* The blocks follow the caches, not another CPU's row: a bigger L2 gives a bigger MC. */
  tsr__gemm_choice small;
  tsr__gemm_cpu amd_small = amd;
  amd_small.cache[1].size /= 4;
  assert_true(tsr__gemm_choose(&amd_small, NULL, &small));
  assert_rule_fits(&amd_small, &small, "avx512");
  assert_true(small.cfg[1][0].mc < ch.cfg[1][0].mc);
  /* The small-path rule of a CPU with no row: its L2, per dtype and thread count. */
  for (int d = 0; d < 2; ++d)
    for (int t = 0; t < 2; ++t) {
      assert_int_equal(ch.cfg[d][t].small_bytes, amd.cache[1].size);
      assert_int_equal(small.cfg[d][t].small_bytes, amd_small.cache[1].size);
    }
  /* An unseen AVX2-only CPU (a Zen 3 CPUID: no measured row): the AVX2 kernels. */
  tsr__gemm_cpu zen3 = fake_cpu("AuthenticAMD", 0x19, 0x21, true, false, 32, 512, 32768);
  assert_true(tsr__gemm_choose(&zen3, NULL, &ch));
  assert_rule_fits(&zen3, &ch, "avx2");
  assert_string_equal(ch.uarch, "unknown");
  /* Asking for AVX-512 there: not met, the widest it runs. */
  assert_false(tsr__gemm_choose(&zen3, "avx512", &ch));
  assert_rule_fits(&zen3, &ch, "avx2");
  /* The measured Zen 4 row (issue 31): AVX-512 for f32 with KC 1024 / MC 56 on one thread and
     KC 512 on several; f64 KC 256 / MC 224 on both. */
  tsr__gemm_cpu zen4 = fake_cpu("AuthenticAMD", 0x19, 0x11, true, true, 32, 1024, 32768);
  assert_true(tsr__gemm_choose(&zen4, NULL, &ch));
  assert_string_equal(ch.uarch, "zen4");
  assert_string_equal(ch.cfg[0][0].ker->name, "avx512-14x32");
  assert_string_equal(ch.cfg[0][0].source, "registry");
  assert_int_equal(ch.cfg[0][0].kc, 1024);
  assert_int_equal(ch.cfg[0][0].mc, 56);
  assert_int_equal(ch.cfg[0][1].kc, 512);
  assert_int_equal(ch.cfg[0][1].mc, 56);
  assert_string_equal(ch.cfg[1][0].ker->name, "avx512-14x16");
  assert_int_equal(ch.cfg[1][0].kc, 256);
  assert_int_equal(ch.cfg[1][1].mc, 224);
  /* The measured Emerald Rapids row (issue 31): deep KC, NC within half the 2 MiB L2 for
     shallow slices, and its own small-path rule (96 KiB, not the L2). */
  tsr__gemm_cpu emr = fake_cpu("GenuineIntel", 6, 0xCF, true, true, 48, 2048, 307200);
  assert_true(tsr__gemm_choose(&emr, NULL, &ch));
  assert_string_equal(ch.uarch, "spr");
  assert_string_equal(ch.cfg[0][0].ker->name, "avx512-14x32-pb");
  assert_string_equal(ch.cfg[1][1].ker->name, "avx512-14x16-pb");
  assert_int_equal(ch.cfg[0][0].kc, 1024);
  assert_int_equal(ch.cfg[0][0].nc, 1024);
  assert_int_equal(ch.cfg[1][0].kc, 512);
  assert_int_equal(ch.cfg[1][0].mc, 224);
  assert_int_equal(ch.cfg[1][1].nc, 512);
  for (int d = 0; d < 2; ++d)
    for (int t = 0; t < 2; ++t)
      assert_int_equal(ch.cfg[d][t].small_bytes, 96 << 10);
  /* The same CPUID with AVX-512 hidden (a hypervisor): the row does not apply; the rule. */
  zen4.avx512 = false;
  assert_true(tsr__gemm_choose(&zen4, NULL, &ch));
  assert_rule_fits(&zen4, &ch, "avx2");
  assert_string_equal(ch.uarch, "unknown");
  /* Another ISA asked for on a measured CPU: the rule's blocks for that ISA's kernel. */
  zen4.avx512 = true;
  assert_true(tsr__gemm_choose(&zen4, "avx2", &ch));
  assert_rule_fits(&zen4, &ch, "avx2");
#endif
}

/* Kernel selection: an unknown or unavailable request falls back to the best kernel. */
static void test_kernel_selection(void **state) {
  (void)state;
  const char *orig = getenv("TSR_CPU_KERNEL");
  char saved[32] = {0};
  if (orig) snprintf(saved, sizeof saved, "%s", orig);
  setenv("TSR_CPU_KERNEL", "no-such-isa", 1);
  assert_false(tsr__gemm_registry_reload());
  assert_non_null(cfg_of(TSR_F32, 1).ker);
  assert_true(tsr__gemm_isa_available(tsr__omp_gemm_kernel_name(TSR_F64)));
  check_all_trans(TSR_F64, 20, 21, 22, 6000);
  setenv("TSR_CPU_KERNEL", "portable", 1);
  assert_true(tsr__gemm_registry_reload());
  assert_string_equal(tsr__omp_gemm_kernel_name(TSR_F32), "portable");
  assert_string_equal(cfg_of(TSR_F64, 2).ker->isa, "portable");
  if (orig)
    setenv("TSR_CPU_KERNEL", saved, 1);
  else
    unsetenv("TSR_CPU_KERNEL");
  tsr__gemm_registry_reload();
  assert_string_equal(tsr__omp_gemm_kernel_name(TSR_F64), cfg_of(TSR_F32, 1).ker->isa);
  assert_string_equal(tsr__omp_gemm_kernel_name(TSR_I32), "none");
  /* TSR_CPU_GEMM_BLOCKS replaces the cache blocks (rounded to the register block). */
  setenv("TSR_CPU_GEMM_BLOCKS", "100,50,70", 1);
  tsr__gemm_registry_reload();
  const tsr__gemm_config c = cfg_of(TSR_F64, 1);
  assert_int_equal(c.kc, 100);
  assert_int_equal(c.mc, 50 / c.ker->mr * c.ker->mr);
  assert_int_equal(c.nc, 70 / c.ker->nr * c.ker->nr);
  assert_string_equal(c.source, "TSR_CPU_GEMM_BLOCKS");
  check_all_trans(TSR_F64, 61, 75, 230, 6100);
  unsetenv("TSR_CPU_GEMM_BLOCKS");
  tsr__gemm_registry_reload();
}

/* A public function's name, as the API context, is what the backend's errors carry (the one
   error rule, core/internal.h); and no registered kernel's tile exceeds the macro-kernel's
   edge tile. */
static tsr_status tsr_fake_public_gemm(const tsr__gemm_args *g) {
  TSR_API_ENTRY();
  return tsr__omp_gemm(TSR_CPU, g);
}

static void test_error_names_caller(void **state) {
  (void)state;
  float x[4] = {1, 2, 3, 4};
  tsr__gemm_args g = {.dtype = TSR_I32,
                      .m = 2,
                      .n = 2,
                      .k = 2,
                      .alpha = 1,
                      .a = x,
                      .lda = 2,
                      .b = x,
                      .ldb = 2,
                      .c = x,
                      .ldc = 2,
                      .path = TSR_GEMM_NATIVE};
  TSR_ASSERT_STATUS(tsr_fake_public_gemm(&g), TSR_ERR_UNSUPPORTED, "dtype");
  assert_int_equal(strncmp(tsr_last_error(), "tsr_fake_public_gemm: ", 22), 0);
  assert_true(tsr__gemm_max_tile() <= TSR__GEMM_MAX_TILE);
}

/* Whether this run tests kernel k's ISA (CTest runs the program once per ISA, naming it in
   TSR_CPU_KERNEL; unset or auto: every one). */
static bool isa_under_test(const tsr__gemm_kernel *k) {
  const char *want = getenv("TSR_CPU_KERNEL");
  return !want || !*want || strcmp(want, "auto") == 0 || strcmp(want, k->isa) == 0;
}

/* Every kernel this CPU runs, through overrides with small and odd cache blocks and every
   thread grain: ragged edges of every block, 1-3 threads, all transposes. */
static void test_kernel_overrides(void **state) {
  (void)state;
  tuning.small_mnk = 0; /* the packed path's blocks (test_small_path: the other) */
  for (int d = 0; d < 2; ++d) {
    const tsr__gemm_kernel *ks[8];
    const int nk = tsr__gemm_kernel_list(dtypes[d], ks, 8);
    for (int i = 0; i < nk; ++i) {
      if (!isa_under_test(ks[i])) continue;
      const int mr = ks[i]->mr, nr = ks[i]->nr;
      const tsr__gemm_config cfgs[] = {{ks[i], 8, mr, nr, 1, "override"},
                                       {ks[i], 20, 2 * mr, 3 * nr, 2, "override"},
                                       {ks[i], 96, 5 * mr, 7 * nr, 8, "override"}};
      for (int c = 0; c < 3; ++c) {
        tuning.config[dtypes[d] == TSR_F32 ? 0 : 1] = &cfgs[c];
        const tsr__gemm_config got = cfg_of(dtypes[d], 2);
        assert_ptr_equal(got.ker, ks[i]);
        /* Per call: a call without this tuning keeps the library's configuration. */
        tsr__gemm_config lib;
        tsr__gemm_config_get(dtypes[d], 2, NULL, &lib);
        assert_string_not_equal(lib.source, "override");
        assert_int_equal(got.kc, cfgs[c].kc);
        assert_int_equal(got.grain, cfgs[c].grain);
        for (int t = 1; t <= 3; ++t) {
          set_threads(t);
          check_all_trans(dtypes[d], 3 * mr + 1, 4 * nr + 3, 2 * cfgs[c].kc + 5,
                          8000 + (uint64_t)(i * 100 + c * 10 + t));
          check_all_trans(dtypes[d], 1, nr + 1, 3, 8500 + (uint64_t)(i * 100 + c * 10 + t));
          check_all_trans(dtypes[d], 2 * mr - 1, 1, cfgs[c].kc, 8700 + (uint64_t)i);
        }
      }
    }
    tuning.config[dtypes[d] == TSR_F32 ? 0 : 1] = NULL;
  }
  tuning.small_mnk = -1;
}

/* The tiny lane's bounds (tsr__omp_gemm_tiny, the CBLAS drop-in's way in): it takes a call
   whose m*n*k fits the L2 and the LLC and whose op(A) and C are within the small-path rule,
   whatever that rule (a row may set one below the L2: Sapphire/Emerald Rapids' 96 KiB had
   shrunk the lane to m*n*k within the rule, leaving dgemm 24^3 and 32^3 on the general path);
   not one whose op(A) is past the rule; and computes what the reference does. */
/* C (m x n) = A (m x k) B (k x n), row-major and contiguous, alpha 1, beta 0, native path. */
static tsr__gemm_args tiny_lane_args(tsr_dtype dt, int64_t m, int64_t n, int64_t k, const void *a,
                                     const void *b, void *c) {
  return (tsr__gemm_args){.dtype = dt,
                          .m = m,
                          .n = n,
                          .k = k,
                          .alpha = 1,
                          .beta = 0,
                          .a = a,
                          .lda = k,
                          .b = b,
                          .ldb = n,
                          .c = c,
                          .ldc = n,
                          .path = TSR_GEMM_NATIVE};
}

/* Teaches the process's adaptive thread count a parallel call's overhead (ovh_ns; at most 1000
   ns is learned as 1000) and one thread's time per flop (ns_per_flop), each replacing what it
   held: a fast parallel call replaces a mean four times higher, four serial calls move the mean
   of two to within 7 % of theirs. A warm probe that the first call marks (pool threads woken
   since the last call learned) is over after the wait. */
static void teach_adaptive(int64_t ovh_ns, double ns_per_flop) {
  const double flops = 1e6;
  const int64_t work = (int64_t)(flops * ns_per_flop);
  tsr__gemm_learn_parallel(work + 1000, work, work, flops);
  const struct timespec past_warm = {0, 30000000};
  nanosleep(&past_warm, NULL);
  tsr__gemm_learn_parallel(work + ovh_ns, work, work, flops);
  for (int i = 0; i < 4; ++i)
    tsr__gemm_learn_serial(work, flops);
}

static void test_tiny_lane_bounds(void **state) {
  (void)state;
  set_threads(1);
  const tsr__cpu_facts *f = tsr__cpu_facts_get();
  double cache = (double)f->cache[1].size;
  if ((double)f->cache[2].size < cache) cache = (double)f->cache[2].size;
  int tested = 0;
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dt = dtypes[d];
    const size_t es = dt == TSR_F32 ? 4 : 8;
    const tsr__gemm_serial *ser = tsr__gemm_serial_get(dt);
    if (ser->cfg.ker->small == NULL) continue;
    const double rule = (double)ser->cfg.small_bytes;
    /* 32^3: operands of 4-8 KiB, m*n*k of 128-256 KiB. */
    const int64_t n = 32;
    if ((double)(n * n * n) * (double)es > cache || (double)(n * n) * (double)es > rule) continue;
    double *ha = malloc((size_t)(n * n) * sizeof *ha), *hb = malloc((size_t)(n * n) * sizeof *hb);
    char *a = malloc((size_t)(n * n) * es), *b = malloc((size_t)(n * n) * es);
    char *c = malloc((size_t)(n * n) * es);
    assert_non_null(ha);
    assert_non_null(hb);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    tsr_test_fill_random(ha, (size_t)(n * n), 9100 + (uint64_t)d);
    tsr_test_fill_random(hb, (size_t)(n * n), 9200 + (uint64_t)d);
    for (int64_t i = 0; i < n * n; ++i) {
      store(dt, a, (size_t)i, ha[i]);
      store(dt, b, (size_t)i, hb[i]);
      ha[i] = load(dt, a, (size_t)i);
      hb[i] = load(dt, b, (size_t)i);
    }
    double *ref = malloc((size_t)(n * n) * sizeof *ref),
           *got = malloc((size_t)(n * n) * sizeof *got);
    assert_non_null(ref);
    assert_non_null(got);
    /* op(B) = B and B^T: B^T's strips are packed on the stack (tsr__gemm_tiny_packed). */
    for (int tb = 0; tb < 2; ++tb) {
      tsr__gemm_args g = tiny_lane_args(dt, n, n, n, a, b, c);
      g.trans_b = tb;
      memset(c, 0xff, (size_t)(n * n) * es); /* NaN: beta = 0 must not read it */
      assert_true(tsr__omp_gemm_tiny(&g));
      tsr_test_ref_gemm_into(0, tb, n, n, n, 1.0, ha, hb, 0.0, NULL, ref);
      for (int64_t i = 0; i < n * n; ++i)
        got[i] = load(dt, c, (size_t)i);
      assert_true(tsr_test_rel_error(got, ref, (size_t)(n * n)) <= tsr_test_tol(dt, n));
    }
    free(ref);
    free(got);
    tsr__gemm_args g;
    /* B^T whose k x NR strip outgrows the stack's 16 KiB (and no dot products: m > 64), with
       every other bound met: declined, nothing done. */
    const int64_t nr = ser->cfg.ker->nr, sk = 16384 / (nr * (int64_t)es) + 1, sm = 65;
    if ((double)(sm * sk) * (double)es <= rule && (double)(sm * 2 * sk) * (double)es <= cache) {
      char *sa = malloc((size_t)(sm * sk) * es), *sb = malloc((size_t)(2 * sk) * es);
      assert_non_null(sa);
      assert_non_null(sb);
      g = tiny_lane_args(dt, sm, 2, sk, sa, sb, c);
      g.trans_b = true;
      g.ldb = sk;
      assert_false(tsr__omp_gemm_tiny(&g)); /* answered before any operand is read */
      free(sa);
      free(sb);
    }
    /* 64^3 (m*n*k = TSR__GEMM_SERIAL_MNK, a call that may run on several threads): tiny on
       one thread, right against the reference; with two threads available, tiny when the
       process's adaptive thread count surely answers one thread, else left to the general path
       (which asks it afresh). */
    const int64_t w = 64;
    if ((double)(w * w * w) * (double)es <= cache && (double)(w * w) * (double)es <= rule) {
      double *wa = malloc((size_t)(w * w) * sizeof *wa), *wb = malloc((size_t)(w * w) * sizeof *wb);
      double *wr = malloc((size_t)(w * w) * sizeof *wr);
      char *xa = malloc((size_t)(w * w) * es), *xb = malloc((size_t)(w * w) * es);
      char *xc = malloc((size_t)(w * w) * es);
      assert_true(wa && wb && wr && xa && xb && xc);
      tsr_test_fill_random(wa, (size_t)(w * w), 9300 + (uint64_t)d);
      tsr_test_fill_random(wb, (size_t)(w * w), 9400 + (uint64_t)d);
      for (int64_t i = 0; i < w * w; ++i) {
        store(dt, xa, (size_t)i, wa[i]);
        store(dt, xb, (size_t)i, wb[i]);
        wa[i] = load(dt, xa, (size_t)i);
        wb[i] = load(dt, xb, (size_t)i);
      }
      g = tiny_lane_args(dt, w, w, w, xa, xb, xc);
      tsr_test_ref_gemm_into(0, 0, w, w, w, 1.0, wa, wb, 0.0, NULL, wr);
      for (int run = 0; run < 3; ++run) {
#if defined(_OPENMP)
        if (run == 0) {
          /* Threads taught to cost the process 1 s a call against a serial rate that they
             would save ~0.3 s of: one thread, surely (no probe due for seconds). */
          set_threads(2);
          teach_adaptive(1000000000, 1000.0);
        } else if (run == 1) {
          /* Taught to cost nothing: two threads pay, and the lane leaves the call. */
          teach_adaptive(0, 1000.0);
          assert_false(tsr__omp_gemm_tiny(&g)); /* answered before any operand is read */
          set_threads(1);
          continue;
        }
#else
        if (run < 2) continue;
#endif
        memset(xc, 0xff, (size_t)(w * w) * es);
        assert_true(tsr__omp_gemm_tiny(&g));
        for (int64_t i = 0; i < w * w; ++i)
          wa[i] = load(dt, xc, (size_t)i);
        assert_true(tsr_test_rel_error(wa, wr, (size_t)(w * w)) <= tsr_test_tol(dt, w));
      }
      free(wa);
      free(wb);
      free(wr);
      free(xa);
      free(xb);
      free(xc);
    }
    /* op(A) one row past the rule (k = 8, n = 8): not tiny, whatever m*n*k is. */
    const int64_t kk = 8, m = (int64_t)(rule / (double)(kk * (int64_t)es)) + 1;
    g = tiny_lane_args(dt, m, kk, kk, a, b, c);
    assert_false(tsr__omp_gemm_tiny(&g)); /* answered before any operand is read */
    free(ha);
    free(hb);
    free(a);
    free(b);
    free(c);
    tested++;
  }
  set_threads(2);
  if (tested == 0) skip();
}

/* The progress hook (core/internal.h; SUMMA's broadcasts progress from inside the local
   multiply): the packed path calls it between its units of work, only from the calling thread,
   no sooner than its interval allows, never once it is unset, and the product is unchanged. */
typedef struct hook_probe {
  pthread_t caller;
  int calls, foreign;
} hook_probe;

static void hook_count(void *ctx) {
  hook_probe *p = ctx;
  p->calls++;
  if (!pthread_equal(pthread_self(), p->caller)) p->foreign++;
}

static void test_progress_hook(void **state) {
  (void)state;
  tuning.small_mnk = 0; /* the packed path, in units */
  for (int t = 1; t <= 2; ++t) {
    set_threads(t);
    for (int d = 0; d < 2; ++d) {
      /* 301 rows: at least two row blocks (MC <= 224 on every row of the registry). */
      const gemm_case gc = {.dtype = dtypes[d],
                            .m = 301,
                            .n = 257,
                            .k = 190,
                            .alpha = 1.5,
                            .beta = 0.5,
                            .path = TSR_GEMM_NATIVE};
      for (int iv = 0; iv < 2; ++iv) {
        hook_probe p = {.caller = pthread_self()};
        tsr__progress_hook h = {.fn = hook_count, .ctx = &p, .interval_ns = iv ? INT64_MAX / 2 : 0};
        assert_null(tsr__progress_set(&h));
        check(gc, 7100 + (uint64_t)(t * 4 + d * 2 + iv));
        assert_ptr_equal(tsr__progress_set(NULL), &h);
        assert_int_equal(p.foreign, 0);
        assert_int_equal(h.calls, p.calls);
        /* One thread polls after each of its units: several calls, or one with an interval
           longer than the call. With two, the pool thread may take every unit. */
        if (iv == 0 && t == 1) assert_true(p.calls >= 2);
        if (iv == 1) assert_true(p.calls <= 1);
        if (iv == 1 && t == 1) assert_int_equal(p.calls, 1);
      }
      hook_probe none = {.caller = pthread_self()};
      tsr__progress_hook h = {.fn = hook_count, .ctx = &none};
      tsr__progress_set(&h);
      tsr__progress_set(NULL); /* unset before the call */
      check(gc, 7200 + (uint64_t)(t * 2 + d));
      assert_int_equal(none.calls, 0);
    }
  }
  tuning.small_mnk = -1;
  set_threads(2);
}

/* Every kernel's packing routines (the ISA-specific ones: in-register transposes, masked k
   tails, overlapping stores) against the portable routines of gemm_pack.c, element for element:
   op(A) and op(B) stored both ways, every partial micro-panel height and width, k from 1 past
   two vector chunks, padded leading dimensions, random values; and nothing written past the
   packed block (a sentinel after it). op(B) stored transposed also into panels of NR/2 columns
   (one vector: the small path's narrow strips). The portable routines define the layout
   (gemm_pack.c). */
static void test_packing_matches_portable(void **state) {
  (void)state;
  int tested = 0;
  for (int d = 0; d < 2; ++d) {
    const tsr__gemm_kernel *ks[8];
    const int nk = tsr__gemm_kernel_list(dtypes[d], ks, 8);
    const bool f32 = dtypes[d] == TSR_F32;
    const size_t es = f32 ? 4 : 8;
    for (int i = 0; i < nk; ++i) {
      if (!isa_under_test(ks[i])) continue;
      ++tested;
      const int mr = ks[i]->mr, nr = ks[i]->nr;
      const int64_t rows[] = {1,          mr - 1, mr,     mr + 1, 2 * mr,
                              3 * mr + 2, nr / 2, nr - 1, nr,     nr + 3};
      const int64_t ks_[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 33, 40};
      for (size_t ir = 0; ir < sizeof rows / sizeof rows[0]; ++ir)
        for (size_t ik = 0; ik < sizeof ks_ / sizeof ks_[0]; ++ik)
          for (int side = 0; side < 3; ++side) /* A (MR panels), B (NR panels), B (NR / 2) */
            for (int tr = 0; tr < 2; ++tr) {
              const int wb = side == 2 ? nr / 2 : nr; /* B's panel width */
              const int64_t len = rows[ir], kc = ks_[ik], step = side ? wb : mr;
              if (len < 1 || (side == 2 && !tr)) continue;
              /* Stored as (len x kc) when the packed rows are contiguous (A not transposed,
                 B transposed), else (kc x len); leading dimension 3 past the width. */
              const bool rows_contig = side == 0 ? !tr : tr;
              const int64_t ld = (rows_contig ? kc : len) + 3;
              const int64_t stored = (rows_contig ? len : kc) * ld;
              const int64_t packed = (len + step - 1) / step * step * kc;
              char *src = malloc((size_t)stored * es);
              /* 64-byte aligned, as the driver's buffers (the AVX-512 copies store aligned). */
              const size_t pbytes = ((size_t)(packed + 16) * es + 63) / 64 * 64;
              char *want = aligned_alloc(64, pbytes);
              char *got = aligned_alloc(64, pbytes);
              assert_non_null(src);
              assert_non_null(want);
              assert_non_null(got);
              double *vals = malloc((size_t)stored * sizeof *vals);
              assert_non_null(vals);
              tsr_test_fill_random(vals, (size_t)stored,
                                   9500 + (uint64_t)(ir * 977 + ik * 31 + side * 7 + tr));
              for (int64_t e = 0; e < stored; ++e)
                store(dtypes[d], src, (size_t)e, vals[e]);
              free(vals);
              /* The same sentinel bytes past the packed block in both, and garbage inside
                 `got` (every element must be written, padding as zeros). */
              memset(want, 0x5A, (size_t)(packed + 16) * es);
              memset(got, 0x5A, (size_t)(packed + 16) * es);
              if (f32) {
                const float *s = (const float *)(const void *)src;
                if (side == 0) {
                  tsr__gemm_pack_a_f32(mr, len, kc, s, ld, tr, (float *)(void *)want);
                  ks[i]->pack_a_f32(mr, len, kc, s, ld, tr, (float *)(void *)got);
                } else {
                  tsr__gemm_pack_b_f32(wb, kc, len, s, ld, tr, (float *)(void *)want);
                  ks[i]->pack_b_f32(wb, kc, len, s, ld, tr, (float *)(void *)got);
                }
              } else {
                const double *s = (const double *)(const void *)src;
                if (side == 0) {
                  tsr__gemm_pack_a_f64(mr, len, kc, s, ld, tr, (double *)(void *)want);
                  ks[i]->pack_a_f64(mr, len, kc, s, ld, tr, (double *)(void *)got);
                } else {
                  tsr__gemm_pack_b_f64(wb, kc, len, s, ld, tr, (double *)(void *)want);
                  ks[i]->pack_b_f64(wb, kc, len, s, ld, tr, (double *)(void *)got);
                }
              }
              if (memcmp(want, got, (size_t)(packed + 16) * es) != 0) {
                int64_t e = 0;
                while (memcmp(want + e * es, got + e * es, es) == 0)
                  ++e;
                fail_msg("%s pack_%c (%s, panels of %d) %s: %lld x %lld: element %lld of %lld "
                         "differs%s",
                         ks[i]->name, side ? 'b' : 'a', tr ? "transposed" : "as stored", step,
                         f32 ? "f32" : "f64", (long long)len, (long long)kc, (long long)e,
                         (long long)packed, e >= packed ? " (written past the packed block)" : "");
              }
              free(src);
              free(want);
              free(got);
            }
    }
  }
  assert_true(tested > 0);
}

/* The small-matrix path (no packing) of every kernel this CPU runs that has one: every row
   count of a tile up to 2*MR+3, masked last vectors (n around one and two vectors), k from 1
   to past L1, all transposes, beta 0 / 1 / 0.5, padded leading dimensions, NaN C with beta 0;
   and the driver's choice of path. */
static void test_small_path(void **state) {
  (void)state;
  set_threads(1);
  int tested = 0;
  for (int d = 0; d < 2; ++d) {
    const tsr__gemm_kernel *ks[8];
    const int nk = tsr__gemm_kernel_list(dtypes[d], ks, 8);
    for (int i = 0; i < nk; ++i) {
      if (!isa_under_test(ks[i])) continue;
      /* The library's own configuration: the last kernel's cf (below) ended with its
         iteration. */
      tuning.config[dtypes[d] == TSR_F32 ? 0 : 1] = NULL;
      const tsr__gemm_config def = cfg_of(dtypes[d], 1);
      const tsr__gemm_config cf = {ks[i],     def.kc,     def.mc,         def.nc,
                                   def.grain, "override", def.small_bytes};
      tuning.config[dtypes[d] == TSR_F32 ? 0 : 1] = &cf;
      const int mr = ks[i]->mr, nr = ks[i]->nr, lanes = nr / 2;
      tsr__gemm_args probe = {
          .dtype = dtypes[d], .m = 3, .n = 3, .k = 3, .alpha = 1, .tuning = &tuning};
      tuning.small_mnk = INT64_MAX;
      assert_int_equal(tsr__gemm_small_path(&probe, &cf), ks[i]->small != NULL);
      if (ks[i]->small == NULL) continue;
      ++tested;
      /* Row counts: the tile heights of op(A) = A (at most TSR__SM_MRS rows a tile,
         gemm_small_impl.h) and of A^T (up to MR), split into near-equal blocks. */
      const int64_t ms[] = {1, 2, mr - 1, mr, mr + 1, 2 * mr + 3, 4, 9, 20, 25};
      const int64_t ns[] = {1, lanes - 1, lanes, lanes + 1, nr - 1, nr, nr + 1, 2 * nr + 5};
      const int64_t kk[] = {1, 7, 301};
      for (int a = 0; a < 10; ++a)
        for (int b = 0; b < 8; ++b)
          for (int c = 0; c < 3; ++c)
            check_all_trans(dtypes[d], ms[a], ns[b], kk[c],
                            9000 + (uint64_t)(i * 1000 + a * 100 + b * 10 + c));
      for (int t = 0; t < 4; ++t)
        check((gemm_case){.dtype = dtypes[d],
                          .ta = t & 1,
                          .tb = (t >> 1) & 1,
                          .m = mr + 3,
                          .n = nr + lanes / 2 + 1,
                          .k = 17,
                          .alpha = -1.25,
                          .beta = 0.0,
                          .pad_c = 3,
                          .nan_c = true,
                          .path = TSR_GEMM_NATIVE},
              9900 + (uint64_t)t);
      /* B's rows 4 KiB apart: the strips are packed (tsr__gemm_small_pack_b), in place for
         one row block. */
      const int64_t ld4k = 4096 / (dtypes[d] == TSR_F32 ? 4 : 8), n4 = 2 * nr + 5;
      for (int r = 0; r < 2; ++r) {
        const gemm_case gc = {.dtype = dtypes[d],
                              .m = r ? 3 * mr + 2 : mr - 1,
                              .n = n4,
                              .k = 23,
                              .alpha = 0.5,
                              .beta = 1.0,
                              .pad_b = ld4k - n4,
                              .path = TSR_GEMM_NATIVE};
        tsr__gemm_args pa = {
            .dtype = dtypes[d], .m = gc.m, .n = n4, .k = 23, .ldb = ld4k, .tuning = &tuning};
        assert_int_equal(tsr__gemm_small_pack_b(&pa, mr), r == 1);
        check(gc, 9980 + (uint64_t)r);
      }
      /* k blocks (tsr__gemm_small_kblock; in production when op(B) exceeds L2), forced to 7
         here: several passes over C with beta applied once, B in place with its next strips
         prefetched, or B^T's strips packed block by block; k short of, at, just past and far
         past one block. */
      tuning.small_kblock = 7;
      const int64_t kbs[] = {6, 7, 8, 301};
      for (int a = 0; a < 6; a += 2)
        for (int b = 1; b < 8; b += 2)
          for (int c = 0; c < 4; ++c)
            check_all_trans(dtypes[d], ms[a], ns[b], kbs[c],
                            9500 + (uint64_t)(i * 1000 + a * 100 + b * 10 + c));
      tuning.small_kblock = 0;
      /* The default k block: op(B) past L2, for one row block and for several. */
      {
        const int64_t es = (int64_t)tsr__dtype_size(dtypes[d]), nb = 2 * nr + 5;
        const int64_t kl = (int64_t)tsr__cpu_facts_get()->cache[1].size / (nb * es) + 37;
        tsr__gemm_args pb = {
            .dtype = dtypes[d], .m = 1, .n = nb, .k = kl, .ldb = nb, .tuning = &tuning};
        assert_true(tsr__gemm_small_kblock(&pb, mr) < kl);
        assert_true(tsr__gemm_small_kblock(&pb, mr) >= 1);
        for (int r = 0; r < 2; ++r) {
          const int64_t mm = r ? 2 * mr + 1 : 1;
          const gemm_case gc = {.dtype = dtypes[d],
                                .m = mm,
                                .n = nb,
                                .k = kl,
                                .alpha = -0.5,
                                .beta = 0.5,
                                .pad_b = 1,
                                .pad_c = 2,
                                .path = TSR_GEMM_NATIVE};
          check(gc, 9990 + (uint64_t)r);
        }
      }
      /* On 2 and 3 threads (m*n*k above the serial threshold): units of column chunks, of
         row chunks, and a deep k. */
      for (int t = 2; t <= 3; ++t) {
        set_threads(t);
        check_all_trans(dtypes[d], 70, 9 * nr + 5, 40, 9950 + (uint64_t)(i * 10 + t));
        check_all_trans(dtypes[d], 60 * mr + 1, nr + 3, 50, 9960 + (uint64_t)(i * 10 + t));
        check_all_trans(dtypes[d], 2 * mr + 1, 2 * nr - 1, 2000, 9970 + (uint64_t)(i * 10 + t));
      }
      set_threads(1);
      /* The default rule: op(A) and C within L2, or a single NR-column strip. */
      tuning.small_mnk = -1;
      const int64_t big = 4096; /* 4096 x 4096 elements of A: 64 MiB f32 */
      probe = (tsr__gemm_args){
          .dtype = dtypes[d], .m = 100, .n = 100, .k = 100, .alpha = 1, .tuning = &tuning};
      assert_true(tsr__gemm_small_path(&probe, &cf));
      probe.m = probe.k = big;
      assert_false(tsr__gemm_small_path(&probe, &cf));
      probe.n = nr;
      assert_true(tsr__gemm_small_path(&probe, &cf));
      probe = (tsr__gemm_args){
          .dtype = dtypes[d], .m = big, .n = big, .k = 2, .alpha = 1, .tuning = &tuning};
      assert_false(tsr__gemm_small_path(&probe, &cf)); /* C of 64 MiB */
      /* op(A) = A^T past L1 with its rows 2 KiB or more apart (the broadcasts miss in a new
         page every k step): packed, unless C is one strip; rows closer, or op(A) within L1:
         unpacked, as op(A) = A is (cf's own bound permitting). */
      {
        const int64_t es = (int64_t)tsr__dtype_size(dtypes[d]), far = 2048 / es;
        const int64_t l1k = (int64_t)tsr__cpu_facts_get()->cache[0].size / (far * es) + 1;
        probe = (tsr__gemm_args){.dtype = dtypes[d],
                                 .m = far,
                                 .n = 2 * nr,
                                 .k = l1k,
                                 .trans_a = true,
                                 .lda = far,
                                 .alpha = 1,
                                 .tuning = &tuning};
        const bool within = (double)(far * l1k * es) <= (double)cf.small_bytes &&
                            (double)(far * 2 * nr * es) <= (double)cf.small_bytes;
        assert_false(tsr__gemm_small_path(&probe, &cf));
        probe.trans_a = false;
        probe.lda = l1k;
        assert_int_equal(tsr__gemm_small_path(&probe, &cf), within);
        probe.trans_a = true;
        probe.lda = far;
        probe.n = nr; /* one strip: op(A) read once */
        assert_true(tsr__gemm_small_path(&probe, &cf));
        probe.n = 2 * nr;
        probe.k = l1k - 2; /* within L1 */
        assert_int_equal(tsr__gemm_small_path(&probe, &cf),
                         (double)(far * probe.k * es) <= (double)cf.small_bytes && within);
      }
      /* op(B) past L2: k blocks, except for several row blocks with B's rows 4 KiB apart
         (one L1 set), which take op(B) in one block; the small path either way. */
      {
        const int64_t es = (int64_t)tsr__dtype_size(dtypes[d]), n4k = 4096 / es;
        const int64_t kl = (int64_t)tsr__cpu_facts_get()->cache[1].size / 4096 + 64;
        probe = (tsr__gemm_args){.dtype = dtypes[d],
                                 .m = mr + 1,
                                 .n = n4k,
                                 .k = kl,
                                 .ldb = n4k,
                                 .alpha = 1,
                                 .tuning = &tuning};
        assert_int_equal(tsr__gemm_small_kblock(&probe, mr), kl);
        assert_true(tsr__gemm_small_path(&probe, &cf));
        probe.m = mr;
        assert_true(tsr__gemm_small_kblock(&probe, mr) < kl);
        probe.m = mr + 1;
        probe.ldb = n4k + 1;
        assert_true(tsr__gemm_small_kblock(&probe, mr) < kl);
        probe.ldb = kl;
        probe.trans_b = true;
        probe.trans_a = true;
        assert_true(tsr__gemm_small_kblock(&probe, mr) < kl);
        assert_true(tsr__gemm_small_path(&probe, &cf));
        /* A * B^T runs as dot products (k >= TSR__GEMM_DOT_MIN_K), in blocks of
           TSR__GEMM_DOT_KB bytes of a row. */
        probe.trans_a = false;
        assert_true(tsr__gemm_small_dot(&probe));
        assert_false(tsr__gemm_small_pack_b(&probe, mr));
        probe.k = 3 * TSR__GEMM_DOT_KB / es + 5;
        assert_int_equal(tsr__gemm_small_kblock(&probe, mr), TSR__GEMM_DOT_KB / es);
        probe.k = TSR__GEMM_DOT_MIN_K - 1;
        assert_false(tsr__gemm_small_dot(&probe));
        assert_true(tsr__gemm_small_pack_b(&probe, mr));
      }
      /* The small-path rule is the configuration's small_bytes (the registry row's field, else
         L2): op(A) and C each within it take the small path, one byte more does not. */
      {
        const int64_t es = (int64_t)tsr__dtype_size(dtypes[d]), nn = 4 * nr;
        tsr__gemm_config lim = cf;
        lim.small_bytes = 64 * nn * es; /* C of 64 x nn */
        tuning.small_mnk = -1;          /* the driver's own rule */
        probe = (tsr__gemm_args){
            .dtype = dtypes[d], .m = 64, .n = nn, .k = nn, .alpha = 1, .tuning = &tuning};
        assert_true(tsr__gemm_small_path(&probe, &lim));
        lim.small_bytes -= 1;
        assert_false(tsr__gemm_small_path(&probe, &lim));
        probe.n = nr; /* one strip: whatever the bound */
        assert_true(tsr__gemm_small_path(&probe, &lim));
        /* The default's rule: the registry row's own (Sapphire/Emerald Rapids: 96 KiB), else
           the L2 size. A call's configuration with no rule of its own takes the default's. */
        const int64_t l2 = (int64_t)tsr__cpu_facts_get()->cache[1].size > 0
                               ? (int64_t)tsr__cpu_facts_get()->cache[1].size
                               : 256 << 10;
        tsr__gemm_config base;
        tsr__gemm_config_default(dtypes[d], 1, &base);
        const bool spr =
            strcmp(tsr__gemm_uarch_name(), "spr") == 0 && strcmp(base.source, "registry") == 0;
        assert_int_equal(def.small_bytes, spr ? 96 << 10 : l2);
        tsr__gemm_config zero = cf, got;
        zero.small_bytes = 0;
        tuning.config[dtypes[d] == TSR_F32 ? 0 : 1] = &zero;
        tsr__gemm_config_get(dtypes[d], 1, &tuning, &got);
        assert_int_equal(got.small_bytes, def.small_bytes);
        tuning.config[dtypes[d] == TSR_F32 ? 0 : 1] = &cf;
      }
      tuning.small_mnk = 0;
      probe = (tsr__gemm_args){
          .dtype = dtypes[d], .m = 3, .n = 3, .k = 3, .alpha = 1, .tuning = &tuning};
      assert_false(tsr__gemm_small_path(&probe, &cf));
    }
    tuning.config[dtypes[d] == TSR_F32 ? 0 : 1] = NULL; /* the last cf ends here */
  }
  tuning.small_mnk = -1;
  set_threads(2);
  if (tested == 0) skip();
}

/* Through the public API: tsr_gemm on zero-copy views (column-major B via strides) and
   tsr_matmul. */
static void test_public_api(void **state) {
  (void)state;
  set_threads(2);
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dt = dtypes[d];
    const int64_t m = 75, n = 66, k = 53;
    double *a = NULL, *b = NULL;
    const int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
    tsr_array *ta = tsr_test_random_array(2, sa, dt, TSR_CPU, 7000, &a);
    tsr_array *tb = tsr_test_random_array(2, sb, dt, TSR_CPU, 7001, &b);
    double *r = malloc(sizeof(double) * (size_t)(m * n));
    assert_non_null(r);
    tsr_test_ref_gemm_into(0, 0, m, n, k, 1.0, a, b, 0.0, NULL, r);
    tsr_array *prod = NULL;
    TSR_ASSERT_OK(tsr_matmul(ta, tb, &prod));
    double *got = tsr_test_read_f64(prod);
    assert_true(tsr_test_rel_error(got, r, (size_t)(m * n)) <= tsr_test_tol(dt, k));
    free(got);
    /* C = -2*A*B + 0.5*C via tsr_gemm, C starting as the product. */
    TSR_ASSERT_OK(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, -2.0, ta, tb, 0.5, prod));
    got = tsr_test_read_f64(prod);
    for (int64_t i = 0; i < m * n; ++i)
      r[i] = -1.5 * r[i];
    assert_true(tsr_test_rel_error(got, r, (size_t)(m * n)) <= 4 * tsr_test_tol(dt, k));
    free(got);
    tsr_array_release(prod);
    tsr_array_release(ta);
    tsr_array_release(tb);
    free(a);
    free(b);
    free(r);
    (void)sc;
  }
}

int main(void) {
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
  tuning.fixed_threads = true;
  tuning.full_team = true;
  for (int d = 0; d < 2; ++d)
    for (int t = 1; t <= 2; ++t) {
      const tsr__gemm_config c = cfg_of(dtypes[d], t);
      printf("%d thread(s): kernel %s: MR=%d NR=%d KC=%lld MC=%lld NC=%lld grain %d (%s)\n", t,
             c.ker->name, c.ker->mr, c.ker->nr, (long long)c.kc, (long long)c.mc, (long long)c.nc,
             c.grain, c.source);
    }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_shapes),
      cmocka_unit_test(test_cache_block_edges),
      cmocka_unit_test(test_threaded_shapes),
      cmocka_unit_test(test_guard_pages),
      cmocka_unit_test(test_small_wide_tiles),
      cmocka_unit_test(test_alpha_beta_special),
      cmocka_unit_test(test_streaming_stores),
      cmocka_unit_test(test_ukr_general_stride),
      cmocka_unit_test(test_called_from_threads),
      cmocka_unit_test(test_thread_pool),
      cmocka_unit_test(test_adaptive_reprobe),
      cmocka_unit_test(test_adaptive_unread_clock),
      cmocka_unit_test(test_adaptive_warm_probe),
      cmocka_unit_test(test_adaptive_warm_probes_settle),
      cmocka_unit_test(test_vendor_path),
      cmocka_unit_test(test_kernel_overrides),
      cmocka_unit_test(test_small_path),
      cmocka_unit_test(test_packing_matches_portable),
      cmocka_unit_test(test_progress_hook),
      cmocka_unit_test(test_tiny_lane_bounds),
      cmocka_unit_test(test_error_names_caller),
      cmocka_unit_test(test_public_api),
      cmocka_unit_test(test_default_rule),
      /* Last: it re-selects the kernel. */
      cmocka_unit_test(test_kernel_selection),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
