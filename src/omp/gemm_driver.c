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
 * OpenMP: one parallel region per call. In each (jc, pc) step the threads pack the shared B
 * panel together (chunks of its micro-panels taken from a counter, so a late thread's share
 * is packed by the others), then take work units from a shared
 * atomic counter (gemm_thread.c): a unit is a row block of C (at most MC rows; smaller with
 * several threads so that there are about `grain` units per thread, 4 by default) times the whole
 * panel, or a column chunk of it when C is too short to give every thread enough row blocks. The
 * thread that takes a unit packs its A rows into its own buffer (the ic loop split across cores, as
 * BLIS does for cores with private L2 caches). Dynamic hand-out matters on shared machines: a
 * thread that loses its core does not hold the others at the barrier for a whole static
 * share. Problems below TSR__GEMM_SERIAL_MNK run on the calling thread (fork/join would cost
 * more than it saves), as does a call made from inside a parallel region (no nested
 * parallelism).
 *
 * On a machine with more runnable threads than cores, libgomp's own spinning at the start
 * and end of the parallel region still costs time slices when two team threads share a core;
 * OMP_WAIT_POLICY=passive or OMP_PROC_BIND=true avoid that (measured: 256^3 dgemm, 2 threads,
 * load average 9 on 2 cores: 2-3 GFLOP/s by default, 50 passive, 80 bound).
 *
 * Packing buffers are cached per calling thread (one 64-byte-aligned block holding the B panel
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
#include "omp/gemm_tune.h"

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

void tsr__omp_gemm_trim(void) {
  pthread_once(&tsr__gemm_key_once, tsr__gemm_key_create);
  if (tsr__gemm_key_err) return;
  tsr__gemm_cache *c = pthread_getspecific(tsr__gemm_key);
  if (!c) return;
  tsr__host_free(c->ptr);
  c->ptr = NULL;
  c->bytes = 0;
}

/* ---------------------------------------------------------------- helpers ------------- */

static int64_t tsr__min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
static int64_t tsr__ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
static size_t tsr__round_up_sz(size_t x, size_t m) {
  return (x + m - 1) / m * m;
}

/* C = beta*C (beta == 0 writes zeros without reading C). */
static void tsr__gemm_scale(const tsr__gemm_args *g) {
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

/* Packs columns [q0*NR, q1*NR) of the kcb x ncb block of op(B) at (pc, jc). */
static void tsr__gemm_pack_b_part(const tsr__gemm_plan *pl, int64_t pc, int64_t jc, int64_t kcb,
                                  int64_t ncb, int64_t q0, int64_t q1) {
  const tsr__gemm_args *g = pl->g;
  const int nr = pl->ker->nr;
  const int64_t j0 = q0 * nr, cols = tsr__min64(q1 * nr, ncb) - j0;
  if (cols <= 0) return;
  /* Address of op(B)(pc, jc + j0). */
  const int64_t off = g->trans_b ? (jc + j0) * g->ldb + pc : pc * g->ldb + jc + j0;
  if (g->dtype == TSR_F32)
    pl->ker->pack_b_f32(nr, kcb, cols, (const float *)g->b + off, g->ldb, g->trans_b,
                        (float *)pl->bbuf + j0 * kcb);
  else
    pl->ker->pack_b_f64(nr, kcb, cols, (const double *)g->b + off, g->ldb, g->trans_b,
                        (double *)pl->bbuf + j0 * kcb);
}

static void tsr__gemm_pack_a_block(const tsr__gemm_plan *pl, char *abuf, int64_t ic, int64_t pc,
                                   int64_t mcb, int64_t kcb) {
  const tsr__gemm_args *g = pl->g;
  /* Address of op(A)(ic, pc). */
  const int64_t off = g->trans_a ? pc * g->lda + ic : ic * g->lda + pc;
  if (g->dtype == TSR_F32)
    pl->ker->pack_a_f32(pl->ker->mr, mcb, kcb, (const float *)g->a + off, g->lda, g->trans_a,
                        (float *)abuf);
  else
    pl->ker->pack_a_f64(pl->ker->mr, mcb, kcb, (const double *)g->a + off, g->lda, g->trans_a,
                        (double *)abuf);
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

/* State a thread keeps across units: which A block its buffer holds. */
typedef struct tsr__gemm_tstate {
  char *abuf;
  int64_t rb, pc, jc; /* its A block: row block rb of slice pc of panel jc (rb -1: none) */
} tsr__gemm_tstate;

/* One unit of work: row block rb x B micro-panels [q0, q1) of the current panel. */
static void tsr__gemm_unit(const tsr__gemm_plan *pl, tsr__gemm_tstate *ts, int64_t rb, int64_t q0,
                           int64_t q1, int64_t jc, int64_t pc, int64_t kcb, int64_t ncb,
                           double beta) {
  const int64_t ic = rb * pl->mu, mcb = tsr__min64(pl->mu, pl->g->m - ic);
  if (ts->rb != rb || ts->pc != pc || ts->jc != jc) {
    tsr__gemm_pack_a_block(pl, ts->abuf, ic, pc, mcb, kcb);
    ts->rb = rb;
    ts->pc = pc;
    ts->jc = jc;
  }
  tsr__gemm_macro(pl, ts->abuf, ic, jc, mcb, kcb, ncb, q0, q1, beta);
}

/*
 * The jc/pc loops. With a team (sync != NULL): the threads pack the B panel together (chunks
 * from a counter, then a wait for the count of finished chunks), then take the units (row
 * block x column chunk) of the panel from a shared counter, so that a thread that loses its
 * core for a while does not hold the others for its whole static share. One barrier per
 * (jc, pc) step but the last: nobody still reads the panel before it is repacked. Without a
 * team: everything in order.
 */
static void tsr__gemm_loops(const tsr__gemm_plan *pl, tsr__gemm_sync *sy, int tid) {
  const tsr__gemm_args *g = pl->g;
  const int nr = pl->ker->nr;
  const int nth = sy ? sy->n : 1;
  int phase = 0;
  int64_t step = 0, waited = 0;
  const int64_t start = sy ? tsr__gemm_now_ns() : 0;
  tsr__gemm_tstate ts = {.abuf = pl->abuf + (size_t)tid * pl->abytes, .rb = -1};
  for (int64_t jc = 0; jc < g->n; jc += pl->nc) {
    const int64_t ncb = tsr__min64(pl->nc, g->n - jc), np = tsr__ceil_div(ncb, nr);
    const int64_t cchunks = sy ? tsr__gemm_col_chunks(pl, np) : 1;
    const int64_t units = pl->rblocks * cchunks;
    for (int64_t pc = 0; pc < g->k; pc += pl->kc, ++step) {
      const int64_t kcb = tsr__min64(pl->kc, g->k - pc);
      /* The user's beta on the first slice, accumulation afterwards. */
      const double beta = pc == 0 ? g->beta : 1.0;
      if (!sy) {
        tsr__gemm_pack_b_part(pl, pc, jc, kcb, ncb, 0, np);
        for (int64_t rb = 0; rb < pl->rblocks; ++rb)
          tsr__gemm_unit(pl, &ts, rb, 0, np, jc, pc, kcb, ncb, beta);
        continue;
      }
      const int p = (int)(step & 1), q = p ^ 1;
      const bool last = jc + pl->nc >= g->n && pc + pl->kc >= g->k;
      /* The other parity's counters were last used by the step before this one, which ended
         at a barrier; nobody uses them again before this step's closing barrier. */
      if (tid == 0) {
        atomic_store(&sy->next[q], 0);
        atomic_store(&sy->bnext[q], 0);
        atomic_store(&sy->bdone[q], 0);
      }
      /* Pack the B panel in chunks taken from a counter, then wait until every chunk is
         done: a thread that starts late (woken from sleep, or preempted on a crowded
         machine) does not hold the others for a static share; the first thread packs
         everything if need be. */
      const int64_t bchunks = tsr__min64(np, 4 * (int64_t)nth);
      for (;;) {
        const int64_t c = atomic_fetch_add(&sy->bnext[p], 1);
        if (c >= bchunks) break;
        tsr__gemm_pack_b_part(pl, pc, jc, kcb, ncb, np * c / bchunks, np * (c + 1) / bchunks);
        atomic_fetch_add(&sy->bdone[p], 1);
      }
      int64_t t0 = tsr__gemm_now_ns();
      tsr__gemm_wait_at_least(&sy->bdone[p], bchunks);
      waited += tsr__gemm_now_ns() - t0;
      for (;;) {
        const int64_t u = atomic_fetch_add(&sy->next[step & 1], 1);
        if (u >= units) break;
        const int64_t cb = u % cchunks;
        tsr__gemm_unit(pl, &ts, u / cchunks, np * cb / cchunks, np * (cb + 1) / cchunks, jc, pc,
                       kcb, ncb, beta);
      }
      /* Nobody may still read the panel when it is repacked; after the last step the
         parallel region's own join follows, so no barrier there. */
      if (last) continue;
      t0 = tsr__gemm_now_ns();
      tsr__gemm_barrier(sy, &phase);
      waited += tsr__gemm_now_ns() - t0;
    }
  }
  if (sy) atomic_fetch_add(&sy->work_ns, tsr__gemm_now_ns() - start - waited);
}

static tsr_status tsr__gemm_native(const tsr__gemm_args *g) {
  const size_t es = g->dtype == TSR_F32 ? sizeof(float) : sizeof(double);
  int nt = 1;
#if defined(_OPENMP)
  if (!omp_in_parallel()) nt = omp_get_max_threads();
#endif
  /* m*n*k without overflow: the core checked each size, the product may still be huge. */
  const double mnk = (double)g->m * (double)g->n * (double)g->k;
  if (mnk < TSR__GEMM_SERIAL_MNK) nt = 1;
  const double flops = 2.0 * mnk;
  if (nt > 1 && !tsr__gemm_worth_parallel(flops, nt)) nt = 1;
  tsr__gemm_config cfg;
  tsr__gemm_config_get(g->dtype, nt, &cfg);
  const tsr__gemm_kernel *ker = cfg.ker;
  const int mr = ker->mr, nr = ker->nr;
  /* No more threads than micro-tiles. */
  const int64_t tiles = tsr__ceil_div(g->m, mr) * tsr__ceil_div(g->n, nr);
  if (tiles < nt) nt = (int)tiles;
  if (nt < 1) nt = 1;
  tsr__gemm_plan pl = {.g = g, .ker = ker, .nt = nt, .grain = cfg.grain};

  /* Equal KC slices and NC blocks (k = KC+1 as two halves, not KC and a sliver of 1: a
     sliver costs a whole pass over C and a repacking of A). */
  const int64_t kslices = tsr__ceil_div(g->k, cfg.kc), nblocks = tsr__ceil_div(g->n, cfg.nc);
  pl.kc = tsr__ceil_div(g->k, kslices);
  pl.nc = tsr__min64(tsr__ceil_div(tsr__ceil_div(g->n, nblocks), nr) * nr, g->n);
  /* Unit height: at most MC (the A block stays in L2), and with several threads small
     enough for about 4 units per thread (load balance). Row blocks of equal MR-aligned
     height, so the last one is not a sliver. Measured on Sapphire Rapids: blocks down to
     2*MR rows cost nothing, the B micro-panel streaming from L2 fast enough. */
  const int64_t mp = tsr__ceil_div(g->m, mr);
  int64_t nblk = tsr__ceil_div(g->m, cfg.mc);
  if (nt > 1 && nblk < (int64_t)cfg.grain * nt) nblk = (int64_t)cfg.grain * nt;
  if (nblk > tsr__ceil_div(mp, 2)) nblk = tsr__ceil_div(mp, 2);
  if (nblk < 1) nblk = 1;
  pl.mu = tsr__ceil_div(mp, nblk) * mr;
  pl.rblocks = tsr__ceil_div(g->m, pl.mu);

  const size_t bbytes =
      tsr__round_up_sz((size_t)pl.kc * tsr__round_up_sz((size_t)pl.nc, (size_t)nr) * es, 4096);
  pl.abytes = tsr__round_up_sz((size_t)pl.mu * (size_t)pl.kc * es, 4096);
  void *buf = NULL;
  TSR_CALL(tsr__gemm_buffer(bbytes + (size_t)nt * pl.abytes, &buf));
  pl.bbuf = buf;
  pl.abuf = (char *)buf + bbytes;

  const bool learn = mnk >= TSR__GEMM_SERIAL_MNK;
#if defined(_OPENMP)
  if (nt > 1) {
    tsr__gemm_sync sy;
    tsr__gemm_sync_init(&sy, nt);
    bool full_team = true;
    const int64_t t0 = tsr__gemm_now_ns();
#pragma omp parallel num_threads(nt)
    {
      /* A smaller team than asked (OMP_DYNAMIC, thread limits) would never complete the
         barriers: then the first thread does all the work. */
      if (omp_get_num_threads() == nt) {
        tsr__gemm_loops(&pl, &sy, omp_get_thread_num());
      } else if (omp_get_thread_num() == 0) {
        full_team = false;
        tsr__gemm_loops(&pl, NULL, 0);
      }
    }
    const int64_t t1 = tsr__gemm_now_ns(), work = atomic_load(&sy.work_ns);
    if (full_team) tsr__gemm_learn_parallel(t1 - t0, work, nt, flops);
    return TSR_OK;
  }
#endif
  const int64_t t0 = learn ? tsr__gemm_now_ns() : 0;
  tsr__gemm_loops(&pl, NULL, 0);
  if (learn) tsr__gemm_learn_serial(tsr__gemm_now_ns() - t0, flops);
  return TSR_OK;
}

/* ---------------------------------------------------------------- entry --------------- */

tsr_status tsr__omp_gemm(tsr_device dev, const tsr__gemm_args *args) {
  (void)dev;
  const tsr__gemm_args *g = args;
  if (g->dtype != TSR_F32 && g->dtype != TSR_F64)
    return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__,
                          "the CPU GEMM supports f32 and f64, not dtype %d", (int)g->dtype);
  if (g->path == TSR_GEMM_VENDOR) return tsr__gemm_vendor(g);
  if (g->m == 0 || g->n == 0) return TSR_OK;
  if (g->alpha == 0 || g->k == 0) {
    tsr__gemm_scale(g);
    return TSR_OK;
  }
  return tsr__gemm_native(g);
}
