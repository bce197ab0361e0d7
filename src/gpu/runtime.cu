/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU runtime layer: device discovery and properties, one stream per device, a caching
 * allocator, transfers, pinned host memory and events.
 *
 * Streams: every operation on a device is queued on that device's single non-blocking
 * stream, so kernels, copies and the reuse of cached memory are ordered without events.
 *
 * Caching allocator: cudaMalloc/cudaFree synchronize the device and cost tens of
 * microseconds, so freed blocks are kept per device in size classes (powers of two from
 * 512 B to 1 MiB, multiples of 2 MiB above) and handed out again for a request of the same
 * class or of a class up to TSR__GPU_REUSE_SLACK smaller (a larger block wastes at most
 * that fraction). A block freed while kernels that use it are still queued may be reused at
 * once: its next user's work is queued behind them on the same stream. The cache holds at
 * most TSR_GPU_CACHE_LIMIT bytes (environment, in MiB; default a quarter of the device's
 * memory): a block freed beyond it is returned to the driver. When cudaMalloc fails the cache
 * is released (tsr_device_trim) and the allocation retried once. TSR_GPU_ALLOC_CACHE=0 turns
 * the cache off for checking tools: every allocation is one cudaMalloc of exactly the bytes
 * requested (1 for an empty array) and every free one cudaFree, so compute-sanitizer memcheck
 * sees an access past the end of any buffer (the size classes' rounding would hide it).
 *
 * Sticky errors: after an illegal address or another kernel fault the CUDA context is lost and
 * every later runtime call fails. tsr__gpu_error marks the device unusable with the first
 * error's name, and every later call on it fails at once with that reason.
 */
#include "gpu_internal.cuh"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define TSR__GPU_SMALL_LIMIT ((size_t)1 << 20)
#define TSR__GPU_LARGE_QUANTUM ((size_t)2 << 20)
#define TSR__GPU_MIN_BLOCK ((size_t)512)
/* A cached block of class c serves requests of class >= c - c / TSR__GPU_REUSE_SLACK_DIV
   (small classes: exactly one class up is half wasted, so only exact classes there). */
#define TSR__GPU_REUSE_SLACK_DIV 4

typedef struct tsr__gpu_block {
  void *ptr;
  size_t bytes; /* the size class */
  struct tsr__gpu_block *next;
} tsr__gpu_block;

typedef struct tsr__gpu_device_state {
  pthread_mutex_t lock; /* guards stream creation, the free list and the flags below */
  int stream_ready;
  cudaStream_t stream;
  tsr__gpu_block *cached; /* free blocks, any size class */
  size_t cached_bytes;
  size_t cache_limit;      /* most bytes kept in `cached` */
  tsr__gpu_block *granted; /* blocks handed out for a smaller request: their real class */
  int unusable;            /* a sticky error happened: see `why` */
  char why[320];
  cudaDeviceProp prop;
} tsr__gpu_device_state;

static tsr__gpu_device_state tsr__gpu_devices[TSR__GPU_MAX_DEVICES];
static int tsr__gpu_count;
static char tsr__gpu_reason[256];
static pthread_once_t tsr__gpu_once = PTHREAD_ONCE_INIT;

/* Errors after which the context is unusable: the faults both runtimes name, and any error
   that clearing does not clear (the runtime keeps returning a sticky error, e.g. CUDA's
   misaligned-address and illegal-instruction faults). The caller, tsr__gpu_error, has already
   cleared the last error. */
static bool tsr__gpu_error_is_sticky(cudaError_t err) {
  switch (err) {
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorAssert:
  case cudaErrorLaunchTimeout:
  case cudaErrorECCUncorrectable: return true;
  default: break;
  }
  return cudaPeekAtLastError() != cudaSuccess;
}

tsr_status tsr__gpu_error_at(cudaError_t err, const char *fn, const char *call, const char *file,
                             int line, const char *func) {
  tsr_status code = err == cudaErrorMemoryAllocation ? TSR_ERR_OUT_OF_MEMORY : TSR_ERR_GPU;
  (void)cudaGetLastError();
  int index = -1;
  if (tsr__gpu_error_is_sticky(err) && cudaGetDevice(&index) == cudaSuccess && index >= 0 &&
      index < tsr__gpu_count) {
    tsr__gpu_device_state *d = &tsr__gpu_devices[index];
    pthread_mutex_lock(&d->lock);
    if (!d->unusable) {
      snprintf(d->why, sizeof d->why,
               "%s:%d is unusable since %s failed with %s (%s); the process must be restarted "
               "to use it again (TSR_GPU_SYNC_DEBUG=1 finds the launch that faulted)",
               TSR__GPU_NAME, index, call, cudaGetErrorName(err), cudaGetErrorString(err));
      d->unusable = 1;
    }
    pthread_mutex_unlock(&d->lock);
    return tsr__set_error_at(TSR_ERR_GPU, fn, file, line, func, "%s", d->why);
  }
  return tsr__set_error_at(code, fn, file, line, func, "%s failed: %s (%s)", call,
                           cudaGetErrorString(err), cudaGetErrorName(err));
}

static pthread_once_t tsr__gpu_debug_once = PTHREAD_ONCE_INIT;
static bool tsr__gpu_debug_on;
static void tsr__gpu_debug_read(void) {
  tsr__gpu_debug_on = tsr__env_flag(TSR__ENV_GPU_SYNC_DEBUG);
}

static bool tsr__gpu_sync_debug(void) {
  pthread_once(&tsr__gpu_debug_once, tsr__gpu_debug_read);
  return tsr__gpu_debug_on;
}

tsr_status tsr__gpu_after_launch(cudaStream_t stream) {
  if (!tsr__gpu_sync_debug()) return TSR_OK;
  cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) return tsr__gpu_error(err, __func__, "a kernel (TSR_GPU_SYNC_DEBUG)");
  return TSR_OK;
}

/* Runs once: counts the devices and reads their properties. A missing driver or device is
   not an error: the count is 0 and the reason is kept for tsr_device_parse's message. */
static void tsr__gpu_discover(void) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    snprintf(tsr__gpu_reason, sizeof tsr__gpu_reason,
             "the " TSR__GPU_RUNTIME " runtime found no usable device: %s (%s)",
             cudaGetErrorString(err), cudaGetErrorName(err));
    (void)cudaGetLastError();
    n = 0;
  } else if (n <= 0) {
    snprintf(tsr__gpu_reason, sizeof tsr__gpu_reason,
             "the " TSR__GPU_RUNTIME " runtime reports 0 devices");
    n = 0;
  }
  if (n > TSR__GPU_MAX_DEVICES) n = TSR__GPU_MAX_DEVICES;
  /* MiB; NaN when unset: a quarter of the device. */
  const double limit = tsr__env_number(TSR__ENV_GPU_CACHE_LIMIT);
  for (int i = 0; i < n; i++) {
    pthread_mutex_init(&tsr__gpu_devices[i].lock, NULL);
    err = cudaGetDeviceProperties(&tsr__gpu_devices[i].prop, i);
    if (err != cudaSuccess) {
      snprintf(tsr__gpu_reason, sizeof tsr__gpu_reason,
               "cudaGetDeviceProperties(%d) failed: %s (%s)", i, cudaGetErrorString(err),
               cudaGetErrorName(err));
      (void)cudaGetLastError();
      n = i;
      break;
    }
    tsr__gpu_devices[i].cache_limit =
        limit >= 0 ? (size_t)limit << 20 : tsr__gpu_devices[i].prop.totalGlobalMem / 4;
  }
  tsr__gpu_count = n;
}

tsr_status tsr__gpu_device_count(int *count) {
  pthread_once(&tsr__gpu_once, tsr__gpu_discover);
  *count = tsr__gpu_count;
  return TSR_OK;
}

const char *tsr__gpu_unavailable_reason(void) {
  pthread_once(&tsr__gpu_once, tsr__gpu_discover);
  return tsr__gpu_count > 0 ? "" : tsr__gpu_reason;
}

const cudaDeviceProp *tsr__gpu_props_of(int index) {
  return &tsr__gpu_devices[index].prop;
}

static tsr_status tsr__gpu_check_index(tsr_device dev) {
  pthread_once(&tsr__gpu_once, tsr__gpu_discover);
  TSR_CHECK(dev.index >= 0 && dev.index < tsr__gpu_count, TSR_ERR_NO_DEVICE,
            "no device " TSR__GPU_NAME ":%d (%d present)%s%s", dev.index, tsr__gpu_count,
            tsr__gpu_count ? "" : ": ", tsr__gpu_count ? "" : tsr__gpu_reason);
  tsr__gpu_device_state *d = &tsr__gpu_devices[dev.index];
  pthread_mutex_lock(&d->lock);
  int unusable = d->unusable;
  pthread_mutex_unlock(&d->lock);
  if (unusable) return tsr__set_error(TSR_ERR_GPU, __func__, "%s", d->why);
  return TSR_OK;
}

tsr_status tsr__gpu_device_props(int index, tsr_device_props *props) {
  tsr_device dev = {TSR__GPU_KIND, index};
  TSR_CALL(tsr__gpu_check_index(dev));
  const cudaDeviceProp *p = &tsr__gpu_devices[index].prop;
  memset(props, 0, sizeof *props);
  snprintf(props->name, sizeof props->name, "%s", p->name);
  tsr__gpu_arch_string(p, props->arch, sizeof props->arch);
  props->total_memory = p->totalGlobalMem;
  props->warp_size = p->warpSize;
  props->multiprocessors = p->multiProcessorCount;
  props->concurrent_managed = p->concurrentManagedAccess ? 1 : 0;
  return TSR_OK;
}

tsr_status tsr__gpu_begin(tsr_device dev, cudaStream_t *stream, tsr__gpu_device_guard *guard) {
  TSR_CALL(tsr__gpu_check_index(dev));
  tsr__gpu_device_state *d = &tsr__gpu_devices[dev.index];
  int current = -1;
  TSR_GPU_CALL(cudaGetDevice(&current));
  if (current != dev.index) {
    TSR_GPU_CALL(cudaSetDevice(dev.index));
    guard->previous = current;
  }
  pthread_mutex_lock(&d->lock);
  cudaError_t err = cudaSuccess;
  if (!d->stream_ready) {
    err = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking);
    if (err == cudaSuccess) d->stream_ready = 1;
  }
  *stream = d->stream;
  pthread_mutex_unlock(&d->lock);
  if (err != cudaSuccess) return tsr__gpu_error(err, __func__, "cudaStreamCreateWithFlags");
  return TSR_OK;
}

unsigned tsr__gpu_grid_for(tsr_device dev, int64_t n, int block) {
  int64_t blocks = (n + block - 1) / block;
  /* Enough resident blocks to hide latency; a grid-stride loop covers the rest. */
  int64_t cap = (int64_t)tsr__gpu_devices[dev.index].prop.multiProcessorCount * 32;
  if (cap < 1) cap = 1;
  if (blocks > cap) blocks = cap;
  if (blocks < 1) blocks = 1;
  return (unsigned)blocks;
}

/* ---------------------------------------------------------------- caching allocator --- */

/* TSR_GPU_ALLOC_CACHE=0: no cache, no size classes (see the top of this file). Read once. */
static pthread_once_t tsr__gpu_alloc_mode_once = PTHREAD_ONCE_INIT;
static bool tsr__gpu_alloc_exact_on;
static void tsr__gpu_alloc_mode_read(void) {
  tsr__gpu_alloc_exact_on = !tsr__env_flag(TSR__ENV_GPU_ALLOC_CACHE);
}

static bool tsr__gpu_alloc_exact(void) {
  pthread_once(&tsr__gpu_alloc_mode_once, tsr__gpu_alloc_mode_read);
  return tsr__gpu_alloc_exact_on;
}

/* The exact-size mode: one cudaMalloc of the bytes asked for (the caller has made `dev`
   current). */
static tsr_status tsr__gpu_exact_alloc(tsr_device dev, size_t bytes, void **ptr) {
  void *p = NULL;
  cudaError_t err = cudaMalloc(&p, bytes ? bytes : 1);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__,
                          "cudaMalloc of %zu bytes on %s:%d failed: %s (device memory %zu "
                          "bytes; TSR_GPU_ALLOC_CACHE=0: nothing is cached)",
                          bytes, TSR__GPU_NAME, dev.index, cudaGetErrorString(err),
                          tsr__gpu_devices[dev.index].prop.totalGlobalMem);
  }
  if (err != cudaSuccess) return tsr__gpu_error(err, __func__, "cudaMalloc");
  *ptr = p;
  return TSR_OK;
}

/* The size class of a request, 0 when it cannot be represented. */
static size_t tsr__gpu_size_class(size_t bytes) {
  if (bytes <= TSR__GPU_MIN_BLOCK) return TSR__GPU_MIN_BLOCK;
  if (bytes <= TSR__GPU_SMALL_LIMIT) {
    size_t c = TSR__GPU_MIN_BLOCK;
    while (c < bytes)
      c <<= 1;
    return c;
  }
  if (bytes > SIZE_MAX - TSR__GPU_LARGE_QUANTUM) return 0;
  return (bytes + TSR__GPU_LARGE_QUANTUM - 1) & ~(TSR__GPU_LARGE_QUANTUM - 1);
}

/* Releases every cached block of a device (the caller has made it current). */
static tsr_status tsr__gpu_release_cache(tsr_device dev, size_t *released) {
  tsr__gpu_device_state *d = &tsr__gpu_devices[dev.index];
  pthread_mutex_lock(&d->lock);
  tsr__gpu_block *list = d->cached;
  d->cached = NULL;
  d->cached_bytes = 0;
  pthread_mutex_unlock(&d->lock);
  size_t total = 0;
  cudaError_t first = cudaSuccess;
  while (list) {
    tsr__gpu_block *next = list->next;
    cudaError_t err = cudaFree(list->ptr);
    if (err != cudaSuccess && first == cudaSuccess) first = err;
    total += list->bytes;
    free(list);
    list = next;
  }
  if (released) *released = total;
  if (first != cudaSuccess) return tsr__gpu_error(first, __func__, "cudaFree");
  return TSR_OK;
}

/* The smallest size class a cached block of class `have` may serve. */
static size_t tsr__gpu_reuse_floor(size_t have) {
  if (have <= TSR__GPU_SMALL_LIMIT) return have;
  return have - have / TSR__GPU_REUSE_SLACK_DIV;
}

/* The caller has made `dev` current. */
static tsr_status tsr__gpu_cached_alloc(tsr_device dev, size_t bytes, void **ptr) {
  if (tsr__gpu_alloc_exact()) return tsr__gpu_exact_alloc(dev, bytes, ptr);
  size_t size = tsr__gpu_size_class(bytes);
  if (size == 0)
    return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__, "%zu bytes cannot be allocated on %s:%d",
                          bytes, TSR__GPU_NAME, dev.index);
  tsr__gpu_device_state *d = &tsr__gpu_devices[dev.index];
  pthread_mutex_lock(&d->lock);
  /* The exact class, else the smallest larger block within the reuse bound. */
  tsr__gpu_block **best = NULL;
  for (tsr__gpu_block **link = &d->cached; *link; link = &(*link)->next) {
    size_t have = (*link)->bytes;
    if (have < size || tsr__gpu_reuse_floor(have) > size) continue;
    if (!best || have < (*best)->bytes) best = link;
    if (have == size) break;
  }
  if (best) {
    tsr__gpu_block *b = *best;
    *best = b->next;
    d->cached_bytes -= b->bytes;
    *ptr = b->ptr;
    if (b->bytes != size) { /* remember the real class for the free */
      b->next = d->granted;
      d->granted = b;
    } else {
      free(b);
    }
    pthread_mutex_unlock(&d->lock);
    return TSR_OK;
  }
  pthread_mutex_unlock(&d->lock);

  void *p = NULL;
  cudaError_t err = cudaMalloc(&p, size);
  size_t released = 0;
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    TSR_CALL(tsr__gpu_release_cache(dev, &released));
    err = cudaMalloc(&p, size);
  }
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__,
                          "cudaMalloc of %zu bytes on %s:%d failed: %s (device memory %zu "
                          "bytes; %zu cached bytes were released before the retry)",
                          size, TSR__GPU_NAME, dev.index, cudaGetErrorString(err),
                          d->prop.totalGlobalMem, released);
  }
  if (err != cudaSuccess) return tsr__gpu_error(err, __func__, "cudaMalloc");
  *ptr = p;
  return TSR_OK;
}

/* cudaFree on device `index` from any current device, restoring the caller's (cudaFree waits
   for the device, so queued kernels finish with the memory first). Errors are dropped: this
   runs on release paths that cannot fail. */
static void tsr__free_on_device(int index, void *ptr) {
  int current = -1;
  bool switched = cudaGetDevice(&current) == cudaSuccess && current != index &&
                  cudaSetDevice(index) == cudaSuccess;
  (void)cudaFree(ptr);
  if (switched) (void)cudaSetDevice(current);
  (void)cudaGetLastError();
}

static void tsr__gpu_cached_free(tsr_device dev, void *ptr, size_t bytes) {
  if (tsr__gpu_alloc_exact()) {
    tsr__free_on_device(dev.index, ptr);
    return;
  }
  size_t size = tsr__gpu_size_class(bytes);
  tsr__gpu_device_state *d = &tsr__gpu_devices[dev.index];
  pthread_mutex_lock(&d->lock);
  tsr__gpu_block *b = NULL;
  for (tsr__gpu_block **link = &d->granted; *link; link = &(*link)->next) {
    if ((*link)->ptr == ptr) { /* a larger block lent to a smaller request */
      b = *link;
      *link = b->next;
      size = b->bytes;
      break;
    }
  }
  bool keep = d->cached_bytes + size <= d->cache_limit;
  if (keep && !b) b = (tsr__gpu_block *)malloc(sizeof *b);
  if (keep && b) {
    b->ptr = ptr;
    b->bytes = size;
    b->next = d->cached;
    d->cached = b;
    d->cached_bytes += size;
    pthread_mutex_unlock(&d->lock);
    return;
  }
  pthread_mutex_unlock(&d->lock);
  free(b);
  /* Over the cap, or no host memory for the bookkeeping: give the block back (cudaFree waits
     for the device, so queued kernels finish with it first). */
  tsr__free_on_device(dev.index, ptr);
}

tsr_status tsr__gpu_alloc(tsr_device dev, size_t bytes, unsigned flags, void **ptr,
                          unsigned *granted_flags) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  (void)s;
  *granted_flags = 0;
  if ((flags & TSR_ALLOC_MANAGED) && tsr__gpu_devices[dev.index].prop.concurrentManagedAccess) {
    void *p = NULL;
    cudaError_t err = cudaMallocManaged(&p, bytes ? bytes : 1, cudaMemAttachGlobal);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return tsr__set_error(TSR_ERR_OUT_OF_MEMORY, __func__,
                            "cudaMallocManaged of %zu bytes on %s:%d failed: %s", bytes,
                            TSR__GPU_NAME, dev.index, cudaGetErrorString(err));
    }
    if (err != cudaSuccess) return tsr__gpu_error(err, __func__, "cudaMallocManaged");
    *ptr = p;
    *granted_flags = TSR_ALLOC_MANAGED;
    return TSR_OK;
  }
  return tsr__gpu_cached_alloc(dev, bytes, ptr);
}

void tsr__gpu_free(tsr_device dev, void *ptr, size_t bytes, unsigned flags) {
  if (!ptr || dev.index < 0 || dev.index >= tsr__gpu_count) return;
  if (flags & TSR_ALLOC_MANAGED) {
    /* cudaFree waits for the device, so no queued kernel still uses the memory. */
    tsr__free_on_device(dev.index, ptr);
    return;
  }
  tsr__gpu_cached_free(dev, ptr, bytes);
}

/* Called inside an operation that has made `dev` current (tsr__gpu_begin). */
tsr_status tsr__gpu_scratch_alloc(tsr_device dev, size_t bytes, void **ptr) {
  return tsr__gpu_cached_alloc(dev, bytes, ptr);
}

void tsr__gpu_scratch_free(tsr_device dev, void *ptr, size_t bytes) {
  if (ptr) tsr__gpu_cached_free(dev, ptr, bytes);
}

tsr_status tsr__gpu_trim(tsr_device dev) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  (void)s;
  return tsr__gpu_release_cache(dev, NULL);
}

/* ---------------------------------------------------------------- transfers ----------- */

/* cudaMemcpyDefault: the runtime tells device, managed and host pointers apart (UVA). The
   host-side copies wait for the stream, so the caller may reuse or free its buffer. */
static tsr_status tsr__gpu_memcpy_wait(tsr_device dev, void *dst, const void *src, size_t bytes,
                                       bool to_device) {
  if (bytes == 0) return TSR_OK;
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  TSR_GPU_CALL(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
  tsr__count(to_device ? TSR__COUNT_H2D_BYTES : TSR__COUNT_D2H_BYTES, bytes);
  tsr__count(to_device ? TSR__COUNT_H2D_COPIES : TSR__COUNT_D2H_COPIES, 1);
  tsr__count(TSR__COUNT_HOST_SYNCS, 1);
  TSR_GPU_CALL(cudaStreamSynchronize(s));
  return TSR_OK;
}

tsr_status tsr__gpu_memcpy_h2d(tsr_device dev, void *dst, const void *src, size_t bytes) {
  return tsr__gpu_memcpy_wait(dev, dst, src, bytes, true);
}

tsr_status tsr__gpu_memcpy_d2h(tsr_device dev, void *dst, const void *src, size_t bytes) {
  return tsr__gpu_memcpy_wait(dev, dst, src, bytes, false);
}

tsr_status tsr__gpu_memcpy_d2d(tsr_device dev, void *dst, const void *src, size_t bytes) {
  if (bytes == 0) return TSR_OK;
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  TSR_GPU_CALL(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
  return TSR_OK;
}

tsr_status tsr__gpu_synchronize(tsr_device dev) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  tsr__count(TSR__COUNT_HOST_SYNCS, 1);
  TSR_GPU_CALL(cudaStreamSynchronize(s));
  return TSR_OK;
}

/* ---------------------------------------------------------------- asynchronous ops ---- */

/* The backend entries for streams, events, pinned memory and 2-D copies (internal.h). A NULL
   stream handle is the device's own stream (the one every other entry uses). */

tsr_status tsr__gpu_pinned_alloc(tsr_device dev, size_t bytes, void **ptr) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  (void)s;
  void *p = NULL;
  cudaError_t err = cudaMallocHost(&p, bytes ? bytes : 1);
  if (err != cudaSuccess) return tsr__gpu_error(err, __func__, "cudaMallocHost");
  *ptr = p;
  return TSR_OK;
}

void tsr__gpu_pinned_free(tsr_device dev, void *ptr) {
  (void)dev;
  if (ptr) (void)cudaFreeHost(ptr);
  (void)cudaGetLastError();
}

tsr_status tsr__gpu_stream_create(tsr_device dev, void **stream) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  (void)s;
  cudaStream_t c = NULL;
  TSR_GPU_CALL(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
  *stream = (void *)c;
  return TSR_OK;
}

void tsr__gpu_stream_destroy(tsr_device dev, void *stream) {
  (void)dev;
  if (stream) (void)cudaStreamDestroy((cudaStream_t)stream);
  (void)cudaGetLastError();
}

tsr_status tsr__gpu_event_create(tsr_device dev, void **event) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  (void)s;
  cudaEvent_t e;
  TSR_GPU_CALL(cudaEventCreate(&e));
  *event = (void *)e;
  return TSR_OK;
}

void tsr__gpu_event_destroy(tsr_device dev, void *event) {
  (void)dev;
  if (event) (void)cudaEventDestroy((cudaEvent_t)event);
  (void)cudaGetLastError();
}

tsr_status tsr__gpu_event_record(tsr_device dev, void *event, void *stream) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  TSR_GPU_CALL(cudaEventRecord((cudaEvent_t)event, stream ? (cudaStream_t)stream : s));
  return TSR_OK;
}

/* Never blocks (cudaEventQuery), so a caller can keep MPI progressing while it polls. */
tsr_status tsr__gpu_event_query(tsr_device dev, void *event, int *done) {
  (void)dev;
  cudaError_t err = cudaEventQuery((cudaEvent_t)event);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    *done = 0;
    return TSR_OK;
  }
  if (err != cudaSuccess) return tsr__gpu_error(err, __func__, "cudaEventQuery");
  *done = 1;
  return TSR_OK;
}

tsr_status tsr__gpu_event_elapsed(tsr_device dev, void *start, void *stop, double *seconds) {
  (void)dev;
  tsr__count(TSR__COUNT_HOST_SYNCS, 1);
  TSR_GPU_CALL(cudaEventSynchronize((cudaEvent_t)stop));
  float ms = 0.0f;
  TSR_GPU_CALL(cudaEventElapsedTime(&ms, (cudaEvent_t)start, (cudaEvent_t)stop));
  *seconds = (double)ms * 1e-3;
  return TSR_OK;
}

tsr_status tsr__gpu_stream_wait_event(tsr_device dev, void *stream, void *event) {
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  TSR_GPU_CALL(cudaStreamWaitEvent(stream ? (cudaStream_t)stream : s, (cudaEvent_t)event, 0));
  return TSR_OK;
}

tsr_status tsr__gpu_memcpy_2d_async(tsr_device dev, void *dst, size_t dpitch, const void *src,
                                    size_t spitch, size_t width, size_t rows, tsr__copy_dir dir,
                                    void *stream) {
  if (width == 0 || rows == 0) return TSR_OK;
  cudaStream_t s = NULL;
  TSR__GPU_BEGIN(dev, s);
  cudaStream_t q = stream ? (cudaStream_t)stream : s;
  if (rows == 1 || (dpitch == width && spitch == width))
    TSR_GPU_CALL(cudaMemcpyAsync(dst, src, width * rows, cudaMemcpyDefault, q));
  else
    TSR_GPU_CALL(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, cudaMemcpyDefault, q));
  if (dir != TSR__COPY_D2D) {
    tsr__count(dir == TSR__COPY_H2D ? TSR__COUNT_H2D_BYTES : TSR__COUNT_D2H_BYTES, width * rows);
    tsr__count(dir == TSR__COPY_H2D ? TSR__COUNT_H2D_COPIES : TSR__COUNT_D2H_COPIES, 1);
  }
  return TSR_OK;
}

/* ---------------------------------------------------------------- layouts ------------- */

void tsr__gpu_layout_make(const tsr__view *const *views, int nviews, tsr__gpu_layout *out) {
  const int64_t *strides[TSR__GPU_MAX_OPERANDS];
  for (int v = 0; v < nviews; v++)
    strides[v] = views[v]->strides;
  memset(out, 0, sizeof *out);
  out->ndim = tsr__collapse_axes(views[0]->ndim, views[0]->shape, nviews, strides, out->shape,
                                 out->stride, &out->size);
}

bool tsr__gpu_layout_contiguous(const tsr__gpu_layout *layout, int nviews) {
  if (layout->ndim != 1) return false;
  for (int v = 0; v < nviews; v++)
    if (layout->stride[v][0] != 1) return false;
  return true;
}
