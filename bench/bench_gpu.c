/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU benchmark (CUDA or HIP build): Tessera's native kernels against the anchors measured
 * in the same run on the same device.
 *
 *  - gemm: C = A B, square n x n x n, f32 and f64, native tiled kernel vs the vendor BLAS
 *    (cuBLAS / hipBLAS) through tsr_gemm_ex; GFLOP/s = 2 n^3 / s / 1e9, ratio = native /
 *    vendor (target >= 0.9 for SGEMM at 4096). Timed with events on the device's stream.
 *    The two results are compared (relative norm difference printed) so a fast wrong kernel
 *    cannot pass unnoticed.
 *    c64 and c128 likewise (cgemm, zgemm: native complex tiles vs cublasCgemm / cublasZgemm, and
 *    auto), GFLOP/s counted as the field counts complex GEMM: 8 m n k real flops (issue 50's
 *    target: the job at >= 0.9x cuBLAS Cgemm/Zgemm; auto routes to the vendor BLAS from 256).
 *    Also skinny shapes (m x n x k = 8192x8192x64, 8192x64x8192, 64x8192x8192: split-K and the
 *    small tile) and, per dtype, the `auto` path (TSR_GEMM_AUTO: the routing of
 *    src/gpu/gemm.cu) against the faster of the two.
 *  - add and sum: c = a + b and sum(a) on 2^L f32 (--bw-log2 L, default 28; add moves
 *    3 x 4n bytes, sum reads 4n) vs a device-to-device copy of the same array (tsr_copy,
 *    2 x 4n bytes); ratio of effective GB/s (target >= 0.9).
 *  - transfers: tsr_array_write / tsr_array_read of 256 MiB from pageable (malloc) and from
 *    pinned (tsr__dev_pinned_alloc) host memory, GB/s; the pinned rows' anchor is pageable.
 *  - overhead: tsr_add on 1-element arrays, per call in microseconds, host wall clock over
 *    1000 calls then one synchronize (allocation through the caching allocator included;
 *    target <= 5 us).
 *  - matmul 2048: tsr_matmul on the GPU vs the CPU backend (f32, f64), wall clock including
 *    the synchronize.
 * Medians of R repetitions. Without a GPU it prints "no GPU device: skipped" and exits 0.
 *
 * Usage: bench_gpu [--sizes n1,n2,...] [--reps R] [--bw-log2 L] [--no-skinny] [--json FILE]
 *        (default sizes 1024,2048,4096,8192, R = 7, L = 28, bench_gpu.json)
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h" /* the device operations tsr__dev_* (src/core/devops.c) */
#include "tessera.h"

#include "bench_out.h"
#include "bench_util.h"

#define MAX_REPS 51
#define MAX_SIZES 16
#define MAX_ROWS 160
#define BATCH 1000

typedef struct row {
  char name[48];
  long long size;
  double median_s;
  double rate;        /* GFLOP/s, GB/s, or microseconds per call */
  const char *unit;   /* "GFLOP/s", "GB/s", "us/op" */
  double anchor_rate; /* the anchor's rate, NAN when none */
  char anchor[32];
  double ratio; /* rate / anchor_rate (for us/op: anchor / rate), NAN when none */
  double check; /* relative difference to the anchor's result, NAN when not checked */
} row;

static row rows[MAX_ROWS];
static int nrows;
static tsr_device gpu;

#define CHECK(expr)                                                                                \
  do {                                                                                             \
    tsr_status st_ = (expr);                                                                       \
    if (st_ != TSR_OK) {                                                                           \
      fprintf(stderr, "bench_gpu: %s failed: %s: %s\n", #expr, tsr_status_name(st_),               \
              tsr_last_error());                                                                   \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static row *add_row(const char *name, long long size, const char *unit) {
  if (nrows == MAX_ROWS) {
    fprintf(stderr, "bench_gpu: too many rows\n");
    exit(1);
  }
  row *r = &rows[nrows++];
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", name);
  r->size = size;
  r->unit = unit;
  r->anchor_rate = NAN;
  r->ratio = NAN;
  r->check = NAN;
  return r;
}

/* Median seconds of one GEMM on the device's stream (events), or -1 when the path is not
   built in. */
static double time_gemm(tsr_array *a, tsr_array *b, tsr_array *c, tsr_gemm_path path, int reps,
                        void *ev0, void *ev1) {
  tsr_status st = tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, c, path);
  if (st == TSR_ERR_UNSUPPORTED) return -1.0;
  CHECK(st);
  CHECK(tsr_device_synchronize(gpu));
  double t[MAX_REPS];
  for (int r = 0; r < reps; r++) {
    CHECK(tsr__dev_event_record(gpu, ev0, NULL));
    CHECK(tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, c, path));
    CHECK(tsr__dev_event_record(gpu, ev1, NULL));
    CHECK(tsr__dev_event_elapsed(gpu, ev0, ev1, &t[r]));
  }
  return median(t, reps);
}

/* ||x - y|| / ||y|| of two complex arrays of n elements (their 2n parts, raw bytes). */
static double rel_diff_complex(const tsr_array *x, const tsr_array *y, size_t n, tsr_dtype dt) {
  const size_t bytes = n * (dt == TSR_C64 ? 8 : 16);
  unsigned char *hx = malloc(bytes), *hy = malloc(bytes);
  if (!hx || !hy) {
    fprintf(stderr, "bench_gpu: out of host memory\n");
    exit(1);
  }
  CHECK(tsr_array_read(x, hx, bytes));
  CHECK(tsr_array_read(y, hy, bytes));
  double num = 0, den = 0;
  for (size_t i = 0; i < 2 * n; i++) {
    double u, v;
    if (dt == TSR_C64) {
      float fu, fv;
      memcpy(&fu, hx + 4 * i, 4);
      memcpy(&fv, hy + 4 * i, 4);
      u = fu;
      v = fv;
    } else {
      memcpy(&u, hx + 8 * i, 8);
      memcpy(&v, hy + 8 * i, 8);
    }
    num += (u - v) * (u - v);
    den += v * v;
  }
  free(hx);
  free(hy);
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* ||x - y|| / ||y|| of two arrays of n elements (read to the host as f64). */
static double rel_diff(const tsr_array *x, const tsr_array *y, size_t n) {
  tsr_array_props info;
  CHECK(tsr_array_info(y, &info));
  if (info.dtype == TSR_C64 || info.dtype == TSR_C128) return rel_diff_complex(x, y, n, info.dtype);
  tsr_array *dx = NULL, *dy = NULL;
  CHECK(tsr_astype(x, TSR_F64, &dx));
  CHECK(tsr_astype(y, TSR_F64, &dy));
  double *hx = malloc(n * sizeof *hx), *hy = malloc(n * sizeof *hy);
  if (!hx || !hy) {
    fprintf(stderr, "bench_gpu: out of host memory\n");
    exit(1);
  }
  CHECK(tsr_array_read(dx, hx, n * sizeof *hx));
  CHECK(tsr_array_read(dy, hy, n * sizeof *hy));
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    num += (hx[i] - hy[i]) * (hx[i] - hy[i]);
    den += hy[i] * hy[i];
  }
  free(hx);
  free(hy);
  tsr_array_release(dx);
  tsr_array_release(dy);
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* One m x n x k shape of dtype dt: native, vendor and auto, rows named after `label`. */
static void bench_gemm_shape(tsr_dtype dt, int64_t m, int64_t n, int64_t k, const char *label,
                             int reps, void *ev0, void *ev1) {
  int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
  tsr_array *a = NULL, *b = NULL, *c = NULL, *cv = NULL;
  const bool cplx = dt == TSR_C64 || dt == TSR_C128;
  if (cplx) { /* complex arrays come with issue 50's core: a line, not an exit, before then */
    tsr_status st = tsr_random_uniform(2, sa, dt, gpu, 1, -1.0, 1.0, &a);
    if (st != TSR_OK) {
      printf("%s: random %s arrays not available (%s): skipped\n", tsr_dtype_name(dt),
             tsr_dtype_name(dt), tsr_last_error());
      return;
    }
  } else {
    CHECK(tsr_random_uniform(2, sa, dt, gpu, 1, -1.0, 1.0, &a));
  }
  CHECK(tsr_random_uniform(2, sb, dt, gpu, 2, -1.0, 1.0, &b));
  CHECK(tsr_zeros(2, sc, dt, gpu, &c));
  CHECK(tsr_zeros(2, sc, dt, gpu, &cv));
  const double flops = (cplx ? 8.0 : 2.0) * (double)m * (double)n * (double)k;
  const char *gname = dt == TSR_F64   ? "dgemm"
                      : dt == TSR_F32 ? "sgemm"
                      : dt == TSR_C64 ? "cgemm"
                                      : "zgemm";
  double tv = time_gemm(a, b, cv, TSR_GEMM_VENDOR, reps, ev0, ev1);
  double tn = time_gemm(a, b, c, TSR_GEMM_NATIVE, reps, ev0, ev1);
  char name[48];
  snprintf(name, sizeof name, "%s%s native", gname, label);
  row *r = add_row(name, m == n && n == k ? m : m * 1000000LL + n * 1000 + k, "GFLOP/s");
  r->median_s = tn;
  r->rate = flops / tn / 1e9;
  if (tv > 0) {
    snprintf(r->anchor, sizeof r->anchor, "%s", TSR_HAVE_CUDA ? "cuBLAS" : "hipBLAS");
    r->anchor_rate = flops / tv / 1e9;
    r->ratio = r->rate / r->anchor_rate;
    if (m * n <= 4096LL * 4096) r->check = rel_diff(c, cv, (size_t)(m * n));
    snprintf(name, sizeof name, "%s%s %s", gname, label, r->anchor);
    row *v = add_row(name, r->size, "GFLOP/s");
    v->median_s = tv;
    v->rate = flops / tv / 1e9;
  }
  /* auto against the faster of the two (target: never slower). */
  double ta = time_gemm(a, b, c, TSR_GEMM_AUTO, reps, ev0, ev1);
  snprintf(name, sizeof name, "%s%s auto", gname, label);
  row *au = add_row(name, r->size, "GFLOP/s");
  au->median_s = ta;
  au->rate = flops / ta / 1e9;
  double best = tv > 0 && tv < tn ? tv : tn;
  snprintf(au->anchor, sizeof au->anchor, "best");
  au->anchor_rate = flops / best / 1e9;
  au->ratio = au->rate / au->anchor_rate;
  tsr_array_release(a);
  tsr_array_release(b);
  tsr_array_release(c);
  tsr_array_release(cv);
  CHECK(tsr_device_trim(gpu));
}

static void bench_gemm(const long long *sizes, int nsizes, int reps, int skinny) {
  void *ev0 = NULL, *ev1 = NULL;
  CHECK(tsr__dev_event_create(gpu, &ev0));
  CHECK(tsr__dev_event_create(gpu, &ev1));
  static const int64_t skinny_shapes[][3] = {{8192, 8192, 64}, {8192, 64, 8192}, {64, 8192, 8192}};
  static const tsr_dtype dtypes[4] = {TSR_F32, TSR_F64, TSR_C64, TSR_C128};
  for (int d = 0; d < 4; d++) {
    tsr_dtype dt = dtypes[d];
    for (int s = 0; s < nsizes; s++)
      bench_gemm_shape(dt, sizes[s], sizes[s], sizes[s], "", reps, ev0, ev1);
    for (int s = 0; skinny && d < 2 && s < 3; s++)
      bench_gemm_shape(dt, skinny_shapes[s][0], skinny_shapes[s][1], skinny_shapes[s][2], " skinny",
                       reps, ev0, ev1);
  }
  tsr__dev_event_destroy(gpu, ev0);
  tsr__dev_event_destroy(gpu, ev1);
}

static void bench_bandwidth(int reps, int log2n) {
  void *ev0 = NULL, *ev1 = NULL;
  CHECK(tsr__dev_event_create(gpu, &ev0));
  CHECK(tsr__dev_event_create(gpu, &ev1));
  int64_t n = (int64_t)1 << log2n;
  tsr_array *a = NULL, *b = NULL, *out = NULL;
  CHECK(tsr_random_uniform(1, &n, TSR_F32, gpu, 3, -1.0, 1.0, &a));
  CHECK(tsr_random_uniform(1, &n, TSR_F32, gpu, 4, -1.0, 1.0, &b));
  double tc[MAX_REPS], ta[MAX_REPS], ts[MAX_REPS];
  for (int r = -1; r < reps; r++) { /* r = -1: warm-up (allocator, first launch) */
    CHECK(tsr__dev_event_record(gpu, ev0, NULL));
    CHECK(tsr_copy(a, &out));
    CHECK(tsr__dev_event_record(gpu, ev1, NULL));
    double t;
    CHECK(tsr__dev_event_elapsed(gpu, ev0, ev1, &t));
    if (r >= 0) tc[r] = t;
    tsr_array_release(out);
    CHECK(tsr__dev_event_record(gpu, ev0, NULL));
    CHECK(tsr_add(a, b, &out));
    CHECK(tsr__dev_event_record(gpu, ev1, NULL));
    CHECK(tsr__dev_event_elapsed(gpu, ev0, ev1, &t));
    if (r >= 0) ta[r] = t;
    tsr_array_release(out);
    CHECK(tsr__dev_event_record(gpu, ev0, NULL));
    CHECK(tsr_sum(a, TSR_AXIS_ALL, 0, &out));
    CHECK(tsr__dev_event_record(gpu, ev1, NULL));
    CHECK(tsr__dev_event_elapsed(gpu, ev0, ev1, &t));
    if (r >= 0) ts[r] = t;
    tsr_array_release(out);
  }
  const double bytes = 4.0 * (double)n;
  row *copy = add_row("copy device-to-device", n, "GB/s");
  copy->median_s = median(tc, reps);
  copy->rate = 2.0 * bytes / copy->median_s / 1e9;
  row *add = add_row("add f32", n, "GB/s");
  add->median_s = median(ta, reps);
  add->rate = 3.0 * bytes / add->median_s / 1e9;
  snprintf(add->anchor, sizeof add->anchor, "copy");
  add->anchor_rate = copy->rate;
  add->ratio = add->rate / copy->rate;
  row *sum = add_row("sum f32", n, "GB/s");
  sum->median_s = median(ts, reps);
  sum->rate = bytes / sum->median_s / 1e9;
  snprintf(sum->anchor, sizeof sum->anchor, "copy");
  sum->anchor_rate = copy->rate;
  sum->ratio = sum->rate / copy->rate;
  tsr_array_release(a);
  tsr_array_release(b);
  tsr__dev_event_destroy(gpu, ev0);
  tsr__dev_event_destroy(gpu, ev1);
}

/* Host <-> device copies of 256 MiB through the public API, from pageable and from pinned
   host memory (median GB/s of each direction). */
static void bench_transfers(int reps) {
  const size_t bytes = (size_t)256 << 20;
  int64_t n = (int64_t)(bytes / sizeof(float));
  tsr_array *d = NULL;
  CHECK(tsr_empty(1, &n, TSR_F32, gpu, &d));
  void *pageable = malloc(bytes), *pinned = NULL;
  if (!pageable) {
    fprintf(stderr, "bench_gpu: out of host memory\n");
    exit(1);
  }
  memset(pageable, 0, bytes);
  CHECK(tsr__dev_pinned_alloc(gpu, bytes, &pinned));
  memset(pinned, 0, bytes);
  double rates[2][2];
  for (int kind = 0; kind < 2; kind++) {
    void *host = kind ? pinned : pageable;
    double tw[MAX_REPS], tr[MAX_REPS];
    for (int r = -1; r < reps; r++) {
      double t0 = now_s();
      CHECK(tsr_array_write(d, host, bytes));
      CHECK(tsr_device_synchronize(gpu));
      double t1 = now_s();
      CHECK(tsr_array_read(d, host, bytes));
      double t2 = now_s();
      if (r >= 0) tw[r] = t1 - t0, tr[r] = t2 - t1;
    }
    rates[kind][0] = (double)bytes / median(tw, reps) / 1e9;
    rates[kind][1] = (double)bytes / median(tr, reps) / 1e9;
  }
  static const char *names[2][2] = {{"h2d pageable", "d2h pageable"}, {"h2d pinned", "d2h pinned"}};
  for (int kind = 0; kind < 2; kind++)
    for (int dir = 0; dir < 2; dir++) {
      row *r = add_row(names[kind][dir], (long long)bytes, "GB/s");
      r->rate = rates[kind][dir];
      r->median_s = (double)bytes / r->rate / 1e9;
      if (kind == 1) {
        snprintf(r->anchor, sizeof r->anchor, "pageable");
        r->anchor_rate = rates[0][dir];
        r->ratio = r->rate / r->anchor_rate;
      }
    }
  tsr__dev_pinned_free(gpu, pinned);
  free(pageable);
  tsr_array_release(d);
}

static void bench_overhead(int reps) {
  int64_t one = 1;
  tsr_array *a = NULL, *b = NULL;
  CHECK(tsr_full(1, &one, TSR_F32, gpu, 1.0, &a));
  CHECK(tsr_full(1, &one, TSR_F32, gpu, 2.0, &b));
  static tsr_array *outs[BATCH];
  double t[MAX_REPS];
  for (int r = -1; r < reps; r++) {
    double t0 = now_s();
    for (int i = 0; i < BATCH; i++) {
      CHECK(tsr_add(a, b, &outs[i]));
      tsr_array_release(outs[i]);
    }
    CHECK(tsr_device_synchronize(gpu));
    if (r >= 0) t[r] = (now_s() - t0) / BATCH;
  }
  row *o = add_row("overhead tsr_add 1 elem", 1, "us/op");
  o->median_s = median(t, reps);
  o->rate = o->median_s * 1e6;
  tsr_array_release(a);
  tsr_array_release(b);
}

static void bench_vs_cpu(int reps) {
  const tsr_device cpu = TSR_CPU;
  int64_t n = 2048, shape[2] = {n, n};
  const double flops = 2.0 * (double)n * (double)n * (double)n;
  for (int d = 0; d < 2; d++) {
    tsr_dtype dt = d ? TSR_F64 : TSR_F32;
    double tg[MAX_REPS], tcpu[MAX_REPS];
    double *times[2] = {tg, tcpu};
    tsr_array *results[2] = {NULL, NULL};
    const tsr_device where[2] = {gpu, cpu};
    int creps = reps < 3 ? reps : 3; /* the CPU is slow: fewer repetitions */
    for (int w = 0; w < 2; w++) {
      tsr_array *a = NULL, *b = NULL;
      CHECK(tsr_random_uniform(2, shape, dt, where[w], 5, -1.0, 1.0, &a));
      CHECK(tsr_random_uniform(2, shape, dt, where[w], 6, -1.0, 1.0, &b));
      int nr = w ? creps : reps;
      for (int r = -1; r < nr; r++) {
        tsr_array *c = NULL;
        double t0 = now_s();
        CHECK(tsr_matmul(a, b, &c));
        CHECK(tsr_device_synchronize(where[w]));
        if (r >= 0) times[w][r] = now_s() - t0;
        if (r == nr - 1)
          results[w] = c;
        else
          tsr_array_release(c);
      }
      tsr_array_release(a);
      tsr_array_release(b);
    }
    tsr_array *gcopy = NULL;
    CHECK(tsr_array_to(results[0], cpu, &gcopy));
    char name[48];
    snprintf(name, sizeof name, "matmul %s gpu", tsr_dtype_name(dt));
    row *r = add_row(name, n, "GFLOP/s");
    r->median_s = median(tg, reps);
    r->rate = flops / r->median_s / 1e9;
    snprintf(r->anchor, sizeof r->anchor, "cpu backend");
    r->anchor_rate = flops / median(tcpu, creps) / 1e9;
    r->ratio = r->rate / r->anchor_rate;
    r->check = rel_diff(gcopy, results[1], (size_t)(n * n));
    snprintf(name, sizeof name, "matmul %s cpu", tsr_dtype_name(dt));
    row *c = add_row(name, n, "GFLOP/s");
    c->median_s = median(tcpu, creps);
    c->rate = r->anchor_rate;
    tsr_array_release(gcopy);
    tsr_array_release(results[0]);
    tsr_array_release(results[1]);
  }
}

static void write_json(const char *path, const tsr_device_props *p, int reps) {
  bench_out out;
  FILE *f = bench_out_open(&out);
  if (!f) {
    fprintf(stderr, "bench_gpu: cannot write %s: out of memory\n", path);
    exit(1);
  }
  fprintf(f, "{\n  \"benchmark\": \"gpu\",\n  \"device\": \"%s\",\n  \"arch\": \"%s\",\n", p->name,
          p->arch);
  fprintf(f, "  \"reps\": %d,\n  \"results\": [\n", reps);
  for (int i = 0; i < nrows; i++) {
    const row *r = &rows[i];
    fprintf(f,
            "    {\"name\": \"%s\", \"size\": %lld, \"median_s\": %.9g, \"rate\": %.6g, "
            "\"unit\": \"%s\"",
            r->name, r->size, r->median_s, r->rate, r->unit);
    if (!isnan(r->anchor_rate))
      fprintf(f, ", \"anchor\": \"%s\", \"anchor_rate\": %.6g, \"ratio\": %.4f", r->anchor,
              r->anchor_rate, r->ratio);
    if (!isnan(r->check)) fprintf(f, ", \"rel_diff\": %.3g", r->check);
    fprintf(f, "}%s\n", i + 1 < nrows ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  if (bench_out_close(&out, "bench_gpu", path) != 0) exit(1);
}

int main(int argc, char **argv) {
  long long sizes[MAX_SIZES] = {1024, 2048, 4096, 8192};
  int nsizes = 4, reps = 7, log2n = 28, skinny = 1;
  const char *json = "bench_gpu.json";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
      nsizes = 0;
      char *s = argv[++i];
      while (*s && nsizes < MAX_SIZES) {
        char *end = NULL;
        long long v = strtoll(s, &end, 10);
        if (end == s || v <= 0) {
          fprintf(stderr, "bench_gpu: bad --sizes\n");
          return 2;
        }
        sizes[nsizes++] = v;
        s = *end == ',' ? end + 1 : end;
      }
    } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = atoi(argv[++i]);
      if (reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "bench_gpu: --reps must be 1..%d\n", MAX_REPS);
        return 2;
      }
    } else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json = argv[++i];
    } else if (strcmp(argv[i], "--bw-log2") == 0 && i + 1 < argc) {
      log2n = atoi(argv[++i]);
      if (log2n < 10 || log2n > 32) {
        fprintf(stderr, "bench_gpu: --bw-log2 must be 10..32\n");
        return 2;
      }
    } else if (strcmp(argv[i], "--no-skinny") == 0) {
      skinny = 0;
    } else {
      fprintf(stderr, "usage: bench_gpu [--sizes n1,n2,...] [--reps R] [--bw-log2 L] "
                      "[--no-skinny] [--json FILE]\n");
      return 2;
    }
  }
  const char *kind = TSR_HAVE_CUDA ? "cuda" : "hip";
  if (tsr_device_parse(kind, &gpu) != TSR_OK) {
    printf("no GPU device: skipped (%s)\n", tsr_last_error());
    return 0;
  }
  tsr_device_props props;
  CHECK(tsr_device_get_props(gpu, &props));

  bench_gemm(sizes, nsizes, reps, skinny);
  bench_bandwidth(reps, log2n);
  bench_transfers(reps);
  bench_overhead(reps);
  bench_vs_cpu(reps);

  printf("bench_gpu: %s (%s, %d SMs/CUs, warp %d), median of %d\n", props.name, props.arch,
         props.multiprocessors, props.warp_size, reps);
  printf("%-26s %6s %11s %12s %-8s %-12s %12s %7s %9s\n", "case", "size", "median", "rate", "unit",
         "anchor", "anchor rate", "ratio", "rel diff");
  for (int i = 0; i < nrows; i++) {
    const row *r = &rows[i];
    printf("%-26s %6lld %8.3f ms %12.2f %-8s ", r->name, r->size, r->median_s * 1e3, r->rate,
           r->unit);
    if (!isnan(r->anchor_rate))
      printf("%-12s %12.2f %7.3f", r->anchor, r->anchor_rate, r->ratio);
    else
      printf("%-12s %12s %7s", "-", "-", "-");
    if (!isnan(r->check))
      printf(" %9.2e\n", r->check);
    else
      printf(" %9s\n", "-");
  }
  write_json(json, &props, reps);
  printf("wrote %s\n", json);
  return 0;
}
