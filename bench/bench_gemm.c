/*
 * CPU GEMM benchmark: Tessera's native kernels (tsr__omp_gemm, and the public tsr_gemm on
 * zero-copy views of the same memory) against OpenBLAS (cblas_sgemm/dgemm, the anchor) in the
 * same run, row-major C = A*B, no transposes, alpha = 1, beta = 0.
 *
 * Runs of the implementations are interleaved (ours, OpenBLAS, ours, ...), with a pause
 * (--pause-ms, default 200) between them so that one library's idle spinning worker threads
 * (libgomp spins ~300000 pauses, OpenBLAS yields for a while) do not steal a core from the
 * other; each figure is the median of the repetitions. GFLOP/s = 2*m*n*k / seconds / 1e9.
 * The load average at the start is printed: on a shared machine, read the ratios, not the
 * absolute figures.
 *
 * Usage: bench_gemm [--sizes 256,512,...] [--no-tall] [--threads 1,2] [--dtypes s,d]
 *                   [--reps N] [--pause-ms MS] [--no-api] [--json FILE]
 *   --sizes    square n (default 256,512,1024,2048,4096)
 *   --no-tall  skip the tall-skinny cases m = n = 4096, k = 64 and 256
 *   --threads  thread counts (default 1,2; ours: omp_set_num_threads, OpenBLAS:
 *              openblas_set_num_threads)
 *   --reps     repetitions per case (default: 9 up to n=512, 5 up to 2048, 3 above)
 *   --json     output file (default bench_gemm.json)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "core/internal.h"
#include "omp/gemm.h"
#include "tessera.h"

#if TSR_BENCH_HAVE_OPENBLAS
#include <cblas.h>

#include "bench_util.h"
void openblas_set_num_threads(int num_threads);
char *openblas_get_corename(void);
char *openblas_get_config(void);
#endif

typedef struct bench_case {
  int64_t m, n, k;
} bench_case;

typedef struct bench_result {
  const char *dtype;
  int threads;
  bench_case cs;
  double ours, api, vendor; /* GFLOP/s medians, NAN when not measured */
} bench_result;

static void pause_ms(int ms) {
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Parses "a,b,c" into up to max int64 values; returns the count. */
static int parse_list(const char *s, int64_t *out, int max) {
  int n = 0;
  while (*s && n < max) {
    char *end = NULL;
    const long long v = strtoll(s, &end, 10);
    if (end == s) break;
    if (v > 0) out[n++] = v;
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

/* A JSON number, or null for NaN (not measured). */
static const char *json_num(double v, char *buf) {
  if (isnan(v)) return "null";
  snprintf(buf, 32, "%.3f", v);
  return buf;
}

enum { IMPL_OURS = 0, IMPL_API = 1, IMPL_VENDOR = 2 };

typedef struct bench_ctx {
  tsr_dtype dtype;
  bench_case cs;
  void *a, *b, *c;
  tsr_array *ta, *tb, *tc;
} bench_ctx;

/* One run of an implementation; returns seconds, or -1 on failure. */
static double run_once(const bench_ctx *x, int impl) {
  const int m = (int)x->cs.m, n = (int)x->cs.n, k = (int)x->cs.k;
  double t0 = now_s();
  if (impl == IMPL_OURS) {
    tsr__gemm_args g = {.dtype = x->dtype,
                        .m = m,
                        .n = n,
                        .k = k,
                        .alpha = 1.0,
                        .beta = 0.0,
                        .a = x->a,
                        .lda = k,
                        .b = x->b,
                        .ldb = n,
                        .c = x->c,
                        .ldc = n,
                        .path = TSR_GEMM_NATIVE};
    if (tsr__omp_gemm(TSR_CPU, &g) != TSR_OK) return -1;
  } else if (impl == IMPL_API) {
    if (tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, x->ta, x->tb, 0.0, x->tc, TSR_GEMM_NATIVE) !=
        TSR_OK)
      return -1;
  } else {
#if TSR_BENCH_HAVE_OPENBLAS
    if (x->dtype == TSR_F32)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, x->a, k, x->b, n, 0.0f,
                  x->c, n);
    else
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, x->a, k, x->b, n, 0.0,
                  x->c, n);
#else
    return -1;
#endif
  }
  return now_s() - t0;
}

static void set_threads(int impl, int t) {
  if (impl == IMPL_VENDOR) {
#if TSR_BENCH_HAVE_OPENBLAS
    openblas_set_num_threads(t);
#endif
  } else {
    omp_set_num_threads(t);
  }
}

int main(int argc, char **argv) {
  int64_t sizes[16] = {256, 512, 1024, 2048, 4096}, threads[8] = {1, 2};
  int nsizes = 5, nthreads = 2, reps_opt = 0, tall = 1, api = 1, pause = 200;
  int dt_s = 1, dt_d = 1;
  const char *json = "bench_gemm.json";
  for (int i = 1; i < argc; ++i) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(o, "--sizes") == 0 && v)
      nsizes = parse_list(v, sizes, 16), ++i;
    else if (strcmp(o, "--threads") == 0 && v)
      nthreads = parse_list(v, threads, 8), ++i;
    else if (strcmp(o, "--reps") == 0 && v)
      reps_opt = atoi(v), ++i;
    else if (strcmp(o, "--pause-ms") == 0 && v)
      pause = atoi(v), ++i;
    else if (strcmp(o, "--json") == 0 && v)
      json = v, ++i;
    else if (strcmp(o, "--dtypes") == 0 && v) {
      dt_s = strchr(v, 's') != NULL;
      dt_d = strchr(v, 'd') != NULL;
      ++i;
    } else if (strcmp(o, "--no-tall") == 0)
      tall = 0;
    else if (strcmp(o, "--no-api") == 0)
      api = 0;
    else {
      fprintf(stderr,
              "usage: %s [--sizes 256,512,...] [--no-tall] [--threads 1,2] [--dtypes s,d] "
              "[--reps N] [--pause-ms MS] [--no-api] [--json FILE]\n",
              argv[0]);
      return 2;
    }
  }
  bench_case cases[24];
  int ncases = 0;
  for (int i = 0; i < nsizes; ++i)
    cases[ncases++] = (bench_case){sizes[i], sizes[i], sizes[i]};
  if (tall) {
    cases[ncases++] = (bench_case){4096, 4096, 64};
    cases[ncases++] = (bench_case){4096, 4096, 256};
  }
  /* Context for reading the figures on a shared machine. */
  char loadavg[64] = "unknown";
  FILE *la = fopen("/proc/loadavg", "r");
  if (la) {
    if (!fgets(loadavg, sizeof loadavg, la)) snprintf(loadavg, sizeof loadavg, "unknown");
    loadavg[strcspn(loadavg, "\n")] = '\0';
    fclose(la);
  }
  const char *wait_policy = getenv("OMP_WAIT_POLICY"), *proc_bind = getenv("OMP_PROC_BIND");
  printf("load average: %s; OMP_WAIT_POLICY=%s OMP_PROC_BIND=%s; omp_get_max_threads()=%d\n",
         loadavg, wait_policy ? wait_policy : "(unset)", proc_bind ? proc_bind : "(unset)",
         omp_get_max_threads());
  int have_vendor = 0;
#if TSR_BENCH_HAVE_OPENBLAS
  have_vendor = 1;
  printf("anchor: OpenBLAS %s (core %s)\n", openblas_get_config(), openblas_get_corename());
#else
  printf("anchor: none (OpenBLAS not found at configure time)\n");
#endif
  tsr_dtype dtypes[2];
  int ndt = 0;
  if (dt_s) dtypes[ndt++] = TSR_F32;
  if (dt_d) dtypes[ndt++] = TSR_F64;
  for (int d = 0; d < ndt; ++d) {
    const tsr__gemm_kernel *kr = tsr__gemm_kernel_get(dtypes[d]);
    printf("tessera %s micro-kernel: %s, MR=%d NR=%d KC=%lld MC=%lld NC=%lld\n",
           dtypes[d] == TSR_F32 ? "sgemm" : "dgemm", kr->name, kr->mr, kr->nr, (long long)kr->kc,
           (long long)kr->mc, (long long)kr->nc);
  }
  printf("\n%-6s %3s %6s %6s %6s %12s %12s %12s %8s\n", "dtype", "thr", "m", "n", "k", "tessera",
         "tsr_gemm", "openblas", "ratio");
  printf("%-6s %3s %6s %6s %6s %12s %12s %12s %8s\n", "", "", "", "", "", "GFLOP/s", "GFLOP/s",
         "GFLOP/s", "ours/ob");

  bench_result *res = calloc((size_t)(ndt * nthreads * ncases), sizeof *res);
  int nres = 0, rc = 0;
  if (!res) return 1;
  for (int d = 0; d < ndt && rc == 0; ++d) {
    const tsr_dtype dtype = dtypes[d];
    const size_t es = dtype == TSR_F32 ? 4 : 8;
    for (int ci = 0; ci < ncases && rc == 0; ++ci) {
      const bench_case cs = cases[ci];
      bench_ctx x = {.dtype = dtype, .cs = cs};
      const size_t na = (size_t)(cs.m * cs.k), nb = (size_t)(cs.k * cs.n),
                   nc = (size_t)(cs.m * cs.n);
      x.a = aligned_alloc(64, (na * es + 63) / 64 * 64);
      x.b = aligned_alloc(64, (nb * es + 63) / 64 * 64);
      x.c = aligned_alloc(64, (nc * es + 63) / 64 * 64);
      if (!x.a || !x.b || !x.c) {
        fprintf(stderr, "out of memory for %lldx%lldx%lld\n", (long long)cs.m, (long long)cs.n,
                (long long)cs.k);
        rc = 1;
      }
      unsigned long long s = 12345;
      for (size_t i = 0; rc == 0 && i < na + nb; ++i) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        const double v = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
        void *base = i < na ? x.a : x.b;
        const size_t j = i < na ? i : i - na;
        if (dtype == TSR_F32)
          ((float *)base)[j] = (float)v;
        else
          ((double *)base)[j] = v;
      }
      if (rc == 0) memset(x.c, 0, nc * es);
      if (rc == 0 && api) {
        const int64_t sa[2] = {cs.m, cs.k}, sb[2] = {cs.k, cs.n}, sc[2] = {cs.m, cs.n};
        if (tsr_from_host_view(2, sa, NULL, dtype, x.a, &x.ta) != TSR_OK ||
            tsr_from_host_view(2, sb, NULL, dtype, x.b, &x.tb) != TSR_OK ||
            tsr_from_host_view(2, sc, NULL, dtype, x.c, &x.tc) != TSR_OK) {
          fprintf(stderr, "tsr_from_host_view: %s\n", tsr_last_error());
          rc = 1;
        }
      }
      const int64_t big = cs.m > cs.n ? (cs.m > cs.k ? cs.m : cs.k) : (cs.n > cs.k ? cs.n : cs.k);
      int reps = reps_opt > 0 ? reps_opt : big <= 512 ? 9 : big <= 2048 ? 5 : 3;
      if (cs.k < 512 && reps_opt <= 0) reps = 5;
      if (reps > 64) reps = 64;
      for (int ti = 0; ti < nthreads && rc == 0; ++ti) {
        const int t = (int)threads[ti];
        double times[3][64];
        int impls[3], nimpl = 0;
        impls[nimpl++] = IMPL_OURS;
        if (api) impls[nimpl++] = IMPL_API;
        if (have_vendor) impls[nimpl++] = IMPL_VENDOR;
        /* Warm-up: caches, packing buffers, thread pools. */
        for (int q = 0; q < nimpl && rc == 0; ++q) {
          set_threads(impls[q], t);
          if (run_once(&x, impls[q]) < 0) {
            fprintf(stderr, "gemm failed: %s\n", tsr_last_error());
            rc = 1;
          }
          pause_ms(pause);
        }
        for (int r = 0; r < reps && rc == 0; ++r)
          for (int q = 0; q < nimpl && rc == 0; ++q) {
            set_threads(impls[q], t);
            times[impls[q]][r] = run_once(&x, impls[q]);
            if (times[impls[q]][r] < 0) rc = 1;
            pause_ms(pause);
          }
        if (rc) break;
        const double flop = 2.0 * (double)cs.m * (double)cs.n * (double)cs.k;
        bench_result *br = &res[nres++];
        br->dtype = dtype == TSR_F32 ? "f32" : "f64";
        br->threads = t;
        br->cs = cs;
        br->ours = flop / median(times[IMPL_OURS], reps) * 1e-9;
        br->api = api ? flop / median(times[IMPL_API], reps) * 1e-9 : NAN;
        br->vendor = have_vendor ? flop / median(times[IMPL_VENDOR], reps) * 1e-9 : NAN;
        printf("%-6s %3d %6lld %6lld %6lld %12.1f %12.1f %12.1f %8.2f\n", br->dtype, t,
               (long long)cs.m, (long long)cs.n, (long long)cs.k, br->ours, br->api, br->vendor,
               br->ours / br->vendor);
        fflush(stdout);
      }
      tsr_array_release(x.ta);
      tsr_array_release(x.tb);
      tsr_array_release(x.tc);
      free(x.a);
      free(x.b);
      free(x.c);
    }
  }

  FILE *f = fopen(json, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", json);
    free(res);
    return 1;
  }
  fprintf(f, "{\n  \"benchmark\": \"gemm_cpu\",\n  \"anchor\": \"%s\",\n",
          have_vendor ? "openblas" : "none");
  for (int d = 0; d < 2; ++d) {
    const tsr__gemm_kernel *kr = tsr__gemm_kernel_get(d == 0 ? TSR_F32 : TSR_F64);
    fprintf(f,
            "  \"kernel_%s\": {\"name\": \"%s\", \"mr\": %d, \"nr\": %d, \"kc\": %lld, "
            "\"mc\": %lld, \"nc\": %lld},\n",
            d == 0 ? "f32" : "f64", kr->name, kr->mr, kr->nr, (long long)kr->kc, (long long)kr->mc,
            (long long)kr->nc);
  }
  fprintf(f, "  \"loadavg_at_start\": \"%s\",\n", loadavg);
  fprintf(f, "  \"unit\": \"GFLOP/s\",\n  \"results\": [\n");
  for (int i = 0; i < nres; ++i) {
    const bench_result *r = &res[i];
    char b1[32], b2[32], b3[32];
    fprintf(f,
            "    {\"dtype\": \"%s\", \"threads\": %d, \"m\": %lld, \"n\": %lld, \"k\": %lld, "
            "\"tessera\": %.3f, \"tsr_gemm\": %s, \"openblas\": %s, \"ratio\": %s}%s\n",
            r->dtype, r->threads, (long long)r->cs.m, (long long)r->cs.n, (long long)r->cs.k,
            r->ours, json_num(r->api, b1), json_num(r->vendor, b2),
            json_num(r->ours / r->vendor, b3), i + 1 < nres ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  fclose(f);
  printf("\nwrote %s\n", json);
  free(res);
  return rc;
}
