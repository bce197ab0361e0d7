/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Native GEMM: C = alpha op(A) op(B) + beta C, row-major, as described by tsr__gemm_args.
 *
 * SIMT shared-memory tiling with warp tiling and register blocking (Volkov & Demmel,
 * "Benchmarking GPUs to tune dense linear algebra", SC 2008; the thread-block / warp / thread
 * hierarchy of CUTLASS's SIMT kernels, Kerr et al., GTC 2018):
 *  - a block computes a BM x BN tile of C, marching over its share of K in steps of BK;
 *  - the block's threads form groups of 32 lanes (a warp on NVIDIA; a wavefront of 64 runs
 *    two groups, so the same source suits both), each group owning a WM x WN warp tile; the
 *    lanes of a group are arranged LM x LN over it, and each lane owns TM x TN accumulators in
 *    VW-wide (16-byte) row and column groups spread over the warp tile, so that the lanes of a
 *    group read As / Bs with a few distinct 16-byte vectors per step (conflict-free);
 *  - panels are staged in shared memory k-major (As[k][i], Bs[k][j]) in a ring of STAGES
 *    buffers. The operand whose contiguous direction is the staged one (op(A) = A^T, op(B) =
 *    B) is copied global -> shared by `cp.async` (sm_80 and later: Ampere/Hopper's
 *    asynchronous copy, LDGSTS), STAGES - 1 K steps ahead; the other operand is transposed
 *    through registers, loaded one step ahead and stored after the step's products. Where
 *    cp.async does not exist (HIP, older targets, the host emulator) the same code performs
 *    plain 16-byte loads and stores: a correct, less latency-tolerant pipeline;
 *  - one barrier per K step; 32-bit in-tile offsets and per-step pointer increments keep the
 *    integer work out of the inner loop and the thread within its register budget;
 *  - the epilogue stores 16-byte vectors where C's alignment allows;
 *  - split-K: for shapes with few tiles and a long K, gridDim.z blocks share a tile, each
 *    writes its partial product to a workspace, and a second kernel sums the partials in a
 *    fixed order (deterministic) and applies alpha and beta.
 * Several tile configurations are instantiated; tsr__gpu_gemm_plan picks one from the shape.
 */
#include "gpu_internal.cuh"

/* Lanes of a tiling group: a warp on NVIDIA, half a wavefront on wave64 AMD GPUs. */
#define TSR__GEMM_LANES 32

/* ---------------------------------------------------------------- asynchronous copy ---- */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(__HIPCC__)
#define TSR__GPU_HAS_CP_ASYNC 1
#else
#define TSR__GPU_HAS_CP_ASYNC 0
#endif

/* 16 bytes global -> shared; asynchronous (cp.async.cg, L2 only) where the GPU has it. */
template <typename V> __device__ __forceinline__ void tsr__gemm_copy16(V *smem, const V *gmem) {
#if TSR__GPU_HAS_CP_ASYNC
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
#else
  *smem = *gmem;
#endif
}
__device__ __forceinline__ void tsr__gemm_copy_commit() {
#if TSR__GPU_HAS_CP_ASYNC
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
/* Waits until at most N committed groups of this thread are still in flight. */
template <int N> __device__ __forceinline__ void tsr__gemm_copy_wait() {
#if TSR__GPU_HAS_CP_ASYNC
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* ---------------------------------------------------------------- configurations ------- */

/* A tile configuration: block tile BM x BN x BK, WARPS_M x WARPS_N groups of 32 lanes, lanes
   LM x (32 / LM) over a warp tile, TM x TN accumulators per lane, STAGES shared buffers,
   MINB blocks per multiprocessor to fit (caps registers at 64K / (MINB * THREADS)). */
template <typename T_, int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int LM_, int TM_,
          int TN_, int STAGES_, int MINB_>
struct tsr__gemm_config {
  typedef T_ T;
  typedef tsr__gpu_vec<T> V;
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, STAGES = STAGES_, MINB = MINB_;
  static constexpr int THREADS = WARPS_M * WARPS_N * TSR__GEMM_LANES;
  static constexpr int VW = V::width; /* elements per 16-byte vector */
  static constexpr int LM = LM_, LN = TSR__GEMM_LANES / LM_;
  static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* warp tile */
  static constexpr int RG = TM / VW, CG = TN / VW;           /* vector groups of a lane */
  static constexpr int PAD = VW; /* keeps rows 16-byte aligned, spreads transposing stores */
  static constexpr int LDA_S = BM + PAD, LDB_S = BN + PAD; /* shared row lengths */
  static constexpr int LA = BM * BK / (VW * THREADS);      /* vectors of A per thread per step */
  static constexpr int LB = BK * BN / (VW * THREADS);
  static_assert(TM % VW == 0 && TN % VW == 0 && BK % VW == 0, "tiles are whole vectors");
  static_assert(WM == RG * LM * VW && WN == CG * LN * VW, "lanes cover the warp tile");
  static_assert(LA >= 1 && LB >= 1 && LA * VW * THREADS == BM * BK && LB * VW * THREADS == BK * BN,
                "tile loads divide evenly among the threads");
  static_assert(STAGES >= 2, "at least double buffering");
};

/* f32: 128x128 tiles, 8 groups of 64x32, 8x8 per lane, 2 blocks per SM (128 registers). */
typedef tsr__gemm_config<float, 128, 128, 8, 2, 4, 8, 8, 8, 4, 2> tsr__gemm_f32_large;
/* f32: 64x64 tiles, 4 groups of 32x32, 4x8 per lane: 4x the blocks of the large tile. */
typedef tsr__gemm_config<float, 64, 64, 8, 2, 2, 8, 4, 8, 4, 3> tsr__gemm_f32_small;
/* f64: 128x64 tiles, 8 groups of 32x32, 8x4 per lane (64 registers of accumulators). */
typedef tsr__gemm_config<double, 128, 64, 8, 4, 2, 4, 8, 4, 3, 2> tsr__gemm_f64_large;
/* f64: 64x64 tiles, 4 groups of 32x32, 8x4 per lane. */
typedef tsr__gemm_config<double, 64, 64, 8, 2, 2, 4, 8, 4, 3, 3> tsr__gemm_f64_small;

/* Complex: one configuration per dtype (the shapes that would pick the real dtypes' small tile
   take it too; split-K applies the same way). A complex element is one 8- or 16-byte access
   (VW = 2 or 1), and a lane's TM x TN complex accumulators take as many registers as the real
   configurations' (c64: 4 x 8 x 2 floats, c128: 4 x 4 x 2 doubles).
   c64: 64x64 tiles, 4 groups of 32x32, 4x8 per lane, 3 stages (25 KiB of shared memory). */
typedef tsr__gemm_config<tsr__gpu_c64, 64, 64, 8, 2, 2, 8, 4, 8, 3, 2> tsr__gemm_c64;
/* c128: 64x32 tiles, 4 groups of 32x16, 4x4 per lane, 3 stages (37 KiB). */
typedef tsr__gemm_config<tsr__gpu_c128, 64, 32, 8, 2, 2, 8, 4, 4, 3, 2> tsr__gemm_c128;

/* acc += a b, or with CB (complex only) acc += a conj(b): the conjugation is the signs of two
   of the four multiply-adds, free in the inner loop. */
template <bool CB> __device__ __forceinline__ void tsr__gemm_mac(float &acc, float a, float b) {
  acc += a * b;
}
template <bool CB> __device__ __forceinline__ void tsr__gemm_mac(double &acc, double a, double b) {
  acc += a * b;
}
template <bool CB, typename R>
__device__ __forceinline__ void tsr__gemm_mac(tsr__gpu_complex<R> &acc, tsr__gpu_complex<R> a,
                                              tsr__gpu_complex<R> b) {
  if (CB) {
    acc.re += a.re * b.re + a.im * b.im;
    acc.im += a.im * b.re - a.re * b.im;
  } else {
    acc.re += a.re * b.re - a.im * b.im;
    acc.im += a.re * b.im + a.im * b.re;
  }
}

/* Kernel arguments, by value. With splits > 1 (gridDim.z) block z covers K range
   [z kchunk, min(k, (z+1) kchunk)) and writes its raw partial sums to work + z m n (leading
   dimension n); alpha and beta are applied by tsr__gpu_gemm_splitk_reduce. */
template <typename T> struct tsr__gemm_params {
  int64_t m, n, k, kchunk;
  T alpha, beta;
  const T *a;
  int64_t lda;
  const T *b;
  int64_t ldb;
  T *c;
  int64_t ldc;
  T *work; /* NULL unless split-K */
  /* Complex: C = alpha conj(acc) + beta C (see tsr__gpu_gemm_launch's conjugations). */
  bool conj_acc;
};

/* ---------------------------------------------------------------- the tile steps ------- */

/*
 * The steps of one block tile, each a member: where this thread's loads start (setup), the
 * issue of a K step's panels (issue_stage), the transposing store of the register-staged
 * operand (store_staged), the products over one staged K step (multiply_stage) and the
 * write-out (epilogue). DA / DB: the operand is copied straight into shared memory (its
 * contiguous direction is the staged one); otherwise it goes through registers.
 */
template <class K, bool TA, bool TB, bool VEC, bool CB> struct tsr__gemm_tile {
  typedef typename K::T T;
  typedef typename K::V V;
  static constexpr int VW = K::VW, BM = K::BM, BN = K::BN, BK = K::BK;
  static constexpr bool DA = TA, DB = !TB;

  T *As, *Bs; /* STAGES x BK x LDA_S, STAGES x BK x LDB_S */
  int tid;
  /* Loads: first element of each vector at K step 0 of the block's range, and whether its
     row (the non-K coordinate) lies inside the matrix, as a count of valid elements. */
  const T *a_src[K::LA];
  const T *b_src[K::LB];
  int a_valid[K::LA], b_valid[K::LB]; /* elements of the vector inside m (A) or n (B) */
  int a_kofs[K::LA], b_kofs[K::LB];   /* the vector's K offset within a step */
  int64_t a_step, b_step;             /* pointer increment per K step */
  T ra[K::LA][VW], rb[K::LB][VW];     /* register-staged panel of the next step */

  __device__ __forceinline__ void setup(const tsr__gemm_params<T> &p, int64_t row0, int64_t col0,
                                        int64_t kbeg) {
#pragma unroll
    for (int l = 0; l < K::LA; l++) {
      const int v = tid + l * K::THREADS;
      int r, kp;
      if (!TA) { /* A(i,p) = a[i lda + p]: vectors along p */
        r = v / (BK / VW);
        kp = (v % (BK / VW)) * VW;
        a_src[l] = p.a + (row0 + r) * p.lda + kbeg + kp;
        a_valid[l] = row0 + r < p.m ? VW : 0;
      } else { /* A(i,p) = a[p lda + i]: vectors along i */
        kp = v / (BM / VW);
        r = (v % (BM / VW)) * VW;
        a_src[l] = p.a + (kbeg + kp) * p.lda + row0 + r;
        const int64_t left = p.m - (row0 + r);
        a_valid[l] = left >= VW ? VW : left > 0 ? (int)left : 0;
      }
      a_kofs[l] = kp;
    }
#pragma unroll
    for (int l = 0; l < K::LB; l++) {
      const int v = tid + l * K::THREADS;
      int j, kp;
      if (!TB) { /* B(p,j) = b[p ldb + j]: vectors along j */
        kp = v / (BN / VW);
        j = (v % (BN / VW)) * VW;
        b_src[l] = p.b + (kbeg + kp) * p.ldb + col0 + j;
        const int64_t left = p.n - (col0 + j);
        b_valid[l] = left >= VW ? VW : left > 0 ? (int)left : 0;
      } else { /* B(p,j) = b[j ldb + p]: vectors along p */
        j = v / (BK / VW);
        kp = (v % (BK / VW)) * VW;
        b_src[l] = p.b + (col0 + j) * p.ldb + kbeg + kp;
        b_valid[l] = col0 + j < p.n ? VW : 0;
      }
      b_kofs[l] = kp;
    }
    a_step = TA ? BK * p.lda : BK;
    b_step = TB ? BK : BK * p.ldb;
  }

  /* Issues K step t (kleft: elements of K left from its start, > 0) into stage `buf`: the
     direct operand straight to shared memory, the other into ra / rb. Zero outside. */
  __device__ __forceinline__ void issue_stage(int t, int buf, int64_t kleft) {
    const bool kfull = kleft >= BK;
#pragma unroll
    for (int l = 0; l < K::LA; l++) {
      const T *src = a_src[l] + t * a_step;
      const int kp = a_kofs[l];
      if (DA) { /* contiguous along i: As[kp][r..r+VW) */
        const int v = tid + l * K::THREADS;
        T *dst = As + (buf * BK + kp) * K::LDA_S + (v % (BM / VW)) * VW;
        const bool krow = kp < kleft;
        if (VEC && krow && a_valid[l] == VW) {
          tsr__gemm_copy16(reinterpret_cast<V *>(dst), reinterpret_cast<const V *>(src));
        } else {
#pragma unroll
          for (int q = 0; q < VW; q++)
            dst[q] = krow && q < a_valid[l] ? src[q] : (T)0;
        }
      } else { /* contiguous along p: into registers */
        if (VEC && kfull && a_valid[l] == VW) {
          V x = *reinterpret_cast<const V *>(src);
#pragma unroll
          for (int q = 0; q < VW; q++)
            ra[l][q] = x.v[q];
        } else {
#pragma unroll
          for (int q = 0; q < VW; q++)
            ra[l][q] = a_valid[l] && kp + q < kleft ? src[q] : (T)0;
        }
      }
    }
#pragma unroll
    for (int l = 0; l < K::LB; l++) {
      const T *src = b_src[l] + t * b_step;
      const int kp = b_kofs[l];
      if (DB) { /* contiguous along j: Bs[kp][j..j+VW) */
        const int v = tid + l * K::THREADS;
        T *dst = Bs + (buf * BK + kp) * K::LDB_S + (v % (BN / VW)) * VW;
        const bool krow = kp < kleft;
        if (VEC && krow && b_valid[l] == VW) {
          tsr__gemm_copy16(reinterpret_cast<V *>(dst), reinterpret_cast<const V *>(src));
        } else {
#pragma unroll
          for (int q = 0; q < VW; q++)
            dst[q] = krow && q < b_valid[l] ? src[q] : (T)0;
        }
      } else {
        if (VEC && kfull && b_valid[l] == VW) {
          V x = *reinterpret_cast<const V *>(src);
#pragma unroll
          for (int q = 0; q < VW; q++)
            rb[l][q] = x.v[q];
        } else {
#pragma unroll
          for (int q = 0; q < VW; q++)
            rb[l][q] = b_valid[l] && kp + q < kleft ? src[q] : (T)0;
        }
      }
    }
  }

  /* ra / rb -> stage `buf`, transposed to k-major (the operands not copied directly). */
  __device__ __forceinline__ void store_staged(int buf) {
    if (!DA) {
#pragma unroll
      for (int l = 0; l < K::LA; l++) {
        const int r = (tid + l * K::THREADS) / (BK / VW);
#pragma unroll
        for (int q = 0; q < VW; q++)
          As[(buf * BK + a_kofs[l] + q) * K::LDA_S + r] = ra[l][q];
      }
    }
    if (!DB) {
#pragma unroll
      for (int l = 0; l < K::LB; l++) {
        const int j = (tid + l * K::THREADS) / (BK / VW);
#pragma unroll
        for (int q = 0; q < VW; q++)
          Bs[(buf * BK + b_kofs[l] + q) * K::LDB_S + j] = rb[l][q];
      }
    }
  }

  /* acc += the products of stage `buf`; a_off / b_off: this lane's first column in As / Bs. */
  __device__ __forceinline__ void multiply_stage(int buf, int a_off, int b_off,
                                                 T (&acc)[K::TM][K::TN]) const {
    const T *as = As + buf * BK * K::LDA_S + a_off;
    const T *bs = Bs + buf * BK * K::LDB_S + b_off;
    /* Not unrolled: unrolling lets the compiler hoist every step's shared loads, which
       overflows the register budget (spills; nvcc 13, sm_80/sm_90). */
#pragma unroll 1
    for (int kk = 0; kk < BK; kk++) {
      T af[K::TM], bf[K::TN];
#pragma unroll
      for (int g = 0; g < K::RG; g++) {
        V x = *reinterpret_cast<const V *>(as + kk * K::LDA_S + g * K::LM * VW);
#pragma unroll
        for (int q = 0; q < VW; q++)
          af[g * VW + q] = x.v[q];
      }
#pragma unroll
      for (int h = 0; h < K::CG; h++) {
        V y = *reinterpret_cast<const V *>(bs + kk * K::LDB_S + h * K::LN * VW);
#pragma unroll
        for (int q = 0; q < VW; q++)
          bf[h * VW + q] = y.v[q];
      }
#pragma unroll
      for (int i = 0; i < K::TM; i++)
#pragma unroll
        for (int j = 0; j < K::TN; j++)
          tsr__gemm_mac<CB>(acc[i][j], af[i], bf[j]);
    }
  }

  /* Writes the lane's accumulators: C = alpha acc + beta C (C not read when beta == 0), or the
     raw partial sums into the split-K workspace. 16-byte vectors where aligned and whole. */
  static __device__ __forceinline__ void epilogue(const tsr__gemm_params<T> &p, int64_t row0,
                                                  int64_t col0, int a_off, int b_off,
                                                  const T (&acc)[K::TM][K::TN]) {
    T *out;
    int64_t ld;
    bool raw = p.work != NULL;
    if (raw) {
      out = p.work + (int64_t)blockIdx.z * p.m * p.n;
      ld = p.n;
    } else {
      out = p.c;
      ld = p.ldc;
    }
    const bool vec_ok = ((uintptr_t)out & 15u) == 0 && ld % VW == 0;
#pragma unroll
    for (int i = 0; i < K::TM; i++) {
      const int64_t gi = row0 + a_off + (i / VW) * (K::LM * VW) + (i % VW);
      if (gi >= p.m) continue;
      T *crow = out + gi * ld;
#pragma unroll
      for (int h = 0; h < K::CG; h++) {
        const int64_t gj = col0 + b_off + h * (K::LN * VW);
        T v[VW];
#pragma unroll
        for (int q = 0; q < VW; q++)
          v[q] = raw          ? acc[i][h * VW + q]
                 : p.conj_acc ? p.alpha * tsr__gpu_conj(acc[i][h * VW + q])
                              : p.alpha * acc[i][h * VW + q];
        if (vec_ok && gj + VW <= p.n) {
          V *cp = reinterpret_cast<V *>(crow + gj);
          V x;
          if (!raw && p.beta != (T)0) {
            V old = *cp;
#pragma unroll
            for (int q = 0; q < VW; q++)
              x.v[q] = v[q] + p.beta * old.v[q];
          } else {
#pragma unroll
            for (int q = 0; q < VW; q++)
              x.v[q] = v[q];
          }
          *cp = x;
        } else {
#pragma unroll
          for (int q = 0; q < VW; q++) {
            if (gj + q >= p.n) break;
            T *cp = crow + gj + q;
            *cp = !raw && p.beta != (T)0 ? v[q] + p.beta * *cp : v[q];
          }
        }
      }
    }
  }
};

template <class K, bool TA, bool TB, bool VEC, bool CB>
__global__ void __launch_bounds__(K::THREADS, K::MINB)
    tsr__gpu_gemm_tiled(const tsr__gemm_params<typename K::T> p) {
  typedef typename K::T T;
  typedef typename K::V V;
  typedef tsr__gemm_tile<K, TA, TB, VEC, CB> Tile;
  __shared__ V as_storage[K::STAGES * K::BK * K::LDA_S / K::VW];
  __shared__ V bs_storage[K::STAGES * K::BK * K::LDB_S / K::VW];

  Tile tile;
  tile.As = reinterpret_cast<T *>(as_storage);
  tile.Bs = reinterpret_cast<T *>(bs_storage);
  tile.tid = (int)threadIdx.x;
  const int warp = tile.tid / TSR__GEMM_LANES, lane = tile.tid % TSR__GEMM_LANES;
  /* This lane's first row / column within the block tile. */
  const int a_off = (warp / K::WARPS_N) * K::WM + (lane / K::LN) * K::VW;
  const int b_off = (warp % K::WARPS_N) * K::WN + (lane % K::LN) * K::VW;

  const int64_t col0 = (int64_t)blockIdx.x * K::BN;
  const int64_t kbeg = (int64_t)blockIdx.z * p.kchunk;
  const int64_t kend = kbeg + p.kchunk < p.k ? kbeg + p.kchunk : p.k;
  const int ktiles = kend > kbeg ? (int)((kend - kbeg + K::BK - 1) / K::BK) : 0;

  for (int64_t rt = blockIdx.y; rt * K::BM < p.m; rt += gridDim.y) {
    const int64_t row0 = rt * K::BM;
    tile.setup(p, row0, col0, kbeg);
    T acc[K::TM][K::TN];
#pragma unroll
    for (int i = 0; i < K::TM; i++)
#pragma unroll
      for (int j = 0; j < K::TN; j++)
        acc[i][j] = (T)0;

        /* Prologue: steps 0 .. STAGES-2 in flight (one commit group each, empty past the end). */
#pragma unroll
    for (int s = 0; s < K::STAGES - 1; s++) {
      if (s < ktiles) {
        tile.issue_stage(s, s, kend - kbeg - (int64_t)s * K::BK);
        tile.store_staged(s);
      }
      tsr__gemm_copy_commit();
    }
    for (int t = 0; t < ktiles; t++) {
      /* Step t has landed; every thread has finished step t-1, whose stage is refilled now. */
      tsr__gemm_copy_wait<K::STAGES - 2>();
      __syncthreads();
      const int next = t + K::STAGES - 1, nbuf = next % K::STAGES;
      if (next < ktiles) tile.issue_stage(next, nbuf, kend - kbeg - (int64_t)next * K::BK);
      tsr__gemm_copy_commit();
      tile.multiply_stage(t % K::STAGES, a_off, b_off, acc);
      if (next < ktiles) tile.store_staged(nbuf); /* read at step `next`, after its barrier */
    }
    Tile::epilogue(p, row0, col0, a_off, b_off, acc);
    tsr__gemm_copy_wait<0>();
    __syncthreads(); /* the stages are reused by the next row tile */
  }
}

/* C = alpha sum_z work[z] + beta C (C not read when beta == 0), summed in order of z. */
template <typename T>
__global__ void tsr__gpu_gemm_splitk_reduce(const tsr__gemm_params<T> p, int splits) {
  const int64_t total = p.m * p.n, nthreads = (int64_t)gridDim.x * blockDim.x;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += nthreads) {
    T s = (T)0;
    for (int z = 0; z < splits; z++)
      s += p.work[(int64_t)z * total + e];
    if (p.conj_acc) s = tsr__gpu_conj(s);
    T *cp = p.c + (e / p.n) * p.ldc + e % p.n;
    *cp = p.beta == (T)0 ? p.alpha * s : p.alpha * s + p.beta * *cp;
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

template <typename T>
static tsr_status tsr__gpu_gemm_scale_launch(tsr_device dev, cudaStream_t s,
                                             const tsr__gemm_args *g) {
  unsigned grid = tsr__gpu_grid_for(dev, g->m * g->n, TSR__GPU_BLOCK);
  TSR__LAUNCH(tsr__gpu_gemm_scale<T>, grid, TSR__GPU_BLOCK, s, g->m, g->n,
              tsr__gpu_scalar<T>(g->beta, g->beta_im), (T *)g->c, g->ldc);
  TSR_GPU_CHECK_LAUNCH(s);
  return TSR_OK;
}

/* ---------------------------------------------------------------- planning ------------- */

static bool tsr__gpu_gemm_aligned(const void *p, int64_t ld, int vw) {
  return ((uintptr_t)p & 15u) == 0 && ld % vw == 0;
}

/* Split-K workspace bound: the partial products of all splits. */
#define TSR__GEMM_SPLITK_MAX_BYTES ((size_t)64 << 20)
#define TSR__GEMM_SPLITK_MAX 16

/*
 * The tile configuration and the number of K splits for a shape (PROVISIONAL: these
 * thresholds follow the occupancy arithmetic, not measurements; bench_gpu on a GPU is to
 * confirm or replace them):
 *  - the large tile when it gives at least two waves of blocks (MINB blocks per SM);
 *  - else the small tile;
 *  - split K when even the small tile leaves SMs idle and K is long (>= 256 per split), into
 *    as many pieces as fill the GPU once, bounded by TSR__GEMM_SPLITK_MAX and the workspace.
 */
typedef struct tsr__gemm_plan {
  int large;  /* 1: the dtype's large configuration */
  int splits; /* >= 1 */
  int64_t kchunk;
} tsr__gemm_plan;

static tsr__gemm_plan tsr__gpu_gemm_plan(int sms, const tsr__gemm_args *g, int large_bm,
                                         int large_bn, int large_minb, int small_bm, int small_bn,
                                         int small_minb, size_t elem) {
  tsr__gemm_plan plan = {1, 1, g->k};
  const int64_t large_tiles =
      ((g->m + large_bm - 1) / large_bm) * ((g->n + large_bn - 1) / large_bn);
  if (large_tiles >= 2 * (int64_t)sms * large_minb) return plan;
  plan.large = 0;
  const int64_t tiles = ((g->m + small_bm - 1) / small_bm) * ((g->n + small_bn - 1) / small_bn);
  const int64_t slots = (int64_t)sms * small_minb;
  if (tiles >= slots || g->k < 512) return plan;
  int64_t splits = (slots + tiles - 1) / tiles;
  if (splits > g->k / 256) splits = g->k / 256;
  if (splits > TSR__GEMM_SPLITK_MAX) splits = TSR__GEMM_SPLITK_MAX;
  while (splits > 1 && (size_t)splits * (size_t)(g->m * g->n) * elem > TSR__GEMM_SPLITK_MAX_BYTES)
    splits--;
  if (splits <= 1) return plan;
  int64_t chunk = (g->k + splits - 1) / splits;
  chunk = (chunk + 31) / 32 * 32; /* whole K steps of every configuration */
  plan.kchunk = chunk;
  plan.splits = (int)((g->k + chunk - 1) / chunk);
  return plan;
}

/* The kernel conjugating B for a complex configuration; NULL for a real one (never used). */
template <typename T> using tsr__gemm_kernel_fn = void (*)(const tsr__gemm_params<T>);
template <class K, bool TA, bool TB, bool VEC>
static constexpr tsr__gemm_kernel_fn<typename K::T> tsr__gemm_kernel_if() {
  if constexpr (tsr__gpu_is_complex<typename K::T>::value)
    return tsr__gpu_gemm_tiled<K, TA, TB, VEC, true>;
  else
    return nullptr;
}

/* Launches configuration K for the plan (and the split-K reduction). */
template <class K>
static tsr_status tsr__gpu_gemm_launch(tsr_device dev, cudaStream_t s, const tsr__gemm_args *g,
                                       const tsr__gemm_plan *plan) {
  typedef typename K::T T;
  typedef tsr__gemm_kernel_fn<T> kernel_fn;
  /* Indexed by trans_a + 2 trans_b + 4 vec (+ 8 cb for the complex dtypes). */
  static kernel_fn const kernels[16] = {
      tsr__gpu_gemm_tiled<K, false, false, false, false>,
      tsr__gpu_gemm_tiled<K, true, false, false, false>,
      tsr__gpu_gemm_tiled<K, false, true, false, false>,
      tsr__gpu_gemm_tiled<K, true, true, false, false>,
      tsr__gpu_gemm_tiled<K, false, false, true, false>,
      tsr__gpu_gemm_tiled<K, true, false, true, false>,
      tsr__gpu_gemm_tiled<K, false, true, true, false>,
      tsr__gpu_gemm_tiled<K, true, true, true, false>,
      /* The real dtypes never conjugate: no second set for them. */
      tsr__gemm_kernel_if<K, false, false, false>(), tsr__gemm_kernel_if<K, true, false, false>(),
      tsr__gemm_kernel_if<K, false, true, false>(), tsr__gemm_kernel_if<K, true, true, false>(),
      tsr__gemm_kernel_if<K, false, false, true>(), tsr__gemm_kernel_if<K, true, false, true>(),
      tsr__gemm_kernel_if<K, false, true, true>(), tsr__gemm_kernel_if<K, true, true, true>()};
  /* Conjugations (complex): op(A) op(B) with conj on both is conj(A' B'), with conj on A only
     conj(A' conj(B')) (A', B': the operands transposed as asked, not conjugated), so the
     kernels conjugate at most B (cb = conj_a xor conj_b, in the multiply-adds' signs) and the
     epilogue conjugates the product when conj_a is set. */
  const bool cb = g->conj_a != g->conj_b;
  const bool vec =
      tsr__gpu_gemm_aligned(g->a, g->lda, K::VW) && tsr__gpu_gemm_aligned(g->b, g->ldb, K::VW);
  const int64_t col_tiles = (g->n + K::BN - 1) / K::BN, row_tiles = (g->m + K::BM - 1) / K::BM;
  if (col_tiles > 0x7fffffff)
    return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__,
                          "n = %lld exceeds the native GPU kernel's grid", (long long)g->n);
  dim3 grid((unsigned)col_tiles, (unsigned)(row_tiles < 65535 ? row_tiles : 65535),
            (unsigned)plan->splits);
  tsr__gemm_params<T> p;
  p.m = g->m;
  p.n = g->n;
  p.k = g->k;
  p.kchunk = plan->kchunk;
  p.alpha = tsr__gpu_scalar<T>(g->alpha, g->alpha_im);
  p.beta = tsr__gpu_scalar<T>(g->beta, g->beta_im);
  p.conj_acc = tsr__gpu_is_complex<T>::value && g->conj_a;
  p.a = (const T *)g->a;
  p.lda = g->lda;
  p.b = (const T *)g->b;
  p.ldb = g->ldb;
  p.c = (T *)g->c;
  p.ldc = g->ldc;
  p.work = NULL;
  size_t work_bytes = 0;
  if (plan->splits > 1) {
    work_bytes = (size_t)plan->splits * (size_t)(g->m * g->n) * sizeof(T);
    void *w = NULL;
    TSR_CALL(tsr__gpu_scratch_alloc(dev, work_bytes, &w));
    p.work = (T *)w;
  }
  kernel_fn kernel = kernels[(g->trans_a ? 1 : 0) + (g->trans_b ? 2 : 0) + (vec ? 4 : 0) +
                             (tsr__gpu_is_complex<T>::value && cb ? 8 : 0)];
  TSR__LAUNCH(kernel, grid, K::THREADS, s, p);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess && plan->splits > 1) {
    unsigned rgrid = tsr__gpu_grid_for(dev, g->m * g->n, TSR__GPU_BLOCK);
    TSR__LAUNCH(tsr__gpu_gemm_splitk_reduce<T>, rgrid, TSR__GPU_BLOCK, s, p, plan->splits);
    err = cudaGetLastError();
  }
  /* Queued behind the kernels on the stream: a later user of the block runs after them. */
  if (p.work) tsr__gpu_scratch_free(dev, p.work, work_bytes);
  if (err != cudaSuccess) return tsr__gpu_error(err, __func__, "GEMM kernel launch");
  return tsr__gpu_after_launch(s);
}

template <class KL, class KS>
static tsr_status tsr__gpu_gemm_typed(tsr_device dev, cudaStream_t s, const tsr__gemm_args *g) {
  const int sms = tsr__gpu_props_of(dev.index)->multiProcessorCount;
  const tsr__gemm_plan plan = tsr__gpu_gemm_plan(sms > 0 ? sms : 1, g, KL::BM, KL::BN, KL::MINB,
                                                 KS::BM, KS::BN, KS::MINB, sizeof(typename KL::T));
  return plan.large ? tsr__gpu_gemm_launch<KL>(dev, s, g, &plan)
                    : tsr__gpu_gemm_launch<KS>(dev, s, g, &plan);
}

tsr_status tsr__gpu_gemm_native(tsr_device dev, const tsr__gemm_args *g) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  if (g->m == 0 || g->n == 0) return TSR_OK;
  if ((g->alpha == 0.0 && g->alpha_im == 0.0) || g->k == 0) {
    switch (g->dtype) {
    case TSR_F32: return tsr__gpu_gemm_scale_launch<float>(dev, s, g);
    case TSR_F64: return tsr__gpu_gemm_scale_launch<double>(dev, s, g);
    case TSR_C64: return tsr__gpu_gemm_scale_launch<tsr__gpu_c64>(dev, s, g);
    case TSR_C128: return tsr__gpu_gemm_scale_launch<tsr__gpu_c128>(dev, s, g);
    default: break;
    }
  } else {
    switch (g->dtype) {
    case TSR_F32: return tsr__gpu_gemm_typed<tsr__gemm_f32_large, tsr__gemm_f32_small>(dev, s, g);
    case TSR_F64: return tsr__gpu_gemm_typed<tsr__gemm_f64_large, tsr__gemm_f64_small>(dev, s, g);
    case TSR_C64: return tsr__gpu_gemm_typed<tsr__gemm_c64, tsr__gemm_c64>(dev, s, g);
    case TSR_C128: return tsr__gpu_gemm_typed<tsr__gemm_c128, tsr__gemm_c128>(dev, s, g);
    default: break;
    }
  }
  return tsr__set_error(TSR_ERR_DTYPE, __func__, "GEMM needs f32, f64, c64 or c128 on %s, got %s",
                        TSR__GPU_NAME, tsr_dtype_name(g->dtype));
}

/*
 * TSR_GEMM_AUTO on a GPU: the vendor BLAS where it was built and is expected faster, else the
 * native kernels. One row per device family: the least m, n and k (all three) from which a
 * dtype goes to the vendor BLAS (INT64_MAX: never). Rows say where their figures come from;
 * the last row serves every device without one.
 *  - NVIDIA sm_90 (H100, driver 580, CUDA 13.0, the runbook of issue 29): at n = 8192 f32
 *    cuBLAS ran 50 TFLOP/s (FP32 without TF32) and the native kernel about 23 (0.45x); f64
 *    cuBLAS 57 (FP64 tensor cores) against about 5 native. Below 256 in any dimension the
 *    launch and handle costs dominate and the native kernel serves (not measured: kept from
 *    the earlier rule).
 *  - Others (not measured): the same rule. cuBLAS/hipBLAS are tuned per architecture, the
 *    native kernel is not, so the vendor library is the safer default until bench_gpu shows
 *    a shape where the native kernel wins.
 *  - c64 and c128 (not measured on any device yet: bench_gpu's c64/c128 rows are to confirm):
 *    the real dtypes' threshold.
 * A complex operand conjugated without being transposed (conj_x without trans_x: CBLAS's
 * row-major ConjNoTrans) has no vendor operation (cuBLAS and hipBLAS have N, T and C only, and
 * the row-major call maps row-major op(X) to column-major op(X)^T), so such calls always run
 * the native kernels, also when the vendor path is asked for (tsr__gpu_gemm_vendor_can).
 */
#if TSR_GPU_VENDOR_BLAS
typedef struct tsr__gpu_auto_row {
  int major; /* compute capability major (CUDA); 0: any device */
  int64_t min_f32, min_f64, min_c64, min_c128;
} tsr__gpu_auto_row;

static const tsr__gpu_auto_row tsr__gpu_auto_rows[] = {
    {9, 256, 256, 256, 256},
    {0, 256, 256, 256, 256},
};
#endif

/* Whether the vendor BLAS has the operations of the call (see above). */
static bool tsr__gpu_gemm_vendor_can(const tsr__gemm_args *g) {
  return !(g->conj_a && !g->trans_a) && !(g->conj_b && !g->trans_b);
}

static bool tsr__gpu_gemm_auto_vendor(tsr_device dev, const tsr__gemm_args *g) {
#if TSR_GPU_VENDOR_BLAS
  const int major = tsr__gpu_props_of(dev.index)->major;
  const tsr__gpu_auto_row *row = &tsr__gpu_auto_rows[0];
  while (row->major != 0 && row->major != major)
    row++;
  const int64_t least = g->dtype == TSR_F32   ? row->min_f32
                        : g->dtype == TSR_F64 ? row->min_f64
                        : g->dtype == TSR_C64 ? row->min_c64
                                              : row->min_c128;
  return g->m >= least && g->n >= least && g->k >= least;
#else
  (void)dev;
  (void)g;
  return false;
#endif
}

tsr_status tsr__gpu_gemm(tsr_device dev, const tsr__gemm_args *args) {
  if (!tsr__gpu_gemm_vendor_can(args)) return tsr__gpu_gemm_native(dev, args);
  if (args->path == TSR_GEMM_VENDOR) return tsr__gpu_gemm_vendor(dev, args);
  if (args->path == TSR_GEMM_AUTO && tsr__gpu_gemm_auto_vendor(dev, args)) {
    tsr_status st = tsr__gpu_gemm_vendor(dev, args);
    if (st != TSR_ERR_UNSUPPORTED) return st; /* e.g. sizes past a 32-bit vendor API */
  }
  return tsr__gpu_gemm_native(dev, args);
}
