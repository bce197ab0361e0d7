/* SPDX-License-Identifier: BSD-3-Clause */
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

/* Swaps the byte order of n elements of `dtype` at data: a complex element's two parts each. */
static void tsr__npy_swap(void *data, int64_t n, tsr_dtype dtype) {
  const size_t es = tsr__dtype_size(dtype);
  if (tsr__dtype_is_complex(dtype))
    tsr__byteswap(data, 2 * n, es / 2);
  else
    tsr__byteswap(data, n, es);
}

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

/* Block sizes that MPI-IO's file view (MPI_Type_create_darray) takes: int ones. The message
   names the value that is too big and the limit. Local; every rank has the same values. */
static tsr_status tsr__check_int_blocks(int64_t mb, int64_t nb, const char *path) {
  if (mb > INT_MAX || nb > INT_MAX)
    return tsr__set_error(TSR_ERR_OVERFLOW, __func__,
                          "'%s': the %s block size %s = %lld is over INT_MAX (%d), the largest "
                          "block MPI-IO's file view (MPI_Type_create_darray) takes",
                          path, mb > INT_MAX ? "row" : "column", mb > INT_MAX ? "mb" : "nb",
                          (long long)(mb > INT_MAX ? mb : nb), INT_MAX);
  return TSR_OK;
}

/* The sizes of `a` that MPI-IO's int counts must hold: block sizes, dimensions, this rank's
   local element count; the message names the one over INT_MAX. */
static tsr_status tsr__check_int_sizes(const tsr_dmatrix *a, const char *path) {
  TSR_CALL(tsr__check_int_blocks(a->mb, a->nb, path));
  if (a->m > INT_MAX || a->n > INT_MAX)
    return tsr__set_error(TSR_ERR_OVERFLOW, __func__,
                          "'%s': %lld x %lld matrix: %lld %s over INT_MAX (%d), the largest "
                          "dimension MPI-IO's file view (MPI_Type_create_darray) takes",
                          path, (long long)a->m, (long long)a->n,
                          (long long)(a->m > INT_MAX ? a->m : a->n),
                          a->m > INT_MAX ? "rows are" : "columns are", INT_MAX);
  if (a->mloc * a->nloc > INT_MAX)
    return tsr__set_error(TSR_ERR_OVERFLOW, __func__,
                          "'%s': the local block of %lld x %lld = %lld elements is over INT_MAX "
                          "(%d), the most one MPI-IO call moves",
                          path, (long long)a->mloc, (long long)a->nloc,
                          (long long)(a->mloc * a->nloc), INT_MAX);
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

/* ---------------------------------------------------------------- reading ------------- */

/* An input opened on every rank of a grid: the one open of the file per rank (MPI_File_open)
   and the header rank 0 parsed, broadcast. */
struct tsr_dmatrix_npy {
  tsr_grid *grid;
  MPI_File fh;
  tsr_npy_header h;
  char path[];
};

/* tsr__npy_read_header_at's reader on an MPI file handle (rank 0, independent reads). */
typedef struct tsr__npy_mpi_source {
  const char *path;
  MPI_File fh;
} tsr__npy_mpi_source;

static tsr_status tsr__npy_mpi_read(void *ctx, uint64_t offset, void *dst, size_t n) {
  const tsr__npy_mpi_source *s = ctx;
  MPI_Status status;
  int got = 0;
  int rc = MPI_File_read_at(s->fh, (MPI_Offset)offset, dst, (int)n, MPI_BYTE, &status);
  if (rc != MPI_SUCCESS)
    return tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_read_at (header)");
  if (!tsr__full_count(&status, MPI_BYTE, (int)n, &got))
    return tsr__set_error(TSR_ERR_FORMAT, __func__, "truncated header in %s: read %d of %zu bytes",
                          s->path, got, n);
  return TSR_OK;
}

/* Rank 0: the header, from the open handle, and the one check that it holds a matrix. */
static tsr_status tsr__npy_matrix_header(const char *path, MPI_File fh, uint64_t fsize,
                                         tsr_npy_header *h) {
  tsr__npy_mpi_source src = {path, fh};
  TSR_CALL(tsr__npy_read_header_at(path, fsize, tsr__npy_mpi_read, &src, h));
  if (h->ndim != 2)
    return tsr__set_error(TSR_ERR_SHAPE, __func__, "'%s' holds a %d-D array; a matrix must be 2-D",
                          path, h->ndim);
  if (h->dtype != TSR_F32 && h->dtype != TSR_F64 && !tsr__dtype_is_complex(h->dtype))
    return tsr__set_error(TSR_ERR_DTYPE, __func__,
                          "'%s' holds %s data; matrices are f32, f64, c64 or c128", path,
                          tsr_dtype_name(h->dtype));
  return TSR_OK;
}

/* Every rank, before the collective open and without opening: a regular file it may read (a
   path missing on one node, or a FIFO, fails every rank instead of blocking one), with a name
   this MPI-IO can open. *fsize: its size here. Local; callers agree. */
static tsr_status tsr__npy_check_input(const char *path, uint64_t *fsize) {
  TSR_CALL(tsr__stat_input(path, fsize));
  return tsr__check_mpiio_name(path, path);
}

/* Every rank: its copy holds all the data the header announces (node-local copies). */
static tsr_status tsr__npy_check_size(const tsr_dmatrix_npy *f, uint64_t fsize) {
  uint64_t need =
      (uint64_t)f->h.data_offset + (uint64_t)f->h.size * (uint64_t)tsr__dtype_size(f->h.dtype);
  if (fsize < need)
    return tsr__set_error(TSR_ERR_FORMAT, __func__, "'%s' is %llu bytes here, the data needs %llu",
                          f->path, (unsigned long long)fsize, (unsigned long long)need);
  return TSR_OK;
}

tsr_status tsr_dmatrix_npy_open(tsr_grid *grid, const char *path, tsr_dmatrix_npy **out) {
  TSR_API_ENTRY();
  if (!grid || !out)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", grid ? "out" : "grid");
  *out = NULL;
  tsr_status st = path ? TSR_OK : tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "path is NULL");
  uint64_t fsize = 0;
  if (st == TSR_OK) st = tsr__npy_check_input(path, &fsize);
  tsr_dmatrix_npy *f = NULL;
  if (st == TSR_OK) {
    size_t len = strlen(path) + 1;
    f = calloc(1, sizeof *f + len);
    if (f)
      memcpy(f->path, path, len);
    else
      st = tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "cannot allocate the handle of '%s'",
                          path);
  }
  st = tsr__dist_agree(grid->comm, st);
  if (st != TSR_OK) {
    free(f);
    return st;
  }
  f->grid = grid;
  int rc = MPI_File_open(grid->comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &f->fh);
  st = rc == MPI_SUCCESS ? TSR_OK : tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_open");
  st = tsr__dist_agree(grid->comm, st);
  if (st != TSR_OK) {
    free(f);
    return st;
  }
  /* Rank 0 alone parses the header; everyone gets its verdict and the header. */
  if (grid->rank == 0) st = tsr__npy_matrix_header(path, f->fh, fsize, &f->h);
  st = tsr__dist_agree(grid->comm, st);
  if (st == TSR_OK) {
    rc = MPI_Bcast(&f->h, (int)sizeof f->h, MPI_BYTE, 0, grid->comm);
    st = rc == MPI_SUCCESS ? tsr__npy_check_size(f, fsize)
                           : tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");
    st = tsr__dist_agree(grid->comm, st);
  }
  if (st != TSR_OK) {
    MPI_File_close(&f->fh);
    free(f);
    return st;
  }
  *out = f;
  return TSR_OK;
}

tsr_status tsr_dmatrix_npy_header(const tsr_dmatrix_npy *f, tsr_npy_header *header) {
  TSR_API_ENTRY();
  TSR_CHECK(f && header, TSR_ERR_NULL_POINTER, "%s is NULL", f ? "header" : "file");
  *header = f->h;
  return TSR_OK;
}

tsr_status tsr_dmatrix_npy_close(tsr_dmatrix_npy *f) {
  TSR_API_ENTRY();
  if (!f) return TSR_OK;
  /* After MPI_Finalize no MPI call is allowed (MPI_File_close would abort the process): the
     handle's memory is freed and the status says why the file was not closed. */
  tsr_status usable = tsr__mpi_comm_usable(f->grid->comm, TSR_ERR_MPI);
  if (usable != TSR_OK) {
    free(f);
    return usable;
  }
  int rc = MPI_File_close(&f->fh);
  tsr_status st =
      rc == MPI_SUCCESS ? TSR_OK : tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_close");
  tsr_grid *g = f->grid;
  free(f);
  return tsr__dist_agree(g->comm, st);
}

/* The local block of `a` from the open file: the darray view at the data offset and one
   MPI_File_read_all into `dst` (column-major for Fortran order, else row-major). Every rank
   makes every collective call, failed or not, so none is left waiting. Local status. */
static tsr_status tsr__npy_read_blocks(const tsr_dmatrix_npy *f, const tsr_dmatrix *a, void *dst) {
  MPI_Datatype ftype = MPI_DATATYPE_NULL, etype = tsr__mpi_type(a->dtype);
  tsr_status st = tsr__make_darray(a, f->h.fortran_order, &ftype);
  int rc = MPI_File_set_view(f->fh, (MPI_Offset)f->h.data_offset, etype,
                             ftype != MPI_DATATYPE_NULL ? ftype : etype, "native", MPI_INFO_NULL);
  if (rc != MPI_SUCCESS && st == TSR_OK)
    st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_set_view");
  int count = (int)(a->mloc * a->nloc), got = 0;
  MPI_Status status;
  rc = MPI_File_read_all(f->fh, dst, st == TSR_OK ? count : 0, etype, &status);
  if (rc != MPI_SUCCESS && st == TSR_OK)
    st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_read_all");
  if (st == TSR_OK && !tsr__full_count(&status, etype, count, &got))
    st = tsr__set_error(TSR_ERR_IO, __func__, "'%s': short read, %d of %d elements", f->path, got,
                        count);
  if (ftype != MPI_DATATYPE_NULL) MPI_Type_free(&ftype);
  return st;
}

/* The arguments of a read, checked before any file is touched: mb, nb the same on every rank
   (collective: TSR_ERR_INCONSISTENT), at least 1 and at most INT_MAX, and this rank's device.
   Local status (the device is this rank's): callers agree. */
static tsr_status tsr__npy_read_args(tsr_grid *grid, const char *path, int64_t mb, int64_t nb,
                                     tsr_device device) {
  int64_t v[2] = {mb, nb};
  TSR_CALL(tsr__dist_same(grid->comm, v, 2, "mb, nb"));
  if (mb < 1 || nb < 1)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "block size %lld x %lld must be >= 1",
                          (long long)mb, (long long)nb);
  TSR_CALL(tsr__check_int_blocks(mb, nb, path ? path : "(null)"));
  const struct tsr__backend_ops *ops = NULL;
  return tsr__backend_for(device, &ops);
}

tsr_status tsr_dmatrix_npy_read(tsr_dmatrix_npy *f, int64_t mb, int64_t nb, tsr_device device,
                                tsr_dmatrix **out) {
  TSR_API_ENTRY();
  if (!f || !out)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", f ? "out" : "file");
  *out = NULL;
  tsr_grid *grid = f->grid;
  const tsr_npy_header *h = &f->h;
  tsr_dmatrix *a = NULL;
  void *local = NULL, *tmp = NULL;
  bool staged = false;
  size_t es = tsr__dtype_size(h->dtype);
  tsr_status st = tsr__npy_read_args(grid, f->path, mb, nb, device);
  if (st == TSR_OK)
    st = tsr__dm_create(grid, h->shape[0], h->shape[1], mb, nb, h->dtype, device, &a);
  if (st == TSR_OK) st = tsr__check_int_sizes(a, f->path);
  if (st == TSR_OK) st = tsr__dm_host_get(a, false, &local, &staged);
  /* A C-order file arrives as row-major local blocks, transposed afterwards. */
  if (st == TSR_OK && !h->fortran_order)
    st = tsr__host_alloc((size_t)(a->mloc * a->nloc) * es, &tmp);
  st = tsr__dist_agree(grid->comm, st);
  if (st == TSR_OK && a->m > 0 && a->n > 0) {
    st = tsr__npy_read_blocks(f, a, h->fortran_order ? local : tmp);
    if (st == TSR_OK) {
      int64_t count = a->mloc * a->nloc;
      if (h->big_endian != tsr__host_big_endian())
        tsr__npy_swap(h->fortran_order ? local : tmp, count, a->dtype);
      if (!h->fortran_order) tsr__rm_to_cm(tmp, local, a->mloc, a->nloc, es);
    }
  }
  if (local) {
    tsr_status s2 = tsr__dm_host_done(a, local, staged, st == TSR_OK);
    if (st == TSR_OK) st = s2;
  }
  tsr__host_free(tmp);
  st = tsr__dist_agree(grid->comm, st);
  if (st != TSR_OK) {
    tsr_dmatrix_free(a);
    return st;
  }
  *out = a;
  return TSR_OK;
}

tsr_status tsr_dmatrix_read_npy(tsr_grid *grid, const char *path, int64_t mb, int64_t nb,
                                tsr_device device, tsr_dmatrix **out) {
  TSR_API_ENTRY();
  if (!grid || !out)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", grid ? "out" : "grid");
  *out = NULL;
  /* Arguments first, then the file: a bad block size, device or path never opens it. */
  tsr_status st = tsr__npy_read_args(grid, path, mb, nb, device);
  if (st == TSR_OK && !path) st = tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "path is NULL");
  TSR_CALL(tsr__dist_agree(grid->comm, st));
  tsr_dmatrix_npy *f = NULL;
  TSR_CALL(tsr_dmatrix_npy_open(grid, path, &f));
  st = tsr_dmatrix_npy_read(f, mb, nb, device, out);
  tsr_status s2 = tsr_dmatrix_npy_close(f);
  if (st == TSR_OK && s2 != TSR_OK) {
    tsr_dmatrix_free(*out);
    *out = NULL;
    st = s2;
  }
  return st;
}

/* The state of one collective write, shared by its steps. */
typedef struct tsr__npy_writer {
  const char *path;
  const tsr_dmatrix *a;
  int fortran_order;
  char tmpname[PATH_MAX + 64]; /* the temporary file beside `path` */
  char header[4096];           /* rank 0's header */
  size_t hlen;                 /* its length (every rank) */
  uint64_t total;              /* bytes of the whole file */
  int64_t count;               /* local elements */
  void *local, *buf;           /* the local block on the host; its row-major / swapped copy */
  bool staged, created;        /* created: rank 0 removes the temporary on failure */
  MPI_File fh;
  MPI_Datatype ftype;
} tsr__npy_writer;

/* Step 1: the temporary name (rank 0's pid and write count), rank 0's header, the local block
   on the host in the file's order and byte order, the darray view. Agreed. */
static tsr_status tsr__npy_write_prepare(tsr__npy_writer *w) {
  const tsr_dmatrix *a = w->a;
  tsr_grid *g = a->grid;
  /* The temporary name carries rank 0's pid, so two jobs writing one path do not collide. */
  long long pid = (long long)getpid();
  int rc = MPI_Bcast(&pid, 1, MPI_LONG_LONG, 0, g->comm);
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");
  size_t es = tsr__dtype_size(a->dtype);
  /* The sequence number tells apart two writes of one job whose names share their first
     TSR__TEMP_NAME_KEEP bytes; rank 0's count is used. */
  static atomic_uint sequence;
  unsigned seq = atomic_fetch_add(&sequence, 1u);
  rc = MPI_Bcast(&seq, 1, MPI_UNSIGNED, 0, g->comm);
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");
  tsr_status st = tsr__temp_path(w->path, (long)pid, seq, w->tmpname, sizeof w->tmpname);
  if (st == TSR_OK) st = tsr__check_mpiio_name(w->tmpname, w->path);
  if (st == TSR_OK && g->rank == 0) {
    int64_t shape[2] = {a->m, a->n};
    st = tsr_npy_format_header(a->dtype, w->fortran_order, 2, shape, w->header, sizeof w->header,
                               &w->hlen);
  }
  if (st == TSR_OK) st = tsr__dm_host_get(a, true, &w->local, &w->staged);
  /* The column-major local block is the Fortran-order darray piece as it is; C order needs
     it row-major. A big-endian host also writes a swapped copy (files are little-endian). */
  if (st == TSR_OK && (!w->fortran_order || tsr__host_big_endian())) {
    st = tsr__host_alloc((size_t)w->count * es, &w->buf);
    if (st == TSR_OK) {
      if (w->fortran_order)
        memcpy(w->buf, w->local, (size_t)w->count * es);
      else
        tsr__cm_to_rm(w->local, w->buf, a->mloc, a->nloc, es);
      if (tsr__host_big_endian()) tsr__npy_swap(w->buf, w->count, a->dtype);
    }
  }
  if (st == TSR_OK && a->m > 0 && a->n > 0) st = tsr__make_darray(a, w->fortran_order, &w->ftype);
  TSR_CALL(tsr__dist_agree(g->comm, st));
  unsigned long long hl = w->hlen;
  rc = MPI_Bcast(&hl, 1, MPI_UNSIGNED_LONG_LONG, 0, g->comm);
  w->hlen = (size_t)hl;
  if (rc != MPI_SUCCESS) return tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Bcast");
  w->total = (uint64_t)w->hlen + (uint64_t)(a->m * a->n) * es;
  return TSR_OK;
}

/* Step 2: the temporary file, created by rank 0 alone with its whole size reserved (a full disk
   fails here, on every rank, before any data), then opened by every rank without
   MPI_MODE_CREATE. Only one process ever creates it: a rank that reaches the open late cannot
   create it again after rank 0's signal handler or error path removed it (with MPI_MODE_CREATE,
   Open MPI's OMPIO opens with O_CREAT on every rank, and a rank that then lost its peer and
   exited left the file behind). Agreed; on failure the file is closed. */
static tsr_status tsr__npy_write_create(tsr__npy_writer *w) {
  tsr_grid *g = w->a->grid;
  w->created = true;
  tsr_status st = TSR_OK;
  if (g->rank == 0) {
    unlink(w->tmpname); /* a stale file of a crashed job with the same pid */
    st = tsr__create_reserved(w->tmpname, w->path, w->total);
  }
  TSR_CALL(tsr__dist_agree(g->comm, st));
  int rc = MPI_File_open(g->comm, w->tmpname, MPI_MODE_WRONLY, MPI_INFO_NULL, &w->fh);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    st = tsr__set_error(TSR_ERR_IO, __func__, "cannot open '%s' (temporary file for '%s'): %s",
                        w->tmpname, w->path, text);
    w->fh = MPI_FILE_NULL;
  }
  st = tsr__dist_agree(g->comm, st);
  if (st != TSR_OK && w->fh != MPI_FILE_NULL) MPI_File_close(&w->fh);
  return st;
}

/* Step 3: rank 0's header, every rank's blocks through the darray view, sync and close. Every
   byte count is checked: some MPI-IO drivers return success on a short write (a full disk).
   Every rank makes every collective call, failed or not. Agreed. */
static tsr_status tsr__npy_write_data(tsr__npy_writer *w) {
  const tsr_dmatrix *a = w->a;
  tsr_grid *g = a->grid;
  tsr_status st = TSR_OK;
  int got = 0, rc;
  if (g->rank == 0) {
    MPI_Status status;
    rc = MPI_File_write_at(w->fh, 0, w->header, (int)w->hlen, MPI_BYTE, &status);
    if (rc != MPI_SUCCESS)
      st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_write_at (header)");
    else if (!tsr__full_count(&status, MPI_BYTE, (int)w->hlen, &got))
      st = tsr__set_error(TSR_ERR_IO, __func__, "'%s': short write of the header, %d of %zu bytes",
                          w->path, got, w->hlen);
  }
  if (a->m > 0 && a->n > 0) {
    MPI_Datatype etype = tsr__mpi_type(a->dtype);
    rc = MPI_File_set_view(w->fh, (MPI_Offset)w->hlen, etype, w->ftype, "native", MPI_INFO_NULL);
    if (rc != MPI_SUCCESS && st == TSR_OK)
      st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_set_view");
    MPI_Status status;
    rc = MPI_File_write_all(w->fh, w->buf ? w->buf : w->local, (int)w->count, etype, &status);
    if (rc != MPI_SUCCESS && st == TSR_OK)
      st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_write_all");
    else if (st == TSR_OK && !tsr__full_count(&status, etype, (int)w->count, &got))
      st = tsr__set_error(TSR_ERR_IO, __func__,
                          "'%s': short write, %d of %lld elements (disk full or file size limit?)",
                          w->path, got, (long long)w->count);
  }
  rc = MPI_File_sync(w->fh);
  if (rc != MPI_SUCCESS && st == TSR_OK)
    st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_sync");
  rc = MPI_File_close(&w->fh);
  if (rc != MPI_SUCCESS && st == TSR_OK)
    st = tsr__mpi_error(__func__, TSR_ERR_IO, rc, "MPI_File_close");
  return tsr__dist_agree(g->comm, st);
}

/* Step 4, rank 0: the size the file must have (a write that was silently dropped shows here),
   then the rename onto `path`. Agreed. */
static tsr_status tsr__npy_write_commit(tsr__npy_writer *w) {
  tsr_grid *g = w->a->grid;
  tsr_status st = TSR_OK;
  if (g->rank == 0) {
    uint64_t size = 0;
    int fd = -1;
    st = tsr__open_input(w->tmpname, &fd, &size);
    if (fd >= 0) close(fd);
    if (st == TSR_OK && size != w->total)
      st = tsr__set_error(TSR_ERR_IO, __func__,
                          "'%s': the written file has %llu bytes, expected %llu (disk full?)",
                          w->path, (unsigned long long)size, (unsigned long long)w->total);
    if (st == TSR_OK) st = tsr__commit_temp(w->tmpname, w->path);
    if (st == TSR_OK) w->created = false;
  }
  return tsr__dist_agree(g->comm, st);
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

  tsr__npy_writer *w = calloc(1, sizeof *w);
  st = w ? TSR_OK : tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "cannot allocate the writer");
  TSR_CALL(tsr__dist_agree(g->comm, st));
  w->path = path, w->a = a, w->fortran_order = fortran_order;
  w->count = a->mloc * a->nloc;
  w->fh = MPI_FILE_NULL;
  w->ftype = MPI_DATATYPE_NULL;
  st = tsr__npy_write_prepare(w);
  if (st == TSR_OK) st = tsr__npy_write_create(w);
  if (st == TSR_OK) st = tsr__npy_write_data(w);
  if (st == TSR_OK) st = tsr__npy_write_commit(w);
  if (st != TSR_OK && w->created && g->rank == 0) unlink(w->tmpname);
  if (w->ftype != MPI_DATATYPE_NULL) MPI_Type_free(&w->ftype);
  if (w->local) tsr__dm_host_done(a, w->local, w->staged, false);
  tsr__host_free(w->buf);
  free(w);
  return st;
}
