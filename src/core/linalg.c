/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tsr_matmul, tsr_gemm, tsr_gemm_ex: validation, layout normalization and dispatch.
 *
 * Backends see one GEMM form only (tsr__gemm_args: row-major C, operands row-major with a
 * leading dimension and a transpose flag). Any other layout is mapped onto it here:
 *  - an operand stored column-major is the row-major storage of its transpose, so it flips
 *    its transpose flag instead of being copied;
 *  - a column-major C is computed as C^T = op(B)^T op(A)^T, which swaps the operands;
 *  - only layouts with no unit stride (or negative strides) are copied to a contiguous
 *    temporary first.
 * This is what lets the MPI layer hand over its column-major (ScaLAPACK) local blocks and
 * the BLAS drop-in its column-major user matrices without a copy.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

/* A 2-D strided matrix on a device: element (i, j) at data + (i*rs + j*cs) * esize. */
typedef struct tsr__mat {
  char *data;
  int64_t rows, cols;
  int64_t rs, cs;
} tsr__mat;

/* The operand in the backend's form: pointer, leading dimension and effective transpose. */
typedef struct tsr__operand {
  const void *data;
  int64_t ld;
  bool trans;
} tsr__operand;

/* A call's scalars: alpha and beta with their imaginary parts (0 for the real dtypes), and
   whether op(A), op(B) conjugate (complex dtypes with TSR_CONJ_TRANS). */
typedef struct tsr__gemm_scalars {
  double alpha, alpha_im, beta, beta_im;
  bool conj_a, conj_b;
} tsr__gemm_scalars;

static inline bool tsr__alpha_nonzero(const tsr__gemm_scalars *s) {
  return s->alpha != 0.0 || s->alpha_im != 0.0;
}
static inline bool tsr__beta_nonzero(const tsr__gemm_scalars *s) {
  return s->beta != 0.0 || s->beta_im != 0.0;
}

static int64_t tsr__max1(int64_t x) {
  return x > 1 ? x : 1;
}

/*
 * Describes the stored matrix x (rows x cols) as a row-major matrix with a leading dimension,
 * possibly of its transpose. Returns false when neither stride is unit (or one is negative).
 * Inlined: three times per small tsr_gemm call.
 */
static inline __attribute__((always_inline)) bool tsr__as_row_major(const tsr__mat *x,
                                                                    bool *transposed, int64_t *ld) {
  if (x->rs < 0 || x->cs < 0) return false;
  bool unit_col = x->cs == 1 || x->cols <= 1;
  bool unit_row = x->rs == 1 || x->rows <= 1;
  /* Row-major: consecutive columns adjacent, rows ld apart with ld >= cols. */
  if (unit_col && (x->rows <= 1 || x->rs >= tsr__max1(x->cols))) {
    *transposed = false;
    *ld = x->rows <= 1 ? tsr__max1(x->cols) : x->rs;
    return true;
  }
  /* Column-major: the row-major storage of x^T (cols x rows) with ld >= rows. */
  if (unit_row && (x->cols <= 1 || x->cs >= tsr__max1(x->rows))) {
    *transposed = true;
    *ld = x->cols <= 1 ? tsr__max1(x->rows) : x->cs;
    return true;
  }
  return false;
}

static tsr__view tsr__mat_view(const tsr__mat *x, tsr_dtype dtype) {
  tsr__view v; /* every field assigned, no memset (tsr__view_of) */
  v.data = x->data;
  v.dtype = dtype;
  v.ndim = 2;
  v.shape[0] = x->rows;
  v.shape[1] = x->cols;
  v.strides[0] = x->rs;
  v.strides[1] = x->cs;
  for (int i = 2; i < TSR_MAX_DIMS; ++i)
    v.shape[i] = v.strides[i] = 0;
  return v;
}

/* A C-contiguous copy of x on the device (when `copy_values`, else uninitialized). */
static tsr_status tsr__mat_temp(const struct tsr__backend_ops *ops, tsr_device dev, tsr_dtype dtype,
                                const tsr__mat *x, bool copy_values, tsr_array **tmp,
                                tsr__mat *out) {
  int64_t shape[2] = {x->rows, x->cols};
  TSR_CALL(tsr__array_alloc(2, shape, dtype, dev, 0, tmp));
  tsr__view tv = tsr__view_of(*tmp);
  out->data = tv.data;
  out->rows = x->rows;
  out->cols = x->cols;
  out->rs = tsr__max1(x->cols);
  out->cs = 1;
  if (copy_values && x->rows > 0 && x->cols > 0) {
    tsr__view sv = tsr__mat_view(x, dtype);
    tsr_status st = ops->copy(dev, &tv, &sv);
    if (st != TSR_OK) {
      tsr_array_release(*tmp);
      *tmp = NULL;
      return st;
    }
  }
  return TSR_OK;
}

/* An operand in backend form without a copy; false when its layout needs one. */
static bool tsr__operand_in_place(const tsr__mat *x, bool trans, tsr__operand *out) {
  bool t;
  if (!tsr__as_row_major(x, &t, &out->ld)) return false;
  out->data = x->data;
  out->trans = trans != t;
  return true;
}

/* Brings an operand into backend form, copying it to *tmp only when its layout needs it. */
static tsr_status tsr__linalg_operand(const struct tsr__backend_ops *ops, tsr_device dev,
                                      tsr_dtype dtype, const tsr__mat *x, bool trans,
                                      tsr_array **tmp, tsr__operand *out) {
  if (tsr__operand_in_place(x, trans, out)) return TSR_OK;
  tsr__mat m;
  TSR_CALL(tsr__mat_temp(ops, dev, dtype, x, true, tmp, &m));
  out->data = m.data;
  out->ld = m.rs;
  out->trans = trans;
  return TSR_OK;
}

/* Bytes spanned by a row-major rows x cols matrix with leading dimension ld (rows, cols >= 1);
   false on overflow. */
static bool tsr__linalg_host_span(int64_t rows, int64_t cols, int64_t ld, int64_t es,
                                  int64_t *bytes) {
  /* The compiler's checked arithmetic, inline: this runs three times per tsr_gemm_host call. */
  int64_t e;
  return !__builtin_mul_overflow(rows - 1, ld, &e) && !__builtin_add_overflow(e, cols, &e) &&
         !__builtin_mul_overflow(e, es, bytes);
}

static bool tsr__spans_meet(const void *x, int64_t xb, const void *y, int64_t yb) {
  const uintptr_t a = (uintptr_t)x, b = (uintptr_t)y;
  return a < b + (uintptr_t)yb && b < a + (uintptr_t)xb;
}

/*
 * The backend's arguments for C (m x n, stored at c: row-major with ldc, or column-major when
 * c_t) = alpha op(A) op(B) + beta C, the operands in backend form. A column-major C is computed
 * as C^T (n x m) = op(B)^T op(A)^T: an operand whose row-major form has flag t is, transposed,
 * the same storage with flag !t.
 */
static tsr__gemm_args tsr__gemm_form(tsr_dtype dtype, int64_t m, int64_t n, int64_t k,
                                     const tsr__gemm_scalars *sc, const tsr__operand *oa,
                                     const tsr__operand *ob, void *c, int64_t ldc, bool c_t,
                                     tsr_gemm_path path) {
  const tsr__operand *x = c_t ? ob : oa, *y = c_t ? oa : ob;
  tsr__gemm_args g =
      tsr__gemm_args_host(dtype, x->trans != c_t, y->trans != c_t, c_t ? n : m, c_t ? m : n, k,
                          sc->alpha, x->data, x->ld, y->data, y->ld, sc->beta, c, ldc, path);
  /* (conj(X))^T = conj(X^T): a conjugation stays with its operand through the swap. */
  g.conj_a = c_t ? sc->conj_b : sc->conj_a;
  g.conj_b = c_t ? sc->conj_a : sc->conj_b;
  g.alpha_im = sc->alpha_im;
  g.beta_im = sc->beta_im;
  return g;
}

/*
 * The CPU backend's tiny lane (gemm_tiny) for a call in backend form on host memory with m, n,
 * k > 0 and alpha != 0: true when it ran the call, false having done nothing (too large, C's
 * span meets A's or B's, or the lane declined: a vendor path, or B's strips would need a
 * buffer). Shared by the BLAS drop-in and tsr_gemm on host arrays (internal.h).
 */
bool tsr__gemm_host_tiny(const tsr__gemm_args *g) {
  /* The CPU lane's own bound is at most this (64^3 f32 with a 1 MiB L2); larger calls skip the
     spans. The lane takes the real dtypes only (complex calls go to the backend's gemm). */
  if ((double)g->m * (double)g->n * (double)g->k > (double)(1 << 18) ||
      !tsr__omp_backend.gemm_tiny || (g->dtype != TSR_F32 && g->dtype != TSR_F64))
    return false;
  const int64_t es = g->dtype == TSR_F64 ? 8 : 4;
  const int64_t ar = g->trans_a ? g->k : g->m, ac = g->trans_a ? g->m : g->k;
  const int64_t br = g->trans_b ? g->n : g->k, bc = g->trans_b ? g->k : g->n;
  int64_t abytes, bbytes, cbytes;
  if (!tsr__linalg_host_span(ar, ac, g->lda, es, &abytes) ||
      !tsr__linalg_host_span(br, bc, g->ldb, es, &bbytes) ||
      !tsr__linalg_host_span(g->m, g->n, g->ldc, es, &cbytes) ||
      tsr__spans_meet(g->a, abytes, g->c, cbytes) || tsr__spans_meet(g->b, bbytes, g->c, cbytes))
    return false;
  return tsr__omp_backend.gemm_tiny(g);
}

/* tsr__gemm_mats on the CPU through the tiny lane: true when the call ran there (every matrix
   in backend form without a copy, and tsr__gemm_host_tiny took it), false having done nothing.
   m, n, k > 0 and alpha != 0. */
static bool tsr__gemm_mats_tiny(tsr_dtype dtype, bool ta, bool tb, const tsr__gemm_scalars *sc,
                                const tsr__mat *a, const tsr__mat *b, const tsr__mat *c,
                                tsr_gemm_path path) {
  if (dtype != TSR_F32 && dtype != TSR_F64) return false;
  tsr__operand oa, ob;
  bool c_t;
  int64_t ldc;
  if (!tsr__as_row_major(c, &c_t, &ldc) || !tsr__operand_in_place(a, ta, &oa) ||
      !tsr__operand_in_place(b, tb, &ob))
    return false;
  const tsr__gemm_args g = tsr__gemm_form(dtype, c->rows, c->cols, ta ? a->rows : a->cols, sc, &oa,
                                          &ob, c->data, ldc, c_t, path);
  return tsr__gemm_host_tiny(&g);
}

/*
 * C (m x n) = alpha op(A) op(B) + beta C on strided matrices of one device. A and B are the
 * STORED matrices (op applied through ta/tb). The caller has validated shapes and dtypes.
 * try_tiny: first offer a CPU call to the tiny lane (false when the caller just offered it these
 * matrices).
 */
static tsr_status tsr__gemm_mats(const struct tsr__backend_ops *ops, tsr_device dev,
                                 tsr_dtype dtype, bool ta, bool tb, const tsr__gemm_scalars *sc,
                                 const tsr__mat *a, const tsr__mat *b, const tsr__mat *c,
                                 tsr_gemm_path path, bool try_tiny) {
  int64_t m = c->rows, n = c->cols;
  int64_t k = ta ? a->rows : a->cols;
  if (m == 0 || n == 0) return TSR_OK;
  const bool alpha_nz = tsr__alpha_nonzero(sc);
  if (try_tiny && dev.kind == TSR_DEVICE_CPU && alpha_nz && k > 0 &&
      tsr__gemm_mats_tiny(dtype, ta, tb, sc, a, b, c, path)) {
    tsr__count(TSR__COUNT_GEMM_CALLS, 1);
    return TSR_OK;
  }
  tsr_status st = TSR_OK;
  tsr_array *ta_tmp = NULL, *tb_tmp = NULL, *tc_tmp = NULL;
  tsr__operand oa = {0}, ob = {0};
  tsr__mat cm = *c;
  bool c_t = false;
  int64_t ldc = 0;
  bool c_copied = false;
  if (!tsr__as_row_major(&cm, &c_t, &ldc)) {
    /* C has no unit stride: compute into a contiguous temporary and copy back. */
    TSR_CALL_GOTO(st, done, tsr__mat_temp(ops, dev, dtype, c, tsr__beta_nonzero(sc), &tc_tmp, &cm));
    c_t = false;
    ldc = cm.rs;
    c_copied = true;
  }
  if (alpha_nz && k > 0) {
    TSR_CALL_GOTO(st, done, tsr__linalg_operand(ops, dev, dtype, a, ta, &ta_tmp, &oa));
    TSR_CALL_GOTO(st, done, tsr__linalg_operand(ops, dev, dtype, b, tb, &tb_tmp, &ob));
  } else {
    /* A and B are not read; any valid leading dimensions will do. */
    oa.data = a->data;
    oa.ld = tsr__max1(ta ? m : k);
    oa.trans = ta;
    ob.data = b->data;
    ob.ld = tsr__max1(tb ? k : n);
    ob.trans = tb;
  }

  const tsr__gemm_args args = tsr__gemm_form(dtype, m, n, k, sc, &oa, &ob, cm.data, ldc, c_t, path);
  TSR_CALL_GOTO(st, done, ops->gemm(dev, &args));
  tsr__count(TSR__COUNT_GEMM_CALLS, 1);

  if (c_copied) {
    tsr__view dv = tsr__mat_view(c, dtype);
    tsr__view sv = tsr__mat_view(&cm, dtype);
    TSR_CALL_GOTO(st, done, ops->copy(dev, &dv, &sv));
  }
done:
  tsr_array_release(ta_tmp);
  tsr_array_release(tb_tmp);
  tsr_array_release(tc_tmp);
  return st;
}

/* x is 2-D (checked by the callers). */
static tsr__mat tsr__mat_of(const tsr_array *x) {
  tsr__mat m = {(char *)tsr__array_ptr(x), x->shape[0], x->shape[1], x->strides[0], x->strides[1]};
  return m;
}

tsr_status tsr__gemm_resolve_path(tsr_gemm_path requested, tsr_gemm_path *out) {
  if (requested == TSR_GEMM_NATIVE || requested == TSR_GEMM_VENDOR) {
    *out = requested;
    return TSR_OK;
  }
  if (requested != TSR_GEMM_AUTO)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "gemm path %d is not TSR_GEMM_AUTO, TSR_GEMM_NATIVE or TSR_GEMM_VENDOR",
                          (int)requested);
  static const tsr_gemm_path paths[] = {TSR_GEMM_AUTO, TSR_GEMM_NATIVE, TSR_GEMM_VENDOR};
  *out = TSR_GEMM_AUTO;
  const int i = tsr__env_choice(TSR__ENV_GEMM); /* "auto|native|vendor" */
  if (i < 0) return TSR_ERR_INVALID_ARGUMENT;   /* the reader set the message */
  *out = paths[i]; /* auto: the backend chooses per call (tsr__gemm_args.path) */
  return TSR_OK;
}

/* Checks that a and b have the same float dtype and device; `what` names them. */
static tsr_status tsr__check_pair(const tsr_array *a, const char *an, const tsr_array *b,
                                  const char *bn) {
  if (a->dtype != b->dtype)
    return tsr__set_error(TSR_ERR_DTYPE, __func__, "dtypes differ: %s is %s, %s is %s", an,
                          tsr_dtype_name(a->dtype), bn, tsr_dtype_name(b->dtype));
  if (!tsr__dtype_is_float(a->dtype))
    return tsr__set_error(TSR_ERR_DTYPE, __func__,
                          "matrix multiplication needs f32, f64, c64 or c128, %s is %s (use "
                          "tsr_astype)",
                          an, tsr_dtype_name(a->dtype));
  tsr_device da = a->buffer->device, db = b->buffer->device;
  if (!tsr_device_equal(da, db)) {
    char sa[32], sb[32];
    tsr_device_string(da, sa, sizeof sa);
    tsr_device_string(db, sb, sizeof sb);
    return tsr__set_error(TSR_ERR_DEVICE_MISMATCH, __func__, "%s is on %s, %s is on %s", an, sa, bn,
                          sb);
  }
  return TSR_OK;
}

/* transa and transb are each TSR_NO_TRANS, TSR_TRANS or TSR_CONJ_TRANS (the GEMM entries' one
   check). */
static inline tsr_status tsr__check_trans(tsr_trans transa, tsr_trans transb) {
  if ((unsigned)transa <= (unsigned)TSR_CONJ_TRANS && (unsigned)transb <= (unsigned)TSR_CONJ_TRANS)
    return TSR_OK;
  return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                        "transa is %d and transb is %d; each must be TSR_NO_TRANS (0), "
                        "TSR_TRANS (1) or TSR_CONJ_TRANS (2)",
                        (int)transa, (int)transb);
}

/* The scalars of a call: TSR_CONJ_TRANS conjugates for a complex dtype only (for a real one it
   is TSR_TRANS). */
static inline tsr__gemm_scalars tsr__scalars(tsr_dtype dtype, tsr_trans transa, tsr_trans transb,
                                             double alpha, double alpha_im, double beta,
                                             double beta_im) {
  const bool cplx = dtype == TSR_C64 || dtype == TSR_C128;
  tsr__gemm_scalars sc = {alpha,
                          alpha_im,
                          beta,
                          beta_im,
                          cplx && transa == TSR_CONJ_TRANS,
                          cplx && transb == TSR_CONJ_TRANS};
  return sc;
}

/*
 * tsr_gemm's checks, in the order of their messages, with one test for the common case: the
 * dtype and device pairs go through tsr__check_pair (for its messages) only when one differs.
 * On success dims = {m, n, k}.
 */
static tsr_status tsr__gemm_check(tsr_trans transa, tsr_trans transb, const tsr_array *a,
                                  const tsr_array *b, const tsr_array *c, int64_t dims[3]) {
  if (!a || !b || !c)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", !a ? "a" : !b ? "b" : "c");
  TSR_CALL(tsr__check_trans(transa, transb));
  if (a->ndim != 2 || b->ndim != 2 || c->ndim != 2)
    return tsr__set_error(TSR_ERR_SHAPE, __func__,
                          "a, b and c must be 2-D; they have %d, %d, %d axes", a->ndim, b->ndim,
                          c->ndim);
  const tsr_device da = a->buffer->device, db = b->buffer->device, dc = c->buffer->device;
  if (a->dtype != b->dtype || a->dtype != c->dtype || !tsr__dtype_is_float(a->dtype) ||
      da.kind != db.kind || da.index != db.index || da.kind != dc.kind || da.index != dc.index) {
    TSR_CALL(tsr__check_pair(a, "a", b, "b"));
    TSR_CALL(tsr__check_pair(a, "a", c, "c"));
  }
  const bool ta = transa != TSR_NO_TRANS, tb = transb != TSR_NO_TRANS;
  int64_t m = ta ? a->shape[1] : a->shape[0], ka = ta ? a->shape[0] : a->shape[1];
  int64_t kb = tb ? b->shape[1] : b->shape[0], n = tb ? b->shape[0] : b->shape[1];
  if (ka != kb)
    return tsr__set_error(TSR_ERR_SHAPE, __func__,
                          "inner dimensions differ: op(a) is %lldx%lld, op(b) is %lldx%lld",
                          (long long)m, (long long)ka, (long long)kb, (long long)n);
  if (c->shape[0] != m || c->shape[1] != n)
    return tsr__set_error(TSR_ERR_SHAPE, __func__, "c is %lldx%lld but op(a) op(b) is %lldx%lld",
                          (long long)c->shape[0], (long long)c->shape[1], (long long)m,
                          (long long)n);
  if (m > 0 && n > 0 &&
      ((c->shape[0] > 1 && c->strides[0] == 0) || (c->shape[1] > 1 && c->strides[1] == 0)))
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "c is a broadcast view (stride 0): its elements overlap");
  dims[0] = m;
  dims[1] = n;
  dims[2] = ka;
  return TSR_OK;
}

static tsr_status tsr__gemm_entry(tsr_trans transa, tsr_trans transb, tsr_complex128 alpha_z,
                                  const tsr_array *a, const tsr_array *b, tsr_complex128 beta_z,
                                  tsr_array *c, tsr_gemm_path path) {
  int64_t dims[3] = {0, 0, 0};
  TSR_CALL(tsr__gemm_check(transa, transb, a, b, c, dims));
  const int64_t m = dims[0], n = dims[1], k = dims[2];
  const bool ta = transa != TSR_NO_TRANS, tb = transb != TSR_NO_TRANS;
  if (!tsr__dtype_is_complex(c->dtype) && (alpha_z.im != 0.0 || beta_z.im != 0.0))
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "alpha %g%+gi and beta %g%+gi: the %s arrays take real scalars (the "
                          "imaginary parts must be 0)",
                          alpha_z.re, alpha_z.im, beta_z.re, beta_z.im, tsr_dtype_name(c->dtype));
  const tsr__gemm_scalars sc =
      tsr__scalars(c->dtype, transa, transb, alpha_z.re, alpha_z.im, beta_z.re, beta_z.im);
  const bool alpha_nz = tsr__alpha_nonzero(&sc);
  tsr_gemm_path resolved = TSR_GEMM_AUTO;
  TSR_CALL(tsr__gemm_resolve_path(path, &resolved));
  const tsr_device dev = c->buffer->device;
  tsr__mat am = tsr__mat_of(a), bm = tsr__mat_of(b), cm = tsr__mat_of(c);
  /* A small call on the CPU whose matrices need no copy and whose C shares no memory with A or
     B takes the BLAS drop-in's lane: no allocation, nothing that can fail (issue 31). */
  if (dev.kind == TSR_DEVICE_CPU && dev.index == 0 && alpha_nz && m > 0 && n > 0 && k > 0 &&
      tsr__gemm_mats_tiny(c->dtype, ta, tb, &sc, &am, &bm, &cm, resolved)) {
    tsr__count(TSR__COUNT_GEMM_CALLS, 1);
    return TSR_OK;
  }
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(dev, &ops));
  /* The backends write C while they read A and B. The reference BLAS forbids the overlap;
     here, as in NumPy, an operand that may share memory with C (tsr_gemm(.., a, b, .., a),
     or views of one buffer) is read from a copy taken before C changes. */
  tsr_array *a_copy = NULL, *b_copy = NULL;
  tsr_status st = TSR_OK;
  if (alpha_nz && k > 0 && m > 0 && n > 0) {
    tsr__mat t;
    if (tsr__arrays_may_overlap(a, c)) {
      TSR_CALL_GOTO(st, done, tsr__mat_temp(ops, dev, c->dtype, &am, true, &a_copy, &t));
      am = t;
    }
    if (tsr__arrays_may_overlap(b, c)) {
      TSR_CALL_GOTO(st, done, tsr__mat_temp(ops, dev, c->dtype, &bm, true, &b_copy, &t));
      bm = t;
    }
  }
  /* The lane declined these matrices above; copies are other matrices. */
  st = tsr__gemm_mats(ops, dev, c->dtype, ta, tb, &sc, &am, &bm, &cm, resolved, a_copy || b_copy);
done:
  tsr_array_release(a_copy);
  tsr_array_release(b_copy);
  return st;
}

/* ---------------------------------------------------------------- host pointers ------- */

/* A contiguous (ld = cols) copy of the rows x cols matrix x (ld), or NULL. */
static void *tsr__host_copy(const void *x, int64_t rows, int64_t cols, int64_t ld, int64_t es) {
  /* rows * cols * es <= the span, which fits (tsr__host_span). */
  char *t = malloc((size_t)(rows * cols * es));
  if (t)
    for (int64_t i = 0; i < rows; ++i)
      memcpy(t + i * cols * es, (const char *)x + i * ld * es, (size_t)(cols * es));
  return t;
}

/* tsr_gemm_host's rare case, out of its line: an operand sharing memory with C is read from a
   copy taken first (as tsr_gemm does). */
static __attribute__((noinline)) tsr_status
tsr__gemm_host_copies(const struct tsr__backend_ops *ops, tsr__gemm_args *g, bool copy_a,
                      bool copy_b) {
  const int64_t es = (int64_t)tsr__dtype_size(g->dtype);
  const int64_t ar = g->trans_a ? g->k : g->m, ac = g->trans_a ? g->m : g->k;
  const int64_t br = g->trans_b ? g->n : g->k, bc = g->trans_b ? g->k : g->n;
  void *a_copy = NULL, *b_copy = NULL;
  if (copy_a) {
    if (!(a_copy = tsr__host_copy(g->a, ar, ac, g->lda, es)))
      return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__,
                            "no memory for a copy of a (%lld bytes)", (long long)(ar * ac * es));
    g->a = a_copy;
    g->lda = ac;
  }
  if (copy_b) {
    if (!(b_copy = tsr__host_copy(g->b, br, bc, g->ldb, es))) {
      free(a_copy);
      return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__,
                            "no memory for a copy of b (%lld bytes)", (long long)(br * bc * es));
    }
    g->b = b_copy;
    g->ldb = bc;
  }
  const tsr_status st = ops->gemm(TSR_CPU, g);
  free(a_copy);
  free(b_copy);
  return st;
}

/* tsr_gemm_host and tsr_gemm_host_complex: the checks and the call, scalars in *sc. */
static tsr_status tsr__gemm_host(tsr_dtype dtype, tsr_trans transa, tsr_trans transb, int64_t m,
                                 int64_t n, int64_t k, const tsr__gemm_scalars *sc, const void *a,
                                 int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc) {
  TSR_CALL(tsr__check_trans(transa, transb));
  if (m < 0 || n < 0 || k < 0)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "negative size: m = %lld, n = %lld, k = %lld", (long long)m, (long long)n,
                          (long long)k);
  const bool ta = transa != TSR_NO_TRANS, tb = transb != TSR_NO_TRANS;
  /* Stored shapes: A is (ta ? k x m : m x k), B is (tb ? n x k : k x n), row-major. */
  const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  if (lda < tsr__max1(ac) || ldb < tsr__max1(bc) || ldc < tsr__max1(n))
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "leading dimensions lda = %lld, ldb = %lld, ldc = %lld; they must be at "
                          "least %lld, %lld and %lld (the stored rows' lengths, and 1)",
                          (long long)lda, (long long)ldb, (long long)ldc, (long long)tsr__max1(ac),
                          (long long)tsr__max1(bc), (long long)tsr__max1(n));
  if (m == 0 || n == 0) return TSR_OK;
  if (!c) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "c is NULL");
  const bool reads_ab = tsr__alpha_nonzero(sc) && k > 0;
  if (reads_ab && (!a || !b))
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", !a ? "a" : "b");
  const int64_t es = (int64_t)tsr__dtype_size(dtype);
  int64_t abytes = 0, bbytes = 0, cbytes = 0;
  if (!tsr__linalg_host_span(m, n, ldc, es, &cbytes) ||
      (reads_ab && (!tsr__linalg_host_span(ar, ac, lda, es, &abytes) ||
                    !tsr__linalg_host_span(br, bc, ldb, es, &bbytes))))
    return tsr__set_error(TSR_ERR_OVERFLOW, __func__,
                          "the matrices' extents overflow: m = %lld, n = %lld, k = %lld, lda = "
                          "%lld, ldb = %lld, ldc = %lld",
                          (long long)m, (long long)n, (long long)k, (long long)lda, (long long)ldb,
                          (long long)ldc);
  /* The CPU's table, which every build has (tsr__backend_for's answer for TSR_CPU). */
  const struct tsr__backend_ops *ops = &tsr__omp_backend;
  tsr__gemm_args g = tsr__gemm_args_host(dtype, ta, tb, m, n, k, sc->alpha, a, lda, b, ldb,
                                         sc->beta, c, ldc, TSR_GEMM_NATIVE);
  g.conj_a = sc->conj_a;
  g.conj_b = sc->conj_b;
  g.alpha_im = sc->alpha_im;
  g.beta_im = sc->beta_im;
  const bool copy_a = reads_ab && tsr__spans_meet(a, abytes, c, cbytes);
  const bool copy_b = reads_ab && tsr__spans_meet(b, bbytes, c, cbytes);
  if (copy_a || copy_b) return tsr__gemm_host_copies(ops, &g, copy_a, copy_b);
  return ops->gemm(TSR_CPU, &g);
}

tsr_status tsr_gemm_host(tsr_dtype dtype, tsr_trans transa, tsr_trans transb, int64_t m, int64_t n,
                         int64_t k, double alpha, const void *a, int64_t lda, const void *b,
                         int64_t ldb, double beta, void *c, int64_t ldc) {
  TSR_API_ENTRY();
  if (!tsr__dtype_is_float(dtype))
    return tsr__set_error(TSR_ERR_DTYPE, __func__,
                          "dtype is %s; the GEMM needs f32, f64, c64 or c128",
                          tsr_dtype_name(dtype));
  const tsr__gemm_scalars sc = tsr__scalars(dtype, transa, transb, alpha, 0.0, beta, 0.0);
  return tsr__gemm_host(dtype, transa, transb, m, n, k, &sc, a, lda, b, ldb, c, ldc);
}

/* The value of a scalar given as a pointer to an element of `dtype` (BLAS's convention). */
static tsr_complex128 tsr__scalar_at(tsr_dtype dtype, const void *p) {
  tsr_complex128 z = {0.0, 0.0};
  switch (dtype) {
  case TSR_F32: z.re = *(const float *)p; break;
  case TSR_F64: z.re = *(const double *)p; break;
  case TSR_C64:
    z.re = ((const tsr_complex64 *)p)->re;
    z.im = ((const tsr_complex64 *)p)->im;
    break;
  case TSR_C128: z = *(const tsr_complex128 *)p; break;
  default: break;
  }
  return z;
}

tsr_status tsr_gemm_host_complex(tsr_dtype dtype, tsr_trans transa, tsr_trans transb, int64_t m,
                                 int64_t n, int64_t k, const void *alpha, const void *a,
                                 int64_t lda, const void *b, int64_t ldb, const void *beta, void *c,
                                 int64_t ldc) {
  TSR_API_ENTRY();
  if (!tsr__dtype_is_float(dtype))
    return tsr__set_error(TSR_ERR_DTYPE, __func__,
                          "dtype is %s; the GEMM needs f32, f64, c64 or c128",
                          tsr_dtype_name(dtype));
  if (!alpha || !beta)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", !alpha ? "alpha" : "beta");
  const tsr_complex128 al = tsr__scalar_at(dtype, alpha), be = tsr__scalar_at(dtype, beta);
  const tsr__gemm_scalars sc = tsr__scalars(dtype, transa, transb, al.re, al.im, be.re, be.im);
  return tsr__gemm_host(dtype, transa, transb, m, n, k, &sc, a, lda, b, ldb, c, ldc);
}

tsr_status tsr_gemm_ex(tsr_trans transa, tsr_trans transb, double alpha, const tsr_array *a,
                       const tsr_array *b, double beta, tsr_array *c, tsr_gemm_path path) {
  TSR_API_ENTRY();
  const tsr_complex128 al = {alpha, 0.0}, be = {beta, 0.0};
  return tsr__gemm_entry(transa, transb, al, a, b, be, c, path);
}

tsr_status tsr_gemm(tsr_trans transa, tsr_trans transb, double alpha, const tsr_array *a,
                    const tsr_array *b, double beta, tsr_array *c) {
  TSR_API_ENTRY();
  const tsr_complex128 al = {alpha, 0.0}, be = {beta, 0.0};
  return tsr__gemm_entry(transa, transb, al, a, b, be, c, TSR_GEMM_AUTO);
}

tsr_status tsr_gemm_complex(tsr_trans transa, tsr_trans transb, tsr_complex128 alpha,
                            const tsr_array *a, const tsr_array *b, tsr_complex128 beta,
                            tsr_array *c, tsr_gemm_path path) {
  TSR_API_ENTRY();
  return tsr__gemm_entry(transa, transb, alpha, a, b, beta, c, path);
}

/*
 * tsr_matmul's problem (NumPy matmul semantics) once the operands are promoted and the batch
 * axes broadcast: `count` products (m x k) x (k x n), one per index of the batch shape.
 */
typedef struct tsr__matmul_plan {
  int64_t m, k, n;
  int nbatch;
  int64_t batch[TSR_MAX_DIMS];
  int64_t count; /* product of batch[] */
  /* Batch-axis strides in elements (0 where the operand is broadcast) and matrix strides. */
  int64_t a_bs[TSR_MAX_DIMS], b_bs[TSR_MAX_DIMS], c_bs[TSR_MAX_DIMS];
  int64_t a_rs, a_cs, b_rs, b_cs;
  int out_ndim;
  int64_t out_shape[TSR_MAX_DIMS];
} tsr__matmul_plan;

/* An operand's shape and strides with NumPy's 1-D promotion: a vector a (k) becomes (1, k)
   when it is the left operand, (k, 1) when it is the right one. */
typedef struct tsr__matmul_operand {
  int ndim;
  int64_t shape[TSR_MAX_DIMS + 1], strides[TSR_MAX_DIMS + 1];
} tsr__matmul_operand;

static tsr__matmul_operand tsr__matmul_promote(const tsr_array *x, bool left) {
  tsr__matmul_operand o;
  if (x->ndim == 1) {
    o.ndim = 2;
    o.shape[left ? 0 : 1] = 1;
    o.strides[left ? 0 : 1] = 0;
    o.shape[left ? 1 : 0] = x->shape[0];
    o.strides[left ? 1 : 0] = x->strides[0];
  } else {
    o.ndim = x->ndim;
    memcpy(o.shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    memcpy(o.strides, x->strides, sizeof(int64_t) * (size_t)x->ndim);
  }
  return o;
}

/* Step 1: the arguments (NULL, rank, dtypes, device). */
static tsr_status tsr__matmul_check_args(const tsr_array *a, const tsr_array *b, tsr_array **out) {
  if (!a || !b || !out)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL",
                          !a   ? "a"
                          : !b ? "b"
                               : "out");
  *out = NULL;
  if (a->ndim == 0 || b->ndim == 0)
    return tsr__set_error(TSR_ERR_SHAPE, __func__,
                          "operands must have at least 1 axis; a has %d, b has %d (use tsr_mul "
                          "for scalars)",
                          a->ndim, b->ndim);
  return tsr__check_pair(a, "a", b, "b");
}

/* Step 2: the plan: inner dimensions, broadcast batch shape, result shape and strides. */
static tsr_status tsr__matmul_make_plan(const tsr_array *a, const tsr_array *b,
                                        tsr__matmul_plan *p) {
  tsr__matmul_operand ao = tsr__matmul_promote(a, true), bo = tsr__matmul_promote(b, false);
  int an = ao.ndim, bn = bo.ndim;
  memset(p, 0, sizeof *p);
  p->m = ao.shape[an - 2];
  p->k = ao.shape[an - 1];
  p->n = bo.shape[bn - 1];
  if (p->k != bo.shape[bn - 2]) {
    char sa[96], sb[96];
    return tsr__set_error(TSR_ERR_SHAPE, __func__, "inner dimensions differ: a is %s, b is %s",
                          tsr__shape_str(a->ndim, a->shape, sa, sizeof sa),
                          tsr__shape_str(b->ndim, b->shape, sb, sizeof sb));
  }
  TSR_CALL(tsr__broadcast_shapes(an - 2, ao.shape, bn - 2, bo.shape, &p->nbatch, p->batch));
  /* Result shape: batch + (m, n), minus the promoted axes. */
  for (int i = 0; i < p->nbatch; i++)
    p->out_shape[p->out_ndim++] = p->batch[i];
  if (a->ndim != 1) p->out_shape[p->out_ndim++] = p->m;
  if (b->ndim != 1) {
    if (p->out_ndim == TSR_MAX_DIMS)
      return tsr__set_error(TSR_ERR_SHAPE, __func__, "result would have %d axes (at most %d)",
                            p->out_ndim + 1, TSR_MAX_DIMS);
    p->out_shape[p->out_ndim++] = p->n;
  }
  /* Batch strides of a and b (0 where broadcast) and of the C-contiguous result. */
  p->count = 1;
  for (int i = 0; i < p->nbatch; i++) {
    int ia = i - (p->nbatch - (an - 2)), ib = i - (p->nbatch - (bn - 2));
    p->a_bs[i] = (ia >= 0 && ao.shape[ia] != 1) ? ao.strides[ia] : 0;
    p->b_bs[i] = (ib >= 0 && bo.shape[ib] != 1) ? bo.strides[ib] : 0;
    p->count *= p->batch[i];
  }
  int64_t c_stride = p->m * p->n;
  for (int i = p->nbatch - 1; i >= 0; i--) {
    p->c_bs[i] = c_stride;
    c_stride *= p->batch[i];
  }
  p->a_rs = ao.strides[an - 2];
  p->a_cs = ao.strides[an - 1];
  p->b_rs = bo.strides[bn - 2];
  p->b_cs = bo.strides[bn - 1];
  return TSR_OK;
}

/* Whether a stack of A's against one B folds into a single (count*m, k) x (k, n) GEMM: B is
   shared by every batch index and the rows of all the A's are evenly spaced. */
static bool tsr__matmul_foldable(const tsr__matmul_plan *p) {
  if (p->nbatch == 0 || p->count <= 1 || p->m == 0) return false;
  for (int i = 0; i < p->nbatch; i++)
    if (p->b_bs[i] != 0 && p->batch[i] != 1) return false;
  int64_t expect = 0;
  for (int i = p->nbatch - 1; i >= 0; i--) {
    int64_t want = (i == p->nbatch - 1) ? p->m * p->a_rs : expect;
    if (p->batch[i] != 1 && p->a_bs[i] != want) return false;
    expect = want * p->batch[i];
  }
  return true;
}

/* Step 3: the products, as one folded GEMM or one GEMM per batch index. */
static tsr_status tsr__matmul_run(const struct tsr__backend_ops *ops, tsr_device dev,
                                  tsr_gemm_path path, const tsr__matmul_plan *p, const tsr_array *a,
                                  const tsr_array *b, tsr_array *c) {
  int64_t es = (int64_t)tsr__dtype_size(a->dtype);
  char *ad = tsr__array_ptr(a), *bd = tsr__array_ptr(b), *cd = tsr__array_ptr(c);
  const tsr__gemm_scalars sc = {1.0, 0.0, 0.0, 0.0, false, false};
  tsr__mat bm = {bd, p->k, p->n, p->b_rs, p->b_cs};
  if (tsr__matmul_foldable(p)) {
    tsr__mat am = {ad, p->count * p->m, p->k, p->a_rs, p->a_cs};
    tsr__mat cm = {cd, p->count * p->m, p->n, p->n, 1};
    return tsr__gemm_mats(ops, dev, a->dtype, false, false, &sc, &am, &bm, &cm, path, true);
  }
  int64_t idx[TSR_MAX_DIMS] = {0};
  for (int64_t it = 0; it < p->count; it++) {
    int64_t ao = 0, bo = 0, co = 0;
    for (int i = 0; i < p->nbatch; i++) {
      ao += idx[i] * p->a_bs[i];
      bo += idx[i] * p->b_bs[i];
      co += idx[i] * p->c_bs[i];
    }
    tsr__mat am = {ad + ao * es, p->m, p->k, p->a_rs, p->a_cs};
    tsr__mat bmi = {bd + bo * es, p->k, p->n, p->b_rs, p->b_cs};
    tsr__mat cm = {cd + co * es, p->m, p->n, p->n, 1};
    TSR_CALL(tsr__gemm_mats(ops, dev, a->dtype, false, false, &sc, &am, &bmi, &cm, path, true));
    for (int i = p->nbatch - 1; i >= 0; i--) {
      if (++idx[i] < p->batch[i]) break;
      idx[i] = 0;
    }
  }
  return TSR_OK;
}

tsr_status tsr_matmul(const tsr_array *a, const tsr_array *b, tsr_array **out) {
  TSR_API_ENTRY();
  TSR_CALL(tsr__matmul_check_args(a, b, out));
  tsr__matmul_plan plan;
  TSR_CALL(tsr__matmul_make_plan(a, b, &plan));
  tsr_device dev = a->buffer->device;
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(dev, &ops));
  tsr_gemm_path path = TSR_GEMM_NATIVE;
  TSR_CALL(tsr__gemm_resolve_path(TSR_GEMM_AUTO, &path));
  tsr_array *c = NULL;
  TSR_CALL(tsr__array_alloc(plan.out_ndim, plan.out_shape, a->dtype, dev, 0, &c));
  tsr_status st = tsr__matmul_run(ops, dev, path, &plan, a, b, c);
  if (st != TSR_OK) {
    tsr_array_release(c);
    return st;
  }
  *out = c;
  return TSR_OK;
}
