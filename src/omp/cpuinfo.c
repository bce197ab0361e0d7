/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Facts about the host CPU, read once, in one place: the model name (/proc/cpuinfo), the
 * CPUID vendor, family and model (x86), and the cache geometry of levels 1-3 (sysconf, else
 * /sys/devices/system/cpu/cpu0/cache, else documented defaults). Users: the device properties
 * (backend.c), the GEMM registry and wisdom (gemm_registry.c, gemm_wisdom.c) and the
 * streaming-store decision of the elementwise loops (loop.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "omp/omp_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define TSR__HAVE_CPUID 1
#endif

static tsr__cpu_facts tsr__facts;
static pthread_once_t tsr__facts_once = PTHREAD_ONCE_INIT;

/* ---------------------------------------------------------------- model name ---------- */

/* The "model name" of /proc/cpuinfo (Linux); false where there is none. */
static bool tsr__read_model_name(char *name, size_t size) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) return false;
  char line[512];
  bool found = false;
  while (!found && fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "model name", 10) != 0) continue;
    const char *colon = strchr(line, ':');
    if (colon == NULL) continue;
    const char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
      v++;
    size_t len = strcspn(v, "\r\n");
    while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
      len--;
    if (len >= size) len = size - 1;
    memcpy(name, v, len);
    name[len] = '\0';
    found = len > 0;
  }
  fclose(f);
  return found;
}

/* ---------------------------------------------------------------- cache geometry ------ */

static int64_t tsr__read_sys_int(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char buf[64] = {0};
  const size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  if (n == 0) return -1;
  char *end = NULL;
  long long v = strtoll(buf, &end, 10);
  if (end == buf || v < 0) return -1;
  if (*end == 'K')
    v *= 1024;
  else if (*end == 'M')
    v *= 1024 * 1024;
  return (int64_t)v;
}

/* Data/unified cache of `level` (1..3) from /sys; false when absent. */
static bool tsr__cache_from_sys(int level, tsr__cpu_cache *c) {
  for (int idx = 0; idx < 10; ++idx) {
    char path[96], type[32] = {0};
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
    if (tsr__read_sys_int(path) != level) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    const size_t n = fread(type, 1, sizeof type - 1, f);
    fclose(f);
    if (n == 0 || strncmp(type, "Instruction", 11) == 0) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
    c->size = tsr__read_sys_int(path);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/ways_of_associativity",
             idx);
    c->ways = tsr__read_sys_int(path);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/coherency_line_size",
             idx);
    c->line = tsr__read_sys_int(path);
    return c->size > 0 && c->ways > 0 && c->line > 0;
  }
  return false;
}

static tsr__cpu_cache tsr__cache_read(int level) {
  /* Defaults when nothing can be read: 48 KiB 12-way L1, 1 MiB 16-way L2, 32 MiB 16-way L3
     (a current server core; the GEMM blocks of a known microarchitecture come from the
     registry, not from these). */
  static const tsr__cpu_cache defaults[3] = {
      {48 * 1024, 12, 64}, {1024 * 1024, 16, 64}, {32 * 1024 * 1024, 16, 64}};
  tsr__cpu_cache c = {0, 0, 0};
#if defined(_SC_LEVEL1_DCACHE_SIZE)
  static const int names[3][3] = {
      {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_DCACHE_ASSOC, _SC_LEVEL1_DCACHE_LINESIZE},
      {_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL2_CACHE_ASSOC, _SC_LEVEL2_CACHE_LINESIZE},
      {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL3_CACHE_ASSOC, _SC_LEVEL3_CACHE_LINESIZE}};
  c.size = sysconf(names[level - 1][0]);
  c.ways = sysconf(names[level - 1][1]);
  c.line = sysconf(names[level - 1][2]);
#endif
  if (c.size <= 0 || c.ways <= 0 || c.line <= 0) {
    if (!tsr__cache_from_sys(level, &c)) c = defaults[level - 1];
  }
  /* Fully associative (ways 0xff in some reports) or odd values: treat as 16-way. */
  if (c.ways > 64 || c.size / (c.ways * c.line) < 1) c.ways = 16;
  return c;
}

/* ---------------------------------------------------------------- CPUID --------------- */

static void tsr__read_cpuid(tsr__cpu_facts *f) {
  snprintf(f->vendor, sizeof f->vendor, "unknown");
#if defined(TSR__HAVE_CPUID)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return;
  memcpy(f->vendor, &b, 4);
  memcpy(f->vendor + 4, &d, 4);
  memcpy(f->vendor + 8, &c, 4);
  f->vendor[12] = '\0';
  if (!__get_cpuid(1, &a, &b, &c, &d)) return;
  /* Intel SDM / AMD APM: the displayed family adds the extended family when the base family
     is 0xF; the displayed model adds the extended model for families 6 and 0xF and up. */
  const int base_family = (int)((a >> 8) & 0xF), base_model = (int)((a >> 4) & 0xF);
  const int ext_family = (int)((a >> 20) & 0xFF), ext_model = (int)((a >> 16) & 0xF);
  f->family = base_family == 0xF ? base_family + ext_family : base_family;
  f->model = base_family == 0x6 || base_family == 0xF ? (ext_model << 4) + base_model : base_model;
#endif
}

static void tsr__facts_init(void) {
  tsr__cpu_facts *f = &tsr__facts;
  if (!tsr__read_model_name(f->model_name, sizeof f->model_name))
    snprintf(f->model_name, sizeof f->model_name, "CPU");
  tsr__read_cpuid(f);
  for (int level = 1; level <= 3; ++level)
    f->cache[level - 1] = tsr__cache_read(level);
}

const tsr__cpu_facts *tsr__cpu_facts_get(void) {
  pthread_once(&tsr__facts_once, tsr__facts_init);
  return &tsr__facts;
}
