/*
 * Collective MPI-IO of .npy files into and out of block-cyclic matrices. The file view of
 * each rank is an MPI_Type_create_darray type (block-cyclic MB x NB over the P x Q grid; MPI
 * numbers the processes of a darray grid in row-major order, as our grid does), so every
 * rank reads or writes exactly its own elements in one collective call.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/mpi_internal.h"

/* Transposes a packed rows x cols matrix between row-major (`rm`) and column-major (`cm`). */
static void tsr__rm_to_cm(const char *rm, char *cm, int64_t rows, int64_t cols, size_t es) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      memcpy(cm + (size_t)(i + j * rows) * es, rm + (size_t)(i * cols + j) * es, es);
}
static void tsr__cm_to_rm(const char *cm, char *rm, int64_t rows, int64_t cols, size_t es) {
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++)
      memcpy(rm + (size_t)(i * cols + j) * es, cm + (size_t)(i + j * rows) * es, es);
}

/* The darray file type of this rank's elements of an m x n matrix (C or Fortran order). */
static tsr_status tsr__make_darray(const tsr_dmatrix *a, int fortran, MPI_Datatype *out) {
  const tsr_grid *g = a->grid;
  int gsizes[2] = {(int)a->m, (int)a->n};
  int distribs[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
  int dargs[2] = {(int)a->mb, (int)a->nb};
  int psizes[2] = {g->nprow, g->npcol};
  int rc = MPI_Type_create_darray(g->size, g->rank, 2, gsizes, distribs, dargs, psizes,
                                  fortran ? MPI_ORDER_FORTRAN : MPI_ORDER_C,
                                  tsr__mpi_type(a->dtype), out);
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(out);
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Type_create_darray");
  return TSR_OK;
}

static tsr_status tsr__check_int_sizes(const tsr_dmatrix *a, const char *path) {
  if (a->m > INT_MAX || a->n > INT_MAX || a->mb > INT_MAX || a->nb > INT_MAX ||
      a->mloc * a->nloc > INT_MAX)
    return tsr__set_error(TSR_ERR_OVERFLOW, __func__,
                          "'%s': %lld x %lld matrix (local %lld x %lld): MPI-IO counts are "
                          "limited to INT_MAX (%d)",
                          path, (long long)a->m, (long long)a->n, (long long)a->mloc,
                          (long long)a->nloc, INT_MAX);
  return TSR_OK;
}

/* Every rank checks that it can see the input as a regular file holding `need` bytes, without
   blocking (a path missing on one node, or a FIFO, must fail on every rank before the
   collective MPI_File_open). Local; callers agree. */
static tsr_status tsr__check_input(const char *path, uint64_t need) {
  int fd = -1;
  uint64_t size = 0;
  TSR_CALL(tsr__open_input(path, &fd, &size));
  close(fd);
  if (size < need)
    return tsr__set_error(TSR_ERR_FORMAT, __func__, "'%s' is %llu bytes here, the data needs %llu",
                          path, (unsigned long long)size, (unsigned long long)need);
  return TSR_OK;
}

/* Open MPI's MPI-IO (ompio) names its shared-file-pointer files after the path it opens plus a
   suffix, in fixed 256-byte buffers or as one name component: a path over about 244 bytes, or
   a last component over about 225, aborts the process inside MPI_File_open (measured with Open
   MPI 4.1). Such inputs are refused up front, with margin; outputs are opened under their short
   temporary name (tsr__temp_path), checked alike. */
#if defined(OMPI_MAJOR_VERSION)
#define MPIIO_PATH_MAX 230
#define MPIIO_NAME_MAX 215
#else
#define MPIIO_PATH_MAX 4095
#define MPIIO_NAME_MAX 255
#endif
static tsr_status tsr__check_mpiio_name(const char *path, const char *user_path) {
  const char *slash = strrchr(path, '/');
  size_t len = strlen(slash ? slash + 1 : path), plen = strlen(path);
  if (len > MPIIO_NAME_MAX || plen > MPIIO_PATH_MAX)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "'%s': a path of %zu bytes (last component %zu) is longer than this MPI "
                          "library's MPI-IO can open (%d, %d); use a shorter name or folder, or a "
                          "link with a shorter path",
                          user_path, plen, len, MPIIO_PATH_MAX, MPIIO_NAME_MAX);
  return TSR_OK;
}

/* True when an MPI-IO call moved exactly `want` elements of `type`. */
static bool tsr__full_count(MPI_Status *status, MPI_Datatype type, int want, int *got) {
  *got = -1;
  MPI_Get_count(status, type, got);
  return *got == want;
}

tsr_status tsr_dmatrix_read_npy(tsr_grid *grid, const char *path, int64_t mb, int64_t nb,
                                tsr_device device, tsr_dmatrix **out) {
  TSR_API_ENTRY();
  if (!grid || !out)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", grid ? "out" : "grid");
  *out = NULL;
  int64_t v[2] = {mb, nb};
  TSR_CALL(tsr__dist_same(grid->comm, v, 2, "mb, nb"));

  /* Rank 0 alone parses the header; everyone gets its verdict and the header. */
  tsr_npy_header h;
  memset(&h, 0, sizeof h);
  tsr_status st = TSR_OK;
  if (grid->rank == 0) {
    if (!path)
      st = tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "path is NULL");
    else
      st = tsr_npy_read_header(path, &h);
    if (st == TSR_OK && h.ndim != 2)
      st = tsr__set_error(TSR_ERR_SHAPE, __func__, "'%s' holds a %d-D array; a matrix must be 2-D",
                          path, h.ndim);
    else if (st == TSR_OK && h.dtype != TSR_F32 && h.dtype != TSR_F64)
      st = tsr__set_error(TSR_ERR_DTYPE, __func__, "'%s' holds %s data; matrices are f32 or f64",
                          path, tsr_dtype_name(h.dtype));
  }
  TSR_CALL(tsr__dist_agree(grid->comm, st));
  int rc = MPI_Bcast(&h, (int)sizeof h, MPI_BYTE, 0, grid->comm);
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");

  tsr_dmatrix *a = NULL;
  void *local = NULL, *tmp = NULL;
  bool staged = false;
  size_t es = tsr__dtype_size(h.dtype);
  st = tsr__dm_create(grid, h.shape[0], h.shape[1], mb, nb, h.dtype, device, &a);
  if (st == TSR_OK) st = tsr__check_int_sizes(a, path);
  if (st == TSR_OK && a->m > 0 && a->n > 0) st = tsr__check_mpiio_name(path, path);
  if (st == TSR_OK && a->m > 0 && a->n > 0)
    st = tsr__check_input(path, (uint64_t)h.data_offset + (uint64_t)(a->m * a->n) * es);
  if (st == TSR_OK) st = tsr__dm_host_get(a, false, &local, &staged);
  /* A C-order file arrives as row-major local blocks, transposed afterwards. */
  if (st == TSR_OK && !h.fortran_order)
    st = tsr__host_alloc((size_t)(a->mloc * a->nloc) * es, &tmp);
  st = tsr__dist_agree(grid->comm, st);
  if (st != TSR_OK) goto fail;

  if (a->m > 0 && a->n > 0) {
    MPI_File fh;
    rc = MPI_File_open(grid->comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
      st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_open");
      st = tsr__dist_agree(grid->comm, st);
      goto fail;
    }
    MPI_Datatype ftype = MPI_DATATYPE_NULL;
    MPI_Datatype etype = tsr__mpi_type(a->dtype);
    st = tsr__make_darray(a, h.fortran_order, &ftype);
    /* Every rank makes every collective call below, failed or not, so none is left waiting. */
    rc = MPI_File_set_view(fh, (MPI_Offset)h.data_offset, etype,
                           ftype != MPI_DATATYPE_NULL ? ftype : etype, "native", MPI_INFO_NULL);
    if (rc != MPI_SUCCESS && st == TSR_OK)
      st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_set_view");
    int count = (int)(a->mloc * a->nloc), got = 0;
    MPI_Status status;
    rc = MPI_File_read_all(fh, h.fortran_order ? local : tmp, st == TSR_OK ? count : 0, etype,
                           &status);
    if (rc != MPI_SUCCESS && st == TSR_OK)
      st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_read_all");
    if (st == TSR_OK && !tsr__full_count(&status, etype, count, &got))
      st = tsr__set_error(TSR_ERR_IO, __func__, "'%s': short read, %d of %d elements", path, got,
                          count);
    MPI_File_close(&fh);
    if (ftype != MPI_DATATYPE_NULL) MPI_Type_free(&ftype);
    if (st == TSR_OK) {
      void *data = h.fortran_order ? local : tmp;
      if (h.big_endian != tsr__host_big_endian()) tsr__byteswap(data, count, es);
      if (!h.fortran_order) tsr__rm_to_cm(tmp, local, a->mloc, a->nloc, es);
    }
  }
  if (local) {
    tsr_status s2 = tsr__dm_host_done(a, local, staged, st == TSR_OK);
    local = NULL;
    if (st == TSR_OK) st = s2;
  }
  st = tsr__dist_agree(grid->comm, st);
  if (st == TSR_OK) {
    tsr__host_free(tmp);
    *out = a;
    return TSR_OK;
  }
fail:
  if (local) tsr__dm_host_done(a, local, staged, false);
  tsr__host_free(tmp);
  tsr_dmatrix_free(a);
  return st;
}

tsr_status tsr_dmatrix_write_npy(const tsr_dmatrix *a, const char *path, int fortran_order) {
  TSR_API_ENTRY();
  if (!a) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "matrix is NULL");
  tsr_grid *g = a->grid;
  fortran_order = fortran_order ? 1 : 0;
  int64_t v[1] = {fortran_order};
  TSR_CALL(tsr__dist_same(g->comm, v, 1, "fortran_order"));
  tsr_status st = TSR_OK;
  if (!path) st = tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "path is NULL");
  if (st == TSR_OK) st = tsr__check_int_sizes(a, path);
  /* Every rank opens the file: every rank must be able to (node-local paths). */
  if (st == TSR_OK) st = tsr__check_output(path);
  TSR_CALL(tsr__dist_agree(g->comm, st));

  /* The temporary name carries rank 0's pid, so two jobs writing one path do not collide. */
  long long pid = (long long)getpid();
  int rc = MPI_Bcast(&pid, 1, MPI_LONG_LONG, 0, g->comm);
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");
  char tmpname[PATH_MAX + 64];
  char header[4096];
  size_t hlen = 0;
  size_t es = tsr__dtype_size(a->dtype);
  int64_t count = a->mloc * a->nloc;
  void *local = NULL, *buf = NULL;
  bool staged = false, created = false;
  MPI_File fh = MPI_FILE_NULL;
  MPI_Datatype ftype = MPI_DATATYPE_NULL;
  /* The sequence number tells apart two writes of one job whose names share their first
     TSR__TEMP_NAME_KEEP bytes; rank 0's count is used. */
  static atomic_uint sequence;
  unsigned seq = atomic_fetch_add(&sequence, 1u);
  rc = MPI_Bcast(&seq, 1, MPI_UNSIGNED, 0, g->comm);
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");
  st = tsr__temp_path(path, (long)pid, seq, tmpname, sizeof tmpname);
  if (st == TSR_OK) st = tsr__check_mpiio_name(tmpname, path);
  if (st == TSR_OK && g->rank == 0) {
    int64_t shape[2] = {a->m, a->n};
    st = tsr_npy_format_header(a->dtype, fortran_order, 2, shape, header, sizeof header, &hlen);
  }
  if (st == TSR_OK) st = tsr__dm_host_get(a, true, &local, &staged);
  /* The column-major local block is the Fortran-order darray piece as it is; C order needs
     it row-major. A big-endian host also writes a swapped copy (files are little-endian). */
  if (st == TSR_OK && (!fortran_order || tsr__host_big_endian())) {
    st = tsr__host_alloc((size_t)count * es, &buf);
    if (st == TSR_OK) {
      if (fortran_order)
        memcpy(buf, local, (size_t)count * es);
      else
        tsr__cm_to_rm(local, buf, a->mloc, a->nloc, es);
      if (tsr__host_big_endian()) tsr__byteswap(buf, count, es);
    }
  }
  if (st == TSR_OK && a->m > 0 && a->n > 0) st = tsr__make_darray(a, fortran_order, &ftype);
  st = tsr__dist_agree(g->comm, st);
  if (st != TSR_OK) goto done;
  unsigned long long hl = hlen;
  rc = MPI_Bcast(&hl, 1, MPI_UNSIGNED_LONG_LONG, 0, g->comm);
  hlen = (size_t)hl;
  if (rc != MPI_SUCCESS) {
    st = tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");
    goto done;
  }

  if (g->rank == 0) unlink(tmpname); /* a stale file of a crashed job with the same pid */
  MPI_Barrier(g->comm);
  created = true; /* from here on, rank 0 removes the temporary on failure */
  rc = MPI_File_open(g->comm, tmpname, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    st = tsr__set_error(TSR_ERR_IO, __func__, "cannot create '%s' (temporary file for '%s'): %s",
                        tmpname, path, text);
    fh = MPI_FILE_NULL;
  }
  /* Space for the whole file, before any data: a full disk fails here, on every rank. */
  uint64_t total = (uint64_t)hlen + (uint64_t)(a->m * a->n) * es;
  if (st == TSR_OK && g->rank == 0) st = tsr__reserve_space(tmpname, total);
  st = tsr__dist_agree(g->comm, st);
  if (st != TSR_OK) {
    if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
    goto done;
  }
  {
    /* Every byte count is checked: some MPI-IO drivers return success on a short write
       (a full disk). Every rank makes every collective call, failed or not. */
    int got = 0;
    if (g->rank == 0 && st == TSR_OK) {
      MPI_Status status;
      rc = MPI_File_write_at(fh, 0, header, (int)hlen, MPI_BYTE, &status);
      if (rc != MPI_SUCCESS)
        st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_write_at (header)");
      else if (!tsr__full_count(&status, MPI_BYTE, (int)hlen, &got))
        st = tsr__set_error(TSR_ERR_IO, __func__,
                            "'%s': short write of the header, %d of %zu bytes", path, got, hlen);
    }
    if (a->m > 0 && a->n > 0) {
      MPI_Datatype etype = tsr__mpi_type(a->dtype);
      rc = MPI_File_set_view(fh, (MPI_Offset)hlen, etype, ftype, "native", MPI_INFO_NULL);
      if (rc != MPI_SUCCESS && st == TSR_OK)
        st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_set_view");
      MPI_Status status;
      rc = MPI_File_write_all(fh, buf ? buf : local, (int)count, etype, &status);
      if (rc != MPI_SUCCESS && st == TSR_OK)
        st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_write_all");
      else if (st == TSR_OK && !tsr__full_count(&status, etype, (int)count, &got))
        st =
            tsr__set_error(TSR_ERR_IO, __func__,
                           "'%s': short write, %d of %lld elements (disk full or file size limit?)",
                           path, got, (long long)count);
    }
    rc = MPI_File_sync(fh);
    if (rc != MPI_SUCCESS && st == TSR_OK)
      st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_sync");
    rc = MPI_File_close(&fh);
    if (rc != MPI_SUCCESS && st == TSR_OK)
      st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_close");
  }
  st = tsr__dist_agree(g->comm, st);
  if (st == TSR_OK && g->rank == 0) {
    /* The size the file must have: a write that was silently dropped shows here. */
    uint64_t want = total, size = 0;
    int fd = -1;
    st = tsr__open_input(tmpname, &fd, &size);
    if (fd >= 0) close(fd);
    if (st == TSR_OK && size != want)
      st = tsr__set_error(TSR_ERR_IO, __func__,
                          "'%s': the written file has %llu bytes, expected %llu (disk full?)", path,
                          (unsigned long long)size, (unsigned long long)want);
    if (st == TSR_OK) st = tsr__commit_temp(tmpname, path);
    if (st == TSR_OK) created = false;
  }
  st = tsr__dist_agree(g->comm, st);
done:
  if (st != TSR_OK && created && g->rank == 0) unlink(tmpname);
  if (ftype != MPI_DATATYPE_NULL) MPI_Type_free(&ftype);
  if (local) tsr__dm_host_done(a, local, staged, false);
  tsr__host_free(buf);
  return st;
}
