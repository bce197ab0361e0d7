/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The progress hook of long CPU GEMMs (core/internal.h, tsr__progress_hook): one pointer per
 * thread, set by the caller around a local multiply (SUMMA) and polled by the CPU GEMM driver
 * between its units of work; and the library's monotonic clock (tsr__now_ns), which the hook's
 * interval and the CPU GEMM's adaptive thread count read.
 */
#include <time.h>

#include "core/internal.h"

/* The driver reads it once per unit of work (a TLS descriptor's load, no __tls_get_addr call:
   CMakeLists.txt). */
static _Thread_local tsr__progress_hook *tsr__progress_tls;

tsr__progress_hook *tsr__progress_set(tsr__progress_hook *h) {
  tsr__progress_hook *old = tsr__progress_tls;
  tsr__progress_tls = h;
  return old;
}

int64_t tsr__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tsr__progress_poll(void) {
  tsr__progress_hook *h = tsr__progress_tls;
  if (!h) return 0;
  const int64_t now = tsr__now_ns();
  if (now < h->next_ns) return 0;
  /* Unset while it runs: a hook that multiplies (it must not) would not recurse into itself. */
  tsr__progress_tls = NULL;
  h->fn(h->ctx);
  tsr__progress_tls = h;
  h->calls++;
  const int64_t end = tsr__now_ns();
  h->next_ns = end + h->interval_ns;
  return end - now;
}
