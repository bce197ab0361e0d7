/* SPDX-License-Identifier: BSD-3-Clause */
/* Process grid, index helpers (ScaLAPACK numroc & co.) and the collective agreement that
   keeps every rank's outcome identical. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"

/* ---------------------------------------------------------------- helpers -------------- */

tsr_status tsr__mpi_error_at(const char *fn, tsr_status code, int rc, const char *what,
                             const char *file, int line, const char *func) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", rc);
  return tsr__set_error_at(code, fn, file, line, func, "%s failed: %s", what, text);
}

MPI_Datatype tsr__mpi_type(tsr_dtype dtype) {
  return tsr__mpi_dtype_of(dtype); /* the rows of mpi_dtypes.h */
}

/* The one agreement (tsr_dist_agree's rule, used by every collective of the library and by
   tessera-gemm): the lowest failing rank's code, message and raise site, " (rank r)" appended
   to the message when some ranks succeeded. *code, msg (TSR_DIST_AGREE_MSG bytes) and *site are
   in/out; returns the MPI error code of a failed collective (MPI_SUCCESS else) and what failed
   in *what. */
static int tsr__agree_core(MPI_Comm comm, int *code, char msg[TSR_DIST_AGREE_MSG],
                           tsr__error_site *site, const char **what) {
  int rank = 0, size = 1;
  *what = "MPI_Comm_rank";
  int rc = MPI_Comm_rank(comm, &rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(comm, &size);
  if (rc != MPI_SUCCESS) return rc;
  int mine[2] = {*code != 0 ? rank : size, *code != 0 ? 1 : 0};
  int first = size, count = 0;
  *what = "MPI_Allreduce (agreement)";
  rc = MPI_Allreduce(&mine[0], &first, 1, MPI_INT, MPI_MIN, comm);
  if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&mine[1], &count, 1, MPI_INT, MPI_SUM, comm);
  if (rc != MPI_SUCCESS || first >= size) return rc;
  /* Fixed size, no pointers: the site's strings travel as they are (PETSc's traceback). */
  struct {
    int code;
    char msg[TSR_DIST_AGREE_MSG];
    tsr__error_site site;
  } buf;
  memset(&buf, 0, sizeof buf);
  if (rank == first) {
    buf.code = *code;
    memcpy(buf.msg, msg, sizeof buf.msg);
    buf.site = *site;
  }
  *what = "MPI_Bcast (agreement)";
  rc = MPI_Bcast(&buf, (int)sizeof buf, MPI_BYTE, first, comm);
  if (rc != MPI_SUCCESS) return rc;
  buf.msg[sizeof buf.msg - 1] = '\0';
  buf.site.file[sizeof buf.site.file - 1] = '\0';
  buf.site.func[sizeof buf.site.func - 1] = '\0';
  *code = buf.code;
  *site = buf.site;
  if (count < size)
    snprintf(msg, TSR_DIST_AGREE_MSG, "%.*s (rank %d)", TSR_DIST_AGREE_MSG - 32, buf.msg, first);
  else
    memcpy(msg, buf.msg, sizeof buf.msg);
  return MPI_SUCCESS;
}

tsr_status tsr__dist_agree(MPI_Comm comm, tsr_status st) {
  int code = (int)st;
  const char *what = "";
  char msg[TSR_DIST_AGREE_MSG] = "";
  tsr__error_site site;
  tsr__last_error_site_get(&site);
  if (st != TSR_OK) snprintf(msg, sizeof msg, "%s", tsr__last_error_detail());
  int rc = tsr__agree_core(comm, &code, msg, &site, &what);
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, what);
  if (code == 0) return TSR_OK;
  /* Every rank is inside the same public call: its name (the API context) prefixes the
     failing rank's reason, raised where it was raised there. */
  return tsr__set_error_at((tsr_status)code, __func__, site.file, site.line, site.func, "%s", msg);
}

tsr_status tsr__mpi_comm_usable(MPI_Comm comm, tsr_status code) {
  int up = 0, down = 0;
  MPI_Initialized(&up);
  if (!up) return tsr__set_error(code, __func__, "MPI is not initialized (call MPI_Init first)");
  MPI_Finalized(&down);
  if (down) return tsr__set_error(code, __func__, "MPI is already finalized");
  if (comm == MPI_COMM_NULL)
    return tsr__set_error(code, __func__, "comm is MPI_COMM_NULL, not a communicator");
  return TSR_OK;
}

tsr_status tsr_dist_agree(MPI_Comm comm, int *code, char *msg, size_t cap) {
  TSR_API_ENTRY();
  TSR_CHECK(code, TSR_ERR_NULL_POINTER, "code is NULL");
  /* No MPI call on a null communicator: the default error handler would abort the job. */
  TSR_CALL(tsr__mpi_comm_usable(comm, TSR_ERR_MPI));
  const char *what = "";
  char buf[TSR_DIST_AGREE_MSG] = "";
  if (*code != 0 && msg) snprintf(buf, sizeof buf, "%s", msg);
  tsr__error_site site;
  tsr__last_error_site_get(&site); /* this thread's last error's: the failure's, if it was ours */
  int agreed = *code;
  int rc = tsr__agree_core(comm, &agreed, buf, &site, &what);
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, what);
  *code = agreed;
  if (agreed == 0) return TSR_OK;
  if (msg && cap > 0) snprintf(msg, cap, "%s", buf);
  /* The agreed failure becomes every rank's last error, with the failing rank's site. */
  (void)tsr__set_error_at((tsr_status)agreed, __func__, site.file, site.line, site.func, "%s", buf);
  return TSR_OK;
}

tsr_status tsr__dist_same(MPI_Comm comm, const int64_t *vals, int n, const char *what) {
  int64_t lo[16], hi[16];
  if (n > 16) return tsr__set_error(TSR_ERR_INTERNAL, __func__, "too many values to compare");
  int rc = MPI_Allreduce(vals, lo, n, MPI_INT64_T, MPI_MIN, comm);
  if (rc == MPI_SUCCESS) rc = MPI_Allreduce(vals, hi, n, MPI_INT64_T, MPI_MAX, comm);
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Allreduce");
  for (int i = 0; i < n; i++)
    if (lo[i] != hi[i])
      return tsr__set_error(TSR_ERR_INCONSISTENT, __func__,
                            "arguments differ between ranks: %s (value %d ranges from %lld to "
                            "%lld)",
                            what, i, (long long)lo[i], (long long)hi[i]);
  return TSR_OK;
}

/* ---------------------------------------------------------------- grid ----------------- */

static void tsr__grid_release_comms(tsr_grid *g) {
  if (g->row_comm != MPI_COMM_NULL) MPI_Comm_free(&g->row_comm);
  if (g->col_comm != MPI_COMM_NULL) MPI_Comm_free(&g->col_comm);
  if (g->comm != MPI_COMM_NULL) MPI_Comm_free(&g->comm);
}

/* Whether the grid's ranks share cores, agreed once over the whole grid and cached on its
   three communicators, so that the AUTO broadcasts of SUMMA (host panels in tsr__bcast_start,
   device panels in summa.c) decide without a collective. Collective; agreed. */
static tsr_status tsr__grid_shared_cores(tsr_grid *g) {
  bool shared = false;
  tsr_status st = tsr__bcast_shared_cores_agree(g->comm, &shared);
  if (st == TSR_OK) st = tsr__bcast_shared_cores_set(g->comm, shared);
  if (st == TSR_OK) st = tsr__bcast_shared_cores_set(g->row_comm, shared);
  if (st == TSR_OK) st = tsr__bcast_shared_cores_set(g->col_comm, shared);
  g->shared_cores = shared;
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
  st = tsr__grid_shared_cores(g);
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
  if (grid->summa_plan && grid->summa_plan_free) grid->summa_plan_free(grid->summa_plan);
  tsr__grid_release_comms(grid);
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
