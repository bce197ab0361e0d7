/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduction kernels for one dtype. Included by reduce.c once per dtype after defining its
 * parameters (the C-template convention, docs/conventions.md; this file #undefs them at its
 * end):
 *   TSR__RED_T    the element type
 *   TSR__RED_MT   the type of a mean (float for f32, else double)
 *   TSR__RED_INT  1 for integer dtypes (sums wrap in uint64_t; no NaN handling)
 *   TSR__RED_SFX  the dtype suffix of the generated names (f32, f64, i32, i64)
 * The body calls the types T and MT and its functions by the names below (aliases it #undefs
 * with the parameters): tsr__vsumd_SFX, tsr__vextreme_SFX, tsr__vargmax_SFX, tsr__rsumd_SFX,
 * tsr__rextreme_SFX, tsr__rargmax_SFX, tsr__vector_kernel_SFX, tsr__vector_split_SFX,
 * tsr__rows_block_SFX, tsr__reduce_SFX, and tsr__vsumu_SFX, tsr__rsumu_SFX for integer dtypes.
 *
 * Two shapes of work (see reduce.c): "vector" kernels reduce one strided run of n elements
 * (one output), "rows" kernels reduce L rows of nc contiguous columns into nc outputs at
 * once, so that a reduction along a non-innermost axis streams through memory row by row.
 */
#if !defined(TSR__RED_T) || !defined(TSR__RED_MT) || !defined(TSR__RED_INT) ||                     \
    !defined(TSR__RED_SFX)
#error                                                                                             \
    "define TSR__RED_T, TSR__RED_MT, TSR__RED_INT and TSR__RED_SFX before including reduce_impl.h"
#endif
#define T TSR__RED_T
#define MT TSR__RED_MT
#define VSUMD TSR__OMP_CAT(tsr__vsumd_, TSR__RED_SFX)
#define VSUMU TSR__OMP_CAT(tsr__vsumu_, TSR__RED_SFX)
#define VEXTREME TSR__OMP_CAT(tsr__vextreme_, TSR__RED_SFX)
#define VARGMAX TSR__OMP_CAT(tsr__vargmax_, TSR__RED_SFX)
#define RSUMD TSR__OMP_CAT(tsr__rsumd_, TSR__RED_SFX)
#define RSUMU TSR__OMP_CAT(tsr__rsumu_, TSR__RED_SFX)
#define REXTREME TSR__OMP_CAT(tsr__rextreme_, TSR__RED_SFX)
#define RARGMAX TSR__OMP_CAT(tsr__rargmax_, TSR__RED_SFX)
#define VECTOR_KERNEL TSR__OMP_CAT(tsr__vector_kernel_, TSR__RED_SFX)
#define VECTOR_SPLIT TSR__OMP_CAT(tsr__vector_split_, TSR__RED_SFX)
#define ROWS_BLOCK TSR__OMP_CAT(tsr__rows_block_, TSR__RED_SFX)
#define REDUCE TSR__OMP_CAT(tsr__reduce_, TSR__RED_SFX)

/* ---------------------------------------------------------------- vector kernels ----- */

/* Sum in double. The contiguous loop keeps 16 independent partial sums: the compiler
   vectorizes them without reassociating (a single accumulator would be limited by the
   latency of one addition per element), and prefetches ahead of the hardware prefetcher. */
static double VSUMD(const T *p, int64_t n, int64_t s) {
  double acc[16] = {0};
  int64_t i = 0;
  if (s == 1) {
    /* Blocks of 512 elements: prefetch the lines of the block 4 KiB ahead, then sum it in
       a loop the compiler vectorizes untouched. */
    for (; i + 512 <= n; i += 512) {
      const uintptr_t ahead = (uintptr_t)(p + i) + TSR__OMP_PREFETCH_BYTES;
      for (size_t line = 0; line < 512 * sizeof(T); line += 64)
        TSR__OMP_PREFETCH(ahead + line);
      for (int64_t j = i; j < i + 512; j += 16)
        for (int k = 0; k < 16; k++)
          acc[k] += (double)p[j + k];
    }
    for (; i + 16 <= n; i += 16)
      for (int k = 0; k < 16; k++)
        acc[k] += (double)p[i + k];
    for (; i < n; i++)
      acc[i & 15] += (double)p[i];
  } else {
    for (; i + 4 <= n; i += 4)
      for (int k = 0; k < 4; k++)
        acc[k] += (double)p[(i + k) * s];
    for (; i < n; i++)
      acc[0] += (double)p[i * s];
  }
  for (int w = 8; w > 0; w /= 2)
    for (int k = 0; k < w; k++)
      acc[k] += acc[k + w];
  return acc[0];
}

#if TSR__RED_INT
/* Integer sum modulo 2^64 (wraps as NumPy's does, without signed overflow). */
static uint64_t VSUMU(const T *p, int64_t n, int64_t s) {
  uint64_t acc = 0;
  if (s == 1) {
    for (int64_t i = 0; i < n; i++)
      acc += (uint64_t)(int64_t)p[i];
  } else {
    for (int64_t i = 0; i < n; i++)
      acc += (uint64_t)(int64_t)p[i * s];
  }
  return acc;
}
#endif

/* Maximum (max != 0) or minimum of n >= 1 elements; NaN if any element is NaN. The NaN test
   is kept apart from the comparison so that the contiguous loop vectorizes. */
static T VEXTREME(const T *p, int64_t n, int64_t s, int max) {
  T m = p[0];
  int nan = 0;
  if (s == 1 && max) {
    TSR__OMP_PRAGMA(omp simd reduction(max : m) reduction(| : nan))
    for (int64_t i = 0; i < n; i++) {
      m = p[i] > m ? p[i] : m;
#if !TSR__RED_INT
      nan |= p[i] != p[i];
#endif
    }
  } else if (s == 1) {
    TSR__OMP_PRAGMA(omp simd reduction(min : m) reduction(| : nan))
    for (int64_t i = 0; i < n; i++) {
      m = p[i] < m ? p[i] : m;
#if !TSR__RED_INT
      nan |= p[i] != p[i];
#endif
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      const T x = p[i * s];
      m = max ? (x > m ? x : m) : (x < m ? x : m);
#if !TSR__RED_INT
      nan |= x != x;
#endif
    }
  }
#if !TSR__RED_INT
  if (nan) return (T)NAN;
#endif
  (void)nan;
  return m;
}

/* Index of the first maximum of n >= 1 elements (the first NaN, if any: NumPy's rule);
   its value in *best. */
static int64_t VARGMAX(const T *p, int64_t n, int64_t s, T *best) {
  T b = p[0];
  int64_t bi = 0;
  for (int64_t i = 1; i < n; i++) {
    const T x = p[i * s];
#if TSR__RED_INT
    if (x > b) {
#else
    if (b != b) break; /* a NaN is final */
    if (x > b || x != x) {
#endif
      b = x;
      bi = i;
    }
  }
  *best = b;
  return bi;
}

/* ---------------------------------------------------------------- rows kernels ------- */

/* acc[j] += sum over rows of p[i*sr + j], j < nc. */
static void RSUMD(const T *p, int64_t L, int64_t sr, int nc, double *acc) {
  for (int64_t i = 0; i < L; i++) {
    const T *row = p + i * sr;
    TSR__OMP_PRAGMA(omp simd)
    for (int j = 0; j < nc; j++)
      acc[j] += (double)row[j];
  }
}

#if TSR__RED_INT
static void RSUMU(const T *p, int64_t L, int64_t sr, int nc, uint64_t *acc) {
  for (int64_t i = 0; i < L; i++) {
    const T *row = p + i * sr;
    TSR__OMP_PRAGMA(omp simd)
    for (int j = 0; j < nc; j++)
      acc[j] += (uint64_t)(int64_t)row[j];
  }
}
#endif

/* Column maxima (max != 0) or minima over L >= 1 rows, NaN-propagating. */
static void REXTREME(const T *p, int64_t L, int64_t sr, int nc, int max, T *best) {
  for (int j = 0; j < nc; j++)
    best[j] = p[j];
  for (int64_t i = 1; i < L; i++) {
    const T *row = p + i * sr;
    if (max) {
      TSR__OMP_PRAGMA(omp simd)
      for (int j = 0; j < nc; j++)
        best[j] = TSR__MAXIMUM(row[j], best[j]);
    } else {
      TSR__OMP_PRAGMA(omp simd)
      for (int j = 0; j < nc; j++)
        best[j] = TSR__MINIMUM(row[j], best[j]);
    }
  }
}

/* Column argmax over L >= 1 rows (first maximum; the first NaN wins). */
static void RARGMAX(const T *p, int64_t L, int64_t sr, int nc, T *best, int64_t *idx) {
  for (int j = 0; j < nc; j++) {
    best[j] = p[j];
    idx[j] = 0;
  }
  for (int64_t i = 1; i < L; i++) {
    const T *row = p + i * sr;
    for (int j = 0; j < nc; j++) {
      const T x = row[j], b = best[j];
#if TSR__RED_INT
      if (x > b) {
#else
      if (x > b || (x != x && b == b)) {
#endif
        best[j] = x;
        idx[j] = i;
      }
    }
  }
}

/* ---------------------------------------------------------------- drivers ------------ */

/* Case "vector": outputs n of the loop, each reducing its own run (tsr__omp_kernel). */
static void VECTOR_KERNEL(int64_t n, char *const p[], const int64_t s[], const void *param) {
  const tsr__omp_rplan *pl = (const tsr__omp_rplan *)param;
  const T *a = (const T *)p[1];
  const int64_t L = pl->L, sr = pl->sr, so = s[0], sa = s[1];
  switch (pl->op) {
  case TSR_SUM: {
    T *o = (T *)p[0];
    for (int64_t k = 0; k < n; k++)
#if TSR__RED_INT
      o[k * so] = (T)VSUMU(a + k * sa, L, sr);
#else
      o[k * so] = (T)VSUMD(a + k * sa, L, sr);
#endif
    break;
  }
  case TSR_MEAN: {
    MT *o = (MT *)p[0];
    for (int64_t k = 0; k < n; k++)
      o[k * so] = (MT)(VSUMD(a + k * sa, L, sr) / (double)L);
    break;
  }
  case TSR_MAX:
  case TSR_MIN: {
    T *o = (T *)p[0];
    for (int64_t k = 0; k < n; k++)
      o[k * so] = VEXTREME(a + k * sa, L, sr, pl->op == TSR_MAX);
    break;
  }
  case TSR_ARGMAX: {
    int64_t *o = (int64_t *)p[0];
    T best;
    for (int64_t k = 0; k < n; k++)
      o[k * so] = VARGMAX(a + k * sa, L, sr, &best);
    break;
  }
  }
}

/* One output whose run is long: the run is cut into parts that the threads take
   dynamically, and the partial results are combined in order (so argmax still finds the
   first maximum). The parts depend on L only, so the result does not depend on the number
   of threads. */
static void VECTOR_SPLIT(const tsr__omp_rplan *pl, char *out, const T *a) {
  double pd[TSR__OMP_MAX_PARTS];
  uint64_t pu[TSR__OMP_MAX_PARTS];
  T pv[TSR__OMP_MAX_PARTS];
  int64_t pi[TSR__OMP_MAX_PARTS];
  const int64_t L = pl->L, sr = pl->sr;
  int64_t parts = L / TSR__OMP_PART_MIN;
  if (parts < 1) parts = 1;
  if (parts > TSR__OMP_MAX_PARTS) parts = TSR__OMP_MAX_PARTS;
  TSR__OMP_PRAGMA(omp parallel for schedule(dynamic, 1))
  for (int64_t t = 0; t < parts; t++) {
    const int64_t begin = tsr__omp_split_point(L, (int)parts, (int)t);
    const int64_t end = tsr__omp_split_point(L, (int)parts, (int)t + 1);
    const T *x = a + begin * sr;
    const int64_t len = end - begin;
    pd[t] = 0;
    pu[t] = 0;
    pi[t] = -1; /* no elements */
    if (len > 0) {
      switch (pl->op) {
      case TSR_SUM:
      case TSR_MEAN:
#if TSR__RED_INT
        if (pl->op == TSR_SUM) {
          pu[t] = VSUMU(x, len, sr);
          break;
        }
#endif
        pd[t] = VSUMD(x, len, sr);
        break;
      case TSR_MAX:
      case TSR_MIN:
        pv[t] = VEXTREME(x, len, sr, pl->op == TSR_MAX);
        pi[t] = 0;
        break;
      case TSR_ARGMAX: pi[t] = begin + VARGMAX(x, len, sr, &pv[t]); break;
      }
    }
  }
  const int team = (int)parts;
  double sd = 0;
  uint64_t su = 0;
  T b = 0;
  int64_t bi = -1;
  for (int t = 0; t < team; t++) {
    sd += pd[t];
    su += pu[t];
    if (pi[t] < 0) continue;
    const T x = pv[t];
    if (bi < 0) {
      b = x;
      bi = pi[t];
      continue;
    }
    switch (pl->op) {
    case TSR_MAX: b = TSR__MAXIMUM(x, b); break;
    case TSR_MIN: b = TSR__MINIMUM(x, b); break;
    case TSR_ARGMAX:
#if TSR__RED_INT
      if (x > b) {
#else
      if (x > b || (x != x && b == b)) {
#endif
        b = x;
        bi = pi[t];
      }
      break;
    default: break;
    }
  }
  (void)su;
  switch (pl->op) {
  case TSR_SUM:
#if TSR__RED_INT
    *(T *)out = (T)su;
#else
    *(T *)out = (T)sd;
#endif
    break;
  case TSR_MEAN: *(MT *)out = (MT)(sd / (double)L); break;
  case TSR_MAX:
  case TSR_MIN: *(T *)out = b; break;
  case TSR_ARGMAX: *(int64_t *)out = bi; break;
  }
}

/* Case "rows": block `u` = (outer index, block of columns) reduced over all L rows. */
static void ROWS_BLOCK(const tsr__omp_rplan *pl, int64_t u) {
  double accd[TSR__OMP_RBLOCK];
  T best[TSR__OMP_RBLOCK];
  int64_t idx[TSR__OMP_RBLOCK];
#if TSR__RED_INT
  uint64_t accu[TSR__OMP_RBLOCK];
#endif
  const int64_t nblk = (pl->N + pl->bs - 1) / pl->bs;
  const int64_t outer = u / nblk, j0 = (u % nblk) * pl->bs;
  const int nc = (int)(pl->N - j0 < pl->bs ? pl->N - j0 : pl->bs);
  int64_t off[2];
  tsr__omp_loop_offsets(&pl->lp, outer * pl->N, off);
  const int64_t so = pl->lp.strides[0][pl->lp.ndim - 1];
  const T *a = (const T *)pl->a + off[1] + j0;
  char *o = pl->out + (off[0] + j0 * so) * (int64_t)pl->lp.elsize[0];
  const int64_t L = pl->L, sr = pl->sr;
  switch (pl->op) {
  case TSR_SUM:
#if TSR__RED_INT
    for (int j = 0; j < nc; j++)
      accu[j] = 0;
    RSUMU(a, L, sr, nc, accu);
    for (int j = 0; j < nc; j++)
      ((T *)o)[j * so] = (T)accu[j];
    break;
#else
    for (int j = 0; j < nc; j++)
      accd[j] = 0;
    RSUMD(a, L, sr, nc, accd);
    for (int j = 0; j < nc; j++)
      ((T *)o)[j * so] = (T)accd[j];
    break;
#endif
  case TSR_MEAN:
    for (int j = 0; j < nc; j++)
      accd[j] = 0;
    RSUMD(a, L, sr, nc, accd);
    for (int j = 0; j < nc; j++)
      ((MT *)o)[j * so] = (MT)(accd[j] / (double)L);
    break;
  case TSR_MAX:
  case TSR_MIN:
    REXTREME(a, L, sr, nc, pl->op == TSR_MAX, best);
    for (int j = 0; j < nc; j++)
      ((T *)o)[j * so] = best[j];
    break;
  case TSR_ARGMAX:
    RARGMAX(a, L, sr, nc, best, idx);
    for (int j = 0; j < nc; j++)
      ((int64_t *)o)[j * so] = idx[j];
    break;
  }
}

static void REDUCE(const tsr__omp_rplan *pl) {
  const int64_t work = pl->lp.size * pl->L;
  const bool par = work > TSR__OMP_PAR_THRESHOLD && tsr__omp_threads() > 1;
  if (pl->rows) {
    const int64_t units = pl->lp.size / pl->N * ((pl->N + pl->bs - 1) / pl->bs);
    TSR__OMP_PRAGMA(omp parallel for schedule(dynamic, 1) if (par))
    for (int64_t u = 0; u < units; u++)
      ROWS_BLOCK(pl, u);
  } else if (!par || pl->lp.size >= tsr__omp_threads()) {
    char *const base[2] = {pl->out, (char *)pl->a};
    tsr__omp_loop_run(&pl->lp, base, VECTOR_KERNEL, pl, work);
  } else {
    for (int64_t q = 0; q < pl->lp.size; q++) {
      int64_t off[2];
      tsr__omp_loop_offsets(&pl->lp, q, off);
      VECTOR_SPLIT(pl, pl->out + off[0] * (int64_t)pl->lp.elsize[0], (const T *)pl->a + off[1]);
    }
  }
}

#undef T
#undef MT
#undef TSR__RED_T
#undef TSR__RED_MT
#undef TSR__RED_INT
#undef TSR__RED_SFX
#undef VSUMD
#undef VSUMU
#undef VEXTREME
#undef VARGMAX
#undef RSUMD
#undef RSUMU
#undef REXTREME
#undef RARGMAX
#undef VECTOR_KERNEL
#undef VECTOR_SPLIT
#undef ROWS_BLOCK
#undef REDUCE
