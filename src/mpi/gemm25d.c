/*
 * 2.5D matrix multiplication (E. Solomonik and J. Demmel, "Communication-optimal parallel 2.5D
 * matrix multiplication and LU factorization algorithms", Euro-Par 2011) over the 2D
 * block-cyclic matrices of a P-rank grid, and the choice between it and SUMMA.
 *
 * The P ranks form c layers of q x q ranks (q^2 = P / c). Layer l takes the k panels j with
 * j mod c = l: op(A)'s panel columns and op(B)'s panel rows move from the matrices' grid to the
 * layer's q x q grid (one point-to-point exchange per operand, transposing on the way when
 * the operand is stored transposed), the layer multiplies its slice with SUMMA, and the c
 * partial products are summed by the owners of C on the matrices' grid. The panel broadcasts
 * of a layer span q ranks instead of sqrt(P): sqrt(c) times fewer words per rank.
 *
 * Exchanges need no indices on the wire: for any pair of ranks, the sender walks its blocks
 * in the order (source block column, source block row) and the receiver walks its blocks in an
 * order that visits the same source blocks in the same order, so each block is the next one
 * from that peer.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

#define TSR__25D_TAG 2511
/* Latency of one message round, in words, in the cost model of tsr_dist_gemm_choose. */
#define TSR__25D_ROUND_WORDS 2000.0

static int64_t blk_len(int64_t n, int64_t nb, int64_t i) {
  int64_t left = n - i * nb;
  return left < nb ? left : nb;
}

static int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/* q with q * q == v, or 0. */
static int exact_sqrt(int v) {
  int q = (int)floor(sqrt((double)v) + 0.5);
  return q >= 1 && q * q == v ? q : 0;
}

/* Columns (k extent) of layer l's slice: the panels j < panels with j mod c = l. */
static int64_t layer_k(int64_t k, int64_t kb, int c, int l) {
  int64_t panels = ceil_div(k, kb), sum = 0;
  for (int64_t j = l; j < panels; j += c)
    sum += blk_len(k, kb, j);
  return sum;
}

/* ------------------------------------------------------------------ exchange engine ---- */

typedef enum { X_COUNT_SEND, X_PACK, X_COUNT_RECV, X_UNPACK } xphase;

/* One block of a walk: `peer` (rank in the matrices' grid communicator) sends or receives it;
   it sits at element `off` of the local column-major storage (leading dimension `ld`); rows x
   cols is its size as the SENDER stores it. */
typedef struct xblock {
  int peer;
  int64_t off, ld, rows, cols;
} xblock;

typedef struct xchg {
  xphase phase;
  size_t es;
  tsr_dtype dtype;
  bool trans;      /* receiver stores the transpose of the sender's block */
  bool accumulate; /* receiver adds the block into its storage */
  char *local;     /* the local storage walked (source when sending, destination when receiving) */
  int64_t *scount, *rcount, *cur;
  char *sendbuf, *recvbuf;
  double bytes_copied;
} xchg;

static void x_visit(xchg *x, const xblock *b) {
  int64_t cnt = b->rows * b->cols;
  if (cnt == 0) return;
  size_t es = x->es;
  switch (x->phase) {
  case X_COUNT_SEND: x->scount[b->peer] += cnt; return;
  case X_COUNT_RECV: x->rcount[b->peer] += cnt; return;
  case X_PACK: {
    char *dst = x->sendbuf + (size_t)x->cur[b->peer] * es;
    x->cur[b->peer] += cnt;
    x->bytes_copied += (double)cnt * (double)es;
    if (tsr__dist_modeled()) return;
    for (int64_t j = 0; j < b->cols; j++)
      memcpy(dst + (size_t)(j * b->rows) * es, x->local + (size_t)(b->off + j * b->ld) * es,
             (size_t)b->rows * es);
    return;
  }
  case X_UNPACK: {
    const char *src = x->recvbuf + (size_t)x->cur[b->peer] * es;
    x->cur[b->peer] += cnt;
    x->bytes_copied += (double)cnt * (double)es;
    if (tsr__dist_modeled()) return;
    if (x->accumulate) {
      for (int64_t j = 0; j < b->cols; j++)
        for (int64_t i = 0; i < b->rows; i++) {
          size_t d = (size_t)(b->off + i + j * b->ld), s = (size_t)(i + j * b->rows);
          if (x->dtype == TSR_F32)
            ((float *)x->local)[d] += ((const float *)src)[s];
          else
            ((double *)x->local)[d] += ((const double *)src)[s];
        }
    } else if (!x->trans) {
      for (int64_t j = 0; j < b->cols; j++)
        memcpy(x->local + (size_t)(b->off + j * b->ld) * es, src + (size_t)(j * b->rows) * es,
               (size_t)b->rows * es);
    } else {
      /* sender's (i, j) is the receiver's (j, i) */
      for (int64_t j = 0; j < b->cols; j++)
        for (int64_t i = 0; i < b->rows; i++)
          memcpy(x->local + (size_t)(b->off + j + i * b->ld) * es,
                 src + (size_t)(i + j * b->rows) * es, es);
    }
    return;
  }
  }
}

/* The walks: the caller's plan visits, for one side, every block in the pair order. */
typedef void (*x_walk_fn)(const void *plan, bool send_side, xchg *x);

/*
 * Moves blocks from `src` (this rank's local storage of the source) into `dst` (of the
 * destination) as `walk` describes, with point-to-point messages between the ranks of `comm`
 * that share blocks. Adds the bytes exchanged with other ranks to *sent / *received. Local
 * failures are agreed on over `comm` before any message; returns the agreed status.
 */
static tsr_status x_exchange(const char *fn, MPI_Comm comm, x_walk_fn walk, const void *plan,
                             tsr_dtype dtype, bool trans, bool accumulate, void *src, void *dst,
                             uint64_t *sent, uint64_t *received) {
  int size = 0, me = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &me);
  xchg x;
  memset(&x, 0, sizeof x);
  x.es = tsr__dtype_size(dtype);
  x.dtype = dtype;
  x.trans = trans;
  x.accumulate = accumulate;
  tsr_status st = TSR_OK;
  int64_t *counts = calloc((size_t)size * 3 + 1, sizeof *counts);
  MPI_Request *req = malloc(((size_t)size * 2 + 1) * sizeof *req);
  if (!counts || !req) st = tsr__set_error(TSR_ERR_OUT_OF_MEMORY, fn, "exchange counts");
  int64_t nsend = 0, nrecv = 0;
  if (st == TSR_OK) {
    x.scount = counts;
    x.rcount = counts + size;
    x.cur = counts + 2 * size;
    x.phase = X_COUNT_SEND;
    walk(plan, true, &x);
    x.phase = X_COUNT_RECV;
    walk(plan, false, &x);
    for (int r = 0; r < size; r++) {
      nsend += x.scount[r];
      nrecv += x.rcount[r];
      if (x.scount[r] > INT_MAX || x.rcount[r] > INT_MAX)
        st = tsr__set_error(TSR_ERR_OVERFLOW, fn, "a message of %lld elements exceeds INT_MAX",
                            (long long)(x.scount[r] > x.rcount[r] ? x.scount[r] : x.rcount[r]));
    }
  }
  if (st == TSR_OK)
    st = tsr__host_alloc((size_t)(nsend > 0 ? nsend : 1) * x.es, (void **)&x.sendbuf);
  if (st == TSR_OK)
    st = tsr__host_alloc((size_t)(nrecv > 0 ? nrecv : 1) * x.es, (void **)&x.recvbuf);
  st = tsr__dist_agree(fn, comm, st);
  if (st == TSR_OK) {
    int nreq = 0, rc = MPI_SUCCESS;
    int64_t off = 0;
    for (int r = 0; r < size && rc == MPI_SUCCESS; r++) {
      if (x.rcount[r] > 0)
        rc = MPI_Irecv(x.recvbuf + (size_t)off * x.es, (int)x.rcount[r], tsr__mpi_type(dtype), r,
                       TSR__25D_TAG, comm, &req[nreq++]);
      x.cur[r] = off; /* receive displacements, reused for unpacking */
      off += x.rcount[r];
      if (r != me && received) *received += (uint64_t)x.rcount[r] * x.es;
    }
    /* pack */
    int64_t *rdispl = x.cur;
    int64_t *sdispl = calloc((size_t)size + 1, sizeof *sdispl);
    if (!sdispl && rc == MPI_SUCCESS) rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
      int64_t s = 0;
      for (int r = 0; r < size; r++) {
        sdispl[r] = s;
        s += x.scount[r];
      }
      x.cur = sdispl;
      x.local = src;
      x.phase = X_PACK;
      walk(plan, true, &x);
      for (int r = 0; r < size && rc == MPI_SUCCESS; r++) {
        /* packing advanced sdispl[r] past peer r's data */
        if (x.scount[r] > 0)
          rc = MPI_Isend(x.sendbuf + (size_t)(sdispl[r] - x.scount[r]) * x.es, (int)x.scount[r],
                         tsr__mpi_type(dtype), r, TSR__25D_TAG, comm, &req[nreq++]);
        if (r != me && sent) *sent += (uint64_t)x.scount[r] * x.es;
      }
    }
    /* Requests already posted complete even when a later post failed, so no peer hangs. */
    int rc2 = MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    if (rc == MPI_SUCCESS) rc = rc2;
    if (rc != MPI_SUCCESS) {
      st = tsr__mpi_error(fn, rc == MPI_ERR_NO_MEM ? TSR_ERR_OUT_OF_MEMORY : TSR_ERR_MPI, rc,
                          "2.5D block exchange");
    } else {
      x.cur = rdispl;
      x.local = dst;
      x.phase = X_UNPACK;
      walk(plan, false, &x);
    }
    free(sdispl);
    tsr__dist_model_copy(x.bytes_copied);
  }
  tsr__host_free(x.sendbuf);
  tsr__host_free(x.recvbuf);
  free(counts);
  free(req);
  return tsr__dist_agree(fn, comm, st);
}

/* ------------------------------------------------------------------ the walks ---------- */

/* Slicing of op(A) (is_b false) or op(B) (is_b true) from the matrices' grid onto the layers.
   src: the stored operand on grid g; dst: this rank's layer slice on the q x q layer grid. */
typedef struct slice_plan {
  const tsr_dmatrix *src, *dst;
  const tsr_grid *g;
  int c, q, layer, lrow, lcol; /* this rank's layer and place in it */
  bool is_b, trans;
} slice_plan;

/* Source block (si, sj) of the stored operand -> its k panel and the other block index. */
static void slice_src_to_dst(const slice_plan *p, int64_t si, int64_t sj, int64_t *di, int64_t *dj,
                             int *layer) {
  int64_t kpan, other;
  if (!p->is_b) { /* A: op(A) block (i, kpan) */
    kpan = p->trans ? si : sj;
    other = p->trans ? sj : si;
    *di = other;
    *dj = kpan / p->c;
  } else { /* B: op(B) block (kpan, j) */
    kpan = p->trans ? sj : si;
    other = p->trans ? si : sj;
    *di = kpan / p->c;
    *dj = other;
  }
  *layer = (int)(kpan % p->c);
}

static void slice_walk(const void *plan, bool send_side, xchg *x) {
  const slice_plan *p = plan;
  const tsr_grid *g = p->g;
  int q = p->q;
  if (send_side) {
    const tsr_dmatrix *s = p->src;
    for (int64_t lj = 0; lj * s->nb < s->nloc; lj++) {
      int64_t sj = lj * g->npcol + g->mycol;
      for (int64_t li = 0; li * s->mb < s->mloc; li++) {
        int64_t si = li * g->nprow + g->myrow, di, dj;
        int layer;
        slice_src_to_dst(p, si, sj, &di, &dj, &layer);
        xblock b = {layer * q * q + (int)(di % q) * q + (int)(dj % q),
                    li * s->mb + lj * s->nb * s->lld, s->lld, blk_len(s->m, s->mb, si),
                    blk_len(s->n, s->nb, sj)};
        x_visit(x, &b);
      }
    }
    return;
  }
  /* Receiver: destination blocks in the order of their source blocks (source column, then
     source row): op(A) column panels / op(B) columns outer when not transposed, rows outer
     when transposed. */
  const tsr_dmatrix *d = p->dst, *s = p->src;
  int64_t nbr = ceil_div(d->mloc, d->mb), nbc = ceil_div(d->nloc, d->nb);
  bool rows_outer = p->trans;
  int64_t nout = rows_outer ? nbr : nbc, nin = rows_outer ? nbc : nbr;
  for (int64_t o = 0; o < nout; o++)
    for (int64_t in = 0; in < nin; in++) {
      int64_t li = rows_outer ? o : in, lj = rows_outer ? in : o;
      int64_t di = li * q + p->lrow, dj = lj * q + p->lcol;
      int64_t kpan = p->is_b ? di * p->c + p->layer : dj * p->c + p->layer;
      int64_t other = p->is_b ? dj : di;
      int64_t si, sj;
      if (!p->is_b) {
        si = p->trans ? kpan : other;
        sj = p->trans ? other : kpan;
      } else {
        si = p->trans ? other : kpan;
        sj = p->trans ? kpan : other;
      }
      xblock b = {(int)(si % g->nprow) * g->npcol + (int)(sj % g->npcol),
                  li * d->mb + lj * d->nb * d->lld, d->lld, blk_len(s->m, s->mb, si),
                  blk_len(s->n, s->nb, sj)};
      x_visit(x, &b);
    }
}

/* Reduction of the layers' partial products (same blocks as C, on the q x q layer grids)
   into C on the matrices' grid. */
typedef struct reduce_plan {
  const tsr_dmatrix *part, *c;
  const tsr_grid *g;
  int nlayers, q, layer, lrow, lcol;
} reduce_plan;

static void reduce_walk(const void *plan, bool send_side, xchg *x) {
  const reduce_plan *p = plan;
  const tsr_grid *g = p->g;
  int q = p->q;
  if (send_side) {
    const tsr_dmatrix *s = p->part;
    for (int64_t lj = 0; lj * s->nb < s->nloc; lj++) {
      int64_t j = lj * q + p->lcol;
      for (int64_t li = 0; li * s->mb < s->mloc; li++) {
        int64_t i = li * q + p->lrow;
        xblock b = {(int)(i % g->nprow) * g->npcol + (int)(j % g->npcol),
                    li * s->mb + lj * s->nb * s->lld, s->lld, blk_len(s->m, s->mb, i),
                    blk_len(s->n, s->nb, j)};
        x_visit(x, &b);
      }
    }
    return;
  }
  const tsr_dmatrix *d = p->c;
  for (int64_t lj = 0; lj * d->nb < d->nloc; lj++) {
    int64_t j = lj * g->npcol + g->mycol;
    for (int64_t li = 0; li * d->mb < d->mloc; li++) {
      int64_t i = li * g->nprow + g->myrow;
      for (int l = 0; l < p->nlayers; l++) {
        xblock b = {l * q * q + (int)(i % q) * q + (int)(j % q), li * d->mb + lj * d->nb * d->lld,
                    d->lld, blk_len(d->m, d->mb, i), blk_len(d->n, d->nb, j)};
        x_visit(x, &b);
      }
    }
  }
}

/* ------------------------------------------------------------------ choice ------------- */

typedef struct gemm_dims {
  double m, n, k;
  int64_t panels, kb;
  int pr, pc, size;
  size_t es;
} gemm_dims;

/* Words received per rank (plus latency rounds) of SUMMA on the matrices' grid. */
static double cost_summa(const gemm_dims *d) {
  double w = d->m * d->k / d->pr * (1.0 - 1.0 / d->pc) + d->k * d->n / d->pc * (1.0 - 1.0 / d->pr);
  return w + TSR__25D_ROUND_WORDS * 2.0 * (double)d->panels;
}

static double cost_25d(const gemm_dims *d, int c) {
  int q = exact_sqrt(d->size / c);
  double w = (d->m * d->k + d->k * d->n) * (1.0 - 1.0 / q) / ((double)q * c) +
             (d->m * d->k + d->k * d->n + c * d->m * d->n) / d->size;
  return w + TSR__25D_ROUND_WORDS * (2.0 * (double)ceil_div(d->panels, c) + 2.0 + c);
}

/* Bytes per rank 2.5D allocates beyond A, B and C: the slices, the partial C, the SUMMA
   panel buffers of the layer and the exchange buffers (the largest exchange, C's). */
static double memory_25d(const gemm_dims *d, int c) {
  int q = exact_sqrt(d->size / c);
  double kb = (double)d->kb;
  double words = (d->m * d->k + d->k * d->n) / d->size + c * d->m * d->n / d->size +
                 2.0 * (ceil(d->m / q) * kb + kb * ceil(d->n / q)) +
                 2.0 * c * d->m * d->n / d->size;
  return words * (double)d->es;
}

static bool valid_25d(const gemm_dims *d, int c) {
  return c >= 1 && d->size % c == 0 && exact_sqrt(d->size / c) > 0;
}

/* The replicas c the options select (1: SUMMA). Local, after the checks. */
static tsr_status choose(const char *fn, const gemm_dims *d, const tsr_dist_gemm_options *opt,
                         int *replicas) {
  *replicas = 1;
  if (!opt || opt->algorithm == TSR_DIST_GEMM_SUMMA) return TSR_OK;
  if (opt->algorithm == TSR_DIST_GEMM_2_5D && opt->replicas > 0) {
    /* one replica is SUMMA on the matrices' own grid, whatever its shape */
    if (opt->replicas > 1 && !valid_25d(d, opt->replicas))
      return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, fn,
                            "%d replicas do not split %d ranks into layers of q x q ranks "
                            "(need c dividing P with P / c a perfect square)",
                            opt->replicas, d->size);
    *replicas = opt->replicas;
    return TSR_OK;
  }
  bool with_summa = opt->algorithm == TSR_DIST_GEMM_AUTO;
  double best = with_summa ? cost_summa(d) : INFINITY;
  int64_t max_c = d->panels > 1 ? d->panels : 1;
  for (int c = 2; c <= d->size && c <= max_c; c++) {
    if (!valid_25d(d, c)) continue;
    if (opt->memory_per_rank > 0 && memory_25d(d, c) > (double)opt->memory_per_rank) continue;
    double cost = cost_25d(d, c);
    if (cost < best) {
      best = cost;
      *replicas = c;
    }
  }
  return TSR_OK;
}

static tsr_status options_check(const char *fn, const tsr_dist_gemm_options *opt) {
  if (!opt) return TSR_OK;
  if (opt->algorithm != TSR_DIST_GEMM_SUMMA && opt->algorithm != TSR_DIST_GEMM_2_5D &&
      opt->algorithm != TSR_DIST_GEMM_AUTO)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, fn, "bad algorithm %d", (int)opt->algorithm);
  if (opt->replicas < 0 || opt->memory_per_rank < 0)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, fn,
                          "negative replicas (%d) or memory_per_rank (%lld)", opt->replicas,
                          (long long)opt->memory_per_rank);
  return TSR_OK;
}

static void dims_of(tsr_trans ta, const tsr_dmatrix *a, const tsr_dmatrix *c, gemm_dims *d) {
  int64_t k = ta ? a->m : a->n, kb = ta ? a->mb : a->nb;
  d->m = (double)c->m;
  d->n = (double)c->n;
  d->k = (double)k;
  d->kb = kb;
  d->panels = ceil_div(k, kb);
  d->pr = c->grid->nprow;
  d->pc = c->grid->npcol;
  d->size = c->grid->size;
  d->es = tsr__dtype_size(c->dtype);
}

tsr_status tsr__dist_gemm_plan(const char *fn, tsr_status st, tsr_trans ta, tsr_trans tb,
                               const tsr_dmatrix *a, const tsr_dmatrix *b, const tsr_dmatrix *c,
                               const tsr_dist_gemm_options *opt, int *replicas) {
  (void)tb, (void)b;
  *replicas = 1;
  if (st == TSR_OK) st = options_check(fn, opt);
  if (st == TSR_OK) {
    int64_t v[3] = {opt ? (int64_t)opt->algorithm : 0, opt ? opt->replicas : 0,
                    opt ? opt->memory_per_rank : 0};
    st = tsr__dist_agree(fn, c->grid->comm, st);
    if (st != TSR_OK) return st;
    st = tsr__dist_same(fn, c->grid->comm, v, 3, "algorithm, replicas, memory_per_rank");
    if (st != TSR_OK) return st;
    gemm_dims d;
    dims_of(ta, a, c, &d);
    st = choose(fn, &d, opt, replicas);
  }
  return tsr__dist_agree(fn, c->grid->comm, st);
}

tsr_status tsr_dist_gemm_memory_25d(int64_t m, int64_t n, int64_t k, int64_t kb, int ranks,
                                    int replicas, tsr_dtype dtype, int64_t *bytes) {
  TSR_API_ENTRY();
  static const char fn[] = "tsr_dist_gemm_memory_25d";
  if (!bytes) return tsr__set_error(TSR_ERR_NULL_POINTER, fn, "bytes is NULL");
  *bytes = 0;
  size_t es = tsr__dtype_size(dtype);
  if (es == 0) return tsr__set_error(TSR_ERR_DTYPE, fn, "unsupported dtype %d", (int)dtype);
  if (m < 0 || n < 0 || k < 0 || kb < 1 || ranks < 1)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, fn,
                          "bad sizes m=%lld n=%lld k=%lld kb=%lld ranks=%d", (long long)m,
                          (long long)n, (long long)k, (long long)kb, ranks);
  gemm_dims d = {(double)m, (double)n, (double)k, ceil_div(k, kb), kb, 0, 0, ranks, es};
  if (replicas < 1 || !valid_25d(&d, replicas))
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, fn,
                          "%d replicas do not split %d ranks into layers of q x q ranks "
                          "(need c dividing P with P / c a perfect square)",
                          replicas, ranks);
  if (replicas == 1) return TSR_OK; /* SUMMA on the matrices' own grid */
  double v = memory_25d(&d, replicas);
  *bytes = v >= 9.2e18 ? INT64_MAX : (int64_t)ceil(v);
  return TSR_OK;
}

tsr_status tsr_dist_gemm_choose(tsr_trans transa, tsr_trans transb, const tsr_dmatrix *a,
                                const tsr_dmatrix *b, const tsr_dmatrix *c,
                                const tsr_dist_gemm_options *options, tsr_dist_algorithm *algorithm,
                                int *replicas) {
  TSR_API_ENTRY();
  static const char fn[] = "tsr_dist_gemm_choose";
  if (!a || !b || !c || !algorithm || !replicas)
    return tsr__set_error(TSR_ERR_NULL_POINTER, fn, "%s is NULL",
                          !a           ? "A"
                          : !b         ? "B"
                          : !c         ? "C"
                          : !algorithm ? "algorithm"
                                       : "replicas");
  int r = 1;
  tsr_status st = tsr__dist_gemm_check(fn, transa, transb, a, b, c);
  TSR_CALL(tsr__dist_gemm_plan(fn, st, transa, transb, a, b, c, options, &r));
  *algorithm = r > 1 ? TSR_DIST_GEMM_2_5D : TSR_DIST_GEMM_SUMMA;
  *replicas = r;
  return TSR_OK;
}

/* ------------------------------------------------------------------ the schedule ------- */

/* C = beta * C before the partial products are added (beta = 0 never reads C). */
static void scale_local(tsr_dmatrix *c, void *host, double beta) {
  if (tsr__dist_modeled()) {
    tsr__dist_model_copy((double)(c->lld * c->nloc) * (double)tsr__dtype_size(c->dtype));
    return;
  }
  for (int64_t j = 0; j < c->nloc; j++)
    for (int64_t i = 0; i < c->mloc; i++) {
      size_t e = (size_t)(i + j * c->lld);
      if (c->dtype == TSR_F32) {
        float *p = host;
        p[e] = beta == 0.0 ? 0.0f : (float)(beta * p[e]);
      } else {
        double *p = host;
        p[e] = beta == 0.0 ? 0.0 : beta * p[e];
      }
    }
}

tsr_status tsr__dist_gemm_25d(const char *fn, tsr_trans ta, tsr_trans tb, double alpha,
                              const tsr_dmatrix *a, const tsr_dmatrix *b, double beta,
                              tsr_dmatrix *c, int replicas, const tsr_dist_gemm_options *opt,
                              tsr_dist_stats *stats) {
  double t_start = MPI_Wtime();
  tsr_dist_stats st_all;
  memset(&st_all, 0, sizeof st_all);
  tsr_grid *g = c->grid;
  int q = exact_sqrt(g->size / replicas);
  int layer = g->rank / (q * q), lrank = g->rank % (q * q);
  int64_t k = ta ? a->m : a->n, kb = ta ? a->mb : a->nb;
  int64_t kl = layer_k(k, kb, replicas, layer);
  MPI_Comm lcomm = MPI_COMM_NULL;
  tsr_grid *lg = NULL;
  tsr_dmatrix *al = NULL, *bl = NULL, *cl = NULL;
  void *a_host = NULL, *b_host = NULL, *c_host = NULL, *al_host = NULL, *bl_host = NULL,
       *cl_host = NULL;
  bool a_st = false, b_st = false, c_st = false, al_st = false, bl_st = false, cl_st = false;

  int rc = MPI_Comm_split(g->comm, layer, g->rank, &lcomm);
  tsr_status st =
      rc == MPI_SUCCESS ? TSR_OK : tsr__mpi_error(fn, TSR_ERR_MPI, rc, "MPI_Comm_split");
  TSR_CALL(tsr__dist_agree(fn, g->comm, st));
  st = tsr_grid_create(lcomm, q, q, &lg); /* agreed within the layer */
  st = tsr__dist_agree(fn, g->comm, st);
  int64_t a_mb = ta ? a->nb : a->mb, b_nb = tb ? b->mb : b->nb;
  if (st == TSR_OK) st = tsr__dm_create(fn, lg, c->m, kl, a_mb, kb, c->dtype, c->device, &al);
  if (st == TSR_OK) st = tsr__dm_create(fn, lg, kl, c->n, kb, b_nb, c->dtype, c->device, &bl);
  if (st == TSR_OK) st = tsr__dm_host_get(fn, a, true, &a_host, &a_st);
  if (st == TSR_OK) st = tsr__dm_host_get(fn, b, true, &b_host, &b_st);
  if (st == TSR_OK) st = tsr__dm_host_get(fn, al, false, &al_host, &al_st);
  if (st == TSR_OK) st = tsr__dm_host_get(fn, bl, false, &bl_host, &bl_st);
  st = tsr__dist_agree(fn, g->comm, st);

  /* Slice op(A) and op(B) onto the layers. */
  if (st == TSR_OK) {
    slice_plan pa = {a, al, g, replicas, q, layer, lrank / q, lrank % q, false, ta == TSR_TRANS};
    st = x_exchange(fn, g->comm, slice_walk, &pa, c->dtype, pa.trans, false, a_host, al_host,
                    &st_all.bytes_sent, &st_all.bytes_received);
  }
  if (st == TSR_OK) {
    slice_plan pb = {b, bl, g, replicas, q, layer, lrank / q, lrank % q, true, tb == TSR_TRANS};
    st = x_exchange(fn, g->comm, slice_walk, &pb, c->dtype, pb.trans, false, b_host, bl_host,
                    &st_all.bytes_sent, &st_all.bytes_received);
  }
  if (al_host) {
    tsr_status s2 = tsr__dm_host_done(fn, al, al_host, al_st, st == TSR_OK);
    if (st == TSR_OK) st = s2;
  }
  if (bl_host) {
    tsr_status s2 = tsr__dm_host_done(fn, bl, bl_host, bl_st, st == TSR_OK);
    if (st == TSR_OK) st = s2;
  }
  if (a_host) tsr__dm_host_done(fn, a, a_host, a_st, false);
  if (b_host) tsr__dm_host_done(fn, b, b_host, b_st, false);
  st = tsr__dist_agree(fn, g->comm, st);
  st_all.comm_seconds += MPI_Wtime() - t_start;

  /* Each layer multiplies its slice with SUMMA into its partial product. */
  if (st == TSR_OK) st = tsr__dm_create(fn, lg, c->m, c->n, c->mb, c->nb, c->dtype, c->device, &cl);
  st = tsr__dist_agree(fn, g->comm, st);
  tsr_dist_stats ls;
  memset(&ls, 0, sizeof ls);
  if (st == TSR_OK) {
    tsr_dist_gemm_options lo;
    memset(&lo, 0, sizeof lo);
    lo.path = opt ? opt->path : TSR_GEMM_AUTO;
    lo.progress = opt ? opt->progress : NULL;
    lo.progress_ctx = opt ? opt->progress_ctx : NULL;
    lo.algorithm = TSR_DIST_GEMM_SUMMA;
    st = tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, alpha, al, bl, 0.0, cl, &lo, &ls);
    st = tsr__dist_agree(fn, g->comm, st);
  }
  tsr_dmatrix_free(al);
  tsr_dmatrix_free(bl);
  al = bl = NULL;

  /* C = beta * C + the sum of the layers' partial products, on C's owners. */
  double t_red = MPI_Wtime();
  if (st == TSR_OK) st = tsr__dm_host_get(fn, c, beta != 0.0, &c_host, &c_st);
  if (st == TSR_OK) st = tsr__dm_host_get(fn, cl, true, &cl_host, &cl_st);
  st = tsr__dist_agree(fn, g->comm, st);
  if (st == TSR_OK) {
    scale_local(c, c_host, beta);
    reduce_plan pr = {cl, c, g, replicas, q, layer, lrank / q, lrank % q};
    st = x_exchange(fn, g->comm, reduce_walk, &pr, c->dtype, false, true, cl_host, c_host,
                    &st_all.bytes_sent, &st_all.bytes_received);
  }
  if (cl_host) tsr__dm_host_done(fn, cl, cl_host, cl_st, false);
  if (c_host) {
    tsr_status s2 = tsr__dm_host_done(fn, c, c_host, c_st, st == TSR_OK);
    if (st == TSR_OK) st = s2;
  }
  st_all.comm_seconds += MPI_Wtime() - t_red;
  st = tsr__dist_agree(fn, g->comm, st);

  tsr_dmatrix_free(cl);
  tsr_status s2 = tsr_grid_free(lg);
  if (st == TSR_OK) st = s2;
  if (lcomm != MPI_COMM_NULL) MPI_Comm_free(&lcomm);
  st_all.bytes_redistributed = st_all.bytes_received;
  st_all.bytes_sent += ls.bytes_sent;
  st_all.bytes_received += ls.bytes_received;
  st_all.comm_seconds += ls.comm_seconds;
  st_all.compute_seconds = ls.compute_seconds;
  st_all.panels = ls.panels;
  st_all.gpu_aware_mpi = ls.gpu_aware_mpi;
  st_all.algorithm = TSR_DIST_GEMM_2_5D;
  st_all.replicas = replicas;
  st_all.total_seconds = MPI_Wtime() - t_start;
  if (stats) *stats = st_all;
  return tsr__dist_agree(fn, g->comm, st);
}
