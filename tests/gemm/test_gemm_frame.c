/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU GEMM, the frame's room (src/omp/gemm/frame/): sizes around every cache block (KC, MC,
 * NC) with 1, 2 and 3 threads (every pool thread joining each call, and as they come), calls
 * from threads, the GEMM's thread pool itself (and fork), the adaptive thread count, the vendor
 * path, the tiny lane, the progress hook, the error names of the backend entry, and a few cases
 * through the public tsr_gemm / tsr_matmul, against a float64 reference on random inputs.
 *
 * Run once per kernel (TSR_CPU_KERNEL, as test_gemm_kernels); a kernel the CPU lacks makes the
 * program exit 77 (skipped). The shared helpers are gemm_test.h.
 */
#include "gemm_test.h"

/* Just under/at/over KC, MC and NC (one large dimension at a time keeps this fast), through
   the packed path (the sup path, small and unpacked, has no cache blocks). */
static void test_cache_block_edges(void **state) {
  (void)state;
  tg_tuning.sup_mnk = 0;
  for (int d = 0; d < 2; ++d) {
    for (int t = 1; t <= 2; ++t) {
      tg_set_threads(t);
      const tsr__gemm_config cf = tg_cfg_of(tg_dtypes[d], t);
      const tsr__gemm_config *kr = &cf;
      for (int64_t e = -1; e <= 1; ++e) {
        tg_check_all_trans(tg_dtypes[d], kr->ker->mr + 1, kr->ker->nr + 3, kr->kc + e,
                           600 + (uint64_t)e);
        tg_check_all_trans(tg_dtypes[d], kr->mc + e, kr->ker->nr + 1, 9, 700 + (uint64_t)e);
        tg_check_all_trans(tg_dtypes[d], 3, kr->nc + e, 4, 800 + (uint64_t)e);
      }
      tg_check_all_trans(tg_dtypes[d], 2 * kr->ker->mr + 1, kr->ker->nr + 1, 2 * kr->kc + 3, 900);
      /* Several MC blocks and KC slices with beta != 0: C accumulates across slices. */
      tg_check_all_trans(tg_dtypes[d], kr->mc + kr->ker->mr + 1, 7, kr->kc + 7, 910);
      /* A shallow slice (one k slice, tiles along C's rows) over two whole sweeps of B's
         micro-panels and part of a third, the last tile partial (gemm_macro.c); NC widened to
         the whole n where the configuration's is narrower (else each NC block would hold less
         than two sweeps). */
      const int64_t ks = kr->kc < 200 ? kr->kc : 200;
      const int64_t sw = tsr__gemm_row_sweep(kr->ker, ks);
      const int64_t nsw = (2 * sw + 1) * kr->ker->nr + 5;
      tsr__gemm_config wide = cf;
      wide.nc = nsw > cf.nc ? (2 * sw + 2) * kr->ker->nr : cf.nc; /* one NC block */
      tg_tuning.config[d] = &wide;
      tg_check_all_trans(tg_dtypes[d], 2 * kr->ker->mr + 1, nsw, ks, 920);
      tg_tuning.config[d] = NULL;
    }
  }
  tg_tuning.sup_mnk = -1;
}

/* Large enough to run multi-threaded: square, short-wide (thread grid splits columns) and
   tall-skinny (splits rows), with 1, 2 and 3 threads (3 gives uneven splits). */
static void test_threaded_shapes(void **state) {
  (void)state;
  const int64_t shapes[][3] = {{97, 101, 103}, {20, 1500, 30}, {1500, 21, 30}, {120, 100, 230}};
  for (int d = 0; d < 2; ++d)
    for (int t = 1; t <= 3; ++t) {
      tg_set_threads(t);
      for (int s = 0; s < 4; ++s)
        tg_check_all_trans(tg_dtypes[d], shapes[s][0], shapes[s][1], shapes[s][2],
                           1000 + (uint64_t)(s * 10 + t));
    }
  /* With the adaptive thread count and the pool's usual hand-out (the defaults) too: each
     call may run on one thread or more, pool threads joining at any point. */
  tg_set_threads(2);
  tg_tuning.fixed_threads = false;
  tg_tuning.full_team = false;
  for (int r = 0; r < 3; ++r)
    tg_check_all_trans(TSR_F64, 97, 101, 103, 1100 + (uint64_t)r);
  tg_set_threads(3);
  tg_tuning.fixed_threads = true;
  for (int r = 0; r < 3; ++r)
    tg_check_all_trans(TSR_F32, 150, 70, 300, 1110 + (uint64_t)r);
  tg_tuning.full_team = true;
}

/* Calls from inside a parallel region run single-threaded, each thread with its own
   cached packing buffers. */
static void test_called_from_threads(void **state) {
  (void)state;
  tg_set_threads(2);
  int failures = 0;
#if defined(_OPENMP)
#pragma omp parallel for reduction(+ : failures) schedule(static, 1)
#endif
  for (int i = 0; i < 4; ++i)
    /* cmocka's asserts are not thread-safe: compare here, assert after. */
    failures += !tsr_test_native_gemm_ok(TSR_F64, 70 + i, 65, 80, 4000 + (uint64_t)i,
                                         4100 + (uint64_t)i, &tg_tuning);
  assert_int_equal(failures, 0);
}

/* ---------------------------------------------------------------- thread pool --------- */

/* A job of 4000 tickets: each ticket marked once, by whichever thread takes it; each slot
   used at most once per job. */
typedef struct pool_job {
  atomic_int next;
  atomic_int marks[4000];
  atomic_int slots[8];
  int sleep_us; /* per ticket, so that jobs overlap in time */
} pool_job;

static void pool_job_fn(void *arg, int slot) {
  pool_job *j = arg;
  if (slot >= 0 && slot < 8) atomic_fetch_add(&j->slots[slot], 1);
  for (;;) {
    const int t = atomic_fetch_add(&j->next, 1);
    if (t >= 4000) break;
    atomic_fetch_add(&j->marks[t], 1);
    if (j->sleep_us) {
      const struct timespec ts = {0, 1000L * j->sleep_us};
      nanosleep(&ts, NULL);
    }
  }
}

/* Checks one finished job run by `ran` threads; returns the number of defects. */
static int pool_job_defects(pool_job *j, int ran, int nt) {
  int bad = ran < 1 || ran > nt;
  for (int t = 0; t < 4000; ++t)
    bad += atomic_load(&j->marks[t]) != 1;
  for (int s = 0; s < 8; ++s)
    bad += atomic_load(&j->slots[s]) != (s < ran ? 1 : 0);
  return bad;
}

static void *pool_caller(void *arg) {
  pool_job *j = arg;
  const int ran = tsr__gemm_pool_run(3, &tg_tuning, pool_job_fn, j);
  return (void *)(intptr_t)pool_job_defects(j, ran, 3);
}

/* An adaptive thread-count state that has learned nothing. */
static void adapt_init(tsr__gemm_adapt *s) {
  atomic_init(&s->overhead_ns, 0);
  atomic_init(&s->overhead_at, 0);
  atomic_init(&s->fs_per_flop, 0);
  atomic_init(&s->reprobe_ns, 0);
  atomic_init(&s->warm_probe_before, 0);
  atomic_init(&s->warm_probe, false);
  atomic_init(&s->warm_until, 0);
  atomic_init(&s->warm_left, 0);
}

/* A probe that had to wake sleeping pool threads measured their wake-up: the next call while
   they poll (tsr__gemm_adapt_cold) probes again, and the overhead it measures, lower, is what
   the calls after it use; later calls pay no wake-up and stay on the threads. Without the warm
   probe a library that went serial stayed serial, every re-probe finding the threads asleep. */
static void test_adaptive_warm_probe(void **state) {
  (void)state;
  const int64_t ms = 1000000;
  const double flops = 4e6; /* one thread: 40 us, two would save 20 us */
  tsr__gemm_adapt s;
  adapt_init(&s);
  tsr__gemm_adapt_learn_serial(&s, 40000, flops);
  /* A cold probe: 60 us, the caller worked 20 (overhead 40 us, the threads' wake-up). */
  int64_t t = 1000 * ms;
  tsr__gemm_adapt_learn_parallel(&s, 60000, 20000, 20000, flops, t);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1 * ms)); /* no mark: serial */
  tsr__gemm_adapt_cold(&s, t);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1 * ms)); /* the warm probe */
  /* It measures 3 us: the mean is replaced, and the calls after it run on the threads. */
  tsr__gemm_adapt_learn_parallel(&s, 23000, 20000, 20000, flops, t + 1 * ms);
  assert_int_equal(atomic_load(&s.overhead_ns), 3000);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 2 * ms));
  /* One warm probe per mark, and only while the threads poll. */
  tsr__gemm_adapt_learn_parallel(&s, 100000, 20000, 20000, flops, t + 2 * ms);
  tsr__gemm_adapt_learn_parallel(&s, 100000, 20000, 20000, flops, t + 2 * ms);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 3 * ms));
  tsr__gemm_adapt_cold(&s, t + 3 * ms);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 40 * ms)); /* past the window */
  tsr__gemm_adapt_cold(&s, t + 40 * ms);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 41 * ms));
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 42 * ms)); /* used */
}

/* A state that learned one thread's 40 us for 4e6 flops, then a cold parallel call of
   cold_ns (the caller worked 20 us) at time t, marked cold. */
static void settle_start(tsr__gemm_adapt *s, int64_t cold_ns, int64_t t) {
  adapt_init(s);
  tsr__gemm_adapt_learn_serial(s, 40000, 4e6);
  tsr__gemm_adapt_learn_parallel(s, cold_ns, 20000, 20000, 4e6, t);
  tsr__gemm_adapt_cold(s, t);
}

/* Threads that have just woken may still be settling: a warm probe that measured less than the
   mean, but still too much, arms another, up to three per cold call and within its window.
   Before, the one warm probe left sgemm 128^3 on two threads serial after a spell of tiny
   calls (Zen 4: 286 us cold, 50 us warm, then 38 us a call serial against 21 in parallel). */
static void test_adaptive_warm_probes_settle(void **state) {
  (void)state;
  const int64_t ms = 1000000;
  const double flops = 4e6; /* one thread: 40 us, two would save 20 us */
  tsr__gemm_adapt s;
  const int64_t t = 1000 * ms;
  /* The cold call: overhead 266 us. */
  settle_start(&s, 286000, t);
  /* Warm probe 1: 30 us, lower (it replaces the mean) but still more than the saving. */
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1 * ms));
  tsr__gemm_adapt_learn_parallel(&s, 50000, 20000, 20000, flops, t + 1 * ms);
  assert_int_equal(atomic_load(&s.overhead_ns), 30000);
  /* Warm probe 2 (armed by the first): 1 us, and the calls after it run on the threads. */
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 2 * ms));
  tsr__gemm_adapt_learn_parallel(&s, 21000, 20000, 20000, flops, t + 2 * ms);
  assert_int_equal(atomic_load(&s.overhead_ns), 1000);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 3 * ms));
  /* At most three per cold call: a machine that stays slow is not probed on every call. */
  settle_start(&s, 900000, t);
  int64_t ovh = 880000;
  for (int i = 0; i < 3; ++i) {
    assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + (1 + i) * ms));
    ovh /= 2; /* lower each time, still far above the 20 us saved */
    tsr__gemm_adapt_learn_parallel(&s, 20000 + ovh, 20000, 20000, flops, t + (1 + i) * ms);
  }
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 5 * ms));
  /* And a warm probe that measured no less arms none. */
  settle_start(&s, 120000, t);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1 * ms));
  tsr__gemm_adapt_learn_parallel(&s, 150000, 20000, 20000, flops, t + 1 * ms);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 2 * ms));
  /* Nor one past the cold call's window. */
  settle_start(&s, 286000, t);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1 * ms));
  tsr__gemm_adapt_learn_parallel(&s, 50000, 20000, 20000, flops, t + 1 * ms);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 40 * ms));
}

/* The adaptive thread count's rules on a state of the test's own and a clock it sets:
   serial while the overhead it learned outweighs what threads save; re-probed after 50 ms,
   then at doubling waits up to max(1 s, 100 x overhead), never longer; one fast probe brings
   the threads back at once and halves the wait. */
static void test_adaptive_reprobe(void **state) {
  (void)state;
  const int64_t ms = 1000000;
  const double flops = 1e8;
  tsr__gemm_adapt s;
  adapt_init(&s);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, 0)); /* nothing learned */
  /* One thread: 1 ms for 1e8 flops, so two threads would save 0.5 ms. */
  tsr__gemm_adapt_learn_serial(&s, 1 * ms, flops);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, 0));
  /* A contended parallel call: 11 ms, of which the caller worked 1 ms (overhead 10 ms). */
  int64_t t = 1000 * ms;
  tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1 * ms));
  /* A call large enough that threads save more than twice the overhead still runs on them. */
  assert_true(tsr__gemm_adapt_parallel(&s, 100 * flops, 2, t + 1 * ms));
  /* Probes while the contention lasts: after 50, 100, 200, 400, 800 ms, then every 1 s. */
  const int64_t waits[] = {50, 100, 200, 400, 800, 1000, 1000, 1000};
  for (size_t i = 0; i < sizeof waits / sizeof waits[0]; ++i) {
    assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + (waits[i] - 1) * ms));
    assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + waits[i] * ms));
    t += waits[i] * ms + 1;
    assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t)); /* the probe */
    tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  }
  /* A higher overhead (40 ms): the waits go on doubling past 1 s, up to 100 x the overhead
     (a probe then costs ~1%), never beyond. */
  for (int i = 0; i < 3; ++i)
    tsr__gemm_adapt_learn_parallel(&s, 41 * ms, 1 * ms, 1 * ms, flops, t);
  const int64_t at_least[] = {1000, 2000, 3000, 3000};
  for (size_t i = 0; i < sizeof at_least / sizeof at_least[0]; ++i) {
    const int64_t ovh = atomic_load(&s.overhead_ns);
    assert_true(ovh > 30 * ms && ovh < 41 * ms);
    assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + at_least[i] * ms));
    t += 100 * ovh + 1;
    assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t));
    tsr__gemm_adapt_learn_parallel(&s, 41 * ms, 1 * ms, 1 * ms, flops, t);
  }
  /* The overhead falls back (10 ms, too slowly to replace the mean): the wait, 4 s after the
     doubling, shrinks with it to 100 x the new overhead. */
  for (int i = 0; i < 3; ++i)
    tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  const int64_t low = atomic_load(&s.overhead_ns);
  assert_true(low > 10 * ms && low < 20 * ms);
  t += 100 * low + 1;
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t));
  tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  /* The machine has quietened: the probe measures 20 us; threads again at once, and the wait
     halves: the next contention is re-probed sooner. */
  const int64_t before = atomic_load(&s.reprobe_ns);
  assert_true(before > 1000 * ms);
  tsr__gemm_adapt_learn_parallel(&s, 1 * ms + 20000, 1 * ms, 1 * ms, flops, t);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + 1));
  assert_int_equal(atomic_load(&s.reprobe_ns), before / 2);
  t += 10 * ms;
  tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, t + before / 2));
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, t + before / 2 + 1));
}

/* The answer read without the clock (now < 0: the callers read it on one call in eight) and
   without claiming a probe (tsr__gemm_adapt_serial, the tiny lane's question): a re-probe that
   is due waits for a call with the time; a marked warm probe is seen either way; asking without
   claiming changes nothing, so the call that then asks tsr__gemm_adapt_parallel gets the probe;
   an expired mark is retired. */
static void test_adaptive_unread_clock(void **state) {
  (void)state;
  const int64_t ms = 1000000;
  const double flops = 1e8;
  tsr__gemm_adapt s;
  adapt_init(&s);
  /* Nothing learned: threads, with the clock or without. */
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, -1));
  assert_false(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  /* 1 ms a call on one thread, 10 ms of overhead on two: one thread. */
  const int64_t t = 1000 * ms;
  tsr__gemm_adapt_learn_serial(&s, 1 * ms, flops);
  tsr__gemm_adapt_learn_parallel(&s, 11 * ms, 1 * ms, 1 * ms, flops, t);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, -1));
  assert_true(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  assert_true(tsr__gemm_adapt_serial(&s, flops, 2, t + 1 * ms));
  /* A call that saves more than twice the overhead: threads, no clock needed. */
  assert_true(tsr__gemm_adapt_parallel(&s, 100 * flops, 2, -1));
  assert_false(tsr__gemm_adapt_serial(&s, 100 * flops, 2, -1));
  /* The re-probe due after 50 ms: not without the clock; asked without claiming it, twice, it
     stays due and the wait unchanged; claimed once, the wait doubles. */
  const int64_t due = t + 50 * ms + 1;
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, -1));
  assert_true(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  const int64_t wait0 = atomic_load(&s.reprobe_ns);
  assert_false(tsr__gemm_adapt_serial(&s, flops, 2, due));
  assert_false(tsr__gemm_adapt_serial(&s, flops, 2, due));
  assert_int_equal(atomic_load(&s.reprobe_ns), wait0);
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, due));
  assert_int_equal(atomic_load(&s.reprobe_ns), 100 * ms);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, due + 1));
  /* A warm probe marked (its window far ahead of the clock): seen with the clock unread, not
     taken by the question that does not claim, taken once by the one that does. */
  tsr__gemm_adapt_cold(&s, tsr__now_ns() + 3600 * 1000 * ms);
  assert_false(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  assert_false(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  assert_false(atomic_load(&s.warm_probe));
  assert_true(tsr__gemm_adapt_parallel(&s, flops, 2, -1));
  assert_true(atomic_load(&s.warm_probe));
  assert_true(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, -1));
  /* A mark whose window has passed grants nothing and is retired by either question, so that
     the calls after it do not read the clock for it. */
  tsr__gemm_adapt_cold(&s, t); /* its window ended at t + 20 ms */
  assert_true(atomic_load(&s.warm_probe_before) > 0);
  assert_true(tsr__gemm_adapt_serial(&s, flops, 2, due + 2 * ms));
  assert_int_equal(atomic_load(&s.warm_probe_before), 0);
  tsr__gemm_adapt_cold(&s, t);
  assert_false(tsr__gemm_adapt_parallel(&s, flops, 2, due + 2 * ms));
  assert_int_equal(atomic_load(&s.warm_probe_before), 0);
  /* With the clock unread, a mark is judged on the clock, not granted: on the process clock, 1 s
     of overhead learned just now (no re-probe for 5 s) and a mark whose window ended ~1 s ago. */
  adapt_init(&s);
  const int64_t now = tsr__now_ns();
  tsr__gemm_adapt_learn_serial(&s, 1 * ms, flops);
  tsr__gemm_adapt_learn_parallel(&s, 1001 * ms, 1 * ms, 1 * ms, flops, now);
  tsr__gemm_adapt_cold(&s, now - 1000 * ms);
  assert_true(tsr__gemm_adapt_serial(&s, flops, 2, -1));
  assert_int_equal(atomic_load(&s.warm_probe_before), 0);
}

/* The pool: every slot once, the caller alone finishes a job nobody joins, the full team
   joins when asked to wait for it, two callers at once (one runs alone), and a forked child
   starts its own pool. */
static void test_thread_pool(void **state) {
  (void)state;
  pool_job *j = calloc(3, sizeof *j);
  assert_non_null(j);
  /* One thread: the caller, slot 0. */
  assert_int_equal(tsr__gemm_pool_run(1, &tg_tuning, pool_job_fn, &j[0]), 1);
  assert_int_equal(pool_job_defects(&j[0], 1, 1), 0);
  /* Full team of 4 (pool threads are started on demand). */
  memset(j, 0, sizeof *j);
  j[0].sleep_us = 2;
  tg_tuning.full_team = true;
  int ran = tsr__gemm_pool_run(4, &tg_tuning, pool_job_fn, &j[0]);
  assert_int_equal(ran, 4);
  assert_int_equal(pool_job_defects(&j[0], ran, 4), 0);
  /* Without waiting: whoever joins, every ticket exactly once. */
  tg_tuning.full_team = false;
  for (int r = 0; r < 20; ++r) {
    memset(j, 0, sizeof *j);
    ran = tsr__gemm_pool_run(1 + r % 4, &tg_tuning, pool_job_fn, &j[0]);
    assert_int_equal(pool_job_defects(&j[0], ran, 1 + r % 4), 0);
  }
  /* Two callers at once. */
  memset(j, 0, 2 * sizeof *j);
  j[0].sleep_us = j[1].sleep_us = 5;
  pthread_t th[2];
  for (int i = 0; i < 2; ++i)
    assert_int_equal(pthread_create(&th[i], NULL, pool_caller, &j[i]), 0);
  for (int i = 0; i < 2; ++i) {
    void *defects = NULL;
    assert_int_equal(pthread_join(th[i], &defects), 0);
    assert_int_equal((int)(intptr_t)defects, 0);
  }
  /* A forked child: its own pool, a full team, a correct threaded GEMM. */
  fflush(NULL);
  const pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    tg_tuning.full_team = true;
    memset(&j[2], 0, sizeof j[2]);
    const int r = tsr__gemm_pool_run(3, &tg_tuning, pool_job_fn, &j[2]);
    int bad = r != 3 || pool_job_defects(&j[2], r, 3) != 0;
    tg_set_threads(2);
    bad += !tsr_test_native_gemm_ok(TSR_F64, 150, 140, 130, 4200, 4300, &tg_tuning);
    _exit(bad ? 1 : 0);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  tg_tuning.full_team = true;
  free(j);
}

/* The vendor path: correct results when built, TSR_ERR_UNSUPPORTED otherwise. */
static void test_vendor_path(void **state) {
  (void)state;
  for (int d = 0; d < 2; ++d) {
    gemm_case gc = {.dtype = tg_dtypes[d],
                    .ta = true,
                    .tb = false,
                    .m = 45,
                    .n = 38,
                    .k = 27,
                    .alpha = 0.5,
                    .beta = 2.0,
                    .pad_a = 1,
                    .pad_c = 4,
                    .path = TSR_GEMM_VENDOR};
#if TSR_HAVE_VENDOR_BLAS
    TSR_ASSERT_OK(tg_run_case(&gc, 5000));
    gc.ta = false;
    gc.tb = true;
    gc.beta = 0.0;
    gc.nan_c = true;
    TSR_ASSERT_OK(tg_run_case(&gc, 5001));
#else
    TSR_ASSERT_STATUS(tg_run_case(&gc, 5000), TSR_ERR_UNSUPPORTED, "vendor");
#endif
  }
}

/* A public function's name, as the API context, is what the backend's errors carry (the one
   error rule, core/internal.h); and no registered kernel's tile exceeds the macro-kernel's
   edge tile. */
static tsr_status tsr_fake_public_gemm(const tsr__gemm_args *g) {
  TSR_API_ENTRY();
  return tsr__omp_gemm(TSR_CPU, g);
}

static void test_error_names_caller(void **state) {
  (void)state;
  float x[4] = {1, 2, 3, 4};
  tsr__gemm_args g = {.dtype = TSR_I32,
                      .m = 2,
                      .n = 2,
                      .k = 2,
                      .alpha = 1,
                      .a = x,
                      .lda = 2,
                      .b = x,
                      .ldb = 2,
                      .c = x,
                      .ldc = 2,
                      .path = TSR_GEMM_NATIVE};
  TSR_ASSERT_STATUS(tsr_fake_public_gemm(&g), TSR_ERR_UNSUPPORTED, "dtype");
  assert_int_equal(strncmp(tsr_last_error(), "tsr_fake_public_gemm: ", 22), 0);
  assert_true(tsr__gemm_max_tile() <= TSR__GEMM_MAX_TILE);
}

/* The tiny lane's bounds (tsr__omp_gemm_tiny, the CBLAS drop-in's way in): it takes a call
   whose m*n*k fits the L2 and the LLC and whose op(A) and C are within the sup-path rule,
   whatever that rule (a row may set one below the L2: Sapphire/Emerald Rapids' 96 KiB had
   shrunk the lane to m*n*k within the rule, leaving dgemm 24^3 and 32^3 on the general path);
   not one whose op(A) is past the rule; and computes what the reference does. */
/* C (m x n) = A (m x k) B (k x n), row-major and contiguous, alpha 1, beta 0, native path. */
static tsr__gemm_args tiny_lane_args(tsr_dtype dt, int64_t m, int64_t n, int64_t k, const void *a,
                                     const void *b, void *c) {
  return (tsr__gemm_args){.dtype = dt,
                          .m = m,
                          .n = n,
                          .k = k,
                          .alpha = 1,
                          .beta = 0,
                          .a = a,
                          .lda = k,
                          .b = b,
                          .ldb = n,
                          .c = c,
                          .ldc = n,
                          .path = TSR_GEMM_NATIVE};
}

/* Teaches the process's adaptive thread count a parallel call's overhead (ovh_ns; at most 1000
   ns is learned as 1000) and one thread's time per flop (ns_per_flop), each replacing what it
   held: a fast parallel call replaces a mean four times higher, four serial calls move the mean
   of two to within 7 % of theirs. A warm probe that the first call marks (pool threads woken
   since the last call learned) is over after the wait. */
static void teach_adaptive(int64_t ovh_ns, double ns_per_flop) {
  const double flops = 1e6;
  const int64_t work = (int64_t)(flops * ns_per_flop);
  tsr__gemm_learn_parallel(work + 1000, work, work, flops);
  const struct timespec past_warm = {0, 30000000};
  nanosleep(&past_warm, NULL);
  tsr__gemm_learn_parallel(work + ovh_ns, work, work, flops);
  for (int i = 0; i < 4; ++i)
    tsr__gemm_learn_serial(work, flops);
}

static void test_tiny_lane_bounds(void **state) {
  (void)state;
  tg_set_threads(1);
  const tsr__cpu_facts *f = tsr__cpu_facts_get();
  double cache = (double)f->cache[1].size;
  if ((double)f->cache[2].size < cache) cache = (double)f->cache[2].size;
  int tested = 0;
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dt = tg_dtypes[d];
    const size_t es = dt == TSR_F32 ? 4 : 8;
    const tsr__gemm_serial *ser = tsr__gemm_serial_get(dt);
    if (ser->cfg.ker->sup == NULL) continue;
    const double rule = (double)ser->cfg.sup_bytes;
    /* 32^3: operands of 4-8 KiB, m*n*k of 128-256 KiB. */
    const int64_t n = 32;
    if ((double)(n * n * n) * (double)es > cache || (double)(n * n) * (double)es > rule) continue;
    double *ha = malloc((size_t)(n * n) * sizeof *ha), *hb = malloc((size_t)(n * n) * sizeof *hb);
    char *a = malloc((size_t)(n * n) * es), *b = malloc((size_t)(n * n) * es);
    char *c = malloc((size_t)(n * n) * es);
    assert_non_null(ha);
    assert_non_null(hb);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    tsr_test_fill_random(ha, (size_t)(n * n), 9100 + (uint64_t)d);
    tsr_test_fill_random(hb, (size_t)(n * n), 9200 + (uint64_t)d);
    for (int64_t i = 0; i < n * n; ++i) {
      tg_store(dt, a, (size_t)i, ha[i]);
      tg_store(dt, b, (size_t)i, hb[i]);
      ha[i] = tg_load(dt, a, (size_t)i);
      hb[i] = tg_load(dt, b, (size_t)i);
    }
    double *ref = malloc((size_t)(n * n) * sizeof *ref),
           *got = malloc((size_t)(n * n) * sizeof *got);
    assert_non_null(ref);
    assert_non_null(got);
    /* op(B) = B and B^T: B^T's strips are packed on the stack (tsr__gemm_tiny_packed). */
    for (int tb = 0; tb < 2; ++tb) {
      tsr__gemm_args g = tiny_lane_args(dt, n, n, n, a, b, c);
      g.trans_b = tb;
      memset(c, 0xff, (size_t)(n * n) * es); /* NaN: beta = 0 must not read it */
      assert_true(tsr__omp_gemm_tiny(&g));
      tsr_test_ref_gemm_into(0, tb, n, n, n, 1.0, ha, hb, 0.0, NULL, ref);
      for (int64_t i = 0; i < n * n; ++i)
        got[i] = tg_load(dt, c, (size_t)i);
      assert_true(tsr_test_rel_error(got, ref, (size_t)(n * n)) <= tsr_test_tol(dt, n));
    }
    /* op(B) = B of 1 to 16 bytes of columns, read down rows n apart (column-major x^T B):
       copied to B^T on the stack and run as dot products (tsr__gemm_tiny_gemv). */
    for (int64_t gn = 1; gn <= 16 / (int64_t)es; gn *= 2) {
      tsr__gemm_args g = tiny_lane_args(dt, n, gn, n, a, b, c);
      g.ldb = n;
      memset(c, 0xff, (size_t)(n * gn) * es);
      assert_true(tsr__omp_gemm_tiny(&g));
      double *bs = malloc((size_t)(n * gn) * sizeof *bs);
      assert_non_null(bs);
      for (int64_t p = 0; p < n; ++p)
        for (int64_t j = 0; j < gn; ++j)
          bs[p * gn + j] = hb[p * n + j];
      tsr_test_ref_gemm_into(0, 0, n, gn, n, 1.0, ha, bs, 0.0, NULL, ref);
      for (int64_t i = 0; i < n * gn; ++i)
        got[i] = tg_load(dt, c, (size_t)i);
      assert_true(tsr_test_rel_error(got, ref, (size_t)(n * gn)) <= tsr_test_tol(dt, n));
      free(bs);
    }
    /* One column of C with op(A) = A^T (column-major x^T B^T and x^T B): run as its transpose
       into a row on the stack (tsr__gemm_tiny_gemv_t); C strided, beta read, x strided or in
       place. */
    for (int tb = 0; tb < 2; ++tb) {
      tsr__gemm_args g = tiny_lane_args(dt, n, 1, n, a, b, c);
      g.trans_a = true;
      g.lda = n;
      g.trans_b = tb;
      g.ldb = n; /* B k x 1 (its rows n apart), or 1 x k (one row) */
      g.ldc = 3;
      g.alpha = -0.75;
      g.beta = 0.5;
      double *bs = malloc((size_t)n * sizeof *bs), *c0 = malloc((size_t)n * sizeof *c0);
      assert_non_null(bs);
      assert_non_null(c0);
      for (int64_t i = 0; i < n; ++i) {
        bs[i] = tb ? hb[i] : hb[i * n];
        tg_store(dt, c, (size_t)(i * 3), 0.25 * (double)i - 1.0);
        c0[i] = tg_load(dt, c, (size_t)(i * 3));
      }
      assert_true(tsr__omp_gemm_tiny(&g));
      tsr_test_ref_gemm_into(1, 0, n, 1, n, -0.75, ha, bs, 0.5, c0, ref);
      for (int64_t i = 0; i < n; ++i)
        got[i] = tg_load(dt, c, (size_t)(i * 3));
      assert_true(tsr_test_rel_error(got, ref, (size_t)n) <= tsr_test_tol(dt, n));
      free(bs);
      free(c0);
    }
    free(ref);
    free(got);
    tsr__gemm_args g;
    /* B^T whose k x NR strip outgrows the stack's 16 KiB (and no dot products: m > 64, and
       more than 16 bytes of B^T's columns), with every other bound met: declined, nothing
       done. */
    const int64_t nr = ser->cfg.ker->nr, sk = 16384 / (nr * (int64_t)es) + 1, sm = 65;
    const int64_t sn = 16 / (int64_t)es + 1;
    if ((double)(sm * sk) * (double)es <= rule && (double)(sm * sn * sk) * (double)es <= cache) {
      char *sa = malloc((size_t)(sm * sk) * es), *sb = malloc((size_t)(sn * sk) * es);
      assert_non_null(sa);
      assert_non_null(sb);
      g = tiny_lane_args(dt, sm, sn, sk, sa, sb, c);
      g.trans_b = true;
      g.ldb = sk;
      assert_false(tsr__omp_gemm_tiny(&g)); /* answered before any operand is read */
      free(sa);
      free(sb);
    }
    /* 64^3 (m*n*k = TSR__GEMM_SERIAL_MNK, a call that may run on several threads): tiny on
       one thread, right against the reference; with two threads available, tiny when the
       process's adaptive thread count surely answers one thread, else left to the general path
       (which asks it afresh). */
    const int64_t w = 64;
    if ((double)(w * w * w) * (double)es <= cache && (double)(w * w) * (double)es <= rule) {
      double *wa = malloc((size_t)(w * w) * sizeof *wa), *wb = malloc((size_t)(w * w) * sizeof *wb);
      double *wr = malloc((size_t)(w * w) * sizeof *wr);
      char *xa = malloc((size_t)(w * w) * es), *xb = malloc((size_t)(w * w) * es);
      char *xc = malloc((size_t)(w * w) * es);
      assert_true(wa && wb && wr && xa && xb && xc);
      tsr_test_fill_random(wa, (size_t)(w * w), 9300 + (uint64_t)d);
      tsr_test_fill_random(wb, (size_t)(w * w), 9400 + (uint64_t)d);
      for (int64_t i = 0; i < w * w; ++i) {
        tg_store(dt, xa, (size_t)i, wa[i]);
        tg_store(dt, xb, (size_t)i, wb[i]);
        wa[i] = tg_load(dt, xa, (size_t)i);
        wb[i] = tg_load(dt, xb, (size_t)i);
      }
      g = tiny_lane_args(dt, w, w, w, xa, xb, xc);
      tsr_test_ref_gemm_into(0, 0, w, w, w, 1.0, wa, wb, 0.0, NULL, wr);
      for (int run = 0; run < 3; ++run) {
#if defined(_OPENMP)
        if (run == 0) {
          /* Threads taught to cost the process 1 s a call against a serial rate that they
             would save ~0.3 s of: one thread, surely (no probe due for seconds). */
          tg_set_threads(2);
          teach_adaptive(1000000000, 1000.0);
        } else if (run == 1) {
          /* Taught to cost nothing: two threads pay, and the lane leaves the call. */
          teach_adaptive(0, 1000.0);
          assert_false(tsr__omp_gemm_tiny(&g)); /* answered before any operand is read */
          tg_set_threads(1);
          continue;
        }
#else
        if (run < 2) continue;
#endif
        memset(xc, 0xff, (size_t)(w * w) * es);
        assert_true(tsr__omp_gemm_tiny(&g));
        for (int64_t i = 0; i < w * w; ++i)
          wa[i] = tg_load(dt, xc, (size_t)i);
        assert_true(tsr_test_rel_error(wa, wr, (size_t)(w * w)) <= tsr_test_tol(dt, w));
      }
      free(wa);
      free(wb);
      free(wr);
      free(xa);
      free(xb);
      free(xc);
    }
    /* op(A) one row past the rule (k = 8, n = 8): not tiny, whatever m*n*k is. */
    const int64_t kk = 8, m = (int64_t)(rule / (double)(kk * (int64_t)es)) + 1;
    g = tiny_lane_args(dt, m, kk, kk, a, b, c);
    assert_false(tsr__omp_gemm_tiny(&g)); /* answered before any operand is read */
    free(ha);
    free(hb);
    free(a);
    free(b);
    free(c);
    tested++;
  }
  tg_set_threads(2);
  if (tested == 0) skip();
}

/* The progress hook (core/internal.h; SUMMA's broadcasts progress from inside the local
   multiply): the packed path calls it between its units of work, only from the calling thread,
   no sooner than its interval allows, never once it is unset, and the product is unchanged. */
typedef struct hook_probe {
  pthread_t caller;
  int calls, foreign;
} hook_probe;

static void hook_count(void *ctx) {
  hook_probe *p = ctx;
  p->calls++;
  if (!pthread_equal(pthread_self(), p->caller)) p->foreign++;
}

static void test_progress_hook(void **state) {
  (void)state;
  tg_tuning.sup_mnk = 0; /* the packed path, in units */
  for (int t = 1; t <= 2; ++t) {
    tg_set_threads(t);
    for (int d = 0; d < 2; ++d) {
      /* 301 rows: at least two row blocks (MC <= 224 on every row of the registry). */
      const gemm_case gc = {.dtype = tg_dtypes[d],
                            .m = 301,
                            .n = 257,
                            .k = 190,
                            .alpha = 1.5,
                            .beta = 0.5,
                            .path = TSR_GEMM_NATIVE};
      for (int iv = 0; iv < 2; ++iv) {
        hook_probe p = {.caller = pthread_self()};
        tsr__progress_hook h = {.fn = hook_count, .ctx = &p, .interval_ns = iv ? INT64_MAX / 2 : 0};
        assert_null(tsr__progress_set(&h));
        tg_check(gc, 7100 + (uint64_t)(t * 4 + d * 2 + iv));
        assert_ptr_equal(tsr__progress_set(NULL), &h);
        assert_int_equal(p.foreign, 0);
        assert_int_equal(h.calls, p.calls);
        /* One thread polls after each of its units: several calls, or one with an interval
           longer than the call. With two, the pool thread may take every unit. */
        if (iv == 0 && t == 1) assert_true(p.calls >= 2);
        if (iv == 1) assert_true(p.calls <= 1);
        if (iv == 1 && t == 1) assert_int_equal(p.calls, 1);
      }
      hook_probe none = {.caller = pthread_self()};
      tsr__progress_hook h = {.fn = hook_count, .ctx = &none};
      tsr__progress_set(&h);
      tsr__progress_set(NULL); /* unset before the call */
      tg_check(gc, 7200 + (uint64_t)(t * 2 + d));
      assert_int_equal(none.calls, 0);
    }
  }
  tg_tuning.sup_mnk = -1;
  tg_set_threads(2);
}

/* Through the public API: tsr_gemm on zero-copy views (column-major B via strides) and
   tsr_matmul. */
static void test_public_api(void **state) {
  (void)state;
  tg_set_threads(2);
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dt = tg_dtypes[d];
    const int64_t m = 75, n = 66, k = 53;
    double *a = NULL, *b = NULL;
    const int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
    tsr_array *ta = tsr_test_random_array(2, sa, dt, TSR_CPU, 7000, &a);
    tsr_array *tb = tsr_test_random_array(2, sb, dt, TSR_CPU, 7001, &b);
    double *r = malloc(sizeof(double) * (size_t)(m * n));
    assert_non_null(r);
    tsr_test_ref_gemm_into(0, 0, m, n, k, 1.0, a, b, 0.0, NULL, r);
    tsr_array *prod = NULL;
    TSR_ASSERT_OK(tsr_matmul(ta, tb, &prod));
    double *got = tsr_test_read_f64(prod);
    assert_true(tsr_test_rel_error(got, r, (size_t)(m * n)) <= tsr_test_tol(dt, k));
    free(got);
    /* C = -2*A*B + 0.5*C via tsr_gemm, C starting as the product. */
    TSR_ASSERT_OK(tsr_gemm(TSR_NO_TRANS, TSR_NO_TRANS, -2.0, ta, tb, 0.5, prod));
    got = tsr_test_read_f64(prod);
    for (int64_t i = 0; i < m * n; ++i)
      r[i] = -1.5 * r[i];
    assert_true(tsr_test_rel_error(got, r, (size_t)(m * n)) <= 4 * tsr_test_tol(dt, k));
    free(got);
    tsr_array_release(prod);
    tsr_array_release(ta);
    tsr_array_release(tb);
    free(a);
    free(b);
    free(r);
    (void)sc;
  }
}

int main(void) {
  const int rc = tg_setup();
  if (rc != 0) return rc;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cache_block_edges),
      cmocka_unit_test(test_threaded_shapes),
      cmocka_unit_test(test_called_from_threads),
      cmocka_unit_test(test_thread_pool),
      cmocka_unit_test(test_adaptive_reprobe),
      cmocka_unit_test(test_adaptive_unread_clock),
      cmocka_unit_test(test_adaptive_warm_probe),
      cmocka_unit_test(test_adaptive_warm_probes_settle),
      cmocka_unit_test(test_vendor_path),
      cmocka_unit_test(test_progress_hook),
      cmocka_unit_test(test_tiny_lane_bounds),
      cmocka_unit_test(test_error_names_caller),
      cmocka_unit_test(test_public_api),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
