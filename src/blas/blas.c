/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtessera_blas: sgemm_/dgemm_/cgemm_/zgemm_ (and the 3M names) and their CBLAS entry points on
 * top of the public Tessera API.
 *
 * Every entry point checks its arguments exactly as the reference BLAS (and, for CBLAS, the
 * reference CBLAS wrapper) does, and records the call once, in the backend's own record
 * (tsr__gemm_args, core/internal.h), which carries it down to the CPU's kernels: the
 * column-major C = alpha op(A) op(B) + beta C is the row-major C^T = alpha op(B)^T op(A)^T on
 * the same memory, so the record's A is the caller's B, its m the caller's n, and so on
 * (tsr__blas_args; a row-major CBLAS call is its own backend form). Then the cases the
 * reference defines without arithmetic on A and B are settled (quick return, C = beta C), and
 * the rest is routed to the CPU or a GPU.
 *
 * On the CPU the record goes to the tiny lane or tsr_gemm_host on the caller's pointers (no
 * arrays built). For a GPU, the record's row-major operands are handed to Tessera as "storage
 * views" (tsr_from_host_view wraps the caller's memory without a copy: the column-major r x c
 * matrix X with leading dimension ld is the row-major c x r matrix X^T with row stride ld),
 * and the product is tsr_gemm_ex on them.
 */
#include <complex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas/blas_internal.h"
#include "core/env.h"      /* the drop-ins' interface (core/dropin.h) */
#include "core/internal.h" /* tsr__gemm_host_tiny, tsr__count (core/dropin.h) */
#include "tessera/array.h"
#include "tessera/blas.h"
#include "tessera/device.h"
#include "tessera/linalg.h"
#include "tessera/status.h"

/* ---------------------------------------------------------------- counters ------------ */

/* Every call is counted once by its entry point and, unless the CPU computed it (the common
   case, which is left uncounted), once by its outcome; the CPU count is what is left
   (tsr_blas_get_stats). The counts are the library's per-thread counters (tsr__count,
   core/internal.h): a count is a plain add to the calling thread's own block, so threads that
   call GEMM concurrently share no cache line here. tsr_blas_reset_stats keeps a baseline; the
   stats are the counts past it. */
static void tsr__blas_count(tsr__counter c) {
  tsr__count(c, 1);
}

enum { TSR__BLAS_NCOUNT = TSR__COUNT_BLAS_FALLBACK - TSR__COUNT_BLAS_SGEMM + 1 };
/* The counts at the last reset (tsr__counters_mark). */
static uint64_t tsr__blas_base[TSR__BLAS_NCOUNT];

tsr_status tsr_blas_get_stats(tsr_blas_stats *stats) {
  if (stats == NULL) return tsr_set_error(TSR_ERR_NULL_POINTER, __func__, "stats is NULL");
  uint64_t v[TSR__BLAS_NCOUNT];
  tsr__counters_since(TSR__COUNT_BLAS_SGEMM, TSR__BLAS_NCOUNT, tsr__blas_base, v);
#define TSR__BLAS_GET(slot) v[TSR__COUNT_BLAS_##slot - TSR__COUNT_BLAS_SGEMM]
  stats->sgemm = TSR__BLAS_GET(SGEMM);
  stats->dgemm = TSR__BLAS_GET(DGEMM);
  stats->cblas_sgemm = TSR__BLAS_GET(CBLAS_SGEMM);
  stats->cblas_dgemm = TSR__BLAS_GET(CBLAS_DGEMM);
  stats->errors = TSR__BLAS_GET(ERRORS);
  stats->trivial = TSR__BLAS_GET(TRIVIAL);
  stats->gpu = TSR__BLAS_GET(GPU);
  stats->fallback = TSR__BLAS_GET(FALLBACK);
#undef TSR__BLAS_GET
  /* Calls not settled otherwise (a call still running counts as on the CPU). */
  const unsigned long long calls = stats->sgemm + stats->dgemm + stats->cblas_sgemm +
                                   stats->cblas_dgemm,
                           other = stats->errors + stats->trivial + stats->gpu + stats->fallback;
  stats->cpu = calls > other ? calls - other : 0;
  return TSR_OK;
}

tsr_status tsr_blas_reset_stats(void) {
  tsr__counters_mark(TSR__COUNT_BLAS_SGEMM, TSR__BLAS_NCOUNT, tsr__blas_base);
  return TSR_OK;
}

/* TSR_BLAS_VERBOSE: one line at exit, so that a user (or a test) can see that a preloaded
   library really served the calls, and where. */
__attribute__((destructor)) static void tsr__report_at_exit(void) {
  if (!tsr__env_flag(TSR__ENV_BLAS_VERBOSE)) return;
  tsr_blas_stats s;
  tsr_blas_get_stats(&s);
  fprintf(stderr,
          "tessera_blas: calls: sgemm_ %llu, dgemm_ %llu, cblas_sgemm %llu, cblas_dgemm %llu; "
          "errors %llu, trivial %llu, cpu %llu, gpu %llu, fallback %llu\n",
          (unsigned long long)s.sgemm, (unsigned long long)s.dgemm,
          (unsigned long long)s.cblas_sgemm, (unsigned long long)s.cblas_dgemm,
          (unsigned long long)s.errors, (unsigned long long)s.trivial, (unsigned long long)s.cpu,
          (unsigned long long)s.gpu, (unsigned long long)s.fallback);
}

/* Complex calls: their entry points and outcomes (TSR_BLAS_VERBOSE's second line). */
enum {
  TSR__CX_ZGEMM,
  TSR__CX_CGEMM,
  TSR__CX_ZGEMM3M,
  TSR__CX_CGEMM3M,
  TSR__CX_CBLAS_ZGEMM,
  TSR__CX_CBLAS_CGEMM,
  TSR__CX_CBLAS_ZGEMM3M,
  TSR__CX_CBLAS_CGEMM3M,
  TSR__CX_ENTRIES, /* the outcomes follow the entry points */
  TSR__CX_ERRORS = TSR__CX_ENTRIES,
  TSR__CX_TRIVIAL,
  TSR__CX_GPU,
  TSR__CX_FALLBACK,
  TSR__CX_NCOUNT
};
static const char *const tsr__cx_names[TSR__CX_NCOUNT] = {
    "zgemm_",        "cgemm_",        "zgemm3m_", "cgemm3m_", "cblas_zgemm", "cblas_cgemm",
    "cblas_zgemm3m", "cblas_cgemm3m", "errors",   "trivial",  "gpu",         "fallback"};
static atomic_ullong tsr__cx_counts[TSR__CX_NCOUNT];
static void tsr__cx_count(int c) {
  atomic_fetch_add_explicit(&tsr__cx_counts[c], 1, memory_order_relaxed);
}

/* TSR_BLAS_VERBOSE, complex calls (when there were any): "tessera_blas: complex calls: zgemm_ 3,
   ...; errors 0, trivial 1, cpu 2, gpu 0, fallback 0" (cpu: the calls not settled otherwise). */
__attribute__((destructor)) static void tsr__cx_report_at_exit(void) {
  if (!tsr__env_flag(TSR__ENV_BLAS_VERBOSE)) return;
  unsigned long long v[TSR__CX_NCOUNT], calls = 0;
  for (int i = 0; i < TSR__CX_NCOUNT; ++i)
    v[i] = atomic_load(&tsr__cx_counts[i]);
  for (int i = 0; i < TSR__CX_ENTRIES; ++i)
    calls += v[i];
  if (calls == 0) return;
  const unsigned long long other =
      v[TSR__CX_ERRORS] + v[TSR__CX_TRIVIAL] + v[TSR__CX_GPU] + v[TSR__CX_FALLBACK];
  char line[512];
  int n = snprintf(line, sizeof line, "tessera_blas: complex calls:");
  for (int i = 0; i < TSR__CX_ENTRIES; ++i)
    n += snprintf(line + n, sizeof line - (size_t)n, "%s %s %llu", i ? "," : "", tsr__cx_names[i],
                  v[i]);
  fprintf(stderr, "%s; errors %llu, trivial %llu, cpu %llu, gpu %llu, fallback %llu\n", line,
          v[TSR__CX_ERRORS], v[TSR__CX_TRIVIAL], calls > other ? calls - other : 0, v[TSR__CX_GPU],
          v[TSR__CX_FALLBACK]);
}

/* The drop-in sees only the public API and core/dropin.h (tsr__dtype_size is there). */
static bool tsr__blas_is_complex(tsr_dtype t) {
  return t == TSR_C64 || t == TSR_C128;
}

/* A call's outcome, counted with its dtype's counters: the real dtypes' in tsr_blas_stats,
   the complex ones' in tsr__cx_counts (the public stats struct has no complex fields). */
typedef enum { TSR__OUT_ERRORS, TSR__OUT_TRIVIAL, TSR__OUT_GPU, TSR__OUT_FALLBACK } tsr__outcome;
static void tsr__blas_outcome(tsr_dtype dtype, tsr__outcome o) {
  static const tsr__counter real[] = {TSR__COUNT_BLAS_ERRORS, TSR__COUNT_BLAS_TRIVIAL,
                                      TSR__COUNT_BLAS_GPU, TSR__COUNT_BLAS_FALLBACK};
  static const int cx[] = {TSR__CX_ERRORS, TSR__CX_TRIVIAL, TSR__CX_GPU, TSR__CX_FALLBACK};
  if (tsr__blas_is_complex(dtype))
    tsr__cx_count(cx[o]);
  else
    tsr__blas_count(real[o]);
}

/* A BLAS has no error channel: when Tessera fails, say so once and still compute C. */
static void tsr__warn_once(atomic_flag *flag, const char *what) {
  if (!atomic_flag_test_and_set(flag))
    fprintf(stderr, "tessera_blas: %s (%s)\n", what, tsr_last_error());
}

/* ---------------------------------------------------------------- routing ------------- */

static double tsr__gpu_min_flops(void) {
  return tsr__env_number(TSR__ENV_BLAS_GPU_MIN_FLOPS); /* TSR_BLAS_GPU_MIN_FLOPS_DEFAULT */
}

tsr_status tsr_blas_route(int64_t m, int64_t n, int64_t k, tsr_device *device) {
  if (device == NULL) return tsr_set_error(TSR_ERR_NULL_POINTER, __func__, "device is NULL");
  *device = TSR_CPU;
  if (m < 0 || n < 0 || k < 0)
    return tsr_set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                         "negative size: m = %lld, n = %lld, k = %lld", (long long)m, (long long)n,
                         (long long)k);
  double flops = 2.0 * (double)m * (double)n * (double)k;
  if (flops < tsr__gpu_min_flops()) return TSR_OK;
  tsr_device d;
  if (tsr_device_default(&d) == TSR_OK && d.kind != TSR_DEVICE_CPU) *device = d;
  return TSR_OK;
}

/* ---------------------------------------------------------------- the computation ----- */

/* Below, g is a call with valid arguments in backend form (see the top of the file): the
   row-major C (m x n, ldc) = alpha op(A) op(B) + beta C, element (i, j) of C at i * ldc + j. */

/* The element of any of the four dtypes as a double complex (a real one with imaginary part 0;
   for f32 and c64 every float is exact in double). */
static double complex tsr__load(tsr_dtype t, const void *p, int64_t i) {
  switch (t) {
  case TSR_F64: return ((const double *)p)[i];
  case TSR_F32: return (double)((const float *)p)[i];
  case TSR_C128: return ((const double complex *)p)[i];
  default: return (double complex)((const float complex *)p)[i];
  }
}

static void tsr__store(tsr_dtype t, void *p, int64_t i, double complex v) {
  switch (t) {
  case TSR_F64: ((double *)p)[i] = creal(v); break;
  case TSR_F32: ((float *)p)[i] = (float)creal(v); break;
  case TSR_C128: ((double complex *)p)[i] = v; break;
  default: ((float complex *)p)[i] = (float complex)v; break;
  }
}

static double complex tsr__alpha(const tsr__gemm_args *g) {
  return CMPLX(g->alpha, g->alpha_im);
}
static double complex tsr__beta(const tsr__gemm_args *g) {
  return CMPLX(g->beta, g->beta_im);
}

/* C = beta C, with beta = 0 giving exact zeros whatever C held (NaN included). For f32 the
   double product of two floats is exact, so rounding it once matches a float multiply (a real
   element times a real beta: the imaginary parts are 0 and add nothing to the real part). */
static void tsr__scale_c(const tsr__gemm_args *g) {
  const double complex beta = tsr__beta(g);
  for (int64_t i = 0; i < g->m; ++i)
    for (int64_t j = 0; j < g->n; ++j) {
      int64_t at = i * g->ldc + j;
      tsr__store(g->dtype, g->c, at, beta == 0 ? 0 : beta * tsr__load(g->dtype, g->c, at));
    }
}

/* The last resort when Tessera failed (out of memory): the textbook triple loop, conjugating
   where the record says so. */
static void tsr__gemm_loop(const tsr__gemm_args *g) {
  const double complex alpha = tsr__alpha(g), beta = tsr__beta(g);
  for (int64_t i = 0; i < g->m; ++i)
    for (int64_t j = 0; j < g->n; ++j) {
      double complex s = 0;
      for (int64_t p = 0; p < g->k; ++p) {
        double complex x = tsr__load(g->dtype, g->a, g->trans_a ? p * g->lda + i : i * g->lda + p);
        double complex y = tsr__load(g->dtype, g->b, g->trans_b ? j * g->ldb + p : p * g->ldb + j);
        s += (g->conj_a ? conj(x) : x) * (g->conj_b ? conj(y) : y);
      }
      int64_t at = i * g->ldc + j;
      double complex c = beta == 0 ? 0 : beta * tsr__load(g->dtype, g->c, at);
      tsr__store(g->dtype, g->c, at, alpha * s + c);
    }
}

/* Storage views (see the top of the file) of the record's A, B and C, sharing the caller's
   memory. */
typedef struct tsr__blas_views {
  tsr_array *a, *b, *c;
} tsr__blas_views;

static void tsr__release_views(tsr__blas_views *v) {
  tsr_array_release(v->a);
  tsr_array_release(v->b);
  tsr_array_release(v->c);
}

static tsr_status tsr__make_views(const tsr__gemm_args *g, tsr__blas_views *v) {
  memset(v, 0, sizeof *v);
  int64_t rows_a = g->trans_a ? g->k : g->m, cols_a = g->trans_a ? g->m : g->k;
  int64_t rows_b = g->trans_b ? g->n : g->k, cols_b = g->trans_b ? g->k : g->n;
  int64_t shape_a[2] = {rows_a, cols_a}, strides_a[2] = {g->lda, 1};
  int64_t shape_b[2] = {rows_b, cols_b}, strides_b[2] = {g->ldb, 1};
  int64_t shape_c[2] = {g->m, g->n}, strides_c[2] = {g->ldc, 1};
  /* A and B are only read: the casts drop a const that tsr_array cannot carry. */
  tsr_status st = tsr_from_host_view(2, shape_a, strides_a, g->dtype, (void *)g->a, &v->a);
  if (st == TSR_OK) st = tsr_from_host_view(2, shape_b, strides_b, g->dtype, (void *)g->b, &v->b);
  if (st == TSR_OK) st = tsr_from_host_view(2, shape_c, strides_c, g->dtype, g->c, &v->c);
  if (st != TSR_OK) tsr__release_views(v);
  return st;
}

/* The native GEMM in place on the caller's memory: small calls through the CPU backend's tiny
   lane without a second round of checks (tsr__gemm_host_tiny), the rest through tsr_gemm_host.
   tsr_gemm_host never runs a vendor BLAS, which could be this very library when it is
   preloaded. */
static tsr_trans tsr__op(bool trans, bool conj) {
  return conj ? TSR_CONJ_TRANS : trans ? TSR_TRANS : TSR_NO_TRANS;
}

static tsr_status tsr__blas_gemm_cpu(const tsr__gemm_args *g) {
  if (tsr__blas_is_complex(g->dtype)) { /* the scalars in the dtype's own element type */
    const float complex fa = (float complex)tsr__alpha(g), fb = (float complex)tsr__beta(g);
    const double complex da = tsr__alpha(g), db = tsr__beta(g);
    const bool c64 = g->dtype == TSR_C64;
    return tsr_gemm_host_complex(g->dtype, tsr__op(g->trans_a, g->conj_a),
                                 tsr__op(g->trans_b, g->conj_b), g->m, g->n, g->k,
                                 c64 ? (const void *)&fa : (const void *)&da, g->a, g->lda, g->b,
                                 g->ldb, c64 ? (const void *)&fb : (const void *)&db, g->c, g->ldc);
  }
  if (tsr__gemm_host_tiny(g)) return TSR_OK;
  return tsr_gemm_host(g->dtype, g->trans_a ? TSR_TRANS : TSR_NO_TRANS,
                       g->trans_b ? TSR_TRANS : TSR_NO_TRANS, g->m, g->n, g->k, g->alpha, g->a,
                       g->lda, g->b, g->ldb, g->beta, g->c, g->ldc);
}

/* On a GPU: copy A, B (and C unless beta = 0) over, multiply, copy C back. The caller's C
   is written only by the final copy, after every step that can fail. */
static tsr_status tsr__gemm_device(const tsr__gemm_args *g, tsr_device dev) {
  tsr__blas_views v;
  tsr_status st = tsr__make_views(g, &v);
  if (st != TSR_OK) return st;
  tsr_array *da = NULL, *db = NULL, *dc = NULL;
  void *host = NULL;
  int64_t shape_c[2] = {g->m, g->n};
  size_t es = tsr__dtype_size(g->dtype);
  size_t bytes = (size_t)g->m * (size_t)g->n * es;
  /* The caller's A (the record's B) goes over first. */
  st = tsr_array_to(v.b, dev, &db);
  if (st == TSR_OK) st = tsr_array_to(v.a, dev, &da);
  if (st == TSR_OK)
    st =
        tsr__beta(g) != 0 ? tsr_array_to(v.c, dev, &dc) : tsr_empty(2, shape_c, g->dtype, dev, &dc);
  if (st == TSR_OK && tsr__blas_is_complex(g->dtype)) {
    const tsr_complex128 al = {g->alpha, g->alpha_im}, be = {g->beta, g->beta_im};
    st = tsr_gemm_complex(tsr__op(g->trans_a, g->conj_a), tsr__op(g->trans_b, g->conj_b), al, da,
                          db, be, dc, TSR_GEMM_AUTO);
  } else if (st == TSR_OK) {
    st = tsr_gemm_ex(g->trans_a ? TSR_TRANS : TSR_NO_TRANS, g->trans_b ? TSR_TRANS : TSR_NO_TRANS,
                     g->alpha, da, db, g->beta, dc, TSR_GEMM_AUTO);
  }
  if (st == TSR_OK) {
    host = malloc(bytes);
    st = host != NULL ? tsr_array_read(dc, host, bytes) : TSR_ERR_OUT_OF_MEMORY;
  }
  if (st == TSR_OK) {
    /* dc is C contiguous: row i (the caller's column i) is n consecutive elements. */
    for (int64_t i = 0; i < g->m; ++i)
      memcpy((char *)g->c + (size_t)(i * g->ldc) * es, (char *)host + (size_t)(i * g->n) * es,
             (size_t)g->n * es);
  }
  free(host);
  tsr_array_release(da);
  tsr_array_release(db);
  tsr_array_release(dc);
  tsr__release_views(&v);
  return st;
}

static atomic_flag warned_gpu = ATOMIC_FLAG_INIT, warned_cpu = ATOMIC_FLAG_INIT;

/* Whether this process sees any GPU (counted once; the count does not change while it runs).
   Without one tsr_blas_route always answers the CPU, so calls skip it and its environment
   reads. */
static int tsr__any_gpu_count(void) {
  int cuda = 0, hip = 0;
  tsr_device_count(TSR_DEVICE_CUDA, &cuda);
  tsr_device_count(TSR_DEVICE_HIP, &hip);
  return cuda + hip > 0 ? 1 : 0;
}
static bool tsr__any_gpu(void) {
  static atomic_int known = -1;
  int v = atomic_load_explicit(&known, memory_order_relaxed);
  if (v < 0) {
    v = tsr__any_gpu_count();
    atomic_store_explicit(&known, v, memory_order_relaxed);
  }
  return v == 1;
}

static void tsr__run(const tsr__gemm_args *g) {
  /* The cases the reference BLAS settles without touching A and B. */
  if (g->m == 0 || g->n == 0 || ((tsr__alpha(g) == 0 || g->k == 0) && tsr__beta(g) == 1)) {
    tsr__blas_outcome(g->dtype, TSR__OUT_TRIVIAL);
    return;
  }
  if (tsr__alpha(g) == 0 || g->k == 0) {
    tsr__scale_c(g);
    tsr__blas_outcome(g->dtype, TSR__OUT_TRIVIAL);
    return;
  }
  tsr_device dev;
  /* The caller's m and n (the record's n and m). */
  if (tsr__any_gpu() && tsr_blas_route(g->n, g->m, g->k, &dev) == TSR_OK &&
      dev.kind != TSR_DEVICE_CPU) {
    if (tsr__gemm_device(g, dev) == TSR_OK) {
      tsr__blas_outcome(g->dtype, TSR__OUT_GPU);
      return;
    }
    tsr__warn_once(&warned_gpu, "the GPU GEMM failed; computing on the CPU");
  }
  /* Tessera validates and allocates before it writes C, so a failure leaves C intact. */
  if (tsr__blas_gemm_cpu(g) == TSR_OK) return; /* counted as the remainder (tsr_blas_get_stats) */
  tsr__warn_once(&warned_cpu, "the Tessera GEMM failed; computing with a plain loop");
  tsr__gemm_loop(g);
  tsr__blas_outcome(g->dtype, TSR__OUT_FALLBACK);
}

/* A checked call in backend form (tsr__blas_args) straight into the CPU's tiny lane,
   before tsr__run: a call with arithmetic to do (m, n, k > 0, alpha != 0) in a process without a
   GPU (where tsr__run would route every call to the CPU) that the lane takes. Returns false having
   done nothing otherwise, and the caller goes on to tsr__run. Inlined into each entry point: a
   16^3 product under NumPy pays every function call and argument copy on the way (issue 31). */
static inline __attribute__((always_inline)) bool tsr__blas_tiny(const tsr__gemm_args *g) {
  return g->m > 0 && g->n > 0 && g->k > 0 && g->alpha != 0.0 && !tsr__any_gpu() &&
         tsr__gemm_host_tiny(g);
}

/* ---------------------------------------------------------------- argument checks ----- */

static char tsr__upper(char c) {
  return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* The reference DGEMM's INFO for these arguments (0 when valid). */
static int tsr__gemm_info(char transa, char transb, int m, int n, int k, int lda, int ldb,
                          int ldc) {
  char ta = tsr__upper(transa), tb = tsr__upper(transb);
  bool nota = ta == 'N', notb = tb == 'N';
  if (!nota && ta != 'T' && ta != 'C') return 1;
  if (!notb && tb != 'T' && tb != 'C') return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  int nrowa = nota ? m : k, nrowb = notb ? k : n;
  if (lda < (nrowa > 1 ? nrowa : 1)) return 8;
  if (ldb < (nrowb > 1 ? nrowb : 1)) return 10;
  if (ldc < (m > 1 ? m : 1)) return 13;
  return 0;
}

/* The record of the column-major C = alpha op(A) op(B) + beta C (transa, transb as the
   reference reads them): its backend form, C^T = alpha op(B)^T op(A)^T. */
static tsr__gemm_args tsr__blas_args(tsr_dtype dtype, char transa, char transb, int m, int n, int k,
                                     double alpha, const void *a, int lda, const void *b, int ldb,
                                     double beta, void *c, int ldc) {
  return tsr__gemm_args_host(dtype, tsr__upper(transb) != 'N', tsr__upper(transa) != 'N', n, m, k,
                             alpha, b, ldb, a, lda, beta, c, ldc, TSR_GEMM_NATIVE);
}

/* A complex call's record: tsr__blas_args plus the scalars' imaginary parts and 'C' as the
   conjugate transpose (op(B)^T = conj(B) when op(B) = B^H, so the record's A, the caller's B,
   is taken transposed and conjugated; the same for A). For a real dtype 'C' is 'T' and the
   imaginary parts are 0. */
static tsr__gemm_args tsr__blas_args_any(tsr_dtype dtype, char transa, char transb, int m, int n,
                                         int k, double complex alpha, const void *a, int lda,
                                         const void *b, int ldb, double complex beta, void *c,
                                         int ldc) {
  tsr__gemm_args g = tsr__blas_args(dtype, transa, transb, m, n, k, creal(alpha), a, lda, b, ldb,
                                    creal(beta), c, ldc);
  if (tsr__blas_is_complex(dtype)) {
    g.conj_a = tsr__upper(transb) == 'C';
    g.conj_b = tsr__upper(transa) == 'C';
    g.alpha_im = cimag(alpha);
    g.beta_im = cimag(beta);
  }
  return g;
}

/* A scalar passed by pointer, in the dtype's element type, as a double complex. */
static double complex tsr__blas_scalar(tsr_dtype dtype, const void *p) {
  return tsr__load(dtype, p, 0);
}

/* ---------------------------------------------------------------- Fortran BLAS -------- */

/* ALPHA and BETA are read where the reference xGEMM reads them: after the argument checks,
   and not for M = 0 or N = 0 (its quick return reads neither). A NULL one there, where the
   reference would crash, is reported as an illegal argument (position 6 or 11). */
static void tsr__fortran_gemm(tsr_dtype dtype, const char *srname, const char *transa,
                              const char *transb, const int *m, const int *n, const int *k,
                              const void *alpha, const void *a, const int *lda, const void *b,
                              const int *ldb, const void *beta, void *c, const int *ldc) {
  int info = tsr__gemm_info(*transa, *transb, *m, *n, *k, *lda, *ldb, *ldc);
  if (info == 0 && *m != 0 && *n != 0) info = !alpha ? 6 : !beta ? 11 : 0;
  if (info != 0) {
    tsr__blas_outcome(dtype, TSR__OUT_ERRORS);
    tsr__blas_xerbla(srname, info);
    return;
  }
  if (*m == 0 || *n == 0) {
    tsr__blas_outcome(dtype, TSR__OUT_TRIVIAL);
    return;
  }
  const tsr__gemm_args g =
      tsr__blas_args_any(dtype, *transa, *transb, *m, *n, *k, tsr__blas_scalar(dtype, alpha), a,
                         *lda, b, *ldb, tsr__blas_scalar(dtype, beta), c, *ldc);
  if (!tsr__blas_tiny(&g)) tsr__run(&g); /* the tiny lane takes real dtypes only */
}

void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc) {
  tsr__blas_count(TSR__COUNT_BLAS_DGEMM);
  tsr__fortran_gemm(TSR_F64, "DGEMM ", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                    ldc);
}

void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
            const float *beta, float *c, const int *ldc) {
  tsr__blas_count(TSR__COUNT_BLAS_SGEMM);
  tsr__fortran_gemm(TSR_F32, "SGEMM ", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                    ldc);
}

/* ---------------------------------------------------------------- CBLAS --------------- */

static bool tsr__cblas_trans(CBLAS_TRANSPOSE t, char *c) {
  switch (t) {
  case CblasNoTrans: *c = 'N'; return true;
  case CblasTrans: *c = 'T'; return true;
  case CblasConjTrans: *c = 'C'; return true;
  }
  return false;
}

/*
 * The reference CBLAS: layout (1), TransA (2), TransB (3), then the Fortran checks of the
 * column-major call it makes, whose positions plus one are reported. A row-major call is the
 * column-major C^T = op(B)^T op(A)^T: A and B, M and N swap places, and RowMajorStrg = 1
 * tells cblas_xerbla to swap the positions back (4 <-> 5, 9 <-> 11). RowMajorStrg is written
 * only around an error report, under the reports' lock (tsr__blas_cblas_xerbla), so neither
 * concurrent valid calls nor concurrent invalid ones race on it.
 */
/* The reference CBLAS's argument checks in its order: the layout (1), TransA (2), TransB (3),
   then the column-major call's Fortran checks at their positions plus one (a row-major call
   checked as the column-major product of the transposes, A and B, M and N swapped). The first
   bad argument is reported through cblas_xerbla and false returned; else *ta, *tb ('N', 'T',
   'C') and *row (a row-major call) are set. Shared by the real and complex entry points. */
static bool tsr__cblas_check(const char *rout, CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA,
                             CBLAS_TRANSPOSE TransB, int M, int N, int K, int lda, int ldb, int ldc,
                             char *ta, char *tb, bool *row) {
  *row = layout == CblasRowMajor;
  if (layout != CblasColMajor && !*row) {
    tsr__blas_cblas_xerbla(0, 1, rout, "Illegal layout setting, %d\n", (int)layout);
    return false;
  }
  if (!tsr__cblas_trans(TransA, ta)) {
    tsr__blas_cblas_xerbla(*row, 2, rout, "Illegal TransA setting, %d\n", (int)TransA);
    return false;
  }
  if (!tsr__cblas_trans(TransB, tb)) {
    tsr__blas_cblas_xerbla(*row, 3, rout, "Illegal TransB setting, %d\n", (int)TransB);
    return false;
  }
  const int info = *row ? tsr__gemm_info(*tb, *ta, N, M, K, ldb, lda, ldc)
                        : tsr__gemm_info(*ta, *tb, M, N, K, lda, ldb, ldc);
  if (info != 0) {
    tsr__blas_cblas_xerbla(*row, info + 1, rout, "", 0);
    return false;
  }
  return true;
}

/* Every CBLAS entry point after its tiny lane (real ones) or directly (complex ones). The
   scalars (in the dtype's element type) are read after the checks and the quick return, as the
   reference reads them (unchecked: it does not test them for NULL). */
static void tsr__cblas_gemm(tsr_dtype dtype, const char *rout, CBLAS_LAYOUT layout,
                            CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB, int M, int N, int K,
                            const void *alpha_p, const void *A, int lda, const void *B, int ldb,
                            const void *beta_p, void *C, int ldc) {
  char ta, tb;
  bool row;
  if (!tsr__cblas_check(rout, layout, TransA, TransB, M, N, K, lda, ldb, ldc, &ta, &tb, &row)) {
    tsr__blas_outcome(dtype, TSR__OUT_ERRORS);
    return;
  }
  if (M == 0 || N == 0) {
    tsr__blas_outcome(dtype, TSR__OUT_TRIVIAL);
    return;
  }
  const double complex alpha = tsr__blas_scalar(dtype, alpha_p),
                       beta = tsr__blas_scalar(dtype, beta_p);
  /* A row-major call is its own backend form; a column-major one its transpose. */
  const tsr__gemm_args g =
      row ? tsr__blas_args_any(dtype, tb, ta, N, M, K, alpha, B, ldb, A, lda, beta, C, ldc)
          : tsr__blas_args_any(dtype, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  tsr__run(&g);
}

/*
 * The CBLAS entry points' first try: a call whose arguments are plainly valid goes straight to
 * the tiny lane (tsr__blas_tiny) in backend form, without tsr__cblas_gemm's checks in the
 * reference's column-major terms: a row-major call is its own backend form, a column-major one
 * its transpose, C^T = op(B)^T op(A)^T. Plainly valid: a known layout and transposes, m, n, k > 0
 * and leading dimensions at least the stored rows' lengths (the reference's checks, which with
 * sizes above 0 are exactly these). Anything else returns false having done nothing, and
 * tsr__cblas_gemm checks, reports and runs the call as before.
 */
static inline __attribute__((always_inline)) bool
tsr__cblas_tiny(tsr_dtype dtype, CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA,
                CBLAS_TRANSPOSE TransB, int M, int N, int K, double alpha, const void *A, int lda,
                const void *B, int ldb, double beta, void *C, int ldc) {
  /* CblasNoTrans, CblasTrans, CblasConjTrans (a real transpose) are 111, 112, 113. */
  const unsigned ua = (unsigned)TransA - (unsigned)CblasNoTrans,
                 ub = (unsigned)TransB - (unsigned)CblasNoTrans;
  if (M <= 0 || N <= 0 || K <= 0 || ua > 2 || ub > 2) return false;
  tsr__gemm_args g;
  if (layout == CblasRowMajor)
    g = tsr__gemm_args_host(dtype, ua != 0, ub != 0, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                            TSR_GEMM_NATIVE);
  else if (layout == CblasColMajor)
    g = tsr__gemm_args_host(dtype, ub != 0, ua != 0, N, M, K, alpha, B, ldb, A, lda, beta, C, ldc,
                            TSR_GEMM_NATIVE);
  else
    return false;
  if (g.lda < (g.trans_a ? g.m : g.k) || g.ldb < (g.trans_b ? g.k : g.n) || g.ldc < g.n)
    return false;
  return tsr__blas_tiny(&g);
}

void cblas_dgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB, const int M,
                 const int N, const int K, const double alpha, const double *A, const int lda,
                 const double *B, const int ldb, const double beta, double *C, const int ldc) {
  tsr__blas_count(TSR__COUNT_BLAS_CBLAS_DGEMM);
  if (tsr__cblas_tiny(TSR_F64, layout, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C,
                      ldc))
    return;
  tsr__cblas_gemm(TSR_F64, "cblas_dgemm", layout, TransA, TransB, M, N, K, &alpha, A, lda, B, ldb,
                  &beta, C, ldc);
}

void cblas_sgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB, const int M,
                 const int N, const int K, const float alpha, const float *A, const int lda,
                 const float *B, const int ldb, const float beta, float *C, const int ldc) {
  tsr__blas_count(TSR__COUNT_BLAS_CBLAS_SGEMM);
  if (tsr__cblas_tiny(TSR_F32, layout, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C,
                      ldc))
    return;
  tsr__cblas_gemm(TSR_F32, "cblas_sgemm", layout, TransA, TransB, M, N, K, &alpha, A, lda, B, ldb,
                  &beta, C, ldc);
}

/* ---------------------------------------------------------------- complex ------------- */

/*
 * cgemm_, zgemm_, cblas_cgemm, cblas_zgemm and their 3M names (OpenBLAS's; the same product
 * here). The arguments are checked exactly as for the real routines (same positions; 'C' is the
 * conjugate transpose), the cases the reference settles without A and B are settled here, and
 * the product runs on the CPU's native complex GEMM (1m method, src/omp/gemm/frame/
 * gemm_complex.c) through the public tsr_gemm_host_complex, or on a GPU as the real calls are
 * routed (tsr_blas_route; tsr_gemm_complex, cuBLAS/hipBLAS Cgemm/Zgemm or Tessera's complex
 * tiles); should it fail, a plain loop, with one message, as the real routines fall back. One
 * path for all four dtypes: the entry points below only count and call tsr__fortran_gemm /
 * tsr__cblas_gemm, and the record carries the conjugations and the scalars' imaginary parts.
 * Complex calls are not in tsr_blas_stats' counts: they have their own (tsr__cx_counts), which
 * TSR_BLAS_VERBOSE prints as a second line at exit.
 */
#define TSR__FORTRAN_CX(name, dtype, srname, counter)                                              \
  void name(const char *transa, const char *transb, const int *m, const int *n, const int *k,      \
            const void *alpha, const void *a, const int *lda, const void *b, const int *ldb,       \
            const void *beta, void *c, const int *ldc) {                                           \
    tsr__cx_count(counter);                                                                        \
    tsr__fortran_gemm(dtype, srname, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,      \
                      ldc);                                                                        \
  }
TSR__FORTRAN_CX(zgemm_, TSR_C128, "ZGEMM ", TSR__CX_ZGEMM)
TSR__FORTRAN_CX(cgemm_, TSR_C64, "CGEMM ", TSR__CX_CGEMM)
TSR__FORTRAN_CX(zgemm3m_, TSR_C128, "ZGEMM3M ", TSR__CX_ZGEMM3M)
TSR__FORTRAN_CX(cgemm3m_, TSR_C64, "CGEMM3M ", TSR__CX_CGEMM3M)

#define TSR__CBLAS_CX(name, dtype, counter)                                                        \
  void name(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE TransA, CBLAS_TRANSPOSE TransB, const int M,      \
            const int N, const int K, const void *alpha, const void *A, const int lda,             \
            const void *B, const int ldb, const void *beta, void *C, const int ldc) {              \
    tsr__cx_count(counter);                                                                        \
    tsr__cblas_gemm(dtype, #name, layout, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, \
                    ldc);                                                                          \
  }
TSR__CBLAS_CX(cblas_zgemm, TSR_C128, TSR__CX_CBLAS_ZGEMM)
TSR__CBLAS_CX(cblas_cgemm, TSR_C64, TSR__CX_CBLAS_CGEMM)
TSR__CBLAS_CX(cblas_zgemm3m, TSR_C128, TSR__CX_CBLAS_ZGEMM3M)
TSR__CBLAS_CX(cblas_cgemm3m, TSR_C64, TSR__CX_CBLAS_CGEMM3M)
