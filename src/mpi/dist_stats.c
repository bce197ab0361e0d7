/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The statistics of a distributed GEMM (tsr_dist_stats) that the dispatcher (dist_gemm.c) and
 * both schedules (summa.c, gemm25d.c) fill: the device work from the library's counters and
 * the merge of SUMMA's figures into a schedule's. Below the dispatcher and the schedules, so
 * that none of them calls back into another's file.
 */
#include "mpi/mpi_internal.h"

/* The device work and the panel broadcasts counted since `count0` (tsr__counters_read) into
   the statistics. */
void tsr__dist_count_since(tsr_dist_stats *st, const uint64_t count0[TSR__COUNT_N]) {
  uint64_t now[TSR__COUNT_N];
  tsr__counters_read(now);
  st->h2d_bytes = now[TSR__COUNT_H2D_BYTES] - count0[TSR__COUNT_H2D_BYTES];
  st->h2d_copies = now[TSR__COUNT_H2D_COPIES] - count0[TSR__COUNT_H2D_COPIES];
  st->d2h_bytes = now[TSR__COUNT_D2H_BYTES] - count0[TSR__COUNT_D2H_BYTES];
  st->d2h_copies = now[TSR__COUNT_D2H_COPIES] - count0[TSR__COUNT_D2H_COPIES];
  st->host_syncs = now[TSR__COUNT_HOST_SYNCS] - count0[TSR__COUNT_HOST_SYNCS];
  st->gemm_calls = now[TSR__COUNT_GEMM_CALLS] - count0[TSR__COUNT_GEMM_CALLS];
  st->gemm_vendor_calls = now[TSR__COUNT_GEMM_VENDOR] - count0[TSR__COUNT_GEMM_VENDOR];
  st->bcast_mpi = now[TSR__COUNT_BCAST_MPI] - count0[TSR__COUNT_BCAST_MPI];
  st->bcast_ring = now[TSR__COUNT_BCAST_RING] - count0[TSR__COUNT_BCAST_RING];
  st->bcast_tree = now[TSR__COUNT_BCAST_TREE] - count0[TSR__COUNT_BCAST_TREE];
}

void tsr__dist_stats_add_summa(tsr_dist_stats *st, const tsr_dist_stats *summa) {
  st->bytes_sent += summa->bytes_sent;
  st->bytes_received += summa->bytes_received;
  st->comm_seconds += summa->comm_seconds;
  st->compute_seconds = summa->compute_seconds;
  st->panels = summa->panels;
  st->panel_width = summa->panel_width;
  st->gpu_aware_mpi = summa->gpu_aware_mpi;
  st->staging = summa->staging;
  st->copy_waits = summa->copy_waits;
  st->host_syncs_in_loop = summa->host_syncs_in_loop;
  st->gpu_seconds = summa->gpu_seconds;
  st->progress_calls += summa->progress_calls;
}
