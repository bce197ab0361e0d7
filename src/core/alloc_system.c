/* SPDX-License-Identifier: BSD-3-Clause */
/* The host allocator's memory in every build but the SimGrid model's (core.cmake picks one
   variant): the C library's aligned_alloc and free. */
#include <stdlib.h>

#include "core/internal.h"

void *tsr__host_block(size_t align, size_t bytes) {
  return aligned_alloc(align, bytes);
}

void tsr__host_block_release(void *ptr) {
  free(ptr);
}
