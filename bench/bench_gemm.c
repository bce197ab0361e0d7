/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU GEMM benchmark: Tessera's native path (tsr__omp_gemm) with the registry's defaults and,
 * when a wisdom file for this CPU exists, with its wisdom, against every anchor present, all
 * in the same run: row-major C = op(A)*op(B) + beta*C, alpha = 1, no transposes and beta = 0 by
 * default (--trans: any of NN, NT, TN, TT, each case in every one asked for; --beta: any, e.g. 1
 * for the accumulating calls of SUMMA and of ScaLAPACK's PDGEMM). A transposed operand is stored
 * as the BLAS stores it: op(A) = A^T is a k x m row-major array with lda = m (a column-major
 * caller's N is a row-major caller's T: cblas_sgemm(ColMajor, N, T) is RowMajor's T, N).
 *
 * Anchors are CBLAS libraries loaded with dlopen (RTLD_LOCAL, each its own namespace), so the
 * program builds and runs without any of them and two libraries exporting cblas_dgemm do not
 * collide:
 *   openblas        Debian's libopenblas.so.0 (cblas_*, openblas_set_num_threads)
 *   blis            Debian's libblis.so.4 (libblis4-openmp; bli_thread_set_num_threads)
 *   scipy_openblas  the scipy-openblas32 wheel's libscipy_openblas.so (symbols prefixed
 *                   scipy_), found through $TSR_BENCH_SCIPY_OPENBLAS (the library's path;
 *                   scripts/bench.sh sets it) or the loader's search path
 * --anchors picks a subset. Missing anchors print "absent" and are left out of the ratios.
 * Tessera runs twice: through its native entry (tsr__omp_gemm, column "tessera") and through
 * its CBLAS drop-in, libtessera_blas's cblas_sgemm/cblas_dgemm loaded the same way as the
 * anchors (column "cblas", ratio "ratio_cblas"; absent when the library is not found), which is
 * what a program or NumPy calling CBLAS meets.
 *
 * Runs are interleaved (each repetition runs every implementation once, in turn), with a pause
 * (--pause-ms) between them so one library's idle spinning threads do not steal a core from
 * the next (250 ms by default: OpenBLAS's idle threads poll for about 100 ms, Tessera's for
 * 100 ms). Calls under 1e10 flop are each preceded by untimed calls of the same implementation
 * for at least 20 ms (every library alike), so the timed call finds that library's threads
 * awake and the cores' clocks up, as in an application that calls GEMM repeatedly. A timed run
 * of a case under 4e6 flop is a batch of ceil(4e6 / flop) back-to-back calls (16^3: 489), its
 * time divided by the count, so the clock's own cost (tens of ns) does not swamp calls of a few
 * hundred ns; --cold
 * times the first call after the pause instead (sporadic calls: how fast sleeping threads wake
 * then depends on the OS and, in a VM, on the hypervisor: 0.05-4 ms on the development VM). Figures
 * are medians over the repetitions (--best: the fastest repetition, the "best of N" of issue 31's
 * measure); the spread is min..max. GFLOP/s = 2*m*n*k / seconds / 1e9 (complex, --dtypes c,z:
 * 8*m*n*k, as ZGEMM is counted; c64/c128 run cblas_cgemm/cblas_zgemm of every library that has
 * them, Tessera by 1m). ratio = Tessera / the best anchor of that case. The load average at the
 * start is printed: on a shared machine, read the ratios, not the absolute figures. Single-thread
 * cases are also timed in process CPU time (CLOCK_PROCESS_CPUTIME_ID), which a crowded machine's
 * preemptions do not inflate: the column ratio_cpu (JSON "cpu_time").
 *
 * Usage: bench_gemm [--sizes 512,2048,...] [--cases MxNxK,...] [--no-tall] [--threads 1,2]
 *                   [--dtypes s,d,c,z] [--reps N] [--pause-ms MS] [--cold] [--best] [--beta X]
 *                   [--trans NN,NT,TN,TT] [--anchors LIST] [--json FILE]
 *   --sizes    square n (default 16,32,64,128,512,2048,4096: the small sizes, where the per-call
 *              cost and the sup path (small, unpacked) show, as well as the blocked ones)
 *   --cases    extra m x n x k shapes
 *   --no-tall  skip the short-k cases m = n = 4096, k = 256 and 64
 *   --threads  thread counts (default 1,2)
 *   --reps     repetitions per case (default: 7 up to 2048^3 flops, 3 above)
 *   --best     report each implementation's fastest repetition instead of the median
 *   --trans    the transposes of op(A) and op(B) for every case (default NN)
 *   --beta     beta of every call (default 0: C is not read)
 *   --alpha    alpha of every call (default 1; HPL's trailing update: -1)
 *   --layout   row (default) or col: the storage order of A, B and C. col calls the CBLAS
 *              libraries with CblasColMajor, as Fortran programs (dgemm_) and HPL/HPCC do; the
 *              native entry, row-major, runs the same product as C^T = op(B)^T op(A)^T
 *   --ld       leading dimension of A, B and C of at least this (default: the matrices' own):
 *              submatrices of a larger matrix, e.g. HPL's trailing update (lda = ldc = N)
 *   --misalign each operand starts this many bytes past a 64-byte boundary (default 0; glibc
 *              malloc's large blocks, as HPCC's operands: 16)
 *   --procs    P processes at once (default 1), each with its own operands, every timed call
 *              started together (a process-shared barrier): HPCC's StarDGEMM (every rank
 *              multiplies on its own core); a figure is the mean of the processes' rates in a
 *              repetition (StarDGEMM's average), then the median (or best) over repetitions
 *   --pin      with --procs, pins process p to CPU p (as mpirun binds ranks to cores)
 *   --check    before timing a case, runs every implementation once on C = 0 and compares
 *              its C with the native entry's (fails on a difference over 1e-4 / 1e-12 of the
 *              largest element, f32 / f64): the layouts, leading dimensions and scalars reach
 *              every library alike
 *   --anchors  comma list of openblas,blis,scipy_openblas (default: all present)
 *   --json     output file (default bench_gemm.json)
 */
/* sched_setaffinity (--pin). */
#define _GNU_SOURCE 1

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <omp.h>

#include "bench_out.h"
#include "bench_util.h"
#include "omp/gemm/gemm_tune.h"
#include "tessera.h"

/* ---------------------------------------------------------------- anchors ------------- */

enum { CBLAS_ROW_MAJOR = 101, CBLAS_COL_MAJOR = 102, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *,
                         int, double, double *, int);
/* cblas_cgemm / cblas_zgemm: scalars by pointer. */
typedef void (*xgemm_fn)(int, int, int, int, int, int, const void *, const void *, int,
                         const void *, int, const void *, void *, int);

typedef struct anchor {
  const char *name;
  const char *libs[3];  /* dlopen candidates (NULL-terminated; env path first if any) */
  const char *prefix;   /* symbol prefix */
  const char *threads;  /* set-threads function */
  int threads_int64;    /* BLIS takes dim_t (int64) */
  const char *describe; /* OpenBLAS: get_corename; BLIS: none */
  sgemm_fn sgemm;
  dgemm_fn dgemm;
  void (*set_threads_i)(int);
  void (*set_threads_l)(long long);
  char info[160];
  int present;
  xgemm_fn cgemm, zgemm; /* NULL when the library lacks them (complex cases skip it) */
} anchor;

static anchor anchors[] = {
    {"openblas",
     {"libopenblas.so.0", "libopenblas.so", NULL},
     "",
     "openblas_set_num_threads",
     0,
     "openblas_get_config"},
    {"blis", {"libblis.so.4", "libblis.so", NULL}, "", "bli_thread_set_num_threads", 1, NULL},
    {"scipy_openblas",
     {NULL, "libscipy_openblas.so", NULL},
     "scipy_",
     "scipy_openblas_set_num_threads",
     0,
     "scipy_openblas_get_config"},
};
enum { NANCHORS = sizeof anchors / sizeof anchors[0] };

/* Tessera's own CBLAS (libtessera_blas), loaded like an anchor but not one. */
#ifndef TSR_BENCH_TESSERA_BLAS
#define TSR_BENCH_TESSERA_BLAS "libtessera_blas.so"
#endif
static sgemm_fn cblas_s;
static dgemm_fn cblas_d;
static xgemm_fn cblas_c, cblas_z;

static void cblas_load(void) {
  void *h = dlopen(TSR_BENCH_TESSERA_BLAS, RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  void *s = dlsym(h, "cblas_sgemm"), *d = dlsym(h, "cblas_dgemm");
  if (!s || !d) return;
  memcpy(&cblas_s, &s, sizeof s);
  memcpy(&cblas_d, &d, sizeof d);
  void *c = dlsym(h, "cblas_cgemm"), *z = dlsym(h, "cblas_zgemm");
  if (c && z) {
    memcpy(&cblas_c, &c, sizeof c);
    memcpy(&cblas_z, &z, sizeof z);
  }
}

static void *sym(void *h, const char *prefix, const char *name) {
  char full[128];
  snprintf(full, sizeof full, "%s%s", prefix, name);
  return dlsym(h, full);
}

static void anchor_load(anchor *a) {
  void *h = NULL;
  const char *env =
      strcmp(a->name, "scipy_openblas") == 0 ? getenv("TSR_BENCH_SCIPY_OPENBLAS") : NULL;
  if (env && *env) h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
  for (int i = 0; !h && i < 3; ++i)
    if (a->libs[i]) h = dlopen(a->libs[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  void *s = sym(h, a->prefix, "cblas_sgemm"), *d = sym(h, a->prefix, "cblas_dgemm");
  void *t = dlsym(h, a->threads);
  if (!s || !d || !t) return;
  memcpy(&a->sgemm, &s, sizeof s);
  memcpy(&a->dgemm, &d, sizeof d);
  void *c = sym(h, a->prefix, "cblas_cgemm"), *z = sym(h, a->prefix, "cblas_zgemm");
  if (c && z) {
    memcpy(&a->cgemm, &c, sizeof c);
    memcpy(&a->zgemm, &z, sizeof z);
  }
  if (a->threads_int64)
    memcpy(&a->set_threads_l, &t, sizeof t);
  else
    memcpy(&a->set_threads_i, &t, sizeof t);
  snprintf(a->info, sizeof a->info, "loaded");
  if (a->describe) {
    void *f = dlsym(h, a->describe);
    if (f) {
      char *(*desc)(void);
      memcpy(&desc, &f, sizeof f);
      snprintf(a->info, sizeof a->info, "%s", desc());
    }
  } else {
    void *v = dlsym(h, "bli_info_get_version_str"), *q = dlsym(h, "bli_arch_query_id"),
         *n = dlsym(h, "bli_arch_string");
    if (v && q && n) {
      const char *(*ver)(void);
      int (*qid)(void);
      const char *(*aname)(int);
      memcpy(&ver, &v, sizeof v);
      memcpy(&qid, &q, sizeof q);
      memcpy(&aname, &n, sizeof n);
      snprintf(a->info, sizeof a->info, "BLIS %s, config %s", ver(), aname(qid()));
    }
  }
  a->present = 1;
}

/* ---------------------------------------------------------------- cases --------------- */

typedef struct bench_case {
  int64_t m, n, k;
  int ta, tb; /* op(A) = A^T, op(B) = B^T */
} bench_case;

static const char *trans_name(const bench_case *cs) {
  static const char *names[4] = {"NN", "NT", "TN", "TT"};
  return names[2 * (cs->ta != 0) + (cs->tb != 0)];
}

/* Implementations: 0 Tessera defaults, 1 Tessera with wisdom, 2 Tessera's CBLAS (defaults),
   3.. anchors. */
enum {
  IMPL_DEFAULT = 0,
  IMPL_WISDOM = 1,
  IMPL_CBLAS = 2,
  IMPL_ANCHOR0 = 3,
  NIMPL = IMPL_ANCHOR0 + NANCHORS
};
static const char *impl_name(int i) {
  return i == IMPL_DEFAULT  ? "tessera"
         : i == IMPL_WISDOM ? "tessera_wisdom"
         : i == IMPL_CBLAS  ? "tessera_cblas"
                            : anchors[i - IMPL_ANCHOR0].name;
}

typedef struct bench_ctx {
  tsr_dtype dtype;
  bench_case cs;
  void *a, *b, *c;
  double alpha, beta;
  int col;               /* column-major operands (--layout col) */
  int64_t lda, ldb, ldc; /* in the layout's sense */
  int calls;             /* calls per timed run (a batch for small cases) */
} bench_ctx;

/* ---------------------------------------------------------------- processes at once ---- */

/* --procs: the processes' shared state. Every timed call starts at the barrier; each process
   leaves its times in its row, rank 0 reads them all after the case's last barrier. */
enum { MAXPROCS = 8, MAXREPS = 64 };
typedef struct bench_shared {
  pthread_barrier_t bar;
  pid_t pids[MAXPROCS];
  double times[MAXPROCS][NIMPL][MAXREPS], ctimes[MAXPROCS][NIMPL][MAXREPS];
} bench_shared;
static bench_shared *shared;
static int nprocs = 1, rank;

static void procs_sync(void) {
  if (nprocs > 1) pthread_barrier_wait(&shared->bar);
}

/* A failure in one process would leave the others at the barrier: end them all. */
static void procs_abort(void) {
  if (nprocs <= 1) return;
  for (int p = 0; p < nprocs; ++p)
    if (shared->pids[p] > 0 && shared->pids[p] != getpid()) kill(shared->pids[p], SIGTERM);
  _exit(1);
}

/* Forks nprocs - 1 copies of this process (ranks 1..); only rank 0 prints. */
static int procs_start(int pin) {
  if (nprocs <= 1) return 0;
  shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return -1;
  pthread_barrierattr_t at;
  pthread_barrierattr_init(&at);
  pthread_barrierattr_setpshared(&at, PTHREAD_PROCESS_SHARED);
  if (pthread_barrier_init(&shared->bar, &at, (unsigned)nprocs) != 0) return -1;
  shared->pids[0] = getpid();
  fflush(stdout);
  for (int p = 1; p < nprocs; ++p) {
    const pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
      rank = p;
      if (!freopen("/dev/null", "w", stdout)) return -1;
      break;
    }
    shared->pids[p] = pid;
  }
  if (pin) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(rank % CPU_SETSIZE, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) perror("bench_gemm: --pin");
  }
  return 0;
}

/* Rank 0, after a case: each repetition's time becomes the one of the processes' mean rate
   (flop / mean of flop / t_p), HPCC StarDGEMM's average. */
static void procs_gather(int impl, int reps, double flop, double *times, double *ctimes) {
  for (int r = 0; r < reps; ++r) {
    double rate = 0, crate = 0;
    for (int p = 0; p < nprocs; ++p) {
      rate += flop / shared->times[p][impl][r];
      crate += flop / shared->ctimes[p][impl][r];
    }
    times[r] = flop / (rate / nprocs);
    ctimes[r] = flop / (crate / nprocs);
  }
}

static void pause_ms(int ms) {
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int parse_list(const char *s, int64_t *out, int max) {
  int n = 0;
  while (*s && n < max) {
    char *end = NULL;
    const long long v = strtoll(s, &end, 10);
    if (end == s) break;
    if (v > 0) out[n++] = v;
    s = *end == ',' || *end == 'x' ? end + 1 : end;
  }
  return n;
}

static const char *json_num(double v, char *buf) {
  if (isnan(v)) return "null";
  snprintf(buf, 32, "%.3f", v);
  return buf;
}

/* The tuning of Tessera's calls (passed with each call): defaults (wisdom off) or wisdom. Only
   when a wisdom file is there to switch: without one the calls pass no tuning object, as a
   user's call does, and take the library's own lanes (the tiny lane of small calls skips calls
   that carry a tuning object). */
static tsr__gemm_tuning tuning = TSR__GEMM_TUNING_DEFAULT;
static bool tuning_passed = true;

static void use_wisdom(int on) {
  tuning.no_wisdom = on == 0;
}

static void set_threads(int impl, int t) {
  omp_set_num_threads(t);
  if (impl >= IMPL_ANCHOR0) {
    anchor *a = &anchors[impl - IMPL_ANCHOR0];
    if (a->set_threads_l)
      a->set_threads_l(t);
    else
      a->set_threads_i(t);
  }
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One run of x->calls calls; returns wall seconds per call (and process CPU seconds per call in
 *cpu), or -1 on failure. */
static double run_once(const bench_ctx *x, int impl, double *cpu) {
  const int m = (int)x->cs.m, n = (int)x->cs.n, k = (int)x->cs.k;
  const int lda = (int)x->lda, ldb = (int)x->ldb, ldc = (int)x->ldc;
  const int layout = x->col ? CBLAS_COL_MAJOR : CBLAS_ROW_MAJOR;
  const int ta = x->cs.ta ? CBLAS_TRANS : CBLAS_NO_TRANS,
            tb = x->cs.tb ? CBLAS_TRANS : CBLAS_NO_TRANS;
  tsr__gemm_args g = {.dtype = x->dtype,
                      .trans_a = x->cs.ta != 0,
                      .trans_b = x->cs.tb != 0,
                      .m = m,
                      .n = n,
                      .k = k,
                      .alpha = x->alpha,
                      .beta = x->beta,
                      .a = x->a,
                      .lda = lda,
                      .b = x->b,
                      .ldb = ldb,
                      .c = x->c,
                      .ldc = ldc,
                      .path = TSR_GEMM_NATIVE,
                      .tuning = tuning_passed ? &tuning : NULL};
  if (x->col) { /* the native entry is row-major: C^T = op(B)^T op(A)^T */
    g.m = n;
    g.n = m;
    g.a = x->b;
    g.lda = ldb;
    g.trans_a = x->cs.tb != 0;
    g.b = x->a;
    g.ldb = lda;
    g.trans_b = x->cs.ta != 0;
  }
  sgemm_fn sg = impl == IMPL_CBLAS     ? cblas_s
                : impl >= IMPL_ANCHOR0 ? anchors[impl - IMPL_ANCHOR0].sgemm
                                       : NULL;
  dgemm_fn dg = impl == IMPL_CBLAS     ? cblas_d
                : impl >= IMPL_ANCHOR0 ? anchors[impl - IMPL_ANCHOR0].dgemm
                                       : NULL;
  const bool cx = x->dtype == TSR_C64 || x->dtype == TSR_C128;
  xgemm_fn xg = !cx                    ? NULL
                : impl == IMPL_CBLAS   ? (x->dtype == TSR_C64 ? cblas_c : cblas_z)
                : impl >= IMPL_ANCHOR0 ? (x->dtype == TSR_C64 ? anchors[impl - IMPL_ANCHOR0].cgemm
                                                              : anchors[impl - IMPL_ANCHOR0].zgemm)
                                       : NULL;
  if (cx && impl >= IMPL_CBLAS && !xg) return -1;
  /* The complex scalars (imaginary parts 0) in the dtype's element type. */
  const float fal[2] = {(float)x->alpha, 0}, fbe[2] = {(float)x->beta, 0};
  const double dal[2] = {x->alpha, 0}, dbe[2] = {x->beta, 0};
  const void *pal = x->dtype == TSR_C64 ? (const void *)fal : (const void *)dal;
  const void *pbe = x->dtype == TSR_C64 ? (const void *)fbe : (const void *)dbe;
  const double c0 = cpu_s();
  const double t0 = now_s();
  for (int i = 0; i < x->calls; ++i) {
    if (impl < IMPL_CBLAS) {
      if (tsr__omp_gemm(TSR_CPU, &g) != TSR_OK) return -1;
    } else if (cx) {
      xg(layout, ta, tb, m, n, k, pal, x->a, lda, x->b, ldb, pbe, x->c, ldc);
    } else if (x->dtype == TSR_F32) {
      sg(layout, ta, tb, m, n, k, (float)x->alpha, x->a, lda, x->b, ldb, (float)x->beta, x->c, ldc);
    } else {
      dg(layout, ta, tb, m, n, k, x->alpha, x->a, lda, x->b, ldb, x->beta, x->c, ldc);
    }
  }
  const double t1 = now_s();
  *cpu = (cpu_s() - c0) / x->calls;
  return (t1 - t0) / x->calls;
}

/* --check: every implementation's C (from C = 0) against the first one's; 0 when they agree. */
static int check_case(bench_ctx *x, const int *impls, int nimpl, size_t nc, size_t es) {
  char *ref = malloc(nc * es);
  double csec, worst = 0;
  int bad = 0;
  if (!ref) return 1;
  for (int q = 0; q < nimpl && !bad; ++q) {
    if (impls[q] <= IMPL_CBLAS) use_wisdom(impls[q] == IMPL_WISDOM);
    set_threads(impls[q], 1);
    memset(x->c, 0, nc * es);
    const int calls = x->calls;
    x->calls = 1;
    bad = run_once(x, impls[q], &csec) < 0;
    x->calls = calls;
    if (q == 0) {
      memcpy(ref, x->c, nc * es);
      continue;
    }
    double dmax = 0, rmax = 0;
    /* Complex C compared as its real and imaginary parts. */
    const bool cx = x->dtype == TSR_C64 || x->dtype == TSR_C128;
    const size_t ne = cx ? 2 * nc : nc, rs = cx ? es / 2 : es;
    for (size_t i = 0; i < ne; ++i) {
      const double r = rs == 4 ? ((float *)ref)[i] : ((double *)ref)[i];
      const double v = rs == 4 ? ((float *)x->c)[i] : ((double *)x->c)[i];
      if (fabs(r - v) > dmax || isnan(v)) dmax = isnan(v) ? INFINITY : fabs(r - v);
      if (fabs(r) > rmax) rmax = fabs(r);
    }
    const double rel = dmax / (rmax > 0 ? rmax : 1);
    if (rel > worst) worst = rel;
    if (rel > (rs == 4 ? 1e-4 : 1e-12)) {
      fprintf(stderr, "check: %s differs from %s by %.3g of the largest element\n",
              impl_name(impls[q]), impl_name(impls[0]), rel);
      bad = 1;
    }
  }
  if (!bad) printf("check: %d implementations agree (largest difference %.3g)\n", nimpl, worst);
  memset(x->c, 0, nc * es);
  free(ref);
  return bad;
}

typedef struct bench_result {
  const char *dtype;
  int threads;
  bench_case cs;
  double med[NIMPL], lo[NIMPL], hi[NIMPL]; /* GFLOP/s; NAN when not measured */
  double best_anchor;
  double cpu[NIMPL]; /* GFLOP/s from median process CPU time (1 thread only), else NAN */
  double best_anchor_cpu;
} bench_result;

static void print_config(FILE *out, tsr_dtype dt, int t, int json) {
  tsr__gemm_config c;
  static const char *const names[][2] = {
      {"f32", "sgemm"}, {"f64", "dgemm"}, {"c64", "cgemm"}, {"c128", "zgemm"}};
  const int di = dt == TSR_F32 ? 0 : dt == TSR_F64 ? 1 : dt == TSR_C64 ? 2 : 3;
  /* A complex dtype runs its real dtype's kernel and blocks (1m). */
  tsr__gemm_config_get(di == 0 || di == 2 ? TSR_F32 : TSR_F64, t, &tuning, &c);
  if (json)
    fprintf(out,
            "{\"dtype\": \"%s\", \"threads\": %d, \"kernel\": \"%s\", \"kc\": %lld, \"mc\": %lld, "
            "\"nc\": %lld, \"source\": \"%s\"}",
            names[di][0], t, c.ker->name, (long long)c.kc, (long long)c.mc, (long long)c.nc,
            c.source);
  else
    fprintf(out, "  %s %d thread(s): %s KC=%lld MC=%lld NC=%lld (%s)\n", names[di][1], t,
            c.ker->name, (long long)c.kc, (long long)c.mc, (long long)c.nc, c.source);
}

int main(int argc, char **argv) {
  int64_t sizes[16] = {16, 32, 64, 128, 512, 2048, 4096}, threads[8] = {1, 2}, extra[48];
  int nsizes = 7, nthreads = 2, nextra = 0, reps_opt = 0, tall = 1, pause = 250, cold = 0, best = 0;
  int dt_s = 1, dt_d = 1, dt_c = 0, dt_z = 0;
  int trans[4] = {0}, ntrans = 0; /* 2 * ta + tb */
  double beta = 0.0, alpha = 1.0;
  int col = 0, pin = 0, misalign = 0, check = 0;
  int64_t ldmin = 0;
  const char *json = "bench_gemm.json", *anchor_list = NULL;
  for (int i = 1; i < argc; ++i) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(o, "--sizes") == 0 && v)
      nsizes = parse_list(v, sizes, 16), ++i;
    else if (strcmp(o, "--cases") == 0 && v)
      nextra = parse_list(v, extra, 48) / 3, ++i;
    else if (strcmp(o, "--threads") == 0 && v)
      nthreads = parse_list(v, threads, 8), ++i;
    else if (strcmp(o, "--reps") == 0 && v)
      reps_opt = atoi(v), ++i;
    else if (strcmp(o, "--pause-ms") == 0 && v)
      pause = atoi(v), ++i;
    else if (strcmp(o, "--json") == 0 && v)
      json = v, ++i;
    else if (strcmp(o, "--anchors") == 0 && v)
      anchor_list = v, ++i;
    else if (strcmp(o, "--trans") == 0 && v) {
      ntrans = 0;
      for (const char *t = v; *t;) {
        const int ok = (t[0] == 'N' || t[0] == 'T') && (t[1] == 'N' || t[1] == 'T') &&
                       (t[2] == ',' || t[2] == '\0');
        if (!ok || ntrans == 4) {
          fprintf(stderr, "%s: --trans wants a comma list of NN, NT, TN, TT, not '%s'\n", argv[0],
                  v);
          return 2;
        }
        trans[ntrans++] = 2 * (t[0] == 'T') + (t[1] == 'T');
        t += t[2] == ',' ? 3 : 2;
      }
      ++i;
    } else if (strcmp(o, "--dtypes") == 0 && v) {
      dt_s = strchr(v, 's') != NULL;
      dt_d = strchr(v, 'd') != NULL;
      dt_c = strchr(v, 'c') != NULL;
      dt_z = strchr(v, 'z') != NULL;
      ++i;
    } else if (strcmp(o, "--no-tall") == 0)
      tall = 0;
    else if (strcmp(o, "--cold") == 0)
      cold = 1;
    else if (strcmp(o, "--best") == 0)
      best = 1;
    else if (strcmp(o, "--pin") == 0)
      pin = 1;
    else if (strcmp(o, "--check") == 0)
      check = 1;
    else if (strcmp(o, "--layout") == 0 && v && (!strcmp(v, "row") || !strcmp(v, "col")))
      col = strcmp(v, "col") == 0, ++i;
    else if (strcmp(o, "--ld") == 0 && v && atoll(v) > 0)
      ldmin = atoll(v), ++i;
    else if (strcmp(o, "--misalign") == 0 && v && atoi(v) >= 0 && atoi(v) < 64)
      misalign = atoi(v), ++i;
    else if (strcmp(o, "--procs") == 0 && v && atoi(v) >= 1 && atoi(v) <= MAXPROCS)
      nprocs = atoi(v), ++i;
    else if (strcmp(o, "--alpha") == 0 && v) {
      char *end = NULL;
      alpha = strtod(v, &end);
      if (end == v || *end != '\0' || !isfinite(alpha)) {
        fprintf(stderr, "%s: --alpha wants a finite number, not '%s'\n", argv[0], v);
        return 2;
      }
      ++i;
    } else if (strcmp(o, "--beta") == 0 && v) {
      char *end = NULL;
      beta = strtod(v, &end);
      if (end == v || *end != '\0' || !isfinite(beta)) {
        fprintf(stderr, "%s: --beta wants a finite number, not '%s'\n", argv[0], v);
        return 2;
      }
      ++i;
    } else {
      fprintf(stderr,
              "usage: %s [--sizes 512,2048,...] [--cases MxNxK,...] [--no-tall] [--threads 1,2] "
              "[--dtypes s,d,c,z] [--reps N] [--pause-ms MS] [--cold] [--best] [--beta X] "
              "[--alpha X] [--layout row|col] [--ld N] [--misalign BYTES] [--procs P] [--pin] "
              "[--check] "
              "[--trans NN,NT,TN,TT] [--anchors openblas,blis,scipy_openblas] "
              "[--json FILE]\n",
              argv[0]);
      return 2;
    }
  }
  if (ntrans == 0) ntrans = 1; /* NN */
  if (procs_start(pin) != 0) {
    perror("bench_gemm: --procs");
    return 1;
  }
  const int show_trans = ntrans > 1 || trans[0] != 0;
  bench_case shapes[40], cases[160];
  int nshapes = 0, ncases = 0;
  for (int i = 0; i < nsizes; ++i)
    shapes[nshapes++] = (bench_case){sizes[i], sizes[i], sizes[i], 0, 0};
  if (tall) {
    shapes[nshapes++] = (bench_case){4096, 4096, 256, 0, 0};
    shapes[nshapes++] = (bench_case){4096, 4096, 64, 0, 0};
  }
  for (int i = 0; i < nextra; ++i)
    shapes[nshapes++] = (bench_case){extra[3 * i], extra[3 * i + 1], extra[3 * i + 2], 0, 0};
  /* Each shape in every transpose asked for, side by side. */
  for (int i = 0; i < nshapes; ++i)
    for (int t = 0; t < ntrans; ++t) {
      cases[ncases] = shapes[i];
      cases[ncases].ta = trans[t] >> 1;
      cases[ncases].tb = trans[t] & 1;
      ++ncases;
    }

  char loadavg[64] = "unknown";
  FILE *la = fopen("/proc/loadavg", "r");
  if (la) {
    if (!fgets(loadavg, sizeof loadavg, la)) snprintf(loadavg, sizeof loadavg, "unknown");
    loadavg[strcspn(loadavg, "\n")] = '\0';
    fclose(la);
  }
  tsr_device_props props;
  if (tsr_device_get_props(TSR_CPU, &props) != TSR_OK) snprintf(props.name, sizeof props.name, "?");
  printf("calls: %s (see the header of bench_gemm.c), pause %d ms, C = %g*op(A)*op(B) + %g*C\n",
         cold ? "cold, first after the pause" : "warm, after 20 ms of untimed calls", pause, alpha,
         beta);
  char ldbuf[32];
  snprintf(ldbuf, sizeof ldbuf, "%lld", (long long)ldmin);
  printf("operands: %s-major, leading dimensions %s%s, %d bytes past a 64-byte boundary; "
         "%d process(es) at once%s\n",
         col ? "column" : "row", ldmin ? "at least " : "the matrices' own", ldmin ? ldbuf : "",
         misalign, nprocs, nprocs > 1 ? (pin ? ", pinned to CPUs 0.." : ", not pinned") : "");
  printf("CPU: %s (registry: %s); load average: %s; omp_get_max_threads()=%d\n", props.name,
         tsr__gemm_uarch_name(), loadavg, omp_get_max_threads());
  for (int i = 0; i < NANCHORS; ++i) {
    if (!anchor_list || strstr(anchor_list, anchors[i].name)) anchor_load(&anchors[i]);
    printf("anchor %-15s %s\n", anchors[i].name, anchors[i].present ? anchors[i].info : "absent");
  }
  cblas_load();
  printf("tessera_cblas  %s\n", cblas_s ? TSR_BENCH_TESSERA_BLAS : "absent");
  char wstate[700];
  use_wisdom(1);
  tsr__gemm_wisdom_status(wstate, sizeof wstate);
  const int have_wisdom = strncmp(wstate, "used", 4) == 0;
  tuning_passed = have_wisdom;
  printf("wisdom: %s\n", wstate);
  tsr_dtype dtypes[4];
  int ndt = 0;
  if (dt_s) dtypes[ndt++] = TSR_F32;
  if (dt_d) dtypes[ndt++] = TSR_F64;
  if (dt_c) dtypes[ndt++] = TSR_C64;
  if (dt_z) dtypes[ndt++] = TSR_C128;
  for (int w = 0; w <= have_wisdom; ++w) {
    use_wisdom(w);
    printf("tessera configuration (%s):\n", w ? "with wisdom" : "defaults");
    for (int d = 0; d < ndt; ++d)
      for (int ti = 0; ti < nthreads; ++ti)
        print_config(stdout, dtypes[d], (int)threads[ti], 0);
  }
  printf("\nGFLOP/s %s (min..max of tessera); ratio = tessera / best anchor\n",
         best ? "best of the repetitions" : "medians");
  printf("%-4s %3s %14s%s %8s", "dt", "thr", "m x n x k", show_trans ? " op" : "", "tessera");
  if (have_wisdom) printf(" %8s", "wisdom");
  if (cblas_s) printf(" %8s", "cblas");
  for (int i = 0; i < NANCHORS; ++i)
    if (anchors[i].present) printf(" %15s", anchors[i].name);
  printf(" %13s %7s", "spread", "ratio");
  if (have_wisdom) printf(" %7s", "ratio_w");
  if (cblas_s) printf(" %7s", "r_cblas");
  printf("\n");

  bench_result *res = calloc((size_t)(ndt * nthreads * ncases), sizeof *res);
  int nres = 0, rc = 0;
  if (!res) return 1;
  for (int d = 0; d < ndt && rc == 0; ++d) {
    const tsr_dtype dtype = dtypes[d];
    const bool cplx = dtype == TSR_C64 || dtype == TSR_C128;
    const size_t es = tsr__dtype_size(dtype);
    for (int ci = 0; ci < ncases && rc == 0; ++ci) {
      const bench_case cs = cases[ci];
      bench_ctx x = {
          .dtype = dtype, .cs = cs, .alpha = alpha, .beta = beta, .col = col, .calls = 1};
      /* A stored matrix is `lines` lines of ld elements (rows in row-major, columns in
         column-major); stored A is ra x ca, B rb x cb. */
      const int64_t ra = cs.ta ? cs.k : cs.m, ca = cs.ta ? cs.m : cs.k;
      const int64_t rb = cs.tb ? cs.n : cs.k, cb = cs.tb ? cs.k : cs.n;
      x.lda = col ? ra : ca;
      x.ldb = col ? rb : cb;
      x.ldc = col ? cs.m : cs.n;
      if (x.lda < ldmin) x.lda = ldmin;
      if (x.ldb < ldmin) x.ldb = ldmin;
      if (x.ldc < ldmin) x.ldc = ldmin;
      const size_t na = (size_t)((col ? ca : ra) * x.lda), nb = (size_t)((col ? cb : rb) * x.ldb),
                   nc = (size_t)((col ? cs.n : cs.m) * x.ldc);
      char *abase = aligned_alloc(64, (na * es + (size_t)misalign + 63) / 64 * 64);
      char *bbase = aligned_alloc(64, (nb * es + (size_t)misalign + 63) / 64 * 64);
      char *cbase = aligned_alloc(64, (nc * es + (size_t)misalign + 63) / 64 * 64);
      x.a = abase ? abase + misalign : NULL;
      x.b = bbase ? bbase + misalign : NULL;
      x.c = cbase ? cbase + misalign : NULL;
      if (!x.a || !x.b || !x.c) {
        fprintf(stderr, "out of memory for %lldx%lldx%lld\n", (long long)cs.m, (long long)cs.n,
                (long long)cs.k);
        rc = 1;
        break;
      }
      unsigned long long s = 12345;
      /* Complex operands: real and imaginary parts both random (as reals of twice the count). */
      const size_t ra_n = cplx ? 2 * na : na, rb_n = cplx ? 2 * nb : nb;
      for (size_t i = 0; i < ra_n + rb_n; ++i) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        const double v = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
        void *base = i < ra_n ? x.a : x.b;
        const size_t j = i < ra_n ? i : i - ra_n;
        if (dtype == TSR_F32 || dtype == TSR_C64)
          ((float *)base)[j] = (float)v;
        else
          ((double *)base)[j] = v;
      }
      memset(x.c, 0, nc * es);
      /* Complex: 8 m n k real flops (ZGEMM as the field counts it). */
      const double flop = (cplx ? 8.0 : 2.0) * (double)cs.m * (double)cs.n * (double)cs.k;
      if (flop < 4e6) x.calls = (int)ceil(4e6 / flop);
      int reps = reps_opt > 0 ? reps_opt : flop <= 2.0 * 2048 * 2048 * 2048 ? 7 : 3;
      if (reps > MAXREPS) reps = MAXREPS;
      for (int ti = 0; ti < nthreads && rc == 0; ++ti) {
        const int t = (int)threads[ti];
        double times[NIMPL][64], ctimes[NIMPL][64];
        int impls[NIMPL], nimpl = 0;
        impls[nimpl++] = IMPL_DEFAULT;
        if (have_wisdom) impls[nimpl++] = IMPL_WISDOM;
        if (cblas_s && (!cplx || cblas_c)) impls[nimpl++] = IMPL_CBLAS;
        for (int i = 0; i < NANCHORS; ++i)
          if (anchors[i].present && (!cplx || anchors[i].cgemm)) impls[nimpl++] = IMPL_ANCHOR0 + i;
        if (check && ti == 0 && check_case(&x, impls, nimpl, nc, es) != 0) {
          rc = 1;
          procs_abort();
          break;
        }
        /* Warm-up (caches, packing buffers, thread pools), then interleaved repetitions. */
        for (int r = -1; r < reps && rc == 0; ++r)
          for (int q = 0; q < nimpl && rc == 0; ++q) {
            if (impls[q] <= IMPL_CBLAS) use_wisdom(impls[q] == IMPL_WISDOM);
            set_threads(impls[q], t);
            double csec = 0;
            procs_sync(); /* --procs: the processes' warm-up and timed calls start together */
            /* Warm: untimed calls for at least 20 ms (threads awake, clocks up). */
            for (double warm = 0; !cold && flop < 1e10 && warm < 0.02 && rc == 0;) {
              const double w = run_once(&x, impls[q], &csec);
              if (w < 0) {
                fprintf(stderr, "gemm failed: %s\n", tsr_last_error());
                rc = 1;
              }
              warm += w * x.calls;
            }
            procs_sync();
            const double sec = run_once(&x, impls[q], &csec);
            if (sec < 0) {
              fprintf(stderr, "gemm failed: %s\n", tsr_last_error());
              rc = 1;
            }
            if (rc) procs_abort();
            if (r >= 0) {
              times[impls[q]][r] = sec;
              ctimes[impls[q]][r] = csec;
              if (nprocs > 1) {
                shared->times[rank][impls[q]][r] = sec;
                shared->ctimes[rank][impls[q]][r] = csec;
              }
            }
            pause_ms(pause);
          }
        if (rc) break;
        procs_sync(); /* every process's times are in `shared` */
        if (rank > 0) continue;
        for (int q = 0; nprocs > 1 && q < nimpl; ++q)
          procs_gather(impls[q], reps, flop, times[impls[q]], ctimes[impls[q]]);
        bench_result *br = &res[nres++];
        br->dtype = tsr_dtype_name(dtype);
        br->threads = t;
        br->cs = cs;
        br->best_anchor = br->best_anchor_cpu = NAN;
        for (int i = 0; i < NIMPL; ++i)
          br->med[i] = br->lo[i] = br->hi[i] = br->cpu[i] = NAN;
        for (int q = 0; q < nimpl; ++q) {
          const int i = impls[q];
          const double med = median(times[i], reps);             /* sorts: [0] fastest */
          br->med[i] = flop / (best ? times[i][0] : med) * 1e-9; /* the reported statistic */
          br->hi[i] = flop / times[i][0] * 1e-9;
          br->lo[i] = flop / times[i][reps - 1] * 1e-9;
          if (i >= IMPL_ANCHOR0 && !(br->med[i] <= br->best_anchor)) br->best_anchor = br->med[i];
          if (t == 1) {
            const double cmed = median(ctimes[i], reps); /* sorts: [0] fastest */
            br->cpu[i] = flop / (best ? ctimes[i][0] : cmed) * 1e-9;
            if (i >= IMPL_ANCHOR0 && !(br->cpu[i] <= br->best_anchor_cpu))
              br->best_anchor_cpu = br->cpu[i];
          }
        }
        printf("%-4s %3d %4lldx%4lldx%4lld%s%s %8.1f", br->dtype, t, (long long)cs.m,
               (long long)cs.n, (long long)cs.k, show_trans ? " " : "",
               show_trans ? trans_name(&cs) : "", br->med[IMPL_DEFAULT]);
        if (have_wisdom) printf(" %8.1f", br->med[IMPL_WISDOM]);
        if (cblas_s) printf(" %8.1f", br->med[IMPL_CBLAS]);
        for (int i = 0; i < NANCHORS; ++i)
          if (anchors[i].present) printf(" %15.1f", br->med[IMPL_ANCHOR0 + i]);
        printf(" %6.1f..%-6.1f %7.2f", br->lo[IMPL_DEFAULT], br->hi[IMPL_DEFAULT],
               br->med[IMPL_DEFAULT] / br->best_anchor);
        if (have_wisdom) printf(" %7.2f", br->med[IMPL_WISDOM] / br->best_anchor);
        if (cblas_s) printf(" %7.2f", br->med[IMPL_CBLAS] / br->best_anchor);
        if (t == 1) {
          printf("   cpu-time ratio %.2f", br->cpu[IMPL_DEFAULT] / br->best_anchor_cpu);
          if (have_wisdom) printf(" / %.2f", br->cpu[IMPL_WISDOM] / br->best_anchor_cpu);
          if (cblas_s) printf(" / cblas %.2f", br->cpu[IMPL_CBLAS] / br->best_anchor_cpu);
        }
        printf("\n");
        fflush(stdout);
      }
      free(abase);
      free(bbase);
      free(cbase);
    }
  }
  if (rank > 0) { /* a --procs copy: rank 0 reports */
    free(res);
    return rc;
  }
  for (int p = 1; p < nprocs; ++p)
    waitpid(shared->pids[p], NULL, 0);

  bench_out out;
  FILE *f = bench_out_open(&out);
  if (!f) {
    fprintf(stderr, "bench_gemm: cannot write %s: out of memory\n", json);
    free(res);
    return 1;
  }
  int ok = 1;
  fprintf(f, "{\n  \"benchmark\": \"gemm_cpu\",\n  \"cpu\": \"%s\",\n  \"uarch\": \"%s\",\n",
          props.name, tsr__gemm_uarch_name());
  fprintf(f, "  \"anchors\": {");
  for (int i = 0, first = 1; i < NANCHORS; ++i)
    if (anchors[i].present) {
      fprintf(f, "%s\"%s\": \"%s\"", first ? "" : ", ", anchors[i].name, anchors[i].info);
      first = 0;
    }
  fprintf(f, "},\n  \"wisdom\": \"%s\",\n  \"config\": [", have_wisdom ? "used" : "none");
  for (int w = 0, first = 1; w <= have_wisdom; ++w) {
    use_wisdom(w);
    for (int d = 0; d < ndt; ++d)
      for (int ti = 0; ti < nthreads; ++ti) {
        fprintf(f, "%s\n    ", first ? "" : ",");
        print_config(f, dtypes[d], (int)threads[ti], 1);
        first = 0;
      }
  }
  fprintf(f, "\n  ],\n  \"loadavg_at_start\": \"%s\",\n  \"unit\": \"GFLOP/s\",\n", loadavg);
  fprintf(f, "  \"calls\": \"%s\",\n  \"pause_ms\": %d,\n  \"beta\": %.17g,\n",
          cold ? "cold" : "warm", pause, beta);
  fprintf(f,
          "  \"alpha\": %.17g,\n  \"layout\": \"%s\",\n  \"ld_min\": %lld,\n  \"misalign\": %d,\n"
          "  \"procs\": %d,\n  \"pinned\": %s,\n",
          alpha, col ? "col" : "row", (long long)ldmin, misalign, nprocs,
          nprocs > 1 && pin ? "true" : "false");
  fprintf(f, "  \"statistic\": \"%s\",\n", best ? "best" : "median");
  fprintf(f, "  \"results\": [\n");
  for (int r = 0; r < nres; ++r) {
    const bench_result *br = &res[r];
    char b[4][32];
    fprintf(f,
            "    {\"dtype\": \"%s\", \"threads\": %d, \"m\": %lld, \"n\": %lld, \"k\": %lld, "
            "\"trans\": \"%s\"",
            br->dtype, br->threads, (long long)br->cs.m, (long long)br->cs.n, (long long)br->cs.k,
            trans_name(&br->cs));
    for (int i = 0; i < NIMPL; ++i)
      if (!isnan(br->med[i])) fprintf(f, ", \"%s\": %s", impl_name(i), json_num(br->med[i], b[0]));
    fprintf(f, ", \"ratio\": %s", json_num(br->med[IMPL_DEFAULT] / br->best_anchor, b[0]));
    if (have_wisdom)
      fprintf(f, ", \"ratio_wisdom\": %s", json_num(br->med[IMPL_WISDOM] / br->best_anchor, b[1]));
    if (cblas_s)
      fprintf(f, ", \"ratio_cblas\": %s", json_num(br->med[IMPL_CBLAS] / br->best_anchor, b[1]));
    if (br->threads == 1) {
      fprintf(f, ", \"cpu_time\": {");
      for (int i = 0, first = 1; i < NIMPL; ++i)
        if (!isnan(br->cpu[i])) {
          fprintf(f, "%s\"%s\": %s", first ? "" : ", ", impl_name(i), json_num(br->cpu[i], b[2]));
          first = 0;
        }
      fprintf(f, "}");
    }
    fprintf(f, ", \"spread\": {");
    for (int i = 0, first = 1; i < NIMPL; ++i)
      if (!isnan(br->med[i])) {
        fprintf(f, "%s\"%s\": [%s, %s]", first ? "" : ", ", impl_name(i), json_num(br->lo[i], b[2]),
                json_num(br->hi[i], b[3]));
        first = 0;
      }
    fprintf(f, "}}%s\n", r + 1 < nres ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  if (bench_out_close(&out, "bench_gemm", json) != 0) ok = 0;
  if (!ok) {
    rc = 1;
  } else {
    printf("\nwrote %s\n", json);
  }
  free(res);
  return rc;
}
