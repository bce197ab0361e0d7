/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU backend's ops table (OpenMP). The host is the device: one device, index 0, whose
 * memory is host memory, so transfers are memcpy and there is nothing to synchronize.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "omp/gemm/gemm.h"
#include "omp/omp_internal.h"

static tsr_status tsr__omp_device_count(int *count) {
  *count = 1;
  return TSR_OK;
}

static const char *tsr__omp_unavailable_reason(void) {
  return "";
}

static tsr_status tsr__omp_device_props(int index, tsr_device_props *props) {
  TSR_CHECK(index == 0, TSR_ERR_NO_DEVICE, "there is one CPU device (index 0), not %d", index);
  memset(props, 0, sizeof *props);
  snprintf(props->name, sizeof props->name, "%s", tsr__cpu_facts_get()->model_name);
  /* The ISA the GEMM micro-kernel uses: what the CPU is good for, in one word. */
  snprintf(props->arch, sizeof props->arch, "%s", tsr__omp_gemm_kernel_name(TSR_F32));
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) props->total_memory = (size_t)pages * (size_t)page_size;
#endif
  props->warp_size = 1;
  props->multiprocessors = tsr__omp_threads();
  props->concurrent_managed = 1; /* host memory: the host and this device are one */
  return TSR_OK;
}

static tsr_status tsr__omp_synchronize(tsr_device dev) {
  (void)dev;
  return TSR_OK;
}

/* Frees the calling thread's cached GEMM packing buffers (the only cache the CPU keeps). */
static tsr_status tsr__omp_trim(tsr_device dev) {
  (void)dev;
  tsr__omp_gemm_trim();
  return TSR_OK;
}

const struct tsr__backend_ops tsr__omp_backend = {
    .name = "cpu",
    .device_count = tsr__omp_device_count,
    .unavailable_reason = tsr__omp_unavailable_reason,
    .device_props = tsr__omp_device_props,
    .alloc = tsr__omp_alloc,
    .free = tsr__omp_free,
    .memcpy_h2d = tsr__omp_memcpy,
    .memcpy_d2h = tsr__omp_memcpy,
    .memcpy_d2d = tsr__omp_memcpy,
    .synchronize = tsr__omp_synchronize,
    .trim = tsr__omp_trim,
    .fill = tsr__omp_fill,
    .arange = tsr__omp_arange,
    .copy = tsr__omp_copy,
    .binary = tsr__omp_binary,
    .unary = tsr__omp_unary,
    .reduce = tsr__omp_reduce,
    .rng = tsr__omp_rng,
    .gemm = tsr__omp_gemm,
    .gemm_tiny = tsr__omp_gemm_tiny,
    .rng_block_cyclic = tsr__omp_rng_block_cyclic,
    .matvec_f64 = tsr__omp_matvec_f64,
};
