/* Status names and messages (from the one X-macro list) and the thread-local last error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

static _Thread_local char tsr__last_error[1024];
/* The outermost public function running on this thread (NULL outside any), and where the
   last message's text starts after its "fn: " prefix. */
/* Read twice per public call (TSR_API_ENTRY), which a 16^3 GEMM through CBLAS pays (issue 31):
   the library's thread-locals go through TLS descriptors (-mtls-dialect=gnu2, CMakeLists.txt),
   not __tls_get_addr calls, and not the initial-exec model, whose static TLS a library loaded by
   dlopen may find used up. */
static _Thread_local const char *tsr__api_context;
static _Thread_local size_t tsr__last_error_prefix;

const char *tsr_status_name(tsr_status status) {
  switch (status) {
#define TSR__STATUS_NAME(name, value, text)                                                        \
  case name: return #name;
    TSR_STATUS_LIST(TSR__STATUS_NAME)
#undef TSR__STATUS_NAME
  }
  return "TSR_ERR_UNKNOWN";
}

const char *tsr_strerror(tsr_status status) {
  switch (status) {
#define TSR__STATUS_TEXT(name, value, text)                                                        \
  case name: return text;
    TSR_STATUS_LIST(TSR__STATUS_TEXT)
#undef TSR__STATUS_TEXT
  }
  return "unknown status code";
}

const char *tsr_last_error(void) {
  return tsr__last_error;
}

void tsr_clear_error(void) {
  tsr__last_error[0] = '\0';
  tsr__last_error_prefix = 0;
}

const char *tsr__api_enter(const char *fn) {
  const char *prev = tsr__api_context;
  if (prev == NULL) tsr__api_context = fn;
  return prev;
}

void tsr__api_leave(const char *const *prev) {
  tsr__api_context = *prev;
}

const char *tsr__api_suspend(void) {
  const char *saved = tsr__api_context;
  tsr__api_context = NULL;
  return saved;
}

void tsr__api_resume(const char *saved) {
  tsr__api_context = saved;
}

static tsr_status tsr__set_error_v(tsr_status code, const char *fn, const char *fmt, va_list ap) {
  if (tsr__api_context != NULL) fn = tsr__api_context;
  /* Formatted into a copy first: the arguments may point into the current message (a
     backend's reason restated through tsr__last_error_detail). */
  char msg[sizeof tsr__last_error];
  int n = snprintf(msg, sizeof msg, "%s: ", fn ? fn : "tessera");
  if (n < 0 || (size_t)n >= sizeof msg) return code;
  vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
  memcpy(tsr__last_error, msg, sizeof msg);
  tsr__last_error_prefix = (size_t)n;
  return code;
}

tsr_status tsr__set_error(tsr_status code, const char *fn, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  code = tsr__set_error_v(code, fn, fmt, ap);
  va_end(ap);
  return code;
}

tsr_status tsr_set_error(tsr_status code, const char *function, const char *fmt, ...) {
  if (fmt == NULL) fmt = "";
  va_list ap;
  va_start(ap, fmt);
  code = tsr__set_error_v(code, function, fmt, ap);
  va_end(ap);
  return code;
}

const char *tsr__last_error_detail(void) {
  size_t len = strlen(tsr__last_error);
  return tsr__last_error + (tsr__last_error_prefix <= len ? tsr__last_error_prefix : len);
}
