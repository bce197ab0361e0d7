/* SPDX-License-Identifier: BSD-3-Clause */
/* The public distributed entries after MPI_Finalize (issue 49): a grid and its matrices made
   and used before it are freed after it with TSR_OK and no MPI call (MPI_Comm_free is not
   allowed then: with Open MPI any MPI call after MPI_Finalize aborts the process, which fails
   the test), and every entry that would communicate returns its documented status with
   "MPI is already finalized" and the public name in the message instead of calling MPI: every
   public entry of tessera/dist.h is called here after MPI_Finalize (the local ones answer as
   before), a .npy handle opened before it included (tsr_dmatrix_npy_close frees it without
   MPI_File_close).
   Runs with 1 and 2 ranks; each rank checks itself after MPI_Finalize (no collective is left
   to agree with). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"
#include "tessera/dist.h"

static int failures;

static double element(int64_t i, int64_t j, void *ctx) {
  (void)ctx;
  return (double)(i * 100 + j);
}

/* Records a failure when `st` is not `want` or the message lacks `needle` (NULL: any). */
static void expect(const char *what, tsr_status st, tsr_status want, const char *needle) {
  const char *msg = tsr_last_error();
  if (st == want && (!needle || strstr(msg, needle))) return;
  fprintf(stderr, "%s: got %s \"%s\", want %s with \"%s\"\n", what, tsr_status_name(st), msg,
          tsr_status_name(want), needle ? needle : "");
  failures++;
}

#define EXPECT_OK(call) expect(#call, (call), TSR_OK, NULL)
#define EXPECT_FINALIZED(call, want, name)                                                         \
  expect(#call, (call), (want), name ": MPI is already finalized")

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char path[64]; /* one per rank count: the 1- and 2-rank tests may run at once */
  snprintf(path, sizeof path, "test_dist_finalize_np%d.npy", size);

  /* Before MPI_Finalize: a grid with matrices, a product on it (SUMMA keeps its plan with the
     grid), and a second grid freed there (the control). */
  tsr_grid *g = NULL, *g2 = NULL;
  tsr_dmatrix *a = NULL, *b = NULL, *c = NULL;
  EXPECT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  EXPECT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g2));
  EXPECT_OK(tsr_dmatrix_create(g, 24, 20, 4, 4, TSR_F64, TSR_CPU, &a));
  EXPECT_OK(tsr_dmatrix_create(g, 20, 16, 4, 4, TSR_F64, TSR_CPU, &b));
  EXPECT_OK(tsr_dmatrix_create(g, 24, 16, 4, 4, TSR_F64, TSR_CPU, &c));
  EXPECT_OK(tsr_dmatrix_fill_random(a, 11, -1.0, 1.0));
  EXPECT_OK(tsr_dmatrix_fill_random(b, 12, -1.0, 1.0));
  EXPECT_OK(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, c));
  EXPECT_OK(tsr_grid_free(g2));
  /* A .npy file written and opened, its handle left open across MPI_Finalize. */
  tsr_dmatrix_npy *file = NULL;
  EXPECT_OK(tsr_dmatrix_write_npy(a, path, 0));
  EXPECT_OK(tsr_dmatrix_npy_open(g, path, &file));
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst) {
    MPI_Finalize();
    return 1;
  }
  MPI_Finalize();

  /* After: the entries that communicate return a status, without any MPI call. */
  tsr_dist_gemm_options opt;
  memset(&opt, 0, sizeof opt);
  opt.algorithm = TSR_DIST_GEMM_AUTO;
  tsr_dist_stats stats;
  tsr_dist_algorithm alg = TSR_DIST_GEMM_SUMMA;
  int replicas = 0;
  EXPECT_FINALIZED(tsr_dist_gemm(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, c), TSR_ERR_MPI,
                   "tsr_dist_gemm");
  EXPECT_FINALIZED(tsr_dist_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, c, &opt, &stats),
                   TSR_ERR_MPI, "tsr_dist_gemm_ex");
  tsr_complex128 one = {1.0, 0.0}, zero = {0.0, 0.0};
  EXPECT_FINALIZED(
      tsr_dist_gemm_complex(TSR_NO_TRANS, TSR_NO_TRANS, one, a, b, zero, c, NULL, &stats),
      TSR_ERR_MPI, "tsr_dist_gemm_complex");
  EXPECT_FINALIZED(tsr_dist_gemm_choose(TSR_NO_TRANS, TSR_NO_TRANS, a, b, c, &opt, &alg, &replicas),
                   TSR_ERR_MPI, "tsr_dist_gemm_choose");
  tsr_dist_verify_result vr;
  EXPECT_FINALIZED(
      tsr_dist_gemm_verify(TSR_NO_TRANS, TSR_NO_TRANS, 1.0, a, b, 0.0, NULL, c, 5, &vr),
      TSR_ERR_MPI, "tsr_dist_gemm_verify");
  tsr_dmatrix *d = NULL;
  EXPECT_FINALIZED(tsr_dmatrix_create(g, 8, 8, 4, 4, TSR_F64, TSR_CPU, &d), TSR_ERR_MPI,
                   "tsr_dmatrix_create");
  EXPECT_FINALIZED(tsr_dmatrix_fill_random(a, 13, -1.0, 1.0), TSR_ERR_MPI,
                   "tsr_dmatrix_fill_random");
  EXPECT_FINALIZED(tsr_dmatrix_fill_fn(a, element, NULL), TSR_ERR_MPI, "tsr_dmatrix_fill_fn");
  EXPECT_FINALIZED(
      tsr_dist_gemm_verify_complex(TSR_NO_TRANS, TSR_NO_TRANS, one, a, b, zero, NULL, c, 5, &vr),
      TSR_ERR_MPI, "tsr_dist_gemm_verify_complex");
  double *host = calloc(24 * 20, sizeof *host);
  EXPECT_FINALIZED(tsr_dmatrix_gather(a, 0, host, TSR_ROW_MAJOR, 0), TSR_ERR_MPI,
                   "tsr_dmatrix_gather");
  EXPECT_FINALIZED(tsr_dmatrix_scatter(a, 0, host, TSR_ROW_MAJOR, 0), TSR_ERR_MPI,
                   "tsr_dmatrix_scatter");
  free(host);
  EXPECT_FINALIZED(tsr_dmatrix_write_npy(a, "test_dist_finalize_never.npy", 0), TSR_ERR_MPI,
                   "tsr_dmatrix_write_npy");
  /* The .npy entries: the open handle's header is local; reading, opening and closing are not.
     The close frees the handle (no MPI_File_close: MPI_Finalize ended the file). */
  tsr_npy_header h;
  EXPECT_OK(tsr_dmatrix_npy_header(file, &h));
  if (h.ndim != 2 || h.shape[0] != 24 || h.shape[1] != 20) {
    fprintf(stderr, "tsr_dmatrix_npy_header: not the 24 x 20 header written\n");
    failures++;
  }
  EXPECT_FINALIZED(tsr_dmatrix_npy_read(file, 4, 4, TSR_CPU, &d), TSR_ERR_MPI,
                   "tsr_dmatrix_npy_read");
  tsr_dmatrix_npy *file2 = NULL;
  EXPECT_FINALIZED(tsr_dmatrix_npy_open(g, path, &file2), TSR_ERR_MPI, "tsr_dmatrix_npy_open");
  EXPECT_FINALIZED(tsr_dmatrix_read_npy(g, path, 4, 4, TSR_CPU, &d), TSR_ERR_MPI,
                   "tsr_dmatrix_read_npy");
  EXPECT_FINALIZED(tsr_dmatrix_npy_close(file), TSR_ERR_MPI, "tsr_dmatrix_npy_close");
  EXPECT_OK(tsr_dmatrix_npy_close(NULL));
  if (d || file2) {
    fprintf(stderr, "a failed entry left an output set\n");
    failures++;
  }
  if (rank == 0) remove(path);
  int code = 0;
  EXPECT_FINALIZED(tsr_dist_agree(MPI_COMM_WORLD, &code, NULL, 0), TSR_ERR_MPI, "tsr_dist_agree");
  tsr_grid *g3 = NULL;
  EXPECT_FINALIZED(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g3), TSR_ERR_INVALID_ARGUMENT,
                   "tsr_grid_create");
  tsr_dist_binding bind;
  EXPECT_FINALIZED(tsr_dist_binding_get(MPI_COMM_WORLD, &bind), TSR_ERR_INVALID_ARGUMENT,
                   "tsr_dist_binding_get");

  /* Local entries still answer, and everything is freed with TSR_OK (the documented status). */
  tsr_grid_props gp;
  EXPECT_OK(tsr_grid_info(g, &gp));
  tsr_dmatrix_props dp;
  EXPECT_OK(tsr_dmatrix_info(c, &dp));
  tsr_array *local = NULL;
  EXPECT_OK(tsr_dmatrix_local(c, &local));
  EXPECT_OK(tsr_array_release(local));
  EXPECT_OK(tsr_dmatrix_set_context(c, 0));
  int64_t bytes = 0;
  EXPECT_OK(tsr_dist_gemm_memory_25d(64, 64, 64, 8, 8, 2, TSR_F64, &bytes));
  const int aware = tsr_dist_gpu_aware(); /* a query of the build, no MPI call */
  if (aware != 0 && aware != 1) failures++;
  if (tsr_numroc(24, 4, 0, 0, 1) != 24 || tsr_indxg2p(5, 4, 0, 2) != 1 ||
      tsr_indxg2l(5, 4, 2) != 1 || tsr_indxl2g(1, 4, 1, 0, 2) != 5) {
    fprintf(stderr, "the index helpers changed after MPI_Finalize\n");
    failures++;
  }
  EXPECT_OK(tsr_dmatrix_free(a));
  EXPECT_OK(tsr_dmatrix_free(b));
  EXPECT_OK(tsr_dmatrix_free(c));
  EXPECT_OK(tsr_grid_free(g));
  EXPECT_OK(tsr_grid_free(NULL));
  if (failures) fprintf(stderr, "rank %d: %d check(s) failed after MPI_Finalize\n", rank, failures);
  return failures ? 1 : 0;
}
