/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The direct path of libtessera_scalapack: PDGEMM/PSGEMM computed on the caller's own
 * block-cyclic layouts, whatever their block sizes, first blocks, source processes, offsets
 * and transposes, with the communication PBLAS's own PDGEMM makes (gathers of a panel along
 * process rows and columns) and nothing else: no agreement, no redistribution, no collective
 * over the whole grid.
 *
 * The algorithm is SUMMA (van de Geijn and Watts, "SUMMA: Scalable Universal Matrix
 * Multiplication Algorithm", Concurrency: Practice and Experience 9(4), 1997) over general
 * block-cyclic layouts, as PBLAS's PB_CpgemmAB does (Choi, Dongarra, Ostrouchov, Petitet,
 * Walker, Whaley, "A proposal for a set of parallel basic linear algebra subprograms", LAPACK
 * Working Note 100): k runs in panels of up to TSR__PD_KW, across as many blocks and owners
 * as they span (so a call with small blocks makes as few messages as one with large ones).
 * For each panel, each operand (M x kb of op(A), kb x N of op(B); t below is its long index,
 * M or N) is brought to the processes of C that need its rows (columns):
 *
 *  1. along k: the processes that share this process's rows of the operand as stored gather
 *     their columns of the panel (MPI_Allgatherv along the process row or column; none when
 *     every process holds all of k). Each process then has all of the panel for its own t.
 *  2. along t, only when C's t are not those: when the operand's t are held whole by every
 *     process (replicated, or one process along them) nothing more is needed; when t is
 *     distributed as C's (the same owner for every index: SUMMA's usual case) neither; else
 *     the panel is gathered whole along the other grid dimension (a transposed operand, or
 *     blocks that do not match C's).
 *
 * When step 1 of both operands runs along the same grid dimension (A and B with k along the
 * same dimension: 'N','T' or 'T','N', the updates and inner products of blocked reductions),
 * both panels go in one collective (tsr__pd_step1_joint).
 *
 * Every process then takes its part (its t of C, in k order) into a stack, and one local GEMM
 * (tsr_gemm_host) multiplies the stacks into this process's part of sub(C). A replicated
 * dimension of C is computed by process row (column) 0 and broadcast to the other copies, so
 * that every copy has the same bits whatever kernel or threads each process runs.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_dtypes.h"
#include "scalapack/scalapack_internal.h"

/* Most k of one panel, and of one local GEMM. */
enum { TSR__PD_KW = 256 };

/* Step 2 of a panel: nothing (C's t are this process's t of the operand, or it holds all t),
   or a gather of the whole panel along t. */
enum { TSR__PD_OWN, TSR__PD_GATHERED };

/* One operand's panels as C needs them. t is the long index: M of op(A), N of op(B). */
typedef struct tsr__pd_strip {
  tsr__bc_dim dl, dk; /* t and k as stored */
  const char *data;   /* the local array (column-major, lld) */
  int64_t lld;
  bool t_rows;           /* t runs down the local array (op not transposed for A) */
  int gl, gk;            /* grid dimensions of t and k as stored: 0 process rows, 1 columns */
  tsr__bc_dim dt;        /* C's dimension of t */
  int gt;                /* its grid dimension */
  int64_t len;           /* M or N */
  int mode;              /* TSR__PD_OWN or TSR__PD_GATHERED */
  int64_t mine;          /* how many t this process holds in C */
  int64_t rows;          /* how many t this process holds of the operand (len when whole) */
  int64_t first;         /* the local index of the first of them */
  int64_t *cnt, *lfirst; /* GATHERED: per process along gl, its t count and first local index */
  int *counts, *displs;  /* one collective's byte counts and displacements */
  int64_t *kcnt;         /* per process along gk: its k in the panel */
  int *kpos;             /* column in the gathered panel of each k of the panel */
  char *panel;           /* the gathered panel: len x TSR__PD_KW */
  char *stack;           /* the stacked parts: mine x TSR__PD_KW, column-major */
  int64_t *cneed;        /* per process along gk: C's count along gk (0: it needs nothing) */
  bool other_has_c;      /* this process's row (column) of C along gl is not empty */
  /* This panel's part as the GEMM reads it: element (t, kk) at part[t + kk * ld] when
     part_rows, else at part[kk + t * ld] (the caller's own array, used in place). */
  const char *part;
  int64_t part_ld;
  bool part_rows;
  int64_t *cpre;            /* GATHERED: per process along gl, the t of the processes before it */
  struct tsr__pd_run *runs; /* this process's t of C as runs of the panel, made once a call */
  int64_t nruns;            /* -1 until made */
  bool conj;                /* complex 'C': the panels hold conj(x), conjugated when copied */
  bool part_conj;           /* part is the caller's array, to be conjugated by the GEMM */
  char *w;                  /* this panel: this process's rows in the gathered panel */
  bool step1;               /* this panel: step 1 is to be made (alike along gk) */
  bool has_c;               /* this panel: this process holds part of C */
} tsr__pd_strip;

/* A run of this process's t of C that lies contiguous in the gathered panel: rows
   [row, row + len) of the block of owner r (base: the t of the owners before it, so that the
   block starts at base * kb; ld its leading dimension), at row q of the stack. */
typedef struct tsr__pd_run {
  int64_t base, ld, row, q, len;
  int r;
} tsr__pd_run;

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
  if (len == 0) return true;
  if (tsr__bc_owner(a, 0) != tsr__bc_owner(b, 0)) return false;
  /* The same blocks from the same boundary on the same number of processes: alike all along
     (each block's owner is the next one's predecessor in both). */
  int64_t na = tsr__bc_next(a, 0), nb = tsr__bc_next(b, 0);
  if (na >= len && nb >= len) return true;
  if (na == nb && a->b == b->b && a->nprocs == b->nprocs) return true;
  for (int64_t t = 0; t < len;) {
    if (tsr__bc_owner(a, t) != tsr__bc_owner(b, t)) return false;
    t = tsr__pd_min3(len, tsr__bc_next(a, t), tsr__bc_next(b, t));
  }
  return true;
}

static int64_t tsr__pd_block(const tsr__bc_dim *d, int64_t g) {
  return g < d->ib ? 0 : 1 + (g - d->ib) / d->b;
}

/* How many global indices below G process p holds along d (distributed): the local index
   of the next one it holds, numroc's count with a first block of ib. */
static int64_t tsr__pd_upto(const tsr__bc_dim *d, int p, int64_t G) {
  int64_t np = d->nprocs, dd = ((int64_t)p - d->src + np) % np;
  if (G <= d->ib) return dd == 0 ? G : 0;
  int64_t rest = G - d->ib, full = rest / d->b, extra = rest % d->b;
  /* Whole blocks 1..full; p holds those with index = dd (mod np); block 0 when dd = 0. */
  int64_t cnt = dd == 0 ? full / np : (full >= dd ? (full - dd) / np + 1 : 0);
  int64_t r = (dd == 0 ? d->ib : 0) + cnt * d->b;
  if (extra > 0 && (full + 1) % np == dd) r += extra;
  return r;
}

/* How many of [0, len) process p holds along d (all when d is whole), and the first (in
   closed form: no walk over the blocks). */
static int64_t tsr__pd_count(const tsr__bc_dim *d, int64_t len, int p, int64_t *first) {
  *first = 0;
  if (tsr__pd_whole(d)) return len;
  int64_t c = tsr__pd_upto(d, p, d->off + len) - tsr__pd_upto(d, p, d->off);
  if (c > 0) {
    int64_t np = d->nprocs, b0 = tsr__pd_block(d, d->off);
    int64_t o0 = (d->src + b0) % np, dist = ((int64_t)p - o0 + np) % np;
    *first = dist == 0 ? 0 : d->ib + (b0 + dist - 1) * d->b - d->off;
  }
  return c;
}

/* Whether step 2 is needed: C's t (dimension dt over grid dimension gt) are not this
   process's t of the operand. Decided from the descriptors: alike on every process. */
static int tsr__pd_mode(const tsr__bc_dim *dl, int gl, const tsr__bc_dim *dt, int gt, int64_t len) {
  if (tsr__pd_whole(dl)) return TSR__PD_OWN;
  if (!tsr__pd_whole(dt) && gl == gt && tsr__pd_same_owners(dl, dt, len)) return TSR__PD_OWN;
  return TSR__PD_GATHERED;
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
  /* A transposed operand: element by element, each a fixed-size move (no call). */
  for (int64_t kk = 0; kk < kb; kk++) {
    char *d = dst + (size_t)(kk * ldd) * es;
    const char *s = src + (size_t)(kk * sk) * es;
    if (es == 8)
      for (int64_t i = 0; i < rows; i++)
        memcpy(d + 8 * (size_t)i, s + (size_t)(i * st) * 8, 8);
    else if (es == 4)
      for (int64_t i = 0; i < rows; i++)
        memcpy(d + 4 * (size_t)i, s + (size_t)(i * st) * 4, 4);
    else
      for (int64_t i = 0; i < rows; i++)
        memcpy(d + 16 * (size_t)i, s + (size_t)(i * st) * 16, 16);
  }
}

/* x = conj(x) for n complex elements of es bytes (8: c64, 16: c128). */
static void tsr__pd_conjugate(char *x, int64_t n, size_t es) {
  if (es == 16) {
    double *v = (double *)(void *)x;
    for (int64_t i = 0; i < n; i++)
      v[2 * i + 1] = -v[2 * i + 1];
  } else {
    float *v = (float *)(void *)x;
    for (int64_t i = 0; i < n; i++)
      v[2 * i + 1] = -v[2 * i + 1];
  }
}

/* ---------------------------------------------------------------- the grid ------------ */

typedef struct tsr__pd_ctx {
  const tsr_grid *g;
  size_t es;
  char *stage;               /* TSR__PD_JOINT_BYTES for step 1 of both operands at once */
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

/* The strip of operand x for C's dimension dt (over grid dimension gt); `t_rows`: t runs down
   x's local rows. */
static tsr__pd_strip tsr__pd_strip_of(const tsr__bc_matrix *x, bool t_rows, bool conj,
                                      const tsr__bc_dim *dt, int gt, int64_t len, int mode,
                                      const tsr_grid *g) {
  tsr__pd_strip s;
  memset(&s, 0, sizeof s);
  s.dl = t_rows ? x->row : x->col;
  s.dk = t_rows ? x->col : x->row;
  s.data = x->data;
  s.lld = x->lld;
  s.t_rows = t_rows;
  s.gl = t_rows ? 0 : 1;
  s.gk = 1 - s.gl;
  s.dt = *dt;
  s.gt = gt;
  s.len = len;
  s.mode = mode >= 0 ? mode : tsr__pd_mode(&s.dl, s.gl, dt, gt, len);
  s.conj = conj;
  s.nruns = -1;
  int64_t f;
  s.mine = tsr__pd_count(&s.dt, len, tsr__pd_coord(g, gt), &f);
  s.rows = tsr__pd_count(&s.dl, len, tsr__pd_coord(g, s.gl), &f);
  s.first = s.rows > 0 ? tsr__bc_local(&s.dl, f) : 0;
  return s;
}

/* ---------------------------------------------------------------- one panel ----------- */

/* The panel's k by owner along gk: kcnt[q], and kpos[kk], the column of k0 + kk in the
   gathered panel (owner 0's k first, each owner's in increasing order); *mine_k0 is this
   process's first k in the panel (-1: none). Every k is its own when k is whole. */
static void tsr__pd_k_order(tsr__pd_strip *s, int npk, int mek, int64_t k0, int64_t kb,
                            int64_t *mine_k0) {
  *mine_k0 = -1;
  if (tsr__pd_whole(&s->dk)) {
    for (int64_t kk = 0; kk < kb; kk++)
      s->kpos[kk] = (int)kk;
    *mine_k0 = k0;
    return;
  }
  int64_t *next = s->kcnt + npk; /* per owner: the next column it fills */
  for (int q = 0; q < npk; q++)
    s->kcnt[q] = 0;
  for (int64_t k = k0; k < k0 + kb;) {
    int64_t e = tsr__pd_min3(k0 + kb, tsr__bc_next(&s->dk, k), INT64_MAX);
    int q = tsr__bc_owner(&s->dk, k);
    if (q == mek && *mine_k0 < 0) *mine_k0 = k;
    s->kcnt[q] += e - k;
    k = e;
  }
  int64_t b = 0;
  for (int q = 0; q < npk; q++)
    next[q] = b, b += s->kcnt[q];
  for (int64_t k = k0; k < k0 + kb;) {
    int64_t e = tsr__pd_min3(k0 + kb, tsr__bc_next(&s->dk, k), INT64_MAX);
    int q = tsr__bc_owner(&s->dk, k);
    for (int64_t x = k; x < e; x++)
      s->kpos[x - k0] = (int)next[q]++;
    k = e;
  }
}

/* One collective's byte counts and displacements in s->counts and s->displs, of pieces of
   piece[r] elements (r along the communicator); how many processes hold some of it, and the
   last of them in *root (the root of a broadcast when it is the only one). */
static int tsr__pd_pieces(const tsr__pd_strip *s, size_t es, const int64_t *piece, int np,
                          int *root) {
  int64_t off = 0;
  int holders = 0;
  *root = 0;
  for (int r = 0; r < np; r++) {
    s->counts[r] = (int)((size_t)piece[r] * es);
    s->displs[r] = (int)((size_t)off * es);
    off += piece[r];
    if (piece[r] > 0) holders++, *root = r;
  }
  return holders;
}

/* The traffic of one collective of s's pieces (set by tsr__pd_pieces) in the counters. */
static void tsr__pd_account(const tsr__pd_strip *s, const tsr__pd_ctx *c, int np, int me) {
  uint64_t all = (uint64_t)s->displs[np - 1] + (uint64_t)s->counts[np - 1];
  *c->received += all - (uint64_t)s->counts[me];
  *c->sent += (uint64_t)(np - 1) * (uint64_t)s->counts[me];
}

/* An MPI_Allgatherv in place of pieces of piece[r] elements (r along the communicator), a
   broadcast when one piece is all. */
static tsr_status tsr__pd_allgather(const tsr__pd_strip *s, const tsr__pd_ctx *c, char *buf,
                                    const int64_t *piece, int np, int me, MPI_Comm comm) {
  int root;
  int holders = tsr__pd_pieces(s, c->es, piece, np, &root);
  if (holders == 0) return TSR_OK; /* nothing to move (alike on every process) */
  /* One process holds all of it (a panel inside one block): a broadcast, whose root does not
     wait for the others (the pieces are alike on every process, so all choose the same). */
  int rc = holders == 1 ? MPI_Bcast(buf + s->displs[root], s->counts[root], MPI_BYTE, root, comm)
                        : MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, buf, s->counts, s->displs,
                                         MPI_BYTE, comm);
  if (rc != MPI_SUCCESS)
    return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, holders == 1 ? "MPI_Bcast" : "MPI_Allgatherv");
  tsr__pd_account(s, c, np, me);
  return TSR_OK;
}

/* n bytes (a multiple of 4) from src to dst: short runs (small blocks) without a call. */
static inline void tsr__pd_move(char *dst, const char *src, size_t n) {
  if (n > 64) {
    memcpy(dst, src, n);
    return;
  }
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    memcpy(&x, src + i, 8);
    memcpy(dst + i, &x, 8);
  }
  if (i < n) {
    uint32_t x;
    memcpy(&x, src + i, 4);
    memcpy(dst + i, &x, 4);
  }
}

/* Appends piece [t, e) of this process's t of C (inside one block of dl) to the runs,
   merged with the previous run when it continues it in the panel. */
static void tsr__pd_add_run(tsr__pd_strip *s, int64_t t, int64_t e, int64_t *q) {
  tsr__pd_run u = {0, s->rows, 0, *q, e - t, -1};
  if (s->mode == TSR__PD_GATHERED) {
    u.r = tsr__bc_owner(&s->dl, t);
    u.base = s->cpre[u.r];
    u.ld = s->cnt[u.r];
    u.row = tsr__bc_local(&s->dl, t) - s->lfirst[u.r];
  } else {
    u.row = tsr__pd_whole(&s->dl) ? t : tsr__bc_local(&s->dl, t) - s->first;
  }
  *q += e - t;
  if (s->nruns > 0) {
    tsr__pd_run *v = &s->runs[s->nruns - 1];
    if (v->r == u.r && v->row + v->len == u.row) {
      v->len += u.len;
      return;
    }
  }
  s->runs[s->nruns++] = u;
}

/* The runs of this process's t of C (owner my_t along dt), once a call: its blocks of dt
   (every P-th from the first), each cut at dl's block boundaries. */
static void tsr__pd_make_runs(tsr__pd_strip *s, int my_t) {
  s->nruns = 0;
  int64_t q = 0, f = 0;
  bool twhole = tsr__pd_whole(&s->dt);
  if (!twhole && tsr__pd_count(&s->dt, s->len, my_t, &f) == 0) return;
  for (int64_t t = twhole ? 0 : f; t < s->len;) {
    int64_t be = twhole ? s->len : tsr__pd_min3(s->len, tsr__bc_next(&s->dt, t), INT64_MAX);
    for (int64_t x = t; x < be;) {
      int64_t e = tsr__pd_min3(be, tsr__pd_next(&s->dl, x), INT64_MAX);
      tsr__pd_add_run(s, x, e, &q);
      x = e;
    }
    if (twhole || be >= s->len) break;
    t = be + (int64_t)(s->dt.nprocs - 1) * s->dt.b; /* its next block */
  }
}

/* This process's part of the panel (its t of C, k in order) from the gathered panel. */
static void tsr__pd_take_part(tsr__pd_strip *s, int my_t, int64_t kb, size_t es) {
  if (s->nruns < 0) tsr__pd_make_runs(s, my_t);
  for (int64_t i = 0; i < s->nruns; i++) {
    const tsr__pd_run *u = &s->runs[i];
    const char *src = s->panel + (size_t)(u->base * kb + u->row) * es;
    char *dst = s->stack + (size_t)u->q * es;
    size_t bytes = (size_t)u->len * es;
    for (int64_t kk = 0; kk < kb; kk++)
      tsr__pd_move(dst + (size_t)(kk * s->mine) * es,
                   src + (size_t)((int64_t)s->kpos[kk] * u->ld) * es, bytes);
  }
}

/* Whether step 1 can be left out (OWN mode): no process of this gk line that holds part of C
   lacks some of the panel's k. Alike on every process of the line. */
static bool tsr__pd_nobody_waits(const tsr__pd_strip *s, int npk, int64_t kb) {
  if (!s->other_has_c) return true;
  for (int q = 0; q < npk; q++)
    if (s->cneed[q] > 0 && s->kcnt[q] != kb) return false;
  return true;
}

/* The first half of bringing panel [k0, k0 + kb) of strip s to this process: true when that
   is all (s->part is the caller's array itself, when this process holds all of the panel in
   the order C needs, or this process needs nothing); else this process's rows are copied to
   s->w, its place in the gathered panel, and s->step1 says whether step 1 is to be made.
   tsr__pd_panel_end() does the rest. */
static bool tsr__pd_panel_begin(tsr__pd_strip *s, const tsr__pd_ctx *c, int64_t k0, int64_t kb) {
  const tsr_grid *g = c->g;
  size_t es = c->es;
  int npk = tsr__pd_size(g, s->gk), mek = tsr__pd_coord(g, s->gk), mel = tsr__pd_coord(g, s->gl);
  int64_t mine_k0;
  tsr__pd_k_order(s, npk, mek, k0, kb, &mine_k0);
  bool kwhole = tsr__pd_whole(&s->dk), own = s->mode == TSR__PD_OWN;
  s->step1 = !kwhole && npk > 1 && !(own && tsr__pd_nobody_waits(s, npk, kb));
  int64_t ncols = kwhole ? kb : s->kcnt[mek], col = 0;
  if (!kwhole)
    for (int q = 0; q < mek; q++)
      col += s->kcnt[q];
  int64_t lk = ncols > 0 ? tsr__bc_local(&s->dk, mine_k0) : 0;
  /* Without step 2, a process that holds no part of C needs nothing (after step 1, which
     its line makes together). In place: nothing to gather for this process, all of the panel
     here, its t in C's order (its own t of the operand are C's, or all t, all needed). */
  s->has_c = s->other_has_c && s->cneed[mek] > 0;
  if (!s->step1 && own && !s->has_c) return true;
  if (!s->step1 && own && ncols == kb && s->rows == s->mine) {
    s->part = s->data + (size_t)(s->t_rows ? s->first + lk * s->lld : lk + s->first * s->lld) * es;
    s->part_ld = s->lld;
    s->part_rows = s->t_rows;
    s->part_conj = s->conj;
    return true;
  }
  /* This process's rows of the panel: rows x kb at its place in the panel. */
  int64_t roff = 0;
  if (s->mode == TSR__PD_GATHERED)
    for (int r = 0; r < mel; r++)
      roff += s->cnt[r] * kb;
  s->w = s->panel + (size_t)roff * es;
  if (s->rows > 0 && ncols > 0) {
    int64_t st = s->t_rows ? 1 : s->lld, sk = s->t_rows ? s->lld : 1;
    const char *src =
        s->data + (size_t)(s->t_rows ? s->first + lk * s->lld : lk + s->first * s->lld) * es;
    char *w = s->w + (size_t)(col * s->rows) * es;
    tsr__pd_copy(w, s->rows, src, st, sk, s->rows, ncols, es);
    if (s->conj) tsr__pd_conjugate(w, s->rows * ncols, es);
  }
  s->part_conj = false;
  /* Step 1's pieces: this process's rows of the other owners' columns. */
  if (s->step1) {
    int64_t *piece = s->kcnt + 2 * npk;
    for (int q = 0; q < npk; q++)
      piece[q] = s->rows * s->kcnt[q];
  }
  return false;
}

/* Bytes up to which step 1 of both operands is one collective: one message's latency saved
   (a few microseconds, more when ranks share cores) is worth a derived datatype or a copy
   through the staging buffer (tsr__pd_ctx.stage, this size); above it the message's copies
   rule, and MPI moves a contiguous one with fewer. */
enum { TSR__PD_JOINT_BYTES = 256 * 1024 };

/* Both panels from one root: one broadcast of an hindexed type over the two pieces. */
static tsr_status tsr__pd_joint_bcast(const tsr__pd_strip *sa, const tsr__pd_strip *sb, int root,
                                      MPI_Comm comm) {
  int len[2] = {sa->counts[root], sb->counts[root]};
  MPI_Aint at[2];
  MPI_Datatype both;
  int rc = MPI_Get_address(sa->w + sa->displs[root], &at[0]);
  if (rc == MPI_SUCCESS) rc = MPI_Get_address(sb->w + sb->displs[root], &at[1]);
  if (rc == MPI_SUCCESS) rc = MPI_Type_create_hindexed(2, len, at, MPI_BYTE, &both);
  if (rc != MPI_SUCCESS)
    return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Type_create_hindexed");
  rc = MPI_Type_commit(&both);
  if (rc == MPI_SUCCESS) rc = MPI_Bcast(MPI_BOTTOM, 1, both, root, comm);
  MPI_Type_free(&both);
  return rc == MPI_SUCCESS ? TSR_OK : tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");
}

/* Both panels gathered at once: each process's two pieces side by side in the staging
   buffer, one MPI_Allgatherv, then every other process's pieces to their places. */
static tsr_status tsr__pd_joint_gather(const tsr__pd_strip *sa, const tsr__pd_strip *sb,
                                       const tsr__pd_ctx *c, int np, int me, MPI_Comm comm) {
  /* Per process its bytes and their place: ints in sa's scratch of the k order (free now). */
  int *cnt = (int *)(void *)(sa->kcnt + np), *at = cnt + np;
  int off = 0;
  for (int r = 0; r < np; r++) {
    cnt[r] = sa->counts[r] + sb->counts[r];
    at[r] = off;
    off += cnt[r];
  }
  memcpy(c->stage + at[me], sa->w + sa->displs[me], (size_t)sa->counts[me]);
  memcpy(c->stage + at[me] + sa->counts[me], sb->w + sb->displs[me], (size_t)sb->counts[me]);
  int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, c->stage, cnt, at, MPI_BYTE, comm);
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Allgatherv");
  for (int r = 0; r < np; r++) {
    if (r == me) continue;
    memcpy(sa->w + sa->displs[r], c->stage + at[r], (size_t)sa->counts[r]);
    memcpy(sb->w + sb->displs[r], c->stage + at[r] + sa->counts[r], (size_t)sb->counts[r]);
  }
  return TSR_OK;
}

/* Step 1 of both operands as one collective, when both gather along the same grid dimension
   (A and B with k along the same dimension: 'N','T' or 'T','N', as in the updates and inner
   products of blocked reductions: C -= Y X^T in PDLARFB and PDLATRD, w = V^T c in the
   reflectors' application), up to TSR__PD_JOINT_BYTES in all: one broadcast of both when one
   process holds both (k inside one block), else one gather of both pieces of every process.
   One collective where PBLAS's PDGEMM makes two. The choice is made from values alike on every
   process of that row (column). *done: step 1 of both is made. */
static tsr_status tsr__pd_step1_joint(tsr__pd_strip *sa, tsr__pd_strip *sb, const tsr__pd_ctx *c,
                                      bool *done) {
  *done = false;
  if (!sa->step1 || !sb->step1 || sa->gk != sb->gk) return TSR_OK;
  int np = tsr__pd_size(c->g, sa->gk), me = tsr__pd_coord(c->g, sa->gk), ra, rb;
  int ha = tsr__pd_pieces(sa, c->es, sa->kcnt + 2 * np, np, &ra);
  int hb = tsr__pd_pieces(sb, c->es, sb->kcnt + 2 * np, np, &rb);
  size_t all = 0;
  for (int r = 0; r < np; r++)
    all += (size_t)sa->counts[r] + (size_t)sb->counts[r];
  if (ha == 0 || hb == 0 || all > TSR__PD_JOINT_BYTES) return TSR_OK;
  MPI_Comm comm = tsr__pd_comm(c->g, sa->gk);
  tsr_status st = ha == 1 && hb == 1 && ra == rb ? tsr__pd_joint_bcast(sa, sb, ra, comm)
                                                 : tsr__pd_joint_gather(sa, sb, c, np, me, comm);
  if (st != TSR_OK) return st;
  tsr__pd_account(sa, c, np, me);
  tsr__pd_account(sb, c, np, me);
  *done = true;
  return TSR_OK;
}

/* The rest of panel [k0, k0 + kb) of strip s after tsr__pd_panel_begin(): step 1 (unless
   `step1_made`), step 2, and this process's part: s->part is the gathered rows themselves
   when they are its t of C in order, else the stack, filled from the gathered panel. */
static tsr_status tsr__pd_panel_end(tsr__pd_strip *s, const tsr__pd_ctx *c, int64_t kb,
                                    bool step1_made) {
  const tsr_grid *g = c->g;
  int npk = tsr__pd_size(g, s->gk), mek = tsr__pd_coord(g, s->gk);
  int npl = tsr__pd_size(g, s->gl), mel = tsr__pd_coord(g, s->gl);
  bool own = s->mode == TSR__PD_OWN;
  tsr_status st = TSR_OK;
  /* 1. Along k: the other owners' columns of these rows. */
  if (s->step1 && !step1_made)
    st = tsr__pd_allgather(s, c, s->w, s->kcnt + 2 * npk, npk, mek, tsr__pd_comm(g, s->gk));
  /* 2. Along t: the other rows, where C's are not these. */
  if (st == TSR_OK && s->mode == TSR__PD_GATHERED) {
    int64_t *piece = s->kcnt + 2 * npk;
    for (int r = 0; r < npl; r++)
      piece[r] = s->cnt[r] * kb;
    st = tsr__pd_allgather(s, c, s->panel, piece, npl, mel, tsr__pd_comm(g, s->gl));
  }
  /* The gathered rows are this process's t of C in order, and k in order: multiply them in
     the panel itself. */
  bool in_order = own && s->rows == s->mine;
  for (int64_t kk = 0; in_order && kk < kb; kk++)
    in_order = s->kpos[kk] == kk;
  if (in_order) {
    s->part = s->w;
    s->part_ld = s->rows > 0 ? s->rows : 1;
    s->part_rows = true;
    return st;
  }
  if (st == TSR_OK && s->mine > 0 && (s->has_c || !own))
    tsr__pd_take_part(s, tsr__pd_coord(g, s->gt), kb, c->es);
  s->part = s->stack;
  s->part_ld = s->mine;
  s->part_rows = true;
  return st;
}

/* ---------------------------------------------------------------- workspace ----------- */

/* Bytes of tables of one strip (int64 and int arrays, aligned), on grid dimensions np. */
static size_t tsr__pd_table_bytes(int np) {
  return (size_t)np * (2 + 3 + 1 + 1) * sizeof(int64_t) + (size_t)np * 2 * sizeof(int) +
         (size_t)TSR__PD_KW * sizeof(int) + 192;
}

/* Bytes of workspace a call needs at most (the same on every process). */
/* Bytes of the staging buffer of step 1 of both operands at once (never more than both
   panels). */
static size_t tsr__pd_stage_bytes(const tsr__pgemm_call *p, size_t es) {
  size_t panels = (size_t)(p->m + p->n) * TSR__PD_KW * es;
  return panels < TSR__PD_JOINT_BYTES ? panels : TSR__PD_JOINT_BYTES;
}

static size_t tsr__pd_workspace_bytes(const tsr__pgemm_call *p, size_t es) {
  int np = p->gp.nprow > p->gp.npcol ? p->gp.nprow : p->gp.npcol;
  return (size_t)(p->m + p->n) * (2 * TSR__PD_KW * es + sizeof(tsr__pd_run)) +
         2 * tsr__pd_table_bytes(np) + tsr__pd_stage_bytes(p, es) + 128;
}

/* Grows ws to `need` bytes on every process alike; agreed (the one collective that PBLAS does
   not make, and only when the workspace grows, which every process sees alike: the calls on
   a context are the same on all its processes). */
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

static char *tsr__pd_align(char *w) {
  return (char *)(((uintptr_t)w + 63) & ~(uintptr_t)63);
}

/* A strip's tables from w; the GATHERED counts of t per process along gl. */
static char *tsr__pd_tables(tsr__pd_strip *s, const tsr_grid *g, char *w) {
  int np = tsr__pd_size(g, 0) > tsr__pd_size(g, 1) ? tsr__pd_size(g, 0) : tsr__pd_size(g, 1);
  w = tsr__pd_align(w);
  s->cnt = (int64_t *)(void *)w;
  s->lfirst = s->cnt + np;
  s->kcnt = s->lfirst + np; /* kcnt, the next columns, the pieces: 3 np */
  s->counts = (int *)(void *)(s->kcnt + 3 * np);
  s->displs = s->counts + np;
  s->kpos = s->displs + np;
  s->cneed = (int64_t *)(void *)tsr__pd_align((char *)(s->kpos + TSR__PD_KW));
  s->cpre = s->cneed + np;
  w = (char *)(s->cpre + np);
  if (s->mode == TSR__PD_GATHERED) {
    int npl = tsr__pd_size(g, s->gl);
    int64_t before = 0;
    for (int r = 0; r < npl; r++) {
      int64_t f;
      s->cnt[r] = tsr__pd_count(&s->dl, s->len, r, &f);
      s->lfirst[r] = s->cnt[r] > 0 ? tsr__bc_local(&s->dl, f) : 0;
      s->cpre[r] = before;
      before += s->cnt[r];
    }
  }
  /* The runs (at most one per t of C here) after the tables. */
  s->runs = (tsr__pd_run *)(void *)tsr__pd_align(w);
  return (char *)(s->runs + (s->mine > 0 ? s->mine : 0));
}

/* Lays the workspace out: A's and B's stacks, their panels, the tables. */
static void tsr__pd_layout(tsr__pd_strip *sa, tsr__pd_strip *sb, const tsr_grid *g, char *w,
                           size_t es) {
  sa->stack = w;
  w += (size_t)(sa->mine * TSR__PD_KW) * es;
  sb->stack = w;
  w += (size_t)(sb->mine * TSR__PD_KW) * es;
  /* A panel each: the GEMM may read A's from its panel while B's is gathered. */
  sa->panel = w;
  w += (size_t)(sa->len * TSR__PD_KW) * es;
  sb->panel = w;
  w += (size_t)(sb->len * TSR__PD_KW) * es;
  w = tsr__pd_tables(sa, g, w);
  tsr__pd_tables(sb, g, w);
  /* Which processes hold part of C: per process along each strip's k grid dimension, C's
     count there; and whether C is empty along the strip's t grid dimension at this process's
     coordinate (then no process of its gk line holds any). C's rows are sa->dt (grid rows),
     its columns sb->dt (grid columns). */
  const tsr__pd_strip *cdim[2] = {sa, sb};
  tsr__pd_strip *ss[2] = {sa, sb};
  for (int i = 0; i < 2; i++) {
    tsr__pd_strip *s = ss[i];
    const tsr__pd_strip *ck = cdim[s->gk], *cl = cdim[s->gl];
    int64_t f;
    for (int q = 0; q < tsr__pd_size(g, s->gk); q++)
      s->cneed[q] = tsr__pd_count(&ck->dt, ck->len, q, &f);
    s->other_has_c = tsr__pd_count(&cl->dt, cl->len, tsr__pd_coord(g, s->gl), &f) > 0;
  }
}

/* ---------------------------------------------------------------- sub(C) -------------- */

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
static tsr_status tsr__pd_share_copies(const tsr__pgemm_call *p, const tsr_grid *g, int64_t mine_a,
                                       int64_t mine_b, uint64_t *sent, uint64_t *received) {
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
    if (g->mycol == 0)
      *sent += bytes * (uint64_t)(g->npcol - 1);
    else
      *received += bytes;
  }
  if (rc == MPI_SUCCESS && rows) { /* down the column, from row 0 */
    rc = MPI_Bcast(c, 1, part, 0, g->col_comm);
    if (g->myrow == 0)
      *sent += bytes * (uint64_t)(g->nprow - 1);
    else
      *received += bytes;
  }
  MPI_Type_free(&part);
  return rc == MPI_SUCCESS ? TSR_OK : tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");
}

/* Row-major C (m x n) = alpha op(A) op(B) + beta C in complex; alpha, beta as {re, im}
   doubles: libtessera's complex host GEMM (tsr_gemm_host_complex, 1m method), the scalars
   given in the dtype's own element type (the BLAS convention). */
static tsr_status tsr__pd_gemm_complex(tsr_dtype dt, tsr_trans ta, tsr_trans tb, int64_t m,
                                       int64_t n, int64_t k, const double *alpha, const void *a,
                                       int64_t lda, const void *b, int64_t ldb, const double *beta,
                                       void *c, int64_t ldc) {
  const bool single = dt == TSR_C64;
  const float af[2] = {(float)alpha[0], (float)alpha[1]}, bf[2] = {(float)beta[0], (float)beta[1]};
  return tsr_gemm_host_complex(dt, ta, tb, m, n, k, single ? (const void *)af : alpha, a, lda, b,
                               ldb, single ? (const void *)bf : beta, c, ldc);
}

/* C's part of this process += alpha A-stack * B-stack^T (the first product with beta). */
static tsr_status tsr__pd_multiply(const tsr__pgemm_call *p, const tsr__pd_strip *sa,
                                   const tsr__pd_strip *sb, int64_t kacc, bool first) {
  if (sa->mine == 0 || sb->mine == 0 || kacc == 0 || !tsr__pd_computes(p)) return TSR_OK;
  char *c = tsr__pd_c_part(p);
  /* Column-major C (mine_a x mine_b) is the row-major C^T = B-part A-part^T: the A part,
     column-major mine_a x kacc (part_rows), is the row-major kacc x mine_a; the B part
     likewise, transposed. A part still to be conjugated (the caller's array in place) is
     always a transposed one there (A's with op 'C' is stored k x t, B's t x k). */
  tsr_trans tb = sb->part_rows ? (sb->part_conj ? TSR_CONJ_TRANS : TSR_TRANS) : TSR_NO_TRANS;
  tsr_trans ta = sa->part_rows ? TSR_NO_TRANS : (sa->part_conj ? TSR_CONJ_TRANS : TSR_TRANS);
  if (tsr__pgemm_complex(p->dtype)) {
    double one[2] = {1.0, 0.0};
    const double *beta = first ? (const double[2]){p->beta, p->beta_im} : one;
    double alpha[2] = {p->alpha, p->alpha_im};
    return tsr__pd_gemm_complex(p->dtype, tb, ta, sb->mine, sa->mine, kacc, alpha, sb->part,
                                sb->part_ld, sa->part, sa->part_ld, beta, c, p->c.lld);
  }
  return tsr_gemm_host(p->dtype, tb, ta, sb->mine, sa->mine, kacc, p->alpha, sb->part, sb->part_ld,
                       sa->part, sa->part_ld, first ? p->beta : 1.0, c, p->c.lld);
}

/* ---------------------------------------------------------------- k reduced ---------- */

/*
 * The reduction variant: sub(C) small and on one process, op(A)'s and op(B)'s k along the same
 * grid dimension on the same owners ('T','N' or 'N','T': the inner products w = V^T c of
 * Householder reductions and the small panels' products V^T Y), and each operand's t held by
 * one process line along the other dimension (the same one for both, or all of them). The
 * processes of that line multiply the k they hold into an m x n partial product and sum them
 * with one MPI_Reduce along k to C's owner there (SUMMA's transposed cases, van de Geijn and
 * Watts 1997, section 4: local products, then a reduction; PBLAS's PDGEMM makes the same
 * choice when C is the smallest operand). When one process holds all of k, it multiplies
 * alone. If C's owner is on another line, the sum goes there in one point-to-point message.
 * The other processes make no MPI call at all, as in PBLAS; the direct path's gathers of k
 * would bring k x (m + n) elements to C's owner through every process of both lines.
 * Decided from the descriptors only: alike on every process.
 */
enum { TSR__PD_REDUCE_BYTES = 16 * 1024 }; /* most bytes of sub(C) (a buffer on the stack) */
enum { TSR__PD_REDUCE_TAG = 0x7e5e };      /* the sum's message to C's owner (grid comm) */

typedef struct tsr__pd_reduce_plan {
  int gk;     /* grid dimension of k (both operands) */
  int line;   /* the process along the other dimension that multiplies */
  int ck, cl; /* C's owner along gk and along the other dimension */
  int holder; /* the one process along gk that holds k; -1: several, summed */
} tsr__pd_reduce_plan;

/* The one process along d that holds all of [0, len): its coordinate; -1 when every process
   holds d (replicated over several); -2 when [0, len) spans several owners. */
static int tsr__pd_single(const tsr__bc_dim *d, int64_t len) {
  if (d->nprocs == 1) return 0;
  if (d->src < 0) return -1;
  return tsr__bc_next(d, 0) >= len ? tsr__bc_owner(d, 0) : -2;
}

/* Whether the reduction variant computes call p, and its plan. */
static bool tsr__pd_reduce_fits(const tsr__pgemm_call *p, tsr__pd_reduce_plan *r) {
  size_t es = tsr__dtype_size(p->dtype);
  if ((uint64_t)p->m * (uint64_t)p->n * es > TSR__PD_REDUCE_BYTES) return false;
  /* k as stored: A's rows when transposed, else its columns; B's columns when transposed. */
  int gka = p->ta ? 0 : 1, gkb = p->tb ? 1 : 0;
  if (gka != gkb) return false;
  const tsr__bc_dim *ka = p->ta ? &p->a.row : &p->a.col, *kb = p->tb ? &p->b.col : &p->b.row;
  const tsr__bc_dim *ta = p->ta ? &p->a.col : &p->a.row, *tb = p->tb ? &p->b.row : &p->b.col;
  int cr = tsr__pd_single(&p->c.row, p->m), cc = tsr__pd_single(&p->c.col, p->n);
  if (cr < 0 || cc < 0) return false; /* spread, or replicated copies */
  r->gk = gka;
  r->ck = gka == 0 ? cr : cc;
  r->cl = gka == 0 ? cc : cr;
  int oa = tsr__pd_single(ta, p->m), ob = tsr__pd_single(tb, p->n);
  if (oa == -2 || ob == -2 || (oa >= 0 && ob >= 0 && oa != ob)) return false;
  r->line = oa >= 0 ? oa : ob >= 0 ? ob : r->cl;
  bool wa = tsr__pd_whole(ka), wb = tsr__pd_whole(kb);
  if (wa != wb) return false;
  if (wa) { /* every process along gk holds all of k: C's own row (column) multiplies */
    r->holder = r->ck;
    return true;
  }
  if (!tsr__pd_same_owners(ka, kb, p->k)) return false;
  int h = tsr__pd_single(ka, p->k);
  r->holder = h >= 0 ? h : -1;
  return true;
}

/* The grid communicator's rank of the process at coordinate ck along gk and cl along the
   other dimension (row-major: row * Q + column). */
static int tsr__pd_rank_at(const tsr_grid *g, int gk, int ck, int cl) {
  int row = gk == 0 ? ck : cl, col = gk == 0 ? cl : ck;
  return row * g->npcol + col;
}

/* sub(C) = part + beta sub(C) at C's owner (part column-major m x n, ld m; beta = 0 does not
   read C). */
static void tsr__pd_reduce_store(const tsr__pgemm_call *p, const char *part) {
  char *c = tsr__pd_c_part(p);
  size_t es = tsr__dtype_size(p->dtype);
  bool zero = p->beta == 0.0 && p->beta_im == 0.0;
  for (int64_t j = 0; j < p->n; j++) {
    char *cj = c + (size_t)(j * p->c.lld) * es;
    const char *pj = part + (size_t)(j * p->m) * es;
    if (zero) {
      memcpy(cj, pj, (size_t)p->m * es);
      continue;
    }
    for (int64_t i = 0; i < p->m; i++) {
      switch (p->dtype) {
      case TSR_F64: {
        double *x = (double *)(void *)cj + i;
        *x = ((const double *)(const void *)pj)[i] + p->beta * *x;
        break;
      }
      case TSR_F32: {
        float *x = (float *)(void *)cj + i;
        *x = ((const float *)(const void *)pj)[i] + (float)p->beta * *x;
        break;
      }
      case TSR_C128: {
        double *x = (double *)(void *)cj + 2 * i, re = x[0], im = x[1];
        const double *y = (const double *)(const void *)pj + 2 * i;
        x[0] = y[0] + p->beta * re - p->beta_im * im;
        x[1] = y[1] + p->beta * im + p->beta_im * re;
        break;
      }
      default: { /* TSR_C64 */
        float *x = (float *)(void *)cj + 2 * i, re = x[0], im = x[1];
        const float *y = (const float *)(const void *)pj + 2 * i;
        float br = (float)p->beta, bi = (float)p->beta_im;
        x[0] = y[0] + br * re - bi * im;
        x[1] = y[1] + br * im + bi * re;
        break;
      }
      }
    }
  }
}

/* This process's partial product alpha op(A) op(B) over the k it holds, into part (column-major
   m x n, ld m; zeros when it holds none). */
static tsr_status tsr__pd_reduce_part(const tsr__pgemm_call *p, int mek, char *part) {
  size_t es = tsr__dtype_size(p->dtype);
  const tsr__bc_dim *ka = p->ta ? &p->a.row : &p->a.col, *kb = p->tb ? &p->b.col : &p->b.row;
  const tsr__bc_dim *ta = p->ta ? &p->a.col : &p->a.row, *tb = p->tb ? &p->b.row : &p->b.col;
  int64_t f, kc = tsr__pd_count(ka, p->k, mek, &f);
  if (kc == 0) {
    memset(part, 0, (size_t)p->m * (size_t)p->n * es);
    return TSR_OK;
  }
  /* The k this process holds are contiguous in both local arrays, in the same order (the
     same owners index by index); its t are all of each operand's. */
  int64_t lka = tsr__bc_local(ka, f), lkb = tsr__bc_local(kb, f);
  int64_t lta = tsr__bc_local(ta, 0), ltb = tsr__bc_local(tb, 0);
  const char *a =
      (const char *)p->a.data + (size_t)(p->ta ? lka + lta * p->a.lld : lta + lka * p->a.lld) * es;
  const char *b =
      (const char *)p->b.data + (size_t)(p->tb ? ltb + lkb * p->b.lld : lkb + ltb * p->b.lld) * es;
  /* Column-major part = op(A) op(B) is the row-major part^T = op(B)^T op(A)^T; the local arrays
     read row-major are their transposes, so each keeps its own op. */
  tsr_trans opa = p->ta ? (p->conj_a ? TSR_CONJ_TRANS : TSR_TRANS) : TSR_NO_TRANS;
  tsr_trans opb = p->tb ? (p->conj_b ? TSR_CONJ_TRANS : TSR_TRANS) : TSR_NO_TRANS;
  if (tsr__pgemm_complex(p->dtype)) {
    double alpha[2] = {p->alpha, p->alpha_im}, zero[2] = {0.0, 0.0};
    return tsr__pd_gemm_complex(p->dtype, opb, opa, p->n, p->m, kc, alpha, b, p->b.lld, a, p->a.lld,
                                zero, part, p->m);
  }
  return tsr_gemm_host(p->dtype, opb, opa, p->n, p->m, kc, p->alpha, b, p->b.lld, a, p->a.lld, 0.0,
                       part, p->m);
}

/* The reduction variant of plan r (tsr__pd_reduce_fits). */
static tsr_status tsr__pd_reduce(const tsr__pgemm_call *p, const tsr_grid *g,
                                 const tsr__pd_reduce_plan *r, uint64_t *sent, uint64_t *received) {
  int gk = r->gk, mek = tsr__pd_coord(g, gk), mel = tsr__pd_coord(g, 1 - gk);
  bool on_line = mel == r->line, owner = mek == r->ck && mel == r->cl;
  bool multiplies = on_line && (r->holder < 0 || mek == r->holder);
  if (!multiplies && !owner) return TSR_OK;
  size_t es = tsr__dtype_size(p->dtype);
  int count = p->m * p->n, bytes = count * (int)es;
  _Alignas(64) char part[TSR__PD_REDUCE_BYTES];
  MPI_Datatype type = tsr__mpi_dtype_of(p->dtype);
  /* A failed GEMM (out of memory) still takes part in the messages, so the others finish. */
  tsr_status gemm_st = multiplies ? tsr__pd_reduce_part(p, mek, part) : TSR_OK;
  int rc = MPI_SUCCESS, from = r->holder;
  if (r->holder < 0) { /* several hold k: summed along it, at C's coordinate there */
    from = r->ck;
    if (on_line) {
      rc = MPI_Reduce(mek == r->ck ? MPI_IN_PLACE : part, part, count, type, MPI_SUM, r->ck,
                      tsr__pd_comm(g, gk));
      if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Reduce");
      if (mek == r->ck)
        *received += (uint64_t)bytes * (uint64_t)(tsr__pd_size(g, gk) - 1);
      else
        *sent += (uint64_t)bytes;
    }
  }
  /* The sum is at (from, line); C is at (ck, cl). */
  bool there = from == r->ck && r->line == r->cl;
  if (!there && mek == from && on_line) {
    rc = MPI_Send(part, count, type, tsr__pd_rank_at(g, gk, r->ck, r->cl), TSR__PD_REDUCE_TAG,
                  g->comm);
    if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Send");
    *sent += (uint64_t)bytes;
  }
  if (!there && owner) {
    rc = MPI_Recv(part, count, type, tsr__pd_rank_at(g, gk, from, r->line), TSR__PD_REDUCE_TAG,
                  g->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Recv");
    *received += (uint64_t)bytes;
  }
  if (owner && gemm_st == TSR_OK) tsr__pd_reduce_store(p, part);
  return gemm_st;
}

tsr_status tsr__pgemm_direct(const tsr__pgemm_call *p, tsr_grid *g, tsr__pgemm_workspace *ws,
                             uint64_t *sent, uint64_t *received) {
  size_t es = tsr__dtype_size(p->dtype);
  tsr__pd_reduce_plan plan;
  if (tsr__pd_reduce_fits(p, &plan)) return tsr__pd_reduce(p, g, &plan, sent, received);
  tsr__pd_strip sa = tsr__pd_strip_of(&p->a, !p->ta, p->conj_a, &p->c.row, 0, p->m, p->mode[0], g);
  tsr__pd_strip sb = tsr__pd_strip_of(&p->b, p->tb, p->conj_b, &p->c.col, 1, p->n, p->mode[1], g);
  tsr_status st = tsr__pd_reserve(ws, tsr__pd_workspace_bytes(p, es), g->comm);
  if (st != TSR_OK) return st;
  char *stage = tsr__pd_align(ws->p);
  tsr__pd_ctx c = {g, es, stage, sent, received};
  tsr__pd_layout(&sa, &sb, g, tsr__pd_align(stage + tsr__pd_stage_bytes(p, es)), es);
  /* A GEMM that fails here (out of memory) leaves this process's part of C partly updated;
     the process still makes every collective, so the others finish. */
  tsr_status gemm_st = TSR_OK;
  for (int64_t k0 = 0; k0 < p->k && st == TSR_OK; k0 += TSR__PD_KW) {
    int64_t kb = p->k - k0 < TSR__PD_KW ? p->k - k0 : TSR__PD_KW;
    /* Both operands' rows first, so that step 1 of both can be one broadcast; then each
       operand's collectives in the same order on every process (A's before B's on each
       communicator). */
    bool done_a = tsr__pd_panel_begin(&sa, &c, k0, kb);
    bool done_b = tsr__pd_panel_begin(&sb, &c, k0, kb), joint = false;
    if (!done_a && !done_b) st = tsr__pd_step1_joint(&sa, &sb, &c, &joint);
    if (st == TSR_OK && !done_a) st = tsr__pd_panel_end(&sa, &c, kb, joint);
    if (st == TSR_OK && !done_b) st = tsr__pd_panel_end(&sb, &c, kb, joint);
    if (st == TSR_OK && gemm_st == TSR_OK) gemm_st = tsr__pd_multiply(p, &sa, &sb, kb, k0 == 0);
  }
  if (st == TSR_OK) st = tsr__pd_share_copies(p, g, sa.mine, sb.mine, sent, received);
  return st != TSR_OK ? st : gemm_st;
}

/* ---------------------------------------------------------------- the rule ------------ */

static double tsr__pd_log2(int n) {
  double l = 0.0;
  while (n > 1)
    l += 1.0, n = (n + 1) / 2;
  return l;
}

/* What one operand's panels cost on the direct path, per process: elements received and
   collective steps (a gather over a row or column counts log2 of its size). */
static void tsr__pd_strip_cost(const tsr__pgemm_call *p, const tsr__bc_matrix *x, bool t_rows,
                               int mode, int64_t len, double *words, double *calls) {
  const tsr__grid_pos *gp = &p->gp;
  tsr__bc_dim dl = t_rows ? x->row : x->col, dk = t_rows ? x->col : x->row;
  int gl = t_rows ? 0 : 1, nl = gl == 0 ? gp->nprow : gp->npcol;
  int nk = gl == 0 ? gp->npcol : gp->nprow;
  double k = p->k, panels = (double)((p->k + TSR__PD_KW - 1) / TSR__PD_KW);
  double rows = tsr__pd_whole(&dl) ? (double)len : (double)len / nl;
  if (!tsr__pd_whole(&dk) && nk > 1) {
    *words += rows * k * (nk - 1) / nk;
    *calls += panels * tsr__pd_log2(nk);
  }
  if (mode == TSR__PD_GATHERED) {
    *words += (double)len * k * (nl - 1) / nl;
    *calls += panels * tsr__pd_log2(nl);
  }
}

/* Whether operand dimension d is Tessera's layout with blocks b from process 0 (then the
   redistributing path leaves it in place). */
static bool tsr__pd_standard(const tsr__bc_dim *d) {
  return d->src >= 0 && tsr__bc_next(d, 0) == d->b && tsr__bc_owner(d, 0) == 0;
}

/*
 * The model: time ~ alpha * collective steps + beta * elements received per process, the same
 * for both paths, with alpha worth TSR__PD_ALPHA elements (microseconds of a link: the
 * latency that rules small calls, and more so when ranks share cores). The redistributing
 * path pays its agreements and exchanges (about 12 collectives of log2(P) steps), each
 * redistributed operand once (C twice when it is read), and SUMMA's panels; the direct path
 * pays one or two gathers per operand and panel of 256, and its panels (whole panels where
 * they are gathered along t). Large products whose operands are already in Tessera's layout
 * with blocks of 128 or more keep the pipelined SUMMA, which overlaps its broadcasts with the
 * local GEMMs (bench/run_pdgemm_calls.sh, n = 1024 on 2x2: NB 256 SUMMA 56 ms, direct 68;
 * NB 64 68 against 63; NB 2 710 against 80).
 */
enum { TSR__PD_ALPHA = 4096 };

static bool tsr__pd_cost_rule(const tsr__pgemm_call *p) {
  const tsr__grid_pos *gp = &p->gp;
  double m = p->m, n = p->n, k = p->k, procs = (double)gp->nprow * gp->npcol;
  bool std_all = !p->ta && !p->tb && tsr__pd_standard(&p->a.row) && tsr__pd_standard(&p->a.col) &&
                 tsr__pd_standard(&p->b.row) && tsr__pd_standard(&p->b.col) &&
                 tsr__pd_standard(&p->c.row) && tsr__pd_standard(&p->c.col) &&
                 p->a.row.b == p->c.row.b && p->b.col.b == p->c.col.b && p->a.col.b == p->b.row.b;
  /* SUMMA's steps are A's column blocks (at most 256): with small blocks its collectives
     multiply (n = 1024 with NB = 2: 1,037 a call, against the direct path's 8). */
  double bk = (double)(p->a.col.b < 256 ? p->a.col.b : 256);
  if (std_all && bk >= 128.0 && m * n * k >= 256.0 * 256.0 * 256.0 * procs) return false;
  double dw = 0.0, dc = 0.0;
  tsr__pd_strip_cost(p, &p->a, !p->ta, p->mode[0], p->m, &dw, &dc);
  tsr__pd_strip_cost(p, &p->b, p->tb, p->mode[1], p->n, &dw, &dc);
  double lg = tsr__pd_log2((int)procs);
  double rw = k * (m / gp->nprow + n / gp->npcol);
  double rc = 12.0 * lg + 2.0 * (k / (std_all ? bk : 256.0) + 1.0) * lg;
  if (!std_all) rw += (m * k + k * n + (p->beta != 0.0 ? 2.0 : 1.0) * m * n) / procs;
  return dw + TSR__PD_ALPHA * dc <= rw + TSR__PD_ALPHA * rc;
}

bool tsr__pgemm_direct_pays(tsr__pgemm_call *p, int forced) {
  size_t es = tsr__dtype_size(p->dtype);
  /* Step 2 of each operand, from the descriptors (alike on every process), once a call. */
  p->mode[0] = tsr__pd_mode(p->ta ? &p->a.col : &p->a.row, p->ta ? 1 : 0, &p->c.row, 0, p->m);
  p->mode[1] = tsr__pd_mode(p->tb ? &p->b.row : &p->b.col, p->tb ? 0 : 1, &p->c.col, 1, p->n);
  int64_t big = p->m > p->n ? p->m : p->n;
  /* Message sizes are ints of bytes: a whole panel must fit. */
  if (forced == 1 || (uint64_t)big * TSR__PD_KW * es > (uint64_t)INT32_MAX) return false;
  if (forced == 2) return true;
  /* The reduction variant: one reduction (or none) on one line of the grid, against the
     redistribution's agreements and exchanges over all of it. */
  tsr__pd_reduce_plan plan;
  if (tsr__pd_reduce_fits(p, &plan)) return true;
  return tsr__pd_cost_rule(p);
}
