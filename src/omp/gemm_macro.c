/*
 * The GEMM macro-kernel (BLIS's second loop around the micro-kernel), generated for f32 and
 * f64 from one source, gemm_macro_impl.h.
 */
#include "omp/gemm.h"

#if defined(TSR__GEMM_X86)
#include <immintrin.h>
#endif

/* Orders the streaming micro-kernels' non-temporal stores before what follows (the unit's
   completion count, which other threads and the caller act on). */
static inline void tsr__gemm_store_fence(void) {
#if defined(TSR__GEMM_X86)
  _mm_sfence();
#endif
}

#define TSR__MACRO_T float
#define TSR__MACRO_UKR ukr_f32
#define TSR__MACRO_UKR_STREAM ukr_stream_f32
#define TSR__MACRO_NAME tsr__gemm_macro_f32
#include "omp/gemm_macro_impl.h"
#undef TSR__MACRO_T
#undef TSR__MACRO_UKR
#undef TSR__MACRO_UKR_STREAM
#undef TSR__MACRO_NAME

#define TSR__MACRO_T double
#define TSR__MACRO_UKR ukr_f64
#define TSR__MACRO_UKR_STREAM ukr_stream_f64
#define TSR__MACRO_NAME tsr__gemm_macro_f64
#include "omp/gemm_macro_impl.h"
#undef TSR__MACRO_T
#undef TSR__MACRO_UKR
#undef TSR__MACRO_UKR_STREAM
#undef TSR__MACRO_NAME

void tsr__gemm_macro(const tsr__gemm_plan *pl, const char *abuf, const char *bbuf, int64_t ic,
                     int64_t jc, int64_t mcb, int64_t kcb, int64_t ncb, int64_t q0, int64_t q1,
                     double beta) {
  if (pl->g->dtype == TSR_F32)
    tsr__gemm_macro_f32(pl, abuf, bbuf, ic, jc, mcb, kcb, ncb, q0, q1, beta);
  else
    tsr__gemm_macro_f64(pl, abuf, bbuf, ic, jc, mcb, kcb, ncb, q0, q1, beta);
}
