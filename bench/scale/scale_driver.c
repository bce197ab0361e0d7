/* SPDX-License-Identifier: BSD-3-Clause */
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
 *   tsr_scale_driver --skeleton L --bcast mpi|ring|tree|auto [--segment BYTES] -m M -n N -k K
 *                    [--block B] [--grid PxQ]       (modeled mode only: SUMMA's panel loop)
 *   [--timeline FILE]: one rank's panel time line (the last rank's: panel 0's broadcasts reach
 *                    it last) appended to FILE as one JSON line.
 *
 * --skeleton: SUMMA's schedule rebuilt here on the pipelined broadcast of src/mpi/bcast.c
 * (tsr__bcast_*), until the library's SUMMA (src/mpi/summa.c) uses it: the broadcasts of the
 * next L panels in flight (look-ahead L, L + 1 panel slots), each panel's A broadcast along the
 * process row and B along the process column (tags: the slot), its modeled multiply charged in
 * slices of at most 100 us with the broadcasts tested in between (a GPU computes while the
 * host thread polls MPI, as summa.c's GPU path does). With --bcast mpi it is the library's
 * schedule on MPI_Ibcast, which checks the skeleton against tsr_dist_gemm_ex.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "mpi/mpi_internal.h"
#include "tessera.h"
#ifdef TSR_SMPI_MODEL
#include <smpi/smpi.h>
#endif

/* Panel completion times of the timeline rank (tsr_dist_gemm_ex's progress callback). */
typedef struct timeline {
  double *end; /* end[p]: MPI_Wtime when panel p was multiplied */
  int64_t n;
} timeline;

static void on_panel(int64_t panel, int64_t panels, void *ctx) {
  timeline *t = ctx;
  if (t->end && panel - 1 < t->n) t->end[panel - 1] = MPI_Wtime();
  (void)panels;
}

/* Appends {"label", "P", "rank", "panels", "t0", "wait": [...], "compute": [...]} to file. */
static int write_timeline(const char *file, const char *label, int size, int rank, int64_t panels,
                          const double *wait, const double *compute) {
  FILE *f = fopen(file, "a");
  if (!f) return 1;
  int bad = fprintf(f, "{\"label\": \"%s\", \"P\": %d, \"rank\": %d, \"panels\": %lld, ", label,
                    size, rank, (long long)panels) < 0;
  for (int pass = 0; pass < 2; pass++) {
    const double *v = pass ? compute : wait;
    bad |= fprintf(f, "\"%s\": [", pass ? "compute" : "wait") < 0;
    for (int64_t i = 0; i < panels; i++)
      bad |= fprintf(f, "%s%.6g", i ? ", " : "", v[i]) < 0;
    bad |= fprintf(f, "]%s", pass ? "}\n" : ", ") < 0;
  }
  bad |= fclose(f) != 0;
  return bad;
}

#ifdef TSR_SMPI_MODEL
/* SUMMA's panel loop on tsr__bcast (see the top). Returns the seconds of this rank and fills
   words (f64 elements received), wait/compute per panel when not NULL. */
static tsr_status skeleton(tsr_grid *g, long long m, long long n, long long k, long long nb,
                           int lookahead, tsr_dist_bcast algo, long long segment, double *seconds,
                           double *words, double *wait, double *compute) {
  const char *fn = "tsr_scale_driver";
  int64_t mloc = tsr_numroc(m, nb, g->myrow, 0, g->nprow);
  int64_t nloc = tsr_numroc(n, nb, g->mycol, 0, g->npcol);
  int64_t panels = (k + nb - 1) / nb;
  int S = lookahead + 1;
  tsr__bcast ops[16][2];
  void *abuf[16], *bbuf[16];
  if (S > 16) return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, fn, "look-ahead over 15");
  for (int i = 0; i < S; i++) {
    abuf[i] = SMPI_SHARED_MALLOC((size_t)(mloc * nb + 1) * 8);
    bbuf[i] = SMPI_SHARED_MALLOC((size_t)(nloc * nb + 1) * 8);
    ops[i][0].done = ops[i][1].done = 1;
  }
  tsr__bcast *live[32];
  tsr_status st = TSR_OK;
  uint64_t got = 0;
  MPI_Barrier(g->comm);
  double t_start = MPI_Wtime();
  for (int64_t p = 0; p < panels + lookahead && st == TSR_OK; p++) {
    /* post panel p (slot p % S: panel p - S was multiplied already) */
    if (p < panels) {
      int sl = (int)(p % S);
      int64_t w = k - p * nb < nb ? k - p * nb : nb;
      st = tsr__bcast_start(&ops[sl][0], abuf[sl], mloc * w, MPI_DOUBLE, (int)(p % g->npcol),
                            g->row_comm, algo, segment, sl);
      if (st == TSR_OK)
        st = tsr__bcast_start(&ops[sl][1], bbuf[sl], w * nloc, MPI_DOUBLE, (int)(p % g->nprow),
                              g->col_comm, algo, segment, sl);
    }
    int64_t q = p - lookahead; /* the panel to multiply now */
    if (q < 0 || st != TSR_OK) continue;
    int sq = (int)(q % S);
    for (int i = 0; i < S; i++)
      live[2 * i] = &ops[i][0], live[2 * i + 1] = &ops[i][1];
    double t0 = MPI_Wtime();
    /* Wait for panel q, forwarding every broadcast in flight meanwhile. */
    tsr__bcast *mine[2] = {&ops[sq][0], &ops[sq][1]};
    st = tsr__bcast_wait_while(2, mine, 2 * S, live);
    got += ops[sq][0].bytes_received + ops[sq][1].bytes_received;
    double t1 = MPI_Wtime();
    int64_t w = k - q * nb < nb ? k - q * nb : nb;
    double t = tsr__dist_model_gpu()
                   ? tsr__dist_model_staging_seconds((double)(mloc * w + w * nloc) * 8) +
                         tsr__dist_model_gemm_seconds((double)mloc, (double)nloc, (double)w, 8)
                   : 0;
    if (!tsr__dist_model_gpu() && mloc > 0 && nloc > 0)
      smpi_execute_flops(2.0 * (double)mloc * (double)nloc * (double)w);
    int slices = (int)(t / 100e-6) + 1;
    for (int i = 0; i < slices && t > 0; i++) {
      tsr__dist_model_charge(t / slices);
      int all = 0;
      tsr__bcast_testall(2 * S, live, &all);
    }
    double t2 = MPI_Wtime();
    if (wait) wait[q] = t1 - t0;
    if (compute) compute[q] = t2 - t1;
  }
  *seconds = MPI_Wtime() - t_start;
  *words = (double)got / 8.0;
  for (int i = 0; i < S; i++) {
    SMPI_SHARED_FREE(abuf[i]);
    SMPI_SHARED_FREE(bbuf[i]);
  }
  return st;
}
#endif

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
  int gp = 0, gq = 0, repeat = 1, replicas = 0, self = 0, lookahead = 0;
  long long segment = 0;
  tsr_dist_bcast bcast = TSR_DIST_BCAST_AUTO;
  const char *bcastname = "auto", *tl_file = NULL;
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
    else if (!strcmp(a, "--skeleton"))
      lookahead = atoi(v);
    else if (!strcmp(a, "--segment"))
      segment = atoll(v);
    else if (!strcmp(a, "--timeline"))
      tl_file = v;
    else if (!strcmp(a, "--bcast")) {
      bcastname = v;
      bcast = !strcmp(v, "mpi")    ? TSR_DIST_BCAST_MPI
              : !strcmp(v, "ring") ? TSR_DIST_BCAST_RING
              : !strcmp(v, "tree") ? TSR_DIST_BCAST_TREE
                                   : TSR_DIST_BCAST_AUTO;
    } else if (!strcmp(a, "--algorithm")) {
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
  int64_t panels = (k + nb - 1) / nb;
  double *tl_wait = tl_file ? calloc((size_t)panels + 1, sizeof(double)) : NULL;
  double *tl_comp = tl_file ? calloc((size_t)panels + 1, sizeof(double)) : NULL;
  if (lookahead > 0) {
    int rc = 1;
#ifdef TSR_SMPI_MODEL
    double sec = 0, words = 0, *times = calloc((size_t)repeat, sizeof *times);
    for (int r = 0; r < repeat && st == TSR_OK && times; r++) {
      st = skeleton(g, m, n, k, nb, lookahead, bcast, segment, &sec, &words,
                    rank == size - 1 ? tl_wait : NULL, rank == size - 1 ? tl_comp : NULL);
      MPI_Allreduce(&sec, &times[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    double wsum = 0, wmax = 0;
    MPI_Allreduce(&words, &wsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&words, &wmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    rc = st != TSR_OK || !times;
    if (!rc && tl_file && rank == size - 1 &&
        write_timeline(tl_file, label, size, rank, panels, tl_wait, tl_comp))
      rc = 1;
    if (!rc && rank == 0) {
      qsort(times, (size_t)repeat, sizeof *times, cmp_double);
      double med = times[repeat / 2];
      printf("{\"label\": \"%s\", \"P\": %d, \"grid\": \"%dx%d\", \"m\": %lld, \"n\": %lld, "
             "\"k\": %lld, \"block\": %lld, \"algorithm\": \"summa-skeleton\", \"ran\": "
             "\"summa\", \"bcast\": \"%s\", \"lookahead\": %d, \"segment\": %lld, "
             "\"replicas\": 1, \"seconds\": %.6g, \"seconds_min\": %.6g, \"seconds_max\": "
             "%.6g, \"repeat\": %d, \"gflops_per_rank\": %.6g, \"words_mean\": %.6g, "
             "\"words_max\": %.6g, \"panel_words_mean\": %.6g, \"comm_seconds_max\": 0, "
             "\"modeled\": 1}\n",
             label, size, g->nprow, g->npcol, m, n, k, nb, bcastname, lookahead, segment, med,
             times[0], times[repeat - 1], repeat, 2.0 * (double)m * n * k / size / med / 1e9,
             wsum / size, wmax, wsum / size);
    }
    free(times);
#else
    if (rank == 0) fprintf(stderr, "tsr_scale_driver: --skeleton needs the modeled build\n");
#endif
    if (rc && rank == 0 && st != TSR_OK)
      fprintf(stderr, "tsr_scale_driver: %s\n", tsr_last_error());
    free(tl_wait), free(tl_comp);
    tsr_grid_free(g);
    MPI_Finalize();
    return rc;
  }
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
  opt.bcast = bcast; /* checked; the library's schedules do not use it yet */
  timeline tl = {NULL, panels};
  if (tl_file && rank == size - 1) {
    tl.end = calloc((size_t)panels + 1, sizeof(double));
    opt.progress = on_panel;
    opt.progress_ctx = &tl;
  }
  double t_call = 0;
  double *times = calloc((size_t)repeat, sizeof *times);
  tsr_dist_stats s;
  memset(&s, 0, sizeof s);
  for (int r = 0; r < repeat && st == TSR_OK && times; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    t_call = MPI_Wtime();
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
  /* The library's time line (SUMMA only, GPU model): the progress call of panel p comes when
     its GEMM is queued on the modeled device (summa.c), which starts it when the previous one
     ends: the device waited from the previous GEMM's end (the call's start for panel 0) to
     the queueing, if later. */
  if (rc == 0 && tl.end && tl_wait && tl_comp && replicas <= 1 && alg == TSR_DIST_GEMM_SUMMA) {
    tsr_grid_props gi;
    tsr_grid_info(g, &gi);
    int64_t mloc = tsr_numroc(m, nb, gi.myrow, 0, gi.nprow);
    int64_t nloc = tsr_numroc(n, nb, gi.mycol, 0, gi.npcol);
    double dev_end = t_call;
    for (int64_t p = 0; p < panels; p++) {
      int64_t w = k - p * nb < nb ? k - p * nb : nb;
      double c = tsr__dist_model_gemm_seconds((double)mloc, (double)nloc, (double)w, 8);
      double start = tl.end[p] > dev_end ? tl.end[p] : dev_end;
      tl_wait[p] = start - dev_end;
      tl_comp[p] = c;
      dev_end = start + c;
    }
    if (write_timeline(tl_file, label, size, rank, panels, tl_wait, tl_comp)) rc = 1;
  }
  free(tl.end), free(tl_wait), free(tl_comp);
  free(times);
  tsr_dmatrix_free(A);
  tsr_dmatrix_free(B);
  tsr_dmatrix_free(C);
  tsr_grid_free(g);
  MPI_Finalize();
  return rc;
}
