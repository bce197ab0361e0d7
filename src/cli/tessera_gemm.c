/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tessera-gemm: the distributed matrix multiplication job.
 *
 *   mpirun -np 4 tessera-gemm -a A.npy -b B.npy -o C.npy
 *   mpirun -np 4 tessera-gemm -a A.npy -b B.npy -c C.npy --alpha 2 --beta 0.5 -o C2.npy
 *   mpirun -np 4 tessera-gemm -m 4096 -n 4096 -k 4096 --dtype f32 --repeat 5
 *
 * Every rank parses the same command line; rank 0 alone prints. Errors are agreed on by all
 * ranks (so every rank exits with the same code and none hangs); the exit codes are in
 * gemm_cli.h and usage(). run() chains the steps below; each returns 0 or an exit code.
 */
#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "timing.h" /* median() */
#include "gemm_cli.h"
#if TSR_HAVE_OPENMP
#include <omp.h>
#endif

/* Memory the estimate adds to the matrices and buffers it counts: MPI, the GEMM packing
   buffers, the program itself. */
#define MEMORY_OVERHEAD (INT64_C(96) << 20)

typedef struct rank_env {
  int local_rank, local_size, threads;
  tsr_dist_binding bind; /* threads per rank and the binding advice (tsr_dist_binding_get) */
  tsr_device device;
  char device_name[64];
  char host[MPI_MAX_PROCESSOR_NAME + 1]; /* MPI_Get_processor_name */
} rank_env;

typedef struct job {
  options o;
  rank_env env;
  tsr_grid *grid;
  tsr_grid_props gi;
  tsr_dmatrix *A, *B, *C, *C0;
  tsr_dmatrix_npy *fa, *fb, *fc; /* the input files, open from step_shapes to step_load */
  int64_t ar, ac, br, bc;        /* stored shapes of A and B */
  job_info ji;
  rank_desc *ranks; /* g_size entries (rank 0): host and device of every rank */
  results r;
  int64_t memory_per_rank; /* opt.memory_per_rank: what the job leaves free (0: no limit) */
  int replicas;            /* the c tsr_dist_gemm_choose gave (1: SUMMA) */
  char *advice; /* g_size binding advices of sizeof(tsr_dist_binding.advice) chars (rank 0) */
  char msg[1024];
} job;

/* Exit code for a library status (the library already agreed across ranks). */
static int lib_fail(tsr_status st, int code) {
  char msg[TSR_DIST_AGREE_MSG + 64];
  snprintf(msg, sizeof msg, "%s (%s)", tsr_last_error(), tsr_status_name(st));
  say(stderr, "tessera-gemm: error: %s\n", msg);
  note_message(msg);
  return code;
}

/* ---------------------------------------------------------------- step: command line -- */

/* FNV-1a over argv[1..]: ranks started with different arguments would disagree on the
   collectives. argv[0] is left out: one binary may be spelled differently on two ranks. */
static uint64_t hash_args(int argc, char **argv) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 1; i < argc; i++) {
    for (const unsigned char *p = (const unsigned char *)argv[i]; *p; p++) {
      h ^= *p;
      h *= 1099511628211ull;
    }
    h ^= 0xff; /* separator */
    h *= 1099511628211ull;
  }
  return h;
}

static int step_parse(job *j, int argc, char **argv) {
  uint64_t h = hash_args(argc, argv), lo = 0, hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (lo != hi) return agree(EXIT_USAGE, "command-line arguments differ between ranks");
  int code = parse_options(argc, argv, &j->o, j->msg, sizeof j->msg) ? 0 : EXIT_USAGE;
  return agree(code, j->msg);
}

/* ---------------------------------------------------------------- step: environment --- */

/* --device `kind` names a GPU kind this rank does not have: the library's reason (this build
   has no such support, or none is present and why) into j->msg. Returns EXIT_RUNTIME. */
static int no_device(job *j, const char *kind) {
  tsr_device d;
  if (tsr_device_parse(kind, &d) != TSR_OK)
    snprintf(j->msg, sizeof j->msg, "--device %s on %s: %s", kind, j->env.host, tsr_last_error());
  else /* present for the library, yet counted 0 a moment ago */
    snprintf(j->msg, sizeof j->msg, "--device %s on %s: no %s device found", kind, j->env.host,
             kind);
  return EXIT_RUNTIME;
}

static int step_environment(job *j) {
  rank_env *env = &j->env;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &env->local_rank);
  MPI_Comm_size(node, &env->local_size);
  MPI_Comm_free(&node);
  env->threads = 1;
  /* Threads: the library's rule (OMP_NUM_THREADS, else the rank's share of the node within its
     affinity mask) and, when mpirun's binding leaves cores idle, the advice the report prints. */
  if (tsr_dist_binding_get(MPI_COMM_WORLD, &env->bind) != TSR_OK) env->bind.advice[0] = '\0';
#if TSR_HAVE_OPENMP
  if (!getenv("OMP_NUM_THREADS") && env->bind.threads > 0) omp_set_num_threads(env->bind.threads);
  env->threads = omp_get_max_threads();
#endif
  int hlen = 0;
  if (MPI_Get_processor_name(env->host, &hlen) != MPI_SUCCESS || hlen <= 0)
    snprintf(env->host, sizeof env->host, "?");
  env->host[hlen > 0 && hlen < (int)sizeof env->host ? hlen : (int)sizeof env->host - 1] = '\0';

  /* This rank's device. */
  const char *want = j->o.device;
  int code = 0, ncuda = 0, nhip = 0;
  env->device = TSR_CPU;
  tsr_device_count(TSR_DEVICE_CUDA, &ncuda);
  tsr_device_count(TSR_DEVICE_HIP, &nhip);
  if (strcmp(want, "cuda") == 0 || (strcmp(want, "auto") == 0 && ncuda > 0)) {
    if (ncuda == 0) code = no_device(j, "cuda");
    if (ncuda > 0) env->device = (tsr_device){TSR_DEVICE_CUDA, env->local_rank % ncuda};
  } else if (strcmp(want, "hip") == 0 || (strcmp(want, "auto") == 0 && nhip > 0)) {
    if (nhip == 0) code = no_device(j, "hip");
    if (nhip > 0) env->device = (tsr_device){TSR_DEVICE_HIP, env->local_rank % nhip};
  }
  tsr_device_string(env->device, env->device_name, sizeof env->device_name);
  /* Warm-up by default on a GPU: the first run pays the vendor BLAS handle, module loading
     and the plan's allocations. The same on every rank (the largest choice). */
  if (j->o.warmup < 0) {
    int64_t w = env->device.kind != TSR_DEVICE_CPU ? 1 : 0, wmax = 0;
    MPI_Allreduce(&w, &wmax, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    j->o.warmup = wmax;
  }
  /* One rank per GPU is the layout the job is made for: ranks that share a GPU take turns on
     it (without MPS), so the job says so. */
  int ngpu = env->device.kind == TSR_DEVICE_CUDA  ? ncuda
             : env->device.kind == TSR_DEVICE_HIP ? nhip
                                                  : 0;
  int over = ngpu > 0 && env->local_size > ngpu, any = 0;
  MPI_Allreduce(&over, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any && g_rank == 0 && code == 0)
    say(stderr,
        "tessera-gemm: note: %d ranks share %d GPU%s on %s; one rank per GPU is the intended "
        "layout (mpirun -np <GPUs>), or run the NVIDIA MPS daemon so that their kernels can "
        "overlap\n",
        env->local_size, ngpu, ngpu == 1 ? "" : "s", env->host);
  return agree(code, j->msg);
}

/* Every rank's host and device on rank 0 (j->ranks), for the rank lines and the JSON report.
   Collective; after step_environment, so a report of a later failure names them too. */
static void gather_ranks(job *j) {
  rank_desc mine;
  memset(&mine, 0, sizeof mine);
  snprintf(mine.host, sizeof mine.host, "%s", j->env.host);
  snprintf(mine.device, sizeof mine.device, "%.31s", j->env.device_name); /* "cuda:12" */
  tsr_device_props props;
  if (tsr_device_get_props(j->env.device, &props) == TSR_OK) {
    snprintf(mine.name, sizeof mine.name, "%.127s", props.name);
    snprintf(mine.arch, sizeof mine.arch, "%.31s", props.arch);
    mine.memory = (int64_t)props.total_memory;
  }
  mine.local_rank = j->env.local_rank;
  mine.local_size = j->env.local_size;
  mine.threads = j->env.threads;
  int have = 1;
  if (g_rank == 0) have = (j->ranks = calloc((size_t)g_size, sizeof *j->ranks)) != NULL;
  /* Rank 0 without the memory for them: the reports leave the ranks out. */
  MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (have)
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, j->ranks, (int)sizeof mine, MPI_BYTE, 0,
               MPI_COMM_WORLD);
  j->ji.ranks = j->ranks;
  const int alen = (int)sizeof j->env.bind.advice;
  if (g_rank == 0) have = (j->advice = calloc((size_t)g_size, (size_t)alen)) != NULL;
  MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (have)
    MPI_Gather(j->env.bind.advice, alen, MPI_CHAR, j->advice, alen, MPI_CHAR, 0, MPI_COMM_WORLD);
  j->ji.advice = j->advice;
  j->ji.advice_len = alen;
}

/* ---------------------------------------------------------------- step: shapes -------- */

/* Opens an input on every rank (once) and takes its header; the library checks that it is a
   readable regular file holding a 2-D f32/f64 matrix, and agrees. */
static tsr_status open_input(job *j, const char *path, tsr_dmatrix_npy **f, tsr_npy_header *h) {
  tsr_status st = tsr_dmatrix_npy_open(j->grid, path, f);
  return st == TSR_OK ? tsr_dmatrix_npy_header(*f, h) : st;
}

/* Closes the inputs (collective; every rank holds the same ones). */
static int close_inputs(job *j) {
  tsr_dmatrix_npy **fs[3] = {&j->fa, &j->fb, &j->fc};
  tsr_status st = TSR_OK;
  for (int i = 0; i < 3; i++) {
    tsr_status s = tsr_dmatrix_npy_close(*fs[i]);
    *fs[i] = NULL;
    if (st == TSR_OK) st = s;
  }
  return st == TSR_OK ? 0 : lib_fail(st, EXIT_RUNTIME);
}

/* m, n, k and the dtype, from the headers or the options, the same on every rank. */
static int step_shapes(job *j) {
  options *o = &j->o;
  job_info *ji = &j->ji;
  int code = 0;
  tsr_npy_header ha, hb, hc;
  int64_t cm = -1, cn = -1;
  tsr_dtype cdt = TSR_F64;
  if (o->a_path) {
    tsr_status st = open_input(j, o->a_path, &j->fa, &ha);
    if (st == TSR_OK) st = open_input(j, o->b_path, &j->fb, &hb);
    if (st != TSR_OK) return lib_fail(st, EXIT_RUNTIME);
    {
      j->ar = ha.shape[0], j->ac = ha.shape[1], j->br = hb.shape[0], j->bc = hb.shape[1];
      ji->dtype = ha.dtype;
      if (ha.dtype != hb.dtype) {
        snprintf(j->msg, sizeof j->msg, "dtypes differ: A is %s, B is %s", tsr_dtype_name(ha.dtype),
                 tsr_dtype_name(hb.dtype));
        code = EXIT_RUNTIME;
      }
    }
  } else {
    tsr_status st = tsr_dtype_parse(o->dtype, &ji->dtype);
    if (st != TSR_OK) return lib_fail(st, EXIT_RUNTIME);
    j->ar = o->transa ? o->k : o->m, j->ac = o->transa ? o->m : o->k;
    j->br = o->transb ? o->n : o->k, j->bc = o->transb ? o->k : o->n;
  }
  if (!code && o->c_path && has_beta(o)) {
    tsr_status st = open_input(j, o->c_path, &j->fc, &hc);
    if (st != TSR_OK) return lib_fail(st, EXIT_RUNTIME);
    cm = hc.shape[0], cn = hc.shape[1], cdt = hc.dtype;
  }
  ji->m = o->transa ? j->ac : j->ar;
  ji->k = o->transa ? j->ar : j->ac;
  int64_t kb = o->transb ? j->bc : j->br;
  ji->n = o->transb ? j->br : j->bc;
  if (!code && ji->k != kb) {
    snprintf(j->msg, sizeof j->msg,
             "inner dimensions differ: op(A) is %lldx%lld, op(B) is %lldx%lld (A is %lldx%lld%s, "
             "B is %lldx%lld%s)",
             (long long)ji->m, (long long)ji->k, (long long)kb, (long long)ji->n, (long long)j->ar,
             (long long)j->ac, o->transa ? ", transposed" : "", (long long)j->br, (long long)j->bc,
             o->transb ? ", transposed" : "");
    code = EXIT_RUNTIME;
  }
  if (!code && cm >= 0 && (cm != ji->m || cn != ji->n || cdt != ji->dtype)) {
    snprintf(j->msg, sizeof j->msg, "C ('%s') is %lldx%lld %s; the product is %lldx%lld %s",
             o->c_path, (long long)cm, (long long)cn, tsr_dtype_name(cdt), (long long)ji->m,
             (long long)ji->n, tsr_dtype_name(ji->dtype));
    code = EXIT_RUNTIME;
  }
  int cx = dtype_complex(ji->dtype);
  if (!code && !cx && (o->alpha_im != 0.0 || o->beta_im != 0.0)) {
    snprintf(j->msg, sizeof j->msg,
             "--alpha %g,%g / --beta %g,%g: complex scalars need complex matrices (c64 or c128), "
             "the inputs are %s",
             o->alpha, o->alpha_im, o->beta, o->beta_im, tsr_dtype_name(ji->dtype));
    code = EXIT_USAGE;
  }
  if ((code = agree(code, j->msg))) return code;
  /* Node-local copies of an input that differ between ranks. */
  int64_t v[6] = {j->ar, j->ac, j->br, j->bc, (int64_t)ji->dtype, cm}, lo[6], hi[6];
  MPI_Allreduce(v, lo, 6, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(v, hi, 6, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (memcmp(lo, hi, sizeof lo) != 0)
    return agree(EXIT_RUNTIME, "the input files have different shapes or dtypes on different "
                               "ranks (node-local copies that differ?)");
  return 0;
}

/* ---------------------------------------------------------------- step: memory -------- */

/* x bytes as int64_t, INT64_MAX when x reaches it (memory_need counts in double). */
static int64_t bytes_sat(double x) {
  return x >= 9223372036854775807.0 ? INT64_MAX : (int64_t)x;
}

/* This rank's peak need in bytes: the local blocks of A, B, C (and C0 when beta != 0), plus
   the largest of what each phase adds: reading (a row-major staging copy of a block),
   SUMMA (transposed copies of A/B, two panel buffers of each operand), writing (a row-major
   copy of C), the serial check (the whole A, B, C and C0 on rank 0). With 2.5D, `extra25d`
   (tsr_dist_gemm_memory_25d) replaces SUMMA's panels. *fixed: the need without the multiply's
   own buffers (what 2.5D's memory_per_rank is measured against). */
static int64_t memory_need(const job *j, int64_t extra25d, int64_t *fixed) {
  const options *o = &j->o;
  const job_info *ji = &j->ji;
  int P = j->gi.nprow, Q = j->gi.npcol, r = j->gi.myrow, c = j->gi.mycol;
  int64_t nb = o->block;
  /* In double: the element counts of shapes that are refused (-m 1e12 -n 1e12 is 10^24
     elements) do not fit int64_t; double is exact below 2^53 and saturates above. */
  double es = (double)elem_size(ji->dtype);
#define LOCAL(rows, cols)                                                                          \
  ((double)tsr_numroc((rows), nb, r, 0, P) * (double)tsr_numroc((cols), nb, c, 0, Q))
  double a = LOCAL(j->ar, j->ac), b = LOCAL(j->br, j->bc), cc = LOCAL(ji->m, ji->n);
  double at = o->transa ? LOCAL(j->ac, j->ar) : 0, bt = o->transb ? LOCAL(j->bc, j->br) : 0;
#undef LOCAL
  double cmloc = (double)tsr_numroc(ji->m, nb, r, 0, P),
         cnloc = (double)tsr_numroc(ji->n, nb, c, 0, Q);
  double base = a + b + cc + (has_beta(o) ? cc : 0);
  double read = a > b ? a : b;
  if (cc > read && has_beta(o)) read = cc;
  double summa = at + bt + 2 * (cmloc * (double)nb + (double)nb * (cnloc > 0 ? cnloc : 1));
  double write = o->out_path ? cc : 0;
  double serial = 0;
  if (o->verify && g_rank == 0 &&
      (double)ji->m * (double)ji->n * (double)ji->k <= (double)SERIAL_CHECK_LIMIT)
    serial = (double)ji->m * (double)ji->k + (double)ji->k * (double)ji->n +
             (double)ji->m * (double)ji->n * (has_beta(o) ? 2 : 1);
  double phase = read;
  if (write > phase) phase = write;
  if (serial > phase) phase = serial;
  double vectors = 16.0 * ((double)ji->m + (double)ji->n + (double)ji->k + 3) * 8;
  *fixed = bytes_sat((base + phase) * es + vectors + (double)MEMORY_OVERHEAD);
  double multiply = extra25d > 0 ? (double)extra25d : summa * es;
  double other = phase * es;
  if (multiply < other) multiply = other;
  return bytes_sat(base * es + multiply + vectors + (double)MEMORY_OVERHEAD);
}

/* Device memory per rank for a GPU run: the GPU's memory over the node's ranks sharing it. */
static int64_t device_memory_share(const rank_env *env) {
  tsr_device_props props;
  int ndev = 0;
  if (tsr_device_get_props(env->device, &props) != TSR_OK ||
      tsr_device_count(env->device.kind, &ndev) != TSR_OK || ndev < 1)
    return 0;
  int sharing = (env->local_size + ndev - 1) / ndev;
  return (int64_t)(props.total_memory / (size_t)(sharing > 0 ? sharing : 1));
}

static int step_memory(job *j) {
  const options *o = &j->o;
  int64_t extra = 0, fixed = 0;
  /* Given replicas: checked here, before anything is allocated (usage error), and their
     memory counted. Chosen replicas: the library keeps within what the job leaves free. */
  if (o->algorithm == TSR_DIST_GEMM_2_5D && o->replicas > 0) {
    tsr_status st = tsr_dist_gemm_memory_25d(j->ji.m, j->ji.n, j->ji.k, o->block, g_size,
                                             (int)o->replicas, j->ji.dtype, &extra);
    if (st != TSR_OK)
      return lib_fail(st, st == TSR_ERR_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_RUNTIME);
  }
  int64_t need = memory_need(j, extra, &fixed);
  int gpu = j->env.device.kind != TSR_DEVICE_CPU;
  int64_t limit = o->max_memory ? o->max_memory
                  : gpu         ? device_memory_share(&j->env)
                                : memory_available(j->env.local_size);
  int code = 0;
  /* The same on every rank (tsr_dist_gemm_ex checks): the smallest headroom. */
  int64_t room = limit > 0 ? (limit > fixed ? limit - fixed : 1) : INT64_MAX;
  MPI_Allreduce(MPI_IN_PLACE, &room, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  j->memory_per_rank = room == INT64_MAX ? 0 : room;
  if (limit > 0 && need > limit) {
    if (j->o.max_memory)
      snprintf(j->msg, sizeof j->msg,
               "rank %d needs about %.3g GiB (%lld bytes: its blocks of A, B and C, panels and "
               "buffers%s), over --max-memory %lld bytes; nothing was allocated",
               g_rank, (double)need / 1073741824.0, (long long)need, extra ? ", 2.5D replicas" : "",
               (long long)j->o.max_memory);
    else if (gpu)
      snprintf(j->msg, sizeof j->msg,
               "rank %d needs about %.3g GiB (%lld bytes: its blocks of A, B and C, panels and "
               "buffers) but its GPU %s has %.3g GiB per rank on %s; nothing was allocated. Use "
               "more ranks or nodes, or --max-memory BYTES to override",
               g_rank, (double)need / 1073741824.0, (long long)need, j->env.device_name,
               (double)limit / 1073741824.0, j->env.host);
    else
      snprintf(j->msg, sizeof j->msg,
               "rank %d needs about %.3g GiB (%lld bytes: its blocks of A, B and C, panels and "
               "buffers) but its node has %.3g GiB available per rank (MemAvailable over %d "
               "ranks on %s); nothing was allocated. Use more ranks or nodes, or --max-memory "
               "BYTES to override",
               g_rank, (double)need / 1073741824.0, (long long)need, (double)limit / 1073741824.0,
               j->env.local_size, j->env.host);
    code = EXIT_RUNTIME;
  }
  if (g_rank == 0) j->r.mem_needed = calloc((size_t)g_size, sizeof(int64_t));
  MPI_Gather(&need, 1, MPI_INT64_T, j->r.mem_needed, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  return agree(code, j->msg);
}

/* ---------------------------------------------------------------- step: inputs -------- */

static tsr_status copy_local(tsr_dmatrix *dst, const tsr_dmatrix *src) {
  tsr_array *d = NULL, *s = NULL;
  tsr_status st = tsr_dmatrix_local(dst, &d);
  if (st == TSR_OK) st = tsr_dmatrix_local(src, &s);
  if (st == TSR_OK) st = tsr_assign(d, s);
  tsr_array_release(d);
  tsr_array_release(s);
  return st;
}

static int step_load(job *j) {
  const options *o = &j->o;
  tsr_device dev = j->env.device;
  int64_t nb = o->block;
  tsr_dtype dt = j->ji.dtype;
  tsr_status st = TSR_OK;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (o->a_path) {
    st = tsr_dmatrix_npy_read(j->fa, nb, nb, dev, &j->A);
    if (st == TSR_OK) st = tsr_dmatrix_npy_read(j->fb, nb, nb, dev, &j->B);
  } else {
    st = tsr_dmatrix_create(j->grid, j->ar, j->ac, nb, nb, dt, dev, &j->A);
    if (st == TSR_OK) st = tsr_dmatrix_create(j->grid, j->br, j->bc, nb, nb, dt, dev, &j->B);
    if (st == TSR_OK) st = tsr_dmatrix_fill_random(j->A, (uint64_t)o->seed, -1.0, 1.0);
    if (st == TSR_OK) st = tsr_dmatrix_fill_random(j->B, (uint64_t)o->seed + 1, -1.0, 1.0);
  }
  /* C0, the C that beta scales, is read only when beta != 0. */
  if (st == TSR_OK && has_beta(o)) {
    if (o->c_path) {
      st = tsr_dmatrix_npy_read(j->fc, nb, nb, dev, &j->C0);
    } else {
      st = tsr_dmatrix_create(j->grid, j->ji.m, j->ji.n, nb, nb, dt, dev, &j->C0);
      if (st == TSR_OK) st = tsr_dmatrix_fill_random(j->C0, (uint64_t)o->seed + 3, -1.0, 1.0);
    }
  }
  if (st == TSR_OK) st = tsr_dmatrix_create(j->grid, j->ji.m, j->ji.n, nb, nb, dt, dev, &j->C);
  if (st != TSR_OK) return lib_fail(st, EXIT_RUNTIME);
  int code = close_inputs(j);
  j->r.t_read = MPI_Wtime() - t0;
  return code;
}

/* ---------------------------------------------------------------- step: plan ---------- */

/* The options of tsr_dist_gemm_ex as the command line gives them. */
static tsr_dist_gemm_options gemm_options(const job *j) {
  tsr_dist_gemm_options opt;
  memset(&opt, 0, sizeof opt);
  opt.algorithm = (tsr_dist_algorithm)j->o.algorithm;
  opt.replicas = (int)j->o.replicas;
  opt.memory_per_rank = j->memory_per_rank;
  opt.bcast = (tsr_dist_bcast)j->o.bcast;
  return opt;
}

/* The schedule, chosen once (collective); every run then uses it. A replica count the
   library refuses is a usage error. */
static int step_plan(job *j) {
  tsr_dist_gemm_options opt = gemm_options(j);
  tsr_dist_algorithm alg = TSR_DIST_GEMM_SUMMA;
  int c = 1;
  tsr_status st = tsr_dist_gemm_choose((tsr_trans)j->o.transa, (tsr_trans)j->o.transb, j->A, j->B,
                                       j->C, &opt, &alg, &c);
  if (st != TSR_OK) return lib_fail(st, st == TSR_ERR_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_RUNTIME);
  j->replicas = alg == TSR_DIST_GEMM_2_5D ? c : 1;
  return 0;
}

/* ---------------------------------------------------------------- step: describe ------ */

static void step_describe(job *j) {
  const options *o = &j->o;
  const job_info *ji = &j->ji;
  say(stdout, "tessera-gemm %s: C = %s%s * %s%s, m=%lld n=%lld k=%lld, %s, %s input\n",
      TSR_VERSION_STRING, o->alpha != 1.0 || o->alpha_im != 0.0 ? "alpha * " : "",
      o->transa == 2 ? "A^H"
      : o->transa    ? "A^T"
                     : "A",
      o->transb == 2 ? "B^H"
      : o->transb    ? "B^T"
                     : "B",
      has_beta(o) ? " + beta * C" : "", (long long)ji->m, (long long)ji->n, (long long)ji->k,
      tsr_dtype_name(ji->dtype), o->a_path ? "file" : "random");
  say(stdout, "grid: %d x %d (%d rank%s), block %lld\n", j->gi.nprow, j->gi.npcol, g_size,
      g_size == 1 ? "" : "s", (long long)o->block);
  if (j->replicas > 1)
    say(stdout, "schedule: 2.5D, %d replicas on %d layers of %d rank%s (--algorithm %s)\n",
        j->replicas, j->replicas, g_size / j->replicas, g_size / j->replicas == 1 ? "" : "s",
        algorithm_name(o->algorithm));
  else
    say(stdout, "schedule: SUMMA (--algorithm %s)\n", algorithm_name(o->algorithm));
  for (int i = 0; g_rank == 0 && j->ranks && i < g_size; i++) {
    const rank_desc *rd = &j->ranks[i];
    say(stdout, "rank %d: device %s on %s, %d thread%s (process row %d, column %d)\n", i,
        rd->device, rd->host, rd->threads, rd->threads == 1 ? "" : "s", i / j->gi.npcol,
        i % j->gi.npcol);
    if (j->advice && j->advice[(size_t)i * sizeof j->env.bind.advice])
      say(stdout, "rank %d: threads: %s\n", i, j->advice + (size_t)i * sizeof j->env.bind.advice);
  }
}

/* ---------------------------------------------------------------- step: multiply ------ */

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

static int step_multiply(job *j) {
  const options *o = &j->o;
  results *r = &j->r;
  int runs = (int)(o->warmup + o->repeat), code = 0;
  double *times = calloc((size_t)o->repeat, sizeof *times);
  double *comms = calloc((size_t)o->repeat, sizeof *comms);
  double *locals = calloc((size_t)o->repeat, sizeof *locals);
  double *gpus = calloc((size_t)o->repeat, sizeof *gpus);
  if ((code = agree(!times || !comms || !locals || !gpus ? EXIT_RUNTIME : 0, "out of memory")))
    goto done;
  for (int it = 0; it < runs; it++) {
    progress_ctx pc = {it + 1, runs};
    /* The plan's schedule, so that every run is the same. */
    tsr_dist_gemm_options opt = gemm_options(j);
    opt.algorithm = j->replicas > 1 ? TSR_DIST_GEMM_2_5D : TSR_DIST_GEMM_SUMMA;
    opt.replicas = j->replicas > 1 ? j->replicas : 0;
    if (o->progress) {
      opt.progress = progress_cb;
      opt.progress_ctx = &pc;
    }
    /* Every run starts from C0 (beta != 0). */
    tsr_status st = j->C0 ? copy_local(j->C, j->C0) : TSR_OK;
    tsr_dist_stats stats;
    memset(&stats, 0, sizeof stats);
    MPI_Barrier(MPI_COMM_WORLD);
    double s0 = MPI_Wtime();
    if (st == TSR_OK)
      st = dtype_complex(j->ji.dtype)
               ? tsr_dist_gemm_complex((tsr_trans)o->transa, (tsr_trans)o->transb,
                                       (tsr_complex128){o->alpha, o->alpha_im}, j->A, j->B,
                                       (tsr_complex128){o->beta, o->beta_im}, j->C, &opt, &stats)
               : tsr_dist_gemm_ex((tsr_trans)o->transa, (tsr_trans)o->transb, o->alpha, j->A, j->B,
                                  o->beta, j->C, &opt, &stats);
    double el = MPI_Wtime() - s0;
    if (st != TSR_OK) {
      code = lib_fail(st, EXIT_RUNTIME);
      goto done;
    }
    /* The slowest rank decides the time. */
    double local[4] = {el, stats.comm_seconds, stats.compute_seconds, stats.gpu_seconds}, worst[4];
    MPI_Allreduce(local, worst, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it >= o->warmup) {
      times[it - o->warmup] = worst[0];
      comms[it - o->warmup] = worst[1];
      locals[it - o->warmup] = worst[2];
      gpus[it - o->warmup] = worst[3];
    }
    uint64_t v[20] = {stats.bytes_sent,          stats.bytes_received,
                      stats.bytes_redistributed, stats.h2d_bytes,
                      stats.h2d_copies,          stats.d2h_bytes,
                      stats.d2h_copies,          stats.host_syncs,
                      stats.host_syncs_in_loop,  stats.copy_waits,
                      stats.gemm_calls,          stats.gemm_vendor_calls,
                      (uint64_t)stats.panels,    (uint64_t)stats.panel_width,
                      (uint64_t)stats.staging,   (uint64_t)(j->env.device.kind != TSR_DEVICE_CPU),
                      stats.progress_calls,      stats.bcast_mpi,
                      stats.bcast_ring,          stats.bcast_tree},
             vmax[20];
    MPI_Allreduce(v, vmax, 20, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    r->bytes_sent = vmax[0];
    r->bytes_received = vmax[1];
    r->bytes_redistributed = vmax[2];
    r->h2d_bytes = vmax[3], r->h2d_copies = vmax[4];
    r->d2h_bytes = vmax[5], r->d2h_copies = vmax[6];
    r->host_syncs = vmax[7], r->host_syncs_in_loop = vmax[8], r->copy_waits = vmax[9];
    r->gemm_calls = vmax[10], r->gemm_vendor_calls = vmax[11];
    r->panels = (int64_t)vmax[12], r->panel_width = (int64_t)vmax[13];
    r->staging = (int)vmax[14], r->gpu = (int)vmax[15];
    r->progress_calls = vmax[16];
    r->bcast_mpi = vmax[17], r->bcast_ring = vmax[18], r->bcast_tree = vmax[19];
    r->algorithm = stats.algorithm;
    r->replicas = stats.replicas;
  }
  r->t_compute = median(times, (int)o->repeat);
  r->t_comm = median(comms, (int)o->repeat);
  r->t_local = median(locals, (int)o->repeat);
  r->t_gpu = median(gpus, (int)o->repeat);
  /* Real flops: 2 m n k, and 8 m n k for complex (ZGEMM's count: a complex multiply-add is four
     real multiplies and four adds). */
  double flops = (dtype_complex(j->ji.dtype) ? 8.0 : 2.0) * (double)j->ji.m * (double)j->ji.n *
                 (double)j->ji.k;
  r->gflops = r->t_compute > 0 ? flops / r->t_compute * 1e-9 : 0;
done:
  free(times);
  free(comms);
  free(locals);
  free(gpus);
  return code;
}

/* ---------------------------------------------------------------- step: verify -------- */

#define VAL(dt, p, idx)                                                                            \
  ((dt) == TSR_F32 ? (double)((const float *)(p))[idx] : ((const double *)(p))[idx])

/* Rank 0: alpha op(A) op(B) + beta C0 in float64 from the gathered (column-major) matrices,
   compared elementwise with C against the rounding scale; elements whose scale reaches the
   dtype's overflow threshold are skipped and counted. Returns the worst error / scale. */
/* The serial comparison's tolerance: the rounding of k + 3 operations in the dtype and in
   float64. */
static double serial_tolerance(const job_info *ji) {
  const int cx = dtype_complex(ji->dtype);
  double eps =
      ji->dtype == TSR_F32 || ji->dtype == TSR_C64 ? (double)FLT_EPSILON / 2 : DBL_EPSILON / 2;
  const double k = (double)(cx ? 2 * ji->k : ji->k);
  return (cx ? sqrt(2.0) : 1.0) * ((k + 3) * eps + (k + 3) * (DBL_EPSILON / 2));
}

static double serial_check(const job *j, const void *a, const void *b, const void *c0,
                           const void *c, int64_t *skipped) {
  const options *o = &j->o;
  tsr_dtype dt = j->ji.dtype;
  int64_t m = j->ji.m, n = j->ji.n, k = j->ji.k;
  int64_t lda = o->transa ? k : m, ldb = o->transb ? n : k;
  double big = dt == TSR_F32 ? (double)FLT_MAX : DBL_MAX;
  big /= 1.0 + j->r.check.tolerance;
  double worst = 0.0;
  *skipped = 0;
  /* Results that underflow (subnormal or flushed to zero) lose up to the smallest normal
     number lam per operation, which the relative bound does not cover: an element's
     allowance is (k max(1, |alpha|) + 3) lam, and as much with DBL_MIN for this float64 sum
     (the reasoning of tsr_dist_gemm_verify, src/mpi/summa.c); compared as
     diff <= tol * (scale + under). */
  double sa = fmax(1.0, fabs(o->alpha)), lam = dt == TSR_F32 ? (double)FLT_MIN : DBL_MIN;
  double under = ((double)k * sa + 3.0) * (lam + DBL_MIN) / serial_tolerance(&j->ji);
  for (int64_t jj = 0; jj < n; jj++)
    for (int64_t i = 0; i < m; i++) {
      double sum = 0.0, scale = 0.0;
      for (int64_t p = 0; p < k; p++) {
        double av = o->transa ? VAL(dt, a, p + i * lda) : VAL(dt, a, i + p * lda);
        double bv = o->transb ? VAL(dt, b, jj + p * ldb) : VAL(dt, b, p + jj * ldb);
        sum += av * bv;
        scale += fabs(av * bv);
      }
      sum *= o->alpha;
      scale *= fabs(o->alpha);
      if (c0) {
        double cv = VAL(dt, c0, i + jj * m);
        sum += o->beta * cv;
        scale += fabs(o->beta * cv);
      }
      if (!(scale < big)) {
        (*skipped)++;
        continue;
      }
      double diff = fabs(VAL(dt, c, i + jj * m) - sum);
      double r = scale + under > 0 ? diff / (scale + under) : diff;
      if (!(r <= worst)) worst = r; /* NaN propagates */
    }
  return worst;
}
#undef VAL

#define CVAL(dt, p, idx)                                                                           \
  ((dt) == TSR_C64 ? (double _Complex)((const float _Complex *)(p))[idx]                           \
                   : ((const double _Complex *)(p))[idx])

/* serial_check for c64/c128: the float64-complex product (op C conjugates), moduli for the
   scale, the tolerance of serial_tolerance with k replaced by 2 k (two real multiply-adds per
   part) and the moduli's sqrt(2). */
static double serial_check_complex(const job *j, const void *a, const void *b, const void *c0,
                                   const void *c, int64_t *skipped) {
  const options *o = &j->o;
  tsr_dtype dt = j->ji.dtype;
  int64_t m = j->ji.m, n = j->ji.n, k = j->ji.k;
  int64_t lda = o->transa ? k : m, ldb = o->transb ? n : k;
  const double _Complex al = o->alpha + o->alpha_im * I, be = o->beta + o->beta_im * I;
  double big = (dt == TSR_C64 ? (double)FLT_MAX : DBL_MAX) / (1.0 + j->r.check.tolerance);
  double sa = fmax(1.0, cabs(al)), lam = dt == TSR_C64 ? (double)FLT_MIN : DBL_MIN;
  double tol = serial_tolerance(&j->ji);
  double under = ((double)(2 * k) * sa + 3.0) * (lam + DBL_MIN) / tol;
  double worst = 0.0;
  *skipped = 0;
  for (int64_t jj = 0; jj < n; jj++)
    for (int64_t i = 0; i < m; i++) {
      double _Complex sum = 0.0;
      double scale = 0.0;
      for (int64_t p = 0; p < k; p++) {
        double _Complex av = o->transa ? CVAL(dt, a, p + i * lda) : CVAL(dt, a, i + p * lda);
        double _Complex bv = o->transb ? CVAL(dt, b, jj + p * ldb) : CVAL(dt, b, p + jj * ldb);
        if (o->transa == 2) av = conj(av);
        if (o->transb == 2) bv = conj(bv);
        sum += av * bv;
        scale += cabs(av) * cabs(bv);
      }
      sum *= al;
      scale *= cabs(al);
      if (c0) {
        double _Complex cv = CVAL(dt, c0, i + jj * m);
        sum += be * cv;
        scale += cabs(be) * cabs(cv);
      }
      if (!(scale < big)) {
        (*skipped)++;
        continue;
      }
      double diff = cabs(CVAL(dt, c, i + jj * m) - sum);
      double r = scale + under > 0 ? diff / (scale + under) : diff;
      if (!(r <= worst)) worst = r; /* NaN propagates */
    }
  return worst;
}
#undef CVAL

static int step_verify(job *j) {
  const options *o = &j->o;
  results *r = &j->r;
  const job_info *ji = &j->ji;
  if (!o->verify) return 0;
  r->verified = 1;
  tsr_status st = tsr_dist_gemm_verify_complex(
      (tsr_trans)o->transa, (tsr_trans)o->transb, (tsr_complex128){o->alpha, o->alpha_im}, j->A,
      j->B, (tsr_complex128){o->beta, o->beta_im}, j->C0, j->C, (uint64_t)o->seed + 2, &r->check);
  if (st != TSR_OK) return lib_fail(st, EXIT_RUNTIME);
  r->passed = r->check.verdict != TSR_VERIFY_FAILED;
  if (r->check.verdict == TSR_VERIFY_UNVERIFIED ||
      (double)ji->m * (double)ji->n * (double)ji->k > (double)SERIAL_CHECK_LIMIT)
    return 0;
  size_t es = elem_size(ji->dtype);
  void *ha = NULL, *hb = NULL, *hc = NULL, *h0 = NULL;
  int fail = 0;
  if (g_rank == 0) {
    ha = malloc((size_t)(j->ar * j->ac + 1) * es);
    hb = malloc((size_t)(j->br * j->bc + 1) * es);
    hc = malloc((size_t)(ji->m * ji->n + 1) * es);
    if (j->C0) h0 = malloc((size_t)(ji->m * ji->n + 1) * es);
    fail = !ha || !hb || !hc || (j->C0 && !h0);
  }
  int code = agree(fail ? EXIT_RUNTIME : 0, "out of memory for the serial check");
  if (!code) {
    st = tsr_dmatrix_gather(j->A, 0, ha, TSR_COL_MAJOR, 0);
    if (st == TSR_OK) st = tsr_dmatrix_gather(j->B, 0, hb, TSR_COL_MAJOR, 0);
    if (st == TSR_OK) st = tsr_dmatrix_gather(j->C, 0, hc, TSR_COL_MAJOR, 0);
    if (st == TSR_OK && j->C0) st = tsr_dmatrix_gather(j->C0, 0, h0, TSR_COL_MAJOR, 0);
    if (st == TSR_OK && g_rank == 0)
      r->serial_err = dtype_complex(ji->dtype)
                          ? serial_check_complex(j, ha, hb, h0, hc, &r->serial_skipped)
                          : serial_check(j, ha, hb, h0, hc, &r->serial_skipped);
    if (st != TSR_OK) code = lib_fail(st, EXIT_RUNTIME);
  }
  free(ha), free(hb), free(hc), free(h0);
  if (code) return code;
  double v[2] = {r->serial_err, (double)r->serial_skipped};
  MPI_Bcast(v, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  r->serial_err = v[0];
  r->serial_skipped = (int64_t)v[1];
  r->serial_done = 1;
  r->serial_tol = serial_tolerance(ji);
  r->passed = r->passed && r->serial_err <= r->serial_tol;
  return 0;
}

/* ---------------------------------------------------------------- step: write --------- */

static int step_write(job *j) {
  results *r = &j->r;
  if (!j->o.out_path || (r->verified && !r->passed)) return 0;
  double w0 = MPI_Wtime();
  tsr_status st = tsr_dmatrix_write_npy(j->C, j->o.out_path, 0);
  r->t_write = MPI_Wtime() - w0;
  if (st != TSR_OK) return lib_fail(st, EXIT_RUNTIME);
  r->written = 1;
  return 0;
}

/* ---------------------------------------------------------------- run ----------------- */

static void gather_peak_memory(results *r) {
  struct rusage ru;
  int64_t peak = 0;
  if (getrusage(RUSAGE_SELF, &ru) == 0) peak = (int64_t)ru.ru_maxrss * 1024; /* Linux: KiB */
  if (g_rank == 0) r->peak_rss = calloc((size_t)g_size, sizeof(int64_t));
  MPI_Gather(&peak, 1, MPI_INT64_T, r->peak_rss, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
}

/* The results printed, and the exit code of a run that went through: 0, EXIT_VERIFY (the
   check failed) or EXIT_UNVERIFIED, with its message (also for the JSON report). */
static int step_outcome(job *j) {
  char msg[256];
  print_results(&j->o, j->ji.dtype, &j->r);
  if (j->r.written) say(stdout, "output: %s\n", j->o.out_path);
  const results *r = &j->r;
  if (r->verified && !r->passed) {
    snprintf(msg, sizeof msg, "verification failed%s", j->o.out_path ? "; no output written" : "");
    say(stderr, "tessera-gemm: error: %s\n", msg);
    note_message(msg);
    return EXIT_VERIFY;
  }
  if (r->verified && r->check.verdict != TSR_VERIFY_PASSED) {
    snprintf(msg, sizeof msg, "%s%s",
             r->check.verdict == TSR_VERIFY_UNVERIFIED
                 ? "inputs contain NaN/Inf; product not verified"
                 : "rows that may overflow were not verified",
             r->written ? "; output written" : "");
    say(stderr, "tessera-gemm: warning: %s (exit code 4)\n", msg);
    note_message(msg);
    return EXIT_UNVERIFIED;
  }
  return 0;
}

static int run(int argc, char **argv) {
  job *j = calloc(1, sizeof *j);
  int code = agree(j ? 0 : EXIT_RUNTIME, "out of memory");
  if (code) return code;
  j->ji.started = (long long)time(NULL);
  int started = 0;
  if ((code = step_parse(j, argc, argv))) goto done;
  if (j->o.help) {
    usage(stdout);
    goto done;
  }
  if ((code = step_environment(j))) goto done;
  gather_ranks(j);
  if ((code = check_paths(&j->o, j->msg, sizeof j->msg))) goto done;
  started = 1; /* the JSON target is known to be writable */
  {
    long long pid0 = (long long)getpid();
    MPI_Bcast(&pid0, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    guard_temp_file(j->o.out_path, (long)pid0);
  }
  tsr_status st = tsr_grid_create(MPI_COMM_WORLD, j->o.p, j->o.q, &j->grid);
  if (st != TSR_OK) {
    code = lib_fail(st, st == TSR_ERR_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_RUNTIME);
    goto done;
  }
  tsr_grid_info(j->grid, &j->gi);
  j->ji.nprow = j->gi.nprow;
  j->ji.npcol = j->gi.npcol;
  if ((code = step_shapes(j))) goto done;
  if ((code = step_memory(j))) goto done;
  if ((code = step_load(j))) goto done;
  if ((code = step_plan(j))) goto done;
  step_describe(j);
  if ((code = step_multiply(j))) goto done;
  if ((code = step_verify(j))) goto done;
  if ((code = step_write(j))) goto done;

  code = step_outcome(j);
done:
  if (started) {
    gather_peak_memory(&j->r);
    int jc = write_json(&j->o, &j->ji, &j->r, code);
    if (jc && !code) code = jc;
  }
  if (j->fa || j->fb || j->fc) close_inputs(j);
  free(j->r.peak_rss);
  free(j->r.mem_needed);
  free(j->ranks);
  free(j->advice);
  tsr_dmatrix_free(j->A);
  tsr_dmatrix_free(j->B);
  tsr_dmatrix_free(j->C);
  tsr_dmatrix_free(j->C0);
  tsr_grid_free(j->grid);
  free(j);
  return code;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--version") == 0) { /* the library's release; no MPI */
    const char *version = NULL;
    tsr_version(NULL, NULL, NULL, &version);
    printf("tessera-gemm %s\n", version);
    return 0;
  }
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
