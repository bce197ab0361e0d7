/* Status names and messages (from the one X-macro list) and the thread-local last error. */
#include <stdarg.h>
#include <stdio.h>

#include "core/internal.h"

static _Thread_local char tsr__last_error[1024];

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
}

tsr_status tsr__set_error(tsr_status code, const char *fn, const char *fmt, ...) {
  int n = snprintf(tsr__last_error, sizeof tsr__last_error, "%s: ", fn ? fn : "tessera");
  if (n < 0 || (size_t)n >= sizeof tsr__last_error) return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tsr__last_error + n, sizeof tsr__last_error - (size_t)n, fmt, ap);
  va_end(ap);
  return code;
}
