/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SUMMA's row of the dispatcher's table of schedules (dist_gemm.c): its cost model, SUMMA on
 * the matrices' own P_r x Q grid, and its run, which redistributes transposed operands into
 * their transpose (tsr__dm_transpose; 2.5D transposes while it slices instead) and calls the
 * schedule itself, tsr__dist_summa (summa.c), on untransposed operands.
 */
#include "mpi/mpi_internal.h"

/* Words a rank receives in the panel broadcasts (op(A)'s panels along the Q ranks of a
   process row, op(B)'s along the P_r of a column) plus two message rounds per panel. Applies
   to every call. */
tsr_status tsr__dist_summa_cost(const tsr__dist_shape *d, double *cost, int *replicas) {
  double w = d->m * d->k / d->pr * (1.0 - 1.0 / d->pc) + d->k * d->n / d->pc * (1.0 - 1.0 / d->pr);
  *cost = w + TSR__DIST_ROUND_WORDS * 2.0 * (double)d->panels;
  *replicas = 1;
  return TSR_OK;
}

tsr_status tsr__dist_summa_run(const tsr__dist_call *x, tsr_dist_stats *stats) {
  const tsr_dmatrix *a = x->a, *b = x->b;
  tsr_dmatrix *c = x->c;
  /* Transposed operands are redistributed into their transpose first. */
  tsr_dmatrix *at = NULL, *bt = NULL;
  tsr_status st = TSR_OK;
  if (x->ta)
    st = tsr__dm_transpose(a, tsr__dist_conj(x->ta, a->dtype), &at, &stats->bytes_sent,
                           &stats->bytes_received);
  if (st == TSR_OK && x->tb)
    st = tsr__dm_transpose(b, tsr__dist_conj(x->tb, b->dtype), &bt, &stats->bytes_sent,
                           &stats->bytes_received);
  stats->comm_seconds += MPI_Wtime() - x->t_start;
  stats->bytes_redistributed = stats->bytes_received;
  /* The call was agreed on; only a transpose can have failed since (one collective less a
     call). */
  if (x->ta || x->tb) st = tsr__dist_agree(c->grid->comm, st);
  if (st == TSR_OK) {
    tsr_dist_stats ss;
    st = tsr__dist_summa(x->alpha, at ? at : a, bt ? bt : b, x->beta, c, x->options, &ss);
    tsr__dist_stats_add_summa(stats, &ss);
  }
  tsr_dmatrix_free(at);
  tsr_dmatrix_free(bt);
  return st;
}
