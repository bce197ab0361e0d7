/*
 * Threading of the CPU GEMM: the team's barrier and work counters, and the adaptive decision
 * whether a call should use its threads at all.
 *
 * Synchronization inside the parallel region, done with atomics rather than OpenMP barriers
 * and worksharing loops: libgomp's barriers spin (GOMP_SPINCOUNT, by default 300000 pauses,
 * about 20 ms on CPUs with a slow PAUSE) before sleeping, and on a machine with more runnable
 * threads than cores a spinning thread keeps the core from the thread it waits for, so each
 * barrier can cost a whole scheduler time slice. Measured on the shared 2-core development
 * machine: 256^3 dgemm on 2 threads took ~50 ms per call with omp barriers under load, 0.6 ms
 * with OMP_WAIT_POLICY=passive. These waits spin briefly, then sched_yield() (as OpenBLAS's
 * threads do), which behaves on an idle machine and on a busy one.
 */
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "omp/gemm_tune.h"

void tsr__gemm_sync_init(tsr__gemm_sync *s, int n) {
  s->n = n;
  atomic_init(&s->next[0], 0);
  atomic_init(&s->next[1], 0);
  for (int i = 0; i < 2; ++i) {
    atomic_init(&s->bnext[i], 0);
    atomic_init(&s->bdone[i], 0);
  }
  atomic_init(&s->arrived, 0);
  atomic_init(&s->phase, 0);
  atomic_init(&s->work_ns, 0);
}

int64_t tsr__gemm_now_ns(void) {
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
void tsr__gemm_barrier(tsr__gemm_sync *s, int *phase) {
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

void tsr__gemm_wait_at_least(_Atomic int64_t *v, int64_t target) {
  for (int i = 0; atomic_load(v) < target; ++i) {
    if (i < 256)
      tsr__gemm_relax();
    else
      sched_yield();
  }
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

bool tsr__gemm_worth_parallel(double flops, int nt) {
  if (!atomic_load_explicit(&tsr__gemm_adaptive, memory_order_relaxed)) return true;
  const int64_t ovh = atomic_load_explicit(&tsr__gemm_overhead_ns, memory_order_relaxed);
  const int64_t fs = atomic_load_explicit(&tsr__gemm_fs_per_flop, memory_order_relaxed);
  if (ovh <= 0 || fs <= 0) return true;
  const double saving_ns = flops * (double)fs * 1e-6 * (1.0 - 1.0 / nt);
  if (saving_ns > 2.0 * (double)ovh) return true;
  const int64_t age =
      tsr__gemm_now_ns() - atomic_load_explicit(&tsr__gemm_overhead_at, memory_order_relaxed);
  return age > 1000000000 && age > 100 * ovh;
}

/* The process's first parallel GEMM: libgomp creates its threads there (measured on the
   loaded 2-core machine: 46 ms for a 0.8 ms 512^3 sgemm), a cost paid once that must not
   count as the per-region overhead, or it keeps the following calls serial for seconds. */
static atomic_bool tsr__gemm_team_created;

void tsr__gemm_learn_parallel(int64_t region_ns, int64_t work_ns, int nt, double flops) {
  if (work_ns <= 0) return;
  if (!atomic_exchange(&tsr__gemm_team_created, true)) return;
  int64_t ovh = region_ns - work_ns / nt;
  if (ovh < 1000) ovh = 1000;
  tsr__gemm_learn(&tsr__gemm_overhead_ns, ovh, true);
  atomic_store_explicit(&tsr__gemm_overhead_at, tsr__gemm_now_ns(), memory_order_relaxed);
  tsr__gemm_learn(&tsr__gemm_fs_per_flop, (int64_t)((double)work_ns * 1e6 / flops) + 1, false);
}

void tsr__gemm_learn_serial(int64_t ns, double flops) {
  tsr__gemm_learn(&tsr__gemm_fs_per_flop, (int64_t)((double)ns * 1e6 / flops) + 1, false);
}
