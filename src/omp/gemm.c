/*
 * CPU GEMM driver: the BLIS loop nest (Goto & van de Geijn, "Anatomy of High-Performance
 * Matrix Multiplication", ACM TOMS 2008; Van Zee & van de Geijn, "BLIS", ACM TOMS 2015).
 *
 *   jc: NC-wide column blocks of C and op(B)                  (B panel in L3)
 *    pc: KC-deep slices of the k dimension                    -> pack op(B) KC x NC, shared
 *     ic: MC-tall row blocks (per thread)                     -> pack op(A) MC x KC (in L2)
 *      macro-kernel: jr over NR micro-panels of B (one in L1), ir over MR micro-panels of A
 *       micro-kernel: MR x NR tile of C in registers
 *
 * OpenMP: one parallel region per call. In each (jc, pc) step all threads pack the shared B
 * panel together (a static split of its micro-panels), then take work units from a shared
 * atomic counter: a unit is a row block of C (at most MC rows; smaller with several threads so
 * that there are about 4 units per thread) times the whole panel, or a column chunk of it when
 * C is too short to give every thread enough row blocks. The thread that takes a unit packs
 * its A rows into its own buffer (the ic loop split across cores, as BLIS does for cores with
 * private L2 caches). Dynamic hand-out matters on shared machines: a thread that loses its
 * core does not hold the others at the barrier for a whole static share; the barriers are
 * our own (spin briefly, then yield; see tsr__gemm_sync). Problems below TSR__GEMM_SERIAL_MNK
 * run on the calling thread (fork/join would cost more than it saves), as does a call made
 * from inside a parallel region (no nested parallelism).
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
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(_OPENMP)
#include <omp.h>
#endif
#include "omp/gemm.h" /* first: tessera/config.h says TSR_HAVE_VENDOR_BLAS */

#if TSR_HAVE_VENDOR_BLAS && defined(TSR_OMP_VENDOR_BLAS_LIB)
#include <dlfcn.h>
#endif

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
    return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, "tsr_gemm",
                          "cannot create the thread-local packing buffer key");
  tsr__gemm_cache *c = pthread_getspecific(tsr__gemm_key);
  if (!c) {
    c = calloc(1, sizeof *c);
    if (!c)
      return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, "tsr_gemm", "cannot allocate %zu bytes",
                            sizeof *c);
    if (pthread_setspecific(tsr__gemm_key, c) != 0) {
      free(c);
      return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, "tsr_gemm",
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

/* Everything the threads share for one call. */
typedef struct tsr__gemm_plan {
  const tsr__gemm_args *g;
  const tsr__gemm_kernel *ker;
  int64_t kc, nc;  /* cache blocks, clipped to the problem */
  int64_t mu;      /* rows of a work unit: a multiple of MR, at most the kernel's MC */
  int64_t rblocks; /* ceil(m / mu) */
  int nt;          /* threads asked for */
  char *bbuf;      /* packed B panel: kc x round_up(nc, NR) */
  char *abuf;      /* per-thread A blocks: round_up(mu, MR) x kc each */
  size_t abytes;   /* bytes per thread A block (multiple of 4096) */
} tsr__gemm_plan;

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
    tsr__gemm_pack_b_f32(nr, kcb, cols, (const float *)g->b + off, g->ldb, g->trans_b,
                         (float *)pl->bbuf + j0 * kcb);
  else
    tsr__gemm_pack_b_f64(nr, kcb, cols, (const double *)g->b + off, g->ldb, g->trans_b,
                         (double *)pl->bbuf + j0 * kcb);
}

static void tsr__gemm_pack_a_block(const tsr__gemm_plan *pl, char *abuf, int64_t ic, int64_t pc,
                                   int64_t mcb, int64_t kcb) {
  const tsr__gemm_args *g = pl->g;
  /* Address of op(A)(ic, pc). */
  const int64_t off = g->trans_a ? pc * g->lda + ic : ic * g->lda + pc;
  if (g->dtype == TSR_F32)
    tsr__gemm_pack_a_f32(pl->ker->mr, mcb, kcb, (const float *)g->a + off, g->lda, g->trans_a,
                         (float *)abuf);
  else
    tsr__gemm_pack_a_f64(pl->ker->mr, mcb, kcb, (const double *)g->a + off, g->lda, g->trans_a,
                         (double *)abuf);
}

/*
 * Macro-kernel: C[ic.., jc+q0*NR..] (mcb rows, B micro-panels q0..q1) += the packed block
 * product. beta is the user's beta on the first pc slice and 1 afterwards. Edge tiles go
 * through a temporary tile so the micro-kernel always writes MR x NR elements.
 */
static void tsr__gemm_macro(const tsr__gemm_plan *pl, const char *abuf, int64_t ic, int64_t jc,
                            int64_t mcb, int64_t kcb, int64_t ncb, int64_t q0, int64_t q1,
                            double beta) {
  const tsr__gemm_args *g = pl->g;
  const tsr__gemm_kernel *ker = pl->ker;
  const int mr = ker->mr, nr = ker->nr;
  const int64_t ldc = g->ldc, mpan = tsr__ceil_div(mcb, mr);
  if (g->dtype == TSR_F32) {
    _Alignas(64) float t[TSR__GEMM_AVX512_MR * TSR__GEMM_AVX512_NR_F32];
    const float alpha = (float)g->alpha, fbeta = (float)beta;
    const float *ap = (const float *)abuf, *bp = (const float *)pl->bbuf;
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t j = q * nr, nb = tsr__min64(nr, ncb - j);
      const float *bq = bp + j * kcb;
      for (int64_t r = 0; r < mpan; ++r) {
        const int64_t i = r * mr, mb = tsr__min64(mr, mcb - i);
        float *c = (float *)g->c + (ic + i) * ldc + jc + j;
        if (mb == mr && nb == nr) {
          ker->ukr_f32(kcb, alpha, ap + i * kcb, bq, fbeta, c, ldc, 1);
        } else {
          ker->ukr_f32(kcb, alpha, ap + i * kcb, bq, 0.0f, t, nr, 1);
          for (int64_t ii = 0; ii < mb; ++ii)
            for (int64_t jj = 0; jj < nb; ++jj)
              c[ii * ldc + jj] =
                  fbeta == 0 ? t[ii * nr + jj] : t[ii * nr + jj] + fbeta * c[ii * ldc + jj];
        }
      }
    }
  } else {
    _Alignas(64) double t[TSR__GEMM_AVX512_MR * TSR__GEMM_AVX512_NR_F64];
    const double alpha = g->alpha;
    const double *ap = (const double *)abuf, *bp = (const double *)pl->bbuf;
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t j = q * nr, nb = tsr__min64(nr, ncb - j);
      const double *bq = bp + j * kcb;
      for (int64_t r = 0; r < mpan; ++r) {
        const int64_t i = r * mr, mb = tsr__min64(mr, mcb - i);
        double *c = (double *)g->c + (ic + i) * ldc + jc + j;
        if (mb == mr && nb == nr) {
          ker->ukr_f64(kcb, alpha, ap + i * kcb, bq, beta, c, ldc, 1);
        } else {
          ker->ukr_f64(kcb, alpha, ap + i * kcb, bq, 0.0, t, nr, 1);
          for (int64_t ii = 0; ii < mb; ++ii)
            for (int64_t jj = 0; jj < nb; ++jj)
              c[ii * ldc + jj] =
                  beta == 0 ? t[ii * nr + jj] : t[ii * nr + jj] + beta * c[ii * ldc + jj];
        }
      }
    }
  }
}

/* Column chunks per row block for a B panel of np micro-panels: 1 unless there are too few
   row blocks to give every thread several units (short-wide C); then the jr loop is split
   too, at the price of packing those A rows once per chunk. */
static int64_t tsr__gemm_col_chunks(const tsr__gemm_plan *pl, int64_t np) {
  const int64_t want = 4 * (int64_t)pl->nt;
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
 * Synchronization inside the parallel region, done with atomics rather than OpenMP barriers
 * and worksharing loops: libgomp's barriers spin (GOMP_SPINCOUNT, by default 300000 pauses,
 * about 20 ms on CPUs with a slow PAUSE) before sleeping, and on a machine with more runnable
 * threads than cores a spinning thread keeps the core from the thread it waits for, so each
 * barrier can cost a whole scheduler time slice. Measured on the shared 2-core development
 * machine: 256^3 dgemm on 2 threads took ~50 ms per call with omp barriers under load, 0.6 ms
 * with OMP_WAIT_POLICY=passive. These waits spin briefly, then sched_yield() (as OpenBLAS's
 * threads do), which behaves on an idle machine and on a busy one.
 */
typedef struct tsr__gemm_sync {
  _Atomic int64_t next[2]; /* unit counters of alternate (jc, pc) steps */
  atomic_int arrived;      /* threads at the current barrier */
  atomic_int phase;        /* barrier generation */
  int n;                   /* threads taking part */
  _Atomic int64_t work_ns; /* sum over threads of time not spent waiting at barriers */
} tsr__gemm_sync;

static int64_t tsr__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void tsr__gemm_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Centralized barrier (generation counting); *phase is the caller's generation. */
static void tsr__gemm_barrier(tsr__gemm_sync *s, int *phase) {
  const int next = *phase + 1;
  *phase = next;
  if (atomic_fetch_add(&s->arrived, 1) == s->n - 1) {
    atomic_store(&s->arrived, 0);
    atomic_store(&s->phase, next);
    return;
  }
  for (int i = 0; atomic_load(&s->phase) != next; ++i) {
    if (i < 256)
      tsr__gemm_relax();
    else
      sched_yield();
  }
}

/*
 * The jc/pc loops. With a team (sync != NULL): all threads pack the B panel together (a
 * static split of its micro-panels), then take the units (row block x column chunk) of the
 * panel from a shared counter, so that a thread that loses its core for a while does not
 * hold the others for its whole static share. Two barriers per (jc, pc) step: the panel is
 * complete; nobody still reads it before it is repacked. Without a team: everything in order.
 */
static void tsr__gemm_loops(const tsr__gemm_plan *pl, tsr__gemm_sync *sy, int tid) {
  const tsr__gemm_args *g = pl->g;
  const int nr = pl->ker->nr;
  const int nth = sy ? sy->n : 1;
  int phase = 0;
  int64_t step = 0, waited = 0;
  const int64_t start = sy ? tsr__now_ns() : 0;
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
      tsr__gemm_pack_b_part(pl, pc, jc, kcb, ncb, np * tid / nth, np * (tid + 1) / nth);
      int64_t t0 = tsr__now_ns();
      tsr__gemm_barrier(sy, &phase);
      waited += tsr__now_ns() - t0;
      /* Everybody is done with the other counter (its step ended at the previous barrier
         pair), and nobody uses it before the next step's first barrier. */
      if (tid == 0) atomic_store(&sy->next[(step + 1) & 1], 0);
      for (;;) {
        const int64_t u = atomic_fetch_add(&sy->next[step & 1], 1);
        if (u >= units) break;
        const int64_t cb = u % cchunks;
        tsr__gemm_unit(pl, &ts, u / cchunks, np * cb / cchunks, np * (cb + 1) / cchunks, jc, pc,
                       kcb, ncb, beta);
      }
      t0 = tsr__now_ns();
      tsr__gemm_barrier(sy, &phase);
      waited += tsr__now_ns() - t0;
    }
  }
  if (sy) atomic_fetch_add(&sy->work_ns, tsr__now_ns() - start - waited);
}

/*
 * Whether a call should use its threads, learned from the calls before it. On an idle machine
 * a parallel region costs microseconds; on one with more runnable threads than cores, libgomp's
 * spinning at the region's fork and join costs whole scheduler time slices when two team
 * threads share a core (measured: 256^3 dgemm, 2 threads, load average 6-9 on 2 cores: 8-50 ms
 * per call instead of 0.4 ms, 0.1x of single-threaded OpenBLAS). So each parallel call
 * measures its overhead (region time minus the threads' mean busy time) and each call its time
 * per flop; a call then runs in parallel only when the time threads would save,
 * serial_time * (1 - 1/threads), exceeds twice the recent overhead. A stale estimate (older
 * than max(1 s, 100 x overhead): the probe costs at most ~1%) is re-measured by running in
 * parallel anyway, and one fast measurement is trusted at once, so the library recovers as
 * soon as the machine quietens. Thread count does not change results: every C
 * element is computed by one thread in the same order.
 * Relaxed races between concurrent callers only blur the estimates.
 */
static _Atomic int64_t tsr__gemm_overhead_ns; /* running mean; 0: not measured yet */
static _Atomic int64_t tsr__gemm_overhead_at; /* when it was last measured */
static _Atomic int64_t tsr__gemm_fs_per_flop; /* one thread's time per flop, femtoseconds */

/* Running mean of two; fast_down: a value below a quarter of the mean replaces it (a fast
   parallel run cannot happen by accident on a crowded machine; a slow one can on a quiet
   machine, for a moment). */
static void tsr__gemm_learn(_Atomic int64_t *v, int64_t x, bool fast_down) {
  const int64_t old = atomic_load_explicit(v, memory_order_relaxed);
  const int64_t upd = old <= 0 || (fast_down && x < old / 4) ? x : (old + x) / 2;
  atomic_store_explicit(v, upd, memory_order_relaxed);
}

static atomic_bool tsr__gemm_adaptive = true;

void tsr__gemm_set_adaptive(bool on) {
  atomic_store(&tsr__gemm_adaptive, on);
}

static bool tsr__gemm_worth_parallel(double flops, int nt) {
  if (!atomic_load_explicit(&tsr__gemm_adaptive, memory_order_relaxed)) return true;
  const int64_t ovh = atomic_load_explicit(&tsr__gemm_overhead_ns, memory_order_relaxed);
  const int64_t fs = atomic_load_explicit(&tsr__gemm_fs_per_flop, memory_order_relaxed);
  if (ovh <= 0 || fs <= 0) return true;
  const double saving_ns = flops * (double)fs * 1e-6 * (1.0 - 1.0 / nt);
  if (saving_ns > 2.0 * (double)ovh) return true;
  const int64_t age =
      tsr__now_ns() - atomic_load_explicit(&tsr__gemm_overhead_at, memory_order_relaxed);
  return age > 1000000000 && age > 100 * ovh;
}

static tsr_status tsr__gemm_native(const tsr__gemm_args *g) {
  const tsr__gemm_kernel *ker = tsr__gemm_kernel_get(g->dtype);
  if (!ker)
    return tsr__set_error(TSR_ERR_INTERNAL, "tsr_gemm", "no CPU GEMM micro-kernel for dtype %d",
                          (int)g->dtype);
  tsr__gemm_plan pl = {.g = g, .ker = ker};
  const size_t es = g->dtype == TSR_F32 ? sizeof(float) : sizeof(double);
  const int mr = ker->mr, nr = ker->nr;

  int nt = 1;
#if defined(_OPENMP)
  if (!omp_in_parallel()) nt = omp_get_max_threads();
#endif
  /* m*n*k without overflow: the core checked each size, the product may still be huge. */
  const double mnk = (double)g->m * (double)g->n * (double)g->k;
  if (mnk < TSR__GEMM_SERIAL_MNK) nt = 1;
  /* No more threads than micro-tiles. */
  const int64_t tiles = tsr__ceil_div(g->m, mr) * tsr__ceil_div(g->n, nr);
  if (tiles < nt) nt = (int)tiles;
  if (nt < 1) nt = 1;
  const double flops = 2.0 * mnk;
  if (nt > 1 && !tsr__gemm_worth_parallel(flops, nt)) nt = 1;
  pl.nt = nt;

  /* Equal KC slices and NC blocks (k = KC+1 as two halves, not KC and a sliver of 1: a
     sliver costs a whole pass over C and a repacking of A). */
  const int64_t kslices = tsr__ceil_div(g->k, ker->kc), nblocks = tsr__ceil_div(g->n, ker->nc);
  pl.kc = tsr__ceil_div(g->k, kslices);
  pl.nc = tsr__min64(tsr__ceil_div(tsr__ceil_div(g->n, nblocks), nr) * nr, g->n);
  /* Unit height: at most MC (the A block stays in L2), and with several threads small
     enough for about 4 units per thread (load balance). Row blocks of equal MR-aligned
     height, so the last one is not a sliver. Measured on Sapphire Rapids: blocks down to
     2*MR rows cost nothing, the B micro-panel streaming from L2 fast enough. */
  const int64_t mp = tsr__ceil_div(g->m, mr);
  int64_t nblk = tsr__ceil_div(g->m, ker->mc);
  if (nt > 1 && nblk < 4 * (int64_t)nt) nblk = 4 * (int64_t)nt;
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
    tsr__gemm_sync sy = {.n = nt};
    atomic_init(&sy.next[0], 0);
    atomic_init(&sy.next[1], 0);
    atomic_init(&sy.arrived, 0);
    atomic_init(&sy.phase, 0);
    atomic_init(&sy.work_ns, 0);
    bool full_team = true;
    const int64_t t0 = tsr__now_ns();
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
    const int64_t t1 = tsr__now_ns(), work = atomic_load(&sy.work_ns);
    if (full_team && work > 0) {
      int64_t ovh = (t1 - t0) - work / nt;
      if (ovh < 1000) ovh = 1000;
      tsr__gemm_learn(&tsr__gemm_overhead_ns, ovh, true);
      atomic_store_explicit(&tsr__gemm_overhead_at, t1, memory_order_relaxed);
      tsr__gemm_learn(&tsr__gemm_fs_per_flop, (int64_t)((double)work * 1e6 / flops) + 1, false);
    }
    return TSR_OK;
  }
#endif
  const int64_t t0 = learn ? tsr__now_ns() : 0;
  tsr__gemm_loops(&pl, NULL, 0);
  if (learn)
    tsr__gemm_learn(&tsr__gemm_fs_per_flop,
                    (int64_t)((double)(tsr__now_ns() - t0) * 1e6 / flops) + 1, false);
  return TSR_OK;
}

/* ---------------------------------------------------------------- vendor path --------- */

/*
 * The vendor CBLAS is loaded with dlopen(RTLD_LOCAL) from the soname found at configure time
 * and its functions are looked up in that handle with dlsym. Calling cblas_dgemm by symbol
 * name instead would resolve to Tessera's own BLAS drop-in when that is LD_PRELOADed (and it
 * forwards to tsr_gemm: infinite recursion); a handle lookup only sees the vendor library.
 * The library is not linked into libtessera, so it costs nothing unless the vendor path runs.
 */
#if TSR_HAVE_VENDOR_BLAS && defined(TSR_OMP_VENDOR_BLAS_LIB)
/* CBLAS enumerators (values fixed by the CBLAS standard, so no cblas.h is needed). */
enum { TSR__CBLAS_ROW_MAJOR = 101, TSR__CBLAS_NO_TRANS = 111, TSR__CBLAS_TRANS = 112 };
typedef void (*tsr__cblas_sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
                                    const float *, int, float, float *, int);
typedef void (*tsr__cblas_dgemm_fn)(int, int, int, int, int, int, double, const double *, int,
                                    const double *, int, double, double *, int);
static pthread_once_t tsr__vendor_once = PTHREAD_ONCE_INIT;
static tsr__cblas_sgemm_fn tsr__vendor_sgemm;
static tsr__cblas_dgemm_fn tsr__vendor_dgemm;
static char tsr__vendor_error[256];

static void tsr__vendor_load(void) {
  const char *names[] = {TSR_OMP_VENDOR_BLAS_LIB, TSR_OMP_VENDOR_BLAS_PATH};
  void *h = NULL;
  for (int i = 0; i < 2 && !h; ++i)
    h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(tsr__vendor_error, sizeof tsr__vendor_error, "%s", e ? e : "dlopen failed");
    return;
  }
  /* dlsym returns void *; converting through memcpy keeps ISO C pedantic mode quiet. */
  void *s = dlsym(h, "cblas_sgemm"), *d = dlsym(h, "cblas_dgemm");
  if (!s || !d) {
    snprintf(tsr__vendor_error, sizeof tsr__vendor_error, "%s has no cblas_sgemm/cblas_dgemm",
             TSR_OMP_VENDOR_BLAS_LIB);
    dlclose(h);
    return;
  }
  memcpy(&tsr__vendor_sgemm, &s, sizeof s);
  memcpy(&tsr__vendor_dgemm, &d, sizeof d);
  /* The handle stays open for the life of the process. */
}

static tsr_status tsr__gemm_vendor(const tsr__gemm_args *g) {
  pthread_once(&tsr__vendor_once, tsr__vendor_load);
  if (!tsr__vendor_sgemm || !tsr__vendor_dgemm)
    return tsr__set_error(TSR_ERR_UNSUPPORTED, "tsr_gemm",
                          "the vendor CBLAS (%s) cannot be loaded: %s", TSR_OMP_VENDOR_BLAS_LIB,
                          tsr__vendor_error);
  const int64_t lim = 2147483647;
  if (g->m > lim || g->n > lim || g->k > lim || g->lda > lim || g->ldb > lim || g->ldc > lim)
    return tsr__set_error(TSR_ERR_UNSUPPORTED, "tsr_gemm",
                          "a size or leading dimension exceeds the 32-bit CBLAS interface "
                          "(m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld)",
                          (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->lda,
                          (long long)g->ldb, (long long)g->ldc);
  const int ta = g->trans_a ? TSR__CBLAS_TRANS : TSR__CBLAS_NO_TRANS;
  const int tb = g->trans_b ? TSR__CBLAS_TRANS : TSR__CBLAS_NO_TRANS;
  if (g->dtype == TSR_F32)
    tsr__vendor_sgemm(TSR__CBLAS_ROW_MAJOR, ta, tb, (int)g->m, (int)g->n, (int)g->k,
                      (float)g->alpha, g->a, (int)g->lda, g->b, (int)g->ldb, (float)g->beta, g->c,
                      (int)g->ldc);
  else
    tsr__vendor_dgemm(TSR__CBLAS_ROW_MAJOR, ta, tb, (int)g->m, (int)g->n, (int)g->k, g->alpha, g->a,
                      (int)g->lda, g->b, (int)g->ldb, g->beta, g->c, (int)g->ldc);
  return TSR_OK;
}
#endif

/* ---------------------------------------------------------------- entry --------------- */

tsr_status tsr__omp_gemm(tsr_device dev, const tsr__gemm_args *args) {
  (void)dev;
  const tsr__gemm_args *g = args;
  if (g->dtype != TSR_F32 && g->dtype != TSR_F64)
    return tsr__set_error(TSR_ERR_UNSUPPORTED, "tsr_gemm",
                          "the CPU GEMM supports f32 and f64, not dtype %d", (int)g->dtype);
  if (g->path == TSR_GEMM_VENDOR) {
#if TSR_HAVE_VENDOR_BLAS && defined(TSR_OMP_VENDOR_BLAS_LIB)
    if (g->m == 0 || g->n == 0) return TSR_OK;
    return tsr__gemm_vendor(g);
#else
    return tsr__set_error(TSR_ERR_UNSUPPORTED, "tsr_gemm",
                          "the vendor GEMM path is not built for the CPU (configure with "
                          "-DTESSERA_WITH_VENDOR_BLAS=ON and a CBLAS such as OpenBLAS)");
#endif
  }
  if (g->m == 0 || g->n == 0) return TSR_OK;
  if (g->alpha == 0 || g->k == 0) {
    tsr__gemm_scale(g);
    return TSR_OK;
  }
  return tsr__gemm_native(g);
}
