/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Threading of the CPU GEMM: its own thread pool, the waits of the work hand-out
 * (tsr__gemm_sync, gemm.h) and the adaptive decision whether a call should use threads at all.
 *
 * Why a pool of our own rather than an OpenMP parallel region: at a region's end the caller
 * waits for every team thread, including one the OS has not yet scheduled. Measured on the
 * 2-core development VM (AMD EPYC Zen 5): 512^3 sgemm on 2 threads ran at 420 GFLOP/s back to
 * back but, with 100 ms pauses between calls (an application doing other work in between),
 * at 34-40 GFLOP/s (about 8 ms per call, waiting for libgomp's sleeping worker) with the default
 * wait policy and 200 with OMP_WAIT_POLICY=passive, one thread's rate. Here the caller posts a
 * job, starts on it at once, and pool threads join while tickets remain; at the end the caller
 * closes the job with one atomic operation and waits only for the threads that joined, which
 * are running. A condition variable wakes a sleeping pool thread in about 20 microseconds on
 * that VM. (OpenBLAS and BLIS keep their own thread servers too.)
 *
 * Pool threads poll for a while after a job (tsr__pool_spin_ns, 100 ms by default: pause, then
 * sched_yield, so that calls in quick succession find them awake), then sleep on a condition
 * variable: an idle library takes no CPU time from the application or other processes. Their
 * signals are blocked, so signal handlers run on the application's threads. After fork() the child
 * starts with an empty pool. The thread count is the caller's: omp_get_max_threads()
 * (OMP_NUM_THREADS, omp_set_num_threads).
 *
 * The waits spin briefly, then sched_yield() (as OpenBLAS's threads do), which behaves on an
 * idle machine and on one with more runnable threads than cores, where a spinning thread keeps
 * the core from the thread it waits for.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>

#include "omp/gemm/gemm_tune.h"

void tsr__gemm_sync_init(tsr__gemm_sync *s) {
  s->caller_work_ns = 0;
  atomic_init(&s->next, 0);
  atomic_init(&s->bdone[0], 0);
  atomic_init(&s->bdone[1], 0);
  atomic_init(&s->udone, 0);
  atomic_init(&s->work_ns, 0);
}

static void tsr__gemm_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

void tsr__gemm_wait_at_least(_Atomic int64_t *v, int64_t target) {
  for (int i = 0; atomic_load(v) < target; ++i) {
    if (i < 256)
      tsr__gemm_relax();
    else
      sched_yield();
  }
}

/* ---------------------------------------------------------------- pool ---------------- */

/* How long an idle pool thread keeps polling for the next job before it sleeps (nanoseconds):
   100 ms by default (Intel's OpenMP runtime: KMP_BLOCKTIME 200 ms; OpenBLAS's threads:
   2^28 TSC cycles), 0 with OMP_WAIT_POLICY=passive, unbounded with OMP_WAIT_POLICY=active.
   Polling calls sched_yield(), so a runnable thread on the same core takes precedence. Why
   poll at all: waking a sleeping thread took 0.4-4 ms on the development VM (the idle vCPU
   notices at its next timer tick; polling in 20-200 us naps did the same), against 2 us for a
   polling one, and a 512^3 sgemm on 2 threads takes 0.6 ms. */
#define TSR__POOL_SPIN_DEFAULT_NS 100000000
static int64_t tsr__pool_spin_ns;

/* state: job generation << 32 | TSR__POOL_CLOSED | threads joined (low 31 bits). */
#define TSR__POOL_CLOSED ((uint64_t)1 << 31)
#define TSR__POOL_JOINED ((uint64_t)TSR__POOL_CLOSED - 1)

typedef struct tsr__gemm_pool {
  pthread_mutex_t run_lock; /* held by the caller of the current job */
  pthread_mutex_t sleep_lock;
  pthread_cond_t wake;
  int threads;            /* pool threads started (under run_lock) */
  uint32_t gen;           /* generation of the last job posted (under run_lock) */
  _Atomic uint64_t state; /* see above */
  atomic_int max_join;    /* threads the current job takes besides its caller */
  _Atomic int64_t left;   /* threads that joined the current job and finished it */
  atomic_int sleepers;    /* threads waiting on `wake` */
  atomic_bool woke;       /* the last job was posted to sleeping or newly started threads */
  void (*_Atomic fn)(void *, int);
  void *_Atomic arg;
} tsr__gemm_pool;

static tsr__gemm_pool tsr__pool = {
    .run_lock = PTHREAD_MUTEX_INITIALIZER,
    .sleep_lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .state = TSR__POOL_CLOSED,
};
static pthread_once_t tsr__pool_once = PTHREAD_ONCE_INIT;

/* In a forked child only the forking thread exists: start over with no pool threads (the
   parent's job, if one ran on another thread, is not the child's). */
static void tsr__pool_atfork_child(void) {
  pthread_mutex_init(&tsr__pool.run_lock, NULL);
  pthread_mutex_init(&tsr__pool.sleep_lock, NULL);
  pthread_cond_init(&tsr__pool.wake, NULL);
  tsr__pool.threads = 0;
  atomic_store(&tsr__pool.state, (uint64_t)tsr__pool.gen << 32 | TSR__POOL_CLOSED);
  atomic_store(&tsr__pool.sleepers, 0);
}

static void tsr__pool_init(void) {
  const int policy = tsr__env_choice(TSR__ENV_OMP_WAIT_POLICY); /* "passive|active", unset -1 */
  tsr__pool_spin_ns = policy == 0 ? 0 : policy == 1 ? INT64_MAX : TSR__POOL_SPIN_DEFAULT_NS;
  pthread_atfork(NULL, NULL, tsr__pool_atfork_child);
}

static uint32_t tsr__pool_gen(uint64_t st) {
  return (uint32_t)(st >> 32);
}

/* Waits until a job newer than `seen` is posted: polls for tsr__pool_spin_ns, then sleeps. */
static void tsr__pool_wait_job(uint32_t seen) {
  const int64_t start = tsr__now_ns();
  for (int i = 1;; ++i) {
    if (tsr__pool_gen(atomic_load_explicit(&tsr__pool.state, memory_order_acquire)) != seen) return;
    if (i < 256) {
      tsr__gemm_relax();
    } else {
      if ((i & 15) == 0 && tsr__now_ns() - start >= tsr__pool_spin_ns) break;
      sched_yield();
    }
  }
  pthread_mutex_lock(&tsr__pool.sleep_lock);
  atomic_fetch_add(&tsr__pool.sleepers, 1);
  /* seq_cst with the poster's store of state, then load of sleepers: either this load sees
     the new job or the poster sees a sleeper and broadcasts under sleep_lock. */
  while (tsr__pool_gen(atomic_load(&tsr__pool.state)) == seen)
    pthread_cond_wait(&tsr__pool.wake, &tsr__pool.sleep_lock);
  atomic_fetch_sub(&tsr__pool.sleepers, 1);
  pthread_mutex_unlock(&tsr__pool.sleep_lock);
}

static void *tsr__pool_thread(void *unused) {
  (void)unused;
  uint32_t seen = 0; /* jobs start at generation 1: a new thread may join the current one */
  for (;;) {
    uint64_t st = atomic_load_explicit(&tsr__pool.state, memory_order_acquire);
    if (tsr__pool_gen(st) == seen) {
      tsr__pool_wait_job(seen);
      continue;
    }
    seen = tsr__pool_gen(st);
    /* Join while the job is open and has room; the CAS fails if the caller closed it (or
       posted another) meanwhile. fn and arg are read only after joining: the caller cannot
       close this job's successor before this thread has left. */
    while (!(st & TSR__POOL_CLOSED) &&
           (int)(st & TSR__POOL_JOINED) < atomic_load(&tsr__pool.max_join)) {
      if (atomic_compare_exchange_weak(&tsr__pool.state, &st, st + 1)) {
        const int slot = (int)(st & TSR__POOL_JOINED) + 1;
        void (*fn)(void *, int) = atomic_load(&tsr__pool.fn);
        fn(atomic_load(&tsr__pool.arg), slot);
        atomic_fetch_add(&tsr__pool.left, 1);
        break;
      }
      if (tsr__pool_gen(st) != seen) break;
    }
  }
  return NULL;
}

/* Starts pool threads until there are `want` (under run_lock); fewer if the system refuses. */
static void tsr__pool_grow(int want) {
  if (tsr__pool.threads >= want) return;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited: pool threads take no signals */
  while (tsr__pool.threads < want) {
    pthread_t t;
    if (pthread_create(&t, &attr, tsr__pool_thread, NULL) != 0) break;
    ++tsr__pool.threads;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
}

int tsr__gemm_pool_run(int nt, const tsr__gemm_tuning *t, void (*fn)(void *arg, int slot),
                       void *arg) {
  if (nt > 1) pthread_once(&tsr__pool_once, tsr__pool_init);
  if (nt <= 1 || pthread_mutex_trylock(&tsr__pool.run_lock) != 0) {
    fn(arg, 0);
    return 1;
  }
  const int had = tsr__pool.threads;
  tsr__pool_grow(nt - 1);
  const int max_join = nt - 1 < tsr__pool.threads ? nt - 1 : tsr__pool.threads;
  atomic_store(&tsr__pool.fn, fn);
  atomic_store(&tsr__pool.arg, arg);
  atomic_store(&tsr__pool.max_join, max_join);
  atomic_store(&tsr__pool.left, 0);
  const uint32_t gen = ++tsr__pool.gen ? tsr__pool.gen : ++tsr__pool.gen; /* never 0 */
  atomic_store(&tsr__pool.state, (uint64_t)gen << 32);
  const bool sleeping = atomic_load(&tsr__pool.sleepers) > 0;
  /* Threads started for this job pay their start-up as sleeping ones pay their wake-up. */
  atomic_store_explicit(&tsr__pool.woke, sleeping || tsr__pool.threads > had, memory_order_relaxed);
  if (sleeping) {
    pthread_mutex_lock(&tsr__pool.sleep_lock);
    pthread_cond_broadcast(&tsr__pool.wake);
    pthread_mutex_unlock(&tsr__pool.sleep_lock);
  }
  if (t && t->full_team) {
    /* Tests: let every pool thread join first (at most 2 s), so several threads run. */
    const int64_t until = tsr__now_ns() + 2000000000;
    while ((int)(atomic_load(&tsr__pool.state) & TSR__POOL_JOINED) < max_join &&
           tsr__now_ns() < until)
      sched_yield();
  }
  fn(arg, 0);
  const uint64_t st = atomic_fetch_or(&tsr__pool.state, TSR__POOL_CLOSED);
  const int joined = (int)(st & TSR__POOL_JOINED);
  tsr__gemm_wait_at_least(&tsr__pool.left, joined);
  pthread_mutex_unlock(&tsr__pool.run_lock);
  return joined + 1;
}

/*
 * Whether a call should use its threads, learned from the calls before it. A thread that never
 * joins costs the caller nothing (the pool above), but on a machine with more runnable threads
 * than cores a thread that joined can lose its core for a scheduler time slice while it holds
 * a unit, and the caller then waits for it (with OpenMP regions, measured: 256^3 dgemm, 2
 * threads, load average 6-9 on 2 cores: 8-50 ms per call instead of 0.4 ms). So each parallel
 * call measures its overhead (its time minus the caller's own busy time: waits for threads
 * that joined, never for one that did not) and each call its time per flop; a call then runs
 * in parallel only when the time threads would save, serial_time * (1 - 1/threads), exceeds
 * twice the recent overhead. Thread count does not change results: every C element is
 * computed by one thread in the same order. Relaxed races between concurrent callers only blur
 * the estimates.
 *
 * A high overhead is re-measured (a probe: the call runs in parallel anyway) once it is older
 * than the re-probe wait, and one fast measurement is trusted at once, so the library recovers
 * when the machine quietens. The wait starts at max(50 ms, 5 x overhead) and doubles with each
 * probe, up to max(1 s, 100 x overhead), where a probe costs at most ~1% of the time; a
 * measurement fast enough to replace the mean (the machine has quietened) halves it. Halves,
 * not resets: on a machine that stays loaded a probe is now and then lucky, the calls after
 * it run in parallel until a slow one, and a reset would repeat that every 50 ms. Contention
 * is often brief: another library's threads polling for ~100 ms after its last call (measured:
 * scipy-openblas32 0.3.34 after sgemm 512^3 calls made Tessera's calls take 5-17 ms instead
 * of 4.3 on 2 cores), a build finishing. With a fixed 1 s wait Tessera then ran on one thread
 * for up to a second after the contention ended.
 */
#define TSR__GEMM_REPROBE_MIN_NS 50000000
#define TSR__GEMM_REPROBE_MAX_NS 1000000000
static tsr__gemm_adapt tsr__gemm_adapt_state;

/* Running mean of two; fast_down: a value below a quarter of the mean replaces it (a fast
   parallel run cannot happen by accident on a crowded machine; a slow one can on a quiet
   machine, for a moment). Returns whether x replaced the mean. */
static bool tsr__gemm_learn(_Atomic int64_t *v, int64_t x, bool fast_down) {
  const int64_t old = atomic_load_explicit(v, memory_order_relaxed);
  const bool replace = old <= 0 || (fast_down && x < old / 4);
  atomic_store_explicit(v, replace ? x : (old + x) / 2, memory_order_relaxed);
  return replace;
}

/* The rules above at now (< 0: the clock was not read); claim: act on a probe the answer grants
   (the warm probe taken, the re-probe wait doubled), as the call then runs on its threads.
   Without claim the answer changes nothing but a warm mark whose window has passed. */
static inline bool tsr__gemm_adapt_answer(tsr__gemm_adapt *s, double flops, int nt, int64_t now,
                                          bool claim) {
  const int64_t ovh = atomic_load_explicit(&s->overhead_ns, memory_order_relaxed);
  const int64_t fs = atomic_load_explicit(&s->fs_per_flop, memory_order_relaxed);
  if (ovh <= 0 || fs <= 0) return true;
  const int64_t warm = atomic_load_explicit(&s->warm_probe_before, memory_order_relaxed);
  if (warm > 0) {
    if (now < 0) now = tsr__now_ns(); /* a warm probe is marked: its window is short */
    if (now >= warm) {
      /* Its window has passed: retired (it grants nothing), so that calls without the clock
         stop reading it. */
      atomic_compare_exchange_strong(&s->warm_probe_before, &(int64_t){warm}, 0);
    } else if (!claim) {
      return true;
    } else if (atomic_compare_exchange_strong(&s->warm_probe_before, &(int64_t){warm}, 0)) {
      atomic_store_explicit(&s->warm_probe, true, memory_order_relaxed);
      return true; /* the warm probe (tsr__gemm_adapt_cold) */
    }
  }
  const double saving_ns = flops * (double)fs * 1e-6 * (1.0 - 1.0 / nt);
  if (saving_ns > 2.0 * (double)ovh) return true;
  /* Unread clock: a re-probe that is due waits for a call that reads it. */
  if (now < 0) return false;
  const int64_t reprobe = atomic_load_explicit(&s->reprobe_ns, memory_order_relaxed);
  const int64_t longest = tsr__max64(TSR__GEMM_REPROBE_MAX_NS, 100 * ovh);
  int64_t wait = tsr__max64(reprobe, tsr__max64(TSR__GEMM_REPROBE_MIN_NS, 5 * ovh));
  if (wait > longest) wait = longest;
  if (now - atomic_load_explicit(&s->overhead_at, memory_order_relaxed) <= wait) return false;
  if (claim)
    atomic_store_explicit(&s->reprobe_ns, wait > longest / 2 ? longest : 2 * wait,
                          memory_order_relaxed);
  return true;
}

bool tsr__gemm_adapt_parallel(tsr__gemm_adapt *s, double flops, int nt, int64_t now) {
  return tsr__gemm_adapt_answer(s, flops, nt, now, true);
}

bool tsr__gemm_adapt_serial(tsr__gemm_adapt *s, double flops, int nt, int64_t now) {
  return !tsr__gemm_adapt_answer(s, flops, nt, now, false);
}

void tsr__gemm_adapt_learn_parallel(tsr__gemm_adapt *s, int64_t region_ns, int64_t caller_work_ns,
                                    int64_t work_ns, double flops, int64_t now) {
  if (work_ns <= 0) return;
  /* The caller's time not spent working: what the call lost to its threads. */
  int64_t ovh = region_ns - caller_work_ns;
  if (ovh < 1000) ovh = 1000;
  /* A warm probe's overhead is what repeated calls pay: a lower one replaces the mean, and
     arms the next warm probe (threads that have just woken may still be settling; measured on
     Zen 4, 2 vCPUs: sgemm 128^3 on two threads after a spell of tiny calls took 286 us on the
     cold call, 50 on the warm probe and 21 once settled, and one warm probe left it serial at
     38 us a call). */
  if (atomic_exchange_explicit(&s->warm_probe, false, memory_order_relaxed) &&
      ovh < atomic_load_explicit(&s->overhead_ns, memory_order_relaxed)) {
    atomic_store_explicit(&s->overhead_ns, 0, memory_order_relaxed);
    if (atomic_fetch_sub_explicit(&s->warm_left, 1, memory_order_relaxed) > 1)
      atomic_store_explicit(&s->warm_probe_before,
                            atomic_load_explicit(&s->warm_until, memory_order_relaxed),
                            memory_order_relaxed);
  }
  if (tsr__gemm_learn(&s->overhead_ns, ovh, true))
    atomic_store_explicit(&s->reprobe_ns,
                          atomic_load_explicit(&s->reprobe_ns, memory_order_relaxed) / 2,
                          memory_order_relaxed);
  atomic_store_explicit(&s->overhead_at, now, memory_order_relaxed);
  tsr__gemm_learn(&s->fs_per_flop, (int64_t)((double)work_ns * 1e6 / flops) + 1, false);
}

/* Pool threads poll for TSR__POOL_SPIN_DEFAULT_NS after a job; a call within a fifth of that
   finds them awake. At most TSR__GEMM_WARM_PROBES warm probes follow one cold call. */
#define TSR__GEMM_WARM_PROBE_NS (TSR__POOL_SPIN_DEFAULT_NS / 5)
#define TSR__GEMM_WARM_PROBES 3

void tsr__gemm_adapt_cold(tsr__gemm_adapt *s, int64_t now) {
  atomic_store_explicit(&s->warm_left, TSR__GEMM_WARM_PROBES, memory_order_relaxed);
  atomic_store_explicit(&s->warm_until, now + TSR__GEMM_WARM_PROBE_NS, memory_order_relaxed);
  atomic_store_explicit(&s->warm_probe_before, now + TSR__GEMM_WARM_PROBE_NS, memory_order_relaxed);
}

void tsr__gemm_adapt_learn_serial(tsr__gemm_adapt *s, int64_t ns, double flops) {
  tsr__gemm_learn(&s->fs_per_flop, (int64_t)((double)ns * 1e6 / flops) + 1, false);
}

bool tsr__gemm_worth_parallel(const tsr__gemm_tuning *t, double flops, int nt, int64_t now) {
  if (t && t->fixed_threads) return true;
  return tsr__gemm_adapt_parallel(&tsr__gemm_adapt_state, flops, nt, now);
}

bool tsr__gemm_surely_serial(double flops, int nt, int64_t now) {
  return tsr__gemm_adapt_serial(&tsr__gemm_adapt_state, flops, nt, now);
}

void tsr__gemm_learn_parallel(int64_t region_ns, int64_t caller_work_ns, int64_t work_ns,
                              double flops) {
  const int64_t now = tsr__now_ns();
  tsr__gemm_adapt_learn_parallel(&tsr__gemm_adapt_state, region_ns, caller_work_ns, work_ns, flops,
                                 now);
  /* The run just learned had to wake sleeping threads (tsr__gemm_pool_run): probe again while
     they poll, so that a wake-up is not mistaken for what every call costs. Measured on Zen 4
     (2 vCPUs, quiet): sgemm and dgemm 128^3 on two threads stayed on one (0.60x and 0.52x BLIS)
     because every re-probe found the threads asleep after the serial calls before it. */
  if (atomic_exchange_explicit(&tsr__pool.woke, false, memory_order_relaxed))
    tsr__gemm_adapt_cold(&tsr__gemm_adapt_state, now);
}

void tsr__gemm_learn_serial(int64_t ns, double flops) {
  tsr__gemm_adapt_learn_serial(&tsr__gemm_adapt_state, ns, flops);
}
