/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The library's per-thread state (core/internal.h): one block per thread holding its counters
 * (tsr__count and the reads of their sums) and its last error message with its raise site
 * (status.c). No other dependency than pthreads and the C library: the fuzz target links it
 * beside status.c.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

/* ------------------------------------------------ per-thread state: counters, message -- */

/* One block per thread of the library's per-thread state: its counters and its last error
   message with its raise site (status.c). A counted call adds to its own thread's block with a
   plain load and store (relaxed atomics with one writer: no locked instruction). One
   process-wide atomic counter cost every counting call a locked add (a few ns on one thread),
   and threads that call concurrently fought over its cache line: 1x1x1 cblas_sgemm from two
   OpenMP threads at once took 146 ns a call against 84 on one thread (Emerald Rapids, 2 vCPUs),
   84 with the blocks.
   A block is never freed: when its thread exits (the key's destructor) it goes back to the
   list for the next new thread, which keeps adding to its counters (so a sum over the list counts
   the work of exited threads too) and starts with an empty message and site. The list only grows
   to the most threads that used the library at once. Reads and block hand-overs take the lock;
   counting does not.
   The message and its site are here, not in a thread-local array, to keep the library's
   thread-locals small (~100 bytes): glibc then gives a libtessera loaded by dlopen (NumPy,
   Python) static TLS from its optional reserve (512 bytes), and a thread-local is one load
   (_dl_tlsdesc_return) instead of a walk of the thread's TLS vector (_dl_tlsdesc_dynamic, ~20
   instructions), which the 1 KiB message array had cost every CBLAS call. */
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

/* The calling thread's block: a free one from the list (its message and site emptied), else a
   new one (NULL when neither). */
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
    memset(&b->msg.site, 0, sizeof b->msg.site);
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
