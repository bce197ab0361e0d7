/* The host allocator: 64-byte alignment (a cache line, and the widest SIMD load) for every
   host buffer, array data and staging alike. */
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

#ifdef TSR_SMPI_MODEL
/* The SimGrid study (bench/scale, modeled compute): buffers of 1 MiB and more are folded with
   SMPI_SHARED_MALLOC, so the simulated ranks' matrices share physical pages (their contents
   are never computed on). A small open-addressing set remembers them for tsr__host_free. */
#include <smpi/smpi.h>
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
#ifdef TSR_SMPI_MODEL
  void *p = rounded >= TSR__SHARED_MIN ? tsr__shared_alloc(rounded) : NULL;
  if (!p) p = aligned_alloc(TSR__HOST_ALIGN, rounded);
#else
  void *p = aligned_alloc(TSR__HOST_ALIGN, rounded);
#endif
  TSR_CHECK(p != NULL, TSR_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory", bytes);
  *ptr = p;
  return TSR_OK;
}

void tsr__host_free(void *ptr) {
#ifdef TSR_SMPI_MODEL
  if (ptr && tsr__shared_free(ptr)) return;
#endif
  free(ptr);
}
