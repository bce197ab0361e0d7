/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * General block-cyclic layouts (PBLAS descriptors with first-block sizes, any source process,
 * replicated dimensions, submatrix offsets) and the collective redistribution between two of
 * them, optionally transposing, as ScaLAPACK's p?gemr2d / p?tran do (Prylli & Tourancheau,
 * "Fast runtime block cyclic data redistribution on multiprocessors", JPDC 45(1), 1997, for
 * the idea of exchanging whole intersections of blocks).
 *
 * A 2-D redistribution is separable: element (i, j) goes from the owner of row i and column j
 * in the source to the owner of row i and column j in the destination, so each dimension is
 * cut once into segments on which both owners and both local indices are contiguous, and the
 * data a rank sends to another is the product of the matching row and column segments.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"
#include "mpi/staging.h"

/* Block index (in the whole matrix) of global index g. */
static int64_t tsr__block_of(const tsr__bc_dim *d, int64_t g) {
  return g < d->ib ? 0 : 1 + (g - d->ib) / d->b;
}

int tsr__bc_owner(const tsr__bc_dim *d, int64_t i) {
  if (d->src < 0) return -1;
  return (int)((d->src + tsr__block_of(d, d->off + i)) % d->nprocs);
}

int64_t tsr__bc_local(const tsr__bc_dim *d, int64_t i) {
  int64_t g = d->off + i;
  if (d->src < 0) return g;
  int64_t blk = tsr__block_of(d, g);
  if (blk == 0) return g;
  int64_t in_block = (g - d->ib) - (blk - 1) * d->b;
  int64_t p = d->nprocs;
  int64_t first = (blk % p); /* the first block index this owner holds, relative to src */
  /* Blocks of the same owner before blk: first, first + p, ..., blk - p. */
  if (first == 0) return d->ib + (blk / p - 1) * d->b + in_block;
  return (blk - first) / p * d->b + in_block;
}

int64_t tsr__bc_next(const tsr__bc_dim *d, int64_t i) {
  if (d->src < 0) return INT64_MAX;
  int64_t g = d->off + i;
  int64_t blk = tsr__block_of(d, g);
  int64_t end = d->ib + blk * d->b; /* first global index of block blk + 1 */
  return end - d->off;
}

/* A run of submatrix indices [i, i + len) on which the owners and local indices of both
   layouts are contiguous. */
typedef struct tsr__seg {
  int64_t i, len, src_local, dst_local;
  int src_owner, dst_owner;
} tsr__seg;

typedef struct tsr__seg_list {
  tsr__seg *v;
  int64_t n;
  int dst_dim, src_dim; /* grid dimension (0 rows, 1 columns) of each layout's owners */
} tsr__seg_list;

static tsr_status tsr__build_segs(const tsr__bc_dim *dd, const tsr__bc_dim *sd, int64_t n,
                                  tsr__seg_list *out) {
  int64_t cap = 16;
  out->v = malloc((size_t)cap * sizeof *out->v);
  out->n = 0;
  if (!out->v) return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "redistribution segments");
  for (int64_t i = 0; i < n;) {
    int64_t e = n, a = tsr__bc_next(dd, i), b = tsr__bc_next(sd, i);
    if (a < e) e = a;
    if (b < e) e = b;
    if (out->n == cap) {
      cap *= 2;
      tsr__seg *nv = realloc(out->v, (size_t)cap * sizeof *nv);
      if (!nv) return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "redistribution segments");
      out->v = nv;
    }
    tsr__seg *s = &out->v[out->n++];
    s->i = i;
    s->len = e - i;
    s->src_owner = tsr__bc_owner(sd, i);
    s->dst_owner = tsr__bc_owner(dd, i);
    s->src_local = tsr__bc_local(sd, i);
    s->dst_local = tsr__bc_local(dd, i);
    i = e;
  }
  return TSR_OK;
}

/* Whether segment s moves from the rank at grid coordinates snd to the one at rcv. A
   replicated source is read from the copy in the receiver's own process row (column). */
static bool tsr__seg_match(const tsr__seg_list *l, const tsr__seg *s, const int snd[2],
                           const int rcv[2]) {
  if (snd[0] < 0 || rcv[0] < 0) return false; /* not a process of that layout's grid */
  if (s->dst_owner >= 0 && s->dst_owner != rcv[l->dst_dim]) return false;
  if (s->src_owner < 0) return snd[l->src_dim] == rcv[l->src_dim];
  return s->src_owner == snd[l->src_dim];
}

static int64_t tsr__match_len(const tsr__seg_list *l, const int snd[2], const int rcv[2]) {
  int64_t t = 0;
  for (int64_t k = 0; k < l->n; k++)
    if (tsr__seg_match(l, &l->v[k], snd, rcv)) t += l->v[k].len;
  return t;
}

/* The row segments that move from snd to rcv, in order, into ridx (rows->n entries); returns
   their count. The same for every column, so found once per peer. */
static int64_t tsr__match_rows(const tsr__seg_list *rows, const int snd[2], const int rcv[2],
                               int64_t *ridx) {
  int64_t nr = 0;
  for (int64_t r = 0; r < rows->n; r++)
    if (tsr__seg_match(rows, &rows->v[r], snd, rcv)) ridx[nr++] = r;
  return nr;
}

/* Negates the imaginary parts of `len` complex elements of `dtype` at p (conj in place). */
static void tsr__conj_run(char *p, int64_t len, tsr_dtype dtype) {
  if (dtype == TSR_C64) {
    float *f = (float *)p;
    for (int64_t i = 0; i < len; i++)
      f[2 * i + 1] = -f[2 * i + 1];
  } else {
    double *d = (double *)p;
    for (int64_t i = 0; i < len; i++)
      d[2 * i + 1] = -d[2 * i + 1];
  }
}

/* Packs what this rank (me) sends to rcv, in destination column-major order (ridx: scratch
   of rows->n entries), conjugated when `conj` (complex dtypes). */
static void tsr__pack(char *out, const tsr__seg_list *rows, const tsr__seg_list *cols,
                      const int me[2], const int rcv[2], const tsr__bc_matrix *src, bool transpose,
                      tsr_dtype dtype, bool conj, bool modeled, int64_t *ridx) {
  const size_t es = tsr__dtype_size(dtype);
  const char *base = src->data;
  const int64_t nr = tsr__match_rows(rows, me, rcv, ridx);
  for (int64_t c = 0; c < cols->n; c++) {
    const tsr__seg *cs = &cols->v[c];
    if (!tsr__seg_match(cols, cs, me, rcv)) continue;
    for (int64_t jj = 0; jj < cs->len; jj++) {
      for (int64_t t = 0; t < nr; t++) {
        const tsr__seg *rs = &rows->v[ridx[t]];
        if (modeled) {
          out += (size_t)rs->len * es;
        } else if (!transpose) {
          const char *p = base + (size_t)(rs->src_local + (cs->src_local + jj) * src->lld) * es;
          memcpy(out, p, (size_t)rs->len * es);
          if (conj) tsr__conj_run(out, rs->len, dtype);
          out += (size_t)rs->len * es;
        } else {
          /* Destination row i is source column i: elements a leading dimension apart. */
          const char *p = base + (size_t)(cs->src_local + jj + rs->src_local * src->lld) * es;
          char *run = out;
          for (int64_t ii = 0; ii < rs->len; ii++) {
            memcpy(out, p, es);
            out += es;
            p += (size_t)src->lld * es;
          }
          if (conj) tsr__conj_run(run, rs->len, dtype);
        }
      }
    }
  }
}

/* Unpacks what snd sent to this rank (me), in the order pack() wrote it (ridx: scratch of
   rows->n entries). */
static void tsr__unpack(const char *in, const tsr__seg_list *rows, const tsr__seg_list *cols,
                        const int snd[2], const int me[2], const tsr__bc_matrix *dst,
                        tsr_dtype dtype, size_t es, unsigned flags, int64_t *ridx) {
  char *base = dst->data;
  const int64_t nr = tsr__match_rows(rows, snd, me, ridx);
  for (int64_t c = 0; c < cols->n; c++) {
    const tsr__seg *cs = &cols->v[c];
    if (!tsr__seg_match(cols, cs, snd, me)) continue;
    for (int64_t jj = 0; jj < cs->len; jj++) {
      for (int64_t t = 0; t < nr; t++) {
        const tsr__seg *rs = &rows->v[ridx[t]];
        char *p = base + (size_t)(rs->dst_local + (cs->dst_local + jj) * dst->lld) * es;
        if (flags & TSR__BC_MODELED) {
        } else if (!(flags & TSR__BC_ACCUMULATE)) {
          memcpy(p, in, (size_t)rs->len * es);
        } else if (dtype == TSR_F32 || dtype == TSR_C64) { /* complex: both parts added */
          const int64_t len = dtype == TSR_C64 ? 2 * rs->len : rs->len;
          for (int64_t ii = 0; ii < len; ii++)
            ((float *)p)[ii] += ((const float *)in)[ii];
        } else {
          const int64_t len = dtype == TSR_C128 ? 2 * rs->len : rs->len;
          for (int64_t ii = 0; ii < len; ii++)
            ((double *)p)[ii] += ((const double *)in)[ii];
        }
        in += (size_t)rs->len * es;
      }
    }
  }
}

/* Grid coordinates of every rank of g's communicator in `procs` (g itself when NULL), at
   xy[2 r], xy[2 r + 1]; -1 for a rank not in it. */
static void tsr__coords_of(const tsr_grid *g, const tsr__bc_procs *procs, int *xy) {
  for (int r = 0; r < g->size; r++) {
    xy[2 * r] = procs ? -1 : r / g->npcol;
    xy[2 * r + 1] = procs ? -1 : r % g->npcol;
  }
  if (!procs) return;
  for (int l = 0; l < (procs->copies > 1 ? procs->copies : 1); l++)
    for (int pr = 0; pr < procs->nprow; pr++)
      for (int pc = 0; pc < procs->npcol; pc++) {
        int r = procs->rank[pr * procs->npcol + pc] + l * procs->copy_stride;
        xy[2 * r] = pr;
        xy[2 * r + 1] = pc;
      }
}

/* Largest message of an exchange, in bytes (1 GiB): a rank's part for one peer may exceed
   2 GiB (2.5D's partial C at GPU sizes), and byte counts past INT_MAX trip MPIs that keep
   them in an int -- SimGrid's SMPI 3.32 then takes a 2 GiB send for a small one and copies it
   into a private buffer (the GPU-size 2.5D simulation ran out of memory that way). */
#define TSR__EXCHANGE_PIECE ((int64_t)1 << 30)

/* The data movement of one redistribution: point-to-point with exactly the peers that share
   data (counts are symmetric by construction: what r sends to q is what q expects from r), so
   a rank talks to O(its peers), not to all P as MPI_Alltoallv would (a 2.5D slice or a
   ScaLAPACK submatrix touches few ranks). The own part is a copy (copy_own; the device path
   copies it on the device). Called by every rank of the grid in the same order; the tag keeps
   it apart from other point-to-point traffic. */
static tsr_status tsr__exchange(const tsr_grid *g, tsr_dtype dtype, const char *sbuf, const int *sc,
                                const int *sd, char *rbuf, const int *rc, const int *rd,
                                bool copy_own) {
  enum { TAG = 0x7e5d };
  size_t es = tsr__dtype_size(dtype);
  int np = g->size, me = g->rank, n = 0;
  /* Messages in pieces of at most TSR__EXCHANGE_PIECE bytes (matched in order: same peers, tag
     and communicator). */
  const int64_t piece = TSR__EXCHANGE_PIECE / (int64_t)es;
  int64_t nreq = 0;
  for (int r = 0; r < np; r++)
    nreq += (sc[r] + piece - 1) / piece + (rc[r] + piece - 1) / piece;
  MPI_Request *req = malloc((size_t)(nreq > 0 ? nreq : 1) * sizeof *req);
  if (req == NULL)
    return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "%lld MPI requests", (long long)nreq);
  int mrc = MPI_SUCCESS;
  for (int r = 0; r < np && mrc == MPI_SUCCESS; r++)
    for (int64_t o = 0; r != me && o < rc[r] && mrc == MPI_SUCCESS; o += piece)
      mrc = MPI_Irecv(rbuf + (size_t)(rd[r] + o) * es, (int)(rc[r] - o < piece ? rc[r] - o : piece),
                      tsr__mpi_type(dtype), r, TAG, g->comm, &req[n++]);
  for (int k = 1; k <= np && mrc == MPI_SUCCESS; k++) { /* staggered: not all at rank 0 first */
    int r = (me + k) % np;
    for (int64_t o = 0; r != me && o < sc[r] && mrc == MPI_SUCCESS; o += piece)
      mrc = MPI_Isend(sbuf + (size_t)(sd[r] + o) * es, (int)(sc[r] - o < piece ? sc[r] - o : piece),
                      tsr__mpi_type(dtype), r, TAG, g->comm, &req[n++]);
  }
  if (copy_own && sc[me] > 0)
    memcpy(rbuf + (size_t)rd[me] * es, sbuf + (size_t)sd[me] * es, (size_t)sc[me] * es);
  /* Requests already posted are completed even after a failed post, so no buffer is freed
     under a pending operation. */
  int wrc = n > 0 ? MPI_Waitall(n, req, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
  free(req);
  if (mrc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, mrc, "MPI_Isend/MPI_Irecv");
  if (wrc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, wrc, "MPI_Waitall");
  return TSR_OK;
}

/* ---------------------------------------------------------------- device-resident ----- */

/* A growing list of the strided rectangles of one device operation (tsr__dev_copy_rects). */
typedef struct tsr__rect_list {
  tsr__rect *v;
  int64_t n, cap;
} tsr__rect_list;

static tsr_status tsr__rect_push(tsr__rect_list *l, const tsr__rect *r) {
  if (l->n == l->cap) {
    const int64_t cap = l->cap ? 2 * l->cap : 64;
    tsr__rect *nv = realloc(l->v, (size_t)cap * sizeof *nv);
    if (!nv)
      return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "%lld rectangles", (long long)cap);
    l->v = nv;
    l->cap = cap;
  }
  l->v[l->n++] = *r;
  return TSR_OK;
}

/* Where the (row segment rs, column segment cs) rectangle lies in the local block `loc`:
   element offset and strides along its rows and columns. `src_side`: loc is the source layout
   (its local indices; transposed when `tr`: destination row i is source column i), else the
   destination. */
static void tsr__loc_rect(const tsr__bc_matrix *loc, const tsr__seg *rs, const tsr__seg *cs,
                          bool src_side, bool tr, int64_t *off, int64_t *r_s, int64_t *c_s) {
  const int64_t li = src_side ? rs->src_local : rs->dst_local;
  const int64_t lj = src_side ? cs->src_local : cs->dst_local;
  *off = tr ? lj + li * loc->lld : li + lj * loc->lld;
  *r_s = tr ? loc->lld : 1;
  *c_s = tr ? 1 : loc->lld;
}

/* The rectangles between the message from `snd` to `rcv` (at element `base` of the message
   buffer, column-major with the matched rows as leading dimension: the order tsr__pack writes)
   and the local block `loc`, one per (column segment, row segment) pair, appended to *out:
   loc -> message when `to_msg` (loc is the source layout), else message -> loc (the
   destination). */
static tsr_status tsr__rects_msg(tsr__rect_list *out, int64_t base, const tsr__seg_list *rows,
                                 const tsr__seg_list *cols, const int snd[2], const int rcv[2],
                                 const tsr__bc_matrix *loc, bool transpose, bool to_msg,
                                 int64_t *ridx) {
  const int64_t nr = tsr__match_rows(rows, snd, rcv, ridx);
  int64_t rows_msg = 0; /* the message's leading dimension: the matched rows */
  for (int64_t t = 0; t < nr; t++)
    rows_msg += rows->v[ridx[t]].len;
  int64_t col0 = 0;
  for (int64_t c = 0; c < cols->n; c++) {
    const tsr__seg *cs = &cols->v[c];
    if (!tsr__seg_match(cols, cs, snd, rcv)) continue;
    int64_t row0 = 0;
    for (int64_t t = 0; t < nr; t++) {
      const tsr__seg *rs = &rows->v[ridx[t]];
      int64_t off, r_s, c_s;
      tsr__loc_rect(loc, rs, cs, to_msg, to_msg && transpose, &off, &r_s, &c_s);
      const int64_t moff = base + col0 * rows_msg + row0;
      const tsr__rect r = to_msg ? (tsr__rect){rs->len, cs->len, off, r_s, c_s, moff, 1, rows_msg}
                                 : (tsr__rect){rs->len, cs->len, moff, 1, rows_msg, off, r_s, c_s};
      TSR_CALL(tsr__rect_push(out, &r));
      row0 += rs->len;
    }
    col0 += cs->len;
  }
  return TSR_OK;
}

/* The rank's own part (me at `ms` in the source layout, `md` in the destination): straight
   from the source block to the destination block, no message in between. */
static tsr_status tsr__rects_own(tsr__rect_list *out, const tsr__seg_list *rows,
                                 const tsr__seg_list *cols, const int ms[2], const int md[2],
                                 const tsr__bc_matrix *src, const tsr__bc_matrix *dst,
                                 bool transpose, int64_t *ridx) {
  const int64_t nr = tsr__match_rows(rows, ms, md, ridx);
  for (int64_t c = 0; c < cols->n; c++) {
    const tsr__seg *cs = &cols->v[c];
    if (!tsr__seg_match(cols, cs, ms, md)) continue;
    for (int64_t t = 0; t < nr; t++) {
      const tsr__seg *rs = &rows->v[ridx[t]];
      tsr__rect r = {rs->len, cs->len, 0, 0, 0, 0, 0, 0};
      tsr__loc_rect(src, rs, cs, true, transpose, &r.src_off, &r.src_rs, &r.src_cs);
      tsr__loc_rect(dst, rs, cs, false, false, &r.dst_off, &r.dst_rs, &r.dst_cs);
      TSR_CALL(tsr__rect_push(out, &r));
    }
  }
  return TSR_OK;
}

/* One device redistribution's state: the layouts, the segment lists, the counts (sc, sd, rc,
   rd, np each; the rank's own part is left out of the messages: sd, rd and the totals cover
   the other ranks only) and the rank's coordinates in both layouts. */
typedef struct tsr__xdev {
  const tsr_grid *g;
  tsr_dtype dtype;
  size_t es;
  const tsr__seg_list *rows, *cols;
  const tsr__bc_matrix *src, *dst;
  bool transpose, conj, accumulate;
  int *sc, *sd, *rc, *rd;
  const int *sxy, *dxy;
  int64_t stot, rtot, *ridx;
  tsr__rect_list rl;
  void *sdev, *rdev;
} tsr__xdev;

/* The messages to the other ranks packed into the device send buffer, in one launch (conj'd
   when asked), and the own part copied (or added) straight into the destination block. */
static tsr_status tsr__xdev_pack(tsr__xdev *x, tsr__staging *stg) {
  const tsr_grid *g = x->g;
  const int me = g->rank, *ms = x->sxy + 2 * me, *md = x->dxy + 2 * me;
  const tsr_device dev = x->src->device;
  x->rl.n = 0;
  if (x->stot > 0) {
    TSR_CALL(tsr__staging_dev(stg, TSR__STAGE_SEND, (size_t)x->stot * x->es, &x->sdev));
    for (int r = 0; r < g->size; r++)
      if (r != me && x->sc[r] > 0)
        TSR_CALL(tsr__rects_msg(&x->rl, x->sd[r], x->rows, x->cols, ms, x->dxy + 2 * r, x->src,
                                x->transpose, true, x->ridx));
    TSR_CALL(tsr__dev_copy_rects(dev, x->sdev, tsr__array_ptr(x->src->storage), x->dtype, x->rl.v,
                                 x->rl.n, x->conj ? TSR__RECT_CONJ : TSR__RECT_COPY));
  }
  if (x->rtot > 0)
    TSR_CALL(tsr__staging_dev(stg, TSR__STAGE_RECV, (size_t)x->rtot * x->es, &x->rdev));
  if (x->sc[me] == 0) return TSR_OK;
  x->rl.n = 0;
  TSR_CALL(tsr__rects_own(&x->rl, x->rows, x->cols, ms, md, x->src, x->dst, x->transpose, x->ridx));
  const tsr__rect_op op = x->conj ? TSR__RECT_CONJ : x->accumulate ? TSR__RECT_ADD : TSR__RECT_COPY;
  return tsr__dev_copy_rects(dev, tsr__array_ptr(x->dst->storage), tsr__array_ptr(x->src->storage),
                             x->dtype, x->rl.v, x->rl.n, op);
}

/* The received messages into the destination block: one launch for all of them, or one per
   sender when adding (two senders' rectangles may cover the same elements). */
static tsr_status tsr__xdev_unpack(tsr__xdev *x) {
  const tsr_grid *g = x->g;
  const int me = g->rank, *md = x->dxy + 2 * me;
  const tsr_device dev = x->dst->device;
  x->rl.n = 0;
  for (int r = 0; r < g->size; r++) {
    if (r == me || x->rc[r] == 0) continue;
    TSR_CALL(tsr__rects_msg(&x->rl, x->rd[r], x->rows, x->cols, x->sxy + 2 * r, md, x->dst,
                            x->transpose, false, x->ridx));
    if (x->accumulate) {
      TSR_CALL(tsr__dev_copy_rects(dev, tsr__array_ptr(x->dst->storage), x->rdev, x->dtype, x->rl.v,
                                   x->rl.n, TSR__RECT_ADD));
      x->rl.n = 0;
    }
  }
  return tsr__dev_copy_rects(dev, tsr__array_ptr(x->dst->storage), x->rdev, x->dtype, x->rl.v,
                             x->rl.n, TSR__RECT_COPY);
}

/* The exchange of device-resident blocks (GPU matrices: both layouts' storage on `dev`),
   through the grid's staging object (staging.h): packed on the device (tsr__xdev_pack), the
   messages handed to MPI in device memory when it takes them, else through the pinned buffers
   (one device-to-host copy of all that leaves, one host-to-device copy of all that arrives),
   then unpacked on the device. A rank with nothing to send or receive (one rank, or aligned
   layouts) copies nothing to or from the host and does not wait for the device. Collective
   (agrees before the messages and at the end). */
static tsr_status tsr__redistribute_dev(tsr__xdev *x) {
  const tsr_grid *g = x->g;
  const int me = g->rank;
  /* The own part leaves the messages: offsets and totals over the other ranks. */
  x->stot = x->rtot = 0;
  for (int r = 0; r < g->size; r++) {
    x->sd[r] = (int)x->stot;
    x->rd[r] = (int)x->rtot;
    x->stot += r == me ? 0 : x->sc[r];
    x->rtot += r == me ? 0 : x->rc[r];
  }
  const bool staging = tsr__dist_gpu_staging();
  const bool peers = x->stot > 0 || x->rtot > 0;
  tsr__staging *stg = NULL;
  void *hs = NULL, *hr = NULL;
  tsr_status st = x->conj && x->accumulate
                      ? tsr__set_error(TSR_ERR_INTERNAL, __func__, "conjugating accumulation")
                      : tsr__staging_get(g, x->src->device, &stg);
  if (st == TSR_OK) st = tsr__xdev_pack(x, stg);
  if (st == TSR_OK && staging && x->stot > 0)
    st = tsr__staging_host(stg, TSR__STAGE_SEND, (size_t)x->stot * x->es, &hs);
  if (st == TSR_OK && staging && x->rtot > 0)
    st = tsr__staging_host(stg, TSR__STAGE_RECV, (size_t)x->rtot * x->es, &hr);
  if (st == TSR_OK && staging && x->stot > 0)
    st = tsr__staging_d2h(stg, TSR__STAGE_SEND, 0, x->sdev, 0, (size_t)x->stot * x->es, 1, NULL);
  /* The packs (and the staged copy) are complete, and the last call's unpack done with the
     receive buffers, before MPI touches them. */
  if (st == TSR_OK && peers) st = tsr__staging_ready(stg);
  st = tsr__dist_agree(g->comm, st);
  if (st == TSR_OK)
    st = tsr__exchange(g, x->dtype, staging ? hs : x->sdev, x->sc, x->sd, staging ? hr : x->rdev,
                       x->rc, x->rd, false);
  if (st == TSR_OK && staging && x->rtot > 0)
    st = tsr__staging_h2d(stg, TSR__STAGE_RECV, 0, x->rdev, 0, (size_t)x->rtot * x->es, 1, NULL);
  if (st == TSR_OK && x->rtot > 0) st = tsr__xdev_unpack(x);
  return tsr__dist_agree(g->comm, st);
}

/* The message counts and offsets of one redistribution (sc, sd, rc, rd: np entries each,
   consecutive from sc; elements), their totals, and the bytes that cross to other ranks added
   to *sent / *received. */
static tsr_status tsr__bc_counts(const tsr_grid *g, int64_t m, int64_t n, size_t es,
                                 const tsr__seg_list *rows, const tsr__seg_list *cols,
                                 const int *sxy, const int *dxy, int *sc, uint64_t *sent,
                                 uint64_t *received, int64_t *stot, int64_t *rtot) {
  const int np = g->size;
  int *sd = sc + np, *rc = sc + 2 * np, *rd = sc + 3 * np;
  const int *ms = sxy + 2 * g->rank, *md = dxy + 2 * g->rank;
  for (int r = 0; r < np; r++) {
    const int *ps = sxy + 2 * r, *pd = dxy + 2 * r;
    int64_t s = tsr__match_len(rows, ms, pd) * tsr__match_len(cols, ms, pd);
    int64_t v = tsr__match_len(rows, ps, md) * tsr__match_len(cols, ps, md);
    if (*stot + s > INT_MAX || *rtot + v > INT_MAX)
      return tsr__set_error(TSR_ERR_OVERFLOW, __func__,
                            "redistribution of %lld x %lld elements: more than INT_MAX "
                            "elements per rank",
                            (long long)m, (long long)n);
    sc[r] = (int)s;
    sd[r] = (int)*stot;
    rc[r] = (int)v;
    rd[r] = (int)*rtot;
    *stot += s;
    *rtot += v;
    if (r != g->rank) {
      *sent += (uint64_t)s * es;
      *received += (uint64_t)v * es;
    }
  }
  return TSR_OK;
}

tsr_status tsr__bc_redistribute(const tsr_grid *g, tsr_dtype dtype, int64_t m, int64_t n,
                                const tsr__bc_matrix *src, bool transpose,
                                const tsr__bc_matrix *dst, uint64_t *sent, uint64_t *received) {
  return tsr__bc_redistribute_ex(g, dtype, m, n, src, NULL, transpose, dst, NULL, 0u, sent,
                                 received);
}

tsr_status tsr__bc_redistribute_ex(const tsr_grid *g, tsr_dtype dtype, int64_t m, int64_t n,
                                   const tsr__bc_matrix *src, const tsr__bc_procs *src_procs,
                                   bool transpose, const tsr__bc_matrix *dst,
                                   const tsr__bc_procs *dst_procs, unsigned flags, uint64_t *sent,
                                   uint64_t *received) {
  if (m == 0 || n == 0) return TSR_OK;
  size_t es = tsr__dtype_size(dtype);
  int np = g->size;
  bool modeled = (flags & TSR__BC_MODELED) != 0;
  const bool conj = (flags & TSR__BC_CONJ) != 0 && tsr__dtype_is_complex(dtype);
  tsr__seg_list rows = {NULL, 0, 0, transpose ? 1 : 0}, cols = {NULL, 0, 1, transpose ? 0 : 1};
  int *sc = calloc((size_t)np * 8, sizeof *sc);
  int *sd = sc ? sc + np : NULL, *rc = sc ? sc + 2 * np : NULL, *rd = sc ? sc + 3 * np : NULL;
  int *sxy = sc ? sc + 4 * np : NULL, *dxy = sc ? sc + 6 * np : NULL;
  char *sbuf = NULL, *rbuf = NULL;
  tsr_status st = sc ? TSR_OK : tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "count arrays");
  if (st == TSR_OK) {
    tsr__coords_of(g, src_procs, sxy);
    tsr__coords_of(g, dst_procs, dxy);
  }
  /* A replicated source is read in the receiver's own process row (column): one grid. */
  if (st == TSR_OK && (src_procs || dst_procs) && (src->row.src < 0 || src->col.src < 0))
    st = tsr__set_error(TSR_ERR_INTERNAL, __func__, "replicated source across two process grids");
  const int *ms = sxy ? sxy + 2 * g->rank : NULL, *md = dxy ? dxy + 2 * g->rank : NULL;
  if (st == TSR_OK) st = tsr__build_segs(&dst->row, transpose ? &src->col : &src->row, m, &rows);
  if (st == TSR_OK) st = tsr__build_segs(&dst->col, transpose ? &src->row : &src->col, n, &cols);
  int64_t *ridx = NULL;
  if (st == TSR_OK && !(ridx = malloc((size_t)(rows.n > 0 ? rows.n : 1) * sizeof *ridx)))
    st = tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "redistribution row index");
  int64_t stot = 0, rtot = 0;
  if (st == TSR_OK)
    st = tsr__bc_counts(g, m, n, es, &rows, &cols, sxy, dxy, sc, sent, received, &stot, &rtot);
  /* Device-resident (a GPU matrix's storage on either side): messages packed on the device. */
  const bool on_dev = src->storage != NULL || dst->storage != NULL;
  if (st == TSR_OK && !on_dev) {
    st = tsr__host_alloc((size_t)(stot > 0 ? stot : 1) * es, (void **)&sbuf);
    if (st == TSR_OK) st = tsr__host_alloc((size_t)(rtot > 0 ? rtot : 1) * es, (void **)&rbuf);
    if (st == TSR_OK) {
      for (int r = 0; r < np; r++)
        if (sc[r] > 0)
          tsr__pack(sbuf + (size_t)sd[r] * es, &rows, &cols, ms, dxy + 2 * r, src, transpose, dtype,
                    conj, modeled, ridx);
    }
  }
  if (on_dev) {
    tsr__xdev x = {
        g,    dtype, es, &rows, &cols, src, dst, transpose, conj, (flags & TSR__BC_ACCUMULATE) != 0,
        sc,   sd,    rc, rd,    sxy,   dxy, 0,   0,         ridx, {NULL, 0, 0},
        NULL, NULL};
    st = tsr__dist_agree(g->comm, st);
    if (st == TSR_OK) st = tsr__redistribute_dev(&x);
    free(x.rl.v);
  } else {
    st = tsr__dist_agree(g->comm, st);
    if (st == TSR_OK) st = tsr__exchange(g, dtype, sbuf, sc, sd, rbuf, rc, rd, true);
    if (st == TSR_OK)
      for (int r = 0; r < np; r++)
        if (rc[r] > 0)
          tsr__unpack(rbuf + (size_t)rd[r] * es, &rows, &cols, sxy + 2 * r, md, dst, dtype, es,
                      flags, ridx);
    if (modeled) tsr__dist_model_copy((double)(stot + rtot) * (double)es);
    st = tsr__dist_agree(g->comm, st);
  }
  tsr__host_free(sbuf);
  tsr__host_free(rbuf);
  free(ridx);
  free(rows.v);
  free(cols.v);
  free(sc);
  return st;
}
