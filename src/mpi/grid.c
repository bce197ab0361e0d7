/* SPDX-License-Identifier: BSD-3-Clause */
/* The process grid (tsr_grid_create, _free, _info) and the index helpers of block-cyclic
   layouts (ScaLAPACK's numroc & co.). The agreement and MPI's error text are below it
   (mpi_base.c), and so is the fact whether the grid is oversubscribed (binding.c). */
#include <math.h>
#include <stdlib.h>

#include "mpi/mpi_internal.h"

/* ---------------------------------------------------------------- grid ----------------- */

static void tsr__grid_release_comms(tsr_grid *g) {
  if (g->row_comm != MPI_COMM_NULL) MPI_Comm_free(&g->row_comm);
  if (g->col_comm != MPI_COMM_NULL) MPI_Comm_free(&g->col_comm);
  if (g->comm != MPI_COMM_NULL) MPI_Comm_free(&g->comm);
}

/* Whether the grid is oversubscribed (some node holds more of its ranks than CPUs), agreed once
   over the whole grid and cached on its three communicators, so that the AUTO broadcasts of SUMMA
   (host panels in tsr__bcast_start, device panels in summa.c) decide without a collective.
   Collective; agreed. */
static tsr_status tsr__grid_oversubscribed(tsr_grid *g) {
  bool oversubscribed = false;
  tsr_status st = tsr__bcast_oversubscribed_agree(g->comm, &oversubscribed);
  if (st == TSR_OK) st = tsr__bcast_oversubscribed_set(g->comm, oversubscribed);
  if (st == TSR_OK) st = tsr__bcast_oversubscribed_set(g->row_comm, oversubscribed);
  if (st == TSR_OK) st = tsr__bcast_oversubscribed_set(g->col_comm, oversubscribed);
  g->oversubscribed = oversubscribed;
  /* The SimGrid model made no MPI call here (and its grids keep their simulated time). */
  return tsr__dist_modeled() ? st : tsr__dist_agree(g->comm, st);
}

tsr_status tsr_grid_create(MPI_Comm comm, int p, int q, tsr_grid **out) {
  TSR_API_ENTRY();
  if (!out) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "out is NULL");
  *out = NULL;
  TSR_CALL(tsr__mpi_comm_usable(comm, TSR_ERR_INVALID_ARGUMENT));
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);

  /* Agree on the requested shape before judging it, so every rank fails alike. */
  int64_t req[2] = {p, q};
  TSR_CALL(tsr__dist_same(comm, req, 2, "grid shape P x Q"));
  if (p < 0 || q < 0)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "grid %d x %d has a negative side", p,
                          q);
  if (p == 0 && q == 0) {
    p = (int)floor(sqrt((double)size));
    while (p > 1 && size % p != 0)
      p--;
    if (p < 1) p = 1;
    q = size / p;
  } else if (p == 0) {
    p = size % q == 0 ? size / q : 0;
    if (p == 0)
      return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                            "grid ? x %d: %d ranks are not a multiple of Q = %d", q, size, q);
  } else if (q == 0) {
    q = size % p == 0 ? size / p : 0;
    if (q == 0)
      return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                            "grid %d x ?: %d ranks are not a multiple of P = %d", p, size, p);
  }
  if ((int64_t)p * q != size)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "grid %d x %d needs %lld ranks but the communicator has %d (P = %d, "
                          "Q = %d, size = %d)",
                          p, q, (long long)p * q, size, p, q, size);

  tsr_grid *g = calloc(1, sizeof *g);
  tsr_status st = g ? TSR_OK : tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "grid struct");
  st = tsr__dist_agree(comm, st);
  if (st != TSR_OK) {
    free(g);
    return st;
  }
  g->comm = g->row_comm = g->col_comm = MPI_COMM_NULL;
  g->nprow = p;
  g->npcol = q;
  g->rank = rank;
  g->size = size;
  g->myrow = rank / q;
  g->mycol = rank % q;
  int rc = MPI_Comm_dup(comm, &g->comm);
  if (rc != MPI_SUCCESS) {
    free(g);
    return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Comm_dup");
  }
  /* Errors come back as codes, so a failed call returns a status instead of aborting. */
  MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN);
  rc = MPI_Comm_split(g->comm, g->myrow, g->mycol, &g->row_comm);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_split(g->comm, g->mycol, g->myrow, &g->col_comm);
  if (rc != MPI_SUCCESS) {
    st = tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Comm_split");
    tsr__grid_release_comms(g);
    free(g);
    return st;
  }
  MPI_Comm_set_errhandler(g->row_comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(g->col_comm, MPI_ERRORS_RETURN);
  st = tsr__grid_oversubscribed(g);
  if (st != TSR_OK) {
    tsr__grid_release_comms(g);
    free(g);
    return st;
  }
  *out = g;
  return TSR_OK;
}

tsr_status tsr_grid_free(tsr_grid *grid) {
  TSR_API_ENTRY();
  if (!grid) return TSR_OK;
  if (grid->staging && grid->staging_free) grid->staging_free(grid->staging);
  /* After MPI_Finalize no MPI call is allowed (MPI_Comm_free would abort the process): the
     communicators ended with MPI, the host memory ends here. */
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) tsr__grid_release_comms(grid);
  free(grid);
  return TSR_OK;
}

tsr_status tsr_grid_info(const tsr_grid *grid, tsr_grid_props *info) {
  TSR_API_ENTRY();
  if (!grid || !info)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", grid ? "info" : "grid");
  info->nprow = grid->nprow;
  info->npcol = grid->npcol;
  info->myrow = grid->myrow;
  info->mycol = grid->mycol;
  info->rank = grid->rank;
  info->size = grid->size;
  info->comm = grid->comm;
  info->row_comm = grid->row_comm;
  info->col_comm = grid->col_comm;
  return TSR_OK;
}

/* ---------------------------------------------------------------- index helpers -------- */

int64_t tsr_numroc(int64_t n, int64_t nb, int iproc, int isrcproc, int nprocs) {
  if (n < 0 || nb < 1 || nprocs < 1 || iproc < 0 || iproc >= nprocs || isrcproc < 0 ||
      isrcproc >= nprocs)
    return 0;
  int mydist = (nprocs + iproc - isrcproc) % nprocs;
  int64_t nblocks = n / nb;
  int64_t num = (nblocks / nprocs) * nb;
  int64_t extrablks = nblocks % nprocs;
  if (mydist < extrablks)
    num += nb;
  else if (mydist == extrablks)
    num += n % nb;
  return num;
}

int tsr_indxg2p(int64_t ig, int64_t nb, int isrcproc, int nprocs) {
  if (ig < 0 || nb < 1 || nprocs < 1) return 0;
  return (int)((isrcproc + ig / nb) % nprocs);
}

int64_t tsr_indxg2l(int64_t ig, int64_t nb, int nprocs) {
  if (ig < 0 || nb < 1 || nprocs < 1) return 0;
  return (ig / (nb * nprocs)) * nb + ig % nb;
}

int64_t tsr_indxl2g(int64_t il, int64_t nb, int iproc, int isrcproc, int nprocs) {
  if (il < 0 || nb < 1 || nprocs < 1) return 0;
  int mydist = (nprocs + iproc - isrcproc) % nprocs;
  return (il / nb) * nb * nprocs + (int64_t)mydist * nb + il % nb;
}
