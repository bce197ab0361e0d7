/* The strided N-d loop of the CPU backend: axis collapsing and the OpenMP split. */
#include "omp/omp_internal.h"

int tsr__omp_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void tsr__omp_loop_init(tsr__omp_loop *lp, int ndim, const int64_t *shape, int nops,
                        const int64_t *const strides[], const size_t elsize[]) {
  lp->nops = nops;
  lp->size = 1;
  int nd = 0;
  for (int k = 0; k < nops; k++) lp->elsize[k] = elsize[k];
  for (int d = 0; d < ndim; d++) {
    lp->size *= shape[d];
    if (shape[d] == 1) continue; /* its stride never matters */
    bool merge = nd > 0;
    for (int k = 0; k < nops && merge; k++)
      merge = lp->strides[k][nd - 1] == shape[d] * strides[k][d];
    if (merge) {
      lp->shape[nd - 1] *= shape[d];
      for (int k = 0; k < nops; k++) lp->strides[k][nd - 1] = strides[k][d];
    } else {
      lp->shape[nd] = shape[d];
      for (int k = 0; k < nops; k++) lp->strides[k][nd] = strides[k][d];
      nd++;
    }
  }
  if (nd == 0) { /* a scalar, or all axes of size 1 */
    lp->shape[0] = 1;
    for (int k = 0; k < nops; k++) lp->strides[k][0] = 1;
    nd = 1;
  }
  lp->ndim = nd;
}

void tsr__omp_loop_offsets(const tsr__omp_loop *lp, int64_t flat, int64_t off[]) {
  for (int k = 0; k < lp->nops; k++) off[k] = 0;
  for (int d = lp->ndim - 1; d >= 0; d--) {
    int64_t i = flat % lp->shape[d];
    flat /= lp->shape[d];
    for (int k = 0; k < lp->nops; k++) off[k] += i * lp->strides[k][d];
  }
}

/* Elements [begin, end) in C order, one kernel call per run of the innermost axis. */
static void run_range(const tsr__omp_loop *lp, char *const base[], tsr__omp_kernel kernel,
                      const void *param, int64_t begin, int64_t end) {
  const int nd = lp->ndim, nops = lp->nops;
  const int64_t inner = lp->shape[nd - 1];
  int64_t idx[TSR_MAX_DIMS], s[TSR__OMP_MAX_OPS];
  char *p[TSR__OMP_MAX_OPS];
  for (int k = 0; k < nops; k++) s[k] = lp->strides[k][nd - 1];
  int64_t rest = begin;
  for (int d = nd - 1; d >= 0; d--) {
    idx[d] = rest % lp->shape[d];
    rest /= lp->shape[d];
  }
  for (int64_t pos = begin; pos < end;) {
    for (int k = 0; k < nops; k++) {
      int64_t off = 0;
      for (int d = 0; d < nd; d++) off += idx[d] * lp->strides[k][d];
      p[k] = base[k] + off * (int64_t)lp->elsize[k];
    }
    int64_t len = inner - idx[nd - 1];
    if (len > end - pos) len = end - pos;
    kernel(len, p, s, param);
    pos += len;
    idx[nd - 1] += len;
    for (int d = nd - 1; d > 0 && idx[d] == lp->shape[d]; d--) {
      idx[d] = 0;
      idx[d - 1]++;
    }
  }
}

#ifdef _OPENMP
/* Start of thread t's part of n elements split among nt threads, on a multiple of 16
   elements (a 64-byte line of f32) so that threads do not write the same cache line. */
static int64_t split_point(int64_t n, int nt, int t) {
  if (t >= nt) return n;
  int64_t b = (n / nt) * t + (t < n % nt ? t : n % nt);
  b = (b + 15) / 16 * 16;
  return b < n ? b : n;
}
#endif

void tsr__omp_loop_run(const tsr__omp_loop *lp, char *const base[], tsr__omp_kernel kernel,
                       const void *param, int64_t work) {
  if (lp->size == 0) return;
#ifdef _OPENMP
  if (work > TSR__OMP_PAR_THRESHOLD && lp->size > 1 && tsr__omp_threads() > 1) {
    TSR__OMP_PRAGMA(omp parallel) {
      int nt = omp_get_num_threads(), t = omp_get_thread_num();
      run_range(lp, base, kernel, param, split_point(lp->size, nt, t),
                split_point(lp->size, nt, t + 1));
    }
    return;
  }
#else
  (void)work;
#endif
  run_range(lp, base, kernel, param, 0, lp->size);
}
