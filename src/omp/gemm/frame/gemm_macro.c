/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GEMM macro-kernel (BLIS's second loop around the micro-kernel), generated for f32 and
 * f64 from one source, gemm_macro_impl.h.
 */
#include "omp/gemm/gemm.h"

/*
 * Tile order. Down C's columns of tiles (jr outer, ir inner: BLIS's order, the B micro-panel
 * reused from L1/L2 by every A micro-panel) for deep k slices; along C's rows (ir outer, jr
 * inner: the A micro-panel reused, B micro-panels streamed) for slices of at most
 * TSR__GEMM_ROWWISE_KC when C is read (beta != 0, a later k slice) or written without
 * streaming stores. A shallow slice spends a large share of its time on C; down the columns,
 * consecutive tiles touch MR new rows of C each, one leading dimension apart, and with a
 * power-of-two leading dimension all of them fall in the same cache sets and memory banks;
 * along the rows, each row's next lines follow the last ones. Measured on Zen 5 (AMD EPYC
 * family 26), one thread, 16 calls C += A(:, panel) B(panel, :) of 4096 x 4096 x 256 (SUMMA's
 * local multiply): dgemm 91 -> 113 GFLOP/s, sgemm 203 -> 231 (with ldc 4104: 120 either
 * way); at KC = 1024 the row order collapsed dgemm to 36 (each tile streams a 128 KiB B
 * micro-panel from L3), and with streaming stores it gained nothing. AVX2 and portable
 * kernels: unchanged either way. The row order goes over B's micro-panels in sweeps of half an
 * L2 (tsr__gemm_row_sweep, gemm_driver.c): each A micro-panel streams one sweep's micro-panels,
 * from L2, then the next A micro-panel the same ones, and only then the next sweep.
 * TSR__GEMM_ROWWISE_KC is in gemm.h: the x86 micro-kernels fetch the next tile of this order.
 */

#define TSR__MACRO_T float
#define TSR__MACRO_UKR ukr_f32
#define TSR__MACRO_UKR_STREAM ukr_stream_f32
#define TSR__MACRO_EDGE edge_f32
#define TSR__MACRO_NAME tsr__gemm_macro_f32
#include "omp/gemm/frame/gemm_macro_impl.h"

#define TSR__MACRO_T double
#define TSR__MACRO_UKR ukr_f64
#define TSR__MACRO_UKR_STREAM ukr_stream_f64
#define TSR__MACRO_EDGE edge_f64
#define TSR__MACRO_NAME tsr__gemm_macro_f64
#include "omp/gemm/frame/gemm_macro_impl.h"

void tsr__gemm_macro(const tsr__gemm_plan *pl, const char *abuf, const char *bbuf, int64_t ic,
                     int64_t jc, int64_t mcb, int64_t kcb, int64_t ncb, int64_t q0, int64_t q1,
                     double beta) {
  if (pl->g->dtype == TSR_F32)
    tsr__gemm_macro_f32(pl, abuf, bbuf, ic, jc, mcb, kcb, ncb, q0, q1, beta);
  else
    tsr__gemm_macro_f64(pl, abuf, bbuf, ic, jc, mcb, kcb, ncb, q0, q1, beta);
}
