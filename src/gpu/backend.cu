/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU backend's ops table (src/core/internal.h documents each entry). One source for
 * both builds: compiled by nvcc it is the CUDA backend ("cuda"), hipified and compiled by
 * hipcc it is the HIP backend ("hip"); the core maps TSR_DEVICE_CUDA or TSR_DEVICE_HIP to it
 * from config.h.
 */
#include "gpu_internal.cuh"

/* Positional: C++17 has no designated initializers; the order is internal.h's. */
extern "C" const struct tsr__backend_ops tsr__gpu_backend = {
    TSR__GPU_NAME,               /* name */
    tsr__gpu_device_count,       /* device_count */
    tsr__gpu_unavailable_reason, /* unavailable_reason */
    tsr__gpu_device_props,       /* device_props */
    tsr__gpu_alloc,              /* alloc */
    tsr__gpu_free,               /* free */
    tsr__gpu_memcpy_h2d,         /* memcpy_h2d */
    tsr__gpu_memcpy_d2h,         /* memcpy_d2h */
    tsr__gpu_memcpy_d2d,         /* memcpy_d2d */
    tsr__gpu_synchronize,        /* synchronize */
    tsr__gpu_trim,               /* trim */
    tsr__gpu_fill,               /* fill */
    tsr__gpu_arange,             /* arange */
    tsr__gpu_copy,               /* copy */
    tsr__gpu_binary,             /* binary */
    tsr__gpu_unary,              /* unary */
    tsr__gpu_reduce,             /* reduce */
    tsr__gpu_rng,                /* rng */
    tsr__gpu_gemm,               /* gemm */
    nullptr,                     /* gemm_tiny: none (a host lane) */
    tsr__gpu_rng_block_cyclic,   /* rng_block_cyclic */
    tsr__gpu_matvec_f64,         /* matvec_f64 */
    tsr__gpu_pinned_alloc,       /* pinned_alloc */
    tsr__gpu_pinned_free,        /* pinned_free */
    tsr__gpu_stream_create,      /* stream_create */
    tsr__gpu_stream_destroy,     /* stream_destroy */
    tsr__gpu_event_create,       /* event_create */
    tsr__gpu_event_destroy,      /* event_destroy */
    tsr__gpu_event_record,       /* event_record */
    tsr__gpu_event_query,        /* event_query */
    tsr__gpu_event_elapsed,      /* event_elapsed */
    tsr__gpu_stream_wait_event,  /* stream_wait_event */
    tsr__gpu_memcpy_2d_async,    /* memcpy_2d_async */
    tsr__gpu_copy_rects,         /* copy_rects */
};
