/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The direct path of libtessera_scalapack: PDGEMM/PSGEMM computed on the caller's own
 * block-cyclic layouts, whatever their block sizes, first blocks, source processes, offsets
 * and transposes, with the communication PBLAS's own PDGEMM makes (broadcasts along process
 * rows and columns, gathers along the process row or column that holds a panel) and nothing
 * else: no agreement, no redistribution, no collective over the whole grid.
 *
 * The algorithm is SUMMA (van de Geijn and Watts, "SUMMA: Scalable Universal Matrix
 * Multiplication Algorithm", Concurrency: Practice and Experience 9(4), 1997) over general
 * block-cyclic layouts, as PBLAS's PB_CpgemmAB does (Choi, Dongarra, Ostrouchov, Petitet,
 * Walker, Whaley, "A proposal for a set of parallel basic linear algebra subprograms", LAPACK
 * Working Note 100): k runs in steps that stay inside one block of A's k index and one of
 * B's; for each step, each operand's panel (M x kb of op(A), kb x N of op(B)) is brought to
 * the processes of C that need its rows (columns) by one of three modes, decided from the
 * descriptors alone so every process decides alike:
 *
 *  - part:  the panel's long index (M of A, N of B) is distributed over the same grid
 *           dimension as C's and every index has the same owner as in C (or is held by every
 *           process): the process row or column holding the step broadcasts to each of its
 *           peers exactly the part that peer needs (SUMMA's broadcast);
 *  - full:  the long index is held whole by the holding processes, but C distributes it
 *           over the other grid dimension (a transposed operand) or replicates it: the whole
 *           panel is broadcast and every process takes its part;
 *  - gathered: otherwise the holders first gather the panel along their process row or
 *           column (MPI_Allgatherv), then broadcast it whole.
 *
 * The parts of consecutive steps are stacked, and one local GEMM (tsr_gemm_host) multiplies
 * up to TSR__PD_KW of k at a time into this process's part of sub(C).
 */
#include <stdlib.h>
#include <string.h>

#include "scalapack/scalapack_internal.h"

/* Most k of one local GEMM: the stacked parts of this many steps are multiplied at once. */
enum { TSR__PD_KW = 256 };

enum { TSR__PD_PART, TSR__PD_FULL, TSR__PD_GATHERED };

/* One operand's panels as C needs them. t is the long index: M of op(A), N of op(B). */
typedef struct tsr__pd_strip {
  tsr__bc_dim dl, dk;   /* t and k as stored */
  const char *data;     /* the local array (column-major, lld) */
  int64_t lld;
  bool t_rows;          /* t runs down the local array (op not transposed for A) */
  int gl;               /* grid dimension of t as stored: 0 process rows, 1 columns */
  tsr__bc_dim dt;       /* C's dimension of t */
  int gt;               /* its grid dimension */
  int64_t len;          /* M or N */
  int mode;             /* TSR__PD_PART, _FULL, _GATHERED */
  int64_t mine;         /* how many t this process holds in C */
  int64_t *cnt, *first; /* GATHERED: per process along gl, its t count and first local index */
  char *stack;          /* the stacked parts: mine x TSR__PD_KW, column-major */
} tsr__pd_strip;

/* Whether every process holds all of d (replicated, or a single process along it). */
static bool tsr__pd_whole(const tsr__bc_dim *d) {
  return d->src < 0 || d->nprocs == 1;
}

static int64_t tsr__pd_next(const tsr__bc_dim *d, int64_t t) {
  return tsr__pd_whole(d) ? INT64_MAX : tsr__bc_next(d, t);
}

/* Owner of t along d, -1 when every process holds it. */
static int tsr__pd_owner(const tsr__bc_dim *d, int64_t t) {
  return tsr__pd_whole(d) ? -1 : tsr__bc_owner(d, t);
}

static int64_t tsr__pd_min3(int64_t a, int64_t b, int64_t c) {
  int64_t m = a < b ? a : b;
  return m < c ? m : c;
}

/* Whether indices [0, len) have the same owner in a and b (both distributed). */
static bool tsr__pd_same_owners(const tsr__bc_dim *a, const tsr__bc_dim *b, int64_t len) {
  for (int64_t t = 0; t < len;) {
    if (tsr__bc_owner(a, t) != tsr__bc_owner(b, t)) return false;
    t = tsr__pd_min3(len, tsr__bc_next(a, t), tsr__bc_next(b, t));
  }
  return true;
}

/* How many of [0, len) process p holds along d (all when d is whole). */
static int64_t tsr__pd_count(const tsr__bc_dim *d, int64_t len, int p) {
  if (tsr__pd_whole(d)) return len;
  int64_t c = 0;
  for (int64_t t = 0; t < len;) {
    int64_t e = tsr__pd_min3(len, tsr__bc_next(d, t), INT64_MAX);
    if (tsr__bc_owner(d, t) == p) c += e - t;
    t = e;
  }
  return c;
}

static int tsr__pd_mode(const tsr__bc_dim *dl, int gl, const tsr__bc_dim *dt, int gt,
                        int64_t len) {
  bool lw = tsr__pd_whole(dl);
  if (!tsr__pd_whole(dt) && gl == gt && (lw || tsr__pd_same_owners(dl, dt, len)))
    return TSR__PD_PART;
  return lw ? TSR__PD_FULL : TSR__PD_GATHERED;
}

/* The strip of operand x for C's dimension dt; `t_rows`: t runs down x's local rows. */
static tsr__pd_strip tsr__pd_strip_of(const tsr__bc_matrix *x, bool t_rows, const tsr__bc_dim *dt,
                                      int gt, int64_t len, int my_t) {
  tsr__pd_strip s;
  memset(&s, 0, sizeof s);
  s.dl = t_rows ? x->row : x->col;
  s.dk = t_rows ? x->col : x->row;
  s.data = x->data;
  s.lld = x->lld;
  s.t_rows = t_rows;
  s.gl = t_rows ? 0 : 1;
  s.dt = *dt;
  s.gt = gt;
  s.len = len;
  s.mode = tsr__pd_mode(&s.dl, s.gl, &s.dt, gt, len);
  s.mine = tsr__pd_count(&s.dt, len, my_t);
  return s;
}

/* ---------------------------------------------------------------- copies -------------- */

/* dst(i, kk) = src[i * st + kk * sk] for i < rows, kk < kb; dst column-major with ldd. */
static void tsr__pd_copy(char *dst, int64_t ldd, const char *src, int64_t st, int64_t sk,
                         int64_t rows, int64_t kb, size_t es) {
  if (st == 1) {
    for (int64_t kk = 0; kk < kb; kk++)
      memcpy(dst + (size_t)(kk * ldd) * es, src + (size_t)(kk * sk) * es, (size_t)rows * es);
    return;
  }
  for (int64_t i = 0; i < rows; i++)
    for (int64_t kk = 0; kk < kb; kk++)
      memcpy(dst + (size_t)(i + kk * ldd) * es, src + (size_t)(i * st + kk * sk) * es, es);
}

/* Rows [t, t + rows) of the step at local k index lk, from this process's local array. */
static void tsr__pd_copy_local(const tsr__pd_strip *s, int64_t t, int64_t rows, int64_t lk,
                               int64_t kb, char *dst, int64_t ldd, size_t es) {
  int64_t lt = tsr__bc_local(&s->dl, t);
  int64_t st = s->t_rows ? 1 : s->lld, sk = s->t_rows ? s->lld : 1;
  const char *src = s->data + (size_t)(s->t_rows ? lt + lk * s->lld : lk + lt * s->lld) * es;
  tsr__pd_copy(dst, ldd, src, st, sk, rows, kb, es);
}

/* This process's part (t owned by my_t in C) of the step into dst (mine x kb, ld mine): from
   the local array (`from` NULL) or from the whole panel `from` (the FULL or GATHERED format). */
static void tsr__pd_take_part(const tsr__pd_strip *s, int my_t, int64_t lk, int64_t kb,
                              const char *from, char *dst, size_t es) {
  int64_t q = 0;
  bool by_owner = from != NULL && s->mode == TSR__PD_GATHERED;
  for (int64_t t = 0; t < s->len;) {
    int64_t e = tsr__pd_min3(s->len, tsr__pd_next(&s->dt, t),
                             by_owner ? tsr__bc_next(&s->dl, t) : INT64_MAX);
    int o = tsr__pd_owner(&s->dt, t);
    if (o < 0 || o == my_t) {
      char *d = dst + (size_t)q * es;
      if (from == NULL) {
        tsr__pd_copy_local(s, t, e - t, lk, kb, d, s->mine, es);
      } else if (by_owner) {
        int p = tsr__bc_owner(&s->dl, t);
        int64_t base = 0;
        for (int r = 0; r < p; r++) base += s->cnt[r] * kb;
        int64_t pos = tsr__bc_local(&s->dl, t) - s->first[p];
        tsr__pd_copy(d, s->mine, from + (size_t)(base + pos) * es, 1, s->cnt[p], e - t, kb, es);
      } else {
        tsr__pd_copy(d, s->mine, from + (size_t)t * es, 1, s->len, e - t, kb, es);
      }
      q += e - t;
    }
    t = e;
  }
}

/* ---------------------------------------------------------------- one step ------------ */

typedef struct tsr__pd_ctx {
  const tsr_grid *g;
  size_t es;
  char *whole;        /* a whole panel: len x TSR__PD_KW elements */
  uint64_t *sent, *received; /* bytes to and from other processes */
} tsr__pd_ctx;

static MPI_Comm tsr__pd_comm(const tsr_grid *g, int dim) {
  return dim == 0 ? g->col_comm : g->row_comm; /* members differ in grid dimension dim */
}

static int tsr__pd_coord(const tsr_grid *g, int dim) {
  return dim == 0 ? g->myrow : g->mycol;
}

static int tsr__pd_size(const tsr_grid *g, int dim) {
  return dim == 0 ? g->nprow : g->npcol;
}

/* GATHERED: the holders of a step gather its panel along gl into c->whole (process r's t in
   increasing order at r's place: cnt[r] x kb, column-major). */
static tsr_status tsr__pd_gather(const tsr__pd_strip *s, const tsr__pd_ctx *c, int64_t lk,
                                 int64_t kb) {
  const tsr_grid *g = c->g;
  int np = tsr__pd_size(g, s->gl), me = tsr__pd_coord(g, s->gl);
  int *counts = (int *)(void *)(s->first + np), *displs = counts + np;
  int64_t off = 0;
  for (int r = 0; r < np; r++) {
    counts[r] = (int)((size_t)(s->cnt[r] * kb) * c->es);
    displs[r] = (int)((size_t)off * c->es);
    off += s->cnt[r] * kb;
  }
  if (s->cnt[me] > 0) {
    /* This process's t are consecutive in its local array, from first[me]. */
    int64_t st = s->t_rows ? 1 : s->lld, sk = s->t_rows ? s->lld : 1;
    const char *src =
        s->data + (size_t)(s->t_rows ? s->first[me] + lk * s->lld : lk + s->first[me] * s->lld) *
                      c->es;
    tsr__pd_copy(c->whole + displs[me], s->cnt[me], src, st, sk, s->cnt[me], kb, c->es);
  }
  int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, c->whole, counts, displs, MPI_BYTE,
                          tsr__pd_comm(g, s->gl));
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Allgatherv");
  *c->received += (uint64_t)(off - s->cnt[me] * kb) * c->es;
  *c->sent += (uint64_t)(np - 1) * (uint64_t)(s->cnt[me] * kb) * c->es;
  return TSR_OK;
}

/* Brings step [k0, k0 + kb) of strip s to this process's stacked part at column `at`. */
static tsr_status tsr__pd_step(const tsr__pd_strip *s, const tsr__pd_ctx *c, int64_t k0,
                               int64_t kb, int64_t at) {
  const tsr_grid *g = c->g;
  int gk = 1 - s->gl, line = tsr__pd_owner(&s->dk, k0);
  bool bcast = line >= 0 && tsr__pd_size(g, gk) > 1;
  bool holder = line < 0 || tsr__pd_coord(g, gk) == line;
  int my_t = tsr__pd_coord(g, s->gt);
  int64_t lk = holder ? tsr__bc_local(&s->dk, k0) : 0;
  char *part = s->stack + (size_t)(at * s->mine) * c->es;
  tsr_status st = TSR_OK;
  if (s->mode == TSR__PD_PART) {
    if (holder) tsr__pd_take_part(s, my_t, lk, kb, NULL, part, c->es);
    if (bcast && s->mine > 0) {
      int rc = MPI_Bcast(part, (int)((size_t)(s->mine * kb) * c->es), MPI_BYTE, line,
                         tsr__pd_comm(g, gk));
      if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");
      uint64_t bytes = (uint64_t)(s->mine * kb) * c->es;
      if (holder)
        *c->sent += (uint64_t)(tsr__pd_size(g, gk) - 1) * bytes;
      else
        *c->received += bytes;
    }
    return TSR_OK;
  }
  if (holder && s->mode == TSR__PD_GATHERED) st = tsr__pd_gather(s, c, lk, kb);
  if (holder && s->mode == TSR__PD_FULL)
    tsr__pd_copy_local(s, 0, s->len, lk, kb, c->whole, s->len, c->es);
  if (st != TSR_OK) return st;
  if (bcast) {
    int rc = MPI_Bcast(c->whole, (int)((size_t)(s->len * kb) * c->es), MPI_BYTE, line,
                       tsr__pd_comm(g, gk));
    if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");
    uint64_t bytes = (uint64_t)(s->len * kb) * c->es;
    if (holder)
      *c->sent += (uint64_t)(tsr__pd_size(g, gk) - 1) * bytes;
    else
      *c->received += bytes;
  }
  tsr__pd_take_part(s, my_t, 0, kb, c->whole, part, c->es);
  return TSR_OK;
}

/* ---------------------------------------------------------------- the call ------------ */

/* Bytes of workspace a call needs at most (the same on every process). */
static size_t tsr__pd_workspace_bytes(const tsr__pgemm_call *p, size_t es) {
  int64_t big = p->m > p->n ? p->m : p->n;
  size_t panels = (size_t)(p->m + p->n + big) * TSR__PD_KW * es;
  size_t tables = (size_t)(p->gp.nprow + p->gp.npcol) * 2 * (2 * sizeof(int64_t));
  return panels + tables + 64;
}

/* Grows ws to `need` bytes on every process alike; agreed (the one collective that PBLAS does
   not make, and only when the workspace grows). */
static tsr_status tsr__pd_reserve(tsr__pgemm_workspace *ws, size_t need, MPI_Comm comm) {
  if (ws->bytes >= need) return TSR_OK;
  free(ws->p);
  ws->p = malloc(need);
  ws->bytes = ws->p ? need : 0;
  tsr_status st = ws->p ? TSR_OK
                        : tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__,
                                         "cannot allocate %zu bytes of panel workspace", need);
  st = tsr__dist_agree(comm, st);
  if (st != TSR_OK) { /* every process starts again from nothing */
    free(ws->p);
    ws->p = NULL;
    ws->bytes = 0;
  }
  return st;
}

/* The GATHERED tables: each process's count and first local index along gl. */
static void tsr__pd_tables(tsr__pd_strip *s, int np) {
  for (int r = 0; r < np; r++) s->cnt[r] = s->first[r] = 0;
  for (int64_t t = 0; t < s->len;) {
    int64_t e = tsr__pd_min3(s->len, tsr__bc_next(&s->dl, t), INT64_MAX);
    int r = tsr__bc_owner(&s->dl, t);
    if (s->cnt[r] == 0) s->first[r] = tsr__bc_local(&s->dl, t);
    s->cnt[r] += e - t;
    t = e;
  }
}

/* Lays the workspace out: A's and B's stacks, the whole panel, the tables. */
static void tsr__pd_layout(tsr__pd_strip *sa, tsr__pd_strip *sb, const tsr_grid *g, char *w,
                           size_t es, char **whole) {
  sa->stack = w;
  w += (size_t)(sa->mine * TSR__PD_KW) * es;
  sb->stack = w;
  w += (size_t)(sb->mine * TSR__PD_KW) * es;
  *whole = w;
  int64_t big = sa->len > sb->len ? sa->len : sb->len;
  w += (size_t)(big * TSR__PD_KW) * es;
  w = (char *)(((uintptr_t)w + 15) & ~(uintptr_t)15);
  tsr__pd_strip *ss[2] = {sa, sb};
  for (int i = 0; i < 2; i++) {
    int np = tsr__pd_size(g, ss[i]->gl);
    ss[i]->cnt = (int64_t *)(void *)w;
    ss[i]->first = ss[i]->cnt + np;
    w += (size_t)np * 2 * (2 * sizeof(int64_t)); /* cnt, first, then counts/displs (int) */
    if (ss[i]->mode == TSR__PD_GATHERED) tsr__pd_tables(ss[i], np);
  }
}

/* This process's part of sub(C): its first element (the part is contiguous from there). */
static char *tsr__pd_c_part(const tsr__pgemm_call *p) {
  int64_t t0 = 0, j0 = 0;
  while (tsr__pd_owner(&p->c.row, t0) >= 0 && tsr__pd_owner(&p->c.row, t0) != p->gp.myrow)
    t0 = tsr__pd_next(&p->c.row, t0);
  while (tsr__pd_owner(&p->c.col, j0) >= 0 && tsr__pd_owner(&p->c.col, j0) != p->gp.mycol)
    j0 = tsr__pd_next(&p->c.col, j0);
  int64_t li = tsr__bc_local(&p->c.row, t0), lj = tsr__bc_local(&p->c.col, j0);
  return (char *)p->c.data + (size_t)(li + lj * p->c.lld) * tsr__dtype_size(p->dtype);
}

/* Whether C's dimension d is replicated over more than one process (every copy then gets the
   bits of the one in process row or column 0). */
static bool tsr__pd_copies(const tsr__bc_dim *d) {
  return d->src < 0 && d->nprocs > 1;
}

/* Whether this process computes its part of sub(C): the copy of a replicated dimension in
   process row (column) 0 is computed, the others receive it, so that every copy has the same
   bits whatever kernel, blocks or threads each process's GEMM runs with. */
static bool tsr__pd_computes(const tsr__pgemm_call *p) {
  return (!tsr__pd_copies(&p->c.row) || p->gp.myrow == 0) &&
         (!tsr__pd_copies(&p->c.col) || p->gp.mycol == 0);
}

/* The copies of a replicated sub(C) from process row (column) 0: broadcast along columns
   (rows); with both dimensions replicated, process (0, 0)'s along row 0, then down every
   column. */
static tsr_status tsr__pd_share_copies(const tsr__pgemm_call *p, const tsr_grid *g,
                                       int64_t mine_a, int64_t mine_b, uint64_t *sent,
                                       uint64_t *received) {
  bool rows = tsr__pd_copies(&p->c.row), cols = tsr__pd_copies(&p->c.col);
  if ((!rows && !cols) || mine_a == 0 || mine_b == 0) return TSR_OK;
  size_t es = tsr__dtype_size(p->dtype);
  MPI_Datatype part;
  int rc = MPI_Type_create_hvector((int)mine_b, (int)((size_t)mine_a * es),
                                   (MPI_Aint)((size_t)p->c.lld * es), MPI_BYTE, &part);
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&part);
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Type_commit");
  char *c = tsr__pd_c_part(p);
  uint64_t bytes = (uint64_t)mine_a * (uint64_t)mine_b * es;
  if (cols && (!rows || g->myrow == 0)) { /* along the row, from column 0 */
    rc = MPI_Bcast(c, 1, part, 0, g->row_comm);
    if (g->mycol == 0) *sent += bytes * (uint64_t)(g->npcol - 1);
    else *received += bytes;
  }
  if (rc == MPI_SUCCESS && rows) { /* down the column, from row 0 */
    rc = MPI_Bcast(c, 1, part, 0, g->col_comm);
    if (g->myrow == 0) *sent += bytes * (uint64_t)(g->nprow - 1);
    else *received += bytes;
  }
  MPI_Type_free(&part);
  return rc == MPI_SUCCESS ? TSR_OK : tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");
}

/* C's part of this process += alpha A-stack * B-stack^T (the first product with beta). */
static tsr_status tsr__pd_multiply(const tsr__pgemm_call *p, const tsr__pd_strip *sa,
                                   const tsr__pd_strip *sb, int64_t kacc, bool first) {
  if (sa->mine == 0 || sb->mine == 0 || kacc == 0 || !tsr__pd_computes(p)) return TSR_OK;
  char *c = tsr__pd_c_part(p);
  /* Column-major C (mine_a x mine_b) is the row-major C^T = B-stack A-stack^T. */
  return tsr_gemm_host(p->dtype, TSR_TRANS, TSR_NO_TRANS, sb->mine, sa->mine, kacc, p->alpha,
                       sb->stack, sb->mine, sa->stack, sa->mine, first ? p->beta : 1.0, c,
                       p->c.lld);
}

tsr_status tsr__pgemm_direct(const tsr__pgemm_call *p, tsr_grid *g, tsr__pgemm_workspace *ws,
                             uint64_t *sent, uint64_t *received) {
  size_t es = tsr__dtype_size(p->dtype);
  tsr__pd_strip sa = tsr__pd_strip_of(&p->a, !p->ta, &p->c.row, 0, p->m, g->myrow);
  tsr__pd_strip sb = tsr__pd_strip_of(&p->b, p->tb, &p->c.col, 1, p->n, g->mycol);
  tsr_status st = tsr__pd_reserve(ws, tsr__pd_workspace_bytes(p, es), g->comm);
  if (st != TSR_OK) return st;
  tsr__pd_ctx c = {g, es, NULL, sent, received};
  tsr__pd_layout(&sa, &sb, g, ws->p, es, &c.whole);
  /* A gemm that fails here (out of memory) leaves this process's part of C partly updated;
     the process still makes every broadcast, so the others finish. */
  tsr_status gemm_st = TSR_OK;
  int64_t kacc = 0;
  bool first = true;
  for (int64_t k0 = 0; k0 < p->k && st == TSR_OK;) {
    int64_t k1 = tsr__pd_min3(p->k, tsr__pd_next(&sa.dk, k0), tsr__pd_next(&sb.dk, k0));
    if (k1 > k0 + (TSR__PD_KW - kacc)) k1 = k0 + (TSR__PD_KW - kacc);
    st = tsr__pd_step(&sa, &c, k0, k1 - k0, kacc);
    if (st == TSR_OK) st = tsr__pd_step(&sb, &c, k0, k1 - k0, kacc);
    kacc += k1 - k0;
    k0 = k1;
    if (st == TSR_OK && (kacc == TSR__PD_KW || k0 == p->k)) {
      if (gemm_st == TSR_OK) gemm_st = tsr__pd_multiply(p, &sa, &sb, kacc, first);
      first = false;
      kacc = 0;
    }
  }
  if (st == TSR_OK) st = tsr__pd_share_copies(p, g, sa.mine, sb.mine, sent, received);
  return st != TSR_OK ? st : gemm_st;
}

/* ---------------------------------------------------------------- the rule ------------ */

/* What one operand's panels cost on the direct path, per process: elements received and
   collective calls (a broadcast or gather over a row or column counts log2 of its size). */
typedef struct tsr__pd_cost {
  double words, calls;
} tsr__pd_cost;

static double tsr__pd_log2(int n) {
  double l = 0.0;
  while (n > 1) l += 1.0, n = (n + 1) / 2;
  return l;
}

static void tsr__pd_strip_cost(const tsr__pgemm_call *p, const tsr__bc_matrix *x, bool t_rows,
                               const tsr__bc_dim *dt, int gt, int64_t len, double steps,
                               tsr__pd_cost *c) {
  const tsr__grid_pos *gp = &p->gp;
  tsr__bc_dim dl = t_rows ? x->row : x->col, dk = t_rows ? x->col : x->row;
  int gl = t_rows ? 0 : 1, nl = gl == 0 ? gp->nprow : gp->npcol, nk = gl == 0 ? gp->npcol : gp->nprow;
  int mode = tsr__pd_mode(&dl, gl, dt, gt, len);
  bool bcast = !tsr__pd_whole(&dk) && nk > 1;
  double k = p->k, part = (double)len / (gt == 0 ? gp->nprow : gp->npcol);
  if (mode == TSR__PD_GATHERED) {
    c->words += (double)len * k;
    c->calls += steps * tsr__pd_log2(nl);
  }
  if (bcast) {
    c->words += (mode == TSR__PD_PART ? part : (double)len) * k;
    c->calls += steps * tsr__pd_log2(nk);
  }
}

/* Whether operand dimension d is Tessera's layout with blocks b from process 0 (then the
   redistributing path leaves it in place). */
static bool tsr__pd_standard(const tsr__bc_dim *d) {
  return d->src >= 0 && tsr__bc_next(d, 0) == d->b && tsr__bc_owner(d, 0) == 0;
}

/*
 * The model: time ~ alpha * collective calls + beta * elements received, the same for both
 * paths, with alpha worth TSR__PD_ALPHA elements (a few microseconds of a link's bandwidth:
 * the latency that dominates small calls, and more so when ranks share cores). The
 * redistributing path pays its agreements and exchanges (about 24 collectives), each
 * redistributed operand once (C twice when it is read), and SUMMA's broadcasts; the direct
 * path pays one or two collectives per operand and step, and its panels (whole panels where
 * they are gathered or transposed). Large products whose operands are already in Tessera's
 * layout keep the pipelined SUMMA, which overlaps its broadcasts with the local GEMMs.
 */
enum { TSR__PD_ALPHA = 4096 };

static bool tsr__pd_cost_rule(const tsr__pgemm_call *p) {
  const tsr__grid_pos *gp = &p->gp;
  double m = p->m, n = p->n, k = p->k, procs = (double)gp->nprow * gp->npcol;
  bool std_all = !p->ta && !p->tb && tsr__pd_standard(&p->a.row) && tsr__pd_standard(&p->a.col) &&
                 tsr__pd_standard(&p->b.row) && tsr__pd_standard(&p->b.col) &&
                 tsr__pd_standard(&p->c.row) && tsr__pd_standard(&p->c.col) &&
                 p->a.row.b == p->c.row.b && p->b.col.b == p->c.col.b &&
                 p->a.col.b == p->b.row.b;
  /* Steps of k: the blocks of A's and B's k index together (at most one per element). */
  double steps = 0.0;
  const tsr__bc_dim *ka = p->ta ? &p->a.row : &p->a.col, *kb = p->tb ? &p->b.col : &p->b.row;
  for (int64_t k0 = 0; k0 < p->k && steps < 1e6; steps += 1.0)
    k0 = tsr__pd_min3(p->k, tsr__pd_next(ka, k0), tsr__pd_next(kb, k0));
  if (std_all && m * n * k >= 256.0 * 256.0 * 256.0 * procs) return false;
  tsr__pd_cost d = {0.0, 0.0};
  tsr__pd_strip_cost(p, &p->a, !p->ta, &p->c.row, 0, p->m, steps, &d);
  tsr__pd_strip_cost(p, &p->b, p->tb, &p->c.col, 1, p->n, steps, &d);
  double lg = tsr__pd_log2((int)procs);
  double rw = k * (m / gp->nprow + n / gp->npcol), rc = 24.0 * lg + 2.0 * (k / 256.0 + 1.0) * lg;
  if (!std_all) rw += (m * k + k * n + (p->beta != 0.0 ? 2.0 : 1.0) * m * n) / procs;
  return d.words + TSR__PD_ALPHA * d.calls <= rw + TSR__PD_ALPHA * rc;
}

bool tsr__pgemm_direct_pays(const tsr__pgemm_call *p, int forced) {
  size_t es = tsr__dtype_size(p->dtype);
  int64_t big = p->m > p->n ? p->m : p->n;
  /* Message sizes are ints of bytes: a whole panel must fit. */
  if (forced == 1 || (uint64_t)big * TSR__PD_KW * es > (uint64_t)INT32_MAX) return false;
  if (forced == 2) return true;
  return tsr__pd_cost_rule(p);
}
