/* SPDX-License-Identifier: BSD-3-Clause */
/* 2D block-cyclic distributed matrices: creation, local blocks, host staging, scatter and
   gather through a root, fills, and the redistribution into the transpose. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/philox.h"
#include "mpi/mpi_internal.h"

/* ---------------------------------------------------------------- raw access ---------- */

int64_t tsr__dm_local_count(const tsr_dmatrix *a) {
  return a->lld * a->nloc;
}

tsr_status tsr__dm_host_get(const tsr_dmatrix *a, bool copy_in, void **host, bool *staged) {
  *host = NULL;
  *staged = false;
  if (a->device.kind == TSR_DEVICE_CPU) {
    *host = tsr__array_ptr(a->storage);
    return TSR_OK;
  }
  size_t bytes = (size_t)tsr__dm_local_count(a) * tsr__dtype_size(a->dtype);
  void *p = NULL;
  TSR_CALL(tsr__host_alloc(bytes, &p));
  if (copy_in) {
    tsr_status st = tsr__copy_d2h(a->storage, 0, p, bytes);
    if (st != TSR_OK) {
      tsr__host_free(p);
      return st;
    }
  }
  *host = p;
  *staged = true;
  return TSR_OK;
}

tsr_status tsr__dm_host_done(const tsr_dmatrix *a, void *host, bool staged, bool write_back) {
  if (!staged) return TSR_OK;
  tsr_status st = TSR_OK;
  if (write_back)
    st = tsr__copy_h2d(a->storage, 0, host,
                       (size_t)tsr__dm_local_count(a) * tsr__dtype_size(a->dtype));
  tsr__host_free(host);
  return st;
}

/* ---------------------------------------------------------------- creation ------------ */

tsr_status tsr__dm_create(tsr_grid *grid, int64_t m, int64_t n, int64_t mb, int64_t nb,
                          tsr_dtype dtype, tsr_device device, tsr_dmatrix **out) {
  *out = NULL;
  if (m < 0 || n < 0)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "negative size %lld x %lld",
                          (long long)m, (long long)n);
  if (mb < 1 || nb < 1)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "block size %lld x %lld must be >= 1",
                          (long long)mb, (long long)nb);
  if (dtype != TSR_F32 && dtype != TSR_F64 && !tsr__dtype_is_complex(dtype))
    return tsr__set_error(TSR_ERR_DTYPE, __func__,
                          "dtype %s: distributed matrices are f32, f64, c64 or c128",
                          tsr_dtype_name(dtype));
  tsr_dmatrix *a = calloc(1, sizeof *a);
  if (!a) return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "matrix struct");
  a->grid = grid;
  a->m = m;
  a->n = n;
  a->mb = mb;
  a->nb = nb;
  a->mloc = tsr_numroc(m, mb, grid->myrow, 0, grid->nprow);
  a->nloc = tsr_numroc(n, nb, grid->mycol, 0, grid->npcol);
  a->lld = a->mloc > 1 ? a->mloc : 1;
  a->dtype = dtype;
  a->device = device;
  a->ctxt = -1;
  int64_t count = 0;
  if (!tsr__mul_overflow_i64(a->lld, a->nloc, &count)) { /* false on overflow */
    tsr_status st = tsr__set_error(TSR_ERR_OVERFLOW, __func__, "local block %lld x %lld overflows",
                                   (long long)a->mloc, (long long)a->nloc);
    free(a);
    return st;
  }
  int64_t shape[1] = {count > 0 ? count : 1};
  tsr_status st = tsr_empty(1, shape, dtype, device, &a->storage);
  if (st != TSR_OK) {
    free(a);
    return st;
  }
  *out = a;
  return TSR_OK;
}

tsr_status tsr_dmatrix_create(tsr_grid *grid, int64_t m, int64_t n, int64_t mb, int64_t nb,
                              tsr_dtype dtype, tsr_device device, tsr_dmatrix **out) {
  TSR_API_ENTRY();
  if (!grid || !out)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", grid ? "out" : "grid");
  *out = NULL;
  int64_t v[5] = {m, n, mb, nb, (int64_t)dtype};
  TSR_CALL(tsr__dist_same(grid->comm, v, 5, "m, n, mb, nb, dtype"));
  tsr_status st = tsr__dm_create(grid, m, n, mb, nb, dtype, device, out);
  st = tsr__dist_agree(grid->comm, st);
  if (st != TSR_OK) {
    tsr_dmatrix_free(*out);
    *out = NULL;
  }
  return st;
}

tsr_status tsr_dmatrix_free(tsr_dmatrix *a) {
  TSR_API_ENTRY();
  if (!a) return TSR_OK;
  tsr_array_release(a->storage);
  free(a);
  return TSR_OK;
}

static int tsr__desc_int(int64_t v) {
  return v <= INT_MAX ? (int)v : -1;
}

tsr_status tsr_dmatrix_info(const tsr_dmatrix *a, tsr_dmatrix_props *info) {
  TSR_API_ENTRY();
  if (!a || !info)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", a ? "info" : "matrix");
  info->m = a->m;
  info->n = a->n;
  info->mb = a->mb;
  info->nb = a->nb;
  info->local_rows = a->mloc;
  info->local_cols = a->nloc;
  info->lld = a->lld;
  info->dtype = a->dtype;
  info->device = a->device;
  info->grid = a->grid;
  info->desc[TSR_DESC_DTYPE] = 1;
  info->desc[TSR_DESC_CTXT] = a->ctxt;
  info->desc[TSR_DESC_M] = tsr__desc_int(a->m);
  info->desc[TSR_DESC_N] = tsr__desc_int(a->n);
  info->desc[TSR_DESC_MB] = tsr__desc_int(a->mb);
  info->desc[TSR_DESC_NB] = tsr__desc_int(a->nb);
  info->desc[TSR_DESC_RSRC] = 0;
  info->desc[TSR_DESC_CSRC] = 0;
  info->desc[TSR_DESC_LLD] = tsr__desc_int(a->lld);
  return TSR_OK;
}

tsr_status tsr_dmatrix_local(const tsr_dmatrix *a, tsr_array **local) {
  TSR_API_ENTRY();
  if (!a || !local)
    return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "%s is NULL", a ? "local" : "matrix");
  int64_t shape[2] = {a->mloc, a->nloc};
  int64_t strides[2] = {1, a->lld};
  return tsr__array_new_view(a->storage, 2, shape, strides, 0, local);
}

tsr_status tsr_dmatrix_set_context(tsr_dmatrix *a, int ctxt) {
  TSR_API_ENTRY();
  if (!a) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "matrix is NULL");
  a->ctxt = ctxt;
  return TSR_OK;
}

/* ---------------------------------------------------------------- scatter / gather ----- */

/* Copies rank (prow, pcol)'s local block between the whole matrix (`whole`, layout/ld) and a
   packed column-major block `blk` (leading dimension lld). to_block: whole -> blk. */
static void tsr__pack_block(const tsr_dmatrix *a, int prow, int pcol, char *whole,
                            tsr_layout layout, int64_t ld, char *blk, int64_t lld, bool to_block) {
  const tsr_grid *g = a->grid;
  size_t es = tsr__dtype_size(a->dtype);
  int64_t mloc = tsr_numroc(a->m, a->mb, prow, 0, g->nprow);
  int64_t nloc = tsr_numroc(a->n, a->nb, pcol, 0, g->npcol);
  for (int64_t lj = 0; lj < nloc; lj++) {
    int64_t j = tsr_indxl2g(lj, a->nb, pcol, 0, g->npcol);
    /* Local rows come in runs of whole blocks that are contiguous in a column-major whole. */
    for (int64_t li = 0; li < mloc; li += a->mb) {
      int64_t i = tsr_indxl2g(li, a->mb, prow, 0, g->nprow);
      int64_t run = mloc - li < a->mb ? mloc - li : a->mb;
      char *b = blk + (size_t)(li + lj * lld) * es;
      if (layout == TSR_COL_MAJOR) {
        char *w = whole + (size_t)(i + j * ld) * es;
        if (to_block)
          memcpy(b, w, (size_t)run * es);
        else
          memcpy(w, b, (size_t)run * es);
      } else {
        for (int64_t r = 0; r < run; r++) {
          char *w = whole + (size_t)((i + r) * ld + j) * es;
          if (to_block)
            memcpy(b + (size_t)r * es, w, es);
          else
            memcpy(w, b + (size_t)r * es, es);
        }
      }
    }
  }
}

/* Shared argument checks of scatter and gather; returns the effective ld. */
static tsr_status tsr__scatter_gather_check(const tsr_dmatrix *a, int root, const void *host,
                                            tsr_layout layout, int64_t *ld) {
  const tsr_grid *g = a->grid;
  int64_t v[2] = {root, (int64_t)layout};
  TSR_CALL(tsr__dist_same(g->comm, v, 2, "root, layout"));
  tsr_status st = TSR_OK;
  if (root < 0 || root >= g->size)
    st = tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "root %d out of range [0, %d)", root,
                        g->size);
  else if (layout != TSR_ROW_MAJOR && layout != TSR_COL_MAJOR)
    st = tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                        "layout %d is neither row- nor column-major", (int)layout);
  else if (g->rank == root) {
    int64_t tight = layout == TSR_ROW_MAJOR ? a->n : a->m;
    if (tight < 1) tight = 1;
    if (*ld == 0) *ld = tight;
    if (*ld < tight)
      st = tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "leading dimension %lld < %lld for a %lld x %lld %s matrix",
                          (long long)*ld, (long long)tight, (long long)a->m, (long long)a->n,
                          layout == TSR_ROW_MAJOR ? "row-major" : "column-major");
    else if (!host && a->m > 0 && a->n > 0)
      st = tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "host buffer is NULL on the root");
  }
  if (st == TSR_OK && tsr__dm_local_count(a) > INT_MAX)
    st = tsr__set_error(TSR_ERR_OVERFLOW, __func__, "local block of %lld elements exceeds INT_MAX",
                        (long long)tsr__dm_local_count(a));
  return tsr__dist_agree(g->comm, st);
}

static tsr_status tsr__scatter_gather(const tsr_dmatrix *a, int root, char *host, tsr_layout layout,
                                      int64_t ld, bool scatter) {
  tsr_grid *g = a->grid;
  TSR_CALL(tsr__scatter_gather_check(a, root, host, layout, &ld));
  size_t es = tsr__dtype_size(a->dtype);
  MPI_Datatype type = tsr__mpi_type(a->dtype);
  void *local = NULL;
  bool staged = false;
  tsr_status st = tsr__dm_host_get(a, !scatter, &local, &staged);
  if (g->rank == root) {
    /* The root packs one rank's block at a time, so it needs one block of extra memory. */
    char *tmp = NULL;
    int64_t maxc = 1;
    for (int r = 0; r < g->size; r++) {
      int64_t c = tsr_numroc(a->m, a->mb, r / g->npcol, 0, g->nprow) *
                  tsr_numroc(a->n, a->nb, r % g->npcol, 0, g->npcol);
      if (c > maxc) maxc = c;
    }
    if (st == TSR_OK) st = tsr__host_alloc((size_t)maxc * es, (void **)&tmp);
    for (int r = 0; r < g->size; r++) {
      int prow = r / g->npcol, pcol = r % g->npcol;
      int64_t mloc = tsr_numroc(a->m, a->mb, prow, 0, g->nprow);
      int64_t nloc = tsr_numroc(a->n, a->nb, pcol, 0, g->npcol);
      int count = (int)(mloc * nloc);
      if (r == root) {
        if (st == TSR_OK) tsr__pack_block(a, prow, pcol, host, layout, ld, local, a->lld, scatter);
        continue;
      }
      /* Messages flow even after a local failure, so no rank waits forever; the data is
         then discarded by the agreement below. */
      int rc;
      if (scatter) {
        if (st == TSR_OK) tsr__pack_block(a, prow, pcol, host, layout, ld, tmp, mloc, true);
        rc = MPI_Send(tmp ? tmp : host, tmp ? count : 0, type, r, 0, g->comm);
      } else {
        rc = MPI_Recv(tmp ? tmp : host, tmp ? count : 0, type, r, 0, g->comm, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && st == TSR_OK && tmp)
          tsr__pack_block(a, prow, pcol, host, layout, ld, tmp, mloc, false);
      }
      if (rc != MPI_SUCCESS && st == TSR_OK)
        st = tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Send/Recv");
    }
    tsr__host_free(tmp);
  } else {
    /* Local storage has lld = mloc whenever mloc > 0, so the block travels as it is stored. */
    int count = (int)(a->mloc * a->nloc);
    int rc;
    if (scatter) {
      char dummy;
      int got = 0;
      MPI_Status status;
      rc = MPI_Recv(local ? local : &dummy, local ? count : 0, type, root, 0, g->comm, &status);
      if (rc == MPI_SUCCESS) MPI_Get_count(&status, type, &got);
      if (rc == MPI_SUCCESS && got != count && st == TSR_OK)
        st = tsr__set_error(TSR_ERR_MPI, __func__, "received %d of %d elements", got, count);
    } else {
      rc = MPI_Send(local, local ? count : 0, type, root, 0, g->comm);
    }
    if (rc != MPI_SUCCESS && st == TSR_OK)
      st = tsr__mpi_error(__func__, TSR_ERR_MPI, rc, "MPI_Send/Recv");
  }
  if (local) {
    tsr_status st2 = tsr__dm_host_done(a, local, staged, scatter && st == TSR_OK);
    if (st == TSR_OK) st = st2;
  }
  return tsr__dist_agree(g->comm, st);
}

tsr_status tsr_dmatrix_scatter(tsr_dmatrix *a, int root, const void *host, tsr_layout layout,
                               int64_t ld) {
  TSR_API_ENTRY();
  if (!a) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "matrix is NULL");
  return tsr__scatter_gather(a, root, (char *)(uintptr_t)host, layout, ld, true);
}

tsr_status tsr_dmatrix_gather(const tsr_dmatrix *a, int root, void *host, tsr_layout layout,
                              int64_t ld) {
  TSR_API_ENTRY();
  if (!a) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "matrix is NULL");
  return tsr__scatter_gather(a, root, host, layout, ld, false);
}

/* ---------------------------------------------------------------- fills --------------- */

/* Fills the local block with the user's element function (on the host; staged for a GPU). */
static tsr_status tsr__fill_local(tsr_dmatrix *a, tsr_dmatrix_element_fn f, void *ctx) {
  const tsr_grid *g = a->grid;
  void *host = NULL;
  bool staged = false;
  TSR_CALL(tsr__dm_host_get(a, false, &host, &staged));
  int64_t mloc = a->mloc, nloc = a->nloc, lld = a->lld;
  for (int64_t lj = 0; lj < nloc; lj++) {
    int64_t j = tsr__bc_l2g(lj, a->nb, g->mycol, g->npcol);
    for (int64_t li = 0; li < mloc; li++) {
      int64_t i = tsr__bc_l2g(li, a->mb, g->myrow, g->nprow);
      /* The user's function may call Tessera: its errors name its own calls. */
      TSR_API_SUSPEND();
      double v = f(i, j, ctx);
      TSR_API_RESUME();
      const size_t e = (size_t)(li + lj * lld);
      if (a->dtype == TSR_F32) {
        ((float *)host)[e] = (float)v;
      } else if (a->dtype == TSR_F64) {
        ((double *)host)[e] = v;
      } else if (a->dtype == TSR_C64) { /* complex: the value is the real part */
        ((float *)host)[2 * e] = (float)v;
        ((float *)host)[2 * e + 1] = 0.0f;
      } else {
        ((double *)host)[2 * e] = v;
        ((double *)host)[2 * e + 1] = 0.0;
      }
    }
  }
  return tsr__dm_host_done(a, host, staged, true);
}

/* The complex random matrix on the CPU: element (i, j) of index e = i n + j takes the uniform
   Philox values 2 e (real part) and 2 e + 1 (imaginary part) in [low, high), those of the
   interleaved real 2 m n sequence (the GPU backend's block-cyclic kernel gives the same). */
static tsr_status tsr__fill_random_complex(tsr_dmatrix *a, uint64_t seed, double low, double high) {
  const tsr_grid *g = a->grid;
  void *host = NULL;
  bool staged = false;
  TSR_CALL(tsr__dm_host_get(a, false, &host, &staged));
  for (int64_t lj = 0; lj < a->nloc; lj++) {
    const int64_t j = tsr__bc_l2g(lj, a->nb, g->mycol, g->npcol);
    for (int64_t li = 0; li < a->mloc; li++) {
      const int64_t i = tsr__bc_l2g(li, a->mb, g->myrow, g->nprow);
      const uint64_t e = (uint64_t)(i * a->n + j);
      const size_t h = 2 * (size_t)(li + lj * a->lld);
      if (a->dtype == TSR_C64) {
        ((float *)host)[h] = tsr__philox_f32(seed, 2 * e, TSR__PHILOX_UNIFORM, low, high);
        ((float *)host)[h + 1] = tsr__philox_f32(seed, 2 * e + 1, TSR__PHILOX_UNIFORM, low, high);
      } else {
        ((double *)host)[h] = tsr__philox_f64(seed, 2 * e, TSR__PHILOX_UNIFORM, low, high);
        ((double *)host)[h + 1] = tsr__philox_f64(seed, 2 * e + 1, TSR__PHILOX_UNIFORM, low, high);
      }
    }
  }
  return tsr__dm_host_done(a, host, staged, true);
}

tsr_status tsr_dmatrix_fill_random(tsr_dmatrix *a, uint64_t seed, double low, double high) {
  TSR_API_ENTRY();
  if (!a) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "matrix is NULL");
  tsr_status st = TSR_OK;
  if (!isfinite(low) || !isfinite(high) || !(low < high))
    st = tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "need finite low < high, got [%g, %g)",
                        low, high);
  /* Generated where the local block lives (a GPU kernel, or the CPU's batched Philox). */
  const tsr_grid *g = a->grid;
  const tsr__bc_block l = {a->m,     a->n,     a->mb,   a->nb,   g->myrow, g->mycol,
                           g->nprow, g->npcol, a->mloc, a->nloc, a->lld};
  if (st == TSR_OK && tsr__dtype_is_complex(a->dtype) && a->device.kind == TSR_DEVICE_CPU)
    st = tsr__fill_random_complex(a, seed, low, high); /* GPUs: their block-cyclic kernel */
  else if (st == TSR_OK)
    st = tsr__dev_rng_block_cyclic(a->storage, &l, seed, low, high);
  return tsr__dist_agree(a->grid->comm, st);
}

tsr_status tsr_dmatrix_fill_fn(tsr_dmatrix *a, tsr_dmatrix_element_fn f, void *ctx) {
  TSR_API_ENTRY();
  if (!a) return tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "matrix is NULL");
  tsr_status st = f ? tsr__fill_local(a, f, ctx)
                    : tsr__set_error(TSR_ERR_NULL_POINTER, __func__, "function is NULL");
  return tsr__dist_agree(a->grid->comm, st);
}

/* ---------------------------------------------------------------- transpose ----------- */

/* The layout of a's local array `host` for the block-cyclic exchange, on a prow x pcol grid. */
tsr__bc_matrix tsr__dm_layout(const tsr_dmatrix *a, void *host, int prow, int pcol) {
  tsr__bc_matrix l;
  l.row = (tsr__bc_dim){0, a->mb, a->mb, 0, prow};
  l.col = (tsr__bc_dim){0, a->nb, a->nb, 0, pcol};
  l.data = host;
  l.lld = a->lld;
  l.storage = NULL;
  l.device = TSR_CPU;
  return l;
}

tsr__bc_matrix tsr__dm_layout_local(const tsr_dmatrix *a, int prow, int pcol) {
  const bool gpu = a->device.kind != TSR_DEVICE_CPU;
  tsr__bc_matrix l = tsr__dm_layout(a, gpu ? NULL : tsr__array_ptr(a->storage), prow, pcol);
  l.storage = gpu ? a->storage : NULL;
  l.device = a->device;
  return l;
}

/* At(i, p) = A(p, i) (conj(A(p, i)) when conj) through the one block-cyclic exchange
   (tsr__bc_redistribute, as p?gemr2d), device-resident for device matrices. */
tsr_status tsr__dm_transpose(const tsr_dmatrix *a, bool conj, tsr_dmatrix **out, uint64_t *sent,
                             uint64_t *received) {
  tsr_grid *g = a->grid;
  tsr_dmatrix *t = NULL;
  uint64_t s0 = 0, r0 = 0;
  tsr_status st = tsr__dm_create(g, a->n, a->m, a->nb, a->mb, a->dtype, a->device, &t);
  st = tsr__dist_agree(g->comm, st);
  if (st == TSR_OK) {
    const tsr__bc_matrix sl = tsr__dm_layout_local(a, g->nprow, g->npcol);
    const tsr__bc_matrix dl = tsr__dm_layout_local(t, g->nprow, g->npcol);
    st = tsr__bc_redistribute_ex(g, a->dtype, t->m, t->n, &sl, NULL, true, &dl, NULL,
                                 conj ? TSR__BC_CONJ : 0u, &s0, &r0);
  }
  if (sent) *sent += s0;
  if (received) *received += r0;
  if (st != TSR_OK) {
    tsr_dmatrix_free(t);
    t = NULL;
  }
  *out = t;
  return st;
}
