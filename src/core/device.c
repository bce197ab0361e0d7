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

static bool tsr__kind_valid(tsr_device_kind kind) {
  return kind == TSR_DEVICE_CPU || kind == TSR_DEVICE_CUDA || kind == TSR_DEVICE_HIP;
}

static const char *tsr__kind_upper(tsr_device_kind kind) {
  switch (kind) {
  case TSR_DEVICE_CPU: return "CPU";
  case TSR_DEVICE_CUDA: return "CUDA";
  case TSR_DEVICE_HIP: return "HIP";
  }
  return "unknown";
}

const char *tsr__device_str(tsr_device dev, char *buf, size_t size) {
  if (buf == NULL || size == 0) return buf;
  switch (dev.kind) {
  case TSR_DEVICE_CPU:
    if (dev.index == 0)
      snprintf(buf, size, "cpu");
    else
      snprintf(buf, size, "cpu:%d", dev.index);
    break;
  case TSR_DEVICE_CUDA: snprintf(buf, size, "cuda:%d", dev.index); break;
  case TSR_DEVICE_HIP: snprintf(buf, size, "hip:%d", dev.index); break;
  default: snprintf(buf, size, "unknown device kind %d", (int)dev.kind); break;
  }
  return buf;
}

/* Devices of a kind that this build and machine have; 0 on any runtime failure. */
static int tsr__kind_count(const struct tsr__backend_ops *ops, tsr_device_kind kind) {
  if (ops == NULL) return 0;
  if (kind == TSR_DEVICE_CPU || ops->device_count == NULL) return 1;
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

/* The first GPU of this build, else the CPU. */
static tsr_device tsr__device_auto(void) {
  static const tsr_device_kind gpus[] = {TSR_DEVICE_CUDA, TSR_DEVICE_HIP};
  for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; ++i)
    if (tsr__kind_count(tsr__backend_table(gpus[i]), gpus[i]) > 0) return (tsr_device){gpus[i], 0};
  return TSR_CPU;
}

/* Parses "auto", "cpu", "cpu:0", "cuda", "cuda:N", "hip", "hip:N" (case-insensitive, no
   spaces); *is_auto tells "auto" apart. Returns false when the text does not parse. */
static bool tsr__device_parse_text(const char *text, tsr_device *dev, bool *is_auto) {
  static const struct {
    const char *name;
    tsr_device_kind kind;
  } kinds[] = {{"cpu", TSR_DEVICE_CPU}, {"cuda", TSR_DEVICE_CUDA}, {"hip", TSR_DEVICE_HIP}};
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
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
    size_t n = strlen(kinds[k].name);
    if (strncmp(low, kinds[k].name, n) != 0) continue;
    if (low[n] == '\0') {
      *dev = (tsr_device){kinds[k].kind, 0};
      return true;
    }
    if (low[n] != ':' || !isdigit((unsigned char)low[n + 1])) return false;
    char *end = NULL;
    errno = 0;
    long v = strtol(low + n + 1, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > INT_MAX) return false;
    *dev = (tsr_device){kinds[k].kind, (int)v};
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
  TSR_CHECK(tsr__device_parse_text(text, &d, &is_auto), TSR_ERR_INVALID_ARGUMENT,
            "\"%.64s\" is not a device (expected auto, cpu, cuda, cuda:N, hip or hip:N)", text);
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
  if (env != NULL && env[0] != '\0')
    TSR_CHECK(tsr__device_parse_text(env, &d, &is_auto), TSR_ERR_INVALID_ARGUMENT,
              "TSR_DEVICE=\"%.64s\" is not a device (expected auto, cpu, cuda, cuda:N, hip or "
              "hip:N)",
              env);
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
  snprintf(p.name, sizeof p.name, "%s", ops->name ? ops->name : "device");
  if (ops->device_props != NULL) TSR_CALL(ops->device_props(device.index, &p));
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
  if (ops->synchronize != NULL) TSR_CALL(ops->synchronize(device));
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
