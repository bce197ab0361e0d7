/*
 * tessera-gemm: the distributed matrix multiplication job.
 *
 *   mpirun -np 4 tessera-gemm -a A.npy -b B.npy -o C.npy
 *   mpirun -np 4 tessera-gemm -m 4096 -n 4096 -k 4096 --dtype f32 --repeat 5
 *
 * Every rank parses the same command line; rank 0 alone prints. Errors are agreed on by all
 * ranks (so every rank exits with the same code and none hangs): 0 ok, 1 runtime error,
 * 2 usage error, 3 verification failed. See usage() for the options.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessera.h"
#if TSR_HAVE_OPENMP
#include <omp.h>
#endif

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_VERIFY = 3 };

/* Default problem when no input is given: documented in usage(). */
#define DEFAULT_SIZE 2048
#define DEFAULT_BLOCK 256
#define DEFAULT_SEED 42
/* The gathered serial float64 comparison runs when m * n * k is at most this. */
#define SERIAL_CHECK_LIMIT (INT64_C(1) << 27)

typedef struct options {
  const char *a_path, *b_path, *c_path, *json_path;
  int64_t m, n, k;
  int have_m, have_n, have_k;
  uint64_t seed;
  tsr_dtype dtype;
  int dtype_given;
  int transa, transb;
  int p, q;
  int64_t block;
  const char *device;
  int repeat, warmup;
  int verify;
  int progress;
  int help;
} options;

static int g_rank = 0, g_size = 1;

/* Prints from rank 0 only. */
static void say(FILE *f, const char *fmt, ...) {
  if (g_rank != 0) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
}

static void usage(FILE *f) {
  say(f,
      "usage: tessera-gemm [options]\n"
      "Distributed C = op(A) * op(B) with SUMMA over MPI (run it under mpirun/mpiexec).\n"
      "\n"
      "input (files, or random matrices):\n"
      "  -a FILE, -b FILE     A and B from 2-D .npy files (f32 or f64, the same dtype;\n"
      "                       C or Fortran order, either byte order, format 1.0-3.0)\n"
      "  -m M -n N -k K       random A (M x K) and B (K x N), uniform in [-1, 1) from\n"
      "                       Philox4x32-10: A with seed S, B with seed S+1 (the values\n"
      "                       do not depend on the grid or the block size)\n"
      "  --seed S             seed of the random inputs and of the check (default %d)\n"
      "  --dtype f32|f64      dtype of random inputs (default f64; files keep theirs)\n"
      "  With no input options, the default problem is -m %d -n %d -k %d --dtype f64.\n"
      "\n"
      "computation:\n"
      "  --transa, --transb   multiply by the transpose of A / B (op(X) = X^T)\n"
      "  --grid PxQ           process grid, P*Q = number of ranks (default: near-square,\n"
      "                       P <= Q); rank r is at process row r / Q, column r %% Q\n"
      "  --block NB           block size of the 2D block-cyclic layout and SUMMA panel\n"
      "                       width (default %d)\n"
      "  --device D           auto|cpu|cuda|hip (default auto: each rank takes GPU\n"
      "                       (node-local rank mod GPU count) when the node has GPUs)\n"
      "  --repeat R           timed runs (default 1); timings are medians\n"
      "  --warmup W           untimed runs before them (default 0)\n"
      "\n"
      "output and checks:\n"
      "  -o FILE              write C as a .npy file (C order), collectively with MPI-IO;\n"
      "                       written only when the verification passed\n"
      "  --verify, --no-verify  Freivalds' check (C x against A (B x), O(n^2), on by\n"
      "                       default), plus an elementwise comparison with a serial\n"
      "                       float64 product on rank 0 when m*n*k <= 2^27\n"
      "  --json FILE          write the results as JSON\n"
      "  --progress           report 'panel k of K' on stderr\n"
      "  -h, --help           this help\n"
      "\n"
      "threads: when OMP_NUM_THREADS is unset, the cores of each node are split among the\n"
      "ranks on that node.\n"
      "exit codes: 0 ok; 1 runtime error (unreadable or malformed file, unsupported dtype,\n"
      "inner dimensions differ, no such device, unwritable output, out of memory); 2 usage\n"
      "error (bad option, grid not matching the number of ranks, command lines that differ\n"
      "between ranks); 3 verification failed.\n",
      DEFAULT_SEED, DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_BLOCK);
}

/* ---------------------------------------------------------------- agreement ----------- */

/*
 * Every rank passes its exit code (0 when fine) and message; all return the largest code, and
 * rank 0 prints the message of the lowest rank that failed with it.
 */
static int agree(int code, const char *msg) {
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst == 0) return 0;
  int mine = code == worst ? g_rank : g_size, first = g_size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  char buf[1200];
  memset(buf, 0, sizeof buf);
  if (g_rank == first) snprintf(buf, sizeof buf, "%s", msg ? msg : "");
  MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, MPI_COMM_WORLD);
  buf[sizeof buf - 1] = '\0';
  say(stderr, "tessera-gemm: error: %s\n", buf);
  if (worst == EXIT_USAGE) say(stderr, "try 'tessera-gemm --help'\n");
  return worst;
}

/* Exit code for a library status (the library already agreed across ranks). */
static int lib_fail(tsr_status st, int code) {
  say(stderr, "tessera-gemm: error: %s (%s)\n", tsr_last_error(), tsr_status_name(st));
  return code;
}

/* ---------------------------------------------------------------- parsing ------------- */

static int parse_i64(const char *s, int64_t lo, int64_t *out) {
  if (!s || !*s) return 0;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < lo) return 0;
  *out = v;
  return 1;
}

/* Parses argv into o; on a usage error writes the message and returns 0. */
static int parse(int argc, char **argv, options *o, char *msg, size_t cap) {
  memset(o, 0, sizeof *o);
  o->seed = DEFAULT_SEED;
  o->dtype = TSR_F64;
  o->block = DEFAULT_BLOCK;
  o->device = "auto";
  o->repeat = 1;
  o->verify = 1;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *val = NULL;
    char name[64];
    /* --opt=value and --opt value are both accepted. */
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    if (eq) {
      size_t len = (size_t)(eq - arg);
      if (len >= sizeof name) len = sizeof name - 1;
      memcpy(name, arg, len);
      name[len] = '\0';
      val = eq + 1;
    } else {
      snprintf(name, sizeof name, "%s", arg);
    }
#define FLAG(s) (strcmp(name, (s)) == 0)
#define VALUE()                                                                                    \
  do {                                                                                             \
    if (!val) {                                                                                    \
      if (i + 1 >= argc) {                                                                         \
        snprintf(msg, cap, "option %s needs a value", name);                                       \
        return 0;                                                                                  \
      }                                                                                            \
      val = argv[++i];                                                                             \
    }                                                                                              \
  } while (0)
#define BAD(what)                                                                                  \
  do {                                                                                             \
    snprintf(msg, cap, "bad value '%s' for %s: expected %s", val, name, (what));                   \
    return 0;                                                                                      \
  } while (0)
    int64_t v = 0;
    if (FLAG("-h") || FLAG("--help")) {
      o->help = 1;
    } else if (FLAG("-a")) {
      VALUE();
      o->a_path = val;
    } else if (FLAG("-b")) {
      VALUE();
      o->b_path = val;
    } else if (FLAG("-o")) {
      VALUE();
      o->c_path = val;
    } else if (FLAG("-m") || FLAG("-n") || FLAG("-k")) {
      VALUE();
      if (!parse_i64(val, 0, &v)) BAD("an integer >= 0");
      if (name[1] == 'm') o->m = v, o->have_m = 1;
      if (name[1] == 'n') o->n = v, o->have_n = 1;
      if (name[1] == 'k') o->k = v, o->have_k = 1;
    } else if (FLAG("--seed")) {
      VALUE();
      if (!parse_i64(val, 0, &v)) BAD("an integer >= 0");
      o->seed = (uint64_t)v;
    } else if (FLAG("--dtype")) {
      VALUE();
      if (strcmp(val, "f32") == 0)
        o->dtype = TSR_F32;
      else if (strcmp(val, "f64") == 0)
        o->dtype = TSR_F64;
      else
        BAD("f32 or f64");
      o->dtype_given = 1;
    } else if (FLAG("--transa")) {
      o->transa = 1;
    } else if (FLAG("--transb")) {
      o->transb = 1;
    } else if (FLAG("--grid")) {
      VALUE();
      int p = 0, q = 0;
      char tail = 0;
      if (sscanf(val, "%dx%d%c", &p, &q, &tail) != 2 || p < 1 || q < 1) BAD("PxQ, e.g. 2x4");
      o->p = p;
      o->q = q;
    } else if (FLAG("--block")) {
      VALUE();
      if (!parse_i64(val, 1, &v) || v > 1 << 20) BAD("an integer in [1, 1048576]");
      o->block = v;
    } else if (FLAG("--device")) {
      VALUE();
      if (strcmp(val, "auto") && strcmp(val, "cpu") && strcmp(val, "cuda") && strcmp(val, "hip"))
        BAD("auto, cpu, cuda or hip");
      o->device = val;
    } else if (FLAG("--repeat") || FLAG("--warmup")) {
      VALUE();
      int64_t lo = FLAG("--repeat") ? 1 : 0;
      if (!parse_i64(val, lo, &v) || v > 1000000) BAD(lo ? "an integer >= 1" : "an integer >= 0");
      if (FLAG("--repeat"))
        o->repeat = (int)v;
      else
        o->warmup = (int)v;
    } else if (FLAG("--verify")) {
      o->verify = 1;
    } else if (FLAG("--no-verify")) {
      o->verify = 0;
    } else if (FLAG("--json")) {
      VALUE();
      o->json_path = val;
    } else if (FLAG("--progress")) {
      o->progress = 1;
    } else {
      snprintf(msg, cap, "unknown option '%s'", arg);
      return 0;
    }
    if (eq && !val) {
      snprintf(msg, cap, "option %s takes no value", name);
      return 0;
    }
#undef FLAG
#undef VALUE
#undef BAD
  }
  int files = o->a_path || o->b_path, sizes = o->have_m || o->have_n || o->have_k;
  if (files && sizes) {
    snprintf(msg, cap, "give either -a/-b files or -m/-n/-k sizes, not both");
    return 0;
  }
  if (files && !(o->a_path && o->b_path)) {
    snprintf(msg, cap, "file input needs both -a and -b");
    return 0;
  }
  if (sizes && !(o->have_m && o->have_n && o->have_k)) {
    snprintf(msg, cap, "random input needs all of -m, -n and -k");
    return 0;
  }
  if (!files && !sizes) {
    o->m = o->n = o->k = DEFAULT_SIZE;
  }
  if (files && o->dtype_given) {
    snprintf(msg, cap, "--dtype applies to random inputs only (files keep their dtype)");
    return 0;
  }
  return 1;
}

/* FNV-1a over the argument vector, to detect ranks started with different command lines. */
static uint64_t hash_args(int argc, char **argv) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < argc; i++) {
    for (const unsigned char *p = (const unsigned char *)argv[i]; *p; p++) {
      h ^= *p;
      h *= 1099511628211ull;
    }
    h ^= 0xff; /* separator */
    h *= 1099511628211ull;
  }
  return h;
}

/* ---------------------------------------------------------------- environment -------- */

typedef struct rank_env {
  int local_rank, local_size, threads;
  tsr_device device;
  char device_name[64];
  char host[64];
} rank_env;

static void setup_threads(rank_env *env) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &env->local_rank);
  MPI_Comm_size(node, &env->local_size);
  MPI_Comm_free(&node);
  env->threads = 1;
#if TSR_HAVE_OPENMP
  if (!getenv("OMP_NUM_THREADS")) {
    int cores = omp_get_num_procs();
    int t = cores / (env->local_size > 0 ? env->local_size : 1);
    omp_set_num_threads(t > 0 ? t : 1);
  }
  env->threads = omp_get_max_threads();
#endif
  if (gethostname(env->host, sizeof env->host) != 0) snprintf(env->host, sizeof env->host, "?");
  env->host[sizeof env->host - 1] = '\0';
}

/* Picks this rank's device; returns 0 or an exit code with msg. */
static int pick_device(const char *want, rank_env *env, char *msg, size_t cap) {
  env->device = TSR_CPU;
  int ncuda = 0, nhip = 0;
  tsr_device_count(TSR_DEVICE_CUDA, &ncuda);
  tsr_device_count(TSR_DEVICE_HIP, &nhip);
  if (strcmp(want, "cuda") == 0 || (strcmp(want, "auto") == 0 && ncuda > 0)) {
    if (ncuda == 0) {
      snprintf(msg, cap, "--device cuda: no CUDA GPU on %s (rank %d)", env->host, g_rank);
      return EXIT_RUNTIME;
    }
    env->device = (tsr_device){TSR_DEVICE_CUDA, env->local_rank % ncuda};
  } else if (strcmp(want, "hip") == 0 || (strcmp(want, "auto") == 0 && nhip > 0)) {
    if (nhip == 0) {
      snprintf(msg, cap, "--device hip: no HIP GPU on %s (rank %d)", env->host, g_rank);
      return EXIT_RUNTIME;
    }
    env->device = (tsr_device){TSR_DEVICE_HIP, env->local_rank % nhip};
  }
  tsr_device_string(env->device, env->device_name, sizeof env->device_name);
  return 0;
}

/* Checks on rank 0 that the output file can be created, before any work is done. */
static int check_output_path(const char *path, char *msg, size_t cap) {
  if (g_rank != 0 || !path) return 0;
  struct stat sb;
  if (*path == '\0') {
    snprintf(msg, cap, "output path is empty");
    return EXIT_RUNTIME;
  }
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    snprintf(msg, cap, "output '%s' is a directory", path);
    return EXIT_RUNTIME;
  }
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == dir)
    dir[1] = '\0';
  else
    *slash = '\0';
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    snprintf(msg, cap, "cannot write '%.400s': directory '%.400s' does not exist", path, dir);
    return EXIT_RUNTIME;
  }
  if (access(dir, W_OK) != 0) {
    snprintf(msg, cap, "cannot write '%.400s': directory '%.400s' is not writable (%s)", path, dir,
             strerror(errno));
    return EXIT_RUNTIME;
  }
  return 0;
}

/* ---------------------------------------------------------------- checks -------------- */

static double eps_of(tsr_dtype dt) {
  return dt == TSR_F32 ? (double)FLT_EPSILON / 2 : DBL_EPSILON / 2;
}

/* Rank 0: op(A) op(B) in float64 from the gathered matrices, compared elementwise with C
   against the rounding scale |op(A)| |op(B)|. Returns the worst error / scale. */
static double serial_check(const options *o, tsr_dtype dt, int64_t m, int64_t n, int64_t k,
                           const void *a, const void *b, const void *c) {
  /* Gathered column-major: A is (transa ? k x m : m x k), B is (transb ? n x k : k x n). */
  int64_t lda = o->transa ? k : m, ldb = o->transb ? n : k;
#define VAL(p, idx) (dt == TSR_F32 ? (double)((const float *)(p))[idx] : ((const double *)(p))[idx])
  double worst = 0.0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      double sum = 0.0, scale = 0.0;
      for (int64_t p = 0; p < k; p++) {
        double av = o->transa ? VAL(a, p + i * lda) : VAL(a, i + p * lda);
        double bv = o->transb ? VAL(b, j + p * ldb) : VAL(b, p + j * ldb);
        sum += av * bv;
        scale += fabs(av * bv);
      }
      double diff = fabs(VAL(c, i + j * m) - sum);
      double r = scale > 0 ? diff / scale : diff;
      if (isnan(r)) return r;
      if (r > worst) worst = r;
    }
#undef VAL
  return worst;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct progress_ctx {
  int run, runs;
} progress_ctx;

static void progress_cb(int64_t panel, int64_t panels, void *ctx) {
  const progress_ctx *p = ctx;
  int64_t every = panels / 20 > 0 ? panels / 20 : 1;
  if (g_rank == 0 && (panel % every == 0 || panel == panels))
    fprintf(stderr, "tessera-gemm: run %d of %d: panel %lld of %lld\n", p->run, p->runs,
            (long long)panel, (long long)panels);
}

/* ---------------------------------------------------------------- main ---------------- */

typedef struct results {
  double t_read, t_compute, t_comm, t_local, t_write, gflops;
  double freivalds, freivalds_tol, serial_err, serial_tol;
  int serial_done, verified, passed;
  uint64_t bytes_sent, bytes_received;
} results;

static void write_json(const options *o, const char *path, tsr_dtype dt, int64_t m, int64_t n,
                       int64_t k, const tsr_grid_info_t *gi, const char *devices, int ndev,
                       const results *r, int code) {
  if (g_rank != 0 || !path) return;
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "tessera-gemm: warning: cannot write '%s': %s\n", path, strerror(errno));
    return;
  }
  fprintf(f, "{\n  \"program\": \"tessera-gemm\",\n  \"version\": \"%s\",\n", TSR_VERSION_STRING);
  fprintf(f, "  \"m\": %lld, \"n\": %lld, \"k\": %lld,\n", (long long)m, (long long)n,
          (long long)k);
  fprintf(f, "  \"dtype\": \"%s\", \"transa\": %s, \"transb\": %s,\n", tsr_dtype_name(dt),
          o->transa ? "true" : "false", o->transb ? "true" : "false");
  fprintf(f, "  \"input\": \"%s\",\n", o->a_path ? "files" : "random");
  fprintf(f, "  \"ranks\": %d, \"grid\": [%d, %d], \"block\": %lld,\n", g_size, gi->nprow,
          gi->npcol, (long long)o->block);
  fprintf(f, "  \"devices\": [");
  for (int i = 0; i < ndev; i++)
    fprintf(f, "%s\"%s\"", i ? ", " : "", devices + i * 64);
  fprintf(f, "],\n  \"repeat\": %d, \"warmup\": %d,\n", o->repeat, o->warmup);
  fprintf(f,
          "  \"seconds\": {\"read\": %.6g, \"compute\": %.6g, \"communication\": %.6g, "
          "\"local_gemm\": %.6g, \"write\": %.6g},\n",
          r->t_read, r->t_compute, r->t_comm, r->t_local, r->t_write);
  fprintf(f, "  \"gflops\": %.6g,\n", r->gflops);
  fprintf(f, "  \"bytes_sent_max_rank\": %llu, \"bytes_received_max_rank\": %llu,\n",
          (unsigned long long)r->bytes_sent, (unsigned long long)r->bytes_received);
  fprintf(f, "  \"verify\": {\"done\": %s", r->verified ? "true" : "false");
  if (r->verified) {
    fprintf(f, ", \"freivalds_residual\": %.6g, \"freivalds_tolerance\": %.6g", r->freivalds,
            r->freivalds_tol);
    if (r->serial_done)
      fprintf(f, ", \"serial_max_error\": %.6g, \"serial_tolerance\": %.6g", r->serial_err,
              r->serial_tol);
    fprintf(f, ", \"passed\": %s", r->passed ? "true" : "false");
  }
  fprintf(f, "},\n  \"output\": %s%s%s,\n", o->c_path ? "\"" : "", o->c_path ? o->c_path : "null",
          o->c_path ? "\"" : "");
  fprintf(f, "  \"exit_code\": %d\n}\n", code);
  fclose(f);
}

static int run(int argc, char **argv) {
  char msg[1024] = "";
  options o;

  /* Identical command lines on every rank, else the ranks would disagree on the collectives. */
  uint64_t h = hash_args(argc, argv), lo = 0, hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (lo != hi) return agree(EXIT_USAGE, "command-line arguments differ between ranks");
  int code = parse(argc, argv, &o, msg, sizeof msg) ? 0 : EXIT_USAGE;
  if ((code = agree(code, msg))) return code;
  if (o.help) {
    usage(stdout);
    return EXIT_OK;
  }

  rank_env env;
  memset(&env, 0, sizeof env);
  setup_threads(&env);
  code = pick_device(o.device, &env, msg, sizeof msg);
  if ((code = agree(code, msg))) return code;
  code = check_output_path(o.c_path, msg, sizeof msg);
  if ((code = agree(code, msg))) return code;

  tsr_grid *grid = NULL;
  tsr_status st = tsr_grid_create(MPI_COMM_WORLD, o.p, o.q, &grid);
  if (st != TSR_OK) return lib_fail(st, st == TSR_ERR_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_RUNTIME);
  tsr_grid_info_t gi;
  tsr_grid_info(grid, &gi);

  tsr_dmatrix *A = NULL, *B = NULL, *C = NULL;
  results r;
  memset(&r, 0, sizeof r);
  double *times = NULL, *comms = NULL, *locals = NULL;
  char *devices = NULL;
  tsr_dmatrix_info_t ai, bi;
  int64_t m = 0, n = 0, k = 0;
  tsr_dtype dt = o.dtype;

  /* Inputs. */
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (o.a_path) {
    st = tsr_dmatrix_read_npy(grid, o.a_path, o.block, o.block, env.device, &A);
    if (st == TSR_OK) st = tsr_dmatrix_read_npy(grid, o.b_path, o.block, o.block, env.device, &B);
    if (st != TSR_OK) {
      code = lib_fail(st, EXIT_RUNTIME);
      goto done;
    }
  } else {
    int64_t ar = o.transa ? o.k : o.m, ac = o.transa ? o.m : o.k;
    int64_t br = o.transb ? o.n : o.k, bc = o.transb ? o.k : o.n;
    st = tsr_dmatrix_create(grid, ar, ac, o.block, o.block, dt, env.device, &A);
    if (st == TSR_OK) st = tsr_dmatrix_create(grid, br, bc, o.block, o.block, dt, env.device, &B);
    if (st == TSR_OK) st = tsr_dmatrix_fill_random(A, o.seed, -1.0, 1.0);
    if (st == TSR_OK) st = tsr_dmatrix_fill_random(B, o.seed + 1, -1.0, 1.0);
    if (st != TSR_OK) {
      code = lib_fail(st, EXIT_RUNTIME);
      goto done;
    }
  }
  r.t_read = MPI_Wtime() - t0;
  tsr_dmatrix_info(A, &ai);
  tsr_dmatrix_info(B, &bi);
  dt = ai.dtype;
  m = o.transa ? ai.n : ai.m;
  k = o.transa ? ai.m : ai.n;
  int64_t kb = o.transb ? bi.n : bi.m;
  n = o.transb ? bi.m : bi.n;
  /* The same on every rank: the headers were agreed on. */
  if (ai.dtype != bi.dtype) {
    say(stderr, "tessera-gemm: error: dtypes differ: A is %s, B is %s\n", tsr_dtype_name(ai.dtype),
        tsr_dtype_name(bi.dtype));
    code = EXIT_RUNTIME;
    goto done;
  }
  if (k != kb) {
    say(stderr,
        "tessera-gemm: error: inner dimensions differ: op(A) is %lldx%lld, op(B) is %lldx%lld "
        "(A is %lldx%lld%s, B is %lldx%lld%s)\n",
        (long long)m, (long long)k, (long long)kb, (long long)n, (long long)ai.m, (long long)ai.n,
        o.transa ? ", transposed" : "", (long long)bi.m, (long long)bi.n,
        o.transb ? ", transposed" : "");
    code = EXIT_RUNTIME;
    goto done;
  }
  st = tsr_dmatrix_create(grid, m, n, o.block, o.block, dt, env.device, &C);
  if (st != TSR_OK) {
    code = lib_fail(st, EXIT_RUNTIME);
    goto done;
  }

  /* Where every rank runs. */
  devices = calloc((size_t)g_size, 64);
  char mine[64];
  snprintf(mine, sizeof mine, "%.30s %.20s %dt", env.device_name, env.host, env.threads);
  MPI_Gather(mine, 64, MPI_CHAR, devices, 64, MPI_CHAR, 0, MPI_COMM_WORLD);
  say(stdout, "tessera-gemm %s: C = %s * %s, m=%lld n=%lld k=%lld, %s, %s input\n",
      TSR_VERSION_STRING, o.transa ? "A^T" : "A", o.transb ? "B^T" : "B", (long long)m,
      (long long)n, (long long)k, tsr_dtype_name(dt), o.a_path ? "file" : "random");
  say(stdout, "grid: %d x %d (%d ranks), block %lld\n", gi.nprow, gi.npcol, g_size,
      (long long)o.block);
  for (int i = 0; g_rank == 0 && devices && i < g_size; i++) {
    char dname[64], host[64];
    int th = 0;
    if (sscanf(devices + i * 64, "%63s %63s %dt", dname, host, &th) == 3)
      say(stdout, "rank %d: device %s on %s, %d thread%s (process row %d, column %d)\n", i, dname,
          host, th, th == 1 ? "" : "s", i / gi.npcol, i % gi.npcol);
  }

  /* Runs. */
  int runs = o.warmup + o.repeat;
  times = calloc((size_t)o.repeat, sizeof *times);
  comms = calloc((size_t)o.repeat, sizeof *comms);
  locals = calloc((size_t)o.repeat, sizeof *locals);
  if (!times || !comms || !locals) {
    code = agree(EXIT_RUNTIME, "out of memory");
    goto done;
  }
  for (int it = 0; it < runs; it++) {
    progress_ctx pc = {it + 1, runs};
    tsr_dist_gemm_options opt;
    memset(&opt, 0, sizeof opt);
    if (o.progress) {
      opt.progress = progress_cb;
      opt.progress_ctx = &pc;
    }
    tsr_dist_stats stats;
    MPI_Barrier(MPI_COMM_WORLD);
    double s0 = MPI_Wtime();
    st = tsr_dist_gemm_ex(o.transa ? TSR_TRANS : TSR_NO_TRANS, o.transb ? TSR_TRANS : TSR_NO_TRANS,
                          1.0, A, B, 0.0, C, &opt, &stats);
    double el = MPI_Wtime() - s0;
    if (st != TSR_OK) {
      code = lib_fail(st, EXIT_RUNTIME);
      goto done;
    }
    /* The slowest rank decides the time. */
    double local[3] = {el, stats.comm_seconds, stats.compute_seconds}, worst[3];
    MPI_Allreduce(local, worst, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it >= o.warmup) {
      times[it - o.warmup] = worst[0];
      comms[it - o.warmup] = worst[1];
      locals[it - o.warmup] = worst[2];
    }
    uint64_t bytes[2] = {stats.bytes_sent, stats.bytes_received}, bmax[2];
    MPI_Allreduce(bytes, bmax, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    r.bytes_sent = bmax[0];
    r.bytes_received = bmax[1];
  }
  r.t_compute = median(times, o.repeat);
  r.t_comm = median(comms, o.repeat);
  r.t_local = median(locals, o.repeat);
  r.gflops = r.t_compute > 0 ? 2.0 * (double)m * (double)n * (double)k / r.t_compute * 1e-9 : 0;

  /* Verification. */
  if (o.verify) {
    r.verified = 1;
    st = tsr_dist_gemm_verify(o.transa ? TSR_TRANS : TSR_NO_TRANS,
                              o.transb ? TSR_TRANS : TSR_NO_TRANS, 1.0, A, B, C, o.seed + 2,
                              &r.freivalds);
    if (st != TSR_OK) {
      code = lib_fail(st, EXIT_RUNTIME);
      goto done;
    }
    r.freivalds_tol = (double)(k + 2) * eps_of(dt) + 2.0 * (double)(k + n + 2) * eps_of(TSR_F64);
    r.passed = r.freivalds <= r.freivalds_tol;
    if ((double)m * (double)n * (double)k <= (double)SERIAL_CHECK_LIMIT) {
      size_t es = dt == TSR_F32 ? 4 : 8;
      void *ha = NULL, *hb = NULL, *hc = NULL;
      int fail = 0;
      if (g_rank == 0) {
        ha = malloc((size_t)(ai.m * ai.n + 1) * es);
        hb = malloc((size_t)(bi.m * bi.n + 1) * es);
        hc = malloc((size_t)(m * n + 1) * es);
        fail = !ha || !hb || !hc;
      }
      if ((code = agree(fail ? EXIT_RUNTIME : 0, "out of memory for the serial check"))) {
        free(ha), free(hb), free(hc);
        goto done;
      }
      st = tsr_dmatrix_gather(A, 0, ha, TSR_COL_MAJOR, 0);
      if (st == TSR_OK) st = tsr_dmatrix_gather(B, 0, hb, TSR_COL_MAJOR, 0);
      if (st == TSR_OK) st = tsr_dmatrix_gather(C, 0, hc, TSR_COL_MAJOR, 0);
      if (st == TSR_OK && g_rank == 0) r.serial_err = serial_check(&o, dt, m, n, k, ha, hb, hc);
      free(ha), free(hb), free(hc);
      if (st != TSR_OK) {
        code = lib_fail(st, EXIT_RUNTIME);
        goto done;
      }
      MPI_Bcast(&r.serial_err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      r.serial_done = 1;
      r.serial_tol = (double)(k + 2) * eps_of(dt) + (double)(k + 2) * eps_of(TSR_F64);
      r.passed = r.passed && r.serial_err <= r.serial_tol;
    }
  }

  /* Output, only for a verified (or unverified by request) result. */
  if (o.c_path && (!r.verified || r.passed)) {
    double w0 = MPI_Wtime();
    st = tsr_dmatrix_write_npy(C, o.c_path, 0);
    r.t_write = MPI_Wtime() - w0;
    if (st != TSR_OK) {
      code = lib_fail(st, EXIT_RUNTIME);
      goto done;
    }
  }

  say(stdout,
      "time (s): read %.4f  compute %.4f  communication %.4f  write %.4f  (median of %d%s)\n",
      r.t_read, r.t_compute, r.t_comm, r.t_write, o.repeat, o.warmup ? ", after warm-up" : "");
  say(stdout, "local gemm %.4f s; bytes per rank (max): sent %llu, received %llu\n", r.t_local,
      (unsigned long long)r.bytes_sent, (unsigned long long)r.bytes_received);
  say(stdout, "performance: %.2f GFLOP/s\n", r.gflops);
  if (r.verified) {
    say(stdout, "verify: Freivalds residual %.3g (tolerance %.3g) %s\n", r.freivalds,
        r.freivalds_tol, r.freivalds <= r.freivalds_tol ? "ok" : "FAILED");
    if (r.serial_done)
      say(stdout, "verify: serial float64 product, max error %.3g (tolerance %.3g) %s\n",
          r.serial_err, r.serial_tol, r.serial_err <= r.serial_tol ? "ok" : "FAILED");
    else
      say(stdout, "verify: serial comparison skipped (m*n*k > 2^27)\n");
  } else {
    say(stdout, "verify: skipped (--no-verify)\n");
  }
  if (o.c_path && (!r.verified || r.passed)) say(stdout, "output: %s\n", o.c_path);
  code = r.verified && !r.passed ? EXIT_VERIFY : EXIT_OK;
  if (code == EXIT_VERIFY)
    say(stderr, "tessera-gemm: error: verification failed%s\n",
        o.c_path ? "; no output written" : "");

done:
  if (o.json_path)
    write_json(&o, o.json_path, dt, m, n, k, &gi, devices, devices ? g_size : 0, &r, code);
  free(times);
  free(comms);
  free(locals);
  free(devices);
  tsr_dmatrix_free(A);
  tsr_dmatrix_free(B);
  tsr_dmatrix_free(C);
  tsr_grid_free(grid);
  return code;
}

int main(int argc, char **argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "tessera-gemm: error: MPI_Init failed\n");
    return EXIT_RUNTIME;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  int code = run(argc, argv);
  fflush(stdout);
  fflush(stderr);
  MPI_Finalize();
  return code;
}
