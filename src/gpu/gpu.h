/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal C interface of the GPU backend for the benchmarks (bench/bench_gpu.c): pinned host
 * memory, events on a device's stream, and the stream itself. The library's own layers
 * reach these through the backend table (tsr__dev_* in src/core/internal.h), never through
 * this header. Plain C, no CUDA/HIP
 * headers: the callers are C files. Exists when TSR_HAVE_CUDA or TSR_HAVE_HIP. Not exported from
 * the shared library (link tessera_static, or call from inside the library).
 *
 * Everything the backend does for a device happens in order on that device's one stream
 * (created on first use), so a caller that hands device memory to another library (MPI,
 * a vendor BLAS) must either use tsr__gpu_stream() or synchronize the device first.
 */
#ifndef TSR_GPU_H
#define TSR_GPU_H

#include <stddef.h>

#include "tessera/device.h"
#include "tessera/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Page-locked host memory (cudaMallocHost/hipHostMalloc), for staging transfers such as
   SUMMA panels when MPI is not GPU-aware. bytes may be 0. TSR_ERR_OUT_OF_MEMORY or
   TSR_ERR_GPU (no driver) on failure. */
tsr_status tsr__gpu_pinned_alloc(size_t bytes, void **ptr);
/* Frees tsr__gpu_pinned_alloc memory; NULL is a no-op. */
void tsr__gpu_pinned_free(void *ptr);

/* The device's stream as an opaque handle (a cudaStream_t / hipStream_t), created on
   first use. TSR_ERR_NO_DEVICE for a bad index, TSR_ERR_GPU on runtime failure. */
tsr_status tsr__gpu_stream(tsr_device dev, void **stream);

/* Timing events recorded on the device's stream (cudaEvent_t / hipEvent_t as handles). */
tsr_status tsr__gpu_event_create(tsr_device dev, void **event);
tsr_status tsr__gpu_event_record(tsr_device dev, void *event);
/* *done = 1 when the work queued before the event's last record has completed, else 0; never
   blocks (cudaEventQuery), so a caller can keep MPI progressing while it polls. */
tsr_status tsr__gpu_event_query(void *event, int *done);
/* Seconds between two recorded events; waits for `stop` to complete. */
tsr_status tsr__gpu_event_elapsed(void *start, void *stop, double *seconds);
/* NULL is a no-op. */
void tsr__gpu_event_destroy(void *event);

#ifdef __cplusplus
}
#endif
#endif /* TSR_GPU_H */
