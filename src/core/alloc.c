/* SPDX-License-Identifier: BSD-3-Clause */
/* The host allocator: 64-byte alignment (a cache line, and the widest SIMD load) for every
   host buffer, array data and staging alike. The memory itself comes from the build's variant
   (tsr__host_block: alloc_system.c, or alloc_smpi.c in the SimGrid model build). */
#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"

#define TSR__HOST_ALIGN ((size_t)64)

#if defined(__SANITIZE_ADDRESS__)
#define TSR__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TSR__ASAN 1
#endif
#endif

tsr_status tsr__host_alloc(size_t bytes, void **ptr) {
  TSR_CHECK(ptr != NULL, TSR_ERR_NULL_POINTER, "ptr is NULL");
  *ptr = NULL;
  /* Requests no address space can hold fail here rather than in malloc: AddressSanitizer's
     allocator aborts the process on requests above 1 TiB instead of returning NULL. */
  size_t limit = PTRDIFF_MAX;
#ifdef TSR__ASAN
  limit = (size_t)1 << 40;
#endif
  TSR_CHECK(bytes <= limit - TSR__HOST_ALIGN, TSR_ERR_OUT_OF_MEMORY,
            "cannot allocate %zu bytes of host memory", bytes);
  /* aligned_alloc wants a multiple of the alignment; 0 bytes still gives a unique pointer. */
  size_t rounded = (bytes + TSR__HOST_ALIGN - 1) / TSR__HOST_ALIGN * TSR__HOST_ALIGN;
  if (rounded == 0) rounded = TSR__HOST_ALIGN;
  void *p = tsr__host_block(TSR__HOST_ALIGN, rounded);
  TSR_CHECK(p != NULL, TSR_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory", bytes);
  *ptr = p;
  return TSR_OK;
}

void tsr__host_free(void *ptr) {
  if (ptr) tsr__host_block_release(ptr);
}
