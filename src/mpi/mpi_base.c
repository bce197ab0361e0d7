/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ground of src/mpi, what every other file of the folder calls and which calls none of
 * them: MPI's error text in a Tessera status (tsr__mpi_error), the MPI datatype of a dtype,
 * whether a communicator may be used at all (MPI initialized, not finalized, not
 * MPI_COMM_NULL), and the one agreement on an outcome (tsr__dist_agree, the public
 * tsr_dist_agree, tsr__dist_same).
 */
#include <stdio.h>
#include <string.h>

#include "mpi/mpi_internal.h"

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
  /* After MPI_Finalize an MPI call aborts the process, whatever the error handler: the
     public call returns TSR_ERR_MPI instead (every rank has finalized alike). */
  TSR_CALL(tsr__mpi_comm_usable(comm, TSR_ERR_MPI));
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
  TSR_CALL(tsr__mpi_comm_usable(comm, TSR_ERR_MPI)); /* as tsr__dist_agree */
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
