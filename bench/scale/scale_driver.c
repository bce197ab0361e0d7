/*
 * Driver of the scaling study (bench/scale): one tsr_dist_gemm_ex on random (real mode) or
 * untouched (modeled mode, TSR_SMPI_MODEL) block-cyclic matrices, and one JSON line on rank 0
 * with the time (max over ranks, median over repeats), the rate, and the words each rank
 * received (mean and max; panel broadcasts and redistribution apart), as counted by the
 * library (tsr_dist_stats).
 *
 *   tsr_scale_driver -m M -n N -k K [--block B] [--grid PxQ] [--algorithm summa|2.5d|auto]
 *                    [--replicas C] [--repeat R] [--label TEXT] [--json FILE]
 *   tsr_scale_driver --pingpong BYTES [--repeat R]      (ranks 0 and 1: latency, bandwidth)
 *   tsr_scale_driver --self 1 -m M -n N -k K ...        (each rank its local share alone)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tessera.h"

static int pingpong(long bytes, int repeat, int rank) {
  char *buf = calloc((size_t)bytes + 1, 1);
  if (!buf) return 1;
  double best = 1e30;
  for (int r = 0; r < repeat + 1; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < 10; i++) {
      if (rank == 0) {
        MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
    }
    double t = (MPI_Wtime() - t0) / 20.0; /* one way */
    if (r > 0 && t < best) best = t;
  }
  if (rank == 0)
    printf("{\"pingpong_bytes\": %ld, \"one_way_seconds\": %.9g, \"bandwidth_Bps\": %.6g}\n", bytes,
           best, (double)bytes / best);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long long m = 1024, n = 1024, k = 1024, nb = 256;
  int gp = 0, gq = 0, repeat = 1, replicas = 0, self = 0;
  long ping = 0;
  tsr_dist_algorithm alg = TSR_DIST_GEMM_SUMMA;
  const char *label = "", *json = NULL, *algname = "summa";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) break;
    if (!strcmp(a, "-m"))
      m = atoll(v);
    else if (!strcmp(a, "-n"))
      n = atoll(v);
    else if (!strcmp(a, "-k"))
      k = atoll(v);
    else if (!strcmp(a, "--block"))
      nb = atoll(v);
    else if (!strcmp(a, "--grid"))
      sscanf(v, "%dx%d", &gp, &gq);
    else if (!strcmp(a, "--replicas"))
      replicas = atoi(v);
    else if (!strcmp(a, "--repeat"))
      repeat = atoi(v);
    else if (!strcmp(a, "--label"))
      label = v;
    else if (!strcmp(a, "--json"))
      json = v;
    else if (!strcmp(a, "--pingpong"))
      ping = atol(v);
    else if (!strcmp(a, "--self"))
      self = atoi(v);
    else if (!strcmp(a, "--algorithm")) {
      algname = v;
      alg = !strcmp(v, "2.5d")   ? TSR_DIST_GEMM_2_5D
            : !strcmp(v, "auto") ? TSR_DIST_GEMM_AUTO
                                 : TSR_DIST_GEMM_SUMMA;
    } else {
      if (rank == 0) fprintf(stderr, "tsr_scale_driver: unknown option %s\n", a);
      MPI_Finalize();
      return 2;
    }
    i++;
  }
  if (repeat < 1) repeat = 1;
  if (ping > 0) {
    int rc = size >= 2 ? pingpong(ping, repeat, rank) : 1;
    MPI_Finalize();
    return rc;
  }
  tsr_grid *g = NULL;
  tsr_dmatrix *A = NULL, *B = NULL, *C = NULL;
  tsr_status st = tsr_grid_create(MPI_COMM_WORLD, gp, gq, &g);
  if (st == TSR_OK && self) {
    /* Calibration: every rank multiplies its own share of C (the local sizes of the grid)
       alone, all ranks at once: the local GEMM rate under this machine's concurrency. */
    tsr_grid_props gi;
    tsr_grid_info(g, &gi);
    m = tsr_numroc(m, nb, gi.myrow, 0, gi.nprow);
    n = tsr_numroc(n, nb, gi.mycol, 0, gi.npcol);
    tsr_grid_free(g);
    g = NULL;
    st = tsr_grid_create(MPI_COMM_SELF, 1, 1, &g);
  }
  if (st == TSR_OK) st = tsr_dmatrix_create(g, m, k, nb, nb, TSR_F64, TSR_CPU, &A);
  if (st == TSR_OK) st = tsr_dmatrix_create(g, k, n, nb, nb, TSR_F64, TSR_CPU, &B);
  if (st == TSR_OK) st = tsr_dmatrix_create(g, m, n, nb, nb, TSR_F64, TSR_CPU, &C);
#ifndef TSR_SMPI_MODEL
  if (st == TSR_OK) st = tsr_dmatrix_fill_random(A, 1, -1.0, 1.0);
  if (st == TSR_OK) st = tsr_dmatrix_fill_random(B, 2, -1.0, 1.0);
#endif
  tsr_dist_gemm_options opt;
  memset(&opt, 0, sizeof opt);
  opt.algorithm = alg;
  opt.replicas = replicas;
  double *times = calloc((size_t)repeat, sizeof *times);
  tsr_dist_stats s;
  memset(&s, 0, sizeof s);
  for (int r = 0; r < repeat && st == TSR_OK && times; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    st = tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, C, &opt, &s);
    double t = s.total_seconds;
    MPI_Allreduce(&t, &times[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  int rc = 0;
  if (st != TSR_OK || !times) {
    if (rank == 0) fprintf(stderr, "tsr_scale_driver: %s\n", tsr_last_error());
    rc = 1;
  } else {
    qsort(times, (size_t)repeat, sizeof *times, cmp_double);
    double med = times[repeat / 2];
    /* words: elements of f64 received per rank */
    double w[3] = {(double)s.bytes_received / 8.0,
                   (double)(s.bytes_received - s.bytes_redistributed) / 8.0, s.comm_seconds},
           wsum[3], wmax[3];
    MPI_Allreduce(w, wsum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(w, wmax, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
      tsr_grid_props gi;
      tsr_grid_info(g, &gi);
      char line[1024];
      snprintf(line, sizeof line,
               "{\"label\": \"%s\", \"P\": %d, \"grid\": \"%dx%d\", \"m\": %lld, \"n\": %lld, "
               "\"k\": %lld, \"block\": %lld, \"algorithm\": \"%s\", \"ran\": \"%s\", "
               "\"replicas\": %d, \"seconds\": %.6g, \"seconds_min\": %.6g, \"seconds_max\": "
               "%.6g, \"repeat\": %d, \"gflops_per_rank\": %.6g, \"words_mean\": %.6g, "
               "\"words_max\": %.6g, \"panel_words_mean\": %.6g, \"comm_seconds_max\": %.6g, "
               "\"modeled\": %d}",
               label, size, gi.nprow, gi.npcol, m, n, k, nb, self ? "self" : algname,
               s.algorithm == TSR_DIST_GEMM_2_5D ? "2.5d" : "summa", s.replicas, med, times[0],
               times[repeat - 1], repeat,
               2.0 * (double)m * (double)n * (double)k / (self ? 1 : size) / med / 1e9,
               wsum[0] / size, wmax[0], wsum[1] / size, wmax[2],
#ifdef TSR_SMPI_MODEL
               1
#else
               0
#endif
      );
      printf("%s\n", line);
      if (json) {
        FILE *f = fopen(json, "a");
        if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0) {
          fprintf(stderr, "tsr_scale_driver: cannot append to %s\n", json);
          rc = 1;
        }
      }
    }
  }
  free(times);
  tsr_dmatrix_free(A);
  tsr_dmatrix_free(B);
  tsr_dmatrix_free(C);
  tsr_grid_free(g);
  MPI_Finalize();
  return rc;
}
