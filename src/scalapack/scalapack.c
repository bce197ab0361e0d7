/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtessera_scalapack: pdgemm_, psgemm_, pzgemm_ and pcgemm_ computed by Tessera (the direct
 * path of pgemm_direct.c, or SUMMA after redistribution).
 *
 * A call goes through four steps: (1) the reference PBLAS argument checks, with the
 * reference error codes, reported as the reference reports them; (2) the reference quick
 * return and the alpha = 0 / K = 0 case (sub(C) = beta sub(C), local, A and B not read);
 * (3) the BLACS context's grid as a tsr_grid, rotated so that sub(C) starts on its process
 * (0, 0) (created once per context and rotation, cached on the context's MPI communicator as
 * an attribute, freed when BLACS frees the context); (4) the product: each operand whose
 * submatrix is already in the layout SUMMA needs on that grid (full blocks from process
 * (0, 0), not transposed, blocks matching the other operands) is used in place;
 * the others are redistributed into that layout (src/mpi/redistribute.c), C back at the end.
 */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scalapack/scalapack_internal.h"
#include "tessera/scalapack.h"

/* ---------------------------------------------------------------- BLACS / PBLAS ------- */

/* From the process's ScaLAPACK (BLACS is part of it), referenced weakly: the library is
   linked before -lscalapack or preloaded in front of it, and resolves them at run time. */
extern void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol)
    __attribute__((weak));
extern void Cblacs_get(int ctxt, int what, int *val) __attribute__((weak));
extern MPI_Comm Cblacs2sys_handle(int handle) __attribute__((weak));
extern void PB_Cabort(int ctxt, char *rout, int info) __attribute__((weak));
extern void pxerbla_(const int *ctxt, const char *srname, const int *info, size_t len)
    __attribute__((weak));

/* BLACS_GET's WHAT for "the system context (MPI communicator) of this BLACS context". */
#define TSR__SGET_BLACSCONTXT 10

/* ---------------------------------------------------------------- counters ------------ */

/* The library's per-thread counters (tsr__count, core/internal.h), from a baseline that
   tsr_scalapack_reset_stats moves (tsr__counters_mark). */
enum { TSR__SL_N = TSR__COUNT_SCALAPACK_NANOSECONDS - TSR__COUNT_SCALAPACK_PDGEMM + 1 };
static uint64_t tsr__sl_base[TSR__SL_N];
static int report_rank = -1;
/* Calls of pcgemm_ and pzgemm_ (process-wide: the library's counter slots are the real
   routines'), and the baseline tsr_scalapack_reset_stats moves. */
static _Atomic uint64_t tsr__complex_calls[2], tsr__complex_base[2];

tsr_status tsr_scalapack_get_stats(tsr_scalapack_stats *s) {
  TSR_API_ENTRY();
  if (s == NULL) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "stats is NULL");
  uint64_t v[TSR__SL_N];
  tsr__counters_since(TSR__COUNT_SCALAPACK_PDGEMM, TSR__SL_N, tsr__sl_base, v);
#define TSR__SL_GET(slot) v[TSR__COUNT_SCALAPACK_##slot - TSR__COUNT_SCALAPACK_PDGEMM]
  s->pdgemm = TSR__SL_GET(PDGEMM);
  s->psgemm = TSR__SL_GET(PSGEMM);
  s->pcgemm = tsr__complex_calls[0] - tsr__complex_base[0];
  s->pzgemm = tsr__complex_calls[1] - tsr__complex_base[1];
  s->errors = TSR__SL_GET(ERRORS);
  s->quick = TSR__SL_GET(QUICK);
  s->scale = TSR__SL_GET(SCALE);
  s->summa = TSR__SL_GET(SUMMA);
  s->redistribute = TSR__SL_GET(REDIST);
  s->direct = TSR__SL_GET(DIRECT);
  s->failed = TSR__SL_GET(FAILED);
  s->seconds = (double)TSR__SL_GET(NANOSECONDS) * 1e-9;
  s->bytes_sent = TSR__SL_GET(SENT);
  s->bytes_received = TSR__SL_GET(RECEIVED);
#undef TSR__SL_GET
  return TSR_OK;
}

tsr_status tsr_scalapack_reset_stats(void) {
  tsr__counters_mark(TSR__COUNT_SCALAPACK_PDGEMM, TSR__SL_N, tsr__sl_base);
  tsr__complex_base[0] = tsr__complex_calls[0];
  tsr__complex_base[1] = tsr__complex_calls[1];
  return TSR_OK;
}

/* TSR_SCALAPACK_REPORT=FILE: one JSON line per process, appended with a single write() on
   an O_APPEND descriptor so that the lines of concurrent processes do not interleave. The file
   must be a regular file or a new name (tsr__open_append): anything else is reported on stderr
   and no line is written. */
__attribute__((destructor)) static void tsr__report_at_exit(void) {
  const char *path = tsr__env_text(TSR__ENV_SCALAPACK_REPORT);
  if (path == NULL) return;
  /* Outside any call: the messages of the file helpers name the variable. */
  TSR_API_ENTRY_AS("TSR_SCALAPACK_REPORT");
  tsr_scalapack_stats s;
  tsr_scalapack_get_stats(&s);
  char line[704];
  int len = snprintf(
      line, sizeof line,
      "{\"library\":\"tessera_scalapack\",\"rank\":%d,\"pid\":%ld,"
      "\"calls\":%llu,\"pdgemm\":%llu,\"psgemm\":%llu,\"pcgemm\":%llu,\"pzgemm\":%llu,"
      "\"paths\":{\"error\":%llu,"
      "\"quick\":%llu,\"scale\":%llu,\"summa\":%llu,\"redistribute\":%llu,\"direct\":%llu,"
      "\"failed\":%llu},\"forwarded\":0,\"seconds\":%.6f,\"bytes_sent\":%llu,"
      "\"bytes_received\":%llu}\n",
      report_rank, (long)getpid(), (unsigned long long)(s.pdgemm + s.psgemm + s.pcgemm + s.pzgemm),
      (unsigned long long)s.pdgemm, (unsigned long long)s.psgemm, (unsigned long long)s.pcgemm,
      (unsigned long long)s.pzgemm, (unsigned long long)s.errors, (unsigned long long)s.quick,
      (unsigned long long)s.scale, (unsigned long long)s.summa, (unsigned long long)s.redistribute,
      (unsigned long long)s.direct, (unsigned long long)s.failed, s.seconds,
      (unsigned long long)s.bytes_sent, (unsigned long long)s.bytes_received);
  if (len <= 0 || (size_t)len >= sizeof line) return;
  /* Without blocking, and only a regular file or a new name: a FIFO with no reader would
     keep the process from exiting, a device or a link is not a report. */
  int fd = -1;
  if (tsr__open_append(path, "report file", &fd) != TSR_OK) {
    fprintf(stderr, "tessera_scalapack: no report written: %s\n", tsr_last_error());
    return;
  }
  if (tsr__write_all(path, fd, line, (size_t)len) != TSR_OK)
    fprintf(stderr, "tessera_scalapack: %s\n", tsr_last_error());
  if (close(fd) != 0) fprintf(stderr, "tessera_scalapack: cannot close %s\n", path);
}

/* ---------------------------------------------------------------- descriptors --------- */

/* The PBLAS internal (11-entry) descriptor; PB_CargFtoC's conversion of both kinds. */
typedef struct tsr__desc11 {
  int dtype, ctxt, m, n, imb, inb, mb, nb, rsrc, csrc, lld;
} tsr__desc11;

enum { BLOCK_CYCLIC_2D = 1, BLOCK_CYCLIC_2D_INB = 2 };
/* Entry indices of the 11-entry descriptor, as error codes number them (0-based). */
enum { E_DTYPE, E_CTXT, E_M, E_N, E_IMB, E_INB, E_MB, E_NB, E_RSRC, E_CSRC, E_LLD };

static tsr__desc11 tsr__desc_from(const int *d) {
  tsr__desc11 o;
  if (d[0] == BLOCK_CYCLIC_2D) {
    o = (tsr__desc11){
        BLOCK_CYCLIC_2D_INB, d[1], d[2], d[3], d[4], d[5], d[4], d[5], d[6], d[7], d[8]};
  } else if (d[0] == BLOCK_CYCLIC_2D_INB) {
    o = (tsr__desc11){d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10]};
  } else {
    o = (tsr__desc11){d[0], d[1], 0, 0, 1, 1, 1, 1, 0, 0, 1};
  }
  return o;
}

/* Rows (columns) of an n-long dimension with first block ib and blocks b that process p
   owns when block 0 is on process src of nprocs (src -1: replicated, all n). */
static int64_t tsr__numroc_ib(int64_t n, int64_t ib, int64_t b, int p, int src, int nprocs) {
  if (src < 0 || nprocs == 1) return n;
  int d = (p - src + nprocs) % nprocs;
  if (n <= ib) return d == 0 ? n : 0;
  int64_t rest = n - ib, full = rest / b, extra = rest % b;
  /* Blocks 1..full are whole; process d owns those with index = d mod nprocs. */
  int64_t cnt = d == 0 ? full / nprocs : (full >= d ? (full - d) / nprocs + 1 : 0);
  int64_t r = (d == 0 ? ib : 0) + cnt * b;
  if (extra > 0 && (full + 1) % nprocs == d) r += extra;
  return r;
}

enum { DESCMULT = 100, BIGNUM = 10000 };

static int tsr__imin(int a, int b) {
  return a < b ? a : b;
}

/* The reference PB_Cchkmat: checks sub(X) (m x n at 0-based ia, ja) and its descriptor,
   argument positions mpos0, npos0, dpos0 (IX, JX at dpos0 - 2, dpos0 - 1), folding the
   first error into *info with the reference encoding. */
static void tsr__chkmat(const tsr__grid_pos *gp, int ctxt, int m, int mpos0, int n, int npos0,
                        int ia, int ja, const tsr__desc11 *d, int dpos0, int *info) {
  if (*info >= 0)
    *info = BIGNUM;
  else if (*info < -DESCMULT)
    *info = -*info;
  else
    *info = -*info * DESCMULT;
  int mpos = mpos0 * DESCMULT, npos = npos0 * DESCMULT;
  int iapos = (dpos0 - 2) * DESCMULT, japos = (dpos0 - 1) * DESCMULT;
  int dpos = dpos0 * DESCMULT + 1;
  if (m < 0) *info = tsr__imin(*info, mpos);
  if (n < 0) *info = tsr__imin(*info, npos);
  if (ia < 0) *info = tsr__imin(*info, iapos);
  if (ja < 0) *info = tsr__imin(*info, japos);
  bool stop = false;
  if (d->dtype != BLOCK_CYCLIC_2D_INB) {
    *info = tsr__imin(*info, dpos + E_DTYPE);
    stop = true;
  } else if (d->ctxt != ctxt) {
    *info = tsr__imin(*info, dpos + E_CTXT);
    stop = true;
  }
  if (!stop) {
    if (d->imb < 1) *info = tsr__imin(*info, dpos + E_IMB);
    if (d->inb < 1) *info = tsr__imin(*info, dpos + E_INB);
    if (d->mb < 1) *info = tsr__imin(*info, dpos + E_MB);
    if (d->nb < 1) *info = tsr__imin(*info, dpos + E_NB);
    if (d->rsrc < -1 || d->rsrc >= gp->nprow) *info = tsr__imin(*info, dpos + E_RSRC);
    if (d->csrc < -1 || d->csrc >= gp->npcol) *info = tsr__imin(*info, dpos + E_CSRC);
    if (m == 0 || n == 0) {
      if (d->m < 0) *info = tsr__imin(*info, dpos + E_M);
      if (d->n < 0) *info = tsr__imin(*info, dpos + E_N);
      if (d->lld < 1) *info = tsr__imin(*info, dpos + E_LLD);
    } else {
      if (d->m < 1) *info = tsr__imin(*info, dpos + E_M);
      if (d->n < 1) *info = tsr__imin(*info, dpos + E_N);
      if (d->m >= 1 && d->n >= 1) {
        if ((int64_t)ia + m > d->m) *info = tsr__imin(*info, iapos);
        if ((int64_t)ja + n > d->n) *info = tsr__imin(*info, japos);
      }
      if (*info == BIGNUM) {
        int64_t np = tsr__numroc_ib(d->m, d->imb, d->mb, gp->myrow, d->rsrc, gp->nprow);
        if (d->lld < (np > 1 ? np : 1)) {
          int64_t nq = tsr__numroc_ib(d->n, d->inb, d->nb, gp->mycol, d->csrc, gp->npcol);
          if (d->lld < 1 || nq > 0) *info = tsr__imin(*info, dpos + E_LLD);
        }
      }
    }
  }
  if (*info == BIGNUM)
    *info = 0;
  else if (*info % DESCMULT == 0)
    *info = -(*info / DESCMULT);
  else
    *info = -*info;
}

/* Reports a bad argument as the reference PBLAS does: PB_Cabort (the ScaLAPACK one prints
   the position and stops the program with Cblacs_abort; the PBLAS testers define their own,
   which records it), else pxerbla_, else a message on stderr. */
static void tsr__report_error(int ctxt, const char *rout, int info) {
  if (PB_Cabort != NULL) {
    char name[8];
    snprintf(name, sizeof name, "%s", rout);
    PB_Cabort(ctxt, name, info);
    return;
  }
  int pos = -info;
  if (pxerbla_ != NULL) {
    pxerbla_(&ctxt, rout, &pos, strlen(rout));
    return;
  }
  if (pos < DESCMULT)
    fprintf(stderr, "{%d}: On entry to %s parameter number %d had an illegal value\n", ctxt, rout,
            pos);
  else
    fprintf(stderr,
            "{%d}: On entry to %s parameter number %d, entry number %d had an illegal value\n",
            ctxt, rout, pos / DESCMULT, pos % DESCMULT);
}

/* ---------------------------------------------------------------- the grid ------------ */

static int grid_keyval = MPI_KEYVAL_INVALID;

/*
 * The Tessera grids of one BLACS context, cached on the context's communicator: one per
 * rotation (rs, cs), the grid whose process (0, 0) is BLACS's (rs, cs). A submatrix of C that
 * starts on process (rs, cs) is then in SUMMA's layout on that grid (its first block on
 * process 0), so C can stay in place whatever its source process.
 */
typedef struct tsr__context_grids {
  int nprow, npcol;
  tsr__pgemm_workspace direct; /* the direct path's panels (pgemm_direct.c) */
  tsr_grid *rotated[];         /* nprow * npcol entries, made on first use */
} tsr__context_grids;

/* Called by MPI when BLACS frees the context's communicator. */
static int tsr__grid_delete(MPI_Comm comm, int keyval, void *attr, void *extra) {
  (void)comm;
  (void)keyval;
  (void)extra;
  tsr__context_grids *cg = attr;
  for (int i = 0; i < cg->nprow * cg->npcol; i++)
    tsr_grid_free(cg->rotated[i]);
  free(cg->direct.p);
  free(cg);
  return MPI_SUCCESS;
}

/* The key is made once, under pthread_once (threads calling the drop-in at once make one). */
static pthread_once_t grid_keyval_once = PTHREAD_ONCE_INIT;
static int grid_keyval_rc = MPI_SUCCESS;
static void tsr__grid_keyval_create(void) {
  grid_keyval_rc =
      MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, tsr__grid_delete, &grid_keyval, NULL);
}

/* The tsr_grid of a BLACS context rotated by (rs, cs): a communicator over the context's
   processes ranked row-major by their grid coordinates relative to (rs, cs), so that
   Tessera's process (r / Q, r % Q) is BLACS's ((r / Q + rs) mod P, (r % Q + cs) mod Q),
   whatever order the BLACS grid was made in. Collective over the grid on first use. */
static tsr_status tsr__grid_of_context(int ctxt, const tsr__grid_pos *gp, int rs, int cs,
                                       tsr_grid **out, tsr__context_grids **cg_out) {
  if (Cblacs_get == NULL || Cblacs2sys_handle == NULL)
    return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__,
                          "the process has no BLACS (Cblacs_get, Cblacs2sys_handle): link "
                          "ScaLAPACK after libtessera_scalapack");
  int handle = -1;
  Cblacs_get(ctxt, TSR__SGET_BLACSCONTXT, &handle);
  MPI_Comm comm = Cblacs2sys_handle(handle);
  int size = 0, rc, p = gp->nprow, q = gp->npcol;
  if (comm == MPI_COMM_NULL || MPI_Comm_size(comm, &size) != MPI_SUCCESS || size != p * q)
    return tsr__set_error(TSR_ERR_MPI, __func__,
                          "BLACS context %d: its communicator has %d processes, the grid %dx%d",
                          ctxt, size, p, q);
  pthread_once(&grid_keyval_once, tsr__grid_keyval_create);
  if (grid_keyval_rc != MPI_SUCCESS)
    return tsr__mpi_error(__func__, TSR_ERR_MPI, grid_keyval_rc, "MPI_Comm_create_keyval");
  void *attr = NULL;
  int flag = 0;
  rc = MPI_Comm_get_attr(comm, grid_keyval, &attr, &flag);
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Comm_get_attr");
  tsr__context_grids *cg = flag ? attr : NULL;
  if (cg == NULL) {
    cg = calloc(1, sizeof *cg + (size_t)(p * q) * sizeof cg->rotated[0]);
    if (cg == NULL) return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "grid cache");
    cg->nprow = p;
    cg->npcol = q;
    rc = MPI_Comm_set_attr(comm, grid_keyval, cg);
    if (rc != MPI_SUCCESS) {
      free(cg);
      return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Comm_set_attr");
    }
  }
  tsr_grid **slot = &cg->rotated[rs * q + cs];
  if (*slot == NULL) {
    int key = ((gp->myrow - rs + p) % p) * q + (gp->mycol - cs + q) % q;
    MPI_Comm ordered = MPI_COMM_NULL;
    rc = MPI_Comm_split(comm, 0, key, &ordered);
    if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Comm_split");
    tsr_status st = tsr_grid_create(ordered, p, q, slot);
    MPI_Comm_free(&ordered);
    if (st != TSR_OK) return st;
  }
  *out = *slot;
  *cg_out = cg;
  return TSR_OK;
}

/* A dimension's source process seen from a grid rotated by `by` (replicated stays -1). */
static void tsr__rotate_dim(tsr__bc_dim *d, int by) {
  if (d->src >= 0) d->src = (d->src - by + d->nprocs) % d->nprocs;
}

/* ---------------------------------------------------------------- layouts ------------- */

/* Submatrix sub(X) (rows x cols from 0-based ix, jx) as a general block-cyclic layout. */
static tsr__bc_matrix tsr__sub_layout(const tsr__desc11 *d, int ix, int jx, const tsr__grid_pos *gp,
                                      const void *data) {
  tsr__bc_matrix x;
  x.row = (tsr__bc_dim){ix, d->imb, d->mb, d->rsrc, gp->nprow};
  x.col = (tsr__bc_dim){jx, d->inb, d->nb, d->csrc, gp->npcol};
  x.data = (void *)(uintptr_t)data; /* read-only for A and B */
  x.lld = d->lld;
  x.storage = NULL; /* host memory */
  x.device = TSR_CPU;
  return x;
}

/* Whether dimension d of a submatrix starts a block of exactly b on process 0, i.e. is
   Tessera's layout with blocks b (the submatrix's blocks are then all b long). */
static bool tsr__dim_is_standard(const tsr__bc_dim *d, int64_t b) {
  return d->src >= 0 && d->b == b && tsr__bc_next(d, 0) == b && tsr__bc_owner(d, 0) == 0;
}

/* Local index of the first submatrix index of dimension d (standard, blocks b, length len)
   owned by process p; 0 when p owns none. */
static int64_t tsr__first_local(const tsr__bc_dim *d, int64_t len, int p) {
  int64_t i = (int64_t)p * d->b;
  return i < len ? tsr__bc_local(d, i) : 0;
}

/* A Tessera distributed matrix in the caller's memory: the m x n submatrix x, whose layout is
   standard with blocks mb x nb. */
static tsr_status tsr__wrap_in_place(tsr_grid *g, tsr_dtype dt, int64_t m, int64_t n,
                                     const tsr__bc_matrix *x, struct tsr_dmatrix *out) {
  memset(out, 0, sizeof *out);
  out->grid = g;
  out->m = m;
  out->n = n;
  out->mb = x->row.b;
  out->nb = x->col.b;
  out->mloc = tsr_numroc(m, out->mb, g->myrow, 0, g->nprow);
  out->nloc = tsr_numroc(n, out->nb, g->mycol, 0, g->npcol);
  out->lld = x->lld;
  out->dtype = dt;
  out->device = TSR_CPU;
  out->ctxt = -1;
  size_t es = tsr__dtype_size(dt);
  int64_t r0 = tsr__first_local(&x->row, m, g->myrow), c0 = tsr__first_local(&x->col, n, g->mycol);
  static double empty; /* stands for a local part with no elements */
  bool none = out->mloc == 0 || out->nloc == 0;
  char *p = none ? (char *)&empty : (char *)x->data + (size_t)(r0 + c0 * x->lld) * es;
  int64_t count = none ? 1 : (out->nloc - 1) * x->lld + out->mloc;
  int64_t shape[1] = {count}, strides[1] = {1};
  return tsr_from_host_view(1, shape, strides, dt, p, &out->storage);
}

/* Tessera's layout of an m x n matrix with blocks mb x nb, over storage of `a`. */
static tsr__bc_matrix tsr__standard_layout(const tsr_dmatrix *a, const tsr_grid *g) {
  tsr__bc_matrix x;
  x.row = (tsr__bc_dim){0, a->mb, a->mb, 0, g->nprow};
  x.col = (tsr__bc_dim){0, a->nb, a->nb, 0, g->npcol};
  x.data = tsr__array_ptr(a->storage);
  x.lld = a->lld;
  x.storage = NULL; /* host memory (ScaLAPACK's matrices are on the CPU) */
  x.device = TSR_CPU;
  return x;
}

/* ---------------------------------------------------------------- the computation ----- */

/* n complex elements at col = beta * them (beta = 0 writes zeros, NaN or not). */
static void tsr__scale_complex(const tsr__pgemm_call *p, char *col, int64_t n) {
  double br = p->beta, bi = p->beta_im;
  bool zero = br == 0.0 && bi == 0.0;
  for (int64_t i = 0; i < n; i++) {
    if (p->dtype == TSR_C128) {
      double *x = (double *)(void *)col + 2 * i, xr = x[0], xi = x[1];
      x[0] = zero ? 0.0 : br * xr - bi * xi;
      x[1] = zero ? 0.0 : br * xi + bi * xr;
    } else {
      float *x = (float *)(void *)col + 2 * i;
      double xr = x[0], xi = x[1];
      x[0] = zero ? 0.0f : (float)(br * xr - bi * xi);
      x[1] = zero ? 0.0f : (float)(br * xi + bi * xr);
    }
  }
}

/* sub(C) = beta sub(C) on this process's part (beta = 0 writes zeros, NaN or not). */
static void tsr__scale_c(const tsr__pgemm_call *p) {
  const tsr__bc_matrix *c = &p->c;
  size_t es = tsr__dtype_size(p->dtype);
  for (int64_t j = 0; j < p->n;) {
    int64_t je = tsr__bc_next(&c->col, j);
    if (je > p->n) je = p->n;
    int own = tsr__bc_owner(&c->col, j);
    if (own < 0 || own == p->gp.mycol) {
      for (int64_t i = 0; i < p->m;) {
        int64_t ie = tsr__bc_next(&c->row, i);
        if (ie > p->m) ie = p->m;
        int rown = tsr__bc_owner(&c->row, i);
        if (rown < 0 || rown == p->gp.myrow) {
          int64_t li = tsr__bc_local(&c->row, i), lj = tsr__bc_local(&c->col, j);
          for (int64_t jj = 0; jj < je - j; jj++) {
            char *col = (char *)c->data + (size_t)(li + (lj + jj) * c->lld) * es;
            if (tsr__pgemm_complex(p->dtype)) {
              tsr__scale_complex(p, col, ie - i);
              continue;
            }
            for (int64_t ii = 0; ii < ie - i; ii++) {
              if (p->dtype == TSR_F64) {
                double *x = (double *)col + ii;
                *x = p->beta == 0.0 ? 0.0 : p->beta * *x;
              } else {
                float *x = (float *)col + ii;
                *x = p->beta == 0.0 ? 0.0f : (float)(p->beta * (double)*x);
              }
            }
          }
        }
        i = ie;
      }
    }
    j = je;
  }
}

static int64_t tsr__default_block(const tsr__pgemm_call *p) {
  int64_t big = p->m > p->n ? p->m : p->n;
  if (p->k > big) big = p->k;
  int64_t procs = p->gp.nprow > p->gp.npcol ? p->gp.nprow : p->gp.npcol;
  int64_t b = (big + 2 * procs - 1) / (2 * procs);
  return b < 1 ? 1 : b > 256 ? 256 : b;
}

static bool tsr__force_redistribute(void) {
  return tsr__env_choice(TSR__ENV_SCALAPACK_PATH) == 1; /* "auto|redistribute|direct" */
}

/*
 * One operand: in place when its submatrix is standard with blocks mb x nb and not
 * transposed; else a new Tessera matrix with those blocks, filled by redistribution when
 * `fill` (C with beta = 0 is not read).
 */
typedef struct tsr__operand {
  struct tsr_dmatrix wrap; /* in place */
  tsr_dmatrix *own;        /* redistributed copy, or NULL */
} tsr__operand;

static const tsr_dmatrix *tsr__operand_matrix(const tsr__operand *o) {
  return o->own ? o->own : &o->wrap;
}

static tsr_status tsr__operand_make(tsr_grid *g, tsr_dtype dt, int64_t m, int64_t n, int64_t mb,
                                    int64_t nb, const tsr__bc_matrix *x, bool trans, bool conj,
                                    bool in_place, bool fill, tsr__operand *o,
                                    tsr_dist_stats *acc) {
  memset(o, 0, sizeof *o);
  tsr_status st;
  if (in_place) {
    st = tsr__wrap_in_place(g, dt, m, n, x, &o->wrap);
    return tsr__dist_agree(g->comm, st);
  }
  st = tsr__dm_create(g, m, n, mb, nb, dt, TSR_CPU, &o->own);
  st = tsr__dist_agree(g->comm, st);
  if (st != TSR_OK || !fill) return st;
  tsr__bc_matrix dst = tsr__standard_layout(o->own, g);
  st = tsr__bc_redistribute(g, dt, m, n, x, trans, &dst, &acc->bytes_sent, &acc->bytes_received);
  if (st == TSR_OK && conj) /* op 'C': the transposed copy conjugated, in our own storage */
    for (int64_t j = 0; j < o->own->nloc; j++) {
      char *col =
          (char *)tsr__array_ptr(o->own->storage) + (size_t)(j * o->own->lld) * tsr__dtype_size(dt);
      for (int64_t i = 0; i < o->own->mloc; i++) {
        if (dt == TSR_C128)
          ((double *)(void *)col)[2 * i + 1] = -((double *)(void *)col)[2 * i + 1];
        else
          ((float *)(void *)col)[2 * i + 1] = -((float *)(void *)col)[2 * i + 1];
      }
    }
  return st;
}

static void tsr__operand_free(tsr__operand *o) {
  tsr_array_release(o->wrap.storage);
  tsr_dmatrix_free(o->own);
}

/* The product through SUMMA; *moved is set when some operand was redistributed. */
static tsr_status tsr__compute(const tsr__pgemm_call *p, tsr_grid *g, bool *moved,
                               tsr_dist_stats *acc) {
  bool nomove = !tsr__force_redistribute();
  /* Blocks: C's when C is in place, else a default; the inner block from A or B. */
  int64_t bd = tsr__default_block(p);
  bool c_std = nomove && tsr__dim_is_standard(&p->c.row, p->c.row.b) &&
               tsr__dim_is_standard(&p->c.col, p->c.col.b);
  int64_t br = c_std ? p->c.row.b : bd, bc = c_std ? p->c.col.b : bd;
  bool a_std = nomove && !p->ta && tsr__dim_is_standard(&p->a.row, br) &&
               tsr__dim_is_standard(&p->a.col, p->a.col.b);
  bool b_std = nomove && !p->tb && tsr__dim_is_standard(&p->b.col, bc) &&
               tsr__dim_is_standard(&p->b.row, p->b.row.b);
  int64_t bk = a_std ? p->a.col.b : b_std ? p->b.row.b : bd;
  if (b_std && p->b.row.b != bk) b_std = false;
  /* Tessera's SUMMA reads A's panels as whole local columns: its local array must be tight. */
  if (a_std) {
    int64_t mloc = tsr_numroc(p->m, br, g->myrow, 0, g->nprow);
    int bad = p->a.lld != (mloc > 1 ? mloc : 1), any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, g->comm);
    if (any) a_std = false;
  }
  *moved = !(a_std && b_std && c_std);

  tsr__operand oa, ob, oc;
  memset(&oa, 0, sizeof oa);
  memset(&ob, 0, sizeof ob);
  memset(&oc, 0, sizeof oc);
  bool read_c = p->beta != 0.0 || p->beta_im != 0.0;
  tsr_status st = tsr__operand_make(g, p->dtype, p->m, p->k, br, bk, &p->a, p->ta, p->conj_a, a_std,
                                    true, &oa, acc);
  if (st == TSR_OK)
    st = tsr__operand_make(g, p->dtype, p->k, p->n, bk, bc, &p->b, p->tb, p->conj_b, b_std, true,
                           &ob, acc);
  if (st == TSR_OK)
    st = tsr__operand_make(g, p->dtype, p->m, p->n, br, bc, &p->c, false, false, c_std, read_c, &oc,
                           acc);
  if (st == TSR_OK) {
    tsr_dist_stats s;
    memset(&s, 0, sizeof s);
    if (tsr__pgemm_complex(p->dtype))
      st = tsr_dist_gemm_complex(TSR_NO_TRANS, TSR_NO_TRANS,
                                 (tsr_complex128){p->alpha, p->alpha_im}, tsr__operand_matrix(&oa),
                                 tsr__operand_matrix(&ob), (tsr_complex128){p->beta, p->beta_im},
                                 (tsr_dmatrix *)tsr__operand_matrix(&oc), NULL, &s);
    else
      st = tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, p->alpha, tsr__operand_matrix(&oa),
                            tsr__operand_matrix(&ob), p->beta,
                            (tsr_dmatrix *)tsr__operand_matrix(&oc), NULL, &s);
    acc->bytes_sent += s.bytes_sent;
    acc->bytes_received += s.bytes_received;
  }
  if (st == TSR_OK && oc.own != NULL) {
    tsr__bc_matrix from = tsr__standard_layout(oc.own, g);
    st = tsr__bc_redistribute(g, p->dtype, p->m, p->n, &from, false, &p->c, &acc->bytes_sent,
                              &acc->bytes_received);
  }
  tsr__operand_free(&oa);
  tsr__operand_free(&ob);
  tsr__operand_free(&oc);
  return st;
}

static char tsr__upper(char c) {
  return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

static double tsr__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* *p as a double (re, im): p points to a float for PSGEMM, two for PCGEMM, two doubles for
   PZGEMM. */
static void tsr__scalar(tsr_dtype dtype, const void *p, double *re, double *im) {
  *im = 0.0;
  switch (dtype) {
  case TSR_F64: *re = *(const double *)p; break;
  case TSR_F32: *re = (double)*(const float *)p; break;
  case TSR_C128:
    *re = ((const double *)p)[0];
    *im = ((const double *)p)[1];
    break;
  default:
    *re = (double)((const float *)p)[0];
    *im = (double)((const float *)p)[1];
    break;
  }
}

/* The distributed case of pgemm: sub(C) on a grid of Tessera's that starts on process (0, 0),
   computed by compute(); counted and reported like the reference (a failure message on
   stderr, sub(C) possibly partly updated). */
static void tsr__pgemm_distributed(tsr__pgemm_call *p) {
  const char *rout = p->rout;
  tsr__grid_pos gp = p->gp;
  int ctxt = p->ctxt;
  tsr_grid *g = NULL;
  tsr__context_grids *cg = NULL;
  tsr_dist_stats acc;
  memset(&acc, 0, sizeof acc);
  bool moved = false;
  /* Messages of Tessera's layers name the routine the user called. */
  const char *prev = tsr__api_enter(rout);
  int path = tsr__env_choice(TSR__ENV_SCALAPACK_PATH); /* auto | redistribute | direct */
  bool direct = tsr__pgemm_direct_pays(p, path < 0 ? 0 : path);
  tsr_status st = TSR_OK;
  /* Complex takes the direct path unless TSR_SCALAPACK_PATH=redistribute (or its panels do not
     fit one MPI message): its local products are the complex host GEMM, where the
     redistributing path's SUMMA runs tsr_dist_gemm_complex. */
  if (!direct && tsr__pgemm_complex(p->dtype) && path != 1) direct = tsr__pgemm_direct_pays(p, 2);
  if (direct) {
    /* On the caller's layouts: BLACS's grid as it is. */
    st = tsr__grid_of_context(ctxt, &gp, 0, 0, &g, &cg);
    if (st == TSR_OK)
      st = tsr__pgemm_direct(p, g, &cg->direct, &acc.bytes_sent, &acc.bytes_received);
  } else {
    /* The grid on which sub(C) starts on process (0, 0), the layouts seen from it. */
    int rs = tsr__bc_owner(&p->c.row, 0), cs = tsr__bc_owner(&p->c.col, 0);
    rs = rs < 0 ? 0 : rs;
    cs = cs < 0 ? 0 : cs;
    tsr__bc_matrix *ops[3] = {&p->a, &p->b, &p->c};
    for (int i = 0; i < 3; i++) {
      tsr__rotate_dim(&ops[i]->row, rs);
      tsr__rotate_dim(&ops[i]->col, cs);
    }
    st = tsr__grid_of_context(ctxt, &gp, rs, cs, &g, &cg);
    if (st == TSR_OK) st = tsr__compute(p, g, &moved, &acc);
  }
  tsr__count(TSR__COUNT_SCALAPACK_SENT, acc.bytes_sent);
  tsr__count(TSR__COUNT_SCALAPACK_RECEIVED, acc.bytes_received);
  if (st != TSR_OK) {
    tsr__count(TSR__COUNT_SCALAPACK_FAILED, 1);
    fprintf(stderr, "tessera_scalapack: %s failed, sub(C) may be partly updated: %s\n", rout,
            tsr_last_error());
  } else {
    tsr__count(direct  ? TSR__COUNT_SCALAPACK_DIRECT
               : moved ? TSR__COUNT_SCALAPACK_REDIST
                       : TSR__COUNT_SCALAPACK_SUMMA,
               1);
  }
  tsr__api_leave(&prev);
}

/* ALPHA and BETA are read where the reference PDGEMM reads them: after the argument checks,
   and not at all for M = 0 or N = 0 (its quick return). A NULL one there, where the reference
   would crash, is reported as an illegal value of its argument (INFO -6 or -15). */
static void tsr__pgemm(tsr_dtype dtype, const char *rout, const char *transa, const char *transb,
                       const int *m, const int *n, const int *k, const void *alpha_p, const void *a,
                       const int *ia, const int *ja, const int *desca, const void *b, const int *ib,
                       const int *jb, const int *descb, const void *beta_p, void *c, const int *ic,
                       const int *jc, const int *descc) {
  double t0 = tsr__now();
  int mpi_up = 0;
  if (report_rank < 0 && MPI_Initialized(&mpi_up) == MPI_SUCCESS && mpi_up)
    MPI_Comm_rank(MPI_COMM_WORLD, &report_rank);
  char tra = tsr__upper(*transa), trb = tsr__upper(*transb);
  bool nota = tra == 'N', notb = trb == 'N';
  tsr__desc11 da = tsr__desc_from(desca), db = tsr__desc_from(descb), dc = tsr__desc_from(descc);
  int ai = *ia - 1, aj = *ja - 1, bi = *ib - 1, bj = *jb - 1, ci = *ic - 1, cj = *jc - 1;
  int ctxt = da.ctxt;
  tsr__grid_pos gp = {-1, -1, -1, -1};
  int info = 0;
  if (Cblacs_gridinfo == NULL) {
    fprintf(stderr,
            "tessera_scalapack: %s: the process has no BLACS; link ScaLAPACK after "
            "libtessera_scalapack\n",
            rout);
    tsr__count(TSR__COUNT_SCALAPACK_FAILED, 1);
    return;
  }
  Cblacs_gridinfo(ctxt, &gp.nprow, &gp.npcol, &gp.myrow, &gp.mycol);
  if (gp.nprow == -1) info = -(1001 + E_CTXT);
  if (info == 0) {
    if (!nota && tra != 'T' && tra != 'C')
      info = -1;
    else if (!notb && trb != 'T' && trb != 'C')
      info = -2;
    if (nota)
      tsr__chkmat(&gp, ctxt, *m, 3, *k, 5, ai, aj, &da, 10, &info);
    else
      tsr__chkmat(&gp, ctxt, *k, 5, *m, 3, ai, aj, &da, 10, &info);
    if (notb)
      tsr__chkmat(&gp, ctxt, *k, 5, *n, 4, bi, bj, &db, 14, &info);
    else
      tsr__chkmat(&gp, ctxt, *n, 4, *k, 5, bi, bj, &db, 14, &info);
    tsr__chkmat(&gp, ctxt, *m, 3, *n, 4, ci, cj, &dc, 19, &info);
  }
  double alpha = 0.0, beta = 0.0, alpha_im = 0.0, beta_im = 0.0;
  if (info == 0 && *m != 0 && *n != 0) {
    if (alpha_p == NULL)
      info = -6;
    else if (beta_p == NULL)
      info = -15;
    else {
      tsr__scalar(dtype, alpha_p, &alpha, &alpha_im);
      tsr__scalar(dtype, beta_p, &beta, &beta_im);
    }
  }
  if (info != 0) {
    tsr__count(TSR__COUNT_SCALAPACK_ERRORS, 1);
    tsr__report_error(ctxt, rout, info);
    return;
  }
  tsr__pgemm_call p;
  p.rout = rout;
  p.dtype = dtype;
  p.ta = !nota;
  p.tb = !notb;
  /* 'C' conjugates for the complex routines; for the real ones it is 'T', as in BLAS. */
  p.conj_a = tsr__pgemm_complex(dtype) && tra == 'C';
  p.conj_b = tsr__pgemm_complex(dtype) && trb == 'C';
  p.m = *m;
  p.n = *n;
  p.k = *k;
  p.alpha = alpha;
  p.beta = beta;
  p.alpha_im = alpha_im;
  p.beta_im = beta_im;
  p.a = tsr__sub_layout(&da, ai, aj, &gp, a);
  p.b = tsr__sub_layout(&db, bi, bj, &gp, b);
  p.c = tsr__sub_layout(&dc, ci, cj, &gp, c);
  p.gp = gp;
  p.ctxt = ctxt;
  p.mode[0] = p.mode[1] = -1;
  bool alpha0 = alpha == 0.0 && alpha_im == 0.0, beta1 = beta == 1.0 && beta_im == 0.0;
  if (p.m == 0 || p.n == 0 || ((alpha0 || p.k == 0) && beta1)) {
    tsr__count(TSR__COUNT_SCALAPACK_QUICK, 1);
  } else if (alpha0 || p.k == 0) {
    tsr__scale_c(&p);
    tsr__count(TSR__COUNT_SCALAPACK_SCALE, 1);
  } else {
    tsr__pgemm_distributed(&p);
  }
  double dt = tsr__now() - t0;
  tsr__count(TSR__COUNT_SCALAPACK_NANOSECONDS, (unsigned long long)(dt * 1e9));
}

void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc) {
  tsr__count(TSR__COUNT_SCALAPACK_PDGEMM, 1);
  tsr__pgemm(TSR_F64, "PDGEMM", transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb,
             beta, c, ic, jc, descc);
}

void pcgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
             const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
             float *c, const int *ic, const int *jc, const int *descc) {
  tsr__complex_calls[0]++;
  tsr__pgemm(TSR_C64, "PCGEMM", transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb,
             beta, c, ic, jc, descc);
}

void pzgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc) {
  tsr__complex_calls[1]++;
  tsr__pgemm(TSR_C128, "PZGEMM", transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb,
             beta, c, ic, jc, descc);
}

void psgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
             const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
             float *c, const int *ic, const int *jc, const int *descc) {
  tsr__count(TSR__COUNT_SCALAPACK_PSGEMM, 1);
  tsr__pgemm(TSR_F32, "PSGEMM", transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb,
             beta, c, ic, jc, descc);
}
