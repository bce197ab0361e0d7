/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether the MPI library takes GPU memory (tsr_dist_gpu_aware, tessera/dist.h): Open MPI's
 * MPIX_Query_cuda_support / MPIX_Query_rocm_support where the library declares them
 * (mpi-ext.h), else no. The one place that knows the MPI's GPU extensions, so that SUMMA and
 * the other schedules have no CUDA/HIP conditionals.
 */
#include "mpi/mpi_internal.h"

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

int tsr_dist_gpu_aware(void) {
#if TSR_HAVE_CUDA && defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() ? 1 : 0;
#elif TSR_HAVE_HIP && defined(MPIX_ROCM_AWARE_SUPPORT) && MPIX_ROCM_AWARE_SUPPORT
  return MPIX_Query_rocm_support() ? 1 : 0;
#else
  return 0;
#endif
}

bool tsr__dist_gpu_staging(void) {
  const int v = tsr__env_choice(TSR__ENV_DIST_GPU_STAGING); /* "auto|0|1" */
  return v == 0 ? !tsr_dist_gpu_aware() : v == 2;
}
