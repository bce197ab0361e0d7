/* SPDX-License-Identifier: BSD-3-Clause */
/* How a job's ranks sit on the cores of their nodes. A rank's thread count and whether
   mpirun's CPU binding gives its threads cores (tsr_dist_binding_get): the counts come from
   the OS and MPI (tsr__dist_node_counts), the decision from tsr__dist_binding_rule, which
   tests feed synthetic counts. And whether a communicator is oversubscribed (some node holds
   more of its ranks than CPUs), agreed once and cached on the communicator
   (tsr__bcast_oversubscribed): the panel broadcasts' AUTO rule (bcast.c, summa.c) reads it, the
   grid sets it at creation (grid.c). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/mpi_internal.h"

void tsr__dist_binding_rule(int node_cores, int mask_cores, int ranks_on_node, int env_threads,
                            tsr_dist_binding *out) {
  memset(out, 0, sizeof *out);
  if (node_cores < 1) node_cores = 1;
  if (mask_cores < 1) mask_cores = 1;
  if (mask_cores > node_cores) node_cores = mask_cores;
  if (ranks_on_node < 1) ranks_on_node = 1;
  out->node_cores = node_cores;
  out->mask_cores = mask_cores;
  out->ranks_on_node = ranks_on_node;
  out->per_rank = node_cores / ranks_on_node > 0 ? node_cores / ranks_on_node : 1;
  out->threads_set = env_threads > 0;
  out->threads = env_threads > 0              ? env_threads
                 : mask_cores < out->per_rank ? mask_cores
                                              : out->per_rank;
  out->short_mask = mask_cores < out->per_rank;
  if (out->short_mask)
    snprintf(out->advice, sizeof out->advice,
             "this rank's affinity mask holds %d of the %d cores per rank (%d cores, %d rank%s on "
             "the node); start with 'mpirun --bind-to none' or 'mpirun --map-by "
             "ppr:%d:node:PE=%d'",
             mask_cores, out->per_rank, node_cores, ranks_on_node, ranks_on_node == 1 ? "" : "s",
             ranks_on_node, out->per_rank);
  else if (env_threads > mask_cores)
    snprintf(out->advice, sizeof out->advice,
             "OMP_NUM_THREADS=%d exceeds the %d core%s of this rank's affinity mask (threads "
             "share cores)",
             env_threads, mask_cores, mask_cores == 1 ? "" : "s");
}

/* Number of CPUs in a Linux CPU list ("0-3,8,10-11"); 0 when it does not parse. */
static int tsr__cpulist_count(const char *s) {
  int n = 0;
  while (*s && *s != '\n') {
    char *end = NULL;
    const long a = strtol(s, &end, 10);
    if (end == s || a < 0) return 0;
    long b = a;
    s = end;
    if (*s == '-') {
      b = strtol(s + 1, &end, 10);
      if (end == s + 1 || b < a) return 0;
      s = end;
    }
    n += (int)(b - a + 1);
    if (*s == ',') ++s;
  }
  return n;
}

/* The node's cores this job may use: the online CPUs, or fewer when the cgroup's cpuset (a
   container, a batch system's allocation) says so. */
static int tsr__node_cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  static const char *const sets[] = {"/sys/fs/cgroup/cpuset.cpus.effective",
                                     "/sys/fs/cgroup/cpuset/cpuset.effective_cpus"};
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; ++i) {
    FILE *f = fopen(sets[i], "r");
    if (!f) continue;
    char line[4096];
    const int c = fgets(line, sizeof line, f) ? tsr__cpulist_count(line) : 0;
    fclose(f);
    if (c > 0 && c < n) n = c;
    if (c > 0) break;
  }
  return (int)n;
}

static int tsr__mask_cores(int node_cores) {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  return node_cores;
}

/* OMP_NUM_THREADS's first value ("8" or "8,2"), or 0 when unset or not a positive number. */
static int tsr__env_threads(void) {
  const char *v = getenv("OMP_NUM_THREADS");
  if (!v) return 0;
  char *end = NULL;
  const long t = strtol(v, &end, 10);
  if (end == v || t < 1 || t > 1 << 20 || (*end != '\0' && *end != ',')) return 0;
  return (int)t;
}

tsr_status tsr__dist_node_counts(MPI_Comm comm, int *node_cores, int *ranks_on_node) {
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0, size = 1;
  int rc = MPI_Comm_rank(comm, &rank);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(node, &size);
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  if (rc != MPI_SUCCESS)
    return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Comm_split_type (ranks on the node)");
  *node_cores = tsr__node_cores();
  *ranks_on_node = size;
  return TSR_OK;
}

/* ------------------------------------------ oversubscription (ranks > CPUs), per communicator */

/* The fact is cached on the communicator as an attribute holding 1 + oversubscribed (copied by
   MPI_Comm_dup: the same ranks). The key is made once, at the first use on a usable
   communicator, under pthread_once: threads of a rank that create grids at once make one key. */
static int tsr__oversub_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t tsr__oversub_key_once = PTHREAD_ONCE_INIT;

static void tsr__oversub_key_create(void) {
  if (MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &tsr__oversub_keyval,
                             NULL) != MPI_SUCCESS)
    tsr__oversub_keyval = MPI_KEYVAL_INVALID;
}

static int tsr__oversub_key(void) {
  pthread_once(&tsr__oversub_key_once, tsr__oversub_key_create);
  return tsr__oversub_keyval;
}

int tsr__bcast_oversubscribed_cached(MPI_Comm comm) {
  if (tsr__dist_modeled() || comm == MPI_COMM_NULL) return -1;
  int key = tsr__oversub_key();
  void *val = NULL;
  int flag = 0;
  if (key == MPI_KEYVAL_INVALID || MPI_Comm_get_attr(comm, key, &val, &flag) != MPI_SUCCESS ||
      !flag)
    return -1;
  return (int)((intptr_t)val - 1);
}

tsr_status tsr__bcast_oversubscribed_set(MPI_Comm comm, bool oversubscribed) {
  if (tsr__dist_modeled()) return TSR_OK;
  int key = tsr__oversub_key();
  int rc = key == MPI_KEYVAL_INVALID
               ? MPI_ERR_KEYVAL
               : MPI_Comm_set_attr(comm, key, (void *)(intptr_t)(1 + oversubscribed));
  if (rc != MPI_SUCCESS)
    return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Comm_set_attr (oversubscription)");
  return TSR_OK;
}

tsr_status tsr__bcast_oversubscribed_agree(MPI_Comm comm, bool *oversubscribed) {
  *oversubscribed = false;
  /* TSR_BCAST_OVERSUBSCRIBED (or its deprecated alias, src/core/env.c): "auto|0|1" */
  const int forced = tsr__env_choice(TSR__ENV_BCAST_OVERSUBSCRIBED);
  int mine = forced == 2;
  /* Under SimGrid's SMPI every simulated rank runs in one process on one host: the node's
     counts describe the simulator, not the modeled platform, whose choices stay the cost
     model's; no collective either (one process reads one environment). */
  if (tsr__dist_modeled()) {
    *oversubscribed = mine;
    return TSR_OK;
  }
  if (forced != 1 && forced != 2) {
    /* A rank that cannot count (an MPI failure there) takes the safe side, and still joins
       the reduction: its peers are in it. */
    int cores = 1, ranks = 1;
    mine = tsr__dist_node_counts(comm, &cores, &ranks) != TSR_OK || ranks > cores;
  }
  int any = 0;
  int rc = MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  if (rc != MPI_SUCCESS)
    return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Allreduce (oversubscription)");
  *oversubscribed = any != 0;
  return TSR_OK;
}

tsr_status tsr__bcast_oversubscribed(MPI_Comm comm, bool *oversubscribed) {
  const int cached = tsr__bcast_oversubscribed_cached(comm);
  if (cached >= 0) {
    *oversubscribed = cached != 0;
    return TSR_OK;
  }
  TSR_CALL(tsr__bcast_oversubscribed_agree(comm, oversubscribed));
  return tsr__bcast_oversubscribed_set(comm, *oversubscribed);
}

tsr_status tsr_dist_binding_get(MPI_Comm comm, tsr_dist_binding *out) {
  TSR_API_ENTRY();
  if (!out) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "out is NULL");
  TSR_CALL(tsr__mpi_comm_usable(comm, TSR_ERR_INVALID_ARGUMENT));
  int node_cores = 1, ranks = 1;
  TSR_CALL(tsr__dist_node_counts(comm, &node_cores, &ranks));
  tsr__dist_binding_rule(node_cores, tsr__mask_cores(node_cores), ranks, tsr__env_threads(), out);
  return TSR_OK;
}
