/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The raise site across ranks (issue 49, section 3): when only rank 1 fails, the agreement
 * (tsr__dist_agree inside a distributed call, tsr_dist_agree for the program) carries rank 1's
 * raise site with its message, so every rank's tsr_last_error_site() names where rank 1 raised
 * the error, not the agreement. Needs 2 ranks or more (1 rank: skipped).
 */
#include <stdio.h>
#include <string.h>

#include "test_dist_util.h"

typedef struct site {
  char file[64], func[64];
  int line;
} site;

static site site_now(void) {
  const char *file = NULL, *func = NULL;
  int line = -1;
  tsr_last_error_site(&file, &line, &func);
  site s;
  memset(&s, 0, sizeof s);
  snprintf(s.file, sizeof s.file, "%s", file ? file : "(null)");
  snprintf(s.func, sizeof s.func, "%s", func ? func : "(null)");
  s.line = line;
  return s;
}

/* 1 on every rank when every rank's site is `want` of rank `root` (broadcast from there). */
static int same_site_as(int root, const site *mine) {
  site want = *mine;
  MPI_Bcast(&want, (int)sizeof want, MPI_BYTE, root, MPI_COMM_WORLD);
  int ok = strcmp(mine->file, want.file) == 0 && strcmp(mine->func, want.func) == 0 &&
           mine->line == want.line;
  if (!ok)
    fprintf(stderr, "rank %d: site %s:%d in %s, rank %d's %s:%d in %s\n", dist_rank, mine->file,
            mine->line, mine->func, root, want.file, want.line, want.func);
  return dist_all(ok);
}

/* A distributed call with a bad argument on rank 1 only (a device that does not exist): every
   rank fails with rank 1's message and rank 1's raise site (where the device was looked up),
   not the agreement's (mpi/grid.c). */
static void test_distributed_call(void **state) {
  (void)state;
  tsr_grid *g = NULL;
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  const tsr_device nowhere = {TSR_DEVICE_CUDA, 99};
  tsr_dmatrix *a = NULL;
  tsr_clear_error();
  TSR_ASSERT_STATUS(tsr_dmatrix_read_npy(g, "/nonexistent/never.npy", 2, 2,
                                         dist_rank == 1 ? nowhere : TSR_CPU, &a),
                    TSR_ERR_NO_DEVICE, "(rank 1)");
  assert_null(a);
  site s = site_now();
  DIST_ASSERT(s.line > 0 && s.file[0] != '\0' && s.func[0] != '\0');
  DIST_ASSERT(strcmp(s.file, "mpi/grid.c") != 0);
  DIST_ASSERT(same_site_as(1, &s));
  /* The message is unchanged by the site: the public name, the reason, the rank. */
  DIST_ASSERT(strncmp(tsr_last_error(), "tsr_dmatrix_read_npy: ", 22) == 0 &&
              strstr(tsr_last_error(), "raised at") == NULL);
  TSR_ASSERT_OK(tsr_grid_free(g));
  tsr_clear_error();
}

/* tsr_dist_agree after an error raised on rank 1 only: rank 0 adopts rank 1's site with the
   agreed message; with no failure nothing changes. */
static void test_public_agreement(void **state) {
  (void)state;
  tsr_clear_error();
  int code = 0;
  char msg[TSR_DIST_AGREE_MSG] = "";
  TSR_ASSERT_OK(tsr_dist_agree(MPI_COMM_WORLD, &code, msg, sizeof msg));
  site none = site_now();
  DIST_ASSERT(code == 0 && none.line == 0 && strcmp(tsr_last_error(), "") == 0);

  if (dist_rank == 1) {
    size_t bytes = 0;
    code = (int)tsr_dtype_size((tsr_dtype)77, &bytes);
    snprintf(msg, sizeof msg, "%s", tsr_last_error());
  }
  site raised = site_now(); /* rank 1: where tsr_dtype_size raised; rank 0: none */
  DIST_ASSERT(dist_rank != 1 || (raised.line > 0 && code == (int)TSR_ERR_DTYPE));
  TSR_ASSERT_OK(tsr_dist_agree(MPI_COMM_WORLD, &code, msg, sizeof msg));
  DIST_ASSERT(code == (int)TSR_ERR_DTYPE && strstr(msg, "tsr_dtype_size") != NULL &&
              strstr(msg, "(rank 1)") != NULL);
  site s = site_now();
  DIST_ASSERT(s.line > 0 && strcmp(s.file, "mpi/grid.c") != 0);
  DIST_ASSERT(same_site_as(1, &s));
  DIST_ASSERT(dist_rank != 1 || (strcmp(s.file, raised.file) == 0 && s.line == raised.line));
  /* The agreed failure is every rank's last error, its message the agreed one. */
  DIST_ASSERT(strstr(tsr_last_error(), msg) != NULL);
  tsr_clear_error();
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &dist_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &dist_size);
  if (dist_size < 2) {
    MPI_Finalize();
    return 77; /* one rank cannot fail alone */
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_distributed_call),
      cmocka_unit_test(test_public_agreement),
  };
  int fails = cmocka_run_group_tests(tests, NULL, NULL);
  int worst = 0;
  MPI_Allreduce(&fails, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst ? 1 : 0;
}
