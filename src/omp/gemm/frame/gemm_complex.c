/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Complex GEMM (TSR_C64, TSR_C128) with the real micro-kernels by the 1m method (Van Zee &
 * Smith, "Implementing high-performance complex matrix multiplication via the 1m method",
 * SIAM J. Sci. Comput. 42(5), 2020; BLIS's induced method), row-major form:
 *
 *   C (m x n complex) is the real m x 2n matrix Cr of its interleaved (re, im) pairs;
 *   op(A) (m x k complex) is read as the real m x 2k matrix Ar: (ar, ai) pairs along each row;
 *   op(B) (k x n complex) becomes the real 2k x 2n matrix Br in which the element y = alpha *
 *   op(B)(p, j) (conjugated first when op(B) conjugates) is the 2x2 block at rows 2p, 2p+1 and
 *   columns 2j, 2j+1
 *
 *       [  yr  yi ]                                       [  yr  yi ]
 *       [ -yi  yr ]   or, when op(A) conjugates,          [  yi -yr ]
 *
 *   so that Cr(i, 2j)   = sum_p ar yr - s ai yi = Re(op(A)(i,p) y),
 *           Cr(i, 2j+1) = sum_p ar yi + s ai yr = Im(op(A)(i,p) y)   (s = -1 for conj(A)).
 *
 * One real GEMM of m x 2n x 2k (real alpha 1, real beta) is the complex product. Everything
 * complex happens in packing: the B panel is packed straight from the complex op(B) into the
 * real micro-panel format (gemm_complex's tsr__gemm_pack_b_1m), with alpha and both
 * conjugations folded in; op(A) = A is the real m x 2k matrix of lda 2*lda, packed by the
 * kernel's own real routine; op(A) = A^T is packed by tsr__gemm_pack_a_1m (pairs kept
 * together). The macro- and micro-kernels are the real ones, unchanged; the real path's KC is
 * made even so that no slice splits a complex pair. A complex beta with an imaginary part is
 * applied to C first (C = beta C), and the real GEMM runs with beta 1.
 *
 * Small calls (those whose real form the driver would run on the sup path (small, unpacked: BLIS's
 * term), which reads op(B) in place) first write Br (and, for op(A) = A^T, Ar) whole into a
 * per-thread buffer and run the real call on it: for them that write is the packing.
 *
 * The kernel and the cache blocks are the real dtype's (f32 for c64, f64 for c128): registry,
 * wisdom and overrides of the real dtype apply to its complex dtype.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "omp/gemm/gemm_tune.h"
#include "omp/omp_internal.h"

/* ---------------------------------------------------------------- packing ------------- */

/* Element (p, j) of op(B) as a pair of T: B's storage at b (complex, ldb in complex elements). */
#define TSR__CX_B(T, g, p, j)                                                                      \
  ((const T *)(g)->b + 2 * ((g)->trans_b ? (j) * (g)->ldb + (p) : (p) * (g)->ldb + (j)))

/*
 * The 1m B panel: rows [2*p0, 2*p0 + kc) and columns [2*j0, 2*j0 + nc) of Br (kc and nc even,
 * in real elements) into NR-column micro-panels (the packers' layout,
 * kernels/portable/gemm_pack_portable.c: panel q, row r at bp + q*NR*kc + r*NR), columns past nc
 * zero.
 *
 * op(B) = B (rows of op(B) are rows of the storage): TSR__CX_ROWS complex rows at a time are
 * packed across every micro-panel, each row of the storage read once, front to back, and
 * 2*TSR__CX_ROWS rows of each panel (1 KiB with AVX-512's NR) written contiguously, as the real
 * path's AVX-512 packer does (kernels/avx512/gemm_pack_avx512.c). It had packed one micro-panel at
 * a time, reading 8 (c128) or 16 (c64) complex elements of each of kc/2 rows ldb apart before the
 * next panel: a column walk a page or two a row apart that the prefetchers do not follow, bound on
 * the loads. Measured on Zen 4 (one thread, zgemm 512^3 through CBLAS, perf): the packing of B was
 * 17 % of the call's cycles, 86 % of them on that load; this order, 4 %. alpha 1 without conj(A)
 * (the common call) has its own loops, with the signs known; op(B) = B^T keeps the panel-at-a-time
 * walk (each column of op(B) is contiguous there).
 */
#define TSR__CX_ROWS 4
#define TSR__PACK_B_1M_PAIRS(T, EXPR_R0, EXPR_R1)                                                  \
  for (int64_t j = 0; j < jb; ++j) {                                                               \
    const T xr = s[2 * j], xi = s[2 * j + 1];                                                      \
    (void)xr;                                                                                      \
    (void)xi;                                                                                      \
    EXPR_R0;                                                                                       \
    EXPR_R1;                                                                                       \
  }

/* One complex row (src) of one panel: real rows r0, r1 = r0 + nr, jb pairs, then zeros to nr. */
#define TSR__PACK_B_1M_ROW(T)                                                                      \
  static inline __attribute__((always_inline)) void tsr__pack_b_1m_row_##T(                        \
      int mode, T ar, T ai, const T *restrict s, int64_t jb, int nr, T *restrict r0) {             \
    T *restrict r1 = r0 + nr;                                                                      \
    switch (mode) {                                                                                \
    case 0: /* alpha 1, no conjugation: [[xr, xi], [-xi, xr]] */                                   \
      TSR__PACK_B_1M_PAIRS(T, (r0[2 * j] = xr, r0[2 * j + 1] = xi),                                \
                           (r1[2 * j] = -xi, r1[2 * j + 1] = xr))                                  \
      break;                                                                                       \
    case 1: /* alpha 1, conj(B): y = (xr, -xi) */                                                  \
      TSR__PACK_B_1M_PAIRS(T, (r0[2 * j] = xr, r0[2 * j + 1] = -xi),                               \
                           (r1[2 * j] = xi, r1[2 * j + 1] = xr))                                   \
      break;                                                                                       \
    default: { /* general: y = alpha * (xr, sb xi); rows [yr, yi], [-sa yi, sa yr] */              \
      const T sb = (mode & 2) ? (T)-1 : (T)1, sa = (mode & 4) ? (T)-1 : (T)1;                      \
      for (int64_t j = 0; j < jb; ++j) {                                                           \
        const T xr = s[2 * j], xi = sb * s[2 * j + 1];                                             \
        const T yr = ar * xr - ai * xi, yi = ar * xi + ai * xr;                                    \
        r0[2 * j] = yr;                                                                            \
        r0[2 * j + 1] = yi;                                                                        \
        r1[2 * j] = -sa * yi;                                                                      \
        r1[2 * j + 1] = sa * yr;                                                                   \
      }                                                                                            \
    }                                                                                              \
    }                                                                                              \
    for (int64_t j = 2 * jb; j < nr; ++j)                                                          \
      r0[j] = r1[j] = 0;                                                                           \
  }
TSR__PACK_B_1M_ROW(float)
TSR__PACK_B_1M_ROW(double)

#define TSR__PACK_B_1M(T)                                                                          \
  const T ar = (T)g->alpha, ai = (T)g->alpha_im;                                                   \
  const T sb = g->conj_b ? (T)-1 : (T)1, sa = g->conj_a ? (T)-1 : (T)1;                            \
  const int64_t kp = kc / 2, h = nr / 2;                                                           \
  if (!g->trans_b) {                                                                               \
    /* 0: alpha 1; 1: alpha 1 and conj(B); else 8 + 2*conj(B) + 4*conj(A), general. */             \
    const bool one = ar == 1 && ai == 0 && !g->conj_a;                                             \
    const int mode = one ? (g->conj_b ? 1 : 0) : 8 | (g->conj_b ? 2 : 0) | (g->conj_a ? 4 : 0);    \
    const int64_t np = (nc + nr - 1) / nr;                                                         \
    for (int64_t p1 = 0; p1 < kp; p1 += TSR__CX_ROWS) {                                            \
      const int64_t pe = p1 + TSR__CX_ROWS < kp ? p1 + TSR__CX_ROWS : kp;                          \
      for (int64_t q = 0; q < np; ++q) {                                                           \
        const int64_t jb = (nc - q * nr < nr ? nc - q * nr : nr) / 2;                              \
        for (int64_t p = p1; p < pe; ++p)                                                          \
          tsr__pack_b_1m_row_##T(mode, ar, ai, TSR__CX_B(T, g, p0 + p, j0 + q * h), jb, nr,        \
                                 bp + q * nr * kc + 2 * p * nr);                                   \
      }                                                                                            \
    }                                                                                              \
    return;                                                                                        \
  }                                                                                                \
  for (int64_t q0 = 0; q0 < nc; q0 += nr) {                                                        \
    T *dst = bp + q0 * kc;                                                                         \
    const int64_t jb = (nc - q0 < nr ? nc - q0 : nr) / 2, jq = j0 + q0 / 2;                        \
    for (int64_t j = 0; j < jb; ++j) {                                                             \
      const T *src = TSR__CX_B(T, g, p0, jq + j);                                                  \
      for (int64_t p = 0; p < kp; ++p) {                                                           \
        const T xr = src[2 * p], xi = sb * src[2 * p + 1];                                         \
        const T yr = ar * xr - ai * xi, yi = ar * xi + ai * xr;                                    \
        T *r0 = dst + 2 * p * nr + 2 * j, *r1 = r0 + nr;                                           \
        r0[0] = yr;                                                                                \
        r0[1] = yi;                                                                                \
        r1[0] = -sa * yi;                                                                          \
        r1[1] = sa * yr;                                                                           \
      }                                                                                            \
    }                                                                                              \
    if (jb < h)                                                                                    \
      for (int64_t r = 0; r < kc; ++r)                                                             \
        memset(dst + r * nr + 2 * jb, 0, (size_t)(nr - 2 * jb) * sizeof(T));                       \
  }

static void tsr__gemm_pack_b_1m_f32(const tsr__gemm_args *g, int nr, int64_t p0, int64_t j0,
                                    int64_t kc, int64_t nc, float *bp) {
  TSR__PACK_B_1M(float)
}
static void tsr__gemm_pack_b_1m_f64(const tsr__gemm_args *g, int nr, int64_t p0, int64_t j0,
                                    int64_t kc, int64_t nc, double *bp) {
  TSR__PACK_B_1M(double)
}

/*
 * The A block of op(A) = A^T (complex A stored k x m, lda in complex elements): rows
 * [i0, i0 + mc) and real columns [2*p0, 2*p0 + kc) of Ar (kc even) into MR-row micro-panels
 * (panel r, real column q at ap + r*MR*kc + q*MR), rows past mc zero. Row p of A's storage is
 * read once, front to back.
 */
#define TSR__PACK_A_1M(T)                                                                          \
  const T *a = g->a;                                                                               \
  for (int64_t p = 0; p < kc / 2; ++p) {                                                           \
    const T *src = a + 2 * ((p0 + p) * g->lda + i0);                                               \
    for (int64_t r0 = 0; r0 < mc; r0 += mr) {                                                      \
      const int ib = (int)(mc - r0 < mr ? mc - r0 : mr);                                           \
      T *d0 = ap + r0 * kc + 2 * p * mr, *d1 = d0 + mr;                                            \
      for (int i = 0; i < ib; ++i) {                                                               \
        d0[i] = src[2 * (r0 + i)];                                                                 \
        d1[i] = src[2 * (r0 + i) + 1];                                                             \
      }                                                                                            \
      for (int i = ib; i < mr; ++i)                                                                \
        d0[i] = d1[i] = 0;                                                                         \
    }                                                                                              \
  }

static void tsr__gemm_pack_a_1m_f32(const tsr__gemm_args *g, int mr, int64_t i0, int64_t p0,
                                    int64_t mc, int64_t kc, float *ap) {
  TSR__PACK_A_1M(float)
}
static void tsr__gemm_pack_a_1m_f64(const tsr__gemm_args *g, int mr, int64_t i0, int64_t p0,
                                    int64_t mc, int64_t kc, double *ap) {
  TSR__PACK_A_1M(double)
}

/* ---------------------------------------------------------------- beta ---------------- */

/* C = beta C with the complex beta (beta 0: zeros, C not read). */
#define TSR__CX_SCALE(T)                                                                           \
  const T br = (T)g->beta, bi = (T)g->beta_im;                                                     \
  for (int64_t i = 0; i < g->m; ++i) {                                                             \
    T *row = (T *)g->c + 2 * i * g->ldc;                                                           \
    if (br == 0 && bi == 0) {                                                                      \
      memset(row, 0, (size_t)(2 * g->n) * sizeof(T));                                              \
    } else if (bi == 0 && br == 1) {                                                               \
    } else {                                                                                       \
      for (int64_t j = 0; j < g->n; ++j) {                                                         \
        const T xr = row[2 * j], xi = row[2 * j + 1];                                              \
        row[2 * j] = br * xr - bi * xi;                                                            \
        row[2 * j + 1] = br * xi + bi * xr;                                                        \
      }                                                                                            \
    }                                                                                              \
  }

static void tsr__gemm_cx_scale(const tsr__gemm_args *g) {
  if (g->dtype == TSR_C64) {
    TSR__CX_SCALE(float)
  } else {
    TSR__CX_SCALE(double)
  }
}

/* ---------------------------------------------------------------- staging buffer ------ */

/* The small calls' Br (and Ar) buffer, per thread (freed at the thread's exit), separate from
   the driver's packing buffer, which the real call they run may use. */
typedef struct tsr__cx_cache {
  void *ptr;
  size_t bytes;
} tsr__cx_cache;
static pthread_key_t tsr__cx_key;
static pthread_once_t tsr__cx_once = PTHREAD_ONCE_INIT;
static int tsr__cx_key_err;

static void tsr__cx_cache_free(void *p) {
  tsr__cx_cache *c = p;
  if (!c) return;
  tsr__host_free(c->ptr);
  free(c);
}
static void tsr__cx_key_create(void) {
  tsr__cx_key_err = pthread_key_create(&tsr__cx_key, tsr__cx_cache_free);
}

static tsr_status tsr__cx_buffer(size_t bytes, void **out) {
  pthread_once(&tsr__cx_once, tsr__cx_key_create);
  if (tsr__cx_key_err)
    return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__,
                          "cannot create the thread-local complex staging buffer key");
  tsr__cx_cache *c = pthread_getspecific(tsr__cx_key);
  if (!c) {
    c = calloc(1, sizeof *c);
    if (!c || pthread_setspecific(tsr__cx_key, c) != 0) {
      free(c);
      return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__,
                            "cannot allocate the thread-local complex staging buffer");
    }
  }
  if (c->bytes < bytes) {
    void *p = NULL;
    tsr__host_free(c->ptr);
    c->ptr = NULL;
    c->bytes = 0;
    TSR_CALL(tsr__host_alloc(bytes + bytes / 2, &p));
    c->ptr = p;
    c->bytes = bytes + bytes / 2;
  }
  *out = c->ptr;
  return TSR_OK;
}

void tsr__gemm_complex_trim(void) {
  pthread_once(&tsr__cx_once, tsr__cx_key_create);
  if (tsr__cx_key_err) return;
  tsr__cx_cache *c = pthread_getspecific(tsr__cx_key);
  if (!c) return;
  tsr__host_free(c->ptr);
  c->ptr = NULL;
  c->bytes = 0;
}

/* Ar of op(A) = A^T, whole: m x 2k real, row-major, leading dimension 2k. */
#define TSR__STAGE_A(T)                                                                            \
  const T *a = g->a;                                                                               \
  for (int64_t p = 0; p < g->k; ++p) {                                                             \
    const T *src = a + 2 * p * g->lda;                                                             \
    for (int64_t i = 0; i < g->m; ++i) {                                                           \
      dst[i * 2 * g->k + 2 * p] = src[2 * i];                                                      \
      dst[i * 2 * g->k + 2 * p + 1] = src[2 * i + 1];                                              \
    }                                                                                              \
  }

/* ---------------------------------------------------------------- entry --------------- */

/* The most bytes of Br (and Ar) staged on the stack. */
#define TSR__CX_STACK_BYTES 32768

tsr_status tsr__gemm_complex(const tsr__gemm_args *g) {
  if (g->m == 0 || g->n == 0) return TSR_OK;
  const bool alpha0 = g->alpha == 0 && g->alpha_im == 0;
  if (alpha0 || g->k == 0 || g->beta_im != 0) {
    tsr__gemm_cx_scale(g);
    if (alpha0 || g->k == 0) return TSR_OK;
  }
  const tsr_dtype rt = g->dtype == TSR_C64 ? TSR_F32 : TSR_F64;
  const size_t es = rt == TSR_F64 ? 8 : 4;
  /* The real form: C as m x 2n (ldc 2 ldc), op(A) as m x 2k, Br 2k x 2n, alpha folded into Br. */
  tsr__gemm_args r = *g;
  r.dtype = rt;
  r.n = 2 * g->n;
  r.k = 2 * g->k;
  r.alpha = 1.0;
  r.alpha_im = 0.0;
  r.beta = g->beta_im != 0 ? 1.0 : g->beta;
  r.beta_im = 0.0;
  r.conj_a = r.conj_b = false;
  r.trans_a = false;
  r.lda = 2 * g->lda;
  r.trans_b = false;
  r.ldb = r.n;
  r.ldc = 2 * g->ldc;
  /* Would the real form, Br read in place, run on the sup path? */
  tsr__gemm_config cfg;
  if (g->tuning == NULL)
    cfg = tsr__gemm_serial_get(rt)->cfg;
  else
    tsr__gemm_config_get(rt, 1, g->tuning, &cfg);
  if (g->trans_a) r.lda = r.k;
  if (tsr__gemm_sup_path(&r, &cfg)) {
    const size_t bbytes = (size_t)r.k * (size_t)r.n * es;
    const size_t abytes = g->trans_a ? (size_t)r.m * (size_t)r.k * es : 0;
    /* Tiny calls stage on the stack (no thread-local lookup): 16^3..32^3 c128 fit. */
    _Alignas(64) unsigned char stack[TSR__CX_STACK_BYTES];
    void *buf = stack;
    if (bbytes + abytes > sizeof stack) TSR_CALL(tsr__cx_buffer(bbytes + abytes + 64, &buf));
    if (rt == TSR_F32) {
      float *bp = buf;
      /* Br as one "micro-panel" of NR = 2n columns: exactly its row-major form. */
      tsr__gemm_pack_b_1m_f32(g, (int)r.n, 0, 0, r.k, r.n, bp);
      if (g->trans_a) {
        float *dst = bp + r.k * r.n;
        TSR__STAGE_A(float)
        r.a = dst;
      }
    } else {
      double *bp = buf;
      tsr__gemm_pack_b_1m_f64(g, (int)r.n, 0, 0, r.k, r.n, bp);
      if (g->trans_a) {
        double *dst = bp + r.k * r.n;
        TSR__STAGE_A(double)
        r.a = dst;
      }
    }
    r.b = buf;
    return tsr__gemm_real(&r, NULL);
  }
  r.lda = 2 * g->lda;
  r.b = NULL; /* packed from g by the 1m packers */
  const tsr__gemm_induced ind = {.cx = g,
                                 .pack_b_f32 = tsr__gemm_pack_b_1m_f32,
                                 .pack_b_f64 = tsr__gemm_pack_b_1m_f64,
                                 .pack_a_f32 = tsr__gemm_pack_a_1m_f32,
                                 .pack_a_f64 = tsr__gemm_pack_a_1m_f64};
  return tsr__gemm_real(&r, &ind);
}
