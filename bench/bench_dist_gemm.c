/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Distributed GEMM benchmark: Tessera's SUMMA (tsr_dist_gemm) against ScaLAPACK PDGEMM (the
 * anchor) on the same P x Q grid, block size and data in the same run, f64, C = A * B, square
 * n. Also: the single-process OpenBLAS dgemm with 2 threads (the machine ceiling, measured on
 * rank 0 while the other ranks sleep), and the bytes each rank received against the SUMMA
 * model 2 n^2 / sqrt(P) elements.
 *
 * Each figure is the median over the repetitions of the slowest rank's time.
 * GFLOP/s = 2 n^3 / seconds / 1e9. Tessera's local multiply runs with one OpenMP thread per
 * rank, ScaLAPACK with one OpenBLAS thread per rank.
 *
 * Usage (under mpiexec -n P):
 *   bench_dist_gemm [--sizes 2048,4096] [--nb 256] [--reps 3] [--json FILE] [--rows FILE]
 *     --rows FILE  also append one JSON line per case to FILE (bench/run_dist_gemm.sh
 *                  collects the rows of several P there)
 *   bench_dist_gemm --table ROWS [--json FILE]
 *     prints one table of the rows collected in ROWS and writes them as one JSON file
 * Default JSON: bench_dist_gemm.json in the current directory.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "tessera.h"
#include "tessera/dist.h"
#if TSR_HAVE_OPENMP
#include <omp.h>
#endif

#include "bench_out.h"
#include "bench_util.h"

/* OpenBLAS, BLACS and ScaLAPACK entry points (no public C headers ship with Debian's
   ScaLAPACK). */
void openblas_set_num_threads(int num_threads);
void Cblacs_get(int icontxt, int what, int *val);
void Cblacs_gridinit(int *icontxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int icontxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int icontxt);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);

static int rank_ = 0, size_ = 1;

typedef struct row {
  int p, nprow, npcol, n, nb;
  double tessera, scalapack, ceiling; /* GFLOP/s */
  double recv_mb, model_mb;           /* per rank: measured average, SUMMA model */
  double max_diff;                    /* max |C_tessera - C_scalapack| / max |C| */
} row;

/* Waits for rank 0 without spinning, so the idle ranks leave the cores to it. */
static void sleep_barrier(void) {
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  int done = 0;
  while (!done) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (!done) {
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
    }
  }
}

#define CHECK(call)                                                                                \
  do {                                                                                             \
    tsr_status st_ = (call);                                                                       \
    if (st_ != TSR_OK) {                                                                           \
      if (rank_ == 0) fprintf(stderr, "%s: %s\n", #call, tsr_last_error());                        \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

/* The local block of a matrix as a column-major array with leading dimension lld. */
static double *local_colmajor(const tsr_dmatrix *a) {
  tsr_dmatrix_props info;
  CHECK(tsr_dmatrix_info(a, &info));
  tsr_array *loc = NULL;
  CHECK(tsr_dmatrix_local(a, &loc));
  size_t cnt = (size_t)(info.local_rows * info.local_cols);
  double *rm = malloc((cnt + 1) * sizeof *rm);
  double *cm = calloc((size_t)(info.lld * info.local_cols) + 1, sizeof *cm);
  CHECK(tsr_array_read(loc, rm, cnt * sizeof *rm));
  for (int64_t i = 0; i < info.local_rows; i++)
    for (int64_t j = 0; j < info.local_cols; j++)
      cm[i + j * info.lld] = rm[i * info.local_cols + j];
  free(rm);
  tsr_array_release(loc);
  return cm;
}

static row bench_one(tsr_grid *grid, int n, int nb, int reps) {
  tsr_grid_props gi;
  CHECK(tsr_grid_info(grid, &gi));
  row r;
  memset(&r, 0, sizeof r);
  r.p = size_;
  r.nprow = gi.nprow;
  r.npcol = gi.npcol;
  r.n = n;
  r.nb = nb;
  double flops = 2.0 * n * (double)n * n;
  double *t = calloc((size_t)reps, sizeof *t);

  /* Tessera. */
  tsr_dmatrix *A = NULL, *B = NULL, *C = NULL;
  CHECK(tsr_dmatrix_create(grid, n, n, nb, nb, TSR_F64, TSR_CPU, &A));
  CHECK(tsr_dmatrix_create(grid, n, n, nb, nb, TSR_F64, TSR_CPU, &B));
  CHECK(tsr_dmatrix_create(grid, n, n, nb, nb, TSR_F64, TSR_CPU, &C));
  CHECK(tsr_dmatrix_fill_random(A, 1, -1, 1));
  CHECK(tsr_dmatrix_fill_random(B, 2, -1, 1));
  tsr_dist_stats stats;
  for (int it = -1; it < reps; it++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CHECK(tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, A, B, 0.0, C, NULL, &stats));
    double el = MPI_Wtime() - t0, worst = 0;
    MPI_Allreduce(&el, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it >= 0) t[it] = worst;
  }
  r.tessera = flops / median(t, reps) * 1e-9;
  double recv = (double)stats.bytes_received, sum = 0;
  MPI_Allreduce(&recv, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  r.recv_mb = sum / size_ / 1e6;
  r.model_mb = 2.0 * n * (double)n / sqrt((double)size_) * 8 / 1e6;

  /* ScaLAPACK on the same grid (row-major BLACS grid, like ours), same blocks and data. */
  int ctxt = 0, bp, bq, br, bc;
  Cblacs_get(0, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", gi.nprow, gi.npcol);
  Cblacs_gridinfo(ctxt, &bp, &bq, &br, &bc);
  if (br != gi.myrow || bc != gi.mycol) {
    fprintf(stderr, "rank %d: BLACS puts it at (%d,%d), Tessera at (%d,%d)\n", rank_, br, bc,
            gi.myrow, gi.mycol);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  tsr_dmatrix_props info;
  CHECK(tsr_dmatrix_info(C, &info));
  int desc[9], zero = 0, one = 1, lld = (int)info.lld, ierr = 0;
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctxt, &lld, &ierr);
  for (int i = 0; i < 9; i++)
    if (i != 1 && desc[i] != info.desc[i]) {
      fprintf(stderr, "descriptor entry %d: ScaLAPACK %d, Tessera %d\n", i, desc[i], info.desc[i]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  double *a = local_colmajor(A), *b = local_colmajor(B);
  double *c = calloc((size_t)(info.lld * info.local_cols) + 1, sizeof *c);
  double alpha = 1.0, beta = 0.0;
  for (int it = -1; it < reps; it++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    pdgemm_("N", "N", &n, &n, &n, &alpha, a, &one, &one, desc, b, &one, &one, desc, &beta, c, &one,
            &one, desc);
    double el = MPI_Wtime() - t0, worst = 0;
    MPI_Allreduce(&el, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it >= 0) t[it] = worst;
  }
  r.scalapack = flops / median(t, reps) * 1e-9;
  /* Both results agree (the descriptors really describe the same layout). */
  double *ours = local_colmajor(C), d[2] = {0, 0}, dmax[2];
  for (int64_t j = 0; j < info.local_cols; j++)
    for (int64_t i = 0; i < info.local_rows; i++) {
      double x = ours[i + j * info.lld], y = c[i + j * info.lld];
      if (fabs(x - y) > d[0]) d[0] = fabs(x - y);
      if (fabs(y) > d[1]) d[1] = fabs(y);
    }
  MPI_Allreduce(d, dmax, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  r.max_diff = dmax[1] > 0 ? dmax[0] / dmax[1] : dmax[0];
  free(ours);
  free(a), free(b), free(c);
  Cblacs_gridexit(ctxt);
  tsr_dmatrix_free(A), tsr_dmatrix_free(B), tsr_dmatrix_free(C);

  /* The ceiling: one process, OpenBLAS with 2 threads, the other ranks asleep. */
  if (rank_ == 0) {
    size_t nn = (size_t)n * (size_t)n;
    double *x = malloc(nn * sizeof *x), *y = malloc(nn * sizeof *y), *z = malloc(nn * sizeof *z);
    for (size_t i = 0; i < nn; i++) {
      x[i] = (double)(i % 1013) / 1013.0 - 0.5;
      y[i] = (double)(i % 997) / 997.0 - 0.5;
    }
    openblas_set_num_threads(2);
    for (int it = -1; it < reps; it++) {
      double t0 = MPI_Wtime();
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, x, n, y, n, 0.0, z, n);
      if (it >= 0) t[it] = MPI_Wtime() - t0;
    }
    openblas_set_num_threads(1);
    r.ceiling = flops / median(t, reps) * 1e-9;
    free(x), free(y), free(z);
  }
  sleep_barrier();
  MPI_Bcast(&r.ceiling, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  free(t);
  return r;
}

static void print_table(const row *rows, int nrows) {
  printf("\nDistributed DGEMM, C = A*B, n x n, f64: Tessera SUMMA vs ScaLAPACK PDGEMM (same grid, "
         "block, data)\n");
  printf("%3s %5s %6s %5s %12s %12s %7s %12s %8s %10s %10s %9s\n", "P", "grid", "n", "NB",
         "tessera", "scalapack", "ratio", "ceiling(2t)", "of ceil", "recv MB/rk", "2n2/vP MB",
         "max diff");
  for (int i = 0; i < nrows; i++) {
    const row *r = &rows[i];
    char grid[16];
    snprintf(grid, sizeof grid, "%dx%d", r->nprow, r->npcol);
    printf("%3d %5s %6d %5d %12.2f %12.2f %6.2fx %12.2f %7.2fx %10.1f %10.1f %9.1e\n", r->p, grid,
           r->n, r->nb, r->tessera, r->scalapack, r->tessera / r->scalapack, r->ceiling,
           r->tessera / r->ceiling, r->recv_mb, r->model_mb, r->max_diff);
  }
  printf("(GFLOP/s, medians of the slowest rank; ceiling = one process, OpenBLAS dgemm, 2 "
         "threads)\n");
}

static void row_json(FILE *f, const row *r) {
  fprintf(f,
          "{\"P\": %d, \"nprow\": %d, \"npcol\": %d, \"n\": %d, \"nb\": %d, \"tessera_gflops\": "
          "%.6g, \"scalapack_gflops\": %.6g, \"ceiling_gflops\": %.6g, \"recv_mb_per_rank\": "
          "%.6g, \"model_mb_per_rank\": %.6g, \"max_rel_diff\": %.6g}",
          r->p, r->nprow, r->npcol, r->n, r->nb, r->tessera, r->scalapack, r->ceiling, r->recv_mb,
          r->model_mb, r->max_diff);
}

static int row_parse(const char *line, row *r) {
  return sscanf(line,
                "{\"P\": %d, \"nprow\": %d, \"npcol\": %d, \"n\": %d, \"nb\": %d, "
                "\"tessera_gflops\": %lf, \"scalapack_gflops\": %lf, \"ceiling_gflops\": %lf, "
                "\"recv_mb_per_rank\": %lf, \"model_mb_per_rank\": %lf, \"max_rel_diff\": %lf}",
                &r->p, &r->nprow, &r->npcol, &r->n, &r->nb, &r->tessera, &r->scalapack, &r->ceiling,
                &r->recv_mb, &r->model_mb, &r->max_diff) == 11;
}

static int write_json(const char *path, const row *rows, int nrows) {
  bench_out out;
  FILE *f = bench_out_open(&out);
  if (!f) {
    fprintf(stderr, "bench_dist_gemm: cannot write %s: out of memory\n", path);
    return 1;
  }
  fprintf(f, "{\n  \"benchmark\": \"dist_gemm\",\n  \"anchor\": \"ScaLAPACK PDGEMM (OpenBLAS, 1 "
             "thread per rank)\",\n  \"ceiling\": \"OpenBLAS dgemm, 1 process, 2 threads\",\n"
             "  \"unit\": \"GFLOP/s\",\n  \"rows\": [\n");
  for (int i = 0; i < nrows; i++) {
    fprintf(f, "    ");
    row_json(f, &rows[i]);
    fprintf(f, "%s\n", i + 1 < nrows ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  if (bench_out_close(&out, "bench_dist_gemm", path) != 0) return 1;
  printf("wrote %s\n", path);
  return 0;
}

int main(int argc, char **argv) {
  const char *json = "bench_dist_gemm.json", *rows_path = NULL, *table = NULL;
  char sizes[256] = "2048,4096";
  int nb = 256, reps = 3;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
      snprintf(sizes, sizeof sizes, "%s", argv[++i]);
    else if (!strcmp(argv[i], "--nb") && i + 1 < argc)
      nb = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--json") && i + 1 < argc)
      json = argv[++i];
    else if (!strcmp(argv[i], "--rows") && i + 1 < argc)
      rows_path = argv[++i];
    else if (!strcmp(argv[i], "--table") && i + 1 < argc)
      table = argv[++i];
    else {
      fprintf(stderr,
              "usage: %s [--sizes N,N] [--nb NB] [--reps R] [--json FILE] [--rows FILE] "
              "| --table ROWS [--json FILE]\n",
              argv[0]);
      return 2;
    }
  }
  if (nb < 1 || reps < 1) return 2;

  if (table) { /* no MPI work: collect the rows of several runs into one table */
    row rows[64];
    int nrows = 0;
    FILE *f = fopen(table, "r");
    char line[1024];
    while (f && nrows < 64 && fgets(line, sizeof line, f))
      if (row_parse(line, &rows[nrows])) nrows++;
    if (f) fclose(f);
    if (nrows == 0) {
      fprintf(stderr, "no rows in %s\n", table);
      return 1;
    }
    print_table(rows, nrows);
    return write_json(json, rows, nrows);
  }

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  openblas_set_num_threads(1);
#if TSR_HAVE_OPENMP
  omp_set_num_threads(1);
#endif
  tsr_grid *grid = NULL;
  CHECK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &grid));
  row rows[16];
  int nrows = 0;
  for (char *tok = strtok(sizes, ","); tok && nrows < 16; tok = strtok(NULL, ",")) {
    int n = atoi(tok);
    if (n < 1) continue;
    rows[nrows++] = bench_one(grid, n, nb, reps);
    if (rank_ == 0) {
      fprintf(stderr, "P=%d n=%d: tessera %.2f, scalapack %.2f, ceiling %.2f GFLOP/s\n", size_, n,
              rows[nrows - 1].tessera, rows[nrows - 1].scalapack, rows[nrows - 1].ceiling);
    }
  }
  int rc = 0;
  if (rank_ == 0) {
    print_table(rows, nrows);
    rc = write_json(json, rows, nrows);
    if (rows_path) { /* appended to by several runs (bench/run_dist_gemm.sh): checked */
      FILE *f = fopen(rows_path, "a");
      for (int i = 0; f && i < nrows; i++) {
        row_json(f, &rows[i]);
        fputc('\n', f);
      }
      if (!f || ferror(f) || fclose(f) != 0) {
        fprintf(stderr, "bench_dist_gemm: cannot append to %s\n", rows_path);
        rc = 1;
      }
    }
  }
  tsr_grid_free(grid);
  MPI_Finalize();
  return rc;
}
