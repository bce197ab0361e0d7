/*
 * The modeled-compute mode of the distributed layer, for the SimGrid/SMPI scaling study
 * (bench/scale): built with smpicc and -DTSR_SMPI_MODEL, each local GEMM charges its 2 m n k
 * flops to the simulated host (smpi_execute_flops, at the host speed of the platform file)
 * instead of computing, and local copies charge their bytes at a memory bandwidth. In every
 * other build these are tsr_gemm_ex and no-ops.
 */
#include <stdlib.h>

#include "mpi/mpi_internal.h"

#ifdef TSR_SMPI_MODEL
#include <smpi/smpi.h>
#endif

int tsr__dist_modeled(void) {
#ifdef TSR_SMPI_MODEL
  return 1;
#else
  return 0;
#endif
}

tsr_status tsr__dist_local_gemm(double alpha, const tsr_array *a, const tsr_array *b, double beta,
                                tsr_array *c, tsr_gemm_path path) {
#ifdef TSR_SMPI_MODEL
  (void)alpha, (void)beta, (void)path;
  /* Row-major views m x k and k x n (the callers' local blocks are column-major views with
     strides (1, ld), shapes as in the product). */
  double flops = 2.0 * (double)a->shape[0] * (double)a->shape[1] * (double)b->shape[1];
  (void)c;
  if (flops > 0) smpi_execute_flops(flops);
  return TSR_OK;
#else
  return tsr_gemm_ex(TSR_NO_TRANS, TSR_NO_TRANS, alpha, a, b, beta, c, path);
#endif
}

void tsr__dist_model_copy(double bytes) {
#ifdef TSR_SMPI_MODEL
  static double bw = 0;
  if (bw <= 0) {
    const char *s = getenv("TSR_SMPI_MEMORY_BW");
    bw = s ? atof(s) : 0;
    if (!(bw > 0)) bw = 10e9;
  }
  if (bytes > 0) smpi_execute(bytes / bw);
#else
  (void)bytes;
#endif
}
