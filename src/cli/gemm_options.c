/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tessera-gemm's command line: one table of options, one loop. Flags take no value
 * (`--verify=0` is an error, not "on"); numbers are parsed whole, range-checked, and overflow
 * is an error (`--grid 4294967298x1` is refused, not read as 2x1).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_cli.h"

void usage(FILE *f) {
  say(f,
      "usage: tessera-gemm [options]\n"
      "Distributed C = alpha * op(A) * op(B) + beta * C with SUMMA over MPI (run it under\n"
      "mpirun/mpiexec).\n"
      "\n"
      "input (files, or random matrices):\n"
      "  -a FILE, -b FILE     A and B from 2-D .npy files (f32, f64, c64 or c128, the same\n"
      "                       dtype; C or Fortran order, either byte order, format 1.0-3.0)\n"
      "  -c FILE              C from a .npy file (m x n, same dtype), read only when\n"
      "                       beta != 0\n"
      "  -m M -n N -k K       random A (M x K) and B (K x N), uniform in [-1, 1) from\n"
      "                       Philox4x32-10: A with seed S, B with seed S+1 (and C, when\n"
      "                       beta != 0 and no -c, with seed S+3); the values do not depend\n"
      "                       on the grid or the block size\n"
      "  --seed S             seed of the random inputs and of the check (default %d)\n"
      "  --dtype D            f32|f64|c64|c128: dtype of random inputs (default f64; files\n"
      "                       keep theirs); complex random elements take two Philox values\n"
      "                       (real, imaginary), both uniform in [-1, 1)\n"
      "  With no input options, the default problem is -m %d -n %d -k %d --dtype f64.\n"
      "\n"
      "computation:\n"
      "  --alpha X, --beta Y  scalars (default 1 and 0; beta = 0 never reads C); complex\n"
      "                       as RE,IM (e.g. --alpha 1.5,-0.5) for c64/c128 matrices, a real\n"
      "                       value meaning imaginary part 0\n"
      "  --transa [n|t|c], --transb [n|t|c]\n"
      "                       op(A) / op(B): n the matrix, t its transpose (the option\n"
      "                       alone), c its conjugate transpose (t for f32/f64)\n"
      "  --grid PxQ           process grid, P*Q = number of ranks (default: near-square,\n"
      "                       P <= Q); rank r is at process row r / Q, column r %% Q\n"
      "  --block NB           block size of the 2D block-cyclic layout and SUMMA panel\n"
      "                       width (default %d)\n"
      "  --device D           auto|cpu|cuda|hip (default auto: each rank takes GPU\n"
      "                       (node-local rank mod GPU count) when the node has GPUs)\n"
      "  --algorithm A        summa|2.5d|auto (default summa): SUMMA on the PxQ grid; 2.5D\n"
      "                       (Solomonik & Demmel 2011) with c replicas on c layers of\n"
      "                       sqrt(P/c) x sqrt(P/c) ranks; auto: the one that moves the\n"
      "                       fewest words per rank within the memory limit\n"
      "  --bcast B            auto|mpi|ring|tree (default auto): how panels are broadcast:\n"
      "                       MPI_Ibcast, or Tessera's pipelined ring or binary tree of\n"
      "                       segments; auto picks by panel size and ranks\n"
      "  --replicas C         c for 2.5d: c divides the ranks and ranks/c is a perfect\n"
      "                       square (checked before any work, else exit 2); 0 (default)\n"
      "                       lets the library choose within the memory limit\n"
      "  --repeat R           timed runs (default 1); timings are medians\n"
      "  --warmup W           untimed runs before them (default 1 on a GPU: the first\n"
      "                       run creates the vendor BLAS handle and loads kernels; 0 on CPUs)\n"
      "  --max-memory BYTES, --memory-per-rank BYTES\n"
      "                       memory one rank may use (default: MemAvailable of the node\n"
      "                       divided by its ranks; on a GPU, its memory divided by the\n"
      "                       ranks sharing it); a run needing more (2.5D replicas\n"
      "                       included) is refused before anything is allocated; what\n"
      "                       the job leaves free is the 2.5D memory_per_rank when the\n"
      "                       library chooses c\n"
      "\n",
      DEFAULT_SEED, DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_BLOCK);
  say(f, "%s",
      "output and checks:\n"
      "  -o FILE              write C as a .npy file (C order), collectively with MPI-IO, to\n"
      "                       .FILE.tessera-tmp.PID.0 beside it (removed on error, SIGINT,\n"
      "                       SIGTERM), then renamed; only a regular file or a new name is\n"
      "                       replaced; written unless the verification failed\n"
      "  --verify, --no-verify  Freivalds' check (C x against A (B x), O(n^2), on by\n"
      "                       default), plus an elementwise comparison with a serial\n"
      "                       float64 product on rank 0 when m*n*k <= 2^27\n"
      "  --json FILE          write the results as JSON (an error if it cannot be written)\n"
      "  --progress           report 'panel k of K' on stderr\n"
      "  -h, --help           this help\n"
      "  --version            the version (alone on the command line), then exit\n"
      "\n"
      "NaN/Inf: inputs holding NaN or Inf are multiplied as IEEE arithmetic says, but not\n"
      "verified (the count is reported); rows of the product that may overflow the dtype are\n"
      "left out of the check; both give exit code 4 with the output written.\n"
      "threads: when OMP_NUM_THREADS is unset, the cores of each node are split among the\n"
      "ranks on that node, but a rank runs no more threads than its affinity mask has cores\n"
      "(mpirun binds each rank to one core when np <= 2); the rank line and --json then give\n"
      "the fix ('mpirun --bind-to none' or '--map-by ppr:R:node:PE=C'). OMP_NUM_THREADS, when\n"
      "set, is used as is.\n"
      "exit codes: 0 ok; 1 runtime error (unreadable or malformed file, unsupported dtype,\n"
      "inner dimensions differ, no such device, unwritable output or JSON, disk full, not\n"
      "enough memory); 2 usage error (bad option, grid not matching the number of ranks,\n"
      "command lines that differ between ranks); 3 verification failed (nothing written);\n"
      "4 output written but not verified (NaN/Inf inputs or possible overflow).\n");
}

/* ---------------------------------------------------------------- the table ----------- */

typedef enum opt_kind {
  OPT_FLAG,    /* no value; sets an int field to `ival` */
  OPT_PATH,    /* const char * field */
  OPT_INT,     /* int64_t field in [lo, hi]; `given` int set to 1 */
  OPT_DOUBLE,  /* finite double field */
  OPT_CHOICE,  /* int field: index of the value in `choices` ('|'-separated) */
  OPT_WORD,    /* const char * field, one of `choices` */
  OPT_GRID,    /* PxQ into int fields p, q */
  OPT_COMPLEX, /* RE[,IM] into two consecutive finite double fields */
  OPT_TRANS    /* int field: without a value (the next argument not n|t|c) 1, else n 0, t 1, c 2 */
} opt_kind;

typedef struct opt_def {
  const char *name, *alias;
  opt_kind kind;
  size_t field;
  ptrdiff_t given; /* offset of an int set to 1 when the option appears, or -1 */
  int64_t lo, hi;
  int ival;
  const char *choices;
} opt_def;

#define OFF(f) offsetof(options, f)
#define NOGIVEN ((ptrdiff_t)-1)
static const opt_def table[] = {
    {"--help", "-h", OPT_FLAG, OFF(help), NOGIVEN, 0, 0, 1, NULL},
    {"-a", NULL, OPT_PATH, OFF(a_path), NOGIVEN, 0, 0, 0, NULL},
    {"-b", NULL, OPT_PATH, OFF(b_path), NOGIVEN, 0, 0, 0, NULL},
    {"-c", NULL, OPT_PATH, OFF(c_path), NOGIVEN, 0, 0, 0, NULL},
    {"-o", NULL, OPT_PATH, OFF(out_path), NOGIVEN, 0, 0, 0, NULL},
    {"--json", NULL, OPT_PATH, OFF(json_path), NOGIVEN, 0, 0, 0, NULL},
    {"-m", NULL, OPT_INT, OFF(m), (ptrdiff_t)OFF(have_m), 0, INT64_C(1) << 40, 0, NULL},
    {"-n", NULL, OPT_INT, OFF(n), (ptrdiff_t)OFF(have_n), 0, INT64_C(1) << 40, 0, NULL},
    {"-k", NULL, OPT_INT, OFF(k), (ptrdiff_t)OFF(have_k), 0, INT64_C(1) << 40, 0, NULL},
    {"--seed", NULL, OPT_INT, OFF(seed), NOGIVEN, 0, INT64_MAX - 4, 0, NULL},
    {"--dtype", NULL, OPT_WORD, OFF(dtype), (ptrdiff_t)OFF(dtype_given), 0, 0, 0,
     "f64|f32|c64|c128"},
    {"--alpha", NULL, OPT_COMPLEX, OFF(alpha), NOGIVEN, 0, 0, 0, NULL},
    {"--beta", NULL, OPT_COMPLEX, OFF(beta), NOGIVEN, 0, 0, 0, NULL},
    {"--transa", NULL, OPT_TRANS, OFF(transa), NOGIVEN, 0, 0, 1, "n|t|c"},
    {"--transb", NULL, OPT_TRANS, OFF(transb), NOGIVEN, 0, 0, 1, "n|t|c"},
    {"--grid", NULL, OPT_GRID, 0, NOGIVEN, 1, 1 << 30, 0, NULL},
    {"--block", NULL, OPT_INT, OFF(block), NOGIVEN, 1, 1 << 20, 0, NULL},
    {"--device", NULL, OPT_WORD, OFF(device), NOGIVEN, 0, 0, 0, "auto|cpu|cuda|hip"},
    {"--repeat", NULL, OPT_INT, OFF(repeat), NOGIVEN, 1, 1000000, 0, NULL},
    {"--warmup", NULL, OPT_INT, OFF(warmup), NOGIVEN, 0, 1000000, 0, NULL},
    {"--algorithm", NULL, OPT_CHOICE, OFF(algorithm), NOGIVEN, 0, 0, 0, "summa|2.5d|auto"},
    {"--bcast", NULL, OPT_CHOICE, OFF(bcast), NOGIVEN, 0, 0, 0, "auto|mpi|ring|tree"},
    {"--replicas", NULL, OPT_INT, OFF(replicas), (ptrdiff_t)OFF(replicas_given), 0, 1 << 20, 0,
     NULL},
    {"--max-memory", "--memory-per-rank", OPT_INT, OFF(max_memory), NOGIVEN, 1, INT64_MAX, 0, NULL},
    {"--verify", NULL, OPT_FLAG, OFF(verify), NOGIVEN, 0, 0, 1, NULL},
    {"--no-verify", NULL, OPT_FLAG, OFF(verify), NOGIVEN, 0, 0, 0, NULL},
    {"--progress", NULL, OPT_FLAG, OFF(progress), NOGIVEN, 0, 0, 1, NULL},
};
_Static_assert(OFF(alpha_im) == OFF(alpha) + sizeof(double) &&
                   OFF(beta_im) == OFF(beta) + sizeof(double),
               "OPT_COMPLEX writes the imaginary part after the real one");
#undef OFF
_Static_assert(TSR_NO_TRANS == 0 && TSR_TRANS == 1 && TSR_CONJ_TRANS == 2,
               "--transa's values are tsr_trans's");
_Static_assert(TSR_DIST_BCAST_AUTO == 0 && TSR_DIST_BCAST_MPI == 1 && TSR_DIST_BCAST_RING == 2 &&
                   TSR_DIST_BCAST_TREE == 3,
               "--bcast's choices are in tsr_dist_bcast's order");

/* Whole-string decimal integer in [lo, hi]; overflow is an error. */
static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  if (!s || !*s || s[0] == ' ' || s[0] == '+') return 0;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

/* Index of `val` in the '|'-separated `choices`, or -1. */
static int choice_index(const char *choices, const char *val) {
  size_t len = strlen(val);
  int idx = 0;
  for (const char *p = choices; *p; idx++) {
    const char *bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    if (n == len && strncmp(p, val, n) == 0) return idx;
    if (!bar) break;
    p = bar + 1;
  }
  return -1;
}

/* A whole-string finite double (a subnormal is accepted, an underflow to 0 is not); 0 with
   the reason in *why when it is not one. */
static int parse_double(const char *val, double *out, const char **why) {
  char *end = NULL;
  errno = 0;
  double x = strtod(val, &end);
  /* ERANGE with a finite result is underflow: a subnormal (1e-310) is a finite number and
     accepted; a value that rounds to zero (1e-400) is refused rather than read as 0. */
  int underflow = errno == ERANGE && isfinite(x) && fabs(x) <= DBL_MIN;
  *why = "expected a finite number";
  if (!*val || (errno && !underflow) || *end || !isfinite(x)) return 0;
  if (underflow && x == 0.0) {
    *why = "below the smallest double (4.94066e-324), it would be 0";
    return 0;
  }
  *out = x;
  return 1;
}

/* RE or RE,IM (two finite doubles, as parse_double) into z[0], z[1]. */
static int parse_complex(const char *val, double z[2], const char **why) {
  const char *comma = strchr(val, ',');
  char re[128];
  size_t n = comma ? (size_t)(comma - val) : strlen(val);
  if (n >= sizeof re) return parse_double(val, &z[0], why); /* too long: the real message */
  memcpy(re, val, n);
  re[n] = '\0';
  double x = 0.0, y = 0.0;
  if (!parse_double(re, &x, why) || (comma && !parse_double(comma + 1, &y, why))) {
    if (comma) *why = "expected a finite number or a complex number RE,IM (e.g. 1.5,-0.5)";
    return 0;
  }
  z[0] = x, z[1] = y;
  return 1;
}

/* Stores `val` for option d; returns 0 with a message when it is not acceptable. */
static int set_value(const opt_def *d, const char *name, const char *val, options *o, char *msg,
                     size_t cap) {
  char *base = (char *)o;
  int64_t v = 0;
  switch (d->kind) {
  case OPT_PATH:
    if (!*val) {
      snprintf(msg, cap, "option %s needs a non-empty file name", name);
      return 0;
    }
    *(const char **)(base + d->field) = val;
    return 1;
  case OPT_INT:
    if (!parse_int(val, d->lo, d->hi, &v)) {
      snprintf(msg, cap, "bad value '%.200s' for %s: expected an integer in [%lld, %lld]", val,
               name, (long long)d->lo, (long long)d->hi);
      return 0;
    }
    *(int64_t *)(base + d->field) = v;
    return 1;
  case OPT_DOUBLE:
  case OPT_COMPLEX: {
    const char *why = NULL;
    double z[2] = {0.0, 0.0};
    int ok = d->kind == OPT_DOUBLE ? parse_double(val, &z[0], &why) : parse_complex(val, z, &why);
    if (!ok) {
      snprintf(msg, cap, "bad value '%.200s' for %s: %s", val, name, why);
      return 0;
    }
    *(double *)(base + d->field) = z[0];
    if (d->kind == OPT_COMPLEX) *(double *)(base + d->field + sizeof(double)) = z[1];
    return 1;
  }
  case OPT_TRANS: {
    int idx = choice_index(d->choices, val);
    if (idx < 0) {
      snprintf(msg, cap, "bad value '%.200s' for %s: expected one of %s", val, name, d->choices);
      return 0;
    }
    *(int *)(base + d->field) = idx;
    return 1;
  }
  case OPT_CHOICE:
  case OPT_WORD: {
    int idx = choice_index(d->choices, val);
    if (idx < 0) {
      snprintf(msg, cap, "bad value '%.200s' for %s: expected one of %s", val, name, d->choices);
      return 0;
    }
    if (d->kind == OPT_CHOICE)
      *(int *)(base + d->field) = idx;
    else
      *(const char **)(base + d->field) = val;
    return 1;
  }
  case OPT_GRID: {
    const char *x = strchr(val, 'x');
    char left[32];
    int64_t p = 0, q = 0;
    size_t n = x ? (size_t)(x - val) : 0;
    if (x && n < sizeof left) {
      memcpy(left, val, n);
      left[n] = '\0';
    }
    if (!x || n >= sizeof left || !parse_int(left, d->lo, d->hi, &p) ||
        !parse_int(x + 1, d->lo, d->hi, &q)) {
      snprintf(msg, cap, "bad value '%.200s' for %s: expected PxQ with 1 <= P, Q <= %lld, e.g. 2x4",
               val, name, (long long)d->hi);
      return 0;
    }
    o->p = (int)p;
    o->q = (int)q;
    return 1;
  }
  case OPT_FLAG: break;
  }
  return 0;
}

int parse_options(int argc, char **argv, options *o, char *msg, size_t cap) {
  memset(o, 0, sizeof *o);
  o->seed = DEFAULT_SEED;
  o->block = DEFAULT_BLOCK;
  o->device = "auto";
  o->dtype = "f64";
  o->repeat = 1;
  o->warmup = -1; /* auto: 1 on a GPU, 0 on the CPU (step_environment) */
  o->verify = 1;
  o->alpha = 1.0;
  o->beta = 0.0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *inline_val = NULL;
    char name[64];
    /* "--opt=value" for options that take a value; a flag given a value is an error. */
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    if (len >= sizeof name) {
      snprintf(msg, cap, "unknown option '%.200s'", arg);
      return 0;
    }
    memcpy(name, arg, len);
    name[len] = '\0';
    if (eq) inline_val = eq + 1;
    const opt_def *d = NULL;
    for (size_t t = 0; t < sizeof table / sizeof table[0] && !d; t++)
      if (strcmp(name, table[t].name) == 0 || (table[t].alias && strcmp(name, table[t].alias) == 0))
        d = &table[t];
    if (!d) {
      snprintf(msg, cap, "%s '%.200s'", arg[0] == '-' ? "unknown option" : "unexpected argument",
               arg);
      return 0;
    }
    /* --transa alone is t; a following n|t|c is its value. */
    if (d->kind == OPT_TRANS && !inline_val &&
        (i + 1 >= argc || choice_index(d->choices, argv[i + 1]) < 0)) {
      *(int *)((char *)o + d->field) = d->ival;
      continue;
    }
    if (d->kind == OPT_FLAG) {
      if (inline_val) {
        snprintf(msg, cap, "option %s takes no value (got '%.200s')", name, arg);
        return 0;
      }
      *(int *)((char *)o + d->field) = d->ival;
      continue;
    }
    const char *val = inline_val;
    if (!val) {
      if (i + 1 >= argc) {
        snprintf(msg, cap, "option %s needs a value", name);
        return 0;
      }
      val = argv[++i];
    }
    if (!set_value(d, name, val, o, msg, cap)) return 0;
    if (d->given >= 0) *(int *)((char *)o + d->given) = 1;
  }

  int files = o->a_path || o->b_path, sizes = o->have_m || o->have_n || o->have_k;
  const char *err = NULL;
  if (files && sizes)
    err = "give either -a/-b files or -m/-n/-k sizes, not both";
  else if (files && !(o->a_path && o->b_path))
    err = "file input needs both -a and -b";
  else if (sizes && !(o->have_m && o->have_n && o->have_k))
    err = "random input needs all of -m, -n and -k";
  else if (files && o->dtype_given)
    err = "--dtype applies to random inputs only (files keep their dtype)";
  else if (o->replicas_given && o->algorithm != TSR_DIST_GEMM_2_5D)
    err = "--replicas applies to --algorithm 2.5d only";
  if (err) {
    snprintf(msg, cap, "%s", err);
    return 0;
  }
  if (!files && !sizes) o->m = o->n = o->k = DEFAULT_SIZE;
  return 1;
}
