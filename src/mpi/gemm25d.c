/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 2.5D matrix multiplication (E. Solomonik and J. Demmel, "Communication-optimal parallel 2.5D
 * matrix multiplication and LU factorization algorithms", Euro-Par 2011) over the 2D
 * block-cyclic matrices of a P-rank grid: its row of the dispatcher's table of schedules
 * (dist_gemm.c), the cost model that row gives (tsr__dist_25d_cost) and the schedule it runs
 * (tsr__dist_25d_run).
 *
 * The P ranks form c layers of q x q ranks (q^2 = P / c). Layer l takes the k panels j with
 * j mod c = l: op(A)'s panel columns and op(B)'s panel rows move from the matrices' grid to the
 * layer's q x q grid (one point-to-point exchange per operand, transposing on the way when
 * the operand is stored transposed), the layer multiplies its slice with SUMMA, and the c
 * partial products are summed by the owners of C on the matrices' grid. The panel broadcasts
 * of a layer span q ranks instead of sqrt(P): sqrt(c) times fewer words per rank.
 *
 * Both moves are block-cyclic redistributions (tsr__bc_redistribute_ex, redistribute.c): layer
 * l's slice of op(A) is the m x k matrix with row blocks cyclic over the q layer rows and k
 * panels cyclic over c q "virtual columns" v = j mod (c q), process (r, v) being rank r of
 * layer v mod c, layer column v / c (panel j lands in layer j mod c at slice column j / c);
 * op(B)'s slice is its transpose-shaped twin, and the reduction is one accumulating
 * redistribution per layer from the layer's q x q grid to C's grid.
 */
#include <complex.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

static int64_t tsr__blk_len(int64_t n, int64_t nb, int64_t i) {
  int64_t left = n - i * nb;
  return left < nb ? left : nb;
}

static int64_t tsr__gemm25d_ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/* q with q * q == v, or 0. */
static int tsr__exact_sqrt(int v) {
  int q = (int)floor(sqrt((double)v) + 0.5);
  return q >= 1 && q * q == v ? q : 0;
}

/* Columns (k extent) of layer l's slice: the panels j < panels with j mod c = l. */
static int64_t tsr__layer_k(int64_t k, int64_t kb, int c, int l) {
  int64_t panels = tsr__gemm25d_ceil_div(k, kb), sum = 0;
  for (int64_t j = l; j < panels; j += c)
    sum += tsr__blk_len(k, kb, j);
  return sum;
}

/* ------------------------------------------------------------------ cost --------------- */

static double tsr__cost_25d(const tsr__dist_shape *d, int c) {
  int q = tsr__exact_sqrt(d->size / c);
  double w = (d->m * d->k + d->k * d->n) * (1.0 - 1.0 / q) / ((double)q * c) +
             (d->m * d->k + d->k * d->n + c * d->m * d->n) / d->size;
  return w + TSR__DIST_ROUND_WORDS * (2.0 * (double)tsr__gemm25d_ceil_div(d->panels, c) + 2.0 + c);
}

/* Bytes per rank 2.5D allocates beyond A, B and C: the slices, the partial C, the SUMMA
   panel buffers of the layer and the exchange buffers (the largest exchange, C's). */
static double tsr__memory_25d(const tsr__dist_shape *d, int c) {
  int q = tsr__exact_sqrt(d->size / c);
  double kb = (double)d->kb;
  double words = (d->m * d->k + d->k * d->n) / d->size + c * d->m * d->n / d->size +
                 2.0 * (ceil(d->m / q) * kb + kb * ceil(d->n / q)) +
                 2.0 * c * d->m * d->n / d->size;
  return words * (double)d->es;
}

static bool tsr__valid_25d(const tsr__dist_shape *d, int c) {
  return c >= 1 && d->size % c == 0 && tsr__exact_sqrt(d->size / c) > 0;
}

/* The row's cost: the asked c (one replica is SUMMA on the matrices' own grid: 2.5D does not
   apply), or the cheapest c > 1 (the first of equal costs) with c at most the number of panels
   and its extra memory within memory_per_rank; none: 2.5D does not apply. */
tsr_status tsr__dist_25d_cost(const tsr__dist_shape *d, double *cost, int *replicas) {
  *cost = INFINITY;
  *replicas = 1;
  if (d->replicas > 0) {
    if (d->replicas > 1 && !tsr__valid_25d(d, d->replicas))
      return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                            "%d replicas do not split %d ranks into layers of q x q ranks "
                            "(need c dividing P with P / c a perfect square)",
                            d->replicas, d->size);
    if (d->replicas > 1) {
      *cost = tsr__cost_25d(d, d->replicas);
      *replicas = d->replicas;
    }
    return TSR_OK;
  }
  int64_t max_c = d->panels > 1 ? d->panels : 1;
  for (int c = 2; c <= d->size && c <= max_c; c++) {
    if (!tsr__valid_25d(d, c)) continue;
    if (d->memory_per_rank > 0 && tsr__memory_25d(d, c) > (double)d->memory_per_rank) continue;
    double v = tsr__cost_25d(d, c);
    if (v < *cost) {
      *cost = v;
      *replicas = c;
    }
  }
  return TSR_OK;
}

tsr_status tsr_dist_gemm_memory_25d(int64_t m, int64_t n, int64_t k, int64_t kb, int ranks,
                                    int replicas, tsr_dtype dtype, int64_t *bytes) {
  TSR_API_ENTRY();
  if (!bytes) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "bytes is NULL");
  *bytes = 0;
  size_t es = tsr__dtype_size(dtype);
  if (es == 0) return tsr__set_error(TSR_ERR_DTYPE, __func__, "unsupported dtype %d", (int)dtype);
  if (m < 0 || n < 0 || k < 0 || kb < 1 || ranks < 1)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "bad sizes m=%lld n=%lld k=%lld kb=%lld ranks=%d", (long long)m,
                          (long long)n, (long long)k, (long long)kb, ranks);
  const tsr__dist_shape d = {.m = (double)m,
                             .n = (double)n,
                             .k = (double)k,
                             .panels = tsr__gemm25d_ceil_div(k, kb),
                             .kb = kb,
                             .size = ranks,
                             .es = es};
  if (replicas < 1 || !tsr__valid_25d(&d, replicas))
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "%d replicas do not split %d ranks into layers of q x q ranks "
                          "(need c dividing P with P / c a perfect square)",
                          replicas, ranks);
  if (replicas == 1) return TSR_OK; /* SUMMA on the matrices' own grid */
  double v = tsr__memory_25d(&d, replicas);
  *bytes = v >= 9.2e18 ? INT64_MAX : (int64_t)ceil(v);
  return TSR_OK;
}

/* ------------------------------------------------------------------ the schedule ------- */

/* C = beta * C before the partial products are added (beta = 0 never reads C). */
static void tsr__scale_local(tsr_dmatrix *c, void *host, tsr_complex128 beta) {
  if (tsr__dist_modeled()) {
    tsr__dist_model_copy((double)(c->lld * c->nloc) * (double)tsr__dtype_size(c->dtype));
    return;
  }
  const bool zero = beta.re == 0.0 && beta.im == 0.0;
  const double _Complex bz = beta.re + beta.im * I;
  for (int64_t j = 0; j < c->nloc; j++)
    for (int64_t i = 0; i < c->mloc; i++) {
      size_t e = (size_t)(i + j * c->lld);
      if (c->dtype == TSR_F32) {
        float *p = host;
        p[e] = zero ? 0.0f : (float)(beta.re * p[e]);
      } else if (c->dtype == TSR_F64) {
        double *p = host;
        p[e] = zero ? 0.0 : beta.re * p[e];
      } else if (c->dtype == TSR_C64) {
        float _Complex *p = host;
        p[e] = zero ? 0.0f : (float _Complex)(bz * (double _Complex)p[e]);
      } else {
        double _Complex *p = host;
        p[e] = zero ? 0.0 : bz * p[e];
      }
    }
}

/* The state of one 2.5D call, shared by its steps. */
typedef struct tsr__g25 {
  tsr_grid *g;        /* the matrices' grid */
  int replicas, q;    /* c layers of q x q ranks */
  int layer;          /* this rank's layer */
  int64_t k, kb, kl;  /* the inner dimension, its block, this layer's slice of it */
  int64_t a_mb, b_nb; /* op(A)'s row block, op(B)'s column block */
  unsigned xflags;    /* TSR__BC_MODELED in a TSR_SMPI_MODEL build */
  MPI_Comm lcomm;     /* this layer's communicator and grid */
  tsr_grid *lg;
  tsr_dmatrix *al, *bl, *cl; /* this layer's slices of op(A), op(B) and its partial product */
  int *procs;                /* process maps of the slicing, then of the reduction */
  tsr_dist_stats st;         /* bytes and seconds of the slicing and reduction */
} tsr__g25;

/* Step 1: the layers' communicators and q x q grids. Agreed. */
static tsr_status tsr__g25_layers(tsr__g25 *L) {
  int rc = MPI_Comm_split(L->g->comm, L->layer, L->g->rank, &L->lcomm);
  tsr_status st =
      rc == MPI_SUCCESS ? TSR_OK : tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Comm_split");
  TSR_CALL(tsr__dist_agree(L->g->comm, st));
  st = tsr_grid_create(L->lcomm, L->q, L->q, &L->lg); /* agreed within the layer */
  st = tsr__dist_agree(L->g->comm, st);
  int cq = L->replicas * L->q;
  if (st == TSR_OK) {
    L->procs = malloc((size_t)cq * (size_t)L->q * 2 * sizeof *L->procs);
    if (!L->procs) st = tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "2.5D process maps");
  }
  return tsr__dist_agree(L->g->comm, st);
}

/* The two exchanges that slice op(A) and op(B) onto the layers (process maps: see the top of
   the file), from and to the local blocks where they live (host, or device-resident on a GPU:
   tsr__dm_layout_local). Agreed. */
static tsr_status tsr__g25_exchange_slices(tsr__g25 *L, tsr_trans ta, tsr_trans tb,
                                           const tsr_dmatrix *a, const tsr_dmatrix *b) {
  const tsr_grid *g = L->g;
  int q = L->q, cq = L->replicas * q, replicas = L->replicas;
  int *pa = L->procs, *pb = L->procs + (size_t)cq * q;
  for (int r = 0; r < q; r++)
    for (int v = 0; v < cq; v++) {
      pa[r * cq + v] = (v % replicas) * q * q + r * q + v / replicas;  /* q x cq: (layer row, v) */
      pb[v * q + r] = (v % replicas) * q * q + (v / replicas) * q + r; /* cq x q */
    }
  tsr__bc_procs gpa = {q, cq, pa, 0, 0}, gpb = {cq, q, pb, 0, 0};
  tsr__bc_matrix sa = tsr__dm_layout_local(a, g->nprow, g->npcol),
                 sb = tsr__dm_layout_local(b, g->nprow, g->npcol),
                 da = tsr__dm_layout_local(L->al, q, cq), db = tsr__dm_layout_local(L->bl, cq, q);
  da.row = (tsr__bc_dim){0, L->a_mb, L->a_mb, 0, q};
  da.col = (tsr__bc_dim){0, L->kb, L->kb, 0, cq};
  db.row = (tsr__bc_dim){0, L->kb, L->kb, 0, cq};
  db.col = (tsr__bc_dim){0, L->b_nb, L->b_nb, 0, q};
  const tsr_dmatrix *c = L->al; /* dtype and m of the product */
  tsr_status st =
      tsr__bc_redistribute_ex(g, c->dtype, c->m, L->k, &sa, NULL, ta != TSR_NO_TRANS, &da, &gpa,
                              L->xflags | (tsr__dist_conj(ta, c->dtype) ? TSR__BC_CONJ : 0u),
                              &L->st.bytes_sent, &L->st.bytes_received);
  if (st == TSR_OK)
    st = tsr__bc_redistribute_ex(g, c->dtype, L->k, L->bl->n, &sb, NULL, tb != TSR_NO_TRANS, &db,
                                 &gpb,
                                 L->xflags | (tsr__dist_conj(tb, c->dtype) ? TSR__BC_CONJ : 0u),
                                 &L->st.bytes_sent, &L->st.bytes_received);
  return st;
}

/* Step 2: this layer's slices al (m x kl) and bl (kl x n) of op(A) and op(B), on C's device.
   Agreed. */
static tsr_status tsr__g25_slice(tsr__g25 *L, tsr_trans ta, tsr_trans tb, const tsr_dmatrix *a,
                                 const tsr_dmatrix *b, const tsr_dmatrix *c) {
  tsr_status st = tsr__dm_create(L->lg, c->m, L->kl, L->a_mb, L->kb, c->dtype, c->device, &L->al);
  if (st == TSR_OK)
    st = tsr__dm_create(L->lg, L->kl, c->n, L->kb, L->b_nb, c->dtype, c->device, &L->bl);
  st = tsr__dist_agree(L->g->comm, st);
  if (st == TSR_OK) st = tsr__g25_exchange_slices(L, ta, tb, a, b);
  return st; /* agreed by the exchanges */
}

/* Step 3: each layer multiplies its slices with the SUMMA schedule into its partial product
   cl. Agreed; SUMMA's figures in *ls. */
static tsr_status tsr__g25_multiply(tsr__g25 *L, tsr_complex128 alpha, const tsr_dmatrix *c,
                                    const tsr_dist_gemm_options *opt, tsr_dist_stats *ls) {
  tsr_status st = tsr__dm_create(L->lg, c->m, c->n, c->mb, c->nb, c->dtype, c->device, &L->cl);
  st = tsr__dist_agree(L->g->comm, st);
  if (st == TSR_OK) {
    tsr_dist_gemm_options lo;
    memset(&lo, 0, sizeof lo);
    lo.path = opt ? opt->path : TSR_GEMM_AUTO;
    lo.progress = opt ? opt->progress : NULL;
    lo.progress_ctx = opt ? opt->progress_ctx : NULL;
    lo.algorithm = TSR_DIST_GEMM_SUMMA;
    lo.bcast = opt ? opt->bcast : TSR_DIST_BCAST_AUTO;
    lo.panel_width = opt ? opt->panel_width : 0;
    st = tsr__dist_summa(alpha, L->al, L->bl, tsr__dist_real(0.0), L->cl, &lo,
                         ls); /* agreed in layer */
    st = tsr__dist_agree(L->g->comm, st);
  }
  return st;
}

/* C = beta * C on C's device (a GEMM with k = 0, as SUMMA's k = 0 case; beta = 0 never reads
   C). Local. */
static tsr_status tsr__g25_scale_dev(tsr_dmatrix *c, tsr_complex128 beta) {
  tsr_array *av = NULL, *bv = NULL, *cv = NULL;
  int64_t ashape[2] = {c->mloc, 0}, bshape[2] = {0, c->nloc}, str[2] = {1, 1};
  tsr_status st = tsr__array_new_view(c->storage, 2, ashape, str, 0, &av);
  if (st == TSR_OK) st = tsr__array_new_view(c->storage, 2, bshape, str, 0, &bv);
  if (st == TSR_OK) st = tsr_dmatrix_local(c, &cv);
  if (st == TSR_OK) st = tsr__dist_local_gemm(tsr__dist_real(1.0), av, bv, beta, cv, TSR_GEMM_AUTO);
  tsr_array_release(av);
  tsr_array_release(bv);
  tsr_array_release(cv);
  return st;
}

/* Step 4: C = beta * C + the sum of the layers' partial products, on C's owners, in one
   accumulating exchange from all c layers at once (every rank sends its layer's part while
   it receives: the c layers' q x q grids as copies of one source grid), where C lives (host, or
   device-resident on a GPU: beta C by a k = 0 GEMM there). Agreed. */
static tsr_status tsr__g25_reduce(tsr__g25 *L, tsr_complex128 beta, tsr_dmatrix *c) {
  const tsr_grid *g = L->g;
  const int q = L->q;
  tsr_status st = TSR_OK;
  if (c->device.kind == TSR_DEVICE_CPU)
    tsr__scale_local(c, tsr__array_ptr(c->storage), beta);
  else if (beta.re != 1.0 || beta.im != 0.0)
    st = tsr__g25_scale_dev(c, beta);
  st = tsr__dist_agree(g->comm, st);
  for (int r = 0; r < q * q; r++)
    L->procs[r] = r; /* layer 0; layer l is ranks l q^2 + r */
  const tsr__bc_procs layers = {q, q, L->procs, L->replicas, q * q};
  const tsr__bc_matrix sl = tsr__dm_layout_local(L->cl, q, q),
                       dc = tsr__dm_layout_local(c, g->nprow, g->npcol);
  if (st == TSR_OK)
    st = tsr__bc_redistribute_ex(g, c->dtype, c->m, c->n, &sl, &layers, false, &dc, NULL,
                                 L->xflags | TSR__BC_ACCUMULATE, &L->st.bytes_sent,
                                 &L->st.bytes_received);
  return st; /* agreed by the exchange */
}

tsr_status tsr__dist_25d_run(const tsr__dist_call *x, tsr_dist_stats *stats) {
  const tsr_trans ta = x->ta, tb = x->tb;
  const tsr_dmatrix *a = x->a, *b = x->b;
  tsr_dmatrix *c = x->c;
  const int replicas = x->replicas;
  tsr__g25 L;
  memset(&L, 0, sizeof L);
  L.g = c->grid;
  L.replicas = replicas;
  L.q = tsr__exact_sqrt(L.g->size / replicas);
  L.layer = L.g->rank / (L.q * L.q);
  L.k = ta ? a->m : a->n, L.kb = ta ? a->mb : a->nb;
  L.kl = tsr__layer_k(L.k, L.kb, replicas, L.layer);
  L.a_mb = ta ? a->nb : a->mb, L.b_nb = tb ? b->mb : b->nb;
  L.xflags = tsr__dist_modeled() ? TSR__BC_MODELED : 0u;
  L.lcomm = MPI_COMM_NULL;
  tsr_dist_stats ls;
  memset(&ls, 0, sizeof ls);

  tsr_status st = tsr__g25_layers(&L);
  if (st == TSR_OK) st = tsr__g25_slice(&L, ta, tb, a, b, c);
  L.st.comm_seconds += MPI_Wtime() - x->t_start;
  if (st == TSR_OK) st = tsr__g25_multiply(&L, x->alpha, c, x->options, &ls);
  tsr_dmatrix_free(L.al);
  tsr_dmatrix_free(L.bl);
  L.al = L.bl = NULL;
  double t_red = MPI_Wtime();
  if (st == TSR_OK) st = tsr__g25_reduce(&L, x->beta, c);
  L.st.comm_seconds += MPI_Wtime() - t_red;

  free(L.procs);
  tsr_dmatrix_free(L.cl);
  tsr_status s2 = tsr_grid_free(L.lg);
  if (st == TSR_OK) st = s2;
  if (L.lcomm != MPI_COMM_NULL) MPI_Comm_free(&L.lcomm);
  L.st.bytes_redistributed = L.st.bytes_received;
  tsr__dist_stats_add_summa(&L.st, &ls);
  *stats = L.st;
  return tsr__dist_agree(L.g->comm, st);
}
