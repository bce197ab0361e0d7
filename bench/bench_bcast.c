/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Times the panel broadcasts of src/mpi/bcast.c on this machine: MPI_Ibcast (the MPI's own
 * algorithm), the pipelined ring and binary tree, and AUTO, over message sizes, alternating the
 * algorithms within each round (the machine is shared: drifts hit all alike) and reporting the
 * median, minimum and maximum over rounds. One measurement: a barrier, then every rank starts
 * the broadcast and waits for it; the time is the latest rank's (MPI_MAX), from the root's
 * random data, checked on every rank after the last round of each size (a wrong copy is an
 * error, exit 1). Run under mpirun (bench/scale/run.sh --parts bcast does, at 2 and 4 ranks;
 * TSR_SCALE_BCAST_SIZES sets its --sizes, e.g. to re-measure the size below which AUTO takes
 * MPI_Ibcast for host buffers, TSR_BCAST_MPI_BELOW):
 *
 *   mpirun -n P bench_bcast [--sizes B,B,...] [--rounds R] [--algos mpi,ring,tree,auto]
 *                           [--segment BYTES] [--json FILE]
 *
 * Prints one JSON line per size and algorithm on rank 0 (and appends it to FILE).
 *
 * Built with smpicc and -DTSR_SMPI_MODEL (bench/scale), the same program runs under SimGrid's
 * smpirun for the simulated broadcast study: buffers folded (SMPI_SHARED_MALLOC, so the data
 * are garbage and not checked), one repetition a measurement.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "mpi/mpi_internal.h"
#ifdef TSR_SMPI_MODEL
#include <smpi/smpi.h>
#define BUF_ALLOC(n) SMPI_SHARED_MALLOC(n)
#define BUF_FREE(p) SMPI_SHARED_FREE(p)
#define CHECKED 0
#else
#define BUF_ALLOC(n) malloc(n)
#define BUF_FREE(p) free(p)
#define CHECKED 1
#endif

static const char *algo_name(tsr_dist_bcast a) {
  return a == TSR_DIST_BCAST_MPI    ? "mpi"
         : a == TSR_DIST_BCAST_RING ? "ring"
         : a == TSR_DIST_BCAST_TREE ? "tree"
                                    : "auto";
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  long long sizes[64];
  int nsizes = 0, rounds = 9, nalgo = 0;
  tsr_dist_bcast algos[4];
  long long segment = 0;
  const char *json = NULL, *size_list = "65536,262144,1048576,4194304,16777216,67108864",
             *algo_list = "mpi,ring,tree,auto";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--sizes"))
      size_list = argv[i + 1];
    else if (!strcmp(argv[i], "--rounds"))
      rounds = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--algos"))
      algo_list = argv[i + 1];
    else if (!strcmp(argv[i], "--segment"))
      segment = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--json"))
      json = argv[i + 1];
    else {
      if (rank == 0) fprintf(stderr, "bench_bcast: unknown option %s\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }
  for (const char *p = size_list; *p && nsizes < 64;) {
    sizes[nsizes++] = atoll(p);
    const char *c = strchr(p, ',');
    if (!c) break;
    p = c + 1;
  }
  for (const char *p = algo_list; *p && nalgo < 4;) {
    algos[nalgo++] = !strncmp(p, "mpi", 3)    ? TSR_DIST_BCAST_MPI
                     : !strncmp(p, "ring", 4) ? TSR_DIST_BCAST_RING
                     : !strncmp(p, "tree", 4) ? TSR_DIST_BCAST_TREE
                                              : TSR_DIST_BCAST_AUTO;
    const char *c = strchr(p, ',');
    if (!c) break;
    p = c + 1;
  }
  if (rounds < 1 || nsizes < 1 || segment < 0) {
    if (rank == 0) fprintf(stderr, "bench_bcast: bad --rounds, --sizes or --segment\n");
    MPI_Finalize();
    return 2;
  }
  /* Whether the ranks are oversubscribed (AUTO's rule depends on it): agreed here, once, outside
     the timed broadcasts (the first AUTO broadcast would otherwise make that collective). */
  bool oversubscribed = false;
  int rc = tsr__bcast_oversubscribed(MPI_COMM_WORLD, &oversubscribed) == TSR_OK ? 0 : 1;
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, tsr_last_error());
  FILE *out = NULL;
  if (rank == 0 && json && !(out = fopen(json, "a"))) {
    fprintf(stderr, "bench_bcast: cannot open %s\n", json);
    rc = 1;
  }
  int any = 0;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  rc = any;
  for (int s = 0; s < nsizes && rc == 0; s++) {
    long long bytes = sizes[s] / 8 * 8;
    int64_t count = bytes / 8;
    double *buf = BUF_ALLOC((size_t)bytes + 8), *ref = CHECKED ? malloc((size_t)bytes + 8) : NULL;
    double *t = malloc(sizeof *t * (size_t)(rounds * nalgo));
    if (!buf || (CHECKED && !ref) || !t) {
      fprintf(stderr, "bench_bcast: out of memory (%lld bytes)\n", bytes);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int64_t i = 0; CHECKED && i < count; i++)
      ref[i] = sin((double)i * 0.37 + 1.0);
    /* Repetitions per measurement: about 20 ms of broadcasting at 5 GB/s. */
    int reps = CHECKED ? (int)(1e8 / (double)(bytes + 1) + 1) : 1;
    if (reps > 50) reps = 50;
    tsr_dist_bcast resolved[4];
    for (int r = 0; r < rounds && rc == 0; r++)
      for (int j = 0; j < nalgo && rc == 0; j++) {
        int a = (j + r) % nalgo; /* rotate the order every round */
        if (CHECKED && rank == 0) memcpy(buf, ref, (size_t)bytes);
        if (CHECKED && rank != 0) memset(buf, 0, (size_t)bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        tsr_status st = TSR_OK;
        for (int q = 0; q < reps && st == TSR_OK; q++) {
          tsr__bcast op;
          st = tsr__bcast_start(&op, buf, count, MPI_DOUBLE, 0, MPI_COMM_WORLD, algos[a], segment,
                                0);
          if (st == TSR_OK) st = tsr__bcast_wait(&op);
          resolved[a] = op.algo;
        }
        double dt = (MPI_Wtime() - t0) / reps, mx = 0;
        int bad = st != TSR_OK || (CHECKED && memcmp(buf, ref, (size_t)bytes) != 0), anybad = 0;
        if (st != TSR_OK) fprintf(stderr, "rank %d: %s\n", rank, tsr_last_error());
        MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (anybad) {
          if (rank == 0) fprintf(stderr, "bench_bcast: %s broadcast wrong\n", algo_name(algos[a]));
          rc = 1;
        }
        t[a * rounds + r] = mx;
      }
    for (int a = 0; a < nalgo && rc == 0 && rank == 0; a++) {
      double *v = t + a * rounds;
      double med = median(v, rounds); /* sorts v */
      char line[512];
      snprintf(
          line, sizeof line,
          "{\"bench\": \"bcast\", \"P\": %d, \"bytes\": %lld, \"algo\": \"%s\", "
          "\"ran\": \"%s\", \"oversubscribed\": %d, \"segment\": %lld, \"rounds\": %d, "
          "\"reps\": %d, "
          "\"median_s\": %.6g, \"min_s\": %.6g, \"max_s\": %.6g, \"GBps\": %.4g}",
          size, bytes, algo_name(algos[a]), algo_name(resolved[a]), (int)oversubscribed,
          (long long)(segment ? segment : tsr__bcast_segment_bytes(bytes, size, oversubscribed)),
          rounds, reps, med, v[0], v[rounds - 1], (double)bytes / med / 1e9);
      printf("%s\n", line);
      if (out && fprintf(out, "%s\n", line) < 0) rc = 1;
    }
    fflush(stdout);
    BUF_FREE(buf);
    free(ref), free(t);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  if (out && fclose(out) != 0) rc = 1;
  if (rc && rank == 0) fprintf(stderr, "bench_bcast: failed\n");
  MPI_Finalize();
  return rc;
}
