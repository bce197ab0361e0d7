/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Threads per rank under mpirun (tsr_dist_binding_get, src/mpi/binding.c): the rule on
 * synthetic counts (node CPUs, affinity-mask CPUs, ranks on the node, OMP_NUM_THREADS), then
 * the real counts of this run against the OS's. Links the static library for the rule
 * (tsr__dist_binding_rule, an internal symbol), compiling the shared test helpers itself.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsr_test.h"

#include "mpi/mpi_internal.h"

#define HAS(s, sub) (strstr((s), (sub)) != NULL)

static void test_rule(void **state) {
  (void)state;
  tsr_dist_binding b;
  /* mpirun -np 1 on a 64-core node binds the rank to one core: 1 thread, and the advice. */
  tsr__dist_binding_rule(64, 1, 1, 0, &b);
  assert_int_equal(b.threads, 1);
  assert_int_equal(b.per_rank, 64);
  assert_true(b.short_mask);
  assert_false(b.threads_set);
  assert_true(HAS(b.advice, "--bind-to none"));
  assert_true(HAS(b.advice, "--map-by ppr:1:node:PE=64"));
  assert_true(HAS(b.advice, "1 of the 64 cores per rank"));
  /* -np 2 on a 16-core GPU host, one core each: a share of 8. */
  tsr__dist_binding_rule(16, 1, 2, 0, &b);
  assert_int_equal(b.threads, 1);
  assert_true(b.short_mask);
  assert_true(HAS(b.advice, "ppr:2:node:PE=8"));
  /* -np 4 bound to 4 cores each: the share, nothing to say. */
  tsr__dist_binding_rule(16, 4, 4, 0, &b);
  assert_int_equal(b.threads, 4);
  assert_false(b.short_mask);
  assert_string_equal(b.advice, "");
  /* One rank per socket (mask 32 of 64, 2 ranks): 32 threads each, not a quarter of the node. */
  tsr__dist_binding_rule(64, 32, 2, 0, &b);
  assert_int_equal(b.threads, 32);
  assert_false(b.short_mask);
  /* --bind-to none: every rank sees the node; it runs its share, never the whole node. */
  tsr__dist_binding_rule(64, 64, 2, 0, &b);
  assert_int_equal(b.threads, 32);
  assert_false(b.short_mask);
  tsr__dist_binding_rule(16, 16, 3, 0, &b);
  assert_int_equal(b.threads, 5);
  /* More ranks than cores: one thread each, no advice. */
  tsr__dist_binding_rule(2, 2, 4, 0, &b);
  assert_int_equal(b.threads, 1);
  assert_false(b.short_mask);
  assert_string_equal(b.advice, "");
  /* OMP_NUM_THREADS is honoured, above the mask too (asked for); a short mask still said. */
  tsr__dist_binding_rule(64, 1, 1, 8, &b);
  assert_int_equal(b.threads, 8);
  assert_true(b.threads_set);
  assert_true(b.short_mask);
  tsr__dist_binding_rule(2, 2, 1, 4, &b);
  assert_int_equal(b.threads, 4);
  assert_false(b.short_mask);
  assert_true(HAS(b.advice, "OMP_NUM_THREADS=4 exceeds the 2 cores"));
  tsr__dist_binding_rule(8, 4, 2, 2, &b);
  assert_int_equal(b.threads, 2);
  assert_string_equal(b.advice, "");
  /* Nonsense counts are taken as 1; a mask larger than the node counts as the node. */
  tsr__dist_binding_rule(0, 0, 0, 0, &b);
  assert_int_equal(b.threads, 1);
  assert_int_equal(b.node_cores, 1);
  assert_false(b.short_mask);
  tsr__dist_binding_rule(4, 8, 1, 0, &b);
  assert_int_equal(b.node_cores, 8);
  assert_int_equal(b.threads, 8);
}

/* This run's counts: the mask is the OS's, the ranks on the node the communicator's, and the
   threads never exceed the mask unless OMP_NUM_THREADS asked. */
static void test_this_run(void **state) {
  (void)state;
  tsr_dist_binding b;
  TSR_ASSERT_OK(tsr_dist_binding_get(MPI_COMM_WORLD, &b));
  cpu_set_t set;
  CPU_ZERO(&set);
  assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
  assert_int_equal(b.mask_cores, CPU_COUNT(&set));
  assert_true(b.node_cores >= b.mask_cores);
  assert_true(b.node_cores <= sysconf(_SC_NPROCESSORS_ONLN));
  MPI_Comm node;
  int n = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  assert_int_equal(b.ranks_on_node, n);
  const char *env = getenv("OMP_NUM_THREADS");
  if (env && atoi(env) > 0) {
    assert_true(b.threads_set);
    assert_int_equal(b.threads, atoi(env));
  } else {
    assert_true(b.threads >= 1 && b.threads <= b.mask_cores);
  }
  assert_int_equal(b.short_mask, b.mask_cores < b.per_rank);
  TSR_ASSERT_STATUS(tsr_dist_binding_get(MPI_COMM_WORLD, NULL), TSR_ERR_NULL_POINTER, "out");
  TSR_ASSERT_STATUS(tsr_dist_binding_get(MPI_COMM_NULL, &b), TSR_ERR_INVALID_ARGUMENT,
                    "MPI_COMM_NULL");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_rule), cmocka_unit_test(test_this_run)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
