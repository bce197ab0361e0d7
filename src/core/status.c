/* SPDX-License-Identifier: BSD-3-Clause */
/* Status names and messages (from the one X-macro list) and the thread-local last error with
   its raise site. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

/* The last error message is the thread's tsr__thread_message (thread_state.c's per-thread
   block, not a thread-local array: see tsr__thread_state). When no block could be had for it (no
   memory), the message is lost and tsr_last_error says so. */
static const char tsr__message_lost_text[] =
    "tessera: an error message was lost (no memory for this thread's state)";
static _Thread_local bool tsr__message_lost;
/* The outermost public function running on this thread (NULL outside any). */
/* Read twice per public call (TSR_API_ENTRY), which a 16^3 GEMM through CBLAS pays (issue 31):
   the library's thread-locals go through TLS descriptors (-mtls-dialect=gnu2, CMakeLists.txt),
   not __tls_get_addr calls, and not the initial-exec model, whose static TLS a library loaded by
   dlopen may find used up. */
static _Thread_local const char *tsr__api_context;

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
  /* Lost first: the thread may have taken a block since (a counted call), its message empty. */
  if (tsr__message_lost) return tsr__message_lost_text;
  const tsr__thread_message *m = tsr__thread_message_get(false);
  return m ? m->text : "";
}

void tsr_clear_error(void) {
  tsr__thread_message *m = tsr__thread_message_get(false);
  if (m) {
    m->text[0] = '\0';
    m->prefix = 0;
    memset(&m->site, 0, sizeof m->site);
  }
  tsr__message_lost = false;
}

/* The site of the last error: the message's, so it goes with it (cleared with it, lost with
   it, replaced only by the next error, never by a successful call). */
static const tsr__error_site *tsr__site_of_thread(void) {
  if (tsr__message_lost) return NULL;
  const tsr__thread_message *m = tsr__thread_message_get(false);
  return m && m->site.line > 0 ? &m->site : NULL;
}

void tsr_last_error_site(const char **file, int *line, const char **function) {
  const tsr__error_site *s = tsr__site_of_thread();
  if (file) *file = s ? s->file : "";
  if (line) *line = s ? s->line : 0;
  if (function) *function = s ? s->func : "";
}

void tsr__last_error_site_get(tsr__error_site *out) {
  const tsr__error_site *s = tsr__site_of_thread();
  if (s)
    *out = *s;
  else
    memset(out, 0, sizeof *out);
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

/* The part of a __FILE__ path after its last "/src/" (or a leading "src/"): "core/npy.c". A
   path without one (already relative: a site adopted from another rank; or a test's) stays. */
static const char *tsr__site_path(const char *path) {
  const char *rel = strncmp(path, "src/", 4) == 0 ? path + 4 : path;
  for (const char *p = strstr(path, "/src/"); p; p = strstr(p + 1, "/src/"))
    rel = p + 5;
  return rel;
}

/* Copies text into a site's field of cap bytes; too long, a path keeps its end (the file's
   name), a function name its start. */
static void tsr__site_copy(char *dst, size_t cap, const char *text, bool keep_end) {
  size_t n = strlen(text);
  if (n >= cap) {
    if (keep_end) text += n - (cap - 1);
    n = cap - 1;
  }
  memcpy(dst, text, n);
  dst[n] = '\0';
}

static void tsr__site_set(tsr__error_site *s, const char *file, int line, const char *func) {
  memset(s, 0, sizeof *s);
  if (line <= 0) return; /* no site (tsr_set_error) */
  tsr__site_copy(s->file, sizeof s->file, file ? tsr__site_path(file) : "", true);
  tsr__site_copy(s->func, sizeof s->func, func ? func : "", false);
  s->line = line;
}

/* TSR_ERROR_TRACE=1: one line on stderr per recorded error, the message as the user sees it
   and where it was raised (docs/architecture.md, "Errors"). The row is never an `error` row,
   so reading it raises nothing (no recursion). */
static void tsr__error_trace(const char *msg, const tsr__error_site *s) {
  if (!tsr__env_flag(TSR__ENV_ERROR_TRACE)) return;
  if (s->line > 0)
    fprintf(stderr, "tessera: %s [raised at %s:%d in %s]\n", msg, s->file, s->line, s->func);
  else
    fprintf(stderr, "tessera: %s [raised through tsr_set_error]\n", msg);
}

static tsr_status tsr__set_error_v(tsr_status code, const char *fn, const tsr__error_site *site,
                                   const char *fmt, va_list ap) {
  if (tsr__api_context != NULL) fn = tsr__api_context;
  /* Formatted into a copy first: the arguments may point into the current message (a
     backend's reason restated through tsr__last_error_detail). */
  char msg[sizeof((tsr__thread_message *)0)->text];
  int n = snprintf(msg, sizeof msg, "%s: ", fn ? fn : "tessera");
  if (n < 0 || (size_t)n >= sizeof msg) return code;
  vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
  tsr__thread_message *m = tsr__thread_message_get(true);
  tsr__message_lost = m == NULL;
  if (m) {
    memcpy(m->text, msg, sizeof msg);
    m->prefix = (size_t)n;
    m->site = *site;
  }
  tsr__error_trace(msg, site);
  return code;
}

tsr_status tsr__set_error_at(tsr_status code, const char *fn, const char *file, int line,
                             const char *func, const char *fmt, ...) {
  tsr__error_site site;
  tsr__site_set(&site, file, line, func);
  va_list ap;
  va_start(ap, fmt);
  code = tsr__set_error_v(code, fn, &site, fmt, ap);
  va_end(ap);
  return code;
}

tsr_status tsr_set_error(tsr_status code, const char *function, const char *fmt, ...) {
  if (fmt == NULL) fmt = "";
  tsr__error_site none;
  tsr__site_set(&none, NULL, 0, NULL);
  va_list ap;
  va_start(ap, fmt);
  code = tsr__set_error_v(code, function, &none, fmt, ap);
  va_end(ap);
  return code;
}

const char *tsr__last_error_detail(void) {
  if (tsr__message_lost) return tsr__message_lost_text;
  const tsr__thread_message *m = tsr__thread_message_get(false);
  if (!m) return "";
  size_t len = strlen(m->text);
  return m->text + (m->prefix <= len ? m->prefix : len);
}
