/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sup path (small, unpacked: BLIS's term for its small-matrix GEMM without packing), one
 * source for every ISA and dtype (included by gemm_sup_avx512_f32.c, gemm_sup_avx512_f64.c and
 * gemm_sup_avx2.c, once per dtype, after defining):
 *
 *   TSR__SUP_NAME           the entry point's name (a tsr__gemm_sup_fn, gemm.h); the packed
 *                           path's edge tile is TSR__SUP_NAME##_edge (a tsr__gemm_edge_f32/f64)
 *   TSR__SUP_T              element type (float or double)
 *   TSR__SUP_V, TSR__SUP_L  vector type and its lanes
 *   TSR__SUP_MR             register rows: the ISA's micro-kernel MR (its NR is 2 * TSR__SUP_L)
 *   TSR__SUP_M              lane-mask type; TSR__SUP_MASK(n) the first n lanes, 1 <= n <= L
 *   TSR__SUP_ZERO(), TSR__SUP_SET1(x), TSR__SUP_LOAD(p), TSR__SUP_LOADM(msk, p) (lanes outside
 *   msk read as 0 and never fault), TSR__SUP_STORE(p, v), TSR__SUP_STOREM(p, msk, v),
 *   TSR__SUP_FMA(a, b, c) = a*b + c, TSR__SUP_MUL(a, b), TSR__SUP_ADD(a, b)
 *   TSR__SUP_PACK_B         the kernel's op(B) packing member (pack_b_f32 or pack_b_f64)
 *   TSR__SUP_HSUM(v)        the sum of v's lanes (a TSR__SUP_T)
 *   TSR__SUP_DI, TSR__SUP_DJ  the dot-product tile (below): rows of op(A) x rows of B^T
 *
 * Why: below about 100^3 the packed path (gemm_driver.c) spends as long packing op(A) and
 * op(B), padding edge tiles to the full MR x NR and handing out its tickets as it does
 * multiplying (sgemm 32^3 at 0.4x, 64^3 at 0.7x OpenBLAS's small-matrix kernels on Zen 5). Here
 * the register tile reads A and B where they are: each step broadcasts MR elements of op(A)
 * (any strides) and loads two vectors of a row of op(B) (unit stride; op(B) = B^T is packed one
 * NR-column strip at a time with the kernel's pack_b), and edge tiles run with exactly their
 * rows and masked columns instead of a padded tile and a copy. op(A) and C fit in L2 here, or
 * C is one strip (tsr__gemm_sup_path), so the only cache blocking is of a large op(B) in k.
 * A * B^T with few rows and a long k runs as dot products instead (TSR__SUP_DOT below): both
 * operands are then read along k where they lie, and nothing is transposed.
 * The idea is OpenBLAS's "small matrix" kernels (0.3.16+, SkylakeX); this is our own register
 * tiling, shared with the packed kernels' MR x NR.
 *
 * Loop order: NR-column strips of C (op(B)'s strip stays in L1) times MR-row blocks. Where the
 * ISA has the registers (TSR__SUP_NVW, AVX-512), op(B) read in place in one k block is taken in
 * wider strips of 4 vectors with tiles of at most 6 rows (TSR__SUP_WIDE): per FMA they read fewer
 * rows of op(A), each its own broadcast stream and row pointer. The k
 * loop of a tile runs in order p = 0, 1, ..., k-1 with one FMA per element, as the packed
 * kernels do, so both paths round the same way. An op(B) larger than L2 is taken in k blocks
 * of kb rows (tsr__gemm_sup_kblock, gemm_tune.h), outermost, each a pass over C.
 */
#ifndef TSR__SUP_NAME
#error "define TSR__SUP_NAME and the TSR__SUP_* operations before including gemm_sup_impl.h"
#endif
#if TSR__SUP_MR != 6 && TSR__SUP_MR != 14
#error "gemm_sup_impl.h has tile cases for MR 6 and 14"
#endif
/* TSR__SUP_MRS (optional, 1..MR; default MR): the most rows of a tile that reads op(A) = A in
   place (rows lda apart; see TSR__SUP_NAME). */
#ifndef TSR__SUP_MRS
#define TSR__SUP_MRS TSR__SUP_MR
#endif
#if TSR__SUP_MRS < 1 || TSR__SUP_MRS > TSR__SUP_MR
#error "TSR__SUP_MRS must be 1..TSR__SUP_MR"
#endif
/* TSR__SUP_NVW, TSR__SUP_MRW (optional; default 2 and MR, no wide tiles): with op(B) read in
   place and in one k block, C is taken in strips of TSR__SUP_NVW vectors (3 or 4; 2 for none)
   whose tiles have at most TSR__SUP_MRW rows (R x NVW accumulators, NVW vectors of op(B) and a
   broadcast must fit the ISA's vector registers). A wider, shorter tile reads fewer rows of
   op(A) per step (fewer broadcast streams and row pointers) and stores as many vectors per
   FMA. The packed strips (B^T) and the k-blocked path keep NR = 2 vectors: the kernel's pack_b
   and the prefetch distance are per NR strip. */
#ifndef TSR__SUP_NVW
#define TSR__SUP_NVW 2
#define TSR__SUP_MRW TSR__SUP_MR
#endif
#if TSR__SUP_NVW < 2 || TSR__SUP_NVW > 4 || TSR__SUP_MRW < 1 || TSR__SUP_MRW > 6
#error "TSR__SUP_NVW must be 2..4 and TSR__SUP_MRW 1..6"
#endif
/* TSR__SUP_MRU: the most rows of a tile one vector wide over A^T (op(A)'s rows one pointer):
   with 32 vector registers (MR 14) 16 accumulators, one k loop where 16 rows of n <= one vector
   would otherwise be two tiles of 8 (two loops, op(B)'s row loaded twice; sgemm 16^3 with
   op(A) = A^T, CBLAS column-major A * B^T, on Emerald Rapids). Else MR. */
#if TSR__SUP_MR == 14
#define TSR__SUP_MRU 16
#else
#define TSR__SUP_MRU TSR__SUP_MR
#endif
#if !((TSR__SUP_DI == 2 && TSR__SUP_DJ == 4) || (TSR__SUP_DI == 4 && TSR__SUP_DJ == 6))
#error "gemm_sup_impl.h has dot-product tile cases for 2 x 4 and 4 x 6"
#endif

/* TSR__SUP_LONG_K (optional, 0 or 1; default 0): the tiles' k loop is said to be long
   (__builtin_expect_with_probability). With its tile one case of a few hundred (TSR__SUP_ROWS),
   GCC otherwise takes the loop for cold beside the row-block loops around it and keeps their
   values in registers instead of the loop's row offsets, which it then reloads from the stack
   every step (AVX-512 sgemm 16^3 on Emerald Rapids: 7 reloads per 8 FMAs, bound by the load
   ports). With AVX2's 16 vector registers the hint makes GCC spill accumulators instead
   (callgrind: dgemm 64^3 +21 % instructions), so only the AVX-512 files set it. */
#ifndef TSR__SUP_LONG_K
#define TSR__SUP_LONG_K 0
#endif
#if TSR__SUP_LONG_K
#define TSR__SUP_KLOOP(cond) __builtin_expect_with_probability(cond, 1, 0.999)
#else
#define TSR__SUP_KLOOP(cond) (cond)
#endif

/* How many NR-column strips ahead the k-blocked loop prefetches B (gemm_tune.h). */
#define TSR__SUP_PF_STRIPS 4
#define TSR__SUP_CAT_(a, b) a##b
#define TSR__SUP_CAT(a, b) TSR__SUP_CAT_(a, b)
#define TSR__SUP_TILE TSR__SUP_CAT(TSR__SUP_NAME, _tile)
#define TSR__SUP_ROWS TSR__SUP_CAT(TSR__SUP_NAME, _rows)
#define TSR__SUP_EDGE TSR__SUP_CAT(TSR__SUP_NAME, _edge)
#define TSR__SUP_INPLACE TSR__SUP_CAT(TSR__SUP_NAME, _inplace)

/*
 * C[0:R, 0:cols] = alpha * op(A)[0:R, 0:k] * op(B)[0:k, 0:cols] + beta * C (beta == 0: C not
 * read). op(A)(i, p) at a[i*rs_a + p*cs_a]; op(B)(p, j) at b[p*ldb + j]; C(i, j) at
 * c[i*ldc + j]. NV (1..TSR__SUP_NVW) vectors of columns, the last one masked by mlast. R, NV and
 * the A stride that is 1 are constants where it is inlined, so the accumulators live in registers.
 * pf: each step also prefetches its row of op(B) TSR__SUP_PF_STRIPS strips to the right.
 */
static inline __attribute__((always_inline)) void
TSR__SUP_TILE(const int R, const int NV, const bool FULL, int64_t k, const TSR__SUP_T *a,
              int64_t rs_a, int64_t cs_a, const TSR__SUP_T *b, int64_t ldb, TSR__SUP_M mlast,
              TSR__SUP_T alpha, TSR__SUP_T beta, TSR__SUP_T *c, int64_t ldc, const bool pf) {
  /* One array per vector of columns (not one 2-D array: GCC keeps an aggregate that large in
     memory instead of in registers). */
  TSR__SUP_V acc0[TSR__SUP_MRU], acc1[TSR__SUP_MRU], acc2[TSR__SUP_MRW], acc3[TSR__SUP_MRW];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    acc0[r] = TSR__SUP_ZERO();
    if (NV > 1) acc1[r] = TSR__SUP_ZERO();
    if (NV > 2) acc2[r] = TSR__SUP_ZERO();
    if (NV > 3) acc3[r] = TSR__SUP_ZERO();
  }
  for (int64_t p = 0; TSR__SUP_KLOOP(p < k); ++p) {
    const TSR__SUP_T *bp = b + p * ldb;
    if (pf) {
      /* The same row's lines TSR__SUP_PF_STRIPS strips ahead (never faults). */
      __builtin_prefetch(bp + TSR__SUP_PF_STRIPS * 2 * TSR__SUP_L, 0, 3);
      __builtin_prefetch(bp + TSR__SUP_PF_STRIPS * 2 * TSR__SUP_L + TSR__SUP_L, 0, 3);
    }
    /* Vector v of the row: full below NV - 1, the last one masked unless FULL. */
#define TSR__SUP_BV(v)                                                                             \
  ((v) < NV - 1 || FULL ? TSR__SUP_LOAD(bp + (v)*TSR__SUP_L)                                       \
                        : TSR__SUP_LOADM(mlast, bp + (v)*TSR__SUP_L))
    const TSR__SUP_V b0 = TSR__SUP_BV(0);
    const TSR__SUP_V b1 = NV > 1 ? TSR__SUP_BV(1) : TSR__SUP_ZERO();
    const TSR__SUP_V b2 = NV > 2 ? TSR__SUP_BV(2) : TSR__SUP_ZERO();
    const TSR__SUP_V b3 = NV > 3 ? TSR__SUP_BV(3) : TSR__SUP_ZERO();
#undef TSR__SUP_BV
    const TSR__SUP_T *ap = a + p * cs_a;
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const TSR__SUP_V ar = TSR__SUP_SET1(ap[r * rs_a]);
      acc0[r] = TSR__SUP_FMA(ar, b0, acc0[r]);
      if (NV > 1) acc1[r] = TSR__SUP_FMA(ar, b1, acc1[r]);
      if (NV > 2) acc2[r] = TSR__SUP_FMA(ar, b2, acc2[r]);
      if (NV > 3) acc3[r] = TSR__SUP_FMA(ar, b3, acc3[r]);
    }
  }
  /* C = alpha * acc + beta * C in one of four forms chosen once per tile, not per vector
     (alpha and beta tested inside the row loop had GCC reload both from the stack and branch on
     each of them for every row: a fifth of an sgemm 16^3 call on Emerald Rapids). Each form
     rounds as the general one does: alpha = 1 multiplies exactly, and beta = 1 gives C + acc,
     which is fma(1, C, acc). beta = 0 never reads C; with alpha = 1 as well (form 3: NumPy's
     matmul, every C = A B) the accumulators are stored as they are. */
  const TSR__SUP_V va = TSR__SUP_SET1(alpha), vb = TSR__SUP_SET1(beta);
  const int form = beta == 0 ? (alpha == 1 ? 3 : 0) : alpha == 1 && beta == 1 ? 1 : 2;
  /* With a masked last vector, every row's new values first (in the accumulators), then the
     stores: a load of C that follows a masked store to the row before it, within the store's
     64 bytes (n not a multiple of the lanes, rows closer than a vector), waits for that store
     to retire (store forwarding fails on masked stores): sgemm 24^3 lost a third of its time
     there on Emerald Rapids (56 -> 84 GFLOP/s). Full vectors keep a row's loads and stores
     together.
     Vector v of row r (at cr): full below NV - 1, the last one masked unless FULL. */
#define TSR__SUP_CV(v)                                                                             \
  ((v) < NV - 1 || FULL ? TSR__SUP_LOAD(cr + (v)*TSR__SUP_L)                                       \
                        : TSR__SUP_LOADM(mlast, cr + (v)*TSR__SUP_L))
#define TSR__SUP_NEW(F, v, x)                                                                      \
  do {                                                                                             \
    if ((F) == 0)                                                                                  \
      (x) = TSR__SUP_MUL(va, (x));                                                                 \
    else if ((F) == 1)                                                                             \
      (x) = TSR__SUP_ADD(TSR__SUP_CV(v), (x));                                                     \
    else if ((F) == 2)                                                                             \
      (x) = TSR__SUP_FMA(vb, TSR__SUP_CV(v), TSR__SUP_MUL(va, (x)));                               \
  } while (0)
#define TSR__SUP_OUT(v, x)                                                                         \
  do {                                                                                             \
    if ((v) < NV - 1 || FULL)                                                                      \
      TSR__SUP_STORE(cr + (v)*TSR__SUP_L, (x));                                                    \
    else                                                                                           \
      TSR__SUP_STOREM(cr + (v)*TSR__SUP_L, mlast, (x));                                            \
  } while (0)
#define TSR__SUP_OUT_ROW(r)                                                                        \
  do {                                                                                             \
    TSR__SUP_OUT(0, acc0[r]);                                                                      \
    if (NV > 1) TSR__SUP_OUT(1, acc1[r]);                                                          \
    if (NV > 2) TSR__SUP_OUT(2, acc2[r]);                                                          \
    if (NV > 3) TSR__SUP_OUT(3, acc3[r]);                                                          \
  } while (0)
#define TSR__SUP_PUT_ROWS(F)                                                                       \
  do {                                                                                             \
    TSR__SUP_T *cr = c;                                                                            \
    _Pragma("GCC unroll 16") for (int r = 0; r < R; ++r) {                                         \
      TSR__SUP_NEW(F, 0, acc0[r]);                                                                 \
      if (NV > 1) TSR__SUP_NEW(F, 1, acc1[r]);                                                     \
      if (NV > 2) TSR__SUP_NEW(F, 2, acc2[r]);                                                     \
      if (NV > 3) TSR__SUP_NEW(F, 3, acc3[r]);                                                     \
      if (FULL) TSR__SUP_OUT_ROW(r);                                                               \
      cr += ldc;                                                                                   \
    }                                                                                              \
  } while (0)
  if (form == 1)
    TSR__SUP_PUT_ROWS(1);
  else if (form == 3)
    TSR__SUP_PUT_ROWS(3);
  else if (form == 0)
    TSR__SUP_PUT_ROWS(0);
  else
    TSR__SUP_PUT_ROWS(2);
  if (!FULL) {
    TSR__SUP_T *cr = c;
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      TSR__SUP_OUT_ROW(r);
      cr += ldc;
    }
  }
#undef TSR__SUP_PUT_ROWS
#undef TSR__SUP_OUT_ROW
#undef TSR__SUP_OUT
#undef TSR__SUP_NEW
#undef TSR__SUP_CV
}

/* One tile of R rows: NVA vectors of columns when nv == NVA, else NVB; specialized on which of
   op(A)'s strides is 1. TSR__SUP_ROWS takes NV 2 or 1, TSR__SUP_WROWS 4 or 3. */
#define TSR__SUP_CASE(R, NVA, NVB, FULL, PF)                                                       \
  case R:                                                                                          \
    if (nv == NVA) {                                                                               \
      if (a_rows_unit)                                                                             \
        TSR__SUP_TILE(R, NVA, FULL, k, ai, 1, cs_a, bs, ldbs, ml, alpha, beta, ci, ldc, PF);       \
      else                                                                                         \
        TSR__SUP_TILE(R, NVA, FULL, k, ai, rs_a, 1, bs, ldbs, ml, alpha, beta, ci, ldc, PF);       \
    } else {                                                                                       \
      if (a_rows_unit)                                                                             \
        TSR__SUP_TILE(R, NVB, FULL, k, ai, 1, cs_a, bs, ldbs, ml, alpha, beta, ci, ldc, PF);       \
      else                                                                                         \
        TSR__SUP_TILE(R, NVB, FULL, k, ai, rs_a, 1, bs, ldbs, ml, alpha, beta, ci, ldc, PF);       \
    }                                                                                              \
    break;
#define TSR__SUP_TILE_CASE(R) TSR__SUP_CASE(R, 2, 1, TSR__SUP_FULL, TSR__SUP_PF)
/* The narrow tiles, 1..MR rows, for the TSR__SUP_FULL and TSR__SUP_PF defined around it. */
#if TSR__SUP_MR > 6
#define TSR__SUP_ROWS_HI                                                                           \
  TSR__SUP_TILE_CASE(7)                                                                            \
  TSR__SUP_TILE_CASE(8)                                                                            \
  TSR__SUP_TILE_CASE(9)                                                                            \
  TSR__SUP_TILE_CASE(10)                                                                           \
  TSR__SUP_TILE_CASE(11)                                                                           \
  TSR__SUP_TILE_CASE(12)                                                                           \
  TSR__SUP_TILE_CASE(13)                                                                           \
  TSR__SUP_TILE_CASE(14)
#else
#define TSR__SUP_ROWS_HI
#endif
/* The tiles of more than MR rows (up to TSR__SUP_MRU): one vector, op(A) = A^T only (the caller's
   row blocks make them only there). */
#define TSR__SUP_UCASE(R)                                                                          \
  case R:                                                                                          \
    TSR__SUP_TILE(R, 1, TSR__SUP_FULL, k, ai, 1, cs_a, bs, ldbs, ml, alpha, beta, ci, ldc,         \
                  TSR__SUP_PF);                                                                    \
    break;
#if TSR__SUP_MRU > TSR__SUP_MR
#define TSR__SUP_ROWS_U TSR__SUP_UCASE(15) TSR__SUP_UCASE(16)
#else
#define TSR__SUP_ROWS_U
#endif
#define TSR__SUP_ROWS_SWITCH                                                                       \
  switch (rows) {                                                                                  \
    TSR__SUP_TILE_CASE(1)                                                                          \
    TSR__SUP_TILE_CASE(2)                                                                          \
    TSR__SUP_TILE_CASE(3)                                                                          \
    TSR__SUP_TILE_CASE(4)                                                                          \
    TSR__SUP_TILE_CASE(5)                                                                          \
    TSR__SUP_TILE_CASE(6)                                                                          \
    TSR__SUP_ROWS_HI                                                                               \
    TSR__SUP_ROWS_U                                                                                \
  default: break;                                                                                  \
  }

/* One tile of `rows` rows (1..MR) and nv vectors of columns, the tile specialized on both, on
   which of op(A)'s strides is 1, on whether the last vector is full (no mask: `full`, when the
   columns are a multiple of the lanes) and on pf (arguments as TSR__SUP_TILE's). Each flag is a
   constant in the k loop, none a register or a test there: on Emerald Rapids the k loop of the
   8 x 2 tile (dgemm 16^3) had reloaded the mask from the stack, tested pf and spilled a row
   pointer to a vector register in every step. The prefetching tiles (large op(B)) mask. */
static inline __attribute__((always_inline)) void
TSR__SUP_ROWS(int rows, int nv, bool full, bool a_rows_unit, int64_t k, const TSR__SUP_T *ai,
              int64_t rs_a, int64_t cs_a, const TSR__SUP_T *bs, int64_t ldbs, TSR__SUP_M ml,
              TSR__SUP_T alpha, TSR__SUP_T beta, TSR__SUP_T *ci, int64_t ldc, bool pf) {
  if (pf) {
#define TSR__SUP_FULL false
#define TSR__SUP_PF true
    TSR__SUP_ROWS_SWITCH
#undef TSR__SUP_FULL
#undef TSR__SUP_PF
  } else if (full) {
#define TSR__SUP_FULL true
#define TSR__SUP_PF false
    TSR__SUP_ROWS_SWITCH
#undef TSR__SUP_FULL
#undef TSR__SUP_PF
  } else {
#define TSR__SUP_FULL false
#define TSR__SUP_PF false
    TSR__SUP_ROWS_SWITCH
#undef TSR__SUP_FULL
#undef TSR__SUP_PF
  }
}

/* One tile of a wide strip (3..TSR__SUP_NVW vectors), `rows` 1..TSR__SUP_MRW. */
#define TSR__SUP_WROWS TSR__SUP_CAT(TSR__SUP_NAME, _wrows)
#define TSR__SUP_WIDE TSR__SUP_CAT(TSR__SUP_NAME, _wide)
#define TSR__SUP_WTILE_CASE(R) TSR__SUP_CASE(R, 4, 3, TSR__SUP_FULL, false)
#if TSR__SUP_NVW > 2
/* The cases 1..TSR__SUP_MRW. */
#define TSR__SUP_WC_1 TSR__SUP_WTILE_CASE(1)
#if TSR__SUP_MRW > 1
#define TSR__SUP_WC_2 TSR__SUP_WTILE_CASE(2)
#else
#define TSR__SUP_WC_2
#endif
#if TSR__SUP_MRW > 2
#define TSR__SUP_WC_3 TSR__SUP_WTILE_CASE(3)
#else
#define TSR__SUP_WC_3
#endif
#if TSR__SUP_MRW > 3
#define TSR__SUP_WC_4 TSR__SUP_WTILE_CASE(4)
#else
#define TSR__SUP_WC_4
#endif
#if TSR__SUP_MRW > 4
#define TSR__SUP_WC_5 TSR__SUP_WTILE_CASE(5)
#else
#define TSR__SUP_WC_5
#endif
#if TSR__SUP_MRW > 5
#define TSR__SUP_WC_6 TSR__SUP_WTILE_CASE(6)
#else
#define TSR__SUP_WC_6
#endif
#define TSR__SUP_WROWS_SWITCH                                                                      \
  switch (rows) {                                                                                  \
    TSR__SUP_WC_1                                                                                  \
    TSR__SUP_WC_2                                                                                  \
    TSR__SUP_WC_3                                                                                  \
    TSR__SUP_WC_4                                                                                  \
    TSR__SUP_WC_5                                                                                  \
    TSR__SUP_WC_6                                                                                  \
  default: break;                                                                                  \
  }
static inline __attribute__((always_inline)) void
TSR__SUP_WROWS(int rows, int nv, bool full, bool a_rows_unit, int64_t k, const TSR__SUP_T *ai,
               int64_t rs_a, int64_t cs_a, const TSR__SUP_T *bs, int64_t ldbs, TSR__SUP_M ml,
               TSR__SUP_T alpha, TSR__SUP_T beta, TSR__SUP_T *ci, int64_t ldc) {
  if (full) {
#define TSR__SUP_FULL true
    TSR__SUP_WROWS_SWITCH
#undef TSR__SUP_FULL
  } else {
#define TSR__SUP_FULL false
    TSR__SUP_WROWS_SWITCH
#undef TSR__SUP_FULL
  }
}
#endif

/*
 * A * B^T by dot products (tsr__gemm_sup_dot, gemm.h): op(A) = A and op(B) = B^T, both stored
 * with unit stride along k, so a tile of DI rows of A and DJ rows of B loads vectors along k from
 * both and keeps DI x DJ vector accumulators, summed across lanes at the end. Nothing is
 * transposed or packed: each row of B is read once per k block, front to back (the strip path
 * above must transpose B^T into NR-column strips). op(A) and C rows DI at a time.
 * C[0:RI, 0:RJ] = alpha * A[0:RI, 0:k] * B[0:RJ, 0:k]^T + beta * C (beta == 0: C not read).
 */
#define TSR__SUP_DTILE TSR__SUP_CAT(TSR__SUP_NAME, _dtile)
#define TSR__SUP_DOT TSR__SUP_CAT(TSR__SUP_NAME, _dot)
static inline __attribute__((always_inline)) void
TSR__SUP_DTILE(const int RI, const int RJ, int64_t k, const TSR__SUP_T *a, int64_t lda,
               const TSR__SUP_T *b, int64_t ldb, TSR__SUP_T alpha, TSR__SUP_T beta, TSR__SUP_T *c,
               int64_t ldc) {
  TSR__SUP_V acc[TSR__SUP_DI * TSR__SUP_DJ], av[TSR__SUP_DI];
#pragma GCC unroll 32
  for (int t = 0; t < RI * RJ; ++t)
    acc[t] = TSR__SUP_ZERO();
  int64_t p = 0;
  for (; p + TSR__SUP_L <= k; p += TSR__SUP_L) {
#pragma GCC unroll 8
    for (int r = 0; r < RI; ++r)
      av[r] = TSR__SUP_LOAD(a + r * lda + p);
#pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) {
      const TSR__SUP_V bv = TSR__SUP_LOAD(b + j * ldb + p);
#pragma GCC unroll 8
      for (int r = 0; r < RI; ++r)
        acc[r * RJ + j] = TSR__SUP_FMA(av[r], bv, acc[r * RJ + j]);
    }
  }
  if (p < k) {
    const TSR__SUP_M ml = TSR__SUP_MASK((int)(k - p));
#pragma GCC unroll 8
    for (int r = 0; r < RI; ++r)
      av[r] = TSR__SUP_LOADM(ml, a + r * lda + p);
#pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) {
      const TSR__SUP_V bv = TSR__SUP_LOADM(ml, b + j * ldb + p);
#pragma GCC unroll 8
      for (int r = 0; r < RI; ++r)
        acc[r * RJ + j] = TSR__SUP_FMA(av[r], bv, acc[r * RJ + j]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < RI; ++r)
#pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) {
      const TSR__SUP_T x = alpha * TSR__SUP_HSUM(acc[r * RJ + j]);
      TSR__SUP_T *cp = c + r * ldc + j;
      *cp = beta == 0 ? x : x + beta * *cp;
    }
}

#define TSR__SUP_DCASE(RI, RJ)                                                                     \
  case (RI)*8 + (RJ):                                                                              \
    TSR__SUP_DTILE(RI, RJ, k, ai, g->lda, bj, g->ldb, alpha, beta, c + i0 * ldc + j0, ldc);        \
    break;

static __attribute__((noinline)) void TSR__SUP_DOT(const tsr__gemm_args *g, int64_t kb) {
  const TSR__SUP_T alpha = (TSR__SUP_T)g->alpha;
  const int64_t m = g->m, n = g->n, ldc = g->ldc;
  TSR__SUP_T *c = g->c;
  for (int64_t p0 = 0; p0 < g->k; p0 += kb) {
    const int64_t k = g->k - p0 < kb ? g->k - p0 : kb;
    const TSR__SUP_T beta = p0 == 0 ? (TSR__SUP_T)g->beta : 1;
    for (int64_t j0 = 0; j0 < n; j0 += TSR__SUP_DJ) {
      const int rj = (int)(n - j0 < TSR__SUP_DJ ? n - j0 : TSR__SUP_DJ);
      const TSR__SUP_T *bj = (const TSR__SUP_T *)g->b + j0 * g->ldb + p0;
      for (int64_t i0 = 0; i0 < m; i0 += TSR__SUP_DI) {
        const int ri = (int)(m - i0 < TSR__SUP_DI ? m - i0 : TSR__SUP_DI);
        const TSR__SUP_T *ai = (const TSR__SUP_T *)g->a + i0 * g->lda + p0;
        switch (ri * 8 + rj) {
          TSR__SUP_DCASE(1, 1)
          TSR__SUP_DCASE(1, 2)
          TSR__SUP_DCASE(1, 3)
          TSR__SUP_DCASE(1, 4)
          TSR__SUP_DCASE(2, 1)
          TSR__SUP_DCASE(2, 2)
          TSR__SUP_DCASE(2, 3)
          TSR__SUP_DCASE(2, 4)
#if TSR__SUP_DI == 4 /* the 4 x 6 tile */
          TSR__SUP_DCASE(1, 5)
          TSR__SUP_DCASE(1, 6)
          TSR__SUP_DCASE(2, 5)
          TSR__SUP_DCASE(2, 6)
          TSR__SUP_DCASE(3, 1)
          TSR__SUP_DCASE(3, 2)
          TSR__SUP_DCASE(3, 3)
          TSR__SUP_DCASE(3, 4)
          TSR__SUP_DCASE(3, 5)
          TSR__SUP_DCASE(3, 6)
          TSR__SUP_DCASE(4, 1)
          TSR__SUP_DCASE(4, 2)
          TSR__SUP_DCASE(4, 3)
          TSR__SUP_DCASE(4, 4)
          TSR__SUP_DCASE(4, 5)
          TSR__SUP_DCASE(4, 6)
#endif
        default: break;
        }
      }
    }
  }
}
#undef TSR__SUP_DCASE

#ifndef TSR__GEMM_SUP_SPLIT_DEFINED
#define TSR__GEMM_SUP_SPLIT_DEFINED
/* m rows in nblk blocks of near-equal height: *base rows each, the first *extra one more.
   32-bit division where m allows (a 64-bit one by a variable is tens of cycles: a quarter of a
   16^3 product's per-call budget). */
static inline __attribute__((always_inline)) void
tsr__gemm_sup_split(int64_t m, int64_t nblk, int64_t *base, int64_t *extra) {
  if (nblk <= 2) { /* no division: the smallest calls (a division is ~10 cycles) */
    *base = nblk == 1 ? m : m >> 1;
    *extra = nblk == 1 ? 0 : m & 1;
  } else if (m <= INT32_MAX) {
    *base = (int64_t)((uint32_t)m / (uint32_t)nblk);
    *extra = (int64_t)((uint32_t)m % (uint32_t)nblk);
  } else {
    *base = m / nblk;
    *extra = m % nblk;
  }
}
#endif

/* How many row blocks the narrow tiles take m in: at most MR rows over A^T (one pointer for its
   rows), at most TSR__SUP_MRS over A read in place (a pointer per row; see TSR__SUP_NAME). Constant
   divisors. */
#define TSR__SUP_NBLK(m, a_rows_unit)                                                              \
  ((a_rows_unit) ? ((m) + TSR__SUP_MR - 1) / TSR__SUP_MR : ((m) + TSR__SUP_MRS - 1) / TSR__SUP_MRS)

#if TSR__SUP_NVW > 2
/* The call in strips of TSR__SUP_NVW vectors (op(B) in place, one k block; n > NR): tiles of up
   to TSR__SUP_MRW rows, and a last strip of at most 2 vectors in TSR__SUP_ROWS's tiles. A
   function of its own, so that the narrow path's registers and code stay as they were for the
   smallest calls. */
static __attribute__((noinline)) void TSR__SUP_WIDE(const tsr__gemm_args *g, TSR__SUP_T alpha,
                                                    bool a_rows_unit, int64_t rs_a, int64_t cs_a) {
  enum { W = TSR__SUP_NVW * TSR__SUP_L };
  const int64_t m = g->m, n = g->n, k = g->k, ldb = g->ldb, ldc = g->ldc;
  const TSR__SUP_T beta = (TSR__SUP_T)g->beta;
  const TSR__SUP_T *a = g->a, *b = g->b;
  TSR__SUP_T *c = g->c;
  const int64_t wblk = (m + TSR__SUP_MRW - 1) / TSR__SUP_MRW;
  int64_t wbase, wextra;
  tsr__gemm_sup_split(m, wblk, &wbase, &wextra);
  /* Two loops, not one with a branch per tile: merged, dgemm 64^3 ran ~1.3 % slower (Zen 4). */
  for (int64_t j0 = 0; j0 < n; j0 += W) {
    const int64_t cols = n - j0 < W ? n - j0 : W;
    const int nv = (int)((cols + TSR__SUP_L - 1) / TSR__SUP_L);
    const int last = (int)(cols - (nv - 1) * TSR__SUP_L);
    const TSR__SUP_M ml = TSR__SUP_MASK(last);
    const bool full = last == TSR__SUP_L;
    if (nv > 2) {
      for (int64_t bi = 0, i0 = 0; bi < wblk; ++bi) {
        const int rows = (int)(wbase + (bi < wextra ? 1 : 0));
        TSR__SUP_WROWS(rows, nv, full, a_rows_unit, k, a + i0 * rs_a, rs_a, cs_a, b + j0, ldb, ml,
                       alpha, beta, c + i0 * ldc + j0, ldc);
        i0 += rows;
      }
    } else { /* the last strip, at most 2 vectors */
      const int64_t nblk = TSR__SUP_NBLK(m, a_rows_unit);
      int64_t base, extra;
      tsr__gemm_sup_split(m, nblk, &base, &extra);
      for (int64_t bi = 0, i0 = 0; bi < nblk; ++bi) {
        const int rows = (int)(base + (bi < extra ? 1 : 0));
        TSR__SUP_ROWS(rows, nv, full, a_rows_unit, k, a + i0 * rs_a, rs_a, cs_a, b + j0, ldb, ml,
                      alpha, beta, c + i0 * ldc + j0, ldc, false);
        i0 += rows;
      }
    }
  }
}
#endif

/* A strip of cols columns (1..NR): its vectors *nv (1 or 2), the last one's lanes *ml and
   whether they are all of it (*full). */
#define TSR__SUP_STRIP TSR__SUP_CAT(TSR__SUP_NAME, _strip)
static inline __attribute__((always_inline)) void TSR__SUP_STRIP(int64_t cols, int *nv,
                                                                 TSR__SUP_M *ml, bool *full) {
  *nv = cols > TSR__SUP_L ? 2 : 1;
  const int last = (int)(cols - (*nv - 1) * TSR__SUP_L);
  *ml = TSR__SUP_MASK(last);
  *full = last == TSR__SUP_L;
}

/* A call of one tile (one strip, one row block; see TSR__SUP_INPLACE): the tile, without loops.
   A function of its own: inside TSR__SUP_INPLACE beside the loops, the loops' values no longer fit
   the registers and calls of several tiles spilled more of them (sgemm 16^3 NN: +36
   instructions). */
#define TSR__SUP_ONE TSR__SUP_CAT(TSR__SUP_NAME, _one)
static __attribute__((noinline)) void TSR__SUP_ONE(const tsr__gemm_args *g) {
  int nv;
  TSR__SUP_M ml;
  bool full;
  TSR__SUP_STRIP(g->n, &nv, &ml, &full);
  TSR__SUP_ROWS((int)g->m, nv, full, g->trans_a, g->k, g->a, g->trans_a ? 1 : g->lda,
                g->trans_a ? g->lda : 1, g->b, g->ldb, ml, (TSR__SUP_T)g->alpha,
                (TSR__SUP_T)g->beta, g->c, g->ldc, false);
}

/*
 * The call with op(B) read in place in one k block, not as dot products (TSR__SUP_NAME##_inplace,
 * a tsr__gemm_inplace_fn, gemm.h): the tiny lane's call (gemm_driver.c), and TSR__SUP_NAME's
 * when it neither packs op(B) nor blocks k. A function of its own with nothing to decide but the
 * strips and row blocks: the general entry's questions (dot products, packing, k blocks,
 * prefetch) and the registers its loops hold were ~100 of the ~600 instructions of an sgemm 16^3
 * call through CBLAS before its first FMA (Emerald Rapids, issue 31). A call of one tile (one
 * strip, one row block: up to 16^3 f32 with op(A) = A^T) runs it without loops (TSR__SUP_ONE):
 * ~60 fewer instructions in that sgemm 16^3.
 */
void TSR__SUP_INPLACE(const tsr__gemm_args *g) {
  enum { NR = 2 * TSR__SUP_L };
  const int64_t m = g->m, n = g->n;
  const bool a_rows_unit = g->trans_a;
  /* One strip (0 < n <= NR: the mask needs a lane) and one row block (TSR__SUP_NBLK's bounds). */
  if ((uint64_t)(n - 1) < (uint64_t)NR &&
      m <= (a_rows_unit ? (n <= TSR__SUP_L ? TSR__SUP_MRU : TSR__SUP_MR) : TSR__SUP_MRS)) {
    TSR__SUP_ONE(g);
    return;
  }
  const TSR__SUP_T alpha = (TSR__SUP_T)g->alpha;
  /* op(A)(i, p) at a[i*rs_a + p*cs_a]: A^T has unit-stride rows of op(A)'s columns. */
  const int64_t rs_a = g->trans_a ? 1 : g->lda, cs_a = g->trans_a ? g->lda : 1;
#if TSR__SUP_NVW > 2
  if (n > NR) {
    TSR__SUP_WIDE(g, alpha, a_rows_unit, rs_a, cs_a);
    return;
  }
#endif
  const int64_t k = g->k, ldb = g->ldb, ldc = g->ldc;
  const TSR__SUP_T beta = (TSR__SUP_T)g->beta;
  const TSR__SUP_T *a = g->a, *b = g->b;
  TSR__SUP_T *c = g->c;
  /* Row blocks as TSR__SUP_NAME's (below). */
  const int64_t nblk = a_rows_unit && n <= TSR__SUP_L ? (m + TSR__SUP_MRU - 1) / TSR__SUP_MRU
                                                      : TSR__SUP_NBLK(m, a_rows_unit);
  int64_t base, extra;
  tsr__gemm_sup_split(m, nblk, &base, &extra);
  for (int64_t j0 = 0; j0 < n; j0 += NR) {
    int nv;
    TSR__SUP_M ml;
    bool full;
    TSR__SUP_STRIP(n - j0 < NR ? n - j0 : NR, &nv, &ml, &full);
    for (int64_t bi = 0, i0 = 0; bi < nblk; ++bi) {
      const int rows = (int)(base + (bi < extra ? 1 : 0));
      TSR__SUP_ROWS(rows, nv, full, a_rows_unit, k, a + i0 * rs_a, rs_a, cs_a, b + j0, ldb, ml,
                    alpha, beta, c + i0 * ldc + j0, ldc, false);
      i0 += rows;
    }
  }
}

void TSR__SUP_NAME(const tsr__gemm_args *g, const tsr__gemm_kernel *ker, int64_t kb, void *buf) {
  enum { NR = 2 * TSR__SUP_L };
  if (tsr__gemm_sup_dot(g)) {
    TSR__SUP_DOT(g, kb);
    return;
  }
  const TSR__SUP_T alpha = (TSR__SUP_T)g->alpha;
  /* op(A)(i, p) at a[i*rs_a + p*cs_a]: A^T has unit-stride rows of op(A)'s columns. */
  const bool a_rows_unit = g->trans_a;
  const int64_t rs_a = g->trans_a ? 1 : g->lda, cs_a = g->trans_a ? g->lda : 1;
  const bool pack_b = tsr__gemm_sup_pack_b(g, TSR__SUP_MR);
  if (!pack_b && kb >= g->k) {
    TSR__SUP_INPLACE(g);
    return;
  }
  /* With k blocks (kb < k), B in place is read row block by row block, the next strips'
     lines of each row prefetched: each row of B is then read front to back. */
  const bool pf = kb < g->k && !pack_b;
  const int64_t m = g->m, n = g->n, ldc = g->ldc;
  TSR__SUP_T *c = g->c, *bbuf = buf;
  /* Row blocks of near-equal height (16 rows: 8 + 8, not 14 + 2): a short last block has too
     few independent accumulators to cover the FMA latency. Divided once per call: a 64-bit
     division costs as much as a 4 x 4 product. With op(A) = A (rows lda apart) each row of
     the tile needs its own pointer, and past about 10 rows they no longer fit in the general
     registers beside the loop's: the compiler reloads them from the stack in the k loop.
     TSR__SUP_MRS caps those tiles where that was measured to cost (gemm_sup_avx512_f32.c). A^T's
     rows are one pointer, and take the full MR, or TSR__SUP_MRU rows when n is one vector. */
  /* Constant divisors (TSR__SUP_NBLK), and no 64-bit division (tsr__gemm_sup_split). */
  const int64_t nblk = a_rows_unit && n <= TSR__SUP_L ? (m + TSR__SUP_MRU - 1) / TSR__SUP_MRU
                                                      : TSR__SUP_NBLK(m, a_rows_unit);
  int64_t base, extra;
  tsr__gemm_sup_split(m, nblk, &base, &extra);
  for (int64_t p0 = 0; p0 < g->k; p0 += kb) {
    const int64_t k = g->k - p0 < kb ? g->k - p0 : kb;
    const TSR__SUP_T *a = (const TSR__SUP_T *)g->a + p0 * cs_a;
    const TSR__SUP_T *b = (const TSR__SUP_T *)g->b + p0 * (g->trans_b ? 1 : g->ldb);
    const TSR__SUP_T beta = p0 == 0 ? (TSR__SUP_T)g->beta : 1;
    for (int64_t j0 = 0; j0 < n; j0 += NR) {
      const int64_t cols = n - j0 < NR ? n - j0 : NR;
      int nv;
      TSR__SUP_M ml;
      bool full;
      TSR__SUP_STRIP(cols, &nv, &ml, &full);
      const TSR__SUP_T *bs;
      int64_t ldbs;
      if (pack_b) {
        /* One NR micro-panel: B^T's strip, or one whose rows alias in L1 (gemm.h). A strip of
           B^T of at most one vector is packed one vector wide: the tiles read no more (sgemm
           16^3 with op(B) = B^T had packed and stored a second, zero half). */
        const int nrp = g->trans_b && cols <= TSR__SUP_L ? TSR__SUP_L : NR;
        ker->TSR__SUP_PACK_B(nrp, k, cols, b + (g->trans_b ? j0 * g->ldb : j0), g->ldb, g->trans_b,
                             bbuf);
        bs = bbuf;
        ldbs = nrp;
      } else {
        bs = b + j0;
        ldbs = g->ldb;
      }
      for (int64_t bi = 0, i0 = 0; bi < nblk; ++bi) {
        const int rows = (int)(base + (bi < extra ? 1 : 0));
        const TSR__SUP_T *ai = a + i0 * rs_a;
        TSR__SUP_T *ci = c + i0 * ldc + j0;
        TSR__SUP_ROWS(rows, nv, full, a_rows_unit, k, ai, rs_a, cs_a, bs, ldbs, ml, alpha, beta, ci,
                      ldc, pf);
        i0 += rows;
      }
    }
  }
}

/* The packed path's edge tiles (tsr__gemm_edge_f32/f64, gemm.h): an mb x nb corner of C from an
   MR-row micro-panel of op(A) (element (i, p) at ap[p*MR + i]) and an NR-column micro-panel of
   op(B) ((p, j) at bp[p*NR + j]), with exactly mb rows and masked columns, no padded tile. */
void TSR__SUP_EDGE(int mb, int nb, int64_t k, const TSR__SUP_T *ap, const TSR__SUP_T *bp,
                   TSR__SUP_T alpha, TSR__SUP_T beta, TSR__SUP_T *c, int64_t ldc) {
  const int nv = nb > TSR__SUP_L ? 2 : 1, last = nb - (nv - 1) * TSR__SUP_L;
  TSR__SUP_ROWS(mb, nv, last == TSR__SUP_L, true, k, ap, 1, TSR__SUP_MR, bp, 2 * TSR__SUP_L,
                TSR__SUP_MASK(last), alpha, beta, c, ldc, false);
}

#undef TSR__SUP_CASE
#undef TSR__SUP_ROWS_SWITCH
#undef TSR__SUP_ROWS_HI
#undef TSR__SUP_ROWS_U
#undef TSR__SUP_UCASE
#undef TSR__SUP_MRU
#undef TSR__SUP_WROWS_SWITCH
#undef TSR__SUP_WC_1
#undef TSR__SUP_WC_2
#undef TSR__SUP_WC_3
#undef TSR__SUP_WC_4
#undef TSR__SUP_WC_5
#undef TSR__SUP_WC_6
#undef TSR__SUP_NBLK
#undef TSR__SUP_TILE_CASE
#undef TSR__SUP_WTILE_CASE
#undef TSR__SUP_WROWS
#undef TSR__SUP_WIDE
#undef TSR__SUP_NVW
#undef TSR__SUP_MRW
#undef TSR__SUP_DTILE
#undef TSR__SUP_DOT
#undef TSR__SUP_HSUM
#undef TSR__SUP_DI
#undef TSR__SUP_DJ
#undef TSR__SUP_PF_STRIPS
#undef TSR__SUP_LONG_K
#undef TSR__SUP_KLOOP
#undef TSR__SUP_MRS
#undef TSR__SUP_TILE
#undef TSR__SUP_ROWS
#undef TSR__SUP_EDGE
#undef TSR__SUP_INPLACE
#undef TSR__SUP_ONE
#undef TSR__SUP_STRIP
#undef TSR__SUP_CAT
#undef TSR__SUP_CAT_
#undef TSR__SUP_NAME
#undef TSR__SUP_T
#undef TSR__SUP_V
#undef TSR__SUP_L
#undef TSR__SUP_MR
#undef TSR__SUP_M
#undef TSR__SUP_MASK
#undef TSR__SUP_ZERO
#undef TSR__SUP_SET1
#undef TSR__SUP_LOAD
#undef TSR__SUP_LOADM
#undef TSR__SUP_STORE
#undef TSR__SUP_STOREM
#undef TSR__SUP_FMA
#undef TSR__SUP_MUL
#undef TSR__SUP_ADD
#undef TSR__SUP_PACK_B
