/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The distributed GEMM's dispatcher (tsr_dist_gemm, tsr_dist_gemm_ex): the checks and the
 * agreement on them, the choice of schedule (SUMMA on the matrices' grid, summa.c, or 2.5D,
 * gemm25d.c), the redistribution of transposed operands, and the statistics of the call. The
 * schedules are siblings that trust what this file checked.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

/* Checks shared by tsr_dist_gemm_ex, tsr_dist_gemm_verify and the 2.5D schedule (local;
   callers agree). */
tsr_status tsr__dist_gemm_check(tsr_trans ta, tsr_trans tb, const tsr_dmatrix *a,
                                const tsr_dmatrix *b, const tsr_dmatrix *c) {
  if ((ta != TSR_NO_TRANS && ta != TSR_TRANS && ta != TSR_CONJ_TRANS) ||
      (tb != TSR_NO_TRANS && tb != TSR_TRANS && tb != TSR_CONJ_TRANS))
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "bad transpose values %d, %d",
                          (int)ta, (int)tb);
  if (a->grid != c->grid || b->grid != c->grid)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "A, B and C are not on the same grid");
  if (a->dtype != c->dtype || b->dtype != c->dtype)
    return tsr__set_error(TSR_ERR_DTYPE, __func__, "dtypes differ: A %s, B %s, C %s",
                          tsr_dtype_name(a->dtype), tsr_dtype_name(b->dtype),
                          tsr_dtype_name(c->dtype));
  if (!tsr_device_equal(a->device, c->device) || !tsr_device_equal(b->device, c->device))
    return tsr__set_error(TSR_ERR_DEVICE_MISMATCH, __func__,
                          "A, B and C of rank %d live on different devices", c->grid->rank);
  int64_t am = ta ? a->n : a->m, ak = ta ? a->m : a->n;
  int64_t bk = tb ? b->n : b->m, bn = tb ? b->m : b->n;
  if (am != c->m || bn != c->n || ak != bk)
    return tsr__set_error(
        TSR_ERR_SHAPE, __func__, "%s: op(A) is %lldx%lld, op(B) is %lldx%lld, C is %lldx%lld",
        ak != bk ? "inner dimensions differ" : "C has the wrong shape", (long long)am,
        (long long)ak, (long long)bk, (long long)bn, (long long)c->m, (long long)c->n);
  int64_t a_mb = ta ? a->nb : a->mb, a_kb = ta ? a->mb : a->nb;
  int64_t b_kb = tb ? b->nb : b->mb, b_nb = tb ? b->mb : b->nb;
  if (a_mb != c->mb || b_nb != c->nb || a_kb != b_kb)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "incompatible block sizes: op(A) has %lldx%lld blocks, op(B) "
                          "%lldx%lld, C %lldx%lld (need op(A) rows = C rows, op(B) columns = "
                          "C columns, op(A) columns = op(B) rows)",
                          (long long)a_mb, (long long)a_kb, (long long)b_kb, (long long)b_nb,
                          (long long)c->mb, (long long)c->nb);
  return TSR_OK;
}

tsr_status tsr_dist_gemm_choose(tsr_trans transa, tsr_trans transb, const tsr_dmatrix *a,
                                const tsr_dmatrix *b, const tsr_dmatrix *c,
                                const tsr_dist_gemm_options *options, tsr_dist_algorithm *algorithm,
                                int *replicas) {
  TSR_API_ENTRY();
  if (!a || !b || !c || !algorithm || !replicas)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL",
                          !a           ? "A"
                          : !b         ? "B"
                          : !c         ? "C"
                          : !algorithm ? "algorithm"
                                       : "replicas");
  int r = 1;
  tsr_status st = tsr__dist_gemm_check(transa, transb, a, b, c);
  TSR_CALL(tsr__dist_gemm_plan(st, transa, a, c, options, &r));
  *algorithm = r > 1 ? TSR_DIST_GEMM_2_5D : TSR_DIST_GEMM_SUMMA;
  *replicas = r;
  return TSR_OK;
}

/* tsr_dist_gemm_ex and tsr_dist_gemm_complex: checks, agreement, schedule. Collective. */
static tsr_status tsr__dist_gemm_run(tsr_trans transa, tsr_trans transb, tsr_complex128 alpha,
                                     const tsr_dmatrix *a, const tsr_dmatrix *b,
                                     tsr_complex128 beta, tsr_dmatrix *c,
                                     const tsr_dist_gemm_options *options, tsr_dist_stats *stats) {
  if (!a || !b || !c)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", !a ? "A" : !b ? "B" : "C");
  double t_start = MPI_Wtime();
  uint64_t count0[TSR__COUNT_N];
  tsr__counters_read(count0);
  tsr_dist_stats local_stats;
  memset(&local_stats, 0, sizeof local_stats);
  tsr_status st = tsr__dist_gemm_check(transa, transb, a, b, c);
  if (st == TSR_OK && !tsr__dtype_is_complex(c->dtype) && (alpha.im != 0.0 || beta.im != 0.0))
    st = tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                        "alpha = (%g, %g), beta = (%g, %g): a complex scalar for %s matrices",
                        alpha.re, alpha.im, beta.re, beta.im, tsr_dtype_name(c->dtype));
  int64_t kb = transa ? a->mb : a->nb;
  if (st == TSR_OK && ((c->lld * kb > INT_MAX) || kb * c->nloc > INT_MAX))
    st = tsr__set_error(TSR_ERR_OVERFLOW, __func__,
                        "panels of %lld x %lld / %lld x %lld elements "
                        "exceed MPI's INT_MAX counts",
                        (long long)c->mloc, (long long)kb, (long long)kb, (long long)c->nloc);
  /* 2.5D and auto (gemm25d.c) decide here, with the checks and the options agreed on. */
  if (options) {
    int replicas = 1;
    /* plan agrees on st: an error there is every rank's. */
    TSR_CALL(tsr__dist_gemm_plan(st, transa, a, c, options, &replicas));
    if (replicas > 1)
      return tsr__dist_gemm_25d(transa, transb, alpha, a, b, beta, c, replicas, options, stats);
  } else {
    TSR_CALL(tsr__dist_agree(c->grid->comm, st));
  }

  /* Transposed operands are redistributed into their transpose first. */
  tsr_dmatrix *at = NULL, *bt = NULL;
  if (transa)
    st = tsr__dm_transpose(a, tsr__dist_conj(transa, a->dtype), &at, &local_stats.bytes_sent,
                           &local_stats.bytes_received);
  if (st == TSR_OK && transb)
    st = tsr__dm_transpose(b, tsr__dist_conj(transb, b->dtype), &bt, &local_stats.bytes_sent,
                           &local_stats.bytes_received);
  local_stats.comm_seconds += MPI_Wtime() - t_start;
  local_stats.bytes_redistributed = local_stats.bytes_received;
  /* st was agreed above; only a transpose can have failed since (one collective less a call). */
  if (transa || transb) st = tsr__dist_agree(c->grid->comm, st);
  if (st == TSR_OK) {
    tsr_dist_stats ss;
    st = tsr__dist_summa(alpha, at ? at : a, bt ? bt : b, beta, c, options, &ss);
    tsr__dist_stats_add_summa(&local_stats, &ss);
  }
  tsr_dmatrix_free(at);
  tsr_dmatrix_free(bt);
  local_stats.algorithm = TSR_DIST_GEMM_SUMMA;
  local_stats.replicas = 1;
  local_stats.total_seconds = MPI_Wtime() - t_start;
  tsr__dist_count_since(&local_stats, count0); /* the transposes' copies included */
  if (stats) *stats = local_stats;
  return st;
}

tsr_status tsr_dist_gemm_ex(tsr_trans transa, tsr_trans transb, double alpha, const tsr_dmatrix *a,
                            const tsr_dmatrix *b, double beta, tsr_dmatrix *c,
                            const tsr_dist_gemm_options *options, tsr_dist_stats *stats) {
  TSR_API_ENTRY();
  return tsr__dist_gemm_run(transa, transb, tsr__dist_real(alpha), a, b, tsr__dist_real(beta), c,
                            options, stats);
}

tsr_status tsr_dist_gemm_complex(tsr_trans transa, tsr_trans transb, tsr_complex128 alpha,
                                 const tsr_dmatrix *a, const tsr_dmatrix *b, tsr_complex128 beta,
                                 tsr_dmatrix *c, const tsr_dist_gemm_options *options,
                                 tsr_dist_stats *stats) {
  TSR_API_ENTRY();
  return tsr__dist_gemm_run(transa, transb, alpha, a, b, beta, c, options, stats);
}

tsr_status tsr_dist_gemm(tsr_trans transa, tsr_trans transb, double alpha, const tsr_dmatrix *a,
                         const tsr_dmatrix *b, double beta, tsr_dmatrix *c) {
  TSR_API_ENTRY();
  return tsr_dist_gemm_ex(transa, transb, alpha, a, b, beta, c, NULL, NULL);
}
