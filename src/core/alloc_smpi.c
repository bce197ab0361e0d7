/* SPDX-License-Identifier: BSD-3-Clause */
/* The host allocator's memory in the SimGrid study's model build (bench/scale, modeled
   compute, -DTSR_SMPI_MODEL; core.cmake picks this variant there): blocks of 1 MiB and more
   are folded with SMPI_SHARED_MALLOC, so the simulated ranks' matrices share physical pages
   (their contents are never computed on); smaller ones, or when the set below is full, come
   from aligned_alloc. A small open-addressing set remembers the shared ones for release. */
#include <stdint.h>
#include <stdlib.h>

#include <smpi/smpi.h>

#include "core/internal.h"

#define TSR__SHARED_MIN ((size_t)1 << 20)
#define TSR__SHARED_SLOTS 65536
static void *tsr__shared[TSR__SHARED_SLOTS];

static size_t tsr__shared_slot(const void *p) {
  return (size_t)(((uintptr_t)p >> 12) * 2654435761u) % TSR__SHARED_SLOTS;
}

static void *tsr__shared_alloc(size_t bytes) {
  size_t n = 0;
  void *p = SMPI_SHARED_MALLOC(bytes);
  if (!p) return NULL;
  for (size_t h = tsr__shared_slot(p); n < TSR__SHARED_SLOTS; h = (h + 1) % TSR__SHARED_SLOTS, n++)
    if (!tsr__shared[h] || tsr__shared[h] == (void *)1) {
      tsr__shared[h] = p;
      return p;
    }
  SMPI_SHARED_FREE(p);
  return NULL;
}

static int tsr__shared_free(void *p) {
  size_t n = 0;
  for (size_t h = tsr__shared_slot(p); n < TSR__SHARED_SLOTS && tsr__shared[h];
       h = (h + 1) % TSR__SHARED_SLOTS, n++)
    if (tsr__shared[h] == p) {
      tsr__shared[h] = (void *)1; /* tombstone */
      SMPI_SHARED_FREE(p);
      return 1;
    }
  return 0;
}

void *tsr__host_block(size_t align, size_t bytes) {
  void *p = bytes >= TSR__SHARED_MIN ? tsr__shared_alloc(bytes) : NULL;
  return p ? p : aligned_alloc(align, bytes);
}

void tsr__host_block_release(void *ptr) {
  if (!tsr__shared_free(ptr)) free(ptr);
}
