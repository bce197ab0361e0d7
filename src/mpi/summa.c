/*
 * SUMMA (van de Geijn & Watts, "SUMMA: Scalable Universal Matrix Multiplication Algorithm",
 * Concurrency: Practice and Experience 9(4), 1997) over the 2D block-cyclic layout, with the
 * broadcasts of panel k+1 in flight (MPI_Ibcast, two buffers per operand) while panel k is
 * multiplied by tsr_gemm on the rank's device.
 *
 * On a GPU (the matrices' device), panels travel one of two ways:
 *  - device to device when MPI is GPU-aware (tsr_dist_gpu_aware): A's panel is contiguous in
 *    the column-major local block and is broadcast in place; B's panel (strided rows) is first
 *    packed on the GPU into the slot's buffer (tsr_assign of a strided view), since most
 *    GPU-aware MPIs send a strided MPI_Type_vector from device memory element by element;
 *  - staged through the host otherwise: the roots broadcast from a host mirror of their
 *    local blocks, the others receive into page-locked (pinned) host buffers and copy them to
 *    the device (tsr__gpu_pinned_alloc: pageable memory would be copied twice by the driver).
 * Waiting for the device never blocks MPI: an event is recorded on the device's stream and
 * polled (tsr__gpu_event_query) with MPI_Testall on the next panel's broadcasts in between,
 * since Open MPI progresses non-blocking collectives only inside MPI calls.
 * TSR_DIST_GPU_STAGING=1 forces the staged path, =0 the device-to-device path (for MPI
 * libraries that are GPU-aware without reporting it through MPIX_Query_cuda_support, and for
 * the host emulator of tests/gpu_emu); unset: as tsr_dist_gpu_aware() says.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/philox.h"
#include "mpi/mpi_internal.h"
#if TSR_HAVE_CUDA || TSR_HAVE_HIP
#include "gpu/gpu.h"
#endif

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

/* Open MPI progresses a non-blocking broadcast only inside MPI calls, so the local multiply
   runs in column chunks of at least this many flops with an MPI_Testall between them. Each
   chunk packs the A panel again, so chunks must not be small: measured on the 2-core Zen 5 VM,
   n = 4096, NB = 256, f64 (local multiply 2048 x 2048 x 256 a panel), medians of 3 runs of
   tessera-gemm: chunks of 512 columns (0.5 GFLOP) 191 / 170 GFLOP/s on P = 2 / 4, of 2048
   (2.1 GFLOP, one chunk) 186-200 / 178-180. TSR_SUMMA_CHUNK_FLOPS overrides it. */
#define TSR__SUMMA_CHUNK_FLOPS 2e9

static double summa_chunk_flops(void) {
  const char *v = getenv("TSR_SUMMA_CHUNK_FLOPS");
  char *end = NULL;
  const double f = v ? strtod(v, &end) : 0;
  return v && end != v && *end == '\0' && f >= 1 ? f : TSR__SUMMA_CHUNK_FLOPS;
}

int tsr_dist_gpu_aware(void) {
#if TSR_HAVE_CUDA && defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() ? 1 : 0;
#elif TSR_HAVE_HIP && defined(MPIX_ROCM_AWARE_SUPPORT) && MPIX_ROCM_AWARE_SUPPORT
  return MPIX_Query_rocm_support() ? 1 : 0;
#else
  return 0;
#endif
}

/* Whether GPU panels travel through the host (see the top; TSR_DIST_GPU_STAGING overrides). */
static bool summa_gpu_staging(void) {
  const char *v = getenv("TSR_DIST_GPU_STAGING");
  if (v && strcmp(v, "1") == 0) return true;
  if (v && strcmp(v, "0") == 0) return false;
  return !tsr_dist_gpu_aware();
}

/* One of the two panel slots: device buffers for the received panels, host buffers when the
   panels travel through the host, and the two broadcast requests. */
typedef struct summa_slot {
  tsr_array *a_dev, *b_dev;
  void *a_host, *b_host;
  MPI_Request req[2];
} summa_slot;

typedef struct summa {
  const char *fn;
  const tsr_dmatrix *a, *b;
  tsr_dmatrix *c;
  const tsr_grid *g;
  int64_t k, kb, panels;
  size_t es;
  MPI_Datatype type;
  bool gpu, staging;
  bool pinned;               /* the slots' host buffers come from tsr__gpu_pinned_alloc */
  void *event;               /* GPU event polled by summa_device_wait (NULL on the CPU) */
  const char *a_src, *b_src; /* A's and B's local storage as MPI sees it */
  void *a_mirror, *b_mirror; /* host copies of A's and B's storage when staging */
  summa_slot slot[2];
  tsr_dist_stats *stats;
  double chunk_flops; /* least flops of a local-multiply chunk on the CPU */
} summa;

static int64_t panel_width(const summa *s, int64_t kk) {
  int64_t left = s->k - kk * s->kb;
  return left < s->kb ? left : s->kb;
}

/* Waits until the work queued so far on the matrices' GPU is done, testing `pending` (two
   requests, may be NULL) between polls so that their broadcasts progress. On the CPU there
   is nothing queued. */
static tsr_status summa_device_wait(summa *s, MPI_Request *pending) {
  if (!s->gpu) return TSR_OK;
#if TSR_HAVE_CUDA || TSR_HAVE_HIP
  TSR_CALL(tsr__gpu_event_record(s->c->device, s->event));
  for (;;) {
    int done = 0;
    TSR_CALL(tsr__gpu_event_query(s->event, &done));
    if (done) return TSR_OK;
    if (pending) {
      int flag = 0;
      MPI_Testall(2, pending, &flag, MPI_STATUSES_IGNORE);
    }
  }
#else
  (void)pending;
  return tsr_device_synchronize(s->c->device);
#endif
}

/* Packs B's panel kk (w strided rows of the local block) into the slot's device buffer as a
   w x nloc column-major matrix (leading dimension w) and waits for it, progressing `pending`. */
static tsr_status summa_pack_b(summa *s, int64_t kk, summa_slot *slot, MPI_Request *pending) {
  const tsr_grid *g = s->g;
  int64_t w = panel_width(s, kk), nloc = s->c->nloc;
  if (nloc == 0 || w == 0) return TSR_OK;
  int64_t shape[2] = {w, nloc}, src_str[2] = {1, s->b->lld}, dst_str[2] = {1, w};
  tsr_array *src = NULL, *dst = NULL;
  tsr_status st =
      tsr__array_new_view(s->b->storage, 2, shape, src_str, (kk / g->nprow) * s->kb, &src);
  if (st == TSR_OK) st = tsr__array_new_view(slot->b_dev, 2, shape, dst_str, 0, &dst);
  if (st == TSR_OK) st = tsr_assign(dst, src);
  tsr_array_release(src);
  tsr_array_release(dst);
  if (st == TSR_OK) st = summa_device_wait(s, pending);
  return st;
}

/* Starts the broadcasts of panel kk into slot sl. */
static tsr_status summa_post(summa *s, int64_t kk, int sl) {
  const tsr_grid *g = s->g;
  summa_slot *slot = &s->slot[sl];
  int64_t w = panel_width(s, kk);
  int root_a = (int)(kk % g->npcol), root_b = (int)(kk % g->nprow);
  int64_t mloc = s->c->mloc, nloc = s->c->nloc;
  int cnt_a = (int)(mloc * w), cnt_b = (int)(w * nloc);
  int rc;
  /* A's panel: w whole local columns, contiguous in the column-major local block. */
  if (g->mycol == root_a) {
    const char *p = s->a_src + (size_t)((kk / g->npcol) * s->kb * s->a->lld) * s->es;
    rc = MPI_Ibcast((void *)(uintptr_t)p, cnt_a, s->type, root_a, g->row_comm, &slot->req[0]);
    s->stats->bytes_sent += (uint64_t)cnt_a * s->es * (uint64_t)(g->npcol - 1);
  } else {
    void *p = s->staging ? slot->a_host : tsr__array_ptr(slot->a_dev);
    rc = MPI_Ibcast(p, cnt_a, s->type, root_a, g->row_comm, &slot->req[0]);
    s->stats->bytes_received += (uint64_t)cnt_a * s->es;
  }
  if (rc != MPI_SUCCESS) {
    slot->req[0] = MPI_REQUEST_NULL;
    return tsr__mpi_error(s->fn, TSR_ERR_MPI, rc, "MPI_Ibcast (A panel)");
  }
  /* B's panel: w rows of every local column, strided in the local block; the root sends them
     with a vector type (from host memory), or packs them on the GPU first (device to device),
     and the others receive them packed (w x nloc, leading dimension w). */
  tsr_status pack_st = TSR_OK;
  if (g->myrow == root_b && s->gpu && !s->staging) {
    /* After a failed pack the (stale) buffer is still sent, so that every rank's broadcast
       matches; the failure is agreed at the end. */
    pack_st = summa_pack_b(s, kk, slot, slot->req);
    rc =
        MPI_Ibcast(tsr__array_ptr(slot->b_dev), cnt_b, s->type, root_b, g->col_comm, &slot->req[1]);
    s->stats->bytes_sent += (uint64_t)cnt_b * s->es * (uint64_t)(g->nprow - 1);
  } else if (g->myrow == root_b) {
    const char *p = s->b_src + (size_t)((kk / g->nprow) * s->kb) * s->es;
#ifdef TSR_SMPI_MODEL
    /* Modeled run (bench/scale): the same bytes from the root's unused contiguous slot, sparing
       the simulator SMPI's packing of the vector type for every destination. */
    (void)p;
    rc =
        MPI_Ibcast(tsr__array_ptr(slot->b_dev), cnt_b, s->type, root_b, g->col_comm, &slot->req[1]);
#else
    MPI_Datatype vec;
    rc = MPI_Type_vector((int)nloc, (int)w, (int)s->b->lld, s->type, &vec);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&vec);
    if (rc == MPI_SUCCESS) {
      rc = MPI_Ibcast((void *)(uintptr_t)p, nloc > 0 ? 1 : 0, vec, root_b, g->col_comm,
                      &slot->req[1]);
      MPI_Type_free(&vec); /* freeing is allowed while the operation is pending */
    }
#endif
    s->stats->bytes_sent += (uint64_t)cnt_b * s->es * (uint64_t)(g->nprow - 1);
  } else {
    void *p = s->staging ? slot->b_host : tsr__array_ptr(slot->b_dev);
    rc = MPI_Ibcast(p, cnt_b, s->type, root_b, g->col_comm, &slot->req[1]);
    s->stats->bytes_received += (uint64_t)cnt_b * s->es;
  }
  if (rc != MPI_SUCCESS) {
    slot->req[1] = MPI_REQUEST_NULL;
    return tsr__mpi_error(s->fn, TSR_ERR_MPI, rc, "MPI_Ibcast (B panel)");
  }
  return pack_st;
}

/* Multiplies panel kk (slot sl, broadcasts complete): C += alpha * Apanel * Bpanel, or
   C = alpha * Apanel * Bpanel + beta * C for the first panel. `pending` are the requests of
   the next panel, tested between column chunks to progress them. */
static tsr_status summa_multiply(summa *s, int64_t kk, int sl, double alpha, double beta,
                                 tsr_gemm_path path, MPI_Request *pending) {
  const tsr_grid *g = s->g;
  summa_slot *slot = &s->slot[sl];
  int64_t w = panel_width(s, kk);
  int64_t mloc = s->c->mloc, nloc = s->c->nloc;
  bool own_a = g->mycol == (int)(kk % g->npcol), own_b = g->myrow == (int)(kk % g->nprow);
  tsr_status st = TSR_OK;
  if (s->staging && !own_a)
    st = tsr__copy_h2d(s->fn, slot->a_dev, 0, slot->a_host, (size_t)(mloc * w) * s->es);
  if (st == TSR_OK && s->staging && !own_b)
    st = tsr__copy_h2d(s->fn, slot->b_dev, 0, slot->b_host, (size_t)(w * nloc) * s->es);
  if (st != TSR_OK) return st;

  int64_t lda = s->a->lld;
  int64_t ldb = own_b ? s->b->lld : (w > 1 ? w : 1);
  const tsr_array *abase = own_a ? s->a->storage : slot->a_dev;
  const tsr_array *bbase = own_b ? s->b->storage : slot->b_dev;
  int64_t aoff = own_a ? (kk / g->npcol) * s->kb * lda : 0;
  int64_t boff = own_b ? (kk / g->nprow) * s->kb : 0;
  int64_t chunk = nloc > 0 ? nloc : 1;
  if (!s->gpu && pending && mloc > 0 && w > 0) {
    /* At least s->chunk_flops a chunk, in multiples of 256 columns. */
    const double want = s->chunk_flops / (2.0 * (double)mloc * (double)w);
    if (want < (double)chunk) {
      const int64_t c = ((int64_t)ceil(want) + 255) / 256 * 256;
      chunk = c < 256 ? 256 : c < chunk ? c : chunk;
    }
  }
  for (int64_t j0 = 0; j0 < nloc || (j0 == 0 && nloc == 0); j0 += chunk) {
    int64_t nj = nloc - j0 < chunk ? nloc - j0 : chunk;
    tsr_array *av = NULL, *bv = NULL, *cv = NULL;
    int64_t ashape[2] = {mloc, w}, astr[2] = {1, lda};
    int64_t bshape[2] = {w, nj}, bstr[2] = {1, ldb};
    int64_t cshape[2] = {mloc, nj}, cstr[2] = {1, s->c->lld};
    st = tsr__array_new_view(abase, 2, ashape, astr, aoff, &av);
    if (st == TSR_OK) st = tsr__array_new_view(bbase, 2, bshape, bstr, boff + j0 * ldb, &bv);
    if (st == TSR_OK) st = tsr__array_new_view(s->c->storage, 2, cshape, cstr, j0 * s->c->lld, &cv);
    /* tsr__dist_local_gemm: tsr_gemm_ex, or its modeled cost under SMPI (smpi_model.c). */
    if (st == TSR_OK) st = tsr__dist_local_gemm(alpha, av, bv, beta, cv, path);
    tsr_array_release(av);
    tsr_array_release(bv);
    tsr_array_release(cv);
    if (st != TSR_OK) return st;
    if (pending) {
      int done = 0;
      MPI_Testall(2, pending, &done, MPI_STATUSES_IGNORE);
    }
    if (nloc == 0) break;
  }
  return TSR_OK;
}

/* A host buffer for received panels: pinned when the matrices are on a GPU (the H2D copies
   then run at full speed, without the driver's bounce buffer), else ordinary. */
static tsr_status summa_host_alloc(summa *s, size_t bytes, void **out) {
#if TSR_HAVE_CUDA || TSR_HAVE_HIP
  if (s->gpu) {
    s->pinned = true;
    return tsr__gpu_pinned_alloc(bytes, out);
  }
#else
  (void)s;
#endif
  return tsr__host_alloc(bytes, out);
}

static void summa_host_free(summa *s, void *p) {
#if TSR_HAVE_CUDA || TSR_HAVE_HIP
  if (s->pinned) {
    tsr__gpu_pinned_free(p);
    return;
  }
#else
  (void)s;
#endif
  tsr__host_free(p);
}

static tsr_status summa_run(summa *s, double alpha, double beta, tsr_gemm_path path,
                            const tsr_dist_gemm_options *opt) {
  const tsr_grid *g = s->g;
  tsr_device dev = s->c->device;
  int64_t mloc = s->c->mloc, nloc = s->c->nloc;
  tsr_status st = TSR_OK;

  if (s->panels == 0) {
    /* k = 0: C = beta * C, through tsr_gemm with empty operands. */
    tsr_array *av = NULL, *bv = NULL, *cv = NULL;
    int64_t ashape[2] = {mloc, 0}, astr[2] = {1, 1}, bshape[2] = {0, nloc}, bstr[2] = {1, 1};
    st = tsr__array_new_view(s->a->storage, 2, ashape, astr, 0, &av);
    if (st == TSR_OK) st = tsr__array_new_view(s->b->storage, 2, bshape, bstr, 0, &bv);
    if (st == TSR_OK) st = tsr_dmatrix_local(s->c, &cv);
    if (st == TSR_OK) st = tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, alpha, av, bv, beta, cv, path);
    tsr_array_release(av);
    tsr_array_release(bv);
    tsr_array_release(cv);
    return st;
  }

  /* Buffers (allocation failures are agreed on before any broadcast starts). */
  int64_t asz = s->c->lld * s->kb, bsz = s->kb * (nloc > 0 ? nloc : 1);
  for (int i = 0; i < 2 && st == TSR_OK; i++) {
    int64_t sa[1] = {asz}, sb[1] = {bsz};
    st = tsr_empty(1, sa, s->c->dtype, dev, &s->slot[i].a_dev);
    if (st == TSR_OK) st = tsr_empty(1, sb, s->c->dtype, dev, &s->slot[i].b_dev);
    if (st == TSR_OK && s->staging)
      st = summa_host_alloc(s, (size_t)asz * s->es, &s->slot[i].a_host);
    if (st == TSR_OK && s->staging)
      st = summa_host_alloc(s, (size_t)bsz * s->es, &s->slot[i].b_host);
  }
#if TSR_HAVE_CUDA || TSR_HAVE_HIP
  if (st == TSR_OK && s->gpu) st = tsr__gpu_event_create(dev, &s->event);
#endif
  if (st == TSR_OK) {
    if (s->staging) {
      bool staged;
      st = tsr__dm_host_get(s->fn, s->a, true, &s->a_mirror, &staged);
      if (st == TSR_OK) st = tsr__dm_host_get(s->fn, s->b, true, &s->b_mirror, &staged);
      s->a_src = s->a_mirror;
      s->b_src = s->b_mirror;
    } else {
      s->a_src = tsr__array_ptr(s->a->storage);
      s->b_src = tsr__array_ptr(s->b->storage);
    }
  }
  TSR_CALL(tsr__dist_agree(s->fn, g->comm, st));

  /* From here every rank makes every broadcast, even after a local failure (it then only
     skips its multiplies), so no rank waits forever; the outcome is agreed at the end. */
  for (int i = 0; i < 2; i++)
    s->slot[i].req[0] = s->slot[i].req[1] = MPI_REQUEST_NULL;
  if (s->gpu) st = summa_device_wait(s, NULL); /* A and B complete before MPI reads them */
  tsr_status pst = summa_post(s, 0, 0);
  if (st == TSR_OK) st = pst;
  for (int64_t kk = 0; kk < s->panels; kk++) {
    int sl = (int)(kk & 1);
    bool next = kk + 1 < s->panels;
    if (next) {
      /* The other slot was read by the multiply of panel kk-1: it must be done first (the
         wait progresses panel kk's broadcasts). */
      if (s->gpu) {
        tsr_status s2 = summa_device_wait(s, s->slot[sl].req);
        if (st == TSR_OK) st = s2;
      }
      pst = summa_post(s, kk + 1, 1 - sl);
      if (st == TSR_OK) st = pst;
    }
    double t0 = MPI_Wtime();
    int rc = MPI_Waitall(2, s->slot[sl].req, MPI_STATUSES_IGNORE);
    double t1 = MPI_Wtime();
    s->stats->comm_seconds += t1 - t0;
    if (rc != MPI_SUCCESS && st == TSR_OK)
      st = tsr__mpi_error(s->fn, TSR_ERR_MPI, rc, "MPI_Waitall");
    if (st == TSR_OK)
      st = summa_multiply(s, kk, sl, alpha, kk == 0 ? beta : 1.0, path,
                          next ? s->slot[1 - sl].req : NULL);
    s->stats->compute_seconds += MPI_Wtime() - t1;
    if (opt && opt->progress) {
      TSR_API_SUSPEND(); /* the user's function: its Tessera calls are named after themselves */
      opt->progress(kk + 1, s->panels, opt->progress_ctx);
      TSR_API_RESUME();
    }
  }
  if (s->gpu) {
    double t0 = MPI_Wtime();
    tsr_status s2 = tsr_device_synchronize(dev);
    s->stats->compute_seconds += MPI_Wtime() - t0;
    if (st == TSR_OK) st = s2;
  }
  return st;
}

static void summa_free(summa *s) {
  for (int i = 0; i < 2; i++) {
    tsr_array_release(s->slot[i].a_dev);
    tsr_array_release(s->slot[i].b_dev);
    summa_host_free(s, s->slot[i].a_host);
    summa_host_free(s, s->slot[i].b_host);
  }
#if TSR_HAVE_CUDA || TSR_HAVE_HIP
  tsr__gpu_event_destroy(s->event);
#endif
  if (s->a_mirror) tsr__host_free(s->a_mirror);
  if (s->b_mirror) tsr__host_free(s->b_mirror);
}

/* Checks shared by tsr_dist_gemm_ex, tsr_dist_gemm_verify and the 2.5D schedule (local;
   callers agree). */
tsr_status tsr__dist_gemm_check(const char *fn, tsr_trans ta, tsr_trans tb, const tsr_dmatrix *a,
                                const tsr_dmatrix *b, const tsr_dmatrix *c) {
  if ((ta != TSR_NO_TRANS && ta != TSR_TRANS) || (tb != TSR_NO_TRANS && tb != TSR_TRANS))
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, fn, "bad transpose values %d, %d", (int)ta,
                          (int)tb);
  if (a->grid != c->grid || b->grid != c->grid)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, fn, "A, B and C are not on the same grid");
  if (a->dtype != c->dtype || b->dtype != c->dtype)
    return tsr__set_error(TSR_ERR_DTYPE, fn, "dtypes differ: A %s, B %s, C %s",
                          tsr_dtype_name(a->dtype), tsr_dtype_name(b->dtype),
                          tsr_dtype_name(c->dtype));
  if (!tsr_device_equal(a->device, c->device) || !tsr_device_equal(b->device, c->device))
    return tsr__set_error(TSR_ERR_DEVICE_MISMATCH, fn,
                          "A, B and C of rank %d live on different devices", c->grid->rank);
  int64_t am = ta ? a->n : a->m, ak = ta ? a->m : a->n;
  int64_t bk = tb ? b->n : b->m, bn = tb ? b->m : b->n;
  if (am != c->m || bn != c->n || ak != bk)
    return tsr__set_error(
        TSR_ERR_SHAPE, fn, "%s: op(A) is %lldx%lld, op(B) is %lldx%lld, C is %lldx%lld",
        ak != bk ? "inner dimensions differ" : "C has the wrong shape", (long long)am,
        (long long)ak, (long long)bk, (long long)bn, (long long)c->m, (long long)c->n);
  int64_t a_mb = ta ? a->nb : a->mb, a_kb = ta ? a->mb : a->nb;
  int64_t b_kb = tb ? b->nb : b->mb, b_nb = tb ? b->mb : b->nb;
  if (a_mb != c->mb || b_nb != c->nb || a_kb != b_kb)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, fn,
                          "incompatible block sizes: op(A) has %lldx%lld blocks, op(B) "
                          "%lldx%lld, C %lldx%lld (need op(A) rows = C rows, op(B) columns = "
                          "C columns, op(A) columns = op(B) rows)",
                          (long long)a_mb, (long long)a_kb, (long long)b_kb, (long long)b_nb,
                          (long long)c->mb, (long long)c->nb);
  return TSR_OK;
}

tsr_status tsr_dist_gemm_ex(tsr_trans transa, tsr_trans transb, double alpha, const tsr_dmatrix *a,
                            const tsr_dmatrix *b, double beta, tsr_dmatrix *c,
                            const tsr_dist_gemm_options *options, tsr_dist_stats *stats) {
  TSR_API_ENTRY();
  const char *fn = __func__;
  if (!a || !b || !c)
    return tsr__set_error(TSR_ERR_NULL_POINTER, fn, "%s is NULL", !a ? "A" : !b ? "B" : "C");
  double t_start = MPI_Wtime();
  tsr_dist_stats local_stats;
  memset(&local_stats, 0, sizeof local_stats);
  tsr_status st = tsr__dist_gemm_check(fn, transa, transb, a, b, c);
  tsr_gemm_path path = TSR_GEMM_AUTO;
  if (st == TSR_OK && options) path = options->path;
  int64_t kdim = transa ? a->m : a->n;
  int64_t kb = transa ? a->mb : a->nb;
  if (st == TSR_OK && ((c->lld * kb > INT_MAX) || kb * c->nloc > INT_MAX))
    st = tsr__set_error(TSR_ERR_OVERFLOW, fn,
                        "panels of %lld x %lld / %lld x %lld elements "
                        "exceed MPI's INT_MAX counts",
                        (long long)c->mloc, (long long)kb, (long long)kb, (long long)c->nloc);
  /* 2.5D and auto (gemm25d.c) decide here, with the checks and the options agreed on. */
  if (options) {
    int replicas = 1;
    /* plan agrees on st: an error there is every rank's. */
    TSR_CALL(tsr__dist_gemm_plan(fn, st, transa, a, c, options, &replicas));
    if (replicas > 1)
      return tsr__dist_gemm_25d(fn, transa, transb, alpha, a, b, beta, c, replicas, options, stats);
  } else {
    TSR_CALL(tsr__dist_agree(fn, c->grid->comm, st));
  }

  /* Transposed operands are redistributed into their transpose first. */
  tsr_dmatrix *at = NULL, *bt = NULL;
  if (transa)
    st = tsr__dm_transpose(fn, a, &at, &local_stats.bytes_sent, &local_stats.bytes_received);
  if (st == TSR_OK && transb)
    st = tsr__dm_transpose(fn, b, &bt, &local_stats.bytes_sent, &local_stats.bytes_received);
  local_stats.comm_seconds += MPI_Wtime() - t_start;
  local_stats.bytes_redistributed = local_stats.bytes_received;
  st = tsr__dist_agree(fn, c->grid->comm, st);
  if (st == TSR_OK) {
    summa s;
    memset(&s, 0, sizeof s);
    s.fn = fn;
    s.a = at ? at : a;
    s.b = bt ? bt : b;
    s.c = c;
    s.g = c->grid;
    s.k = kdim;
    s.kb = kb;
    s.panels = (kdim + kb - 1) / kb;
    s.es = tsr__dtype_size(c->dtype);
    s.type = tsr__mpi_type(c->dtype);
    s.gpu = c->device.kind != TSR_DEVICE_CPU;
    s.staging = s.gpu && summa_gpu_staging();
    s.stats = &local_stats;
    s.chunk_flops = summa_chunk_flops();
    local_stats.panels = s.panels;
    local_stats.gpu_aware_mpi = s.gpu && !s.staging;
    st = summa_run(&s, alpha, beta, path, options);
    summa_free(&s);
    st = tsr__dist_agree(fn, c->grid->comm, st);
  }
  tsr_dmatrix_free(at);
  tsr_dmatrix_free(bt);
  local_stats.algorithm = TSR_DIST_GEMM_SUMMA;
  local_stats.replicas = 1;
  local_stats.total_seconds = MPI_Wtime() - t_start;
  if (stats) *stats = local_stats;
  return st;
}

tsr_status tsr_dist_gemm(tsr_trans transa, tsr_trans transb, double alpha, const tsr_dmatrix *a,
                         const tsr_dmatrix *b, double beta, tsr_dmatrix *c) {
  TSR_API_ENTRY();
  return tsr_dist_gemm_ex(transa, transb, alpha, a, b, beta, c, NULL, NULL);
}

/* ---------------------------------------------------------------- Freivalds ----------- */

/*
 * y1 = op(M) x1 and y2 = |op(M)| x2 (when x2 is not NULL), x replicated (length cols of
 * op(M)), y replicated (length rows of op(M)), in float64 from the local blocks, summed over
 * all ranks with one MPI_Allreduce.
 */
static tsr_status dist_matvec(const char *fn, const tsr_dmatrix *mat, bool trans, const double *x1,
                              const double *x2, double *y1, double *y2) {
  const tsr_grid *g = mat->grid;
  int64_t rows = trans ? mat->n : mat->m;
  void *host = NULL;
  bool staged = false;
  tsr_status st = tsr__dm_host_get(fn, mat, true, &host, &staged);
  double *part = calloc((size_t)(rows > 0 ? rows : 1) * 2, sizeof *part);
  if (!part && st == TSR_OK) st = tsr__set_error(TSR_ERR_OUT_OF_MEMORY, fn, "matvec vector");
  if (st == TSR_OK) {
    for (int64_t lj = 0; lj < mat->nloc; lj++) {
      int64_t j = tsr_indxl2g(lj, mat->nb, g->mycol, 0, g->npcol);
      for (int64_t li = 0; li < mat->mloc; li++) {
        int64_t i = tsr_indxl2g(li, mat->mb, g->myrow, 0, g->nprow);
        int64_t e = li + lj * mat->lld;
        double v =
            mat->dtype == TSR_F32 ? (double)((const float *)host)[e] : ((const double *)host)[e];
        int64_t r = trans ? j : i, col = trans ? i : j;
        part[r] += v * x1[col];
        if (x2) part[rows + r] += fabs(v) * x2[col];
      }
    }
  }
  if (host) tsr__dm_host_done(fn, mat, host, staged, false);
  st = tsr__dist_agree(fn, g->comm, st);
  if (st == TSR_OK) {
    double *sum = malloc((size_t)(rows > 0 ? rows : 1) * 2 * sizeof *sum);
    int rc = sum ? MPI_Allreduce(part, sum, (int)(2 * rows), MPI_DOUBLE, MPI_SUM, g->comm)
                 : MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) st = tsr__mpi_error(fn, TSR_ERR_MPI, rc, "MPI_Allreduce");
    if (st == TSR_OK) {
      memcpy(y1, sum, (size_t)rows * sizeof *y1);
      if (y2) memcpy(y2, sum + rows, (size_t)rows * sizeof *y2);
    }
    free(sum);
    st = tsr__dist_agree(fn, g->comm, st);
  }
  free(part);
  return st;
}

/* NaN/Inf elements of a matrix, summed over all ranks. Collective (agrees). */
static tsr_status dist_count_nonfinite(const char *fn, const tsr_dmatrix *mat, int64_t *count) {
  void *host = NULL;
  bool staged = false;
  int64_t local = 0;
  tsr_status st = tsr__dm_host_get(fn, mat, true, &host, &staged);
  if (st == TSR_OK)
    for (int64_t lj = 0; lj < mat->nloc; lj++)
      for (int64_t li = 0; li < mat->mloc; li++) {
        int64_t e = li + lj * mat->lld;
        double v =
            mat->dtype == TSR_F32 ? (double)((const float *)host)[e] : ((const double *)host)[e];
        local += !isfinite(v);
      }
  if (host) tsr__dm_host_done(fn, mat, host, staged, false);
  st = tsr__dist_agree(fn, mat->grid->comm, st);
  if (st != TSR_OK) return st;
  int rc = MPI_Allreduce(&local, count, 1, MPI_INT64_T, MPI_SUM, mat->grid->comm);
  return rc == MPI_SUCCESS ? TSR_OK : tsr__mpi_error(fn, TSR_ERR_MPI, rc, "MPI_Allreduce");
}

/*
 * The absolute part of the verification bound of one row, for results that underflow. The
 * relative bound (k + 3) eps |alpha| |op(A)| |op(B)| |x| (+ beta's terms) holds only while
 * every operation's result is normal. An operation whose result is below the dtype's smallest
 * normal number lam loses up to lam in absolute terms: < lam * eps with gradual underflow
 * (IEEE's default, which Tessera's kernels keep), < lam when the hardware flushes to zero
 * (FTZ/DAZ, e.g. a caller built with -ffast-math). One element of C takes k multiply-adds
 * (their losses scaled by |alpha| when alpha is applied after the sum, by 1 when it is folded
 * into an operand first: max(1, |alpha|) covers both), the alpha and beta multiplies and the
 * final addition: at most (k max(1, |alpha|) + 3) lam. Row i of C x then differs by at most
 * that times sum_j |x_j|, and the float64 products of the check itself (n + k along a row,
 * scaled likewise, and 3 more) add the same with lam = DBL_MIN. So results of f32 alpha = 1e-40 or inputs scaled by 1e-22
 * (subnormal or flushed) verify, while a product wrong by more than this allowance still fails.
 */
static double verify_underflow_allowance(tsr_dtype dtype, int64_t n, int64_t k, double alpha,
                                         const double *xa) {
  double lam = dtype == TSR_F32 ? (double)FLT_MIN : DBL_MIN, scale = fmax(1.0, fabs(alpha));
  double xsum = 0.0;
  for (int64_t j = 0; j < n; j++)
    xsum += xa[j];
  return (((double)k * scale + 3.0) * lam + ((double)(n + k) * scale + 3.0) * DBL_MIN) * xsum;
}

tsr_status tsr_dist_gemm_verify(tsr_trans transa, tsr_trans transb, double alpha,
                                const tsr_dmatrix *a, const tsr_dmatrix *b, double beta,
                                const tsr_dmatrix *c0, const tsr_dmatrix *c, uint64_t seed,
                                tsr_dist_verify_result *result) {
  TSR_API_ENTRY();
  static const char fn[] = "tsr_dist_gemm_verify";
  bool use_c0 = beta != 0.0;
  if (!a || !b || !c || !result || (use_c0 && !c0))
    return tsr__set_error(TSR_ERR_NULL_POINTER, fn, "%s is NULL",
                          !a        ? "A"
                          : !b      ? "B"
                          : !c      ? "C"
                          : !result ? "result"
                                    : "C0 (beta != 0)");
  tsr_status st = tsr__dist_gemm_check(fn, transa, transb, a, b, c);
  if (st == TSR_OK && use_c0 &&
      (c0->grid != c->grid || c0->dtype != c->dtype || c0->m != c->m || c0->n != c->n))
    st = tsr__set_error(TSR_ERR_SHAPE, fn, "C0 (%lldx%lld %s) does not match C (%lldx%lld %s)",
                        (long long)c0->m, (long long)c0->n, tsr_dtype_name(c0->dtype),
                        (long long)c->m, (long long)c->n, tsr_dtype_name(c->dtype));
  int64_t m = c->m, n = c->n, k = transa ? a->m : a->n;
  double *x = NULL, *xa = NULL, *y = NULL, *z = NULL, *za = NULL, *w = NULL, *s = NULL;
  double *ones = NULL, *t = NULL, *u = NULL, *ua = NULL;
  if (st == TSR_OK) {
    size_t big = (size_t)((m > n ? m : n) > k ? (m > n ? m : n) : k) + 1;
    x = malloc(big * sizeof *x);
    xa = malloc(big * sizeof *xa);
    ones = malloc(big * sizeof *ones);
    y = malloc(big * sizeof *y);
    w = malloc(big * sizeof *w);
    s = malloc(big * sizeof *s);
    t = malloc(big * sizeof *t);
    z = malloc(big * sizeof *z);
    za = malloc(big * sizeof *za);
    u = malloc(big * sizeof *u);
    ua = malloc(big * sizeof *ua);
    if (!x || !xa || !ones || !y || !w || !s || !t || !z || !za || !u || !ua)
      st = tsr__set_error(TSR_ERR_OUT_OF_MEMORY, fn, "vectors of %zu elements", big);
  }
  st = tsr__dist_agree(fn, c->grid->comm, st);
  memset(result, 0, sizeof *result);
  double eps = c->dtype == TSR_F32 ? (double)FLT_EPSILON / 2 : DBL_EPSILON / 2;
  result->tolerance = (double)(k + 3) * eps + 2.0 * (double)(k + n + 3) * (DBL_EPSILON / 2);
  int64_t bad_in = 0, bad_b = 0, bad_c0 = 0;
  if (st == TSR_OK) st = dist_count_nonfinite(fn, a, &bad_in);
  if (st == TSR_OK) st = dist_count_nonfinite(fn, b, &bad_b);
  if (st == TSR_OK && use_c0) st = dist_count_nonfinite(fn, c0, &bad_c0);
  result->nonfinite_inputs = bad_in + bad_b + bad_c0;
  if (st == TSR_OK && result->nonfinite_inputs > 0) {
    result->verdict = TSR_VERIFY_UNVERIFIED;
    result->rows_unverified = m;
  } else if (st == TSR_OK) {
    for (int64_t j = 0; j < n; j++) {
      x[j] = tsr__philox_f64(seed, (uint64_t)j, TSR__PHILOX_UNIFORM, -1.0, 1.0);
      xa[j] = fabs(x[j]);
      ones[j] = 1.0;
    }
    for (int64_t i = 0; i < k; i++)
      ones[i] = 1.0;
    st = dist_matvec(fn, c, false, x, NULL, y, NULL);
    if (st == TSR_OK) st = dist_matvec(fn, b, transb == TSR_TRANS, x, xa, z, za);
    if (st == TSR_OK) st = dist_matvec(fn, a, transa == TSR_TRANS, z, za, w, s);
    /* The magnitude bound t = |alpha| |op(A)| (|op(B)| 1) (+ |beta| |C0| 1): where it reaches
       the dtype's overflow threshold, Inf/NaN in C may be the correct IEEE result. */
    if (st == TSR_OK) st = dist_matvec(fn, b, transb == TSR_TRANS, ones, ones, u, ua);
    if (st == TSR_OK) st = dist_matvec(fn, a, transa == TSR_TRANS, ua, ua, u, t);
    for (int64_t i = 0; st == TSR_OK && i < m; i++) {
      w[i] *= alpha;
      s[i] *= fabs(alpha);
      t[i] *= fabs(alpha);
    }
    if (st == TSR_OK && use_c0) {
      st = dist_matvec(fn, c0, false, x, xa, u, ua);
      for (int64_t i = 0; st == TSR_OK && i < m; i++) {
        w[i] += beta * u[i];
        s[i] += fabs(beta) * ua[i];
      }
      if (st == TSR_OK) st = dist_matvec(fn, c0, false, ones, ones, u, ua);
      for (int64_t i = 0; st == TSR_OK && i < m; i++)
        t[i] += fabs(beta) * ua[i];
    }
  }
  if (st == TSR_OK && result->nonfinite_inputs == 0) {
    double big = (c->dtype == TSR_F32 ? (double)FLT_MAX : DBL_MAX) / (1.0 + result->tolerance);
    double worst = 0.0;
    bool failed = false;
    /* A row passes when diff <= tolerance * s + under; the residual is diff / (s + under /
       tolerance), so "residual <= tolerance" states the same. */
    double under = verify_underflow_allowance(c->dtype, n, k, alpha, xa) / result->tolerance;
    for (int64_t i = 0; i < m; i++) {
      if (!(t[i] < big)) { /* may overflow (t is Inf or NaN in float64 too): not checked */
        result->rows_unverified++;
        continue;
      }
      result->rows_checked++;
      double diff = fabs(y[i] - w[i]);
      double r = s[i] + under > 0.0 ? diff / (s[i] + under) : diff;
      if (!isfinite(r)) { /* NaN/Inf in a row of C that cannot overflow: a wrong product */
        failed = true;
        worst = INFINITY;
        continue;
      }
      if (r > worst) worst = r;
    }
    result->residual = worst;
    failed = failed || worst > result->tolerance;
    result->verdict = failed                        ? TSR_VERIFY_FAILED
                      : result->rows_unverified > 0 ? TSR_VERIFY_PARTIAL
                                                    : TSR_VERIFY_PASSED;
  }
  free(x);
  free(xa);
  free(ones);
  free(y);
  free(w);
  free(s);
  free(t);
  free(z);
  free(za);
  free(u);
  free(ua);
  return st;
}
