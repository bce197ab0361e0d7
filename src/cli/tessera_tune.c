/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tessera-tune: measures the CPU GEMM's candidate configurations on this machine and writes
 * the best ones as wisdom (FFTW's idea and word), which the library reads on its first GEMM.
 *
 *   tessera-tune [--seconds S] [--threads 1,2] [--dtypes s,d] [--out FILE]
 *   tessera-tune --show
 *
 * For each dtype (f32, f64) and thread count (default: 1 and omp_get_max_threads()), it
 * searches, one coordinate at a time from the registry's default: the micro-kernels this CPU
 * can run, then KC, then MC, then NC, then the thread partition (work units per thread), scoring
 * each candidate by the geometric mean GFLOP/s of three problems (512^3, 1536^3 and 2048 x 2048 x
 * 128, row-major, best of three runs each; one thread in process CPU time, several in wall time),
 * all through the packed path (the small-matrix path has no blocks to tune).
 * The winner is then timed against the default, interleaved, and kept only when its median is
 * faster. The whole search stays within --seconds (default 50, at most 60); progress goes to
 * stderr.
 *
 * The wisdom file is $TSR_WISDOM, else $XDG_CACHE_HOME/tessera/wisdom, else
 * ~/.cache/tessera/wisdom (--out overrides). It is checked before any measuring: it must be a
 * regular file or a new name in a writable directory; a character device, FIFO, socket,
 * directory or symbolic link is refused (exit 1, nothing tuned), never replaced: for a
 * symbolic link, name its target. The file is written through the library's checked write
 * path (a temporary beside it, synced, renamed) and merged under a lock (PATH.lock, left
 * beside it): the entries in the file at the time of writing for other (dtype, threads) pairs
 * are kept, so concurrent tuners keep each other's entries. --dtypes takes a comma-separated
 * list of dtype names or BLAS letters: s (f32), d (f64), c (c64) and z (c128); a complex dtype
 * tunes its real dtype. --show prints the CPU, the file, whether the library
 * uses it (or why it ignores it) and the configuration every (dtype, threads) runs with; the
 * complex dtypes c64 and c128 run by the 1m method with f32's and f64's (so tuning f32 and f64
 * tunes them too).
 * Exit status: 0 on success, 1 on a failure (message on stderr), 2 on bad usage.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "timing.h"
/* The one internal interface it uses: the CPU GEMM's tuning interface (the tuning object,
   the registry's configurations and kernels, the wisdom file, the host CPU's facts). */
#include "omp/gemm/gemm_tune.h"
#include "tessera.h"

typedef struct problem {
  int64_t m, n, k;
} problem;

static const problem problems[] = {{512, 512, 512}, {1536, 1536, 1536}, {2048, 2048, 128}};
enum { NPROB = sizeof problems / sizeof problems[0] };

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct tuner {
  tsr_dtype dtype;
  int nt;
  void *a, *b, *c;
  /* Passed with every measured call: the candidate configuration, the thread count asked for
     (no adaptive count), the packed path (512^3 f32 would otherwise take the small-matrix
     path, where blocks and grains change nothing), no wisdom. */
  tsr__gemm_tuning tuning;
  double deadline; /* now_s() value at which to stop searching */
  double end;      /* ... and at which to stop confirming (the end of this share) */
  int evals;
} tuner;

/* Seconds of one run of problem p under t's tuning, or -1. One thread is timed
   in process CPU time, which other processes' preemptions do not inflate (a shared machine);
   several threads in wall time (their waits for each other are part of the cost). */
static double run_problem(const tuner *t, const problem *p) {
  tsr__gemm_args g = {.dtype = t->dtype,
                      .m = p->m,
                      .n = p->n,
                      .k = p->k,
                      .alpha = 1.0,
                      .beta = 0.0,
                      .a = t->a,
                      .lda = p->k,
                      .b = t->b,
                      .ldb = p->n,
                      .c = t->c,
                      .ldc = p->n,
                      .path = TSR_GEMM_NATIVE,
                      .tuning = &t->tuning};
  const clockid_t id = t->nt == 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
  const double t0 = clock_s(id);
  if (tsr__omp_gemm(TSR_CPU, &g) != TSR_OK) return -1;
  return clock_s(id) - t0;
}

/* Score of cfg: geometric mean GFLOP/s over the problems, best of `reps` runs each. */
static double score(tuner *t, const tsr__gemm_config *cfg, int reps) {
  const int d = t->dtype == TSR_F32 ? 0 : 1;
  t->tuning.config[d] = cfg;
  double logsum = 0;
  for (int i = 0; i < NPROB; ++i) {
    double best = INFINITY;
    for (int r = 0; r < reps && best >= 0; ++r) {
      const double s = run_problem(t, &problems[i]);
      best = s < 0 ? -1 : s < best ? s : best;
    }
    if (best < 0) {
      t->tuning.config[d] = NULL;
      return -1;
    }
    const double flop = 2.0 * (double)problems[i].m * (double)problems[i].n * (double)problems[i].k;
    logsum += log(flop / best * 1e-9);
  }
  t->tuning.config[d] = NULL;
  t->evals++;
  return exp(logsum / NPROB);
}

static void describe(char *buf, size_t size, const tsr__gemm_config *c) {
  snprintf(buf, size, "%s KC=%lld MC=%lld NC=%lld grain=%d", c->ker->name, (long long)c->kc,
           (long long)c->mc, (long long)c->nc, c->grain);
}

/* Tries cand; keeps it in *best when it scores higher. False once the time is up. */
static bool try_candidate(tuner *t, tsr__gemm_config *best, double *best_score,
                          tsr__gemm_config cand) {
  if (now_s() > t->deadline) return false;
  tsr__gemm_blocks_fix(cand.ker, &cand.kc, &cand.mc, &cand.nc, &cand.grain);
  const double s = score(t, &cand, 3);
  char d[160];
  describe(d, sizeof d, &cand);
  fprintf(stderr, "tessera-tune:   %-52s %8.1f GFLOP/s%s\n", d, s, s > *best_score ? "  *" : "");
  if (s > *best_score) {
    *best_score = s;
    *best = cand;
  }
  return true;
}

/* The coordinate search for one (dtype, threads); returns the configuration to keep. */
static tsr_status tune_one(tuner *t, tsr__gemm_config *out, bool *improved) {
  tsr__gemm_config base; /* the library's choice without wisdom (t->tuning.no_wisdom) */
  tsr__gemm_config_get(t->dtype, t->nt, &t->tuning, &base);
  base.source = "registry";
  tsr__gemm_config best = base;
  double best_score = score(t, &base, 3);
  if (best_score < 0) return TSR_ERR_INTERNAL;
  char d[160];
  describe(d, sizeof d, &base);
  fprintf(stderr, "tessera-tune: %s on %d thread(s), default %s: %.1f GFLOP/s\n",
          tsr_dtype_name(t->dtype), t->nt, d, best_score);
  /* 1. Kernels (the portable one only when nothing else runs). */
  const tsr__gemm_kernel *ks[8];
  const int nk = tsr__gemm_kernel_list(t->dtype, ks, 8);
  for (int i = 0; i < nk; ++i) {
    if (ks[i] == base.ker || (strcmp(ks[i]->isa, "portable") == 0 && nk > 1)) continue;
    tsr__gemm_config c = base;
    c.ker = ks[i];
    c.mc = base.mc / base.ker->mr * ks[i]->mr;
    if (!try_candidate(t, &best, &best_score, c)) break;
  }
  /* 2. KC, 3. MC (in micro-panels), 4. NC, 5. grain. */
  static const int64_t kcs[] = {192, 256, 384, 512, 768, 1024};
  const tsr__gemm_config after_kernel = best;
  for (size_t i = 0; i < sizeof kcs / sizeof kcs[0]; ++i) {
    if (kcs[i] == after_kernel.kc) continue;
    tsr__gemm_config c = after_kernel;
    c.kc = kcs[i];
    if (!try_candidate(t, &best, &best_score, c)) break;
  }
  static const int mcs[] = {4, 8, 12, 16, 24, 32};
  const tsr__gemm_config after_kc = best;
  for (size_t i = 0; i < sizeof mcs / sizeof mcs[0]; ++i) {
    tsr__gemm_config c = after_kc;
    c.mc = (int64_t)mcs[i] * c.ker->mr;
    if (c.mc == after_kc.mc) continue;
    if (!try_candidate(t, &best, &best_score, c)) break;
  }
  static const int64_t ncs[] = {1024, 2048, 4096};
  const tsr__gemm_config after_mc = best;
  for (size_t i = 0; i < sizeof ncs / sizeof ncs[0]; ++i) {
    tsr__gemm_config c = after_mc;
    c.nc = ncs[i] / c.ker->nr * c.ker->nr;
    if (c.nc == after_mc.nc) continue;
    if (!try_candidate(t, &best, &best_score, c)) break;
  }
  if (t->nt > 1) {
    static const int grains[] = {1, 2, 4, 8};
    const tsr__gemm_config after_nc = best;
    for (size_t i = 0; i < sizeof grains / sizeof grains[0]; ++i) {
      if (grains[i] == after_nc.grain) continue;
      tsr__gemm_config c = after_nc;
      c.grain = grains[i];
      if (!try_candidate(t, &best, &best_score, c)) break;
    }
  }
  /* Confirm: the winner against the default, interleaved, medians of up to 5 pairs (scores
     are best-of runs and a noisy machine flatters some candidates), within this share of the
     time; without at least one pair the default stays. */
  *improved = false;
  if (memcmp(&best, &base, sizeof best) != 0) {
    double sb[5], sw[5];
    int pairs = 0;
    while (pairs < 5 && now_s() < t->end) {
      sb[pairs] = score(t, &base, 1);
      sw[pairs] = score(t, &best, 1);
      ++pairs;
    }
    qsort(sb, (size_t)pairs, sizeof *sb, cmp_double);
    qsort(sw, (size_t)pairs, sizeof *sw, cmp_double);
    describe(d, sizeof d, &best);
    if (pairs > 0) {
      fprintf(stderr, "tessera-tune: confirm %s: %.1f vs default %.1f GFLOP/s (medians of %d)\n", d,
              sw[pairs / 2], sb[pairs / 2], pairs);
      /* A 3% margin: on a shared machine a noise-driven "win" must not replace the
         registry's measured default (seen: MC = 2 micro-panels "winning" by 1%). */
      *improved = sw[pairs / 2] > 1.03 * sb[pairs / 2];
    } else {
      fprintf(stderr, "tessera-tune: no time left to confirm %s: the default stays\n", d);
    }
  }
  *out = *improved ? best : base;
  return TSR_OK;
}

static void show_config(tsr_dtype dt, int nt) {
  tsr__gemm_config c;
  tsr__gemm_config_get(dt, nt, NULL, &c); /* what a library call gets */
  char d[160];
  describe(d, sizeof d, &c);
  printf("  %s, %d thread(s): %s (%s)\n", tsr_dtype_name(dt), nt, d, c.source);
}

static int show(void) {
  TSR_API_ENTRY_AS("tessera-tune"); /* messages of the wisdom calls name this program */
  char path[4096], state[700];
  const tsr__cpu_facts *f = tsr__cpu_facts_get();
  printf("CPU: %s (%s family 0x%X model 0x%X; registry entry: %s)\n", f->model_name, f->vendor,
         (unsigned)f->family, (unsigned)f->model, tsr__gemm_uarch_name());
  printf("caches: L1d %lld KiB %lld-way, L2 %lld KiB %lld-way, L3 %lld KiB\n",
         (long long)f->cache[0].size / 1024, (long long)f->cache[0].ways,
         (long long)f->cache[1].size / 1024, (long long)f->cache[1].ways,
         (long long)f->cache[2].size / 1024);
  if (tsr__gemm_wisdom_path(path, sizeof path) == TSR_OK)
    printf("wisdom file: %s\n", path);
  else
    printf("wisdom file: none (%s)\n", tsr_last_error());
  tsr__gemm_wisdom_status(state, sizeof state);
  printf("wisdom: %s\n", state);
  const int maxt = omp_get_max_threads();
  printf("configuration of a GEMM call:\n");
  for (int d = 0; d < 2; ++d)
    for (int nt = 1; nt <= maxt; nt = nt == maxt ? maxt + 1 : (nt * 2 > maxt ? maxt : nt * 2))
      show_config(d == 0 ? TSR_F32 : TSR_F64, nt);
  /* The complex dtypes run by the 1m method on their real dtype's kernel and blocks (its wisdom
     entries included): nothing of their own to tune. */
  printf("  c64: as f32, c128: as f64 (complex GEMM by the 1m method on the real kernels)\n");
  return 0;
}

/* --help: the usage and the options, on stdout. */
static int usage(void) {
  printf("usage: tessera-tune [--seconds S] [--threads N,...] [--dtypes s,d] [--out FILE]\n"
         "       tessera-tune --show | --version | --help\n"
         "Measures the CPU GEMM's configurations on this machine and writes the fastest as\n"
         "wisdom, which the library reads on its first GEMM.\n"
         "  --seconds S      time for the whole search, a number in (0, 60] (default 50)\n"
         "  --threads N,...  thread counts to tune, up to 8 in [1, 1024] (default: 1 and\n"
         "                   omp_get_max_threads())\n"
         "  --dtypes s,d     dtypes to tune: s (f32), d (f64), c (c64: tunes f32) and z\n"
         "                   (c128: tunes f64) (default s,d)\n"
         "  --out FILE       the wisdom file (default: $TSR_WISDOM, else\n"
         "                   $XDG_CACHE_HOME/tessera/wisdom, else ~/.cache/tessera/wisdom)\n"
         "  --show           the CPU, the wisdom file and the configuration of every dtype and\n"
         "                   thread count\n"
         "  --version        the version\n"
         "  -h, --help       this help\n"
         "exit status: 0 ok; 1 failure (message on stderr); 2 bad usage\n");
  return 0;
}

/* A usage error: what was wrong, and where the help is; exit status 2. */
static int usage_error(const char *fmt, const char *a, const char *b) {
  fputs("tessera-tune: ", stderr);
  fprintf(stderr, fmt, a, b);
  fputs("\ntry 'tessera-tune --help'\n", stderr);
  return 2;
}

/* The wisdom calls of the tuning interface with this program as the API context, so that
   their messages name it (tessera-tune: ...), not an internal function; the GEMMs it measures
   keep their own names. */
static tsr_status tune_call_path(char *path, size_t size) {
  TSR_API_ENTRY_AS("tessera-tune");
  return tsr__gemm_wisdom_path(path, size);
}
static tsr_status tune_call_check(const char *path) {
  TSR_API_ENTRY_AS("tessera-tune");
  return tsr__gemm_wisdom_check_path(path);
}
static tsr_status tune_call_update(const char *path, const tsr__gemm_wisdom *w, int *total) {
  TSR_API_ENTRY_AS("tessera-tune");
  return tsr__gemm_wisdom_update(path, w, total);
}

/* What the command line asks for. */
typedef struct options {
  double seconds;
  int threads[8], nthreads;
  bool dtype[2]; /* f32, f64 */
  const char *out;
} options;

/* The --dtypes list into o->dtype; false on a bad entry. Each entry is a dtype name as
   tsr_dtype_parse reads it (the dtype table's names) or a BLAS letter (s, d, c, z); a complex
   dtype selects its real dtype, whose kernel and blocks it runs on (1m). */
static bool parse_dtypes(const char *v, options *o) {
  static const char letters[] = "sdcz";
  o->dtype[0] = o->dtype[1] = false;
  for (const char *t = v;; ++t) {
    const size_t len = strcspn(t, ",");
    char name[16];
    if (len == 0 || len >= sizeof name) return false;
    memcpy(name, t, len);
    name[len] = '\0';
    tsr_dtype dt;
    const char *letter = len == 1 ? strchr(letters, name[0]) : NULL;
    if (letter) {
      static const tsr_dtype by_letter[] = {TSR_F32, TSR_F64, TSR_C64, TSR_C128};
      dt = by_letter[letter - letters];
    } else if (tsr_dtype_parse(name, &dt) != TSR_OK) {
      tsr_clear_error(); /* the usage message names the value */
      return false;
    }
    const tsr_dtype part = tsr__dtype_part(dt);
    if (part != TSR_F32 && part != TSR_F64) return false;
    o->dtype[part == TSR_F64] = true;
    t += len;
    if (!*t) return true;
  }
}

/* The --threads list into o->threads; false on a bad entry, an empty list or more than 8. */
static bool parse_threads(const char *v, options *o) {
  o->nthreads = 0;
  for (const char *s = v;;) {
    char *end = NULL;
    const long x = strtol(s, &end, 10);
    if (end == s || *s == ' ' || *s == '+' || x < 1 || x > 1024 || o->nthreads == 8) return false;
    o->threads[o->nthreads++] = (int)x;
    if (!*end) return true;
    if (*end != ',') return false;
    s = end + 1;
  }
}

/* Step 1: the options. Returns -1 to go on, else the exit status (--show or --version ran, or
   bad usage). */
static int parse_options(int argc, char **argv, options *o) {
  *o = (options){.seconds = 50, .dtype = {true, true}};
  for (int i = 1; i < argc; ++i) {
    const char *opt = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(opt, "--version") == 0) {
      const char *version = NULL;
      tsr_version(NULL, NULL, NULL, &version);
      printf("tessera-tune %s\n", version);
      return 0;
    }
    if (strcmp(opt, "--show") == 0) {
      tsr__gemm_wisdom_set_warn(false); /* it prints the reason itself */
      return show();
    }
    if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) return usage();
    const bool takes_value = strcmp(opt, "--seconds") == 0 || strcmp(opt, "--threads") == 0 ||
                             strcmp(opt, "--dtypes") == 0 || strcmp(opt, "--out") == 0;
    if (!takes_value)
      return usage_error(opt[0] == '-' ? "unknown option '%s'%s" : "unexpected argument '%s'%s",
                         opt, "");
    if (!v) return usage_error("option %s needs a value%s", opt, "");
    if (strcmp(opt, "--seconds") == 0) {
      char *end = NULL;
      o->seconds = strtod(v, &end);
      if (end == v || *end || !(o->seconds > 0 && o->seconds <= 60))
        return usage_error("bad value '%s' for %s: expected a number of seconds in (0, 60]", v,
                           opt);
    } else if (strcmp(opt, "--threads") == 0) {
      if (!parse_threads(v, o))
        return usage_error("bad value '%s' for %s: expected a comma-separated list of up to 8 "
                           "thread counts, each in [1, 1024]",
                           v, opt);
    } else if (strcmp(opt, "--dtypes") == 0) {
      if (!parse_dtypes(v, o))
        return usage_error("bad value '%s' for %s: expected a comma-separated list of s (f32), "
                           "d (f64), c (c64) and z (c128)",
                           v, opt);
    } else {
      if (!*v) return usage_error("option %s needs a non-empty file name%s", opt, "");
      o->out = v;
    }
    ++i;
  }
  if (o->nthreads == 0) {
    o->threads[o->nthreads++] = 1;
    if (omp_get_max_threads() > 1) o->threads[o->nthreads++] = omp_get_max_threads();
  }
  return -1;
}

/* Step 2: the wisdom file to write, checked before any measuring (a device, FIFO or link is
   refused now, not 50 s on). False with the message on stderr. */
static bool wisdom_target(const options *o, char *path, size_t size) {
  if (o->out) {
    if (snprintf(path, size, "%s", o->out) >= (int)size) {
      fprintf(stderr, "tessera-tune: --out: the path is longer than %zu bytes\n", size - 1);
      return false;
    }
  } else if (tune_call_path(path, size) != TSR_OK) {
    fprintf(stderr, "%s\n", tsr_last_error()); /* "tessera-tune: ..." */
    return false;
  }
  if (tune_call_check(path) != TSR_OK) {
    fprintf(stderr, "%s\n", tsr_last_error()); /* "tessera-tune: ..." */
    return false;
  }
  return true;
}

/* The measured problems' operands, sized for the largest of each. */
typedef struct operands {
  double *a, *b, *c;
  size_t na, nb;
} operands;

/* Step 3: allocates them. False (nothing held) when out of memory. */
static bool operands_alloc(operands *ops) {
  size_t nc = 0;
  ops->na = ops->nb = 0;
  for (int i = 0; i < NPROB; ++i) {
    const size_t a = (size_t)(problems[i].m * problems[i].k),
                 b = (size_t)(problems[i].k * problems[i].n),
                 c = (size_t)(problems[i].m * problems[i].n);
    ops->na = a > ops->na ? a : ops->na;
    ops->nb = b > ops->nb ? b : ops->nb;
    nc = c > nc ? c : nc;
  }
  ops->a = malloc(ops->na * 8);
  ops->b = malloc(ops->nb * 8);
  ops->c = malloc(nc * 8);
  if (ops->a && ops->b && ops->c) return true;
  fprintf(stderr, "tessera-tune: out of memory\n");
  free(ops->a);
  free(ops->b);
  free(ops->c);
  return false;
}

/* A and B random in [-1, 1] in dtype dt (the same values on every run). */
static void operands_fill(operands *ops, tsr_dtype dt) {
  unsigned long long s = 2024;
  for (size_t i = 0; i < ops->na + ops->nb; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const double v = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
    double *x = i < ops->na ? ops->a : ops->b;
    const size_t j = i < ops->na ? i : i - ops->na;
    if (dt == TSR_F32)
      ((float *)x)[j] = (float)v;
    else
      x[j] = v;
  }
}

/* Adds the configuration kept for (dt, nt) to w and prints it. False when w is full. */
static bool record(tsr__gemm_wisdom *w, tsr_dtype dt, int nt, const tsr__gemm_config *best,
                   bool improved, int evals, double since) {
  if (w->n >= TSR__GEMM_WISDOM_MAX) {
    fprintf(stderr, "tessera-tune: more than %d entries\n", TSR__GEMM_WISDOM_MAX);
    return false;
  }
  tsr__gemm_wisdom_entry *e = &w->e[w->n++];
  *e = (tsr__gemm_wisdom_entry){.dtype = dt,
                                .threads = nt,
                                .kc = best->kc,
                                .mc = best->mc,
                                .nc = best->nc,
                                .grain = best->grain};
  snprintf(e->kernel, sizeof e->kernel, "%s", best->ker->name);
  char desc[160];
  describe(desc, sizeof desc, best);
  printf("%s %d thread(s): %s%s (%d candidates, %.1f s so far)\n", tsr_dtype_name(dt), nt, desc,
         improved ? "" : " (the default: nothing measured faster)", evals, now_s() - since);
  fflush(stdout);
  return true;
}

/* Step 4: tunes every (dtype, threads) asked for, each in an equal share of the time left, into
   w. Returns the exit status. */
static int tune_all(const options *o, operands *ops, tsr__gemm_wisdom *w, double start) {
  const int ncombo = ((int)o->dtype[0] + (int)o->dtype[1]) * o->nthreads;
  int combo = 0;
  for (int d = 0; d < 2; ++d) {
    const tsr_dtype dt = d == 0 ? TSR_F32 : TSR_F64;
    if (!o->dtype[d]) continue;
    operands_fill(ops, dt);
    for (int ti = 0; ti < o->nthreads; ++ti, ++combo) {
      omp_set_num_threads(o->threads[ti]);
      /* An equal share of what is left (the confirmation runs inside it too). */
      const double left = o->seconds - (now_s() - start);
      const double share = left > 0 ? left / (ncombo - combo) : 0;
      tuner t = {.dtype = dt,
                 .nt = o->threads[ti],
                 .a = ops->a,
                 .b = ops->b,
                 .c = ops->c,
                 .tuning = TSR__GEMM_TUNING_DEFAULT,
                 .deadline = now_s() + 0.6 * share,
                 .end = now_s() + share};
      t.tuning.fixed_threads = true;
      t.tuning.sup_mnk = 0;
      t.tuning.no_wisdom = true;
      tsr__gemm_config best;
      bool improved = false;
      if (tune_one(&t, &best, &improved) != TSR_OK) {
        fprintf(stderr, "tessera-tune: a GEMM failed: %s\n", tsr_last_error());
        return 1;
      }
      if (!record(w, dt, o->threads[ti], &best, improved, t.evals, start)) return 1;
    }
  }
  return 0;
}

/* Step 5: merges w into the file at path, under its lock. Returns the exit status. */
static int write_wisdom(const char *path, const tsr__gemm_wisdom *w, double start) {
  int total = 0;
  if (tune_call_update(path, w, &total) != TSR_OK) {
    fprintf(stderr, "%s\n", tsr_last_error()); /* "tessera-tune: ..." */
    return 1;
  }
  printf("wrote %s (%d entries) in %.1f s\n", path, total, now_s() - start);
  return 0;
}

int main(int argc, char **argv) {
  options o;
  const int done = parse_options(argc, argv, &o);
  if (done >= 0) return done;
  char path[4096];
  if (!wisdom_target(&o, path, sizeof path)) return 1;
  const tsr__cpu_facts *facts = tsr__cpu_facts_get();
  fprintf(stderr, "tessera-tune: %s (registry: %s), up to %.0f s, writing %s\n", facts->model_name,
          tsr__gemm_uarch_name(), o.seconds, path);
  operands ops;
  if (!operands_alloc(&ops)) return 1;
  /* This run's entries; the file's others are merged in at the end, under its lock. */
  tsr__gemm_wisdom w;
  memset(&w, 0, sizeof w);
  snprintf(w.cpu, sizeof w.cpu, "%s", facts->model_name);
  const double start = now_s();
  const int rc = tune_all(&o, &ops, &w, start);
  free(ops.a);
  free(ops.b);
  free(ops.c);
  return rc ? rc : write_wisdom(path, &w, start);
}
