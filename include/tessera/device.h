/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file device.h
 * @brief Devices: the CPU (OpenMP), CUDA GPUs and HIP (ROCm) GPUs.
 *
 * A build with GPU support runs on a machine without a GPU: it reports 0 GPU devices and
 * the default device is the CPU; asking for a GPU explicitly returns ::TSR_ERR_NO_DEVICE with
 * the GPU runtime's reason in tsr_last_error().
 *
 * After a GPU kernel fault (an illegal address, a launch failure, a device-side assert or any
 * other error the runtime keeps returning), every later call on that device returns
 * ::TSR_ERR_GPU with tsr_last_error() naming the first error ("... is unusable since ...")
 * until the process restarts.
 */
#ifndef TESSERA_DEVICE_H
#define TESSERA_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "tessera/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The device kinds, one row each: `X(name, ENUM, value, label, is_gpu)`, from which the enum,
 * the names ("cuda:0"), the parser (tsr_device_parse()) and the messages ("no CUDA device 1")
 * are generated:
 *  - name: the kind as a device string spells it, as an identifier (`cuda`; `#name` gives it);
 *  - ENUM, value: the ::tsr_device_kind constant and its number (the ABI: rows in value order,
 *    values never change);
 *  - label: the kind in messages ("CUDA");
 *  - is_gpu: 1 for kinds that `auto` tries, in row order, before the CPU; such a kind's device
 *    strings carry an index (`cuda:N`).
 *
 * The kinds: ::TSR_DEVICE_CPU, the host CPU, OpenMP backend (the only CPU device has index 0);
 * ::TSR_DEVICE_CUDA, an NVIDIA GPU through the CUDA runtime; ::TSR_DEVICE_HIP, an AMD GPU
 * through the HIP runtime (the hipified CUDA kernels).
 */
#define TSR_DEVICE_KIND_MAP(X)                                                                     \
  X(cpu, TSR_DEVICE_CPU, 0, "CPU", 0)                                                              \
  X(cuda, TSR_DEVICE_CUDA, 1, "CUDA", 1)                                                           \
  X(hip, TSR_DEVICE_HIP, 2, "HIP", 1)

#define TSR__DEVICE_KIND_ENUM(name, ENUM, value, label, is_gpu) ENUM = value,
/** Kind of device (the rows of ::TSR_DEVICE_KIND_MAP). */
typedef enum tsr_device_kind { TSR_DEVICE_KIND_MAP(TSR__DEVICE_KIND_ENUM) } tsr_device_kind;
#undef TSR__DEVICE_KIND_ENUM

/** A device: its kind and its index among the devices of that kind (0-based). */
typedef struct tsr_device {
  tsr_device_kind kind;
  int index;
} tsr_device;

/** The CPU device, as a compound literal: `tsr_gemm(..)` on `TSR_CPU`. */
#define TSR_CPU ((tsr_device){TSR_DEVICE_CPU, 0})

/** Properties of one device, filled by tsr_device_get_props(). */
typedef struct tsr_device_props {
  char name[256];         /**< marketing name, e.g. "NVIDIA H100 80GB HBM3", or the CPU model */
  char arch[32];          /**< "sm_90", "gfx90a", or the CPU ISA chosen for GEMM ("avx2") */
  size_t total_memory;    /**< bytes of device memory (host RAM for the CPU) */
  int warp_size;          /**< 32 on NVIDIA, 64 on most AMD GPUs (wavefront), 1 on the CPU */
  int multiprocessors;    /**< SMs / CUs, or logical CPU cores available to OpenMP */
  int concurrent_managed; /**< 1 when managed memory may be accessed concurrently by host and device
                           */
} tsr_device_props;

/**
 * The default device. Reads the environment variable `TSR_DEVICE` (`auto`, `cpu`, `cuda`,
 * `cuda:N`, `hip`, `hip:N`); unset or `auto` gives the first GPU of this build, else the CPU.
 * @param[out] device the chosen device.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT when `TSR_DEVICE` does
 *         not parse; ::TSR_ERR_NO_DEVICE when it names a device this build or machine lacks.
 */
TSR_API tsr_status tsr_device_default(tsr_device *device);

/**
 * Parses a device string (`auto`, `cpu`, `cuda`, `cuda:N`, `hip`, `hip:N`) and checks that the
 * device exists. `auto` resolves as in tsr_device_default() (ignoring `TSR_DEVICE`).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT (unparseable);
 *         ::TSR_ERR_NO_DEVICE (kind not built in, no device present, or N out of range).
 */
TSR_API tsr_status tsr_device_parse(const char *text, tsr_device *device);

/**
 * Number of devices of a kind: 1 for the CPU, the GPU count for CUDA/HIP (0 when the kind
 * is not built in or no GPU/driver is present; that is not an error).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT for an unknown kind.
 */
TSR_API tsr_status tsr_device_count(tsr_device_kind kind, int *count);

/**
 * Properties of a device.
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_NO_DEVICE; ::TSR_ERR_GPU (the GPU
 *         runtime failed to report them).
 */
TSR_API tsr_status tsr_device_get_props(tsr_device device, tsr_device_props *props);

/**
 * Writes "cpu", "cuda:0", "hip:1"... into `buf` (at most `size` bytes, NUL-terminated).
 * @return ::TSR_OK; ::TSR_ERR_NULL_POINTER; ::TSR_ERR_INVALID_ARGUMENT when `size` is too small
 *         or the kind is unknown.
 */
TSR_API tsr_status tsr_device_string(tsr_device device, char *buf, size_t size);

/**
 * Waits until all work queued on the device's stream has finished (no-op on the CPU).
 * @return ::TSR_OK; ::TSR_ERR_NO_DEVICE; ::TSR_ERR_GPU with the runtime's message.
 */
TSR_API tsr_status tsr_device_synchronize(tsr_device device);

/**
 * Releases the cached but unused blocks of the device's caching allocator back to the
 * runtime; on the CPU, frees the calling thread's cached GEMM packing buffers.
 * @return ::TSR_OK; ::TSR_ERR_NO_DEVICE; ::TSR_ERR_GPU.
 */
TSR_API tsr_status tsr_device_trim(tsr_device device);

/**
 * 1 when the two devices are the same device, else 0 (cannot fail, returns directly).
 */
TSR_API int tsr_device_equal(tsr_device a, tsr_device b);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_DEVICE_H */
