/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Freivalds' check of a distributed product (tsr_dist_gemm_verify, tessera/dist.h): C x
 * against alpha op(A) (op(B) x) + beta C0 x with a random x, in float64, O(n^2) work and O(n)
 * communication, the matrices read where they live (tsr__dev_matvec_f64).
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/philox.h"
#include "mpi/mpi_internal.h"

/*
 * y1 = op(M) x1 and y2 = |op(M)| x2 (when x2 is not NULL), x replicated (length cols of
 * op(M)), y replicated (length rows of op(M)), in float64 from the local blocks on their
 * device (tsr__dev_matvec_f64: only the vectors cross to the host), summed over all ranks
 * with one MPI_Allreduce.
 */
static tsr_status tsr__dist_matvec(const tsr_dmatrix *mat, bool trans, const double *x1,
                                   const double *x2, double *y1, double *y2) {
  const tsr_grid *g = mat->grid;
  const int64_t rows = trans ? mat->n : mat->m;
  /* op(M)'s local rows and columns: M's local columns and rows when transposed. */
  const int64_t lrows = trans ? mat->nloc : mat->mloc, lcols = trans ? mat->mloc : mat->nloc;
  const int64_t rb = trans ? mat->nb : mat->mb, cb = trans ? mat->mb : mat->nb;
  const int prow = trans ? g->mycol : g->myrow, nprow = trans ? g->npcol : g->nprow;
  const int pcol = trans ? g->myrow : g->mycol, npcol = trans ? g->nprow : g->npcol;
  const size_t nvec = (size_t)(lcols > lrows ? lcols : lrows) + 1;
  double *part = calloc((size_t)(rows > 0 ? rows : 1) * 2, sizeof *part);
  double *lx = malloc(nvec * 4 * sizeof *lx);
  tsr_status st =
      part && lx ? TSR_OK : tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "matvec vectors");
  if (st == TSR_OK) {
    double *lx1 = lx, *lx2 = lx + nvec, *ly1 = lx + 2 * nvec, *ly2 = lx + 3 * nvec;
    for (int64_t l = 0; l < lcols; l++) {
      const int64_t j = tsr__bc_l2g(l, cb, pcol, npcol);
      lx1[l] = x1[j];
      lx2[l] = x2 ? x2[j] : 0.0;
    }
    st = tsr__dev_matvec_f64(mat->storage, mat->mloc, mat->nloc, mat->lld, trans, lx1,
                             x2 ? lx2 : NULL, ly1, x2 ? ly2 : NULL, NULL);
    for (int64_t l = 0; st == TSR_OK && l < lrows; l++) {
      const int64_t i = tsr__bc_l2g(l, rb, prow, nprow);
      part[i] = ly1[l];
      if (x2) part[rows + i] = ly2[l];
    }
  }
  free(lx);
  st = tsr__dist_agree(g->comm, st);
  if (st == TSR_OK) {
    double *sum = malloc((size_t)(rows > 0 ? rows : 1) * 2 * sizeof *sum);
    int rc = sum ? MPI_Allreduce(part, sum, (int)(2 * rows), MPI_DOUBLE, MPI_SUM, g->comm)
                 : MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) st = tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Allreduce");
    if (st == TSR_OK) {
      memcpy(y1, sum, (size_t)rows * sizeof *y1);
      if (y2) memcpy(y2, sum + rows, (size_t)rows * sizeof *y2);
    }
    free(sum);
    st = tsr__dist_agree(g->comm, st);
  }
  free(part);
  return st;
}

/* NaN/Inf elements of a matrix, counted on its device and summed over all ranks. Collective
   (agrees). */
static tsr_status tsr__dist_count_nonfinite(const tsr_dmatrix *mat, int64_t *count) {
  int64_t local = 0;
  tsr_status st = tsr__dev_matvec_f64(mat->storage, mat->mloc, mat->nloc, mat->lld, false, NULL,
                                      NULL, NULL, NULL, &local);
  st = tsr__dist_agree(mat->grid->comm, st);
  if (st != TSR_OK) return st;
  int rc = MPI_Allreduce(&local, count, 1, MPI_INT64_T, MPI_SUM, mat->grid->comm);
  return rc == MPI_SUCCESS ? TSR_OK : tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Allreduce");
}

/*
 * The absolute part of the verification bound of one row, for results that underflow. The
 * relative bound (k + 3) eps |alpha| |op(A)| |op(B)| |x| (+ beta's terms) holds only while
 * every operation's result is normal. An operation whose result is below the dtype's smallest
 * normal number lam loses up to lam in absolute terms: < lam * eps with gradual underflow
 * (IEEE's default, which Tessera's kernels keep), < lam when the hardware flushes to zero
 * (FTZ/DAZ, e.g. a caller built with -ffast-math). One element of C takes k multiply-adds
 * (their losses scaled by |alpha| when alpha is applied after the sum, by 1 when it is folded
 * into an operand first: max(1, |alpha|) covers both), the alpha and beta multiplies and the
 * final addition: at most (k max(1, |alpha|) + 3) lam. Row i of C x then differs by at most
 * that times sum_j |x_j|, and the float64 products of the check itself (n + k along a row,
 * scaled likewise, and 3 more) add the same with lam = DBL_MIN. So results of f32 alpha = 1e-40 or
 * inputs scaled by 1e-22 (subnormal or flushed) verify, while a product wrong by more than this
 * allowance still fails.
 */
static double tsr__verify_underflow_allowance(tsr_dtype dtype, int64_t n, int64_t k, double alpha,
                                              const double *xa) {
  double lam = dtype == TSR_F32 ? (double)FLT_MIN : DBL_MIN, scale = fmax(1.0, fabs(alpha));
  double xsum = 0.0;
  for (int64_t j = 0; j < n; j++)
    xsum += xa[j];
  return (((double)k * scale + 3.0) * lam + ((double)(n + k) * scale + 3.0) * DBL_MIN) * xsum;
}

/* The float64 vectors of one check (each of max(m, n, k) + 1 elements): x the random vector,
   xa = |x|, ones; y = C x; w = alpha op(A) op(B) x (+ beta C0 x) and s its magnitude bound;
   t the bound of |alpha| |op(A)| |op(B)| 1 (+ |beta| |C0| 1); z, za, u, ua intermediates. */
typedef struct tsr__verify_vectors {
  double *x, *xa, *ones, *y, *w, *s, *t, *z, *za, *u, *ua;
} tsr__verify_vectors;
#define VERIFY_NVEC 11
#define VERIFY_ALL(v)                                                                              \
  {                                                                                                \
    &(v)->x, &(v)->xa, &(v)->ones, &(v)->y, &(v)->w, &(v)->s, &(v)->t, &(v)->z, &(v)->za, &(v)->u, \
        &(v)->ua                                                                                   \
  }

static tsr_status tsr__verify_vectors_alloc(tsr__verify_vectors *v, size_t len) {
  double **all[VERIFY_NVEC] = VERIFY_ALL(v);
  bool ok = true;
  for (int i = 0; i < VERIFY_NVEC; i++)
    ok = (*all[i] = malloc(len * sizeof **all[i])) != NULL && ok;
  return ok ? TSR_OK
            : tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "vectors of %zu elements", len);
}

static void tsr__verify_vectors_free(tsr__verify_vectors *v) {
  double **all[VERIFY_NVEC] = VERIFY_ALL(v);
  for (int i = 0; i < VERIFY_NVEC; i++)
    free(*all[i]);
}

/* Fills v->y (C x), v->w and v->s (alpha op(A) op(B) x + beta C0 x and its magnitude bound)
   and v->t (the overflow bound). Collective; agreed. */
static tsr_status tsr__verify_products(tsr_trans transa, tsr_trans transb, double alpha,
                                       const tsr_dmatrix *a, const tsr_dmatrix *b, double beta,
                                       const tsr_dmatrix *c0, const tsr_dmatrix *c, uint64_t seed,
                                       tsr__verify_vectors *v) {
  int64_t m = c->m, n = c->n, k = transa ? a->m : a->n;
  for (int64_t j = 0; j < n; j++) {
    v->x[j] = tsr__philox_f64(seed, (uint64_t)j, TSR__PHILOX_UNIFORM, -1.0, 1.0);
    v->xa[j] = fabs(v->x[j]);
    v->ones[j] = 1.0;
  }
  for (int64_t i = 0; i < k; i++)
    v->ones[i] = 1.0;
  tsr_status st = tsr__dist_matvec(c, false, v->x, NULL, v->y, NULL);
  if (st == TSR_OK) st = tsr__dist_matvec(b, transb != TSR_NO_TRANS, v->x, v->xa, v->z, v->za);
  if (st == TSR_OK) st = tsr__dist_matvec(a, transa != TSR_NO_TRANS, v->z, v->za, v->w, v->s);
  /* The magnitude bound t = |alpha| |op(A)| (|op(B)| 1) (+ |beta| |C0| 1): where it reaches
     the dtype's overflow threshold, Inf/NaN in C may be the correct IEEE result. */
  if (st == TSR_OK) st = tsr__dist_matvec(b, transb != TSR_NO_TRANS, v->ones, v->ones, v->u, v->ua);
  if (st == TSR_OK) st = tsr__dist_matvec(a, transa != TSR_NO_TRANS, v->ua, v->ua, v->u, v->t);
  for (int64_t i = 0; st == TSR_OK && i < m; i++) {
    v->w[i] *= alpha;
    v->s[i] *= fabs(alpha);
    v->t[i] *= fabs(alpha);
  }
  if (st == TSR_OK && c0) {
    st = tsr__dist_matvec(c0, false, v->x, v->xa, v->u, v->ua);
    for (int64_t i = 0; st == TSR_OK && i < m; i++) {
      v->w[i] += beta * v->u[i];
      v->s[i] += fabs(beta) * v->ua[i];
    }
    if (st == TSR_OK) st = tsr__dist_matvec(c0, false, v->ones, v->ones, v->u, v->ua);
    for (int64_t i = 0; st == TSR_OK && i < m; i++)
      v->t[i] += fabs(beta) * v->ua[i];
  }
  return st;
}

/* The verdict from the products: a row passes when |y - w| <= tolerance * s + under; the
   residual is diff / (s + under / tolerance), so "residual <= tolerance" states the same. Rows
   whose bound t may overflow the dtype are not checked. Local (the vectors are replicated). */
static void tsr__verify_judge(tsr_dtype dtype, int64_t m, int64_t n, int64_t k, double alpha,
                              const tsr__verify_vectors *v, tsr_dist_verify_result *result) {
  double big = (dtype == TSR_F32 ? (double)FLT_MAX : DBL_MAX) / (1.0 + result->tolerance);
  double worst = 0.0;
  bool failed = false;
  double under = tsr__verify_underflow_allowance(dtype, n, k, alpha, v->xa) / result->tolerance;
  for (int64_t i = 0; i < m; i++) {
    if (!(v->t[i] < big)) { /* may overflow (t is Inf or NaN in float64 too): not checked */
      result->rows_unverified++;
      continue;
    }
    result->rows_checked++;
    double diff = fabs(v->y[i] - v->w[i]);
    double r = v->s[i] + under > 0.0 ? diff / (v->s[i] + under) : diff;
    if (!isfinite(r)) { /* NaN/Inf in a row of C that cannot overflow: a wrong product */
      failed = true;
      worst = INFINITY;
      continue;
    }
    if (r > worst) worst = r;
  }
  result->residual = worst;
  failed = failed || worst > result->tolerance;
  result->verdict = failed                        ? TSR_VERIFY_FAILED
                    : result->rows_unverified > 0 ? TSR_VERIFY_PARTIAL
                                                  : TSR_VERIFY_PASSED;
}

/* ---------------------------------------------------------------- complex matrices ---- */

/*
 * The complex check: y1 = op(M) x1 (complex) and y2 = B(op(M)) x2 (when x2 is not NULL), op(M) =
 * M, M^T or M^H (conj), x replicated (length cols of op(M)), y replicated, in float64 from the
 * local block where it lives: the complex block is read as the real matrix of its parts, R
 * (2 mloc x nloc, rows 2i and 2i+1 the real and imaginary parts of row i), by the device's real
 * kernel (tsr__dev_matvec_f64: only vectors cross to the host), two products a call:
 *
 *   op(M) = M:     R xr = [Mr xr; Mi xr], R xi = [Mr xi; Mi xi]; Re y = Mr xr - Mi xi,
 *                  Im y = Mr xi + Mi xr;
 *   op(M) = M^T:   R^T z with z = (xr, -xi) interleaved gives Re y, z = (xi, xr) gives Im y;
 *   op(M) = M^H:   z = (xr, xi) and (xi, -xr).
 *
 * The bound B(op(M)) takes |Mr| + |Mi| for |M| (at most sqrt(2) |M|: the tolerance has that
 * factor). Summed over the ranks with one MPI_Allreduce; *nonfinite (when not NULL) counts the
 * NaN/Inf parts of M over all ranks (a complex element non-finite in both parts counts twice).
 * Collective; agreed.
 */
static tsr_status tsr__dist_matvec_cx(const tsr_dmatrix *mat, tsr_trans t,
                                      const double _Complex *x1, const double *x2,
                                      double _Complex *y1, double *y2, int64_t *nonfinite) {
  const tsr_grid *g = mat->grid;
  const bool trans = t != TSR_NO_TRANS, cj = t == TSR_CONJ_TRANS;
  const int64_t rows = trans ? mat->n : mat->m;
  /* R's local shape; op(R)'s input length and output length. */
  const int64_t rr = 2 * mat->mloc, rc = mat->nloc;
  const int64_t in = trans ? rr : rc, out = trans ? rc : rr;
  const size_t len = (size_t)(rows > 0 ? rows : 1) * 3 + 1; /* y1 (re, im), y2, nonfinite */
  const size_t vlen = (size_t)(in > out ? in : out) + 1;
  double *part = calloc(len, sizeof *part), *sum = malloc(len * sizeof *sum);
  double *v = malloc(vlen * 6 * sizeof *v);
  tsr_status st =
      part && sum && v ? TSR_OK : tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "matvec vectors");
  int64_t bad = 0;
  if (st == TSR_OK) {
    double *za = v, *zb = v + vlen, *zw = v + 2 * vlen; /* inputs: two products, the bound */
    double *ya = v + 3 * vlen, *yb = v + 4 * vlen, *yw = v + 5 * vlen;
    if (!trans) {
      for (int64_t lj = 0; lj < rc; lj++) {
        const int64_t j = tsr__bc_l2g(lj, mat->nb, g->mycol, g->npcol);
        za[lj] = x1 ? creal(x1[j]) : 0.0;
        zb[lj] = x1 ? cimag(x1[j]) : 0.0;
        zw[lj] = x2 ? x2[j] : 0.0;
      }
    } else {
      for (int64_t li = 0; li < mat->mloc; li++) {
        const int64_t i = tsr__bc_l2g(li, mat->mb, g->myrow, g->nprow);
        const double xr = x1 ? creal(x1[i]) : 0.0, xi = x1 ? cimag(x1[i]) : 0.0;
        za[2 * li] = xr, za[2 * li + 1] = cj ? xi : -xi;
        zb[2 * li] = xi, zb[2 * li + 1] = cj ? -xr : xr;
        zw[2 * li] = zw[2 * li + 1] = x2 ? x2[i] : 0.0;
      }
    }
    st = tsr__dev_matvec_f64(mat->storage, rr, rc, 2 * mat->lld, trans, x1 ? za : NULL,
                             x2 ? zw : NULL, ya, yw, nonfinite ? &bad : NULL);
    if (st == TSR_OK && x1)
      st = tsr__dev_matvec_f64(mat->storage, rr, rc, 2 * mat->lld, trans, zb, NULL, yb, NULL, NULL);
    for (int64_t l = 0; st == TSR_OK && l < (trans ? rc : mat->mloc); l++) {
      const int64_t r = trans ? tsr__bc_l2g(l, mat->nb, g->mycol, g->npcol)
                              : tsr__bc_l2g(l, mat->mb, g->myrow, g->nprow);
      if (x1) {
        part[2 * r] += trans ? ya[l] : ya[2 * l] - yb[2 * l + 1];
        part[2 * r + 1] += trans ? yb[l] : yb[2 * l] + ya[2 * l + 1];
      }
      if (x2) part[2 * rows + r] += trans ? yw[l] : yw[2 * l] + yw[2 * l + 1];
    }
  }
  part[3 * rows] = (double)bad;
  free(v);
  st = tsr__dist_agree(g->comm, st);
  if (st == TSR_OK) {
    int rc2 = MPI_Allreduce(part, sum, (int)(3 * rows + 1), MPI_DOUBLE, MPI_SUM, g->comm);
    if (rc2 != MPI_SUCCESS) st = tsr__mpi_error(__func__, TSR_ERR_MPI, rc2, "MPI_Allreduce");
    for (int64_t r = 0; st == TSR_OK && r < rows; r++) {
      if (y1) y1[r] = sum[2 * r] + sum[2 * r + 1] * I;
      if (y2) y2[r] = sum[2 * rows + r];
    }
    if (st == TSR_OK && nonfinite) *nonfinite = (int64_t)sum[3 * rows];
    st = tsr__dist_agree(g->comm, st);
  }
  free(part);
  free(sum);
  return st;
}

/* The complex check's vectors (each of max(m, n, k) + 1 elements): x the complex random
   vector and xa = |x|, ones; y = C x; w = alpha op(A) op(B) x + beta C0 x, s its modulus bound,
   t the bound of |alpha| |op(A)| |op(B)| 1 + |beta| |C0| 1; z, u, za, ua intermediates. */
typedef struct tsr__verify_cx {
  double _Complex *x, *y, *w, *z, *u;
  double *xa, *ones, *s, *t, *za, *ua;
} tsr__verify_cx;

static void tsr__verify_cx_free(tsr__verify_cx *v) {
  free(v->x), free(v->y), free(v->w), free(v->z), free(v->u);
  free(v->xa), free(v->ones), free(v->s), free(v->t), free(v->za), free(v->ua);
}

static tsr_status tsr__verify_cx_alloc(tsr__verify_cx *v, size_t len) {
  memset(v, 0, sizeof *v);
  v->x = malloc(len * sizeof *v->x), v->y = malloc(len * sizeof *v->y);
  v->w = malloc(len * sizeof *v->w), v->z = malloc(len * sizeof *v->z);
  v->u = malloc(len * sizeof *v->u);
  v->xa = malloc(len * sizeof *v->xa), v->ones = malloc(len * sizeof *v->ones);
  v->s = malloc(len * sizeof *v->s), v->t = malloc(len * sizeof *v->t);
  v->za = malloc(len * sizeof *v->za), v->ua = malloc(len * sizeof *v->ua);
  if (v->x && v->y && v->w && v->z && v->u && v->xa && v->ones && v->s && v->t && v->za && v->ua) {
    for (size_t i = 0; i < len; i++)
      v->ones[i] = 1.0;
    return TSR_OK;
  }
  return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "vectors of %zu elements", len);
}

/* Fills y, w, s and t of the complex check. Collective; agreed. */
static tsr_status tsr__verify_cx_products(tsr_trans ta, tsr_trans tb, tsr_complex128 alpha,
                                          const tsr_dmatrix *a, const tsr_dmatrix *b,
                                          tsr_complex128 beta, const tsr_dmatrix *c0,
                                          const tsr_dmatrix *c, uint64_t seed, tsr__verify_cx *v) {
  const int64_t m = c->m, n = c->n;
  const double _Complex al = alpha.re + alpha.im * I, be = beta.re + beta.im * I;
  for (int64_t j = 0; j < n; j++) {
    v->x[j] = tsr__philox_f64(seed, 2 * (uint64_t)j, TSR__PHILOX_UNIFORM, -1.0, 1.0) +
              tsr__philox_f64(seed, 2 * (uint64_t)j + 1, TSR__PHILOX_UNIFORM, -1.0, 1.0) * I;
    v->xa[j] = cabs(v->x[j]);
  }
  tsr_status st = tsr__dist_matvec_cx(c, TSR_NO_TRANS, v->x, NULL, v->y, NULL, NULL);
  if (st == TSR_OK) st = tsr__dist_matvec_cx(b, tb, v->x, v->xa, v->z, v->za, NULL);
  if (st == TSR_OK) st = tsr__dist_matvec_cx(a, ta, v->z, v->za, v->w, v->s, NULL);
  if (st == TSR_OK) st = tsr__dist_matvec_cx(b, tb, NULL, v->ones, NULL, v->ua, NULL);
  if (st == TSR_OK) st = tsr__dist_matvec_cx(a, ta, NULL, v->ua, NULL, v->t, NULL);
  for (int64_t i = 0; st == TSR_OK && i < m; i++) {
    v->w[i] *= al;
    v->s[i] *= cabs(al);
    v->t[i] *= cabs(al);
  }
  if (st == TSR_OK && c0) {
    st = tsr__dist_matvec_cx(c0, TSR_NO_TRANS, v->x, v->xa, v->u, v->ua, NULL);
    for (int64_t i = 0; st == TSR_OK && i < m; i++) {
      v->w[i] += be * v->u[i];
      v->s[i] += cabs(be) * v->ua[i];
    }
    if (st == TSR_OK) st = tsr__dist_matvec_cx(c0, TSR_NO_TRANS, NULL, v->ones, NULL, v->ua, NULL);
    for (int64_t i = 0; st == TSR_OK && i < m; i++)
      v->t[i] += cabs(be) * v->ua[i];
  }
  return st;
}

/* The verdict of the complex check, as tsr__verify_judge with moduli. Local. */
static void tsr__verify_cx_judge(tsr_dtype dtype, int64_t m, int64_t n, int64_t k, double alpha_abs,
                                 const tsr__verify_cx *v, tsr_dist_verify_result *result) {
  const bool f = dtype == TSR_C64;
  double big = (f ? (double)FLT_MAX : DBL_MAX) / (1.0 + result->tolerance);
  double worst = 0.0;
  bool failed = false;
  double under =
      tsr__verify_underflow_allowance(f ? TSR_F32 : TSR_F64, n, 2 * k, alpha_abs, v->xa) /
      result->tolerance;
  for (int64_t i = 0; i < m; i++) {
    if (!(v->t[i] < big)) {
      result->rows_unverified++;
      continue;
    }
    result->rows_checked++;
    double diff = cabs(v->y[i] - v->w[i]);
    double r = v->s[i] + under > 0.0 ? diff / (v->s[i] + under) : diff;
    if (!isfinite(r)) {
      failed = true;
      worst = INFINITY;
      continue;
    }
    if (r > worst) worst = r;
  }
  result->residual = worst;
  failed = failed || worst > result->tolerance;
  result->verdict = failed                        ? TSR_VERIFY_FAILED
                    : result->rows_unverified > 0 ? TSR_VERIFY_PARTIAL
                                                  : TSR_VERIFY_PASSED;
}

/* Freivalds' check of complex matrices (checked and agreed by the caller). Collective. */
static tsr_status tsr__verify_complex(tsr_trans ta, tsr_trans tb, tsr_complex128 alpha,
                                      const tsr_dmatrix *a, const tsr_dmatrix *b,
                                      tsr_complex128 beta, const tsr_dmatrix *c0,
                                      const tsr_dmatrix *c, uint64_t seed,
                                      tsr_dist_verify_result *result) {
  const int64_t m = c->m, n = c->n, k = ta != TSR_NO_TRANS ? a->m : a->n;
  const int64_t mx = (m > n ? m : n) > k ? (m > n ? m : n) : k;
  tsr__verify_cx v;
  tsr_status st = tsr__verify_cx_alloc(&v, (size_t)mx + 1);
  st = tsr__dist_agree(c->grid->comm, st);
  memset(result, 0, sizeof *result);
  const double eps = c->dtype == TSR_C64 ? (double)FLT_EPSILON / 2 : DBL_EPSILON / 2;
  /* A complex multiply-add is two real ones per part; moduli add a factor sqrt(2). */
  result->tolerance = sqrt(2.0) * ((double)(2 * k + 3) * eps +
                                   2.0 * (double)(2 * k + 2 * n + 6) * (DBL_EPSILON / 2));
  int64_t bad_a = 0, bad_b = 0, bad_c0 = 0;
  if (st == TSR_OK) st = tsr__dist_matvec_cx(a, TSR_NO_TRANS, NULL, NULL, NULL, NULL, &bad_a);
  if (st == TSR_OK) st = tsr__dist_matvec_cx(b, TSR_NO_TRANS, NULL, NULL, NULL, NULL, &bad_b);
  if (st == TSR_OK && c0)
    st = tsr__dist_matvec_cx(c0, TSR_NO_TRANS, NULL, NULL, NULL, NULL, &bad_c0);
  result->nonfinite_inputs = bad_a + bad_b + bad_c0;
  if (st == TSR_OK && result->nonfinite_inputs > 0) {
    result->verdict = TSR_VERIFY_UNVERIFIED;
    result->rows_unverified = m;
  } else if (st == TSR_OK) {
    st = tsr__verify_cx_products(ta, tb, alpha, a, b, beta, c0, c, seed, &v);
    if (st == TSR_OK)
      tsr__verify_cx_judge(c->dtype, m, n, k, hypot(alpha.re, alpha.im), &v, result);
  }
  tsr__verify_cx_free(&v);
  return st;
}

static tsr_status tsr__verify_run(tsr_trans transa, tsr_trans transb, tsr_complex128 alpha_z,
                                  const tsr_dmatrix *a, const tsr_dmatrix *b, tsr_complex128 beta_z,
                                  const tsr_dmatrix *c0, const tsr_dmatrix *c, uint64_t seed,
                                  tsr_dist_verify_result *result);

tsr_status tsr_dist_gemm_verify(tsr_trans transa, tsr_trans transb, double alpha,
                                const tsr_dmatrix *a, const tsr_dmatrix *b, double beta,
                                const tsr_dmatrix *c0, const tsr_dmatrix *c, uint64_t seed,
                                tsr_dist_verify_result *result) {
  TSR_API_ENTRY();
  const tsr_complex128 al = {alpha, 0.0}, be = {beta, 0.0};
  return tsr__verify_run(transa, transb, al, a, b, be, c0, c, seed, result);
}

tsr_status tsr_dist_gemm_verify_complex(tsr_trans transa, tsr_trans transb, tsr_complex128 alpha,
                                        const tsr_dmatrix *a, const tsr_dmatrix *b,
                                        tsr_complex128 beta, const tsr_dmatrix *c0,
                                        const tsr_dmatrix *c, uint64_t seed,
                                        tsr_dist_verify_result *result) {
  TSR_API_ENTRY();
  return tsr__verify_run(transa, transb, alpha, a, b, beta, c0, c, seed, result);
}

/* The checks, then the real check (tsr__verify_products) or the complex one
   (tsr__verify_complex). Collective. */
static tsr_status tsr__verify_run(tsr_trans transa, tsr_trans transb, tsr_complex128 alpha_z,
                                  const tsr_dmatrix *a, const tsr_dmatrix *b, tsr_complex128 beta_z,
                                  const tsr_dmatrix *c0, const tsr_dmatrix *c, uint64_t seed,
                                  tsr_dist_verify_result *result) {
  const double alpha = alpha_z.re, beta = beta_z.re;
  bool use_c0 = beta_z.re != 0.0 || beta_z.im != 0.0;
  if (!a || !b || !c || !result || (use_c0 && !c0))
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL",
                          !a        ? "A"
                          : !b      ? "B"
                          : !c      ? "C"
                          : !result ? "result"
                                    : "C0 (beta != 0)");
  tsr_status st = tsr__dist_gemm_check(transa, transb, a, b, c);
  if (st == TSR_OK && use_c0 &&
      (c0->grid != c->grid || c0->dtype != c->dtype || c0->m != c->m || c0->n != c->n))
    st =
        tsr__set_error(TSR_ERR_SHAPE, __func__, "C0 (%lldx%lld %s) does not match C (%lldx%lld %s)",
                       (long long)c0->m, (long long)c0->n, tsr_dtype_name(c0->dtype),
                       (long long)c->m, (long long)c->n, tsr_dtype_name(c->dtype));
  const bool cx = st == TSR_OK && tsr__dtype_is_complex(c->dtype);
  if (st == TSR_OK && !cx && (alpha_z.im != 0.0 || beta_z.im != 0.0))
    st = tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                        "alpha = (%g, %g), beta = (%g, %g): a complex scalar for %s matrices",
                        alpha_z.re, alpha_z.im, beta_z.re, beta_z.im, tsr_dtype_name(c->dtype));
  int64_t m = c->m, n = c->n, k = transa ? a->m : a->n;
  tsr__verify_vectors v;
  memset(&v, 0, sizeof v);
  if (st == TSR_OK)
    st = tsr__verify_vectors_alloc(&v, (size_t)((m > n ? m : n) > k ? (m > n ? m : n) : k) + 1);
  st = tsr__dist_agree(c->grid->comm, st);
  memset(result, 0, sizeof *result);
  double eps = c->dtype == TSR_F32 ? (double)FLT_EPSILON / 2 : DBL_EPSILON / 2;
  result->tolerance = (double)(k + 3) * eps + 2.0 * (double)(k + n + 3) * (DBL_EPSILON / 2);
  if (cx) { /* the complex check (tolerance, vectors and verdict of its own) */
    tsr__verify_vectors_free(&v);
    return st == TSR_OK ? tsr__verify_complex(transa, transb, alpha_z, a, b, beta_z,
                                              use_c0 ? c0 : NULL, c, seed, result)
                        : st;
  }
  int64_t bad_in = 0, bad_b = 0, bad_c0 = 0;
  if (st == TSR_OK) st = tsr__dist_count_nonfinite(a, &bad_in);
  if (st == TSR_OK) st = tsr__dist_count_nonfinite(b, &bad_b);
  if (st == TSR_OK && use_c0) st = tsr__dist_count_nonfinite(c0, &bad_c0);
  result->nonfinite_inputs = bad_in + bad_b + bad_c0;
  if (st == TSR_OK && result->nonfinite_inputs > 0) {
    result->verdict = TSR_VERIFY_UNVERIFIED;
    result->rows_unverified = m;
  } else if (st == TSR_OK) {
    st = tsr__verify_products(transa, transb, alpha, a, b, beta, use_c0 ? c0 : NULL, c, seed, &v);
    if (st == TSR_OK) tsr__verify_judge(c->dtype, m, n, k, alpha, &v, result);
  }
  tsr__verify_vectors_free(&v);
  return st;
}
