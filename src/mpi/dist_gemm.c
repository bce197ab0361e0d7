/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The distributed GEMM's dispatcher (tsr_dist_gemm, tsr_dist_gemm_ex, tsr_dist_gemm_complex,
 * tsr_dist_gemm_choose): the checks and the agreement on them, the table of schedules (each
 * row a name, a cost function and a run function: SUMMA, summa.c, and 2.5D, gemm25d.c),
 * the choice of a row, and the statistics of the call. The schedules are siblings that trust
 * what this file checked and never call back into it.
 */
#include <limits.h>
#include <math.h>
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

/* ------------------------------------------------------------------ the schedules ------ */

/* SUMMA first: it applies to every call and serves when the named row does not apply. */
static const tsr__dist_schedule tsr__schedule_rows[] = {
    {"summa", TSR_DIST_GEMM_SUMMA, tsr__dist_summa_cost, tsr__dist_summa_run},
    {"2.5d", TSR_DIST_GEMM_2_5D, tsr__dist_25d_cost, tsr__dist_25d_run},
};

const tsr__dist_schedule *tsr__dist_schedules(size_t *n) {
  *n = sizeof tsr__schedule_rows / sizeof tsr__schedule_rows[0];
  return tsr__schedule_rows;
}

tsr_status tsr__dist_schedule_pick(const tsr__dist_shape *shape,
                                   const tsr_dist_gemm_options *options,
                                   const tsr__dist_schedule **row, int *replicas) {
  const tsr_dist_algorithm want = options ? options->algorithm : TSR_DIST_GEMM_SUMMA;
  size_t n = 0;
  const tsr__dist_schedule *rows = tsr__dist_schedules(&n);
  *row = &rows[0];
  *replicas = 1;
  double best = INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (want != TSR_DIST_GEMM_AUTO && rows[i].algorithm != want) continue;
    double cost = INFINITY;
    int r = 1;
    TSR_CALL(rows[i].cost(shape, &cost, &r));
    if (cost < best) {
      best = cost;
      *row = &rows[i];
      *replicas = r;
    }
  }
  return TSR_OK;
}

static tsr_status tsr__options_check(const tsr_dist_gemm_options *opt) {
  if (!opt) return TSR_OK;
  if (opt->algorithm != TSR_DIST_GEMM_SUMMA && opt->algorithm != TSR_DIST_GEMM_2_5D &&
      opt->algorithm != TSR_DIST_GEMM_AUTO)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "bad algorithm %d",
                          (int)opt->algorithm);
  if (opt->bcast != TSR_DIST_BCAST_AUTO && opt->bcast != TSR_DIST_BCAST_MPI &&
      opt->bcast != TSR_DIST_BCAST_RING && opt->bcast != TSR_DIST_BCAST_TREE)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "bad bcast %d", (int)opt->bcast);
  if (opt->replicas < 0 || opt->memory_per_rank < 0)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "negative replicas (%d) or memory_per_rank (%lld)", opt->replicas,
                          (long long)opt->memory_per_rank);
  return TSR_OK;
}

/* The call as the cost functions see it. The asked replicas count only for a named 2.5D
   (AUTO chooses c itself). */
static void tsr__shape_of(tsr_trans ta, const tsr_dmatrix *a, const tsr_dmatrix *c,
                          const tsr_dist_gemm_options *opt, tsr__dist_shape *d) {
  int64_t k = ta ? a->m : a->n, kb = ta ? a->mb : a->nb;
  memset(d, 0, sizeof *d);
  d->m = (double)c->m;
  d->n = (double)c->n;
  d->k = (double)k;
  d->kb = kb;
  d->panels = (k + kb - 1) / kb;
  d->pr = c->grid->nprow;
  d->pc = c->grid->npcol;
  d->size = c->grid->size;
  d->es = tsr__dtype_size(c->dtype);
  d->replicas = opt && opt->algorithm == TSR_DIST_GEMM_2_5D ? opt->replicas : 0;
  d->memory_per_rank = opt ? opt->memory_per_rank : 0;
}

/* Agrees on `st` (the caller's checks) and on the options, then picks the row and its
   replicas (SUMMA, 1, on any failure). Collective over c's grid; agreed. */
static tsr_status tsr__dist_gemm_plan(tsr_status st, tsr_trans ta, const tsr_dmatrix *a,
                                      const tsr_dmatrix *c, const tsr_dist_gemm_options *opt,
                                      const tsr__dist_schedule **row, int *replicas) {
  size_t n = 0;
  *row = &tsr__dist_schedules(&n)[0];
  *replicas = 1;
  if (st == TSR_OK) st = tsr__options_check(opt);
  MPI_Comm comm = c->grid->comm;
  TSR_CALL(tsr__dist_agree(comm, st));
  int64_t v[4] = {opt ? (int64_t)opt->algorithm : 0, opt ? opt->replicas : 0,
                  opt ? opt->memory_per_rank : 0, opt ? (int64_t)opt->bcast : 0};
  TSR_CALL(tsr__dist_same(comm, v, 4, "algorithm, replicas, memory_per_rank, bcast"));
  tsr__dist_shape d;
  tsr__shape_of(ta, a, c, opt, &d);
  const tsr__dist_schedule *r = NULL;
  int reps = 1;
  st = tsr__dist_schedule_pick(&d, opt, &r, &reps);
  TSR_CALL(tsr__dist_agree(comm, st));
  *row = r;
  *replicas = reps;
  return TSR_OK;
}

/* ------------------------------------------------------------------ the entries -------- */

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
  const tsr__dist_schedule *row = NULL;
  int r = 1;
  tsr_status st = tsr__dist_gemm_check(transa, transb, a, b, c);
  TSR_CALL(tsr__dist_gemm_plan(st, transa, a, c, options, &row, &r));
  *algorithm = row->algorithm;
  *replicas = r;
  return TSR_OK;
}

/* The local checks of a call beyond tsr__dist_gemm_check: real matrices take real scalars,
   and a panel's elements fit MPI's int counts. */
static tsr_status tsr__dist_gemm_check_call(tsr_trans transa, tsr_complex128 alpha,
                                            const tsr_dmatrix *a, tsr_complex128 beta,
                                            const tsr_dmatrix *c) {
  if (!tsr__dtype_is_complex(c->dtype) && (alpha.im != 0.0 || beta.im != 0.0))
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "alpha = (%g, %g), beta = (%g, %g): a complex scalar for %s matrices",
                          alpha.re, alpha.im, beta.re, beta.im, tsr_dtype_name(c->dtype));
  int64_t kb = transa ? a->mb : a->nb;
  if ((c->lld * kb > INT_MAX) || kb * c->nloc > INT_MAX)
    return tsr__set_error(TSR_ERR_OVERFLOW, __func__,
                          "panels of %lld x %lld / %lld x %lld elements "
                          "exceed MPI's INT_MAX counts",
                          (long long)c->mloc, (long long)kb, (long long)kb, (long long)c->nloc);
  return TSR_OK;
}

/* tsr_dist_gemm_ex and tsr_dist_gemm_complex: checks, agreement, the row, its run, the
   statistics. Collective. */
static tsr_status tsr__dist_gemm_run(tsr_trans transa, tsr_trans transb, tsr_complex128 alpha,
                                     const tsr_dmatrix *a, const tsr_dmatrix *b,
                                     tsr_complex128 beta, tsr_dmatrix *c,
                                     const tsr_dist_gemm_options *options, tsr_dist_stats *stats) {
  if (!a || !b || !c)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", !a ? "A" : !b ? "B" : "C");
  const double t_start = MPI_Wtime();
  uint64_t count0[TSR__COUNT_N];
  tsr__counters_read(count0);
  tsr_status st = tsr__dist_gemm_check(transa, transb, a, b, c);
  if (st == TSR_OK) st = tsr__dist_gemm_check_call(transa, alpha, a, beta, c);
  size_t n = 0;
  const tsr__dist_schedule *row = &tsr__dist_schedules(&n)[0];
  int replicas = 1;
  /* Without options: SUMMA, after one agreement on the checks. */
  if (options)
    TSR_CALL(tsr__dist_gemm_plan(st, transa, a, c, options, &row, &replicas));
  else
    TSR_CALL(tsr__dist_agree(c->grid->comm, st));

  const tsr__dist_call call = {.ta = transa,
                               .tb = transb,
                               .alpha = alpha,
                               .beta = beta,
                               .a = a,
                               .b = b,
                               .c = c,
                               .options = options,
                               .replicas = replicas,
                               .t_start = t_start};
  tsr_dist_stats local;
  memset(&local, 0, sizeof local);
  st = row->run(&call, &local);
  local.algorithm = row->algorithm;
  local.replicas = replicas;
  local.total_seconds = MPI_Wtime() - t_start;
  tsr__dist_count_since(&local, count0); /* the whole call's device work and broadcasts */
  if (stats) *stats = local;
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
