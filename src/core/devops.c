/*
 * Device operations for the layers above the core (internal.h, "device work"): the process's
 * counters of device work, and the dispatch of streams, events, pinned memory, asynchronous
 * copies and the distributed-matrix kernels to the device's backend, with the host's
 * behaviour where a backend has no entry. src/mpi reaches devices only through these, so it
 * includes no GPU header and has no CUDA/HIP conditionals.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

/* ------------------------------------------------ per-thread state: counters, message -- */

/* One block per thread of the library's per-thread state: its counters and its last error
   message (status.c). A counted call adds to its own thread's block with a plain load and store
   (relaxed atomics with one writer: no locked instruction). One process-wide atomic counter cost
   every counting call a locked add (a few ns on one thread), and threads that call concurrently
   fought over its cache line: 1x1x1 cblas_sgemm from two OpenMP threads at once took 146 ns a call
   against 84 on one thread (Emerald Rapids, 2 vCPUs), 84 with the blocks.
   A block is never freed: when its thread exits (the key's destructor) it goes back to the
   list for the next new thread, which keeps adding to its counters (so a sum over the list counts
   the work of exited threads too) and starts with an empty message. The list only grows to the
   most threads that used the library at once. Reads and block hand-overs take the lock; counting
   does not.
   The message is here, not in a thread-local array, to keep the library's thread-locals small
   (~100 bytes): glibc then gives a libtessera loaded by dlopen (NumPy, Python) static TLS from its
   optional reserve (512 bytes), and a thread-local is one load (_dl_tlsdesc_return) instead of a
   walk of the thread's TLS vector (_dl_tlsdesc_dynamic, ~20 instructions), which the 1 KiB message
   array had cost every CBLAS call. */
struct tsr__thread_state {
  _Atomic uint64_t v[TSR__COUNT_N];
  struct tsr__thread_state *next; /* the list of every block (never shrinks) */
  bool in_use;                    /* owned by a running thread (under tsr__count_lock) */
  tsr__thread_message msg;
};
/* Blocks start on a cache line and fill whole lines: two threads' counters never share one. */
#define TSR__COUNT_BLOCK_BYTES ((sizeof(tsr__thread_state) + 63) / 64 * 64)

static pthread_mutex_t tsr__count_lock = PTHREAD_MUTEX_INITIALIZER;
static tsr__thread_state *tsr__count_blocks;
/* Counts of a thread that could not get a block (no memory, or no thread key): added here. */
static _Atomic uint64_t tsr__count_spill[TSR__COUNT_N];
static pthread_key_t tsr__count_key;
static pthread_once_t tsr__count_key_once = PTHREAD_ONCE_INIT;
static bool tsr__count_key_ok;
/* This thread's block (a TLS descriptor's load; see tsr__api_context). */
static _Thread_local tsr__thread_state *tsr__count_mine;

static void tsr__count_release(void *p) {
  tsr__thread_state *b = p;
  tsr__count_mine = NULL; /* a count after this (a later destructor) takes a block anew */
  pthread_mutex_lock(&tsr__count_lock);
  b->in_use = false;
  pthread_mutex_unlock(&tsr__count_lock);
}

/* fork() while another thread holds the lock would leave it held in the child, whose first
   count on a thread without a block (or any read) would then wait forever: the lock is taken
   around fork and released on both sides. */
static void tsr__count_prefork(void) {
  pthread_mutex_lock(&tsr__count_lock);
}
static void tsr__count_postfork(void) {
  pthread_mutex_unlock(&tsr__count_lock);
}

static void tsr__count_key_create(void) {
  tsr__count_key_ok = pthread_key_create(&tsr__count_key, tsr__count_release) == 0;
  if (tsr__count_key_ok)
    pthread_atfork(tsr__count_prefork, tsr__count_postfork, tsr__count_postfork);
}

/* The library's unloading (dlclose) must not leave the key's destructor behind for the
   threads that outlive it. */
__attribute__((destructor)) static void tsr__count_key_delete(void) {
  if (tsr__count_key_ok) pthread_key_delete(tsr__count_key);
  tsr__count_key_ok = false;
}

/* The calling thread's block: a free one from the list (its message emptied), else a new one
   (NULL when neither). */
static __attribute__((noinline, cold)) tsr__thread_state *tsr__count_join(void) {
  pthread_once(&tsr__count_key_once, tsr__count_key_create);
  if (!tsr__count_key_ok) return NULL;
  pthread_mutex_lock(&tsr__count_lock);
  tsr__thread_state *b = tsr__count_blocks;
  while (b && b->in_use)
    b = b->next;
  if (!b && (b = aligned_alloc(64, TSR__COUNT_BLOCK_BYTES)) != NULL) {
    memset(b, 0, TSR__COUNT_BLOCK_BYTES);
    b->next = tsr__count_blocks;
    tsr__count_blocks = b;
  }
  if (b) {
    b->in_use = true;
    b->msg.text[0] = '\0';
    b->msg.prefix = 0;
  }
  pthread_mutex_unlock(&tsr__count_lock);
  if (b && pthread_setspecific(tsr__count_key, b) != 0) {
    tsr__count_release(b);
    b = NULL;
  }
  tsr__count_mine = b;
  return b;
}

tsr__thread_message *tsr__thread_message_get(bool create) {
  tsr__thread_state *b = tsr__count_mine;
  if (b == NULL && create) b = tsr__count_join();
  return b ? &b->msg : NULL;
}

void tsr__count(tsr__counter c, uint64_t n) {
  if ((unsigned)c >= TSR__COUNT_N) return;
  tsr__thread_state *b = tsr__count_mine;
  if (__builtin_expect(b == NULL, 0)) b = tsr__count_join();
  if (b)
    atomic_store_explicit(&b->v[c], atomic_load_explicit(&b->v[c], memory_order_relaxed) + n,
                          memory_order_relaxed);
  else
    atomic_fetch_add_explicit(&tsr__count_spill[c], n, memory_order_relaxed);
}

void tsr__counters_read(uint64_t out[TSR__COUNT_N]) {
  for (int i = 0; i < TSR__COUNT_N; i++)
    out[i] = atomic_load_explicit(&tsr__count_spill[i], memory_order_relaxed);
  pthread_mutex_lock(&tsr__count_lock);
  for (const tsr__thread_state *b = tsr__count_blocks; b; b = b->next)
    for (int i = 0; i < TSR__COUNT_N; i++)
      out[i] += atomic_load_explicit(&b->v[i], memory_order_relaxed);
  pthread_mutex_unlock(&tsr__count_lock);
}

void tsr__counters_mark(tsr__counter first, int n, uint64_t *base) {
  uint64_t all[TSR__COUNT_N];
  tsr__counters_read(all);
  for (int i = 0; i < n && (unsigned)first + (unsigned)i < TSR__COUNT_N; ++i)
    __atomic_store_n(&base[i], all[first + i], __ATOMIC_RELAXED);
}

void tsr__counters_since(tsr__counter first, int n, const uint64_t *base, uint64_t *out) {
  uint64_t all[TSR__COUNT_N];
  tsr__counters_read(all);
  for (int i = 0; i < n; ++i) {
    const uint64_t v = (unsigned)first + (unsigned)i < TSR__COUNT_N ? all[first + i] : 0,
                   b = __atomic_load_n(&base[i], __ATOMIC_RELAXED);
    out[i] = v > b ? v - b : 0;
  }
}

/* ---------------------------------------------------------------- dispatch ------------ */

static const struct tsr__backend_ops *tsr__devops_table(tsr_device dev, tsr_status *st) {
  const struct tsr__backend_ops *ops = NULL;
  *st = tsr__backend_for(dev, &ops);
  return *st == TSR_OK ? ops : NULL;
}

tsr_status tsr__dev_pinned_alloc(tsr_device dev, size_t bytes, void **ptr) {
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  if (ops->pinned_alloc) return ops->pinned_alloc(dev, bytes, ptr);
  return tsr__host_alloc(bytes ? bytes : 1, ptr);
}

void tsr__dev_pinned_free(tsr_device dev, void *ptr) {
  if (!ptr) return;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (ops && ops->pinned_free)
    ops->pinned_free(dev, ptr);
  else
    tsr__host_free(ptr);
}

tsr_status tsr__dev_stream_create(tsr_device dev, void **stream) {
  *stream = NULL;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  return ops->stream_create ? ops->stream_create(dev, stream) : TSR_OK;
}

void tsr__dev_stream_destroy(tsr_device dev, void *stream) {
  if (!stream) return;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (ops && ops->stream_destroy) ops->stream_destroy(dev, stream);
}

tsr_status tsr__dev_event_create(tsr_device dev, void **event) {
  *event = NULL;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  return ops->event_create ? ops->event_create(dev, event) : TSR_OK;
}

void tsr__dev_event_destroy(tsr_device dev, void *event) {
  if (!event) return;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (ops && ops->event_destroy) ops->event_destroy(dev, event);
}

tsr_status tsr__dev_event_record(tsr_device dev, void *event, void *stream) {
  if (!event) return TSR_OK;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  return ops->event_record ? ops->event_record(dev, event, stream) : TSR_OK;
}

tsr_status tsr__dev_event_query(tsr_device dev, void *event, int *done) {
  *done = 1;
  if (!event) return TSR_OK;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  return ops->event_query ? ops->event_query(dev, event, done) : TSR_OK;
}

tsr_status tsr__dev_event_elapsed(tsr_device dev, void *start, void *stop, double *seconds) {
  *seconds = 0.0;
  if (!start || !stop) return TSR_OK;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  return ops->event_elapsed ? ops->event_elapsed(dev, start, stop, seconds) : TSR_OK;
}

tsr_status tsr__dev_stream_wait_event(tsr_device dev, void *stream, void *event) {
  if (!event) return TSR_OK;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  return ops->stream_wait_event ? ops->stream_wait_event(dev, stream, event) : TSR_OK;
}

tsr_status tsr__dev_memcpy_2d_async(tsr_device dev, void *dst, size_t dpitch, const void *src,
                                    size_t spitch, size_t width, size_t rows, tsr__copy_dir dir,
                                    void *stream) {
  if (width == 0 || rows == 0) return TSR_OK;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  if (ops->memcpy_2d_async)
    return ops->memcpy_2d_async(dev, dst, dpitch, src, spitch, width, rows, dir, stream);
  /* Host memory on both sides: done on return. */
  for (size_t r = 0; r < rows; r++)
    memcpy((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
  return TSR_OK;
}

/* ---------------------------------------------------------------- dmatrix kernels ----- */

tsr_status tsr__dev_rng_block_cyclic(tsr_array *storage, const tsr__bc_block *l, uint64_t seed,
                                     double low, double high) {
  if (l->mloc == 0 || l->nloc == 0) return TSR_OK;
  tsr_device dev = storage->buffer->device;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  void *data = tsr__array_ptr(storage);
  if (ops->rng_block_cyclic)
    return ops->rng_block_cyclic(dev, data, storage->dtype, l, seed, low, high);
  /* Generated on the host by the CPU backend, then copied (one whole-block copy). */
  const size_t bytes = (size_t)(l->lld * l->nloc) * tsr__dtype_size(storage->dtype);
  void *host = NULL;
  TSR_CALL(tsr__host_alloc(bytes, &host));
  tsr_device cpu = {TSR_DEVICE_CPU, 0};
  st = tsr__omp_backend.rng_block_cyclic(cpu, host, storage->dtype, l, seed, low, high);
  if (st == TSR_OK) st = tsr__copy_h2d(storage, 0, host, bytes);
  tsr__host_free(host);
  return st;
}

tsr_status tsr__dev_matvec_f64(const tsr_array *storage, int64_t rows, int64_t cols, int64_t ld,
                               bool trans, const double *x1, const double *x2, double *y1,
                               double *y2, int64_t *nonfinite) {
  tsr_device dev = storage->buffer->device;
  tsr_status st;
  const struct tsr__backend_ops *ops = tsr__devops_table(dev, &st);
  if (!ops) return st;
  const void *data = tsr__array_ptr(storage);
  if (ops->matvec_f64)
    return ops->matvec_f64(dev, data, storage->dtype, rows, cols, ld, trans, x1, x2, y1, y2,
                           nonfinite);
  /* Staged through the host for backends without the kernel. */
  const size_t bytes = (size_t)(ld * cols) * tsr__dtype_size(storage->dtype);
  void *host = NULL;
  TSR_CALL(tsr__host_alloc(bytes ? bytes : 1, &host));
  st = tsr__copy_d2h(storage, 0, host, bytes);
  tsr_device cpu = {TSR_DEVICE_CPU, 0};
  if (st == TSR_OK)
    st = tsr__omp_backend.matvec_f64(cpu, host, storage->dtype, rows, cols, ld, trans, x1, x2, y1,
                                     y2, nonfinite);
  tsr__host_free(host);
  return st;
}
