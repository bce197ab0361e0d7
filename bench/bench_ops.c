/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU elementwise and reduction benchmark: memory-bound kernels against the memory
 * bandwidth the same machine shows in the same run (the anchor).
 *
 *  - add: c = a + b on n f32 (moves 3 * 4n bytes). Measured as the kernel alone (the ops
 *    table entry writing into an existing array: what the arithmetic costs) and as the public
 *    tsr_add (which also allocates its result: the first touch of fresh pages is included).
 *    Anchor: memcpy (reads and writes 2 * 4n bytes), on one thread and split among all
 *    threads; the faster is the bound.
 *  - sum: tsr_sum over all of n f32 (f64 accumulation; reads 4n bytes), and over each axis of
 *    the same data as a 2-D (8192 x n/8192) matrix. Anchor: an OpenMP integer read loop
 *    (with software prefetch).
 *  - overhead: tsr_add and tsr_sum on 1-element arrays, per call (results released outside
 *    the timed loop).
 * Effective GB/s = bytes moved / median seconds / 1e9; ratio = GB/s / anchor GB/s.
 *
 * Usage: bench_ops [--n N] [--reps R] [--json FILE]   (default n = 2^26, R = 11,
 *        bench_ops.json)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/internal.h"
#include "tessera.h"

#include "bench_out.h"
#include "bench_util.h"

#if defined(__GNUC__) || defined(__clang__)
#define BENCH_PREFETCH(addr) __builtin_prefetch((const void *)(addr))
#else
#define BENCH_PREFETCH(addr) ((void)(addr))
#endif

#define MAX_REPS 101
#define BATCH 1000 /* calls per overhead sample */

typedef struct result {
  const char *name;
  const char *anchor; /* name of the row it is compared with, or NULL */
  double bytes;       /* moved per call (0 for the overhead rows) */
  double median_s;
  double gbps;
  double ratio; /* gbps / anchor gbps; NAN for anchors and overhead rows */
} result;

static int check(tsr_status st, const char *what) {
  if (st == TSR_OK) return 0;
  fprintf(stderr, "bench_ops: %s failed: %s: %s\n", what, tsr_status_name(st), tsr_last_error());
  return 1;
}

static void parallel_memcpy(char *dst, const char *src, size_t bytes) {
#ifdef _OPENMP
#pragma omp parallel
  {
    const int nt = omp_get_num_threads(), t = omp_get_thread_num();
    const size_t lo = bytes / (size_t)nt * (size_t)t;
    const size_t hi = t == nt - 1 ? bytes : bytes / (size_t)nt * (size_t)(t + 1);
    memcpy(dst + lo, src + lo, hi - lo);
  }
#else
  memcpy(dst, src, bytes);
#endif
}

/* Reads n 64-bit words once, as cheaply per byte as a loop can, with the same 4 KiB
   software prefetch as the library's sum (without it this loop is slower than the sum on
   virtual machines, and would not be a bound); the integer sum only keeps the loads. */
static uint64_t read_loop(const uint64_t *p, int64_t n) {
  uint64_t acc = 0;
#ifdef _OPENMP
#pragma omp parallel for reduction(+ : acc) schedule(static)
#endif
  for (int64_t b = 0; b < n / 256; b++) {
    const uint64_t *q = p + b * 256;
    for (uintptr_t line = 0; line < 256 * 8; line += 64)
      BENCH_PREFETCH((uintptr_t)q + 4096 + line);
    for (int i = 0; i < 256; i++)
      acc += q[i];
  }
  for (int64_t i = n / 256 * 256; i < n; i++)
    acc += p[i];
  return acc;
}

int main(int argc, char **argv) {
  int64_t n = (int64_t)1 << 26;
  int reps = 11;
  const char *json = "bench_ops.json";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
      n = strtoll(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json = argv[++i];
    } else {
      fprintf(stderr, "usage: bench_ops [--n N] [--reps R] [--json FILE]\n");
      return 2;
    }
  }
  if (n < 8192 || n % 8192 != 0 || reps < 1 || reps > MAX_REPS) {
    fprintf(stderr, "bench_ops: n must be a positive multiple of 8192, reps 1..%d\n", MAX_REPS);
    return 2;
  }
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif

  const tsr_device cpu = TSR_CPU;
  const size_t bytes = (size_t)n * sizeof(float);
  tsr_array *a = NULL, *b = NULL, *c = NULL, *a2 = NULL;
  if (check(tsr_random_uniform(1, &n, TSR_F32, cpu, 1, -1.0, 1.0, &a), "tsr_random_uniform") ||
      check(tsr_random_uniform(1, &n, TSR_F32, cpu, 2, -1.0, 1.0, &b), "tsr_random_uniform") ||
      check(tsr_zeros(1, &n, TSR_F32, cpu, &c), "tsr_zeros"))
    return 1;
  const int64_t shape2[2] = {8192, n / 8192};
  if (check(tsr_reshape(a, 2, shape2, &a2), "tsr_reshape")) return 1;
  const tsr__view va = tsr__view_of(a), vb = tsr__view_of(b), vc = tsr__view_of(c);

  /* The large cases, interleaved within each repetition so that the load of a shared
     machine falls on the anchors and the measured ops alike. */
  enum { MEMCPY1, MEMCPYN, ADD_KERNEL, ADD_API, READ, SUM_ALL, SUM_AX0, SUM_AX1, NCASES };
  static const struct {
    const char *name;
    int anchor; /* case index, or -1 */
    double bytes_per_elem;
  } cases[NCASES] = {
      [MEMCPY1] = {"memcpy 1 thread", -1, 8},
      [MEMCPYN] = {"memcpy all threads", -1, 8},
      [ADD_KERNEL] = {"add kernel (existing out)", MEMCPY1, 12},
      [ADD_API] = {"tsr_add (allocates out)", MEMCPY1, 12},
      [READ] = {"read loop (prefetch)", -1, 4},
      [SUM_ALL] = {"tsr_sum all", READ, 4},
      [SUM_AX0] = {"tsr_sum 8192xN axis 0", READ, 4},
      [SUM_AX1] = {"tsr_sum 8192xN axis 1", READ, 4},
  };
  static double t[NCASES][MAX_REPS];
  volatile uint64_t sink = 0;
  for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
    for (int id = 0; id < NCASES; id++) {
      tsr_status st = TSR_OK;
      tsr_array *out = NULL;
      const double t0 = now_s();
      switch (id) {
      case MEMCPY1: memcpy(vc.data, va.data, bytes); break;
      case MEMCPYN: parallel_memcpy(vc.data, va.data, bytes); break;
      case ADD_KERNEL: st = tsr__omp_backend.binary(cpu, TSR_ADD, &vc, &va, &vb); break;
      case ADD_API: st = tsr_add(a, b, &out); break;
      case READ: sink += read_loop((const uint64_t *)va.data, n / 2); break;
      case SUM_ALL: st = tsr_sum(a, TSR_AXIS_ALL, 0, &out); break;
      case SUM_AX0: st = tsr_sum(a2, 0, 0, &out); break;
      case SUM_AX1: st = tsr_sum(a2, 1, 0, &out); break;
      }
      const double dt = now_s() - t0;
      if (check(st, cases[id].name)) return 1;
      tsr_array_release(out);
      if (r >= 0) t[id][r] = dt;
    }
  }
  result res[NCASES + 2];
  int nres = 0;
  for (int id = 0; id < NCASES; id++)
    res[nres++] = (result){cases[id].name,      NULL, cases[id].bytes_per_elem * (double)n,
                           median(t[id], reps), 0,    NAN};
  /* The copy bound is the faster of the two memcpy rows. */
  const int copy_anchor = res[MEMCPY1].median_s <= res[MEMCPYN].median_s ? MEMCPY1 : MEMCPYN;
  for (int id = 0; id < NCASES; id++)
    if (cases[id].anchor >= 0)
      res[id].anchor =
          cases[id].anchor == MEMCPY1 ? cases[copy_anchor].name : cases[cases[id].anchor].name;
  double tt[MAX_REPS];
  tsr_array *outs[BATCH];

  /* ---- per-call overhead on 1-element arrays */
  tsr_array *x1 = NULL, *y1 = NULL;
  const int64_t one = 1;
  if (check(tsr_full(1, &one, TSR_F32, cpu, 1.5, &x1), "tsr_full") ||
      check(tsr_full(1, &one, TSR_F32, cpu, 2.5, &y1), "tsr_full"))
    return 1;
  for (int op = 0; op < 2; op++) {
    for (int r = -1; r < reps; r++) {
      tsr_status st = TSR_OK;
      double t0 = now_s();
      for (int k = 0; k < BATCH && st == TSR_OK; k++)
        st = op == 0 ? tsr_add(x1, y1, &outs[k]) : tsr_sum(x1, TSR_AXIS_ALL, 0, &outs[k]);
      double dt = now_s() - t0;
      if (check(st, op == 0 ? "tsr_add 1 element" : "tsr_sum 1 element")) return 1;
      for (int k = 0; k < BATCH; k++)
        tsr_array_release(outs[k]);
      if (r >= 0) tt[r] = dt / BATCH;
    }
    res[nres++] = (result){
        op == 0 ? "tsr_add 1 element" : "tsr_sum 1 element", NULL, 0, median(tt, reps), NAN, NAN};
  }

  /* ---- derived figures */
  for (int i = 0; i < nres; i++)
    if (res[i].bytes > 0) res[i].gbps = res[i].bytes / res[i].median_s / 1e9;
  for (int i = 0; i < nres; i++) {
    if (res[i].anchor == NULL) continue;
    for (int j = 0; j < nres; j++)
      if (strcmp(res[j].name, res[i].anchor) == 0) res[i].ratio = res[i].gbps / res[j].gbps;
  }

  printf("bench_ops: n = %lld f32 (%.0f MiB per array), %d threads, median of %d\n", (long long)n,
         (double)bytes / 1048576.0, threads, reps);
  printf("%-28s %12s %10s %8s  %s\n", "case", "median", "GB/s", "ratio", "anchor");
  for (int i = 0; i < nres; i++) {
    if (res[i].bytes > 0)
      printf("%-28s %9.3f ms %10.2f ", res[i].name, res[i].median_s * 1e3, res[i].gbps);
    else
      printf("%-28s %9.3f us %10s ", res[i].name, res[i].median_s * 1e6, "-");
    if (isnan(res[i].ratio))
      printf("%8s  %s\n", "-", res[i].anchor == NULL && res[i].bytes > 0 ? "(anchor)" : "");
    else
      printf("%8.2f  %s\n", res[i].ratio, res[i].anchor);
  }

  bench_out out;
  FILE *f = bench_out_open(&out);
  if (f == NULL) {
    fprintf(stderr, "bench_ops: cannot write %s: out of memory\n", json);
    return 1;
  }
  fprintf(f,
          "{\n  \"benchmark\": \"ops\",\n  \"n\": %lld,\n  \"dtype\": \"f32\",\n"
          "  \"threads\": %d,\n  \"reps\": %d,\n  \"results\": [\n",
          (long long)n, threads, reps);
  for (int i = 0; i < nres; i++) {
    fprintf(f, "    {\"name\": \"%s\", \"median_s\": %.9g", res[i].name, res[i].median_s);
    if (res[i].bytes > 0)
      fprintf(f, ", \"bytes\": %.0f, \"gbps\": %.4f", res[i].bytes, res[i].gbps);
    if (res[i].anchor != NULL)
      fprintf(f, ", \"anchor\": \"%s\", \"ratio\": %.4f", res[i].anchor, res[i].ratio);
    fprintf(f, "}%s\n", i + 1 < nres ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  if (bench_out_close(&out, "bench_ops", json) != 0) return 1;
  printf("wrote %s (checksum %llu)\n", json, (unsigned long long)sink);

  tsr_array_release(x1);
  tsr_array_release(y1);
  tsr_array_release(a2);
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
  return 0;
}
