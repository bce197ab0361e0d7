/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU GEMM driver: the BLIS loop nest (Goto & van de Geijn, "Anatomy of High-Performance
 * Matrix Multiplication", ACM TOMS 2008; Van Zee & van de Geijn, "BLIS", ACM TOMS 2015).
 *
 *   jc: NC-wide column blocks of C and op(B)                  (B panel in L3)
 *    pc: KC-deep slices of the k dimension                    -> pack op(B) KC x NC, shared
 *     ic: MC-tall row blocks (per thread)                     -> pack op(A) MC x KC (in L2)
 *      macro-kernel (gemm_macro.c): jr over NR micro-panels of B, ir over MR micro-panels of A
 *       micro-kernel: MR x NR tile of C in registers
 *
 * The kernel and the blocks come from the registry, the wisdom file or an override
 * (tsr__gemm_config_get, gemm_registry.c), per dtype and thread count.
 *
 * Threads: omp_get_max_threads() of them (OMP_NUM_THREADS), run by the GEMM's own pool
 * (gemm_thread.c), where the caller starts at once and never waits for a thread that has not
 * joined. The work of a call is a sequence of tickets (tsr__gemm_sync, gemm.h): per (jc, pc)
 * step, chunks of the shared B panel's packing (a late thread's share is packed by the
 * others), then the work units: a unit is a row block of C (at most MC rows; smaller with
 * several threads so that there are about `grain` units per thread, 4 by default) times the
 * whole panel, or a column chunk of it when C is too short to give every thread enough row
 * blocks. The thread that takes a unit packs its A rows into its own buffer (the ic loop split
 * across cores, as BLIS does for cores with private L2 caches). No barriers: each ticket waits
 * only for the tickets it depends on, and with two B panels the next panel is packed while the
 * last units of a step run. Dynamic hand-out matters on shared machines: a thread that loses
 * its core does not hold the others for a whole static share. Problems below
 * TSR__GEMM_SERIAL_MNK run on the calling thread, as does a call made from inside an OpenMP
 * parallel region (no nested parallelism).
 *
 * C that is written once (beta == 0, k within one KC slice) and outgrows the last-level cache
 * is stored with non-temporal stores (the kernels' streaming variants): its lines are not read
 * from memory before being overwritten, and do not evict the packed panels. Measured on Zen 5
 * (AMD EPYC family 26), sgemm 4096x4096x256, one thread: 217-228 -> 231-242 GFLOP/s.
 *
 * Packing buffers are cached per calling thread (one 64-byte-aligned block holding the B panels
 * and every thread's A block), grown on demand and freed when the thread exits, so repeated
 * calls do not touch the allocator.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(_OPENMP)
#include <omp.h>
#endif
#include "omp/gemm/gemm_tune.h"
#include "omp/omp_internal.h"

/* Below this m*n*k a single thread is faster than forking (about 5 microseconds of work). */
#define TSR__GEMM_SERIAL_MNK (64 * 64 * 64)

/* ---------------------------------------------------------------- buffers ------------- */

typedef struct tsr__gemm_cache {
  void *ptr;
  size_t bytes;
} tsr__gemm_cache;

static pthread_key_t tsr__gemm_key;
static pthread_once_t tsr__gemm_key_once = PTHREAD_ONCE_INIT;
static int tsr__gemm_key_err;

static void tsr__gemm_cache_free(void *p) {
  tsr__gemm_cache *c = p;
  if (!c) return;
  tsr__host_free(c->ptr);
  free(c);
}

static void tsr__gemm_key_create(void) {
  tsr__gemm_key_err = pthread_key_create(&tsr__gemm_key, tsr__gemm_cache_free);
}

/* The calling thread's packing buffer, at least `bytes` long (contents undefined). */
static tsr_status tsr__gemm_buffer(size_t bytes, void **out) {
  pthread_once(&tsr__gemm_key_once, tsr__gemm_key_create);
  if (tsr__gemm_key_err)
    return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__,
                          "cannot create the thread-local packing buffer key");
  tsr__gemm_cache *c = pthread_getspecific(tsr__gemm_key);
  if (!c) {
    c = calloc(1, sizeof *c);
    if (!c)
      return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "cannot allocate %zu bytes",
                            sizeof *c);
    if (pthread_setspecific(tsr__gemm_key, c) != 0) {
      free(c);
      return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__,
                            "cannot register the thread-local packing buffer");
    }
  }
  if (c->bytes < bytes) {
    /* Grow by 1.5x so that slowly growing problem sizes do not reallocate every call. */
    size_t want = bytes + bytes / 2;
    void *p = NULL;
    tsr__host_free(c->ptr);
    c->ptr = NULL;
    c->bytes = 0;
    if (tsr__host_alloc(want, &p) != TSR_OK) {
      want = bytes;
      TSR_CALL(tsr__host_alloc(want, &p));
    }
    c->ptr = p;
    c->bytes = want;
  }
  *out = c->ptr;
  return TSR_OK;
}

void tsr__gemm_buffers_trim(void) {
  pthread_once(&tsr__gemm_key_once, tsr__gemm_key_create);
  if (tsr__gemm_key_err) return;
  tsr__gemm_cache *c = pthread_getspecific(tsr__gemm_key);
  if (!c) return;
  tsr__host_free(c->ptr);
  c->ptr = NULL;
  c->bytes = 0;
}

/* ---------------------------------------------------------------- helpers ------------- */

static int64_t tsr__ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
static size_t tsr__round_up_sz(size_t x, size_t m) {
  return (x + m - 1) / m * m;
}

void tsr__gemm_scale(const tsr__gemm_args *g) {
  const int64_t m = g->m, n = g->n, ldc = g->ldc;
  const bool par = m * n >= (int64_t)1 << 16;
  (void)par;
  if (g->dtype == TSR_F32) {
    float *c = g->c;
    const float beta = (float)g->beta;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (par && !omp_in_parallel())
#endif
    for (int64_t i = 0; i < m; ++i) {
      float *row = c + i * ldc;
      if (beta == 0)
        memset(row, 0, (size_t)n * sizeof *row);
      else if (beta != 1)
        for (int64_t j = 0; j < n; ++j)
          row[j] *= beta;
    }
  } else {
    double *c = g->c;
    const double beta = g->beta;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (par && !omp_in_parallel())
#endif
    for (int64_t i = 0; i < m; ++i) {
      double *row = c + i * ldc;
      if (beta == 0)
        memset(row, 0, (size_t)n * sizeof *row);
      else if (beta != 1)
        for (int64_t j = 0; j < n; ++j)
          row[j] *= beta;
    }
  }
}

/* ---------------------------------------------------------------- the loop nest ------- */

/* Packs columns [q0*NR, q1*NR) of the kcb x ncb block of op(B) at (pc, jc) into bbuf. */
static void tsr__gemm_pack_b_part(const tsr__gemm_plan *pl, char *bbuf, int64_t pc, int64_t jc,
                                  int64_t kcb, int64_t ncb, int64_t q0, int64_t q1) {
  const tsr__gemm_args *g = pl->g;
  const int nr = pl->ker->nr;
  const int64_t j0 = q0 * nr, cols = tsr__min64(q1 * nr, ncb) - j0;
  if (cols <= 0) return;
  if (pl->ind) { /* induced (1m): straight from the complex op(B); pc, jc, j0 are even */
    if (g->dtype == TSR_F32)
      pl->ind->pack_b_f32(pl->ind->cx, nr, pc / 2, (jc + j0) / 2, kcb, cols,
                          (float *)bbuf + j0 * kcb);
    else
      pl->ind->pack_b_f64(pl->ind->cx, nr, pc / 2, (jc + j0) / 2, kcb, cols,
                          (double *)bbuf + j0 * kcb);
    return;
  }
  /* Address of op(B)(pc, jc + j0). */
  const int64_t off = g->trans_b ? (jc + j0) * g->ldb + pc : pc * g->ldb + jc + j0;
  if (g->dtype == TSR_F32)
    pl->ker->pack_b_f32(nr, kcb, cols, (const float *)g->b + off, g->ldb, g->trans_b,
                        (float *)bbuf + j0 * kcb);
  else
    pl->ker->pack_b_f64(nr, kcb, cols, (const double *)g->b + off, g->ldb, g->trans_b,
                        (double *)bbuf + j0 * kcb);
}

static void tsr__gemm_pack_a_block(const tsr__gemm_plan *pl, char *abuf, int64_t ic, int64_t pc,
                                   int64_t mcb, int64_t kcb) {
  const tsr__gemm_args *g = pl->g;
  if (pl->ind && pl->ind->cx->trans_a) { /* induced (1m) with op(A) = A^T */
    if (g->dtype == TSR_F32)
      pl->ind->pack_a_f32(pl->ind->cx, pl->ker->mr, ic, pc / 2, mcb, kcb, (float *)abuf);
    else
      pl->ind->pack_a_f64(pl->ind->cx, pl->ker->mr, ic, pc / 2, mcb, kcb, (double *)abuf);
    return;
  }
  /* Address of op(A)(ic, pc). */
  const int64_t off = g->trans_a ? pc * g->lda + ic : ic * g->lda + pc;
  if (g->dtype == TSR_F32)
    pl->ker->pack_a_f32(pl->ker->mr, mcb, kcb, (const float *)g->a + off, g->lda, g->trans_a,
                        (float *)abuf);
  else
    pl->ker->pack_a_f64(pl->ker->mr, mcb, kcb, (const double *)g->a + off, g->lda, g->trans_a,
                        (double *)abuf);
}

/* The row-wise tile order (shallow slices, gemm_macro.c) reuses the A micro-panel from L1
   and streams B's micro-panels once per A micro-panel: in sweeps of half the L2's worth of
   them, so that they come from L2 rather than from the L3, which other ranks, processes
   sharing the core and the neighbours of a VM also fill. Measured on Zen 5 (EPYC family 26,
   1 MiB L2; dgemm NC 2048 streamed a 4 MiB B panel per 14 rows of C): two processes
   time-sharing one core, dgemm 2048 x 2048 x 256 together 92-99 -> 103-108 GFLOP/s (OpenBLAS
   105-107); tessera-gemm 4096^3 on a 2 x 2 grid of 4 ranks on 2 cores 201-210 -> 216-218,
   1 x 2 within the noise (226-237 either way); alone, one thread, alternated: dgemm 1024^3
   116-118 -> 119-122, 512^3 118-121 -> 120-124, 2048^3 and 4096 x 4096 x 256 unchanged, sgemm
   4096 x 4096 x 256 241-245 -> 246-249; two threads dgemm 4096 x 4096 x 256 223-226 ->
   228-232. */
int64_t tsr__gemm_row_sweep(const tsr__gemm_kernel *ker, int64_t kc) {
  const int64_t es = (int64_t)tsr__dtype_size(ker->dtype), l2 = tsr__cpu_facts_get()->cache[1].size;
  return tsr__max64(l2 / 2 / (tsr__max64(kc, 1) * ker->nr * es), 1);
}

/* Column chunks per row block for a B panel of np micro-panels: 1 unless there are too few
   row blocks to give every thread several units (short-wide C); then the jr loop is split
   too, at the price of packing those A rows once per chunk. */
static int64_t tsr__gemm_col_chunks(const tsr__gemm_plan *pl, int64_t np) {
  const int64_t want = (int64_t)pl->grain * pl->nt;
  if (pl->nt == 1 || pl->rblocks >= want) return 1;
  int64_t cc = tsr__ceil_div(want, pl->rblocks);
  /* Keep chunks at least 4 micro-panels wide so the A packing stays amortized. */
  if (cc > np / 4) cc = np / 4;
  return cc < 1 ? 1 : cc;
}

/*
 * Where a thread is in the sequence of (jc, pc) steps and their tickets (tsr__gemm_sync,
 * gemm.h): step s = its (jc, pc), B(s)'s chunks and U(s)'s units, the first ticket of B(s),
 * and the cumulative counts its dependencies are waited for with. Every thread walks the same
 * sequence, forward only (the tickets a thread takes only grow).
 */
typedef struct tsr__gemm_cursor {
  int64_t s, jc, pc, kcb, ncb, np;
  int64_t bchunks, cchunks, units;
  int64_t base;    /* first ticket of step s */
  int64_t bcum[2]; /* B chunks of the steps <= s, by step parity */
  int64_t ucum[3]; /* units of the steps <= s-2, <= s-1, <= s */
} tsr__gemm_cursor;

static void tsr__gemm_cursor_sizes(const tsr__gemm_plan *pl, tsr__gemm_cursor *c) {
  c->kcb = tsr__min64(pl->kc, pl->g->k - c->pc);
  c->ncb = tsr__min64(pl->nc, pl->g->n - c->jc);
  c->np = tsr__ceil_div(c->ncb, pl->ker->nr);
  /* Chunks of B packing: enough for every thread to take a few (a late one's share is
     packed by the others), one with a single thread. */
  c->bchunks = pl->nt == 1 ? 1 : tsr__min64(c->np, 4 * (int64_t)pl->nt);
  c->cchunks = tsr__gemm_col_chunks(pl, c->np);
  c->units = pl->rblocks * c->cchunks;
  c->bcum[c->s & 1] += c->bchunks;
  c->ucum[2] = c->ucum[1] + c->units;
}

static void tsr__gemm_cursor_init(const tsr__gemm_plan *pl, tsr__gemm_cursor *c) {
  *c = (tsr__gemm_cursor){0};
  tsr__gemm_cursor_sizes(pl, c);
}

/* Moves to the next step; false (and c unchanged) after the last. */
static bool tsr__gemm_cursor_next(const tsr__gemm_plan *pl, tsr__gemm_cursor *c) {
  int64_t pc = c->pc + pl->kc, jc = c->jc;
  if (pc >= pl->g->k) {
    pc = 0;
    jc += pl->nc;
  }
  if (jc >= pl->g->n) return false;
  c->base += c->bchunks + c->units;
  c->s += 1;
  c->jc = jc;
  c->pc = pc;
  c->ucum[0] = c->ucum[1];
  c->ucum[1] = c->ucum[2];
  tsr__gemm_cursor_sizes(pl, c);
  return true;
}

/* State a thread keeps across units: which A block its buffer holds. */
typedef struct tsr__gemm_tstate {
  char *abuf;
  int64_t rb, pc, jc; /* its A block: row block rb of slice pc of panel jc (rb -1: none) */
} tsr__gemm_tstate;

/* One unit of work: row block rb x B micro-panels [q0, q1) of the step's panel. */
static void tsr__gemm_unit(const tsr__gemm_plan *pl, tsr__gemm_tstate *ts, const char *bbuf,
                           int64_t rb, int64_t q0, int64_t q1, const tsr__gemm_cursor *c) {
  /* Row block rb: micro-panels [rb*mp/rblocks, (rb+1)*mp/rblocks) of the mp in m rows. */
  const int64_t mr = pl->ker->mr, mp = tsr__ceil_div(pl->g->m, mr);
  const int64_t ic = rb * mp / pl->rblocks * mr;
  const int64_t mcb = tsr__min64((rb + 1) * mp / pl->rblocks * mr, pl->g->m) - ic;
  if (ts->rb != rb || ts->pc != c->pc || ts->jc != c->jc) {
    tsr__gemm_pack_a_block(pl, ts->abuf, ic, c->pc, mcb, c->kcb);
    ts->rb = rb;
    ts->pc = c->pc;
    ts->jc = c->jc;
  }
  /* The user's beta on the first slice, accumulation afterwards. */
  const double beta = c->pc == 0 ? pl->g->beta : 1.0;
  tsr__gemm_macro(pl, ts->abuf, bbuf, ic, c->jc, mcb, c->kcb, c->ncb, q0, q1, beta);
}

/* The monotonic clock in nanoseconds when `on`, else 0 (no clock read). */
static inline int64_t tsr__gemm_clock(bool on) {
  return on ? tsr__now_ns() : 0;
}

/* The end of a thread's share of a job: the caller (slot 0) waits until `units` units are
   done (sy->udone); when timed, each thread adds the time since `start` that it did not spend
   waiting (`waited` so far, plus that wait) to sy->work_ns, the caller also to
   sy->caller_work_ns, for the adaptive thread count. */
static void tsr__gemm_job_leave(tsr__gemm_sync *sy, int slot, int64_t units, bool timed,
                                int64_t start, int64_t waited) {
  if (slot == 0) {
    const int64_t t0 = tsr__gemm_clock(timed);
    tsr__gemm_wait_at_least(&sy->udone, units);
    waited += tsr__gemm_clock(timed) - t0;
  }
  if (!timed) return;
  const int64_t busy = tsr__now_ns() - start - waited;
  if (slot == 0) sy->caller_work_ns = busy;
  atomic_fetch_add(&sy->work_ns, busy);
}

/* One call's job, as the pool runs it. */
typedef struct tsr__gemm_job {
  const tsr__gemm_plan *pl;
  tsr__gemm_sync sy;
} tsr__gemm_job;

/*
 * The jc/pc/ic loops, run by every thread of the job (slot 0: the caller): take a ticket, wait
 * for what it depends on, run it, until the tickets run out. The caller then waits until every
 * unit is finished; the other threads just leave.
 */
static void tsr__gemm_work(void *arg, int slot) {
  tsr__gemm_job *job = arg;
  const tsr__gemm_plan *pl = job->pl;
  tsr__gemm_sync *sy = &job->sy;
  /* Time spent waiting is measured only for the adaptive thread count (several threads):
     a clock read costs 20-50 ns, which on one thread was a third of an 8x8x8 call. */
  const bool timed = pl->nt > 1;
  const int64_t start = tsr__gemm_clock(timed);
  int64_t waited = 0;
  tsr__gemm_tstate ts = {.abuf = pl->abuf + (size_t)slot * pl->abytes, .rb = -1};
  tsr__gemm_cursor c;
  tsr__gemm_cursor_init(pl, &c);
  for (;;) {
    const int64_t t = atomic_fetch_add(&sy->next, 1);
    bool more = true;
    while (more && t >= c.base + c.bchunks + c.units)
      more = tsr__gemm_cursor_next(pl, &c);
    if (!more) break;
    const int p = (int)(c.s & 1);
    char *bbuf = pl->bbuf[p];
    int64_t i = t - c.base;
    const int64_t t0 = tsr__gemm_clock(timed);
    if (i < c.bchunks) {
      tsr__gemm_wait_at_least(&sy->udone, c.ucum[0]);
      waited += tsr__gemm_clock(timed) - t0;
      tsr__gemm_pack_b_part(pl, bbuf, c.pc, c.jc, c.kcb, c.ncb, c.np * i / c.bchunks,
                            c.np * (i + 1) / c.bchunks);
      atomic_fetch_add(&sy->bdone[p], 1);
    } else {
      i -= c.bchunks;
      tsr__gemm_wait_at_least(&sy->bdone[p], c.bcum[p]);
      tsr__gemm_wait_at_least(&sy->udone, c.ucum[1]);
      waited += tsr__gemm_clock(timed) - t0;
      const int64_t cb = i % c.cchunks;
      tsr__gemm_unit(pl, &ts, bbuf, i / c.cchunks, c.np * cb / c.cchunks,
                     c.np * (cb + 1) / c.cchunks, &c);
      atomic_fetch_add(&sy->udone, 1);
    }
    /* The caller's progress hook (core/internal.h: SUMMA's broadcasts), between tickets; its
       time is not the caller's work. */
    if (slot == 0) waited += tsr__progress_poll();
  }
  /* c is at the last step: ucum[2] counts every unit of the call. */
  tsr__gemm_job_leave(sy, slot, c.ucum[2], timed, start, waited);
}

bool tsr__gemm_stream_c(const tsr__gemm_args *g, const tsr__gemm_config *cfg) {
  const tsr__gemm_kernel *ker = cfg->ker;
  const size_t es = tsr__dtype_size(g->dtype);
  const bool has = g->dtype == TSR_F32 ? ker->ukr_stream_f32 != NULL : ker->ukr_stream_f64 != NULL;
  if (!has || g->beta != 0 || g->k > cfg->kc) return false;
  if (((uintptr_t)g->c & 63) != 0 || ((size_t)g->ldc * es) % 64 != 0) return false;
  int64_t min = tsr__gemm_tuning_of(g)->stream_min_bytes;
  if (min < 0) min = tsr__cpu_facts_get()->cache[2].size;
  return (double)g->m * (double)g->n * (double)es > (double)min;
}

int64_t tsr__gemm_sup_kblock(const tsr__gemm_args *g, int mr) {
  const int64_t forced = tsr__gemm_tuning_of(g)->sup_kblock;
  if (forced > 0) return tsr__min64(forced, g->k);
  const int64_t es = g->dtype == TSR_F64 ? 8 : 4;
  /* Dot products: TSR__GEMM_DOT_KB bytes of each row of A and B a block. */
  const double bytes = (double)g->k * (double)g->n * (double)es;
  if (tsr__gemm_sup_dot(g) || bytes <= (double)tsr__cpu_facts_get()->cache[1].size)
    return tsr__gemm_sup_kblock_fit(g);
  /* Several row blocks over B's rows 4 KiB apart: one block (gemm_tune.h). */
  if (tsr__gemm_sup_rows_alias(g, mr)) return g->k;
  return tsr__min64(TSR__GEMM_SUP_KB, g->k);
}

/* Whether op(A) = A^T (stored transposed) may run unpacked with C in several strips: op(A)
   within L1 (l1 bytes), its rows under 2 KiB apart, or op(A) not transposed. A tile over A^T
   broadcasts MR elements of a new row of A's storage at every k step, lda apart (a page apart
   for 512 f64): from L1 that costs nothing, from L2 each is a miss in another page that the
   prefetchers do not follow, and op(A) is read once per NR-column strip of C. Emerald Rapids,
   the AVX2 kernels forced (the rule's sup-path bound there is the 2 MiB L2, as on an AVX2 CPU
   without a registry row), one thread, column-major A * B^T (op(A) = A^T here) against
   OpenBLAS's Haswell kernels: dgemm 256^3 0.75x unpacked -> 0.95x packed, 512^3 0.45x -> 0.88x;
   A^T * B^T 512^3 0.45x -> 0.97x; sgemm 512^3 A * B^T 0.65x -> 0.94x. */
static inline bool tsr__gemm_sup_at_fits(const tsr__gemm_args *g, double l1) {
  const double es = g->dtype == TSR_F64 ? 8.0 : 4.0;
  /* Rows under 2 KiB apart stay in reach of the stride prefetchers (and A^T with few columns,
     lda*es within a line or two, is read front to back). */
  return !g->trans_a || (double)g->lda * es < 2048.0 || (double)g->m * (double)g->k * es <= l1;
}

bool tsr__gemm_sup_path(const tsr__gemm_args *g, const tsr__gemm_config *cfg) {
  if (cfg->ker->sup == NULL) return false;
  const double es = g->dtype == TSR_F64 ? 8.0 : 4.0;
  const int64_t max = tsr__gemm_tuning_of(g)->sup_mnk;
  if (max >= 0) return (double)g->m * (double)g->n * (double)g->k <= (double)max;
  /* The sup path reads op(A) once per NR-column strip of C and sweeps C strip by strip.
     With one strip, each is read once. With several, op(A) and C must both fit in L2.
     Measured on Zen 5 (1 MiB L2), one thread: sgemm 4096x4096x64 (op(A) 1 MiB, C 64 MiB) fell
     from 237 to 182 GFLOP/s on the sup path and 2048x4096x64 (C 32 MiB) from 256 to 161,
     while dgemm 100x100x1000 (op(A) 800 KiB) rose from 90 to 118 and 256^3 from 117 to 131.
     C that the packed path writes with streaming stores stays there. The bound is the
     configuration's sup_bytes (the registry row's sup-path rule, else the L2 size). */
  if (g->beta == 0 && tsr__gemm_stream_c(g, cfg)) return false;
  /* Dot products read op(A) and B in k blocks of a few KiB a row, whatever their sizes. */
  if (g->n <= cfg->ker->nr || tsr__gemm_sup_dot(g)) return true;
  if (!tsr__gemm_sup_at_fits(g, (double)tsr__cpu_facts_get()->cache[0].size)) return false;
  const double lim = (double)cfg->sup_bytes;
  return (double)g->m * (double)g->k * es <= lim && (double)g->m * (double)g->n * es <= lim;
}

/* ---------------------------------------------------------------- sup path ---------------- */

/*
 * The sup path (small, unpacked: BLIS's term) on nt threads: C split into units, NR-column chunks
 * when C has at least two strips per thread, else MR-row chunks, handed out by one ticket counter
 * (a thread that never joins holds nobody: the caller runs what is left). Each unit is a
 * sub-problem for the kernel's sup routine; slot s packs B^T strips into its own part of bbuf.
 */
typedef struct tsr__gemm_sup_job {
  const tsr__gemm_args *g;
  const tsr__gemm_kernel *ker;
  char *bbuf;
  size_t bslot;   /* bytes of bbuf per slot */
  bool by_cols;   /* units are column chunks (else row chunks) */
  int64_t blocks; /* NR strips or MR row blocks of C */
  int64_t units;
  tsr__gemm_sync sy;
} tsr__gemm_sup_job;

static void tsr__gemm_sup_unit(const tsr__gemm_sup_job *j, int64_t u, int slot) {
  const tsr__gemm_args *g = j->g;
  const size_t es = tsr__dtype_size(g->dtype);
  const int64_t step = j->by_cols ? j->ker->nr : j->ker->mr, len = j->by_cols ? g->n : g->m;
  const int64_t lo = j->blocks * u / j->units * step;
  const int64_t hi = tsr__min64(j->blocks * (u + 1) / j->units * step, len);
  if (hi <= lo) return;
  tsr__gemm_args sub = *g;
  if (j->by_cols) {
    sub.n = hi - lo;
    sub.b = (const char *)g->b + (size_t)(g->trans_b ? lo * g->ldb : lo) * es;
    sub.c = (char *)g->c + (size_t)lo * es;
  } else {
    sub.m = hi - lo;
    sub.a = (const char *)g->a + (size_t)(g->trans_a ? lo : lo * g->lda) * es;
    sub.c = (char *)g->c + (size_t)(lo * g->ldc) * es;
  }
  j->ker->sup(&sub, j->ker, tsr__gemm_sup_kblock(&sub, j->ker->mr),
              j->bbuf + (size_t)slot * j->bslot);
}

static void tsr__gemm_sup_work(void *arg, int slot) {
  tsr__gemm_sup_job *j = arg;
  tsr__gemm_sync *sy = &j->sy;
  const int64_t start = tsr__now_ns();
  for (int64_t u; (u = atomic_fetch_add(&sy->next, 1)) < j->units;) {
    tsr__gemm_sup_unit(j, u, slot);
    atomic_fetch_add(&sy->udone, 1);
  }
  tsr__gemm_job_leave(sy, slot, j->units, true, start, 0);
}

static tsr_status tsr__gemm_sup(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int nt) {
  const size_t es = g->dtype == TSR_F64 ? 8 : 4;
  const bool pack_b = tsr__gemm_sup_pack_b(g, ker->mr);
  const size_t bslot = pack_b ? tsr__round_up_sz((size_t)g->k * (size_t)ker->nr * es, 64) : 0;
  void *bbuf = NULL;
  if (pack_b) TSR_CALL(tsr__gemm_buffer((size_t)nt * bslot, &bbuf));
  const double flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
  if (nt == 1) {
    /* What one thread does per flop, for the adaptive thread count (as the packed path). */
    const bool learn = flops >= 2.0 * TSR__GEMM_SERIAL_MNK;
    const int64_t t0 = learn ? tsr__now_ns() : 0;
    ker->sup(g, ker, tsr__gemm_sup_kblock(g, ker->mr), bbuf);
    if (learn) tsr__gemm_learn_serial(tsr__now_ns() - t0, flops);
    return TSR_OK;
  }
  tsr__gemm_sup_job job = {.g = g, .ker = ker, .bbuf = bbuf, .bslot = bslot};
  const int64_t strips = tsr__ceil_div(g->n, ker->nr), rows = tsr__ceil_div(g->m, ker->mr);
  job.by_cols = strips >= 2 * (int64_t)nt || strips >= rows;
  job.blocks = job.by_cols ? strips : rows;
  /* About 4 units per thread (a thread that loses its core holds back a quarter share). */
  job.units = tsr__min64(job.blocks, 4 * (int64_t)nt);
  tsr__gemm_sync_init(&job.sy);
  const int64_t t0 = tsr__now_ns();
  tsr__gemm_pool_run(nt, g->tuning, tsr__gemm_sup_work, &job);
  tsr__gemm_learn_parallel(tsr__now_ns() - t0, job.sy.caller_work_ns, atomic_load(&job.sy.work_ns),
                           flops);
  return TSR_OK;
}

/* The threads a call of m*n*k = mnk may run on: 1 below TSR__GEMM_SERIAL_MNK (without asking
   OpenMP: per-call cost) and inside a parallel region (no nested parallelism), else
   omp_get_max_threads() (OMP_NUM_THREADS; the adaptive count may still choose fewer). */
static inline int tsr__gemm_threads_for(double mnk) {
#if defined(_OPENMP)
  if (mnk >= TSR__GEMM_SERIAL_MNK && !omp_in_parallel()) return omp_get_max_threads();
#else
  (void)mnk;
#endif
  return 1;
}

/* The most bytes of the op(B) strip the tiny lane packs on the stack (k x NR elements; 16 KiB is
   k <= 128 with AVX-512's NR). */
#define TSR__GEMM_TINY_STRIP_BYTES 16384

/* A tiny call whose op(B) strips are packed (B^T, or rows that alias in L1: tsr__gemm_sup_pack_b)
   with the strip on the stack, in one k block (op(B) is within L2): true when it ran, false (the
   strip would not fit) having done nothing. Without it the drop-in's tiny lane declined every
   such call, which then took the general path: sgemm 16^3 with op(B) = B^T (CBLAS column-major
   A^T B) at 11-21 GFLOP/s against 60 with B (Emerald Rapids). Out of line: the common calls keep
   their small stack frame. */
static __attribute__((noinline)) bool tsr__gemm_tiny_packed(const tsr__gemm_args *g,
                                                            const tsr__gemm_kernel *ker) {
  const size_t es = g->dtype == TSR_F64 ? 8 : 4;
  if ((size_t)g->k * (size_t)ker->nr * es > TSR__GEMM_TINY_STRIP_BYTES) return false;
  _Alignas(64) unsigned char strip[TSR__GEMM_TINY_STRIP_BYTES]; /* pack_b stores aligned */
  ker->sup(g, ker, g->k, strip);
  return true;
}

/* A tiny call whose op(B) = B is one or two columns read down their rows (ldb apart: column-major
   x^T B, a row vector times a matrix, is such a call in row-major terms): the columns copied to
   B^T on the stack, contiguous along k, and the product run as dot products with op(A)'s rows,
   which are contiguous too (tsr__gemm_sup_dot). The strips had used one lane of each vector
   (column-major 1x64x64 NN 0.14-0.21 of OpenBLAS on Zen 4). True when it ran, false (not
   such a call, or B^T past the buffer) having done nothing. Out of line, as above. */
static __attribute__((noinline)) bool tsr__gemm_tiny_gemv(const tsr__gemm_args *g,
                                                          const tsr__gemm_kernel *ker) {
  const size_t es = g->dtype == TSR_F64 ? 8 : 4;
  if (g->trans_a || g->trans_b || (size_t)g->n * es > 16 || g->k < TSR__GEMM_DOT_SHORT_K ||
      (size_t)g->k * (size_t)g->n * es > TSR__GEMM_TINY_STRIP_BYTES)
    return false;
  _Alignas(64) unsigned char bt[TSR__GEMM_TINY_STRIP_BYTES];
  const unsigned char *b = g->b;
  for (int64_t j = 0; j < g->n; ++j)
    for (int64_t p = 0; p < g->k; ++p)
      memcpy(bt + (size_t)(j * g->k + p) * es, b + (size_t)(p * g->ldb + j) * es, es);
  tsr__gemm_args h = *g;
  h.b = bt;
  h.ldb = g->k;
  h.trans_b = true;
  ker->sup(&h, ker, tsr__gemm_sup_kblock_fit(&h), NULL);
  return true;
}

/* A tiny call with one column of C and op(A) = A^T (A's rows run along C's column: column-major
   x^T B^T, a row vector times a transposed matrix): computed as its transpose, the row
   C^T = op(B)^T A (one row of op(B) times A's rows, in place, vectors along them), into a row
   on the stack, then C = that + beta C. The strips had used one lane of each vector (column-major
   1x64x64 NT and TT 0.11-0.21 of OpenBLAS on Zen 4: now 0.70-0.76 and 0.87-1.03). x, op(B)'s
   column, is read in place when B is transposed (from 2 rows of C: 1x4x300 TT 0.43 -> 0.98),
   else copied from its rows ldb apart, which pays from a vector of C (1x2x300 NT 1.03 with
   the strips, 0.46-0.52 copied). True when it ran, false (not such a call, or past the
   buffer) having done nothing. */
static __attribute__((noinline)) bool tsr__gemm_tiny_gemv_t(const tsr__gemm_args *g,
                                                            const tsr__gemm_kernel *ker) {
  const size_t es = g->dtype == TSR_F64 ? 8 : 4;
  if (!g->trans_a || g->n != 1 || g->m < 2 || (!g->trans_b && (size_t)g->m * es < 64) ||
      (size_t)(g->m + g->k) * es + 64 > TSR__GEMM_TINY_STRIP_BYTES)
    return false;
  _Alignas(64) unsigned char buf[TSR__GEMM_TINY_STRIP_BYTES];
  unsigned char *t = buf, *x = buf + (((size_t)g->m * es + 63) & ~(size_t)63);
  const unsigned char *b = g->b;
  if (g->trans_b) /* B stored 1 x k: x in place */
    x = (unsigned char *)(uintptr_t)b;
  else
    for (int64_t p = 0; p < g->k; ++p)
      memcpy(x + (size_t)p * es, b + (size_t)(p * g->ldb) * es, es);
  tsr__gemm_args h = *g;
  h.m = 1;
  h.n = g->m;
  h.trans_a = h.trans_b = false;
  h.a = x;
  h.lda = g->k;
  h.b = g->a;
  h.ldb = g->lda;
  h.c = t;
  h.ldc = g->m;
  h.beta = 0;
  ker->sup(&h, ker, g->k, NULL);
  for (int64_t i = 0; i < g->m; ++i) {
    if (g->dtype == TSR_F64) {
      double *c = (double *)g->c + i * g->ldc, v = ((const double *)(const void *)t)[i];
      *c = g->beta == 0 ? v : v + g->beta * *c;
    } else {
      float *c = (float *)g->c + i * g->ldc, v = ((const float *)(const void *)t)[i];
      *c = g->beta == 0 ? v : v + (float)g->beta * *c;
    }
  }
  return true;
}

/*
 * The tiny lane: a call whose every operand fits in a few hundred KiB (m*n*k elements within the
 * L2 and the LLC, so each of op(A), op(B) and C does; op(A) and C within the sup path's bound)
 * on one thread with the library's own choices. Its answer is known without the general path's
 * questions: the sup path, no streaming stores (C is below the LLC), one k block (op(B) is below
 * L2), no adaptive thread count (nt = 1: below TSR__GEMM_SERIAL_MNK, one thread to run on, or the
 * adaptive count's choice). At 16^3 the multiply takes ~100 ns, so each of those questions is a
 * few per cent of it (issue 31: the per-call cost through CBLAS). Returns false when the call is
 * not tiny, else true with the call's status in *st.
 */
static bool tsr__gemm_tiny(const tsr__gemm_args *g, double mnk, int nt, bool may_allocate,
                           tsr_status *st) {
  if (g->tuning != NULL) return false;
  /* nt: the threads the caller decided the call runs on (tsr__omp_gemm); several go to the
     general path (tsr__gemm_native). */
  if (nt > 1) return false;
  const tsr__gemm_serial *s = tsr__gemm_serial_get(g->dtype);
  const double es = g->dtype == TSR_F64 ? 8.0 : 4.0;
  if (mnk * es > s->tiny_bytes) return false;
  /* op(A) and C within the sup-path rule, as tsr__gemm_sup_path asks. */
  if (s->operand_bytes > 0 && ((double)g->m * (double)g->k * es > s->operand_bytes ||
                               (double)g->m * (double)g->n * es > s->operand_bytes))
    return false;
  if (g->n > s->cfg.ker->nr && !tsr__gemm_sup_at_fits(g, s->l1_bytes)) return false;
  const tsr__gemm_kernel *ker = s->cfg.ker;
  if (g->n * (int64_t)es <= 16 && (tsr__gemm_tiny_gemv(g, ker) || tsr__gemm_tiny_gemv_t(g, ker))) {
    *st = TSR_OK;
    return true;
  }
  if (tsr__gemm_sup_pack_b(g, ker->mr)) {
    if (tsr__gemm_tiny_packed(g, ker)) {
      *st = TSR_OK;
      return true;
    }
    if (!may_allocate) return false;
    *st = tsr__gemm_sup(g, ker, 1); /* it owns the strip buffer */
    return true;
  }
  /* op(B) is within tiny_bytes (at most L2), and there is no tuning object: one k block, but
     for dot products (their k block is a fixed number of bytes). */
  if (tsr__gemm_sup_dot(g))
    ker->sup(g, ker, tsr__gemm_sup_kblock_fit(g), NULL);
  else
    ker->sup_inplace(g); /* op(B) = B in place (not packed, above), one k block */
  *st = TSR_OK;
  return true;
}

/* One call in TSR__GEMM_LEARN_EVERY of those with several threads to have reads the clock (per
   thread: no shared counter): the adaptive count's re-probes wait for such a call, and one run on
   one thread is timed for the serial rate the count weighs. Every such call had read it, ~20 ns
   on a KVM guest (Zen 5), and the timed ones twice more. Returns the time, or -1 when unread. */
#define TSR__GEMM_LEARN_EVERY 8u
static _Thread_local unsigned tsr__gemm_clock_calls;
static inline int64_t tsr__gemm_clock_slot(void) {
  return ++tsr__gemm_clock_calls % TSR__GEMM_LEARN_EVERY == 0 ? tsr__now_ns() : -1;
}

bool tsr__omp_gemm_tiny(const tsr__gemm_args *g) {
  if ((g->dtype != TSR_F32 && g->dtype != TSR_F64) || g->path == TSR_GEMM_VENDOR) return false;
  tsr_status st;
  const double mnk = (double)g->m * (double)g->n * (double)g->k;
  const int avail = tsr__gemm_threads_for(mnk);
  if (avail == 1) return tsr__gemm_tiny(g, mnk, 1, false, &st);
  /* Several threads to have: the lane runs the call when the adaptive count surely answers one
     thread. Asked without claiming a probe (tsr__gemm_surely_serial): a call the lane leaves goes
     to tsr__omp_gemm, which asks afresh, and a probe granted here would be spent on nothing.
     Before, the lane left every such call to the general path (sgemm 64^3 through CBLAS with two
     threads allowed ran ~3 % slower than with one on Zen 5, 3-7 % on Emerald Rapids). */
  const int64_t now = tsr__gemm_clock_slot();
  if (g->tuning != NULL || !tsr__gemm_surely_serial(2.0 * mnk, avail, now) ||
      !tsr__gemm_tiny(g, mnk, 1, false, &st))
    return false;
  if (now >= 0) tsr__gemm_learn_serial(tsr__now_ns() - now, 2.0 * mnk);
  return true;
}

/* The general path on nt threads (tsr__gemm_real's decision); ind: the induced method whose real
   1m form g is (gemm_complex.c), NULL for a real call. */
static tsr_status tsr__gemm_native(const tsr__gemm_args *g, const tsr__gemm_induced *ind, int nt) {
  const size_t es = g->dtype == TSR_F64 ? 8 : 4;
  /* m*n*k without overflow: the core checked each size, the product may still be huge. */
  const double mnk = (double)g->m * (double)g->n * (double)g->k;
  const double flops = 2.0 * mnk;
  tsr__gemm_config cfg;
  tsr__gemm_config_get(g->dtype, nt, g->tuning, &cfg);
  /* A shallow product whose C rows share an L1 set: the packed path with a kernel of fewer rows
     (gemm_registry.c), also where C fits the sup path, whose unpacked tiles alias the same way
     (Zen 4, one thread, column-major, ld 1024, ratio to OpenBLAS: dgemm 256x255x4 0.57-0.61 ->
     0.90-0.98, 256x255x16 0.81-0.82 -> 1.00-1.06, 128x128x16 0.74-0.76 -> 0.87-0.92;
     docs/benchmarks.md); not for C written with streaming stores, which bypass the L1. A tuning
     that sets the sup path's bound (sup_mnk) keeps its choice of path. */
  tsr__gemm_config narrow = cfg;
  const bool shallow = !ind && !tsr__gemm_stream_c(g, &cfg) && tsr__gemm_config_shallow(g, &narrow);
  const bool sup_set = tsr__gemm_tuning_of(g)->sup_mnk >= 0;
  if (!ind && (!shallow || sup_set) && tsr__gemm_sup_path(g, &cfg))
    return tsr__gemm_sup(g, cfg.ker, nt);
  if (shallow) cfg = narrow;
  const tsr__gemm_kernel *ker = cfg.ker;
  const int mr = ker->mr, nr = ker->nr;
  /* No more threads than micro-tiles. */
  const int64_t tiles = tsr__ceil_div(g->m, mr) * tsr__ceil_div(g->n, nr);
  if (tiles < nt) nt = (int)tiles;
  if (nt < 1) nt = 1;
  tsr__gemm_plan pl = {.g = g, .ind = ind, .ker = ker, .nt = nt, .grain = cfg.grain};

  /* Equal KC slices and NC blocks (k = KC+1 as two halves, not KC and a sliver of 1: a
     sliver costs a whole pass over C and a repacking of A). */
  const int64_t kslices = tsr__ceil_div(g->k, cfg.kc), nblocks = tsr__ceil_div(g->n, cfg.nc);
  pl.kc = tsr__ceil_div(g->k, kslices);
  if (ind) pl.kc += pl.kc & 1; /* 1m: no slice splits a complex pair (g->k is even) */
  pl.nc = tsr__min64(tsr__ceil_div(tsr__ceil_div(g->n, nblocks), nr) * nr, g->n);
  pl.stream_c = tsr__gemm_stream_c(g, &cfg);
  pl.sweep = tsr__gemm_row_sweep(ker, pl.kc);
  /* Unit height: at most MC (the A block stays in L2), and with several threads small
     enough for about 4 units per thread (load balance). The row blocks share the micro-panels
     evenly (their heights differ by at most one micro-panel, so no block is a sliver and the
     threads' shares stay equal: 512 rows as seven blocks of 70 rows and one of 22 had left one
     thread 280 rows and the other 232). Measured on Sapphire Rapids: blocks down to 2*MR rows
     cost nothing, the B micro-panel streaming from L2 fast enough. */
  const int64_t mp = tsr__ceil_div(g->m, mr);
  int64_t nblk = tsr__ceil_div(g->m, cfg.mc);
  if (nt > 1 && nblk < (int64_t)cfg.grain * nt) nblk = (int64_t)cfg.grain * nt;
  /* A multiple of the thread count, so that every thread gets as many (19 blocks of 4096 rows
     on 2 threads: 10 and 9, a step's time set by the thread with 10). */
  if (nt > 1) nblk = tsr__ceil_div(nblk, nt) * nt;
  if (nblk > tsr__ceil_div(mp, 2)) {
    nblk = tsr__ceil_div(mp, 2);
    if (nblk > nt) nblk = nblk / nt * nt;
  }
  if (nblk < 1) nblk = 1;
  pl.mu = tsr__ceil_div(mp, nblk) * mr;
  pl.rblocks = nblk;

  /* Two B panels when several threads run more than one step (the next one is packed while
     the last units of the current one run), else one. */
  const int nbpanels = nt > 1 && kslices * nblocks > 1 ? 2 : 1;
  const size_t bbytes =
      tsr__round_up_sz((size_t)pl.kc * tsr__round_up_sz((size_t)pl.nc, (size_t)nr) * es, 4096);
  pl.abytes = tsr__round_up_sz((size_t)pl.mu * (size_t)pl.kc * es, 4096);
  void *buf = NULL;
  TSR_CALL(tsr__gemm_buffer((size_t)nbpanels * bbytes + (size_t)nt * pl.abytes, &buf));
  pl.bbuf[0] = buf;
  pl.bbuf[1] = (char *)buf + (nbpanels - 1) * bbytes;
  pl.abuf = (char *)buf + (size_t)nbpanels * bbytes;

  tsr__gemm_job job = {.pl = &pl};
  tsr__gemm_sync_init(&job.sy);
  const bool learn = mnk >= TSR__GEMM_SERIAL_MNK;
  const int64_t t0 = learn ? tsr__now_ns() : 0;
  tsr__gemm_pool_run(nt, pl.g->tuning, tsr__gemm_work, &job);
  if (learn) {
    const int64_t region = tsr__now_ns() - t0;
    if (nt > 1)
      tsr__gemm_learn_parallel(region, job.sy.caller_work_ns, atomic_load(&job.sy.work_ns), flops);
    else
      tsr__gemm_learn_serial(region, flops);
  }
  return TSR_OK;
}

tsr_status tsr__gemm_real(const tsr__gemm_args *g, const tsr__gemm_induced *ind) {
  /* The threads the call runs on, decided once: what OpenMP gives it (tsr__gemm_threads_for),
     and the adaptive count's answer where that is several. */
  const double mnk = (double)g->m * (double)g->n * (double)g->k;
  const int avail = tsr__gemm_threads_for(mnk);
  int nt = avail;
  const int64_t now = nt > 1 ? tsr__gemm_clock_slot() : -1;
  if (nt > 1 && !tsr__gemm_worth_parallel(g->tuning, 2.0 * mnk, nt, now)) nt = 1;
  tsr_status tiny;
  /* Several threads to have, one chosen: the tiny lane runs a tiny call, timed when the clock was
     read for it (the general path, its questions and two clock reads on every call, made sgemm
     64^3 7-8 % slower with two threads allowed than with one on Emerald Rapids). */
  if (!ind && tsr__gemm_tiny(g, mnk, nt, true, &tiny)) {
    if (nt == 1 && now >= 0) tsr__gemm_learn_serial(tsr__now_ns() - now, 2.0 * mnk);
    return tiny;
  }
  return tsr__gemm_native(g, ind, nt);
}
