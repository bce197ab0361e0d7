/*
 * Native GEMM: C = alpha op(A) op(B) + beta C, row-major, as described by tsr__gemm_args.
 *
 * Classic shared-memory tiling with register blocking (the scheme of Volkov & Demmel, "Benchmarking
 * GPUs to tune dense linear algebra", SC 2008, as used by CUTLASS's SIMT kernels):
 *  - a block computes a BM x BN tile of C, marching over K in steps of BK;
 *  - each K step stages a BM x BK panel of op(A) (stored k-major, As[k][i]) and a BK x BN
 *    panel of op(B) (Bs[k][j]) in shared memory, so the inner product reads both as vectors;
 *  - each thread owns TM x TN accumulators in registers, arranged as VW-wide column/row
 *    groups spread over the tile so that shared-memory vector reads are conflict-free;
 *  - double buffering: the next panels are loaded from global memory into registers while
 *    the current ones are multiplied, then stored into the other shared buffer; one barrier
 *    per K step;
 *  - global loads are 16-byte vectors (float4/double2 sized) along the contiguous dimension
 *    of each operand when the pointer and leading dimension allow it (VEC), else scalars;
 *    tiles at the matrix edges are zero-padded with bounds checks.
 * The tile sizes are template parameters; the instantiations below are chosen per dtype.
 */
#include "gpu_internal.cuh"

template <typename T, int BM, int BN, int BK, int TM, int TN, int MINB, bool TA, bool TB, bool VEC>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), MINB)
    tsr__gpu_gemm_tiled(int64_t m, int64_t n, int64_t k, T alpha, const T *__restrict__ A,
                        int64_t lda, const T *__restrict__ B, int64_t ldb, T beta,
                        T *__restrict__ C, int64_t ldc) {
  typedef tsr__gpu_vec<T> V;
  constexpr int THREADS = (BM / TM) * (BN / TN);
  constexpr int VW = V::width;                 /* elements per 16-byte vector */
  constexpr int LA = BM * BK / (VW * THREADS); /* vectors of A each thread loads per K step */
  constexpr int LB = BK * BN / (VW * THREADS);
  constexpr int PAD = VW; /* keeps rows 16-byte aligned, spreads the transposing stores */
  constexpr int RG = TM / VW, CG = TN / VW; /* row / column groups of a thread */
  static_assert(LA >= 1 && LB >= 1 && LA * VW * THREADS == BM * BK && LB * VW * THREADS == BK * BN,
                "tile loads must divide evenly among the threads");
  static_assert(TM % VW == 0 && TN % VW == 0 && BK % VW == 0, "tiles are whole vectors");

  __shared__ V as_storage[2][BK][(BM + PAD) / VW];
  __shared__ V bs_storage[2][BK][(BN + PAD) / VW];
  T(*As)[BK][BM + PAD] = reinterpret_cast<T(*)[BK][BM + PAD]>(as_storage);
  T(*Bs)[BK][BN + PAD] = reinterpret_cast<T(*)[BK][BN + PAD]>(bs_storage);

  const int tid = (int)threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int64_t col0 = (int64_t)blockIdx.x * BN;
  const int64_t ktiles = (k + BK - 1) / BK;

  for (int64_t rt = blockIdx.y; rt * BM < m; rt += gridDim.y) {
    const int64_t row0 = rt * BM;
    T ra[LA][VW], rb[LB][VW];

    /* Where this thread's vectors of the panels start (K step 0), and the fixed half of
       their bounds checks: hoisted out of the K loop. */
    const T *a_base[LA], *b_base[LB];
    int64_t a_i[LA], a_p[LA], b_p[LB], b_j[LB];
#pragma unroll
    for (int l = 0; l < LA; l++) {
      const int v = tid + l * THREADS;
      if (!TA) { /* A(i,p) = a[i*lda + p]: vectors along p */
        a_i[l] = row0 + v / (BK / VW);
        a_p[l] = (v % (BK / VW)) * VW;
        a_base[l] = A + a_i[l] * lda + a_p[l];
      } else { /* A(i,p) = a[p*lda + i]: vectors along i */
        a_p[l] = v / (BM / VW);
        a_i[l] = row0 + (v % (BM / VW)) * VW;
        a_base[l] = A + a_p[l] * lda + a_i[l];
      }
    }
#pragma unroll
    for (int l = 0; l < LB; l++) {
      const int v = tid + l * THREADS;
      if (!TB) { /* B(p,j) = b[p*ldb + j]: vectors along j */
        b_p[l] = v / (BN / VW);
        b_j[l] = col0 + (v % (BN / VW)) * VW;
        b_base[l] = B + b_p[l] * ldb + b_j[l];
      } else { /* B(p,j) = b[j*ldb + p]: vectors along p */
        b_j[l] = col0 + v / (BK / VW);
        b_p[l] = (v % (BK / VW)) * VW;
        b_base[l] = B + b_j[l] * ldb + b_p[l];
      }
    }

    /* Global -> registers: panel of K step t (zero outside the matrices). */
    auto load = [&](int64_t t) {
      const int64_t k0 = t * BK;
#pragma unroll
      for (int l = 0; l < LA; l++) {
        const int64_t gi = a_i[l], gp = k0 + a_p[l];
        const T *src = a_base[l] + (!TA ? k0 : k0 * lda);
        const bool full = !TA ? (gi < m && gp + VW <= k) : (gp < k && gi + VW <= m);
        if (VEC && full) {
          V x = *reinterpret_cast<const V *>(src);
#pragma unroll
          for (int q = 0; q < VW; q++)
            ra[l][q] = x.v[q];
        } else {
#pragma unroll
          for (int q = 0; q < VW; q++) {
            const bool in = !TA ? (gi < m && gp + q < k) : (gp < k && gi + q < m);
            ra[l][q] = in ? src[q] : (T)0;
          }
        }
      }
#pragma unroll
      for (int l = 0; l < LB; l++) {
        const int64_t gj = b_j[l], gp = k0 + b_p[l];
        const T *src = b_base[l] + (!TB ? k0 * ldb : k0);
        const bool full = !TB ? (gp < k && gj + VW <= n) : (gj < n && gp + VW <= k);
        if (VEC && full) {
          V x = *reinterpret_cast<const V *>(src);
#pragma unroll
          for (int q = 0; q < VW; q++)
            rb[l][q] = x.v[q];
        } else {
#pragma unroll
          for (int q = 0; q < VW; q++) {
            const bool in = !TB ? (gp < k && gj + q < n) : (gj < n && gp + q < k);
            rb[l][q] = in ? src[q] : (T)0;
          }
        }
      }
    };

    /* Registers -> shared buffer `buf`, k-major. */
    auto store = [&](int buf) {
#pragma unroll
      for (int l = 0; l < LA; l++) {
        const int v = tid + l * THREADS;
        if (!TA) {
          const int r = v / (BK / VW), p = (v % (BK / VW)) * VW;
#pragma unroll
          for (int q = 0; q < VW; q++)
            As[buf][p + q][r] = ra[l][q];
        } else {
          const int p = v / (BM / VW), r = (v % (BM / VW)) * VW;
          V x;
#pragma unroll
          for (int q = 0; q < VW; q++)
            x.v[q] = ra[l][q];
          *reinterpret_cast<V *>(&As[buf][p][r]) = x;
        }
      }
#pragma unroll
      for (int l = 0; l < LB; l++) {
        const int v = tid + l * THREADS;
        if (!TB) {
          const int p = v / (BN / VW), j = (v % (BN / VW)) * VW;
          V x;
#pragma unroll
          for (int q = 0; q < VW; q++)
            x.v[q] = rb[l][q];
          *reinterpret_cast<V *>(&Bs[buf][p][j]) = x;
        } else {
          const int j = v / (BK / VW), p = (v % (BK / VW)) * VW;
#pragma unroll
          for (int q = 0; q < VW; q++)
            Bs[buf][p + q][j] = rb[l][q];
        }
      }
    };

    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
      for (int j = 0; j < TN; j++)
        acc[i][j] = (T)0;

    if (ktiles > 0) {
      load(0);
      store(0);
    }
    __syncthreads();
    for (int64_t t = 0; t < ktiles; t++) {
      const int buf = (int)(t & 1);
      if (t + 1 < ktiles) load(t + 1); /* in flight during the products below */
#pragma unroll
      for (int kk = 0; kk < BK; kk++) {
        T af[TM], bf[TN];
#pragma unroll
        for (int g = 0; g < RG; g++) {
          V x = *reinterpret_cast<const V *>(&As[buf][kk][g * (BM / RG) + ty * VW]);
#pragma unroll
          for (int q = 0; q < VW; q++)
            af[g * VW + q] = x.v[q];
        }
#pragma unroll
        for (int g = 0; g < CG; g++) {
          V y = *reinterpret_cast<const V *>(&Bs[buf][kk][g * (BN / CG) + tx * VW]);
#pragma unroll
          for (int q = 0; q < VW; q++)
            bf[g * VW + q] = y.v[q];
        }
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
          for (int j = 0; j < TN; j++)
            acc[i][j] += af[i] * bf[j];
      }
      /* Buffer buf^1 was last read in step t-1, which every thread finished before the
         barrier that ended it. */
      if (t + 1 < ktiles) store(buf ^ 1);
      __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; i++) {
      const int64_t gi = row0 + (i / VW) * (BM / RG) + ty * VW + (i % VW);
      if (gi >= m) continue;
#pragma unroll
      for (int j = 0; j < TN; j++) {
        const int64_t gj = col0 + (j / VW) * (BN / CG) + tx * VW + (j % VW);
        if (gj >= n) continue;
        T *cp = C + gi * ldc + gj;
        *cp = beta == (T)0 ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *cp;
      }
    }
  }
}

/* C = beta C for alpha == 0 or k == 0 (A and B are not read; beta == 0 writes zeros). */
template <typename T>
__global__ void tsr__gpu_gemm_scale(int64_t m, int64_t n, T beta, T *C, int64_t ldc) {
  int64_t total = m * n, nthreads = (int64_t)gridDim.x * blockDim.x;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += nthreads) {
    T *cp = C + (e / n) * ldc + e % n;
    *cp = beta == (T)0 ? (T)0 : beta * *cp;
  }
}

static bool tsr__gpu_gemm_aligned(const void *p, int64_t ld, int vw) {
  return ((uintptr_t)p & 15u) == 0 && ld % vw == 0;
}

/* MINB: blocks per multiprocessor to fit (caps the registers per thread). */
template <typename T, int BM, int BN, int BK, int TM, int TN, int MINB>
static tsr_status tsr__gpu_gemm_run(cudaStream_t s, const tsr__gemm_args *g) {
  const int vw = tsr__gpu_vec<T>::width;
  const bool vec =
      tsr__gpu_gemm_aligned(g->a, g->lda, vw) && tsr__gpu_gemm_aligned(g->b, g->ldb, vw);
  const int64_t col_tiles = (g->n + BN - 1) / BN, row_tiles = (g->m + BM - 1) / BM;
  if (col_tiles > 0x7fffffff)
    return tsr__set_error(TSR_ERR_UNSUPPORTED, "tsr_gemm",
                          "n = %lld exceeds the native GPU kernel's grid", (long long)g->n);
  dim3 grid((unsigned)col_tiles, (unsigned)(row_tiles < 65535 ? row_tiles : 65535));
  const int threads = (BM / TM) * (BN / TN);
  const T alpha = (T)g->alpha, beta = (T)g->beta;
  const T *a = (const T *)g->a, *b = (const T *)g->b;
  T *c = (T *)g->c;
#define TSR__GPU_GEMM_CASE(TA_, TB_, VEC_)                                                         \
  if (g->trans_a == TA_ && g->trans_b == TB_ && vec == VEC_)                                       \
    tsr__gpu_gemm_tiled<T, BM, BN, BK, TM, TN, MINB, TA_, TB_, VEC_>                               \
        <<<grid, threads, 0, s>>>(g->m, g->n, g->k, alpha, a, g->lda, b, g->ldb, beta, c, g->ldc);
  TSR__GPU_GEMM_CASE(false, false, true)
  TSR__GPU_GEMM_CASE(false, true, true)
  TSR__GPU_GEMM_CASE(true, false, true)
  TSR__GPU_GEMM_CASE(true, true, true)
  TSR__GPU_GEMM_CASE(false, false, false)
  TSR__GPU_GEMM_CASE(false, true, false)
  TSR__GPU_GEMM_CASE(true, false, false)
  TSR__GPU_GEMM_CASE(true, true, false)
#undef TSR__GPU_GEMM_CASE
  TSR_GPU_CHECK_LAUNCH();
  return TSR_OK;
}

tsr_status tsr__gpu_gemm_native(tsr_device dev, const tsr__gemm_args *g) {
  cudaStream_t s = NULL;
  TSR_CALL(tsr__gpu_begin(dev, &s));
  if (g->m == 0 || g->n == 0) return TSR_OK;
  if (g->alpha == 0.0 || g->k == 0) {
    unsigned grid = tsr__gpu_grid_for(dev, g->m * g->n, TSR__GPU_BLOCK);
    if (g->dtype == TSR_F32)
      tsr__gpu_gemm_scale<float>
          <<<grid, TSR__GPU_BLOCK, 0, s>>>(g->m, g->n, (float)g->beta, (float *)g->c, g->ldc);
    else
      tsr__gpu_gemm_scale<double>
          <<<grid, TSR__GPU_BLOCK, 0, s>>>(g->m, g->n, g->beta, (double *)g->c, g->ldc);
    TSR_GPU_CHECK_LAUNCH();
    return TSR_OK;
  }
  switch (g->dtype) {
  case TSR_F32: /* 128x128 tiles, 8x8 per thread, 256 threads, 2 blocks per SM */
    return tsr__gpu_gemm_run<float, 128, 128, 8, 8, 8, 2>(s, g);
  case TSR_F64: /* 128x64 tiles, 8x4 per thread, 256 threads: half the registers per value */
    return tsr__gpu_gemm_run<double, 128, 64, 8, 8, 4, 1>(s, g);
  default: break;
  }
  return tsr__set_error(TSR_ERR_DTYPE, "tsr_gemm", "GEMM needs f32 or f64 on %s, got %s",
                        TSR__GPU_NAME, tsr_dtype_name(g->dtype));
}

tsr_status tsr__gpu_gemm(tsr_device dev, const tsr__gemm_args *args) {
  if (args->path == TSR_GEMM_VENDOR) return tsr__gpu_gemm_vendor(dev, args);
  return tsr__gpu_gemm_native(dev, args);
}
