/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-call PDGEMM benchmark: the small and odd calls that ScaLAPACK's own routines make, timed
 * call by call. An ordinary ScaLAPACK program (BLACS grid, 9-entry descriptors, pdgemm_),
 * linked against ScaLAPACK only; bench/run_pdgemm_calls.sh runs it as is (the anchor) and with
 * libtessera_scalapack preloaded, alternating.
 *
 * usage: mpiexec -n P*Q bench_pdgemm_calls [--p P] [--q Q] [--sizes 8,64,...] [--nbs 2,16,...]
 *                                          [--modes update,square,offset,dot,rank1]
 *                                          [--seconds S]
 * Modes (each over every size n and block size nb):
 *   update  the trailing update of a blocked reduction (PDGEHRD, PDLARFB): A(1:n, nb+1:n) -=
 *           Y * A(nb+1:n, 1:nb)^T with Y an n x nb matrix of its own: k = nb, B transposed and
 *           starting one block down, C one block right;
 *   square  C = A B + C, n x n x n, whole matrices (the layout Tessera's SUMMA reads in place);
 *   offset  the same on submatrices from row and column 2 (misaligned with the blocks);
 *   dot     the inner product of two columns that Householder reductions make (PDSYTRD's
 *           tester, PDLARF): c(1,1) = A(2:n, 1)^T Y(2:n, 1), 1 x 1 x n-1, beta 0;
 *   rank1   the column update that follows it: A(2:n, 2) -= Y(2:n, 1) c(1, 2), n-1 x 1 x 1.
 * Rank 0 prints one JSON line per (mode, n, nb): the implementation (tessera when the process
 * has tsr_scalapack_get_stats), the median and spread of the microseconds per call over timed
 * batches (a batch is as many calls as fill about 20 ms, between two barriers), and a checksum
 * of C after one call from the same start, which the runner compares across implementations.
 * Preloaded with bench/mpi_count.c's shim (the runner's --count), it also prints the MPI calls
 * one pdgemm_ call makes: point-to-point and collective, the most over the ranks.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#include "bench_scalapack.h"

/* A distributed matrix with its descriptor and local array. */
typedef struct bmat {
  int desc[9];
  int mloc, nloc, lld;
  double *loc;
} bmat;

static bmat make(int ctxt, int m, int n, int nb, int which) {
  int p, q, r, c, zero = 0;
  Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
  bmat x;
  x.mloc = numroc_(&m, &nb, &r, &zero, &p);
  x.nloc = numroc_(&n, &nb, &c, &zero, &q);
  x.lld = x.mloc > 1 ? x.mloc : 1;
  int d[9] = {1, ctxt, m, n, nb, nb, 0, 0, x.lld};
  memcpy(x.desc, d, sizeof d);
  x.loc = malloc((size_t)x.lld * (size_t)(x.nloc > 0 ? x.nloc : 1) * sizeof *x.loc);
  if (!x.loc) {
    fprintf(stderr, "bench_pdgemm_calls: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int lj = 0; lj < x.nloc; lj++) {
    int jl = lj + 1, j = indxl2g_(&jl, &nb, &c, &zero, &q) - 1;
    for (int li = 0; li < x.mloc; li++) {
      int il = li + 1, i = indxl2g_(&il, &nb, &r, &zero, &p) - 1;
      x.loc[li + (size_t)lj * x.lld] = value(i, j, which);
    }
  }
  return x;
}

/* One call of the mode on a (A), y (the update's Y or the product's B) and c. */
static void call(const char *mode, int n, int nb, bmat *a, bmat *y, bmat *c) {
  int one = 1, two = 2, nb1 = nb + 1, rest = n - nb, m1 = n - 1;
  double minus = -1.0, plus = 1.0;
  if (!strcmp(mode, "update")) {
    pdgemm_("N", "T", &n, &rest, &nb, &minus, y->loc, &one, &one, y->desc, a->loc, &nb1, &one,
            a->desc, &plus, a->loc, &one, &nb1, a->desc);
  } else if (!strcmp(mode, "square")) {
    pdgemm_("N", "N", &n, &n, &n, &plus, a->loc, &one, &one, a->desc, y->loc, &one, &one, y->desc,
            &plus, c->loc, &one, &one, c->desc);
  } else if (!strcmp(mode, "dot")) {
    double zero = 0.0;
    pdgemm_("T", "N", &one, &one, &m1, &plus, a->loc, &two, &one, a->desc, y->loc, &two, &one,
            y->desc, &zero, c->loc, &one, &one, c->desc);
  } else if (!strcmp(mode, "rank1")) {
    pdgemm_("N", "N", &m1, &one, &one, &minus, y->loc, &two, &one, y->desc, c->loc, &one, &two,
            c->desc, &plus, a->loc, &two, &two, a->desc);
  } else {
    pdgemm_("N", "N", &m1, &m1, &m1, &plus, a->loc, &two, &two, a->desc, y->loc, &two, &two,
            y->desc, &plus, c->loc, &two, &two, c->desc);
  }
}

static double checksum(const bmat *x) {
  double s = 0.0, all = 0.0;
  for (int lj = 0; lj < x->nloc; lj++)
    for (int li = 0; li < x->mloc; li++)
      s += x->loc[li + (size_t)lj * x->lld];
  MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

/* Times one (mode, n, nb); rank 0 prints its JSON line. */
static void run(int ctxt, const char *mode, int n, int nb, double seconds) {
  bool upd = !strcmp(mode, "update");
  if (upd && n <= nb) return;
  bmat a = make(ctxt, n, n, nb, 1), y = make(ctxt, n, upd ? nb : n, nb, 2),
       c = make(ctxt, n, n, nb, 3);
  /* The checksum of one call from the start (the update writes A, the others C). */
  call(mode, n, nb, &a, &y, &c);
  double sum = checksum(upd || !strcmp(mode, "rank1") ? &a : &c);
  /* Calls per batch: about 20 ms, agreed from rank 0's first timing. */
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now_s();
  call(mode, n, nb, &a, &y, &c);
  MPI_Barrier(MPI_COMM_WORLD);
  double once = now_s() - t0;
  MPI_Bcast(&once, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int per = (int)(0.02 / (once > 1e-7 ? once : 1e-7));
  per = per < 1 ? 1 : per > 20000 ? 20000 : per;
  int batches = (int)(seconds / (once * per + 1e-9));
  batches = batches < 5 ? 5 : batches > 50 ? 50 : batches;
  double *us = malloc((size_t)batches * sizeof *us);
  for (int bi = 0; bi < batches; bi++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double s = now_s();
    for (int i = 0; i < per; i++)
      call(mode, n, nb, &a, &y, &c);
    MPI_Barrier(MPI_COMM_WORLD);
    us[bi] = (now_s() - s) / per * 1e6;
  }
  /* The MPI calls of one pdgemm_ call (with the counting shim preloaded). */
  void (*count)(uint64_t *, uint64_t *) =
      (void (*)(uint64_t *, uint64_t *))dlsym(RTLD_DEFAULT, "tsr_mpi_count_read");
  double per_call[2] = {-1.0, -1.0}, most[2] = {-1.0, -1.0};
  if (count) {
    enum { TIMES = 10 };
    uint64_t p0, c0, p1, c1;
    MPI_Barrier(MPI_COMM_WORLD);
    count(&p0, &c0);
    for (int i = 0; i < TIMES; i++)
      call(mode, n, nb, &a, &y, &c);
    count(&p1, &c1);
    per_call[0] = (double)(p1 - p0) / TIMES;
    per_call[1] = (double)(c1 - c0) / TIMES;
    MPI_Allreduce(per_call, most, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    double lo = us[0], hi = us[0];
    for (int bi = 1; bi < batches; bi++) {
      lo = us[bi] < lo ? us[bi] : lo;
      hi = us[bi] > hi ? us[bi] : hi;
    }
    int p, q, r, cc;
    Cblacs_gridinfo(ctxt, &p, &q, &r, &cc);
    const char *impl = dlsym(RTLD_DEFAULT, "tsr_scalapack_get_stats") ? "tessera" : "scalapack";
    printf("{\"impl\":\"%s\",\"mode\":\"%s\",\"p\":%d,\"q\":%d,\"n\":%d,\"nb\":%d,\"calls\":%d,"
           "\"median_us\":%.3f,\"min_us\":%.3f,\"max_us\":%.3f,\"checksum\":%.17g,"
           "\"mpi_p2p_per_call\":%.1f,\"mpi_collectives_per_call\":%.1f}\n",
           impl, mode, p, q, n, nb, per * batches, median(us, batches), lo, hi, sum, most[0],
           most[1]);
    fflush(stdout);
  }
  free(us);
  free(a.loc), free(y.loc), free(c.loc);
}

/* "8,64,512" into at most cap ints; returns the count. */
static int parse_list(const char *s, int *v, int cap) {
  int n = 0;
  while (*s && n < cap) {
    char *end;
    long x = strtol(s, &end, 10);
    if (end == s || x < 1) return -1;
    v[n++] = (int)x;
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int p = 1, q = 0, sizes[32] = {8, 64, 256, 1024}, nbs[32] = {2, 16, 64, 256}, ns = 4, nn = 4;
  const char *modes = "update,square,offset,dot,rank1";
  double seconds = 0.5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--p"))
      p = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--q"))
      q = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--sizes"))
      ns = parse_list(argv[i + 1], sizes, 32);
    else if (!strcmp(argv[i], "--nbs"))
      nn = parse_list(argv[i + 1], nbs, 32);
    else if (!strcmp(argv[i], "--modes"))
      modes = argv[i + 1];
    else if (!strcmp(argv[i], "--seconds"))
      seconds = atof(argv[i + 1]);
  }
  int rank, size;
  Cblacs_pinfo(&rank, &size);
  if (q == 0) q = size / p;
  if (p < 1 || q < 1 || p * q != size || ns < 1 || nn < 1 || seconds <= 0.0) {
    if (rank == 0)
      fprintf(stderr, "bench_pdgemm_calls: need P*Q = %d ranks, sizes and block sizes >= 1\n",
              size);
    MPI_Finalize();
    return 2;
  }
  int ctxt;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "R", p, q);
  char buf[256];
  snprintf(buf, sizeof buf, "%s", modes);
  for (char *mode = strtok(buf, ","); mode; mode = strtok(NULL, ","))
    for (int si = 0; si < ns; si++)
      for (int bi = 0; bi < nn; bi++)
        if (nbs[bi] <= sizes[si]) run(ctxt, mode, sizes[si], nbs[bi], seconds);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return 0;
}
