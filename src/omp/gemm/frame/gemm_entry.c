/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU backend's GEMM entry (tsr__omp_gemm, gemm.h documents it) and its trim: the dtype
 * and path dispatch above the frame's two rooms. A real call goes to the driver
 * (gemm_driver.c), a complex one to the 1m method (gemm_complex.c), which runs its real form
 * on the driver with its own packers (tsr__gemm_induced); the vendor path to gemm_vendor.c.
 * Calls go one way: entry -> complex -> driver; the driver names neither.
 */
#include "omp/gemm/gemm_tune.h"
#include "omp/omp_internal.h"

tsr_status tsr__omp_gemm(tsr_device dev, const tsr__gemm_args *args) {
  (void)dev;
  const tsr__gemm_args *g = args;
  const bool cplx = g->dtype == TSR_C64 || g->dtype == TSR_C128;
  if (g->dtype != TSR_F32 && g->dtype != TSR_F64 && !cplx)
    return tsr__set_error(TSR_ERR_UNSUPPORTED, __func__,
                          "the CPU GEMM supports f32, f64, c64 and c128, not dtype %s",
                          tsr_dtype_name(g->dtype));
  if (g->path == TSR_GEMM_VENDOR) return tsr__gemm_vendor(g);
  if (cplx) return tsr__gemm_complex(g);
  if (g->m == 0 || g->n == 0) return TSR_OK;
  if (g->alpha == 0 || g->k == 0) {
    tsr__gemm_scale(g);
    return TSR_OK;
  }
  return tsr__gemm_real(g, NULL);
}

void tsr__omp_gemm_trim(void) {
  tsr__gemm_complex_trim();
  tsr__gemm_buffers_trim();
}
