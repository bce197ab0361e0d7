/* SPDX-License-Identifier: BSD-3-Clause */
/* Every public entry that takes an MPI_Comm (tsr_grid_create, tsr_dist_agree,
   tsr_dist_binding_get) on a communicator no MPI call may be made on (issue 48): before
   MPI_Init, on MPI_COMM_NULL, and after MPI_Finalize. Each returns its documented status with a
   message naming the function and the value, and makes no MPI call on the communicator (with
   Open MPI's default error handler such a call aborts the whole job, which fails the test). */
#include <stdio.h>
#include <string.h>

#include "test_dist_util.h"

/* A status and its message, recorded outside cmocka's tests (before MPI_Init, after
   MPI_Finalize) and checked inside them, or printed by main. */
typedef struct outcome {
  tsr_status st;
  char msg[256];
} outcome;

static outcome before_agree, before_grid, before_binding;

static outcome record(tsr_status st) {
  outcome o;
  o.st = st;
  snprintf(o.msg, sizeof o.msg, "%s", tsr_last_error());
  return o;
}

static void assert_outcome(const outcome *o, tsr_status want, const char *needle) {
  if (o->st != want || !strstr(o->msg, needle))
    print_error("got %s \"%s\", want %s with \"%s\"\n", tsr_status_name(o->st), o->msg,
                tsr_status_name(want), needle);
  assert_int_equal(o->st, want);
  assert_non_null(strstr(o->msg, needle));
}

static void test_before_init(void **state) {
  (void)state;
  assert_outcome(&before_agree, TSR_ERR_MPI, "tsr_dist_agree: MPI is not initialized");
  assert_outcome(&before_grid, TSR_ERR_INVALID_ARGUMENT, "tsr_grid_create: MPI is not initialized");
  assert_outcome(&before_binding, TSR_ERR_INVALID_ARGUMENT,
                 "tsr_dist_binding_get: MPI is not initialized");
}

static void test_comm_null(void **state) {
  (void)state;
  int code = 3;
  char msg[64] = "unchanged";
  TSR_ASSERT_STATUS(tsr_dist_agree(MPI_COMM_NULL, &code, msg, sizeof msg), TSR_ERR_MPI,
                    "tsr_dist_agree: comm is MPI_COMM_NULL");
  DIST_ASSERT(code == 3 && strcmp(msg, "unchanged") == 0);
  code = 0;
  TSR_ASSERT_STATUS(tsr_dist_agree(MPI_COMM_NULL, &code, NULL, 0), TSR_ERR_MPI, "MPI_COMM_NULL");
  tsr_grid *g = NULL;
  TSR_ASSERT_STATUS(tsr_grid_create(MPI_COMM_NULL, 0, 0, &g), TSR_ERR_INVALID_ARGUMENT,
                    "tsr_grid_create: comm is MPI_COMM_NULL");
  assert_null(g);
  tsr_dist_binding b;
  TSR_ASSERT_STATUS(tsr_dist_binding_get(MPI_COMM_NULL, &b), TSR_ERR_INVALID_ARGUMENT,
                    "tsr_dist_binding_get: comm is MPI_COMM_NULL");
  /* The control: the same calls on a communicator work. */
  code = dist_rank == 0 ? 5 : 0;
  snprintf(msg, sizeof msg, "rank %d", dist_rank);
  TSR_ASSERT_OK(tsr_dist_agree(MPI_COMM_WORLD, &code, msg, sizeof msg));
  DIST_ASSERT(code == 5);
  TSR_ASSERT_OK(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  TSR_ASSERT_OK(tsr_grid_free(g));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_before_init),
    cmocka_unit_test(test_comm_null),
};

int main(int argc, char **argv) {
  int code = 1;
  tsr_grid *g = NULL;
  tsr_dist_binding b;
  before_agree = record(tsr_dist_agree(MPI_COMM_WORLD, &code, NULL, 0));
  before_grid = record(tsr_grid_create(MPI_COMM_WORLD, 0, 0, &g));
  before_binding = record(tsr_dist_binding_get(MPI_COMM_WORLD, &b));
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &dist_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &dist_size);
  int fails = cmocka_run_group_tests(tests, NULL, NULL);
  int worst = 0;
  MPI_Allreduce(&fails, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  /* After MPI_Finalize: the same statuses, "already finalized", no abort. */
  const outcome after = record(tsr_dist_agree(MPI_COMM_WORLD, &code, NULL, 0));
  if (after.st != TSR_ERR_MPI || !strstr(after.msg, "tsr_dist_agree: MPI is already finalized")) {
    fprintf(stderr, "after MPI_Finalize: tsr_dist_agree gave %s \"%s\"\n",
            tsr_status_name(after.st), after.msg);
    worst = 1;
  }
  return worst ? 1 : 0;
}
