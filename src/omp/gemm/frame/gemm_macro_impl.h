/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The macro-kernel body, one source for both precisions: gemm_macro.c includes it once per
 * dtype after defining its parameters (the C-template convention, docs/conventions.md; this
 * file #undefs them at its end):
 *   TSR__MACRO_T     the element type (float, double)
 *   TSR__MACRO_UKR   the kernel's micro-kernel field (ukr_f32, ukr_f64)
 *   TSR__MACRO_UKR_STREAM  its streaming variant's field (ukr_stream_f32, ukr_stream_f64)
 *   TSR__MACRO_EDGE  its edge-tile field (edge_f32, edge_f64)
 *   TSR__MACRO_NAME  the function to define (tsr__gemm_macro_f32, tsr__gemm_macro_f64)
 * (no include guard: included twice on purpose). The body calls the element type T (a local
 * typedef).
 *
 * jr over the NR micro-panels of B [q0, q1), ir over the MR micro-panels of the packed A
 * block, jr outer for deep k slices and ir outer for shallow ones (TSR__GEMM_ROWWISE_KC,
 * gemm_macro.c), pl->sweep micro-panels of B at a time. Full tiles go straight to C; edge tiles
 * too, through the kernel's edge function (exactly mb rows, masked columns) where it has one, else
 * through a temporary MR x NR tile (at most TSR__GEMM_MAX_TILE elements, whatever the kernel) so
 * the micro-kernel always writes whole tiles, and only the mb x nb corner is copied out (beta == 0
 * never reads C). With pl->stream_c the full tiles go through the streaming micro-kernel
 * (non-temporal stores, then one SFENCE when the macro-kernel ends, before the unit is counted
 * done).
 */
#if !defined(TSR__MACRO_T) || !defined(TSR__MACRO_UKR) || !defined(TSR__MACRO_UKR_STREAM) ||       \
    !defined(TSR__MACRO_EDGE) || !defined(TSR__MACRO_NAME)
#error "define TSR__MACRO_T, _UKR, _UKR_STREAM, _EDGE and _NAME before including gemm_macro_impl.h"
#endif
static void TSR__MACRO_NAME(const tsr__gemm_plan *pl, const char *abuf, const char *bbuf,
                            int64_t ic, int64_t jc, int64_t mcb, int64_t kcb, int64_t ncb,
                            int64_t q0, int64_t q1, double beta_d) {
  typedef TSR__MACRO_T T;
  const tsr__gemm_args *g = pl->g;
  const tsr__gemm_kernel *ker = pl->ker;
  const int mr = ker->mr, nr = ker->nr;
  const int64_t ldc = g->ldc, mpan = (mcb + mr - 1) / mr;
  _Alignas(64) T t[TSR__GEMM_MAX_TILE];
  const T alpha = (T)g->alpha, beta = (T)beta_d;
  const T *ap = (const T *)(const void *)abuf, *bp = (const T *)(const void *)bbuf;
  /* One tile: the micro-kernel straight into C, or into t for an edge tile. */
#define TSR__MACRO_TILE(r, q)                                                                      \
  do {                                                                                             \
    const int64_t i = (r)*mr, mb = mcb - i < mr ? mcb - i : mr;                                    \
    const int64_t j = (q)*nr, nb = ncb - j < nr ? ncb - j : nr;                                    \
    const T *bq = bp + j * kcb;                                                                    \
    T *c = (T *)g->c + (ic + i) * ldc + jc + j;                                                    \
    if (mb == mr && nb == nr) {                                                                    \
      if (pl->stream_c)                                                                            \
        ker->TSR__MACRO_UKR_STREAM(kcb, alpha, ap + i * kcb, bq, (T)0, c, ldc, 1);                 \
      else                                                                                         \
        ker->TSR__MACRO_UKR(kcb, alpha, ap + i * kcb, bq, beta, c, ldc, 1);                        \
    } else if (ker->TSR__MACRO_EDGE) {                                                             \
      ker->TSR__MACRO_EDGE((int)mb, (int)nb, kcb, ap + i * kcb, bq, alpha, beta, c, ldc);          \
    } else {                                                                                       \
      ker->TSR__MACRO_UKR(kcb, alpha, ap + i * kcb, bq, (T)0, t, nr, 1);                           \
      for (int64_t ii = 0; ii < mb; ++ii)                                                          \
        for (int64_t jj = 0; jj < nb; ++jj)                                                        \
          c[ii * ldc + jj] =                                                                       \
              beta == 0 ? t[ii * nr + jj] : t[ii * nr + jj] + beta * c[ii * ldc + jj];             \
    }                                                                                              \
  } while (0)
  if (!pl->stream_c && kcb <= TSR__GEMM_ROWWISE_KC) {
    for (int64_t s0 = q0; s0 < q1; s0 += pl->sweep) {
      const int64_t s1 = q1 - s0 < pl->sweep ? q1 : s0 + pl->sweep;
      for (int64_t r = 0; r < mpan; ++r)
        for (int64_t q = s0; q < s1; ++q)
          TSR__MACRO_TILE(r, q);
    }
  } else {
    for (int64_t q = q0; q < q1; ++q)
      for (int64_t r = 0; r < mpan; ++r)
        TSR__MACRO_TILE(r, q);
  }
#undef TSR__MACRO_TILE
  if (pl->stream_c) tsr__gemm_store_fence();
}
#undef TSR__MACRO_T
#undef TSR__MACRO_UKR
#undef TSR__MACRO_UKR_STREAM
#undef TSR__MACRO_EDGE
#undef TSR__MACRO_NAME
