/* SPDX-License-Identifier: BSD-3-Clause */
/* The device registry: which backend table serves each device kind, device names, the
   default device (TSR_DEVICE), and the queries that go straight to a backend. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

/* The table compiled in for a kind, or NULL. */
static const struct tsr__backend_ops *tsr__backend_table(tsr_device_kind kind) {
  switch (kind) {
  case TSR_DEVICE_CPU: return &tsr__omp_backend;
  case TSR_DEVICE_CUDA:
#if TSR_HAVE_CUDA
    return &tsr__gpu_backend;
#else
    return NULL;
#endif
  case TSR_DEVICE_HIP:
#if TSR_HAVE_HIP
    return &tsr__gpu_backend;
#else
    return NULL;
#endif
  }
  return NULL;
}

/* The rows of TSR_DEVICE_KIND_MAP (tessera/device.h), indexed by the enum; the length check
   makes the values 0 .. count - 1 (a repeated value leaves a row out: -Woverride-init). */
typedef struct tsr__device_kind_row {
  const char *name, *label;
  bool is_gpu;
} tsr__device_kind_row;
#define TSR__DEVICE_KIND_ROW(name, ENUM, value, label, is_gpu) [ENUM] = {#name, label, is_gpu},
static const tsr__device_kind_row tsr__kinds[] = {TSR_DEVICE_KIND_MAP(TSR__DEVICE_KIND_ROW)};
#undef TSR__DEVICE_KIND_ROW
#define TSR__DEVICE_KIND_ONE(name, ENUM, value, label, is_gpu) +1
#define TSR__NUM_KINDS (0 TSR_DEVICE_KIND_MAP(TSR__DEVICE_KIND_ONE))
_Static_assert(sizeof tsr__kinds / sizeof tsr__kinds[0] == TSR__NUM_KINDS,
               "the device kinds' values are 0 .. count - 1");
#define TSR__DEVICE_KIND_CHECK(name, ENUM, value, label, is_gpu)                                   \
  _Static_assert((int)ENUM == (value), #name ": the enum's value is not the row's");
TSR_DEVICE_KIND_MAP(TSR__DEVICE_KIND_CHECK)
#undef TSR__DEVICE_KIND_CHECK

static bool tsr__kind_valid(tsr_device_kind kind) {
  return (unsigned)kind < TSR__NUM_KINDS;
}

static const char *tsr__kind_upper(tsr_device_kind kind) {
  return tsr__kind_valid(kind) ? tsr__kinds[kind].label : "unknown";
}

const char *tsr__device_str(tsr_device dev, char *buf, size_t size) {
  if (buf == NULL || size == 0) return buf;
  if (!tsr__kind_valid(dev.kind))
    snprintf(buf, size, "unknown device kind %d", (int)dev.kind);
  else if (dev.index == 0 && !tsr__kinds[dev.kind].is_gpu) /* "cpu" */
    snprintf(buf, size, "%s", tsr__kinds[dev.kind].name);
  else
    snprintf(buf, size, "%s:%d", tsr__kinds[dev.kind].name, dev.index);
  return buf;
}

/* Devices of a kind that this build and machine have; 0 on any runtime failure. */
static int tsr__kind_count(const struct tsr__backend_ops *ops, tsr_device_kind kind) {
  if (ops == NULL) return 0;
  if (kind == TSR_DEVICE_CPU) return 1;
  int n = 0;
  if (ops->device_count(&n) != TSR_OK || n < 0) n = 0;
  return n;
}

tsr_status tsr__backend_for(tsr_device dev, const struct tsr__backend_ops **ops) {
  if (!tsr__kind_valid(dev.kind))
    return tsr__set_error(TSR_ERR_NO_DEVICE, __func__, "unknown device kind %d", (int)dev.kind);
  const char *kind = tsr__kind_upper(dev.kind);
  const struct tsr__backend_ops *t = tsr__backend_table(dev.kind);
  if (t == NULL)
    return tsr__set_error(TSR_ERR_NO_DEVICE, __func__,
                          "no %s device %d: this build has no %s support", kind, dev.index, kind);
  if (dev.kind == TSR_DEVICE_CPU) {
    if (dev.index != 0)
      return tsr__set_error(TSR_ERR_NO_DEVICE, __func__, "no CPU device %d: the CPU is device 0",
                            dev.index);
    *ops = t;
    return TSR_OK;
  }
  int n = tsr__kind_count(t, dev.kind);
  if (dev.index < 0 || dev.index >= n) {
    const char *why = t->unavailable_reason ? t->unavailable_reason() : NULL;
    if (n == 0 && why != NULL && why[0] != '\0')
      return tsr__set_error(TSR_ERR_NO_DEVICE, __func__, "no %s device %d: 0 %s devices (%s)", kind,
                            dev.index, kind, why);
    return tsr__set_error(TSR_ERR_NO_DEVICE, __func__, "no %s device %d: %d %s device%s", kind,
                          dev.index, n, kind, n == 1 ? "" : "s");
  }
  *ops = t;
  return TSR_OK;
}

/* The first GPU of this build (GPU kinds in row order), else the CPU. */
static tsr_device tsr__device_auto(void) {
  for (int k = 0; k < TSR__NUM_KINDS; ++k) {
    const tsr_device_kind kind = (tsr_device_kind)k;
    if (tsr__kinds[k].is_gpu && tsr__kind_count(tsr__backend_table(kind), kind) > 0)
      return (tsr_device){kind, 0};
  }
  return TSR_CPU;
}

/* "auto, cpu, cuda, cuda:N, hip or hip:N": what the parser reads, for its messages. */
static const char *tsr__device_expected(char *buf, size_t size) {
  size_t len = (size_t)snprintf(buf, size, "auto");
  for (int k = 0; k < TSR__NUM_KINDS && len < size; ++k) {
    const char *n = tsr__kinds[k].name;
    if (tsr__kinds[k].is_gpu)
      len += (size_t)snprintf(buf + len, size - len, ", %s, %s:N", n, n);
    else
      len += (size_t)snprintf(buf + len, size - len, ", %s", n);
  }
  char *last = NULL;
  for (char *p = strstr(buf, ", "); p != NULL; p = strstr(p + 1, ", "))
    last = p;
  if (last != NULL && strlen(buf) + 2 < size) {
    memmove(last + 4, last + 2, strlen(last + 2) + 1);
    memcpy(last, " or ", 4);
  }
  return buf;
}

/* Parses "auto" and, for each kind, "name" and "name:N" (case-insensitive, no spaces; "cpu",
   "cpu:0", "cuda", "cuda:N", "hip", "hip:N"); *is_auto tells "auto" apart. Returns false when
   the text does not parse. */
static bool tsr__device_parse_text(const char *text, tsr_device *dev, bool *is_auto) {
  char low[32];
  size_t len = strlen(text);
  if (len == 0 || len >= sizeof low) return false;
  for (size_t i = 0; i <= len; ++i)
    low[i] = (char)tolower((unsigned char)text[i]);
  *is_auto = false;
  if (strcmp(low, "auto") == 0) {
    *is_auto = true;
    return true;
  }
  for (int k = 0; k < TSR__NUM_KINDS; ++k) {
    size_t n = strlen(tsr__kinds[k].name);
    if (strncmp(low, tsr__kinds[k].name, n) != 0) continue;
    if (low[n] == '\0') {
      *dev = (tsr_device){(tsr_device_kind)k, 0};
      return true;
    }
    if (low[n] != ':' || !isdigit((unsigned char)low[n + 1])) return false;
    char *end = NULL;
    errno = 0;
    long v = strtol(low + n + 1, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > INT_MAX) return false;
    *dev = (tsr_device){(tsr_device_kind)k, (int)v};
    return true;
  }
  return false;
}

tsr_status tsr_device_parse(const char *text, tsr_device *device) {
  TSR_API_ENTRY();
  TSR_CHECK(text != NULL, TSR_ERR_NULL_POINTER, "text is NULL");
  TSR_CHECK(device != NULL, TSR_ERR_NULL_POINTER, "device is NULL");
  tsr_device d = TSR_CPU;
  bool is_auto = false;
  char expected[128];
  TSR_CHECK(tsr__device_parse_text(text, &d, &is_auto), TSR_ERR_INVALID_ARGUMENT,
            "\"%.64s\" is not a device (expected %s)", text,
            tsr__device_expected(expected, sizeof expected));
  if (is_auto) d = tsr__device_auto();
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(d, &ops));
  *device = d;
  return TSR_OK;
}

tsr_status tsr_device_default(tsr_device *device) {
  TSR_API_ENTRY();
  TSR_CHECK(device != NULL, TSR_ERR_NULL_POINTER, "device is NULL");
  const char *env = tsr__env_text(TSR__ENV_DEVICE);
  tsr_device d = TSR_CPU;
  bool is_auto = true;
  char expected[128];
  if (env != NULL && env[0] != '\0')
    TSR_CHECK(tsr__device_parse_text(env, &d, &is_auto), TSR_ERR_INVALID_ARGUMENT,
              "TSR_DEVICE=\"%.64s\" is not a device (expected %s)", env,
              tsr__device_expected(expected, sizeof expected));
  if (is_auto) d = tsr__device_auto();
  const struct tsr__backend_ops *ops;
  TSR_CALL(tsr__backend_for(d, &ops));
  *device = d;
  return TSR_OK;
}

tsr_status tsr_device_count(tsr_device_kind kind, int *count) {
  TSR_API_ENTRY();
  TSR_CHECK(count != NULL, TSR_ERR_NULL_POINTER, "count is NULL");
  TSR_CHECK(tsr__kind_valid(kind), TSR_ERR_INVALID_ARGUMENT, "unknown device kind %d", (int)kind);
  *count = tsr__kind_count(tsr__backend_table(kind), kind);
  return TSR_OK;
}

tsr_status tsr_device_get_props(tsr_device device, tsr_device_props *props) {
  TSR_API_ENTRY();
  TSR_CHECK(props != NULL, TSR_ERR_NULL_POINTER, "props is NULL");
  const struct tsr__backend_ops *ops = NULL;
  TSR_CALL(tsr__backend_for(device, &ops));
  tsr_device_props p;
  memset(&p, 0, sizeof p);
  /* The backend fills in the facts (the CPU backend reads the host CPU in src/omp). */
  snprintf(p.name, sizeof p.name, "%s", ops->name);
  TSR_CALL(ops->device_props(device.index, &p));
  *props = p;
  return TSR_OK;
}

tsr_status tsr_device_string(tsr_device device, char *buf, size_t size) {
  TSR_API_ENTRY();
  TSR_CHECK(buf != NULL, TSR_ERR_NULL_POINTER, "buf is NULL");
  TSR_CHECK(tsr__kind_valid(device.kind), TSR_ERR_INVALID_ARGUMENT, "unknown device kind %d",
            (int)device.kind);
  char tmp[32];
  tsr__device_str(device, tmp, sizeof tmp);
  size_t need = strlen(tmp) + 1;
  TSR_CHECK(size >= need, TSR_ERR_INVALID_ARGUMENT, "size %zu is too small for \"%s\" (%zu bytes)",
            size, tmp, need);
  memcpy(buf, tmp, need);
  return TSR_OK;
}

tsr_status tsr_device_synchronize(tsr_device device) {
  TSR_API_ENTRY();
  const struct tsr__backend_ops *ops = NULL;
  TSR_CALL(tsr__backend_for(device, &ops));
  TSR_CALL(ops->synchronize(device));
  return TSR_OK;
}

tsr_status tsr_device_trim(tsr_device device) {
  TSR_API_ENTRY();
  const struct tsr__backend_ops *ops = NULL;
  TSR_CALL(tsr__backend_for(device, &ops));
  if (ops->trim != NULL) TSR_CALL(ops->trim(device));
  return TSR_OK;
}

int tsr_device_equal(tsr_device a, tsr_device b) {
  return a.kind == b.kind && a.index == b.index;
}
